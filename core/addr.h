/*
 * The address of a server the child talks to (an upstream, a memcached),
 * as configured and resolved when the configuration is loaded.
 */

#ifndef GN_CORE_ADDR_H_INCLUDED
#define GN_CORE_ADDR_H_INCLUDED

#include "gn_config.h"

#include <sys/socket.h>


/* IPv4, IPv6 or unix:PATH. */
typedef struct {
    gn_str_t                 name;      /* as configured: "host:port" */
    struct sockaddr_storage  sa;
    socklen_t                socklen;
} gn_addr_t;

/* Resolves text ("HOST:PORT", "[IPv6]:PORT", or with unix_ok,
 * "unix:PATH") into a; the first address a name has. NULL, or why not
 * (for the caller's configuration error). Master, at load. */
const char *gn_addr_parse(gn_addr_t *a, const gn_str_t *text,
    gn_uint_t unix_ok);

#endif /* GN_CORE_ADDR_H_INCLUDED */
