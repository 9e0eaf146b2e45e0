/*
 * The scoreboard across a binary upgrade (issue 21): the old master's
 * scoreboard, passed as a memfd in GANNET_ZONES, is mapped beside the
 * new one; the retired totals a module reads (child_stats(-1)) add the
 * old master's retired totals and live slots while it runs, and once it
 * is gone gn_scoreboard_absorb() folds them in: the totals stay the
 * same through the fold and are never counted twice. A scoreboard of
 * another layout (magic) is not taken.
 */

#include "gn_config.h"

#include <sys/mman.h>
#include <sys/wait.h>

#include "../../core/scoreboard.h"
#include "../../core/shm.h"
#include "../../core/api.h"
#include "../tap.h"


static uint64_t
retired_requests(uint64_t *children)
{
    gn_child_stats_t  r;

    if (gn_api.child_stats(-1, &r) != 1) {
        return (uint64_t) -1;
    }
    *children = r.generation;
    return r.requests;
}


/* An old master's scoreboard in a memfd, as a new master is handed it;
 * the test keeps a writable mapping to play the old processes. */
static gn_scoreboard_t *
old_scoreboard(uint64_t magic, pid_t master, uint64_t retired,
    uint64_t live, pid_t live_pid)
{
    gn_scoreboard_t  *sb;
    char              env[128];
    int               fd;

    fd = memfd_create("scoreboard", 0);
    if (fd == -1 || ftruncate(fd, sizeof(gn_scoreboard_t)) == -1) {
        return NULL;
    }
    sb = mmap(NULL, sizeof(*sb), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (sb == MAP_FAILED) {
        return NULL;
    }

    sb->magic = magic;
    sb->master_pid = (uint64_t) master;
    sb->retired.children = 3;
    sb->retired.requests = retired;
    sb->slots[5].pid = live_pid;
    sb->slots[5].state = GN_SB_DRAINING;
    sb->slots[5].requests = live;

    snprintf(env, sizeof(env), "scoreboard:%zu:%d", sizeof(gn_scoreboard_t),
             fd);
    return setenv("GANNET_ZONES", env, 1) == 0 ? sb : NULL;
}


/* In a child process: a scoreboard of another layout is not taken. */
static int
other_layout(void)
{
    uint64_t  children;

    if (old_scoreboard(0x676e73623031ULL, getppid(), 40, 2, getpid())
        == NULL)
    {
        return 2;
    }
    gn_shm_inherit(NULL);
    if (gn_scoreboard_init() != GN_OK) {
        return 3;
    }
    return gn_sb->retired.prev_master == 0
           && retired_requests(&children) == 0 ? 0 : 1;
}


int
main(void)
{
    gn_scoreboard_t  *old;
    uint64_t          children = 0;
    gn_int_t          slot;
    pid_t             gone, pid;
    int               status;

    pid = fork();
    if (pid == 0) {
        _exit(other_layout());
    }
    ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
       && WEXITSTATUS(status) == 0,
       "a scoreboard of another layout (gnsb01) is not taken");

    /* a pid that is not running: a process that exited at once */
    gone = fork();
    if (gone == 0) {
        _exit(0);
    }
    (void) waitpid(gone, NULL, 0);

    /* the old master is our parent, and still runs; a child of it (this
     * process, as far as the scoreboard knows) too */
    old = old_scoreboard(0x676e73623032ULL, getppid(), 40, 2, getpid());
    ok(old != NULL, "an old scoreboard in GANNET_ZONES");
    if (old == NULL) {
        return done_testing();
    }
    gn_shm_inherit(NULL);
    is_int(gn_scoreboard_init(), GN_OK, "the new scoreboard is made");
    is_int((long long) gn_sb->retired.prev_master, (long long) getppid(),
           "the old master is known");

    is_int((long long) retired_requests(&children), 42,
           "retired: the old master's 40 retired and 2 live");
    is_int((long long) children, 3, "its 3 reaped children");

    old->slots[5].requests = 6;          /* the old child serves on */
    is_int((long long) retired_requests(&children), 46,
           "what the old child serves meanwhile counts: 46");

    slot = gn_scoreboard_take();
    gn_sb->slots[slot].requests = 5;
    gn_sb->slots[slot].pid = 4242;
    gn_scoreboard_fold(slot);
    is_int((long long) retired_requests(&children), 51,
           "a child of ours folded: 51");
    is_int((long long) children, 4, "of 4 children");

    is_int(gn_scoreboard_absorb(), GN_AGAIN,
           "not folded in while the old master runs");

    /* the old master gone (another pid than our parent) */
    gn_sb->retired.prev_master = (uint64_t) gone;
    is_int(gn_scoreboard_absorb(), GN_AGAIN,
           "nor while a child of it runs (this process)");
    is_int((long long) retired_requests(&children), 51, "still 51");

    old->slots[5].pid = gone;            /* it exited, unreaped */
    is_int(gn_scoreboard_absorb(), GN_OK, "folded in once all are gone");
    is_int((long long) gn_sb->retired.prev_master, 0, "no old master now");
    is_int((long long) retired_requests(&children), 51,
           "the total is the same after the fold");
    is_int((long long) children, 4, "and the children");
    is_int((long long) gn_sb->retired.requests, 51,
           "it is in our own retired totals");

    old->slots[5].requests = 1000;       /* unmapped for us: not read */
    is_int((long long) retired_requests(&children), 51,
           "the old scoreboard is not read again");
    is_int(gn_scoreboard_absorb(), GN_OK, "a second absorb: nothing to do");
    is_int((long long) retired_requests(&children), 51, "still 51");

    return done_testing();
}
