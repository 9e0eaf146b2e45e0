/*
 * Gannet module ABI, version 1 (see <gannet/abi.h> for the rules).
 *
 * A module is a shared object built against these headers alone:
 *
 *     #include <gannet/module.h>
 *
 *     static int hello(const gn_api_t *api, gn_request_t *r)
 *     {
 *         api->set_header(r, "Content-Type", "text/plain");
 *         api->write(r, "hello\n", 6);
 *         return GN_OK;
 *     }
 *
 *     static const gn_module_t  hello_module = {
 *         GN_MODULE_V1, "hello", "1.0", NULL, 0,
 *         NULL, NULL, hello, NULL, NULL, NULL, NULL
 *     };
 *
 *     GN_MODULE_EXPORT(hello_module)
 *
 * built with `cc -shared -fPIC $(pkg-config --cflags gannet) mod_hello.c
 * -o mod_hello.so` and loaded with `load_module /path/mod_hello.so;`, then
 * used with `handler hello;` in a location.
 *
 * Everything a module sees of the server goes through the gn_api_t table
 * and opaque handles: the server's own structs can change in any release
 * without breaking a module.
 *
 * Versions. A module needs a server of the ABI minor of the headers it
 * is built with, unless its descriptor says it needs less
 * (GN_MODULE_V1_NEEDS() below) and it tests newer members at run time
 * (GN_API_HAS()).
 *
 * Configuration. A check exported with GN_MODULE_CHECK (ABI 1.2) runs
 * for every level of a configuration that has just been read -- under
 * `gannet -t`, at start and at every reload, before anything of it is
 * used -- and refuses a value with api->conf_error(), which names the
 * file and line of the directive: range and consistency checks go there,
 * not in init_master.
 *
 * Processes. init_master runs in the master after the configuration is
 * loaded and before the children are forked (open files, read data,
 * allocate shared memory with mmap(MAP_SHARED) here). init_child and
 * exit_child run in each child. Handlers and filters run in a child's
 * event loop: they must not block. To wait for something, watch a file
 * descriptor or set a timer, return GN_AGAIN ("pending", ISAPI's
 * HSE_STATUS_PENDING) and call api->finish() later (ISAPI's
 * HSE_REQ_DONE_WITH_SESSION). A module that crashes takes down its child
 * only; the master replaces it.
 */

#ifndef GN_API_MODULE_H_INCLUDED
#define GN_API_MODULE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#include <gannet/types.h>
#include <gannet/abi.h>

