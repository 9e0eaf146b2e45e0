/*
 * FastCGI 1.0 records (fastcgi.h).
 */

#include "gn_config.h"

#include "fastcgi.h"


#define GN_FCGI_VERSION     1
#define GN_FCGI_RESPONDER   1
#define GN_FCGI_KEEP_CONN   1
#define GN_FCGI_ID          1               /* every request's */

/* content per record: a multiple of 8, so that only the last of a
 * stream is padded */
#define GN_FCGI_CHUNK       (GN_FCGI_RECORD_MAX & ~(size_t) 7)


static u_char *
gn_fcgi_header(u_char *p, gn_uint_t type, size_t len, size_t pad)
{
    p[0] = GN_FCGI_VERSION;
    p[1] = (u_char) type;
    p[2] = 0;
    p[3] = GN_FCGI_ID;
    p[4] = (u_char) (len >> 8);
    p[5] = (u_char) len;
    p[6] = (u_char) pad;
    p[7] = 0;
    return p + GN_FCGI_HEADER_LEN;
}


u_char *
gn_fcgi_begin(u_char *p, gn_uint_t keep)
{
    p = gn_fcgi_header(p, GN_FCGI_BEGIN_REQUEST, 8, 0);
    memset(p, 0, 8);
    p[1] = GN_FCGI_RESPONDER;
    p[2] = keep ? GN_FCGI_KEEP_CONN : 0;
    return p + 8;
}


static u_char *
gn_fcgi_length(u_char *p, size_t n)
{
    if (n < 128) {
        *p++ = (u_char) n;
        return p;
    }
    *p++ = (u_char) ((n >> 24) | 0x80);
    *p++ = (u_char) (n >> 16);
    *p++ = (u_char) (n >> 8);
    *p++ = (u_char) n;
    return p;
}


size_t
gn_fcgi_pair_len(u_char *p, size_t nlen, size_t vlen)
{
    if (p != NULL) {
        p = gn_fcgi_length(p, nlen);
        (void) gn_fcgi_length(p, vlen);
    }
    return (size_t) (nlen < 128 ? 1 : 4) + (vlen < 128 ? 1 : 4);
}


size_t
gn_fcgi_stream(u_char *p, gn_uint_t type, const u_char *data, size_t len,
    gn_uint_t last)
{
    size_t  total = 0, n, pad;

    while (len > 0) {
        n = gn_min(len, GN_FCGI_CHUNK);
        pad = (8 - n % 8) % 8;
        if (p != NULL) {
            p = gn_fcgi_header(p, type, n, pad);
            memcpy(p, data, n);
            memset(p + n, 0, pad);
            p += n + pad;
        }
        total += GN_FCGI_HEADER_LEN + n + pad;
        data += n;
        len -= n;
    }

    if (!last) {
        return total;
    }
    if (p != NULL) {
        (void) gn_fcgi_header(p, type, 0, 0);
    }
    return total + GN_FCGI_HEADER_LEN;
}


/* The END_REQUEST record was read whole, padding included? */
static gn_uint_t
gn_fcgi_ended(const gn_fcgi_dec_t *d)
{
    return d->type == GN_FCGI_END_REQUEST && d->end_len == 8
           && d->content == 0 && d->padding == 0;
}


/* A record's header is complete: what follows it. */
static gn_int_t
gn_fcgi_record(gn_fcgi_dec_t *d, const char **why)
{
    const u_char  *h = d->hdr;
    gn_uint_t      type, id;
    size_t         len;

    if (h[0] != GN_FCGI_VERSION) {
        *why = "a FastCGI record of an unknown version";
        return GN_ERROR;
    }

    type = h[1];
    id = (gn_uint_t) h[2] << 8 | h[3];
    len = (size_t) h[4] << 8 | h[5];

    d->content = len;
    d->padding = h[6];
    d->type = 0;                          /* skipped */

    if (type != GN_FCGI_STDOUT && type != GN_FCGI_STDERR
        && type != GN_FCGI_END_REQUEST)
    {
        return GN_OK;
    }

    if (id != GN_FCGI_ID) {
        *why = "a FastCGI record of another request";
        return GN_ERROR;
    }

    if (type == GN_FCGI_STDOUT) {
        if (d->stdout_ended && len > 0) {
            *why = "FastCGI stdout after its end";
            return GN_ERROR;
        }
        d->stdout_ended |= len == 0;
    }

    if (type == GN_FCGI_END_REQUEST) {
        if (len != 8) {
            *why = "a FastCGI end of request of a wrong length";
            return GN_ERROR;
        }
        d->end_len = 0;
    }

    d->type = type;
    return GN_OK;
}


gn_int_t
gn_fcgi_decode(gn_fcgi_dec_t *d, u_char *buf, size_t len, size_t *out,
    size_t *rest, gn_fcgi_stderr_pt err, void *data, const char **why)
{
    u_char  *p = buf, *end = buf + len, *o = buf;
    size_t   n;

    *rest = 0;

    for ( ;; ) {
        if (gn_fcgi_ended(d)) {
            d->app_status = (gn_uint_t) d->end[0] << 24
                            | (gn_uint_t) d->end[1] << 16
                            | (gn_uint_t) d->end[2] << 8 | d->end[3];
            d->protocol_status = d->end[4];
            *out = (size_t) (o - buf);
            *rest = (size_t) (end - p);
            return GN_DONE;
        }

        if (p == end) {
            break;
        }

        if (d->content > 0) {
            n = gn_min(d->content, (size_t) (end - p));
            if (d->type == GN_FCGI_STDOUT) {
                memmove(o, p, n);
                o += n;
            } else if (d->type == GN_FCGI_STDERR) {
                err(data, p, n);
            } else if (d->type == GN_FCGI_END_REQUEST) {
                memcpy(d->end + d->end_len, p, n);
                d->end_len += n;
            }
            p += n;
            d->content -= n;
            continue;
        }

        if (d->padding > 0) {
            n = gn_min(d->padding, (size_t) (end - p));
            p += n;
            d->padding -= n;
            continue;
        }

        n = gn_min(GN_FCGI_HEADER_LEN - d->hlen, (size_t) (end - p));
        memcpy(d->hdr + d->hlen, p, n);
        d->hlen += n;
        p += n;
        if (d->hlen < GN_FCGI_HEADER_LEN) {
            break;
        }
        d->hlen = 0;
        if (gn_fcgi_record(d, why) != GN_OK) {
            return GN_ERROR;
        }
    }

    *out = (size_t) (o - buf);
    return GN_OK;
}
