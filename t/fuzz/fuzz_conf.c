/*
 * libFuzzer harness: the configuration parser (core/conf.c) through
 * gn_conf_parse_string(), with a small directive table in the manner of
 * t/unit/test_conf.c: main-level slots of every setter type, a "server"
 * block with "location" blocks inside, a raw-line "types" block and a
 * handler that fails.
 *
 * Invariants: no crash; every argument a handler sees is NUL-terminated;
 * an error message is always " in fuzz.conf:LINE" at its end, with LINE
 * a line of the input. Inputs mentioning "include" are skipped: an
 * include reads the file system, which a fuzzer must not wander through
 * (no escape sequence can spell the word, so the check is exact).
 */

#include "gn_config.h"

#include "conf.h"

#define FZ_NAME  "fuzz_conf"
#include "fz.h"


typedef struct {
    gn_str_t      path;
    gn_str_t      root;
    gn_str_t      alias;
    gn_flag_t     sendfile;
    gn_array_t   *index;
    gn_array_t   *types;
} fz_loc_conf_t;

typedef struct {
    gn_array_t      *listen;
    gn_msec_t        keepalive;
    size_t           body_size;
    fz_loc_conf_t   *loc;
    gn_uint_t        nlocations;
} fz_srv_conf_t;

typedef struct {
    gn_int_t      workers;
    gn_flag_t     daemon;
    gn_str_t      pid;
    gn_str_t      user;
    gn_str_t      level;
    size_t        buffer_size;
    gn_msec_t     timeout;
    gn_array_t   *env;
    gn_uint_t     nservers;
} fz_main_conf_t;


