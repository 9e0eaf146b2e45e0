/*
 * mod_isapi: an ISAPI extension host. Extensions written to Microsoft's
 * documented interface (<httpext.h>: GetExtensionVersion,
 * HttpExtensionProc, TerminateExtension and the EXTENSION_CONTROL_BLOCK's
 * callbacks), compiled on Linux against <gannet/isapi/httpext.h>, run
 * unchanged in a child's event loop:
 *
 *     load_module .../mod_isapi.so;
 *     location /ext/ {
 *         handler isapi;
 *         isapi_extension /srv/ext/hello.so;
 *     }
 *
 * The extension is loaded (dlopen) and its GetExtensionVersion called
 * when the configuration is read -- in the master, so every child
 * inherits it; a FALSE from it, or a missing entry point, is a
 * configuration error naming the directive's file and line. Each request
 * gets an EXTENSION_CONTROL_BLOCK; HttpExtensionProc runs in the loop,
 * after the whole request body has been read (the first 48 KiB of it in
 * lpbData, as IIS's default read-ahead; ReadClient gives the rest from
 * memory, without waiting). TerminateExtension runs when a child exits
 * (also after a reload, as the old children go).
 *
 * What each callback and ServerSupportFunction request does here, and
 * what is not done yet: doc/isapi.md.
 */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gannet/module.h>
#include <gannet/isapi/httpext.h>


#define ISAPI_READ_AHEAD   (48 * 1024)   /* lpbData: IIS's default */
#define ISAPI_TF_CHUNK     (64 * 1024)


typedef struct {
    const char  *extension;
    int64_t      threads;        /* isapi_threads: 0, in the loop */
} isapi_conf_t;

#define ISAPI_MAX_THREADS  256

/* An extension loaded by the configuration (every child inherits it). */
typedef struct isapi_ext_s {
    struct isapi_ext_s       *next;
    char                     *path;
    void                     *handle;
    PFN_HTTPEXTENSIONPROC     proc;
    PFN_TERMINATEEXTENSION    term;
    char                      desc[HSE_MAX_EXT_DLL_NAME_LEN];
} isapi_ext_t;

/* One request. The ECB comes first: ConnID and the ECB point here. */
typedef struct {
    EXTENSION_CONTROL_BLOCK   ecb;
    const gn_api_t           *api;
    gn_request_t             *r;              /* NULL once it has ended */
    isapi_ext_t              *ext;
    unsigned                  refs;           /* the request, and each job
                                                 on a thread */
    int                       threaded;       /* isapi_threads > 0 */
    char                     *strings;        /* the ECB's strings */

    unsigned char            *body;           /* the whole request body */
    size_t                    body_len;
    size_t                    body_cap;
    size_t                    body_read;      /* ReadClient's offset */

    PFN_HSE_IO_COMPLETION     io_cb;          /* HSE_REQ_IO_COMPLETION */
    void                     *io_ctx;
    PFN_HSE_IO_COMPLETION     op_cb;          /* the async operation's */
    void                     *op_ctx;
    DWORD                     op_bytes;
    int                       op_busy;        /* one async I/O at a time */

    int                       in_proc;        /* HttpExtensionProc runs */
    int                       pending;        /* it returned PENDING */
    int                       done;           /* DONE_WITH_SESSION */
    int                       finished;       /* api->finish called */
    int                       gone;           /* ... as the client went */
    int                       head_set;       /* a header was sent */
    int                       streaming;      /* api->flush called */
    int                       last_write;     /* api->write's result */
    struct isapi_call_s      *blocked;        /* a thread's WriteClient
                                                 waiting for the client */
    int                       pending_ref;    /* PENDING holds a reference
                                                 until DONE_WITH_SESSION, */
    void                     *pprev, *pnext;  /* ... listed meanwhile */
} isapi_ctx_t;


static isapi_ext_t  *isapi_exts;
static gn_watch_t   *isapi_watch;            /* the child's eventfd */

static const gn_directive_t  isapi_directives[] = {
    { "isapi_extension", GN_DIR_STRING, GN_CTX_MAIN | GN_CTX_SERVER
      | GN_CTX_LOCATION, offsetof(isapi_conf_t, extension), NULL },
    { "isapi_threads", GN_DIR_NUMBER, GN_CTX_MAIN | GN_CTX_SERVER
      | GN_CTX_LOCATION, offsetof(isapi_conf_t, threads), "0" },
    { NULL, 0, 0, 0, NULL }
};

static int isapi_handler(const gn_api_t *api, gn_request_t *r);
static void isapi_exit_child(const gn_api_t *api);

static const gn_module_t  isapi_module = {
    GN_MODULE_V1_NEEDS(5), "isapi", "1.0", isapi_directives,
    sizeof(isapi_conf_t), NULL, NULL, isapi_handler, NULL, NULL, NULL,
    isapi_exit_child
};

GN_MODULE_EXPORT(isapi_module)


/* ---- loading --------------------------------------------------------- */

static isapi_ext_t *
isapi_find(const char *path)
{
    isapi_ext_t  *e;

    for (e = isapi_exts; e != NULL; e = e->next) {
        if (strcmp(e->path, path) == 0) {
            return e;
        }
    }

    return NULL;
}


/*
 * Loads the extension once per process that reads a configuration naming
 * it (the master, or gannet -t): dlopen, its entry points, and
 * GetExtensionVersion, which IIS too calls once. Kept loaded for the
 * process's life, so a reload that names it again does not call it
 * again.
 */
static int
isapi_check(const gn_api_t *api, void *conf, int level)
{
    isapi_conf_t             *cf = conf;
    isapi_ext_t              *e;
    PFN_GETEXTENSIONVERSION   ver;
    HSE_VERSION_INFO          info;
    const char               *err;

    (void) level;

    if (cf != NULL && (cf->threads < 0 || cf->threads > ISAPI_MAX_THREADS)) {
        return api->conf_error("isapi_threads", "%lld is not from 0 to %d",
                               (long long) cf->threads, ISAPI_MAX_THREADS);
    }

    if (cf == NULL || cf->extension == NULL || isapi_find(cf->extension)) {
        return GN_OK;
    }

    if (cf->extension[0] != '/') {
        return api->conf_error("isapi_extension", "\"%s\" is not an absolute "
                               "path", cf->extension);
    }

    e = calloc(1, sizeof(isapi_ext_t));
    if (e == NULL || (e->path = strdup(cf->extension)) == NULL) {
        free(e);
        return api->conf_error("isapi_extension", "out of memory");
    }

    e->handle = dlopen(e->path, RTLD_NOW | RTLD_LOCAL);
    if (e->handle == NULL) {
        err = dlerror();
        free(e->path);
        free(e);
        return api->conf_error("isapi_extension", "cannot load \"%s\": %s",
                               cf->extension, err ? err : "dlopen failed");
    }

    ver = (PFN_GETEXTENSIONVERSION) (uintptr_t) dlsym(e->handle,
                                                      "GetExtensionVersion");
    e->proc = (PFN_HTTPEXTENSIONPROC) (uintptr_t) dlsym(e->handle,
                                                       "HttpExtensionProc");
    e->term = (PFN_TERMINATEEXTENSION) (uintptr_t) dlsym(e->handle,
                                                        "TerminateExtension");
    if (ver == NULL || e->proc == NULL) {
        dlclose(e->handle);
        free(e->path);
        free(e);
        return api->conf_error("isapi_extension", "\"%s\" is no ISAPI "
                               "extension: it does not export %s",
                               cf->extension, ver == NULL
                               ? "GetExtensionVersion" : "HttpExtensionProc");
    }

    memset(&info, 0, sizeof(info));
    if (!ver(&info)) {
        dlclose(e->handle);
        free(e->path);
        free(e);
        return api->conf_error("isapi_extension", "GetExtensionVersion of "
                               "\"%s\" returned FALSE: the extension refuses "
                               "to load", cf->extension);
    }

    memcpy(e->desc, info.lpszExtensionDesc, sizeof(e->desc) - 1);
    e->next = isapi_exts;
    isapi_exts = e;

    api->log(NULL, GN_LOG_INFO, "isapi: loaded \"%s\" (%s), ISAPI %u.%u",
             e->path, e->desc, (unsigned) HIWORD(info.dwExtensionVersion),
             (unsigned) LOWORD(info.dwExtensionVersion));

    return GN_OK;
}

