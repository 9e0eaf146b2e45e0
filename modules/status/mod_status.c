/*
 * mod_status: the scoreboard as a page.
 *
 *     load_module /usr/local/lib/gannet/mod_status.so;
 *     location = /status {
 *         handler status;
 *         allow 127.0.0.1;            # the core access rules, as for
 *         allow ::1;                  # any location: without them the
 *         deny all;                   # page is open to every client
 *         status_refresh 5s;          # the page's JSON fetch; 0: none
 *     }
 *     status_sample_interval 10s;    # main only; 0: off, else 1s .. 1h
 *
 * GET /status                     HTML: totals, one row per child, the TLS
 *                                 session cache, SVG charts of the last 60
 *                                 samples drawn by an inline script from
 *                                 the JSON in the page, which then fetches
 *                                 ?format=json every status_refresh and
 *                                 updates in place (no external resource)
 * GET /status?format=json         application/json, the shape below
 * GET /status?format=prometheus   text/plain; version=0.0.4
 *
 * JSON shape (stable: members are only ever added):
 *
 *   { "version": "gannet/x.y.z", "module_version": "1.0",
 *     "time": unix, "started": unix, "uptime": s, "master_pid": n,
 *     "generation": n, "children_configured": n,
 *     "children": [ { "slot", "pid", "state" ("starting" | "running" |
 *         "draining" | "unknown"), "generation", "started", "uptime",
 *         "connections", "accepted", "requests", "bytes_in", "bytes_out",
 *         "responses": { "1xx" .. "5xx" },
 *         "tls": { "full", "resumed", "failed" },
 *         "h1_requests", "h2_requests",
 *         "http2": { "connections", "connections_open", "streams_open",
 *             "limits": { "refused", "glitches", "flood", "header_list",
 *                 "timeout" }, "client_resets" } } ],
 *     "totals": { "children", "children_exited", "connections",
 *         "accepted", "requests",
 *         "bytes_in", "bytes_out", "responses": {..}, "tls": {..},
 *         "h1_requests", "h2_requests", "http2": {..} },
 *     "tls_session_cache": { "enabled", "entries", "used", "stores",
 *         "hits", "misses", "evictions" },
 *     "tls_session_memcached": { "enabled", "lookups", "hits",
 *         "misses", "timeouts", "skipped", "stores", "store_failures",
 *         "errors": { "connect", "protocol", "stall" }, "rtt_us",
 *         "servers": [ { "address", "state" ("idle" | "connecting" |
 *             "up" | "down"), "lookups", "hits", "misses", "timeouts",
 *             "skipped", "stores", "store_failures", "errors", "rtt_us"
 *             } ] },
 *     "tls_ticket_key": { "source" ("generated" | "file"), "id", "age",
 *         "loaded", "rotation_period", "tickets_issued",
 *         "resumed_by_ticket", "resumed_by_id" },
 *     "history_interval": s (0: sampling off), "history_interval_ms",
 *     "history_window": samples (60),
 *     "history": [ { "t" (unix time with a ms fraction), "requests",
 *         "bytes_in", "bytes_out", "connections", "responses_5xx",
 *         "children" } ] }
 *
 * Totals count from the master's start and never go back: the children
 * alive now plus the children reaped so far (the master folds a child's
 * counters into the scoreboard when it reaps it; child_stats(-1)), so
 * reloads, respawns and crashes keep them counting; "children_exited"
 * is how many were folded. The per-child rows are each child's own.
 * History samples hold the totals at time t, oldest first; rates are
 * differences of neighbouring samples.
 *
 * Prometheus: the totals as gannet_requests_total, ... without labels,
 * each child's as gannet_child_requests_total{slot,pid}, ...
 *
 * Protocols (ABI 1.3, proto_stats): requests by protocol, the HTTP/2
 * connections and streams, and each HTTP/2 limit's trips, as
 * "h1_requests", "h2_requests" and "http2" in the JSON,
 * gannet_requests_by_protocol_total{protocol}, gannet_http2_* in
 * Prometheus and a "Protocols" section of the page. An older server has
 * no proto_stats: they are absent, the rest is as it was.
 *
 * The memcached tier of the TLS session cache (ABI 1.4,
 * memcached_stats): per server and summed, "tls_session_memcached" in
 * the JSON (rtt_us: the mean lookup round trip), gannet_tls_memcached_*
 * in Prometheus (with a server label), a line per server on the page;
 * the first GN_STATUS_MEMC servers. The session-ticket key (1.4,
 * tls_ticket_stats): where it comes from, an id (a hash, never the
 * key), its age, and the tickets issued and resumptions by ticket and
 * by session id, as "tls_ticket_key", gannet_tls_ticket_* and a line.
 *
 * The reverse proxy's upstream servers (ABI 1.6, upstream_stats): one
 * row each (the first GN_STATUS_UPSTREAMS), "upstreams" in the JSON
 * ([ { "upstream", "server", "state" ("up" | "failed" | "down"),
 * "weight", "backup", "requests", "responses": { "1xx" .. "5xx" },
 * "failures": { "connect", "timeout", "invalid", "cut" }, "disabled",
 * "active", "idle", "response_time_ms": { "1", "5", "25", "100", "500",
 * "2500", "10000", "inf" } } ]), gannet_upstream_* in Prometheus
 * (labels upstream and server; the times as a histogram) and a line per
 * server on the page.
 *
 * The limit zones (ABI 1.7, limit_stats): "limit_zones" in the JSON
 * ([ { "zone", "kind" ("req" | "conn"), "passed", "delayed",
 * "rejected" } ]), gannet_limit_requests_total{zone,kind,result} in
 * Prometheus and a line per zone on the page (the first
 * GN_STATUS_LIMITS).
 *
 * History: init_master maps a ring of GN_STATUS_SAMPLES samples
 * (MAP_SHARED, so every child sees the same one; a reload keeps it) and
 * fills the whole window with the totals of the start; each child arms a
 * timer aligned to the sample interval and the first child to wake for a
 * sample period claims it with a compare-and-swap and records the totals.
 * (The module ABI gives no timer to the master, so the children sample.)
 *
 * Escaping: the HTML escapes the one string it prints (the version); the
 * JSON escapes <, > and & in strings, so the page can carry it in a
 * <script> element; the page's script sets text with textContent only.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>

#include <gannet/module.h>


#define GN_STATUS_VERSION    "1.0"
#define GN_STATUS_SAMPLES    60
#define GN_STATUS_MAGIC      0x47535452494e4731ULL
#define GN_STATUS_BUSY       ((uint64_t) 1 << 63)
#define GN_STATUS_SKEW       25           /* ms after the period starts */
#define GN_STATUS_CHUNK      16384

#define GN_STATUS_HTML       0
#define GN_STATUS_JSON       1
#define GN_STATUS_PROM       2

#define GN_STATUS_CHART_W    600
#define GN_STATUS_CHART_H    80


typedef struct {
    int64_t              refresh;      /* status_refresh, ms */
    int64_t              interval;     /* status_sample_interval, ms */
} gn_status_conf_t;


/* One sample. `period` is the sample period number + 1 (0: empty); while
 * a writer fills the other fields it carries GN_STATUS_BUSY. */
typedef struct {
    uint64_t             period;
    uint64_t             msec;         /* unix time of the sample, ms */
    uint64_t             requests;
    uint64_t             bytes_in;
    uint64_t             bytes_out;
    uint64_t             connections;
    uint64_t             errors;       /* 5xx responses */
    uint64_t             children;
} gn_status_sample_t;

typedef struct {
    uint64_t             magic;
    uint64_t             interval;     /* ms */
    gn_status_sample_t   samples[GN_STATUS_SAMPLES];
} gn_status_ring_t;


#define GN_STATUS_MEMC   32      /* memcached servers shown */
#define GN_STATUS_UPSTREAMS  256 /* upstream servers shown */
#define GN_STATUS_LIMITS     64  /* limit zones shown */


/* Response body in request-memory chunks handed to api->write. */
typedef struct {
    const gn_api_t      *api;
    gn_request_t        *r;
    char                *buf;
    size_t               len;
    size_t               size;
    int                  failed;
} gn_status_out_t;

typedef struct {
    gn_server_stats_t    server;
    int                  have_server;
    gn_child_stats_t    *child;
    int                  nchild;
    gn_child_stats_t     total;
    int                  have_proto;   /* the server has proto_stats */
    gn_proto_stats_t    *proto;        /* child[i]'s */
    gn_proto_stats_t     proto_total;
    int                  have_memc;    /* the server has memcached_stats */
    int                  nmemc;
    gn_memcached_stats_t memc[GN_STATUS_MEMC];
    gn_memcached_stats_t memc_total;
    int                  nup;          /* upstream_stats rows (1.6) */
    gn_upstream_server_stats_t *up;
    int                  nlim;         /* limit_stats rows (1.7) */
    gn_limit_zone_stats_t lim[GN_STATUS_LIMITS];
    int                  have_key;     /* tls_ticket_stats answered */
    gn_tls_ticket_stats_t key;
    uint64_t             now;          /* unix seconds */
    uint64_t             interval;     /* ms; 0: no history */
    uint64_t             exited;       /* children retired so far */
    gn_status_sample_t   hist[GN_STATUS_SAMPLES];
    int                  nhist;
    char                 version[64];  /* SERVER_SOFTWARE: server_tokens */
} gn_status_snap_t;


static const gn_module_t  gn_status_module;

static gn_status_ring_t  *gn_status_ring;
static uint64_t           gn_status_interval;
static gn_mtimer_t       *gn_status_timer;
static int                gn_status_exiting;

static const char  *gn_status_states[] = {
    "unknown", "starting", "running", "draining"
};


/* ---- time --------------------------------------------------------------- */

static uint64_t
gn_status_now_ms(void)
{
    struct timeval  tv;

    gettimeofday(&tv, NULL);
    return (uint64_t) tv.tv_sec * 1000 + (uint64_t) tv.tv_usec / 1000;
}


/* ---- history ------------------------------------------------------------ */

static void
gn_status_add(gn_child_stats_t *t, const gn_child_stats_t *c)
{
    int  i;

    t->connections += c->connections;
    t->accepted += c->accepted;
    t->requests += c->requests;
    t->bytes_in += c->bytes_in;
    t->bytes_out += c->bytes_out;
    for (i = 0; i < 6; i++) {
        t->status[i] += c->status[i];
    }
    t->tls_full += c->tls_full;
    t->tls_resumed += c->tls_resumed;
    t->tls_failed += c->tls_failed;
}


/* The counters (not size and slot) of *c added to *t. */
static void
gn_status_proto_add(gn_proto_stats_t *t, const gn_proto_stats_t *c)
{
    t->h1_requests += c->h1_requests;
    t->h2_requests += c->h2_requests;
    t->h2_connections += c->h2_connections;
    t->h2_refused += c->h2_refused;
    t->h2_glitch_limit += c->h2_glitch_limit;
    t->h2_flood += c->h2_flood;
    t->h2_header_limit += c->h2_header_limit;
    t->h2_timeouts += c->h2_timeouts;
    t->h2_client_resets += c->h2_client_resets;
    t->h2_open += c->h2_open;
    t->h2_streams += c->h2_streams;
}


static void
gn_status_memc_add(gn_memcached_stats_t *t, const gn_memcached_stats_t *m)
{
    t->lookups += m->lookups;
    t->hits += m->hits;
    t->misses += m->misses;
    t->timeouts += m->timeouts;
    t->skipped += m->skipped;
    t->stores += m->stores;
    t->store_failures += m->store_failures;
    t->err_connect += m->err_connect;
    t->err_protocol += m->err_protocol;
    t->err_stall += m->err_stall;
    t->rtt_us += m->rtt_us;
    t->rtt_n += m->rtt_n;
}


