/*
 * gannet: command line, configuration test, signalling a running master,
 * and start-up (open everything, daemonise, write the pid file, hand over
 * to the master loop).
 */

#include "gn_config.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include <gnutls/gnutls.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#if (GN_HAVE_HTTP2)
#include <nghttp2/nghttp2.h>
#endif

#include "cycle.h"
#include "log.h"
#include "master.h"
#include "listen.h"
#include "process.h"
#include "scoreboard.h"
#include "shm.h"
#include "module.h"
#include "str.h"


typedef struct {
    const char  *conf;
    const char  *prefix;
    const char  *signal;
    unsigned     foreground:1;
    unsigned     test:2;       /* 1: -t, 2: -T (and dump) */
    unsigned     version:2;    /* 1: -v, 2: -V or --version */
    unsigned     help:1;
} gn_options_t;


static void
gn_usage(FILE *f)
{
    fprintf(f,
        "Usage: gannet [-c FILE] [-p PREFIX] [-f] [-t|-T] [-s SIGNAL] [-v|-V]\n"
        "              [-h]\n"
        "\n"
        "  -c FILE    configuration file (default: %s/gannet/gannet.conf)\n"
        "  -p PREFIX  prefix for relative paths (default: %s); the default\n"
        "             pid file, logs and root are then logs/gannet.pid,\n"
        "             logs/error.log, logs/access.log and html under it\n"
        "  -f         stay in the foreground\n"
        "  -t         test the configuration and exit\n"
        "  -T         test the configuration, print it (includes too) and\n"
        "             exit\n"
        "  -s SIGNAL  send SIGNAL to the master: stop, quit, reload, reopen,\n"
        "             upgrade; or `status`: exit 0 if running, 3 if not\n"
        "  -v         show the version, then exit\n"
        "  -V, --version\n"
        "             show the version, the build and the configure\n"
        "             arguments, then exit\n"
        "  -h         show this help\n",
        GN_SYSCONFDIR, GN_PREFIX);
}


static int
gn_parse_options(int argc, char **argv, gn_options_t *o)
{
    int    i;
    char  *p;

    for (i = 1; i < argc; i++) {
        p = argv[i];
        if (strcmp(p, "--version") == 0) {
            o->version = 2;
            continue;
        }
        if (p[0] != '-' || p[1] == '\0' || p[2] != '\0') {
            gn_log_stderr(0, "invalid option: \"%s\"", p);
            return GN_ERROR;
        }

        switch (p[1]) {
        case 'f': o->foreground = 1; break;
        case 't': o->test = 1; break;
        case 'T': o->test = 2; break;
        case 'v': o->version = 1; break;
        case 'V': o->version = 2; break;
        case 'h': o->help = 1; break;
        case 'c':
        case 'p':
        case 's':
            if (i + 1 >= argc) {
                gn_log_stderr(0, "option \"-%c\" requires an argument", p[1]);
                return GN_ERROR;
            }
            if (p[1] == 'c') {
                o->conf = argv[++i];
            } else if (p[1] == 'p') {
                o->prefix = argv[++i];
            } else {
                o->signal = argv[++i];
            }
            break;
        default:
            gn_log_stderr(0, "invalid option: \"%s\"", p);
            return GN_ERROR;
        }
    }

    return GN_OK;
}


/* -v: the version line (nginx's -v); -V, --version (full 2): the build
 * too, configure arguments included (nginx's -V). */
/* gannet -T: the configuration files as they were read, printed once
 * the test succeeded (as nginx -T). */
static u_char  *gn_dump_buf;
static size_t   gn_dump_len;
static size_t   gn_dump_cap;


