/*
 * epoll backend. Linux is the platform; a portable poll(2) backend would
 * sit beside this file behind the same four calls.
 */

#include "gn_config.h"

#include "event.h"
#include "timer.h"
#include "log.h"
#include "sendq.h"


static int                  gn_epfd = -1;
static struct epoll_event  *gn_events;
static gn_uint_t            gn_nevents;


gn_int_t
gn_event_init(gn_uint_t max_events)
{
    gn_epfd = epoll_create1(EPOLL_CLOEXEC);
    if (gn_epfd == -1) {
        gn_log_error(GN_LOG_EMERG, NULL, errno, "epoll_create1() failed");
        return GN_ERROR;
    }

    gn_nevents = max_events;
    gn_events = calloc(max_events, sizeof(struct epoll_event));
    if (gn_events == NULL) {
        gn_log_error(GN_LOG_EMERG, NULL, errno, "calloc(%zu) failed",
                     max_events * sizeof(struct epoll_event));
        return GN_ERROR;
    }

    return GN_OK;
}


void
gn_event_done(void)
{
    if (gn_epfd != -1) {
        close(gn_epfd);
        gn_epfd = -1;
    }
    free(gn_events);
    gn_events = NULL;
}


static gn_int_t
gn_event_ctl(int op, gn_io_t *io, uint32_t events)
{
    struct epoll_event  ee;

    ee.events = events;
    ee.data.ptr = (void *) ((uintptr_t) io | (io->instance & 1));

    if (epoll_ctl(gn_epfd, op, io->fd, &ee) == -1) {
        return GN_ERROR;
    }

    return GN_OK;
}


gn_int_t
gn_event_add(gn_io_t *io, uint32_t events)
{
    return gn_event_ctl(EPOLL_CTL_ADD, io, events);
}


gn_int_t
gn_event_mod(gn_io_t *io, uint32_t events)
{
    return gn_event_ctl(EPOLL_CTL_MOD, io, events);
}


gn_int_t
gn_event_del(gn_io_t *io)
{
    if (epoll_ctl(gn_epfd, EPOLL_CTL_DEL, io->fd, NULL) == -1) {
        return GN_ERROR;
    }

    return GN_OK;
}


gn_int_t
gn_event_process(int timeout, const sigset_t *mask)
{
    int        n, i, err;
    uintptr_t  p;
    gn_io_t   *io;

    /* the small writes of the last round (and of whatever ran between
     * rounds) out, in one system call, before the wait */
    gn_sendq_flush();

    n = epoll_pwait(gn_epfd, gn_events, (int) gn_nevents, timeout, mask);
    err = errno;

    gn_time_update();

    if (n == -1) {
        if (err == EINTR) {
            gn_timer_expire();
            return GN_OK;
        }
        gn_log_error(GN_LOG_ALERT, NULL, err, "epoll_pwait() failed");
        return GN_ERROR;
    }

    for (i = 0; i < n; i++) {
        p = (uintptr_t) gn_events[i].data.ptr;
        io = (gn_io_t *) (p & ~(uintptr_t) 1);

        if (io->fd == -1 || (io->instance & 1) != (p & 1)) {
            continue;                              /* stale */
        }

        io->handler(io, gn_events[i].events);
    }

    gn_timer_expire();

    return GN_OK;
}
