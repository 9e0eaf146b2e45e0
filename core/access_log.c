/*
 * Access logs. A text line is measured, allocated from the request pool
 * and filled; a binary record is encoded (binlog.c). The result goes to
 * the file's buffer, or straight to the file with one write(2) (O_APPEND:
 * no interleaving between children). Request bytes are escaped per the
 * format (escape=default: '"', '\' and bytes outside 0x20..0x7e become
 * \xHH; escape=json: JSON string rules), so a line is always one line.
 */

#include "gn_config.h"

#include <sys/socket.h>
#include <arpa/inet.h>

#include "access_log.h"
#include "binlog.h"
#include "http_request.h"
#include "http_file.h"
#include "timer.h"
#include "log.h"
#include "tls.h"


enum {
    GN_LV_TEXT = 0,
    GN_LV_REMOTE_ADDR,
    GN_LV_REMOTE_PORT,
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
    GN_LV_ARGS,
    GN_LV_SCHEME,
    GN_LV_SERVER_NAME,
    GN_LV_SERVER_PORT,
    GN_LV_SERVER_PROTOCOL,
    GN_LV_REQUEST_LENGTH,
    GN_LV_SENT_CONTENT_TYPE,
    GN_LV_HTTP2,
    GN_LV_STREAM_ID,
    GN_LV_REALIP_REMOTE_ADDR,
    GN_LV_REALIP_REMOTE_PORT,
    GN_LV_PROXY_PROTOCOL_ADDR,
    GN_LV_PROXY_PROTOCOL_PORT,
    GN_LV_UPSTREAM_ADDR,
    GN_LV_UPSTREAM_STATUS,
    GN_LV_UPSTREAM_RESPONSE_TIME,
    GN_LV_UPSTREAM_CONNECT_TIME,
    GN_LV_PROXY_HOST,              /* the order of gn_http_upstream_t */
    GN_LV_FASTCGI_SCRIPT_NAME,
    GN_LV_FASTCGI_PATH_INFO,       /* ... up to here */
    GN_LV_PROXY_ADD_X_FORWARDED_FOR,
    GN_LV_CONTENT_LENGTH,
    GN_LV_MODULE_LOG,
    GN_LV_DOCUMENT_ROOT,
    GN_LV_REQUEST_FILENAME,
    GN_LV_HTTPS,
    GN_LV_SERVER_ADDR,
    GN_LV_GANNET_VERSION,
    GN_LV_BINARY_REMOTE_ADDR,
    GN_LV_TLS_CLIENT_VERIFY,       /* the order of GN_TLS_CLIENT_* */
    GN_LV_TLS_CLIENT_S_DN,
    GN_LV_TLS_CLIENT_I_DN,
    GN_LV_TLS_CLIENT_SERIAL,
    GN_LV_TLS_CLIENT_FINGERPRINT,  /* ... up to here */
    GN_LV_HTTP_HEADER              /* $http_<name>: op->text is the name */
};

static const gn_conf_enum_t  gn_log_vars[] = {
    { gn_string("remote_addr"), GN_LV_REMOTE_ADDR },
    { gn_string("binary_remote_addr"), GN_LV_BINARY_REMOTE_ADDR },
    { gn_string("tls_client_verify"), GN_LV_TLS_CLIENT_VERIFY },
    { gn_string("tls_client_s_dn"), GN_LV_TLS_CLIENT_S_DN },
    { gn_string("tls_client_i_dn"), GN_LV_TLS_CLIENT_I_DN },
    { gn_string("tls_client_serial"), GN_LV_TLS_CLIENT_SERIAL },
    { gn_string("tls_client_fingerprint"), GN_LV_TLS_CLIENT_FINGERPRINT },
    /* nginx's names for them, so its log formats port */
    { gn_string("ssl_client_verify"), GN_LV_TLS_CLIENT_VERIFY },
    { gn_string("ssl_client_s_dn"), GN_LV_TLS_CLIENT_S_DN },
    { gn_string("ssl_client_i_dn"), GN_LV_TLS_CLIENT_I_DN },
    { gn_string("ssl_client_serial"), GN_LV_TLS_CLIENT_SERIAL },
    { gn_string("ssl_client_fingerprint"), GN_LV_TLS_CLIENT_FINGERPRINT },
    { gn_string("remote_port"), GN_LV_REMOTE_PORT },
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
    { gn_string("query_string"), GN_LV_ARGS },
    { gn_string("scheme"), GN_LV_SCHEME },
    { gn_string("server_name"), GN_LV_SERVER_NAME },
    { gn_string("server_port"), GN_LV_SERVER_PORT },
    { gn_string("server_protocol"), GN_LV_SERVER_PROTOCOL },
    { gn_string("request_length"), GN_LV_REQUEST_LENGTH },
    { gn_string("sent_http_content_type"), GN_LV_SENT_CONTENT_TYPE },
    { gn_string("http2"), GN_LV_HTTP2 },
    { gn_string("stream_id"), GN_LV_STREAM_ID },
    { gn_string("module_log"), GN_LV_MODULE_LOG },
    { gn_string("realip_remote_addr"), GN_LV_REALIP_REMOTE_ADDR },
    { gn_string("realip_remote_port"), GN_LV_REALIP_REMOTE_PORT },
    { gn_string("proxy_protocol_addr"), GN_LV_PROXY_PROTOCOL_ADDR },
    { gn_string("proxy_protocol_port"), GN_LV_PROXY_PROTOCOL_PORT },
    { gn_string("upstream_addr"), GN_LV_UPSTREAM_ADDR },
    { gn_string("upstream_status"), GN_LV_UPSTREAM_STATUS },
    { gn_string("upstream_response_time"), GN_LV_UPSTREAM_RESPONSE_TIME },
    { gn_string("upstream_connect_time"), GN_LV_UPSTREAM_CONNECT_TIME },
    { gn_string("proxy_host"), GN_LV_PROXY_HOST },
    { gn_string("proxy_add_x_forwarded_for"),
      GN_LV_PROXY_ADD_X_FORWARDED_FOR },
    { gn_string("fastcgi_script_name"), GN_LV_FASTCGI_SCRIPT_NAME },
    { gn_string("fastcgi_path_info"), GN_LV_FASTCGI_PATH_INFO },
    { gn_string("content_length"), GN_LV_CONTENT_LENGTH },
    { gn_string("document_root"), GN_LV_DOCUMENT_ROOT },
    { gn_string("document_uri"), GN_LV_URI },
    { gn_string("request_filename"), GN_LV_REQUEST_FILENAME },
    { gn_string("request_scheme"), GN_LV_SCHEME },
    { gn_string("https"), GN_LV_HTTPS },
    { gn_string("server_addr"), GN_LV_SERVER_ADDR },
    { gn_string("gannet_version"), GN_LV_GANNET_VERSION },
    { gn_null_string, 0 }
};

