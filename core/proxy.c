/*
 * The reverse proxy (proxy.h).
 *
 * A request's way through it: the body, if any, is read whole; the
 * request head is built (nginx's URI rules, the client's fields less the
 * hop-by-hop ones, proxy_set_header's); a server is picked and a pooled
 * connection to it taken or a new one connected; the request is sent;
 * the response head is read (up to proxy_buffer_size) and checked
 * (http_parse.c), then its body relayed as it comes: by its
 * Content-Length (passed on as such), chunked (decoded, framed again for
 * the client) or up to the upstream's close. A response read whole on a
 * connection the upstream keeps goes back to the pool.
 *
 * What fails before the response head: the next server when
 * proxy_next_upstream says so and the request may be sent again (never
 * a non-idempotent one whose bytes reached an upstream), else 502 (504
 * for a timeout). A pooled connection the upstream had closed (nothing
 * read from it) is retried once on a new connection to the same server
 * for idempotent requests, as no failure of the server. What fails once
 * the response began cuts it: the client's connection is closed, never
 * a complete-looking response with bytes missing.
 */

#include "gn_config.h"

#include <sys/socket.h>
#include <arpa/inet.h>

#include "proxy.h"
#include "fastcgi.h"
#include "module.h"
#include "str.h"


#define GN_PROXY_MAX_HEADERS  100

typedef enum {
    GN_PROXY_CONNECTING = 0,
    GN_PROXY_HANDSHAKE,                  /* TLS, https:// */
    GN_PROXY_SENDING,
    GN_PROXY_HEAD,
    GN_PROXY_BODY,
    GN_PROXY_TUNNEL                      /* a 101 taken: the relay next */
} gn_proxy_state_e;

/* How a response body ends. */
typedef enum {
    GN_PROXY_BODY_NONE = 0,
    GN_PROXY_BODY_LENGTH,
    GN_PROXY_BODY_CHUNKED,
    GN_PROXY_BODY_CLOSE
} gn_proxy_framing_e;

typedef struct {
    gn_http_request_t   *r;
    gn_proxy_conf_t     *pc;
    gn_proxy_pass_t     *up;             /* &pc->http or &pc->fcgi */
    gn_uint_t            fcgi;           /* FastCGI, not HTTP */
    gn_tls_client_t     *tls;            /* https://, else NULL */
    gn_upstream_conn_t  *uc;
    gn_uint_t            server;         /* uc's, for the log */
    gn_proxy_state_e     state;
    gn_timer_t           timer;          /* connect, send or read limit */
    u_char               tried[256];
    gn_uint_t            tries;
    gn_uint_t            retried_stale;  /* the one retry of a pooled */
    gn_uint_t            sent_any;       /* request bytes reached one */
    uint32_t             hash;           /* of the group's hash key */

    u_char              *body;           /* the request body, malloc()ed;
                                            streaming: the whole request
                                            so far, head first */
    size_t               body_len;
    size_t               body_cap;
    gn_uint_t            streaming;      /* *_request_buffering off: the
                                            body goes as it comes */
    gn_uint_t            body_complete;  /* ... its end is in `body` */
    gn_uint_t            early;          /* ... the upstream answered
                                            before it all went: its
                                            connection is not kept */
    u_char              *req;            /* head + body to send */
    size_t               req_len;
    size_t               sent;

    u_char              *buf;            /* the response as read */
    size_t               buf_cap;
    size_t               buf_size;       /* in use: the head's limit,
                                            then buf_cap */
    size_t               buf_len;
    size_t               scanned;        /* for the end of the head */
    gn_proxy_framing_e   framing;
    off_t                left;           /* GN_PROXY_BODY_LENGTH */
    gn_http_chunked_t    chunked;
    gn_uint_t            keep;           /* the upstream keeps it open */
    gn_uint_t            upgrade;        /* Upgrade asked for, passed on */
    gn_str_t             upgrade_to;     /* ... its value */
    size_t               head_len;       /* of the 101 in buf */
    gn_uint_t            paused;         /* the client has enough */

    gn_msec_t            started;        /* this attempt's */
    gn_msec_t            connected;      /* ... 0: not yet */
    gn_uint_t            status;         /* ... upstream's, 0: none */
    gn_uint_t            last_status;    /* the last failed try's */
    gn_http_upstream_t   log;

    gn_fcgi_dec_t        dec;            /* FastCGI: this attempt's */
    gn_uint_t            extra;          /* ... stdout past its length */
} gn_proxy_ctx_t;


static int gn_proxy_handler(const gn_api_t *api, gn_request_t *rq);
static void gn_proxy_connect(gn_proxy_ctx_t *ctx);
static void gn_proxy_read(gn_proxy_ctx_t *ctx);
static void gn_proxy_tunnel_start(gn_proxy_ctx_t *ctx);
static void gn_proxy_handshake(gn_proxy_ctx_t *ctx);

static const gn_module_t  gn_proxy_desc = {
    .name = "proxy", .handler = gn_proxy_handler
};

static gn_mod_t  gn_proxy_mod = { .desc = &gn_proxy_desc };

/* What pooled FastCGI connections are made for (upstream.h's key): never
 * given to an HTTP request to the same server, nor the reverse. */
static const u_char  gn_proxy_fcgi_key;


void *
gn_proxy_handler_for(gn_loc_conf_t *lc)
{
    gn_proxy_conf_t  *pc = gn_proxy_conf(lc);

    return pc->http.group != NULL || pc->fcgi.group != NULL
           ? &gn_proxy_mod : NULL;
}


/* ---- the log's values --------------------------------------------------- */

/* The name of the attempt's server (as its configuration wrote it). */
static const gn_str_t *
gn_proxy_server_name(gn_proxy_ctx_t *ctx)
{
    gn_upstream_server_t  *s = ctx->up->group->servers.elts;

    return &s[ctx->server].addr.name;
}


/* The end of an attempt: its server, status and times, for the log (which
 * renders them only when a format asks) and the counters. */
static void
gn_proxy_log_attempt(gn_proxy_ctx_t *ctx, gn_uint_t status, gn_uint_t fail)
{
    gn_http_upstream_try_t  *t;

    if (ctx->log.ntries < GN_HTTP_UPSTREAM_TRIES) {
        t = &ctx->log.tries[ctx->log.ntries];
        t->addr = gn_proxy_server_name(ctx);
        t->status = status;
        t->response = gn_current_msec - ctx->started;
        t->connect = ctx->connected ? ctx->connected - ctx->started
                                    : (gn_msec_t) -1;
    }
    ctx->log.ntries++;

    gn_upstream_account(ctx->up->group, ctx->server, ctx->status,
                        gn_current_msec - ctx->started, fail);
}


/* ---- the request to the upstream ---------------------------------------- */

static gn_uint_t
gn_proxy_hop_by_hop(const gn_str_t *name)
{
    switch (name->len) {
    case 2:
        return gn_str_caseeq(name, "TE");
    case 7:
        return gn_str_caseeq(name, "Trailer")
               || gn_str_caseeq(name, "Upgrade");
    case 10:
        return gn_str_caseeq(name, "Connection")
               || gn_str_caseeq(name, "Keep-Alive");
    case 16:
        return gn_str_caseeq(name, "Proxy-Connection");
    case 17:
        return gn_str_caseeq(name, "Transfer-Encoding");
    }

    return 0;
}


/* Is name one of the tokens of the Connection fields of h (RFC 9110
 * 7.6.1: they name more hop-by-hop fields)? name NULL: is any token one
 * that may name a field beyond the hop-by-hop ones ("close" names none,
 * "keep-alive" and "upgrade" hop-by-hop ones), so that callers ask field
 * by field only then. */
static gn_uint_t
gn_proxy_conn_listed(const gn_http_head_t *h, const gn_str_t *name)
{
    gn_uint_t   i;
    u_char     *p, *end, *start;
    gn_str_t    tok;

    for (i = 0; i < h->nheaders; i++) {
        if (!gn_str_caseeq(&h->headers[i].name, "Connection")) {
            continue;
        }
        p = h->headers[i].value.data;
        end = p + h->headers[i].value.len;
        while (p < end) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) {
                p++;
            }
            start = p;
            while (p < end && *p != ',' && *p != ' ' && *p != '\t') {
                p++;
            }
            tok.data = start;
            tok.len = (size_t) (p - start);
            if (tok.len == 0) {
                continue;
            }
            if (name != NULL ? gn_str_caseeq_str(&tok, name)
                : !gn_str_caseeq(&tok, "close")
                  && !gn_proxy_hop_by_hop(&tok))
            {
                return 1;
            }
        }
    }

    return 0;
}


/* Does the client's field go to the upstream? */
static gn_uint_t
gn_proxy_pass_field(gn_http_request_t *r, gn_array_t *set,
    const gn_http_header_t *hd, gn_uint_t listing)
{
    gn_proxy_header_t  *ph;
    gn_uint_t           i;

    if (gn_proxy_hop_by_hop(&hd->name)
        || gn_str_caseeq(&hd->name, "Host")
        || gn_str_caseeq(&hd->name, "Content-Length")
        || gn_str_caseeq(&hd->name, "Expect")
        || (listing && gn_proxy_conn_listed(&r->head, &hd->name)))
    {
        return 0;
    }

    ph = set != NULL ? set->elts : NULL;
    for (i = 0; set != NULL && i < set->nelts; i++) {
        if (gn_str_caseeq_str(&hd->name, &ph[i].name)) {
            return 0;                       /* proxy_set_header's instead */
        }
    }

    return 1;
}


/* A byte a path sent on must carry %-escaped (nginx's NGX_ESCAPE_URI,
 * near enough: controls, space, non-ASCII, and what would end or
 * change the path). */
static gn_uint_t
gn_proxy_escape_char(u_char c)
{
    return c <= 0x20 || c >= 0x7f || strchr("\"#%<>?\\^`{|}", c) != NULL;
}


/* Copies (p non-NULL) or measures the path s, escaped. */
static size_t
gn_proxy_escape(u_char *p, const u_char *s, size_t n)
{
    static const char  hex[] = "0123456789ABCDEF";
    size_t             i, len = 0;

    for (i = 0; i < n; i++) {
        if (!gn_proxy_escape_char(s[i])) {
            if (p != NULL) {
                p[len] = s[i];
            }
            len++;
            continue;
        }
        if (p != NULL) {
            p[len] = '%';
            p[len + 1] = (u_char) hex[s[i] >> 4];
            p[len + 2] = (u_char) hex[s[i] & 0xf];
        }
        len += 3;
    }

    return len;
}


/*
 * The request target (nginx's rules): proxy_pass without a URI part
 * sends the client's as it came (or, after a rewrite changed it, the
 * new URI, escaped); with one, the part of the URI the location's
 * prefix matched is replaced by it (after a rewrite: the new URI
 * whole). The query goes on as it is.
 */
static size_t
gn_proxy_target(gn_http_request_t *r, gn_proxy_conf_t *pc, u_char *p)
{
    gn_http_head_t  *h = &r->head;
    gn_loc_conf_t   *lc = r->loc;
    size_t           len = 0, skip = 0;

    if (!pc->has_uri && !r->uri_changed) {
        if (p != NULL) {
            memcpy(p, h->path.data, h->path.len);
        }
        len = h->path.len;

    } else {
        if (pc->has_uri && !r->uri_changed) {
            if (p != NULL) {
                memcpy(p, pc->uri.data, pc->uri.len);
            }
            len = pc->uri.len;
            skip = gn_min(lc->name.len, r->uri.len);
        }
        len += gn_proxy_escape(p ? p + len : NULL, r->uri.data + skip,
                               r->uri.len - skip);
    }

    if (h->has_query && h->query.len > 0) {
        if (p != NULL) {
            p[len] = '?';
            memcpy(p + len + 1, h->query.data, h->query.len);
        }
        len += 1 + h->query.len;
    }

    return len;
}


/* Copies (p non-NULL) or measures the head of the request to send. */
static size_t
gn_proxy_head(gn_proxy_ctx_t *ctx, u_char *p)
{
    gn_http_request_t  *r = ctx->r;
    gn_proxy_conf_t    *pc = ctx->pc;
    gn_proxy_header_t  *ph;
    gn_http_header_t   *hd;
    gn_uint_t           i, listing;
    size_t              len, n;
    char                num[32];

#define gn_proxy_put(s, l)                                                   \
    do {                                                                     \
        if (p != NULL) {                                                     \
            memcpy(p + len, (s), (l));                                       \
        }                                                                    \
        len += (l);                                                          \
    } while (0)

    len = 0;
    gn_proxy_put(r->head.method_name.data, r->head.method_name.len);
    gn_proxy_put(" ", 1);
    len += gn_proxy_target(r, pc, p ? p + len : NULL);
    gn_proxy_put(" HTTP/1.1\r\n", 11);

    if (ctx->upgrade) {
        gn_proxy_put("Connection: upgrade\r\nUpgrade: ", 30);
        gn_proxy_put(ctx->upgrade_to.data, ctx->upgrade_to.len);
        gn_proxy_put("\r\n", 2);

    } else if (ctx->up->group->keepalive == 0) {
        gn_proxy_put("Connection: close\r\n", 19);
    }

    if (ctx->streaming && r->head.content_length < 0) {
        gn_proxy_put("Transfer-Encoding: chunked\r\n", 28);

    } else if (r->has_body || (r->head.method & (GN_HTTP_POST | GN_HTTP_PUT
                                                  | GN_HTTP_PATCH)))
    {
        n = (size_t) snprintf(num, sizeof(num), "Content-Length: %lld\r\n",
                              ctx->streaming
                              ? (long long) r->head.content_length
                              : (long long) ctx->body_len);
        gn_proxy_put(num, n);
    }

    ph = pc->headers->elts;
    for (i = 0; i < pc->headers->nelts; i++) {
        n = gn_access_log_render(r, &ph[i].value, NULL);
        if (n == 0) {
            continue;                     /* an empty value: not sent */
        }
        gn_proxy_put(ph[i].name.data, ph[i].name.len);
        gn_proxy_put(": ", 2);
        len += p != NULL ? gn_access_log_render(r, &ph[i].value, p + len)
                         : n;
        gn_proxy_put("\r\n", 2);
    }

    hd = r->head.headers;
    listing = gn_proxy_conn_listed(&r->head, NULL);
    for (i = 0; pc->pass_request_headers && i < r->head.nheaders; i++) {
        if (!gn_proxy_pass_field(r, pc->headers, &hd[i], listing)) {
            continue;
        }
        gn_proxy_put(hd[i].name.data, hd[i].name.len);
        gn_proxy_put(": ", 2);
        gn_proxy_put(hd[i].value.data, hd[i].value.len);
        gn_proxy_put("\r\n", 2);
    }

    gn_proxy_put("\r\n", 2);

#undef gn_proxy_put

    return len;
}


