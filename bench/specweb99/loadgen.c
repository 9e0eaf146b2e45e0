
/*
 * gannet-specweb99-load: a SPECweb99-style load generator (issue 7).
 *
 * One process, one thread, epoll, non-blocking sockets, GnuTLS for
 * --tls.  N simulated connections ("slots"); each slot opens a
 * connection, sends one request (30% of requests) or a keep-alive run of
 * 5..15 requests (70% of requests, 10 on average), closes and opens the
 * next.  A slot sends a request only when its average rate since it
 * started would stay at or under 400 kbit/s (SPEC's pacing).  Every
 * response is validated against the file set under ROOT (status,
 * framing, CRC-32C of the content, the dynamic HTML wrapper, the ad
 * cookie and ad tag rewrite, the POST cookie); the post log is checked
 * with the Fetch command at the end.
 *
 * Conformance: a slot's rate over the measurement interval is
 * (m(t1) - m(t0)) * 8 / (t1 - t0), with m(t) = min(bytes received by t,
 * 400 kbit/s * (t - slot start) / 8): a slot that is ahead of its
 * pacing line (it just received a large file and waits) counts as being
 * on the line, so a fast server gives 400 kbit/s whatever falls at the
 * interval's edges.  A slot conforms at >= 320 kbit/s.
 *
 * See bench/specweb99/README.md.  Not part of the server: it includes no
 * core/ header (only api/gannet/types.h for the result codes) and never
 * logs through the server's logger; its names are lg_* (load generator).
 */

#define _GNU_SOURCE 1

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <gnutls/gnutls.h>

#include "gannet/types.h"       /* GN_OK, GN_ERROR, GN_AGAIN, GN_DONE */


#define LG_LINE_BPS         400000.0
#define LG_CONFORM_BPS      320000.0
#define LG_NADS             360
#define LG_HDR_MAX          4096
#define LG_OP_TIMEOUT       30.0
#define LG_DRAIN_TIMEOUT    20.0
#define LG_SWEEP            0.25    /* s between deadline sweeps */
#define LG_EV_IN            (EPOLLIN | EPOLLRDHUP)
#define LG_PRIORITY                                                         \
    "NORMAL:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1"     \
    ":+GROUP-SECP521R1"


#define LG_WRAP_HEAD                                                        \
    "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>" \
    "\n<body>\n"
#define LG_WRAP_PRE         "\n<pre>\n"
#define LG_WRAP_TAIL        "\n</pre>\n</body></html>\n"
#define LG_TAG_HEAD         "<!WEB99CAD><IMG SRC=\"/file_set/dir"
#define LG_TAG_LEN          (sizeof(LG_TAG_HEAD) - 1 + 14)


typedef enum {
    LG_STATIC = 0,
    LG_DYN,
    LG_CAD,
    LG_POST,
    LG_CGI,
    LG_FETCH,
    LG_NKINDS
} lg_kind_e;


typedef enum {
    LG_E_CONNECT = 0,
    LG_E_TLS,
    LG_E_IO,
    LG_E_TIMEOUT,
    LG_E_STATUS,
    LG_E_FRAMING,
    LG_E_CONTENT,
    LG_E_WRAPPER,
    LG_E_COOKIE,
    LG_E_ADTAG,
    LG_E_POSTLOG,
    LG_NERRS
} lg_err_e;


static const char  *lg_err_names[LG_NERRS] = {
    "connect", "tls", "io", "timeout", "status", "framing", "content",
    "wrapper", "cookie", "adtag", "postlog"
};

static const char  *lg_kind_names[LG_NKINDS] = {
    "static", "dynamic", "cad", "post", "cgi", "fetch"
};


typedef enum {
    LG_S_IDLE = 0,      /* waiting for its pacing time, no connection */
    LG_S_HANDSHAKE,
    LG_S_WAIT,          /* connection open, waiting for pacing time */
    LG_S_SENDING,
    LG_S_HEADERS,
    LG_S_BODY,
    LG_S_CLOSING,       /* response read, waiting for the server's FIN */
    LG_S_DONE
} lg_state_e;


typedef enum {
    LG_B_LENGTH = 0,
    LG_B_CHUNK_SIZE,
    LG_B_CHUNK_DATA,
    LG_B_CHUNK_CRLF,
    LG_B_TRAILER,
    LG_B_EOF,
    LG_B_COMPLETE
} lg_body_e;


typedef struct {
    int64_t             size;       /* -1: not known yet, -2: missing */
    uint32_t            crc;
    uint32_t            tag_crc;    /* class 1, 2: see lg_crc_tags() */
} lg_file_t;


typedef struct lg_slot_s {
    int                 id;
    int                 fd;
    int64_t             ep_events;  /* -1: not in the epoll set */
    lg_state_e          state;
    gnutls_session_t    tls;
    gnutls_datum_t      saved;
    int                 resumed_offer;
    uint64_t            rng;

    double              start;      /* pacing origin */
    uint64_t            bytes;      /* bytes received since start */
    double              m0;         /* m(t0), see the top comment */
    double              rate;       /* bit/s over the interval */
    double              wake;       /* its pacing entry in the heap */
    int                 reqs_left;  /* on this connection, incl. current */
    int                 conn_reqs;  /* requests done on this connection */
    int                 last_ad;

    /* the current request */
    lg_kind_e           kind;
    int                 dir;
    int                 cls;
    int                 num;
    int                 user;
    int                 close_after;
    int                 peer_closed;    /* the FIN was read with the end */
    char                req[1024];
    size_t              req_len;
    size_t              req_sent;
    double              op_start;

    /* the response */
    char               *hdr;        /* LG_HDR_MAX, when a header block
                                       arrives in pieces */
    size_t              hdr_len;
    int                 status;
    int64_t             clen;
    int                 chunked;
    int                 server_close;
    char                cookie[256];
    lg_body_e           bstate;
    uint64_t            remain;
    char                line[64];
    size_t              line_len;
    uint32_t            crc;
    uint64_t            body_len;
    char               *buf;
    size_t              buf_len;
    size_t              buf_cap;
} lg_slot_t;


typedef struct {
    double              wake;
    lg_slot_t          *slot;
} lg_timer_t;


typedef struct {
    uint64_t            ops;            /* completed in the interval */
    double              resp_sum;       /* seconds, same ops */
    uint64_t            ops_all;
    uint64_t            kind_ops[LG_NKINDS];
    uint64_t            errors;
    uint64_t            err[LG_NERRS];
    uint64_t            posts_sent;
    uint64_t            posts_ok;
    uint64_t            conns;
    uint64_t            tls_full;
    uint64_t            tls_resumed;
    uint64_t            tls_offered;
    uint64_t            bytes;
    int                 conforming;
    double              kbit_mean;
    double              pct;
    double              ops_s;
    double              resp_ms;
    double              measured;
    double              cpu_self;       /* s of CPU in the interval */
    double              cpu_server;     /* same, --server-pid; < 0: none */
    double              rate_sum;       /* bit/s, over the slots */
    int                 drained;
} lg_result_t;


typedef struct {
    const char         *host;
    const char         *port;
    const char         *root;
    const char         *cgi_url;
    const char         *dyn_url;
    const char         *priority;
    int                 tls;
    int                 resume_share;
    int                 conns;
    double              rampup;
    double              time;
    double              rampdown;
    int                 search;
    int                 min;
    int                 max;
    int                 static_only;
    uint64_t            seed;
    int                 verbose;
    int                 procs;
    pid_t               server_pid;
    int                 dirs_on_disk;
    int                 users;
} lg_conf_t;


static lg_conf_t                         lg_conf;
static struct sockaddr_storage           lg_addr;
static socklen_t                         lg_addrlen;
static gnutls_certificate_credentials_t  lg_cred;
static gnutls_priority_t                 lg_prio;
static int                               lg_ep = -1;
static lg_slot_t                        *lg_slots;
static int                               lg_nslots; /* in this process */
static lg_timer_t                       *lg_heap;
static int                               lg_heap_n;
static int                               lg_heap_cap;
static double                           *lg_deadline;   /* per slot */
static lg_file_t                        *lg_files;
static int                               lg_numdirs;
static double                           *lg_dir_cdf;
static double                            lg_file_cdf[9];
static lg_result_t                       lg_res;
static double                            lg_t0;     /* interval start */
static double                            lg_t1;     /* interval end */
static double                            lg_tend;   /* stop sending */
static int                               lg_stopping;
static int                               lg_active;
static volatile sig_atomic_t             lg_interrupted;
static int                               lg_crc_hw;
static double                            lg_cpu0;   /* CPU at lg_t0 */
static double                            lg_srv0;

static const int  lg_file_order[9] = { 4, 3, 5, 2, 6, 1, 7, 8, 0 };
static const double  lg_class_freq[4] = { 0.35, 0.50, 0.14, 0.01 };


static void lg_slot_next(lg_slot_t *s, double now);
static void lg_slot_continue(lg_slot_t *s, double now);
static void lg_slot_start_op(lg_slot_t *s, double now);
static int lg_loop_init(int n);
static void lg_loop_free(void);
static void lg_slot_read(lg_slot_t *s, double now, uint32_t ev);
static void lg_slot_send(lg_slot_t *s, double now);
static void lg_slot_fail(lg_slot_t *s, lg_err_e e, double now,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));


/* ---- small helpers ------------------------------------------------------- */

static double
lg_now(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}


/* This process's CPU time (user + system), in seconds. */
static double
lg_cpu_self(void)
{
    struct rusage  ru;

    if (getrusage(RUSAGE_SELF, &ru) == -1) {
        return 0;
    }
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
           + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}


/*
 * A process's session id and CPU time in clock ticks: utime, stime and
 * the reaped children's cutime and cstime (so a CGI process that ends
 * between two samples stays counted), from /proc/PID/stat.  Returns -1
 * when the process is gone.
 */
static int
lg_cpu_stat(pid_t pid, long *sid, double *ticks)
{
    char                path[64], buf[1024], *p;
    int                 fd, i;
    ssize_t             n;
    unsigned long long  v[4];

    snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return -1;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return -1;
    }
    buf[n] = '\0';
    /* after comm (which may hold spaces, not ')'): state ppid pgrp
     * session ... utime is the 12th field from there */
    p = strrchr(buf, ')');
    if (p == NULL || sscanf(p + 1, " %*c %*d %*d %ld", sid) != 1) {
        return -1;
    }
    for (i = 0; i < 12 && p != NULL; i++) {
        p = strchr(p + 1, ' ');
    }
    if (p == NULL
        || sscanf(p, " %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) != 4)
    {
        return -1;
    }
    *ticks = (double) (v[0] + v[1] + v[2] + v[3]);
    return 0;
}


/* CPU ticks of a process and its descendants, or -1 when it is gone. */
static double
lg_cpu_tree_ticks(pid_t pid, int depth)
{
    char    path[64];
    double  sum, t;
    FILE   *f;
    long    kid, sid;

    if (lg_cpu_stat(pid, &sid, &sum) != 0) {
        return -1;
    }
    if (depth > 8) {
        return sum;
    }
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) pid,
             (int) pid);
    f = fopen(path, "re");
    if (f == NULL) {
        return sum;
    }
    while (fscanf(f, "%ld", &kid) == 1) {
        t = lg_cpu_tree_ticks((pid_t) kid, depth + 1);
        sum += t > 0 ? t : 0;
    }
    fclose(f);
    return sum;
}


