/*
 * The static file handler: GET and HEAD of files under `root`.
 */

#ifndef GN_CORE_HTTP_STATIC_H_INCLUDED
#define GN_CORE_HTTP_STATIC_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"
#include "http_file.h"


/* The "static" feature's part of a level (feature.h). */
typedef struct {
    gn_flag_t            etag;
    gn_flag_t            last_modified;
    gn_int_t             max_ranges;
    gn_flag_t            private_files;
    gn_flag_t            log_not_found;
    gn_flag_t            gzip_static;      /* serve FILE.gz, */
    gn_flag_t            brotli_static;    /* ... FILE.br */
} gn_static_conf_t;

#define gn_static_conf(lc)                                                    \
    ((gn_static_conf_t *) (lc)->conf[GN_FEATURE_STATIC])
#define gn_static_offset(f) offsetof(gn_static_conf_t, f)

/* The registry's "static": etag, last_modified, max_ranges,
 * private_files, log_not_found; plain slots all. */
extern const gn_feature_t  gn_static_feature;

/* Sets up r's response (status, headers, body file or error page).
 * Returns GN_OK or GN_ERROR (internal failure: the caller answers 500). */
gn_int_t gn_http_static_handler(gn_http_request_t *r);

/* nginx's `index` for r->uri "/dir/": the URI of its first index file
 * that is a regular file, in *uri, for an internal redirect (GN_OK);
 * GN_DECLINED when there is none (the static handler answers), GN_ERROR
 * out of memory. */
gn_int_t gn_http_static_index_uri(gn_http_request_t *r, gn_str_t *uri);

/* Does the client's Accept-Encoding (ae) take `coding` (n bytes: a
 * token of the list without q=0)? RFC 9110 12.5.3; "*" is not taken as
 * any coding. */
gn_uint_t gn_http_accepts_coding(const gn_str_t *ae, const char *coding,
    size_t n);

#endif /* GN_CORE_HTTP_STATIC_H_INCLUDED */
