/*
 * The static file handler: GET and HEAD of files under `root`.
 */

#ifndef GN_CORE_HTTP_STATIC_H_INCLUDED
#define GN_CORE_HTTP_STATIC_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"
#include "file_cache.h"


/* The "static" feature's part of a level (feature.h). */
typedef struct {
    gn_flag_t            sendfile;
    gn_flag_t            etag;
    gn_flag_t            last_modified;
    gn_int_t             max_ranges;
    size_t               sendfile_min_size;
    gn_flag_t            file_cache;
    gn_msec_t            file_cache_valid;
    gn_int_t             file_cache_entries;    /* main level */
    gn_flag_t            symlinks_outside_root;
    gn_flag_t            private_files;
    gn_flag_t            log_not_found;
} gn_static_conf_t;

#define gn_static_conf(lc)  ((gn_static_conf_t *) (lc)->conf[GN_FEATURE_STATIC])
#define gn_static_offset(f) offsetof(gn_static_conf_t, f)

/* The registry's "static": sendfile, etag, last_modified, max_ranges,
 * sendfile_min_size, the file_cache directives, symlinks_outside_root,
 * private_files, log_not_found; plain slots all. */
extern const gn_feature_t  gn_static_feature;

/* Sets up r's response (status, headers, body file or error page).
 * Returns GN_OK or GN_ERROR (internal failure: the caller answers 500). */
gn_int_t gn_http_static_handler(gn_http_request_t *r);

/* Opens root + uri (+ name) through the open-file cache with r's
 * location's settings (file_cache, file_cache_valid, sendfile_min_size);
 * the entry is released with r's pool. NULL with *err set (an errno) on
 * failure. `beneath`: refuse symlinks that lead out of root. */
gn_fc_entry_t *gn_http_file_open(gn_http_request_t *r, const gn_str_t *root,
    const gn_str_t *uri, const gn_str_t *name, gn_uint_t beneath, int *err);

/* Appends the bytes [off, off + len) of e to r's body: the cached copy,
 * read into the pool when small (so they leave with the head in one
 * write), or a sendfile() segment. */
gn_int_t gn_http_file_body(gn_http_request_t *r, gn_fc_entry_t *e, off_t off,
    off_t len);

#endif /* GN_CORE_HTTP_STATIC_H_INCLUDED */
