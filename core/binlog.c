/*
 * Binary access log records: encoder, decoder, and the text escapers the
 * server and gannet-logcat share. Explicit little-endian stores, so a
 * log written on one host reads the same on any other.
 */

#include "gn_config.h"

#include <arpa/inet.h>

#include "binlog.h"


static const char  *gn_binlog_methods[] = {
    NULL, "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE",
    "CONNECT", "PATCH"
};


static void
gn_binlog_put16(u_char *p, uint16_t v)
{
    p[0] = (u_char) v;
    p[1] = (u_char) (v >> 8);
}


static void
gn_binlog_put32(u_char *p, uint32_t v)
{
    gn_binlog_put16(p, (uint16_t) v);
    gn_binlog_put16(p + 2, (uint16_t) (v >> 16));
}


static void
gn_binlog_put64(u_char *p, uint64_t v)
{
    gn_binlog_put32(p, (uint32_t) v);
    gn_binlog_put32(p + 4, (uint32_t) (v >> 32));
}


static uint16_t
gn_binlog_get16(const u_char *p)
{
    return (uint16_t) (p[0] | (p[1] << 8));
}


static uint32_t
gn_binlog_get32(const u_char *p)
{
    return gn_binlog_get16(p) | ((uint32_t) gn_binlog_get16(p + 2) << 16);
}


static uint64_t
gn_binlog_get64(const u_char *p)
{
    return gn_binlog_get32(p) | ((uint64_t) gn_binlog_get32(p + 4) << 32);
}


void
gn_binlog_header(u_char *p)
{
    memcpy(p, GN_BINLOG_MAGIC, 6);
    gn_binlog_put16(p + 6, GN_BINLOG_VERSION);
    gn_binlog_put32(p + 8, GN_BINLOG_BOM);
    gn_binlog_put16(p + 12, GN_BINLOG_HEADER_SIZE);
    gn_binlog_put16(p + 14, 0);
}


gn_int_t
gn_binlog_check_header(const u_char *p, size_t len, char *err, size_t errlen)
{
    uint16_t  version;

    if (len < 6 && memcmp(p, GN_BINLOG_MAGIC, len) == 0) {
        return GN_AGAIN;
    }

    if (len < 6 || memcmp(p, GN_BINLOG_MAGIC, 6) != 0) {
        snprintf(err, errlen, "not a gannet binary log");
        return GN_ERROR;
    }

    if (len < GN_BINLOG_HEADER_SIZE) {
        return GN_AGAIN;
    }

    if (gn_binlog_get32(p + 8) != GN_BINLOG_BOM) {
        snprintf(err, errlen, "not a gannet binary log (bad byte order "
                 "marker)");
        return GN_ERROR;
    }

    version = gn_binlog_get16(p + 6);
    if (version != GN_BINLOG_VERSION) {
        snprintf(err, errlen, "unsupported format version %u (this "
                 "program reads version %u)", (unsigned) version,
                 (unsigned) GN_BINLOG_VERSION);
        return GN_ERROR;
    }

    if (gn_binlog_get16(p + 12) != GN_BINLOG_HEADER_SIZE) {
        snprintf(err, errlen, "not a gannet binary log (bad header size)");
        return GN_ERROR;
    }

    return GN_OK;
}


size_t
gn_binlog_size(const gn_binlog_rec_t *rec)
{
    size_t     n;
    gn_uint_t  i;

    n = GN_BINLOG_FIXED_SIZE;
    for (i = 0; i < GN_BINLOG_NSTR; i++) {
        n += 2 + gn_min(rec->str[i].len, GN_BINLOG_STR_MAX);
    }

    return n;
}


