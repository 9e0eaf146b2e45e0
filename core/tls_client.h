/*
 * TLS to upstreams (proxy_pass https://): GnuTLS client sessions on a
 * child's non-blocking upstream sockets. The credentials (the trusted
 * CAs) are loaded with the configuration, in the master; a session is
 * made per connection, verifies the server's certificate against the
 * name when asked (proxy_tls_verify), sends that name by SNI, and
 * resumes the last session of its server when it can, so a new pooled
 * connection does not cost a full handshake.
 */

#ifndef GN_CORE_TLS_CLIENT_H_INCLUDED
#define GN_CORE_TLS_CLIENT_H_INCLUDED

#include "gn_config.h"

#include <gnutls/gnutls.h>


typedef struct {
    gnutls_certificate_credentials_t   cred;
    gn_str_t                           name;     /* SNI and verified */
    char                              *cname;    /* ... NUL-terminated */
    gn_uint_t                          is_addr;  /* ... an IP address */
    gn_flag_t                          verify;
    gn_flag_t                          reuse;    /* session resumption */
    gnutls_datum_t                     session;  /* child: the last one */
} gn_tls_client_t;

/* Master, at load: credentials for tc, with the CAs of `trusted` (NULL:
 * none; then verify must be off). NULL, or why not. */
const char *gn_tls_client_init(gn_tls_client_t *tc, const char *trusted);

/* A pool cleanup: tc's credentials are freed (with its cycle). */
void gn_tls_client_done(void *tc);

/* A client session on fd for tc: NULL on failure (no memory). */
gnutls_session_t gn_tls_client_new(gn_tls_client_t *tc, int fd);

/* Drives the handshake: GN_OK, GN_AGAIN (wait for the socket), or
 * GN_ERROR with *err set (GnuTLS's text, or the verification's). On
 * GN_OK, the session is kept for the next connection's resumption. */
gn_int_t gn_tls_client_handshake(gn_tls_client_t *tc, gnutls_session_t s,
    const char **err);

/* Keeps s's session for tc's next connections (TLS 1.3: call it once
 * a response was read, when the server's ticket has come). */
void gn_tls_client_save(gn_tls_client_t *tc, gnutls_session_t s);

/* Record I/O: bytes, 0 (recv: closed), GN_AGAIN, or GN_ERROR. */
ssize_t gn_tls_client_send(gnutls_session_t s, const u_char *p, size_t n);
ssize_t gn_tls_client_recv(gnutls_session_t s, u_char *p, size_t n);

/* Best-effort close_notify, then the session is freed. */
void gn_tls_client_free(gnutls_session_t s);

#endif /* GN_CORE_TLS_CLIENT_H_INCLUDED */