/* The whole request to send, once: head and body. */
/* The hash of the group's key for r (rendered on the stack when short,
 * as keys are). */
static uint32_t
gn_proxy_hash(gn_http_request_t *r, const gn_log_format_t *key)
{
    u_char   buf[512], *p = buf;
    size_t   n;

    n = gn_access_log_render(r, key, NULL);
    if (n > sizeof(buf)) {
        p = gn_pnalloc(r->pool, n);
        if (p == NULL) {
            return 0;
        }
    }
    (void) gn_access_log_render(r, key, p);

    return gn_chash_hash(p, n);
}


/* ---- the request to a FastCGI responder -------------------------------- */

/* Does param `name` stand for request field f ("HTTP_" and f's name in
 * upper case, '_' for '-')? */
static gn_uint_t
gn_proxy_fcgi_names(const gn_str_t *name, const gn_str_t *f)
{
    size_t  k;
    u_char  c;

    if (name->len != 5 + f->len || memcmp(name->data, "HTTP_", 5) != 0) {
        return 0;
    }
    for (k = 0; k < f->len; k++) {
        c = f->data[k] == '-' ? '_' : gn_toupper(f->data[k]);
        if (name->data[5 + k] != c) {
            return 0;
        }
    }
    return 1;
}


/* Does request field i go as an HTTP_ param? Not a later one of a name
 * (joined to the first), nor one a fastcgi_param sets, nor Proxy
 * (httpoxy: it would be the application's HTTP_PROXY), nor a name with
 * '_' (it would pass for the one with '-'). */
static gn_uint_t
gn_proxy_fcgi_field(gn_http_request_t *r, gn_array_t *params, gn_uint_t i)
{
    gn_http_header_t   *hd = r->head.headers;
    gn_proxy_header_t  *ph;
    gn_uint_t           k;

    if (memchr(hd[i].name.data, '_', hd[i].name.len) != NULL
        || gn_str_caseeq(&hd[i].name, "Proxy"))
    {
        return 0;
    }
    for (k = 0; k < i; k++) {
        if (gn_str_caseeq_str(&hd[k].name, &hd[i].name)) {
            return 0;
        }
    }
    ph = params != NULL ? params->elts : NULL;
    for (k = 0; ph != NULL && k < params->nelts; k++) {
        if (gn_proxy_fcgi_names(&ph[k].name, &hd[i].name)) {
            return 0;
        }
    }
    return 1;
}


/* The values of request field i and the later ones of its name, joined
 * ("; " for Cookie, else ", "): copied at p, or measured. */
static size_t
gn_proxy_fcgi_join(gn_http_request_t *r, gn_uint_t i, u_char *p)
{
    gn_http_header_t  *hd = r->head.headers;
    gn_uint_t          k;
    size_t             len = 0;
    const char        *sep;

    sep = gn_str_caseeq(&hd[i].name, "Cookie") ? "; " : ", ";
    for (k = i; k < r->head.nheaders; k++) {
        if (k > i && !gn_str_caseeq_str(&hd[k].name, &hd[i].name)) {
            continue;
        }
        if (k > i) {
            if (p != NULL) {
                memcpy(p + len, sep, 2);
            }
            len += 2;
        }
        if (p != NULL) {
            memcpy(p + len, hd[k].value.data, hd[k].value.len);
        }
        len += hd[k].value.len;
    }
    return len;
}


/* The PARAMS stream's content: fastcgi_param's, then the request's
 * fields as HTTP_ ones; copied at p, or measured. */
static size_t
gn_proxy_fcgi_params(gn_proxy_ctx_t *ctx, u_char *p)
{
    gn_http_request_t  *r = ctx->r;
    gn_proxy_conf_t    *pc = ctx->pc;
    gn_array_t         *params = pc->fcgi_params;
    gn_proxy_header_t  *ph;
    gn_http_header_t   *hd = r->head.headers;
    gn_uint_t           i;
    size_t              len = 0, vlen, k;

    ph = params != NULL ? params->elts : NULL;
    for (i = 0; ph != NULL && i < params->nelts; i++) {
        vlen = gn_access_log_render(r, &ph[i].value, NULL);
        if (vlen == 0 && ph[i].empty) {
            continue;                     /* if_not_empty */
        }
        len += gn_fcgi_pair_len(p ? p + len : NULL, ph[i].name.len, vlen);
        if (p != NULL) {
            memcpy(p + len, ph[i].name.data, ph[i].name.len);
        }
        len += ph[i].name.len;
        len += p != NULL ? gn_access_log_render(r, &ph[i].value, p + len)
                         : vlen;
    }

    for (i = 0; pc->fcgi_pass_request_headers && i < r->head.nheaders; i++)
    {
        if (!gn_proxy_fcgi_field(r, params, i)) {
            continue;
        }
        vlen = gn_proxy_fcgi_join(r, i, NULL);
        len += gn_fcgi_pair_len(p ? p + len : NULL, 5 + hd[i].name.len,
                                vlen);
        if (p != NULL) {
            memcpy(p + len, "HTTP_", 5);
            for (k = 0; k < hd[i].name.len; k++) {
                p[len + 5 + k] = hd[i].name.data[k] == '-'
                                 ? '_' : gn_toupper(hd[i].name.data[k]);
            }
        }
        len += 5 + hd[i].name.len;
        len += p != NULL ? gn_proxy_fcgi_join(r, i, p + len) : vlen;
    }

    return len;
}


/* $fastcgi_script_name and $fastcgi_path_info: the URI, or what
 * fastcgi_split_path_info's captures took of it; fastcgi_index after a
 * script name that ends in '/'. */
static gn_int_t
gn_proxy_fcgi_script(gn_proxy_ctx_t *ctx)
{
    gn_http_request_t  *r = ctx->r;
    gn_proxy_conf_t    *pc = ctx->pc;
    gn_str_t            script = r->uri, info = gn_null_string;
    gn_regex_caps_t     caps;
    const char         *err = NULL;
    gn_int_t            rc;
    u_char             *p;

    if (pc->fcgi_split != NULL) {
        rc = gn_regex_exec(pc->fcgi_split, r->uri.data, r->uri.len, &caps,
                           &err);
        if (rc == GN_ERROR) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "fastcgi_split_path_info "
                         "\"%.*s\" failed: %s",
                         GN_STR_ARG(&pc->fcgi_split->pattern), err);
            return GN_ERROR;
        }
        if (rc == 1 && caps.ovec[2] != (size_t) -1) {
            script.data = r->uri.data + caps.ovec[2];
            script.len = caps.ovec[3] - caps.ovec[2];
            if (caps.ovec[4] != (size_t) -1) {
                info.data = r->uri.data + caps.ovec[4];
                info.len = caps.ovec[5] - caps.ovec[4];
            }
        }
    }

    if (pc->fcgi_index.len > 0 && script.len > 0
        && script.data[script.len - 1] == '/')
    {
        p = gn_pnalloc(r->pool, script.len + pc->fcgi_index.len);
        if (p == NULL) {
            return GN_ERROR;
        }
        memcpy(p, script.data, script.len);
        memcpy(p + script.len, pc->fcgi_index.data, pc->fcgi_index.len);
        script.data = p;
        script.len += pc->fcgi_index.len;
    }

    ctx->log.script_name = script;
    ctx->log.path_info = info;
    return GN_OK;
}


/* BEGIN_REQUEST, PARAMS and STDIN (the body read whole), once. */
static gn_int_t
gn_proxy_fcgi_build(gn_proxy_ctx_t *ctx)
{
    gn_http_request_t  *r = ctx->r;
    u_char             *params, *p, *q;
    size_t              plen, len;

    plen = gn_proxy_fcgi_params(ctx, NULL);
    params = gn_pnalloc(r->pool, plen);
    if (params == NULL) {
        return GN_ERROR;
    }
    (void) gn_proxy_fcgi_params(ctx, params);

    len = GN_FCGI_BEGIN_LEN
          + gn_fcgi_stream(NULL, GN_FCGI_PARAMS, params, plen, 1)
          + gn_fcgi_stream(NULL, GN_FCGI_STDIN, ctx->body, ctx->body_len,
                           !ctx->streaming);
    p = gn_pnalloc(r->pool, len);
    if (p == NULL) {
        return GN_ERROR;
    }

    q = gn_fcgi_begin(p, ctx->pc->fcgi_keep_conn);
    q += gn_fcgi_stream(q, GN_FCGI_PARAMS, params, plen, 1);
    (void) gn_fcgi_stream(q, GN_FCGI_STDIN, ctx->body, ctx->body_len,
                          !ctx->streaming);

    ctx->req = p;
    ctx->req_len = len;
    return GN_OK;
}


/* Streaming: room for n more bytes of the request to send at the end of
 * `body` (which holds all of it, so that a try that sent nothing can
 * start again), or NULL; gn_proxy_stream_put() takes them. */
static u_char *
gn_proxy_stream_room(gn_proxy_ctx_t *ctx, size_t n)
{
    if (gn_str_reserve(&ctx->body, &ctx->body_cap, ctx->body_len + n, 16384)
        != GN_OK)
    {
        return NULL;
    }
    return ctx->body + ctx->body_len;
}


static void
gn_proxy_stream_took(gn_proxy_ctx_t *ctx, size_t n)
{
    ctx->body_len += n;
    ctx->req = ctx->body;
    ctx->req_len = ctx->body_len;
}


static gn_int_t
gn_proxy_stream_put(gn_proxy_ctx_t *ctx, const u_char *p, size_t n)
{
    u_char  *to = gn_proxy_stream_room(ctx, n);

    if (to == NULL) {
        return GN_ERROR;
    }
    memcpy(to, p, n);
    gn_proxy_stream_took(ctx, n);
    return GN_OK;
}


static gn_int_t
gn_proxy_build(gn_proxy_ctx_t *ctx)
{
    size_t   len;
    u_char  *p;

    /* $content_length: what goes with the request, a chunked body's
     * length too (streamed: the client's Content-Length, if any) */
    ctx->log.body_length = ctx->streaming ? ctx->r->head.content_length
                           : ctx->r->has_body || ctx->body_len > 0
                           ? (off_t) ctx->body_len : -1;

    if (ctx->fcgi) {
        return gn_proxy_fcgi_build(ctx);
    }

    len = gn_proxy_head(ctx, NULL);
    p = gn_pnalloc(ctx->r->pool, len + ctx->body_len);
    if (p == NULL) {
        return GN_ERROR;
    }

    (void) gn_proxy_head(ctx, p);
    if (ctx->body_len > 0) {
        memcpy(p + len, ctx->body, ctx->body_len);
    }

    ctx->req = p;
    ctx->req_len = len + ctx->body_len;
    return GN_OK;
}


/* ---- attempts ----------------------------------------------------------- */

static gn_uint_t
gn_proxy_idempotent(gn_http_request_t *r)
{
    return (r->head.method & (GN_HTTP_POST | GN_HTTP_PATCH
                              | GN_HTTP_UNKNOWN)) == 0;
}


/* proxy_next_upstream (or fastcgi_'s) has `next`, and tries are left? */
static gn_uint_t
gn_proxy_may_retry(gn_proxy_ctx_t *ctx, gn_uint_t next)
{
    gn_proxy_pass_t  *up = ctx->up;

    return (up->next_upstream & next)
           && (up->next_upstream_tries == 0
               || ctx->tries < (gn_uint_t) up->next_upstream_tries);
}


static void
gn_proxy_release(gn_proxy_ctx_t *ctx, gn_uint_t failed, gn_uint_t keep)
{
    gn_upstream_conn_t  *uc = ctx->uc;

    gn_timer_del(&ctx->timer);
    if (uc == NULL) {
        return;
    }
    ctx->uc = NULL;

    gn_upstream_done(uc, failed);
    if (keep) {
        uc->requests++;
        gn_upstream_keep(uc);
    } else {
        gn_upstream_close(uc);
    }
}


/* Response buffers of GN_PROXY_BUF bytes, kept for the next requests
 * of this child (larger ones for a large proxy_buffer_size are not):
 * malloc() and free() for every request showed. 64 KiB reads: with 16
 * KiB ones a proxied 1 MiB cost 1.30 x nginx's CPU, with 64 KiB 1.09 x
 * (bench/RESULTS.md). */
#define GN_PROXY_BUF       65536
#define GN_PROXY_BUF_KEEP  64

static u_char     *gn_proxy_bufs[GN_PROXY_BUF_KEEP];
static gn_uint_t   gn_proxy_nbufs;


