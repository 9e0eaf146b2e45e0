/*
 * mod_specweb99: the dynamic part of the SPECweb99-style workload
 * (issue 7; the workload is described in doc/specweb99.md).
 *
 *     load_module /usr/local/lib/gannet/mod_specweb99.so;
 *
 *     location /specweb99 {
 *         handler specweb99;
 *         specweb99_root /srv/specweb99;     # file_set/, User.Personality,
 *                                            # Custom.Ads, post.log
 *         specweb99_tool /usr/local/bin/gannet-specweb99;   # for Reset
 *     }
 *
 * Requests (ROOT is specweb99_root):
 *
 *   GET  /specweb99?/file_set/dirNNNNN/classX_Y         standard dynamic GET
 *   GET  ... the same with Cookie: my_cookie=user_id=U&last_ad=A
 *                                                       custom ad rotation
 *   POST /specweb99  urlroot=/file_set/&dir=N&class=X&num=Y&client=C
 *                    (with the my_cookie cookie)         dynamic POST
 *   GET  /specweb99?command/Reset&maxload=N&pttime=T&maxthread=M&exp=E1,E2
 *                    &urlroot=URL                       Reset
 *   GET  /specweb99?command/Fetch                       Fetch
 *
 * Every page but Fetch is the wrapper (Content-Type: text/html):
 *
 *   <html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n
 *   <body>\n<p>SERVER_SOFTWARE = S\n<p>REMOTE_ADDR = A\n<p>SCRIPT_NAME = N\n
 *   <p>QUERY_STRING = Q\n<pre>\n  FILE BYTES  \n</pre>\n</body></html>\n
 *
 * (the values are the server variables of the same names; Reset sends it
 * with no file bytes).
 *
 * Custom ad rotation. User.Personality holds one 15-byte record per user,
 * "%5d %8X\n" (id, demographics); the record of user_id U is the one at
 * index U - 10000. Custom.Ads holds 360 records of 39 bytes,
 * "%5d %8X %8X %3d %10d\n" (id, demographics, weightings, minmatch,
 * expiry as unix time); the ad id is the record's index. The scan visits
 * all the ads once, from last_ad + 1 on, wrapping after the last, so that
 * last_ad itself comes last; for each, dem = user.dem & ad.dem and the
 * weight is the sum of the nibbles of ad.weightings whose attribute
 * matches:
 *
 *   dem & 0x30000000  gender      (weightings >> 16) & 0xf
 *   dem & 0x0f000000  age group   (weightings >> 12) & 0xf
 *   dem & 0x00f00000  region      (weightings >> 8) & 0xf
 *   dem & 0x000ffc00  interest 1  (weightings >> 4) & 0xf
 *   dem & 0x000003ff  interest 2  weightings & 0xf
 *
 * The first ad with weight >= minmatch is the answer; it is expired when
 * time(NULL) > expiry:
 *
 *   Set-Cookie: found_cookie=Ad_id=<id>&Ad_weight=<w>&Expired=<0|1>
 *
 * Errors (no or a malformed cookie, user_id out of the file, last_ad not
 * in 0..359, the data files missing, no ad matching at all) answer
 * "Ad_id=-1&Ad_weight=0&Expired=0" and the page is served unchanged. For
 * a class 1 or 2 file and an ad id >= 0 each
 * <!WEB99CAD><IMG SRC="/file_set/dirNNNNN/classX_Y"><!/WEB99CAD> is
 * rewritten with NNNNN = id / 36 (5 digits), X = (id % 36) / 9 and
 * Y = id % 9. Each child keeps both files in memory and re-reads them
 * when their mtime, size or inode changed, checked at most once a second.
 *
 * POST. Under an exclusive flock() on ROOT/post.log (the children are
 * processes: each request opens the file, so each has its own open file
 * description and the lock works between them and within one child), the
 * count in the 11-byte header "%10d\n" is read, the 139-byte record
 *
 *   "%10d %10ld %10d %5d %2d %2d %10d %-60.60s %10d %10d\n"
 *
 * (record number counting from 1, time(), the child's pid, dir, class,
 * num, client, the file name urlroot + "dirNNNNN/classX_Y", the pid again
 * as the thread id -- a child is one thread --, the cookie's user_id) is
 * written at 11 + count * 139 and the header is rewritten with count + 1.
 * The answer is the file in the wrapper with Set-Cookie: my_cookie=<U>.
 *
 * Reset runs `TOOL upfgen -C ROOT -n maxload [-t maxthread]` and then
 * `TOOL cadgen -C ROOT -e pttime [-t maxthread] [E1 E2]` (exp=E1,E2;
 * urlroot is not used; TOOL is specweb99_tool, found in PATH without a '/';
 * "off" skips them), each forked and exec'ed with its stderr on a pipe
 * watched by the event loop (its lines are logged), so the child keeps
 * serving meanwhile; then it truncates post.log to "         0\n" (under
 * the lock), re-reads the data files and answers the empty wrapper.
 * A generator that fails gives a 500. Fetch rewrites the header with the
 * number of complete records (under the lock) and answers the whole log
 * as text/plain.
 *
 * What blocks. The file bytes of a dynamic GET and a POST go out through
 * the server's send_file, and a CAD page of class 1 or 2 (at most 90 KiB)
 * comes from its read_file and is copied to rewrite its tags: both use
 * the server's open-file cache (no system call on a hit, small files from
 * memory; sendfile() or one pread() for the others). The two data files
 * (on a change) and the post log (for Fetch) are read() into memory, and
 * the post log is updated under flock(): these are page-cache reads and
 * writes of a few hundred bytes, and the lock is held for three short
 * pread/pwrite calls, never across an event.
 *
 * The code. The logic above (parsers, the data files and the ad scan,
 * tag rewriting, the post log, Reset's parameters, the page's wrapper)
 * is specweb99_logic.c, in libc and POSIX only, which isapi_specweb99.c
 * shares; this file is the module's glue to it: the API calls, the
 * per-request state, Reset's generators under the event loop.
 */

