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
 */

#define _GNU_SOURCE  1                  /* memmem, pipe2 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gannet/module.h>


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
#define SW_MAX_CAD     (1024 * 1024)
#define SW_MAX_ZOMBIES 16

#define SW_TAG         "<!WEB99CAD><IMG SRC=\"/file_set/dir"
#define SW_TAG_LEN     (sizeof(SW_TAG) - 1)
/* after SW_TAG: NNNNN/classX_Y"><!/WEB99CAD> */
#define SW_TAG_REST    (5 + 6 + 3 + 14)


typedef struct {
    const char  *root;          /* specweb99_root */
    const char  *tool;          /* specweb99_tool */
} sw_conf_t;


typedef struct {
    uint32_t     dem;
    uint32_t     weightings;
    int32_t      minmatch;
    int64_t      expiry;
} sw_ad_t;


/* Per child: the two data files of one root. */
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
    char             maxload[24];
    char             pttime[24];
    char             maxthread[24];
    char             exp1[24];
    char             exp2[24];
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


static sw_data_t  *sw_data;
static pid_t       sw_zombies[SW_MAX_ZOMBIES];


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
            return GN_ERROR;
        }
        digits++;
    }

    *out = v;

    return digits ? GN_OK : GN_ERROR;
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
        return *out <= 0 && len - i > 1 ? GN_OK : GN_ERROR;
    }

    *out = sw_number(p + i, len - i);

    return *out >= 0 ? GN_OK : GN_ERROR;
}


/* The value of `name=` in an &-separated list, or len 0. */
static gn_str_t
sw_param(const unsigned char *p, size_t len, const char *name)
{
    size_t    i, n, end;
    gn_str_t  v = gn_null_string;

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

        v.data = (unsigned char *) p + i + n + 1;
        v.len = end - (i + n + 1);
        return v;
    }

    return v;
}


/* The my_cookie cookie's user_id and last_ad (-1 when absent); returns
 * 0 when there is no my_cookie at all. */
