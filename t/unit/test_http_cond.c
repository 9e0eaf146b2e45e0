/*
 * core/http_cond.c: HTTP-dates, ETags, the precondition order of RFC 9110
 * 13.2.2, If-Range, Range parsing and multipart/byteranges framing.
 *
 * Every input is copied into an exact-size heap buffer (no NUL after it),
 * so ASan catches any read past a value.
 *
 * Sources: t/unit/test_http_cond.c core/http_cond.c core/str.c
 * core/pool.c t/tap.c
 */

#include "gn_config.h"

#include "http_cond.h"
#include "../tap.h"


#define G       GN_HTTP_GET
#define HD      GN_HTTP_HEAD
#define P       GN_HTTP_POST
#define U       GN_HTTP_PUT
#define D       GN_HTTP_DELETE
#define X       GN_HTTP_UNKNOWN

#define U416    GN_HTTP_RANGE_UNSATISFIABLE

/* Sun, 06 Nov 1994 08:49:37 GMT */
#define MT      784111777
#define NOMT    -1

#define ETAG    "\"5f-10\""
#define WETAG   "W/\"5f-10\""
#define NOETAG  ""

#define D_EQ    "Sun, 06 Nov 1994 08:49:37 GMT"
#define D_BEF   "Sun, 06 Nov 1994 08:49:36 GMT"
#define D_AFT   "Sun, 06 Nov 1994 08:49:38 GMT"
#define D_BAD   "Sun, 06 Nov 1994 25:49:37 GMT"

#define MAXOFF  ((off_t) INT64_MAX)


/* Exact-size heap copy of s; len 0 gives an absent value. */
static gn_str_t
dup_str(const char *s)
{
    gn_str_t  v;

    v.len = (s == NULL) ? 0 : strlen(s);
    v.data = NULL;

    if (v.len) {
        v.data = malloc(v.len);
        memcpy(v.data, s, v.len);
    }

    return v;
}


static void
free_str(gn_str_t *v)
{
    free(v->data);
    v->data = NULL;
    v->len = 0;
}


/* ---- dates ------------------------------------------------------------ */

typedef struct {
    const char  *in;
    gn_int_t     rc;
    int64_t      t;
} date_case_t;


static date_case_t  date_cases[] = {
    /* the three formats of RFC 9110 5.6.7 */
    { "Sun, 06 Nov 1994 08:49:37 GMT", GN_OK, MT },
    { "Sunday, 06-Nov-94 08:49:37 GMT", GN_OK, MT },
    { "Sun Nov  6 08:49:37 1994", GN_OK, MT },
    { "Sun Nov 06 08:49:37 1994", GN_OK, MT },

    { "Thu, 01 Jan 1970 00:00:00 GMT", GN_OK, 0 },
    { "Thursday, 01-Jan-70 00:00:00 GMT", GN_OK, 0 },
    { "Thu Jan  1 00:00:00 1970", GN_OK, 0 },
    { "Sat, 01 Jan 2000 00:00:00 GMT", GN_OK, 946684800 },
    { "Saturday, 01-Jan-00 00:00:00 GMT", GN_OK, 946684800 },
    { "Friday, 31-Dec-99 23:59:59 GMT", GN_OK, 946684799 },
    { "Wednesday, 09-Nov-05 08:49:37 GMT", GN_OK, 1131526177 },
    { "Tue, 19 Jan 2038 03:14:07 GMT", GN_OK, 2147483647 },
    { "Mon, 01 Jan 1900 00:00:00 GMT", GN_OK, -2208988800LL },
    { "Fri, 31 Dec 9999 23:59:59 GMT", GN_OK, 253402300799LL },
    { "Tue, 14 Nov 2023 22:13:20 GMT", GN_OK, 1700000000 },

    /* leap years and the leap second */
    { "Thu, 29 Feb 2024 12:00:00 GMT", GN_OK, 1709208000 },
    { "Tue, 29 Feb 2000 00:00:00 GMT", GN_OK, 951782400 },
    { "Wed, 01 Mar 2023 00:00:00 GMT", GN_OK, 1677628800 },
    { "Sat, 31 Dec 2016 23:59:60 GMT", GN_OK, 1483228800 },
    { "Wed Feb 29 12:00:00 2012", GN_OK, 1330516800 },

    /* the weekday is not checked against the date (nginx, Apache) */
    { "Mon, 06 Nov 1994 08:49:37 GMT", GN_OK, MT },

    /* bad day, month, year, time */
    { "Sun, 00 Nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 31 Nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 32 Dec 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun,  6 Nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 6 Nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 Foo 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 NOV 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 1899 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 0000 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 19a4 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 24:00:00 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:60:00 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:49:61 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:4x:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08-49-37 GMT", GN_ERROR, 0 },
    { "Tue, 29 Feb 2023 00:00:00 GMT", GN_ERROR, 0 },
    { "Thu, 29 Feb 1900 00:00:00 GMT", GN_ERROR, 0 },
    { "Sun Feb 29 00:00:00 2100", GN_ERROR, 0 },
    { "Thursday, 30-Feb-12 00:00:00 GMT", GN_ERROR, 0 },

    /* wrong shape, names, zone or trailing bytes */
    { "", GN_ERROR, 0 },
    { "garbage", GN_ERROR, 0 },
    { "garbage garbage garbage!", GN_ERROR, 0 },
    { "Xyz, 06 Nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "sun, 06 Nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:49:37 UTC", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:49:37 gmt", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:49:37 GMT ", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:49:37 GMT; length=1", GN_ERROR, 0 },
    { "Sun, 06 Nov 1994 08:49:37", GN_ERROR, 0 },
    { "Sun,06 Nov 1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sunday, 06-Nov-1994 08:49:37 GMT", GN_ERROR, 0 },
    { "Sunday, 06 Nov 94 08:49:37 GMT", GN_ERROR, 0 },
    { "Sun, 06-Nov-94 08:49:37 GMT", GN_ERROR, 0 },
    { "Sund, 06-Nov-94 08:49:37 GMT", GN_ERROR, 0 },
    { "Sunday, 06-Nov-9x 08:49:37 GMT", GN_ERROR, 0 },
    { "Sunday, 06-Nov-94 08:49:37 UTC", GN_ERROR, 0 },
    { "Sun Nov 6 08:49:37 1994", GN_ERROR, 0 },
    { "Sun Nov  6 08:49:37 94", GN_ERROR, 0 },
    { "Sun Nov  x 08:49:37 1994", GN_ERROR, 0 },
    { "Sun Nov  6 08:49:37 1899", GN_ERROR, 0 },
    { "Sunday Nov  6 08:49:37 1994", GN_ERROR, 0 },
    { "1994-11-06T08:49:37Z", GN_ERROR, 0 },
    { "784111777", GN_ERROR, 0 },
};


