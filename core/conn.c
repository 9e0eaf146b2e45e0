/*
 * Connections: accepting, the connection and buffer free lists, plain
 * socket I/O, closing and draining. No protocol and no TLS by name: a
 * new connection goes to its listener's layer (TLS) or protocol, its
 * events to the handler the protocol set (conn.h).
 *
 * Accept distribution: every child adds the shared listening socket with
 * EPOLLEXCLUSIVE. The kernel then wakes the same waiter again and again
 * (the last one to sleep), so after every GN_ACCEPT_REORDER accepts a
 * child deletes and re-adds the listener, which moves it to the back of
 * the wait queue (nginx's ngx_reorder_accept_events). Measured in
 * doc/internals.md section 5; tested in t/integ/50-prefork.t.
 */

#include "gn_config.h"

#include <sys/sendfile.h>
#include <netinet/tcp.h>

#include "conn.h"
#include "log.h"
#include "listen.h"
#include "scoreboard.h"
#include "file_cache.h"
#include "proxy_protocol.h"


#define GN_ACCEPT_REORDER   16
#define GN_ACCEPT_BATCH     32
#define GN_CONN_POOL_SIZE   4096


typedef struct {
    gn_io_t        io;
    gn_listen_t   *ls;
    gn_uint_t      accepted;
    gn_uint_t      active;      /* in epoll */
} gn_accept_t;


gn_uint_t          gn_conn_count;
gn_uint_t          gn_conn_draining;

static gn_conn_t   *gn_conn_open;         /* list of open connections */
static gn_conn_t   *gn_conn_free;
static gn_pool_t   *gn_pool_free;         /* pools of idle connections */
static u_char      *gn_buf_free;          /* free head buffers, linked */
static size_t       gn_buf_size;
static gn_accept_t *gn_acceptors;
static gn_uint_t    gn_nacceptors;
static gn_uint_t    gn_max_conns;
static gn_uint_t    gn_accept_paused;
static gn_timer_t   gn_accept_timer;
static time_t       gn_emfile_logged;


static ssize_t gn_conn_plain_recv(gn_conn_t *c, u_char *buf, size_t len);
static ssize_t gn_conn_plain_writev(gn_conn_t *c, struct iovec *iov, int n,
    int more);
static ssize_t gn_conn_plain_sendfile(gn_conn_t *c, int fd, off_t *off,
    size_t len);
static void gn_conn_accept_handler(gn_io_t *io, uint32_t events);
static void gn_conn_event_handler(gn_io_t *io, uint32_t events);
static void gn_conn_accept_resume(gn_timer_t *t);
static gn_uint_t gn_conn_siblings_full(void);
static size_t gn_conn_log_context(gn_log_t *log, char *buf, size_t len);
static void gn_conn_linger(gn_conn_t *c);
static void gn_conn_proxy_start(gn_conn_t *c);

static const gn_conn_ops_t  gn_conn_plain_ops = {
    gn_conn_plain_recv,
    gn_conn_plain_writev,
    gn_conn_plain_sendfile
};


static void
gn_accept_enable(gn_accept_t *a)
{
    if (a->active || a->io.fd == -1) {
        return;
    }

    if (gn_event_add(&a->io, GN_EV_IN | GN_EV_EXCLUSIVE) != GN_OK) {
        gn_log_error(GN_LOG_ALERT, NULL, errno,
                     "epoll_ctl(ADD) of listener %.*s failed",
                     GN_STR_ARG(&a->ls->text));
        return;
    }
    a->active = 1;
}


static void
gn_accept_disable(gn_accept_t *a)
{
    if (!a->active) {
        return;
    }

    (void) gn_event_del(&a->io);
    a->active = 0;
}


static void
gn_accept_pause(gn_uint_t on)
{
    gn_uint_t  i;

    if (gn_conn_draining) {
        return;
    }

    for (i = 0; i < gn_nacceptors; i++) {
        if (on) {
            gn_accept_disable(&gn_acceptors[i]);
        } else {
            gn_accept_enable(&gn_acceptors[i]);
        }
    }

    gn_accept_paused = on;
}


