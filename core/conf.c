/*
 * Configuration parser: nginx's syntax, read from memory.
 *
 * A file is read whole into a malloc()ed buffer (configurations are small;
 * the size is bounded) and tokenized in place; every argument is copied,
 * unescaped and NUL-terminated, into cf->pool, so handlers may keep
 * pointers to it. Blocks are parsed by recursion through the handlers: the
 * engine calls a GN_CONF_BLOCK directive's handler at its "{" and the
 * handler calls gn_conf_parse(cf, NULL), which returns at the matching "}".
 *
 * Pure layer: nothing here logs. The first error stops parsing and leaves
 * the complete message, with " in FILE:LINE", in cf->err.
 *
 * Master only (and "gannet -t"), single-threaded: strerror() and glob()
 * are used freely.
 */

#include "gn_config.h"

#include <glob.h>

#include "conf.h"


#define GN_CONF_MAX_TOKEN     65536
#define GN_CONF_MAX_FILE      (16 * 1024 * 1024)
#define GN_CONF_MAX_INCLUDES  16

/* gn_conf_read_token() results besides GN_OK (";") and GN_ERROR */
#define GN_CONF_BLOCK_START   1
#define GN_CONF_BLOCK_DONE    2
#define GN_CONF_FILE_DONE     3

/* what gn_conf_parse_buf() stops at */
#define GN_CONF_PARSE_FILE    0
#define GN_CONF_PARSE_BLOCK   1

/* every arity bit: a directive with none of them takes no arguments */
#define GN_CONF_ARGS_MASK                                                     \
    (GN_CONF_NOARGS | GN_CONF_TAKE1234 | GN_CONF_1MORE | GN_CONF_2MORE        \
     | GN_CONF_FLAG)

#define GN_CONF_DUPLICATE     (char *) "is duplicate"


typedef struct gn_conf_buf_s  gn_conf_buf_t;

struct gn_conf_buf_s {
    const u_char  *pos;
    const u_char  *end;
    gn_uint_t      block_pending;  /* "{" seen, its handler has not yet */
                                   /* called gn_conf_parse(cf, NULL) */
};


gn_conf_dump_pt  gn_conf_dump;


static u_char *gn_conf_read_file(gn_conf_t *cf, const char *filename,
    size_t *lenp);
static gn_int_t gn_conf_parse_buf(gn_conf_t *cf, gn_uint_t mode);
static gn_int_t gn_conf_read_token(gn_conf_t *cf);
static gn_int_t gn_conf_read_word(gn_conf_t *cf);
static gn_int_t gn_conf_read_quoted(gn_conf_t *cf);
static gn_int_t gn_conf_push_arg(gn_conf_t *cf, const u_char *src,
    size_t len);
static gn_int_t gn_conf_include(gn_conf_t *cf, gn_int_t last);
static gn_int_t gn_conf_call_handler(gn_conf_t *cf, gn_int_t last);
static gn_int_t gn_conf_handle(gn_conf_t *cf, gn_int_t last);
static gn_int_t gn_conf_check_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    gn_int_t last);


/*
 * Only the parser's own state is set (and ctx, to the main context): the
 * caller may have filled other fields (temp_pool, tables, prefixes,
 * conf[]) before, and zeroes the struct itself.
 */
gn_int_t
gn_conf_init(gn_conf_t *cf, gn_pool_t *pool)
{
    cf->pool = pool;
    cf->ctx = GN_CONF_MAIN;
    cf->file = NULL;
    cf->buf = NULL;
    cf->include_depth = 0;
    cf->err[0] = '\0';

    cf->args = gn_array_create(pool, 8, sizeof(gn_str_t));
    if (cf->args == NULL) {
        gn_conf_error(cf, "out of memory");
        return GN_ERROR;
    }

    return GN_OK;
}


gn_int_t
gn_conf_parse(gn_conf_t *cf, const char *filename)
{
    u_char    *text;
    size_t     len;
    gn_int_t   rc;

    if (filename == NULL) {
        if (cf->buf == NULL || !cf->buf->block_pending) {
            gn_conf_error(cf, "block parsed outside of a block directive");
            return GN_ERROR;
        }

        cf->buf->block_pending = 0;

        return gn_conf_parse_buf(cf, GN_CONF_PARSE_BLOCK);
    }

    /* open and read errors are reported at the "include" that asked */
    text = gn_conf_read_file(cf, filename, &len);
    if (text == NULL) {
        return GN_ERROR;
    }

    if (gn_conf_dump != NULL) {
        gn_conf_dump(filename, text, len);
    }

    rc = gn_conf_parse_string(cf, filename, text, len);

    free(text);

    return rc;
}


