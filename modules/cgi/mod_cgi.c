/*
 * mod_cgi: CGI/1.1 (RFC 3875) scripts, `handler cgi;`.
 *
 * Processes. Children run as the server's `user` and may not be allowed
 * to start processes as cgi_user, nor to kill them. So, as Apache's
 * mod_cgid does, init_master (root, before fork) starts a launcher
 * process that drops to cgi_user at once and then forks and execs every
 * script, in its own process group. The launcher is double-forked: it is
 * not one of the master's children (the master counts and signals
 * those), and it leaves by itself:
 *
 *   master --- shared SOCK_SEQPACKET socketpair (mfd) ---> launcher
 *   child  --- its own SOCK_SEQPACKET socketpair  -------> launcher
 *
 * Each child, in init_child, makes a socketpair of its own and sends one
 * end to the launcher over the shared socket (REGISTER, SCM_RIGHTS),
 * then closes its copy of the shared socket. From then on a child and
 * the launcher talk only on their private socket, so replies reach the
 * right child without any locking, and SEQPACKET keeps each message
 * whole. On that socket:
 *
 *   child -> launcher  SPAWN  id, strings (path, cwd, argv0, env...),
 *                             the script's stdin/stdout/stderr (3 fds)
 *                      KILL   id: SIGKILL to the script's process group
 *   launcher -> child  SPAWNED id, pid or -errno (fork/chdir/exec failed)
 *                      EXITED  id, wait status
 *
 * A child that exits or crashes closes its socket: the launcher kills
 * what that child still had running. The launcher exits when the shared
 * socket reaches EOF (the master exited, or reloaded: init_master then
 * closes the previous one) and no child is connected any more. It reaps
 * its scripts (signalfd SIGCHLD + waitpid loop) and reports them.
 * Without root, cgi_user is ignored and scripts run as the server user.
 *
 * A request. The handler finds the script (the longest existing regular
 * file prefix of the mapped path; the rest is PATH_INFO), builds a
 * scrubbed environment (PATH, cgi_pass_env, the RFC 3875 meta-variables,
 * HTTP_* without Proxy -- httpoxy -- and Authorization), makes three
 * non-blocking pipes and asks the launcher to run it. Nothing blocks the
 * child's loop: the body is streamed to the script's stdin as read_body
 * delivers it (buffered while the pipe is full); stdout is watched, its
 * CGI header (at most 8k) parsed, then the body streamed with write +
 * flush; stderr lines go to the error log. A chunked request body is
 * spooled first, as CONTENT_LENGTH must be known (RFC 3875 4.1.2).
 *
 * Choices:
 *   - Location with a local path ("/x"): RFC 3875 6.2.2 asks for an
 *     internal redirect, which ABI 1.0 cannot do: it is answered with a
 *     302 and that Location (a valid relative reference, RFC 7231 7.1.2).
 *   - nph-* scripts: refused with a 502 unless cgi_nph is on; with it on
 *     their status line and headers are honoured, but the server frames
 *     the response (ABI 1.0 has no raw write).
 *   - No argv from an indexed query (RFC 3875 4.4 "MAY"): argv is just
 *     the script's name (the PHP-CGI CVE-2012-1823 class of bugs).
 *   - Headers whose name has anything but letters, digits and '-' are
 *     not passed (an "X_Foo" could pose as "X-Foo"); repeated headers are
 *     joined with ", " ("; " for Cookie).
 *   - The script's exit is awaited (max 1 s) before a 502 for output
 *     that ended early, so that the log line says why.
 */

#define _GNU_SOURCE  1                  /* pipe2, MSG_CMSG_CLOEXEC */

#include <gannet/module.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>


#define GN_CGI_HEADER_MAX     8192
#define GN_CGI_MSG_MAX        (64 * 1024)
#define GN_CGI_SOCKBUF        (512 * 1024)
#define GN_CGI_READ_MAX       (1024 * 1024)   /* stdout bytes per event */
#define GN_CGI_STDERR_MAX     8192            /* logged per script */
#define GN_CGI_EXIT_WAIT      1000            /* ms, see "Choices" */
#define GN_CGI_EXIT_POLL      20
#define GN_CGI_PAUSE          5               /* ms, see gn_cgi_out_pause */
#define GN_CGI_PATH           "PATH=/usr/local/bin:/usr/bin:/bin"

#define GN_CGI_READY          1     /* launcher -> master, on mfd */
#define GN_CGI_REGISTER       2     /* child -> launcher, on mfd, 1 fd */
#define GN_CGI_SPAWN          3     /* child -> launcher, 3 fds */
#define GN_CGI_KILL           4
#define GN_CGI_SPAWNED        5     /* launcher -> child */
#define GN_CGI_EXITED         6

#define gn_cgi_nelems(a)      (sizeof(a) / sizeof((a)[0]))


typedef struct {
    uint32_t         type;
    uint32_t         nstr;          /* SPAWN: strings after the header */
    uint64_t         id;
    int64_t          value;         /* pid, -errno, wait status, errno */
} gn_cgi_msg_t;


typedef struct {
    int64_t          timeout;       /* ms */
    int64_t          max_processes;
    const char      *user;
    const char      *pass_env;
    int64_t          nph;
} gn_cgi_conf_t;


typedef struct gn_cgi_ctx_s  gn_cgi_ctx_t;

struct gn_cgi_ctx_s {
    gn_cgi_ctx_t    *next;
    gn_request_t    *r;             /* NULL once the request has ended */
    gn_cgi_conf_t   *conf;
    char            *script;        /* malloc'd: outlives the request */
    uint64_t         id;
    int64_t          pid;
    int              wstatus;
    int              spawn_err;

    unsigned         sent:1;        /* SPAWN went to the launcher */
    unsigned         slot:1;        /* counted in gn_cgi_nrunning */
    unsigned         exited:1;      /* nothing more will be reported */
    unsigned         killed:1;
    unsigned         headers:1;     /* CGI header parsed, body streaming */
    unsigned         nph:1;
    unsigned         body_last:1;
    unsigned         finished:1;    /* api->finish() called */

    int              out_fd;
    int              in_fd;
    int              err_fd;
    gn_watch_t      *out_w;
    gn_watch_t      *in_w;
    gn_watch_t      *err_w;
    gn_mtimer_t     *timer;
    gn_mtimer_t     *wait_t;
    gn_mtimer_t     *pause_t;       /* stdout paused: the client is slow */
    int              paused;        /* ... until on_drained or pause_t */
    int              waited;        /* ms waited for the exit status */

    unsigned char   *ibuf;          /* request body not yet in the pipe */
    size_t           ipos;
    size_t           ilen;
    size_t           isize;

    size_t           elen;
    size_t           elogged;
    char             ebuf[512];

    size_t           hparsed;       /* header lines checked so far */
    size_t           hlen;
    unsigned char    hbuf[GN_CGI_HEADER_MAX];
};


/* An outgoing message the socket could not take yet. */
typedef struct gn_cgi_out_s  gn_cgi_out_t;

struct gn_cgi_out_s {
    gn_cgi_out_t    *next;
    int              fds[3];
    int              nfds;
    size_t           len;
    unsigned char    data[];
};


/* The launcher's view of a child and of a script. */
typedef struct {
    int              fd;            /* -1: free */
} gn_cgi_client_t;

typedef struct {
    pid_t            pid;           /* 0: free */
    int              client;        /* -1: its child is gone */
    uint64_t         id;
} gn_cgi_proc_t;


extern const gn_module_t  gn_cgi_module;

static int              gn_cgi_mfd = -1;     /* shared socket, master end */
static int              gn_cgi_fd = -1;      /* this child's socket */
static gn_watch_t      *gn_cgi_watch;
static const gn_api_t  *gn_cgi_api;
static uint64_t         gn_cgi_last_id;
static int64_t          gn_cgi_nrunning;
static int64_t          gn_cgi_max = 16;
static gn_cgi_ctx_t    *gn_cgi_ctxs;
static gn_cgi_out_t    *gn_cgi_queue;
static unsigned char    gn_cgi_buf[65536];


static void gn_cgi_finish(gn_cgi_ctx_t *ctx, int status);
static void gn_cgi_send_kill(gn_cgi_ctx_t *ctx);


/* ---- messages ----------------------------------------------------------- */

/* Sends one message with up to 3 descriptors; -1 with errno on failure. */
static int
gn_cgi_sendmsg(int fd, const void *data, size_t len, const int *fds,
    int nfds, int flags)
{
    struct msghdr    mh;
    struct iovec     iov;
    struct cmsghdr  *cm;
    union {
        struct cmsghdr  align;
        char            buf[CMSG_SPACE(3 * sizeof(int))];
    } cbuf;
    ssize_t          n;

    memset(&mh, 0, sizeof(mh));
    iov.iov_base = (void *) data;
    iov.iov_len = len;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;

    if (nfds > 0) {
        memset(&cbuf, 0, sizeof(cbuf));
        mh.msg_control = cbuf.buf;
        mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    }

    do {
        n = sendmsg(fd, &mh, MSG_NOSIGNAL | flags);
    } while (n == -1 && errno == EINTR);

    return n == (ssize_t) len ? 0 : -1;
}


/* Receives one message and up to `*nfds` descriptors (close-on-exec);
 * extra or truncated ones are closed and make it a bad message (-1 with
 * EBADMSG). Returns the length, 0 at EOF, -1 with errno; `*nfds` is the
 * number received, 0 whenever -1 is returned. */
static ssize_t
gn_cgi_recvmsg(int fd, void *buf, size_t size, int *fds, int *nfds,
    int flags)
{
    struct msghdr    mh;
    struct iovec     iov;
    struct cmsghdr  *cm;
    union {
        struct cmsghdr  align;
        char            buf[CMSG_SPACE(4 * sizeof(int))];
    } cbuf;
    ssize_t          n;
    int              want, got, i, k, *p, bad;

    want = nfds ? *nfds : 0;
    got = 0;
    bad = 0;

    memset(&mh, 0, sizeof(mh));
    iov.iov_base = buf;
    iov.iov_len = size;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf.buf;
    mh.msg_controllen = sizeof(cbuf.buf);

    if (nfds) {
        *nfds = 0;              /* the caller closes *nfds of them */
    }

    do {
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | flags);
    } while (n == -1 && errno == EINTR);

    if (n == -1) {
        return -1;
    }

    for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        k = (int) ((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        p = (int *) CMSG_DATA(cm);
        for (i = 0; i < k; i++) {
            if (got < want) {
                fds[got++] = p[i];
            } else {
                close(p[i]);
                bad = 1;
            }
        }
    }

    if (nfds) {
        *nfds = got;
    }

    if (bad || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        for (i = 0; i < got; i++) {
            close(fds[i]);
        }
        if (nfds) {
            *nfds = 0;
        }
        errno = EBADMSG;
        return -1;
    }

    return n;
}


