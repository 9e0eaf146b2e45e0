/*
 * gannet-specweb99: writes the SPECweb99 file set and the data files of
 * the dynamic part (User.Personality, Custom.Ads).  A standalone program,
 * libc only; the bytes come from specweb99_data.c, shared with the load
 * generator.  doc/specweb99.md documents the commands and layouts.
 *
 * Exit status: 0 done, 1 usage error, 2 the files could not be written.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "specweb99_data.h"


#define GN_SW99_PROG       "gannet-specweb99"
#define GN_SW99_MAX_CONNS  10000000
#define GN_SW99_MAX_DIRS   100000      /* dirNNNNN */
#define GN_SW99_MAX_TIME   2147483647LL


typedef int (*gn_sw99_cmd_pt)(int argc, char **argv);

typedef struct {
    const char      *name;
    gn_sw99_cmd_pt   handler;
} gn_sw99_cmd_t;


static void gn_sw99_usage(FILE *out);
static int gn_sw99_bad(const char *fmt, const char *arg);
static int gn_sw99_badopt(int c);
static int gn_sw99_number(const char *s, long long min, long long max,
    long long *v);
static int gn_sw99_seed(const char *s, uint64_t *seed);
static int gn_sw99_mkdirs(const char *path);
static int gn_sw99_write(const char *path, const unsigned char *buf,
    size_t len);
static int gn_sw99_replace(const char *root, const char *name,
    const unsigned char *buf, size_t len, char *path, size_t size);
static int gn_sw99_fileset(int argc, char **argv);
static int gn_sw99_fileset_dir(const char *root, uint64_t seed, int dir,
    unsigned char *buf, uint64_t *bytes);
static int gn_sw99_upfgen(int argc, char **argv);
static int gn_sw99_cadgen(int argc, char **argv);


static const gn_sw99_cmd_t  gn_sw99_cmds[] = {
    { "fileset", gn_sw99_fileset },
    { "upfgen",  gn_sw99_upfgen },
    { "cadgen",  gn_sw99_cadgen },
    { NULL, NULL }
};


int
main(int argc, char **argv)
{
    const gn_sw99_cmd_t  *cmd;

    if (argc < 2) {
        gn_sw99_usage(stderr);
        return 1;
    }

    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "-h") == 0
        || strcmp(argv[1], "--help") == 0)
    {
        gn_sw99_usage(stdout);
        return 0;
    }

    for (cmd = gn_sw99_cmds; cmd->name != NULL; cmd++) {
        if (strcmp(argv[1], cmd->name) == 0) {
            opterr = 0;
            return cmd->handler(argc - 1, argv + 1);
        }
    }

    return gn_sw99_bad("unknown command \"%s\"", argv[1]);
}


static void
gn_sw99_usage(FILE *out)
{
    fprintf(out,
        "usage: " GN_SW99_PROG " fileset -C ROOT -n CONNS [-s SEED]"
        " [-d DIRS] [-N]\n"
        "       " GN_SW99_PROG " upfgen -C ROOT -n MAXLOAD [-t THREADS]"
        " [-s SEED]\n"
        "       " GN_SW99_PROG " cadgen -C ROOT -e EXPIRY [-t THREADS]"
        " [-s SEED] [-T NOW] [E1 E2]\n"
        "\n"
        "fileset  ROOT/file_set/dirNNNNN/classX_Y, NUMDIRS directories for"
        " CONNS\n"
        "         simultaneous connections (-d: that many instead;"
        " -N: print only)\n"
        "upfgen   ROOT/User.Personality, 10 users per MAXLOAD"
        " connection (max 100000)\n"
        "cadgen   ROOT/Custom.Ads, 360 ads expiring at NOW + EXPIRY"
        " seconds;\n"
        "         ads E1..E2 already expired (NOW: -T, default the"
        " current time)\n"
        "SEED defaults to %d; the output depends only on the arguments.\n",
        GN_SPECWEB99_DEFAULT_SEED);
}


