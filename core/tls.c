/*
 * TLS with GnuTLS.
 *
 * Master, at configuration time: one certificate credential and one
 * priority cache per server block with TLS, a per-listener context (the
 * session-cache key prefix), the ticket key. Before fork: the shared
 * session cache zone. Children: a gnutls session per connection,
 * GNUTLS_NONBLOCK on the connection's own socket, the handshake resumed
 * on readiness, SNI choosing the server block in the post-client-hello
 * callback, then record I/O through gn_tls_ops.
 *
 * Resumption (doc/internals.md section 5): TLS 1.2 session
 * IDs go to the shared cache through gnutls_db_set_{store,retrieve,
 * remove}_function; tickets (TLS 1.3 and 1.2) are encrypted with keys
 * GnuTLS derives from one master key made by the master before fork, so
 * every child accepts every ticket. Every session uses the same cache
 * expiration, else children would derive different ticket keys.
 */

#include "gn_config.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <poll.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <gnutls/crypto.h>

#include "tls.h"
#include "tls_scache.h"
#include "tls_hello.h"
#include "memc.h"
#include "shm.h"
#include "scoreboard.h"
#include "timer.h"
#include "log.h"
#include "sendq.h"
#include "str.h"


#define GN_TLS_RECORD        16384
#define GN_TLS_INBUF         4096     /* read-ahead: a request, a flight */
#define GN_TLS_SCACHE_DATA   2048     /* a serialised TLS 1.2 session */
#define GN_TLS_SPINS         8192     /* see gn_tls_again() */

/* TLS 1.2 and 1.3, forward secrecy, AEAD only (no CBC, no SHA-1 MAC),
 * X25519 then the NIST curves, never FFDHE; server's preference. */
#define GN_TLS_DEFAULT_PRIORITY                                               \
    "-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-VERS-DTLS-ALL"                      \
    ":-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305"               \
    ":+AES-128-CCM:+AES-256-CCM"                                              \
    ":-MAC-ALL:+AEAD"                                                         \
    ":-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"                                        \
    ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1"             \
    ":-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:-SIGN-DSA-SHA1"                         \
    ":%SERVER_PRECEDENCE"


#define GN_TLS_GROUPS   8        /* groups of a priority we can move first */
#define GN_TLS_SHARES   4        /* key shares of a ClientHello we look at */

typedef struct {
    gnutls_certificate_credentials_t   cred;
    gnutls_priority_t                  prio;
    /* prio with one of its groups moved first, for each of its first
     * GN_TLS_GROUPS groups that has a TLS code point, in prio's order
     * (gprio[k] is prio itself for prio's first group): a TLS 1.3 client
     * whose key share is for one of our groups gets that group at once
     * instead of a HelloRetryRequest for our first one */
    gnutls_priority_t                  gprio[GN_TLS_GROUPS];
    uint16_t                           gcode[GN_TLS_GROUPS];
    gn_uint_t                          ngroups;
    gn_uint_t                          tickets;
    gn_uint_t                          aead_pfs;   /* see tls.h */
    gn_uint_t                          tls13;      /* prio allows it */
    gn_uint_t                          verify;     /* GN_TLS_VERIFY_* */
    gn_uint_t                          verify_depth;
    /* the block's identity for the memcached tier: certificates and
     * settings, not where it listens (machines of a farm differ) */
    u_char                             farm_id[16];
    gn_srv_conf_t                     *srv;
} gn_tls_srv_t;

/* One per TLS listener: what every session on it starts with. */
typedef struct {
    gn_listen_t      *ls;
    uint64_t          ctx_id;       /* session-cache key prefix */
} gn_tls_listen_t;

typedef struct {
    gn_shm_zone_t    *zone;
    gn_scache_t      *scache;       /* NULL: cache off */
    time_t            timeout;      /* seconds */
    gnutls_datum_t    ticket_key;
    gn_uint_t         ntls;         /* servers with TLS */
    gn_uint_t         key_source;   /* GN_TLS_KEY_SRC_*, see tls.h */
    time_t            key_created;  /* the file's mtime, or when made */
    time_t            key_loaded;
    char              key_id[17];   /* hex of SHA-256(key), cut */
    gn_memc_conf_t   *memc;         /* NULL: no memcached tier */
    gn_shm_zone_t    *memc_zone;    /* its counters */
    gn_msec_t         memc_timeout;
    gn_str_t          memc_prefix;
} gn_tls_cycle_t;

typedef struct {
    gnutls_session_t  session;
    gn_tls_listen_t  *lctx;
    gn_srv_conf_t    *sni_srv;      /* chosen by SNI, or NULL */
    gn_srv_conf_t    *hello_srv;    /* ... as the ClientHello came in */
    size_t            out_len;      /* plaintext of the record being
                                       sent (GnuTLS holds it), 0: none */
    u_char           *in;           /* read-ahead, held while not empty */
    size_t            in_pos;
    size_t            in_end;
    unsigned          drained:1;    /* in's recv() emptied the socket */
    unsigned          eagain:1;     /* the last pull met an empty socket */
    unsigned          ended:1;      /* alert or close_notify is out */
    unsigned          refused:1;    /* a renegotiation was refused */
    unsigned          pulled:1;     /* the last GnuTLS call read */
    unsigned          spins:14;     /* GNUTLS_E_AGAIN without a read */
    unsigned          more:1;       /* more follows at once: MSG_MORE */
    unsigned          peeked:1;     /* first byte checked: it is TLS */
    unsigned          established:1;  /* the handshake is done */
    unsigned          tickets:2;    /* TLS 1.3 session tickets due */
    unsigned          nshares:3;
    unsigned          looked:1;     /* the shared memory was asked for
                                       sid before the handshake */
    unsigned          db_hit:1;     /* the session came from a cache */
    uint16_t          shares[GN_TLS_SHARES];  /* key share groups of the
                                                 last ClientHello */
    gn_memc_op_t     *mop;          /* the memcached lookup waited for */
    gn_timer_t        mtimer;       /* its budget; then the resumption */
    u_char           *pref;         /* the session found for sid, or NULL
                                       (malloc) */
    size_t            pref_len;
    size_t            sid_len;
    u_char            sid[32];
    int               fatal;        /* the GnuTLS error that ends the
                                       session: its alert goes out at
                                       the close, not close_notify */
    char              sni[256];
    /* the client's certificate, looked at once (gn_tls_client) */
    gn_uint_t         client_done;
    gn_uint_t         client_status;  /* GnuTLS's verify bits; 0 good */
    gn_uint_t         client_none;    /* no certificate was sent */
    gn_uint_t         client_owned;   /* bits: client[i] is malloc()ed */
    gn_str_t          client[GN_TLS_CLIENT_N];
} gn_tls_conn_t;



