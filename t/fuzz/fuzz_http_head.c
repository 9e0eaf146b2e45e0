/*
 * libFuzzer harness: the request head scanner and parser
 * (core/http_parse.c).
 *
 * Input: byte 0 picks the split point and the limits, the rest is what a
 * client sent. The bytes are fed to gn_http_parse_head_end() three ways:
 * whole, in two pieces split where byte 0 says, and one byte at a time;
 * all three must give the same result and the same head length (the
 * scanner promises its answer does not depend on how the bytes arrive).
 * An error must come with its reason. A head it finds is then parsed by
 * gn_http_parse_head(), whose result must be one of the documented codes
 * and whose strings must all lie inside the head.
 */

#include "gn_config.h"

#include "http_parse.h"

#define FZ_NAME  "fuzz_http_head"
#include "fz.h"


#define FZ_MAX_HEADERS  32


static const gn_http_limits_t  fz_limits[] = {
    { 8192, 32768, 100, 8192 },     /* the server's defaults */
    { 64, 256, 8, 64 },             /* tight: every limit reachable */
    { 0, 0, 0, 0 },                 /* no limits */
    { 16, 64, 2, 16 }
};


static gn_int_t
fz_scan(const u_char *buf, size_t len, size_t split,
    const gn_http_limits_t *lim, size_t *head_len)
{
    gn_int_t        rc;
    gn_http_scan_t  s;

    memset(&s, 0, sizeof(gn_http_scan_t));

    rc = gn_http_parse_head_end(&s, buf, split, lim, head_len);

    if (rc == GN_AGAIN && split < len) {
        rc = gn_http_parse_head_end(&s, buf, len, lim, head_len);
    }

    fz_check(rc == GN_OK || rc == GN_AGAIN || s.err != NULL,
             "a scan error has a reason");

    return rc;
}


static gn_int_t
fz_scan_bytes(const u_char *buf, size_t len, const gn_http_limits_t *lim,
    size_t *head_len)
{
    size_t          i;
    gn_int_t        rc;
    gn_http_scan_t  s;

    memset(&s, 0, sizeof(gn_http_scan_t));

    rc = GN_AGAIN;

    for (i = 1; i <= len && rc == GN_AGAIN; i++) {
        rc = gn_http_parse_head_end(&s, buf, i, lim, head_len);
    }

    return rc;
}


static void
fz_parse(u_char *buf, size_t len, const gn_http_limits_t *lim)
{
    gn_int_t           rc;
    gn_uint_t          i;
    gn_http_head_t     h;
    gn_http_header_t   hdrs[FZ_MAX_HEADERS];
    gn_http_header_t  *host;

    rc = gn_http_parse_head(&h, buf, len, lim, hdrs, FZ_MAX_HEADERS);

    fz_check(rc == GN_OK || rc == 400 || rc == 414 || rc == 431
             || rc == 501 || rc == 505, "parse_head returns a known code");

    if (rc != GN_OK) {
        fz_check(h.err != NULL, "an error has a reason");
        return;
    }

    fz_check(h.version == GN_HTTP_VERSION_10
             || h.version == GN_HTTP_VERSION_11, "version");
    fz_check(h.method_name.len > 0, "method name");
    fz_check(h.target.len > 0, "target");
    fz_check(h.nheaders <= FZ_MAX_HEADERS, "nheaders <= max");
    fz_check(h.content_length >= -1, "content_length");
    fz_check(!(h.chunked && h.content_length != -1),
             "chunked and Content-Length");

    fz_check_str(&h.method_name, buf, len, "method_name in head");
    fz_check_str(&h.target, buf, len, "target in head");
    /* an absolute-form target without a path gets a static "/" */
    if (!(h.path.len == 1 && h.path.data[0] == '/')) {
        fz_check_str(&h.path, buf, len, "path in head");
    }

    fz_check_str(&h.query, buf, len, "query in head");
    fz_check_str(&h.abs_host, buf, len, "abs_host in head");
    fz_check_str(&h.host, buf, len, "host in head");
    fz_check_str(&h.range, buf, len, "range in head");
    fz_check_str(&h.user_agent, buf, len, "user_agent in head");

    for (i = 0; i < h.nheaders; i++) {
        fz_check(h.headers[i].name.len > 0, "header name not empty");
        fz_check_str(&h.headers[i].name, buf, len, "header name in head");
        fz_check_str(&h.headers[i].value, buf, len, "header value in head");
    }

    host = gn_http_header_find(&h, "host", 4);
    if (host != NULL) {
        fz_check(host >= h.headers && host < h.headers + h.nheaders,
                 "header_find returns one of the headers");
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char                  *buf;
    size_t                   len, split, hl1, hl2, hl3;
    gn_int_t                 rc1, rc2, rc3;
    const gn_http_limits_t  *lim;

    if (size == 0) {
        return 0;
    }

    lim = &fz_limits[data[0] & 3];
    len = size - 1;
    split = ((size_t) (data[0] >> 2) * (len + 1)) / 64;

    /* an exact copy: any read past the end is an ASan report */
    buf = malloc(len ? len : 1);
    if (buf == NULL) {
        return 0;
    }

    if (len) {
        memcpy(buf, data + 1, len);
    }

    hl1 = hl2 = hl3 = (size_t) -1;

    rc1 = fz_scan(buf, len, len, lim, &hl1);
    rc2 = fz_scan(buf, len, split, lim, &hl2);
    rc3 = fz_scan_bytes(buf, len, lim, &hl3);

    fz_check(rc1 == GN_OK || rc1 == GN_AGAIN || rc1 == 400 || rc1 == 414
             || rc1 == 431 || rc1 == 505,
             "parse_head_end returns a known code");
    fz_check(rc1 == rc2, "same result whole and split");
    fz_check(len == 0 || rc1 == rc3,
             "same result whole and byte at a time");

    if (rc1 == GN_OK) {
        fz_check(hl1 == hl2, "same head_len whole and split");
        fz_check(hl1 == hl3, "same head_len whole and byte at a time");
        fz_check(hl1 > 0 && hl1 <= len, "head_len within the input");
        fz_check(buf[hl1 - 1] == '\n', "the head ends with LF");
        fz_check(lim->max_head == 0 || hl1 <= lim->max_head,
                 "head_len <= max_head");

        fz_parse(buf, hl1, lim);
    }

    free(buf);

    return 0;
}
