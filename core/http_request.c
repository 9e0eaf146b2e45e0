/*
 * The request object, whatever carries it (http_request.h): the "http"
 * feature's directives and the request's own helpers.
 */

#include "gn_config.h"

#include "http_request.h"


/* The limits and timeouts of HTTP requests and connections (features.c's
 * "http"): plain slots, their defaults in their rows. */
static const gn_conf_cmd_t  gn_http_commands[] = {

    { gn_string("keepalive_timeout"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,
      gn_http_offset(keepalive_timeout), NULL, "75s" },
    { gn_string("keepalive_requests"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF,
      gn_http_offset(keepalive_requests), NULL, "1000" },
    { gn_string("client_header_timeout"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,
      gn_http_offset(client_header_timeout), NULL, "60s" },
    { gn_string("client_body_timeout"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,
      gn_http_offset(client_body_timeout), NULL, "60s" },
    { gn_string("send_timeout"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF, gn_http_offset(send_timeout),
      NULL, "60s" },
    { gn_string("client_max_request_line"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_LOC_CONF,
      gn_http_offset(client_max_request_line), NULL, "8k" },
    { gn_string("client_max_header_size"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_LOC_CONF,
      gn_http_offset(client_max_header_size), NULL, "32k" },
    { gn_string("client_max_headers"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF,
      gn_http_offset(client_max_headers), &gn_conf_num_min_1, "100" },
    { gn_string("client_max_body_size"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_LOC_CONF,
      gn_http_offset(client_max_body_size), NULL, "1m" },
    { gn_string("server_tokens"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_http_offset(server_tokens),
      NULL, "off" },
#if (GN_HAVE_HTTP2)
    { gn_string("http2"), GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_http_offset(http2),
      NULL, "on" },
    { gn_string("http2_max_concurrent_streams"),
      GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF,
      gn_http_offset(http2_max_concurrent_streams), &gn_conf_num_min_1,
      "128" },
    { gn_string("http2_max_glitches"),
      GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF,
      gn_http_offset(http2_max_glitches), NULL, "1000" },
#endif
    gn_conf_null_cmd
};


gn_str_t
gn_http_request_host(gn_http_request_t *r)
{
    gn_str_t  v;

    v = gn_http_host_name(&r->head.host);

    if (v.len == 0 && r->srv != NULL && r->srv->names != NULL
        && r->srv->names->nelts > 0)
    {
        v = *(gn_str_t *) r->srv->names->elts;
    }

    return v;
}


const gn_feature_t  gn_http_feature = {
    .name = "http", .commands = gn_http_commands,
    .conf_size = sizeof(gn_http_conf_t)
};
