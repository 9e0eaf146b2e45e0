/*
 * Response heads, error pages, and the response body as a list of
 * segments.
 */

#include "gn_config.h"

#include "http_response.h"
#include "http_file.h"
#include "http_headers.h"
#include "lookup.h"
#include "timer.h"
#include "str.h"


#define GN_SERVER_TOKENS   "gannet/" PACKAGE_VERSION

typedef struct {
    gn_uint_t   code;
    gn_str_t    line;
} gn_http_status_t;

static const gn_http_status_t  gn_http_statuses[] = {
    { 100, gn_string("100 Continue") },
    { 101, gn_string("101 Switching Protocols") },
    { 200, gn_string("200 OK") },
    { 201, gn_string("201 Created") },
    { 202, gn_string("202 Accepted") },
    { 204, gn_string("204 No Content") },
    { 206, gn_string("206 Partial Content") },
    { 301, gn_string("301 Moved Permanently") },
    { 302, gn_string("302 Found") },
    { 304, gn_string("304 Not Modified") },
    { 307, gn_string("307 Temporary Redirect") },
    { 308, gn_string("308 Permanent Redirect") },
    { 303, gn_string("303 See Other") },
    { 400, gn_string("400 Bad Request") },
    { 402, gn_string("402 Payment Required") },
    { 406, gn_string("406 Not Acceptable") },
    { 409, gn_string("409 Conflict") },
    { 410, gn_string("410 Gone") },
    { 415, gn_string("415 Unsupported Media Type") },
    { 418, gn_string("418 I'm a teapot") },
    { 422, gn_string("422 Unprocessable Content") },
    { 425, gn_string("425 Too Early") },
    { 426, gn_string("426 Upgrade Required") },
    { 428, gn_string("428 Precondition Required") },
    { 429, gn_string("429 Too Many Requests") },
    { 451, gn_string("451 Unavailable For Legal Reasons") },
    { 401, gn_string("401 Unauthorized") },
    { 403, gn_string("403 Forbidden") },
    { 404, gn_string("404 Not Found") },
    { 405, gn_string("405 Method Not Allowed") },
    { 408, gn_string("408 Request Timeout") },
    { 411, gn_string("411 Length Required") },
    { 412, gn_string("412 Precondition Failed") },
    { 413, gn_string("413 Content Too Large") },
    { 414, gn_string("414 URI Too Long") },
    { 416, gn_string("416 Range Not Satisfiable") },
    { 417, gn_string("417 Expectation Failed") },
    { 421, gn_string("421 Misdirected Request") },
    { 431, gn_string("431 Request Header Fields Too Large") },
    { 500, gn_string("500 Internal Server Error") },
    { 501, gn_string("501 Not Implemented") },
    { 502, gn_string("502 Bad Gateway") },
    { 503, gn_string("503 Service Unavailable") },
    { 504, gn_string("504 Gateway Timeout") },
    { 505, gn_string("505 HTTP Version Not Supported") },
    { 507, gn_string("507 Insufficient Storage") },
    { 508, gn_string("508 Loop Detected") },
    { 511, gn_string("511 Network Authentication Required") },
};


/* "404 Not Found", or NULL for a code without a reason phrase here. */
static const gn_str_t *
gn_http_status_line(gn_uint_t status)
{
    gn_uint_t  i;

    for (i = 0; i < gn_nelems(gn_http_statuses); i++) {
        if (gn_http_statuses[i].code == status) {
            return &gn_http_statuses[i].line;
        }
    }

    return NULL;
}


/* Decimal digits of a non-negative length (the hot path avoids printf). */
static u_char *
gn_http_off_text(u_char *p, off_t n)
{
    u_char  tmp[GN_INT_T_LEN], *t;

    t = tmp + sizeof(tmp);
    do {
        *--t = (u_char) ('0' + n % 10);
        n /= 10;
    } while (n > 0);

    return gn_cpymem(p, t, (size_t) (tmp + sizeof(tmp) - t));
}


/* Last-Modified: most responses repeat the few files in use, so the last
 * formatted time is kept (a child is single-threaded). */
static u_char *
gn_http_time_cached(u_char *p, time_t t)
{
    static time_t  last = -1;
    static u_char  text[32];
    static size_t  len;

    if (t != last) {
        len = gn_time_http(text, t);
        last = t;
    }

    return gn_cpymem(p, text, len);
}


gn_int_t
gn_http_response_status_known(gn_uint_t status)
{
    return gn_http_status_line(status) != NULL ? GN_OK : GN_DECLINED;
}


static gn_int_t
gn_http_add_seg(gn_http_request_t *r, u_char *p, size_t len, int fd,
    off_t off)
{
    gn_http_seg_t  *segs;

    if (r->segs == NULL) {
        r->segs = r->seg_inline;
        r->segs_cap = GN_HTTP_SEGS_INLINE;
        r->nsegs = 1;                       /* [0]: the head, set last */
    }

    if (len == 0) {
        return GN_OK;
    }

    if (r->nsegs == r->segs_cap) {
        segs = gn_palloc(r->pool, 2 * r->segs_cap * sizeof(gn_http_seg_t));
        if (segs == NULL) {
            return GN_ERROR;
        }
        memcpy(segs, r->segs, r->nsegs * sizeof(gn_http_seg_t));
        r->segs = segs;
        r->segs_cap *= 2;
    }

    r->segs[r->nsegs].pos = p;
    r->segs[r->nsegs].len = len;
    r->segs[r->nsegs].fd = fd;
    r->segs[r->nsegs].off = off;
    r->nsegs++;

    return GN_OK;
}


