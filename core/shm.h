/*
 * Shared memory zones: anonymous MAP_SHARED mappings made by the master
 * before fork, so every child sees them at the same address.
 */

#ifndef GN_CORE_SHM_H_INCLUDED
#define GN_CORE_SHM_H_INCLUDED

#include "gn_config.h"


typedef struct {
    u_char     *addr;
    size_t      size;
    gn_str_t    name;
} gn_shm_t;


/* Master only, before fork. Zero-filled. Returns GN_ERROR (logged). */
gn_int_t gn_shm_alloc(gn_shm_t *shm);
void gn_shm_free(gn_shm_t *shm);

#endif /* GN_CORE_SHM_H_INCLUDED */
