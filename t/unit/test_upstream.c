/*
 * Unit tests for upstream groups (core/upstream.c), through its API on
 * real loopback sockets: address parsing; smooth weighted round robin
 * (5:1:1 gives a a b a c a a, as nginx's); tried servers, `down` ones
 * and failed ones (max_fails within fail_timeout) left out, and taken
 * back after fail_timeout; a lone server never left out; backups only
 * when no primary can serve; least_conn by active connections per
 * weight; hash KEY, plain and consistent (a key keeps its server, keys
 * spread, a server left out moves only its own keys); the pool: a kept
 * connection is handed out again, keepalive bounds what is kept,
 * keepalive_requests retires one, a connection the server closed while
 * idle is dropped by its event.
 */

#include "gn_config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include "upstream.h"
#include "chash.h"
#include "str.h"
#include "../tap.h"


#define NSRV  3

static int                 lfd[NSRV];
static gn_addr_t  addrs[NSRV];


static void
noop(gn_upstream_conn_t *uc, uint32_t events)
{
    (void) uc;
    (void) events;
}


static void
listeners(void)
{
    struct sockaddr_in  sin;
    socklen_t           len;
    gn_uint_t           i;

    for (i = 0; i < NSRV; i++) {
        lfd[i] = socket(AF_INET, SOCK_STREAM, 0);
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(lfd[i], (struct sockaddr *) &sin, sizeof(sin)) == -1
            || listen(lfd[i], 64) == -1)
        {
            perror("bind/listen");
            exit(1);
        }
        len = sizeof(addrs[i].sa);
        getsockname(lfd[i], (struct sockaddr *) &addrs[i].sa, &len);
        addrs[i].socklen = len;
        gn_str_set(&addrs[i].name, "srv");
    }
}


/* A new group of the first n listeners (static: its run-time state,
 * which the group points to, stays reachable, as a cycle's does). */
static gn_upstream_group_t *
group(gn_pool_t *pool, gn_uint_t n, const gn_uint_t *weights)
{
    static gn_upstream_group_t   groups[16];
    static gn_uint_t             ngroups;
    gn_upstream_group_t         *g = &groups[ngroups++];
    gn_upstream_server_t        *s;
    gn_uint_t                    i;

    memset(g, 0, sizeof(gn_upstream_group_t));
    gn_str_set(&g->name, "test");
    gn_array_init(&g->servers, pool, n, sizeof(gn_upstream_server_t));
    for (i = 0; i < n; i++) {
        s = gn_array_push(&g->servers);
        memset(s, 0, sizeof(gn_upstream_server_t));
        s->addr = addrs[i];
        s->weight = weights ? weights[i] : 1;
        s->max_fails = 1;
        s->fail_timeout = 10000;
    }
    g->keepalive_timeout = 60000;
    g->keepalive_requests = 1000;
    return g;
}


/* The server of the next pick, released at once (-1: none). */
static gn_int_t
pick(gn_upstream_group_t *g, u_char *tried, gn_uint_t failed)
{
    gn_upstream_conn_t  *uc;
    const char          *err = NULL;
    gn_uint_t            picked;
    u_char               none[NSRV] = { 0 };

    uc = gn_upstream_get(g, tried ? tried : none, 0, 1, NULL, noop, NULL, &picked,
                         &err);
    if (uc == NULL) {
        return picked == (gn_uint_t) -1 ? -1 : -2;
    }
    gn_upstream_done(uc, failed);
    gn_upstream_close(uc);
    return (gn_int_t) picked;
}


/* The server's end of client socket fd (earlier tests left others in
 * the listener's queue). */
static int
accept_peer(int l, int fd)
{
    struct sockaddr_in  me, peer;
    socklen_t           len;
    int                 k;

    len = sizeof(me);
    getsockname(fd, (struct sockaddr *) &me, &len);
    for ( ;; ) {
        k = accept(l, NULL, NULL);
        len = sizeof(peer);
        if (k == -1 || getpeername(k, (struct sockaddr *) &peer, &len) == -1
            || peer.sin_port == me.sin_port)
        {
            return k;
        }
        close(k);
    }
}


static gn_int_t
pick_hash(gn_upstream_group_t *g, uint32_t hash)
{
    gn_upstream_conn_t  *uc;
    const char          *err = NULL;
    gn_uint_t            picked;
    u_char               none[NSRV] = { 0 };

    uc = gn_upstream_get(g, none, hash, 1, NULL, noop, NULL, &picked, &err);
    if (uc == NULL) {
        return -1;
    }
    gn_upstream_done(uc, 0);
    gn_upstream_close(uc);
    return (gn_int_t) picked;
}