static u_char *
gn_proxy_buf_get(size_t size)
{
    if (size == GN_PROXY_BUF && gn_proxy_nbufs > 0) {
        return gn_proxy_bufs[--gn_proxy_nbufs];
    }
    return malloc(size);
}


static void
gn_proxy_buf_put(u_char *buf, size_t size)
{
    if (size == GN_PROXY_BUF && gn_proxy_nbufs < GN_PROXY_BUF_KEEP) {
        gn_proxy_bufs[gn_proxy_nbufs++] = buf;
        return;
    }
    free(buf);
}


static void
gn_proxy_cleanup(void *data)
{
    gn_proxy_ctx_t  *ctx = data;

    gn_proxy_release(ctx, 0, 0);
    free(ctx->body);
    ctx->body = NULL;
    if (ctx->buf != NULL) {
        gn_proxy_buf_put(ctx->buf, ctx->buf_cap);
        ctx->buf = NULL;
    }
}


/*
 * An attempt failed before the response head was taken: `next` is the
 * proxy_next_upstream condition it meets, status what the client gets
 * if no other server is tried (502, 504). The upstream's connection is
 * closed.
 */
static void
gn_proxy_fail(gn_proxy_ctx_t *ctx, gn_uint_t next, gn_uint_t status,
    gn_uint_t server_failed)
{
    gn_uint_t  stale;

    stale = ctx->uc != NULL && ctx->uc->reused && ctx->buf_len == 0
            && next == GN_PROXY_NEXT_ERROR && !ctx->retried_stale
            && gn_proxy_idempotent(ctx->r);

    gn_proxy_log_attempt(ctx, status,
                         next == GN_PROXY_NEXT_TIMEOUT
                         ? GN_UPSTREAM_FAIL_TIMEOUT
                         : next == GN_PROXY_NEXT_INVALID
                         ? GN_UPSTREAM_FAIL_INVALID
                         : next == GN_PROXY_NEXT_ERROR && !ctx->connected
                         ? GN_UPSTREAM_FAIL_CONNECT : 0);
    gn_proxy_release(ctx, server_failed && !stale, 0);
    ctx->last_status = status;
    ctx->buf_len = ctx->scanned = 0;

    if (stale) {
        /* the upstream closed its pooled connection as we reused it */
        ctx->retried_stale = 1;
        ctx->tried[ctx->server] = 0;
        ctx->tries--;
        gn_proxy_connect(ctx);
        return;
    }

    if (gn_proxy_may_retry(ctx, next)
        && (!ctx->sent_any
            || (gn_proxy_idempotent(ctx->r) && !ctx->streaming)))
    {
        gn_proxy_connect(ctx);
        return;
    }

    (void) gn_http_module_finish(ctx->r, (int) status);
}


/* The response began and cannot be completed: the client's is cut. */
static void
gn_proxy_cut(gn_proxy_ctx_t *ctx, const char *why)
{
    gn_log_error(GN_LOG_ERR, &ctx->r->c->log, 0, "%s while reading the "
                 "response from upstream %.*s", why,
                 GN_STR_ARG(gn_proxy_server_name(ctx)));
    gn_proxy_log_attempt(ctx, ctx->status, GN_UPSTREAM_FAIL_CUT);
    gn_proxy_release(ctx, 0, 0);
    ctx->r->cut = 1;
    (void) gn_http_module_finish(ctx->r, 502);
}


static void
gn_proxy_log_upstream(gn_proxy_ctx_t *ctx, gn_uint_t level, int err,
    const char *what)
{
    gn_log_error(level, &ctx->r->c->log, err, "%s, upstream: %.*s", what,
                 GN_STR_ARG(gn_proxy_server_name(ctx)));
}


static void
gn_proxy_send(gn_proxy_ctx_t *ctx)
{
    ssize_t  n;

    while (ctx->sent < ctx->req_len) {
        n = gn_upstream_send(ctx->uc, ctx->req + ctx->sent,
                             ctx->req_len - ctx->sent);
        if (n > 0) {
            ctx->sent += (size_t) n;
            ctx->sent_any = 1;
            continue;
        }
        if (n == GN_AGAIN) {
            gn_timer_set(&ctx->timer, ctx->up->send_timeout);
            return;
        }
        if (!ctx->uc->reused || ctx->retried_stale) {
            gn_proxy_log_upstream(ctx, GN_LOG_ERR, errno, "send() failed "
                                  "while sending the request");
        }
        gn_proxy_fail(ctx, GN_PROXY_NEXT_ERROR, 502, 1);
        return;
    }

    if (ctx->streaming && !ctx->body_complete) {
        /* all that came went: the client's body timeout runs now */
        gn_timer_del(&ctx->timer);
        return;
    }

    /* the answer cannot be there yet: its EPOLLIN will say */
    ctx->state = GN_PROXY_HEAD;
    gn_timer_set(&ctx->timer, ctx->up->read_timeout);
}


/* TLS to the upstream, within proxy_connect_timeout (still running). */
static void
gn_proxy_handshake(gn_proxy_ctx_t *ctx)
{
    const char  *err = NULL;
    gn_int_t     rc;

    rc = gn_tls_client_handshake(ctx->tls, ctx->uc->tls, &err);
    if (rc == GN_AGAIN) {
        return;
    }
    if (rc != GN_OK) {
        gn_proxy_log_upstream(ctx, GN_LOG_ERR, 0, err);
        gn_proxy_fail(ctx, GN_PROXY_NEXT_ERROR, 502, 1);
        return;
    }

    ctx->state = GN_PROXY_SENDING;
    gn_proxy_send(ctx);
}


static void
gn_proxy_event(gn_upstream_conn_t *uc, uint32_t events)
{
    gn_proxy_ctx_t     *ctx = uc->data;
    gn_http_request_t  *r = ctx->r;
    gn_uint_t           tunnel;
    int                 err;

    gn_http_module_enter(r);

    switch (ctx->state) {

    case GN_PROXY_CONNECTING:
        if (!(events & (GN_EV_OUT | GN_EV_ERR))) {
            break;
        }
        err = gn_upstream_connect_error(uc);
        if (err != 0) {
            gn_proxy_log_upstream(ctx, GN_LOG_ERR, err, "connect() failed "
                                  "while connecting to upstream");
            gn_proxy_fail(ctx, GN_PROXY_NEXT_ERROR, 502, 1);
            break;
        }
        uc->connected = 1;
        ctx->connected = gn_current_msec;
        if (ctx->tls != NULL) {
            uc->tls = gn_tls_client_new(ctx->tls, uc->io.fd);
            if (uc->tls == NULL) {
                gn_proxy_fail(ctx, 0, 500, 0);
                break;
            }
            ctx->state = GN_PROXY_HANDSHAKE;
            gn_proxy_handshake(ctx);
            break;
        }
        ctx->state = GN_PROXY_SENDING;
        gn_proxy_send(ctx);
        break;

    case GN_PROXY_HANDSHAKE:
        gn_proxy_handshake(ctx);
        break;

    case GN_PROXY_SENDING:
        if (ctx->streaming && !ctx->body_complete
            && (events & (GN_EV_IN | GN_EV_ERR)))
        {
            /* it answers (or closes) before the whole body went: the
             * rest of the body goes nowhere */
            ctx->early = 1;
            ctx->state = GN_PROXY_HEAD;
            gn_timer_set(&ctx->timer, ctx->up->read_timeout);
            gn_proxy_read(ctx);
            break;
        }
        gn_proxy_send(ctx);
        break;

    default:
        gn_proxy_read(ctx);
        break;
    }

    /* read before leave(), which may end the request and ctx with it;
     * a request whose 101 came is neither finished nor ended there */
    tunnel = ctx->state == GN_PROXY_TUNNEL;

    gn_http_module_leave(r);             /* may end the request */

    if (tunnel) {
        gn_proxy_tunnel_start(ctx);
    }
}


static void
gn_proxy_timeout(gn_timer_t *t)
{
    gn_proxy_ctx_t     *ctx = t->data;
    gn_http_request_t  *r = ctx->r;

    gn_http_module_enter(r);

    if (ctx->state == GN_PROXY_BODY) {
        gn_proxy_cut(ctx, "upstream timed out");

    } else {
        gn_proxy_log_upstream(ctx, GN_LOG_ERR, ETIMEDOUT,
                              ctx->state == GN_PROXY_CONNECTING
                              ? "upstream timed out while connecting"
                              : ctx->state == GN_PROXY_HANDSHAKE
                              ? "upstream timed out in the TLS handshake"
                              : ctx->state == GN_PROXY_SENDING
                              ? "upstream timed out while sending the request"
                              : "upstream timed out while reading the "
                                "response head");
        gn_proxy_fail(ctx, GN_PROXY_NEXT_TIMEOUT, 504, 1);
    }

    gn_http_module_leave(r);
}


static void
gn_proxy_connect(gn_proxy_ctx_t *ctx)
{
    gn_upstream_conn_t  *uc;
    const char          *err;
    gn_uint_t            picked;

    ctx->tries++;
    ctx->started = gn_current_msec;
    ctx->connected = 0;
    ctx->status = 0;
    ctx->sent = 0;
    memset(&ctx->dec, 0, sizeof(gn_fcgi_dec_t));
    ctx->extra = 0;
    ctx->early = 0;

    uc = gn_upstream_get(ctx->up->group, ctx->tried, ctx->hash,
                         ctx->retried_stale,
                         ctx->fcgi ? (void *) &gn_proxy_fcgi_key : ctx->tls,
                         gn_proxy_event, ctx, &picked, &err);
    if (uc == NULL) {
        if (picked == (gn_uint_t) -1) {
            /* after failed tries (each logged): what the last one failed
             * with (504); before any, none of the servers is up */
            if (ctx->last_status == 0) {
                gn_log_error(GN_LOG_ERR, &ctx->r->c->log, 0, "no live "
                             "upstreams in \"%.*s\"",
                             GN_STR_ARG(&ctx->up->group->name));
            }
            (void) gn_http_module_finish(ctx->r, ctx->last_status
                                                 ? (int) ctx->last_status
                                                 : 502);
            return;
        }
        ctx->server = picked;
        gn_proxy_log_upstream(ctx, GN_LOG_ERR, errno, err);
        gn_proxy_fail(ctx, GN_PROXY_NEXT_ERROR, 502, 0);
        return;
    }

    ctx->uc = uc;
    ctx->server = uc->server;

    if (uc->reused) {
        ctx->connected = gn_current_msec;
        ctx->state = GN_PROXY_SENDING;
        gn_proxy_send(ctx);
        return;
    }

    ctx->state = GN_PROXY_CONNECTING;
    gn_timer_set(&ctx->timer, ctx->up->connect_timeout);
}


/* ---- the response ------------------------------------------------------- */

/* proxy_redirect FROM TO: the first pair whose FROM begins the
 * Location (without case) puts TO, its variables rendered, in its
 * place. GN_OK, GN_DECLINED (none did), GN_ERROR. */
static gn_int_t
gn_proxy_redirect_pairs(gn_http_request_t *r, gn_array_t *pairs,
    const gn_str_t *v)
{
    gn_proxy_header_t  *ph;
    gn_uint_t           i;
    size_t              n;
    u_char             *p;

    ph = pairs != NULL ? pairs->elts : NULL;
    for (i = 0; ph != NULL && i < pairs->nelts; i++) {
        if (v->len < ph[i].name.len
            || gn_strncasecmp(v->data, ph[i].name.data, ph[i].name.len) != 0)
        {
            continue;
        }
        n = gn_access_log_render(r, &ph[i].value, NULL);
        p = gn_pnalloc(r->pool, n + v->len - ph[i].name.len);
        if (p == NULL) {
            return GN_ERROR;
        }
        r->location.data = p;
        p += gn_access_log_render(r, &ph[i].value, p);
        memcpy(p, v->data + ph[i].name.len, v->len - ph[i].name.len);
        r->location.len = n + v->len - ph[i].name.len;
        return GN_OK;
    }

    return GN_DECLINED;
}


/* proxy_redirect: the pairs first, then `default`, which makes a
 * Location into the proxied URL one into the location. */
static gn_int_t
gn_proxy_redirect(gn_proxy_ctx_t *ctx, const gn_str_t *v)
{
    gn_http_request_t  *r = ctx->r;
    gn_proxy_conf_t    *pc = ctx->pc;
    gn_str_t            from, to;
    gn_int_t            rc;
    u_char             *p;
    size_t              n;

    if (!ctx->fcgi) {
        rc = gn_proxy_redirect_pairs(r, pc->redirects, v);
        if (rc != GN_DECLINED) {
            return rc;
        }
    }

    if (!pc->redirect || ctx->fcgi) {
        return gn_pstrdup(r->pool, v, &r->location) ? GN_OK : GN_ERROR;
    }

    to = pc->has_uri ? r->loc->name : (gn_str_t) gn_string("/");
    n = (pc->tls ? 8 : 7) + pc->host.len + (pc->has_uri ? pc->uri.len : 1);
    from.data = gn_pnalloc(r->pool, n);
    if (from.data == NULL) {
        return GN_ERROR;
    }
    p = pc->tls ? gn_cpymem(from.data, "https://", 8)
                : gn_cpymem(from.data, "http://", 7);
    p = gn_cpymem(p, pc->host.data, pc->host.len);
    p = pc->has_uri ? gn_cpymem(p, pc->uri.data, pc->uri.len)
                    : gn_cpymem(p, "/", 1);
    from.len = n;

    if (v->len < from.len
        || gn_strncasecmp(v->data, from.data, from.len) != 0)
    {
        return gn_pstrdup(r->pool, v, &r->location) ? GN_OK : GN_ERROR;
    }

    r->location.data = gn_pnalloc(r->pool, to.len + v->len - from.len);
    if (r->location.data == NULL) {
        return GN_ERROR;
    }
    p = gn_cpymem(r->location.data, to.data, to.len);
    memcpy(p, v->data + from.len, v->len - from.len);
    r->location.len = to.len + v->len - from.len;
    return GN_OK;
}


