/*
 * Fork, the signal table, process titles and the clock.
 */

#include "gn_config.h"

#include <signal.h>
#include <sys/prctl.h>

#include "process.h"
#include "log.h"


gn_process_t   gn_processes[GN_SB_SLOTS];


/*
 * Every signal the master acts on, in one place: each is blocked before
 * the first fork and fetched by sigtimedwait() in gn_master_run(), and
 * those with a name are what `gannet -s NAME` sends (USR2: the binary
 * upgrade, master.c).
 */
const gn_process_signal_t  gn_process_signals[] = {
    { SIGTERM, "stop" },
    { SIGQUIT, "quit" },
    { SIGHUP, "reload" },
    { SIGUSR1, "reopen" },
    { SIGUSR2, "upgrade" },
    { SIGINT, NULL },
    { SIGCHLD, NULL },
    { 0, NULL }
};


static char   *gn_title_start;
static size_t  gn_title_len;


void
gn_process_title_init(int argc, char **argv)
{
    char  *end;
    int    i;

    if (argc == 0 || argv[0] == NULL) {
        return;
    }

    /* the argv strings are contiguous: we may overwrite all of them */
    end = argv[0];
    for (i = 0; i < argc; i++) {
        if (argv[i] == end) {
            end = argv[i] + strlen(argv[i]) + 1;
        }
    }

    gn_title_start = argv[0];
    gn_title_len = (size_t) (end - argv[0]);
}


void
gn_process_title_set(const char *title)
{
    size_t  n;

#ifdef HAVE_PRCTL
    (void) prctl(PR_SET_NAME, (unsigned long) "gannet", 0, 0, 0);
#endif

    if (gn_title_start == NULL || gn_title_len < 2) {
        return;
    }

    n = gn_min(strlen(title), gn_title_len - 1);
    memcpy(gn_title_start, title, n);
    memset(gn_title_start + n, '\0', gn_title_len - n);
}


gn_msec_t
gn_process_msec(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (gn_msec_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


pid_t
gn_process_spawn(gn_cycle_t *cycle, gn_int_t slot, gn_uint_t generation,
    gn_process_main_pt run)
{
    pid_t  pid;

    /* a respawned child starts its counters afresh: the previous one's
     * were folded into the retired totals when it was reaped */
    memset(&gn_sb->slots[slot], 0, sizeof(gn_sb_slot_t));
    gn_scoreboard_set(slot, GN_SB_STARTING);
    gn_sb->slots[slot].generation = generation;

    pid = fork();

    if (pid == -1) {
        gn_log_error(GN_LOG_ALERT, &cycle->log, errno,
                     "fork() for child slot %d failed", (int) slot);
        gn_scoreboard_set(slot, GN_SB_FREE);
        return -1;
    }

    if (pid == 0) {
        run(cycle, slot, generation);                /* never returns */
    }

    gn_sb->slots[slot].pid = pid;
    gn_processes[slot].pid = pid;
    gn_processes[slot].generation = generation;
    gn_processes[slot].started = gn_process_msec();
    gn_processes[slot].exiting = 0;
    gn_processes[slot].respawn_at = 0;

    gn_log_error(GN_LOG_NOTICE, &cycle->log, 0,
                 "started child %d (slot %d, generation %u)", (int) pid,
                 (int) slot, (unsigned) generation);

    return pid;
}
