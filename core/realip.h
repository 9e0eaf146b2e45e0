/*
 * The client's address behind a load balancer or proxy (nginx's realip
 * module): `set_real_ip_from` (or `real_ip_from`) names the trusted
 * peers; from one of them, the address in `real_ip_header` (X-Real-IP by
 * default, X-Forwarded-For, any other field, or `proxy_protocol`: the
 * connection's PROXY protocol header) becomes the request's client
 * address -- what allow/deny match, $remote_addr and $remote_port log,
 * REMOTE_ADDR gives modules and CGI. With `real_ip_recursive on`, a
 * list's trusted addresses are skipped from the right, so the first
 * untrusted one is taken; off, its last one is.
 *
 * The settings are the main level's and the servers' (no location
 * level): the address is settled as soon as the request's server is
 * known (Host, SNI), before the modules' filter_headers and any check
 * of the head; with the PROXY protocol it is set as the request
 * starts, so a head the parser refuses is logged with it too.
 *
 * gn_realip_pick() is pure (unit-tested); gn_realip_apply() runs in a
 * child for every request of a server with trusted peers.
 */

#ifndef GN_CORE_REALIP_H_INCLUDED
#define GN_CORE_REALIP_H_INCLUDED

#include "gn_config.h"

#include <sys/socket.h>

#include "feature.h"
#include "access.h"


typedef struct {
    gn_array_t       *from;        /* of gn_access_rule_t; NULL: none */
    gn_str_t          header;      /* the field's name, or "proxy_protocol" */
    gn_int_t          recursive;
    gn_uint_t         proxy_protocol;  /* header is "proxy_protocol" */
    gn_uint_t         list;        /* ... a list (not X-Real-IP) */
} gn_realip_conf_t;

#define gn_realip_conf(lc)                                                    \
    ((gn_realip_conf_t *) (lc)->conf[GN_FEATURE_REALIP])

/* The registry's "realip": set_real_ip_from, real_ip_from,
 * real_ip_header, real_ip_recursive. */
extern const gn_feature_t  gn_realip_feature;


/*
 * The client's address from the values of the header field (vals[0 ..
 * n), in the order they came; a list across several fields is one list)
 * for a request from a trusted peer. `list` 0: each value is one address
 * (X-Real-IP; the last field wins); else comma-separated lists whose
 * addresses are tried from the right, skipping trusted ones when
 * `recursive` (the leftmost is taken when all are). An address may be
 * IPv4, IPv6, "[IPv6]", and either with ":port" (dropped). GN_OK with
 * *out set (port 0), GN_DECLINED when there is no address or the one
 * to be taken is not valid (the peer's address stays).
 */
gn_int_t gn_realip_pick(const gn_str_t *vals, gn_uint_t n, gn_uint_t list,
    const gn_access_rule_t *from, gn_uint_t nfrom, gn_uint_t recursive,
    struct sockaddr_storage *out);


struct gn_http_request_s;

/* Sets r's client address (r->peer, r->peer_text; NULL: the peer's) as
 * its server (r->srv) says: from the header, or the PROXY protocol, of
 * a trusted peer. GN_ERROR: out of memory. */
gn_int_t gn_realip_apply(struct gn_http_request_s *r);

/* The PROXY protocol part alone, as a request starts with the
 * listener's default server (before its head is parsed: a head that
 * is refused is logged with that address). */
void gn_realip_apply_proxy(struct gn_http_request_s *r);

#endif /* GN_CORE_REALIP_H_INCLUDED */
