/*
 * Shared memory zones: anonymous MAP_SHARED mappings made by the master
 * before fork, so every child sees them at the same address.
 */

#ifndef GN_CORE_SHM_H_INCLUDED
#define GN_CORE_SHM_H_INCLUDED

#include "gn_config.h"

struct gn_log_s;


typedef struct {
    u_char     *addr;
    size_t      size;
    gn_str_t    name;
} gn_shm_t;


/* A zone shared by the cycles that use it (a reload with an unchanged
 * size keeps it). Master only. */
typedef struct {
    u_char     *addr;
    size_t      size;
    gn_uint_t   refs;
} gn_shm_zone_t;

/* Maps a new zone with one reference; NULL (logged) on failure. */
gn_shm_zone_t *gn_shm_zone_get(size_t size, const char *name,
    struct gn_log_s *log);

/* Drops a reference; unmaps the master's mapping at zero (children keep
 * theirs until they exit). */
void gn_shm_zone_put(gn_shm_zone_t *zone);

/* Master only, before fork. Zero-filled. Returns GN_ERROR (logged). */
gn_int_t gn_shm_alloc(gn_shm_t *shm);

#endif /* GN_CORE_SHM_H_INCLUDED */