/* CPU ticks of every process of session sid. */
static double
lg_cpu_session_ticks(long sid)
{
    DIR            *d;
    struct dirent  *de;
    double          sum, t;
    long            s, pid;
    char           *end;

    d = opendir("/proc");
    if (d == NULL) {
        return -1;
    }
    sum = 0;
    while ((de = readdir(d)) != NULL) {
        pid = strtol(de->d_name, &end, 10);
        if (*end != '\0' || pid <= 0) {
            continue;
        }
        if (lg_cpu_stat((pid_t) pid, &s, &t) == 0 && s == sid) {
            sum += t;
        }
    }
    closedir(d);
    return sum;
}


/*
 * The server's CPU time in seconds (--server-pid), or -1. When PID leads
 * its session (run.sh starts servers with setsid), every process of the
 * session counts: gannet's CGI launcher is not the master's child, and
 * neither are the scripts it runs. Otherwise PID and its descendants.
 */
static double
lg_cpu_server(void)
{
    double  t;
    long    sid;

    if (lg_conf.server_pid <= 0
        || lg_cpu_stat(lg_conf.server_pid, &sid, &t) != 0)
    {
        return -1;
    }
    t = sid == (long) lg_conf.server_pid ? lg_cpu_session_ticks(sid)
                                         : lg_cpu_tree_ticks(lg_conf.server_pid,
                                                             0);
    return t < 0 ? -1 : t / (double) sysconf(_SC_CLK_TCK);
}


static uint64_t
lg_rand(uint64_t *st)
{
    uint64_t  z;

    /* splitmix64: a full-period generator, one 64-bit word of state */
    z = (*st += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}


static double
lg_uniform(uint64_t *st)
{
    return (lg_rand(st) >> 11) * (1.0 / 9007199254740992.0);
}


static int
lg_cdf_pick(const double *cdf, int n, double u)
{
    int  lo, hi, mid;

    lo = 0;
    hi = n - 1;
    while (lo < hi) {
        mid = (lo + hi) / 2;
        if (u < cdf[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}


static void
lg_zipf_cdf(double *cdf, int n)
{
    int     i;
    double  sum;

    sum = 0;
    for (i = 0; i < n; i++) {
        sum += 1.0 / (i + 1);
        cdf[i] = sum;
    }
    for (i = 0; i < n; i++) {
        cdf[i] /= sum;
    }
    cdf[n - 1] = 1.0;
}


/* ---- CRC-32C ------------------------------------------------------------- */

/*
 * Every response body goes through the CRC, so on x86-64 it runs three
 * independent crc32 instruction streams over three blocks (the
 * instruction's latency is three times its throughput) and joins them
 * with "shift by N zero bytes" tables: crc(A B) = shift(crc(A), |B|) ^
 * crc0(B) for the raw CRC register (the method of Mark Adler's crc32c.c).
 */

#define LG_CRC_POLY         0x82f63b78
#define LG_CRC_LONG         8192
#define LG_CRC_SHORT        256

static uint32_t  lg_crc_table[256];
static uint32_t  lg_crc_long[4][256];
static uint32_t  lg_crc_short[4][256];


static uint32_t
lg_gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t  sum;

    sum = 0;
    while (vec) {
        if (vec & 1) {
            sum ^= *mat;
        }
        vec >>= 1;
        mat++;
    }
    return sum;
}


static void
lg_gf2_square(uint32_t *square, const uint32_t *mat)
{
    int  n;

    for (n = 0; n < 32; n++) {
        square[n] = lg_gf2_times(mat, mat[n]);
    }
}


/* Fills zeros[][] so that lg_crc_shift() appends `len` zero bytes. */
static void
lg_crc_zeros(uint32_t zeros[4][256], size_t len)
{
    uint32_t  op[32], sq[32], row;
    int       n, i;

    /* op: one zero bit; squared three times: one zero byte */
    op[0] = LG_CRC_POLY;
    row = 1;
    for (n = 1; n < 32; n++) {
        op[n] = row;
        row <<= 1;
    }
    for (i = 0; i < 3; i++) {
        lg_gf2_square(sq, op);
        memcpy(op, sq, sizeof(op));
    }
    /* op = (one zero byte)^len, by squaring */
    memcpy(sq, op, sizeof(sq));
    for (n = 0; n < 32; n++) {
        op[n] = 1u << n;                /* identity */
    }
    while (len) {
        uint32_t  t[32];

        if (len & 1) {
            for (n = 0; n < 32; n++) {
                t[n] = lg_gf2_times(sq, op[n]);
            }
            memcpy(op, t, sizeof(op));
        }
        len >>= 1;
        if (len) {
            lg_gf2_square(t, sq);
            memcpy(sq, t, sizeof(sq));
        }
    }
    for (n = 0; n < 256; n++) {
        zeros[0][n] = lg_gf2_times(op, n);
        zeros[1][n] = lg_gf2_times(op, (uint32_t) n << 8);
        zeros[2][n] = lg_gf2_times(op, (uint32_t) n << 16);
        zeros[3][n] = lg_gf2_times(op, (uint32_t) n << 24);
    }
}


static uint32_t
lg_crc_shift(uint32_t zeros[4][256], uint32_t c)
{
    return zeros[0][c & 0xff] ^ zeros[1][(c >> 8) & 0xff]
           ^ zeros[2][(c >> 16) & 0xff] ^ zeros[3][c >> 24];
}


static void
lg_crc_init(void)
{
    uint32_t  c;
    int       i, k;

    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ LG_CRC_POLY : c >> 1;
        }
        lg_crc_table[i] = c;
    }
    lg_crc_zeros(lg_crc_long, LG_CRC_LONG);
    lg_crc_zeros(lg_crc_short, LG_CRC_SHORT);
#if defined(__x86_64__)
    __builtin_cpu_init();
    lg_crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}


#if defined(__x86_64__)

/* Three streams over blocks of `block` bytes each, while 3 fit. */
__attribute__((target("sse4.2")))
static uint32_t
lg_crc_hw_3way(uint32_t c, const unsigned char **pp, size_t *np,
    size_t block, uint32_t zeros[4][256])
{
    const unsigned char  *p, *end;
    uint64_t              c0, c1, c2, w0, w1, w2;

    p = *pp;
    c0 = c;
    while (*np >= 3 * block) {
        c1 = 0;
        c2 = 0;
        end = p + block;
        do {
            memcpy(&w0, p, 8);
            memcpy(&w1, p + block, 8);
            memcpy(&w2, p + 2 * block, 8);
            c0 = __builtin_ia32_crc32di(c0, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
            p += 8;
        } while (p < end);
        c0 = lg_crc_shift(zeros, (uint32_t) c0) ^ (uint32_t) c1;
        c0 = lg_crc_shift(zeros, (uint32_t) c0) ^ (uint32_t) c2;
        p += 2 * block;
        *np -= 3 * block;
    }
    *pp = p;
    return (uint32_t) c0;
}


__attribute__((target("sse4.2")))
static uint32_t
lg_crc_hw_update(uint32_t c, const unsigned char *p, size_t n)
{
    uint64_t  c64, w;

    c = lg_crc_hw_3way(c, &p, &n, LG_CRC_LONG, lg_crc_long);
    c = lg_crc_hw_3way(c, &p, &n, LG_CRC_SHORT, lg_crc_short);
    c64 = c;
    while (n >= 8) {
        memcpy(&w, p, 8);
        c64 = __builtin_ia32_crc32di(c64, w);
        p += 8;
        n -= 8;
    }
    c = (uint32_t) c64;
    while (n--) {
        c = __builtin_ia32_crc32qi(c, *p++);
    }
    return c;
}
#endif


/* Streaming CRC-32C; start with ~0 and finish with ~crc. */
static uint32_t
lg_crc_update(uint32_t c, const void *data, size_t n)
{
    const unsigned char  *p;

#if defined(__x86_64__)
    if (lg_crc_hw) {
        return lg_crc_hw_update(c, data, n);
    }
#endif
    p = data;
    while (n--) {
        c = lg_crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    }
    return c;
}


/* ---- the file set on disk ------------------------------------------------ */

static int
lg_file_index(int dir, int cls, int num)
{
    return dir * 36 + cls * 9 + num;
}


static void
lg_file_path(char *buf, size_t size, int dir, int cls, int num)
{
    snprintf(buf, size, "%s/file_set/dir%05d/class%d_%d", lg_conf.root,
             dir, cls, num);
}


/*
 * Reads a file of the set into a malloc()ed buffer; returns its size or
 * -1.  Used for the CRC table (once per file) and for the slow path of
 * the dynamic checks.
 */
static int64_t
lg_file_read(int dir, int cls, int num, char **out)
{
    char        path[4096];
    int         fd;
    struct stat st;
    char       *b;
    ssize_t     n;
    size_t      got;

    lg_file_path(path, sizeof(path), dir, cls, num);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return -1;
    }
    if (fstat(fd, &st) == -1) {
        close(fd);
        return -1;
    }
    b = malloc(st.st_size + 1);
    if (b == NULL) {
        close(fd);
        return -1;
    }
    for (got = 0; got < (size_t) st.st_size; got += n) {
        n = read(fd, b + got, st.st_size - got);
        if (n <= 0) {
            free(b);
            close(fd);
            return -1;
        }
    }
    close(fd);
    *out = b;
    return st.st_size;
}


/*
 * The CRC-32C of a page body with the variable part of every ad tag
 * (the 14 bytes "NNNNN/classX_Y" after LG_TAG_HEAD) read as
 * "00000/class0_0".  A CAD response of class 1 or 2 is its file with
 * every tag rewritten, so it must give the file's tag_crc: that checks
 * every byte outside the tags without reading the file again.  Each tag
 * of `p` must be well formed and, when `want` is given, carry it.
 * Returns -1, or LG_E_ADTAG (the CRC is computed all the same).
 */
static int
lg_crc_tags(const char *p, size_t n, const char *want, uint32_t *crc)
{
    static const char  zero[14] = "00000/class0_0";
    const char        *end, *t, *v;
    size_t             hl;
    uint32_t           c;
    int                e, i;

    hl = sizeof(LG_TAG_HEAD) - 1;
    end = p + n;
    c = ~0u;
    e = -1;
    while (p < end
           && (t = memmem(p, end - p, LG_TAG_HEAD, hl)) != NULL
           && (size_t) (end - t) >= LG_TAG_LEN)
    {
        v = t + hl;
        c = lg_crc_update(c, p, v - p);
        c = lg_crc_update(c, zero, sizeof(zero));
        for (i = 0; i < 5; i++) {
            if (v[i] < '0' || v[i] > '9') {
                e = LG_E_ADTAG;
            }
        }
        if (memcmp(v + 5, "/class", 6) != 0 || v[11] < '0' || v[11] > '3'
            || v[12] != '_' || v[13] < '0' || v[13] > '8'
            || (want != NULL && memcmp(v, want, 14) != 0))
        {
            e = LG_E_ADTAG;
        }
        p = v + 14;
    }
    *crc = ~lg_crc_update(c, p, end - p);
    return e;
}


static lg_file_t *
lg_file_get(int dir, int cls, int num)
{
    lg_file_t  *f;
    char       *b;
    int64_t     n;

    f = &lg_files[lg_file_index(dir, cls, num)];
    if (f->size == -1) {
        n = lg_file_read(dir, cls, num, &b);
        if (n < 0) {
            f->size = -2;
        } else {
            f->size = n;
            f->crc = ~lg_crc_update(~0u, b, n);
            if (cls == 1 || cls == 2) {
                (void) lg_crc_tags(b, n, NULL, &f->tag_crc);
            }
            free(b);
        }
    }
    return f;
}


static int
lg_count_dirs(void)
{
    char            path[4096];
    DIR            *d;
    struct dirent  *de;
    int             n, max;

    snprintf(path, sizeof(path), "%s/file_set", lg_conf.root);
    d = opendir(path);
    if (d == NULL) {
        return -1;
    }
    max = -1;
    n = 0;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "dir", 3) == 0) {
            n++;
            if (atoi(de->d_name + 3) > max) {
                max = atoi(de->d_name + 3);
            }
        }
    }
    closedir(d);
    /* directories are numbered from 0 without holes */
    return (max + 1 < n) ? max + 1 : n;
}


