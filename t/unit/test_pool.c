/*
 * pool.c and pool.h: pools (allocation, cleanups in order, reset) and
 * the free lists of connection buffers and pools.
 */

#include "gn_config.h"

#include "pool.h"

#include "../tap.h"


static int  cleanup_order[4];
static int  cleanup_n;


static void
record_cleanup(void *data)
{
    cleanup_order[cleanup_n++] = *(int *) data;
}


static void
test_free_list(void)
{
    u_char  *head = NULL, *a, *b;

    a = malloc(64);
    b = malloc(64);
    ok(gn_free_list_pop(&head) == NULL, "free list: empty pops NULL");
    gn_free_list_push(&head, a);
    gn_free_list_push(&head, b);
    ok(gn_free_list_pop(&head) == b, "free list: last in, first out");
    ok(gn_free_list_pop(&head) == a, "free list: then the one before");
    ok(gn_free_list_pop(&head) == NULL && head == NULL,
       "free list: empty again");
    free(a);
    free(b);
}


static void
test_pool(void)
{
    gn_pool_t          *pool;
    gn_pool_cleanup_t  *c;
    u_char             *p, *big;
    int                 i;

    pool = gn_pool_create(1024);
    ok(pool != NULL, "pool created");

    for (i = 0; i < 100; i++) {
        p = gn_palloc(pool, (size_t) (i % 13) + 1);
        if (((uintptr_t) p & (GN_ALIGNMENT - 1)) != 0) {
            break;
        }
        memset(p, 0xab, (size_t) (i % 13) + 1);
    }
    is_int(i, 100, "palloc is aligned across blocks");

    big = gn_palloc(pool, 100000);
    ok(big != NULL, "large allocation");
    memset(big, 1, 100000);

    for (i = 0; i < 3; i++) {
        c = gn_pool_cleanup_add(pool, sizeof(int));
        *(int *) c->data = i;
        c->handler = record_cleanup;
    }

    gn_pool_reset(pool);
    is_int(cleanup_n, 3, "reset ran the cleanups");
    ok(cleanup_order[0] == 2 && cleanup_order[1] == 1
       && cleanup_order[2] == 0, "cleanups run LIFO");
    ok(pool->first->next == NULL && pool->large == NULL,
       "reset keeps only the first block");

    p = gn_pcalloc(pool, 64);
    for (i = 0; i < 64 && p[i] == 0; i++) { /* void */ }
    is_int(i, 64, "pcalloc zeroes");

    gn_pool_destroy(pool);
}


int
main(void)
{
    test_pool();
    test_free_list();

    return done_testing();
}