#define _GNU_SOURCE  1                  /* pipe2 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#include <gannet/module.h>

#include "specweb99_logic.h"


#define SW_MAX_CAD     (1024 * 1024)
#define SW_MAX_ZOMBIES 16


typedef struct {
    const char  *root;          /* specweb99_root */
    const char  *tool;          /* specweb99_tool */
} sw_conf_t;


/* The argument of specweb99_logic.c's callbacks (sw_errlog, sw_out): the
 * request, or NULL for what is logged outside one. */
typedef struct {
    const gn_api_t  *api;
    gn_request_t    *r;
} sw_glue_t;


/* Per request. */
typedef struct {
    const gn_api_t  *api;
    gn_request_t    *r;
    sw_conf_t       *conf;

    /* POST */
    unsigned char    body[SW_MAX_BODY];
    size_t           len;
    int              too_large;
    int64_t          user;

    /* Reset */
    sw_reset_args_t  args;
    int              step;          /* 0: upfgen, 1: cadgen */
    pid_t            pid;
    int              fd;
    gn_watch_t      *watch;
    char             err[512];
    size_t           nerr;
} sw_ctx_t;


static int sw_init_child(const gn_api_t *api, void *conf);
static void sw_exit_child(const gn_api_t *api);
static int sw_handler(const gn_api_t *api, gn_request_t *r);


static const gn_directive_t  sw_directives[] = {

    { "specweb99_root", GN_DIR_STRING,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(sw_conf_t, root), NULL },

    { "specweb99_tool", GN_DIR_STRING,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(sw_conf_t, tool), "gannet-specweb99" },

    { NULL, 0, 0, 0, NULL }
};


static const gn_module_t  sw_module = {
    GN_MODULE_V1,
    "specweb99",
    "1.0",
    sw_directives,
    sizeof(sw_conf_t),

    NULL,
    sw_init_child,
    sw_handler,

    NULL,
    NULL,
    NULL,

    sw_exit_child
};

GN_MODULE_EXPORT(sw_module)


static sw_data_t  *sw_data;           /* per child */
static pid_t       sw_zombies[SW_MAX_ZOMBIES];


/* ---- glue to specweb99_logic.c ------------------------------------------ */

/* Where the logic's error lines go: the error log. */
static void
sw_errlog(void *arg, const char *line)
{
    sw_glue_t  *g = arg;

    g->api->log(g->r, GN_LOG_ERR, "%s", line);
}


/* Where Fetch's body goes: the response. */
static int
sw_out(void *arg, const void *data, size_t len)
{
    sw_glue_t  *g = arg;

    return g->api->write(g->r, data, len) == GN_ERROR ? -1 : 0;
}


