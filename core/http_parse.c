/*
 * HTTP/1.x request parsing (RFC 9110, RFC 9112): request head, framing
 * rules, path normalisation and the chunked transfer coding.
 *
 * Pure functions on caller-owned buffers: no I/O, no logging, no
 * allocation. Every loop is bounded by an explicit end pointer; nothing
 * here ever reads past the length it was given or relies on a NUL.
 *
 * A zero limit in gn_http_limits_t means "no limit" for that quantity.
 */

#include "gn_config.h"

#include <netinet/in.h>
#include <arpa/inet.h>

#include "str.h"
#include "http_parse.h"


/* Chunk extensions, summed over a whole body; then the trailer section. */
#define GN_HTTP_CHUNK_EXT_MAX      4096
#define GN_HTTP_CHUNK_TRAILER_MAX  4096

#define GN_HTTP_MAX_OFF_T                                                     \
    ((off_t) (((uint64_t) 1 << (sizeof(off_t) * 8 - 1)) - 1))

#define gn_http_ows(c)      ((c) == ' ' || (c) == '\t')
/* a byte the head scan passes over: not CR, LF or NUL */
#define gn_http_head_plain(c)                                                 \
    ((c) > '\r' || ((c) != '\r' && (c) != '\n' && (c) != '\0'))
#define gn_http_alnum(c)                                                      \
    (((c) >= '0' && (c) <= '9') || (((c) | 0x20) >= 'a' && ((c) | 0x20) <= 'z'))


typedef struct {
    gn_str_t     name;
    gn_uint_t    method;
} gn_http_method_t;

/* What the framing and connection rules collect over all field lines. */
typedef struct {
    gn_uint_t    hosts;             /* Host field lines */
    gn_str_t     host;              /* value of the (single) Host */
    gn_uint_t    te;                /* Transfer-Encoding field lines */
    gn_uint_t    te_chunked;        /* "chunked" codings */
    gn_uint_t    te_other;          /* any other coding */
    gn_uint_t    te_final_chunked;  /* the last coding so far is chunked */
    gn_uint_t    conn_close;
    gn_uint_t    conn_keepalive;
} gn_http_frame_t;

typedef gn_int_t (*gn_http_field_pt)(gn_http_head_t *h, gn_http_frame_t *f,
    gn_str_t *value);

typedef struct {
    gn_str_t           name;
    gn_http_field_pt   handler;     /* NULL: keep the first value at offset */
    size_t             offset;
} gn_http_field_t;


static gn_int_t gn_http_scan_error(gn_http_scan_t *s, gn_int_t status,
    const char *err);
static gn_int_t gn_http_scan_plain(gn_http_scan_t *s, size_t i, size_t j,
    const gn_http_limits_t *lim);
static gn_int_t gn_http_scan_request_line(gn_http_scan_t *s,
    const u_char *p, const u_char *eol, const gn_http_limits_t *lim);
static u_char *gn_http_next_line(gn_http_head_t *h, u_char *p, u_char *end,
    u_char **eol);
static gn_int_t gn_http_parse_request_line(gn_http_head_t *h, u_char *p,
    u_char *eol, const gn_http_limits_t *lim);
static gn_int_t gn_http_parse_version(gn_http_head_t *h, u_char *p,
    size_t len);
static gn_int_t gn_http_parse_target(gn_http_head_t *h);
static void gn_http_split_query(gn_http_head_t *h, u_char *p, u_char *end);
static gn_int_t gn_http_valid_host(const u_char *p, size_t len);
static gn_int_t gn_http_valid_ipv6(const u_char *p, size_t len);
static gn_int_t gn_http_valid_reg_name(const u_char *p, size_t len);
static gn_int_t gn_http_host_char(u_char c);
static gn_int_t gn_http_valid_port(const u_char *p, size_t len);
static gn_int_t gn_http_parse_field(gn_http_head_t *h, gn_http_header_t *hd,
    u_char *p, u_char *eol);
static gn_int_t gn_http_value_word_ok(const u_char *p);
static gn_int_t gn_http_field_value_ok(const u_char *p, const u_char *end);
static gn_int_t gn_http_list_next(u_char **pos, u_char *end, u_char sep,
    gn_str_t *elt);
static gn_int_t gn_http_process_fields(gn_http_head_t *h,
    gn_http_frame_t *f);
static gn_int_t gn_http_frame(gn_http_head_t *h, gn_http_frame_t *f);
static gn_int_t gn_http_frame_te(gn_http_head_t *h, gn_http_frame_t *f);
static gn_int_t gn_http_field_host(gn_http_head_t *h, gn_http_frame_t *f,
    gn_str_t *value);
static gn_int_t gn_http_field_content_length(gn_http_head_t *h,
    gn_http_frame_t *f, gn_str_t *value);
static gn_int_t gn_http_field_transfer_encoding(gn_http_head_t *h,
    gn_http_frame_t *f, gn_str_t *value);
static gn_int_t gn_http_field_connection(gn_http_head_t *h,
    gn_http_frame_t *f, gn_str_t *value);
static gn_int_t gn_http_field_expect(gn_http_head_t *h, gn_http_frame_t *f,
    gn_str_t *value);
static gn_int_t gn_http_hexval(u_char c);
static gn_int_t gn_http_path_segment(u_char *dst, size_t *d, size_t *seg);
static gn_int_t gn_http_chunked_byte(gn_http_chunked_t *ctx, u_char ch,
    off_t max_body);
static gn_int_t gn_http_chunked_ext(gn_http_chunked_t *ctx, u_char ch);
static gn_int_t gn_http_chunked_trailer(gn_http_chunked_t *ctx, u_char ch);
static gn_int_t gn_http_chunked_size_done(gn_http_chunked_t *ctx,
    off_t max_body);


static gn_http_method_t  gn_http_methods[] = {
    { gn_string("GET"), GN_HTTP_GET },
    { gn_string("HEAD"), GN_HTTP_HEAD },
    { gn_string("POST"), GN_HTTP_POST },
    { gn_string("PUT"), GN_HTTP_PUT },
    { gn_string("DELETE"), GN_HTTP_DELETE },
    { gn_string("OPTIONS"), GN_HTTP_OPTIONS },
    { gn_string("TRACE"), GN_HTTP_TRACE },
    { gn_string("CONNECT"), GN_HTTP_CONNECT },
    { gn_string("PATCH"), GN_HTTP_PATCH }
};

/* sorted by the length of the name, which gn_http_fields_from indexes */
static gn_http_field_t  gn_http_fields[] = {
    { gn_string("Host"), gn_http_field_host, 0 },
    { gn_string("Range"), NULL, offsetof(gn_http_head_t, range) },
    { gn_string("Expect"), gn_http_field_expect, 0 },
    { gn_string("Referer"), NULL, offsetof(gn_http_head_t, referer) },
    { gn_string("If-Match"), NULL, offsetof(gn_http_head_t, if_match) },
    { gn_string("If-Range"), NULL, offsetof(gn_http_head_t, if_range) },
    { gn_string("Connection"), gn_http_field_connection, 0 },
    { gn_string("User-Agent"), NULL, offsetof(gn_http_head_t, user_agent) },
    { gn_string("If-None-Match"), NULL,
      offsetof(gn_http_head_t, if_none_match) },
    { gn_string("Content-Length"), gn_http_field_content_length, 0 },
    { gn_string("Transfer-Encoding"), gn_http_field_transfer_encoding, 0 },
    { gn_string("If-Modified-Since"), NULL,
      offsetof(gn_http_head_t, if_modified_since) },
    { gn_string("If-Unmodified-Since"), NULL,
      offsetof(gn_http_head_t, if_unmodified_since) }
};

/* [L]: the first field of gn_http_fields whose name is L bytes or
 * longer; the names of length L are [L] up to [L + 1] */
static const u_char  gn_http_fields_from[21] = {
    0, 0, 0, 0, 0, 1, 2, 3, 4, 6, 6, 8, 8, 8, 9, 10, 10, 10, 12, 12, 13
};


