/*
 * TLS with GnuTLS: credentials and priorities loaded by the master before
 * fork, sessions made by the children, a non-blocking handshake driven by
 * the event loop, record I/O behind the connection's I/O vtable, SNI,
 * ALPN, the shared session cache and the shared ticket key.
 */

#ifndef GN_CORE_TLS_H_INCLUDED
#define GN_CORE_TLS_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"
#include "conn.h"


/* Master: loads what the cycle's TLS servers need (certificates, keys,
 * priorities, OCSP responses, the ticket key file). Pure configuration
 * work plus file reads; errors name the file and GnuTLS's reason.
 * Returns GN_OK or GN_ERROR with err filled. */
gn_int_t gn_tls_cycle_create(gn_cycle_t *cycle, char *err, size_t errlen);

/* Master, before fork: the shared session cache zone and the ticket key
 * for this cycle, reusing `old`'s zone when its size is unchanged (the
 * cache survives a reload). Returns GN_OK or GN_ERROR (logged). */
gn_int_t gn_tls_cycle_open(gn_cycle_t *cycle, gn_cycle_t *old,
    gn_log_t *log);

/* The session cache counters (a gn_scache_stats_t); GN_DECLINED when
 * there is no cache. */
gn_int_t gn_tls_cache_stats(gn_cycle_t *cycle, void *out);

/* Master: logs the cache counters (at exit). */
void gn_tls_log_stats(gn_cycle_t *cycle);

/* Child: the layer of TLS listeners (conn.h), which the protocol sets
 * on them at child start. start: a new connection's handshake, with the
 * protocol's time limit (c->listen->proto's handshake_timeout); SNI
 * picks the server block through its tls_server, plain HTTP is answered
 * 400 and reported to its tls_rejected; when the handshake completes,
 * its init_conn takes over the connection. shutdown: the session's last
 * record (the alert of the error that ended it, or close_notify), then
 * the TLS state freed, the socket left to plain reads. close: the TLS
 * state freed after a best effort at the last record. */
extern const gn_conn_layer_t  gn_tls_layer;

/* The server block SNI chose (NULL: none sent or not TLS). */
gn_srv_conf_t *gn_tls_sni_server(gn_conn_t *c);

/* For the access log and the API: empty strings on a plain connection
 * (and for an SNI the client did not send). */
void gn_tls_conn_info(gn_conn_t *c, gn_str_t *protocol, gn_str_t *cipher,
    gn_str_t *resumed, gn_str_t *sni);

/* The TLS directives, and their merge (feature.c's "tls" entry):
 * tls_protocols defaults to TLSv1.2 and TLSv1.3. */
extern const gn_conf_cmd_t  gn_tls_commands[];
gn_int_t gn_tls_merge_loc(gn_conf_t *cf, gn_loc_conf_t *lc,
    gn_loc_conf_t *prev);

#endif /* GN_CORE_TLS_H_INCLUDED */
