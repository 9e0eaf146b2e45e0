/*
 * isapi_specweb99: the dynamic part of the SPECweb99-style workload as an
 * ISAPI extension (issue 24, item 6): the operations of mod_specweb99
 * (modules/specweb99/mod_specweb99.c, whose header comment gives every
 * byte of them) against Microsoft's <windows.h> and <httpext.h> only, as
 * an IIS or Zeus extension is, and run by mod_isapi:
 *
 *     load_module /usr/local/lib/gannet/mod_isapi.so;
 *
 *     location /specweb99 {
 *         handler isapi;
 *         isapi_extension /path/to/isapi_specweb99.so;
 *         root /srv/specweb99;      # file_set/, User.Personality,
 *     }                             # Custom.Ads, post.log
 *
 * An extension has no directives of its own, so:
 *
 *   - the data directory (ROOT) is the location's root, as the server
 *     tells it: GetServerVariable("APPL_PHYSICAL_PATH");
 *   - Reset's generator is named by the first line of ROOT/specweb99.tool
 *     (a path, or a name looked up in PATH; "off": no generator), and is
 *     gannet-specweb99 in PATH without that file -- the defaults of
 *     mod_specweb99's specweb99_tool. A file in the data directory, as the
 *     CGI variant's specweb99.root is beside it: per location, read at each
 *     Reset, so no restart is needed to change it.
 *
 * The pages, cookies, ad rotation, post log (format and flock() between
 * the children) and Fetch are mod_specweb99's, byte for byte: the same
 * code, specweb99_logic.c (libc and POSIX only, compiled into both), of
 * which this file is the ISAPI glue. Where they differ in means:
 *
 *   - The file set. The server's open-file cache is not an ISAPI
 *     callback, so the extension keeps its own, per child: files of at
 *     most SW_CACHE_FILE bytes (classes 0 to 2, every page whose ad tags
 *     may be rewritten) in memory, looked at again (stat) at most every
 *     SW_CACHE_VALID seconds, up to SW_CACHE_MAX bytes in all. Pages below
 *     SW_SEND_MEM bytes go out from it by WriteClient (one copy, as the
 *     server's own small files); larger ones with HSE_REQ_TRANSMIT_FILE
 *     (sendfile), opened for the request.
 *   - Reset. HttpExtensionProc must not block the child's event loop
 *     (isapi_threads 0), and the generators run for seconds: it starts a
 *     thread of its own, which runs them (posix_spawn, stderr on a pipe)
 *     and waits for them, truncates the post log, and answers through
 *     the server (mod_isapi carries a foreign thread's calls over to the
 *     loop); HttpExtensionProc returns HSE_STATUS_PENDING and the thread
 *     ends the request with HSE_REQ_DONE_WITH_SESSION. The thread only
 *     flags the data files for a re-read: the loop does it, at its next
 *     CAD request, so the data is never shared between threads. A client
 *     that goes away does not stop a generator (mod_specweb99 kills it).
 *   - Logging: what mod_specweb99 logs goes through
 *     HSE_APPEND_LOG_PARAMETER (the request's access-log line, in
 *     Gannet's $module_log).
 *
 * Everything else runs in the loop and does what mod_specweb99 does
 * there: page-cache reads of the data files, and the post log under
 * flock() for three short pread/pwrite calls.
 */

#define _GNU_SOURCE  1                  /* pipe2 */

#include <windows.h>
#include <httpext.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "specweb99_logic.h"


#define SW_MAX_VAR     4096

#define SW_CACHE_FILE  (128 * 1024)     /* classes 0 to 2 */
#define SW_CACHE_MAX   (256 * 1024 * 1024)
#define SW_CACHE_VALID 10               /* seconds */
#define SW_CACHE_HASH  16384
#define SW_SEND_MEM    (16 * 1024)      /* the server's sendfile_min_size */

#define SW_TEXT_HTML   "Content-Type: text/html\r\n"

extern char  **environ;