static char *gn_tls_conf_file(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_tls_conf_protocols(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_tls_conf_session_cache(gn_conf_t *cf,
    const gn_conf_cmd_t *cmd, void *conf);
static char *gn_tls_conf_memcached(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_tls_conf_memc_prefix(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

static const gn_conf_enum_t  gn_tls_verify_modes[] = {
    { gn_string("off"), GN_TLS_VERIFY_OFF },
    { gn_string("on"), GN_TLS_VERIFY_ON },
    { gn_string("optional"), GN_TLS_VERIFY_OPTIONAL },
    { gn_string("optional_no_ca"), GN_TLS_VERIFY_NO_CA },
    { gn_null_string, 0 }
};


/* The TLS directives (features.c's "tls"): certificates per server,
 * protocols per server or for all, the session cache for all. */
static const gn_conf_cmd_t  gn_tls_commands[] = {

    { gn_string("tls_certificate"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_tls_conf_file, GN_CONF_LOC_CONF, gn_tls_offset(certs), NULL, NULL },
    { gn_string("tls_certificate_key"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_tls_conf_file, GN_CONF_LOC_CONF, gn_tls_offset(keys), NULL, NULL },
    { gn_string("tls_stapling_file"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_path_slot, GN_CONF_LOC_CONF, gn_tls_offset(stapling),
      NULL, NULL },
    { gn_string("tls_verify_client"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_enum_slot, GN_CONF_LOC_CONF,
      gn_tls_offset(verify_client), gn_tls_verify_modes, "off" },
    { gn_string("tls_client_certificate"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_file_slot, GN_CONF_LOC_CONF, gn_tls_offset(client_ca),
      NULL, NULL },
    { gn_string("tls_crl"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_file_slot, GN_CONF_LOC_CONF, gn_tls_offset(crl),
      NULL, NULL },
    { gn_string("tls_verify_depth"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_LOC_CONF, gn_tls_offset(verify_depth),
      &gn_conf_num_min_1, "1" },
    { gn_string("tls_protocols"), GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_1MORE,
      gn_tls_conf_protocols, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("tls_priority"), GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF,
      gn_tls_offset(priority), NULL, NULL },
    { gn_string("tls_session_tickets"),
      GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_tls_offset(session_tickets), NULL, "on" },
    { gn_string("tls_session_cache"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_tls_conf_session_cache, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("tls_session_timeout"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,
      gn_tls_offset(session_timeout), NULL, "300s" },
    { gn_string("tls_session_memcached"), GN_CONF_MAIN | GN_CONF_1MORE,
      gn_tls_conf_memcached, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("tls_session_memcached_timeout"),
      GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF,
      gn_tls_offset(memcached_timeout), NULL, "20ms" },
    { gn_string("tls_session_memcached_prefix"),
      GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_tls_conf_memc_prefix, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("tls_ticket_key_file"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_file_slot, GN_CONF_LOC_CONF,
      gn_tls_offset(ticket_key), NULL, NULL },
    gn_conf_null_cmd
};


/* The zone of the key the master makes (when there is no key file) and
 * of the ticket counters: made once for the life of the master, passed
 * on by a binary upgrade. */
typedef struct {
    u_char      key[64];
    int64_t     created;
    uint64_t    issued;         /* tickets sent */
    uint64_t    resumed_ticket; /* resumptions by a ticket */
    uint64_t    resumed_id;     /* ... by a session id */
} gn_tls_keys_t;

static gn_tls_keys_t  *gn_tls_keys;
static u_char         *gn_tls_in_free;            /* free read-ahead bufs */
static u_char          gn_tls_gather[GN_TLS_RECORD];  /* a record's bytes */

static ssize_t gn_tls_recv(gn_conn_t *c, u_char *buf, size_t len);
static ssize_t gn_tls_writev(gn_conn_t *c, struct iovec *iov, int n,
    int more);
static ssize_t gn_tls_sendfile(gn_conn_t *c, int fd, off_t *off, size_t len);
static ssize_t gn_tls_fill(gn_conn_t *c);
static void gn_tls_in_put(gn_tls_conn_t *t);
static void gn_tls_established(gn_conn_t *c);
static ssize_t gn_tls_pull(gnutls_transport_ptr_t ptr, void *data,
    size_t len);
static int gn_tls_pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms);
static ssize_t gn_tls_push(gnutls_transport_ptr_t ptr, const giovec_t *iov,
    int iovcnt);

static void gn_tls_conn_start(gn_conn_t *c);
static void gn_tls_handshake(gn_conn_t *c);
static gn_int_t gn_tls_conn_shutdown(gn_conn_t *c);
static void gn_tls_conn_close(gn_conn_t *c);
static void gn_tls_farm_resume(gn_timer_t *timer);

static const gn_conn_ops_t  gn_tls_ops = {
    gn_tls_recv,
    gn_tls_writev,
    gn_tls_sendfile
};

const gn_conn_layer_t  gn_tls_layer = {
    gn_tls_conn_start,
    gn_tls_conn_shutdown,
    gn_tls_conn_close
};


/* ---- configuration (master) ------------------------------------------ */

static void
gn_tls_srv_cleanup(void *data)
{
    gn_tls_srv_t  *ts = data;
    gn_uint_t      k;

    if (ts->cred != NULL) {
        gnutls_certificate_free_credentials(ts->cred);
    }
    for (k = 0; k < ts->ngroups; k++) {
        if (ts->gprio[k] != ts->prio) {
            gnutls_priority_deinit(ts->gprio[k]);
        }
    }
    if (ts->prio != NULL) {
        gnutls_priority_deinit(ts->prio);
    }
}


/* The TLS code point of a GnuTLS group name; 0: none we know. */
static uint16_t
gn_tls_group_code(const char *name)
{
    static const struct { const char *name; uint16_t code; }  groups[] = {
        { "SECP256R1", 23 }, { "SECP384R1", 24 }, { "SECP521R1", 25 },
        { "X25519", 29 }, { "X448", 30 },
        { "FFDHE2048", 256 }, { "FFDHE3072", 257 }, { "FFDHE4096", 258 },
        { "FFDHE6144", 259 }, { "FFDHE8192", 260 }
    };
    size_t  i;

    for (i = 0; name != NULL && i < sizeof(groups) / sizeof(groups[0]); i++) {
        if (strcmp(name, groups[i].name) == 0) {
            return groups[i].code;
        }
    }
    return 0;
}


/* ts->gprio[]: the priority string prio (already ts->prio) with each of
 * its groups in turn moved first.  GnuTLS, when the server's preference
 * rules, picks the server's first group the client supports and sends a
 * HelloRetryRequest when the client's key share is for another (OpenSSL
 * told "-groups P-256:X25519" sends one P-256 share): a round trip and a
 * second ClientHello for a group we would have taken as well. */
static gn_int_t
gn_tls_group_prios(gn_pool_t *pool, gn_tls_srv_t *ts, const char *prio,
    char *err, size_t errlen)
{
    const unsigned int  *list;
    const char          *name;
    char                *s, *p, *end;
    size_t               len;
    uint16_t             code;
    int                  n, i, j, rc;

    n = gnutls_priority_group_list(ts->prio, &list);
    len = strlen(prio) + sizeof(":-GROUP-ALL");
    for (i = 0; i < n; i++) {
        name = gnutls_group_get_name(list[i]);
        len += name != NULL ? sizeof(":+GROUP-") + strlen(name) : 0;
    }
    s = gn_pnalloc(pool, len);
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }
    end = s + len;

    for (i = 0; i < n && ts->ngroups < GN_TLS_GROUPS; i++) {
        name = gnutls_group_get_name(list[i]);
        code = gn_tls_group_code(name);
        if (code == 0) {
            continue;
        }

        ts->gcode[ts->ngroups] = code;
        if (i == 0) {
            ts->gprio[ts->ngroups++] = ts->prio;
            continue;
        }

        p = s + snprintf(s, len, "%s:-GROUP-ALL:+GROUP-%s", prio, name);
        for (j = 0; j < n; j++) {
            if (j != i && gnutls_group_get_name(list[j]) != NULL) {
                p += snprintf(p, (size_t) (end - p), ":+GROUP-%s",
                              gnutls_group_get_name(list[j]));
            }
        }

        rc = gnutls_priority_init2(&ts->gprio[ts->ngroups], s, NULL,
                                   GNUTLS_PRIORITY_INIT_DEF_APPEND);
        if (rc != GNUTLS_E_SUCCESS) {
            snprintf(err, errlen, "gnutls_priority_init2() failed for the "
                     "group %s: %s", name, gnutls_strerror(rc));
            return GN_ERROR;
        }
        ts->ngroups++;
    }

    return GN_OK;
}


/* Whether every cipher suite prio allows is one RFC 9113 9.2 lets
 * HTTP/2 run on: TLS 1.3's, or TLS 1.2's with an AEAD cipher and an
 * ephemeral (EC)DHE key exchange. */
static gn_uint_t
gn_tls_prio_aead_pfs(gnutls_priority_t prio)
{
    gnutls_kx_algorithm_t       kx;
    gnutls_cipher_algorithm_t   cipher;
    gnutls_mac_algorithm_t      mac;
    gnutls_protocol_t           min;
    unsigned int                i, idx;
    unsigned char               id[2];
    int                         rc;

    for (i = 0; /* void */; i++) {
        rc = gnutls_priority_get_cipher_suite_index(prio, i, &idx);
        if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) {
            return 1;
        }
        if (rc != GNUTLS_E_SUCCESS) {
            continue;                   /* not available: skipped */
        }
        if (gnutls_cipher_suite_info(idx, id, &kx, &cipher, &mac, &min)
            == NULL)
        {
            return 0;
        }
        if (min >= GNUTLS_TLS1_3) {
            continue;
        }
        if (mac != GNUTLS_MAC_AEAD
            || (kx != GNUTLS_KX_ECDHE_RSA && kx != GNUTLS_KX_ECDHE_ECDSA
                && kx != GNUTLS_KX_DHE_RSA && kx != GNUTLS_KX_DHE_DSS))
        {
            return 0;
        }
    }
}


static gn_int_t
gn_tls_priority(gn_pool_t *pool, gn_srv_conf_t *sc, gn_tls_srv_t *ts,
    char *err, size_t errlen)
{
    gn_tls_conf_t  *tlc = gn_tls_conf(sc->loc);
    const char  *err_pos;
    char        *prio;
    size_t       len;
    int          rc;

    len = sizeof(GN_TLS_DEFAULT_PRIORITY) + 32 + tlc->priority.len + 2;
    prio = gn_pnalloc(pool, len);
    if (prio == NULL) {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }

    snprintf(prio, len, "%s%s%s%s%.*s", GN_TLS_DEFAULT_PRIORITY,
             (tlc->protocols & GN_TLS_PROTO_13) ? "" : ":-VERS-TLS1.3",
             (tlc->protocols & GN_TLS_PROTO_12) ? "" : ":-VERS-TLS1.2",
             tlc->priority.len ? ":" : "", GN_STR_ARG(&tlc->priority));

    rc = gnutls_priority_init2(&ts->prio, prio, &err_pos,
                               GNUTLS_PRIORITY_INIT_DEF_APPEND);
    if (rc != GNUTLS_E_SUCCESS) {
        snprintf(err, errlen, "invalid TLS priority string near \"%.40s\" "
                 "(%s) in the server block at %.*s:%d", err_pos ? err_pos : "",
                 gnutls_strerror(rc), GN_STR_ARG(&sc->file), (int) sc->line);
        ts->prio = NULL;
        return GN_ERROR;
    }

    return gn_tls_group_prios(pool, ts, prio, err, errlen);
}


/* What the memcached tier's keys of a server block start with: a hash of
 * its certificates (their bytes, not their paths) and of the settings a
 * session depends on, in hex; and whether it can speak TLS 1.3. */
static void
gn_tls_srv_identity(gn_tls_srv_t *ts, gn_tls_conf_t *tlc)
{
    static const char   hex[] = "0123456789abcdef";
    const unsigned int *vers;
    gnutls_datum_t      der;
    uint64_t            h = 1469598103934665603ULL;
    unsigned int        i;
    int                 n;

#define gn_mix(p, len)                                                        \
    do { const u_char *q_ = (const u_char *) (p); size_t n_ = (len);          \
         while (n_--) { h = (h ^ *q_++) * 1099511628211ULL; } } while (0)

    for (i = 0;
         gnutls_certificate_get_crt_raw(ts->cred, i, 0, &der)
         == GNUTLS_E_SUCCESS;
         i++)
    {
        gn_mix(der.data, der.size);
    }
    gn_mix(&tlc->protocols, sizeof(gn_uint_t));
    gn_mix(tlc->priority.data, tlc->priority.len);
    /* a session a client made without a certificate, or checked against
     * other CAs, must not resume where one is required */
    gn_mix(&ts->verify, sizeof(gn_uint_t));
    gn_mix(tlc->client_ca.path.data, tlc->client_ca.path.len);

#undef gn_mix

    for (i = 0; i < 16; i++) {
        ts->farm_id[i] = (u_char) hex[(h >> (60 - 4 * i)) & 0xf];
    }

    n = gnutls_priority_protocol_list(ts->prio, &vers);
    for (i = 0; n > 0 && i < (unsigned int) n; i++) {
        if (vers[i] == GNUTLS_TLS1_3) {
            ts->tls13 = 1;
        }
    }
}


/* tls_verify_client: the CAs clients' certificates are checked against
 * (also sent to the client as the ones it may choose from), the CRL,
 * the depth. optional_no_ca needs no CA file; the others do. */
static gn_int_t
gn_tls_srv_client_ca(gn_tls_srv_t *ts, gn_tls_conf_t *tlc, gn_srv_conf_t *sc,
    char *err, size_t errlen)
{
    int  rc;

    ts->verify = tlc->verify_client;
    if (ts->verify == GN_TLS_VERIFY_OFF) {
        return GN_OK;
    }

    if (tlc->client_ca.path.len == 0 && ts->verify != GN_TLS_VERIFY_NO_CA) {
        snprintf(err, errlen, "\"tls_verify_client\" needs "
                 "\"tls_client_certificate\" (the CAs to check against) in "
                 "the server block at %.*s:%d", GN_STR_ARG(&sc->file),
                 (int) sc->line);
        return GN_ERROR;
    }

    if (tlc->client_ca.path.len > 0) {
        rc = gnutls_certificate_set_x509_trust_file(ts->cred,
                 (char *) tlc->client_ca.path.data, GNUTLS_X509_FMT_PEM);
        if (rc <= 0) {
            snprintf(err, errlen, "cannot load CA certificates from \"%.*s\""
                     ": %s (\"tls_client_certificate\" in %.*s:%d)",
                     GN_STR_ARG(&tlc->client_ca.path),
                     rc == 0 ? "no certificate in it" : gnutls_strerror(rc),
                     GN_STR_ARG(&tlc->client_ca.file),
                     (int) tlc->client_ca.line);
            return GN_ERROR;
        }
    }

    if (tlc->crl.path.len > 0) {
        rc = gnutls_certificate_set_x509_crl_file(ts->cred,
                 (char *) tlc->crl.path.data, GNUTLS_X509_FMT_PEM);
        if (rc < 0) {
            snprintf(err, errlen, "cannot load the CRL \"%.*s\": %s "
                     "(\"tls_crl\" in %.*s:%d)", GN_STR_ARG(&tlc->crl.path),
                     gnutls_strerror(rc), GN_STR_ARG(&tlc->crl.file),
                     (int) tlc->crl.line);
            return GN_ERROR;
        }
    }

    ts->verify_depth = (gn_uint_t) tlc->verify_depth;
    return GN_OK;
}


static gn_int_t
gn_tls_srv_create(gn_cycle_t *cycle, gn_srv_conf_t *sc, char *err,
    size_t errlen)
{
    gn_tls_conf_t      *tlc = gn_tls_conf(sc->loc);
    gn_tls_srv_t       *ts;
    gn_pool_cleanup_t  *cln;
    gn_conf_path_t     *certs, *keys;
    gn_uint_t           i;
    int                 rc;

    if (tlc->certs == NULL || tlc->keys == NULL
        || tlc->certs->nelts != tlc->keys->nelts)
    {
        snprintf(err, errlen, "the server block at %.*s:%d listens with "
                 "\"tls\" but has no matching \"tls_certificate\" and "
                 "\"tls_certificate_key\" pairs", GN_STR_ARG(&sc->file),
                 (int) sc->line);
        return GN_ERROR;
    }

    ts = gn_pcalloc(cycle->pool, sizeof(gn_tls_srv_t));
    cln = gn_pool_cleanup_add(cycle->pool, 0);
    if (ts == NULL || cln == NULL) {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }
    cln->handler = gn_tls_srv_cleanup;
    cln->data = ts;
    ts->srv = sc;
    ts->tickets = (gn_uint_t) tlc->session_tickets;

    rc = gnutls_certificate_allocate_credentials(&ts->cred);
    if (rc != GNUTLS_E_SUCCESS) {
        ts->cred = NULL;
        snprintf(err, errlen, "gnutls_certificate_allocate_credentials() "
                 "failed: %s", gnutls_strerror(rc));
        return GN_ERROR;
    }

    certs = tlc->certs->elts;
    keys = tlc->keys->elts;

    for (i = 0; i < tlc->certs->nelts; i++) {
        rc = gnutls_certificate_set_x509_key_file2(ts->cred,
                 (char *) certs[i].path.data, (char *) keys[i].path.data,
                 GNUTLS_X509_FMT_PEM, NULL, 0);
        if (rc < 0) {
            snprintf(err, errlen, "cannot load certificate \"%.*s\" with "
                     "key \"%.*s\": %s (\"tls_certificate\" directive in "
                     "%.*s:%d)", GN_STR_ARG(&certs[i].path),
                     GN_STR_ARG(&keys[i].path), gnutls_strerror(rc),
                     GN_STR_ARG(&certs[i].file), (int) certs[i].line);
            return GN_ERROR;
        }
    }

    if (tlc->stapling.len) {
        rc = gnutls_certificate_set_ocsp_status_request_file2(ts->cred,
                 (char *) tlc->stapling.data, 0, GNUTLS_X509_FMT_DER);
        if (rc < 0) {
            snprintf(err, errlen, "cannot use OCSP response \"%.*s\": %s "
                     "(server block at %.*s:%d)",
                     GN_STR_ARG(&tlc->stapling), gnutls_strerror(rc),
                     GN_STR_ARG(&sc->file), (int) sc->line);
            return GN_ERROR;
        }
    }

    if (gn_tls_srv_client_ca(ts, tlc, sc, err, errlen) != GN_OK
        || gn_tls_priority(cycle->pool, sc, ts, err, errlen) != GN_OK)
    {
        return GN_ERROR;
    }

    ts->aead_pfs = gn_tls_prio_aead_pfs(ts->prio);
    gn_tls_srv_identity(ts, tlc);

    sc->tls = ts;
    return GN_OK;
}


/* FNV-1a over what makes sessions of a listener interchangeable: its
 * address and, for each server on it, certificates and settings. */
static uint64_t
gn_tls_ctx_id(gn_listen_t *ls)
{
    gn_srv_conf_t  **psc;
    gn_tls_conf_t   *tlc;
    gn_conf_path_t  *certs;
    gn_uint_t        i, j;
    uint64_t         h = 1469598103934665603ULL;

#define gn_mix(p, n)                                                          \
    do { const u_char *q_ = (const u_char *) (p); size_t n_ = (n);            \
         while (n_--) { h = (h ^ *q_++) * 1099511628211ULL; } } while (0)

    gn_mix(&ls->sa, ls->socklen);

    psc = ls->servers.elts;
    for (i = 0; i < ls->servers.nelts; i++) {
        tlc = gn_tls_conf(psc[i]->loc);
        certs = tlc->certs ? tlc->certs->elts : NULL;
        for (j = 0; certs && j < tlc->certs->nelts; j++) {
            gn_mix(certs[j].path.data, certs[j].path.len);
        }
        gn_mix(&tlc->protocols, sizeof(gn_uint_t));
        gn_mix(tlc->priority.data, tlc->priority.len);
        gn_mix(&tlc->verify_client, sizeof(gn_uint_t));
        gn_mix(tlc->client_ca.path.data, tlc->client_ca.path.len);
    }

#undef gn_mix

    return h;
}


/* tls_ticket_key_file, by the master at start and at every reload:
 * exactly 64 bytes from a regular file nobody but its owner and group
 * may read or write (a farm's shared key decrypts every ticket it ever
 * issued). The checks are made with fstat() on the descriptor the key
 * is read from, so the file checked is the file read; O_NONBLOCK keeps
 * a FIFO from blocking the master. Errors name the file, the fix and
 * the directive's file:line; the key's bytes never reach a message,
 * and the copy on the stack is wiped. */
static gn_int_t
gn_tls_read_key_file(gn_cycle_t *cycle, gn_tls_cycle_t *tc, char *err,
    size_t errlen)
{
    gn_conf_path_t  *kf = &gn_tls_conf(cycle->main_loc)->ticket_key;
    gn_str_t        *name = &kf->path;
    struct stat      st;
    u_char           buf[65];
    ssize_t          n;
    size_t           len;
    int              fd;

    fd = open((char *) name->data,
              O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd == -1) {
        snprintf(err, errlen, "open() \"%.*s\" failed (%d: %s)",
                 GN_STR_ARG(name), errno, strerror(errno));
        goto failed;
    }

    if (fstat(fd, &st) == -1) {
        snprintf(err, errlen, "fstat() \"%.*s\" failed (%d: %s)",
                 GN_STR_ARG(name), errno, strerror(errno));
        goto failed;
    }

    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "the ticket key \"%.*s\" is not a regular "
                 "file", GN_STR_ARG(name));
        goto failed;
    }

    if (st.st_mode & (S_IROTH | S_IWOTH)) {
        snprintf(err, errlen, "the ticket key \"%.*s\" is %s by others "
                 "(mode %04o), make it private: chmod 600 %.*s",
                 GN_STR_ARG(name),
                 (st.st_mode & S_IROTH) == 0 ? "writable"
                 : (st.st_mode & S_IWOTH) == 0 ? "readable"
                 : "readable and writable",
                 (unsigned) (st.st_mode & 07777), GN_STR_ARG(name));
        goto failed;
    }

    n = read(fd, buf, sizeof(buf));
    if (n == -1) {
        snprintf(err, errlen, "read() \"%.*s\" failed (%d: %s)",
                 GN_STR_ARG(name), errno, strerror(errno));
        goto failed;
    }

    if (n != 64) {
        snprintf(err, errlen, "\"%.*s\" must hold exactly 64 bytes of key "
                 "(gannetctl ticket-key %.*s), it has %lld",
                 GN_STR_ARG(name), GN_STR_ARG(name),
                 (long long) (n < 64 ? n : st.st_size));
        goto failed;
    }

    tc->ticket_key.data = gn_pnalloc(cycle->pool, 64);
    if (tc->ticket_key.data == NULL) {
        snprintf(err, errlen, "out of memory");
        goto failed;
    }
    memcpy(tc->ticket_key.data, buf, 64);
    tc->ticket_key.size = 64;
    tc->key_source = GN_TLS_KEY_SRC_FILE;
    tc->key_created = st.st_mtime;

    gnutls_memset(buf, 0, sizeof(buf));
    close(fd);
    return GN_OK;

failed:

    gnutls_memset(buf, 0, sizeof(buf));
    if (fd != -1) {
        close(fd);
    }
    len = strlen(err);
    snprintf(err + len, errlen - len, " (\"tls_ticket_key_file\" directive "
             "in %.*s:%d)", GN_STR_ARG(&kf->file), (int) kf->line);
    return GN_ERROR;
}


/* The memcached tier: its servers (resolved by the directive) and their
 * ring. */
static gn_int_t
gn_tls_memc_create(gn_cycle_t *cycle, gn_tls_cycle_t *tc, char *err,
    size_t errlen)
{
    gn_tls_conf_t   *tlc = gn_tls_conf(cycle->main_loc);
    gn_memc_conf_t  *mc;
    gn_str_t        *names;
    gn_uint_t        i;

    mc = gn_pcalloc(cycle->pool, sizeof(gn_memc_conf_t));
    names = gn_palloc(cycle->pool, tlc->memcached->nelts * sizeof(gn_str_t));
    if (mc == NULL || names == NULL) {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }

    mc->servers = tlc->memcached->elts;
    mc->nservers = tlc->memcached->nelts;
    for (i = 0; i < mc->nservers; i++) {
        names[i] = mc->servers[i].name;
    }
    if (gn_chash_init(&mc->ring, cycle->pool, names, mc->nservers)
        != GN_OK)
    {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }

    tc->memc = mc;
    tc->memc_timeout = tlc->memcached_timeout;
    tc->memc_prefix = tlc->memcached_prefix;

    return GN_OK;
}


static gn_int_t
gn_tls_cycle_create(gn_cycle_t *cycle, char *err, size_t errlen)
{
    gn_tls_cycle_t    *tc;
    gn_tls_listen_t   *lctx;
    gn_listen_t       *ls;
    gn_srv_conf_t    **psc;
    gn_uint_t          i, j;

    tc = gn_pcalloc(cycle->pool, sizeof(gn_tls_cycle_t));
    if (tc == NULL) {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }
    cycle->tls = tc;
    tc->timeout = (time_t)
                  (gn_tls_conf(cycle->main_loc)->session_timeout / 1000);
    if (tc->timeout < 1) {
        tc->timeout = 1;
    }

    ls = cycle->listening.elts;
    for (i = 0; i < cycle->listening.nelts; i++) {
        if (!ls[i].tls) {
            continue;
        }

        psc = ls[i].servers.elts;
        for (j = 0; j < ls[i].servers.nelts; j++) {
            if (psc[j]->tls == NULL
                && gn_tls_srv_create(cycle, psc[j], err, errlen) != GN_OK)
            {
                return GN_ERROR;
            }
            tc->ntls++;
        }

        lctx = gn_pcalloc(cycle->pool, sizeof(gn_tls_listen_t));
        if (lctx == NULL) {
            snprintf(err, errlen, "out of memory");
            return GN_ERROR;
        }
        lctx->ls = &ls[i];
        lctx->ctx_id = gn_tls_ctx_id(&ls[i]);
        ls[i].tls_ctx = lctx;
    }

    if (tc->ntls && gn_tls_conf(cycle->main_loc)->memcached != NULL
        && gn_tls_memc_create(cycle, tc, err, errlen) != GN_OK)
    {
        return GN_ERROR;
    }

    if (tc->ntls && gn_tls_conf(cycle->main_loc)->ticket_key.path.len) {
        return gn_tls_read_key_file(cycle, tc, err, errlen);
    }

    return GN_OK;
}


/* ---- shared state (master, before fork) ------------------------------ */

static void
gn_tls_zone_release(void *data)
{
    gn_shm_zone_put(data);
}


/* What the status page says of the key: an id that does not reveal it
 * (a cut SHA-256 of it), and when it was loaded. */
static void
gn_tls_key_id(gn_tls_cycle_t *tc)
{
    static const char  hex[] = "0123456789abcdef";
    u_char             md[32];
    gn_uint_t          i;

    tc->key_loaded = time(NULL);
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, tc->ticket_key.data, 64, md)
        != 0)
    {
        tc->key_id[0] = '\0';
        return;
    }
    for (i = 0; i < 8; i++) {
        tc->key_id[2 * i] = hex[md[i] >> 4];
        tc->key_id[2 * i + 1] = hex[md[i] & 0xf];
    }
    tc->key_id[16] = '\0';
    gnutls_memset(md, 0, sizeof(md));
}


gn_int_t
gn_tls_key_stats(gn_cycle_t *cycle, gn_tls_key_stats_t *out)
{
    gn_tls_cycle_t  *tc = cycle->tls;

    memset(out, 0, sizeof(*out));
    if (tc == NULL || tc->ntls == 0 || gn_tls_keys == NULL) {
        return GN_DECLINED;
    }

    out->source = tc->key_source;
    memcpy(out->id, tc->key_id, sizeof(tc->key_id));
    out->created = (uint64_t) tc->key_created;
    out->loaded = (uint64_t) tc->key_loaded;
    out->period = (uint64_t) tc->timeout * 3;
    out->issued = __atomic_load_n(&gn_tls_keys->issued, __ATOMIC_RELAXED);
    out->resumed_ticket = __atomic_load_n(&gn_tls_keys->resumed_ticket,
                                          __ATOMIC_RELAXED);
    out->resumed_id = __atomic_load_n(&gn_tls_keys->resumed_id,
                                      __ATOMIC_RELAXED);
    return GN_OK;
}


/* The memcached tier's counters: the old cycle's zone when it has the
 * same servers in the same order (they survive a reload), else a new
 * one. */
static gn_int_t
gn_tls_memc_open(gn_cycle_t *cycle, gn_tls_cycle_t *otc, gn_log_t *log)
{
    gn_tls_cycle_t     *tc = cycle->tls;
    gn_memc_conf_t     *mc = tc->memc, *omc;
    gn_pool_cleanup_t  *cln;
    gn_uint_t           i;

    cln = gn_pool_cleanup_add(cycle->pool, 0);
    if (cln == NULL) {
        return GN_ERROR;
    }

    omc = otc != NULL ? otc->memc : NULL;
    for (i = 0; omc != NULL && i < mc->nservers; i++) {
        if (omc->nservers != mc->nservers
            || gn_str_cmp(&omc->servers[i].name, &mc->servers[i].name) != 0)
        {
            omc = NULL;
        }
    }

    if (omc != NULL) {
        tc->memc_zone = otc->memc_zone;
        tc->memc_zone->refs++;
    } else {
        tc->memc_zone = gn_shm_zone_get(mc->nservers
                                        * sizeof(gn_memc_stats_t),
                                        "tls_session_memcached", log);
        if (tc->memc_zone == NULL) {
            return GN_ERROR;
        }
    }
    cln->handler = gn_tls_zone_release;
    cln->data = tc->memc_zone;
    mc->stats = (gn_memc_stats_t *) tc->memc_zone->addr;

    return GN_OK;
}


gn_int_t
gn_tls_memc_stats(gn_cycle_t *cycle, gn_uint_t i, gn_str_t *name,
    void *out)
{
    gn_tls_cycle_t  *tc = cycle->tls;

    if (tc == NULL || tc->memc == NULL || tc->memc->stats == NULL
        || i >= tc->memc->nservers)
    {
        return GN_DECLINED;
    }

    *name = tc->memc->servers[i].name;
    memcpy(out, &tc->memc->stats[i], sizeof(gn_memc_stats_t));
    return GN_OK;
}


static gn_int_t
gn_tls_cycle_open(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    gn_tls_cycle_t     *tc = cycle->tls, *otc;
    gn_pool_cleanup_t  *cln;
    size_t              size;
    char             err[256];
    int              rc;

    if (tc->ntls == 0) {
        return GN_OK;
    }

    if (gn_tls_keys == NULL) {
        /* never put: the key and the counters outlive every cycle */
        gn_shm_zone_t  *kz;

        kz = gn_shm_zone_get(sizeof(gn_tls_keys_t), "tls_ticket_key", log);
        if (kz == NULL) {
            return GN_ERROR;
        }
        (void) madvise(kz->addr, kz->size, MADV_DONTDUMP);
        gn_tls_keys = (gn_tls_keys_t *) kz->addr;
    }

    if (tc->ticket_key.size == 0) {
        /* made once for the life of the master, in a zone that a binary
         * upgrade passes on: tickets stay valid across reloads and
         * upgrades */
        if (gn_tls_keys->created == 0) {
            gnutls_datum_t  key;

            rc = gnutls_session_ticket_key_generate(&key);
            if (rc != GNUTLS_E_SUCCESS || key.size != 64) {
                gn_log_error(GN_LOG_EMERG, log, 0, "gnutls_session_"
                             "ticket_key_generate() failed: %s",
                             gnutls_strerror(rc));
                return GN_ERROR;
            }
            memcpy(gn_tls_keys->key, key.data, 64);
            gnutls_memset(key.data, 0, key.size);
            gnutls_free(key.data);
            gn_tls_keys->created = (int64_t) time(NULL);
        }
        tc->ticket_key.data = gn_tls_keys->key;
        tc->ticket_key.size = 64;
        tc->key_source = GN_TLS_KEY_SRC_MADE;
        tc->key_created = (time_t) gn_tls_keys->created;
    }
    gn_tls_key_id(tc);

    otc = old ? old->tls : NULL;

    if (tc->memc != NULL && gn_tls_memc_open(cycle, otc, log) != GN_OK) {
        return GN_ERROR;
    }

    size = (size_t) gn_tls_conf(cycle->main_loc)->session_cache;
    if (size == 0) {
        return GN_OK;
    }

    cln = gn_pool_cleanup_add(cycle->pool, 0);
    if (cln == NULL) {
        return GN_ERROR;
    }

    if (otc != NULL && otc->zone != NULL && otc->zone->size == size) {
        tc->zone = otc->zone;                  /* the cache survives */
        tc->scache = otc->scache;
        tc->zone->refs++;
        cln->handler = gn_tls_zone_release;
        cln->data = tc->zone;
        return GN_OK;
    }

    tc->zone = gn_shm_zone_get(size, "tls_session_cache", log);
    if (tc->zone != NULL && tc->zone->inherited
        && !gn_scache_compatible(tc->zone->addr, size, GN_TLS_SCACHE_DATA))
    {
        /* the old binary's layout, which its children still use: leave
         * it to them */
        gn_log_error(GN_LOG_NOTICE, log, 0, "tls_session_cache: the "
                     "previous binary's cache has another layout, starting "
                     "an empty one");
        gn_shm_zone_put(tc->zone);
        tc->zone = gn_shm_zone_get(size, "tls_session_cache", log);
    }
    if (tc->zone == NULL) {
        return GN_ERROR;
    }
    cln->handler = gn_tls_zone_release;
    cln->data = tc->zone;

    tc->scache = gn_scache_init(tc->zone->addr, size, GN_TLS_SCACHE_DATA,
                                err, sizeof(err));
    if (tc->scache == NULL) {
        gn_log_error(GN_LOG_EMERG, log, 0, "tls_session_cache %zu: %s", size,
                     err);
        return GN_ERROR;
    }

    return GN_OK;
}


gn_int_t
gn_tls_cache_stats(gn_cycle_t *cycle, void *out)
{
    gn_tls_cycle_t  *tc = cycle->tls;

    if (tc == NULL || tc->scache == NULL) {
        return GN_DECLINED;
    }

    gn_scache_stats(tc->scache, out);
    return GN_OK;
}


void
gn_tls_log_stats(gn_cycle_t *cycle)
{
    gn_tls_cycle_t     *tc = cycle->tls;
    gn_scache_stats_t   st;

    if (tc == NULL || tc->scache == NULL) {
        return;
    }

    gn_scache_stats(tc->scache, &st);
    gn_log_error(GN_LOG_NOTICE, &cycle->log, 0,
                 "tls session cache: %llu entries, %llu stores, %llu hits, "
                 "%llu misses, %llu evictions (%llu in use, %llu expired, "
                 "%llu lock recoveries)",
                 (unsigned long long) st.entries,
                 (unsigned long long) st.stores, (unsigned long long) st.hits,
                 (unsigned long long) st.misses,
                 (unsigned long long) st.evictions,
                 (unsigned long long) st.used,
                 (unsigned long long) st.expired,
                 (unsigned long long) st.recovered);
}


/* ---- the session cache callbacks (children) -------------------------- */

static size_t
gn_tls_cache_key(gn_tls_conn_t *tc, gnutls_datum_t *key, u_char *buf)
{
    size_t  n;

    n = gn_min(key->size, GN_SCACHE_KEY_MAX - sizeof(uint64_t));
    memcpy(buf, &tc->lctx->ctx_id, sizeof(uint64_t));
    memcpy(buf + sizeof(uint64_t), key->data, n);

    return sizeof(uint64_t) + n;
}


/* The memcached key of session id sid for server block ts:
 * "PREFIX:IDENTITY:HEXSID"; its length, 0 when it does not fit. */
static size_t
gn_tls_farm_key(gn_tls_srv_t *ts, const u_char *sid, size_t len,
    u_char *buf, size_t size)
{
    static const char   hex[] = "0123456789abcdef";
    gn_tls_cycle_t     *tc = gn_cycle->tls;
    u_char             *p = buf;
    size_t              i;

    if (tc->memc_prefix.len + 1 + 16 + 1 + 2 * len > size) {
        return 0;
    }

    p = gn_cpymem(p, tc->memc_prefix.data, tc->memc_prefix.len);
    *p++ = ':';
    p = gn_cpymem(p, ts->farm_id, 16);
    *p++ = ':';
    for (i = 0; i < len; i++) {
        *p++ = (u_char) hex[sid[i] >> 4];
        *p++ = (u_char) hex[sid[i] & 0xf];
    }

    return (size_t) (p - buf);
}


/* The server block whose identity a session of c has: the one SNI chose
 * (known once the handshake has read the hello). */
static gn_tls_srv_t *
gn_tls_conn_srv(gn_conn_t *c)
{
    gn_tls_conn_t  *t = c->tls;

    return (t->sni_srv != NULL ? t->sni_srv : c->listen->default_srv)->tls;
}


static int
gn_tls_db_store(void *ptr, gnutls_datum_t key, gnutls_datum_t data)
{
    gn_conn_t       *c = ptr;
    gn_tls_conn_t   *t = c->tls;
    gn_tls_cycle_t  *tc = gn_cycle->tls;
    u_char           k[GN_SCACHE_KEY_MAX], mk[GN_MEMC_KEY_MAX];
    size_t           klen;

    if (tc->memc != NULL) {
        /* out asynchronously; nobody waits for the answer */
        klen = gn_tls_farm_key(gn_tls_conn_srv(c), key.data, key.size, mk,
                               sizeof(mk));
        if (klen) {
            gn_memc_set(tc->memc, mk, klen, data.data, data.size,
                        tc->timeout);
        }
    }

    if (tc->scache == NULL) {
        return 0;
    }

    klen = gn_tls_cache_key(t, &key, k);

    if (gn_scache_store(tc->scache, k, klen, data.data, data.size,
                        gn_current_sec, tc->timeout) == GN_ERROR)
    {
        gn_log_error(GN_LOG_ALERT, &c->log, 0, "tls session cache lock "
                     "unusable");
        return -1;
    }

    return 0;
}


static gnutls_datum_t
gn_tls_db_retrieve(void *ptr, gnutls_datum_t key)
{
    gn_conn_t       *c = ptr;
    gn_tls_conn_t   *t = c->tls;
    gn_tls_cycle_t  *tc = gn_cycle->tls;
    gnutls_datum_t   res = { NULL, 0 };
    u_char           k[GN_SCACHE_KEY_MAX];
    size_t           klen;
    ssize_t          n;
    int              same;

    same = t->looked && key.size == t->sid_len
           && memcmp(key.data, t->sid, t->sid_len) == 0;

    if (same && t->pref != NULL) {
        /* found before the handshake, in shared memory or memcached */
        res.data = gnutls_malloc(t->pref_len);
        if (res.data != NULL) {
            memcpy(res.data, t->pref, t->pref_len);
            res.size = (unsigned int) t->pref_len;
        }
        free(t->pref);
        t->pref = NULL;
        t->db_hit = res.data != NULL;
        return res;
    }

    if (same || tc->scache == NULL) {
        return res;                     /* asked already: not there */
    }

    klen = gn_tls_cache_key(t, &key, k);

    /* GnuTLS frees the result with gnutls_free */
    res.data = gnutls_malloc(GN_TLS_SCACHE_DATA);
    if (res.data == NULL) {
        return res;
    }

    n = gn_scache_retrieve(tc->scache, k, klen, res.data, GN_TLS_SCACHE_DATA,
                           gn_current_sec);
    if (n <= 0) {
        gnutls_free(res.data);
        res.data = NULL;
        return res;
    }

    res.size = (unsigned int) n;
    t->db_hit = 1;
    return res;
}


static int
gn_tls_db_remove(void *ptr, gnutls_datum_t key)
{
    gn_conn_t       *c = ptr;
    gn_tls_cycle_t  *tc = gn_cycle->tls;
    u_char           k[GN_SCACHE_KEY_MAX], mk[GN_MEMC_KEY_MAX];
    size_t           klen;

    if (tc->memc != NULL) {
        klen = gn_tls_farm_key(gn_tls_conn_srv(c), key.data, key.size, mk,
                               sizeof(mk));
        if (klen) {
            gn_memc_delete(tc->memc, mk, klen);
        }
    }

    if (tc->scache != NULL) {
        klen = gn_tls_cache_key(c->tls, &key, k);
        (void) gn_scache_remove(tc->scache, k, klen);
    }

    return 0;
}


/* ---- the memcached tier, before the handshake (children) ------------ */

static void gn_tls_handshake(gn_conn_t *c);


/* Readiness while the lookup is out: left for the handshake (c's
 * read_ready stays set for it). */
static void
gn_tls_farm_wait(gn_conn_t *c)
{
    (void) c;
}


/* The lookup's answer, from the event loop: kept for the retrieve
 * callback, and copied to shared memory so that the next connection on
 * this machine finds it there. The handshake resumes from a timer, not
 * from inside the memcached client. */
static gn_int_t
gn_tls_farm_found(void *data, gn_int_t rc, const u_char *val, size_t len)
{
    gn_conn_t       *c = data;
    gn_tls_conn_t   *t = c->tls;
    gn_tls_cycle_t  *tc = gn_cycle->tls;
    gnutls_datum_t   d;
    time_t           expire;
    u_char           k[GN_SCACHE_KEY_MAX];
    size_t           klen;

    t->mop = NULL;
    gn_timer_set(&t->mtimer, 0);

    if (rc != GN_OK || len == 0 || len > GN_TLS_SCACHE_DATA) {
        return GN_DECLINED;
    }

    /* whatever memcached holds is only a candidate: GnuTLS checks the
     * session when it restores it, and refuses one that does not parse
     * (a full handshake follows); expired ones are not kept */
    d.data = (u_char *) val;
    d.size = (unsigned int) len;
    expire = gnutls_db_check_entry_expire_time(&d);
    if (expire <= gn_current_sec) {
        return GN_DECLINED;             /* expired, or not a session */
    }

    t->pref = malloc(len);
    if (t->pref == NULL) {
        return GN_DECLINED;
    }
    memcpy(t->pref, val, len);
    t->pref_len = len;

    if (tc->scache != NULL) {
        d.data = t->sid;
        d.size = (unsigned int) t->sid_len;
        klen = gn_tls_cache_key(t, &d, k);
        (void) gn_scache_store(tc->scache, k, klen, val, len, gn_current_sec,
                               expire - gn_current_sec);
    }

    return GN_OK;
}


/* The budget ran out (mop still set), or the answer came: the handshake
 * goes on. */
static void
gn_tls_farm_resume(gn_timer_t *timer)
{
    gn_conn_t      *c = timer->data;
    gn_tls_conn_t  *t = c->tls;

    if (t->mop != NULL) {
        gn_memc_cancel(t->mop);
        t->mop = NULL;
    }

    c->handler = gn_tls_handshake;
    gn_tls_handshake(c);
}


/* Before the handshake: the session the ClientHello asks to resume, from
 * shared memory, else from memcached within its budget. GN_AGAIN: the
 * lookup is out, the handshake resumes when it is answered. */
static gn_int_t
gn_tls_farm_lookup(gn_conn_t *c)
{
    gn_tls_conn_t   *t = c->tls;
    gn_tls_cycle_t  *tc = gn_cycle->tls;
    gn_srv_conf_t   *sc = NULL;
    gn_tls_srv_t    *ts;
    gn_tls_hello_t   h;
    gnutls_datum_t   d;
    u_char           k[GN_SCACHE_KEY_MAX], mk[GN_MEMC_KEY_MAX];
    size_t           klen;
    ssize_t          n;

    if (gn_tls_hello_parse(t->in + t->in_pos, t->in_end - t->in_pos, &h)
        != GN_OK || h.sid == NULL)
    {
        return GN_OK;
    }

    if (h.sni != NULL) {
        sc = c->listen->proto->tls_server(c, (u_char *) h.sni, h.sni_len);
    }
    ts = (sc != NULL ? sc : c->listen->default_srv)->tls;

    if ((h.tls13 && ts->tls13) || (h.ticket && ts->tickets)) {
        /* TLS 1.3 or a ticket: GnuTLS will not look the id up (a 1.3
         * client sends a random one) */
        return GN_OK;
    }

    memcpy(t->sid, h.sid, h.sid_len);
    t->sid_len = h.sid_len;
    t->looked = 1;

    if (tc->scache != NULL) {
        t->pref = malloc(GN_TLS_SCACHE_DATA);
        if (t->pref == NULL) {
            t->looked = 0;
            return GN_OK;
        }
        d.data = t->sid;
        d.size = (unsigned int) t->sid_len;
        klen = gn_tls_cache_key(t, &d, k);
        n = gn_scache_retrieve(tc->scache, k, klen, t->pref,
                               GN_TLS_SCACHE_DATA, gn_current_sec);
        if (n > 0) {
            t->pref_len = (size_t) n;
            return GN_OK;               /* a hit here: no network */
        }
        free(t->pref);
        t->pref = NULL;
    }

    klen = gn_tls_farm_key(ts, t->sid, t->sid_len, mk, sizeof(mk));
    if (klen == 0) {
        return GN_OK;
    }

    t->mop = gn_memc_get(tc->memc, mk, klen, gn_tls_farm_found, c);
    if (t->mop == NULL) {
        return GN_OK;                   /* down: a miss at once */
    }

    gn_timer_set(&t->mtimer, tc->memc_timeout);
    c->handler = gn_tls_farm_wait;

    return GN_AGAIN;
}


/* ---- handshake (children) -------------------------------------------- */

static int gn_tls_alpn_set(gn_conn_t *c, gn_srv_conf_t *sc);


/* What we look at in a ClientHello before GnuTLS does: the groups of
 * the client's TLS 1.3 key shares (extension 51), and the name it asks
 * for (server_name, extension 0), whose server block says which
 * protocols ALPN offers -- GnuTLS reads ALPN before the post-hello
 * function, too early for the SNI it reports there. */
static int
gn_tls_ext_hello(void *ctx, unsigned int tls_id, const unsigned char *d,
    unsigned int size)
{
    gn_conn_t      *c = ctx;
    gn_tls_conn_t  *t = c->tls;
    unsigned int    len, klen;

    if (tls_id == 0 && size >= 5 && d[2] == 0) {
        /* server_name_list: length, then type 0 (host_name), length */
        len = (unsigned int) d[3] << 8 | d[4];
        if (len > 0 && len <= size - 5) {
            t->hello_srv = c->listen->proto->tls_server(c, d + 5, len);
        }
        return 0;
    }

    if (tls_id != 51 || size < 2) {
        return 0;
    }
    len = (unsigned int) d[0] << 8 | d[1];
    len = len < size - 2 ? len : size - 2;
    d += 2;

    while (len >= 4 && t->nshares < GN_TLS_SHARES) {
        klen = (unsigned int) d[2] << 8 | d[3];
        if (klen > len - 4) {
            break;
        }
        t->shares[t->nshares++] = (uint16_t) (d[0] << 8 | d[1]);
        d += 4 + klen;
        len -= 4 + klen;
    }

    return 0;
}


/* Before GnuTLS reads a ClientHello: note its key shares, and offer by
 * ALPN what the server block it names has. */
static int
gn_tls_client_hello_hook(gnutls_session_t session, unsigned int htype,
    unsigned int when, unsigned int incoming, const gnutls_datum_t *msg)
{
    gn_conn_t      *c = gnutls_session_get_ptr(session);
    gn_tls_conn_t  *t = c->tls;

    (void) when;
    t->nshares = 0;
    t->hello_srv = NULL;
    if (htype == GNUTLS_HANDSHAKE_CLIENT_HELLO && incoming) {
        /* a malformed hello is GnuTLS's to refuse */
        (void) gnutls_ext_raw_parse(c, gn_tls_ext_hello, msg,
                                    GNUTLS_EXT_RAW_FLAG_TLS_CLIENT_HELLO);
        /* every hello (a second one after a HelloRetryRequest, too) */
        if (gn_tls_alpn_set(c, t->hello_srv != NULL
                               ? t->hello_srv : c->listen->default_srv)
            != 0)
        {
            return GNUTLS_E_INTERNAL_ERROR;
        }
    }
    return 0;
}


/* ts's priority for this ClientHello: ours, unless the client sent no
 * key share for our first group and one for another of ours -- then
 * ours with the best of those first. */
static gnutls_priority_t
gn_tls_group_prio(gn_tls_srv_t *ts, gn_tls_conn_t *t)
{
    gn_uint_t  k, i;

    for (k = 0; k < ts->ngroups; k++) {
        for (i = 0; i < t->nshares; i++) {
            if (t->shares[i] == ts->gcode[k]) {
                return ts->gprio[k];
            }
        }
    }
    return ts->prio;
}


/* The protocols ALPN offers for server block sc, the protocol's
 * choice, the first one preferred. */
static int
gn_tls_alpn_set(gn_conn_t *c, gn_srv_conf_t *sc)
{
    gn_tls_conn_t   *t = c->tls;
    const gn_str_t  *protos;
    gnutls_datum_t   d[4];
    gn_uint_t        i, n;

    n = c->listen->proto->alpn(c, sc, &protos);

    for (i = 0; i < n && i < 4; i++) {
        d[i].data = protos[i].data;
        d[i].size = (unsigned int) protos[i].len;
    }

    if (gnutls_alpn_set_protocols(t->session, d, (unsigned) i,
                                  GNUTLS_ALPN_SERVER_PRECEDENCE)
        != GNUTLS_E_SUCCESS)
    {
        return GNUTLS_E_INTERNAL_ERROR;
    }

    return 0;
}


/* After the ClientHello's version and SNI are read, before its groups,
 * key shares and cipher suites are: SNI picks the server block, whose
 * credentials and priorities the rest of the handshake uses. */
static int
gn_tls_post_client_hello(gnutls_session_t session)
{
    gn_conn_t          *c = gnutls_session_get_ptr(session);
    gn_tls_conn_t      *t = c->tls;
    gn_srv_conf_t      *sc, *dflt = c->listen->default_srv;
    gn_tls_srv_t       *ts;
    gnutls_priority_t   prio;
    size_t              len;
    unsigned int        type;

    len = sizeof(t->sni) - 1;
    if (gnutls_server_name_get(session, t->sni, &len, &type, 0)
        == GNUTLS_E_SUCCESS && type == GNUTLS_NAME_DNS)
    {
        t->sni[len] = '\0';
        sc = c->listen->proto->tls_server(c, (u_char *) t->sni, len);
        t->sni_srv = sc != NULL ? sc : dflt;
    } else {
        t->sni[0] = '\0';                  /* the default server's */
        t->sni_srv = NULL;
    }

    sc = t->sni_srv != NULL ? t->sni_srv : dflt;
    ts = sc->tls;
    prio = gn_tls_group_prio(ts, t);

    if (sc != dflt
        && gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, ts->cred)
           != GNUTLS_E_SUCCESS)
    {
        return GNUTLS_E_INTERNAL_ERROR;
    }
    if ((sc != dflt || prio != ts->prio)
        && gnutls_priority_set(session, prio) != GNUTLS_E_SUCCESS)
    {
        return GNUTLS_E_INTERNAL_ERROR;
    }

    /* asked for, never required by the handshake: as nginx, a missing or
     * bad certificate is the request's 400, with a reason (check) */
    if (ts->verify != GN_TLS_VERIFY_OFF) {
        gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
    }

    return 0;
}


static int
gn_tls_tickets_on(gn_conn_t *c)
{
    gn_tls_srv_t    *ts = c->listen->default_srv->tls;
    gn_tls_cycle_t  *tc = gn_cycle->tls;

    return ts->tickets && tc->ticket_key.size != 0;
}


static gn_int_t
gn_tls_session_create(gn_conn_t *c)
{
    gn_tls_listen_t             *lctx = c->listen->tls_ctx;
    gn_tls_cycle_t              *tc = gn_cycle->tls;
    gn_tls_srv_t                *ts = c->listen->default_srv->tls;
    gn_tls_conn_t               *t;
    gnutls_session_t             s;
    int                          rc;

    t = calloc(1, sizeof(gn_tls_conn_t));
    if (t == NULL) {
        return GN_ERROR;
    }
    t->lctx = lctx;
    gn_timer_init_node(&t->mtimer, gn_tls_farm_resume, c);
    c->tls = t;

    /* TLS 1.3 tickets are sent by gn_tls_tickets(), not by GnuTLS at the
     * end of the handshake */
    rc = gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL
                         | GNUTLS_NO_AUTO_SEND_TICKET);
    if (rc != GNUTLS_E_SUCCESS) {
        gn_log_error(GN_LOG_CRIT, &c->log, 0, "gnutls_init() failed: %s",
                     gnutls_strerror(rc));
        return GN_ERROR;
    }
    t->session = s;

    if (gnutls_priority_set(s, ts->prio) != GNUTLS_E_SUCCESS
        || gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, ts->cred)
           != GNUTLS_E_SUCCESS)
    {
        gn_log_error(GN_LOG_CRIT, &c->log, 0, "gnutls session setup failed");
        return GN_ERROR;
    }

    gnutls_session_set_ptr(s, c);
    gnutls_transport_set_ptr(s, c);
    gnutls_transport_set_pull_function(s, gn_tls_pull);
    gnutls_transport_set_pull_timeout_function(s, gn_tls_pull_timeout);
    gnutls_transport_set_vec_push_function(s, gn_tls_push);
    gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_CLIENT_HELLO,
                                       GNUTLS_HOOK_PRE,
                                       gn_tls_client_hello_hook);
    gnutls_handshake_set_post_client_hello_function(s,
                                                    gn_tls_post_client_hello);
    /* ALPN: set for each ClientHello by gn_tls_client_hello_hook */

    /* the same expiration everywhere: ticket keys derive from it */
    gnutls_db_set_cache_expiration(s, (int) tc->timeout);

    if (tc->scache != NULL || tc->memc != NULL) {
        gnutls_db_set_retrieve_function(s, gn_tls_db_retrieve);
        gnutls_db_set_store_function(s, gn_tls_db_store);
        gnutls_db_set_remove_function(s, gn_tls_db_remove);
        gnutls_db_set_ptr(s, c);
    }

    /* tickets follow the default server's setting (the decision has to
     * be made before SNI is known) */
    if (gn_tls_tickets_on(c)) {
        rc = gnutls_session_ticket_enable_server(s, &tc->ticket_key);
        if (rc != GNUTLS_E_SUCCESS) {
            gn_log_error(GN_LOG_CRIT, &c->log, 0, "gnutls_session_ticket_"
                         "enable_server() failed: %s", gnutls_strerror(rc));
            return GN_ERROR;
        }
    }

    return GN_OK;
}


/* Plain HTTP on a TLS port: a ClientHello starts with 0x16. */
static void
gn_tls_reject_plain(gn_conn_t *c)
{
    static const char  msg[] =
        "HTTP/1.1 400 Bad Request\r\n"
        "Server: gannet\r\n"
        "Content-Type: text/plain\r\n"
        "Content-Length: 52\r\n"
        "Connection: close\r\n"
        "\r\n"
        "A plain HTTP request was sent to a TLS (HTTPS) port\n";

    gn_tls_conn_t     *t = c->tls;
    ssize_t            n;
    size_t             head = sizeof(msg) - 1 - 52;

    gn_log_error(GN_LOG_INFO, &c->log, 0, "client sent a plain HTTP "
                 "request to a TLS port");
    n = send(c->io.fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    n = gn_max(n, 0);
    c->listen->proto->tls_rejected(c, t->in + t->in_pos,
                                   t->in_end - t->in_pos, (size_t) n,
                                   gn_min((size_t) n, head));
    t->ended = 1;                       /* no TLS record after that */
    c->linger_close = 1;                /* the rest of the request */
    gn_conn_close(c);
}


/*
 * After GnuTLS returned rc: whether to call it again at once. GnuTLS
 * returns GNUTLS_E_AGAIN after each record that does not complete what
 * it waits for (a fragment of a ClientHello, a zero-length record, a
 * KeyUpdate), whether or not more bytes are already here. Readiness is
 * edge-triggered, so waiting for an event would wait for bytes that came
 * already: it is cleared only by the transport itself, when a pull met
 * an empty socket (t->eagain; gn_tls_pull then cleared c->read_ready),
 * never while the read-ahead holds bytes, GnuTLS holds decrypted ones
 * (gnutls_record_check_pending) or the last recv() filled what it asked
 * for. A write that would block waits for EPOLLOUT: c->read_on_write
 * makes that event resume a read, too.
 */
static gn_uint_t
gn_tls_again(gn_conn_t *c, int rc)
{
    gn_tls_conn_t  *t = c->tls;

    if (rc != GNUTLS_E_AGAIN && rc != GNUTLS_E_INTERRUPTED) {
        /* a warning alert from the client, or a similar non-fatal
         * report: the handshake or the read goes on */
        return rc < 0 && rc != GNUTLS_E_REHANDSHAKE
               && !gnutls_error_is_fatal(rc);
    }

    if (gnutls_record_get_direction(t->session) == 1) {
        c->write_ready = 0;
        c->read_on_write = 1;
        return 0;
    }

    if (t->eagain) {
        return 0;
    }

    /* Each call reads a record, or handles one GnuTLS holds already (a
     * record of several handshake messages): a library that kept asking
     * without doing either would spin the child, so that is bounded. */
    if (t->pulled) {
        t->spins = 0;
    } else if (++t->spins > GN_TLS_SPINS) {
        gn_log_error(GN_LOG_ERR, &c->log, 0, "GnuTLS returned "
                     "GNUTLS_E_AGAIN %d times without reading, waiting "
                     "for the next event", GN_TLS_SPINS);
        t->spins = 0;
        return 0;
    }

    return 1;
}


/* A fatal GnuTLS error rc ends the session: the alert that says why goes
 * out when the connection closes (lingering: what the client still sends
 * is read, so that the alert is not destroyed by a reset). Returns 1 when
 * it is worth a log line: not a client that just went away. */
static gn_uint_t
gn_tls_failed(gn_conn_t *c, int rc)
{
    gn_tls_conn_t  *t = c->tls;

    if (rc == GNUTLS_E_PREMATURE_TERMINATION || rc == GNUTLS_E_PULL_ERROR
        || rc == GNUTLS_E_PUSH_ERROR)
    {
        t->ended = 1;                   /* the peer is gone: nothing to say */
        return 0;
    }

    if (rc != GNUTLS_E_FATAL_ALERT_RECEIVED) {
        t->fatal = rc;
        c->linger_close = 1;
    } else {
        t->ended = 1;
    }

    return 1;
}


/* A handshake that did not finish within the protocol's time: no
 * answer, the connection closes. */
static void
gn_tls_handshake_timeout(gn_timer_t *timer)
{
    gn_conn_t  *c = timer->data;

    c->log.action = "TLS handshaking";
    gn_log_error(GN_LOG_INFO, &c->log, 0, "client timed out");
    gn_conn_close(c);
}


static void
gn_tls_conn_start(gn_conn_t *c)
{
    c->state = GN_CONN_HANDSHAKE;
    c->state_since = gn_current_msec;
    c->handler = gn_tls_handshake;
    c->timer.handler = gn_tls_handshake_timeout;
    gn_timer_set(&c->timer, c->listen->proto->handshake_timeout(c));

    if (gn_tls_session_create(c) != GN_OK) {
        gn_conn_close(c);
        return;
    }

    gn_tls_handshake(c);
}


/* Sends the TLS 1.3 session tickets due, MSG_MORE when a record
 * follows: GN_OK, or GN_AGAIN (call again before any record).  A ticket
 * that cannot be made costs the client a resumption, not the
 * connection. */
static gn_int_t
gn_tls_tickets(gn_conn_t *c, int more)
{
    gn_tls_conn_t  *t = c->tls;
    int             rc;

    t->more = more;
    rc = gnutls_session_ticket_send(t->session, t->tickets, 0);

    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
        return GN_AGAIN;
    }

    t->more = 0;
    if (rc == GNUTLS_E_SUCCESS && gn_tls_keys != NULL) {
        (void) __atomic_fetch_add(&gn_tls_keys->issued, t->tickets,
                                  __ATOMIC_RELAXED);
    }
    t->tickets = 0;

    if (rc != GNUTLS_E_SUCCESS) {
        gn_log_error(GN_LOG_INFO, &c->log, 0, "TLS session ticket not "
                     "sent: %s", gnutls_strerror(rc));
    }

    return GN_OK;
}


/* Readiness during the handshake: the connection's handler until
 * then. */
static void
gn_tls_handshake(gn_conn_t *c)
{
    gn_tls_conn_t  *t = c->tls;
    ssize_t         n;
    int             rc;

    if (!t->peeked) {
        /* the first bytes go to the read-ahead GnuTLS reads from */
        n = gn_tls_fill(c);
        if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        if (n <= 0) {
            gn_conn_close(c);
            return;
        }
        if (t->in[t->in_pos] != 0x16) {
            gn_tls_reject_plain(c);
            return;
        }
        t->peeked = 1;

        if (((gn_tls_cycle_t *) gn_cycle->tls)->memc != NULL
            && gn_tls_farm_lookup(c) == GN_AGAIN)
        {
            return;
        }
    }

    do {
        t->eagain = 0;
        t->pulled = 0;
        rc = gnutls_handshake(t->session);
    } while (gn_tls_again(c, rc));

    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
        return;
    }

    if (rc != GNUTLS_E_SUCCESS) {
        if (gn_sb_me != NULL) {
            gn_sb_me->tls_failed++;
        }
        if (gn_tls_failed(c, rc)) {
            c->log.action = "TLS handshaking";
            gn_log_error(GN_LOG_INFO, &c->log, 0, "TLS handshake failed: %s",
                         gnutls_strerror(rc));
            c->log.action = NULL;
        }
        gn_conn_close(c);
        return;
    }

    gn_tls_established(c);
}


/* The handshake is done: tickets due, then the protocol takes over. */
static void
gn_tls_established(gn_conn_t *c)
{
    gn_tls_conn_t  *t = c->tls;
    int             resumed;

    resumed = gnutls_session_is_resumed(t->session);

    if (gn_sb_me != NULL) {
        if (resumed) {
            gn_sb_me->tls_resumed++;
        } else {
            gn_sb_me->tls_full++;
        }
    }
    if (resumed && gn_tls_keys != NULL) {
        /* a TLS 1.2 resumption without a session from the cache was a
         * ticket's, as every TLS 1.3 one is */
        (void) __atomic_fetch_add(t->db_hit ? &gn_tls_keys->resumed_id
                                            : &gn_tls_keys->resumed_ticket,
                                  1, __ATOMIC_RELAXED);
    }

    /* TLS 1.3 tickets: two after a full handshake, one after a resumption
     * (which used one up), as OpenSSL does.  When the request came with
     * the client's Finished, they leave with the response, in its first
     * segment; otherwise now, as GnuTLS would have sent them. */
    if (gnutls_protocol_get_version(t->session) == GNUTLS_TLS1_3
        && gn_tls_tickets_on(c))
    {
        t->tickets = resumed ? 1 : 2;
        if (t->in_pos == t->in_end) {
            (void) gn_tls_tickets(c, 0);
        }
    }

    t->established = 1;
    c->ops = &gn_tls_ops;
    c->listen->proto->init_conn(c);
}


gn_srv_conf_t *
gn_tls_sni_server(gn_conn_t *c)
{
    gn_tls_conn_t  *t = c->tls;

    return t != NULL ? t->sni_srv : NULL;
}


gn_uint_t
gn_tls_srv_aead_pfs(gn_srv_conf_t *sc)
{
    gn_tls_srv_t  *ts = sc->tls;

    return ts != NULL && ts->aead_pfs;
}


gn_str_t
gn_tls_alpn(gn_conn_t *c)
{
    gn_tls_conn_t   *t = c->tls;
    gnutls_datum_t   d;
    gn_str_t         v = { 0, NULL };

    if (t != NULL
        && gnutls_alpn_get_selected_protocol(t->session, &d)
           == GNUTLS_E_SUCCESS)
    {
        v.data = d.data;
        v.len = d.size;
    }

    return v;
}


/* t->client[which] becomes a malloc()ed copy of the datum, which is
 * freed; the copy lives as long as the connection's TLS state. */
static void
gn_tls_client_set(gn_tls_conn_t *t, gn_uint_t which, gnutls_datum_t *d)
{
    u_char  *p;

    p = malloc(d->size + 1);
    if (p != NULL) {
        memcpy(p, d->data, d->size);
        t->client[which].data = p;
        t->client[which].len = d->size;
        t->client_owned |= 1u << which;
    }
    gnutls_free(d->data);
}


/* ... or the upper-case hex of n bytes */
static void
gn_tls_client_hex(gn_tls_conn_t *t, gn_uint_t which, const u_char *p,
    size_t n)
{
    static const char  hex[] = "0123456789ABCDEF";
    gnutls_datum_t     d;
    size_t             i;

    d.data = gnutls_malloc(2 * n);
    if (d.data == NULL) {
        return;
    }
    for (i = 0; i < n; i++) {
        d.data[2 * i] = (u_char) hex[p[i] >> 4];
        d.data[2 * i + 1] = (u_char) hex[p[i] & 0xf];
    }
    d.size = (unsigned int) (2 * n);
    gn_tls_client_set(t, which, &d);
}


/* The CAs above the client's certificate in the chain it sent, the one
 * that signed the last of them counted: n, less a trust anchor (a
 * self-signed certificate) the client sent along. */
static gn_uint_t
gn_tls_client_chain(const gnutls_datum_t *list, unsigned int n)
{
    gnutls_x509_crt_t  crt;
    gn_uint_t          self = 0;

    if (n > 1 && gnutls_x509_crt_init(&crt) == GNUTLS_E_SUCCESS) {
        if (gnutls_x509_crt_import(crt, &list[n - 1], GNUTLS_X509_FMT_DER)
            == GNUTLS_E_SUCCESS)
        {
            self = gnutls_x509_crt_check_issuer(crt, crt) != 0;
        }
        gnutls_x509_crt_deinit(crt);
    }

    return n - self;
}


/* The peer's certificate: verified against the server's CAs (and CRL,
 * tls_verify_depth) and read once. */
static void
gn_tls_client_read(gn_tls_conn_t *t, gn_uint_t depth)
{
    const gnutls_datum_t  *list;
    gnutls_x509_crt_t      crt;
    gnutls_datum_t         d;
    unsigned int           n, status;
    u_char                 buf[64];
    size_t                 len;
    int                    rc;

    t->client_done = 1;
    for (n = 0; n < GN_TLS_CLIENT_N; n++) {
        gn_str_set(&t->client[n], "");
    }

    list = gnutls_certificate_get_peers(t->session, &n);
    if (list == NULL || n == 0) {
        t->client_none = 1;
        gn_str_set(&t->client[GN_TLS_CLIENT_VERIFY], "NONE");
        return;
    }

    rc = gnutls_certificate_verify_peers3(t->session, NULL, &status);
    t->client_status = rc == GNUTLS_E_SUCCESS ? status
                                              : GNUTLS_CERT_INVALID;
    if (t->client_status == 0 && gn_tls_client_chain(list, n) > depth) {
        /* nginx's tls_verify_depth: the certificates of the chain above
         * the client's own, its CA's included (depth 1: the trusted CA
         * signed it) */
        gn_str_set(&t->client[GN_TLS_CLIENT_VERIFY],
                   "FAILED:certificate chain too long");
        t->client_status = GNUTLS_CERT_INVALID;

    } else if (t->client_status == 0) {
        gn_str_set(&t->client[GN_TLS_CLIENT_VERIFY], "SUCCESS");
    } else if (gnutls_certificate_verification_status_print(
                   t->client_status, GNUTLS_CRT_X509, &d, 0) == 0)
    {
        /* "FAILED:" and GnuTLS's words for what is wrong */
        d.data = gnutls_realloc(d.data, d.size + 7);
        if (d.data != NULL) {
            memmove(d.data + 7, d.data, d.size);
            memcpy(d.data, "FAILED:", 7);
            d.size += 7;
            gn_tls_client_set(t, GN_TLS_CLIENT_VERIFY, &d);
        }
    }
    if (t->client[GN_TLS_CLIENT_VERIFY].len == 0) {
        gn_str_set(&t->client[GN_TLS_CLIENT_VERIFY], "FAILED");
    }

    if (gnutls_x509_crt_init(&crt) != GNUTLS_E_SUCCESS) {
        return;
    }
    if (gnutls_x509_crt_import(crt, &list[0], GNUTLS_X509_FMT_DER)
        == GNUTLS_E_SUCCESS)
    {
        if (gnutls_x509_crt_get_dn3(crt, &d, 0) == GNUTLS_E_SUCCESS) {
            gn_tls_client_set(t, GN_TLS_CLIENT_S_DN, &d);
        }
        if (gnutls_x509_crt_get_issuer_dn3(crt, &d, 0) == GNUTLS_E_SUCCESS) {
            gn_tls_client_set(t, GN_TLS_CLIENT_I_DN, &d);
        }
        len = sizeof(buf);
        if (gnutls_x509_crt_get_serial(crt, buf, &len) == GNUTLS_E_SUCCESS) {
            gn_tls_client_hex(t, GN_TLS_CLIENT_SERIAL, buf, len);
        }
        len = sizeof(buf);
        if (gnutls_x509_crt_get_fingerprint(crt, GNUTLS_DIG_SHA1, buf, &len)
            == GNUTLS_E_SUCCESS)
        {
            gn_tls_client_hex(t, GN_TLS_CLIENT_FINGERPRINT, buf, len);
        }
    }
    gnutls_x509_crt_deinit(crt);
}


gn_str_t
gn_tls_client(gn_conn_t *c, gn_uint_t which)
{
    gn_tls_conn_t  *t = c->tls;
    gn_tls_srv_t   *ts;
    gn_str_t        none = gn_string("");

    if (t == NULL || t->session == NULL || !t->established
        || which >= GN_TLS_CLIENT_N)
    {
        return none;
    }
    if (!t->client_done) {
        ts = t->sni_srv != NULL ? t->sni_srv->tls
                                : c->listen->default_srv->tls;
        gn_tls_client_read(t, ts != NULL ? ts->verify_depth : 1);
    }
    return t->client[which];
}


gn_int_t
gn_tls_client_check(gn_conn_t *c, gn_srv_conf_t *sc, const char **why)
{
    gn_tls_srv_t    *ts = sc->tls;
    gn_tls_conn_t   *t = c->tls;

    if (ts == NULL || ts->verify == GN_TLS_VERIFY_OFF || t == NULL
        || ts->verify == GN_TLS_VERIFY_NO_CA)
    {
        return GN_OK;
    }

    (void) gn_tls_client(c, GN_TLS_CLIENT_VERIFY);

    if (t->client_none) {
        *why = "client sent no required TLS certificate";
        return ts->verify == GN_TLS_VERIFY_ON ? GN_DECLINED : GN_OK;
    }
    if (t->client_status != 0) {
        *why = "client TLS certificate verify error";
        return GN_DECLINED;
    }
    return GN_OK;
}


void
gn_tls_conn_info(gn_conn_t *c, gn_str_t *protocol, gn_str_t *cipher,
    gn_str_t *resumed, gn_str_t *sni)
{
    gn_tls_conn_t  *t = c->tls;
    const char     *s;

    /* absent: empty, which a log writes as "-" (or "" in JSON) */
    gn_str_set(protocol, "");
    gn_str_set(cipher, "");
    gn_str_set(resumed, "");
    gn_str_set(sni, "");

    if (t == NULL || t->session == NULL || !t->established) {
        return;             /* (plain HTTP on a TLS port: no handshake) */
    }

    switch (gnutls_protocol_get_version(t->session)) {
    case GNUTLS_TLS1_3: gn_str_set(protocol, "TLSv1.3"); break;
    case GNUTLS_TLS1_2: gn_str_set(protocol, "TLSv1.2"); break;
    default: gn_str_set(protocol, "?"); break;
    }

    s = gnutls_ciphersuite_get(t->session);
    if (s != NULL) {
        cipher->data = (u_char *) s;
        cipher->len = strlen(s);
    }

    if (gnutls_session_is_resumed(t->session)) {
        gn_str_set(resumed, "r");
    } else {
        gn_str_set(resumed, ".");
    }

    if (t->sni[0]) {
        sni->data = (u_char *) t->sni;
        sni->len = strlen(t->sni);
    }
}


/* The session's last record, once: the alert of the error that ended it,
 * or close_notify after a completed handshake. GN_AGAIN: the socket is
 * full, call again when it is writable (GnuTLS holds the record). */
static gn_int_t
gn_tls_end(gn_conn_t *c)
{
    gn_tls_conn_t  *t = c->tls;
    int             rc;

    if (t->ended || t->session == NULL || c->io.fd == -1) {
        return GN_OK;
    }

    t->more = 1;                        /* the FIN follows at once */

    if (t->fatal != 0) {
        rc = gnutls_alert_send_appropriate(t->session, t->fatal);
    } else if (c->ops == &gn_tls_ops) {
        /* never wait for the peer's close_notify */
        rc = gnutls_bye(t->session, GNUTLS_SHUT_WR);
    } else {
        rc = GNUTLS_E_SUCCESS;          /* a handshake cut short */
    }

    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
        return GN_AGAIN;
    }

    t->ended = 1;
    return GN_OK;
}


static gn_int_t
gn_tls_conn_shutdown(gn_conn_t *c)
{
    if (c->tls == NULL) {
        return GN_OK;
    }

    if (gn_tls_end(c) == GN_AGAIN) {
        return GN_AGAIN;
    }

    gn_tls_conn_close(c);
    return GN_OK;
}


static void
gn_tls_conn_close(gn_conn_t *c)
{
    gn_tls_conn_t  *t = c->tls;
    gn_uint_t       i;

    if (t == NULL) {
        return;
    }

    if (t->session != NULL) {
        /* best effort: the close() that follows at once adds the FIN to
         * the record's packet */
        (void) gn_tls_end(c);
        gnutls_deinit(t->session);
    }

    if (t->mop != NULL) {
        gn_memc_abandon(t->mop);
    }
    if (gn_timer_is_set(&t->mtimer)) {
        gn_timer_del(&t->mtimer);
    }
    free(t->pref);
    for (i = 0; i < GN_TLS_CLIENT_N; i++) {
        if (t->client_owned & (1u << i)) {
            free(t->client[i].data);
        }
    }

    gn_tls_in_put(t);
    free(t);
    c->tls = NULL;
}


/* ---- transport (children) -------------------------------------------- */

/*
 * GnuTLS reads a record as two asks, its 5-byte header then its body: one
 * recv() each, and one more that meets EAGAIN after a flight. Instead one
 * recv() fills a read-ahead buffer with what the socket has (a request
 * record, often a whole handshake flight) and the asks are served from
 * it. The buffer is held only while it has bytes (a free list keeps
 * them), so an idle connection holds none.
 *
 * c->read_ready keeps its meaning, "the socket or the buffer may have
 * bytes": a fill that returned less than asked for emptied the socket (as
 * in the plain recv), so once the buffer is emptied too the next ask is
 * answered EAGAIN without a system call; edge-triggered epoll reports the
 * next bytes to arrive. Not after the peer's FIN (c->hup): the 0 that
 * ends the connection has to be read.
 */

static u_char *
gn_tls_in_get(void)
{
    u_char  *b;

    b = gn_free_list_pop(&gn_tls_in_free);

    return b != NULL ? b : malloc(GN_TLS_INBUF);
}


static void
gn_tls_in_put(gn_tls_conn_t *t)
{
    if (t->in != NULL) {
        gn_free_list_push(&gn_tls_in_free, t->in);
        t->in = NULL;
    }

    t->in_pos = 0;
    t->in_end = 0;
}


/* Fills the empty read-ahead buffer: bytes read, 0 at EOF, -1 with errno
 * (EAGAIN: nothing there, or the socket was emptied already). */
static ssize_t
gn_tls_fill(gn_conn_t *c)
{
    gn_tls_conn_t  *t = c->tls;
    ssize_t         n;

    if (!c->read_ready) {
        errno = EAGAIN;
        return -1;
    }

    if (t->in == NULL) {
        t->in = gn_tls_in_get();
        if (t->in == NULL) {
            errno = ENOMEM;
            return -1;
        }
    }

    do {
        n = recv(c->io.fd, t->in, GN_TLS_INBUF, 0);
    } while (n == -1 && errno == EINTR);

    if (n <= 0) {
        if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->read_ready = 0;
        }
        gn_tls_in_put(t);
        return n;
    }

    t->in_pos = 0;
    t->in_end = (size_t) n;
    t->drained = (n < GN_TLS_INBUF && !c->hup);

    return n;
}


