/*
 * On-the-fly gzip (gzip.h says what is compressed and how), with two
 * libraries, each where it serves better:
 *
 *   - a body set up whole: libdeflate, which compresses a whole buffer
 *     about twice as fast as zlib at levels 1 to 6 (2.2 x on the 100 KiB
 *     HTML file of bench/gzip.sh, with output of about the same size):
 *     what is paid on each cache miss and on every dynamic response that
 *     did not stream;
 *   - a streamed body: zlib, whose deflate stream is fed a piece at a
 *     time and flushed between pieces (libdeflate has no streaming).
 */

#include "gn_config.h"

#include <zlib.h>
#include <libdeflate.h>

#include "gzip.h"
#include "http_request.h"
#include "http_static.h"
#include "http_headers.h"
#include "file_cache.h"
#include "module.h"
#include "str.h"


#define GN_GZIP_CHUNK     16384       /* deflate's output, and a large
                                         file's input, a piece at a time */
#define GN_GZIP_WBITS     (MAX_WBITS + 16)   /* + 16: the gzip wrapper */
#define GN_GZIP_MEMLEVEL  8


static const gn_conf_enum_t  gn_gzip_levels[] = {
    { gn_string("1"), 1 }, { gn_string("2"), 2 }, { gn_string("3"), 3 },
    { gn_string("4"), 4 }, { gn_string("5"), 5 }, { gn_string("6"), 6 },
    { gn_string("7"), 7 }, { gn_string("8"), 8 }, { gn_string("9"), 9 },
    { gn_null_string, 0 }
};

#define gn_gzip_offset(f)   offsetof(gn_gzip_conf_t, f)

