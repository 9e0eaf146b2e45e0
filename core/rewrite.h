/*
 * Rules on the URI, as nginx users write them: regex locations
 * (`location ~ RE`, `~* RE`, and `^~ PREFIX` to skip the regexes),
 * `rewrite REGEX REPLACEMENT [last|break|redirect|permanent];` and
 * `return CODE [TEXT|URL];` / `return URL;`, in server and location
 * blocks. Patterns and replacement templates are compiled once, in the
 * master, when the configuration is loaded.
 */

#ifndef GN_CORE_REWRITE_H_INCLUDED
#define GN_CORE_REWRITE_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"
#include "http_request.h"


/* The "rewrite" feature's part of a level (feature.h): its rules, in
 * order; not inherited, each level runs its own. */
typedef struct {
    gn_array_t       *ops;         /* of gn_rw_op_t (rewrite.c), or NULL */
} gn_rewrite_conf_t;

#define gn_rewrite_conf(lc)                                                   \
    ((gn_rewrite_conf_t *) (lc)->conf[GN_FEATURE_REWRITE])

/* The registry's "rewrite": rewrite and return. */
extern const gn_feature_t  gn_rewrite_feature;

/* Child: runs the server's rules, finds the location (nginx order:
 * exact, the longest prefix if it is ^~, the regexes in order, else the
 * longest prefix), runs its rules, and starts over after `last` (at most
 * 10 times). Sets r->loc and possibly r->uri and the query. Returns
 * GN_OK to go on, GN_DONE when the rules produced the response (a
 * redirect or `return`), GN_ERROR on a failure (a 500 to answer). */
gn_int_t gn_rewrite_run(gn_http_request_t *r);

/* Child: r's URI (and query, by rewrite's rules: "new?a=1" puts a=1
 * before the old query, "new?" drops it) from s, the path decoded and
 * normalised as the request's was; r->uri_changed set. GN_OK,
 * GN_DECLINED (not a valid path: *path says what it was), GN_ERROR
 * (memory). */
gn_int_t gn_rewrite_set_uri(gn_http_request_t *r, u_char *s, size_t len,
    gn_str_t *path);

#endif /* GN_CORE_REWRITE_H_INCLUDED */
