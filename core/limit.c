/*
 * limit_req and limit_conn, counted in shared memory (limit.h).
 */

#include "gn_config.h"

#include "limit.h"
#include "cycle.h"
#include "shm.h"
#include "tls_scache.h"
#include "access_log.h"
#include "http_request.h"
#include "http_response.h"
#include "timer.h"
#include "log.h"
#include "str.h"


struct gn_limit_zone_s {
    gn_str_t           name;
    gn_uint_t          conn;          /* limit_conn_zone; else limit_req */
    size_t             size;
    gn_log_format_t    key;
    gn_uint_t          rate;          /* limit_req: 1/1000 requests a s */
    gn_shm_zone_t     *shm;           /* mapped by the master */
    gn_scache_t       *table;
    gn_limit_stats_t  *stats;
};

typedef struct {
    gn_str_t           name;          /* the zone, until checked */
    gn_limit_zone_t   *zone;
    gn_uint_t          n;             /* limit_conn: at once */
    gn_uint_t          burst;         /* limit_req: 1/1000 requests */
    gn_uint_t          delay;         /* ... over this, requests wait */
    gn_str_t           file;
    gn_uint_t          line;
} gn_limit_t;

/* What a table entry holds (its data, 16 bytes). */
typedef struct {
    int64_t            last;          /* limit_req: ms, monotonic */
    int64_t            excess;        /* ... 1/1000 requests; limit_conn:
                                         requests being served */
} gn_limit_node_t;

typedef struct {
    gn_msec_t          now;
    gn_limit_t        *limit;
    int64_t            excess;        /* out */
} gn_limit_arg_t;

/* Given back when a counted request's pool goes. */
typedef struct {
    gn_limit_zone_t   *zone;
    size_t             klen;
    u_char             key[GN_SCACHE_KEY_MAX];
} gn_limit_held_t;

#define GN_LIMIT_DATA         sizeof(gn_limit_node_t)
#define GN_LIMIT_HDR          gn_align(sizeof(gn_limit_stats_t), (size_t) 64)
#define GN_LIMIT_REQ_TTL      60          /* s an idle bucket is kept */
#define GN_LIMIT_CONN_TTL     86400
#define GN_LIMIT_NODELAY      ((gn_uint_t) -1)
#define GN_LIMIT_NAME_MAX     24          /* "limit:" + it in shm's 32 */
#define GN_LIMIT_MIN_ENTRIES  8


static char *gn_limit_zone_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static const gn_uint_t  gn_limit_conn_kind = 1;
static char *gn_limit_req_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_limit_conn_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

#define gn_limit_offset(f)   offsetof(gn_limit_conf_t, f)

static const gn_conf_enum_t  gn_limit_levels[] = {
    { gn_string("info"), GN_LOG_INFO },
    { gn_string("notice"), GN_LOG_NOTICE },
    { gn_string("warn"), GN_LOG_WARN },
    { gn_string("error"), GN_LOG_ERR },
    { gn_null_string, 0 }
};

