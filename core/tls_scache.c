/*
 * The TLS session cache shared by all children (see tls_scache.h).
 *
 * Zone layout, all links are entry indices (GN_SCACHE_NIL = none):
 *
 *   gn_scache_t header (aligned to 64)
 *   uint32_t bucket[nbuckets]          head of each hash chain
 *   entry[nentries]                    fixed size: entry_size bytes
 *
 * nbuckets == nentries, so chains stay short. A free entry sits on the
 * free list (through `next`); a used one sits on its hash chain (through
 * `next`) and on the LRU list (through `prev` / `lru_next`), newest
 * stored at the head.
 *
 * Eviction order is "least recently stored": a retrieve does not move an
 * entry to the head. Sessions are stored once and read a few times with
 * one common timeout, so the oldest stored entry is also the one closest
 * to expiry; not touching the list on a hit keeps lookups cheap.
 *
 * Counters: `expired` counts entries dropped for age, both when a
 * retrieve finds one (that retrieve is also a miss) and when the oldest
 * entry is reclaimed for a store after it had already expired;
 * `evictions` counts only live entries dropped to make room.
 *
 * Edges of the contract: an empty key is declined like a too long one
 * (store, remove) or is a miss (retrieve); a value longer than the
 * caller's buffer is a miss and stays in the table.
 *
 * Every process runs one thread, so one robust process-shared mutex is
 * enough; only the memcpy of the key and value happens under it (the
 * caller serialises the session outside).
 */

#include "gn_config.h"

#include <pthread.h>

#include "tls_scache.h"


#define GN_SCACHE_MAGIC      0x676e736331ULL          /* "gnsc1" */
#define GN_SCACHE_VERSION    1
#define GN_SCACHE_NIL        UINT32_MAX
#define GN_SCACHE_MAX_N      (UINT32_MAX - 1)
#define GN_SCACHE_HDR_SIZE   gn_align(sizeof(gn_scache_t), (size_t) 64)


typedef struct {
    uint32_t    next;           /* hash chain, or free list */
    uint32_t    prev;           /* LRU: towards the head (newer) */
    uint32_t    lru_next;       /* LRU: towards the tail (older) */
    uint32_t    hash;
    int64_t     expire;         /* absolute, seconds */
    uint32_t    klen;
    uint32_t    dlen;
    u_char      key[GN_SCACHE_KEY_MAX];
    u_char      data[];         /* data_max bytes */
} gn_scache_entry_t;


struct gn_scache_s {
    uint64_t            magic;      /* written last by a format */
    uint32_t            version;
    uint32_t            hdr_size;
    uint64_t            zone_size;
    uint64_t            data_max;
    uint64_t            entry_size;
    uint64_t            buckets_off;
    uint64_t            entries_off;
    uint32_t            nentries;
    uint32_t            nbuckets;

    uint32_t            lru_head;
    uint32_t            lru_tail;
    uint32_t            free_head;
    uint32_t            used;

    uint64_t            stores;
    uint64_t            hits;
    uint64_t            misses;
    uint64_t            expired;
    uint64_t            evictions;
    uint64_t            removes;
    uint64_t            too_large;
    uint64_t            recovered;

    pthread_mutex_t     mutex;
};


static size_t gn_scache_entry_size(size_t data_max);
static void gn_scache_set_err(char *err, size_t errlen, const char *fmt, ...)
    gn_printf(3, 4);
static gn_int_t gn_scache_mutex_init(gn_scache_t *sc, char *err,
    size_t errlen);
static void gn_scache_clear(gn_scache_t *sc);
static gn_int_t gn_scache_lock(gn_scache_t *sc);
static uint32_t gn_scache_hash(const u_char *key, size_t klen);
static uint32_t gn_scache_find(gn_scache_t *sc, uint32_t hash,
    const u_char *key, size_t klen);
static void gn_scache_unlink(gn_scache_t *sc, uint32_t i);
static void gn_scache_lru_push(gn_scache_t *sc, uint32_t i);
static void gn_scache_lru_drop(gn_scache_t *sc, uint32_t i);
static uint32_t gn_scache_take(gn_scache_t *sc, uint32_t hash,
    const u_char *key, size_t klen, time_t now);

gn_int_t gn_scache_lock_for_test(gn_scache_t *sc);