static int
lg_count_users(void)
{
    char         path[4096];
    struct stat  st;

    snprintf(path, sizeof(path), "%s/User.Personality", lg_conf.root);
    if (stat(path, &st) == -1) {
        return -1;
    }
    return (int) (st.st_size / 15);
}


static int
lg_numdirs_for(int conns)
{
    return (int) (25 + ((400000.0 / 122000.0) * conns) / 5);
}


/* ---- timers ------------------------------------------------------------- */

/*
 * Pacing wake-ups: a binary min-heap of (wake time, slot), with lazy
 * deletion: an entry counts only while its slot is waiting (LG_S_IDLE or
 * LG_S_WAIT) with that same wake time, so setting a timer never touches
 * other slots (an indexed heap wrote each moved entry's slot, a cache
 * miss per level, and was the largest user-space cost).
 *
 * Deadlines (30 s per request, 5 s for the server's FIN) are not in the
 * heap: they sit in lg_deadline[], one per slot, swept a few times a
 * second (a pass over a small array, instead of two heap updates per
 * request).
 */
static int
lg_timer_grow(void)
{
    lg_timer_t  *h;
    int          cap;

    cap = lg_heap_cap ? lg_heap_cap * 2 : 64;
    h = realloc(lg_heap, cap * sizeof(lg_timer_t));
    if (h == NULL) {
        return GN_ERROR;
    }
    lg_heap = h;
    lg_heap_cap = cap;
    return GN_OK;
}


static void
lg_timer_set(lg_slot_t *s, double when)
{
    int  i, parent;

    s->wake = when;
    if (lg_heap_n == lg_heap_cap && lg_timer_grow() != GN_OK) {
        return;     /* out of memory: the drain timeout ends the run */
    }
    i = lg_heap_n++;
    while (i > 0) {
        parent = (i - 1) / 2;
        if (lg_heap[parent].wake <= when) {
            break;
        }
        lg_heap[i] = lg_heap[parent];
        i = parent;
    }
    lg_heap[i].wake = when;
    lg_heap[i].slot = s;
}


/* Removes the earliest entry; returns its slot if it still counts. */
static lg_slot_t *
lg_timer_pop(void)
{
    lg_timer_t   top, last;
    lg_slot_t   *s;
    int          i, l, m;

    top = lg_heap[0];
    last = lg_heap[--lg_heap_n];
    i = 0;
    for ( ;; ) {
        l = 2 * i + 1;
        if (l >= lg_heap_n) {
            break;
        }
        m = (l + 1 < lg_heap_n && lg_heap[l + 1].wake < lg_heap[l].wake)
            ? l + 1 : l;
        if (last.wake <= lg_heap[m].wake) {
            break;
        }
        lg_heap[i] = lg_heap[m];
        i = m;
    }
    if (lg_heap_n > 0) {
        lg_heap[i] = last;
    }
    s = top.slot;
    if (s->wake != top.wake
        || (s->state != LG_S_IDLE && s->state != LG_S_WAIT))
    {
        return NULL;
    }
    return s;
}


/* The earliest wake time; the heap must not be empty. */
static double
lg_timer_first(void)
{
    return lg_heap[0].wake;
}


/* A request's or a close's deadline (0: none); slots of lg_slots only. */
static void
lg_deadline_set(lg_slot_t *s, double when)
{
    if (lg_nslots > 0 && s >= lg_slots && s < lg_slots + lg_nslots) {
        lg_deadline[s - lg_slots] = when;
    }
}


/* ---- connections --------------------------------------------------------- */

/* Level-triggered interest; an epoll_ctl() only when it changes. */
static void
lg_ep_set(lg_slot_t *s, uint32_t events)
{
    struct epoll_event  ev;

    if (s->ep_events == (int64_t) events) {
        return;
    }
    ev.events = events;
    ev.data.ptr = s;
    (void) epoll_ctl(lg_ep, s->ep_events < 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD,
                     s->fd, &ev);
    s->ep_events = events;
}


static void
lg_conn_close(lg_slot_t *s)
{
    if (s->tls != NULL) {
        gnutls_deinit(s->tls);
        s->tls = NULL;
    }
    if (s->fd != -1) {
        close(s->fd);       /* also removes it from the epoll set */
        s->fd = -1;
    }
    s->reqs_left = 0;
}


/* A send or handshake failed on a new connection: connect error or not. */
static lg_err_e
lg_conn_error(lg_slot_t *s, lg_err_e e, int *err)
{
    socklen_t  len;

    *err = 0;
    len = sizeof(*err);
    if (s->conn_reqs == 0 && s->fd != -1
        && getsockopt(s->fd, SOL_SOCKET, SO_ERROR, err, &len) == 0
        && *err != 0)
    {
        return LG_E_CONNECT;
    }
    return e;
}


static int
lg_tls_start(lg_slot_t *s, double now)
{
    const char  *sni;

    /* one TLS 1.3 key share, for the first group of the priority (X25519
     * by default): GnuTLS makes two by default (X25519 and P-256), and
     * the unused key generation was a large part of a handshake's cost
     * on the client; the server does the same work either way */
    if (gnutls_init(&s->tls, GNUTLS_CLIENT | GNUTLS_NONBLOCK
                             | GNUTLS_KEY_SHARE_TOP) != 0)
    {
        s->tls = NULL;
        lg_slot_fail(s, LG_E_TLS, now, "gnutls_init() failed");
        return GN_ERROR;
    }
    gnutls_priority_set(s->tls, lg_prio);
    gnutls_credentials_set(s->tls, GNUTLS_CRD_CERTIFICATE, lg_cred);
    sni = lg_conf.host;
    if (strspn(sni, "0123456789.:") != strlen(sni)) {
        gnutls_server_name_set(s->tls, GNUTLS_NAME_DNS, sni, strlen(sni));
    }
    gnutls_transport_set_int(s->tls, s->fd);
    s->resumed_offer = 0;
    if (s->saved.data != NULL
        && (int) (lg_uniform(&s->rng) * 100) < lg_conf.resume_share)
    {
        gnutls_session_set_data(s->tls, s->saved.data, s->saved.size);
        s->resumed_offer = 1;
        lg_res.tls_offered++;
    }
    s->state = LG_S_HANDSHAKE;
    return GN_OK;
}


static int
lg_tls_handshake(lg_slot_t *s, double now)
{
    int  rc, err;

    rc = gnutls_handshake(s->tls);
    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
        lg_ep_set(s, gnutls_record_get_direction(s->tls) ? EPOLLOUT
                                                         : LG_EV_IN);
        return GN_AGAIN;
    }
    if (rc < 0) {
        if (lg_conn_error(s, LG_E_TLS, &err) == LG_E_CONNECT) {
            lg_slot_fail(s, LG_E_CONNECT, now, "connect(): %s",
                         strerror(err));
        } else {
            lg_slot_fail(s, LG_E_TLS, now, "handshake: %s",
                         gnutls_strerror(rc));
        }
        return GN_ERROR;
    }
    if (gnutls_session_is_resumed(s->tls)) {
        lg_res.tls_resumed++;
    } else {
        lg_res.tls_full++;
    }
    return GN_OK;
}


/* Saves the session for later resumption (after a response: a TLS 1.3
 * ticket arrives after the handshake). */
static void
lg_tls_save(lg_slot_t *s)
{
    gnutls_datum_t  d;

    if (s->tls == NULL || s->conn_reqs != 1) {
        return;
    }
    if (gnutls_protocol_get_version(s->tls) == GNUTLS_TLS1_3
        && !(gnutls_session_get_flags(s->tls) & GNUTLS_SFLAGS_SESSION_TICKET))
    {
        return;
    }
    if (gnutls_session_get_data2(s->tls, &d) != 0) {
        return;
    }
    if (s->saved.data != NULL) {
        gnutls_free(s->saved.data);
    }
    s->saved = d;
}


/*
 * Opens the slot's connection and goes straight on to the request (or
 * the ClientHello): no wait for EPOLLOUT, no getsockopt(SO_ERROR).  On
 * loopback the handshake is usually complete when connect() returns;
 * when it is not, the send gets EAGAIN and EPOLLOUT is asked for, and a
 * refused connection shows as the send's error (counted as "connect").
 */
static int
lg_conn_open(lg_slot_t *s, double now)
{
    int  fd, one, rc;

    fd = socket(lg_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                0);
    if (fd == -1) {
        lg_slot_fail(s, LG_E_CONNECT, now, "socket(): %s", strerror(errno));
        return GN_ERROR;
    }
    if (lg_conf.tls) {
        /* the request follows the Finished record before its ACK: Nagle
         * would hold it; a plain request is one send(), never held */
        one = 1;
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    s->fd = fd;
    s->ep_events = -1;
    lg_res.conns++;
    rc = connect(fd, (struct sockaddr *) &lg_addr, lg_addrlen);
    if (rc == -1 && errno != EINPROGRESS) {
        lg_slot_fail(s, LG_E_CONNECT, now, "connect(): %s", strerror(errno));
        return GN_ERROR;
    }
    if (lg_conf.tls) {
        if (lg_tls_start(s, now) != GN_OK) {
            return GN_ERROR;
        }
        if (lg_tls_handshake(s, now) != GN_OK) {
            return GN_OK;           /* in progress, or failed */
        }
    }
    s->state = LG_S_SENDING;
    lg_slot_send(s, now);
    return GN_OK;
}


static ssize_t
lg_io_send(lg_slot_t *s, const char *p, size_t n)
{
    ssize_t  rc;

    if (s->tls != NULL) {
        rc = gnutls_record_send(s->tls, p, n);
        if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
            return GN_AGAIN;
        }
        return rc < 0 ? GN_ERROR : rc;
    }
    rc = send(s->fd, p, n, MSG_NOSIGNAL);
    if (rc == -1) {
        return (errno == EAGAIN || errno == EINTR) ? GN_AGAIN : GN_ERROR;
    }
    return rc;
}


