/*
 * Static files. The path was decoded and normalised before we get here
 * (no ".." left, no NUL), so root + uri stays under root; symbolic links
 * inside the root are followed (the symlink policy is issue 3's).
 */

#include "gn_config.h"

#include "http_static.h"
#include "http_response.h"
#include "str.h"


/* Bodies up to this size are read into memory and go out in the same
 * sendmsg() as the head; larger ones are sent with sendfile(). */
#define GN_STATIC_INLINE_MAX   16384


static void
gn_http_static_close(void *data)
{
    int  fd = *(int *) data;

    close(fd);
}


/* Opens root + uri (+ name); returns fd or -1 with errno set. */
static int
gn_http_static_open(gn_http_request_t *r, const gn_str_t *name,
    struct stat *st, gn_str_t *path)
{
    gn_loc_conf_t  *lc = r->loc;
    u_char         *p;
    int             fd;

    path->len = lc->root.len + r->uri.len + (name ? name->len : 0);
    path->data = gn_pnalloc(r->pool, path->len + 1);
    if (path->data == NULL) {
        errno = ENOMEM;
        return -1;
    }

    p = gn_cpymem(path->data, lc->root.data, lc->root.len);
    p = gn_cpymem(p, r->uri.data, r->uri.len);
    if (name != NULL) {
        p = gn_cpymem(p, name->data, name->len);
    }
    *p = '\0';

    fd = open((char *) path->data, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1) {
        return -1;
    }

    if (fstat(fd, st) == -1) {
        close(fd);
        return -1;
    }

    return fd;
}


static gn_int_t
gn_http_static_redirect_dir(gn_http_request_t *r)
{
    gn_str_t  *q = &r->head.query;
    u_char    *p;

    /* Location: the raw path (still encoded, as the client sent it)
     * plus "/" and the query */
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
gn_http_static_error(gn_http_request_t *r, int err, const gn_str_t *path)
{
    switch (err) {

    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
        return gn_http_response_error(r, 404);

    case EACCES:
    case EPERM:
        gn_log_error(GN_LOG_ERR, &r->c->log, err, "open() \"%.*s\" failed",
                     GN_STR_ARG(path));
        return gn_http_response_error(r, 403);

    default:
        gn_log_error(GN_LOG_CRIT, &r->c->log, err, "open() \"%.*s\" failed",
                     GN_STR_ARG(path));
        return gn_http_response_error(r, 500);
    }
}


/* For "/dir/": the first index file that exists. */
static int
gn_http_static_index(gn_http_request_t *r, struct stat *st, gn_str_t *path,
    int *err)
{
    gn_str_t   *names;
    gn_uint_t   i;
    int         fd;

    names = r->loc->index->elts;
    *err = ENOENT;

    for (i = 0; i < r->loc->index->nelts; i++) {
        fd = gn_http_static_open(r, &names[i], st, path);
        if (fd != -1) {
            if (S_ISREG(st->st_mode)) {
                return fd;
            }
            close(fd);
            continue;
        }

        if (errno != ENOENT && errno != ENOTDIR) {
            *err = errno;
            return -1;
        }
    }

    /* a directory without an index file: no listing */
    *err = (*err == ENOENT) ? EACCES : *err;
    return -1;
}


static gn_int_t
gn_http_static_body(gn_http_request_t *r, int fd, struct stat *st)
{
    gn_pool_cleanup_t  *cln;
    u_char             *body;
    ssize_t             n;

    cln = gn_pool_cleanup_add(r->pool, sizeof(int));
    if (cln == NULL) {
        close(fd);
        return GN_ERROR;
    }
    *(int *) cln->data = fd;
    cln->handler = gn_http_static_close;

    r->content_length = st->st_size;

    if (r->head.method == GN_HTTP_HEAD || st->st_size == 0) {
        return GN_OK;
    }

    if (st->st_size <= GN_STATIC_INLINE_MAX || !r->loc->sendfile) {

        /* with sendfile off, large files also go through the pool
         * (issue 3 replaces this with chunked reads from the file cache) */
        body = gn_pnalloc(r->pool, (size_t) st->st_size);
        if (body == NULL) {
            return GN_ERROR;
        }

        n = pread(fd, body, (size_t) st->st_size, 0);
        if (n != st->st_size) {
            gn_log_error(GN_LOG_CRIT, &r->c->log, n == -1 ? errno : 0,
                         "pread(%lld) of a file failed or came up short",
                         (long long) st->st_size);
            return GN_ERROR;
        }

        r->iov[1].iov_base = body;
        r->iov[1].iov_len = (size_t) n;
        return GN_OK;
    }

    r->file_fd = fd;
    r->file_pos = 0;
    r->file_end = st->st_size;

    return GN_OK;
}


gn_int_t
gn_http_static_handler(gn_http_request_t *r)
{
    struct stat  st;
    gn_str_t     path;
    u_char      *p;
    int          fd, err;

    if (!(r->head.method & (GN_HTTP_GET | GN_HTTP_HEAD))) {
        return gn_http_response_error(r, 405);
    }

    if (r->uri.data[r->uri.len - 1] == '/') {
        fd = gn_http_static_index(r, &st, &path, &err);
        if (fd == -1) {
            return gn_http_static_error(r, err, &path);
        }

    } else {
        fd = gn_http_static_open(r, NULL, &st, &path);
        if (fd == -1) {
            return gn_http_static_error(r, errno, &path);
        }

        if (S_ISDIR(st.st_mode)) {
            close(fd);
            return gn_http_static_redirect_dir(r);
        }
    }

    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return gn_http_response_error(r, 404);
    }

    r->status = 200;
    r->content_type = *gn_cycle_mime_type(r->loc, path.data, path.len);
    r->last_modified = st.st_mtime;

    p = gn_pnalloc(r->pool, 2 * 16 + 4);
    if (p == NULL) {
        close(fd);
        return GN_ERROR;
    }
    r->etag.data = p;
    r->etag.len = (size_t) sprintf((char *) p, "\"%llx-%llx\"",
                                   (unsigned long long) st.st_mtime,
                                   (unsigned long long) st.st_size);

    return gn_http_static_body(r, fd, &st);
}