static void
test_dates(void)
{
    size_t        i;
    time_t        t;
    gn_int_t      rc;
    gn_str_t      v;
    date_case_t  *c;

    for (i = 0; i < gn_nelems(date_cases); i++) {
        c = &date_cases[i];
        v = dup_str(c->in);
        t = 12345;

        rc = gn_http_parse_date(v.data, v.len, &t);

        if (c->rc == GN_ERROR) {
            is_int(rc, GN_ERROR, "date '%s' rejected", c->in);

        } else if (sizeof(time_t) < 8
                   && (c->t > INT32_MAX || c->t < INT32_MIN))
        {
            is_int(rc, GN_ERROR, "date '%s' does not fit time_t", c->in);

        } else if (is_int(rc, GN_OK, "date '%s' accepted", c->in)) {
            is_int((int64_t) t, c->t, "date '%s' = %lld", c->in,
                   (long long) c->t);
        }

        free_str(&v);
    }
}


/* ---- etag --------------------------------------------------------------- */

static void
test_etag(void)
{
    u_char  buf[GN_HTTP_ETAG_LEN];
    size_t  n;

    n = gn_http_etag(buf, 0x5f, 0x10);
    is_str(buf, n, ETAG, "etag of mtime 0x5f, size 16");

    n = gn_http_etag(buf, 1700000000, 12345);
    is_str(buf, n, "\"6553f100-3039\"", "etag in lowercase hex");

    n = gn_http_etag(buf, 0, 0);
    is_str(buf, n, "\"0-0\"", "etag of zeros");

    if (sizeof(time_t) == 8) {
        n = gn_http_etag(buf, (time_t) INT64_MAX, MAXOFF);
        is_str(buf, n, "\"7fffffffffffffff-7fffffffffffffff\"",
               "largest etag fits in GN_HTTP_ETAG_LEN");
        ok(n < GN_HTTP_ETAG_LEN, "etag length %zu", n);
    }
}


/* ---- preconditions ------------------------------------------------------ */

typedef struct {
    gn_uint_t    method;
    const char  *im;            /* If-Match */
    const char  *ius;           /* If-Unmodified-Since */
    const char  *inm;           /* If-None-Match */
    const char  *ims;           /* If-Modified-Since */
    const char  *etag;
    time_t       mtime;
    gn_uint_t    want;
} pre_case_t;