/* A pull that could not be served: an empty socket clears c->read_ready
 * (the next bytes bring an event) and is noted for gn_tls_again(). */
static void
gn_tls_pull_error(gn_conn_t *c, int err)
{
    gn_tls_conn_t  *t = c->tls;

    if (err == EAGAIN || err == EWOULDBLOCK) {
        c->read_ready = 0;
        t->eagain = 1;
    }
    gnutls_transport_set_errno(t->session, err);
}


static ssize_t
gn_tls_pull(gnutls_transport_ptr_t ptr, void *data, size_t len)
{
    gn_conn_t      *c = ptr;
    gn_tls_conn_t  *t = c->tls;
    ssize_t         n;
    size_t          k;

    t->pulled = 1;

    if (t->in_pos == t->in_end) {

        if (len >= GN_TLS_INBUF && c->read_ready) {
            /* a big record's body: straight into GnuTLS's buffer */
            do {
                n = recv(c->io.fd, data, len, 0);
            } while (n == -1 && errno == EINTR);

            if (n > 0 && (size_t) n < len && !c->hup) {
                c->read_ready = 0;
            }
            if (n == -1) {
                gn_tls_pull_error(c, errno);
            }
            return n;
        }

        n = gn_tls_fill(c);
        if (n <= 0) {
            if (n == -1) {
                gn_tls_pull_error(c, errno);
            }
            return n;
        }
    }

    k = gn_min(len, t->in_end - t->in_pos);
    memcpy(data, t->in + t->in_pos, k);
    t->in_pos += k;

    if (t->in_pos == t->in_end) {
        gn_tls_in_put(t);
        if (t->drained) {
            t->drained = 0;
            c->read_ready = 0;
        }
    }

    return (ssize_t) k;
}


