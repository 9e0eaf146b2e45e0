/*
 * Access control: `allow` / `deny` by address, CIDR or `all`, `satisfy`,
 * and the per-level settings of HTTP Basic authentication (auth_basic.c
 * does the checking). All of it is hung off gn_loc_conf_t.access.
 *
 * Rules are tried in order and the first that matches decides; when none
 * matches the request is allowed (nginx). A level that has any allow or
 * deny replaces the rules of the outer level, it does not extend them.
 *
 * The rule parser and matcher are pure (no logging); gn_access_check()
 * runs in a child for every request, after the location is mapped and
 * before body rules and handlers (modules included).
 */

#ifndef GN_CORE_ACCESS_H_INCLUDED
#define GN_CORE_ACCESS_H_INCLUDED

#include "gn_config.h"

#include <sys/socket.h>

#include "conf.h"
#include "cycle.h"


struct gn_http_request_s;
struct gn_auth_basic_users_s;

#define GN_ACCESS_NOMATCH       0
#define GN_ACCESS_ALLOW         1
#define GN_ACCESS_DENY          2

#define GN_ACCESS_SATISFY_ALL   0
#define GN_ACCESS_SATISFY_ANY   1

typedef struct {
    gn_uint_t         deny;
    int               family;      /* AF_INET, AF_INET6; AF_UNSPEC: all */
    gn_uint_t         prefix;      /* bits */
    u_char            addr[16];    /* network order, host bits cleared */
    u_char            mask[16];
} gn_access_rule_t;

typedef struct {
    gn_array_t       *rules;       /* of gn_access_rule_t; NULL: inherit */
    gn_uint_t         satisfy;     /* GN_ACCESS_SATISFY_*, or unset */
    gn_int_t          auth;        /* 1 on, 0 off, GN_CONF_UNSET */
    gn_str_t          challenge;   /* "WWW-Authenticate: ...\r\n" */
    gn_str_t          realm;
    struct gn_auth_basic_users_s  *users;    /* NULL: inherit */
    gn_str_t          auth_file;   /* where auth_basic was given, */
    gn_uint_t         auth_line;   /* for the merge-time error */
} gn_access_conf_t;


/* The "access" feature's part of a level (feature.h): the settings
 * of the nearest level that has any (shared), or NULL: no rules. */
typedef struct {
    gn_access_conf_t *conf;
} gn_access_part_t;

#define gn_access_part(lc)                                                    \
    ((gn_access_part_t *) (lc)->conf[GN_FEATURE_ACCESS])

/* The registry's "access": allow, deny, satisfy, auth_basic,
 * auth_basic_user_file; inherited as a whole by levels without any. */
extern const gn_feature_t  gn_access_feature;

/*
 * Parses "all", "ADDR" or "ADDR/BITS" (IPv4 or IPv6) into rule (deny is
 * left as it was). An IPv4-mapped IPv6 rule (::ffff:a.b.c.d/96 and
 * longer) becomes the IPv4 rule it means. Host bits beyond the prefix are
 * ignored, as nginx does. Returns GN_OK, or GN_ERROR with err filled.
 */
gn_int_t gn_access_parse_rule(const gn_str_t *text, gn_access_rule_t *rule,
    char *err, size_t errlen);

/*
 * First rule matching the peer address decides: GN_ACCESS_ALLOW or
 * GN_ACCESS_DENY; GN_ACCESS_NOMATCH when none does. An IPv4-mapped IPv6
 * peer (::ffff:127.0.0.1) is matched as the IPv4 address it carries.
 * Non-IP peers (AF_UNIX) only match `all`.
 */
gn_uint_t gn_access_match(const gn_access_rule_t *rules, gn_uint_t n,
    const struct sockaddr *sa);

/*
 * Child, per request, once r->loc is known. Returns GN_DECLINED when the
 * request may go on; otherwise a 403 or 401 response has been prepared
 * and the result of preparing it is returned (GN_OK, or GN_ERROR).
 */
gn_int_t gn_access_check(struct gn_http_request_s *r);

/* A directive's rule (its argument, deny or not) appended to *rules
 * (made on first use): a conf set handler's result. For allow / deny
 * and realip.c's set_real_ip_from. */
char *gn_access_conf_rule(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    gn_array_t **rules, gn_uint_t deny);

#endif /* GN_CORE_ACCESS_H_INCLUDED */
