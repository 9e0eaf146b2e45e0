/*
 * Module requests.
 *
 * Module code runs between gn_http_module_enter() and _leave(); what it
 * asks for through the API only sets flags on the request. The request's
 * next step (send the response, start streaming, read the body, wait) is
 * taken in gn_http_module_resume(), after the module's code has returned
 * -- from _leave(), or from a zero-delay timer when the module called the
 * API outside a callback of ours. So a request is never freed under a
 * module's feet.
 */

#include "gn_config.h"

#include "http_module.h"
#include "http_response.h"
#include "http_static.h"
#include "gzip.h"
#include "module.h"
#include "api.h"
#include "log.h"
#include "str.h"


#define GN_STREAM_HIGH   (256 * 1024)    /* write() says GN_AGAIN above,
                                            unless r->stream_high says */
#define GN_STREAM_LOW    GN_DRAINED_LOW  /* on_drained's callback below (or
                                            below half of stream_high) */

#define gn_stream_high(r)                                                    \
    ((r)->stream_high != 0 ? (r)->stream_high : GN_STREAM_HIGH)
#define gn_stream_low(r)                                                     \
    gn_min(GN_STREAM_LOW, gn_stream_high(r) / 2)

/* Buffers of streamed bytes, kept for the next responses of this child:
 * a large streamed response grows its buffer up to past its high mark
 * (256 KiB and a read by default), which malloc would give back to the
 * system at its end, and the next response would fault in afresh. */
#define GN_SBUF_KEEP       8
#define GN_SBUF_KEEP_MAX   (1024 * 1024)

typedef struct {
    u_char  *buf;
    size_t   cap;
} gn_sbuf_kept_t;

static gn_sbuf_kept_t  gn_sbufs[GN_SBUF_KEEP];
static gn_uint_t       gn_nsbufs;


static void gn_http_module_resume(gn_http_request_t *r);


