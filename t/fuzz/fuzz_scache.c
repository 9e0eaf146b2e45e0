/*
 * libFuzzer harness: the TLS session cache (core/tls_scache.c) on a small
 * zone in ordinary memory, against a model of what it promises.
 *
 * Input: byte 0 sets the capacity (1..8 entries), byte 1 the slot size
 * (0..63 bytes); the rest is a list of operations:
 *
 *   op byte: low 2 bits  0 store, 1 retrieve, 2 remove, 3 re-init
 *            bits 2-3    the clock advances by 0..3 seconds
 *            bits 4-7    store: timeout 0..15 s
 *   key:  one byte k; length = (k >> 4) (0 gives 65: too long, refused),
 *         bytes = the low 4 bits repeated (16 distinct keys per length)
 *   store value: one length byte (mod 80: may exceed the slot), then the
 *         value bytes taken from the input
 *
 * The model is a list in order of storing: a store of a new key when the
 * table is full drops the least recently stored entry, a retrieve of an
 * expired entry drops it, a store replaces an entry with the same key, a
 * re-init with the same geometry keeps everything. Every result and the
 * `used` counter must match the model exactly.
 */

#include "gn_config.h"

#include "tls_scache.h"

#define FZ_NAME  "fuzz_scache"
#include "fz.h"


#define FZ_MAX_ENTRIES  8
#define FZ_MAX_DATA     64
#define FZ_MAX_VALUE    80

typedef struct {
    u_char      key[GN_SCACHE_KEY_MAX + 1];
    size_t      klen;
    u_char      data[FZ_MAX_VALUE];
    size_t      dlen;
    int64_t     expire;
} fz_entry_t;

typedef struct {
    fz_entry_t  e[FZ_MAX_ENTRIES];  /* [0] most recently stored */
    gn_uint_t   n;
    gn_uint_t   cap;
    size_t      data_max;
} fz_model_t;


static int
fz_find(fz_model_t *m, const u_char *key, size_t klen)
{
    gn_uint_t  i;

    for (i = 0; i < m->n; i++) {
        if (m->e[i].klen == klen && memcmp(m->e[i].key, key, klen) == 0) {
            return (int) i;
        }
    }

    return -1;
}


static void
fz_drop(fz_model_t *m, gn_uint_t i)
{
    memmove(&m->e[i], &m->e[i + 1], (m->n - i - 1) * sizeof(fz_entry_t));
    m->n--;
}


static gn_int_t
fz_model_store(fz_model_t *m, const u_char *key, size_t klen,
    const u_char *data, size_t dlen, time_t now, time_t timeout)
{
    int         i;
    fz_entry_t  e;

    if (klen == 0 || klen > GN_SCACHE_KEY_MAX || dlen > m->data_max) {
        return GN_DECLINED;
    }

    i = fz_find(m, key, klen);

    if (i >= 0) {
        fz_drop(m, (gn_uint_t) i);

    } else if (m->n == m->cap) {
        fz_drop(m, m->n - 1);
    }

    memcpy(e.key, key, klen);
    e.klen = klen;
    memcpy(e.data, data, dlen);
    e.dlen = dlen;
    e.expire = (int64_t) now + timeout;

    memmove(&m->e[1], &m->e[0], m->n * sizeof(fz_entry_t));
    m->e[0] = e;
    m->n++;

    return GN_OK;
}


static ssize_t
fz_model_retrieve(fz_model_t *m, const u_char *key, size_t klen,
    time_t now, fz_entry_t **found)
{
    int  i;

    i = (klen == 0 || klen > GN_SCACHE_KEY_MAX) ? -1 : fz_find(m, key, klen);

    if (i < 0) {
        return GN_DECLINED;
    }

    if ((int64_t) now >= m->e[i].expire) {
        fz_drop(m, (gn_uint_t) i);
        return GN_DECLINED;
    }

    *found = &m->e[i];

    return (ssize_t) m->e[i].dlen;
}


static gn_int_t
fz_model_remove(fz_model_t *m, const u_char *key, size_t klen)
{
    int  i;

    i = (klen == 0 || klen > GN_SCACHE_KEY_MAX) ? -1 : fz_find(m, key, klen);

    if (i < 0) {
        return GN_DECLINED;
    }

    fz_drop(m, (gn_uint_t) i);

    return GN_OK;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char                err[256];
    u_char              key[GN_SCACHE_KEY_MAX + 1], buf[FZ_MAX_DATA];
    u_char              op, k, vlen;
    void               *zone;
    size_t              zsize, klen, i;
    time_t              now;
    ssize_t             n, mn;
    gn_int_t            rc, mrc;
    fz_entry_t         *found;
    gn_scache_t        *sc;
    fz_model_t          m;
    gn_scache_stats_t   st;

    if (size < 2) {
        return 0;
    }

    memset(&m, 0, sizeof(fz_model_t));
    m.cap = 1 + (data[0] % FZ_MAX_ENTRIES);
    m.data_max = data[1] % FZ_MAX_DATA;

    zsize = gn_scache_size(m.cap, m.data_max);
    fz_check(zsize > 0, "size() for a small cache");
    fz_check(gn_scache_entries_for(zsize, m.data_max) == m.cap,
             "entries_for(size(n)) == n");

    /* fresh zones are zero-filled, as an anonymous mapping is */
    zone = calloc(1, zsize);
    if (zone == NULL) {
        return 0;
    }

    sc = gn_scache_init(zone, zsize, m.data_max, err, sizeof(err));
    fz_check(sc != NULL, "init");
    fz_check(gn_scache_data_max(sc) == m.data_max, "data_max");

    now = 1000000;
    i = 2;

    while (i < size) {
        op = data[i++];
        now += (op >> 2) & 3;

        if ((op & 3) == 3) {
            sc = gn_scache_init(zone, zsize, m.data_max, err, sizeof(err));
            fz_check(sc != NULL && (void *) sc == zone, "re-init");
            continue;
        }

        if (i == size) {
            break;
        }

        k = data[i++];
        klen = (k >> 4) ? (size_t) (k >> 4) : GN_SCACHE_KEY_MAX + 1;
        memset(key, 'a' + (k & 15), klen);

        switch (op & 3) {

        case 0:
            vlen = (i < size) ? data[i++] % FZ_MAX_VALUE : 0;
            if (vlen > size - i) {
                vlen = (u_char) (size - i);
            }

            rc = gn_scache_store(sc, key, klen, data + i, vlen, now, op >> 4);
            mrc = fz_model_store(&m, key, klen, data + i, vlen, now,
                                 op >> 4);
            fz_check(rc == mrc, "store: same result as the model");

            i += vlen;
            break;

        case 1:
            memset(buf, 0x5a, sizeof(buf));
            found = NULL;

            n = gn_scache_retrieve(sc, key, klen, buf, m.data_max, now);
            mn = fz_model_retrieve(&m, key, klen, now, &found);

            fz_check(n == mn, "retrieve: same result as the model");

            if (n > 0) {
                fz_check(memcmp(buf, found->data, (size_t) n) == 0,
                         "retrieve: the value stored");
            }

            break;

        default:
            rc = gn_scache_remove(sc, key, klen);
            mrc = fz_model_remove(&m, key, klen);
            fz_check(rc == mrc, "remove: same result as the model");
            break;
        }

        gn_scache_stats(sc, &st);
        fz_check(st.entries == m.cap, "stats: entries");
        fz_check(st.used == m.n, "stats: used == the model's count");
        fz_check(st.recovered == 0, "no lock recovery");
    }

    free(zone);

    return 0;
}
