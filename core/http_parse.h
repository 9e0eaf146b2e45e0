/*
 * HTTP/1.x request parsing (RFC 9110, RFC 9112): pure functions on byte
 * buffers. No I/O, no logging, no allocation: callers own every buffer.
 *
 * A request head is handled in two steps:
 *   1. gn_http_parse_head_end() is fed the bytes received so far, as often
 *      as more arrive, and finds where the head ends. It keeps its place in
 *      the gn_http_scan_t, so byte-at-a-time delivery costs O(n) in total,
 *      and it enforces the request-line and head size limits as it goes.
 *   2. gn_http_parse_head() parses the complete head in one strict pass.
 * Bodies are framed by gn_http_chunked_parse() (chunked) or by the
 * Content-Length the head parser validated.
 */

#ifndef GN_CORE_HTTP_PARSE_H_INCLUDED
#define GN_CORE_HTTP_PARSE_H_INCLUDED

#include "gn_config.h"


/* Methods, as bits so handlers can state what they accept. */
#define GN_HTTP_UNKNOWN    0x0001
#define GN_HTTP_GET        0x0002
#define GN_HTTP_HEAD       0x0004
#define GN_HTTP_POST       0x0008
#define GN_HTTP_PUT        0x0010
#define GN_HTTP_DELETE     0x0020
#define GN_HTTP_OPTIONS    0x0040
#define GN_HTTP_TRACE      0x0080
#define GN_HTTP_CONNECT    0x0100
#define GN_HTTP_PATCH      0x0200

#define GN_HTTP_VERSION_10  1000
#define GN_HTTP_VERSION_11  1001
#define GN_HTTP_VERSION_20  2000


typedef struct {
    size_t      max_line;       /* request line, without CRLF: else 414 */
    size_t      max_head;       /* whole head incl. final CRLF: else 431 */
    size_t      max_headers;    /* header field lines: else 431 */
    size_t      max_field;      /* one header line: else 431 */
} gn_http_limits_t;

typedef struct {
    size_t      pos;            /* bytes already scanned */
    size_t      line_start;     /* offset of the line being scanned */
    gn_uint_t   lines;          /* complete lines seen */
    gn_uint_t   skip_crlf;      /* leading empty lines skipped (RFC 9112 2.2) */
    const char *err;            /* on error: a short, static reason */
} gn_http_scan_t;

typedef struct {
    gn_str_t    name;           /* as received (case kept) */
    gn_str_t    value;          /* leading/trailing OWS removed */
} gn_http_header_t;

typedef struct {
    /* request line */
    gn_uint_t          method;          /* GN_HTTP_GET, ... */
    gn_str_t           method_name;
    gn_str_t           target;          /* request-target as received */
    gn_str_t           path;            /* raw (still %-encoded) path */
    gn_str_t           query;           /* after '?', without it; may be empty */
    gn_uint_t          has_query;       /* a '?' was present */
    gn_str_t           abs_host;        /* host[:port] of an absolute-form */
    gn_uint_t          version;         /* GN_HTTP_VERSION_10, _11, _20 */
    gn_uint_t          status;          /* a response's (else 0) */

    /* header fields, in order; points into the head buffer */
    gn_http_header_t  *headers;
    gn_uint_t          nheaders;

    /* what the framing and connection rules concluded */
    gn_str_t           host;            /* Host (or absolute-form host) */
    off_t              content_length;  /* -1: none */
    gn_uint_t          chunked;         /* Transfer-Encoding: chunked */
    gn_uint_t          keepalive;       /* per version + Connection */
    gn_uint_t          expect_continue; /* Expect: 100-continue */
    gn_str_t           if_modified_since, if_unmodified_since;
    gn_str_t           if_none_match, if_match, if_range, range;
    gn_str_t           user_agent, referer;

    /* on error: a short, static reason for the error log */
    const char        *err;
} gn_http_head_t;


/*
 * Scans buf[0..len) (all bytes received so far for this head; the caller
 * never moves or changes bytes already scanned) for the end of the head.
 * Returns GN_OK and sets *head_len (bytes up to and including the empty
 * line), GN_AGAIN if the head is not complete yet, or an HTTP status with
 * s->err set: 414 (request line longer than lim->max_line), 431 (head
 * longer than lim->max_head, a field line longer than lim->max_field, or
 * more than lim->max_headers lines), 400 (a NUL, or a CR or LF outside a
 * CRLF), or, as soon as the request line has ended, the status
 * gn_http_parse_head() gives a request line it refuses (400 or 505): a
 * client that is never to be served is not left waiting for more.
 */
