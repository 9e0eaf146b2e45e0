/*
 * What the session cache's network tier needs from a ClientHello before
 * GnuTLS reads it: the session id the client wants to resume, the name
 * it asks for (which server block), and whether it offers TLS 1.3 or a
 * session ticket (either makes the session id useless to look up:
 * GnuTLS never consults the session database for 1.3, and a 1.2 ticket
 * wins over the id).
 *
 * Pure layer: no I/O; pointers point into the caller's bytes.
 */

#ifndef GN_CORE_TLS_HELLO_H_INCLUDED
#define GN_CORE_TLS_HELLO_H_INCLUDED

#include "gn_config.h"


typedef struct {
    const u_char   *sid;            /* NULL when empty */
    size_t          sid_len;        /* 1 .. 32 */
    const u_char   *sni;            /* host_name, NULL when none */
    size_t          sni_len;
    unsigned        tls13:1;        /* supported_versions has 0x0304 */
    unsigned        ticket:1;       /* a non-empty session_ticket */
} gn_tls_hello_t;


/* Parses the ClientHello that starts the TLS records in buf[0..len).
 * GN_OK: *h is filled. GN_AGAIN: the first record does not hold all of
 * it (a fragmented or cut hello: the caller does without). GN_DECLINED:
 * not a well-formed ClientHello (GnuTLS will say so to the client). */
gn_int_t gn_tls_hello_parse(const u_char *buf, size_t len,
    gn_tls_hello_t *h);

#endif /* GN_CORE_TLS_HELLO_H_INCLUDED */
