/*
 * A ClientHello's session id, name and version offers (see tls_hello.h;
 * RFC 8446 4.1.2, RFC 5246 7.4.1.2, RFC 6066 3, RFC 5077 3.2).
 */

#include "gn_config.h"

#include "tls_hello.h"


#define gn_get16(p)  ((size_t) (p)[0] << 8 | (size_t) (p)[1])


/* The extensions block ext[0..len): the ones we look at. */
static gn_int_t
gn_tls_hello_exts(const u_char *ext, size_t len, gn_tls_hello_t *h)
{
    size_t         type, size, n, k;
    const u_char  *d;

    while (len > 0) {
        if (len < 4) {
            return GN_DECLINED;
        }
        type = gn_get16(ext);
        size = gn_get16(ext + 2);
        if (size > len - 4) {
            return GN_DECLINED;
        }
        d = ext + 4;

        switch (type) {

        case 0:                                 /* server_name */
            /* list length, then entries: type, length, name */
            if (size < 2 || gn_get16(d) != size - 2) {
                return GN_DECLINED;
            }
            for (k = 2; k + 3 <= size; k += 3 + n) {
                n = gn_get16(d + k + 1);
                if (n > size - k - 3) {
                    return GN_DECLINED;
                }
                if (d[k] == 0 && h->sni == NULL && n > 0) {
                    h->sni = d + k + 3;
                    h->sni_len = n;
                }
            }
            break;

        case 35:                                /* session_ticket */
            h->ticket = size > 0;
            break;

        case 43:                                /* supported_versions */
            if (size < 1 || d[0] != size - 1 || (d[0] & 1)) {
                return GN_DECLINED;
            }
            for (k = 1; k + 1 < size; k += 2) {
                if (d[k] == 0x03 && d[k + 1] == 0x04) {
                    h->tls13 = 1;
                }
            }
            break;

        default:
            break;
        }

        ext += 4 + size;
        len -= 4 + size;
    }

    return GN_OK;
}


gn_int_t
gn_tls_hello_parse(const u_char *buf, size_t len, gn_tls_hello_t *h)
{
    const u_char  *p, *end;
    size_t         rlen, hlen, n;

    memset(h, 0, sizeof(*h));

    /* record: handshake (22), version, length */
    if (len < 5) {
        return GN_AGAIN;
    }
    if (buf[0] != 22) {
        return GN_DECLINED;
    }
    rlen = gn_get16(buf + 3);
    if (rlen < 4 || rlen > 16384) {
        return GN_DECLINED;
    }
    if (len < 5 + rlen) {
        return GN_AGAIN;
    }

    /* handshake: client_hello (1), 24-bit length */
    p = buf + 5;
    if (p[0] != 1) {
        return GN_DECLINED;
    }
    hlen = (size_t) p[1] << 16 | (size_t) p[2] << 8 | p[3];
    if (hlen > rlen - 4) {
        return GN_AGAIN;                /* it goes on in the next record */
    }
    p += 4;
    end = p + hlen;

    /* legacy_version, random */
    if (end - p < 2 + 32 + 1) {
        return GN_DECLINED;
    }
    p += 2 + 32;

    n = *p++;
    if (n > 32 || (size_t) (end - p) < n) {
        return GN_DECLINED;
    }
    if (n > 0) {
        h->sid = p;
        h->sid_len = n;
    }
    p += n;

    /* cipher_suites, compression_methods */
    if (end - p < 2) {
        return GN_DECLINED;
    }
    n = gn_get16(p);
    p += 2;
    if ((size_t) (end - p) < n + 1) {
        return GN_DECLINED;
    }
    p += n;
    n = *p++;
    if ((size_t) (end - p) < n) {
        return GN_DECLINED;
    }
    p += n;

    if (p == end) {
        return GN_OK;                   /* no extensions */
    }
    if (end - p < 2 || gn_get16(p) != (size_t) (end - p - 2)) {
        return GN_DECLINED;
    }

    return gn_tls_hello_exts(p + 2, (size_t) (end - p - 2), h);
}
