/*
 * The static file handler: GET and HEAD of files under `root`.
 */

#ifndef GN_CORE_HTTP_STATIC_H_INCLUDED
#define GN_CORE_HTTP_STATIC_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"


/* Sets up r's response (status, headers, body file or error page).
 * Returns GN_OK or GN_ERROR (internal failure: the caller answers 500). */
gn_int_t gn_http_static_handler(gn_http_request_t *r);

#endif /* GN_CORE_HTTP_STATIC_H_INCLUDED */