static const gn_conf_enum_t  gn_log_escapes[] = {
    { gn_string("default"), GN_BINLOG_ESC_DEFAULT },
    { gn_string("json"), GN_BINLOG_ESC_JSON },
    { gn_string("none"), GN_BINLOG_ESC_NONE },
    { gn_null_string, 0 }
};

static const char  gn_log_combined[] =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status "
    "$body_bytes_sent \"$http_referer\" \"$http_user_agent\"";
static const char  gn_log_common[] =
    "$remote_addr - $remote_user [$time_local] \"$request\" $status "
    "$body_bytes_sent";

/* the binary format: a marker, never compiled */
static gn_log_format_t  gn_log_binary = { gn_string("binary"),
                                          { NULL, 0, 0, 0, NULL }, 0 };

/* child: files holding a buffer, for flush_all */
static gn_access_file_t  *gn_access_files;


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


/* Adds the variable `name` (without '$') to fmt. */
static gn_int_t
gn_access_log_push_var(gn_log_format_t *fmt, u_char *name, size_t n,
    char *err, size_t errlen)
{
    gn_uint_t  i;

    for (i = 0; gn_log_vars[i].name.len; i++) {
        if (gn_log_vars[i].name.len == n
            && memcmp(gn_log_vars[i].name.data, name, n) == 0)
        {
            return gn_access_log_push(fmt, gn_log_vars[i].value, NULL, 0);
        }
    }

    /* $content_type: the request's, as $http_content_type */
    if (n == 12 && memcmp(name, "content_type", 12) == 0) {
        return gn_access_log_push(fmt, GN_LV_HTTP_HEADER, name, n);
    }

    /* $http_<name>: any request header, '_' standing for '-' */
    if (n > 5 && memcmp(name, "http_", 5) == 0) {
        return gn_access_log_push(fmt, GN_LV_HTTP_HEADER, name + 5, n - 5);
    }

    snprintf(err, errlen, "unknown variable \"$%.*s\"", (int) n, name);
    return GN_ERROR;
}