gn_int_t
gn_http_module_filters(gn_http_request_t *r, gn_uint_t which)
{
    gn_mod_t       **pm;
    gn_handler_pt    hook;
    gn_uint_t        i;
    int              rc;

    pm = gn_cycle->modules.elts;
    for (i = 0; i < gn_cycle->modules.nelts; i++) {
        hook = which == GN_HTTP_FILTER_HEADERS ? pm[i]->desc->filter_headers
               : which == GN_HTTP_FILTER_MAPPED ? pm[i]->desc->filter_mapped
               : pm[i]->desc->filter_log;
        if (hook == NULL) {
            continue;
        }

        r->in_module++;
        rc = hook(&gn_api, (gn_request_t *) r);
        r->in_module--;

        if (which == GN_HTTP_FILTER_LOG) {
            continue;
        }
        if (rc >= 400 && rc <= 599) {
            return rc;
        }
        if (rc == GN_ERROR) {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


static void
gn_http_module_kick_handler(gn_timer_t *t)
{
    gn_http_module_resume(t->data);
}


/* on_drained's callback, once, from the loop. */
static void
gn_http_module_drained_handler(gn_timer_t *t)
{
    gn_http_request_t  *r = t->data;
    gn_drained_pt       cb = (gn_drained_pt) r->drained_cb;
    void               *arg = r->drained_arg;

    r->drained_cb = NULL;
    if (cb == NULL || r->finished) {
        return;
    }

    gn_http_module_enter(r);
    cb(&gn_api, (gn_request_t *) r, arg);
    gn_http_module_leave(r);
}


void
gn_http_module_sent(gn_http_request_t *r)
{
    if (r->drained_cb != NULL && r->sbuf_last - r->sbuf_pos <= gn_stream_low(r)
        && !gn_timer_is_set(&r->drained))
    {
        gn_timer_set(&r->drained, 0);
    }
}


gn_int_t
gn_http_module_on_drained(gn_http_request_t *r, void (*cb)(void), void *arg)
{
    if (r->module == NULL || r->finished || cb == NULL) {
        return GN_ERROR;
    }

    r->drained_cb = cb;
    r->drained_arg = arg;
    gn_http_module_sent(r);
    return GN_OK;
}


static void
gn_http_module_cleanup(void *data)
{
    gn_http_request_t  *r = data;

    gn_timer_del(&r->kick);
    gn_timer_del(&r->drained);
    r->drained_cb = NULL;

    if (r->sbuf != NULL && r->sbuf_cap <= GN_SBUF_KEEP_MAX
        && gn_nsbufs < GN_SBUF_KEEP)
    {
        gn_sbufs[gn_nsbufs].buf = r->sbuf;
        gn_sbufs[gn_nsbufs].cap = r->sbuf_cap;
        gn_nsbufs++;
    } else {
        free(r->sbuf);
    }
    r->sbuf = NULL;
    r->sbuf_cap = 0;
}


/* Schedules the request's next step after module code changed it. */
static void
gn_http_module_kick(gn_http_request_t *r)
{
    if (r->in_module == 0) {
        gn_timer_set(&r->kick, 0);
    }
}


void
gn_http_module_enter(gn_http_request_t *r)
{
    r->in_module++;
}


void
gn_http_module_leave(gn_http_request_t *r)
{
    if (--r->in_module == 0) {
        gn_http_module_resume(r);
    }
}


void
gn_http_module_run(gn_http_request_t *r)
{
    gn_mod_t           *mod = r->module;
    gn_pool_cleanup_t  *cln;
    int                 rc;

    cln = gn_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        r->stream->abort(r);
        return;
    }
    gn_timer_init_node(&r->kick, gn_http_module_kick_handler, r);
    gn_timer_init_node(&r->drained, gn_http_module_drained_handler, r);
    cln->handler = gn_http_module_cleanup;
    cln->data = r;

    r->status = 0;
    r->content_length = -1;

    gn_http_module_enter(r);

    rc = mod->desc->handler(&gn_api, (gn_request_t *) r);

    switch (rc) {

    case GN_OK:
        r->finished = 1;
        break;

    case GN_AGAIN:
        r->pending = 1;
        break;

    case GN_DECLINED:
        if (!r->streaming && r->nsegs <= 1 && !r->finished) {
            r->module = NULL;                 /* static files serve it */
            break;
        }

        /* A response begun cannot go to the static files; left as it
         * was, the request waited for a finish() that never came. */
        if (!r->finished) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "module \"%s\" declined "
                         "the request after writing to its response",
                         mod->desc->name);
            r->finished = 1;
            r->error_status = 500;
        }
        break;

    default:
        if (!r->finished) {
            r->finished = 1;
            r->error_status = (rc >= 400 && rc <= 599) ? (gn_uint_t) rc : 500;
        }
        break;
    }

    gn_http_module_leave(r);
}


void
gn_http_module_body(gn_http_request_t *r, u_char *data, size_t len)
{
    gn_body_pt  cb = (gn_body_pt) r->body_cb;

    r->in_module++;
    cb(&gn_api, (gn_request_t *) r, data, len, 0, r->body_arg);
    r->in_module--;
}


void
gn_http_module_body_done(gn_http_request_t *r, gn_uint_t status)
{
    gn_body_pt  cb = (gn_body_pt) r->body_cb;

    r->body_cb = NULL;
    r->reading_body = 0;

    if (status == GN_OK) {
        r->in_module++;
        cb(&gn_api, (gn_request_t *) r, NULL, 0, 1, r->body_arg);
        r->in_module--;

    } else if (!r->finished) {
        r->finished = 1;
        r->error_status = status;
    }

    gn_http_module_kick(r);
    r->stream->wait(r);                 /* last: it may end the request */
}


/* The head of a module's response: status, length, streaming. */
static void
gn_http_module_head(gn_http_request_t *r)
{
    gn_uint_t  i;

    if (r->status == 0) {
        r->status = 200;
    }

    if (r->streaming) {
        if (!r->stream_length) {
            r->content_length = -1;           /* the stream frames it */
        }
        return;
    }

    r->content_length = 0;
    for (i = 1; i < r->nsegs; i++) {
        r->content_length += (off_t) r->segs[i].len;
    }
}


