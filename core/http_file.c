/*
 * A request's files (http_file.h): opened through the open-file cache
 * with the location's settings, and their bytes added to the response.
 */

#include "gn_config.h"

#include "http_file.h"


/* The open-file cache's and the file-sending directives (features.c's
 * "file"): plain slots of each level, their defaults in their rows. */
static const gn_conf_cmd_t  gn_http_file_commands[] = {

    { gn_string("sendfile"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_file_offset(sendfile),
      NULL, "on" },
    { gn_string("sendfile_min_size"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_LOC_CONF,
      gn_file_offset(sendfile_min_size), NULL, "16k" },
    { gn_string("file_cache"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_file_offset(file_cache),
      NULL, "on" },
    { gn_string("file_cache_valid"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,
      gn_file_offset(file_cache_valid), NULL, "2s" },
    { gn_string("file_cache_entries"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF,
      gn_file_offset(file_cache_entries), &gn_conf_num_min_1, "1024" },
    { gn_string("symlinks_outside_root"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_file_offset(symlinks_outside_root), NULL, "off" },
    gn_conf_null_cmd
};


gn_uint_t
gn_http_file_climbs(const gn_str_t *path)
{
    const u_char  *q, *end = path->data + path->len;

    for (q = path->data; q < end; q++) {
        if (q[0] == '/' && end - q >= 3 && q[1] == '.' && q[2] == '.'
            && (end - q == 3 || q[3] == '/'))
        {
            return 1;
        }
    }

    return 0;
}


/* dir + "/" + rest, or the alias's last name and rest under its parent
 * directory: the alias names the file itself, rest glued to it as
 * nginx's concatenation does, yet beneath a directory. */
static gn_int_t
gn_http_file_glue(gn_http_request_t *r, const gn_str_t *alias,
    const gn_str_t *rest, gn_uint_t slash, gn_str_t *dir, gn_str_t *path)
{
    u_char  *p, *last;

    if (slash) {
        *dir = *alias;
        last = alias->data + alias->len;
    } else {
        last = alias->data + alias->len;
        while (last > alias->data && last[-1] != '/') {
            last--;
        }
        last--;                                  /* at its '/' */
        dir->data = alias->data;
        dir->len = last > alias->data ? (size_t) (last - alias->data) : 1;
    }

    path->len = (size_t) (alias->data + alias->len - last) + slash
                + rest->len;
    path->data = gn_pnalloc(r->pool, path->len);
    if (path->data == NULL) {
        return GN_ERROR;
    }
    p = gn_cpymem(path->data, last, (size_t) (alias->data + alias->len
                                               - last));
    if (slash) {
        *p++ = '/';
    }
    memcpy(p, rest->data, rest->len);
    return GN_OK;
}


gn_int_t
gn_http_file_map(gn_http_request_t *r, const gn_str_t *uri, gn_str_t *dir,
    gn_str_t *path)
{
    gn_loc_conf_t  *lc = r->loc;
    gn_str_t        full, rest;
    size_t          n;

    if (lc->alias.len == 0) {
        *dir = lc->root;
        *path = *uri;
        return GN_OK;
    }

    if (lc->alias_tpl != NULL) {
        /* captures: the expansion, which must stay under the directory
         * before the first of them */
        if (lc->alias_expand(r, &full) != GN_OK) {
            return GN_ERROR;
        }
        n = lc->alias_dir.len == 1 ? 0 : lc->alias_dir.len;
        if (full.len <= n || memcmp(full.data, lc->alias_dir.data, n) != 0
            || full.data[n] != '/' || gn_http_file_climbs(&full))
        {
            return GN_DECLINED;
        }
        *dir = lc->alias_dir;
        path->data = full.data + n;
        path->len = full.len - n;
        return GN_OK;
    }

    rest.len = 0;
    rest.data = uri->data;
    if (lc->regex == NULL && !lc->exact && !lc->named) {
        /* a prefix location: what follows its prefix ("/" included when
         * the prefix ends in one) */
        n = lc->name.len;
        if (uri->len < n || memcmp(uri->data, lc->name.data, n) != 0) {
            return GN_DECLINED;        /* try_files went elsewhere */
        }
        n -= (lc->name.data[n - 1] == '/');
        rest.data = uri->data + n;
        rest.len = uri->len - n;
    }

    if (rest.len > 0 && rest.data[0] == '/') {
        *dir = lc->alias;
        *path = rest;
        return GN_OK;
    }

    /* "/img../x" in "location /img": glued to the alias's last name,
     * never "/.." under it */
    return gn_http_file_glue(r, &lc->alias, &rest,
                             rest.len == 0 && lc->alias_slash, dir, path);
}


static void
gn_http_file_release(void *data)
{
    gn_file_cache_release(data);
}


/* The open-file cache's request for root + uri (+ name) with r's
 * location's settings. */
static void
gn_http_file_op(gn_http_request_t *r, const gn_str_t *root,
    const gn_str_t *uri, const gn_str_t *name, gn_uint_t beneath,
    gn_fc_open_t *op)
{
    gn_file_conf_t  *fc = gn_file_conf(r->loc);

    op->root = root;
    op->uri = uri;
    op->name = name;
    op->beneath = beneath;
    op->use_cache = fc->file_cache;
    op->valid = fc->file_cache_valid;
    op->content_max = fc->sendfile_min_size;
}


gn_fc_entry_t *
gn_http_file_open(gn_http_request_t *r, const gn_str_t *root,
    const gn_str_t *uri, const gn_str_t *name, gn_uint_t beneath, int *err)
{
    gn_pool_cleanup_t  *cln;
    gn_fc_entry_t      *e;
    gn_fc_open_t        op;

    cln = gn_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        *err = ENOMEM;
        return NULL;
    }

    gn_http_file_op(r, root, uri, name, beneath, &op);
    e = gn_file_cache_open(&op, err);
    if (e != NULL) {
        cln->handler = gn_http_file_release;     /* released with the pool */
        cln->data = e;
    }

    return e;
}


gn_int_t
gn_http_file_stat(gn_http_request_t *r, const gn_str_t *root,
    const gn_str_t *uri, const gn_str_t *name, gn_uint_t beneath,
    struct stat *st, int *err)
{
    gn_fc_open_t  op;

    gn_http_file_op(r, root, uri, name, beneath, &op);
    return gn_file_cache_stat(&op, st, err);
}


gn_int_t
gn_http_file_body(gn_http_request_t *r, gn_fc_entry_t *e, off_t off,
    off_t len)
{
    u_char  *p;

    if (e->content != NULL) {
        return gn_http_add_mem(r, e->content + off, (size_t) len);
    }

    if ((size_t) len < gn_file_conf(r->loc)->sendfile_min_size) {
        p = gn_pnalloc(r->pool, (size_t) len);
        if (p == NULL) {
            return GN_ERROR;
        }
        if (gn_file_read(e->fd, p, (size_t) len, off) == GN_OK) {
            return gn_http_add_mem(r, p, (size_t) len);
        }
        /* short read (the file changed): let sendfile report it */
    }

    return gn_http_add_file(r, e->fd, off, len);
}


const gn_feature_t  gn_file_feature = {
    .name = "file", .commands = gn_http_file_commands,
    .conf_size = sizeof(gn_file_conf_t)
};
