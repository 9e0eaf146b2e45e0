/*
 * Growable arrays allocated from a pool.
 */

#ifndef GN_CORE_ARRAY_H_INCLUDED
#define GN_CORE_ARRAY_H_INCLUDED

#include "gn_config.h"

#include "pool.h"


typedef struct {
    void        *elts;
    gn_uint_t    nelts;
    size_t       size;
    gn_uint_t    nalloc;
    gn_pool_t   *pool;
} gn_array_t;


/* NULL when out of memory. */
gn_array_t *gn_array_create(gn_pool_t *p, gn_uint_t n, size_t size);
gn_int_t gn_array_init(gn_array_t *a, gn_pool_t *p, gn_uint_t n, size_t size);

/* Returns a pointer to a new, uninitialised element, or NULL. */
void *gn_array_push(gn_array_t *a);

#endif /* GN_CORE_ARRAY_H_INCLUDED */
