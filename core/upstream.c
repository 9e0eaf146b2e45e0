/*
 * Upstream groups, the balancer and the pooled connections of a child.
 *
 * The balancer is nginx's: smooth weighted round robin (each pick adds
 * every candidate's weight to its score, takes the highest and takes the
 * total from it, so weights 5:1:1 give a a a b a c a, never five a in a
 * row), or least_conn (fewest active connections per weight, round robin
 * among equals). A server that failed max_fails times within
 * fail_timeout is left out for fail_timeout, then tried again (never
 * the only server of its group); the backups serve only while no
 * primary server can.
 *
 * Pooled connections are kept per group, newest first, at most
 * `keepalive` of them; an idle one that becomes readable (the server
 * closed it, or sent what nobody asked for) or outlives
 * keepalive_timeout is closed. Connection objects are never freed while
 * the child runs (a free list, their instance bit flipped on reuse), so
 * an event already fetched for one just closed is recognised as stale.
 */

#include "gn_config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "upstream.h"
#include "shm.h"
#include "tls_client.h"
#include "str.h"


#define gn_upstream_count(s, f, n)                                           \
    do {                                                                     \
        if ((s)->stats != NULL) {                                            \
            (void) __atomic_fetch_add(&(s)->stats->f, (n),                   \
                                      __ATOMIC_RELAXED);                     \
        }                                                                    \
    } while (0)


typedef struct {
    gn_int_t             current;        /* smooth round robin's score */
    gn_uint_t            fails;          /* within fail_timeout */
    gn_msec_t            failed_at;      /* the last failure */
    gn_uint_t            active;         /* connections busy now */
} gn_upstream_peer_t;

struct gn_upstream_rt_s {
    gn_upstream_rt_t    *next;           /* this child's, all of them */
    gn_upstream_peer_t  *peers;
    gn_uint_t            rr;             /* least_conn's tie breaker */
    gn_upstream_conn_t  *idle;           /* newest first */
    gn_upstream_conn_t  *idle_tail;
    gn_uint_t            nidle;
};


static gn_upstream_conn_t   *gn_upstream_free;
static gn_upstream_rt_t     *gn_upstream_rts;


/* ---- configuration (master) ------------------------------------------- */

static gn_int_t
gn_upstream_group_init(gn_conf_t *cf, gn_upstream_group_t *g)
{
    if (gn_array_init(&g->servers, cf->pool, 4, sizeof(gn_upstream_server_t))
        != GN_OK)
    {
        return GN_ERROR;
    }
    g->keepalive_timeout = 60000;
    g->keepalive_requests = 1000;
    return GN_OK;
}


/* server ADDRESS [weight=N] [max_fails=N] [fail_timeout=T] [backup]
 * [down] */
