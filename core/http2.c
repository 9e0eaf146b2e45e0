/*
 * HTTP/2 (RFC 9113) with libnghttp2: one nghttp2 server session per
 * connection, fed the bytes the connection reads (nghttp2_session_
 * mem_recv) and asked for the bytes to write (nghttp2_session_mem_send),
 * which go out through c->ops (TLS or the socket) from one output buffer.
 * Each stream's request is a gn_http_request_t in a pool of its own,
 * served through gn_h2_stream (http_request.h) by the same phases as an
 * HTTP/1 request (gn_http_core_start).
 *
 * Nothing is written or freed from inside nghttp2's callbacks: a request
 * that answers there only submits its response; the bytes go out when
 * the callback's caller, the connection's event handler, flushes. A
 * request that answers later (a module, from a timer) posts a flush on a
 * zero-delay timer. Streams nghttp2 closes are reaped (their pools reset:
 * their files released, their modules' and CGI's work cancelled) only by
 * those two, at the end: no caller up the stack still holds them.
 *
 * Response bodies take nghttp2's no-copy path: the data source only says
 * how many bytes a DATA frame carries; gn_h2_send_data puts its 9-byte
 * head and then the bytes, from memory or read from the file, straight
 * into the output buffer that the TLS record or the socket write takes.
 * A frame carries at most 16384 - 9 bytes so that, with its head, it is
 * one full TLS record.
 */

#include "gn_config.h"

#include <nghttp2/nghttp2.h>

#include "http2.h"
#include "realip.h"
#include "http_core.h"
#include "http_request.h"
#include "http_response.h"
#include "http_module.h"
#include "scoreboard.h"
#include "log.h"


#define GN_H2_POOL_SIZE     4096
#define GN_H2_POOLS_FREE    64          /* idle stream pools (and output
                                           buffers) kept */
#define GN_H2_OUT_HIGH      (64 * 1024) /* stop filling the output here */
#define GN_H2_OUT_SIZE      (GN_H2_OUT_HIGH + 16384 + 64)
#define GN_H2_DATA_MAX      (16384 - 9) /* frame + head = one TLS record */
#define GN_H2_WINDOW        (1024 * 1024) /* the connection's receive
                                             window */

static const char  gn_h2_preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* The scoreboard's HTTP/2 numbers (scoreboard.h). */
#define gn_h2_sb(field, n)                                                    \
    do { if (gn_sb_me != NULL) { gn_sb_me->field += (uint64_t) (n); } }     \
    while (0)


typedef struct gn_h2_conn_s    gn_h2_conn_t;
typedef struct gn_h2_stream_s  gn_h2_stream_t;

struct gn_h2_stream_s {
    gn_h2_conn_t        *h2;
    gn_http_request_t   *r;             /* once the head is complete */
    gn_pool_t           *pool;
    int32_t              id;

    /* the head as it is decoded */
    gn_str_t             method;
    gn_str_t             path;
    gn_str_t             authority;
    gn_http_header_t    *hdrs;
    gn_uint_t            nhdrs;
    gn_uint_t            hdrs_cap;
    size_t               hsize;         /* RFC 9113 6.5.2: name + value +
                                           32 per field */
    gn_uint_t            too_large;     /* past the limits: 431 */

    /* the request body: bytes that came before the stream was asked for
     * them (held, the window not reopened for them), and the total */
    u_char              *body;
    size_t               body_len;
    size_t               body_cap;
    off_t                body_total;

    off_t                out_left;      /* response body bytes in segs */
    gn_timer_t           timer;         /* a handler's or a body's wait */

    unsigned             in_closed:1;   /* the client's END_STREAM */
    unsigned             reading:1;     /* read_body asked for the body */
    unsigned             discard:1;     /* ... to drop it */
    unsigned             deferred:1;    /* DATA waits for a module */
    unsigned             responded:1;   /* the response is submitted */
    unsigned             body_over:1;   /* client_max_body_size passed */
    unsigned             reset:1;       /* we reset it */
    unsigned             invalid:1;     /* nghttp2 found it malformed */

    gn_h2_stream_t      *next;
    gn_h2_stream_t      *prev;
};

/* A request and its stream: r first, so that a request is its own. */
typedef struct {
    gn_http_request_t    r;
    gn_h2_stream_t      *st;
} gn_h2_req_t;

#define gn_h2_st(req)  (((gn_h2_req_t *) (req))->st)

struct gn_h2_conn_s {
    gn_conn_t           *c;
    nghttp2_session     *session;
    gn_h2_stream_t      *streams;       /* open */
    gn_h2_stream_t      *closed;        /* closed by nghttp2, to reap */
    gn_h2_stream_t      *decoding;      /* the last stream begun: its head
                                           is what is being decoded */
    gn_uint_t            nstreams;
    gn_uint_t            requests;      /* streams begun */
    gn_uint_t            timer_requests;  /* ... when the timer was set */
    gn_uint_t            glitches;
    int32_t              goaway_last;   /* the GOAWAY's last stream */

    u_char              *out;           /* bytes to write */
    size_t               out_pos;
    size_t               out_len;
    size_t               out_cap;

    gn_timer_t           post;          /* flush from the event loop */
    gn_msec_t            drain_since;   /* the child drains since */

    unsigned             in_handler:1;  /* the event handler is running */
    unsigned             wouldblock:1;  /* a DATA frame waits for room */
    unsigned             blocked:1;     /* the socket is full */
    unsigned             goaway:1;      /* the last GOAWAY is out */
    unsigned             closing:1;     /* GOAWAY: close when the streams
                                           are done */
    unsigned             terminated:1;  /* ... with an error: read no
                                           more either */
    unsigned             calm:1;        /* ENHANCE_YOUR_CALM, counted */
    unsigned             counted:1;     /* in the scoreboard's h2_open */
    unsigned             head_timeout:1;  /* a head did not complete */
};


static void gn_h2_handler(gn_conn_t *c);
static void gn_h2_closed(gn_conn_t *c);
static void gn_h2_drain(gn_conn_t *c);
static void gn_h2_timeout(gn_timer_t *t);
static void gn_h2_post_handler(gn_timer_t *t);
static void gn_h2_stream_timeout(gn_timer_t *t);
static gn_int_t gn_h2_flush(gn_h2_conn_t *h2);
static void gn_h2_reap(gn_h2_conn_t *h2);
static void gn_h2_done(gn_h2_conn_t *h2);

static gn_int_t gn_h2_limits(gn_http_request_t *r);
static void gn_h2_respond(gn_http_request_t *r);
static void gn_h2_send(gn_http_request_t *r);
static gn_int_t gn_h2_frame(gn_http_request_t *r, const u_char *data,
    size_t len);
static gn_int_t gn_h2_frame_end(gn_http_request_t *r);
static void gn_h2_read_body(gn_http_request_t *r);
static void gn_h2_wait(gn_http_request_t *r);
static void gn_h2_abort(gn_http_request_t *r);
static gn_uint_t gn_h2_verbatim(gn_http_request_t *r);


static const gn_http_stream_t  gn_h2_stream = {
    gn_h2_limits,
    gn_h2_respond,
    gn_h2_send,
    gn_h2_frame,
    gn_h2_frame_end,
    gn_h2_read_body,
    gn_h2_wait,
    gn_h2_abort,
    NULL,                       /* no Upgrade in HTTP/2 (RFC 9113 8.2.2) */
    gn_h2_verbatim
};

static nghttp2_session_callbacks  *gn_h2_callbacks;
static nghttp2_option             *gn_h2_option;
static gn_pool_t                  *gn_h2_pools;   /* idle, linked */
static u_char                     *gn_h2_out_free;  /* output buffers */
static gn_uint_t                   gn_h2_nout_free;
static gn_uint_t                   gn_h2_npools;


