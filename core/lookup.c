/*
 * Lookups on a loaded configuration, below HTTP: the server a name picks
 * among those of a listener (Host and SNI both come here), the location a
 * path picks in a server, and the MIME type of a file name. Pure
 * functions of the configuration (t/unit/test_lookup).
 */

#include "gn_config.h"

#include "lookup.h"
#include "str.h"


/*
 * The server of listener ls that `name` (no port; a trailing dot is
 * ignored) names, or NULL: as nginx, an exact server_name first, else the
 * longest "*.example.com" that matches ("a.example.com", not
 * "example.com"); among equals, the first in the configuration. Names
 * compare without case. Host (HTTP) and SNI (TLS) both come here.
 */
gn_srv_conf_t *
gn_lookup_server(gn_listen_t *ls, const u_char *name, size_t len)
{
    gn_srv_conf_t  **psc, *wild;
    gn_str_t        *names, *n;
    gn_uint_t        i, j;
    size_t           wlen;

    if (len > 0 && name[len - 1] == '.') {
        len--;
    }
    if (len == 0) {
        return NULL;
    }

    psc = ls->servers.elts;
    wild = NULL;
    wlen = 0;

    for (i = 0; i < ls->servers.nelts; i++) {
        if (psc[i]->names == NULL) {
            continue;
        }
        names = psc[i]->names->elts;

        for (j = 0; j < psc[i]->names->nelts; j++) {
            n = &names[j];

            if (n->len > 1 && n->data[0] == '*' && n->data[1] == '.') {
                if (len > n->len - 1 && n->len > wlen
                    && gn_strncasecmp(name + len - (n->len - 1), n->data + 1,
                                      n->len - 1) == 0)
                {
                    wild = psc[i];
                    wlen = n->len;
                }
                continue;
            }

            if (n->len == len && gn_strncasecmp(n->data, name, len) == 0) {
                return psc[i];
            }
        }
    }

    return wild;
}


/* Exact locations first (only for an equal path), then the longest
 * prefix: the locations are sorted so (cycle.c's gn_loc_cmp). */
gn_loc_conf_t *
gn_lookup_location(gn_srv_conf_t *srv, const u_char *path, size_t len)
{
    gn_loc_conf_t  **plc, *lc;
    gn_uint_t        i;

    plc = srv->locations.elts;
    for (i = 0; i < srv->locations.nelts; i++) {
        lc = plc[i];

        if (lc->exact) {
            if (lc->name.len == len && memcmp(lc->name.data, path, len) == 0) {
                return lc;
            }
            continue;
        }

        if (lc->name.len <= len
            && memcmp(lc->name.data, path, lc->name.len) == 0)
        {
            return lc;
        }
    }

    return srv->loc;
}


gn_loc_conf_t *
gn_lookup_named(gn_srv_conf_t *srv, const gn_str_t *name)
{
    gn_loc_conf_t  **plc;
    gn_uint_t        i;

    plc = srv->locations.elts;
    for (i = 0; i < srv->locations.nelts; i++) {
        if (plc[i]->named && gn_str_cmp(&plc[i]->name, name) == 0) {
            return plc[i];
        }
    }

    return NULL;
}


static int
gn_lookup_mime_cmp(const void *a, const void *b)
{
    return gn_str_cmp(&((const gn_mime_t *) a)->ext,
                      &((const gn_mime_t *) b)->ext);
}


const gn_str_t *
gn_lookup_mime(gn_loc_conf_t *lc, const u_char *name, size_t len)
{
    const u_char  *p, *dot;
    u_char         ext[32];
    gn_str_t       key;
    gn_mime_t     *m, probe;
    gn_types_conf_t  *tc;
    size_t         n;

    dot = NULL;
    for (p = name + len; p > name; p--) {
        if (p[-1] == '.') {
            dot = p;
            break;
        }
        if (p[-1] == '/') {
            break;
        }
    }

    tc = gn_types_conf(lc);
    if (dot == NULL || tc->types == NULL) {
        return &tc->default_type;
    }

    n = name + len - dot;
    if (n == 0 || n > sizeof(ext)) {
        return &tc->default_type;
    }

    (void) gn_strlow(ext, dot, n);

    key.data = ext;
    key.len = n;
    probe.ext = key;

    m = bsearch(&probe, tc->types->elts, tc->types->nelts, sizeof(gn_mime_t),
                gn_lookup_mime_cmp);

    return m ? &m->type : &tc->default_type;
}


/* ---- the "types" feature ------------------------------------------------ */

static char *
gn_lookup_type_line(gn_conf_t *cf, void *data)
{
    gn_types_conf_t  *lc = data;
    gn_str_t       *value = cf->args->elts;
    gn_mime_t      *m;
    gn_uint_t       i;

    if (cf->args->nelts < 2) {
        gn_conf_error(cf, "invalid number of arguments in \"types\" line, "
                      "expected a MIME type and one or more extensions");
        return GN_CONF_ERROR;
    }

    for (i = 1; i < cf->args->nelts; i++) {
        m = gn_array_push(lc->types);
        if (m == NULL) {
            return "failed (out of memory)";
        }

        m->type = value[0];
        m->ext = value[i];
        (void) gn_strlow(m->ext.data, m->ext.data, m->ext.len);
    }

    return GN_CONF_OK;
}


static char *
gn_lookup_types(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_types_conf_t  *lc = conf;

    if (lc->types == NULL) {
        lc->types = gn_array_create(cf->pool, 64, sizeof(gn_mime_t));
        if (lc->types == NULL) {
            return "failed (out of memory)";
        }
    }

    if (gn_conf_parse_lines(cf, gn_lookup_type_line, lc) != GN_OK) {
        return GN_CONF_ERROR;
    }

    qsort(lc->types->elts, lc->types->nelts, sizeof(gn_mime_t),
          gn_lookup_mime_cmp);

    return GN_CONF_OK;
}



static const gn_conf_cmd_t  gn_types_commands[] = {

    { gn_string("types"), GN_CONF_ANY | GN_CONF_BLOCK | GN_CONF_NOARGS,
      gn_lookup_types, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("default_type"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF,
      offsetof(gn_types_conf_t, default_type), NULL,
      "application/octet-stream" },

    gn_conf_null_cmd
};


static gn_int_t
gn_lookup_types_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    (void) cf;

    if (prev != NULL && gn_types_conf(lc)->types == NULL) {
        gn_types_conf(lc)->types = gn_types_conf(prev)->types;
    }

    return GN_OK;
}


const gn_feature_t  gn_types_feature = {
    .name = "types", .commands = gn_types_commands,
    .conf_size = sizeof(gn_types_conf_t),
    .merge_conf = gn_lookup_types_merge
};
