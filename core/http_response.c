/*
 * Response heads and error pages.
 */

#include "gn_config.h"

#include "http_response.h"
#include "timer.h"


#define GN_SERVER_TOKENS   "gannet/" PACKAGE_VERSION

typedef struct {
    gn_uint_t   code;
    gn_str_t    line;
} gn_http_status_t;

static const gn_http_status_t  gn_http_statuses[] = {
    { 100, gn_string("100 Continue") },
    { 200, gn_string("200 OK") },
    { 204, gn_string("204 No Content") },
    { 206, gn_string("206 Partial Content") },
    { 301, gn_string("301 Moved Permanently") },
    { 302, gn_string("302 Found") },
    { 304, gn_string("304 Not Modified") },
    { 307, gn_string("307 Temporary Redirect") },
    { 308, gn_string("308 Permanent Redirect") },
    { 400, gn_string("400 Bad Request") },
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
};


const gn_str_t *
gn_http_status_line(gn_uint_t status)
{
    static gn_str_t  unknown = gn_string("500 Internal Server Error");
    gn_uint_t        i;

    for (i = 0; i < gn_nelems(gn_http_statuses); i++) {
        if (gn_http_statuses[i].code == status) {
            return &gn_http_statuses[i].line;
        }
    }

    return &unknown;
}


size_t
gn_http_time(u_char *buf, time_t t)
{
    struct tm  tm;

    gmtime_r(&t, &tm);
    return strftime((char *) buf, 30, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}


gn_int_t
gn_http_response_error(gn_http_request_t *r, gn_uint_t status)
{
    const gn_str_t  *line;
    u_char          *body;
    size_t           len;

    line = gn_http_status_line(status);

    /* a status we have no text for is our bug: answer a plain 500 */
    if (line->len < 3 || (gn_uint_t) atoi((char *) line->data) != status) {
        status = 500;
    }

    r->status = status;
    r->file_fd = -1;
    r->etag.len = 0;
    r->last_modified = -1;
    gn_str_set(&r->content_type, "text/html");

    if (status == 405) {
        gn_str_set(&r->extra_headers, "Allow: GET, HEAD\r\n");
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
    r->iov[1].iov_base = body;
    r->iov[1].iov_len = len;

    return GN_OK;
}


gn_int_t
gn_http_response_head(gn_http_request_t *r)
{
    const gn_str_t  *line;
    u_char          *buf, *p;
    size_t           len;
    gn_uint_t        body;

    line = gn_http_status_line(r->status);

    len = sizeof("HTTP/1.1 \r\n") + line->len
          + sizeof("Server: " GN_SERVER_TOKENS "\r\n")
          + sizeof("Date: \r\n") + gn_http_date.len
          + sizeof("Content-Type: \r\n") + r->content_type.len
          + sizeof("Content-Length: \r\n") + GN_INT_T_LEN
          + sizeof("Last-Modified: Mon, 28 Sep 1970 06:00:00 GMT\r\n")
          + sizeof("ETag: \r\n") + r->etag.len
          + sizeof("Location: \r\n") + r->location.len
          + sizeof("Connection: keep-alive\r\n")
          + r->extra_headers.len + 2;

    buf = gn_pnalloc(r->pool, len);
    if (buf == NULL) {
        return GN_ERROR;
    }

    p = gn_cpymem(buf, "HTTP/1.1 ", 9);
    p = gn_cpymem(p, line->data, line->len);
    p = gn_cpymem(p, "\r\n", 2);

    if (r->loc->server_tokens) {
        p = gn_cpymem(p, "Server: " GN_SERVER_TOKENS "\r\n",
                      sizeof("Server: " GN_SERVER_TOKENS "\r\n") - 1);
    } else {
        p = gn_cpymem(p, "Server: gannet\r\n", 16);
    }

    p = gn_cpymem(p, "Date: ", 6);
    p = gn_cpymem(p, gn_http_date.data, gn_http_date.len);
    p = gn_cpymem(p, "\r\n", 2);

    body = r->status >= 200 && r->status != 204 && r->status != 304;

    if (r->content_type.len && body) {
        p = gn_cpymem(p, "Content-Type: ", 14);
        p = gn_cpymem(p, r->content_type.data, r->content_type.len);
        p = gn_cpymem(p, "\r\n", 2);
    }

    if (r->content_length >= 0 && body) {
        p += sprintf((char *) p, "Content-Length: %lld\r\n",
                     (long long) r->content_length);
    }

    if (r->last_modified != -1) {
        p = gn_cpymem(p, "Last-Modified: ", 15);
        p += gn_http_time(p, r->last_modified);
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

    if (r->extra_headers.len) {
        p = gn_cpymem(p, r->extra_headers.data, r->extra_headers.len);
    }

    if (r->keepalive) {
        p = gn_cpymem(p, "Connection: keep-alive\r\n", 24);
    } else {
        p = gn_cpymem(p, "Connection: close\r\n", 19);
    }

    p = gn_cpymem(p, "\r\n", 2);

    r->iov[0].iov_base = buf;
    r->iov[0].iov_len = (size_t) (p - buf);
    r->header_bytes = (off_t) (p - buf);
    r->niov = 1;

    if (r->head.method == GN_HTTP_HEAD || !body) {
        r->header_only = 1;
        r->file_fd = -1;          /* the pool cleanup still closes it */
        r->file_pos = r->file_end = 0;

    } else if (r->iov[1].iov_len > 0) {
        r->niov = 2;
    }

    return GN_OK;
}
