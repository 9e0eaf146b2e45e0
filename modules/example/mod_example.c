/*
 * mod_example: the annotated template for Gannet modules.
 *
 * Copy this file, rename the "example" prefix and the module name, and
 * delete what you do not need. It shows every hook of gn_module_t, one
 * configuration directive of each type, a handler that reads the request
 * and writes a response, a handler that reads a request body, and two
 * pending handlers that answer later from a timer.
 *
 * Build it out of the tree exactly as a module writer does:
 *
 *     cc -shared -fPIC $(pkg-config --cflags gannet) mod_example.c \
 *         -o mod_example.so
 *
 * and use it:
 *
 *     load_module /usr/local/lib/gannet/mod_example.so;   # main level
 *     example_greeting "hello from example";              # main, server,
 *                                                         # location
 *
 *     server {
 *         listen 8080;
 *         location /example/ {
 *             handler example;
 *             example_repeat 2;
 *         }
 *     }
 *
 * What it answers (the handler picks by the last path segment):
 *
 *     .../info             the request as the module sees it: method, URI,
 *                          query, headers, server variables, configuration
 *     .../echo             reads the request body (POST) and sends it back
 *     .../delay?ms=N       answers after N milliseconds (a timer; capped by
 *                          example_delay_max), without blocking the child
 *     .../stream           three lines 100 ms apart, each flushed as it is
 *                          written (a chunked response)
 *     .../generate?mb=N    N MiB (at most 1024) of numbered 16-byte lines,
 *                          as fast as the client takes them: written until
 *                          write() says GN_AGAIN, then resumed by
 *                          on_drained (ABI 1.5; a 10 ms timer in an older
 *                          server); logged at info with its pauses
 *     .../file?off=N&len=M "[", bytes [N, N + M) of the file example_file
 *                          names (send_file: the server's open-file cache
 *                          and sendfile; len absent: to the end), "]\n"
 *     .../data?max=N       the same file's bytes read with read_file (ABI
 *                          1.1; at most N bytes, default 1 MiB), upper-
 *                          cased: a module working on a file's contents
 *     anything else        the greeting, example_repeat times
 *
 * and its filters run for every request of every location:
 *
 *     X-Example-Filter: 1  (request header) adds the response headers
 *                          "X-Example-Filter: headers" (filter_headers) and
 *                          "X-Example-Mapped: yes" (filter_mapped)
 *     X-Example-Deny: 1    (request header) ends the request with a 403
 *                          from filter_headers
 *
 * Rules a module lives by (doc/modules.md explains them):
 *
 *   - include only <gannet/module.h>: the server's structs are opaque and
 *     everything goes through the `api` table the hooks receive;
 *   - export exactly one symbol, made by GN_MODULE_EXPORT(); the
 *     pkg-config cflags include -fvisibility=hidden so everything else,
 *     declared static or not, stays inside the module;
 *   - never block in a handler, a filter or a callback: each child serves
 *     hundreds of connections from one event loop. Return GN_AGAIN and
 *     call api->finish() from a timer, fd watch or body callback instead;
 *   - request bytes (gn_str_t) are not NUL-terminated: print them with
 *     "%.*s" and compare them with a length.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>

#include <gannet/module.h>


/*
 * The configuration struct: one per location (and one for the server and
 * main levels), conf_size bytes, filled by the server from the
 * directives below. A directive not set in a location inherits the value
 * of the enclosing server block, then of the main level, then its
 * default_value. The value types are fixed by the directive type:
 * GN_DIR_STRING a const char *, every other type an int64_t.
 */
typedef struct {
    const char  *greeting;      /* example_greeting: STRING */
    int64_t      repeat;        /* example_repeat: NUMBER */
    int64_t      verbose;       /* example_verbose: FLAG (1 or 0) */
    int64_t      max_echo;      /* example_max_echo: SIZE (bytes) */
    int64_t      delay_max;     /* example_delay_max: DURATION (ms) */
    const char  *file;          /* example_file: STRING, or NULL */
} example_conf_t;


