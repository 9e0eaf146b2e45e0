/*
 * A memcached client in the child's event loop, for the TLS session
 * cache's second tier: non-blocking, one connection per server per
 * child, requests pipelined on it in the meta text protocol of memcached
 * 1.6 (mg / ms / md), lookups matched to their answers by opaque token,
 * stores and deletes quiet (answered only when they fail).
 *
 * Nothing here ever blocks or waits: a lookup is answered through its
 * handler from the loop; a server that is down (refused, closed, gave a
 * reply that is not memcached's, or left requests unanswered for
 * GN_MEMC_STALL ms) fails what it holds, and until the back-off has
 * passed (100 ms, doubling up to 5 s while it keeps failing) lookups are
 * declined at once and stores dropped. The first request after that
 * reconnects. Each child logs a server's going down and its coming back
 * once each, whatever the number of requests in between.
 *
 * Counters per server live in a zone shared by the children (made by the
 * master; see gn_memc_conf_t), read by the status page.
 */

#ifndef GN_CORE_MEMC_H_INCLUDED
#define GN_CORE_MEMC_H_INCLUDED

#include "gn_config.h"

#include <sys/socket.h>

#include "chash.h"
#include "addr.h"


#define GN_MEMC_STALL       1000        /* ms without an answer: down */
#define GN_MEMC_KEY_MAX     250         /* memcached's limit */

/* A server's state as the children last saw it (status page). */
typedef enum {
    GN_MEMC_IDLE = 0,           /* never asked */
    GN_MEMC_CONNECTING,         /* connecting */
    GN_MEMC_UP,                 /* connected (and answering) */
    GN_MEMC_DOWN                /* failed; waiting to retry */
} gn_memc_state_e;

/* One server's counters, summed over the children (relaxed atomics). */
typedef struct {
    uint64_t    lookups;        /* asked */
    uint64_t    hits;           /* found, and the caller used it */
    uint64_t    misses;         /* not found, or unusable */
    uint64_t    timeouts;       /* the caller stopped waiting */
    uint64_t    skipped;        /* not asked: down, or too much queued */
    uint64_t    stores;         /* sent to be stored (quietly: memcached
                                   answers only a failure) */
    uint64_t    store_failures; /* not sent, or refused */
    uint64_t    err_connect;    /* connect failed, or the server closed */
    uint64_t    err_protocol;   /* a reply that is not memcached's */
    uint64_t    err_stall;      /* no answer for GN_MEMC_STALL ms */
    uint64_t    rtt_us;         /* sum of lookup round trips, us */
    uint64_t    rtt_n;          /* ... and their number */
    uint32_t    state;          /* gn_memc_state_e */
    uint32_t    reserved;
} gn_memc_stats_t;

/* What the configuration gives (master; children inherit it). */
typedef struct {
    gn_addr_t     *servers;
    gn_uint_t           nservers;
    gn_chash_t          ring;
    gn_memc_stats_t    *stats;          /* nservers, in a shared zone */
} gn_memc_conf_t;

typedef struct gn_memc_op_s  gn_memc_op_t;

/* A lookup's answer: rc GN_OK with the value, GN_DECLINED not found,
 * GN_ERROR the server failed. Called from the event loop, never from
 * inside gn_memc_get(). Returns GN_OK when it used the value (a hit);
 * anything else makes a value found a miss. */
typedef gn_int_t (*gn_memc_handler_pt)(void *data, gn_int_t rc,
    const u_char *val, size_t len);


/* Asks the server that owns key for its value. NULL: not asked (down,
 * backing off, or too much queued; counted as skipped), the caller goes
 * on as on a miss. Otherwise the handler will be called once, unless the
 * caller gives up first with gn_memc_cancel(). */
gn_memc_op_t *gn_memc_get(gn_memc_conf_t *mc, const u_char *key,
    size_t klen, gn_memc_handler_pt handler, void *data);

/* The caller stops waiting (counted as a timeout); the handler is not
 * called. */
void gn_memc_cancel(gn_memc_op_t *op);

/* The same without counting it: the caller is going away. */
void gn_memc_abandon(gn_memc_op_t *op);

/* Stores or deletes; the outcome is counted, nobody waits for it. */
void gn_memc_set(gn_memc_conf_t *mc, const u_char *key, size_t klen,
    const u_char *val, size_t len, time_t ttl);
void gn_memc_delete(gn_memc_conf_t *mc, const u_char *key, size_t klen);

#endif /* GN_CORE_MEMC_H_INCLUDED */