/* Returns bytes read, 0 at EOF, GN_AGAIN or GN_ERROR. */
static ssize_t
lg_io_recv(lg_slot_t *s, char *p, size_t n)
{
    ssize_t  rc;

    if (s->tls != NULL) {
        rc = gnutls_record_recv(s->tls, p, n);
        if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) {
            return GN_AGAIN;
        }
        if (rc == GNUTLS_E_PREMATURE_TERMINATION) {
            return 0;
        }
        return rc < 0 ? GN_ERROR : rc;
    }
    rc = recv(s->fd, p, n, 0);
    if (rc == -1) {
        return (errno == EAGAIN || errno == EINTR) ? GN_AGAIN : GN_ERROR;
    }
    return rc;
}


/* ---- requests ------------------------------------------------------------ */

static void
lg_pick_file(lg_slot_t *s)
{
    double  u;
    int     c;

    s->dir = lg_cdf_pick(lg_dir_cdf, lg_numdirs, lg_uniform(&s->rng));
    u = lg_uniform(&s->rng);
    for (c = 0; c < 3 && u >= lg_class_freq[c]; c++) {
        u -= lg_class_freq[c];
    }
    s->cls = c;
    s->num = lg_file_order[lg_cdf_pick(lg_file_cdf, 9,
                                       lg_uniform(&s->rng))];
}


static lg_kind_e
lg_pick_kind(lg_slot_t *s)
{
    double  u;

    if (lg_conf.static_only) {
        return LG_STATIC;
    }
    u = lg_uniform(&s->rng);
    if (u < 0.70) {
        return LG_STATIC;
    }
    if (u < 0.8245) {
        return LG_DYN;
    }
    if (u < 0.9505) {
        return LG_CAD;
    }
    if (u < 0.9985) {
        return LG_POST;
    }
    return LG_CGI;
}


static void
lg_build_request(lg_slot_t *s)
{
    char        body[256], cookie[128];
    const char *conn;
    int         n, blen;

    if (s->kind != LG_FETCH) {
        s->kind = lg_pick_kind(s);
        lg_pick_file(s);
    }
    s->user = lg_conf.users > 0
              ? (int) (lg_rand(&s->rng) % lg_conf.users) + 10000 : 10000;
    s->close_after = (s->reqs_left <= 1);
    conn = s->close_after ? "Connection: close\r\n" : "";
    snprintf(cookie, sizeof(cookie),
             "Cookie: my_cookie=user_id=%d&last_ad=%d\r\n",
             s->user, s->last_ad);

    switch (s->kind) {
    case LG_STATIC:
        n = snprintf(s->req, sizeof(s->req),
                     "GET /file_set/dir%05d/class%d_%d HTTP/1.1\r\n"
                     "Host: %s\r\n%s\r\n",
                     s->dir, s->cls, s->num, lg_conf.host, conn);
        break;
    case LG_DYN:
    case LG_CGI:
    case LG_CAD:
        n = snprintf(s->req, sizeof(s->req),
                     "GET %s?/file_set/dir%05d/class%d_%d HTTP/1.1\r\n"
                     "Host: %s\r\n%s%s\r\n",
                     s->kind == LG_CGI ? lg_conf.cgi_url : lg_conf.dyn_url,
                     s->dir, s->cls, s->num, lg_conf.host,
                     s->kind == LG_CAD ? cookie : "", conn);
        break;
    case LG_POST:
        blen = snprintf(body, sizeof(body),
                        "urlroot=/file_set/&dir=%05d&class=%d&num=%d"
                        "&client=%d", s->dir, s->cls, s->num, s->id);
        n = snprintf(s->req, sizeof(s->req),
                     "POST %s HTTP/1.1\r\nHost: %s\r\n%s"
                     "Content-Type: application/x-www-form-urlencoded\r\n"
                     "Content-Length: %d\r\n%s\r\n%s",
                     lg_conf.dyn_url, lg_conf.host, cookie, blen, conn, body);
        break;
    default:
        n = snprintf(s->req, sizeof(s->req),
                     "GET %s?command/Fetch HTTP/1.1\r\nHost: %s\r\n"
                     "Connection: close\r\n\r\n", lg_conf.dyn_url,
                     lg_conf.host);
        break;
    }
    s->req_len = n;
    s->req_sent = 0;
    s->hdr_len = 0;
    s->status = 0;
    s->clen = -1;
    s->chunked = 0;
    s->server_close = 0;
    s->cookie[0] = '\0';
    s->peer_closed = 0;
    s->crc = ~0u;
    s->body_len = 0;
    s->buf_len = 0;
    s->line_len = 0;
}


/* ---- response validation ------------------------------------------------- */

static int
lg_buffered(lg_slot_t *s)
{
    return s->kind != LG_STATIC;
}


/*
 * Compares the <pre> part of a dynamic page with the file.  Ad tags in
 * the page must be well formed; for a CAD page of class 1 or 2 they must
 * carry the ad id (NNNNN = id/36, X = (id%36)/9, Y = id%9).  Returns an
 * lg_err_e or -1 when all is well.
 */
static int
lg_check_pre(lg_slot_t *s, const char *p, size_t n, int ad)
{
    lg_file_t  *f;
    char        want[16];
    uint32_t    crc;
    int         e;

    f = lg_file_get(s->dir, s->cls, s->num);
    if (f->size < 0 || (int64_t) n != f->size) {
        return LG_E_CONTENT;
    }
    if (s->kind == LG_CAD && (s->cls == 1 || s->cls == 2)) {
        /* the tags are rewritten: to the ad's file when there is one */
        if (ad >= 0) {
            snprintf(want, sizeof(want), "%05d/class%d_%d", ad / 36,
                     (ad % 36) / 9, ad % 9);
        }
        e = lg_crc_tags(p, n, ad >= 0 ? want : NULL, &crc);
        if (e != -1) {
            return e;
        }
        return crc == f->tag_crc ? -1 : LG_E_CONTENT;
    }
    if (~lg_crc_update(~0u, p, n) == f->crc) {
        return -1;
    }
    /* an error: a malformed ad tag is told apart from other content */
    return lg_crc_tags(p, n, NULL, &crc) == LG_E_ADTAG ? LG_E_ADTAG
                                                       : LG_E_CONTENT;
}


/* Parses "found_cookie=Ad_id=<id>&Ad_weight=<w>&Expired=<0|1>"; returns
 * the id (-1 allowed) or -2 when malformed. */
static int
lg_parse_ad_cookie(const char *c)
{
    const char  *p;
    char        *end;
    long         id;

    p = strstr(c, "found_cookie=Ad_id=");
    if (p == NULL) {
        return -2;
    }
    p += sizeof("found_cookie=Ad_id=") - 1;
    id = strtol(p, &end, 10);
    if (end == p || id < -1 || id >= LG_NADS
        || strncmp(end, "&Ad_weight=", 11) != 0)
    {
        return -2;
    }
    p = end + 11;
    (void) strtol(p, &end, 10);
    if (end == p || strncmp(end, "&Expired=", 9) != 0
        || (end[9] != '0' && end[9] != '1'))
    {
        return -2;
    }
    return (int) id;
}


static int
lg_check_dynamic(lg_slot_t *s)
{
    const char  *b, *pre, *q;
    size_t       n, tl, hl;
    int          ad;
    char         qs[96], want[64];

    b = s->buf;
    n = s->buf_len;
    hl = sizeof(LG_WRAP_HEAD) - 1;
    tl = sizeof(LG_WRAP_TAIL) - 1;
    if (n < hl + tl || memcmp(b, LG_WRAP_HEAD, hl) != 0
        || memcmp(b + n - tl, LG_WRAP_TAIL, tl) != 0)
    {
        return LG_E_WRAPPER;
    }
    pre = memmem(b, n, LG_WRAP_PRE, sizeof(LG_WRAP_PRE) - 1);
    if (pre == NULL) {
        return LG_E_WRAPPER;
    }
    q = b + hl;
    if (memmem(q, pre - q, "<p>SERVER_SOFTWARE = ", 21) == NULL
        || memmem(q, pre - q, "<p>REMOTE_ADDR = ", 17) == NULL
        || memmem(q, pre - q, "<p>SCRIPT_NAME = ", 17) == NULL
        || memmem(q, pre - q, "<p>QUERY_STRING = ", 18) == NULL)
    {
        return LG_E_WRAPPER;
    }
    if (s->kind != LG_POST) {
        snprintf(qs, sizeof(qs), "<p>QUERY_STRING = /file_set/dir%05d/"
                 "class%d_%d\n", s->dir, s->cls, s->num);
        if (memmem(q, pre - q + 1, qs, strlen(qs)) == NULL) {
            return LG_E_WRAPPER;
        }
    }
    pre += sizeof(LG_WRAP_PRE) - 1;

    ad = -1;
    if (s->kind == LG_CAD) {
        ad = lg_parse_ad_cookie(s->cookie);
        if (ad == -2) {
            return LG_E_COOKIE;
        }
        if (ad >= 0) {
            s->last_ad = ad;
        }
    } else if (s->kind == LG_POST) {
        snprintf(want, sizeof(want), "my_cookie=%d", s->user);
        q = strstr(s->cookie, "my_cookie=");
        if (q == NULL || strncmp(q, want, strlen(want)) != 0
            || (q[strlen(want)] >= '0' && q[strlen(want)] <= '9'))
        {
            return LG_E_COOKIE;
        }
    }
    return lg_check_pre(s, pre, (b + n - tl) - pre, ad);
}


/* Returns -1 when the response is valid, else an lg_err_e. */
static int
lg_check_response(lg_slot_t *s)
{
    lg_file_t  *f;

    if (s->status != 200) {
        return LG_E_STATUS;
    }
    switch (s->kind) {
    case LG_STATIC:
        f = lg_file_get(s->dir, s->cls, s->num);
        if (f->size < 0 || (int64_t) s->body_len != f->size
            || ~s->crc != f->crc)
        {
            return LG_E_CONTENT;
        }
        return -1;
    case LG_FETCH:
        return -1;
    default:
        return lg_check_dynamic(s);
    }
}


/* ---- response parsing ---------------------------------------------------- */

static int
lg_header_is(const char *line, const char *name, const char **value)
{
    size_t  n;

    n = strlen(name);
    if (strncasecmp(line, name, n) != 0 || line[n] != ':') {
        return 0;
    }
    line += n + 1;
    while (*line == ' ' || *line == '\t') {
        line++;
    }
    *value = line;
    return 1;
}