gn_int_t
gn_http2_preface(const u_char *buf, size_t len)
{
    size_t  n = gn_min(len, sizeof(gn_h2_preface) - 1);

    if (memcmp(buf, gn_h2_preface, n) != 0) {
        return GN_DECLINED;
    }

    return n == sizeof(gn_h2_preface) - 1 ? GN_OK : GN_AGAIN;
}


/* ---- stream pools ------------------------------------------------------- */

static gn_pool_t *
gn_h2_pool_get(void)
{
    gn_pool_t  *p = gn_h2_pools;

    if (p != NULL) {
        gn_h2_pools = p->free_next;
        gn_h2_npools--;
        return p;
    }

    return gn_pool_create(GN_H2_POOL_SIZE);
}


static void
gn_h2_pool_put(gn_pool_t *p)
{
    gn_pool_reset(p);

    if (gn_h2_npools >= GN_H2_POOLS_FREE) {
        gn_pool_destroy(p);
        return;
    }

    p->free_next = gn_h2_pools;
    gn_h2_pools = p;
    gn_h2_npools++;
}


/* ---- the connection ----------------------------------------------------- */

static gn_http_conf_t *
gn_h2_conf(gn_conn_t *c)
{
    return gn_http_conf(c->listen->default_srv->loc);
}


/* A flush from outside the event handler (a module's answer, a timer):
 * on a zero-delay timer, where nothing up the stack holds a stream. */
static void
gn_h2_post(gn_h2_conn_t *h2)
{
    if (!h2->in_handler && !gn_timer_is_set(&h2->post)) {
        gn_timer_set(&h2->post, 0);
    }
}


/* The connection's timer and state: the send timeout while the socket
 * is full, the keep-alive timeout while no stream is open (the drain's
 * grace while draining), the header timeout while a head is incomplete;
 * otherwise the streams' own timers. */
static void
gn_h2_set_timer(gn_h2_conn_t *h2)
{
    gn_conn_t        *c = h2->c;
    gn_http_conf_t   *hcf = gn_h2_conf(c);
    gn_h2_stream_t   *st;
    gn_conn_state_e   state;
    gn_msec_t         t;

    if (h2->blocked) {
        if (c->state != GN_CONN_WRITING || !gn_timer_is_set(&c->timer)) {
            c->state = GN_CONN_WRITING;
            c->state_since = gn_current_msec;
            gn_timer_set(&c->timer, hcf->send_timeout);
        }
        return;
    }

    if (h2->nstreams == 0) {
        state = GN_CONN_KEEPALIVE;
        t = gn_conn_draining ? GN_CONN_DRAIN_GRACE : hcf->keepalive_timeout;
        if (h2->requests == 0 && !gn_conn_draining) {
            t = hcf->client_header_timeout;
            state = GN_CONN_READING;
        }

    } else {
        state = GN_CONN_WRITING;
        t = 0;
        for (st = h2->streams; st != NULL; st = st->next) {
            if (st->r == NULL) {
                t = hcf->client_header_timeout;
                break;
            }
        }
    }

    /* a stream that came and went since: the idle time starts again */
    if (c->state != state || h2->requests != h2->timer_requests) {
        c->state = state;
        c->state_since = gn_current_msec;
        h2->timer_requests = h2->requests;
        if (t) {
            gn_timer_set(&c->timer, t);
        } else {
            gn_timer_del(&c->timer);
        }

    } else if (t == 0) {
        gn_timer_del(&c->timer);

    } else if (!gn_timer_is_set(&c->timer)) {
        gn_timer_set(&c->timer, t);
    }
}


static void
gn_h2_timeout(gn_timer_t *t)
{
    gn_conn_t     *c = t->data;
    gn_h2_conn_t  *h2 = c->data;

    if (h2->blocked) {
        c->log.action = "sending to the client";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        gn_h2_sb(proto.h2_timeouts, 1);
        gn_conn_close(c);
        return;
    }

    if (h2->nstreams > 0) {
        c->log.action = "reading a request head";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        c->log.action = NULL;
        gn_h2_sb(proto.h2_timeouts, 1);
        h2->head_timeout = 1;
    }

    /* idle: a GOAWAY, as the end of a keep-alive connection */
    (void) nghttp2_session_terminate_session(h2->session, NGHTTP2_NO_ERROR);
    h2->closing = 1;
    h2->terminated = 1;
    c->linger_close = 1;
    gn_h2_post_handler(&h2->post);
}


static void
gn_h2_post_handler(gn_timer_t *t)
{
    gn_h2_conn_t  *h2 = t->data;

    if (gn_h2_flush(h2) != GN_OK) {
        return;                       /* closed */
    }
    gn_h2_done(h2);
}


/* After a flush: the closed streams reaped, the connection closed when
 * nghttp2 is done with it, else its timer set. */
static void
gn_h2_done(gn_h2_conn_t *h2)
{
    gn_conn_t  *c = h2->c;

    gn_h2_reap(h2);

    if (h2->out_pos == h2->out_len
        && ((!nghttp2_session_want_read(h2->session)
             && !nghttp2_session_want_write(h2->session))
            || (h2->closing && h2->nstreams == 0)))
    {
        c->linger_close = 1;
        gn_conn_close(c);
        return;
    }

    gn_h2_set_timer(h2);
}


/* Output buffers: held only while there is something to write, from a
 * free list of GN_H2_OUT_SIZE ones (an idle connection holds none). */
static gn_int_t
gn_h2_out_reserve(gn_h2_conn_t *h2, size_t len)
{
    if (h2->out_pos == h2->out_len) {
        h2->out_pos = h2->out_len = 0;
    }

    if (h2->out == NULL) {
        h2->out = gn_free_list_pop(&gn_h2_out_free);
        if (h2->out != NULL) {
            gn_h2_nout_free--;
        } else {
            h2->out = malloc(GN_H2_OUT_SIZE);
            if (h2->out == NULL) {
                gn_log_error(GN_LOG_CRIT, &h2->c->log, errno,
                             "malloc(%d) failed", GN_H2_OUT_SIZE);
                return GN_ERROR;
            }
        }
        h2->out_cap = GN_H2_OUT_SIZE;
    }

    if (h2->out_len + len <= h2->out_cap) {
        return GN_OK;
    }

    /* a head larger than the buffer: this one grows, and is freed */
    return gn_str_reserve(&h2->out, &h2->out_cap, h2->out_len + len,
                          GN_H2_OUT_SIZE);
}


static void
gn_h2_out_put(gn_h2_conn_t *h2)
{
    if (h2->out == NULL) {
        return;
    }

    if (h2->out_cap == GN_H2_OUT_SIZE
        && gn_h2_nout_free < GN_H2_POOLS_FREE)
    {
        gn_free_list_push(&gn_h2_out_free, h2->out);
        gn_h2_nout_free++;
    } else {
        free(h2->out);
    }

    h2->out = NULL;
    h2->out_cap = h2->out_pos = h2->out_len = 0;
}


/* Writes the output buffer: GN_OK (all of it), GN_AGAIN, GN_ERROR. */
static gn_int_t
gn_h2_write(gn_h2_conn_t *h2)
{
    gn_conn_t     *c = h2->c;
    struct iovec   iov;
    ssize_t        n;

    while (h2->out_pos < h2->out_len) {
        iov.iov_base = h2->out + h2->out_pos;
        iov.iov_len = h2->out_len - h2->out_pos;

        n = c->ops->writev(c, &iov, 1, 0);
        if (n == GN_AGAIN) {
            c->write_ready = 0;
            return GN_AGAIN;
        }
        if (n <= 0) {
            if (errno != EPIPE && errno != ECONNRESET) {
                c->log.action = "sending to the client";
                gn_log_error(GN_LOG_INFO, &c->log, errno, "send failed");
                c->log.action = NULL;
            }
            return GN_ERROR;
        }

        h2->out_pos += (size_t) n;
        if (h2->blocked) {
            gn_timer_set(&c->timer, gn_h2_conf(c)->send_timeout);
        }
    }

    h2->out_pos = h2->out_len = 0;
    return GN_OK;
}