/* proto_stats (1.3) of a slot into a zeroed *out, where the server has
 * it; 0 otherwise (an older server, or the slot is not live). */
static int
gn_status_proto(const gn_api_t *api, int slot, gn_proto_stats_t *out)
{
    memset(out, 0, sizeof(gn_proto_stats_t));
    out->slot = slot;

    return GN_API_HAS(api, proto_stats)
           && api->proto_stats(slot, out, sizeof(gn_proto_stats_t)) == 1;
}


/* Sums the live children into *t (slot -1), and their proto_stats into
 * *pt when pt is not NULL (each child's in pout[] too). Returns how many
 * live. */
static int
gn_status_live(const gn_api_t *api, gn_child_stats_t *out, int max,
    gn_child_stats_t *t, gn_proto_stats_t *pout, gn_proto_stats_t *pt)
{
    gn_child_stats_t  cs;
    gn_proto_stats_t  ps;
    int               slot, nslots, n;

    memset(t, 0, sizeof(gn_child_stats_t));
    t->slot = -1;
    if (pt != NULL) {
        memset(pt, 0, sizeof(gn_proto_stats_t));
        pt->slot = -1;
    }

    n = 0;
    nslots = api->max_slots();

    for (slot = 0; slot < nslots; slot++) {
        memset(&cs, 0, sizeof(gn_child_stats_t));
        if (api->child_stats(slot, &cs) != 1) {
            continue;
        }

        gn_status_add(t, &cs);

        /* a child gone between the two calls: its row reads 0 */
        if (pt != NULL) {
            (void) gn_status_proto(api, slot, &ps);
            gn_status_proto_add(pt, &ps);
        }

        if (out != NULL && n < max) {
            out[n] = cs;
            if (pout != NULL && pt != NULL) {
                pout[n] = ps;
            }
        }
        n++;
    }

    return n;
}


/*
 * The server's totals since the master started: the live children plus
 * what the children reaped so far counted (child_stats(-1); an older
 * server has no such row and the totals are the live ones). The master
 * moves a reaped child from the live slots to the retired row under a
 * count of the children retired (its `generation`): a sum taken between
 * two equal counts has every child exactly once. *exited gets that
 * count. With pt, the proto_stats too: their retired row (slot -1) is
 * read between the same two counts, so it is consistent with them.
 * Returns how many children are live.
 */
static int
gn_status_collect(const gn_api_t *api, gn_child_stats_t *out, int max,
    gn_child_stats_t *t, uint64_t *exited, gn_proto_stats_t *pout,
    gn_proto_stats_t *pt)
{
    gn_child_stats_t  r1, r2;
    gn_proto_stats_t  p1, p2;
    int               n, try, have;

    for (try = 0; try < 8; try++) {
        memset(&r1, 0, sizeof(gn_child_stats_t));
        have = api->child_stats(-1, &r1) == 1;
        if (pt != NULL) {
            (void) gn_status_proto(api, -1, &p1);
        }

        n = gn_status_live(api, out, max, t, pout, pt);

        if (!have) {
            r1.generation = 0;
            break;
        }

        memset(&r2, 0, sizeof(gn_child_stats_t));
        if (api->child_stats(-1, &r2) == 1
            && r2.generation == r1.generation)
        {
            gn_status_add(t, &r1);
            if (pt != NULL) {
                gn_status_proto_add(pt, &p1);
            }
            break;
        }

        /* a child was retired meanwhile: counted in neither or in both */
        if (try == 7) {
            gn_status_add(t, &r2);
            if (pt != NULL) {
                (void) gn_status_proto(api, -1, &p2);
                gn_status_proto_add(pt, &p2);
            }
            r1.generation = r2.generation;
        }
    }

    if (exited != NULL) {
        *exited = r1.generation;
    }

    return n;
}


/* Child, from the timer: records this period's sample unless another
 * child already did (or is doing) it. */
static void
gn_status_sample(const gn_api_t *api)
{
    uint64_t             now, period, old;
    gn_child_stats_t     t;
    gn_status_sample_t  *s;
    int                  n;

    now = gn_status_now_ms();
    period = now / gn_status_interval + 1;
    s = &gn_status_ring->samples[period % GN_STATUS_SAMPLES];

    old = __atomic_load_n(&s->period, __ATOMIC_ACQUIRE);
    if ((old & ~GN_STATUS_BUSY) >= period) {
        return;
    }

    if (!__atomic_compare_exchange_n(&s->period, &old,
                                     period | GN_STATUS_BUSY, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    {
        return;
    }

    n = gn_status_collect(api, NULL, 0, &t, NULL, NULL, NULL);

    __atomic_store_n(&s->msec, now, __ATOMIC_RELAXED);
    __atomic_store_n(&s->requests, t.requests, __ATOMIC_RELAXED);
    __atomic_store_n(&s->bytes_in, t.bytes_in, __ATOMIC_RELAXED);
    __atomic_store_n(&s->bytes_out, t.bytes_out, __ATOMIC_RELAXED);
    __atomic_store_n(&s->connections, t.connections, __ATOMIC_RELAXED);
    __atomic_store_n(&s->errors, t.status[5], __ATOMIC_RELAXED);
    __atomic_store_n(&s->children, (uint64_t) n, __ATOMIC_RELAXED);

    __atomic_store_n(&s->period, period, __ATOMIC_RELEASE);
}


static void gn_status_tick(const gn_api_t *api, gn_mtimer_t *t, void *arg);


/* Child: the next tick just after the next period starts, so that all
 * children wake together and the first one takes the sample. */
static void
gn_status_arm(const gn_api_t *api)
{
    uint64_t  now, delay;

    now = gn_status_now_ms();
    delay = gn_status_interval - now % gn_status_interval + GN_STATUS_SKEW;

    gn_status_timer = api->timer_add(NULL, delay, gn_status_tick, NULL);
    if (gn_status_timer == NULL) {
        api->log(NULL, GN_LOG_ERR, "status: timer_add(%" PRIu64 ") failed",
                 delay);
    }
}


static void
gn_status_tick(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    gn_child_stats_t  cs;

    (void) t;
    (void) arg;

    gn_status_timer = NULL;

    if (gn_status_exiting) {
        return;
    }

    gn_status_sample(api);

    /* a draining child takes no more samples: its timer must not keep
     * it alive */
    memset(&cs, 0, sizeof(gn_child_stats_t));
    if (api->child_stats(api->child_slot(), &cs) == 1
        && cs.state == GN_CHILD_DRAINING)
    {
        return;
    }

    gn_status_arm(api);
}


/* The samples of the last GN_STATUS_SAMPLES periods, oldest first. A
 * sample being written (or torn by a concurrent writer) is left out. */
static int
gn_status_history(gn_status_sample_t *out)
{
    gn_status_sample_t   *s, c, tmp;
    uint64_t              now, first, p1, p2;
    int                   i, j, n;

    if (gn_status_ring == NULL || gn_status_interval == 0) {
        return 0;
    }

    now = gn_status_now_ms() / gn_status_interval + 1;
    first = now >= GN_STATUS_SAMPLES ? now - GN_STATUS_SAMPLES + 1 : 0;
    n = 0;

    for (i = 0; i < GN_STATUS_SAMPLES; i++) {
        s = &gn_status_ring->samples[i];

        p1 = __atomic_load_n(&s->period, __ATOMIC_ACQUIRE);
        if (p1 == 0 || (p1 & GN_STATUS_BUSY) || p1 < first || p1 > now) {
            continue;
        }

        c.period = p1;
        c.msec = __atomic_load_n(&s->msec, __ATOMIC_RELAXED);
        c.requests = __atomic_load_n(&s->requests, __ATOMIC_RELAXED);
        c.bytes_in = __atomic_load_n(&s->bytes_in, __ATOMIC_RELAXED);
        c.bytes_out = __atomic_load_n(&s->bytes_out, __ATOMIC_RELAXED);
        c.connections = __atomic_load_n(&s->connections, __ATOMIC_RELAXED);
        c.errors = __atomic_load_n(&s->errors, __ATOMIC_RELAXED);
        c.children = __atomic_load_n(&s->children, __ATOMIC_RELAXED);

        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        p2 = __atomic_load_n(&s->period, __ATOMIC_RELAXED);
        if (p1 != p2) {
            continue;
        }

        out[n++] = c;
    }

    /* insertion sort by period: at most 60 */
    for (i = 1; i < n; i++) {
        tmp = out[i];
        for (j = i; j > 0 && out[j - 1].period > tmp.period; j--) {
            out[j] = out[j - 1];
        }
        out[j] = tmp;
    }

    return n;
}


/* ---- output ------------------------------------------------------------- */

static void
gn_status_flush(gn_status_out_t *o)
{
    if (o->len > 0 && !o->failed) {
        if (o->api->write(o->r, o->buf, o->len) != GN_OK) {
            o->failed = 1;
        }
    }

    if (o->buf != NULL) {
        o->buf += o->len;
        o->size -= o->len;
        o->len = 0;
    }
}


static void
gn_status_reserve(gn_status_out_t *o, size_t need)
{
    size_t  size;

    gn_status_flush(o);

    if (o->size >= need) {
        return;
    }

    size = need > GN_STATUS_CHUNK ? need : GN_STATUS_CHUNK;
    o->buf = o->api->request_alloc(o->r, size);
    o->size = o->buf ? size : 0;
    if (o->buf == NULL) {
        o->failed = 1;
    }
}


static void gn_status_printf(gn_status_out_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
gn_status_printf(gn_status_out_t *o, const char *fmt, ...)
{
    va_list  ap;
    int      n;

    if (o->failed) {
        return;
    }

    va_start(ap, fmt);
    n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);

    if (n < 0) {
        o->failed = 1;
        return;
    }

    if ((size_t) n < o->size - o->len) {
        o->len += (size_t) n;
        return;
    }

    gn_status_reserve(o, (size_t) n + 1);
    if (o->failed) {
        return;
    }

    va_start(ap, fmt);
    n = vsnprintf(o->buf, o->size, fmt, ap);
    va_end(ap);

    o->len = (size_t) n;
}


/* A JSON string (the quotes included); bytes >= 0x80 pass as they are.
 * <, > and & are escaped too, so that the JSON can sit in the page's
 * <script> element as it is. */
static void
gn_status_json_str(gn_status_out_t *o, const char *s)
{
    gn_status_printf(o, "\"");

    for ( /* void */ ; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\') {
            gn_status_printf(o, "\\%c", *s);
        } else if ((unsigned char) *s < 0x20 || *s == 0x7f || *s == '<'
                   || *s == '>' || *s == '&')
        {
            gn_status_printf(o, "\\u%04x", (unsigned char) *s);
        } else {
            gn_status_printf(o, "%c", *s);
        }
    }

    gn_status_printf(o, "\"");
}


static void
gn_status_html_str(gn_status_out_t *o, const char *s)
{
    for ( /* void */ ; *s != '\0'; s++) {
        switch (*s) {
        case '&':  gn_status_printf(o, "&amp;");  break;
        case '<':  gn_status_printf(o, "&lt;");   break;
        case '>':  gn_status_printf(o, "&gt;");   break;
        case '"':  gn_status_printf(o, "&quot;"); break;
        case '\'': gn_status_printf(o, "&#39;");  break;
        default:
            if ((unsigned char) *s >= 0x20 && *s != 0x7f) {
                gn_status_printf(o, "%c", *s);
            }
        }
    }
}


/* A Prometheus label value: backslash, quote and newline escaped. */
static void
gn_status_prom_str(gn_status_out_t *o, const char *s)
{
    for ( /* void */ ; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"') {
            gn_status_printf(o, "\\%c", *s);
        } else if (*s == '\n') {
            gn_status_printf(o, "\\n");
        } else {
            gn_status_printf(o, "%c", *s);
        }
    }
}