gn_int_t
gn_conf_parse_lines(gn_conf_t *cf, gn_conf_handler_pt handler, void *data)
{
    gn_conf_handler_pt   saved = cf->handler;
    void                *saved_data = cf->handler_data;
    gn_int_t             rc;

    cf->handler = handler;
    cf->handler_data = data;

    rc = gn_conf_parse(cf, NULL);

    cf->handler = saved;
    cf->handler_data = saved_data;

    return rc;
}


gn_int_t
gn_conf_parse_string(gn_conf_t *cf, const char *name, const u_char *text,
    size_t len)
{
    gn_int_t         rc;
    gn_str_t         src;
    gn_conf_buf_t    buf, *prev_buf;
    gn_conf_file_t  *file, *prev_file;

    /* in the pool, not on the stack: a handler may keep cf->file */
    file = gn_palloc(cf->pool, sizeof(gn_conf_file_t));
    if (file == NULL) {
        gn_conf_error(cf, "out of memory");
        return GN_ERROR;
    }

    if (name == NULL) {
        name = "(string)";
    }

    src.len = strlen(name);
    src.data = (u_char *) name;

    if (gn_pstrdup(cf->pool, &src, &file->name) == NULL) {
        gn_conf_error(cf, "out of memory");
        return GN_ERROR;
    }

    file->line = 1;

    if (text == NULL) {
        text = (const u_char *) "";
        len = 0;
    }

    buf.pos = text;
    buf.end = text + len;
    buf.block_pending = 0;

    prev_file = cf->file;
    prev_buf = cf->buf;
    cf->file = file;
    cf->buf = &buf;

    rc = gn_conf_parse_buf(cf, GN_CONF_PARSE_FILE);

    cf->file = prev_file;
    cf->buf = prev_buf;

    return rc;
}


/*
 * Reads a whole file into a malloc()ed buffer the caller frees. Returns
 * NULL with cf->err filled (at the current file's line: the "include").
 */
static u_char *
gn_conf_read_file(gn_conf_t *cf, const char *filename, size_t *lenp)
{
    int           fd, err;
    u_char       *buf, *p;
    size_t        len, size;
    ssize_t       n;
    struct stat   st;

    fd = open(filename, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        err = errno;
        gn_conf_error(cf, "open() \"%s\" failed (%d: %s)",
                      filename, err, strerror(err));
        return NULL;
    }

    buf = NULL;
    size = 4096;

    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if (st.st_size > GN_CONF_MAX_FILE) {
            goto too_large;
        }

        size = (size_t) st.st_size + 1;
    }

    buf = malloc(size);
    if (buf == NULL) {
        goto no_memory;
    }

    len = 0;

    for ( ;; ) {
        if (len == size) {
            if (size > GN_CONF_MAX_FILE) {
                goto too_large;
            }

            size = gn_min(size * 2, (size_t) GN_CONF_MAX_FILE + 1);

            p = realloc(buf, size);
            if (p == NULL) {
                goto no_memory;
            }

            buf = p;
        }

        n = read(fd, buf + len, size - len);

        if (n == -1) {
            err = errno;
            if (err == EINTR) {
                continue;
            }

            gn_conf_error(cf, "read() \"%s\" failed (%d: %s)",
                          filename, err, strerror(err));
            goto failed;
        }

        if (n == 0) {
            break;
        }

        len += (size_t) n;
    }

    close(fd);

    *lenp = len;
    return buf;

too_large:

    gn_conf_error(cf, "\"%s\" is too large (more than %d bytes)",
                  filename, GN_CONF_MAX_FILE);
    goto failed;

no_memory:

    gn_conf_error(cf, "out of memory reading \"%s\"", filename);

failed:

    free(buf);
    close(fd);

    return NULL;
}


/*
 * The directive loop. PARSE_FILE ends at the end of the input and refuses
 * "}"; PARSE_BLOCK ends at the "}" closing the block and refuses the end
 * of the input (a block never spans files).
 */
static gn_int_t
gn_conf_parse_buf(gn_conf_t *cf, gn_uint_t mode)
{
    gn_int_t   rc;
    gn_str_t  *name;

    for ( ;; ) {
        rc = gn_conf_read_token(cf);

        if (rc == GN_ERROR) {
            return GN_ERROR;
        }

        if (rc == GN_CONF_FILE_DONE) {
            if (mode == GN_CONF_PARSE_BLOCK) {
                gn_conf_error(cf, "unexpected end of file, expecting \"}\"");
                return GN_ERROR;
            }

            return GN_OK;
        }

        if (rc == GN_CONF_BLOCK_DONE) {
            if (mode == GN_CONF_PARSE_FILE) {
                gn_conf_error(cf, "unexpected \"}\"");
                return GN_ERROR;
            }

            return GN_OK;
        }

        /* GN_OK (";") or GN_CONF_BLOCK_START, with at least one word */

        name = cf->args->elts;

        if (gn_str_eq(name, "include")) {
            rc = gn_conf_include(cf, rc);

        } else if (cf->scan != NULL) {
            cf->scan(cf, cf->scan_depth);
            if (rc == GN_CONF_BLOCK_START) {
                cf->scan_depth++;
                rc = gn_conf_parse_buf(cf, GN_CONF_PARSE_BLOCK);
                cf->scan_depth--;
            } else {
                rc = GN_OK;
            }

        } else if (cf->handler != NULL) {
            rc = gn_conf_call_handler(cf, rc);

        } else {
            rc = gn_conf_handle(cf, rc);
        }

        if (rc != GN_OK) {
            return GN_ERROR;
        }
    }
}


