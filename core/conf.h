/*
 * Configuration parser: tokenizer, include with globs, table-driven
 * directives with context and arity checks, and generic slot setters.
 *
 * The syntax is nginx's: `name arg ...;`, blocks `name args { ... }`,
 * `#` comments, "double" and 'single' quotes with \" \' \\ \n \t \r
 * escapes, `include GLOB;` anywhere.
 *
 * Errors: parsing stops at the first error; cf->err then holds the whole
 * message ending in " in FILE:LINE", e.g.
 *     unknown directive "lsten" in /etc/gannet/gannet.conf:12
 * and the caller logs it (this layer never logs).
 */

#ifndef GN_CORE_CONF_H_INCLUDED
#define GN_CORE_CONF_H_INCLUDED

#include "gn_config.h"

#include "pool.h"
#include "array.h"
#include "str.h"


/* Contexts (where a directive is allowed). */
#define GN_CONF_MAIN        0x00000001
#define GN_CONF_SRV         0x00000002
#define GN_CONF_LOC         0x00000004
#define GN_CONF_ANY         0x00000007

/* Arity. The directive name is not counted. */
#define GN_CONF_NOARGS      0x00000100
#define GN_CONF_TAKE1       0x00000200
#define GN_CONF_TAKE2       0x00000400
#define GN_CONF_TAKE3       0x00000800
#define GN_CONF_TAKE4       0x00001000
#define GN_CONF_TAKE12      (GN_CONF_TAKE1 | GN_CONF_TAKE2)
#define GN_CONF_TAKE23      (GN_CONF_TAKE2 | GN_CONF_TAKE3)
#define GN_CONF_TAKE123     (GN_CONF_TAKE1 | GN_CONF_TAKE2 | GN_CONF_TAKE3)
#define GN_CONF_TAKE1234    (GN_CONF_TAKE123 | GN_CONF_TAKE4)
#define GN_CONF_1MORE       0x00010000
#define GN_CONF_2MORE       0x00020000
#define GN_CONF_FLAG        0x00040000     /* exactly one arg: on | off */
#define GN_CONF_BLOCK       0x00100000     /* must be followed by { ... } */

/* Which configuration struct a directive's offset refers to. */
#define GN_CONF_MAIN_CONF   0
#define GN_CONF_SRV_CONF    1
#define GN_CONF_LOC_CONF    2

/* "Not set" markers, so that inner levels can inherit outer values. */
#define GN_CONF_UNSET        -1
#define GN_CONF_UNSET_UINT   (gn_uint_t) -1
#define GN_CONF_UNSET_SIZE   (size_t) -1
#define GN_CONF_UNSET_MSEC   (gn_msec_t) -1

#define gn_conf_init_value(conf, def)                                         \
    if (conf == GN_CONF_UNSET) { conf = def; }
#define gn_conf_init_size_value(conf, def)                                    \
    if (conf == GN_CONF_UNSET_SIZE) { conf = def; }
#define gn_conf_init_msec_value(conf, def)                                    \
    if (conf == GN_CONF_UNSET_MSEC) { conf = def; }
#define gn_conf_merge_value(conf, prev, def)                                  \
    if (conf == GN_CONF_UNSET) { conf = (prev == GN_CONF_UNSET) ? def : prev; }
#define gn_conf_merge_size_value(conf, prev, def)                             \
    if (conf == GN_CONF_UNSET_SIZE) {                                         \
        conf = (prev == GN_CONF_UNSET_SIZE) ? def : prev; }
#define gn_conf_merge_msec_value(conf, prev, def)                             \
    if (conf == GN_CONF_UNSET_MSEC) {                                         \
        conf = (prev == GN_CONF_UNSET_MSEC) ? def : prev; }
#define gn_conf_merge_str_value(conf, prev, def)                              \
    if ((conf).data == NULL) {                                                \
        if ((prev).data) { conf = prev; }                                     \
        else { (conf).len = sizeof(def) - 1; (conf).data = (u_char *) def; } }

/* What set handlers return: GN_CONF_OK, or a message that the engine
 * completes as `"<name>" directive <message> in FILE:LINE`, or
 * GN_CONF_ERROR when the handler already filled cf->err itself. */
#define GN_CONF_OK          NULL
#define GN_CONF_ERROR       ((char *) -1)


typedef struct gn_conf_s      gn_conf_t;
typedef struct gn_conf_cmd_s  gn_conf_cmd_t;

