/*
 * gn_api_t: the server side of the module ABI.
 *
 * gn_request_t is the server's gn_http_request_t, seen from outside as
 * an opaque handle. Entry points that run module code (handler, filters,
 * body, watch, timer and drain callbacks) go through http_request.c's
 * gn_http_module_enter/leave, so that what a module asks for (flush,
 * finish) happens after its code returns, never inside it.
 */

#include "gn_config.h"

#include <sys/epoll.h>
#include <arpa/inet.h>

#include "api.h"
#include "module.h"
#include "event.h"
#include "timer.h"
#include "log.h"
#include "str.h"
#include "scoreboard.h"
#include "tls.h"
#include "tls_scache.h"
#include "memc.h"
#include "listen.h"
#include "proxy.h"
#include "http_file.h"
#include "limit.h"
#include "binlog.h"


#define gn_req(r)   ((gn_http_request_t *) (r))

static gn_str_t gn_api_document_root(gn_request_t *rq);

struct gn_watch_s {
    gn_io_t            io;
    gn_watch_pt        cb;
    void              *arg;
    gn_http_request_t *r;
    int                fd;
    int                events;
    gn_watch_t        *next_dead;
    gn_uint_t          dead;
    gn_pool_cleanup_t *cln;
};

struct gn_mtimer_s {
    gn_timer_t         timer;
    gn_mtimer_pt       cb;
    void              *arg;
    gn_http_request_t *r;
    gn_pool_cleanup_t *cln;
};

static gn_watch_t  *gn_api_dead;


/* ---- logging ------------------------------------------------------------ */

static void
gn_api_log(gn_request_t *r, int level, const char *fmt, ...)
{
    va_list    args;
    gn_log_t  *log;

    if (level < GN_LOG_EMERG || level > GN_LOG_DEBUG) {
        level = GN_LOG_ERR;
    }

    log = r ? &gn_req(r)->c->log : (gn_cycle ? &gn_cycle->log : NULL);
    if (log == NULL) {
        log = &gn_log_default;
    }

    if ((gn_uint_t) level > log->level) {
        return;
    }

    va_start(args, fmt);
    gn_log_verror((gn_uint_t) level, log, 0, fmt, args);
    va_end(args);
}


/* ---- the request -------------------------------------------------------- */

static gn_str_t
gn_api_method(gn_request_t *r)
{
    return gn_req(r)->head.method_name;
}


static gn_str_t
gn_api_uri(gn_request_t *r)
{
    return gn_req(r)->uri;
}


static gn_str_t
gn_api_query(gn_request_t *r)
{
    return gn_req(r)->head.query;
}


static gn_str_t
gn_api_request_uri(gn_request_t *r)
{
    return gn_req(r)->head.target;
}


static int
gn_api_http_version(gn_request_t *r)
{
    gn_uint_t  v = gn_req(r)->head.version;

    return v == GN_HTTP_VERSION_10 ? 10 : (v == GN_HTTP_VERSION_20 ? 20 : 11);
}


static gn_str_t
gn_api_header(gn_request_t *r, const char *name)
{
    gn_http_header_t  *h;
    gn_str_t           none = gn_null_string;

    h = gn_http_header_find(&gn_req(r)->head, name, strlen(name));

    return h ? h->value : none;
}


static int
gn_api_header_next(gn_request_t *r, size_t *i, gn_str_t *name,
    gn_str_t *value)
{
    gn_http_head_t  *h = &gn_req(r)->head;

    if (*i >= h->nheaders) {
        return 0;
    }

    *name = h->headers[*i].name;
    *value = h->headers[*i].value;
    (*i)++;

    return 1;
}


static gn_str_t
gn_api_pstr(gn_http_request_t *r, const char *s, size_t n)
{
    gn_str_t  v;

    v.data = gn_pnalloc(r->pool, n);
    v.len = v.data ? n : 0;
    if (v.data) {
        memcpy(v.data, s, n);
    }

    return v;
}


static gn_str_t
gn_api_number(gn_http_request_t *r, long long n)
{
    char  buf[32];

    return gn_api_pstr(r, buf, (size_t) snprintf(buf, sizeof(buf), "%lld",
                                                 n));
}


static int
gn_api_port(const void *sa)
{
    return ntohs(((const struct sockaddr_in *) sa)->sin_port);
}


/* The client certificate's variables (mod_ssl's names), in the order
 * of GN_TLS_CLIENT_*. */
