/*
 * Unit tests for the shared TLS session cache: sizes, store / retrieve /
 * remove, expiry, eviction, re-init over a live zone, children sharing
 * the zone, a random run against a simple model, and recovery from a
 * child that dies holding the lock.
 */

#include "gn_config.h"

#include <sys/mman.h>
#include <sys/wait.h>

#include "tls_scache.h"
#include "../tap.h"


/* tests only, defined in core/tls_scache.c and not in its header */
gn_int_t gn_scache_lock_for_test(gn_scache_t *sc);


#define DMAX          400
#define NCHILD        4
#define PER_CHILD     500
#define HAMMER        2000


static void *
zone_map(size_t size)
{
    void  *p;

    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED) {
        diag("mmap(%zu) failed: %s", size, strerror(errno));
        exit(1);
    }

    return p;
}


static size_t
mkkey(u_char *buf, const char *fmt, int a, int b)
{
    return (size_t) snprintf((char *) buf, GN_SCACHE_KEY_MAX + 1, fmt, a, b);
}


/* a value of 1..max bytes that depends on (a, b) */
static size_t
mkval(u_char *buf, size_t max, int a, int b)
{
    size_t  n, len;

    len = 1 + (size_t) (a * 131 + b * 7) % max;

    for (n = 0; n < len; n++) {
        buf[n] = (u_char) (a * 31 + b * 17 + (int) n);
    }

    return len;
}


static void
get_stats(gn_scache_t *sc, gn_scache_stats_t *st)
{
    memset(st, 0xee, sizeof(gn_scache_stats_t));
    gn_scache_stats(sc, st);
}


static void
test_sizes(void)
{
    size_t     size;
    gn_uint_t  n, bad;

    size = gn_scache_size(100, DMAX);
    ok(size > 100 * (DMAX + GN_SCACHE_KEY_MAX), "size covers 100 entries");
    is_int(gn_scache_entries_for(size, DMAX), 100, "entries_for(size(100))");
    is_int(gn_scache_entries_for(size - 1, DMAX), 99, "one byte less: 99");
    is_int(gn_scache_size(0, DMAX), 0, "size(0 entries) is 0");
    is_int(gn_scache_entries_for(0, DMAX), 0, "entries_for(0) is 0");
    is_int(gn_scache_entries_for(64, DMAX), 0, "entries_for(tiny) is 0");

    bad = 0;
    for (n = 1; n <= 400; n++) {
        size = gn_scache_size(n, n * 3);
        if (gn_scache_entries_for(size, n * 3) != n
            || gn_scache_entries_for(size - 1, n * 3) != n - 1
            || gn_scache_size(n + 1, n * 3) <= size)
        {
            bad++;
        }
    }
    is_int(bad, 0, "size and entries_for agree for 400 geometries");
}