static int
gn_sw99_bad(const char *fmt, const char *arg)
{
    fprintf(stderr, GN_SW99_PROG ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    gn_sw99_usage(stderr);

    return 1;
}


static int
gn_sw99_badopt(int c)
{
    char  opt[2];

    opt[0] = (char) optopt;
    opt[1] = '\0';

    if (c == ':') {
        return gn_sw99_bad("option -%s needs an argument", opt);
    }

    return gn_sw99_bad("unknown option -%s", opt);
}


static int
gn_sw99_number(const char *s, long long min, long long max, long long *v)
{
    char       *end;
    long long   n;

    if (*s == '\0') {
        return -1;
    }

    errno = 0;
    n = strtoll(s, &end, 10);

    if (errno != 0 || *end != '\0' || n < min || n > max) {
        return -1;
    }

    *v = n;

    return 0;
}


static int
gn_sw99_seed(const char *s, uint64_t *seed)
{
    char                *end;
    unsigned long long   n;

    if (*s < '0' || *s > '9') {
        return -1;
    }

    errno = 0;
    n = strtoull(s, &end, 10);

    if (errno != 0 || *end != '\0') {
        return -1;
    }

    *seed = n;

    return 0;
}


/* mkdir -p: every missing component, mode 0755. */

static int
gn_sw99_mkdirs(const char *path)
{
    char    buf[4096];
    char   *p;
    size_t  len;

    len = strlen(path);
    if (len == 0 || len >= sizeof(buf)) {
        fprintf(stderr, GN_SW99_PROG ": bad path \"%s\"\n", path);
        return -1;
    }

    memcpy(buf, path, len + 1);

    for (p = buf + 1; ; p++) {
        if (*p != '/' && *p != '\0') {
            continue;
        }

        if (p[-1] != '/') {
            char  c = *p;

            *p = '\0';
            if (mkdir(buf, 0755) == -1 && errno != EEXIST) {
                fprintf(stderr, GN_SW99_PROG ": mkdir(\"%s\") failed: %s\n",
                        buf, strerror(errno));
                return -1;
            }
            *p = c;
        }

        if (*p == '\0') {
            return 0;
        }
    }
}


static int
gn_sw99_write(const char *path, const unsigned char *buf, size_t len)
{
    int      fd;
    ssize_t  n;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd == -1) {
        fprintf(stderr, GN_SW99_PROG ": open(\"%s\") failed: %s\n",
                path, strerror(errno));
        return -1;
    }

    while (len > 0) {
        n = write(fd, buf, len);
        if (n == -1) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, GN_SW99_PROG ": write(\"%s\") failed: %s\n",
                    path, strerror(errno));
            close(fd);
            return -1;
        }
        buf += n;
        len -= (size_t) n;
    }

    if (close(fd) == -1) {
        fprintf(stderr, GN_SW99_PROG ": close(\"%s\") failed: %s\n",
                path, strerror(errno));
        return -1;
    }

    return 0;
}


/* ROOT/NAME replaced at once (written aside, then renamed), so that a
 * server re-reading the file on an mtime change never sees half of it. */

static int
gn_sw99_replace(const char *root, const char *name,
    const unsigned char *buf, size_t len, char *path, size_t size)
{
    char  tmp[4200];

    if (gn_sw99_mkdirs(root) != 0) {
        return -1;
    }

    snprintf(path, size, "%s/%s", root, name);
    snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", root, name, (long) getpid());

    if (gn_sw99_write(tmp, buf, len) != 0) {
        unlink(tmp);
        return -1;
    }

    if (rename(tmp, path) == -1) {
        fprintf(stderr, GN_SW99_PROG ": rename(\"%s\", \"%s\") failed: %s\n",
                tmp, path, strerror(errno));
        unlink(tmp);
        return -1;
    }

    return 0;
}