static const char *const  gn_api_client_vars[GN_TLS_CLIENT_N] = {
    "SSL_CLIENT_VERIFY", "SSL_CLIENT_S_DN", "SSL_CLIENT_I_DN",
    "SSL_CLIENT_M_SERIAL", "SSL_CLIENT_FINGERPRINT"
};


static gn_str_t
gn_api_variable(gn_request_t *rq, const char *name)
{
    gn_http_request_t       *r = gn_req(rq);
    gn_conn_t               *c = r->c;
    struct sockaddr_storage  local;
    socklen_t                len;
    gn_str_t                 v = gn_null_string, proto, cipher, res, sni;
    gn_http_header_t        *h;
    gn_uint_t                i;
    char                     addr[INET6_ADDRSTRLEN];

    if (strcmp(name, "REMOTE_ADDR") == 0) {
        v = gn_http_peer_text(r);
        return gn_api_pstr(r, (const char *) v.data, v.len);
    }
    if (strcmp(name, "REMOTE_PORT") == 0) {
        if (r->peer != NULL && gn_api_port(r->peer) == 0) {
            return v;                  /* from a header: none */
        }
        return gn_api_number(r, gn_api_port(gn_http_peer(r)));
    }
    if (strcmp(name, "SERVER_ADDR") == 0 || strcmp(name, "SERVER_PORT") == 0) {
        len = sizeof(local);
        if (getsockname(c->io.fd, (struct sockaddr *) &local, &len) == -1) {
            return v;
        }
        if (name[7] == 'P') {
            return gn_api_number(r, gn_api_port(&local));
        }
        return gn_api_pstr(r, addr, gn_sockaddr_text((struct sockaddr *)
                                                     &local, addr,
                                                     sizeof(addr)));
    }
    if (strcmp(name, "SERVER_NAME") == 0) {
        if (r->srv->names != NULL && r->srv->names->nelts > 0) {
            return ((gn_str_t *) r->srv->names->elts)[0];
        }
        return gn_http_host_name(&r->head.host);   /* no port: RFC 3875 */
    }
    if (strcmp(name, "SERVER_PROTOCOL") == 0) {
        return r->head.version == GN_HTTP_VERSION_10
               ? gn_api_pstr(r, "HTTP/1.0", 8)
               : r->head.version == GN_HTTP_VERSION_20
               ? gn_api_pstr(r, "HTTP/2.0", 8) : gn_api_pstr(r, "HTTP/1.1", 8);
    }
    if (strcmp(name, "SERVER_SOFTWARE") == 0) {
        return gn_http_conf(r->loc)->server_tokens
               ? gn_api_pstr(r, "gannet/" PACKAGE_VERSION,
                             sizeof("gannet/" PACKAGE_VERSION) - 1)
               : gn_api_pstr(r, "gannet", 6);
    }
    if (strcmp(name, "REQUEST_METHOD") == 0) {
        return r->head.method_name;
    }
    if (strcmp(name, "REQUEST_URI") == 0) {
        return r->head.target;
    }
    if (strcmp(name, "SCRIPT_NAME") == 0) {
        return r->uri;
    }
    if (strcmp(name, "QUERY_STRING") == 0) {
        return r->head.query;
    }
    if (strcmp(name, "DOCUMENT_ROOT") == 0) {
        return gn_api_document_root((gn_request_t *) r);
    }
    if (strcmp(name, "CONTENT_LENGTH") == 0) {
        return r->head.content_length >= 0
               ? gn_api_number(r, (long long) r->head.content_length) : v;
    }
    if (strcmp(name, "CONTENT_TYPE") == 0) {
        h = gn_http_header_find(&r->head, "Content-Type", 12);
        return h ? h->value : v;
    }
    if (strcmp(name, "HTTPS") == 0) {
        return c->tls ? gn_api_pstr(r, "on", 2) : gn_api_pstr(r, "off", 3);
    }
    for (i = 0; c->tls != NULL && i < gn_nelems(gn_api_client_vars); i++) {
        if (strcmp(name, gn_api_client_vars[i]) == 0) {
            return gn_tls_client(c, i);     /* "" when there is none */
        }
    }
    if (strcmp(name, "TLS_PROTOCOL") == 0 || strcmp(name, "TLS_CIPHER") == 0) {
        if (c->tls == NULL) {
            return v;
        }
        gn_tls_conn_info(c, &proto, &cipher, &res, &sni);
        return name[4] == 'P' ? proto : cipher;
    }

    return v;
}