static const char *
gn_status_state(uint32_t state)
{
    return state < sizeof(gn_status_states) / sizeof(gn_status_states[0])
           ? gn_status_states[state] : gn_status_states[0];
}


static uint64_t
gn_status_age(uint64_t now, uint64_t started)
{
    return (started != 0 && now > started) ? now - started : 0;
}


/* ---- JSON ---------------------------------------------------------------- */

static void
gn_status_json_counters(gn_status_out_t *o, const gn_child_stats_t *c)
{
    gn_status_printf(o,
        "\"connections\":%" PRIu64 ",\"accepted\":%" PRIu64 ","
        "\"requests\":%" PRIu64 ",\"bytes_in\":%" PRIu64 ","
        "\"bytes_out\":%" PRIu64 ","
        "\"responses\":{\"1xx\":%" PRIu64 ",\"2xx\":%" PRIu64
        ",\"3xx\":%" PRIu64 ",\"4xx\":%" PRIu64 ",\"5xx\":%" PRIu64 "},"
        "\"tls\":{\"full\":%" PRIu64 ",\"resumed\":%" PRIu64
        ",\"failed\":%" PRIu64 "}",
        c->connections, c->accepted, c->requests, c->bytes_in, c->bytes_out,
        c->status[1], c->status[2], c->status[3], c->status[4], c->status[5],
        c->tls_full, c->tls_resumed, c->tls_failed);
}


/* Members of a child's row or of the totals, after the others. */
static void
gn_status_json_proto(gn_status_out_t *o, const gn_proto_stats_t *p)
{
    gn_status_printf(o,
        ",\"h1_requests\":%" PRIu64 ",\"h2_requests\":%" PRIu64 ","
        "\"http2\":{\"connections\":%" PRIu64 ",\"connections_open\":%"
        PRIu64 ",\"streams_open\":%" PRIu64 ","
        "\"limits\":{\"refused\":%" PRIu64 ",\"glitches\":%" PRIu64
        ",\"flood\":%" PRIu64 ",\"header_list\":%" PRIu64
        ",\"timeout\":%" PRIu64 "},\"client_resets\":%" PRIu64 "}",
        p->h1_requests, p->h2_requests, p->h2_connections, p->h2_open,
        p->h2_streams, p->h2_refused, p->h2_glitch_limit, p->h2_flood,
        p->h2_header_limit, p->h2_timeouts, p->h2_client_resets);
}


static const char *
gn_status_memc_state(uint32_t state)
{
    static const char  *names[] = { "idle", "connecting", "up", "down" };

    return state < 4 ? names[state] : "unknown";
}


static uint64_t
gn_status_memc_rtt(const gn_memcached_stats_t *m)
{
    return m->rtt_n ? m->rtt_us / m->rtt_n : 0;
}


static const char *
gn_status_key_source(uint32_t source)
{
    return source == GN_TLS_KEY_FILE ? "file"
           : source == GN_TLS_KEY_GENERATED ? "generated" : "none";
}


/* "tls_ticket_key" (1.4). */
static void
gn_status_json_key(gn_status_out_t *o, gn_status_snap_t *s)
{
    const gn_tls_ticket_stats_t  *k = &s->key;

    gn_status_printf(o, "\n\"tls_ticket_key\":{\"source\":\"%s\","
        "\"id\":", gn_status_key_source(k->source));
    gn_status_json_str(o, k->id);
    gn_status_printf(o, ",\"age\":%" PRIu64 ",\"loaded\":%" PRIu64
        ",\"rotation_period\":%" PRIu64 ",\"tickets_issued\":%" PRIu64
        ",\"resumed_by_ticket\":%" PRIu64 ",\"resumed_by_id\":%" PRIu64
        "},", gn_status_age(s->now, k->created), k->loaded, k->period,
        k->tickets_issued, k->resumed_ticket, k->resumed_id);
}


static const char *
gn_status_up_state(uint32_t state)
{
    static const char  *names[] = { "up", "failed", "down" };

    return state < 3 ? names[state] : "unknown";
}


static const char  *gn_status_up_le[8] = {
    "1", "5", "25", "100", "500", "2500", "10000", "inf"
};

static const char  *gn_status_up_le_s[8] = {
    "0.001", "0.005", "0.025", "0.1", "0.5", "2.5", "10", "+Inf"
};


/* "upstreams" (1.6): a row per server. */
static void
gn_status_json_upstreams(gn_status_out_t *o, gn_status_snap_t *s)
{
    const gn_upstream_server_stats_t  *u;
    int                                i, k;

    gn_status_printf(o, "\n\"upstreams\":[");
    for (i = 0; i < s->nup; i++) {
        u = &s->up[i];
        gn_status_printf(o, "%s\n{\"upstream\":", i ? "," : "");
        gn_status_json_str(o, u->upstream);
        gn_status_printf(o, ",\"server\":");
        gn_status_json_str(o, u->server);
        gn_status_printf(o, ",\"state\":\"%s\",\"weight\":%u,\"backup\":%s,"
            "\"requests\":%" PRIu64 ",\"responses\":{\"1xx\":%" PRIu64
            ",\"2xx\":%" PRIu64 ",\"3xx\":%" PRIu64 ",\"4xx\":%" PRIu64
            ",\"5xx\":%" PRIu64 "},\"failures\":{\"connect\":%" PRIu64
            ",\"timeout\":%" PRIu64 ",\"invalid\":%" PRIu64 ",\"cut\":%"
            PRIu64 "},\"disabled\":%" PRIu64 ",\"active\":%" PRId64
            ",\"idle\":%" PRId64 ",\"response_time_ms\":{",
            gn_status_up_state(u->state), (unsigned) u->weight,
            u->backup ? "true" : "false", u->requests, u->responses[1],
            u->responses[2], u->responses[3], u->responses[4],
            u->responses[5], u->fail_connect, u->fail_timeout,
            u->fail_invalid, u->fail_cut, u->disabled, u->active, u->idle);
        for (k = 0; k < 8; k++) {
            gn_status_printf(o, "%s\"%s\":%" PRIu64, k ? "," : "",
                             gn_status_up_le[k], u->time_le[k]);
        }
        gn_status_printf(o, "}}");
    }
    gn_status_printf(o, "],");
}


/* "limit_zones" (1.7): a row per zone. */
static void
gn_status_json_limits(gn_status_out_t *o, gn_status_snap_t *s)
{
    int  i;

    gn_status_printf(o, "\n\"limit_zones\":[");
    for (i = 0; i < s->nlim; i++) {
        gn_status_printf(o, "%s\n{\"zone\":", i ? "," : "");
        gn_status_json_str(o, s->lim[i].name);
        gn_status_printf(o, ",\"kind\":\"%s\",\"passed\":%" PRIu64
            ",\"delayed\":%" PRIu64 ",\"rejected\":%" PRIu64 "}",
            s->lim[i].kind == GN_LIMIT_ZONE_CONN ? "conn" : "req",
            s->lim[i].passed, s->lim[i].delayed, s->lim[i].rejected);
    }
    gn_status_printf(o, "],");
}


/* "tls_session_memcached": the sum, then each server (1.4). */
static void
gn_status_json_memc(gn_status_out_t *o, gn_status_snap_t *s)
{
    const gn_memcached_stats_t  *m = &s->memc_total;
    int                          i;

    gn_status_printf(o, "\n\"tls_session_memcached\":{\"enabled\":%s,"
        "\"lookups\":%" PRIu64 ",\"hits\":%" PRIu64 ",\"misses\":%" PRIu64
        ",\"timeouts\":%" PRIu64 ",\"skipped\":%" PRIu64 ",\"stores\":%"
        PRIu64 ",\"store_failures\":%" PRIu64 ",\"errors\":{\"connect\":%"
        PRIu64 ",\"protocol\":%" PRIu64 ",\"stall\":%" PRIu64 "},"
        "\"rtt_us\":%" PRIu64 ",\"servers\":[",
        s->nmemc ? "true" : "false", m->lookups, m->hits, m->misses,
        m->timeouts, m->skipped, m->stores, m->store_failures,
        m->err_connect, m->err_protocol, m->err_stall,
        gn_status_memc_rtt(m));

    for (i = 0; i < s->nmemc; i++) {
        m = &s->memc[i];
        gn_status_printf(o, "%s{\"address\":", i ? "," : "");
        gn_status_json_str(o, m->address);
        gn_status_printf(o, ",\"state\":\"%s\",\"lookups\":%" PRIu64
            ",\"hits\":%" PRIu64 ",\"misses\":%" PRIu64 ",\"timeouts\":%"
            PRIu64 ",\"skipped\":%" PRIu64 ",\"stores\":%" PRIu64
            ",\"store_failures\":%" PRIu64 ",\"errors\":%" PRIu64
            ",\"rtt_us\":%" PRIu64 "}",
            gn_status_memc_state(m->state), m->lookups, m->hits, m->misses,
            m->timeouts, m->skipped, m->stores, m->store_failures,
            m->err_connect + m->err_protocol + m->err_stall,
            gn_status_memc_rtt(m));
    }

    gn_status_printf(o, "]},");
}


static void
gn_status_json(const gn_api_t *api, gn_status_out_t *o, gn_status_snap_t *s)
{
    gn_server_stats_t   *sv = &s->server;
    gn_child_stats_t    *c;
    gn_status_sample_t  *h;
    int                  i;

    gn_status_printf(o, "{\"version\":");
    gn_status_json_str(o, s->version);
    gn_status_printf(o, ",\"module_version\":\"" GN_STATUS_VERSION "\","
        "\"time\":%" PRIu64 ",\"started\":%" PRIu64 ",\"uptime\":%" PRIu64
        ",\"master_pid\":%" PRId64 ",\"generation\":%" PRIu64
        ",\"children_configured\":%u,\n\"children\":[",
        s->now, sv->started, gn_status_age(s->now, sv->started),
        sv->master_pid, sv->generation, sv->children);

    for (i = 0; i < s->nchild; i++) {
        c = &s->child[i];
        gn_status_printf(o, "%s\n{\"slot\":%d,\"pid\":%" PRId64
            ",\"state\":\"%s\",\"generation\":%" PRIu64 ",\"started\":%"
            PRIu64 ",\"uptime\":%" PRIu64 ",",
            i ? "," : "", c->slot, c->pid, gn_status_state(c->state),
            c->generation, c->started, gn_status_age(s->now, c->started));
        gn_status_json_counters(o, c);
        if (s->have_proto) {
            gn_status_json_proto(o, &s->proto[i]);
        }
        gn_status_printf(o, "}");
    }

    gn_status_printf(o, "],\n\"totals\":{\"children\":%d,"
                     "\"children_exited\":%" PRIu64 ",", s->nchild,
                     s->exited);
    gn_status_json_counters(o, &s->total);
    if (s->have_proto) {
        gn_status_json_proto(o, &s->proto_total);
    }

    gn_status_printf(o, "},\n\"tls_session_cache\":{\"enabled\":%s,"
        "\"entries\":%" PRIu64 ",\"used\":%" PRIu64 ",\"stores\":%" PRIu64
        ",\"hits\":%" PRIu64 ",\"misses\":%" PRIu64 ",\"evictions\":%"
        PRIu64 "},",
        sv->tls_cache_entries ? "true" : "false", sv->tls_cache_entries,
        sv->tls_cache_used, sv->tls_cache_stores, sv->tls_cache_hits,
        sv->tls_cache_misses, sv->tls_cache_evictions);

    if (s->have_memc) {
        gn_status_json_memc(o, s);
    }
    if (s->have_key) {
        gn_status_json_key(o, s);
    }
    if (s->nup > 0) {
        gn_status_json_upstreams(o, s);
    }
    if (s->nlim > 0) {
        gn_status_json_limits(o, s);
    }

    gn_status_printf(o, "\n\"history_interval\":%" PRIu64
        ",\"history_interval_ms\":%" PRIu64 ",\"history_window\":%d,\n"
        "\"history\":[", s->interval / 1000, s->interval,
        GN_STATUS_SAMPLES);

    for (i = 0; i < s->nhist; i++) {
        h = &s->hist[i];
        gn_status_printf(o, "%s\n{\"t\":%" PRIu64 ".%03u,\"requests\":%"
            PRIu64 ",\"bytes_in\":%" PRIu64 ",\"bytes_out\":%" PRIu64
            ",\"connections\":%" PRIu64 ",\"responses_5xx\":%" PRIu64
            ",\"children\":%" PRIu64 "}",
            i ? "," : "", h->msec / 1000, (unsigned) (h->msec % 1000),
            h->requests, h->bytes_in, h->bytes_out, h->connections,
            h->errors, h->children);
    }

    gn_status_printf(o, "]}\n");
}