u_char *
gn_binlog_encode(u_char *p, const gn_binlog_rec_t *rec)
{
    size_t     n;
    gn_uint_t  i;

    gn_binlog_put32(p, (uint32_t) gn_binlog_size(rec));
    gn_binlog_put16(p + 4, GN_BINLOG_FIXED_SIZE);
    gn_binlog_put16(p + 6, rec->status);
    gn_binlog_put64(p + 8, (uint64_t) rec->sec);
    gn_binlog_put16(p + 16, rec->msec);
    p[18] = rec->method;
    p[19] = rec->version;
    p[20] = rec->tls;
    p[21] = p[22] = p[23] = 0;
    memcpy(p + 24, rec->addr, 16);
    gn_binlog_put64(p + 40, rec->bytes_sent);
    gn_binlog_put64(p + 48, rec->body_bytes);
    gn_binlog_put32(p + 56, rec->request_time);
    gn_binlog_put32(p + 60, rec->pid);
    p += GN_BINLOG_FIXED_SIZE;

    for (i = 0; i < GN_BINLOG_NSTR; i++) {
        n = gn_min(rec->str[i].len, GN_BINLOG_STR_MAX);
        gn_binlog_put16(p, (uint16_t) n);
        if (n) {
            memcpy(p + 2, rec->str[i].data, n);
        }
        p += 2 + n;
    }

    return p;
}


gn_int_t
gn_binlog_decode(const u_char *p, size_t len, gn_binlog_rec_t *rec,
    size_t *used, char *err, size_t errlen)
{
    size_t          reclen, fixed, off, n;
    gn_uint_t       i;

    if (len < 6) {
        return GN_AGAIN;
    }

    reclen = gn_binlog_get32(p);
    fixed = gn_binlog_get16(p + 4);

    /* a later minor revision may grow the fixed part: skip what we do
     * not know, but never accept less than we need */
    if (fixed < GN_BINLOG_FIXED_SIZE || fixed > 1024
        || reclen < fixed + 2 * GN_BINLOG_NSTR
        || reclen > GN_BINLOG_RECORD_MAX + (fixed - GN_BINLOG_FIXED_SIZE))
    {
        snprintf(err, errlen, "corrupt record (length %zu, fixed part %zu)",
                 reclen, fixed);
        return GN_ERROR;
    }

    if (len < reclen) {
        return GN_AGAIN;
    }

    memset(rec, 0, sizeof(*rec));
    rec->status = gn_binlog_get16(p + 6);
    rec->sec = (int64_t) gn_binlog_get64(p + 8);
    rec->msec = gn_binlog_get16(p + 16);
    rec->method = p[18];
    rec->version = p[19];
    rec->tls = p[20];
    memcpy(rec->addr, p + 24, 16);
    rec->bytes_sent = gn_binlog_get64(p + 40);
    rec->body_bytes = gn_binlog_get64(p + 48);
    rec->request_time = gn_binlog_get32(p + 56);
    rec->pid = gn_binlog_get32(p + 60);

    off = fixed;
    for (i = 0; i < GN_BINLOG_NSTR; i++) {
        if (off + 2 > reclen) {
            goto corrupt;
        }
        n = gn_binlog_get16(p + off);
        off += 2;
        if (n > GN_BINLOG_STR_MAX || off + n > reclen) {
            goto corrupt;
        }
        rec->str[i].len = n;
        rec->str[i].data = n ? (u_char *) p + off : NULL;
        off += n;
    }

    if (off != reclen) {
        goto corrupt;
    }

    *used = reclen;
    return GN_OK;

corrupt:

    snprintf(err, errlen, "corrupt record (strings overrun its length %zu)",
             reclen);
    return GN_ERROR;
}


uint8_t
gn_binlog_method_id(gn_uint_t method)
{
    uint8_t  id;

    /* GN_HTTP_GET is bit 1 ... GN_HTTP_PATCH bit 9; bit 0 is unknown */
    for (id = 1; id < gn_nelems(gn_binlog_methods); id++) {
        if (method == (1u << id)) {
            return id;
        }
    }

    return 0;
}


const char *
gn_binlog_method_name(uint8_t id)
{
    return id < gn_nelems(gn_binlog_methods) ? gn_binlog_methods[id] : NULL;
}