/* The upstream's fields into the client's response, less the hop-by-hop
 * ones and those the server sets itself. */
static gn_int_t
gn_proxy_fields(gn_proxy_ctx_t *ctx, gn_http_head_t *h)
{
    gn_http_request_t  *r = ctx->r;
    gn_http_header_t   *hd, *out;
    gn_uint_t           i, listing;
    u_char             *lo, *hi, *copy;

    r->resp_headers = gn_array_create(r->pool, h->nheaders + 1,
                                      sizeof(gn_http_header_t));
    if (r->resp_headers == NULL) {
        return GN_ERROR;
    }

    /* the fields outlive the buffer they were read into: one copy of
     * the bytes they span, which they are moved onto */
    lo = NULL;
    hi = NULL;
    for (i = 0; i < h->nheaders; i++) {
        hd = &h->headers[i];
        if (lo == NULL || hd->name.data < lo) {
            lo = hd->name.data;
        }
        if (hi == NULL || hd->value.data + hd->value.len > hi) {
            hi = hd->value.data + hd->value.len;
        }
    }
    if (lo != NULL) {
        copy = gn_pnalloc(r->pool, (size_t) (hi - lo));
        if (copy == NULL) {
            return GN_ERROR;
        }
        memcpy(copy, lo, (size_t) (hi - lo));
        for (i = 0; i < h->nheaders; i++) {
            hd = &h->headers[i];
            hd->name.data = copy + (hd->name.data - lo);
            hd->value.data = copy + (hd->value.data - lo);
        }
    }

    listing = gn_proxy_conn_listed(h, NULL);
    for (i = 0; i < h->nheaders; i++) {
        hd = &h->headers[i];
        if (gn_proxy_hop_by_hop(&hd->name)
            || (listing && gn_proxy_conn_listed(h, &hd->name))
            || gn_str_caseeq(&hd->name, "Content-Length")
            || gn_str_caseeq(&hd->name, "Date")
            || gn_str_caseeq(&hd->name, "Server")
            || (ctx->fcgi && gn_str_caseeq(&hd->name, "Status")))
        {
            continue;
        }
        if (gn_str_caseeq(&hd->name, "Content-Type")) {
            r->content_type = hd->value;
            continue;
        }
        if (gn_str_caseeq(&hd->name, "Location")) {
            if (gn_proxy_redirect(ctx, &hd->value) != GN_OK) {
                return GN_ERROR;
            }
            continue;
        }
        out = gn_array_push(r->resp_headers);
        if (out == NULL) {
            return GN_ERROR;
        }
        *out = *hd;
    }

    return GN_OK;
}


/* A next_upstream status, and this request may go elsewhere? */
static gn_uint_t
gn_proxy_next_status(gn_proxy_ctx_t *ctx, gn_uint_t status)
{
    gn_uint_t  next;

    next = status == 502 ? GN_PROXY_NEXT_502 : status == 503
           ? GN_PROXY_NEXT_503 : status == 504 ? GN_PROXY_NEXT_504 : 0;

    return next != 0 && gn_proxy_may_retry(ctx, next)
           && gn_proxy_idempotent(ctx->r);
}


static gn_int_t gn_proxy_body(gn_proxy_ctx_t *ctx, u_char *p, size_t n);
static gn_int_t gn_proxy_read_direct(gn_proxy_ctx_t *ctx);
static void gn_proxy_eof(gn_proxy_ctx_t *ctx, int err);


/* The upstream's response head h, HTTP's or FastCGI's, is taken: to the
 * next server if it says to, else the client's response starts and the
 * body is next. GN_OK, or GN_ERROR: the attempt ended (failed, or the
 * response was cut). */
static gn_int_t
gn_proxy_begin(gn_proxy_ctx_t *ctx, gn_http_head_t *h)
{
    gn_http_request_t  *r = ctx->r;
    gn_uint_t           bodiless;

    ctx->status = h->status;

    if (gn_proxy_next_status(ctx, h->status)) {
        gn_proxy_fail(ctx, h->status == 502 ? GN_PROXY_NEXT_502 : h->status
                      == 503 ? GN_PROXY_NEXT_503 : GN_PROXY_NEXT_504,
                      h->status, 1);
        return GN_ERROR;
    }

    if (gn_proxy_fields(ctx, h) != GN_OK) {
        gn_proxy_fail(ctx, 0, 500, 0);      /* memory: nothing sent yet */
        return GN_ERROR;
    }

    /* FastCGI's end is its END_REQUEST record: "close" framing there */
    bodiless = r->head.method == GN_HTTP_HEAD || h->status == 204
               || h->status == 304;
    ctx->keep = h->keepalive;
    ctx->framing = bodiless ? GN_PROXY_BODY_NONE
                   : h->chunked ? GN_PROXY_BODY_CHUNKED
                   : h->content_length >= 0 ? GN_PROXY_BODY_LENGTH
                   : GN_PROXY_BODY_CLOSE;
    ctx->left = h->content_length;
    if (ctx->framing == GN_PROXY_BODY_CLOSE) {
        ctx->keep = 0;
    }

    r->status = h->status;
    r->content_length = h->content_length;
    r->stream_length = ctx->framing != GN_PROXY_BODY_CHUNKED
                       && ctx->framing != GN_PROXY_BODY_CLOSE;
    if (ctx->framing == GN_PROXY_BODY_NONE && r->head.method != GN_HTTP_HEAD)
    {
        r->content_length = -1;
    }

    if (gn_http_module_flush(r) != GN_OK) {
        gn_proxy_cut(ctx, "out of memory");
        return GN_ERROR;
    }

    /* proxy_buffering off: one buffer_size read at a time, sent before
     * the next; on: 64 KiB reads, up to proxy_buffers waiting */
    ctx->state = GN_PROXY_BODY;
    ctx->buf_size = ctx->up->buffering ? ctx->buf_cap : ctx->up->buffer_size;
    r->stream_high = ctx->up->buffering ? ctx->up->buffers
                                        : ctx->up->buffer_size;
    return GN_OK;
}


/* The head is in buf[0..len): the client's response starts. */
static void
gn_proxy_response(gn_proxy_ctx_t *ctx, size_t len)
{
    gn_http_request_t  *r = ctx->r;
    gn_http_head_t      h;
    size_t              rest;
    gn_http_header_t    hdrs[GN_PROXY_MAX_HEADERS];  /* copied below */

    if (gn_http_parse_response(&h, ctx->buf, len, hdrs, GN_PROXY_MAX_HEADERS)
        != GN_OK)
    {
        gn_log_error(GN_LOG_ERR, &r->c->log, 0, "upstream sent an invalid "
                     "response head (%s), upstream: %.*s", h.err,
                     GN_STR_ARG(gn_proxy_server_name(ctx)));
        gn_proxy_fail(ctx, GN_PROXY_NEXT_INVALID, 502, 1);
        return;
    }

    ctx->status = h.status;

    if (h.status >= 100 && h.status < 200) {
        if (h.status == 101) {
            if (!ctx->upgrade) {
                gn_proxy_log_upstream(ctx, GN_LOG_ERR, 0, "upstream switched "
                                      "protocols unasked");
                gn_proxy_fail(ctx, GN_PROXY_NEXT_INVALID, 502, 1);
                return;
            }
            /* the relay starts once the event's module call is over */
            ctx->state = GN_PROXY_TUNNEL;
            ctx->head_len = len;
            gn_timer_del(&ctx->timer);
            return;
        }
        /* an interim response: dropped, the final one follows */
        memmove(ctx->buf, ctx->buf + len, ctx->buf_len - len);
        ctx->buf_len -= len;
        ctx->scanned = 0;
        gn_proxy_read(ctx);
        return;
    }

    if (gn_proxy_begin(ctx, &h) != GN_OK) {
        return;
    }

    rest = ctx->buf_len - len;
    ctx->buf_len = 0;
    if (gn_proxy_body(ctx, ctx->buf + len, rest) == GN_OK) {
        gn_proxy_read(ctx);
    }
}


/* The response was relayed whole. */
static void
gn_proxy_done(gn_proxy_ctx_t *ctx, gn_uint_t extra)
{
    if (extra) {
        gn_proxy_log_upstream(ctx, GN_LOG_WARN, 0, "upstream sent more data "
                              "than its response framed: connection not "
                              "kept");
    }

    gn_proxy_log_attempt(ctx, ctx->status, 0);
    if (ctx->uc != NULL && ctx->uc->tls != NULL) {
        gn_tls_client_save(ctx->tls, ctx->uc->tls);
    }
    gn_proxy_release(ctx, 0, ctx->keep && !extra && !ctx->early);
    (void) gn_http_module_finish(ctx->r, GN_OK);
}


static void
gn_proxy_drained(const gn_api_t *api, gn_request_t *rq, void *arg)
{
    gn_proxy_ctx_t  *ctx = arg;

    (void) api;
    (void) rq;

    ctx->paused = 0;
    gn_timer_set(&ctx->timer, ctx->up->read_timeout);
    gn_proxy_read(ctx);
}


/* Bytes for the client were queued with the result rc of the write:
 * GN_OK, or GN_ERROR: cut. */
static gn_int_t
gn_proxy_queued(gn_proxy_ctx_t *ctx, gn_int_t rc)
{
    if (rc == GN_ERROR) {
        gn_proxy_cut(ctx, "the response could not be queued");
        return GN_ERROR;
    }

    if (rc == GN_AGAIN && !ctx->paused) {
        /* the client has proxy_buffers waiting: no more reads until it
         * took half of them (or 64 KiB waits) */
        gn_log_error(GN_LOG_DEBUG, &ctx->r->c->log, 0, "upstream reads "
                     "paused: %zu bytes wait for the client",
                     ctx->r->sbuf_last - ctx->r->sbuf_pos);
        ctx->paused = 1;
        gn_timer_del(&ctx->timer);
        (void) gn_http_module_on_drained(ctx->r,
                                         (void (*)(void)) gn_proxy_drained,
                                         ctx);
    }

    return GN_OK;
}


/* Passes n bytes on to the client. GN_OK, or GN_ERROR: cut. */
static gn_int_t
gn_proxy_write(gn_proxy_ctx_t *ctx, const u_char *p, size_t n)
{
    return gn_proxy_queued(ctx, gn_http_module_write(ctx->r, p, n));
}


/* n body bytes from the upstream: GN_OK (more to read), GN_DONE (the
 * response is complete), GN_ERROR (cut). */
static gn_int_t
gn_proxy_body(gn_proxy_ctx_t *ctx, u_char *p, size_t n)
{
    u_char   *end = p + n, *data;
    size_t    size;
    gn_int_t  rc;

    switch (ctx->framing) {

    case GN_PROXY_BODY_NONE:
        gn_proxy_done(ctx, n > 0);
        return GN_DONE;

    case GN_PROXY_BODY_LENGTH:
        size = (size_t) gn_min((off_t) n, ctx->left);
        if (size > 0 && gn_proxy_write(ctx, p, size) != GN_OK) {
            return GN_ERROR;
        }
        ctx->left -= (off_t) size;
        if (ctx->left == 0) {
            gn_proxy_done(ctx, n > size);
            return GN_DONE;
        }
        return GN_OK;

    case GN_PROXY_BODY_CHUNKED:
        while (p < end) {
            rc = gn_http_chunked_parse(&ctx->chunked, &p, end, &data, &size,
                                       0);
            if (rc == GN_AGAIN) {
                break;
            }
            if (rc == GN_DONE) {
                gn_proxy_done(ctx, p < end);
                return GN_DONE;
            }
            if (rc != GN_OK) {
                gn_proxy_cut(ctx, "upstream sent an invalid chunked body");
                return GN_ERROR;
            }
            if (size > 0 && gn_proxy_write(ctx, data, size) != GN_OK) {
                return GN_ERROR;
            }
        }
        return GN_OK;

    default:
        if (n > 0 && gn_proxy_write(ctx, p, n) != GN_OK) {
            return GN_ERROR;
        }
        return GN_OK;
    }
}


/*
 * A body framed by its length or the close, for a client whose stream
 * takes the bytes as they are: read straight into the client's queue,
 * not copied there from ctx->buf. GN_OK (read on), GN_DECLINED (no
 * such room: read into ctx->buf), else stop reading (GN_AGAIN: nothing
 * came; GN_DONE, GN_ERROR: as gn_proxy_body).
 */
static gn_int_t
gn_proxy_read_direct(gn_proxy_ctx_t *ctx)
{
    u_char   *room;
    size_t    take;
    ssize_t   n;

    room = gn_http_module_room(ctx->r, ctx->buf_size, NULL);
    if (room == NULL) {
        return GN_DECLINED;
    }

    /* as many as a read into ctx->buf, so that bytes past the length
     * are seen as they are there */
    n = gn_upstream_recv(ctx->uc, room, ctx->buf_size);
    if (n == GN_AGAIN) {
        return GN_AGAIN;
    }
    if (n <= 0) {
        gn_proxy_eof(ctx, n == 0 ? 0 : errno ? errno : EPROTO);
        return GN_ERROR;
    }

    take = (size_t) n;
    if (ctx->framing == GN_PROXY_BODY_LENGTH) {
        take = (size_t) gn_min((off_t) n, ctx->left);
        ctx->left -= (off_t) take;
    }

    if (gn_proxy_queued(ctx, gn_http_module_commit(ctx->r, take)) != GN_OK) {
        return GN_ERROR;
    }

    if (ctx->framing == GN_PROXY_BODY_LENGTH && ctx->left == 0) {
        gn_proxy_done(ctx, (size_t) n > take);
        return GN_DONE;
    }

    return GN_OK;
}