static void
gn_http_module_static(gn_http_request_t *r)
{
    if (r->has_body && !r->body_done) {
        r->stream->read_body(r);             /* discard, then static */
        return;
    }

    gn_http_answer(r, gn_http_static_handler(r));
}


void
gn_http_answer(gn_http_request_t *r, gn_int_t rc)
{
    if (rc == GN_OK) {
        rc = gn_gzip_respond(r);
        if (rc == GN_DONE) {
            gn_http_module_run(r);      /* compressed as it is sent */
            return;
        }
    }

    if (rc != GN_OK) {
        r->close = 1;
        rc = gn_http_response_error(r, 500);
    }

    if (rc != GN_OK) {
        r->stream->abort(r);
        return;
    }

    r->stream->respond(r);
}


static void
gn_http_module_resume(gn_http_request_t *r)
{
    gn_body_pt   cb;

    if (r->in_module) {
        return;
    }

    if (r->module == NULL) {
        gn_http_module_static(r);
        return;
    }

    if (r->error_status) {
        if (r->header_sent || r->cut) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "module \"%s\" failed "
                         "after its response started: connection closed",
                         ((gn_mod_t *) r->module)->desc->name);
            r->stream->abort(r);
            return;
        }
        r->streaming = 0;
        r->chunked_out = 0;
        if (gn_http_response_error(r, r->error_status) != GN_OK) {
            r->stream->abort(r);
            return;
        }
        r->error_status = 0;
        r->header_sent = 1;
        r->stream->respond(r);
        return;
    }

    if (r->header_sent) {
        r->stream->send(r);
        return;
    }

    /* A stream that begins while the body is still being read (a CGI
     * script that answers before it reads its stdin) waits for the
     * body's end: once writing, the connection reads no more, so the
     * module would wait for the rest of the body for ever. write() says
     * GN_AGAIN above GN_STREAM_HIGH meanwhile. */
    if (r->streaming && !r->finished && r->body_cb != NULL
        && r->reading_body)
    {
        return;
    }

    if (r->streaming || r->finished) {
        gn_http_module_head(r);
        if (gn_gzip_respond(r) == GN_ERROR
            && gn_http_response_error(r, 500) != GN_OK)
        {
            r->stream->abort(r);
            return;
        }
        r->header_sent = 1;
        r->stream->respond(r);
        return;
    }

    if (r->body_cb != NULL && !r->reading_body) {
        if (!r->has_body || r->body_done) {
            cb = (gn_body_pt) r->body_cb;
            r->body_cb = NULL;
            r->body_done = 1;
            gn_http_module_enter(r);
            cb(&gn_api, (gn_request_t *) r, NULL, 0, 1, r->body_arg);
            gn_http_module_leave(r);
            return;
        }
        r->reading_body = 1;
        r->stream->read_body(r);
        return;
    }

    if (!r->reading_body) {
        r->stream->wait(r);
    }
}


/* ---- the API's response calls ------------------------------------------- */

/* Streamed bytes were queued: they go out from the loop; GN_AGAIN when
 * more than the stream's high mark wait (the module should pause). */
static gn_int_t
gn_http_module_queued(gn_http_request_t *r)
{
    gn_http_module_kick(r);
    return r->sbuf_last - r->sbuf_pos > gn_stream_high(r) ? GN_AGAIN : GN_OK;
}


