/*
 * The child's main loop.
 *
 * Signals stay blocked except inside epoll_pwait(), so a handler only
 * ever interrupts the wait and sets a flag the loop reads next.
 */

#include "gn_config.h"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>

#include "child.h"
#include "process.h"
#include "event.h"
#include "timer.h"
#include "conn.h"
#include "log.h"
#include "access_log.h"
#include "scoreboard.h"
#include "file_cache.h"
#include "module.h"
#include "api.h"
#include "regex.h"



static volatile sig_atomic_t  gn_child_quit;
static volatile sig_atomic_t  gn_child_terminate;
static volatile sig_atomic_t  gn_child_reopen;


static void
gn_child_signal(int signo)
{
    switch (signo) {
    case SIGQUIT:
        gn_child_quit = 1;
        break;
    case SIGTERM:
    case SIGINT:
        gn_child_terminate = 1;
        break;
    case SIGUSR1:
        gn_child_reopen = 1;
        break;
    default:
        break;
    }
}


static void
gn_child_signals(sigset_t *wait_mask)
{
    struct sigaction  sa;
    int               sigs[] = { SIGQUIT, SIGTERM, SIGINT, SIGUSR1, SIGHUP,
                                 SIGUSR2 };
    size_t            i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = gn_child_signal;
    sigemptyset(&sa.sa_mask);

    for (i = 0; i < gn_nelems(sigs); i++) {
        (void) sigaction(sigs[i], &sa, NULL);
    }

    sa.sa_handler = SIG_DFL;
    (void) sigaction(SIGCHLD, &sa, NULL);

    /* the master's mask (everything it waits for) is inherited blocked */
    sigemptyset(wait_mask);
}


static void
gn_child_drop_privileges(gn_cycle_t *cycle)
{
    gn_main_conf_t  *mc = cycle->main;
    char             user[256];

    if (geteuid() != 0) {
        return;
    }

    snprintf(user, sizeof(user), "%.*s", GN_STR_ARG(&mc->user));

    if (setgid(mc->gid) == -1) {
        gn_log_error(GN_LOG_EMERG, &cycle->log, errno, "setgid(%d) failed",
                     (int) mc->gid);
        exit(2);
    }

    if (initgroups(user, mc->gid) == -1) {
        gn_log_error(GN_LOG_EMERG, &cycle->log, errno,
                     "initgroups(%s, %d) failed", user, (int) mc->gid);
        exit(2);
    }

    if (setuid(mc->uid) == -1) {
        gn_log_error(GN_LOG_EMERG, &cycle->log, errno, "setuid(%d) failed",
                     (int) mc->uid);
        exit(2);
    }

    if (mc->uid != 0 && setuid(0) != -1) {
        gn_log_error(GN_LOG_EMERG, &cycle->log, 0,
                     "could regain root after dropping privileges");
        exit(2);
    }

#ifdef HAVE_PRCTL
    /* allow core dumps of a child that crashes, for debugging */
    (void) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
}


static void
gn_child_exit(gn_cycle_t *cycle, int code)
{
    gn_log_error(GN_LOG_NOTICE, &cycle->log, 0, "exiting");
    gn_conn_close_all();
    gn_access_log_flush_all();        /* after the last requests' lines */
    gn_module_exit_child(cycle);
    gn_api_collect();
    gn_event_done();
    exit(code);
}


void
gn_child_run(gn_cycle_t *cycle, gn_int_t slot, gn_uint_t generation)
{
    sigset_t    wait_mask;
    gn_msec_t   deadline;
    gn_uint_t   draining;
    int         timeout;

    gn_log_slot = slot;
    gn_process_title_set("gannet: child process");

    gn_sb_me = &gn_sb->slots[slot];
    gn_sb_me->pid = getpid();
    gn_sb_me->generation = generation;
    gn_sb_me->started = (uint64_t) time(NULL);

    gn_child_signals(&wait_mask);
    gn_child_drop_privileges(cycle);

    gn_time_update();

    if (gn_event_init(512) != GN_OK
        || gn_timer_heap_init((gn_uint_t) cycle->main->max_connections + 16)
           != GN_OK
        || gn_file_cache_init((gn_uint_t) cycle->main_loc->file_cache_entries)
           != GN_OK
        || gn_conn_listen_start(cycle, (gn_uint_t) cycle->main->max_connections)
           != GN_OK)
    {
        gn_log_error(GN_LOG_EMERG, &cycle->log, errno,
                     "child initialisation failed");
        exit(2);
    }

    if (gn_regex_init_child(GN_REGEX_MATCH_LIMIT) != GN_OK) {
        gn_log_error(GN_LOG_EMERG, &cycle->log, 0, "pcre2 match context "
                     "allocation failed");
        exit(2);
    }

    if (gn_module_init_child(cycle) != GN_OK) {
        exit(2);
    }

    gn_sb_me->state = GN_SB_RUNNING;
    draining = 0;
    deadline = 0;

    for ( ;; ) {

        if (gn_child_terminate) {
            gn_child_exit(cycle, 0);
        }

        if (gn_child_quit && !draining) {
            draining = 1;
            gn_conn_draining = 1;
            gn_sb_me->state = GN_SB_DRAINING;
            gn_conn_listen_stop(cycle);
            deadline = gn_current_msec + cycle->main->shutdown_timeout;
            gn_log_error(GN_LOG_NOTICE, &cycle->log, 0,
                         "gracefully shutting down");
        }

        if (gn_child_reopen) {
            gn_child_reopen = 0;
            /* buffered lines belong to the old file: out before dup2 */
            gn_access_log_flush_all();
            gn_cycle_reopen_files(cycle, (uid_t) -1);
        }

        timeout = gn_timer_next();

        if (draining) {
            if (gn_conn_drain(GN_CONN_DRAIN_GRACE) == 0) {
                gn_child_exit(cycle, 0);
            }

            if (gn_current_msec >= deadline) {
                gn_log_error(GN_LOG_WARN, &cycle->log, 0,
                             "shutdown timeout: closing %u connections",
                             (unsigned) gn_conn_count);
                gn_child_exit(cycle, 0);
            }

            timeout = (int) gn_min((gn_msec_t) (timeout < 0 ? 100 : timeout),
                                   deadline - gn_current_msec);
        }

        if (gn_event_process(timeout, &wait_mask) != GN_OK) {
            gn_child_exit(cycle, 2);
        }

        gn_api_collect();
    }
}
