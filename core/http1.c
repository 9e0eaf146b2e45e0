/*
 * HTTP/1 on a connection: the protocol of every listener (the transport
 * reaches it through gn_http_proto), and the stream its requests reach
 * their client through (gn_http1_stream). The request state machine:
 *
 *   READING --head parsed--> handler --> WRITING --sent--> log -->
 *       keep-alive: KEEPALIVE (or straight to READING with pipelined bytes)
 *       else:       close, or LINGERING when the client may still be
 *                   sending (so our response is not destroyed by a RST)
 *
 * The head of a request always starts at c->buf[0]: after a response,
 * pipelined bytes that follow the head are moved to the front. Memory for
 * the request comes from c->pool, reset after each request.
 */

#include "gn_config.h"

#include <netinet/tcp.h>

#include "http1.h"
#include "realip.h"
#include "http2.h"
#include "http_core.h"
#include "lookup.h"
#include "http_response.h"
#include "http_file.h"
#include "access_log.h"
#include "scoreboard.h"
#include "log.h"
#include "tls.h"
#include "http_module.h"




static void gn_http_read(gn_conn_t *c);
static void gn_http_process(gn_conn_t *c, size_t head_len);
static void gn_http_finish(gn_conn_t *c);
static void gn_http_discard(gn_conn_t *c);
static void gn_http_close(gn_conn_t *c, gn_uint_t status);
static void gn_http_close_head(gn_conn_t *c, gn_uint_t status);
static void gn_http_init_conn(gn_conn_t *c);
static void gn_http_conn_timeout(gn_timer_t *t);
static void gn_http_closed(gn_conn_t *c);
static gn_srv_conf_t *gn_http_tls_server(gn_conn_t *c, const u_char *name,
    size_t len);
static gn_msec_t gn_http_handshake_timeout(gn_conn_t *c);
static void gn_http_log_rejected(gn_conn_t *c, const u_char *data,
    size_t len, size_t sent, size_t head);
static void gn_http_set_state(gn_conn_t *c, gn_conn_state_e state,
    gn_msec_t timeout);
static void gn_http_conn_handler(gn_conn_t *c);
static void gn_http_respond(gn_conn_t *c);
static void gn_http_write(gn_conn_t *c);
static void gn_http_body_start(gn_conn_t *c);
static void gn_http1_respond(gn_http_request_t *r);
static void gn_http1_send(gn_http_request_t *r);
static gn_int_t gn_http1_frame(gn_http_request_t *r, const u_char *data,
    size_t len);
static gn_int_t gn_http1_frame_end(gn_http_request_t *r);
static void gn_http1_read_body(gn_http_request_t *r);
static void gn_http1_wait(gn_http_request_t *r);
static void gn_http1_abort(gn_http_request_t *r);
static void gn_http1_tunnel(gn_http_request_t *r, gn_conn_handler_pt handler,
    gn_conn_handler_pt on_close, void *data);
static gn_uint_t gn_http1_verbatim(gn_http_request_t *r);
static gn_int_t gn_http_server_limits(gn_http_request_t *r);
static gn_srv_conf_t *gn_http_log_server(gn_conn_t *c);
static gn_uint_t gn_http_alpn(gn_conn_t *c, gn_srv_conf_t *sc,
    const gn_str_t **protos);


/* What HTTP/1 gives the transport: see conn.h. */
static const gn_conn_proto_t  gn_http_proto = {
    gn_http_init_conn,
    gn_http_tls_server,
    gn_http_handshake_timeout,
    gn_http_log_rejected,
    gn_http_alpn,
    gn_http_log_server,
    gn_string("HTTP/1.1 503 Service Unavailable\r\n"
              "Server: gannet\r\n"
              "Content-Type: text/plain\r\n"
              "Content-Length: 20\r\n"
              "Connection: close\r\n"
              "\r\n"
              "Server is too busy.\n")
};

/* What an HTTP/1 request reaches its client through: see
 * http_request.h. */
static const gn_http_stream_t  gn_http1_stream = {
    gn_http_server_limits,
    gn_http1_respond,
    gn_http1_send,
    gn_http1_frame,
    gn_http1_frame_end,
    gn_http1_read_body,
    gn_http1_wait,
    gn_http1_abort,
    gn_http1_tunnel,
    gn_http1_verbatim
};

static u_char  *gn_http_conn_free;        /* gn_http_conn_t, linked */


/* The connection's read buffer holds a request head: it is sized by the
 * listener's default server (all that is known before the head). */
static u_char *
gn_http_buf_get(gn_conn_t *c)
{
    gn_loc_conf_t  *lc = c->listen->default_srv->loc;

    return gn_conn_buf_get(c, gn_http_conf(lc)->client_max_header_size);
}


static void
gn_http_set_state(gn_conn_t *c, gn_conn_state_e state, gn_msec_t timeout)
{
    c->state = state;
    c->state_since = gn_current_msec;
    gn_timer_set(&c->timer, timeout);
}


void
gn_http_listen_init(gn_cycle_t *cycle)
{
    gn_listen_t  *ls = cycle->listening.elts;
    gn_uint_t     i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls[i].proto = &gn_http_proto;
        ls[i].layer = ls[i].tls ? &gn_tls_layer : NULL;
    }
}