/* ---- the launcher (its own process, as cgi_user) ------------------------ */

static gn_cgi_client_t  *gn_cgi_clients;
static int               gn_cgi_nclients;      /* slots */
static gn_cgi_proc_t    *gn_cgi_procs;
static int               gn_cgi_nprocs;        /* slots */


static void
gn_cgi_launcher_reply(int client, int type, uint64_t id, int64_t value)
{
    gn_cgi_msg_t   m;
    struct pollfd  pfd;
    int            fd;

    if (client < 0 || (fd = gn_cgi_clients[client].fd) == -1) {
        return;
    }

    memset(&m, 0, sizeof(m));
    m.type = (uint32_t) type;
    m.id = id;
    m.value = value;

    if (gn_cgi_sendmsg(fd, &m, sizeof(m), NULL, 0, MSG_DONTWAIT) == 0) {
        return;
    }

    if (errno == EAGAIN) {
        /* a child reads its socket on every loop turn: wait a little */
        pfd.fd = fd;
        pfd.events = POLLOUT;
        if (poll(&pfd, 1, 1000) == 1
            && gn_cgi_sendmsg(fd, &m, sizeof(m), NULL, 0, MSG_DONTWAIT) == 0)
        {
            return;
        }
    }

    fprintf(stderr, "gannet cgi launcher: reply to a child failed: %s\n",
            strerror(errno));
}


static void
gn_cgi_launcher_kill(gn_cgi_proc_t *p)
{
    (void) kill(-p->pid, SIGKILL);
    (void) kill(p->pid, SIGKILL);
}


static void
gn_cgi_launcher_client_gone(int client)
{
    int  i;

    close(gn_cgi_clients[client].fd);
    gn_cgi_clients[client].fd = -1;

    for (i = 0; i < gn_cgi_nprocs; i++) {
        if (gn_cgi_procs[i].pid != 0 && gn_cgi_procs[i].client == client) {
            gn_cgi_launcher_kill(&gn_cgi_procs[i]);
            gn_cgi_procs[i].client = -1;
        }
    }
}


static void
gn_cgi_launcher_add_client(int fd)
{
    gn_cgi_client_t  *c;
    int               i;

    for (i = 0; i < gn_cgi_nclients; i++) {
        if (gn_cgi_clients[i].fd == -1) {
            gn_cgi_clients[i].fd = fd;
            return;
        }
    }

    c = realloc(gn_cgi_clients, (gn_cgi_nclients + 16) * sizeof(*c));
    if (c == NULL) {
        close(fd);
        return;
    }

    gn_cgi_clients = c;
    for (i = gn_cgi_nclients; i < gn_cgi_nclients + 16; i++) {
        c[i].fd = -1;
    }
    c[gn_cgi_nclients].fd = fd;
    gn_cgi_nclients += 16;
}


static gn_cgi_proc_t *
gn_cgi_launcher_add_proc(void)
{
    gn_cgi_proc_t  *p;
    int             i;

    for (i = 0; i < gn_cgi_nprocs; i++) {
        if (gn_cgi_procs[i].pid == 0) {
            return &gn_cgi_procs[i];
        }
    }

    p = realloc(gn_cgi_procs, (gn_cgi_nprocs + 64) * sizeof(*p));
    if (p == NULL) {
        return NULL;
    }

    memset(p + gn_cgi_nprocs, 0, 64 * sizeof(*p));
    gn_cgi_procs = p;
    gn_cgi_nprocs += 64;

    return &p[gn_cgi_nprocs - 64];
}


/* In the forked script: never returns. */
static void
gn_cgi_launcher_exec(char **str, uint32_t nstr, int *fds, int errfd)
{
    char      *argv[2];
    sigset_t   set;
    int        i, err;

    (void) setpgid(0, 0);

    for (i = 1; i < NSIG; i++) {
        (void) signal(i, SIG_DFL);
    }
    sigemptyset(&set);
    (void) sigprocmask(SIG_SETMASK, &set, NULL);

    for (i = 0; i < 3; i++) {
        if (dup2(fds[i], i) == -1) {
            goto failed;
        }
    }

    if (chdir(str[1]) == -1) {
        goto failed;
    }

    argv[0] = str[2];
    argv[1] = NULL;
    str[nstr] = NULL;               /* the env array ends there */

    execve(str[0], argv, &str[3]);

failed:

    err = errno;
    (void) write(errfd, &err, sizeof(err));
    _exit(127);
}


static void
gn_cgi_launcher_spawn(int client, gn_cgi_msg_t *m, size_t len, int *fds)
{
    char           **str, *p, *end;
    uint32_t         i;
    int              ep[2], err;
    ssize_t          n;
    pid_t            pid;
    gn_cgi_proc_t   *proc;

    str = NULL;
    err = EINVAL;

    if (m->nstr < 3 || m->nstr > GN_CGI_MSG_MAX / 2) {
        goto failed;
    }

    str = malloc((m->nstr + 1) * sizeof(char *));
    if (str == NULL) {
        err = ENOMEM;
        goto failed;
    }

    p = (char *) (m + 1);
    end = (char *) m + len;
    for (i = 0; i < m->nstr; i++) {
        str[i] = p;
        p = memchr(p, '\0', end - p);
        if (p == NULL) {
            goto failed;
        }
        p++;
    }

    proc = gn_cgi_launcher_add_proc();
    if (proc == NULL || pipe2(ep, O_CLOEXEC) == -1) {
        err = ENOMEM;
        goto failed;
    }

    pid = fork();
    if (pid == 0) {
        close(ep[0]);
        gn_cgi_launcher_exec(str, m->nstr, fds, ep[1]);
    }

    err = errno;
    close(ep[1]);

    if (pid == -1) {
        close(ep[0]);
        goto failed;
    }

    (void) setpgid(pid, pid);       /* both sides try: no race */

    do {
        n = read(ep[0], &err, sizeof(err));
    } while (n == -1 && errno == EINTR);
    close(ep[0]);

    if (n > 0) {
        (void) waitpid(pid, NULL, 0);
        goto failed;
    }

    proc->pid = pid;
    proc->client = client;
    proc->id = m->id;

    free(str);
    for (i = 0; i < 3; i++) {
        close(fds[i]);
    }

    gn_cgi_launcher_reply(client, GN_CGI_SPAWNED, m->id, pid);
    return;

failed:

    free(str);
    for (i = 0; i < 3; i++) {
        close(fds[i]);
    }
    gn_cgi_launcher_reply(client, GN_CGI_SPAWNED, m->id, -(int64_t) err);
}


static void
gn_cgi_launcher_request(int client)
{
    static uint64_t   buf[(sizeof(gn_cgi_msg_t) + GN_CGI_MSG_MAX) / 8 + 1];
    gn_cgi_msg_t     *m = (gn_cgi_msg_t *) buf;
    ssize_t           n;
    int               fds[3], nfds, i;

    nfds = 3;
    n = gn_cgi_recvmsg(gn_cgi_clients[client].fd, buf, sizeof(buf), fds,
                       &nfds, 0);
    if (n == 0 || (n == -1 && errno != EAGAIN && errno != EBADMSG)) {
        gn_cgi_launcher_client_gone(client);
        return;
    }

    if (n < (ssize_t) sizeof(gn_cgi_msg_t)) {
        for (i = 0; i < nfds; i++) {
            close(fds[i]);
        }
        return;
    }

    if (m->type == GN_CGI_SPAWN && nfds == 3) {
        gn_cgi_launcher_spawn(client, m, (size_t) n, fds);
        return;
    }

    for (i = 0; i < nfds; i++) {
        close(fds[i]);
    }

    if (m->type == GN_CGI_SPAWN) {
        gn_cgi_launcher_reply(client, GN_CGI_SPAWNED, m->id, -EINVAL);
        return;
    }

    if (m->type == GN_CGI_KILL) {
        for (i = 0; i < gn_cgi_nprocs; i++) {
            if (gn_cgi_procs[i].pid != 0 && gn_cgi_procs[i].client == client
                && gn_cgi_procs[i].id == m->id)
            {
                gn_cgi_launcher_kill(&gn_cgi_procs[i]);
            }
        }
    }
}


static void
gn_cgi_launcher_reap(int sfd)
{
    struct signalfd_siginfo  si;
    pid_t                    pid;
    int                      st, i;

    while (read(sfd, &si, sizeof(si)) > 0) {
        /* drained: waitpid below finds every exited script */
    }

    for ( ;; ) {
        pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0) {
            return;
        }

        for (i = 0; i < gn_cgi_nprocs; i++) {
            if (gn_cgi_procs[i].pid == pid) {
                gn_cgi_launcher_reply(gn_cgi_procs[i].client, GN_CGI_EXITED,
                                      gn_cgi_procs[i].id, st);
                gn_cgi_procs[i].pid = 0;
                break;
            }
        }
    }
}


/* Closes every descriptor but `keep` and 0-2 (which end up open). */
static void
gn_cgi_launcher_close_fds(int keep)
{
    DIR            *d;
    struct dirent  *de;
    int             fd, nfd, fds[1024], i;

    do {
        nfd = 0;
        d = opendir("/proc/self/fd");
        if (d == NULL) {
            for (fd = 3; fd < 65536; fd++) {
                if (fd != keep) {
                    (void) close(fd);
                }
            }
            break;
        }
        while ((de = readdir(d)) != NULL && nfd < (int) gn_cgi_nelems(fds)) {
            fd = atoi(de->d_name);
            if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && fd > 2
                && fd != keep && fd != dirfd(d))
            {
                fds[nfd++] = fd;
            }
        }
        closedir(d);
        for (i = 0; i < nfd; i++) {
            (void) close(fds[i]);
        }
    } while (nfd == (int) gn_cgi_nelems(fds));

    for (fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) == -1) {
            nfd = open("/dev/null", O_RDWR);
            if (nfd != -1 && nfd != fd) {
                (void) dup2(nfd, fd);
                close(nfd);
            }
        }
    }

    nfd = open("/dev/null", O_RDWR);
    if (nfd != -1) {
        (void) dup2(nfd, 0);
        (void) dup2(nfd, 1);        /* stderr stays: the server's */
        if (nfd > 2) {
            close(nfd);
        }
    }
}