/* The directory r's files come from: root, or with alias the alias's
 * (http_file.h), as $document_root. */
static gn_str_t
gn_api_document_root(gn_request_t *rq)
{
    gn_http_request_t  *r = gn_req(rq);
    gn_str_t            dir, path;

    if (gn_http_file_map(r, &r->uri, &dir, &path) == GN_ERROR) {
        dir.len = 0;
    }
    return dir;
}


static gn_str_t
gn_api_mapped_path(gn_request_t *rq)
{
    gn_http_request_t  *r = gn_req(rq);
    gn_str_t            v, dir, path;

    if (gn_http_file_map(r, &r->uri, &dir, &path) == GN_ERROR) {
        v.len = 0;
        v.data = NULL;
        return v;
    }

    v.len = dir.len + path.len;
    v.data = gn_pnalloc(r->pool, v.len + 1);
    if (v.data == NULL) {
        v.len = 0;
        return v;
    }

    memcpy(v.data, dir.data, dir.len);
    memcpy(v.data + dir.len, path.data, path.len);
    v.data[v.len] = '\0';

    return v;
}


/* ---- 1.8: helpers for module writers ------------------------------------ */

static gn_str_t
gn_api_arg(gn_request_t *r, const char *name)
{
    gn_str_t  v;

    (void) gn_http_arg(&gn_req(r)->head.query, (const u_char *) name,
                       strlen(name), &v);
    return v;
}


/* Each Cookie field in turn: an HTTP/1.x client may send several, and
 * HTTP/2's crumbs arrive joined into one (http2.c). */
static gn_str_t
gn_api_cookie(gn_request_t *r, const char *name)
{
    gn_http_head_t  *h = &gn_req(r)->head;
    gn_str_t         v = gn_null_string;
    size_t           len;
    gn_uint_t        i;

    len = strlen(name);

    for (i = 0; i < h->nheaders; i++) {
        if (gn_str_caseeq(&h->headers[i].name, "Cookie")
            && gn_http_cookie(&h->headers[i].value, (const u_char *) name,
                              len, &v) == GN_OK)
        {
            break;
        }
    }

    return v;
}


/* A converter that measures (p NULL) or writes: gn_binlog_escape's
 * shape, which the others share. */
typedef size_t (*gn_api_conv_pt)(u_char *p, const u_char *s, size_t n,
    gn_uint_t arg);


/* in converted into request memory, measured first so that the pool
 * gives exactly what the result takes, NUL-terminated for modules that
 * hand it to C string functions. */
static gn_str_t
gn_api_convert(gn_request_t *r, gn_str_t in, gn_api_conv_pt conv,
    gn_uint_t arg)
{
    gn_str_t  v = gn_null_string;

    if (in.data == NULL) {
        return v;
    }

    v.len = in.len > 0 ? conv(NULL, in.data, in.len, arg) : 0;
    v.data = gn_pnalloc(gn_req(r)->pool, v.len + 1);
    if (v.data == NULL) {
        v.len = 0;
        return v;
    }

    if (v.len > 0) {
        (void) conv(v.data, in.data, in.len, arg);
    }
    v.data[v.len] = '\0';

    return v;
}


static size_t
gn_api_unescape_conv(u_char *p, const u_char *s, size_t n, gn_uint_t flags)
{
    return gn_http_unescape(p, s, n, flags & GN_UNESCAPE_PLUS);
}


static size_t
gn_api_escape_html_conv(u_char *p, const u_char *s, size_t n, gn_uint_t arg)
{
    (void) arg;
    return gn_str_escape_html(p, s, n);
}


static gn_str_t
gn_api_unescape(gn_request_t *r, gn_str_t in, unsigned flags)
{
    return gn_api_convert(r, in, gn_api_unescape_conv, flags);
}


static gn_str_t
gn_api_escape_html(gn_request_t *r, gn_str_t in)
{
    return gn_api_convert(r, in, gn_api_escape_html_conv, 0);
}


/* The access log's escape=json, so that a module and the log agree on
 * what valid JSON is made of any bytes. */
static gn_str_t
gn_api_escape_json(gn_request_t *r, gn_str_t in)
{
    return gn_api_convert(r, in, gn_binlog_escape, GN_BINLOG_ESC_JSON);
}


/* ---- body and response: in http_request.c, which owns the state ------- */

