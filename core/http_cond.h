/*
 * Conditional requests and byte ranges (RFC 9110 sections 13 and 14):
 * HTTP-date parsing, ETag formatting, precondition evaluation, If-Range,
 * Range parsing and the multipart/byteranges framing.
 *
 * Pure functions on caller-owned buffers: no I/O, no logging, no
 * allocation, no global state. Every parser is bounded by the length it is
 * given and never relies on a NUL. Any process may call them.
 */

#ifndef GN_CORE_HTTP_COND_H_INCLUDED
#define GN_CORE_HTTP_COND_H_INCLUDED

#include "gn_config.h"

#include "http_parse.h"


/* Buffer sizes callers must provide. */
#define GN_HTTP_ETAG_LEN                40  /* gn_http_etag() */
#define GN_HTTP_BOUNDARY_LEN            32  /* gn_http_multipart_boundary() */
#define GN_HTTP_CONTENT_RANGE_LEN       72  /* gn_http_content_range() */

/*
 * Upper bound of one multipart part header for a boundary of blen bytes
 * and a Content-Type of tlen bytes (three 20-digit numbers at most).
 */
#define GN_HTTP_MULTIPART_HEADER_LEN(blen, tlen)                              \
    (sizeof("\r\n--\r\nContent-Type: \r\nContent-Range: bytes -/\r\n\r\n")  \
     - 1 + (blen) + (tlen) + 3 * 20)

/* gn_http_parse_range(): none of the ranges can be satisfied. */
#define GN_HTTP_RANGE_UNSATISFIABLE    (-416)


/*
 * HTTP-date (RFC 9110 5.6.7) in any of its three formats:
 *   IMF-fixdate   "Sun, 06 Nov 1994 08:49:37 GMT"
 *   RFC 850       "Sunday, 06-Nov-94 08:49:37 GMT"
 *   asctime       "Sun Nov  6 08:49:37 1994"
 * p[0..len) must be exactly the date (the head parser already removed the
 * surrounding OWS); names are case-sensitive as the RFC says. The weekday
 * must be a valid name but is not checked against the date (as nginx and
 * Apache). Seconds may be 60 (leap second). Years before 1900 are refused
 * (as Apache), and so is a date that does not fit in time_t. A two-digit
 * RFC 850 year yy means 20yy when yy < 70, else 19yy (a fixed pivot, so
 * the result does not depend on the clock).
 * Returns GN_OK and sets *t, or GN_ERROR (the caller ignores the header).
 */
gn_int_t gn_http_parse_date(const u_char *p, size_t len, time_t *t);

/*
 * Formats the nginx-style strong entity-tag "\"<mtime hex>-<size hex>\""
 * (lowercase hex, no padding) into buf (at least GN_HTTP_ETAG_LEN bytes).
 * Returns its length.
 */
size_t gn_http_etag(u_char *buf, time_t mtime, off_t size);

/*
 * Evaluates the preconditions of RFC 9110 13.2.2, in that order, for a
 * representation that exists (the static handler found the file), with
 * the entity-tag etag as sent in the ETag header field, quotes included
 * (etag->len == 0: none, e.g. `etag off`; a tag beginning with W/ is weak
 * and never matches strongly) and the last-modification time mtime
 * (-1: none, e.g. `last_modified off`):
 *
 *   1. If-Match: "*" always matches (the representation exists); else
 *      true if one of the listed tags strongly matches etag. False -> 412.
 *      A malformed list is false (412).
 *   2. If-Unmodified-Since, only when If-Match is absent, ignored when the
 *      date is invalid or mtime is -1: false when mtime is later than the
 *      date -> 412.
 *   3. If-None-Match: "*" matches; else a listed tag weakly matches etag.
 *      A match -> 304 for GET and HEAD, 412 for any other method. A
 *      malformed list does not match (and still counts as present for 4).
 *   4. If-Modified-Since, only for GET and HEAD and only when
 *      If-None-Match is absent, ignored when the date is invalid or mtime
 *      is -1: mtime not later than the date -> 304.
 *
 * Header values come from h->if_match, if_unmodified_since, if_none_match
 * and if_modified_since (len 0 = absent) and h->method. Lists such as
 * `"a", W/"b"` (OWS around commas, empty elements) are accepted; a list is
 * either entirely well-formed or malformed, wherever the error is.
 * Returns 0 (go on), 304 or 412.
 */
gn_uint_t gn_http_preconditions(const gn_http_head_t *h, const gn_str_t *etag,
    time_t mtime);