static const gn_conf_cmd_t  gn_gzip_commands[] = {

    { gn_string("gzip"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_gzip_offset(enable), NULL,
      "off" },
    { gn_string("gzip_types"), GN_CONF_ANY | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_LOC_CONF, gn_gzip_offset(types),
      NULL, NULL },
    { gn_string("gzip_min_length"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_LOC_CONF, gn_gzip_offset(min_length),
      NULL, "20" },
    { gn_string("gzip_comp_level"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_enum_slot, GN_CONF_LOC_CONF, gn_gzip_offset(comp_level),
      gn_gzip_levels, "1" },
    { gn_string("gzip_vary"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_gzip_offset(vary), NULL,
      "off" },
    { gn_string("gzip_cache_size"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_LOC_CONF, gn_gzip_offset(cache_size),
      NULL, "16m" },
    gn_conf_null_cmd
};


/* A response being compressed as it streams: the deflate stream between
 * r and the stream r came with (gn_gzip_stream's calls reach it). */
typedef struct {
    const gn_http_stream_t  *next;
    z_stream                 z;
    gn_uint_t                z_ready;    /* deflateInit2 done */
    gn_uint_t                unflushed;  /* input since the last flush */

    /* a large static file, compressed as it is sent: its body, as the
     * static handler set it up */
    gn_http_seg_t           *segs;
    gn_uint_t                nsegs;
    gn_uint_t                seg;        /* the next to read */
    gn_uint_t                status;
} gn_gzip_ctx_t;


/* ---- configuration ------------------------------------------------------ */

static gn_int_t
gn_gzip_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_gzip_conf_t  *gc = gn_gzip_conf(lc);
    gn_str_t        *t;
    gn_uint_t        i;

    (void) cf;

    if (gc->types == NULL && prev != NULL) {
        gc->types = gn_gzip_conf(prev)->types;
    }

    gc->any_type = 0;
    for (i = 0; gc->types != NULL && i < gc->types->nelts; i++) {
        t = &((gn_str_t *) gc->types->elts)[i];
        if (t->len == 1 && t->data[0] == '*') {
            gc->any_type = 1;
        }
    }

    return GN_OK;
}


/* ---- is this response to be compressed? --------------------------------- */

/* Does the type (up to its parameters) match one of gzip_types? */
static gn_uint_t
gn_gzip_type(const gn_gzip_conf_t *gc, const gn_str_t *type)
{
    static const gn_str_t  html = gn_string("text/html");
    const gn_str_t        *t;
    gn_str_t               mt;
    gn_uint_t              i;

    if (type->len == 0) {
        return 0;
    }
    if (gc->any_type) {
        return 1;
    }

    mt = *type;
    for (i = 0; i < mt.len; i++) {
        if (mt.data[i] == ';' || mt.data[i] == ' ' || mt.data[i] == '\t') {
            mt.len = i;
            break;
        }
    }

    if (gn_str_caseeq_str(&mt, &html)) {
        return 1;
    }

    for (i = 0; gc->types != NULL && i < gc->types->nelts; i++) {
        t = &((gn_str_t *) gc->types->elts)[i];
        if (gn_str_caseeq_str(&mt, t)) {
            return 1;
        }
    }

    return 0;
}


/* A response field a module or upstream set, by name; NULL: none. */
static gn_http_header_t *
gn_gzip_resp_header(gn_http_request_t *r, const char *name, size_t n)
{
    gn_http_header_t  *h;
    gn_uint_t          i;

    for (i = 0; r->resp_headers != NULL && i < r->resp_headers->nelts; i++) {
        h = &((gn_http_header_t *) r->resp_headers->elts)[i];
        if (h->name.len == n
            && gn_strncasecmp(h->name.data, (u_char *) name, n) == 0)
        {
            return h;
        }
    }

    return NULL;
}


/* Is the token (lower case) in the value, case-insensitively? */
static gn_uint_t
gn_gzip_has_token(const gn_str_t *v, const char *token, size_t n)
{
    size_t  i;

    for (i = 0; i + n <= v->len; i++) {
        if (gn_strncasecmp(v->data + i, (u_char *) token, n) == 0) {
            return 1;
        }
    }

    return 0;
}


/* Does r->extra_headers (our own lines, in our own case) have lit? */
static gn_uint_t
gn_gzip_extra_has(gn_http_request_t *r, const char *lit, size_t n)
{
    return r->extra_headers.len >= n
           && memmem(r->extra_headers.data, r->extra_headers.len, lit, n)
              != NULL;
}


/* Appends a "Name: value\r\n" line to r->extra_headers (which may point
 * at a constant: copied). */
static gn_int_t
gn_gzip_add_line(gn_http_request_t *r, const char *line, size_t n)
{
    u_char  *p;

    p = gn_pnalloc(r->pool, r->extra_headers.len + n);
    if (p == NULL) {
        return GN_ERROR;
    }

    if (r->extra_headers.len > 0) {
        memcpy(p, r->extra_headers.data, r->extra_headers.len);
    }
    memcpy(p + r->extra_headers.len, line, n);
    r->extra_headers.data = p;
    r->extra_headers.len += n;

    return GN_OK;
}


/*
 * GN_OK: compress r's response; GN_DECLINED: send it as it is. What can
 * be compressed gets gzip_vary's field either way, as nginx: a cache
 * must keep the two apart.
 */
static gn_int_t
gn_gzip_wanted(gn_http_request_t *r)
{
    gn_gzip_conf_t        *gc = gn_gzip_conf(r->loc);
    gn_http_header_t      *h;

    if (!gc->enable
        || (r->status != 200 && r->status != 403 && r->status != 404)
        || (r->content_length >= 0
            && (size_t) r->content_length < gc->min_length)
        || !gn_gzip_type(gc, &r->content_type)
        || gn_gzip_extra_has(r, "Content-Encoding:", 17)
        || gn_gzip_resp_header(r, "Content-Encoding", 16) != NULL)
    {
        return GN_DECLINED;
    }

    h = gn_gzip_resp_header(r, "Cache-Control", 13);
    if (h != NULL && gn_gzip_has_token(&h->value, "no-transform", 12)) {
        return GN_DECLINED;
    }

    if (gc->vary && !gn_gzip_extra_has(r, "Vary: Accept-Encoding", 21)) {
        h = gn_gzip_resp_header(r, "Vary", 4);
        if ((h == NULL
             || !gn_gzip_has_token(&h->value, "accept-encoding", 15))
            && gn_gzip_add_line(r, "Vary: Accept-Encoding\r\n", 23) != GN_OK)
        {
            return GN_ERROR;
        }
    }

    if (r->head.method == GN_HTTP_HEAD
        || r->head.version < GN_HTTP_VERSION_11)
    {
        return GN_DECLINED;
    }

    h = gn_http_header_find(&r->head, "Accept-Encoding", 15);
    if (h == NULL || !gn_http_accepts_coding(&h->value, "gzip", 4)) {
        return GN_DECLINED;
    }

    return GN_OK;
}


/* A strong entity-tag made weak ("x" -> W/"x") in r's pool. */
static gn_int_t
gn_gzip_weak(gn_http_request_t *r, gn_str_t *etag)
{
    u_char  *p;

    if (etag->len == 0 || etag->data[0] != '"') {
        return GN_OK;                   /* weak already, or none */
    }

    p = gn_pnalloc(r->pool, etag->len + 2);
    if (p == NULL) {
        return GN_ERROR;
    }
    p[0] = 'W';
    p[1] = '/';
    memcpy(p + 2, etag->data, etag->len);
    etag->data = p;
    etag->len += 2;

    return GN_OK;
}


/* The fields of a compressed response: Content-Encoding, a weak ETag (the
 * bytes differ from the file's: RFC 9110 8.8.1) whether the server's or
 * a module's or upstream's, no ranges (nor an upstream's Accept-Ranges). */
static gn_int_t
gn_gzip_fields(gn_http_request_t *r)
{
    gn_http_header_t  *h;

    if (gn_gzip_add_line(r, "Content-Encoding: gzip\r\n", 24) != GN_OK
        || gn_gzip_weak(r, &r->etag) != GN_OK)
    {
        return GN_ERROR;
    }

    h = gn_gzip_resp_header(r, "ETag", 4);
    if (h != NULL && gn_gzip_weak(r, &h->value) != GN_OK) {
        return GN_ERROR;
    }

    gn_http_headers_drop(r, "Accept-Ranges", 13);
    r->accept_ranges = 0;

    return GN_OK;
}


/* ---- a body set up whole ------------------------------------------------ */

/* One libdeflate compressor per level, made when first used and kept:
 * a child is single-threaded, and its state is made once, not per
 * response. */
static struct libdeflate_compressor *
gn_gzip_compressor(gn_uint_t level)
{
    static struct libdeflate_compressor  *c[10];

    if (c[level] == NULL) {
        c[level] = libdeflate_alloc_compressor((int) level);
    }

    return c[level];
}


static void
gn_gzip_read_failed(gn_http_request_t *r, int err)
{
    gn_log_error(GN_LOG_ERR, &r->c->log, err == EIO ? 0 : err,
                 "gzip: reading the file to compress failed%s",
                 err == EIO ? " (it shrank, or an I/O error)" : "");
}


/* The body's bytes in one piece: its one memory segment, else a copy
 * of its segments (files read) in r's pool. NULL when a file could not
 * be read whole (logged), or out of memory (*nomem). */
static const u_char *
gn_gzip_gather(gn_http_request_t *r, size_t size, gn_uint_t *nomem)
{
    gn_http_seg_t  *seg;
    u_char         *buf, *p;
    gn_uint_t       i;

    if (r->nsegs == 2 && r->segs[1].fd == -1) {
        return r->segs[1].pos;
    }

    buf = gn_pnalloc(r->pool, size);
    if (buf == NULL) {
        *nomem = 1;
        return NULL;
    }

    for (p = buf, i = 1; i < r->nsegs; i++) {
        seg = &r->segs[i];
        if (seg->fd == -1) {
            p = gn_cpymem(p, seg->pos, seg->len);
            continue;
        }
        if (gn_file_read(seg->fd, p, seg->len, seg->off) != GN_OK) {
            gn_gzip_read_failed(r, errno);
            return NULL;
        }
        p += seg->len;
    }

    return buf;
}


static void
gn_gzip_free(void *data)
{
    free(data);
}


/*
 * The body set up in r's segments, compressed at once; a static file's
 * output from, or into, the cache. GN_OK, GN_DECLINED (not compressed:
 * sent as it is), GN_ERROR.
 */
static gn_int_t
gn_gzip_whole(gn_http_request_t *r)
{
    gn_gzip_conf_t      *gc = gn_gzip_conf(r->loc);
    gn_fc_entry_t       *e = r->body_file;
    gn_pool_cleanup_t   *cln;
    struct libdeflate_compressor  *c;
    const u_char        *hit, *in;
    u_char              *out;
    size_t               len, cap;
    gn_uint_t            level = (gn_uint_t) gc->comp_level, nomem = 0;

    if (e != NULL && (r->status != 200 || r->content_length != e->size)) {
        e = NULL;                       /* not (only) the file any more */
    }

    if (e != NULL) {
        hit = gn_file_cache_derived(e, level, &len);
        if (hit != NULL) {
            out = (u_char *) hit;
            goto done;
        }
    }

    c = gn_gzip_compressor(level);
    if (c == NULL) {
        return GN_ERROR;
    }

    in = gn_gzip_gather(r, (size_t) r->content_length, &nomem);
    if (in == NULL) {
        return nomem ? GN_ERROR : GN_DECLINED;   /* as it is (logged) */
    }

    cap = libdeflate_gzip_compress_bound(c, (size_t) r->content_length);
    out = malloc(cap);
    if (out == NULL) {
        return GN_ERROR;
    }

    len = libdeflate_gzip_compress(c, in, (size_t) r->content_length, out,
                                   cap);
    if (len == 0) {
        free(out);
        gn_log_error(GN_LOG_ALERT, &r->c->log, 0, "gzip: "
                     "libdeflate_gzip_compress() failed");
        return GN_DECLINED;
    }

    if (e == NULL || gn_file_cache_derive(e, level, out, len) != GN_OK) {
        cln = gn_pool_cleanup_add(r->pool, 0);
        if (cln == NULL) {
            free(out);
            return GN_ERROR;
        }
        cln->handler = gn_gzip_free;
        cln->data = out;
    }

done:

    if (gn_gzip_fields(r) != GN_OK) {
        return GN_ERROR;
    }

    r->nsegs = 1;
    r->content_length = (off_t) len;

    return gn_http_add_mem(r, out, len);
}


/* ---- a streamed body: the deflate stream before r's stream -------------- */

static void gn_gzip_s_respond(gn_http_request_t *r);
static void gn_gzip_s_send(gn_http_request_t *r);
static gn_int_t gn_gzip_s_frame(gn_http_request_t *r, const u_char *data,
    size_t len);
static gn_int_t gn_gzip_s_frame_end(gn_http_request_t *r);
static gn_int_t gn_gzip_s_limits(gn_http_request_t *r);
static void gn_gzip_s_read_body(gn_http_request_t *r);
static void gn_gzip_s_wait(gn_http_request_t *r);
static void gn_gzip_s_abort(gn_http_request_t *r);

/* No tunnel: a 101 is never compressed, nor its stream wrapped. */
static const gn_http_stream_t  gn_gzip_stream = {
    gn_gzip_s_limits, gn_gzip_s_respond, gn_gzip_s_send, gn_gzip_s_frame,
    gn_gzip_s_frame_end, gn_gzip_s_read_body, gn_gzip_s_wait,
    gn_gzip_s_abort, NULL, NULL
};


#define gn_gzip_ctx(r)   ((gn_gzip_ctx_t *) (r)->gzip)


/* Runs deflate over what it was given with `flush`, each full piece of
 * its output framed by the next stream. */
static gn_int_t
gn_gzip_run(gn_http_request_t *r, int flush)
{
    gn_gzip_ctx_t  *ctx = gn_gzip_ctx(r);
    u_char          out[GN_GZIP_CHUNK];
    size_t          n;
    int             rc;

    do {
        ctx->z.next_out = out;
        ctx->z.avail_out = sizeof(out);

        rc = deflate(&ctx->z, flush);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            gn_log_error(GN_LOG_ALERT, &r->c->log, 0, "gzip: deflate() "
                         "failed: %d", rc);
            return GN_ERROR;
        }

        n = sizeof(out) - ctx->z.avail_out;
        if (n > 0 && ctx->next->frame(r, out, n) != GN_OK) {
            return GN_ERROR;
        }
    } while (ctx->z.avail_out == 0 || ctx->z.avail_in > 0);

    return GN_OK;
}


static gn_int_t
gn_gzip_s_frame(gn_http_request_t *r, const u_char *data, size_t len)
{
    gn_gzip_ctx_t  *ctx = gn_gzip_ctx(r);

    ctx->z.next_in = (u_char *) data;
    ctx->z.avail_in = (uInt) len;
    ctx->unflushed = 1;

    return gn_gzip_run(r, Z_NO_FLUSH);
}


static gn_int_t
gn_gzip_s_frame_end(gn_http_request_t *r)
{
    gn_gzip_ctx_t  *ctx = gn_gzip_ctx(r);

    ctx->z.next_in = NULL;
    ctx->z.avail_in = 0;
    ctx->unflushed = 0;

    if (gn_gzip_run(r, Z_FINISH) != GN_OK) {
        return GN_ERROR;
    }

    return ctx->next->frame_end(r);
}


/* What the handler gave so far goes out now: deflate keeps nothing
 * back that the client could already use. */
static gn_int_t
gn_gzip_sync(gn_http_request_t *r)
{
    gn_gzip_ctx_t  *ctx = gn_gzip_ctx(r);

    if (!ctx->unflushed) {
        return GN_OK;
    }

    ctx->unflushed = 0;
    ctx->z.next_in = NULL;
    ctx->z.avail_in = 0;

    return gn_gzip_run(r, Z_SYNC_FLUSH);
}


/* The stream's respond or send, after deflate's flush. */
static void
gn_gzip_go(gn_http_request_t *r, void (*go)(gn_http_request_t *r))
{
    if (gn_gzip_sync(r) != GN_OK) {
        gn_gzip_ctx(r)->next->abort(r);
        return;
    }

    go(r);
}


static void
gn_gzip_s_respond(gn_http_request_t *r)
{
    const gn_http_stream_t  *next = gn_gzip_ctx(r)->next;

    if (!r->streaming) {
        r->stream = next;               /* an error page instead: as it is */
        next->respond(r);
        return;
    }

    gn_gzip_go(r, next->respond);
}


static void
gn_gzip_s_send(gn_http_request_t *r)
{
    gn_gzip_go(r, gn_gzip_ctx(r)->next->send);
}


static gn_int_t
gn_gzip_s_limits(gn_http_request_t *r)
{
    return gn_gzip_ctx(r)->next->limits(r);
}


static void
gn_gzip_s_read_body(gn_http_request_t *r)
{
    gn_gzip_ctx(r)->next->read_body(r);
}


static void
gn_gzip_s_wait(gn_http_request_t *r)
{
    gn_gzip_ctx(r)->next->wait(r);
}


static void
gn_gzip_s_abort(gn_http_request_t *r)
{
    gn_gzip_ctx(r)->next->abort(r);
}


static void
gn_gzip_cleanup(void *data)
{
    gn_gzip_ctx_t  *ctx = data;

    if (ctx->z_ready) {
        (void) deflateEnd(&ctx->z);
        ctx->z_ready = 0;
    }
}


/* Puts a deflate stream between r and its stream. */
static gn_int_t
gn_gzip_wrap(gn_http_request_t *r)
{
    gn_gzip_ctx_t      *ctx;
    gn_pool_cleanup_t  *cln;

    if (gn_gzip_fields(r) != GN_OK) {
        return GN_ERROR;
    }

    cln = gn_pool_cleanup_add(r->pool, sizeof(gn_gzip_ctx_t));
    if (cln == NULL) {
        return GN_ERROR;
    }
    ctx = cln->data;
    memset(ctx, 0, sizeof(gn_gzip_ctx_t));
    cln->handler = gn_gzip_cleanup;

    if (deflateInit2(&ctx->z, (int) gn_gzip_conf(r->loc)->comp_level,
                     Z_DEFLATED, GN_GZIP_WBITS, GN_GZIP_MEMLEVEL,
                     Z_DEFAULT_STRATEGY) != Z_OK)
    {
        return GN_ERROR;
    }
    ctx->z_ready = 1;

    ctx->next = r->stream;
    r->gzip = ctx;
    r->stream = &gn_gzip_stream;
    r->stream_length = 0;               /* its length is not known now */
    r->content_length = -1;

    return GN_OK;
}


gn_int_t
gn_gzip_streaming(gn_http_request_t *r)
{
    gn_int_t  rc;

    if (r->gzip != NULL) {
        return GN_OK;                   /* never twice */
    }

    if (r->status == 0) {
        r->status = 200;                /* what the head will say */
    }

    rc = gn_gzip_wanted(r);
    if (rc != GN_OK) {
        return rc == GN_DECLINED ? GN_OK : rc;
    }

    return gn_gzip_wrap(r);
}


/* ---- a large static file: compressed as it is sent ---------------------- */

static void gn_gzip_pump_more(const gn_api_t *api, gn_request_t *req,
    void *arg);
static int gn_gzip_pump_handler(const gn_api_t *api, gn_request_t *req);

static const gn_module_t  gn_gzip_pump_desc = {
    .name = "gzip", .handler = gn_gzip_pump_handler
};

static gn_mod_t  gn_gzip_pump_mod = { .desc = &gn_gzip_pump_desc };


/* Reads and compresses the file until what waits to be sent passes the
 * stream's high mark, then waits for it to drain; at the end, finishes
 * the request. */
static void
gn_gzip_pump_more(const gn_api_t *api, gn_request_t *req, void *arg)
{
    gn_http_request_t  *r = (gn_http_request_t *) req;
    gn_gzip_ctx_t      *ctx = arg;
    gn_http_seg_t      *seg;
    u_char              buf[4 * GN_GZIP_CHUNK];
    ssize_t             n;
    int                 rc;

    while (ctx->seg < ctx->nsegs) {
        seg = &ctx->segs[ctx->seg];
        if (seg->len == 0) {
            ctx->seg++;
            continue;
        }

        if (seg->fd == -1) {
            n = (ssize_t) seg->len;
            rc = api->write(req, seg->pos, seg->len);
            seg->pos += n;

        } else {
            n = (ssize_t) gn_min(seg->len, sizeof(buf));
            if (gn_file_read(seg->fd, buf, (size_t) n, seg->off) != GN_OK) {
                gn_gzip_read_failed(r, errno);
                (void) api->finish(req, 500);
                return;
            }
            rc = api->write(req, buf, (size_t) n);
            seg->off += n;
        }
        seg->len -= (size_t) n;

        if (rc == GN_ERROR) {
            (void) api->finish(req, 500);
            return;
        }
        if (rc == GN_AGAIN) {
            (void) api->on_drained(req, gn_gzip_pump_more, ctx);
            return;
        }
    }

    (void) api->finish(req, GN_OK);
}


static int
gn_gzip_pump_handler(const gn_api_t *api, gn_request_t *req)
{
    gn_http_request_t  *r = (gn_http_request_t *) req;
    gn_gzip_ctx_t      *ctx = gn_gzip_ctx(r);

    r->status = ctx->status;            /* gn_http_module_run reset it */
    r->content_length = -1;

    gn_gzip_pump_more(api, req, ctx);

    return GN_AGAIN;
}


/* The static file's segments are read by the pump, not sent: r becomes
 * a module's request, which the caller runs (GN_DONE). */
static gn_int_t
gn_gzip_pump(gn_http_request_t *r)
{
    gn_gzip_ctx_t  *ctx;
    gn_http_seg_t  *segs;
    gn_uint_t       n = r->nsegs - 1;

    segs = gn_palloc(r->pool, n * sizeof(gn_http_seg_t));
    if (segs == NULL) {
        return GN_ERROR;
    }
    memcpy(segs, &r->segs[1], n * sizeof(gn_http_seg_t));

    if (gn_gzip_wrap(r) != GN_OK) {
        return GN_ERROR;
    }

    ctx = gn_gzip_ctx(r);
    ctx->segs = segs;
    ctx->nsegs = n;
    ctx->status = r->status;

    r->nsegs = 1;
    r->streaming = 1;
    r->module = &gn_gzip_pump_mod;

    return GN_DONE;
}


gn_int_t
gn_gzip_respond(gn_http_request_t *r)
{
    gn_gzip_conf_t  *gc = gn_gzip_conf(r->loc);
    gn_uint_t        i, files;
    gn_int_t         rc;

    if (!gc->enable || r->streaming || r->gzip != NULL) {
        return GN_OK;
    }

    if (r->content_length < 0 || r->nsegs <= 1) {
        return GN_OK;                   /* no body set up here */
    }

    rc = gn_gzip_wanted(r);
    if (rc != GN_OK) {
        return rc == GN_DECLINED ? GN_OK : rc;
    }

    for (files = 0, i = 1; i < r->nsegs; i++) {
        files += r->segs[i].fd != -1;
    }

    if (files > 0 && r->content_length > GN_GZIP_WHOLE_MAX) {
        /* a static file: compressed as it is sent; a module's file
         * (send_file) of that size goes as it is */
        return r->module == NULL ? gn_gzip_pump(r) : GN_OK;
    }

    rc = gn_gzip_whole(r);

    return rc == GN_DECLINED ? GN_OK : rc;
}


const gn_feature_t  gn_gzip_feature = {
    .name = "gzip", .commands = gn_gzip_commands,
    .conf_size = sizeof(gn_gzip_conf_t),
    .merge_conf = gn_gzip_merge
};