/* Drops to cgi_user; fills err and returns -1 on failure. */
static int
gn_cgi_launcher_drop(const char *user, uid_t uid, gid_t gid, char *err,
    size_t size)
{
    if (initgroups(user, gid) == -1 && setgroups(1, &gid) == -1) {
        snprintf(err, size, "setgroups(%u) failed: %s", (unsigned) gid,
                 strerror(errno));
        return -1;
    }

    if (setgid(gid) == -1) {
        snprintf(err, size, "setgid(%u) failed: %s", (unsigned) gid,
                 strerror(errno));
        return -1;
    }

    if (setuid(uid) == -1) {
        snprintf(err, size, "setuid(%u) failed: %s", (unsigned) uid,
                 strerror(errno));
        return -1;
    }

    if (uid != 0 && setuid(0) == 0) {
        snprintf(err, size, "setuid(%u) did not drop root", (unsigned) uid);
        return -1;
    }

    return 0;
}


static void __attribute__((noreturn))
gn_cgi_launcher(int mfd, int drop, const char *user, uid_t uid, gid_t gid)
{
    struct {
        gn_cgi_msg_t     m;
        char             text[256];
    } ready;
    struct pollfd       *pfd;
    sigset_t             set;
    int                  sfd, i, n, fd, nfds, npoll;
    gn_cgi_msg_t         m;

    (void) prctl(PR_SET_NAME, "gannet-cgi", 0, 0, 0);

    for (i = 1; i < NSIG; i++) {
        (void) signal(i, SIG_DFL);
    }
    (void) signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    (void) sigprocmask(SIG_SETMASK, &set, NULL);

    gn_cgi_launcher_close_fds(mfd);

    memset(&ready, 0, sizeof(ready));
    ready.m.type = GN_CGI_READY;

    sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sfd == -1) {
        ready.m.value = errno;
        snprintf(ready.text, sizeof(ready.text), "signalfd() failed: %s",
                 strerror(errno));

    } else if (drop) {
        if (gn_cgi_launcher_drop(user, uid, gid, ready.text,
                                 sizeof(ready.text)) == -1)
        {
            ready.m.value = errno ? errno : EPERM;
        }
    }

    (void) gn_cgi_sendmsg(mfd, &ready, sizeof(ready), NULL, 0, 0);
    if (ready.m.value != 0) {
        _exit(1);
    }

    pfd = NULL;

    for ( ;; ) {
        free(pfd);
        pfd = calloc(gn_cgi_nclients + 2, sizeof(struct pollfd));
        if (pfd == NULL) {
            sleep(1);
            continue;
        }

        pfd[0].fd = sfd;
        pfd[0].events = POLLIN;
        pfd[1].fd = mfd;
        pfd[1].events = POLLIN;
        n = 0;
        for (i = 0; i < gn_cgi_nclients; i++) {
            pfd[i + 2].fd = gn_cgi_clients[i].fd;
            pfd[i + 2].events = POLLIN;
            n += gn_cgi_clients[i].fd != -1;
        }

        if (mfd == -1 && n == 0) {
            break;
        }

        /* a REGISTER below may grow gn_cgi_clients: pfd stays this size */
        npoll = gn_cgi_nclients;

        if (poll(pfd, npoll + 2, -1) == -1) {
            continue;
        }

        if (pfd[0].revents) {
            gn_cgi_launcher_reap(sfd);
        }

        if (pfd[1].revents) {
            nfds = 1;
            n = (int) gn_cgi_recvmsg(mfd, &m, sizeof(m), &fd, &nfds,
                                     MSG_DONTWAIT);
            if (n == 0 || (n == -1 && errno != EAGAIN && errno != EBADMSG)) {
                close(mfd);         /* the master exited or reloaded */
                mfd = -1;

            } else if (n > 0 && nfds == 1) {
                if (m.type == GN_CGI_REGISTER) {
                    gn_cgi_launcher_add_client(fd);
                } else {
                    close(fd);
                }
            }
        }

        for (i = 0; i < npoll; i++) {
            if (pfd[i + 2].fd != -1 && pfd[i + 2].revents
                && gn_cgi_clients[i].fd == pfd[i + 2].fd)
            {
                gn_cgi_launcher_request(i);
            }
        }
    }

    /* valgrind's leak check runs at _exit() too: free what we hold */
    free(pfd);
    free(gn_cgi_clients);

    for (i = 0; i < gn_cgi_nprocs; i++) {
        if (gn_cgi_procs[i].pid != 0) {
            gn_cgi_launcher_kill(&gn_cgi_procs[i]);
        }
    }
    free(gn_cgi_procs);

    _exit(0);
}


/* ---- process hooks ------------------------------------------------------- */

/* Every level of a configuration just read (gannet -t, start, reload):
 * what init_master would refuse later, said with the directive's line. */
static int
gn_cgi_check_conf(const gn_api_t *api, void *data, int level)
{
    gn_cgi_conf_t  *conf = data;

    if (level != GN_CTX_MAIN) {
        return GN_OK;                   /* both are main-level only */
    }

    if (conf->max_processes < 1 || conf->max_processes > 65536) {
        return api->conf_error("cgi_max_processes", "must be from 1 to "
                               "65536, not %lld",
                               (long long) conf->max_processes);
    }

    /* scripts run as cgi_user only when the server starts as root */
    if (geteuid() == 0 && conf->user != NULL && getpwnam(conf->user) == NULL)
    {
        return api->conf_error("cgi_user", "names a user that does not "
                               "exist: \"%s\"", conf->user);
    }

    return GN_OK;
}


/* Master, before fork: starts the launcher and waits for it to report
 * that it runs as cgi_user. */
static int
gn_cgi_init_master(const gn_api_t *api, void *data)
{
    gn_cgi_conf_t   *conf = data;
    struct passwd   *pw;
    struct pollfd    pfd;
    const char      *user;
    uid_t            uid;
    gid_t            gid;
    pid_t            pid;
    int              sv[2], drop, st;
    ssize_t          n;
    struct {
        gn_cgi_msg_t     m;
        char             text[256];
    } ready;

    if (gn_cgi_mfd != -1) {
        close(gn_cgi_mfd);          /* the previous generation's launcher */
        gn_cgi_mfd = -1;
    }

    user = conf->user ? conf->user : "nobody";
    uid = 0;
    gid = 0;
    drop = geteuid() == 0;

    if (drop) {
        pw = getpwnam(user);
        if (pw == NULL) {
            api->log(NULL, GN_LOG_EMERG, "cgi: cgi_user \"%s\" does not exist",
                     user);
            return GN_ERROR;
        }
        uid = pw->pw_uid;
        gid = pw->pw_gid;
        if (uid == 0) {
            api->log(NULL, GN_LOG_WARN, "cgi: scripts run as root "
                     "(cgi_user \"%s\")", user);
        }
    }

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
        api->log(NULL, GN_LOG_EMERG, "cgi: socketpair() failed: %s",
                 strerror(errno));
        return GN_ERROR;
    }

    pid = fork();
    if (pid == -1) {
        api->log(NULL, GN_LOG_EMERG, "cgi: fork() failed: %s",
                 strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return GN_ERROR;
    }

    if (pid == 0) {
        close(sv[0]);
        pid = fork();
        if (pid != 0) {
            _exit(pid == -1);
        }
        gn_cgi_launcher(sv[1], drop, user, uid, gid);
    }

    close(sv[1]);
    while (waitpid(pid, &st, 0) == -1 && errno == EINTR) {
        /* the intermediate process exits at once */
    }

    pfd.fd = sv[0];
    pfd.events = POLLIN;
    memset(&ready, 0, sizeof(ready));
    n = -1;

    if (poll(&pfd, 1, 10000) == 1) {
        n = gn_cgi_recvmsg(sv[0], &ready, sizeof(ready), NULL, NULL,
                           MSG_DONTWAIT);
    }

    if (n < (ssize_t) sizeof(gn_cgi_msg_t) || ready.m.type != GN_CGI_READY
        || ready.m.value != 0)
    {
        ready.text[sizeof(ready.text) - 1] = '\0';
        api->log(NULL, GN_LOG_EMERG, "cgi: the launcher did not start%s%s",
                 ready.text[0] ? ": " : "", ready.text);
        close(sv[0]);
        return GN_ERROR;
    }

    gn_cgi_mfd = sv[0];

    return GN_OK;
}


/* Child: registers a private socket with the launcher. */
static int
gn_cgi_init_child(const gn_api_t *api, void *data)
{
    gn_cgi_conf_t  *conf = data;
    gn_cgi_msg_t    m;
    int             sv[2], size;

    gn_cgi_api = api;
    gn_cgi_max = conf->max_processes > 0 ? conf->max_processes : 16;

    if (gn_cgi_mfd == -1) {
        api->log(NULL, GN_LOG_ERR, "cgi: no launcher, CGI requests get 503");
        return GN_OK;
    }

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
        api->log(NULL, GN_LOG_ALERT, "cgi: socketpair() failed: %s",
                 strerror(errno));
        goto done;
    }

    size = GN_CGI_SOCKBUF;
    (void) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    (void) setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));

    memset(&m, 0, sizeof(m));
    m.type = GN_CGI_REGISTER;

    if (gn_cgi_sendmsg(gn_cgi_mfd, &m, sizeof(m), &sv[1], 1, 0) == -1) {
        api->log(NULL, GN_LOG_ALERT, "cgi: cannot reach the launcher: %s",
                 strerror(errno));
        close(sv[0]);
        close(sv[1]);
        goto done;
    }

    close(sv[1]);

    if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == -1) {
        close(sv[0]);
        goto done;
    }

    gn_cgi_fd = sv[0];

done:

    /* only the master keeps the shared socket: its EOF tells the
     * launcher that the master is gone */
    close(gn_cgi_mfd);
    gn_cgi_mfd = -1;

    return GN_OK;
}


static void
gn_cgi_exit_child(const gn_api_t *api)
{
    if (gn_cgi_watch != NULL) {
        api->unwatch(gn_cgi_watch);
        gn_cgi_watch = NULL;
    }

    if (gn_cgi_fd != -1) {
        close(gn_cgi_fd);           /* the launcher kills what is left */
        gn_cgi_fd = -1;
    }
}


