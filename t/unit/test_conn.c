/*
 * conn.c on its own, with no HTTP: a listener on 127.0.0.1 whose
 * protocol is this file (its init_conn, handler, on_close and timer
 * handler record what happens), the real event loop and real sockets.
 * Accept hands the connection to the listener's protocol; the plain ops
 * read, write and sendfile; the connection's timer fires; the buffer and
 * pool free lists give back what was put; gn_conn_close runs on_close
 * once and, lingering, lets the client read the answer and a FIN where a
 * plain close with unread input sends a reset; a listener's layer (a
 * stand-in for TLS) gets the new connection before the protocol and its
 * last word at the close; at max_connections a client gets the
 * protocol's busy answer; gn_conn_drain closes idle connections, keeps
 * busy ones and answers a request already on its way; gn_conn_close_all
 * closes the rest, marked stopping.
 */

#include "gn_config.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "conn.h"
#include "event.h"
#include "timer.h"
#include "log.h"
#include "str.h"
#include "../tap.h"


#define T_MAX_CONNS  8


/* What the test protocol saw. */
typedef struct {
    gn_conn_t   *c;             /* the last connection init_conn got */
    gn_uint_t    inits;
    gn_uint_t    events;        /* handler calls */
    gn_uint_t    closes;        /* on_close calls */
    gn_uint_t    stopping;      /* on_close saw c->stopping */
    gn_uint_t    timeouts;
    gn_conn_t   *timed_out;
    gn_uint_t    read_ready_at_init;
    ssize_t      got;           /* what the handler's recv returned */
    char         data[64];
} t_seen_t;

static t_seen_t     seen;
static gn_uint_t    t_handler_reads;  /* the handler recv()s on events */
static sigset_t     t_mask;


static void
t_handler(gn_conn_t *c)
{
    seen.events++;

    if (t_handler_reads && c->read_ready) {
        seen.got = c->ops->recv(c, (u_char *) seen.data,
                                sizeof(seen.data) - 1);
        if (seen.got > 0) {
            seen.data[seen.got] = '\0';
        }
    }
}


static void
t_on_close(gn_conn_t *c)
{
    seen.closes++;
    seen.stopping += c->stopping;
    ok(c->data == &seen, "on_close sees the protocol's data");
}


static void
t_timeout(gn_timer_t *t)
{
    seen.timeouts++;
    seen.timed_out = t->data;
}


static void
t_init_conn(gn_conn_t *c)
{
    seen.c = c;
    seen.inits++;
    seen.read_ready_at_init = c->read_ready;
    c->handler = t_handler;
    c->on_close = t_on_close;
    c->data = &seen;
    c->timer.handler = t_timeout;
    c->state = GN_CONN_READING;
    c->state_since = gn_current_msec;
}


static const gn_conn_proto_t  t_proto = {
    t_init_conn, NULL, NULL, NULL, NULL, NULL, gn_string("busy\n")
};


/* A layer under the protocol, as TLS is: what conn.c asked of it. */
static gn_uint_t  t_layer_starts;
static gn_uint_t  t_layer_shutdowns;
static gn_uint_t  t_layer_closes;
static gn_uint_t  t_layer_again;      /* shutdowns to answer GN_AGAIN */


static void
t_layer_start(gn_conn_t *c)
{
    t_layer_starts++;
    ok(c->data == NULL && c->handler == NULL,
       "layer: start before the protocol's init_conn");
    c->tls = &t_layer_starts;
    c->listen->proto->init_conn(c);       /* no handshake to wait for */
}


static gn_int_t
t_layer_shutdown(gn_conn_t *c)
{
    t_layer_shutdowns++;
    if (t_layer_again > 0) {
        t_layer_again--;
        return GN_AGAIN;                   /* "the socket is full" */
    }
    c->tls = NULL;
    return GN_OK;
}


static void
t_layer_close(gn_conn_t *c)
{
    t_layer_closes++;
    c->tls = NULL;
}


