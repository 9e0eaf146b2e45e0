/*
 * allow / deny / satisfy and the auth_basic directives: parsing, merging
 * and the per-request check that runs before any handler.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "access.h"
#include "auth_basic.h"
#include "log.h"
#include "http_request.h"
#include "http_response.h"


static char *gn_access_rule(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_access_satisfy(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_access_auth_basic(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_access_user_file(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);


static const gn_conf_cmd_t  gn_access_commands[] = {

    { gn_string("allow"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_access_rule, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("deny"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_access_rule, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("satisfy"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_access_satisfy, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("auth_basic"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_access_auth_basic, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("auth_basic_user_file"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_access_user_file, GN_CONF_LOC_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


gn_int_t
gn_access_parse_rule(const gn_str_t *text, gn_access_rule_t *rule,
    char *err, size_t errlen)
{
    char           buf[INET6_ADDRSTRLEN + 1];
    const u_char  *slash, *p, *end = text->data + text->len;
    size_t         alen;
    gn_uint_t      bits, max, j, b, deny;

    deny = rule->deny;
    memset(rule, 0, sizeof(gn_access_rule_t));
    rule->deny = deny;

    if (gn_str_eq(text, "all")) {
        rule->family = AF_UNSPEC;
        return GN_OK;
    }

    slash = memchr(text->data, '/', text->len);
    alen = (size_t) ((slash ? slash : end) - text->data);
    if (alen == 0 || alen >= sizeof(buf)) {
        goto invalid;
    }
    memcpy(buf, text->data, alen);
    buf[alen] = '\0';

    if (inet_pton(AF_INET, buf, rule->addr) == 1) {
        rule->family = AF_INET;
        max = 32;
    } else if (inet_pton(AF_INET6, buf, rule->addr) == 1) {
        rule->family = AF_INET6;
        max = 128;
    } else {
        goto invalid;
    }

    bits = max;
    if (slash != NULL) {
        p = slash + 1;
        if (p == end || end - p > 3) {
            goto bad_prefix;
        }
        for (bits = 0; p < end; p++) {
            if (*p < '0' || *p > '9') {
                goto bad_prefix;
            }
            bits = bits * 10 + (gn_uint_t) (*p - '0');
        }
        if (bits > max) {
            goto bad_prefix;
        }
    }

    /* ::ffff:a.b.c.d/96+ is an IPv4 network */
    if (rule->family == AF_INET6 && bits >= 96
        && IN6_IS_ADDR_V4MAPPED((struct in6_addr *) rule->addr))
    {
        memmove(rule->addr, rule->addr + 12, 4);
        memset(rule->addr + 4, 0, 12);
        rule->family = AF_INET;
        bits -= 96;
        max = 32;
    }

    rule->prefix = bits;
    for (j = 0; j < max / 8; j++) {
        b = bits > 8 * j ? gn_min(bits - 8 * j, 8) : 0;
        rule->mask[j] = (u_char) (0xff00 >> b);
        rule->addr[j] &= rule->mask[j];
    }

    return GN_OK;

invalid:

    snprintf(err, errlen, "invalid address \"%.*s\" (an IPv4 or IPv6 "
             "address, a CIDR network or \"all\")", GN_STR_ARG(text));
    return GN_ERROR;

bad_prefix:

    snprintf(err, errlen, "invalid prefix length in \"%.*s\" (0 to %u)",
             GN_STR_ARG(text), (unsigned) max);
    return GN_ERROR;
}


gn_uint_t
gn_access_match(const gn_access_rule_t *rules, gn_uint_t n,
    const struct sockaddr *sa)
{
    const struct sockaddr_in   *sin;
    const struct sockaddr_in6  *sin6;
    const u_char               *a;
    gn_uint_t                   i, j, len;
    int                         family;

    a = NULL;
    family = AF_UNSPEC;
    len = 0;

    if (sa->sa_family == AF_INET) {
        sin = (const struct sockaddr_in *) sa;
        a = (const u_char *) &sin->sin_addr;
        family = AF_INET;
        len = 4;

    } else if (sa->sa_family == AF_INET6) {
        sin6 = (const struct sockaddr_in6 *) sa;
        a = sin6->sin6_addr.s6_addr;
        family = AF_INET6;
        len = 16;
        if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
            a += 12;
            family = AF_INET;
            len = 4;
        }
    }

    for (i = 0; i < n; i++) {
        if (rules[i].family != AF_UNSPEC) {
            if (rules[i].family != family) {
                continue;
            }
            for (j = 0; j < len; j++) {
                if ((a[j] & rules[i].mask[j]) != rules[i].addr[j]) {
                    break;
                }
            }
            if (j < len) {
                continue;
            }
        }

        return rules[i].deny ? GN_ACCESS_DENY : GN_ACCESS_ALLOW;
    }

    return GN_ACCESS_NOMATCH;
}


