/*
 * The master loop. Signals are blocked and fetched with sigtimedwait(),
 * so every state change happens here, in order, outside any handler.
 */

#include "gn_config.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "master.h"
#include "process.h"
#include "child.h"
#include "scoreboard.h"
#include "sd_notify.h"
#include "log.h"
#include "listen.h"
#include "shm.h"
#include "tls.h"
#include "http_file.h"
#include "module.h"
#include "caps.h"


#define GN_RESPAWN_QUICK     1000     /* a child dying sooner is failing */
#define GN_RESPAWN_MAX_DELAY 10000
#define GN_STOP_KILL_AFTER   5000     /* after TERM, then SIGKILL */
/* descriptors of a child besides connections, cached files, listeners
 * and log files: stdio, epoll, the signal pipe, a CGI pipe or two */
#define GN_MASTER_FD_RESERVED  16

typedef enum {
    GN_MASTER_RUNNING = 0,
    GN_MASTER_STOPPING,               /* QUIT: children drain */
    GN_MASTER_TERMINATING             /* TERM: children exit now */
} gn_master_state_e;


static gn_uint_t           gn_generation;
static gn_master_state_e   gn_master_state;
static gn_msec_t           gn_stop_deadline;
static gn_uint_t           gn_stop_killed;
static const char         *gn_conf_path;
static const char         *gn_prefix;
static pid_t               gn_upgrade_pid;    /* the new master, running */
static gn_uint_t           gn_pid_renamed;    /* our pid file is .oldbin */
static char                gn_self_exe[PATH_MAX];


static void
gn_master_signal_set(sigset_t *set)
{
    const gn_process_signal_t  *s;

    sigemptyset(set);
    for (s = gn_process_signals; s->signo != 0; s++) {
        sigaddset(set, s->signo);
    }
}


void
gn_master_block_signals(void)
{
    sigset_t  set;

    gn_master_signal_set(&set);

    (void) sigprocmask(SIG_BLOCK, &set, NULL);
    (void) signal(SIGPIPE, SIG_IGN);
}


static void
gn_master_signal_children(int signo, gn_uint_t only_old)
{
    gn_int_t  i;

    for (i = 0; i < GN_SB_SLOTS; i++) {
        if (gn_processes[i].pid <= 0) {
            continue;
        }
        if (only_old && gn_processes[i].generation == gn_generation) {
            continue;
        }
        if (signo == SIGQUIT || signo == SIGTERM) {
            gn_processes[i].exiting = 1;
        }
        if (kill(gn_processes[i].pid, signo) == -1 && errno != ESRCH) {
            gn_log_error(GN_LOG_ALERT, &gn_cycle->log, errno,
                         "kill(%d, %d) failed", (int) gn_processes[i].pid,
                         signo);
        }
    }
}


static gn_uint_t
gn_master_live_children(void)
{
    gn_uint_t  n;
    gn_int_t   i;

    n = 0;
    for (i = 0; i < GN_SB_SLOTS; i++) {
        n += (gn_processes[i].pid > 0);
    }

    return n;
}


static void
gn_master_spawn_generation(gn_cycle_t *cycle)
{
    gn_uint_t  i;
    gn_int_t   slot;

    for (i = 0; i < cycle->children; i++) {
        slot = gn_scoreboard_take();
        if (slot == -1) {
            gn_log_error(GN_LOG_ALERT, &cycle->log, 0,
                         "no free scoreboard slot for a child");
            return;
        }
        gn_processes[slot].fails = 0;
        if (gn_process_spawn(cycle, slot, gn_generation, gn_child_run)
            == -1)
        {
            gn_processes[slot].respawn_at = gn_process_msec() + 1000;
            gn_processes[slot].generation = gn_generation;
        }
    }
}


