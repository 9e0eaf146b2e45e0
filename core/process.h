/*
 * Process helpers: the master's table of children, fork, process titles.
 */

#ifndef GN_CORE_PROCESS_H_INCLUDED
#define GN_CORE_PROCESS_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"
#include "scoreboard.h"


typedef struct {
    pid_t        pid;            /* 0: no process */
    gn_uint_t    generation;
    gn_msec_t    started;        /* monotonic */
    gn_uint_t    exiting;        /* told to drain or stop */
    gn_uint_t    fails;          /* quick deaths in a row (back-off) */
    gn_msec_t    respawn_at;     /* monotonic; 0: none pending */
} gn_process_t;


/* Indexed by scoreboard slot. Master only. */
extern gn_process_t  gn_processes[GN_SB_SLOTS];

/* A signal of the process model: the master waits for it (blocked
 * before the first fork, fetched by sigtimedwait), a child handles those
 * it needs; `name` is its `gannet -s` word, or NULL when -s does not
 * send it. The table ends with signo 0. */
typedef struct {
    int                 signo;
    const char         *name;
} gn_process_signal_t;

extern const gn_process_signal_t  gn_process_signals[];

/* What a forked child runs (gn_child_run); it does not return. */
typedef void (*gn_process_main_pt)(gn_cycle_t *cycle, gn_int_t slot,
    gn_uint_t generation);

/* Master: forks a child into `slot` that runs `run`. Returns its pid, or
 * -1 (logged). */
pid_t gn_process_spawn(gn_cycle_t *cycle, gn_int_t slot,
    gn_uint_t generation, gn_process_main_pt run);

/* Remembers argv so the process title can be rewritten later. */
void gn_process_title_init(int argc, char **argv);
void gn_process_title_set(const char *title);

/* Monotonic milliseconds (the master has no event loop clock). */
gn_msec_t gn_process_msec(void);

#endif /* GN_CORE_PROCESS_H_INCLUDED */
