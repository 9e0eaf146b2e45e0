/*
 * Gannet module ABI version.
 *
 * Rules (also in doc/modules.md):
 *   - Appending a member to the end of gn_api_t or gn_module_t, or a new
 *     constant, bumps GN_ABI_MINOR.
 *   - A module's descriptor says the oldest minor it needs (abi_minor):
 *     GN_MODULE_V1 the minor of the headers it is built with,
 *     GN_MODULE_V1_NEEDS(N) an older one, for a module that calls only
 *     what 1.N has and tests newer members at run time (api->size /
 *     GN_API_HAS()). A 1.M server loads a module that needs 1.N when
 *     N <= M and refuses it otherwise, with a message naming both.
 *   - Any other change (removing, reordering or changing a member or a
 *     type, changing a meaning) bumps GN_ABI_MAJOR and renames the entry
 *     symbol (gn_module_v1 -> gn_module_v2): an old module then fails to
 *     load with a clear message instead of misbehaving.
 *   - Every bump gets a line in the history below.
 *
 * History:
 *   1.0  2026-11-30  first stable ABI: gn_module_t, gn_api_t (request,
 *                    response, body, logging, memory, event loop, timers,
 *                    configuration), typed directives.
 *   1.1  2026-11-30  gn_api_t.read_file: a whole file's bytes through the
 *                    open-file cache.
 *   1.2  2026-12-02  the optional entry point gn_module_v1_check_conf
 *                    (GN_MODULE_CHECK) and gn_api_t.conf_error:
 *                    configuration checks that run under `gannet -t` and
 *                    at reload and name the directive's file and line.
 *                    GN_MODULE_V1_NEEDS(N): abi_minor is the oldest minor
 *                    a module needs (what every 1.x server compared it
 *                    with), so a module built with these headers can
 *                    load in a 1.0 or 1.1 server.
 *   1.3  2026-12-02  gn_api_t.proto_stats and gn_proto_stats_t:
 *                    requests by protocol (HTTP/1.x, HTTP/2), HTTP/2
 *                    connections and streams open, each HTTP/2 limit's
 *                    trips; filled up to the caller's struct size.
 *   1.4  2026-12-02  gn_api_t.memcached_stats and gn_memcached_stats_t:
 *                    the TLS session cache's memcached tier, one row per
 *                    server (state, lookups, hits, failures by class,
 *                    round-trip time); filled up to the caller's size.
 *                    gn_api_t.tls_ticket_stats and gn_tls_ticket_stats_t:
 *                    the ticket key's id, source and age, tickets issued,
 *                    resumptions by ticket and by session id.
 *   1.5  2026-12-03  gn_api_t.on_drained and gn_drained_pt: a callback
 *                    once a streamed response's unsent bytes have
 *                    fallen to GN_DRAINED_LOW, so a module that write()
 *                    told GN_AGAIN resumes on an event, not on a timer.
 *   1.6  2026-12-03  gn_api_t.upstream_stats and
 *                    gn_upstream_server_stats_t: each upstream server's
 *                    requests, responses by class, failures by kind,
 *                    response-time buckets, state and connections;
 *                    filled up to the caller's size.
 *   1.7  2026-12-04  gn_api_t.limit_stats and gn_limit_zone_stats_t:
 *                    each limit_req_zone's and limit_conn_zone's
 *                    requests passed, delayed and refused, summed over
 *                    the children; filled up to the caller's size.
 *   1.8  2026-12-04  gn_api_t.arg, cookie, unescape, escape_html and
 *                    escape_json, and GN_UNESCAPE_PLUS: a query
 *                    argument, a cookie, percent-decoding and escaping
 *                    for HTML and JSON (the access log's), into
 *                    request memory.
 *   1.9  2026-12-04  gn_api_t.send_fd: a range of a file the module
 *                    holds open (ISAPI's HSE_REQ_TRANSMIT_FILE hands
 *                    over a handle, not a path), sent with sendfile;
 *                    gn_api_t.log_note: text for the access log's
 *                    $module_log (ISAPI's HSE_APPEND_LOG_PARAMETER).
 */

#ifndef GN_API_ABI_H_INCLUDED
#define GN_API_ABI_H_INCLUDED

#define GN_ABI_MAGIC    0x474e4d44u      /* "GNMD" */
#define GN_ABI_MAJOR    1
#define GN_ABI_MINOR    9

/* Compile-time feature test for module writers. */
#define GN_ABI_AT_LEAST(major, minor)                                         \
    (GN_ABI_MAJOR > (major)                                                   \
     || (GN_ABI_MAJOR == (major) && GN_ABI_MINOR >= (minor)))

/* The entry symbol every module of this major exports, and nothing else. */
#define GN_MODULE_ENTRY        gn_module_v1
#define GN_MODULE_ENTRY_NAME   "gn_module_v1"

/* The optional configuration check of this major (1.2, GN_MODULE_CHECK). */
#define GN_MODULE_CHECK_ENTRY       gn_module_v1_check_conf
#define GN_MODULE_CHECK_ENTRY_NAME  "gn_module_v1_check_conf"

#endif /* GN_API_ABI_H_INCLUDED */
