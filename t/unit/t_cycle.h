/*
 * Unit tests' shared loader: a configuration given as text, parsed and
 * checked by gn_cycle_create() as `gannet -t` would (nothing opened).
 */

#ifndef GN_T_CYCLE_H_INCLUDED
#define GN_T_CYCLE_H_INCLUDED

#include "gn_config.h"

#include "cycle.h"


/* Writes `text` to a file in a new temporary directory, loads it with
 * that directory as the prefix, and removes both; the file's name goes
 * to `name` (NULL: not wanted), for the " in FILE:LINE" of errors. NULL
 * with err filled when the configuration is refused (or the file cannot
 * be written). */
gn_cycle_t *t_cycle_load(const char *text, char *name, size_t namelen,
    char *err, size_t errlen);

/* "user NAME;" for the user running the tests: a configuration loaded
 * as root needs one that exists. */
const char *t_cycle_user(void);

#endif /* GN_T_CYCLE_H_INCLUDED */
