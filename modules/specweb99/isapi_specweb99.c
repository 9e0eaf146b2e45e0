/*
 * isapi_specweb99: the dynamic part of the SPECweb99-style workload as an
 * ISAPI extension (issue 24, item 6): the operations of mod_specweb99
 * (modules/specweb99/mod_specweb99.c, whose header comment gives every
 * byte of them), written a second time against Microsoft's <windows.h>
 * and <httpext.h> only, as an IIS or Zeus extension is, and run by
 * mod_isapi:
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
 * the children) and Fetch are mod_specweb99's, byte for byte. Where they
 * differ in means:
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

#define _GNU_SOURCE  1                  /* memmem */

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
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>


#define SW_HEAD1       "<html>\n<head><title>SPECweb99 Dynamic GET & POST " \
                       "Test</title></head>\n<body>\n"
#define SW_TAIL        "\n</pre>\n</body></html>\n"

#define SW_NADS        360
#define SW_UP_REC      15
#define SW_AD_REC      39
#define SW_LOG_HEAD    11
#define SW_LOG_REC     139
#define SW_MAX_BODY    4096
#define SW_MAX_PATH    4096
#define SW_MAX_VAR     4096

#define SW_CACHE_FILE  (128 * 1024)     /* classes 0 to 2 */
#define SW_CACHE_MAX   (256 * 1024 * 1024)
#define SW_CACHE_VALID 10               /* seconds */
#define SW_CACHE_HASH  16384
#define SW_SEND_MEM    (16 * 1024)      /* the server's sendfile_min_size */

#define SW_TAG         "<!WEB99CAD><IMG SRC=\"/file_set/dir"
#define SW_TAG_LEN     (sizeof(SW_TAG) - 1)
/* after SW_TAG: NNNNN/classX_Y"><!/WEB99CAD> */
#define SW_TAG_REST    (5 + 6 + 3 + 14)

#define SW_TEXT_HTML   "Content-Type: text/html\r\n"

extern char  **environ;


typedef struct {
    uint32_t     dem;
    uint32_t     weightings;
    int32_t      minmatch;
    int64_t      expiry;
} sw_ad_t;


/* Per child: the two data files of one root (the loop's thread only). */
typedef struct {
    char         root[SW_MAX_PATH];
    time_t       checked;
    struct stat  up_st;
    struct stat  ad_st;
    uint32_t    *users;
    size_t       nusers;
    sw_ad_t      ads[SW_NADS];
    size_t       nads;
} sw_data_t;


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
    char                      maxload[24];
    char                      pttime[24];
    char                      maxthread[24];
    char                      exp1[24];
    char                      exp2[24];
    char                     *page;          /* header lines and wrapper */
} sw_reset_t;


/* A string of the request, or of ours; len bytes at data. */
typedef struct {
    size_t                len;
    const unsigned char  *data;
} sw_str_t;


static sw_data_t   *sw_data;
static sw_file_t   *sw_files[SW_CACHE_HASH];
static size_t       sw_cached;
static int          sw_reload;          /* a Reset's thread: re-read */


#define sw_str(s)  (int) (s).len, (s).data ? (const char *) (s).data : ""


/* ---- helpers ------------------------------------------------------------ */

/* A decimal number of at most 18 digits at p[0 .. len); -1 if not. */
static int64_t
sw_number(const unsigned char *p, size_t len)
{
    size_t   i;
    int64_t  v;

    if (len == 0 || len > 18) {
        return -1;
    }

    v = 0;
    for (i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return -1;
        }
        v = v * 10 + (p[i] - '0');
    }

    return v;
}