/* Per-request state of the pending handlers, in request memory: it is
 * freed with the request, and the server cancels the timers tied to the
 * request, so a client that goes away leaves nothing behind. */
typedef struct {
    gn_request_t   *r;
    unsigned char  *buf;
    size_t          len;
    size_t          max;
    int64_t         ms;
    int             ticks;
    int             too_large;
    uint64_t        line;        /* generate: the next line's number */
    uint64_t        lines;       /* ... of this many */
    uint64_t        pauses;      /* ... and how often it waited */
} example_ctx_t;


static int example_check_conf(const gn_api_t *api, void *conf, int level);
static int example_init_master(const gn_api_t *api, void *conf);
static int example_init_child(const gn_api_t *api, void *conf);
static void example_exit_child(const gn_api_t *api);
static int example_handler(const gn_api_t *api, gn_request_t *r);
static int example_filter_headers(const gn_api_t *api, gn_request_t *r);
static int example_filter_mapped(const gn_api_t *api, gn_request_t *r);
static int example_filter_log(const gn_api_t *api, gn_request_t *r);


/*
 * The directives. Values are parsed and checked by the server exactly like
 * its own: a bad number, size ("16k", "8m") or duration ("500ms", "30s"),
 * a flag other than on/off, or a directive in a context it does not allow
 * is a configuration error with file:line, and `gannet -t` reports it.
 * Prefix the names with the module's name: they share the namespace of
 * the server's own directives.
 */
static const gn_directive_t  example_directives[] = {

    { "example_greeting", GN_DIR_STRING,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(example_conf_t, greeting), "hello from mod_example" },

    { "example_repeat", GN_DIR_NUMBER,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(example_conf_t, repeat), "1" },

    { "example_verbose", GN_DIR_FLAG,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(example_conf_t, verbose), "off" },

    { "example_max_echo", GN_DIR_SIZE,
      GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(example_conf_t, max_echo), "64k" },

    /* main level only: a location saying example_delay_max is an error */
    { "example_delay_max", GN_DIR_DURATION,
      GN_CTX_MAIN,
      offsetof(example_conf_t, delay_max), "10s" },

    /* no default: the member stays NULL when no level sets it */
    { "example_file", GN_DIR_STRING,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(example_conf_t, file), NULL },

    { NULL, 0, 0, 0, NULL }
};


/*
 * The descriptor. GN_MODULE_V1 stamps the magic, the ABI major, the
 * minor the module needs -- that of the headers: this module calls
 * read_file (1.1) without testing for it -- and sizeof(gn_module_t)
 * into it: a server that does not implement that ABI refuses the module
 * with a message saying so. A module that needs less writes
 * GN_MODULE_V1_NEEDS(N) and tests newer members with GN_API_HAS() (see
 * doc/modules.md, section 8). Hooks a module does not need are NULL.
 */
static const gn_module_t  example_module = {
    GN_MODULE_V1,
    "example",                      /* `handler example;` */
    "1.0",                          /* the module's own version */
    example_directives,
    sizeof(example_conf_t),

    example_init_master,
    example_init_child,
    example_handler,

    example_filter_headers,
    example_filter_mapped,
    example_filter_log,

    example_exit_child
};

/* The exported symbols: `const gn_module_t *gn_module_v1(void)`, and the
 * configuration check (ABI 1.2; a module without checks leaves it out). */
GN_MODULE_EXPORT(example_module)
GN_MODULE_CHECK(example_check_conf)


/*
 * Per-child state. Globals are per process: each child has its own copy
 * after the fork, and so does the master. State shared by the children
 * would be mmap(MAP_SHARED) memory allocated in init_master.
 */
static int       example_slot = -1;
static uint64_t  example_requests;


/* ---- helpers ------------------------------------------------------------ */

/* "%.*s" arguments for a gn_str_t that may be empty with data NULL. */
#define example_str(s)  (int) (s).len, (s).data ? (const char *) (s).data : ""


