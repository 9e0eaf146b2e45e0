/*
 * The scoreboard's retired totals (issue 18, item 3): a reaped child's
 * counters are folded in once, the slot leaves the live set, the master
 * decides from its own record which slot is free, and a reader summing
 * the live slots and the retired row the way mod_status does (through
 * the module API, child_stats(-1) read before and after) never sees the
 * totals go back while a master folds child after child.
 */

#include "gn_config.h"

#include <signal.h>
#include <sys/wait.h>

#include "../../core/scoreboard.h"
#include "../../core/api.h"
#include "../tap.h"


#define ROUNDS  200000


/* The master's part for one child: a slot, a pid, counters, the fold. */
static gn_int_t
child_lives(uint64_t requests, uint64_t bytes)
{
    gn_int_t  slot;

    slot = gn_scoreboard_take();
    if (slot < 0) {
        return -1;
    }

    gn_sb->slots[slot].requests = requests;
    gn_sb->slots[slot].bytes_out = bytes;
    gn_sb->slots[slot].status[2] = requests;
    gn_sb->slots[slot].tls_full = 1;
    __atomic_store_n(&gn_sb->slots[slot].pid, 100000 + slot,
                     __ATOMIC_RELEASE);
    return slot;
}


/* mod_status's gn_status_collect(), through the API as a module sees it. */
static uint64_t
total_requests(void)
{
    gn_child_stats_t  r1, r2, cs;
    uint64_t          sum;
    int               slot, try;

    sum = 0;
    for (try = 0; try < 8; try++) {
        if (gn_api.child_stats(-1, &r1) != 1) {
            return 0;
        }

        sum = r1.requests;
        for (slot = 0; slot < gn_api.max_slots(); slot++) {
            if (gn_api.child_stats(slot, &cs) == 1) {
                sum += cs.requests;
            }
        }

        if (gn_api.child_stats(-1, &r2) == 1
            && r2.generation == r1.generation)
        {
            break;
        }
    }

    return sum;
}


static void
test_fold(void)
{
    gn_child_stats_t  r, cs;
    gn_int_t          a, b, c;

    a = child_lives(7, 700);
    b = child_lives(5, 500);
    ok(a >= 0 && b >= 0 && a != b, "two slots taken");

    is_int(gn_api.child_stats(-1, &r), 1, "the retired row exists");
    is_int((long long) r.requests, 0, "nothing retired yet");
    is_int(r.pid, 0, "its pid is 0");
    is_int(total_requests(), 12, "live: 7 + 5");

    gn_scoreboard_fold(a);
    is_int(gn_api.child_stats(a, &cs), 0, "a folded slot is not live");
    is_int((long long) gn_sb->slots[a].state, GN_SB_EXITED,
           "... and it is marked exited");
    is_int(gn_api.child_stats(-1, &r), 1, "the retired row");
    is_int((long long) r.requests, 7, "... holds the 7 requests");
    is_int((long long) r.bytes_out, 700, "... and the bytes");
    is_int((long long) r.status[2], 7, "... and the 2xx");
    is_int((long long) r.tls_full, 1, "... and the handshake");
    is_int((long long) r.generation, 1, "... of 1 child");
    is_int((long long) (gn_sb->retired.seq & 1), 0, "the sequence is even");
    is_int(total_requests(), 12, "the total is unchanged by the fold");

    /* a child writes "exited" into its own live slot: the master keeps
     * its own record and does not hand the slot out again */
    gn_sb->slots[b].state = GN_SB_EXITED;
    c = gn_scoreboard_take();
    ok(c != b, "a slot a child marked exited is not taken (%d, %d)",
       (int) c, (int) b);
    ok(c == a, "the folded slot is reused");
    gn_scoreboard_set(c, GN_SB_FREE);
    gn_sb->slots[b].state = GN_SB_RUNNING;
    gn_scoreboard_fold(b);

    is_int(total_requests(), 12, "both folded: still 12");
    is_int(gn_api.child_stats(-1, &r), 1, "the retired row");
    is_int((long long) r.generation, 2, "... of 2 children");
}


/* The reader: exits 0 if the totals never went back and reached the
 * final count, 1 otherwise. */
static int
reader(int go, int started, uint64_t want)
{
    uint64_t  last, now;
    char      x;
    long      reads;

    alarm(120);
    if (write(started, "x", 1) != 1 || read(go, &x, 1) != 1) {
        return 2;
    }

    last = 0;
    reads = 0;
    for ( ;; ) {
        now = total_requests();
        reads++;
        if (now < last) {
            fprintf(stderr, "# totals went back: %llu after %llu (read %ld)\n",
                    (unsigned long long) now, (unsigned long long) last,
                    reads);
            return 1;
        }
        last = now;
        if (now == want) {
            return 0;
        }
    }
}


static void
test_concurrent(void)
{
    gn_int_t  live[2];
    uint64_t  want, before;
    pid_t     pid;
    char      x;
    int       go[2], started[2], status, i, k;

    /* long-lived children in the first slots: the two that come and go
     * are read last, after all the others, the widest window for a fold
     * to fall between the reads */
    for (i = 0; i < GN_SB_SLOTS - 2; i++) {
        if (child_lives(0, 0) < 0) {
            ok(0, "slot %d taken", i);
            return;
        }
    }

    before = total_requests();
    want = before;
    for (i = 0; i < ROUNDS; i++) {
        want += (uint64_t) (i % 5 + 1);
    }

    if (pipe(go) == -1 || pipe(started) == -1) {
        ok(0, "pipe(): %s", strerror(errno));
        return;
    }

    pid = fork();
    if (pid == 0) {
        close(go[1]);
        close(started[0]);
        _exit(reader(go[0], started[1], want));
    }
    close(go[0]);
    close(started[1]);
    ok(pid > 0 && read(started[0], &x, 1) == 1, "reader running");
    if (pid <= 0) {
        return;
    }

    /* the reader is reading from the first fold on */
    (void) write(go[1], "x", 1);

    /* two children live at a time, as during a reload: the older one is
     * folded while the newer one counts */
    live[0] = -1;
    live[1] = -1;
    for (i = 0, k = 0; i < ROUNDS; i++, k ^= 1) {
        if (live[k] >= 0) {
            gn_scoreboard_fold(live[k]);
        }
        live[k] = child_lives((uint64_t) (i % 5 + 1), 10);
    }
    for (k = 0; k < 2; k++) {
        if (live[k] >= 0) {
            gn_scoreboard_fold(live[k]);
        }
    }

    is_int(total_requests(), (long long) want, "all counted, once");
    is_int((long long) (gn_sb->retired.seq & 1), 0, "the sequence is even");

    alarm(60);
    if (waitpid(pid, &status, 0) != pid) {
        ok(0, "waitpid(): %s", strerror(errno));
        return;
    }
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "the reader never saw the totals go back over %d folds", ROUNDS);
    close(go[1]);
    close(started[0]);
}


int
main(void)
{
    if (gn_scoreboard_init() != GN_OK) {
        skip_all("no shared memory");
    }

    test_fold();
    test_concurrent();

    return done_testing();
}