/* Hex digits, spaces allowed in front ("%8X"). */
static int
sw_hex(const unsigned char *p, size_t len, uint32_t *out)
{
    size_t    i;
    uint32_t  v;
    int       digits;

    v = 0;
    digits = 0;

    for (i = 0; i < len; i++) {
        if (p[i] == ' ' && digits == 0) {
            continue;
        }
        if (p[i] >= '0' && p[i] <= '9') {
            v = v << 4 | (uint32_t) (p[i] - '0');
        } else if (p[i] >= 'A' && p[i] <= 'F') {
            v = v << 4 | (uint32_t) (p[i] - 'A' + 10);
        } else if (p[i] >= 'a' && p[i] <= 'f') {
            v = v << 4 | (uint32_t) (p[i] - 'a' + 10);
        } else {
            return -1;
        }
        digits++;
    }

    *out = v;

    return digits ? 0 : -1;
}


/* A signed decimal, spaces allowed in front ("%3d", "%10d"). */
static int
sw_dec(const unsigned char *p, size_t len, int64_t *out)
{
    size_t  i;

    for (i = 0; i < len && p[i] == ' '; i++) {
        /* void */
    }

    if (i < len && p[i] == '-') {
        *out = -sw_number(p + i + 1, len - i - 1);
        return *out <= 0 && len - i > 1 ? 0 : -1;
    }

    *out = sw_number(p + i, len - i);

    return *out >= 0 ? 0 : -1;
}


/* The value of `name=` in an &-separated list, or len 0. */
static sw_str_t
sw_param(const unsigned char *p, size_t len, const char *name)
{
    size_t    i, n, end;
    sw_str_t  v = { 0, NULL };

    n = strlen(name);    /* ours, not request bytes */

    for (i = 0; i + n < len; i++) {

        if ((i != 0 && p[i - 1] != '&')
            || memcmp(p + i, name, n) != 0 || p[i + n] != '=')
        {
            continue;
        }

        for (end = i + n + 1; end < len && p[end] != '&'; end++) {
            /* void */
        }

        v.data = p + i + n + 1;
        v.len = end - (i + n + 1);
        return v;
    }

    return v;
}


static int64_t
sw_num_of(const unsigned char *p, size_t len, const char *name)
{
    sw_str_t  v = sw_param(p, len, name);

    return sw_number(v.data, v.len);
}


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


/* The my_cookie cookie's user_id and last_ad (-1 when absent); returns
 * 0 when there is no my_cookie at all. */
static int
sw_cookie(const char *c, size_t len, int64_t *user, int64_t *last)
{
    size_t                i, end;
    const unsigned char  *p = (const unsigned char *) c;

    *user = -1;
    *last = -1;

    for (i = 0; i + 10 <= len; i++) {
        if ((i == 0 || p[i - 1] == ' ' || p[i - 1] == ';')
            && memcmp(p + i, "my_cookie=", 10) == 0)
        {
            break;
        }
    }

    if (i + 10 > len) {
        return 0;
    }

    i += 10;
    for (end = i; end < len && p[end] != ';'; end++) {
        /* void */
    }

    *user = sw_num_of(p + i, end - i, "user_id");
    *last = sw_num_of(p + i, end - i, "last_ad");

    return 1;
}


/* A relative file name under the root: no "..", no odd bytes. */
static int
sw_safe_path(const unsigned char *p, size_t len)
{
    size_t  i;

    if (len == 0 || len > 512 || p[0] != '/') {
        return 0;
    }

    for (i = 0; i < len; i++) {
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z')
              || (p[i] >= '0' && p[i] <= '9') || p[i] == '/' || p[i] == '_'
              || p[i] == '-' || p[i] == '.'))
        {
            return 0;
        }
        if (p[i] == '.' && i + 1 < len && p[i + 1] == '.') {
            return 0;
        }
    }

    return 1;
}


/* The X of a name ending in "classX_Y", or -1. */
static int
sw_class_of(const char *path)
{
    size_t  n;

    n = strlen(path);
    if (n < 8 || memcmp(path + n - 8, "class", 5) != 0
        || path[n - 3] < '0' || path[n - 3] > '9' || path[n - 2] != '_'
        || path[n - 1] < '0' || path[n - 1] > '9')
    {
        return -1;
    }

    return path[n - 3] - '0';
}