/*
 * Collects the words of one directive into cf->args. Returns GN_OK at ";",
 * GN_CONF_BLOCK_START at "{", GN_CONF_BLOCK_DONE at a "}" that is not
 * inside a directive, GN_CONF_FILE_DONE at the end of input between
 * directives, or GN_ERROR. cf->file->line counts every LF passed, so it is
 * the line of the terminating token on return.
 */
static gn_int_t
gn_conf_read_token(gn_conf_t *cf)
{
    gn_conf_buf_t  *b;

    b = cf->buf;
    cf->args->nelts = 0;

    for ( ;; ) {

        if (b->pos == b->end) {
            if (cf->args->nelts > 0) {
                gn_conf_error(cf, "unexpected end of file, "
                              "expecting \";\" or \"}\"");
                return GN_ERROR;
            }

            return GN_CONF_FILE_DONE;
        }

        switch (*b->pos) {

        case '\n':
            cf->file->line++;
            /* fall through */

        case ' ':
        case '\t':
        case '\r':
            b->pos++;
            break;

        case '#':
            while (b->pos < b->end && *b->pos != '\n') {
                b->pos++;
            }
            break;

        case ';':
            b->pos++;

            if (cf->args->nelts == 0) {
                gn_conf_error(cf, "unexpected \";\"");
                return GN_ERROR;
            }

            return GN_OK;

        case '{':
            b->pos++;

            if (cf->args->nelts == 0) {
                gn_conf_error(cf, "unexpected \"{\"");
                return GN_ERROR;
            }

            return GN_CONF_BLOCK_START;

        case '}':
            b->pos++;

            if (cf->args->nelts > 0) {
                gn_conf_error(cf, "unexpected \"}\"");
                return GN_ERROR;
            }

            return GN_CONF_BLOCK_DONE;

        case '"':
        case '\'':
            if (gn_conf_read_quoted(cf) != GN_OK) {
                return GN_ERROR;
            }
            break;

        default:
            if (gn_conf_read_word(cf) != GN_OK) {
                return GN_ERROR;
            }
            break;
        }
    }
}


/*
 * An unquoted word ends at white space, ";" or "{" (but "${" stays in the
 * word, for "${name}"); a backslash takes the next byte into the word. As
 * in nginx, "#", quotes and "}" inside a word are ordinary bytes.
 */
static gn_int_t
gn_conf_read_word(gn_conf_t *cf)
{
    const u_char   *start, *p;
    gn_conf_buf_t  *b;

    b = cf->buf;
    start = b->pos;

    for (p = start; p < b->end; p++) {

        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'
            || *p == ';')
        {
            break;
        }

        if (*p == '{' && !(p > start && p[-1] == '$')) {
            break;
        }

        if (*p == '\\' && p + 1 < b->end) {
            p++;

            if (*p == '\n') {
                cf->file->line++;
            }
        }

        if (*p == '\0') {
            b->pos = p;
            gn_conf_error(cf, "unexpected NUL byte");
            return GN_ERROR;
        }

        if (p - start >= GN_CONF_MAX_TOKEN) {
            b->pos = p;
            gn_conf_error(cf, "too long parameter \"%.32s...\"",
                          (const char *) start);
            return GN_ERROR;
        }
    }

    b->pos = p;

    return gn_conf_push_arg(cf, start, (size_t) (p - start));
}


/*
 * A quoted string is one argument, possibly empty, and may span lines; the
 * closing quote must end the word.
 */