static char *
gn_upstream_server_line(gn_conf_t *cf, gn_upstream_group_t *g)
{
    gn_str_t              *value = cf->args->elts, v;
    gn_upstream_server_t  *s;
    const char            *err;
    gn_uint_t              i;
    gn_int_t               n;

    if (cf->args->nelts < 2) {
        gn_conf_error(cf, "\"server\" in an upstream block expects an "
                      "address");
        return GN_CONF_ERROR;
    }

    s = gn_array_push(&g->servers);
    if (s == NULL) {
        return "failed (out of memory)";
    }
    memset(s, 0, sizeof(gn_upstream_server_t));
    s->weight = 1;
    s->max_fails = 1;
    s->fail_timeout = 10000;

    v = value[1];
    if (memchr(v.data, ':', v.len) == NULL) {
        /* HOST alone: port 80, as nginx */
        v.data = gn_pnalloc(cf->pool, value[1].len + 3);
        if (v.data == NULL) {
            return "failed (out of memory)";
        }
        memcpy(gn_cpymem(v.data, value[1].data, value[1].len), ":80", 3);
        v.len = value[1].len + 3;
    }

    err = gn_addr_parse(&s->addr, &v, 1);
    if (err != NULL) {
        gn_conf_error(cf, "invalid upstream server \"%.*s\": %s",
                      GN_STR_ARG(&value[1]), err);
        return GN_CONF_ERROR;
    }

    for (i = 2; i < cf->args->nelts; i++) {
        v = value[i];
        if (v.len > 7 && memcmp(v.data, "weight=", 7) == 0) {
            n = gn_atoi(v.data + 7, v.len - 7);
            if (n < 1 || n > 1000) {
                goto invalid;
            }
            s->weight = (gn_uint_t) n;
        } else if (v.len > 10 && memcmp(v.data, "max_fails=", 10) == 0) {
            n = gn_atoi(v.data + 10, v.len - 10);
            if (n < 0) {
                goto invalid;
            }
            s->max_fails = (gn_uint_t) n;
        } else if (v.len > 13 && memcmp(v.data, "fail_timeout=", 13) == 0) {
            v.data += 13;
            v.len -= 13;
            if (gn_parse_msec(&v, &s->fail_timeout) != GN_OK) {
                v = value[i];
                goto invalid;
            }
        } else if (gn_str_eq(&v, "backup")) {
            s->backup = 1;
        } else if (gn_str_eq(&v, "down")) {
            s->down = 1;
        } else {
            goto invalid;
        }
    }

    return GN_CONF_OK;

invalid:

    gn_conf_error(cf, "invalid parameter \"%.*s\" of an upstream server, "
                  "expected weight=N, max_fails=N, fail_timeout=TIME, "
                  "backup or down", GN_STR_ARG(&value[i]));
    return GN_CONF_ERROR;
}


/* least_conn; or hash KEY [consistent]; */
static char *
gn_upstream_method(gn_conf_t *cf, gn_upstream_group_t *g)
{
    gn_str_t  *value = cf->args->elts;
    char       err[256];

    if (g->method != GN_UPSTREAM_RR) {
        gn_conf_error(cf, "\"%.*s\": the upstream's balancing method is "
                      "already set", GN_STR_ARG(&value[0]));
        return GN_CONF_ERROR;
    }

    if (value[0].data[0] == 'l') {
        g->method = GN_UPSTREAM_LEAST_CONN;
        return GN_CONF_OK;
    }

    if (gn_access_log_template(cf->pool, &g->hash_key, &value[1], err,
                               sizeof(err)) != GN_OK)
    {
        gn_conf_error(cf, "%s in \"hash\" of an upstream block", err);
        return GN_CONF_ERROR;
    }
    g->method = GN_UPSTREAM_HASH;
    g->consistent = cf->args->nelts == 3;
    return GN_CONF_OK;
}


static char *
gn_upstream_line(gn_conf_t *cf, void *data)
{
    gn_upstream_group_t  *g = data;
    gn_str_t             *value = cf->args->elts;
    gn_uint_t             n = cf->args->nelts;
    gn_int_t              num;

    if (gn_str_eq(&value[0], "server")) {
        return gn_upstream_server_line(cf, g);
    }

    if ((gn_str_eq(&value[0], "least_conn") && n == 1)
        || (gn_str_eq(&value[0], "hash")
            && (n == 2 || (n == 3 && gn_str_eq(&value[2], "consistent")))))
    {
        return gn_upstream_method(cf, g);
    }

    if ((gn_str_eq(&value[0], "keepalive")
         || gn_str_eq(&value[0], "keepalive_requests")) && n == 2)
    {
        num = gn_atoi(value[1].data, value[1].len);
        if (num < 1) {
            gn_conf_error(cf, "invalid value \"%.*s\" of \"%.*s\" in an "
                          "upstream block, expected a number, 1 or more",
                          GN_STR_ARG(&value[1]), GN_STR_ARG(&value[0]));
            return GN_CONF_ERROR;
        }
        if (value[0].len == 9) {
            g->keepalive = (gn_uint_t) num;
        } else {
            g->keepalive_requests = (gn_uint_t) num;
        }
        return GN_CONF_OK;
    }

    if (gn_str_eq(&value[0], "keepalive_timeout") && n == 2) {
        if (gn_parse_msec(&value[1], &g->keepalive_timeout) != GN_OK) {
            gn_conf_error(cf, "invalid value \"%.*s\" of "
                          "\"keepalive_timeout\" in an upstream block, "
                          "expected a time", GN_STR_ARG(&value[1]));
            return GN_CONF_ERROR;
        }
        return GN_CONF_OK;
    }

    gn_conf_error(cf, "unknown or malformed directive \"%.*s\" in an "
                  "upstream block, expected server, least_conn, hash, "
                  "keepalive, keepalive_requests or keepalive_timeout",
                  GN_STR_ARG(&value[0]));
    return GN_CONF_ERROR;
}


