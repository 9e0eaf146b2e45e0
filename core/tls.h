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


#define GN_TLS_PROTO_12   0x1
#define GN_TLS_PROTO_13   0x2

/* The "tls" feature's part of a level (feature.h); a server's settings
 * at its server level, the session cache's at the main level. */
typedef struct {
    gn_uint_t         protocols;        /* GN_TLS_PROTO_* bits */
    gn_str_t          priority;         /* appended to the defaults */
    gn_flag_t         session_tickets;
    gn_array_t       *certs;            /* of gn_conf_path_t */
    gn_array_t       *keys;             /* of gn_conf_path_t, same order */
    gn_str_t          stapling;
    gn_uint_t         verify_client;    /* GN_TLS_VERIFY_* */
    gn_conf_path_t    client_ca;        /* tls_client_certificate */
    gn_conf_path_t    crl;              /* tls_crl */
    gn_int_t          verify_depth;

    gn_array_t       *memcached;        /* of gn_addr_t; NULL: off */
    gn_msec_t         memcached_timeout;
    gn_str_t          memcached_prefix;

    ssize_t           session_cache;    /* bytes; 0: off */
    gn_msec_t         session_timeout;
    gn_conf_path_t    ticket_key;       /* the path and the directive's
                                           file:line */
} gn_tls_conf_t;

/* tls_verify_client */
#define GN_TLS_VERIFY_OFF        0
#define GN_TLS_VERIFY_ON         1      /* no valid certificate: 400 */
#define GN_TLS_VERIFY_OPTIONAL   2      /* ... one that fails: 400 */
#define GN_TLS_VERIFY_NO_CA      3      /* optional_no_ca: never 400 */

#define gn_tls_conf(lc)    ((gn_tls_conf_t *) (lc)->conf[GN_FEATURE_TLS])
#define gn_tls_offset(f)   offsetof(gn_tls_conf_t, f)

/* The registry's "tls": the directives; at cycle creation the master
 * loads what the TLS servers need (certificates, keys, priorities, OCSP
 * responses, the ticket key file; errors name the file and GnuTLS's
 * reason); at open, before fork, the shared session cache zone and the
 * ticket key, reusing the old cycle's zone when its size is unchanged
 * (the cache survives a reload). */
extern const gn_feature_t  gn_tls_feature;

/* The session cache counters (a gn_scache_stats_t); GN_DECLINED when
 * there is no cache. */
gn_int_t gn_tls_cache_stats(gn_cycle_t *cycle, void *out);

/* The memcached tier's server i: its name and counters (summed over
 * the children); GN_DECLINED past the last one, or when there is no
 * such tier. */
gn_int_t gn_tls_memc_stats(gn_cycle_t *cycle, gn_uint_t i, gn_str_t *name,
    void *out);

/* The session-ticket key (never its bytes) and the ticket counters;
 * GN_DECLINED when no server has TLS. */
#define GN_TLS_KEY_SRC_NONE    0
#define GN_TLS_KEY_SRC_MADE    1        /* made by the master at start */
#define GN_TLS_KEY_SRC_FILE    2        /* tls_ticket_key_file */

typedef struct {
    gn_uint_t   source;         /* GN_TLS_KEY_SRC_* */
    char        id[17];         /* 16 hex digits of SHA-256(key) */
    uint64_t    created;        /* unix time: the file's mtime, or made */
    uint64_t    loaded;         /* when this configuration read it */
    uint64_t    period;         /* GnuTLS derives a new key this often, s */
    uint64_t    issued;         /* tickets sent */
    uint64_t    resumed_ticket; /* resumptions by a ticket */
    uint64_t    resumed_id;     /* ... by a session id */
} gn_tls_key_stats_t;

gn_int_t gn_tls_key_stats(gn_cycle_t *cycle, gn_tls_key_stats_t *out);

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

/* Whether every cipher suite server block sc's TLS settings allow is
 * one RFC 9113 9.2 lets HTTP/2 use (TLS 1.3, or 1.2 with AEAD and
 * (EC)DHE): a protocol offers h2 through ALPN only then. */
gn_uint_t gn_tls_srv_aead_pfs(gn_srv_conf_t *sc);

/* The protocol ALPN chose for c (empty: none, or not TLS). */
gn_str_t gn_tls_alpn(gn_conn_t *c);

/* For the access log and the API: empty strings on a plain connection
 * (and for an SNI the client did not send). */
/* The client's certificate on c (tls_verify_client), checked once a
 * connection: what `which` asks, in c's pool, or "" when there is none
 * (which: GN_TLS_CLIENT_*; VERIFY is "SUCCESS", "FAILED:reason" or
 * "NONE", as nginx's $ssl_client_verify). Child. */
#define GN_TLS_CLIENT_VERIFY       0
#define GN_TLS_CLIENT_S_DN         1    /* RFC 4514, as nginx's */
#define GN_TLS_CLIENT_I_DN         2
#define GN_TLS_CLIENT_SERIAL       3    /* hex */
#define GN_TLS_CLIENT_FINGERPRINT  4    /* SHA-1, hex */
#define GN_TLS_CLIENT_N            5
gn_str_t gn_tls_client(gn_conn_t *c, gn_uint_t which);

/* What tls_verify_client of the server sc says of c's certificate:
 * GN_OK (go on), or GN_DECLINED with *why set: the request gets 400
 * (nginx's 496 "no required certificate" and 495 "certificate error",
 * which it answers as 400). Child. */
gn_int_t gn_tls_client_check(gn_conn_t *c, gn_srv_conf_t *sc,
    const char **why);

void gn_tls_conn_info(gn_conn_t *c, gn_str_t *protocol, gn_str_t *cipher,
    gn_str_t *resumed, gn_str_t *sni);


#endif /* GN_CORE_TLS_H_INCLUDED */
