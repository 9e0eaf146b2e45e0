/*
 * libFuzzer harness: the parser of an upstream's response head
 * (gn_http_parse_response, core/http_parse.c), as the proxy calls it:
 * on the bytes up to and including the first CRLF CRLF.
 *
 * Invariants: the result is GN_OK or GN_ERROR, an error has its reason;
 * on success the status is 100..599, the version 1.0 or 1.1, the field
 * count within the room given, every field's name and value inside the
 * head, a name never empty, and the framing consistent (chunked and a
 * Content-Length never both, a length never below -1).
 */

#include "gn_config.h"

#include "http_parse.h"

#define FZ_NAME  "fuzz_http_response"
#include "fz.h"


#define FZ_MAX_HEADERS  16


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gn_http_head_t    h;
    gn_http_header_t  hdrs[FZ_MAX_HEADERS];
    u_char           *buf, *end;
    size_t            len;
    gn_uint_t         i;
    gn_int_t          rc;

    end = memmem(data, size, "\r\n\r\n", 4);
    len = end != NULL ? (size_t) (end - (u_char *) data) + 4 : size;

    buf = malloc(len ? len : 1);           /* ASan sees every overread */
    if (buf == NULL) {
        return 0;
    }
    memcpy(buf, data, len);

    rc = gn_http_parse_response(&h, buf, len, hdrs, FZ_MAX_HEADERS);

    fz_check(rc == GN_OK || rc == GN_ERROR, "a documented result");
    if (rc != GN_OK) {
        fz_check(h.err != NULL, "an error has its reason");
        free(buf);
        return 0;
    }

    fz_check(h.status >= 100 && h.status <= 599, "status 100..599");
    fz_check(h.version == GN_HTTP_VERSION_10
             || h.version == GN_HTTP_VERSION_11, "version 1.0 or 1.1");
    fz_check(h.nheaders <= FZ_MAX_HEADERS, "fields within the room");
    fz_check(h.content_length >= -1, "length -1 or more");
    fz_check(!(h.chunked && h.content_length != -1),
             "never chunked and a Content-Length");
    fz_check(!(h.chunked && h.version == GN_HTTP_VERSION_10),
             "never chunked in HTTP/1.0");

    for (i = 0; i < h.nheaders; i++) {
        fz_check(hdrs[i].name.len > 0, "a field has a name");
        fz_check_str(&hdrs[i].name, buf, len, "a name inside the head");
        fz_check_str(&hdrs[i].value, buf, len, "a value inside the head");
    }

    free(buf);
    return 0;
}
