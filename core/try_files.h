/*
 * try_files and internal locations, as nginx's:
 *
 *   try_files FILE ... URI | =CODE | @NAME;   (server, location)
 *       Each FILE (with the access log's variables: $uri, $args, ...)
 *       is looked for under the location's root, a name ending in '/'
 *       as a directory; the first that exists is served by the
 *       location (r->uri becomes it: its own handler, index files for
 *       a directory). When none does, the last argument decides: an
 *       internal redirect to URI (its query as rewrite's), the status
 *       CODE, or the named location `location @NAME`. Not inherited: a
 *       server-level try_files serves requests no location takes.
 *   internal;   (location)
 *       The location answers only requests that a rewrite, index,
 *       try_files has sent there; a client asking for it directly
 *       gets 404. Named locations are internal by nature.
 */

#ifndef GN_CORE_TRY_FILES_H_INCLUDED
#define GN_CORE_TRY_FILES_H_INCLUDED

#include "gn_config.h"

#include "feature.h"
#include "access_log.h"


struct gn_http_request_s;

/* The "try_files" feature's part of a level (feature.h). */
typedef struct {
    gn_array_t       *files;       /* of gn_log_format_t; NULL: no
                                      try_files */
    gn_log_format_t   uri;         /* the last argument as a URI */
    gn_uint_t         code;        /* ... as =CODE, else 0 */
    gn_str_t          name;        /* ... as @NAME, else len 0 */
    struct gn_loc_conf_s  *named;  /* ... its location (checked) */
    gn_str_t          file;        /* where try_files stands */
    gn_uint_t         line;
    gn_uint_t         internal;
} gn_try_files_conf_t;

#define gn_try_files_conf(lc)                                                 \
    ((gn_try_files_conf_t *) (lc)->conf[GN_FEATURE_TRY_FILES])

/* The registry's "try_files": try_files, internal. */
extern const gn_feature_t  gn_try_files_feature;

/*
 * Child, once r->loc is found (and its access rules passed): r's
 * location's try_files. GN_DECLINED: it has none, or a FILE exists
 * (r->uri is now that file, served by r->loc); GN_AGAIN: an internal
 * redirect was set up (r->uri and query, or r->named), to run from the
 * rules on; a status (>= 100) to answer; GN_ERROR.
 */
gn_int_t gn_try_files_run(struct gn_http_request_s *r);

/* Child: 1 when r may not be in r->loc (`internal`, and nothing
 * internal sent it there), else 0. */
gn_uint_t gn_try_files_refused(struct gn_http_request_s *r);

#endif /* GN_CORE_TRY_FILES_H_INCLUDED */
