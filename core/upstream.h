/*
 * Upstreams: the servers a child talks to on behalf of its clients.
 *
 * Addresses are resolved when the configuration is loaded (master), so a
 * name's later DNS changes are seen at the next reload. A group (the
 * `upstream NAME { ... }` block, or the one server of a `proxy_pass
 * http://HOST:PORT`) is configuration, shared by the children; what each
 * child learns at run time (the balancer's weights, failures, the
 * connections it keeps) is its own, made at its first use, as nginx's
 * workers do without a `zone`.
 *
 * A connection to an upstream is a non-blocking socket in the child's
 * event loop, never a blocking call: gn_upstream_get() hands out an idle
 * pooled connection to the server it picks, or one being connected; the
 * owner's handler then gets every event on it until it gives it back to
 * the pool (gn_upstream_keep) or closes it (gn_upstream_close).
 */

#ifndef GN_CORE_UPSTREAM_H_INCLUDED
#define GN_CORE_UPSTREAM_H_INCLUDED

#include "gn_config.h"

#include <sys/socket.h>

#include "array.h"
#include "conf.h"
#include "chash.h"
#include "access_log.h"
#include "addr.h"
#include "event.h"
#include "timer.h"
#include "log.h"
#include "sendq.h"


/* An upstream server's counters in the shared zone "upstreams", summed
 * over the children, kept across a reload that keeps the servers (and a
 * binary upgrade); state is as a child last saw it. */
#define GN_UPSTREAM_UP         0
#define GN_UPSTREAM_FAILED     1        /* left out after max_fails */
#define GN_UPSTREAM_DOWN       2        /* `down` */

#define GN_UPSTREAM_BUCKETS    8        /* response time, ms: <= 1, 5, 25,
                                           100, 500, 2500, 10000, more */

#define GN_UPSTREAM_FAIL_CONNECT  1     /* refused, failed to connect */
#define GN_UPSTREAM_FAIL_TIMEOUT  2
#define GN_UPSTREAM_FAIL_INVALID  3     /* a head that is not one */
#define GN_UPSTREAM_FAIL_CUT      4     /* closed early, or sent garbage,
                                           mid-response */

typedef struct {
    uint64_t             requests;       /* tries sent to it */
    uint64_t             responses[6];   /* by class, [1] 1xx .. [5] 5xx */
    uint64_t             fail[5];        /* by GN_UPSTREAM_FAIL_* */
    uint64_t             disabled;       /* times left out (max_fails) */
    uint64_t             time[GN_UPSTREAM_BUCKETS];
    int64_t              active;         /* busy connections now */
    int64_t              idle;           /* ... kept in the pools */
    uint32_t             state;          /* GN_UPSTREAM_UP, ... */
    uint32_t             reserved;
} gn_upstream_stats_t;

typedef struct {
    gn_addr_t   addr;
    gn_uint_t            weight;         /* default 1 */
    gn_uint_t            max_fails;      /* 0: never taken out */
    gn_msec_t            fail_timeout;   /* default 10 s */
    gn_uint_t            backup;         /* only when the others fail */
    gn_uint_t            down;           /* never used */
    gn_upstream_stats_t *stats;          /* in the zone; NULL: none */
} gn_upstream_server_t;

#define GN_UPSTREAM_RR          0        /* weighted round robin */
#define GN_UPSTREAM_LEAST_CONN  1
#define GN_UPSTREAM_HASH        2        /* hash KEY [consistent] */

typedef struct gn_upstream_rt_s  gn_upstream_rt_t;

typedef struct {
    gn_str_t             name;           /* NAME, or the URL's host:port */
    gn_array_t           servers;        /* of gn_upstream_server_t */
    gn_uint_t            method;         /* GN_UPSTREAM_RR, ... */
    gn_log_format_t      hash_key;       /* hash: the key, with variables
                                            (the proxy renders it) */
    gn_uint_t            consistent;     /* ... on the ring below */
    gn_chash_t           ring;           /* ... weighted */
    gn_uint_t            keepalive;      /* idle connections kept per
                                            child; 0: none */
    gn_msec_t            keepalive_timeout;
    gn_uint_t            keepalive_requests;
    gn_uint_t            implicit;       /* made for one proxy_pass URL */
    gn_uint_t            listed;         /* ... and in the cycle's list */
    gn_upstream_rt_t    *rt;             /* child: its own state, made at
                                            its first use */
    struct gn_shm_zone_s *zone;          /* its servers' counters */
} gn_upstream_group_t;

/* Parses an `upstream NAME { ... }` block into a new group (a
 * GN_CONF_BLOCK handler's body: cf->args holds "upstream NAME"). */
