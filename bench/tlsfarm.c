/*
 * bench/tlsfarm.c - the client of bench/farm.sh: TLS 1.2 session-ID
 * resumption across gannet instances, for SECONDS seconds.
 *
 *     tlsfarm [-c PROCS] [-n COUNT] SECONDS cross   PORT_A PORT_B
 *     tlsfarm [-c PROCS] [-n COUNT] SECONDS reuse   PORT_B
 *     tlsfarm [-c PROCS] [-n COUNT] SECONDS unknown PORT_C PORT_B
 *     tlsfarm [-c PROCS] [-n COUNT] SECONDS paced   PORT_A PORT_B
 *
 * cross:   loop { a full handshake on A, its session resumed on B }; the
 *          B connections are the measured ones.
 * reuse:   one full handshake on B (setup), then its session offered to B
 *          again and again.
 * unknown: one full handshake on C (setup: a session B has never seen),
 *          then that session offered to B again and again; B looks it up,
 *          misses and does a full handshake.
 * paced:   reuse, but each B connection follows a full handshake on A
 *          (not measured, its session unused): B's connections come as
 *          often as in cross, and B resumes from its shared memory (the
 *          control that tells memcached's cost from the pacing's).
 *
 * -c PROCS: PROCS client processes, each doing all of the above, so that
 * PROCS connections to B are in flight at once; each makes its setup
 * connections first, and all start the measured ones together.
 * -n COUNT: COUNT measured connections in all (shared by the processes)
 * instead of SECONDS.  cross with a COUNT is a pool run: each process
 * first makes its share of COUNT sessions on A (setup), then, all
 * together, offers each to B once: B's connections come back to back
 * (B is saturated when PROCS are enough), each a shared-memory miss and
 * a memcached hit, which is what a loaded farm member sees.
 *
 * Every connection is the same: TCP to 127.0.0.1:PORT, a TLS 1.2
 * handshake (GnuTLS, no tickets, the certificate not verified, SNI
 * localhost), "GET / HTTP/1.0", the response read to its end (the
 * server closes), close.  Prints one line on stdout:
 *
 *     connections N resumed N full N failed N setup N setup_failed N seconds T
 *
 * where the first four count the measured (B) connections only; "setup"
 * counts the others (the first one of reuse, unknown and paced; those on
 * A in cross and paced); T is the measured part's wall time.
 * A failed connection is one whose connect, handshake or response (not
 * "HTTP/1.x 200") failed.  Exit 0 when at least one measured connection
 * succeeded, 1 otherwise, 2 on usage errors.
 *
 * Built by bench/farm.sh: gcc -O2 -o WORK/tlsfarm bench/tlsfarm.c -lgnutls
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>


#define TF_PRIORITY  "NORMAL:-VERS-ALL:+VERS-TLS1.2"


typedef struct {
    unsigned long  conns;
    unsigned long  resumed;
    unsigned long  full;
    unsigned long  failed;
} tf_count_t;


static gnutls_certificate_credentials_t  tf_cred;


static double
tf_now(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}


static int
tf_connect(int port)
{
    struct sockaddr_in  sin;
    int                 fd, one = 1;

    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd == -1) {
        return -1;
    }
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((unsigned short) port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    if (connect(fd, (struct sockaddr *) &sin, sizeof(sin)) == -1) {
        close(fd);
        return -1;
    }

    return fd;
}


/* One connection to port, offering the session in (NULL: none); the new
 * session into out when out is not NULL (freed by the caller with
 * gnutls_free).  Returns 1 resumed, 0 full, -1 failed. */
