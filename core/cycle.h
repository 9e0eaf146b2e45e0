/*
 * A cycle is everything built from one configuration: the parsed and
 * merged directives, the listening sockets, the open log files. The
 * master builds a new cycle on reload and keeps the old one if the new
 * one fails; children inherit the cycle they were forked with.
 */

#ifndef GN_CORE_CYCLE_H_INCLUDED
#define GN_CORE_CYCLE_H_INCLUDED

#include "gn_config.h"

#include <netinet/in.h>

#include "pool.h"
#include "array.h"
#include "log.h"
#include "conf.h"
#include "feature.h"


typedef struct gn_cycle_s        gn_cycle_t;
typedef struct gn_srv_conf_s     gn_srv_conf_t;
typedef struct gn_loc_conf_s     gn_loc_conf_t;
typedef struct gn_listen_s       gn_listen_t;
typedef struct gn_open_file_s    gn_open_file_t;

struct gn_http_request_s;


/* A file opened by the master and shared by the children (access logs). */
struct gn_open_file_s {
    gn_str_t          name;        /* absolute, NUL-terminated */
    int               fd;
    void             *data;        /* gn_access_file_t of access logs */
};

typedef struct {
    gn_uint_t         status;
    gn_str_t          uri;         /* served from root, status unchanged */
} gn_error_page_t;

/* Per-location settings; the server and main levels have one too, and
 * inner levels inherit what they leave unset. These are the core's own;
 * every feature keeps its part of the level in conf[] (feature.h). */
struct gn_loc_conf_s {
    gn_str_t          name;        /* location prefix or exact path */
    gn_uint_t         exact;       /* location = ... */
    void             *regex;       /* gn_regex_t of `location ~`, or NULL */
    gn_uint_t         noregex;     /* `location ^~` */
    gn_uint_t         named;       /* `location @name` */

    gn_str_t          root;        /* absolute, no trailing slash */
    gn_str_t          alias;       /* absolute, no trailing slash; len 0:
                                      none (http_file.h: the mapping) */
    gn_uint_t         alias_slash; /* ... it was written with one */
    gn_str_t          alias_file;  /* where alias stands */
    gn_uint_t         alias_line;
    void             *alias_tpl;   /* with captures: rewrite.c's, */
    gn_int_t        (*alias_expand)(struct gn_http_request_s *r,
                                    gn_str_t *path);  /* ... expanded */
    gn_str_t          alias_dir;   /* ... the directory before them */
    gn_str_t          root_file;   /* where `root` was set; NULL data: */
    gn_uint_t         root_line;   /* the default */
    gn_array_t       *index;       /* of gn_str_t */
    gn_array_t       *error_pages; /* of gn_error_page_t */

    gn_srv_conf_t    *srv;
    void             *conf[GN_FEATURE_N];   /* each feature's part */
};

typedef struct {
    struct sockaddr_storage  sa;
    socklen_t                socklen;
    gn_int_t                 backlog;
    gn_uint_t                default_server;
    gn_uint_t                tls;
    gn_uint_t                http2;      /* HTTP/2 with prior knowledge */
    gn_uint_t                proxy_protocol;
    gn_int_t                 deferred;   /* TCP_DEFER_ACCEPT: 1 deferred,
                                            0 deferred=off, -1 unset (on) */
    gn_str_t                 text;       /* "127.0.0.1:8080" */
} gn_listen_opt_t;

struct gn_srv_conf_s {
    gn_array_t       *names;       /* of gn_str_t, lower case */
    gn_array_t        listens;     /* of gn_listen_opt_t */
    gn_loc_conf_t    *loc;         /* server-level settings */
    gn_array_t        locations;   /* of gn_loc_conf_t *, see sort */
    gn_array_t        regex_locations; /* of gn_loc_conf_t *, in order */
    gn_str_t          file;        /* where the block starts */
    gn_uint_t         line;
    void             *tls;         /* gn_tls_srv_t, built by tls.c */
};

/* One listening socket; several servers may share it (by name). */
struct gn_listen_s {
    struct sockaddr_storage  sa;
    socklen_t                socklen;
    gn_str_t                 text;
    int                      fd;
    gn_int_t                 backlog;
    gn_uint_t                deferred;      /* TCP_DEFER_ACCEPT */
    gn_uint_t                deferred_on;   /* a server said "deferred" */
    gn_uint_t                deferred_off;  /* ... "deferred=off" */
    gn_array_t               servers;       /* of gn_srv_conf_t * */
    gn_srv_conf_t           *default_srv;
    gn_uint_t                tls;
    gn_uint_t                http2;         /* a server said "http2" */
    gn_uint_t                proxy_protocol;  /* ... "proxy_protocol" */
    void                    *tls_ctx;       /* gn_tls_listen_t */
    /* the protocol served and the layer under it (TLS, or NULL), set
     * by the protocol at child start (conn.h) */
    const struct gn_conn_proto_s  *proto;
    const struct gn_conn_layer_s  *layer;
};

