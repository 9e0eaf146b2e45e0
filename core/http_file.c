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


static void
gn_http_file_release(void *data)
{
    gn_file_cache_release(data);
}


gn_fc_entry_t *
gn_http_file_open(gn_http_request_t *r, const gn_str_t *root,
    const gn_str_t *uri, const gn_str_t *name, gn_uint_t beneath, int *err)
{
    gn_loc_conf_t      *lc = r->loc;
    gn_pool_cleanup_t  *cln;
    gn_fc_entry_t      *e;
    gn_fc_open_t        op;

    cln = gn_pool_cleanup_add(r->pool, 0);
    if (cln == NULL) {
        *err = ENOMEM;
        return NULL;
    }

    op.root = root;
    op.uri = uri;
    op.name = name;
    op.beneath = beneath;
    op.use_cache = gn_file_conf(lc)->file_cache;
    op.valid = gn_file_conf(lc)->file_cache_valid;
    op.content_max = gn_file_conf(lc)->sendfile_min_size;

    e = gn_file_cache_open(&op, err);
    if (e != NULL) {
        cln->handler = gn_http_file_release;     /* released with the pool */
        cln->data = e;
    }

    return e;
}


gn_int_t
gn_http_file_body(gn_http_request_t *r, gn_fc_entry_t *e, off_t off,
    off_t len)
{
    u_char   *p;
    ssize_t   n;

    if (e->content != NULL) {
        return gn_http_add_mem(r, e->content + off, (size_t) len);
    }

    if ((size_t) len < gn_file_conf(r->loc)->sendfile_min_size) {
        p = gn_pnalloc(r->pool, (size_t) len);
        if (p == NULL) {
            return GN_ERROR;
        }
        n = pread(e->fd, p, (size_t) len, off);
        if (n == len) {
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
