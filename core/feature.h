/*
 * What a core feature is (nginx's ngx_module_t is the model): a directive
 * table, its part of every level's configuration (main, each server,
 * each location), and the hooks through which the cycle builds, opens
 * and closes what the feature needs. The registry itself, the list of
 * features in order, is features.c; cycle.c loops over it and names no
 * feature.
 *
 * A feature's part of a level is a struct of conf_size bytes that the
 * cycle allocates for every level and reaches as lc->conf[ID] (each
 * feature's header has an accessor, e.g. gn_http_conf(lc)). The rows of
 * its table with GN_CONF_LOC_CONF address that part; their plain slots
 * (flag, number, size, time, string) are initialised and merged from the
 * rows (gn_conf_init_slots, gn_conf_merge_slots), so a plain directive is
 * its row, its field and the code that uses it. A feature with
 * conf_size 0 has no part: its LOC_CONF rows address gn_loc_conf_t (the
 * core's own settings).
 *
 * This header needs no other core header but conf.h and log.h, so that
 * cycle.h can include it (for GN_FEATURE_N) and feature headers can
 * include it (for their ID) without an include cycle.
 */

#ifndef GN_CORE_FEATURE_H_INCLUDED
#define GN_CORE_FEATURE_H_INCLUDED

#include "gn_config.h"

#include "conf.h"
#include "log.h"


/* Indices into gn_features[] and every level's conf[]; in lookup order.
 * The names are the registry's "name" fields. */
typedef enum {
    GN_FEATURE_CORE = 0,   /* processes, servers, locations, root, index */
    GN_FEATURE_ERRLOG,     /* error_log */
    GN_FEATURE_ACCESS_LOG, /* log_format, access_log */
    GN_FEATURE_LISTEN,     /* listen; the listening sockets */
    GN_FEATURE_TYPES,      /* types, default_type */
    GN_FEATURE_HTTP,       /* request limits and timeouts, server_tokens */
    GN_FEATURE_FILE,       /* the open-file cache, sending files */
    GN_FEATURE_STATIC,     /* static files */
    GN_FEATURE_MODULES,    /* load_module, handler, modules' directives */
    GN_FEATURE_TLS,        /* certificates, protocols, session cache */
    GN_FEATURE_REWRITE,    /* rewrite, return */
    GN_FEATURE_ACCESS,     /* allow, deny, auth_basic, satisfy */
    GN_FEATURE_REALIP,     /* set_real_ip_from, real_ip_header */
    GN_FEATURE_PROXY,      /* upstream, proxy_pass, proxy_* */
    GN_FEATURE_HEADERS,    /* add_header, expires, tls_hsts */
    GN_FEATURE_TRY_FILES,  /* try_files, internal */
    GN_FEATURE_LIMIT,      /* limit_req*, limit_conn* */
    GN_FEATURE_AUTOINDEX,  /* autoindex, autoindex_* */
    GN_FEATURE_GZIP,       /* gzip, gzip_* */
    GN_FEATURE_N
} gn_feature_id_e;


struct gn_loc_conf_s;
struct gn_srv_conf_s;
struct gn_cycle_s;

typedef struct {
    const char            *name;
    const gn_conf_cmd_t   *commands;

    /* directive tables it may add to the parser at run time (modules) */
    gn_uint_t              extra_tables;

    /* its part of each level, zeroed, then its plain slots unset */
    size_t                 conf_size;

    /* A new level (main, server, location) was made: the rest of its
     * part (NULL: nothing beyond the plain slots). */
    gn_int_t             (*create_conf)(gn_conf_t *cf,
                                        struct gn_loc_conf_s *lc);

    /* lc inherits from prev (NULL: lc is the main level, merged first);
     * after the plain slots of every feature are merged. NULL: nothing
     * more. */
    gn_int_t             (*merge_conf)(gn_conf_t *cf,
                                       struct gn_loc_conf_s *lc,
                                       struct gn_loc_conf_s *prev);

    /* Every level is merged, under -t too, in the master; GN_ERROR with
     * cf->err filled. First check_cycle, which only reads the
     * configuration (the modules' GN_MODULE_CHECKs); then, after the
     * core resolved the user, check_level for each server and location
     * level (a server's own, its locations, its regex locations; before
     * the core checks that level's root against the chroot); then
     * init_cycle, which builds what the
     * feature needs from the whole configuration (listeners, TLS
     * credentials). Each in registry order. */
    gn_int_t             (*check_cycle)(gn_conf_t *cf,
                                        struct gn_cycle_s *cycle);
    gn_int_t             (*check_level)(gn_conf_t *cf,
                                        struct gn_cycle_s *cycle,
                                        struct gn_srv_conf_s *sc,
                                        struct gn_loc_conf_s *lc);
    gn_int_t             (*init_cycle)(gn_conf_t *cf,
                                       struct gn_cycle_s *cycle);

    /* Master: open what the cycle needs (files, sockets), taking over
     * from `old` (NULL at start) what it can. Logs to log on failure. */
    gn_int_t             (*open_cycle)(struct gn_cycle_s *cycle,
                                       struct gn_cycle_s *old,
                                       gn_log_t *log);

    /* Master: close what open_cycle opened for `cycle` and `keep` (the
     * cycle that replaces it, or the one it failed to replace; NULL)
     * does not use. Also after a failed open_cycle of this or a later
     * feature. */
    void                 (*close_cycle)(struct gn_cycle_s *cycle,
                                        struct gn_cycle_s *keep);

    /* USR1: reopen the files (logs), owned by `owner` ((uid_t) -1:
     * unchanged). */
    void                 (*reopen)(struct gn_cycle_s *cycle, uid_t owner);

    /* The cycle is freed (after close_cycle). */
    void                 (*exit_cycle)(struct gn_cycle_s *cycle);
} gn_feature_t;


/* GN_FEATURE_N entries, indexed by gn_feature_id_e (features.c). */
extern const gn_feature_t *const  gn_features[GN_FEATURE_N];

/* A feature's part of a level. */
#define gn_feature_conf(lc, id)  ((lc)->conf[id])

#endif /* GN_CORE_FEATURE_H_INCLUDED */
