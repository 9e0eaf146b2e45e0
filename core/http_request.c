/*
 * The request state machine of a connection.
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

#include "http_request.h"
#include "http_response.h"
#include "http_static.h"
#include "access_log.h"
#include "scoreboard.h"
#include "log.h"


#define GN_LINGER_MSEC   2000


static void gn_http_read(gn_conn_t *c);
static void gn_http_process(gn_conn_t *c, size_t head_len);
static void gn_http_write(gn_conn_t *c);
static void gn_http_finish(gn_conn_t *c);
static void gn_http_linger(gn_conn_t *c);
static void gn_http_timeout(gn_timer_t *t);


static void
gn_http_set_state(gn_conn_t *c, gn_conn_state_e state, gn_msec_t timeout)
{
    c->state = state;
    c->state_since = gn_current_msec;
    gn_timer_set(&c->timer, timeout);
}


void
gn_http_init_conn(gn_conn_t *c)
{
    gn_loc_conf_t  *lc = c->listen->default_srv->loc;

    c->timer.handler = gn_http_timeout;
    memset(&c->scan, 0, sizeof(c->scan));
    gn_http_set_state(c, GN_CONN_READING, lc->client_header_timeout);

    gn_http_read(c);
}


void
gn_http_conn_handler(gn_conn_t *c)
{
    switch (c->state) {

    case GN_CONN_READING:
    case GN_CONN_KEEPALIVE:
        if (c->read_ready) {
            gn_http_read(c);
        }
        break;

    case GN_CONN_WRITING:
        if (c->write_ready) {
            gn_http_write(c);
        }
        break;

    case GN_CONN_LINGERING:
        gn_http_linger(c);
        break;
    }
}


static void
gn_http_timeout(gn_timer_t *t)
{
    gn_conn_t  *c = t->data;

    switch (c->state) {

    case GN_CONN_READING:
        if (c->buf_len > 0) {
            c->log.action = "reading the request head";
            gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        }
        break;

    case GN_CONN_WRITING:
        c->log.action = "sending the response";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        break;

    default:
        break;
    }

    gn_conn_close(c);
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


/* A request that could not even be parsed: answer `status` and close. */
static void
gn_http_reject(gn_conn_t *c, gn_uint_t status, const char *why)
{
    gn_http_request_t  *r;

    c->log.action = "reading the request head";
    gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent invalid request: %s "
                 "(answered %u)", why, (unsigned) status);
    c->log.action = NULL;

    r = gn_pcalloc(c->pool, sizeof(gn_http_request_t));
    if (r == NULL) {
        gn_conn_close(c);
        return;
    }

    r->c = c;
    r->pool = c->pool;
    r->srv = c->listen->default_srv;
    r->loc = r->srv->loc;
    r->file_fd = -1;
    r->last_modified = -1;
    r->start_msec = gn_current_msec;
    r->head_len = c->buf_len;
    c->r = r;
    c->close = 1;
    c->linger = 1;

    if (gn_http_response_error(r, status) != GN_OK
        || gn_http_response_head(r) != GN_OK)
    {
        gn_conn_close(c);
        return;
    }

    gn_http_set_state(c, GN_CONN_WRITING, r->loc->send_timeout);
    gn_http_write(c);
}


static void
gn_http_read(gn_conn_t *c)
{
    gn_loc_conf_t     *lc = c->listen->default_srv->loc;
    gn_http_limits_t   lim;
    size_t             head_len;
    ssize_t            n;
    gn_int_t           rc;

    if (c->buf == NULL && gn_conn_buf_get(c) == NULL) {
        gn_conn_close(c);
        return;
    }

    lim.max_line = lc->client_max_request_line;
    lim.max_head = lc->client_max_header_size;
    lim.max_headers = (size_t) lc->client_max_headers;
    lim.max_field = lc->client_max_header_size;

    for ( ;; ) {

        if (c->buf_len > c->scan.pos) {
            rc = gn_http_parse_head_end(&c->scan, c->buf, c->buf_len, &lim,
                                        &head_len);
            if (rc == GN_OK) {
                gn_http_process(c, head_len);
                return;
            }

            if (rc != GN_AGAIN) {
                gn_http_reject(c, (gn_uint_t) rc,
                               rc == 414 ? "request line too long"
                               : rc == 431 ? "request head too large"
                               : "malformed request head");
                return;
            }
        }

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
            gn_conn_close(c);
            return;
        }

        if (c->state == GN_CONN_KEEPALIVE) {
            gn_http_set_state(c, GN_CONN_READING, lc->client_header_timeout);
        }
    }
}


static gn_uint_t
gn_http_host_eq(const gn_str_t *name, const u_char *host, size_t len)
{
    if (name->len > 1 && name->data[0] == '*' && name->data[1] == '.') {
        /* "*.example.com" matches "a.example.com", not "example.com" */
        return len > name->len - 1
               && gn_strncasecmp(host + len - (name->len - 1),
                                 name->data + 1, name->len - 1) == 0;
    }

    return name->len == len && gn_strncasecmp(name->data, host, len) == 0;
}