#define gn_scache_buckets(sc)                                                 \
    ((uint32_t *) ((u_char *) (sc) + (sc)->buckets_off))
#define gn_scache_entry(sc, i)                                                \
    ((gn_scache_entry_t *) ((u_char *) (sc) + (sc)->entries_off              \
                            + (size_t) (i) * (sc)->entry_size))

/* alive while now < expire */
#define gn_scache_is_expired(e, now)    ((int64_t) (now) >= (e)->expire)


size_t
gn_scache_size(gn_uint_t entries, size_t data_max)
{
    size_t  esz;

    if (entries == 0 || entries > GN_SCACHE_MAX_N || data_max > UINT32_MAX) {
        return 0;
    }

    esz = gn_scache_entry_size(data_max);

    if (entries > (SIZE_MAX - GN_SCACHE_HDR_SIZE - 8) / (esz + 4)) {
        return 0;
    }

    return gn_align(GN_SCACHE_HDR_SIZE + entries * 4, (size_t) 8)
           + entries * esz;
}


gn_uint_t
gn_scache_entries_for(size_t size, size_t data_max)
{
    size_t     esz;
    gn_uint_t  n;

    if (data_max > UINT32_MAX || size <= GN_SCACHE_HDR_SIZE) {
        return 0;
    }

    esz = gn_scache_entry_size(data_max);
    n = (size - GN_SCACHE_HDR_SIZE) / (esz + 4);

    if (n > GN_SCACHE_MAX_N) {
        n = GN_SCACHE_MAX_N;
    }

    /* bucket alignment costs at most 4 bytes: one step back at most */
    while (n > 0 && gn_scache_size(n, data_max) > size) {
        n--;
    }

    return n;
}


int
gn_scache_compatible(void *zone, size_t size, size_t data_max)
{
    gn_scache_t  *sc = zone;

    return sc->magic == GN_SCACHE_MAGIC
           && sc->version == GN_SCACHE_VERSION
           && sc->hdr_size == sizeof(gn_scache_t)
           && sc->zone_size == size
           && sc->data_max == data_max
           && sc->nentries == gn_scache_entries_for(size, data_max);
}


gn_scache_t *
gn_scache_init(void *zone, size_t size, size_t data_max, char *err,
    size_t errlen)
{
    gn_uint_t     n;
    gn_scache_t  *sc;

    if (zone == NULL || ((uintptr_t) zone & (sizeof(uint64_t) - 1)) != 0) {
        gn_scache_set_err(err, errlen, "session cache zone %p is not aligned",
                          zone);
        return NULL;
    }

    n = gn_scache_entries_for(size, data_max);

    if (n == 0) {
        gn_scache_set_err(err, errlen,
                          "session cache zone of %zu bytes is too small for "
                          "one session of %zu bytes (%zu bytes needed)",
                          size, data_max, gn_scache_size(1, data_max));
        return NULL;
    }

    sc = zone;

    if (gn_scache_compatible(zone, size, data_max)) {
        /* same geometry (a reload, or a binary upgrade that passed the
         * zone): keep the sessions, the counters and the mutex, which
         * children of the old generation may hold */
        return sc;
    }

    memset(sc, 0, sizeof(gn_scache_t));

    sc->version = GN_SCACHE_VERSION;
    sc->hdr_size = sizeof(gn_scache_t);
    sc->zone_size = size;
    sc->data_max = data_max;
    sc->entry_size = gn_scache_entry_size(data_max);
    sc->buckets_off = GN_SCACHE_HDR_SIZE;
    sc->nentries = (uint32_t) n;
    sc->nbuckets = (uint32_t) n;
    sc->entries_off = gn_align(sc->buckets_off + (size_t) n * 4, (size_t) 8);

    if (gn_scache_mutex_init(sc, err, errlen) != GN_OK) {
        return NULL;
    }

    gn_scache_clear(sc);

    sc->magic = GN_SCACHE_MAGIC;

    return sc;
}


/* now + timeout, saturated */
static int64_t
gn_scache_expire(time_t now, time_t timeout)
{
    return (timeout > 0 && (int64_t) now > INT64_MAX - (int64_t) timeout)
           ? INT64_MAX : (int64_t) now + (int64_t) timeout;
}


