/*
 * libFuzzer harness: the PCRE2 wrapper that rewrite and access rules use
 * (core/regex.c). Rewrite templates are compiled by a static function of
 * core/rewrite.c, so the wrapper is what is fuzzed here: PCRE2 itself is
 * fuzzed upstream; what matters is that our compile refuses more than
 * GN_REGEX_MAX_CAPTURES groups, that exec stays within the match limit,
 * and that the capture offsets it hands out are sane.
 *
 * Input: byte 0 bit 0 = caseless; the pattern runs to the first LF (at
 * most 512 bytes), the subject is the rest.
 */

#include "gn_config.h"

#include "regex.h"

#define FZ_NAME  "fuzz_regex"
#include "fz.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char              err[512];
    u_char           *copy, *nl, *subj;
    size_t            plen, slen;
    gn_int_t          rc, i;
    gn_str_t          pattern;
    gn_pool_t        *pool;
    gn_regex_t        re;
    const char       *why;
    gn_regex_caps_t   caps;
    static int        inited;

    if (size < 1) {
        return 0;
    }

    if (!inited) {
        fz_check(gn_regex_init_child(GN_REGEX_MATCH_LIMIT) == GN_OK,
                 "init_child");
        inited = 1;
    }

    copy = malloc(size > 1 ? size - 1 : 1);
    pool = gn_pool_create(256);

    if (copy == NULL || pool == NULL) {
        goto done;
    }

    memcpy(copy, data + 1, size - 1);

    nl = memchr(copy, '\n', size - 1);
    plen = nl ? (size_t) (nl - copy) : size - 1;

    if (plen > 512) {
        goto done;
    }

    subj = nl ? nl + 1 : copy + plen;
    slen = (size_t) (copy + size - 1 - subj);

    pattern.data = copy;
    pattern.len = plen;

    memset(&re, 0, sizeof(gn_regex_t));
    err[0] = '\0';

    if (gn_regex_compile(&re, pool, &pattern, data[0] & 1, err, sizeof(err))
        != GN_OK)
    {
        fz_check(err[0] != '\0', "a compile error has a message");
        goto done;
    }

    fz_check(re.captures <= GN_REGEX_MAX_CAPTURES, "captures capped");

    why = NULL;
    rc = gn_regex_exec(&re, subj, slen, &caps, &why);

    fz_check(rc == 0 || rc == 1 || rc == GN_ERROR, "exec: known result");
    fz_check(rc != GN_ERROR || why != NULL, "an exec error has a reason");

    if (rc == 1) {
        fz_check(caps.n == (gn_int_t) re.captures + 1, "caps.n");
        fz_check(caps.subject == subj, "caps.subject");

        for (i = 0; i < caps.n; i++) {
            if (caps.ovec[2 * i] == (size_t) -1) {
                fz_check(i > 0, "group 0 is always set");
                continue;
            }

            fz_check(caps.ovec[2 * i] <= caps.ovec[2 * i + 1]
                     && caps.ovec[2 * i + 1] <= slen, "capture in subject");
        }
    }

done:

    free(copy);
    gn_pool_destroy(pool);

    return 0;
}