/* The HTTP/1 state of c (c->data), made once per connection: from a free
 * list, so that a busy child allocates none. NULL: out of memory
 * (logged). */
static gn_http_conn_t *
gn_http_conn_get(gn_conn_t *c)
{
    gn_http_conn_t  *hc = c->data;

    if (hc != NULL) {
        return hc;
    }

    hc = (gn_http_conn_t *) gn_free_list_pop(&gn_http_conn_free);
    if (hc == NULL) {
        hc = malloc(sizeof(gn_http_conn_t));
        if (hc == NULL) {
            gn_log_error(GN_LOG_CRIT, &c->log, errno, "malloc(%zu) failed",
                         sizeof(gn_http_conn_t));
            return NULL;
        }
    }

    memset(hc, 0, sizeof(gn_http_conn_t));
    c->data = hc;
    c->handler = gn_http_conn_handler;
    c->on_close = gn_http_closed;

    return hc;
}


/* The listener's init_conn: the connection is HTTP's. After a TLS
 * handshake the header timeout that started with the connection keeps
 * running. */
static void
gn_http_init_conn(gn_conn_t *c)
{
    gn_loc_conf_t  *lc = c->listen->default_srv->loc;
#if (GN_HAVE_HTTP2)
    gn_str_t        alpn;

    alpn = gn_tls_alpn(c);
    if (gn_str_eq(&alpn, "h2")) {
        gn_http2_init_conn(c);
        return;
    }
#endif

    if (gn_http_conn_get(c) == NULL) {
        gn_conn_close(c);
        return;
    }

    c->timer.handler = gn_http_conn_timeout;

    if (c->state == GN_CONN_HANDSHAKE) {
        c->state = GN_CONN_READING;
    } else {
        gn_http_set_state(c, GN_CONN_READING,
                          gn_http_conf(lc)->client_header_timeout);
    }

    gn_http_read(c);
}


/* TLS's questions (see conn.h): the server block SNI names, and the
 * time a handshake may take (that of the head that follows it). */
static gn_srv_conf_t *
gn_http_tls_server(gn_conn_t *c, const u_char *name, size_t len)
{
    return gn_lookup_server(c->listen, name, len);
}


/* What is left of the default server's client_header_timeout since the
 * connection was accepted: a PROXY protocol header and the TLS
 * handshake after it share it. */
static gn_msec_t
gn_http_handshake_timeout(gn_conn_t *c)
{
    gn_msec_t  t, spent;

    t = gn_http_conf(c->listen->default_srv->loc)->client_header_timeout;
    spent = gn_current_msec - c->accepted;

    return spent < t ? t - spent : 1;
}


/* The proto's log_server: the server block of c's request, else of
 * its listener (and for HTTP/2, whose requests are many). */
static gn_srv_conf_t *
gn_http_log_server(gn_conn_t *c)
{
    gn_http_conn_t  *hc = c->data;

    if (c->handler != gn_http_conn_handler) {
        return c->listen->default_srv;
    }

    return hc != NULL && hc->r != NULL ? hc->r->srv : c->listen->default_srv;
}


/* The proto's alpn: h2 first where the server block has it on and its
 * TLS settings allow only the suites RFC 9113 9.2 accepts. */
static gn_uint_t
gn_http_alpn(gn_conn_t *c, gn_srv_conf_t *sc, const gn_str_t **protos)
{
    static const gn_str_t  both[] = {
        gn_string("h2"), gn_string("http/1.1")
    };

    (void) c;

#if (GN_HAVE_HTTP2)
    if (gn_http_conf(sc->loc)->http2 && gn_tls_srv_aead_pfs(sc)) {
        *protos = both;
        return 2;
    }
#else
    (void) sc;
#endif

    *protos = &both[1];
    return 1;
}


static void
gn_http_conn_handler(gn_conn_t *c)
{
    gn_http_conn_t  *hc = c->data;

    switch (c->state) {

    case GN_CONN_READING:
    case GN_CONN_KEEPALIVE:
        if (c->read_ready) {
            gn_http_read(c);
        }
        break;

    case GN_CONN_WRITING:
        if (c->hup && hc->r->streaming && !hc->r->finished
            && hc->r->sbuf_pos == hc->r->sbuf_last)
        {
            /* waiting for a module's next bytes, and the client left */
            gn_log_error(GN_LOG_INFO, &c->log, 0, "client closed the "
                         "connection while the response was streamed");
            gn_http_close(c, 499);
            break;
        }
        if (c->write_ready) {
            gn_http_write(c);
        }
        break;

    case GN_CONN_DISCARDING:
    case GN_CONN_BODY:
        if (c->read_ready) {
            gn_http_discard(c);
        }
        break;

    case GN_CONN_PENDING:
        if (c->hup) {
            /* the client went away: the module's request ends here */
            gn_log_error(GN_LOG_INFO, &c->log, 0, "client closed the "
                         "connection while the response was being made");
            gn_http_close(c, 499);
        }
        break;

    case GN_CONN_HANDSHAKE:
    case GN_CONN_LINGERING:
    case GN_CONN_TUNNEL:
        break;                          /* the transport's, the relay's */
    }
}