static void
gn_dump_file(const char *name, const u_char *text, size_t len)
{
    u_char  *p;
    size_t   n;

    n = strlen(name) + len + 32;
    if (gn_str_reserve(&gn_dump_buf, &gn_dump_cap, gn_dump_len + n, 4096)
        != GN_OK)
    {
        return;                             /* a shorter dump, no harm */
    }

    p = gn_dump_buf;
    gn_dump_len += (size_t) snprintf((char *) p + gn_dump_len, n,
                                     "# configuration file %s:\n", name);
    memcpy(p + gn_dump_len, text, len);
    gn_dump_len += len;
    if (len > 0 && text[len - 1] != '\n') {
        p[gn_dump_len++] = '\n';
    }
    p[gn_dump_len++] = '\n';
}


static void
gn_show_version(gn_uint_t full)
{
    const gn_cycle_paths_t  *dp;

    printf("gannet version: gannet/%s\n", PACKAGE_VERSION);
    if (!full) {
        return;
    }
    printf("built with GnuTLS %s (running %s), PCRE2 %d.%d\n",
           GNUTLS_VERSION, gnutls_check_version(NULL), PCRE2_MAJOR,
           PCRE2_MINOR);
#if (GN_HAVE_HTTP2)
    printf("built with HTTP/2: libnghttp2 %s (running %s)\n",
           NGHTTP2_VERSION, nghttp2_version(0)->version_str);
#else
    printf("built without HTTP/2\n");
#endif
#if (GN_HAVE_IO_URING)
    printf("built with io_uring (batch_writes)\n");
#else
    printf("built without io_uring (batch_writes)\n");
#endif
#ifdef GN_ASAN
    printf("built with AddressSanitizer\n");
#endif
#ifdef GN_UBSAN
    printf("built with UndefinedBehaviorSanitizer\n");
#endif
    printf("module ABI %d.%d (entry symbol %s), modules in %s\n",
           GN_ABI_MAJOR, GN_ABI_MINOR, GN_MODULE_ENTRY_NAME, GN_PKGLIBDIR);
    printf("configure arguments:%s%s\n", GN_CONFIGURE_ARGS[0] ? " " : "",
           GN_CONFIGURE_ARGS);
    dp = gn_cycle_default_paths(0);
    printf("default paths (without -p): pid %s, error log %s, access log %s,"
           " root %s\n", dp->pid, dp->error_log, dp->access_log, dp->root);
}


/* The pid named by the pid file: >0, 0 when there is no file, -1 on a
 * bad file (reported). */
static pid_t
gn_read_pid(const char *path, gn_uint_t quiet_missing)
{
    char     buf[32];
    ssize_t  n;
    int      fd;
    long     pid;
    char    *end;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        if (errno == ENOENT && quiet_missing) {
            return 0;
        }
        gn_log_stderr(errno, "[error] open() \"%s\" failed", path);
        return -1;
    }

    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);

    if (n <= 0) {
        gn_log_stderr(0, "[error] invalid pid file \"%s\"", path);
        return -1;
    }

    buf[n] = '\0';
    pid = strtol(buf, &end, 10);
    if (pid <= 0 || (*end != '\n' && *end != '\0')) {
        gn_log_stderr(0, "[error] invalid pid number \"%.*s\" in \"%s\"",
                      (int) strcspn(buf, "\n"), buf, path);
        return -1;
    }

    return (pid_t) pid;
}


/* Is pid a live gannet master? (Not some process that reused the pid.)
 * Its title ("gannet: master process") is its argv[0], or, under a
 * wrapper such as valgrind, one argument is the gannet binary. An editor
 * of gannet.conf is none of these. */
static gn_uint_t
gn_pid_is_gannet(pid_t pid)
{
    char     path[64], buf[4096], *arg, *base;
    ssize_t  n;
    int      fd;

    if (kill(pid, 0) == -1 && errno == ESRCH) {
        return 0;
    }

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int) pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return 1;                    /* no /proc: trust kill() */
    }

    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return 0;                    /* a zombie */
    }
    buf[n] = '\0';

    if (strncmp(buf, "gannet", 6) == 0) {
        return 1;                    /* the title */
    }

    for (arg = buf; arg < buf + n; arg += strlen(arg) + 1) {
        base = strrchr(arg, '/');
        base = base ? base + 1 : arg;
        if (strcmp(base, "gannet") == 0) {
            return 1;
        }
    }

    return 0;
}