/* Never blocks (the event loop): GnuTLS asks with ms 0 on a non-blocking
 * session, to know whether bytes are there. */
static int
gn_tls_pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms)
{
    gn_conn_t      *c = ptr;
    gn_tls_conn_t  *t = c->tls;
    struct pollfd   p;

    (void) ms;

    if (t->in_pos < t->in_end) {
        return 1;
    }

    p.fd = c->io.fd;
    p.events = POLLIN;
    p.revents = 0;

    return poll(&p, 1, 0);
}


/* A flight or a record, through the connection's batched writes
 * (sendq.h: a small one goes with the round's); MSG_MORE when the caller
 * said more follows at once (the rest of a response, or the close after
 * the last one). */
static ssize_t
gn_tls_push(gnutls_transport_ptr_t ptr, const giovec_t *iov, int iovcnt)
{
    gn_conn_t      *c = ptr;
    gn_tls_conn_t  *t = c->tls;
    ssize_t         n;

    n = gn_sendq_writev(&c->sq, c->io.fd, (const struct iovec *) iov,
                        iovcnt, (int) t->more);

    if (n < 0) {
        if (n == GN_AGAIN) {
            errno = EAGAIN;
        }
        gnutls_transport_set_errno(t->session, errno);
        return -1;
    }

    return n;
}