/* ---- Prometheus ---------------------------------------------------------- */

/* Server-wide as gannet_NAME (no labels: monotonic across reloads and
 * respawns, what rate() wants), per child as gannet_child_NAME{slot,pid}
 * (a series per process, ending with it). */
typedef struct {
    const char  *name;
    const char  *type;
    const char  *help;
    size_t       offset;          /* of a uint64_t in gn_child_stats_t */
} gn_status_metric_t;

static const gn_status_metric_t  gn_status_metrics[] = {
    { "connections", "gauge", "Connections open now.",
      offsetof(gn_child_stats_t, connections) },
    { "connections_accepted_total", "counter",
      "Connections accepted.", offsetof(gn_child_stats_t, accepted) },
    { "requests_total", "counter", "Requests answered.",
      offsetof(gn_child_stats_t, requests) },
    { "received_bytes_total", "counter", "Bytes received.",
      offsetof(gn_child_stats_t, bytes_in) },
    { "sent_bytes_total", "counter", "Bytes sent.",
      offsetof(gn_child_stats_t, bytes_out) },
    { NULL, NULL, NULL, 0 }
};


static void
gn_status_prom_head(gn_status_out_t *o, const char *name, const char *type,
    const char *help)
{
    gn_status_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
                     type);
}


/* The proto_stats metrics (1.3): rows of one name follow each other, the
 * first with the HELP and TYPE, each with its label (or none). */
typedef struct {
    const char  *name;
    const char  *type;            /* NULL: another row of the name above */
    const char  *help;
    const char  *label;           /* k="v", or NULL */
    size_t       offset;          /* of a uint64_t in gn_proto_stats_t */
} gn_status_pmetric_t;

#define gn_status_poff(m)  offsetof(gn_proto_stats_t, m)

static const gn_status_pmetric_t  gn_status_pmetrics[] = {
    { "requests_by_protocol_total", "counter",
      "Requests answered, by protocol.", "protocol=\"h1\"",
      gn_status_poff(h1_requests) },
    { "requests_by_protocol_total", NULL, NULL, "protocol=\"h2\"",
      gn_status_poff(h2_requests) },
    { "http2_connections_total", "counter", "HTTP/2 connections.", NULL,
      gn_status_poff(h2_connections) },
    { "http2_connections_open", "gauge", "HTTP/2 connections open now.",
      NULL, gn_status_poff(h2_open) },
    { "http2_streams_open", "gauge",
      "Streams open now on the HTTP/2 connections.", NULL,
      gn_status_poff(h2_streams) },
    { "http2_limit_trips_total", "counter",
      "HTTP/2 limits hit: streams refused (http2_max_concurrent_streams), "
      "connections closed for glitches (http2_max_glitches) or floods, "
      "request heads too large (431), streams timed out.",
      "limit=\"refused\"", gn_status_poff(h2_refused) },
    { "http2_limit_trips_total", NULL, NULL, "limit=\"glitches\"",
      gn_status_poff(h2_glitch_limit) },
    { "http2_limit_trips_total", NULL, NULL, "limit=\"flood\"",
      gn_status_poff(h2_flood) },
    { "http2_limit_trips_total", NULL, NULL, "limit=\"header_list\"",
      gn_status_poff(h2_header_limit) },
    { "http2_limit_trips_total", NULL, NULL, "limit=\"timeout\"",
      gn_status_poff(h2_timeouts) },
    { "http2_client_resets_total", "counter",
      "RST_STREAM frames received from clients.", NULL,
      gn_status_poff(h2_client_resets) },
    { NULL, NULL, NULL, NULL, 0 }
};


/* prefix "gannet_" for the totals (one row, no slot, pid labels),
 * "gannet_child_" for the n children's rows c[], p[]. */
static void
gn_status_prom_proto(gn_status_out_t *o, const char *prefix,
    const gn_child_stats_t *c, const gn_proto_stats_t *p, int n)
{
    const gn_status_pmetric_t  *m;
    uint64_t                    v;
    char                        name[80], who[64];
    int                         i;

    for (m = gn_status_pmetrics; m->name != NULL; m++) {
        snprintf(name, sizeof(name), "%s%s", prefix, m->name);
        if (m->type != NULL) {
            gn_status_prom_head(o, name, m->type, m->help);
        }

        for (i = 0; i < n; i++) {
            who[0] = '\0';
            if (c != NULL) {
                snprintf(who, sizeof(who), "slot=\"%d\",pid=\"%" PRId64
                         "\"%s", c[i].slot, c[i].pid, m->label ? "," : "");
            }
            memcpy(&v, (const char *) &p[i] + m->offset, sizeof(uint64_t));
            gn_status_printf(o, "%s%s%s%s%s %" PRIu64 "\n", name,
                             who[0] || m->label ? "{" : "", who,
                             m->label ? m->label : "",
                             who[0] || m->label ? "}" : "", v);
        }
    }
}


/* The class and handshake breakdowns of one row: c->slot -1 for the
 * server's totals (no slot, pid labels). */
static void
gn_status_prom_classes(gn_status_out_t *o, const gn_child_stats_t *c,
    const char *prefix, int tls)
{
    static const char  *kind[] = { "full", "resumed", "failed" };
    char                who[64];
    int                 k;

    who[0] = '\0';
    if (c->slot >= 0) {
        snprintf(who, sizeof(who), "slot=\"%d\",pid=\"%" PRId64 "\",",
                 c->slot, c->pid);
    }

    if (!tls) {
        for (k = 1; k <= 5; k++) {
            gn_status_printf(o, "%sresponses_total{%sclass=\"%dxx\"} %"
                             PRIu64 "\n", prefix, who, k, c->status[k]);
        }
        return;
    }

    for (k = 0; k < 3; k++) {
        gn_status_printf(o, "%stls_handshakes_total{%stype=\"%s\"} %" PRIu64
                         "\n", prefix, who, kind[k],
                         k == 0 ? c->tls_full
                         : k == 1 ? c->tls_resumed : c->tls_failed);
    }
}


static void
gn_status_prom_totals(gn_status_out_t *o, gn_status_snap_t *s)
{
    const gn_status_metric_t  *m;
    uint64_t                   v;
    char                       name[80];

    for (m = gn_status_metrics; m->name != NULL; m++) {
        snprintf(name, sizeof(name), "gannet_%s", m->name);
        gn_status_prom_head(o, name, m->type, m->help);
        memcpy(&v, (char *) &s->total + m->offset, sizeof(uint64_t));
        gn_status_printf(o, "%s %" PRIu64 "\n", name, v);
    }

    gn_status_prom_head(o, "gannet_responses_total", "counter",
                        "Responses by status class.");
    gn_status_prom_classes(o, &s->total, "gannet_", 0);
    gn_status_prom_head(o, "gannet_tls_handshakes_total", "counter",
                        "TLS handshakes: full, resumed, failed.");
    gn_status_prom_classes(o, &s->total, "gannet_", 1);

    gn_status_prom_head(o, "gannet_children_exited_total", "counter",
                        "Children that have exited (their counters stay "
                        "in the totals).");
    gn_status_printf(o, "gannet_children_exited_total %" PRIu64 "\n",
                     s->exited);

    if (s->have_proto) {
        gn_status_prom_proto(o, "gannet_", NULL, &s->proto_total, 1);
    }
}


static void
gn_status_prom_children(gn_status_out_t *o, gn_status_snap_t *s)
{
    const gn_status_metric_t  *m;
    gn_child_stats_t          *c;
    uint64_t                   v;
    int                        i;
    char                       name[80];

    for (m = gn_status_metrics; m->name != NULL; m++) {
        snprintf(name, sizeof(name), "gannet_child_%s", m->name);
        gn_status_prom_head(o, name, m->type, m->help);
        for (i = 0; i < s->nchild; i++) {
            c = &s->child[i];
            memcpy(&v, (char *) c + m->offset, sizeof(uint64_t));
            gn_status_printf(o, "%s{slot=\"%d\",pid=\"%" PRId64 "\"} %"
                             PRIu64 "\n", name, c->slot, c->pid, v);
        }
    }

    gn_status_prom_head(o, "gannet_child_start_time_seconds", "gauge",
                        "When the child started, unix time.");
    for (i = 0; i < s->nchild; i++) {
        c = &s->child[i];
        gn_status_printf(o, "gannet_child_start_time_seconds{slot=\"%d\","
                         "pid=\"%" PRId64 "\"} %" PRIu64 "\n", c->slot,
                         c->pid, c->started);
    }

    gn_status_prom_head(o, "gannet_child_state", "gauge",
                        "1 for the state the child is in.");
    for (i = 0; i < s->nchild; i++) {
        c = &s->child[i];
        gn_status_printf(o, "gannet_child_state{slot=\"%d\",pid=\"%" PRId64
                         "\",generation=\"%" PRIu64 "\",state=\"%s\"} 1\n",
                         c->slot, c->pid, c->generation,
                         gn_status_state(c->state));
    }

    gn_status_prom_head(o, "gannet_child_responses_total", "counter",
                        "Responses by status class, this child.");
    for (i = 0; i < s->nchild; i++) {
        gn_status_prom_classes(o, &s->child[i], "gannet_child_", 0);
    }

    gn_status_prom_head(o, "gannet_child_tls_handshakes_total", "counter",
                        "TLS handshakes, this child.");
    for (i = 0; i < s->nchild; i++) {
        gn_status_prom_classes(o, &s->child[i], "gannet_child_", 1);
    }

    if (s->have_proto) {
        gn_status_prom_proto(o, "gannet_child_", s->child, s->proto,
                             s->nchild);
    }
}


static void
gn_status_prom_key(gn_status_out_t *o, gn_status_snap_t *s)
{
    const gn_tls_ticket_stats_t  *k = &s->key;

    gn_status_prom_head(o, "gannet_tls_ticket_key_info", "gauge",
                        "The session-ticket key: its id (a hash) and "
                        "source.");
    gn_status_printf(o, "gannet_tls_ticket_key_info{id=\"");
    gn_status_prom_str(o, k->id);
    gn_status_printf(o, "\",source=\"%s\"} 1\n",
                     gn_status_key_source(k->source));
    gn_status_prom_head(o, "gannet_tls_ticket_key_age_seconds", "gauge",
                        "Since the key was written or made.");
    gn_status_printf(o, "gannet_tls_ticket_key_age_seconds %" PRIu64 "\n",
                     gn_status_age(s->now, k->created));
    gn_status_prom_head(o, "gannet_tls_tickets_issued_total", "counter",
                        "TLS 1.3 session tickets sent.");
    gn_status_printf(o, "gannet_tls_tickets_issued_total %" PRIu64 "\n",
                     k->tickets_issued);
    gn_status_prom_head(o, "gannet_tls_resumptions_total", "counter",
                        "Resumed handshakes, by what they resumed with.");
    gn_status_printf(o, "gannet_tls_resumptions_total{by=\"ticket\"} %"
                     PRIu64 "\ngannet_tls_resumptions_total"
                     "{by=\"session_id\"} %" PRIu64 "\n",
                     k->resumed_ticket, k->resumed_id);
}


