/*
 * Pools: bump allocation from blocks, malloc() for large requests.
 */

#include "gn_config.h"

#include "pool.h"


static void *gn_pool_alloc_block(gn_pool_t *pool, size_t size, int align);
static void *gn_pool_alloc_large(gn_pool_t *pool, size_t size);


gn_pool_t *
gn_pool_create(size_t size)
{
    gn_pool_t  *pool;

    size = gn_max(size, sizeof(gn_pool_t) + sizeof(gn_pool_block_t) + 64);

    pool = malloc(size);
    if (pool == NULL) {
        return NULL;
    }

    pool->first = (gn_pool_block_t *) ((u_char *) pool + sizeof(gn_pool_t));
    pool->first->last = (u_char *) pool->first + sizeof(gn_pool_block_t);
    pool->first->end = (u_char *) pool + size;
    pool->first->next = NULL;
    pool->current = pool->first;
    pool->large = NULL;
    pool->cleanup = NULL;
    pool->size = size;
    pool->max = size / 2;
    pool->free_next = NULL;

    return pool;
}


static void
gn_pool_run_cleanups(gn_pool_t *pool)
{
    gn_pool_cleanup_t  *c;

    for (c = pool->cleanup; c != NULL; c = c->next) {
        if (c->handler != NULL) {
            c->handler(c->data);
        }
    }

    pool->cleanup = NULL;
}


static void
gn_pool_free_large(gn_pool_t *pool)
{
    gn_pool_large_t  *l, *next;

    for (l = pool->large; l != NULL; l = next) {
        next = l->next;
        free(l);
    }

    pool->large = NULL;
}


void
gn_pool_destroy(gn_pool_t *pool)
{
    gn_pool_block_t  *b, *next;

    if (pool == NULL) {
        return;
    }

    gn_pool_run_cleanups(pool);
    gn_pool_free_large(pool);

    for (b = pool->first->next; b != NULL; b = next) {
        next = b->next;
        free(b);
    }

    free(pool);
}


void
gn_pool_reset(gn_pool_t *pool)
{
    gn_pool_block_t  *b, *next;

    gn_pool_run_cleanups(pool);
    gn_pool_free_large(pool);

    for (b = pool->first->next; b != NULL; b = next) {
        next = b->next;
        free(b);
    }

    pool->first->next = NULL;
    pool->first->last = (u_char *) pool->first + sizeof(gn_pool_block_t);
    pool->current = pool->first;
}


static void *
gn_pool_alloc(gn_pool_t *pool, size_t size, int align)
{
    u_char           *m;
    gn_pool_block_t  *b;

    if (size > pool->max) {
        return gn_pool_alloc_large(pool, size);
    }

    for (b = pool->current; b != NULL; b = b->next) {
        m = b->last;
        if (align) {
            m = gn_align_ptr(m, GN_ALIGNMENT);
        }

        if ((size_t) (b->end - m) >= size) {
            b->last = m + size;
            return m;
        }
    }

    return gn_pool_alloc_block(pool, size, align);
}


static void *
gn_pool_alloc_block(gn_pool_t *pool, size_t size, int align)
{
    u_char           *m;
    gn_pool_block_t  *b, *last;

    b = malloc(pool->size);
    if (b == NULL) {
        return NULL;
    }

    b->end = (u_char *) b + pool->size;
    b->next = NULL;

    m = (u_char *) b + sizeof(gn_pool_block_t);
    if (align) {
        m = gn_align_ptr(m, GN_ALIGNMENT);
    }
    b->last = m + size;

    for (last = pool->current; last->next != NULL; last = last->next) {
        /* void */
    }
    last->next = b;

    /* A block that could not serve a request is nearly full: move on. */
    if ((size_t) (pool->current->end - pool->current->last) < 64) {
        pool->current = pool->current->next;
    }

    return m;
}


static void *
gn_pool_alloc_large(gn_pool_t *pool, size_t size)
{
    gn_pool_large_t  *l;

    if (size > SIZE_MAX - sizeof(gn_pool_large_t) - GN_ALIGNMENT) {
        return NULL;
    }

    l = malloc(gn_align(sizeof(gn_pool_large_t), 16) + size);
    if (l == NULL) {
        return NULL;
    }

    l->next = pool->large;
    pool->large = l;

    return (u_char *) l + gn_align(sizeof(gn_pool_large_t), 16);
}


void *
gn_palloc(gn_pool_t *pool, size_t size)
{
    return gn_pool_alloc(pool, size, 1);
}


void *
gn_pnalloc(gn_pool_t *pool, size_t size)
{
    return gn_pool_alloc(pool, size, 0);
}


void *
gn_pcalloc(gn_pool_t *pool, size_t size)
{
    void  *p;

    p = gn_pool_alloc(pool, size, 1);
    if (p != NULL) {
        memset(p, 0, size);
    }

    return p;
}


gn_pool_cleanup_t *
gn_pool_cleanup_add(gn_pool_t *pool, size_t size)
{
    gn_pool_cleanup_t  *c;

    c = gn_palloc(pool, sizeof(gn_pool_cleanup_t));
    if (c == NULL) {
        return NULL;
    }

    if (size > 0) {
        c->data = gn_palloc(pool, size);
        if (c->data == NULL) {
            return NULL;
        }

    } else {
        c->data = NULL;
    }

    c->handler = NULL;
    c->next = pool->cleanup;
    pool->cleanup = c;

    return c;
}
