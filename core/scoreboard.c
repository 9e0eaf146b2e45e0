/*
 * Scoreboard in shared memory (scoreboard.h says who writes what).
 */

#include "gn_config.h"

#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>

#include "scoreboard.h"
#include "shm.h"
#include "log.h"


gn_scoreboard_t  *gn_sb;
gn_sb_slot_t     *gn_sb_me;

/* an upgrade's old scoreboard, read-only, until its totals are folded;
 * when its master was first seen gone */
static const gn_scoreboard_t  *gn_sb_prev;
static time_t                  gn_sb_prev_gone;

/* how long orphans of a killed old master may keep its totals apart */
#define GN_SB_ORPHAN_WAIT   300              /* s */

#define GN_SB_MAGIC   0x676e73623032ULL       /* "gnsb02" */

/* The master's own record of the slot states: children write `state` in
 * shared memory too, so the master never decides from what it reads
 * there which slot is free. */
static gn_sb_state_e  gn_sb_owner[GN_SB_SLOTS];


gn_int_t
gn_scoreboard_init(void)
{
    gn_shm_zone_t  *zone;
    void           *prev;

    if (gn_sb != NULL) {
        return GN_OK;                /* survives reloads: created once */
    }

    prev = gn_shm_map_passed("scoreboard", sizeof(gn_scoreboard_t));

    zone = gn_shm_zone_get(sizeof(gn_scoreboard_t), "scoreboard", NULL);
    if (zone == NULL) {
        return GN_ERROR;
    }

    gn_sb = (gn_scoreboard_t *) zone->addr;
    gn_sb->magic = GN_SB_MAGIC;
    gn_sb->master_pid = (uint64_t) getpid();
    gn_sb->started = (uint64_t) time(NULL);

    if (prev != NULL) {
        gn_sb_prev = prev;
        if (gn_sb_prev->magic == GN_SB_MAGIC
            && gn_sb_prev->master_pid != 0)
        {
            gn_sb->retired.prev_master = gn_sb_prev->master_pid;
        } else {
            (void) munmap(prev, sizeof(gn_scoreboard_t));
            gn_sb_prev = NULL;
        }
    }

    return GN_OK;
}


gn_int_t
gn_scoreboard_take(void)
{
    gn_int_t  i;

    for (i = 0; i < GN_SB_SLOTS; i++) {
        if (gn_sb_owner[i] == GN_SB_FREE || gn_sb_owner[i] == GN_SB_EXITED) {
            memset(&gn_sb->slots[i], 0, sizeof(gn_sb_slot_t));
            gn_scoreboard_set(i, GN_SB_STARTING);
            return i;
        }
    }

    return -1;
}


void
gn_scoreboard_set(gn_int_t slot, gn_sb_state_e state)
{
    gn_sb_owner[slot] = state;
    __atomic_store_n(&gn_sb->slots[slot].state, (uint64_t) state,
                     __ATOMIC_RELAXED);
}


/* Adds a slot's counters (read as numbers) to totals. */
static void
gn_sb_add_slot(gn_sb_retired_t *rt, const gn_sb_slot_t *sb)
{
    gn_uint_t  i;

    rt->accepted += __atomic_load_n(&sb->accepted, __ATOMIC_RELAXED);
    rt->requests += __atomic_load_n(&sb->requests, __ATOMIC_RELAXED);
    rt->bytes_in += __atomic_load_n(&sb->bytes_in, __ATOMIC_RELAXED);
    rt->bytes_out += __atomic_load_n(&sb->bytes_out, __ATOMIC_RELAXED);
    for (i = 0; i < 6; i++) {
        rt->status[i] += __atomic_load_n(&sb->status[i], __ATOMIC_RELAXED);
    }
    rt->tls_full += __atomic_load_n(&sb->tls_full, __ATOMIC_RELAXED);
    rt->tls_resumed += __atomic_load_n(&sb->tls_resumed, __ATOMIC_RELAXED);
    rt->tls_failed += __atomic_load_n(&sb->tls_failed, __ATOMIC_RELAXED);
    for (i = 0; i < GN_SB_PROTO_N; i++) {
        ((uint64_t *) &rt->proto)[i]
            += __atomic_load_n(&((const uint64_t *) &sb->proto)[i],
                               __ATOMIC_RELAXED);
    }
}


/* Adds totals to totals (children too). */
static void
gn_sb_add_retired(gn_sb_retired_t *rt, const gn_sb_retired_t *from)
{
    gn_uint_t  i;

    rt->children += from->children;
    rt->accepted += from->accepted;
    rt->requests += from->requests;
    rt->bytes_in += from->bytes_in;
    rt->bytes_out += from->bytes_out;
    for (i = 0; i < 6; i++) {
        rt->status[i] += from->status[i];
    }
    rt->tls_full += from->tls_full;
    rt->tls_resumed += from->tls_resumed;
    rt->tls_failed += from->tls_failed;
    for (i = 0; i < GN_SB_PROTO_N; i++) {
        ((uint64_t *) &rt->proto)[i] += ((const uint64_t *) &from->proto)[i];
    }
}