/* Parses a header block, NUL-terminated after the last line's CRLF. */
static int
lg_parse_headers(lg_slot_t *s, char *hdr)
{
    char        *line, *next, *cr;
    const char  *v;

    if (strncmp(hdr, "HTTP/1.", 7) != 0 || hdr[8] != ' ') {
        return GN_ERROR;
    }
    s->status = atoi(hdr + 9);
    if (hdr[7] == '0') {
        s->server_close = 1;
    }
    line = strchr(hdr, '\n');
    while (line != NULL && *++line != '\0') {
        next = strchr(line, '\n');
        if (next != NULL) {
            *next = '\0';
        }
        cr = strchr(line, '\r');
        if (cr != NULL) {
            *cr = '\0';
        }
        if (lg_header_is(line, "Content-Length", &v)) {
            s->clen = strtoll(v, NULL, 10);
        } else if (lg_header_is(line, "Transfer-Encoding", &v)) {
            s->chunked = (strcasestr(v, "chunked") != NULL);
        } else if (lg_header_is(line, "Connection", &v)) {
            if (strcasestr(v, "close") != NULL) {
                s->server_close = 1;
            }
        } else if (lg_header_is(line, "Set-Cookie", &v)) {
            if (strlen(s->cookie) + strlen(v) + 2 < sizeof(s->cookie)) {
                strcat(s->cookie, v);
                strcat(s->cookie, ";");
            }
        }
        line = next;
    }
    if (s->chunked) {
        s->bstate = LG_B_CHUNK_SIZE;
    } else if (s->clen >= 0) {
        s->bstate = s->clen > 0 ? LG_B_LENGTH : LG_B_COMPLETE;
        s->remain = s->clen;
    } else if (s->status == 204 || s->status == 304) {
        s->bstate = LG_B_COMPLETE;
    } else {
        /* no framing: HTTP/1.1 requires one for a keep-alive reply */
        return GN_ERROR;
    }
    return GN_OK;
}


static int
lg_body_sink(lg_slot_t *s, const char *p, size_t n)
{
    char   *nb;
    size_t  cap;

    s->body_len += n;
    if (!lg_buffered(s)) {
        s->crc = lg_crc_update(s->crc, p, n);
        return GN_OK;
    }
    if (s->buf_len + n + 1 > s->buf_cap) {
        cap = s->buf_cap ? s->buf_cap : 16384;
        while (cap < s->buf_len + n + 1) {
            cap *= 2;
        }
        nb = realloc(s->buf, cap);
        if (nb == NULL) {
            return GN_ERROR;
        }
        s->buf = nb;
        s->buf_cap = cap;
    }
    memcpy(s->buf + s->buf_len, p, n);
    s->buf_len += n;
    s->buf[s->buf_len] = '\0';
    return GN_OK;
}


/* A line of chunked framing (size or trailer), accumulated in s->line. */
static int
lg_chunk_line(lg_slot_t *s, const char **pp, const char *end)
{
    const char  *p;

    for (p = *pp; p < end; p++) {
        if (*p == '\n') {
            *pp = p + 1;
            s->line[s->line_len] = '\0';
            s->line_len = 0;
            return GN_OK;
        }
        if (s->line_len + 1 >= sizeof(s->line)) {
            return GN_ERROR;
        }
        s->line[s->line_len++] = *p;
    }
    *pp = p;
    return GN_AGAIN;
}


/* Feeds body bytes; returns GN_DONE at the end of the body. */
static int
lg_body_feed(lg_slot_t *s, const char *p, size_t n)
{
    const char  *end;
    size_t       k;
    int          rc;
    char        *e;

    end = p + n;
    while (p < end || s->bstate == LG_B_COMPLETE) {
        switch (s->bstate) {
        case LG_B_LENGTH:
        case LG_B_CHUNK_DATA:
            k = (size_t) (end - p) < s->remain ? (size_t) (end - p)
                                               : s->remain;
            if (lg_body_sink(s, p, k) != GN_OK) {
                return GN_ERROR;
            }
            p += k;
            s->remain -= k;
            if (s->remain == 0) {
                s->bstate = s->bstate == LG_B_LENGTH ? LG_B_COMPLETE
                                                     : LG_B_CHUNK_CRLF;
            }
            break;
        case LG_B_CHUNK_SIZE:
            rc = lg_chunk_line(s, &p, end);
            if (rc != GN_OK) {
                return rc == GN_AGAIN ? GN_AGAIN : GN_ERROR;
            }
            s->remain = strtoull(s->line, &e, 16);
            if (e == s->line) {
                return GN_ERROR;
            }
            s->bstate = s->remain ? LG_B_CHUNK_DATA : LG_B_TRAILER;
            break;
        case LG_B_CHUNK_CRLF:
            rc = lg_chunk_line(s, &p, end);
            if (rc != GN_OK) {
                return rc == GN_AGAIN ? GN_AGAIN : GN_ERROR;
            }
            if (s->line[0] != '\0' && strcmp(s->line, "\r") != 0) {
                return GN_ERROR;
            }
            s->bstate = LG_B_CHUNK_SIZE;
            break;
        case LG_B_TRAILER:
            rc = lg_chunk_line(s, &p, end);
            if (rc != GN_OK) {
                return rc == GN_AGAIN ? GN_AGAIN : GN_ERROR;
            }
            if (s->line[0] == '\0' || strcmp(s->line, "\r") == 0) {
                s->bstate = LG_B_COMPLETE;
            }
            break;
        case LG_B_COMPLETE:
            if (p != end) {
                return GN_ERROR;    /* we never pipeline */
            }
            return GN_DONE;
        default:
            return GN_ERROR;
        }
    }
    return GN_AGAIN;
}


/* ---- the slot state machine ---------------------------------------------- */

static void
lg_slot_error(lg_slot_t *s, lg_err_e e, const char *msg)
{
    lg_res.errors++;
    lg_res.err[e]++;
    if (lg_conf.verbose || lg_res.err[e] <= 3) {
        fprintf(stderr, "gannet-specweb99-load: error (%s) %s "
                "/file_set/dir%05d/class%d_%d: %s\n", lg_err_names[e],
                lg_kind_names[s->kind], s->dir, s->cls, s->num, msg);
    }
}


static void
lg_slot_fail(lg_slot_t *s, lg_err_e e, double now, const char *fmt, ...)
{
    va_list  ap;
    char     msg[256];

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    lg_slot_error(s, e, msg);
    lg_conn_close(s);
    s->state = LG_S_IDLE;
    lg_slot_next(s, now);
    if (s->state == LG_S_IDLE && s->wake < now + 0.1) {
        /* no tight loop against a server that refuses connections */
        lg_timer_set(s, now + 0.1);
    }
}


/* The response is complete and validated: account and go on. */
static void
lg_slot_op_done(lg_slot_t *s, double now)
{
    int  e;

    e = lg_check_response(s);
    if (s->kind == LG_POST) {
        lg_res.posts_ok += (e == -1);
    }
    if (e != -1) {
        char  msg[64];

        snprintf(msg, sizeof(msg), "status %d, %llu body bytes", s->status,
                 (unsigned long long) s->body_len);
        lg_slot_error(s, e, msg);
    }
    lg_res.ops_all++;
    lg_res.kind_ops[s->kind]++;
    if (now >= lg_t0 && now <= lg_t1 && s->kind != LG_FETCH) {
        lg_res.ops++;
        lg_res.resp_sum += now - s->op_start;
    }
    s->conn_reqs++;
    lg_tls_save(s);
    if (s->buf_cap > 65536 && s->kind != LG_FETCH) {
        /* a class 3 page: do not keep 1 MB per slot for the rare case */
        free(s->buf);
        s->buf = NULL;
        s->buf_cap = 0;
    }
    if (s->kind == LG_FETCH) {
        lg_conn_close(s);
        lg_slot_next(s, now);
        return;
    }
    s->reqs_left--;
    if (s->reqs_left > 0 && !s->server_close && e == -1
        && !s->peer_closed)
    {
        s->state = LG_S_WAIT;
        lg_slot_continue(s, now);
        return;
    }
    if (s->peer_closed || (!s->server_close && !s->close_after)) {
        /* the server's FIN has been read already, or it is not awaited */
        lg_conn_close(s);
        s->state = LG_S_IDLE;
        lg_slot_continue(s, now);
        return;
    }
    /* let the server close first: its side keeps the TIME_WAIT */
    s->state = LG_S_CLOSING;
    lg_deadline_set(s, now + 5.0);
    if (s->tls != NULL) {
        /* GnuTLS may hold the close_notify already: no event would come */
        lg_slot_read(s, now, 0);
    }
}


/* Schedules the slot's next request (or next connection). */
static void
lg_slot_next(lg_slot_t *s, double now)
{
    double  t;

    lg_deadline_set(s, 0);
    if (s->kind == LG_FETCH) {
        s->state = LG_S_DONE;
        lg_active--;
        s->wake = -1;
        return;
    }
    if (lg_stopping || now >= lg_tend) {
        lg_conn_close(s);
        s->state = LG_S_DONE;
        lg_active--;
        s->wake = -1;
        return;
    }
    t = s->start + s->bytes * 8.0 / LG_LINE_BPS;
    lg_timer_set(s, t > now ? t : now);
}


/*
 * After a response (state LG_S_WAIT or LG_S_IDLE): a slot that is at or
 * behind its pacing line sends (or connects) at once instead of going
 * through the timer heap and another epoll_wait().  Not for the failure
 * paths, which must not loop against a refusing server.
 */
static void
lg_slot_continue(lg_slot_t *s, double now)
{
    if (s->kind != LG_FETCH && !lg_stopping && now < lg_tend
        && s->start + s->bytes * 8.0 / LG_LINE_BPS <= now)
    {
        lg_slot_start_op(s, now);
        return;
    }
    lg_slot_next(s, now);
}


static void
lg_slot_send(lg_slot_t *s, double now)
{
    ssize_t  n;
    int      err;

    while (s->req_sent < s->req_len) {
        n = lg_io_send(s, s->req + s->req_sent, s->req_len - s->req_sent);
        if (n == GN_AGAIN) {
            lg_ep_set(s, EPOLLOUT);
            return;
        }
        if (n < 0) {
            err = errno;
            if (lg_conn_error(s, LG_E_IO, &err) == LG_E_CONNECT) {
                lg_slot_fail(s, LG_E_CONNECT, now, "connect(): %s",
                             strerror(err));
            } else {
                lg_slot_fail(s, LG_E_IO, now, "send failed");
            }
            return;
        }
        s->req_sent += n;
    }
    if (s->kind == LG_POST) {
        lg_res.posts_sent++;
    }
    s->state = LG_S_HEADERS;
    lg_ep_set(s, LG_EV_IN);
}


/* The pacing time has come: open a connection or send on the open one. */
static void
lg_slot_start_op(lg_slot_t *s, double now)
{
    lg_deadline_set(s, now + LG_OP_TIMEOUT);
    s->op_start = now;
    if (s->fd == -1) {
        if (s->kind != LG_FETCH) {
            /* 70% of requests on keep-alive connections of 5..15 (10 on
             * average), 30% alone: a new connection is keep-alive with
             * p = 0.7 / (10 - 9 * 0.7) */
            s->reqs_left = lg_uniform(&s->rng) < 0.7 / 3.7
                           ? 5 + (int) (lg_rand(&s->rng) % 11) : 1;
        } else {
            s->reqs_left = 1;
        }
        s->conn_reqs = 0;
        lg_build_request(s);
        (void) lg_conn_open(s, now);
        return;
    }
    lg_build_request(s);
    s->state = LG_S_SENDING;
    lg_slot_send(s, now);
}


/*
 * The header block, from the bytes just read: parsed where it lies when
 * it is whole (the usual case: no copy, the slot's header buffer is not
 * touched), else gathered in s->hdr.  Sets *used to the header bytes of
 * `b`.  Returns GN_OK (parsed), GN_AGAIN (incomplete), GN_ERROR (bad) or
 * GN_DONE (longer than LG_HDR_MAX).
 */