/* tchar (RFC 9110 5.6.2): the bytes of a token (method, field name),
 * ALPHA, DIGIT and "!#$%&'*+-.^_`|~", one load a byte where a range
 * check and a switch were several (t/unit/test_http_parse checks every
 * byte against that list). */

static const u_char  gn_http_tchars[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

#define gn_http_tchar(c)    gn_http_tchars[(u_char) (c)]


gn_int_t
gn_http_token(const u_char *p, size_t len)
{
    size_t  i;

    for (i = 0; i < len; i++) {
        if (!gn_http_tchar(p[i])) {
            return 0;
        }
    }

    return len > 0;
}


/*
 * The incremental scan finds where the head ends, enforces the size
 * limits and refuses bytes no head may hold (NUL, a CR or LF that is not
 * part of a CRLF). Of the rest it only parses the request line, as soon
 * as it ends: a request that can never be served (HTTP/0.9 or HTTP/2.0,
 * a malformed line) is answered at once, since its client may send
 * nothing more and would otherwise wait for client_header_timeout. The
 * fields are left to gn_http_parse_head().
 * Every decision depends only on the bytes up to the current one, so the
 * result is the same however the head is split across calls. A CR as the
 * last byte received is left unscanned until the next byte shows whether
 * it ends a line (CRLF) or is a bare CR (400).
 */

gn_int_t
gn_http_parse_head_end(gn_http_scan_t *s, const u_char *buf, size_t len,
    const gn_http_limits_t *lim, size_t *head_len)
{
    u_char    c;
    size_t    i, j, eol;
    gn_int_t  rc;

    for (i = s->pos; i < len; i++) {

        c = buf[i];

        if (gn_http_head_plain(c)) {
            /* a run of plain bytes: its limits checked at once */
            for (j = i + 1; j < len && gn_http_head_plain(buf[j]); j++) {
                /* void */
            }

            rc = gn_http_scan_plain(s, i, j, lim);
            if (rc != GN_OK) {
                return rc;
            }

            i = j - 1;
            continue;
        }

        if (lim->max_head && i >= lim->max_head) {
            return gn_http_scan_error(s, 431, "request head too large");
        }

        if (c == '\r') {
            if (i + 1 == len) {
                s->pos = i;
                return GN_AGAIN;
            }

            if (buf[i + 1] != '\n') {
                return gn_http_scan_error(s, 400, "bare CR in request head");
            }

            eol = i++;

            if (lim->max_head && i >= lim->max_head) {
                return gn_http_scan_error(s, 431, "request head too large");
            }

        } else if (c == '\n') {
            return gn_http_scan_error(s, 400, "bare LF in request head");

        } else {
            return gn_http_scan_error(s, 400, "NUL in request head");
        }

        /* a line ended: its content is [line_start, eol) */

        if (eol == s->line_start) {
            if (s->lines == 0) {
                s->skip_crlf++;
                s->line_start = i + 1;
                continue;
            }

            s->pos = i + 1;
            *head_len = i + 1;
            return GN_OK;
        }

        if (s->lines == 0) {
            rc = gn_http_scan_request_line(s, buf + s->line_start, buf + eol,
                                           lim);
            if (rc != GN_OK) {
                return rc;
            }
        }

        s->lines++;
        s->line_start = i + 1;
    }

    s->pos = len;
    return GN_AGAIN;
}


/*
 * The limits over the plain bytes [i, j) of the line being scanned: the
 * error the first byte that breaks one would get, checked byte by byte
 * in this order (so a split of the head never changes the answer): the
 * head's size, then the request line's length, or for a field line the
 * number of fields (at its first byte) and its length.
 */

static gn_int_t
gn_http_scan_plain(gn_http_scan_t *s, size_t i, size_t j,
    const gn_http_limits_t *lim)
{
    size_t       first, k;
    gn_int_t     status;
    const char  *err;

    first = j;
    status = GN_OK;
    err = NULL;

    if (lim->max_head && lim->max_head < j) {
        first = gn_max(i, lim->max_head);
        status = 431;
        err = "request head too large";
    }

    if (s->lines == 0) {
        k = gn_max(i, s->line_start + lim->max_line);
        if (lim->max_line && k < first) {
            first = k;
            status = 414;
            err = "request line too long";
        }

    } else {
        if (i == s->line_start && lim->max_headers
            && s->lines - 1 >= lim->max_headers && i < first)
        {
            first = i;
            status = 431;
            err = "too many header fields";
        }

        k = gn_max(i, s->line_start + lim->max_field);
        if (lim->max_field && k < first) {
            status = 431;
            err = "header field too large";
        }
    }

    return status == GN_OK ? GN_OK : gn_http_scan_error(s, status, err);
}


static gn_int_t
gn_http_scan_error(gn_http_scan_t *s, gn_int_t status, const char *err)
{
    s->err = err;
    return status;
}


/* The request line [p, eol), complete: GN_OK or its error status. */

static gn_int_t
gn_http_scan_request_line(gn_http_scan_t *s, const u_char *p,
    const u_char *eol, const gn_http_limits_t *lim)
{
    gn_int_t        rc;
    gn_http_head_t  h;

    memset(&h, 0, sizeof(gn_http_head_t));

    /* it only reads the line; the pointers it keeps in h die with h */
    rc = gn_http_parse_request_line(&h, (u_char *) p, (u_char *) eol, lim);

    if (rc != GN_OK) {
        s->err = h.err;
    }

    return rc;
}


/*
 * Returns the start of the next line and sets *eol to the end of this
 * line's content (before its CRLF); NULL, with h->err set, if no LF is
 * left or the first LF is not preceded by a CR. A CR elsewhere stays in
 * the content, where the character checks reject it.
 */

static u_char *
gn_http_next_line(gn_http_head_t *h, u_char *p, u_char *end, u_char **eol)
{
    u_char  *lf;

    lf = (p < end) ? memchr(p, '\n', end - p) : NULL;

    if (lf == NULL) {
        h->err = "incomplete head";
        return NULL;
    }

    if (lf == p || lf[-1] != '\r') {
        h->err = "bare LF in head";
        return NULL;
    }

    *eol = lf - 1;

    return lf + 1;
}


gn_int_t
gn_http_parse_head(gn_http_head_t *h, u_char *buf, size_t len,
    const gn_http_limits_t *lim, gn_http_header_t *hdrs, size_t max)
{
    u_char           *p, *end, *eol, *next;
    gn_int_t          rc;
    gn_http_frame_t   f;

    memset(h, 0, sizeof(gn_http_head_t));
    h->content_length = -1;
    h->headers = hdrs;

    p = buf;
    end = buf + len;

    /* RFC 9112 2.2: empty lines before the request line are ignored */

    while (end - p >= 2 && p[0] == '\r' && p[1] == '\n') {
        p += 2;
    }

    next = gn_http_next_line(h, p, end, &eol);
    if (next == NULL) {
        return 400;
    }

    rc = gn_http_parse_request_line(h, p, eol, lim);
    if (rc != GN_OK) {
        return rc;
    }

    for (p = next; /* void */; p = next) {

        next = gn_http_next_line(h, p, end, &eol);
        if (next == NULL) {
            return 400;
        }

        if (eol == p) {
            break;
        }

        if (h->nheaders >= max
            || (lim->max_headers && h->nheaders >= lim->max_headers))
        {
            h->err = "too many header fields";
            return 431;
        }

        if (lim->max_field && (size_t) (eol - p) > lim->max_field) {
            h->err = "header field too large";
            return 431;
        }

        rc = gn_http_parse_field(h, &hdrs[h->nheaders], p, eol);
        if (rc != GN_OK) {
            return rc;
        }

        h->nheaders++;
    }

    if (lim->max_head && (size_t) (next - buf) > lim->max_head) {
        h->err = "request head too large";
        return 431;
    }

    rc = gn_http_process_fields(h, &f);
    if (rc != GN_OK) {
        return rc;
    }

    return gn_http_frame(h, &f);
}


gn_int_t
gn_http_parse_h2(gn_http_head_t *h, const gn_str_t *method,
    const gn_str_t *path, const gn_str_t *authority)
{
    u_char           *p, *end;
    gn_uint_t         i;
    gn_int_t          rc;
    gn_http_frame_t   f;

    h->version = GN_HTTP_VERSION_20;
    h->method_name = *method;
    h->method = GN_HTTP_UNKNOWN;

    for (i = 0; i < gn_nelems(gn_http_methods); i++) {
        if (gn_str_cmp(method, &gn_http_methods[i].name) == 0) {
            h->method = gn_http_methods[i].method;
            break;
        }
    }

    h->target = *path;
    p = path->data;
    end = p + path->len;

    for ( /* void */ ; p < end; p++) {
        if (*p < 0x21 || *p > 0x7e || *p == '#') {
            h->err = "invalid character in :path";
            return 400;
        }
    }

    p = path->data;

    if (h->method == GN_HTTP_CONNECT) {
        h->err = "CONNECT over HTTP/2";        /* not a proxy */
        return 405;
    }

    if (path->len == 1 && *p == '*' && h->method == GN_HTTP_OPTIONS) {
        h->path = *path;

    } else if (path->len > 0 && *p == '/') {
        gn_http_split_query(h, p, end);

    } else {
        h->err = "invalid :path";
        return 400;
    }

    if (authority->len > 0) {
        if (gn_http_valid_host(authority->data, authority->len) != GN_OK) {
            h->err = "invalid :authority";
            return 400;
        }
        h->abs_host = *authority;

        /* RFC 9113 8.3.1: a Host that says otherwise is malformed (the
         * server would be chosen by one, modules and CGI shown the
         * other) */
        for (i = 0; i < h->nheaders; i++) {
            if (gn_str_casecmp(&h->headers[i].name, &gn_http_fields[0].name)
                    == 0
                && gn_str_casecmp(&h->headers[i].value, authority) != 0)
            {
                h->err = "Host differs from :authority";
                return 400;
            }
        }
    }

    rc = gn_http_process_fields(h, &f);
    if (rc == GN_OK) {
        rc = gn_http_frame(h, &f);
    }
    if (rc != GN_OK) {
        return rc;
    }

    if (h->host.len == 0) {
        h->err = "missing :authority and Host";
        return 400;
    }

    h->keepalive = 1;               /* the stream ends, not the connection */

    return GN_OK;
}


/* status-line = HTTP-version SP status-code SP [ reason-phrase ]
 * (RFC 9112 4); the SP after the code may be missing (4: a recipient
 * should accept it). */

static gn_int_t
gn_http_parse_status_line(gn_http_head_t *h, u_char *p, u_char *eol)
{
    if (eol - p < 12 || p[8] != ' '
        || gn_http_parse_version(h, p, 8) != GN_OK
        || p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9'
        || p[11] < '0' || p[11] > '9'
        || (eol - p > 12 && p[12] != ' '))
    {
        h->err = "invalid status line";
        return GN_ERROR;
    }

    h->status = (gn_uint_t) (p[9] - '0') * 100 + (gn_uint_t) (p[10] - '0') * 10
                + (gn_uint_t) (p[11] - '0');

    for (p += 12; p < eol; p++) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
            h->err = "invalid character in reason phrase";
            return GN_ERROR;
        }
    }

    return GN_OK;
}


