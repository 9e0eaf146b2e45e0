/*
 * Listening sockets: parsed from `listen`, opened by the master before
 * fork, inherited by every child, and taken over by the next cycle on
 * reload when the address is unchanged (the socket, and the connections
 * queued on it, survive the reload).
 */

#ifndef GN_CORE_LISTEN_H_INCLUDED
#define GN_CORE_LISTEN_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"


/* "8080", "*:8080", "127.0.0.1:8080", "[::1]:8080", "localhost:8080". */
gn_int_t gn_listen_parse_addr(const gn_str_t *text, gn_listen_opt_t *lo,
    char *err, size_t errlen);

/* The registry's "listen": the listen directive; a server without one
 * listens on *:80; the servers' options grouped by address into
 * cycle->listening (configuration work, opens nothing); the master
 * binds and listens (or takes over the old cycle's socket for the same
 * address) and closes what the next cycle does not take over. */
extern const gn_feature_t  gn_listen_feature;

/* At start, before the configuration is opened: takes note of the
 * listening sockets passed by LISTEN_FDS / LISTEN_PID (systemd socket
 * activation; fds 3 ...), which the first cycle uses for the listen
 * directives with their addresses instead of binding (and closes the
 * rest); removes those variables from the environment. */
void gn_listen_inherit(gn_log_t *log);

/* Closes the sockets of `old` that `cycle` did not take over (cycle may
 * be NULL: close all). */
void gn_listen_close_unused(gn_cycle_t *old, gn_cycle_t *cycle);

/* Formats an address as "1.2.3.4" or "::1" (no port). */
size_t gn_sockaddr_text(const struct sockaddr *sa, char *buf, size_t len);

#endif /* GN_CORE_LISTEN_H_INCLUDED */