/* ---- record I/O (children) ------------------------------------------- */

static ssize_t
gn_tls_recv(gn_conn_t *c, u_char *buf, size_t len)
{
    gn_tls_conn_t  *t = c->tls;
    ssize_t         n;

    for ( ;; ) {
        t->eagain = 0;
        t->pulled = 0;
        n = gnutls_record_recv(t->session, buf, len);

        if (n >= 0) {
            /* more plaintext of this record waits inside GnuTLS */
            if (n > 0 && gnutls_record_check_pending(t->session) > 0) {
                c->read_ready = 1;
            }
            return n;
        }

        if (n == GNUTLS_E_REHANDSHAKE) {
            /* TLS 1.2 client-initiated renegotiation: refused with a
             * warning (RFC 5246 section 7.2.2); the connection goes on */
            gn_log_error(GN_LOG_INFO, &c->log, 0, "client asked for TLS "
                         "renegotiation, refused");
            (void) gnutls_alert_send(t->session, GNUTLS_AL_WARNING,
                                     GNUTLS_A_NO_RENEGOTIATION);
            t->refused = 1;
            continue;
        }

        if (n == GNUTLS_E_UNEXPECTED_PACKET && t->refused) {
            /* GnuTLS keeps the refused ClientHello in its record buffer
             * (for a gnutls_handshake() that will not come); the next
             * read discards it with this error, and the session goes on
             * (lib/buffers.c, _gnutls_record_buffer_get, 3.7) */
            t->refused = 0;
            continue;
        }
        t->refused = 0;

        if (!gn_tls_again(c, (int) n)) {
            break;
        }
    }

    if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
        return GN_AGAIN;
    }

    if (n == GNUTLS_E_PREMATURE_TERMINATION) {
        t->ended = 1;
        return 0;
    }

    if (gn_tls_failed(c, (int) n)) {
        gn_log_error(GN_LOG_INFO, &c->log, 0, "TLS receive failed: %s",
                     gnutls_strerror((int) n));
    }
    errno = ECONNRESET;
    return GN_ERROR;
}


