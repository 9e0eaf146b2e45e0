/*
 * The TLS session cache shared by all children: a fixed-size table in a
 * MAP_SHARED zone made by the master before fork, holding TLS 1.2 session
 * IDs and their serialised sessions for GnuTLS's db store / retrieve /
 * remove callbacks (TLS 1.3 resumes by tickets only and never gets here).
 * The same table, through gn_scache_update(), holds the counters of the
 * limit_req and limit_conn zones (limit.c).
 *
 * Pure layer: no logging, no GnuTLS calls; callers pass bytes. One
 * process-shared robust mutex guards the table; a child that dies holding
 * it leaves EOWNERDEAD for the next locker, which makes the mutex
 * consistent again and clears the table (its lists may be half-updated),
 * counting it in `recovered`.
 *
 * Layout of the zone (all offsets, no pointers: the zone is mapped at the
 * same address everywhere, but offsets keep it position-independent):
 * header | bucket heads (uint32) | fixed-size entries. Each entry holds
 * a key of up to GN_SCACHE_KEY_MAX bytes and a value of up to the slot's
 * data size; expiry time; links for the hash chain and the LRU list.
 * A full table evicts its least recently stored entry.
 */

#ifndef GN_CORE_TLS_SCACHE_H_INCLUDED
#define GN_CORE_TLS_SCACHE_H_INCLUDED

#include "gn_config.h"


#define GN_SCACHE_KEY_MAX    64        /* context id (8) + session id (<=32) */

typedef struct gn_scache_s  gn_scache_t;    /* lives in the zone */

typedef struct {
    uint64_t    entries;        /* capacity */
    uint64_t    used;
    uint64_t    stores;
    uint64_t    hits;
    uint64_t    misses;
    uint64_t    expired;        /* found but too old (counted as misses too) */
    uint64_t    evictions;      /* a live entry dropped to make room */
    uint64_t    removes;
    uint64_t    too_large;      /* values that do not fit a slot */
    uint64_t    recovered;      /* lock owner died: table cleared */
} gn_scache_stats_t;


/* The zone size needed for `entries` entries of up to `data_max` bytes
 * each. */
size_t gn_scache_size(gn_uint_t entries, size_t data_max);

/* The number of entries a zone of `size` bytes holds (0 if too small). */
gn_uint_t gn_scache_entries_for(size_t size, size_t data_max);

/* Formats a zone (MAP_SHARED, zero-filled or reused). Master only, before
 * fork. Returns the cache or NULL (with err set) if size is too small or
 * the mutex cannot be made process-shared and robust. */
gn_scache_t *gn_scache_init(void *zone, size_t size, size_t data_max,
    char *err, size_t errlen);

/* Stores (replacing an entry with the same key). `now` and `timeout` in
 * seconds. Returns GN_OK, or GN_DECLINED when the value is larger than a
 * slot or the key longer than GN_SCACHE_KEY_MAX, or GN_ERROR when the
 * lock cannot be taken. */
gn_int_t gn_scache_store(gn_scache_t *sc, const u_char *key, size_t klen,
    const u_char *data, size_t dlen, time_t now, time_t timeout);

/* Under the cache's lock, update(data, fresh, arg) reads and changes the
 * value of key in place (data_max bytes; fresh: it was absent or
 * expired, and is zeroed): read-modify-write for counters that every
 * child shares (limit_req, limit_conn). An absent key gets an entry
 * first (the least recently stored is dropped when the table is full).
 * What update returns is returned: GN_OK keeps the entry, now the most
 * recently stored, alive for `timeout` s more; GN_DONE removes it;
 * anything else leaves it as it was. GN_DECLINED for a bad key,
 * GN_ERROR when the lock cannot be taken (update is not called). Must
 * not block or call back into the cache. */
typedef gn_int_t (*gn_scache_update_pt)(u_char *data, gn_uint_t fresh,
    void *arg);

gn_int_t gn_scache_update(gn_scache_t *sc, const u_char *key, size_t klen,
    time_t now, time_t timeout, gn_scache_update_pt update, void *arg);

/* Copies the value into buf (buflen >= data_max). Returns its length,
 * or GN_DECLINED on a miss (absent or expired; an expired entry is
 * removed), or GN_ERROR when the lock cannot be taken. */
ssize_t gn_scache_retrieve(gn_scache_t *sc, const u_char *key, size_t klen,
    u_char *buf, size_t buflen, time_t now);

/* Returns GN_OK if the key was there, GN_DECLINED otherwise. */
gn_int_t gn_scache_remove(gn_scache_t *sc, const u_char *key, size_t klen);

/* A consistent snapshot of the counters. */
void gn_scache_stats(gn_scache_t *sc, gn_scache_stats_t *st);

/* Whether gn_scache_init() would keep what the zone holds (a cache of
 * this layout and geometry), rather than format it. */
int gn_scache_compatible(void *zone, size_t size, size_t data_max);

size_t gn_scache_data_max(gn_scache_t *sc);

#endif /* GN_CORE_TLS_SCACHE_H_INCLUDED */