/* gannet_limit_requests_total{zone,kind,result} (1.7). */
static void
gn_status_prom_limits(gn_status_out_t *o, gn_status_snap_t *s)
{
    static const char  *result[3] = { "passed", "delayed", "rejected" };
    uint64_t            v[3];
    int                 i, k;

    gn_status_prom_head(o, "gannet_limit_requests_total", "counter",
                        "Requests a limit_req or limit_conn zone let "
                        "through at once, after a wait, or refused.");
    for (i = 0; i < s->nlim; i++) {
        v[0] = s->lim[i].passed;
        v[1] = s->lim[i].delayed;
        v[2] = s->lim[i].rejected;
        for (k = 0; k < 3; k++) {
            gn_status_printf(o, "gannet_limit_requests_total{zone=\"");
            gn_status_prom_str(o, s->lim[i].name);
            gn_status_printf(o, "\",kind=\"%s\",result=\"%s\"} %" PRIu64
                             "\n", s->lim[i].kind == GN_LIMIT_ZONE_CONN
                                   ? "conn" : "req", result[k], v[k]);
        }
    }
}


/* One labelled sample per upstream server: {upstream,server[,k="v"]}. */
static void
gn_status_prom_up_row(gn_status_out_t *o, const char *name,
    const gn_upstream_server_stats_t *u, const char *label, int64_t v)
{
    gn_status_printf(o, "%s{upstream=\"", name);
    gn_status_prom_str(o, u->upstream);
    gn_status_printf(o, "\",server=\"");
    gn_status_prom_str(o, u->server);
    gn_status_printf(o, "\"%s%s} %" PRId64 "\n", label[0] ? "," : "", label,
                     v);
}


static void
gn_status_prom_upstreams(gn_status_out_t *o, gn_status_snap_t *s)
{
    static const char                 *fails[] = {
        "kind=\"connect\"", "kind=\"timeout\"", "kind=\"invalid\"",
        "kind=\"cut\""
    };
    const gn_upstream_server_stats_t  *u;
    char                               label[32];
    uint64_t                           f[4], cum;
    int                                i, k;

    gn_status_prom_head(o, "gannet_upstream_up", "gauge",
                        "1: the upstream server is not left out.");
    for (i = 0; i < s->nup; i++) {
        gn_status_prom_up_row(o, "gannet_upstream_up", &s->up[i], "",
                              s->up[i].state == GN_UPSTREAM_SERVER_UP);
    }
    gn_status_prom_head(o, "gannet_upstream_requests_total", "counter",
                        "Tries sent to the upstream server.");
    for (i = 0; i < s->nup; i++) {
        gn_status_prom_up_row(o, "gannet_upstream_requests_total", &s->up[i],
                              "", (int64_t) s->up[i].requests);
    }
    gn_status_prom_head(o, "gannet_upstream_responses_total", "counter",
                        "Its responses by status class.");
    for (i = 0; i < s->nup; i++) {
        for (k = 1; k <= 5; k++) {
            snprintf(label, sizeof(label), "class=\"%dxx\"", k);
            gn_status_prom_up_row(o, "gannet_upstream_responses_total",
                                  &s->up[i], label,
                                  (int64_t) s->up[i].responses[k]);
        }
    }
    gn_status_prom_head(o, "gannet_upstream_failures_total", "counter",
                        "Its failed tries by kind.");
    for (i = 0; i < s->nup; i++) {
        u = &s->up[i];
        f[0] = u->fail_connect;
        f[1] = u->fail_timeout;
        f[2] = u->fail_invalid;
        f[3] = u->fail_cut;
        for (k = 0; k < 4; k++) {
            gn_status_prom_up_row(o, "gannet_upstream_failures_total", u,
                                  fails[k], (int64_t) f[k]);
        }
    }
    gn_status_prom_head(o, "gannet_upstream_connections", "gauge",
                        "Its connections now, busy or idle in the pools.");
    for (i = 0; i < s->nup; i++) {
        gn_status_prom_up_row(o, "gannet_upstream_connections", &s->up[i],
                              "state=\"active\"", s->up[i].active);
        gn_status_prom_up_row(o, "gannet_upstream_connections", &s->up[i],
                              "state=\"idle\"", s->up[i].idle);
    }
    gn_status_prom_head(o, "gannet_upstream_response_seconds", "histogram",
                        "Time its tries took.");
    for (i = 0; i < s->nup; i++) {
        u = &s->up[i];
        for (k = 0, cum = 0; k < 8; k++) {
            cum += u->time_le[k];
            snprintf(label, sizeof(label), "le=\"%s\"",
                     gn_status_up_le_s[k]);
            gn_status_prom_up_row(o,
                                  "gannet_upstream_response_seconds_bucket",
                                  u, label, (int64_t) cum);
        }
        gn_status_prom_up_row(o, "gannet_upstream_response_seconds_count",
                              u, "", (int64_t) cum);
    }
}


/* One labelled sample per memcached server: {server="ADDR"[,k="v"]}. */
static void
gn_status_prom_memc_row(gn_status_out_t *o, const char *name,
    const gn_memcached_stats_t *m, const char *label, uint64_t v)
{
    gn_status_printf(o, "%s{server=\"", name);
    gn_status_prom_str(o, m->address);
    gn_status_printf(o, "\"%s%s} %" PRIu64 "\n", label[0] ? "," : "", label,
                     v);
}


static void
gn_status_prom_memc(gn_status_out_t *o, gn_status_snap_t *s)
{
    const gn_memcached_stats_t  *m;
    int                          i;

    gn_status_prom_head(o, "gannet_tls_memcached_up", "gauge",
                        "1: the memcached server answers.");
    for (i = 0; i < s->nmemc; i++) {
        gn_status_prom_memc_row(o, "gannet_tls_memcached_up", &s->memc[i],
                                "", s->memc[i].state == GN_MEMCACHED_UP);
    }

    gn_status_prom_head(o, "gannet_tls_memcached_lookups_total", "counter",
                        "TLS session lookups by result.");
    for (i = 0; i < s->nmemc; i++) {
        m = &s->memc[i];
        gn_status_prom_memc_row(o, "gannet_tls_memcached_lookups_total", m,
                                "result=\"hit\"", m->hits);
        gn_status_prom_memc_row(o, "gannet_tls_memcached_lookups_total", m,
                                "result=\"miss\"", m->misses);
        gn_status_prom_memc_row(o, "gannet_tls_memcached_lookups_total", m,
                                "result=\"timeout\"", m->timeouts);
        gn_status_prom_memc_row(o, "gannet_tls_memcached_lookups_total", m,
                                "result=\"skipped\"", m->skipped);
    }

    gn_status_prom_head(o, "gannet_tls_memcached_stores_total", "counter",
                        "TLS sessions sent to be stored, by result.");
    for (i = 0; i < s->nmemc; i++) {
        m = &s->memc[i];
        gn_status_prom_memc_row(o, "gannet_tls_memcached_stores_total", m,
                                "result=\"stored\"", m->stores);
        gn_status_prom_memc_row(o, "gannet_tls_memcached_stores_total", m,
                                "result=\"failed\"", m->store_failures);
    }

    gn_status_prom_head(o, "gannet_tls_memcached_errors_total", "counter",
                        "Times the server was found down, by cause.");
    for (i = 0; i < s->nmemc; i++) {
        m = &s->memc[i];
        gn_status_prom_memc_row(o, "gannet_tls_memcached_errors_total", m,
                                "class=\"connect\"", m->err_connect);
        gn_status_prom_memc_row(o, "gannet_tls_memcached_errors_total", m,
                                "class=\"protocol\"", m->err_protocol);
        gn_status_prom_memc_row(o, "gannet_tls_memcached_errors_total", m,
                                "class=\"stall\"", m->err_stall);
    }

    gn_status_prom_head(o, "gannet_tls_memcached_rtt_seconds", "summary",
                        "Round trips of the lookups answered.");
    for (i = 0; i < s->nmemc; i++) {
        m = &s->memc[i];
        gn_status_printf(o, "gannet_tls_memcached_rtt_seconds_sum{server=\"");
        gn_status_prom_str(o, m->address);
        gn_status_printf(o, "\"} %" PRIu64 ".%06" PRIu64 "\n",
                         m->rtt_us / 1000000, m->rtt_us % 1000000);
        gn_status_prom_memc_row(o, "gannet_tls_memcached_rtt_seconds_count",
                                m, "", m->rtt_n);
    }
}


static void
gn_status_prom(const gn_api_t *api, gn_status_out_t *o, gn_status_snap_t *s)
{
    gn_server_stats_t  *sv = &s->server;
    uint64_t            v;
    int                 i;
    static const struct {
        const char  *name;
        const char  *type;
        const char  *help;
        size_t       offset;      /* in gn_server_stats_t */
    } cache[] = {
        { "entries", "gauge", "Capacity in sessions (0: no cache).",
          offsetof(gn_server_stats_t, tls_cache_entries) },
        { "used", "gauge", "Sessions stored now.",
          offsetof(gn_server_stats_t, tls_cache_used) },
        { "stores_total", "counter", "Sessions stored.",
          offsetof(gn_server_stats_t, tls_cache_stores) },
        { "hits_total", "counter", "Lookups that found a session.",
          offsetof(gn_server_stats_t, tls_cache_hits) },
        { "misses_total", "counter", "Lookups that found none.",
          offsetof(gn_server_stats_t, tls_cache_misses) },
        { "evictions_total", "counter", "Sessions evicted to make room.",
          offsetof(gn_server_stats_t, tls_cache_evictions) },
    };

    gn_status_prom_head(o, "gannet_up", "gauge", "1: the server answers.");
    gn_status_printf(o, "gannet_up 1\n");

    gn_status_prom_head(o, "gannet_info", "gauge",
                        "Server version, as a label.");
    gn_status_printf(o, "gannet_info{version=\"");
    gn_status_prom_str(o, s->version);
    gn_status_printf(o, "\",module_version=\"" GN_STATUS_VERSION "\"} 1\n");

    gn_status_prom_head(o, "gannet_start_time_seconds", "gauge",
                        "When the master started, unix time.");
    gn_status_printf(o, "gannet_start_time_seconds %" PRIu64 "\n",
                     sv->started);
    gn_status_prom_head(o, "gannet_uptime_seconds", "gauge",
                        "Seconds since the master started.");
    gn_status_printf(o, "gannet_uptime_seconds %" PRIu64 "\n",
                     gn_status_age(s->now, sv->started));
    gn_status_prom_head(o, "gannet_generation", "gauge",
                        "Configuration generation (reloads).");
    gn_status_printf(o, "gannet_generation %" PRIu64 "\n", sv->generation);
    gn_status_prom_head(o, "gannet_children", "gauge",
                        "Children configured.");
    gn_status_printf(o, "gannet_children %u\n", sv->children);
    gn_status_prom_head(o, "gannet_children_live", "gauge",
                        "Children alive now, all generations.");
    gn_status_printf(o, "gannet_children_live %d\n", s->nchild);

    gn_status_prom_totals(o, s);
    gn_status_prom_children(o, s);

    for (i = 0; i < (int) (sizeof(cache) / sizeof(cache[0])); i++) {
        memcpy(&v, (char *) sv + cache[i].offset, sizeof(uint64_t));
        gn_status_printf(o, "# HELP gannet_tls_session_cache_%s %s\n"
                         "# TYPE gannet_tls_session_cache_%s %s\n"
                         "gannet_tls_session_cache_%s %" PRIu64 "\n",
                         cache[i].name, cache[i].help, cache[i].name,
                         cache[i].type, cache[i].name, v);
    }

    if (s->have_memc && s->nmemc > 0) {
        gn_status_prom_memc(o, s);
    }
    if (s->have_key) {
        gn_status_prom_key(o, s);
    }
    if (s->nup > 0) {
        gn_status_prom_upstreams(o, s);
    }
    if (s->nlim > 0) {
        gn_status_prom_limits(o, s);
    }
}


