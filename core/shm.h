/*
 * Shared memory zones: MAP_SHARED mappings made by the master before
 * fork, so every child sees them at the same address.
 */

#ifndef GN_CORE_SHM_H_INCLUDED
#define GN_CORE_SHM_H_INCLUDED

#include "gn_config.h"

struct gn_log_s;


/* A zone shared by the cycles that use it (a reload with an unchanged
 * size keeps it). Master only. Backed by a memfd, so that a binary
 * upgrade can pass it to the new master (GANNET_ZONES): an `inherited`
 * zone holds what the old master's children left in it, and they may
 * still be using it. */
typedef struct gn_shm_zone_s {
    u_char     *addr;
    size_t      size;
    gn_uint_t   refs;
    int         fd;             /* the memfd; -1: anonymous */
    unsigned    inherited:1;
    char        name[32];
} gn_shm_zone_t;

/* Maps the zone `name` of `size` bytes with one reference: the one a
 * binary upgrade passed under that name and size if there is one (not
 * taken before), else a new one, zero-filled. NULL (logged) on
 * failure. */
gn_shm_zone_t *gn_shm_zone_get(size_t size, const char *name,
    struct gn_log_s *log);

/* Drops a reference; unmaps the master's mapping at zero (children keep
 * theirs until they exit). */
void gn_shm_zone_put(gn_shm_zone_t *zone);

/* At start: takes note of the zones GANNET_ZONES passes
 * ("name:size:fd,..."), removes the variable. */
void gn_shm_inherit(struct gn_log_s *log);

/* After the first cycle is open: unmaps the passed zones it did not
 * take. */
void gn_shm_inherited_close(void);

/* In a new child: closes the zones' memfds, which only the master
 * passes on (the mappings stay); a child's descriptors are for its
 * connections. */
void gn_shm_child(void);

/* In the process that execs the new master: the live zones' memfds
 * from descriptor `first` on (not close-on-exec), described in
 * GANNET_ZONES. GN_ERROR when that fails. */
gn_int_t gn_shm_pass(int first);

/* At start, before any gn_shm_zone_get() of the name: the passed zone
 * `name` of `size` bytes mapped read-only for what the old master's
 * processes go on writing there (taken: gn_shm_zone_get() makes a new
 * one); NULL when none was passed or mapping it failed. */
void *gn_shm_map_passed(const char *name, size_t size);

#endif /* GN_CORE_SHM_H_INCLUDED */