/*
 * A timeout logs the request it cuts, as nginx: 408 for a client that
 * did not send its head or body in time, or did not take the response
 * (once bytes of a response went out, the line keeps the status sent and
 * shows the bytes that did); 504 when a module did not answer in time.
 * Nothing is sent: the connection closes.
 */
static void
gn_http_conn_timeout(gn_timer_t *t)
{
    gn_conn_t  *c = t->data;
    gn_uint_t   status = 408;

    switch (c->state) {

    case GN_CONN_READING:
        if (c->buf_len > 0) {
            c->log.action = "reading the request head";
            gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
            gn_http_close_head(c, 408);
            return;
        }
        break;

    case GN_CONN_WRITING:
        c->log.action = "sending the response";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        break;

    case GN_CONN_DISCARDING:
    case GN_CONN_BODY:
        c->log.action = "reading the request body";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        break;

    case GN_CONN_PENDING:
        c->log.action = "waiting for a module to finish the response";
        gn_log_error(GN_LOG_ERR, &c->log, 0, "timed out");
        status = 504;
        break;

    default:
        break;
    }

    gn_http_close(c, status);
}


/* Reads what the socket has into the head buffer. Returns bytes read,
 * 0 at EOF, GN_AGAIN, or GN_ERROR (connection to be closed). */
static ssize_t
gn_http_recv(gn_conn_t *c)
{
    ssize_t  n;

    if (c->buf_len == c->buf_size) {
        return GN_AGAIN;      /* full: the scanner reports the limit */
    }

    n = c->ops->recv(c, c->buf + c->buf_len, c->buf_size - c->buf_len);

    if (n == GN_AGAIN) {
        c->read_ready = 0;
        return GN_AGAIN;
    }

    if (n == GN_ERROR) {
        if (errno != ECONNRESET) {
            gn_log_error(GN_LOG_INFO, &c->log, errno, "recv() failed");
        }
        return GN_ERROR;
    }

    if (n == 0) {
        c->eof = 1;
        return 0;
    }

    c->buf_len += (size_t) n;
    if (gn_sb_me != NULL) {
        gn_sb_me->bytes_in += (uint64_t) n;
    }

    return n;
}


static gn_http_request_t *
gn_http_request_create(gn_conn_t *c, size_t head_len)
{
    gn_http_conn_t     *hc = c->data;
    gn_http_request_t  *r;

    if (gn_conn_pool_get(c) == NULL) {
        return NULL;
    }

    r = gn_pcalloc(c->pool, sizeof(gn_http_request_t));
    if (r == NULL) {
        return NULL;
    }

    r->c = c;
    r->stream = &gn_http1_stream;
    r->pool = c->pool;
    r->raw = c->buf;
    r->head_len = head_len;
    r->last_modified = -1;
    r->content_length = -1;
    r->start_msec = gn_current_msec;
    r->srv = c->listen->default_srv;
    r->loc = r->srv->loc;
    hc->r = r;
    gn_realip_apply_proxy(r);

    return r;
}


/* Sends the response set up in r (head built here). */
static void
gn_http_respond(gn_conn_t *c)
{
    gn_http_conn_t     *hc = c->data;
    gn_http_request_t  *r = hc->r;
    gn_http_conf_t     *hcf = gn_http_conf(r->loc);

    if (r->close) {
        c->close = 1;
    }
    if (r->linger) {
        c->linger = 1;
    }

    /* A body the head announced and nobody read would be taken for the
     * next request (smuggling): whatever the answer, close after it. */
    if ((r->head.content_length > 0 || r->head.chunked) && !r->body_done) {
        c->close = 1;
        c->linger = 1;
    }

    /* keep-alive decision, made once the response is known */
    r->keepalive = r->head.keepalive && !c->close && !gn_conn_draining
                   && hcf->keepalive_timeout > 0
                   && (hcf->keepalive_requests == 0
                       || hc->requests < (gn_uint_t) hcf->keepalive_requests);
    if (!r->keepalive) {
        c->close = 1;
    }

    if (r->keepalive || r->streaming) {
        gn_conn_nodelay(c);       /* small writes must not wait for ACKs */
    }

    if (gn_http_response_head(r) != GN_OK) {
        gn_conn_close(c);
        return;
    }

    gn_http_set_state(c, GN_CONN_WRITING, hcf->send_timeout);
    gn_http_write(c);
}


/* A request that could not even be parsed: answer `status` and close. */
static void
gn_http_reject(gn_conn_t *c, gn_uint_t status, const char *why)
{
    gn_http_request_t  *r;

    c->log.action = "reading the request head";
    gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent invalid request: %s "
                 "(answered %u)", why, (unsigned) status);
    c->log.action = NULL;

    r = gn_http_request_create(c, c->buf_len);
    if (r == NULL) {
        gn_conn_close(c);
        return;
    }

    c->close = 1;
    c->linger = 1;

    if (gn_http_response_error(r, status) != GN_OK) {
        gn_conn_close(c);
        return;
    }

    gn_http_respond(c);
}


/* The head limits of the listener's default server (the Host that
 * picks another server is not known before the head is read). */
