/*
 * Configuration parser: tokenizer, every engine error message with its
 * exact " in FILE:LINE", include (globs, missing files, depth), block
 * handlers, raw-line handlers and the generic slot setters, driven through
 * small directive tables defined here.
 */

#include "gn_config.h"

#include "conf.h"
#include "../tap.h"


typedef struct {
    gn_str_t     ext;
    gn_str_t     type;
} t_type_t;

typedef struct {
    gn_str_t     path;          /* the location's argument */
    gn_str_t     root;          /* path slot */
    gn_str_t     alias;         /* str slot */
    gn_flag_t    sendfile;
    gn_array_t  *index;
    gn_array_t  *header;
    gn_array_t  *types;         /* of t_type_t */
} t_loc_conf_t;

typedef struct {
    gn_array_t    *listen;
    gn_msec_t      keepalive;
    size_t         body_size;
    t_loc_conf_t  *loc;         /* server-level location settings */
    gn_array_t    *locations;   /* of t_loc_conf_t * */
} t_srv_conf_t;

typedef struct {
    gn_int_t         workers;
    gn_flag_t        daemon;
    gn_str_t         pid;
    gn_str_t         user;
    size_t           buffer_size;
    gn_msec_t        timeout;
    gn_array_t      *env;
    gn_conf_path_t   key;           /* file slot */
    gn_uint_t        mode;          /* enum slot */
    gn_array_t      *servers;       /* of t_srv_conf_t * */
} t_main_conf_t;


