/*
 * Consistent hashing (see chash.h).
 */

#include "gn_config.h"

#include <stdlib.h>

#include "chash.h"


uint32_t
gn_chash_hash(const u_char *p, size_t len)
{
    uint64_t  h = 1469598103934665603ULL;

    while (len--) {
        h = (h ^ *p++) * 1099511628211ULL;
    }

    /* MurmurHash3's 64-bit finaliser: FNV-1a alone leaves names that
     * differ in their last digit next to each other on the ring */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;

    return (uint32_t) (h >> 32);
}


static int
gn_chash_cmp(const void *a, const void *b)
{
    const gn_chash_point_t  *x = a, *y = b;

    if (x->hash != y->hash) {
        return x->hash < y->hash ? -1 : 1;
    }
    /* equal hashes (rare): a fixed order, whatever qsort does */
    return x->server < y->server ? -1 : x->server > y->server;
}


gn_int_t
gn_chash_init(gn_chash_t *ch, gn_pool_t *pool, const gn_str_t *names,
    gn_uint_t n)
{
    return gn_chash_init_weighted(ch, pool, names, NULL, n);
}


gn_int_t
gn_chash_init_weighted(gn_chash_t *ch, gn_pool_t *pool,
    const gn_str_t *names, const gn_uint_t *weights, gn_uint_t n)
{
    gn_chash_point_t  *pt;
    u_char             buf[512];
    gn_uint_t          i, k, points;
    size_t             len;

    ch->nservers = n;
    ch->npoints = 0;
    for (i = 0; i < n; i++) {
        ch->npoints += GN_CHASH_POINTS * (weights ? weights[i] : 1);
    }
    ch->points = gn_palloc(pool, ch->npoints * sizeof(gn_chash_point_t));
    if (ch->points == NULL) {
        return GN_ERROR;
    }

    pt = ch->points;
    for (i = 0; i < n; i++) {
        len = gn_min(names[i].len, sizeof(buf) - 16);
        memcpy(buf, names[i].data, len);
        points = GN_CHASH_POINTS * (weights ? weights[i] : 1);
        for (k = 0; k < points; k++) {
            /* "name-k": the point's place depends on the server's name
             * only, not on its position in the list */
            pt->hash = gn_chash_hash(buf, len + (size_t) snprintf(
                           (char *) buf + len, 16, "-%u", (unsigned) k));
            pt->server = (uint32_t) i;
            pt++;
        }
    }

    qsort(ch->points, ch->npoints, sizeof(gn_chash_point_t), gn_chash_cmp);

    return GN_OK;
}


gn_uint_t
gn_chash_first(const gn_chash_t *ch, uint32_t h)
{
    gn_uint_t  lo, hi, mid;

    /* the first point with hash >= h; past the last one: the first */
    lo = 0;
    hi = ch->npoints;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (ch->points[mid].hash < h) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }

    return lo == ch->npoints ? 0 : lo;
}


gn_uint_t
gn_chash_pick(const gn_chash_t *ch, const u_char *key, size_t len)
{
    if (ch->nservers == 1) {
        return 0;
    }

    return ch->points[gn_chash_first(ch, gn_chash_hash(key, len))].server;
}