static pre_case_t  pre_cases[] = {
    /* nothing */
    { G, NULL, NULL, NULL, NULL, ETAG, MT, 0 },
    { P, NULL, NULL, NULL, NULL, NOETAG, NOMT, 0 },

    /* If-Match: strong comparison */
    { G, "*", NULL, NULL, NULL, ETAG, MT, 0 },
    { G, ETAG, NULL, NULL, NULL, ETAG, MT, 0 },
    { G, "\"other\"", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, WETAG, NULL, NULL, NULL, ETAG, MT, 412 },
    { G, ETAG, NULL, NULL, NULL, WETAG, MT, 412 },
    { G, "\"a\", " ETAG, NULL, NULL, NULL, ETAG, MT, 0 },
    { G, "\"a\" ,  \"b\"", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, "\"a\",," ETAG ",", NULL, NULL, NULL, ETAG, MT, 0 },
    { G, "\"a,b\"", NULL, NULL, NULL, "\"a,b\"", MT, 0 },
    { G, "\"\"", NULL, NULL, NULL, ETAG, MT, 412 },
    { P, ETAG, NULL, NULL, NULL, ETAG, MT, 0 },
    { U, "\"other\"", NULL, NULL, NULL, ETAG, MT, 412 },
    { D, "*", NULL, NULL, NULL, ETAG, MT, 0 },

    /* If-Match: malformed lists fail (412) wherever the error is */
    { G, "5f-10", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, ETAG " \"a\"", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, ETAG ", bogus", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, "\"5f-10", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, "*, \"a\"", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, "W/ \"5f-10\"", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, "W", NULL, NULL, NULL, ETAG, MT, 412 },
    { G, "\"a b\"", NULL, NULL, NULL, "\"a b\"", MT, 412 },

    /* If-Match without an etag of ours (etag off) */
    { G, "*", NULL, NULL, NULL, NOETAG, MT, 0 },
    { G, ETAG, NULL, NULL, NULL, NOETAG, MT, 412 },

    /* If-Unmodified-Since */
    { G, NULL, D_EQ, NULL, NULL, ETAG, MT, 0 },
    { G, NULL, D_AFT, NULL, NULL, ETAG, MT, 0 },
    { G, NULL, D_BEF, NULL, NULL, ETAG, MT, 412 },
    { P, NULL, D_BEF, NULL, NULL, ETAG, MT, 412 },
    { G, NULL, D_BAD, NULL, NULL, ETAG, MT, 0 },
    { G, NULL, "yesterday", NULL, NULL, ETAG, MT, 0 },
    { G, NULL, D_BEF, NULL, NULL, ETAG, NOMT, 0 },
    { G, NULL, D_BEF, NULL, NULL, NOETAG, MT, 412 },
    { G, NULL, "Sunday, 06-Nov-94 08:49:36 GMT", NULL, NULL, ETAG, MT, 412 },

    /* If-Unmodified-Since is ignored when If-Match is present */
    { G, ETAG, D_BEF, NULL, NULL, ETAG, MT, 0 },
    { G, "\"other\"", D_AFT, NULL, NULL, ETAG, MT, 412 },

    /* If-None-Match: weak comparison */
    { G, NULL, NULL, ETAG, NULL, ETAG, MT, 304 },
    { HD, NULL, NULL, ETAG, NULL, ETAG, MT, 304 },
    { P, NULL, NULL, ETAG, NULL, ETAG, MT, 412 },
    { U, NULL, NULL, "*", NULL, ETAG, MT, 412 },
    { D, NULL, NULL, "*", NULL, ETAG, MT, 412 },
    { X, NULL, NULL, ETAG, NULL, ETAG, MT, 412 },
    { G, NULL, NULL, "*", NULL, ETAG, MT, 304 },
    { G, NULL, NULL, "*", NULL, NOETAG, NOMT, 304 },
    { G, NULL, NULL, WETAG, NULL, ETAG, MT, 304 },
    { G, NULL, NULL, ETAG, NULL, WETAG, MT, 304 },
    { G, NULL, NULL, WETAG, NULL, WETAG, MT, 304 },
    { G, NULL, NULL, "\"other\"", NULL, ETAG, MT, 0 },
    { G, NULL, NULL, "\"a\", W/\"5f-10\"", NULL, ETAG, MT, 304 },
    { G, NULL, NULL, "  \"a\"\t,\t" ETAG "  ", NULL, ETAG, MT, 304 },
    { G, NULL, NULL, ",, ," ETAG ", ,", NULL, ETAG, MT, 304 },
    { G, NULL, NULL, ETAG, NULL, NOETAG, MT, 0 },
    { G, NULL, NULL, WETAG, NULL, NOETAG, MT, 0 },
    { G, NULL, NULL, "\"5f-1\"", NULL, ETAG, MT, 0 },
    { G, NULL, NULL, "\"5f-100\"", NULL, ETAG, MT, 0 },

    /* If-None-Match: malformed lists never match */
    { G, NULL, NULL, "5f-10", NULL, ETAG, MT, 0 },
    { G, NULL, NULL, ETAG ", junk", NULL, ETAG, MT, 0 },
    { G, NULL, NULL, "w/\"5f-10\"", NULL, ETAG, MT, 0 },
    { G, NULL, NULL, "\"5f-10", NULL, ETAG, MT, 0 },
    { G, NULL, NULL, "**", NULL, ETAG, MT, 0 },
    { P, NULL, NULL, "5f-10", NULL, ETAG, MT, 0 },

    /* If-Modified-Since: GET and HEAD only */
    { G, NULL, NULL, NULL, D_EQ, ETAG, MT, 304 },
    { HD, NULL, NULL, NULL, D_AFT, ETAG, MT, 304 },
    { G, NULL, NULL, NULL, D_BEF, ETAG, MT, 0 },
    { G, NULL, NULL, NULL, D_BAD, ETAG, MT, 0 },
    { G, NULL, NULL, NULL, D_EQ, ETAG, NOMT, 0 },
    { G, NULL, NULL, NULL, D_EQ, NOETAG, MT, 304 },
    { P, NULL, NULL, NULL, D_EQ, ETAG, MT, 0 },
    { D, NULL, NULL, NULL, D_AFT, ETAG, MT, 0 },
    { G, NULL, NULL, NULL, "Sunday, 06-Nov-94 08:49:37 GMT", ETAG, MT, 304 },
    { G, NULL, NULL, NULL, "Sun Nov  6 08:49:37 1994", ETAG, MT, 304 },
    { G, NULL, NULL, NULL, "Thu, 01 Jan 2099 00:00:00 GMT", ETAG, MT, 304 },
    { G, NULL, NULL, NULL, " " D_EQ " ", ETAG, MT, 304 },

    /* If-Modified-Since is ignored when If-None-Match is present */
    { G, NULL, NULL, "\"other\"", D_EQ, ETAG, MT, 0 },
    { G, NULL, NULL, "5f-10", D_EQ, ETAG, MT, 0 },
    { G, NULL, NULL, ETAG, D_BEF, ETAG, MT, 304 },

    /* the order of RFC 9110 13.2.2 */
    { G, "\"other\"", NULL, ETAG, NULL, ETAG, MT, 412 },
    { G, NULL, D_BEF, ETAG, NULL, ETAG, MT, 412 },
    { G, NULL, D_BEF, NULL, D_EQ, ETAG, MT, 412 },
    { G, ETAG, NULL, ETAG, NULL, ETAG, MT, 304 },
    { P, ETAG, NULL, ETAG, NULL, ETAG, MT, 412 },
    { G, ETAG, D_AFT, "\"other\"", D_EQ, ETAG, MT, 0 },
    { G, "*", D_BEF, "*", NULL, ETAG, MT, 304 },
    { HD, ETAG, NULL, NULL, D_EQ, ETAG, MT, 304 },
    { G, "\"other\"", NULL, NULL, D_EQ, ETAG, MT, 412 },
};