static void
test_basic(void)
{
    char                err[256];
    u_char              buf[DMAX], key[GN_SCACHE_KEY_MAX + 8], big[DMAX + 1];
    size_t              size;
    ssize_t             n;
    gn_scache_t        *sc;
    gn_scache_stats_t   st;
    void               *zone;

    size = gn_scache_size(50, DMAX);
    zone = zone_map(size);

    err[0] = '\0';
    ok(gn_scache_init(zone, 64, DMAX, err, sizeof(err)) == NULL,
       "a 64-byte zone is too small");
    ok(err[0] != '\0', "with a reason: %s", err);

    sc = gn_scache_init(zone, size, DMAX, err, sizeof(err));
    ok(sc != NULL, "init");
    is_int(gn_scache_data_max(sc), DMAX, "data_max");

    get_stats(sc, &st);
    ok(st.entries == 50 && st.used == 0 && st.stores == 0 && st.hits == 0
       && st.recovered == 0, "fresh stats: 50 entries, all zero");

    is_int(gn_scache_retrieve(sc, (u_char *) "abc", 3, buf, sizeof(buf), 0),
           GN_DECLINED, "miss on an empty cache");

    is_int(gn_scache_store(sc, (u_char *) "abc", 3, (u_char *) "value-1", 7,
                           100, 60), GN_OK, "store abc");
    n = gn_scache_retrieve(sc, (u_char *) "abc", 3, buf, sizeof(buf), 100);
    is_str(buf, n > 0 ? (size_t) n : 0, "value-1", "retrieve abc");

    is_int(gn_scache_store(sc, (u_char *) "abc", 3, (u_char *) "second", 6,
                           101, 60), GN_OK, "store abc again");
    n = gn_scache_retrieve(sc, (u_char *) "abc", 3, buf, sizeof(buf), 101);
    is_str(buf, n > 0 ? (size_t) n : 0, "second", "the value was replaced");
    get_stats(sc, &st);
    is_int(st.used, 1, "a replace does not add an entry");

    /* keys that share prefixes */
    gn_scache_store(sc, (u_char *) "ab", 2, (u_char *) "two", 3, 100, 60);
    gn_scache_store(sc, (u_char *) "abcd", 4, (u_char *) "four", 4, 100, 60);
    gn_scache_store(sc, (u_char *) "a", 1, (u_char *) "one", 3, 100, 60);
    n = gn_scache_retrieve(sc, (u_char *) "ab", 2, buf, sizeof(buf), 100);
    is_str(buf, n > 0 ? (size_t) n : 0, "two", "prefix key ab");
    n = gn_scache_retrieve(sc, (u_char *) "abcd", 4, buf, sizeof(buf), 100);
    is_str(buf, n > 0 ? (size_t) n : 0, "four", "longer key abcd");
    n = gn_scache_retrieve(sc, (u_char *) "a", 1, buf, sizeof(buf), 100);
    is_str(buf, n > 0 ? (size_t) n : 0, "one", "one-byte key a");
    n = gn_scache_retrieve(sc, (u_char *) "abc", 3, buf, sizeof(buf), 100);
    is_str(buf, n > 0 ? (size_t) n : 0, "second", "abc untouched");
    is_int(gn_scache_retrieve(sc, (u_char *) "abcde", 5, buf, sizeof(buf),
                              100), GN_DECLINED, "abcde is not there");

    /* binary keys: a NUL inside, same bytes up to it */
    gn_scache_store(sc, (u_char *) "k\0x", 3, (u_char *) "nul-x", 5, 100, 60);
    gn_scache_store(sc, (u_char *) "k\0y", 3, (u_char *) "nul-y", 5, 100, 60);
    n = gn_scache_retrieve(sc, (u_char *) "k\0y", 3, buf, sizeof(buf), 100);
    is_str(buf, n > 0 ? (size_t) n : 0, "nul-y", "keys with a NUL byte");

    /* remove */
    is_int(gn_scache_remove(sc, (u_char *) "ab", 2), GN_OK, "remove ab");
    is_int(gn_scache_remove(sc, (u_char *) "ab", 2), GN_DECLINED,
           "remove ab again: declined");
    is_int(gn_scache_retrieve(sc, (u_char *) "ab", 2, buf, sizeof(buf), 100),
           GN_DECLINED, "ab is gone");
    n = gn_scache_retrieve(sc, (u_char *) "abc", 3, buf, sizeof(buf), 100);
    ok(n == 6, "abc survives the removal of ab");

    /* sizes of values and keys */
    memset(big, 'v', sizeof(big));
    is_int(gn_scache_store(sc, (u_char *) "big", 3, big, DMAX + 1, 100, 60),
           GN_DECLINED, "value of data_max + 1 bytes declined");
    is_int(gn_scache_retrieve(sc, (u_char *) "big", 3, buf, sizeof(buf), 100),
           GN_DECLINED, "and not stored");
    is_int(gn_scache_store(sc, (u_char *) "big", 3, big, DMAX, 100, 60),
           GN_OK, "value of data_max bytes stored");
    n = gn_scache_retrieve(sc, (u_char *) "big", 3, buf, sizeof(buf), 100);
    ok(n == DMAX && memcmp(buf, big, DMAX) == 0, "and read back whole");
    is_int(gn_scache_retrieve(sc, (u_char *) "big", 3, buf, DMAX - 1, 100),
           GN_DECLINED, "a buffer smaller than the value: miss");

    is_int(gn_scache_store(sc, (u_char *) "empty", 5, NULL, 0, 100, 60),
           GN_OK, "empty value stored");
    is_int(gn_scache_retrieve(sc, (u_char *) "empty", 5, buf, sizeof(buf),
                              100), 0, "empty value: length 0, not a miss");

    memset(key, 'K', sizeof(key));
    is_int(gn_scache_store(sc, key, GN_SCACHE_KEY_MAX + 1, big, 10, 100, 60),
           GN_DECLINED, "key of KEY_MAX + 1 bytes declined");
    is_int(gn_scache_store(sc, key, GN_SCACHE_KEY_MAX, big, 10, 100, 60),
           GN_OK, "key of KEY_MAX bytes stored");
    is_int(gn_scache_retrieve(sc, key, GN_SCACHE_KEY_MAX, buf, sizeof(buf),
                              100), 10, "and found");
    is_int(gn_scache_retrieve(sc, key, GN_SCACHE_KEY_MAX + 1, buf,
                              sizeof(buf), 100), GN_DECLINED,
           "a too long key is a miss");
    is_int(gn_scache_store(sc, key, 0, big, 10, 100, 60), GN_DECLINED,
           "an empty key is declined");

    get_stats(sc, &st);
    is_int(st.too_large, 1, "too_large counted once");
    is_int(st.removes, 1, "removes counted");
    is_int(st.used, 8, "used: a abc abcd k0x k0y big empty K*64");
    ok(st.stores == 10 && st.hits == 11 && st.misses == 6,
       "stores 10 hits 11 misses 6 (got %llu %llu %llu)",
       (unsigned long long) st.stores, (unsigned long long) st.hits,
       (unsigned long long) st.misses);

    munmap(zone, size);
}