GN_MODULE_CHECK(isapi_check)


static void
isapi_exit_child(const gn_api_t *api)
{
    isapi_ext_t  *e;

    if (isapi_watch != NULL) {
        api->unwatch(isapi_watch);
        isapi_watch = NULL;
    }

    for (e = isapi_exts; e != NULL; e = e->next) {
        if (e->term != NULL && !e->term(HSE_TERM_MUST_UNLOAD)) {
            api->log(NULL, GN_LOG_NOTICE, "isapi: TerminateExtension of "
                     "\"%s\" returned FALSE", e->path);
        }
    }
}


/* ---- the request's end ------------------------------------------------- */

static int
isapi_fail(DWORD err)
{
    SetLastError(err);
    return FALSE;
}


#define isapi_ctx_of(h)   ((isapi_ctx_t *) (h))

/* Ends the request once: DONE_WITH_SESSION, or HttpExtensionProc's
 * result when it did not return PENDING. */
static void
isapi_finish(isapi_ctx_t *ctx, int status)
{
    if (ctx->finished || ctx->r == NULL) {
        return;
    }

    ctx->finished = 1;
    (void) ctx->api->finish(ctx->r, status);
}


/* ---- the thread pool (isapi_threads) ---------------------------------- */

/*
 * An extension that may block runs on a per-child pool of threads: its
 * HttpExtensionProc and its completion functions are jobs for the pool.
 * Everything that touches the server stays on the loop's thread: a
 * callback made on a pool thread (GetServerVariable, WriteClient,
 * ReadClient, ServerSupportFunction) is handed to the loop through an
 * eventfd and runs there, the thread waiting for its result (its
 * GetLastError() too); a WriteClient of a streamed response waits until
 * the client has taken what was queued (backpressure). The request's
 * state (ctx) is reference counted: a thread still running an
 * extension's code for a request the client has left keeps it alive. The
 * threads are made in the child, when a request first needs them.
 */

enum {
    ISAPI_JOB_PROC = 0, ISAPI_JOB_COMPLETION
};

typedef struct isapi_job_s {
    struct isapi_job_s       *next;
    int                       kind;
    isapi_ctx_t              *ctx;
    PFN_HSE_IO_COMPLETION     cb;
    void                     *cb_ctx;
    DWORD                     bytes;
    DWORD                     err;            /* the completion's dwError */
    DWORD                     status;         /* HttpExtensionProc's */
} isapi_job_t;

enum {
    ISAPI_CALL_VAR = 0, ISAPI_CALL_WRITE, ISAPI_CALL_READ, ISAPI_CALL_SSF
};

typedef struct isapi_call_s {
    struct isapi_call_s      *next;
    int                       which;
    HCONN                     h;
    void                     *a, *b, *c;
    DWORD                     dw;
    BOOL                      ret;
    DWORD                     err;
    int                       done;
    pthread_cond_t            cond;
} isapi_call_t;

static pthread_mutex_t   isapi_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t    isapi_work = PTHREAD_COND_INITIALIZER;
static isapi_job_t      *isapi_queue;         /* for the threads, FIFO */
static isapi_job_t     **isapi_queue_tail = &isapi_queue;
static isapi_job_t      *isapi_finished;      /* for the loop */
static isapi_call_t     *isapi_calls;         /* for the loop */
static int               isapi_efd = -1;
static int               isapi_nthreads;
static pthread_t        isapi_loop_tid;      /* the child's loop */
static int               isapi_ready;         /* eventfd watched */

/* Is the caller another thread than the loop's: a pool thread, or one
 * the extension made itself (IIS extensions may finish a request from
 * their own threads)? Then the call is carried out on the loop. */
#define isapi_on_thread()                                                     \
    (isapi_ready && !pthread_equal(pthread_self(), isapi_loop_tid))

static BOOL WINAPI isapi_get_server_variable(HCONN hConn,
    LPSTR lpszVariableName, LPVOID lpvBuffer, LPDWORD lpdwSize);
static BOOL WINAPI isapi_write_client(HCONN ConnID, LPVOID Buffer,
    LPDWORD lpdwBytes, DWORD dwReserved);
static BOOL WINAPI isapi_read_client(HCONN ConnID, LPVOID lpvBuffer,
    LPDWORD lpdwSize);
static BOOL WINAPI isapi_server_support(HCONN hConn, DWORD dwHSERequest,
    LPVOID lpvBuffer, LPDWORD lpdwSize, LPDWORD lpdwDataType);
static void isapi_proc_done(isapi_ctx_t *ctx, DWORD st);
static void isapi_completion_done(isapi_ctx_t *ctx);


/* Requests whose extension said PENDING and has not said
 * DONE_WITH_SESSION yet: their state is kept for it (an extension that
 * never says it leaks its requests' state, as on IIS, but listed). */
static isapi_ctx_t      *isapi_pending;


static void
isapi_pending_add(isapi_ctx_t *ctx)
{
    ctx->refs++;
    ctx->pending_ref = 1;
    ctx->pprev = NULL;
    ctx->pnext = isapi_pending;
    if (isapi_pending != NULL) {
        isapi_pending->pprev = ctx;
    }
    isapi_pending = ctx;
}


static void isapi_unref(isapi_ctx_t *ctx);

static void
isapi_pending_drop(isapi_ctx_t *ctx)
{
    isapi_ctx_t  *prev = ctx->pprev, *next = ctx->pnext;

    if (!ctx->pending_ref) {
        return;
    }
    ctx->pending_ref = 0;
    if (prev != NULL) {
        prev->pnext = next;
    } else {
        isapi_pending = next;
    }
    if (next != NULL) {
        next->pprev = prev;
    }
    isapi_unref(ctx);                       /* last: ctx may be gone */
}