static void
test_preconditions(void)
{
    size_t          i;
    gn_str_t        etag;
    gn_uint_t       rc;
    pre_case_t     *c;
    gn_http_head_t  h;

    for (i = 0; i < gn_nelems(pre_cases); i++) {
        c = &pre_cases[i];

        memset(&h, 0, sizeof(h));
        h.method = c->method;
        h.if_match = dup_str(c->im);
        h.if_unmodified_since = dup_str(c->ius);
        h.if_none_match = dup_str(c->inm);
        h.if_modified_since = dup_str(c->ims);
        etag = dup_str(c->etag);

        rc = gn_http_preconditions(&h, &etag, c->mtime);

        is_int(rc, c->want, "precondition %zu: m=%lu IM=%s IUS=%s INM=%s "
               "IMS=%s etag=%s mtime=%lld -> %lu", i,
               (unsigned long) c->method,
               c->im ? c->im : "-", c->ius ? c->ius : "-",
               c->inm ? c->inm : "-", c->ims ? c->ims : "-",
               c->etag[0] ? c->etag : "-", (long long) c->mtime,
               (unsigned long) c->want);

        free_str(&h.if_match);
        free_str(&h.if_unmodified_since);
        free_str(&h.if_none_match);
        free_str(&h.if_modified_since);
        free_str(&etag);
    }

    diag("%zu precondition cases", gn_nelems(pre_cases));
}


/* ---- If-Range ------------------------------------------------------------ */

typedef struct {
    const char  *ir;
    const char  *etag;
    time_t       mtime;
    gn_uint_t    want;
} ir_case_t;