static const gn_conn_layer_t  t_layer = {
    t_layer_start, t_layer_shutdown, t_layer_close
};


/* Bytes malloc() has handed out and not had back (glibc), 0 where that
 * is not known: a buffer put on a free list stays handed out. */
static size_t
t_heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    return mallinfo2().uordblks;
#else
    return 0;
#endif
}


/* Runs the event loop until *counter reaches want or ms have passed. */
static void
t_run(gn_uint_t *counter, gn_uint_t want, gn_msec_t ms)
{
    gn_msec_t  start = gn_current_msec;

    while ((counter == NULL || *counter < want)
           && gn_current_msec - start < ms)
    {
        (void) gn_event_process(10, &t_mask);
    }
}


/* Runs the event loop until no connection is open or ms have passed. */
static void
t_run_closed(gn_msec_t ms)
{
    gn_msec_t  start = gn_current_msec;

    while (gn_conn_count > 0 && gn_current_msec - start < ms) {
        (void) gn_event_process(10, &t_mask);
    }
}


/* A listening socket on 127.0.0.1, an ephemeral port (in *sin), or
 * -1. */
static int
t_listen(struct sockaddr_in *sin)
{
    socklen_t  len = sizeof(*sin);
    int        fd;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd == -1 || bind(fd, (struct sockaddr *) sin, sizeof(*sin)) == -1
        || listen(fd, 16) == -1
        || getsockname(fd, (struct sockaddr *) sin, &len) == -1)
    {
        return -1;
    }
    return fd;
}


static int
t_connect(in_port_t port)
{
    struct sockaddr_in  sin;
    int                 fd;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = port;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd == -1 || connect(fd, (struct sockaddr *) &sin, sizeof(sin)) == -1) {
        return -1;
    }
    return fd;
}


/* A new client, accepted by the child: its gn_conn_t, or NULL. */
static gn_conn_t *
t_accept(in_port_t port, int *fd)
{
    gn_uint_t  before = seen.inits;

    *fd = t_connect(port);
    if (*fd == -1) {
        return NULL;
    }
    t_run(&seen.inits, before + 1, 2000);
    return seen.inits == before + 1 ? seen.c : NULL;
}


/* Reads what the peer sends until EOF or an error, with a time limit.
 * Returns the bytes read; *err is 0 after an EOF, else errno. */
