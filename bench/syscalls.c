/*
 * bench/syscalls.c - what a system call costs on this machine, and what
 * batching socket writes through io_uring would save: the measurement
 * behind the "System calls" section of bench/RESULTS.md (issue 22's
 * 1 KiB proxy target). A diagnostic, not part of Gannet: it needs
 * liburing (Debian's liburing-dev), which Gannet does not use.
 *
 *     gcc -O2 -o /tmp/syscalls bench/syscalls.c -luring
 *     /tmp/syscalls null            # CPU 0: getppid() x 1,000,000
 *     /tmp/syscalls send            # 1 KiB send() on each of 32 sockets
 *     /tmp/syscalls uring           # the same 32, one io_uring_enter
 *
 * send and uring: 32 loopback TCP connections (TCP_NODELAY); the sender
 * runs on CPU 0 and writes 1 KiB on each, 20,000 times; a reader
 * process on CPU 1 drains them all (epoll). Printed: the sender's CPU
 * time (getrusage, user + system) per 1 KiB written, which includes the
 * kernel's loopback work done in its context, as a server's would.
 */

#define _GNU_SOURCE

#include <liburing.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>

#define CONNS    32
#define ROUNDS   20000
#define SIZE     1024


static void
pin(int cpu)
{
    cpu_set_t  set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) == -1) {
        perror("sched_setaffinity");
        exit(1);
    }
}


static double
cpu_us(void)
{
    struct rusage  ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec
           + ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
}


static void
drain(int *fds)
{
    static char         buf[65536];
    struct epoll_event  ev[CONNS];
    long                want = (long) CONNS * ROUNDS * SIZE, got = 0;
    int                 ep, i, n;
    ssize_t             r;

    pin(1);
    ep = epoll_create1(0);
    for (i = 0; i < CONNS; i++) {
        ev[0].events = EPOLLIN;
        ev[0].data.fd = fds[i];
        epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev[0]);
    }
    while (got < want) {
        n = epoll_wait(ep, ev, CONNS, -1);
        for (i = 0; i < n; i++) {
            r = recv(ev[i].data.fd, buf, sizeof(buf), 0);
            if (r > 0) {
                got += r;
            }
        }
    }
    _exit(0);
}


int
main(int argc, char **argv)
{
    static char          buf[SIZE];
    struct sockaddr_in   sin;
    struct io_uring      ring;
    struct io_uring_sqe *sqe;
    struct io_uring_cqe *cqe;
    socklen_t            len;
    double               t0, t1;
    unsigned             head, seen;
    int                  ls, cs[CONNS], ss[CONNS], one = 1, i, r, uring;
    pid_t                pid;

    if (argc != 2) {
        fprintf(stderr, "usage: syscalls null|send|uring\n");
        return 2;
    }

    pin(0);

    if (strcmp(argv[1], "null") == 0) {
        t0 = cpu_us();
        for (i = 0; i < 1000000; i++) {
            (void) syscall(SYS_getppid);
        }
        t1 = cpu_us();
        printf("null: %.3f us CPU per system call\n", (t1 - t0) / 1e6);
        return 0;
    }

    uring = strcmp(argv[1], "uring") == 0;
    if (!uring && strcmp(argv[1], "send") != 0) {
        fprintf(stderr, "usage: syscalls null|send|uring\n");
        return 2;
    }

    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ls = socket(AF_INET, SOCK_STREAM, 0);
    len = sizeof(sin);
    if (ls == -1 || bind(ls, (struct sockaddr *) &sin, sizeof(sin)) == -1
        || listen(ls, CONNS) == -1
        || getsockname(ls, (struct sockaddr *) &sin, &len) == -1)
    {
        perror("listen");
        return 1;
    }
    for (i = 0; i < CONNS; i++) {
        cs[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (cs[i] == -1
            || connect(cs[i], (struct sockaddr *) &sin, sizeof(sin)) == -1
            || (ss[i] = accept(ls, NULL, NULL)) == -1)
        {
            perror("connect");
            return 1;
        }
        setsockopt(cs[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }

    pid = fork();
    if (pid == 0) {
        drain(ss);
    }

    memset(buf, 'x', sizeof(buf));
    if (uring && (r = io_uring_queue_init(2 * CONNS, &ring, 0)) < 0) {
        fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-r));
        return 1;
    }

    t0 = cpu_us();
    for (r = 0; r < ROUNDS; r++) {
        if (!uring) {
            for (i = 0; i < CONNS; i++) {
                if (send(cs[i], buf, SIZE, 0) != SIZE) {
                    perror("send");
                    return 1;
                }
            }
            continue;
        }
        for (i = 0; i < CONNS; i++) {
            sqe = io_uring_get_sqe(&ring);
            io_uring_prep_send(sqe, cs[i], buf, SIZE, 0);
        }
        io_uring_submit_and_wait(&ring, CONNS);
        seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            if (cqe->res != SIZE) {
                fprintf(stderr, "send: %d\n", cqe->res);
                return 1;
            }
            seen++;
        }
        io_uring_cq_advance(&ring, seen);
    }
    t1 = cpu_us();

    waitpid(pid, NULL, 0);
    printf("%s: %.3f us CPU per %d-byte write (%d sockets)\n",
           uring ? "io_uring, one enter for all" : "send() each",
           (t1 - t0) / ((double) CONNS * ROUNDS), SIZE, CONNS);
    return 0;
}