gn_int_t
gn_http_parse_response(gn_http_head_t *h, u_char *buf, size_t len,
    gn_http_header_t *hdrs, size_t max)
{
    u_char           *p, *end, *eol, *next;
    gn_http_frame_t   f;

    memset(h, 0, sizeof(gn_http_head_t));
    h->content_length = -1;
    h->headers = hdrs;

    end = buf + len;
    next = gn_http_next_line(h, buf, end, &eol);
    if (next == NULL || gn_http_parse_status_line(h, buf, eol) != GN_OK) {
        return GN_ERROR;
    }

    for (p = next; /* void */; p = next) {
        next = gn_http_next_line(h, p, end, &eol);
        if (next == NULL) {
            return GN_ERROR;
        }
        if (eol == p) {
            break;
        }
        if (h->nheaders >= max) {
            h->err = "too many header fields";
            return GN_ERROR;
        }
        if (gn_http_parse_field(h, &hdrs[h->nheaders], p, eol) != GN_OK) {
            return GN_ERROR;
        }
        h->nheaders++;
    }

    if (gn_http_process_fields(h, &f) != GN_OK
        || gn_http_frame_te(h, &f) != GN_OK)
    {
        return GN_ERROR;
    }

    h->keepalive = h->version == GN_HTTP_VERSION_11
                   ? !f.conn_close : f.conn_keepalive && !f.conn_close;

    return GN_OK;
}



size_t
gn_http_head_crlf_end(const u_char *buf, size_t len, size_t from)
{
    const u_char  *p, *end = buf + len;

    /* from the LF that may end the first CRLF of a CRLF CRLF the last
     * look could not see whole */
    p = buf + (from >= 3 ? from - 3 : 0);

    while (p < end && (p = memchr(p, '\n', (size_t) (end - p))) != NULL) {
        if (p - buf >= 1 && p[-1] == '\r' && end - p >= 3 && p[1] == '\r'
            && p[2] == '\n')
        {
            return (size_t) (p + 3 - buf);
        }
        p++;
    }

    return 0;
}


size_t
gn_http_cgi_head_end(const u_char *buf, size_t len, size_t from)
{
    const u_char  *p, *end = buf + len;

    /* an LF that an LF or a CR LF follows: from the one before `from`,
     * which the last look could not know the end of */
    p = buf + (from >= 2 ? from - 2 : 0);

    while (p < end && (p = memchr(p, '\n', (size_t) (end - p))) != NULL) {
        p++;
        if (p < end && *p == '\n') {
            return (size_t) (p + 1 - buf);
        }
        if (p + 1 < end && p[0] == '\r' && p[1] == '\n') {
            return (size_t) (p + 2 - buf);
        }
    }

    return 0;
}


/* The "Status" of a CGI head: DDD, then nothing or SP and a reason. */
static gn_int_t
gn_http_cgi_status(gn_http_head_t *h, const gn_str_t *v)
{
    const u_char  *p = v->data;

    if (v->len < 3 || p[0] < '2' || p[0] > '5' || p[1] < '0' || p[1] > '9'
        || p[2] < '0' || p[2] > '9' || (v->len > 3 && p[3] != ' '))
    {
        h->err = "invalid Status";
        return GN_ERROR;
    }
    if (h->status != 0) {
        h->err = "repeated Status";
        return GN_ERROR;
    }

    h->status = (gn_uint_t) (p[0] - '0') * 100 + (p[1] - '0') * 10
                + (p[2] - '0');
    return GN_OK;
}


