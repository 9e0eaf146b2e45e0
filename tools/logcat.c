/*
 * gannet-logcat: converts gannet binary access logs (doc/binary-log.md)
 * to Common, Combined or JSON text.
 *
 *   gannet-logcat [-f] [-F common|combined|json] FILE...
 *
 * Exit 0, or 1 with a message on stderr for a file that cannot be read,
 * is not a binary log, has a newer format version, or ends in a
 * truncated record (without -f). With -f the last FILE is followed as it
 * grows (polled), and a record split across reads is put together.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <getopt.h>

#include "binlog.h"


#define GN_LOGCAT_COMMON    0
#define GN_LOGCAT_COMBINED  1
#define GN_LOGCAT_JSON      2

#define GN_LOGCAT_POLL_US   200000

typedef struct {
    const char  *name;
    int          fd;
    u_char      *buf;
    size_t       size;
    size_t       len;        /* bytes in buf */
    off_t        off;        /* file offset of buf[0] */
    int          header;     /* the header has been checked */
} gn_logcat_file_t;


static int  gn_logcat_format = GN_LOGCAT_COMBINED;


static void
gn_logcat_usage(FILE *f)
{
    fprintf(f, "usage: gannet-logcat [-f] [-F common|combined|json] "
            "FILE...\n"
            "  -f  follow the (last) file as it grows\n"
            "  -F  output format, default combined\n");
}


static int
gn_logcat_fail(gn_logcat_file_t *lf, const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "gannet-logcat: %s: %s\n", lf->name, msg);
    return 1;
}


/* Prints s escaped per mode into f (absent: "-", or "" in JSON). */
static void
gn_logcat_put(FILE *f, const gn_str_t *s, gn_uint_t mode)
{
    u_char  tmp[6 * GN_BINLOG_STR_MAX + 8];
    size_t  n;

    n = gn_binlog_escape(tmp, s->data, s->len, mode);
    fwrite(tmp, 1, n, f);
}


/* "GET /x HTTP/1.1" as the request line of a text log. */
static size_t
gn_logcat_request(const gn_binlog_rec_t *rec, u_char *buf, size_t size)
{
    const char  *m;
    size_t       n;
    int          k;

    if (rec->str[GN_BINLOG_TARGET].len == 0) {
        return 0;
    }

    m = gn_binlog_method_name(rec->method);
    if (m == NULL) {
        m = "";
        if (rec->str[GN_BINLOG_METHOD].len == 0) {
            return 0;
        }
    }

    n = 0;
    k = snprintf((char *) buf, size, "%s%.*s ", m,
                 (int) rec->str[GN_BINLOG_METHOD].len,
                 (char *) rec->str[GN_BINLOG_METHOD].data);
    n += (size_t) k;
    memcpy(buf + n, rec->str[GN_BINLOG_TARGET].data,
           rec->str[GN_BINLOG_TARGET].len);
    n += rec->str[GN_BINLOG_TARGET].len;

    if (rec->version) {
        n += (size_t) snprintf((char *) buf + n, size - n, " HTTP/%u.%u",
                               rec->version / 10, rec->version % 10);
    }

    return n;
}


static void
gn_logcat_text(const gn_binlog_rec_t *rec, const char *addr,
    const char *tlocal, gn_str_t *req)
{
    printf("%s - - [%s] \"", addr, tlocal);
    gn_logcat_put(stdout, req, GN_BINLOG_ESC_DEFAULT);
    printf("\" %03u %llu", (unsigned) rec->status,
           (unsigned long long) rec->body_bytes);

    if (gn_logcat_format == GN_LOGCAT_COMBINED) {
        fputs(" \"", stdout);
        gn_logcat_put(stdout, &rec->str[GN_BINLOG_REFERER],
                      GN_BINLOG_ESC_DEFAULT);
        fputs("\" \"", stdout);
        gn_logcat_put(stdout, &rec->str[GN_BINLOG_USER_AGENT],
                      GN_BINLOG_ESC_DEFAULT);
        fputc('"', stdout);
    }

    fputc('\n', stdout);
}


