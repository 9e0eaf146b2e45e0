/*
 * The SPECweb99 dynamic operations shared by mod_specweb99.c and
 * isapi_specweb99.c (the contract is in specweb99_logic.h). libc and
 * POSIX only: no server API of either kind is seen here.
 */

#define _GNU_SOURCE  1                  /* memmem */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "specweb99_logic.h"


#define SW_NADS        360
#define SW_UP_REC      15
#define SW_AD_REC      39
#define SW_LOG_HEAD    11
#define SW_LOG_REC     139

#define SW_TAG         "<!WEB99CAD><IMG SRC=\"/file_set/dir"
#define SW_TAG_LEN     (sizeof(SW_TAG) - 1)
/* after SW_TAG: NNNNN/classX_Y"><!/WEB99CAD> */
#define SW_TAG_REST    (5 + 6 + 3 + 14)

/* an error line: a path (at most SW_MAX_PATH + 32) and a few words, so
 * that it is never cut here, only where the caller logs it */
#define SW_ERR_LINE    (SW_MAX_PATH + 256)


typedef struct {
    uint32_t     dem;
    uint32_t     weightings;
    int32_t      minmatch;
    int64_t      expiry;
} sw_ad_t;


struct sw_data_s {
    char         root[SW_MAX_PATH];
    time_t       checked;
    struct stat  up_st;
    struct stat  ad_st;
    uint32_t    *users;
    size_t       nusers;
    sw_ad_t      ads[SW_NADS];
    size_t       nads;
};


static void sw_err(sw_err_pt err, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));


/* ---- helpers ------------------------------------------------------------ */

/* Formats one error line and hands it to the caller's err. */
static void
sw_err(sw_err_pt err, void *arg, const char *fmt, ...)
{
    char     line[SW_ERR_LINE];
    va_list  ap;

    if (err == NULL) {
        return;
    }

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);

    err(arg, line);
}


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