gn_int_t
gn_http_parse_cgi(gn_http_head_t *h, u_char *buf, size_t len,
    gn_http_header_t *hdrs, size_t max)
{
    u_char            *p, *end, *eol, *lf;
    gn_http_header_t  *hd;
    gn_http_frame_t    f;
    gn_uint_t          location = 0;

    memset(h, 0, sizeof(gn_http_head_t));
    h->content_length = -1;
    h->headers = hdrs;
    h->version = GN_HTTP_VERSION_11;

    end = buf + len;
    for (p = buf; /* void */; p = lf + 1) {
        lf = p < end ? memchr(p, '\n', (size_t) (end - p)) : NULL;
        if (lf == NULL) {
            h->err = "incomplete head";
            return GN_ERROR;
        }
        eol = lf > p && lf[-1] == '\r' ? lf - 1 : lf;
        if (eol == p) {
            break;
        }
        if (h->nheaders >= max) {
            h->err = "too many header fields";
            return GN_ERROR;
        }
        hd = &hdrs[h->nheaders];
        if (gn_http_parse_field(h, hd, p, eol) != GN_OK) {
            return GN_ERROR;
        }
        if (gn_str_caseeq(&hd->name, "Status")
            && gn_http_cgi_status(h, &hd->value) != GN_OK)
        {
            return GN_ERROR;
        }
        location |= gn_str_caseeq(&hd->name, "Location");
        h->nheaders++;
    }

    if (h->nheaders == 0) {
        h->err = "no CGI field";          /* RFC 3875 6.2: one at least */
        return GN_ERROR;
    }
    if (gn_http_process_fields(h, &f) != GN_OK) {
        return GN_ERROR;
    }
    if (f.te) {
        h->err = "Transfer-Encoding from a CGI responder";
        return GN_ERROR;
    }

    if (h->status == 0) {
        h->status = location ? 302 : 200;
    }
    return GN_OK;
}

/* request-line = method SP request-target SP HTTP-version (RFC 9112 3) */

static gn_int_t
gn_http_parse_request_line(gn_http_head_t *h, u_char *p, u_char *eol,
    const gn_http_limits_t *lim)
{
    u_char      *start;
    gn_int_t     rc;
    gn_uint_t    i;

    if (lim->max_line && (size_t) (eol - p) > lim->max_line) {
        h->err = "request line too long";
        return 414;
    }

    for (start = p; p < eol && gn_http_tchar(*p); p++) {
        /* void */
    }

    if (p == start || p == eol || *p != ' ') {
        h->err = "invalid method";
        return 400;
    }

    h->method_name.data = start;
    h->method_name.len = p - start;
    h->method = GN_HTTP_UNKNOWN;

    for (i = 0; i < gn_nelems(gn_http_methods); i++) {
        if (gn_str_cmp(&h->method_name, &gn_http_methods[i].name) == 0) {
            h->method = gn_http_methods[i].method;
            break;
        }
    }

    for (start = ++p; p < eol && *p != ' '; p++) {
        if (*p < 0x21 || *p > 0x7e) {
            h->err = "invalid character in request target";
            return 400;
        }

        if (*p == '#') {
            h->err = "fragment in request target";
            return 400;
        }
    }

    if (p == start) {
        h->err = "invalid request target";
        return 400;
    }

    h->target.data = start;
    h->target.len = p - start;

    if (p == eol) {
        /* HTTP/0.9: method SP target, no version; 505 if well-formed */
        rc = gn_http_parse_target(h);
        if (rc != GN_OK) {
            return rc;
        }

        h->err = "HTTP/0.9 request";
        return 505;
    }

    p++;

    rc = gn_http_parse_version(h, p, eol - p);
    if (rc != GN_OK) {
        return rc;
    }

    return gn_http_parse_target(h);
}


/*
 * HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive. Only 1.0
 * and 1.1: a higher HTTP/1 minor version gets 505 too, where RFC 9110
 * 2.5 says a server SHOULD answer it as 1.1 (nginx does); no HTTP/1.2
 * exists, and a client that claims one is not one we know.
 */

static gn_int_t
gn_http_parse_version(gn_http_head_t *h, u_char *p, size_t len)
{
    if (len != sizeof("HTTP/1.1") - 1
        || memcmp(p, "HTTP/", sizeof("HTTP/") - 1) != 0
        || p[5] < '0' || p[5] > '9' || p[6] != '.'
        || p[7] < '0' || p[7] > '9')
    {
        h->err = "invalid HTTP version";
        return 400;
    }

    if (p[5] == '1' && p[7] == '1') {
        h->version = GN_HTTP_VERSION_11;

    } else if (p[5] == '1' && p[7] == '0') {
        h->version = GN_HTTP_VERSION_10;

    } else {
        h->err = "unsupported HTTP version";
        return 505;
    }

    return GN_OK;
}


/*
 * RFC 9112 3.2: origin-form ("/path?query"), absolute-form (http or https
 * only: this is an origin server, not a proxy), asterisk-form for OPTIONS
 * only, authority-form for CONNECT only (and CONNECT takes nothing else).
 */

static gn_int_t
gn_http_parse_target(gn_http_head_t *h)
{
    u_char  *p, *end, *auth;
    size_t   skip;

    p = h->target.data;
    end = p + h->target.len;

    if (h->method == GN_HTTP_CONNECT) {
        for (auth = end; auth > p && auth[-1] >= '0' && auth[-1] <= '9'; auth--)
        {
            /* void: authority-form needs a port, uri-host ":" 1*DIGIT */
        }

        if (auth == end || auth - 1 <= p || auth[-1] != ':'
            || gn_http_valid_host(p, end - p) != GN_OK)
        {
            h->err = "CONNECT needs host:port";
            return 400;
        }

        h->path = h->target;
        return GN_OK;
    }

    if (*p == '/') {
        gn_http_split_query(h, p, end);
        return GN_OK;
    }

    if (h->target.len == 1 && *p == '*') {
        if (h->method != GN_HTTP_OPTIONS) {
            h->err = "asterisk-form only allowed for OPTIONS";
            return 400;
        }

        h->path = h->target;
        return GN_OK;
    }

    if (h->target.len > 7 && gn_strncasecmp(p, (u_char *) "http://", 7) == 0)
    {
        skip = 7;

    } else if (h->target.len > 8
               && gn_strncasecmp(p, (u_char *) "https://", 8) == 0)
    {
        skip = 8;

    } else {
        h->err = "invalid request target";
        return 400;
    }

    for (auth = p + skip, p = auth; p < end; p++) {
        if (*p == '/' || *p == '?') {
            break;
        }

        if (*p == '@') {
            h->err = "userinfo in request target";
            return 400;
        }
    }

    if (gn_http_valid_host(auth, p - auth) != GN_OK) {
        h->err = "invalid host in request target";
        return 400;
    }

    h->abs_host.data = auth;
    h->abs_host.len = p - auth;

    if (p < end && *p == '/') {
        gn_http_split_query(h, p, end);
        return GN_OK;
    }

    gn_str_set(&h->path, "/");

    if (p < end) {
        h->has_query = 1;
        h->query.data = p + 1;
        h->query.len = end - p - 1;
    }

    return GN_OK;
}


static void
gn_http_split_query(gn_http_head_t *h, u_char *p, u_char *end)
{
    u_char  *q;

    q = memchr(p, '?', end - p);

    h->path.data = p;
    h->path.len = (q ? q : end) - p;

    if (q != NULL) {
        h->has_query = 1;
        h->query.data = q + 1;
        h->query.len = end - q - 1;
    }
}


/*
 * uri-host [ ":" port ] (RFC 3986 3.2.2, 3.2.3), the value of Host or the
 * authority of a target. Anything else is refused (400): a proxy in
 * front may read it as another name, or as none.
 *   - "[" IPv6address "]" as inet_pton() reads it: no zone identifier,
 *     no IPvFuture;
 *   - otherwise a reg-name (an IPv4 address is one): dot-separated
 *     labels, none empty (".a", "a..b", "." are refused; one trailing
 *     dot, the DNS root, is allowed), of unreserved and sub-delims bytes
 *     but ',' (Host is one value, not a list), without pct-encoding (no
 *     server name has one);
 *   - a port of digits worth 1 to 65535, or empty ("a:", which RFC 3986
 *     allows and nginx accepts).
 */

static gn_int_t
gn_http_valid_host(const u_char *p, size_t len)
{
    const u_char  *end, *q;

    end = p + len;

    if (len > 0 && p[0] == '[') {
        q = memchr(p, ']', len);

        if (q == NULL || gn_http_valid_ipv6(p + 1, q - p - 1) != GN_OK) {
            return GN_ERROR;
        }

        q++;

    } else {
        q = memchr(p, ':', len);
        if (q == NULL) {
            q = end;
        }

        if (gn_http_valid_reg_name(p, q - p) != GN_OK) {
            return GN_ERROR;
        }
    }

    if (q == end) {
        return GN_OK;
    }

    if (*q != ':') {
        return GN_ERROR;
    }

    return gn_http_valid_port(q + 1, end - q - 1);
}