/* The end of the head, looked for from where the last look stopped. */
static u_char *
gn_proxy_head_end(gn_proxy_ctx_t *ctx)
{
    size_t  end;

    end = gn_http_head_crlf_end(ctx->buf, ctx->buf_len, ctx->scanned);
    ctx->scanned = ctx->buf_len;
    return end ? ctx->buf + end - 4 : NULL;
}


/* ---- the response of a FastCGI responder -------------------------------
 *
 * Its records are decoded as they are read (fastcgi.h): the STDOUT they
 * carry takes the place of the bytes read, a CGI head (http_parse.h),
 * then the body, up to the END_REQUEST record (or by a Content-Length
 * the application gave, which is passed on as such: a shorter body is
 * cut, bytes past it dropped). STDERR goes to the error log.
 */

static void
gn_proxy_fcgi_stderr(void *data, const u_char *p, size_t len)
{
    gn_proxy_ctx_t  *ctx = data;

    while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r')) {
        len--;
    }
    if (len > 0) {
        gn_log_error(GN_LOG_ERR, &ctx->r->c->log, 0, "FastCGI sent in "
                     "stderr: \"%.*s\", upstream: %.*s",
                     (int) gn_min(len, 2048), p,
                     GN_STR_ARG(gn_proxy_server_name(ctx)));
    }
}


/* n bytes of STDOUT body: to the client as its framing says. */
static gn_int_t
gn_proxy_fcgi_body(gn_proxy_ctx_t *ctx, u_char *p, size_t n)
{
    size_t  size = n;

    if (ctx->framing == GN_PROXY_BODY_NONE) {
        return GN_OK;                     /* HEAD, 204, 304: dropped */
    }
    if (ctx->framing == GN_PROXY_BODY_LENGTH) {
        size = (size_t) gn_min((off_t) n, ctx->left);
        ctx->extra |= size < n;
        ctx->left -= (off_t) size;
    }
    return size > 0 ? gn_proxy_write(ctx, p, size) : GN_OK;
}


/* The CGI head is in buf[0..len). */
static gn_int_t
gn_proxy_fcgi_response(gn_proxy_ctx_t *ctx, size_t len)
{
    gn_http_head_t      h;
    size_t              rest;
    gn_http_header_t    hdrs[GN_PROXY_MAX_HEADERS];  /* copied */

    if (gn_http_parse_cgi(&h, ctx->buf, len, hdrs, GN_PROXY_MAX_HEADERS)
        != GN_OK)
    {
        gn_log_error(GN_LOG_ERR, &ctx->r->c->log, 0, "FastCGI responder "
                     "sent an invalid response head (%s), upstream: %.*s",
                     h.err, GN_STR_ARG(gn_proxy_server_name(ctx)));
        gn_proxy_fail(ctx, GN_PROXY_NEXT_INVALID, 502, 1);
        return GN_ERROR;
    }

    gn_timer_set(&ctx->timer, ctx->up->read_timeout);
    if (gn_proxy_begin(ctx, &h) != GN_OK) {
        return GN_ERROR;
    }

    rest = ctx->buf_len - len;
    ctx->buf_len = 0;
    return gn_proxy_fcgi_body(ctx, ctx->buf + len, rest);
}


/* The END_REQUEST record came, `rest` bytes after it. */
static void
gn_proxy_fcgi_end(gn_proxy_ctx_t *ctx, size_t rest)
{
    if (ctx->state != GN_PROXY_BODY) {
        gn_proxy_log_upstream(ctx, GN_LOG_ERR, 0,
                              ctx->dec.protocol_status
                              != GN_FCGI_REQUEST_COMPLETE
                              ? "FastCGI responder refused the request"
                              : "FastCGI responder ended the request "
                                "without a complete response head");
        gn_proxy_fail(ctx, GN_PROXY_NEXT_ERROR, 502, 1);
        return;
    }

    if (ctx->framing == GN_PROXY_BODY_LENGTH && ctx->left > 0) {
        gn_proxy_cut(ctx, "FastCGI response shorter than its "
                          "Content-Length");
        return;
    }

    if (ctx->extra) {
        gn_proxy_log_upstream(ctx, GN_LOG_WARN, 0, "FastCGI responder sent "
                              "more than its Content-Length: the rest was "
                              "dropped");
    }
    ctx->keep = ctx->pc->fcgi_keep_conn;
    gn_proxy_done(ctx, rest > 0);
}


/* n bytes were read at buf + buf_len: GN_OK to read on, else the
 * attempt ended (or went on elsewhere). */
static gn_int_t
gn_proxy_fcgi_input(gn_proxy_ctx_t *ctx, size_t n)
{
    u_char      *p = ctx->buf + ctx->buf_len;
    size_t       out, rest, len;
    const char  *why = NULL;
    gn_int_t     rc;

    rc = gn_fcgi_decode(&ctx->dec, p, n, &out, &rest, gn_proxy_fcgi_stderr,
                        ctx, &why);
    if (rc == GN_ERROR) {
        if (ctx->state == GN_PROXY_BODY) {
            gn_proxy_cut(ctx, why);
        } else {
            gn_proxy_log_upstream(ctx, GN_LOG_ERR, 0, why);
            gn_proxy_fail(ctx, GN_PROXY_NEXT_INVALID, 502, 1);
        }
        return GN_ERROR;
    }

    if (ctx->state == GN_PROXY_BODY) {
        if (gn_proxy_fcgi_body(ctx, p, out) != GN_OK) {
            return GN_ERROR;
        }

    } else {
        ctx->buf_len += out;
        len = gn_http_cgi_head_end(ctx->buf, ctx->buf_len, ctx->scanned);
        ctx->scanned = ctx->buf_len;
        if (len > 0 && gn_proxy_fcgi_response(ctx, len) != GN_OK) {
            return GN_ERROR;
        }
    }

    if (rc == GN_DONE) {
        gn_proxy_fcgi_end(ctx, rest);
        return GN_DONE;
    }
    return GN_OK;
}


/* The upstream closed its side (or failed) after ctx->buf_len bytes. */
static void
gn_proxy_eof(gn_proxy_ctx_t *ctx, int err)
{
    if (ctx->state == GN_PROXY_HEAD) {
        if (!(ctx->uc->reused && ctx->buf_len == 0) || ctx->retried_stale) {
            gn_proxy_log_upstream(ctx, GN_LOG_ERR, err, ctx->buf_len == 0
                                  ? "upstream closed the connection without "
                                    "a response"
                                  : "upstream closed the connection in the "
                                    "middle of the response head");
        }
        gn_proxy_fail(ctx, GN_PROXY_NEXT_ERROR, 502, 1);
        return;
    }

    if (ctx->framing == GN_PROXY_BODY_CLOSE && err == 0 && !ctx->fcgi) {
        ctx->keep = 0;
        gn_proxy_done(ctx, 0);
        return;
    }

    gn_proxy_cut(ctx, err != 0 ? "recv() failed"
                               : "upstream closed the connection early");
}


static void
gn_proxy_read(gn_proxy_ctx_t *ctx)
{
    u_char    *end;
    ssize_t    n;
    gn_int_t   rc;

    while (ctx->uc != NULL && !ctx->paused
           && ctx->state != GN_PROXY_TUNNEL)
    {
        if (ctx->state == GN_PROXY_HEAD && ctx->buf_len == ctx->buf_size) {
            gn_proxy_log_upstream(ctx, GN_LOG_ERR, 0, ctx->fcgi
                                  ? "FastCGI responder sent a response "
                                    "head larger than fastcgi_buffer_size"
                                  : "upstream sent a response head larger "
                                    "than proxy_buffer_size");
            gn_proxy_fail(ctx, GN_PROXY_NEXT_INVALID, 502, 1);
            return;
        }

        if (ctx->state == GN_PROXY_BODY && !ctx->fcgi
            && (ctx->framing == GN_PROXY_BODY_LENGTH
                || ctx->framing == GN_PROXY_BODY_CLOSE))
        {
            rc = gn_proxy_read_direct(ctx);
            if (rc == GN_OK) {
                continue;
            }
            if (rc != GN_DECLINED) {
                return;
            }
        }

        n = gn_upstream_recv(ctx->uc, ctx->buf + ctx->buf_len,
                             ctx->buf_size - ctx->buf_len);
        if (n == GN_AGAIN) {
            return;                        /* the read timer runs */
        }
        if (n <= 0) {
            gn_proxy_eof(ctx, n == 0 ? 0 : errno ? errno : EPROTO);
            return;
        }

        if (ctx->fcgi) {
            if (gn_proxy_fcgi_input(ctx, (size_t) n) != GN_OK) {
                return;
            }
            continue;
        }

        if (ctx->state == GN_PROXY_BODY) {
            if (gn_proxy_body(ctx, ctx->buf, (size_t) n) != GN_OK) {
                return;
            }
            continue;
        }

        ctx->buf_len += (size_t) n;
        end = gn_proxy_head_end(ctx);
        if (end != NULL) {
            gn_timer_set(&ctx->timer, ctx->up->read_timeout);
            gn_proxy_response(ctx, (size_t) (end + 4 - ctx->buf));
            return;
        }
    }
}


/* ---- Upgrade: a tunnel (WebSocket) ---------------------------------------
 *
 * An HTTP/1.1 request with "Upgrade: X" named by its Connection goes to
 * the upstream with them; a 101 from it is sent to the client and the
 * client's connection leaves HTTP (the stream's tunnel): from then on
 * bytes are relayed both ways as they come, one buffer each way, each
 * side read only while the other has taken what came, until either side
 * closes or nothing moves for proxy_read_timeout.
 */

#define GN_PROXY_TUNNEL_BUF  16384
#define GN_PROXY_101                                                         \
    "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\n"

typedef struct {
    gn_conn_t           *c;
    gn_upstream_conn_t  *uc;
    gn_timer_t           timer;          /* idle: proxy_read_timeout */
    gn_msec_t            timeout;
    u_char              *down;           /* client to upstream */
    size_t               down_pos, down_len, down_size;
    u_char              *up;             /* upstream to client */
    size_t               up_pos, up_len, up_size;
    unsigned             u_read:1;       /* the upstream may have bytes */
    unsigned             u_write:1;      /* ... may take bytes */
} gn_proxy_tunnel_t;


static void
gn_proxy_want_upgrade(gn_proxy_ctx_t *ctx)
{
    static const gn_str_t  up = gn_string("upgrade");
    gn_http_request_t     *r = ctx->r;
    gn_http_header_t      *h;

    if (r->head.version != GN_HTTP_VERSION_11 || r->stream->tunnel == NULL
        || r->has_body || !gn_proxy_conn_listed(&r->head, &up))
    {
        return;
    }

    h = gn_http_header_find(&r->head, "Upgrade", 7);
    if (h != NULL && h->value.len > 0) {
        ctx->upgrade = 1;
        ctx->upgrade_to = h->value;
    }
}


static void
gn_proxy_tunnel_closed(gn_conn_t *c)
{
    gn_proxy_tunnel_t  *t = c->data;

    gn_timer_del(&t->timer);
    if (t->uc != NULL) {
        gn_upstream_done(t->uc, 0);
        gn_upstream_close(t->uc);
    }
    c->data = NULL;
    free(t->down);
    free(t->up);
    free(t);
}


/* Moves what can move; closes both sides when one is done. */
static void
gn_proxy_tunnel_pump(gn_proxy_tunnel_t *t)
{
    gn_conn_t     *c = t->c;
    struct iovec   iov;
    ssize_t        n;
    gn_uint_t      moved;

    do {
        moved = 0;

        if (t->down_pos == t->down_len && c->read_ready) {
            t->down_pos = t->down_len = 0;
            n = c->ops->recv(c, t->down, t->down_size);
            if (n == GN_AGAIN) {
                c->read_ready = 0;
            } else if (n <= 0) {
                goto done;                  /* the client closed, failed */
            } else {
                t->down_len = (size_t) n;
            }
        }
        if (t->down_pos < t->down_len && t->u_write) {
            n = gn_upstream_send(t->uc, t->down + t->down_pos,
                                 t->down_len - t->down_pos);
            if (n > 0) {
                t->down_pos += (size_t) n;
                moved = 1;
            } else if (n == GN_AGAIN) {
                t->u_write = 0;
            } else {
                goto done;
            }
        }

        if (t->up_pos == t->up_len && t->u_read) {
            t->up_pos = t->up_len = 0;
            n = gn_upstream_recv(t->uc, t->up, t->up_size);
            if (n > 0) {
                t->up_len = (size_t) n;
            } else if (n == GN_AGAIN) {
                t->u_read = 0;
            } else {
                goto done;                  /* the upstream closed */
            }
        }
        if (t->up_pos < t->up_len && c->write_ready) {
            iov.iov_base = t->up + t->up_pos;
            iov.iov_len = t->up_len - t->up_pos;
            n = c->ops->writev(c, &iov, 1, 0);
            if (n == GN_AGAIN) {
                c->write_ready = 0;
            } else if (n <= 0) {
                goto done;
            } else {
                t->up_pos += (size_t) n;
                moved = 1;
            }
        }
    } while (moved);

    gn_timer_set(&t->timer, t->timeout);
    return;

done:

    gn_conn_close(c);                       /* gn_proxy_tunnel_closed */
}