/* Per child: a file of the file set in memory (the loop's thread only). */
typedef struct sw_file_s {
    struct sw_file_s  *next;
    char              *path;
    unsigned char     *data;
    size_t             len;
    struct stat        st;
    time_t             checked;
} sw_file_t;


/* A Reset, handed to its thread. */
typedef struct {
    EXTENSION_CONTROL_BLOCK  *ecb;
    char                      root[SW_MAX_PATH];
    char                      tool[SW_MAX_PATH];
    sw_reset_args_t           args;
    char                     *page;          /* header lines and wrapper */
} sw_reset_t;


static sw_data_t   *sw_data;
static sw_file_t   *sw_files[SW_CACHE_HASH];
static size_t       sw_cached;
static int          sw_reload;          /* a Reset's thread: re-read */


/* ---- helpers ------------------------------------------------------------ */

/*
 * A server variable into buf (size bytes); its length, or -1 when the
 * server has none (an absent request field) or it does not fit.
 */
static long
sw_var(EXTENSION_CONTROL_BLOCK *ecb, const char *name, char *buf, DWORD size)
{
    DWORD  n = size;

    if (!ecb->GetServerVariable(ecb->ConnID, (LPSTR) name, buf, &n)
        || n == 0)
    {
        return -1;
    }

    return (long) n - 1;              /* n counts the NUL */
}