/* A server string as the logic's. */
static sw_str_t
sw_s(gn_str_t s)
{
    sw_str_t  v;

    v.len = s.len;
    v.data = s.data;

    return v;
}


/* The data files of `root` (force: now); their errors are logged
 * without a request. */
static sw_data_t *
sw_data_load(const gn_api_t *api, const char *root, int force)
{
    sw_glue_t  g = { api, NULL };

    return sw_data_get(&sw_data, root, force, sw_errlog, &g);
}


/* ---- the wrapper --------------------------------------------------------- */

static int
sw_head(const gn_api_t *api, gn_request_t *r)
{
    int       n;
    char     *buf;
    size_t    size;
    gn_str_t  soft, addr, script, query;

    soft = api->variable(r, "SERVER_SOFTWARE");
    addr = api->variable(r, "REMOTE_ADDR");
    script = api->variable(r, "SCRIPT_NAME");
    query = api->variable(r, "QUERY_STRING");

    size = sizeof(SW_HEAD1) + 128 + soft.len + addr.len + script.len
           + query.len;

    buf = api->request_alloc(r, size);
    if (buf == NULL) {
        return GN_ERROR;
    }

    n = sw_head_format(buf, size, sw_s(soft), sw_s(addr), sw_s(script),
                       sw_s(query));
    if (n < 0) {
        return GN_ERROR;
    }

    api->set_header(r, "Content-Type", "text/html");

    return api->write(r, buf, (size_t) n) == GN_ERROR ? GN_ERROR : GN_OK;
}


/* After send_file or read_file of `path` failed: the hook's result. */
static int
sw_file_failed(const gn_api_t *api, gn_request_t *r, const char *path)
{
    if (errno == ENOMEM) {
        return GN_ERROR;
    }

    api->log(r, GN_LOG_ERR, "specweb99: \"%s\": %s", path, strerror(errno));

    return 404;                     /* the server drops what was written */
}


/* The wrapper around the file at `path` (the server's send_file: its
 * open-file cache, sendfile() for the large ones). */
static int
sw_page(const gn_api_t *api, gn_request_t *r, const char *path)
{
    if (sw_head(api, r) != GN_OK) {
        return GN_ERROR;
    }

    if (api->send_file(r, path, 0, -1) != GN_OK) {
        return sw_file_failed(api, r, path);
    }

    if (api->write(r, SW_TAIL, sizeof(SW_TAIL) - 1) == GN_ERROR) {
        return GN_ERROR;
    }

    return GN_OK;
}


/* ---- dynamic GET and CAD ------------------------------------------------- */

static int
sw_get(const gn_api_t *api, gn_request_t *r, sw_conf_t *cf)
{
    int                   id;
    char                 *path, cookie[128];
    size_t                size, len;
    int64_t               user, last;
    gn_str_t              q, c;
    sw_data_t            *d;
    unsigned char        *buf;
    const unsigned char  *data;

    q = api->query(r);
    if (!sw_safe_path(q.data, q.len)) {
        return 400;
    }

    size = strlen(cf->root) + q.len + 1;
    path = api->request_alloc(r, size);
    if (path == NULL) {
        return GN_ERROR;
    }
    snprintf(path, size, "%s%.*s", cf->root, sw_str(q));

    c = api->header(r, "Cookie");
    if (c.len == 0) {
        return sw_page(api, r, path);
    }

    if (!sw_cookie(c.data, c.len, &user, &last)) {
        return sw_page(api, r, path);        /* no my_cookie: plain GET */
    }

    d = sw_data_load(api, cf->root, 0);
    id = sw_cad_select(d, user, last, path, cookie, sizeof(cookie));
    api->add_header(r, "Set-Cookie", cookie);

    if (id < 0) {
        return sw_page(api, r, path);
    }

    /* a small page: its bytes through the server's file cache, copied
     * to rewrite its ad tags */
    if (api->read_file(r, path, SW_MAX_CAD, &data, &len) != GN_OK) {
        return sw_file_failed(api, r, path);
    }

    buf = api->request_alloc(r, len + 1);
    if (buf == NULL) {
        return GN_ERROR;
    }
    memcpy(buf, data, len);

    sw_rewrite(buf, len, id);

    if (sw_head(api, r) != GN_OK
        || api->write(r, buf, len) == GN_ERROR
        || api->write(r, SW_TAIL, sizeof(SW_TAIL) - 1) == GN_ERROR)
    {
        return GN_ERROR;
    }

    return GN_OK;
}


