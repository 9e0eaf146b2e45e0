/*
 * The memcached client of the event loop (see memc.h).
 *
 * Per child and server: one non-blocking TCP connection, an output
 * buffer of requests not yet written, a read buffer, and the FIFO of
 * requests sent and not yet answered (memcached answers a connection's
 * requests in order). A lookup whose caller gave up stays in the FIFO
 * without a handler, so that its answer, when it comes, is matched and
 * dropped.
 *
 * Requests (meta protocol, memcached >= 1.6), each with an opaque
 * token that the answer carries back:
 *   mg KEY v O<n>\r\n                 VA LEN O<n>\r\nDATA\r\n | EN O<n>
 *   ms KEY LEN T<ttl> q O0\r\nDATA   nothing | NS O0 (and the like)
 *   md KEY q O0\r\n                   nothing | NF O0
 * Stores and deletes are quiet (q): memcached answers them only when they
 * fail, so that a full handshake's store does not wake the child again;
 * they carry token 0 and are not in the FIFO, which holds the lookups
 * only, each with its own non-zero token: an answer is matched by its
 * token, so a lost or unexpected line can never hand one connection's
 * value to another. SERVER_ERROR (no token) fails the oldest lookup, or
 * counts a failed store when none waits; anything else that is not one
 * of these, or a token that is not the oldest lookup's, is a protocol
 * error: the connection is closed and the server is down for its
 * back-off.
 */

#include "gn_config.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "memc.h"
#include "cycle.h"
#include "event.h"
#include "timer.h"
#include "log.h"


#define GN_MEMC_OUT_MAX     (256 * 1024)    /* queued, unwritten */
#define GN_MEMC_IN_SIZE     8192
#define GN_MEMC_VALUE_MAX   (64 * 1024)     /* a longer VA is garbage */
#define GN_MEMC_LINE_MAX    512
#define GN_MEMC_OPS_MAX     4096            /* unanswered per server */
#define GN_MEMC_BACKOFF_MIN 100             /* ms */
#define GN_MEMC_BACKOFF_MAX 5000
#define GN_MEMC_USER_TIMEOUT 5000       /* TCP_USER_TIMEOUT, ms */

#define gn_memc_count(st, f)                                                  \
    (void) __atomic_fetch_add(&(st)->f, 1, __ATOMIC_RELAXED)

struct gn_memc_op_s {
    gn_memc_op_t         *next;
    gn_memc_handler_pt    handler;      /* NULL: nobody waits */
    void                 *data;
    uint64_t              start_us;
    struct gn_memc_srv_s *srv;
    uint32_t              token;        /* O<token>, never 0 */
};

typedef struct gn_memc_srv_s {
    gn_io_t               io;           /* first: events find us */
    gn_addr_t       *addr;
    gn_memc_stats_t      *st;
    gn_timer_t            timer;        /* stall (or connect) limit */
    gn_memc_state_e       state;
    unsigned              reported:1;   /* "down" is in the log */
    unsigned              unreachable:1; /* the last failure came before
                                           the connection was made */
    unsigned              connected:1;  /* connect() completed */
    unsigned              answered:1;   /* this connection answered */
    gn_msec_t             retry_at;
    gn_msec_t             backoff;
    u_char               *out;
    size_t                out_len;
    size_t                out_sent;
    u_char               *in;
    size_t                in_len;
    size_t                in_size;
    gn_memc_op_t         *head;         /* lookups sent (or queued), oldest
                                           first */
    gn_memc_op_t         *tail;
    gn_uint_t             nops;
    uint32_t              token;        /* the last lookup's */
} gn_memc_srv_t;


static gn_memc_conf_t  *gn_memc_rt_conf;      /* the servers below are its */
static gn_memc_srv_t   *gn_memc_rt;
static gn_memc_op_t    *gn_memc_op_free;


static uint64_t
gn_memc_now_us(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}


static void gn_memc_io(gn_io_t *io, uint32_t events);
static void gn_memc_stalled(gn_timer_t *t);