/* What nghttp2 has to send goes out, as far as the socket takes it.
 * GN_OK, or GN_DONE when the connection was closed (an error). */
static gn_int_t
gn_h2_flush(gn_h2_conn_t *h2)
{
    gn_conn_t       *c = h2->c;
    const uint8_t   *data;
    ssize_t          n;
    gn_int_t         rc;

    for ( ;; ) {
        while (h2->out_len < GN_H2_OUT_HIGH) {
            h2->wouldblock = 0;
            n = nghttp2_session_mem_send(h2->session, &data);
            if (n < 0) {
                gn_log_error(GN_LOG_ERR, &c->log, 0, "HTTP/2: %s",
                             nghttp2_strerror((int) n));
                gn_conn_close(c);
                return GN_DONE;
            }
            if (n == 0) {
                break;
            }
            if (gn_h2_out_reserve(h2, (size_t) n) != GN_OK) {
                gn_conn_close(c);
                return GN_DONE;
            }
            memcpy(h2->out + h2->out_len, data, (size_t) n);
            h2->out_len += (size_t) n;
        }

        if (h2->out_pos == h2->out_len) {
            h2->blocked = 0;
            gn_h2_out_put(h2);
            return GN_OK;
        }

        rc = gn_h2_write(h2);
        if (rc == GN_AGAIN) {
            h2->blocked = 1;
            return GN_OK;
        }
        if (rc == GN_ERROR) {
            gn_conn_close(c);
            return GN_DONE;
        }
        h2->blocked = 0;
    }
}


/* Feeds what the socket has to nghttp2. GN_OK, or GN_DONE (closed). */
static gn_int_t
gn_h2_read(gn_h2_conn_t *h2)
{
    gn_conn_t  *c = h2->c;
    ssize_t     n, rv;

    for ( ;; ) {
        if (c->buf_len > 0) {
            rv = nghttp2_session_mem_recv(h2->session, c->buf, c->buf_len);
            c->buf_len = 0;
            if (rv < 0) {
                c->log.action = "reading HTTP/2 frames";
                gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent invalid "
                             "HTTP/2: %s", nghttp2_strerror((int) rv));
                c->log.action = NULL;
                if (rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC
                    || rv == NGHTTP2_ERR_FLOODED
                    || rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS)
                {
                    (void) nghttp2_session_terminate_session(h2->session,
                                 rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC
                                 ? NGHTTP2_PROTOCOL_ERROR
                                 : NGHTTP2_ENHANCE_YOUR_CALM);
                    h2->closing = 1;
                    h2->terminated = 1;
                    return GN_OK;
                }
                gn_conn_close(c);
                return GN_DONE;
            }
        }

        /* after a graceful GOAWAY the streams it kept still take
         * WINDOW_UPDATE, DATA and the rest (RFC 9113 6.8) */
        if (h2->terminated || !c->read_ready
            || !nghttp2_session_want_read(h2->session))
        {
            gn_conn_buf_put(c);     /* all fed to nghttp2: hold none */
            return GN_OK;
        }

        /* a client that does not read what it asked for is not read
         * either: its requests wait in the socket */
        if (h2->blocked) {
            gn_conn_buf_put(c);
            return GN_OK;
        }

        if (c->buf == NULL
            && gn_conn_buf_get(c, gn_h2_conf(c)->client_max_header_size)
               == NULL)
        {
            gn_conn_close(c);
            return GN_DONE;
        }

        n = c->ops->recv(c, c->buf, c->buf_size);

        if (n == GN_AGAIN) {
            c->read_ready = 0;
            gn_conn_buf_put(c);
            return GN_OK;
        }

        if (n == GN_ERROR || n == 0) {
            if (n == GN_ERROR && errno != ECONNRESET) {
                gn_log_error(GN_LOG_INFO, &c->log, errno, "recv() failed");
            }
            c->eof = 1;
            gn_conn_close(c);
            return GN_DONE;
        }

        c->buf_len = (size_t) n;
        if (gn_sb_me != NULL) {
            gn_sb_me->bytes_in += (uint64_t) n;
        }
    }
}


static void
gn_h2_handler(gn_conn_t *c)
{
    gn_h2_conn_t  *h2 = c->data;

    h2->in_handler = 1;

    if (c->write_ready && h2->blocked) {
        if (gn_h2_flush(h2) != GN_OK) {
            return;
        }
    }

    if (gn_h2_read(h2) != GN_OK) {
        return;
    }

    h2->in_handler = 0;

    if (gn_h2_flush(h2) != GN_OK) {
        return;
    }

    /* the output drained with requests still unread in the socket */
    if (!h2->blocked && c->read_ready && !h2->terminated) {
        h2->in_handler = 1;
        if (gn_h2_read(h2) != GN_OK) {
            return;
        }
        h2->in_handler = 0;
        if (gn_h2_flush(h2) != GN_OK) {
            return;
        }
    }

    gn_h2_done(h2);
}


/*
 * The child drains (reload, graceful stop): GOAWAY with the last stream
 * taken, every stream up to it served, then the close. A connection gets
 * it once it has had no stream for GN_CONN_DRAIN_GRACE (as an idle
 * HTTP/1 connection is closed), a busy one at the latest when half of
 * shutdown_timeout is over, the other half left to its streams. A busy
 * connection is not sent GOAWAY at once: unlike an HTTP/1 client, which
 * reconnects after "Connection: close", a client is not obliged to open
 * a new connection for requests GOAWAY refuses (h2load does not), and a
 * reload is not the client's business.
 */
static void
gn_h2_drain(gn_conn_t *c)
{
    gn_h2_conn_t  *h2 = c->data;

    if (h2->goaway) {
        return;
    }

    if (h2->drain_since == 0) {
        h2->drain_since = gn_current_msec;
    }

    if (!(h2->nstreams == 0
          && gn_current_msec - c->state_since >= GN_CONN_DRAIN_GRACE)
        && gn_current_msec - h2->drain_since
           < gn_cycle->main->shutdown_timeout / 2)
    {
        return;
    }

    h2->goaway = 1;
    h2->goaway_last = nghttp2_session_get_last_proc_stream_id(h2->session);
    h2->closing = 1;
    (void) nghttp2_submit_goaway(h2->session, NGHTTP2_FLAG_NONE,
                                 h2->goaway_last, NGHTTP2_NO_ERROR, NULL, 0);

    gn_h2_post_handler(&h2->post);
}


/* ---- streams ------------------------------------------------------------ */

/* The server ends a stream with RST_STREAM. */
static void
gn_h2_reset(gn_h2_stream_t *st, uint32_t error)
{
    st->reset = 1;
    (void) nghttp2_submit_rst_stream(st->h2->session, NGHTTP2_FLAG_NONE,
                                     st->id, error);
}


static gn_h2_stream_t *
gn_h2_stream_get(gn_h2_conn_t *h2, int32_t id)
{
    return nghttp2_session_get_stream_user_data(h2->session, id);
}


/* A request that ends without its response complete (the client reset
 * the stream, the connection closed) gets its log line as HTTP/1's do
 * (http1.c, gn_http_closed). */
static void
gn_h2_request_end(gn_h2_stream_t *st, gn_uint_t status)
{
    gn_http_request_t  *r = st->r;

    if (r == NULL || r->logged) {
        return;
    }

    if (st->h2->c->stopping) {
        status = 503;
    }

    if (r->bytes_sent <= r->header_bytes || r->status == 0) {
        if (r->close_status != 0) {
            r->status = r->close_status;
        } else if (status != 0) {
            r->status = status;
        } else if (r->status == 0) {
            r->status = 500;
        }
    }

    gn_http_core_log(r);
}


static void
gn_h2_stream_free(gn_h2_stream_t *st)
{
    if (st->h2->decoding == st) {
        st->h2->decoding = NULL;
    }
    gn_timer_del(&st->timer);
    free(st->body);
    st->body = NULL;
    gn_h2_pool_put(st->pool);          /* frees st and r, runs cleanups */
}