gn_int_t
gn_scache_store(gn_scache_t *sc, const u_char *key, size_t klen,
    const u_char *data, size_t dlen, time_t now, time_t timeout)
{
    uint32_t            i, hash;
    int64_t             expire;
    gn_scache_entry_t  *e;

    if (klen == 0 || klen > GN_SCACHE_KEY_MAX) {
        return GN_DECLINED;
    }

    hash = gn_scache_hash(key, klen);
    expire = gn_scache_expire(now, timeout);

    if (gn_scache_lock(sc) != GN_OK) {
        return GN_ERROR;
    }

    if (dlen > sc->data_max) {
        sc->too_large++;
        (void) pthread_mutex_unlock(&sc->mutex);
        return GN_DECLINED;
    }

    i = gn_scache_find(sc, hash, key, klen);

    if (i != GN_SCACHE_NIL) {
        /* replace in place; it becomes the most recently stored */
        gn_scache_lru_drop(sc, i);
    } else {
        i = gn_scache_take(sc, hash, key, klen, now);
    }
    e = gn_scache_entry(sc, i);

    e->expire = expire;
    e->dlen = (uint32_t) dlen;

    if (dlen != 0) {
        memcpy(e->data, data, dlen);
    }

    gn_scache_lru_push(sc, i);
    sc->stores++;

    (void) pthread_mutex_unlock(&sc->mutex);

    return GN_OK;
}


/* A new entry for key, on its hash chain but on no LRU list: a free
 * one, else the least recently stored is dropped for it. Under the
 * lock. */
static uint32_t
gn_scache_take(gn_scache_t *sc, uint32_t hash, const u_char *key,
    size_t klen, time_t now)
{
    uint32_t            i, *bucket;
    gn_scache_entry_t  *e;

    if (sc->free_head == GN_SCACHE_NIL && sc->used == sc->nentries) {
        i = sc->lru_tail;
        e = gn_scache_entry(sc, i);

        if (gn_scache_is_expired(e, now)) {
            sc->expired++;
        } else {
            sc->evictions++;
        }

        gn_scache_unlink(sc, i);
    }

    if (sc->free_head != GN_SCACHE_NIL) {
        i = sc->free_head;
        sc->free_head = gn_scache_entry(sc, i)->next;

    } else {
        /* never used since the last clear: entries are handed out in
         * order, so `used` is the first untouched one */
        i = sc->used;
    }

    e = gn_scache_entry(sc, i);
    e->hash = hash;
    e->klen = (uint32_t) klen;
    memcpy(e->key, key, klen);

    bucket = &gn_scache_buckets(sc)[hash % sc->nbuckets];
    e->next = *bucket;
    *bucket = i;
    sc->used++;

    return i;
}


gn_int_t
gn_scache_update(gn_scache_t *sc, const u_char *key, size_t klen,
    time_t now, time_t timeout, gn_scache_update_pt update, void *arg)
{
    uint32_t            i, hash;
    int64_t             expire;
    gn_uint_t           fresh;
    gn_int_t            rc;
    gn_scache_entry_t  *e;

    if (klen == 0 || klen > GN_SCACHE_KEY_MAX) {
        return GN_DECLINED;
    }

    hash = gn_scache_hash(key, klen);
    expire = gn_scache_expire(now, timeout);

    if (gn_scache_lock(sc) != GN_OK) {
        return GN_ERROR;
    }

    i = gn_scache_find(sc, hash, key, klen);
    fresh = (i == GN_SCACHE_NIL);

    if (fresh) {
        i = gn_scache_take(sc, hash, key, klen, now);
        e = gn_scache_entry(sc, i);
        e->expire = expire;
        gn_scache_lru_push(sc, i);

    } else {
        e = gn_scache_entry(sc, i);
        if (gn_scache_is_expired(e, now)) {
            sc->expired++;
            fresh = 1;
        }
    }

    if (fresh) {
        memset(e->data, 0, sc->data_max);
        e->dlen = (uint32_t) sc->data_max;
    }

    rc = update(e->data, fresh, arg);

    if (rc == GN_DONE) {
        gn_scache_unlink(sc, i);
        sc->removes++;

    } else if (rc == GN_OK) {
        gn_scache_lru_drop(sc, i);
        e->expire = expire;
        gn_scache_lru_push(sc, i);
        sc->stores++;
    }

    (void) pthread_mutex_unlock(&sc->mutex);

    return rc;
}


