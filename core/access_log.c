/*
 * Access logs. A line is measured, allocated from the request pool,
 * filled, and written with one write(2) (O_APPEND: no interleaving
 * between children). Request bytes are escaped: '"', '\' and bytes
 * outside 0x20..0x7e become \xHH, so a line is always one line.
 */

#include "gn_config.h"

#include "access_log.h"
#include "http_request.h"
#include "http_response.h"
#include "timer.h"
#include "log.h"
#include "tls.h"


enum {
    GN_LV_TEXT = 0,
    GN_LV_REMOTE_ADDR,
    GN_LV_REMOTE_USER,
    GN_LV_TIME_LOCAL,
    GN_LV_TIME_ISO8601,
    GN_LV_MSEC,
    GN_LV_REQUEST,
    GN_LV_REQUEST_METHOD,
    GN_LV_URI,
    GN_LV_STATUS,
    GN_LV_BODY_BYTES_SENT,
    GN_LV_BYTES_SENT,
    GN_LV_HTTP_REFERER,
    GN_LV_HTTP_USER_AGENT,
    GN_LV_REQUEST_TIME,
    GN_LV_HOST,
    GN_LV_PID,
    GN_LV_CONNECTION_REQUESTS,
    GN_LV_TLS_PROTOCOL,
    GN_LV_TLS_CIPHER,
    GN_LV_TLS_RESUMED,
    GN_LV_TLS_SNI,
    GN_LV_REQUEST_URI,
    GN_LV_ARGS
};

static const gn_conf_enum_t  gn_log_vars[] = {
    { gn_string("remote_addr"), GN_LV_REMOTE_ADDR },
    { gn_string("remote_user"), GN_LV_REMOTE_USER },
    { gn_string("time_local"), GN_LV_TIME_LOCAL },
    { gn_string("time_iso8601"), GN_LV_TIME_ISO8601 },
    { gn_string("msec"), GN_LV_MSEC },
    { gn_string("request"), GN_LV_REQUEST },
    { gn_string("request_method"), GN_LV_REQUEST_METHOD },
    { gn_string("uri"), GN_LV_URI },
    { gn_string("status"), GN_LV_STATUS },
    { gn_string("body_bytes_sent"), GN_LV_BODY_BYTES_SENT },
    { gn_string("bytes_sent"), GN_LV_BYTES_SENT },
    { gn_string("http_referer"), GN_LV_HTTP_REFERER },
    { gn_string("http_user_agent"), GN_LV_HTTP_USER_AGENT },
    { gn_string("request_time"), GN_LV_REQUEST_TIME },
    { gn_string("host"), GN_LV_HOST },
    { gn_string("pid"), GN_LV_PID },
    { gn_string("connection_requests"), GN_LV_CONNECTION_REQUESTS },
    { gn_string("tls_protocol"), GN_LV_TLS_PROTOCOL },
    { gn_string("tls_cipher"), GN_LV_TLS_CIPHER },
    { gn_string("tls_resumed"), GN_LV_TLS_RESUMED },
    { gn_string("tls_sni"), GN_LV_TLS_SNI },
    { gn_string("request_uri"), GN_LV_REQUEST_URI },
    { gn_string("args"), GN_LV_ARGS },
    { gn_null_string, 0 }
};

static const char  gn_log_combined[] =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status "
    "$body_bytes_sent \"$http_referer\" \"$http_user_agent\"";
static const char  gn_log_common[] =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status "
    "$body_bytes_sent";

static gn_log_format_t  *gn_log_fmt_combined;
static gn_log_format_t  *gn_log_fmt_common;


static gn_int_t
gn_access_log_push(gn_log_format_t *fmt, gn_uint_t var, u_char *p, size_t n)
{
    gn_log_op_t  *op;

    op = gn_array_push(&fmt->ops);
    if (op == NULL) {
        return GN_ERROR;
    }

    op->var = var;
    op->text.data = p;
    op->text.len = n;

    return GN_OK;
}