/* hash: no backups (as nginx); consistent: the weighted ring. */
static char *
gn_upstream_hash_init(gn_conf_t *cf, gn_upstream_group_t *g)
{
    gn_upstream_server_t  *s = g->servers.elts;
    gn_str_t              *names;
    gn_uint_t             *weights, i, points = 0;

    names = gn_palloc(cf->temp_pool, g->servers.nelts * sizeof(gn_str_t));
    weights = gn_palloc(cf->temp_pool,
                        g->servers.nelts * sizeof(gn_uint_t));
    if (names == NULL || weights == NULL) {
        return "failed (out of memory)";
    }

    for (i = 0; i < g->servers.nelts; i++) {
        if (s[i].backup) {
            gn_conf_error(cf, "\"backup\" servers cannot be used with "
                          "\"hash\" in upstream \"%.*s\"",
                          GN_STR_ARG(&g->name));
            return GN_CONF_ERROR;
        }
        names[i] = s[i].addr.name;
        weights[i] = s[i].weight;
        points += s[i].weight;
    }

    if (g->consistent && points > 8192) {
        gn_conf_error(cf, "the weights of upstream \"%.*s\" add up to more "
                      "than 8192, too many points for \"hash ... "
                      "consistent\"", GN_STR_ARG(&g->name));
        return GN_CONF_ERROR;
    }

    if (g->consistent
        && gn_chash_init_weighted(&g->ring, cf->pool, names, weights,
                                  g->servers.nelts) != GN_OK)
    {
        return "failed (out of memory)";
    }

    return GN_CONF_OK;
}


char *
gn_upstream_block(gn_conf_t *cf, gn_upstream_group_t *g)
{
    gn_str_t  *value = cf->args->elts;

    memset(g, 0, sizeof(gn_upstream_group_t));
    g->name = value[1];
    if (gn_upstream_group_init(cf, g) != GN_OK) {
        return "failed (out of memory)";
    }

    if (gn_conf_parse_lines(cf, gn_upstream_line, g) != GN_OK) {
        return GN_CONF_ERROR;
    }

    if (g->servers.nelts == 0) {
        gn_conf_error(cf, "no servers in upstream \"%.*s\"",
                      GN_STR_ARG(&g->name));
        return GN_CONF_ERROR;
    }

    if (g->servers.nelts > 255) {
        gn_conf_error(cf, "more than 255 servers in upstream \"%.*s\"",
                      GN_STR_ARG(&g->name));
        return GN_CONF_ERROR;
    }

    return g->method == GN_UPSTREAM_HASH ? gn_upstream_hash_init(cf, g)
                                         : GN_CONF_OK;
}