/* The number value of `name=`; -1 when absent or not a number. */
static int64_t
sw_num_of(const unsigned char *p, size_t len, const char *name)
{
    sw_str_t  v = sw_param(p, len, name);

    return sw_number(v.data, v.len);
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


unsigned char *
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


int
sw_same(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_size == b->st_size
           && a->st_mtim.tv_sec == b->st_mtim.tv_sec
           && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}


/* ---- requests ----------------------------------------------------------- */

sw_op_e
sw_route(const unsigned char *method, size_t mlen, const unsigned char *q,
    size_t qlen)
{
    if (mlen == 4 && memcmp(method, "POST", 4) == 0) {
        return SW_OP_POST;
    }

    if (!(mlen == 3 && memcmp(method, "GET", 3) == 0)) {
        return SW_OP_NOT_ALLOWED;
    }

    if (qlen >= 8 && memcmp(q, "command/", 8) == 0) {

        if (qlen == 13 && memcmp(q + 8, "Fetch", 5) == 0) {
            return SW_OP_FETCH;
        }

        if (qlen >= 13 && memcmp(q + 8, "Reset", 5) == 0
            && (qlen == 13 || q[13] == '&'))
        {
            return SW_OP_RESET;
        }

        return SW_OP_BAD;
    }

    return SW_OP_GET;
}


int
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


int
sw_cookie(const unsigned char *p, size_t len, int64_t *user, int64_t *last)
{
    size_t  i, end;

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


int
sw_head_format(char *buf, size_t size, sw_str_t soft, sw_str_t addr,
    sw_str_t script, sw_str_t query)
{
    int  n;

    n = snprintf(buf, size, SW_HEAD1 "<p>SERVER_SOFTWARE = %.*s\n"
                 "<p>REMOTE_ADDR = %.*s\n<p>SCRIPT_NAME = %.*s\n"
                 "<p>QUERY_STRING = %.*s\n<pre>\n",
                 sw_str(soft), sw_str(addr), sw_str(script), sw_str(query));

    if (n < 0 || (size_t) n >= size) {
        return -1;
    }

    return n;
}


/* ---- the data files ------------------------------------------------------ */

static void
sw_load_users(sw_data_t *d, const char *path, sw_err_pt err, void *arg)
{
    size_t          len, i, n;
    uint32_t       *users, dem;
    unsigned char  *buf;
    struct stat     st;

    buf = sw_read_file(path, 256 * 1024 * 1024, &len, &st);
    if (buf == NULL) {
        sw_err(err, arg, "specweb99: cannot read \"%s\": %s", path,
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
            sw_err(err, arg, "specweb99: bad record %zu in \"%s\"", i, path);
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
sw_load_ads(sw_data_t *d, const char *path, sw_err_pt err, void *arg)
{
    size_t          len, i, n;
    int64_t         minmatch, expiry;
    unsigned char  *buf, *p;
    struct stat     st;

    buf = sw_read_file(path, SW_NADS * SW_AD_REC * 2, &len, &st);
    if (buf == NULL) {
        sw_err(err, arg, "specweb99: cannot read \"%s\": %s", path,
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
            sw_err(err, arg, "specweb99: bad record %zu in \"%s\"", i, path);
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


sw_data_t *
sw_data_get(sw_data_t **dp, const char *root, int force, sw_err_pt err,
    void *arg)
{
    time_t       now;
    char         up[SW_MAX_PATH + 32], ad[SW_MAX_PATH + 32];
    sw_data_t   *d;
    struct stat  st;

    if (root == NULL || strlen(root) >= SW_MAX_PATH) {
        return NULL;
    }

    if (*dp == NULL) {
        *dp = calloc(1, sizeof(sw_data_t));
        if (*dp == NULL) {
            return NULL;
        }
    }

    d = *dp;
    now = time(NULL);

    if (strcmp(d->root, root) != 0) {
        snprintf(d->root, sizeof(d->root), "%s", root);
        memset(&d->up_st, 0, sizeof(struct stat));
        memset(&d->ad_st, 0, sizeof(struct stat));
        force = 1;
    }

    if (!force && d->checked == now) {
        return d;
    }

    d->checked = now;
    snprintf(up, sizeof(up), "%s/User.Personality", root);
    snprintf(ad, sizeof(ad), "%s/Custom.Ads", root);

    if (stat(up, &st) == -1 || force || !sw_same(&st, &d->up_st)) {
        sw_load_users(d, up, err, arg);
    }

    if (stat(ad, &st) == -1 || force || !sw_same(&st, &d->ad_st)) {
        sw_load_ads(d, ad, err, arg);
    }

    return d;
}


void
sw_data_free(sw_data_t **dp)
{
    if (*dp != NULL) {
        free((*dp)->users);
        free(*dp);
        *dp = NULL;
    }
}


/* ---- custom ad rotation ------------------------------------------------- */

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


int
sw_cad_select(sw_data_t *d, int64_t user, int64_t last, const char *path,
    char *cookie, size_t size)
{
    int  id, weight, expired, cls;

    id = sw_find_ad(d, user, last, &weight, &expired);

    snprintf(cookie, size, "found_cookie=Ad_id=%d&Ad_weight=%d&Expired=%d",
             id, weight, expired);

    cls = sw_class_of(path);
    if (id < 0 || (cls != 1 && cls != 2)) {
        return -1;
    }

    return id;
}


void
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


/* ---- the post log -------------------------------------------------------- */

int
sw_log_lock(const char *root, sw_err_pt err, void *arg)
{
    int   fd;
    char  path[SW_MAX_PATH + 16];

    snprintf(path, sizeof(path), "%s/post.log", root);

    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1) {
        sw_err(err, arg, "specweb99: open(\"%s\") failed: %s", path,
               strerror(errno));
        return -1;
    }

    while (flock(fd, LOCK_EX) == -1) {
        if (errno != EINTR) {
            sw_err(err, arg, "specweb99: flock(\"%s\") failed: %s", path,
                   strerror(errno));
            close(fd);
            return -1;
        }
    }

    return fd;
}


/* The record count in the header; from the size when it is not valid.
 * (t/integ/59-faults-fd.t stops a POST here, holding the lock.) */
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


int
sw_log_repair(int fd, off_t *size)
{
    int          rc;
    struct stat  st;

    rc = 0;
    *size = 0;

    if (fstat(fd, &st) == -1) {
        return -1;
    }

    if (st.st_size < SW_LOG_HEAD) {
        if (sw_log_set_count(fd, 0) != 0 || ftruncate(fd, SW_LOG_HEAD)) {
            rc = -1;
        }
        st.st_size = SW_LOG_HEAD;

    } else if (sw_log_count(fd) != (st.st_size - SW_LOG_HEAD) / SW_LOG_REC) {
        rc = sw_log_set_count(fd, (st.st_size - SW_LOG_HEAD) / SW_LOG_REC);
    }

    *size = st.st_size;

    return rc;
}


int
sw_log_copy(int fd, off_t size, sw_out_pt out, void *arg)
{
    int      rc;
    char     buf[65536];
    off_t    off;
    ssize_t  n;

    rc = 0;

    for (off = 0; rc == 0 && off < size; off += n) {
        n = pread(fd, buf, sizeof(buf), off);
        if (n == -1 && errno == EINTR) {
            n = 0;
            continue;
        }
        if (n <= 0 || out(arg, buf, (size_t) n) != 0) {
            rc = -1;
        }
    }

    return rc;
}


int
sw_log_truncate(int fd, sw_err_pt err, void *arg)
{
    if (ftruncate(fd, 0) == -1 || sw_log_set_count(fd, 0) != 0) {
        sw_err(err, arg, "specweb99: truncating post.log failed: %s",
               strerror(errno));
        return -1;
    }

    return 0;
}


/* ---- POST ---------------------------------------------------------------- */

int
sw_post_parse(sw_post_t *p, const unsigned char *body, size_t len)
{
    sw_str_t  root;

    root = sw_param(body, len, "urlroot");
    p->dir = sw_num_of(body, len, "dir");
    p->cls = sw_num_of(body, len, "class");
    p->num = sw_num_of(body, len, "num");
    p->client = sw_num_of(body, len, "client");

    if (!sw_safe_path(root.data, root.len) || root.len > 64
        || p->dir < 0 || p->dir > 99999 || p->cls < 0 || p->cls > 9
        || p->num < 0 || p->num > 9 || p->client < 0
        || p->client > 2147483647)
    {
        return -1;
    }

    snprintf(p->file, sizeof(p->file), "%.*sdir%05d/class%d_%d",
             sw_str(root), (int) p->dir, (int) p->cls, (int) p->num);

    return 0;
}


int
sw_post_log(const char *root, const sw_post_t *p, int64_t user,
    sw_err_pt err, void *arg)
{
    int      fd, rc;
    char     rec[SW_LOG_REC + 1];
    int64_t  count;

    fd = sw_log_lock(root, err, arg);
    if (fd == -1) {
        return -1;
    }

    count = sw_log_count(fd);

    /* the pid is the thread id too: both callers run this on their one
     * event loop thread */
    snprintf(rec, sizeof(rec),
             "%10d %10ld %10d %5d %2d %2d %10d %-60.60s %10d %10d\n",
             (int) (count + 1), (long) time(NULL), (int) getpid(),
             (int) p->dir, (int) p->cls, (int) p->num, (int) p->client,
             p->file, (int) getpid(), (int) user);

    rc = 0;
    if (pwrite(fd, rec, SW_LOG_REC, SW_LOG_HEAD + count * SW_LOG_REC)
        != SW_LOG_REC
        || sw_log_set_count(fd, count + 1) != 0)
    {
        sw_err(err, arg, "specweb99: writing post.log failed: %s",
               strerror(errno));
        rc = -1;
    }

    close(fd);    /* and the lock */

    return rc;
}


/* ---- Reset --------------------------------------------------------------- */

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
sw_exp_param(sw_str_t q, sw_reset_args_t *a)
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

    if (i == v.len || i >= sizeof(a->exp1) || v.len - i - 1 == 0
        || v.len - i - 1 >= sizeof(a->exp2)
        || sw_number(v.data, i) < 0
        || sw_number(v.data + i + 1, v.len - i - 1) < 0)
    {
        return -1;
    }

    memcpy(a->exp1, v.data, i);
    a->exp1[i] = '\0';
    memcpy(a->exp2, v.data + i + 1, v.len - i - 1);
    a->exp2[v.len - i - 1] = '\0';

    return 0;
}


int
sw_reset_parse(sw_str_t q, sw_reset_args_t *a)
{
    if (!sw_num_param(q, "maxload", a->maxload, sizeof(a->maxload), 1)
        || !sw_num_param(q, "pttime", a->pttime, sizeof(a->pttime), 1)
        || !sw_num_param(q, "maxthread", a->maxthread,
                         sizeof(a->maxthread), 0)
        || sw_exp_param(q, a) != 0)
    {
        return -1;
    }

    return 0;
}


void
sw_reset_argv(char **argv, const char *tool, const char *root,
    const sw_reset_args_t *a, int step)
{
    int  i;

    i = 0;
    argv[i++] = (char *) tool;
    argv[i++] = step ? "cadgen" : "upfgen";
    argv[i++] = "-C";
    argv[i++] = (char *) root;
    argv[i++] = step ? "-e" : "-n";
    argv[i++] = (char *) (step ? a->pttime : a->maxload);
    if (a->maxthread[0] != '\0') {
        argv[i++] = "-t";
        argv[i++] = (char *) a->maxthread;
    }
    if (step == 1 && a->exp1[0] != '\0') {
        argv[i++] = (char *) a->exp1;
        argv[i++] = (char *) a->exp2;
    }
    argv[i] = NULL;
}


size_t
sw_chomp(const char *s, size_t len)
{
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r')) {
        len--;
    }

    return len;
}