/* What the child's scoreboard slot counted, for the record. */
static void
gn_master_log_counters(gn_int_t slot, pid_t pid)
{
    gn_sb_slot_t  *sb = &gn_sb->slots[slot];

    gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0,
                 "child %d served %llu requests on %llu connections, "
                 "%llu bytes in, %llu out (2xx %llu, 3xx %llu, 4xx %llu, "
                 "5xx %llu); tls: %llu full, %llu resumed, %llu failed "
                 "handshakes", (int) pid,
                 (unsigned long long) sb->requests,
                 (unsigned long long) sb->accepted,
                 (unsigned long long) sb->bytes_in,
                 (unsigned long long) sb->bytes_out,
                 (unsigned long long) sb->status[2],
                 (unsigned long long) sb->status[3],
                 (unsigned long long) sb->status[4],
                 (unsigned long long) sb->status[5],
                 (unsigned long long) sb->tls_full,
                 (unsigned long long) sb->tls_resumed,
                 (unsigned long long) sb->tls_failed);
}


static void
gn_master_reaped(gn_int_t slot, pid_t pid, int status)
{
    gn_process_t  *p = &gn_processes[slot];
    gn_msec_t      now, lived, delay;
    gn_uint_t      crashed;

    now = gn_process_msec();
    lived = now - p->started;

    crashed = WIFSIGNALED(status) || (WIFEXITED(status)
                                      && WEXITSTATUS(status) != 0);

    if (WIFSIGNALED(status)) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, 0,
                     "child %d exited on signal %d%s", (int) pid,
                     WTERMSIG(status),
                     WCOREDUMP(status) ? " (core dumped)" : "");
    } else if (crashed) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, 0,
                     "child %d exited with code %d", (int) pid,
                     WEXITSTATUS(status));
    } else {
        gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0,
                     "child %d exited with code 0", (int) pid);
    }

    gn_master_log_counters(slot, pid);

    /* once: waitpid() returns a pid once, and p->pid is cleared here */
    gn_scoreboard_fold(slot);
    p->pid = 0;

    if (p->exiting || gn_master_state != GN_MASTER_RUNNING
        || p->generation != gn_generation)
    {
        return;
    }

    /* A child of the current generation died: replace it. */
    p->fails = (crashed && lived < GN_RESPAWN_QUICK) ? p->fails + 1 : 0;
    delay = 0;
    if (p->fails > 1) {
        delay = gn_min((gn_msec_t) 100 << gn_min(p->fails - 2, 10),
                       GN_RESPAWN_MAX_DELAY);
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, 0,
                     "child in slot %d died %u times in a row, respawning "
                     "in %llu ms", (int) slot, (unsigned) p->fails,
                     (unsigned long long) delay);
    }

    gn_scoreboard_set(slot, GN_SB_STARTING);       /* keep the slot */
    p->respawn_at = now + delay;
    if (p->respawn_at == 0) {
        p->respawn_at = 1;
    }
}


/* ---- binary upgrade ---------------------------------------------------- */

/*
 * USR2 (gannetctl upgrade), as nginx: the pid file becomes PID.oldbin and
 * a new master runs the binary at the path this one was started from
 * (installed over it, say), with the same -c and -p, the listening
 * sockets passed as LISTEN_FDS from descriptor 3 (listen.c takes them
 * over), and GANNET_UPGRADE set, so that it stays our child instead of
 * daemonising. It writes the pid file once its configuration is open
 * and its sockets taken; this master goes on serving until it is told
 * to stop (QUIT: its children finish what they hold). If the new master
 * exits first (its configuration does not load, it cannot start), the
 * pid file is ours again and the failure is logged: nothing changed for
 * the clients.
 *
 * The shared-memory zones (shm.c: the TLS session cache, the default
 * ticket key, the memcached counters) follow as memfds in GANNET_ZONES,
 * so sessions resume across the upgrade, and so does the scoreboard: the
 * new master makes its own and reads the old one's totals until the old
 * master and its children are gone, then folds them in (scoreboard.h).
 */

void
gn_master_self_exe(void)
{
    ssize_t  n;

    n = readlink("/proc/self/exe", gn_self_exe, sizeof(gn_self_exe) - 1);
    gn_self_exe[n > 0 ? n : 0] = '\0';
}