static const gn_conf_cmd_t  gn_limit_commands[] = {

    { gn_string("limit_req_zone"), GN_CONF_MAIN | GN_CONF_TAKE3,
      gn_limit_zone_cmd, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("limit_conn_zone"), GN_CONF_MAIN | GN_CONF_TAKE2,
      gn_limit_zone_cmd, GN_CONF_LOC_CONF, 0, &gn_limit_conn_kind, NULL },
    { gn_string("limit_req"), GN_CONF_ANY | GN_CONF_TAKE123,
      gn_limit_req_cmd, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("limit_conn"), GN_CONF_ANY | GN_CONF_TAKE2,
      gn_limit_conn_cmd, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("limit_req_status"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF, gn_limit_offset(req_status),
      NULL, "503" },
    { gn_string("limit_conn_status"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF, gn_limit_offset(conn_status),
      NULL, "503" },
    { gn_string("limit_req_log_level"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_enum_slot, GN_CONF_LOC_CONF,
      gn_limit_offset(req_log_level), gn_limit_levels, "error" },
    { gn_string("limit_conn_log_level"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_enum_slot, GN_CONF_LOC_CONF,
      gn_limit_offset(conn_log_level), gn_limit_levels, "error" },

    gn_conf_null_cmd
};


/* ---- per request ----------------------------------------------------- */

/* The zone's key for r: KEY's value, or, past GN_SCACHE_KEY_MAX bytes,
 * its first bytes and a 64-bit FNV-1a hash of the whole. 0: an empty
 * key, which nginx does not count. */
static size_t
gn_limit_key(gn_http_request_t *r, gn_limit_zone_t *z, u_char *key)
{
    u_char    *p;
    size_t     len, i;
    uint64_t   h;

    len = gn_access_log_render(r, &z->key, NULL);
    if (len <= GN_SCACHE_KEY_MAX) {
        return gn_access_log_render(r, &z->key, key);
    }

    p = gn_pnalloc(r->pool, len);
    if (p == NULL) {
        return 0;
    }
    len = gn_access_log_render(r, &z->key, p);

    h = 14695981039346656037ULL;
    for (i = 0; i < len; i++) {
        h = (h ^ p[i]) * 1099511628211ULL;
    }
    memcpy(key, p, GN_SCACHE_KEY_MAX - sizeof(h));
    memcpy(key + GN_SCACHE_KEY_MAX - sizeof(h), &h, sizeof(h));
    return GN_SCACHE_KEY_MAX;
}


/* nginx's leaky bucket, under the table's lock. */
static gn_int_t
gn_limit_req_update(u_char *data, gn_uint_t fresh, void *arg)
{
    gn_limit_arg_t   *a = arg;
    gn_limit_node_t   node;
    int64_t           ms, excess;

    memcpy(&node, data, sizeof(node));

    if (fresh) {
        excess = 0;
    } else {
        ms = (int64_t) a->now - node.last;
        ms = gn_max(ms, 0);
        excess = node.excess - (int64_t) a->limit->zone->rate * ms / 1000
                 + 1000;
        excess = gn_max(excess, 0);
    }

    a->excess = excess;
    if (excess > (int64_t) a->limit->burst) {
        return GN_BUSY;
    }

    node.excess = excess;
    node.last = (int64_t) a->now;
    memcpy(data, &node, sizeof(node));
    return GN_OK;
}


static gn_int_t
gn_limit_conn_inc(u_char *data, gn_uint_t fresh, void *arg)
{
    gn_limit_arg_t   *a = arg;
    gn_limit_node_t   node;

    memcpy(&node, data, sizeof(node));
    if (!fresh && node.excess >= (int64_t) a->limit->n) {
        return GN_BUSY;
    }
    node.excess = fresh ? 1 : node.excess + 1;
    memcpy(data, &node, sizeof(node));
    return GN_OK;
}


static gn_int_t
gn_limit_conn_dec(u_char *data, gn_uint_t fresh, void *arg)
{
    gn_limit_node_t   node;

    (void) arg;

    memcpy(&node, data, sizeof(node));
    if (fresh || node.excess <= 1) {
        return GN_DONE;                 /* the last one: the entry goes */
    }
    node.excess--;
    memcpy(data, &node, sizeof(node));
    return GN_OK;
}


static void
gn_limit_conn_release(void *data)
{
    gn_limit_held_t  *held = data;

    (void) gn_scache_update(held->zone->table, held->key, held->klen,
                            gn_current_sec, GN_LIMIT_CONN_TTL,
                            gn_limit_conn_dec, NULL);
}


#define gn_limit_count(z, field)                                              \
    (void) __atomic_fetch_add(&(z)->stats->field, 1, __ATOMIC_RELAXED)


static gn_int_t
gn_limit_reqs(gn_http_request_t *r, gn_limit_conf_t *lcf, gn_msec_t *delay)
{
    gn_limit_t      *lim;
    gn_limit_arg_t   a;
    gn_uint_t        i;
    gn_int_t         rc;
    gn_msec_t        wait;
    size_t           klen;
    u_char           key[GN_SCACHE_KEY_MAX];

    *delay = 0;
    lim = lcf->reqs->elts;

    for (i = 0; i < lcf->reqs->nelts; i++) {
        klen = gn_limit_key(r, lim[i].zone, key);
        if (klen == 0) {
            continue;
        }

        a.now = gn_current_msec;
        a.limit = &lim[i];
        rc = gn_scache_update(lim[i].zone->table, key, klen, gn_current_sec,
                              GN_LIMIT_REQ_TTL, gn_limit_req_update, &a);

        if (rc == GN_BUSY) {
            gn_limit_count(lim[i].zone, rejected);
            gn_log_error(lcf->req_log_level, &r->c->log, 0, "limiting "
                         "requests, excess: %lld.%03lld by zone \"%.*s\"",
                         (long long) a.excess / 1000,
                         (long long) a.excess % 1000,
                         GN_STR_ARG(&lim[i].zone->name));
            return lcf->req_status;
        }
        if (rc != GN_OK) {
            continue;                   /* a lock that failed: not counted */
        }

        if (lim[i].delay == GN_LIMIT_NODELAY
            || a.excess <= (int64_t) lim[i].delay)
        {
            continue;
        }
        wait = (gn_msec_t) ((a.excess - (int64_t) lim[i].delay) * 1000
                            / (int64_t) lim[i].zone->rate);
        if (wait > *delay) {
            *delay = wait;
            gn_log_error(gn_min(lcf->req_log_level + 1, GN_LOG_INFO),
                         &r->c->log, 0, "delaying request, excess: "
                         "%lld.%03lld, by zone \"%.*s\"",
                         (long long) a.excess / 1000,
                         (long long) a.excess % 1000,
                         GN_STR_ARG(&lim[i].zone->name));
        }
    }

    for (i = 0; i < lcf->reqs->nelts; i++) {
        if (*delay > 0) {
            gn_limit_count(lim[i].zone, delayed);
        } else {
            gn_limit_count(lim[i].zone, passed);
        }
    }

    return *delay > 0 ? GN_BUSY : GN_OK;
}


static gn_int_t
gn_limit_conns(gn_http_request_t *r, gn_limit_conf_t *lcf)
{
    gn_limit_t         *lim;
    gn_limit_arg_t      a;
    gn_limit_held_t    *held;
    gn_pool_cleanup_t  *cln;
    gn_uint_t           i;
    gn_int_t            rc;

    lim = lcf->conns->elts;

    for (i = 0; i < lcf->conns->nelts; i++) {
        cln = gn_pool_cleanup_add(r->pool, sizeof(gn_limit_held_t));
        if (cln == NULL) {
            return GN_ERROR;
        }
        held = cln->data;
        held->zone = lim[i].zone;
        held->klen = gn_limit_key(r, lim[i].zone, held->key);
        if (held->klen == 0) {
            continue;
        }

        a.limit = &lim[i];
        rc = gn_scache_update(lim[i].zone->table, held->key, held->klen,
                              gn_current_sec, GN_LIMIT_CONN_TTL,
                              gn_limit_conn_inc, &a);

        if (rc == GN_BUSY) {
            gn_limit_count(lim[i].zone, rejected);
            gn_log_error(lcf->conn_log_level, &r->c->log, 0, "limiting "
                         "connections by zone \"%.*s\"",
                         GN_STR_ARG(&lim[i].zone->name));
            return lcf->conn_status;
        }
        if (rc == GN_OK) {
            gn_limit_count(lim[i].zone, passed);
            cln->handler = gn_limit_conn_release;
        }
    }

    return GN_OK;
}


gn_int_t
gn_limit_check(gn_http_request_t *r, gn_msec_t *delay)
{
    gn_limit_conf_t  *lcf = gn_limit_conf(r->loc);
    gn_int_t          rc;

    if (r->limited == 0) {
        r->limited = 1;
        if (lcf->reqs != NULL) {
            rc = gn_limit_reqs(r, lcf, delay);
            if (rc != GN_OK) {
                return rc;              /* GN_BUSY: wait, then again */
            }
        }
    }

    if (r->limited == 1) {
        r->limited = 2;
        if (lcf->conns != NULL) {
            return gn_limit_conns(r, lcf);
        }
    }

    return GN_OK;
}


gn_int_t
gn_limit_zone_stats(gn_uint_t index, gn_str_t *name, gn_uint_t *conn,
    gn_limit_stats_t *st)
{
    gn_limit_zone_t  **z;
    gn_array_t        *zones;

    if (gn_cycle == NULL) {
        return GN_DECLINED;
    }
    zones = gn_limit_conf(gn_cycle->main_loc)->zones;
    if (zones == NULL || index >= zones->nelts) {
        return GN_DECLINED;
    }

    z = zones->elts;
    *name = z[index]->name;
    *conn = z[index]->conn;
    if (z[index]->stats != NULL) {
        st->passed = __atomic_load_n(&z[index]->stats->passed,
                                     __ATOMIC_RELAXED);
        st->delayed = __atomic_load_n(&z[index]->stats->delayed,
                                      __ATOMIC_RELAXED);
        st->rejected = __atomic_load_n(&z[index]->stats->rejected,
                                       __ATOMIC_RELAXED);
    } else {
        memset(st, 0, sizeof(*st));
    }
    return GN_OK;
}


/* ---- configuration --------------------------------------------------- */

/* "Nr/s" or "Nr/m": 1/1000 requests a second. */
static gn_uint_t
gn_limit_rate(const gn_str_t *v)
{
    gn_str_t  n;
    gn_int_t  r;

    if (v->len < 4 || v->data[v->len - 3] != 'r'
        || v->data[v->len - 2] != '/')
    {
        return 0;
    }
    n.data = v->data;
    n.len = v->len - 3;
    r = gn_atoi(n.data, n.len);
    if (r <= 0 || r > 1000000) {
        return 0;
    }
    switch (v->data[v->len - 1]) {
    case 's':
        return (gn_uint_t) r * 1000;
    case 'm':
        return (gn_uint_t) gn_max(r * 1000 / 60, 1);
    default:
        return 0;
    }
}


/* "zone=NAME:SIZE" */
static char *
gn_limit_zone_name(gn_conf_t *cf, gn_limit_zone_t *z, const gn_str_t *v)
{
    gn_str_t  size;
    u_char   *colon;
    ssize_t   n;

    colon = v->len > 5 ? memchr(v->data, ':', v->len) : NULL;
    if (v->len <= 5 || memcmp(v->data, "zone=", 5) != 0 || colon == NULL
        || colon == v->data + 5)
    {
        gn_conf_error(cf, "invalid \"%.*s\" in \"%.*s\", expected "
                      "zone=NAME:SIZE", GN_STR_ARG(v),
                      GN_STR_ARG(&((gn_str_t *) cf->args->elts)[0]));
        return GN_CONF_ERROR;
    }

    z->name.data = v->data + 5;
    z->name.len = (size_t) (colon - z->name.data);
    size.data = colon + 1;
    size.len = (size_t) (v->data + v->len - size.data);
    n = gn_parse_size(&size);

    if (z->name.len > GN_LIMIT_NAME_MAX) {
        gn_conf_error(cf, "zone name \"%.*s\" is longer than %d characters",
                      GN_STR_ARG(&z->name), GN_LIMIT_NAME_MAX);
        return GN_CONF_ERROR;
    }
    if (n == GN_ERROR || (size_t) n < GN_LIMIT_HDR
        || gn_scache_entries_for((size_t) n - GN_LIMIT_HDR, GN_LIMIT_DATA)
           < GN_LIMIT_MIN_ENTRIES)
    {
        gn_conf_error(cf, "zone \"%.*s\" size \"%.*s\" is too small or "
                      "invalid (at least %zu bytes)", GN_STR_ARG(&z->name),
                      GN_STR_ARG(&size), GN_LIMIT_HDR
                      + gn_scache_size(GN_LIMIT_MIN_ENTRIES, GN_LIMIT_DATA));
        return GN_CONF_ERROR;
    }
    z->size = (size_t) n;
    return GN_CONF_OK;
}


/* limit_req_zone KEY zone=NAME:SIZE rate=R; limit_conn_zone KEY
 * zone=NAME:SIZE (cmd->post set). */
static char *
gn_limit_zone_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_limit_conf_t   *lcf = conf;
    gn_limit_zone_t   *z, **pz;
    gn_str_t          *value = cf->args->elts;
    gn_uint_t          i;
    char              *rv, err[256];

    z = gn_pcalloc(cf->pool, sizeof(gn_limit_zone_t));
    if (z == NULL) {
        return "failed (out of memory)";
    }
    z->conn = cmd->post != NULL;

    rv = gn_limit_zone_name(cf, z, &value[2]);
    if (rv != GN_CONF_OK) {
        return rv;
    }

    if (!z->conn) {
        z->rate = value[3].len > 5 && memcmp(value[3].data, "rate=", 5) == 0
                  ? gn_limit_rate(&(gn_str_t) { value[3].len - 5,
                                                value[3].data + 5 })
                  : 0;
        if (z->rate == 0) {
            gn_conf_error(cf, "invalid \"%.*s\" in \"limit_req_zone\", "
                          "expected rate=Nr/s or rate=Nr/m",
                          GN_STR_ARG(&value[3]));
            return GN_CONF_ERROR;
        }
    }

    if (gn_access_log_template(cf->pool, &z->key, &value[1], err,
                               sizeof(err)) != GN_OK)
    {
        gn_conf_error(cf, "%s in \"%.*s\"", err, GN_STR_ARG(&value[0]));
        return GN_CONF_ERROR;
    }

    if (lcf->zones == NULL) {
        lcf->zones = gn_array_create(cf->pool, 4, sizeof(gn_limit_zone_t *));
        if (lcf->zones == NULL) {
            return "failed (out of memory)";
        }
    }
    pz = lcf->zones->elts;
    for (i = 0; i < lcf->zones->nelts; i++) {
        if (gn_str_cmp(&pz[i]->name, &z->name) == 0) {
            gn_conf_error(cf, "duplicate zone \"%.*s\"", GN_STR_ARG(&z->name));
            return GN_CONF_ERROR;
        }
    }

    pz = gn_array_push(lcf->zones);
    if (pz == NULL) {
        return "failed (out of memory)";
    }
    *pz = z;
    return GN_CONF_OK;
}


static gn_limit_t *
gn_limit_add(gn_conf_t *cf, gn_array_t **list, const gn_str_t *zone)
{
    gn_limit_t  *lim;
    gn_uint_t    i;

    if (*list == NULL) {
        *list = gn_array_create(cf->pool, 2, sizeof(gn_limit_t));
        if (*list == NULL) {
            return NULL;
        }
    }

    lim = (*list)->elts;
    for (i = 0; i < (*list)->nelts; i++) {
        if (gn_str_cmp(&lim[i].name, zone) == 0) {
            gn_conf_error(cf, "duplicate limit \"%.*s\"", GN_STR_ARG(zone));
            return NULL;
        }
    }

    lim = gn_array_push(*list);
    if (lim == NULL) {
        return NULL;
    }
    memset(lim, 0, sizeof(gn_limit_t));
    lim->name = *zone;
    lim->file = cf->file->name;
    lim->line = cf->file->line;
    return lim;
}


/* A whole number after "name=" in v, or GN_ERROR. */
static gn_int_t
gn_limit_param(const gn_str_t *v, const char *name)
{
    size_t  n = strlen(name);

    if (v->len <= n || memcmp(v->data, name, n) != 0) {
        return GN_ERROR;
    }
    return gn_atoi(v->data + n, v->len - n);
}


/* limit_req zone=NAME [burst=N] [nodelay | delay=N] */
static char *
gn_limit_req_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_limit_conf_t  *lcf = conf;
    gn_str_t         *value = cf->args->elts, zone;
    gn_limit_t       *lim;
    gn_uint_t         i;
    gn_int_t          n;

    (void) cmd;

    if (value[1].len <= 5 || memcmp(value[1].data, "zone=", 5) != 0) {
        gn_conf_error(cf, "invalid \"%.*s\" in \"limit_req\", expected "
                      "zone=NAME", GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }
    zone.data = value[1].data + 5;
    zone.len = value[1].len - 5;

    lim = gn_limit_add(cf, &lcf->reqs, &zone);
    if (lim == NULL) {
        return cf->err[0] ? GN_CONF_ERROR : "failed (out of memory)";
    }

    for (i = 2; i < cf->args->nelts; i++) {
        if (gn_str_eq(&value[i], "nodelay")) {
            lim->delay = GN_LIMIT_NODELAY;
            continue;
        }
        n = gn_limit_param(&value[i], "burst=");
        if (n != GN_ERROR && n <= 1000000) {
            lim->burst = (gn_uint_t) n * 1000;
            continue;
        }
        n = gn_limit_param(&value[i], "delay=");
        if (n != GN_ERROR && n <= 1000000) {
            lim->delay = (gn_uint_t) n * 1000;
            continue;
        }
        gn_conf_error(cf, "invalid parameter \"%.*s\" in \"limit_req\", "
                      "expected burst=N, nodelay or delay=N",
                      GN_STR_ARG(&value[i]));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


/* limit_conn NAME N */
static char *
gn_limit_conn_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_limit_conf_t  *lcf = conf;
    gn_str_t         *value = cf->args->elts;
    gn_limit_t       *lim;
    gn_int_t          n;

    (void) cmd;

    n = gn_atoi(value[2].data, value[2].len);
    if (n <= 0 || n > 65535) {
        gn_conf_error(cf, "invalid number \"%.*s\" in \"limit_conn\", "
                      "expected 1 to 65535", GN_STR_ARG(&value[2]));
        return GN_CONF_ERROR;
    }

    lim = gn_limit_add(cf, &lcf->conns, &value[1]);
    if (lim == NULL) {
        return cf->err[0] ? GN_CONF_ERROR : "failed (out of memory)";
    }
    lim->n = (gn_uint_t) n;
    return GN_CONF_OK;
}


static gn_int_t
gn_limit_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_limit_conf_t  *lcf = gn_limit_conf(lc), *up;

    (void) cf;

    if (prev != NULL) {
        up = gn_limit_conf(prev);
        if (lcf->reqs == NULL) {
            lcf->reqs = up->reqs;
        }
        if (lcf->conns == NULL) {
            lcf->conns = up->conns;
        }
    }
    return GN_OK;
}


/* Each limit of a level names a zone of its kind; the statuses are
 * from 400 to 599. */
static gn_int_t
gn_limit_resolve(gn_conf_t *cf, gn_array_t *zones, gn_array_t *list,
    gn_uint_t conn)
{
    gn_limit_zone_t  **z;
    gn_limit_t        *lim;
    gn_uint_t          i, k;

    lim = list != NULL ? list->elts : NULL;
    for (i = 0; lim != NULL && i < list->nelts; i++) {
        z = zones != NULL ? zones->elts : NULL;
        for (k = 0; z != NULL && k < zones->nelts; k++) {
            if (z[k]->conn == conn && gn_str_cmp(&z[k]->name, &lim[i].name)
                                      == 0)
            {
                lim[i].zone = z[k];
                break;
            }
        }
        if (lim[i].zone == NULL) {
            snprintf(cf->err, sizeof(cf->err), "no %s \"%.*s\" for \"%s\" "
                     "in %.*s:%u", conn ? "limit_conn_zone" : "limit_req_zone",
                     GN_STR_ARG(&lim[i].name),
                     conn ? "limit_conn" : "limit_req",
                     GN_STR_ARG(&lim[i].file), (unsigned) lim[i].line);
            return GN_ERROR;
        }
    }
    return GN_OK;
}


static gn_int_t
gn_limit_check_level(gn_conf_t *cf, gn_cycle_t *cycle, gn_srv_conf_t *sc,
    gn_loc_conf_t *lc)
{
    gn_limit_conf_t  *lcf = gn_limit_conf(lc);
    gn_array_t       *zones = gn_limit_conf(cycle->main_loc)->zones;

    (void) sc;

    if (lcf->req_status < 400 || lcf->req_status > 599
        || lcf->conn_status < 400 || lcf->conn_status > 599)
    {
        snprintf(cf->err, sizeof(cf->err), "limit_req_status and "
                 "limit_conn_status must be from 400 to 599 (%d, %d)",
                 (int) lcf->req_status, (int) lcf->conn_status);
        return GN_ERROR;
    }

    if (gn_limit_resolve(cf, zones, lcf->reqs, 0) != GN_OK
        || gn_limit_resolve(cf, zones, lcf->conns, 1) != GN_OK)
    {
        return GN_ERROR;
    }
    return GN_OK;
}


static void
gn_limit_zone_release(void *data)
{
    gn_shm_zone_put(data);
}


/* The old cycle's zone of the same name, kind, size and rate, or NULL. */
static gn_limit_zone_t *
gn_limit_old_zone(gn_cycle_t *old, gn_limit_zone_t *z)
{
    gn_limit_zone_t  **oz;
    gn_array_t        *zones;
    gn_uint_t          i;

    zones = old != NULL ? gn_limit_conf(old->main_loc)->zones : NULL;
    oz = zones != NULL ? zones->elts : NULL;
    for (i = 0; oz != NULL && i < zones->nelts; i++) {
        if (gn_str_cmp(&oz[i]->name, &z->name) == 0 && oz[i]->shm != NULL
            && oz[i]->conn == z->conn && oz[i]->size == z->size
            && oz[i]->rate == z->rate)
        {
            return oz[i];
        }
    }
    return NULL;
}


/* Master: maps each zone, or keeps the old cycle's (a reload). */
static gn_int_t
gn_limit_open(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    gn_limit_zone_t    **z, *oz;
    gn_pool_cleanup_t   *cln;
    gn_array_t          *zones = gn_limit_conf(cycle->main_loc)->zones;
    gn_uint_t            i;
    char                 name[32], err[256];

    z = zones != NULL ? zones->elts : NULL;
    for (i = 0; z != NULL && i < zones->nelts; i++) {
        cln = gn_pool_cleanup_add(cycle->pool, 0);
        if (cln == NULL) {
            return GN_ERROR;
        }

        oz = gn_limit_old_zone(old, z[i]);
        if (oz != NULL) {
            z[i]->shm = oz->shm;
            z[i]->table = oz->table;
            z[i]->stats = oz->stats;
            z[i]->shm->refs++;
            cln->handler = gn_limit_zone_release;
            cln->data = z[i]->shm;
            continue;
        }

        snprintf(name, sizeof(name), "limit:%.*s",
                 GN_STR_ARG(&z[i]->name));
        z[i]->shm = gn_shm_zone_get(z[i]->size, name, log);
        if (z[i]->shm != NULL && z[i]->shm->inherited
            && !gn_scache_compatible(z[i]->shm->addr + GN_LIMIT_HDR,
                                     z[i]->size - GN_LIMIT_HDR,
                                     GN_LIMIT_DATA))
        {
            gn_shm_zone_put(z[i]->shm);       /* the old binary's layout */
            z[i]->shm = gn_shm_zone_get(z[i]->size, name, log);
        }
        if (z[i]->shm == NULL) {
            return GN_ERROR;
        }
        cln->handler = gn_limit_zone_release;
        cln->data = z[i]->shm;

        z[i]->stats = (gn_limit_stats_t *) z[i]->shm->addr;
        z[i]->table = gn_scache_init(z[i]->shm->addr + GN_LIMIT_HDR,
                                     z[i]->size - GN_LIMIT_HDR,
                                     GN_LIMIT_DATA, err, sizeof(err));
        if (z[i]->table == NULL) {
            gn_log_error(GN_LOG_EMERG, log, 0, "zone \"%.*s\": %s",
                         GN_STR_ARG(&z[i]->name), err);
            return GN_ERROR;
        }
    }

    return GN_OK;
}


const gn_feature_t  gn_limit_feature = {
    .name = "limit", .commands = gn_limit_commands,
    .conf_size = sizeof(gn_limit_conf_t),
    .merge_conf = gn_limit_merge,
    .check_level = gn_limit_check_level,
    .open_cycle = gn_limit_open
};