static gn_int_t
gn_http_valid_ipv6(const u_char *p, size_t len)
{
    char             buf[INET6_ADDRSTRLEN];
    size_t           i;
    struct in6_addr  addr;

    if (len == 0 || len >= sizeof(buf)) {
        return GN_ERROR;
    }

    for (i = 0; i < len; i++) {
        if (gn_http_hexval(p[i]) < 0 && p[i] != ':' && p[i] != '.') {
            return GN_ERROR;
        }
    }

    memcpy(buf, p, len);
    buf[len] = '\0';

    return inet_pton(AF_INET6, buf, &addr) == 1 ? GN_OK : GN_ERROR;
}


static gn_int_t
gn_http_valid_reg_name(const u_char *p, size_t len)
{
    u_char  c;
    size_t  i, label;

    if (len == 0) {
        return GN_ERROR;
    }

    for (label = 0, i = 0; i < len; i++) {
        c = p[i];

        if (c == '.') {
            if (label == 0) {
                return GN_ERROR;
            }
            label = 0;
            continue;
        }

        if (!gn_http_host_char(c)) {
            return GN_ERROR;
        }

        label++;
    }

    return GN_OK;
}


/* unreserved and sub-delims (RFC 3986 2.2, 2.3) but '.' and ',' */

static gn_int_t
gn_http_host_char(u_char c)
{
    if (gn_http_alnum(c)) {
        return 1;
    }

    switch (c) {
    case '-': case '_': case '~': case '!': case '$': case '&': case '\'':
    case '(': case ')': case '*': case '+': case ';': case '=':
        return 1;
    }

    return 0;
}


static gn_int_t
gn_http_valid_port(const u_char *p, size_t len)
{
    gn_int_t  n;

    if (len == 0) {
        return GN_OK;
    }

    n = gn_atoi(p, len);

    return (n >= 1 && n <= 65535) ? GN_OK : GN_ERROR;
}


/*
 * field-line = field-name ":" OWS field-value OWS (RFC 9112 5): the name
 * is a token with nothing between it and the colon; a line that starts
 * with whitespace is obs-fold (or whitespace after the request line,
 * RFC 9112 2.2), rejected either way.
 */

static gn_int_t
gn_http_parse_field(gn_http_head_t *h, gn_http_header_t *hd, u_char *p,
    u_char *eol)
{
    u_char  *start, *vend;

    if (gn_http_ows(*p)) {
        h->err = "obsolete line folding";
        return 400;
    }

    for (start = p; p < eol && gn_http_tchar(*p); p++) {
        /* void */
    }

    if (p == eol) {
        h->err = "missing colon in header line";
        return 400;
    }

    if (*p != ':') {
        h->err = gn_http_ows(*p) ? "whitespace before colon"
                                 : "invalid header name";
        return 400;
    }

    if (p == start) {
        h->err = "empty header name";
        return 400;
    }

    hd->name.data = start;
    hd->name.len = p - start;

    for (p++; p < eol && gn_http_ows(*p); p++) {
        /* void */
    }

    for (vend = eol; vend > p && gn_http_ows(vend[-1]); vend--) {
        /* void */
    }

    hd->value.data = p;
    hd->value.len = vend - p;

    if (!gn_http_field_value_ok(p, vend)) {
        h->err = "invalid character in header value";
        return 400;
    }

    return GN_OK;
}


/*
 * No byte of [p, end) is a control but HTAB, or DEL (RFC 9110 5.5).
 * Eight bytes at a time: a word with no byte below 0x20 and none equal
 * to 0x7f (the exact "has a byte less than n" and "has a zero byte"
 * tests of the bit-twiddling folklore) is good as a whole; any other is
 * looked at byte by byte, where HTAB passes.
 */

#define GN_HTTP_ONES  0x0101010101010101ULL
#define GN_HTTP_HIGHS 0x8080808080808080ULL

#define gn_http_value_byte_bad(c)                                             \
    (((c) < 0x20 && (c) != '\t') || (c) == 0x7f)

static gn_int_t
gn_http_value_word_ok(const u_char *p)
{
    uint64_t  w, d;
    gn_uint_t  i;

    memcpy(&w, p, 8);
    d = w ^ (GN_HTTP_ONES * 0x7f);
    if (((((w - GN_HTTP_ONES * 0x20) & ~w) | ((d - GN_HTTP_ONES) & ~d))
         & GN_HTTP_HIGHS) == 0)
    {
        return 1;
    }

    for (i = 0; i < 8; i++) {
        if (gn_http_value_byte_bad(p[i])) {
            return 0;
        }
    }

    return 1;
}


static gn_int_t
gn_http_field_value_ok(const u_char *p, const u_char *end)
{
    if (end - p < 8) {
        for ( /* void */ ; p < end; p++) {
            if (gn_http_value_byte_bad(*p)) {
                return 0;
            }
        }
        return 1;
    }

    for ( /* void */ ; end - p > 8; p += 8) {
        if (!gn_http_value_word_ok(p)) {
            return 0;
        }
    }

    /* the last eight bytes, some of them seen already */
    return gn_http_value_word_ok(end - 8);
}


gn_http_header_t *
gn_http_header_find(const gn_http_head_t *h, const char *name, size_t len)
{
    gn_uint_t  i;

    for (i = 0; i < h->nheaders; i++) {
        if (h->headers[i].name.len == len
            && gn_strncasecmp(h->headers[i].name.data, (const u_char *) name,
                              len) == 0)
        {
            return &h->headers[i];
        }
    }

    return NULL;
}


/*
 * Next element of a comma-separated list (RFC 9110 5.6.1), OWS trimmed;
 * empty elements are returned as such (so "" yields one empty element).
 * Returns 0 at the end. sep is ',' but for a Cookie's ';'.
 */

static gn_int_t
gn_http_list_next(u_char **pos, u_char *end, u_char sep, gn_str_t *elt)
{
    u_char  *p, *start, *last;

    p = *pos;

    if (p == NULL) {
        return 0;
    }

    for (start = p; p < end && *p != sep; p++) {
        /* void */
    }

    for (last = p; start < last && gn_http_ows(*start); start++) {
        /* void */
    }

    while (last > start && gn_http_ows(last[-1])) {
        last--;
    }

    elt->data = start;
    elt->len = last - start;

    *pos = (p < end) ? p + 1 : NULL;      /* past the sep, or stop */

    return 1;
}


/*
 * Message framing and connection rules (RFC 9112 6.1-6.3, 9.3), decided
 * once the whole head is parsed. A request body is framed by exactly one
 * rule, and anything that could let another HTTP processor on the path
 * see a different framing (request smuggling) is refused:
 *
 *   1. Transfer-Encoding present:
 *      - in HTTP/1.0 -> 400 (6.1: the framing is faulty);
 *      - together with Content-Length -> 400 (6.1 lets a server reject
 *        this instead of dropping Content-Length; we do, always);
 *      - an empty value or a malformed or empty list element -> 400;
 *      - "chunked" more than once -> 400 (6.1: MUST NOT apply twice);
 *      - a final coding (over all TE fields, in order) other than a bare
 *        "chunked" ("gzip", "chunked, gzip", "xchunked", "chunked;x=1")
 *        -> 400: the body length cannot be determined (6.3 rule 4);
 *      - a coding before the final chunked ("gzip, chunked") -> 501:
 *        the framing is known, but we decode nothing but chunked (6.1);
 *      - otherwise the body is chunked (h->chunked = 1).
 *   2. Content-Length present (6.3 rule 6): one field line whose value
 *      is 1*DIGIT (no sign, no spaces inside, no list) that fits in
 *      off_t; else 400. A second field, or a list, is refused even when
 *      the values agree ("5, 5"): 8.6 lets a recipient reject it, and a
 *      proxy that reads only one of them frames the body its own way.
 *   3. Neither: no body (6.3 rule 7: a request without framing has a
 *      zero-length body).
 * Host (RFC 9112 3.2): exactly one field line in HTTP/1.1 (zero or two
 * -> 400), at most one in HTTP/1.0; its value must be an RFC 3986
 * authority (gn_http_valid_host()). An empty Host is accepted only when the target is in
 * absolute-form, whose authority overrides Host (3.2.2) and becomes
 * h->host.
 * Connection (9.3): HTTP/1.1 keeps the connection unless a "close" token
 * is present; HTTP/1.0 closes unless "keep-alive" is present; "close"
 * wins over "keep-alive". Tokens may be spread over several fields.
 * Expect: only "100-continue" (any case, HTTP/1.1 and 2, RFC 9110 10.1.1)
 * is recognised; other expectations are left to the caller, which may
 * answer 417 after looking at the field with gn_http_header_find().
 *
 * Whenever gn_http_parse_head() returns an error status the framing of
 * what follows is unknown: the caller must close the connection after
 * sending the error response.
 */