static int
lg_slot_headers(lg_slot_t *s, char *b, size_t n, size_t *used)
{
    char    *eoh;
    size_t   room;

    if (s->hdr_len == 0) {
        eoh = memmem(b, n, "\r\n\r\n", 4);
        if (eoh != NULL) {
            *used = eoh + 4 - b;
            s->hdr_len = *used;
            if (s->hdr_len > LG_HDR_MAX - 1) {
                return GN_DONE;
            }
            eoh[2] = '\0';
            return lg_parse_headers(s, b);
        }
    }
    if (s->hdr == NULL) {
        s->hdr = malloc(LG_HDR_MAX);
        if (s->hdr == NULL) {
            return GN_ERROR;
        }
    }
    room = LG_HDR_MAX - 1 - s->hdr_len;
    *used = n < room ? n : room;
    memcpy(s->hdr + s->hdr_len, b, *used);
    s->hdr_len += *used;
    s->hdr[s->hdr_len] = '\0';
    eoh = strstr(s->hdr, "\r\n\r\n");
    if (eoh == NULL) {
        return s->hdr_len >= LG_HDR_MAX - 1 ? GN_DONE : GN_AGAIN;
    }
    *used -= s->hdr_len - (eoh + 4 - s->hdr);
    eoh[2] = '\0';
    s->hdr_len = eoh + 4 - s->hdr;
    return lg_parse_headers(s, s->hdr);
}


/*
 * Reads what the socket holds (one recv() per readiness when it holds
 * less than the buffer).  `ev` are the epoll events that led here:
 * EPOLLRDHUP then means the server's FIN was queued before the read, so
 * a short read that completes the response has reached the FIN too and
 * the slot need not wait for (and read) it separately.
 */
static void
lg_slot_read(lg_slot_t *s, double now, uint32_t ev)
{
    char     b[65536];
    ssize_t  n;
    size_t   used;
    int      rc;

    for ( ;; ) {
        n = lg_io_recv(s, b, sizeof(b));
        if (n == GN_AGAIN) {
            return;
        }
        if (n < 0) {
            lg_slot_fail(s, LG_E_IO, now, "recv failed in state %d",
                         s->state);
            return;
        }
        if (n == 0) {
            if (s->state == LG_S_CLOSING) {
                lg_conn_close(s);
                s->state = LG_S_IDLE;
                lg_slot_continue(s, now);
                return;
            }
            lg_slot_fail(s, s->hdr_len ? LG_E_FRAMING : LG_E_IO, now,
                         "connection closed early (%zu header bytes, "
                         "%llu body bytes)", s->hdr_len,
                         (unsigned long long) s->body_len);
            return;
        }
        s->bytes += n;
        lg_res.bytes += n;
        if (s->state == LG_S_CLOSING) {
            lg_slot_fail(s, LG_E_FRAMING, now, "data after the response");
            return;
        }
        used = 0;
        if (s->state == LG_S_HEADERS) {
            rc = lg_slot_headers(s, b, n, &used);
            if (rc == GN_AGAIN) {
                continue;
            }
            if (rc != GN_OK) {
                lg_slot_fail(s, LG_E_FRAMING, now, "%s",
                             rc == GN_DONE ? "header too long"
                                           : "bad header block");
                return;
            }
            s->state = LG_S_BODY;
        }
        rc = lg_body_feed(s, b + used, n - used);
        if (rc == GN_ERROR) {
            lg_slot_fail(s, LG_E_FRAMING, now, "bad body framing");
            return;
        }
        if (rc == GN_DONE) {
            s->peer_closed = s->tls == NULL && (ev & EPOLLRDHUP)
                             && (size_t) n < sizeof(b);
            lg_slot_op_done(s, now);
            return;
        }
        if ((size_t) n < sizeof(b) && s->tls == NULL) {
            /* the socket is most likely empty: save the EAGAIN read,
             * the level-triggered epoll reports what is left */
            return;
        }
    }
}


static void
lg_slot_event(lg_slot_t *s, uint32_t ev, double now)
{
    switch (s->state) {
    case LG_S_HANDSHAKE:
        if (lg_tls_handshake(s, now) != GN_OK) {
            return;
        }
        s->state = LG_S_SENDING;
        lg_slot_send(s, now);
        return;
    case LG_S_SENDING:
        lg_slot_send(s, now);
        return;
    case LG_S_HEADERS:
    case LG_S_BODY:
    case LG_S_CLOSING:
        lg_slot_read(s, now, ev);
        return;
    case LG_S_WAIT:
        /* the server closed an idle keep-alive connection (or sent
         * something unasked: the next request would fail anyway) */
        lg_conn_close(s);
        s->state = LG_S_IDLE;
        return;
    default:
        return;
    }
}


/* A waiting slot's pacing time has come (see lg_timer_pop()). */
static void
lg_slot_timer(lg_slot_t *s, double now)
{
    if (lg_stopping || now >= lg_tend) {
        lg_slot_next(s, now);
        return;
    }
    lg_slot_start_op(s, now);
}


/* A deadline has passed: no response in time, or no FIN from the server. */
static void
lg_slot_deadline(lg_slot_t *s, double now)
{
    lg_deadline_set(s, 0);
    switch (s->state) {
    case LG_S_IDLE:
    case LG_S_WAIT:
    case LG_S_DONE:
        return;
    case LG_S_CLOSING:
        lg_conn_close(s);
        s->state = LG_S_IDLE;
        lg_slot_next(s, now);
        return;
    default:
        lg_slot_fail(s, LG_E_TIMEOUT, now, "no response within %.0f s "
                     "(state %d)", LG_OP_TIMEOUT, s->state);
        return;
    }
}


/* ---- a run --------------------------------------------------------------- */

static double
lg_slot_m(lg_slot_t *s, double now)
{
    double  line;

    line = (now - s->start) * LG_LINE_BPS / 8.0;
    if (line < 0) {
        line = 0;
    }
    return (double) s->bytes < line ? (double) s->bytes : line;
}


/* Runs the loop until no slot is active or `deadline` passes. */
static void
lg_loop(double deadline, int measure)
{
    struct epoll_event  evs[512];
    double              now, next, sweep;
    int                 n, i, ms, marked0, marked1;
    lg_slot_t          *s;

    marked0 = marked1 = !measure;
    sweep = lg_now() + LG_SWEEP;
    while (lg_active > 0 && !lg_interrupted) {
        now = lg_now();
        if (!marked0 && now >= lg_t0) {
            for (i = 0; i < lg_nslots; i++) {
                lg_slots[i].m0 = lg_slot_m(&lg_slots[i], now);
            }
            lg_t0 = now;
            lg_cpu0 = lg_cpu_self();
            lg_srv0 = lg_cpu_server();
            marked0 = 1;
        }
        if (!marked1 && now >= lg_t1) {
            for (i = 0; i < lg_nslots; i++) {
                s = &lg_slots[i];
                s->rate = (lg_slot_m(s, now) - s->m0) * 8.0 / (now - lg_t0);
            }
            lg_t1 = now;
            lg_res.cpu_self = lg_cpu_self() - lg_cpu0;
            lg_res.cpu_server = lg_cpu_server();
            lg_res.cpu_server = (lg_res.cpu_server < 0 || lg_srv0 < 0)
                                ? -1 : lg_res.cpu_server - lg_srv0;
            marked1 = 1;
        }
        if (now >= deadline) {
            break;
        }
        while (lg_heap_n > 0 && lg_timer_first() <= now) {
            s = lg_timer_pop();
            if (s != NULL) {
                lg_slot_timer(s, now);
            }
        }
        if (now >= sweep) {
            for (i = 0; i < lg_nslots; i++) {
                if (lg_deadline[i] != 0 && lg_deadline[i] <= now) {
                    lg_slot_deadline(&lg_slots[i], now);
                }
            }
            sweep = now + LG_SWEEP;
        }
        next = deadline;
        if (lg_heap_n > 0 && lg_timer_first() < next) {
            next = lg_timer_first();
        }
        if (lg_nslots > 0 && sweep < next) {
            next = sweep;
        }
        if (!marked0 && lg_t0 < next) {
            next = lg_t0;
        }
        if (!marked1 && lg_t1 < next) {
            next = lg_t1;
        }
        ms = (int) ceil((next - lg_now()) * 1000.0);
        ms = ms < 0 ? 0 : ms;
        n = epoll_wait(lg_ep, evs, 512, ms);
        now = lg_now();
        for (i = 0; i < n; i++) {
            s = evs[i].data.ptr;
            lg_slot_event(s, evs[i].events, now);
        }
    }
}


static int
lg_resolve(void)
{
    struct addrinfo  hints, *res;
    int              rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(lg_conf.host, lg_conf.port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "gannet-specweb99-load: %s:%s: %s\n", lg_conf.host,
                lg_conf.port, gai_strerror(rc));
        return GN_ERROR;
    }
    memcpy(&lg_addr, res->ai_addr, res->ai_addrlen);
    lg_addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    return GN_OK;
}


static void
lg_slot_init(lg_slot_t *s, int id)
{
    memset(s, 0, sizeof(*s));
    s->id = id;
    s->fd = -1;
    s->wake = -1;
    s->rng = lg_conf.seed * 0x100000001b3ULL + id;
    (void) lg_rand(&s->rng);
    s->last_ad = (int) (lg_rand(&s->rng) % LG_NADS);
}


static void
lg_slot_free(lg_slot_t *s)
{
    lg_conn_close(s);
    free(s->buf);
    free(s->hdr);
    if (s->saved.data != NULL) {
        gnutls_free(s->saved.data);
    }
}


/*
 * Fetches the post log (GET <dyn>?command/Fetch) on a connection of its
 * own; returns the number of records, or -1 (and counts a postlog error)
 * when the log is malformed.
 */
static int64_t
lg_fetch_postlog(void)
{
    lg_slot_t  *s;
    int64_t     count, i;
    const char *b;
    double      now;

    s = calloc(1, sizeof(*s));
    if (s == NULL || lg_loop_init(1) != GN_OK) {
        free(s);
        lg_loop_free();
        return -1;
    }
    lg_slot_init(s, lg_conf.conns);
    s->kind = LG_FETCH;
    lg_active = 1;
    lg_stopping = 0;
    now = lg_now();
    lg_tend = now + 60;
    lg_slot_start_op(s, now);
    lg_loop(now + LG_OP_TIMEOUT, 0);
    count = -1;
    b = s->buf;
    if (s->state != LG_S_DONE || s->status != 200 || b == NULL
        || s->buf_len < 11 || b[10] != '\n')
    {
        fprintf(stderr, "gannet-specweb99-load: Fetch failed (status %d, "
                "%zu bytes)\n", s->status, s->buf_len);
        goto failed;
    }
    count = strtoll(b, NULL, 10);
    if (count < 0 || s->buf_len != 11 + (size_t) count * 139) {
        fprintf(stderr, "gannet-specweb99-load: post log: header says %lld "
                "records, %zu bytes follow (want %lld x 139)\n",
                (long long) count, s->buf_len - 11, (long long) count);
        count = -1;
        goto failed;
    }
    for (i = 0; i < count; i++) {
        if (b[11 + i * 139 + 138] != '\n') {
            fprintf(stderr, "gannet-specweb99-load: post log record %lld "
                    "is not 139 bytes\n", (long long) i);
            count = -1;
            goto failed;
        }
    }

failed:

    lg_slot_free(s);
    free(s);
    lg_loop_free();
    if (count < 0) {
        lg_res.errors++;
        lg_res.err[LG_E_POSTLOG]++;
    }
    return count;
}