/* This process's servers for mc: made at the first request. */
static gn_memc_srv_t *
gn_memc_servers(gn_memc_conf_t *mc)
{
    gn_memc_srv_t  *s;
    gn_uint_t       i;

    if (gn_memc_rt_conf == mc) {
        return gn_memc_rt;
    }

    /* a child has one cycle; the master never asks */
    s = calloc(mc->nservers, sizeof(gn_memc_srv_t));
    if (s == NULL) {
        return NULL;
    }
    for (i = 0; i < mc->nservers; i++) {
        s[i].io.fd = -1;
        s[i].io.handler = gn_memc_io;
        s[i].io.data = &s[i];
        s[i].addr = &mc->servers[i];
        s[i].st = &mc->stats[i];
        s[i].backoff = GN_MEMC_BACKOFF_MIN;
        gn_timer_init_node(&s[i].timer, gn_memc_stalled, &s[i]);
    }
    gn_memc_rt = s;
    gn_memc_rt_conf = mc;

    return s;
}


static void
gn_memc_set_state(gn_memc_srv_t *s, gn_memc_state_e state)
{
    s->state = state;
    __atomic_store_n(&s->st->state, (uint32_t) state, __ATOMIC_RELAXED);
}


static void
gn_memc_op_put(gn_memc_op_t *op)
{
    op->next = gn_memc_op_free;
    gn_memc_op_free = op;
}


/* Closes the connection and fails what it holds: the server is down
 * until its back-off has passed. */
static void
gn_memc_fail(gn_memc_srv_t *s, const char *why, int err)
{
    gn_memc_op_t  *op, *next;
    gn_log_t      *log = &gn_cycle->log;

    if (s->io.fd != -1) {
        (void) gn_event_del(&s->io);
        close(s->io.fd);
        s->io.fd = -1;
        s->io.instance++;              /* events already fetched: stale */
    }
    if (gn_timer_is_set(&s->timer)) {
        gn_timer_del(&s->timer);
    }

    s->out_len = 0;
    s->out_sent = 0;
    s->in_len = 0;

    gn_memc_set_state(s, GN_MEMC_DOWN);
    s->unreachable = !s->connected;
    s->retry_at = gn_current_msec + s->backoff;
    s->backoff = gn_min(s->backoff * 2, (gn_msec_t) GN_MEMC_BACKOFF_MAX);
    s->answered = 0;
    s->connected = 0;

    if (!s->reported) {
        s->reported = 1;
        gn_log_error(GN_LOG_WARN, log, err, "memcached %.*s down: %s; "
                     "TLS sessions it holds cost full handshakes until it "
                     "answers again", GN_STR_ARG(&s->addr->name), why);
    }

    /* the state is final before any handler runs: a handler that asks
     * again is declined */
    op = s->head;
    s->head = NULL;
    s->tail = NULL;
    s->nops = 0;

    for ( /* void */ ; op != NULL; op = next) {
        next = op->next;
        if (op->handler != NULL) {
            (void) op->handler(op->data, GN_ERROR, NULL, 0);
        }
        gn_memc_op_put(op);
    }
}


static void
gn_memc_stalled(gn_timer_t *t)
{
    gn_memc_srv_t  *s = t->data;

    if (!s->connected) {
        gn_memc_count(s->st, err_connect);
        gn_memc_fail(s, "connect() timed out", 0);
        return;
    }

    if (s->head == NULL) {
        if (s->out_sent < s->out_len) {
            /* quiet stores get no answer: their bytes not going out is
             * what a hung server shows */
            gn_memc_count(s->st, err_stall);
            gn_memc_fail(s, "nothing could be sent for a second", 0);
        }
        return;                         /* nothing awaits an answer */
    }

    gn_memc_count(s->st, err_stall);
    gn_memc_fail(s, "no answer for a second", 0);
}


/* Writes what is queued; a failure takes the server down. */
static void
gn_memc_flush(gn_memc_srv_t *s)
{
    ssize_t  n;

    while (s->out_sent < s->out_len) {
        n = send(s->io.fd, s->out + s->out_sent, s->out_len - s->out_sent,
                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == -1) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* EPOLLOUT resumes; the stall limit runs meanwhile */
                if (!gn_timer_is_set(&s->timer)) {
                    gn_timer_set(&s->timer, GN_MEMC_STALL);
                }
                return;
            }
            gn_memc_count(s->st, err_connect);
            gn_memc_fail(s, "send() failed", errno);
            return;
        }
        s->out_sent += (size_t) n;
        if (s->head == NULL && gn_timer_is_set(&s->timer)) {
            gn_timer_set(&s->timer, GN_MEMC_STALL);      /* progress */
        }
    }

    s->out_len = 0;
    s->out_sent = 0;
    if (s->head == NULL && gn_timer_is_set(&s->timer)) {
        gn_timer_del(&s->timer);
    }
}