static void
test_expiry(void)
{
    u_char              buf[DMAX], key[GN_SCACHE_KEY_MAX + 1];
    size_t              size, klen;
    ssize_t             n;
    gn_uint_t           i;
    gn_scache_t        *sc;
    gn_scache_stats_t   st;
    void               *zone;

    size = gn_scache_size(8, DMAX);
    zone = zone_map(size);
    sc = gn_scache_init(zone, size, DMAX, NULL, 0);

    gn_scache_store(sc, (u_char *) "s", 1, (u_char *) "sess", 4, 1000, 300);
    n = gn_scache_retrieve(sc, (u_char *) "s", 1, buf, sizeof(buf), 1299);
    is_int(n, 4, "alive 1 s before expiry");
    is_int(gn_scache_retrieve(sc, (u_char *) "s", 1, buf, sizeof(buf), 1300),
           GN_DECLINED, "expired at store time + timeout");
    get_stats(sc, &st);
    ok(st.expired == 1 && st.misses == 1 && st.hits == 1 && st.used == 0,
       "expired counted as a miss and removed");
    is_int(gn_scache_retrieve(sc, (u_char *) "s", 1, buf, sizeof(buf), 1000),
           GN_DECLINED, "gone even for an earlier now");

    /* a full table whose oldest entry has expired: reclaimed, not evicted */
    for (i = 0; i < 8; i++) {
        klen = mkkey(key, "e%d%d", (int) i, 0);
        gn_scache_store(sc, key, klen, (u_char *) "x", 1, (time_t) i, 10);
    }
    gn_scache_store(sc, (u_char *) "new", 3, (u_char *) "y", 1, 10, 10);
    get_stats(sc, &st);
    ok(st.expired == 2 && st.evictions == 0 && st.used == 8,
       "an expired oldest entry is reclaimed as expired, not evicted");
    gn_scache_store(sc, (u_char *) "new2", 4, (u_char *) "y", 1, 10, 10);
    get_stats(sc, &st);
    ok(st.expired == 2 && st.evictions == 1, "a live oldest one is evicted");
    klen = mkkey(key, "e%d%d", 2, 0);
    is_int(gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 10), 1,
           "the third oldest is still there");

    /* huge timeout: no overflow */
    is_int(gn_scache_store(sc, (u_char *) "far", 3, (u_char *) "z", 1,
                           (time_t) INT64_MAX - 5, (time_t) INT64_MAX),
           GN_OK, "huge timeout stored");
    is_int(gn_scache_retrieve(sc, (u_char *) "far", 3, buf, sizeof(buf),
                              (time_t) INT64_MAX - 1), 1,
           "huge timeout: still alive near the end of time");

    munmap(zone, size);
}


