/*
 * The client's address behind a trusted proxy (realip.h).
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "realip.h"
#include "conn.h"
#include "http_parse.h"
#include "http_request.h"
#include "listen.h"
#include "log.h"


static char *gn_realip_from(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_realip_header(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

#define gn_realip_offset(f)   offsetof(gn_realip_conf_t, f)

static const gn_conf_cmd_t  gn_realip_commands[] = {

    { gn_string("set_real_ip_from"), GN_CONF_MAIN | GN_CONF_SRV
      | GN_CONF_TAKE1, gn_realip_from, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("real_ip_from"), GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_TAKE1,
      gn_realip_from, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("real_ip_header"), GN_CONF_MAIN | GN_CONF_SRV
      | GN_CONF_TAKE1, gn_realip_header, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("real_ip_recursive"), GN_CONF_MAIN | GN_CONF_SRV
      | GN_CONF_FLAG, gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_realip_offset(recursive), NULL, "off" },

    gn_conf_null_cmd
};


/* ---- picking the address ------------------------------------------------ */

/* A port after an address: 1 to 5 digits. */
static gn_int_t
gn_realip_port(const u_char *p, const u_char *end)
{
    if (end - p < 1 || end - p > 5) {
        return GN_ERROR;
    }
    for ( /* void */ ; p < end; p++) {
        if (*p < '0' || *p > '9') {
            return GN_ERROR;
        }
    }
    return GN_OK;
}


/* One address of a header, [p, p + len): IPv4 or IPv6, "[IPv6]", either
 * with ":port". */