/*
 * Sends one record of data (len bytes, set in t->out_len by the caller),
 * or with data NULL the record a GN_AGAIN left pending: GnuTLS encrypted
 * it into its own buffer already and sends the rest of it on a call with
 * no data, so no connection keeps a copy of its plaintext. Returns the
 * record's plaintext length once it is out, GN_AGAIN or GN_ERROR.
 */
static ssize_t
gn_tls_flush(gn_conn_t *c, const u_char *data, size_t len)
{
    gn_tls_conn_t  *t = c->tls;
    ssize_t         n;

    n = gnutls_record_send(t->session, data, len);

    if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
        return GN_AGAIN;              /* the retry pushes with t->more */
    }

    t->more = 0;

    if (n < 0) {
        gn_log_error(GN_LOG_INFO, &c->log, 0, "TLS send failed: %s",
                     gnutls_strerror((int) n));
        errno = ECONNRESET;
        t->out_len = 0;
        return GN_ERROR;
    }

    /* GnuTLS sends a whole record or nothing */
    n = (ssize_t) t->out_len;
    t->out_len = 0;
    return n;
}


/* The plaintext of one record: 16 KiB, or less when the client asked for
 * smaller records (max_fragment_length, record_size_limit); GnuTLS would
 * send only that much of a larger buffer. */