static void
test_eviction(void)
{
    u_char              buf[DMAX], key[GN_SCACHE_KEY_MAX + 1], val[DMAX];
    size_t              size, klen, vlen;
    ssize_t             n;
    gn_uint_t           cap, i, gone, present;
    gn_scache_t        *sc;
    gn_scache_stats_t   st;
    void               *zone;

    /* a zone a bit larger than 200 entries: capacity from entries_for */
    size = gn_scache_size(200, DMAX) + DMAX / 2;
    zone = zone_map(size);
    sc = gn_scache_init(zone, size, DMAX, NULL, 0);
    cap = gn_scache_entries_for(size, DMAX);
    is_int(cap, 200, "200 entries fit");

    for (i = 0; i < cap + 37; i++) {
        klen = mkkey(key, "evict-%d-%d", (int) i, (int) (i * 7));
        vlen = mkval(val, DMAX, (int) i, 1);
        gn_scache_store(sc, key, klen, val, vlen, 500, 3600);
    }

    gone = 0;
    present = 0;

    for (i = 0; i < cap + 37; i++) {
        klen = mkkey(key, "evict-%d-%d", (int) i, (int) (i * 7));
        vlen = mkval(val, DMAX, (int) i, 1);
        n = gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 501);

        if (i < 37) {
            gone += (n == GN_DECLINED);
        } else {
            present += (n == (ssize_t) vlen && memcmp(buf, val, vlen) == 0);
        }
    }

    is_int(gone, 37, "the 37 oldest were evicted");
    is_int(present, cap, "the newest %lu are all there", (unsigned long) cap);
    get_stats(sc, &st);
    ok(st.evictions == 37 && st.expired == 0 && st.used == cap,
       "evictions 37, used == capacity");

    /* a replace makes an entry the newest: it survives the next eviction */
    klen = mkkey(key, "evict-%d-%d", 37, 37 * 7);
    gn_scache_store(sc, key, klen, (u_char *) "renewed", 7, 502, 3600);
    gn_scache_store(sc, (u_char *) "push", 4, (u_char *) "p", 1, 502, 3600);
    n = gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 502);
    is_str(buf, n > 0 ? (size_t) n : 0, "renewed",
           "a re-stored entry is not the oldest any more");
    klen = mkkey(key, "evict-%d-%d", 38, 38 * 7);
    is_int(gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 502),
           GN_DECLINED, "the next oldest went instead");

    munmap(zone, size);
}


static void
test_reinit(void)
{
    u_char              buf[DMAX];
    size_t              size;
    gn_scache_t        *sc, *sc2;
    gn_scache_stats_t   st;
    void               *zone;

    size = gn_scache_size(20, DMAX);
    zone = zone_map(size);
    sc = gn_scache_init(zone, size, DMAX, NULL, 0);

    gn_scache_store(sc, (u_char *) "keep", 4, (u_char *) "me", 2, 10, 100);
    gn_scache_store(sc, (u_char *) "and", 3, (u_char *) "me", 2, 10, 100);

    sc2 = gn_scache_init(zone, size, DMAX, NULL, 0);
    ok(sc2 == sc, "re-init with the same geometry");
    is_int(gn_scache_retrieve(sc2, (u_char *) "keep", 4, buf, sizeof(buf),
                              11), 2, "keeps the entries");
    get_stats(sc2, &st);
    ok(st.stores == 2 && st.used == 2, "and the counters");

    sc2 = gn_scache_init(zone, size, DMAX - 8, NULL, 0);
    ok(sc2 != NULL, "re-init with another data_max");
    is_int(gn_scache_retrieve(sc2, (u_char *) "keep", 4, buf, sizeof(buf),
                              11), GN_DECLINED, "formats the zone");
    get_stats(sc2, &st);
    ok(st.stores == 0 && st.used == 0 && st.misses == 1, "counters reset");

    gn_scache_store(sc2, (u_char *) "keep", 4, (u_char *) "me", 2, 10, 100);
    sc = gn_scache_init(zone, size - 1024, DMAX - 8, NULL, 0);
    is_int(gn_scache_retrieve(sc, (u_char *) "keep", 4, buf, sizeof(buf),
                              11), GN_DECLINED,
           "re-init with another size formats the zone");
    is_int(gn_scache_store(sc, (u_char *) "x", 1, (u_char *) "y", 1, 10, 100),
           GN_OK, "and it works afterwards");

    munmap(zone, size);
}


/*
 * A random run on a small table (chains collide, evictions and expiry
 * happen all the time) compared with a plain array model.
 */

#define M_CAP    16
#define M_KEYS   40
#define M_VMAX   24
#define M_OPS    20000

typedef struct {
    int         used;
    int         key;
    size_t      vlen;
    u_char      val[M_VMAX];
    int64_t     expire;
    uint64_t    seq;
} model_ent_t;


static uint32_t
rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}


