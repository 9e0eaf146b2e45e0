/*
 * Time and timers of a child's event loop.
 *
 * Timers sit in a binary min-heap. Pushing a deadline later (the common
 * case: a connection that makes progress) only writes the new deadline:
 * the heap keeps the old key, and when that key expires the timer is
 * re-filed at its real deadline. Only an earlier deadline costs a heap
 * operation. One process, no locking.
 */

#ifndef GN_CORE_TIMER_H_INCLUDED
#define GN_CORE_TIMER_H_INCLUDED

#include "gn_config.h"


typedef struct gn_timer_s  gn_timer_t;
typedef void (*gn_timer_handler_pt)(gn_timer_t *t);

struct gn_timer_s {
    gn_msec_t             key;        /* what the heap is ordered by */
    gn_msec_t             deadline;   /* the real expiry */
    gn_uint_t             index;      /* in the heap, or GN_TIMER_NONE */
    gn_timer_handler_pt   handler;
    void                 *data;
};

#define GN_TIMER_NONE   ((gn_uint_t) -1)


extern volatile gn_msec_t  gn_current_msec;   /* monotonic */
extern time_t              gn_current_sec;    /* wall clock */

/* The cached "Date:" value and log times, refreshed once a second. */
extern gn_str_t            gn_http_date;
extern gn_str_t            gn_log_time_local; /* 30/Nov/2026:14:05:01 +0000 */
extern gn_str_t            gn_log_time_iso;   /* 2026-11-30T14:05:01+00:00 */

void gn_time_update(void);

/* t as an IMF-fixdate (RFC 9110 5.6.7) into buf, which has room for
 * GN_HTTP_TIME_LEN + 1 bytes; its length. Any process. */
#define GN_HTTP_TIME_LEN   (sizeof("Mon, 28 Sep 1970 06:00:00 GMT") - 1)
size_t gn_time_http(u_char *buf, time_t t);

void gn_timer_init_node(gn_timer_t *t, gn_timer_handler_pt h, void *data);
gn_int_t gn_timer_heap_init(gn_uint_t capacity);
void gn_timer_set(gn_timer_t *t, gn_msec_t after);
void gn_timer_del(gn_timer_t *t);
#define gn_timer_is_set(t)   ((t)->index != GN_TIMER_NONE)

/* Milliseconds until the next timer (for epoll_wait), or -1 if none. */
int gn_timer_next(void);

/* Runs the handlers of every expired timer. */
void gn_timer_expire(void);

/* Number of timers set. */
gn_uint_t gn_timer_count(void);

#endif /* GN_CORE_TIMER_H_INCLUDED */