/* What mod_specweb99 logs: the error log, through the server. */
static void
sw_log(EXTENSION_CONTROL_BLOCK *ecb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
sw_log(EXTENSION_CONTROL_BLOCK *ecb, const char *fmt, ...)
{
    char     msg[1024];
    va_list  ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    (void) ecb->ServerSupportFunction(ecb->ConnID, HSE_APPEND_LOG_PARAMETER,
                                      msg, NULL, NULL);
}


/* Where specweb99_logic.c's error lines go: sw_log(). */
static void
sw_errlog(void *arg, const char *line)
{
    sw_log(arg, "%s", line);
}


/* A server variable from sw_var() (its length n, -1: none) as a string:
 * its bytes up to the NUL, what "%s" printed of it. */
static sw_str_t
sw_var_str(long n, const char *v)
{
    sw_str_t  s;

    s.data = (const unsigned char *) v;
    s.len = n >= 0 ? strlen(v) : 0;

    return s;
}


/* ---- the file set in memory ---------------------------------------------- */

static unsigned
sw_hash(const char *s)
{
    unsigned  h = 2166136261u;

    while (*s != '\0') {
        h = (h ^ (unsigned char) *s++) * 16777619u;
    }

    return h % SW_CACHE_HASH;
}


/*
 * The file at path: from memory when it is small (*f set, checked at most
 * every SW_CACHE_VALID seconds), else *f NULL and the caller opens it. -1
 * with errno when it is not there (or not a regular file). The loop's
 * thread only.
 */
static int
sw_file(const char *path, sw_file_t **f)
{
    unsigned        h;
    time_t          now;
    size_t          len;
    sw_file_t      *e;
    struct stat     st;
    unsigned char  *data;

    *f = NULL;
    now = time(NULL);
    h = sw_hash(path);

    for (e = sw_files[h]; e != NULL; e = e->next) {
        if (strcmp(e->path, path) == 0) {
            break;
        }
    }

    if (e != NULL && now - e->checked < SW_CACHE_VALID) {
        *f = e;
        return 0;
    }

    if (stat(path, &st) == -1) {
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return -1;
    }

    if (e != NULL && sw_same(&st, &e->st)) {
        e->checked = now;
        *f = e;
        return 0;
    }

    if (st.st_size > SW_CACHE_FILE
        || (e == NULL && sw_cached + (size_t) st.st_size > SW_CACHE_MAX))
    {
        return 0;                       /* large, or no room: opened */
    }

    data = sw_read_file(path, SW_CACHE_FILE, &len, &st);
    if (data == NULL) {
        return errno == EFBIG ? 0 : -1;
    }

    if (e == NULL) {
        e = calloc(1, sizeof(sw_file_t));
        if (e == NULL || (e->path = strdup(path)) == NULL) {
            free(e);
            free(data);
            return 0;
        }
        e->next = sw_files[h];
        sw_files[h] = e;
    } else {
        sw_cached -= e->len;
        free(e->data);
    }

    e->data = data;
    e->len = len;
    e->st = st;
    e->checked = now;
    sw_cached += len;
    *f = e;

    return 0;
}


/* ---- the response -------------------------------------------------------- */

/* An error status with a short page (500: HSE_STATUS_ERROR does it). */
static DWORD
sw_error(EXTENSION_CONTROL_BLOCK *ecb, int status)
{
    const char  *line, *head;

    switch (status) {
    case 400:
        line = "400 Bad Request";
        break;
    case 404:
        line = "404 Not Found";
        break;
    case 405:
        line = "405 Method Not Allowed";
        break;
    case 413:
        line = "413 Payload Too Large";
        break;
    default:
        return HSE_STATUS_ERROR;
    }

    head = status == 405
           ? "Allow: GET, POST\r\nContent-Type: text/plain\r\n\r\n"
           : "Content-Type: text/plain\r\n\r\n";

    if (!ecb->ServerSupportFunction(ecb->ConnID, HSE_REQ_SEND_RESPONSE_HEADER,
                                    (LPVOID) line, NULL, (LPDWORD) head))
    {
        return HSE_STATUS_ERROR;
    }

    return HSE_STATUS_SUCCESS;
}


/*
 * The header lines (Content-Type, the cookie if any), the blank line and
 * the wrapper up to the file's bytes, into buf; its length, or -1 when it
 * does not fit. (mod_isapi takes what follows the blank line as body.)
 */
static long
sw_head(EXTENSION_CONTROL_BLOCK *ecb, const char *cookie, char *buf,
    size_t size)
{
    int   k, n;
    long  soft, addr, script, query;
    char  vsoft[256], vaddr[64], vscript[SW_MAX_VAR], vquery[SW_MAX_VAR];

    soft = sw_var(ecb, "SERVER_SOFTWARE", vsoft, sizeof(vsoft));
    addr = sw_var(ecb, "REMOTE_ADDR", vaddr, sizeof(vaddr));
    script = sw_var(ecb, "SCRIPT_NAME", vscript, sizeof(vscript));
    query = sw_var(ecb, "QUERY_STRING", vquery, sizeof(vquery));

    k = snprintf(buf, size, SW_TEXT_HTML "%s%s%s\r\n",
                 cookie ? "Set-Cookie: " : "", cookie ? cookie : "",
                 cookie ? "\r\n" : "");
    if (k < 0 || (size_t) k >= size) {
        return -1;
    }

    n = sw_head_format(buf + k, size - (size_t) k, sw_var_str(soft, vsoft),
                       sw_var_str(addr, vaddr), sw_var_str(script, vscript),
                       sw_var_str(query, vquery));
    if (n < 0) {
        return -1;
    }

    return (long) k + n;
}


static BOOL
sw_write(EXTENSION_CONTROL_BLOCK *ecb, const void *data, size_t len)
{
    DWORD  n = (DWORD) len;

    return ecb->WriteClient(ecb->ConnID, (LPVOID) data, &n, HSE_IO_SYNC);
}


static BOOL
sw_send_head(EXTENSION_CONTROL_BLOCK *ecb, const char *head)
{
    return ecb->ServerSupportFunction(ecb->ConnID,
                                      HSE_REQ_SEND_RESPONSE_HEADER,
                                      (LPVOID) "200 OK", NULL,
                                      (LPDWORD) head);
}


/*
 * The wrapper around the file at path, with the cookie (or none): from
 * memory when it is small, else with TRANSMIT_FILE (sendfile). A file
 * that is not there is a 404, as mod_specweb99's.
 */
static DWORD
sw_page(EXTENSION_CONTROL_BLOCK *ecb, const char *path, const char *cookie)
{
    int          fd;
    char         head[2 * SW_MAX_VAR + 1024];
    sw_file_t   *f;
    HSE_TF_INFO  tf;

    if (sw_file(path, &f) != 0) {
        if (errno != ENOMEM) {
            sw_log(ecb, "specweb99: \"%s\": %s", path, strerror(errno));
        }
        return sw_error(ecb, errno == ENOMEM ? 500 : 404);
    }

    fd = -1;
    if (f == NULL || f->len >= SW_SEND_MEM) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd == -1) {
            sw_log(ecb, "specweb99: \"%s\": %s", path, strerror(errno));
            return sw_error(ecb, 404);
        }
    }

    if (sw_head(ecb, cookie, head, sizeof(head)) < 0
        || !sw_send_head(ecb, head))
    {
        goto failed;
    }

    if (fd == -1) {
        if ((f->len > 0 && !sw_write(ecb, f->data, f->len))
            || !sw_write(ecb, SW_TAIL, sizeof(SW_TAIL) - 1))
        {
            goto failed;
        }
        return HSE_STATUS_SUCCESS;
    }

    memset(&tf, 0, sizeof(tf));
    tf.hFile = (HANDLE) (intptr_t) fd;
    tf.pTail = (PVOID) SW_TAIL;
    tf.TailLength = sizeof(SW_TAIL) - 1;
    tf.dwFlags = HSE_IO_SYNC;

    if (!ecb->ServerSupportFunction(ecb->ConnID, HSE_REQ_TRANSMIT_FILE,
                                    &tf, NULL, NULL))
    {
        goto failed;
    }

    close(fd);                  /* the server keeps its own duplicate */
    return HSE_STATUS_SUCCESS;

