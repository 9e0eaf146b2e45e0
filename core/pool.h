/*
 * Memory pools: one per cycle (configuration lifetime) and one per
 * connection (reset between requests). Nothing allocated from a pool is
 * freed on its own; external resources get a cleanup handler, run in LIFO
 * order by gn_pool_reset() and gn_pool_destroy().
 */

#ifndef GN_CORE_POOL_H_INCLUDED
#define GN_CORE_POOL_H_INCLUDED

#include "gn_config.h"


typedef void (*gn_pool_cleanup_pt)(void *data);

typedef struct gn_pool_cleanup_s  gn_pool_cleanup_t;
typedef struct gn_pool_large_s    gn_pool_large_t;
typedef struct gn_pool_block_s    gn_pool_block_t;
typedef struct gn_pool_s          gn_pool_t;

struct gn_pool_cleanup_s {
    gn_pool_cleanup_pt   handler;
    void                *data;
    gn_pool_cleanup_t   *next;
};

struct gn_pool_large_s {
    gn_pool_large_t     *next;
};

struct gn_pool_block_s {
    u_char              *last;
    u_char              *end;
    gn_pool_block_t     *next;
};

struct gn_pool_s {
    gn_pool_block_t     *current;   /* block allocations are served from */
    gn_pool_block_t     *first;     /* embedded block, never freed */
    gn_pool_large_t     *large;     /* allocations above max, malloc()ed */
    gn_pool_cleanup_t   *cleanup;
    size_t               size;      /* block size */
    size_t               max;       /* larger requests go to ->large */
    gn_pool_t           *free_next; /* owner's free list of whole pools */
};


/* Creates a pool whose blocks are `size` bytes (including the header).
 * Returns NULL when out of memory. */
gn_pool_t *gn_pool_create(size_t size);
void gn_pool_destroy(gn_pool_t *pool);

/* Runs the cleanups, frees large allocations and extra blocks, and keeps
 * the first block for reuse: what a connection does between requests. */
void gn_pool_reset(gn_pool_t *pool);

void *gn_palloc(gn_pool_t *pool, size_t size);    /* aligned */
void *gn_pnalloc(gn_pool_t *pool, size_t size);   /* unaligned (strings) */
void *gn_pcalloc(gn_pool_t *pool, size_t size);   /* aligned, zeroed */

/* Adds a cleanup; `size` > 0 also allocates that much for ->data.
 * Returns NULL when out of memory. */
gn_pool_cleanup_t *gn_pool_cleanup_add(gn_pool_t *pool, size_t size);

/* A free list of malloc()ed buffers of one size, linked through their
 * first bytes (each holds at least a pointer): the head, or NULL. */
static inline u_char *
gn_free_list_pop(u_char **head)
{
    u_char  *b = *head;

    if (b != NULL) {
        memcpy(head, b, sizeof(u_char *));
    }
    return b;
}

static inline void
gn_free_list_push(u_char **head, u_char *b)
{
    memcpy(b, head, sizeof(u_char *));
    *head = b;
}

#endif /* GN_CORE_POOL_H_INCLUDED */
