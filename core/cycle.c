/*
 * Cycles: the directive tables of the core, merging of inherited settings,
 * and opening / taking over listening sockets and log files.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <grp.h>
#include <pwd.h>

#include "cycle.h"
#include "listen.h"
#include "access_log.h"
#include "errlog.h"
#include "tls.h"
#include "module.h"
#include "rewrite.h"
#include "feature.h"
#include "lookup.h"


gn_cycle_t  *gn_cycle;


static char *gn_cycle_server(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_location(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_children(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_user(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static gn_int_t gn_cycle_lookup_user(gn_main_conf_t *mc, char *err,
    size_t errlen);
static char *gn_cycle_listen(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_server_name(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_root(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_types(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_error_page(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_chroot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);


/*
 * The paths a configuration need not name. Without -p, those of the
 * installed layout, the directories `make install` creates (and the shipped
 * gannet.conf names); with -p PREFIX, a self-contained tree under PREFIX,
 * as nginx lays it out (what the tests and a build-tree run use).
 */
static const gn_cycle_paths_t  gn_cycle_installed_paths = {
    GN_LOCALSTATEDIR "/run/gannet.pid",
    GN_LOCALSTATEDIR "/log/gannet/error.log",
    GN_LOCALSTATEDIR "/log/gannet/access.log",
    GN_DATADIR "/gannet/html"
};

static const gn_cycle_paths_t  gn_cycle_tree_paths = {
    "logs/gannet.pid", "logs/error.log", "logs/access.log", "html"
};


const gn_cycle_paths_t *
gn_cycle_default_paths(gn_uint_t with_prefix)
{
    return with_prefix ? &gn_cycle_tree_paths : &gn_cycle_installed_paths;
}


static void
gn_cycle_default_path(gn_str_t *s, const char *path)
{
    s->len = strlen(path);
    s->data = (u_char *) path;
}



