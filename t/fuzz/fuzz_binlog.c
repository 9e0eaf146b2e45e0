/*
 * libFuzzer harness: the binary access-log reader (core/binlog.c), as
 * gannet-logcat uses it.
 *
 * Input: a log file. When it starts with the magic, the file header is
 * checked first; then records are decoded one after the other. For each
 * record: every strictly shorter prefix asks for more (GN_AGAIN); its
 * strings lie inside it; re-encoding a record with the standard fixed
 * part gives back the same bytes; the text escapers measure exactly what
 * they write; the address and method helpers do not overrun.
 */

#include "gn_config.h"

#include "binlog.h"

#define FZ_NAME  "fuzz_binlog"
#include "fz.h"


static void
fz_escape(const gn_str_t *s)
{
    u_char     *out;
    size_t      n, m;
    gn_uint_t   mode;

    for (mode = GN_BINLOG_ESC_DEFAULT; mode <= GN_BINLOG_ESC_NONE; mode++) {
        n = gn_binlog_escape(NULL, s->data, s->len, mode);

        /* exactly n bytes: writing more is an ASan report */
        out = malloc(n ? n : 1);
        if (out == NULL) {
            return;
        }

        m = gn_binlog_escape(out, s->data, s->len, mode);
        fz_check(m == n, "escape writes what it measured");

        free(out);
    }
}


static void
fz_record(const u_char *p, size_t used, const gn_binlog_rec_t *rec)
{
    char              err[256], addr[64];
    u_char           *enc, *end;
    size_t            k, used2;
    gn_uint_t         i;
    gn_binlog_rec_t   rec2;

    fz_check(used >= GN_BINLOG_FIXED_SIZE, "a record holds the fixed part");

    /* every prefix asks for more */
    for (k = 0; k < used; k += (k < 80 ? 1 : 97)) {
        fz_check(gn_binlog_decode(p, k, &rec2, &used2, err, sizeof(err))
                 == GN_AGAIN, "a truncated record asks for more");
    }

    for (i = 0; i < GN_BINLOG_NSTR; i++) {
        fz_check(rec->str[i].len <= GN_BINLOG_STR_MAX, "string capped");
        fz_check(rec->str[i].len == 0
                 || (rec->str[i].data >= p
                     && rec->str[i].data + rec->str[i].len <= p + used),
                 "string inside the record");

        fz_escape(&rec->str[i]);
    }

    (void) gn_binlog_addr_text(rec->addr, addr, sizeof(addr));
    (void) gn_binlog_method_name(rec->method);

    /* the standard layout round-trips byte for byte */
    if ((p[4] | (p[5] << 8)) == GN_BINLOG_FIXED_SIZE
        && p[21] == 0 && p[22] == 0 && p[23] == 0)
    {
        fz_check(gn_binlog_size(rec) == used, "size of a decoded record");

        enc = malloc(used);
        if (enc == NULL) {
            return;
        }

        end = gn_binlog_encode(enc, rec);

        fz_check((size_t) (end - enc) == used, "encode writes size bytes");
        fz_check(memcmp(enc, p, used) == 0, "encode(decode(x)) == x");

        free(enc);
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char              err[256];
    u_char           *buf, *p, *end;
    size_t            used;
    gn_int_t          rc;
    gn_binlog_rec_t   rec;

    buf = malloc(size ? size : 1);
    if (buf == NULL) {
        return 0;
    }

    if (size) {
        memcpy(buf, data, size);
    }

    p = buf;
    end = buf + size;

    if (size >= 1 && buf[0] == 'G') {
        err[0] = '\0';
        rc = gn_binlog_check_header(p, size, err, sizeof(err));

        fz_check(rc == GN_OK || rc == GN_AGAIN || rc == GN_ERROR,
                 "check_header: known result");
        fz_check(rc != GN_ERROR || err[0] != '\0', "an error has a reason");

        if (rc != GN_OK) {
            goto done;
        }

        p += GN_BINLOG_HEADER_SIZE;
    }

    while (p < end) {
        err[0] = '\0';
        used = 0;

        rc = gn_binlog_decode(p, (size_t) (end - p), &rec, &used, err,
                              sizeof(err));

        if (rc != GN_OK) {
            fz_check(rc == GN_AGAIN || rc == GN_ERROR, "decode: known result");
            fz_check(rc != GN_ERROR || err[0] != '\0', "an error has a reason");
            break;
        }

        fz_check(used > 0 && used <= (size_t) (end - p), "used in range");

        fz_record(p, used, &rec);

        p += used;
    }

done:

    free(buf);

    return 0;
}