gn_int_t
gn_http_add_mem(gn_http_request_t *r, u_char *p, size_t len)
{
    return gn_http_add_seg(r, p, len, -1, 0);
}


gn_int_t
gn_http_add_file(gn_http_request_t *r, int fd, off_t off, off_t len)
{
    return gn_http_add_seg(r, NULL, (size_t) len, fd, off);
}


/* error_page: the configured file as the body of this error response. */
static gn_int_t
gn_http_error_page(gn_http_request_t *r, gn_uint_t status)
{
    gn_error_page_t  *ep;
    gn_fc_entry_t    *e;
    gn_uint_t         i;
    int               err;

    if (r->loc->error_pages == NULL || r->error_page_done) {
        return GN_DECLINED;
    }

    ep = r->loc->error_pages->elts;
    for (i = 0; i < r->loc->error_pages->nelts; i++) {
        if (ep[i].status == status) {
            break;
        }
    }
    if (i == r->loc->error_pages->nelts) {
        return GN_DECLINED;
    }

    r->error_page_done = 1;

    e = gn_http_file_open(r, &r->loc->root, &ep[i].uri, NULL,
                          !gn_file_conf(r->loc)->symlinks_outside_root, &err);
    if (e == NULL) {
        gn_log_error(GN_LOG_ERR, &r->c->log, err,
                     "error_page \"%.*s\" for %u cannot be opened",
                     GN_STR_ARG(&ep[i].uri), (unsigned) status);
        return GN_DECLINED;
    }

    if (!e->is_file) {
        return GN_DECLINED;
    }

    r->content_type = *gn_lookup_mime(r->loc, ep[i].uri.data,
                                          ep[i].uri.len);
    r->content_length = e->size;

    return gn_http_file_body(r, e, 0, e->size);
}


static gn_uint_t
gn_http_has_resp_header(gn_http_request_t *r, const char *name)
{
    gn_http_header_t  *h;
    gn_uint_t          i;
    size_t             n = strlen(name);

    for (i = 0; r->resp_headers && i < r->resp_headers->nelts; i++) {
        h = &((gn_http_header_t *) r->resp_headers->elts)[i];
        if (h->name.len == n
            && gn_strncasecmp(h->name.data, (u_char *) name, n) == 0)
        {
            return 1;
        }
    }

    return 0;
}


gn_int_t
gn_http_response_error(gn_http_request_t *r, gn_uint_t status)
{
    const gn_str_t  *line;
    u_char          *body;
    size_t           len;
    gn_int_t         rc;

    line = gn_http_status_line(status);
    if (line == NULL) {
        status = 500;                 /* no text for it: our bug */
        line = gn_http_status_line(status);
    }

    r->status = status;
    r->etag.len = 0;
    r->last_modified = -1;
    r->accept_ranges = 0;
    r->segs = NULL;                   /* drop any body set up so far */
    r->body_file = NULL;
    r->nsegs = 0;
    gn_str_set(&r->content_type, "text/html");

    if (status == 405 && !gn_http_has_resp_header(r, "Allow")) {
        /* the static files' methods, unless a module said otherwise */
        gn_str_set(&r->extra_headers, "Allow: GET, HEAD, OPTIONS\r\n");
    } else if (status != 416) {
        r->extra_headers.len = 0;
    }

    if (status < 400) {               /* redirects: a short body too */
        r->content_length = 0;
    }

    if (status >= 400) {
        rc = gn_http_error_page(r, status);
        if (rc != GN_DECLINED) {
            return rc;
        }
        r->segs = NULL;
        r->nsegs = 0;
        gn_str_set(&r->content_type, "text/html");
    }

    len = 2 * line->len + 128;
    body = gn_pnalloc(r->pool, len);
    if (body == NULL) {
        return GN_ERROR;
    }

    len = (size_t) snprintf((char *) body, len,
                            "<html>\r\n<head><title>%.*s</title></head>\r\n"
                            "<body>\r\n<center><h1>%.*s</h1></center>\r\n"
                            "<hr><center>gannet</center>\r\n</body>\r\n"
                            "</html>\r\n",
                            GN_STR_ARG(line), GN_STR_ARG(line));

    r->content_length = (off_t) len;

    return gn_http_add_mem(r, body, len);
}