static int
tf_conn(int port, const gnutls_datum_t *in, gnutls_datum_t *out)
{
    static const char   req[] = "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n";
    gnutls_session_t    s;
    char                buf[4096], head[12];
    ssize_t             n;
    size_t              got = 0, i;
    int                 fd, rc, res = -1, ok;

    fd = tf_connect(port);
    if (fd == -1) {
        return -1;
    }

    if (gnutls_init(&s, GNUTLS_CLIENT | GNUTLS_NO_TICKETS) != 0) {
        close(fd);
        return -1;
    }
    if (gnutls_priority_set_direct(s, TF_PRIORITY, NULL) != 0
        || gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, tf_cred) != 0
        || gnutls_server_name_set(s, GNUTLS_NAME_DNS, "localhost", 9) != 0
        || (in != NULL && gnutls_session_set_data(s, in->data, in->size)
                          != 0))
    {
        goto done;
    }
    gnutls_transport_set_int(s, fd);

    do {
        rc = gnutls_handshake(s);
    } while (rc < 0 && !gnutls_error_is_fatal(rc));
    if (rc < 0) {
        goto done;
    }

    if (gnutls_record_send(s, req, sizeof(req) - 1) != sizeof(req) - 1) {
        goto done;
    }

    for ( ;; ) {
        n = gnutls_record_recv(s, buf, sizeof(buf));
        if (n == GNUTLS_E_INTERRUPTED || n == GNUTLS_E_AGAIN) {
            continue;
        }
        if (n <= 0) {
            break;                      /* the server's close (or an error) */
        }
        for (i = 0; i < (size_t) n && got < sizeof(head); i++) {
            head[got++] = buf[i];       /* the status line's first bytes */
        }
    }
    ok = got == sizeof(head) && memcmp(head, "HTTP/1.", 7) == 0
         && memcmp(head + 8, " 200", 4) == 0;
    if (!ok) {
        goto done;
    }

    if (out != NULL && gnutls_session_get_data2(s, out) != 0) {
        out->data = NULL;
        goto done;
    }

    res = gnutls_session_is_resumed(s) ? 1 : 0;

done:

    gnutls_deinit(s);
    close(fd);
    return res;
}


static void
tf_count(tf_count_t *c, int rc)
{
    c->conns++;
    if (rc == 1) {
        c->resumed++;
    } else if (rc == 0) {
        c->full++;
    } else {
        c->failed++;
    }
}


/* One process's share of a run: the setup, then the measured
 * connections, for secs seconds or (count > 0) count of them.  A pool
 * run (cross with a count) makes its count sessions on A first, then
 * waits for the go (a read on go_fd that returns at its EOF) and offers
 * each to B once.  ready_fd gets a byte when the measured part may
 * start. */
static int
tf_run(const char *mode, int pa, int pb, double secs, unsigned long count,
    int ready_fd, int go_fd, tf_count_t *m, tf_count_t *setup, double *took)
{
    gnutls_datum_t   sess = { NULL, 0 }, next, *pool = NULL;
    unsigned long    i, npool = 0;
    double           t0, t1;
    char             b;
    int              rc, cross, paced;

    cross = strcmp(mode, "cross") == 0;
    paced = strcmp(mode, "paced") == 0;

    if (!cross) {
        /* the session offered throughout: B's own, or C's */
        rc = tf_conn(strcmp(mode, "unknown") == 0 ? pa : pb, NULL, &sess);
        tf_count(setup, rc);
        if (rc != 0) {
            fprintf(stderr, "tlsfarm: the setup handshake failed\n");
            return -1;
        }
    } else if (count > 0) {
        pool = calloc(count, sizeof(gnutls_datum_t));
        if (pool == NULL) {
            return -1;
        }
        while (npool < count) {
            rc = tf_conn(pa, NULL, &pool[npool]);
            tf_count(setup, rc);
            if (rc == 0) {
                npool++;
            } else if (setup->failed > 100) {
                fprintf(stderr, "tlsfarm: A's handshakes fail\n");
                return -1;
            }
        }
    }

    if (ready_fd != -1) {
        b = 1;
        if (write(ready_fd, &b, 1) != 1) {
            return -1;
        }
        while (read(go_fd, &b, 1) == -1 && errno == EINTR) {
            /* the go is the parent's close */
        }
    }

    t0 = tf_now();
    t1 = t0;
    for (i = 0; count > 0 ? i < count : t1 - t0 < secs; i++) {
        if (pool != NULL) {
            tf_count(m, tf_conn(pb, &pool[i], NULL));
        } else if (cross) {
            rc = tf_conn(pa, NULL, &next);
            tf_count(setup, rc);
            if (rc == 0) {
                tf_count(m, tf_conn(pb, &next, NULL));
            }
            if (rc >= 0) {
                gnutls_free(next.data);
            }
        } else {
            if (paced) {
                tf_count(setup, tf_conn(pa, NULL, NULL));
            }
            tf_count(m, tf_conn(pb, &sess, NULL));
        }
        if (count == 0) {
            t1 = tf_now();
        }
    }
    *took = tf_now() - t0;

    for (i = 0; i < npool; i++) {
        gnutls_free(pool[i].data);
    }
    free(pool);
    gnutls_free(sess.data);

    return 0;
}