const gn_conf_cmd_t  gn_cycle_commands[] = {

    { gn_string("children"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_cycle_children, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("user"), GN_CONF_MAIN | GN_CONF_TAKE12,
      gn_cycle_user, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("pid"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_path_slot, GN_CONF_MAIN_CONF, gn_main_offset(pid), NULL,
      NULL },
    { gn_string("chroot"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_cycle_chroot, GN_CONF_MAIN_CONF, gn_main_offset(chroot), NULL, NULL },
    { gn_string("error_log"), GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_TAKE12,
      gn_errlog_directive, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("shutdown_timeout"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_MAIN_CONF,
      gn_main_offset(shutdown_timeout), NULL, NULL },
    { gn_string("max_connections"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_MAIN_CONF,
      gn_main_offset(max_connections), &gn_conf_num_min_1, NULL },
    { gn_string("rlimit_nofile"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_MAIN_CONF,
      gn_main_offset(rlimit_nofile), &gn_conf_num_min_1, NULL },
    { gn_string("log_format"), GN_CONF_MAIN | GN_CONF_2MORE,
      gn_access_log_format_directive, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("server"), GN_CONF_MAIN | GN_CONF_BLOCK | GN_CONF_NOARGS,
      gn_cycle_server, GN_CONF_MAIN_CONF, 0, NULL, NULL },

    { gn_string("listen"), GN_CONF_SRV | GN_CONF_1MORE,
      gn_cycle_listen, GN_CONF_SRV_CONF, 0, NULL, NULL },
    { gn_string("server_name"), GN_CONF_SRV | GN_CONF_1MORE,
      gn_cycle_server_name, GN_CONF_SRV_CONF, 0, NULL, NULL },
    { gn_string("location"), GN_CONF_SRV | GN_CONF_BLOCK | GN_CONF_TAKE12,
      gn_cycle_location, GN_CONF_SRV_CONF, 0, NULL, NULL },

    { gn_string("root"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_cycle_root, GN_CONF_LOC_CONF, gn_loc_offset(root), NULL, NULL },
    { gn_string("index"), GN_CONF_ANY | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_LOC_CONF, gn_loc_offset(index),
      NULL, NULL },
    { gn_string("types"), GN_CONF_ANY | GN_CONF_BLOCK | GN_CONF_NOARGS,
      gn_cycle_types, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("default_type"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF, gn_loc_offset(default_type),
      NULL, "application/octet-stream" },
    { gn_string("access_log"), GN_CONF_ANY | GN_CONF_1MORE,
      gn_access_log_directive, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("server_tokens"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_loc_offset(server_tokens),
      NULL, "off" },
    { gn_string("error_page"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_2MORE,
      gn_cycle_error_page, GN_CONF_LOC_CONF, 0, NULL, NULL },


    gn_conf_null_cmd
};



static void
gn_loc_conf_init(gn_loc_conf_t *lc)
{
    const gn_feature_t  *f;

    memset(lc, 0, sizeof(gn_loc_conf_t));

    for (f = gn_features; f->name != NULL; f++) {
        gn_conf_init_slots(f->commands, GN_CONF_LOC_CONF, lc);
    }

    /* (not plain slots) */
    lc->access_log_off = GN_CONF_UNSET;
    lc->tls_protocols = GN_CONF_UNSET_UINT;
}


/* A new server or location level: each feature's part of it. */
static gn_int_t
gn_cycle_init_loc(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    const gn_feature_t  *f;

    for (f = gn_features; f->name != NULL; f++) {
        if (f->init_loc != NULL && f->init_loc(cf, lc) != GN_OK) {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


static gn_loc_conf_t *
gn_loc_conf_create(gn_pool_t *pool)
{
    gn_loc_conf_t  *lc;

    lc = gn_palloc(pool, sizeof(gn_loc_conf_t));
    if (lc != NULL) {
        gn_loc_conf_init(lc);
    }

    return lc;
}


/*
 * Inherits from `prev` what `lc` left unset. The top level (prev == NULL)
 * merges with an all-unset level, so every default below is written once,
 * in the merge call that applies it.
 */
static gn_int_t
gn_loc_conf_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    static gn_str_t      index_html = gn_string("index.html");
    const gn_feature_t  *f;
    gn_loc_conf_t        top;
    gn_str_t             root, *s;

    /* every feature's plain slots (defaults from their rows), then each
     * feature's own merge */
    for (f = gn_features; f->name != NULL; f++) {
        if (gn_conf_merge_slots(cf, f->commands, GN_CONF_LOC_CONF, lc, prev)
            != GN_OK)
        {
            return GN_ERROR;
        }
    }
    for (f = gn_features; f->name != NULL; f++) {
        if (f->merge_loc != NULL && f->merge_loc(cf, lc, prev) != GN_OK) {
            return GN_ERROR;
        }
    }

    if (prev == NULL) {
        gn_loc_conf_init(&top);
        if (lc->root.data == NULL) {
            gn_cycle_default_path(&root,
                                  ((gn_cycle_t *) cf->data)->paths->root);
            if (gn_conf_full_name(cf, &root, 0) != GN_OK) {
                return GN_ERROR;
            }
            top.root = root;
        }
        prev = &top;
    }

    if (lc->root.data == NULL) {
        lc->root = prev->root;
        lc->root_file = prev->root_file;
        lc->root_line = prev->root_line;
    }

    if (lc->index == NULL) {
        lc->index = prev->index;
        if (lc->index == NULL) {
            lc->index = gn_array_create(cf->pool, 1, sizeof(gn_str_t));
            if (lc->index == NULL) {
                return GN_ERROR;
            }
            s = gn_array_push(lc->index);
            *s = index_html;
        }
    }

    if (lc->types == NULL) {
        lc->types = prev->types;
    }

    if (lc->access_logs == NULL && lc->access_log_off == GN_CONF_UNSET) {
        lc->access_logs = prev->access_logs;
        lc->access_log_off = prev->access_log_off;
    }

    if (lc->error_pages == NULL) {
        lc->error_pages = prev->error_pages;
    }


    return GN_OK;
}


static char *
gn_cycle_children(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_main_conf_t  *mc = conf;
    gn_str_t        *value = cf->args->elts;

    if (mc->children != GN_CONF_UNSET) {
        return "is duplicate";
    }

    if (gn_str_eq(&value[1], "auto")) {
        mc->children = 0;
        return GN_CONF_OK;
    }

    mc->children = gn_atoi(value[1].data, value[1].len);
    if (mc->children <= 0 || mc->children > GN_MAX_CHILDREN) {
        gn_conf_error(cf, "invalid value \"%.*s\" in \"children\" directive, "
                      "it must be \"auto\" or a number from 1 to %d",
                      GN_STR_ARG(&value[1]), GN_MAX_CHILDREN);
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static char *
gn_cycle_user(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_main_conf_t  *mc = conf;
    gn_str_t        *value = cf->args->elts;
    char             err[300];

    if (mc->user.data != NULL) {
        return "is duplicate";
    }

    mc->user = value[1];
    if (cf->args->nelts == 3) {
        mc->group = value[2];
    }

    /* looked up here, for the error's file and line; only root uses it */
    if (geteuid() == 0 && gn_cycle_lookup_user(mc, err, sizeof(err)) != GN_OK)
    {
        gn_conf_error(cf, "%s in \"user\" directive", err);
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static char *
gn_cycle_server(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_main_conf_t   *mc = conf;
    gn_srv_conf_t    *sc, **psc;
    gn_loc_conf_t    *lc;
    gn_int_t          rc;
    void             *saved_srv, *saved_loc;

    sc = gn_pcalloc(cf->pool, sizeof(gn_srv_conf_t));
    lc = gn_loc_conf_create(cf->pool);
    if (sc == NULL || lc == NULL
        || gn_array_init(&sc->listens, cf->pool, 2, sizeof(gn_listen_opt_t))
           != GN_OK
        || gn_array_init(&sc->locations, cf->pool, 4,
                         sizeof(gn_loc_conf_t *)) != GN_OK
        || gn_array_init(&sc->regex_locations, cf->pool, 2,
                         sizeof(gn_loc_conf_t *)) != GN_OK)
    {
        return "failed (out of memory)";
    }

    if (gn_cycle_init_loc(cf, lc) != GN_OK) {
        return "failed (out of memory)";
    }

    sc->loc = lc;
    lc->srv = sc;
    sc->file = cf->file->name;
    sc->line = cf->file->line;

    psc = gn_array_push(&mc->servers);
    if (psc == NULL) {
        return "failed (out of memory)";
    }
    *psc = sc;

    saved_srv = cf->conf[GN_CONF_SRV_CONF];
    saved_loc = cf->conf[GN_CONF_LOC_CONF];
    cf->conf[GN_CONF_SRV_CONF] = sc;
    cf->conf[GN_CONF_LOC_CONF] = lc;
    cf->ctx = GN_CONF_SRV;

    rc = gn_conf_parse(cf, NULL);

    cf->ctx = GN_CONF_MAIN;
    cf->conf[GN_CONF_SRV_CONF] = saved_srv;
    cf->conf[GN_CONF_LOC_CONF] = saved_loc;

    return rc == GN_OK ? GN_CONF_OK : GN_CONF_ERROR;
}


static char *
gn_cycle_location(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_srv_conf_t   *sc = conf;
    gn_loc_conf_t   *lc, **plc;
    gn_str_t        *value = cf->args->elts, *name;
    gn_int_t         rc;
    gn_uint_t        i;
    void            *saved_loc;

    lc = gn_loc_conf_create(cf->pool);
    if (lc == NULL || gn_cycle_init_loc(cf, lc) != GN_OK) {
        return "failed (out of memory)";
    }

    lc->srv = sc;
    name = &value[1];

    if (cf->args->nelts == 3) {
        name = &value[2];

        if (gn_str_eq(&value[1], "=")) {
            lc->exact = 1;

        } else if (gn_str_eq(&value[1], "^~")) {
            lc->noregex = 1;

        } else if (gn_str_eq(&value[1], "~") || gn_str_eq(&value[1], "~*")) {
            if (gn_rewrite_location_regex(cf, lc, name,
                                          value[1].len == 2) != GN_OK)
            {
                return GN_CONF_ERROR;
            }

        } else {
            gn_conf_error(cf, "invalid location modifier \"%.*s\", expected "
                          "\"=\", \"~\", \"~*\" or \"^~\"",
                          GN_STR_ARG(&value[1]));
            return GN_CONF_ERROR;
        }
    }

    if (lc->regex == NULL && (name->len == 0 || name->data[0] != '/')) {
        gn_conf_error(cf, "invalid location \"%.*s\", it must start with "
                      "\"/\"", GN_STR_ARG(name));
        return GN_CONF_ERROR;
    }

    lc->name = *name;

    plc = sc->locations.elts;
    for (i = 0; lc->regex == NULL && i < sc->locations.nelts; i++) {
        if (plc[i]->exact == lc->exact
            && gn_str_cmp(&plc[i]->name, &lc->name) == 0)
        {
            gn_conf_error(cf, "duplicate location \"%.*s\"",
                          GN_STR_ARG(&lc->name));
            return GN_CONF_ERROR;
        }
    }

    plc = gn_array_push(lc->regex ? &sc->regex_locations : &sc->locations);
    if (plc == NULL) {
        return "failed (out of memory)";
    }
    *plc = lc;

    saved_loc = cf->conf[GN_CONF_LOC_CONF];
    cf->conf[GN_CONF_LOC_CONF] = lc;
    cf->ctx = GN_CONF_LOC;

    rc = gn_conf_parse(cf, NULL);

    cf->ctx = GN_CONF_SRV;
    cf->conf[GN_CONF_LOC_CONF] = saved_loc;

    return rc == GN_OK ? GN_CONF_OK : GN_CONF_ERROR;
}


static char *
gn_cycle_listen(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_srv_conf_t    *sc = conf;
    gn_listen_opt_t  *lo;
    gn_str_t         *value = cf->args->elts, v;
    gn_uint_t         i;
    char              err[256];

    lo = gn_array_push(&sc->listens);
    if (lo == NULL) {
        return "failed (out of memory)";
    }

    memset(lo, 0, sizeof(gn_listen_opt_t));
    lo->backlog = 511;
    lo->deferred = -1;

    if (gn_listen_parse_addr(&value[1], lo, err, sizeof(err)) != GN_OK) {
        gn_conf_error(cf, "%s in \"listen\" directive", err);
        return GN_CONF_ERROR;
    }

    for (i = 2; i < cf->args->nelts; i++) {

        if (gn_str_eq(&value[i], "default_server")) {
            lo->default_server = 1;
            continue;
        }

        if (gn_str_eq(&value[i], "tls")) {
            lo->tls = 1;
            continue;
        }

        if (gn_str_eq(&value[i], "deferred")
            || gn_str_eq(&value[i], "deferred=on"))
        {
            lo->deferred = 1;
            continue;
        }

        if (gn_str_eq(&value[i], "deferred=off")) {
            lo->deferred = 0;
            continue;
        }

        if (value[i].len > 8 && memcmp(value[i].data, "backlog=", 8) == 0) {
            v.data = value[i].data + 8;
            v.len = value[i].len - 8;
            lo->backlog = gn_atoi(v.data, v.len);
            if (lo->backlog <= 0 || lo->backlog > 65535) {
                gn_conf_error(cf, "invalid backlog \"%.*s\" in \"listen\" "
                              "directive", GN_STR_ARG(&v));
                return GN_CONF_ERROR;
            }
            continue;
        }

        gn_conf_error(cf, "invalid parameter \"%.*s\" in \"listen\" "
                      "directive, expected \"tls\", \"default_server\", "
                      "\"deferred\", \"deferred=off\" or \"backlog=N\"",
                      GN_STR_ARG(&value[i]));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static char *
gn_cycle_server_name(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_srv_conf_t  *sc = conf;
    gn_str_t       *value = cf->args->elts, *name;
    gn_uint_t       i;

    if (sc->names == NULL) {
        sc->names = gn_array_create(cf->pool, 4, sizeof(gn_str_t));
        if (sc->names == NULL) {
            return "failed (out of memory)";
        }
    }

    for (i = 1; i < cf->args->nelts; i++) {
        /* nginx's regex names: refused rather than kept as a literal
         * that no Host can match */
        if (value[i].len > 0 && value[i].data[0] == '~') {
            gn_conf_error(cf, "regular expression server names (\"%.*s\") "
                          "are not supported; use exact names and "
                          "\"*.example.com\" wildcards",
                          GN_STR_ARG(&value[i]));
            return GN_CONF_ERROR;
        }

        name = gn_array_push(sc->names);
        if (name == NULL) {
            return "failed (out of memory)";
        }

        *name = value[i];
        (void) gn_strlow(name->data, name->data, name->len);
    }

    return GN_CONF_OK;
}


static char *
gn_cycle_root(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_loc_conf_t  *lc = conf;
    gn_str_t       *value = cf->args->elts;

    if (lc->root.data != NULL) {
        return "is duplicate";
    }

    lc->root = value[1];
    while (lc->root.len > 1 && lc->root.data[lc->root.len - 1] == '/') {
        lc->root.len--;
    }

    if (gn_conf_full_name(cf, &lc->root, 0) != GN_OK) {
        return "failed (out of memory)";
    }

    lc->root_file = cf->file->name;
    lc->root_line = cf->file->line;

    return GN_CONF_OK;
}


static char *
gn_cycle_chroot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_main_conf_t  *mc = conf;
    gn_str_t        *value = cf->args->elts;
    struct stat      st;

    if (mc->chroot.data != NULL) {
        return "is duplicate";
    }

    mc->chroot = value[1];
    while (mc->chroot.len > 1
           && mc->chroot.data[mc->chroot.len - 1] == '/')
    {
        mc->chroot.len--;
    }

    if (gn_conf_full_name(cf, &mc->chroot, 0) != GN_OK) {
        return "failed (out of memory)";
    }

    if (stat((char *) mc->chroot.data, &st) == -1 || !S_ISDIR(st.st_mode)) {
        gn_conf_error(cf, "\"chroot\" directory \"%.*s\" does not exist "
                      "or is not a directory", GN_STR_ARG(&mc->chroot));
        return GN_CONF_ERROR;
    }

    if (mc->chroot.len == 1) {
        gn_conf_error(cf, "\"chroot /\" changes nothing; remove it");
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static char *
gn_cycle_type_line(gn_conf_t *cf, void *data)
{
    gn_loc_conf_t  *lc = data;
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
gn_cycle_types(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_loc_conf_t      *lc = conf;
    gn_int_t            rc;
    gn_conf_handler_pt  saved;
    void               *saved_data;

    if (lc->types == NULL) {
        lc->types = gn_array_create(cf->pool, 64, sizeof(gn_mime_t));
        if (lc->types == NULL) {
            return "failed (out of memory)";
        }
    }

    saved = cf->handler;
    saved_data = cf->handler_data;
    cf->handler = gn_cycle_type_line;
    cf->handler_data = lc;

    rc = gn_conf_parse(cf, NULL);

    cf->handler = saved;
    cf->handler_data = saved_data;

    if (rc != GN_OK) {
        return GN_CONF_ERROR;
    }

    qsort(lc->types->elts, lc->types->nelts, sizeof(gn_mime_t),
          gn_lookup_mime_cmp);

    return GN_CONF_OK;
}


gn_open_file_t *
gn_cycle_open_file_add(gn_conf_t *cf, gn_str_t *name)
{
    gn_cycle_t       *cycle = cf->data;
    gn_open_file_t  **files, *file;
    gn_uint_t         i;

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (gn_str_cmp(&files[i]->name, name) == 0) {
            return files[i];
        }
    }

    file = gn_pcalloc(cf->pool, sizeof(gn_open_file_t));
    files = gn_array_push(&cycle->open_files);
    if (file == NULL || files == NULL) {
        return NULL;
    }

    file->name = *name;
    file->fd = -1;
    *files = file;

    return file;
}


static char *
gn_cycle_error_page(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_loc_conf_t    *lc = conf;
    gn_str_t         *value = cf->args->elts, *uri;
    gn_error_page_t  *ep;
    gn_int_t          status;
    gn_uint_t         i;

    uri = &value[cf->args->nelts - 1];
    if (uri->len == 0 || uri->data[0] != '/') {
        gn_conf_error(cf, "invalid URI \"%.*s\" in \"error_page\" directive, "
                      "it must start with \"/\"", GN_STR_ARG(uri));
        return GN_CONF_ERROR;
    }

    if (lc->error_pages == NULL) {
        lc->error_pages = gn_array_create(cf->pool, 4,
                                          sizeof(gn_error_page_t));
        if (lc->error_pages == NULL) {
            return "failed (out of memory)";
        }
    }

    for (i = 1; i < cf->args->nelts - 1; i++) {
        status = gn_atoi(value[i].data, value[i].len);
        if (status < 400 || status > 599) {
            gn_conf_error(cf, "invalid status \"%.*s\" in \"error_page\" "
                          "directive, it must be from 400 to 599",
                          GN_STR_ARG(&value[i]));
            return GN_CONF_ERROR;
        }

        ep = gn_array_push(lc->error_pages);
        if (ep == NULL) {
            return "failed (out of memory)";
        }
        ep->status = (gn_uint_t) status;
        ep->uri = *uri;
    }

    return GN_CONF_OK;
}


/* Exact locations first, then prefixes, longest first: lookup takes the
 * first that matches. */
static int
gn_loc_cmp(const void *a, const void *b)
{
    const gn_loc_conf_t  *x = *(gn_loc_conf_t * const *) a;
    const gn_loc_conf_t  *y = *(gn_loc_conf_t * const *) b;

    if (x->exact != y->exact) {
        return x->exact ? -1 : 1;
    }

    if (x->name.len != y->name.len) {
        return x->name.len > y->name.len ? -1 : 1;
    }

    return gn_str_cmp(&x->name, &y->name);
}


static gn_int_t
gn_cycle_merge_servers(gn_conf_t *cf, gn_cycle_t *cycle)
{
    gn_srv_conf_t    **psc, *sc;
    gn_loc_conf_t    **plc;
    gn_listen_opt_t   *lo;
    gn_uint_t          i, j;
    gn_str_t           any = gn_string("80");
    char               err[256];

    psc = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        sc = psc[i];

        if (gn_loc_conf_merge(cf, sc->loc, cycle->main_loc) != GN_OK) {
            return GN_ERROR;
        }

        if (sc->listens.nelts == 0) {
            lo = gn_array_push(&sc->listens);
            if (lo == NULL) {
                return GN_ERROR;
            }
            memset(lo, 0, sizeof(gn_listen_opt_t));
            lo->backlog = 511;
            lo->deferred = -1;
            (void) gn_listen_parse_addr(&any, lo, err, sizeof(err));
        }

        plc = sc->locations.elts;
        for (j = 0; j < sc->locations.nelts; j++) {
            if (gn_loc_conf_merge(cf, plc[j], sc->loc) != GN_OK) {
                return GN_ERROR;
            }
        }

        plc = sc->regex_locations.elts;
        for (j = 0; j < sc->regex_locations.nelts; j++) {
            if (gn_loc_conf_merge(cf, plc[j], sc->loc) != GN_OK) {
                return GN_ERROR;
            }
        }

        qsort(sc->locations.elts, sc->locations.nelts,
              sizeof(gn_loc_conf_t *), gn_loc_cmp);
    }

    return GN_OK;
}


/* Is `path` (absolute) `dir` or below it, with no ".." to climb out? */
static gn_uint_t
gn_cycle_path_inside(const gn_str_t *path, const gn_str_t *dir)
{
    size_t  i;

    if (path->len < dir->len
        || memcmp(path->data, dir->data, dir->len) != 0
        || (path->len > dir->len && path->data[dir->len] != '/'))
    {
        return 0;
    }

    for (i = dir->len; i + 2 < path->len; i++) {
        if (path->data[i] == '/' && path->data[i + 1] == '.'
            && path->data[i + 2] == '.'
            && (i + 3 == path->len || path->data[i + 3] == '/'))
        {
            return 0;
        }
    }

    return 1;
}


static gn_int_t
gn_cycle_check_root(gn_cycle_t *cycle, gn_srv_conf_t *sc, gn_loc_conf_t *lc,
    char *err, size_t errlen)
{
    gn_str_t          *dir = &cycle->main->chroot;
    gn_mod_handler_t  *h;
    gn_uint_t          i;

    /* mod_cgi's launcher is forked by the master, outside the chroot,
     * and would get paths that only mean something inside it */
    for (i = 0; lc->handlers != NULL && i < lc->handlers->nelts; i++) {
        h = &((gn_mod_handler_t *) lc->handlers->elts)[i];
        if (strcmp(h->mod->desc->name, "cgi") == 0) {
            snprintf(err, errlen, "\"handler cgi\" cannot be used with "
                     "\"chroot\" (the CGI launcher runs outside the "
                     "chroot) in the server in %.*s:%u",
                     GN_STR_ARG(&sc->file), (unsigned) sc->line);
            return GN_ERROR;
        }
    }

    if (gn_cycle_path_inside(&lc->root, dir)) {
        return GN_OK;
    }

    if (lc->root_file.data != NULL) {
        snprintf(err, errlen, "root \"%.*s\" is outside the chroot "
                 "directory \"%.*s\" in %.*s:%u", GN_STR_ARG(&lc->root),
                 GN_STR_ARG(dir), GN_STR_ARG(&lc->root_file),
                 (unsigned) lc->root_line);
    } else {
        snprintf(err, errlen, "root \"%.*s\" (the default: no \"root\" "
                 "is set) is outside the chroot directory \"%.*s\" for "
                 "the server in %.*s:%u", GN_STR_ARG(&lc->root),
                 GN_STR_ARG(dir), GN_STR_ARG(&sc->file), (unsigned) sc->line);
    }

    return GN_ERROR;
}


/* With `chroot`, every document root a child serves from must lie in
 * the chroot directory: the child sees nothing else. */
static gn_int_t
gn_cycle_check_chroot(gn_cycle_t *cycle, char *err, size_t errlen)
{
    gn_srv_conf_t  **psc;
    gn_loc_conf_t  **plc;
    gn_uint_t        i, j;

    if (cycle->main->chroot.len == 0) {
        return GN_OK;
    }

    psc = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        if (gn_cycle_check_root(cycle, psc[i], psc[i]->loc, err, errlen)
            != GN_OK)
        {
            return GN_ERROR;
        }

        plc = psc[i]->locations.elts;
        for (j = 0; j < psc[i]->locations.nelts; j++) {
            if (gn_cycle_check_root(cycle, psc[i], plc[j], err, errlen)
                != GN_OK)
            {
                return GN_ERROR;
            }
        }

        plc = psc[i]->regex_locations.elts;
        for (j = 0; j < psc[i]->regex_locations.nelts; j++) {
            if (gn_cycle_check_root(cycle, psc[i], plc[j], err, errlen)
                != GN_OK)
            {
                return GN_ERROR;
            }
        }
    }

    return GN_OK;
}


static void
gn_cycle_chroot_root(gn_loc_conf_t *lc, const gn_str_t *dir)
{
    if (!gn_cycle_path_inside(&lc->root, dir)) {
        return;                       /* never served from: not checked */
    }

    if (lc->root.len == dir->len) {
        gn_str_set(&lc->root, "/");
        return;
    }

    lc->root.data += dir->len;
    lc->root.len -= dir->len;
}


void
gn_cycle_chroot_paths(gn_cycle_t *cycle)
{
    gn_str_t        *dir = &cycle->main->chroot;
    gn_srv_conf_t  **psc;
    gn_loc_conf_t  **plc;
    gn_uint_t        i, j;

    gn_cycle_chroot_root(cycle->main_loc, dir);

    psc = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        gn_cycle_chroot_root(psc[i]->loc, dir);

        plc = psc[i]->locations.elts;
        for (j = 0; j < psc[i]->locations.nelts; j++) {
            gn_cycle_chroot_root(plc[j], dir);
        }

        plc = psc[i]->regex_locations.elts;
        for (j = 0; j < psc[i]->regex_locations.nelts; j++) {
            gn_cycle_chroot_root(plc[j], dir);
        }
    }
}


static gn_int_t
gn_cycle_resolve_user(gn_cycle_t *cycle, char *err, size_t errlen)
{
    gn_main_conf_t  *mc = cycle->main;

    if (mc->user.data != NULL || geteuid() != 0) {
        return GN_OK;    /* looked up by the directive; only root uses it */
    }

    gn_str_set(&mc->user, "nobody");

    if (gn_cycle_lookup_user(mc, err, errlen) != GN_OK) {
        snprintf(err + strlen(err), errlen - strlen(err),
                 " (\"nobody\" is the default of \"user\")");
        return GN_ERROR;
    }

    return GN_OK;
}


/* mc->user and mc->group to ids. */
static gn_int_t
gn_cycle_lookup_user(gn_main_conf_t *mc, char *err, size_t errlen)
{
    struct passwd   *pw;
    struct group    *gr;
    char             name[256];

    snprintf(name, sizeof(name), "%.*s", GN_STR_ARG(&mc->user));
    pw = getpwnam(name);
    if (pw == NULL) {
        snprintf(err, errlen, "getpwnam(\"%s\") failed: no such user", name);
        return GN_ERROR;
    }

    mc->uid = pw->pw_uid;
    mc->gid = pw->pw_gid;

    if (mc->group.data != NULL) {
        snprintf(name, sizeof(name), "%.*s", GN_STR_ARG(&mc->group));
        gr = getgrnam(name);
        if (gr == NULL) {
            snprintf(err, errlen, "getgrnam(\"%s\") failed: no such group",
                     name);
            return GN_ERROR;
        }
        mc->gid = gr->gr_gid;
    }

    return GN_OK;
}


static gn_int_t
gn_cycle_init_conf(gn_cycle_t *cycle, gn_conf_t *cf, const char *conf_file,
    const char *prefix)
{
    gn_main_conf_t      *mc;
    gn_str_t             name;
    size_t               len;
    const char          *slash;
    const gn_feature_t  *f;
    gn_uint_t            n;

    mc = gn_pcalloc(cycle->pool, sizeof(gn_main_conf_t));
    cycle->main_loc = gn_loc_conf_create(cycle->pool);
    if (mc == NULL || cycle->main_loc == NULL
        || gn_array_init(&mc->servers, cycle->pool, 4,
                         sizeof(gn_srv_conf_t *)) != GN_OK
        || gn_array_init(&mc->log_formats, cycle->pool, 2,
                         sizeof(gn_log_format_t *)) != GN_OK
        || gn_array_init(&cycle->open_files, cycle->pool, 4,
                         sizeof(gn_open_file_t *)) != GN_OK
        || gn_array_init(&cycle->listening, cycle->pool, 4,
                         sizeof(gn_listen_t)) != GN_OK
        || gn_conf_init(cf, cycle->pool) != GN_OK)
    {
        return GN_ERROR;
    }

    mc->children = GN_CONF_UNSET;
    mc->tls_session_cache = GN_CONF_UNSET;
    mc->tls_session_timeout = GN_CONF_UNSET_MSEC;
    mc->shutdown_timeout = GN_CONF_UNSET_MSEC;
    mc->max_connections = GN_CONF_UNSET;
    mc->rlimit_nofile = GN_CONF_UNSET;
    mc->error_log_level = GN_LOG_NOTICE;
    cycle->main = mc;

    /* prefix, with a trailing slash; NULL: the installed one */
    cycle->paths = gn_cycle_default_paths(prefix != NULL);
    if (prefix == NULL) {
        prefix = GN_PREFIX;
    }
    len = strlen(prefix);
    cycle->prefix.data = gn_pnalloc(cycle->pool, len + 2);
    if (cycle->prefix.data == NULL) {
        return GN_ERROR;
    }
    memcpy(cycle->prefix.data, prefix, len);
    if (len == 0 || prefix[len - 1] != '/') {
        cycle->prefix.data[len++] = '/';
    }
    cycle->prefix.data[len] = '\0';
    cycle->prefix.len = len;

    cf->prefix = cycle->prefix;
    cf->ctx = GN_CONF_MAIN;
    cf->conf[GN_CONF_MAIN_CONF] = mc;
    cf->conf[GN_CONF_SRV_CONF] = NULL;
    cf->conf[GN_CONF_LOC_CONF] = cycle->main_loc;
    cf->data = cycle;

    /* the features' directives, and room for those they add later (each
     * loaded module's); NULL-terminated */
    for (n = 1, f = gn_features; f->name != NULL; f++) {
        n += 1 + f->extra_tables;
    }
    cycle->tables = gn_pcalloc(cycle->pool, n * sizeof(gn_conf_cmd_t *));
    if (cycle->tables == NULL
        || gn_array_init(&cycle->modules, cycle->pool, 4,
                         sizeof(void *)) != GN_OK)
    {
        return GN_ERROR;
    }
    for (f = gn_features; f->name != NULL; f++) {
        cycle->tables[cycle->ntables++] = f->commands;
    }
    cf->tables = cycle->tables;

    /* the configuration file itself, absolute */
    name.data = (u_char *) conf_file;
    name.len = strlen(conf_file);
    if (conf_file[0] != '/') {
        char  cwd[PATH_MAX];

        if (getcwd(cwd, sizeof(cwd)) == NULL) {
            return GN_ERROR;
        }
        cycle->conf_file.len = strlen(cwd) + 1 + name.len;
        cycle->conf_file.data = gn_pnalloc(cycle->pool,
                                           cycle->conf_file.len + 1);
        if (cycle->conf_file.data == NULL) {
            return GN_ERROR;
        }
        snprintf((char *) cycle->conf_file.data, cycle->conf_file.len + 1,
                 "%s/%s", cwd, conf_file);
    } else if (gn_pstrdup(cycle->pool, &name, &cycle->conf_file) == NULL) {
        return GN_ERROR;
    }

    slash = strrchr((char *) cycle->conf_file.data, '/');
    cf->conf_prefix.data = cycle->conf_file.data;
    cf->conf_prefix.len = (u_char *) slash + 1 - cycle->conf_file.data;

    return GN_OK;
}


static void
gn_cycle_scan_pid(gn_conf_t *cf, gn_uint_t depth)
{
    gn_str_t  *v = cf->args->elts;

    if (depth == 0 && cf->args->nelts == 2 && gn_str_eq(&v[0], "pid")) {
        (void) gn_pstrdup(cf->pool, &v[1], cf->scan_data);  /* the last */
    }
}


gn_int_t
gn_cycle_find_pid(const char *conf_file, const char *prefix, char *out,
    size_t size)
{
    gn_cycle_t  *cycle;
    gn_conf_t    cf;
    gn_str_t     pid;
    gn_str_t     found = gn_null_string;
    gn_int_t     rc;

    memset(&cf, 0, sizeof(cf));
    cf.pool = gn_pool_create(16384);
    if (cf.pool == NULL) {
        return GN_ERROR;
    }

    rc = GN_ERROR;
    cycle = gn_pcalloc(cf.pool, sizeof(gn_cycle_t));
    if (cycle != NULL) {
        cycle->pool = cf.pool;
        if (gn_cycle_init_conf(cycle, &cf, conf_file, prefix) == GN_OK) {
            cf.scan = gn_cycle_scan_pid;
            cf.scan_data = &found;
            (void) gn_conf_parse(&cf, (char *) cycle->conf_file.data);
            gn_cycle_default_path(&pid, cycle->paths->pid);
            if (found.len > 0) {
                pid = found;
            }
            if (gn_conf_full_name(&cf, &pid, 0) == GN_OK) {
                snprintf(out, size, "%.*s", GN_STR_ARG(&pid));
                rc = found.len > 0 ? GN_OK : GN_DECLINED;
            }
        }
    }

    gn_pool_destroy(cf.pool);
    return rc;
}


/*
 * As nginx: without an access_log at the top level, the default one -- but
 * only when some server uses it: a configuration whose every server says
 * `access_log off` opens no default log file.
 */
static gn_int_t
gn_cycle_default_access_log(gn_conf_t *cf, gn_cycle_t *cycle)
{
    char              dflt[PATH_MAX + 64];
    int               n;
    gn_uint_t         i, used;
    gn_srv_conf_t   **srv;

    if (cycle->main_loc->access_logs != NULL
        || cycle->main_loc->access_log_off != GN_CONF_UNSET)
    {
        return GN_OK;
    }

    used = 0;
    srv = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        if (srv[i]->loc->access_logs == NULL
            && srv[i]->loc->access_log_off == GN_CONF_UNSET)
        {
            used = 1;
        }
    }
    if (!used) {
        return GN_OK;
    }

    n = snprintf(dflt, sizeof(dflt), "access_log \"%s\" combined;",
                 cycle->paths->access_log);
    if (n < 0 || (size_t) n >= sizeof(dflt)) {
        return GN_ERROR;
    }
    return gn_conf_parse_string(cf, "(default)", (const u_char *) dflt,
                                (size_t) n);
}


gn_cycle_t *
gn_cycle_create(const char *conf_file, const char *prefix, char *err,
    size_t errlen)
{
    gn_cycle_t      *cycle;
    gn_conf_t        cf;
    gn_main_conf_t  *mc;
    gn_str_t         pid, elog;
    long             ncpu;

    cycle = NULL;
    memset(&cf, 0, sizeof(cf));

    cf.pool = gn_pool_create(16384);
    cf.temp_pool = gn_pool_create(16384);
    if (cf.pool == NULL || cf.temp_pool == NULL) {
        snprintf(err, errlen, "out of memory");
        goto failed;
    }

    cycle = gn_pcalloc(cf.pool, sizeof(gn_cycle_t));
    if (cycle == NULL) {
        snprintf(err, errlen, "out of memory");
        goto failed;
    }
    cycle->pool = cf.pool;
    cycle->error_log_fd = -1;

    if (gn_cycle_init_conf(cycle, &cf, conf_file, prefix) != GN_OK) {
        snprintf(err, errlen, "out of memory or bad path \"%s\"", conf_file);
        goto failed;
    }

    if (gn_conf_parse(&cf, (char *) cycle->conf_file.data) != GN_OK) {
        snprintf(err, errlen, "%s", cf.err);
        goto failed;
    }

    mc = cycle->main;

    if (gn_cycle_default_access_log(&cf, cycle) != GN_OK) {
        snprintf(err, errlen, "%s", cf.err);
        goto failed;
    }

    if (mc->servers.nelts == 0) {
        snprintf(err, errlen, "no \"server\" block in %s",
                 (char *) cycle->conf_file.data);
        goto failed;
    }

    if (gn_loc_conf_merge(&cf, cycle->main_loc, NULL) != GN_OK
        || gn_cycle_merge_servers(&cf, cycle) != GN_OK)
    {
        snprintf(err, errlen, "%s", cf.err[0] ? cf.err : "out of memory");
        goto failed;
    }

    gn_cycle_default_path(&pid, cycle->paths->pid);
    gn_cycle_default_path(&elog, cycle->paths->error_log);

    /* the modules' own checks: under -t and at reload too */
    if (gn_module_check_confs(&cf, cycle) != GN_OK) {
        snprintf(err, errlen, "%s", cf.err);
        goto failed;
    }

    if (mc->pid.data == NULL && gn_conf_full_name(&cf, &pid, 0) == GN_OK) {
        mc->pid = pid;
    }
    if (mc->error_log.data == NULL
        && gn_conf_full_name(&cf, &elog, 0) == GN_OK)
    {
        mc->error_log = elog;
    }
    gn_conf_init_msec_value(mc->shutdown_timeout, 10000);
    gn_conf_init_value(mc->tls_session_cache, 4 * 1024 * 1024);
    gn_conf_init_msec_value(mc->tls_session_timeout, 300000);
    gn_conf_init_value(mc->max_connections, 1024);

    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    gn_conf_init_value(mc->children, 0);
    cycle->children = mc->children ? (gn_uint_t) mc->children
                                   : (gn_uint_t) gn_max(ncpu, 1);
    cycle->children = gn_min(cycle->children, GN_MAX_CHILDREN);

    if (gn_cycle_resolve_user(cycle, err, errlen) != GN_OK) {
        goto failed;
    }

    if (gn_cycle_check_chroot(cycle, err, errlen) != GN_OK) {
        goto failed;
    }

    if (gn_listen_build(cycle, err, errlen) != GN_OK) {
        goto failed;
    }

    /* credentials are read here, by the master, before any fork */
    if (gn_tls_cycle_create(cycle, err, errlen) != GN_OK) {
        goto failed;
    }

    gn_pool_destroy(cf.temp_pool);
    return cycle;

failed:

    gn_pool_destroy(cf.temp_pool);
    gn_pool_destroy(cf.pool);
    return NULL;
}


static gn_int_t
gn_cycle_open_logs(gn_cycle_t *cycle, gn_log_t *log)
{
    gn_main_conf_t   *mc = cycle->main;
    gn_open_file_t  **files;
    gn_uint_t         i;

    if (mc->error_syslog != NULL) {
        cycle->error_log_fd = gn_errlog_syslog_open(mc->error_syslog);
        cycle->log.writer = gn_errlog_syslog_write;
        cycle->log.wdata = mc->error_syslog;
    } else if (gn_str_eq(&mc->error_log, "stderr")) {
        cycle->error_log_fd = dup(2);
    } else {
        cycle->error_log_fd = gn_log_open_file((char *) mc->error_log.data);
    }

    if (cycle->error_log_fd == -1) {
        gn_log_error(GN_LOG_EMERG, log, errno, "open() \"%s\" failed",
                     (char *) mc->error_log.data);
        return GN_ERROR;
    }

    if (geteuid() == 0 && !gn_str_eq(&mc->error_log, "stderr")
        && mc->error_syslog == NULL)
    {
        (void) fchown(cycle->error_log_fd, mc->uid, (gid_t) -1);
    }

    cycle->log.level = mc->error_log_level;
    cycle->log.fd = cycle->error_log_fd;

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        files[i]->fd = gn_log_open_file((char *) files[i]->name.data);
        if (files[i]->fd == -1) {
            gn_log_error(GN_LOG_EMERG, log, errno, "open() \"%s\" failed",
                         (char *) files[i]->name.data);
            return GN_ERROR;
        }
        if (geteuid() == 0) {
            (void) fchown(files[i]->fd, mc->uid, (gid_t) -1);
        }
    }

    gn_access_log_files_opened(cycle);

    return GN_OK;
}


static void
gn_cycle_close_logs(gn_cycle_t *cycle)
{
    gn_open_file_t  **files;
    gn_uint_t         i;

    if (cycle->error_log_fd != -1) {
        close(cycle->error_log_fd);
        cycle->error_log_fd = -1;
    }

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (files[i]->fd != -1) {
            close(files[i]->fd);
            files[i]->fd = -1;
        }
    }
}


gn_int_t
gn_cycle_open(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    if (gn_cycle_open_logs(cycle, log) != GN_OK) {
        gn_cycle_close_logs(cycle);
        return GN_ERROR;
    }

    if (gn_listen_open_all(cycle, old, log) != GN_OK) {
        gn_cycle_close_logs(cycle);
        return GN_ERROR;
    }

    if (gn_tls_cycle_open(cycle, old, log) != GN_OK) {
        gn_listen_close_unused(cycle, old);
        gn_cycle_close_logs(cycle);
        return GN_ERROR;
    }

    return GN_OK;
}


void
gn_cycle_release(gn_cycle_t *old, gn_cycle_t *cycle)
{
    gn_listen_close_unused(old, cycle);
    gn_cycle_close_logs(old);
    gn_module_unload(old);
    gn_pool_destroy(old->pool);
}


void
gn_cycle_destroy(gn_cycle_t *cycle)
{
    gn_listen_close_unused(cycle, NULL);
    gn_cycle_close_logs(cycle);
    gn_module_unload(cycle);
    gn_pool_destroy(cycle->pool);
}


static void
gn_cycle_reopen_fd(int *fdp, const char *name, uid_t owner)
{
    int  fd;

    fd = gn_log_open_file(name);
    if (fd == -1) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, errno,
                     "reopening \"%s\" failed", name);
        return;
    }

    if (owner != (uid_t) -1) {
        (void) fchown(fd, owner, (gid_t) -1);
    }

    /* dup2 keeps the descriptor number, so nothing else needs updating
     * and no write ever sees a closed fd */
    if (dup2(fd, *fdp) == -1) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, errno,
                     "dup2() for \"%s\" failed", name);
    }
    close(fd);
}


void
gn_cycle_reopen_files(gn_cycle_t *cycle, uid_t owner)
{
    gn_open_file_t  **files;
    gn_uint_t         i;

    if (cycle->error_log_fd != -1
        && !gn_str_eq(&cycle->main->error_log, "stderr")
        && cycle->main->error_syslog == NULL)
    {
        gn_cycle_reopen_fd(&cycle->error_log_fd,
                           (char *) cycle->main->error_log.data, owner);
    }

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (files[i]->fd != -1) {
            gn_cycle_reopen_fd(&files[i]->fd, (char *) files[i]->name.data,
                               owner);
        }
    }
    gn_access_log_files_opened(cycle);
}
