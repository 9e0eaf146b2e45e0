/*
 * Unit tests for the small pure pieces: pools, strings and number
 * parsers, the grow-a-buffer helper, the timer heap.
 */

#include "gn_config.h"

#include "pool.h"
#include "str.h"
#include "array.h"
#include "timer.h"
#include "listen.h"

#include <arpa/inet.h>
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
test_strlow(void)
{
    u_char  buf[16];
    u_char  in[] = "MiXeD.Example-1";

    ok(gn_strlow(buf, (u_char *) "Ab.C:9Z", 7) == buf + 7,
       "gn_strlow: returns the end");
    is_str(buf, 7, "ab.c:9z", "gn_strlow: ASCII letters lowered, the rest kept");
    (void) gn_strlow(in, in, sizeof(in) - 1);
    is_str(in, sizeof(in) - 1, "mixed.example-1", "gn_strlow: in place");
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


static void
test_numbers(void)
{
    gn_str_t   s;
    gn_msec_t  ms;

    is_int(gn_atoi((u_char *) "12345", 5), 12345, "atoi");
    is_int(gn_atoi((u_char *) "", 0), GN_ERROR, "atoi empty");
    is_int(gn_atoi((u_char *) "12a", 3), GN_ERROR, "atoi non-digit");
    is_int(gn_atoi((u_char *) "-1", 2), GN_ERROR, "atoi sign");
    is_int(gn_atoi((u_char *) "9223372036854775807", 19), INTPTR_MAX,
           "atoi max");
    is_int(gn_atoi((u_char *) "9223372036854775808", 19), GN_ERROR,
           "atoi overflow");
    is_int(gn_hextoi((u_char *) "fF10", 4), 0xff10, "hextoi");
    is_int(gn_hextoi((u_char *) "10000000000000000", 17), GN_ERROR,
           "hextoi overflow");

    gn_str_set(&s, "8m");
    is_int(gn_parse_size(&s), 8 * 1024 * 1024, "size 8m");
    gn_str_set(&s, "16K");
    is_int(gn_parse_size(&s), 16384, "size 16K");
    gn_str_set(&s, "1x");
    is_int(gn_parse_size(&s), GN_ERROR, "size bad suffix");
    gn_str_set(&s, "99999999999999999g");
    is_int(gn_parse_size(&s), GN_ERROR, "size overflow");

    gn_str_set(&s, "30s");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 30000, "msec 30s");
    gn_str_set(&s, "1m30s");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 90000, "msec 1m30s");
    gn_str_set(&s, "500ms");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 500, "msec 500ms");
    gn_str_set(&s, "75");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 75000, "bare = seconds");
    gn_str_set(&s, "5q");
    is_int(gn_parse_msec(&s, &ms), GN_ERROR, "msec bad unit");
    gn_str_set(&s, "s");
    is_int(gn_parse_msec(&s, &ms), GN_ERROR, "msec no number");
}


static int  fired[8];
static int  nfired;


static void
on_timer(gn_timer_t *t)
{
    fired[nfired++] = (int) (intptr_t) t->data;
}


static void
test_reserve(void)
{
    u_char  *buf = NULL, *before;
    size_t   cap = 0;

    is_int(gn_str_reserve(&buf, &cap, 10, 4096), GN_OK, "reserve: first");
    ok(buf != NULL && cap == 4096, "reserve: at least `min` (%zu)", cap);
    memcpy(buf, "0123456789", 10);

    before = buf;
    is_int(gn_str_reserve(&buf, &cap, 4096, 4096), GN_OK, "reserve: fits");
    ok(buf == before && cap == 4096, "reserve: no realloc when it fits");

    is_int(gn_str_reserve(&buf, &cap, 4097, 4096), GN_OK, "reserve: grows");
    is_int((gn_int_t) cap, 8192, "reserve: doubles");
    is_int(gn_str_reserve(&buf, &cap, 70000, 4096), GN_OK,
           "reserve: a big step");
    is_int((gn_int_t) cap, 131072, "reserve: doubles until it holds them");
    is_str(buf, 10, "0123456789", "reserve: the bytes are kept");
    free(buf);

    buf = NULL;
    cap = 0;
    is_int(gn_str_reserve(&buf, &cap, 3, 0), GN_OK, "reserve: min 0");
    ok(buf != NULL && cap >= 3, "reserve: min 0 still makes room (%zu)",
       cap);
    free(buf);
}


