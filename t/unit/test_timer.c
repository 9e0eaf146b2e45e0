/*
 * timer.c: the timer heap (deadline order, deletion, lazily re-filed
 * and re-keyed timers).
 */

#include "gn_config.h"

#include "timer.h"

#include "../tap.h"


static int  fired[8];
static int  nfired;


static void
on_timer(gn_timer_t *t)
{
    fired[nfired++] = (int) (intptr_t) t->data;
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


int
main(void)
{
    test_timers();

    return done_testing();
}
