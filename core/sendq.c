/*
 * Small writes batched across sockets through io_uring (sendq.h).
 *
 * Every batched send is MSG_DONTWAIT: io_uring then tries it at once, in
 * io_uring_enter, and completes it there, with EAGAIN if the socket is
 * full, instead of waiting for room (which would leave the staging area
 * in use past the round). So one io_uring_submit_and_wait returns with
 * every completion of the round, and the staging area is free again.
 * Sends to different sockets are independent; one socket has at most
 * one send a round (its pieces in one sendmsg), so nothing overtakes.
 */

#include "gn_config.h"

#include <sys/socket.h>

#if (GN_HAVE_IO_URING)
#include <liburing.h>
#endif

#include "sendq.h"


#define GN_SENDQ_AREA     (512 * 1024)   /* the staging area */
#define GN_SENDQ_ENTRIES  256            /* sockets a submission */


static gn_uint_t    gn_sendq_on;
static gn_sendq_t  *gn_sendq_head;
static gn_sendq_t  *gn_sendq_tail;
static gn_uint_t    gn_sendq_n;          /* queued sockets */
static size_t       gn_sendq_used;       /* of the staging area */
static gn_log_t    *gn_sendq_log;        /* the child's */

#if (GN_HAVE_IO_URING)
static struct io_uring  gn_sendq_ring;
static u_char          *gn_sendq_area;
static struct msghdr    gn_sendq_msgs[GN_SENDQ_ENTRIES];
#endif


gn_int_t
gn_sendq_init(gn_uint_t on, gn_log_t *log)
{
    gn_sendq_log = log;

#if (GN_HAVE_IO_URING)
    int  rc;

    gn_sendq_on = 0;
    if (!on) {
        return GN_OK;
    }

    /* one thread submits, and completions are reaped only when it asks
     * (kernel 6.1); older kernels: the plain ring */
#if defined(IORING_SETUP_DEFER_TASKRUN)
    rc = io_uring_queue_init(GN_SENDQ_ENTRIES, &gn_sendq_ring,
                             IORING_SETUP_SINGLE_ISSUER
                             | IORING_SETUP_DEFER_TASKRUN);
    if (rc == -EINVAL)
#endif
    {
        rc = io_uring_queue_init(GN_SENDQ_ENTRIES, &gn_sendq_ring, 0);
    }
    if (rc < 0) {
        gn_log_error(GN_LOG_NOTICE, log, -rc, "batch_writes: io_uring is "
                     "not available, writing directly");
        return GN_OK;
    }

    gn_sendq_area = malloc(GN_SENDQ_AREA);
    if (gn_sendq_area == NULL) {
        gn_log_error(GN_LOG_EMERG, log, errno, "malloc(%d) failed",
                     GN_SENDQ_AREA);
        io_uring_queue_exit(&gn_sendq_ring);
        return GN_ERROR;
    }

    /* the ring entered by its registered index (kernel 5.18), and its
     * descriptor closed: batching takes none of the child's descriptors
     * (their budget: gn_child_fd_budget). liburing 2.4's
     * io_uring_close_ring_fd does the same; the ring is never torn down
     * (the child exits), which would need the descriptor. */
    if (io_uring_register_ring_fd(&gn_sendq_ring) == 1) {
        (void) close(gn_sendq_ring.ring_fd);
        gn_sendq_ring.ring_fd = -1;
    }

    gn_sendq_on = 1;
#else
    (void) on;
#endif

    return GN_OK;
}


gn_uint_t
gn_sendq_active(void)
{
    return gn_sendq_on;
}


static void
gn_sendq_unlink(gn_sendq_t *q)
{
    if (q->prev != NULL) {
        q->prev->next = q->next;
    } else {
        gn_sendq_head = q->next;
    }
    if (q->next != NULL) {
        q->next->prev = q->prev;
    } else {
        gn_sendq_tail = q->prev;
    }
    q->prev = q->next = NULL;
    q->nseg = 0;

    /* the last staged bytes left the area (sent, or copied to a
     * backlog): it is free again; a push outside the round (a close,
     * a sendfile) may have taken every socket out of it */
    if (--gn_sendq_n == 0) {
        gn_sendq_used = 0;
    }
}


/* q's staged pieces past the first `sent` bytes become its backlog, and
 * q leaves the round. GN_ERROR: no memory for them (errno set). */