static void
gn_h2_unlink(gn_h2_stream_t **list, gn_h2_stream_t *st)
{
    if (st->prev != NULL) {
        st->prev->next = st->next;
    } else {
        *list = st->next;
    }
    if (st->next != NULL) {
        st->next->prev = st->prev;
    }
    st->next = st->prev = NULL;
}


static void
gn_h2_reap(gn_h2_conn_t *h2)
{
    gn_h2_stream_t  *st;

    while (h2->closed != NULL) {
        st = h2->closed;
        h2->closed = st->next;
        gn_h2_stream_free(st);
    }
}


/* Past a limit of the connection: GOAWAY ENHANCE_YOUR_CALM. */
static void
gn_h2_glitch(gn_h2_conn_t *h2, const char *what)
{
    if (++h2->glitches <= (gn_uint_t) gn_h2_conf(h2->c)->http2_max_glitches
        || h2->terminated)
    {
        return;
    }

    gn_log_error(GN_LOG_INFO, &h2->c->log, 0, "client sent too many "
                 "HTTP/2 frames that carry no request (%s): connection "
                 "closed", what);
    gn_h2_sb(proto.h2_glitch_limit, 1);
    h2->calm = 1;
    (void) nghttp2_session_terminate_session(h2->session,
                                             NGHTTP2_ENHANCE_YOUR_CALM);
    h2->closing = 1;
    h2->terminated = 1;
}


/* ---- nghttp2's callbacks ------------------------------------------------ */

static int
gn_h2_on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame,
    void *user_data)
{
    gn_h2_conn_t    *h2 = user_data;
    gn_http_conf_t  *hcf = gn_h2_conf(h2->c);
    gn_h2_stream_t  *st;
    gn_pool_t       *pool;

    if (frame->hd.type != NGHTTP2_HEADERS
        || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
    {
        return 0;
    }

    /* past a GOAWAY not sent yet (nghttp2 refuses streams only once it
     * is): not run, refused -- the client may retry them */
    if (h2->goaway && frame->hd.stream_id > h2->goaway_last) {
        (void) nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE,
                                         frame->hd.stream_id,
                                         NGHTTP2_REFUSED_STREAM);
        return 0;
    }

    pool = gn_h2_pool_get();
    if (pool == NULL) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }

    st = gn_pcalloc(pool, sizeof(gn_h2_stream_t));
    if (st == NULL) {
        gn_h2_pool_put(pool);
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }

    st->h2 = h2;
    st->pool = pool;
    st->id = frame->hd.stream_id;
    gn_timer_init_node(&st->timer, gn_h2_stream_timeout, st);

    st->next = h2->streams;
    if (h2->streams != NULL) {
        h2->streams->prev = st;
    }
    h2->streams = st;
    h2->nstreams++;
    h2->requests++;
    gn_h2_sb(h2_streams, 1);

    (void) nghttp2_session_set_stream_user_data(session, st->id, st);
    h2->decoding = st;

    /* keepalive_requests: this is the last stream the connection takes */
    if (hcf->keepalive_requests > 0
        && h2->requests == (gn_uint_t) hcf->keepalive_requests
        && !h2->goaway)
    {
        h2->goaway = 1;
        h2->goaway_last = st->id;
        h2->closing = 1;
        (void) nghttp2_submit_goaway(session, NGHTTP2_FLAG_NONE, st->id,
                                     NGHTTP2_NO_ERROR, NULL, 0);
    }

    return 0;
}


/* A copy of nghttp2's bytes (valid only during the callback) in the
 * stream's pool. */
static gn_int_t
gn_h2_copy(gn_pool_t *pool, gn_str_t *s, const uint8_t *p, size_t len)
{
    gn_str_t  src;

    src.data = (u_char *) p;
    src.len = len;

    return gn_pstrdup(pool, &src, s) != NULL ? GN_OK : GN_ERROR;
}


/* A header field of a request head: kept in the stream's pool, its
 * size counted as it is decoded (an HPACK "bomb" is stopped by this,
 * nghttp2 caps only each field). */
