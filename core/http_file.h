/*
 * A request's files: opened through the open-file cache with the
 * location's settings (the "file" feature: file_cache, file_cache_valid,
 * file_cache_entries, sendfile, sendfile_min_size,
 * symlinks_outside_root), and their bytes added to the response. Used by
 * the static handler, error pages and modules' send_file/read_file.
 */

#ifndef GN_CORE_HTTP_FILE_H_INCLUDED
#define GN_CORE_HTTP_FILE_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"
#include "file_cache.h"


/* The "file" feature's part of a level (feature.h). */
typedef struct {
    gn_flag_t            sendfile;
    size_t               sendfile_min_size;
    gn_flag_t            file_cache;
    gn_msec_t            file_cache_valid;
    gn_int_t             file_cache_entries;    /* main level */
    gn_flag_t            symlinks_outside_root;
} gn_file_conf_t;

#define gn_file_conf(lc)    ((gn_file_conf_t *) (lc)->conf[GN_FEATURE_FILE])
#define gn_file_offset(f)   offsetof(gn_file_conf_t, f)

/* The registry's "file": those directives, plain slots all. */
extern const gn_feature_t  gn_file_feature;

/*
 * The file a URI of r's location names: root + uri, or, in a location
 * with `alias`, under the alias: in a prefix location what follows the
 * prefix ("location /i/ { alias /data/img/; }": "/i/a.png" is
 * /data/img/a.png); in a regex location the alias with the location's
 * captures put in (it must stay in the directory before the first of
 * them), else the alias itself (`location = /favicon.ico { alias
 * /srv/ico/f.ico; }`). Sets *dir, the directory the file is opened
 * beneath, and *path under it ("/..."). GN_OK; GN_DECLINED: the URI
 * names no file here (not under the location's prefix, a capture that
 * climbs out); GN_ERROR (memory). Child.
 */
gn_int_t gn_http_file_map(gn_http_request_t *r, const gn_str_t *uri,
    gn_str_t *dir, gn_str_t *path);

/* Does path (from a variable's or a capture's value) hold a ".."
 * segment that would climb out of the directory it is put under? */
gn_uint_t gn_http_file_climbs(const gn_str_t *path);

/* Opens root + uri (+ name) through the open-file cache with r's
 * location's settings (file_cache, file_cache_valid, sendfile_min_size);
 * the entry is released with r's pool. NULL with *err set (an errno) on
 * failure. `beneath`: refuse symlinks that lead out of root. */
gn_fc_entry_t *gn_http_file_open(gn_http_request_t *r, const gn_str_t *root,
    const gn_str_t *uri, const gn_str_t *name, gn_uint_t beneath, int *err);

/* A stat() of root + uri (+ name) resolved as gn_http_file_open would
 * (`beneath`: EXDEV for a symlink that leads out of root), without
 * opening the file to read or caching it (gn_file_cache_stat). GN_OK,
 * or GN_ERROR with *err. */
gn_int_t gn_http_file_stat(gn_http_request_t *r, const gn_str_t *root,
    const gn_str_t *uri, const gn_str_t *name, gn_uint_t beneath,
    struct stat *st, int *err);

/* Appends the bytes [off, off + len) of e to r's body: the cached copy,
 * read into the pool when small (so they leave with the head in one
 * write), or a sendfile() segment. */
gn_int_t gn_http_file_body(gn_http_request_t *r, gn_fc_entry_t *e, off_t off,
    off_t len);

#endif /* GN_CORE_HTTP_FILE_H_INCLUDED */