gn_int_t
gn_conn_listen_start(gn_cycle_t *cycle, gn_uint_t max_conns)
{
    gn_listen_t  *ls;
    gn_uint_t     i;

    gn_max_conns = max_conns;
    gn_buf_size = 0;

    ls = cycle->listening.elts;
    gn_nacceptors = cycle->listening.nelts;
    gn_acceptors = calloc(gn_nacceptors, sizeof(gn_accept_t));
    if (gn_acceptors == NULL) {
        return GN_ERROR;
    }

    for (i = 0; i < gn_nacceptors; i++) {
        if (ls[i].proto == NULL || (ls[i].tls && ls[i].layer == NULL)) {
            gn_log_error(GN_LOG_ALERT, NULL, 0, "listener %.*s has no "
                         "protocol or no TLS layer", GN_STR_ARG(&ls[i].text));
            return GN_ERROR;
        }
        gn_acceptors[i].io.fd = ls[i].fd;
        gn_acceptors[i].io.handler = gn_conn_accept_handler;
        gn_acceptors[i].io.data = &gn_acceptors[i];
        gn_acceptors[i].ls = &ls[i];
        gn_accept_enable(&gn_acceptors[i]);
        if (!gn_acceptors[i].active) {
            return GN_ERROR;
        }
    }

    gn_timer_init_node(&gn_accept_timer, gn_conn_accept_resume, NULL);

    return GN_OK;
}


void
gn_conn_listen_stop(gn_cycle_t *cycle)
{
    gn_uint_t  i;

    gn_timer_del(&gn_accept_timer);

    for (i = 0; i < gn_nacceptors; i++) {
        gn_accept_disable(&gn_acceptors[i]);
        if (gn_acceptors[i].io.fd != -1) {
            close(gn_acceptors[i].io.fd);     /* our copy only */
            gn_acceptors[i].io.fd = -1;
        }
    }
}


static void
gn_conn_accept_resume(gn_timer_t *t)
{
    /* below the limit again, or every child full (then answer 503s) */
    if (gn_conn_count < gn_max_conns || gn_conn_siblings_full()) {
        gn_accept_pause(0);
        return;
    }

    gn_timer_set(&gn_accept_timer, 100);
}


static gn_conn_t *
gn_conn_get(void)
{
    gn_conn_t  *c;
    gn_uint_t   instance;

    c = gn_conn_free;
    if (c != NULL) {
        gn_conn_free = c->next;
        instance = c->io.instance;

    } else {
        c = malloc(sizeof(gn_conn_t));
        if (c == NULL) {
            return NULL;
        }
        instance = 0;
    }

    memset(c, 0, sizeof(gn_conn_t));
    c->io.instance = instance;
    c->io.handler = gn_conn_event_handler;
    c->io.data = c;
    c->ops = &gn_conn_plain_ops;
    gn_timer_init_node(&c->timer, NULL, c);

    c->next = gn_conn_open;
    if (gn_conn_open != NULL) {
        gn_conn_open->prev = c;
    }
    gn_conn_open = c;

    return c;
}


gn_pool_t *
gn_conn_pool_get(gn_conn_t *c)
{
    if (c->pool != NULL) {
        return c->pool;
    }

    if (gn_pool_free != NULL) {
        c->pool = gn_pool_free;
        gn_pool_free = c->pool->free_next;

    } else {
        c->pool = gn_pool_create(GN_CONN_POOL_SIZE);
        if (c->pool == NULL) {
            gn_log_error(GN_LOG_CRIT, &c->log, errno,
                         "out of memory for a connection pool");
        }
    }

    return c->pool;
}


void
gn_conn_pool_put(gn_conn_t *c)
{
    if (c->pool == NULL) {
        return;
    }

    c->log_client = NULL;               /* it may be in the pool */
    gn_pool_reset(c->pool);
    c->pool->free_next = gn_pool_free;
    gn_pool_free = c->pool;
    c->pool = NULL;
}