static void
gn_master_pid_paths(char *cur, char *old, size_t size)
{
    snprintf(cur, size, "%s", (char *) gn_cycle->main->pid.data);
    snprintf(old, size, "%s.oldbin", (char *) gn_cycle->main->pid.data);
}


/* In the forked process: the sockets to 3 ..., then exec. */
static void
gn_master_exec_new(void)
{
    gn_listen_t  *ls = gn_cycle->listening.elts;
    gn_uint_t     i, n = 0;
    sigset_t      none;
    char          num[32], pid[32];
    char         *argv[8];
    int           tmp[64], k;

    for (i = 0; i < gn_cycle->listening.nelts && n < 64; i++) {
        if (ls[i].fd == -1) {
            continue;
        }
        /* out of the way of 3 ... first, then into place */
        tmp[n] = fcntl(ls[i].fd, F_DUPFD_CLOEXEC, 3 + 64);
        if (tmp[n] == -1) {
            _exit(71);
        }
        n++;
    }

    /* the shared-memory zones after them (GANNET_ZONES), copied before
     * the sockets go into place: a zone's own descriptor (the
     * scoreboard's, made first) may be one that dup2() replaces */
    if (gn_shm_pass(3 + (int) n) != GN_OK) {
        _exit(71);
    }

    for (i = 0; i < n; i++) {
        if (dup2(tmp[i], 3 + (int) i) == -1) {       /* not close-on-exec */
            _exit(71);
        }
    }

    snprintf(num, sizeof(num), "%u", (unsigned) n);
    snprintf(pid, sizeof(pid), "%d", (int) getpid());
    if (setenv("LISTEN_FDS", num, 1) == -1
        || setenv("LISTEN_PID", pid, 1) == -1
        || setenv("GANNET_UPGRADE", "1", 1) == -1)
    {
        _exit(71);
    }

    k = 0;
    argv[k++] = gn_self_exe;
    argv[k++] = (char *) "-c";
    argv[k++] = (char *) gn_conf_path;
    if (gn_prefix != NULL) {
        argv[k++] = (char *) "-p";
        argv[k++] = (char *) gn_prefix;
    }
    argv[k] = NULL;

    sigemptyset(&none);
    (void) sigprocmask(SIG_SETMASK, &none, NULL);

    execv(gn_self_exe, argv);
    _exit(127);
}


static void
gn_master_upgrade(void)
{
    char   cur[PATH_MAX], old[PATH_MAX + 8];
    pid_t  pid;

    if (gn_upgrade_pid != 0) {
        gn_log_error(GN_LOG_WARN, &gn_cycle->log, 0, "SIGUSR2 ignored: the "
                     "binary upgrade to master %d is under way",
                     (int) gn_upgrade_pid);
        return;
    }
    if (gn_pid_renamed) {
        gn_log_error(GN_LOG_WARN, &gn_cycle->log, 0, "SIGUSR2 ignored: this "
                     "master was replaced already");
        return;
    }
    if (gn_scoreboard_absorb() != GN_OK) {
        /* its totals are read from its scoreboard until it is gone: a
         * third master would not be handed them */
        gn_log_error(GN_LOG_WARN, &gn_cycle->log, 0, "SIGUSR2 ignored: "
                     "the master this one replaced, or a child of it, "
                     "still runs");
        return;
    }
    if (gn_self_exe[0] == '\0') {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, 0, "SIGUSR2 ignored: the "
                     "path of this binary is not known");
        return;
    }

    gn_master_pid_paths(cur, old, sizeof(cur));
    if (rename(cur, old) == -1) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, errno, "binary upgrade "
                     "not started: rename() \"%s\" to \"%s\" failed", cur,
                     old);
        return;
    }
    gn_pid_renamed = 1;

    pid = fork();
    if (pid == -1) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, errno, "binary upgrade "
                     "not started: fork() failed");
        (void) rename(old, cur);
        gn_pid_renamed = 0;
        return;
    }
    if (pid == 0) {
        gn_master_exec_new();
    }

    gn_upgrade_pid = pid;
    gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0, "binary upgrade: new "
                 "master %d runs %s; this one serves until it is stopped",
                 (int) pid, gn_self_exe);
}