gn_upstream_group_t *
gn_upstream_implicit(gn_conf_t *cf, const gn_str_t *hostport,
    gn_uint_t unix_ok)
{
    gn_upstream_group_t   *g;
    gn_upstream_server_t  *s;
    const char            *err;

    g = gn_pcalloc(cf->pool, sizeof(gn_upstream_group_t));
    if (g == NULL || gn_upstream_group_init(cf, g) != GN_OK
        || (s = gn_array_push(&g->servers)) == NULL)
    {
        gn_conf_error(cf, "out of memory");
        return NULL;
    }

    memset(s, 0, sizeof(gn_upstream_server_t));
    s->weight = 1;
    s->max_fails = 1;
    s->fail_timeout = 10000;

    err = gn_addr_parse(&s->addr, hostport, unix_ok);
    if (err != NULL) {
        gn_conf_error(cf, "invalid upstream \"%.*s\": %s",
                      GN_STR_ARG(hostport), err);
        return NULL;
    }

    g->name = *hostport;
    g->implicit = 1;
    return g;
}


/* ---- the balancer (child) ---------------------------------------------- */

static gn_upstream_rt_t *
gn_upstream_rt(gn_upstream_group_t *g)
{
    gn_upstream_rt_t  *rt;

    if (g->rt != NULL) {
        return g->rt;
    }

    rt = calloc(1, sizeof(gn_upstream_rt_t));
    if (rt == NULL) {
        return NULL;
    }
    rt->peers = calloc(g->servers.nelts, sizeof(gn_upstream_peer_t));
    if (rt->peers == NULL) {
        free(rt);
        return NULL;
    }

    g->rt = rt;                  /* the child's copy of the configuration */
    rt->next = gn_upstream_rts;
    gn_upstream_rts = rt;
    return rt;
}


static gn_uint_t
gn_upstream_usable(gn_upstream_server_t *s, gn_upstream_peer_t *p)
{
    if (s->down) {
        return 0;
    }

    return s->max_fails == 0 || p->fails < s->max_fails
           || gn_current_msec - p->failed_at >= s->fail_timeout;
}


/* The pick among the servers whose backup flag is `backup`, or -1. */
static gn_int_t
gn_upstream_pick(gn_upstream_group_t *g, gn_upstream_rt_t *rt,
    const u_char *tried, gn_uint_t backup)
{
    gn_upstream_server_t  *s = g->servers.elts;
    gn_upstream_peer_t    *p = rt->peers;
    gn_uint_t              i, k, n = g->servers.nelts;
    gn_int_t               best = -1, total = 0;

    for (k = 0; k < n; k++) {
        i = (rt->rr + k) % n;
        if (s[i].backup != backup || tried[i]
            || !gn_upstream_usable(&s[i], &p[i]))
        {
            continue;
        }

        if (g->method == GN_UPSTREAM_LEAST_CONN) {
            /* active/weight < best's, cross-multiplied */
            if (best == -1 || p[i].active * s[best].weight
                              < p[best].active * s[i].weight)
            {
                best = (gn_int_t) i;
            }
            continue;
        }

        p[i].current += (gn_int_t) s[i].weight;
        total += (gn_int_t) s[i].weight;
        if (best == -1 || p[i].current > p[best].current) {
            best = (gn_int_t) i;
        }
    }

    if (best != -1) {
        if (g->method == GN_UPSTREAM_LEAST_CONN) {
            rt->rr = ((gn_uint_t) best + 1) % n;
        } else {
            p[best].current -= total;
        }
    }

    return best;
}


/* hash: the server the key's hash names (by weight, rehashed past
 * servers left out, up to 20 times, then round robin, as nginx), or on
 * the ring the first usable one from the key's point on; -1: none. */
static gn_int_t
gn_upstream_pick_hash(gn_upstream_group_t *g, gn_upstream_rt_t *rt,
    const u_char *tried, uint32_t hash)
{
    gn_upstream_server_t  *s = g->servers.elts;
    gn_upstream_peer_t    *p = rt->peers;
    gn_chash_point_t      *pt = g->ring.points;
    gn_uint_t              i, k, first, total = 0;
    uint32_t               w;

    if (g->consistent) {
        first = gn_chash_first(&g->ring, hash);
        for (k = 0; k < g->ring.npoints; k++) {
            i = pt[(first + k) % g->ring.npoints].server;
            if (!tried[i] && gn_upstream_usable(&s[i], &p[i])) {
                return (gn_int_t) i;
            }
        }
        return -1;
    }

    for (i = 0; i < g->servers.nelts; i++) {
        total += s[i].weight;
    }

    for (k = 0; k < 20; k++) {
        w = hash % total;
        for (i = 0; w >= s[i].weight; i++) {
            w -= s[i].weight;
        }
        if (!tried[i] && gn_upstream_usable(&s[i], &p[i])) {
            return (gn_int_t) i;
        }
        hash = gn_chash_hash((u_char *) &hash, sizeof(hash));
    }

    return gn_upstream_pick(g, rt, tried, 0);
}