/* Reads a whole small file (a page-cache read). */
static unsigned char *
sw_read_file(const char *path, size_t max, size_t *len, struct stat *st)
{
    int             fd;
    ssize_t         n;
    size_t          got;
    unsigned char  *buf;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return NULL;
    }

    if (fstat(fd, st) == -1) {
        close(fd);
        return NULL;
    }

    if (!S_ISREG(st->st_mode) || (uint64_t) st->st_size > max) {
        close(fd);
        errno = S_ISREG(st->st_mode) ? EFBIG : EINVAL;
        return NULL;
    }

    buf = malloc((size_t) st->st_size + 1);
    if (buf == NULL) {
        close(fd);
        return NULL;
    }

    got = 0;
    while (got < (size_t) st->st_size) {
        n = read(fd, buf + got, (size_t) st->st_size - got);
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t) n;
    }

    close(fd);
    *len = got;

    return buf;
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


/* ---- the data files ------------------------------------------------------ */

static int
sw_same(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_size == b->st_size
           && a->st_mtim.tv_sec == b->st_mtim.tv_sec
           && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}


static void
sw_load_users(EXTENSION_CONTROL_BLOCK *ecb, sw_data_t *d, const char *path)
{
    size_t          len, i, n;
    uint32_t       *users, dem;
    unsigned char  *buf;
    struct stat     st;

    buf = sw_read_file(path, 256 * 1024 * 1024, &len, &st);
    if (buf == NULL) {
        sw_log(ecb, "specweb99: cannot read \"%s\": %s", path,
               strerror(errno));
        free(d->users);
        d->users = NULL;
        d->nusers = 0;
        memset(&d->up_st, 0, sizeof(struct stat));
        return;
    }

    n = len / SW_UP_REC;
    users = malloc((n ? n : 1) * sizeof(uint32_t));
    if (users == NULL) {
        free(buf);
        return;
    }

    for (i = 0; i < n; i++) {
        if (sw_hex(buf + i * SW_UP_REC + 6, 8, &dem) != 0) {
            sw_log(ecb, "specweb99: bad record %zu in \"%s\"", i, path);
            dem = 0;
        }
        users[i] = dem;
    }

    free(buf);
    free(d->users);
    d->users = users;
    d->nusers = n;
    d->up_st = st;
}


static void
sw_load_ads(EXTENSION_CONTROL_BLOCK *ecb, sw_data_t *d, const char *path)
{
    size_t          len, i, n;
    int64_t         minmatch, expiry;
    unsigned char  *buf, *p;
    struct stat     st;

    buf = sw_read_file(path, SW_NADS * SW_AD_REC * 2, &len, &st);
    if (buf == NULL) {
        sw_log(ecb, "specweb99: cannot read \"%s\": %s", path,
               strerror(errno));
        d->nads = 0;
        memset(&d->ad_st, 0, sizeof(struct stat));
        return;
    }

    n = len / SW_AD_REC;
    if (n > SW_NADS) {
        n = SW_NADS;
    }

    for (i = 0; i < n; i++) {
        p = buf + i * SW_AD_REC;
        /* "%5d %8X %8X %3d %10d\n": 0, 6, 15, 24, 28 */
        if (sw_hex(p + 6, 8, &d->ads[i].dem) != 0
            || sw_hex(p + 15, 8, &d->ads[i].weightings) != 0
            || sw_dec(p + 24, 3, &minmatch) != 0
            || sw_dec(p + 28, 10, &expiry) != 0)
        {
            sw_log(ecb, "specweb99: bad record %zu in \"%s\"", i, path);
            n = i;
            break;
        }
        d->ads[i].minmatch = (int32_t) minmatch;
        d->ads[i].expiry = expiry;
    }

    free(buf);
    d->nads = n;
    d->ad_st = st;
}


/* Loads or re-reads the data files of `root` (force: now, or after a
 * Reset of this child's). The loop's thread only. */
