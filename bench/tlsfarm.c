/*
 * bench/tlsfarm.c - the client of bench/farm.sh: TLS 1.2 session-ID
 * resumption across gannet instances, for SECONDS seconds.
 *
 *     tlsfarm SECONDS cross   PORT_A PORT_B
 *     tlsfarm SECONDS reuse   PORT_B
 *     tlsfarm SECONDS unknown PORT_C PORT_B
 *     tlsfarm SECONDS paced   PORT_A PORT_B
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
 * Every connection is the same: TCP to 127.0.0.1:PORT, a TLS 1.2
 * handshake (GnuTLS, no tickets, the certificate not verified, SNI
 * localhost), "GET / HTTP/1.0", the response read to its end (the
 * server closes), close.  Prints one line on stdout:
 *
 *     connections N resumed N full N failed N setup N setup_failed N seconds T
 *
 * where the first four count the measured (B) connections only; "setup"
 * counts the others (the first one of reuse, unknown and paced; those on
 * A in cross and paced).
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


int
main(int argc, char **argv)
{
    gnutls_datum_t   sess = { NULL, 0 }, next;
    tf_count_t       m = { 0, 0, 0, 0 }, setup = { 0, 0, 0, 0 };
    const char      *mode;
    double           secs, t0, t1;
    int              pa, pb, rc;

    if (argc < 4) {
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
    if (secs <= 0 || pa <= 0 || pb <= 0) {
        goto usage;
    }

    if (gnutls_global_init() != 0
        || gnutls_certificate_allocate_credentials(&tf_cred) != 0)
    {
        fprintf(stderr, "tlsfarm: GnuTLS initialisation failed\n");
        return 1;
    }

    if (strcmp(mode, "cross") != 0) {
        /* the session offered throughout: B's own, or C's */
        rc = tf_conn(strcmp(mode, "unknown") == 0 ? pa : pb, NULL, &sess);
        tf_count(&setup, rc);
        if (rc != 0) {
            fprintf(stderr, "tlsfarm: the setup handshake failed\n");
            return 1;
        }
    }

    t0 = tf_now();
    t1 = t0;
    while (t1 - t0 < secs) {
        if (strcmp(mode, "cross") == 0) {
            rc = tf_conn(pa, NULL, &next);
            tf_count(&setup, rc);
            if (rc == 0) {
                tf_count(&m, tf_conn(pb, &next, NULL));
            }
            if (rc >= 0) {
                gnutls_free(next.data);
            }
        } else {
            if (strcmp(mode, "paced") == 0) {
                tf_count(&setup, tf_conn(pa, NULL, NULL));
            }
            tf_count(&m, tf_conn(pb, &sess, NULL));
        }
        t1 = tf_now();
    }

    printf("connections %lu resumed %lu full %lu failed %lu setup %lu "
           "setup_failed %lu seconds %.3f\n", m.conns, m.resumed, m.full,
           m.failed, setup.conns, setup.failed, t1 - t0);

    gnutls_free(sess.data);
    gnutls_certificate_free_credentials(tf_cred);
    gnutls_global_deinit();

    return m.conns > m.failed ? 0 : 1;

usage:

    fprintf(stderr, "usage: tlsfarm SECONDS cross PORT_A PORT_B\n"
            "       tlsfarm SECONDS reuse PORT_B\n"
            "       tlsfarm SECONDS unknown PORT_C PORT_B\n"
            "       tlsfarm SECONDS paced PORT_A PORT_B\n");
    return 2;
}
