/*
 * Scoreboard in shared memory.
 */

#include "gn_config.h"

#include "scoreboard.h"
#include "shm.h"


gn_scoreboard_t  *gn_sb;
gn_sb_slot_t     *gn_sb_me;

static gn_shm_t   gn_sb_shm;


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
        if (gn_sb->slots[i].state == GN_SB_FREE
            || gn_sb->slots[i].state == GN_SB_EXITED)
        {
            memset(&gn_sb->slots[i], 0, sizeof(gn_sb_slot_t));
            gn_sb->slots[i].state = GN_SB_STARTING;
            return i;
        }
    }

    return -1;
}