/*
 * -s reload: signals the master and waits for the verdict of that reload
 * (master.h), so that a refused configuration is an exit status and a
 * message here, not only a line in the error log. Bounded by
 * GN_RELOAD_WAIT_SEC; the master writes the verdict as soon as the new
 * configuration is running or refused.
 */
#define GN_RELOAD_WAIT_SEC  60

static int
gn_reload_and_wait(const char *pidfile, pid_t pid)
{
    char             path[PATH_MAX], msg[1280];
    uint64_t         start, t0;
    gn_uint_t        ok, waited;
    struct timespec  tick = { 0, 20 * 1000000 };

    /* the verdict of this signal's reload: one that started after it (a
     * reload under way now, or an old file, started before) */
    gn_master_verdict_path(pidfile, path, sizeof(path));
    t0 = gn_master_wall_msec();

    if (kill(pid, SIGHUP) == -1) {
        gn_log_stderr(errno, "[error] kill(%d, SIGHUP) failed", (int) pid);
        return 1;
    }

    for (waited = 0; waited < GN_RELOAD_WAIT_SEC * 50; waited++) {
        if (gn_master_verdict_read(path, &start, &ok, msg, sizeof(msg))
                == GN_OK
            && start >= t0)
        {
            if (ok) {
                gn_log_stderr(0, "reloaded (pid %d, generation %s)",
                              (int) pid, msg);
                return 0;
            }
            gn_log_stderr(0, "%s", msg);
            gn_log_stderr(0, "reload failed, the server (pid %d) still runs "
                          "the previous configuration", (int) pid);
            return 1;
        }

        if (!gn_pid_is_gannet(pid)) {
            gn_log_stderr(0, "[error] the server (pid %d) exited", (int) pid);
            return 1;
        }

        (void) nanosleep(&tick, NULL);
    }

    gn_log_stderr(0, "[error] no verdict from the server (pid %d) on the "
                  "reload within %d s (see its error log)", (int) pid,
                  GN_RELOAD_WAIT_SEC);
    return 1;
}


/*
 * -s upgrade: USR2, then the outcome (master.c): the pid file names a
 * new master that has started children while PIDFILE.oldbin names this
 * one (done: the old master is left for the caller to stop), or PIDFILE names the old master again
 * and there is no .oldbin (the new one failed; its reason is in the
 * error log). Bounded by GN_UPGRADE_WAIT_SEC.
 */
#define GN_UPGRADE_WAIT_SEC  30

/* Whether pid has a child that is not a zombie (/proc; without it, yes:
 * the pid file alone is what can be told). */
static gn_uint_t
gn_has_child(pid_t pid)
{
    struct dirent  *de;
    char            path[300], buf[512], *p;
    ssize_t         n;
    DIR            *d;
    int             fd, ppid, found = 0;

    d = opendir("/proc");
    if (d == NULL) {
        return 1;
    }
    while (!found && (de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9') {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd == -1) {
            continue;
        }
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        buf[n > 0 ? n : 0] = '\0';
        /* pid (comm) state ppid ...: comm may hold spaces and parens */
        p = strrchr(buf, ')');
        if (p != NULL && sscanf(p + 1, " %*c %d", &ppid) == 1
            && ppid == (int) pid && p[2] != 'Z')
        {
            found = 1;
        }
    }
    closedir(d);

    return found;
}