static void
gn_http_limits(gn_loc_conf_t *lc, gn_http_limits_t *lim)
{
    lim->max_line = gn_http_conf(lc)->client_max_request_line;
    lim->max_head = gn_http_conf(lc)->client_max_header_size;
    lim->max_headers = (size_t) gn_http_conf(lc)->client_max_headers;
    lim->max_field = gn_http_conf(lc)->client_max_header_size;
}


static void
gn_http_read(gn_conn_t *c)
{
    gn_http_conn_t    *hc = c->data;
    gn_loc_conf_t     *lc = c->listen->default_srv->loc;
    gn_http_limits_t   lim;
    size_t             head_len;
    ssize_t            n;
    gn_int_t           rc;

    if (c->buf == NULL && gn_http_buf_get(c) == NULL) {
        gn_conn_close(c);
        return;
    }

    gn_http_limits(lc, &lim);

    for ( ;; ) {

#if (GN_HAVE_HTTP2)
        /* "listen ... http2": a connection that starts with the HTTP/2
         * preface is HTTP/2 (prior knowledge, RFC 9113 3.3) */
        if (c->listen->http2 && hc->requests == 0 && c->tls == NULL
            && c->buf_len > 0)
        {
            rc = gn_http2_preface(c->buf, c->buf_len);
            if (rc == GN_OK) {
                c->data = NULL;
                c->on_close = NULL;
                gn_free_list_push(&gn_http_conn_free, (u_char *) hc);
                gn_http2_init_conn(c);
                return;
            }
            if (rc == GN_AGAIN && c->buf_len < c->buf_size) {
                goto more;
            }
        }
#endif

        if (c->buf_len > hc->scan.pos) {
            rc = gn_http_parse_head_end(&hc->scan, c->buf, c->buf_len, &lim,
                                        &head_len);
            if (rc == GN_OK) {
                gn_http_process(c, head_len);
                return;
            }

            if (rc != GN_AGAIN) {
                gn_http_reject(c, (gn_uint_t) rc, hc->scan.err);
                return;
            }
        }

#if (GN_HAVE_HTTP2)
    more:
#endif
        if (!c->read_ready) {
            if (c->buf_len == 0 && c->state == GN_CONN_KEEPALIVE) {
                gn_conn_buf_put(c);        /* idle: hold no buffer */
            }
            return;
        }

        n = gn_http_recv(c);

        if (n == GN_AGAIN) {
            if (c->buf_len == c->buf_size) {
                gn_http_reject(c, 431, "request head too large");
                return;
            }
            continue;                       /* read_ready now 0 */
        }

        if (n == GN_ERROR || n == 0) {
            if (n == 0 && c->buf_len > 0) {
                gn_log_error(GN_LOG_INFO, &c->log, 0,
                             "client closed the connection while sending "
                             "the request head");
            }
            gn_http_close_head(c, 400);       /* as nginx */
            return;
        }

        if (c->state == GN_CONN_KEEPALIVE) {
            gn_http_set_state(c, GN_CONN_READING,
                              gn_http_conf(lc)->client_header_timeout);
        }
    }
}








/*
 * The head was read within the limits of the listener's default server
 * (gn_http_limits()); those of the server the Host or SNI chose apply as
 * well, so the head is scanned again when they differ. Returns GN_OK or
 * the 414 or 431 they give.
 */
static gn_int_t
gn_http_server_limits(gn_http_request_t *r)
{
    gn_conn_t         *c = r->c;
    gn_http_limits_t   def, lim;
    gn_http_scan_t     s;
    size_t             head_len;
    gn_int_t           rc;

    gn_http_limits(c->listen->default_srv->loc, &def);
    gn_http_limits(r->loc, &lim);

    if (memcmp(&def, &lim, sizeof(gn_http_limits_t)) == 0) {
        return GN_OK;
    }

    memset(&s, 0, sizeof(gn_http_scan_t));

    rc = gn_http_parse_head_end(&s, c->buf, r->head_len, &lim, &head_len);
    if (rc == GN_OK || rc == GN_AGAIN) {
        return GN_OK;
    }

    gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent a request above "
                 "the limits of its server: %s (answered %d)", s.err,
                 (int) rc);
    c->close = 1;
    c->linger = 1;

    return rc;
}




