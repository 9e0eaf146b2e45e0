/*
 * rewrite, return and regex locations.
 */

#include "gn_config.h"

#include "rewrite.h"
#include "regex.h"
#include "lookup.h"
#include "http_response.h"
#include "log.h"
#include "str.h"


#define GN_RW_MAX_CYCLES   10

enum {
    GN_RW_LIT = 0, GN_RW_CAP, GN_RW_ARGS, GN_RW_URI, GN_RW_HOST,
    GN_RW_SCHEME, GN_RW_REQUEST_URI
};

enum {
    GN_RW_OP_REWRITE = 0, GN_RW_OP_RETURN
};

enum {
    GN_RW_FLAG_NONE = 0, GN_RW_FLAG_LAST, GN_RW_FLAG_BREAK,
    GN_RW_FLAG_REDIRECT, GN_RW_FLAG_PERMANENT
};

/* what running one level's rules ended in */
enum {
    GN_RW_NEXT = 0,          /* nothing (more) to do at this level */
    GN_RW_RESTART,           /* `last`, or the URI changed: search again */
    GN_RW_STOP               /* `break` */
};

typedef struct {
    gn_uint_t      type;
    gn_str_t       text;
    gn_uint_t      n;
} gn_rw_part_t;

typedef struct {
    gn_array_t     parts;
} gn_rw_tpl_t;

typedef struct {
    gn_uint_t      op;
    gn_regex_t     regex;
    gn_rw_tpl_t    tpl;
    gn_uint_t      flag;
    gn_uint_t      code;
    gn_uint_t      has_tpl;
} gn_rw_op_t;