static ir_case_t  ir_cases[] = {
    { NULL, ETAG, MT, 1 },
    { NULL, NOETAG, NOMT, 1 },
    { ETAG, ETAG, MT, 1 },
    { " " ETAG " ", ETAG, MT, 1 },
    { WETAG, ETAG, MT, 0 },
    { ETAG, WETAG, MT, 0 },
    { "\"other\"", ETAG, MT, 0 },
    { ETAG, NOETAG, MT, 0 },
    { ETAG ", \"x\"", ETAG, MT, 0 },
    { ETAG ",", ETAG, MT, 0 },
    { "\"x\", " ETAG, ETAG, MT, 0 },
    { "\"5f-10", ETAG, MT, 0 },
    { "*", ETAG, MT, 0 },
    { D_EQ, ETAG, MT, 1 },
    { D_EQ, NOETAG, MT, 1 },
    { D_BEF, ETAG, MT, 0 },
    { D_AFT, ETAG, MT, 0 },
    { D_EQ, ETAG, NOMT, 0 },
    { D_BAD, ETAG, MT, 0 },
    { "Sunday, 06-Nov-94 08:49:37 GMT", ETAG, MT, 1 },
    { "Sun Nov  6 08:49:37 1994", ETAG, MT, 1 },
    /* a date that begins with 'W' is not taken for a weak tag */
    { "Wed, 09 Nov 1994 08:49:37 GMT", ETAG, MT + 3 * 86400, 1 },
    { "Wednesday, 09-Nov-94 08:49:37 GMT", ETAG, MT + 3 * 86400, 1 },
    { "garbage", ETAG, MT, 0 },
    { "W", ETAG, MT, 0 },
    { "W/", ETAG, MT, 0 },
};


static void
test_if_range(void)
{
    size_t          i;
    gn_str_t        etag;
    gn_uint_t       rc;
    ir_case_t      *c;
    gn_http_head_t  h;

    for (i = 0; i < gn_nelems(ir_cases); i++) {
        c = &ir_cases[i];

        memset(&h, 0, sizeof(h));
        h.method = G;
        h.if_range = dup_str(c->ir);
        etag = dup_str(c->etag);

        rc = gn_http_if_range(&h, &etag, c->mtime);

        is_int(rc, c->want, "If-Range '%s' etag=%s mtime=%lld -> %lu",
               c->ir ? c->ir : "(absent)", c->etag[0] ? c->etag : "-",
               (long long) c->mtime, (unsigned long) c->want);

        free_str(&h.if_range);
        free_str(&etag);
    }
}


/* ---- Range --------------------------------------------------------------- */

typedef struct {
    const char  *in;
    off_t        size;
    gn_uint_t    max;
    gn_int_t     rc;
    const char  *want;          /* "a-b,c-d" when rc > 0 */
} range_case_t;