/* Name-based virtual hosts: the server whose server_name matches Host
 * (without its port), else the listener's default server. */
static gn_srv_conf_t *
gn_http_find_server(gn_conn_t *c, const gn_str_t *host)
{
    gn_srv_conf_t  **psc;
    gn_str_t        *names;
    gn_uint_t        i, j;
    size_t           len;

    psc = c->listen->servers.elts;
    if (c->listen->servers.nelts == 1 || host->len == 0) {
        return c->listen->default_srv;
    }

    len = host->len;
    if (host->data[0] != '[') {
        while (len > 0 && host->data[len - 1] >= '0'
               && host->data[len - 1] <= '9')
        {
            len--;
        }
        if (len > 0 && host->data[len - 1] == ':') {
            len--;
        } else {
            len = host->len;
        }
    }

    if (len > 0 && host->data[len - 1] == '.') {
        len--;                               /* "example.com." */
    }

    for (i = 0; i < c->listen->servers.nelts; i++) {
        if (psc[i]->names == NULL) {
            continue;
        }
        names = psc[i]->names->elts;
        for (j = 0; j < psc[i]->names->nelts; j++) {
            if (gn_http_host_eq(&names[j], host->data, len)) {
                return psc[i];
            }
        }
    }

    return c->listen->default_srv;
}


/* Maps the parsed head to a server, location and handler, and sets up
 * the response. */
static gn_int_t
gn_http_run(gn_http_request_t *r)
{
    gn_http_head_t  *h = &r->head;
    u_char          *p;

    r->srv = gn_http_find_server(r->c, &h->host);
    r->loc = r->srv->loc;

    p = gn_pnalloc(r->pool, h->path.len + 1);
    if (p == NULL) {
        return GN_ERROR;
    }

    if (gn_http_normalize_path(h->path.data, h->path.len, p, &r->uri.len)
        != GN_OK)
    {
        r->c->close = 1;
        gn_log_error(GN_LOG_INFO, &r->c->log, 0,
                     "client sent an invalid path \"%.*s\"",
                     GN_STR_ARG(&h->path));
        return gn_http_response_error(r, 400);
    }
    r->uri.data = p;

    r->loc = gn_cycle_find_location(r->srv, r->uri.data, r->uri.len);

    if (h->method == GN_HTTP_UNKNOWN) {
        return gn_http_response_error(r, 501);
    }

    /* The static handler takes no request body; rather than read and
     * discard one, answer and close (framing stays unambiguous). */
    if (h->content_length > 0 || h->chunked) {
        r->c->close = 1;
        r->c->linger = 1;
    }

    return gn_http_static_handler(r);
}


static void
gn_http_process(gn_conn_t *c, size_t head_len)
{
    gn_http_request_t  *r;
    gn_http_header_t   *hdrs;
    gn_loc_conf_t      *lc = c->listen->default_srv->loc;
    gn_int_t            rc;

    r = gn_pcalloc(c->pool, sizeof(gn_http_request_t));
    hdrs = gn_palloc(c->pool, lc->client_max_headers
                              * sizeof(gn_http_header_t));
    if (r == NULL || hdrs == NULL) {
        gn_conn_close(c);
        return;
    }

    r->c = c;
    r->pool = c->pool;
    r->head_len = head_len;
    r->file_fd = -1;
    r->last_modified = -1;
    r->content_length = -1;
    r->start_msec = gn_current_msec;
    r->srv = c->listen->default_srv;
    r->loc = r->srv->loc;
    c->r = r;
    c->requests++;

    {
        gn_http_limits_t  lim;

        lim.max_line = lc->client_max_request_line;
        lim.max_head = lc->client_max_header_size;
        lim.max_headers = (size_t) lc->client_max_headers;
        lim.max_field = lc->client_max_header_size;

        rc = gn_http_parse_head(&r->head, c->buf, head_len, &lim, hdrs,
                                (size_t) lc->client_max_headers);
    }

    if (rc != GN_OK) {
        c->log.action = "reading the request head";
        gn_log_error(GN_LOG_INFO, &c->log, 0,
                     "client sent invalid request: %s (answered %d)",
                     r->head.err ? r->head.err : "malformed", (int) rc);
        c->log.action = NULL;
        c->close = 1;
        c->linger = 1;
        rc = gn_http_response_error(r, (gn_uint_t) rc);

    } else {
        rc = gn_http_run(r);
        if (rc != GN_OK) {
            c->close = 1;
            rc = gn_http_response_error(r, 500);
        }
    }

    if (rc != GN_OK) {
        gn_conn_close(c);
        return;
    }

    /* keep-alive decision, made once the response is known */
    r->keepalive = r->head.keepalive && !c->close && !gn_conn_draining
                   && r->loc->keepalive_timeout > 0
                   && (r->loc->keepalive_requests == 0
                       || c->requests < (gn_uint_t) r->loc->keepalive_requests);
    if (!r->keepalive) {
        c->close = 1;
    }

    if (gn_http_response_head(r) != GN_OK) {
        gn_conn_close(c);
        return;
    }

    gn_http_set_state(c, GN_CONN_WRITING, r->loc->send_timeout);
    gn_http_write(c);
}


