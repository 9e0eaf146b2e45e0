/*
 * Directory listings, as nginx's autoindex module:
 *
 *   autoindex on | off;              (any level; off)
 *   autoindex_format html | json;    (html)
 *   autoindex_exact_size on | off;   (on; off: 12K, 3M, 2G, rounded as
 *                                     nginx does)
 *   autoindex_localtime on | off;    (off: GMT; the HTML's dates only,
 *                                     the JSON's are IMF-fixdates)
 *
 * A GET or HEAD of "/dir/" that finds no index file answers 200 with a
 * listing of the directory instead of 403: directories first, then the
 * rest, each by name (bytes), or by the query's `C=N|M|S` (name, mtime,
 * size) and `O=A|D` (Apache's; the HTML's column headers are links that
 * toggle the order). Names starting with '.' are not listed. A symlink
 * is listed as what it leads to when a GET of it would follow it: with
 * `symlinks_outside_root off`, never one that leads out of the root (or
 * alias); one that leads nowhere is not listed either. At most
 * GN_AUTOINDEX_MAX entries are listed (logged at info when there are
 * more): the listing is built in the request's pool.
 */

#ifndef GN_CORE_AUTOINDEX_H_INCLUDED
#define GN_CORE_AUTOINDEX_H_INCLUDED

#include "gn_config.h"

#include "feature.h"


struct gn_http_request_s;
struct gn_fc_entry_s;

#define GN_AUTOINDEX_HTML   0
#define GN_AUTOINDEX_JSON   1

#define GN_AUTOINDEX_MAX    10000

/* The "autoindex" feature's part of a level (feature.h): plain slots. */
typedef struct {
    gn_flag_t            enable;
    gn_uint_t            format;        /* GN_AUTOINDEX_HTML, _JSON */
    gn_flag_t            exact_size;
    gn_flag_t            localtime;
} gn_autoindex_conf_t;

#define gn_autoindex_conf(lc)                                                 \
    ((gn_autoindex_conf_t *) (lc)->conf[GN_FEATURE_AUTOINDEX])
#define gn_autoindex_offset(f)  offsetof(gn_autoindex_conf_t, f)

/* The registry's "autoindex": autoindex, autoindex_format,
 * autoindex_exact_size, autoindex_localtime. */
extern const gn_feature_t  gn_autoindex_feature;

/*
 * Child, from the static handler: r->uri "/dir/" (a GET or HEAD) has no
 * index file, and `dir` is that directory (r->fdir, r->fpath), opened
 * through the open-file cache. GN_DECLINED: autoindex is off here (the
 * caller refuses); GN_OK: the response is set up (the listing, or an
 * error page when the directory cannot be read, logged); GN_ERROR
 * (memory: the caller answers 500).
 */
gn_int_t gn_autoindex_handler(struct gn_http_request_s *r,
    struct gn_fc_entry_s *dir);

#endif /* GN_CORE_AUTOINDEX_H_INCLUDED */
