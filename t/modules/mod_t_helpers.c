/*
 * mod_t_helpers: test module for the ABI 1.8 helpers
 * (t/integ/107-module-helpers.t).
 *
 * `handler t_helpers;` in `location /h/` answers by the rest of the URI:
 *
 *   /h/arg/NAME      {"found":1,"raw":"..","form":"..","form_hex":".."}
 *                    query argument NAME: its raw value, and its value
 *                    decoded as a form field (unescape with
 *                    GN_UNESCAPE_PLUS) as JSON text and as hex bytes;
 *                    {"found":0} when it is absent
 *   /h/cookie/NAME   {"found":1,"value":".."} or {"found":0}
 *   /h/unescape      {"len":N,"hex":"..","plus_hex":".."}: the whole
 *                    query decoded without and with GN_UNESCAPE_PLUS
 *   /h/json          {"s":".."}: the query decoded, then escape_json
 *   /h/html          text/html: the query decoded, then escape_html
 *   /h/absent        {"unescape":1,"html":1,"json":1}: 1 for each helper
 *                    that gives {0, NULL} for an absent argument
 *
 * NAME is the decoded URI's, so "/h/arg/a%20b" looks up "a b". Every
 * JSON string the module writes goes through escape_json, so the tests
 * parsing the answers check it as well.
 */

#include <stdio.h>
#include <string.h>

#include <gannet/module.h>


static int t_helpers_handler(const gn_api_t *api, gn_request_t *r);


static const gn_module_t  t_helpers_module = {
    GN_MODULE_V1, "t_helpers", "1.0", NULL, 0,
    NULL, NULL, t_helpers_handler, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_helpers_module)


static int
t_helpers_puts(const gn_api_t *api, gn_request_t *r, const char *s)
{
    return api->write(r, s, strlen(s));
}


/* "key":"<v escaped>" */
static int
t_helpers_json(const gn_api_t *api, gn_request_t *r, const char *key,
    gn_str_t v)
{
    gn_str_t  e;

    e = api->escape_json(r, v);
    if (e.data == NULL) {
        return GN_ERROR;
    }

    if (t_helpers_puts(api, r, "\"") != GN_OK
        || t_helpers_puts(api, r, key) != GN_OK
        || t_helpers_puts(api, r, "\":\"") != GN_OK
        || api->write(r, e.data, e.len) != GN_OK
        || t_helpers_puts(api, r, "\"") != GN_OK)
    {
        return GN_ERROR;
    }

    return GN_OK;
}


/* "key":"<v in hex>": the decoded bytes exactly, NULs included */
static int
t_helpers_hex(const gn_api_t *api, gn_request_t *r, const char *key,
    gn_str_t v)
{
    static const char  hex[] = "0123456789abcdef";
    gn_str_t           h;
    size_t             i;

    h.len = 2 * v.len;
    h.data = api->request_alloc(r, h.len + 1);
    if (h.data == NULL) {
        return GN_ERROR;
    }

    for (i = 0; i < v.len; i++) {
        h.data[2 * i] = (unsigned char) hex[v.data[i] >> 4];
        h.data[2 * i + 1] = (unsigned char) hex[v.data[i] & 0xf];
    }

    return t_helpers_json(api, r, key, h);
}


/* A NUL-terminated copy of what follows `prefix` in the decoded URI. */
static const char *
t_helpers_name(const gn_api_t *api, gn_request_t *r, gn_str_t uri,
    const char *prefix)
{
    size_t   n = strlen(prefix);
    char    *name;

    if (uri.len < n || memcmp(uri.data, prefix, n) != 0) {
        return NULL;
    }

    name = api->request_alloc(r, uri.len - n + 1);
    if (name == NULL) {
        return NULL;
    }

    memcpy(name, uri.data + n, uri.len - n);
    name[uri.len - n] = '\0';

    return name;
}


static int
t_helpers_arg(const gn_api_t *api, gn_request_t *r, const char *name)
{
    gn_str_t  raw, form;

    raw = api->arg(r, name);
    if (raw.data == NULL) {
        return t_helpers_puts(api, r, "{\"found\":0}\n");
    }

    form = api->unescape(r, raw, GN_UNESCAPE_PLUS);
    if (form.data == NULL) {
        return GN_ERROR;
    }

    if (t_helpers_puts(api, r, "{\"found\":1,") != GN_OK
        || t_helpers_json(api, r, "raw", raw) != GN_OK
        || t_helpers_puts(api, r, ",") != GN_OK
        || t_helpers_json(api, r, "form", form) != GN_OK
        || t_helpers_puts(api, r, ",") != GN_OK
        || t_helpers_hex(api, r, "form_hex", form) != GN_OK)
    {
        return GN_ERROR;
    }

    return t_helpers_puts(api, r, "}\n");
}