/* Room for len more bytes at the end of r->sbuf: GN_OK or GN_ERROR. */
static gn_int_t
gn_http_sbuf_reserve(gn_http_request_t *r, size_t len)
{
    size_t  need;

    if (r->sbuf == NULL && gn_nsbufs > 0) {
        gn_nsbufs--;
        r->sbuf = gn_sbufs[gn_nsbufs].buf;
        r->sbuf_cap = gn_sbufs[gn_nsbufs].cap;
    }

    if (r->sbuf_pos == r->sbuf_last) {
        r->sbuf_pos = r->sbuf_last = 0;
    }

    need = r->sbuf_last + len;
    if (need > r->sbuf_cap) {
        if (r->sbuf_pos > 0) {              /* compact first */
            memmove(r->sbuf, r->sbuf + r->sbuf_pos,
                    r->sbuf_last - r->sbuf_pos);
            r->sbuf_last -= r->sbuf_pos;
            r->sbuf_pos = 0;
            need = r->sbuf_last + len;
        }
        if (gn_str_reserve(&r->sbuf, &r->sbuf_cap, need, 4096)
            != GN_OK)
        {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


gn_int_t
gn_http_sbuf_append(gn_http_request_t *r, const void *data, size_t len)
{
    if (gn_http_sbuf_reserve(r, len) != GN_OK) {
        return GN_ERROR;
    }

    memcpy(r->sbuf + r->sbuf_last, data, len);
    r->sbuf_last += len;

    return GN_OK;
}


u_char *
gn_http_module_room(gn_http_request_t *r, size_t len, size_t *size)
{
    if (r->module == NULL || r->finished || !r->streaming
        || r->stream->verbatim == NULL || !r->stream->verbatim(r)
        || gn_http_sbuf_reserve(r, len) != GN_OK)
    {
        return NULL;
    }

    if (size != NULL) {
        *size = r->sbuf_cap - r->sbuf_last;
    }
    return r->sbuf + r->sbuf_last;
}


gn_int_t
gn_http_module_commit(gn_http_request_t *r, size_t len)
{
    r->sbuf_last += len;
    return gn_http_module_queued(r);
}


gn_int_t
gn_http_module_write(gn_http_request_t *r, const void *data, size_t len)
{
    u_char  *p;

    if (r->module == NULL || r->finished) {
        return GN_ERROR;
    }

    if (len == 0) {
        return GN_OK;
    }

    if (r->streaming) {
        if (r->stream->frame(r, data, len) != GN_OK) {
            return GN_ERROR;
        }
        return gn_http_module_queued(r);
    }

    p = gn_pnalloc(r->pool, len);
    if (p == NULL) {
        return GN_ERROR;
    }
    memcpy(p, data, len);

    return gn_http_add_mem(r, p, len);
}


/*
 * A module's files go through the open-file cache like static files, with
 * the settings of the request's location: a hit costs no system call, and
 * a small file's bytes are in memory. So a file changed in place is seen
 * within file_cache_valid, as for static files (`file_cache off` in the
 * location: opened on every call). The entry is released with the
 * request; NULL with errno set.
 */
static gn_fc_entry_t *
gn_http_module_file(gn_http_request_t *r, const char *path)
{
    static const gn_str_t  no_root = gn_string("");

    gn_fc_entry_t  *e;
    gn_str_t        file;
    int             err;

    if (r->module == NULL || r->finished || path == NULL) {
        errno = EINVAL;
        return NULL;
    }

    file.data = (u_char *) path;
    file.len = strlen(path);

    e = gn_http_file_open(r, &no_root, &file, NULL, 0, &err);
    if (e == NULL) {
        errno = err;
        return NULL;
    }

    if (!e->is_file) {
        errno = e->is_dir ? EISDIR : EINVAL;
        return NULL;
    }

    return e;
}


gn_int_t
gn_http_module_send_file(gn_http_request_t *r, const char *path,
    int64_t offset, int64_t length)
{
    gn_fc_entry_t  *e;

    if (r->streaming || offset < 0) {
        errno = EINVAL;
        return GN_ERROR;
    }

    e = gn_http_module_file(r, path);
    if (e == NULL) {
        return GN_ERROR;
    }

    if (offset > e->size) {
        errno = EINVAL;
        return GN_ERROR;
    }

    if (length < 0 || length > e->size - offset) {
        length = e->size - offset;
    }

    if (length == 0) {
        return GN_OK;
    }

    return gn_http_file_body(r, e, (off_t) offset, (off_t) length);
}


static void
gn_http_module_close_fd(void *data)
{
    (void) close((int) (intptr_t) data);
}


gn_int_t
gn_http_module_send_fd(gn_http_request_t *r, int fd, int64_t offset,
    int64_t length)
{
    gn_pool_cleanup_t  *cln;
    struct stat         st;
    u_char             *p;
    int                 dfd;

    if (r->module == NULL || r->finished || r->streaming || offset < 0) {
        errno = EINVAL;
        return GN_ERROR;
    }

    if (fstat(fd, &st) == -1) {
        return GN_ERROR;                    /* EBADF */
    }
    if (!S_ISREG(st.st_mode) || offset > st.st_size
        || (length >= 0 && length > st.st_size - offset))
    {
        errno = EINVAL;
        return GN_ERROR;
    }
    if (length < 0) {
        length = st.st_size - offset;
    }
    if (length == 0) {
        return GN_OK;
    }

    if ((size_t) length < gn_file_conf(r->loc)->sendfile_min_size) {
        p = gn_pnalloc(r->pool, (size_t) length);
        if (p == NULL) {
            errno = ENOMEM;
            return GN_ERROR;
        }
        if (gn_file_read(fd, p, (size_t) length, (off_t) offset) != GN_OK) {
            return GN_ERROR;
        }
        return gn_http_add_mem(r, p, (size_t) length);
    }

    cln = gn_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        errno = ENOMEM;
        return GN_ERROR;
    }

    dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dfd == -1) {
        return GN_ERROR;
    }
    cln->handler = gn_http_module_close_fd;
    cln->data = (void *) (intptr_t) dfd;

    return gn_http_add_file(r, dfd, (off_t) offset, (off_t) length);
}


gn_int_t
gn_http_module_read_file(gn_http_request_t *r, const char *path, size_t max,
    const u_char **data, size_t *len)
{
    gn_fc_entry_t  *e;
    u_char         *p;
    size_t          size;

    e = gn_http_module_file(r, path);
    if (e == NULL) {
        return GN_ERROR;
    }

    if ((uint64_t) e->size > max) {
        errno = EFBIG;
        return GN_ERROR;
    }

    size = (size_t) e->size;

    if (e->content != NULL || size == 0) {
        *data = size ? e->content : (const u_char *) "";
        *len = size;
        return GN_OK;
    }

    p = gn_pnalloc(r->pool, size);
    if (p == NULL) {
        errno = ENOMEM;
        return GN_ERROR;
    }

    if (gn_file_read(e->fd, p, size, 0) != GN_OK) {
        return GN_ERROR;                    /* EIO: the file shrank */
    }

    *data = p;
    *len = size;

    return GN_OK;
}


gn_int_t
gn_http_module_flush(gn_http_request_t *r)
{
    gn_http_seg_t  *seg;
    u_char          buf[16384];
    ssize_t         n;
    gn_uint_t       i;

    if (r->module == NULL || r->finished) {
        return GN_ERROR;
    }

    if (r->streaming) {
        gn_http_module_kick(r);
        return GN_OK;
    }

    /* before the first frame: gzip may stand between r and its stream */
    if (gn_gzip_streaming(r) != GN_OK) {
        return GN_ERROR;
    }

    r->streaming = 1;

    /* what was written before becomes the first frames (chunks) */
    for (i = 1; i < r->nsegs; i++) {
        seg = &r->segs[i];
        if (seg->fd == -1) {
            if (seg->len > 0
                && r->stream->frame(r, seg->pos, seg->len) != GN_OK)
            {
                return GN_ERROR;
            }
            continue;
        }
        while (seg->len > 0) {
            n = pread(seg->fd, buf, gn_min(seg->len, sizeof(buf)), seg->off);
            if (n <= 0 || r->stream->frame(r, buf, (size_t) n) != GN_OK) {
                return GN_ERROR;
            }
            seg->off += n;
            seg->len -= (size_t) n;
        }
    }
    if (r->nsegs > 1) {
        r->nsegs = 1;
    }

    gn_http_module_kick(r);
    return GN_OK;
}


gn_int_t
gn_http_module_finish(gn_http_request_t *r, int status)
{
    if (r->module == NULL || r->finished) {
        return GN_ERROR;
    }

    r->finished = 1;
    r->drained_cb = NULL;             /* the module is done with it */

    if (status != GN_OK) {
        r->error_status = (status >= 400 && status <= 599) ? (gn_uint_t) status
                                                             : 500;
    } else if (r->streaming && !r->trailer_added) {
        if (r->stream->frame_end(r) != GN_OK) {
            r->error_status = 500;
        }
        r->trailer_added = 1;
    }

    gn_http_module_kick(r);
    return GN_OK;
}


gn_int_t
gn_http_module_read_body(gn_http_request_t *r, void *cb, void *arg)
{
    if (r->module == NULL || r->body_cb != NULL || r->finished
        || cb == NULL)
    {
        return GN_ERROR;
    }

    r->body_cb = cb;
    r->body_arg = arg;
    gn_http_module_kick(r);

    return GN_OK;
}


/* A header a module may not set: the server owns framing and identity. */
static gn_uint_t
gn_http_module_reserved(const char *name)
{
    static const char  *own[] = { "Content-Length", "Transfer-Encoding",
                                  "Connection", "Keep-Alive", "Date",
                                  "Server", "Upgrade", "Trailer", NULL };
    gn_uint_t           i;

    for (i = 0; own[i] != NULL; i++) {
        if (strcasecmp(name, own[i]) == 0) {
            return 1;
        }
    }

    return 0;
}


gn_int_t
gn_http_module_header(gn_http_request_t *r, const char *name,
    const char *value, gn_uint_t replace)
{
    gn_http_header_t  *h;
    gn_str_t           n, v;
    gn_uint_t          i, j;
    size_t             k;

    if (r->header_sent || name == NULL || name[0] == '\0'
        || gn_http_module_reserved(name))
    {
        return GN_ERROR;
    }

    for (k = 0; name[k]; k++) {
        if (name[k] <= ' ' || name[k] >= 0x7f || strchr("()<>@,;:\\\"/[]?={}",
                                                        name[k]))
        {
            return GN_ERROR;
        }
    }
    for (k = 0; value && value[k]; k++) {
        if (value[k] == '\r' || value[k] == '\n') {
            return GN_ERROR;                  /* no header injection */
        }
    }

    if (strcasecmp(name, "Content-Type") == 0) {
        if (value == NULL) {
            r->content_type.len = 0;
            return GN_OK;
        }
        v.data = (u_char *) value;
        v.len = strlen(value);
        return gn_pstrdup(r->pool, &v, &r->content_type) ? GN_OK : GN_ERROR;
    }

    if (r->resp_headers == NULL) {
        r->resp_headers = gn_array_create(r->pool, 4,
                                          sizeof(gn_http_header_t));
        if (r->resp_headers == NULL) {
            return GN_ERROR;
        }
    }

    if (replace) {
        h = r->resp_headers->elts;
        for (i = 0, j = 0; i < r->resp_headers->nelts; i++) {
            if (h[i].name.len == strlen(name)
                && strncasecmp((char *) h[i].name.data, name,
                               h[i].name.len) == 0)
            {
                continue;
            }
            h[j++] = h[i];
        }
        r->resp_headers->nelts = j;
    }

    if (value == NULL) {
        return GN_OK;
    }

    n.data = (u_char *) name;
    n.len = strlen(name);
    v.data = (u_char *) value;
    v.len = strlen(value);

    h = gn_array_push(r->resp_headers);
    if (h == NULL || gn_pstrdup(r->pool, &n, &h->name) == NULL
        || gn_pstrdup(r->pool, &v, &h->value) == NULL)
    {
        return GN_ERROR;
    }

    return GN_OK;
}