/* ---- POST ---------------------------------------------------------------- */

static void
sw_post_done(sw_ctx_t *ctx)
{
    char             cookie[64], *path;
    size_t           size;
    sw_post_t        post;
    sw_glue_t        g;
    gn_request_t    *r = ctx->r;
    const gn_api_t  *api = ctx->api;

    if (sw_post_parse(&post, ctx->body, ctx->len) != 0) {
        api->finish(r, 400);
        return;
    }

    /* the record's thread id is the pid: a child is one thread */
    g.api = api;
    g.r = r;
    if (sw_post_log(ctx->conf->root, &post, ctx->user, sw_errlog, &g) != 0) {
        api->finish(r, GN_ERROR);
        return;
    }

    size = strlen(ctx->conf->root) + strlen(post.file) + 1;
    path = api->request_alloc(r, size);
    if (path == NULL) {
        api->finish(r, GN_ERROR);
        return;
    }
    snprintf(path, size, "%s%s", ctx->conf->root, post.file);

    snprintf(cookie, sizeof(cookie), "my_cookie=%d", (int) ctx->user);
    api->add_header(r, "Set-Cookie", cookie);

    api->finish(r, sw_page(api, r, path));
}


static void
sw_post_body(const gn_api_t *api, gn_request_t *r, const unsigned char *data,
    size_t len, int last, void *arg)
{
    sw_ctx_t  *ctx = arg;

    if (len > sizeof(ctx->body) - ctx->len) {
        ctx->too_large = 1;
    }

    if (!ctx->too_large && len > 0) {
        memcpy(ctx->body + ctx->len, data, len);
        ctx->len += len;
    }

    if (!last) {
        return;
    }

    if (ctx->too_large) {
        api->finish(r, 413);
        return;
    }

    sw_post_done(ctx);
}


/* The state of a request that outlives its handler call (a POST body, a
 * Reset's work), in the request's memory. */