static gn_int_t
gn_conf_read_quoted(gn_conf_t *cf)
{
    u_char          q;
    const u_char   *start, *p;
    gn_conf_buf_t  *b;

    b = cf->buf;
    q = *b->pos;
    start = b->pos + 1;

    for (p = start; /* void */; p++) {

        if (p == b->end) {
            b->pos = p;
            gn_conf_error(cf, "unterminated quoted string");
            return GN_ERROR;
        }

        if (*p == q) {
            break;
        }

        if (*p == '\\' && p + 1 < b->end) {
            p++;
        }

        if (*p == '\n') {
            cf->file->line++;

        } else if (*p == '\0') {
            b->pos = p;
            gn_conf_error(cf, "unexpected NUL byte");
            return GN_ERROR;
        }

        if (p - start >= GN_CONF_MAX_TOKEN) {
            b->pos = p;
            gn_conf_error(cf, "too long parameter, probably missing "
                          "terminating '%c' character", q);
            return GN_ERROR;
        }
    }

    b->pos = p + 1;

    if (b->pos < b->end) {
        switch (*b->pos) {
        case ' ': case '\t': case '\r': case '\n':
        case ';': case '{': case '}':
            break;

        case '\0':
            /* "%c" of a NUL would cut the message before " in FILE:LINE" */
            gn_conf_error(cf, "unexpected NUL byte");
            return GN_ERROR;

        default:
            gn_conf_error(cf, "unexpected \"%c\"", *b->pos);
            return GN_ERROR;
        }
    }

    return gn_conf_push_arg(cf, start, (size_t) (p - start));
}


/*
 * Copies a word into cf->pool, NUL-terminated, replacing \" \' \\ \n \t
 * \r; any other backslash pair is kept as is, so regular expressions such
 * as "\d+\.html" survive.
 */
static gn_int_t
gn_conf_push_arg(gn_conf_t *cf, const u_char *src, size_t len)
{
    u_char        *dst;
    gn_str_t      *arg;
    const u_char  *end;

    arg = gn_array_push(cf->args);
    dst = gn_pnalloc(cf->pool, len + 1);

    if (arg == NULL || dst == NULL) {
        gn_conf_error(cf, "out of memory");
        return GN_ERROR;
    }

    arg->data = dst;

    for (end = src + len; src < end; /* void */) {

        if (*src == '\\' && src + 1 < end) {
            switch (src[1]) {
            case '"':
            case '\'':
            case '\\':
                src++;
                break;

            case 'n':
                *dst++ = '\n';
                src += 2;
                continue;

            case 't':
                *dst++ = '\t';
                src += 2;
                continue;

            case 'r':
                *dst++ = '\r';
                src += 2;
                continue;

            default:
                break;
            }
        }

        *dst++ = *src++;
    }

    *dst = '\0';
    arg->len = (size_t) (dst - arg->data);

    return GN_OK;
}


/*
 * include GLOB; -- relative to cf->conf_prefix. A pattern with wildcards
 * may match nothing; a plain name must exist. Files are parsed in sorted
 * order in the current context.
 */
static gn_int_t
gn_conf_include(gn_conf_t *cf, gn_int_t last)
{
    int        rc;
    size_t     i;
    glob_t     gl;
    gn_int_t   rv;
    gn_str_t   name;

    if (last != GN_OK) {
        gn_conf_error(cf, "directive \"include\" is not terminated by \";\"");
        return GN_ERROR;
    }

    if (cf->args->nelts != 2) {
        gn_conf_error(cf, "invalid number of arguments in \"include\" "
                      "directive");
        return GN_ERROR;
    }

    if (cf->include_depth >= GN_CONF_MAX_INCLUDES) {
        gn_conf_error(cf, "too many nested includes");
        return GN_ERROR;
    }

    name = ((gn_str_t *) cf->args->elts)[1];

    if (gn_conf_full_name(cf, &name, 1) != GN_OK) {
        return GN_ERROR;
    }

    cf->include_depth++;

    if (strpbrk((char *) name.data, "*?[") == NULL) {
        rv = gn_conf_parse(cf, (char *) name.data);
        cf->include_depth--;
        return rv;
    }

    rv = GN_OK;

    rc = glob((char *) name.data, 0, NULL, &gl);

    if (rc == 0) {
        for (i = 0; i < gl.gl_pathc; i++) {
            rv = gn_conf_parse(cf, gl.gl_pathv[i]);
            if (rv != GN_OK) {
                break;
            }
        }

    } else if (rc != GLOB_NOMATCH) {
        gn_conf_error(cf, "glob() \"%s\" failed (%s)", (char *) name.data,
                      rc == GLOB_NOSPACE ? "out of memory" : "read error");
        rv = GN_ERROR;
    }

    globfree(&gl);
    cf->include_depth--;

    return rv;
}


/* Raw block lines (e.g. "types"): a handler's message is used as is. */
static gn_int_t
gn_conf_call_handler(gn_conf_t *cf, gn_int_t last)
{
    char  *rv;

    if (last == GN_CONF_BLOCK_START) {
        gn_conf_error(cf, "unexpected \"{\"");
        return GN_ERROR;
    }

    rv = cf->handler(cf, cf->handler_data);

    if (rv == GN_CONF_OK) {
        return GN_OK;
    }

    if (rv != GN_CONF_ERROR) {
        gn_conf_error(cf, "%s", rv);
    }

    return GN_ERROR;
}