static void
gn_http_process(gn_conn_t *c, size_t head_len)
{
    static gn_http_header_t  *scratch;
    static size_t             scratch_n;
    gn_http_conn_t           *hc = c->data;
    gn_http_request_t        *r;
    gn_loc_conf_t            *lc = c->listen->default_srv->loc;
    gn_http_limits_t          lim;
    gn_int_t                  rc;

    /* Header fields are parsed into a per-child scratch array and only
     * those present are copied into the request's pool. */
    if (scratch_n < (size_t) gn_http_conf(lc)->client_max_headers) {
        free(scratch);
        scratch_n = (size_t) gn_http_conf(lc)->client_max_headers;
        scratch = malloc(scratch_n * sizeof(gn_http_header_t));
        if (scratch == NULL) {
            scratch_n = 0;
            gn_conn_close(c);
            return;
        }
    }

    r = gn_http_request_create(c, head_len);
    if (r == NULL) {
        gn_conn_close(c);
        return;
    }
    hc->requests++;
    hc->body_left = 0;
    hc->body_chunked = 0;

    gn_http_limits(lc, &lim);

    rc = gn_http_parse_head(&r->head, c->buf, head_len, &lim, scratch,
                            (size_t) gn_http_conf(lc)->client_max_headers);

    if (rc == GN_OK) {
        r->head.headers = gn_palloc(r->pool, (r->head.nheaders + 1)
                                             * sizeof(gn_http_header_t));
        if (r->head.headers == NULL) {
            gn_conn_close(c);
            return;
        }
        memcpy(r->head.headers, scratch,
               r->head.nheaders * sizeof(gn_http_header_t));

        gn_http_core_start(r);
        return;
    }

    c->log.action = "reading the request head";
    gn_log_error(GN_LOG_INFO, &c->log, 0,
                 "client sent invalid request: %s (answered %d)",
                 r->head.err ? r->head.err : "malformed", (int) rc);
    c->log.action = NULL;
    r->head.headers = NULL;
    r->head.nheaders = 0;
    c->close = 1;
    c->linger = 1;
    rc = gn_http_response_error(r, (gn_uint_t) rc);

    if (rc != GN_OK) {
        gn_conn_close(c);
        return;
    }

    gn_http_respond(c);
}


/* Sends a file segment without sendfile(): through a buffer (sendfile
 * off; and the path TLS will take). */
static ssize_t
gn_http_send_file_buffered(gn_conn_t *c, gn_http_seg_t *seg)
{
    u_char        buf[16384];
    struct iovec  iov;
    ssize_t       n;

    n = pread(seg->fd, buf, gn_min(seg->len, sizeof(buf)), seg->off);
    if (n <= 0) {
        if (n == 0) {
            errno = 0;
        }
        return GN_ERROR;
    }

    iov.iov_base = buf;
    iov.iov_len = (size_t) n;

    n = c->ops->writev(c, &iov, 1, seg->len > (size_t) n);
    if (n > 0) {
        seg->off += n;
    }

    return n;
}


/* Sends memory segments cur.. with one writev (up to 16 at a time). */
static ssize_t
gn_http_send_mem(gn_conn_t *c, gn_http_request_t *r)
{
    struct iovec    iov[17];
    gn_http_seg_t  *seg;
    gn_uint_t       i, n, stream;
    ssize_t         sent;
    size_t          left;
    int             more;

    for (n = 0, i = r->cur; i < r->nsegs && n < 16; i++) {
        if (r->segs[i].fd != -1) {
            break;
        }
        iov[n].iov_base = r->segs[i].pos;
        iov[n].iov_len = r->segs[i].len;
        n++;
    }

    /*
     * MSG_MORE when more memory follows (the buffered file path), but not
     * before a sendfile() segment: there it cost 40-60% more server CPU
     * on a 100 KiB response (bench/RESULTS.md, "MSG_MORE before
     * sendfile"). And with the last bytes of a response after which the
     * connection closes: the kernel keeps the tail segment until the
     * close() or shutdown() that follows at once, which adds the FIN to
     * it: one packet instead of two.
     */
    if (i < r->nsegs) {
        more = (r->segs[i].fd == -1 || !gn_file_conf(r->loc)->sendfile);
    } else {
        more = (c->close && !r->streaming);
    }

    /* a streamed response's head goes with what is queued of its body:
     * one write, not two (a proxied response, a module's) */
    stream = i == r->nsegs && n < 16 && r->streaming && !r->header_only
             && r->sbuf_pos < r->sbuf_last;
    if (stream) {
        iov[n].iov_base = r->sbuf + r->sbuf_pos;
        iov[n].iov_len = r->sbuf_last - r->sbuf_pos;
        n++;
    }

    sent = c->ops->writev(c, iov, (int) n, more);
    if (sent <= 0) {
        return sent;
    }

    for (left = (size_t) sent, i = r->cur; left > 0 && i < r->nsegs; i++) {
        seg = &r->segs[i];
        if (left >= seg->len) {
            left -= seg->len;
            seg->len = 0;
        } else {
            seg->pos += left;
            seg->len -= left;
            left = 0;
        }
    }

    if (stream) {
        r->sbuf_pos += left;                 /* gn_http_write_sbuf next */
    }

    return sent;
}


/* Sends streamed bytes (a module's, framed). GN_DONE when the response
 * is complete, GN_BUSY when all is sent but more will come, GN_AGAIN,
 * or GN_ERROR. */
static gn_int_t
gn_http_write_sbuf(gn_conn_t *c, gn_http_request_t *r)
{
    struct iovec   iov;
    ssize_t        n;

    if (r->header_only) {
        r->sbuf_pos = r->sbuf_last;        /* HEAD, 204, 304: no body */
    }

    while (r->sbuf_pos < r->sbuf_last) {
        iov.iov_base = r->sbuf + r->sbuf_pos;
        iov.iov_len = r->sbuf_last - r->sbuf_pos;

        n = c->ops->writev(c, &iov, 1, 0);
        if (n == GN_AGAIN) {
            gn_http_module_sent(r);
            return GN_AGAIN;
        }
        if (n <= 0) {
            return GN_ERROR;
        }

        r->sbuf_pos += (size_t) n;
        r->bytes_sent += n;
        gn_timer_set(&c->timer, gn_http_conf(r->loc)->send_timeout);
    }

    r->sbuf_pos = r->sbuf_last = 0;
    gn_http_module_sent(r);

    return r->finished ? GN_DONE : GN_BUSY;
}