static gn_int_t
gn_http_process_fields(gn_http_head_t *h, gn_http_frame_t *f)
{
    gn_int_t          rc;
    gn_str_t         *slot;
    gn_uint_t         i, k;
    gn_http_header_t *hd;

    memset(f, 0, sizeof(gn_http_frame_t));

    for (i = 0; i < h->nheaders; i++) {
        hd = &h->headers[i];

        if (hd->name.len + 1 >= sizeof(gn_http_fields_from)) {
            continue;                       /* longer than any */
        }

        for (k = gn_http_fields_from[hd->name.len];
             k < gn_http_fields_from[hd->name.len + 1]; k++)
        {
            if (!gn_str_caseeq_str(&hd->name, &gn_http_fields[k].name)) {
                continue;
            }

            if (gn_http_fields[k].handler != NULL) {
                rc = gn_http_fields[k].handler(h, f, &hd->value);
                if (rc != GN_OK) {
                    return rc;
                }
                break;
            }

            slot = (gn_str_t *) ((u_char *) h + gn_http_fields[k].offset);
            if (slot->data == NULL) {
                *slot = hd->value;
            }

            break;
        }
    }

    return GN_OK;
}


static gn_int_t
gn_http_frame(gn_http_head_t *h, gn_http_frame_t *f)
{
    gn_int_t  rc;

    if (h->version == GN_HTTP_VERSION_11 && f->hosts == 0) {
        h->err = "missing Host header";
        return 400;
    }

    if (f->hosts && f->host.len == 0 && h->abs_host.len == 0
        && h->version == GN_HTTP_VERSION_11)
    {
        h->err = "empty Host header";
        return 400;
    }

    h->host = h->abs_host.len ? h->abs_host : f->host;

    rc = gn_http_frame_te(h, f);
    if (rc != GN_OK) {
        return rc;
    }

    if (h->version == GN_HTTP_VERSION_11) {
        h->keepalive = !f->conn_close;

    } else {
        h->keepalive = f->conn_keepalive && !f->conn_close;
    }

    return GN_OK;
}


/* Transfer-Encoding, the same for requests and responses. */
static gn_int_t
gn_http_frame_te(gn_http_head_t *h, gn_http_frame_t *f)
{
    if (!f->te) {
        return GN_OK;
    }

    if (h->version == GN_HTTP_VERSION_10) {
        h->err = "Transfer-Encoding in HTTP/1.0";
        return 400;
    }

    if (h->content_length != -1) {
        h->err = "both Content-Length and Transfer-Encoding";
        return 400;
    }

    if (f->te_chunked > 1) {
        h->err = "chunked applied more than once";
        return 400;
    }

    if (!f->te_final_chunked) {
        h->err = "final transfer coding is not chunked";
        return 400;
    }

    if (f->te_other) {
        h->err = "unsupported transfer coding";
        return 501;
    }

    h->chunked = 1;

    return GN_OK;
}


gn_str_t
gn_http_host_name(const gn_str_t *host)
{
    gn_str_t   v = *host;
    u_char    *end;

    if (v.len == 0) {
        return v;
    }

    if (v.data[0] == '[') {
        end = memchr(v.data, ']', v.len);
        if (end != NULL) {
            v.len = (size_t) (end + 1 - v.data);
        }
        return v;
    }

    end = memchr(v.data, ':', v.len);
    if (end != NULL) {
        v.len = (size_t) (end - v.data);
    }

    if (v.len > 0 && v.data[v.len - 1] == '.') {
        v.len--;
    }

    return v;
}


static gn_int_t
gn_http_field_host(gn_http_head_t *h, gn_http_frame_t *f, gn_str_t *value)
{
    if (++f->hosts > 1) {
        h->err = "duplicate Host header";
        return 400;
    }

    if (value->len && gn_http_valid_host(value->data, value->len) != GN_OK) {
        h->err = "invalid Host header";
        return 400;
    }

    f->host = *value;

    return GN_OK;
}


static gn_int_t
gn_http_field_content_length(gn_http_head_t *h, gn_http_frame_t *f,
    gn_str_t *value)
{
    off_t    n;
    u_char   c;
    size_t   i;

    if (h->content_length != -1) {
        h->err = "duplicate Content-Length";
        return 400;
    }

    if (value->len == 0) {
        h->err = "invalid Content-Length";
        return 400;
    }

    for (n = 0, i = 0; i < value->len; i++) {
        c = value->data[i];

        if (c < '0' || c > '9' || n > (GN_HTTP_MAX_OFF_T - (c - '0')) / 10) {
            h->err = "invalid Content-Length";
            return 400;
        }

        n = n * 10 + (c - '0');
    }

    h->content_length = n;

    return GN_OK;
}


/*
 * transfer-coding = token *( OWS ";" OWS transfer-parameter ). Only a
 * bare "chunked" counts as chunked; a token with parameters or any other
 * token is "another coding" (400 if it is the last, else 501). Whatever
 * follows a token must start a parameter list, so "chunked x" or
 * "chunked\"" is malformed (400).
 */

static gn_int_t
gn_http_field_transfer_encoding(gn_http_head_t *h, gn_http_frame_t *f,
    gn_str_t *value)
{
    u_char    *p, *end;
    size_t     i;
    gn_str_t   elt;

    f->te++;

    if (value->len == 0) {
        h->err = "empty Transfer-Encoding";
        return 400;
    }

    p = value->data;
    end = p + value->len;

    while (gn_http_list_next(&p, end, ',', &elt)) {

        for (i = 0; i < elt.len && gn_http_tchar(elt.data[i]); i++) {
            /* void */
        }

        if (i == elt.len && gn_str_caseeq(&elt, "chunked")) {
            f->te_chunked++;
            f->te_final_chunked = 1;
            continue;
        }

        while (i < elt.len && gn_http_ows(elt.data[i])) {
            i++;
        }

        if (i == 0 || (i < elt.len && elt.data[i] != ';')) {
            h->err = "invalid Transfer-Encoding";
            return 400;
        }

        f->te_other++;
        f->te_final_chunked = 0;
    }

    return GN_OK;
}


static gn_int_t
gn_http_field_connection(gn_http_head_t *h, gn_http_frame_t *f,
    gn_str_t *value)
{
    u_char    *p, *end;
    gn_str_t   elt;

    p = value->data;
    end = p + value->len;

    while (gn_http_list_next(&p, end, ',', &elt)) {
        if (gn_str_caseeq(&elt, "close")) {
            f->conn_close = 1;

        } else if (gn_str_caseeq(&elt, "keep-alive")) {
            f->conn_keepalive = 1;
        }
    }

    return GN_OK;
}