static gn_int_t
gn_memc_connect(gn_memc_srv_t *s)
{
    unsigned  user_timeout = GN_MEMC_USER_TIMEOUT;
    int       fd, one = 1;

    fd = socket(s->addr->sa.ss_family,
                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        gn_memc_count(s->st, err_connect);
        gn_memc_fail(s, "socket() failed", errno);
        return GN_ERROR;
    }
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* bytes the server never acknowledges (a host gone, a black hole)
     * fail the socket in seconds, not after TCP's retries */
    (void) setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout,
                      sizeof(user_timeout));

    s->io.fd = fd;
    gn_memc_set_state(s, GN_MEMC_CONNECTING);

    if (connect(fd, (struct sockaddr *) &s->addr->sa, s->addr->socklen)
        == -1 && errno != EINPROGRESS)
    {
        gn_memc_count(s->st, err_connect);
        gn_memc_fail(s, "connect() failed", errno);
        return GN_ERROR;
    }

    if (gn_event_add(&s->io, GN_EV_IN | GN_EV_OUT | GN_EV_RDHUP | GN_EV_ET)
        != GN_OK)
    {
        gn_memc_count(s->st, err_connect);
        gn_memc_fail(s, "epoll_ctl() failed", errno);
        return GN_ERROR;
    }

    gn_timer_set(&s->timer, GN_MEMC_STALL);
    return GN_OK;
}


/* The server of key, connected or connecting; NULL when it is down and
 * its back-off has not passed (or reconnecting failed at once). */
static gn_memc_srv_t *
gn_memc_pick(gn_memc_conf_t *mc, const u_char *key, size_t klen)
{
    gn_memc_srv_t  *srv, *s;

    srv = gn_memc_servers(mc);
    if (srv == NULL) {
        return NULL;
    }
    s = &srv[gn_chash_pick(&mc->ring, key, klen)];

    if (s->io.fd != -1) {
        return s;
    }
    if (s->state == GN_MEMC_DOWN && gn_current_msec < s->retry_at) {
        return NULL;
    }

    return gn_memc_connect(s) == GN_OK ? s : NULL;
}


/* Room for need more bytes of requests; the buffer is made at the
 * first request, of the largest size. */
static u_char *
gn_memc_room(gn_memc_srv_t *s, size_t need)
{
    if (s->out_len + need > GN_MEMC_OUT_MAX) {
        return NULL;
    }
    if (s->out == NULL) {
        s->out = malloc(GN_MEMC_OUT_MAX);
        if (s->out == NULL) {
            return NULL;
        }
    }
    return s->out + s->out_len;
}


/* Queues a request: its line (cmd KEY tail), then the data and its CRLF
 * when val is not NULL. GN_ERROR: no room. */
static gn_int_t
gn_memc_put(gn_memc_srv_t *s, const char *cmd, const u_char *key,
    size_t klen, const char *tail, const u_char *val, size_t vlen)
{
    char     line[GN_MEMC_KEY_MAX + 64];
    u_char  *b;
    size_t   need;
    int      n;

    n = snprintf(line, sizeof(line), "%s %.*s%s\r\n", cmd, (int) klen,
                 (const char *) key, tail);
    if (n <= 0 || (size_t) n >= sizeof(line)) {
        return GN_ERROR;
    }

    need = (size_t) n + (val != NULL ? vlen + 2 : 0);
    b = gn_memc_room(s, need);
    if (b == NULL) {
        return GN_ERROR;
    }

    memcpy(b, line, (size_t) n);
    if (val != NULL) {
        memcpy(b + n, val, vlen);
        memcpy(b + n + vlen, "\r\n", 2);
    }
    s->out_len += need;

    return GN_OK;
}


