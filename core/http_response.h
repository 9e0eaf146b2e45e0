/*
 * Response heads and error pages.
 */

#ifndef GN_CORE_HTTP_RESPONSE_H_INCLUDED
#define GN_CORE_HTTP_RESPONSE_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"


/* Builds the response head in r->iov[0] from r's response fields.
 * Returns GN_OK or GN_ERROR (out of memory). */
gn_int_t gn_http_response_head(gn_http_request_t *r);

/* Prepares a complete error response (small HTML body) for `status`.
 * Returns GN_OK or GN_ERROR. */
gn_int_t gn_http_response_error(gn_http_request_t *r, gn_uint_t status);

/* GN_OK if the server has a reason phrase for this status. */
gn_int_t gn_http_response_status_known(gn_uint_t status);

#endif /* GN_CORE_HTTP_RESPONSE_H_INCLUDED */