/* ---- the child's side of the launcher socket ---------------------------- */

static gn_cgi_ctx_t *
gn_cgi_ctx_find(uint64_t id)
{
    gn_cgi_ctx_t  *ctx;

    for (ctx = gn_cgi_ctxs; ctx != NULL; ctx = ctx->next) {
        if (ctx->id == id) {
            return ctx;
        }
    }

    return NULL;
}


static void
gn_cgi_close(int *fd)
{
    if (*fd != -1) {
        close(*fd);
        *fd = -1;
    }
}


/* Frees a context once both its request and its script are over. */
static void
gn_cgi_ctx_release(gn_cgi_ctx_t *ctx)
{
    gn_cgi_ctx_t  **pp;

    if (ctx->r != NULL || !ctx->exited) {
        return;
    }

    for (pp = &gn_cgi_ctxs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == ctx) {
            *pp = ctx->next;
            break;
        }
    }

    gn_cgi_close(&ctx->out_fd);
    gn_cgi_close(&ctx->in_fd);
    gn_cgi_close(&ctx->err_fd);
    free(ctx->ibuf);
    free(ctx->script);
    free(ctx);
}


/*
 * A script holds a cgi_max_processes slot until it exits or its request
 * ends, whichever comes first: at the end of the request a script that
 * is still there is killed (gn_cgi_cleanup). The launcher's EXITED may
 * come later than the end of the response (a busy machine, valgrind);
 * waiting for it made the next request of a client that had read its
 * whole answer get a 503.
 */
static void
gn_cgi_slot_free(gn_cgi_ctx_t *ctx)
{
    if (ctx->slot) {
        ctx->slot = 0;
        gn_cgi_nrunning--;
    }
}


static void
gn_cgi_script_over(gn_cgi_ctx_t *ctx)
{
    if (!ctx->exited) {
        ctx->exited = 1;
        gn_cgi_slot_free(ctx);
    }
}


static void
gn_cgi_launcher_lost(const char *why)
{
    gn_cgi_ctx_t  *ctx, *next;

    gn_cgi_api->log(NULL, GN_LOG_ALERT, "cgi: lost the launcher (%s), CGI "
                    "requests get 503 until this child is replaced", why);

    if (gn_cgi_watch != NULL) {
        gn_cgi_api->unwatch(gn_cgi_watch);
        gn_cgi_watch = NULL;
    }
    gn_cgi_close(&gn_cgi_fd);

    while (gn_cgi_queue != NULL) {
        gn_cgi_out_t  *q = gn_cgi_queue;

        gn_cgi_queue = q->next;
        while (q->nfds > 0) {
            close(q->fds[--q->nfds]);
        }
        free(q);
    }

    for (ctx = gn_cgi_ctxs; ctx != NULL; ctx = next) {
        next = ctx->next;
        if (!ctx->exited) {
            ctx->wstatus = -1;
            gn_cgi_script_over(ctx);
        }
        gn_cgi_ctx_release(ctx);
    }
}


static void
gn_cgi_queue_flush(void)
{
    gn_cgi_out_t  *q;

    while ((q = gn_cgi_queue) != NULL) {
        if (gn_cgi_sendmsg(gn_cgi_fd, q->data, q->len, q->fds, q->nfds,
                           MSG_DONTWAIT) == -1)
        {
            if (errno == EAGAIN) {
                return;
            }
            gn_cgi_launcher_lost(strerror(errno));
            return;
        }

        gn_cgi_queue = q->next;
        while (q->nfds > 0) {
            close(q->fds[--q->nfds]);
        }
        free(q);
    }

    if (gn_cgi_watch != NULL) {
        (void) gn_cgi_api->watch_update(gn_cgi_watch, GN_WATCH_READ);
    }
}