/*
 * If-Range (RFC 9110 13.1.5) from h->if_range. Returns 1 when the Range
 * may be applied: the header is absent, or it is a single entity-tag that
 * strongly matches etag (a weak tag never does), or an HTTP-date exactly
 * equal to mtime (mtime != -1). Anything else, malformed values included,
 * returns 0: the caller answers with the full representation (200).
 */
gn_uint_t gn_http_if_range(const gn_http_head_t *h, const gn_str_t *etag,
    time_t mtime);


typedef struct {
    off_t       start;
    off_t       end;                /* inclusive */
} gn_http_range_t;

/*
 * Parses a Range field value p[0..len) against a representation of size
 * bytes (RFC 9110 14.1, 14.2). Only the "bytes" unit (case-insensitive),
 * written as `bytes=` with no space before the '='. OWS is tolerated after
 * the '=' and around commas (as nginx), not inside a range-spec; empty list
 * elements are skipped (RFC 9110 5.6.1). Numbers of any length are
 * accepted without overflow: a huge first-pos is unsatisfiable, a huge
 * last-pos or suffix-length is clamped.
 *
 * Returns:
 *   > 0  the number of satisfiable ranges written to ranges[] (end clamped
 *        to size - 1); the caller answers 206;
 *   0    ignore the header and answer 200: syntax error anywhere (e.g.
 *        last-pos < first-pos), no range-spec at all, a unit other than
 *        bytes, or more than max range-specs (counted as written,
 *        satisfiable or not; max == 0 disables ranges);
 *   GN_HTTP_RANGE_UNSATISFIABLE (-416)  valid, but no range is satisfiable
 *        (a first-pos >= size, a suffix "-0", or any range when size is 0);
 *        the caller answers 416 with the Content-Range "bytes <star>/size"
 *        that gn_http_content_range(buf, NULL, size) writes.
 *
 * Anti-DoS: ranges[] is at most max entries. When no two ranges overlap
 * or touch, they are kept in request order; otherwise all of them are
 * sorted by start and overlapping or adjacent ones are coalesced (RFC 9110
 * 14.2 allows it), so the parts never add up to more than size bytes and
 * each byte is sent at most once. The cost is O(max^2) for a small max.
 */
gn_int_t gn_http_parse_range(const u_char *p, size_t len, off_t size,
    gn_http_range_t *ranges, gn_uint_t max);

/*
 * Writes a Content-Range value into buf (GN_HTTP_CONTENT_RANGE_LEN bytes):
 * "bytes <start>-<end>/<size>", or the unsatisfied form "bytes <star>/<size>"
 * (a literal '*') when r is NULL, for a 416. Returns its length.
 */
size_t gn_http_content_range(u_char *buf, const gn_http_range_t *r,
    off_t size);


/*
 * multipart/byteranges (RFC 9110 14.6). The body is, for each range i,
 * part_header(i) followed by the bytes of the range, then the trailer:
 *   "\r\n--BOUNDARY\r\nContent-Type: TYPE\r\nContent-Range: bytes a-b/size"
 *   "\r\n\r\n" <bytes a..b> ... "\r\n--BOUNDARY--\r\n"
 * The Content-Type line is left out when type->len == 0. The response
 * header is "Content-Type: multipart/byteranges; boundary=BOUNDARY".
 */

/* 20 decimal digits of seed, zero-padded, into buf (GN_HTTP_BOUNDARY_LEN
 * bytes). The caller picks the seed (e.g. a per-child counter mixed with
 * the pid) so that it is unlikely to appear in the content. Returns 20. */
size_t gn_http_multipart_boundary(u_char *buf, uint64_t seed);

/* Writes the header of the part for r; returns its length, or 0 (nothing
 * written) when buflen is too small (GN_HTTP_MULTIPART_HEADER_LEN() is
 * always enough). */
size_t gn_http_multipart_part_header(u_char *buf, size_t buflen,
    const gn_str_t *boundary, const gn_str_t *type, const gn_http_range_t *r,
    off_t size);

/* Writes the closing delimiter; returns its length, or 0 when buflen is
 * too small (boundary->len + 8 bytes are enough). */
size_t gn_http_multipart_trailer(u_char *buf, size_t buflen,
    const gn_str_t *boundary);

/* The Content-Length of the whole multipart body for r[0..n): exactly the
 * sum of what the two writers above produce plus the range bytes. Returns
 * -1 if a range is invalid (start < 0, end < start) or the sum overflows
 * off_t. */
off_t gn_http_multipart_length(const gn_str_t *boundary, const gn_str_t *type,
    const gn_http_range_t *r, gn_uint_t n, off_t size);

#endif /* GN_CORE_HTTP_COND_H_INCLUDED */