gn_int_t
gn_http_response_head(gn_http_request_t *r)
{
    const gn_str_t    *line;
    gn_http_header_t  *h;
    gn_str_t           added;
    u_char            *buf, *p;
    size_t             len;
    gn_uint_t          body, i;

    line = gn_http_status_line(r->status);
    if (line == NULL) {
        r->status = 500;
        line = gn_http_status_line(500);
    }

    /* add_header, expires, tls_hsts: first, as expires may drop fields */
    if (gn_http_headers_build(r, &added) != GN_OK) {
        return GN_ERROR;
    }

    if (r->segs == NULL && gn_http_add_mem(r, NULL, 0) != GN_OK) {
        return GN_ERROR;
    }

    len = sizeof("HTTP/1.1 \r\n") + line->len
          + sizeof("Server: " GN_SERVER_TOKENS "\r\n")
          + sizeof("Date: \r\n") + gn_http_date.len
          + sizeof("Content-Type: \r\n") + r->content_type.len
          + sizeof("Content-Length: \r\n") + GN_INT_T_LEN
          + sizeof("Last-Modified: Mon, 28 Sep 1970 06:00:00 GMT\r\n")
          + sizeof("ETag: \r\n") + r->etag.len
          + sizeof("Location: \r\n") + r->location.len
          + sizeof("Accept-Ranges: bytes\r\n")
          + sizeof("Connection: keep-alive\r\n")
          + sizeof("Transfer-Encoding: chunked\r\n")
          + r->extra_headers.len + added.len + 2;

    for (i = 0; r->resp_headers && i < r->resp_headers->nelts; i++) {
        h = &((gn_http_header_t *) r->resp_headers->elts)[i];
        len += h->name.len + h->value.len + 4;
    }

    buf = gn_pnalloc(r->pool, len);
    if (buf == NULL) {
        return GN_ERROR;
    }

    p = gn_cpymem(buf, "HTTP/1.1 ", 9);
    p = gn_cpymem(p, line->data, line->len);
    p = gn_cpymem(p, "\r\n", 2);

    if (gn_http_conf(r->loc)->server_tokens) {
        p = gn_cpymem(p, "Server: " GN_SERVER_TOKENS "\r\n",
                      sizeof("Server: " GN_SERVER_TOKENS "\r\n") - 1);
    } else {
        p = gn_cpymem(p, "Server: gannet\r\n", 16);
    }

    p = gn_cpymem(p, "Date: ", 6);
    p = gn_cpymem(p, gn_http_date.data, gn_http_date.len);
    p = gn_cpymem(p, "\r\n", 2);

    /* RFC 9110 6.4.1: no content with 1xx, 204 and 304 */
    body = r->status >= 200 && r->status != 204 && r->status != 304;

    if (r->content_type.len && body) {
        p = gn_cpymem(p, "Content-Type: ", 14);
        p = gn_cpymem(p, r->content_type.data, r->content_type.len);
        p = gn_cpymem(p, "\r\n", 2);
    }

    if (r->content_length >= 0 && body) {
        p = gn_cpymem(p, "Content-Length: ", 16);
        p = gn_http_off_text(p, r->content_length);
        p = gn_cpymem(p, "\r\n", 2);
    }

    if (r->last_modified != -1) {
        p = gn_cpymem(p, "Last-Modified: ", 15);
        p = gn_http_time_cached(p, r->last_modified);
        p = gn_cpymem(p, "\r\n", 2);
    }

    if (r->etag.len) {
        p = gn_cpymem(p, "ETag: ", 6);
        p = gn_cpymem(p, r->etag.data, r->etag.len);
        p = gn_cpymem(p, "\r\n", 2);
    }

    if (r->location.len) {
        p = gn_cpymem(p, "Location: ", 10);
        p = gn_cpymem(p, r->location.data, r->location.len);
        p = gn_cpymem(p, "\r\n", 2);
    }

    if (r->accept_ranges) {
        p = gn_cpymem(p, "Accept-Ranges: bytes\r\n", 22);
    }

    if (r->extra_headers.len) {
        p = gn_cpymem(p, r->extra_headers.data, r->extra_headers.len);
    }

    for (i = 0; r->resp_headers && i < r->resp_headers->nelts; i++) {
        h = &((gn_http_header_t *) r->resp_headers->elts)[i];
        p = gn_cpymem(p, h->name.data, h->name.len);
        p = gn_cpymem(p, ": ", 2);
        p = gn_cpymem(p, h->value.data, h->value.len);
        p = gn_cpymem(p, "\r\n", 2);
    }

    if (added.len) {
        p = gn_cpymem(p, added.data, added.len);
    }

    if (r->chunked_out && body) {
        p = gn_cpymem(p, "Transfer-Encoding: chunked\r\n", 28);
    }

    if (r->keepalive) {
        p = gn_cpymem(p, "Connection: keep-alive\r\n", 24);
    } else {
        p = gn_cpymem(p, "Connection: close\r\n", 19);
    }

    p = gn_cpymem(p, "\r\n", 2);

    r->segs[0].pos = buf;
    r->segs[0].len = (size_t) (p - buf);
    r->segs[0].fd = -1;
    r->segs[0].off = 0;
    r->header_bytes = (off_t) (p - buf);
    r->cur = 0;

    if (r->head.method == GN_HTTP_HEAD || !body) {
        r->header_only = 1;
        r->nsegs = 1;
    }

    return GN_OK;
}