static range_case_t  range_cases[] = {
    /* single ranges */
    { "bytes=0-499", 10000, 16, 1, "0-499" },
    { "bytes=500-999", 10000, 16, 1, "500-999" },
    { "bytes=-500", 10000, 16, 1, "9500-9999" },
    { "bytes=9500-", 10000, 16, 1, "9500-9999" },
    { "bytes=0-0", 10000, 16, 1, "0-0" },
    { "bytes=-1", 10000, 16, 1, "9999-9999" },
    { "bytes=0-", 10000, 16, 1, "0-9999" },
    { "bytes=9999-9999", 10000, 16, 1, "9999-9999" },
    { "bytes=0000-0001", 10000, 16, 1, "0-1" },
    { "BYTES=0-1", 10000, 16, 1, "0-1" },
    { "Bytes=0-1", 10000, 16, 1, "0-1" },
    { "bytes=0-0", 1, 16, 1, "0-0" },
    { "bytes=-10", 1, 16, 1, "0-0" },

    /* clamping */
    { "bytes=0-99999", 10000, 16, 1, "0-9999" },
    { "bytes=9000-10000", 10000, 16, 1, "9000-9999" },
    { "bytes=-20000", 10000, 16, 1, "0-9999" },
    { "bytes=-10000", 10000, 16, 1, "0-9999" },

    /* unsatisfiable */
    { "bytes=10000-", 10000, 16, U416, NULL },
    { "bytes=10000-10001", 10000, 16, U416, NULL },
    { "bytes=-0", 10000, 16, U416, NULL },
    { "bytes=-000", 10000, 16, U416, NULL },
    { "bytes=20000-,-0", 10000, 16, U416, NULL },
    { "bytes=0-", 0, 16, U416, NULL },
    { "bytes=0-0", 0, 16, U416, NULL },
    { "bytes=-5", 0, 16, U416, NULL },
    { "bytes=1-1", 1, 16, U416, NULL },

    /* several, in request order when disjoint */
    { "bytes=0-1,5-6", 10000, 16, 2, "0-1,5-6" },
    { "bytes=500-600,0-100", 10000, 16, 2, "500-600,0-100" },
    { "bytes=0-1 , 3-4", 10000, 16, 2, "0-1,3-4" },
    { "bytes=0-1,\t3-4", 10000, 16, 2, "0-1,3-4" },
    { "bytes=,0-1,,3-4,", 10000, 16, 2, "0-1,3-4" },
    { "bytes=0-1,20000-30000", 10000, 16, 1, "0-1" },
    { "bytes=-1,0-0", 10000, 16, 2, "9999-9999,0-0" },
    { "bytes=0-0,-1", 2, 16, 1, "0-1" },

    /* overlapping or adjacent: sorted and coalesced */
    { "bytes=0-100,50-150", 10000, 16, 1, "0-150" },
    { "bytes=0-9,10-19", 10000, 16, 1, "0-19" },
    { "bytes=1-1,0-0", 10000, 16, 1, "0-1" },
    { "bytes=0-4,1-2", 10000, 16, 1, "0-4" },
    { "bytes=200-300,0-50,40-60", 10000, 16, 2, "0-60,200-300" },
    { "bytes=0-0,0-0,0-0", 10000, 16, 1, "0-0" },
    { "bytes=0-,0-,0-,0-", 10000, 16, 1, "0-9999" },
    { "bytes=9000-,-500,20-30", 10000, 16, 2, "20-30,9000-9999" },
    { "bytes=5-6,0-1,6-7", 10000, 16, 2, "0-1,5-7" },

    /* max */
    { "bytes=0-1,3-4", 10000, 2, 2, "0-1,3-4" },
    { "bytes=0-1,3-4,6-7", 10000, 2, 0, NULL },
    { "bytes=0-1,3-4,20000-", 10000, 2, 0, NULL },
    { "bytes=0-1", 10000, 0, 0, NULL },
    { "bytes=0-1", 10000, 1, 1, "0-1" },
    { "bytes=0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,16-16,18-18,20-20,"
      "22-22,24-24,26-26,28-28,30-30", 10000, 16, 16,
      "0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,16-16,18-18,20-20,"
      "22-22,24-24,26-26,28-28,30-30" },
    { "bytes=0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,16-16,18-18,20-20,"
      "22-22,24-24,26-26,28-28,30-30,32-32", 10000, 16, 0, NULL },
    { "bytes=0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,"
      "0-0,0-0,0-0", 10000, 16, 0, NULL },

    /* syntax errors: the header is ignored */
    { "bytes=5-2", 10000, 16, 0, NULL },
    { "bytes=a-b", 10000, 16, 0, NULL },
    { "bytez=0-1", 10000, 16, 0, NULL },
    { "pages=1-2", 10000, 16, 0, NULL },
    { "bytes=", 10000, 16, 0, NULL },
    { "bytes=,", 10000, 16, 0, NULL },
    { "bytes= , ", 10000, 16, 0, NULL },
    { "bytes", 10000, 16, 0, NULL },
    { "", 10000, 16, 0, NULL },
    { "bytes=-", 10000, 16, 0, NULL },
    { "bytes=--1", 10000, 16, 0, NULL },
    { "bytes=1", 10000, 16, 0, NULL },
    { "bytes=0-1;3-4", 10000, 16, 0, NULL },
    { "bytes=0-1 3-4", 10000, 16, 0, NULL },
    { "bytes=+1-2", 10000, 16, 0, NULL },
    { "bytes=0x10-20", 10000, 16, 0, NULL },
    { "bytes=0-1,a", 10000, 16, 0, NULL },
    { "bytes=0-1,5-2", 10000, 16, 0, NULL },
    { "bytes=20000-,5-2", 10000, 16, 0, NULL },
    { "bytes=5-2", 0, 16, 0, NULL },
    { "bytes=1-2-3", 10000, 16, 0, NULL },
    { "bytes=-1-2", 10000, 16, 0, NULL },
    { "bytes=0-1x", 10000, 16, 0, NULL },

    /* whitespace: allowed after '=' and around commas only */
    { "bytes= 0-1", 10000, 16, 1, "0-1" },
    { "bytes=0-1 ", 10000, 16, 1, "0-1" },
    { "bytes=0-\t", 10000, 16, 1, "0-9999" },
    { "bytes =0-1", 10000, 16, 0, NULL },
    { " bytes=0-1", 10000, 16, 0, NULL },
    { "bytes=0 -1", 10000, 16, 0, NULL },
    { "bytes=0- 1", 10000, 16, 0, NULL },
    { "bytes=- 1", 10000, 16, 0, NULL },

    /* huge numbers never overflow */
    { "bytes=99999999999999999999999999-", 10000, 16, U416, NULL },
    { "bytes=0-99999999999999999999999999", 10000, 16, 1, "0-9999" },
    { "bytes=-99999999999999999999999999", 10000, 16, 1, "0-9999" },
    { "bytes=99999999999999999999999999-1", 10000, 16, 0, NULL },
    { "bytes=99999999999999999999999998-99999999999999999999999999",
      10000, 16, U416, NULL },
    { "bytes=99999999999999999999999999-99999999999999999999999998",
      10000, 16, 0, NULL },
    { "bytes=000099999999999999999999999999-99999999999999999999999999",
      10000, 16, U416, NULL },
    { "bytes=9223372036854775807-9223372036854775807", 10000, 16, U416,
      NULL },
    { "bytes=9223372036854775806-", MAXOFF, 16, 1,
      "9223372036854775806-9223372036854775806" },
    { "bytes=0-18446744073709551616", MAXOFF, 16, 1,
      "0-9223372036854775806" },
    { "bytes=-9223372036854775808", MAXOFF, 16, 1,
      "0-9223372036854775806" },
};