typedef struct {
    const char  *name;
    const char  *hint;
} gn_conf_hint_t;


static const char *
gn_conf_hint_find(const gn_conf_hint_t *names, size_t n,
    const gn_str_t *name)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (strlen(names[i].name) == name->len
            && memcmp(names[i].name, name->data, name->len) == 0)
        {
            return names[i].hint;
        }
    }

    return NULL;
}


/*
 * What a configuration written for an earlier Gannet should say instead
 * of a directive that is gone; NULL for any other name.
 */
static const char *
gn_conf_removed_hint(const gn_str_t *name)
{
    static const gn_conf_hint_t  names[] = {
        { "status_allow", "use the core \"allow\" and \"deny\" in the "
                          "location, e.g. \"allow 127.0.0.1; allow ::1; "
                          "deny all;\"" },
    };

    return gn_conf_hint_find(names, gn_nelems(names), name);
}


/*
 * What an nginx user porting a configuration should write instead of an
 * nginx directive that Gannet spells differently or does without; NULL
 * for any other name.
 */
static const char *
gn_conf_nginx_hint(const gn_str_t *name)
{
    static const gn_conf_hint_t  names[] = {
        { "ssl", "use \"listen ... tls\"" },
        { "ssl_certificate", "use \"tls_certificate\"" },
        { "ssl_certificate_key", "use \"tls_certificate_key\"" },
        { "ssl_protocols", "use \"tls_protocols\"" },
        { "ssl_ciphers", "use \"tls_priority\" (a GnuTLS priority "
                         "string)" },
        { "ssl_ecdh_curve", "use \"tls_priority\" (a GnuTLS priority "
                            "string)" },
        { "ssl_prefer_server_ciphers", "the server's order is the "
                                       "default; see \"tls_priority\"" },
        { "ssl_session_cache", "use \"tls_session_cache\"" },
        { "ssl_session_timeout", "use \"tls_session_timeout\"" },
        { "ssl_session_tickets", "use \"tls_session_tickets\"" },
        { "ssl_session_ticket_key", "use \"tls_ticket_key_file\"" },
        { "ssl_stapling_file", "use \"tls_stapling_file\"" },
        { "worker_processes", "use \"children\"" },
        { "worker_connections", "use \"max_connections\" (per child)" },
        { "worker_shutdown_timeout", "use \"shutdown_timeout\"" },
        { "events", "Gannet has no events block; \"worker_connections\" "
                    "is \"max_connections\"" },
        { "http", "Gannet has no http block: write its directives at the "
                  "top level" },
        { "large_client_header_buffers", "use \"client_max_header_size\" "
                                         "and \"client_max_request_line\"" },
        { "autoindex", "not supported yet" },
        { "proxy_pass", "not supported yet" },
        { "fastcgi_pass", "not supported yet" },
    };

    return gn_conf_hint_find(names, gn_nelems(names), name);
}


/*
 * Finds the directive in cf->tables (the first entry of that name allowed
 * in cf->ctx, so several tables may share a name in different contexts),
 * checks it and calls its handler.
 */
static gn_int_t
gn_conf_handle(gn_conf_t *cf, gn_int_t last)
{
    char                  *rv;
    const char            *hint;
    void                  *conf;
    gn_str_t              *name;
    gn_uint_t              found;
    const gn_conf_cmd_t   *cmd, *c, **t;
    gn_uint_t              table;

    name = cf->args->elts;
    found = 0;
    cmd = NULL;
    table = 0;

    for (t = cf->tables; t != NULL && *t != NULL && cmd == NULL; t++) {
        table = (gn_uint_t) (t - cf->tables);
        for (c = *t; c->name.len != 0; c++) {
            if (c->name.len != name->len
                || memcmp(c->name.data, name->data, name->len) != 0)
            {
                continue;
            }

            found = 1;

            if (c->type & cf->ctx) {
                cmd = c;
                break;
            }
        }
    }

    if (cmd == NULL) {
        hint = found ? NULL : gn_conf_removed_hint(name);
        if (hint != NULL) {
            gn_conf_error(cf, "unknown directive \"%.*s\" (removed: %s)",
                          GN_STR_ARG(name), hint);
            return GN_ERROR;
        }

        hint = found ? NULL : gn_conf_nginx_hint(name);
        if (hint != NULL) {
            gn_conf_error(cf, "unknown directive \"%.*s\" (an nginx "
                          "directive: %s)", GN_STR_ARG(name), hint);
        } else {
            gn_conf_error(cf, found ? "\"%.*s\" directive is not allowed "
                                      "here"
                                    : "unknown directive \"%.*s\"",
                          GN_STR_ARG(name));
        }
        return GN_ERROR;
    }

    if (gn_conf_check_cmd(cf, cmd, last) != GN_OK) {
        return GN_ERROR;
    }

    if (cf->conf_of != NULL) {
        conf = cf->conf_of(cf, table, cmd->conf);
    } else {
        conf = cmd->conf < gn_nelems(cf->conf) ? cf->conf[cmd->conf] : NULL;
    }

    if (last == GN_CONF_BLOCK_START) {
        cf->buf->block_pending = 1;
    }

    rv = cmd->set(cf, cmd, conf);

    if (rv == GN_CONF_ERROR) {
        return GN_ERROR;
    }

    if (rv != GN_CONF_OK) {
        gn_conf_error(cf, "\"%.*s\" directive %s", GN_STR_ARG(&cmd->name), rv);
        return GN_ERROR;
    }

    if (last == GN_CONF_BLOCK_START && cf->buf->block_pending) {
        /* a handler bug: the block's contents would leak outwards */
        gn_conf_error(cf, "\"%.*s\" directive handler did not parse its "
                      "block", GN_STR_ARG(&cmd->name));
        return GN_ERROR;
    }

    return GN_OK;
}