failed:

    if (fd != -1) {
        close(fd);
    }
    return HSE_STATUS_ERROR;
}


/* The root (APPL_PHYSICAL_PATH) into buf; -1 when there is none. */
static int
sw_root(EXTENSION_CONTROL_BLOCK *ecb, char *buf, DWORD size)
{
    long  n;

    n = sw_var(ecb, "APPL_PHYSICAL_PATH", buf, size);
    if (n <= 0) {
        sw_log(ecb, "specweb99: no APPL_PHYSICAL_PATH (a location root)");
        return -1;
    }

    return 0;
}


/* ---- dynamic GET and CAD ------------------------------------------------- */

static DWORD
sw_cad(EXTENSION_CONTROL_BLOCK *ecb, const char *root, const char *path,
    const char *cookie, size_t clen)
{
    int             id, rc, force;
    char            set[128], head[2 * SW_MAX_VAR + 1024];
    int64_t         user, last;
    sw_data_t      *d;
    sw_file_t      *f;
    unsigned char  *buf;
    BOOL            ok;

    if (!sw_cookie((const unsigned char *) cookie, clen, &user, &last)) {
        return sw_page(ecb, path, NULL);     /* no my_cookie: plain GET */
    }

    /* the data files, re-read at once after a Reset of this child's: its
     * thread only flags it, the loop's thread alone touches the data */
    force = __atomic_exchange_n(&sw_reload, 0, __ATOMIC_ACQ_REL);
    d = sw_data_get(&sw_data, root, force, sw_errlog, ecb);

    id = sw_cad_select(d, user, last, path, set, sizeof(set));
    if (id < 0) {
        return sw_page(ecb, path, set);
    }

    /* a small page: its bytes from memory, copied to rewrite its tags */
    rc = sw_file(path, &f);
    if (rc != 0 || f == NULL) {
        if (rc == 0) {
            errno = EFBIG;              /* more than SW_CACHE_FILE */
        }
        sw_log(ecb, "specweb99: \"%s\": %s", path, strerror(errno));
        return sw_error(ecb, errno == ENOMEM ? 500 : 404);
    }

    buf = malloc(f->len + 1);
    if (buf == NULL) {
        return HSE_STATUS_ERROR;
    }
    memcpy(buf, f->data, f->len);

    sw_rewrite(buf, f->len, id);

    ok = sw_head(ecb, set, head, sizeof(head)) >= 0
         && sw_send_head(ecb, head)
         && (f->len == 0 || sw_write(ecb, buf, f->len))
         && sw_write(ecb, SW_TAIL, sizeof(SW_TAIL) - 1);

    free(buf);

    return ok ? HSE_STATUS_SUCCESS : HSE_STATUS_ERROR;
}