/* ---- HTML ---------------------------------------------------------------- */

static void
gn_status_html_bytes(gn_status_out_t *o, double v)
{
    static const char  *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int                 u;

    for (u = 0; v >= 1024 && u < 5; u++) {
        v /= 1024;
    }

    if (u == 0) {
        gn_status_printf(o, "%.0f&nbsp;B", v);
    } else {
        gn_status_printf(o, "%.1f&nbsp;%s", v, unit[u]);
    }
}


static void
gn_status_html_age(gn_status_out_t *o, uint64_t s)
{
    if (s >= 86400) {
        gn_status_printf(o, "%" PRIu64 "d&nbsp;", s / 86400);
    }

    gn_status_printf(o, "%02u:%02u:%02u", (unsigned) (s % 86400 / 3600),
                     (unsigned) (s % 3600 / 60), (unsigned) (s % 60));
}


static void
gn_status_html_row(gn_status_out_t *o, const gn_child_stats_t *c,
    uint64_t now)
{
    int  k;

    if (c->slot >= 0) {
        gn_status_printf(o, "<tr><td>%d</td><td>%" PRId64 "</td><td>%"
                         PRIu64 "</td><td class=s-%s>%s</td><td>",
                         c->slot, c->pid, c->generation,
                         gn_status_state(c->state),
                         gn_status_state(c->state));
        gn_status_html_age(o, gn_status_age(now, c->started));
        gn_status_printf(o, "</td>");
    } else {
        gn_status_printf(o, "<tr class=tot><td colspan=5>total since start"
                         "</td>");
    }

    gn_status_printf(o, "<td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%"
                     PRIu64 "</td><td>", c->connections, c->accepted,
                     c->requests);
    gn_status_html_bytes(o, (double) c->bytes_in);
    gn_status_printf(o, "</td><td>");
    gn_status_html_bytes(o, (double) c->bytes_out);
    gn_status_printf(o, "</td>");

    for (k = 1; k <= 5; k++) {
        gn_status_printf(o, "<td>%" PRIu64 "</td>", c->status[k]);
    }

    gn_status_printf(o, "<td>%" PRIu64 " / %" PRIu64 " / %" PRIu64
                     "</td></tr>\n",
                     c->tls_full, c->tls_resumed, c->tls_failed);
}


static const char  gn_status_css[] =
    "body{font:13px/1.4 system-ui,sans-serif;margin:1em;color:#222}"
    "h1{font-size:1.3em;margin:0 0 .3em}p{margin:.2em 0}"
    "h2{font-size:1.05em;margin:.8em 0 .2em}"
    "table{border-collapse:collapse;margin:.6em 0}"
    "td,th{padding:2px 7px;text-align:right;border-bottom:1px solid #ddd}"
    "th{background:#eee}tr.tot td{font-weight:bold;background:#f6f6f6}"
    ".s-running{color:#070}.s-draining{color:#a60}.s-starting{color:#06a}"
    "figure{display:inline-block;margin:.3em 1em .6em 0}"
    "figcaption{font-size:.9em;color:#555}"
    "svg text{font-size:10px;fill:#555}svg .bg{fill:#fafafa;stroke:#ccc}"
    "svg .grid{stroke:#e4e4e4}"
    "svg .ln{fill:none;stroke:#c0392b;stroke-width:1.5}"
    "#gn-updated{color:#777}";


/*
 * The page's script: draws the charts from the JSON embedded in the page
 * (the whole history window, at once), then fetches ?format=json every
 * data-refresh ms and redraws the numbers, the table and the charts in
 * place. Text goes in with textContent only; nothing from elsewhere.
 */
static const char  gn_status_js[] =
    "(function () {\n"
    "'use strict';\n"
    "var data = document.getElementById('gn-data');\n"
    "var every = +data.getAttribute('data-refresh');\n"
    "var url = location.pathname + '?format=json';\n"
    "var NS = 'http://www.w3.org/2000/svg';\n"
    "var W = 560, H = 170, L = 74, R = 12, T = 10, B = 24;\n"
    "var charts = [\n"
    "  ['requests/s', 'requests', 1, 'req/s'],\n"
    "  ['bytes sent/s', 'bytes_out', 1, 'B/s'],\n"
    "  ['bytes received/s', 'bytes_in', 1, 'B/s'],\n"
    "  ['connections open', 'connections', 0, '']\n"
    "];\n"
    "var units = ['', 'Ki', 'Mi', 'Gi', 'Ti'];\n"
    "\n"
    "function $(id) { return document.getElementById(id); }\n"
    "function pad(n) { return (n < 10 ? '0' : '') + n; }\n"
    "function hms(t) {\n"
    "  var d = new Date(t * 1000);\n"
    "  return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' +\n"
    "         pad(d.getSeconds());\n"
    "}\n"
    "function age(s) {\n"
    "  var d = Math.floor(s / 86400);\n"
    "  s %= 86400;\n"
    "  return (d ? d + 'd ' : '') + pad(Math.floor(s / 3600)) + ':' +\n"
    "         pad(Math.floor(s % 3600 / 60)) + ':' + pad(s % 60);\n"
    "}\n"
    "function trim(s) {\n"
    "  return s.indexOf('.') < 0 ? s\n"
    "         : s.replace(/0+$/, '').replace(/\\.$/, '');\n"
    "}\n"
    "function bytes(v) {\n"
    "  var u = 0;\n"
    "  while (v >= 1024 && u < 4) { v /= 1024; u++; }\n"
    "  return trim(v.toFixed(u ? 1 : 0)) + '\\u00a0' + units[u] + 'B';\n"
    "}\n"
    "function num(v, unit) {\n"
    "  var p = '';\n"
    "  if (unit === 'B/s') { return bytes(v) + '/s'; }\n"
    "  if (v >= 1e6) { v /= 1e6; p = 'M'; }\n"
    "  else if (v >= 1e4) { v /= 1e3; p = 'k'; }\n"
    "  return trim(v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)) + p +\n"
    "         (unit ? '\\u00a0' + unit : '');\n"
    "}\n"
    "/* The top of the scale and its divisions: 1, 2 or 5 times a power of\n"
    " * 10 (times a power of 1024 for bytes, so that ticks are round in KiB,\n"
    " * MiB...); a count (no unit) is never scaled below 5. */\n"
    "function scale(max, unit) {\n"
    "  var base = 1, e, f;\n"
    "  if (!unit) { max = Math.max(max, 5); }\n"
    "  if (!(max > 0)) { return [1, 5]; }\n"
    "  if (unit === 'B/s') { while (max >= 1024 * base) { base *= 1024; } }\n"
    "  e = Math.pow(10, Math.floor(Math.log(max / base) / Math.LN10 + 1e-9));\n"
    "  f = max / base / e;\n"
    "  f = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;\n"
    "  return [f * e * base, f === 2 ? 4 : 5];\n"
    "}\n"
    "function el(name, attrs, parent, text) {\n"
    "  var e = document.createElementNS(NS, name), k;\n"
    "  for (k in attrs) { e.setAttribute(k, attrs[k]); }\n"
    "  if (text !== undefined) { e.textContent = text; }\n"
    "  if (parent) { parent.appendChild(e); }\n"
    "  return e;\n"
    "}\n"
    "/* rate (field per second between neighbouring samples) or gauge */\n"
    "function series(h, field, rate) {\n"
    "  var out = [], i, dt, dv;\n"
    "  for (i = rate ? 1 : 0; i < h.length; i++) {\n"
    "    if (!rate) { out.push([h[i].t, h[i][field]]); continue; }\n"
    "    dt = h[i].t - h[i - 1].t;\n"
    "    dv = h[i][field] - h[i - 1][field];\n"
    "    if (dt > 0) { out.push([h[i].t, dv > 0 ? dv / dt : 0]); }\n"
    "  }\n"
    "  return out;\n"
    "}\n"
    "function chart(j, c) {\n"
    "  var h = j.history || [];\n"
    "  var span = j.history_window * j.history_interval_ms / 1000;\n"
    "  var pts = series(h, c[1], c[2]), t1, t0, max = 0, ymax, sc, step;\n"
    "  var i, x, y, px;\n"
    "  var fig = document.createElement('figure'), cap, svg, line = [];\n"
    "  var steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,\n"
    "               7200, 14400];\n"
    "  t1 = h.length ? h[h.length - 1].t : j.time;\n"
    "  t0 = t1 - span;\n"
    "  for (i = 0; i < pts.length; i++) { max = Math.max(max, pts[i][1]); }\n"
    "  sc = scale(max, c[3]);\n"
    "  ymax = sc[0];\n"
    "  cap = document.createElement('figcaption');\n"
    "  cap.textContent = c[0] + ': now ' +\n"
    "      num(pts.length ? pts[pts.length - 1][1] : 0, c[3]) +\n"
    "      ', max ' + num(max, c[3]);\n"
    "  fig.appendChild(cap);\n"
    "  svg = el('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H,\n"
    "                    role: 'img', 'aria-label': c[0] }, fig);\n"
    "  el('rect', { x: L, y: T, width: W - L - R, height: H - T - B,\n"
    "               'class': 'bg' }, svg);\n"
    "  for (i = 0; i <= sc[1]; i++) {\n"
    "    y = T + (H - T - B) * (1 - i / sc[1]);\n"
    "    el('line', { x1: L, x2: W - R, y1: y, y2: y, 'class': 'grid' },\n"
    "       svg);\n"
    "    el('text', { x: L - 4, y: y + 4, 'text-anchor': 'end' }, svg,\n"
    "       num(ymax * i / sc[1], c[3]));\n"
    "  }\n"
    "  for (i = 0; i < steps.length - 1 && span / steps[i] > 6; i++) { }\n"
    "  step = steps[i];\n"
    "  for (x = Math.ceil(t0 / step) * step; x <= t1; x += step) {\n"
    "    px = L + (W - L - R) * (x - t0) / span;\n"
    "    if (px > W - R - 24) { break; }\n"
    "    el('line', { x1: px, x2: px, y1: T, y2: H - B, 'class': 'grid' },\n"
    "       svg);\n"
    "    el('text', { x: px, y: H - B + 15, 'text-anchor': 'middle' }, svg,\n"
    "       hms(x));\n"
    "  }\n"
    "  for (i = 0; i < pts.length; i++) {\n"
    "    if (pts[i][0] < t0) { continue; }\n"
    "    x = L + (W - L - R) * (pts[i][0] - t0) / span;\n"
    "    y = T + (H - T - B) * (1 - pts[i][1] / ymax);\n"
    "    line.push(x.toFixed(1) + ',' + y.toFixed(1));\n"
    "  }\n"
    "  el('polyline', { points: line.join(' '), 'class': 'ln' }, svg);\n"
    "  return fig;\n"
    "}\n"
    "function cell(tr, text, cls) {\n"
    "  var td = document.createElement('td');\n"
    "  td.textContent = text;\n"
    "  if (cls) { td.className = cls; }\n"
    "  tr.appendChild(td);\n"
    "  return td;\n"
    "}\n"
    "function row(c, now) {\n"
    "  var tr = document.createElement('tr'), k, r = c.responses, t = c.tls;\n"
    "  if (c.slot === undefined) {\n"
    "    tr.className = 'tot';\n"
    "    cell(tr, 'total since start').colSpan = 5;\n"
    "  } else {\n"
    "    cell(tr, c.slot); cell(tr, c.pid); cell(tr, c.generation);\n"
    "    cell(tr, c.state, 's-' + c.state);\n"
    "    cell(tr, age(Math.max(0, now - c.started)));\n"
    "  }\n"
    "  cell(tr, c.connections); cell(tr, c.accepted); cell(tr, c.requests);\n"
    "  cell(tr, bytes(c.bytes_in)); cell(tr, bytes(c.bytes_out));\n"
    "  for (k = 1; k <= 5; k++) { cell(tr, r[k + 'xx']); }\n"
    "  cell(tr, t.full + ' / ' + t.resumed + ' / ' + t.failed);\n"
    "  return tr;\n"
    "}\n"
    "/* the Protocols section's two lines, as the server writes them */\n"
    "function protos(t) {\n"
    "  var h = t.http2, l = h.limits;\n"
    "  return ['requests: HTTP/1.x ' + t.h1_requests + ', HTTP/2 ' +\n"
    "          t.h2_requests + '; HTTP/2 connections: ' +\n"
    "          h.connections_open + ' open / ' + h.connections +\n"
    "          ' total, ' + h.streams_open + ' streams open',\n"
    "          'HTTP/2 limits: refused ' + l.refused + ', glitches ' +\n"
    "          l.glitches + ', flood ' + l.flood + ', header list ' +\n"
    "          l.header_list + ', timeout ' + l.timeout +\n"
    "          '; client resets ' + h.client_resets];\n"
    "}\n"
    "function render(j) {\n"
    "  var rows = $('gn-rows'), tot = $('gn-total'), box = $('gn-charts'), i;\n"
    "  var cache = j.tls_session_cache;\n"
    "  $('gn-info').textContent = 'master pid ' + j.master_pid +\n"
    "      ', generation ' + j.generation + ', up ' + age(j.uptime) +\n"
    "      ', children ' + j.children.length + ' live / ' +\n"
    "      j.children_configured +\n"
    "      ' configured, ' + j.totals.children_exited + ' exited';\n"
    "  $('gn-cache').textContent = cache.enabled\n"
    "      ? 'TLS session cache: ' + cache.used + ' of ' + cache.entries +\n"
    "        ' used, ' + cache.stores + ' stores, ' + cache.hits +\n"
    "        ' hits, ' + cache.misses + ' misses, ' + cache.evictions +\n"
    "        ' evictions'\n"
    "      : 'TLS session cache: off';\n"
    "  if (j.totals.http2 && $('gn-proto')) {\n"
    "    $('gn-proto').textContent = protos(j.totals)[0];\n"
    "    $('gn-h2limits').textContent = protos(j.totals)[1];\n"
    "  }\n"
    "  rows.textContent = '';\n"
    "  for (i = 0; i < j.children.length; i++) {\n"
    "    rows.appendChild(row(j.children[i], j.time));\n"
    "  }\n"
    "  tot.textContent = '';\n"
    "  tot.appendChild(row(j.totals, j.time));\n"
    "  box.textContent = '';\n"
    "  if (!j.history_interval) {\n"
    "    box.textContent =\n"
    "        'charts: sampling is off (status_sample_interval 0)';\n"
    "    return;\n"
    "  }\n"
    "  for (i = 0; i < charts.length; i++) {\n"
    "    box.appendChild(chart(j, charts[i]));\n"
    "  }\n"
    "}\n"
    "function poll() {\n"
    "  fetch(url, { cache: 'no-store', credentials: 'same-origin' })\n"
    "    .then(function (r) {\n"
    "      if (!r.ok) { throw new Error('HTTP ' + r.status); }\n"
    "      return r.json();\n"
    "    })\n"
    "    .then(function (j) {\n"
    "      render(j);\n"
    "      $('gn-updated').textContent = 'updated ' +\n"
    "          hms(Date.now() / 1000) + ', every ' + every / 1000 + ' s';\n"
    "    }, function (e) {\n"
    "      $('gn-updated').textContent = 'update failed at ' +\n"
    "          hms(Date.now() / 1000) + ': ' + e.message;\n"
    "    })\n"
    "    .then(function () { setTimeout(poll, every); });\n"
    "}\n"
    "render(JSON.parse(data.textContent));\n"
    "$('gn-updated').textContent = 'as of ' + hms(Date.now() / 1000) +\n"
    "    (every > 0 ? ', updating every ' + every / 1000 + ' s'\n"
    "               : ' (status_refresh 0: not updating)');\n"
    "if (every > 0) { setTimeout(poll, every); }\n"
    "}());\n";