gn_memc_op_t *
gn_memc_get(gn_memc_conf_t *mc, const u_char *key, size_t klen,
    gn_memc_handler_pt handler, void *data)
{
    gn_memc_srv_t  *s;
    gn_memc_op_t   *op;
    char            tail[32];

    if (klen == 0 || klen > GN_MEMC_KEY_MAX) {
        return NULL;
    }

    s = gn_memc_pick(mc, key, klen);
    if (s == NULL) {
        if (gn_memc_rt_conf == mc) {
            gn_memc_count(&mc->stats[gn_chash_pick(&mc->ring, key, klen)],
                          skipped);
        }
        return NULL;
    }

    op = gn_memc_op_free;
    if (s->nops >= GN_MEMC_OPS_MAX
        || (op == NULL && (op = malloc(sizeof(gn_memc_op_t))) == NULL))
    {
        gn_memc_count(s->st, skipped);
        return NULL;
    }
    if (op == gn_memc_op_free) {
        gn_memc_op_free = op->next;
    }

    if (++s->token == 0) {
        s->token = 1;                   /* 0 is the quiet requests' */
    }
    (void) snprintf(tail, sizeof(tail), " v O%u", (unsigned) s->token);
    if (gn_memc_put(s, "mg", key, klen, tail, NULL, 0) != GN_OK) {
        gn_memc_op_put(op);
        gn_memc_count(s->st, skipped);
        return NULL;
    }

    op->next = NULL;
    op->handler = NULL;
    op->data = NULL;
    op->srv = s;
    op->token = s->token;
    op->start_us = gn_memc_now_us();

    if (s->tail != NULL) {
        s->tail->next = op;
    } else {
        s->head = op;
        gn_timer_set(&s->timer, GN_MEMC_STALL);
    }
    s->tail = op;
    s->nops++;
    gn_memc_count(s->st, lookups);

    if (s->connected) {
        gn_memc_flush(s);
        if (s->io.fd == -1) {
            return NULL;                /* failed, and op with it */
        }
    }

    /* the handler only now: never called from inside this function */
    op->handler = handler;
    op->data = data;

    return op;
}


void
gn_memc_cancel(gn_memc_op_t *op)
{
    op->handler = NULL;
    gn_memc_count(op->srv->st, timeouts);
}


void
gn_memc_abandon(gn_memc_op_t *op)
{
    op->handler = NULL;
}


/* A quiet store or delete: counted as stored when it is written;
 * memcached says only when it fails. */
static void
gn_memc_send(gn_memc_conf_t *mc, const char *cmd, const u_char *key,
    size_t klen, const u_char *val, size_t vlen, time_t ttl)
{
    gn_memc_srv_t  *s;
    char            tail[64];

    if (klen == 0 || klen > GN_MEMC_KEY_MAX) {
        return;
    }

    s = gn_memc_pick(mc, key, klen);
    if (s == NULL) {
        if (val != NULL) {
            gn_memc_count(&mc->stats[gn_chash_pick(&mc->ring, key, klen)],
                          store_failures);
        }
        return;
    }

    if (val != NULL) {
        (void) snprintf(tail, sizeof(tail), " %zu T%lld q O0", vlen,
                        (long long) ttl);
    } else {
        (void) snprintf(tail, sizeof(tail), " q O0");
    }

    if (gn_memc_put(s, cmd, key, klen, tail, val, vlen) != GN_OK) {
        if (val != NULL) {
            gn_memc_count(s->st, store_failures);
        }
        return;
    }
    if (val != NULL) {
        gn_memc_count(s->st, stores);
    }

    if (s->connected) {
        gn_memc_flush(s);
    }
}


void
gn_memc_set(gn_memc_conf_t *mc, const u_char *key, size_t klen,
    const u_char *val, size_t len, time_t ttl)
{
    gn_memc_send(mc, "ms", key, klen, val, len, ttl);
}


void
gn_memc_delete(gn_memc_conf_t *mc, const u_char *key, size_t klen)
{
    gn_memc_send(mc, "md", key, klen, NULL, 0, 0);
}


/* The server answered as memcached does: it is up. */
static void
gn_memc_answered(gn_memc_srv_t *s)
{
    if (s->answered) {
        return;
    }
    s->answered = 1;
    s->backoff = GN_MEMC_BACKOFF_MIN;
    gn_memc_set_state(s, GN_MEMC_UP);
    if (s->reported) {
        s->reported = 0;
        gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0, "memcached %.*s up",
                     GN_STR_ARG(&s->addr->name));
    }
}