static void
gn_conn_accept_one(gn_accept_t *a, int fd, struct sockaddr_storage *sa,
    socklen_t salen)
{
    gn_conn_t  *c;

    c = gn_conn_get();
    if (c == NULL) {
        gn_log_error(GN_LOG_CRIT, NULL, errno,
                     "out of memory for a connection");
        close(fd);
        return;
    }

    c->io.fd = fd;
    c->listen = a->ls;
    c->accepted = gn_current_msec;
    memcpy(&c->peer, sa, salen);
    c->peerlen = salen;
    c->addr_len = gn_sockaddr_text((struct sockaddr *) sa, c->addr_text,
                                   sizeof(c->addr_text));

    c->log = gn_cycle->log;
    c->log.handler = gn_conn_log_context;
    c->log.data = c;

    /*
     * TCP_NODELAY is set when it matters (nginx does the same): at once
     * for TLS, whose handshake flights must not wait for an ACK, and
     * otherwise before the first response that leaves the connection
     * open (gn_conn_nodelay). A response followed by close() is pushed
     * out by the FIN, so one-request connections save the syscall.
     */
    if (a->ls->tls) {
        gn_conn_nodelay(c);
    }

    if (gn_event_add(&c->io, GN_EV_IN | GN_EV_OUT | GN_EV_RDHUP | GN_EV_ET)
        != GN_OK)
    {
        gn_log_error(GN_LOG_ALERT, &c->log, errno, "epoll_ctl(ADD) failed");
        gn_conn_close(c);
        return;
    }

    gn_conn_count++;
    if (gn_sb_me != NULL) {
        gn_sb_me->accepted++;
        gn_sb_me->connections = gn_conn_count;
    }

    /* Loopback clients usually sent the request already: read it now. */
    c->read_ready = 1;
    c->write_ready = 1;

    if (a->ls->proxy_protocol) {
        gn_conn_proxy_start(c);         /* then gn_conn_start() */
    } else {
        gn_conn_start(c);
    }
}


void
gn_conn_start(gn_conn_t *c)
{
    if (c->listen->layer != NULL) {
        c->listen->layer->start(c);     /* then the protocol's init_conn */
    } else {
        c->listen->proto->init_conn(c);
    }
}


/* ---- a PROXY protocol header first (proxy_protocol.h) ------------------- */

static void
gn_conn_pp_fail(gn_conn_t *c, const char *why)
{
    gn_log_error(GN_LOG_INFO, &c->log, 0, "closing the connection: %s "
                 "on a proxy_protocol listener", why);
    gn_conn_close(c);
}


static void
gn_conn_pp_timeout(gn_timer_t *t)
{
    gn_conn_pp_fail(t->data, "no PROXY protocol header in time");
}