static gn_int_t
gn_realip_parse(const u_char *p, size_t len, struct sockaddr_storage *ss)
{
    struct sockaddr_in   *sin = (struct sockaddr_in *) ss;
    struct sockaddr_in6  *sin6 = (struct sockaddr_in6 *) ss;
    char                  text[INET6_ADDRSTRLEN];
    const u_char         *q, *end = p + len;
    size_t                colons = 0, i;

    memset(ss, 0, sizeof(*ss));

    if (len > 0 && p[0] == '[') {
        q = memchr(p, ']', len);
        if (q == NULL || (q + 1 != end && q[1] != ':')
            || (q + 1 != end && gn_realip_port(q + 2, end) != GN_OK))
        {
            return GN_ERROR;
        }
        p++;
        len = (size_t) (q - p);

    } else {
        for (i = 0; i < len; i++) {
            colons += p[i] == ':';
        }
        if (colons == 1) {                /* IPv4:port */
            q = memchr(p, ':', len);
            if (gn_realip_port(q + 1, end) != GN_OK) {
                return GN_ERROR;
            }
            len = (size_t) (q - p);
        }
    }

    if (len == 0 || len >= sizeof(text)) {
        return GN_ERROR;
    }
    memcpy(text, p, len);
    text[len] = '\0';

    if (inet_pton(AF_INET, text, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        return GN_OK;
    }
    if (inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        return GN_OK;
    }
    return GN_ERROR;
}


/* The element of the comma-separated list v that ends at *end (exclusive),
 * OWS trimmed: its start; *end moves to before the comma before it.
 * NULL when the list is used up. */
static const u_char *
gn_realip_prev(const u_char *start, const u_char **end, size_t *len)
{
    const u_char  *e = *end, *b;

    if (e == NULL) {
        return NULL;
    }

    b = e;
    while (b > start && b[-1] != ',') {
        b--;
    }
    *end = b > start ? b - 1 : NULL;         /* before the comma, or done */

    while (b < e && (*b == ' ' || *b == '\t')) {
        b++;
    }
    while (e > b && (e[-1] == ' ' || e[-1] == '\t')) {
        e--;
    }
    *len = (size_t) (e - b);
    return b;
}


gn_int_t
gn_realip_pick(const gn_str_t *vals, gn_uint_t n, gn_uint_t list,
    const gn_access_rule_t *from, gn_uint_t nfrom, gn_uint_t recursive,
    struct sockaddr_storage *out)
{
    struct sockaddr_storage  ss;
    const u_char  *end, *p;
    size_t         len;
    gn_uint_t      i, any = 0;

    if (n == 0) {
        return GN_DECLINED;
    }

    if (!list) {
        /* one address; of several fields, the last (the nearest proxy's) */
        return gn_realip_parse(vals[n - 1].data, vals[n - 1].len, out)
               == GN_OK ? GN_OK : GN_DECLINED;
    }

    /* from the right: the last field's last element first */
    for (i = n; i-- > 0; ) {
        end = vals[i].len > 0 ? vals[i].data + vals[i].len : NULL;

        while ((p = gn_realip_prev(vals[i].data, &end, &len)) != NULL) {
            if (len == 0) {
                continue;                 /* "a, , b": an empty element */
            }
            if (gn_realip_parse(p, len, &ss) != GN_OK) {
                /* not an address: what is left of it cannot be trusted;
                 * the last valid one to its right, if any, stands */
                return any ? GN_OK : GN_DECLINED;
            }
            memcpy(out, &ss, sizeof(ss));
            any = 1;
            if (!recursive
                || gn_access_match(from, nfrom, (struct sockaddr *) out)
                   != GN_ACCESS_ALLOW)
            {
                return GN_OK;
            }
        }
    }

    /* every address trusted: the leftmost, which *out holds */
    return any ? GN_OK : GN_DECLINED;
}


/* ---- in a request ------------------------------------------------------- */

/* r's server trusts its connection's peer. */
static gn_uint_t
gn_realip_trusted(gn_http_request_t *r, gn_realip_conf_t *rc)
{
    return rc->from != NULL
           && gn_access_match(rc->from->elts, rc->from->nelts,
                              (struct sockaddr *) &r->c->peer)
              == GN_ACCESS_ALLOW;
}


void
gn_realip_apply_proxy(gn_http_request_t *r)
{
    gn_realip_conf_t  *rc = gn_realip_conf(r->srv->loc);
    gn_conn_t         *c = r->c;

    r->peer = NULL;
    if (rc->proxy_protocol && c->proxy != NULL && gn_realip_trusted(r, rc)) {
        r->peer = (struct sockaddr *) &c->proxy->src;
        r->peer_text.data = (u_char *) c->proxy->src_text;
        r->peer_text.len = c->proxy->src_len;
        c->log_client = c->proxy->src_text;     /* the connection's */
    }
}


gn_int_t
gn_realip_apply(gn_http_request_t *r)
{
    gn_realip_conf_t  *rc = gn_realip_conf(r->srv->loc);
    gn_http_head_t    *h = &r->head;
    struct sockaddr_storage  *ss, addr;
    gn_str_t           vals[16];
    gn_uint_t          i, n;
    char              *text;

    /* HTTP/1: one request at a time, the error log's client is its
     * (HTTP/2's streams share the connection: only a PROXY protocol
     * address, the connection's own, goes there) */
    if (r->stream_id == 0) {
        r->c->log_client = NULL;
    }

    if (rc->proxy_protocol) {
        gn_realip_apply_proxy(r);
        return GN_OK;
    }

    r->peer = NULL;
    if (!gn_realip_trusted(r, rc)) {
        return GN_OK;
    }

    /* the fields of that name, in order; a list past 16 fields keeps its
     * last 16 (the nearest proxies') */
    n = 0;
    for (i = 0; i < h->nheaders; i++) {
        if (h->headers[i].name.len == rc->header.len
            && gn_strncasecmp(h->headers[i].name.data, rc->header.data,
                              rc->header.len) == 0)
        {
            if (n == sizeof(vals) / sizeof(vals[0])) {
                memmove(vals, vals + 1, sizeof(vals) - sizeof(vals[0]));
                n--;
            }
            vals[n++] = h->headers[i].value;
        }
    }

    if (gn_realip_pick(vals, n, rc->list, rc->from->elts, rc->from->nelts,
                       (gn_uint_t) rc->recursive, &addr) != GN_OK)
    {
        return GN_OK;
    }

    ss = gn_palloc(r->pool, sizeof(*ss));
    text = gn_pnalloc(r->pool, INET6_ADDRSTRLEN);
    if (ss == NULL || text == NULL) {
        return GN_ERROR;
    }
    memcpy(ss, &addr, sizeof(addr));

    r->peer = (struct sockaddr *) ss;
    r->peer_text.data = (u_char *) text;
    r->peer_text.len = gn_sockaddr_text(r->peer, text, INET6_ADDRSTRLEN);
    if (r->stream_id == 0) {
        r->c->log_client = text;          /* in c->pool, as r */
    }
    return GN_OK;
}


/* ---- configuration ------------------------------------------------------ */

static char *
gn_realip_from(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_realip_conf_t  *rc = conf;

    return gn_access_conf_rule(cf, cmd, &rc->from, 0);
}


/* A field name (RFC 9110 token characters), or "proxy_protocol". */
static char *
gn_realip_header(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_realip_conf_t  *rc = conf;
    gn_str_t          *value = cf->args->elts;

    if (rc->header.data != NULL) {
        return "is duplicate";
    }

    if (!gn_http_token(value[1].data, value[1].len)) {
        gn_conf_error(cf, "invalid value \"%.*s\" in \"%.*s\" directive, "
                      "expected a header field name or \"proxy_protocol\"",
                      GN_STR_ARG(&value[1]), GN_STR_ARG(&cmd->name));
        return GN_CONF_ERROR;
    }

    rc->header = value[1];
    return GN_CONF_OK;
}


static gn_int_t
gn_realip_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_realip_conf_t  *rc = gn_realip_conf(lc);

    (void) cf;

    if (prev != NULL) {
        if (rc->from == NULL) {
            rc->from = gn_realip_conf(prev)->from;
        }
        if (rc->header.data == NULL) {
            rc->header = gn_realip_conf(prev)->header;
        }
    }
    if (rc->header.data == NULL) {
        gn_str_set(&rc->header, "X-Real-IP");
    }
    rc->proxy_protocol = gn_str_eq(&rc->header, "proxy_protocol");
    rc->list = !gn_str_caseeq(&rc->header, "X-Real-IP");

    return GN_OK;
}


const gn_feature_t  gn_realip_feature = {
    .name = "realip", .commands = gn_realip_commands,
    .conf_size = sizeof(gn_realip_conf_t),
    .merge_conf = gn_realip_merge
};
