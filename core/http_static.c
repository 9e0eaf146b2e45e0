/*
 * Static files: GET, HEAD and OPTIONS of files under `root`, through the
 * open-file cache; conditional requests and byte ranges; a directory
 * without an index file is listed (autoindex.h) or refused.
 *
 * The path was decoded and normalised before we get here (no "..", no
 * NUL), so root + uri names a path under root; with the default
 * `symlinks_outside_root off`, the file cache also refuses symlinks that
 * lead out of root (openat2 RESOLVE_BENEATH).
 */

#include "gn_config.h"

#include "http_static.h"
#include "http_file.h"
#include "http_response.h"
#include "http_cond.h"
#include "autoindex.h"
#include "lookup.h"
#include "file_cache.h"
#include "str.h"


/* The static files' directives (features.c's "static"): plain slots of
 * each level, their defaults in their rows. */
static const gn_conf_cmd_t  gn_http_static_commands[] = {

    { gn_string("etag"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_static_offset(etag), NULL,
      "on" },
    { gn_string("last_modified"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_static_offset(last_modified), NULL, "on" },
    { gn_string("max_ranges"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF, gn_static_offset(max_ranges),
      NULL, "16" },
    { gn_string("private_files"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_static_offset(private_files), NULL, "off" },
    { gn_string("log_not_found"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_static_offset(log_not_found), NULL, "on" },
    { gn_string("gzip_static"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_static_offset(gzip_static), NULL, "off" },
    { gn_string("brotli_static"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_static_offset(brotli_static), NULL, "off" },
    gn_conf_null_cmd
};


static gn_int_t
gn_http_static_redirect_dir(gn_http_request_t *r)
{
    gn_str_t  *q = &r->head.query;
    u_char    *p;

    /* Location: the path as the client sent it (still encoded), plus "/"
     * and the query */
    r->location.len = r->head.path.len + 1
                      + (r->head.has_query ? q->len + 1 : 0);
    r->location.data = gn_pnalloc(r->pool, r->location.len);
    if (r->location.data == NULL) {
        return GN_ERROR;
    }

    p = gn_cpymem(r->location.data, r->head.path.data, r->head.path.len);
    *p++ = '/';
    if (r->head.has_query) {
        *p++ = '?';
        p = gn_cpymem(p, q->data, q->len);
    }

    return gn_http_response_error(r, 301);
}


static gn_int_t
gn_http_static_error(gn_http_request_t *r, int err)
{
    switch (err) {

    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
        if (gn_static_conf(r->loc)->log_not_found) {
            gn_log_error(GN_LOG_ERR, &r->c->log, err, "open() of "
                         "\"%.*s%.*s\" failed", GN_STR_ARG(&r->fdir),
                         GN_STR_ARG(&r->fpath));
        }
        return gn_http_response_error(r, 404);

    case EXDEV:                  /* a symlink leads outside root */
        gn_log_error(GN_LOG_INFO, &r->c->log, 0, "\"%.*s\" resolves "
                     "outside root, refused (symlinks_outside_root off)",
                     GN_STR_ARG(&r->uri));
        return gn_http_response_error(r, 404);

    case EACCES:
    case EPERM:
        gn_log_error(GN_LOG_ERR, &r->c->log, err, "open() of \"%.*s%.*s\" "
                     "failed", GN_STR_ARG(&r->fdir), GN_STR_ARG(&r->fpath));
        return gn_http_response_error(r, 403);

    default:
        gn_log_error(GN_LOG_CRIT, &r->c->log, err, "open() of \"%.*s%.*s\" "
                     "failed", GN_STR_ARG(&r->fdir), GN_STR_ARG(&r->fpath));
        return gn_http_response_error(r, 500);
    }
}


/*
 * `private_files off` (the default): a file that is not world-readable,
 * or that belongs to someone other than root, the server's user or the
 * owner of the root directory, is not published just because the
 * server's user happens to be able to read it (a group-readable
 * secret, a file another user left in a shared tree). Decided on the
 * cached stat, which a chmod or chown invalidates (ctime).
 */
static gn_int_t
gn_http_static_private(gn_http_request_t *r, gn_fc_entry_t *e,
    const gn_str_t *name)
{
    uid_t  owner;

    if (gn_static_conf(r->loc)->private_files || !e->is_file) {
        return GN_OK;
    }

    if (!(e->mode & S_IROTH)) {
        gn_log_error(GN_LOG_ERR, &r->c->log, 0, "\"%.*s%.*s%.*s\" is not "
                     "world-readable (mode %04o), refused (private_files "
                     "off)", GN_STR_ARG(&r->fdir), GN_STR_ARG(&r->fpath),
                     (int) (name ? name->len : 0),
                     name ? (char *) name->data : "",
                     (unsigned) (e->mode & 07777));
        return GN_DECLINED;
    }

    if (e->uid == 0 || e->uid == geteuid()) {
        return GN_OK;
    }

    if (gn_file_cache_root_owner(&r->fdir, &owner) == GN_OK
        && owner == e->uid)
    {
        return GN_OK;
    }

    gn_log_error(GN_LOG_ERR, &r->c->log, 0, "\"%.*s%.*s%.*s\" is owned by "
                 "uid %u, not by root, the server's user or the owner of "
                 "the root, refused (private_files off)",
                 GN_STR_ARG(&r->fdir), GN_STR_ARG(&r->fpath),
                 (int) (name ? name->len : 0),
                 name ? (char *) name->data : "", (unsigned) e->uid);
    return GN_DECLINED;
}


/* The first index file of "/dir/" that is a regular file, and *name;
 * else NULL with *err (ENOENT: there is none). */
static gn_fc_entry_t *
gn_http_static_find_index(gn_http_request_t *r, gn_str_t **name, int *err)
{
    gn_fc_entry_t  *e;
    gn_str_t       *names;
    gn_uint_t       i;

    names = r->loc->index->elts;

    for (i = 0; i < r->loc->index->nelts; i++) {
        e = gn_http_file_open(r, &r->fdir, &r->fpath, &names[i],
                              !gn_file_conf(r->loc)->symlinks_outside_root,
                              err);
        if (e != NULL) {
            if (e->is_file) {
                *name = &names[i];
                return e;
            }
            continue;
        }

        if (*err != ENOENT && *err != ENOTDIR) {
            return NULL;
        }
    }

    *err = ENOENT;
    return NULL;
}


gn_int_t
gn_http_static_index_uri(gn_http_request_t *r, gn_str_t *uri)
{
    gn_str_t  *name;
    int        err;
    u_char    *p;

    if (gn_http_file_map(r, &r->uri, &r->fdir, &r->fpath) != GN_OK
        || gn_http_static_find_index(r, &name, &err) == NULL)
    {
        return GN_DECLINED;
    }

    p = gn_pnalloc(r->pool, r->uri.len + name->len);
    if (p == NULL) {
        return GN_ERROR;
    }
    memcpy(p, r->uri.data, r->uri.len);
    memcpy(p + r->uri.len, name->data, name->len);
    uri->data = p;
    uri->len = r->uri.len + name->len;
    return GN_OK;
}


/* "/dir/": the first index file that is a regular file, else the
 * directory itself (the caller lists it or refuses). */
static gn_fc_entry_t *
gn_http_static_index(gn_http_request_t *r, int *err)
{
    gn_fc_entry_t  *e;
    gn_str_t       *name;

    e = gn_http_static_find_index(r, &name, err);
    if (e != NULL) {
        if (gn_http_static_private(r, e, name) != GN_OK) {
            *err = 0;
            return NULL;
        }
        r->content_type = *gn_lookup_mime(r->loc, name->data, name->len);
        return e;
    }

    if (*err != ENOENT) {
        return NULL;
    }

    /* No index file: as nginx, 404 when the directory itself is not
     * there */
    return gn_http_file_open(r, &r->fdir, &r->fpath, NULL,
                             !gn_file_conf(r->loc)->symlinks_outside_root,
                             err);
}


/* "/dir/" without an index file: its listing (autoindex), else 403 with
 * a line that says why. */
static gn_int_t
gn_http_static_dir(gn_http_request_t *r, gn_fc_entry_t *e)
{
    gn_int_t  rc;

    rc = gn_autoindex_handler(r, e);
    if (rc != GN_DECLINED) {
        return rc;
    }

    gn_log_error(GN_LOG_ERR, &r->c->log, 0, "directory index of "
                 "\"%.*s%.*s\" is forbidden", GN_STR_ARG(&r->fdir),
                 GN_STR_ARG(&r->fpath));
    return gn_http_response_error(r, 403);
}


/* Does the client's Accept-Encoding take `coding` (a token of the list,
 * without q=0)? RFC 9110 12.5.3; "*" is not taken as gzip or br. */
gn_uint_t
gn_http_accepts_coding(const gn_str_t *ae, const char *coding, size_t n)
{
    const u_char  *p = ae->data, *end = ae->data + ae->len, *e, *q;

    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) {
            p++;
        }
        e = memchr(p, ',', (size_t) (end - p));
        e = e != NULL ? e : end;

        if ((size_t) (e - p) >= n && gn_strncasecmp(p, (u_char *) coding, n)
                                     == 0
            && (p + n == e || p[n] == ';' || p[n] == ' ' || p[n] == '\t'))
        {
            /* q=0 (q=0.0, q=0.000) refuses it */
            q = p + n;
            while (q < e && (*q == ' ' || *q == '\t' || *q == ';')) {
                q++;
            }
            if (e - q >= 3 && (q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
                for (q += 2; q < e && (*q == '0' || *q == '.'); q++) {
                    /* void */
                }
                return q < e && *q >= '1' && *q <= '9';
            }
            return 1;
        }
        p = e;
    }

    return 0;
}


/*
 * gzip_static, brotli_static: the file's ".br" or ".gz" next to it,
 * when the client takes that coding and it is a regular file no older
 * than e; never for a Range request (its ranges are the original's) .
 * Its bytes, size, date and ETag are the response's, with
 * Content-Encoding; Vary: Accept-Encoding either way. Returns the entry
 * to serve.
 */
static gn_fc_entry_t *
gn_http_static_precompressed(gn_http_request_t *r, gn_fc_entry_t *e)
{
    static const gn_str_t  br = gn_string(".br"), gz = gn_string(".gz");
    gn_static_conf_t      *sc = gn_static_conf(r->loc);
    gn_http_header_t      *h;
    gn_fc_entry_t         *c;
    const gn_str_t        *ext;
    int                    err;

    if (!sc->gzip_static && !sc->brotli_static) {
        return e;
    }
    gn_str_set(&r->extra_headers, "Vary: Accept-Encoding\r\n");

    h = gn_http_header_find(&r->head, "Accept-Encoding", 15);
    if (h == NULL || r->head.range.len > 0) {
        return e;
    }

    for (ext = &br; ext != NULL; ext = ext == &br ? &gz : NULL) {
        if (ext == &br ? !sc->brotli_static
                         || !gn_http_accepts_coding(&h->value, "br", 2)
                       : !sc->gzip_static
                         || !gn_http_accepts_coding(&h->value, "gzip", 4))
        {
            continue;
        }
        c = gn_http_file_open(r, &r->fdir, &r->fpath, ext,
                              !gn_file_conf(r->loc)->symlinks_outside_root,
                              &err);
        if (c == NULL || !c->is_file || c->mtime < e->mtime
            || gn_http_static_private(r, c, ext) != GN_OK)
        {
            continue;
        }
        if (ext == &br) {
            gn_str_set(&r->extra_headers, "Content-Encoding: br\r\n"
                       "Vary: Accept-Encoding\r\n");
        } else {
            gn_str_set(&r->extra_headers, "Content-Encoding: gzip\r\n"
                       "Vary: Accept-Encoding\r\n");
        }
        return c;
    }

    return e;
}


/* 206 with several ranges: multipart/byteranges. */
static gn_int_t
gn_http_static_multipart(gn_http_request_t *r, gn_fc_entry_t *e,
    gn_http_range_t *rg, gn_int_t n)
{
    static uint64_t  seq;
    gn_str_t         boundary, type;
    u_char          *p;
    size_t           len;
    gn_int_t         i;

    boundary.data = gn_pnalloc(r->pool, 32);
    if (boundary.data == NULL) {
        return GN_ERROR;
    }
    boundary.len = gn_http_multipart_boundary(boundary.data,
                                              ((uint64_t) getpid() << 32)
                                              ^ (uint64_t) ++seq
                                              ^ (uint64_t) gn_current_msec);
    type = r->content_type;

    r->content_length = gn_http_multipart_length(&boundary, &type, rg,
                                                 (gn_uint_t) n, e->size);
    if (r->content_length < 0) {
        return GN_ERROR;
    }

    for (i = 0; i < n; i++) {
        len = GN_HTTP_MULTIPART_HEADER_LEN(boundary.len, type.len);
        p = gn_pnalloc(r->pool, len);
        if (p == NULL) {
            return GN_ERROR;
        }
        len = gn_http_multipart_part_header(p, len, &boundary, &type, &rg[i],
                                            e->size);
        if (gn_http_add_mem(r, p, len) != GN_OK
            || gn_http_file_body(r, e, rg[i].start,
                                 rg[i].end - rg[i].start + 1) != GN_OK)
        {
            return GN_ERROR;
        }
    }

    len = boundary.len + 8;
    p = gn_pnalloc(r->pool, len);
    if (p == NULL) {
        return GN_ERROR;
    }
    len = gn_http_multipart_trailer(p, len, &boundary);
    if (gn_http_add_mem(r, p, len) != GN_OK) {
        return GN_ERROR;
    }

    r->content_type.len = sizeof("multipart/byteranges; boundary=") - 1
                          + boundary.len;
    r->content_type.data = gn_pnalloc(r->pool, r->content_type.len);
    if (r->content_type.data == NULL) {
        return GN_ERROR;
    }
    p = gn_cpymem(r->content_type.data, "multipart/byteranges; boundary=",
                  sizeof("multipart/byteranges; boundary=") - 1);
    memcpy(p, boundary.data, boundary.len);

    return GN_OK;
}


/* Range: returns GN_DECLINED to send the whole file. */
static gn_int_t
gn_http_static_range(gn_http_request_t *r, gn_fc_entry_t *e)
{
    gn_http_range_t  *rg;
    gn_int_t          n;
    u_char           *p;
    size_t            len;

    if (r->head.range.len == 0 || gn_static_conf(r->loc)->max_ranges == 0
        || r->head.method != GN_HTTP_GET
        || !gn_http_if_range(&r->head, &r->etag, r->last_modified))
    {
        return GN_DECLINED;
    }

    rg = gn_palloc(r->pool, (size_t) gn_static_conf(r->loc)->max_ranges
                            * sizeof(gn_http_range_t));
    if (rg == NULL) {
        return GN_ERROR;
    }

    n = gn_http_parse_range(r->head.range.data, r->head.range.len, e->size,
                            rg,
                            (gn_uint_t) gn_static_conf(r->loc)->max_ranges);
    if (n == 0) {
        return GN_DECLINED;
    }

    len = sizeof("Content-Range: \r\n") + GN_HTTP_CONTENT_RANGE_LEN;
    p = gn_pnalloc(r->pool, len);
    if (p == NULL) {
        return GN_ERROR;
    }
    r->extra_headers.data = p;

    if (n == GN_HTTP_RANGE_UNSATISFIABLE) {
        p = gn_cpymem(p, "Content-Range: ", 15);
        p += gn_http_content_range(p, NULL, e->size);
        p = gn_cpymem(p, "\r\n", 2);
        r->extra_headers.len = (size_t) (p - r->extra_headers.data);
        return gn_http_response_error(r, 416);
    }

    r->status = 206;

    if (n > 1) {
        r->extra_headers.len = 0;
        return gn_http_static_multipart(r, e, rg, n);
    }

    p = gn_cpymem(p, "Content-Range: ", 15);
    p += gn_http_content_range(p, &rg[0], e->size);
    p = gn_cpymem(p, "\r\n", 2);
    r->extra_headers.len = (size_t) (p - r->extra_headers.data);

    r->content_length = rg[0].end - rg[0].start + 1;
    return gn_http_file_body(r, e, rg[0].start, r->content_length);
}


gn_int_t
gn_http_static_handler(gn_http_request_t *r)
{
    gn_fc_entry_t  *e;
    gn_uint_t       status;
    gn_int_t        rc;
    int             err;

    if (r->head.method == GN_HTTP_OPTIONS) {
        r->status = 200;
        r->content_length = 0;
        gn_str_set(&r->extra_headers, "Allow: GET, HEAD, OPTIONS\r\n");
        return GN_OK;
    }

    if (!(r->head.method & (GN_HTTP_GET | GN_HTTP_HEAD))) {
        return gn_http_response_error(r, 405);
    }

    r->content_type.len = 0;

    rc = gn_http_file_map(r, &r->uri, &r->fdir, &r->fpath);
    if (rc != GN_OK) {
        return rc == GN_ERROR ? GN_ERROR : gn_http_response_error(r, 404);
    }

    if (r->uri.data[r->uri.len - 1] == '/') {
        e = gn_http_static_index(r, &err);
        if (e == NULL) {
            /* err 0: refused and logged (the private_files check) */
            return err ? gn_http_static_error(r, err)
                       : gn_http_response_error(r, 403);
        }

        if (e->is_dir) {
            return gn_http_static_dir(r, e);
        }

    } else {
        e = gn_http_file_open(r, &r->fdir, &r->fpath, NULL,
                              !gn_file_conf(r->loc)->symlinks_outside_root,
                              &err);
        if (e == NULL) {
            return gn_http_static_error(r, err);
        }

        if (e->is_dir) {
            return gn_http_static_redirect_dir(r);
        }

        if (!e->is_file) {
            return gn_http_response_error(r, 404);
        }

        if (gn_http_static_private(r, e, NULL) != GN_OK) {
            return gn_http_response_error(r, 403);
        }

        r->content_type = *gn_lookup_mime(r->loc, r->uri.data,
                                              r->uri.len);
        e = gn_http_static_precompressed(r, e);
    }

    r->status = 200;
    r->last_modified = gn_static_conf(r->loc)->last_modified ? e->mtime : -1;
    if (gn_static_conf(r->loc)->etag) {
        r->etag = e->etag;
    }

    if (gn_static_conf(r->loc)->etag) {
        status = gn_http_preconditions(&r->head, &r->etag, r->last_modified);

    } else {
        /* etag off: the entity-tag conditions are not ours to evaluate */
        gn_http_head_t  h = r->head;

        h.if_match.len = 0;
        h.if_none_match.len = 0;
        status = gn_http_preconditions(&h, &r->etag, r->last_modified);
    }

    if (status == 304) {
        r->status = 304;
        r->content_length = -1;
        return GN_OK;
    }
    if (status == 412) {
        return gn_http_response_error(r, 412);
    }

    r->accept_ranges = (gn_static_conf(r->loc)->max_ranges > 0);

    rc = gn_http_static_range(r, e);
    if (rc != GN_DECLINED) {
        return rc;
    }

    r->content_length = e->size;

    if (r->head.method == GN_HTTP_HEAD) {
        return GN_OK;
    }

    r->body_file = e;
    return gn_http_file_body(r, e, 0, e->size);
}


const gn_feature_t  gn_static_feature = {
    .name = "static", .commands = gn_http_static_commands,
    .conf_size = sizeof(gn_static_conf_t)
};