static int64_t
gn_api_body_length(gn_request_t *r)
{
    gn_http_head_t  *h = &gn_req(r)->head;

    if (h->chunked) {
        return -1;
    }

    return h->content_length > 0 ? (int64_t) h->content_length : 0;
}


static int
gn_api_read_body(gn_request_t *r, gn_body_pt cb, void *arg)
{
    return (int) gn_http_module_read_body(gn_req(r), cb, arg);
}


static int
gn_api_set_status(gn_request_t *r, int status)
{
    if (status < 100 || status > 599 || gn_req(r)->header_sent) {
        return GN_ERROR;
    }

    gn_req(r)->status = (gn_uint_t) status;
    return GN_OK;
}


static int
gn_api_set_header(gn_request_t *r, const char *name, const char *value)
{
    return (int) gn_http_module_header(gn_req(r), name, value, 1);
}


static int
gn_api_add_header(gn_request_t *r, const char *name, const char *value)
{
    return (int) gn_http_module_header(gn_req(r), name, value, 0);
}


static int
gn_api_write(gn_request_t *r, const void *data, size_t len)
{
    return (int) gn_http_module_write(gn_req(r), data, len);
}


static int
gn_api_send_file(gn_request_t *r, const char *path, int64_t offset,
    int64_t length)
{
    return (int) gn_http_module_send_file(gn_req(r), path, offset, length);
}


static int
gn_api_log_note(gn_request_t *r, const char *text)
{
    gn_http_request_t  *req = gn_req(r);
    u_char             *p;
    size_t              n;

    if (text == NULL) {
        return GN_ERROR;
    }

    n = strlen(text);
    p = gn_pnalloc(req->pool, req->module_log.len + n);
    if (p == NULL) {
        return GN_ERROR;
    }
    if (req->module_log.len > 0) {
        memcpy(p, req->module_log.data, req->module_log.len);
    }
    memcpy(p + req->module_log.len, text, n);
    req->module_log.data = p;
    req->module_log.len += n;

    return GN_OK;
}


static int
gn_api_send_fd(gn_request_t *r, int fd, int64_t offset, int64_t length)
{
    return (int) gn_http_module_send_fd(gn_req(r), fd, offset, length);
}


static int
gn_api_read_file(gn_request_t *r, const char *path, size_t max,
    const unsigned char **data, size_t *len)
{
    return (int) gn_http_module_read_file(gn_req(r), path, max, data, len);
}


static int
gn_api_flush(gn_request_t *r)
{
    return (int) gn_http_module_flush(gn_req(r));
}


static int
gn_api_finish(gn_request_t *r, int status)
{
    return (int) gn_http_module_finish(gn_req(r), status);
}


static void
gn_api_run_cleanup(void *data)
{
    void  **p = data;

    ((void (*)(void *)) p[0])(p[1]);
}


static int
gn_api_cleanup_add(gn_request_t *r, void (*fn)(void *arg), void *arg)
{
    gn_pool_cleanup_t  *cln;
    void              **p;

    cln = gn_pool_cleanup_add(gn_req(r)->pool, 2 * sizeof(void *));
    if (cln == NULL) {
        return GN_ERROR;
    }

    p = cln->data;
    p[0] = (void *) fn;
    p[1] = arg;
    cln->handler = gn_api_run_cleanup;

    return GN_OK;
}


/* ---- memory and configuration ------------------------------------------- */

static void *
gn_api_request_alloc(gn_request_t *r, size_t size)
{
    return gn_palloc(gn_req(r)->pool, size);
}


static void *
gn_api_module_alloc(size_t size)
{
    return gn_cycle ? gn_pcalloc(gn_cycle->pool, size) : NULL;
}


static void *
gn_api_module_conf(gn_request_t *r, const gn_module_t *m)
{
    return gn_module_conf(gn_req(r)->loc, m);
}


/* ---- the event loop ----------------------------------------------------- */

static void
gn_api_watch_event(gn_io_t *io, uint32_t events)
{
    gn_watch_t  *w = io->data;
    int          ev = 0;

    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
        ev |= GN_WATCH_READ;
    }
    if (events & (EPOLLOUT | EPOLLERR)) {
        ev |= GN_WATCH_WRITE;
    }

    if (w->r != NULL) {
        gn_http_module_enter(w->r);
        w->cb(&gn_api, w, w->fd, ev, w->arg);
        gn_http_module_leave(w->r);
    } else {
        w->cb(&gn_api, w, w->fd, ev, w->arg);
    }
}