static void
format_ranges(char *buf, size_t size, gn_http_range_t *r, gn_int_t n)
{
    size_t    len;
    gn_int_t  i;

    buf[0] = '\0';

    for (i = 0, len = 0; i < n && len < size; i++) {
        len += snprintf(buf + len, size - len, "%s%lld-%lld", i ? "," : "",
                        (long long) r[i].start, (long long) r[i].end);
    }
}


static void
test_ranges(void)
{
    char             got[1024];
    size_t           i;
    gn_int_t         rc;
    gn_str_t         v;
    range_case_t    *c;
    gn_http_range_t  r[32];

    for (i = 0; i < gn_nelems(range_cases); i++) {
        c = &range_cases[i];
        v = dup_str(c->in);
        memset(r, 0xff, sizeof(r));

        rc = gn_http_parse_range(v.data, v.len, c->size, r, c->max);

        if (!is_int(rc, c->rc, "range '%s' size %lld max %lu -> %ld",
                    c->in, (long long) c->size, (unsigned long) c->max,
                    (long) c->rc))
        {
            free_str(&v);
            continue;
        }

        if (rc > 0) {
            format_ranges(got, sizeof(got), r, rc);
            is_str(got, strlen(got), c->want, "range '%s' -> %s",
                   c->in, c->want);

            /* nothing was written beyond ranges[max - 1] */
            ok(r[c->max].start == (off_t) -1 && r[c->max].end == (off_t) -1,
               "range '%s' wrote at most %lu entries", c->in,
               (unsigned long) c->max);
        }

        free_str(&v);
    }

    diag("%zu range cases", gn_nelems(range_cases));
}


/* max bounds the writes into ranges[] even for valid input */
static void
test_range_bounds(void)
{
    gn_int_t         rc;
    gn_str_t         v;
    gn_http_range_t  r[3];

    v = dup_str("bytes=0-0,2-2,4-4");
    rc = gn_http_parse_range(v.data, v.len, 100, r, 2);
    is_int(rc, 0, "3 ranges into an array of 2 -> ignored");

    rc = gn_http_parse_range(v.data, v.len, 100, r, 3);
    is_int(rc, 3, "3 ranges into an array of 3");
    free_str(&v);
}


/* ---- Content-Range and multipart ---------------------------------------- */

static void
test_content_range(void)
{
    u_char           buf[GN_HTTP_CONTENT_RANGE_LEN];
    size_t           n;
    gn_http_range_t  r;

    r.start = 0;
    r.end = 499;
    n = gn_http_content_range(buf, &r, 10000);
    is_str(buf, n, "bytes 0-499/10000", "Content-Range of a range");

    n = gn_http_content_range(buf, NULL, 10000);
    is_str(buf, n, "bytes */10000", "Content-Range of a 416");

    n = gn_http_content_range(buf, NULL, 0);
    is_str(buf, n, "bytes */0", "Content-Range of a 416, empty file");

    r.start = MAXOFF - 1;
    r.end = MAXOFF - 1;
    n = gn_http_content_range(buf, &r, MAXOFF);
    is_str(buf, n, "bytes 9223372036854775806-9223372036854775806/"
           "9223372036854775807", "largest Content-Range fits");
    ok(n <= GN_HTTP_CONTENT_RANGE_LEN, "length %zu", n);
}


static void
test_boundary(void)
{
    u_char  buf[GN_HTTP_BOUNDARY_LEN];
    size_t  n;

    n = gn_http_multipart_boundary(buf, 1);
    is_str(buf, n, "00000000000000000001", "boundary of seed 1");

    n = gn_http_multipart_boundary(buf, 0);
    is_str(buf, n, "00000000000000000000", "boundary of seed 0");

    n = gn_http_multipart_boundary(buf, UINT64_MAX);
    is_str(buf, n, "18446744073709551615", "boundary of the largest seed");
}


/*
 * Builds a whole multipart body from the writers and a fake representation
 * and checks it against gn_http_multipart_length() and a literal.
 */