static void
test_addr(void)
{
    gn_addr_t  a;
    gn_str_t            s;

    gn_str_set(&s, "127.0.0.1:8080");
    ok(gn_addr_parse(&a, &s, 0) == NULL
       && a.sa.ss_family == AF_INET
       && ntohs(((struct sockaddr_in *) &a.sa)->sin_port) == 8080,
       "addr: IPv4:port");
    gn_str_set(&s, "[::1]:443");
    ok(gn_addr_parse(&a, &s, 0) == NULL
       && a.sa.ss_family == AF_INET6, "addr: [IPv6]:port");
    gn_str_set(&s, "unix:/run/app.sock");
    ok(gn_addr_parse(&a, &s, 1) == NULL
       && a.sa.ss_family == AF_UNIX, "addr: unix:PATH where allowed");
    ok(gn_addr_parse(&a, &s, 0) != NULL,
       "addr: ... refused elsewhere");
    gn_str_set(&s, "127.0.0.1");
    ok(gn_addr_parse(&a, &s, 0) != NULL, "addr: no port");
    gn_str_set(&s, "127.0.0.1:0");
    is_str(gn_addr_parse(&a, &s, 0), 12, "invalid port",
           "addr: port 0");
    gn_str_set(&s, "127.0.0.1:65536");
    ok(gn_addr_parse(&a, &s, 0) != NULL, "addr: port 65536");
    gn_str_set(&s, "[::1:80");
    ok(gn_addr_parse(&a, &s, 0) != NULL, "addr: unclosed [");
}


