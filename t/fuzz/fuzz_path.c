/*
 * libFuzzer harness: the path normaliser (gn_http_normalize_path() in
 * core/http_parse.c).
 *
 * Input: a raw request path. A path the normaliser accepts must come out
 * beginning with '/', no longer than it went in, with no "//", no "." or
 * ".." segment (so no "/./" and no "/../"), and no control byte; and
 * normalising the result again (when it holds no '%' to decode twice)
 * must change nothing.
 */

#include "gn_config.h"

#include "http_parse.h"

#define FZ_NAME  "fuzz_path"
#include "fz.h"


static void
fz_check_clean(const u_char *p, size_t len)
{
    size_t  i, seg;

    fz_check(len >= 1 && p[0] == '/', "starts with '/'");

    for (i = 0; i < len; i++) {
        fz_check(p[i] >= 0x20 && p[i] != 0x7f, "no control bytes");
    }

    /* every segment between two slashes, and the last one */
    for (seg = 1; seg <= len; seg = i + 1) {
        for (i = seg; i < len && p[i] != '/'; i++) {
            /* void */
        }

        fz_check(i == len || i > seg, "no \"//\"");
        fz_check(!(i - seg == 1 && p[seg] == '.'), "no \".\" segment");
        fz_check(!(i - seg == 2 && p[seg] == '.' && p[seg + 1] == '.'),
                 "no \"..\" segment");
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char    *src, *dst, *dst2;
    size_t     dlen, dlen2;
    gn_int_t   rc;

    src = malloc(size ? size : 1);
    dst = malloc(size + 1);
    dst2 = malloc(size + 1);

    if (src == NULL || dst == NULL || dst2 == NULL) {
        goto done;
    }

    if (size) {
        memcpy(src, data, size);
    }

    dlen = (size_t) -1;

    rc = gn_http_normalize_path(src, size, dst, &dlen);

    fz_check(rc == GN_OK || rc == GN_ERROR, "known result");

    if (rc != GN_OK) {
        goto done;
    }

    fz_check(dlen <= size, "no longer than the input");
    fz_check_clean(dst, dlen);

    if (memchr(dst, '%', dlen) == NULL) {
        rc = gn_http_normalize_path(dst, dlen, dst2, &dlen2);

        fz_check(rc == GN_OK, "a normalised path normalises");
        fz_check(dlen2 == dlen && memcmp(dst, dst2, dlen) == 0,
                 "normalising is idempotent");
    }

done:

    free(src);
    free(dst);
    free(dst2);

    return 0;
}