static int
gn_sw99_fileset(int argc, char **argv)
{
    int             c, dir, ndirs, dry;
    char            path[4200];
    uint64_t        seed, bytes;
    long long       conns, v;
    const char     *root;
    unsigned char  *buf;

    root = NULL;
    conns = -1;
    ndirs = -1;
    dry = 0;
    seed = GN_SPECWEB99_DEFAULT_SEED;

    while ((c = getopt(argc, argv, ":C:n:s:d:N")) != -1) {
        switch (c) {
        case 'C':
            root = optarg;
            break;
        case 'n':
            if (gn_sw99_number(optarg, 1, GN_SW99_MAX_CONNS, &conns) != 0) {
                return gn_sw99_bad("bad connection count \"%s\"", optarg);
            }
            break;
        case 's':
            if (gn_sw99_seed(optarg, &seed) != 0) {
                return gn_sw99_bad("bad seed \"%s\"", optarg);
            }
            break;
        case 'd':
            if (gn_sw99_number(optarg, 1, GN_SW99_MAX_DIRS, &v) != 0) {
                return gn_sw99_bad("bad directory count \"%s\"", optarg);
            }
            ndirs = (int) v;
            break;
        case 'N':
            dry = 1;
            break;
        default:
            return gn_sw99_badopt(c);
        }
    }

    if (optind != argc) {
        return gn_sw99_bad("unexpected argument \"%s\"", argv[optind]);
    }

    if (root == NULL || conns < 0) {
        return gn_sw99_bad("%s", "fileset needs -C ROOT and -n CONNS");
    }

    if (ndirs < 0) {
        ndirs = gn_specweb99_numdirs((int) conns);
        if (ndirs > GN_SW99_MAX_DIRS) {
            return gn_sw99_bad("%s", "too many connections: more than"
                               " 100000 directories");
        }
    }

    bytes = 0;

    if (dry) {
        bytes = gn_specweb99_dir_bytes() * (uint64_t) ndirs;
        goto done;
    }

    snprintf(path, sizeof(path), "%s/file_set", root);
    if (gn_sw99_mkdirs(path) != 0) {
        return 2;
    }

    buf = malloc(gn_specweb99_file_size(GN_SPECWEB99_CLASSES - 1,
                                        GN_SPECWEB99_FILES - 1));
    if (buf == NULL) {
        fprintf(stderr, GN_SW99_PROG ": out of memory\n");
        return 2;
    }

    for (dir = 0; dir < ndirs; dir++) {
        if (gn_sw99_fileset_dir(root, seed, dir, buf, &bytes) != 0) {
            free(buf);
            return 2;
        }
    }

    free(buf);

done:

    printf(GN_SW99_PROG " fileset: root=%s conns=%lld seed=%llu dirs=%d"
           " files=%d bytes=%llu%s\n",
           root, conns, (unsigned long long) seed, ndirs,
           ndirs * GN_SPECWEB99_DIR_FILES, (unsigned long long) bytes,
           dry ? " (not written)" : "");

    return 0;
}


static int
gn_sw99_fileset_dir(const char *root, uint64_t seed, int dir,
    unsigned char *buf, uint64_t *bytes)
{
    int                   cls, num;
    char                  path[4200];
    size_t                len;
    gn_specweb99_file_t   f;

    len = (size_t) snprintf(path, sizeof(path), "%s/file_set/dir%05d",
                            root, dir);
    if (len >= sizeof(path) - 16) {
        fprintf(stderr, GN_SW99_PROG ": path too long \"%s\"\n", root);
        return -1;
    }

    if (mkdir(path, 0755) == -1 && errno != EEXIST) {
        fprintf(stderr, GN_SW99_PROG ": mkdir(\"%s\") failed: %s\n",
                path, strerror(errno));
        return -1;
    }

    for (cls = 0; cls < GN_SPECWEB99_CLASSES; cls++) {
        for (num = 0; num < GN_SPECWEB99_FILES; num++) {
            gn_specweb99_file_init(&f, seed, dir, cls, num, -1);
            gn_specweb99_file_read(&f, 0, buf, (size_t) f.size);

            snprintf(path + len, sizeof(path) - len, "/class%d_%d",
                     cls, num);

            if (gn_sw99_write(path, buf, (size_t) f.size) != 0) {
                return -1;
            }

            *bytes += f.size;
        }
    }

    return 0;
}


static int
gn_sw99_upfgen(int argc, char **argv)
{
    int             c, user, users;
    char            path[4200];
    size_t          len;
    uint64_t        seed;
    long long       maxload, threads;
    const char     *root;
    unsigned char  *buf;

    root = NULL;
    maxload = -1;
    threads = 1;
    seed = GN_SPECWEB99_DEFAULT_SEED;

    while ((c = getopt(argc, argv, ":C:n:t:s:")) != -1) {
        switch (c) {
        case 'C':
            root = optarg;
            break;
        case 'n':
            if (gn_sw99_number(optarg, 1, GN_SW99_MAX_CONNS, &maxload) != 0) {
                return gn_sw99_bad("bad maxload \"%s\"", optarg);
            }
            break;
        case 't':
            if (gn_sw99_number(optarg, 1, 1000000, &threads) != 0) {
                return gn_sw99_bad("bad thread count \"%s\"", optarg);
            }
            break;
        case 's':
            if (gn_sw99_seed(optarg, &seed) != 0) {
                return gn_sw99_bad("bad seed \"%s\"", optarg);
            }
            break;
        default:
            return gn_sw99_badopt(c);
        }
    }

    if (optind != argc) {
        return gn_sw99_bad("unexpected argument \"%s\"", argv[optind]);
    }

    if (root == NULL || maxload < 0) {
        return gn_sw99_bad("%s", "upfgen needs -C ROOT and -n MAXLOAD");
    }

    users = gn_specweb99_users((int) maxload);
    len = (size_t) users * GN_SPECWEB99_USER_REC;

    buf = malloc(len);
    if (buf == NULL) {
        fprintf(stderr, GN_SW99_PROG ": out of memory\n");
        return 2;
    }

    for (user = 0; user < users; user++) {
        gn_specweb99_user_record(buf + (size_t) user * GN_SPECWEB99_USER_REC,
                                 user, gn_specweb99_user_dem(seed, user));
    }

    if (gn_sw99_replace(root, "User.Personality", buf, len, path,
                        sizeof(path))
        != 0)
    {
        free(buf);
        return 2;
    }

    free(buf);

    printf(GN_SW99_PROG " upfgen: file=%s maxload=%lld users=%d bytes=%zu"
           " seed=%llu\n",
           path, maxload, users, len, (unsigned long long) seed);

    return 0;
}