static void
test_model(void)
{
    int                 k, j, op, bad, victim;
    u_char              key[GN_SCACHE_KEY_MAX + 1], val[M_VMAX], buf[M_VMAX];
    size_t              size, klen, vlen;
    ssize_t             n, want;
    int64_t             now, tmo;
    uint32_t            seed;
    uint64_t            seq, m_stores, m_hits, m_misses, m_expired, m_evict,
                        m_removes;
    gn_int_t            rc;
    gn_scache_t        *sc;
    gn_scache_stats_t   st;
    model_ent_t         m[M_CAP];
    void               *zone;

    size = gn_scache_size(M_CAP, M_VMAX);
    zone = zone_map(size);
    sc = gn_scache_init(zone, size, M_VMAX, NULL, 0);

    memset(m, 0, sizeof(m));
    seed = 2463534242u;
    seq = 0;
    now = 1000;
    bad = 0;
    m_stores = m_hits = m_misses = m_expired = m_evict = m_removes = 0;

    for (op = 0; op < M_OPS; op++) {
        now += (rnd(&seed) % 4 == 0);
        k = (int) (rnd(&seed) % M_KEYS);
        klen = mkkey(key, "%d%.0d", k * 10 + 1, 0);     /* prefixes */

        for (j = 0; j < M_CAP; j++) {
            if (m[j].used && m[j].key == k) {
                break;
            }
        }

        switch (rnd(&seed) % 20) {

        case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
        case 8:
            vlen = rnd(&seed) % (M_VMAX + 1);
            for (n = 0; n < (ssize_t) vlen; n++) {
                val[n] = (u_char) rnd(&seed);
            }
            tmo = (rnd(&seed) % 8 == 0) ? 0 : (int64_t) (rnd(&seed) % 40);

            rc = gn_scache_store(sc, key, klen, val, vlen, (time_t) now,
                                 (time_t) tmo);
            bad += (rc != GN_OK);

            if (j == M_CAP) {
                victim = -1;
                for (j = 0; j < M_CAP; j++) {
                    if (!m[j].used) {
                        break;
                    }
                    if (victim == -1 || m[j].seq < m[victim].seq) {
                        victim = j;
                    }
                }
                if (j == M_CAP) {
                    j = victim;
                    if (now >= m[j].expire) {
                        m_expired++;
                    } else {
                        m_evict++;
                    }
                }
            }

            m[j].used = 1;
            m[j].key = k;
            m[j].vlen = vlen;
            memcpy(m[j].val, val, vlen);
            m[j].expire = now + tmo;
            m[j].seq = ++seq;
            m_stores++;
            break;

        case 9: case 10: case 11: case 12: case 13: case 14: case 15:
        case 16:
            n = gn_scache_retrieve(sc, key, klen, buf, sizeof(buf),
                                   (time_t) now);
            want = GN_DECLINED;

            if (j < M_CAP && now >= m[j].expire) {
                m[j].used = 0;
                m_expired++;

            } else if (j < M_CAP) {
                want = (ssize_t) m[j].vlen;
                if (n == want && memcmp(buf, m[j].val, m[j].vlen) != 0) {
                    bad++;
                }
            }

            if (want == GN_DECLINED) {
                m_misses++;
            } else {
                m_hits++;
            }

            bad += (n != want);
            break;

        default:
            rc = gn_scache_remove(sc, key, klen);
            bad += (rc != (j < M_CAP ? GN_OK : GN_DECLINED));
            if (j < M_CAP) {
                m[j].used = 0;
                m_removes++;
            }
            break;
        }
    }

    is_int(bad, 0, "%d random operations agree with the model", M_OPS);

    get_stats(sc, &st);
    for (k = 0, j = 0; j < M_CAP; j++) {
        k += m[j].used;
    }
    is_int(st.used, k, "used agrees with the model");
    ok(st.stores == m_stores && st.hits == m_hits && st.misses == m_misses
       && st.removes == m_removes,
       "stores %llu hits %llu misses %llu removes %llu as the model",
       (unsigned long long) st.stores, (unsigned long long) st.hits,
       (unsigned long long) st.misses, (unsigned long long) st.removes);
    ok(st.expired == m_expired && st.evictions == m_evict,
       "expired %llu evictions %llu as the model",
       (unsigned long long) st.expired, (unsigned long long) st.evictions);
    ok(m_expired > 100 && m_evict > 100 && m_removes > 100,
       "the run exercised expiry, eviction and removal");

    munmap(zone, size);
}


/* Child `c` of the fork test; the exit status is its number of errors. */