/* The timer heap (for n slots) and the epoll set of this process. */
static int
lg_loop_init(int n)
{
    lg_heap = calloc(n + 1, sizeof(lg_timer_t));
    lg_heap_n = 0;
    lg_heap_cap = n + 1;
    lg_ep = epoll_create1(EPOLL_CLOEXEC);
    if (lg_heap == NULL || lg_ep == -1) {
        fprintf(stderr, "gannet-specweb99-load: out of memory\n");
        return GN_ERROR;
    }
    return GN_OK;
}


static void
lg_loop_free(void)
{
    if (lg_ep != -1) {
        close(lg_ep);
    }
    lg_ep = -1;
    free(lg_heap);
    lg_heap = NULL;
    lg_heap_n = 0;
    lg_heap_cap = 0;
}


/*
 * Runs slots first .. first + n - 1 of `conns` (all of them, or one
 * worker's share with --procs) from `start` to the end of the ramp-down
 * and the drain; adds to lg_res.  A slot's id, start time and request
 * sequence do not depend on which process runs it.
 */
static int
lg_run_slots(int first, int n, int conns, double start)
{
    double  now;
    int     i;

    lg_slots = calloc(n > 0 ? n : 1, sizeof(lg_slot_t));
    lg_deadline = calloc(n > 0 ? n : 1, sizeof(double));
    if (lg_slots == NULL || lg_deadline == NULL || lg_loop_init(n) != GN_OK)
    {
        fprintf(stderr, "gannet-specweb99-load: out of memory\n");
        return GN_ERROR;
    }
    lg_nslots = n;
    lg_t0 = start + lg_conf.rampup;
    lg_t1 = lg_t0 + lg_conf.time;
    lg_tend = lg_t1 + lg_conf.rampdown;
    lg_stopping = 0;
    lg_active = n;
    for (i = 0; i < n; i++) {
        lg_slot_init(&lg_slots[i], first + i);
        /* staggered over the first half of the ramp-up */
        lg_slots[i].start = start
                            + lg_conf.rampup * 0.5 * (first + i) / conns;
        lg_timer_set(&lg_slots[i], lg_slots[i].start);
    }
    lg_loop(lg_tend, 1);
    /* ramp-down is over: no new requests, let the ones in flight end */
    lg_stopping = 1;
    now = lg_now();
    for (i = 0; i < n; i++) {
        if (lg_slots[i].state == LG_S_IDLE || lg_slots[i].state == LG_S_WAIT) {
            lg_slot_next(&lg_slots[i], now);
        }
    }
    lg_loop(now + LG_DRAIN_TIMEOUT, 0);
    lg_res.drained = (lg_active == 0);
    lg_heap_n = 0;
    for (i = 0; i < n; i++) {
        lg_res.conforming += lg_slots[i].rate >= LG_CONFORM_BPS;
        lg_res.rate_sum += lg_slots[i].rate;
        lg_slot_free(&lg_slots[i]);
    }
    lg_res.measured = lg_t1 - lg_t0;
    lg_loop_free();
    free(lg_slots);
    free(lg_deadline);
    lg_slots = NULL;
    lg_deadline = NULL;
    lg_nslots = 0;
    return GN_OK;
}


/* Adds a worker's counts to the run's (--procs). */
static void
lg_res_add(lg_result_t *a, const lg_result_t *b, int first)
{
    int  i;

    a->ops += b->ops;
    a->resp_sum += b->resp_sum;
    a->ops_all += b->ops_all;
    for (i = 0; i < LG_NKINDS; i++) {
        a->kind_ops[i] += b->kind_ops[i];
    }
    a->errors += b->errors;
    for (i = 0; i < LG_NERRS; i++) {
        a->err[i] += b->err[i];
    }
    a->posts_sent += b->posts_sent;
    a->posts_ok += b->posts_ok;
    a->conns += b->conns;
    a->tls_full += b->tls_full;
    a->tls_resumed += b->tls_resumed;
    a->tls_offered += b->tls_offered;
    a->bytes += b->bytes;
    a->conforming += b->conforming;
    a->rate_sum += b->rate_sum;
    a->cpu_self += b->cpu_self;
    if (first) {
        a->cpu_server = b->cpu_server;
        a->drained = b->drained;
        a->measured = b->measured;
    } else {
        a->drained = a->drained && b->drained;
        a->measured = b->measured > a->measured ? b->measured : a->measured;
    }
}


/*
 * --procs P: P worker processes, each with its share of the slots, all
 * with the same start time; each sends its lg_result_t back through a
 * pipe and the sums are the run's.  For machines with cores to spare:
 * the server keeps its own CPU.
 */
static int
lg_run_procs(int conns, double start)
{
    lg_result_t  sum, r;
    int          w, first, n, fds[2], rfd[64], ok;
    pid_t        pids[64];
    ssize_t      got;
    size_t       off;

    memset(&sum, 0, sizeof(sum));
    ok = 1;
    fflush(NULL);
    for (w = 0; w < lg_conf.procs; w++) {
        first = (int) ((int64_t) conns * w / lg_conf.procs);
        n = (int) ((int64_t) conns * (w + 1) / lg_conf.procs) - first;
        if (pipe2(fds, O_CLOEXEC) == -1) {
            fprintf(stderr, "gannet-specweb99-load: pipe(): %s\n",
                    strerror(errno));
            ok = 0;
            break;
        }
        pids[w] = fork();
        if (pids[w] == -1) {
            fprintf(stderr, "gannet-specweb99-load: fork(): %s\n",
                    strerror(errno));
            close(fds[0]);
            close(fds[1]);
            ok = 0;
            break;
        }
        if (pids[w] == 0) {
            close(fds[0]);
            memset(&lg_res, 0, sizeof(lg_res));
            lg_res.cpu_server = -1;
            if (w > 0) {
                lg_conf.server_pid = 0;     /* sampled by worker 0 */
            }
            if (lg_run_slots(first, n, conns, start) != GN_OK) {
                _exit(1);
            }
            for (off = 0; off < sizeof(lg_res); off += got) {
                got = write(fds[1], (char *) &lg_res + off,
                            sizeof(lg_res) - off);
                if (got <= 0) {
                    _exit(1);
                }
            }
            _exit(0);
        }
        close(fds[1]);
        rfd[w] = fds[0];
    }
    n = w;
    for (w = 0; w < n; w++) {
        for (off = 0; off < sizeof(r); off += got) {
            got = read(rfd[w], (char *) &r + off, sizeof(r) - off);
            if (got <= 0) {
                break;
            }
        }
        close(rfd[w]);
        (void) waitpid(pids[w], NULL, 0);
        if (off != sizeof(r)) {
            fprintf(stderr, "gannet-specweb99-load: worker %d failed\n", w);
            ok = 0;
            continue;
        }
        lg_res_add(&sum, &r, w == 0);
    }
    /* the parent's own counts (the Fetch before the run) stay */
    lg_res_add(&lg_res, &sum, 0);
    lg_res.cpu_server = sum.cpu_server;
    lg_res.drained = sum.drained;
    lg_res.measured = sum.measured;
    return ok ? GN_OK : GN_ERROR;
}


static int
lg_run(int conns, lg_result_t *out)
{
    double   start;
    int64_t  before, after;
    int      rc;

    memset(&lg_res, 0, sizeof(lg_res));
    lg_res.cpu_server = -1;
    lg_conf.conns = conns;
    lg_numdirs = lg_numdirs_for(conns);
    if (lg_numdirs > lg_conf.dirs_on_disk) {
        fprintf(stderr, "gannet-specweb99-load: %d connections want %d "
                "directories, the file set has %d: using %d\n", conns,
                lg_numdirs, lg_conf.dirs_on_disk, lg_conf.dirs_on_disk);
        lg_numdirs = lg_conf.dirs_on_disk;
    }
    lg_dir_cdf = malloc(lg_numdirs * sizeof(double));
    if (lg_dir_cdf == NULL) {
        fprintf(stderr, "gannet-specweb99-load: out of memory\n");
        return GN_ERROR;
    }
    lg_zipf_cdf(lg_dir_cdf, lg_numdirs);

    before = 0;
    if (!lg_conf.static_only) {
        before = lg_fetch_postlog();
    }

    start = lg_now();
    if (lg_conf.procs > 1) {
        rc = lg_run_procs(conns, start + 0.05);
    } else {
        rc = lg_run_slots(0, conns, conns, start);
    }
    free(lg_dir_cdf);
    lg_dir_cdf = NULL;
    if (rc != GN_OK) {
        return GN_ERROR;
    }

    if (!lg_conf.static_only && before >= 0) {
        after = lg_fetch_postlog();
        if (after >= 0
            && (after - before < (int64_t) lg_res.posts_ok
                || after - before > (int64_t) lg_res.posts_sent))
        {
            fprintf(stderr, "gannet-specweb99-load: post log grew by %lld "
                    "records, %llu POSTs were made (%llu answered)\n",
                    (long long) (after - before),
                    (unsigned long long) lg_res.posts_sent,
                    (unsigned long long) lg_res.posts_ok);
            lg_res.errors++;
            lg_res.err[LG_E_POSTLOG]++;
        }
    }

    lg_res.pct = 100.0 * lg_res.conforming / conns;
    lg_res.kbit_mean = lg_res.rate_sum / conns / 1000.0;
    lg_res.ops_s = lg_res.measured > 0 ? lg_res.ops / lg_res.measured : 0;
    lg_res.resp_ms = lg_res.ops ? lg_res.resp_sum / lg_res.ops * 1000 : 0;
    *out = lg_res;
    return GN_OK;
}


/* ---- report -------------------------------------------------------------- */

/*
 * CPU per operation over the measurement interval: this process's (its
 * workers' with --procs) from getrusage(), the server's from /proc with
 * --server-pid.  "percent" is of one CPU: the side near 100% is the one
 * that limits the run.
 */
static void
lg_report_cpu(const lg_result_t *r)
{
    double  ops;

    ops = r->ops > 0 ? (double) r->ops : 1;
    printf("client_cpu_us_per_op: %.2f\n", r->cpu_self * 1e6 / ops);
    printf("client_cpu_percent: %.1f\n",
           r->measured > 0 ? 100 * r->cpu_self / r->measured : 0);
    if (r->cpu_server >= 0) {
        printf("server_cpu_us_per_op: %.2f\n", r->cpu_server * 1e6 / ops);
        printf("server_cpu_percent: %.1f\n",
               r->measured > 0 ? 100 * r->cpu_server / r->measured : 0);
    }
}