static gn_int_t
gn_sendq_keep(gn_sendq_t *q, size_t sent)
{
    size_t     total, i;
    u_char    *p;

    total = 0;
    for (i = 0; i < q->nseg; i++) {
        total += q->seg[i].iov_len;
    }

    p = total > sent ? malloc(total - sent) : NULL;
    if (p == NULL && total > sent) {
        q->err = ENOMEM;
        gn_sendq_unlink(q);
        errno = ENOMEM;
        return GN_ERROR;
    }

    q->back = p;
    q->back_pos = 0;
    q->back_len = total - sent;

    if (total > sent && gn_sendq_log->level >= GN_LOG_DEBUG) {
        gn_log_error(GN_LOG_DEBUG, gn_sendq_log, 0, "batch_writes: the "
                     "socket took %zu of %zu bytes, the rest waits for room",
                     sent, total);
    }

    for (i = 0; i < q->nseg; i++) {
        if (sent >= q->seg[i].iov_len) {
            sent -= q->seg[i].iov_len;
            continue;
        }
        memcpy(p, (u_char *) q->seg[i].iov_base + sent,
               q->seg[i].iov_len - sent);
        p += q->seg[i].iov_len - sent;
        sent = 0;
    }

    gn_sendq_unlink(q);
    return GN_OK;
}


/* sendmsg(2) of iov[0..n) on fd, again after EINTR: bytes, or -1 with
 * errno. */
static ssize_t
gn_sendq_sendmsg(int fd, const struct iovec *iov, size_t n, gn_uint_t more)
{
    struct msghdr  msg;
    ssize_t        sent;

    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = (struct iovec *) iov;
    msg.msg_iovlen = n;

    do {
        sent = sendmsg(fd, &msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    } while (sent == -1 && errno == EINTR);

    return sent;
}


/* The backlog out: GN_OK, GN_AGAIN, GN_ERROR (errno). */
static gn_int_t
gn_sendq_drain(gn_sendq_t *q)
{
    ssize_t  n;

    while (q->back_len > q->back_pos) {
        do {
            n = send(q->fd, q->back + q->back_pos, q->back_len - q->back_pos,
                     MSG_NOSIGNAL);
        } while (n == -1 && errno == EINTR);

        if (n == -1) {
            return errno == EAGAIN || errno == EWOULDBLOCK ? GN_AGAIN
                                                           : GN_ERROR;
        }
        q->back_pos += (size_t) n;
    }

    free(q->back);
    q->back = NULL;
    q->back_pos = q->back_len = 0;
    return GN_OK;
}


gn_int_t
gn_sendq_push(gn_sendq_t *q)
{
    ssize_t  n;

    if (q->err) {
        errno = q->err;
        return GN_ERROR;
    }

    if (q->nseg != 0) {
        n = gn_sendq_sendmsg(q->fd, q->seg, q->nseg, q->more);

        if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK) {
            q->err = errno;
            gn_sendq_unlink(q);
            return GN_ERROR;
        }

        if (gn_sendq_keep(q, n == -1 ? 0 : (size_t) n) != GN_OK) {
            return GN_ERROR;
        }
    }

    return gn_sendq_drain(q);
}


void
gn_sendq_finish(gn_sendq_t *q)
{
    if (gn_sendq_pending(q)) {
        (void) gn_sendq_push(q);
        gn_sendq_drop(q);
    }
}


void
gn_sendq_drop(gn_sendq_t *q)
{
    if (q->nseg != 0) {
        gn_sendq_unlink(q);
    }
    free(q->back);
    q->back = NULL;
    q->back_pos = q->back_len = 0;
}


ssize_t
gn_sendq_writev(gn_sendq_t *q, int fd, const struct iovec *iov, int n,
    int more)
{
    ssize_t        sent;
    size_t         total;
    int            i;
    gn_int_t       rc;

    q->fd = fd;

    if (q->err) {
        errno = q->err;
        return GN_ERROR;
    }

    if (q->back_len != 0) {
        rc = gn_sendq_drain(q);
        if (rc != GN_OK) {
            return rc;
        }
    }

#if (GN_HAVE_IO_URING)
    total = 0;
    for (i = 0; i < n; i++) {
        total += iov[i].iov_len;
    }

    if (gn_sendq_on && total != 0 && total <= GN_SENDQ_SMALL) {
        u_char        *p;
        struct iovec  *last;

        if (gn_sendq_used + total > GN_SENDQ_AREA
            || (q->nseg == 0 && gn_sendq_n == GN_SENDQ_ENTRIES))
        {
            gn_sendq_flush();       /* q's own staged bytes too */

            if (q->err) {
                errno = q->err;
                return GN_ERROR;
            }
            if (q->back_len != 0) {
                return GN_AGAIN;    /* the socket is full */
            }
        }

        p = gn_sendq_area + gn_sendq_used;
        last = q->nseg != 0 ? &q->seg[q->nseg - 1] : NULL;

        if (last != NULL && (u_char *) last->iov_base + last->iov_len == p) {
            last->iov_len += total;          /* the same piece, grown */

        } else if (q->nseg < GN_SENDQ_SEGS) {
            q->seg[q->nseg].iov_base = p;
            q->seg[q->nseg].iov_len = total;
            if (q->nseg++ == 0) {
                q->prev = gn_sendq_tail;
                q->next = NULL;
                if (gn_sendq_tail != NULL) {
                    gn_sendq_tail->next = q;
                } else {
                    gn_sendq_head = q;
                }
                gn_sendq_tail = q;
                gn_sendq_n++;
            }

        } else {
            goto direct;            /* too many pieces: send them now */
        }

        for (i = 0; i < n; i++) {
            memcpy(p, iov[i].iov_base, iov[i].iov_len);
            p += iov[i].iov_len;
        }
        gn_sendq_used += total;
        q->more = (gn_uint_t) more;
        return (ssize_t) total;
    }

direct:
#else
    (void) total;
    (void) i;
#endif

    if (q->nseg != 0) {
        rc = gn_sendq_push(q);      /* what was staged goes first */
        if (rc != GN_OK) {
            return rc;
        }
    }

    sent = gn_sendq_sendmsg(fd, iov, (size_t) n, (gn_uint_t) more);
    if (sent >= 0) {
        return sent;
    }

    return errno == EAGAIN || errno == EWOULDBLOCK ? GN_AGAIN : GN_ERROR;
}


