/*
 * The static file handler: GET and HEAD of files under `root`.
 */

#ifndef GN_CORE_HTTP_STATIC_H_INCLUDED
#define GN_CORE_HTTP_STATIC_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"
#include "file_cache.h"


/* sendfile, etag, last_modified, max_ranges, sendfile_min_size, the
 * file_cache directives, symlinks_outside_root, private_files. */
extern const gn_conf_cmd_t  gn_http_static_commands[];

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