typedef struct {
    gn_int_t          children;    /* 0: auto */
    gn_str_t          user;
    gn_str_t          group;
    uid_t             uid;
    gid_t             gid;
    gn_str_t          pid;
    gn_str_t          chroot;      /* absolute, no trailing slash; or "" */
    gn_msec_t         shutdown_timeout;
    gn_int_t          max_connections;
    gn_int_t          rlimit_nofile;  /* GN_CONF_UNSET: keep the limit */
    gn_flag_t         batch_writes;   /* sendq.h */
    gn_array_t        servers;     /* of gn_srv_conf_t * */
} gn_main_conf_t;

/* The paths a configuration need not name (see gn_cycle_default_paths). */
typedef struct {
    const char       *pid;
    const char       *error_log;
    const char       *access_log;
    const char       *root;
} gn_cycle_paths_t;

struct gn_cycle_s {
    gn_pool_t        *pool;
    gn_str_t          conf_file;   /* absolute */
    gn_str_t          prefix;      /* ends in '/' */
    const gn_cycle_paths_t *paths; /* the defaults in force */
    gn_main_conf_t   *main;
    gn_loc_conf_t    *main_loc;
    gn_array_t        listening;   /* of gn_listen_t */
    gn_array_t        open_files;  /* of gn_open_file_t * */
    gn_log_t          log;         /* the error log of this cycle */
    int               error_log_fd;
    gn_uint_t         children;    /* resolved "auto" */
    void             *tls;         /* gn_tls_cycle_t, built by tls.c */
    gn_array_t        modules;     /* of gn_mod_t *, load order */
    const gn_conf_cmd_t **tables;  /* core + modules' directives */
    gn_uint_t         ntables;
};


extern gn_cycle_t  *gn_cycle;      /* the running cycle */

/*
 * Parses conf_file (prefix for relative paths; NULL: the installed prefix
 * and the installed default paths) into a new cycle and checks it; opens
 * nothing. Returns NULL with err filled (file:line message).
 */
/* The pid file of a configuration that does not load (gannet -s): its
 * main-level `pid` found by a scan that checks nothing (GN_OK), else
 * the default (GN_DECLINED), as an absolute path in out; GN_ERROR. */
gn_int_t gn_cycle_find_pid(const char *conf_file, const char *prefix,
    char *out, size_t size);

/* The registry's "core" (features.c): processes, user, pid, chroot,
 * limits of the master, servers, server names, locations, root, index,
 * error pages. */
extern const gn_feature_t  gn_core_feature;

/* A directive row's slot in a level's settings or the main settings. */
#define gn_loc_offset(f)   offsetof(gn_loc_conf_t, f)
#define gn_main_offset(f)  offsetof(gn_main_conf_t, f)

gn_cycle_t *gn_cycle_create(const char *conf_file, const char *prefix,
    char *err, size_t errlen);

/* The default pid file, logs and root: the installed ones (with_prefix 0,
 * absolute) or those of a tree given with -p (relative to it). */
const gn_cycle_paths_t *gn_cycle_default_paths(gn_uint_t with_prefix);

/*
 * Master only. Opens what the cycle needs -- listening sockets (taking
 * over those of `old` with the same address, so no connection is refused
 * across a reload), the error log and access logs. On failure logs to
 * `log` and closes what it opened; `old` stays intact.
 */
gn_int_t gn_cycle_open(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log);

/* Master only, after a successful switch: closes what `old` had and the
 * new one does not reuse, then frees it. */
void gn_cycle_release(gn_cycle_t *old, gn_cycle_t *cycle);

/* Frees a cycle that was never switched to (closes what it opened). */
void gn_cycle_destroy(gn_cycle_t *cycle);

/* USR1: every feature's reopen, in registry order (the error log, then
 * the files log directives named, then what follows from them). */
void gn_cycle_reopen(gn_cycle_t *cycle, uid_t owner);

/* The files log directives named (gn_cycle_open_file_add): opened (the
 * master, owned by the cycle's user; GN_ERROR logged to log), closed,
 * reopened by name (USR1). The errlog feature does it, after the error
 * log itself, so that their failures can be logged there. */
gn_int_t gn_cycle_open_files(gn_cycle_t *cycle, gn_log_t *log);
void gn_cycle_close_files(gn_cycle_t *cycle);
void gn_cycle_reopen_files(gn_cycle_t *cycle, uid_t owner);

/* Reopens *fdp's file by name (USR1) under the same descriptor number,
 * owned by `owner` ((uid_t) -1: unchanged); failures are logged. */
void gn_cycle_reopen_fd(int *fdp, const char *name, uid_t owner);

/* Configuration time: the open file of an absolute path (one per path,
 * shared by every directive naming it), opened by gn_cycle_open(). */
gn_open_file_t *gn_cycle_open_file_add(gn_conf_t *cf, gn_str_t *name);

/* Child only, before chroot(): makes every document root a path inside
 * the chroot (the configuration checked that each one lies there). */
void gn_cycle_chroot_paths(gn_cycle_t *cycle);

#endif /* GN_CORE_CYCLE_H_INCLUDED */