static void
test_multipart_body(const char *range, const char *type, const char *want)
{
    u_char           *body, *p, bnd[GN_HTTP_BOUNDARY_LEN];
    u_char            content[26];
    size_t            i, n, cap;
    off_t             total, size;
    gn_int_t          rc;
    gn_str_t          boundary, ctype, v;
    gn_http_range_t   r[16];

    for (i = 0; i < sizeof(content); i++) {
        content[i] = (u_char) ('a' + i);
    }

    size = sizeof(content);

    v = dup_str(range);
    rc = gn_http_parse_range(v.data, v.len, size, r, 16);
    free_str(&v);

    if (!ok(rc > 0, "multipart '%s' parsed (%ld)", range, (long) rc)) {
        return;
    }

    boundary.len = gn_http_multipart_boundary(bnd, 42);
    boundary.data = bnd;
    ctype = dup_str(type);

    cap = 4096;
    body = malloc(cap);
    p = body;

    for (i = 0; i < (size_t) rc; i++) {
        n = gn_http_multipart_part_header(p, body + cap - p, &boundary,
                                          &ctype, &r[i], size);
        ok(n > 0 && n <= GN_HTTP_MULTIPART_HEADER_LEN(boundary.len,
                                                      ctype.len),
           "part header %zu written (%zu bytes)", i, n);
        p += n;
        n = r[i].end - r[i].start + 1;
        memcpy(p, content + r[i].start, n);
        p += n;
    }

    n = gn_http_multipart_trailer(p, body + cap - p, &boundary);
    is_int(n, boundary.len + 8, "trailer written");
    p += n;

    total = gn_http_multipart_length(&boundary, &ctype, r, rc, size);
    is_int(total, p - body, "multipart length of '%s' = bytes written",
           range);

    if (want != NULL) {
        is_str(body, p - body, want, "multipart body of '%s'", range);
    }

    free(body);
    free_str(&ctype);
}


static void
test_multipart(void)
{
    u_char           buf[256];
    size_t           n, need;
    off_t            total;
    gn_str_t         boundary, type, none;
    gn_http_range_t  r[2];

    gn_str_set(&boundary, "00000000000000000042");
    gn_str_set(&type, "text/plain");
    gn_str_null(&none);

    test_multipart_body("bytes=0-1,5-6", "text/plain",
        "\r\n--00000000000000000042\r\n"
        "Content-Type: text/plain\r\n"
        "Content-Range: bytes 0-1/26\r\n\r\n"
        "ab"
        "\r\n--00000000000000000042\r\n"
        "Content-Type: text/plain\r\n"
        "Content-Range: bytes 5-6/26\r\n\r\n"
        "fg"
        "\r\n--00000000000000000042--\r\n");

    test_multipart_body("bytes=-2,0-0", "",
        "\r\n--00000000000000000042\r\n"
        "Content-Range: bytes 24-25/26\r\n\r\n"
        "yz"
        "\r\n--00000000000000000042\r\n"
        "Content-Range: bytes 0-0/26\r\n\r\n"
        "a"
        "\r\n--00000000000000000042--\r\n");

    test_multipart_body("bytes=0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,"
                        "16-16,18-18,20-25", "text/html; charset=utf-8",
                        NULL);
    test_multipart_body("bytes=0-,3-9", "application/octet-stream", NULL);

    /* buffers too small: nothing written */
    r[0].start = 0;
    r[0].end = 1;
    n = gn_http_multipart_part_header(buf, sizeof(buf), &boundary, &type,
                                      &r[0], 26);
    need = n;
    ok(need > 0, "part header of %zu bytes", need);

    memset(buf, 'X', sizeof(buf));
    n = gn_http_multipart_part_header(buf, need - 1, &boundary, &type,
                                      &r[0], 26);
    is_int(n, 0, "part header refused with a buffer 1 byte short");
    ok(buf[0] == 'X', "nothing written");

    n = gn_http_multipart_trailer(buf, boundary.len + 7, &boundary);
    is_int(n, 0, "trailer refused with a buffer 1 byte short");

    n = gn_http_multipart_trailer(buf, boundary.len + 8, &boundary);
    is_str(buf, n, "\r\n--00000000000000000042--\r\n", "trailer");

    /* lengths */
    total = gn_http_multipart_length(&boundary, &none, r, 0, 26);
    is_int(total, boundary.len + 8, "no part: the trailer alone");

    r[1].start = 5;
    r[1].end = 4;
    total = gn_http_multipart_length(&boundary, &type, r, 2, 26);
    is_int(total, -1, "an invalid range -> -1");

    r[0].start = 0;
    r[0].end = MAXOFF - 1;
    r[1].start = 0;
    r[1].end = MAXOFF - 1;
    total = gn_http_multipart_length(&boundary, &type, r, 2, MAXOFF);
    is_int(total, -1, "overflowing sum -> -1");

    total = gn_http_multipart_length(&boundary, &type, r, 1, MAXOFF);
    is_int(total, -1, "one range of the largest size overflows with its "
           "header -> -1");

    r[0].end = MAXOFF - 200;
    total = gn_http_multipart_length(&boundary, &type, r, 1, MAXOFF);
    ok(total > MAXOFF - 200, "large but representable length %lld",
       (long long) total);
}


int
main(void)
{
    test_dates();
    test_etag();
    test_preconditions();
    test_if_range();
    test_ranges();
    test_range_bounds();
    test_content_range();
    test_boundary();
    test_multipart();

    return done_testing();
}