static char *t_echo(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);
static char *t_fail(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);
static char *t_lazy(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);
static char *t_server(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);
static char *t_location(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *t_types(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf);


static const gn_conf_enum_t  t_choices[] = {
    { gn_string("one"), 1 },
    { gn_string("two"), 2 },
    { gn_string("three"), 3 },
    { gn_null_string, 0 }
};

static const gn_conf_cmd_t  t_main_cmds[] = {
    { gn_string("workers"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, workers), NULL, NULL },
    { gn_string("daemon"), GN_CONF_MAIN | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, daemon), NULL, NULL },
    { gn_string("pid"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_path_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, pid), NULL, NULL },
    { gn_string("user"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, user), NULL, NULL },
    { gn_string("buffer_size"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, buffer_size), NULL, NULL },
    { gn_string("timeout"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, timeout), NULL, NULL },
    { gn_string("env"), GN_CONF_MAIN | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, env), NULL, NULL },
    { gn_string("key_file"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_file_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, key), NULL, NULL },
    { gn_string("mode"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_enum_slot, GN_CONF_MAIN_CONF,
      offsetof(t_main_conf_t, mode), t_choices, NULL },
    { gn_string("server"), GN_CONF_MAIN | GN_CONF_BLOCK | GN_CONF_NOARGS,
      t_server, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("echo"), GN_CONF_ANY | GN_CONF_1MORE,
      t_echo, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("fail"), GN_CONF_MAIN | GN_CONF_NOARGS,
      t_fail, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("lazy"), GN_CONF_MAIN | GN_CONF_BLOCK,
      t_lazy, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    gn_conf_null_cmd
};


/* a second table: lookup goes through every table in cf->tables */
static const gn_conf_cmd_t  t_http_cmds[] = {
    { gn_string("listen"), GN_CONF_SRV | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_SRV_CONF,
      offsetof(t_srv_conf_t, listen), NULL, NULL },
    { gn_string("keepalive_timeout"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_SRV_CONF,
      offsetof(t_srv_conf_t, keepalive), NULL, NULL },
    { gn_string("client_max_body_size"), GN_CONF_SRV | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_SRV_CONF,
      offsetof(t_srv_conf_t, body_size), NULL, NULL },
    { gn_string("root"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_TAKE1,
      gn_conf_set_path_slot, GN_CONF_LOC_CONF,
      offsetof(t_loc_conf_t, root), NULL, NULL },
    { gn_string("alias"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_conf_set_str_slot, GN_CONF_LOC_CONF,
      offsetof(t_loc_conf_t, alias), NULL, NULL },
    { gn_string("sendfile"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      offsetof(t_loc_conf_t, sendfile), NULL, NULL },
    { gn_string("index"), GN_CONF_SRV | GN_CONF_LOC | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_LOC_CONF,
      offsetof(t_loc_conf_t, index), NULL, NULL },
    { gn_string("header"), GN_CONF_LOC | GN_CONF_TAKE2 | GN_CONF_TAKE3,
      gn_conf_set_str_array_slot, GN_CONF_LOC_CONF,
      offsetof(t_loc_conf_t, header), NULL, NULL },
    { gn_string("location"), GN_CONF_SRV | GN_CONF_BLOCK | GN_CONF_TAKE1,
      t_location, GN_CONF_SRV_CONF, 0, NULL, NULL },
    { gn_string("types"),
      GN_CONF_SRV | GN_CONF_LOC | GN_CONF_BLOCK | GN_CONF_NOARGS,
      t_types, GN_CONF_LOC_CONF, 0, NULL, NULL },
    gn_conf_null_cmd
};


static const gn_conf_cmd_t  *t_tables[] = { t_main_cmds, t_http_cmds, NULL };


static gn_pool_t       *pool;
static gn_conf_t        tcf;
static t_main_conf_t   *mcf;
static char             echo_log[4096];
static size_t           echo_len;
static char             tmpdir[64];
static char             created[64][128];
static int              ncreated;


static t_loc_conf_t *
t_loc_create(gn_pool_t *p)
{
    t_loc_conf_t  *lcf;

    lcf = gn_pcalloc(p, sizeof(t_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }

    lcf->sendfile = GN_CONF_UNSET;

    return lcf;
}


/* Appends "<line>[arg][arg]..." to echo_log. */
static char *
t_echo(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    int         n;
    gn_str_t   *value;
    gn_uint_t   i;

    value = cf->args->elts;

    n = snprintf(echo_log + echo_len, sizeof(echo_log) - echo_len, "%lu",
                 (unsigned long) cf->file->line);
    echo_len += (size_t) n;

    for (i = 1; i < cf->args->nelts; i++) {
        if (value[i].data[value[i].len] != '\0') {
            return (char *) "argument not NUL-terminated";
        }

        n = snprintf(echo_log + echo_len, sizeof(echo_log) - echo_len,
                     "[%.*s]", GN_STR_ARG(&value[i]));
        echo_len += (size_t) n;
    }

    return GN_CONF_OK;
}


static char *
t_fail(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_conf_error(cf, "custom failure %d", 42);
    return GN_CONF_ERROR;
}


/* A buggy block handler: never parses its block. */
static char *
t_lazy(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    return GN_CONF_OK;
}


static char *
t_server(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    void            *saved[3];
    gn_int_t         rc;
    gn_uint_t        ctx;
    t_srv_conf_t    *scf, **sp;
    t_main_conf_t   *mc = conf;

    scf = gn_pcalloc(cf->pool, sizeof(t_srv_conf_t));
    if (scf == NULL) {
        return (char *) "out of memory";
    }

    scf->keepalive = GN_CONF_UNSET_MSEC;
    scf->body_size = GN_CONF_UNSET_SIZE;
    scf->loc = t_loc_create(cf->pool);
    scf->locations = gn_array_create(cf->pool, 2, sizeof(t_loc_conf_t *));
    sp = gn_array_push(mc->servers);

    if (scf->loc == NULL || scf->locations == NULL || sp == NULL) {
        return (char *) "out of memory";
    }

    *sp = scf;

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
t_location(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    void           *saved;
    gn_int_t        rc;
    gn_str_t       *value;
    t_srv_conf_t   *scf = conf;
    t_loc_conf_t   *lcf, **lp;

    lcf = t_loc_create(cf->pool);
    lp = gn_array_push(scf->locations);

    if (lcf == NULL || lp == NULL) {
        return (char *) "out of memory";
    }

    *lp = lcf;

    /* cf->args is reused by the block: keep the argument now */
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


/* "type ext ext ...;" lines of a types block. */
static char *
t_types_line(gn_conf_t *cf, void *data)
{
    gn_str_t       *value;
    t_type_t       *t;
    gn_uint_t       i;
    t_loc_conf_t   *lcf = data;

    value = cf->args->elts;

    if (cf->args->nelts < 2) {
        return (char *) "a types line needs a type and extensions";
    }

    for (i = 1; i < cf->args->nelts; i++) {
        t = gn_array_push(lcf->types);
        if (t == NULL) {
            return (char *) "out of memory";
        }

        t->ext = value[i];
        t->type = value[0];
    }

    return GN_CONF_OK;
}


static char *
t_types(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_int_t        rc;
    t_loc_conf_t   *lcf = conf;

    if (lcf->types == NULL) {
        lcf->types = gn_array_create(cf->pool, 4, sizeof(t_type_t));
        if (lcf->types == NULL) {
            return (char *) "out of memory";
        }
    }

    cf->handler = t_types_line;
    cf->handler_data = lcf;

    rc = gn_conf_parse(cf, NULL);

    cf->handler = NULL;
    cf->handler_data = NULL;

    return rc == GN_OK ? GN_CONF_OK : GN_CONF_ERROR;
}


/* A fresh pool, cf and main conf for every parse. */
static void
t_setup(void)
{
    gn_pool_destroy(pool);

    memset(&tcf, 0, sizeof(gn_conf_t));

    pool = gn_pool_create(1024);
    if (pool == NULL || gn_conf_init(&tcf, pool) != GN_OK) {
        diag("out of memory");
        exit(1);
    }

    mcf = gn_pcalloc(pool, sizeof(t_main_conf_t));
    if (mcf == NULL) {
        exit(1);
    }

    mcf->workers = GN_CONF_UNSET;
    mcf->daemon = GN_CONF_UNSET;
    mcf->buffer_size = GN_CONF_UNSET_SIZE;
    mcf->timeout = GN_CONF_UNSET_MSEC;
    mcf->mode = GN_CONF_UNSET_UINT;
    mcf->servers = gn_array_create(pool, 2, sizeof(t_srv_conf_t *));

    tcf.tables = t_tables;
    tcf.conf[GN_CONF_MAIN_CONF] = mcf;
    gn_str_set(&tcf.prefix, "/srv/gannet/");
    tcf.conf_prefix.len = strlen(tmpdir);
    tcf.conf_prefix.data = (u_char *) tmpdir;

    echo_len = 0;
    echo_log[0] = '\0';
}


static gn_int_t
t_parse(const char *text)
{
    t_setup();
    return gn_conf_parse_string(&tcf, "t.conf", (const u_char *) text,
                                strlen(text));
}


/* The error for `text`, exactly; "(no error)" if it parsed. */
static void
t_err(const char *text, const char *want, int line)
{
    const char  *got;

    got = t_parse(text) == GN_ERROR ? tcf.err : "(no error)";

    tap_is_str(got, strlen(got), want, __FILE__, line, "error: %s", want);
}

#define conf_err(text, want)  t_err(text, want, __LINE__)


/* The echo log for `text`, which must parse. */
static void
t_echo_is(const char *text, const char *want, const char *name, int line)
{
    if (t_parse(text) != GN_OK) {
        tap_is_str(tcf.err, strlen(tcf.err), want, __FILE__, line,
                   "%s", name);
        return;
    }

    tap_is_str(echo_log, echo_len, want, __FILE__, line, "%s", name);
}

#define echo_is(text, want, name)  t_echo_is(text, want, name, __LINE__)


static void
t_write(const char *name, const char *text)
{
    int     fd;
    size_t  len;

    if (ncreated == (int) gn_nelems(created)) {
        exit(1);
    }

    snprintf(created[ncreated], sizeof(created[0]), "%s/%s", tmpdir, name);

    fd = open(created[ncreated], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    len = strlen(text);

    if (fd == -1 || write(fd, text, len) != (ssize_t) len) {
        diag("cannot write %s: %s", created[ncreated], strerror(errno));
        exit(1);
    }

    close(fd);
    ncreated++;
}


static void
test_tokenizer(void)
{
    static const u_char  nul[] = "echo a\0b;";
    char                *big;

    echo_is("echo a \"b c\" 'd;e' \"\" '';", "1[a][b c][d;e][][]",
            "quotes; empty strings are arguments");
    echo_is("echo \"q\\\"q\" 'it\\'s' \"back\\\\slash\" x\\\"y;",
            "1[q\"q][it's][back\\slash][x\"y]",
            "escapes of quotes and backslash, also unquoted");
    echo_is("echo \"t\\tn\\nr\\r\" \"^/re\\d+\\.html$\";",
            "1[t\tn\nr\r][^/re\\d+\\.html$]",
            "escapes of tab, LF, CR; others kept (regex)");
    echo_is("# comment ; { }\necho a; # trailing \" '\n#\necho b#c;",
            "2[a]4[b#c]",
            "comments; # inside a word");
    echo_is("echo 1; echo 2;echo 3 ;", "1[1]1[2]1[3]",
            "several directives on a line");
    echo_is("echo a\n  b\n  \"c\nd\"\n  ;\necho z;", "5[a][b][c\nd]6[z]",
            "directive spanning lines: line of its end");
    echo_is("echo $host ${uri}x $1 x}y;", "1[$host][${uri}x][$1][x}y]",
            "$ and ${ verbatim, } inside a word");
    echo_is("echo a;\r\n\techo b;\r\n", "1[a]2[b]",
            "CRLF and tabs");
    echo_is("\"echo\" 'x y';", "1[x y]",
            "quoted directive name");
    echo_is("server { echo in; location / { echo deep; } }",
            "1[in]1[deep]",
            "nested blocks on one line");
    echo_is("", "", "empty input");
    echo_is("# only a comment", "", "comment-only input");

    conf_err("echo \"a\"b;", "unexpected \"b\" in t.conf:1");

    t_setup();
    ok(gn_conf_parse_string(&tcf, "t.conf", nul, sizeof(nul) - 1) == GN_ERROR
       && strcmp(tcf.err, "unexpected NUL byte in t.conf:1") == 0,
       "NUL byte rejected");

    /* fuzzing found it (t/fuzz/corpus/conf/quote-then-nul): a NUL right
     * after a closing quote was printed with %c, cutting the message
     * before its " in FILE:LINE" */
    {
        static const char  qnul[] = "\n\"\"\0\0\1\n";

        t_setup();
        ok(gn_conf_parse_string(&tcf, "t.conf", (const u_char *) qnul,
                                sizeof(qnul) - 1) == GN_ERROR
           && strcmp(tcf.err, "unexpected NUL byte in t.conf:2") == 0,
           "NUL after a closing quote: a whole message (%s)", tcf.err);
    }

    big = malloc(70000 + sizeof("echo ;"));
    if (big == NULL) {
        exit(1);
    }

    memcpy(big, "echo ", 5);
    memset(big + 5, 'x', 70000);
    strcpy(big + 5 + 70000, ";");

    ok(t_parse(big) == GN_ERROR
       && strncmp(tcf.err, "too long parameter \"xxx", 23) == 0
       && strstr(tcf.err, " in t.conf:1") != NULL,
       "runaway token bounded: %.40s", tcf.err);

    big[5] = '"';
    ok(t_parse(big) == GN_ERROR
       && strcmp(tcf.err, "too long parameter, probably missing terminating "
                 "'\"' character in t.conf:1") == 0,
       "runaway quoted string bounded");

    free(big);
}


static void
test_errors(void)
{
    conf_err("\n\nlsten 80;", "unknown directive \"lsten\" in t.conf:3");
    conf_err("listen 80;", "\"listen\" directive is not allowed here "
             "in t.conf:1");
    conf_err("server {\n location / {\n  location /a { }\n }\n}",
             "\"location\" directive is not allowed here in t.conf:3");
    conf_err("server {\n    listen;\n}",
             "invalid number of arguments in \"listen\" directive "
             "in t.conf:2");
    conf_err("workers 1 2;",
             "invalid number of arguments in \"workers\" directive "
             "in t.conf:1");
    conf_err("server {\n location {\n }\n}",
             "invalid number of arguments in \"location\" directive "
             "in t.conf:2");
    conf_err("server { location / { header X; } }",
             "invalid number of arguments in \"header\" directive "
             "in t.conf:1");
    conf_err("server { location / { header A b c d; } }",
             "invalid number of arguments in \"header\" directive "
             "in t.conf:1");
    conf_err("server x { }",
             "invalid number of arguments in \"server\" directive "
             "in t.conf:1");
    conf_err("server {\n sendfile maybe;\n}",
             "invalid value \"maybe\" in \"sendfile\" directive, "
             "it must be \"on\" or \"off\" in t.conf:2");
    conf_err("server\n;", "directive \"server\" has no opening \"{\" "
             "in t.conf:2");
    conf_err("server {\n root /x {\n }\n}",
             "directive \"root\" is not terminated by \";\" in t.conf:2");
    conf_err("}", "unexpected \"}\" in t.conf:1");
    conf_err("workers 1;\n}\n", "unexpected \"}\" in t.conf:2");
    conf_err("server { listen 80 }", "unexpected \"}\" in t.conf:1");
    conf_err("\n{ workers 1; }", "unexpected \"{\" in t.conf:2");
    conf_err("workers 1; ;", "unexpected \";\" in t.conf:1");
    conf_err("workers 1", "unexpected end of file, expecting \";\" or \"}\" "
             "in t.conf:1");
    conf_err("server {\n listen 80;\n",
             "unexpected end of file, expecting \"}\" in t.conf:3");
    conf_err("echo \"abc\n\n", "unterminated quoted string in t.conf:3");
    conf_err("echo 'abc\\'", "unterminated quoted string in t.conf:1");
    conf_err("server {\n root /a;\n root /b;\n}",
             "\"root\" directive is duplicate in t.conf:3");
    conf_err("fail;", "custom failure 42 in t.conf:1");
    conf_err("lazy { }",
             "\"lazy\" directive handler did not parse its block "
             "in t.conf:1");
    conf_err("server {\n types {\n  text/html html;\n  text/plain;\n }\n}",
             "a types line needs a type and extensions in t.conf:4");
    conf_err("server { types { text/html { } } }",
             "unexpected \"{\" in t.conf:1");

    t_setup();
    ok(gn_conf_parse(&tcf, NULL) == GN_ERROR,
       "gn_conf_parse(cf, NULL) outside a block fails");
}


static void
test_setters(void)
{
    gn_str_t       *s;
    t_type_t       *ty;
    t_loc_conf_t   *lcf;
    t_srv_conf_t  **srv;

    ok(t_parse(
        "workers 4;\n"
        "daemon OFF;\n"
        "pid logs/gannet.pid;\n"
        "user \"www data\";\n"
        "buffer_size 8m;\n"
        "timeout 1m30s;\n"
        "env A=1 B=2;\n"
        "env C=3;\n"
        "key_file keys/t.key;\n"
        "server {\n"
        "    listen 80 default;\n"
        "    listen 443;\n"
        "    keepalive_timeout 500ms;\n"
        "    client_max_body_size 16k;\n"
        "    root html;\n"
        "    sendfile on;\n"
        "    location /img/ {\n"
        "        root /var/img;\n"
        "        alias \"\";\n"
        "        sendfile off;\n"
        "        index a.html b.html;\n"
        "        header X-A 1;\n"
        "        types {\n"
        "            text/html html htm;\n"
        "            image/png png;\n"
        "        }\n"
        "    }\n"
        "}\n"
        "server {\n"
        "    keepalive_timeout 30s;\n"
        "}\n") == GN_OK, "full configuration parses: %s", tcf.err);

    if (tcf.err[0] != '\0' || mcf->servers->nelts != 2) {
        diag("skipping the checks of the full configuration");
        return;
    }

    is_int(mcf->workers, 4, "num slot");
    is_int(mcf->daemon, 0, "flag slot, case-insensitive");
    is_str(mcf->pid.data, mcf->pid.len, "/srv/gannet/logs/gannet.pid",
           "path slot resolved against prefix");
    ok(mcf->pid.data[mcf->pid.len] == '\0', "path slot NUL-terminated");
    is_str(mcf->user.data, mcf->user.len, "www data", "str slot, quoted");
    is_int(mcf->buffer_size, 8 * 1024 * 1024, "size slot: 8m");
    is_int(mcf->timeout, 90000, "msec slot: 1m30s");

    is_str(mcf->key.path.data, mcf->key.path.len, "/srv/gannet/keys/t.key",
           "file slot resolved against prefix");
    ok(gn_str_eq(&mcf->key.file, "t.conf") && mcf->key.line == 9,
       "file slot keeps the directive's file:line");

    s = mcf->env->elts;
    ok(mcf->env->nelts == 3 && gn_str_eq(&s[0], "A=1")
       && gn_str_eq(&s[2], "C=3"), "str_array slot appends, no duplicate");

    is_int(mcf->servers->nelts, 2, "two server blocks");
    srv = mcf->servers->elts;

    s = srv[0]->listen->elts;
    ok(srv[0]->listen->nelts == 3 && gn_str_eq(&s[1], "default")
       && gn_str_eq(&s[2], "443"), "listen collected in server 1");
    is_int(srv[0]->keepalive, 500, "msec slot: 500ms");
    is_int(srv[0]->body_size, 16384, "size slot: 16k");
    is_str(srv[0]->loc->root.data, srv[0]->loc->root.len,
           "/srv/gannet/html", "srv-level loc conf gets root");
    is_int(srv[0]->loc->sendfile, 1, "srv-level sendfile on");

    lcf = *(t_loc_conf_t **) srv[0]->locations->elts;
    is_str(lcf->path.data, lcf->path.len, "/img/", "location argument");
    is_str(lcf->root.data, lcf->root.len, "/var/img",
           "absolute path unchanged");
    ok(lcf->alias.data != NULL && lcf->alias.len == 0,
       "empty quoted string is set, empty");
    is_int(lcf->sendfile, 0, "location sendfile off");
    is_int(lcf->index->nelts, 2, "index in location");

    ty = lcf->types->elts;
    ok(lcf->types->nelts == 3 && gn_str_eq(&ty[1].ext, "htm")
       && gn_str_eq(&ty[1].type, "text/html")
       && gn_str_eq(&ty[2].type, "image/png"),
       "types lines through cf->handler");
    is_int(srv[1]->keepalive, 30000, "msec slot: 30s");
    ok(srv[1]->loc->root.data == NULL && srv[1]->body_size
       == GN_CONF_UNSET_SIZE, "server 2 leaves unset slots unset");
    ok(tcf.handler == NULL && tcf.file == NULL && tcf.buf == NULL,
       "parser state restored");

    ok(t_parse("timeout 2;") == GN_OK && mcf->timeout == 2000,
       "bare number is seconds");

    conf_err("workers 1; workers 2;",
             "\"workers\" directive is duplicate in t.conf:1");
    conf_err("daemon on;\ndaemon on;",
             "\"daemon\" directive is duplicate in t.conf:2");
    conf_err("pid a; pid b;", "\"pid\" directive is duplicate in t.conf:1");
    conf_err("key_file a;\nkey_file b;",
             "\"key_file\" directive is duplicate in t.conf:2");
    conf_err("buffer_size 1k; buffer_size 1k;",
             "\"buffer_size\" directive is duplicate in t.conf:1");
    conf_err("timeout 1s; timeout 1s;",
             "\"timeout\" directive is duplicate in t.conf:1");
    conf_err("user a; user b;",
             "\"user\" directive is duplicate in t.conf:1");

    conf_err("workers x1;",
             "invalid number \"x1\" in \"workers\" directive in t.conf:1");
    conf_err("workers -1;",
             "invalid number \"-1\" in \"workers\" directive in t.conf:1");
    conf_err("buffer_size 8q;",
             "invalid size \"8q\" in \"buffer_size\" directive in t.conf:1");
    conf_err("timeout 1x;",
             "invalid time \"1x\" in \"timeout\" directive in t.conf:1");
    conf_err("mode four;",
             "invalid value \"four\" in \"mode\" directive, it must be "
             "\"one\", \"two\" or \"three\" in t.conf:1");
    conf_err("mode one; mode two;",
             "\"mode\" directive is duplicate in t.conf:1");
    ok(t_parse("mode THREE;") == GN_OK && mcf->mode == 3,
       "enum slot, case-insensitive");
}


/* ---- plain slots: defaults from the rows (gn_conf_*_slots) ------------- */

typedef struct {
    gn_flag_t    flag;
    gn_int_t     num;
    size_t       size;
    gn_msec_t    msec;
    gn_str_t     str;
    gn_uint_t    choice;        /* enum */
    gn_int_t     bare;          /* no default */
    gn_int_t     other;         /* a row of another struct */
    gn_array_t  *list;          /* not a plain slot */
} t_plain_t;

static const gn_conf_cmd_t  t_plain_cmds[] = {
    { gn_string("p_flag"), GN_CONF_LOC | GN_CONF_FLAG, gn_conf_set_flag_slot,
      GN_CONF_LOC_CONF, offsetof(t_plain_t, flag), NULL, "on" },
    { gn_string("p_num"), GN_CONF_LOC | GN_CONF_TAKE1, gn_conf_set_num_slot,
      GN_CONF_LOC_CONF, offsetof(t_plain_t, num), &gn_conf_num_min_1, "7" },
    { gn_string("p_size"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_conf_set_size_slot, GN_CONF_LOC_CONF, offsetof(t_plain_t, size),
      NULL, "4k" },
    { gn_string("p_msec"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_conf_set_msec_slot, GN_CONF_LOC_CONF, offsetof(t_plain_t, msec),
      NULL, "1m30s" },
    { gn_string("p_str"), GN_CONF_LOC | GN_CONF_TAKE1, gn_conf_set_str_slot,
      GN_CONF_LOC_CONF, offsetof(t_plain_t, str), NULL, "text/plain" },
    { gn_string("p_enum"), GN_CONF_LOC | GN_CONF_TAKE1,
      gn_conf_set_enum_slot, GN_CONF_LOC_CONF, offsetof(t_plain_t, choice),
      t_choices, "two" },
    { gn_string("p_bare"), GN_CONF_LOC | GN_CONF_TAKE1, gn_conf_set_num_slot,
      GN_CONF_LOC_CONF, offsetof(t_plain_t, bare), NULL, NULL },
    { gn_string("p_other"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_conf_set_num_slot, GN_CONF_MAIN_CONF, offsetof(t_plain_t, other),
      NULL, "5" },
    { gn_string("p_list"), GN_CONF_LOC | GN_CONF_1MORE,
      gn_conf_set_str_array_slot, GN_CONF_LOC_CONF,
      offsetof(t_plain_t, list), NULL, NULL },
    gn_conf_null_cmd
};

static const gn_conf_cmd_t  t_bad_default_cmds[] = {
    { gn_string("p_num"), GN_CONF_LOC | GN_CONF_TAKE1, gn_conf_set_num_slot,
      GN_CONF_LOC_CONF, offsetof(t_plain_t, num), &gn_conf_num_min_1, "0" },
    gn_conf_null_cmd
};


static void
test_plain_slots(void)
{
    static const gn_conf_cmd_t  *plain_tables[] = { t_plain_cmds, NULL };
    t_plain_t                    top, mid, in;
    gn_int_t                     rc;

    t_setup();
    tcf.tables = plain_tables;

    memset(&top, 0, sizeof(top));
    top.other = 42;
    gn_conf_init_slots(t_plain_cmds, GN_CONF_LOC_CONF, &top);
    ok(top.flag == GN_CONF_UNSET && top.num == GN_CONF_UNSET
       && top.size == GN_CONF_UNSET_SIZE && top.msec == GN_CONF_UNSET_MSEC
       && top.str.data == NULL && top.choice == GN_CONF_UNSET_UINT
       && top.bare == GN_CONF_UNSET,
       "init_slots: every plain slot unset");
    is_int(top.other, 42, "init_slots: a row of another struct untouched");
    ok(top.list == NULL, "init_slots: a slot that is not plain untouched");

    /* the top level: the rows' defaults, through their setters */
    rc = gn_conf_merge_slots(&tcf, t_plain_cmds, GN_CONF_LOC_CONF, &top,
                             NULL);
    is_int(rc, GN_OK, "merge_slots at the top");
    is_int(top.flag, 1, "default flag \"on\"");
    is_int(top.num, 7, "default number");
    is_int(top.size, 4096, "default size \"4k\"");
    is_int(top.msec, 90000, "default time \"1m30s\"");
    is_str(top.str.data, top.str.len, "text/plain", "default string");
    is_int(top.choice, 2, "default enum \"two\"");
    is_int(top.bare, GN_CONF_UNSET, "no default: stays unset");
    is_int(top.other, 42, "merge_slots: a row of another struct untouched");

    /* a middle level sets two; an inner one sets one and inherits */
    gn_conf_init_slots(t_plain_cmds, GN_CONF_LOC_CONF, &mid);
    gn_conf_init_slots(t_plain_cmds, GN_CONF_LOC_CONF, &in);
    mid.flag = 0;
    mid.bare = 3;
    mid.choice = 3;
    in.num = 9;

    rc = gn_conf_merge_slots(&tcf, t_plain_cmds, GN_CONF_LOC_CONF, &mid,
                             &top);
    rc |= gn_conf_merge_slots(&tcf, t_plain_cmds, GN_CONF_LOC_CONF, &in,
                              &mid);
    is_int(rc, GN_OK, "merge_slots down two levels");
    is_int(in.flag, 0, "inherits the middle level's value, not the default");
    is_int(in.bare, 3, "a slot without default inherits too");
    is_int(in.num, 9, "its own value stays");
    is_int(mid.num, 7, "the middle level inherited the top's default");
    is_int(in.size, 4096, "inherited down from the top");
    is_str(in.str.data, in.str.len, "text/plain", "string inherited");
    is_int(in.choice, 3, "enum inherited");

    /* a default its own setter refuses is a clear error */
    gn_conf_init_slots(t_bad_default_cmds, GN_CONF_LOC_CONF, &top);
    rc = gn_conf_merge_slots(&tcf, t_bad_default_cmds, GN_CONF_LOC_CONF,
                             &top, NULL);
    is_int(rc, GN_ERROR, "a bad default: GN_ERROR");
    if (!ok(strstr(tcf.err, "bad default \"0\" of the \"p_num\" "
                            "directive: invalid number \"0\" in \"p_num\" "
                            "directive, it must be 1 or more") != NULL,
            "a bad default: says which and why"))
    {
        diag("%s", tcf.err);
    }
}


static void
test_full_name(void)
{
    gn_str_t  n;

    t_setup();

    gn_str_set(&tcf.prefix, "/p");
    gn_str_set(&n, "x/y");
    ok(gn_conf_full_name(&tcf, &n, 0) == GN_OK
       && gn_str_eq(&n, "/p/x/y") && n.data[n.len] == '\0',
       "prefix without trailing slash");

    gn_str_set(&tcf.conf_prefix, "/etc/gn/");
    gn_str_set(&n, "mime.types");
    ok(gn_conf_full_name(&tcf, &n, 1) == GN_OK
       && gn_str_eq(&n, "/etc/gn/mime.types"), "conf_prefix when asked");

    gn_str_set(&n, "/abs");
    ok(gn_conf_full_name(&tcf, &n, 1) == GN_OK && gn_str_eq(&n, "/abs")
       && n.data[n.len] == '\0', "absolute name unchanged");

    gn_str_null(&tcf.prefix);
    gn_str_set(&n, "rel");
    ok(gn_conf_full_name(&tcf, &n, 0) == GN_OK && gn_str_eq(&n, "rel"),
       "no prefix: relative name kept");

    tcf.file = NULL;
    gn_conf_error(&tcf, "plain %s", "message");
    is_str(tcf.err, strlen(tcf.err), "plain message",
           "gn_conf_error without a file adds no location");
}


static void
test_include(void)
{
    int          i;
    char         name[32], text[512], want[512];
    const char  *eof = "unexpected end of file, expecting \";\" or \"}\"";

    if (mkdir(strcat(strcpy(want, tmpdir), "/conf.d"), 0700) != 0) {
        diag("mkdir: %s", strerror(errno));
        exit(1);
    }

    t_write("conf.d/b.conf", "echo b;\n");
    t_write("conf.d/a.conf", "\necho a;\n");
    t_write("conf.d/c.txt", "echo c;\n");
    t_write("srv.inc", "listen 8080;\necho srv;\n");
    t_write("bad.inc", "\n\nlsten 1;\n");
    t_write("close.inc", "echo x;\n}\n");
    t_write("open.inc", "server {\n");
    t_write("self.conf", "\ninclude self.conf;\n");
    t_write("main.conf", "workers 2;\n\ninclude conf.d/*.conf;\nbad\n");

    echo_is("include conf.d/*.conf;\necho top;", "2[a]1[b]2[top]",
            "include glob: sorted, *.conf only, own line numbers");
    is_int(tcf.include_depth, 0, "include depth back to 0");
    echo_is("include nothing/*.conf; include conf.d/none-*.conf;", "",
            "glob matching nothing is fine");
    echo_is("server {\n include srv.inc;\n}", "2[srv]",
            "include inside a block");
    ok(mcf->servers->nelts == 1
       && (*(t_srv_conf_t **) mcf->servers->elts)->listen->nelts == 1,
       "include parsed in the server context");

    snprintf(want, sizeof(want), "echo x;\ninclude %s/conf.d/b.conf;",
             tmpdir);
    echo_is(want, "1[x]1[b]", "include of an absolute name");

    snprintf(want, sizeof(want), "open() \"%s/nosuch.conf\" failed "
             "(2: No such file or directory) in t.conf:2", tmpdir);
    conf_err("\ninclude nosuch.conf;", want);

    snprintf(want, sizeof(want),
             "unknown directive \"lsten\" in %s/bad.inc:3", tmpdir);
    conf_err("include bad.inc;", want);

    snprintf(want, sizeof(want), "unexpected \"}\" in %s/close.inc:2",
             tmpdir);
    conf_err("server {\n include close.inc;\n}", want);

    snprintf(want, sizeof(want),
             "unexpected end of file, expecting \"}\" in %s/open.inc:2",
             tmpdir);
    conf_err("include open.inc;", want);

    snprintf(want, sizeof(want), "too many nested includes in %s/self.conf:2",
             tmpdir);
    conf_err("include self.conf;", want);
    is_int(tcf.include_depth, 0, "include depth unwound after the error");

    conf_err("include;", "invalid number of arguments in \"include\" "
             "directive in t.conf:1");
    conf_err("include a b;", "invalid number of arguments in \"include\" "
             "directive in t.conf:1");
    conf_err("include a {", "directive \"include\" is not terminated by "
             "\";\" in t.conf:1");

    /* d1 includes d2 ... d16 includes d17: 16 nested levels below d1 */
    for (i = 1; i <= 17; i++) {
        snprintf(name, sizeof(name), "d%d.conf", i);
        if (i < 17) {
            snprintf(text, sizeof(text), "include d%d.conf;\n", i + 1);
        } else {
            snprintf(text, sizeof(text), "echo deep;\n");
        }
        t_write(name, text);
    }

    echo_is("include d2.conf;", "1[deep]", "16 nested includes allowed");
    snprintf(want, sizeof(want), "too many nested includes in %s/d16.conf:1",
             tmpdir);
    conf_err("include d1.conf;", want);

    /* conf_prefix without the trailing slash, and include in types */
    t_write("mime.inc", "text/css css;\n");
    t_setup();
    tcf.conf_prefix.len = strlen(tmpdir);
    ok(gn_conf_parse_string(&tcf, "t.conf", (u_char *)
       "server { types { include mime.inc; } }",
       sizeof("server { types { include mime.inc; } }") - 1) == GN_OK,
       "include inside a cf->handler block: %s", tcf.err);

    /* a real top-level file */
    snprintf(want, sizeof(want), "%s/main.conf", tmpdir);
    t_setup();
    ok(gn_conf_parse(&tcf, want) == GN_ERROR, "main.conf fails");
    snprintf(text, sizeof(text), "%s in %s/main.conf:5", eof, tmpdir);
    ok(strcmp(tcf.err, text) == 0
       && mcf->workers == 2 && strcmp(echo_log, "2[a]1[b]") == 0,
       "top-level file: %s", tcf.err);

    t_setup();
    ok(gn_conf_parse(&tcf, "/nonexistent/gannet.conf") == GN_ERROR
       && strcmp(tcf.err, "open() \"/nonexistent/gannet.conf\" failed "
                 "(2: No such file or directory)") == 0,
       "missing top-level file: no location");
}


int
main(void)
{
    int  i;

    strcpy(tmpdir, "/tmp/test_conf.XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        skip_all("mkdtemp() failed");
    }

    test_tokenizer();
    test_errors();
    test_setters();
    test_plain_slots();
    test_full_name();
    test_include();

    gn_pool_destroy(pool);

    for (i = ncreated - 1; i >= 0; i--) {
        unlink(created[i]);
    }

    snprintf(created[0], sizeof(created[0]), "%s/conf.d", tmpdir);
    rmdir(created[0]);
    rmdir(tmpdir);

    return done_testing();
}
