/*
 * Scoreboard in shared memory.
 */

#include "gn_config.h"

#include <sched.h>

#include "scoreboard.h"
#include "shm.h"


gn_scoreboard_t  *gn_sb;
gn_sb_slot_t     *gn_sb_me;

static gn_shm_t   gn_sb_shm;

/* The master's own record of the slot states: children write `state` in
 * shared memory too, so the master never decides from what it reads
 * there which slot is free. */
static gn_sb_state_e  gn_sb_owner[GN_SB_SLOTS];


gn_int_t
gn_scoreboard_init(void)
{
    if (gn_sb != NULL) {
        return GN_OK;                /* survives reloads: created once */
    }

    gn_sb_shm.size = sizeof(gn_scoreboard_t);
    gn_str_set(&gn_sb_shm.name, "scoreboard");

    if (gn_shm_alloc(&gn_sb_shm) != GN_OK) {
        return GN_ERROR;
    }

    gn_sb = (gn_scoreboard_t *) gn_sb_shm.addr;
    gn_sb->magic = 0x676e73623031ULL;     /* "gnsb01" */
    gn_sb->master_pid = (uint64_t) getpid();
    gn_sb->started = (uint64_t) time(NULL);

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


void
gn_scoreboard_fold(gn_int_t slot)
{
    gn_sb_retired_t  *rt = &gn_sb->retired;
    gn_sb_slot_t     *sb = &gn_sb->slots[slot];
    gn_uint_t         i;

    __atomic_store_n(&rt->seq, rt->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);

    rt->children++;
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
            += __atomic_load_n(&((uint64_t *) &sb->proto)[i],
                               __ATOMIC_RELAXED);
    }

    /* out of the live set before seq is even again */
    __atomic_store_n(&sb->pid, 0, __ATOMIC_RELAXED);
    gn_scoreboard_set(slot, GN_SB_EXITED);

    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&rt->seq, rt->seq + 1, __ATOMIC_RELEASE);
}


gn_int_t
gn_scoreboard_retired(gn_sb_retired_t *out)
{
    uint64_t   s1, s2;
    gn_uint_t  try;

    /* what the caller read before (the live slots) stays before */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);

    /* a fold is a few dozen stores: retry, yielding if the master was
     * preempted in the middle of one; never wait for it without bound */
    for (try = 0; try < 64; try++) {
        s1 = __atomic_load_n(&gn_sb->retired.seq, __ATOMIC_ACQUIRE);

        if ((s1 & 1) == 0) {
            memcpy(out, (const void *) &gn_sb->retired, sizeof(*out));

            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            s2 = __atomic_load_n(&gn_sb->retired.seq, __ATOMIC_RELAXED);
            if (s1 == s2) {
                out->seq = s1;
                return GN_OK;
            }
        }

        if (try >= 4) {
            (void) sched_yield();
        }
    }

    /* the master stopped in a fold (it is dying): the numbers as they are */
    memcpy(out, (const void *) &gn_sb->retired, sizeof(*out));
    return GN_BUSY;
}