static int
fork_child(gn_scache_t *sc, int c, int ready, int go)
{
    int      i, o, errors;
    char     b;
    u_char   key[GN_SCACHE_KEY_MAX + 1], val[DMAX], buf[DMAX];
    size_t   klen, vlen;
    ssize_t  n;

    errors = 0;

    for (i = 0; i < PER_CHILD; i++) {
        klen = mkkey(key, "child-%d-key-%d", c, i);
        vlen = mkval(val, DMAX, c, i);
        errors += (gn_scache_store(sc, key, klen, val, vlen, 100, 3600)
                   != GN_OK);
    }

    if (write(ready, "r", 1) != 1 || read(go, &b, 1) != 1) {
        return 100;
    }

    /* everybody's keys, while the others read and write too */
    for (o = 0; o < NCHILD; o++) {
        for (i = 0; i < PER_CHILD; i++) {
            klen = mkkey(key, "child-%d-key-%d", o, i);
            vlen = mkval(val, DMAX, o, i);
            n = gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 101);
            errors += (n != (ssize_t) vlen || memcmp(buf, val, vlen) != 0);
        }
    }

    for (i = 0; i < HAMMER; i++) {
        klen = mkkey(key, "hammer-%d-%d", c, i);
        vlen = mkval(val, DMAX, c + 10, i);
        errors += (gn_scache_store(sc, key, klen, val, vlen, 101, 3600)
                   != GN_OK);
        n = gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 101);
        errors += (n != (ssize_t) vlen || memcmp(buf, val, vlen) != 0);
        errors += (gn_scache_remove(sc, key, klen) != GN_OK);
    }

    return errors > 99 ? 99 : errors;
}


static void
test_fork(void)
{
    int                 ready[2], go[2], i, c, status, all, found;
    char                b;
    u_char              key[GN_SCACHE_KEY_MAX + 1], val[DMAX], buf[DMAX];
    pid_t               pid[NCHILD];
    size_t              size, klen, vlen;
    ssize_t             n;
    gn_scache_t        *sc;
    gn_scache_stats_t   st;
    void               *zone;

    size = gn_scache_size(NCHILD * PER_CHILD + NCHILD, DMAX);
    zone = zone_map(size);
    sc = gn_scache_init(zone, size, DMAX, NULL, 0);

    if (pipe(ready) == -1 || pipe(go) == -1) {
        diag("pipe() failed: %s", strerror(errno));
        exit(1);
    }

    fflush(stdout);

    for (c = 0; c < NCHILD; c++) {
        pid[c] = fork();
        if (pid[c] == 0) {
            close(ready[0]);
            close(go[1]);
            _exit(fork_child(sc, c, ready[1], go[0]));
        }
        if (pid[c] == -1) {
            diag("fork() failed: %s", strerror(errno));
            exit(1);
        }
    }

    close(ready[1]);
    close(go[0]);

    /* barrier: all children have stored before anyone reads */
    for (c = 0; c < NCHILD; c++) {
        if (read(ready[0], &b, 1) != 1) {
            break;
        }
    }
    is_int(c, NCHILD, "all children stored their keys");

    for (c = 0; c < NCHILD; c++) {
        if (write(go[1], "g", 1) != 1) {
            break;
        }
    }
    close(go[1]);
    close(ready[0]);

    all = 1;
    for (c = 0; c < NCHILD; c++) {
        if (waitpid(pid[c], &status, 0) != pid[c]
            || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        {
            diag("child %d: status 0x%x", c, status);
            all = 0;
        }
    }
    ok(all, "%d children found each other's %d keys and hammered",
       NCHILD, PER_CHILD);

    found = 0;
    for (c = 0; c < NCHILD; c++) {
        for (i = 0; i < PER_CHILD; i++) {
            klen = mkkey(key, "child-%d-key-%d", c, i);
            vlen = mkval(val, DMAX, c, i);
            n = gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 102);
            found += (n == (ssize_t) vlen && memcmp(buf, val, vlen) == 0);
        }
    }
    is_int(found, NCHILD * PER_CHILD, "the parent sees all of them");

    get_stats(sc, &st);
    ok(st.stores == NCHILD * (PER_CHILD + HAMMER)
       && st.removes == NCHILD * HAMMER
       && st.used == NCHILD * PER_CHILD
       && st.evictions == 0 && st.misses == 0
       && st.hits == NCHILD * (NCHILD * PER_CHILD + HAMMER)
                     + NCHILD * PER_CHILD,
       "shared counters add up (stores %llu hits %llu used %llu)",
       (unsigned long long) st.stores, (unsigned long long) st.hits,
       (unsigned long long) st.used);

    munmap(zone, size);
}