static void
gn_http_write(gn_conn_t *c)
{
    gn_http_conn_t     *hc = c->data;
    gn_http_request_t  *r = hc->r;
    gn_http_seg_t      *seg;
    ssize_t             n;

    while (r->cur < r->nsegs) {
        seg = &r->segs[r->cur];

        if (seg->len == 0) {
            r->cur++;
            continue;
        }

        if (seg->fd == -1) {
            n = gn_http_send_mem(c, r);

        } else if (gn_file_conf(r->loc)->sendfile) {
            n = c->ops->sendfile(c, seg->fd, &seg->off,
                                 gn_min(seg->len, (size_t) 1 << 30));
            if (n == 0) {
                errno = 0;
                n = GN_ERROR;             /* the file shrank */
            }
            if (n > 0) {
                seg->len -= (size_t) n;
            }

        } else {
            n = gn_http_send_file_buffered(c, seg);
            if (n > 0) {
                seg->len -= (size_t) n;
            }
        }

        if (n == GN_AGAIN) {
            c->write_ready = 0;
            return;
        }

        if (n == GN_ERROR) {
            if (errno != EPIPE && errno != ECONNRESET) {
                c->log.action = "sending the response";
                gn_log_error(errno ? GN_LOG_INFO : GN_LOG_ERR, &c->log, errno,
                             errno ? "send failed"
                                   : "file shrank while being sent");
                c->log.action = NULL;
            }
            gn_conn_close(c);
            return;
        }

        r->bytes_sent += n;
        gn_timer_set(&c->timer, gn_http_conf(r->loc)->send_timeout);
    }

    if (r->streaming) {
        switch (gn_http_write_sbuf(c, r)) {
        case GN_AGAIN:
            c->write_ready = 0;
            return;
        case GN_ERROR:
            gn_conn_close(c);
            return;
        case GN_BUSY:
            return;                 /* all sent; the module makes more */
        default:
            break;                  /* GN_DONE */
        }
    }

    gn_http_finish(c);
}


static void
gn_http_log(gn_http_request_t *r)
{
    r->conn_requests = gn_http_conn(r->c)->requests;
    gn_http_core_log(r);
}


/* Starts the next request on this connection (bytes of it may be in the
 * buffer already) or waits for one. */
static void
gn_http_next(gn_conn_t *c, gn_loc_conf_t *lc)
{
    gn_http_conn_t  *hc = c->data;
    gn_http_conf_t  *hcf = gn_http_conf(lc);

    memset(&hc->scan, 0, sizeof(hc->scan));

    if (c->buf_len > 0) {
        gn_http_set_state(c, GN_CONN_READING, hcf->client_header_timeout);
    } else {
        gn_http_set_state(c, GN_CONN_KEEPALIVE,
                          gn_conn_draining
                          ? gn_min(GN_CONN_DRAIN_GRACE, hcf->keepalive_timeout)
                          : hcf->keepalive_timeout);
    }

    gn_http_read(c);
}


/* Drops body bytes that follow the head in the buffer (the head itself,
 * which the request still points into, stays). Returns GN_DONE when the
 * body is over, GN_AGAIN when more is needed, GN_ERROR on a bad chunked
 * encoding or a body past the limit. */
static gn_int_t
gn_http_discard_buffered(gn_conn_t *c)
{
    gn_http_conn_t  *hc = c->data;
    u_char          *base, *pos, *data;
    size_t           n, size, avail;
    gn_int_t         rc;

    base = c->buf + hc->r->head_len;
    avail = c->buf_len - hc->r->head_len;

    if (!hc->body_chunked) {
        n = (size_t) gn_min((off_t) avail, hc->body_left);
        hc->body_left -= (off_t) n;
        rc = hc->body_left == 0 ? GN_DONE : GN_AGAIN;
        if (n > 0 && hc->r->body_cb != NULL) {
            gn_http_module_body(hc->r, base, n);
        }

    } else {
        pos = base;
        do {
            rc = gn_http_chunked_parse(&hc->chunked, &pos, base + avail,
                                       &data, &size, hc->body_max);
            if (rc == GN_OK && size > 0 && hc->r->body_cb != NULL) {
                gn_http_module_body(hc->r, data, size);
            }
        } while (rc == GN_OK);
        n = (size_t) (pos - base);
    }

    memmove(base, base + n, avail - n);
    c->buf_len -= n;

    return rc;
}