static gn_int_t
gn_conf_check_cmd(gn_conf_t *cf, const gn_conf_cmd_t *cmd, gn_int_t last)
{
    gn_uint_t  n, type;

    type = cmd->type;

    if ((type & GN_CONF_BLOCK) && last != GN_CONF_BLOCK_START) {
        gn_conf_error(cf, "directive \"%.*s\" has no opening \"{\"",
                      GN_STR_ARG(&cmd->name));
        return GN_ERROR;
    }

    if (!(type & GN_CONF_BLOCK) && last != GN_OK) {
        gn_conf_error(cf, "directive \"%.*s\" is not terminated by \";\"",
                      GN_STR_ARG(&cmd->name));
        return GN_ERROR;
    }

    n = cf->args->nelts - 1;

    if ((n <= 4 && (type & (GN_CONF_NOARGS << n)))
        || ((type & GN_CONF_1MORE) && n >= 1)
        || ((type & GN_CONF_2MORE) && n >= 2)
        || ((type & GN_CONF_FLAG) && n == 1)
        || ((type & GN_CONF_ARGS_MASK) == 0 && n == 0))
    {
        return GN_OK;
    }

    gn_conf_error(cf, "invalid number of arguments in \"%.*s\" directive",
                  GN_STR_ARG(&cmd->name));

    return GN_ERROR;
}


void
gn_conf_error(gn_conf_t *cf, const char *fmt, ...)
{
    int      n;
    char     at[sizeof(cf->err) / 2];
    size_t   room, atlen;
    va_list  args;

    at[0] = '\0';

    if (cf->file != NULL) {
        snprintf(at, sizeof(at), " in %.*s:%lu", GN_STR_ARG(&cf->file->name),
                 (unsigned long) cf->file->line);
    }

    /* the location survives a long message */
    atlen = strlen(at);
    room = sizeof(cf->err) - atlen;

    va_start(args, fmt);
    n = vsnprintf(cf->err, room, fmt, args);
    va_end(args);

    if (n < 0) {
        n = 0;

    } else if ((size_t) n >= room) {
        n = (int) room - 1;
    }

    memcpy(cf->err + n, at, atlen + 1);
}


gn_int_t
gn_conf_full_name(gn_conf_t *cf, gn_str_t *name, gn_uint_t conf_relative)
{
    u_char    *p, *data;
    size_t     plen, slash;
    gn_str_t  *prefix;

    prefix = conf_relative ? &cf->conf_prefix : &cf->prefix;
    plen = prefix->len;

    if (name->len > 0 && name->data[0] == '/') {
        plen = 0;
    }

    slash = (plen > 0 && prefix->data[plen - 1] != '/') ? 1 : 0;

    /* always a copy: the result must be NUL-terminated for open() */
    data = gn_pnalloc(cf->pool, plen + slash + name->len + 1);
    if (data == NULL) {
        gn_conf_error(cf, "out of memory");
        return GN_ERROR;
    }

    p = data;

    if (plen > 0) {
        p = gn_cpymem(p, prefix->data, plen);
    }

    if (slash) {
        *p++ = '/';
    }

    if (name->len > 0) {
        p = gn_cpymem(p, name->data, name->len);
    }

    *p = '\0';

    name->len = (size_t) (p - data);
    name->data = data;

    return GN_OK;
}


