/*
 * Conditional requests and byte ranges (RFC 9110 sections 13 and 14).
 *
 * Pure functions on caller-owned buffers: no I/O, no logging, no
 * allocation, no global state. Every loop is bounded by an explicit end
 * pointer; nothing here reads past the length it was given.
 */

#include "gn_config.h"

#include "str.h"
#include "http_cond.h"


#define GN_HTTP_COND_MAX_OFF_T                                                \
    ((off_t) (((uint64_t) 1 << (sizeof(off_t) * 8 - 1)) - 1))

#define gn_http_cond_ows(c)    ((c) == ' ' || (c) == '\t')
#define gn_http_cond_digit(c)  ((c) >= '0' && (c) <= '9')

/* etagc = %x21 / %x23-7E / obs-text */
#define gn_http_cond_etagc(c)                                                 \
    ((c) == 0x21 || ((c) >= 0x23 && (c) != 0x7f))


/* A decimal number of a Range header, saturated at the largest off_t. */
typedef struct {
    off_t           value;
    gn_uint_t       overflow;
    const u_char   *sig;            /* first significant digit */
    size_t          nsig;           /* significant digits */
} gn_http_range_num_t;


static gn_int_t gn_http_date_2digit(const u_char *p);
static gn_int_t gn_http_date_name(const u_char *p, size_t len,
    const char *const *names, gn_uint_t n);
static gn_int_t gn_http_date_time(const u_char *p, gn_int_t *hms);
static gn_int_t gn_http_date_make(gn_int_t year, gn_int_t month,
    gn_int_t day, const gn_int_t *hms, time_t *t);
static gn_int_t gn_http_etag_next(const u_char **pos, const u_char *end,
    gn_str_t *tag);
static gn_int_t gn_http_etag_match(const gn_str_t *value,
    const gn_str_t *etag, gn_uint_t weak);
static gn_uint_t gn_http_etag_cmp(const gn_str_t *tag, const gn_str_t *etag,
    gn_uint_t weak);
static gn_int_t gn_http_cond_date(const gn_str_t *value, time_t *t);
static gn_int_t gn_http_range_spec(const u_char **pos, const u_char *end,
    off_t size, gn_http_range_t *r);
static const u_char *gn_http_range_num(const u_char *p, const u_char *end,
    gn_http_range_num_t *num);
static gn_int_t gn_http_range_num_cmp(const gn_http_range_num_t *a,
    const gn_http_range_num_t *b);
static gn_uint_t gn_http_range_coalesce(gn_http_range_t *r, gn_uint_t n);
static size_t gn_http_cond_declen(uint64_t v);
static u_char *gn_http_cond_dec(u_char *p, uint64_t v);
static u_char *gn_http_cond_hex(u_char *p, uint64_t v);
static size_t gn_http_multipart_header_len(const gn_str_t *boundary,
    const gn_str_t *type, const gn_http_range_t *r, off_t size);


static const char *const  gn_http_months[] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun",
    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

static const char *const  gn_http_wkdays[] = {
    "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"
};

static const char *const  gn_http_wkdays_long[] = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
    "Sunday"
};

static const u_char  gn_http_mdays[] = {
    31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
};


/*
 * The three formats are told apart by their fourth byte: ',' after a
 * three-letter day name (IMF-fixdate), ' ' (asctime), else a long day name
 * (RFC 850). Each then has a fixed layout, checked byte by byte.
 */