static int
gn_upgrade_and_wait(const char *pidfile, pid_t pid)
{
    struct timespec  tick = { 0, 20 * 1000000 };
    char             oldbin[PATH_MAX + 8];
    gn_uint_t        waited, moved;
    pid_t            now;

    snprintf(oldbin, sizeof(oldbin), "%s.oldbin", pidfile);
    if (access(oldbin, F_OK) == 0) {
        gn_log_stderr(0, "[error] %s exists: an upgrade is under way, or "
                      "its old master was not stopped", oldbin);
        return 1;
    }

    if (kill(pid, SIGUSR2) == -1) {
        gn_log_stderr(errno, "[error] kill(%d, SIGUSR2) failed", (int) pid);
        return 1;
    }

    moved = 0;
    for (waited = 0; waited < GN_UPGRADE_WAIT_SEC * 50; waited++) {
        (void) nanosleep(&tick, NULL);

        if (access(oldbin, F_OK) == 0) {
            moved = 1;                  /* the old master renamed it */
            now = gn_read_pid(pidfile, 1);
            /* its children started: the old master may go */
            if (now > 0 && now != pid && gn_pid_is_gannet(now)
                && gn_has_child(now))
            {
                gn_log_stderr(0, "upgraded: new master pid %d, old master "
                              "pid %d (stop it with QUIT when the new one "
                              "serves)", (int) now, (int) pid);
                return 0;
            }
            continue;
        }

        if (!gn_pid_is_gannet(pid)) {
            gn_log_stderr(0, "[error] the server (pid %d) exited", (int) pid);
            return 1;
        }
        if (moved || waited >= 5 * 50) {
            /* renamed back (or never renamed: SIGUSR2 refused) */
            gn_log_stderr(0, "upgrade failed, the server (pid %d) still "
                          "runs the old binary (see its error log)",
                          (int) pid);
            return 1;
        }
    }

    gn_log_stderr(0, "[error] the new master did not start within %d s; "
                  "the server (pid %d) still runs (see its error log)",
                  GN_UPGRADE_WAIT_SEC, (int) pid);
    return 1;
}


static int
gn_send_signal(const char *pidfile, const char *name)
{
    const gn_process_signal_t  *s;
    pid_t                      pid;

    for (s = gn_process_signals; s->signo != 0; s++) {
        if (s->name != NULL && strcmp(s->name, name) == 0) {
            break;
        }
    }

    if (s->signo == 0 && strcmp(name, "status") != 0) {
        gn_log_stderr(0, "invalid signal \"%s\", expected stop, quit, "
                      "reload, reopen, upgrade or status", name);
        return 1;
    }

    if (s->signo == 0) {                                /* status */
        pid = gn_read_pid(pidfile, 1);
        if (pid > 0 && gn_pid_is_gannet(pid)) {
            gn_log_stderr(0, "running, pid %d", (int) pid);
            return 0;
        }
        if (pid > 0) {
            gn_log_stderr(0, "not running (stale pid file %s)", pidfile);
        } else {
            gn_log_stderr(0, "not running");
        }
        return 3;
    }

    pid = gn_read_pid(pidfile, 0);
    if (pid <= 0) {
        return 1;
    }

    if (s->signo == SIGHUP) {
        return gn_reload_and_wait(pidfile, pid);
    }
    if (s->signo == SIGUSR2) {
        return gn_upgrade_and_wait(pidfile, pid);
    }

    if (kill(pid, s->signo) == -1) {
        gn_log_stderr(errno, "[error] kill(%d, %d) failed", (int) pid,
                      s->signo);
        return 1;
    }

    return 0;
}


static gn_int_t
gn_write_pid(const char *path)
{
    char  buf[32];
    int   fd, n;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1) {
        gn_log_error(GN_LOG_EMERG, NULL, errno, "open() \"%s\" failed", path);
        return GN_ERROR;
    }

    n = snprintf(buf, sizeof(buf), "%d\n", (int) getpid());
    if (write(fd, buf, (size_t) n) != n) {
        gn_log_error(GN_LOG_EMERG, NULL, errno, "write() to \"%s\" failed",
                     path);
        close(fd);
        return GN_ERROR;
    }

    close(fd);
    return GN_OK;
}