/* Reads past the request body, then runs the handler. */
static void
gn_http_discard(gn_conn_t *c)
{
    gn_http_conn_t     *hc = c->data;
    gn_http_request_t  *r = hc->r;
    gn_int_t            rc;
    ssize_t             n;

    for ( ;; ) {
        rc = gn_http_discard_buffered(c);

        if (rc == GN_DONE && r->module != NULL) {
            r->body_done = 1;
            gn_http_module_body_done(r, GN_OK);
            return;
        }

        if (rc == GN_DONE) {
            gn_http_core_body_read(r);
            return;
        }

        if (rc == GN_ERROR) {
            gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent an invalid or "
                         "too large chunked body");
            c->close = 1;
            c->linger = 1;
            if (r->module != NULL) {
                gn_http_module_body_done(r, hc->body_max > 0
                                            && hc->chunked.size
                                               > hc->body_max
                                                 - hc->chunked.total
                                            ? 413 : 400);
                return;
            }
            /* at a limit error the parser leaves the chunk size that
             * would cross it in chunked.size */
            rc = gn_http_response_error(r, hc->body_max > 0
                                           && hc->chunked.size
                                              > hc->body_max
                                                - hc->chunked.total
                                           ? 413 : 400);
            if (rc != GN_OK) {
                gn_conn_close(c);
                return;
            }
            gn_http_respond(c);
            return;
        }

        if (!c->read_ready) {
            return;
        }

        n = gn_http_recv(c);
        if (n == GN_AGAIN) {
            if (c->buf_len == c->buf_size) {
                /* head and body fill the buffer: the loop above already
                 * consumed what it could, so this cannot repeat */
                gn_conn_close(c);
                return;
            }
            continue;
        }
        if (n <= 0) {
            if (n == 0) {
                c->log.action = "reading the request body";
                gn_log_error(GN_LOG_INFO, &c->log, 0, "client closed the "
                             "connection");
                c->log.action = NULL;
            }
            gn_http_close(c, 400);            /* the body broke off */
            return;
        }
        gn_timer_set(&c->timer, gn_http_conf(r->loc)->client_body_timeout);
    }
}


static void
gn_http_body_start(gn_conn_t *c)
{
    static const char   cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    gn_http_conn_t     *hc = c->data;
    gn_http_request_t  *r = hc->r;
    struct iovec        iov;

    /* the framing of what follows the head */
    hc->body_left = r->head.chunked ? 0 : r->head.content_length;
    hc->body_chunked = r->head.chunked;
    hc->body_max = (off_t) gn_http_conf(r->loc)->client_max_body_size;
    memset(&hc->chunked, 0, sizeof(gn_http_chunked_t));

    if (r->head.expect_continue && c->buf_len == r->head_len) {
        iov.iov_base = (void *) cont;
        iov.iov_len = sizeof(cont) - 1;
        if (c->ops->writev(c, &iov, 1, 0) != (ssize_t) iov.iov_len) {
            gn_conn_close(c);            /* a fresh socket takes 25 bytes */
            return;
        }
    }

    gn_http_set_state(c, r->module ? GN_CONN_BODY : GN_CONN_DISCARDING,
                      gn_http_conf(r->loc)->client_body_timeout);
    gn_http_discard(c);
}


static void
gn_http_finish(gn_conn_t *c)
{
    gn_http_conn_t     *hc = c->data;
    gn_http_request_t  *r = hc->r;
    gn_loc_conf_t      *lc = r->loc;
    size_t              head_len;

    gn_http_log(r);

    head_len = r->head_len;
    hc->r = NULL;
    gn_conn_pool_put(c);                /* releases files, frees r */

    if (c->close) {
        /* As nginx: linger when the client may still be sending -- a body
         * not read, bytes past this request (pipelined past the
         * keep-alive limit), or a socket not read dry. */
        c->linger_close = (c->linger || c->buf_len > head_len
                           || c->read_ready);
        gn_conn_close(c);
        return;
    }

    /* what follows this head: its body, then pipelined requests */
    if (c->buf_len > head_len) {
        memmove(c->buf, c->buf + head_len, c->buf_len - head_len);
    }
    c->buf_len -= head_len;

    gn_http_next(c, lc);
}


/* Closes c; the request on it, if any, is logged with `status` (see
 * gn_http_closed). */
static void
gn_http_close(gn_conn_t *c, gn_uint_t status)
{
    gn_http_conn_t  *hc = c->data;

    if (hc->r != NULL) {
        hc->r->close_status = status;
    }
    gn_conn_close(c);
}


/* Closes c while its request head was coming: the bytes that came are a
 * request that gets its line (408 timed out, 400 broke off), as nginx
 * logs one; a connection that sent nothing gets none. */
static void
gn_http_close_head(gn_conn_t *c, gn_uint_t status)
{
    gn_http_conn_t  *hc = c->data;

    if (hc->r == NULL && c->buf_len > 0
        && gn_http_request_create(c, c->buf_len) != NULL)
    {
        hc->r->close_status = status;
    }
    gn_conn_close(c);
}


/*
 * A connection closes with a request that has not ended: the client
 * left, a timeout or an error cut it. Every request gets its access-log
 * line and is counted in the scoreboard, as nginx logs every request.
 * Once bytes of the response went out, the line keeps the status being
 * sent and shows the bytes that were; before that it shows why it ended:
 * the close_status its closer gave (499 the client left, 408, 400, 504),
 * else the status of a response that could not be sent at all, else 500
 * (503 when the server stops). The connection's on_close: its HTTP/1
 * state goes back to the free list.
 */