static void
test_timers(void)
{
    gn_timer_t  t[5];
    int         i;

    gn_time_update();
    ok(gn_timer_heap_init(2) == GN_OK, "heap init");

    for (i = 0; i < 5; i++) {
        gn_timer_init_node(&t[i], on_timer, (void *) (intptr_t) i);
    }

    gn_timer_set(&t[0], 50);
    gn_timer_set(&t[1], 10);
    gn_timer_set(&t[2], 30);
    gn_timer_set(&t[3], 20);
    gn_timer_set(&t[4], 40);
    is_int(gn_timer_count(), 5, "five timers (heap grew)");

    gn_timer_del(&t[2]);
    gn_timer_set(&t[3], 1000);          /* later: lazily re-filed */
    gn_timer_set(&t[0], 5);             /* earlier: re-keyed */

    gn_current_msec += 100;
    gn_timer_expire();

    is_int(nfired, 3, "three expired");
    ok(fired[0] == 0 && fired[1] == 1 && fired[2] == 4,
       "in deadline order, deleted and extended ones skipped");
    ok(gn_timer_is_set(&t[3]), "extended timer still pending");

    gn_current_msec += 1000;
    gn_timer_expire();
    is_int(nfired, 4, "extended timer fires at its new deadline");
    is_int(gn_timer_next(), -1, "no timers left");
}


/* gn_sockaddr_text's own IPv4 formatter against inet_ntop's text */
static void
test_addr_text(void)
{
    static const char  *v4[] = { "0.0.0.0", "127.0.0.1", "10.9.99.100",
                                 "255.255.255.255", "1.20.199.250" };
    struct sockaddr_in  sin;
    struct sockaddr_in6 sin6;
    char                buf[INET6_ADDRSTRLEN], want[INET6_ADDRSTRLEN];
    size_t              i, n;
    uint32_t            a;

    for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        (void) inet_pton(AF_INET, v4[i], &sin.sin_addr);
        n = gn_sockaddr_text((struct sockaddr *) &sin, buf, sizeof(buf));
        is_str(buf, n, v4[i], "IPv4 %s", v4[i]);
        is_int((long) strlen(buf), (long) n, "IPv4 %s: NUL-terminated",
               v4[i]);
    }

    /* a sweep of octet values against inet_ntop */
    for (a = 0; a < 256; a += 7) {
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(a << 24 | (255 - a) << 16 | a / 3 << 8
                                    | (a * 37 & 0xff));
        (void) inet_ntop(AF_INET, &sin.sin_addr, want, sizeof(want));
        n = gn_sockaddr_text((struct sockaddr *) &sin, buf, sizeof(buf));
        if (n != strlen(want) || memcmp(buf, want, n + 1) != 0) {
            break;
        }
    }
    ok(a >= 256, "IPv4 sweep matches inet_ntop (stopped at %u)", a);

    memset(&sin6, 0, sizeof(sin6));
    sin6.sin6_family = AF_INET6;
    (void) inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr);
    n = gn_sockaddr_text((struct sockaddr *) &sin6, buf, sizeof(buf));
    is_str(buf, n, "2001:db8::1", "IPv6 through inet_ntop");
}


int
main(void)
{
    test_pool();
    test_free_list();
    test_strlow();
    test_numbers();
    test_reserve();
    test_timers();
    test_addr_text();

    return done_testing();
}