static void
gn_conn_pp_read(gn_conn_t *c)
{
    u_char               buf[GN_PROXY_PROTOCOL_MAX];
    gn_proxy_protocol_t  pp;
    const char          *err;
    ssize_t              n, used;

    if (!c->read_ready) {
        return;
    }

    /* look first: the bytes after the header are the layer's */
    do {
        n = recv(c->io.fd, buf, sizeof(buf), MSG_PEEK);
    } while (n == -1 && errno == EINTR);

    if (n == -1) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            c->read_ready = 0;
            if (c->hup) {
                gn_conn_pp_fail(c, "the client went away before its "
                                "PROXY protocol header");
            }
            return;
        }
        gn_log_error(GN_LOG_INFO, &c->log, errno, "recv() failed");
        gn_conn_close(c);
        return;
    }
    if (n == 0) {
        gn_conn_pp_fail(c, "the client closed before its PROXY protocol "
                        "header");
        return;
    }

    used = gn_proxy_protocol_parse(buf, (size_t) n, &pp, &err);
    if (used < 0) {
        gn_conn_pp_fail(c, err);
        return;
    }
    if (used == 0) {
        if ((size_t) n == sizeof(buf)) {
            gn_conn_pp_fail(c, "a PROXY protocol header too long");
            return;
        }
        if (c->hup) {
            /* no more is coming, and peeking sees the same bytes */
            gn_conn_pp_fail(c, "the client closed in its PROXY protocol "
                            "header");
            return;
        }
        c->read_ready = 0;            /* the rest raises an event */
        return;
    }

    do {
        n = recv(c->io.fd, buf, (size_t) used, 0);
    } while (n == -1 && errno == EINTR);
    if (n != used) {
        gn_log_error(GN_LOG_ALERT, &c->log, n == -1 ? errno : 0,
                     "recv() of a PROXY protocol header of %zd bytes "
                     "took %zd", used, n);
        gn_conn_close(c);
        return;
    }

    if (pp.src.ss_family != 0) {
        c->proxy = malloc(sizeof(gn_conn_proxy_t));
        if (c->proxy == NULL) {
            gn_log_error(GN_LOG_CRIT, &c->log, errno, "out of memory");
            gn_conn_close(c);
            return;
        }
        memcpy(&c->proxy->src, &pp.src, sizeof(pp.src));
        memcpy(&c->proxy->dst, &pp.dst, sizeof(pp.dst));
        c->proxy->src_len = gn_sockaddr_text((struct sockaddr *) &pp.src,
                                             c->proxy->src_text,
                                             sizeof(c->proxy->src_text));
    }

    gn_timer_del(&c->timer);
    c->timer.handler = NULL;
    c->handler = NULL;
    c->read_ready = 1;                /* what followed the header */

    gn_conn_start(c);
}


/* The header comes within the protocol's time for a handshake (HTTP's:
 * the default server's client_header_timeout). */
static void
gn_conn_proxy_start(gn_conn_t *c)
{
    c->handler = gn_conn_pp_read;
    c->timer.handler = gn_conn_pp_timeout;
    gn_timer_set(&c->timer, c->listen->proto->handshake_timeout(c));

    gn_conn_pp_read(c);
}


/*
 * max_connections reached. If a sibling of this generation still has
 * room, stop accepting for a moment and let it take the connections;
 * when every child is full, accept and answer 503 at once, so that a
 * client is told rather than left in the kernel's queue.
 */
static gn_uint_t
gn_conn_siblings_full(void)
{
    gn_sb_slot_t  *s;
    gn_int_t       i;

    if (gn_sb == NULL || gn_sb_me == NULL) {
        return 1;
    }

    for (i = 0; i < GN_SB_SLOTS; i++) {
        s = &gn_sb->slots[i];
        if (s != gn_sb_me && s->state == GN_SB_RUNNING
            && s->generation == gn_sb_me->generation
            && s->connections < gn_max_conns)
        {
            return 0;
        }
    }

    return 1;
}


static void
gn_conn_reject(gn_accept_t *a, int fd)
{
    const gn_str_t  *busy = &a->ls->proto->busy;
    char             drain[4096];

    /* read what the client sent already, so that close() does not turn
     * into a RST that destroys the answer */
    (void) recv(fd, drain, sizeof(drain), MSG_DONTWAIT);
    (void) send(fd, busy->data, busy->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void) shutdown(fd, SHUT_WR);
    close(fd);

    if (gn_current_sec != gn_emfile_logged) {
        gn_log_error(GN_LOG_WARN, NULL, 0, "%u connections open in this "
                     "child and in every other: answering 503 on %.*s "
                     "(max_connections)", (unsigned) gn_max_conns,
                     GN_STR_ARG(&a->ls->text));
        gn_emfile_logged = gn_current_sec;
    }
}