gn_int_t
gn_http_parse_date(const u_char *p, size_t len, time_t *t)
{
    size_t    k;
    gn_int_t  day, month, year, hms[3];

    if (len < 24) {
        return GN_ERROR;
    }

    if (p[3] == ',') {
        /* "Sun, 06 Nov 1994 08:49:37 GMT" */
        if (len != 29
            || gn_http_date_name(p, 3, gn_http_wkdays, 7) == GN_ERROR
            || p[4] != ' ' || p[7] != ' ' || p[11] != ' ' || p[16] != ' '
            || p[25] != ' ' || memcmp(p + 26, "GMT", 3) != 0)
        {
            return GN_ERROR;
        }

        day = gn_http_date_2digit(p + 5);
        month = gn_http_date_name(p + 8, 3, gn_http_months, 12);
        year = gn_http_date_2digit(p + 12);
        if (year < 0 || gn_http_date_2digit(p + 14) < 0) {
            return GN_ERROR;
        }

        year = year * 100 + gn_http_date_2digit(p + 14);

        if (gn_http_date_time(p + 17, hms) != GN_OK) {
            return GN_ERROR;
        }

        return gn_http_date_make(year, month, day, hms, t);
    }

    if (p[3] == ' ') {
        /* "Sun Nov  6 08:49:37 1994" */
        if (len != 24
            || gn_http_date_name(p, 3, gn_http_wkdays, 7) == GN_ERROR
            || p[7] != ' ' || p[10] != ' ' || p[19] != ' ')
        {
            return GN_ERROR;
        }

        month = gn_http_date_name(p + 4, 3, gn_http_months, 12);

        if (p[8] == ' ') {
            day = gn_http_cond_digit(p[9]) ? p[9] - '0' : -1;

        } else {
            day = gn_http_date_2digit(p + 8);
        }

        year = gn_http_date_2digit(p + 20);
        if (year < 0 || gn_http_date_2digit(p + 22) < 0) {
            return GN_ERROR;
        }

        year = year * 100 + gn_http_date_2digit(p + 22);

        if (gn_http_date_time(p + 11, hms) != GN_OK) {
            return GN_ERROR;
        }

        return gn_http_date_make(year, month, day, hms, t);
    }

    /* "Sunday, 06-Nov-94 08:49:37 GMT": 22 bytes after "<day-name>, " */
    k = len - 24;
    if (k < 6 || k > 9 || p[k] != ',' || p[k + 1] != ' '
        || gn_http_date_name(p, k, gn_http_wkdays_long, 7) == GN_ERROR)
    {
        return GN_ERROR;
    }

    p += k + 2;

    if (p[2] != '-' || p[6] != '-' || p[9] != ' ' || p[18] != ' '
        || memcmp(p + 19, "GMT", 3) != 0)
    {
        return GN_ERROR;
    }

    day = gn_http_date_2digit(p);
    month = gn_http_date_name(p + 3, 3, gn_http_months, 12);
    year = gn_http_date_2digit(p + 7);
    if (year < 0) {
        return GN_ERROR;
    }

    year += (year < 70) ? 2000 : 1900;

    if (gn_http_date_time(p + 10, hms) != GN_OK) {
        return GN_ERROR;
    }

    return gn_http_date_make(year, month, day, hms, t);
}


/* Two ASCII digits -> 0..99, or -1. */
static gn_int_t
gn_http_date_2digit(const u_char *p)
{
    if (!gn_http_cond_digit(p[0]) || !gn_http_cond_digit(p[1])) {
        return -1;
    }

    return (p[0] - '0') * 10 + (p[1] - '0');
}


/* Index of p[0..len) in names[0..n) (case-sensitive), or GN_ERROR. */
static gn_int_t
gn_http_date_name(const u_char *p, size_t len, const char *const *names,
    gn_uint_t n)
{
    gn_uint_t  i;

    for (i = 0; i < n; i++) {
        if (strlen(names[i]) == len && memcmp(p, names[i], len) == 0) {
            return (gn_int_t) i;
        }
    }

    return GN_ERROR;
}


/* "hh:mm:ss" -> hms[0..3); ranges are checked by gn_http_date_make(). */
static gn_int_t
gn_http_date_time(const u_char *p, gn_int_t *hms)
{
    if (p[2] != ':' || p[5] != ':') {
        return GN_ERROR;
    }

    hms[0] = gn_http_date_2digit(p);
    hms[1] = gn_http_date_2digit(p + 3);
    hms[2] = gn_http_date_2digit(p + 6);

    if (hms[0] < 0 || hms[1] < 0 || hms[2] < 0) {
        return GN_ERROR;
    }

    return GN_OK;
}


/*
 * Validates the fields (month 0..11 as returned by gn_http_date_name())
 * and converts them to seconds since the epoch, with the days-from-civil
 * algorithm of H. Hinnant, in 64-bit arithmetic.
 */