static sw_data_t *
sw_data_get(EXTENSION_CONTROL_BLOCK *ecb, const char *root, int force)
{
    time_t       now;
    char         up[SW_MAX_PATH + 32], ad[SW_MAX_PATH + 32];
    struct stat  st;

    if (strlen(root) >= SW_MAX_PATH) {
        return NULL;
    }

    if (sw_data == NULL) {
        sw_data = calloc(1, sizeof(sw_data_t));
        if (sw_data == NULL) {
            return NULL;
        }
    }

    now = time(NULL);

    if (__atomic_exchange_n(&sw_reload, 0, __ATOMIC_ACQ_REL)) {
        force = 1;
    }

    if (strcmp(sw_data->root, root) != 0) {
        snprintf(sw_data->root, sizeof(sw_data->root), "%s", root);
        memset(&sw_data->up_st, 0, sizeof(struct stat));
        memset(&sw_data->ad_st, 0, sizeof(struct stat));
        force = 1;
    }

    if (!force && sw_data->checked == now) {
        return sw_data;
    }

    sw_data->checked = now;
    snprintf(up, sizeof(up), "%s/User.Personality", root);
    snprintf(ad, sizeof(ad), "%s/Custom.Ads", root);

    if (stat(up, &st) == -1 || force || !sw_same(&st, &sw_data->up_st)) {
        sw_load_users(ecb, sw_data, up);
    }

    if (stat(ad, &st) == -1 || force || !sw_same(&st, &sw_data->ad_st)) {
        sw_load_ads(ecb, sw_data, ad);
    }

    return sw_data;
}


/* The ad for a user: its id (-1: none) and weight. */
static int
sw_find_ad(sw_data_t *d, int64_t user, int64_t last, int *weight,
    int *expired)
{
    size_t    i, id;
    uint32_t  dem, w;
    int       sum;

    *weight = 0;
    *expired = 0;

    if (d == NULL || d->nads == 0 || user < 10000
        || (uint64_t) (user - 10000) >= d->nusers
        || last < 0 || last >= SW_NADS)
    {
        return -1;
    }

    for (i = 1; i <= d->nads; i++) {
        id = ((size_t) last + i) % d->nads;
        dem = d->users[user - 10000] & d->ads[id].dem;
        w = d->ads[id].weightings;
        sum = 0;

        if (dem & 0x30000000) {
            sum += (w >> 16) & 0xf;
        }
        if (dem & 0x0f000000) {
            sum += (w >> 12) & 0xf;
        }
        if (dem & 0x00f00000) {
            sum += (w >> 8) & 0xf;
        }
        if (dem & 0x000ffc00) {
            sum += (w >> 4) & 0xf;
        }
        if (dem & 0x000003ff) {
            sum += w & 0xf;
        }

        if (sum >= d->ads[id].minmatch) {
            *weight = sum;
            *expired = (int64_t) time(NULL) > d->ads[id].expiry;
            return (int) id;
        }
    }

    return -1;
}