/* The new master exited: if it never took over, the pid file is ours. */
static void
gn_master_upgrade_reaped(int status)
{
    char   cur[PATH_MAX], old[PATH_MAX + 8];

    gn_master_pid_paths(cur, old, sizeof(cur));
    gn_upgrade_pid = 0;

    if (WIFEXITED(status)) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, 0, "binary upgrade "
                     "failed: the new master exited with code %d (see its "
                     "messages above or on its stderr); this master (pid "
                     "%d) goes on", WEXITSTATUS(status), (int) getpid());
    } else {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, 0, "binary upgrade "
                     "failed: the new master exited on signal %d; this "
                     "master (pid %d) goes on", WTERMSIG(status),
                     (int) getpid());
    }

    /* under systemd it may have made itself the main process: back */
    (void) gn_sd_notify("MAINPID=%d\nREADY=1\nSTATUS=binary upgrade "
                        "failed, serving on", (int) getpid());

    /* its pid file, if it wrote one, is stale: ours replaces it */
    if (rename(old, cur) == -1) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, errno, "rename() \"%s\" "
                     "to \"%s\" failed", old, cur);
        return;
    }
    gn_pid_renamed = 0;
}


gn_uint_t
gn_master_pid_file_is_ours(void)
{
    return !gn_pid_renamed;
}


static void
gn_master_reap(void)
{
    pid_t     pid;
    int       status;
    gn_int_t  i;

    for ( ;; ) {
        pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) {
            return;
        }

        if (pid == gn_upgrade_pid) {
            gn_master_upgrade_reaped(status);
            continue;
        }

        for (i = 0; i < GN_SB_SLOTS; i++) {
            if (gn_processes[i].pid == pid) {
                gn_master_reaped(i, pid, status);
                break;
            }
        }
    }
}


static void
gn_master_respawn_due(void)
{
    gn_msec_t  now;
    gn_int_t   i;

    now = gn_process_msec();

    for (i = 0; i < GN_SB_SLOTS; i++) {
        if (gn_processes[i].respawn_at == 0
            || gn_processes[i].respawn_at > now)
        {
            continue;
        }

        gn_processes[i].respawn_at = 0;

        if (gn_master_state != GN_MASTER_RUNNING
            || gn_processes[i].generation != gn_generation)
        {
            gn_scoreboard_set(i, GN_SB_FREE);
            continue;
        }

        if (gn_process_spawn(gn_cycle, i, gn_generation, gn_child_run)
            == -1)
        {
            gn_processes[i].respawn_at = now + 1000;
        }
    }
}


gn_int_t
gn_master_check_chroot(gn_cycle_t *cycle, gn_log_t *log)
{
    if (cycle->main->chroot.len == 0 || gn_caps_have(CAP_SYS_CHROOT)) {
        return GN_OK;
    }

    gn_log_error(GN_LOG_EMERG, log, 0, "\"chroot %.*s\" needs a master "
                 "started as root with \"chroot\" in its configuration "
                 "(CAP_SYS_CHROOT is not kept otherwise): restart to "
                 "enable it", GN_STR_ARG(&cycle->main->chroot));
    return GN_ERROR;
}


gn_int_t
gn_master_restrict(gn_cycle_t *cycle)
{
    const char  *failed;

    if (gn_caps_restrict(gn_caps_master_needs(cycle->main->chroot.len != 0),
                         &failed) != GN_OK)
    {
        gn_log_error(GN_LOG_EMERG, &cycle->log, errno, "%s failed", failed);
        return GN_ERROR;
    }

    return GN_OK;
}


/*
 * rlimit_nofile: the descriptor limit the children inherit (nginx's
 * worker_rlimit_nofile), set in the master before they are forked. Root
 * raises the hard limit too (needs CAP_SYS_RESOURCE; refused, it gets the
 * hard limit); anyone else gets at most the hard limit.
 * Then a warning when what a child may hold at once -- its connections,
 * its open-file cache, the listeners and the log files and a few of its
 * own -- exceeds the limit it will have.
 */