static uint32_t
gn_api_epoll_events(int events)
{
    return ((events & GN_WATCH_READ) ? EPOLLIN | EPOLLRDHUP : 0)
           | ((events & GN_WATCH_WRITE) ? EPOLLOUT : 0);
}


static void
gn_api_watch_free(gn_watch_t *w)
{
    if (w->dead) {
        return;
    }
    w->dead = 1;

    if (w->io.fd != -1) {
        (void) gn_event_del(&w->io);
        w->io.fd = -1;                      /* events in the batch: stale */
    }
    w->next_dead = gn_api_dead;
    gn_api_dead = w;
}


static void
gn_api_watch_cleanup(void *data)
{
    gn_watch_t  *w = data;

    w->cln = NULL;
    gn_api_watch_free(w);
}


static gn_watch_t *
gn_api_watch_fd(gn_request_t *r, int fd, int events, gn_watch_pt cb,
    void *arg)
{
    gn_watch_t  *w;

    w = calloc(1, sizeof(gn_watch_t));
    if (w == NULL) {
        return NULL;
    }

    w->io.fd = fd;
    w->io.handler = gn_api_watch_event;
    w->io.data = w;
    w->cb = cb;
    w->arg = arg;
    w->r = gn_req(r);
    w->fd = fd;
    w->events = events;

    /* a watch that wants nothing yet is added with no events */
    if (gn_event_add(&w->io, gn_api_epoll_events(events)) != GN_OK) {
        free(w);
        return NULL;
    }

    if (r != NULL) {
        w->cln = gn_pool_cleanup_add(gn_req(r)->pool, 0);
        if (w->cln == NULL) {
            gn_api_watch_free(w);
            return NULL;
        }
        w->cln->handler = gn_api_watch_cleanup;
        w->cln->data = w;
    }

    return w;
}


static int
gn_api_watch_update(gn_watch_t *w, int events)
{
    if (w->dead) {
        return GN_ERROR;
    }

    w->events = events;
    return (int) gn_event_mod(&w->io, gn_api_epoll_events(events));
}


static void
gn_api_unwatch(gn_watch_t *w)
{
    if (w->cln != NULL) {
        w->cln->handler = NULL;             /* the request no longer owns it */
        w->cln = NULL;
    }
    gn_api_watch_free(w);
}


void
gn_api_collect(void)
{
    gn_watch_t  *w;

    while (gn_api_dead != NULL) {
        w = gn_api_dead;
        gn_api_dead = w->next_dead;
        free(w);
    }
}


static void
gn_api_timer_free(gn_mtimer_t *t)
{
    gn_timer_del(&t->timer);
    if (t->cln != NULL) {
        t->cln->handler = NULL;
    }
    free(t);
}


static void
gn_api_timer_fire(gn_timer_t *tm)
{
    gn_mtimer_t        *t = tm->data;
    gn_http_request_t  *r = t->r;
    gn_mtimer_pt        cb = t->cb;
    void               *arg = t->arg;

    /* one-shot: gone before the callback, which may add another */
    if (t->cln != NULL) {
        t->cln->handler = NULL;
    }
    free(t);

    if (r != NULL) {
        gn_http_module_enter(r);
        cb(&gn_api, NULL, arg);
        gn_http_module_leave(r);
    } else {
        cb(&gn_api, NULL, arg);
    }
}


static void
gn_api_timer_cleanup(void *data)
{
    gn_mtimer_t  *t = data;

    t->cln = NULL;
    gn_api_timer_free(t);
}


static gn_mtimer_t *
gn_api_timer_add(gn_request_t *r, uint64_t msec, gn_mtimer_pt cb, void *arg)
{
    gn_mtimer_t  *t;

    t = calloc(1, sizeof(gn_mtimer_t));
    if (t == NULL) {
        return NULL;
    }

    gn_timer_init_node(&t->timer, gn_api_timer_fire, t);
    t->cb = cb;
    t->arg = arg;
    t->r = gn_req(r);

    if (r != NULL) {
        t->cln = gn_pool_cleanup_add(gn_req(r)->pool, 0);
        if (t->cln == NULL) {
            free(t);
            return NULL;
        }
        t->cln->handler = gn_api_timer_cleanup;
        t->cln->data = t;
    }

    gn_timer_set(&t->timer, msec);
    return t;
}