static void
gn_status_html_head(const gn_api_t *api, gn_status_out_t *o,
    gn_status_snap_t *s)
{
    gn_server_stats_t           *sv = &s->server;
    const gn_memcached_stats_t  *m;
    int                          i;

    gn_status_printf(o, "<!DOCTYPE html>\n<html lang=en><head>"
                     "<meta charset=utf-8><title>Gannet status</title>"
                     "<style>%s</style></head><body>\n<h1>", gn_status_css);
    gn_status_html_str(o, s->version);
    gn_status_printf(o, "</h1>\n<p id=gn-info>master pid %" PRId64
                     ", generation %" PRIu64 ", up ", sv->master_pid,
                     sv->generation);
    gn_status_html_age(o, gn_status_age(s->now, sv->started));
    gn_status_printf(o, ", children %d live / %u configured, %" PRIu64
                     " exited</p>\n", s->nchild, sv->children, s->exited);

    if (sv->tls_cache_entries == 0) {
        gn_status_printf(o, "<p id=gn-cache>TLS session cache: off</p>\n");
    } else {
        gn_status_printf(o, "<p id=gn-cache>TLS session cache: %" PRIu64
                         " of %" PRIu64 " used, %" PRIu64 " stores, %"
                         PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
                         " evictions</p>\n", sv->tls_cache_used,
                         sv->tls_cache_entries, sv->tls_cache_stores,
                         sv->tls_cache_hits, sv->tls_cache_misses,
                         sv->tls_cache_evictions);
    }

    if (s->have_key) {
        gn_status_printf(o, "<p id=gn-key>TLS ticket key: %s, id ",
                         gn_status_key_source(s->key.source));
        gn_status_html_str(o, s->key.id);
        gn_status_printf(o, ", age ");
        gn_status_html_age(o, gn_status_age(s->now, s->key.created));
        gn_status_printf(o, "; %" PRIu64 " tickets issued; resumed by "
                         "ticket %" PRIu64 ", by session id %" PRIu64
                         "</p>\n", s->key.tickets_issued,
                         s->key.resumed_ticket, s->key.resumed_id);
    }

    for (i = 0; i < s->nup; i++) {
        const gn_upstream_server_stats_t  *u = &s->up[i];

        gn_status_printf(o, "<p class=gn-upstream>upstream ");
        gn_status_html_str(o, u->upstream);
        gn_status_printf(o, ", server ");
        gn_status_html_str(o, u->server);
        gn_status_printf(o, ": %s; %" PRIu64 " requests; responses 2xx %"
                         PRIu64 ", 3xx %" PRIu64 ", 4xx %" PRIu64 ", 5xx %"
                         PRIu64 "; failed: %" PRIu64 " connect, %" PRIu64
                         " timeout, %" PRIu64 " invalid, %" PRIu64
                         " cut; %" PRId64 " active, %" PRId64
                         " idle</p>\n", gn_status_up_state(u->state),
                         u->requests, u->responses[2], u->responses[3],
                         u->responses[4], u->responses[5], u->fail_connect,
                         u->fail_timeout, u->fail_invalid, u->fail_cut,
                         u->active, u->idle);
    }

    for (i = 0; i < s->nlim; i++) {
        gn_status_printf(o, "<p class=gn-limit>limit_%s zone ",
                         s->lim[i].kind == GN_LIMIT_ZONE_CONN ? "conn"
                                                              : "req");
        gn_status_html_str(o, s->lim[i].name);
        gn_status_printf(o, ": %" PRIu64 " passed, %" PRIu64 " delayed, %"
                         PRIu64 " rejected</p>\n", s->lim[i].passed,
                         s->lim[i].delayed, s->lim[i].rejected);
    }

    for (i = 0; s->have_memc && i < s->nmemc; i++) {
        m = &s->memc[i];
        gn_status_printf(o, "<p class=gn-memc>TLS session cache, memcached ");
        gn_status_html_str(o, m->address);
        gn_status_printf(o, ": %s; %" PRIu64 " lookups, %" PRIu64 " hits, %"
                         PRIu64 " misses, %" PRIu64 " timeouts, %" PRIu64
                         " skipped; %" PRIu64 " stores, %" PRIu64
                         " failed; errors: %" PRIu64 " connect, %" PRIu64
                         " protocol, %" PRIu64 " stall; round trip %" PRIu64
                         " us</p>\n", gn_status_memc_state(m->state),
                         m->lookups, m->hits, m->misses, m->timeouts,
                         m->skipped, m->stores, m->store_failures,
                         m->err_connect, m->err_protocol, m->err_stall,
                         gn_status_memc_rtt(m));
    }
}


/* Protocols (1.3): the server's totals; the script's protos() writes
 * the same two lines. */
static void
gn_status_html_proto(gn_status_out_t *o, const gn_proto_stats_t *p)
{
    gn_status_printf(o, "<h2>Protocols</h2>\n<p id=gn-proto>requests: "
                     "HTTP/1.x %" PRIu64 ", HTTP/2 %" PRIu64 "; HTTP/2 "
                     "connections: %" PRIu64 " open / %" PRIu64 " total, %"
                     PRIu64 " streams open</p>\n", p->h1_requests,
                     p->h2_requests, p->h2_open, p->h2_connections,
                     p->h2_streams);
    gn_status_printf(o, "<p id=gn-h2limits>HTTP/2 limits: refused %" PRIu64
                     ", glitches %" PRIu64 ", flood %" PRIu64 ", header "
                     "list %" PRIu64 ", timeout %" PRIu64 "; client resets %"
                     PRIu64 "</p>\n", p->h2_refused, p->h2_glitch_limit,
                     p->h2_flood, p->h2_header_limit, p->h2_timeouts,
                     p->h2_client_resets);
}


/* The table and the numbers are written here, so the page reads without
 * a script too; the charts are the script's. The JSON of this very
 * snapshot goes in the page for it. */
static void
gn_status_html(const gn_api_t *api, gn_status_out_t *o, gn_status_snap_t *s,
    gn_status_conf_t *conf)
{
    int  i;

    gn_status_html_head(api, o, s);

    gn_status_printf(o, "<table><thead><tr><th>slot</th><th>pid</th>"
                     "<th>gen</th><th>state</th><th>uptime</th>"
                     "<th>conns</th><th>accepted</th><th>requests</th>"
                     "<th>in</th><th>out</th><th>1xx</th><th>2xx</th>"
                     "<th>3xx</th><th>4xx</th><th>5xx</th>"
                     "<th>TLS full / resumed / failed</th></tr></thead>\n"
                     "<tbody id=gn-rows>");
    for (i = 0; i < s->nchild; i++) {
        gn_status_html_row(o, &s->child[i], s->now);
    }
    gn_status_printf(o, "</tbody><tfoot id=gn-total>");
    gn_status_html_row(o, &s->total, s->now);
    gn_status_printf(o, "</tfoot></table>\n");

    if (s->have_proto) {
        gn_status_html_proto(o, &s->proto_total);
    }

    gn_status_printf(o, "<div id=gn-charts>");

    if (s->interval == 0) {
        gn_status_printf(o, "charts: sampling is off "
                         "(status_sample_interval 0)");
    }

    gn_status_printf(o, "</div>\n<noscript><p>The charts and the live "
                     "numbers need JavaScript.</p></noscript>\n"
                     "<p id=gn-updated></p>\n<p><a href=\"?format=json\">"
                     "JSON</a> &middot; <a href=\"?format=prometheus\">"
                     "Prometheus</a></p>\n<script type=application/json "
                     "id=gn-data data-refresh=%" PRId64 ">",
                     conf != NULL && conf->refresh > 0 ? conf->refresh : 0);
    gn_status_json(api, o, s);
    gn_status_printf(o, "</script>\n<script>%s</script>\n</body></html>\n",
                     gn_status_js);
}