static void
gn_http_closed(gn_conn_t *c)
{
    gn_http_conn_t     *hc = c->data;
    gn_http_request_t  *r = hc->r;

    if (r != NULL && !r->logged) {
        if (c->stopping) {
            r->close_status = 503;
        }

        if (r->bytes_sent == 0 || r->status == 0) {
            if (r->close_status != 0) {
                r->status = r->close_status;
            } else if (c->state != GN_CONN_WRITING || r->status == 0) {
                r->status = 500;
            }
        }

        gn_http_log(r);
    }

    hc->r = NULL;
    c->data = NULL;
    gn_free_list_push(&gn_http_conn_free, (u_char *) hc);
}


/* TLS's tls_rejected: plain HTTP on a TLS port was answered 400; the
 * bytes the client sent are logged as a request. */
static void
gn_http_log_rejected(gn_conn_t *c, const u_char *data, size_t len,
    size_t sent, size_t head)
{
    gn_http_request_t  *r;

    if (gn_http_conn_get(c) == NULL || gn_http_buf_get(c) == NULL) {
        return;
    }

    len = gn_min(len, c->buf_size);
    memcpy(c->buf, data, len);
    c->buf_len = len;

    r = gn_http_request_create(c, len);
    if (r == NULL) {
        return;
    }

    r->status = 400;
    r->bytes_sent = (off_t) sent;
    r->header_bytes = (off_t) head;
    gn_http_log(r);
}




/* ---- the stream of an HTTP/1 request (gn_http_stream_t) ---------------- */

/* A streamed response is chunked on HTTP/1.1; on HTTP/1.0 its body ends
 * where the connection does; one of known length (r->stream_length) is
 * sent as it is. */
static void
gn_http1_respond(gn_http_request_t *r)
{
    if (r->streaming && !r->stream_length) {
        r->chunked_out = (r->head.version >= GN_HTTP_VERSION_11);
        if (!r->chunked_out) {
            r->c->close = 1;
        }
    }

    gn_http_respond(r->c);
}


static void
gn_http1_send(gn_http_request_t *r)
{
    gn_conn_t  *c = r->c;

    if (c->state == GN_CONN_WRITING && c->write_ready) {
        gn_http_write(c);
    }
}


/* HTTP/1.0, or a length given: the body's bytes go as they are. */
static gn_uint_t
gn_http1_verbatim(gn_http_request_t *r)
{
    return r->head.version < GN_HTTP_VERSION_11 || r->stream_length;
}


static gn_int_t
gn_http1_frame(gn_http_request_t *r, const u_char *data, size_t len)
{
    char  hex[24];
    int   n;

    if (gn_http1_verbatim(r)) {
        return gn_http_sbuf_append(r, data, len);
    }

    n = snprintf(hex, sizeof(hex), "%zx\r\n", len);
    if (gn_http_sbuf_append(r, hex, (size_t) n) != GN_OK
        || gn_http_sbuf_append(r, data, len) != GN_OK
        || gn_http_sbuf_append(r, "\r\n", 2) != GN_OK)
    {
        return GN_ERROR;
    }

    return GN_OK;
}


static gn_int_t
gn_http1_frame_end(gn_http_request_t *r)
{
    if (gn_http1_verbatim(r)) {
        return GN_OK;
    }

    return gn_http_sbuf_append(r, "0\r\n\r\n", 5);
}


static void
gn_http1_read_body(gn_http_request_t *r)
{
    gn_http_body_start(r->c);
}


/* Waiting for a handler: its time limit starts when the wait does. A
 * client whose FIN came with the request (edge-triggered: no later
 * event will say so) ends the request now, not when the module answers
 * into a closed connection; after the body was read, its events say. */
static void
gn_http1_wait(gn_http_request_t *r)
{
    gn_conn_t        *c = r->c;
    gn_conn_state_e   was = c->state;

    if (was == GN_CONN_PENDING) {
        return;
    }

    gn_http_set_state(c, GN_CONN_PENDING,
                      gn_http_conf(r->loc)->send_timeout);

    if (was != GN_CONN_BODY && c->hup) {
        gn_http_conn_handler(c);
    }
}


static void
gn_http1_abort(gn_http_request_t *r)
{
    gn_conn_close(r->c);
}


static void
gn_http1_tunnel(gn_http_request_t *r, gn_conn_handler_pt handler,
    gn_conn_handler_pt on_close, void *data)
{
    gn_conn_t       *c = r->c;
    gn_http_conn_t  *hc = c->data;
    size_t           head_len = r->head_len;

    gn_http_log(r);
    hc->r = NULL;
    gn_conn_pool_put(c);                /* releases r */

    if (c->buf_len > head_len) {
        memmove(c->buf, c->buf + head_len, c->buf_len - head_len);
    }
    c->buf_len -= head_len;

    c->data = data;
    c->handler = handler;
    c->on_close = on_close;
    gn_free_list_push(&gn_http_conn_free, (u_char *) hc);

    gn_timer_del(&c->timer);
    c->state = GN_CONN_TUNNEL;
    c->state_since = gn_current_msec;
}
