/*
 * Request and connection limits shared by every child (nginx's
 * limit_req and limit_conn modules):
 *
 *   limit_req_zone KEY zone=NAME:SIZE rate=Nr/s|Nr/m;        (main)
 *   limit_req zone=NAME [burst=N] [nodelay | delay=N];       (any level)
 *   limit_req_status CODE;  limit_req_log_level LEVEL;
 *   limit_conn_zone KEY zone=NAME:SIZE;                      (main)
 *   limit_conn NAME N;                                       (any level)
 *   limit_conn_status CODE; limit_conn_log_level LEVEL;
 *
 * A zone is a table in shared memory (tls_scache.h's, through
 * gn_scache_update()) made by the master: every child counts a key
 * (KEY with the access log's variables, usually $binary_remote_addr)
 * in the same entry under one lock, so a client cannot multiply its
 * allowance by the number of children. A reload keeps a zone whose
 * kind, size and rate are unchanged, counters and all; a binary upgrade
 * passes it on.
 *
 * limit_req is nginx's leaky bucket: `rate` requests a second drain the
 * bucket, each request adds one; past `burst` a request is refused
 * (limit_req_status, 503 by default, 429 is usual); within it the
 * request waits until the bucket is back under `delay` (0, or every
 * one with `nodelay`). limit_conn counts the requests of a key being
 * served at once (each HTTP/2 stream is one), refusing past N.
 * Both run once a request, after its location is found and before the
 * access rules; a level with its own limit_req (limit_conn) inherits
 * none of the outer level's.
 */

#ifndef GN_CORE_LIMIT_H_INCLUDED
#define GN_CORE_LIMIT_H_INCLUDED

#include "gn_config.h"

#include "feature.h"


struct gn_http_request_s;

/* A zone's counters, at the start of its shared memory, added to
 * without the table's lock. */
typedef struct {
    uint64_t          passed;      /* at once */
    uint64_t          delayed;     /* limit_req: passed after a wait */
    uint64_t          rejected;
} gn_limit_stats_t;

typedef struct gn_limit_zone_s  gn_limit_zone_t;

/* The "limit" feature's part of a level (feature.h). */
typedef struct {
    gn_array_t       *zones;       /* main: of gn_limit_zone_t * */
    gn_array_t       *reqs;        /* of gn_limit_req_t; NULL: inherit */
    gn_array_t       *conns;       /* of gn_limit_conn_t; NULL: inherit */
    gn_int_t          req_status;
    gn_int_t          conn_status;
    gn_uint_t         req_log_level;
    gn_uint_t         conn_log_level;
} gn_limit_conf_t;

#define gn_limit_conf(lc)                                                     \
    ((gn_limit_conf_t *) (lc)->conf[GN_FEATURE_LIMIT])

/* The registry's "limit". */
extern const gn_feature_t  gn_limit_feature;

/*
 * Child, once per request, when its location is found: r's location's
 * limits. GN_OK: go on; GN_BUSY: limit_req asks r to wait *delay ms
 * first, then to call this again (which goes on with the rest); a
 * status (>= 400): refused; GN_ERROR (memory). A counted limit_conn
 * is given back when r's pool goes.
 */
gn_int_t gn_limit_check(struct gn_http_request_s *r, gn_msec_t *delay);

/* Zone `index` of the running cycle, in the order of the configuration:
 * GN_OK with its name, kind (1: limit_conn) and a copy of its counters,
 * GN_DECLINED past the last. Any process. */
gn_int_t gn_limit_zone_stats(gn_uint_t index, gn_str_t *name,
    gn_uint_t *conn, gn_limit_stats_t *st);

#endif /* GN_CORE_LIMIT_H_INCLUDED */