#if (GN_HAVE_IO_URING)

/* The ring broke: whether the round's sends went out is not known, and
 * guessing would lose or repeat bytes of many connections. The child
 * exits; the master starts another. Not seen with a working kernel. */
static void
gn_sendq_fatal(const char *call, int err)
{
    gn_log_error(GN_LOG_ALERT, NULL, err, "%s() failed: the child exits",
                 call);
    exit(2);
}

#endif


void
gn_sendq_flush(void)
{
#if (GN_HAVE_IO_URING)
    struct io_uring_sqe  *sqe;
    struct io_uring_cqe  *cqe;
    gn_sendq_t           *q;
    gn_uint_t             i, n, done;
    size_t                total, k;
    int                   rc;

    if (gn_sendq_head == NULL) {
        return;
    }

    if (gn_sendq_head == gn_sendq_tail) {
        /* one socket: its sendmsg is cheaper than a ring's round trip */
        (void) gn_sendq_push(gn_sendq_head);   /* an error: its next */
        return;                         /* (it left: the area is free) */
    }

    n = 0;
    for (q = gn_sendq_head; q != NULL; q = q->next) {
        sqe = io_uring_get_sqe(&gn_sendq_ring);     /* n < ENTRIES */
        memset(&gn_sendq_msgs[n], 0, sizeof(struct msghdr));
        gn_sendq_msgs[n].msg_iov = q->seg;
        gn_sendq_msgs[n].msg_iovlen = q->nseg;
        io_uring_prep_sendmsg(sqe, q->fd, &gn_sendq_msgs[n],
                              MSG_NOSIGNAL | MSG_DONTWAIT
                              | (q->more ? MSG_MORE : 0));
        io_uring_sqe_set_data(sqe, q);
        n++;
    }

    if (gn_sendq_log->level >= GN_LOG_DEBUG) {
        gn_log_error(GN_LOG_DEBUG, gn_sendq_log, 0, "batch_writes: %u "
                     "sockets' writes in one io_uring_enter", (unsigned) n);
    }

    do {
        rc = io_uring_submit_and_wait(&gn_sendq_ring, (unsigned) n);
    } while (rc == -EINTR);

    if (rc < 0) {
        gn_sendq_fatal("io_uring_submit_and_wait", -rc);
    }

    for (done = 0; done < n; done++) {
        do {
            rc = io_uring_wait_cqe(&gn_sendq_ring, &cqe);
        } while (rc == -EINTR);

        if (rc < 0) {
            gn_sendq_fatal("io_uring_wait_cqe", -rc);
        }

        q = io_uring_cqe_get_data(cqe);
        rc = cqe->res;
        io_uring_cqe_seen(&gn_sendq_ring, cqe);

        total = 0;
        for (i = 0; i < q->nseg; i++) {
            total += q->seg[i].iov_len;
        }

        if (rc >= 0 && (size_t) rc == total) {
            gn_sendq_unlink(q);

        } else if (rc >= 0 || rc == -EAGAIN) {
            k = rc >= 0 ? (size_t) rc : 0;
            (void) gn_sendq_keep(q, k);        /* ENOMEM: its error */

        } else {
            q->err = -rc;
            gn_sendq_unlink(q);
        }
    }
    /* every socket left the round: gn_sendq_unlink freed the area */
#endif
}
