/*
 * libFuzzer harness: what fastcgi_pass does with a responder's bytes
 * (core/fastcgi.c, then core/http_parse.c's CGI head): the records
 * decoded whole, and again in pieces whose sizes the first input byte
 * picks; the STDOUT they carried searched for the end of a CGI head and
 * that head parsed.
 *
 * Invariants: the decoder's result is GN_OK, GN_DONE or GN_ERROR, an
 * error has its reason; STDOUT never grows past the bytes given, nor
 * does what follows an END_REQUEST; pieces give the same result, the
 * same STDOUT and the same STDERR as the whole; a CGI head's end lies
 * within STDOUT, its parse is GN_OK or GN_ERROR (with a reason), a
 * status of 200..599, fields inside the head, a length of -1 or more.
 */

#include "gn_config.h"

#include "fastcgi.h"
#include "http_parse.h"

#define FZ_NAME  "fuzz_fastcgi"
#include "fz.h"


#define FZ_MAX_HEADERS  16

typedef struct {
    size_t  len;                 /* STDERR bytes seen */
    uint32_t sum;                /* ... and a checksum of them */
} fz_err_t;


static void
fz_stderr(void *data, const u_char *p, size_t len)
{
    fz_err_t  *e = data;
    size_t     i;

    for (i = 0; i < len; i++) {
        e->sum = e->sum * 31 + p[i];
    }
    e->len += len;
}


/* Decodes in[0..n) in pieces of `step` bytes (0: whole) into out. */
static gn_int_t
fz_decode(const u_char *in, size_t n, size_t step, u_char *out,
    size_t *olen, fz_err_t *e)
{
    gn_fcgi_dec_t   d;
    u_char         *buf;
    size_t          off, k, got, rest;
    const char     *why;
    gn_int_t        rc = GN_OK;

    memset(&d, 0, sizeof(d));
    *olen = 0;

    for (off = 0; off < n && rc == GN_OK; off += k) {
        k = step == 0 ? n - off : gn_min(step, n - off);
        buf = malloc(k);                  /* ASan sees every overread */
        if (buf == NULL) {
            return GN_ERROR;
        }
        memcpy(buf, in + off, k);
        why = NULL;
        rc = gn_fcgi_decode(&d, buf, k, &got, &rest, fz_stderr, e, &why);
        fz_check(rc == GN_OK || rc == GN_DONE || rc == GN_ERROR,
                 "a documented result");
        fz_check(rc != GN_ERROR || why != NULL, "an error has its reason");
        if (rc != GN_ERROR) {
            fz_check(got <= k, "STDOUT within the bytes given");
            fz_check(rc != GN_DONE || got + rest <= k,
                     "what follows the end within the bytes given");
            memcpy(out + *olen, buf, got);
            *olen += got;
        }
        free(buf);
    }

    return rc;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gn_http_head_t    h;
    gn_http_header_t  hdrs[FZ_MAX_HEADERS];
    fz_err_t          e1 = { 0, 0 }, e2 = { 0, 0 };
    u_char           *out1, *out2, *head;
    size_t            n1, n2, end, step;
    gn_uint_t         i;
    gn_int_t          rc1, rc2, rc;

    if (size < 1) {
        return 0;
    }
    step = (size_t) data[0] % 17 + 1;
    data++;
    size--;

    out1 = malloc(size + 1);
    out2 = malloc(size + 1);
    if (out1 == NULL || out2 == NULL) {
        free(out1);
        free(out2);
        return 0;
    }

    rc1 = fz_decode(data, size, 0, out1, &n1, &e1);
    rc2 = fz_decode(data, size, step, out2, &n2, &e2);

    fz_check(rc1 == rc2, "pieces: the same result");
    if (rc1 != GN_ERROR) {
        fz_check(n1 == n2 && memcmp(out1, out2, n1) == 0,
                 "pieces: the same STDOUT");
        fz_check(e1.len == e2.len && e1.sum == e2.sum,
                 "pieces: the same STDERR");
    }

    end = rc1 != GN_ERROR ? gn_http_cgi_head_end(out1, n1, 0) : 0;
    fz_check(end <= n1, "a head's end within STDOUT");

    if (end > 0) {
        head = malloc(end);
        if (head != NULL) {
            memcpy(head, out1, end);
            rc = gn_http_parse_cgi(&h, head, end, hdrs, FZ_MAX_HEADERS);
            fz_check(rc == GN_OK || rc == GN_ERROR, "a documented parse");
            fz_check(rc == GN_OK || h.err != NULL, "a refusal has a reason");
            if (rc == GN_OK) {
                fz_check(h.status >= 200 && h.status <= 599,
                         "status 200..599");
                fz_check(h.nheaders >= 1 && h.nheaders <= FZ_MAX_HEADERS,
                         "one field at least, within the room");
                fz_check(h.content_length >= -1, "length -1 or more");
                fz_check(!h.chunked, "never chunked");
                for (i = 0; i < h.nheaders; i++) {
                    fz_check(hdrs[i].name.len > 0, "a field has a name");
                    fz_check_str(&hdrs[i].name, head, end,
                                 "a name inside the head");
                    fz_check_str(&hdrs[i].value, head, end,
                                 "a value inside the head");
                }
            }
            free(head);
        }
    }

    free(out1);
    free(out2);
    return 0;
}