/* printf into the response. Lines longer than the buffer are cut. */
static int
example_printf(const gn_api_t *api, gn_request_t *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
example_printf(const gn_api_t *api, gn_request_t *r, const char *fmt, ...)
{
    int      n;
    char     buf[1024];
    va_list  args;

    va_start(args, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);

    if (n < 0) {
        return GN_ERROR;
    }

    if ((size_t) n >= sizeof(buf)) {
        n = sizeof(buf) - 1;
    }

    return api->write(r, buf, (size_t) n);
}


/* True when the URI's last segment is `name`. */
static int
example_uri_is(gn_str_t uri, const char *name)
{
    size_t  n;

    n = strlen(name);    /* our own C string, not request bytes */

    return uri.len > n
           && uri.data[uri.len - n - 1] == '/'
           && memcmp(uri.data + uri.len - n, name, n) == 0;
}


/* The value of `name=` in a query string as a non-negative number, or
 * -1 when absent or not a number. */
static int64_t
example_query_number(gn_str_t query, const char *name)
{
    size_t   i, n, digits;
    int64_t  v;

    n = strlen(name);

    for (i = 0; i + n < query.len; i++) {

        if ((i != 0 && query.data[i - 1] != '&')
            || memcmp(query.data + i, name, n) != 0
            || query.data[i + n] != '=')
        {
            continue;
        }

        v = 0;
        digits = 0;

        for (i += n + 1; i < query.len && query.data[i] != '&'; i++) {

            if (query.data[i] < '0' || query.data[i] > '9') {
                return -1;
            }

            v = v * 10 + (query.data[i] - '0');
            if (v > 86400000) {
                return -1;
            }

            digits++;
        }

        return digits ? v : -1;
    }

    return -1;
}


/* ---- process hooks ------------------------------------------------------- */

/*
 * Every level of a configuration just read (main, each server, each
 * location, after inheritance), under `gannet -t`, at start and at reload,
 * before anything is opened: check what the directive types cannot
 * (ranges, combinations). api->conf_error() refuses the configuration and
 * names the file and line of the directive. Keep no state here.
 */
static int
example_check_conf(const gn_api_t *api, void *conf, int level)
{
    example_conf_t  *ecf = conf;

    (void) level;

    if (ecf->repeat < 0 || ecf->repeat > 100) {
        return api->conf_error("example_repeat", "must be from 0 to 100, "
                               "not %lld", (long long) ecf->repeat);
    }

    return GN_OK;
}


/*
 * Master, after the configuration is checked and before the children are
 * forked; conf is the main level's. Open files, read data, map shared
 * memory. GN_ERROR stops the server from starting (or the reload): log
 * why first.
 */
static int
example_init_master(const gn_api_t *api, void *conf)
{
    (void) conf;

    api->log(NULL, GN_LOG_INFO, "example: init_master, ABI %d.%d, %s",
             api->abi_major, api->abi_minor, api->server_version());

    return GN_OK;
}


/* Each child, after the fork: per-child resources (connections to a
 * backend, caches). GN_ERROR makes the child exit. */
static int
example_init_child(const gn_api_t *api, void *conf)
{
    example_slot = api->child_slot();

    api->log(NULL, GN_LOG_INFO, "example: init_child in slot %d",
             example_slot);

    return GN_OK;
}


/* Each child, when it exits normally (not after a crash). */
static void
example_exit_child(const gn_api_t *api)
{
    api->log(NULL, GN_LOG_INFO,
             "example: exit_child in slot %d after %llu requests",
             example_slot, (unsigned long long) example_requests);
}


/* ---- filters ------------------------------------------------------------- */

/*
 * After the request head is read, before the URI is mapped to a location:
 * for every request, whatever serves it. GN_DECLINED or GN_OK: go on; a
 * status >= 400: the server answers with it.
 */
static int
example_filter_headers(const gn_api_t *api, gn_request_t *r)
{
    if (api->header(r, "X-Example-Deny").len != 0) {
        return 403;
    }

    if (api->header(r, "X-Example-Filter").len != 0) {
        api->set_header(r, "X-Example-Filter", "headers");
    }

    return GN_DECLINED;
}


/* After the URI is mapped to a location (module_conf() is that of the
 * location now) and before the handler or the static files run. */
static int
example_filter_mapped(const gn_api_t *api, gn_request_t *r)
{
    if (api->header(r, "X-Example-Filter").len != 0) {
        api->set_header(r, "X-Example-Mapped", "yes");
    }

    return GN_DECLINED;
}


/* Just before the access log line is written: the response is complete.
 * The return value is ignored. */
static int
example_filter_log(const gn_api_t *api, gn_request_t *r)
{
    example_requests++;

    return GN_OK;
}


/* ---- .../info: the request as a module sees it --------------------------- */

static int
example_info(const gn_api_t *api, gn_request_t *r, example_conf_t *ecf)
{
    size_t        i;
    gn_str_t      name, value;
    const char  **v;

    static const char  *vars[] = {
        "REMOTE_ADDR", "REMOTE_PORT", "SERVER_ADDR", "SERVER_PORT",
        "SERVER_NAME", "SERVER_PROTOCOL", "SERVER_SOFTWARE",
        "REQUEST_METHOD", "REQUEST_URI", "SCRIPT_NAME", "QUERY_STRING",
        "DOCUMENT_ROOT", "CONTENT_LENGTH", "CONTENT_TYPE", "HTTPS",
        "TLS_PROTOCOL", "TLS_CIPHER", NULL
    };

    api->set_header(r, "Content-Type", "text/plain; charset=utf-8");

    example_printf(api, r, "method: %.*s\n", example_str(api->method(r)));
    example_printf(api, r, "uri: %.*s\n", example_str(api->uri(r)));
    example_printf(api, r, "query: %.*s\n", example_str(api->query(r)));
    example_printf(api, r, "request_uri: %.*s\n",
                   example_str(api->request_uri(r)));
    example_printf(api, r, "http_version: %d\n", api->http_version(r));
    example_printf(api, r, "document_root: %.*s\n",
                   example_str(api->document_root(r)));
    example_printf(api, r, "mapped_path: %.*s\n",
                   example_str(api->mapped_path(r)));

    /* one header by name, then all of them */
    example_printf(api, r, "header User-Agent: %.*s\n",
                   example_str(api->header(r, "User-Agent")));

    i = 0;
    while (api->header_next(r, &i, &name, &value)) {
        example_printf(api, r, "header: %.*s: %.*s\n",
                       example_str(name), example_str(value));
    }

    for (v = vars; *v != NULL; v++) {
        example_printf(api, r, "var %s: %.*s\n", *v,
                       example_str(api->variable(r, *v)));
    }

    example_printf(api, r, "conf greeting: %s\n",
                   ecf->greeting != NULL ? ecf->greeting : "(null)");
    example_printf(api, r, "conf repeat: %lld\n", (long long) ecf->repeat);
    example_printf(api, r, "conf verbose: %lld\n", (long long) ecf->verbose);
    example_printf(api, r, "conf max_echo: %lld\n",
                   (long long) ecf->max_echo);
    example_printf(api, r, "conf delay_max: %lld\n",
                   (long long) ecf->delay_max);
    example_printf(api, r, "conf file: %s\n",
                   ecf->file != NULL ? ecf->file : "(null)");

    example_printf(api, r, "child slot: %d\n", example_slot);
    example_printf(api, r, "requests logged by this child: %llu\n",
                   (unsigned long long) example_requests);
    example_printf(api, r, "server: %s, ABI %d.%d (module built for %d.%d)\n",
                   api->server_version(), api->abi_major, api->abi_minor,
                   GN_ABI_MAJOR, GN_ABI_MINOR);

    return GN_OK;
}


/* ---- .../echo: reading the request body ---------------------------------- */

/*
 * Called as the body arrives, possibly before read_body() has returned
 * (when the body came with the head), and last = 1 once at the end. The
 * response is written and the request finished from the last call.
 */
static void
example_echo_body(const gn_api_t *api, gn_request_t *r,
    const unsigned char *data, size_t len, int last, void *arg)
{
    size_t          n;
    example_ctx_t  *ctx = arg;

    if (len > ctx->max - ctx->len) {
        ctx->too_large = 1;
    }

    n = ctx->too_large ? 0 : len;
    if (n > 0) {
        memcpy(ctx->buf + ctx->len, data, n);
        ctx->len += n;
    }

    if (!last) {
        return;
    }

    if (ctx->too_large) {
        api->finish(r, 413);
        return;
    }

    api->set_header(r, "Content-Type", "text/plain");
    example_printf(api, r, "read %zu bytes: ", ctx->len);
    api->write(r, ctx->buf, ctx->len);
    api->write(r, "\n", 1);

    api->finish(r, GN_OK);
}


static int
example_echo(const gn_api_t *api, gn_request_t *r, example_conf_t *ecf)
{
    int64_t         length;
    example_ctx_t  *ctx;

    length = api->body_length(r);    /* -1: chunked, 0: none */

    if (length == 0) {
        api->set_header(r, "Content-Type", "text/plain");
        return example_printf(api, r, "no body\n");
    }

    if (length > ecf->max_echo) {
        return 413;                  /* before reading any of it */
    }

    ctx = api->request_alloc(r, sizeof(example_ctx_t));
    if (ctx == NULL) {
        return GN_ERROR;
    }

    memset(ctx, 0, sizeof(example_ctx_t));
    ctx->r = r;
    ctx->max = (size_t) ecf->max_echo;

    ctx->buf = api->request_alloc(r, ctx->max + 1);
    if (ctx->buf == NULL) {
        return GN_ERROR;
    }

    if (api->read_body(r, example_echo_body, ctx) != GN_OK) {
        return GN_ERROR;
    }

    /* pending: example_echo_body() finishes the request */
    return GN_AGAIN;
}


/* ---- .../delay: a pending request answered from a timer ------------------ */

static void
example_delay_done(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    example_ctx_t  *ctx = arg;

    api->set_header(ctx->r, "Content-Type", "text/plain");
    example_printf(api, ctx->r, "delayed %lld ms\n", (long long) ctx->ms);

    api->finish(ctx->r, GN_OK);
}


static int
example_delay(const gn_api_t *api, gn_request_t *r, example_conf_t *ecf)
{
    int64_t         ms;
    example_ctx_t  *ctx;

    ms = example_query_number(api->query(r), "ms");
    if (ms < 0) {
        return 400;
    }

    if (ms > ecf->delay_max) {
        ms = ecf->delay_max;
    }

    ctx = api->request_alloc(r, sizeof(example_ctx_t));
    if (ctx == NULL) {
        return GN_ERROR;
    }

    memset(ctx, 0, sizeof(example_ctx_t));
    ctx->r = r;
    ctx->ms = ms;

    /* Tied to the request: cancelled by the server if the request ends
     * first (the client went away), so the callback never sees a dead
     * request. */
    if (api->timer_add(r, (uint64_t) ms, example_delay_done, ctx) == NULL) {
        return GN_ERROR;
    }

    return GN_AGAIN;
}


/* ---- .../stream: a response produced over time --------------------------- */

static void
example_stream_tick(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    example_ctx_t  *ctx = arg;

    ctx->ticks++;
    example_printf(api, ctx->r, "tick %d\n", ctx->ticks);

    if (ctx->ticks == 3) {
        api->finish(ctx->r, GN_OK);
        return;
    }

    /* the head (chunked) and the lines so far leave now */
    api->flush(ctx->r);

    if (api->timer_add(ctx->r, 100, example_stream_tick, ctx) == NULL) {
        api->finish(ctx->r, GN_ERROR);
    }
}


static int
example_stream(const gn_api_t *api, gn_request_t *r)
{
    example_ctx_t  *ctx;

    ctx = api->request_alloc(r, sizeof(example_ctx_t));
    if (ctx == NULL) {
        return GN_ERROR;
    }

    memset(ctx, 0, sizeof(example_ctx_t));
    ctx->r = r;

    api->set_header(r, "Content-Type", "text/plain");

    if (api->timer_add(r, 100, example_stream_tick, ctx) == NULL) {
        return GN_ERROR;
    }

    return GN_AGAIN;
}


/* ---- .../generate: a big response at the client's pace ------------------- */

static void example_generate_more(const gn_api_t *api, example_ctx_t *ctx);


static void
example_generate_drained(const gn_api_t *api, gn_request_t *r, void *arg)
{
    (void) r;
    example_generate_more(api, arg);
}


static void
example_generate_timer(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    (void) t;
    example_generate_more(api, arg);
}


/* Writes lines until the server has enough waiting (GN_AGAIN), then
 * waits for it to drain: memory stays bounded however slow the client. */
static void
example_generate_more(const gn_api_t *api, example_ctx_t *ctx)
{
    char      buf[16 * 1024];
    size_t    n, i;
    uint64_t  v;
    int       rc;

    while (ctx->line < ctx->lines) {
        for (n = 0; n + 16 <= sizeof(buf) && ctx->line < ctx->lines; n += 16) {
            /* "%015llu\n" */
            v = ++ctx->line;
            for (i = 15; i-- > 0; v /= 10) {
                buf[n + i] = (char) ('0' + v % 10);
            }
            buf[n + 15] = '\n';
        }

        rc = api->write(ctx->r, buf, n);
        if (rc == GN_ERROR) {
            api->finish(ctx->r, GN_ERROR);
            return;
        }
        if (rc == GN_AGAIN && ctx->line < ctx->lines) {
            ctx->pauses++;
            (void) api->flush(ctx->r);
            if (GN_API_HAS(api, on_drained)) {                  /* 1.5 */
                if (api->on_drained(ctx->r, example_generate_drained, ctx)
                    != GN_OK)
                {
                    api->finish(ctx->r, GN_ERROR);
                }
            } else if (api->timer_add(ctx->r, 10, example_generate_timer,
                                      ctx) == NULL)
            {
                api->finish(ctx->r, GN_ERROR);
            }
            return;
        }
    }

    api->log(ctx->r, GN_LOG_INFO, "example: generated %llu bytes, %llu "
             "pauses (%s)", (unsigned long long) ctx->lines * 16,
             (unsigned long long) ctx->pauses,
             GN_API_HAS(api, on_drained) ? "on_drained" : "timer");
    api->finish(ctx->r, GN_OK);
}


static int
example_generate(const gn_api_t *api, gn_request_t *r)
{
    example_ctx_t  *ctx;
    int64_t         mb;

    mb = example_query_number(api->query(r), "mb");
    if (mb < 0 || mb > 1024) {
        return 400;
    }

    ctx = api->request_alloc(r, sizeof(example_ctx_t));
    if (ctx == NULL) {
        return GN_ERROR;
    }
    memset(ctx, 0, sizeof(example_ctx_t));
    ctx->r = r;
    ctx->lines = (uint64_t) mb * 1024 * 1024 / 16;

    api->set_header(r, "Content-Type", "text/plain");

    /* streamed from the start: write() buffers a response that is not
     * flushed whole, and says GN_AGAIN only for a streamed one */
    (void) api->flush(r);
    example_generate_more(api, ctx);

    return GN_AGAIN;
}


/* ---- .../file: a file's bytes between two writes ------------------------- */

/* send_file() or read_file() failed with errno set: log why, and answer
 * 404 (500 when out of memory). */
static int
example_file_failed(const gn_api_t *api, gn_request_t *r, const char *what,
    const char *path)
{
    int  err = errno;           /* api->log() may change errno */

    api->log(r, GN_LOG_ERR, "example: cannot %s \"%s\": %s", what, path,
             strerror(err));

    return err == ENOMEM ? GN_ERROR : 404;
}


/*
 * send_file() appends a file range to the response after what was written
 * so far; the server sends it from its open-file cache (no system call
 * for a file it has seen recently, small files from memory) or with
 * sendfile(). A file that cannot be sent fails with errno set; the server
 * drops what was written before when the handler returns an error status.
 */
static int
example_file(const gn_api_t *api, gn_request_t *r, example_conf_t *ecf)
{
    int64_t   off, len;
    gn_str_t  query;

    if (ecf->file == NULL) {
        return 404;
    }

    query = api->query(r);
    off = example_query_number(query, "off");
    len = example_query_number(query, "len");

    api->set_header(r, "Content-Type", "application/octet-stream");

    if (api->write(r, "[", 1) != GN_OK) {
        return GN_ERROR;
    }

    if (api->send_file(r, ecf->file, off < 0 ? 0 : off, len) != GN_OK) {
        return example_file_failed(api, r, "send", ecf->file);
    }

    return api->write(r, "]\n", 2) == GN_OK ? GN_OK : GN_ERROR;
}


/*
 * read_file() (ABI 1.1) hands over a whole file's bytes from the server's
 * open-file cache: no system call for a small file it has seen recently.
 * They are read-only and live until the request ends; to change them,
 * copy them into request memory first.
 */
static int
example_data(const gn_api_t *api, gn_request_t *r, example_conf_t *ecf)
{
    size_t                i, len;
    int64_t               max;
    unsigned char        *copy;
    const unsigned char  *data;

    if (ecf->file == NULL) {
        return 404;
    }

    max = example_query_number(api->query(r), "max");

    if (api->read_file(r, ecf->file, max < 0 ? 1024 * 1024 : (size_t) max,
                       &data, &len)
        != GN_OK)
    {
        return example_file_failed(api, r, "read", ecf->file);
    }

    copy = api->request_alloc(r, len + 1);
    if (copy == NULL) {
        return GN_ERROR;
    }

    for (i = 0; i < len; i++) {
        copy[i] = (data[i] >= 'a' && data[i] <= 'z') ? data[i] - 'a' + 'A'
                                                     : data[i];
    }

    api->set_header(r, "Content-Type", "application/octet-stream");

    return api->write(r, copy, len) == GN_OK ? GN_OK : GN_ERROR;
}


/* ---- the content handler ------------------------------------------------- */

/*
 * Runs for the requests of the locations saying `handler example;`.
 * Returns GN_OK when the response is complete, GN_AGAIN when it will be
 * completed later with api->finish(), GN_ERROR for a 500, a status from
 * 400 to 599 for that error page, or GN_DECLINED to let the static files
 * serve the request. A status other than 200 for a normal response is
 * set with api->set_status().
 */
static int
example_handler(const gn_api_t *api, gn_request_t *r)
{
    int64_t          i;
    gn_str_t         uri, method;
    example_conf_t  *ecf;

    ecf = api->module_conf(r, &example_module);
    uri = api->uri(r);
    method = api->method(r);

    if (ecf->verbose) {
        api->log(r, GN_LOG_NOTICE, "example: handler for \"%.*s\"",
                 example_str(uri));
    }

    if (example_uri_is(uri, "echo")) {
        return example_echo(api, r, ecf);
    }

    if (!(method.len == 3 && memcmp(method.data, "GET", 3) == 0)
        && !(method.len == 4 && memcmp(method.data, "HEAD", 4) == 0))
    {
        api->set_header(r, "Allow", "GET, HEAD");
        return 405;
    }

    if (example_uri_is(uri, "info")) {
        return example_info(api, r, ecf);
    }

    if (example_uri_is(uri, "delay")) {
        return example_delay(api, r, ecf);
    }

    if (example_uri_is(uri, "stream")) {
        return example_stream(api, r);
    }

    if (example_uri_is(uri, "generate")) {
        return example_generate(api, r);
    }

    if (example_uri_is(uri, "file")) {
        return example_file(api, r, ecf);
    }

    if (example_uri_is(uri, "data")) {
        return example_data(api, r, ecf);
    }

    api->set_header(r, "Content-Type", "text/plain");

    for (i = 0; i < ecf->repeat; i++) {
        example_printf(api, r, "%s\n",
                       ecf->greeting != NULL ? ecf->greeting : "");
    }

    return GN_OK;
}