static DWORD
sw_get(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    char    path[SW_MAX_PATH + 1024], cookie[SW_MAX_VAR];
    long    clen;
    size_t  qlen;
    int     n;

    qlen = strlen(ecb->lpszQueryString);
    if (!sw_safe_path((unsigned char *) ecb->lpszQueryString, qlen)) {
        return sw_error(ecb, 400);
    }

    n = snprintf(path, sizeof(path), "%s%s", root, ecb->lpszQueryString);
    if (n < 0 || (size_t) n >= sizeof(path)) {
        return sw_error(ecb, 400);
    }

    clen = sw_var(ecb, "HTTP_COOKIE", cookie, sizeof(cookie));
    if (clen <= 0) {
        return sw_page(ecb, path, NULL);
    }

    return sw_cad(ecb, root, path, cookie, (size_t) clen);
}


/* ---- POST ---------------------------------------------------------------- */

static DWORD
sw_post(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    char       cookie[SW_MAX_VAR], set[64], path[SW_MAX_PATH + 128];
    long       clen;
    int64_t    user, last;
    sw_post_t  post;

    clen = sw_var(ecb, "HTTP_COOKIE", cookie, sizeof(cookie));
    if (clen <= 0
        || !sw_cookie((const unsigned char *) cookie, (size_t) clen, &user,
                      &last)
        || user < 0 || user > 2147483647)
    {
        return sw_error(ecb, 400);
    }

    /* the whole body is in lpbData: IIS reads ahead 48 KiB */
    if (ecb->cbTotalBytes > SW_MAX_BODY
        || ecb->cbAvailable < ecb->cbTotalBytes)
    {
        return sw_error(ecb, 413);
    }

    if (sw_post_parse(&post, ecb->lpbData, ecb->cbTotalBytes) != 0) {
        return sw_error(ecb, 400);
    }

    /* the record's thread id is the pid: the loop runs this, one thread */
    if (sw_post_log(root, &post, user, sw_errlog, ecb) != 0) {
        return HSE_STATUS_ERROR;
    }

    snprintf(path, sizeof(path), "%s%s", root, post.file);
    snprintf(set, sizeof(set), "my_cookie=%d", (int) user);

    return sw_page(ecb, path, set);
}


/* ---- Fetch --------------------------------------------------------------- */

/* Where Fetch's body goes: WriteClient. */
static int
sw_out(void *arg, const void *data, size_t len)
{
    return sw_write(arg, data, len) ? 0 : -1;
}


static DWORD
sw_fetch(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    int    fd, rc;
    off_t  size;

    fd = sw_log_lock(root, sw_errlog, ecb);
    if (fd == -1) {
        return HSE_STATUS_ERROR;
    }

    rc = sw_log_repair(fd, &size);

    if (rc == 0 && !sw_send_head(ecb, "Content-Type: text/plain\r\n\r\n")) {
        rc = -1;
    }

    /* copied under the lock: the log as it is now, whatever follows */
    if (rc == 0) {
        rc = sw_log_copy(fd, size, sw_out, ecb);
    }

    close(fd);

    return rc == 0 ? HSE_STATUS_SUCCESS : HSE_STATUS_ERROR;
}


/* ---- Reset --------------------------------------------------------------- */

/* Truncates the post log under the lock; the data files are re-read by
 * the loop (sw_reload). Any thread. */
static int
sw_reset_log(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    int  fd, rc;

    fd = sw_log_lock(root, sw_errlog, ecb);
    if (fd == -1) {
        return -1;
    }

    rc = sw_log_truncate(fd, sw_errlog, ecb);

    close(fd);

    __atomic_store_n(&sw_reload, 1, __ATOMIC_RELEASE);

    return rc;
}