static void
isapi_unref(isapi_ctx_t *ctx)
{
    if (--ctx->refs > 0) {
        return;
    }

    free(ctx->body);
    free(ctx->strings);
    free(ctx);
}


static void
isapi_wake_loop(void)
{
    uint64_t  one = 1;

    while (write(isapi_efd, &one, sizeof(one)) == -1 && errno == EINTR) {
        /* void */
    }
}


static void *
isapi_thread(void *arg)
{
    isapi_job_t  *job;
    isapi_ctx_t  *ctx;

    (void) arg;

    pthread_mutex_lock(&isapi_mu);
    for ( ;; ) {
        while (isapi_queue == NULL) {
            pthread_cond_wait(&isapi_work, &isapi_mu);
        }
        job = isapi_queue;
        isapi_queue = job->next;
        if (isapi_queue == NULL) {
            isapi_queue_tail = &isapi_queue;
        }
        pthread_mutex_unlock(&isapi_mu);

        ctx = job->ctx;
        if (job->kind == ISAPI_JOB_PROC) {
            job->status = ctx->ext->proc(&ctx->ecb);
        } else {
            job->cb(&ctx->ecb, job->cb_ctx, job->bytes, job->err);
        }

        pthread_mutex_lock(&isapi_mu);
        job->next = isapi_finished;
        isapi_finished = job;
        isapi_wake_loop();
    }

    return NULL;
}


/* A call made on a pool thread, run on the loop (below); the thread
 * waits for it. */
static BOOL
isapi_marshal(int which, HCONN h, void *a, void *b, void *c, DWORD dw)
{
    isapi_call_t  call;

    memset(&call, 0, sizeof(call));
    call.which = which;
    call.h = h;
    call.a = a;
    call.b = b;
    call.c = c;
    call.dw = dw;
    pthread_cond_init(&call.cond, NULL);

    pthread_mutex_lock(&isapi_mu);
    call.next = isapi_calls;
    isapi_calls = &call;
    isapi_wake_loop();
    while (!call.done) {
        pthread_cond_wait(&call.cond, &isapi_mu);
    }
    pthread_mutex_unlock(&isapi_mu);

    pthread_cond_destroy(&call.cond);
    SetLastError(call.err);
    return call.ret;
}


static void
isapi_call_return(isapi_call_t *call, BOOL ret, DWORD err)
{
    pthread_mutex_lock(&isapi_mu);
    call->ret = ret;
    call->err = err;
    call->done = 1;
    pthread_cond_signal(&call->cond);
    pthread_mutex_unlock(&isapi_mu);
}


/* A blocked WriteClient goes on once the client has taken enough. */
static void
isapi_unblock(const gn_api_t *api, gn_request_t *r, void *arg)
{
    isapi_ctx_t   *ctx = arg;
    isapi_call_t  *call = ctx->blocked;

    (void) api;
    (void) r;

    if (call != NULL) {
        ctx->blocked = NULL;
        isapi_call_return(call, TRUE, NO_ERROR);
    }
}


/* On the loop: a call from a thread. */
static void
isapi_run_call(isapi_call_t *call)
{
    isapi_ctx_t  *ctx = isapi_ctx_of(call->h);
    BOOL          ret;

    switch (call->which) {
    case ISAPI_CALL_VAR:
        ret = isapi_get_server_variable(call->h, call->a, call->b, call->c);
        break;
    case ISAPI_CALL_WRITE:
        ret = isapi_write_client(call->h, call->a, call->b, call->dw);
        if (ret && ctx->last_write == GN_AGAIN && !ctx->op_busy
            && !(call->dw & HSE_IO_ASYNC)
            && ctx->api->on_drained(ctx->r, isapi_unblock, ctx) == GN_OK)
        {
            ctx->blocked = call;             /* answered when drained */
            return;
        }
        break;
    case ISAPI_CALL_READ:
        ret = isapi_read_client(call->h, call->a, call->b);
        break;
    default:
        ret = isapi_server_support(call->h, call->dw, call->a, call->b,
                                   call->c);
        break;
    }

    isapi_call_return(call, ret, ret ? NO_ERROR : GetLastError());
}


/* The eventfd: calls from the threads, and the jobs they finished. */
static void
isapi_loop_event(const gn_api_t *api, gn_watch_t *w, int fd, int events,
    void *arg)
{
    isapi_call_t  *calls, *call;
    isapi_job_t   *jobs, *job;
    uint64_t       n;

    (void) api;
    (void) w;
    (void) events;
    (void) arg;

    while (read(fd, &n, sizeof(n)) == -1 && errno == EINTR) {
        /* void */
    }

    pthread_mutex_lock(&isapi_mu);
    calls = isapi_calls;
    isapi_calls = NULL;
    jobs = isapi_finished;
    isapi_finished = NULL;
    pthread_mutex_unlock(&isapi_mu);

    while (calls != NULL) {
        call = calls;
        calls = call->next;
        isapi_run_call(call);
    }

    while (jobs != NULL) {
        job = jobs;
        jobs = job->next;
        if (job->kind == ISAPI_JOB_PROC) {
            isapi_proc_done(job->ctx, job->status);
        } else {
            isapi_completion_done(job->ctx);
        }
        isapi_unref(job->ctx);
        free(job);
    }
}


/* The child's first request: the eventfd through which other threads
 * reach the loop. */
static int
isapi_setup(const gn_api_t *api)
{
    if (isapi_ready) {
        return GN_OK;
    }

    isapi_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (isapi_efd == -1) {
        return GN_ERROR;
    }
    isapi_watch = api->watch_fd(NULL, isapi_efd, GN_WATCH_READ,
                                isapi_loop_event, NULL);
    if (isapi_watch == NULL) {
        close(isapi_efd);
        isapi_efd = -1;
        return GN_ERROR;
    }

    isapi_loop_tid = pthread_self();
    isapi_ready = 1;
    return GN_OK;
}


