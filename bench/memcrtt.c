/*
 * bench/memcrtt.c - the floor of a memcached lookup on this machine:
 * what one `mg` round trip to a memcached on the other CPU costs the
 * process that asks, with nothing of Gannet in it. The measurement
 * behind the "floor" figures of the farm-cache sections of
 * bench/RESULTS.md (issue 21): a server that looks a session up in
 * memcached pays at least this a lookup, whatever its code.
 *
 *     gcc -O2 -o /tmp/memcrtt bench/memcrtt.c
 *     /tmp/memcrtt PORT seq          # one lookup at a time
 *     /tmp/memcrtt PORT batch K      # K lookups in one send
 *
 * PORT: a memcached (1.6 or later: meta protocol) on 127.0.0.1, which
 * the caller starts on CPU 1 (taskset -c 1 memcached -p PORT -U 0 -t 1).
 * The program pins itself to CPU 0, stores a 1,000-byte value (a TLS
 * session's size) under one key, then makes 50,000 lookups of it as the
 * server does: the request written, epoll_wait until the answer comes
 * (the process sleeps, as a server with nothing else to do), the answer
 * read. Printed: its CPU time (getrusage, user + system) per lookup,
 * which includes the kernel's loopback work done in its context --
 * memcached's receive of the request and its wake-up -- and the
 * sleep and wake-up; and the wall time per lookup.
 */

#define _GNU_SOURCE

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define LOOKUPS  50000
#define VALUE    1000
#define BATCH    64


static double
cpu_us(void)
{
    struct rusage  ru;

    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6
           + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}


static double
wall_us(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}


static void
send_all(int fd, const char *p, size_t n)
{
    ssize_t  k;

    while (n > 0) {
        k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) {
            perror("memcrtt: send");
            exit(1);
        }
        p += k;
        n -= (size_t) k;
    }
}


/* Reads until `answers` answers ("VA ..." with its data, or a line of
 * its own: HD, EN, NS) have come, sleeping in epoll_wait whenever the
 * socket is empty. */
static void
await(int ep, int fd, int answers, char *buf, size_t size)
{
    struct epoll_event  ev;
    size_t              have = 0, need;
    ssize_t             k;
    char               *p, *eol;

    while (answers > 0) {
        if (epoll_wait(ep, &ev, 1, 5000) != 1) {
            fprintf(stderr, "memcrtt: no answer in 5 s\n");
            exit(1);
        }
        for ( ;; ) {
            k = recv(fd, buf + have, size - have, MSG_DONTWAIT);
            if (k == 0 || have == size) {
                fprintf(stderr, "memcrtt: memcached closed, or an answer "
                        "too long\n");
                exit(1);
            }
            if (k == -1) {
                break;                  /* empty for now */
            }
            have += (size_t) k;
        }
        p = buf;
        for ( ;; ) {
            eol = memmem(p, have - (size_t) (p - buf), "\r\n", 2);
            if (eol == NULL) {
                break;
            }
            need = (size_t) (eol + 2 - p);
            if (strncmp(p, "VA ", 3) == 0) {
                need += (size_t) atoi(p + 3) + 2;
            }
            if (need > have - (size_t) (p - buf)) {
                break;
            }
            p += need;
            answers--;
        }
        have -= (size_t) (p - buf);
        memmove(buf, p, have);
    }
}


int
main(int argc, char **argv)
{
    struct sockaddr_in  sin;
    struct epoll_event  ev;
    cpu_set_t           set;
    static char         val[VALUE], req[BATCH * 32], buf[BATCH * 1200];
    char                line[64];
    double              c0, c1, w0, w1;
    size_t              rlen = 0;
    int                 fd, ep, one = 1, k = 1, i, done;

    if (argc < 3 || (strcmp(argv[2], "seq") != 0
                     && strcmp(argv[2], "batch") != 0)
        || (strcmp(argv[2], "batch") == 0
            && (argc < 4 || (k = atoi(argv[3])) < 1 || k > BATCH)))
    {
        fprintf(stderr, "usage: memcrtt PORT seq | memcrtt PORT batch K "
                "(K <= %d)\n", BATCH);
        return 2;
    }

    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (sched_setaffinity(0, sizeof(set), &set) == -1) {
        perror("memcrtt: sched_setaffinity");
        return 1;
    }

    fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((unsigned short) atoi(argv[1]));
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd == -1 || connect(fd, (struct sockaddr *) &sin, sizeof(sin)) == -1)
    {
        perror("memcrtt: connect");
        return 1;
    }
    (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    ep = epoll_create1(0);
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (ep == -1 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1) {
        perror("memcrtt: epoll");
        return 1;
    }

    memset(val, 'x', sizeof(val));
    i = snprintf(line, sizeof(line), "ms memcrtt:key %d T600\r\n", VALUE);
    send_all(fd, line, (size_t) i);
    send_all(fd, val, sizeof(val));
    send_all(fd, "\r\n", 2);
    await(ep, fd, 1, buf, sizeof(buf));

    for (i = 0; i < k; i++) {
        rlen += (size_t) snprintf(req + rlen, sizeof(req) - rlen,
                                  "mg memcrtt:key v O%d\r\n", i + 1);
    }

    /* a warm-up, then the measured lookups */
    for (done = 0; done < 1000; done += k) {
        send_all(fd, req, rlen);
        await(ep, fd, k, buf, sizeof(buf));
    }

    c0 = cpu_us();
    w0 = wall_us();
    for (done = 0; done < LOOKUPS; done += k) {
        send_all(fd, req, rlen);
        await(ep, fd, k, buf, sizeof(buf));
    }
    c1 = cpu_us();
    w1 = wall_us();

    printf("%s%s%s: %d lookups, CPU %.2f us a lookup, wall %.2f us a "
           "lookup\n", argv[2], k > 1 ? " " : "", k > 1 ? argv[3] : "",
           done, (c1 - c0) / done, (w1 - w0) / done);

    return 0;
}