static void
lg_report(int conns, const lg_result_t *r)
{
    int  i;

    printf("connections: %d\n", conns);
    printf("conforming: %d\n", r->conforming);
    printf("percent_conforming: %.1f\n", r->pct);
    printf("ops_per_sec: %.1f\n", r->ops_s);
    printf("response_msec: %.2f\n", r->resp_ms);
    printf("ops_per_sec_per_conn: %.2f\n", r->ops_s / conns);
    printf("kbit_per_sec: %.1f\n", r->kbit_mean);
    printf("errors: %llu\n", (unsigned long long) r->errors);
    printf("measured_sec: %.2f\n", r->measured);
    lg_report_cpu(r);
    printf("ops_total: %llu\n", (unsigned long long) r->ops_all);
    printf("connections_opened: %llu\n", (unsigned long long) r->conns);
    printf("posts: %llu sent, %llu answered\n",
           (unsigned long long) r->posts_sent,
           (unsigned long long) r->posts_ok);
    printf("mix:");
    for (i = 0; i < LG_FETCH; i++) {
        printf(" %s %llu", lg_kind_names[i],
               (unsigned long long) r->kind_ops[i]);
    }
    printf("\n");
    if (lg_conf.tls) {
        printf("tls_handshakes: %llu full, %llu resumed (%llu offered a "
               "session)\n", (unsigned long long) r->tls_full,
               (unsigned long long) r->tls_resumed,
               (unsigned long long) r->tls_offered);
    }
    if (r->errors) {
        printf("error_kinds:");
        for (i = 0; i < LG_NERRS; i++) {
            if (r->err[i]) {
                printf(" %s %llu", lg_err_names[i],
                       (unsigned long long) r->err[i]);
            }
        }
        printf("\n");
    }
    if (!r->drained) {
        printf("warning: requests still in flight %.0f s after the "
               "ramp-down were abandoned\n", LG_DRAIN_TIMEOUT);
    }
    printf("\n| Conforming | Percent | ops/s | Response ms | ops/s/conn "
           "| kbit/s | Errors |\n");
    printf("|-----------:|--------:|------:|------------:|-----------:"
           "|-------:|-------:|\n");
    printf("| %d | %.1f%% | %.1f | %.1f | %.2f | %.1f | %llu |\n",
           r->conforming, r->pct, r->ops_s, r->resp_ms, r->ops_s / conns,
           r->kbit_mean, (unsigned long long) r->errors);
    fflush(stdout);
}


static int
lg_probe_ok(const lg_result_t *r)
{
    /* valid: >= 95% conforming and at most 1% of operations in error */
    return r->pct >= 95.0 && r->errors * 100 <= r->ops_all;
}


static int
lg_search(void)
{
    lg_result_t  r;
    int          lo, hi, mid, best;

    lo = lg_conf.min;
    hi = lg_conf.max;
    best = 0;
    printf("| N | Conforming | Percent | ops/s | Response ms | kbit/s "
           "| Errors | valid | client CPU | client us/op |\n");
    printf("|--:|-----------:|--------:|------:|------------:|-------:"
           "|-------:|:-----:|-----------:|-------------:|\n");
    fflush(stdout);
    while (lo <= hi && !lg_interrupted) {
        mid = lo + (hi - lo) / 2;
        if (lg_run(mid, &r) != GN_OK) {
            return 1;
        }
        printf("| %d | %d | %.1f%% | %.1f | %.1f | %.1f | %llu | %s "
               "| %.0f%% | %.2f |\n",
               mid, r.conforming, r.pct, r.ops_s, r.resp_ms, r.kbit_mean,
               (unsigned long long) r.errors, lg_probe_ok(&r) ? "yes" : "no",
               r.measured > 0 ? 100 * r.cpu_self / r.measured : 0,
               r.ops > 0 ? r.cpu_self * 1e6 / r.ops : 0);
        fflush(stdout);
        if (lg_probe_ok(&r)) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    printf("\nsearch_result: %d%s\n", best,
           best == lg_conf.max ? " (the maximum searched: raise --max)" : "");
    return 0;
}


/* ---- main ---------------------------------------------------------------- */

static void
lg_usage(void)
{
    fprintf(stderr,
        "usage: gannet-specweb99-load -h HOST -p PORT [--tls] "
        "[--resume-share P]\n"
        "         -C ROOT -n CONNS [--rampup S --time S --rampdown S]\n"
        "         [--search [--min N --max N]] [--static-only] [--seed S]\n"
        "         [--cgi-url URL] [--dyn-url URL] [--priority STR] "
        "[--verbose]\n"
        "         [--procs P] [--server-pid PID]\n");
}


static void
lg_on_signal(int sig)
{
    lg_interrupted = 1;
}


static int
lg_options(int argc, char **argv)
{
    static const struct option  opts[] = {
        { "host", 1, NULL, 'h' },         { "port", 1, NULL, 'p' },
        { "tls", 0, NULL, 'T' },          { "resume-share", 1, NULL, 'R' },
        { "root", 1, NULL, 'C' },         { "conns", 1, NULL, 'n' },
        { "rampup", 1, NULL, 'u' },       { "time", 1, NULL, 't' },
        { "rampdown", 1, NULL, 'd' },     { "search", 0, NULL, 'S' },
        { "min", 1, NULL, 'm' },          { "max", 1, NULL, 'M' },
        { "static-only", 0, NULL, 'o' },  { "seed", 1, NULL, 's' },
        { "cgi-url", 1, NULL, 'g' },      { "dyn-url", 1, NULL, 'y' },
        { "priority", 1, NULL, 'P' },     { "verbose", 0, NULL, 'v' },
        { "server-pid", 1, NULL, 'Q' },   { "procs", 1, NULL, 'W' },
        { "help", 0, NULL, 'H' },
        { NULL, 0, NULL, 0 }
    };
    int  c;

    lg_conf.host = "127.0.0.1";
    lg_conf.port = NULL;
    lg_conf.cgi_url = "/cgi-bin/specweb99.cgi";
    lg_conf.dyn_url = "/specweb99";
    lg_conf.priority = LG_PRIORITY;
    lg_conf.resume_share = 50;
    lg_conf.conns = 10;
    lg_conf.rampup = 10;
    lg_conf.time = 30;
    lg_conf.rampdown = 5;
    lg_conf.min = 1;
    lg_conf.max = 0;
    lg_conf.seed = 1;
    lg_conf.procs = 1;

    while ((c = getopt_long(argc, argv, "h:p:C:n:s:v", opts, NULL)) != -1) {
        switch (c) {
        case 'h': lg_conf.host = optarg; break;
        case 'p': lg_conf.port = optarg; break;
        case 'T': lg_conf.tls = 1; break;
        case 'R': lg_conf.resume_share = atoi(optarg); break;
        case 'C': lg_conf.root = optarg; break;
        case 'n': lg_conf.conns = atoi(optarg); break;
        case 'u': lg_conf.rampup = atof(optarg); break;
        case 't': lg_conf.time = atof(optarg); break;
        case 'd': lg_conf.rampdown = atof(optarg); break;
        case 'S': lg_conf.search = 1; break;
        case 'm': lg_conf.min = atoi(optarg); break;
        case 'M': lg_conf.max = atoi(optarg); break;
        case 'o': lg_conf.static_only = 1; break;
        case 's': lg_conf.seed = strtoull(optarg, NULL, 10); break;
        case 'g': lg_conf.cgi_url = optarg; break;
        case 'y': lg_conf.dyn_url = optarg; break;
        case 'P': lg_conf.priority = optarg; break;
        case 'v': lg_conf.verbose = 1; break;
        case 'Q': lg_conf.server_pid = (pid_t) atoi(optarg); break;
        case 'W': lg_conf.procs = atoi(optarg); break;
        default:
            lg_usage();
            return GN_ERROR;
        }
    }
    if (optind != argc || lg_conf.port == NULL || lg_conf.root == NULL
        || lg_conf.conns < 1 || lg_conf.time <= 0 || lg_conf.rampup < 0
        || lg_conf.rampdown < 0 || lg_conf.resume_share < 0
        || lg_conf.resume_share > 100 || lg_conf.procs < 1
        || lg_conf.procs > 64)
    {
        lg_usage();
        return GN_ERROR;
    }
    return GN_OK;
}


static int
lg_setup(void)
{
    struct rlimit  rl;
    size_t         nfiles;
    int            i;

    lg_crc_init();
    lg_zipf_cdf(lg_file_cdf, 9);
    lg_conf.dirs_on_disk = lg_count_dirs();
    if (lg_conf.dirs_on_disk <= 0) {
        fprintf(stderr, "gannet-specweb99-load: no file set under "
                "%s/file_set\n", lg_conf.root);
        return GN_ERROR;
    }
    lg_conf.users = lg_count_users();
    if (lg_conf.users <= 0 && !lg_conf.static_only) {
        fprintf(stderr, "gannet-specweb99-load: no %s/User.Personality: "
                "user ids 10000 only\n", lg_conf.root);
    }
    if (lg_conf.max == 0) {
        /* the largest N whose NUMDIRS fits the file set */
        lg_conf.max = (int) ((lg_conf.dirs_on_disk - 25) * 5
                             / (400000.0 / 122000.0));
        if (lg_conf.max < lg_conf.min) {
            lg_conf.max = lg_conf.min;
        }
    }
    nfiles = (size_t) lg_conf.dirs_on_disk * 36;
    lg_files = malloc(nfiles * sizeof(lg_file_t));
    if (lg_files == NULL) {
        return GN_ERROR;
    }
    for (i = 0; i < (int) nfiles; i++) {
        lg_files[i].size = -1;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (lg_resolve() != GN_OK) {
        return GN_ERROR;
    }
    if (lg_conf.tls) {
        gnutls_global_init();
        if (gnutls_certificate_allocate_credentials(&lg_cred) != 0
            || gnutls_priority_init(&lg_prio, lg_conf.priority, NULL) != 0)
        {
            fprintf(stderr, "gannet-specweb99-load: bad TLS priority "
                    "\"%s\"\n", lg_conf.priority);
            return GN_ERROR;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, lg_on_signal);
    signal(SIGTERM, lg_on_signal);
    return GN_OK;
}


int
main(int argc, char **argv)
{
    lg_result_t  r;

    if (lg_options(argc, argv) != GN_OK || lg_setup() != GN_OK) {
        return 2;
    }
    printf("gannet-specweb99-load: %s://%s:%s/, %s, ramp-up %.0f s, "
           "measurement %.0f s, ramp-down %.0f s, seed %llu, %d dirs "
           "on disk\n", lg_conf.tls ? "https" : "http", lg_conf.host,
           lg_conf.port, lg_conf.static_only ? "static only" : "full mix",
           lg_conf.rampup, lg_conf.time, lg_conf.rampdown,
           (unsigned long long) lg_conf.seed, lg_conf.dirs_on_disk);
    if (lg_conf.tls) {
        printf("tls: priority %s, resume share %d%%\n", lg_conf.priority,
               lg_conf.resume_share);
    }
    fflush(stdout);
    if (lg_conf.search) {
        return lg_search();
    }
    if (lg_run(lg_conf.conns, &r) != GN_OK) {
        return 1;
    }
    lg_report(lg_conf.conns, &r);
    return r.errors ? 3 : 0;
}
