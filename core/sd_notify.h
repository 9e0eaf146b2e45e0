/*
 * systemd's readiness protocol (sd_notify(3)), without libsystemd: a
 * datagram to the socket NOTIFY_SOCKET names, when it names one. The
 * shipped gannet.service is Type=notify with NotifyAccess=all, so that
 * the master says when it serves (READY=1), reloads (RELOADING=1, then
 * READY=1 again) and stops (STOPPING=1), and a binary upgrade's new
 * master makes itself the service's main process (MAINPID=) while the
 * old one finishes, without systemd taking the old one's exit for the
 * service's end.
 *
 * Master only. Best effort: a failure to send is not an error of the
 * server (systemd then waits for its start timeout and says so).
 */

#ifndef GN_CORE_SD_NOTIFY_H_INCLUDED
#define GN_CORE_SD_NOTIFY_H_INCLUDED

#include "gn_config.h"


/* Sends the state lines ("READY=1\nSTATUS=..."); GN_DECLINED when
 * NOTIFY_SOCKET is not set, GN_ERROR (errno set) when it cannot be
 * reached. */
gn_int_t gn_sd_notify(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

#endif /* GN_CORE_SD_NOTIFY_H_INCLUDED */
