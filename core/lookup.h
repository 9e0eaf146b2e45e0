/*
 * Lookups on a loaded configuration (lookup.c): names, locations, MIME
 * types. Below HTTP and TLS: both pick a server by name here.
 */

#ifndef GN_CORE_LOOKUP_H_INCLUDED
#define GN_CORE_LOOKUP_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"


/* The server of ls that a Host or SNI name (no port; a trailing dot is
 * ignored) names, or NULL: an exact server_name first, else the longest
 * matching "*.example.com"; names compare without case. */
gn_srv_conf_t *gn_lookup_server(gn_listen_t *ls, const u_char *name,
    size_t len);

/* The location of srv for a URI path: an exact location for an equal
 * path, else the longest prefix, else the server level. */
gn_loc_conf_t *gn_lookup_location(gn_srv_conf_t *srv, const u_char *path,
    size_t len);

/* The location `location @name` of srv for "@name", or NULL. */
gn_loc_conf_t *gn_lookup_named(gn_srv_conf_t *srv, const gn_str_t *name);

/* The MIME type of a file name (by extension, without case), or the
 * location's default_type. */
const gn_str_t *gn_lookup_mime(gn_loc_conf_t *lc, const u_char *name,
    size_t len);

typedef struct {
    gn_str_t          ext;         /* lower case */
    gn_str_t          type;
} gn_mime_t;

/* The "types" feature's part of a level (feature.h). */
typedef struct {
    gn_array_t       *types;       /* of gn_mime_t, sorted by ext */
    gn_str_t          default_type;
} gn_types_conf_t;

#define gn_types_conf(lc)   ((gn_types_conf_t *) (lc)->conf[GN_FEATURE_TYPES])

/* The registry's "types": types { TYPE EXT ...; } and default_type. */
extern const gn_feature_t  gn_types_feature;

#endif /* GN_CORE_LOOKUP_H_INCLUDED */
