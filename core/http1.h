/*
 * HTTP/1 on a connection (http1.c): the protocol every listener serves
 * and the stream its requests reach their client through.
 */

#ifndef GN_CORE_HTTP1_H_INCLUDED
#define GN_CORE_HTTP1_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"


/* The HTTP/1 side of a connection (its c->data, HTTP's from the
 * listener's init_conn to the close): the framing state between
 * requests and the request on it. One per open connection, from a free
 * list; none per request. */
typedef struct {
    gn_http_request_t   *r;              /* the request on it, or NULL */
    gn_http_scan_t       scan;           /* the next head's end, so far */

    /* a request body still to be read past (discarded) */
    off_t                body_left;      /* Content-Length bytes */
    gn_uint_t            body_chunked;
    gn_http_chunked_t    chunked;
    off_t                body_max;
    gn_uint_t            requests;       /* started on this connection */
} gn_http_conn_t;

#define gn_http_conn(c)  ((gn_http_conn_t *) (c)->data)

/* Child start, before gn_conn_listen_start: HTTP/1 serves every
 * listener of the cycle, over TLS on a TLS listener (the transport
 * reaches it only through the listener's gn_conn_proto_t, see conn.h). */
void gn_http_listen_init(gn_cycle_t *cycle);

#endif /* GN_CORE_HTTP1_H_INCLUDED */
