/*
 * The child's event loop: epoll, edge-triggered for connections.
 *
 * Each watched descriptor is described by a gn_io_t embedded in its owner.
 * A stale event (one already fetched by epoll_wait for a descriptor that a
 * handler earlier in the same batch closed and whose gn_io_t was reused)
 * is recognised by the instance bit and dropped.
 */

#ifndef GN_CORE_EVENT_H_INCLUDED
#define GN_CORE_EVENT_H_INCLUDED

#include "gn_config.h"

#include <signal.h>
#include <sys/epoll.h>


typedef struct gn_io_s  gn_io_t;
typedef void (*gn_io_handler_pt)(gn_io_t *io, uint32_t events);

struct gn_io_s {
    int                fd;
    gn_uint_t          instance;     /* flipped when the owner is reused */
    gn_io_handler_pt   handler;
    void              *data;
};

#define GN_EV_IN        EPOLLIN
#define GN_EV_OUT       EPOLLOUT
#define GN_EV_ET        EPOLLET
#define GN_EV_RDHUP     EPOLLRDHUP
#define GN_EV_ERR       (EPOLLERR | EPOLLHUP)
#ifdef EPOLLEXCLUSIVE
#define GN_EV_EXCLUSIVE EPOLLEXCLUSIVE
#else
#define GN_EV_EXCLUSIVE 0
#endif


gn_int_t gn_event_init(gn_uint_t max_events);
void gn_event_done(void);
gn_int_t gn_event_add(gn_io_t *io, uint32_t events);
gn_int_t gn_event_mod(gn_io_t *io, uint32_t events);
gn_int_t gn_event_del(gn_io_t *io);

/* Waits up to `timeout` ms (-1: no limit) with `mask` as the signal mask
 * during the wait (signals are delivered only there), dispatches ready
 * descriptors, then updates the time and runs expired timers.
 * Returns GN_OK, or GN_ERROR when epoll_pwait failed other than by EINTR. */
gn_int_t gn_event_process(int timeout, const sigset_t *mask);

#endif /* GN_CORE_EVENT_H_INCLUDED */