gn_int_t gn_http_parse_head_end(gn_http_scan_t *s, const u_char *buf,
    size_t len, const gn_http_limits_t *lim, size_t *head_len);

/*
 * Parses a complete head (as found by gn_http_parse_head_end()) into h,
 * using hdrs[0..max) for the header fields. Strings in h point into buf.
 * Returns GN_OK or an HTTP status with h->err set:
 *   400 malformed request line or field, a line not ended by CRLF, bad
 *       or missing Host in HTTP/1.1 (Host and an absolute-form authority
 *       must be RFC 3986 authorities), duplicated Host, invalid or
 *       repeated Content-Length (even "5, 5"), Transfer-Encoding together
 *       with Content-Length, a final transfer coding other than chunked,
 *       obs-fold, whitespace before a colon, invalid characters;
 *   414 target too long (lim->max_line);
 *   431 too many fields (max) or a field too large;
 *   501 a transfer coding other than chunked before the final chunked;
 *       an unknown method is NOT an error here (h->method =
 *       GN_HTTP_UNKNOWN, the handler answers 501);
 *   505 an HTTP version other than 1.0 and 1.1 (HTTP/1.2 included), or
 *       none (an HTTP/0.9 request line: method SP target).
 */
gn_int_t gn_http_parse_head(gn_http_head_t *h, u_char *buf, size_t len,
    const gn_http_limits_t *lim, gn_http_header_t *hdrs, size_t max);

/* 1 when p[0..len) is a token (RFC 9110 5.6.2: a field name), else 0;
 * an empty string is not one. */
gn_int_t gn_http_token(const u_char *p, size_t len);

/*
 * An upstream's response head (RFC 9112 4), complete in buf[0..len) up
 * to and including its empty line: the status line ("HTTP/1.x DDD
 * [reason]", 100..599) and the fields, into h (status, version, headers
 * in hdrs[0..max), content_length, chunked, keepalive). The fields are
 * checked as a request's (no obs-fold, no whitespace before a colon, no
 * invalid characters), and so is the framing, as a proxy must for the
 * body to be framed as the upstream framed it: Content-Length invalid
 * or repeated, Transfer-Encoding with Content-Length or in HTTP/1.0, a
 * final coding other than chunked or chunked twice are errors. Bare LF
 * line ends are refused. GN_OK, or GN_ERROR with h->err set.
 */
gn_int_t gn_http_parse_response(gn_http_head_t *h, u_char *buf, size_t len,
    gn_http_header_t *hdrs, size_t max);

/*
 * Where a head ended by CRLF CRLF ends in buf[0..len): the offset just
 * past it, or 0 if it has not ended yet. from: how much of buf an
 * earlier call had seen (0 at first), so each byte is looked at about
 * once however the head arrives.
 */
size_t gn_http_head_crlf_end(const u_char *buf, size_t len, size_t from);

/*
 * The end of a CGI response head (RFC 3875 6.2: lines end in LF or
 * CRLF) in buf[0..len), looked for from `from` on (a caller that reads
 * more gives where its last look ended): the length of the head with
 * its empty line, or 0 when it is not complete yet.
 */
size_t gn_http_cgi_head_end(const u_char *buf, size_t len, size_t from);

/*
 * A CGI response head (a FastCGI responder's, RFC 3875 6), complete in
 * buf[0..len) as found by gn_http_cgi_head_end(): its fields checked as
 * gn_http_parse_response() checks them (LF alone may end a line),
 * h->status from "Status: DDD [reason]" (200..599), else 302 with a
 * Location, else 200; content_length from a Content-Length, which must
 * be valid; at least one field, no Transfer-Encoding. The Status field
 * stays in h->headers. GN_OK, or GN_ERROR with h->err set.
 */
gn_int_t gn_http_parse_cgi(gn_http_head_t *h, u_char *buf, size_t len,
    gn_http_header_t *hdrs, size_t max);

