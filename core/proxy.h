/*
 * The reverse proxy: `proxy_pass` to an upstream group or a URL, HTTP/1.1
 * to the upstream, and `fastcgi_pass` to a FastCGI responder (fastcgi.h),
 * both over connections pooled per child (upstream.h), with nginx's
 * directive names and semantics where they exist.
 *
 * It is a core handler on the request's asynchronous handler path (the
 * one modules use, http_module.c): the request body is read whole first
 * (bounded by client_max_body_size) so that a request can go to the next
 * server, or with *_request_buffering off sent as it comes (kept too, so
 * that a try that sent nothing can start again); the response is
 * streamed to the client as it comes, and the
 * upstream is read no faster than the client takes it (at most 256 KiB
 * waiting, then reading stops until the client drained it), so a fast
 * upstream and a slow client cost bounded memory.
 */

#ifndef GN_CORE_PROXY_H_INCLUDED
#define GN_CORE_PROXY_H_INCLUDED

#include "gn_config.h"

#include "http_request.h"
#include "upstream.h"
#include "access_log.h"
#include "tls_client.h"
#include "regex.h"


/* proxy_next_upstream's conditions */
#define GN_PROXY_NEXT_ERROR     0x01
#define GN_PROXY_NEXT_TIMEOUT   0x02
#define GN_PROXY_NEXT_INVALID   0x04    /* invalid_header */
#define GN_PROXY_NEXT_502       0x08
#define GN_PROXY_NEXT_503       0x10
#define GN_PROXY_NEXT_504       0x20
#define GN_PROXY_NEXT_OFF       0x80

typedef struct {
    gn_str_t             name;
    gn_log_format_t      value;          /* with variables */
    gn_uint_t            empty;          /* "": the field is not sent;
                                            fastcgi_param's if_not_empty:
                                            not when its value is "" */
} gn_proxy_header_t;

/* What proxy_pass and fastcgi_pass each have: where requests go and the
 * limits of an attempt (proxy_* and fastcgi_* of the same names). */
typedef struct {
    gn_upstream_group_t *group;          /* NULL: no such pass here */
    gn_str_t             pass_name;      /* a group's name, resolved once
                                            every block is read */
    gn_str_t             pass_file;      /* where the pass stands */
    gn_uint_t            pass_line;
    gn_msec_t            connect_timeout;
    gn_msec_t            send_timeout;
    gn_msec_t            read_timeout;
    size_t               buffer_size;    /* the response head, at most */
    gn_flag_t            buffering;      /* *_buffering */
    gn_flag_t            request_buffering;  /* *_request_buffering */
    size_t               buffers;        /* *_buffers N SIZE: N x SIZE */
    gn_uint_t            next_upstream;  /* GN_PROXY_NEXT_* */
    gn_int_t             next_upstream_tries;   /* 0: no limit */
} gn_proxy_pass_t;

/* The "proxy" feature's part of a level (feature.h). */
typedef struct {
    gn_proxy_pass_t      http;           /* proxy_pass (a location's own:
                                            never inherited) */
    gn_proxy_pass_t      fcgi;           /* fastcgi_pass (the same) */

    gn_str_t             host;           /* $proxy_host */
    gn_str_t             uri;            /* the URL's URI part */
    gn_uint_t            has_uri;
    gn_uint_t            tls;            /* https:// */
    gn_tls_client_t      tls_client;     /* ... its credentials */
    gn_flag_t            tls_verify;     /* proxy_tls_verify */
    gn_flag_t            tls_reuse;      /* proxy_tls_session_reuse */
    gn_str_t             tls_trusted;    /* proxy_tls_trusted_certificate */
    gn_str_t             tls_name;       /* proxy_tls_name */
    gn_flag_t            pass_request_headers;
    gn_flag_t            redirect;       /* proxy_redirect default|off */
    gn_array_t          *redirects;      /* proxy_redirect FROM TO: of
                                            gn_proxy_header_t (name FROM,
                                            value TO); with redirect */
    gn_array_t          *headers;        /* of gn_proxy_header_t; NULL:
                                            inherited */

    gn_array_t          *fcgi_params;    /* fastcgi_param, as headers */
    gn_flag_t            fcgi_keep_conn;
    gn_flag_t            fcgi_pass_request_headers;
    gn_str_t             fcgi_index;
    gn_regex_t          *fcgi_split;     /* fastcgi_split_path_info; NULL:
                                            none (inherited at merge) */

    /* the main level's: every group, named and implicit, by index */
    gn_array_t          *groups;         /* of gn_upstream_group_t * */
} gn_proxy_conf_t;

#define gn_proxy_conf(lc)                                                    \
    ((gn_proxy_conf_t *) (lc)->conf[GN_FEATURE_PROXY])

/* The proxy's handler for r's location, or NULL (http_core.c: r->module
 * then). */
void *gn_proxy_handler_for(gn_loc_conf_t *lc);

/* Server `index` of every group of the cycle (named and proxy_pass
 * URLs', in the order of the configuration; each group's servers in
 * their order): GN_OK with *group and *server, GN_DECLINED past the
 * last. Any process. */
gn_int_t gn_proxy_server(gn_cycle_t *cycle, gn_uint_t index,
    gn_upstream_group_t **group, gn_upstream_server_t **server);

/* The registry's "proxy": upstream, proxy_*. */
extern const gn_feature_t  gn_proxy_feature;

#endif /* GN_CORE_PROXY_H_INCLUDED */