void
gn_master_rlimit(gn_cycle_t *cycle)
{
    struct rlimit     rl;
    gn_main_conf_t   *mc = cycle->main;
    gn_file_conf_t   *fcf;
    gn_uint_t         files, need;
    rlim_t            want, hard;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
        gn_log_error(GN_LOG_ALERT, &cycle->log, errno,
                     "getrlimit(RLIMIT_NOFILE) failed");
        return;
    }

    if (mc->rlimit_nofile != GN_CONF_UNSET) {
        want = (rlim_t) mc->rlimit_nofile;
        hard = rl.rlim_max;
        if (geteuid() == 0 && want > rl.rlim_max) {
            rl.rlim_max = want;
        } else if (want > rl.rlim_max) {
            gn_log_error(GN_LOG_WARN, &cycle->log, 0, "rlimit_nofile %lu is "
                         "above the hard limit %lu, which only root may "
                         "raise: using %lu", (unsigned long) want,
                         (unsigned long) rl.rlim_max,
                         (unsigned long) rl.rlim_max);
            want = rl.rlim_max;
        }
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
            gn_log_error(GN_LOG_ERR, &cycle->log, errno,
                         "setrlimit(RLIMIT_NOFILE, %lu) failed",
                         (unsigned long) want);
            if (rl.rlim_max > hard) {       /* root without the capability */
                rl.rlim_max = hard;
                rl.rlim_cur = hard;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
            }
        }
        (void) getrlimit(RLIMIT_NOFILE, &rl);
    }

    fcf = gn_file_conf(cycle->main_loc);
    files = fcf->file_cache ? (gn_uint_t) fcf->file_cache_entries : 0;
    need = (gn_uint_t) mc->max_connections + files + cycle->listening.nelts
           + cycle->open_files.nelts + GN_MASTER_FD_RESERVED;
    if (rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur) {
        gn_log_error(GN_LOG_WARN, &cycle->log, 0, "max_connections %u + "
                     "file_cache_entries %u + %u listeners + %u reserved = "
                     "%u exceed the descriptor limit %lu of a child; raise "
                     "rlimit_nofile", (unsigned) mc->max_connections,
                     (unsigned) files, (unsigned) cycle->listening.nelts,
                     (unsigned) (cycle->open_files.nelts
                                 + GN_MASTER_FD_RESERVED),
                     (unsigned) need, (unsigned long) rl.rlim_cur);
    }
}


/* New children of a new generation, then the old ones drain: the
 * listening sockets are shared, so nothing is refused in between. */
static void
gn_master_replace_children(gn_cycle_t *cycle)
{
    gn_generation++;
    gn_sb->generation = gn_generation;

    gn_master_spawn_generation(cycle);
    gn_master_signal_children(SIGQUIT, 1);
}


static void
gn_master_reopen(void)
{
    gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0, "reopening logs");
    gn_cycle_reopen(gn_cycle, geteuid() == 0 ? gn_cycle->main->uid
                                                   : (uid_t) -1);
    gn_log_default.fd = gn_cycle->log.fd;

    if (gn_cycle->main->chroot.len == 0) {
        gn_master_signal_children(SIGUSR1, 0);
        return;
    }

    /* chrooted children cannot open the logs by name: new ones inherit
     * the reopened files, the old ones finish their requests */
    gn_master_replace_children(gn_cycle);
}


uint64_t
gn_master_wall_msec(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}


void
gn_master_verdict_path(const char *pid_file, char *buf, size_t size)
{
    snprintf(buf, size, "%s.reload", pid_file);
}