/*
 * Runs the generator of step (0: upfgen, 1: cadgen) and waits for it:
 * on the Reset's own thread. Its stdin and stdout are /dev/null, its
 * stderr a pipe whose lines are logged; 0 when it exits 0.
 */
static int
sw_reset_run(sw_reset_t *rs, int step)
{
    int                         pfd[2], st, rc;
    char                       *argv[16], err[512];
    size_t                      nerr;
    ssize_t                     n;
    pid_t                       pid;
    sigset_t                    none;
    posix_spawnattr_t           attr;
    posix_spawn_file_actions_t  fa;

    sw_reset_argv(argv, rs->tool, rs->root, &rs->args, step);

    if (pipe2(pfd, O_CLOEXEC) == -1) {
        sw_log(rs->ecb, "specweb99: pipe() failed: %s", strerror(errno));
        return -1;
    }

    /* the signals the loop blocks or ignores are the defaults again in
     * the generator */
    sigemptyset(&none);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK
                                    | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&attr, &none);
    sigaddset(&none, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &none);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    /* and nothing else of the server's, if some were not */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif

    rc = posix_spawnp(&pid, rs->tool, &fa, &attr, argv, environ);

    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(pfd[1]);

    if (rc != 0) {
        close(pfd[0]);
        sw_log(rs->ecb, "specweb99: cannot run \"%s\": %s", rs->tool,
               strerror(rc));
        return -1;
    }

    nerr = 0;
    for ( ;; ) {
        n = read(pfd[0], err + nerr, sizeof(err) - nerr);
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        nerr += (size_t) n;
        if (nerr == sizeof(err)) {
            nerr--;                 /* the rest is read and dropped */
        }
    }
    close(pfd[0]);

    while (waitpid(pid, &st, 0) == -1) {
        if (errno != EINTR) {
            st = -1;
            break;
        }
    }

    nerr = sw_chomp(err, nerr);
    if (nerr > 0) {
        sw_log(rs->ecb, "specweb99: %s %s: %.*s", rs->tool, argv[1],
               (int) nerr, err);
    }

    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        sw_log(rs->ecb, "specweb99: \"%s %s\" failed (status %d)", rs->tool,
               argv[1], st);
        return -1;
    }

    return 0;
}


/* The Reset's thread: the generators, the log, the answer, the end. */
static void *
sw_reset_thread(void *arg)
{
    sw_reset_t               *rs = arg;
    EXTENSION_CONTROL_BLOCK  *ecb = rs->ecb;

    if (sw_reset_run(rs, 0) == 0 && sw_reset_run(rs, 1) == 0
        && sw_reset_log(ecb, rs->root) == 0)
    {
        /* the whole page with the head: no write after PENDING, so the
         * response keeps its Content-Length */
        (void) sw_send_head(ecb, rs->page);
    } else {
        (void) ecb->ServerSupportFunction(ecb->ConnID,
                                          HSE_REQ_SEND_RESPONSE_HEADER,
                                          (LPVOID) "500 Internal Server "
                                          "Error", NULL, NULL);
    }

    (void) ecb->ServerSupportFunction(ecb->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                      NULL, NULL, NULL);
    free(rs->page);
    free(rs);

    return NULL;
}


/* The generator: the first line of ROOT/specweb99.tool, or the default. */
static void
sw_reset_tool(sw_reset_t *rs)
{
    char            path[SW_MAX_PATH + 32];
    size_t          len, i;
    unsigned char  *buf;
    struct stat     st;

    snprintf(path, sizeof(path), "%s/specweb99.tool", rs->root);
    snprintf(rs->tool, sizeof(rs->tool), "gannet-specweb99");

    buf = sw_read_file(path, sizeof(rs->tool) - 1, &len, &st);
    if (buf == NULL) {
        return;
    }

    for (i = 0; i < len && buf[i] != '\n' && buf[i] != '\r'; i++) {
        /* void */
    }
    while (i > 0 && (buf[i - 1] == ' ' || buf[i - 1] == '\t')) {
        i--;
    }
    if (i > 0) {
        memcpy(rs->tool, buf, i);
        rs->tool[i] = '\0';
    }

    free(buf);
}


