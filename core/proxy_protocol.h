/*
 * The PROXY protocol (HAProxy's "proxy-protocol.txt", versions 1 and 2),
 * as load balancers (HAProxy, AWS NLB, ...) put it in front of a
 * connection: who the client is and what address it connected to. A
 * listener marked `listen ... proxy_protocol` expects the header before
 * anything else (before the TLS ClientHello too); a connection without
 * a valid one is closed. The header's source address is the
 * connection's $proxy_protocol_addr; it becomes the client's address
 * only through `real_ip_header proxy_protocol` (realip.h), as in nginx.
 *
 * Pure layer (no I/O, no logging): conn.c reads the header off a new
 * connection (exactly its bytes, within the default server's
 * client_header_timeout), keeps the addresses in c->proxy and hands the
 * connection on to its layer or protocol; a connection that sends no
 * valid header is closed, logged at "info".
 */

#ifndef GN_CORE_PROXY_PROTOCOL_H_INCLUDED
#define GN_CORE_PROXY_PROTOCOL_H_INCLUDED

#include "gn_config.h"

#include <sys/socket.h>


/* The longest header taken: a version 1 line is at most 107 bytes; a
 * version 2 header is 16 bytes and its addresses with their TLVs, which
 * load balancers keep to a few hundred. */
#define GN_PROXY_PROTOCOL_MAX   1024

typedef struct {
    struct sockaddr_storage  src;   /* ss_family 0: none (LOCAL,
                                       UNKNOWN, or not an IP family) */
    struct sockaddr_storage  dst;
    unsigned                 version:2;    /* 1 or 2 */
} gn_proxy_protocol_t;


/* Parses the header at the start of buf[0..len). Returns its length
 * (> 0) with *pp filled; 0: not all of it is there yet (read more, up to
 * GN_PROXY_PROTOCOL_MAX); -1: not a PROXY protocol header, or a
 * malformed one, with *err a short static reason. */
ssize_t gn_proxy_protocol_parse(const u_char *buf, size_t len,
    gn_proxy_protocol_t *pp, const char **err);

#endif /* GN_CORE_PROXY_PROTOCOL_H_INCLUDED */
