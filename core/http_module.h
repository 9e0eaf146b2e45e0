/*
 * Requests served by a module's handler, and the request filters: what
 * the module asked for through the API (headers, writes, files, flush,
 * finish, body) turned into the connection's state machine.
 */

#ifndef GN_CORE_HTTP_MODULE_H_INCLUDED
#define GN_CORE_HTTP_MODULE_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"


#define GN_HTTP_FILTER_HEADERS   0
#define GN_HTTP_FILTER_MAPPED    1
#define GN_HTTP_FILTER_LOG       2

/* Runs one kind of filter of every loaded module. Returns GN_OK, or an
 * HTTP status (400..599) that ends the request, or GN_ERROR (a 500). */
gn_int_t gn_http_module_filters(gn_http_request_t *r, gn_uint_t which);

/* The response set up in r is sent (rc GN_OK; gzip.h may compress it
 * first, or run its own handler to send it), else a 500 is (rc
 * GN_ERROR: setting it up failed), else the request is aborted. */
void gn_http_answer(gn_http_request_t *r, gn_int_t rc);

/* Runs r->module's handler and what follows from it. */
void gn_http_module_run(gn_http_request_t *r);

/* From the body reader: a piece of the body, and its end (status GN_OK)
 * or failure (400 or 413). */
void gn_http_module_body(gn_http_request_t *r, u_char *data, size_t len);
void gn_http_module_body_done(gn_http_request_t *r, gn_uint_t status);

/* For a stream's frame and frame_end: appends bytes to r's buffer of
 * streamed bytes not yet sent (r->sbuf). GN_OK or GN_ERROR (memory). */
gn_int_t gn_http_sbuf_append(gn_http_request_t *r, const void *data,
    size_t len);

/* From a stream, after it took streamed bytes out of r->sbuf: runs a
 * module's on_drained callback (from the loop) once few are left. */
void gn_http_module_sent(gn_http_request_t *r);

#endif /* GN_CORE_HTTP_MODULE_H_INCLUDED */