char *
gn_conf_set_flag_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_str_t   *value;
    gn_flag_t  *fp;

    fp = (gn_flag_t *) ((u_char *) conf + cmd->offset);

    if (*fp != GN_CONF_UNSET) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;

    if (gn_str_caseeq(&value[1], "on")) {
        *fp = 1;

    } else if (gn_str_caseeq(&value[1], "off")) {
        *fp = 0;

    } else {
        gn_conf_error(cf, "invalid value \"%.*s\" in \"%.*s\" directive, "
                      "it must be \"on\" or \"off\"",
                      GN_STR_ARG(&value[1]), GN_STR_ARG(&cmd->name));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


char *
gn_conf_set_str_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_str_t  *sp, *value;

    sp = (gn_str_t *) ((u_char *) conf + cmd->offset);

    if (sp->data != NULL) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;
    *sp = value[1];

    return GN_CONF_OK;
}


char *
gn_conf_set_path_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_str_t  *sp, *value, path;

    sp = (gn_str_t *) ((u_char *) conf + cmd->offset);

    if (sp->data != NULL) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;
    path = value[1];

    if (gn_conf_full_name(cf, &path, 0) != GN_OK) {
        return GN_CONF_ERROR;
    }

    *sp = path;

    return GN_CONF_OK;
}


char *
gn_conf_set_file_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_conf_path_t  *fp;
    gn_str_t        *value;

    fp = (gn_conf_path_t *) ((u_char *) conf + cmd->offset);

    if (fp->path.data != NULL) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;
    fp->path = value[1];

    if (gn_conf_full_name(cf, &fp->path, 0) != GN_OK) {
        return GN_CONF_ERROR;
    }

    fp->file = cf->file->name;
    fp->line = cf->file->line;

    return GN_CONF_OK;
}


char *
gn_conf_set_str_array_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf)
{
    gn_str_t     *s, *value;
    gn_uint_t     i;
    gn_array_t  **ap;

    ap = (gn_array_t **) ((u_char *) conf + cmd->offset);

    if (*ap == NULL) {
        *ap = gn_array_create(cf->pool, 4, sizeof(gn_str_t));
        if (*ap == NULL) {
            return (char *) "out of memory";
        }
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        s = gn_array_push(*ap);
        if (s == NULL) {
            return (char *) "out of memory";
        }

        *s = value[i];
    }

    return GN_CONF_OK;
}


const gn_int_t  gn_conf_num_min_1 = 1;


/* ---- plain slots ------------------------------------------------------ */

/* The bytes of a plain setter's slot, 0 for any other setter. The number
 * and enum slots' "unset" (GN_CONF_UNSET, _SIZE, _MSEC, _UINT) is all
 * bits set; the
 * string slot's is a NULL data pointer. */
static size_t
gn_conf_plain_size(const gn_conf_cmd_t *cmd)
{
    if (cmd->set == gn_conf_set_flag_slot) {
        return sizeof(gn_flag_t);
    }
    if (cmd->set == gn_conf_set_num_slot) {
        return sizeof(gn_int_t);
    }
    if (cmd->set == gn_conf_set_size_slot) {
        return sizeof(size_t);
    }
    if (cmd->set == gn_conf_set_msec_slot) {
        return sizeof(gn_msec_t);
    }
    if (cmd->set == gn_conf_set_str_slot) {
        return sizeof(gn_str_t);
    }
    if (cmd->set == gn_conf_set_enum_slot) {
        return sizeof(gn_uint_t);
    }
    return 0;
}


static gn_uint_t
gn_conf_slot_unset(const gn_conf_cmd_t *cmd, const u_char *slot, size_t n)
{
    if (cmd->set == gn_conf_set_str_slot) {
        return ((const gn_str_t *) slot)->data == NULL;
    }
    while (n-- > 0) {
        if (slot[n] != 0xff) {
            return 0;
        }
    }
    return 1;
}


void
gn_conf_init_slots(const gn_conf_cmd_t *cmds, gn_uint_t which, void *conf)
{
    const gn_conf_cmd_t  *c;
    size_t                n;

    for (c = cmds; c->name.len != 0; c++) {
        n = gn_conf_plain_size(c);
        if (n == 0 || c->conf != which) {
            continue;
        }
        if (c->set == gn_conf_set_str_slot) {
            memset((u_char *) conf + c->offset, 0, n);
        } else {
            memset((u_char *) conf + c->offset, 0xff, n);
        }
    }
}