/* ---- the handler --------------------------------------------------------- */

/* ?format=VALUE among the query arguments. Returns GN_STATUS_* or -1. */
static int
gn_status_format(const gn_api_t *api, gn_request_t *r)
{
    gn_str_t        q;
    unsigned char  *p, *end, *amp;
    size_t          n;
    int             fmt;

    q = api->query(r);
    p = q.data;
    end = q.data + q.len;
    fmt = GN_STATUS_HTML;

    while (p != NULL && p < end) {
        amp = memchr(p, '&', (size_t) (end - p));
        n = (size_t) ((amp ? amp : end) - p);

        if (n >= 7 && memcmp(p, "format=", 7) == 0) {
            p += 7;
            n -= 7;
            if (n == 4 && memcmp(p, "json", 4) == 0) {
                fmt = GN_STATUS_JSON;
            } else if (n == 10 && memcmp(p, "prometheus", 10) == 0) {
                fmt = GN_STATUS_PROM;
            } else if (n == 4 && memcmp(p, "html", 4) == 0) {
                fmt = GN_STATUS_HTML;
            } else {
                return -1;
            }
        }

        p = amp ? amp + 1 : NULL;
    }

    return fmt;
}


static int
gn_status_snapshot(const gn_api_t *api, gn_request_t *r,
    gn_status_snap_t *s)
{
    gn_str_t  v;
    int       max;

    memset(s, 0, sizeof(gn_status_snap_t));
    s->now = (uint64_t) time(NULL);
    s->interval = gn_status_ring ? gn_status_interval : 0;

    s->have_server = api->server_stats(&s->server);

    s->have_proto = GN_API_HAS(api, proto_stats);

    s->have_key = GN_API_HAS(api, tls_ticket_stats)
                  && api->tls_ticket_stats(&s->key, sizeof(s->key)) == 1;

    s->have_memc = GN_API_HAS(api, memcached_stats);
    while (s->have_memc && s->nmemc < GN_STATUS_MEMC
           && api->memcached_stats((unsigned) s->nmemc, &s->memc[s->nmemc],
                                   sizeof(gn_memcached_stats_t)) == 1)
    {
        gn_status_memc_add(&s->memc_total, &s->memc[s->nmemc]);
        s->nmemc++;
    }

    if (GN_API_HAS(api, upstream_stats)) {
        s->up = api->request_alloc(r, GN_STATUS_UPSTREAMS
                                      * sizeof(gn_upstream_server_stats_t));
        while (s->up != NULL && s->nup < GN_STATUS_UPSTREAMS
               && api->upstream_stats((unsigned) s->nup, &s->up[s->nup],
                                      sizeof(gn_upstream_server_stats_t))
                  == 1)
        {
            s->nup++;
        }
    }

    while (GN_API_HAS(api, limit_stats) && s->nlim < GN_STATUS_LIMITS
           && api->limit_stats((unsigned) s->nlim, &s->lim[s->nlim],
                               sizeof(gn_limit_zone_stats_t)) == 1)
    {
        s->nlim++;
    }

    max = api->max_slots();
    if (max > 0) {
        s->child = api->request_alloc(r, (size_t) max
                                         * sizeof(gn_child_stats_t));
        s->proto = api->request_alloc(r, (size_t) max
                                         * sizeof(gn_proto_stats_t));
        if (s->child == NULL || s->proto == NULL) {
            return GN_ERROR;
        }
    }

    s->nchild = gn_status_collect(api, s->child, max, &s->total,
                                  &s->exited, s->proto,
                                  s->have_proto ? &s->proto_total : NULL);
    if (s->nchild > max) {
        s->nchild = max;
    }

    s->nhist = gn_status_history(s->hist);

    /* the version only where server_tokens is on for this request */
    v = api->variable(r, "SERVER_SOFTWARE");
    snprintf(s->version, sizeof(s->version), "%.*s",
             (int) (v.len < sizeof(s->version) ? v.len
                                               : sizeof(s->version) - 1),
             v.len ? (const char *) v.data : "gannet");
    return GN_OK;
}


static int
gn_status_handler(const gn_api_t *api, gn_request_t *r)
{
    gn_status_conf_t  *conf;
    gn_status_snap_t  *s;
    gn_status_out_t    o;
    gn_str_t           m;
    int                fmt;

    conf = api->module_conf(r, &gn_status_module);
    if (conf == NULL) {
        return GN_ERROR;
    }

    m = api->method(r);
    if (!(m.len == 3 && memcmp(m.data, "GET", 3) == 0)
        && !(m.len == 4 && memcmp(m.data, "HEAD", 4) == 0))
    {
        api->set_header(r, "Allow", "GET, HEAD");
        return 405;
    }

    fmt = gn_status_format(api, r);
    if (fmt < 0) {
        return 400;
    }

    /* the snapshot holds 60 samples: request memory, not the stack */
    s = api->request_alloc(r, sizeof(gn_status_snap_t));
    if (s == NULL || gn_status_snapshot(api, r, s) != GN_OK) {
        return GN_ERROR;
    }

    memset(&o, 0, sizeof(gn_status_out_t));
    o.api = api;
    o.r = r;
    gn_status_reserve(&o, GN_STATUS_CHUNK);

    switch (fmt) {
    case GN_STATUS_JSON:
        api->set_header(r, "Content-Type", "application/json");
        gn_status_json(api, &o, s);
        break;
    case GN_STATUS_PROM:
        api->set_header(r, "Content-Type",
                        "text/plain; version=0.0.4; charset=utf-8");
        gn_status_prom(api, &o, s);
        break;
    default:
        api->set_header(r, "Content-Type", "text/html; charset=utf-8");
        gn_status_html(api, &o, s, conf);
    }

    api->set_header(r, "Cache-Control", "no-store");
    api->set_header(r, "X-Content-Type-Options", "nosniff");

    gn_status_flush(&o);
    return o.failed ? GN_ERROR : GN_OK;
}


/* ---- process hooks ------------------------------------------------------- */

/*
 * A new ring (or one whose interval changed) gets a whole window at once:
 * every period of the window up to this one holds the totals of now,
 * which is what they were before (0 when the server starts), so the page
 * draws a full window from the first moment. Master before fork, or a
 * single process.
 */
static void
gn_status_prefill(const gn_api_t *api)
{
    gn_child_stats_t     tot;
    gn_status_sample_t  *s;
    uint64_t             now, cur, p;
    int                  n, i;

    n = gn_status_collect(api, NULL, 0, &tot, NULL, NULL, NULL);
    now = gn_status_now_ms();
    cur = now / gn_status_interval + 1;

    for (i = 0; i < GN_STATUS_SAMPLES && (uint64_t) i < cur; i++) {
        p = cur - (uint64_t) i;
        s = &gn_status_ring->samples[p % GN_STATUS_SAMPLES];

        __atomic_store_n(&s->period, p | GN_STATUS_BUSY, __ATOMIC_RELAXED);
        s->msec = i == 0 ? now : (p - 1) * gn_status_interval;
        s->requests = tot.requests;
        s->bytes_in = tot.bytes_in;
        s->bytes_out = tot.bytes_out;
        s->connections = tot.connections;
        s->errors = tot.status[5];
        s->children = (uint64_t) n;
        __atomic_store_n(&s->period, p, __ATOMIC_RELEASE);
    }
}


static int
gn_status_map(const gn_api_t *api, uint64_t interval)
{
    void  *p;

    gn_status_interval = interval;

    if (interval == 0) {
        return GN_OK;
    }

    /* a reload with the module still loaded keeps the history */
    if (gn_status_ring != NULL) {
        if (gn_status_ring->interval != interval) {
            memset(gn_status_ring->samples, 0,
                   sizeof(gn_status_ring->samples));
            gn_status_ring->interval = interval;
            gn_status_prefill(api);
        }
        return GN_OK;
    }

    p = mmap(NULL, sizeof(gn_status_ring_t), PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        api->log(NULL, GN_LOG_EMERG, "status: mmap(%zu) failed",
                 sizeof(gn_status_ring_t));
        return GN_ERROR;
    }

    gn_status_ring = p;
    gn_status_ring->magic = GN_STATUS_MAGIC;
    gn_status_ring->interval = interval;
    gn_status_prefill(api);
    return GN_OK;
}


/* Every level of a configuration just read (gannet -t, start, reload). */
static int
gn_status_check_conf(const gn_api_t *api, void *data, int level)
{
    gn_status_conf_t  *conf = data;

    if (level == GN_CTX_MAIN && conf->interval != 0
        && (conf->interval < 1000 || conf->interval > 3600000))
    {
        return api->conf_error("status_sample_interval", "must be 0 (off) "
                               "or from 1s to 1h, not %lld ms",
                               (long long) conf->interval);
    }

    return GN_OK;
}


/* Master, before fork: maps the
 * history ring (the children inherit the mapping). */
static int
gn_status_init_master(const gn_api_t *api, void *data)
{
    gn_status_conf_t  *conf = data;

    if (conf == NULL) {
        return gn_status_map(api, 10000);
    }

    /* (its range is gn_status_check_conf's) */
    return gn_status_map(api, conf->interval > 0 ? (uint64_t) conf->interval
                                                 : 0);
}


/* Child: starts the sampling timer. Without init_master (single process
 * mode) the ring is this process's own. */
static int
gn_status_init_child(const gn_api_t *api, void *data)
{
    gn_status_conf_t  *conf = data;

    gn_status_exiting = 0;

    if (gn_status_ring == NULL) {
        if (gn_status_map(api, conf ? (uint64_t) conf->interval : 10000)
            != GN_OK)
        {
            return GN_ERROR;
        }
    }

    if (gn_status_ring != NULL && gn_status_interval > 0) {
        gn_status_arm(api);
    }

    return GN_OK;
}


static void
gn_status_exit_child(const gn_api_t *api)
{
    gn_status_exiting = 1;

    if (gn_status_timer != NULL) {
        api->timer_cancel(gn_status_timer);
        gn_status_timer = NULL;
    }
}


static const gn_directive_t  gn_status_directives[] = {
    { "status_refresh", GN_DIR_DURATION,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(gn_status_conf_t, refresh), "5s" },
    { "status_sample_interval", GN_DIR_DURATION, GN_CTX_MAIN,
      offsetof(gn_status_conf_t, interval), "10s" },
    { NULL, 0, 0, 0, NULL }
};


/* Needs 1.2 (conf_error); proto_stats (1.3) where the server has it. */
static const gn_module_t  gn_status_module = {
    GN_MODULE_V1_NEEDS(2), "status", GN_STATUS_VERSION,
    gn_status_directives, sizeof(gn_status_conf_t),
    gn_status_init_master, gn_status_init_child, gn_status_handler,
    NULL, NULL, NULL,
    gn_status_exit_child
};

GN_MODULE_EXPORT(gn_status_module)
GN_MODULE_CHECK(gn_status_check_conf)