static void
gn_proxy_tunnel_client(gn_conn_t *c)
{
    gn_proxy_tunnel_pump(c->data);
}


static void
gn_proxy_tunnel_upstream(gn_upstream_conn_t *uc, uint32_t events)
{
    gn_proxy_tunnel_t  *t = uc->data;

    if (events & (GN_EV_IN | GN_EV_RDHUP | GN_EV_ERR)) {
        t->u_read = 1;
    }
    if (events & (GN_EV_OUT | GN_EV_ERR)) {
        t->u_write = 1;
    }
    gn_proxy_tunnel_pump(t);
}


static void
gn_proxy_tunnel_timeout(gn_timer_t *tm)
{
    gn_proxy_tunnel_t  *t = tm->data;

    gn_log_error(GN_LOG_INFO, &t->c->log, 0, "tunnel idle for "
                 "proxy_read_timeout: closed");
    gn_conn_close(t->c);
}


/* The 101 head for the client: the upstream's fields less hop-by-hop
 * ones, with its Upgrade and "Connection: upgrade". */
static size_t
gn_proxy_tunnel_head(gn_proxy_ctx_t *ctx, u_char *p)
{
    gn_http_head_t      h;
    gn_http_header_t    hdrs[GN_PROXY_MAX_HEADERS];
    gn_http_header_t   *hd;
    gn_uint_t           i;
    u_char             *start = p;

    (void) gn_http_parse_response(&h, ctx->buf, ctx->head_len, hdrs,
                                  GN_PROXY_MAX_HEADERS);
    p = gn_cpymem(p, GN_PROXY_101, sizeof(GN_PROXY_101) - 1);
    for (i = 0; i < h.nheaders; i++) {
        hd = &h.headers[i];
        if (!gn_str_caseeq(&hd->name, "Upgrade")
            && (gn_proxy_hop_by_hop(&hd->name)
                || gn_proxy_conn_listed(&h, &hd->name)))
        {
            continue;
        }
        p = gn_cpymem(p, hd->name.data, hd->name.len);
        p = gn_cpymem(p, ": ", 2);
        p = gn_cpymem(p, hd->value.data, hd->value.len);
        p = gn_cpymem(p, "\r\n", 2);
    }
    p = gn_cpymem(p, "\r\n", 2);

    return (size_t) (p - start);
}


static void
gn_proxy_tunnel_start(gn_proxy_ctx_t *ctx)
{
    gn_http_request_t  *r = ctx->r;
    gn_conn_t          *c = r->c;
    gn_proxy_tunnel_t  *t;
    size_t              head, rest;

    rest = ctx->buf_len - ctx->head_len;
    t = calloc(1, sizeof(gn_proxy_tunnel_t));
    if (t != NULL) {
        t->up_size = gn_max(GN_PROXY_TUNNEL_BUF,
                            ctx->head_len + sizeof(GN_PROXY_101) + rest);
        t->down_size = gn_max(GN_PROXY_TUNNEL_BUF, c->buf_len);
        t->up = malloc(t->up_size);
        t->down = malloc(t->down_size);
    }
    if (t == NULL || t->up == NULL || t->down == NULL) {
        if (t != NULL) {
            free(t->up);
            free(t->down);
            free(t);
        }
        gn_http_module_enter(r);
        gn_proxy_cut(ctx, "no memory for a tunnel");
        gn_http_module_leave(r);
        return;
    }

    /* the 101, then what the upstream sent after it */
    head = gn_proxy_tunnel_head(ctx, t->up);
    memcpy(t->up + head, ctx->buf + ctx->head_len, rest);
    t->up_len = head + rest;

    gn_proxy_log_attempt(ctx, 101, 0);
    r->status = 101;
    r->header_bytes = r->bytes_sent = (off_t) head;

    t->c = c;
    t->uc = ctx->uc;
    t->uc->handler = gn_proxy_tunnel_upstream;
    t->uc->data = t;
    t->u_read = t->u_write = 1;
    t->timeout = ctx->up->read_timeout;
    gn_timer_init_node(&t->timer, gn_proxy_tunnel_timeout, t);
    ctx->uc = NULL;                  /* the request's cleanup leaves it */

    r->stream->tunnel(r, gn_proxy_tunnel_client, gn_proxy_tunnel_closed, t);

    /* what the client sent after its request */
    memcpy(t->down, c->buf, c->buf_len);
    t->down_len = c->buf_len;
    c->buf_len = 0;
    gn_conn_buf_put(c);

    c->write_ready = 1;
    gn_proxy_tunnel_pump(t);
}


/* ---- the handler -------------------------------------------------------- */

static void
gn_proxy_request_body(const gn_api_t *api, gn_request_t *rq,
    const void *data, size_t len, int last, void *arg)
{
    gn_proxy_ctx_t  *ctx = arg;

    (void) api;
    (void) rq;

    if (len > 0) {
        if (gn_str_reserve(&ctx->body, &ctx->body_cap, ctx->body_len + len,
                           16384) != GN_OK)
        {
            (void) gn_http_module_finish(ctx->r, 500);
            return;
        }
        memcpy(ctx->body + ctx->body_len, data, len);
        ctx->body_len += len;
    }

    if (last) {
        if (gn_proxy_build(ctx) != GN_OK) {
            (void) gn_http_module_finish(ctx->r, 500);
            return;
        }
        gn_proxy_connect(ctx);
    }
}


/* *_request_buffering off: a piece of the body as it came, framed for
 * the upstream (chunked to HTTP without a Content-Length, STDIN records
 * to FastCGI) and sent at once when the connection is ready. */
static void
gn_proxy_request_piece(const gn_api_t *api, gn_request_t *rq,
    const void *data, size_t len, int last, void *arg)
{
    gn_proxy_ctx_t  *ctx = arg;
    gn_uint_t        chunked;
    u_char          *p;
    size_t           n;

    (void) api;
    (void) rq;

    if (ctx->early || ctx->r->finished) {
        return;                           /* answered already: dropped */
    }

    chunked = !ctx->fcgi && ctx->r->head.content_length < 0;
    n = ctx->fcgi ? gn_fcgi_stream(NULL, GN_FCGI_STDIN, data, len, last)
        : chunked ? 20 + len + 2 + (last ? 5 : 0)     /* "%zx\r\n": 18 */
        : len;

    p = gn_proxy_stream_room(ctx, n);
    if (p == NULL) {
        (void) gn_http_module_finish(ctx->r, 500);
        return;
    }

    if (ctx->fcgi) {
        (void) gn_fcgi_stream(p, GN_FCGI_STDIN, data, len, last);

    } else if (chunked) {
        n = 0;
        if (len > 0) {
            n = (size_t) snprintf((char *) p, 20, "%zx\r\n", len);
            memcpy(p + n, data, len);
            memcpy(p + n + len, "\r\n", 2);
            n += len + 2;
        }
        if (last) {
            memcpy(p + n, "0\r\n\r\n", 5);
            n += 5;
        }

    } else if (len > 0) {
        memcpy(p, data, len);
    }

    gn_proxy_stream_took(ctx, n);
    ctx->body_complete |= last;
    if (ctx->uc != NULL && ctx->state == GN_PROXY_SENDING) {
        gn_proxy_send(ctx);
    }
}


/* *_request_buffering off: the head goes now, the body as it comes. */
static gn_int_t
gn_proxy_stream_start(gn_proxy_ctx_t *ctx)
{
    ctx->streaming = 1;
    if (gn_proxy_build(ctx) != GN_OK
        || gn_proxy_stream_put(ctx, ctx->req, ctx->req_len) != GN_OK
        || gn_http_module_read_body(ctx->r, (void *) gn_proxy_request_piece,
                                    ctx) != GN_OK)
    {
        return GN_ERROR;
    }

    gn_proxy_connect(ctx);
    return GN_AGAIN;
}


static int
gn_proxy_handler(const gn_api_t *api, gn_request_t *rq)
{
    gn_http_request_t  *r = (gn_http_request_t *) rq;
    gn_proxy_ctx_t     *ctx;
    gn_pool_cleanup_t  *cln;

    (void) api;

    ctx = gn_pcalloc(r->pool, sizeof(gn_proxy_ctx_t));
    cln = gn_pool_cleanup_add(r->pool, 0);
    if (ctx == NULL || cln == NULL) {
        return GN_ERROR;
    }
    cln->handler = gn_proxy_cleanup;
    cln->data = ctx;

    ctx->r = r;
    ctx->pc = gn_proxy_conf(r->loc);
    ctx->fcgi = ctx->pc->fcgi.group != NULL;
    ctx->up = ctx->fcgi ? &ctx->pc->fcgi : &ctx->pc->http;
    ctx->tls = !ctx->fcgi && ctx->pc->tls ? &ctx->pc->tls_client : NULL;
    ctx->buf_cap = gn_max(ctx->up->buffer_size, GN_PROXY_BUF);
    ctx->buf = gn_proxy_buf_get(ctx->buf_cap);
    if (ctx->buf == NULL) {
        return GN_ERROR;
    }
    ctx->buf_size = ctx->up->buffer_size;     /* the head's limit first */
    gn_timer_init_node(&ctx->timer, gn_proxy_timeout, ctx);
    ctx->log.body_length = -1;
    r->upstream = &ctx->log;
    if (ctx->fcgi) {
        if (gn_proxy_fcgi_script(ctx) != GN_OK) {
            return GN_ERROR;
        }
    } else {
        ctx->log.host = ctx->pc->host;
        gn_proxy_want_upgrade(ctx);
    }
    if (ctx->up->group->method == GN_UPSTREAM_HASH) {
        ctx->hash = gn_proxy_hash(r, &ctx->up->group->hash_key);
    }

    if (r->has_body && !r->body_done && !ctx->up->request_buffering) {
        return gn_proxy_stream_start(ctx);
    }

    if (r->has_body && !r->body_done) {
        if (gn_http_module_read_body(r, (void *) gn_proxy_request_body, ctx)
            != GN_OK)
        {
            return GN_ERROR;
        }
        return GN_AGAIN;
    }

    if (gn_proxy_build(ctx) != GN_OK) {
        return GN_ERROR;
    }
    gn_proxy_connect(ctx);
    return GN_AGAIN;
}


/* ---- configuration ------------------------------------------------------ */

static char *
gn_proxy_upstream(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_proxy_conf_t       *pc = conf;
    gn_upstream_group_t   *g, **pg;
    gn_str_t              *value = cf->args->elts;
    gn_uint_t              i;
    char                  *rv;

    (void) cmd;

    if (pc->groups == NULL) {
        pc->groups = gn_array_create(cf->pool, 4,
                                     sizeof(gn_upstream_group_t *));
        if (pc->groups == NULL) {
            return "failed (out of memory)";
        }
    }

    pg = pc->groups->elts;
    for (i = 0; i < pc->groups->nelts; i++) {
        if (gn_str_cmp(&pg[i]->name, &value[1]) == 0) {
            gn_conf_error(cf, "duplicate upstream \"%.*s\"",
                          GN_STR_ARG(&value[1]));
            return GN_CONF_ERROR;
        }
    }

    g = gn_palloc(cf->pool, sizeof(gn_upstream_group_t));
    pg = gn_array_push(pc->groups);
    if (g == NULL || pg == NULL) {
        return "failed (out of memory)";
    }
    *pg = g;

    rv = gn_upstream_block(cf, g);
    if (rv != GN_CONF_OK) {
        pc->groups->nelts--;
    }
    return rv;
}


/* proxy_pass http://HOST[:PORT][/URI]: a HOST without a port may be an
 * upstream's name, looked up once every block is read. */
static char *
gn_proxy_pass(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_proxy_conf_t  *pc = conf;
    gn_proxy_pass_t  *up = &pc->http;
    gn_str_t         *value = cf->args->elts, url = value[1], host;
    u_char           *slash;
    size_t            skip;

    (void) cmd;

    if (up->pass_name.data != NULL || up->group != NULL) {
        return "is duplicate";
    }

    pc->tls = url.len > 8 && gn_strncasecmp(url.data, (u_char *) "https://",
                                            8) == 0;
    skip = pc->tls ? 8 : 7;

    if (!pc->tls && (url.len <= 7 || gn_strncasecmp(url.data,
                                                    (u_char *) "http://", 7)
                                     != 0))
    {
        gn_conf_error(cf, "invalid URL \"%.*s\" in \"proxy_pass\", expected "
                      "http[s]://HOST[:PORT][/URI]", GN_STR_ARG(&url));
        return GN_CONF_ERROR;
    }

    host.data = url.data + skip;
    slash = memchr(host.data, '/', url.len - skip);
    host.len = slash ? (size_t) (slash - host.data) : url.len - skip;
    if (host.len == 0) {
        gn_conf_error(cf, "no host in \"proxy_pass %.*s\"", GN_STR_ARG(&url));
        return GN_CONF_ERROR;
    }

    pc->host = host;
    if (slash != NULL) {
        pc->uri.data = slash;
        pc->uri.len = (size_t) (url.data + url.len - slash);
        pc->has_uri = 1;
    }
    up->pass_file = cf->file->name;
    up->pass_line = cf->file->line;

    if (host.data[host.len - 1] != ']'
        && memrchr(host.data, ':', host.len) != NULL)
    {
        up->group = gn_upstream_implicit(cf, &host, 0);
        return up->group != NULL ? GN_CONF_OK : GN_CONF_ERROR;
    }

    up->pass_name = host;                 /* a group, or HOST:80 */
    return GN_CONF_OK;
}


