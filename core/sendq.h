/*
 * Small writes batched across sockets (`batch_writes`, io_uring).
 *
 * A round of the event loop writes to many sockets: a response on one
 * connection, a request to an upstream on another. Each write is a
 * system call, and on a virtual machine a system call costs more than
 * the bytes it carries. A small write (at most GN_SENDQ_SMALL bytes) is
 * copied into the child's staging area and reported sent at once; the
 * writes of the round go out together, one sendmsg per socket in one
 * io_uring_enter, when the event loop comes back round
 * (gn_event_process calls gn_sendq_flush before it waits); a round that
 * wrote to one socket only makes its sendmsg directly.
 *
 * What the kernel did not take (the socket was full: a short send, or
 * EAGAIN, for every send is MSG_DONTWAIT) stays behind as the socket's
 * backlog, in order: the socket's next write sends the backlog first
 * and reports GN_AGAIN until it is out, and the owner drains it on the
 * socket's EPOLLOUT (gn_sendq_push) whether or not it has more to
 * write. A send's error is kept and is the next write's.
 *
 * The owner (a client connection, an upstream connection) must, before
 * anything else writes to or shuts its socket (sendfile, shutdown,
 * close), gn_sendq_push what is queued; and gn_sendq_drop before the
 * socket is closed or the queue's memory reused. A client's TLS
 * records come through here too (tls.c's push function); the TLS client
 * of upstreams (tls_client.c) writes its own.
 */

#ifndef GN_CORE_SENDQ_H_INCLUDED
#define GN_CORE_SENDQ_H_INCLUDED

#include "gn_config.h"

#include <sys/uio.h>

#include "log.h"


#define GN_SENDQ_SMALL  (16384 + 512)   /* a write batched: at most this
                                           (a full TLS record) */
#define GN_SENDQ_SEGS   4           /* staged pieces a socket a round */

typedef struct gn_sendq_s  gn_sendq_t;

struct gn_sendq_s {
    int            fd;              /* while queued */
    int            err;             /* a batched send's errno, or 0 */
    gn_uint_t      nseg;            /* staged this round; 0: not queued */
    gn_uint_t      more;            /* the last staged write's MSG_MORE */
    struct iovec   seg[GN_SENDQ_SEGS];   /* in the staging area */
    u_char        *back;            /* the backlog: malloc()ed */
    size_t         back_pos;
    size_t         back_len;
    gn_sendq_t    *prev;            /* the round's queue */
    gn_sendq_t    *next;
};

/* Bytes staged or left behind: gn_sendq_push before a sendfile, a
 * shutdown or a close. */
#define gn_sendq_pending(q)  ((q)->nseg != 0 || (q)->back_len != 0)

/* Child only, at start: batching on (`batch_writes on` and io_uring
 * usable: when it is not, said once at NOTICE and the child writes
 * directly) or off. GN_OK, or GN_ERROR (out of memory; logged). */
gn_int_t gn_sendq_init(gn_uint_t on, gn_log_t *log);

/* Whether this child batches. */
gn_uint_t gn_sendq_active(void);

/* Writes iov[0..n) to fd through q (MSG_MORE if `more`): the bytes
 * taken (all of a small write), GN_AGAIN (nothing taken: the backlog or
 * the socket is full; on EPOLLOUT), or GN_ERROR (errno set: the
 * socket's, or a batched send's that failed). */
ssize_t gn_sendq_writev(gn_sendq_t *q, int fd, const struct iovec *iov,
    int n, int more);

/* q's staged bytes and backlog out now, without waiting: GN_OK (all
 * out), GN_AGAIN (some left: again on EPOLLOUT), GN_ERROR (errno set:
 * what is left will not go). */
gn_int_t gn_sendq_push(gn_sendq_t *q);

/* Forgets q's staged bytes and backlog (its socket is closing). */
void gn_sendq_drop(gn_sendq_t *q);

/* Its socket closes now: what fits goes (gn_sendq_push, once, without
 * waiting), the rest is dropped. */
void gn_sendq_finish(gn_sendq_t *q);

/* The round's staged writes out: one io_uring_enter for all. */
void gn_sendq_flush(void);

#endif /* GN_CORE_SENDQ_H_INCLUDED */