static char *gn_rewrite_rewrite(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_rewrite_return(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

static const gn_conf_cmd_t  gn_rewrite_commands[] = {

    { gn_string("rewrite"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_TAKE23,
      gn_rewrite_rewrite, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("return"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_TAKE12,
      gn_rewrite_return, GN_CONF_LOC_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


/* ---- configuration ------------------------------------------------------ */

static gn_int_t
gn_rw_part(gn_rw_tpl_t *tpl, gn_uint_t type, u_char *p, size_t len,
    gn_uint_t n)
{
    gn_rw_part_t  *part;

    part = gn_array_push(&tpl->parts);
    if (part == NULL) {
        return GN_ERROR;
    }

    part->type = type;
    part->text.data = p;
    part->text.len = len;
    part->n = n;

    return GN_OK;
}


/*
 * Compiles a replacement, return text or URL: literal text, $1..$9,
 * ${N}, ${name} (a named group of `re`), $args, $uri, $host, $scheme,
 * $request_uri, and $$ for a dollar sign. Captures need `re`.
 */
static gn_int_t
gn_rw_compile_tpl(gn_conf_t *cf, gn_rw_tpl_t *tpl, gn_str_t *src,
    gn_regex_t *re)
{
    static const struct { const char *name; gn_uint_t type; } vars[] = {
        { "args", GN_RW_ARGS }, { "uri", GN_RW_URI }, { "host", GN_RW_HOST },
        { "scheme", GN_RW_SCHEME }, { "request_uri", GN_RW_REQUEST_URI },
        { NULL, 0 }
    };
    u_char    *p, *last, *start, *name;
    size_t     n;
    gn_int_t   num;
    gn_uint_t  i, braces;

    if (gn_array_init(&tpl->parts, cf->pool, 4, sizeof(gn_rw_part_t))
        != GN_OK)
    {
        return GN_ERROR;
    }

    p = src->data;
    last = p + src->len;

    while (p < last) {
        start = p;
        while (p < last && *p != '$') {
            p++;
        }
        if (p > start && gn_rw_part(tpl, GN_RW_LIT, start, p - start, 0)
                         != GN_OK)
        {
            return GN_ERROR;
        }
        if (p == last) {
            break;
        }

        p++;                                            /* '$' */
        if (p < last && *p == '$') {
            if (gn_rw_part(tpl, GN_RW_LIT, p, 1, 0) != GN_OK) {
                return GN_ERROR;
            }
            p++;
            continue;
        }

        braces = (p < last && *p == '{');
        p += braces;
        name = p;
        while (p < last && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
                            || (*p >= '0' && *p <= '9') || *p == '_'))
        {
            if (!braces && name[0] >= '0' && name[0] <= '9' && p > name) {
                break;                     /* $12 is $1 then "2" */
            }
            p++;
        }
        n = p - name;
        if (braces) {
            if (p == last || *p != '}' || n == 0) {
                gn_conf_error(cf, "unterminated \"${\" in \"%.*s\"",
                              GN_STR_ARG(src));
                return GN_ERROR;
            }
            p++;
        }
        if (n == 0) {
            gn_conf_error(cf, "a lone \"$\" in \"%.*s\" (write \"$$\" for a "
                          "dollar sign)", GN_STR_ARG(src));
            return GN_ERROR;
        }

        if (name[0] >= '0' && name[0] <= '9') {
            num = gn_atoi(name, n);
            if (re == NULL || num == GN_ERROR
                || (gn_uint_t) num > re->captures)
            {
                gn_conf_error(cf, "\"$%.*s\" refers to a capture the pattern "
                              "does not have, in \"%.*s\"", (int) n, name,
                              GN_STR_ARG(src));
                return GN_ERROR;
            }
            if (gn_rw_part(tpl, GN_RW_CAP, NULL, 0, (gn_uint_t) num)
                != GN_OK)
            {
                return GN_ERROR;
            }
            continue;
        }

        for (i = 0; vars[i].name; i++) {
            if (strlen(vars[i].name) == n && memcmp(vars[i].name, name, n) == 0)
            {
                break;
            }
        }
        if (vars[i].name) {
            if (gn_rw_part(tpl, vars[i].type, NULL, 0, 0) != GN_OK) {
                return GN_ERROR;
            }
            continue;
        }

        num = re ? gn_regex_group(re, name, n) : GN_ERROR;
        if (num == GN_ERROR) {
            gn_conf_error(cf, "unknown variable or group \"$%.*s\" in "
                          "\"%.*s\"", (int) n, name, GN_STR_ARG(src));
            return GN_ERROR;
        }
        if (gn_rw_part(tpl, GN_RW_CAP, NULL, 0, (gn_uint_t) num) != GN_OK) {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


static gn_rw_op_t *
gn_rw_op_add(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    gn_rw_op_t  *op;

    gn_rewrite_conf_t  *rwc = gn_rewrite_conf(lc);

    if (rwc->ops == NULL) {
        rwc->ops = gn_array_create(cf->pool, 2, sizeof(gn_rw_op_t));
        if (rwc->ops == NULL) {
            return NULL;
        }
    }

    op = gn_array_push(rwc->ops);
    if (op != NULL) {
        memset(op, 0, sizeof(gn_rw_op_t));
    }

    return op;
}


static char *
gn_rewrite_rewrite(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    static const gn_conf_enum_t  flags[] = {
        { gn_string("last"), GN_RW_FLAG_LAST },
        { gn_string("break"), GN_RW_FLAG_BREAK },
        { gn_string("redirect"), GN_RW_FLAG_REDIRECT },
        { gn_string("permanent"), GN_RW_FLAG_PERMANENT },
        { gn_null_string, 0 }
    };
    gn_loc_conf_t  *lc = cf->conf[GN_CONF_LOC_CONF];   /* the level */
    gn_str_t       *value = cf->args->elts;
    gn_rw_op_t     *op;
    gn_uint_t       i;
    char            err[512];

    op = gn_rw_op_add(cf, lc);
    if (op == NULL) {
        return "failed (out of memory)";
    }
    op->op = GN_RW_OP_REWRITE;

    if (gn_regex_compile(&op->regex, cf->pool, &value[1], 0, err,
                         sizeof(err)) != GN_OK)
    {
        gn_conf_error(cf, "%s", err);
        return GN_CONF_ERROR;
    }

    if (gn_rw_compile_tpl(cf, &op->tpl, &value[2], &op->regex) != GN_OK) {
        return GN_CONF_ERROR;
    }
    op->has_tpl = 1;

    if (cf->args->nelts == 4) {
        for (i = 0; flags[i].name.len; i++) {
            if (gn_str_cmp(&flags[i].name, &value[3]) == 0) {
                op->flag = flags[i].value;
                break;
            }
        }
        if (flags[i].name.len == 0) {
            gn_conf_error(cf, "invalid flag \"%.*s\" in \"rewrite\" "
                          "directive, it must be last, break, redirect or "
                          "permanent", GN_STR_ARG(&value[3]));
            return GN_CONF_ERROR;
        }
    }

    return GN_CONF_OK;
}


static gn_uint_t
gn_rw_is_url(const gn_str_t *s)
{
    return (s->len > 7 && gn_strncasecmp(s->data, (u_char *) "http://", 7)
                          == 0)
           || (s->len > 8 && gn_strncasecmp(s->data, (u_char *) "https://", 8)
                             == 0)
           || (s->len >= 7 && memcmp(s->data, "$scheme", 7) == 0);
}


static char *
gn_rewrite_return(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_loc_conf_t  *lc = cf->conf[GN_CONF_LOC_CONF];   /* the level */
    gn_str_t       *value = cf->args->elts, *arg;
    gn_rw_op_t     *op;
    gn_int_t        code;

    op = gn_rw_op_add(cf, lc);
    if (op == NULL) {
        return "failed (out of memory)";
    }
    op->op = GN_RW_OP_RETURN;

    arg = NULL;
    code = gn_atoi(value[1].data, value[1].len);

    if (code == GN_ERROR) {
        if (cf->args->nelts != 2 || !gn_rw_is_url(&value[1])) {
            gn_conf_error(cf, "invalid return code \"%.*s\", expected a "
                          "status or a URL (http://, https://)",
                          GN_STR_ARG(&value[1]));
            return GN_CONF_ERROR;
        }
        code = 302;
        arg = &value[1];

    } else if (code < 200 || code > 599) {
        gn_conf_error(cf, "invalid return code \"%.*s\", it must be from 200 "
                      "to 599", GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;

    } else if (cf->args->nelts == 3) {
        arg = &value[2];
    }

    op->code = (gn_uint_t) code;

    if (arg != NULL) {
        if (gn_rw_compile_tpl(cf, &op->tpl, arg, lc->regex) != GN_OK) {
            return GN_CONF_ERROR;
        }
        op->has_tpl = 1;
    }

    return GN_CONF_OK;
}


/* ---- requests ------------------------------------------------------------ */

/* Expands a template; NULL on out of memory. */
static u_char *
gn_rw_expand(gn_http_request_t *r, gn_rw_tpl_t *tpl, gn_regex_caps_t *caps,
    size_t *len)
{
    gn_rw_part_t  *part;
    gn_uint_t      i, pass;
    size_t         n, total;
    u_char        *out, *p;
    const u_char  *s;
    gn_str_t       host;

    out = NULL;
    total = 0;
    part = tpl->parts.elts;

    /* pass 0 measures, pass 1 copies */
    for (pass = 0; pass < 2; pass++) {
        p = out;
        for (i = 0; i < tpl->parts.nelts; i++) {
            s = NULL;
            n = 0;

            switch (part[i].type) {
            case GN_RW_LIT:
                s = part[i].text.data;
                n = part[i].text.len;
                break;
            case GN_RW_CAP:
                if (caps != NULL && (gn_int_t) part[i].n < caps->n
                    && caps->ovec[2 * part[i].n] != (size_t) -1)
                {
                    s = caps->subject + caps->ovec[2 * part[i].n];
                    n = caps->ovec[2 * part[i].n + 1]
                        - caps->ovec[2 * part[i].n];
                }
                break;
            case GN_RW_ARGS:
                s = r->head.query.data;
                n = r->head.query.len;
                break;
            case GN_RW_URI:
                s = r->uri.data;
                n = r->uri.len;
                break;
            case GN_RW_HOST:
                host = gn_http_request_host(r);
                s = host.data;
                n = host.len;
                break;
            case GN_RW_SCHEME:
                s = (u_char *) (r->c->tls ? "https" : "http");
                n = r->c->tls ? 5 : 4;
                break;
            case GN_RW_REQUEST_URI:
                s = r->head.target.data;
                n = r->head.target.len;
                break;
            }

            if (pass == 0) {
                total += n;
            } else if (part[i].type == GN_RW_HOST) {
                p = gn_strlow(p, s, n);
            } else if (n > 0) {
                p = gn_cpymem(p, s, n);
            }
        }

        if (pass == 0) {
            out = gn_pnalloc(r->pool, total + 1);
            if (out == NULL) {
                return NULL;
            }
        }
    }

    *len = total;
    return out;
}


/* nginx's query rules: "new?a=1" sets the query to a=1 followed by the
 * old query; "new?" drops the old query; no '?' keeps it. */
static gn_int_t
gn_rw_apply_query(gn_http_request_t *r, u_char *s, size_t len,
    gn_str_t *path)
{
    u_char   *q, *p;
    gn_str_t  args;

    q = memchr(s, '?', len);
    path->data = s;
    path->len = q ? (size_t) (q - s) : len;

    if (q == NULL) {
        return GN_OK;
    }

    args.data = q + 1;
    args.len = len - (size_t) (q + 1 - s);

    if (args.len == 0) {                            /* "...?": drop */
        r->head.query.len = 0;
        r->head.has_query = 0;
        return GN_OK;
    }

    if (r->head.query.len > 0) {
        p = gn_pnalloc(r->pool, args.len + 1 + r->head.query.len);
        if (p == NULL) {
            return GN_ERROR;
        }
        memcpy(p, args.data, args.len);
        p[args.len] = '&';
        memcpy(p + args.len + 1, r->head.query.data, r->head.query.len);
        args.data = p;
        args.len += 1 + r->head.query.len;
    }

    r->head.query = args;
    r->head.has_query = 1;
    return GN_OK;
}


gn_int_t
gn_rewrite_set_uri(gn_http_request_t *r, u_char *s, size_t len,
    gn_str_t *path)
{
    u_char  *norm;

    if (gn_rw_apply_query(r, s, len, path) != GN_OK) {
        return GN_ERROR;
    }

    norm = gn_pnalloc(r->pool, path->len + 2);
    if (norm == NULL) {
        return GN_ERROR;
    }
    if (path->len == 0 || path->data[0] != '/'
        || gn_http_normalize_path(path->data, path->len, norm, &len)
           != GN_OK)
    {
        return GN_DECLINED;
    }

    r->uri.data = norm;
    r->uri.len = len;
    r->uri_changed = 1;
    return GN_OK;
}


/* A redirect to `url` (absolute, or a path + query). */
static gn_int_t
gn_rw_redirect(gn_http_request_t *r, gn_uint_t code, u_char *url, size_t len)
{
    gn_str_t  path;
    u_char   *p;

    /* the query rules of a rewrite apply to redirects too */
    if (gn_rw_apply_query(r, url, len, &path) != GN_OK) {
        return GN_ERROR;
    }
    len = path.len + (r->head.has_query ? 1 + r->head.query.len : 0);
    p = gn_pnalloc(r->pool, len);
    if (p == NULL) {
        return GN_ERROR;
    }
    url = p;
    p = gn_cpymem(p, path.data, path.len);
    if (r->head.has_query) {
        *p++ = '?';
        p = gn_cpymem(p, r->head.query.data, r->head.query.len);
    }

    r->location.data = url;
    r->location.len = len;

    return gn_http_response_error(r, code) == GN_OK ? GN_DONE : GN_ERROR;
}


static gn_int_t
gn_rw_return(gn_http_request_t *r, gn_rw_op_t *op, gn_regex_caps_t *caps)
{
    u_char  *s;
    size_t   len;

    s = NULL;
    len = 0;
    if (op->has_tpl) {
        s = gn_rw_expand(r, &op->tpl, caps, &len);
        if (s == NULL) {
            return GN_ERROR;
        }
    }

    if (op->code == 301 || op->code == 302 || op->code == 303
        || op->code == 307 || op->code == 308)
    {
        if (s == NULL) {
            return gn_http_response_error(r, op->code) == GN_OK ? GN_DONE
                                                                 : GN_ERROR;
        }
        r->location.data = s;
        r->location.len = len;
        return gn_http_response_error(r, op->code) == GN_OK ? GN_DONE
                                                             : GN_ERROR;
    }

    if (s == NULL) {
        if (op->code >= 400) {
            return gn_http_response_error(r, op->code) == GN_OK ? GN_DONE
                                                                 : GN_ERROR;
        }
        r->status = op->code;
        r->content_length = 0;
        return GN_DONE;
    }

    /* the text is the body */
    r->status = op->code;
    r->segs = NULL;
    r->nsegs = 0;
    gn_str_set(&r->content_type, "text/plain");
    r->content_length = (off_t) len;

    if (gn_http_response_status_known(op->code) != GN_OK) {
        r->status = 500;
    }

    return gn_http_add_mem(r, s, len) == GN_OK ? GN_DONE : GN_ERROR;
}


/* Runs one level's rules. *rc gets GN_OK / GN_DONE / GN_ERROR. */
static gn_uint_t
gn_rw_run_level(gn_http_request_t *r, gn_array_t *ops, gn_regex_caps_t **caps,
    gn_int_t *rc)
{
    gn_rw_op_t       *op;
    gn_regex_caps_t  *m;
    gn_str_t          path;
    gn_uint_t         i, changed;
    gn_int_t          hit;
    const char       *err;
    u_char           *s;
    size_t            len;

    *rc = GN_OK;
    changed = 0;
    if (ops == NULL) {
        return GN_RW_NEXT;
    }

    op = ops->elts;
    for (i = 0; i < ops->nelts; i++) {

        if (op[i].op == GN_RW_OP_RETURN) {
            *rc = gn_rw_return(r, &op[i], *caps);
            return GN_RW_STOP;
        }

        m = gn_palloc(r->pool, sizeof(gn_regex_caps_t));
        if (m == NULL) {
            *rc = GN_ERROR;
            return GN_RW_STOP;
        }

        hit = gn_regex_exec(&op[i].regex, r->uri.data, r->uri.len, m, &err);
        if (hit == GN_ERROR) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "rewrite \"%.*s\": %s "
                         "on \"%.*s\"", GN_STR_ARG(&op[i].regex.pattern), err,
                         GN_STR_ARG(&r->uri));
            *rc = GN_ERROR;
            return GN_RW_STOP;
        }
        if (hit == 0) {
            continue;
        }
        *caps = m;

        s = gn_rw_expand(r, &op[i].tpl, m, &len);
        if (s == NULL) {
            *rc = GN_ERROR;
            return GN_RW_STOP;
        }

        if (op[i].flag == GN_RW_FLAG_REDIRECT
            || op[i].flag == GN_RW_FLAG_PERMANENT
            || (len > 7 && gn_strncasecmp(s, (u_char *) "http://", 7) == 0)
            || (len > 8 && gn_strncasecmp(s, (u_char *) "https://", 8) == 0))
        {
            *rc = gn_rw_redirect(r, op[i].flag == GN_RW_FLAG_PERMANENT ? 301
                                                                       : 302,
                                 s, len);
            return GN_RW_STOP;
        }

        *rc = gn_rewrite_set_uri(r, s, len, &path);
        if (*rc == GN_DECLINED) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "rewrite \"%.*s\" made "
                         "an invalid URI \"%.*s\"",
                         GN_STR_ARG(&op[i].regex.pattern), GN_STR_ARG(&path));
            *rc = GN_ERROR;
        }
        if (*rc != GN_OK) {
            return GN_RW_STOP;
        }
        changed = 1;

        if (op[i].flag == GN_RW_FLAG_LAST) {
            return GN_RW_RESTART;
        }
        if (op[i].flag == GN_RW_FLAG_BREAK) {
            return GN_RW_STOP;
        }
    }

    return changed ? GN_RW_RESTART : GN_RW_NEXT;
}


/* nginx's order: exact; the longest prefix if it is ^~; the regexes in
 * the order written; else the longest prefix. */
static gn_loc_conf_t *
gn_rw_find_location(gn_http_request_t *r, gn_regex_caps_t **caps,
    gn_int_t *rc)
{
    gn_srv_conf_t     *srv = r->srv;
    gn_loc_conf_t     *lc, **plc;
    gn_regex_caps_t   *m;
    gn_uint_t          i;
    gn_int_t           hit;
    const char        *err;

    *rc = GN_OK;
    lc = gn_lookup_location(srv, r->uri.data, r->uri.len);

    if (lc->exact || (lc != srv->loc && lc->noregex)
        || srv->regex_locations.nelts == 0)
    {
        return lc;
    }

    m = gn_palloc(r->pool, sizeof(gn_regex_caps_t));
    if (m == NULL) {
        *rc = GN_ERROR;
        return lc;
    }

    plc = srv->regex_locations.elts;
    for (i = 0; i < srv->regex_locations.nelts; i++) {
        hit = gn_regex_exec(plc[i]->regex, r->uri.data, r->uri.len, m, &err);
        if (hit == GN_ERROR) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "location \"%.*s\": %s "
                         "on \"%.*s\"",
                         GN_STR_ARG(&((gn_regex_t *) plc[i]->regex)->pattern),
                         err, GN_STR_ARG(&r->uri));
            *rc = GN_ERROR;
            return lc;
        }
        if (hit) {
            *caps = m;
            return plc[i];
        }
    }

    return lc;
}


gn_int_t
gn_rewrite_run(gn_http_request_t *r)
{
    gn_regex_caps_t  *caps;
    gn_uint_t         cycles, what;
    gn_int_t          rc;

    caps = NULL;

    /* the server level runs once; there `last` acts as `break`; a named
     * location (try_files' @name) starts at its own rules, as nginx's */
    if (r->named == NULL) {
        what = gn_rw_run_level(r, gn_rewrite_conf(r->srv->loc)->ops, &caps,
                               &rc);
        if (rc != GN_OK) {
            return rc;
        }
    }

    for (cycles = 0; ; cycles++) {
        if (cycles > GN_RW_MAX_CYCLES) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "rewrite or internal "
                         "redirection cycle while processing \"%.*s\"",
                         GN_STR_ARG(&r->uri));
            return GN_ERROR;
        }

        caps = NULL;
        if (r->named != NULL) {
            r->loc = r->named;
            r->named = NULL;

        } else {
            r->loc = gn_rw_find_location(r, &caps, &rc);
            if (rc != GN_OK) {
                return rc;
            }

            if (r->loc == r->srv->loc) {
                return GN_OK;              /* server level ran already */
            }
        }
        r->loc_caps = caps;                /* a regex location's, alias */

        what = gn_rw_run_level(r, gn_rewrite_conf(r->loc)->ops, &caps, &rc);
        if (rc != GN_OK) {
            return rc;
        }
        if (what != GN_RW_RESTART) {
            return GN_OK;
        }
    }
}


/* An alias with captures (lc->alias_expand): its path for r, with the
 * captures of r's location's regex. */
static gn_int_t
gn_rewrite_alias(gn_http_request_t *r, gn_str_t *path)
{
    path->data = gn_rw_expand(r, r->loc->alias_tpl, r->loc_caps,
                              &path->len);
    return path->data != NULL ? GN_OK : GN_ERROR;
}


/* An alias with captures in a regex location: its template (with the
 * location's named groups), and the directory before the first of
 * them, under which its files must stay. */
static gn_int_t
gn_rewrite_check_level(gn_conf_t *cf, gn_cycle_t *cycle, gn_srv_conf_t *sc,
    gn_loc_conf_t *lc)
{
    gn_rw_tpl_t     *tpl;
    gn_conf_file_t   where, *saved;
    gn_int_t         rc;
    u_char          *dollar;

    (void) cycle;
    (void) sc;

    if (lc->alias.len == 0 || lc->regex == NULL) {
        return GN_OK;
    }

    dollar = memchr(lc->alias.data, '$', lc->alias.len);
    if (dollar == NULL) {
        return GN_OK;
    }

    tpl = gn_pcalloc(cf->pool, sizeof(gn_rw_tpl_t));
    if (tpl == NULL) {
        snprintf(cf->err, sizeof(cf->err), "out of memory");
        return GN_ERROR;
    }
    /* its errors name the line of the alias */
    where.name = lc->alias_file;
    where.line = lc->alias_line;
    saved = cf->file;
    cf->file = &where;
    rc = gn_rw_compile_tpl(cf, tpl, &lc->alias, lc->regex);
    cf->file = saved;
    if (rc != GN_OK) {
        return GN_ERROR;                   /* cf->err says why */
    }
    if (lc->alias_slash
        && gn_rw_part(tpl, GN_RW_LIT, (u_char *) "/", 1, 0) != GN_OK)
    {
        return GN_ERROR;
    }

    lc->alias_tpl = tpl;
    lc->alias_expand = gn_rewrite_alias;
    lc->alias_dir.data = lc->alias.data;
    lc->alias_dir.len = (size_t) (dollar - lc->alias.data);
    while (lc->alias_dir.len > 0
           && lc->alias_dir.data[lc->alias_dir.len - 1] != '/')
    {
        lc->alias_dir.len--;
    }
    if (lc->alias_dir.len > 1) {
        lc->alias_dir.len--;               /* no trailing '/' */
    }

    return GN_OK;
}


const gn_feature_t  gn_rewrite_feature = {
    .name = "rewrite", .commands = gn_rewrite_commands,
    .conf_size = sizeof(gn_rewrite_conf_t),
    .check_level = gn_rewrite_check_level
};