static void
gn_conn_accept_handler(gn_io_t *io, uint32_t events)
{
    gn_accept_t             *a = io->data;
    struct sockaddr_storage  sa;
    socklen_t                salen;
    gn_uint_t                n;
    int                      fd, err;

    for (n = 0; n < GN_ACCEPT_BATCH; n++) {

        if (gn_conn_count >= gn_max_conns && !gn_conn_siblings_full()) {
            gn_accept_pause(1);
            gn_timer_set(&gn_accept_timer, 100);
            return;
        }

        salen = sizeof(sa);
        fd = accept4(io->fd, (struct sockaddr *) &sa, &salen,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd == -1) {
            err = errno;

            if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR
                || err == ECONNABORTED || err == EPROTO)
            {
                break;
            }

            if ((err == EMFILE || err == ENFILE)
                && gn_file_cache_emfile(GN_FC_ACCEPT_KEEP) > 0)
            {
                continue;           /* the cache gave descriptors back */
            }

            if (err == EMFILE || err == ENFILE || err == ENOBUFS
                || err == ENOMEM)
            {
                /* Out of descriptors: stop accepting for a moment rather
                 * than spin on a listener that stays readable. */
                if (gn_current_sec != gn_emfile_logged) {
                    gn_log_error(GN_LOG_CRIT, NULL, err,
                                 "accept4() on %.*s failed, pausing accepts",
                                 GN_STR_ARG(&a->ls->text));
                    gn_emfile_logged = gn_current_sec;
                }
                gn_accept_pause(1);
                gn_timer_set(&gn_accept_timer, 100);
                return;
            }

            gn_log_error(GN_LOG_ALERT, NULL, err, "accept4() on %.*s failed",
                         GN_STR_ARG(&a->ls->text));
            break;
        }

        if (gn_conn_count >= gn_max_conns) {
            gn_conn_reject(a, fd);
            continue;
        }

        gn_conn_accept_one(a, fd, &sa, salen);

        if (++a->accepted % GN_ACCEPT_REORDER == 0 && a->active) {
            gn_accept_disable(a);
            gn_accept_enable(a);
        }
    }
}


static void
gn_conn_event_handler(gn_io_t *io, uint32_t events)
{
    gn_conn_t  *c = io->data;

    if (events & (GN_EV_IN | GN_EV_ERR | GN_EV_RDHUP)) {
        c->read_ready = 1;
    }

    if (events & (GN_EV_ERR | GN_EV_RDHUP)) {
        c->hup = 1;
    }

    if (events & (GN_EV_OUT | GN_EV_ERR)) {
        c->write_ready = 1;
        if (c->read_on_write) {
            c->read_on_write = 0;     /* TLS's read waited for a write */
            c->read_ready = 1;
        }
        /* what a batched write left behind goes on its own, whether the
         * protocol writes again or waits for a request (an error is its
         * next write's) */
        if (c->sq.back_len != 0 && c->state != GN_CONN_LINGERING) {
            (void) gn_sendq_push(&c->sq);
        }
    }

    if (c->state == GN_CONN_LINGERING) {
        gn_conn_linger(c);
        return;
    }

    c->handler(c);
}


static void
gn_conn_linger_timeout(gn_timer_t *t)
{
    gn_conn_close(t->data);
}


/* Lingering (see gn_conn_close): TLS's last record while the socket is
 * full, then the write side shut, then input dropped until EOF. */
static void
gn_conn_linger(gn_conn_t *c)
{
    u_char    buf[4096];
    ssize_t   n;
    gn_int_t  rc;
    gn_uint_t shut;

    shut = 0;

    if (c->tls != NULL) {
        if (c->listen->layer->shutdown(c) == GN_AGAIN) {
            return;                     /* on the next EPOLLOUT */
        }
        c->ops = &gn_conn_plain_ops;
        shut = 1;
    }

    if (gn_sendq_pending(&c->sq)) {
        /* the last batched bytes (a response's, TLS's last record), then
         * the FIN */
        rc = gn_sendq_push(&c->sq);
        if (rc == GN_AGAIN
            && gn_current_msec - c->state_since < GN_LINGER_MAX_MSEC)
        {
            gn_timer_set(&c->timer, gn_min(GN_LINGER_MSEC, GN_LINGER_MAX_MSEC
                                    - (gn_current_msec - c->state_since)));
            return;                     /* on the next EPOLLOUT */
        }
        if (rc != GN_OK) {
            gn_conn_close(c);           /* it gave up: dropped */
            return;
        }
        shut = 1;
    }

    if (shut) {
        (void) shutdown(c->io.fd, SHUT_WR);
    }

    for ( ;; ) {
        do {
            n = recv(c->io.fd, buf, sizeof(buf), 0);
        } while (n == -1 && errno == EINTR);

        if (n > 0) {
            continue;
        }

        if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)
            && gn_current_msec - c->state_since < GN_LINGER_MAX_MSEC)
        {
            gn_timer_set(&c->timer, gn_min(GN_LINGER_MSEC, GN_LINGER_MAX_MSEC
                                    - (gn_current_msec - c->state_since)));
            return;
        }

        gn_conn_close(c);
        return;
    }
}