/* The oldest lookup is answered: its handler, its counters. */
static void
gn_memc_done(gn_memc_srv_t *s, gn_int_t rc, const u_char *val, size_t len)
{
    gn_memc_op_t  *op = s->head;

    s->head = op->next;
    if (s->head == NULL) {
        s->tail = NULL;
        gn_timer_del(&s->timer);
    } else {
        gn_timer_set(&s->timer, GN_MEMC_STALL);      /* progress */
    }
    s->nops--;

    if (op->handler != NULL) {
        (void) __atomic_fetch_add(&s->st->rtt_us,
                                  gn_memc_now_us() - op->start_us,
                                  __ATOMIC_RELAXED);
        gn_memc_count(s->st, rtt_n);
        /* a value the caller could not use is no hit */
        if (op->handler(op->data, rc, val, len) == GN_OK) {
            gn_memc_count(s->st, hits);
        } else if (rc != GN_ERROR) {
            gn_memc_count(s->st, misses);
        }
    }
    gn_memc_op_put(op);
}


/* The O<token> flag among the flags of a reply line p[0..n), after its
 * code; -1 when there is none. */
static int64_t
gn_memc_token(const u_char *p, size_t n)
{
    size_t    i;
    uint64_t  t;

    for (i = 2; i + 2 <= n; i++) {
        if (p[i - 1] != ' ' || p[i] != 'O') {
            continue;
        }
        t = 0;
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
            t = t * 10 + (uint64_t) (p[i] - '0');
            if (t > UINT32_MAX) {
                return -1;
            }
        }
        return i == n || p[i] == ' ' ? (int64_t) t : -1;
    }
    return -1;
}


#define gn_memc_is(p, n, s)                                                   \
    ((n) >= sizeof(s) - 1 && memcmp(p, s, sizeof(s) - 1) == 0                 \
     && ((n) == sizeof(s) - 1 || (p)[sizeof(s) - 1] == ' '))

/* Answers what the read buffer holds whole. GN_OK (the rest waits for
 * more bytes) or GN_ERROR: not memcached's protocol (*why says how). */
static gn_int_t
gn_memc_parse(gn_memc_srv_t *s, const char **why)
{
    u_char   *p, *end, *eol;
    size_t    n, vlen;
    int64_t   tok;
    char     *e;

    p = s->in;
    end = s->in + s->in_len;

    while (p < end && s->io.fd != -1) {
        eol = memchr(p, '\n', (size_t) (end - p));
        if (eol == NULL) {
            if (end - p > GN_MEMC_LINE_MAX) {
                *why = "reply line too long";
                return GN_ERROR;
            }
            break;
        }
        if (eol == p || eol[-1] != '\r') {
            *why = "reply line not ended by CRLF";
            return GN_ERROR;
        }
        n = (size_t) (eol - 1 - p);

        if (gn_memc_is(p, n, "SERVER_ERROR")) {
            /* no token: the oldest lookup's, or a quiet store's */
            p = eol + 1;
            if (s->head != NULL) {
                gn_memc_done(s, GN_ERROR, NULL, 0);
            } else {
                gn_memc_count(s->st, store_failures);
            }
            continue;
        }

        tok = gn_memc_token(p, n);

        if (tok == 0) {
            /* a quiet store or delete that did not succeed */
            if (gn_memc_is(p, n, "NS") || gn_memc_is(p, n, "EX")
                || gn_memc_is(p, n, "NF"))
            {
                if (p[0] != 'N' || p[1] != 'F') {
                    gn_memc_count(s->st, store_failures);
                }
                gn_memc_answered(s);
                p = eol + 1;
                continue;
            }
            *why = "unexpected reply to a store";
            return GN_ERROR;
        }

        if (s->head == NULL || tok != (int64_t) s->head->token) {
            *why = s->head == NULL ? "a reply to no request"
                                   : "a reply out of order";
            return GN_ERROR;
        }

        if (gn_memc_is(p, n, "EN")) {
            p = eol + 1;
            gn_memc_answered(s);
            gn_memc_done(s, GN_DECLINED, NULL, 0);
            continue;
        }

        if (!gn_memc_is(p, n, "VA")) {
            *why = "unexpected reply to a lookup";
            return GN_ERROR;
        }

        errno = 0;
        vlen = n > 3 ? strtoul((char *) p + 3, &e, 10) : 0;
        if (n <= 3 || errno != 0 || (e != (char *) p + n && *e != ' ')
            || !(p[3] >= '0' && p[3] <= '9') || vlen > GN_MEMC_VALUE_MAX)
        {
            *why = "bad VA line";
            return GN_ERROR;
        }
        if ((size_t) (end - (eol + 1)) < vlen + 2) {
            if (s->in_size < (size_t) (eol + 1 - p) + vlen + 2) {
                /* the buffer grows for a value bigger than it */
                u_char  *nb;
                size_t   want = (size_t) (eol + 1 - p) + vlen + 2;

                memmove(s->in, p, (size_t) (end - p));
                s->in_len = (size_t) (end - p);
                nb = realloc(s->in, want);
                if (nb == NULL) {
                    *why = "out of memory";
                    return GN_ERROR;
                }
                s->in = nb;
                s->in_size = want;
                return GN_OK;
            }
            break;
        }
        if (eol[1 + vlen] != '\r' || eol[2 + vlen] != '\n') {
            *why = "value not ended by CRLF";
            return GN_ERROR;
        }
        p = eol + 1 + vlen + 2;
        gn_memc_answered(s);
        gn_memc_done(s, GN_OK, eol + 1, vlen);
    }

    if (s->io.fd == -1) {
        return GN_OK;                  /* a handler's request failed it */
    }

    s->in_len = (size_t) (end - p);
    if (s->in_len && p != s->in) {
        memmove(s->in, p, s->in_len);
    }

    return GN_OK;
}