static int
gn_h2_on_header(nghttp2_session *session, const nghttp2_frame *frame,
    const uint8_t *name, size_t namelen, const uint8_t *value,
    size_t valuelen, uint8_t flags, void *user_data)
{
    gn_h2_conn_t      *h2 = user_data;
    gn_http_conf_t    *hcf = gn_h2_conf(h2->c);
    gn_h2_stream_t    *st;
    gn_http_header_t  *h, *nh;
    gn_str_t          *slot;

    (void) session;
    (void) flags;

    /* the fields of a head come between its begin and its end, with
     * no other frame between (RFC 9113 6.10): most often the stream
     * just begun, without a lookup in nghttp2's map a field */
    st = h2->decoding;
    if (st == NULL || st->id != frame->hd.stream_id) {
        st = gn_h2_stream_get(h2, frame->hd.stream_id);
    }
    if (st == NULL || st->r != NULL) {
        return 0;                       /* trailers: not kept */
    }

    st->hsize += namelen + valuelen + 32;
    if (st->too_large || st->hsize > hcf->client_max_header_size) {
        st->too_large = 1;
        return 0;
    }

    if (namelen > 0 && name[0] == ':') {
        slot = NULL;
        if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
            slot = &st->method;
        } else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
            slot = &st->path;
        } else if (namelen == 10 && memcmp(name, ":authority", 10) == 0) {
            slot = &st->authority;
        }
        if (slot != NULL
            && gn_h2_copy(st->pool, slot, value, valuelen) != GN_OK)
        {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        return 0;
    }

    if (st->nhdrs >= (gn_uint_t) hcf->client_max_headers) {
        st->too_large = 1;
        return 0;
    }

    if (st->nhdrs + 1 >= st->hdrs_cap) {      /* room for "host" too */
        st->hdrs_cap = st->hdrs_cap ? st->hdrs_cap * 2 : 16;
        nh = gn_palloc(st->pool, st->hdrs_cap * sizeof(gn_http_header_t));
        if (nh == NULL) {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        if (st->nhdrs > 0) {
            memcpy(nh, st->hdrs, st->nhdrs * sizeof(gn_http_header_t));
        }
        st->hdrs = nh;
    }

    h = &st->hdrs[st->nhdrs];
    if (gn_h2_copy(st->pool, &h->name, name, namelen) != GN_OK
        || gn_h2_copy(st->pool, &h->value, value, valuelen) != GN_OK)
    {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    st->nhdrs++;

    return 0;
}


/* The crumbs of a Cookie split over several fields joined again with
 * "; " (RFC 9113 8.2.3), in one pass: the first field takes the whole
 * value, the others leave the list. */
static gn_int_t
gn_h2_cookies(gn_h2_stream_t *st)
{
    gn_http_header_t  *h, *cookie;
    gn_uint_t          i, j, n;
    size_t             len;
    u_char            *p;

    for (n = 0, len = 0, i = 0; i < st->nhdrs; i++) {
        if (gn_str_eq(&st->hdrs[i].name, "cookie")) {
            len += st->hdrs[i].value.len + 2;
            n++;
        }
    }

    if (n < 2) {
        return GN_OK;
    }

    p = gn_pnalloc(st->pool, len);
    if (p == NULL) {
        return GN_ERROR;
    }

    cookie = NULL;
    for (len = 0, j = 0, i = 0; i < st->nhdrs; i++) {
        h = &st->hdrs[i];
        if (gn_str_eq(&h->name, "cookie")) {
            if (len > 0) {
                p[len++] = ';';
                p[len++] = ' ';
            }
            memcpy(p + len, h->value.data, h->value.len);
            len += h->value.len;
            if (cookie != NULL) {
                continue;             /* the first keeps its place */
            }
            cookie = &st->hdrs[j];
        }
        st->hdrs[j++] = *h;
    }

    st->nhdrs = j;
    cookie->value.data = p;
    cookie->value.len = len;

    return GN_OK;
}


/* The request of a stream, with its request line for the log
 * ("GET /path HTTP/2.0", the head's strings pointing into it as an
 * HTTP/1 head's into its buffer). NULL: out of memory. */
static gn_http_request_t *
gn_h2_request_create(gn_h2_stream_t *st)
{
    gn_conn_t          *c = st->h2->c;
    gn_http_request_t  *r;
    gn_h2_req_t        *q;
    u_char             *p;

    q = gn_pcalloc(st->pool, sizeof(gn_h2_req_t));
    if (q == NULL) {
        return NULL;
    }
    q->st = st;
    r = &q->r;
    st->r = r;

    r->c = c;
    r->stream = &gn_h2_stream;
    r->pool = st->pool;
    r->last_modified = -1;
    r->content_length = -1;
    r->start_msec = gn_current_msec;
    r->srv = c->listen->default_srv;
    r->loc = r->srv->loc;
    gn_realip_apply_proxy(r);
    r->conn_requests = st->h2->requests;
    r->stream_id = (gn_uint_t) st->id;
    r->head.content_length = -1;
    r->head.version = GN_HTTP_VERSION_20;     /* also when not parsed */

    r->head_len = st->method.len + st->path.len + sizeof("  HTTP/2.0") - 1;
    p = gn_pnalloc(st->pool, r->head_len);
    if (p == NULL) {
        st->r = NULL;
        return NULL;
    }
    r->raw = p;
    if (st->method.len > 0) {            /* (a head cut short has none) */
        p = gn_cpymem(p, st->method.data, st->method.len);
    }
    *p++ = ' ';
    if (st->path.len > 0) {
        p = gn_cpymem(p, st->path.data, st->path.len);
    }
    memcpy(p, " HTTP/2.0", 9);

    st->method.data = r->raw;
    st->path.data = r->raw + st->method.len + 1;

    return r;
}


/* The head is complete: the request, served as an HTTP/1 one is. */
static void
gn_h2_request_start(gn_h2_stream_t *st)
{
    gn_conn_t          *c = st->h2->c;
    gn_http_request_t  *r;
    gn_http_header_t   *h;
    gn_uint_t           i;
    gn_int_t            rc;

    r = gn_h2_request_create(st);
    if (r == NULL) {
        gn_h2_reset(st, NGHTTP2_INTERNAL_ERROR);
        return;
    }

    if (gn_h2_cookies(st) != GN_OK) {
        gn_h2_abort(r);
        return;
    }

    /* modules and CGI find the host as Host, as in HTTP/1.1 */
    for (i = 0; i < st->nhdrs; i++) {
        if (gn_str_eq(&st->hdrs[i].name, "host")) {
            break;
        }
    }

    if (st->authority.len > 0 && i == st->nhdrs) {
        if (st->nhdrs >= st->hdrs_cap) {
            h = gn_palloc(st->pool, (st->nhdrs + 1)
                                    * sizeof(gn_http_header_t));
            if (h == NULL) {
                gn_h2_abort(r);
                return;
            }
            for (i = 0; i < st->nhdrs; i++) {
                h[i] = st->hdrs[i];
            }
            st->hdrs = h;
        }
        h = &st->hdrs[st->nhdrs++];
        gn_str_set(&h->name, "host");
        h->value = st->authority;
    }

    r->head.headers = st->hdrs;
    r->head.nheaders = st->nhdrs;

    if (st->too_large) {
        c->log.action = "reading a request head";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent too large a "
                     "request head (%zu bytes decoded, answered 431)",
                     st->hsize);
        gn_h2_sb(proto.h2_header_limit, 1);
        c->log.action = NULL;
        rc = 431;

    } else {
        rc = gn_http_parse_h2(&r->head, &st->method, &st->path,
                              &st->authority);

        /* a body that DATA frames frame, of a length not announced: to
         * the phases and modules, what a chunked one is in HTTP/1.1 */
        if (rc == GN_OK && !st->in_closed && r->head.content_length < 0) {
            r->head.chunked = 1;
        }

        if (rc != GN_OK) {
            c->log.action = "reading a request head";
            gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent invalid "
                         "request: %s (answered %d)", r->head.err, (int) rc);
            c->log.action = NULL;
        }
    }

    if (rc != GN_OK) {
        if (gn_http_response_error(r, (gn_uint_t) rc) != GN_OK) {
            gn_h2_abort(r);
            return;
        }
        gn_h2_respond(r);
        return;
    }

    gn_http_core_start(r);
}


/* Data for a stream: to its handler as it comes, or held until the
 * handler asks (the window is not reopened for what is held), or
 * dropped. The window reopens for what was used (no automatic
 * WINDOW_UPDATE): a slow reader slows the client, no buffering grows. */
static void
gn_h2_body_in(gn_h2_stream_t *st, const uint8_t *data, size_t len)
{
    gn_h2_conn_t       *h2 = st->h2;
    gn_http_request_t  *r = st->r;
    size_t              max = gn_http_conf(r->loc)->client_max_body_size;

    st->body_total += (off_t) len;

    if (max > 0 && st->body_total > (off_t) max && !st->body_over) {
        st->body_over = 1;
        gn_log_error(GN_LOG_INFO, &h2->c->log, 0, "client sent a body "
                     "larger than client_max_body_size");
    }

    if (st->discard || st->body_over || st->responded) {
        (void) nghttp2_session_consume(h2->session, st->id, len);
        return;
    }

    if (st->reading && r->body_cb != NULL) {
        gn_http_module_body(r, (u_char *) data, len);
        (void) nghttp2_session_consume(h2->session, st->id, len);
        return;
    }

    if (st->body_len + len > st->body_cap
        && gn_str_reserve(&st->body, &st->body_cap, st->body_len + len,
                          16384) != GN_OK)
    {
        (void) nghttp2_session_consume(h2->session, st->id, len);
        gn_h2_reset(st, NGHTTP2_INTERNAL_ERROR);
        return;
    }
    memcpy(st->body + st->body_len, data, len);
    st->body_len += len;
}


/* The body is over (the client's END_STREAM) or past the limit: the
 * handler that asked for it goes on. */
static void
gn_h2_body_end(gn_h2_stream_t *st)
{
    gn_http_request_t  *r = st->r;

    if (r == NULL || !st->reading || r->body_done || st->responded) {
        return;
    }

    if (!st->in_closed && !st->body_over) {
        return;
    }

    gn_timer_del(&st->timer);

    if (r->module != NULL) {
        if (!st->body_over) {
            r->body_done = 1;
        }
        if (r->body_cb != NULL) {
            gn_http_module_body_done(r, st->body_over ? 413 : GN_OK);
        }
        return;
    }

    if (st->body_over) {
        r->body_done = 1;
        if (gn_http_response_error(r, 413) != GN_OK) {
            gn_h2_abort(r);
            return;
        }
        gn_h2_respond(r);
        return;
    }

    gn_http_core_body_read(r);
}


static int
gn_h2_on_data_chunk(nghttp2_session *session, uint8_t flags,
    int32_t stream_id, const uint8_t *data, size_t len, void *user_data)
{
    gn_h2_conn_t    *h2 = user_data;
    gn_h2_stream_t  *st;

    (void) flags;

    st = gn_h2_stream_get(h2, stream_id);
    if (st == NULL || st->r == NULL) {
        (void) nghttp2_session_consume(session, stream_id, len);
        return 0;
    }

    gn_h2_body_in(st, data, len);

    if (st->reading && !st->in_closed) {
        gn_timer_set(&st->timer,
                     gn_http_conf(st->r->loc)->client_body_timeout);
    }

    if (st->body_over) {
        gn_h2_body_end(st);
    }

    return 0;
}


