/*
 * Consistent hashing of keys onto a few servers (the memcached tier of
 * the TLS session cache): each server owns GN_CHASH_POINTS points of a
 * 32-bit ring, placed by the hash of its name and the point's number; a
 * key belongs to the first point at or after its own hash. Adding or
 * removing one of n servers moves about 1/n of the keys, and only keys
 * to or from that server. A server of weight w has w times the points
 * (upstream `hash ... consistent`; the memcached tier's are equal).
 *
 * Pure layer: no I/O, no logging; the ring lives in a pool.
 */

#ifndef GN_CORE_CHASH_H_INCLUDED
#define GN_CORE_CHASH_H_INCLUDED

#include "gn_config.h"

#include "pool.h"


#define GN_CHASH_POINTS   160

typedef struct {
    uint32_t    hash;
    uint32_t    server;             /* index into the caller's list */
} gn_chash_point_t;

typedef struct {
    gn_chash_point_t  *points;      /* sorted by hash */
    gn_uint_t          npoints;
    gn_uint_t          nservers;
} gn_chash_t;


/* The hash of bytes that the ring uses (FNV-1a 64, then a finaliser that
 * spreads near-identical names, folded to 32 bits). */
uint32_t gn_chash_hash(const u_char *p, size_t len);

/* Builds the ring of n (>= 1) servers named names[0..n-1]; GN_ERROR when
 * out of memory. */
gn_int_t gn_chash_init(gn_chash_t *ch, gn_pool_t *pool,
    const gn_str_t *names, gn_uint_t n);

/* The same with weights[i] (>= 1) times the points for server i;
 * weights NULL: all 1. */
gn_int_t gn_chash_init_weighted(gn_chash_t *ch, gn_pool_t *pool,
    const gn_str_t *names, const gn_uint_t *weights, gn_uint_t n);

/* The index into ch->points of the first point at or after hash h (the
 * ring wraps): its server owns h, the next points' servers follow. */
gn_uint_t gn_chash_first(const gn_chash_t *ch, uint32_t h);

/* The index of the server that owns key. */
gn_uint_t gn_chash_pick(const gn_chash_t *ch, const u_char *key,
    size_t len);

#endif /* GN_CORE_CHASH_H_INCLUDED */