/* Detaches from the terminal. The parent exits 0 once the child is
 * running (everything that can fail at start-up has been checked). */
static gn_int_t
gn_daemonize(void)
{
    pid_t  pid;
    int    fd;

    pid = fork();
    if (pid == -1) {
        gn_log_stderr(errno, "[emerg] fork() failed");
        return GN_ERROR;
    }
    if (pid > 0) {
        _exit(0);
    }

    if (setsid() == -1) {
        gn_log_stderr(errno, "[emerg] setsid() failed");
        return GN_ERROR;
    }

    pid = fork();
    if (pid == -1) {
        return GN_ERROR;
    }
    if (pid > 0) {
        _exit(0);
    }

    umask(022);

    fd = open("/dev/null", O_RDWR);
    if (fd != -1) {
        (void) dup2(fd, 0);
        (void) dup2(fd, 1);
        (void) dup2(fd, 2);
        if (fd > 2) {
            close(fd);
        }
    }

    return GN_OK;
}


static int
gn_start(gn_cycle_t *cycle, const gn_options_t *o, const char *conf,
    const char *prefix)
{
    const char  *pidfile = (const char *) cycle->main->pid.data;
    pid_t        pid;
    int          rc, upgrade;
    char         verdict[PATH_MAX], oldbin[PATH_MAX + 8];

    /* started by a master's binary upgrade: its child, not a daemon */
    upgrade = getenv("GANNET_UPGRADE") != NULL;
    (void) unsetenv("GANNET_UPGRADE");
    gn_master_self_exe();

    pid = gn_read_pid(pidfile, 1);
    if (pid > 0 && gn_pid_is_gannet(pid) && pid != getpid()) {
        gn_log_stderr(0, "[emerg] already running (pid %d, pid file %s)",
                      (int) pid, pidfile);
        return 1;
    }

    gn_master_block_signals();

    if (gn_master_check_chroot(cycle, &gn_log_default) != GN_OK) {
        return 1;
    }

    gn_listen_inherit(&gn_log_default);
    gn_shm_inherit(&gn_log_default);

    if (gn_scoreboard_init() != GN_OK) {
        return 1;
    }

    if (gn_cycle_open(cycle, NULL, &gn_log_default) != GN_OK) {
        return 1;
    }
    gn_shm_inherited_close();

    gn_cycle = cycle;

    if (gn_module_init_master(cycle, &gn_log_default) != GN_OK) {
        return 1;
    }

    if (!o->foreground && !upgrade && gn_daemonize() != GN_OK) {
        return 1;
    }

    gn_sb->master_pid = (uint64_t) getpid();
    gn_log_default.fd = cycle->log.fd;
    gn_log_default.level = cycle->log.level;

    if (pid > 0) {
        gn_log_error(GN_LOG_NOTICE, &cycle->log, 0,
                     "removing stale pid file %s (pid %d)", pidfile,
                     (int) pid);
    }

    gn_master_rlimit(cycle);            /* while the master may raise it */

    if (gn_write_pid(pidfile) != GN_OK || gn_master_restrict(cycle) != GN_OK) {
        return 1;
    }

    rc = gn_master_run(conf, prefix);

    /* after a binary upgrade the pid file and the verdict are the new
     * master's: only the .oldbin is ours */
    snprintf(oldbin, sizeof(oldbin), "%s.oldbin",
             (char *) gn_cycle->main->pid.data);
    pidfile = gn_master_pid_file_is_ours()
              ? (const char *) gn_cycle->main->pid.data : oldbin;
    if (unlink(pidfile) == -1) {
        gn_log_error(GN_LOG_ALERT, &gn_cycle->log, errno,
                     "unlink() \"%s\" failed", pidfile);
    }
    if (gn_master_pid_file_is_ours()) {
        gn_master_verdict_path((char *) gn_cycle->main->pid.data, verdict,
                               sizeof(verdict));
        (void) unlink(verdict);
    }

    return rc;
}