static gn_int_t
gn_http_date_make(gn_int_t year, gn_int_t month, gn_int_t day,
    const gn_int_t *hms, time_t *t)
{
    int64_t    y, m, era, yoe, doy, doe, days, secs;
    gn_uint_t  leap;

    if (year < 1900 || month < 0 || day < 1 || day > gn_http_mdays[month]
        || hms[0] > 23 || hms[1] > 59 || hms[2] > 60)
    {
        return GN_ERROR;
    }

    leap = (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0));
    if (month == 1 && day == 29 && !leap) {
        return GN_ERROR;
    }

    m = month + 1;
    y = year - (m <= 2);
    era = y / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + day - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    days = era * 146097 + doe - 719468;

    secs = days * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2];

    if ((int64_t) (time_t) secs != secs) {
        return GN_ERROR;
    }

    *t = (time_t) secs;

    return GN_OK;
}


size_t
gn_http_etag(u_char *buf, time_t mtime, off_t size)
{
    u_char  *p;

    p = buf;
    *p++ = '"';
    p = gn_http_cond_hex(p, (uint64_t) mtime);
    *p++ = '-';
    p = gn_http_cond_hex(p, (uint64_t) size);
    *p++ = '"';

    return p - buf;
}


gn_uint_t
gn_http_preconditions(const gn_http_head_t *h, const gn_str_t *etag,
    time_t mtime)
{
    time_t     t;
    gn_uint_t  safe;

    safe = (h->method & (GN_HTTP_GET | GN_HTTP_HEAD)) != 0;

    if (h->if_match.len) {
        if (gn_http_etag_match(&h->if_match, etag, 0) != 1) {
            return 412;
        }

    } else if (h->if_unmodified_since.len && mtime != -1
               && gn_http_cond_date(&h->if_unmodified_since, &t) == GN_OK
               && mtime > t)
    {
        return 412;
    }

    if (h->if_none_match.len) {
        if (gn_http_etag_match(&h->if_none_match, etag, 1) == 1) {
            return safe ? 304 : 412;
        }

    } else if (safe && h->if_modified_since.len && mtime != -1
               && gn_http_cond_date(&h->if_modified_since, &t) == GN_OK
               && mtime <= t)
    {
        return 304;
    }

    return 0;
}


gn_uint_t
gn_http_if_range(const gn_http_head_t *h, const gn_str_t *etag,
    time_t mtime)
{
    time_t         t;
    gn_str_t       tag;
    const u_char  *p, *end;

    if (h->if_range.len == 0) {
        return 1;
    }

    p = h->if_range.data;
    end = p + h->if_range.len;

    while (p < end && gn_http_cond_ows(*p)) {
        p++;
    }

    while (end > p && gn_http_cond_ows(end[-1])) {
        end--;
    }

    if (p < end && (*p == '"' || (end - p >= 2 && p[0] == 'W' && p[1] == '/')))
    {
        /* exactly one entity-tag, no list (a date begins with a letter) */
        if (gn_http_etag_next(&p, end, &tag) != GN_OK
            || tag.data + tag.len != end)
        {
            return 0;
        }

        return gn_http_etag_cmp(&tag, etag, 0);
    }

    if (mtime == -1 || gn_http_cond_date(&h->if_range, &t) != GN_OK) {
        return 0;
    }

    return t == mtime;
}


/* HTTP-date from a header value, tolerating OWS around it. */
static gn_int_t
gn_http_cond_date(const gn_str_t *value, time_t *t)
{
    const u_char  *p, *end;

    p = value->data;
    end = p + value->len;

    while (p < end && gn_http_cond_ows(*p)) {
        p++;
    }

    while (end > p && gn_http_cond_ows(end[-1])) {
        end--;
    }

    return gn_http_parse_date(p, end - p, t);
}


/*
 * Evaluates an If-Match (weak == 0) or If-None-Match (weak == 1) value:
 * "*" or a list of entity-tags. Returns 1 (matches), 0 (does not) or
 * GN_ERROR (malformed; the whole list is checked even after a match, so
 * the answer does not depend on where the error is).
 */
static gn_int_t
gn_http_etag_match(const gn_str_t *value, const gn_str_t *etag,
    gn_uint_t weak)
{
    gn_int_t       rc;
    gn_str_t       tag;
    gn_uint_t      match;
    const u_char  *p, *end;

    p = value->data;
    end = p + value->len;

    while (p < end && gn_http_cond_ows(*p)) {
        p++;
    }

    while (end > p && gn_http_cond_ows(end[-1])) {
        end--;
    }

    if (end - p == 1 && *p == '*') {
        return 1;
    }

    match = 0;

    for ( ;; ) {
        rc = gn_http_etag_next(&p, end, &tag);

        if (rc == GN_DONE) {
            return match;
        }

        if (rc != GN_OK) {
            return GN_ERROR;
        }

        if (gn_http_etag_cmp(&tag, etag, weak)) {
            match = 1;
        }
    }
}


