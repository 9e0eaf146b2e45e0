/*
 * The child's main loop.
 *
 * Signals stay blocked except inside epoll_pwait(), so a handler only
 * ever interrupts the wait and sets a flag the loop reads next.
 */

#include "gn_config.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "child.h"
#include "process.h"
#include "event.h"
#include "timer.h"
#include "conn.h"
#include "http1.h"
#include "log.h"
#include "access_log.h"
#include "scoreboard.h"
#include "shm.h"
#include "http_file.h"
#include "gzip.h"
#include "module.h"
#include "api.h"
#include "regex.h"
#include "caps.h"
#include "upstream.h"
#include "sendq.h"



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
    struct sigaction           sa;
    const gn_process_signal_t  *s;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = gn_child_signal;
    sigemptyset(&sa.sa_mask);

    /* the master's signals: those the child has no use for (HUP, USR2)
     * are caught and ignored, not left to kill it */
    for (s = gn_process_signals; s->signo != 0; s++) {
        if (s->signo != SIGCHLD) {
            (void) sigaction(s->signo, &sa, NULL);
        }
    }

    sa.sa_handler = SIG_DFL;
    (void) sigaction(SIGCHLD, &sa, NULL);

    /* the master's mask (everything it waits for) is inherited blocked */
    sigemptyset(wait_mask);
}


static void
gn_child_fail(gn_cycle_t *cycle, int err, const char *what)
{
    gn_log_error(GN_LOG_EMERG, &cycle->log, err, "%s", what);
    exit(2);
}


/*
 * `chroot DIR`: the child sees only DIR from now on. The configuration
 * keeps real paths; the document roots (checked to lie in DIR) are
 * translated first. What the master opened (logs, listening sockets,
 * keys) stays open across it.
 */
static void
gn_child_chroot(gn_cycle_t *cycle)
{
    gn_str_t  *dir = &cycle->main->chroot;
    char       msg[PATH_MAX + 64];

    tzset();                          /* /etc/localtime, while visible */
    gn_cycle_chroot_paths(cycle);

    /* NUL-terminated: the configuration made a copy */
    if (chdir((char *) dir->data) == -1) {
        snprintf(msg, sizeof(msg), "chdir(\"%.*s\") failed",
                 GN_STR_ARG(dir));
        gn_child_fail(cycle, errno, msg);
    }

    if (chroot((char *) dir->data) == -1) {
        snprintf(msg, sizeof(msg), "chroot(\"%.*s\") failed",
                 GN_STR_ARG(dir));
        gn_child_fail(cycle, errno, msg);
    }

    if (chdir("/") == -1) {
        gn_child_fail(cycle, errno, "chdir(\"/\") after chroot failed");
    }
}


/* Root only: the user's groups, the chroot (needs CAP_SYS_CHROOT, so
 * before the uid changes), then gid and uid. */
static void
gn_child_switch_user(gn_cycle_t *cycle)
{
    gn_main_conf_t  *mc = cycle->main;
    char             user[256], msg[PATH_MAX + 64];

    snprintf(user, sizeof(user), "%.*s", GN_STR_ARG(&mc->user));

    if (setgid(mc->gid) == -1) {
        snprintf(msg, sizeof(msg), "setgid(%d) failed", (int) mc->gid);
        gn_child_fail(cycle, errno, msg);
    }

    /* reads /etc/group: before the chroot */
    if (initgroups(user, mc->gid) == -1) {
        snprintf(msg, sizeof(msg), "initgroups(%s, %d) failed", user,
                 (int) mc->gid);
        gn_child_fail(cycle, errno, msg);
    }

    if (mc->chroot.len != 0) {
        gn_child_chroot(cycle);
    }

    if (setuid(mc->uid) == -1) {
        snprintf(msg, sizeof(msg), "setuid(%d) failed", (int) mc->uid);
        gn_child_fail(cycle, errno, msg);
    }
}


/*
 * After the switch: no capability left in any set, no_new_privs on (a
 * CGI or anything else executed cannot gain privileges through setuid
 * bits or file capabilities), and every way back to root refused. A
 * child that finds otherwise does not serve.
 */
static void
gn_child_verify_privileges(gn_cycle_t *cycle)
{
    gn_main_conf_t  *mc = cycle->main;
    gn_caps_t        caps;
    const char      *failed;

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
        gn_child_fail(cycle, errno, "prctl(PR_SET_NO_NEW_PRIVS) failed");
    }

    /* a child keeps no capability, even with `user root` or file
     * capabilities on the binary */
    if (gn_caps_restrict(0, &failed) != GN_OK) {
        gn_log_error(GN_LOG_EMERG, &cycle->log, errno, "%s failed", failed);
        exit(2);
    }

    if (gn_caps_get(&caps) != GN_OK) {
        gn_child_fail(cycle, errno, "capget() failed");
    }

    if (caps.effective || caps.permitted || caps.ambient) {
        gn_log_error(GN_LOG_EMERG, &cycle->log, 0, "capabilities left after "
                     "dropping privileges: effective %llx, permitted %llx, "
                     "ambient %llx", (unsigned long long) caps.effective,
                     (unsigned long long) caps.permitted,
                     (unsigned long long) caps.ambient);
        exit(2);
    }

    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
        gn_child_fail(cycle, 0, "no_new_privs is not set");
    }

    if (getuid() != 0 && geteuid() != 0) {
        if (setuid(0) != -1 || seteuid(0) != -1) {
            gn_child_fail(cycle, 0, "could regain uid 0 after dropping "
                          "privileges");
        }
    }

    if (getgid() != 0 && getegid() != 0 && mc->gid != 0) {
        if (setgid(0) != -1 || setegid(0) != -1) {
            gn_child_fail(cycle, 0, "could regain gid 0 after dropping "
                          "privileges");
        }
    }
}