gn_int_t
gn_master_verdict_read(const char *path, uint64_t *start_ms, gn_uint_t *ok,
    char *msg, size_t size)
{
    char                buf[1280], word[8];
    unsigned long long  t;
    ssize_t             n;
    int                 fd, at;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return GN_ERROR;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return GN_ERROR;
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';

    at = 0;
    /* SEQ (for a person reading the file) START_MS ok|failed TEXT */
    if (sscanf(buf, "%*u %llu %7s %n", &t, word, &at) != 2 || at == 0) {
        return GN_ERROR;
    }

    *start_ms = t;
    *ok = strcmp(word, "ok") == 0;
    snprintf(msg, size, "%s", buf + at);
    return GN_OK;
}


/* Replaces the verdict file (see master.h): write, then rename. */
static void
gn_master_verdict(uint64_t start_ms, gn_uint_t ok, const char *msg)
{
    static uint64_t  seq;
    char             path[PATH_MAX], tmp[PATH_MAX + 8], line[1280];
    int              fd, n;

    gn_master_verdict_path((char *) gn_cycle->main->pid.data, path,
                           sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);

    n = snprintf(line, sizeof(line), "%llu %llu %s %s\n",
                 (unsigned long long) ++seq, (unsigned long long) start_ms,
                 ok ? "ok" : "failed", msg);
    n = gn_min(n, (int) sizeof(line) - 1);

    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1 || write(fd, line, (size_t) n) != n || close(fd) == -1
        || rename(tmp, path) == -1)
    {
        gn_log_error(GN_LOG_WARN, &gn_cycle->log, errno, "cannot write the "
                     "reload verdict to \"%s\"", path);
        (void) unlink(tmp);
    }
}


static void
gn_master_reload(void)
{
    gn_cycle_t  *cycle, *old;
    char         err[1024], why[1024], gen[32];
    uint64_t     start_ms;

    start_ms = gn_master_wall_msec();
    why[0] = '\0';
    gn_log_capture = why;
    gn_log_capture_size = sizeof(why);

    gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0, "reloading configuration");
    (void) gn_sd_notify("RELOADING=1\nSTATUS=reloading");

    cycle = gn_cycle_create(gn_conf_path, gn_prefix, err, sizeof(err));
    if (cycle == NULL) {
        gn_log_error(GN_LOG_EMERG, &gn_cycle->log, 0, "%s", err);
        goto failed;
    }

    if (gn_master_check_chroot(cycle, &gn_cycle->log) != GN_OK
        || gn_cycle_open(cycle, gn_cycle, &gn_cycle->log) != GN_OK)
    {
        gn_cycle_destroy(cycle);
        goto failed;
    }

    old = gn_cycle;
    gn_cycle = cycle;

    if (gn_module_init_master(cycle, &old->log) != GN_OK) {
        gn_cycle = old;
        gn_listen_close_unused(cycle, old);
        gn_cycle_destroy(cycle);
        goto failed;
    }
    gn_log_default.fd = cycle->log.fd;
    gn_log_default.level = cycle->log.level;

    gn_master_rlimit(cycle);
    gn_master_replace_children(cycle);

    gn_cycle_release(old, cycle);

    gn_log_error(GN_LOG_NOTICE, &cycle->log, 0,
                 "reload complete, generation %u", (unsigned) gn_generation);
    gn_log_capture = NULL;
    snprintf(gen, sizeof(gen), "%u", (unsigned) gn_generation);
    gn_master_verdict(start_ms, 1, gen);
    (void) gn_sd_notify("READY=1\nSTATUS=serving, generation %u",
                        (unsigned) gn_generation);
    return;

failed:

    gn_log_capture = NULL;
    gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0,
                 "reload failed, still running the previous configuration");
    gn_master_verdict(start_ms, 0, why[0] ? why : "(see the error log)");
    (void) gn_sd_notify("READY=1\nSTATUS=reload failed, serving "
                        "generation %u", (unsigned) gn_generation);
}