static int
gn_sw99_cadgen(int argc, char **argv)
{
    int                 c, id, lo, hi;
    char                path[4200], expired[64];
    uint64_t            seed;
    long long           expiry, now, threads, e1, e2;
    const char         *root;
    gn_specweb99_ad_t   ad;
    unsigned char       buf[GN_SPECWEB99_ADS * GN_SPECWEB99_AD_REC];

    root = NULL;
    expiry = -1;
    now = -1;
    threads = 1;
    seed = GN_SPECWEB99_DEFAULT_SEED;

    while ((c = getopt(argc, argv, ":C:e:t:s:T:")) != -1) {
        switch (c) {
        case 'C':
            root = optarg;
            break;
        case 'e':
            if (gn_sw99_number(optarg, 0, GN_SW99_MAX_TIME, &expiry) != 0) {
                return gn_sw99_bad("bad expiry \"%s\"", optarg);
            }
            break;
        case 't':
            if (gn_sw99_number(optarg, 1, 1000000, &threads) != 0) {
                return gn_sw99_bad("bad thread count \"%s\"", optarg);
            }
            break;
        case 's':
            if (gn_sw99_seed(optarg, &seed) != 0) {
                return gn_sw99_bad("bad seed \"%s\"", optarg);
            }
            break;
        case 'T':
            if (gn_sw99_number(optarg, 1, GN_SW99_MAX_TIME, &now) != 0) {
                return gn_sw99_bad("bad time \"%s\"", optarg);
            }
            break;
        default:
            return gn_sw99_badopt(c);
        }
    }

    if (root == NULL || expiry < 0) {
        return gn_sw99_bad("%s", "cadgen needs -C ROOT and -e EXPIRY");
    }

    /* no expired list: an empty range */
    lo = 1;
    hi = 0;

    if (argc - optind == 2) {
        if (gn_sw99_number(argv[optind], 0, 1000000, &e1) != 0) {
            return gn_sw99_bad("bad expired ad \"%s\"", argv[optind]);
        }
        if (gn_sw99_number(argv[optind + 1], 0, 1000000, &e2) != 0) {
            return gn_sw99_bad("bad expired ad \"%s\"", argv[optind + 1]);
        }
        lo = (int) (e1 < e2 ? e1 : e2);
        hi = (int) (e1 < e2 ? e2 : e1);

    } else if (argc != optind) {
        return gn_sw99_bad("%s", "cadgen takes two expired ads, E1 E2,"
                           " or none");
    }

    if (now < 0) {
        now = (long long) time(NULL);
    }

    if (now + expiry > GN_SW99_MAX_TIME) {
        return gn_sw99_bad("%s", "NOW + EXPIRY is past 2147483647");
    }

    for (id = 0; id < GN_SPECWEB99_ADS; id++) {
        gn_specweb99_ad_make(&ad, seed, id, now, expiry, lo, hi);
        gn_specweb99_ad_record(buf + id * GN_SPECWEB99_AD_REC, &ad);
    }

    if (gn_sw99_replace(root, "Custom.Ads", buf, sizeof(buf), path,
                        sizeof(path))
        != 0)
    {
        return 2;
    }

    if (lo <= hi) {
        snprintf(expired, sizeof(expired), "%d-%d", lo, hi);
    } else {
        snprintf(expired, sizeof(expired), "none");
    }

    printf(GN_SW99_PROG " cadgen: file=%s ads=%d bytes=%zu now=%lld"
           " expiry=%lld expired=%s seed=%llu\n",
           path, GN_SPECWEB99_ADS, sizeof(buf), now, now + expiry, expired,
           (unsigned long long) seed);

    return 0;
}