static size_t
gn_tls_record_max(gn_tls_conn_t *t)
{
    size_t  max;

    max = gnutls_record_get_max_size(t->session);

    return (max == 0 || max > GN_TLS_RECORD) ? GN_TLS_RECORD : max;
}


/*
 * Sends up to one record of iov. Small responses leave as one small
 * record at once (no 16 KiB buffering); a record made of several pieces
 * (a head and a body) is gathered first, one from a single piece is not
 * copied. After GN_AGAIN the caller calls again with the same data in
 * front, and gets the pending record's count once it is out.
 */
static ssize_t
gn_tls_writev(gn_conn_t *c, struct iovec *iov, int n, int more)
{
    gn_tls_conn_t  *t = c->tls;
    const u_char   *data;
    size_t          len, k, total, max;
    int             i;

    if (t->out_len != 0) {
        return gn_tls_flush(c, NULL, 0);
    }

    for (total = 0, i = 0; i < n; i++) {
        total += iov[i].iov_len;
    }

    if (total == 0) {
        return 0;
    }

    if (t->tickets && gn_tls_tickets(c, 1) == GN_AGAIN) {
        return GN_AGAIN;
    }

    max = gn_tls_record_max(t);

    if (n == 1 || iov[0].iov_len >= max) {
        data = iov[0].iov_base;
        len = gn_min(iov[0].iov_len, max);

    } else {
        for (len = 0, i = 0; i < n && len < max; i++) {
            k = gn_min(iov[i].iov_len, max - len);
            memcpy(gn_tls_gather + len, iov[i].iov_base, k);
            len += k;
        }
        data = gn_tls_gather;
    }

    t->out_len = len;

    /* the next record follows at once when this one did not take all it
     * was given */
    t->more = (more || total > len);

    return gn_tls_flush(c, data, len);
}


