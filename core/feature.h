/*
 * The registry of the core's configuration features (nginx's ngx_modules[]
 * is the model): each entry owns a directive table and the hooks that
 * make and merge its part of a level's configuration. cycle.c loops over
 * it and names no feature; a feature's plain directives (flag, number,
 * size, time, string) need only their table row, with its default: their
 * slots are initialised and merged from the rows (gn_conf_init_slots,
 * gn_conf_merge_slots).
 *
 * (The layering of issue 19 moves the remaining feature fields and code
 * out of cycle.c step by step; this is the registry they move into.)
 */

#ifndef GN_CORE_FEATURE_H_INCLUDED
#define GN_CORE_FEATURE_H_INCLUDED

#include "gn_config.h"

#include "conf.h"
#include "cycle.h"


typedef struct {
    const char            *name;
    const gn_conf_cmd_t   *commands;

    /* directive tables it may add to the parser at run time (modules) */
    gn_uint_t              extra_tables;

    /* a new level (main, server, location) was made: its part of lc;
     * NULL: nothing beyond the plain slots */
    gn_int_t             (*init_loc)(gn_conf_t *cf, gn_loc_conf_t *lc);

    /* lc inherits from prev (NULL: lc is the top level); after the plain
     * slots of every feature are merged. NULL: nothing more */
    gn_int_t             (*merge_loc)(gn_conf_t *cf, gn_loc_conf_t *lc,
                                      gn_loc_conf_t *prev);
} gn_feature_t;


/* In lookup order; ends with a NULL name. */
extern const gn_feature_t  gn_features[];

#endif /* GN_CORE_FEATURE_H_INCLUDED */