static gn_int_t
gn_access_log_compile_one(gn_log_format_t *fmt, const gn_str_t *s,
    char *err, size_t errlen)
{
    u_char     *p, *last, *start, *name;
    size_t      n;
    gn_uint_t   i, braces;

    p = s->data;
    last = p + s->len;

    while (p < last) {
        start = p;
        while (p < last && *p != '$') {
            p++;
        }
        if (p > start
            && gn_access_log_push(fmt, GN_LV_TEXT, start, p - start) != GN_OK)
        {
            return GN_ERROR;
        }
        if (p == last) {
            break;
        }

        p++;                                            /* '$' */
        braces = (p < last && *p == '{');
        p += braces;
        name = p;
        while (p < last && ((*p >= 'a' && *p <= 'z') || *p == '_'
                            || (*p >= '0' && *p <= '9')))
        {
            p++;
        }
        n = p - name;

        if (braces) {
            if (p == last || *p != '}') {
                snprintf(err, errlen, "missing \"}\" after \"${%.*s\"",
                         (int) n, name);
                return GN_ERROR;
            }
            p++;
        }

        for (i = 0; gn_log_vars[i].name.len; i++) {
            if (gn_log_vars[i].name.len == n
                && memcmp(gn_log_vars[i].name.data, name, n) == 0)
            {
                break;
            }
        }

        if (gn_log_vars[i].name.len == 0) {
            snprintf(err, errlen, "unknown variable \"$%.*s\"", (int) n, name);
            return GN_ERROR;
        }

        if (gn_access_log_push(fmt, gn_log_vars[i].value, NULL, 0) != GN_OK) {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


gn_int_t
gn_access_log_compile(gn_pool_t *pool, gn_log_format_t *fmt,
    const gn_str_t *args, gn_uint_t n, char *err, size_t errlen)
{
    gn_uint_t  i;

    if (gn_array_init(&fmt->ops, pool, 16, sizeof(gn_log_op_t)) != GN_OK) {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }

    for (i = 0; i < n; i++) {
        if (gn_access_log_compile_one(fmt, &args[i], err, errlen) != GN_OK) {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


gn_log_format_t *
gn_access_log_builtin(gn_pool_t *pool, const gn_str_t *name)
{
    gn_log_format_t  **slot;
    gn_str_t           text;
    char               err[128];

    if (gn_str_eq(name, "combined")) {
        slot = &gn_log_fmt_combined;
        gn_str_set(&text, gn_log_combined);
    } else if (gn_str_eq(name, "common")) {
        slot = &gn_log_fmt_common;
        gn_str_set(&text, gn_log_common);
    } else {
        return NULL;
    }

    /* compiled into each cycle's pool: a cycle must not point into a
     * freed one after a reload */
    (void) slot;
    {
        gn_log_format_t  *fmt;

        fmt = gn_pcalloc(pool, sizeof(gn_log_format_t));
        if (fmt == NULL) {
            return NULL;
        }
        fmt->name = *name;
        if (gn_access_log_compile(pool, fmt, &text, 1, err, sizeof(err))
            != GN_OK)
        {
            return NULL;
        }
        return fmt;
    }
}


/* Copies s escaped into p (or only measures it when p is NULL). */
static size_t
gn_access_log_escape(u_char *p, const u_char *s, size_t n)
{
    static const char  hex[] = "0123456789ABCDEF";
    size_t             len, i;

    if (n == 0 || s == NULL) {
        if (p != NULL) {
            *p = '-';
        }
        return 1;
    }

    len = 0;
    for (i = 0; i < n; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\') {
            if (p != NULL) {
                p[len] = '\\';
                p[len + 1] = 'x';
                p[len + 2] = (u_char) hex[s[i] >> 4];
                p[len + 3] = (u_char) hex[s[i] & 0xf];
            }
            len += 4;

        } else {
            if (p != NULL) {
                p[len] = s[i];
            }
            len++;
        }
    }

    return len;
}


/* The request line as received: method SP target SP version. */
static size_t
gn_access_log_request_line(gn_http_request_t *r, u_char *p)
{
    gn_http_head_t  *h = &r->head;
    size_t           n;
    u_char          *end;

    if (h->method_name.data == NULL || h->target.data == NULL) {
        return gn_access_log_escape(p, NULL, 0);
    }

    /* method, target and version lie in one line of the head buffer */
    end = h->target.data + h->target.len;
    while (end < r->c->buf + r->head_len && *end != '\r' && *end != '\n') {
        end++;
    }
    n = end - h->method_name.data;

    return gn_access_log_escape(p, h->method_name.data, n);
}


static size_t
gn_access_log_tls(gn_http_request_t *r, gn_uint_t var, u_char *p)
{
    gn_str_t   v[4];

    gn_tls_conn_info(r->c, &v[0], &v[1], &v[2], &v[3]);

    return gn_access_log_escape(p, v[var - GN_LV_TLS_PROTOCOL].data,
                                v[var - GN_LV_TLS_PROTOCOL].len);
}


static size_t
gn_access_log_var(gn_http_request_t *r, gn_uint_t var, u_char *p)
{
    char     num[48];
    size_t   n;
    off_t    body;
    gn_msec_t  ms;

    switch (var) {

    case GN_LV_REMOTE_ADDR:
        return gn_access_log_escape(p, (u_char *) r->c->addr_text,
                                    r->c->addr_len);

    case GN_LV_REMOTE_USER:
        return gn_access_log_escape(p, NULL, 0);

    case GN_LV_TIME_LOCAL:
        if (p) memcpy(p, gn_log_time_local.data, gn_log_time_local.len);
        return gn_log_time_local.len;

    case GN_LV_TIME_ISO8601:
        if (p) memcpy(p, gn_log_time_iso.data, gn_log_time_iso.len);
        return gn_log_time_iso.len;

    case GN_LV_REQUEST:
        return gn_access_log_request_line(r, p);

    case GN_LV_REQUEST_METHOD:
        return gn_access_log_escape(p, r->head.method_name.data,
                                    r->head.method_name.len);

    case GN_LV_URI:
        return gn_access_log_escape(p, r->uri.data, r->uri.len);

    case GN_LV_REQUEST_URI:
        return gn_access_log_escape(p, r->head.target.data,
                                    r->head.target.len);

    case GN_LV_ARGS:
        return gn_access_log_escape(p, r->head.query.data,
                                    r->head.query.len);

    case GN_LV_HTTP_REFERER:
        return gn_access_log_escape(p, r->head.referer.data,
                                    r->head.referer.len);

    case GN_LV_HTTP_USER_AGENT:
        return gn_access_log_escape(p, r->head.user_agent.data,
                                    r->head.user_agent.len);

    case GN_LV_HOST:
        return gn_access_log_escape(p, r->head.host.data, r->head.host.len);

    case GN_LV_TLS_PROTOCOL:
    case GN_LV_TLS_CIPHER:
    case GN_LV_TLS_RESUMED:
    case GN_LV_TLS_SNI:
        return gn_access_log_tls(r, var, p);

    default:
        break;
    }

    body = r->bytes_sent - r->header_bytes;

    switch (var) {
    case GN_LV_STATUS:
        n = snprintf(num, sizeof(num), "%u", (unsigned) r->status);
        break;
    case GN_LV_BODY_BYTES_SENT:
        n = snprintf(num, sizeof(num), "%lld", (long long) gn_max(body, 0));
        break;
    case GN_LV_BYTES_SENT:
        n = snprintf(num, sizeof(num), "%lld", (long long) r->bytes_sent);
        break;
    case GN_LV_REQUEST_TIME:
        ms = gn_current_msec - r->start_msec;
        n = snprintf(num, sizeof(num), "%llu.%03llu",
                     (unsigned long long) ms / 1000,
                     (unsigned long long) ms % 1000);
        break;
    case GN_LV_MSEC:
        n = snprintf(num, sizeof(num), "%lld.000",
                     (long long) gn_current_sec);
        break;
    case GN_LV_PID:
        n = snprintf(num, sizeof(num), "%d", (int) getpid());
        break;
    case GN_LV_CONNECTION_REQUESTS:
        n = snprintf(num, sizeof(num), "%u", (unsigned) r->c->requests);
        break;
    default:
        n = snprintf(num, sizeof(num), "-");
        break;
    }

    if (p != NULL) {
        memcpy(p, num, n);
    }

    return n;
}


static void
gn_access_log_write(gn_http_request_t *r, gn_access_log_t *al)
{
    gn_log_op_t  *op;
    gn_uint_t     i;
    size_t        len;
    u_char       *line, *p;
    ssize_t       n;

    op = al->format->ops.elts;
    len = 1;
    for (i = 0; i < al->format->ops.nelts; i++) {
        len += op[i].var ? gn_access_log_var(r, op[i].var, NULL)
                         : op[i].text.len;
    }

    line = gn_pnalloc(r->pool, len);
    if (line == NULL) {
        return;
    }

    p = line;
    for (i = 0; i < al->format->ops.nelts; i++) {
        if (op[i].var) {
            p += gn_access_log_var(r, op[i].var, p);
        } else {
            p = gn_cpymem(p, op[i].text.data, op[i].text.len);
        }
    }
    *p++ = '\n';

    n = write(al->file->fd, line, (size_t) (p - line));
    if (n != p - line) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, n == -1 ? errno : 0,
                     "write() to \"%s\" failed or was short",
                     (char *) al->file->name.data);
    }
}


void
gn_access_log_request(gn_http_request_t *r)
{
    gn_access_log_t  *al;
    gn_uint_t         i;

    if (r->loc->access_logs == NULL || r->loc->access_log_off == 1) {
        return;
    }

    al = r->loc->access_logs->elts;
    for (i = 0; i < r->loc->access_logs->nelts; i++) {
        gn_access_log_write(r, &al[i]);
    }
}