/*
 * The next entity-tag of a list (RFC 9110 8.8.3, 5.6.1): skips OWS and
 * empty elements, parses [ "W/" ] DQUOTE *etagc DQUOTE into tag (the whole
 * tag, W/ and quotes included), then skips OWS and the comma that must
 * follow unless the list ends. Returns GN_OK, GN_DONE at the end of the
 * list, or GN_ERROR.
 */
static gn_int_t
gn_http_etag_next(const u_char **pos, const u_char *end, gn_str_t *tag)
{
    const u_char  *p, *start;

    p = *pos;

    while (p < end && (gn_http_cond_ows(*p) || *p == ',')) {
        p++;
    }

    if (p == end) {
        *pos = p;
        return GN_DONE;
    }

    start = p;

    if (*p == 'W') {
        if (end - p < 2 || p[1] != '/') {
            return GN_ERROR;
        }

        p += 2;
    }

    if (p == end || *p++ != '"') {
        return GN_ERROR;
    }

    while (p < end && gn_http_cond_etagc(*p)) {
        p++;
    }

    if (p == end || *p++ != '"') {
        return GN_ERROR;
    }

    tag->data = (u_char *) start;
    tag->len = p - start;

    while (p < end && gn_http_cond_ows(*p)) {
        p++;
    }

    if (p < end) {
        if (*p != ',') {
            return GN_ERROR;
        }

        p++;
    }

    *pos = p;

    return GN_OK;
}


/*
 * Compares a well-formed entity-tag from a request with ours (RFC 9110
 * 8.8.3.2). Strong: neither is weak and the opaque-tags are equal; weak:
 * the opaque-tags are equal. No etag of ours never matches.
 */
static gn_uint_t
gn_http_etag_cmp(const gn_str_t *tag, const gn_str_t *etag, gn_uint_t weak)
{
    size_t         tlen, elen;
    gn_uint_t      tweak, eweak;
    const u_char  *t, *e;

    if (etag == NULL || etag->len == 0) {
        return 0;
    }

    t = tag->data;
    tlen = tag->len;
    e = etag->data;
    elen = etag->len;

    tweak = (tlen >= 2 && t[0] == 'W' && t[1] == '/');
    if (tweak) {
        t += 2;
        tlen -= 2;
    }

    eweak = (elen >= 2 && e[0] == 'W' && e[1] == '/');
    if (eweak) {
        e += 2;
        elen -= 2;
    }

    if (!weak && (tweak || eweak)) {
        return 0;
    }

    return tlen == elen && memcmp(t, e, tlen) == 0;
}


gn_int_t
gn_http_parse_range(const u_char *p, size_t len, off_t size,
    gn_http_range_t *ranges, gn_uint_t max)
{
    gn_int_t         rc;
    gn_uint_t        specs, n;
    const u_char    *end;
    gn_http_range_t  r;

    if (len < 6 || gn_strncasecmp(p, (u_char *) "bytes=", 6) != 0) {
        return 0;
    }

    end = p + len;
    p += 6;
    specs = 0;
    n = 0;

    for ( ;; ) {
        /* OWS after '=' and around commas, and empty elements */
        while (p < end && (gn_http_cond_ows(*p) || *p == ',')) {
            p++;
        }

        if (p == end) {
            break;
        }

        if (++specs > max) {
            return 0;
        }

        rc = gn_http_range_spec(&p, end, size, &r);

        if (rc == GN_ERROR) {
            return 0;
        }

        if (rc == GN_OK) {
            ranges[n++] = r;
        }

        while (p < end && gn_http_cond_ows(*p)) {
            p++;
        }

        if (p < end && *p != ',') {
            return 0;
        }
    }

    if (specs == 0) {
        return 0;
    }

    if (n == 0) {
        return GN_HTTP_RANGE_UNSATISFIABLE;
    }

    return (gn_int_t) gn_http_range_coalesce(ranges, n);
}