void
gn_scoreboard_fold(gn_int_t slot)
{
    gn_sb_retired_t  *rt = &gn_sb->retired;
    gn_sb_slot_t     *sb = &gn_sb->slots[slot];

    __atomic_store_n(&rt->seq, rt->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);

    rt->children++;
    gn_sb_add_slot(rt, sb);

    /* out of the live set before seq is even again */
    __atomic_store_n(&sb->pid, 0, __ATOMIC_RELAXED);
    gn_scoreboard_set(slot, GN_SB_EXITED);

    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&rt->seq, rt->seq + 1, __ATOMIC_RELEASE);
}


/* sb's retired totals, and with `live` its live slots' counters added,
 * as they are now. */
static void
gn_sb_copy(const gn_scoreboard_t *sb, int live, gn_sb_retired_t *out)
{
    gn_uint_t  i;

    memcpy(out, (const void *) &sb->retired, sizeof(*out));
    for (i = 0; live && i < GN_SB_SLOTS; i++) {
        if (__atomic_load_n(&sb->slots[i].pid, __ATOMIC_RELAXED) > 0) {
            gn_sb_add_slot(out, &sb->slots[i]);
        }
    }
}


/*
 * A consistent copy of sb's retired totals, and with `live` its live
 * slots' counters added (read in the same window of `seq`, so a child
 * folded meanwhile is counted once). GN_BUSY: the master stayed in the
 * middle of a fold for all of the bounded retries (*out is then the
 * numbers as they were).
 */
static gn_int_t
gn_sb_totals(const gn_scoreboard_t *sb, int live, gn_sb_retired_t *out)
{
    uint64_t   s1, s2;
    gn_uint_t  try;

    /* what the caller read before (the live slots) stays before */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);

    /* a fold is a few dozen stores: retry, yielding if the master was
     * preempted in the middle of one; never wait for it without bound */
    for (try = 0; try < 64; try++) {
        s1 = __atomic_load_n(&sb->retired.seq, __ATOMIC_ACQUIRE);

        if ((s1 & 1) == 0) {
            gn_sb_copy(sb, live, out);

            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            s2 = __atomic_load_n(&sb->retired.seq, __ATOMIC_RELAXED);
            if (s1 == s2) {
                out->seq = s1;
                return GN_OK;
            }
        }

        if (try >= 4) {
            (void) sched_yield();
        }
    }

    /* the master stopped in a fold (it is dying): the numbers as they
     * are */
    gn_sb_copy(sb, live, out);
    return GN_BUSY;
}


gn_int_t
gn_scoreboard_retired(gn_sb_retired_t *out)
{
    gn_sb_retired_t  prev;
    gn_int_t         rc;

    rc = gn_sb_totals(gn_sb, 0, out);

    /* (not after GN_BUSY: an absorption half done may be in *out) */
    if (rc == GN_OK && out->prev_master != 0 && gn_sb_prev != NULL) {
        (void) gn_sb_totals(gn_sb_prev, 1, &prev);
        gn_sb_add_retired(out, &prev);
    }

    return rc;
}


gn_int_t
gn_scoreboard_absorb(void)
{
    gn_sb_retired_t  *rt = &gn_sb->retired;
    gn_sb_retired_t   prev;
    gn_uint_t         i;
    pid_t             pid;

    if (rt->prev_master == 0) {
        return GN_OK;
    }

    /* the new master is the old one's child until it exits */
    if ((uint64_t) getppid() == rt->prev_master) {
        return GN_AGAIN;
    }
    if (gn_sb_prev_gone == 0) {
        gn_sb_prev_gone = time(NULL);
    }

    /* orphans of a master that was killed drain on their own; a pid
     * probed may have been reused, so the wait is bounded */
    for (i = 0; i < GN_SB_SLOTS
                && time(NULL) - gn_sb_prev_gone < GN_SB_ORPHAN_WAIT; i++)
    {
        pid = (pid_t) __atomic_load_n(&gn_sb_prev->slots[i].pid,
                                      __ATOMIC_RELAXED);
        if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)) {
            return GN_AGAIN;           /* an orphan, still draining */
        }
    }

    /* final now: whatever its children last wrote is theirs */
    (void) gn_sb_totals(gn_sb_prev, 1, &prev);

    __atomic_store_n(&rt->seq, rt->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);

    gn_sb_add_retired(rt, &prev);
    rt->prev_master = 0;

    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&rt->seq, rt->seq + 1, __ATOMIC_RELEASE);

    gn_log_error(GN_LOG_NOTICE, NULL, 0, "the totals of the old master %d "
                 "(%" PRIu64 " requests) are this one's now",
                 (int) gn_sb_prev->master_pid, prev.requests);

    /* children forked before keep their mapping, and prev_master 0 */
    (void) munmap((void *) gn_sb_prev, sizeof(gn_scoreboard_t));
    gn_sb_prev = NULL;

    return GN_OK;
}