static void
gn_logcat_json_str(const char *key, const gn_str_t *s, int comma)
{
    printf("%s\"%s\":\"", comma ? "," : "", key);
    gn_logcat_put(stdout, s, GN_BINLOG_ESC_JSON);
    fputc('"', stdout);
}


static void
gn_logcat_json(const gn_binlog_rec_t *rec, const char *addr,
    const char *tlocal, gn_str_t *req)
{
    static const char  *tls[] = { "", "TLSv1.2", "TLSv1.3", "?" };
    const char         *m;
    gn_str_t            s;

    s.data = (u_char *) tlocal;
    s.len = strlen(tlocal);
    fputc('{', stdout);
    gn_logcat_json_str("time_local", &s, 0);
    printf(",\"msec\":%lld.%03u", (long long) rec->sec, (unsigned) rec->msec);
    s.data = (u_char *) addr;
    s.len = strlen(addr);
    gn_logcat_json_str("remote_addr", &s, 1);
    gn_logcat_json_str("request", req, 1);

    m = gn_binlog_method_name(rec->method);
    if (m != NULL) {
        s.data = (u_char *) m;
        s.len = strlen(m);
    } else {
        s = rec->str[GN_BINLOG_METHOD];
    }
    gn_logcat_json_str("request_method", &s, 1);
    gn_logcat_json_str("request_uri", &rec->str[GN_BINLOG_TARGET], 1);

    printf(",\"server_protocol\":\"");
    if (rec->version) {
        printf("HTTP/%u.%u", rec->version / 10, rec->version % 10);
    }
    printf("\",\"status\":%u,\"bytes_sent\":%llu,\"body_bytes_sent\":%llu,"
           "\"request_time\":%u.%03u", (unsigned) rec->status,
           (unsigned long long) rec->bytes_sent,
           (unsigned long long) rec->body_bytes,
           (unsigned) rec->request_time / 1000,
           (unsigned) rec->request_time % 1000);

    gn_logcat_json_str("host", &rec->str[GN_BINLOG_HOST], 1);
    gn_logcat_json_str("http_referer", &rec->str[GN_BINLOG_REFERER], 1);
    gn_logcat_json_str("http_user_agent", &rec->str[GN_BINLOG_USER_AGENT],
                       1);
    printf(",\"tls_protocol\":\"%s\",\"tls_resumed\":%s,\"pid\":%u}\n",
           tls[rec->tls & 3], (rec->tls & GN_BINLOG_TLS_RESUMED) ? "true"
                                                                 : "false",
           (unsigned) rec->pid);
}


static void
gn_logcat_print(const gn_binlog_rec_t *rec)
{
    char        addr[INET6_ADDRSTRLEN], tlocal[64];
    u_char      req[2 * GN_BINLOG_STR_MAX + 64];
    gn_str_t    r;
    struct tm   tm;
    time_t      t;

    if (gn_binlog_addr_text(rec->addr, addr, sizeof(addr)) == 0) {
        snprintf(addr, sizeof(addr), "-");
    }

    t = (time_t) rec->sec;
    localtime_r(&t, &tm);
    strftime(tlocal, sizeof(tlocal), "%d/%b/%Y:%H:%M:%S %z", &tm);

    r.data = req;
    r.len = gn_logcat_request(rec, req, sizeof(req));

    if (gn_logcat_format == GN_LOGCAT_JSON) {
        gn_logcat_json(rec, addr, tlocal, &r);
    } else {
        gn_logcat_text(rec, addr, tlocal, &r);
    }
}