/*
 * One range-spec at *pos: int-range (first "-" [last]) or suffix-range
 * ("-" length). Returns GN_OK with *r set (satisfiable, clamped),
 * GN_DECLINED (valid but unsatisfiable) or GN_ERROR (invalid).
 */
static gn_int_t
gn_http_range_spec(const u_char **pos, const u_char *end, off_t size,
    gn_http_range_t *r)
{
    const u_char         *p;
    gn_http_range_num_t   first, last;

    p = *pos;

    if (*p == '-') {
        p = gn_http_range_num(p + 1, end, &last);
        if (p == NULL) {
            return GN_ERROR;
        }

        *pos = p;

        if (last.value == 0 || size <= 0) {
            return GN_DECLINED;
        }

        r->start = size - gn_min(last.value, size);
        r->end = size - 1;

        return GN_OK;
    }

    p = gn_http_range_num(p, end, &first);
    if (p == NULL || p == end || *p != '-') {
        return GN_ERROR;
    }

    p++;
    last.value = GN_HTTP_COND_MAX_OFF_T;          /* "first-" */

    if (p < end && gn_http_cond_digit(*p)) {
        p = gn_http_range_num(p, end, &last);
        if (p == NULL || gn_http_range_num_cmp(&first, &last) > 0) {
            return GN_ERROR;
        }
    }

    *pos = p;

    if (first.value >= size) {
        return GN_DECLINED;
    }

    r->start = first.value;
    r->end = gn_min(last.value, size - 1);

    return GN_OK;
}


/*
 * 1*DIGIT at p, saturated at the largest off_t (num->overflow set), with
 * the significant digits kept for an exact comparison. Returns the end of
 * the digits, or NULL when there is none.
 */
static const u_char *
gn_http_range_num(const u_char *p, const u_char *end, gn_http_range_num_t *num)
{
    off_t  d;

    if (p == end || !gn_http_cond_digit(*p)) {
        return NULL;
    }

    while (p < end && *p == '0') {
        p++;
    }

    num->value = 0;
    num->overflow = 0;
    num->sig = p;

    for ( /* void */ ; p < end && gn_http_cond_digit(*p); p++) {
        d = *p - '0';

        if (num->value > (GN_HTTP_COND_MAX_OFF_T - d) / 10) {
            num->overflow = 1;
            num->value = GN_HTTP_COND_MAX_OFF_T;

        } else if (!num->overflow) {
            num->value = num->value * 10 + d;
        }
    }

    num->nsig = p - num->sig;

    return p;
}


/* Exact comparison of two decimal numbers, saturated or not: <0, 0, >0. */
static gn_int_t
gn_http_range_num_cmp(const gn_http_range_num_t *a,
    const gn_http_range_num_t *b)
{
    if (!a->overflow || !b->overflow) {
        return (a->value > b->value) - (a->value < b->value);
    }

    if (a->nsig != b->nsig) {
        return (a->nsig > b->nsig) ? 1 : -1;
    }

    return memcmp(a->sig, b->sig, a->nsig);
}


/*
 * Ranges that neither overlap nor touch stay in request order. Otherwise
 * they are sorted by start (insertion sort: n is at most max_ranges) and
 * merged. end + 1 cannot overflow: end < size.
 */
static gn_uint_t
gn_http_range_coalesce(gn_http_range_t *r, gn_uint_t n)
{
    gn_uint_t        i, j, k, overlap;
    gn_http_range_t  tmp;

    overlap = 0;

    for (i = 1; i < n && !overlap; i++) {
        for (j = 0; j < i; j++) {
            if (r[i].start <= r[j].end + 1 && r[j].start <= r[i].end + 1) {
                overlap = 1;
                break;
            }
        }
    }

    if (!overlap) {
        return n;
    }

    for (i = 1; i < n; i++) {
        tmp = r[i];

        for (j = i; j > 0 && r[j - 1].start > tmp.start; j--) {
            r[j] = r[j - 1];
        }

        r[j] = tmp;
    }

    for (k = 0, i = 1; i < n; i++) {
        if (r[i].start <= r[k].end + 1) {
            r[k].end = gn_max(r[k].end, r[i].end);

        } else {
            r[++k] = r[i];
        }
    }

    return k + 1;
}