#ifdef __cplusplus
extern "C" {
#endif


typedef struct gn_request_s   gn_request_t;     /* opaque */
typedef struct gn_watch_s     gn_watch_t;       /* opaque */
typedef struct gn_mtimer_s    gn_mtimer_t;      /* opaque */
typedef struct gn_api_s       gn_api_t;
typedef struct gn_module_s    gn_module_t;


/* ---- configuration directives ---------------------------------------- */

/* Value types. The value is stored at `offset` in the module's
 * configuration struct (conf_size bytes, one per location, inherited
 * from the enclosing server and main levels when not set there). */
#define GN_DIR_STRING     1    /* const char *, NUL-terminated */
#define GN_DIR_NUMBER     2    /* int64_t */
#define GN_DIR_FLAG       3    /* int64_t: 1 (on) or 0 (off) */
#define GN_DIR_SIZE       4    /* int64_t bytes: 512, 16k, 8m, 1g */
#define GN_DIR_DURATION   5    /* int64_t milliseconds: 500ms, 30s, 5m */

/* Where the directive may appear. */
#define GN_CTX_MAIN       0x1
#define GN_CTX_SERVER     0x2
#define GN_CTX_LOCATION   0x4

typedef struct {
    const char   *name;        /* NULL ends the list */
    uint32_t      type;        /* GN_DIR_* */
    uint32_t      contexts;    /* GN_CTX_* bits */
    size_t        offset;      /* in the module's conf struct */
    const char   *default_value; /* as written in a config file, or NULL */
} gn_directive_t;


/* ---- the module descriptor -------------------------------------------- */

/*
 * Hook results: GN_OK (done), GN_AGAIN (pending: finish later),
 * GN_DECLINED (not mine: the request goes on as if the hook were not
 * there; a handler declines before it writes anything, or the request
 * gets a 500), GN_ERROR (a 500), or an HTTP status from 400 to 599 (the server
 * answers with it). init hooks return GN_OK or GN_ERROR (the server does
 * not start, or the child exits).
 */
typedef int  (*gn_init_pt)(const gn_api_t *api, void *conf);
typedef int  (*gn_handler_pt)(const gn_api_t *api, gn_request_t *r);
typedef void (*gn_exit_pt)(const gn_api_t *api);


struct gn_module_s {
    uint32_t               magic;        /* GN_ABI_MAGIC */
    uint16_t               abi_major;    /* GN_ABI_MAJOR when built */
    uint16_t               abi_minor;    /* the oldest minor it needs */
    uint32_t               size;         /* sizeof(gn_module_t) when built */

    const char            *name;         /* used by `handler NAME;` */
    const char            *version;      /* the module's own */
    const gn_directive_t  *directives;   /* or NULL */
    size_t                 conf_size;    /* per-location conf struct */

    gn_init_pt             init_master;  /* conf: main level */
    gn_init_pt             init_child;   /* conf: main level */
    gn_handler_pt          handler;      /* content for `handler NAME;` */

    /* Request filters, run for every request in every location (ISAPI
     * filter notifications): after the head is read, after the URL is
     * mapped to a location, and just before the access log is written
     * (its return value is ignored there). */
    gn_handler_pt          filter_headers;
    gn_handler_pt          filter_mapped;
    gn_handler_pt          filter_log;

    gn_exit_pt             exit_child;
};

/*
 * The first four members of a descriptor. abi_minor is the oldest minor
 * of this major the module needs: a 1.M server loads it when abi_minor
 * <= M (every 1.x server compares so) and otherwise refuses it, naming
 * both versions. GN_MODULE_V1 says the minor of these headers: safe, the
 * module may call anything they declare. A module that calls only what
 * 1.N has, and tests anything newer at run time with GN_API_HAS(), says
 * so with GN_MODULE_V1_NEEDS(N) and loads in servers from 1.N on:
 *
 *     static const gn_module_t  hello_module = {
 *         GN_MODULE_V1_NEEDS(0), "hello", "1.0", NULL, 0, ...
 *
 *     if (GN_API_HAS(api, read_file)) {
 *         ... api->read_file(...) (1.1) ...
 *     } else {
 *         ... what a 1.0 server offers ...
 *     }
 *
 * N is a constant from 0 to GN_ABI_MINOR (a larger one does not compile:
 * these headers cannot know what it would need). A GN_MODULE_CHECK
 * entry point is looked up by servers from 1.2 on only: a module that
 * needs less must not rely on it having run (check again in init_master).
 */
#define GN_MODULE_V1                                                          \
    GN_ABI_MAGIC, GN_ABI_MAJOR, GN_ABI_MINOR, (uint32_t) sizeof(gn_module_t)

#define GN_MODULE_V1_NEEDS(minor)                                             \
    GN_ABI_MAGIC, GN_ABI_MAJOR,                                               \
    (uint16_t) (sizeof(char[(minor) <= GN_ABI_MINOR ? 1 : -1]) - 1 + (minor)), \
    (uint32_t) sizeof(gn_module_t)

/* Defines the one exported symbol. Build with -fvisibility=hidden (the
 * pkg-config cflags do) so that nothing else is exported. In C++ the
 * symbol gets C linkage (its name unmangled), or the server finds none. */
#ifdef __cplusplus
#define GN_MODULE_EXPORT(descriptor)                                          \
    extern "C" __attribute__((visibility("default"))) const gn_module_t *     \
    GN_MODULE_ENTRY(void) { return &(descriptor); }
#else
#define GN_MODULE_EXPORT(descriptor)                                          \
    __attribute__((visibility("default"))) const gn_module_t *                \
    GN_MODULE_ENTRY(void) { return &(descriptor); }
#endif


/*
 * ABI 1.2: the configuration check, a second entry point that a module
 * may export (as ISAPI's optional entry points, found by name; a module
 * without it loads as before). GN_MODULE_CHECK(fn) exports it:
 *
 *     static int check(const gn_api_t *api, void *conf, int level);
 *     GN_MODULE_CHECK(check)
 *
 * fn runs for each level of a configuration just read, after inheritance
 * and defaults: the main level (level GN_CTX_MAIN), each server
 * (GN_CTX_SERVER) and each location (GN_CTX_LOCATION), in load order of
 * the modules, in the process that read it and before anything of it is
 * opened or started: under `gannet -t`, at start and at every reload.
 * conf is the module's conf struct at that level (NULL when conf_size is
 * 0). It returns GN_OK, or refuses the whole configuration (the reload
 * keeps the running one) with `return api->conf_error(...)`, which names
 * the directive's file and line. It must keep no state: the
 * configuration it sees may never be used. Range and consistency checks
 * belong here; init_master opens and starts what the checked
 * configuration needs.
 */
typedef int  (*gn_check_pt)(const gn_api_t *api, void *conf, int level);

#ifdef __cplusplus
#define GN_MODULE_C_LINKAGE  extern "C"
#else
#define GN_MODULE_C_LINKAGE
#endif

#define GN_MODULE_CHECK(fn)                                                   \
    GN_MODULE_C_LINKAGE __attribute__((visibility("default"))) int           \
    GN_MODULE_CHECK_ENTRY(const gn_api_t *api, void *conf, int level)         \
    { return (fn)(api, conf, level); }


/* ---- the server's function table --------------------------------------- */

/* Event bits for watch_fd. */
#define GN_WATCH_READ     0x1
#define GN_WATCH_WRITE    0x2

typedef void (*gn_watch_pt)(const gn_api_t *api, gn_watch_t *w, int fd,
    int events, void *arg);
typedef void (*gn_mtimer_pt)(const gn_api_t *api, gn_mtimer_t *t, void *arg);
typedef void (*gn_body_pt)(const gn_api_t *api, gn_request_t *r,
    const unsigned char *data, size_t len, int last, void *arg);
/* 1.5: on_drained's callback. */
typedef void (*gn_drained_pt)(const gn_api_t *api, gn_request_t *r,
    void *arg);

/* What waits to be sent of a streamed response when on_drained's
 * callback runs, at most; write() says GN_AGAIN above 256 KiB. */
#define GN_DRAINED_LOW    (64 * 1024)

/* Statistics (the scoreboard). Each struct starts with its size as the
 * server filled it: fields past it are absent (older server). */
typedef struct {
    uint32_t    size;
    int32_t     slot;
    int64_t     pid;
    uint64_t    generation;
    uint32_t    state;          /* GN_CHILD_* */
    uint32_t    reserved;
    uint64_t    started;        /* unix time */
    uint64_t    connections;    /* open now */
    uint64_t    accepted;
    uint64_t    requests;
    uint64_t    bytes_in;
    uint64_t    bytes_out;
    uint64_t    status[6];      /* responses by class: [1] 1xx .. [5] 5xx */
    uint64_t    tls_full;       /* handshakes */
    uint64_t    tls_resumed;
    uint64_t    tls_failed;
} gn_child_stats_t;

#define GN_CHILD_STARTING   1
#define GN_CHILD_RUNNING    2
#define GN_CHILD_DRAINING   3

typedef struct {
    uint32_t    size;
    uint32_t    children;       /* configured for the current generation */
    int64_t     master_pid;
    uint64_t    generation;
    uint64_t    started;        /* unix time */
    uint64_t    tls_cache_entries;   /* 0: no TLS session cache */
    uint64_t    tls_cache_used;
    uint64_t    tls_cache_stores;
    uint64_t    tls_cache_hits;
    uint64_t    tls_cache_misses;
    uint64_t    tls_cache_evictions;
} gn_server_stats_t;

/*
 * ABI 1.3: requests by protocol and the HTTP/2 numbers of one child
 * (proto_stats below). Unlike the two structs above, the server fills
 * only as many bytes as the caller says its struct has and sets `size`
 * to what it filled: a member appended later is never written into an
 * older module's smaller struct.
 */
typedef struct {
    uint32_t    size;           /* bytes the server filled */
    int32_t     slot;           /* as asked: -1 for the retired totals */
    uint64_t    h1_requests;    /* requests answered over HTTP/1.x */
    uint64_t    h2_requests;    /* ... over HTTP/2 */
    uint64_t    h2_connections; /* HTTP/2 connections, as they started */
    uint64_t    h2_refused;     /* streams past
                                   http2_max_concurrent_streams */
    uint64_t    h2_glitch_limit; /* connections closed past
                                    http2_max_glitches */
    uint64_t    h2_flood;       /* connections closed by nghttp2's flood
                                   limits (CONTINUATION, queued ACKs) */
    uint64_t    h2_header_limit; /* request heads too large (431) */
    uint64_t    h2_timeouts;    /* streams (or stuck connections) cut
                                   by a timeout */
    uint64_t    h2_client_resets; /* RST_STREAM frames from clients */
    uint64_t    h2_open;        /* HTTP/2 connections open now (gauge;
                                   0 in the retired totals) */
    uint64_t    h2_streams;     /* their streams open now (gauge; 0 in
                                   the retired totals) */
} gn_proto_stats_t;

/*
 * ABI 1.4: one server of the TLS session cache's memcached tier
 * (tls_session_memcached), its counters summed over the children
 * (memcached_stats below; filled up to the caller's size, as
 * proto_stats).
 */
#define GN_MEMCACHED_IDLE         0     /* not asked yet */
#define GN_MEMCACHED_CONNECTING   1     /* connecting */
#define GN_MEMCACHED_UP           2     /* connected */
#define GN_MEMCACHED_DOWN         3     /* failed; retried after a back-off */

typedef struct {
    uint32_t    size;           /* bytes the server filled */
    uint32_t    state;          /* GN_MEMCACHED_*, as a child last saw it */
    char        address[64];    /* as configured, NUL-terminated */
    uint64_t    lookups;        /* sessions asked for */
    uint64_t    hits;           /* ... found and usable */
    uint64_t    misses;         /* ... not there, or unusable */
    uint64_t    timeouts;       /* ... answered too late (past
                                   tls_session_memcached_timeout) */
    uint64_t    skipped;        /* not asked: the server was down */
    uint64_t    stores;         /* sessions sent to be stored */
    uint64_t    store_failures; /* ... not sent or refused */
    uint64_t    err_connect;    /* connections refused, failed, closed */
    uint64_t    err_protocol;   /* replies that were not memcached's */
    uint64_t    err_stall;      /* no answer for a second */
    uint64_t    rtt_us;         /* lookups' round trips, sum in us */
    uint64_t    rtt_n;          /* ... and their number */
} gn_memcached_stats_t;

/*
 * ABI 1.6: one server of an upstream group (the reverse proxy), its
 * counters summed over the children (upstream_stats below; filled up to
 * the caller's size, as proto_stats).
 */
#define GN_UPSTREAM_SERVER_UP       0   /* serving */
#define GN_UPSTREAM_SERVER_FAILED   1   /* left out after max_fails */
#define GN_UPSTREAM_SERVER_DOWN     2   /* configured `down` */

typedef struct {
    uint32_t    size;           /* bytes the server filled */
    uint32_t    state;          /* GN_UPSTREAM_SERVER_*, as a child last
                                   saw it */
    char        upstream[64];   /* the group's name (a proxy_pass URL's
                                   host:port), NUL-terminated */
    char        server[64];     /* the server as configured */
    uint32_t    weight;
    uint32_t    backup;         /* 1: a backup server */
    uint64_t    requests;       /* tries sent to it */
    uint64_t    responses[6];   /* by class: [1] 1xx .. [5] 5xx */
    uint64_t    fail_connect;   /* connections refused or failed */
    uint64_t    fail_timeout;   /* connect, send or read timed out */
    uint64_t    fail_invalid;   /* a response head that was not one */
    uint64_t    fail_cut;       /* a response closed or broken midway */
    uint64_t    disabled;       /* times left out after max_fails */
    uint64_t    time_le[8];     /* tries by time taken, ms: <= 1, 5, 25,
                                   100, 500, 2500, 10000, more */
    int64_t     active;         /* connections busy now (gauge) */
    int64_t     idle;           /* ... kept idle in the pools (gauge) */
} gn_upstream_server_stats_t;

/*
 * ABI 1.7: one zone of limit_req_zone or limit_conn_zone, its counters
 * summed over the children (limit_stats below; filled up to the
 * caller's size, as proto_stats).
 */
#define GN_LIMIT_ZONE_REQ     0   /* limit_req_zone */
#define GN_LIMIT_ZONE_CONN    1   /* limit_conn_zone */

typedef struct {
    uint32_t    size;           /* bytes the server filled */
    uint32_t    kind;           /* GN_LIMIT_ZONE_* */
    char        name[32];       /* the zone's name, NUL-terminated */
    uint64_t    passed;         /* requests let through at once */
    uint64_t    delayed;        /* ... after waiting (limit_req) */
    uint64_t    rejected;       /* ... refused */
} gn_limit_zone_stats_t;

/*
 * ABI 1.4: the TLS session-ticket key (an id, never its bytes) and the
 * ticket counters, summed over the children, kept across reloads and
 * binary upgrades (tls_ticket_stats below; filled up to the caller's
 * size).
 */
#define GN_TLS_KEY_NONE        0     /* no server has TLS */
#define GN_TLS_KEY_GENERATED   1     /* made by the master at its start */
#define GN_TLS_KEY_FILE        2     /* tls_ticket_key_file */

typedef struct {
    uint32_t    size;           /* bytes the server filled */
    uint32_t    source;         /* GN_TLS_KEY_* */
    char        id[24];         /* 16 hex digits of the key's SHA-256 */
    uint64_t    created;        /* unix time: the file's mtime, or when
                                   the master made it */
    uint64_t    loaded;         /* unix time the running configuration
                                   read it */
    uint64_t    period;         /* s: GnuTLS derives the key that
                                   encrypts tickets anew this often (3 x
                                   tls_session_timeout) */
    uint64_t    tickets_issued; /* TLS 1.3 tickets sent */
    uint64_t    resumed_ticket; /* resumptions by a ticket */
    uint64_t    resumed_id;     /* ... by a TLS 1.2 session id */
} gn_tls_ticket_stats_t;


/* unescape() flag (1.8): '+' is a space (application/x-www-form-urlencoded). */
#define GN_UNESCAPE_PLUS  0x1

/* True when this server's table has `member` (it may be older than the
 * headers the module was built with). */
#define GN_API_HAS(api, member)                                               \
    ((api)->size >= offsetof(gn_api_t, member) + sizeof((api)->member))

struct gn_api_s {
    uint32_t    size;           /* sizeof(gn_api_t) of the server */
    uint16_t    abi_major;
    uint16_t    abi_minor;

    /* -- 1.0: logging. r may be NULL. level: GN_LOG_* (types.h). -------- */
    void        (*log)(gn_request_t *r, int level, const char *fmt, ...)
                    __attribute__((format(printf, 3, 4)));

    /* -- 1.0: the request. Strings are valid until the request ends and
     *    are not NUL-terminated. ------------------------------------------ */
    gn_str_t    (*method)(gn_request_t *r);
    gn_str_t    (*uri)(gn_request_t *r);         /* decoded, normalised */
    gn_str_t    (*query)(gn_request_t *r);       /* without '?' */
    gn_str_t    (*request_uri)(gn_request_t *r); /* as received */
    int         (*http_version)(gn_request_t *r); /* 10, 11 or 20 */
    /* First header of that name (case-insensitive); len 0 if absent. */
    gn_str_t    (*header)(gn_request_t *r, const char *name);
    /* Iterates the headers: *i starts at 0; returns 0 at the end. */
    int         (*header_next)(gn_request_t *r, size_t *i, gn_str_t *name,
                    gn_str_t *value);
    /* Server variables, the CGI/ISAPI set: REMOTE_ADDR, REMOTE_PORT,
     * SERVER_ADDR, SERVER_PORT, SERVER_NAME, SERVER_PROTOCOL,
     * SERVER_SOFTWARE, REQUEST_METHOD, REQUEST_URI, SCRIPT_NAME,
     * QUERY_STRING, DOCUMENT_ROOT, CONTENT_LENGTH, CONTENT_TYPE, HTTPS
     * ("on" or "off"), TLS_PROTOCOL, TLS_CIPHER; len 0 if unknown. */
    gn_str_t    (*variable)(gn_request_t *r, const char *name);
    /* The location's root and the file the URI maps to under it. */
    gn_str_t    (*document_root)(gn_request_t *r);
    gn_str_t    (*mapped_path)(gn_request_t *r);

    /* -- 1.0: the request body. ------------------------------------------ */
    /* Declared length, -1 when chunked, 0 when there is none. */
    int64_t     (*body_length)(gn_request_t *r);
    /* Streams the body to cb as it arrives (last = 1 on the final call,
     * possibly with len 0); the handler returns GN_AGAIN and finishes
     * later. At most client_max_body_size bytes (413 beyond, before cb
     * sees them). Returns GN_OK, or GN_ERROR if called twice. */
    int         (*read_body)(gn_request_t *r, gn_body_pt cb, void *arg);

    /* -- 1.0: the response. Headers can be set until the first byte is
     *    sent; writes are buffered and sent by the server. --------------- */
    int         (*set_status)(gn_request_t *r, int status);
    /* Sets (replaces) a response header; value NULL removes it.
     * Content-Length and Transfer-Encoding are the server's. */
    int         (*set_header)(gn_request_t *r, const char *name,
                    const char *value);
    int         (*add_header)(gn_request_t *r, const char *name,
                    const char *value);
    /* GN_OK; GN_AGAIN when a streamed response has more than 256 KiB
     * waiting to be sent (the data was taken: slow the source down and
     * try again later); GN_ERROR after finish() or on out of memory. */
    int         (*write)(gn_request_t *r, const void *data, size_t len);
    /* Sends [offset, offset + length) of a file (length -1: to its end);
     * GN_ERROR with errno set when it cannot (ENOENT, EACCES, EISDIR,
     * EINVAL for a non-regular file or an offset past the end...). The
     * file goes through the open-file cache with the settings of the
     * request's location: a file changed in place may be sent as it was
     * for up to file_cache_valid (`file_cache off`: opened on every
     * call); small files from memory, the others by sendfile(). */
    int         (*send_file)(gn_request_t *r, const char *path,
                    int64_t offset, int64_t length);
    /* Sends what is buffered now: the head goes out with
     * "Transfer-Encoding: chunked" (HTTP/1.1; close-delimited for 1.0),
     * for responses produced over time (pending handlers). While
     * read_body is still delivering the body, the head waits for its
     * last piece. */
    int         (*flush)(gn_request_t *r);
    /* Completes a request whose handler returned GN_AGAIN; status as a
     * hook result (GN_OK, GN_ERROR or an HTTP error status). */
    int         (*finish)(gn_request_t *r, int status);

    /* Runs fn(arg) when the request ends, for any reason (sent, failed,
     * timed out, client gone): the place to free what the module holds
     * for it (kill a helper process, close a descriptor). After the
     * request has ended, no callback of it is called again. */
    int         (*cleanup_add)(gn_request_t *r, void (*fn)(void *arg),
                    void *arg);

    /* -- 1.0: memory. Request memory is freed when the request ends;
     *    module memory lives as long as the configuration. --------------- */
    void       *(*request_alloc)(gn_request_t *r, size_t size);
    void       *(*module_alloc)(size_t size);

    /* -- 1.0: configuration. The module's conf struct for the request's
     *    location (NULL if the module has none). ------------------------- */
    void       *(*module_conf)(gn_request_t *r, const gn_module_t *m);

    /* -- 1.0: the child's event loop. A watch or timer tied to a request
     *    (r non-NULL) is removed when the request ends. ------------------ */
    gn_watch_t *(*watch_fd)(gn_request_t *r, int fd, int events,
                    gn_watch_pt cb, void *arg);
    int         (*watch_update)(gn_watch_t *w, int events);
    void        (*unwatch)(gn_watch_t *w);
    gn_mtimer_t *(*timer_add)(gn_request_t *r, uint64_t msec,
                    gn_mtimer_pt cb, void *arg);
    void        (*timer_cancel)(gn_mtimer_t *t);

    /* -- 1.0: information about the running server. ---------------------- */
    int         (*child_slot)(void);      /* -1 in the master */
    /* "gannet/1.2.3" with `server_tokens on` at the top level, else
     * "gannet" (since 0.1: the version is not revealed by default) */
    const char *(*server_version)(void);
    /* Scoreboard slots are 0 .. max_slots() - 1; child_stats returns 1
     * and fills *out for a slot holding a live child, 0 otherwise.
     * Slot -1 (servers since 0.1.0; older ones return 0): the counters
     * of all the children reaped since the master started (and, after
     * a binary upgrade, all the old master's, its live children's
     * included), pid 0, `generation` the number of children folded in;
     * live slots plus this row are the
     * server's totals when `generation` is the same read before and
     * after the live slots (else a child was retired meanwhile). */
    int         (*max_slots)(void);
    int         (*child_stats)(int slot, gn_child_stats_t *out);
    /* Fills *out; returns GN_OK. */
    int         (*server_stats)(gn_server_stats_t *out);

    /* -- 1.1: reading a file through the server's cache. ----------------- */
    /* The bytes of the whole file at `path`, through the open-file cache
     * with the settings of the request's location (as send_file): *data
     * points to *len bytes that stay valid and unchanged until the
     * request ends; do not write to them (copy first). A file smaller
     * than the location's sendfile_min_size comes from the cache's copy
     * (no system call once cached); a larger one is read into request
     * memory. GN_ERROR with errno set when it cannot be read: ENOENT,
     * EACCES, EISDIR, EINVAL (not a regular file), EFBIG (more than max
     * bytes), EIO (shorter than it was), ENOMEM. */
    int         (*read_file)(gn_request_t *r, const char *path, size_t max,
                    const unsigned char **data, size_t *len);

    /* -- 1.2: refusing a configuration. ------------------------------------ */
    /* In a GN_MODULE_CHECK function only: refuses the value that the module's directive
     * `directive` has at the level being checked. The server reports the
     * message with the file and line where that value was written (for an
     * inherited value, the outer block's line; for a default, that it is
     * the default), and `gannet -t` or the reload fails with it. Returns
     * GN_ERROR, for `return api->conf_error(...)`. */
    int         (*conf_error)(const char *directive, const char *fmt, ...)
                    __attribute__((format(printf, 2, 3)));

    /* -- 1.3: requests by protocol, HTTP/2 connections and limits. ----- */
    /* Fills at most `size` bytes of *out (pass sizeof(*out): the struct
     * of the headers the module is built with) and sets out->size to
     * the bytes filled; members past it are absent (an older server).
     * Returns 1 for a slot holding a live child (as child_stats), 0
     * otherwise (also when size is too small for `size` and `slot`).
     * Slot -1: what the children reaped so far counted, the gauges 0;
     * live slots plus this row are the server's totals when read
     * between two child_stats(-1) rows of the same `generation` (as
     * the other counters: see child_stats). */
    int         (*proto_stats)(int slot, gn_proto_stats_t *out,
                    size_t size);

    /* -- 1.4: the TLS session cache's memcached tier. ------------------ */
    /* Server `index` (0, 1, ... in the order of tls_session_memcached):
     * 1 with *out filled up to `size` bytes (out->size says how many),
     * 0 past the last one or when there is no memcached tier. */
    int         (*memcached_stats)(unsigned index,
                    gn_memcached_stats_t *out, size_t size);

    /* The ticket key and counters: 1 with *out filled up to `size`
     * bytes, 0 when no server has TLS. */
    int         (*tls_ticket_stats)(gn_tls_ticket_stats_t *out,
                    size_t size);

    /* -- 1.5: streamed output drained. --------------------------------- */
    /* cb(api, r, arg) runs once, from the event loop, when the bytes of
     * r's response that wait to be sent are GN_DRAINED_LOW or fewer: at
     * once (on the loop's next turn) if they are already. Where write()
     * said GN_AGAIN, the module stops producing and resumes there, with
     * no timer. A second call replaces the first's callback. GN_OK;
     * GN_ERROR after finish() or outside a module's request. Check
     * GN_API_HAS(api, on_drained) before calling it. */
    int         (*on_drained)(gn_request_t *r, gn_drained_pt cb,
                    void *arg);

    /* -- 1.6: the reverse proxy's upstream servers. -------------------- */
    /* Server `index` (0, 1, ... over every group in the order of the
     * configuration, a group's servers in their order): 1 with *out
     * filled up to `size` bytes (out->size says how many), 0 past the
     * last one. */
    int         (*upstream_stats)(unsigned index,
                    gn_upstream_server_stats_t *out, size_t size);

    /* -- 1.7: limit_req and limit_conn zones. ----------------------------- */
    /* Zone `index` (0, 1, ... in the order of the configuration): 1 with
     * *out filled up to `size` bytes (out->size says how many), 0 past
     * the last one. */
    int         (*limit_stats)(unsigned index, gn_limit_zone_stats_t *out,
                    size_t size);

    /* -- 1.8: helpers for module writers. unescape, escape_html and
     *    escape_json return a new string in request memory, followed by
     *    a NUL not counted in len; {0, NULL} when in.data is NULL (an
     *    absent arg() or cookie() stays absent) or out of memory. A
     *    module that needs less than 1.8 tests GN_API_HAS(api, arg) (or
     *    whichever it calls) first. ------------------------------------ */
    /* Query argument `name` (a C string, compared byte for byte, case
     * included) of the request's query: the raw value (not decoded) of
     * its first occurrence. "?a=1&b=&c" gives "1" for a, and an empty
     * value for b and for c; an argument that is not there gives
     * {0, NULL}: data NULL tells absent from empty. Points into the
     * request (valid until it ends, not NUL-terminated). */
    gn_str_t    (*arg)(gn_request_t *r, const char *name);
    /* Cookie `name` (case-sensitive, RFC 6265) from the request's Cookie
     * fields, in order ("a=1; b=2", several fields over HTTP/1.x, the
     * crumbs of HTTP/2 joined): the raw value of the first one, quotes
     * kept, or {0, NULL} when there is none. Valid as arg()'s. */
    gn_str_t    (*cookie)(gn_request_t *r, const char *name);
    /* Percent-decodes `in` ("%41" is "A"); with GN_UNESCAPE_PLUS, '+' is
     * a space too (form encoding: query arguments and urlencoded
     * bodies). A bad escape ("%zz", a '%' with fewer than two hex digits
     * after it) is kept as it is; "%00" is a NUL byte in the result,
     * which is length-delimited like any other. Other flag bits are
     * ignored (0 for now). */
    gn_str_t    (*unescape)(gn_request_t *r, gn_str_t in, unsigned flags);
    /* `in` with & < > " ' as &amp; &lt; &gt; &quot; &#39;: safe in HTML
     * text and in quoted attribute values. Other bytes are copied. */
    gn_str_t    (*escape_html)(gn_request_t *r, gn_str_t in);
    /* `in` as the inside of a JSON string (without the quotes), valid
     * JSON for any bytes, as the access log's escape=json: " and \ with
     * a backslash, control bytes as \u00XX, well-formed UTF-8 as it is,
     * any other byte as \ufffd. */
    gn_str_t    (*escape_json)(gn_request_t *r, gn_str_t in);

    /* -- 1.9: a file the module holds open. ------------------------------ */
    /* As send_file, for bytes [offset, offset + length) of the regular
     * file open as fd (length -1: to its end): sent with sendfile (or
     * from memory below sendfile_min_size), never through the open-file
     * cache. The server takes a duplicate of fd, closed when the
     * response is done: the caller may close its own at once. GN_OK, or
     * GN_ERROR with errno (EBADF, EINVAL for a non-regular file, a range
     * past its end or a streamed response). Check GN_API_HAS(api,
     * send_fd) before calling it. */
    int         (*send_fd)(gn_request_t *r, int fd, int64_t offset,
                    int64_t length);
    /* Appends text (NUL-terminated, as it is) to what the access log's
     * $module_log shows for the request ("-" when nothing was noted).
     * GN_OK or GN_ERROR (memory, NULL). */
    int         (*log_note)(gn_request_t *r, const char *text);
};


#ifdef __cplusplus
}
#endif

#endif /* GN_API_MODULE_H_INCLUDED */