static sw_ctx_t *
sw_ctx_new(const gn_api_t *api, gn_request_t *r, sw_conf_t *cf)
{
    sw_ctx_t  *ctx;

    ctx = api->request_alloc(r, sizeof(sw_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }

    memset(ctx, 0, sizeof(sw_ctx_t));
    ctx->api = api;
    ctx->r = r;
    ctx->conf = cf;
    ctx->fd = -1;

    return ctx;
}


static int
sw_post(const gn_api_t *api, gn_request_t *r, sw_conf_t *cf)
{
    int64_t    last;
    gn_str_t   c;
    sw_ctx_t  *ctx;

    ctx = sw_ctx_new(api, r, cf);
    if (ctx == NULL) {
        return GN_ERROR;
    }

    c = api->header(r, "Cookie");
    (void) sw_cookie(c.data, c.len, &ctx->user, &last);
    if (ctx->user < 0 || ctx->user > 2147483647) {
        return 400;
    }

    if (api->read_body(r, sw_post_body, ctx) != GN_OK) {
        return GN_ERROR;
    }

    return GN_AGAIN;
}


/* ---- Fetch --------------------------------------------------------------- */

static int
sw_fetch(const gn_api_t *api, gn_request_t *r, sw_conf_t *cf)
{
    int        fd, rc;
    off_t      size;
    sw_glue_t  g = { api, r };

    fd = sw_log_lock(cf->root, sw_errlog, &g);
    if (fd == -1) {
        return GN_ERROR;
    }

    rc = sw_log_repair(fd, &size);

    api->set_header(r, "Content-Type", "text/plain");

    if (rc == 0) {
        rc = sw_log_copy(fd, size, sw_out, &g);
    }

    close(fd);

    return rc == 0 ? GN_OK : GN_ERROR;
}


/* ---- Reset --------------------------------------------------------------- */

static void
sw_reap(void)
{
    int  i;

    for (i = 0; i < SW_MAX_ZOMBIES; i++) {
        if (sw_zombies[i] > 0 && waitpid(sw_zombies[i], NULL, WNOHANG) != 0) {
            sw_zombies[i] = 0;
        }
    }
}


/* The request ended with a generator still running. */
static void
sw_reset_cleanup(void *arg)
{
    int        i;
    sw_ctx_t  *ctx = arg;

    if (ctx->fd != -1) {
        close(ctx->fd);
        ctx->fd = -1;
    }

    if (ctx->pid <= 0) {
        return;
    }

    kill(ctx->pid, SIGKILL);

    if (waitpid(ctx->pid, NULL, WNOHANG) == 0) {
        for (i = 0; i < SW_MAX_ZOMBIES; i++) {
            if (sw_zombies[i] == 0) {
                sw_zombies[i] = ctx->pid;
                break;
            }
        }
    }

    ctx->pid = 0;
}


static int sw_reset_spawn(sw_ctx_t *ctx);


/* Truncates the post log, re-reads the data files, writes the page. */
static int
sw_reset_finish(sw_ctx_t *ctx)
{
    int              fd, rc;
    const gn_api_t  *api = ctx->api;
    gn_request_t    *r = ctx->r;
    sw_glue_t        g = { api, r };

    fd = sw_log_lock(ctx->conf->root, sw_errlog, &g);
    if (fd == -1) {
        return GN_ERROR;
    }

    rc = sw_log_truncate(fd, sw_errlog, &g) == 0 ? GN_OK : GN_ERROR;

    close(fd);

    (void) sw_data_load(api, ctx->conf->root, 1);

    if (rc == GN_OK) {
        rc = sw_head(api, r);
    }

    if (rc == GN_OK
        && api->write(r, SW_TAIL, sizeof(SW_TAIL) - 1) == GN_ERROR)
    {
        rc = GN_ERROR;
    }

    return rc;
}


static void
sw_reset_wait(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    int        st;
    pid_t      pid;
    sw_ctx_t  *ctx = arg;

    pid = waitpid(ctx->pid, &st, WNOHANG);

    if (pid == 0) {
        /* stderr closed, not yet exited: look again soon */
        if (api->timer_add(ctx->r, 10, sw_reset_wait, ctx) == NULL) {
            api->finish(ctx->r, GN_ERROR);
        }
        return;
    }

    ctx->pid = 0;

    if (ctx->nerr > 0) {
        api->log(ctx->r, GN_LOG_NOTICE, "specweb99: %s %s: %.*s",
                 ctx->conf->tool, ctx->step ? "cadgen" : "upfgen",
                 (int) ctx->nerr, ctx->err);
    }

    if (pid == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        api->log(ctx->r, GN_LOG_ERR,
                 "specweb99: \"%s %s\" failed (status %d)", ctx->conf->tool,
                 ctx->step ? "cadgen" : "upfgen", pid == -1 ? -1 : st);
        api->finish(ctx->r, GN_ERROR);
        return;
    }

    if (ctx->step == 0) {
        ctx->step = 1;
        if (sw_reset_spawn(ctx) != GN_OK) {
            api->finish(ctx->r, GN_ERROR);
        }
        return;
    }

    api->finish(ctx->r, sw_reset_finish(ctx));
}


static void
sw_reset_read(const gn_api_t *api, gn_watch_t *w, int fd, int events,
    void *arg)
{
    char       buf[512];
    size_t     k;
    ssize_t    n;
    sw_ctx_t  *ctx = arg;

    for ( ;; ) {
        n = read(ctx->fd, buf, sizeof(buf));

        if (n > 0) {
            k = (size_t) n;
            if (k > sizeof(ctx->err) - ctx->nerr) {
                k = sizeof(ctx->err) - ctx->nerr;
            }
            memcpy(ctx->err + ctx->nerr, buf, k);
            ctx->nerr += k;
            continue;
        }

        if (n == -1 && errno == EINTR) {
            continue;
        }

        if (n == -1 && errno == EAGAIN) {
            return;
        }

        break;      /* EOF (or an error): the generator is done */
    }

    api->unwatch(ctx->watch);
    ctx->watch = NULL;
    close(ctx->fd);
    ctx->fd = -1;

    ctx->nerr = sw_chomp(ctx->err, ctx->nerr);

    sw_reset_wait(api, NULL, ctx);
}


/* Forks and execs the generator of ctx->step. */
static int
sw_reset_spawn(sw_ctx_t *ctx)
{
    int              pfd[2], nul, fd;
    char            *argv[16];
    sigset_t         set;
    pid_t            pid;
    const gn_api_t  *api = ctx->api;

    sw_reset_argv(argv, ctx->conf->tool, ctx->conf->root, &ctx->args,
                  ctx->step);

    if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) == -1) {
        api->log(ctx->r, GN_LOG_ERR, "specweb99: pipe() failed: %s",
                 strerror(errno));
        return GN_ERROR;
    }

    pid = fork();

    if (pid == -1) {
        api->log(ctx->r, GN_LOG_ERR, "specweb99: fork() failed: %s",
                 strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return GN_ERROR;
    }

    if (pid == 0) {
        /* the generator: stdin and stdout /dev/null, stderr the pipe,
         * nothing else of the server's, default signals */
        nul = open("/dev/null", O_RDWR);
        if (nul == -1 || dup2(nul, 0) == -1 || dup2(nul, 1) == -1
            || dup2(pfd[1], 2) == -1)
        {
            _exit(126);
        }

        for (fd = 3; fd < 65536; fd++) {
            if (close(fd) == -1 && errno == EBADF && fd > 1024) {
                break;
            }
        }

        sigemptyset(&set);
        sigprocmask(SIG_SETMASK, &set, NULL);
        signal(SIGPIPE, SIG_DFL);

        execvp(argv[0], argv);
        dprintf(2, "exec \"%s\": %s\n", argv[0], strerror(errno));
        _exit(127);
    }

    close(pfd[1]);
    ctx->pid = pid;
    ctx->fd = pfd[0];

    ctx->watch = api->watch_fd(ctx->r, ctx->fd, GN_WATCH_READ,
                               sw_reset_read, ctx);
    if (ctx->watch == NULL) {
        return GN_ERROR;        /* the cleanup kills it */
    }

    return GN_OK;
}