static void
gn_http_write(gn_conn_t *c)
{
    gn_http_request_t  *r = c->r;
    ssize_t             n;
    size_t              left;
    int                 i, more;

    while (r->niov > 0) {
        more = (r->file_fd != -1 && r->file_pos < r->file_end);
        n = c->ops->writev(c, r->iov, r->niov, more);

        if (n == GN_AGAIN) {
            c->write_ready = 0;
            return;
        }

        if (n == GN_ERROR) {
            if (errno != EPIPE && errno != ECONNRESET) {
                c->log.action = "sending the response";
                gn_log_error(GN_LOG_INFO, &c->log, errno, "writev() failed");
            }
            gn_conn_close(c);
            return;
        }

        r->bytes_sent += n;

        /* consume n bytes from the iovecs */
        for (i = 0; i < r->niov && n > 0; i++) {
            left = gn_min((size_t) n, r->iov[i].iov_len);
            r->iov[i].iov_base = (u_char *) r->iov[i].iov_base + left;
            r->iov[i].iov_len -= left;
            n -= (ssize_t) left;
        }

        while (r->niov > 0 && r->iov[0].iov_len == 0) {
            memmove(&r->iov[0], &r->iov[1], (r->niov - 1) * sizeof(struct iovec));
            r->niov--;
        }

        gn_timer_set(&c->timer, r->loc->send_timeout);
    }

    while (r->file_fd != -1 && r->file_pos < r->file_end) {
        n = c->ops->sendfile(c, r->file_fd, &r->file_pos,
                             (size_t) gn_min(r->file_end - r->file_pos,
                                             (off_t) 1 << 30));
        if (n == GN_AGAIN) {
            c->write_ready = 0;
            return;
        }

        if (n == GN_ERROR || n == 0) {
            if (n == 0 || (errno != EPIPE && errno != ECONNRESET)) {
                c->log.action = "sending the response";
                gn_log_error(GN_LOG_ERR, &c->log, n == 0 ? 0 : errno,
                             n == 0 ? "file shrank while being sent"
                                    : "sendfile() failed");
            }
            gn_conn_close(c);
            return;
        }

        r->bytes_sent += n;
        gn_timer_set(&c->timer, r->loc->send_timeout);
    }

    gn_http_finish(c);
}


static void
gn_http_account(gn_http_request_t *r)
{
    if (gn_sb_me == NULL) {
        return;
    }

    gn_sb_me->requests++;
    gn_sb_me->bytes_out += (uint64_t) r->bytes_sent;
    if (r->status >= 100 && r->status < 600) {
        gn_sb_me->status[r->status / 100]++;
    }
}


static void
gn_http_finish(gn_conn_t *c)
{
    gn_http_request_t  *r = c->r;
    gn_loc_conf_t      *lc = r->loc;
    size_t              head_len;

    gn_access_log_request(r);
    gn_http_account(r);

    head_len = r->head_len;
    c->r = NULL;
    gn_pool_reset(c->pool);             /* closes the file, frees r */

    if (c->close) {
        if (c->linger && !c->eof) {
            (void) shutdown(c->io.fd, SHUT_WR);
            c->buf_len = 0;
            gn_http_set_state(c, GN_CONN_LINGERING, GN_LINGER_MSEC);
            gn_http_linger(c);
            return;
        }
        gn_conn_close(c);
        return;
    }

    /* pipelined bytes after this head start the next request */
    if (c->buf_len > head_len) {
        memmove(c->buf, c->buf + head_len, c->buf_len - head_len);
    }
    c->buf_len -= head_len;
    memset(&c->scan, 0, sizeof(c->scan));

    if (c->buf_len > 0) {
        gn_http_set_state(c, GN_CONN_READING, lc->client_header_timeout);
    } else {
        gn_http_set_state(c, GN_CONN_KEEPALIVE,
                          gn_conn_draining ? gn_min(GN_CONN_DRAIN_GRACE,
                                                    lc->keepalive_timeout)
                                           : lc->keepalive_timeout);
    }

    gn_http_read(c);
}


/* After a response to a client that may still be sending: read and drop
 * its bytes until it closes or the lingering time is up, so the kernel
 * does not answer them with a RST that could destroy our response. */
static void
gn_http_linger(gn_conn_t *c)
{
    u_char   buf[4096];
    ssize_t  n;

    for ( ;; ) {
        n = c->ops->recv(c, buf, sizeof(buf));

        if (n == GN_AGAIN) {
            c->read_ready = 0;
            return;
        }

        if (n <= 0) {
            gn_conn_close(c);
            return;
        }
    }
}
