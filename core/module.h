/*
 * Modules: loading (dlopen in the master, ABI checks), their typed
 * directives and per-location configuration, the `handler` directive,
 * and calling their hooks.
 */

#ifndef GN_CORE_MODULE_H_INCLUDED
#define GN_CORE_MODULE_H_INCLUDED

#include "gn_config.h"

#include <gannet/module.h>

#include "cycle.h"


typedef struct {
    const gn_module_t   *desc;
    gn_str_t             path;
    void                *handle;      /* dlopen */
    gn_uint_t            index;       /* in cycle->modules */
    gn_uint_t            ndirectives;
    gn_conf_cmd_t       *cmds;        /* its directives for the parser */
    gn_check_pt          check;       /* GN_MODULE_CHECK, or NULL */
} gn_mod_t;

/* Where a directive's value was written (file NULL: its default). */
typedef struct {
    const char          *file;
    gn_uint_t            line;
} gn_mod_src_t;

/* One module's configuration at one level (main, server, location). */
typedef struct {
    void                *conf;        /* conf_size bytes */
    uint64_t             set;         /* directives given at this level */
    gn_mod_src_t        *src;         /* [ndirectives] or NULL: none set */
} gn_mod_conf_t;

/* A `handler NAME .ext ...;` entry. */
typedef struct {
    gn_str_t             ext;         /* empty: every URI */
    gn_mod_t            *mod;
} gn_mod_handler_t;


/* load_module accepts this many modules (features.c reserves the parser
 * tables for their directives). */
#define GN_MAX_MODULES       64

/* The version rule of load_module, alone (pure, never logs; any process):
 * can a module whose descriptor says major.minor -- minor being the
 * oldest of that major it needs -- load in a server implementing
 * smajor.sminor? GN_OK, or GN_ERROR with err (len bytes) saying why, to
 * follow `module "PATH" `: "needs ABI 1.3, this server implements 1.2". */
gn_int_t gn_module_check_version(unsigned major, unsigned minor,
    unsigned smajor, unsigned sminor, char *err, size_t len);

/* The "modules" feature's part of a level (feature.h). */
typedef struct {
    gn_mod_conf_t       *confs;       /* [cycle->modules.nelts] */
    gn_array_t          *handlers;    /* of gn_mod_handler_t, or NULL */
} gn_modules_conf_t;

#define gn_modules_conf(lc)                                                   \
    ((gn_modules_conf_t *) (lc)->conf[GN_FEATURE_MODULES])

/* The registry's "modules": load_module and handler; each loaded
 * module's directives (typed, merged from their descriptors); every
 * module's check_conf (ABI 1.2) on every merged level, whose refusal is
 * the configuration's error with the file and line of the directive;
 * the modules are dlclosed with their cycle. */
extern const gn_feature_t  gn_modules_feature;

/* The ABI's function table (api.c), given to every module hook. */
extern const gn_api_t  gn_api;

/* api->conf_error (in check_conf only). */
int gn_module_conf_error(const char *directive, const char *fmt, ...)
    gn_printf(2, 3);

/* The module whose handler serves this URI in this location, or NULL. */
gn_mod_t *gn_module_handler_for(gn_loc_conf_t *lc, const gn_str_t *uri);

/* init_master (master, before fork) / init_child / exit_child of every
 * loaded module, in load order. */
gn_int_t gn_module_init_master(gn_cycle_t *cycle, gn_log_t *log);
gn_int_t gn_module_init_child(gn_cycle_t *cycle);
void gn_module_exit_child(gn_cycle_t *cycle);

/* The module's conf struct for a location (NULL if it has none). */
void *gn_module_conf(gn_loc_conf_t *lc, const gn_module_t *desc);

#endif /* GN_CORE_MODULE_H_INCLUDED */