int
main(int argc, char **argv)
{
    tf_count_t       m = { 0, 0, 0, 0 }, setup = { 0, 0, 0, 0 }, cm, cs;
    const char      *mode;
    unsigned long    count = 0, share;
    double           secs, took = 0, t0;
    pid_t            pid;
    int              pa, pb, rc, opt, procs = 1, i, ready[2], go[2], res[2];
    int              status, ok = 1, n;
    char             b, line[256];
    unsigned long    v[6];
    FILE            *rf;

    while ((opt = getopt(argc, argv, "c:n:")) != -1) {
        switch (opt) {
        case 'c':
            procs = atoi(optarg);
            break;
        case 'n':
            count = strtoul(optarg, NULL, 10);
            break;
        default:
            goto usage;
        }
    }
    argc -= optind - 1;
    argv += optind - 1;

    if (argc < 4 || procs < 1 || procs > 64) {
        goto usage;
    }
    secs = atof(argv[1]);
    mode = argv[2];

    if (strcmp(mode, "reuse") == 0 && argc == 4) {
        pa = pb = atoi(argv[3]);
    } else if ((strcmp(mode, "cross") == 0 || strcmp(mode, "unknown") == 0
                || strcmp(mode, "paced") == 0)
               && argc == 5)
    {
        pa = atoi(argv[3]);
        pb = atoi(argv[4]);
    } else {
        goto usage;
    }
    if ((secs <= 0 && count == 0) || pa <= 0 || pb <= 0) {
        goto usage;
    }

    if (gnutls_global_init() != 0
        || gnutls_certificate_allocate_credentials(&tf_cred) != 0)
    {
        fprintf(stderr, "tlsfarm: GnuTLS initialisation failed\n");
        return 1;
    }

    /* procs processes, each with its share of count; all start their
     * measured part together, when the last is ready */
    if (pipe(ready) == -1 || pipe(go) == -1 || pipe(res) == -1) {
        perror("tlsfarm: pipe");
        return 1;
    }
    for (i = 0; i < procs; i++) {
        share = count / procs + ((unsigned long) i < count % procs);
        pid = fork();
        if (pid == -1) {
            perror("tlsfarm: fork");
            return 1;
        }
        if (pid == 0) {
            close(ready[0]);
            close(go[1]);
            close(res[0]);
            memset(&cm, 0, sizeof(cm));
            memset(&cs, 0, sizeof(cs));
            rc = tf_run(mode, pa, pb, secs, share, ready[1], go[0],
                        &cm, &cs, &took);
            if (rc == 0) {
                /* under PIPE_BUF: one write, never interleaved */
                n = snprintf(line, sizeof(line), "%lu %lu %lu %lu %lu %lu\n",
                             cm.conns, cm.resumed, cm.full, cm.failed,
                             cs.conns, cs.failed);
                if (write(res[1], line, (size_t) n) != n) {
                    rc = -1;
                }
            } else {
                b = 1;              /* let the others go */
                (void) write(ready[1], &b, 1);
            }
            _exit(rc == 0 ? 0 : 1);
        }
    }
    close(ready[1]);
    close(go[0]);
    close(res[1]);
    for (i = 0; i < procs; i++) {
        if (read(ready[0], &b, 1) != 1) {
            break;
        }
    }
    t0 = tf_now();
    close(go[1]);                   /* go */

    rf = fdopen(res[0], "r");
    while (rf != NULL
           && fscanf(rf, "%lu %lu %lu %lu %lu %lu", &v[0], &v[1], &v[2],
                     &v[3], &v[4], &v[5]) == 6)
    {
        m.conns += v[0];
        m.resumed += v[1];
        m.full += v[2];
        m.failed += v[3];
        setup.conns += v[4];
        setup.failed += v[5];
    }
    took = tf_now() - t0;
    for (i = 0; i < procs; i++) {
        if (wait(&status) == -1 || !WIFEXITED(status)
            || WEXITSTATUS(status) != 0)
        {
            ok = 0;
        }
    }
    if (!ok) {
        fprintf(stderr, "tlsfarm: a client process failed\n");
    }

    printf("connections %lu resumed %lu full %lu failed %lu setup %lu "
           "setup_failed %lu seconds %.3f\n", m.conns, m.resumed, m.full,
           m.failed, setup.conns, setup.failed, took);

    gnutls_certificate_free_credentials(tf_cred);
    gnutls_global_deinit();

    return ok && m.conns > m.failed ? 0 : 1;

usage:

    fprintf(stderr, "usage: tlsfarm [-c PROCS] [-n COUNT] SECONDS MODE PORTS, "
            "MODE PORTS one of\n"
            "       cross PORT_A PORT_B | reuse PORT_B | "
            "unknown PORT_C PORT_B | paced PORT_A PORT_B\n");
    return 2;
}