/* copies of -c and -p: the process title later overwrites the argv
 * strings, and every reload reads these paths again; no -p: NULL, the
 * installed layout (gn_cycle_create) */
static char  *gn_conf_file;
static char  *gn_prefix_path;


/*
 * -s with a configuration that does not load (an edit in progress): the
 * running server must still be found, to stop it, ask its status or
 * reopen its logs. Its pid file is the main-level `pid` a scan of the
 * file finds (nothing else of it needs to be right), else the default.
 * A reload is refused: the master would refuse that configuration too.
 */
static int
gn_signal_unloadable(const char *name, const char *err)
{
    char      pidfile[PATH_MAX];
    gn_int_t  rc;

    if (strcmp(name, "reload") == 0) {
        gn_log_stderr(0, "[emerg] %s", err);
        gn_log_stderr(0, "not reloading: the configuration file %s does not "
                      "load", gn_conf_file);
        return 1;
    }

    rc = gn_cycle_find_pid(gn_conf_file, gn_prefix_path, pidfile,
                           sizeof(pidfile));
    if (rc == GN_ERROR) {
        gn_log_stderr(0, "[emerg] %s", err);
        return 1;
    }

    gn_log_stderr(0, "[warn] the configuration does not load: %s", err);
    gn_log_stderr(0, "[warn] using the pid file %s (%s)", pidfile,
                  rc == GN_OK ? "its \"pid\" directive" : "the default");

    return gn_send_signal(pidfile, name);
}


int
main(int argc, char **argv)
{
    gn_options_t   o;
    gn_cycle_t    *cycle;
    int            rc;
    char           err[1024];

    memset(&o, 0, sizeof(o));

    if (gn_parse_options(argc, argv, &o) != GN_OK) {
        gn_usage(stderr);
        return 1;
    }

    if (o.help) {
        gn_usage(stdout);
        return 0;
    }

    if (o.version) {
        gn_show_version(o.version == 2);
        return 0;
    }

    gn_conf_file = strdup(o.conf ? o.conf
                                 : GN_SYSCONFDIR "/gannet/gannet.conf");
    gn_prefix_path = o.prefix ? strdup(o.prefix) : NULL;
    if (gn_conf_file == NULL || (o.prefix != NULL && gn_prefix_path == NULL)) {
        gn_log_stderr(errno, "[emerg] strdup() failed");
        return 1;
    }

    gn_process_title_init(argc, argv);

    if (o.test == 2) {
        gn_conf_dump = gn_dump_file;
    }

    cycle = gn_cycle_create(gn_conf_file, gn_prefix_path, err, sizeof(err));
    gn_conf_dump = NULL;

    if (cycle == NULL) {
        free(gn_dump_buf);
        if (o.signal != NULL && !o.test) {
            return gn_signal_unloadable(o.signal, err);
        }
        gn_log_stderr(0, "[emerg] %s", err);
        if (o.test) {
            gn_log_stderr(0, "configuration file %s test failed",
                          gn_conf_file);
        }
        return 1;
    }

    if (o.test || o.signal != NULL) {
        if (o.test) {
            gn_log_stderr(0, "the configuration file %s syntax is ok",
                          gn_conf_file);
            gn_log_stderr(0, "configuration file %s test is successful",
                          gn_conf_file);
            if (gn_dump_buf != NULL) {
                (void) fwrite(gn_dump_buf, 1, gn_dump_len, stdout);
            }
            rc = 0;
        } else {
            rc = gn_send_signal((char *) cycle->main->pid.data, o.signal);
        }
        free(gn_dump_buf);
        gn_cycle_destroy(cycle);
        return rc;
    }

    return gn_start(cycle, &o, gn_conf_file, gn_prefix_path);
}