static void
test_robust(void)
{
    int                 status, p[2];
    char                b;
    u_char              buf[DMAX], key[GN_SCACHE_KEY_MAX + 1];
    pid_t               pid, pid2;
    size_t              size, klen;
    gn_uint_t           i, found;
    gn_scache_t        *sc;
    gn_scache_stats_t   st;
    void               *zone;

    size = gn_scache_size(64, DMAX);
    zone = zone_map(size);
    sc = gn_scache_init(zone, size, DMAX, NULL, 0);

    gn_scache_store(sc, (u_char *) "old", 3, (u_char *) "v", 1, 10, 100);

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        _exit(gn_scache_lock_for_test(sc) == GN_OK ? 0 : 1);
    }

    ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
       && WEXITSTATUS(status) == 0, "a child died holding the lock");

    is_int(gn_scache_store(sc, (u_char *) "new", 3, (u_char *) "w", 1, 10,
                           100), GN_OK, "the next store succeeds");
    get_stats(sc, &st);
    is_int(st.recovered, 1, "recovered counted");
    ok(st.used == 1 && st.stores == 2, "table cleared, counters kept");
    is_int(gn_scache_retrieve(sc, (u_char *) "old", 3, buf, sizeof(buf), 11),
           GN_DECLINED, "entries from before are gone");
    is_int(gn_scache_retrieve(sc, (u_char *) "new", 3, buf, sizeof(buf), 11),
           1, "the new one is there");

    found = 0;
    for (i = 0; i < 200; i++) {
        klen = mkkey(key, "after-%d-%d", (int) i, 0);
        gn_scache_store(sc, key, klen, key, klen, 10, 100);
    }
    for (i = 200 - 64; i < 200; i++) {
        klen = mkkey(key, "after-%d-%d", (int) i, 0);
        found += (gn_scache_retrieve(sc, key, klen, buf, sizeof(buf), 11)
                  == (ssize_t) klen && memcmp(buf, key, klen) == 0);
    }
    is_int(found, 64, "the cache works afterwards (with evictions)");

    /* the owner dies while another child is blocked on the lock */
    if (pipe(p) == -1) {
        diag("pipe() failed: %s", strerror(errno));
        exit(1);
    }

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (gn_scache_lock_for_test(sc) != GN_OK || write(p[1], "l", 1) != 1) {
            _exit(1);
        }
        usleep(200000);
        _exit(0);
    }

    close(p[1]);
    if (read(p[0], &b, 1) != 1) {
        diag("the locking child did not report");
    }
    close(p[0]);

    pid2 = fork();
    if (pid2 == 0) {
        /* blocks until the first child dies */
        if (gn_scache_store(sc, (u_char *) "waiter", 6, (u_char *) "ok", 2,
                            20, 100) != GN_OK)
        {
            _exit(1);
        }
        _exit(gn_scache_retrieve(sc, (u_char *) "waiter", 6, buf, sizeof(buf),
                                 21) == 2 ? 0 : 2);
    }

    ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status)
       && WEXITSTATUS(status) == 0, "a second child died holding the lock");
    ok(pid2 > 0 && waitpid(pid2, &status, 0) == pid2 && WIFEXITED(status)
       && WEXITSTATUS(status) == 0, "a child blocked on it went on");

    get_stats(sc, &st);
    ok(st.recovered == 2 && st.used == 1, "recovered twice, one entry");
    is_int(gn_scache_retrieve(sc, (u_char *) "waiter", 6, buf, sizeof(buf),
                              21), 2, "the waiter's entry is there");

    munmap(zone, size);
}


/* gn_scache_update's callbacks: a counter in the first 8 bytes. */
static gn_int_t
upd_inc(u_char *data, gn_uint_t fresh, void *arg)
{
    uint64_t  v;

    memcpy(&v, data, sizeof(v));
    if (fresh && v != 0) {
        return GN_ERROR;                 /* a fresh value is zeroed */
    }
    if (arg != NULL && v >= *(uint64_t *) arg) {
        return GN_BUSY;                  /* at the cap: unchanged */
    }
    v++;
    memcpy(data, &v, sizeof(v));
    return GN_OK;
}


static gn_int_t
upd_dec(u_char *data, gn_uint_t fresh, void *arg)
{
    uint64_t  v;

    (void) arg;
    memcpy(&v, data, sizeof(v));
    if (fresh || v <= 1) {
        return GN_DONE;
    }
    v--;
    memcpy(data, &v, sizeof(v));
    return GN_OK;
}