/* Grows the child's pool to n threads (made on first need). */
static int
isapi_pool(int64_t n)
{
    pthread_t  tid;
    sigset_t   all, old;
    int        rc;

    /* the threads take no signal: the loop's thread handles them */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (rc = 0; isapi_nthreads < n; isapi_nthreads++) {
        rc = pthread_create(&tid, NULL, isapi_thread, NULL);
        if (rc != 0) {
            break;
        }
        pthread_detach(tid);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    if (rc != 0 && isapi_nthreads == 0) {
        errno = rc;
        return GN_ERROR;
    }

    return GN_OK;
}


static int
isapi_post(isapi_ctx_t *ctx, int kind, PFN_HSE_IO_COMPLETION cb,
    void *cb_ctx, DWORD bytes, DWORD err)
{
    isapi_job_t  *job = calloc(1, sizeof(isapi_job_t));

    if (job == NULL) {
        return GN_ERROR;
    }

    job->kind = kind;
    job->ctx = ctx;
    job->cb = cb;
    job->cb_ctx = cb_ctx;
    job->bytes = bytes;
    job->err = err;
    ctx->refs++;

    pthread_mutex_lock(&isapi_mu);
    *isapi_queue_tail = job;
    isapi_queue_tail = &job->next;
    pthread_cond_signal(&isapi_work);
    pthread_mutex_unlock(&isapi_mu);

    return GN_OK;
}


/* ---- GetServerVariable ------------------------------------------------- */

/* ALL_HTTP ("HTTP_NAME:value\n", the name upper-cased, '-' as '_') or
 * ALL_RAW ("Name: value\r\n", as received). */
static gn_str_t
isapi_all(isapi_ctx_t *ctx, int raw)
{
    const gn_api_t  *api = ctx->api;
    gn_str_t         name, value, out = { 0, NULL };
    size_t           i, n = 0, k;
    char            *p;

    for (i = 0; api->header_next(ctx->r, &i, &name, &value); ) {
        n += name.len + value.len + 8;
    }

    p = api->request_alloc(ctx->r, n + 1);
    if (p == NULL) {
        return out;
    }
    out.data = (unsigned char *) p;

    for (i = 0; api->header_next(ctx->r, &i, &name, &value); ) {
        if (raw) {
            memcpy(p, name.data, name.len);
            p += name.len;
            *p++ = ':';
            *p++ = ' ';
        } else {
            memcpy(p, "HTTP_", 5);
            p += 5;
            for (k = 0; k < name.len; k++) {
                *p++ = name.data[k] == '-' ? '_'
                       : (name.data[k] >= 'a' && name.data[k] <= 'z')
                         ? (char) (name.data[k] - 'a' + 'A') : name.data[k];
            }
            *p++ = ':';
        }
        if (value.len > 0) {
            memcpy(p, value.data, value.len);
            p += value.len;
        }
        if (raw) {
            *p++ = '\r';
        }
        *p++ = '\n';
    }

    out.len = (size_t) (p - (char *) out.data);
    return out;
}


/* The value of a server variable; found 0 for an unknown name. */
static gn_str_t
isapi_variable(isapi_ctx_t *ctx, const char *name, int *found)
{
    static const char  *same[] = {
        "REMOTE_ADDR", "REMOTE_PORT", "SERVER_NAME", "SERVER_PORT",
        "SERVER_PROTOCOL", "SERVER_SOFTWARE", "REQUEST_METHOD",
        "QUERY_STRING", "CONTENT_LENGTH", "CONTENT_TYPE", "HTTPS",
        "SERVER_ADDR", "REQUEST_URI", "DOCUMENT_ROOT", NULL
    };
    const gn_api_t  *api = ctx->api;
    gn_str_t         v = { 0, (unsigned char *) "" };
    char             hname[256];
    size_t           i;

    *found = 1;

    for (i = 0; same[i] != NULL; i++) {
        if (strcmp(name, same[i]) == 0) {
            return api->variable(ctx->r, name);
        }
    }

    if (strcmp(name, "ALL_HTTP") == 0) {
        return isapi_all(ctx, 0);
    }
    if (strcmp(name, "ALL_RAW") == 0) {
        return isapi_all(ctx, 1);
    }
    if (strcmp(name, "URL") == 0 || strcmp(name, "SCRIPT_NAME") == 0
        || strcmp(name, "PATH_INFO") == 0)
    {
        return api->uri(ctx->r);
    }
    if (strcmp(name, "PATH_TRANSLATED") == 0) {
        return api->mapped_path(ctx->r);
    }
    if (strcmp(name, "APPL_PHYSICAL_PATH") == 0) {
        return api->document_root(ctx->r);
    }
    if (strcmp(name, "UNENCODED_URL") == 0 || strcmp(name, "HTTP_URL") == 0
        || strcmp(name, "CACHE_URL") == 0)
    {
        return api->request_uri(ctx->r);
    }
    if (strcmp(name, "REMOTE_HOST") == 0) {
        return api->variable(ctx->r, "REMOTE_ADDR");
    }
    if (strcmp(name, "LOCAL_ADDR") == 0) {
        return api->variable(ctx->r, "SERVER_ADDR");
    }
    if (strcmp(name, "SERVER_PORT_SECURE") == 0) {
        v = api->variable(ctx->r, "HTTPS");
        v.data = (unsigned char *) ((v.len == 2
                                     && memcmp(v.data, "on", 2) == 0)
                                    ? "1" : "0");
        v.len = 1;
        return v;
    }
    if (strcmp(name, "GATEWAY_INTERFACE") == 0) {
        v.data = (unsigned char *) "CGI/1.1";
        v.len = 7;
        return v;
    }
    if (strcmp(name, "INSTANCE_ID") == 0) {
        v.data = (unsigned char *) "1";
        v.len = 1;
        return v;
    }
    if (strcmp(name, "AUTH_TYPE") == 0 || strcmp(name, "AUTH_USER") == 0
        || strcmp(name, "LOGON_USER") == 0 || strcmp(name, "REMOTE_USER") == 0
        || strcmp(name, "AUTH_PASSWORD") == 0)
    {
        return v;                       /* no Windows authentication */
    }

    /* HTTP_NAME: the request field Name (with '-' for '_') */
    if (strncmp(name, "HTTP_", 5) == 0 && name[5] != '\0'
        && strlen(name + 5) < sizeof(hname))
    {
        for (i = 0; name[5 + i] != '\0'; i++) {
            hname[i] = name[5 + i] == '_' ? '-' : name[5 + i];
        }
        hname[i] = '\0';
        v = api->header(ctx->r, hname);
        *found = v.len > 0;
        return v;
    }

    *found = 0;
    return v;
}


static BOOL WINAPI
isapi_get_server_variable(HCONN hConn, LPSTR lpszVariableName,
    LPVOID lpvBuffer, LPDWORD lpdwSize)
{
    isapi_ctx_t  *ctx = isapi_ctx_of(hConn);
    gn_str_t      v;
    int           found;

    if (isapi_on_thread()) {
        return isapi_marshal(ISAPI_CALL_VAR, hConn, lpszVariableName,
                             lpvBuffer, lpdwSize, 0);
    }

    if (ctx == NULL || lpszVariableName == NULL || lpdwSize == NULL
        || ctx->finished)
    {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    v = isapi_variable(ctx, lpszVariableName, &found);
    if (!found) {
        return isapi_fail(ERROR_INVALID_INDEX);
    }
    if (v.len > 0 && v.data == NULL) {
        return isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
    }

    if (lpvBuffer == NULL || *lpdwSize < v.len + 1) {
        *lpdwSize = (DWORD) (v.len + 1);
        return isapi_fail(ERROR_INSUFFICIENT_BUFFER);
    }

    if (v.len > 0) {
        memcpy(lpvBuffer, v.data, v.len);
    }
    ((char *) lpvBuffer)[v.len] = '\0';
    *lpdwSize = (DWORD) (v.len + 1);

    return TRUE;
}


/* ---- the response ------------------------------------------------------ */

/* Status line ("302 Object moved", NULL: "200 OK") and header lines
 * ("Name: value\r\n" ..., an empty line, then perhaps body bytes) as an
 * extension hands them over; n of each, or -1 for NUL-terminated. */
static BOOL
isapi_send_header(isapi_ctx_t *ctx, const char *status, long slen,
    const char *head, long hlen)
{
    const gn_api_t  *api = ctx->api;
    const char      *p, *end, *eol, *colon, *v;
    char             name[128], *value;
    int              code = 200;
    size_t           n;

    if (ctx->head_set || ctx->streaming) {
        return isapi_fail(ERROR_INVALID_PARAMETER);   /* headers went */
    }

    if (status != NULL) {
        end = status + (slen >= 0 ? (size_t) slen : strlen(status));
        for (p = status, code = 0; p < end && *p >= '0' && *p <= '9'; p++) {
            code = code * 10 + (*p - '0');
        }
        if (p - status != 3 || code < 100 || code > 599) {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
    }

    (void) api->set_status(ctx->r, code);
    ctx->head_set = 1;

    if (head == NULL) {
        return TRUE;
    }

    end = head + (hlen >= 0 ? (size_t) hlen : strlen(head));
    for (p = head; p < end; p = eol) {
        eol = memchr(p, '\n', (size_t) (end - p));
        eol = eol != NULL ? eol + 1 : end;
        n = (size_t) (eol - p);
        while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r')) {
            n--;
        }
        if (n == 0) {
            p = eol;                                /* the blank line */
            break;
        }

        colon = memchr(p, ':', n);
        if (colon == NULL || (size_t) (colon - p) >= sizeof(name)
            || colon == p)
        {
            continue;                               /* not a field */
        }
        memcpy(name, p, (size_t) (colon - p));
        name[colon - p] = '\0';
        for (v = colon + 1; v < p + n && (*v == ' ' || *v == '\t'); v++) {
            /* void */
        }
        value = api->request_alloc(ctx->r, (size_t) (p + n - v) + 1);
        if (value == NULL) {
            return isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
        }
        memcpy(value, v, (size_t) (p + n - v));
        value[p + n - v] = '\0';

        /* the server frames the response (Content-Length, Connection):
         * what it owns is refused and ignored */
        if (strcasecmp(name, "Content-Type") == 0) {
            (void) api->set_header(ctx->r, name, value);
        } else {
            (void) api->add_header(ctx->r, name, value);
        }
    }

    if (p < end && api->write(ctx->r, p, (size_t) (end - p)) == GN_ERROR) {
        return isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
    }

    return TRUE;
}


/* After HttpExtensionProc returned PENDING, what is written goes out at
 * once (a chunked response). */
static int
isapi_stream(isapi_ctx_t *ctx)
{
    if (ctx->streaming || ctx->in_proc) {
        return GN_OK;
    }

    ctx->streaming = 1;
    return ctx->api->flush(ctx->r);
}


/* The async operation's completion, from the loop: called as IIS calls
 * it, then the request ends if the extension said DONE_WITH_SESSION. */
static void
isapi_complete(isapi_ctx_t *ctx)
{
    PFN_HSE_IO_COMPLETION  cb = ctx->op_cb;

    ctx->op_busy = 0;
    if (ctx->finished || cb == NULL) {
        return;
    }

    if (ctx->threaded) {                    /* on the pool, as IIS does */
        if (isapi_post(ctx, ISAPI_JOB_COMPLETION, cb, ctx->op_ctx,
                       ctx->op_bytes, NO_ERROR) != GN_OK)
        {
            isapi_finish(ctx, GN_ERROR);
        }
        return;
    }

    cb(&ctx->ecb, ctx->op_ctx, ctx->op_bytes, NO_ERROR);
    isapi_completion_done(ctx);
}


/* A completion function returned. */
static void
isapi_completion_done(isapi_ctx_t *ctx)
{
    if (ctx->r != NULL && ctx->done && !ctx->in_proc && !ctx->op_busy) {
        isapi_finish(ctx, GN_OK);
    }
}


static void
isapi_drained(const gn_api_t *api, gn_request_t *r, void *arg)
{
    (void) api;
    (void) r;
    isapi_complete(arg);
}


static void
isapi_timer(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    (void) api;
    (void) t;
    isapi_complete(arg);
}


/* Starts an async operation of n bytes whose data is queued already: its
 * completion runs from the loop once the bytes are on their way (write:
 * on_drained) or at once (read: a 0 ms timer). */
static BOOL
isapi_async(isapi_ctx_t *ctx, DWORD n, PFN_HSE_IO_COMPLETION cb, void *arg,
    int write)
{
    ctx->op_busy = 1;
    ctx->op_bytes = n;
    ctx->op_cb = cb;
    ctx->op_ctx = arg;

    if (write) {
        if (ctx->api->on_drained(ctx->r, isapi_drained, ctx) == GN_OK) {
            return TRUE;
        }
    } else if (ctx->api->timer_add(ctx->r, 0, isapi_timer, ctx) != NULL) {
        return TRUE;
    }

    ctx->op_busy = 0;
    return isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
}


static BOOL WINAPI
isapi_write_client(HCONN ConnID, LPVOID Buffer, LPDWORD lpdwBytes,
    DWORD dwReserved)
{
    isapi_ctx_t  *ctx = isapi_ctx_of(ConnID);
    int           rc;

    if (isapi_on_thread()) {
        return isapi_marshal(ISAPI_CALL_WRITE, ConnID, Buffer, lpdwBytes,
                             NULL, dwReserved);
    }

    if (ctx != NULL && ctx->gone) {
        return isapi_fail(ERROR_NETNAME_DELETED);    /* as IIS's */
    }

    if (ctx == NULL || lpdwBytes == NULL || ctx->finished
        || (Buffer == NULL && *lpdwBytes > 0))
    {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    if (dwReserved & HSE_IO_ASYNC) {
        if (ctx->io_cb == NULL || ctx->op_busy) {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        if (isapi_stream(ctx) != GN_OK) {
            return isapi_fail(ERROR_INVALID_HANDLE);
        }
    } else if (ctx->pending && isapi_stream(ctx) != GN_OK) {
        return isapi_fail(ERROR_INVALID_HANDLE);
    }

    rc = *lpdwBytes > 0 ? ctx->api->write(ctx->r, Buffer, *lpdwBytes) : GN_OK;
    ctx->last_write = rc;
    if (rc == GN_ERROR) {
        return isapi_fail(ERROR_INVALID_HANDLE);
    }

    if (dwReserved & HSE_IO_ASYNC) {
        return isapi_async(ctx, *lpdwBytes, ctx->io_cb, ctx->io_ctx, 1);
    }

    return TRUE;
}


static BOOL WINAPI
isapi_read_client(HCONN ConnID, LPVOID lpvBuffer, LPDWORD lpdwSize)
{
    isapi_ctx_t  *ctx = isapi_ctx_of(ConnID);
    size_t        n;

    if (isapi_on_thread()) {
        return isapi_marshal(ISAPI_CALL_READ, ConnID, lpvBuffer, lpdwSize,
                             NULL, 0);
    }

    if (ctx != NULL && ctx->gone) {
        return isapi_fail(ERROR_NETNAME_DELETED);
    }

    if (ctx == NULL || lpdwSize == NULL || ctx->finished
        || (lpvBuffer == NULL && *lpdwSize > 0))
    {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    n = ctx->body_len - ctx->body_read;
    if (n > *lpdwSize) {
        n = *lpdwSize;
    }
    if (n > 0) {
        memcpy(lpvBuffer, ctx->body + ctx->body_read, n);
        ctx->body_read += n;
    }
    *lpdwSize = (DWORD) n;                  /* 0: the body is over */

    return TRUE;
}


/* ---- ServerSupportFunction --------------------------------------------- */

/* The file a URL names: the location's root and the URL, as the static
 * files map it (an alias is not applied). Its length, or 0 for a URL
 * that is not an absolute path without "..". */
static size_t
isapi_map(isapi_ctx_t *ctx, const char *url, char *out, size_t size,
    size_t *root_len)
{
    gn_str_t  root = ctx->api->document_root(ctx->r);
    size_t    ulen = strlen(url);

    if (url[0] != '/' || strstr(url, "/../") != NULL
        || (ulen >= 3 && strcmp(url + ulen - 3, "/..") == 0))
    {
        return 0;
    }

    *root_len = root.len;
    if (root.len + ulen + 1 > size) {
        return root.len + ulen + 1;         /* the room it needs */
    }

    if (root.len > 0) {
        memcpy(out, root.data, root.len);
    }
    memcpy(out + root.len, url, ulen + 1);

    return root.len + ulen + 1;
}


static BOOL
isapi_map_url(isapi_ctx_t *ctx, LPVOID lpvBuffer, LPDWORD lpdwSize)
{
    char    *buf = lpvBuffer, *url;
    size_t   need, root_len;

    if (buf == NULL || lpdwSize == NULL || *lpdwSize == 0
        || memchr(buf, '\0', *lpdwSize) == NULL)
    {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    url = ctx->api->request_alloc(ctx->r, strlen(buf) + 1);
    if (url == NULL) {
        return isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
    }
    strcpy(url, buf);

    need = isapi_map(ctx, url, buf, *lpdwSize, &root_len);
    if (need == 0) {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }
    if (need > *lpdwSize) {
        strcpy(buf, url);                   /* left as it was */
        *lpdwSize = (DWORD) need;
        return isapi_fail(ERROR_INSUFFICIENT_BUFFER);
    }

    *lpdwSize = (DWORD) need;
    return TRUE;
}


static BOOL
isapi_map_url_ex(isapi_ctx_t *ctx, LPVOID lpvBuffer, LPDWORD lpdwSize,
    LPDWORD lpdwDataType)
{
    HSE_URL_MAPEX_INFO  *mi = (HSE_URL_MAPEX_INFO *) lpdwDataType;
    size_t               need, root_len;

    if (lpvBuffer == NULL || mi == NULL) {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    need = isapi_map(ctx, lpvBuffer, mi->lpszPath, sizeof(mi->lpszPath),
                     &root_len);
    if (need == 0) {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }
    if (need > sizeof(mi->lpszPath)) {
        if (lpdwSize != NULL) {
            *lpdwSize = (DWORD) need;
        }
        return isapi_fail(ERROR_INSUFFICIENT_BUFFER);
    }

    mi->dwFlags = HSE_URL_FLAGS_READ | HSE_URL_FLAGS_SCRIPT
                  | HSE_URL_FLAGS_EXECUTE;
    mi->cchMatchingPath = (DWORD) root_len;
    mi->cchMatchingURL = 0;                 /* the root maps "/" */
    mi->dwReserved1 = 0;
    mi->dwReserved2 = 0;
    if (lpdwSize != NULL) {
        *lpdwSize = (DWORD) need;
    }

    return TRUE;
}


/* HSE_REQ_TRANSMIT_FILE: head, the file's range, tail. The file goes
 * with sendfile (the module ABI's send_fd, 1.9) unless the response
 * streams already (after PENDING, once written to): then its bytes are
 * read and written. The completion runs from the loop once all of it is
 * queued. */
static BOOL
isapi_transmit_file(isapi_ctx_t *ctx, HSE_TF_INFO *tf)
{
    const gn_api_t  *api = ctx->api;
    struct stat      st;
    unsigned char   *buf;
    off_t            off, end;
    ssize_t          n;
    DWORD            total = 0;
    int              fd;

    if (tf == NULL || (intptr_t) tf->hFile < 0 || ctx->op_busy
        || ((tf->dwFlags & HSE_IO_ASYNC) && tf->pfnHseIO == NULL
            && ctx->io_cb == NULL))
    {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    fd = (int) (intptr_t) tf->hFile;
    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
        return isapi_fail(ERROR_INVALID_HANDLE);
    }

    if (tf->dwFlags & HSE_IO_SEND_HEADERS) {
        if (!isapi_send_header(ctx, tf->pszStatusCode, -1,
                               (const char *) tf->pHead,
                               tf->pHead ? (long) tf->HeadLength : -1))
        {
            return FALSE;
        }
    } else if (tf->HeadLength > 0) {
        if (tf->pHead == NULL
            || api->write(ctx->r, tf->pHead, tf->HeadLength) == GN_ERROR)
        {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        total += tf->HeadLength;
    }

    off = (off_t) tf->Offset;
    end = tf->BytesToWrite > 0 ? off + (off_t) tf->BytesToWrite : st.st_size;
    if (off > st.st_size || end > st.st_size) {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    if (!ctx->streaming && GN_API_HAS(api, send_fd)) {
        if (api->send_fd(ctx->r, fd, off, end - off) != GN_OK) {
            return isapi_fail(ERROR_INVALID_HANDLE);
        }
        total += (DWORD) (end - off);
        off = end;
    }

    buf = api->request_alloc(ctx->r, ISAPI_TF_CHUNK);
    if (buf == NULL) {
        return isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
    }

    while (off < end) {
        n = pread(fd, buf, (size_t) (end - off) < ISAPI_TF_CHUNK
                           ? (size_t) (end - off) : ISAPI_TF_CHUNK, off);
        if (n <= 0) {
            if (n == -1 && errno == EINTR) {
                continue;
            }
            return isapi_fail(ERROR_INVALID_HANDLE);
        }
        if (api->write(ctx->r, buf, (size_t) n) == GN_ERROR) {
            return isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
        }
        off += n;
        total += (DWORD) n;
    }

    if (tf->TailLength > 0) {
        if (tf->pTail == NULL
            || api->write(ctx->r, tf->pTail, tf->TailLength) == GN_ERROR)
        {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        total += tf->TailLength;
    }

    if (tf->dwFlags & HSE_IO_ASYNC) {
        return isapi_async(ctx, total, tf->pfnHseIO ? tf->pfnHseIO
                                                    : ctx->io_cb,
                           tf->pfnHseIO ? tf->pContext : ctx->io_ctx, 1);
    }

    return TRUE;
}


static BOOL WINAPI
isapi_server_support(HCONN hConn, DWORD dwHSERequest, LPVOID lpvBuffer,
    LPDWORD lpdwSize, LPDWORD lpdwDataType)
{
    isapi_ctx_t              *ctx = isapi_ctx_of(hConn);
    HSE_SEND_HEADER_EX_INFO  *hi;
    gn_str_t                  conn;
    DWORD                     n;
    int                       v;

    if (isapi_on_thread()) {
        return isapi_marshal(ISAPI_CALL_SSF, hConn, lpvBuffer, lpdwSize,
                             lpdwDataType, dwHSERequest);
    }

    if (ctx != NULL && dwHSERequest == HSE_REQ_DONE_WITH_SESSION) {
        if (!ctx->finished) {
            ctx->done = 1;
            if (!ctx->in_proc && !ctx->op_busy) {
                isapi_finish(ctx, GN_OK);
            }
        }
        isapi_pending_drop(ctx);            /* last: ctx may be gone */
        return TRUE;
    }

    if (ctx == NULL || ctx->finished) {
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }

    switch (dwHSERequest) {

    case HSE_REQ_SEND_RESPONSE_HEADER:
        return isapi_send_header(ctx, lpvBuffer, -1,
                                 (const char *) lpdwDataType, -1);

    case HSE_REQ_SEND_RESPONSE_HEADER_EX:
        hi = lpvBuffer;
        if (hi == NULL) {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        return isapi_send_header(ctx, hi->pszStatus,
                                 hi->pszStatus && hi->cchStatus
                                 ? (long) hi->cchStatus : -1,
                                 hi->pszHeader,
                                 hi->pszHeader && hi->cchHeader
                                 ? (long) hi->cchHeader : -1);

    case HSE_REQ_SEND_URL_REDIRECT_RESP:
    case HSE_REQ_SEND_URL:              /* IIS 6 on: a redirect too */
        if (lpvBuffer == NULL || ((char *) lpvBuffer)[0] == '\0'
            || ctx->head_set || ctx->streaming)
        {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        ctx->head_set = 1;
        (void) ctx->api->set_status(ctx->r, 302);
        (void) ctx->api->set_header(ctx->r, "Location", lpvBuffer);
        return TRUE;

    case HSE_REQ_IO_COMPLETION:
        ctx->io_cb = (PFN_HSE_IO_COMPLETION) lpvBuffer;
        ctx->io_ctx = lpdwDataType;
        return TRUE;

    case HSE_REQ_ASYNC_READ_CLIENT:
        if (lpvBuffer == NULL || lpdwSize == NULL || ctx->io_cb == NULL
            || ctx->op_busy)
        {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        n = *lpdwSize;
        if (!isapi_read_client(hConn, lpvBuffer, &n)) {
            return FALSE;
        }
        *lpdwSize = n;
        return isapi_async(ctx, n, ctx->io_cb, ctx->io_ctx, 0);

    case HSE_REQ_TRANSMIT_FILE:
        return isapi_transmit_file(ctx, lpvBuffer);

    case HSE_REQ_MAP_URL_TO_PATH:
        return isapi_map_url(ctx, lpvBuffer, lpdwSize);

    case HSE_REQ_MAP_URL_TO_PATH_EX:
        return isapi_map_url_ex(ctx, lpvBuffer, lpdwSize, lpdwDataType);

    case HSE_REQ_IS_KEEP_CONN:
        if (lpvBuffer == NULL) {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        conn = ctx->api->header(ctx->r, "Connection");
        v = ctx->api->http_version(ctx->r);
        *(BOOL *) lpvBuffer =
            v >= 20 || (v == 11 && !(conn.len == 5
                                     && strncasecmp((char *) conn.data,
                                                    "close", 5) == 0))
            || (v == 10 && conn.len == 10
                && strncasecmp((char *) conn.data, "keep-alive", 10) == 0);
        return TRUE;

    case HSE_REQ_IS_CONNECTED:
        if (lpvBuffer == NULL) {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        /* a client that goes away ends the request, and with it every
         * call: while one runs, the client is there */
        *(BOOL *) lpvBuffer = TRUE;
        return TRUE;

    case HSE_APPEND_LOG_PARAMETER:
        if (lpvBuffer == NULL) {
            return isapi_fail(ERROR_INVALID_PARAMETER);
        }
        if (GN_API_HAS(ctx->api, log_note)) {
            return ctx->api->log_note(ctx->r, lpvBuffer) == GN_OK
                   ? TRUE : isapi_fail(ERROR_NOT_ENOUGH_MEMORY);
        }
        ctx->api->log(ctx->r, GN_LOG_INFO, "isapi \"%s\" log parameter: %s",
                      ctx->ext->path, (const char *) lpvBuffer);
        return TRUE;

    default:
        return isapi_fail(ERROR_INVALID_PARAMETER);
    }
}


/* ---- the request ------------------------------------------------------- */

/* The ECB's strings, in one block the request's state owns (a thread may
 * read them after the request's memory is gone). */
static int
isapi_strings(isapi_ctx_t *ctx)
{
    const gn_api_t  *api = ctx->api;
    gn_str_t         v[5];
    char            *p, **to[5];
    size_t           n = 0;
    int              i;

    v[0] = api->method(ctx->r);
    v[1] = api->query(ctx->r);
    v[2] = api->uri(ctx->r);
    v[3] = api->mapped_path(ctx->r);
    v[4] = api->header(ctx->r, "Content-Type");
    to[0] = &ctx->ecb.lpszMethod;
    to[1] = &ctx->ecb.lpszQueryString;
    to[2] = &ctx->ecb.lpszPathInfo;
    to[3] = &ctx->ecb.lpszPathTranslated;
    to[4] = &ctx->ecb.lpszContentType;

    for (i = 0; i < 5; i++) {
        n += v[i].len + 1;
    }

    p = malloc(n);
    if (p == NULL) {
        return GN_ERROR;
    }
    ctx->strings = p;

    for (i = 0; i < 5; i++) {
        if (v[i].len > 0) {
            memcpy(p, v[i].data, v[i].len);
        }
        p[v[i].len] = '\0';
        *to[i] = p;
        p += v[i].len + 1;
    }

    return GN_OK;
}


/* What HttpExtensionProc's result means for the request: GN_OK (it is
 * over), GN_AGAIN (it goes on: PENDING) or an error status. */
static int
isapi_status(isapi_ctx_t *ctx, DWORD st)
{
    switch (st) {

    case HSE_STATUS_SUCCESS:
    case HSE_STATUS_SUCCESS_AND_KEEP_CONN:
        return GN_OK;

    case HSE_STATUS_PENDING:
        /* DONE_WITH_SESSION (or an async completion that says it) ends
         * the request; from now on what is written streams. Until it
         * comes, the ECB stays valid, as IIS keeps it: a thread of the
         * extension may still hold it after the client has gone. */
        ctx->pending = 1;
        if (ctx->done) {
            return ctx->op_busy ? GN_AGAIN : GN_OK;
        }
        isapi_pending_add(ctx);
        return GN_AGAIN;

    default:
        ctx->api->log(ctx->r, GN_LOG_ERR, "isapi \"%s\": HttpExtensionProc "
                      "returned %s", ctx->ext->path,
                      st == HSE_STATUS_ERROR ? "HSE_STATUS_ERROR"
                                             : "an unknown status");
        return 500;
    }
}


/* HttpExtensionProc returned on a thread. */
static void
isapi_proc_done(isapi_ctx_t *ctx, DWORD st)
{
    int  rc;

    ctx->in_proc = 0;
    if (ctx->r == NULL || ctx->finished) {
        return;
    }

    rc = isapi_status(ctx, st);
    if (rc != GN_AGAIN) {
        isapi_finish(ctx, rc);
    }
}


/* Calls HttpExtensionProc: in the loop (its result), or on the pool
 * (GN_AGAIN: isapi_proc_done goes on). */
static int
isapi_start(isapi_ctx_t *ctx)
{
    EXTENSION_CONTROL_BLOCK  *ecb = &ctx->ecb;
    DWORD                     st;

    if (isapi_strings(ctx) != GN_OK) {
        return GN_ERROR;
    }

    ecb->cbSize = sizeof(EXTENSION_CONTROL_BLOCK);
    ecb->dwVersion = HSE_VERSION;
    ecb->ConnID = ctx;
    ecb->dwHttpStatusCode = 200;
    ecb->cbTotalBytes = (DWORD) ctx->body_len;
    ecb->cbAvailable = (DWORD) (ctx->body_len < ISAPI_READ_AHEAD
                                ? ctx->body_len : ISAPI_READ_AHEAD);
    ecb->lpbData = ctx->body != NULL ? ctx->body : (LPBYTE) "";
    ctx->body_read = ecb->cbAvailable;
    ecb->GetServerVariable = isapi_get_server_variable;
    ecb->WriteClient = isapi_write_client;
    ecb->ReadClient = isapi_read_client;
    ecb->ServerSupportFunction = isapi_server_support;

    ctx->in_proc = 1;

    if (ctx->threaded) {
        if (isapi_post(ctx, ISAPI_JOB_PROC, NULL, NULL, 0, 0) != GN_OK) {
            ctx->in_proc = 0;
            return GN_ERROR;
        }
        return GN_AGAIN;
    }

    st = ctx->ext->proc(ecb);
    ctx->in_proc = 0;

    return isapi_status(ctx, st);
}


/* The request ends (answered, or its client gone): what a thread may
 * still use stays until the thread is done with it. */
static void
isapi_gone(void *arg)
{
    isapi_ctx_t   *ctx = arg;
    isapi_call_t  *call = ctx->blocked;

    ctx->r = NULL;
    ctx->finished = 1;
    ctx->gone = 1;
    if (call != NULL) {
        ctx->blocked = NULL;
        isapi_call_return(call, FALSE, ERROR_NETNAME_DELETED);
    }

    /* an async operation that can no longer complete: its completion
     * with the error IIS gives for a connection that went away */
    if (ctx->op_busy && ctx->op_cb != NULL) {
        ctx->op_busy = 0;
        if (!ctx->threaded) {
            ctx->op_cb(&ctx->ecb, ctx->op_ctx, 0, ERROR_NETNAME_DELETED);
        } else if (isapi_post(ctx, ISAPI_JOB_COMPLETION, ctx->op_cb,
                              ctx->op_ctx, 0, ERROR_NETNAME_DELETED) != GN_OK)
        {
            ctx->api->log(NULL, GN_LOG_CRIT, "isapi: out of memory for the "
                          "completion of \"%s\"", ctx->ext->path);
        }
    }

    isapi_unref(ctx);                       /* last: ctx may be gone */
}


static void
isapi_body(const gn_api_t *api, gn_request_t *r, const unsigned char *data,
    size_t len, int last, void *arg)
{
    isapi_ctx_t    *ctx = arg;
    unsigned char  *p;
    size_t          cap;
    int             rc;

    if (len > 0) {
        if (ctx->body_len + len > ctx->body_cap) {
            cap = ctx->body_cap ? ctx->body_cap : 16384;
            while (cap < ctx->body_len + len) {
                cap *= 2;
            }
            p = realloc(ctx->body, cap);
            if (p == NULL) {
                isapi_finish(ctx, 500);
                return;
            }
            ctx->body = p;
            ctx->body_cap = cap;
        }
        memcpy(ctx->body + ctx->body_len, data, len);
        ctx->body_len += len;
    }

    if (!last || ctx->finished) {
        return;
    }

    if (ctx->body_len > UINT32_MAX) {
        api->log(r, GN_LOG_ERR, "isapi: a request body of 4 GiB or more "
                 "does not fit cbTotalBytes");
        isapi_finish(ctx, 413);
        return;
    }

    rc = isapi_start(ctx);
    if (rc != GN_AGAIN) {
        isapi_finish(ctx, rc);
    }
}


static int
isapi_handler(const gn_api_t *api, gn_request_t *r)
{
    isapi_conf_t  *cf = api->module_conf(r, &isapi_module);
    isapi_ctx_t   *ctx;
    isapi_ext_t   *e;
    int            rc;

    if (cf == NULL || cf->extension == NULL) {
        api->log(r, GN_LOG_ERR, "isapi: no isapi_extension for this "
                 "location");
        return 500;
    }

    e = isapi_find(cf->extension);
    if (e == NULL) {
        api->log(r, GN_LOG_ERR, "isapi: \"%s\" is not loaded",
                 cf->extension);
        return 500;
    }

    if (isapi_setup(api) != GN_OK
        || (cf->threads > 0 && isapi_pool(cf->threads) != GN_OK))
    {
        api->log(r, GN_LOG_CRIT, "isapi: cannot start the loop's eventfd or "
                 "the thread pool (isapi_threads %lld): %s",
                 (long long) cf->threads, strerror(errno));
        return 500;
    }

    ctx = calloc(1, sizeof(isapi_ctx_t));
    if (ctx == NULL) {
        return GN_ERROR;
    }
    ctx->api = api;
    ctx->r = r;
    ctx->ext = e;
    ctx->refs = 1;
    ctx->threaded = cf->threads > 0;

    if (api->cleanup_add(r, isapi_gone, ctx) != GN_OK) {
        free(ctx);
        return GN_ERROR;
    }

    if (api->body_length(r) != 0) {
        return api->read_body(r, isapi_body, ctx) == GN_OK ? GN_AGAIN
                                                          : GN_ERROR;
    }

    rc = isapi_start(ctx);
    ctx->finished = rc != GN_AGAIN;         /* the handler's result ends it */
    return rc;
}