typedef char *(*gn_conf_set_pt)(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

/* Called for every line of a block whose contents are not directives
 * (e.g. `types { text/html html htm; }`); cf->args holds the words. */
typedef char *(*gn_conf_handler_pt)(gn_conf_t *cf, void *data);

struct gn_conf_cmd_s {
    gn_str_t         name;
    gn_uint_t        type;      /* contexts | arity | GN_CONF_BLOCK */
    gn_conf_set_pt   set;
    gn_uint_t        conf;      /* GN_CONF_MAIN_CONF, _SRV_CONF, _LOC_CONF */
    size_t           offset;    /* of the slot in that struct */
    const void      *post;      /* setter-specific (e.g. a minimum) */
    const char      *dflt;      /* a plain slot's default, as written in
                                   a file (gn_conf_merge_slots); NULL */
};

#define gn_conf_null_cmd  { gn_null_string, 0, NULL, 0, 0, NULL, NULL }

typedef struct {
    gn_str_t         name;
    gn_uint_t        value;
} gn_conf_enum_t;

/* A file named by a directive: its absolute path, and where the
 * directive stands (for the errors found when the file is used). */
typedef struct {
    gn_str_t          path;
    gn_str_t          file;
    gn_uint_t         line;
} gn_conf_path_t;

/* gn_conf_set_num_slot's post: the smallest value allowed (else 0) */
extern const gn_int_t  gn_conf_num_min_1;

typedef struct {
    gn_str_t         name;
    gn_uint_t        line;
} gn_conf_file_t;

struct gn_conf_s {
    gn_array_t            *args;         /* of gn_str_t; [0] is the name */
    gn_pool_t             *pool;         /* everything built lives here */
    gn_pool_t             *temp_pool;    /* freed after parsing */
    gn_conf_file_t        *file;         /* current file and line */
    gn_uint_t              ctx;          /* GN_CONF_MAIN, _SRV or _LOC */
    void                  *conf[3];      /* main, srv, loc structs now */
    const gn_conf_cmd_t  **tables;       /* NULL-terminated list of */
                                         /* NULL-name-terminated tables */

    /* set: the struct a row of tables[table] with cmd->conf `which`
     * addresses (the cycle: a feature's part of the level); NULL:
     * conf[which] */
    void                *(*conf_of)(gn_conf_t *cf, gn_uint_t table,
                                    gn_uint_t which);
    gn_conf_handler_pt     handler;      /* non-NULL: raw block lines */
    void                  *handler_data;
    gn_str_t               prefix;       /* relative paths: "<prefix>/" */
    gn_str_t               conf_prefix;  /* relative includes: conf dir */
    gn_uint_t              include_depth;
    void                  *data;         /* for the caller (the cycle) */
    struct gn_conf_buf_s  *buf;          /* input being read (conf.c) */

    /* set: a scan, not a parse (gannet -s when the configuration does not
     * load): every directive goes to scan with its block depth, blocks
     * and includes are read through, nothing is checked */
    void                 (*scan)(gn_conf_t *cf, gn_uint_t depth);
    void                  *scan_data;
    gn_uint_t              scan_depth;

    char                   err[1024];
};


/* gannet -T: when set, called with the name and the text of every
 * configuration file as it is read (includes too, in order). */
typedef void (*gn_conf_dump_pt)(const char *name, const u_char *text,
    size_t len);
extern gn_conf_dump_pt  gn_conf_dump;

/* Initialises cf (args array, err) for a parse into `pool`. */
gn_int_t gn_conf_init(gn_conf_t *cf, gn_pool_t *pool);

/* With a filename: parses that file in the current context. With NULL:
 * parses a block up to its closing "}" (from a GN_CONF_BLOCK handler).
 * Returns GN_OK, or GN_ERROR with cf->err filled. */
gn_int_t gn_conf_parse(gn_conf_t *cf, const char *filename);

/* From a GN_CONF_BLOCK handler: parses its block, whose lines are not
 * directives, giving each line (cf->args) to handler with data (`types
 * { ... }`, `upstream NAME { ... }`). GN_OK, or GN_ERROR with cf->err
 * filled. */
gn_int_t gn_conf_parse_lines(gn_conf_t *cf, gn_conf_handler_pt handler,
    void *data);

/* Parses a configuration held in memory (tests, embedded defaults);
 * `name` is what error messages call the file. */
gn_int_t gn_conf_parse_string(gn_conf_t *cf, const char *name,
    const u_char *text, size_t len);

/* Fills cf->err with the formatted message plus " in FILE:LINE". */
void gn_conf_error(gn_conf_t *cf, const char *fmt, ...) gn_printf(2, 3);

/* Makes a path absolute: relative names are taken from cf->prefix
 * (conf_prefix when `conf_relative`). Returns GN_OK or GN_ERROR (memory). */
gn_int_t gn_conf_full_name(gn_conf_t *cf, gn_str_t *name,
    gn_uint_t conf_relative);

/*
 * Plain slots: the rows of `cmds` for struct `which` (GN_CONF_*_CONF)
 * whose setter is one of the flag, number, size, time, string or enum
 * setters below. gn_conf_init_slots marks each of them unset in conf;
 * gn_conf_merge_slots gives each one still unset the value of `prev`
 * (the enclosing level, already merged) or, at the top (prev NULL) or
 * where prev has none either, the row's `dflt` parsed by the row's own
 * setter as if it were written in the file (no dflt: it stays unset).
 * So a plain directive is its row and the code that uses it. Returns
 * GN_OK, or GN_ERROR with cf->err filled (a bad default).
 */
void gn_conf_init_slots(const gn_conf_cmd_t *cmds, gn_uint_t which,
    void *conf);
gn_int_t gn_conf_merge_slots(gn_conf_t *cf, const gn_conf_cmd_t *cmds,
    gn_uint_t which, void *conf, const void *prev);

/* Generic slot setters; `post` unused unless stated. The slot at
 * conf + cmd->offset must start "unset"; a second occurrence in the same
 * block gives "is duplicate". */
char *gn_conf_set_flag_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);                                          /* gn_flag_t */
char *gn_conf_set_str_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);                                          /* gn_str_t */
char *gn_conf_set_path_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);                                  /* gn_str_t, absolute */
char *gn_conf_set_file_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);    /* gn_conf_path_t: absolute, with the directive's
                       file:line for the errors found when it is read */
char *gn_conf_set_str_array_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);      /* gn_array_t * of gn_str_t; all args, appending */
char *gn_conf_set_num_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);                                          /* gn_int_t */
char *gn_conf_set_size_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);                                          /* size_t */
char *gn_conf_set_msec_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);                                          /* gn_msec_t */
/* One of the names of the gn_conf_enum_t table at post (ended by a row
 * with an empty name), in any case as the flags; the slot gets its
 * value. */
char *gn_conf_set_enum_slot(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);                                          /* gn_uint_t */

#endif /* GN_CORE_CONF_H_INCLUDED */