static uint64_t
counter_of(gn_scache_t *sc, const char *key, time_t now)
{
    u_char    buf[DMAX];
    uint64_t  v;
    ssize_t   n;

    n = gn_scache_retrieve(sc, (u_char *) key, strlen(key), buf, sizeof(buf),
                           now);
    if (n < (ssize_t) sizeof(v)) {
        return 0;
    }
    memcpy(&v, buf, sizeof(v));
    return v;
}


/* Read-modify-write under the lock: created zeroed, changed in place,
 * GN_DONE removes, any other result leaves it; expiry makes it fresh;
 * four processes adding to one counter lose nothing. */
static void
test_update(void)
{
    gn_scache_stats_t  st;
    gn_scache_t       *sc;
    uint64_t           cap = 3;
    size_t             size;
    void              *zone;
    pid_t              pid[NCHILD];
    int                c, i, status, bad;

    size = gn_scache_size(4, 16);
    zone = zone_map(size);
    sc = gn_scache_init(zone, size, 16, NULL, 0);
    ok(sc != NULL, "update: a table of 4 entries of 16 bytes");

    is_int(gn_scache_update(sc, (u_char *) "k", 1, 100, 10, upd_inc, &cap),
           GN_OK, "update: a new key");
    is_int((int) counter_of(sc, "k", 100), 1, "update: it starts at zero");
    (void) gn_scache_update(sc, (u_char *) "k", 1, 101, 10, upd_inc, &cap);
    (void) gn_scache_update(sc, (u_char *) "k", 1, 102, 10, upd_inc, &cap);
    is_int(gn_scache_update(sc, (u_char *) "k", 1, 103, 10, upd_inc, &cap),
           GN_BUSY, "update: the callback's own result is returned");
    is_int((int) counter_of(sc, "k", 103), 3, "update: ... unchanged");
    is_int(gn_scache_update(sc, (u_char *) "k", 1, 120, 10, upd_inc, &cap),
           GN_OK, "update: expired is fresh again");
    is_int((int) counter_of(sc, "k", 120), 1, "update: ... from zero");

    (void) gn_scache_update(sc, (u_char *) "k", 1, 121, 10, upd_inc, &cap);
    (void) gn_scache_update(sc, (u_char *) "k", 1, 121, 10, upd_dec, NULL);
    is_int((int) counter_of(sc, "k", 121), 1, "update: down by one");
    is_int(gn_scache_update(sc, (u_char *) "k", 1, 121, 10, upd_dec, NULL),
           GN_DONE, "update: GN_DONE at the last one");
    get_stats(sc, &st);
    is_int((int) st.used, 0, "update: GN_DONE removed the entry");

    is_int(gn_scache_update(sc, (u_char *) "", 0, 121, 10, upd_inc, NULL),
           GN_DECLINED, "update: an empty key is declined");

    for (i = 0; i < 6; i++) {
        char  key[8];

        snprintf(key, sizeof(key), "e%d", i);
        (void) gn_scache_update(sc, (u_char *) key, strlen(key), 130 + i, 100,
                                upd_inc, NULL);
    }
    get_stats(sc, &st);
    is_int((int) st.used, 4, "update: a full table stays full");
    is_int((int) st.evictions, 2, "update: the least recently used go");
    is_int((int) counter_of(sc, "e0", 140), 0, "update: e0 was evicted");
    is_int((int) counter_of(sc, "e5", 140), 1, "update: e5 is there");

    for (c = 0; c < NCHILD; c++) {
        pid[c] = fork();
        if (pid[c] == 0) {
            bad = 0;
            for (i = 0; i < HAMMER; i++) {
                bad += gn_scache_update(sc, (u_char *) "shared", 6, 200, 100,
                                        upd_inc, NULL) != GN_OK;
            }
            _exit(bad);
        }
    }
    bad = 0;
    for (c = 0; c < NCHILD; c++) {
        if (pid[c] < 0 || waitpid(pid[c], &status, 0) != pid[c]
            || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        {
            bad++;
        }
    }
    is_int(bad, 0, "update: four processes, every update GN_OK");
    is_int((int) counter_of(sc, "shared", 200), NCHILD * HAMMER,
           "update: ... and none of them lost");

    munmap(zone, size);
}


int
main(void)
{
    test_sizes();
    test_basic();
    test_expiry();
    test_eviction();
    test_reinit();
    test_model();
    test_fork();
    test_update();
    test_robust();

    return done_testing();
}
