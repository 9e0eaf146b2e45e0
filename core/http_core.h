/*
 * The phases of a request, whatever protocol carries it (http_core.c):
 * a protocol parses a head into r (r->head, r->stream set) and calls
 * gn_http_core_start; the rest goes through r->stream.
 */

#ifndef GN_CORE_HTTP_CORE_H_INCLUDED
#define GN_CORE_HTTP_CORE_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"


/* The head is parsed: the modules' header filters, then the server,
 * checks, path, rules, access and handler; the response (or the body's
 * reading, or a module's request) starts through r->stream. */
void gn_http_core_start(gn_http_request_t *r);

/* The stream read past the body of a request the static files serve:
 * they set up the response, which is sent. */
void gn_http_core_body_read(gn_http_request_t *r);

/* The request's access-log line and counts (r->conn_requests set by its
 * protocol): once, at its end, whatever the end. */
void gn_http_core_log(gn_http_request_t *r);

#endif /* GN_CORE_HTTP_CORE_H_INCLUDED */