/*
 * An HTTP/2 request (RFC 9113 8.3): its pseudo-header fields and the
 * header fields already in h->headers[0..h->nheaders) (h otherwise
 * zeroed, content_length -1), which the framing layer checked as RFC
 * 9113 8.2 asks (lower-case names, no connection-specific fields, the
 * pseudo-headers present once each). Gives h what gn_http_parse_head()
 * gives an HTTP/1.1 head (version GN_HTTP_VERSION_20, the host from
 * :authority, else Host): GN_OK or the status of gn_http_parse_head()
 * with h->err set (400: a target not in origin form, an invalid
 * authority or Host, neither of them, a Host that differs from
 * :authority, an invalid Content-Length).
 */
gn_int_t gn_http_parse_h2(gn_http_head_t *h, const gn_str_t *method,
    const gn_str_t *path, const gn_str_t *authority);

/* Finds a header by name (case-insensitive); NULL when absent. */
gn_http_header_t *gn_http_header_find(const gn_http_head_t *h,
    const char *name, size_t len);


/*
 * The name in a Host value (valid: the parser checked it): without its
 * port or a trailing dot, case kept. "Example.COM.:8080" gives
 * "Example.COM", "[::1]:80" gives "[::1]", "" gives "".
 */
gn_str_t gn_http_host_name(const gn_str_t *host);


/*
 * Path normalisation, before anything touches the file system.
 * Percent-decodes src (a raw path beginning with '/'), removes dot
 * segments (RFC 3986 5.2.4, also when they were %-encoded), merges
 * repeated slashes, and writes the result, always beginning with '/', to
 * dst (at least src_len + 1 bytes). Returns GN_OK and sets *dst_len, or
 * GN_ERROR (the request gets a 400) for: a path not starting with '/',
 * a bad %-escape, %00 or any decoded byte < 0x20 or 0x7f, or ".." that
 * would climb above the root.
 */
gn_int_t gn_http_normalize_path(const u_char *src, size_t src_len,
    u_char *dst, size_t *dst_len);


/*
 * Query argument `name` (len bytes) of args, a query without its '?',
 * as the ABI's arg() (1.8): GN_OK with *value the raw value of its first
 * occurrence ("a=1&b=&c": "1", "" and "", the last pointing just past
 * the name), or GN_DECLINED with *value {0, NULL}. *value points into
 * args.
 */
gn_int_t gn_http_arg(const gn_str_t *args, const u_char *name, size_t len,
    gn_str_t *value);

/*
 * Cookie `name` in one Cookie field's value ("a=1; b=2"), as the ABI's
 * cookie() (1.8): GN_OK with *value pointing into header, or GN_DECLINED
 * with *value {0, NULL}. Names are case-sensitive (RFC 6265).
 */
gn_int_t gn_http_cookie(const gn_str_t *header, const u_char *name,
    size_t len, gn_str_t *value);

/*
 * Percent-decodes n bytes of src to dst (at most n bytes), '+' to a
 * space when plus is set; bad escapes are copied as they are. With dst
 * NULL, only measures. Returns the decoded length.
 */
size_t gn_http_unescape(u_char *dst, const u_char *src, size_t n,
    gn_uint_t plus);


/*
 * Chunked transfer coding (RFC 9112 7.1), incremental: may be fed any
 * split of the body. Zero-initialise before the first call.
 */
typedef struct {
    gn_uint_t   state;
    off_t       size;           /* bytes left in the current chunk */
    off_t       total;          /* data bytes so far */
    size_t      ext_len;        /* bytes of extensions/trailers seen */
} gn_http_chunked_t;

/*
 * Consumes input from *pos up to end. On GN_OK, [*data, *data + *size) is
 * chunk data (possibly less than the chunk) and *pos has advanced past
 * it; on GN_AGAIN all input was consumed and more is needed; on GN_DONE
 * the last chunk and trailers were consumed (*pos is just past them);
 * GN_ERROR for a malformed encoding (a line not ended by CRLF, a chunk
 * size that does not fit in off_t included: ctx->size is then 0, the
 * caller answers 400) or for a chunk size that makes total exceed
 * max_body when max_body > 0 (ctx->size is then that size: 413).
 */
gn_int_t gn_http_chunked_parse(gn_http_chunked_t *ctx, u_char **pos,
    u_char *end, u_char **data, size_t *size, off_t max_body);

#endif /* GN_CORE_HTTP_PARSE_H_INCLUDED */