/* ---- connections (child) ----------------------------------------------- */

static void gn_upstream_io(gn_io_t *io, uint32_t events);
static void gn_upstream_idle_expired(gn_timer_t *t);


static gn_upstream_conn_t *
gn_upstream_conn_alloc(void)
{
    gn_upstream_conn_t  *uc;
    gn_uint_t            instance;

    uc = gn_upstream_free;
    if (uc != NULL) {
        gn_upstream_free = uc->next;
        instance = uc->io.instance;
    } else {
        uc = malloc(sizeof(gn_upstream_conn_t));
        if (uc == NULL) {
            return NULL;
        }
        instance = 0;
    }

    memset(uc, 0, sizeof(gn_upstream_conn_t));
    uc->io.fd = -1;
    uc->io.instance = instance + 1;     /* events of its last use: stale */
    uc->io.handler = gn_upstream_io;
    uc->io.data = uc;
    gn_timer_init_node(&uc->idle, gn_upstream_idle_expired, uc);

    return uc;
}


static void
gn_upstream_io(gn_io_t *io, uint32_t events)
{
    gn_upstream_conn_t  *uc = io->data;

    if ((events & (GN_EV_OUT | GN_EV_ERR)) && uc->sq.back_len != 0) {
        (void) gn_sendq_push(&uc->sq);   /* an error is the next send's */
    }

    uc->handler(uc, events);
}


static void
gn_upstream_unlink(gn_upstream_rt_t *rt, gn_upstream_conn_t *uc)
{
    if (uc->prev != NULL) {
        uc->prev->next = uc->next;
    } else {
        rt->idle = uc->next;
    }
    if (uc->next != NULL) {
        uc->next->prev = uc->prev;
    } else {
        rt->idle_tail = uc->prev;
    }
    uc->next = uc->prev = NULL;
    rt->nidle--;
    gn_upstream_count(&((gn_upstream_server_t *) uc->group->servers.elts)
                      [uc->server], idle, -1);
    gn_timer_del(&uc->idle);
}


void
gn_upstream_close(gn_upstream_conn_t *uc)
{
    if (uc->tls != NULL) {
        gn_tls_client_free(uc->tls);
        uc->tls = NULL;
    }
    gn_sendq_finish(&uc->sq);       /* a tunnel's last bytes, if they fit */
    if (uc->io.fd != -1) {
        (void) close(uc->io.fd);          /* leaves the epoll set too */
        uc->io.fd = -1;
    }
    gn_timer_del(&uc->idle);
    uc->handler = NULL;
    uc->next = gn_upstream_free;
    gn_upstream_free = uc;
}


/* An idle connection's event: the server closed it or said something
 * unasked (either way it cannot carry a request), or only the ACKs of
 * what was sent freed room in the socket (edge-triggered: an EPOLLOUT),
 * which changes nothing. */
static void
gn_upstream_idle_event(gn_upstream_conn_t *uc, uint32_t events)
{
    gn_upstream_rt_t  *rt = gn_upstream_rt(uc->group);

    if (events != 0
        && !(events & (GN_EV_IN | GN_EV_RDHUP | GN_EV_ERR)))
    {
        return;
    }
    gn_upstream_unlink(rt, uc);
    gn_upstream_close(uc);
}