static void
gn_api_timer_cancel(gn_mtimer_t *t)
{
    if (t != NULL) {
        gn_api_timer_free(t);
    }
}


/* ---- about the server ---------------------------------------------------- */

static int
gn_api_child_slot(void)
{
    return (int) gn_log_slot;
}


/* What modules may show of the server: the version only with
 * `server_tokens on` at the top level (a request's own setting is in
 * the SERVER_SOFTWARE variable). */
static const char *
gn_api_server_version(void)
{
    if (gn_cycle != NULL
        && gn_http_conf(gn_cycle->main_loc)->server_tokens == 1)
    {
        return "gannet/" PACKAGE_VERSION;
    }

    return "gannet";
}


static int
gn_api_max_slots(void)
{
    return GN_SB_SLOTS;
}


/* Slot -1: what the children reaped so far counted (pid 0, generation
 * the number of them, so a reader summing the live slots between two
 * equal values knows no child was folded in meanwhile). */
static int
gn_api_child_stats_retired(gn_child_stats_t *out)
{
    gn_sb_retired_t  rt;

    /* GN_BUSY: a master stuck in a fold, the numbers as they are; a
     * missing row would look like every exited child gone at once */
    (void) gn_scoreboard_retired(&rt);

    memset(out, 0, sizeof(*out));
    out->size = sizeof(*out);
    out->slot = -1;
    out->generation = rt.children;
    out->started = gn_sb->started;
    out->accepted = rt.accepted;
    out->requests = rt.requests;
    out->bytes_in = rt.bytes_in;
    out->bytes_out = rt.bytes_out;
    memcpy(out->status, rt.status, sizeof(out->status));
    out->tls_full = rt.tls_full;
    out->tls_resumed = rt.tls_resumed;
    out->tls_failed = rt.tls_failed;

    return 1;
}


static int
gn_api_child_stats(int slot, gn_child_stats_t *out)
{
    gn_sb_slot_t  *s;

    if (gn_sb != NULL && slot == -1) {
        return gn_api_child_stats_retired(out);
    }

    if (gn_sb == NULL || slot < 0 || slot >= GN_SB_SLOTS) {
        return 0;
    }

    s = &gn_sb->slots[slot];
    if (s->pid <= 0 || s->state == GN_SB_FREE || s->state == GN_SB_EXITED) {
        return 0;
    }

    memset(out, 0, sizeof(*out));
    out->size = sizeof(*out);
    out->slot = slot;
    out->pid = s->pid;
    out->generation = s->generation;
    out->state = s->state == GN_SB_STARTING ? GN_CHILD_STARTING
                 : s->state == GN_SB_DRAINING ? GN_CHILD_DRAINING
                 : GN_CHILD_RUNNING;
    out->started = s->started;
    out->connections = s->connections;
    out->accepted = s->accepted;
    out->requests = s->requests;
    out->bytes_in = s->bytes_in;
    out->bytes_out = s->bytes_out;
    memcpy(out->status, s->status, sizeof(out->status));
    out->tls_full = s->tls_full;
    out->tls_resumed = s->tls_resumed;
    out->tls_failed = s->tls_failed;

    return 1;
}


static int
gn_api_server_stats(gn_server_stats_t *out)
{
    gn_scache_stats_t  st;

    memset(out, 0, sizeof(*out));
    out->size = sizeof(*out);

    if (gn_sb != NULL) {
        out->master_pid = (int64_t) gn_sb->master_pid;
        out->generation = gn_sb->generation;
        out->started = gn_sb->started;
    }
    if (gn_cycle != NULL) {
        out->children = (uint32_t) gn_cycle->children;
        if (gn_tls_cache_stats(gn_cycle, &st) == GN_OK) {
            out->tls_cache_entries = st.entries;
            out->tls_cache_used = st.used;
            out->tls_cache_stores = st.stores;
            out->tls_cache_hits = st.hits;
            out->tls_cache_misses = st.misses;
            out->tls_cache_evictions = st.evictions;
        }
    }

    return GN_OK;
}


/* The end of the 1.3+ stats functions: the server's whole struct `ours`
 * (whose first member is the uint32_t `size`) goes out as far as the
 * caller's struct reaches, `size` saying how far. */
static int
gn_api_fill(void *out, void *ours, size_t ours_size, size_t size)
{
    uint32_t  n;

    if (size > ours_size) {
        size = ours_size;
    }
    n = (uint32_t) size;
    memcpy(ours, &n, sizeof(n));
    memcpy(out, ours, size);

    return 1;
}


