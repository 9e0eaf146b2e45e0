/*
 * String helpers and number parsers.
 */

#include "gn_config.h"

#include "str.h"


u_char *
gn_strlow(u_char *dst, const u_char *src, size_t n)
{
    while (n--) {
        *dst++ = gn_tolower(*src);
        src++;
    }

    return dst;
}


/* Field names and tokens mostly match byte for byte (a client's "Host"
 * against our "Host"): they are compared a word at a time (the last,
 * short word overlapping the one before) while they are equal, and by
 * case from the first word that differs. */
gn_int_t
gn_strncasecmp(const u_char *s1, const u_char *s2, size_t n)
{
    u_char    c1, c2;
    size_t    i;
    uint32_t  h1, h2, t1, t2;
    uint64_t  w1, w2;

    i = 0;

    if (n >= 8) {
        for ( /* void */ ; n - i >= 8; i += 8) {
            memcpy(&w1, s1 + i, 8);
            memcpy(&w2, s2 + i, 8);
            if (w1 != w2) {
                goto bytes;
            }
        }
        if (i == n) {
            return 0;
        }
        memcpy(&w1, s1 + n - 8, 8);
        memcpy(&w2, s2 + n - 8, 8);
        if (w1 == w2) {
            return 0;
        }

    } else if (n >= 4) {
        memcpy(&h1, s1, 4);
        memcpy(&h2, s2, 4);
        memcpy(&t1, s1 + n - 4, 4);
        memcpy(&t2, s2 + n - 4, 4);
        if (h1 == h2 && t1 == t2) {
            return 0;
        }
    }

bytes:

    for ( /* void */ ; i < n; i++) {
        c1 = gn_tolower(s1[i]);
        c2 = gn_tolower(s2[i]);
        if (c1 != c2) {
            return c1 - c2;
        }
    }

    return 0;
}


int
gn_str_cmp(const gn_str_t *a, const gn_str_t *b)
{
    int  rc;

    rc = memcmp(a->data, b->data, gn_min(a->len, b->len));
    if (rc != 0) {
        return rc;
    }

    return (a->len > b->len) - (a->len < b->len);
}


int
gn_str_casecmp(const gn_str_t *a, const gn_str_t *b)
{
    gn_int_t  rc;

    rc = gn_strncasecmp(a->data, b->data, gn_min(a->len, b->len));
    if (rc != 0) {
        return rc < 0 ? -1 : 1;
    }

    return (a->len > b->len) - (a->len < b->len);
}


gn_int_t
gn_atoi(const u_char *s, size_t n)
{
    gn_int_t  value, cutoff, cutlim;

    if (n == 0) {
        return GN_ERROR;
    }

    cutoff = GN_MAX_INT_T_VALUE / 10;
    cutlim = GN_MAX_INT_T_VALUE % 10;

    for (value = 0; n--; s++) {
        if (*s < '0' || *s > '9') {
            return GN_ERROR;
        }

        if (value > cutoff || (value == cutoff && *s - '0' > cutlim)) {
            return GN_ERROR;
        }

        value = value * 10 + (*s - '0');
    }

    return value;
}


gn_int_t
gn_hextoi(const u_char *s, size_t n)
{
    u_char    c, ch;
    gn_int_t  value, cutoff;

    if (n == 0) {
        return GN_ERROR;
    }

    cutoff = GN_MAX_INT_T_VALUE / 16;

    for (value = 0; n--; s++) {
        if (value > cutoff) {
            return GN_ERROR;
        }

        ch = *s;

        if (ch >= '0' && ch <= '9') {
            value = value * 16 + (ch - '0');
            continue;
        }

        c = (u_char) (ch | 0x20);

        if (c >= 'a' && c <= 'f') {
            value = value * 16 + (c - 'a' + 10);
            continue;
        }

        return GN_ERROR;
    }

    return value;
}


ssize_t
gn_parse_size(const gn_str_t *s)
{
    size_t    len;
    gn_int_t  value, scale;

    len = s->len;
    if (len == 0) {
        return GN_ERROR;
    }

    switch (s->data[len - 1]) {
    case 'k': case 'K': scale = 1024; len--; break;
    case 'm': case 'M': scale = 1024 * 1024; len--; break;
    case 'g': case 'G': scale = 1024 * 1024 * 1024; len--; break;
    default: scale = 1;
    }

    value = gn_atoi(s->data, len);
    if (value == GN_ERROR || value > GN_MAX_INT_T_VALUE / scale) {
        return GN_ERROR;
    }

    return (ssize_t) (value * scale);
}