gn_int_t
gn_conf_merge_slots(gn_conf_t *cf, const gn_conf_cmd_t *cmds,
    gn_uint_t which, void *conf, const void *prev)
{
    const gn_conf_cmd_t  *c;
    gn_str_t             *args;
    u_char               *slot;
    size_t                n;
    gn_uint_t             nelts;
    char                 *rv, why[512];

    for (c = cmds; c->name.len != 0; c++) {
        n = gn_conf_plain_size(c);
        if (n == 0 || c->conf != which) {
            continue;
        }

        slot = (u_char *) conf + c->offset;
        if (!gn_conf_slot_unset(c, slot, n)) {
            continue;
        }

        if (prev != NULL
            && !gn_conf_slot_unset(c, (const u_char *) prev + c->offset, n))
        {
            memcpy(slot, (const u_char *) prev + c->offset, n);
            continue;
        }

        if (c->dflt == NULL) {
            continue;
        }

        /* the default, through the row's setter as if it were written */
        nelts = cf->args->nelts;
        cf->args->nelts = 0;
        if (gn_array_push(cf->args) == NULL
            || gn_array_push(cf->args) == NULL)
        {
            cf->args->nelts = nelts;
            gn_conf_error(cf, "out of memory");
            return GN_ERROR;
        }
        args = cf->args->elts;
        args[0] = c->name;
        args[1].data = (u_char *) c->dflt;
        args[1].len = strlen(c->dflt);

        why[0] = '\0';
        rv = c->set(cf, c, conf);
        cf->args->nelts = nelts;

        if (rv != GN_CONF_OK) {
            snprintf(why, sizeof(why), "%.400s", rv == GN_CONF_ERROR
                                                 ? cf->err : rv);
            snprintf(cf->err, sizeof(cf->err), "bad default \"%s\" of the "
                     "\"%.*s\" directive: %s", c->dflt, GN_STR_ARG(&c->name),
                     why);
            return GN_ERROR;
        }
    }

    return GN_OK;
}


char *
gn_conf_set_num_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_int_t  *np;
    gn_str_t  *value;

    np = (gn_int_t *) ((u_char *) conf + cmd->offset);

    if (*np != GN_CONF_UNSET) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;

    *np = gn_atoi(value[1].data, value[1].len);

    if (*np == GN_ERROR) {
        gn_conf_error(cf, "invalid number \"%.*s\" in \"%.*s\" directive",
                      GN_STR_ARG(&value[1]), GN_STR_ARG(&cmd->name));
        return GN_CONF_ERROR;
    }

    if (cmd->post != NULL && *np < *(const gn_int_t *) cmd->post) {
        gn_conf_error(cf, "invalid number \"%.*s\" in \"%.*s\" directive, "
                      "it must be %lld or more", GN_STR_ARG(&value[1]),
                      GN_STR_ARG(&cmd->name),
                      (long long) *(const gn_int_t *) cmd->post);
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}


char *
gn_conf_set_size_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    size_t    *sp;
    ssize_t    size;
    gn_str_t  *value;

    sp = (size_t *) ((u_char *) conf + cmd->offset);

    if (*sp != GN_CONF_UNSET_SIZE) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;

    size = gn_parse_size(&value[1]);

    if (size == GN_ERROR) {
        gn_conf_error(cf, "invalid size \"%.*s\" in \"%.*s\" directive",
                      GN_STR_ARG(&value[1]), GN_STR_ARG(&cmd->name));
        return GN_CONF_ERROR;
    }

    *sp = (size_t) size;

    return GN_CONF_OK;
}


char *
gn_conf_set_msec_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_str_t   *value;
    gn_msec_t  *mp, ms;

    mp = (gn_msec_t *) ((u_char *) conf + cmd->offset);

    if (*mp != GN_CONF_UNSET_MSEC) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;

    if (gn_parse_msec(&value[1], &ms) != GN_OK) {
        gn_conf_error(cf, "invalid time \"%.*s\" in \"%.*s\" directive",
                      GN_STR_ARG(&value[1]), GN_STR_ARG(&cmd->name));
        return GN_CONF_ERROR;
    }

    *mp = ms;

    return GN_CONF_OK;
}


char *
gn_conf_set_enum_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    const gn_conf_enum_t  *e, *names = cmd->post;
    gn_uint_t             *up;
    gn_str_t              *value;
    char                   list[256];
    size_t                 n;

    up = (gn_uint_t *) ((u_char *) conf + cmd->offset);

    if (*up != GN_CONF_UNSET_UINT) {
        return GN_CONF_DUPLICATE;
    }

    value = cf->args->elts;

    for (e = names; e->name.len != 0; e++) {
        if (gn_str_caseeq_str(&e->name, &value[1])) {
            *up = e->value;
            return GN_CONF_OK;
        }
    }

    /* the names the row accepts, as the error says them: "a", "b" or
     * "c" */
    n = 0;
    list[0] = '\0';
    for (e = names; e->name.len != 0 && n < sizeof(list); e++) {
        n += (size_t) snprintf(list + n, sizeof(list) - n, "%s\"%.*s\"",
                               e == names ? ""
                               : e[1].name.len == 0 ? " or " : ", ",
                               GN_STR_ARG(&e->name));
    }

    gn_conf_error(cf, "invalid value \"%.*s\" in \"%.*s\" directive, "
                  "it must be %s", GN_STR_ARG(&value[1]),
                  GN_STR_ARG(&cmd->name), list);
    return GN_CONF_ERROR;
}