/*
 * 1.3. The counters are copied into a whole struct of this server's
 * headers and then only as many bytes as the caller's struct has: a
 * module built before a member was appended has a smaller struct, and
 * writing sizeof of ours into it would overrun it. (child_stats and
 * server_stats memset and fill sizeof of the server's struct: safe only
 * as long as nothing is appended to them; an append there needs a new
 * function that takes the caller's size, as this one.)
 */
static int
gn_api_proto_stats(int slot, gn_proto_stats_t *out, size_t size)
{
    gn_proto_stats_t  ps;
    gn_sb_retired_t   rt;
    gn_sb_proto_t    *p;
    gn_sb_slot_t     *s;

    if (gn_sb == NULL || out == NULL
        || size < offsetof(gn_proto_stats_t, h1_requests)
        || slot < -1 || slot >= GN_SB_SLOTS)
    {
        return 0;
    }

    memset(&ps, 0, sizeof(ps));
    ps.slot = slot;

    if (slot == -1) {
        /* GN_BUSY: the numbers as they are (see child_stats(-1)) */
        (void) gn_scoreboard_retired(&rt);
        p = &rt.proto;

    } else {
        s = &gn_sb->slots[slot];
        if (s->pid <= 0 || s->state == GN_SB_FREE
            || s->state == GN_SB_EXITED)
        {
            return 0;
        }
        p = &s->proto;
        ps.h2_open = s->h2_open;
        ps.h2_streams = s->h2_streams;
    }

    ps.h1_requests = p->h1_requests;
    ps.h2_requests = p->h2_requests;
    ps.h2_connections = p->h2_connections;
    ps.h2_refused = p->h2_refused;
    ps.h2_glitch_limit = p->h2_glitch_limit;
    ps.h2_flood = p->h2_flood;
    ps.h2_header_limit = p->h2_header_limit;
    ps.h2_timeouts = p->h2_timeouts;
    ps.h2_client_resets = p->h2_client_resets;

    return gn_api_fill(out, &ps, sizeof(ps), size);
}


/* 1.6. Filled as proto_stats. */
static int
gn_api_upstream_stats(unsigned index, gn_upstream_server_stats_t *out,
    size_t size)
{
    gn_upstream_server_stats_t   us;
    gn_upstream_server_t        *s;
    gn_upstream_group_t         *g;

    if (gn_cycle == NULL || out == NULL
        || size < offsetof(gn_upstream_server_stats_t, requests)
        || gn_proxy_server(gn_cycle, index, &g, &s) != GN_OK
        || s->stats == NULL)
    {
        return 0;
    }

    memset(&us, 0, sizeof(us));
    us.state = s->stats->state;
    memcpy(us.upstream, g->name.data, gn_min(g->name.len,
                                             sizeof(us.upstream) - 1));
    memcpy(us.server, s->addr.name.data, gn_min(s->addr.name.len,
                                                sizeof(us.server) - 1));
    us.weight = (uint32_t) s->weight;
    us.backup = (uint32_t) s->backup;
    us.requests = s->stats->requests;
    memcpy(us.responses, s->stats->responses, sizeof(us.responses));
    us.fail_connect = s->stats->fail[GN_UPSTREAM_FAIL_CONNECT];
    us.fail_timeout = s->stats->fail[GN_UPSTREAM_FAIL_TIMEOUT];
    us.fail_invalid = s->stats->fail[GN_UPSTREAM_FAIL_INVALID];
    us.fail_cut = s->stats->fail[GN_UPSTREAM_FAIL_CUT];
    us.disabled = s->stats->disabled;
    memcpy(us.time_le, s->stats->time, sizeof(us.time_le));
    us.active = s->stats->active;
    us.idle = s->stats->idle;

    return gn_api_fill(out, &us, sizeof(us), size);
}


/* 1.7. Filled as proto_stats. */
static int
gn_api_limit_stats(unsigned index, gn_limit_zone_stats_t *out, size_t size)
{
    gn_limit_zone_stats_t  ls;
    gn_limit_stats_t       st;
    gn_str_t               name;
    gn_uint_t              conn;

    if (out == NULL || size < offsetof(gn_limit_zone_stats_t, passed)
        || gn_limit_zone_stats(index, &name, &conn, &st) != GN_OK)
    {
        return 0;
    }

    memset(&ls, 0, sizeof(ls));
    ls.kind = conn ? GN_LIMIT_ZONE_CONN : GN_LIMIT_ZONE_REQ;
    memcpy(ls.name, name.data, gn_min(name.len, sizeof(ls.name) - 1));
    ls.passed = st.passed;
    ls.delayed = st.delayed;
    ls.rejected = st.rejected;

    return gn_api_fill(out, &ls, sizeof(ls), size);
}