static void
gn_upstream_idle_expired(gn_timer_t *t)
{
    gn_upstream_idle_event(t->data, 0);
}


/* A pooled connection to server i, the newest. One the server closed
 * has been dropped by its event, unless that event is still to come in
 * this round of the loop: the caller retries such a one (nginx does not
 * look either; a MSG_PEEK here would cost every request a system
 * call). */
static gn_upstream_conn_t *
gn_upstream_pooled(gn_upstream_rt_t *rt, gn_uint_t i, void *key)
{
    gn_upstream_conn_t  *uc;

    for (uc = rt->idle; uc != NULL; uc = uc->next) {
        if (uc->server == i && uc->key == key) {
            gn_upstream_unlink(rt, uc);
            uc->reused = 1;
            return uc;
        }
    }

    return NULL;
}


static gn_upstream_conn_t *
gn_upstream_connect(gn_upstream_group_t *g, gn_uint_t i, const char **err)
{
    gn_upstream_server_t  *s = &((gn_upstream_server_t *) g->servers.elts)[i];
    gn_upstream_conn_t    *uc;
    int                    fd, one = 1;

    uc = gn_upstream_conn_alloc();
    if (uc == NULL) {
        *err = "out of memory";
        return NULL;
    }

    fd = socket(s->addr.sa.ss_family,
                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        *err = "socket() failed";
        goto failed;
    }
    uc->io.fd = fd;

    if (s->addr.sa.ss_family != AF_UNIX) {
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }

    if (connect(fd, (struct sockaddr *) &s->addr.sa, s->addr.socklen) == -1
        && errno != EINPROGRESS)
    {
        *err = "connect() failed";
        goto failed;
    }

    if (gn_event_add(&uc->io, GN_EV_IN | GN_EV_OUT | GN_EV_RDHUP | GN_EV_ET)
        != GN_OK)
    {
        *err = "epoll_ctl() failed";
        goto failed;
    }

    return uc;

failed:

    one = errno;
    gn_upstream_close(uc);
    errno = one;
    return NULL;
}


static void
gn_upstream_failed(gn_upstream_group_t *g, gn_upstream_rt_t *rt,
    gn_uint_t i)
{
    gn_upstream_server_t  *s = &((gn_upstream_server_t *) g->servers.elts)[i];
    gn_upstream_peer_t    *p = &rt->peers[i];

    if (s->max_fails == 0 || g->servers.nelts == 1) {
        return;                 /* a lone server is never left out */
    }

    if (gn_current_msec - p->failed_at >= s->fail_timeout) {
        p->fails = 0;                 /* the old failures are forgotten */
    }
    p->fails++;
    p->failed_at = gn_current_msec;

    if (p->fails == s->max_fails) {
        gn_upstream_count(s, disabled, 1);
        if (s->stats != NULL) {
            s->stats->state = GN_UPSTREAM_FAILED;
        }
        gn_log_error(GN_LOG_WARN, NULL, 0, "upstream server %.*s of \"%.*s\" "
                     "temporarily disabled for %lu ms after %lu failures",
                     GN_STR_ARG(&s->addr.name), GN_STR_ARG(&g->name),
                     (unsigned long) s->fail_timeout,
                     (unsigned long) p->fails);
    }
}