static int
gn_h2_on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
    void *user_data)
{
    gn_h2_conn_t    *h2 = user_data;
    gn_h2_stream_t  *st;

    (void) session;

    switch (frame->hd.type) {

    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
        st = gn_h2_stream_get(h2, frame->hd.stream_id);
        if (st == NULL) {
            return 0;
        }

        if (frame->hd.type == NGHTTP2_DATA && frame->hd.length == 0
            && !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        {
            gn_h2_glitch(h2, "empty DATA");
        }

        if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) {
            st->in_closed = 1;
        }

        if (frame->hd.type == NGHTTP2_HEADERS && st->r == NULL
            && (frame->hd.flags & NGHTTP2_FLAG_END_HEADERS))
        {
            gn_h2_request_start(st);
            return 0;
        }

        if (st->in_closed) {
            gn_h2_body_end(st);
        }
        return 0;

    case NGHTTP2_PRIORITY:
        gn_h2_glitch(h2, "PRIORITY");
        return 0;

    case NGHTTP2_PING:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK)) {
            gn_h2_glitch(h2, "PING");
        }
        return 0;

    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK)) {
            gn_h2_glitch(h2, "SETTINGS");
        }
        return 0;

    case NGHTTP2_RST_STREAM:
        gn_h2_sb(proto.h2_client_resets, 1);
        gn_h2_glitch(h2, "RST_STREAM");
        return 0;

    default:
        return 0;
    }
}


static int
gn_h2_on_invalid_frame(nghttp2_session *session, const nghttp2_frame *frame,
    int error, void *user_data)
{
    gn_h2_conn_t    *h2 = user_data;
    gn_h2_stream_t  *st;

    (void) session;
    (void) error;

    st = gn_h2_stream_get(h2, frame->hd.stream_id);
    if (st != NULL) {
        st->invalid = 1;
    }

    gn_h2_glitch(h2, "an invalid frame");
    return 0;
}


static int
gn_h2_on_frame_send(nghttp2_session *session, const nghttp2_frame *frame,
    void *user_data)
{
    gn_h2_conn_t    *h2 = user_data;
    gn_h2_stream_t  *st;

    if (frame->hd.type == NGHTTP2_RST_STREAM
        && frame->rst_stream.error_code == NGHTTP2_REFUSED_STREAM)
    {
        gn_h2_sb(proto.h2_refused, 1);
        return 0;
    }

    /* nghttp2's own flood limits end a connection with this */
    if (frame->hd.type == NGHTTP2_GOAWAY
        && frame->goaway.error_code == NGHTTP2_ENHANCE_YOUR_CALM && !h2->calm)
    {
        gn_h2_sb(proto.h2_flood, 1);
        h2->calm = 1;
        return 0;
    }

    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
        || !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
    {
        return 0;
    }

    st = gn_h2_stream_get(h2, frame->hd.stream_id);
    if (st == NULL || st->r == NULL) {
        return 0;
    }

    /* the response is complete: the request's end; a request served
     * earns one glitch back (a long-lived browser connection sends a
     * PRIORITY or a reset now and then, a flood does not serve) */
    gn_timer_del(&st->timer);
    if (h2->glitches > 0) {
        h2->glitches--;
    }
    if (!st->r->logged) {
        gn_http_core_log(st->r);
    }

    /* a body the client still sends is not wanted (RFC 9113 8.1) */
    if (!st->in_closed) {
        gn_h2_reset(st, NGHTTP2_NO_ERROR);
    }

    return 0;
}


static int
gn_h2_on_stream_close(nghttp2_session *session, int32_t stream_id,
    uint32_t error_code, void *user_data)
{
    gn_h2_conn_t    *h2 = user_data;
    gn_h2_stream_t  *st;

    st = gn_h2_stream_get(h2, stream_id);
    if (st == NULL) {
        return 0;
    }

    (void) nghttp2_session_set_stream_user_data(session, stream_id, NULL);

    /* what was held for the handler goes back to the connection's
     * window (nghttp2 does not give it back with the stream) */
    if (st->body_len > 0) {
        (void) nghttp2_session_consume_connection(session, st->body_len);
        st->body_len = 0;
    }

    /* a head that never became a request (nghttp2 refused it as
     * malformed, or the client reset it midway) still gets its line,
     * as a bad or cut HTTP/1 head does: 400, or 499 */
    if (st->r == NULL && gn_h2_request_create(st) != NULL) {
        st->r->close_status = st->invalid ? 400 : 499;
        if (st->invalid) {
            gn_log_error(GN_LOG_INFO, &h2->c->log, 0, "client sent an "
                         "invalid HTTP/2 request head (stream reset, "
                         "logged 400)");
        }
        st->reset = 1;
    }

    if (st->r != NULL && !st->r->logged) {
        if (error_code != NGHTTP2_NO_ERROR && !st->reset) {
            gn_log_error(GN_LOG_INFO, &h2->c->log, 0, "client reset the "
                         "stream (%s) before the response was complete",
                         nghttp2_http2_strerror(error_code));
        }
        gn_h2_request_end(st, 499);
    }

    gn_timer_del(&st->timer);
    gn_h2_unlink(&h2->streams, st);
    h2->nstreams--;
    gn_h2_sb(h2_streams, -1);
    st->next = h2->closed;
    h2->closed = st;

    return 0;
}


/* The response body's data source: how much the next DATA frame
 * carries (no copy: gn_h2_send_data writes it), the end, or "not yet"
 * (a module's stream). */
static ssize_t
gn_h2_data_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
    size_t length, uint32_t *data_flags, nghttp2_data_source *source,
    void *user_data)
{
    gn_h2_stream_t     *st = source->ptr;
    gn_http_request_t  *r = st->r;
    size_t              n;

    (void) session;
    (void) stream_id;
    (void) buf;
    (void) user_data;

    length = gn_min(length, GN_H2_DATA_MAX);

    if (r->streaming) {
        n = gn_min(length, r->sbuf_last - r->sbuf_pos);
        if (n == 0 && !r->finished) {
            st->deferred = 1;
            return NGHTTP2_ERR_DEFERRED;
        }
        *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
        if (r->finished && n == r->sbuf_last - r->sbuf_pos) {
            *data_flags |= NGHTTP2_DATA_FLAG_EOF;
        }
        return (ssize_t) n;
    }

    n = (size_t) gn_min((off_t) length, st->out_left);
    *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    if ((off_t) n == st->out_left) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    }

    return (ssize_t) n;
}


/* Copies len bytes of r's body segments to p (file bytes read straight
 * into it). GN_OK or GN_ERROR (a file that shrank or failed). */
static gn_int_t
gn_h2_copy_segs(gn_http_request_t *r, u_char *p, size_t len)
{
    gn_http_seg_t  *seg;
    size_t          k;
    ssize_t         n;

    while (len > 0) {
        if (r->cur >= r->nsegs) {
            return GN_ERROR;
        }

        seg = &r->segs[r->cur];
        if (seg->len == 0) {
            r->cur++;
            continue;
        }

        k = gn_min(len, seg->len);

        if (seg->fd == -1) {
            memcpy(p, seg->pos, k);
            seg->pos += k;

        } else {
            n = pread(seg->fd, p, k, seg->off);
            if (n <= 0) {
                if (n == 0) {
                    errno = 0;
                }
                gn_log_error(n == 0 ? GN_LOG_ERR : GN_LOG_INFO, &r->c->log,
                             errno, n == 0 ? "file shrank while being sent"
                                           : "pread() failed");
                return GN_ERROR;
            }
            k = (size_t) n;
            seg->off += n;
        }

        seg->len -= k;
        p += k;
        len -= k;
    }

    return GN_OK;
}