static void
gn_master_stop(int signo)
{
    /* Stopping: nothing new may be accepted. The children close their
     * copies when they get the signal; closing ours makes the kernel
     * refuse new connections instead of queueing them for nobody. */
    gn_listen_close_unused(gn_cycle, NULL);

    /* a master a binary upgrade replaced is no longer the service's: its
     * end is not the service's (sd_notify.h) */
    if (gn_master_state == GN_MASTER_RUNNING && gn_upgrade_pid == 0) {
        (void) gn_sd_notify("STOPPING=1");
    }

    if (signo == SIGQUIT) {
        if (gn_master_state != GN_MASTER_RUNNING) {
            return;
        }
        gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0,
                     "gracefully shutting down");
        gn_master_state = GN_MASTER_STOPPING;
        gn_stop_deadline = gn_process_msec()
                           + gn_cycle->main->shutdown_timeout + 2000;
        gn_master_signal_children(SIGQUIT, 0);
        return;
    }

    if (gn_master_state == GN_MASTER_TERMINATING) {
        return;
    }
    gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0, "shutting down");
    gn_master_state = GN_MASTER_TERMINATING;
    gn_stop_deadline = gn_process_msec() + GN_STOP_KILL_AFTER;
    gn_master_signal_children(SIGTERM, 0);
}


static long
gn_master_timeout(void)
{
    gn_msec_t  now, next;
    gn_int_t   i;

    now = gn_process_msec();
    next = now + 1000;

    for (i = 0; i < GN_SB_SLOTS; i++) {
        if (gn_processes[i].respawn_at && gn_processes[i].respawn_at < next) {
            next = gn_processes[i].respawn_at;
        }
    }

    if (gn_master_state != GN_MASTER_RUNNING && gn_stop_deadline < next) {
        next = gn_stop_deadline;
    }

    return next > now ? (long) (next - now) : 0;
}


int
gn_master_run(const char *conf_file, const char *prefix)
{
    sigset_t         set;
    siginfo_t        info;
    struct timespec  ts;
    long             ms;
    int              signo;

    gn_conf_path = conf_file;
    gn_prefix = prefix;
    gn_generation = 1;
    gn_sb->generation = gn_generation;

    gn_process_title_set("gannet: master process");

    gn_master_signal_set(&set);

    gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0,
                 "gannet/%s started, %u children", PACKAGE_VERSION,
                 (unsigned) gn_cycle->children);

    gn_master_spawn_generation(gn_cycle);

    /* MAINPID: after a binary upgrade, this master is the service's now */
    (void) gn_sd_notify("READY=1\nMAINPID=%d\nSTATUS=serving, %u "
                        "children", (int) getpid(),
                        (unsigned) gn_cycle->children);

    for ( ;; ) {
        ms = gn_master_timeout();
        ts.tv_sec = ms / 1000;
        ts.tv_nsec = (ms % 1000) * 1000000;

        signo = sigtimedwait(&set, &info, &ts);

        switch (signo) {
        case SIGHUP:
            if (gn_master_state == GN_MASTER_RUNNING) {
                gn_master_reload();
            } else {
                gn_master_verdict(gn_master_wall_msec(), 0, "[notice] not "
                                  "reloaded: the server is shutting down");
            }
            break;
        case SIGQUIT:
        case SIGTERM:
        case SIGINT:
            gn_master_stop(signo);
            break;
        case SIGUSR1:
            gn_master_reopen();
            break;
        case SIGUSR2:
            if (gn_master_state == GN_MASTER_RUNNING) {
                gn_master_upgrade();
            }
            break;
        default:
            break;
        }

        gn_master_reap();
        gn_master_respawn_due();
        (void) gn_scoreboard_absorb();

        if (gn_master_state == GN_MASTER_RUNNING) {
            continue;
        }

        if (gn_master_live_children() == 0) {
            gn_tls_log_stats(gn_cycle);
            gn_log_error(GN_LOG_NOTICE, &gn_cycle->log, 0, "exiting");
            return 0;
        }

        if (gn_process_msec() >= gn_stop_deadline && !gn_stop_killed) {
            gn_log_error(GN_LOG_ALERT, &gn_cycle->log, 0,
                         "children did not exit in time, killing them");
            gn_master_signal_children(SIGKILL, 0);
            gn_stop_killed = 1;
        }
    }
}