static gn_int_t
gn_http_field_expect(gn_http_head_t *h, gn_http_frame_t *f, gn_str_t *value)
{
    u_char    *p, *end;
    gn_str_t   elt;

    if (h->version < GN_HTTP_VERSION_11) {
        return GN_OK;                       /* HTTP/2 has it too */
    }

    p = value->data;
    end = p + value->len;

    while (gn_http_list_next(&p, end, ',', &elt)) {
        if (gn_str_caseeq(&elt, "100-continue")) {
            h->expect_continue = 1;
        }
    }

    return GN_OK;
}


static gn_int_t
gn_http_hexval(u_char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }

    c |= 0x20;

    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }

    return -1;
}


/*
 * Decoding comes first, so "%2e%2e", ".%2E" and "%2f" are seen as the
 * dots and slashes they stand for: a decoded '/' separates segments like
 * a literal one (the file system would see it so). dst always holds the
 * result so far; dst[seg - 1] is the '/' before the current segment.
 */

gn_int_t
gn_http_normalize_path(const u_char *src, size_t src_len, u_char *dst,
    size_t *dst_len)
{
    u_char    c;
    size_t    i, d, seg;
    gn_int_t  hi, lo;

    if (src_len == 0 || src[0] != '/') {
        return GN_ERROR;
    }

    dst[0] = '/';
    d = 1;
    seg = 1;

    for (i = 1; i < src_len; i++) {
        c = src[i];

        if (c == '%') {
            if (src_len - i < 3) {
                return GN_ERROR;
            }

            hi = gn_http_hexval(src[i + 1]);
            lo = gn_http_hexval(src[i + 2]);

            if (hi < 0 || lo < 0) {
                return GN_ERROR;
            }

            c = (u_char) (hi * 16 + lo);
            i += 2;
        }

        if (c < 0x20 || c == 0x7f) {
            return GN_ERROR;
        }

        if (c != '/') {
            dst[d++] = c;
            continue;
        }

        if (gn_http_path_segment(dst, &d, &seg) != GN_OK) {
            return GN_ERROR;
        }

        if (d > seg) {
            dst[d++] = '/';
            seg = d;
        }
    }

    if (gn_http_path_segment(dst, &d, &seg) != GN_OK) {
        return GN_ERROR;
    }

    *dst_len = d;

    return GN_OK;
}


/*
 * The query's arguments are split at '&' only (';' is data, as in
 * nginx), and names are compared as the bytes they are: no decoding and,
 * unlike nginx's $arg_NAME, no case folding (form field names are
 * case-sensitive to the applications that read them).
 */

gn_int_t
gn_http_arg(const gn_str_t *args, const u_char *name, size_t len,
    gn_str_t *value)
{
    const u_char  *p, *end, *amp, *eq, *key_end;

    value->len = 0;
    value->data = NULL;

    if (len == 0 || args->data == NULL) {
        return GN_DECLINED;
    }

    p = args->data;
    end = p + args->len;

    while (p < end) {
        amp = memchr(p, '&', end - p);
        if (amp == NULL) {
            amp = end;
        }

        eq = memchr(p, '=', amp - p);
        key_end = eq != NULL ? eq : amp;

        if ((size_t) (key_end - p) == len && memcmp(p, name, len) == 0) {
            /* "c" alone: present and empty, data just past the name */
            value->data = (u_char *) (eq != NULL ? eq + 1 : amp);
            value->len = eq != NULL ? (size_t) (amp - eq - 1) : 0;
            return GN_OK;
        }

        p = amp + 1;
    }

    return GN_DECLINED;
}


/*
 * RFC 6265 5.4 says a client sends "a=1; b=2"; 5.2's leniency is kept
 * for the others: blanks around names and values are trimmed, a pair
 * without '=' is skipped (it names nothing), quotes stay in the value
 * (as nginx's $cookie_NAME).
 */

gn_int_t
gn_http_cookie(const gn_str_t *header, const u_char *name, size_t len,
    gn_str_t *value)
{
    u_char    *p, *eq, *k;
    gn_str_t   pair;

    value->len = 0;
    value->data = NULL;

    if (len == 0 || header->data == NULL) {
        return GN_DECLINED;
    }

    p = header->data;

    while (gn_http_list_next(&p, header->data + header->len, ';', &pair)) {
        eq = memchr(pair.data, '=', pair.len);
        if (eq == NULL) {
            continue;
        }

        for (k = eq; k > pair.data && gn_http_ows(k[-1]); k--) {
            /* void */
        }

        if ((size_t) (k - pair.data) != len
            || memcmp(pair.data, name, len) != 0)
        {
            continue;
        }

        for (k = eq + 1; k < pair.data + pair.len && gn_http_ows(*k); k++) {
            /* void */
        }

        value->data = k;
        value->len = pair.data + pair.len - k;
        return GN_OK;
    }

    return GN_DECLINED;
}


/*
 * Unlike gn_http_normalize_path(), which refuses a request with a bad
 * escape, this one decodes what a module asks it to: bad escapes ("%zz",
 * a '%' with fewer than two hex digits after it) are kept as they are,
 * and "%00" is a NUL byte like any other.
 */

size_t
gn_http_unescape(u_char *dst, const u_char *src, size_t n, gn_uint_t plus)
{
    size_t    i, d;
    gn_int_t  hi, lo;
    u_char    c;

    for (i = 0, d = 0; i < n; i++, d++) {
        c = src[i];

        if (c == '%' && n - i >= 3) {
            hi = gn_http_hexval(src[i + 1]);
            lo = gn_http_hexval(src[i + 2]);
            if (hi >= 0 && lo >= 0) {
                c = (u_char) (hi * 16 + lo);
                i += 2;
            }

        } else if (c == '+' && plus) {
            c = ' ';
        }

        if (dst != NULL) {
            dst[d] = c;
        }
    }

    return d;
}


/*
 * The segment dst[seg..d) is complete: "." is dropped, ".." drops itself
 * and the segment before it (GN_ERROR at the root), either way leaving
 * dst ending in '/' (d == seg); an empty segment (from "//") stays empty.
 */

static gn_int_t
gn_http_path_segment(u_char *dst, size_t *d, size_t *seg)
{
    size_t  len, p;

    len = *d - *seg;

    if (len == 1 && dst[*seg] == '.') {
        *d = *seg;
        return GN_OK;
    }

    if (len != 2 || dst[*seg] != '.' || dst[*seg + 1] != '.') {
        return GN_OK;
    }

    if (*seg == 1) {
        return GN_ERROR;
    }

    for (p = *seg - 2; dst[p] != '/'; p--) {
        /* void: dst[0] is '/' */
    }

    *seg = p + 1;
    *d = p + 1;

    return GN_OK;
}


/*
 * Chunked body (RFC 9112 7.1):
 *
 *   chunk-size [ chunk-ext ] CRLF  chunk-data CRLF  ...
 *   "0" [ chunk-ext ] CRLF  *( field-line CRLF )  CRLF
 *   chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted ) ] )
 *
 * One byte at a time through a state machine, except chunk data, which is
 * handed out in place. Every line ends in CRLF: a bare LF (which RFC 9112
 * 2.2 tolerates in a head, not here) or a bare CR is an error, as
 * proxies that disagree on where a chunk-size line or the data end are
 * the classic smuggling pair. The extension grammar is checked exactly
 * for the same reason (a quoted CR or LF must never end a line here when
 * it would not elsewhere).
 */

enum {
    sw_size_start = 0,
    sw_size,
    sw_size_lf,
    sw_ext_ws,              /* BWS after the size, before ';' */
    sw_ext_name_start,
    sw_ext_name,
    sw_ext_name_ws,
    sw_ext_value_start,
    sw_ext_value,
    sw_ext_value_ws,
    sw_ext_quoted,
    sw_ext_quoted_pair,
    sw_ext_quoted_end,
    sw_data,
    sw_data_cr,
    sw_data_lf,
    sw_trailer_start,
    sw_trailer_name,
    sw_trailer_value,
    sw_trailer_lf,
    sw_last_lf,
    sw_done,
    sw_error
};


