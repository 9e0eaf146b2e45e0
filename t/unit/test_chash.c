/*
 * Unit tests for the consistent-hash ring of the memcached tier: one
 * server takes every key, keys spread over several, the choice does not
 * depend on the order servers are listed in, and adding or removing a
 * server moves only the keys it gains or loses.
 */

#include "gn_config.h"

#include "chash.h"
#include "../tap.h"


#define NKEYS   20000


static gn_str_t  names[4] = {
    gn_string("10.0.0.1:11211"), gn_string("10.0.0.2:11211"),
    gn_string("10.0.0.3:11211"), gn_string("10.0.0.4:11211")
};


static size_t
key_of(u_char *buf, gn_uint_t i)
{
    /* shaped like the real keys: prefix, identity, session id */
    return (size_t) snprintf((char *) buf, 128,
                             "gannet:0123456789abcdef:%064x", (unsigned) i);
}


int
main(void)
{
    gn_pool_t   *pool;
    gn_chash_t   one, three, four, rev;
    gn_str_t     rnames[3];
    u_char       key[128];
    gn_uint_t    i, count[4] = { 0 }, moved, wrong, lost, order;
    gn_uint_t    a, b;
    size_t       len;

    pool = gn_pool_create(4096);
    if (pool == NULL) {
        return 1;
    }

    ok(gn_chash_init(&one, pool, names, 1) == GN_OK, "ring of one");
    ok(gn_chash_init(&three, pool, names, 3) == GN_OK, "ring of three");
    ok(gn_chash_init(&four, pool, names, 4) == GN_OK, "ring of four");
    rnames[0] = names[2];
    rnames[1] = names[0];
    rnames[2] = names[1];
    ok(gn_chash_init(&rev, pool, rnames, 3) == GN_OK, "ring, other order");
    is_int(three.npoints, 3 * GN_CHASH_POINTS, "points per server");

    for (i = 1; i < three.npoints; i++) {
        if (three.points[i - 1].hash > three.points[i].hash) {
            break;
        }
    }
    is_int(i, three.npoints, "points sorted");

    wrong = 0;
    moved = 0;
    lost = 0;
    order = 0;
    for (i = 0; i < NKEYS; i++) {
        len = key_of(key, i);
        wrong += gn_chash_pick(&one, key, len) != 0;

        a = gn_chash_pick(&three, key, len);
        b = gn_chash_pick(&four, key, len);
        count[a]++;
        /* a fourth server only takes keys: none moves between the
         * first three */
        if (a != b) {
            moved++;
            lost += b != 3;
        }
        /* the same servers listed in another order: the same server */
        order += names[a].data != rnames[gn_chash_pick(&rev, key, len)].data;
    }

    is_int(wrong, 0, "one server owns every key");
    is_int(order, 0, "the choice does not depend on the list order");
    for (i = 0; i < 3; i++) {
        /* an even share is 1/3: allow 0.25 .. 0.42 */
        ok(count[i] > NKEYS / 4 && count[i] < NKEYS * 42 / 100,
           "server %u owns its share: %u of %u", (unsigned) i,
           (unsigned) count[i], NKEYS);
    }
    is_int(lost, 0, "adding a server moves keys only to it");
    /* about a quarter of the keys move to the new server */
    ok(moved > NKEYS / 6 && moved < NKEYS / 3,
       "adding a fourth server moves about 1/4: %u of %u", (unsigned) moved,
       NKEYS);

    /* the pick is a pure function of the key */
    len = key_of(key, 7);
    is_int(gn_chash_pick(&three, key, len), gn_chash_pick(&three, key, len),
           "the same key, the same server");
    is_int(gn_chash_hash((u_char *) "", 0), gn_chash_hash((u_char *) "", 0),
           "hash of nothing is defined");

    gn_pool_destroy(pool);

    return tap_done_testing();
}