gn_upstream_conn_t *
gn_upstream_get(gn_upstream_group_t *g, u_char *tried, uint32_t hash,
    gn_uint_t fresh, void *key, gn_upstream_handler_pt handler, void *data,
    gn_uint_t *picked, const char **err)
{
    gn_upstream_rt_t      *rt;
    gn_upstream_conn_t    *uc;
    gn_upstream_server_t  *s;
    gn_int_t               i;

    *picked = (gn_uint_t) -1;
    rt = gn_upstream_rt(g);
    if (rt == NULL) {
        return NULL;
    }

    if (g->method == GN_UPSTREAM_HASH) {
        i = gn_upstream_pick_hash(g, rt, tried, hash);
    } else {
        i = gn_upstream_pick(g, rt, tried, 0);
        if (i == -1) {
            i = gn_upstream_pick(g, rt, tried, 1);
        }
    }
    if (i == -1) {
        return NULL;
    }
    tried[i] = 1;
    *picked = (gn_uint_t) i;

    uc = fresh ? NULL : gn_upstream_pooled(rt, (gn_uint_t) i, key);
    if (uc == NULL) {
        uc = gn_upstream_connect(g, (gn_uint_t) i, err);
        if (uc == NULL) {
            gn_upstream_failed(g, rt, (gn_uint_t) i);
            return NULL;
        }
        uc->key = key;
    }

    uc->group = g;
    uc->server = (gn_uint_t) i;
    uc->handler = handler;
    uc->data = data;
    rt->peers[i].active++;
    s = &((gn_upstream_server_t *) g->servers.elts)[i];
    gn_upstream_count(s, requests, 1);
    gn_upstream_count(s, active, 1);

    return uc;
}


int
gn_upstream_connect_error(gn_upstream_conn_t *uc)
{
    int        err = 0;
    socklen_t  len = sizeof(err);

    if (getsockopt(uc->io.fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1) {
        return errno;
    }

    return err;
}


void
gn_upstream_done(gn_upstream_conn_t *uc, gn_uint_t failed)
{
    gn_upstream_rt_t      *rt = gn_upstream_rt(uc->group);
    gn_upstream_server_t  *s;

    s = &((gn_upstream_server_t *) uc->group->servers.elts)[uc->server];
    rt->peers[uc->server].active--;
    gn_upstream_count(s, active, -1);

    if (failed) {
        gn_upstream_failed(uc->group, rt, uc->server);
    } else {
        rt->peers[uc->server].fails = 0;
        if (s->stats != NULL && s->stats->state == GN_UPSTREAM_FAILED) {
            s->stats->state = GN_UPSTREAM_UP;
        }
    }
}


void
gn_upstream_account(gn_upstream_group_t *g, gn_uint_t i, gn_uint_t status,
    gn_msec_t ms, gn_uint_t fail)
{
    static const gn_msec_t  le[GN_UPSTREAM_BUCKETS - 1] = {
        1, 5, 25, 100, 500, 2500, 10000
    };
    gn_upstream_server_t   *s = &((gn_upstream_server_t *)
                                  g->servers.elts)[i];
    gn_uint_t               b;

    if (s->stats == NULL) {
        return;
    }

    if (status >= 100 && status < 600) {
        gn_upstream_count(s, responses[status / 100], 1);
    }
    if (fail != 0) {
        gn_upstream_count(s, fail[fail], 1);
    }
    for (b = 0; b < GN_UPSTREAM_BUCKETS - 1 && ms > le[b]; b++) {
        /* void */
    }
    gn_upstream_count(s, time[b], 1);
}


static void
gn_upstream_zone_release(void *data)
{
    gn_shm_zone_put(data);
}


/* Do the two lists have the same servers in the same order? */
static gn_uint_t
gn_upstream_same(gn_upstream_group_t **a, gn_uint_t na,
    gn_upstream_group_t **b, gn_uint_t nb)
{
    gn_upstream_server_t  *sa, *sb;
    gn_uint_t              i, k;

    if (na != nb) {
        return 0;
    }
    for (i = 0; i < na; i++) {
        if (a[i]->servers.nelts != b[i]->servers.nelts
            || gn_str_cmp(&a[i]->name, &b[i]->name) != 0)
        {
            return 0;
        }
        sa = a[i]->servers.elts;
        sb = b[i]->servers.elts;
        for (k = 0; k < a[i]->servers.nelts; k++) {
            if (gn_str_cmp(&sa[k].addr.name, &sb[k].addr.name) != 0
                || sb[k].stats == NULL)
            {
                return 0;
            }
        }
    }
    return 1;
}


gn_int_t
gn_upstream_zone(gn_pool_t *pool, gn_upstream_group_t **groups,
    gn_uint_t n, gn_upstream_group_t **old, gn_uint_t nold, gn_log_t *log)
{
    gn_upstream_stats_t   *st;
    gn_upstream_server_t  *s;
    gn_shm_zone_t         *zone;
    gn_pool_cleanup_t     *cln;
    gn_uint_t              i, k, total = 0;

    for (i = 0; i < n; i++) {
        total += groups[i]->servers.nelts;
    }
    if (total == 0) {
        return GN_OK;
    }

    cln = gn_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        return GN_ERROR;
    }

    if (gn_upstream_same(groups, n, old, nold)) {
        /* the old cycle's zone: its first server's stats are its start */
        st = ((gn_upstream_server_t *) old[0]->servers.elts)[0].stats;
        zone = NULL;
        for (i = 0; i < n && zone == NULL; i++) {
            zone = old[i]->zone;
        }
        zone->refs++;
    } else {
        zone = gn_shm_zone_get(total * sizeof(gn_upstream_stats_t),
                               "upstreams", log);
        if (zone == NULL) {
            return GN_ERROR;
        }
        st = (gn_upstream_stats_t *) zone->addr;
    }
    cln->handler = gn_upstream_zone_release;
    cln->data = zone;

    for (i = 0; i < n; i++) {
        groups[i]->zone = zone;
        s = groups[i]->servers.elts;
        for (k = 0; k < groups[i]->servers.nelts; k++) {
            s[k].stats = st++;
            s[k].stats->state = s[k].down ? GN_UPSTREAM_DOWN
                                          : GN_UPSTREAM_UP;
        }
    }

    return GN_OK;
}


