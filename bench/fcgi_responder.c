/*
 * bench/fcgi_responder.c - the FastCGI backend of bench/fastcgi.sh: one
 * thread, epoll, non-blocking sockets; every request (any number per
 * connection, FCGI_KEEP_CONN honoured, else the connection is closed
 * after the answer) is answered with "Content-Type:
 * application/octet-stream", a blank line and SIZE bytes, in one STDOUT
 * record (SIZE <= 65535), the empty STDOUT and END_REQUEST. It reads
 * and drops PARAMS and STDIN; it is not a general responder (one
 * request at a time per connection, as nginx and gannet send them).
 *
 *   fcgi_responder PORT SIZE
 *
 * Built by bench/fastcgi.sh with gcc -O2. Runs until killed.
 */

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXCONN  65536
#define INBUF    65536

typedef struct {
    unsigned char  in[INBUF];
    size_t         len;
    int            keep;
} conn_t;

static conn_t          *conns[MAXCONN];
static unsigned char   *answer;
static size_t           answer_len;


static void
hdr(unsigned char *p, int type, size_t len, size_t pad)
{
    p[0] = 1;
    p[1] = (unsigned char) type;
    p[2] = 0;
    p[3] = 1;
    p[4] = (unsigned char) (len >> 8);
    p[5] = (unsigned char) len;
    p[6] = (unsigned char) pad;
    p[7] = 0;
}


static void
build(size_t size)
{
    static const char  head[] = "Content-Type: application/octet-stream"
                                "\r\n\r\n";
    size_t             clen = sizeof(head) - 1 + size, pad, i;
    unsigned char     *p;

    pad = (8 - clen % 8) % 8;
    answer_len = 8 + clen + pad + 8 + 16;
    answer = calloc(1, answer_len);
    if (answer == NULL) {
        exit(1);
    }
    p = answer;
    hdr(p, 6, clen, pad);
    memcpy(p + 8, head, sizeof(head) - 1);
    for (i = 0; i < size; i++) {
        p[8 + sizeof(head) - 1 + i] = (unsigned char) ('a' + i % 26);
    }
    p += 8 + clen + pad;
    hdr(p, 6, 0, 0);
    p += 8;
    hdr(p, 3, 8, 0);                   /* END_REQUEST, complete */
}


static void
drop(int ep, int fd)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    free(conns[fd]);
    conns[fd] = NULL;
}


/* The records in c->in: answers each request whose STDIN ended. */
static int
serve(int fd, conn_t *c)
{
    size_t   off = 0, clen, pad, n;
    ssize_t  w;

    while (c->len - off >= 8) {
        unsigned char  *h = c->in + off;

        clen = (size_t) h[4] << 8 | h[5];
        pad = h[6];
        if (c->len - off < 8 + clen + pad) {
            break;
        }
        if (h[1] == 1 && clen >= 3) {            /* BEGIN_REQUEST */
            c->keep = h[10] & 1;
        }
        off += 8 + clen + pad;
        if (h[1] == 5 && clen == 0) {            /* the end of STDIN */
            for (n = 0; n < answer_len; n += (size_t) w) {
                w = write(fd, answer + n, answer_len - n);
                if (w < 0 && errno == EAGAIN) {
                    /* the answer is small: the socket takes it */
                    w = 0;
                    continue;
                }
                if (w <= 0) {
                    return -1;
                }
            }
            if (!c->keep) {
                return -1;
            }
        }
    }

    memmove(c->in, c->in + off, c->len - off);
    c->len -= off;
    return c->len == INBUF ? -1 : 0;
}


int
main(int argc, char **argv)
{
    struct sockaddr_in   sin;
    struct epoll_event   ev, evs[256];
    int                  ls, ep, i, n, fd, one = 1;
    ssize_t              r;
    conn_t              *c;

    if (argc != 3) {
        fprintf(stderr, "usage: fcgi_responder PORT SIZE\n");
        return 2;
    }
    build((size_t) atoi(argv[2]));
    signal(SIGPIPE, SIG_IGN);

    ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons((unsigned short) atoi(argv[1]));
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *) &sin, sizeof(sin)) != 0
        || listen(ls, 4096) != 0)
    {
        perror("fcgi_responder: bind/listen");
        return 1;
    }

    ep = epoll_create1(0);
    ev.events = EPOLLIN;
    ev.data.fd = ls;
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);

    for ( ;; ) {
        n = epoll_wait(ep, evs, 256, -1);
        for (i = 0; i < n; i++) {
            fd = evs[i].data.fd;
            if (fd == ls) {
                while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (fd >= MAXCONN
                        || (conns[fd] = calloc(1, sizeof(conn_t))) == NULL)
                    {
                        close(fd);
                        continue;
                    }
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
                               sizeof(one));
                    ev.events = EPOLLIN;
                    ev.data.fd = fd;
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            c = conns[fd];
            r = read(fd, c->in + c->len, INBUF - c->len);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) {
                    continue;
                }
                drop(ep, fd);
                continue;
            }
            c->len += (size_t) r;
            if (serve(fd, c) != 0) {
                drop(ep, fd);
            }
        }
    }
}
