/*
 * Pool-backed growable arrays. Growth copies into a new allocation; the old
 * one stays in the pool until it is reset.
 */

#include "gn_config.h"

#include "array.h"


gn_int_t
gn_array_init(gn_array_t *a, gn_pool_t *p, gn_uint_t n, size_t size)
{
    a->nelts = 0;
    a->size = size;
    a->nalloc = n;
    a->pool = p;

    a->elts = gn_palloc(p, n * size);
    return a->elts == NULL ? GN_ERROR : GN_OK;
}


gn_array_t *
gn_array_create(gn_pool_t *p, gn_uint_t n, size_t size)
{
    gn_array_t  *a;

    a = gn_palloc(p, sizeof(gn_array_t));
    if (a == NULL) {
        return NULL;
    }

    if (gn_array_init(a, p, n ? n : 1, size) != GN_OK) {
        return NULL;
    }

    return a;
}


void *
gn_array_push(gn_array_t *a)
{
    void  *new;

    if (a->nelts == a->nalloc) {
        new = gn_palloc(a->pool, 2 * a->nalloc * a->size);
        if (new == NULL) {
            return NULL;
        }

        memcpy(new, a->elts, a->nelts * a->size);
        a->elts = new;
        a->nalloc *= 2;
    }

    return (u_char *) a->elts + a->size * a->nelts++;
}