char *gn_upstream_block(gn_conf_t *cf, gn_upstream_group_t *g);

/* The group of a URL's single server (proxy_pass http://HOST:PORT,
 * fastcgi_pass HOST:PORT or, unix_ok, unix:PATH): resolved, no pooling
 * (as nginx). NULL with cf->err filled. */
gn_upstream_group_t *gn_upstream_implicit(gn_conf_t *cf,
    const gn_str_t *hostport, gn_uint_t unix_ok);


typedef struct gn_upstream_conn_s  gn_upstream_conn_t;

typedef void (*gn_upstream_handler_pt)(gn_upstream_conn_t *uc,
    uint32_t events);

struct gn_upstream_conn_s {
    gn_io_t                  io;         /* first: events find us */
    gn_upstream_handler_pt   handler;    /* the owner's, on every event */
    void                    *data;       /* the owner's */
    gn_upstream_group_t     *group;
    gn_uint_t                server;     /* in group->servers */
    gn_uint_t                requests;   /* sent on it so far */
    void                    *tls;        /* a gnutls_session_t
                                            (tls_client.h), or NULL */
    void                    *key;        /* what it was made for: a pooled
                                            one goes to the same only */
    unsigned                 connected:1;  /* connect() completed */
    unsigned                 reused:1;     /* came from the pool */
    gn_timer_t               idle;       /* in the pool: its limit */
    gn_sendq_t               sq;         /* plain writes (sendq.h) */
    gn_upstream_conn_t      *next;       /* the pool, or the free list */
    gn_upstream_conn_t      *prev;
};

/*
 * Child only. A connection to a server of g that tried[] (one flag per
 * server, g->servers.nelts of them) does not mark: the balancer's pick
 * among those up (for `hash`, by hash: gn_chash_hash of the rendered
 * key), else the backups, else NULL with *picked (gn_uint_t) -1 (none
 * left). Unless `fresh`, an idle pooled connection to it when
 * there is one (reused set; one made with the same key: the caller's TLS
 * settings, or NULL), else a new one whose connect() is in
 * progress (connected clear: the handler's first GN_EV_OUT says it
 * completed, or failed: gn_upstream_connect_error tells). The pick is
 * *picked, and marked in tried[]. NULL with *err set (and errno) when
 * the socket could not be made (the server is counted as failed).
 */
gn_upstream_conn_t *gn_upstream_get(gn_upstream_group_t *g, u_char *tried,
    uint32_t hash, gn_uint_t fresh, void *key,
    gn_upstream_handler_pt handler, void *data, gn_uint_t *picked,
    const char **err);

/* I/O on uc, plain or through its TLS session: bytes, 0 (recv: the
 * upstream closed), GN_AGAIN, or GN_ERROR (errno kept, plain). */
ssize_t gn_upstream_send(gn_upstream_conn_t *uc, const u_char *p, size_t n);
ssize_t gn_upstream_recv(gn_upstream_conn_t *uc, u_char *p, size_t n);

/* After connect() completed on uc: 0, or its error (an errno). */
int gn_upstream_connect_error(gn_upstream_conn_t *uc);

/* The request on uc is done: failed says whether the server failed it
 * (refused, timed out, garbage: passive health, max_fails), for the
 * balancer's accounting. Called once per gn_upstream_get. */
void gn_upstream_done(gn_upstream_conn_t *uc, gn_uint_t failed);

/* The end of a try on server i of g: its status (0: none came), how
 * long it took, and its failure (GN_UPSTREAM_FAIL_*, or 0), to the
 * server's counters. */
void gn_upstream_account(gn_upstream_group_t *g, gn_uint_t i,
    gn_uint_t status, gn_msec_t ms, gn_uint_t fail);

/* Master, at open: the zone of every group's counters (groups[0..n)),
 * taken over from `old` (its groups) when the servers are the same.
 * GN_OK, or GN_ERROR (logged). The zone goes with the pool's cleanup. */
gn_int_t gn_upstream_zone(gn_pool_t *pool, gn_upstream_group_t **groups,
    gn_uint_t n, gn_upstream_group_t **old, gn_uint_t nold, gn_log_t *log);

/* Child, exiting: closes its pooled connections (the zone's idle
 * gauges say so). */
void gn_upstream_child_exit(void);

/* uc's response was read whole and it may be reused: it goes to the
 * pool of its group (or is closed: no keepalive, the pool full --
 * the oldest goes --, keepalive_requests reached). */
void gn_upstream_keep(gn_upstream_conn_t *uc);

/* Closes uc now; the caller must not touch it again. */
void gn_upstream_close(gn_upstream_conn_t *uc);

#endif /* GN_CORE_UPSTREAM_H_INCLUDED */