/* Starts lingering: see gn_conn_close. */
static void
gn_conn_linger_start(gn_conn_t *c)
{
    c->linger_close = 0;
    gn_conn_pool_put(c);
    gn_conn_buf_put(c);
    c->state = GN_CONN_LINGERING;
    c->state_since = gn_current_msec;
    c->timer.handler = gn_conn_linger_timeout;
    c->timer.data = c;
    gn_timer_set(&c->timer, GN_LINGER_MSEC);

    if (c->tls == NULL && !gn_sendq_pending(&c->sq)) {
        (void) shutdown(c->io.fd, SHUT_WR);
    }

    gn_conn_linger(c);
}


void
gn_conn_nodelay(gn_conn_t *c)
{
    int  on;

    if (c->nodelay) {
        return;
    }

    on = 1;
    (void) setsockopt(c->io.fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    c->nodelay = 1;
}


void
gn_conn_close(gn_conn_t *c)
{
    gn_conn_handler_pt  on_close;

    if (c->on_close != NULL) {
        on_close = c->on_close;
        c->on_close = NULL;        /* once, even if it lingers */
        on_close(c);
    }
    c->handler = NULL;
    c->on_drain = NULL;
    c->data = NULL;

    /* batched bytes go before the close; those the socket has no room
     * for yet keep it open, lingering, until they are out (or its
     * limits pass); lingering already, they are dropped */
    if (gn_sendq_pending(&c->sq) && c->io.fd != -1
        && c->state != GN_CONN_LINGERING
        && gn_sendq_push(&c->sq) == GN_AGAIN)
    {
        gn_log_error(GN_LOG_DEBUG, &c->log, 0, "closing with %zu bytes "
                     "still to send: lingering until they are out",
                     c->sq.back_len - c->sq.back_pos);
        gn_conn_linger_start(c);
        return;
    }
    gn_sendq_drop(&c->sq);

    if (c->linger_close && c->io.fd != -1 && !c->eof) {
        gn_conn_linger_start(c);
        return;
    }

    c->linger_close = 0;
    c->read_on_write = 0;
    gn_conn_pool_put(c);
    free(c->proxy);
    c->proxy = NULL;
    if (c->tls != NULL) {
        c->listen->layer->close(c);
        gn_sendq_finish(&c->sq);     /* its last record, if it fits */
    }
    gn_timer_del(&c->timer);
    gn_conn_buf_put(c);

    if (c->io.fd != -1) {
        close(c->io.fd);           /* also removes it from epoll */
        c->io.fd = -1;
        gn_conn_count--;
    }

    c->io.instance ^= 1;           /* events already fetched are stale */

    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        gn_conn_open = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }

    c->prev = NULL;
    c->next = gn_conn_free;
    gn_conn_free = c;

    if (gn_sb_me != NULL) {
        gn_sb_me->connections = gn_conn_count;
    }

    if (gn_accept_paused && gn_conn_count < gn_max_conns
        && !gn_timer_is_set(&gn_accept_timer))
    {
        gn_accept_pause(0);
    }
}