static void
gn_cgi_launcher_msg(gn_cgi_msg_t *m)
{
    gn_cgi_ctx_t  *ctx;
    int            st;

    ctx = gn_cgi_ctx_find(m->id);
    if (ctx == NULL || ctx->exited) {
        return;
    }

    if (m->type == GN_CGI_SPAWNED) {
        if (m->value > 0) {
            ctx->pid = m->value;
            return;
        }
        ctx->spawn_err = (int) -m->value;
        gn_cgi_script_over(ctx);
        gn_cgi_ctx_release(ctx);
        return;
    }

    if (m->type != GN_CGI_EXITED) {
        return;
    }

    st = (int) m->value;
    ctx->wstatus = st;
    gn_cgi_script_over(ctx);

    if (ctx->r != NULL && ctx->headers && !ctx->killed
        && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
    {
        gn_cgi_api->log(ctx->r, GN_LOG_WARN, "cgi: \"%s\" %s %d after its "
                        "response header", ctx->script,
                        WIFEXITED(st) ? "exited with status"
                                      : "was killed by signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }

    gn_cgi_ctx_release(ctx);
}


/* Not tied to a request: touches no request, only marks contexts (their
 * own watches and timers act on what it records). */
static void
gn_cgi_launcher_event(const gn_api_t *api, gn_watch_t *w, int fd,
    int events, void *arg)
{
    gn_cgi_msg_t  m;
    ssize_t       n;

    (void) api;
    (void) w;
    (void) arg;

    if (events & GN_WATCH_WRITE) {
        gn_cgi_queue_flush();
        if (gn_cgi_fd == -1) {
            return;
        }
    }

    for ( ;; ) {
        n = gn_cgi_recvmsg(fd, &m, sizeof(m), NULL, NULL, MSG_DONTWAIT);
        if (n == -1 && errno == EAGAIN) {
            return;
        }
        if (n == 0 || (n == -1 && errno != EBADMSG)) {
            gn_cgi_launcher_lost(n == 0 ? "it exited" : strerror(errno));
            return;
        }
        if (n == (ssize_t) sizeof(m)) {
            gn_cgi_launcher_msg(&m);
        }
    }
}


/* Sends (or queues) one message; the descriptors are closed once sent. */
static int
gn_cgi_send(const void *data, size_t len, int *fds, int nfds)
{
    gn_cgi_out_t  *q, **pp;
    int            i;

    if (gn_cgi_fd == -1) {
        goto failed;
    }

    if (gn_cgi_watch == NULL) {
        gn_cgi_watch = gn_cgi_api->watch_fd(NULL, gn_cgi_fd, GN_WATCH_READ,
                                            gn_cgi_launcher_event, NULL);
        if (gn_cgi_watch == NULL) {
            goto failed;
        }
    }

    if (gn_cgi_queue == NULL) {
        if (gn_cgi_sendmsg(gn_cgi_fd, data, len, fds, nfds, MSG_DONTWAIT)
            == 0)
        {
            for (i = 0; i < nfds; i++) {
                close(fds[i]);
            }
            return GN_OK;
        }
        if (errno != EAGAIN) {
            goto failed;
        }
    }

    q = malloc(sizeof(gn_cgi_out_t) + len);
    if (q == NULL) {
        goto failed;
    }

    q->next = NULL;
    q->len = len;
    q->nfds = nfds;
    memcpy(q->fds, fds, nfds * sizeof(int));
    memcpy(q->data, data, len);

    for (pp = &gn_cgi_queue; *pp != NULL; pp = &(*pp)->next) {
        /* to the end */
    }
    *pp = q;

    (void) gn_cgi_api->watch_update(gn_cgi_watch,
                                    GN_WATCH_READ | GN_WATCH_WRITE);
    return GN_OK;

failed:

    for (i = 0; i < nfds; i++) {
        close(fds[i]);
    }
    return GN_ERROR;
}


static void
gn_cgi_send_kill(gn_cgi_ctx_t *ctx)
{
    gn_cgi_msg_t  m;

    if (!ctx->sent || ctx->exited || ctx->killed) {
        return;
    }

    ctx->killed = 1;

    memset(&m, 0, sizeof(m));
    m.type = GN_CGI_KILL;
    m.id = ctx->id;
    (void) gn_cgi_send(&m, sizeof(m), NULL, 0);
}


/* ---- the request: finding the script ------------------------------------ */

/*
 * The script is the mapped path, or its longest prefix ending before a
 * '/' that is an existing regular file: /cgi/t.cgi/extra/path gives
 * SCRIPT_NAME /cgi/t.cgi and PATH_INFO /extra/path. Returns GN_OK, 403
 * or 404.
 */
static int
gn_cgi_find(const gn_api_t *api, gn_request_t *r, char **path,
    gn_str_t *script_name, gn_str_t *path_info, int *nph)
{
    gn_str_t      mapped, root, uri;
    struct stat   st;
    char         *p, *base;
    size_t        i, cut;

    mapped = api->mapped_path(r);
    root = api->document_root(r);
    uri = api->uri(r);

    if (mapped.len == 0 || memchr(mapped.data, '\0', mapped.len) != NULL) {
        return 404;
    }

    p = api->request_alloc(r, mapped.len + 1);
    if (p == NULL) {
        return GN_ERROR;
    }
    memcpy(p, mapped.data, mapped.len);
    p[mapped.len] = '\0';

    cut = mapped.len;

    if (stat(p, &st) == -1) {
        if (errno != ENOENT && errno != ENOTDIR) {
            return errno == EACCES ? 403 : 404;
        }

        for (i = mapped.len - 1; i > root.len; i--) {
            if (p[i] != '/') {
                continue;
            }
            p[i] = '\0';
            if (stat(p, &st) == 0) {
                cut = i;
                break;
            }
            p[i] = '/';
        }

        if (cut == mapped.len || !S_ISREG(st.st_mode)) {
            return 404;
        }
    }

    if (!S_ISREG(st.st_mode)) {
        api->log(r, GN_LOG_ERR, "cgi: \"%s\" is not a regular file", p);
        return 403;
    }

    if ((st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0
        || (geteuid() != 0 && access(p, X_OK) == -1))
    {
        api->log(r, GN_LOG_ERR, "cgi: \"%s\" is not executable", p);
        return 403;
    }

    path_info->len = mapped.len - cut;
    path_info->data = mapped.data + cut;

    if (uri.len < path_info->len
        || memcmp(uri.data + uri.len - path_info->len, path_info->data,
                  path_info->len) != 0)
    {
        return 404;
    }

    script_name->len = uri.len - path_info->len;
    script_name->data = uri.data;

    base = strrchr(p, '/');
    base = base ? base + 1 : p;
    *nph = strncmp(base, "nph-", 4) == 0;
    *path = p;

    return GN_OK;
}


/* ---- the request: the environment and the SPAWN message ------------------ */

typedef struct {
    unsigned char   *buf;
    size_t           len;
    uint32_t         n;
    int              full;
} gn_cgi_env_t;


static void
gn_cgi_env_raw(gn_cgi_env_t *e, const char *a, size_t alen,
    const unsigned char *b, size_t blen)
{
    if (e->full || e->len + alen + blen + 1 > GN_CGI_MSG_MAX) {
        e->full = 1;
        return;
    }

    memcpy(e->buf + e->len, a, alen);
    if (blen) {
        memcpy(e->buf + e->len + alen, b, blen);
    }
    e->len += alen + blen;
    e->buf[e->len++] = '\0';
    e->n++;
}


static void
gn_cgi_env_str(gn_cgi_env_t *e, const char *s)
{
    gn_cgi_env_raw(e, s, strlen(s), NULL, 0);
}


/* NAME=value; a value with a NUL in it is left out. */
static void
gn_cgi_env(gn_cgi_env_t *e, const char *name, gn_str_t v)
{
    char  n[64];
    int   k;

    if (v.len && memchr(v.data, '\0', v.len) != NULL) {
        return;
    }

    k = snprintf(n, sizeof(n), "%s=", name);
    gn_cgi_env_raw(e, n, (size_t) k, v.data, v.len);
}


static void
gn_cgi_env_var(gn_cgi_env_t *e, const gn_api_t *api, gn_request_t *r,
    const char *name)
{
    gn_cgi_env(e, name, api->variable(r, name));
}


static int
gn_cgi_header_skipped(const gn_str_t *name)
{
    static const char  *skip[] = {
        "Proxy",                    /* httpoxy: never HTTP_PROXY */
        "Authorization", "Proxy-Authorization",
        "Content-Length", "Content-Type"
    };
    size_t              i, k;

    for (i = 0; i < gn_cgi_nelems(skip); i++) {
        k = strlen(skip[i]);
        if (name->len == k && strncasecmp((char *) name->data, skip[i], k)
                              == 0)
        {
            return 1;
        }
    }

    for (i = 0; i < name->len; i++) {
        if (!(name->data[i] == '-'
              || (name->data[i] >= '0' && name->data[i] <= '9')
              || ((name->data[i] | 0x20) >= 'a'
                  && (name->data[i] | 0x20) <= 'z')))
        {
            return 1;
        }
    }

    return name->len == 0 || name->len > 200;
}


static int
gn_cgi_name_eq(const gn_str_t *a, const gn_str_t *b)
{
    return a->len == b->len
           && strncasecmp((char *) a->data, (char *) b->data, a->len) == 0;
}


/* HTTP_*: each name once, repeated headers joined. */
static void
gn_cgi_env_headers(gn_cgi_env_t *e, const gn_api_t *api, gn_request_t *r)
{
    gn_str_t        name, value, n2, v2;
    size_t          i, j, k, len;
    int             dup;
    char            key[256];
    unsigned char  *v;

    for (i = 0; api->header_next(r, &i, &name, &value); ) {
        if (gn_cgi_header_skipped(&name)) {
            continue;
        }

        dup = 0;
        len = value.len;
        for (j = 0; api->header_next(r, &j, &n2, &v2); ) {
            if (j < i && gn_cgi_name_eq(&name, &n2)) {
                dup = 1;
                break;
            }
            if (j > i && gn_cgi_name_eq(&name, &n2)) {
                len += 2 + v2.len;
            }
        }
        if (dup) {
            continue;
        }

        memcpy(key, "HTTP_", 5);
        for (k = 0; k < name.len; k++) {
            key[5 + k] = name.data[k] == '-' ? '_'
                         : (char) (name.data[k] >= 'a' && name.data[k] <= 'z'
                                   ? name.data[k] - 0x20 : name.data[k]);
        }
        key[5 + name.len] = '\0';

        if (len == value.len) {
            gn_cgi_env(e, key, value);
            continue;
        }

        v = api->request_alloc(r, len);
        if (v == NULL) {
            e->full = 1;
            return;
        }

        memcpy(v, value.data, value.len);
        k = value.len;
        for (j = 0; api->header_next(r, &j, &n2, &v2); ) {
            if (j > i && gn_cgi_name_eq(&name, &n2)) {
                v[k++] = strcmp(key, "HTTP_COOKIE") == 0 ? ';' : ',';
                v[k++] = ' ';
                memcpy(v + k, v2.data, v2.len);
                k += v2.len;
            }
        }

        value.data = v;
        value.len = k;
        gn_cgi_env(e, key, value);
    }
}


/* cgi_pass_env: names of the server's environment variables to pass.
 * Returns 1 if PATH was among them (it then replaces the minimal one). */
static int
gn_cgi_env_pass(gn_cgi_env_t *e, const char *list)
{
    const char  *p, *q, *v;
    char         name[128];
    int          k, path;

    path = 0;

    for (p = list; p != NULL && *p != '\0'; p = q) {
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        for (q = p; *q != '\0' && *q != ' ' && *q != '\t'; q++) {
            /* the name */
        }
        if (q == p || (size_t) (q - p) + 2 > sizeof(name)
            || memchr(p, '=', q - p) != NULL)
        {
            continue;
        }

        k = snprintf(name, sizeof(name), "%.*s", (int) (q - p), p);
        v = getenv(name);
        if (v == NULL) {
            continue;
        }

        path |= strcmp(name, "PATH") == 0;
        name[k++] = '=';
        gn_cgi_env_raw(e, name, (size_t) k, (const unsigned char *) v,
                       strlen(v));
    }

    return path;
}


static int
gn_cgi_build(gn_cgi_ctx_t *ctx, gn_request_t *r, const char *path,
    gn_str_t script_name, gn_str_t path_info, int64_t body_len,
    gn_cgi_env_t *e)
{
    static const char *const  client[] = {
        "SSL_CLIENT_VERIFY", "SSL_CLIENT_S_DN", "SSL_CLIENT_I_DN",
        "SSL_CLIENT_M_SERIAL"
    };
    const gn_api_t  *api = gn_cgi_api;
    gn_str_t         v, root;
    unsigned char   *pt, *p;
    char             num[32], *cwd, *base;
    size_t           k;

    e->buf = api->request_alloc(r, GN_CGI_MSG_MAX);
    if (e->buf == NULL) {
        return GN_ERROR;
    }
    e->len = sizeof(gn_cgi_msg_t);
    e->n = 0;
    e->full = 0;

    /* path, cwd (the script's directory, RFC 3875 7.2), argv[0] */
    base = strrchr(path, '/');
    k = base ? (size_t) (base - path) : 0;
    cwd = api->request_alloc(r, k + 2);
    if (cwd == NULL) {
        return GN_ERROR;
    }
    memcpy(cwd, k ? path : "/", k ? k : 1);
    cwd[k ? k : 1] = '\0';

    gn_cgi_env_str(e, path);
    gn_cgi_env_str(e, cwd);
    gn_cgi_env_str(e, base ? base + 1 : path);

    if (!gn_cgi_env_pass(e, ctx->conf->pass_env)) {
        gn_cgi_env_str(e, GN_CGI_PATH);
    }

    /* RFC 3875 4.1 */
    v = api->header(r, "Authorization");
    if (v.len) {
        for (k = 0; k < v.len && v.data[k] != ' ' && v.data[k] != '\t'; k++) {
            /* the auth-scheme token, never the credentials */
        }
        v.len = k;
        gn_cgi_env(e, "AUTH_TYPE", v);
    }

    if (body_len > 0) {
        v.len = (size_t) snprintf(num, sizeof(num), "%lld",
                                  (long long) body_len);
        v.data = (unsigned char *) num;
        gn_cgi_env(e, "CONTENT_LENGTH", v);
    }

    v = api->header(r, "Content-Type");
    if (v.len) {
        gn_cgi_env(e, "CONTENT_TYPE", v);
    }

    gn_str_set(&v, "CGI/1.1");
    gn_cgi_env(e, "GATEWAY_INTERFACE", v);

    root = api->document_root(r);
    if (path_info.len) {
        gn_cgi_env(e, "PATH_INFO", path_info);

        pt = api->request_alloc(r, root.len + path_info.len);
        if (pt == NULL) {
            return GN_ERROR;
        }
        p = pt;
        memcpy(p, root.data, root.len);
        p += root.len;
        if (root.len && root.data[root.len - 1] == '/') {
            p--;
        }
        memcpy(p, path_info.data, path_info.len);
        v.data = pt;
        v.len = (size_t) (p - pt) + path_info.len;
        gn_cgi_env(e, "PATH_TRANSLATED", v);
    }

    gn_cgi_env(e, "QUERY_STRING", api->query(r));
    gn_cgi_env_var(e, api, r, "REMOTE_ADDR");
    gn_cgi_env(e, "REMOTE_HOST", api->variable(r, "REMOTE_ADDR"));
    gn_cgi_env_var(e, api, r, "REMOTE_PORT");
    gn_cgi_env(e, "REQUEST_METHOD", api->method(r));
    gn_cgi_env(e, "SCRIPT_NAME", script_name);
    v = api->variable(r, "SERVER_NAME");
    for (k = v.len; k > 0 && v.data[k - 1] >= '0' && v.data[k - 1] <= '9';
         k--)
    {
        /* a Host header's ":port" is not part of the name */
    }
    if (k > 0 && k < v.len && v.data[k - 1] == ':') {
        v.len = k - 1;
    }
    gn_cgi_env(e, "SERVER_NAME", v);
    gn_cgi_env_var(e, api, r, "SERVER_ADDR");
    gn_cgi_env_var(e, api, r, "SERVER_PORT");
    gn_cgi_env_var(e, api, r, "SERVER_PROTOCOL");
    gn_cgi_env_var(e, api, r, "SERVER_SOFTWARE");
    gn_cgi_env(e, "REQUEST_URI", api->request_uri(r));
    gn_cgi_env(e, "DOCUMENT_ROOT", root);
    v.data = (unsigned char *) path;
    v.len = strlen(path);
    gn_cgi_env(e, "SCRIPT_FILENAME", v);

    v = api->variable(r, "HTTPS");
    if (v.len == 2 && memcmp(v.data, "on", 2) == 0) {
        gn_cgi_env(e, "HTTPS", v);
        /* tls_verify_client: mod_ssl's names, when the server has them */
        for (k = 0; k < sizeof(client) / sizeof(client[0]); k++) {
            v = api->variable(r, client[k]);
            if (v.len) {
                gn_cgi_env(e, client[k], v);
            }
        }
    }

    gn_cgi_env_headers(e, api, r);

    if (e->full) {
        api->log(r, GN_LOG_ERR, "cgi: \"%s\": the environment would be "
                 "larger than %d bytes", path, GN_CGI_MSG_MAX);
        return 431;
    }

    return GN_OK;
}


/* ---- the request: stdin -------------------------------------------------- */

static void gn_cgi_in_event(const gn_api_t *api, gn_watch_t *w, int fd,
    int events, void *arg);


static void
gn_cgi_in_pump(gn_cgi_ctx_t *ctx)
{
    ssize_t  n;

    while (ctx->in_fd != -1 && ctx->ipos < ctx->ilen) {
        n = write(ctx->in_fd, ctx->ibuf + ctx->ipos, ctx->ilen - ctx->ipos);
        if (n > 0) {
            ctx->ipos += (size_t) n;
            continue;
        }
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == -1 && errno == EAGAIN) {
            if (ctx->in_w == NULL) {
                ctx->in_w = gn_cgi_api->watch_fd(ctx->r, ctx->in_fd,
                                                 GN_WATCH_WRITE,
                                                 gn_cgi_in_event, ctx);
                if (ctx->in_w == NULL) {
                    break;
                }
            }
            return;
        }
        break;                  /* EPIPE: the script does not read it */
    }

    if (ctx->ipos < ctx->ilen) {
        /* the script closed its stdin: the rest of the body is dropped */
        ctx->body_last = 1;
    }

    ctx->ipos = 0;
    ctx->ilen = 0;

    if (ctx->in_w != NULL) {
        gn_cgi_api->unwatch(ctx->in_w);
        ctx->in_w = NULL;
    }

    if (ctx->body_last) {
        gn_cgi_close(&ctx->in_fd);
    }
}


static void
gn_cgi_in_event(const gn_api_t *api, gn_watch_t *w, int fd, int events,
    void *arg)
{
    (void) api;
    (void) w;
    (void) fd;
    (void) events;

    gn_cgi_in_pump(arg);
}


static int
gn_cgi_buffer(gn_cgi_ctx_t *ctx, const unsigned char *data, size_t len)
{
    unsigned char  *p;
    size_t          size;

    if (ctx->ipos > 0 && ctx->ipos == ctx->ilen) {
        ctx->ipos = 0;
        ctx->ilen = 0;
    }

    if (ctx->ilen + len > ctx->isize) {
        size = ctx->isize ? ctx->isize : 16384;
        while (size < ctx->ilen + len) {
            size *= 2;
        }
        p = realloc(ctx->ibuf, size);
        if (p == NULL) {
            return GN_ERROR;
        }
        ctx->ibuf = p;
        ctx->isize = size;
    }

    memcpy(ctx->ibuf + ctx->ilen, data, len);
    ctx->ilen += len;

    return GN_OK;
}


/* read_body callback: the body goes to the script as it arrives. */
static void
gn_cgi_body(const gn_api_t *api, gn_request_t *r, const unsigned char *data,
    size_t len, int last, void *arg)
{
    gn_cgi_ctx_t  *ctx = arg;

    if (ctx->finished || ctx->in_fd == -1) {
        return;                 /* the script does not want it any more */
    }

    if (len > 0 && gn_cgi_buffer(ctx, data, len) != GN_OK) {
        api->log(r, GN_LOG_CRIT, "cgi: \"%s\": no memory for the request "
                 "body", ctx->script);
        gn_cgi_send_kill(ctx);
        gn_cgi_finish(ctx, ctx->headers ? GN_ERROR : 500);
        return;
    }

    if (last) {
        ctx->body_last = 1;
    }

    if (ctx->in_w == NULL) {
        gn_cgi_in_pump(ctx);
    }
}


/* ---- the request: stderr ------------------------------------------------- */

static void
gn_cgi_err_line(gn_cgi_ctx_t *ctx, char *p, size_t len)
{
    size_t  i;

    if (len && p[len - 1] == '\r') {
        len--;
    }

    if (ctx->elogged >= GN_CGI_STDERR_MAX) {
        return;
    }

    ctx->elogged += len + 1;

    for (i = 0; i < len; i++) {
        if ((unsigned char) p[i] < 0x20 || p[i] == 0x7f) {
            p[i] = '?';
        }
    }

    gn_cgi_api->log(ctx->r, GN_LOG_ERR, "cgi: \"%s\" stderr: %.*s%s",
                    ctx->script, (int) len, p,
                    ctx->elogged >= GN_CGI_STDERR_MAX
                    ? " (further stderr output is not logged)" : "");
}


/* Reads stderr until EAGAIN (or EOF: then the last partial line). */
static void
gn_cgi_err_drain(gn_cgi_ctx_t *ctx)
{
    ssize_t  n;
    char    *nl;
    size_t   k;

    while (ctx->err_fd != -1) {
        n = read(ctx->err_fd, ctx->ebuf + ctx->elen,
                 sizeof(ctx->ebuf) - ctx->elen);
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == -1 && errno == EAGAIN) {
            return;
        }

        if (n <= 0) {
            if (ctx->elen) {
                gn_cgi_err_line(ctx, ctx->ebuf, ctx->elen);
                ctx->elen = 0;
            }
            if (ctx->err_w != NULL) {
                gn_cgi_api->unwatch(ctx->err_w);
                ctx->err_w = NULL;
            }
            gn_cgi_close(&ctx->err_fd);
            return;
        }

        ctx->elen += (size_t) n;

        while ((nl = memchr(ctx->ebuf, '\n', ctx->elen)) != NULL) {
            k = (size_t) (nl - ctx->ebuf);
            gn_cgi_err_line(ctx, ctx->ebuf, k);
            memmove(ctx->ebuf, nl + 1, ctx->elen - k - 1);
            ctx->elen -= k + 1;
        }

        if (ctx->elen == sizeof(ctx->ebuf)) {
            gn_cgi_err_line(ctx, ctx->ebuf, ctx->elen);
            ctx->elen = 0;
        }
    }
}


static void
gn_cgi_err_event(const gn_api_t *api, gn_watch_t *w, int fd, int events,
    void *arg)
{
    (void) api;
    (void) w;
    (void) fd;
    (void) events;

    gn_cgi_err_drain(arg);
}


/* ---- the request: ending it ---------------------------------------------- */

/* Our own end of the request: no more events for it, then finish. */
static void
gn_cgi_finish(gn_cgi_ctx_t *ctx, int status)
{
    const gn_api_t  *api = gn_cgi_api;

    if (ctx->finished || ctx->r == NULL) {
        return;
    }

    ctx->finished = 1;

    if (ctx->err_fd != -1) {
        gn_cgi_err_drain(ctx);
    }

    if (ctx->out_w != NULL) {
        api->unwatch(ctx->out_w);
        ctx->out_w = NULL;
    }
    if (ctx->in_w != NULL) {
        api->unwatch(ctx->in_w);
        ctx->in_w = NULL;
    }
    if (ctx->err_w != NULL) {
        api->unwatch(ctx->err_w);
        ctx->err_w = NULL;
    }
    if (ctx->timer != NULL) {
        api->timer_cancel(ctx->timer);
        ctx->timer = NULL;
    }
    if (ctx->wait_t != NULL) {
        api->timer_cancel(ctx->wait_t);
        ctx->wait_t = NULL;
    }
    if (ctx->pause_t != NULL) {
        api->timer_cancel(ctx->pause_t);
        ctx->pause_t = NULL;
    }

    gn_cgi_close(&ctx->out_fd);
    gn_cgi_close(&ctx->in_fd);
    gn_cgi_close(&ctx->err_fd);

    api->finish(ctx->r, status);
}


/* cleanup_add: the request has ended, for whatever reason. Its watches
 * and timers are gone with it (not ours to remove any more). */
static void
gn_cgi_cleanup(void *arg)
{
    gn_cgi_ctx_t  *ctx = arg;

    ctx->out_w = NULL;
    ctx->in_w = NULL;
    ctx->err_w = NULL;
    ctx->timer = NULL;
    ctx->wait_t = NULL;
    ctx->pause_t = NULL;
    ctx->r = NULL;

    gn_cgi_close(&ctx->out_fd);
    gn_cgi_close(&ctx->in_fd);
    gn_cgi_close(&ctx->err_fd);

    gn_cgi_send_kill(ctx);          /* client gone, or a lingering script */
    gn_cgi_slot_free(ctx);

    if (!ctx->sent) {
        ctx->exited = 1;
    }

    gn_cgi_ctx_release(ctx);
}


/* Why a script gave no usable header, for the error log. */
static void
gn_cgi_why(gn_cgi_ctx_t *ctx, char *buf, size_t size)
{
    int  st = ctx->wstatus;

    if (ctx->spawn_err) {
        snprintf(buf, size, "cannot be executed: %s",
                 strerror(ctx->spawn_err));

    } else if (!ctx->exited || st == -1) {
        snprintf(buf, size, "closed its output before a complete header");

    } else if (WIFSIGNALED(st)) {
        snprintf(buf, size, "was killed by signal %d before a complete "
                 "header", WTERMSIG(st));

    } else if (WEXITSTATUS(st) != 0) {
        snprintf(buf, size, "exited with status %d before a complete header",
                 WEXITSTATUS(st));

    } else if (ctx->hlen == 0) {
        snprintf(buf, size, "exited without output");

    } else {
        snprintf(buf, size, "output ended inside the header (no empty line "
                 "after it)");
    }
}


static void
gn_cgi_wait_exit(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    gn_cgi_ctx_t  *ctx = arg;
    char           why[160];

    (void) t;
    ctx->wait_t = NULL;

    if (!ctx->exited && ctx->waited < GN_CGI_EXIT_WAIT) {
        ctx->waited += GN_CGI_EXIT_POLL;
        ctx->wait_t = api->timer_add(ctx->r, GN_CGI_EXIT_POLL,
                                     gn_cgi_wait_exit, ctx);
        if (ctx->wait_t != NULL) {
            return;
        }
    }

    gn_cgi_why(ctx, why, sizeof(why));
    api->log(ctx->r, GN_LOG_ERR, "cgi: \"%s\" %s", ctx->script, why);
    gn_cgi_finish(ctx, 502);
}


/* A bad response from the script: 502 at once, with the reason. */
static void
gn_cgi_bad(gn_cgi_ctx_t *ctx, const char *why)
{
    gn_cgi_api->log(ctx->r, GN_LOG_ERR, "cgi: \"%s\" %s", ctx->script, why);
    gn_cgi_send_kill(ctx);
    gn_cgi_finish(ctx, 502);
}


static void
gn_cgi_timeout(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    gn_cgi_ctx_t  *ctx = arg;

    (void) t;
    ctx->timer = NULL;
    gn_cgi_send_kill(ctx);

    if (!ctx->headers) {
        api->log(ctx->r, GN_LOG_ERR, "cgi: \"%s\" timed out after %lld ms "
                 "and was killed", ctx->script,
                 (long long) ctx->conf->timeout);
        gn_cgi_finish(ctx, 504);
        return;
    }

    api->log(ctx->r, GN_LOG_ERR, "cgi: \"%s\" timed out after %lld ms and "
             "was killed, the response is cut", ctx->script,
             (long long) ctx->conf->timeout);
    gn_cgi_finish(ctx, GN_ERROR);
}


/* ---- the request: the CGI header ----------------------------------------- */

/* Checks the complete lines not yet checked: GN_OK with *body at the
 * first body byte, GN_AGAIN, or GN_ERROR with *why. */
static int
gn_cgi_header_scan(gn_cgi_ctx_t *ctx, size_t *body, const char **why)
{
    unsigned char  *p, *nl, *end, *c;
    size_t          len;

    for ( ;; ) {
        p = ctx->hbuf + ctx->hparsed;
        end = ctx->hbuf + ctx->hlen;

        nl = memchr(p, '\n', end - p);
        if (nl == NULL) {
            return GN_AGAIN;
        }

        len = (size_t) (nl - p);
        if (len && p[len - 1] == '\r') {
            len--;
        }

        ctx->hparsed = (size_t) (nl + 1 - ctx->hbuf);

        if (len == 0) {
            *body = ctx->hparsed;
            return GN_OK;
        }

        if (ctx->nph && p == ctx->hbuf) {
            if (len < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ') {
                *why = "sent an invalid NPH status line";
                return GN_ERROR;
            }
            continue;
        }

        for (c = p; c < p + len && *c != ':'; c++) {
            if (*c <= 0x20 || *c >= 0x7f || strchr("()<>@,;\\\"/[]?={}",
                                                   *c) != NULL)
            {
                *why = "sent an invalid header line (no header, or a body "
                       "without a header?)";
                return GN_ERROR;
            }
        }

        if (c == p || c == p + len) {
            *why = "sent an invalid header line (no header, or a body "
                   "without a header?)";
            return GN_ERROR;
        }

        for (c++; c < p + len; c++) {
            if ((*c < 0x20 && *c != '\t') || *c == 0x7f) {
                *why = "sent a control character in a header value";
                return GN_ERROR;
            }
        }
    }
}


static char *
gn_cgi_cstr(gn_request_t *r, const unsigned char *p, size_t len)
{
    char  *s;

    s = gn_cgi_api->request_alloc(r, len + 1);
    if (s != NULL) {
        memcpy(s, p, len);
        s[len] = '\0';
    }

    return s;
}


static int
gn_cgi_is(const unsigned char *p, size_t len, const char *name)
{
    return strlen(name) == len && strncasecmp((char *) p, name, len) == 0;
}


/* Applies the checked header to the response; GN_ERROR with *why. */
static int
gn_cgi_header_apply(gn_cgi_ctx_t *ctx, size_t body, const char **why)
{
    const gn_api_t  *api = gn_cgi_api;
    gn_request_t    *r = ctx->r;
    unsigned char   *p, *nl, *end, *colon, *v, *ve;
    size_t           len, nlen;
    int              status, location;
    char            *name, *value;

    static const char  *hop[] = {
        "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
        "TE", "Trailer", "Upgrade", "Proxy-Connection", "Date", "Server"
    };
    size_t              i;

    status = 0;
    location = 0;
    end = ctx->hbuf + body;

    for (p = ctx->hbuf; p < end; p = nl + 1) {
        nl = memchr(p, '\n', end - p);
        len = (size_t) (nl - p);
        if (len && p[len - 1] == '\r') {
            len--;
        }
        if (len == 0) {
            break;
        }

        if (ctx->nph && p == ctx->hbuf) {
            v = p + 9;
            if (v + 3 > p + len || v[0] < '1' || v[0] > '5'
                || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9')
            {
                *why = "sent an invalid NPH status line";
                return GN_ERROR;
            }
            status = (v[0] - '0') * 100 + (v[1] - '0') * 10 + v[2] - '0';
            continue;
        }

        colon = memchr(p, ':', len);
        nlen = (size_t) (colon - p);
        for (v = colon + 1; v < p + len && (*v == ' ' || *v == '\t'); v++) {
            /* leading OWS */
        }
        for (ve = p + len; ve > v && (ve[-1] == ' ' || ve[-1] == '\t');
             ve--)
        {
            /* trailing OWS */
        }

        if (gn_cgi_is(p, nlen, "Status")) {
            if (ve - v < 3 || v[0] < '2' || v[0] > '5' || v[1] < '0'
                || v[1] > '9' || v[2] < '0' || v[2] > '9'
                || (ve - v > 3 && v[3] != ' '))
            {
                *why = "sent an invalid Status header";
                return GN_ERROR;
            }
            status = (v[0] - '0') * 100 + (v[1] - '0') * 10 + v[2] - '0';
            continue;
        }

        for (i = 0; i < gn_cgi_nelems(hop); i++) {
            if (gn_cgi_is(p, nlen, hop[i])) {
                break;
            }
        }
        if (i < gn_cgi_nelems(hop)) {
            continue;           /* the server's to set */
        }

        name = gn_cgi_cstr(r, p, nlen);
        value = gn_cgi_cstr(r, v, (size_t) (ve - v));
        if (name == NULL || value == NULL) {
            *why = "header could not be stored (no memory)";
            return GN_ERROR;
        }

        if (gn_cgi_is(p, nlen, "Location")) {
            if (ve == v) {
                *why = "sent an empty Location header";
                return GN_ERROR;
            }
            location = 1;
            api->set_header(r, "Location", value);

        } else if (gn_cgi_is(p, nlen, "Content-Type")) {
            api->set_header(r, name, value);

        } else {
            api->add_header(r, name, value);
        }
    }

    if (status == 0) {
        status = location ? 302 : 200;
    }

    if (api->set_status(r, status) != GN_OK) {
        *why = "sent a status the server refuses";
        return GN_ERROR;
    }

    return GN_OK;
}


/* ---- the request: stdout ------------------------------------------------- */

static void
gn_cgi_out_eof(gn_cgi_ctx_t *ctx)
{
    const gn_api_t  *api = gn_cgi_api;

    if (ctx->headers) {
        gn_cgi_finish(ctx, GN_OK);
        return;
    }

    /* no usable header: wait (briefly) for the exit status to say why */
    if (ctx->out_w != NULL) {
        api->unwatch(ctx->out_w);
        ctx->out_w = NULL;
    }
    gn_cgi_close(&ctx->out_fd);

    ctx->wait_t = api->timer_add(ctx->r, ctx->exited ? 0 : GN_CGI_EXIT_POLL,
                                 gn_cgi_wait_exit, ctx);
    if (ctx->wait_t == NULL) {
        gn_cgi_bad(ctx, "closed its output before a complete header");
    }
}


/* Header bytes arrived: GN_OK to go on reading, else the request ended. */
static int
gn_cgi_out_header(gn_cgi_ctx_t *ctx)
{
    const gn_api_t  *api = gn_cgi_api;
    const char      *why;
    size_t           body;
    int              rc;

    why = NULL;
    rc = gn_cgi_header_scan(ctx, &body, &why);

    if (rc == GN_AGAIN) {
        if (ctx->hlen == sizeof(ctx->hbuf)) {
            gn_cgi_bad(ctx, "sent a header larger than 8k");
            return GN_DONE;
        }
        return GN_OK;
    }

    if (rc == GN_OK) {
        rc = gn_cgi_header_apply(ctx, body, &why);
    }

    if (rc != GN_OK) {
        gn_cgi_bad(ctx, why);
        return GN_DONE;
    }

    ctx->headers = 1;

    if (body < ctx->hlen
        && api->write(ctx->r, ctx->hbuf + body, ctx->hlen - body)
           == GN_ERROR)
    {
        gn_cgi_send_kill(ctx);
        gn_cgi_finish(ctx, GN_ERROR);
        return GN_DONE;
    }

    (void) api->flush(ctx->r);

    return GN_OK;
}


/*
 * write() said GN_AGAIN: it took the bytes, but the client is slower than
 * the script. stdout is not read until the response has drained (ABI
 * 1.5's on_drained; in an older server, for GN_CGI_PAUSE ms): a full
 * pipe then blocks the script, which is the backpressure we want.
 */
static void
gn_cgi_out_resume(const gn_api_t *api, gn_mtimer_t *t, void *arg)
{
    gn_cgi_ctx_t  *ctx = arg;

    (void) t;
    ctx->pause_t = NULL;
    ctx->paused = 0;

    if (ctx->out_w != NULL) {
        (void) api->watch_update(ctx->out_w, GN_WATCH_READ);
    }
}


static void
gn_cgi_out_drained(const gn_api_t *api, gn_request_t *r, void *arg)
{
    (void) r;
    gn_cgi_out_resume(api, NULL, arg);
}


static void
gn_cgi_out_pause(gn_cgi_ctx_t *ctx)
{
    const gn_api_t  *api = gn_cgi_api;

    if (ctx->paused || ctx->out_w == NULL) {
        return;
    }

    if (GN_API_HAS(api, on_drained)
        && api->on_drained(ctx->r, gn_cgi_out_drained, ctx) == GN_OK)
    {
        ctx->paused = 1;

    } else {
        ctx->pause_t = api->timer_add(ctx->r, GN_CGI_PAUSE,
                                      gn_cgi_out_resume, ctx);
        if (ctx->pause_t == NULL) {
            return;
        }
        ctx->paused = 1;
    }

    (void) api->watch_update(ctx->out_w, 0);
}


static void
gn_cgi_out_event(const gn_api_t *api, gn_watch_t *w, int fd, int events,
    void *arg)
{
    gn_cgi_ctx_t  *ctx = arg;
    size_t         total;
    ssize_t        n;
    int            wrote, rc;

    (void) w;
    (void) events;

    total = 0;
    wrote = 0;

    while (total < GN_CGI_READ_MAX) {
        if (!ctx->headers) {
            n = read(fd, ctx->hbuf + ctx->hlen, sizeof(ctx->hbuf) - ctx->hlen);
        } else {
            n = read(fd, gn_cgi_buf, sizeof(gn_cgi_buf));
        }

        if (n == -1 && errno == EINTR) {
            continue;
        }

        if (n == -1 && errno == EAGAIN) {
            break;
        }

        if (n <= 0) {
            if (wrote) {
                (void) api->flush(ctx->r);
            }
            gn_cgi_out_eof(ctx);
            return;
        }

        total += (size_t) n;

        if (!ctx->headers) {
            ctx->hlen += (size_t) n;
            if (gn_cgi_out_header(ctx) != GN_OK) {
                return;
            }
            continue;
        }

        rc = api->write(ctx->r, gn_cgi_buf, (size_t) n);
        if (rc == GN_ERROR) {
            api->log(ctx->r, GN_LOG_ERR, "cgi: \"%s\": the response could "
                     "not be buffered, it is cut", ctx->script);
            gn_cgi_send_kill(ctx);
            gn_cgi_finish(ctx, GN_ERROR);
            return;
        }
        wrote = 1;

        if (rc == GN_AGAIN) {
            gn_cgi_out_pause(ctx);
            break;
        }
    }

    if (wrote) {
        (void) api->flush(ctx->r);
    }
}


/* ---- the request: starting the script ------------------------------------ */

static int
gn_cgi_pipe(int p[2], int ours)
{
    if (pipe2(p, O_CLOEXEC) == -1) {
        return -1;
    }

    if (fcntl(p[ours], F_SETFL, O_NONBLOCK) == -1) {
        close(p[0]);
        close(p[1]);
        return -1;
    }

    return 0;
}


/* Spawns the script: GN_OK, or an HTTP status / GN_ERROR. */
static int
gn_cgi_start(gn_cgi_ctx_t *ctx, const char *path, gn_str_t script_name,
    gn_str_t path_info, int64_t body_len)
{
    const gn_api_t  *api = gn_cgi_api;
    gn_request_t    *r = ctx->r;
    gn_cgi_env_t     e;
    gn_cgi_msg_t    *m;
    int              in[2], out[2], err[2], fds[3], rc;

    rc = gn_cgi_build(ctx, r, path, script_name, path_info, body_len, &e);
    if (rc != GN_OK) {
        return rc;
    }

    in[0] = in[1] = out[0] = out[1] = err[0] = err[1] = -1;

    if (gn_cgi_pipe(in, 1) == -1 || gn_cgi_pipe(out, 0) == -1
        || gn_cgi_pipe(err, 0) == -1)
    {
        api->log(r, GN_LOG_CRIT, "cgi: pipe2() failed: %s", strerror(errno));
        gn_cgi_close(&in[0]);
        gn_cgi_close(&in[1]);
        gn_cgi_close(&out[0]);
        gn_cgi_close(&out[1]);
        return 503;
    }

    ctx->in_fd = in[1];
    ctx->out_fd = out[0];
    ctx->err_fd = err[0];

    m = (gn_cgi_msg_t *) e.buf;
    memset(m, 0, sizeof(*m));
    m->type = GN_CGI_SPAWN;
    m->nstr = e.n;
    m->id = ctx->id;

    fds[0] = in[0];
    fds[1] = out[1];
    fds[2] = err[1];

    if (gn_cgi_send(e.buf, e.len, fds, 3) != GN_OK) {
        api->log(r, GN_LOG_ERR, "cgi: \"%s\": cannot reach the launcher: %s",
                 path, strerror(errno));
        return 503;
    }

    ctx->sent = 1;
    ctx->slot = 1;
    gn_cgi_nrunning++;

    ctx->out_w = api->watch_fd(r, ctx->out_fd, GN_WATCH_READ,
                               gn_cgi_out_event, ctx);
    ctx->err_w = api->watch_fd(r, ctx->err_fd, GN_WATCH_READ,
                               gn_cgi_err_event, ctx);
    ctx->timer = api->timer_add(r, ctx->conf->timeout > 0
                                   ? (uint64_t) ctx->conf->timeout : 30000,
                                gn_cgi_timeout, ctx);

    if (ctx->out_w == NULL || ctx->err_w == NULL || ctx->timer == NULL) {
        api->log(r, GN_LOG_CRIT, "cgi: \"%s\": cannot watch the script",
                 path);
        gn_cgi_send_kill(ctx);
        return 503;
    }

    if (body_len == 0) {
        gn_cgi_close(&ctx->in_fd);
    }

    return GN_OK;
}


/* A chunked body is spooled: the script starts at its end. */
typedef struct {
    gn_cgi_ctx_t    *ctx;
    const char      *path;
    gn_str_t         script_name;
    gn_str_t         path_info;
} gn_cgi_spool_t;


static void
gn_cgi_spool(const gn_api_t *api, gn_request_t *r, const unsigned char *data,
    size_t len, int last, void *arg)
{
    gn_cgi_spool_t  *sp = arg;
    gn_cgi_ctx_t    *ctx = sp->ctx;
    int              rc;

    if (ctx->finished) {
        return;
    }

    if (len > 0 && gn_cgi_buffer(ctx, data, len) != GN_OK) {
        api->log(r, GN_LOG_CRIT, "cgi: \"%s\": no memory for the request "
                 "body", ctx->script);
        gn_cgi_finish(ctx, 500);
        return;
    }

    if (!last) {
        return;
    }

    rc = gn_cgi_start(ctx, sp->path, sp->script_name, sp->path_info,
                      (int64_t) ctx->ilen);
    if (rc != GN_OK) {
        gn_cgi_finish(ctx, rc);
        return;
    }

    ctx->body_last = 1;
    if (ctx->ilen == 0) {
        gn_cgi_close(&ctx->in_fd);
        return;
    }
    gn_cgi_in_pump(ctx);
}


static int
gn_cgi_handler(const gn_api_t *api, gn_request_t *r)
{
    gn_cgi_conf_t   *conf;
    gn_cgi_ctx_t    *ctx;
    gn_cgi_spool_t  *sp;
    gn_str_t         script_name, path_info;
    char            *path;
    int64_t          body_len;
    int              rc, nph;

    gn_cgi_api = api;

    conf = api->module_conf(r, &gn_cgi_module);
    if (conf == NULL) {
        return GN_ERROR;
    }

    rc = gn_cgi_find(api, r, &path, &script_name, &path_info, &nph);
    if (rc != GN_OK) {
        return rc;
    }

    if (nph && !conf->nph) {
        api->log(r, GN_LOG_ERR, "cgi: \"%s\" is a non-parsed-header script "
                 "and cgi_nph is off", path);
        return 502;
    }

    if (gn_cgi_fd == -1) {
        api->log(r, GN_LOG_ERR, "cgi: \"%s\": the CGI launcher is not "
                 "available", path);
        return 503;
    }

    if (gn_cgi_nrunning >= gn_cgi_max) {
        api->log(r, GN_LOG_ERR, "cgi: \"%s\": %lld CGI processes are "
                 "running in this child (cgi_max_processes)", path,
                 (long long) gn_cgi_nrunning);
        return 503;
    }

    ctx = calloc(1, sizeof(gn_cgi_ctx_t));
    if (ctx == NULL) {
        return GN_ERROR;
    }
    ctx->script = strdup(path);
    if (ctx->script == NULL) {
        free(ctx);
        return GN_ERROR;
    }

    ctx->r = r;
    ctx->conf = conf;
    ctx->id = ++gn_cgi_last_id;
    ctx->nph = nph;
    ctx->in_fd = -1;
    ctx->out_fd = -1;
    ctx->err_fd = -1;
    ctx->next = gn_cgi_ctxs;
    gn_cgi_ctxs = ctx;

    /* from here on the request's end frees (or lets go of) the context */
    if (api->cleanup_add(r, gn_cgi_cleanup, ctx) != GN_OK) {
        ctx->r = NULL;
        ctx->exited = 1;
        gn_cgi_ctx_release(ctx);
        return GN_ERROR;
    }

    body_len = api->body_length(r);

    if (body_len < 0) {
        sp = api->request_alloc(r, sizeof(gn_cgi_spool_t));
        if (sp == NULL) {
            return GN_ERROR;
        }
        sp->ctx = ctx;
        sp->path = path;
        sp->script_name = script_name;
        sp->path_info = path_info;
        return api->read_body(r, gn_cgi_spool, sp) == GN_OK ? GN_AGAIN
                                                             : GN_ERROR;
    }

    rc = gn_cgi_start(ctx, path, script_name, path_info, body_len);
    if (rc != GN_OK) {
        return rc;
    }

    if (body_len > 0 && api->read_body(r, gn_cgi_body, ctx) != GN_OK) {
        gn_cgi_send_kill(ctx);
        return GN_ERROR;
    }

    return GN_AGAIN;
}


/* ---- the module ---------------------------------------------------------- */

static const gn_directive_t  gn_cgi_directives[] = {

    { "cgi_timeout", GN_DIR_DURATION,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(gn_cgi_conf_t, timeout), "30s" },

    { "cgi_max_processes", GN_DIR_NUMBER, GN_CTX_MAIN,
      offsetof(gn_cgi_conf_t, max_processes), "16" },

    { "cgi_user", GN_DIR_STRING, GN_CTX_MAIN,
      offsetof(gn_cgi_conf_t, user), "nobody" },

    { "cgi_pass_env", GN_DIR_STRING,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(gn_cgi_conf_t, pass_env), NULL },

    { "cgi_nph", GN_DIR_FLAG, GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(gn_cgi_conf_t, nph), "off" },

    { NULL, 0, 0, 0, NULL }
};


const gn_module_t  gn_cgi_module = {
    GN_MODULE_V1,
    "cgi",
    "1.0",
    gn_cgi_directives,
    sizeof(gn_cgi_conf_t),
    gn_cgi_init_master,
    gn_cgi_init_child,
    gn_cgi_handler,
    NULL,
    NULL,
    NULL,
    gn_cgi_exit_child
};

GN_MODULE_EXPORT(gn_cgi_module)
GN_MODULE_CHECK(gn_cgi_check_conf)