size_t
gn_binlog_addr_text(const u_char *addr, char *buf, size_t len)
{
    static const u_char  mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        0xff, 0xff };

    if (memcmp(addr, mapped, 12) == 0) {
        if (inet_ntop(AF_INET, addr + 12, buf, (socklen_t) len) == NULL) {
            return 0;
        }
    } else if (inet_ntop(AF_INET6, addr, buf, (socklen_t) len) == NULL) {
        return 0;
    }

    return strlen(buf);
}


size_t
gn_binlog_utf8_len(const u_char *s, size_t n)
{
    size_t  len, i;
    u_char  lo, hi;

    lo = 0x80;
    hi = 0xbf;

    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        lo = (s[0] == 0xe0) ? 0xa0 : 0x80;
        hi = (s[0] == 0xed) ? 0x9f : 0xbf;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        lo = (s[0] == 0xf0) ? 0x90 : 0x80;
        hi = (s[0] == 0xf4) ? 0x8f : 0xbf;
    } else {
        return 0;
    }

    if (n < len || s[1] < lo || s[1] > hi) {
        return 0;
    }

    for (i = 2; i < len; i++) {
        if (s[i] < 0x80 || s[i] > 0xbf) {
            return 0;
        }
    }

    return len;
}


/* escape=json for one byte at s[0..n) that is not printable ASCII:
 * valid UTF-8 passes unchanged, a control character is \u00XX, any other
 * byte is U+FFFD. Returns the bytes it stands for and adds the output
 * length to *len. */
static size_t
gn_binlog_escape_json(u_char *p, const u_char *s, size_t n, size_t *len)
{
    static const char  hex[] = "0123456789ABCDEF";
    size_t             k;

    if (s[0] < 0x20) {
        if (p != NULL) {
            memcpy(p, "\\u00", 4);
            p[4] = (u_char) hex[s[0] >> 4];
            p[5] = (u_char) hex[s[0] & 0xf];
        }
        *len += 6;
        return 1;
    }

    k = (s[0] == 0x7f) ? 1 : gn_binlog_utf8_len(s, n);
    if (k > 0) {
        if (p != NULL) {
            memcpy(p, s, k);
        }
        *len += k;
        return k;
    }

    if (p != NULL) {
        memcpy(p, "\\ufffd", 6);
    }
    *len += 6;
    return 1;
}


size_t
gn_binlog_escape(u_char *p, const u_char *s, size_t n, gn_uint_t mode)
{
    static const char  hex[] = "0123456789ABCDEF";
    size_t             len, i;
    u_char             c;

    if (n == 0 || s == NULL) {
        if (mode == GN_BINLOG_ESC_JSON || mode == GN_BINLOG_ESC_VALUE) {
            return 0;
        }
        if (p != NULL) {
            *p = '-';
        }
        return 1;
    }

    if (mode == GN_BINLOG_ESC_NONE || mode == GN_BINLOG_ESC_VALUE) {
        if (p != NULL) {
            memcpy(p, s, n);
        }
        return n;
    }

    len = 0;
    for (i = 0; i < n; i++) {
        c = s[i];

        if (mode == GN_BINLOG_ESC_JSON && (c < 0x20 || c > 0x7e)) {
            i += gn_binlog_escape_json(p != NULL ? p + len : NULL, s + i,
                                       n - i, &len) - 1;
            continue;
        }

        if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
            if (p != NULL) {
                p[len] = c;
            }
            len++;

        } else if (mode == GN_BINLOG_ESC_JSON && (c == '"' || c == '\\')) {
            if (p != NULL) {
                p[len] = '\\';
                p[len + 1] = c;
            }
            len += 2;

        } else {
            if (p != NULL) {
                p[len] = '\\';
                p[len + 1] = 'x';
                p[len + 2] = (u_char) hex[c >> 4];
                p[len + 3] = (u_char) hex[c & 0xf];
            }
            len += 4;
        }
    }

    return len;
}