static gn_int_t
gn_access_log_compile_one(gn_log_format_t *fmt, const gn_str_t *s,
    char *err, size_t errlen)
{
    u_char     *p, *last, *start, *name;
    size_t      n;
    gn_uint_t   braces;

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

        if (n == 0) {
            snprintf(err, errlen, "invalid variable name after \"$\"");
            return GN_ERROR;
        }

        if (gn_access_log_push_var(fmt, name, n, err, errlen) != GN_OK) {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


/*
 * Compiles the format strings args[0..n) (concatenated, as nginx does)
 * into `fmt`. Returns GN_OK, or GN_ERROR with err set (e.g. an unknown
 * variable).
 */
static gn_int_t
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


gn_int_t
gn_access_log_template(gn_pool_t *pool, gn_log_format_t *fmt,
    const gn_str_t *s, char *err, size_t errlen)
{
    memset(fmt, 0, sizeof(gn_log_format_t));
    fmt->escape = GN_BINLOG_ESC_VALUE;
    return gn_access_log_compile(pool, fmt, s, 1, err, errlen);
}


/* The built-in "combined" and "common" formats, compiled into each
 * cycle's pool: a cycle must not point into a freed one after a reload. */
static gn_log_format_t *
gn_access_log_builtin(gn_pool_t *pool, const gn_str_t *name)
{
    gn_log_format_t  *fmt;
    gn_str_t          text;
    char              err[128];

    if (gn_str_eq(name, "combined")) {
        gn_str_set(&text, gn_log_combined);
    } else if (gn_str_eq(name, "common")) {
        gn_str_set(&text, gn_log_common);
    } else if (gn_str_eq(name, "binary")) {
        return &gn_log_binary;
    } else {
        return NULL;
    }

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


static gn_log_format_t *
gn_access_log_find_format(gn_conf_t *cf, const gn_str_t *name)
{
    gn_cycle_t        *cycle = cf->data;
    gn_array_t        *formats = gn_access_log_conf(cycle->main_loc)->formats;
    gn_log_format_t  **fmts;
    gn_uint_t          i;

    fmts = formats != NULL ? formats->elts : NULL;
    for (i = 0; formats != NULL && i < formats->nelts; i++) {
        if (gn_str_cmp(&fmts[i]->name, name) == 0) {
            return fmts[i];
        }
    }

    return gn_access_log_builtin(cf->pool, name);
}


/* buffer=SIZE and flush=TIME; `*fmt_arg` is set to the format name. */
static char *
gn_access_log_params(gn_conf_t *cf, gn_access_file_t *want,
    gn_str_t **fmt_arg)
{
    gn_str_t   *value = cf->args->elts, v;
    gn_uint_t   i;
    ssize_t     size;

    *fmt_arg = NULL;
    want->size = 0;
    want->flush = 0;

    for (i = 2; i < cf->args->nelts; i++) {

        if (value[i].len > 7 && memcmp(value[i].data, "buffer=", 7) == 0) {
            v.data = value[i].data + 7;
            v.len = value[i].len - 7;
            size = gn_parse_size(&v);
            if (size <= 0 || size > GN_ACCESS_LOG_BUFFER_MAX) {
                gn_conf_error(cf, "invalid buffer size \"%.*s\" in "
                              "\"access_log\" directive (1 .. 16m)",
                              GN_STR_ARG(&v));
                return GN_CONF_ERROR;
            }
            want->size = (size_t) size;

        } else if (value[i].len > 6
                   && memcmp(value[i].data, "flush=", 6) == 0)
        {
            v.data = value[i].data + 6;
            v.len = value[i].len - 6;
            if (gn_parse_msec(&v, &want->flush) != GN_OK
                || want->flush == 0)
            {
                gn_conf_error(cf, "invalid flush time \"%.*s\" in "
                              "\"access_log\" directive", GN_STR_ARG(&v));
                return GN_CONF_ERROR;
            }

        } else if (i == 2) {
            *fmt_arg = &value[i];

        } else {
            gn_conf_error(cf, "invalid parameter \"%.*s\" in \"access_log\" "
                          "directive", GN_STR_ARG(&value[i]));
            return GN_CONF_ERROR;
        }
    }

    /* as nginx: flush= alone implies a default buffer */
    if (want->flush && want->size == 0) {
        want->size = GN_ACCESS_LOG_BUFFER_DEFAULT;
    }

    return GN_CONF_OK;
}


/* The gn_access_file_t of `path` (shared by every access_log naming it). */
static char *
gn_access_log_file(gn_conf_t *cf, gn_access_log_t *al, gn_str_t *path,
    gn_access_file_t *want)
{
    gn_access_file_t  *af;
    gn_open_file_t    *file;

    file = gn_cycle_open_file_add(cf, path);
    if (file == NULL) {
        return "failed (out of memory)";
    }

    af = file->data;
    if (af == NULL) {
        af = gn_pcalloc(cf->pool, sizeof(gn_access_file_t));
        if (af == NULL) {
            return "failed (out of memory)";
        }
        af->file = file;
        af->binary = want->binary;
        file->data = af;
    }

    if (af->binary != want->binary) {
        gn_conf_error(cf, "\"%s\" is used both for binary and for text "
                      "records in \"access_log\" directive",
                      (char *) path->data);
        return GN_CONF_ERROR;
    }

    /* several access_log lines may name one file: the largest buffer and
     * the shortest flush win */
    af->size = gn_max(af->size, want->size);
    if (want->flush && (af->flush == 0 || want->flush < af->flush)) {
        af->flush = want->flush;
    }

    al->file = file;
    al->af = af;

    return GN_CONF_OK;
}


static char *
gn_access_log_directive(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_access_log_conf_t  *lc = conf;
    gn_str_t          *value = cf->args->elts, path, combined, *name;
    gn_access_log_t   *al;
    gn_access_file_t   want;
    char              *rv;

    if (gn_str_eq(&value[1], "off")) {
        if (cf->args->nelts != 2) {
            return "has invalid parameters after \"off\"";
        }
        lc->off = 1;
        return GN_CONF_OK;
    }

    memset(&want, 0, sizeof(want));
    rv = gn_access_log_params(cf, &want, &name);
    if (rv != GN_CONF_OK) {
        return rv;
    }

    if (lc->logs == NULL) {
        lc->logs = gn_array_create(cf->pool, 1,
                                          sizeof(gn_access_log_t));
        if (lc->logs == NULL) {
            return "failed (out of memory)";
        }
    }

    al = gn_array_push(lc->logs);
    if (al == NULL) {
        return "failed (out of memory)";
    }
    memset(al, 0, sizeof(*al));

    gn_str_set(&combined, "combined");
    al->format = gn_access_log_find_format(cf, name ? name : &combined);
    if (al->format == NULL) {
        gn_conf_error(cf, "unknown log format \"%.*s\" in \"access_log\" "
                      "directive", GN_STR_ARG(name));
        return GN_CONF_ERROR;
    }
    want.binary = (al->format == &gn_log_binary);

    path = value[1];
    if (gn_conf_full_name(cf, &path, 0) != GN_OK) {
        return "failed (out of memory)";
    }

    rv = gn_access_log_file(cf, al, &path, &want);
    if (rv != GN_CONF_OK) {
        return rv;
    }

    lc->off = 0;
    return GN_CONF_OK;
}


static char *
gn_access_log_format_directive(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf)
{
    gn_access_log_conf_t  *mc = conf;
    gn_str_t          *value = cf->args->elts, *name, esc;
    gn_log_format_t  **pfmt, *fmt;
    gn_uint_t          i, first, escape;
    char               err[256];

    name = &value[1];
    if (mc->formats == NULL) {
        mc->formats = gn_array_create(cf->pool, 2, sizeof(gn_log_format_t *));
        if (mc->formats == NULL) {
            return "failed (out of memory)";
        }
    }

    pfmt = mc->formats->elts;
    for (i = 0; i < mc->formats->nelts; i++) {
        if (gn_str_cmp(&pfmt[i]->name, name) == 0) {
            gn_conf_error(cf, "duplicate log_format \"%.*s\"",
                          GN_STR_ARG(name));
            return GN_CONF_ERROR;
        }
    }

    if (gn_str_eq(name, "combined") || gn_str_eq(name, "common")
        || gn_str_eq(name, "binary"))
    {
        gn_conf_error(cf, "log_format \"%.*s\" is built in and cannot be "
                      "redefined", GN_STR_ARG(name));
        return GN_CONF_ERROR;
    }

    first = 2;
    escape = GN_BINLOG_ESC_DEFAULT;

    if (value[2].len > 7 && memcmp(value[2].data, "escape=", 7) == 0) {
        esc.data = value[2].data + 7;
        esc.len = value[2].len - 7;
        for (i = 0; gn_log_escapes[i].name.len; i++) {
            if (gn_str_cmp(&gn_log_escapes[i].name, &esc) == 0) {
                break;
            }
        }
        if (gn_log_escapes[i].name.len == 0) {
            gn_conf_error(cf, "unknown escape \"%.*s\" in \"log_format\" "
                          "directive, it must be default, json or none",
                          GN_STR_ARG(&esc));
            return GN_CONF_ERROR;
        }
        escape = gn_log_escapes[i].value;
        first = 3;
        if (cf->args->nelts == 3) {
            return "has no format string";
        }
    }

    fmt = gn_pcalloc(cf->pool, sizeof(gn_log_format_t));
    pfmt = gn_array_push(mc->formats);
    if (fmt == NULL || pfmt == NULL) {
        return "failed (out of memory)";
    }

    fmt->name = *name;
    fmt->escape = escape;
    if (gn_access_log_compile(cf->pool, fmt, &value[first],
                              cf->args->nelts - first, err, sizeof(err))
        != GN_OK)
    {
        gn_conf_error(cf, "%s in \"log_format\" directive", err);
        return GN_CONF_ERROR;
    }

    *pfmt = fmt;
    return GN_CONF_OK;
}


/* ---- values ------------------------------------------------------------ */


/* The request line as received: method SP target SP version. */
static size_t
gn_access_log_request_line(gn_http_request_t *r, u_char *p, gn_uint_t esc)
{
    gn_http_head_t  *h = &r->head;
    size_t           n;
    u_char          *end;

    if (h->method_name.data == NULL || h->target.data == NULL) {
        /* not parsed (a bad or partial head): its first line as it came,
         * as nginx logs it */
        if (r->raw == NULL || r->head_len == 0) {
            return gn_binlog_escape(p, NULL, 0, esc);
        }
        end = memchr(r->raw, '\n', r->head_len);
        n = end ? (size_t) (end - r->raw)
                : r->head_len;
        if (n > 0 && r->raw[n - 1] == '\r') {
            n--;
        }
        return gn_binlog_escape(p, r->raw, n, esc);
    }

    /* method, target and version lie in one line of the head buffer */
    end = h->target.data + h->target.len;
    while (end < r->raw + r->head_len && *end != '\r' && *end != '\n') {
        end++;
    }
    n = end - h->method_name.data;

    return gn_binlog_escape(p, h->method_name.data, n, esc);
}


/* Request header `name` ($http_ suffix: lower case, '_' for '-'). */
static gn_str_t *
gn_access_log_header(gn_http_request_t *r, const gn_str_t *name)
{
    gn_http_header_t  *hd;
    gn_uint_t          i;
    size_t             k;
    u_char             c;

    hd = r->head.headers;
    for (i = 0; hd != NULL && i < r->head.nheaders; i++) {
        if (hd[i].name.len != name->len) {
            continue;
        }
        for (k = 0; k < name->len; k++) {
            c = gn_tolower(hd[i].name.data[k]);
            if (c == '-') {
                c = '_';
            }
            if (c != name->data[k]) {
                break;
            }
        }
        if (k == name->len) {
            return &hd[i].value;
        }
    }

    return NULL;
}


/* $proxy_add_x_forwarded_for: the client's X-Forwarded-For with its
 * address appended, or its address alone. */
static size_t
gn_access_log_xff(gn_http_request_t *r, u_char *p, gn_uint_t esc)
{
    static const gn_str_t  name = gn_string("x_forwarded_for");
    gn_str_t              *xff, addr;
    size_t                 n = 0;

    xff = gn_access_log_header(r, &name);
    addr = gn_http_peer_text(r);

    if (xff != NULL && xff->len > 0) {
        n = gn_binlog_escape(p, xff->data, xff->len, esc);
        n += gn_binlog_escape(p ? p + n : NULL, (const u_char *) ", ", 2,
                              esc);
    }

    return n + gn_binlog_escape(p ? p + n : NULL, addr.data, addr.len, esc);
}


/* $upstream_addr, _status, _response_time, _connect_time: one value per
 * try, joined by ", " (a time in seconds, ms resolution; "-" for a
 * connect time when the try did not connect). */
static size_t
gn_access_log_tries(gn_http_upstream_t *u, gn_uint_t var, u_char *p,
    gn_uint_t esc)
{
    gn_http_upstream_try_t  *t;
    gn_uint_t                i, n;
    gn_msec_t                ms;
    size_t                   len = 0, k;
    char                     num[32];

    n = u != NULL ? gn_min(u->ntries, GN_HTTP_UPSTREAM_TRIES) : 0;
    if (n == 0) {
        return gn_binlog_escape(p, NULL, 0, esc);
    }

    for (i = 0; i < n; i++) {
        t = &u->tries[i];
        if (i > 0) {
            len += gn_binlog_escape(p ? p + len : NULL, (u_char *) ", ", 2,
                                    esc);
        }
        if (var == GN_LV_UPSTREAM_ADDR) {
            len += gn_binlog_escape(p ? p + len : NULL, t->addr->data,
                                    t->addr->len, esc);
            continue;
        }
        ms = var == GN_LV_UPSTREAM_RESPONSE_TIME ? t->response : t->connect;
        if (var == GN_LV_UPSTREAM_STATUS) {
            k = (size_t) snprintf(num, sizeof(num), "%03u",
                                  (unsigned) t->status % 1000);
        } else if (ms == (gn_msec_t) -1) {
            k = (size_t) snprintf(num, sizeof(num), "-");
        } else {
            k = (size_t) snprintf(num, sizeof(num), "%llu.%03llu",
                                  (unsigned long long) ms / 1000,
                                  (unsigned long long) ms % 1000);
        }
        len += gn_binlog_escape(p ? p + len : NULL, (u_char *) num, k, esc);
    }

    return len;
}


/* $server_addr: the address the client connected to. */
static size_t
gn_access_log_server_addr(gn_http_request_t *r, u_char *p, gn_uint_t esc)
{
    struct sockaddr_storage  ss;
    socklen_t                len = sizeof(ss);
    char                     text[INET6_ADDRSTRLEN];
    const void              *a;

    if (getsockname(r->c->io.fd, (struct sockaddr *) &ss, &len) != 0) {
        return 0;
    }
    a = ss.ss_family == AF_INET6
        ? (const void *) &((struct sockaddr_in6 *) &ss)->sin6_addr
        : (const void *) &((struct sockaddr_in *) &ss)->sin_addr;
    if ((ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
        || inet_ntop(ss.ss_family, a, text, sizeof(text)) == NULL)
    {
        return 0;
    }
    return gn_binlog_escape(p, (u_char *) text, strlen(text), esc);
}


static size_t
gn_access_log_str(gn_http_request_t *r, gn_log_op_t *op, u_char *p,
    gn_uint_t esc)
{
    gn_str_t          v[4], *s, none = gn_null_string;
    struct sockaddr  *sa;
    u_char            lower[256];
    size_t            n;

    s = &none;

    switch (op->var) {

    case GN_LV_REMOTE_ADDR:
        v[0] = gn_http_peer_text(r);
        s = &v[0];
        break;
    case GN_LV_TLS_CLIENT_VERIFY:
    case GN_LV_TLS_CLIENT_S_DN:
    case GN_LV_TLS_CLIENT_I_DN:
    case GN_LV_TLS_CLIENT_SERIAL:
    case GN_LV_TLS_CLIENT_FINGERPRINT:
        v[0] = gn_tls_client(r->c, op->var - GN_LV_TLS_CLIENT_VERIFY);
        s = &v[0];
        break;
    case GN_LV_BINARY_REMOTE_ADDR:
        /* 4 or 16 bytes, the key of limit_req_zone and limit_conn_zone */
        sa = gn_http_peer(r);
        if (sa->sa_family == AF_INET) {
            v[0].data = (u_char *) &((struct sockaddr_in *) sa)->sin_addr;
            v[0].len = 4;
            s = &v[0];
        } else if (sa->sa_family == AF_INET6) {
            v[0].data = (u_char *) &((struct sockaddr_in6 *) sa)->sin6_addr;
            v[0].len = 16;
            s = &v[0];
        }
        break;
    case GN_LV_REALIP_REMOTE_ADDR:
        v[0].data = (u_char *) r->c->addr_text;
        v[0].len = r->c->addr_len;
        s = &v[0];
        break;
    case GN_LV_PROXY_PROTOCOL_ADDR:
        if (r->c->proxy != NULL) {
            v[0].data = (u_char *) r->c->proxy->src_text;
            v[0].len = r->c->proxy->src_len;
            s = &v[0];
        }
        break;
    case GN_LV_UPSTREAM_ADDR:
    case GN_LV_UPSTREAM_STATUS:
    case GN_LV_UPSTREAM_RESPONSE_TIME:
    case GN_LV_UPSTREAM_CONNECT_TIME:
        return gn_access_log_tries(r->upstream, op->var, p, esc);
    case GN_LV_PROXY_HOST:
    case GN_LV_FASTCGI_SCRIPT_NAME:
    case GN_LV_FASTCGI_PATH_INFO:
        if (r->upstream != NULL) {
            s = &r->upstream->host + (op->var - GN_LV_PROXY_HOST);
        }
        break;
    case GN_LV_PROXY_ADD_X_FORWARDED_FOR:
        return gn_access_log_xff(r, p, esc);
    case GN_LV_CONTENT_LENGTH:
        /* a body passed upstream: its length as read (chunked too) */
        if (r->upstream != NULL && r->upstream->body_length >= 0) {
            n = (size_t) snprintf((char *) lower, sizeof(lower), "%lld",
                                  (long long) r->upstream->body_length);
            return gn_binlog_escape(p, lower, n, esc);
        } else {
            static const gn_str_t  cl = gn_string("content_length");

            s = gn_access_log_header(r, &cl);
            s = s ? s : &none;
        }
        break;
    case GN_LV_DOCUMENT_ROOT:
    case GN_LV_REQUEST_FILENAME:
        /* nginx's: with alias, the directory its files come from */
        if (gn_http_file_map(r, &r->uri, &v[0], &v[1]) == GN_ERROR) {
            return 0;
        }
        n = gn_binlog_escape(p, v[0].data, v[0].len, esc);
        if (op->var == GN_LV_DOCUMENT_ROOT) {
            return n;
        }
        return n + gn_binlog_escape(p ? p + n : NULL, v[1].data, v[1].len,
                                    esc);
    case GN_LV_HTTPS:
        if (r->c->tls != NULL) {
            gn_str_set(&v[0], "on");
            s = &v[0];
        }
        break;
    case GN_LV_SERVER_ADDR:
        return gn_access_log_server_addr(r, p, esc);
    case GN_LV_GANNET_VERSION:
        gn_str_set(&v[0], PACKAGE_VERSION);
        s = &v[0];
        break;
    case GN_LV_REQUEST:
        return gn_access_log_request_line(r, p, esc);
    case GN_LV_REQUEST_METHOD:
        s = &r->head.method_name;
        break;
    case GN_LV_URI:
        s = &r->uri;
        break;
    case GN_LV_REQUEST_URI:
        s = &r->head.target;
        break;
    case GN_LV_ARGS:
        s = &r->head.query;
        break;
    case GN_LV_HTTP_REFERER:
        s = &r->head.referer;
        break;
    case GN_LV_HTTP_USER_AGENT:
        s = &r->head.user_agent;
        break;
    case GN_LV_HOST:
        v[0] = gn_http_request_host(r);
        if (v[0].len <= sizeof(lower)) {     /* longer: no DNS name */
            (void) gn_strlow(lower, v[0].data, v[0].len);
            v[0].data = lower;
        }
        s = &v[0];
        break;
    case GN_LV_HTTP_HEADER:
        s = gn_access_log_header(r, &op->text);
        s = s ? s : &none;
        break;
    case GN_LV_SENT_CONTENT_TYPE:
        s = &r->content_type;
        break;
    case GN_LV_MODULE_LOG:
        s = &r->module_log;
        break;
    case GN_LV_SCHEME:
        gn_str_set(&v[0], "http");
        if (r->c->tls != NULL) {
            gn_str_set(&v[0], "https");
        }
        s = &v[0];
        break;
    case GN_LV_SERVER_NAME:
        if (r->srv != NULL && r->srv->names != NULL
            && r->srv->names->nelts > 0)
        {
            s = r->srv->names->elts;
        }
        break;
    case GN_LV_SERVER_PROTOCOL:
        if (r->head.version == GN_HTTP_VERSION_10) {
            gn_str_set(&v[0], "HTTP/1.0");
            s = &v[0];
        } else if (r->head.version == GN_HTTP_VERSION_11) {
            gn_str_set(&v[0], "HTTP/1.1");
            s = &v[0];
        } else if (r->head.version == GN_HTTP_VERSION_20) {
            gn_str_set(&v[0], "HTTP/2.0");
            s = &v[0];
        }
        break;
    case GN_LV_HTTP2:
        /* as nginx's: "h2" over TLS, "h2c" in the clear, else empty */
        if (r->head.version == GN_HTTP_VERSION_20) {
            if (r->c->tls != NULL) {
                gn_str_set(&v[0], "h2");
            } else {
                gn_str_set(&v[0], "h2c");
            }
            s = &v[0];
        }
        break;
    case GN_LV_TLS_PROTOCOL:
    case GN_LV_TLS_CIPHER:
    case GN_LV_TLS_RESUMED:
    case GN_LV_TLS_SNI:
        gn_tls_conn_info(r->c, &v[0], &v[1], &v[2], &v[3]);
        s = &v[op->var - GN_LV_TLS_PROTOCOL];
        break;
    default:
        break;
    }

    return gn_binlog_escape(p, s->data, s->len, esc);
}


static in_port_t
gn_access_log_port(const void *sa)
{
    const struct sockaddr  *s = sa;

    if (s->sa_family == AF_INET6) {
        return ntohs(((const struct sockaddr_in6 *) sa)->sin6_port);
    }
    if (s->sa_family == AF_INET) {
        return ntohs(((const struct sockaddr_in *) sa)->sin_port);
    }
    return 0;
}


/* A port, or "-" (0 bytes here) when there is none: a client address
 * from a header has no port. */
static size_t
gn_access_log_port_text(const void *sa, char *num, size_t size)
{
    unsigned  port = gn_access_log_port(sa);

    return port != 0 ? (size_t) snprintf(num, size, "%u", port) : 0;
}


/* Numbers and times: never escaped. Returns 0 for string variables. */
static size_t
gn_access_log_num(gn_http_request_t *r, gn_uint_t var, char *num,
    size_t size)
{
    struct timespec  ts;
    gn_msec_t        ms;
    off_t            body;

    body = r->bytes_sent - r->header_bytes;

    switch (var) {
    case GN_LV_TIME_LOCAL:
        return snprintf(num, size, "%.*s", GN_STR_ARG(&gn_log_time_local));
    case GN_LV_TIME_ISO8601:
        return snprintf(num, size, "%.*s", GN_STR_ARG(&gn_log_time_iso));
    case GN_LV_STATUS:
        return snprintf(num, size, "%03u", (unsigned) r->status);
    case GN_LV_BODY_BYTES_SENT:
        return snprintf(num, size, "%lld", (long long) gn_max(body, 0));
    case GN_LV_BYTES_SENT:
        return snprintf(num, size, "%lld", (long long) r->bytes_sent);
    case GN_LV_REQUEST_TIME:
        ms = gn_current_msec - r->start_msec;
        return snprintf(num, size, "%llu.%03llu",
                        (unsigned long long) ms / 1000,
                        (unsigned long long) ms % 1000);
    case GN_LV_MSEC:
        clock_gettime(CLOCK_REALTIME, &ts);
        return snprintf(num, size, "%lld.%03ld", (long long) ts.tv_sec,
                        ts.tv_nsec / 1000000);
    case GN_LV_PID:
        return snprintf(num, size, "%d", (int) getpid());
    case GN_LV_CONNECTION_REQUESTS:
        return snprintf(num, size, "%u",
                        (unsigned) r->conn_requests);
    case GN_LV_REMOTE_PORT:
        return gn_access_log_port_text(gn_http_peer(r), num, size);
    case GN_LV_REALIP_REMOTE_PORT:
        return gn_access_log_port_text(&r->c->peer, num, size);
    case GN_LV_PROXY_PROTOCOL_PORT:
        return r->c->proxy != NULL
               ? gn_access_log_port_text(&r->c->proxy->src, num, size) : 0;
    case GN_LV_SERVER_PORT:
        return snprintf(num, size, "%u",
                        (unsigned) gn_access_log_port(&r->c->listen->sa));
    case GN_LV_REQUEST_LENGTH:
        return snprintf(num, size, "%zu", r->head_len);
    case GN_LV_STREAM_ID:
        return snprintf(num, size, "%u", (unsigned) r->stream_id);
    default:
        return 0;
    }
}


/* Copies (or measures, p == NULL) one part of a line. */
static size_t
gn_access_log_op(gn_http_request_t *r, gn_log_op_t *op, u_char *p,
    gn_uint_t esc)
{
    char    num[64];
    size_t  n;

    if (op->var == GN_LV_TEXT) {
        if (p != NULL) {
            memcpy(p, op->text.data, op->text.len);
        }
        return op->text.len;
    }

    if (op->var == GN_LV_REMOTE_USER) {
        return gn_binlog_escape(p, NULL, 0, esc);
    }

    n = gn_access_log_num(r, op->var, num, sizeof(num));
    if (n == 0) {
        return gn_access_log_str(r, op, p, esc);
    }

    n = gn_min(n, sizeof(num) - 1);
    if (p != NULL) {
        memcpy(p, num, n);
    }
    return n;
}


size_t
gn_access_log_render(gn_http_request_t *r, const gn_log_format_t *fmt,
    u_char *p)
{
    gn_log_op_t  *op = fmt->ops.elts;
    gn_uint_t     i;
    size_t        n = 0;

    for (i = 0; i < fmt->ops.nelts; i++) {
        n += gn_access_log_op(r, &op[i], p ? p + n : NULL, fmt->escape);
    }

    return n;
}


/* ---- binary records ---------------------------------------------------- */


static void
gn_access_log_addr(const struct sockaddr *sa, u_char *addr)
{
    memset(addr, 0, 16);

    if (sa->sa_family == AF_INET6) {
        memcpy(addr, &((const struct sockaddr_in6 *) sa)->sin6_addr, 16);
    } else if (sa->sa_family == AF_INET) {
        addr[10] = addr[11] = 0xff;
        memcpy(addr + 12, &((const struct sockaddr_in *) sa)->sin_addr, 4);
    }
}


static void
gn_access_log_binrec(gn_http_request_t *r, gn_binlog_rec_t *rec)
{
    gn_http_head_t   *h = &r->head;
    struct timespec   ts;
    gn_str_t          v[4];
    off_t             body;

    memset(rec, 0, sizeof(*rec));

    /* the second of the text logs' $time_local, with its milliseconds */
    clock_gettime(CLOCK_REALTIME, &ts);
    rec->sec = gn_current_sec;
    rec->msec = ts.tv_sec == gn_current_sec ? ts.tv_nsec / 1000000
                : (ts.tv_sec > gn_current_sec ? 999 : 0);

    rec->status = (uint16_t) r->status;
    rec->version = h->version == GN_HTTP_VERSION_10 ? 10
                   : h->version == GN_HTTP_VERSION_11 ? 11
                   : h->version == GN_HTTP_VERSION_20 ? 20 : 0;
    gn_access_log_addr(gn_http_peer(r), rec->addr);
    body = r->bytes_sent - r->header_bytes;
    rec->bytes_sent = (uint64_t) r->bytes_sent;
    rec->body_bytes = (uint64_t) gn_max(body, 0);
    rec->request_time = (uint32_t) (gn_current_msec - r->start_msec);
    rec->pid = (uint32_t) getpid();

    if (h->method_name.data != NULL && h->target.data != NULL) {
        rec->method = gn_binlog_method_id(h->method);
        if (rec->method == 0) {
            rec->str[GN_BINLOG_METHOD] = h->method_name;
        }
        rec->str[GN_BINLOG_TARGET] = h->target;
    }
    rec->str[GN_BINLOG_HOST] = h->host;
    rec->str[GN_BINLOG_REFERER] = h->referer;
    rec->str[GN_BINLOG_USER_AGENT] = h->user_agent;

    if (r->c->tls != NULL) {
        gn_tls_conn_info(r->c, &v[0], &v[1], &v[2], &v[3]);
        rec->tls = gn_str_eq(&v[0], "TLSv1.2") ? GN_BINLOG_TLS_12
                   : gn_str_eq(&v[0], "TLSv1.3") ? GN_BINLOG_TLS_13
                   : GN_BINLOG_TLS_OTHER;
        if (gn_str_eq(&v[2], "r")) {
            rec->tls |= GN_BINLOG_TLS_RESUMED;
        }
    }
}


/* ---- buffers and writes ------------------------------------------------ */


/*
 * Child: one write(2) of whole lines. A failure is logged only when it
 * starts an episode (the first failure after a good write, or ever), so
 * a full disk costs one [crit] line per child and file, not one per
 * request; the first good write after it says how many were lost.
 */
static void
gn_access_log_write_fd(gn_access_file_t *af, u_char *p, size_t len)
{
    ssize_t  n;
    int      err, level;

    n = write(af->file->fd, p, len);

    if (n == (ssize_t) len) {
        if (af->lost) {
            gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0,
                         "writes to \"%s\" succeed again, %lu lost",
                         (char *) af->file->name.data,
                         (unsigned long) af->lost);
            af->lost = 0;
        }
        return;
    }

    if (af->lost++ > 0) {
        return;
    }

    err = (n == -1) ? errno : 0;

    /* a full disk or quota is resource exhaustion; anything else is odd */
    level = (err == 0 || err == ENOSPC || err == EDQUOT || err == EFBIG)
            ? GN_LOG_CRIT : GN_LOG_ALERT;

    gn_log_error(level, &gn_cycle->log, err,
                 "write() of %zu bytes to \"%s\" failed or was short, "
                 "lines are lost until a write succeeds",
                 len, (char *) af->file->name.data);
}


static void
gn_access_log_flush(gn_access_file_t *af)
{
    if (af->len > 0) {
        gn_access_log_write_fd(af, af->buf, af->len);
        af->len = 0;
    }

    if (gn_timer_is_set(&af->timer)) {
        gn_timer_del(&af->timer);
    }
}


static void
gn_access_log_flush_timer(gn_timer_t *t)
{
    gn_access_log_flush(t->data);
}


/* Room for len more bytes in af's buffer, or NULL: write it alone. */
static u_char *
gn_access_log_reserve(gn_access_file_t *af, size_t len)
{
    if (af->size == 0 || len > af->size) {
        return NULL;
    }

    if (af->buf == NULL) {
        af->buf = malloc(af->size);
        if (af->buf == NULL) {
            gn_log_error(GN_LOG_CRIT, &gn_cycle->log, errno,
                         "malloc(%zu) failed, \"%s\" unbuffered", af->size,
                         (char *) af->file->name.data);
            af->size = 0;
            return NULL;
        }
        af->len = 0;
        gn_timer_init_node(&af->timer, gn_access_log_flush_timer, af);
        af->next = gn_access_files;
        gn_access_files = af;
    }

    if (af->len + len > af->size) {
        gn_access_log_flush(af);
    }

    if (af->len == 0 && af->flush) {
        gn_timer_set(&af->timer, af->flush);
    }

    return af->buf + af->len;
}


static void
gn_access_log_binary(gn_http_request_t *r, gn_access_file_t *af)
{
    gn_binlog_rec_t   rec;
    u_char           *p;
    size_t            len;

    gn_access_log_binrec(r, &rec);
    len = gn_binlog_size(&rec);

    p = gn_access_log_reserve(af, len);
    if (p != NULL) {
        (void) gn_binlog_encode(p, &rec);
        af->len += len;
        return;
    }

    p = gn_pnalloc(r->pool, len);
    if (p != NULL) {
        (void) gn_binlog_encode(p, &rec);
        gn_access_log_write_fd(af, p, len);
    }
}


static void
gn_access_log_text(gn_http_request_t *r, gn_access_log_t *al)
{
    gn_log_format_t  *fmt = al->format;
    gn_log_op_t      *op;
    gn_uint_t         i, buffered;
    size_t            len;
    u_char           *line, *p;

    op = fmt->ops.elts;
    len = 1;
    for (i = 0; i < fmt->ops.nelts; i++) {
        len += gn_access_log_op(r, &op[i], NULL, fmt->escape);
    }

    line = gn_access_log_reserve(al->af, len);
    buffered = (line != NULL);
    if (line == NULL) {
        line = gn_pnalloc(r->pool, len);
        if (line == NULL) {
            return;
        }
    }

    p = line;
    for (i = 0; i < fmt->ops.nelts; i++) {
        p += gn_access_log_op(r, &op[i], p, fmt->escape);
    }
    *p++ = '\n';

    if (buffered) {
        al->af->len += (size_t) (p - line);
    } else {
        gn_access_log_write_fd(al->af, line, (size_t) (p - line));
    }
}


void
gn_access_log_request(gn_http_request_t *r)
{
    gn_access_log_conf_t  *alc;
    gn_access_log_t       *al;
    gn_uint_t              i;

    alc = gn_access_log_conf(r->loc);
    if (alc->logs == NULL || alc->off == 1) {
        return;
    }

    al = alc->logs->elts;
    for (i = 0; i < alc->logs->nelts; i++) {
        if (al[i].af->binary) {
            gn_access_log_binary(r, al[i].af);
        } else {
            gn_access_log_text(r, &al[i]);
        }
    }
}


void
gn_access_log_flush_all(void)
{
    gn_access_file_t  *af;

    for (af = gn_access_files; af != NULL; af = af->next) {
        gn_access_log_flush(af);
    }
}


static void
gn_access_log_files_opened(gn_cycle_t *cycle)
{
    gn_open_file_t    **files;
    gn_access_file_t   *af;
    struct stat         st;
    u_char              hdr[GN_BINLOG_HEADER_SIZE];
    gn_uint_t           i;

    files = cycle->open_files.elts;
    for (i = 0; i < cycle->open_files.nelts; i++) {
        af = files[i]->data;
        if (af == NULL || !af->binary || files[i]->fd == -1) {
            continue;
        }
        if (fstat(files[i]->fd, &st) == -1 || st.st_size != 0) {
            continue;
        }
        gn_binlog_header(hdr);
        if (write(files[i]->fd, hdr, sizeof(hdr)) != (ssize_t) sizeof(hdr)) {
            gn_log_error(GN_LOG_ALERT, &cycle->log, errno,
                         "write() of the header of \"%s\" failed",
                         (char *) files[i]->name.data);
        }
    }
}


/* ---- the feature -------------------------------------------------------- */

static const gn_conf_cmd_t  gn_access_log_commands[] = {

    { gn_string("log_format"), GN_CONF_MAIN | GN_CONF_2MORE,
      gn_access_log_format_directive, GN_CONF_LOC_CONF, 0, NULL, NULL },
    { gn_string("access_log"), GN_CONF_ANY | GN_CONF_1MORE,
      gn_access_log_directive, GN_CONF_LOC_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


static gn_int_t
gn_access_log_create_conf(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    (void) cf;

    gn_access_log_conf(lc)->off = GN_CONF_UNSET;
    return GN_OK;
}


/*
 * As nginx: without an access_log at the top level, the default one -- but
 * only when some server uses it: a configuration whose every server says
 * `access_log off` opens no default log file. (The main level is merged
 * first, so the servers' levels are still as written.)
 */
static gn_int_t
gn_access_log_default(gn_conf_t *cf, gn_cycle_t *cycle)
{
    char                   dflt[PATH_MAX + 64];
    int                    n;
    gn_uint_t              i, used;
    gn_srv_conf_t        **srv;
    gn_access_log_conf_t  *alc;

    alc = gn_access_log_conf(cycle->main_loc);
    if (alc->logs != NULL || alc->off != GN_CONF_UNSET) {
        return GN_OK;
    }

    used = 0;
    srv = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        alc = gn_access_log_conf(srv[i]->loc);
        if (alc->logs == NULL && alc->off == GN_CONF_UNSET) {
            used = 1;
        }
    }
    if (!used) {
        return GN_OK;
    }

    n = snprintf(dflt, sizeof(dflt), "access_log \"%s\" combined;",
                 cycle->paths->access_log);
    if (n < 0 || (size_t) n >= sizeof(dflt)) {
        return GN_ERROR;
    }
    return gn_conf_parse_string(cf, "(default)", (const u_char *) dflt,
                                (size_t) n);
}


static gn_int_t
gn_access_log_merge_conf(gn_conf_t *cf, gn_loc_conf_t *lc,
    gn_loc_conf_t *prev)
{
    gn_access_log_conf_t  *alc = gn_access_log_conf(lc), *palc;

    if (prev == NULL) {
        return gn_access_log_default(cf, cf->data);
    }

    palc = gn_access_log_conf(prev);
    if (alc->logs == NULL && alc->off == GN_CONF_UNSET) {
        alc->logs = palc->logs;
        alc->off = palc->off;
    }

    return GN_OK;
}


static gn_int_t
gn_access_log_open_cycle(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    (void) old;
    (void) log;

    gn_access_log_files_opened(cycle);
    return GN_OK;
}


static void
gn_access_log_reopen(gn_cycle_t *cycle, uid_t owner)
{
    (void) owner;

    gn_access_log_files_opened(cycle);
}


const gn_feature_t  gn_access_log_feature = {
    .name = "access_log", .commands = gn_access_log_commands,
    .conf_size = sizeof(gn_access_log_conf_t),
    .create_conf = gn_access_log_create_conf,
    .merge_conf = gn_access_log_merge_conf,
    .open_cycle = gn_access_log_open_cycle,
    .reopen = gn_access_log_reopen
};
