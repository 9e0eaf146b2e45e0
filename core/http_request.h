/*
 * The life of an HTTP/1.x request in a child: read the head, parse it,
 * pick the server and location, run the handler, send the response, log,
 * then keep the connection alive or close it.
 */

#ifndef GN_CORE_HTTP_REQUEST_H_INCLUDED
#define GN_CORE_HTTP_REQUEST_H_INCLUDED

#include "gn_config.h"

#include "conn.h"
#include "cycle.h"
#include "http_parse.h"


typedef gn_int_t (*gn_http_handler_pt)(gn_http_request_t *r);

struct gn_http_request_s {
    gn_conn_t           *c;
    gn_pool_t           *pool;
    gn_http_head_t       head;
    size_t               head_len;
    gn_srv_conf_t       *srv;
    gn_loc_conf_t       *loc;
    gn_str_t             uri;            /* decoded, normalised path */
    gn_msec_t            start_msec;

    /* response */
    gn_uint_t            status;
    off_t                content_length; /* -1: none */
    gn_str_t             content_type;
    gn_str_t             location;       /* Location: */
    time_t               last_modified;  /* -1: none */
    gn_str_t             etag;
    gn_str_t             extra_headers;  /* raw "Name: value\r\n" lines */
    gn_uint_t            keepalive;
    gn_uint_t            header_only;
    gn_uint_t            header_sent;

    struct iovec         iov[2];         /* [0] head, [1] memory body */
    int                  niov;
    int                  file_fd;        /* file body, or -1 */
    off_t                file_pos;
    off_t                file_end;
    off_t                bytes_sent;
    off_t                header_bytes;
};


/* Called by conn.c for a new connection and on every event. */
void gn_http_init_conn(gn_conn_t *c);
void gn_http_conn_handler(gn_conn_t *c);

#endif /* GN_CORE_HTTP_REQUEST_H_INCLUDED */
