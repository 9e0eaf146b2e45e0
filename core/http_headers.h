/*
 * Response fields a configuration adds (nginx's headers module, plus a
 * one-line HSTS): `add_header NAME VALUE [always]`, `expires` and
 * `tls_hsts`. gn_http_response_head() asks for them once per response,
 * so they go out over HTTP/1 and HTTP/2 alike, on files, error pages,
 * modules' and proxied responses.
 *
 *   add_header NAME VALUE [always];   VALUE with the access log's
 *       variables; an empty value adds nothing. Without `always`, only
 *       on 200, 201, 204, 206, 301, 302, 303, 304, 307 and 308. A level
 *       with any add_header of its own inherits none of the outer
 *       level's (nginx).
 *   expires [modified] TIME | epoch | max | off;   Expires and
 *       Cache-Control (max-age=N, or no-cache when TIME is negative),
 *       replacing any a module or upstream set, on the statuses above;
 *       `modified` counts from the file's Last-Modified (responses
 *       without one get neither field).
 *   tls_hsts off | MAX_AGE [includeSubDomains] [preload];
 *       Strict-Transport-Security on every response sent over TLS, and
 *       never over plain HTTP (RFC 6797 7.2).
 */

#ifndef GN_CORE_HTTP_HEADERS_H_INCLUDED
#define GN_CORE_HTTP_HEADERS_H_INCLUDED

#include "gn_config.h"

#include "feature.h"
#include "access_log.h"


struct gn_http_request_s;

typedef struct {
    gn_str_t          name;
    gn_log_format_t   value;       /* with variables */
    gn_uint_t         always;
} gn_http_add_header_t;

typedef enum {
    GN_EXPIRES_OFF = 0,
    GN_EXPIRES_ACCESS,             /* now + time */
    GN_EXPIRES_MODIFIED,           /* Last-Modified + time */
    GN_EXPIRES_EPOCH,
    GN_EXPIRES_MAX
} gn_http_expires_e;

/* The "headers" feature's part of a level (feature.h). */
typedef struct {
    gn_array_t       *add;         /* of gn_http_add_header_t; NULL: the
                                      outer level's */
    gn_int_t          expires;     /* gn_http_expires_e; GN_CONF_UNSET */
    time_t            expires_time;
    gn_str_t          hsts;        /* the field's value; len 0: off;
                                      data NULL: unset */
    gn_uint_t         any;         /* merged: something to add */
} gn_headers_conf_t;

#define gn_headers_conf(lc)                                                   \
    ((gn_headers_conf_t *) (lc)->conf[GN_FEATURE_HEADERS])

/* The registry's "headers": add_header, expires, tls_hsts. */
extern const gn_feature_t  gn_headers_feature;

/* Child: the fields r's location adds to its response, as "Name:
 * value\r\n" lines in r's pool (out->len 0: none); the Expires and
 * Cache-Control a module or upstream set are dropped from
 * r->resp_headers when `expires` replaces them. GN_OK or GN_ERROR
 * (memory). */
gn_int_t gn_http_headers_build(struct gn_http_request_s *r, gn_str_t *out);

/* Drops the fields called name (len bytes, any case) from
 * r->resp_headers, a module's or an upstream's (`expires` sets its own
 * Expires and Cache-Control; gzip drops Accept-Ranges). */
void gn_http_headers_drop(struct gn_http_request_s *r, const char *name,
    size_t len);

#endif /* GN_CORE_HTTP_HEADERS_H_INCLUDED */