/* Rewrites every ad tag in buf for ad `id`. */
static void
sw_rewrite(unsigned char *buf, size_t len, int id)
{
    unsigned char  *p, *end;
    char            tmp[16];

    end = buf + len;
    p = buf;

    while ((size_t) (end - p) >= SW_TAG_LEN + SW_TAG_REST) {
        p = memmem(p, (size_t) (end - p), SW_TAG, SW_TAG_LEN);
        if (p == NULL || (size_t) (end - p) < SW_TAG_LEN + SW_TAG_REST) {
            return;
        }

        p += SW_TAG_LEN;
        if (memcmp(p + 5, "/class", 6) != 0 || p[12] != '_'
            || memcmp(p + 14, "\"><!/WEB99CAD>", 14) != 0)
        {
            continue;
        }

        snprintf(tmp, sizeof(tmp), "%05d", (id / 36) % 100000);
        memcpy(p, tmp, 5);
        p[11] = (unsigned char) ('0' + (id % 36) / 9);
        p[13] = (unsigned char) ('0' + id % 9);
        p += SW_TAG_REST;
    }
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
    int   n;
    long  soft, addr, script, query;
    char  vsoft[256], vaddr[64], vscript[SW_MAX_VAR], vquery[SW_MAX_VAR];

    soft = sw_var(ecb, "SERVER_SOFTWARE", vsoft, sizeof(vsoft));
    addr = sw_var(ecb, "REMOTE_ADDR", vaddr, sizeof(vaddr));
    script = sw_var(ecb, "SCRIPT_NAME", vscript, sizeof(vscript));
    query = sw_var(ecb, "QUERY_STRING", vquery, sizeof(vquery));

    n = snprintf(buf, size, SW_TEXT_HTML "%s%s%s\r\n"
                 SW_HEAD1 "<p>SERVER_SOFTWARE = %s\n"
                 "<p>REMOTE_ADDR = %s\n<p>SCRIPT_NAME = %s\n"
                 "<p>QUERY_STRING = %s\n<pre>\n",
                 cookie ? "Set-Cookie: " : "", cookie ? cookie : "",
                 cookie ? "\r\n" : "",
                 soft >= 0 ? vsoft : "", addr >= 0 ? vaddr : "",
                 script >= 0 ? vscript : "", query >= 0 ? vquery : "");

    if (n < 0 || (size_t) n >= size) {
        return -1;
    }

    return n;
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
    int             id, weight, expired, cls, rc;
    char            set[128], head[2 * SW_MAX_VAR + 1024];
    int64_t         user, last;
    sw_data_t      *d;
    sw_file_t      *f;
    unsigned char  *buf;
    BOOL            ok;

    if (!sw_cookie(cookie, clen, &user, &last)) {
        return sw_page(ecb, path, NULL);     /* no my_cookie: plain GET */
    }

    d = sw_data_get(ecb, root, 0);
    id = sw_find_ad(d, user, last, &weight, &expired);

    snprintf(set, sizeof(set),
             "found_cookie=Ad_id=%d&Ad_weight=%d&Expired=%d",
             id, weight, expired);

    cls = sw_class_of(path);
    if (id < 0 || (cls != 1 && cls != 2)) {
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


/* ---- the post log -------------------------------------------------------- */

/* Opens ROOT/post.log and takes the lock shared by all the children. */
static int
sw_log_lock(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    int   fd;
    char  path[SW_MAX_PATH + 16];

    snprintf(path, sizeof(path), "%s/post.log", root);

    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1) {
        sw_log(ecb, "specweb99: open(\"%s\") failed: %s", path,
               strerror(errno));
        return -1;
    }

    while (flock(fd, LOCK_EX) == -1) {
        if (errno != EINTR) {
            sw_log(ecb, "specweb99: flock(\"%s\") failed: %s", path,
                   strerror(errno));
            close(fd);
            return -1;
        }
    }

    return fd;
}


/* The record count in the header; from the size when it is not valid. */
static int64_t
sw_log_count(int fd)
{
    char         head[SW_LOG_HEAD];
    int64_t      n;
    struct stat  st;

    if (pread(fd, head, SW_LOG_HEAD, 0) == SW_LOG_HEAD
        && head[SW_LOG_HEAD - 1] == '\n'
        && sw_dec((unsigned char *) head, SW_LOG_HEAD - 1, &n) == 0
        && n >= 0)
    {
        return n;
    }

    if (fstat(fd, &st) == -1 || st.st_size < SW_LOG_HEAD) {
        return 0;
    }

    return (st.st_size - SW_LOG_HEAD) / SW_LOG_REC;
}


static int
sw_log_set_count(int fd, int64_t n)
{
    char  head[SW_LOG_HEAD + 1];

    snprintf(head, sizeof(head), "%10d\n", (int) n);

    return pwrite(fd, head, SW_LOG_HEAD, 0) == SW_LOG_HEAD ? 0 : -1;
}


/* ---- POST ---------------------------------------------------------------- */

/* The record of a POST: written at the end of the log, under the lock. */
static int
sw_post_log(EXTENSION_CONTROL_BLOCK *ecb, const char *root, const char *file,
    int64_t dir, int64_t cls, int64_t num, int64_t client, int64_t user)
{
    int      fd, rc;
    char     rec[SW_LOG_REC + 1];
    int64_t  count;

    fd = sw_log_lock(ecb, root);
    if (fd == -1) {
        return -1;
    }

    count = sw_log_count(fd);

    /* the pid is the thread id too: the loop runs this, one thread */
    snprintf(rec, sizeof(rec),
             "%10d %10ld %10d %5d %2d %2d %10d %-60.60s %10d %10d\n",
             (int) (count + 1), (long) time(NULL), (int) getpid(),
             (int) dir, (int) cls, (int) num, (int) client, file,
             (int) getpid(), (int) user);

    rc = 0;
    if (pwrite(fd, rec, SW_LOG_REC, SW_LOG_HEAD + count * SW_LOG_REC)
        != SW_LOG_REC
        || sw_log_set_count(fd, count + 1) != 0)
    {
        sw_log(ecb, "specweb99: writing post.log failed: %s",
               strerror(errno));
        rc = -1;
    }

    close(fd);    /* and the lock */

    return rc;
}


static DWORD
sw_post(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    char                  file[128], cookie[SW_MAX_VAR], set[64];
    char                  path[SW_MAX_PATH + 128];
    long                  clen;
    int64_t               dir, cls, num, client, user, last;
    sw_str_t              urlroot;
    const unsigned char  *b;
    size_t                blen;

    clen = sw_var(ecb, "HTTP_COOKIE", cookie, sizeof(cookie));
    if (clen <= 0 || !sw_cookie(cookie, (size_t) clen, &user, &last)
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

    b = ecb->lpbData;
    blen = ecb->cbTotalBytes;

    urlroot = sw_param(b, blen, "urlroot");
    dir = sw_num_of(b, blen, "dir");
    cls = sw_num_of(b, blen, "class");
    num = sw_num_of(b, blen, "num");
    client = sw_num_of(b, blen, "client");

    if (!sw_safe_path(urlroot.data, urlroot.len) || urlroot.len > 64
        || dir < 0 || dir > 99999 || cls < 0 || cls > 9
        || num < 0 || num > 9 || client < 0 || client > 2147483647)
    {
        return sw_error(ecb, 400);
    }

    snprintf(file, sizeof(file), "%.*sdir%05d/class%d_%d", sw_str(urlroot),
             (int) dir, (int) cls, (int) num);

    if (sw_post_log(ecb, root, file, dir, cls, num, client, user) != 0) {
        return HSE_STATUS_ERROR;
    }

    snprintf(path, sizeof(path), "%s%s", root, file);
    snprintf(set, sizeof(set), "my_cookie=%d", (int) user);

    return sw_page(ecb, path, set);
}


/* ---- Fetch --------------------------------------------------------------- */

static DWORD
sw_fetch(EXTENSION_CONTROL_BLOCK *ecb, const char *root)
{
    int          fd, rc;
    char         buf[65536];
    off_t        off;
    ssize_t      n;
    struct stat  st;

    fd = sw_log_lock(ecb, root);
    if (fd == -1) {
        return HSE_STATUS_ERROR;
    }

    rc = 0;

    if (fstat(fd, &st) == -1) {
        rc = -1;

    } else if (st.st_size < SW_LOG_HEAD) {
        if (sw_log_set_count(fd, 0) != 0 || ftruncate(fd, SW_LOG_HEAD)) {
            rc = -1;
        }
        st.st_size = SW_LOG_HEAD;

    } else if (sw_log_count(fd) != (st.st_size - SW_LOG_HEAD) / SW_LOG_REC) {
        rc = sw_log_set_count(fd, (st.st_size - SW_LOG_HEAD) / SW_LOG_REC);
    }

    if (rc == 0 && !sw_send_head(ecb, "Content-Type: text/plain\r\n\r\n")) {
        rc = -1;
    }

    /* copied under the lock: the log as it is now, whatever follows */
    for (off = 0; rc == 0 && off < st.st_size; off += n) {
        n = pread(fd, buf, sizeof(buf), off);
        if (n == -1 && errno == EINTR) {
            n = 0;
            continue;
        }
        if (n <= 0 || !sw_write(ecb, buf, (size_t) n)) {
            rc = -1;
        }
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

    fd = sw_log_lock(ecb, root);
    if (fd == -1) {
        return -1;
    }

    rc = 0;
    if (ftruncate(fd, 0) == -1 || sw_log_set_count(fd, 0) != 0) {
        sw_log(ecb, "specweb99: truncating post.log failed: %s",
               strerror(errno));
        rc = -1;
    }

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
    int                         pfd[2], i, st, rc;
    char                       *argv[16], err[512];
    size_t                      nerr;
    ssize_t                     n;
    pid_t                       pid;
    sigset_t                    none;
    posix_spawnattr_t           attr;
    posix_spawn_file_actions_t  fa;

    i = 0;
    argv[i++] = rs->tool;
    argv[i++] = step ? "cadgen" : "upfgen";
    argv[i++] = "-C";
    argv[i++] = rs->root;
    argv[i++] = step ? "-e" : "-n";
    argv[i++] = step ? rs->pttime : rs->maxload;
    if (rs->maxthread[0] != '\0') {
        argv[i++] = "-t";
        argv[i++] = rs->maxthread;
    }
    if (step == 1 && rs->exp1[0] != '\0') {
        argv[i++] = rs->exp1;
        argv[i++] = rs->exp2;
    }
    argv[i] = NULL;

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

    while (nerr > 0 && (err[nerr - 1] == '\n' || err[nerr - 1] == '\r')) {
        nerr--;
    }
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


/* Copies a number parameter (digits only); 0 on a bad one. */
static int
sw_num_param(sw_str_t q, const char *name, char *out, size_t size,
    int required)
{
    sw_str_t  v;

    v = sw_param(q.data, q.len, name);

    if (v.len == 0) {
        out[0] = '\0';
        return !required;
    }

    if (v.len >= size || sw_number(v.data, v.len) < 0) {
        return 0;
    }

    memcpy(out, v.data, v.len);
    out[v.len] = '\0';

    return 1;
}


/* exp=E1,E2: the range of ads cadgen makes expired (both or none). */
static int
sw_exp_param(sw_str_t q, sw_reset_t *rs)
{
    size_t    i;
    sw_str_t  v;

    v = sw_param(q.data, q.len, "exp");
    if (v.len == 0) {
        return 0;
    }

    for (i = 0; i < v.len && v.data[i] != ','; i++) {
        /* void */
    }

    if (i == v.len || i >= sizeof(rs->exp1) || v.len - i - 1 == 0
        || v.len - i - 1 >= sizeof(rs->exp2)
        || sw_number(v.data, i) < 0
        || sw_number(v.data + i + 1, v.len - i - 1) < 0)
    {
        return -1;
    }

    memcpy(rs->exp1, v.data, i);
    rs->exp1[i] = '\0';
    memcpy(rs->exp2, v.data + i + 1, v.len - i - 1);
    rs->exp2[v.len - i - 1] = '\0';

    return 0;
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

    bad = !sw_num_param(q, "maxload", rs->maxload, sizeof(rs->maxload), 1)
          || !sw_num_param(q, "pttime", rs->pttime, sizeof(rs->pttime), 1)
          || !sw_num_param(q, "maxthread", rs->maxthread,
                           sizeof(rs->maxthread), 0)
          || sw_exp_param(q, rs) != 0;

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

    if (strcmp(m, "POST") == 0) {
        return sw_post(pECB, root);
    }

    if (strcmp(m, "GET") != 0) {
        return sw_error(pECB, 405);
    }

    if (strncmp(q, "command/", 8) == 0) {

        if (strcmp(q + 8, "Fetch") == 0) {
            return sw_fetch(pECB, root);
        }

        if (strncmp(q + 8, "Reset", 5) == 0
            && (q[13] == '\0' || q[13] == '&'))
        {
            return sw_reset(pECB, root);
        }

        return sw_error(pECB, 400);
    }

    return sw_get(pECB, root);
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

    if (sw_data != NULL) {
        free(sw_data->users);
        free(sw_data);
        sw_data = NULL;
    }

    return TRUE;
}
