/*
 * gn_http_normalize_path(): percent-decoding, dot segments (also when
 * encoded), repeated slashes, and every way of climbing above the root.
 *
 * Sources: t/unit/test_path.c core/http_parse.c core/str.c core/pool.c
 * t/tap.c
 */

#include "gn_config.h"

#include "http_parse.h"
#include "../tap.h"


#define H(s)   s, sizeof(s) - 1

typedef struct {
    const char  *src;
    size_t       len;
    const char  *want;          /* NULL: GN_ERROR expected */
} path_case_t;


static path_case_t  cases[] = {

    /* plain */
    { H("/"), "/" },
    { H("/index.html"), "/index.html" },
    { H("/a/b/c"), "/a/b/c" },
    { H("/a/b/"), "/a/b/" },
    { H("/.hidden"), "/.hidden" },
    { H("/a/..b/c.."), "/a/..b/c.." },
    { H("/..."), "/..." },
    { H("/a/.../b"), "/a/.../b" },

    /* repeated slashes */
    { H("//"), "/" },
    { H("//a//b///c"), "/a/b/c" },
    { H("/a//"), "/a/" },

    /* dot segments */
    { H("/./"), "/" },
    { H("/."), "/" },
    { H("/a/./b"), "/a/b" },
    { H("/a/."), "/a/" },
    { H("/a/b/./"), "/a/b/" },
    { H("/a/b/.."), "/a/" },
    { H("/a/b/../"), "/a/" },
    { H("/a/b/../c"), "/a/c" },
    { H("/a/./../b"), "/b" },
    { H("/a//../b"), "/b" },
    { H("/a/b/c/../../d"), "/a/d" },
    { H("/a/.."), "/" },

    /* climbing above the root, plain and encoded */
    { H("/.."), NULL },
    { H("/../"), NULL },
    { H("/../a"), NULL },
    { H("/a/../../b"), NULL },
    { H("/a/./.././.."), NULL },
    { H("/%2e%2e/a"), NULL },
    { H("/%2E%2e/"), NULL },
    { H("/%2e%2E"), NULL },
    { H("/.%2e/etc/passwd"), NULL },
    { H("/%2e./x"), NULL },
    { H("/a/%2e%2e/%2e%2e/x"), NULL },
    { H("/a%2f..%2f..%2fetc"), NULL },
    { H("/a%2F..%2F..%2Fetc"), NULL },
    { H("/%2f%2e%2e"), NULL },

    /* encoded dots and slashes that stay inside */
    { H("/a/%2e%2e/b"), "/b" },
    { H("/a/%2E/b"), "/a/b" },
    { H("/a%2F..%2Fb"), "/b" },
    { H("/a%2fb"), "/a/b" },
    { H("/a%2f%2fb"), "/a/b" },
    { H("/%2e"), "/" },
    { H("/a/b/%2e"), "/a/b/" },
    { H("/a/b/%2e%2e"), "/a/" },
    { H("/a/b/.%2E/"), "/a/" },

    /* a backslash is just a byte, not a separator */
    { H("/..%5c..%5cetc"), "/..\\..\\etc" },
    { H("/a/%5c../b"), "/a/\\../b" },
    { H("/a\\..\\b"), "/a\\..\\b" },

    /* other escapes */
    { H("/a%20b"), "/a b" },
    { H("/%41%42%43"), "/ABC" },
    { H("/%7e%7Euser"), "/~~user" },
    { H("/caf%C3%A9"), "/caf\xc3\xa9" },
    { H("/100%25"), "/100%" },
    { H("/%25%32%65"), "/%2e" },            /* decoded once only */
    { H("/q%3Fx"), "/q?x" },

    /* bad escapes and forbidden bytes */
    { H("/%00"), NULL },
    { H("/a%00b"), NULL },
    { H("/%zz"), NULL },
    { H("/%g0"), NULL },
    { H("/%2"), NULL },
    { H("/%"), NULL },
    { H("/a%2"), NULL },
    { H("/%0a"), NULL },
    { H("/%0D"), NULL },
    { H("/%1F"), NULL },
    { H("/%7f"), NULL },
    { H("/%7F"), NULL },
    { H("/a\x01" "b"), NULL },
    { H("/a\x7f"), NULL },
    { H("/a\0b"), NULL },

    /* not a path */
    { H(""), NULL },
    { H("a/b"), NULL },
    { H("%2fa"), NULL },
    { H("*"), NULL },
};


/* Printable form of a test input for the TAP line (C-style escapes). */

static const char *
esc(const char *s, size_t len)
{
    static char  buf[256];
    size_t       i, n;

    for (i = 0, n = 0; i < len && n < sizeof(buf) - 5; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7f) {
            buf[n++] = s[i];
        } else {
            n += snprintf(buf + n, 5, "\\x%02x", (unsigned char) s[i]);
        }
    }

    buf[n] = '\0';

    return buf;
}


int
main(void)
{
    u_char       *src, *dst;
    size_t        i, dst_len;
    gn_int_t      rc;
    path_case_t  *c;

    for (i = 0; i < gn_nelems(cases); i++) {
        c = &cases[i];

        /* exact-size copies: ASan catches any read or write past them */
        src = malloc(c->len ? c->len : 1);
        memcpy(src, c->src, c->len);
        dst = malloc(c->len + 1);
        dst_len = (size_t) -1;

        rc = gn_http_normalize_path(src, c->len, dst, &dst_len);

        if (c->want == NULL) {
            is_int(rc, GN_ERROR, "'%s' rejected", esc(c->src, c->len));

        } else if (is_int(rc, GN_OK, "'%s' accepted", esc(c->src, c->len))) {
            is_str(dst, dst_len, c->want, "'%s' -> '%s'",
                   esc(c->src, c->len), c->want);

        } else {
            ok(0, "'%s' -> '%s'", esc(c->src, c->len), c->want);
        }

        free(src);
        free(dst);
    }

    diag("%zu path cases", gn_nelems(cases));

    return done_testing();
}