/* Reads and answers what came; hup: the peer's FIN came too, so read
 * on to the 0 that says so. */
static void
gn_memc_read(gn_memc_srv_t *s, uint32_t hup)
{
    const char  *why = NULL;
    ssize_t      n;
    size_t       want;

    if (s->in == NULL) {
        s->in = malloc(GN_MEMC_IN_SIZE);
        if (s->in == NULL) {
            return;
        }
        s->in_size = GN_MEMC_IN_SIZE;
    }

    while (s->io.fd != -1) {
        if (s->in_len == s->in_size) {
            /* a full buffer that parsed to nothing */
            gn_memc_count(s->st, err_protocol);
            gn_memc_fail(s, "protocol error: reply too long", 0);
            return;
        }

        want = s->in_size - s->in_len;
        n = recv(s->io.fd, s->in + s->in_len, want, 0);
        if (n == -1) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return;
            }
            gn_memc_count(s->st, err_connect);
            gn_memc_fail(s, "recv() failed", errno);
            return;
        }
        if (n == 0) {
            gn_memc_count(s->st, err_connect);
            gn_memc_fail(s, "the server closed the connection", 0);
            return;
        }
        s->in_len += (size_t) n;

        if (gn_memc_parse(s, &why) != GN_OK) {
            char  msg[64];

            gn_memc_count(s->st, err_protocol);
            (void) snprintf(msg, sizeof(msg), "protocol error: %s", why);
            gn_memc_fail(s, msg, 0);
            return;
        }

        if ((size_t) n < want && !hup) {
            /* the socket is empty: the next bytes bring an event (edge
             * triggered), no recv() to meet EAGAIN */
            return;
        }
    }
}


static void
gn_memc_io(gn_io_t *io, uint32_t events)
{
    gn_memc_srv_t  *s = io->data;
    socklen_t       len;
    int             err;

    if (!s->connected && (events & (GN_EV_OUT | GN_EV_ERR))) {
        err = 0;
        len = sizeof(err);
        (void) getsockopt(io->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            gn_memc_count(s->st, err_connect);
            gn_memc_fail(s, "connect() failed", err);
            return;
        }
        /* connected: up (a server that gets only quiet stores never
         * answers); the stall limit is for lookups and for output that
         * does not go out from now on; the back-off is reset by the
         * first answer. In the log it is up again only if it was down
         * for want of a connection: one that failed once connected
         * (garbage, a stall) is up when it answers, so a server that
         * accepts and misbehaves costs one line, not two per retry */
        s->connected = 1;
        if (s->state == GN_MEMC_CONNECTING && !s->answered) {
            gn_memc_set_state(s, GN_MEMC_UP);
        }
        if (s->reported && s->unreachable) {
            s->reported = 0;
            gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0, "memcached %.*s "
                         "up (connected)", GN_STR_ARG(&s->addr->name));
        }
        if (s->head == NULL && gn_timer_is_set(&s->timer)) {
            gn_timer_del(&s->timer);
        }
    }

    if (events & (GN_EV_IN | GN_EV_ERR | GN_EV_RDHUP)) {
        gn_memc_read(s, events & (GN_EV_RDHUP | GN_EV_ERR));
        if (s->io.fd == -1) {
            return;
        }
    }

    if (events & GN_EV_OUT) {
        gn_memc_flush(s);
    }
}
