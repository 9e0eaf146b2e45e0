/*
 * A child process: drops privileges, runs the event loop, drains on
 * QUIT, exits on TERM. Never forks.
 */

#ifndef GN_CORE_CHILD_H_INCLUDED
#define GN_CORE_CHILD_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"


void gn_child_run(gn_cycle_t *cycle, gn_int_t slot, gn_uint_t generation)
    __attribute__((noreturn));

#endif /* GN_CORE_CHILD_H_INCLUDED */
