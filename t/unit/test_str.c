/*
 * str.c: lower-casing, the number, size and time parsers, the
 * grow-a-buffer helper, HTML escaping.
 */

#include "gn_config.h"

#include "pool.h"
#include "str.h"

#include "../tap.h"


static void
test_strlow(void)
{
    u_char  buf[16];
    u_char  in[] = "MiXeD.Example-1";

    ok(gn_strlow(buf, (u_char *) "Ab.C:9Z", 7) == buf + 7,
       "gn_strlow: returns the end");
    is_str(buf, 7, "ab.c:9z", "gn_strlow: ASCII letters lowered, the rest kept");
    (void) gn_strlow(in, in, sizeof(in) - 1);
    is_str(in, sizeof(in) - 1, "mixed.example-1", "gn_strlow: in place");
}


static void
test_numbers(void)
{
    gn_str_t   s;
    gn_msec_t  ms;

    is_int(gn_atoi((u_char *) "12345", 5), 12345, "atoi");
    is_int(gn_atoi((u_char *) "", 0), GN_ERROR, "atoi empty");
    is_int(gn_atoi((u_char *) "12a", 3), GN_ERROR, "atoi non-digit");
    is_int(gn_atoi((u_char *) "-1", 2), GN_ERROR, "atoi sign");
    is_int(gn_atoi((u_char *) "9223372036854775807", 19), INTPTR_MAX,
           "atoi max");
    is_int(gn_atoi((u_char *) "9223372036854775808", 19), GN_ERROR,
           "atoi overflow");
    is_int(gn_hextoi((u_char *) "fF10", 4), 0xff10, "hextoi");
    is_int(gn_hextoi((u_char *) "10000000000000000", 17), GN_ERROR,
           "hextoi overflow");

    gn_str_set(&s, "8m");
    is_int(gn_parse_size(&s), 8 * 1024 * 1024, "size 8m");
    gn_str_set(&s, "16K");
    is_int(gn_parse_size(&s), 16384, "size 16K");
    gn_str_set(&s, "1x");
    is_int(gn_parse_size(&s), GN_ERROR, "size bad suffix");
    gn_str_set(&s, "99999999999999999g");
    is_int(gn_parse_size(&s), GN_ERROR, "size overflow");

    gn_str_set(&s, "30s");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 30000, "msec 30s");
    gn_str_set(&s, "1m30s");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 90000, "msec 1m30s");
    gn_str_set(&s, "500ms");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 500, "msec 500ms");
    gn_str_set(&s, "75");
    ok(gn_parse_msec(&s, &ms) == GN_OK && ms == 75000, "bare = seconds");
    gn_str_set(&s, "5q");
    is_int(gn_parse_msec(&s, &ms), GN_ERROR, "msec bad unit");
    gn_str_set(&s, "s");
    is_int(gn_parse_msec(&s, &ms), GN_ERROR, "msec no number");
}


static void
test_reserve(void)
{
    u_char  *buf = NULL, *before;
    size_t   cap = 0;

    is_int(gn_str_reserve(&buf, &cap, 10, 4096), GN_OK, "reserve: first");
    ok(buf != NULL && cap == 4096, "reserve: at least `min` (%zu)", cap);
    memcpy(buf, "0123456789", 10);

    before = buf;
    is_int(gn_str_reserve(&buf, &cap, 4096, 4096), GN_OK, "reserve: fits");
    ok(buf == before && cap == 4096, "reserve: no realloc when it fits");

    is_int(gn_str_reserve(&buf, &cap, 4097, 4096), GN_OK, "reserve: grows");
    is_int((gn_int_t) cap, 8192, "reserve: doubles");
    is_int(gn_str_reserve(&buf, &cap, 70000, 4096), GN_OK,
           "reserve: a big step");
    is_int((gn_int_t) cap, 131072, "reserve: doubles until it holds them");
    is_str(buf, 10, "0123456789", "reserve: the bytes are kept");
    free(buf);

    buf = NULL;
    cap = 0;
    is_int(gn_str_reserve(&buf, &cap, 3, 0), GN_OK, "reserve: min 0");
    ok(buf != NULL && cap >= 3, "reserve: min 0 still makes room (%zu)",
       cap);
    free(buf);
}


static void
test_escape_html(void)
{
    static const u_char  in[] = "<a href=\"x\">Tom & 'Jerry'</a>\xff";
    u_char               buf[128];
    size_t               n;

    n = gn_str_escape_html(NULL, in, sizeof(in) - 1);
    is_int((gn_int_t) gn_str_escape_html(buf, in, sizeof(in) - 1),
           (gn_int_t) n, "escape_html: measured as written");
    is_str(buf, n, "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;"
           "&lt;/a&gt;\xff", "escape_html: the five, other bytes kept");
    is_int((gn_int_t) gn_str_escape_html(buf, in, 0), 0,
           "escape_html: empty");
}


/* gn_strncasecmp against a byte-by-byte reference, over every length
 * up to 20 and a difference (of case, or of byte) at every position:
 * its word-at-a-time start must neither miss a difference nor see one
 * that case hides, and the sign must be the first differing byte's. */
static int
ref_strncasecmp(const u_char *a, const u_char *b, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (gn_tolower(a[i]) != gn_tolower(b[i])) {
            return gn_tolower(a[i]) - gn_tolower(b[i]);
        }
    }
    return 0;
}


static void
test_strncasecmp(void)
{
    static const u_char  base[] = "Content-Length-Xy:9";
    u_char               a[24], b[24];
    size_t               n, i, bad;
    int                  got, want, k;

    bad = 0;
    for (n = 0; n <= 20; n++) {
        for (i = 0; i < n; i++) {
            for (k = 0; k < 3; k++) {
                memcpy(a, base, 20);
                memcpy(b, base, 20);
                if (k == 0) {
                    b[i] ^= 0x20;           /* case, or a real difference */
                } else if (k == 1) {
                    b[i] = (u_char) (b[i] + 1);
                } else {
                    a[i] = 0xff;
                }
                got = (int) gn_strncasecmp(a, b, n);
                want = ref_strncasecmp(a, b, n);
                if ((got > 0) != (want > 0) || (got < 0) != (want < 0)) {
                    diag("n %zu at %zu kind %d: got %d, want %d", n, i, k,
                         got, want);
                    bad++;
                }
            }
        }
    }
    is_int((gn_int_t) bad, 0, "strncasecmp: as the reference, every "
           "length and position");
    ok(gn_strncasecmp((u_char *) "TRANSFER-encoding",
                      (u_char *) "transfer-ENCODING", 17) == 0,
       "strncasecmp: case differs in every word");
    ok(gn_strncasecmp((u_char *) "If-Modified-Sincx",
                      (u_char *) "if-modified-since", 17) > 0,
       "strncasecmp: a difference in the tail after equal-by-case words");
}


int
main(void)
{
    test_strlow();
    test_strncasecmp();
    test_numbers();
    test_reserve();
    test_escape_html();

    return done_testing();
}