void
gn_upstream_keep(gn_upstream_conn_t *uc)
{
    gn_upstream_group_t  *g = uc->group;
    gn_upstream_rt_t     *rt = gn_upstream_rt(g);

    if (g->keepalive == 0 || uc->requests >= g->keepalive_requests) {
        gn_upstream_close(uc);
        return;
    }

    if (rt->nidle >= g->keepalive) {
        gn_upstream_conn_t  *old = rt->idle_tail;

        gn_upstream_unlink(rt, old);
        gn_upstream_close(old);
    }

    uc->handler = gn_upstream_idle_event;
    uc->data = NULL;
    uc->prev = NULL;
    uc->next = rt->idle;
    if (rt->idle != NULL) {
        rt->idle->prev = uc;
    } else {
        rt->idle_tail = uc;
    }
    rt->idle = uc;
    rt->nidle++;
    gn_upstream_count(&((gn_upstream_server_t *) g->servers.elts)
                      [uc->server], idle, 1);
    gn_timer_set(&uc->idle, g->keepalive_timeout);
}


void
gn_upstream_child_exit(void)
{
    gn_upstream_rt_t  *rt;

    for (rt = gn_upstream_rts; rt != NULL; rt = rt->next) {
        while (rt->idle != NULL) {
            gn_upstream_idle_event(rt->idle, 0);
        }
    }
}


ssize_t
gn_upstream_send(gn_upstream_conn_t *uc, const u_char *p, size_t n)
{
    struct iovec  iov;

    if (uc->tls != NULL) {
        return gn_tls_client_send(uc->tls, p, n);
    }

    iov.iov_base = (void *) p;
    iov.iov_len = n;
    return gn_sendq_writev(&uc->sq, uc->io.fd, &iov, 1, 0);
}


ssize_t
gn_upstream_recv(gn_upstream_conn_t *uc, u_char *p, size_t n)
{
    ssize_t  rc;

    if (uc->tls != NULL) {
        return gn_tls_client_recv(uc->tls, p, n);
    }

    do {
        rc = recv(uc->io.fd, p, n, 0);
    } while (rc == -1 && errno == EINTR);

    if (rc == -1) {
        return errno == EAGAIN || errno == EWOULDBLOCK ? GN_AGAIN
                                                       : GN_ERROR;
    }
    return rc;
}