size_t
gn_http_content_range(u_char *buf, const gn_http_range_t *r, off_t size)
{
    u_char  *p;

    p = gn_cpymem(buf, "bytes ", 6);

    if (r == NULL) {
        *p++ = '*';

    } else {
        p = gn_http_cond_dec(p, (uint64_t) r->start);
        *p++ = '-';
        p = gn_http_cond_dec(p, (uint64_t) r->end);
    }

    *p++ = '/';
    p = gn_http_cond_dec(p, (uint64_t) size);

    return p - buf;
}


size_t
gn_http_multipart_boundary(u_char *buf, uint64_t seed)
{
    gn_uint_t  i;

    for (i = 20; i > 0; i--) {
        buf[i - 1] = (u_char) ('0' + seed % 10);
        seed /= 10;
    }

    return 20;
}


size_t
gn_http_multipart_part_header(u_char *buf, size_t buflen,
    const gn_str_t *boundary, const gn_str_t *type, const gn_http_range_t *r,
    off_t size)
{
    u_char  *p;

    if (buflen < gn_http_multipart_header_len(boundary, type, r, size)) {
        return 0;
    }

    p = gn_cpymem(buf, "\r\n--", 4);
    p = gn_cpymem(p, boundary->data, boundary->len);

    if (type->len) {
        p = gn_cpymem(p, "\r\nContent-Type: ", 16);
        p = gn_cpymem(p, type->data, type->len);
    }

    p = gn_cpymem(p, "\r\nContent-Range: ", 17);
    p += gn_http_content_range(p, r, size);
    p = gn_cpymem(p, "\r\n\r\n", 4);

    return p - buf;
}


size_t
gn_http_multipart_trailer(u_char *buf, size_t buflen,
    const gn_str_t *boundary)
{
    u_char  *p;

    if (buflen < boundary->len + 8) {
        return 0;
    }

    p = gn_cpymem(buf, "\r\n--", 4);
    p = gn_cpymem(p, boundary->data, boundary->len);
    p = gn_cpymem(p, "--\r\n", 4);

    return p - buf;
}


off_t
gn_http_multipart_length(const gn_str_t *boundary, const gn_str_t *type,
    const gn_http_range_t *r, gn_uint_t n, off_t size)
{
    off_t      total, part;
    gn_uint_t  i;

    total = boundary->len + 8;

    for (i = 0; i < n; i++) {
        if (r[i].start < 0 || r[i].end < r[i].start
            || r[i].end == GN_HTTP_COND_MAX_OFF_T)
        {
            return -1;
        }

        part = (off_t) gn_http_multipart_header_len(boundary, type, &r[i],
                                                    size);

        if (part > GN_HTTP_COND_MAX_OFF_T - (r[i].end - r[i].start + 1)) {
            return -1;
        }

        part += r[i].end - r[i].start + 1;

        if (total > GN_HTTP_COND_MAX_OFF_T - part) {
            return -1;
        }

        total += part;
    }

    return total;
}


/* What gn_http_multipart_part_header() writes, computed without writing. */
static size_t
gn_http_multipart_header_len(const gn_str_t *boundary, const gn_str_t *type,
    const gn_http_range_t *r, off_t size)
{
    size_t  len;

    len = 4 + boundary->len;

    if (type->len) {
        len += 16 + type->len;
    }

    return len + 17 + sizeof("bytes -/") - 1
           + gn_http_cond_declen((uint64_t) r->start)
           + gn_http_cond_declen((uint64_t) r->end)
           + gn_http_cond_declen((uint64_t) size) + 4;
}


static size_t
gn_http_cond_declen(uint64_t v)
{
    size_t  n;

    for (n = 1; v >= 10; v /= 10) {
        n++;
    }

    return n;
}


static u_char *
gn_http_cond_dec(u_char *p, uint64_t v)
{
    size_t  n, i;

    n = gn_http_cond_declen(v);

    for (i = n; i > 0; i--) {
        p[i - 1] = (u_char) ('0' + v % 10);
        v /= 10;
    }

    return p + n;
}


static u_char *
gn_http_cond_hex(u_char *p, uint64_t v)
{
    static const u_char  hex[] = "0123456789abcdef";
    u_char               tmp[16];
    size_t               n;

    n = 0;

    do {
        tmp[n++] = hex[v & 0xf];
        v >>= 4;
    } while (v);

    while (n) {
        *p++ = tmp[--n];
    }

    return p;
}