static int
gn_h2_send_data(nghttp2_session *session, nghttp2_frame *frame,
    const uint8_t *framehd, size_t length, nghttp2_data_source *source,
    void *user_data)
{
    gn_h2_conn_t       *h2 = user_data;
    gn_h2_stream_t     *st = source->ptr;
    gn_http_request_t  *r = st->r;
    size_t              pad = frame->data.padlen;
    u_char             *p;

    (void) session;

    if (h2->out_len - h2->out_pos >= GN_H2_OUT_HIGH) {
        h2->wouldblock = 1;
        return NGHTTP2_ERR_WOULDBLOCK;
    }

    if (gn_h2_out_reserve(h2, 9 + length + pad) != GN_OK) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }

    p = gn_cpymem(h2->out + h2->out_len, framehd, 9);
    if (pad > 0) {
        *p++ = (u_char) (pad - 1);
    }

    if (r->streaming) {
        memcpy(p, r->sbuf + r->sbuf_pos, length);
        r->sbuf_pos += length;
        if (r->sbuf_pos == r->sbuf_last) {
            r->sbuf_pos = r->sbuf_last = 0;
        }
        gn_http_module_sent(r);

    } else if (gn_h2_copy_segs(r, p, length) != GN_OK) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }

    p += length;
    if (pad > 1) {
        memset(p, 0, pad - 1);
        p += pad - 1;
    }

    h2->out_len = (size_t) (p - h2->out);
    st->out_left -= (off_t) length;
    r->bytes_sent += (off_t) length;
    gn_timer_set(&st->timer, gn_http_conf(r->loc)->send_timeout);

    return 0;
}


static int
gn_h2_on_error(nghttp2_session *session, int lib_error_code, const char *msg,
    size_t len, void *user_data)
{
    gn_h2_conn_t  *h2 = user_data;

    (void) session;
    (void) lib_error_code;

    gn_log_error(GN_LOG_INFO, &h2->c->log, 0, "HTTP/2: %.*s", (int) len,
                 msg);
    return 0;
}


/* Child start: the callbacks and options every session shares. */
static gn_int_t
gn_h2_init_once(gn_conn_t *c)
{
    nghttp2_session_callbacks  *cb;

    if (gn_h2_callbacks != NULL) {
        return GN_OK;
    }

    if (nghttp2_session_callbacks_new(&cb) != 0
        || nghttp2_option_new(&gn_h2_option) != 0)
    {
        gn_log_error(GN_LOG_CRIT, &c->log, 0, "nghttp2: out of memory");
        return GN_ERROR;
    }

    nghttp2_session_callbacks_set_on_begin_headers_callback(cb,
        gn_h2_on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, gn_h2_on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb,
        gn_h2_on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb,
        gn_h2_on_data_chunk);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb,
        gn_h2_on_invalid_frame);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb,
        gn_h2_on_frame_send);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb,
        gn_h2_on_stream_close);
    nghttp2_session_callbacks_set_send_data_callback(cb, gn_h2_send_data);
    nghttp2_session_callbacks_set_error_callback2(cb, gn_h2_on_error);

    /* the window reopens as a handler takes the body */
    nghttp2_option_set_no_auto_window_update(gn_h2_option, 1);
    /* no more than the SETTINGS and PING answers a client can force
     * into the queue, and rapid reset (CVE-2023-44487) and CONTINUATION
     * floods (CVE-2024-28182) as nghttp2's fixes limit them */
    nghttp2_option_set_max_outbound_ack(gn_h2_option, 1000);
    nghttp2_option_set_max_settings(gn_h2_option, 32);
    nghttp2_option_set_stream_reset_rate_limit(gn_h2_option, 1000, 33);
    nghttp2_option_set_max_continuations(gn_h2_option, 8);

    gn_h2_callbacks = cb;
    return GN_OK;
}