static int
sw_reset(const gn_api_t *api, gn_request_t *r, sw_conf_t *cf)
{
    gn_str_t   q;
    sw_ctx_t  *ctx;

    ctx = sw_ctx_new(api, r, cf);
    if (ctx == NULL) {
        return GN_ERROR;
    }

    q = api->query(r);
    q.data += 14;      /* "command/Reset&" */
    q.len = q.len > 14 ? q.len - 14 : 0;

    if (sw_reset_parse(sw_s(q), &ctx->args) != 0) {
        if (cf->tool != NULL && strcmp(cf->tool, "off") != 0) {
            return 400;
        }
    }

    if (cf->tool == NULL || strcmp(cf->tool, "off") == 0) {
        return sw_reset_finish(ctx);
    }

    if (api->cleanup_add(r, sw_reset_cleanup, ctx) != GN_OK
        || sw_reset_spawn(ctx) != GN_OK)
    {
        return GN_ERROR;
    }

    return GN_AGAIN;
}


/* ---- the handler --------------------------------------------------------- */

static int
sw_handler(const gn_api_t *api, gn_request_t *r)
{
    gn_str_t    method, q;
    sw_conf_t  *cf;

    cf = api->module_conf(r, &sw_module);
    if (cf == NULL || cf->root == NULL) {
        api->log(r, GN_LOG_ERR, "specweb99: no specweb99_root here");
        return GN_ERROR;
    }

    sw_reap();

    method = api->method(r);
    q = api->query(r);

    switch (sw_route(method.data, method.len, q.data, q.len)) {
    case SW_OP_POST:
        return sw_post(api, r, cf);
    case SW_OP_NOT_ALLOWED:
        api->set_header(r, "Allow", "GET, POST");
        return 405;
    case SW_OP_FETCH:
        return sw_fetch(api, r, cf);
    case SW_OP_RESET:
        return sw_reset(api, r, cf);
    case SW_OP_BAD:
        return 400;
    default:                            /* SW_OP_GET */
        return sw_get(api, r, cf);
    }
}


/* ---- process hooks ------------------------------------------------------- */

static int
sw_init_child(const gn_api_t *api, void *conf)
{
    sw_conf_t  *cf = conf;

    if (cf != NULL && cf->root != NULL) {
        (void) sw_data_load(api, cf->root, 1);
    }

    return GN_OK;
}


static void
sw_exit_child(const gn_api_t *api)
{
    sw_data_free(&sw_data);
}