static int
sw_cookie(const gn_api_t *api, gn_request_t *r, int64_t *user,
    int64_t *last)
{
    size_t    i, end;
    gn_str_t  c, v;

    *user = -1;
    *last = -1;

    c = api->header(r, "Cookie");

    for (i = 0; i + 10 <= c.len; i++) {
        if ((i == 0 || c.data[i - 1] == ' ' || c.data[i - 1] == ';')
            && memcmp(c.data + i, "my_cookie=", 10) == 0)
        {
            break;
        }
    }

    if (i + 10 > c.len) {
        return 0;
    }

    i += 10;
    for (end = i; end < c.len && c.data[end] != ';'; end++) {
        /* void */
    }

    v = sw_param(c.data + i, end - i, "user_id");
    *user = sw_number(v.data, v.len);
    v = sw_param(c.data + i, end - i, "last_ad");
    *last = sw_number(v.data, v.len);

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


/* ---- the data files ------------------------------------------------------ */

static int
sw_same(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_size == b->st_size
           && a->st_mtim.tv_sec == b->st_mtim.tv_sec
           && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}


static void
sw_load_users(const gn_api_t *api, sw_data_t *d, const char *path)
{
    size_t          len, i, n;
    uint32_t       *users, dem;
    unsigned char  *buf;
    struct stat     st;

    buf = sw_read_file(path, 256 * 1024 * 1024, &len, &st);
    if (buf == NULL) {
        api->log(NULL, GN_LOG_ERR, "specweb99: cannot read \"%s\": %s",
                 path, strerror(errno));
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
        if (sw_hex(buf + i * SW_UP_REC + 6, 8, &dem) != GN_OK) {
            api->log(NULL, GN_LOG_ERR, "specweb99: bad record %zu in \"%s\"",
                     i, path);
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
sw_load_ads(const gn_api_t *api, sw_data_t *d, const char *path)
{
    size_t          len, i, n;
    int64_t         minmatch, expiry;
    unsigned char  *buf, *p;
    struct stat     st;

    buf = sw_read_file(path, SW_NADS * SW_AD_REC * 2, &len, &st);
    if (buf == NULL) {
        api->log(NULL, GN_LOG_ERR, "specweb99: cannot read \"%s\": %s",
                 path, strerror(errno));
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
        if (sw_hex(p + 6, 8, &d->ads[i].dem) != GN_OK
            || sw_hex(p + 15, 8, &d->ads[i].weightings) != GN_OK
            || sw_dec(p + 24, 3, &minmatch) != GN_OK
            || sw_dec(p + 28, 10, &expiry) != GN_OK)
        {
            api->log(NULL, GN_LOG_ERR, "specweb99: bad record %zu in \"%s\"",
                     i, path);
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


/* Loads or re-reads the data files of `root` (force: now). */
static sw_data_t *
sw_data_get(const gn_api_t *api, const char *root, int force)
{
    time_t       now;
    char         up[SW_MAX_PATH + 32], ad[SW_MAX_PATH + 32];
    struct stat  st;

    if (root == NULL || strlen(root) >= SW_MAX_PATH) {
        return NULL;
    }

    if (sw_data == NULL) {
        sw_data = calloc(1, sizeof(sw_data_t));
        if (sw_data == NULL) {
            return NULL;
        }
    }

    now = time(NULL);

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
        sw_load_users(api, sw_data, up);
    }

    if (stat(ad, &st) == -1 || force || !sw_same(&st, &sw_data->ad_st)) {
        sw_load_ads(api, sw_data, ad);
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

    n = snprintf(buf, size, SW_HEAD1 "<p>SERVER_SOFTWARE = %.*s\n"
                 "<p>REMOTE_ADDR = %.*s\n<p>SCRIPT_NAME = %.*s\n"
                 "<p>QUERY_STRING = %.*s\n<pre>\n",
                 sw_str(soft), sw_str(addr), sw_str(script), sw_str(query));
    if (n < 0 || (size_t) n >= size) {
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
    int                   id, weight, expired, cls;
    char                 *path, cookie[128];
    size_t                size, len;
    int64_t               user, last;
    gn_str_t              q;
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

    if (api->header(r, "Cookie").len == 0) {
        return sw_page(api, r, path);
    }

    if (!sw_cookie(api, r, &user, &last)) {
        return sw_page(api, r, path);        /* no my_cookie: plain GET */
    }

    d = sw_data_get(api, cf->root, 0);
    id = sw_find_ad(d, user, last, &weight, &expired);

    snprintf(cookie, sizeof(cookie),
             "found_cookie=Ad_id=%d&Ad_weight=%d&Expired=%d",
             id, weight, expired);
    api->add_header(r, "Set-Cookie", cookie);

    cls = sw_class_of(path);
    if (id < 0 || (cls != 1 && cls != 2)) {
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


/* ---- the post log -------------------------------------------------------- */

/* Opens ROOT/post.log and takes the lock shared by all the children. */
static int
sw_log_lock(const gn_api_t *api, gn_request_t *r, const char *root)
{
    int   fd;
    char  path[SW_MAX_PATH + 16];

    snprintf(path, sizeof(path), "%s/post.log", root);

    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1) {
        api->log(r, GN_LOG_ERR, "specweb99: open(\"%s\") failed: %s",
                 path, strerror(errno));
        return -1;
    }

    while (flock(fd, LOCK_EX) == -1) {
        if (errno != EINTR) {
            api->log(r, GN_LOG_ERR, "specweb99: flock(\"%s\") failed: %s",
                     path, strerror(errno));
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
        && sw_dec((unsigned char *) head, SW_LOG_HEAD - 1, &n) == GN_OK
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

    return pwrite(fd, head, SW_LOG_HEAD, 0) == SW_LOG_HEAD ? GN_OK : GN_ERROR;
}


/* ---- POST ---------------------------------------------------------------- */

static void
sw_post_done(sw_ctx_t *ctx)
{
    int               fd, rc;
    char              rec[SW_LOG_REC + 1], file[128], cookie[64], *path;
    size_t            size;
    int64_t           dir, cls, num, client, count;
    gn_str_t          root;
    gn_request_t     *r = ctx->r;
    const gn_api_t   *api = ctx->api;

    root = sw_param(ctx->body, ctx->len, "urlroot");
    dir = sw_number(sw_param(ctx->body, ctx->len, "dir").data,
                    sw_param(ctx->body, ctx->len, "dir").len);
    cls = sw_number(sw_param(ctx->body, ctx->len, "class").data,
                    sw_param(ctx->body, ctx->len, "class").len);
    num = sw_number(sw_param(ctx->body, ctx->len, "num").data,
                    sw_param(ctx->body, ctx->len, "num").len);
    client = sw_number(sw_param(ctx->body, ctx->len, "client").data,
                       sw_param(ctx->body, ctx->len, "client").len);

    if (!sw_safe_path(root.data, root.len) || root.len > 64
        || dir < 0 || dir > 99999 || cls < 0 || cls > 9
        || num < 0 || num > 9 || client < 0 || client > 2147483647)
    {
        api->finish(r, 400);
        return;
    }

    snprintf(file, sizeof(file), "%.*sdir%05d/class%d_%d", sw_str(root),
             (int) dir, (int) cls, (int) num);

    fd = sw_log_lock(api, r, ctx->conf->root);
    if (fd == -1) {
        api->finish(r, GN_ERROR);
        return;
    }

    count = sw_log_count(fd);

    snprintf(rec, sizeof(rec),
             "%10d %10ld %10d %5d %2d %2d %10d %-60.60s %10d %10d\n",
             (int) (count + 1), (long) time(NULL), (int) getpid(),
             (int) dir, (int) cls, (int) num, (int) client, file,
             (int) getpid(), (int) ctx->user);

    rc = GN_OK;
    if (pwrite(fd, rec, SW_LOG_REC, SW_LOG_HEAD + count * SW_LOG_REC)
        != SW_LOG_REC
        || sw_log_set_count(fd, count + 1) != GN_OK)
    {
        api->log(r, GN_LOG_ERR, "specweb99: writing post.log failed: %s",
                 strerror(errno));
        rc = GN_ERROR;
    }

    close(fd);    /* and the lock */

    if (rc != GN_OK) {
        api->finish(r, rc);
        return;
    }

    size = strlen(ctx->conf->root) + strlen(file) + 1;
    path = api->request_alloc(r, size);
    if (path == NULL) {
        api->finish(r, GN_ERROR);
        return;
    }
    snprintf(path, size, "%s%s", ctx->conf->root, file);

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
    sw_ctx_t  *ctx;

    ctx = sw_ctx_new(api, r, cf);
    if (ctx == NULL) {
        return GN_ERROR;
    }

    (void) sw_cookie(api, r, &ctx->user, &last);
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
    int          fd, rc;
    char         buf[65536];
    off_t        off;
    ssize_t      n;
    struct stat  st;

    fd = sw_log_lock(api, r, cf->root);
    if (fd == -1) {
        return GN_ERROR;
    }

    rc = GN_OK;

    if (fstat(fd, &st) == -1) {
        rc = GN_ERROR;

    } else if (st.st_size < SW_LOG_HEAD) {
        if (sw_log_set_count(fd, 0) != GN_OK || ftruncate(fd, SW_LOG_HEAD)) {
            rc = GN_ERROR;
        }
        st.st_size = SW_LOG_HEAD;

    } else if (sw_log_count(fd) != (st.st_size - SW_LOG_HEAD) / SW_LOG_REC) {
        rc = sw_log_set_count(fd, (st.st_size - SW_LOG_HEAD) / SW_LOG_REC);
    }

    api->set_header(r, "Content-Type", "text/plain");

    for (off = 0; rc == GN_OK && off < st.st_size; off += n) {
        n = pread(fd, buf, sizeof(buf), off);
        if (n == -1 && errno == EINTR) {
            n = 0;
            continue;
        }
        if (n <= 0 || api->write(r, buf, (size_t) n) == GN_ERROR) {
            rc = GN_ERROR;
        }
    }

    close(fd);

    return rc;
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

    fd = sw_log_lock(api, r, ctx->conf->root);
    if (fd == -1) {
        return GN_ERROR;
    }

    rc = GN_OK;
    if (ftruncate(fd, 0) == -1 || sw_log_set_count(fd, 0) != GN_OK) {
        api->log(r, GN_LOG_ERR, "specweb99: truncating post.log failed: %s",
                 strerror(errno));
        rc = GN_ERROR;
    }

    close(fd);

    (void) sw_data_get(api, ctx->conf->root, 1);

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

    while (ctx->nerr > 0 && (ctx->err[ctx->nerr - 1] == '\n'
                             || ctx->err[ctx->nerr - 1] == '\r'))
    {
        ctx->nerr--;
    }

    sw_reset_wait(api, NULL, ctx);
}


/* Forks and execs the generator of ctx->step. */
static int
sw_reset_spawn(sw_ctx_t *ctx)
{
    int              pfd[2], i, nul, fd;
    char            *argv[16];
    sigset_t         set;
    pid_t            pid;
    const gn_api_t  *api = ctx->api;

    i = 0;
    argv[i++] = (char *) ctx->conf->tool;
    argv[i++] = ctx->step ? "cadgen" : "upfgen";
    argv[i++] = "-C";
    argv[i++] = (char *) ctx->conf->root;
    if (ctx->step == 0) {
        argv[i++] = "-n";
        argv[i++] = ctx->maxload;
    } else {
        argv[i++] = "-e";
        argv[i++] = ctx->pttime;
    }
    if (ctx->maxthread[0] != '\0') {
        argv[i++] = "-t";
        argv[i++] = ctx->maxthread;
    }
    if (ctx->step == 1 && ctx->exp1[0] != '\0') {
        argv[i++] = ctx->exp1;
        argv[i++] = ctx->exp2;
    }
    argv[i] = NULL;

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


/* Copies a number parameter (digits only); 0 on a bad one. */
static int
sw_num_param(gn_str_t q, const char *name, char *out, size_t size,
    int required)
{
    gn_str_t  v;

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
sw_exp_param(gn_str_t q, sw_ctx_t *ctx)
{
    size_t    i;
    gn_str_t  v;

    v = sw_param(q.data, q.len, "exp");
    if (v.len == 0) {
        return GN_OK;
    }

    for (i = 0; i < v.len && v.data[i] != ','; i++) {
        /* void */
    }

    if (i == v.len || i >= sizeof(ctx->exp1) || v.len - i - 1 == 0
        || v.len - i - 1 >= sizeof(ctx->exp2)
        || sw_number(v.data, i) < 0
        || sw_number(v.data + i + 1, v.len - i - 1) < 0)
    {
        return GN_ERROR;
    }

    memcpy(ctx->exp1, v.data, i);
    ctx->exp1[i] = '\0';
    memcpy(ctx->exp2, v.data + i + 1, v.len - i - 1);
    ctx->exp2[v.len - i - 1] = '\0';

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

    if (!sw_num_param(q, "maxload", ctx->maxload, sizeof(ctx->maxload), 1)
        || !sw_num_param(q, "pttime", ctx->pttime, sizeof(ctx->pttime), 1)
        || !sw_num_param(q, "maxthread", ctx->maxthread,
                         sizeof(ctx->maxthread), 0)
        || sw_exp_param(q, ctx) != GN_OK)
    {
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

    if (method.len == 4 && memcmp(method.data, "POST", 4) == 0) {
        return sw_post(api, r, cf);
    }

    if (!(method.len == 3 && memcmp(method.data, "GET", 3) == 0)) {
        api->set_header(r, "Allow", "GET, POST");
        return 405;
    }

    if (q.len >= 8 && memcmp(q.data, "command/", 8) == 0) {

        if (q.len == 13 && memcmp(q.data + 8, "Fetch", 5) == 0) {
            return sw_fetch(api, r, cf);
        }

        if (q.len >= 13 && memcmp(q.data + 8, "Reset", 5) == 0
            && (q.len == 13 || q.data[13] == '&'))
        {
            return sw_reset(api, r, cf);
        }

        return 400;
    }

    return sw_get(api, r, cf);
}


/* ---- process hooks ------------------------------------------------------- */

static int
sw_init_child(const gn_api_t *api, void *conf)
{
    sw_conf_t  *cf = conf;

    if (cf != NULL && cf->root != NULL) {
        (void) sw_data_get(api, cf->root, 1);
    }

    return GN_OK;
}


static void
sw_exit_child(const gn_api_t *api)
{
    if (sw_data != NULL) {
        free(sw_data->users);
        free(sw_data);
        sw_data = NULL;
    }
}
