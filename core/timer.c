/*
 * Cached time and the timer heap.
 */

#include "gn_config.h"

#include "timer.h"


volatile gn_msec_t  gn_current_msec;
time_t              gn_current_sec;
gn_str_t            gn_http_date;
gn_str_t            gn_log_time_local;
gn_str_t            gn_log_time_iso;

static u_char       gn_http_date_buf[sizeof("Mon, 28 Sep 1970 06:00:00 GMT")];
static u_char       gn_log_local_buf[sizeof("28/Sep/1970:12:00:00 +0600")];
static u_char       gn_log_iso_buf[sizeof("1970-09-28T12:00:00+06:00")];

static gn_timer_t **gn_heap;
static gn_uint_t    gn_heap_n;
static gn_uint_t    gn_heap_cap;


void
gn_time_update(void)
{
    struct timespec  ts;
    struct tm        tm;
    time_t           sec;
    long             off;
    char             sign;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    gn_current_msec = (gn_msec_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;

    sec = time(NULL);
    if (sec == gn_current_sec && gn_http_date.len) {
        return;
    }
    gn_current_sec = sec;

    gn_http_date.len = gn_time_http(gn_http_date_buf, sec);
    gn_http_date.data = gn_http_date_buf;

    localtime_r(&sec, &tm);
    gn_log_time_local.len = strftime((char *) gn_log_local_buf,
                                     sizeof(gn_log_local_buf),
                                     "%d/%b/%Y:%H:%M:%S %z", &tm);
    gn_log_time_local.data = gn_log_local_buf;

    off = tm.tm_gmtoff / 60;
    sign = off < 0 ? '-' : '+';
    off = off < 0 ? -off : off;
    gn_log_time_iso.len = strftime((char *) gn_log_iso_buf,
                                   sizeof(gn_log_iso_buf),
                                   "%Y-%m-%dT%H:%M:%S", &tm);
    gn_log_time_iso.len += snprintf((char *) gn_log_iso_buf
                                    + gn_log_time_iso.len,
                                    sizeof(gn_log_iso_buf)
                                    - gn_log_time_iso.len,
                                    "%c%02ld:%02ld", sign, off / 60, off % 60);
    gn_log_time_iso.data = gn_log_iso_buf;
}


size_t
gn_time_http(u_char *buf, time_t t)
{
    struct tm  tm;

    gmtime_r(&t, &tm);
    return strftime((char *) buf, GN_HTTP_TIME_LEN + 1,
                    "%a, %d %b %Y %H:%M:%S GMT", &tm);
}


void
gn_timer_init_node(gn_timer_t *t, gn_timer_handler_pt h, void *data)
{
    t->key = 0;
    t->deadline = 0;
    t->index = GN_TIMER_NONE;
    t->handler = h;
    t->data = data;
}


gn_int_t
gn_timer_heap_init(gn_uint_t capacity)
{
    gn_heap_cap = gn_max(capacity, 64);
    gn_heap = malloc(gn_heap_cap * sizeof(gn_timer_t *));
    gn_heap_n = 0;

    return gn_heap == NULL ? GN_ERROR : GN_OK;
}


static void
gn_heap_swap(gn_uint_t a, gn_uint_t b)
{
    gn_timer_t  *t;

    t = gn_heap[a];
    gn_heap[a] = gn_heap[b];
    gn_heap[b] = t;
    gn_heap[a]->index = a;
    gn_heap[b]->index = b;
}


static void
gn_heap_up(gn_uint_t i)
{
    gn_uint_t  parent;

    while (i > 0) {
        parent = (i - 1) / 2;
        if (gn_heap[parent]->key <= gn_heap[i]->key) {
            break;
        }
        gn_heap_swap(i, parent);
        i = parent;
    }
}


static void
gn_heap_down(gn_uint_t i)
{
    gn_uint_t  l, r, m;

    for ( ;; ) {
        l = 2 * i + 1;
        r = l + 1;
        m = i;

        if (l < gn_heap_n && gn_heap[l]->key < gn_heap[m]->key) {
            m = l;
        }
        if (r < gn_heap_n && gn_heap[r]->key < gn_heap[m]->key) {
            m = r;
        }
        if (m == i) {
            return;
        }

        gn_heap_swap(i, m);
        i = m;
    }
}


static gn_int_t
gn_heap_insert(gn_timer_t *t)
{
    gn_timer_t  **h;

    if (gn_heap_n == gn_heap_cap) {
        h = realloc(gn_heap, 2 * gn_heap_cap * sizeof(gn_timer_t *));
        if (h == NULL) {
            return GN_ERROR;
        }
        gn_heap = h;
        gn_heap_cap *= 2;
    }

    t->key = t->deadline;
    t->index = gn_heap_n;
    gn_heap[gn_heap_n++] = t;
    gn_heap_up(t->index);

    return GN_OK;
}


void
gn_timer_del(gn_timer_t *t)
{
    gn_uint_t  i;

    if (t->index == GN_TIMER_NONE) {
        return;
    }

    i = t->index;
    t->index = GN_TIMER_NONE;
    gn_heap_n--;

    if (i == gn_heap_n) {
        return;
    }

    gn_heap[i] = gn_heap[gn_heap_n];
    gn_heap[i]->index = i;
    gn_heap_up(i);
    gn_heap_down(gn_heap[i]->index);
}


void
gn_timer_set(gn_timer_t *t, gn_msec_t after)
{
    t->deadline = gn_current_msec + after;

    if (t->index != GN_TIMER_NONE) {
        if (t->deadline >= t->key) {
            return;                      /* lazily re-filed at expiry */
        }
        gn_timer_del(t);
    }

    if (gn_heap_insert(t) != GN_OK) {
        /* Out of memory: fire at the next expiry pass rather than never.
         * The handler sees an expired deadline and times out. */
        t->deadline = 0;
    }
}


int
gn_timer_next(void)
{
    gn_msec_t  key;

    if (gn_heap_n == 0) {
        return -1;
    }

    key = gn_heap[0]->key;
    if (key <= gn_current_msec) {
        return 0;
    }

    return (int) gn_min(key - gn_current_msec, 60000);
}


void
gn_timer_expire(void)
{
    gn_timer_t  *t;

    while (gn_heap_n > 0 && gn_heap[0]->key <= gn_current_msec) {
        t = gn_heap[0];
        gn_timer_del(t);

        if (t->deadline > gn_current_msec) {
            (void) gn_heap_insert(t);    /* extended since it was filed */
            continue;
        }

        t->handler(t);
    }
}


gn_uint_t
gn_timer_count(void)
{
    return gn_heap_n;
}
