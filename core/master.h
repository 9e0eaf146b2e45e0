/*
 * The master process: forks the children, supervises and respawns them,
 * reloads the configuration, stops. Never touches a client socket.
 */

#ifndef GN_CORE_MASTER_H_INCLUDED
#define GN_CORE_MASTER_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"


/* Blocks the master's signals, before the first fork (the children
 * inherit the mask: child.c). */
void gn_master_block_signals(void);

/* Master: `chroot` needs CAP_SYS_CHROOT, which the master keeps only
 * when it started as root with `chroot` configured. Logs why not. */
gn_int_t gn_master_check_chroot(gn_cycle_t *cycle, gn_log_t *log);

/* Master, at start (before gn_master_restrict drops the capability to
 * raise a hard limit) and at each reload, before forking children:
 * applies rlimit_nofile and warns when a child's descriptors may exceed
 * the limit it inherits. */
void gn_master_rlimit(gn_cycle_t *cycle);

/* Master, once everything is open and before the first fork: keeps only
 * the capabilities it still needs (caps.h), for good. */
gn_int_t gn_master_restrict(gn_cycle_t *cycle);

/* Runs until stopped; returns the exit status. */
int gn_master_run(const char *conf_file, const char *prefix);

/* At start, before anything can replace the binary on disk: the path a
 * binary upgrade (USR2) runs. */
void gn_master_self_exe(void);

/* Whether the pid file is still this master's (not after a binary
 * upgrade handed it to the new master). */
gn_uint_t gn_master_pid_file_is_ours(void);

/*
 * The reload verdict: after each reload the master replaces the file
 * "<pid file>.reload" with one line, "SEQ START_MS ok GENERATION" or
 * "SEQ START_MS failed [level] MESSAGE" (START_MS: wall clock at the
 * start of that reload), so that `gannet -s reload` can wait for the
 * verdict of its own signal and print it.
 */
void gn_master_verdict_path(const char *pid_file, char *buf, size_t size);
gn_int_t gn_master_verdict_read(const char *path, uint64_t *start_ms,
    gn_uint_t *ok, char *msg, size_t size);
uint64_t gn_master_wall_msec(void);

#endif /* GN_CORE_MASTER_H_INCLUDED */