static DWORD
sw_reset(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    int             bad, rc;
    char            page[2 * SW_MAX_VAR + 1024];
    long            n;
    sw_str_t        q;
    sw_reset_t     *rs;
    pthread_t       tid;
    pthread_attr_t  attr;
    sigset_t        all, old;

    rs = calloc(1, sizeof(sw_reset_t));
    if (rs == NULL) {
        return HSE_STATUS_ERROR;
    }
    rs->ecb = ecb;
    snprintf(rs->root, sizeof(rs->root), "%s", root);
    sw_reset_tool(rs);

    q.data = (unsigned char *) ecb->lpszQueryString + 14; /* "...Reset&" */
    q.len = strlen(ecb->lpszQueryString);
    q.len = q.len > 14 ? q.len - 14 : 0;

    bad = sw_reset_parse(q, &rs->args) != 0;

    n = sw_head(ecb, NULL, page, sizeof(page) - sizeof(SW_TAIL));
    if (n >= 0) {
        memcpy(page + n, SW_TAIL, sizeof(SW_TAIL));
    }

    if (strcmp(rs->tool, "off") == 0) {
        free(rs);
        return n >= 0 && sw_reset_log(ecb, root) == 0
               && sw_send_head(ecb, page)
               ? HSE_STATUS_SUCCESS : HSE_STATUS_ERROR;
    }

    if (bad || n < 0 || (rs->page = strdup(page)) == NULL) {
        free(rs);
        return bad ? sw_error(ecb, 400) : HSE_STATUS_ERROR;
    }

    /* the thread takes no signal (the loop's thread handles them) */
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&tid, &attr, sw_reset_thread, rs);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);

    if (rc != 0) {
        sw_log(ecb, "specweb99: pthread_create() failed: %s", strerror(rc));
        free(rs->page);
        free(rs);
        return HSE_STATUS_ERROR;
    }

    return HSE_STATUS_PENDING;      /* the thread says DONE_WITH_SESSION */
}


/* ---- the entry points ---------------------------------------------------- */

BOOL WINAPI
GetExtensionVersion(HSE_VERSION_INFO *pVer)
{
    pVer->dwExtensionVersion = HSE_VERSION;
    snprintf(pVer->lpszExtensionDesc, sizeof(pVer->lpszExtensionDesc),
             "SPECweb99 dynamic content");
    return TRUE;
}


DWORD WINAPI
HttpExtensionProc(EXTENSION_CONTROL_BLOCK *pECB)
{
    char         root[SW_MAX_PATH];
    const char  *m = pECB->lpszMethod, *q = pECB->lpszQueryString;

    if (sw_root(pECB, root, sizeof(root)) != 0) {
        return HSE_STATUS_ERROR;
    }

    switch (sw_route((const unsigned char *) m, strlen(m),
                     (const unsigned char *) q, strlen(q)))
    {
    case SW_OP_POST:
        return sw_post(pECB, root);
    case SW_OP_NOT_ALLOWED:
        return sw_error(pECB, 405);
    case SW_OP_FETCH:
        return sw_fetch(pECB, root);
    case SW_OP_RESET:
        return sw_reset(pECB, root);
    case SW_OP_BAD:
        return sw_error(pECB, 400);
    default:                            /* SW_OP_GET */
        return sw_get(pECB, root);
    }
}


BOOL WINAPI
TerminateExtension(DWORD dwFlags)
{
    size_t      i;
    sw_file_t  *e, *next;

    (void) dwFlags;

    for (i = 0; i < SW_CACHE_HASH; i++) {
        for (e = sw_files[i]; e != NULL; e = next) {
            next = e->next;
            free(e->data);
            free(e->path);
            free(e);
        }
        sw_files[i] = NULL;
    }
    sw_cached = 0;

    sw_data_free(&sw_data);

    return TRUE;
}