gn_int_t
gn_parse_msec(const gn_str_t *s, gn_msec_t *out)
{
    u_char     *p, *end;
    gn_int_t    value;
    gn_msec_t   total, scale, add;

    if (s->len == 0) {
        return GN_ERROR;
    }

    total = 0;
    p = s->data;
    end = p + s->len;

    while (p < end) {
        value = 0;
        if (*p < '0' || *p > '9') {
            return GN_ERROR;
        }

        while (p < end && *p >= '0' && *p <= '9') {
            if (value > (GN_MAX_INT_T_VALUE - 9) / 10) {
                return GN_ERROR;
            }
            value = value * 10 + (*p++ - '0');
        }

        if (p == end) {
            scale = 1000;                                /* bare: seconds */

        } else if (*p == 'm' && p + 1 < end && p[1] == 's') {
            scale = 1;
            p += 2;

        } else {
            switch (*p++) {
            case 's': scale = 1000; break;
            case 'm': scale = 60 * 1000; break;
            case 'h': scale = 60 * 60 * 1000; break;
            case 'd': scale = 24 * 60 * 60 * 1000; break;
            case 'w': scale = 7 * 24 * 60 * 60 * 1000ULL; break;
            case 'y': scale = 365 * 24 * 60 * 60 * 1000ULL; break;
            default: return GN_ERROR;
            }
        }

        if ((gn_msec_t) value > (UINT64_MAX / 2) / scale) {
            return GN_ERROR;
        }

        add = (gn_msec_t) value * scale;
        if (total > UINT64_MAX / 2 - add) {
            return GN_ERROR;
        }
        total += add;
    }

    *out = total;
    return GN_OK;
}


char *
gn_pstrdup_cstr(gn_pool_t *pool, const gn_str_t *s)
{
    char  *p;

    p = gn_pnalloc(pool, s->len + 1);
    if (p == NULL) {
        return NULL;
    }

    memcpy(p, s->data, s->len);
    p[s->len] = '\0';

    return p;
}


u_char *
gn_pstrdup(gn_pool_t *pool, const gn_str_t *src, gn_str_t *dst)
{
    dst->data = gn_pnalloc(pool, src->len + 1);
    if (dst->data == NULL) {
        return NULL;
    }

    memcpy(dst->data, src->data, src->len);
    dst->data[src->len] = '\0';
    dst->len = src->len;

    return dst->data;
}


gn_int_t
gn_str_reserve(u_char **buf, size_t *cap, size_t need, size_t min)
{
    size_t   size;
    u_char  *p;

    if (need <= *cap) {
        return GN_OK;
    }

    size = gn_max(gn_max(*cap, min), 1);
    while (size < need) {
        size = size > SIZE_MAX / 2 ? need : size * 2;
    }

    p = realloc(*buf, size);
    if (p == NULL) {
        return GN_ERROR;
    }

    *buf = p;
    *cap = size;

    return GN_OK;
}


/*
 * The five characters that end or open markup or an attribute value;
 * every other byte is copied as it is (a browser shows bad UTF-8 as
 * U+FFFD, which is no markup).
 */
size_t
gn_str_escape_html(u_char *p, const u_char *s, size_t n)
{
    static const char  *esc[] = { "&amp;", "&lt;", "&gt;", "&quot;",
                                  "&#39;" };
    const char         *e;
    size_t              len, i, k;

    for (len = 0, i = 0; i < n; i++) {
        switch (s[i]) {
        case '&':  e = esc[0]; break;
        case '<':  e = esc[1]; break;
        case '>':  e = esc[2]; break;
        case '"':  e = esc[3]; break;
        case '\'': e = esc[4]; break;
        default:
            if (p != NULL) {
                p[len] = s[i];
            }
            len++;
            continue;
        }

        k = strlen(e);
        if (p != NULL) {
            memcpy(p + len, e, k);
        }
        len += k;
    }

    return len;
}