void
gn_http2_init_conn(gn_conn_t *c)
{
    gn_http_conf_t         *hcf = gn_h2_conf(c);
    gn_h2_conn_t           *h2;
    nghttp2_settings_entry  iv[4];
    int                     rv;

    if (gn_h2_init_once(c) != GN_OK) {
        gn_conn_close(c);
        return;
    }

    h2 = calloc(1, sizeof(gn_h2_conn_t));
    if (h2 == NULL) {
        gn_log_error(GN_LOG_CRIT, &c->log, errno, "calloc() failed");
        gn_conn_close(c);
        return;
    }

    h2->c = c;
    c->data = h2;
    c->handler = gn_h2_handler;
    c->on_close = gn_h2_closed;
    c->on_drain = gn_h2_drain;
    c->timer.handler = gn_h2_timeout;
    c->timer.data = c;
    gn_timer_init_node(&h2->post, gn_h2_post_handler, h2);

    if (nghttp2_session_server_new2(&h2->session, gn_h2_callbacks, h2,
                                    gn_h2_option) != 0)
    {
        gn_log_error(GN_LOG_CRIT, &c->log, 0, "nghttp2: out of memory");
        gn_conn_close(c);
        return;
    }

    iv[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
    iv[0].value = (uint32_t) hcf->http2_max_concurrent_streams;
    iv[1].settings_id = NGHTTP2_SETTINGS_ENABLE_PUSH;
    iv[1].value = 0;
    iv[2].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
    iv[2].value = (uint32_t) gn_min(hcf->client_max_header_size, 0x7fffffff);
    iv[3].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
    iv[3].value = 65535;

    rv = nghttp2_submit_settings(h2->session, NGHTTP2_FLAG_NONE, iv, 4);
    if (rv == 0) {
        rv = nghttp2_session_set_local_window_size(h2->session,
                                                   NGHTTP2_FLAG_NONE, 0,
                                                   GN_H2_WINDOW);
    }
    if (rv != 0) {
        gn_log_error(GN_LOG_CRIT, &c->log, 0, "nghttp2: %s",
                     nghttp2_strerror(rv));
        gn_conn_close(c);
        return;
    }

    c->state = GN_CONN_READING;
    c->state_since = gn_current_msec;
    c->read_ready = 1;
    gn_conn_nodelay(c);
    gn_h2_sb(h2_open, 1);
    gn_h2_sb(proto.h2_connections, 1);
    h2->counted = 1;

    gn_h2_handler(c);
}


/* The connection's on_close: every stream's request gets its end and
 * its pool back; nghttp2 calls no callback from here on. */
static void
gn_h2_closed(gn_conn_t *c)
{
    gn_h2_conn_t    *h2 = c->data;
    gn_h2_stream_t  *st;

    while (h2->streams != NULL) {
        st = h2->streams;
        h2->streams = st->next;
        /* a head cut short by the close gets its line, as in HTTP/1:
         * 400 (408 when a timeout closed it) */
        if (st->r == NULL && gn_h2_request_create(st) != NULL) {
            st->r->close_status = h2->head_timeout ? 408 : 400;
        }
        gn_h2_request_end(st, 499);
        gn_h2_stream_free(st);
        gn_h2_sb(h2_streams, -1);
    }

    if (h2->counted) {
        gn_h2_sb(h2_open, -1);
    }

    gn_h2_reap(h2);
    gn_timer_del(&h2->post);
    nghttp2_session_del(h2->session);
    gn_h2_out_put(h2);
    free(h2);
    c->data = NULL;
}


/* ---- the stream of an HTTP/2 request (gn_http_stream_t) ----------------- */

/* The limits of the server the request went to on what its head was:
 * the decoded size (client_max_header_size), fields (client_max_headers)
 * and :path (client_max_request_line). */
static gn_int_t
gn_h2_limits(gn_http_request_t *r)
{
    gn_h2_stream_t  *st = gn_h2_st(r);
    gn_http_conf_t  *hcf = gn_http_conf(r->loc);

    if (st->path.len > hcf->client_max_request_line) {
        return 414;
    }

    if (st->hsize > hcf->client_max_header_size
        || st->nhdrs > (gn_uint_t) hcf->client_max_headers + 1)
    {
        return 431;
    }

    return GN_OK;
}


/* Header fields HTTP/2 forbids (RFC 9113 8.2.2), which the HTTP/1 head
 * that gn_http_response_head() builds has. */
static gn_uint_t
gn_h2_hop_by_hop(const u_char *name, size_t len)
{
    static const gn_str_t  hop[] = {
        gn_string("connection"), gn_string("keep-alive"),
        gn_string("transfer-encoding"), gn_string("upgrade"),
        gn_string("proxy-connection")
    };
    gn_uint_t  i;

    for (i = 0; i < gn_nelems(hop); i++) {
        if (hop[i].len == len && memcmp(hop[i].data, name, len) == 0) {
            return 1;
        }
    }

    return 0;
}


/*
 * The response: its head as HTTP/1's (gn_http_response_head(): every
 * header the same), turned into the field list of a HEADERS frame, names
 * in lower case; its body from the segments or the module's stream.
 */
static void
gn_h2_respond(gn_http_request_t *r)
{
    gn_h2_stream_t         *st = gn_h2_st(r);
    gn_h2_conn_t           *h2 = st->h2;
    nghttp2_data_provider   prd, *pprd;
    nghttp2_nv             *nv;
    u_char                 *p, *end, *eol, *colon, *q;
    gn_uint_t               n, i;
    char                   *status;

    if (st->responded) {
        return;
    }

    r->keepalive = 1;
    r->chunked_out = 0;

    if (gn_http_response_head(r) != GN_OK) {
        gn_h2_abort(r);
        return;
    }

    p = r->segs[0].pos;
    end = p + r->segs[0].len;

    for (n = 0, q = p; (q = memchr(q, '\n', (size_t) (end - q))) != NULL;
         q++)
    {
        n++;
    }

    nv = gn_palloc(r->pool, (n + 1) * sizeof(nghttp2_nv));
    status = gn_pnalloc(r->pool, 4);
    if (nv == NULL || status == NULL) {
        gn_h2_abort(r);
        return;
    }

    status[0] = (char) ('0' + r->status / 100 % 10);
    status[1] = (char) ('0' + r->status / 10 % 10);
    status[2] = (char) ('0' + r->status % 10);
    status[3] = '\0';
    /* the fields stay in r->pool until the stream is reaped, after
     * nghttp2 is done with it: no copies */
    nv[0].name = (uint8_t *) ":status";
    nv[0].namelen = 7;
    nv[0].value = (uint8_t *) status;
    nv[0].valuelen = 3;
    nv[0].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;
    n = 1;

    eol = memchr(p, '\n', (size_t) (end - p));     /* the status line */

    for (p = eol + 1; p < end; p = eol + 1) {
        eol = memchr(p, '\n', (size_t) (end - p));
        if (eol == NULL || eol - p <= 1) {
            break;                                 /* the empty line */
        }
        colon = memchr(p, ':', (size_t) (eol - p));
        if (colon == NULL) {
            continue;
        }
        for (q = p; q < colon; q++) {
            *q = (u_char) gn_tolower(*q);
        }
        if (gn_h2_hop_by_hop(p, (size_t) (colon - p))) {
            continue;
        }
        for (q = colon + 1; q < eol && *q == ' '; q++) {
            /* void */
        }
        nv[n].name = p;
        nv[n].namelen = (size_t) (colon - p);
        nv[n].value = q;
        nv[n].valuelen = (size_t) (eol - 1 - q);   /* before the CR */
        nv[n].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME
                      | NGHTTP2_NV_FLAG_NO_COPY_VALUE;
        n++;
    }

    /* the head was only the source of the fields */
    r->bytes_sent = r->header_bytes;
    r->segs[0].len = 0;
    r->cur = 1;

    st->out_left = 0;
    for (i = 1; i < r->nsegs; i++) {
        st->out_left += (off_t) r->segs[i].len;
    }

    pprd = NULL;
    if (!r->header_only && (r->streaming || st->out_left > 0)) {
        prd.source.ptr = st;
        prd.read_callback = gn_h2_data_read;
        pprd = &prd;
    }

    st->responded = 1;

    /* a body held for a handler that answered without it: dropped, its
     * window reopened (what still comes is dropped as it comes) */
    if (!st->reading && st->body_len > 0) {
        (void) nghttp2_session_consume(h2->session, st->id, st->body_len);
        st->body_len = 0;
    }

    /* a client that does not open its window (or a module that does not
     * stream) is given send_timeout between frames, as HTTP/1's writes */
    gn_timer_set(&st->timer, gn_http_conf(r->loc)->send_timeout);

    if (nghttp2_submit_response(h2->session, st->id, nv, n, pprd) != 0) {
        gn_h2_abort(r);
        return;
    }

    gn_h2_post(h2);
}


static void
gn_h2_send(gn_http_request_t *r)
{
    gn_h2_stream_t  *st = gn_h2_st(r);

    if (st->deferred) {
        st->deferred = 0;
        (void) nghttp2_session_resume_data(st->h2->session, st->id);
        gn_h2_post(st->h2);
    }
}


/* A streamed body goes as the bytes are: DATA frames are its framing. */
static gn_int_t
gn_h2_frame(gn_http_request_t *r, const u_char *data, size_t len)
{
    return gn_http_sbuf_append(r, data, len);
}


/* DATA frames are made of the queued bytes as they are. */
static gn_uint_t
gn_h2_verbatim(gn_http_request_t *r)
{
    (void) r;
    return 1;
}


static gn_int_t
gn_h2_frame_end(gn_http_request_t *r)
{
    (void) r;
    return GN_OK;                     /* END_STREAM on the last DATA */
}


static void
gn_h2_read_body(gn_http_request_t *r)
{
    gn_h2_stream_t  *st = gn_h2_st(r);
    gn_h2_conn_t    *h2 = st->h2;

    st->reading = 1;
    st->discard = (r->module == NULL);

    /* a client that waits for it before it sends its body */
    if (r->head.expect_continue && !st->in_closed && st->body_total == 0) {
        static const nghttp2_nv  cont = {
            (uint8_t *) ":status", (uint8_t *) "100", 7, 3,
            NGHTTP2_NV_FLAG_NONE
        };

        (void) nghttp2_submit_headers(h2->session, NGHTTP2_FLAG_NONE, st->id,
                                      NULL, &cont, 1, NULL);
    }

    if (st->body_len > 0) {
        if (!st->discard && !st->body_over && r->body_cb != NULL) {
            gn_http_module_body(r, st->body, st->body_len);
        }
        (void) nghttp2_session_consume(h2->session, st->id, st->body_len);
        st->body_len = 0;
    }

    if (!st->in_closed && !st->body_over) {
        gn_timer_set(&st->timer, gn_http_conf(r->loc)->client_body_timeout);
    }

    gn_h2_post(h2);
    gn_h2_body_end(st);
}


static void
gn_h2_wait(gn_http_request_t *r)
{
    gn_h2_stream_t  *st = gn_h2_st(r);

    if (!gn_timer_is_set(&st->timer)) {
        gn_timer_set(&st->timer, gn_http_conf(r->loc)->send_timeout);
    }
}


static void
gn_h2_abort(gn_http_request_t *r)
{
    gn_h2_stream_t  *st = gn_h2_st(r);

    gn_h2_reset(st, NGHTTP2_INTERNAL_ERROR);
    gn_h2_post(st->h2);
}


/* A stream's wait is over: the client did not take the response (its
 * window stayed shut) or its body did not come in time (408), or a
 * module did not answer in time (504). The stream is reset; the request
 * is logged with the status (the one sent, once bytes of it went). */
static void
gn_h2_stream_timeout(gn_timer_t *t)
{
    gn_h2_stream_t     *st = t->data;
    gn_http_request_t  *r = st->r;
    gn_conn_t          *c = st->h2->c;

    if (r == NULL) {
        return;
    }

    if (st->responded) {
        c->log.action = "sending the response";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        r->close_status = 408;

    } else if (st->reading && !st->in_closed && !r->body_done) {
        c->log.action = "reading the request body";
        gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
        r->close_status = 408;

    } else {
        c->log.action = "waiting for a module to finish the response";
        gn_log_error(GN_LOG_ERR, &c->log, 0, "timed out");
        r->close_status = 504;
    }
    c->log.action = NULL;

    gn_h2_sb(proto.h2_timeouts, 1);
    gn_h2_reset(st, NGHTTP2_CANCEL);
    gn_h2_post(st->h2);
}