ssize_t
gn_scache_retrieve(gn_scache_t *sc, const u_char *key, size_t klen,
    u_char *buf, size_t buflen, time_t now)
{
    ssize_t             n;
    uint32_t            i, hash;
    gn_flag_t           valid;
    gn_scache_entry_t  *e;

    /* a key that cannot have been stored is still counted as a miss */
    valid = (klen != 0 && klen <= GN_SCACHE_KEY_MAX);
    hash = valid ? gn_scache_hash(key, klen) : 0;

    if (gn_scache_lock(sc) != GN_OK) {
        return GN_ERROR;
    }

    n = GN_DECLINED;
    i = valid ? gn_scache_find(sc, hash, key, klen) : GN_SCACHE_NIL;

    if (i != GN_SCACHE_NIL) {
        e = gn_scache_entry(sc, i);

        if (gn_scache_is_expired(e, now)) {
            gn_scache_unlink(sc, i);
            sc->expired++;

        } else if (e->dlen <= buflen) {
            if (e->dlen != 0) {
                memcpy(buf, e->data, e->dlen);
            }
            n = (ssize_t) e->dlen;
        }
    }

    if (n == GN_DECLINED) {
        sc->misses++;
    } else {
        sc->hits++;
    }

    (void) pthread_mutex_unlock(&sc->mutex);

    return n;
}


gn_int_t
gn_scache_remove(gn_scache_t *sc, const u_char *key, size_t klen)
{
    uint32_t  i, hash;

    if (klen == 0 || klen > GN_SCACHE_KEY_MAX) {
        return GN_DECLINED;
    }

    hash = gn_scache_hash(key, klen);

    if (gn_scache_lock(sc) != GN_OK) {
        return GN_ERROR;
    }

    i = gn_scache_find(sc, hash, key, klen);

    if (i != GN_SCACHE_NIL) {
        gn_scache_unlink(sc, i);
        sc->removes++;
    }

    (void) pthread_mutex_unlock(&sc->mutex);

    return (i != GN_SCACHE_NIL) ? GN_OK : GN_DECLINED;
}


void
gn_scache_stats(gn_scache_t *sc, gn_scache_stats_t *st)
{
    gn_int_t  rc;

    /* with an unrecoverable mutex the copy is taken without it: the
     * counters are only numbers */
    rc = gn_scache_lock(sc);

    st->entries = sc->nentries;
    st->used = sc->used;
    st->stores = sc->stores;
    st->hits = sc->hits;
    st->misses = sc->misses;
    st->expired = sc->expired;
    st->evictions = sc->evictions;
    st->removes = sc->removes;
    st->too_large = sc->too_large;
    st->recovered = sc->recovered;

    if (rc == GN_OK) {
        (void) pthread_mutex_unlock(&sc->mutex);
    }
}


size_t
gn_scache_data_max(gn_scache_t *sc)
{
    return (size_t) sc->data_max;
}


/*
 * Tests only (t/unit/test_tls_scache.c declares it): takes the cache lock
 * the way every operation does and returns holding it, so a test child
 * can _exit() as an owner that died. Not declared in tls_scache.h on
 * purpose.
 */

gn_int_t
gn_scache_lock_for_test(gn_scache_t *sc)
{
    return gn_scache_lock(sc);
}


static size_t
gn_scache_entry_size(size_t data_max)
{
    return gn_align(offsetof(gn_scache_entry_t, data) + data_max,
                    (size_t) 8);
}


static void
gn_scache_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list  args;

    if (err == NULL || errlen == 0) {
        return;
    }

    va_start(args, fmt);
    (void) vsnprintf(err, errlen, fmt, args);
    va_end(args);
}


static gn_int_t
gn_scache_mutex_init(gn_scache_t *sc, char *err, size_t errlen)
{
    int                   rc;
    const char           *call;
    pthread_mutexattr_t   attr;

    rc = pthread_mutexattr_init(&attr);
    if (rc != 0) {
        gn_scache_set_err(err, errlen, "pthread_mutexattr_init() failed "
                          "(%d: %s)", rc, strerror(rc));
        return GN_ERROR;
    }

    call = "pthread_mutexattr_setpshared(PTHREAD_PROCESS_SHARED)";
    rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);

    if (rc == 0) {
        call = "pthread_mutexattr_setrobust(PTHREAD_MUTEX_ROBUST)";
        rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    }

    if (rc == 0) {
        call = "pthread_mutex_init()";
        rc = pthread_mutex_init(&sc->mutex, &attr);
    }

    (void) pthread_mutexattr_destroy(&attr);

    if (rc != 0) {
        gn_scache_set_err(err, errlen, "%s failed (%d: %s)",
                          call, rc, strerror(rc));
        return GN_ERROR;
    }

    return GN_OK;
}