gn_uint_t
gn_conn_drain(gn_msec_t idle_grace)
{
    gn_conn_t  *c, *next;
    u_char      byte;

    for (c = gn_conn_open; c != NULL; c = next) {
        next = c->next;

        if (c->on_drain != NULL) {
            c->on_drain(c);
            continue;
        }

        /* An idle keep-alive connection may have a request on its way:
         * keep it open for a short grace; a request that arrives gets its
         * answer with "Connection: close". */
        if (c->state == GN_CONN_KEEPALIVE && c->buf_len == 0) {
            if (gn_current_msec - c->state_since >= idle_grace) {
                /* a request that arrived while the loop was busy (its
                 * event not handled yet) is answered, not reset */
                if (recv(c->io.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0) {
                    c->read_ready = 1;
                    c->handler(c);
                    continue;
                }
                gn_conn_close(c);
            } else {
                gn_timer_set(&c->timer, idle_grace
                             - (gn_current_msec - c->state_since));
            }
        }
    }

    return gn_conn_count;
}


void
gn_conn_close_all(void)
{
    while (gn_conn_open != NULL) {
        gn_conn_open->linger_close = 0;
        gn_conn_open->stopping = 1;
        gn_conn_close(gn_conn_open);
    }
}


u_char *
gn_conn_buf_get(gn_conn_t *c, size_t size)
{
    u_char  *b;

    if (c->buf != NULL) {
        return c->buf;
    }

    b = gn_buf_size == size ? gn_free_list_pop(&gn_buf_free) : NULL;
    if (b == NULL) {
        b = malloc(size);
        if (b == NULL) {
            gn_log_error(GN_LOG_CRIT, &c->log, errno, "malloc(%zu) failed",
                         size);
            return NULL;
        }
    }

    c->buf = b;
    c->buf_size = size;
    c->buf_len = 0;

    return b;
}


void
gn_conn_buf_put(gn_conn_t *c)
{
    if (c->buf == NULL) {
        return;
    }

    if (gn_buf_free == NULL || gn_buf_size == c->buf_size) {
        gn_buf_size = c->buf_size;
        gn_free_list_push(&gn_buf_free, c->buf);
    } else {
        free(c->buf);
    }

    c->buf = NULL;
    c->buf_len = 0;
}


static size_t
gn_conn_log_context(gn_log_t *log, char *buf, size_t len)
{
    gn_conn_t  *c = log->data;

    return (size_t) snprintf(buf, len, ", client: %s, server: %.*s",
                             c->log_client != NULL ? c->log_client
                                                   : c->addr_text,
                             GN_STR_ARG(&c->listen->text));
}


static ssize_t
gn_conn_plain_recv(gn_conn_t *c, u_char *buf, size_t len)
{
    ssize_t  n;

    do {
        n = recv(c->io.fd, buf, len, 0);
    } while (n == -1 && errno == EINTR);

    /*
     * A short read drained the socket: with edge-triggered epoll the next
     * byte to arrive brings a new event, so the extra recv() that would
     * only return EAGAIN is skipped (one syscall per keep-alive request).
     * Not when the peer's FIN was reported (hup): the 0 that ends the
     * connection has to be read without waiting for another event.
     */
    if (n > 0 && (size_t) n < len && !c->hup) {
        c->read_ready = 0;
    }

    if (n >= 0) {
        return n;
    }

    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return GN_AGAIN;
    }

    return GN_ERROR;
}


static ssize_t
gn_conn_plain_writev(gn_conn_t *c, struct iovec *iov, int n, int more)
{
    return gn_sendq_writev(&c->sq, c->io.fd, iov, n, more);
}


static ssize_t
gn_conn_plain_sendfile(gn_conn_t *c, int fd, off_t *off, size_t len)
{
    ssize_t   n;
    gn_int_t  rc;

    if (gn_sendq_pending(&c->sq)) {
        rc = gn_sendq_push(&c->sq);          /* the head goes first */
        if (rc != GN_OK) {
            return rc;
        }
    }

    do {
        n = sendfile(c->io.fd, fd, off, len);
    } while (n == -1 && errno == EINTR);

    if (n >= 0) {
        return n;
    }

    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return GN_AGAIN;
    }

    return GN_ERROR;
}