/* Files over TLS: a record's worth read into the gather buffer. The
 * cached bytes of small files never come here (they are memory). */
static ssize_t
gn_tls_sendfile(gn_conn_t *c, int fd, off_t *off, size_t len)
{
    gn_tls_conn_t  *t = c->tls;
    ssize_t         n;

    if (t->out_len != 0) {
        n = gn_tls_flush(c, NULL, 0);

    } else if (t->tickets && gn_tls_tickets(c, 1) == GN_AGAIN) {
        return GN_AGAIN;

    } else {
        n = pread(fd, gn_tls_gather, gn_min(len, gn_tls_record_max(t)), *off);
        if (n <= 0) {
            if (n == 0) {
                errno = 0;
            }
            return n == 0 ? 0 : GN_ERROR;
        }

        t->out_len = (size_t) n;
        t->more = ((size_t) n < len);

        n = gn_tls_flush(c, gn_tls_gather, (size_t) n);
    }

    if (n > 0) {
        *off += n;
    }

    return n;
}


/* ---- the TLS directives ------------------------------------------------- */

/* tls_certificate / tls_certificate_key: repeatable, paired by order */
static char *
gn_tls_conf_file(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_array_t      **slot = (gn_array_t **) ((u_char *) conf + cmd->offset);
    gn_str_t         *value = cf->args->elts;
    gn_conf_path_t   *f;
    int               fd;

    if (*slot == NULL) {
        *slot = gn_array_create(cf->pool, 2, sizeof(gn_conf_path_t));
        if (*slot == NULL) {
            return "failed (out of memory)";
        }
    }

    f = gn_array_push(*slot);
    if (f == NULL) {
        return "failed (out of memory)";
    }

    f->path = value[1];
    f->file = cf->file->name;
    f->line = cf->file->line;
    if (gn_conf_full_name(cf, &f->path, 0) != GN_OK) {
        return "failed (out of memory)";
    }

    /* the master reads it (as root, before the privilege drop): a file
     * it cannot open is this line's error */
    fd = open((char *) f->path.data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        gn_conf_error(cf, "cannot open \"%.*s\" (%d: %s) in \"%.*s\" "
                      "directive", GN_STR_ARG(&f->path), errno,
                      strerror(errno), GN_STR_ARG(&cmd->name));
        return GN_CONF_ERROR;
    }
    close(fd);

    return GN_CONF_OK;
}


static char *
gn_tls_conf_protocols(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_tls_conf_t  *tlc = conf;
    gn_str_t       *value = cf->args->elts;
    gn_uint_t       i;

    if (tlc->protocols != GN_CONF_UNSET_UINT) {
        return "is duplicate";
    }

    tlc->protocols = 0;
    for (i = 1; i < cf->args->nelts; i++) {
        if (gn_str_eq(&value[i], "TLSv1.2")) {
            tlc->protocols |= GN_TLS_PROTO_12;
        } else if (gn_str_eq(&value[i], "TLSv1.3")) {
            tlc->protocols |= GN_TLS_PROTO_13;
        } else {
            gn_conf_error(cf, "unsupported protocol \"%.*s\" in "
                          "\"tls_protocols\" directive, it must be "
                          "\"TLSv1.2\" or \"TLSv1.3\"", GN_STR_ARG(&value[i]));
            return GN_CONF_ERROR;
        }
    }

    return GN_CONF_OK;
}


static char *
gn_tls_conf_session_cache(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf)
{
    gn_tls_conf_t   *tlc = conf;
    gn_str_t        *value = cf->args->elts;

    if (tlc->session_cache != GN_CONF_UNSET) {
        return "is duplicate";
    }

    if (gn_str_eq(&value[1], "off")) {
        tlc->session_cache = 0;
        return GN_CONF_OK;
    }

    tlc->session_cache = gn_parse_size(&value[1]);
    if (tlc->session_cache == GN_ERROR) {
        gn_conf_error(cf, "invalid size \"%.*s\" in \"tls_session_cache\" "
                      "directive, expected a size such as 4m, or off",
                      GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}



/* tls_session_memcached HOST:PORT ... | off: names resolved now */
static char *
gn_tls_conf_memcached(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_tls_conf_t   *tlc = conf;
    gn_str_t        *value = cf->args->elts;
    gn_addr_t  *a;
    const char      *e;
    gn_uint_t        i;

    (void) cmd;

    if (tlc->memcached != NULL) {
        return "is duplicate";
    }
    if (cf->args->nelts == 2 && gn_str_eq(&value[1], "off")) {
        return GN_CONF_OK;
    }

    tlc->memcached = gn_array_create(cf->pool, cf->args->nelts - 1,
                                     sizeof(gn_addr_t));
    if (tlc->memcached == NULL) {
        return "failed (out of memory)";
    }

    for (i = 1; i < cf->args->nelts; i++) {
        a = gn_array_push(tlc->memcached);
        if (a == NULL) {
            return "failed (out of memory)";
        }
        e = gn_addr_parse(a, &value[i], 0);
        if (e != NULL) {
            gn_conf_error(cf, "invalid memcached server \"%.*s\" in "
                          "\"tls_session_memcached\" directive: %s",
                          GN_STR_ARG(&value[i]), e);
            return GN_CONF_ERROR;
        }
    }

    return GN_CONF_OK;
}


static char *
gn_tls_conf_memc_prefix(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_tls_conf_t  *tlc = conf;
    gn_str_t       *value = cf->args->elts;
    size_t          i;

    (void) cmd;

    if (tlc->memcached_prefix.data != NULL) {
        return "is duplicate";
    }

    for (i = 0; i < value[1].len; i++) {
        u_char  ch = value[1].data[i];

        if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z')
            && !(ch >= '0' && ch <= '9') && ch != '.' && ch != '_'
            && ch != '-')
        {
            break;
        }
    }
    if (value[1].len == 0 || value[1].len > 64 || i < value[1].len) {
        gn_conf_error(cf, "invalid prefix \"%.*s\" in "
                      "\"tls_session_memcached_prefix\" directive, expected "
                      "1 to 64 letters, digits, '.', '_' or '-'",
                      GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }

    tlc->memcached_prefix = value[1];
    return GN_CONF_OK;
}


static gn_int_t
gn_tls_create_conf(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    gn_tls_conf_t  *tlc = gn_tls_conf(lc);

    (void) cf;

    tlc->protocols = GN_CONF_UNSET_UINT;
    tlc->session_cache = GN_CONF_UNSET;

    return GN_OK;
}


static gn_int_t
gn_tls_merge_conf(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_tls_conf_t  *tlc = gn_tls_conf(lc);
    gn_tls_conf_t  *ptlc = prev != NULL ? gn_tls_conf(prev) : NULL;

    (void) cf;

    if (tlc->protocols == GN_CONF_UNSET_UINT) {
        tlc->protocols = ptlc != NULL && ptlc->protocols != GN_CONF_UNSET_UINT
                         ? ptlc->protocols : GN_TLS_PROTO_12 | GN_TLS_PROTO_13;
    }

    /* main level only */
    if (prev == NULL && tlc->session_cache == GN_CONF_UNSET) {
        tlc->session_cache = 4 * 1024 * 1024;
    }
    if (prev == NULL && tlc->memcached_prefix.data == NULL) {
        tlc->memcached_prefix.data = (u_char *) "gannet";
        tlc->memcached_prefix.len = sizeof("gannet") - 1;
    }

    return GN_OK;
}


/* credentials are read here, by the master, before any fork */
static gn_int_t
gn_tls_init_cycle(gn_conf_t *cf, gn_cycle_t *cycle)
{
    return gn_tls_cycle_create(cycle, cf->err, sizeof(cf->err));
}


const gn_feature_t  gn_tls_feature = {
    .name = "tls", .commands = gn_tls_commands,
    .conf_size = sizeof(gn_tls_conf_t),
    .create_conf = gn_tls_create_conf,
    .merge_conf = gn_tls_merge_conf,
    .init_cycle = gn_tls_init_cycle,
    .open_cycle = gn_tls_cycle_open
};
