/*
 * try_files and internal locations (try_files.h).
 */

#include "gn_config.h"

#include "try_files.h"
#include "cycle.h"
#include "lookup.h"
#include "http_request.h"
#include "http_file.h"
#include "http_response.h"
#include "rewrite.h"
#include "log.h"
#include "str.h"


static char *gn_try_files_set(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_try_files_internal(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

static const gn_conf_cmd_t  gn_try_files_commands[] = {

    { gn_string("try_files"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_2MORE,
      gn_try_files_set, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("internal"), GN_CONF_LOC | GN_CONF_NOARGS,
      gn_try_files_internal, GN_CONF_LOC_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


/* ---- per request ----------------------------------------------------- */

/* A FILE's expansion, checked before any file is looked for: a path
 * with no NUL and no ".." segment (the values of variables are the
 * client's). "/" is put before a name that lacks it. NULL: skip it. */
static u_char *
gn_try_files_path(gn_http_request_t *r, const gn_log_format_t *tpl,
    size_t *plen)
{
    gn_str_t  path;
    size_t    len;
    u_char   *p;

    len = gn_access_log_render(r, tpl, NULL);
    p = gn_pnalloc(r->pool, len + 1);
    if (p == NULL) {
        return NULL;
    }
    p[0] = '/';
    len = gn_access_log_render(r, tpl, p + 1);
    if (len == 0) {
        return NULL;
    }
    if (p[1] == '/') {
        memmove(p, p + 1, len);
    } else {
        len++;
    }

    path.data = p;
    path.len = len;
    if (memchr(p, '\0', len) != NULL || gn_http_file_climbs(&path)) {
        return NULL;
    }

    *plen = len;
    return p;
}


/* Does FILE (a directory when its name ends in '/') exist under r's
 * root? */
static gn_uint_t
gn_try_files_exists(gn_http_request_t *r, u_char *path, size_t len)
{
    gn_fc_entry_t  *e;
    gn_str_t        uri, fdir, fpath;
    gn_uint_t       dir;
    int             err;

    dir = path[len - 1] == '/';
    uri.data = path;
    uri.len = len;

    if (gn_http_file_map(r, &uri, &fdir, &fpath) != GN_OK) {
        return 0;                          /* no file here (alias) */
    }

    e = gn_http_file_open(r, &fdir, &fpath, NULL,
                          !gn_file_conf(r->loc)->symlinks_outside_root, &err);
    if (e == NULL) {
        if (err != ENOENT && err != ENOTDIR) {
            gn_log_error(GN_LOG_ERR, &r->c->log, err, "try_files: \"%.*s%.*s\" "
                         "cannot be opened", GN_STR_ARG(&fdir),
                         GN_STR_ARG(&fpath));
        }
        return 0;
    }

    return dir ? e->is_dir : e->is_file;
}


gn_int_t
gn_try_files_run(gn_http_request_t *r)
{
    gn_try_files_conf_t  *tc = gn_try_files_conf(r->loc);
    gn_log_format_t      *tpl;
    gn_str_t              path;
    gn_uint_t             i;
    gn_int_t              rc;
    size_t                len;
    u_char               *p;

    if (tc->files == NULL) {
        return GN_DECLINED;
    }

    tpl = tc->files->elts;
    for (i = 0; i < tc->files->nelts; i++) {
        p = gn_try_files_path(r, &tpl[i], &len);
        if (p != NULL && gn_try_files_exists(r, p, len)) {
            r->uri.data = p;
            r->uri.len = len;
            return GN_DECLINED;
        }
    }

    if (tc->code != 0) {
        return (gn_int_t) tc->code;
    }

    if (tc->named != NULL) {
        /* the URI stays as it came (a proxy_pass there sends the
         * client's target), but the request is internal from here on */
        r->named = tc->named;
        r->internal = 1;
        return GN_AGAIN;
    }

    len = gn_access_log_render(r, &tc->uri, NULL);
    p = gn_pnalloc(r->pool, len);
    if (p == NULL) {
        return GN_ERROR;
    }
    len = gn_access_log_render(r, &tc->uri, p);

    rc = gn_rewrite_set_uri(r, p, len, &path);
    if (rc == GN_DECLINED) {
        gn_log_error(GN_LOG_ERR, &r->c->log, 0, "try_files made an invalid "
                     "URI \"%.*s\"", GN_STR_ARG(&path));
        return 500;
    }

    return rc == GN_OK ? GN_AGAIN : GN_ERROR;
}


gn_uint_t
gn_try_files_refused(gn_http_request_t *r)
{
    return gn_try_files_conf(r->loc)->internal && !r->uri_changed
           && !r->internal;
}


/* ---- configuration --------------------------------------------------- */

static char *
gn_try_files_set(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_try_files_conf_t  *tc = conf;
    gn_str_t             *value = cf->args->elts, *last;
    gn_log_format_t      *tpl;
    gn_uint_t             i, n = cf->args->nelts;
    gn_int_t              code;
    char                  err[256];

    (void) cmd;

    if (tc->files != NULL) {
        return "is duplicate";
    }

    tc->files = gn_array_create(cf->pool, n - 2, sizeof(gn_log_format_t));
    if (tc->files == NULL) {
        return "failed (out of memory)";
    }
    tc->file = cf->file->name;
    tc->line = cf->file->line;

    for (i = 1; i < n; i++) {
        if (value[i].len == 0) {
            gn_conf_error(cf, "empty argument in \"try_files\"");
            return GN_CONF_ERROR;
        }

        tpl = i < n - 1 ? gn_array_push(tc->files) : &tc->uri;
        if (tpl == NULL) {
            return "failed (out of memory)";
        }
        if (gn_access_log_template(cf->pool, tpl, &value[i], err,
                                   sizeof(err)) != GN_OK)
        {
            gn_conf_error(cf, "%s in \"try_files\"", err);
            return GN_CONF_ERROR;
        }
    }

    last = &value[n - 1];

    if (last->data[0] == '=') {
        code = gn_atoi(last->data + 1, last->len - 1);
        if (code < 100 || code > 599
            || gn_http_response_status_known((gn_uint_t) code) != GN_OK)
        {
            gn_conf_error(cf, "invalid code \"%.*s\" in \"try_files\", "
                          "expected \"=\" and a status such as 404",
                          GN_STR_ARG(last));
            return GN_CONF_ERROR;
        }
        tc->code = (gn_uint_t) code;

    } else if (last->data[0] == '@') {
        tc->name = *last;

    } else if (last->data[0] != '/' && last->data[0] != '$') {
        gn_conf_error(cf, "invalid last argument \"%.*s\" in \"try_files\", "
                      "expected a URI (\"/...\"), \"=CODE\" or \"@NAME\"",
                      GN_STR_ARG(last));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static char *
gn_try_files_internal(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_try_files_conf_t  *tc = conf;

    (void) cf;
    (void) cmd;

    if (tc->internal) {
        return "is duplicate";
    }
    tc->internal = 1;
    return GN_CONF_OK;
}


/* A try_files' @NAME names a location of the same server. */
static gn_int_t
gn_try_files_check(gn_conf_t *cf, gn_cycle_t *cycle, gn_srv_conf_t *sc,
    gn_loc_conf_t *lc)
{
    gn_try_files_conf_t  *tc = gn_try_files_conf(lc);

    (void) cycle;

    if (lc->named) {
        tc->internal = 1;
    }

    if (tc->name.len == 0) {
        return GN_OK;
    }

    tc->named = gn_lookup_named(sc, &tc->name);
    if (tc->named == NULL) {
        snprintf(cf->err, sizeof(cf->err), "no location \"%.*s\" in the "
                 "server for \"try_files\" in %.*s:%u", GN_STR_ARG(&tc->name),
                 GN_STR_ARG(&tc->file), (unsigned) tc->line);
        return GN_ERROR;
    }

    return GN_OK;
}


const gn_feature_t  gn_try_files_feature = {
    .name = "try_files", .commands = gn_try_files_commands,
    .conf_size = sizeof(gn_try_files_conf_t),
    .check_level = gn_try_files_check
};
