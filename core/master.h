/*
 * The master process: forks the children, supervises and respawns them,
 * reloads the configuration, stops. Never touches a client socket.
 */

#ifndef GN_CORE_MASTER_H_INCLUDED
#define GN_CORE_MASTER_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"


/* The signals the master waits for, blocked before the first fork. */
void gn_master_block_signals(void);

/* Runs until stopped; returns the exit status. */
int gn_master_run(const char *conf_file, const char *prefix);

#endif /* GN_CORE_MASTER_H_INCLUDED */
