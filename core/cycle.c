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
#include "feature.h"
#include "regex.h"


gn_cycle_t  *gn_cycle;


static char *gn_cycle_server(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_alias(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_location(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_children(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_user(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static gn_int_t gn_cycle_lookup_user(gn_main_conf_t *mc, char *err,
    size_t errlen);
static char *gn_cycle_server_name(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_root(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_error_page(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_chroot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_cycle_batch_writes(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

/* batch_writes is on where it can be */
#if (GN_HAVE_IO_URING)
#define GN_BATCH_WRITES_DEFAULT  1
#else
#define GN_BATCH_WRITES_DEFAULT  0
#endif


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



static const gn_conf_cmd_t  gn_cycle_commands[] = {

    { gn_string("children"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_cycle_children, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("user"), GN_CONF_MAIN | GN_CONF_TAKE12,
      gn_cycle_user, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("pid"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_path_slot, GN_CONF_MAIN_CONF, gn_main_offset(pid), NULL,
      NULL },
    { gn_string("chroot"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_cycle_chroot, GN_CONF_MAIN_CONF, gn_main_offset(chroot), NULL, NULL },
    { gn_string("shutdown_timeout"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_MAIN_CONF,
      gn_main_offset(shutdown_timeout), NULL, NULL },
    { gn_string("max_connections"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_MAIN_CONF,
      gn_main_offset(max_connections), &gn_conf_num_min_1, NULL },
    { gn_string("rlimit_nofile"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_MAIN_CONF,
      gn_main_offset(rlimit_nofile), &gn_conf_num_min_1, NULL },
    { gn_string("batch_writes"), GN_CONF_MAIN | GN_CONF_FLAG,
      gn_cycle_batch_writes, GN_CONF_MAIN_CONF,
      gn_main_offset(batch_writes), NULL, NULL },
    { gn_string("server"), GN_CONF_MAIN | GN_CONF_BLOCK | GN_CONF_NOARGS,
      gn_cycle_server, GN_CONF_MAIN_CONF, 0, NULL, NULL },

    { gn_string("server_name"), GN_CONF_SRV | GN_CONF_1MORE,
      gn_cycle_server_name, GN_CONF_SRV_CONF, 0, NULL, NULL },
    { gn_string("location"), GN_CONF_SRV | GN_CONF_BLOCK | GN_CONF_TAKE12,
      gn_cycle_location, GN_CONF_SRV_CONF, 0, NULL, NULL },

    { gn_string("root"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_cycle_root, GN_CONF_LOC_CONF, gn_loc_offset(root), NULL, NULL },
    { gn_string("alias"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_cycle_alias, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("index"), GN_CONF_ANY | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_LOC_CONF, gn_loc_offset(index),
      NULL, NULL },
    { gn_string("error_page"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_2MORE,
      gn_cycle_error_page, GN_CONF_LOC_CONF, 0, NULL, NULL },


    gn_conf_null_cmd
};



/*
 * A new level (main, server, location): the core's settings unset, and
 * every feature's part of it, its plain slots unset, then the rest of it
 * by the feature's create_conf.
 */
static gn_loc_conf_t *
gn_loc_conf_create(gn_conf_t *cf)
{
    gn_loc_conf_t       *lc;
    const gn_feature_t  *f;
    gn_uint_t            i;

    lc = gn_pcalloc(cf->pool, sizeof(gn_loc_conf_t));
    if (lc == NULL) {
        return NULL;
    }

    for (i = 0; i < GN_FEATURE_N; i++) {
        f = gn_features[i];
        if (f->conf_size == 0) {
            gn_conf_init_slots(f->commands, GN_CONF_LOC_CONF, lc);
            continue;
        }
        lc->conf[i] = gn_pcalloc(cf->pool, f->conf_size);
        if (lc->conf[i] == NULL) {
            return NULL;
        }
        gn_conf_init_slots(f->commands, GN_CONF_LOC_CONF, lc->conf[i]);
    }

    for (i = 0; i < GN_FEATURE_N; i++) {
        f = gn_features[i];
        if (f->create_conf != NULL && f->create_conf(cf, lc) != GN_OK) {
            return NULL;
        }
    }

    return lc;
}


/* What a row of cf->tables[table] writes to: a feature's part of the
 * level, or (features without one, modules' tables) the struct itself. */
static void *
gn_cycle_conf_of(gn_conf_t *cf, gn_uint_t table, gn_uint_t which)
{
    gn_loc_conf_t  *lc;

    if (which >= gn_nelems(cf->conf)) {
        return NULL;
    }

    if (which == GN_CONF_LOC_CONF && table < GN_FEATURE_N
        && gn_features[table]->conf_size != 0)
    {
        lc = cf->conf[GN_CONF_LOC_CONF];
        return lc->conf[table];
    }

    return cf->conf[which];
}


/*
 * Inherits from `prev` what `lc` left unset; the main level (prev NULL)
 * gets the defaults: every feature's plain slots from their rows, then
 * each feature's own merge, then the core's settings.
 */
static gn_int_t
gn_loc_conf_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    static gn_str_t      index_html = gn_string("index.html");
    const gn_feature_t  *f;
    gn_uint_t            i;
    gn_str_t            *s;

    for (i = 0; i < GN_FEATURE_N; i++) {
        f = gn_features[i];
        if (gn_conf_merge_slots(cf, f->commands, GN_CONF_LOC_CONF,
                                f->conf_size ? lc->conf[i] : (void *) lc,
                                prev == NULL ? NULL
                                : f->conf_size ? prev->conf[i]
                                : (void *) prev)
            != GN_OK)
        {
            return GN_ERROR;
        }
    }
    for (i = 0; i < GN_FEATURE_N; i++) {
        f = gn_features[i];
        if (f->merge_conf != NULL && f->merge_conf(cf, lc, prev) != GN_OK) {
            return GN_ERROR;
        }
    }

    if (lc->root.data == NULL) {
        if (prev != NULL) {
            lc->root = prev->root;
            lc->root_file = prev->root_file;
            lc->root_line = prev->root_line;
        } else {
            gn_cycle_default_path(&lc->root,
                                  ((gn_cycle_t *) cf->data)->paths->root);
            if (gn_conf_full_name(cf, &lc->root, 0) != GN_OK) {
                return GN_ERROR;
            }
        }
    }

    if (lc->index == NULL) {
        lc->index = prev != NULL ? prev->index : NULL;
        if (lc->index == NULL) {
            lc->index = gn_array_create(cf->pool, 1, sizeof(gn_str_t));
            if (lc->index == NULL) {
                return GN_ERROR;
            }
            s = gn_array_push(lc->index);
            *s = index_html;
        }
    }

    if (lc->error_pages == NULL && prev != NULL) {
        lc->error_pages = prev->error_pages;
    }

    return GN_OK;
}


static char *
gn_cycle_batch_writes(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_main_conf_t  *mc = conf;
    char            *rv;

    rv = gn_conf_set_flag_slot(cf, cmd, conf);

#if !(GN_HAVE_IO_URING)
    if (rv == GN_CONF_OK && mc->batch_writes) {
        gn_conf_error(cf, "\"batch_writes on\" needs io_uring, and this "
                      "gannet was built without it (configure "
                      "--without-io-uring, or no liburing)");
        return GN_CONF_ERROR;
    }
#else
    (void) mc;
#endif

    return rv;
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
    lc = gn_loc_conf_create(cf);
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


/* A `location ~ ...` / `~* ...` block's pattern. */
static gn_int_t
gn_cycle_location_regex(gn_conf_t *cf, gn_loc_conf_t *lc,
    const gn_str_t *pattern, gn_uint_t caseless)
{
    gn_regex_t  *re;
    char         err[512];

    re = gn_pcalloc(cf->pool, sizeof(gn_regex_t));
    if (re == NULL) {
        return GN_ERROR;
    }

    if (gn_regex_compile(re, cf->pool, pattern, caseless, err, sizeof(err))
        != GN_OK)
    {
        gn_conf_error(cf, "%s", err);
        return GN_ERROR;
    }

    lc->regex = re;
    return GN_OK;
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

    lc = gn_loc_conf_create(cf);
    if (lc == NULL) {
        return cf->err[0] ? GN_CONF_ERROR : "failed (out of memory)";
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
            if (gn_cycle_location_regex(cf, lc, name, value[1].len == 2)
                != GN_OK)
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

    /* `location @name`: reached only by name (try_files); kept with the
     * prefixes, which no URI (it starts with '/') can match it as */
    lc->named = cf->args->nelts == 2 && name->len > 1
                && name->data[0] == '@';

    if (lc->regex == NULL && !lc->named
        && (name->len == 0 || name->data[0] != '/'))
    {
        gn_conf_error(cf, "invalid location \"%.*s\", it must start with "
                      "\"/\" (or \"@\": a named location)",
                      GN_STR_ARG(name));
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
    if (lc->alias.len > 0) {
        return "cannot stand with \"alias\" in one location";
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


/* alias PATH: a location's files come from PATH instead of root + URI
 * (http_file.h says how); one or the other in a location. */
static char *
gn_cycle_alias(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_loc_conf_t  *lc = conf;
    gn_str_t       *value = cf->args->elts;

    (void) cmd;

    if (lc->alias.len > 0) {
        return "is duplicate";
    }
    if (lc->root.data != NULL) {
        return "cannot stand with \"root\" in one location";
    }
    if (value[1].len == 0) {
        return "needs a path";
    }

    lc->alias = value[1];
    lc->alias_slash = lc->alias.data[lc->alias.len - 1] == '/';
    while (lc->alias.len > 1 && lc->alias.data[lc->alias.len - 1] == '/') {
        lc->alias.len--;
    }

    if (gn_conf_full_name(cf, &lc->alias, 0) != GN_OK) {
        return "failed (out of memory)";
    }
    lc->alias_file = cf->file->name;
    lc->alias_line = cf->file->line;

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
    gn_uint_t          i, j;

    psc = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        sc = psc[i];

        if (gn_loc_conf_merge(cf, sc->loc, cycle->main_loc) != GN_OK) {
            return GN_ERROR;
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


/* One server or location level: each feature's check_level, then, with
 * `chroot`, its root, which must lie in the chroot directory (the child
 * sees nothing else). GN_ERROR with cf->err filled. */
static gn_int_t
gn_cycle_check_level(gn_conf_t *cf, gn_cycle_t *cycle, gn_srv_conf_t *sc,
    gn_loc_conf_t *lc)
{
    gn_str_t   *dir = &cycle->main->chroot;
    gn_uint_t   i;

    for (i = 0; i < GN_FEATURE_N; i++) {
        if (gn_features[i]->check_level != NULL
            && gn_features[i]->check_level(cf, cycle, sc, lc) != GN_OK)
        {
            return GN_ERROR;
        }
    }

    if (dir->len == 0 || gn_cycle_path_inside(&lc->root, dir)) {
        return GN_OK;
    }

    if (lc->root_file.data != NULL) {
        snprintf(cf->err, sizeof(cf->err), "root \"%.*s\" is outside the "
                 "chroot directory \"%.*s\" in %.*s:%u",
                 GN_STR_ARG(&lc->root), GN_STR_ARG(dir),
                 GN_STR_ARG(&lc->root_file), (unsigned) lc->root_line);
    } else {
        snprintf(cf->err, sizeof(cf->err), "root \"%.*s\" (the default: no "
                 "\"root\" is set) is outside the chroot directory \"%.*s\" "
                 "for the server in %.*s:%u", GN_STR_ARG(&lc->root),
                 GN_STR_ARG(dir), GN_STR_ARG(&sc->file), (unsigned) sc->line);
    }

    return GN_ERROR;
}


/* Every server's levels: the server's own, its locations, its regex
 * locations. */
static gn_int_t
gn_cycle_check_levels(gn_conf_t *cf, gn_cycle_t *cycle)
{
    gn_srv_conf_t  **psc;
    gn_loc_conf_t  **plc;
    gn_array_t      *locs[2];
    gn_uint_t        i, j, k;

    psc = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        if (gn_cycle_check_level(cf, cycle, psc[i], psc[i]->loc) != GN_OK) {
            return GN_ERROR;
        }

        locs[0] = &psc[i]->locations;
        locs[1] = &psc[i]->regex_locations;
        for (k = 0; k < 2; k++) {
            plc = locs[k]->elts;
            for (j = 0; j < locs[k]->nelts; j++) {
                if (gn_cycle_check_level(cf, cycle, psc[i], plc[j]) != GN_OK)
                {
                    return GN_ERROR;
                }
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
    gn_uint_t            i, n;

    mc = gn_pcalloc(cycle->pool, sizeof(gn_main_conf_t));
    if (mc == NULL
        || gn_array_init(&mc->servers, cycle->pool, 4,
                         sizeof(gn_srv_conf_t *)) != GN_OK
        || gn_array_init(&cycle->open_files, cycle->pool, 4,
                         sizeof(gn_open_file_t *)) != GN_OK
        || gn_array_init(&cycle->listening, cycle->pool, 4,
                         sizeof(gn_listen_t)) != GN_OK
        || gn_conf_init(cf, cycle->pool) != GN_OK)
    {
        return GN_ERROR;
    }

    mc->children = GN_CONF_UNSET;
    mc->shutdown_timeout = GN_CONF_UNSET_MSEC;
    mc->max_connections = GN_CONF_UNSET;
    mc->batch_writes = GN_CONF_UNSET;
    mc->rlimit_nofile = GN_CONF_UNSET;
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
    cf->data = cycle;

    /* the features' directives, table i being feature i's (see
     * gn_cycle_conf_of), and room for those they add later (each loaded
     * module's); NULL-terminated */
    for (n = 1, i = 0; i < GN_FEATURE_N; i++) {
        n += 1 + gn_features[i]->extra_tables;
    }
    cycle->tables = gn_pcalloc(cycle->pool, n * sizeof(gn_conf_cmd_t *));
    if (cycle->tables == NULL
        || gn_array_init(&cycle->modules, cycle->pool, 4,
                         sizeof(void *)) != GN_OK)
    {
        return GN_ERROR;
    }
    for (i = 0; i < GN_FEATURE_N; i++) {
        cycle->tables[cycle->ntables++] = gn_features[i]->commands;
    }
    cf->tables = cycle->tables;
    cf->conf_of = gn_cycle_conf_of;

    cycle->main_loc = gn_loc_conf_create(cf);
    if (cycle->main_loc == NULL) {
        return GN_ERROR;
    }
    cf->conf[GN_CONF_LOC_CONF] = cycle->main_loc;

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


gn_cycle_t *
gn_cycle_create(const char *conf_file, const char *prefix, char *err,
    size_t errlen)
{
    gn_cycle_t      *cycle;
    gn_conf_t        cf;
    gn_main_conf_t  *mc;
    gn_str_t         pid;
    gn_uint_t        i;
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
    if (mc->pid.data == NULL && gn_conf_full_name(&cf, &pid, 0) == GN_OK) {
        mc->pid = pid;
    }
    gn_conf_init_msec_value(mc->shutdown_timeout, 10000);
    gn_conf_init_value(mc->max_connections, 1024);
    gn_conf_init_value(mc->batch_writes, GN_BATCH_WRITES_DEFAULT);

    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    gn_conf_init_value(mc->children, 0);
    cycle->children = mc->children ? (gn_uint_t) mc->children
                                   : (gn_uint_t) gn_max(ncpu, 1);
    cycle->children = gn_min(cycle->children, GN_MAX_CHILDREN);

    /* the features' checks (the modules' own: under -t and at reload
     * too), the user, every level, then what each feature builds from
     * the merged configuration (listeners; TLS credentials, read here,
     * by the master, before any fork) */
    cf.err[0] = '\0';
    for (i = 0; i < GN_FEATURE_N; i++) {
        if (gn_features[i]->check_cycle != NULL
            && gn_features[i]->check_cycle(&cf, cycle) != GN_OK)
        {
            goto conf_failed;
        }
    }

    if (gn_cycle_resolve_user(cycle, err, errlen) != GN_OK) {
        goto failed;
    }

    if (gn_cycle_check_levels(&cf, cycle) != GN_OK) {
        goto conf_failed;
    }

    for (i = 0; i < GN_FEATURE_N; i++) {
        if (gn_features[i]->init_cycle != NULL
            && gn_features[i]->init_cycle(&cf, cycle) != GN_OK)
        {
            goto conf_failed;
        }
    }

    gn_pool_destroy(cf.temp_pool);
    return cycle;

conf_failed:

    snprintf(err, errlen, "%s", cf.err[0] ? cf.err : "out of memory");

failed:

    gn_pool_destroy(cf.temp_pool);
    gn_pool_destroy(cf.pool);
    return NULL;
}


gn_int_t
gn_cycle_open_files(gn_cycle_t *cycle, gn_log_t *log)
{
    gn_open_file_t  **files;
    gn_uint_t         i;

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        files[i]->fd = gn_log_open_file((char *) files[i]->name.data);
        if (files[i]->fd == -1) {
            gn_log_error(GN_LOG_EMERG, log, errno, "open() \"%s\" failed",
                         (char *) files[i]->name.data);
            return GN_ERROR;
        }
        if (geteuid() == 0) {
            (void) fchown(files[i]->fd, cycle->main->uid, (gid_t) -1);
        }
    }

    return GN_OK;
}


void
gn_cycle_close_files(gn_cycle_t *cycle)
{
    gn_open_file_t  **files;
    gn_uint_t         i;

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (files[i]->fd != -1) {
            close(files[i]->fd);
            files[i]->fd = -1;
        }
    }
}


/* Closes, in reverse order, what features [0, n) opened for `cycle` and
 * `keep` does not use. */
static void
gn_cycle_close_features(gn_cycle_t *cycle, gn_cycle_t *keep, gn_uint_t n)
{
    while (n-- > 0) {
        if (gn_features[n]->close_cycle != NULL) {
            gn_features[n]->close_cycle(cycle, keep);
        }
    }
}


gn_int_t
gn_cycle_open(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    gn_uint_t  i;

    for (i = 0; i < GN_FEATURE_N; i++) {
        if (gn_features[i]->open_cycle != NULL
            && gn_features[i]->open_cycle(cycle, old, log) != GN_OK)
        {
            gn_cycle_close_features(cycle, old, i + 1);
            return GN_ERROR;
        }
    }

    return GN_OK;
}


/* Closes what `cycle` has and `keep` does not reuse, then frees it. */
static void
gn_cycle_free(gn_cycle_t *cycle, gn_cycle_t *keep)
{
    gn_uint_t  i;

    gn_cycle_close_features(cycle, keep, GN_FEATURE_N);
    for (i = 0; i < GN_FEATURE_N; i++) {
        if (gn_features[i]->exit_cycle != NULL) {
            gn_features[i]->exit_cycle(cycle);
        }
    }
    gn_pool_destroy(cycle->pool);
}


void
gn_cycle_release(gn_cycle_t *old, gn_cycle_t *cycle)
{
    gn_cycle_free(old, cycle);
}


void
gn_cycle_destroy(gn_cycle_t *cycle)
{
    gn_cycle_free(cycle, NULL);
}


void
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

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        if (files[i]->fd != -1) {
            gn_cycle_reopen_fd(&files[i]->fd, (char *) files[i]->name.data,
                               owner);
        }
    }
}


void
gn_cycle_reopen(gn_cycle_t *cycle, uid_t owner)
{
    gn_uint_t  i;

    for (i = 0; i < GN_FEATURE_N; i++) {
        if (gn_features[i]->reopen != NULL) {
            gn_features[i]->reopen(cycle, owner);
        }
    }
}


const gn_feature_t  gn_core_feature = {
    .name = "core", .commands = gn_cycle_commands
};