gn_int_t
gn_http_chunked_parse(gn_http_chunked_t *ctx, u_char **pos, u_char *end,
    u_char **data, size_t *size, off_t max_body)
{
    u_char    *p;
    size_t     n;
    gn_int_t   rc;

    if (ctx->state == sw_done) {
        return GN_DONE;
    }

    if (ctx->state == sw_error) {
        return GN_ERROR;
    }

    for (p = *pos; p < end; /* void */) {

        if (ctx->state == sw_data) {
            n = end - p;

            if ((off_t) n > ctx->size) {
                n = (size_t) ctx->size;
            }

            *data = p;
            *size = n;
            *pos = p + n;

            ctx->size -= n;
            ctx->total += n;

            if (ctx->size == 0) {
                ctx->state = sw_data_cr;
            }

            return GN_OK;
        }

        rc = gn_http_chunked_byte(ctx, *p, max_body);

        if (rc != GN_OK) {
            /* ctx->size says which: the size that crosses max_body, or
             * 0 for a malformed encoding (an overflowing size included) */
            if (rc != GN_DECLINED) {
                ctx->size = 0;
            }

            ctx->state = sw_error;
            *pos = p;
            return GN_ERROR;
        }

        p++;

        if (ctx->state == sw_done) {
            *pos = p;
            return GN_DONE;
        }
    }

    *pos = p;

    return GN_AGAIN;
}


static gn_int_t
gn_http_chunked_byte(gn_http_chunked_t *ctx, u_char ch, off_t max_body)
{
    gn_int_t  v;

    if (ctx->state >= sw_ext_ws && ctx->state <= sw_ext_quoted_end) {
        return gn_http_chunked_ext(ctx, ch);
    }

    if (ctx->state >= sw_trailer_start && ctx->state <= sw_last_lf) {
        return gn_http_chunked_trailer(ctx, ch);
    }

    switch (ctx->state) {

    case sw_size_start:
        v = gn_http_hexval(ch);
        if (v < 0) {
            return GN_ERROR;
        }
        ctx->size = v;
        ctx->state = sw_size;
        return GN_OK;

    case sw_size:
        v = gn_http_hexval(ch);
        if (v >= 0) {
            if (ctx->size > (GN_HTTP_MAX_OFF_T - v) / 16) {
                return GN_ERROR;
            }
            ctx->size = ctx->size * 16 + v;
            return GN_OK;
        }

        if (ch == '\r') {
            ctx->state = sw_size_lf;
            return GN_OK;
        }

        ctx->state = sw_ext_ws;
        return gn_http_chunked_ext(ctx, ch);

    case sw_size_lf:
        if (ch != '\n') {
            return GN_ERROR;
        }
        return gn_http_chunked_size_done(ctx, max_body);

    case sw_data_cr:
        if (ch != '\r') {
            return GN_ERROR;
        }
        ctx->state = sw_data_lf;
        return GN_OK;

    case sw_data_lf:
        if (ch != '\n') {
            return GN_ERROR;
        }
        ctx->state = sw_size_start;
        return GN_OK;
    }

    return GN_ERROR;
}


/* Extension bytes, from the first one after the chunk size to its CR. */

static gn_int_t
gn_http_chunked_ext(gn_http_chunked_t *ctx, u_char ch)
{
    gn_uint_t  ows, tchar;

    if (++ctx->ext_len > GN_HTTP_CHUNK_EXT_MAX) {
        return GN_ERROR;
    }

    ows = gn_http_ows(ch);
    tchar = gn_http_tchar(ch);

    switch (ctx->state) {

    case sw_ext_ws:
    case sw_ext_name_ws:
    case sw_ext_value_ws:
        if (ows) {
            return GN_OK;
        }
        if (ch == ';') {
            ctx->state = sw_ext_name_start;
            return GN_OK;
        }
        if (ch == '=' && ctx->state == sw_ext_name_ws) {
            ctx->state = sw_ext_value_start;
            return GN_OK;
        }
        return GN_ERROR;

    case sw_ext_name_start:
    case sw_ext_value_start:
        if (ows) {
            return GN_OK;
        }
        if (tchar) {
            ctx->state = ctx->state == sw_ext_name_start ? sw_ext_name
                                                         : sw_ext_value;
            return GN_OK;
        }
        if (ch == '"' && ctx->state == sw_ext_value_start) {
            ctx->state = sw_ext_quoted;
            return GN_OK;
        }
        return GN_ERROR;

    case sw_ext_quoted:
        if (ch == '"') {
            ctx->state = sw_ext_quoted_end;
            return GN_OK;
        }
        if (ch == '\\') {
            ctx->state = sw_ext_quoted_pair;
            return GN_OK;
        }
        return (ch >= 0x20 && ch != 0x7f) || ch == '\t' ? GN_OK : GN_ERROR;

    case sw_ext_quoted_pair:
        ctx->state = sw_ext_quoted;
        return (ch >= 0x20 && ch != 0x7f) || ch == '\t' ? GN_OK : GN_ERROR;
    }

    /* sw_ext_name, sw_ext_value, sw_ext_quoted_end: what may follow */

    if (tchar && ctx->state != sw_ext_quoted_end) {
        return GN_OK;
    }

    if (ows) {
        ctx->state = ctx->state == sw_ext_name ? sw_ext_name_ws
                                               : sw_ext_value_ws;
        return GN_OK;
    }

    switch (ch) {
    case ';':
        ctx->state = sw_ext_name_start;
        return GN_OK;

    case '=':
        if (ctx->state != sw_ext_name) {
            return GN_ERROR;
        }
        ctx->state = sw_ext_value_start;
        return GN_OK;

    case '\r':
        ctx->ext_len--;
        ctx->state = sw_size_lf;
        return GN_OK;
    }

    return GN_ERROR;
}


/* The trailer section: field lines, then an empty line. */

static gn_int_t
gn_http_chunked_trailer(gn_http_chunked_t *ctx, u_char ch)
{
    if (++ctx->ext_len > GN_HTTP_CHUNK_TRAILER_MAX) {
        return GN_ERROR;
    }

    switch (ctx->state) {

    case sw_trailer_start:
        if (ch == '\r') {
            ctx->state = sw_last_lf;
            return GN_OK;
        }
        if (!gn_http_tchar(ch)) {
            return GN_ERROR;            /* incl. obs-fold */
        }
        ctx->state = sw_trailer_name;
        return GN_OK;

    case sw_trailer_name:
        if (ch == ':') {
            ctx->state = sw_trailer_value;
            return GN_OK;
        }
        return gn_http_tchar(ch) ? GN_OK : GN_ERROR;

    case sw_trailer_value:
        if (ch == '\r') {
            ctx->state = sw_trailer_lf;
            return GN_OK;
        }
        return (ch >= 0x20 && ch != 0x7f) || ch == '\t' ? GN_OK : GN_ERROR;

    case sw_trailer_lf:
        if (ch != '\n') {
            return GN_ERROR;
        }
        ctx->state = sw_trailer_start;
        return GN_OK;

    case sw_last_lf:
        if (ch != '\n') {
            return GN_ERROR;
        }
        ctx->state = sw_done;
        return GN_OK;
    }

    return GN_ERROR;
}


/* GN_DECLINED: the chunk would make the body larger than max_body. */

static gn_int_t
gn_http_chunked_size_done(gn_http_chunked_t *ctx, off_t max_body)
{
    if (max_body > 0 && ctx->size > max_body - ctx->total) {
        return GN_DECLINED;
    }

    if (ctx->size > GN_HTTP_MAX_OFF_T - ctx->total) {
        return GN_ERROR;
    }

    if (ctx->size == 0) {
        ctx->ext_len = 0;
        ctx->state = sw_trailer_start;
        return GN_OK;
    }

    ctx->state = sw_data;

    return GN_OK;
}