/* This level's access settings, made on first use. */
static gn_access_conf_t *
gn_access_conf(gn_conf_t *cf, gn_access_part_t *part)
{
    gn_access_conf_t  *ac = part->conf;

    if (ac == NULL) {
        ac = gn_pcalloc(cf->pool, sizeof(gn_access_conf_t));
        if (ac == NULL) {
            return NULL;
        }
        ac->satisfy = GN_CONF_UNSET_UINT;
        ac->auth = GN_CONF_UNSET;
        part->conf = ac;
    }

    return ac;
}


char *
gn_access_conf_rule(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    gn_array_t **rules, gn_uint_t deny)
{
    gn_access_rule_t  *rule;
    gn_str_t          *value = cf->args->elts;
    char               err[256];

    if (*rules == NULL) {
        *rules = gn_array_create(cf->pool, 4, sizeof(gn_access_rule_t));
        if (*rules == NULL) {
            return "failed (out of memory)";
        }
    }

    rule = gn_array_push(*rules);
    if (rule == NULL) {
        return "failed (out of memory)";
    }

    rule->deny = deny;

    if (gn_access_parse_rule(&value[1], rule, err, sizeof(err)) != GN_OK) {
        gn_conf_error(cf, "\"%.*s\" directive: %s", GN_STR_ARG(&cmd->name),
                      err);
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static char *
gn_access_rule(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_access_conf_t  *ac;

    ac = gn_access_conf(cf, conf);
    if (ac == NULL) {
        return "failed (out of memory)";
    }

    return gn_access_conf_rule(cf, cmd, &ac->rules,
                               gn_str_eq(&cmd->name, "deny"));
}


static char *
gn_access_satisfy(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_access_conf_t  *ac;
    gn_str_t          *value = cf->args->elts;

    ac = gn_access_conf(cf, conf);
    if (ac == NULL) {
        return "failed (out of memory)";
    }

    if (ac->satisfy != GN_CONF_UNSET_UINT) {
        return "is duplicate";
    }

    if (gn_str_eq(&value[1], "all")) {
        ac->satisfy = GN_ACCESS_SATISFY_ALL;
    } else if (gn_str_eq(&value[1], "any")) {
        ac->satisfy = GN_ACCESS_SATISFY_ANY;
    } else {
        gn_conf_error(cf, "invalid value \"%.*s\" in \"satisfy\" directive, "
                      "it must be \"all\" or \"any\"",
                      GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


/* auth_basic REALM | off: the challenge header is built here, once. */
static char *
gn_access_auth_basic(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    static const char  head[] = "WWW-Authenticate: Basic realm=\"";
    static const char  tail[] = "\", charset=\"UTF-8\"\r\n";
    gn_access_conf_t  *ac;
    gn_str_t          *realm = &((gn_str_t *) cf->args->elts)[1];
    u_char            *p;
    size_t             i;

    ac = gn_access_conf(cf, conf);
    if (ac == NULL) {
        return "failed (out of memory)";
    }

    if (ac->auth != GN_CONF_UNSET) {
        return "is duplicate";
    }

    ac->auth_file = cf->file->name;
    ac->auth_line = cf->file->line;

    if (gn_str_eq(realm, "off")) {
        ac->auth = 0;
        return GN_CONF_OK;
    }

    ac->auth = 1;
    ac->realm = *realm;

    /* a quoted-string: \ and " escaped, no control characters */
    p = gn_pnalloc(cf->pool, sizeof(head) + 2 * realm->len + sizeof(tail));
    if (p == NULL) {
        return "failed (out of memory)";
    }
    ac->challenge.data = p;
    p = gn_cpymem(p, head, sizeof(head) - 1);

    for (i = 0; i < realm->len; i++) {
        if (realm->data[i] < 0x20 || realm->data[i] == 0x7f) {
            return "has a control character in its realm";
        }
        if (realm->data[i] == '"' || realm->data[i] == '\\') {
            *p++ = '\\';
        }
        *p++ = realm->data[i];
    }

    p = gn_cpymem(p, tail, sizeof(tail) - 1);
    ac->challenge.len = (size_t) (p - ac->challenge.data);

    return GN_CONF_OK;
}


/* auth_basic_user_file FILE: read now, by the master (a reload rereads) */
static char *
gn_access_user_file(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_access_conf_t  *ac;
    gn_str_t           path = ((gn_str_t *) cf->args->elts)[1];
    char               err[1024];

    ac = gn_access_conf(cf, conf);
    if (ac == NULL) {
        return "failed (out of memory)";
    }

    if (ac->users != NULL) {
        return "is duplicate";
    }

    if (gn_conf_full_name(cf, &path, 0) != GN_OK) {
        return GN_CONF_ERROR;
    }

    ac->users = gn_auth_basic_load(cf->pool, (char *) path.data, err,
                                   sizeof(err));
    if (ac->users == NULL) {
        gn_conf_error(cf, "\"auth_basic_user_file\" directive: %s", err);
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


static gn_int_t
gn_access_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_access_conf_t  *ac = gn_access_part(lc)->conf;
    gn_access_conf_t  *pc = prev != NULL ? gn_access_part(prev)->conf : NULL;

    if (ac == NULL) {
        gn_access_part(lc)->conf = pc;   /* none here: share the outer */
        return GN_OK;
    }

    if (pc != NULL) {
        if (ac->rules == NULL) {
            ac->rules = pc->rules;   /* a level with rules replaces them */
        }
        if (ac->satisfy == GN_CONF_UNSET_UINT) {
            ac->satisfy = pc->satisfy;
        }
        if (ac->auth == GN_CONF_UNSET) {
            ac->auth = pc->auth;
            ac->realm = pc->realm;
            ac->challenge = pc->challenge;
            ac->auth_file = pc->auth_file;
            ac->auth_line = pc->auth_line;
        }
        if (ac->users == NULL) {
            ac->users = pc->users;
        }
    }

    if (ac->satisfy == GN_CONF_UNSET_UINT) {
        ac->satisfy = GN_ACCESS_SATISFY_ALL;
    }
    if (ac->auth == GN_CONF_UNSET) {
        ac->auth = 0;
    }

    /* the main level serves no request: a user file may come later */
    if (prev != NULL && ac->auth == 1 && ac->users == NULL) {
        snprintf(cf->err, sizeof(cf->err), "\"auth_basic\" has no "
                 "\"auth_basic_user_file\" at its level or an outer one "
                 "in %.*s:%u", GN_STR_ARG(&ac->auth_file),
                 (unsigned) ac->auth_line);
        return GN_ERROR;
    }

    return GN_OK;
}


gn_int_t
gn_access_check(gn_http_request_t *r)
{
    gn_access_conf_t  *ac = gn_access_part(r->loc)->conf;
    gn_uint_t          m;
    gn_int_t           rc;

    if (ac == NULL) {
        return GN_DECLINED;
    }

    m = GN_ACCESS_NOMATCH;
    if (ac->rules != NULL) {
        m = gn_access_match(ac->rules->elts, ac->rules->nelts,
                            gn_http_peer(r));
    }

    if (m == GN_ACCESS_ALLOW && ac->satisfy == GN_ACCESS_SATISFY_ANY) {
        return GN_DECLINED;
    }

    /* denied: satisfy all, or satisfy any with nothing else to try */
    if (m == GN_ACCESS_DENY
        && (ac->satisfy == GN_ACCESS_SATISFY_ALL || !ac->auth))
    {
        gn_log_error(GN_LOG_INFO, &r->c->log, 0, "access forbidden by rule");
        return gn_http_response_error(r, 403);
    }

    if (!ac->auth) {
        return GN_DECLINED;
    }

    rc = gn_auth_basic_check(r, ac->users);
    if (rc == GN_OK) {
        return GN_DECLINED;
    }
    if (rc == GN_ERROR) {
        return GN_ERROR;
    }

    return gn_auth_basic_challenge(r, &ac->challenge);
}


const gn_feature_t  gn_access_feature = {
    .name = "access", .commands = gn_access_commands,
    .conf_size = sizeof(gn_access_part_t),
    .merge_conf = gn_access_merge
};