/* fastcgi_pass HOST:PORT | unix:PATH | NAME (an upstream's) */
static char *
gn_proxy_fcgi_pass(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_proxy_conf_t  *pc = conf;
    gn_proxy_pass_t  *up = &pc->fcgi;
    gn_str_t         *value = cf->args->elts, *a = &value[1];

    (void) cmd;

    if (up->pass_name.data != NULL || up->group != NULL) {
        return "is duplicate";
    }
    if (a->len == 0) {
        return "expects an address or an upstream's name";
    }

    up->pass_file = cf->file->name;
    up->pass_line = cf->file->line;

    if ((a->len > 5 && memcmp(a->data, "unix:", 5) == 0)
        || (a->data[a->len - 1] != ']' && memrchr(a->data, ':', a->len)))
    {
        up->group = gn_upstream_implicit(cf, a, 1);
        return up->group != NULL ? GN_CONF_OK : GN_CONF_ERROR;
    }

    up->pass_name = *a;
    return GN_CONF_OK;
}


/* fastcgi_split_path_info REGEX: two captures, the script's name and
 * the path info after it. */
static char *
gn_proxy_fcgi_split(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_proxy_conf_t  *pc = conf;
    gn_str_t         *value = cf->args->elts;
    char              err[256];

    (void) cmd;

    if (pc->fcgi_split != NULL) {
        return "is duplicate";
    }
    pc->fcgi_split = gn_pcalloc(cf->pool, sizeof(gn_regex_t));
    if (pc->fcgi_split == NULL) {
        return "failed (out of memory)";
    }
    if (gn_regex_compile(pc->fcgi_split, cf->pool, &value[1], 0, err,
                         sizeof(err)) != GN_OK)
    {
        gn_conf_error(cf, "\"fastcgi_split_path_info\": %s", err);
        return GN_CONF_ERROR;
    }
    if (pc->fcgi_split->captures != 2) {
        gn_conf_error(cf, "\"fastcgi_split_path_info\" expects a regular "
                      "expression with two captures, \"%.*s\" has %u",
                      GN_STR_ARG(&value[1]),
                      (unsigned) pc->fcgi_split->captures);
        return GN_CONF_ERROR;
    }
    return GN_CONF_OK;
}


/* proxy_set_header NAME VALUE (a field, not sent when VALUE is ""), or
 * fastcgi_param NAME VALUE [if_not_empty] (a later one of a NAME takes
 * the earlier one's place): to the list at cmd->offset. */