static int
t_helpers_cookie(const gn_api_t *api, gn_request_t *r, const char *name)
{
    gn_str_t  v;

    v = api->cookie(r, name);
    if (v.data == NULL) {
        return t_helpers_puts(api, r, "{\"found\":0}\n");
    }

    if (t_helpers_puts(api, r, "{\"found\":1,") != GN_OK
        || t_helpers_json(api, r, "value", v) != GN_OK)
    {
        return GN_ERROR;
    }

    return t_helpers_puts(api, r, "}\n");
}


static int
t_helpers_unescape(const gn_api_t *api, gn_request_t *r)
{
    gn_str_t  q, d, p;
    char      num[32];
    int       n;

    q = api->query(r);
    d = api->unescape(r, q, 0);
    p = api->unescape(r, q, GN_UNESCAPE_PLUS);
    if (d.data == NULL || p.data == NULL) {
        return GN_ERROR;
    }

    n = snprintf(num, sizeof(num), "{\"len\":%zu,", d.len);
    if (api->write(r, num, (size_t) n) != GN_OK
        || t_helpers_hex(api, r, "hex", d) != GN_OK
        || t_helpers_puts(api, r, ",") != GN_OK
        || t_helpers_hex(api, r, "plus_hex", p) != GN_OK)
    {
        return GN_ERROR;
    }

    return t_helpers_puts(api, r, "}\n");
}


static int
t_helpers_escape(const gn_api_t *api, gn_request_t *r, int html)
{
    gn_str_t  d, e;

    d = api->unescape(r, api->query(r), 0);
    if (d.data == NULL) {
        return GN_ERROR;
    }

    if (!html) {
        if (t_helpers_puts(api, r, "{") != GN_OK
            || t_helpers_json(api, r, "s", d) != GN_OK)
        {
            return GN_ERROR;
        }
        return t_helpers_puts(api, r, "}\n");
    }

    api->set_header(r, "Content-Type", "text/html; charset=utf-8");
    e = api->escape_html(r, d);
    if (e.data == NULL) {
        return GN_ERROR;
    }

    return api->write(r, e.data, e.len);
}


static int
t_helpers_absent(const gn_api_t *api, gn_request_t *r)
{
    gn_str_t  none;
    char      buf[64];
    int       n;

    none = api->arg(r, "t_helpers_no_such_argument");

    n = snprintf(buf, sizeof(buf),
                 "{\"unescape\":%d,\"html\":%d,\"json\":%d}\n",
                 api->unescape(r, none, 0).data == NULL,
                 api->escape_html(r, none).data == NULL,
                 api->escape_json(r, none).data == NULL);

    return api->write(r, buf, (size_t) n);
}


static int
t_helpers_handler(const gn_api_t *api, gn_request_t *r)
{
    gn_str_t     uri;
    const char  *name;

    if (!GN_API_HAS(api, escape_json)) {
        return GN_DECLINED;
    }

    uri = api->uri(r);

    if (api->set_header(r, "Content-Type", "application/json") != GN_OK) {
        return GN_ERROR;
    }

    if ((name = t_helpers_name(api, r, uri, "/h/arg/")) != NULL) {
        return t_helpers_arg(api, r, name);
    }
    if ((name = t_helpers_name(api, r, uri, "/h/cookie/")) != NULL) {
        return t_helpers_cookie(api, r, name);
    }

    if (uri.len == 11 && memcmp(uri.data, "/h/unescape", 11) == 0) {
        return t_helpers_unescape(api, r);
    }
    if (uri.len == 7 && memcmp(uri.data, "/h/json", 7) == 0) {
        return t_helpers_escape(api, r, 0);
    }
    if (uri.len == 7 && memcmp(uri.data, "/h/html", 7) == 0) {
        return t_helpers_escape(api, r, 1);
    }
    if (uri.len == 9 && memcmp(uri.data, "/h/absent", 9) == 0) {
        return t_helpers_absent(api, r);
    }

    return 404;
}