/* Empties the table; the counters stay. Entries are not touched: the
 * allocator hands out never-used entries in index order (see store). */

static void
gn_scache_clear(gn_scache_t *sc)
{
    memset(gn_scache_buckets(sc), 0xff, (size_t) sc->nbuckets * 4);

    sc->lru_head = GN_SCACHE_NIL;
    sc->lru_tail = GN_SCACHE_NIL;
    sc->free_head = GN_SCACHE_NIL;
    sc->used = 0;
}


/* Returns GN_OK holding the lock. A previous owner that died may have
 * left the lists half-updated: the table is cleared, not repaired. */

static gn_int_t
gn_scache_lock(gn_scache_t *sc)
{
    int  rc;

    rc = pthread_mutex_lock(&sc->mutex);

    if (rc == 0) {
        return GN_OK;
    }

    if (rc != EOWNERDEAD) {
        return GN_ERROR;             /* ENOTRECOVERABLE and the like */
    }

    if (pthread_mutex_consistent(&sc->mutex) != 0) {
        (void) pthread_mutex_unlock(&sc->mutex);
        return GN_ERROR;
    }

    gn_scache_clear(sc);
    sc->recovered++;

    return GN_OK;
}


/* FNV-1a, 32 bits */

static uint32_t
gn_scache_hash(const u_char *key, size_t klen)
{
    size_t    n;
    uint32_t  h;

    h = 2166136261u;

    for (n = 0; n < klen; n++) {
        h ^= key[n];
        h *= 16777619u;
    }

    return h;
}


static uint32_t
gn_scache_find(gn_scache_t *sc, uint32_t hash, const u_char *key,
    size_t klen)
{
    uint32_t            i;
    gn_scache_entry_t  *e;

    for (i = gn_scache_buckets(sc)[hash % sc->nbuckets];
         i != GN_SCACHE_NIL;
         i = e->next)
    {
        e = gn_scache_entry(sc, i);

        if (e->hash == hash && e->klen == klen
            && memcmp(e->key, key, klen) == 0)
        {
            return i;
        }
    }

    return GN_SCACHE_NIL;
}


/* Takes a used entry off its hash chain and the LRU list and frees it. */

static void
gn_scache_unlink(gn_scache_t *sc, uint32_t i)
{
    uint32_t           *link;
    gn_scache_entry_t  *e;

    e = gn_scache_entry(sc, i);

    link = &gn_scache_buckets(sc)[e->hash % sc->nbuckets];

    while (*link != GN_SCACHE_NIL && *link != i) {
        link = &gn_scache_entry(sc, *link)->next;
    }

    if (*link == i) {
        *link = e->next;
    }

    gn_scache_lru_drop(sc, i);

    e->next = sc->free_head;
    sc->free_head = i;
    sc->used--;
}


static void
gn_scache_lru_push(gn_scache_t *sc, uint32_t i)
{
    gn_scache_entry_t  *e;

    e = gn_scache_entry(sc, i);

    e->prev = GN_SCACHE_NIL;
    e->lru_next = sc->lru_head;

    if (sc->lru_head != GN_SCACHE_NIL) {
        gn_scache_entry(sc, sc->lru_head)->prev = i;
    } else {
        sc->lru_tail = i;
    }

    sc->lru_head = i;
}


static void
gn_scache_lru_drop(gn_scache_t *sc, uint32_t i)
{
    gn_scache_entry_t  *e;

    e = gn_scache_entry(sc, i);

    if (e->prev != GN_SCACHE_NIL) {
        gn_scache_entry(sc, e->prev)->lru_next = e->lru_next;
    } else {
        sc->lru_head = e->lru_next;
    }

    if (e->lru_next != GN_SCACHE_NIL) {
        gn_scache_entry(sc, e->lru_next)->prev = e->prev;
    } else {
        sc->lru_tail = e->prev;
    }
}