static char *
gn_proxy_set_field(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_array_t        **list = (gn_array_t **) ((u_char *) conf
                                                 + cmd->offset);
    gn_str_t           *value = cf->args->elts;
    gn_uint_t           fcgi = cmd->post != NULL, i;
    gn_proxy_header_t  *ph = NULL;
    char                err[256];

    if (!fcgi && !gn_http_token(value[1].data, value[1].len)) {
        gn_conf_error(cf, "invalid header name \"%.*s\" in "
                      "\"proxy_set_header\"", GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }
    if (fcgi && (value[1].len == 0
                 || (cf->args->nelts == 4
                     && !gn_str_eq(&value[3], "if_not_empty"))))
    {
        gn_conf_error(cf, "invalid \"fastcgi_param\", expected NAME VALUE "
                      "[if_not_empty]");
        return GN_CONF_ERROR;
    }
    if (!fcgi && cf->args->nelts != 3) {
        return "expects a name and a value";
    }

    if (*list == NULL) {
        *list = gn_array_create(cf->pool, 4, sizeof(gn_proxy_header_t));
        if (*list == NULL) {
            return "failed (out of memory)";
        }
    }

    for (i = 0; fcgi && i < (*list)->nelts; i++) {
        if (gn_str_cmp(&((gn_proxy_header_t *) (*list)->elts)[i].name,
                       &value[1]) == 0)
        {
            ph = &((gn_proxy_header_t *) (*list)->elts)[i];
        }
    }
    if (ph == NULL && (ph = gn_array_push(*list)) == NULL) {
        return "failed (out of memory)";
    }
    ph->name = value[1];
    ph->empty = fcgi ? cf->args->nelts == 4 : value[2].len == 0;
    if (gn_access_log_template(cf->pool, &ph->value, &value[2], err,
                               sizeof(err)) != GN_OK)
    {
        gn_conf_error(cf, "%s in \"%.*s\"", err, GN_STR_ARG(&cmd->name));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static char *
gn_proxy_next_upstream(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    static const gn_conf_enum_t  conds[] = {
        { gn_string("error"), GN_PROXY_NEXT_ERROR },
        { gn_string("timeout"), GN_PROXY_NEXT_TIMEOUT },
        { gn_string("invalid_header"), GN_PROXY_NEXT_INVALID },
        { gn_string("http_502"), GN_PROXY_NEXT_502 },
        { gn_string("http_503"), GN_PROXY_NEXT_503 },
        { gn_string("http_504"), GN_PROXY_NEXT_504 },
        { gn_string("off"), GN_PROXY_NEXT_OFF },
        { gn_null_string, 0 }
    };
    gn_str_t         *value = cf->args->elts;
    gn_uint_t         i, k, mask = 0;

    for (i = 1; i < cf->args->nelts; i++) {
        for (k = 0; conds[k].name.len; k++) {
            if (gn_str_cmp(&value[i], &conds[k].name) == 0) {
                break;
            }
        }
        if (conds[k].name.len == 0) {
            gn_conf_error(cf, "invalid value \"%.*s\" in \"%.*s\", "
                          "expected error, timeout, invalid_header, "
                          "http_502, http_503, http_504 or off",
                          GN_STR_ARG(&value[i]), GN_STR_ARG(&cmd->name));
            return GN_CONF_ERROR;
        }
        mask |= conds[k].value;
    }

    if ((mask & GN_PROXY_NEXT_OFF) && mask != GN_PROXY_NEXT_OFF) {
        return "\"off\" goes alone";
    }

    *(gn_uint_t *) ((u_char *) conf + cmd->offset) = mask;
    return GN_CONF_OK;
}


/* proxy_buffers N SIZE (fastcgi_buffers): N x SIZE bytes may wait for
 * the client before the upstream is read no more. */
static char *
gn_proxy_buffers(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_str_t  *value = cf->args->elts;
    gn_int_t   n;
    ssize_t    size;

    n = gn_atoi(value[1].data, value[1].len);
    size = gn_parse_size(&value[2]);
    if (n < 1 || size < 1024 || (size_t) n > (64 << 20) / (size_t) size) {
        gn_conf_error(cf, "invalid \"%.*s %.*s %.*s\", expected a number "
                      "of buffers and their size (1k or more, 64m in all "
                      "at most)", GN_STR_ARG(&cmd->name),
                      GN_STR_ARG(&value[1]), GN_STR_ARG(&value[2]));
        return GN_CONF_ERROR;
    }

    *(size_t *) ((u_char *) conf + cmd->offset) = (size_t) n * (size_t) size;
    return GN_CONF_OK;
}


/* proxy_redirect default | off | FROM TO, as nginx's: a level with any
 * takes none of the outer level's; off drops what the level said
 * before it. */
static char *
gn_proxy_redirect_set(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_proxy_conf_t    *pc = conf;
    gn_proxy_header_t  *ph;
    gn_str_t           *value = cf->args->elts;
    char                err[256];

    (void) cmd;

    if (pc->redirect == GN_CONF_UNSET) {
        pc->redirect = 0;
    }

    if (cf->args->nelts == 3) {
        if (value[1].len == 0 || value[1].data[0] == '~') {
            gn_conf_error(cf, "invalid \"proxy_redirect %.*s\", expected a "
                          "URL prefix (regular expressions are not "
                          "supported)", GN_STR_ARG(&value[1]));
            return GN_CONF_ERROR;
        }
        if (pc->redirects == NULL) {
            pc->redirects = gn_array_create(cf->pool, 2,
                                            sizeof(gn_proxy_header_t));
        }
        ph = pc->redirects != NULL ? gn_array_push(pc->redirects) : NULL;
        if (ph == NULL) {
            return "failed (out of memory)";
        }
        memset(ph, 0, sizeof(gn_proxy_header_t));
        ph->name = value[1];
        if (gn_access_log_template(cf->pool, &ph->value, &value[2], err,
                                   sizeof(err)) != GN_OK)
        {
            gn_conf_error(cf, "%s in \"proxy_redirect\"", err);
            return GN_CONF_ERROR;
        }
        return GN_CONF_OK;
    }

    if (gn_str_eq(&value[1], "default")) {
        pc->redirect = 1;
    } else if (gn_str_eq(&value[1], "off")) {
        pc->redirect = 0;
        if (pc->redirects != NULL) {
            pc->redirects->nelts = 0;
        }
    } else {
        gn_conf_error(cf, "invalid value \"%.*s\" in \"proxy_redirect\", "
                      "expected default, off or a pair FROM TO",
                      GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


#define gn_proxy_offset(f)   offsetof(gn_proxy_conf_t, f)

/* The limits proxy_pass and fastcgi_pass each have, by their prefix. */
#define gn_proxy_pass_commands(prefix, up)                                   \
    { gn_string(prefix "next_upstream"), GN_CONF_ANY | GN_CONF_1MORE,        \
      gn_proxy_next_upstream, GN_CONF_LOC_CONF,                              \
      gn_proxy_offset(up.next_upstream), NULL, NULL },                       \
    { gn_string(prefix "next_upstream_tries"), GN_CONF_ANY | GN_CONF_TAKE1,  \
      gn_conf_set_num_slot, GN_CONF_LOC_CONF,                                \
      gn_proxy_offset(up.next_upstream_tries), NULL, "0" },                  \
    { gn_string(prefix "connect_timeout"), GN_CONF_ANY | GN_CONF_TAKE1,      \
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,                               \
      gn_proxy_offset(up.connect_timeout), NULL, "60s" },                    \
    { gn_string(prefix "send_timeout"), GN_CONF_ANY | GN_CONF_TAKE1,         \
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,                               \
      gn_proxy_offset(up.send_timeout), NULL, "60s" },                       \
    { gn_string(prefix "read_timeout"), GN_CONF_ANY | GN_CONF_TAKE1,         \
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,                               \
      gn_proxy_offset(up.read_timeout), NULL, "60s" },                       \
    { gn_string(prefix "buffer_size"), GN_CONF_ANY | GN_CONF_TAKE1,          \
      gn_conf_set_size_slot, GN_CONF_LOC_CONF,                               \
      gn_proxy_offset(up.buffer_size), NULL, "8k" },                         \
    { gn_string(prefix "buffering"), GN_CONF_ANY | GN_CONF_FLAG,             \
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,                               \
      gn_proxy_offset(up.buffering), NULL, "on" },                           \
    { gn_string(prefix "buffers"), GN_CONF_ANY | GN_CONF_TAKE2,              \
      gn_proxy_buffers, GN_CONF_LOC_CONF,                                    \
      gn_proxy_offset(up.buffers), NULL, NULL },                             \
    { gn_string(prefix "request_buffering"), GN_CONF_ANY | GN_CONF_FLAG,     \
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,                               \
      gn_proxy_offset(up.request_buffering), NULL, "on" }

static const u_char  gn_proxy_fcgi_cmd;     /* a non-NULL post */

static const gn_conf_cmd_t  gn_proxy_commands[] = {

    { gn_string("upstream"), GN_CONF_MAIN | GN_CONF_BLOCK | GN_CONF_TAKE1,
      gn_proxy_upstream, GN_CONF_LOC_CONF, 0, NULL, NULL },

    { gn_string("proxy_pass"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_proxy_pass, GN_CONF_LOC_CONF, 0, NULL, NULL },
    gn_proxy_pass_commands("proxy_", http),
    { gn_string("proxy_set_header"), GN_CONF_ANY | GN_CONF_TAKE2,
      gn_proxy_set_field, GN_CONF_LOC_CONF, gn_proxy_offset(headers), NULL,
      NULL },
    { gn_string("proxy_redirect"), GN_CONF_ANY | GN_CONF_TAKE12,
      gn_proxy_redirect_set, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("proxy_pass_request_headers"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(pass_request_headers), NULL, "on" },
    { gn_string("proxy_tls_verify"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(tls_verify), NULL, "off" },
    { gn_string("proxy_tls_session_reuse"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(tls_reuse), NULL, "on" },
    { gn_string("proxy_tls_trusted_certificate"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(tls_trusted), NULL, NULL },
    { gn_string("proxy_tls_name"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(tls_name), NULL, NULL },

    { gn_string("fastcgi_pass"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_proxy_fcgi_pass, GN_CONF_LOC_CONF, 0, NULL, NULL },
    gn_proxy_pass_commands("fastcgi_", fcgi),
    { gn_string("fastcgi_param"), GN_CONF_ANY | GN_CONF_TAKE23,
      gn_proxy_set_field, GN_CONF_LOC_CONF, gn_proxy_offset(fcgi_params),
      &gn_proxy_fcgi_cmd, NULL },
    { gn_string("fastcgi_index"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(fcgi_index), NULL, NULL },
    { gn_string("fastcgi_split_path_info"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_proxy_fcgi_split, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("fastcgi_keep_conn"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(fcgi_keep_conn), NULL, "off" },
    { gn_string("fastcgi_pass_request_headers"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_proxy_offset(fcgi_pass_request_headers), NULL, "on" },

    gn_conf_null_cmd
};


static gn_int_t
gn_proxy_create(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    gn_proxy_conf_t  *pc = gn_proxy_conf(lc);

    (void) cf;

    pc->redirect = GN_CONF_UNSET;
    pc->http.next_upstream = GN_CONF_UNSET_UINT;
    pc->fcgi.next_upstream = GN_CONF_UNSET_UINT;
    pc->http.buffers = GN_CONF_UNSET_SIZE;
    pc->fcgi.buffers = GN_CONF_UNSET_SIZE;
    return GN_OK;
}


/* proxy_set_header's defaults, as nginx's: Host $proxy_host (Connection
 * is the proxy's own: "close" without keepalive). */
static gn_array_t *
gn_proxy_default_headers(gn_conf_t *cf)
{
    static const gn_str_t   host = gn_string("Host");
    static const gn_str_t   value = gn_string("$proxy_host");
    gn_array_t             *a;
    gn_proxy_header_t      *ph;

    a = gn_array_create(cf->pool, 1, sizeof(gn_proxy_header_t));
    ph = a != NULL ? gn_array_push(a) : NULL;
    if (ph == NULL) {
        return NULL;
    }
    ph->name = host;
    ph->empty = 0;
    if (gn_access_log_template(cf->pool, &ph->value, &value, cf->err,
                               sizeof(cf->err)) != GN_OK)
    {
        return NULL;
    }
    return a;
}


static gn_int_t
gn_proxy_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_proxy_conf_t    *pc = gn_proxy_conf(lc), *pp;
    gn_proxy_header_t  *ph;
    gn_uint_t           i, host;

    pp = prev != NULL ? gn_proxy_conf(prev) : NULL;

    if (pc->redirect == GN_CONF_UNSET) {
        pc->redirect = pp != NULL ? pp->redirect : 1;
        pc->redirects = pp != NULL ? pp->redirects : NULL;
    }
    if (pc->http.next_upstream == GN_CONF_UNSET_UINT) {
        pc->http.next_upstream = pp != NULL ? pp->http.next_upstream
                                 : GN_PROXY_NEXT_ERROR
                                   | GN_PROXY_NEXT_TIMEOUT;
    }
    if (pc->fcgi.next_upstream == GN_CONF_UNSET_UINT) {
        pc->fcgi.next_upstream = pp != NULL ? pp->fcgi.next_upstream
                                 : GN_PROXY_NEXT_ERROR
                                   | GN_PROXY_NEXT_TIMEOUT;
    }
    /* 256 KiB by default: nginx's 8 x 8k and temporary files beyond,
     * where none are written here */
    gn_conf_merge_size_value(pc->http.buffers,
                             pp ? pp->http.buffers : GN_CONF_UNSET_SIZE,
                             256 * 1024);
    gn_conf_merge_size_value(pc->fcgi.buffers,
                             pp ? pp->fcgi.buffers : GN_CONF_UNSET_SIZE,
                             256 * 1024);
    if (pc->fcgi_params == NULL && pp != NULL) {
        pc->fcgi_params = pp->fcgi_params;
    }
    if (pc->fcgi_split == NULL && pp != NULL) {
        pc->fcgi_split = pp->fcgi_split;
    }

    if (pc->headers == NULL) {
        pc->headers = pp != NULL ? pp->headers : NULL;
        if (pc->headers == NULL) {
            pc->headers = gn_proxy_default_headers(cf);
            return pc->headers != NULL ? GN_OK : GN_ERROR;
        }
        return GN_OK;
    }

    /* a level's own list: Host $proxy_host unless it says otherwise */
    ph = pc->headers->elts;
    for (i = 0, host = 0; i < pc->headers->nelts; i++) {
        host |= gn_str_caseeq(&ph[i].name, "Host");
    }
    if (!host) {
        gn_array_t  *def = gn_proxy_default_headers(cf);

        ph = def != NULL ? gn_array_push(pc->headers) : NULL;
        if (ph == NULL) {
            return GN_ERROR;
        }
        *ph = *(gn_proxy_header_t *) def->elts;
    }

    return GN_OK;
}


static gn_int_t gn_proxy_list_group(gn_conf_t *cf, gn_cycle_t *cycle,
    gn_proxy_pass_t *up);
static gn_int_t gn_proxy_tls_init(gn_conf_t *cf, gn_proxy_conf_t *pc);


/* https://: the name the upstream's certificate is checked against
 * and sent by SNI (proxy_tls_name, else the URL's host), the trusted
 * CAs (needed by proxy_tls_verify on), the credentials. */
static gn_int_t
gn_proxy_tls_init(gn_conf_t *cf, gn_proxy_conf_t *pc)
{
    gn_tls_client_t    *tc = &pc->tls_client;
    gn_str_t            name, trusted;
    gn_pool_cleanup_t  *cln;
    const char         *err;
    u_char             *colon;
    struct in6_addr     a6;

    name = pc->tls_name.data != NULL ? pc->tls_name : pc->host;
    if (pc->tls_name.data == NULL) {
        if (name.len > 0 && name.data[0] == '[') {
            colon = memchr(name.data, ']', name.len);
            name.data++;
            name.len = colon != NULL ? (size_t) (colon - name.data) : 0;
        } else if ((colon = memrchr(name.data, ':', name.len)) != NULL) {
            name.len = (size_t) (colon - name.data);
        }
    }
    tc->name = name;
    tc->cname = gn_pstrdup_cstr(cf->pool, &name);
    tc->is_addr = tc->cname != NULL
                  && (inet_pton(AF_INET, tc->cname, &a6) == 1
                      || inet_pton(AF_INET6, tc->cname, &a6) == 1);
    tc->verify = pc->tls_verify;
    tc->reuse = pc->tls_reuse;

    if (tc->verify && pc->tls_trusted.data == NULL) {
        snprintf(cf->err, sizeof(cf->err), "\"proxy_tls_verify on\" needs "
                 "\"proxy_tls_trusted_certificate\" for the proxy_pass in "
                 "%.*s:%u", GN_STR_ARG(&pc->http.pass_file),
                 (unsigned) pc->http.pass_line);
        return GN_ERROR;
    }

    trusted = pc->tls_trusted;
    if (tc->cname == NULL || (trusted.data != NULL
                              && gn_conf_full_name(cf, &trusted, 0) != GN_OK))
    {
        snprintf(cf->err, sizeof(cf->err), "out of memory");
        return GN_ERROR;
    }

    cln = gn_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        snprintf(cf->err, sizeof(cf->err), "out of memory");
        return GN_ERROR;
    }
    err = gn_tls_client_init(tc, trusted.data != NULL
                                 ? gn_pstrdup_cstr(cf->pool, &trusted)
                                 : NULL);
    cln->handler = gn_tls_client_done;
    cln->data = tc;
    if (err != NULL) {
        snprintf(cf->err, sizeof(cf->err), "cannot load the trusted "
                 "certificates \"%.*s\" (%s) for the proxy_pass in %.*s:%u",
                 GN_STR_ARG(&trusted), err, GN_STR_ARG(&pc->http.pass_file),
                 (unsigned) pc->http.pass_line);
        return GN_ERROR;
    }

    return GN_OK;
}


/* A pass to a NAME: the upstream of that name, else (proxy_pass, `port`
 * ":80" or ":443") the host NAME at that port. */
static gn_int_t
gn_proxy_check_pass(gn_conf_t *cf, gn_cycle_t *cycle, gn_proxy_pass_t *up,
    const char *port)
{
    gn_array_t            *groups = gn_proxy_conf(cycle->main_loc)->groups;
    gn_upstream_group_t  **pg;
    gn_str_t               hp;
    gn_uint_t              i;
    size_t                 n;

    if (up->group != NULL) {
        return gn_proxy_list_group(cf, cycle, up);
    }
    if (up->pass_name.data == NULL) {
        return GN_OK;
    }

    pg = groups != NULL ? groups->elts : NULL;
    for (i = 0; groups != NULL && i < groups->nelts; i++) {
        if (gn_str_cmp(&pg[i]->name, &up->pass_name) == 0) {
            up->group = pg[i];
            return GN_OK;
        }
    }

    if (port == NULL) {
        snprintf(cf->err, sizeof(cf->err), "no upstream \"%.*s\" for "
                 "\"fastcgi_pass\" (expected HOST:PORT, unix:PATH or the "
                 "name of an upstream) in %.*s:%u",
                 GN_STR_ARG(&up->pass_name), GN_STR_ARG(&up->pass_file),
                 (unsigned) up->pass_line);
        return GN_ERROR;
    }

    n = strlen(port);
    hp.data = gn_pnalloc(cf->pool, up->pass_name.len + n);
    if (hp.data == NULL) {
        return GN_ERROR;
    }
    memcpy(hp.data, up->pass_name.data, up->pass_name.len);
    memcpy(hp.data + up->pass_name.len, port, n);
    hp.len = up->pass_name.len + n;

    up->group = gn_upstream_implicit(cf, &hp, 0);
    if (up->group == NULL) {
        snprintf(cf->err, sizeof(cf->err), "no upstream \"%.*s\", and the "
                 "host \"%.*s\" cannot be resolved in %.*s:%u",
                 GN_STR_ARG(&up->pass_name), GN_STR_ARG(&hp),
                 GN_STR_ARG(&up->pass_file), (unsigned) up->pass_line);
        return GN_ERROR;
    }

    return gn_proxy_list_group(cf, cycle, up);
}


static gn_int_t
gn_proxy_check(gn_conf_t *cf, gn_cycle_t *cycle, gn_srv_conf_t *sc,
    gn_loc_conf_t *lc)
{
    gn_proxy_conf_t  *pc = gn_proxy_conf(lc);

    (void) sc;

    if ((pc->http.group != NULL || pc->http.pass_name.data != NULL)
        && (pc->fcgi.group != NULL || pc->fcgi.pass_name.data != NULL))
    {
        snprintf(cf->err, sizeof(cf->err), "\"proxy_pass\" and "
                 "\"fastcgi_pass\" in one location in %.*s:%u",
                 GN_STR_ARG(&pc->fcgi.pass_file),
                 (unsigned) pc->fcgi.pass_line);
        return GN_ERROR;
    }

    if (pc->tls && gn_proxy_tls_init(cf, pc) != GN_OK) {
        return GN_ERROR;
    }

    if (pc->has_uri && (lc->regex != NULL || lc->named)) {
        snprintf(cf->err, sizeof(cf->err), "\"proxy_pass\" cannot have a URI "
                 "part in a location given by a regular expression or a "
                 "name in %.*s:%u", GN_STR_ARG(&pc->http.pass_file),
                 (unsigned) pc->http.pass_line);
        return GN_ERROR;
    }

    if (gn_proxy_check_pass(cf, cycle, &pc->http, pc->tls ? ":443" : ":80")
        != GN_OK)
    {
        return GN_ERROR;
    }
    return gn_proxy_check_pass(cf, cycle, &pc->fcgi, NULL);
}


/* A proxy_pass URL's group joins the main level's list (the named ones
 * are there from their block), for the counters' zone; URLs of one
 * host:port share one group (its pool and counters), as nginx's. */
static gn_int_t
gn_proxy_list_group(gn_conf_t *cf, gn_cycle_t *cycle, gn_proxy_pass_t *up)
{
    gn_proxy_conf_t       *main = gn_proxy_conf(cycle->main_loc);
    gn_upstream_group_t  **pg, *g = up->group;
    gn_uint_t              i;

    if (!g->implicit || g->listed) {
        return GN_OK;
    }

    pg = main->groups != NULL ? main->groups->elts : NULL;
    for (i = 0; main->groups != NULL && i < main->groups->nelts; i++) {
        if (pg[i]->implicit && gn_str_cmp(&pg[i]->name, &g->name) == 0) {
            up->group = pg[i];
            return GN_OK;
        }
    }

    if (main->groups == NULL) {
        main->groups = gn_array_create(cf->pool, 4,
                                       sizeof(gn_upstream_group_t *));
    }
    pg = main->groups != NULL ? gn_array_push(main->groups) : NULL;
    if (pg == NULL) {
        snprintf(cf->err, sizeof(cf->err), "out of memory");
        return GN_ERROR;
    }
    *pg = g;
    g->listed = 1;
    return GN_OK;
}


/* Master: the counters of every upstream server, in a shared zone. */
static gn_int_t
gn_proxy_open(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    gn_array_t  *groups = gn_proxy_conf(cycle->main_loc)->groups;
    gn_array_t  *ogroups;

    if (groups == NULL) {
        return GN_OK;
    }
    ogroups = old != NULL ? gn_proxy_conf(old->main_loc)->groups : NULL;

    return gn_upstream_zone(cycle->pool, groups->elts, groups->nelts,
                            ogroups ? ogroups->elts : NULL,
                            ogroups ? ogroups->nelts : 0, log);
}


const gn_feature_t  gn_proxy_feature = {
    .name = "proxy", .commands = gn_proxy_commands,
    .conf_size = sizeof(gn_proxy_conf_t),
    .create_conf = gn_proxy_create,
    .merge_conf = gn_proxy_merge,
    .check_level = gn_proxy_check,
    .open_cycle = gn_proxy_open
};


gn_int_t
gn_proxy_server(gn_cycle_t *cycle, gn_uint_t index,
    gn_upstream_group_t **group, gn_upstream_server_t **server)
{
    gn_array_t            *groups = gn_proxy_conf(cycle->main_loc)->groups;
    gn_upstream_group_t  **pg;
    gn_uint_t              i;

    pg = groups != NULL ? groups->elts : NULL;
    for (i = 0; groups != NULL && i < groups->nelts; i++) {
        if (index < pg[i]->servers.nelts) {
            *group = pg[i];
            *server = &((gn_upstream_server_t *) pg[i]->servers.elts)[index];
            return GN_OK;
        }
        index -= pg[i]->servers.nelts;
    }

    return GN_DECLINED;
}
