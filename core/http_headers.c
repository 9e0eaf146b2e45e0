/*
 * add_header, expires, tls_hsts (http_headers.h).
 */

#include "gn_config.h"

#include "http_headers.h"
#include "http_request.h"
#include "http_parse.h"
#include "timer.h"
#include "str.h"


static char *gn_headers_add(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_headers_expires(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_headers_hsts(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

static const gn_conf_cmd_t  gn_headers_commands[] = {

    { gn_string("add_header"), GN_CONF_ANY | GN_CONF_TAKE23,
      gn_headers_add, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("expires"), GN_CONF_ANY | GN_CONF_TAKE12,
      gn_headers_expires, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("tls_hsts"), GN_CONF_ANY | GN_CONF_TAKE123,
      gn_headers_hsts, GN_CONF_LOC_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


/* "Thu, 31 Dec 2037 23:55:55 GMT" and ten years, as nginx's `max` */
#define GN_EXPIRES_MAX_TIME    2145916555
#define GN_EXPIRES_MAX_AGE     315360000


/* ---- per response --------------------------------------------------- */

/* The statuses nginx adds fields to without `always`. */
static gn_uint_t
gn_headers_status_ok(gn_uint_t status)
{
    switch (status) {
    case 200: case 201: case 204: case 206:
    case 301: case 302: case 303: case 304: case 307: case 308:
        return 1;
    default:
        return 0;
    }
}


void
gn_http_headers_drop(gn_http_request_t *r, const char *name, size_t len)
{
    gn_http_header_t  *h;
    gn_uint_t          i, n;

    if (r->resp_headers == NULL) {
        return;
    }

    h = r->resp_headers->elts;
    for (i = 0, n = 0; i < r->resp_headers->nelts; i++) {
        if (h[i].name.len == len
            && gn_strncasecmp(h[i].name.data, (u_char *) name, len) == 0)
        {
            continue;
        }
        h[n++] = h[i];
    }
    r->resp_headers->nelts = n;
}


/* Expires and Cache-Control for `expires`, at p (room for
 * GN_HEADERS_EXPIRES_LEN bytes); the new end. */
#define GN_HEADERS_EXPIRES_LEN                                                \
    (sizeof("Expires: \r\nCache-Control: max-age=\r\n") + GN_HTTP_TIME_LEN    \
     + GN_INT_T_LEN)

static u_char *
gn_headers_expires_write(gn_http_request_t *r, gn_headers_conf_t *hc,
    u_char *p)
{
    time_t     when, age;

    switch (hc->expires) {
    case GN_EXPIRES_EPOCH:
        when = 1;
        age = -1;
        break;
    case GN_EXPIRES_MAX:
        when = GN_EXPIRES_MAX_TIME;
        age = GN_EXPIRES_MAX_AGE;
        break;
    case GN_EXPIRES_MODIFIED:
        if (r->last_modified == -1) {
            return p;                  /* nothing to count from */
        }
        when = r->last_modified + hc->expires_time;
        age = when - gn_current_sec;
        break;
    default:                           /* GN_EXPIRES_ACCESS */
        when = gn_current_sec + hc->expires_time;
        age = hc->expires_time;
    }

    gn_http_headers_drop(r, "Expires", 7);
    gn_http_headers_drop(r, "Cache-Control", 13);

    p = gn_cpymem(p, "Expires: ", 9);
    p += gn_time_http(p, when);
    if (age < 0) {
        return gn_cpymem(p, "\r\nCache-Control: no-cache\r\n", 27);
    }
    p += snprintf((char *) p, GN_INT_T_LEN + 32,
                  "\r\nCache-Control: max-age=%lld\r\n", (long long) age);
    return p;
}


gn_int_t
gn_http_headers_build(gn_http_request_t *r, gn_str_t *out)
{
    gn_headers_conf_t     *hc = gn_headers_conf(r->loc);
    gn_http_add_header_t  *ah;
    gn_uint_t              i, ok;
    size_t                 len, n;
    u_char                *p;

    out->len = 0;
    if (!hc->any) {
        return GN_OK;
    }

    ok = gn_headers_status_ok(r->status);
    len = GN_HEADERS_EXPIRES_LEN
          + sizeof("Strict-Transport-Security: \r\n") + hc->hsts.len;

    ah = hc->add != NULL ? hc->add->elts : NULL;
    for (i = 0; ah != NULL && i < hc->add->nelts; i++) {
        if (ok || ah[i].always) {
            len += ah[i].name.len + 4
                   + gn_access_log_render(r, &ah[i].value, NULL);
        }
    }

    out->data = gn_pnalloc(r->pool, len);
    if (out->data == NULL) {
        return GN_ERROR;
    }
    p = out->data;

    if (ok && hc->expires != GN_EXPIRES_OFF) {
        p = gn_headers_expires_write(r, hc, p);
    }

    for (i = 0; ah != NULL && i < hc->add->nelts; i++) {
        if (!ok && !ah[i].always) {
            continue;
        }
        n = gn_access_log_render(r, &ah[i].value, p + ah[i].name.len + 2);
        if (n == 0) {
            continue;                  /* an empty value adds nothing */
        }
        p = gn_cpymem(p, ah[i].name.data, ah[i].name.len);
        *p++ = ':';
        *p++ = ' ';
        p += n;
        *p++ = '\r';
        *p++ = '\n';
    }

    if (hc->hsts.len > 0 && r->c->tls != NULL) {
        p = gn_cpymem(p, "Strict-Transport-Security: ", 27);
        p = gn_cpymem(p, hc->hsts.data, hc->hsts.len);
        *p++ = '\r';
        *p++ = '\n';
    }

    out->len = (size_t) (p - out->data);
    return GN_OK;
}


/* ---- configuration -------------------------------------------------- */

static char *
gn_headers_add(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_headers_conf_t     *hc = conf;
    gn_http_add_header_t  *ah;
    gn_str_t              *value = cf->args->elts;
    char                   err[256];

    (void) cmd;

    if (!gn_http_token(value[1].data, value[1].len)) {
        gn_conf_error(cf, "invalid header name \"%.*s\" in \"add_header\"",
                      GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }
    if (cf->args->nelts == 4 && !gn_str_eq(&value[3], "always")) {
        gn_conf_error(cf, "invalid parameter \"%.*s\" in \"add_header\", "
                      "expected \"always\"", GN_STR_ARG(&value[3]));
        return GN_CONF_ERROR;
    }
    if (memchr(value[2].data, '\r', value[2].len) != NULL
        || memchr(value[2].data, '\n', value[2].len) != NULL)
    {
        gn_conf_error(cf, "invalid value in \"add_header\": it holds a "
                      "line break");
        return GN_CONF_ERROR;
    }

    if (hc->add == NULL) {
        hc->add = gn_array_create(cf->pool, 4, sizeof(gn_http_add_header_t));
        if (hc->add == NULL) {
            return "failed (out of memory)";
        }
    }

    ah = gn_array_push(hc->add);
    if (ah == NULL) {
        return "failed (out of memory)";
    }
    ah->name = value[1];
    ah->always = cf->args->nelts == 4;

    if (gn_access_log_template(cf->pool, &ah->value, &value[2], err,
                               sizeof(err)) != GN_OK)
    {
        gn_conf_error(cf, "%s in \"add_header\"", err);
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


/* A duration in seconds, with an optional '-' (expires -1h). */
static gn_int_t
gn_headers_seconds(const gn_str_t *v, time_t *out)
{
    gn_str_t   s = *v;
    gn_msec_t  ms;
    gn_uint_t  neg;

    neg = s.len > 1 && s.data[0] == '-';
    if (neg) {
        s.data++;
        s.len--;
    }
    if (gn_parse_msec(&s, &ms) != GN_OK || ms / 1000 > 0x7fffffff) {
        return GN_ERROR;
    }

    *out = neg ? -(time_t) (ms / 1000) : (time_t) (ms / 1000);
    return GN_OK;
}


static char *
gn_headers_expires(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_headers_conf_t  *hc = conf;
    gn_str_t           *value = cf->args->elts, *v;

    (void) cmd;

    if (hc->expires != GN_CONF_UNSET) {
        return "is duplicate";
    }

    v = &value[1];
    hc->expires = GN_EXPIRES_ACCESS;

    if (cf->args->nelts == 3) {
        if (!gn_str_eq(&value[1], "modified")) {
            goto invalid;
        }
        hc->expires = GN_EXPIRES_MODIFIED;
        v = &value[2];

    } else if (gn_str_eq(v, "off")) {
        hc->expires = GN_EXPIRES_OFF;
        return GN_CONF_OK;

    } else if (gn_str_eq(v, "epoch")) {
        hc->expires = GN_EXPIRES_EPOCH;
        return GN_CONF_OK;

    } else if (gn_str_eq(v, "max")) {
        hc->expires = GN_EXPIRES_MAX;
        return GN_CONF_OK;
    }

    if (gn_headers_seconds(v, &hc->expires_time) == GN_OK) {
        return GN_CONF_OK;
    }

invalid:
    gn_conf_error(cf, "invalid value \"%.*s\" in \"expires\", expected "
                  "[modified] TIME, \"epoch\", \"max\" or \"off\" (a time "
                  "of day, \"@...\", is not supported)", GN_STR_ARG(v));
    return GN_CONF_ERROR;
}


static char *
gn_headers_hsts(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_headers_conf_t  *hc = conf;
    gn_str_t           *value = cf->args->elts;
    gn_uint_t           i, sub = 0, preload = 0;
    time_t              age;
    size_t              len;

    (void) cmd;

    if (hc->hsts.data != NULL) {
        return "is duplicate";
    }

    if (gn_str_eq(&value[1], "off") && cf->args->nelts == 2) {
        gn_str_set(&hc->hsts, "");
        return GN_CONF_OK;
    }

    if (gn_headers_seconds(&value[1], &age) != GN_OK || age < 0) {
        gn_conf_error(cf, "invalid value \"%.*s\" in \"tls_hsts\", expected "
                      "\"off\" or a max-age (\"1y\", \"31536000\")",
                      GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }

    for (i = 2; i < cf->args->nelts; i++) {
        if (gn_str_caseeq(&value[i], "includeSubDomains")) {
            sub = 1;
        } else if (gn_str_eq(&value[i], "preload")) {
            preload = 1;
        } else {
            gn_conf_error(cf, "invalid parameter \"%.*s\" in \"tls_hsts\", "
                          "expected \"includeSubDomains\" or \"preload\"",
                          GN_STR_ARG(&value[i]));
            return GN_CONF_ERROR;
        }
    }

    len = sizeof("max-age=; includeSubDomains; preload") + GN_INT_T_LEN;
    hc->hsts.data = gn_pnalloc(cf->pool, len);
    if (hc->hsts.data == NULL) {
        return "failed (out of memory)";
    }
    hc->hsts.len = (size_t) snprintf((char *) hc->hsts.data, len,
                                     "max-age=%lld%s%s", (long long) age,
                                     sub ? "; includeSubDomains" : "",
                                     preload ? "; preload" : "");
    return GN_CONF_OK;
}


static gn_int_t
gn_headers_create(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    gn_headers_conf_t  *hc = gn_headers_conf(lc);

    (void) cf;

    hc->expires = GN_CONF_UNSET;
    return GN_OK;
}


static gn_int_t
gn_headers_merge(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_headers_conf_t  *hc = gn_headers_conf(lc), *up;

    (void) cf;

    if (prev != NULL) {
        up = gn_headers_conf(prev);
        if (hc->add == NULL) {
            hc->add = up->add;
        }
        if (hc->expires == GN_CONF_UNSET) {
            hc->expires = up->expires;
            hc->expires_time = up->expires_time;
        }
        if (hc->hsts.data == NULL) {
            hc->hsts = up->hsts;
        }
    }

    if (hc->expires == GN_CONF_UNSET) {
        hc->expires = GN_EXPIRES_OFF;
    }
    if (hc->hsts.data == NULL) {
        gn_str_set(&hc->hsts, "");
    }

    hc->any = hc->add != NULL || hc->expires != GN_EXPIRES_OFF
              || hc->hsts.len > 0;
    return GN_OK;
}


const gn_feature_t  gn_headers_feature = {
    .name = "headers", .commands = gn_headers_commands,
    .conf_size = sizeof(gn_headers_conf_t),
    .create_conf = gn_headers_create,
    .merge_conf = gn_headers_merge
};
