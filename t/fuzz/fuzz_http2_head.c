/*
 * libFuzzer harness: an HTTP/2 request's head as the parser takes it
 * from nghttp2 (gn_http_parse_h2, core/http_parse.c).
 *
 * Input: NUL-separated fields: :method, :path, :authority, then header
 * names and values in turn (nghttp2 hands over lower-case names without
 * connection-specific fields; the parser must not trust anything else).
 * The result must be GN_OK or one of the documented statuses with a
 * reason; on GN_OK the version is 2.0, there is a host, and every string
 * of the head lies inside the input.
 */

#include "gn_config.h"

#include "http_parse.h"

#define FZ_NAME  "fuzz_http2_head"
#include "fz.h"


#define FZ_MAX_HEADERS  64


/* The next NUL-terminated (or last) field of [*p, end). */
static gn_str_t
fz_field(u_char **p, u_char *end)
{
    gn_str_t   s;
    u_char    *nul;

    s.data = *p;
    nul = memchr(*p, '\0', (size_t) (end - *p));
    s.len = (size_t) ((nul ? nul : end) - *p);
    *p = nul ? nul + 1 : end;

    return s;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gn_http_header_t  hdrs[FZ_MAX_HEADERS];
    gn_http_head_t    h;
    gn_str_t          method, path, authority;
    u_char           *buf, *p, *end;
    gn_uint_t         i;
    gn_int_t          rc;

    buf = malloc(size + 1);
    if (buf == NULL) {
        return 0;
    }
    memcpy(buf, data, size);
    p = buf;
    end = buf + size;

    method = fz_field(&p, end);
    path = fz_field(&p, end);
    authority = fz_field(&p, end);

    memset(&h, 0, sizeof(h));
    h.content_length = -1;
    h.headers = hdrs;
    while (p < end && h.nheaders < FZ_MAX_HEADERS) {
        hdrs[h.nheaders].name = fz_field(&p, end);
        hdrs[h.nheaders].value = fz_field(&p, end);
        h.nheaders++;
    }

    rc = gn_http_parse_h2(&h, &method, &path, &authority);

    if (rc == GN_OK) {
        fz_check(h.version == GN_HTTP_VERSION_20, "version");
        fz_check(h.host.len > 0, "host");
        fz_check(h.keepalive, "keepalive");
        fz_check(h.path.len > 0
                 && (h.path.data[0] == '/' || h.path.data[0] == '*'),
                 "path");
        fz_check_str(&h.method_name, buf, size, "method in input");
        fz_check_str(&h.target, buf, size, "target in input");
        fz_check_str(&h.path, buf, size, "path in input");
        fz_check_str(&h.query, buf, size, "query in input");
        fz_check_str(&h.host, buf, size, "host in input");
        fz_check(h.content_length >= -1, "content length");
        for (i = 0; i < h.nheaders; i++) {
            fz_check_str(&h.headers[i].value, buf, size, "value in input");
        }

    } else {
        fz_check(rc == 400 || rc == 405 || rc == 501, "status");
        fz_check(h.err != NULL, "reason");
    }

    free(buf);
    return 0;
}