static char *fz_echo(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);
static char *fz_fail(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);
static char *fz_server(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);
static char *fz_location(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *fz_types(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);


static const gn_conf_cmd_t  fz_main_cmds[] = {
    { gn_string("workers"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, workers), NULL, NULL },
    { gn_string("daemon"), GN_CONF_MAIN | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, daemon), NULL, NULL },
    { gn_string("pid"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_path_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, pid), NULL, NULL },
    { gn_string("user"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, user), NULL, NULL },
    /* a str slot since the enum slot went (no directive used it): the
     * corpus's log_level lines still parse */
    { gn_string("log_level"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, level), NULL, NULL },
    { gn_string("buffer_size"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, buffer_size), NULL, NULL },
    { gn_string("timeout"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, timeout), NULL, NULL },
    { gn_string("env"), GN_CONF_MAIN | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_MAIN_CONF,
      offsetof(fz_main_conf_t, env), NULL, NULL },
    { gn_string("server"), GN_CONF_MAIN | GN_CONF_BLOCK | GN_CONF_NOARGS,
      fz_server, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("echo"), GN_CONF_ANY | GN_CONF_1MORE,
      fz_echo, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("pair"), GN_CONF_ANY | GN_CONF_TAKE23,
      fz_echo, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("fail"), GN_CONF_MAIN | GN_CONF_NOARGS,
      fz_fail, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    gn_conf_null_cmd
};


static const gn_conf_cmd_t  fz_http_cmds[] = {
    { gn_string("listen"), GN_CONF_SRV | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_SRV_CONF,
      offsetof(fz_srv_conf_t, listen), NULL, NULL },
    { gn_string("keepalive_timeout"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_SRV_CONF,
      offsetof(fz_srv_conf_t, keepalive), NULL, NULL },
    { gn_string("client_max_body_size"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_SRV_CONF,
      offsetof(fz_srv_conf_t, body_size), NULL, NULL },
    { gn_string("root"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_TAKE1,
      gn_conf_set_path_slot, GN_CONF_LOC_CONF,
      offsetof(fz_loc_conf_t, root), NULL, NULL },
    { gn_string("alias"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF,
      offsetof(fz_loc_conf_t, alias), NULL, NULL },
    { gn_string("sendfile"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      offsetof(fz_loc_conf_t, sendfile), NULL, NULL },
    { gn_string("index"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_LOC_CONF,
      offsetof(fz_loc_conf_t, index), NULL, NULL },
    { gn_string("location"), GN_CONF_SRV | GN_CONF_BLOCK | GN_CONF_TAKE1,
      fz_location, GN_CONF_SRV_CONF, 0, NULL, NULL },
    { gn_string("types"),
      GN_CONF_SRV | GN_CONF_LOC | GN_CONF_BLOCK | GN_CONF_NOARGS,
      fz_types, GN_CONF_LOC_CONF, 0, NULL, NULL },
    gn_conf_null_cmd
};


static const gn_conf_cmd_t  *fz_tables[] = {
    fz_main_cmds, fz_http_cmds, NULL
};


static void
fz_check_args(gn_conf_t *cf)
{
    gn_str_t   *value;
    gn_uint_t   i;

    value = cf->args->elts;

    for (i = 0; i < cf->args->nelts; i++) {
        fz_check(value[i].data != NULL, "argument has data");
        fz_check(value[i].data[value[i].len] == '\0',
                 "argument NUL-terminated");
    }
}


static fz_loc_conf_t *
fz_loc_create(gn_pool_t *p)
{
    fz_loc_conf_t  *lcf;

    lcf = gn_pcalloc(p, sizeof(fz_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }

    lcf->sendfile = GN_CONF_UNSET;

    return lcf;
}


static char *
fz_echo(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    fz_check_args(cf);

    return GN_CONF_OK;
}


static char *
fz_fail(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_conf_error(cf, "custom failure %d", 42);
    return GN_CONF_ERROR;
}


static char *
fz_server(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    void             *saved[3];
    gn_int_t          rc;
    gn_uint_t         ctx;
    fz_srv_conf_t    *scf;
    fz_main_conf_t   *mc = conf;

    fz_check_args(cf);

    scf = gn_pcalloc(cf->pool, sizeof(fz_srv_conf_t));
    if (scf == NULL) {
        return (char *) "out of memory";
    }

    scf->keepalive = GN_CONF_UNSET_MSEC;
    scf->body_size = GN_CONF_UNSET_SIZE;
    scf->loc = fz_loc_create(cf->pool);
    if (scf->loc == NULL) {
        return (char *) "out of memory";
    }

    mc->nservers++;

    memcpy(saved, cf->conf, sizeof(saved));
    ctx = cf->ctx;

    cf->ctx = GN_CONF_SRV;
    cf->conf[GN_CONF_SRV_CONF] = scf;
    cf->conf[GN_CONF_LOC_CONF] = scf->loc;

    rc = gn_conf_parse(cf, NULL);

    memcpy(cf->conf, saved, sizeof(saved));
    cf->ctx = ctx;

    return rc == GN_OK ? GN_CONF_OK : GN_CONF_ERROR;
}


static char *
fz_location(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    void            *saved;
    gn_int_t         rc;
    gn_str_t        *value;
    fz_srv_conf_t   *scf = conf;
    fz_loc_conf_t   *lcf;

    fz_check_args(cf);

    lcf = fz_loc_create(cf->pool);
    if (lcf == NULL) {
        return (char *) "out of memory";
    }

    scf->nlocations++;

    value = cf->args->elts;
    lcf->path = value[1];

    saved = cf->conf[GN_CONF_LOC_CONF];
    cf->ctx = GN_CONF_LOC;
    cf->conf[GN_CONF_LOC_CONF] = lcf;

    rc = gn_conf_parse(cf, NULL);

    cf->conf[GN_CONF_LOC_CONF] = saved;
    cf->ctx = GN_CONF_SRV;

    return rc == GN_OK ? GN_CONF_OK : GN_CONF_ERROR;
}


static char *
fz_types_line(gn_conf_t *cf, void *data)
{
    gn_str_t        *value, *t;
    gn_uint_t        i;
    fz_loc_conf_t   *lcf = data;

    fz_check_args(cf);

    value = cf->args->elts;

    if (cf->args->nelts < 2) {
        return (char *) "a types line needs a type and extensions";
    }

    for (i = 1; i < cf->args->nelts; i++) {
        t = gn_array_push(lcf->types);
        if (t == NULL) {
            return (char *) "out of memory";
        }

        *t = value[i];
    }

    return GN_CONF_OK;
}


static char *
fz_types(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_int_t         rc;
    fz_loc_conf_t   *lcf = conf;

    if (lcf->types == NULL) {
        lcf->types = gn_array_create(cf->pool, 4, sizeof(gn_str_t));
        if (lcf->types == NULL) {
            return (char *) "out of memory";
        }
    }

    cf->handler = fz_types_line;
    cf->handler_data = lcf;

    rc = gn_conf_parse(cf, NULL);

    cf->handler = NULL;
    cf->handler_data = NULL;

    return rc == GN_OK ? GN_CONF_OK : GN_CONF_ERROR;
}


/* The message ends in " in fuzz.conf:LINE", 1 <= LINE <= maxline. */
static void
fz_check_err(const char *err, size_t maxline)
{
    size_t       len, line;
    const char  *p, *tail;

    len = strnlen(err, sizeof(((gn_conf_t *) NULL)->err));

    fz_check(len > 0, "an error has a message");
    fz_check(len < sizeof(((gn_conf_t *) NULL)->err),
             "the message is NUL-terminated");

    for (p = err + len; p > err && p[-1] >= '0' && p[-1] <= '9'; p--) {
        /* void */
    }

    fz_check(p < err + len, "the message ends in a line number");

    tail = " in fuzz.conf:";
    fz_check((size_t) (p - err) >= strlen(tail)
             && memcmp(p - strlen(tail), tail, strlen(tail)) == 0,
             "the message ends in \" in fuzz.conf:LINE\"");

    line = 0;
    for ( /* void */ ; p < err + len; p++) {
        fz_check(line < 1000000000, "line number overflow");
        line = line * 10 + (size_t) (*p - '0');
    }

    fz_check(line >= 1 && line <= maxline, "the line is in the input");
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char           *text;
    size_t            i, lines;
    gn_int_t          rc;
    gn_conf_t         cf;
    gn_pool_t        *pool;
    fz_main_conf_t   *mcf;

    for (i = 0; i + 7 <= size; i++) {
        if (memcmp(data + i, "include", 7) == 0) {
            return 0;
        }
    }

    /* small blocks: most allocations are separate mallocs ASan watches */
    pool = gn_pool_create(256);
    text = malloc(size ? size : 1);

    if (pool == NULL || text == NULL) {
        goto done;
    }

    if (size) {
        memcpy(text, data, size);
    }

    memset(&cf, 0, sizeof(gn_conf_t));

    if (gn_conf_init(&cf, pool) != GN_OK) {
        goto done;
    }

    mcf = gn_pcalloc(pool, sizeof(fz_main_conf_t));
    if (mcf == NULL) {
        goto done;
    }

    mcf->workers = GN_CONF_UNSET;
    mcf->daemon = GN_CONF_UNSET;
    mcf->buffer_size = GN_CONF_UNSET_SIZE;
    mcf->timeout = GN_CONF_UNSET_MSEC;

    cf.tables = fz_tables;
    cf.conf[GN_CONF_MAIN_CONF] = mcf;
    gn_str_set(&cf.prefix, "/srv/gannet/");
    gn_str_set(&cf.conf_prefix, "/nonexistent/gannet-fuzz/");

    rc = gn_conf_parse_string(&cf, "fuzz.conf", text, size);

    fz_check(rc == GN_OK || rc == GN_ERROR, "known result");

    if (rc == GN_ERROR) {
        lines = 1;
        for (i = 0; i < size; i++) {
            lines += (text[i] == '\n');
        }

        fz_check_err(cf.err, lines);
    }

done:

    free(text);
    gn_pool_destroy(pool);

    return 0;
}