int
main(void)
{
    static const gn_uint_t  w511[] = { 5, 1, 1 };
    gn_upstream_group_t    *g;
    gn_upstream_server_t   *s;
    gn_upstream_conn_t     *uc, *uc2;
    gn_pool_t              *pool;
    u_char                  tried[NSRV];
    char                    seq[16];
    const char             *err;
    gn_uint_t               i, picked, n[NSRV];
    gn_int_t                k;
    sigset_t                mask;

    pool = gn_pool_create(4096);
    if (pool == NULL || gn_event_init(64) != GN_OK
        || gn_timer_heap_init(64) != GN_OK)
    {
        skip_all("no event loop");
    }
    gn_time_update();
    listeners();
    test_addr();

    g = group(pool, 3, w511);
    for (i = 0; i < 7; i++) {
        k = pick(g, NULL, 0);
        seq[i] = (char) ('a' + k);
    }
    is_str(seq, 7, "aabacaa", "smooth weighted round robin, 5:1:1");

    g = group(pool, 3, NULL);
    memset(tried, 0, sizeof(tried));
    tried[0] = tried[1] = 1;
    is_int(pick(g, tried, 0), 2, "tried servers are left out");
    is_int(pick(g, tried, 0), -1, "... all tried: none");

    s = g->servers.elts;
    s[1].down = 1;
    memset(n, 0, sizeof(n));
    for (i = 0; i < 30; i++) {
        n[pick(g, NULL, 0)]++;
    }
    ok(n[1] == 0 && n[0] == 15 && n[2] == 15, "down: never picked");
    s[1].down = 0;

    /* a failure: left out for fail_timeout */
    g = group(pool, 2, NULL);
    k = pick(g, NULL, 1);
    for (i = 0, picked = 0; i < 10; i++) {
        picked += pick(g, NULL, 0) == k;
    }
    is_int(picked, 0, "max_fails=1: the failed server is left out");
    gn_current_msec += 10000;
    for (i = 0, picked = 0; i < 10; i++) {
        picked += pick(g, NULL, 0) == k;
    }
    is_int(picked, 5, "... and back after fail_timeout");

    g = group(pool, 1, NULL);
    (void) pick(g, NULL, 1);
    is_int(pick(g, NULL, 0), 0, "a lone server is never left out");

    /* backups */
    g = group(pool, 3, NULL);
    s = g->servers.elts;
    s[2].backup = 1;
    memset(n, 0, sizeof(n));
    for (i = 0; i < 10; i++) {
        n[pick(g, NULL, 0)]++;
    }
    ok(n[2] == 0, "a backup serves nothing while the primaries can");
    s[0].down = s[1].down = 1;
    is_int(pick(g, NULL, 0), 2, "... and everything when they cannot");

    /* least_conn: two busy on 0, one on 1, then 2 is the pick */
    g = group(pool, 3, NULL);
    g->method = GN_UPSTREAM_LEAST_CONN;
    memset(tried, 0, sizeof(tried));
    uc = gn_upstream_get(g, tried, 0, 1, NULL, noop, NULL, &picked, &err);
    memset(tried, 0, sizeof(tried));
    uc2 = gn_upstream_get(g, tried, 0, 1, NULL, noop, NULL, &picked, &err);
    ok(uc != NULL && uc2 != NULL && uc->server != uc2->server,
       "least_conn: the second goes to another server");
    k = pick(g, NULL, 0);
    ok(k != (gn_int_t) uc->server && k != (gn_int_t) uc2->server,
       "least_conn: the third to the idle one");
    gn_upstream_done(uc, 0);
    gn_upstream_close(uc);
    gn_upstream_done(uc2, 0);
    gn_upstream_close(uc2);

    /* hash KEY: a key's server, always; keys spread; a server left
     * out moves only its own keys (consistent) */
    for (k = 0; k < 2; k++) {
        gn_str_t   names[NSRV] = { gn_string("a:1"), gn_string("b:1"),
                                   gn_string("c:1") };
        gn_uint_t  w[NSRV] = { 1, 1, 1 }, before[100], same, moved, j;

        g = group(pool, 3, NULL);
        g->method = GN_UPSTREAM_HASH;
        g->consistent = (gn_uint_t) k;
        if (k == 1) {
            gn_chash_init_weighted(&g->ring, pool, names, w, 3);
        }
        memset(n, 0, sizeof(n));
        for (j = 0; j < 100; j++) {
            before[j] = (gn_uint_t) pick_hash(g, gn_chash_hash(
                            (u_char *) &j, sizeof(j)));
            n[before[j]]++;
        }
        for (j = 0, same = 0; j < 100; j++) {
            same += (gn_uint_t) pick_hash(g, gn_chash_hash(
                        (u_char *) &j, sizeof(j))) == before[j];
        }
        is_int(same, 100, "hash%s: a key goes to its server every time",
               k ? " consistent" : "");
        ok(n[0] > 10 && n[1] > 10 && n[2] > 10,
           "hash%s: keys spread (%u %u %u)", k ? " consistent" : "",
           (unsigned) n[0], (unsigned) n[1], (unsigned) n[2]);
        s = g->servers.elts;
        s[1].down = 1;
        for (j = 0, moved = 0, same = 0; j < 100; j++) {
            i = (gn_uint_t) pick_hash(g, gn_chash_hash((u_char *) &j,
                                                       sizeof(j)));
            moved += i == 1;
            same += before[j] != 1 && i == before[j];
        }
        is_int(moved, 0, "hash%s: a down server gets no key",
               k ? " consistent" : "");
        is_int(same, 100 - n[1], "hash%s: the other servers keep theirs",
               k ? " consistent" : "");
    }

    /* the pool */
    g = group(pool, 1, NULL);
    g->keepalive = 1;
    memset(tried, 0, sizeof(tried));
    uc = gn_upstream_get(g, tried, 0, 0, NULL, noop, NULL, &picked, &err);
    ok(uc != NULL && !uc->reused, "pool: a new connection first");
    k = accept_peer(lfd[0], uc->io.fd);
    gn_upstream_done(uc, 0);
    uc->requests++;
    gn_upstream_keep(uc);
    memset(tried, 0, sizeof(tried));
    uc2 = gn_upstream_get(g, tried, 0, 0, NULL, noop, NULL, &picked, &err);
    ok(uc2 == uc && uc2->reused, "pool: ... then the kept one");
    gn_upstream_done(uc2, 0);
    gn_upstream_keep(uc2);
    close(k);                              /* the server closes it */
    usleep(20000);
    sigemptyset(&mask);
    (void) gn_event_process(100, &mask);   /* ... its event comes */
    memset(tried, 0, sizeof(tried));
    uc = gn_upstream_get(g, tried, 0, 0, NULL, noop, NULL, &picked, &err);
    ok(uc != NULL && !uc->reused,
       "pool: one the server closed is not handed out");
    gn_upstream_done(uc, 0);
    uc->requests = g->keepalive_requests;
    gn_upstream_keep(uc);                  /* retired, not kept */
    memset(tried, 0, sizeof(tried));
    uc = gn_upstream_get(g, tried, 0, 0, NULL, noop, NULL, &picked, &err);
    ok(uc != NULL && !uc->reused, "pool: keepalive_requests retires one");
    gn_upstream_done(uc, 0);
    gn_upstream_close(uc);

    for (i = 0; i < NSRV; i++) {
        close(lfd[i]);
    }
    gn_pool_destroy(pool);

    return done_testing();
}