/* 1.4. Filled as proto_stats: a whole struct, then the caller's size. */
static int
gn_api_memcached_stats(unsigned index, gn_memcached_stats_t *out,
    size_t size)
{
    gn_memcached_stats_t  ms;
    gn_memc_stats_t       st;
    gn_str_t              name;

    if (gn_cycle == NULL || out == NULL
        || size < offsetof(gn_memcached_stats_t, lookups)
        || gn_tls_memc_stats(gn_cycle, index, &name, &st) != GN_OK)
    {
        return 0;
    }

    memset(&ms, 0, sizeof(ms));
    ms.state = st.state;
    memcpy(ms.address, name.data, gn_min(name.len, sizeof(ms.address) - 1));
    ms.lookups = st.lookups;
    ms.hits = st.hits;
    ms.misses = st.misses;
    ms.timeouts = st.timeouts;
    ms.skipped = st.skipped;
    ms.stores = st.stores;
    ms.store_failures = st.store_failures;
    ms.err_connect = st.err_connect;
    ms.err_protocol = st.err_protocol;
    ms.err_stall = st.err_stall;
    ms.rtt_us = st.rtt_us;
    ms.rtt_n = st.rtt_n;

    return gn_api_fill(out, &ms, sizeof(ms), size);
}


static int
gn_api_tls_ticket_stats(gn_tls_ticket_stats_t *out, size_t size)
{
    gn_tls_ticket_stats_t  ts;
    gn_tls_key_stats_t     ks;

    if (gn_cycle == NULL || out == NULL
        || size < offsetof(gn_tls_ticket_stats_t, created)
        || gn_tls_key_stats(gn_cycle, &ks) != GN_OK)
    {
        return 0;
    }

    memset(&ts, 0, sizeof(ts));
    ts.source = (uint32_t) ks.source;
    memcpy(ts.id, ks.id, sizeof(ks.id));
    ts.created = ks.created;
    ts.loaded = ks.loaded;
    ts.period = ks.period;
    ts.tickets_issued = ks.issued;
    ts.resumed_ticket = ks.resumed_ticket;
    ts.resumed_id = ks.resumed_id;

    return gn_api_fill(out, &ts, sizeof(ts), size);
}


static int
gn_api_on_drained(gn_request_t *r, gn_drained_pt cb, void *arg)
{
    return (int) gn_http_module_on_drained(gn_req(r), (void (*)(void)) cb,
                                           arg);
}


const gn_api_t  gn_api = {
    sizeof(gn_api_t), GN_ABI_MAJOR, GN_ABI_MINOR,
    gn_api_log,
    gn_api_method,
    gn_api_uri,
    gn_api_query,
    gn_api_request_uri,
    gn_api_http_version,
    gn_api_header,
    gn_api_header_next,
    gn_api_variable,
    gn_api_document_root,
    gn_api_mapped_path,
    gn_api_body_length,
    gn_api_read_body,
    gn_api_set_status,
    gn_api_set_header,
    gn_api_add_header,
    gn_api_write,
    gn_api_send_file,
    gn_api_flush,
    gn_api_finish,
    gn_api_cleanup_add,
    gn_api_request_alloc,
    gn_api_module_alloc,
    gn_api_module_conf,
    gn_api_watch_fd,
    gn_api_watch_update,
    gn_api_unwatch,
    gn_api_timer_add,
    gn_api_timer_cancel,
    gn_api_child_slot,
    gn_api_server_version,
    gn_api_max_slots,
    gn_api_child_stats,
    gn_api_server_stats,
    gn_api_read_file,
    gn_module_conf_error,
    gn_api_proto_stats,
    gn_api_memcached_stats,
    gn_api_tls_ticket_stats,
    gn_api_on_drained,
    gn_api_upstream_stats,
    gn_api_limit_stats,
    gn_api_arg,
    gn_api_cookie,
    gn_api_unescape,
    gn_api_escape_html,
    gn_api_escape_json,
    gn_api_send_fd,
    gn_api_log_note
};