/* Decodes and prints what buf holds. Returns 0, or 1 (message given). */
static int
gn_logcat_drain(gn_logcat_file_t *lf)
{
    gn_binlog_rec_t  rec;
    size_t           pos, used;
    gn_int_t         rc;
    char             err[160], msg[200];

    pos = 0;

    if (!lf->header) {
        rc = gn_binlog_check_header(lf->buf, lf->len, err, sizeof(err));
        if (rc == GN_AGAIN) {
            return 0;
        }
        if (rc == GN_ERROR) {
            return gn_logcat_fail(lf, err);
        }
        lf->header = 1;
        pos = GN_BINLOG_HEADER_SIZE;
    }

    for ( ;; ) {
        rc = gn_binlog_decode(lf->buf + pos, lf->len - pos, &rec, &used,
                              err, sizeof(err));
        if (rc == GN_AGAIN) {
            break;
        }
        if (rc == GN_ERROR) {
            snprintf(msg, sizeof(msg), "%s at offset %lld", err,
                     (long long) (lf->off + (off_t) pos));
            return gn_logcat_fail(lf, msg);
        }
        gn_logcat_print(&rec);
        pos += used;
    }

    memmove(lf->buf, lf->buf + pos, lf->len - pos);
    lf->len -= pos;
    lf->off += (off_t) pos;

    return 0;
}


static int
gn_logcat_file(gn_logcat_file_t *lf, int follow)
{
    ssize_t  n;
    char     msg[200];

    lf->size = GN_BINLOG_RECORD_MAX + 65536;
    lf->buf = malloc(lf->size);
    if (lf->buf == NULL) {
        return gn_logcat_fail(lf, "out of memory");
    }

    for ( ;; ) {
        n = read(lf->fd, lf->buf + lf->len, lf->size - lf->len);

        if (n == -1) {
            if (errno == EINTR) {
                continue;
            }
            snprintf(msg, sizeof(msg), "read() failed (%s)",
                     strerror(errno));
            return gn_logcat_fail(lf, msg);
        }

        if (n > 0) {
            lf->len += (size_t) n;
            if (gn_logcat_drain(lf) != 0) {
                return 1;
            }
            continue;
        }

        /* end of file */
        if (follow) {
            fflush(stdout);
            usleep(GN_LOGCAT_POLL_US);
            continue;
        }

        if (!lf->header) {
            return gn_logcat_fail(lf, lf->len ? "truncated file header"
                                              : "empty file, not a gannet "
                                                "binary log");
        }

        if (lf->len > 0) {
            snprintf(msg, sizeof(msg), "truncated record at offset %lld "
                     "(%zu bytes of it present)", (long long) lf->off,
                     lf->len);
            return gn_logcat_fail(lf, msg);
        }

        return 0;
    }
}


int
main(int argc, char **argv)
{
    gn_logcat_file_t  lf;
    int               c, follow, i, rc;

    follow = 0;

    while ((c = getopt(argc, argv, "fF:h")) != -1) {
        switch (c) {
        case 'f':
            follow = 1;
            break;
        case 'F':
            if (strcmp(optarg, "common") == 0) {
                gn_logcat_format = GN_LOGCAT_COMMON;
            } else if (strcmp(optarg, "combined") == 0) {
                gn_logcat_format = GN_LOGCAT_COMBINED;
            } else if (strcmp(optarg, "json") == 0) {
                gn_logcat_format = GN_LOGCAT_JSON;
            } else {
                fprintf(stderr, "gannet-logcat: unknown format \"%s\" "
                        "(common, combined or json)\n", optarg);
                return 1;
            }
            break;
        case 'h':
            gn_logcat_usage(stdout);
            return 0;
        default:
            gn_logcat_usage(stderr);
            return 1;
        }
    }

    if (optind == argc) {
        gn_logcat_usage(stderr);
        return 1;
    }

    for (i = optind; i < argc; i++) {
        memset(&lf, 0, sizeof(lf));
        lf.name = argv[i];
        lf.fd = open(argv[i], O_RDONLY | O_CLOEXEC);
        if (lf.fd == -1) {
            fprintf(stderr, "gannet-logcat: %s: %s\n", argv[i],
                    strerror(errno));
            return 1;
        }

        rc = gn_logcat_file(&lf, follow && i == argc - 1);
        close(lf.fd);
        free(lf.buf);
        if (rc != 0) {
            return rc;
        }
    }

    return fflush(stdout) == 0 ? 0 : 1;
}