static size_t
t_read_all(int fd, char *buf, size_t size, int *err)
{
    struct timeval  tv = { 3, 0 };
    size_t          len = 0;
    ssize_t         n;

    (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    *err = 0;

    for ( ;; ) {
        n = recv(fd, buf + len, size - len, 0);
        if (n == 0) {
            return len;
        }
        if (n < 0) {
            *err = errno;
            return len;
        }
        len += (size_t) n;
        if (len == size) {
            return len;
        }
    }
}


static void
test_io(in_port_t port)
{
    gn_conn_t     *c;
    int            fd, ffd, err;
    char           buf[64], path[] = "/tmp/gn-test-conn-XXXXXX";
    struct iovec   iov[2];
    off_t          off;
    ssize_t        n;
    gn_uint_t      ev;

    c = t_accept(port, &fd);
    if (!ok(c != NULL, "accept: the listener's init_conn gets it")) {
        return;
    }
    ok(c->listen != NULL && c->listen->proto == &t_proto,
       "accept: c->listen is the listener");
    is_int(gn_conn_count, 1, "accept: one connection open");
    ok(seen.read_ready_at_init, "accept: read_ready at init (the request "
       "may be there)");
    is_str(c->addr_text, strlen(c->addr_text), "127.0.0.1",
           "accept: the peer's address text");
    ok(c->io.fd != -1 && c->tls == NULL, "accept: a plain connection");

    /* reads */
    n = c->ops->recv(c, (u_char *) buf, sizeof(buf));
    is_int(n, GN_AGAIN, "plain recv: nothing sent yet: GN_AGAIN");

    t_handler_reads = 1;
    ev = seen.events;
    (void) send(fd, "hello", 5, 0);
    t_run(&seen.events, ev + 1, 2000);
    ok(seen.events > ev, "an event calls the protocol's handler");
    is_int(seen.got, 5, "plain recv from the handler: 5 bytes");
    is_str(seen.data, (size_t) gn_max(seen.got, 0), "hello",
           "plain recv: the bytes sent");
    t_handler_reads = 0;

    /* writes */
    iov[0].iov_base = (void *) "wor";
    iov[0].iov_len = 3;
    iov[1].iov_base = (void *) "ld";
    iov[1].iov_len = 2;
    is_int(c->ops->writev(c, iov, 2, 0), 5, "plain writev: 5 bytes");
    n = recv(fd, buf, sizeof(buf), 0);
    is_str(buf, (size_t) gn_max(n, 0), "world", "plain writev: the peer "
           "reads them in order");

    ffd = mkstemp(path);
    if (ffd == -1 || unlink(path) == -1
        || write(ffd, "0123456789", 10) != 10)
    {
        diag("cannot write %s", path);
    }
    off = 2;
    is_int(c->ops->sendfile(c, ffd, &off, 5), 5, "plain sendfile: 5 bytes");
    is_int(off, 7, "plain sendfile: the offset moved");
    n = recv(fd, buf, sizeof(buf), 0);
    is_str(buf, (size_t) gn_max(n, 0), "23456", "plain sendfile: the "
           "peer reads the range");
    if (ffd != -1) {
        close(ffd);
    }

    /* the connection's timer */
    seen.timeouts = 0;
    gn_timer_set(&c->timer, 50);
    t_run(&seen.timeouts, 1, 20);
    is_int(seen.timeouts, 0, "timer: not before it is due");
    t_run(&seen.timeouts, 1, 2000);
    is_int(seen.timeouts, 1, "timer: fires the protocol's timer handler "
           "once");
    ok(seen.timed_out == c, "timer: with the connection as its data");

    /* a plain close */
    seen.closes = 0;
    gn_conn_close(c);
    is_int(seen.closes, 1, "close: on_close once");
    is_int(gn_conn_count, 0, "close: no connection open");
    (void) t_read_all(fd, buf, sizeof(buf), &err);
    is_int(err, 0, "close: the peer sees EOF");
    close(fd);
}


/* Free lists: what is put back comes out again, in another connection. */
static void
test_free_lists(in_port_t port)
{
    gn_conn_t  *c, *c2, *c3;
    u_char     *b, *b2;
    gn_pool_t  *p, *p2;
    size_t      before, after;
    int         fd, fd2;

    c = t_accept(port, &fd);
    c2 = t_accept(port, &fd2);
    if (!ok(c != NULL && c2 != NULL && c != c2, "two connections")) {
        return;
    }
    is_int(gn_conn_count, 2, "two connections open");

    b = gn_conn_buf_get(c, 32768);
    ok(b != NULL && c->buf == b, "buf_get: a buffer");
    is_int(c->buf_size, 32768, "buf_get: of the size asked for");
    is_int(c->buf_len, 0, "buf_get: empty");
    c->buf_len = 10;
    ok(gn_conn_buf_get(c, 32768) == b && c->buf_len == 10,
       "buf_get: a connection that has one keeps it (and its bytes)");
    before = t_heap_in_use();
    gn_conn_buf_put(c);
    after = t_heap_in_use();
    ok(c->buf == NULL && c->buf_len == 0, "buf_put: the connection holds "
       "none");
    is_int(after, before, "buf_put: the buffer is kept on the free list, "
           "not freed");
    b2 = gn_conn_buf_get(c2, 32768);
    ok(b2 == b, "buf_get: the buffer put back is reused");
    gn_conn_buf_put(c2);

    p = gn_conn_pool_get(c);
    ok(p != NULL && c->pool == p, "pool_get: a pool");
    ok(gn_palloc(p, 100) != NULL, "pool_get: it allocates");
    before = t_heap_in_use();
    gn_conn_pool_put(c);
    after = t_heap_in_use();
    ok(c->pool == NULL, "pool_put: the connection holds none");
    is_int(after, before, "pool_put: the pool is kept on the free list, "
           "not destroyed");
    p2 = gn_conn_pool_get(c2);
    ok(p2 == p, "pool_get: the pool put back is reused");

    gn_conn_close(c2);                  /* gives its pool back, too */
    ok(gn_conn_pool_get(c) == p, "close: the pool went back to the list");
    gn_conn_close(c);
    is_int(gn_conn_count, 0, "both closed");
    close(fd);
    close(fd2);

    c3 = t_accept(port, &fd);
    ok(c3 == c, "the gn_conn_t closed last is reused");
    ok(c3 != NULL && c3->buf == NULL && c3->pool == NULL
       && c3->data == &seen && c3->on_close == t_on_close,
       "... clean, but for what init_conn set");
    if (c3 != NULL) {
        gn_conn_close(c3);
    }
    close(fd);
}


/* Unread input: a lingering close lets the client read the answer and
 * the FIN; a plain close sends a reset. */
static void
test_linger(in_port_t port, gn_uint_t linger)
{
    static char  junk[16384];
    gn_conn_t   *c;
    char         buf[64];
    size_t       len;
    ssize_t      n;
    int          fd, err;
    gn_uint_t    ev;
    const char  *how = linger ? "lingering close" : "plain close";

    c = t_accept(port, &fd);
    if (!ok(c != NULL, "%s: a connection", how)) {
        return;
    }

    memset(junk, 'x', sizeof(junk));
    ev = seen.events;
    n = send(fd, junk, sizeof(junk), 0);
    is_int(n, (ssize_t) sizeof(junk), "%s: the client sent 16 KiB nobody "
           "reads", how);
    t_run(&seen.events, ev + 1, 2000);

    n = c->ops->writev(c, &(struct iovec) { (void *) "bye", 3 }, 1, 0);
    is_int(n, 3, "%s: the answer is written", how);

    seen.closes = 0;
    c->linger_close = linger;
    gn_conn_close(c);
    is_int(seen.closes, 1, "%s: on_close once", how);

    if (linger) {
        is_int(gn_conn_count, 1, "lingering: the socket stays open");
        is_int(c->state, GN_CONN_LINGERING, "lingering: the state says so");
        ok(c->pool == NULL && c->buf == NULL && c->data == NULL,
           "lingering: nothing held but the socket");
        ev = seen.events;
        (void) send(fd, junk, 100, 0);
        t_run(NULL, 0, 50);
        is_int(seen.events, ev, "lingering: the protocol's handler is not "
               "called");
        (void) shutdown(fd, SHUT_WR);       /* the client is done */
        t_run_closed(1000);                 /* well before GN_LINGER_MSEC */
        is_int(gn_conn_count, 0, "lingering: closed at the client's EOF");
        is_int(seen.closes, 1, "lingering: on_close not called again");
    }

    len = t_read_all(fd, buf, sizeof(buf), &err);
    if (linger) {
        is_str(buf, len, "bye", "lingering: the client reads the answer");
        is_int(err, 0, "lingering: then a FIN, not a reset");
    } else {
        is_int(err, ECONNRESET, "plain close with unread input: a reset "
               "(what lingering avoids)");
    }
    close(fd);
}


/* A layered listener: the layer starts the connection and hands it to
 * the protocol; lingering waits for its shutdown, a plain close calls its
 * close. */
static void
test_layer(in_port_t port)
{
    gn_conn_t  *c;
    char        buf[16];
    int         fd, err;

    c = t_accept(port, &fd);
    if (!ok(c != NULL, "layer: a connection")) {
        return;
    }
    is_int(t_layer_starts, 1, "layer: its start got the connection");
    ok(c->tls == &t_layer_starts && c->handler == t_handler,
       "layer: ... and handed it to the protocol");

    t_layer_again = 1;
    seen.closes = 0;
    c->linger_close = 1;
    gn_conn_close(c);
    is_int(t_layer_shutdowns, 1, "layer: lingering asks for its shutdown");
    is_int(seen.closes, 1, "layer: on_close first");
    ok(c->state == GN_CONN_LINGERING && c->tls != NULL,
       "layer: its shutdown said GN_AGAIN: lingering waits");
    (void) send(fd, "x", 1, 0);           /* an event: ask again */
    t_run(&t_layer_shutdowns, 2, 2000);
    is_int(t_layer_shutdowns, 2, "layer: asked again on the next event");
    ok(c->tls == NULL, "layer: done, its state is gone");
    (void) shutdown(fd, SHUT_WR);
    t_run_closed(1000);
    is_int(gn_conn_count, 0, "layer: then lingering ends at the client's "
           "EOF");
    is_int(t_layer_closes, 0, "layer: no close after its shutdown");
    (void) t_read_all(fd, buf, sizeof(buf), &err);
    is_int(err, 0, "layer: the client sees a FIN");
    close(fd);

    c = t_accept(port, &fd);
    if (c != NULL) {
        gn_conn_close(c);
    }
    is_int(t_layer_closes, 1, "layer: a plain close calls its close once");
    is_int(t_layer_shutdowns, 2, "layer: ... and not its shutdown");
    close(fd);
}


/* At max_connections (and no sibling with room: there is no scoreboard)
 * a client is accepted, sent the protocol's busy answer and closed. */
static void
test_busy(in_port_t port)
{
    gn_conn_t  *c[T_MAX_CONNS];
    gn_uint_t   inits;
    char        buf[16];
    size_t      len;
    int         fd[T_MAX_CONNS], extra, err, i, n;

    for (n = 0; n < T_MAX_CONNS; n++) {
        c[n] = t_accept(port, &fd[n]);
        if (c[n] == NULL) {
            break;
        }
    }
    if (!is_int(n, T_MAX_CONNS, "busy: max_connections connections")) {
        goto done;
    }

    inits = seen.inits;
    extra = t_connect(port);
    t_run(NULL, 0, 100);
    len = extra != -1 ? t_read_all(extra, buf, sizeof(buf), &err) : 0;
    is_str(buf, len, "busy\n", "busy: one more gets the protocol's busy "
           "answer");
    is_int(err, 0, "busy: ... and a FIN");
    is_int(seen.inits, inits, "busy: the protocol never sees it");
    is_int(gn_conn_count, T_MAX_CONNS, "busy: still max_connections open");
    if (extra != -1) {
        close(extra);
    }

done:
    for (i = 0; i < n; i++) {
        gn_conn_close(c[i]);
        close(fd[i]);
    }
}


/* gn_conn_drain: idle keep-alive connections close, past their grace;
 * busy ones stay; one whose next request came already is answered. */
static void
test_drain(in_port_t port)
{
    gn_conn_t  *idle, *busy, *fresh, *arrived;
    int         fd[4], err, i;
    char        buf[16];
    gn_uint_t   ev;

    idle = t_accept(port, &fd[0]);
    busy = t_accept(port, &fd[1]);
    fresh = t_accept(port, &fd[2]);
    arrived = t_accept(port, &fd[3]);
    if (!ok(idle && busy && fresh && arrived, "drain: four connections")) {
        return;
    }

    t_run(NULL, 0, 30);                  /* let their first events pass */

    idle->state = GN_CONN_KEEPALIVE;
    idle->state_since = gn_current_msec - 500;
    busy->state = GN_CONN_WRITING;
    busy->state_since = gn_current_msec - 500;
    fresh->state = GN_CONN_KEEPALIVE;
    fresh->state_since = gn_current_msec;
    arrived->state = GN_CONN_KEEPALIVE;
    arrived->state_since = gn_current_msec - 500;
    arrived->read_ready = 0;

    (void) send(fd[3], "GET", 3, 0);
    usleep(20000);                       /* in its socket, event not run */

    seen.closes = 0;
    seen.timeouts = 0;
    ev = seen.events;
    is_int(gn_conn_drain(200), 3, "drain: three connections left open");
    is_int(seen.closes, 1, "drain: the idle one is closed");
    (void) t_read_all(fd[0], buf, sizeof(buf), &err);
    is_int(err, 0, "drain: its client sees EOF");
    is_int(seen.events, ev + 1, "drain: the one whose request came is "
           "handed to its handler, not closed");
    ok(arrived->read_ready, "drain: ... with read_ready");

    t_run(&seen.timeouts, 1, 1000);
    ok(seen.timeouts == 1 && seen.timed_out == fresh,
       "drain: the fresh idle one gets a timer for the rest of its grace");

    seen.closes = 0;
    seen.stopping = 0;
    gn_conn_close_all();
    is_int(gn_conn_count, 0, "close_all: none left");
    is_int(seen.closes, 3, "close_all: on_close for each");
    is_int(seen.stopping, 3, "close_all: each marked stopping");

    for (i = 0; i < 4; i++) {
        close(fd[i]);
    }
}


int
main(void)
{
    static gn_cycle_t    cycle;
    static gn_listen_t   ls[2];
    struct sockaddr_in   sin, sin2;
    char                 logfile[] = "/tmp/gn-test-conn-log-XXXXXX";
    int                  fd, fd2;

    (void) signal(SIGPIPE, SIG_IGN);
    (void) sigprocmask(SIG_SETMASK, NULL, &t_mask);
    gn_time_update();

    if (gn_event_init(64) != GN_OK || gn_timer_heap_init(64) != GN_OK) {
        skip_all("no event loop");
    }

    /* two listeners on 127.0.0.1, ephemeral ports: the second with the
     * test's layer */
    fd = t_listen(&sin);
    fd2 = t_listen(&sin2);
    if (fd == -1 || fd2 == -1) {
        skip_all("cannot listen on 127.0.0.1");
    }

    memcpy(&ls[0].sa, &sin, sizeof(sin));
    ls[0].socklen = sizeof(sin);
    gn_str_set(&ls[0].text, "127.0.0.1:test");
    ls[0].fd = fd;
    ls[0].proto = &t_proto;
    ls[1] = ls[0];
    memcpy(&ls[1].sa, &sin2, sizeof(sin2));
    gn_str_set(&ls[1].text, "127.0.0.1:layered");
    ls[1].fd = fd2;
    ls[1].layer = &t_layer;

    /* the connections' messages go to a file nobody reads */
    cycle.log.level = GN_LOG_INFO;
    cycle.log.fd = mkstemp(logfile);
    if (cycle.log.fd == -1 || unlink(logfile) == -1) {
        skip_all("cannot make a log file");
    }
    cycle.listening.elts = ls;
    cycle.listening.nelts = 2;
    cycle.listening.size = sizeof(gn_listen_t);
    gn_cycle = &cycle;

    if (!ok(gn_conn_listen_start(&cycle, T_MAX_CONNS) == GN_OK,
            "listen_start"))
    {
        return done_testing();
    }

    test_io(sin.sin_port);
    test_free_lists(sin.sin_port);
    test_linger(sin.sin_port, 1);
    test_linger(sin.sin_port, 0);
    test_layer(sin2.sin_port);
    test_busy(sin.sin_port);
    test_drain(sin.sin_port);

    gn_conn_listen_stop(&cycle);

    close(cycle.log.fd);

    return done_testing();
}
