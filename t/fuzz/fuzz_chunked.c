/*
 * libFuzzer harness: the chunked transfer-coding decoder
 * (gn_http_chunked_parse() in core/http_parse.c).
 *
 * Input: byte 0 and byte 1 give two split points, byte 2 the body limit,
 * the rest is the body as received. The body is decoded whole, in three
 * pieces cut at the two split points, and one byte at a time; the
 * result, the decoded data and where decoding stopped must be the same
 * every time (the decoder promises it may be fed any split). After an
 * error the chunk size left in the context is 0 unless that size is what
 * crossed the body limit (the caller's 400 or 413 depends on it).
 */

#include "gn_config.h"

#include "http_parse.h"

#define FZ_NAME  "fuzz_chunked"
#include "fz.h"


typedef struct {
    gn_int_t    rc;
    size_t      stop;       /* offset where DONE or ERROR left *pos */
    size_t      out_len;
    u_char     *out;
    off_t       total;
} fz_result_t;


/* Decodes buf[0..len) fed as the pieces ending at cuts[0..ncuts). */
static void
fz_decode(u_char *buf, size_t len, const size_t *cuts, size_t ncuts,
    off_t max_body, fz_result_t *res)
{
    u_char             *pos, *end, *d;
    size_t              k, sz;
    gn_int_t            rc;
    gn_http_chunked_t   ctx;

    memset(&ctx, 0, sizeof(gn_http_chunked_t));
    res->out_len = 0;
    res->stop = 0;

    pos = buf;
    rc = GN_AGAIN;

    for (k = 0; k < ncuts; k++) {
        end = buf + cuts[k];

        for ( ;; ) {
            d = NULL;
            sz = 0;

            rc = gn_http_chunked_parse(&ctx, &pos, end, &d, &sz, max_body);

            if (rc != GN_OK) {
                break;
            }

            fz_check(sz > 0, "GN_OK hands out data");
            fz_check(d >= buf && d + sz <= end, "data inside the input");
            fz_check(pos == d + sz, "pos is just past the data");

            memcpy(res->out + res->out_len, d, sz);
            res->out_len += sz;
        }

        if (rc == GN_AGAIN) {
            fz_check(pos == end, "GN_AGAIN consumed all input");
            continue;
        }

        fz_check(rc == GN_DONE || rc == GN_ERROR, "known result");
        fz_check(pos >= buf && pos <= end, "pos inside the input");
        fz_check(rc != GN_ERROR || ctx.size == 0
                 || (max_body > 0 && ctx.size > max_body - ctx.total),
                 "an error leaves size 0 unless it crossed max_body");

        res->stop = (size_t) (pos - buf);

        /* the state sticks */
        fz_check(gn_http_chunked_parse(&ctx, &pos, buf + len, &d, &sz,
                                       max_body) == rc, "result sticks");
        break;
    }

    res->rc = rc;
    res->total = ctx.total;

    fz_check(ctx.total == (off_t) res->out_len, "total == data handed out");
    fz_check(max_body <= 0 || ctx.total <= max_body, "total <= max_body");
}


static void
fz_same(const fz_result_t *a, const fz_result_t *b, const char *what)
{
    fz_check(a->rc == b->rc, what);
    fz_check(a->out_len == b->out_len, what);
    fz_check(a->out_len == 0 || memcmp(a->out, b->out, a->out_len) == 0,
             what);

    if (a->rc != GN_AGAIN) {
        fz_check(a->stop == b->stop, what);
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char       *buf, *bytes;
    off_t         max_body;
    size_t        len, s1, s2, t, i, cuts[3], *all;
    fz_result_t   whole, split, one;

    if (size < 3) {
        return 0;
    }

    len = size - 3;
    s1 = ((size_t) data[0] * (len + 1)) / 256;
    s2 = ((size_t) data[1] * (len + 1)) / 256;
    max_body = data[2] == 0 ? 0 : (off_t) data[2] * 8;

    if (s1 > s2) {
        t = s1;
        s1 = s2;
        s2 = t;
    }

    buf = malloc(len + 1);
    whole.out = malloc(len + 1);
    split.out = malloc(len + 1);
    one.out = malloc(len + 1);
    all = malloc((len + 1) * sizeof(size_t));

    if (buf == NULL || whole.out == NULL || split.out == NULL
        || one.out == NULL || all == NULL)
    {
        goto done;
    }

    /* the body sits at the very end of its allocation */
    bytes = buf + 1;
    memcpy(bytes, data + 3, len);

    cuts[0] = len;
    fz_decode(bytes, len, cuts, 1, max_body, &whole);

    cuts[0] = s1;
    cuts[1] = s2;
    cuts[2] = len;
    fz_decode(bytes, len, cuts, 3, max_body, &split);

    for (i = 0; i < len; i++) {
        all[i] = i + 1;
    }

    fz_decode(bytes, len, all, len, max_body, &one);

    fz_same(&whole, &split, "same result whole and split in three");
    fz_same(&whole, &one, "same result whole and byte at a time");

done:

    free(buf);
    free(whole.out);
    free(split.out);
    free(one.out);
    free(all);

    return 0;
}