static void
gn_child_drop_privileges(gn_cycle_t *cycle)
{
    if (geteuid() == 0) {
        gn_child_switch_user(cycle);
    }

    gn_child_verify_privileges(cycle);

#ifdef HAVE_PRCTL
    /* allow core dumps of a child that crashes, for debugging */
    (void) prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
}


/* Descriptors open now: the child's own (listeners, logs, epoll, what
 * modules opened). /proc may be missing (chroot): then each descriptor
 * number is tried; they are the lowest ones at this point. */
static gn_uint_t
gn_child_open_fds(rlim_t limit)
{
    DIR            *d;
    struct dirent  *de;
    gn_uint_t       n;
    int             fd;

    n = 0;
    d = opendir("/proc/self/fd");
    if (d != NULL) {
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] != '.') {
                n++;
            }
        }
        closedir(d);
        return n > 0 ? n - 1 : 0;                /* not the directory's */
    }

    for (fd = 0; fd < (int) gn_min(limit, 8192); fd++) {
        if (fcntl(fd, F_GETFD) != -1) {
            n++;
        }
    }

    return n;
}


/* What the descriptor limit leaves the open-file cache and the
 * connections, once the child's own descriptors are open. */
static void
gn_child_fd_budget(gn_cycle_t *cycle)
{
    struct rlimit  rl;
    gn_uint_t      own;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY) {
        return;
    }

    own = gn_child_open_fds(rl.rlim_cur);
    if (own >= rl.rlim_cur) {
        return;
    }

    gn_file_cache_fd_budget((gn_uint_t) (rl.rlim_cur - own), &gn_conn_count);
    gn_log_error(GN_LOG_DEBUG, &cycle->log, 0, "descriptors: limit %llu, "
                 "%u the child's own", (unsigned long long) rl.rlim_cur,
                 (unsigned) own);
}


static void
gn_child_exit(gn_cycle_t *cycle, int code)
{
    gn_log_error(GN_LOG_NOTICE, &cycle->log, 0, "exiting");
    gn_conn_close_all();
    gn_upstream_child_exit();
    gn_access_log_flush_all();        /* after the last requests' lines */
    gn_module_exit_child(cycle);
    gn_api_collect();
    gn_event_done();
    exit(code);
}


/*
 * A master killed with SIGKILL cannot stop its children, and children
 * that kept the listening sockets would keep the next start from
 * binding. The kernel sends the graceful stop instead (stop accepting,
 * finish the connections, exit). Set after the privilege drop, which
 * clears it; a master gone before that is noticed by the parent pid.
 */
static void
gn_child_orphan_stop(void)
{
    if (prctl(PR_SET_PDEATHSIG, SIGQUIT, 0, 0, 0) == -1) {
        gn_log_error(GN_LOG_ALERT, NULL, errno,
                     "prctl(PR_SET_PDEATHSIG) failed");
    }

    if ((uint64_t) getppid() != gn_sb->master_pid) {
        gn_child_quit = 1;
    }
}


void
gn_child_run(gn_cycle_t *cycle, gn_int_t slot, gn_uint_t generation)
{
    sigset_t    wait_mask;
    gn_msec_t   deadline;
    gn_uint_t   draining, entries;
    int         timeout;

    gn_log_slot = slot;
    gn_process_title_set("gannet: child process");

    /* systemd's socket is the master's (sd_notify.h): with
     * NotifyAccess=all, what runs in a child must not reach it */
    (void) unsetenv("NOTIFY_SOCKET");
    gn_shm_child();

    gn_sb_me = &gn_sb->slots[slot];
    gn_sb_me->pid = getpid();
    gn_sb_me->generation = generation;
    gn_sb_me->started = (uint64_t) time(NULL);

    gn_child_signals(&wait_mask);
    gn_child_drop_privileges(cycle);
    gn_child_orphan_stop();

    gn_time_update();
    gn_http_listen_init(cycle);           /* every listener is HTTP/1's */
    entries = (gn_uint_t) gn_file_conf(cycle->main_loc)->file_cache_entries;
    gn_file_cache_derived_budget(gn_gzip_conf(cycle->main_loc)->cache_size);

    if (gn_event_init(512) != GN_OK
        || gn_timer_heap_init((gn_uint_t) cycle->main->max_connections + 16)
           != GN_OK
        || gn_file_cache_init(entries) != GN_OK
        || gn_conn_listen_start(cycle, (gn_uint_t) cycle->main->max_connections)
           != GN_OK)
    {
        gn_log_error(GN_LOG_EMERG, &cycle->log, errno,
                     "child initialisation failed");
        exit(2);
    }

    if (gn_sendq_init((gn_uint_t) cycle->main->batch_writes, &cycle->log)
        != GN_OK)
    {
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

    gn_child_fd_budget(cycle);

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
            gn_log_error((uint64_t) getppid() == gn_sb->master_pid
                         ? GN_LOG_NOTICE : GN_LOG_ALERT, &cycle->log, 0,
                         "gracefully shutting down%s",
                         (uint64_t) getppid() == gn_sb->master_pid ? ""
                         : ": the master process is gone");
        }

        if (gn_child_reopen) {
            gn_child_reopen = 0;
            /* buffered lines belong to the old file: out before dup2 */
            gn_access_log_flush_all();
            gn_cycle_reopen(cycle, (uid_t) -1);
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
