/*
 * mod_t_info: test module (t/integ/4x-module-*.t, TLS tests).
 *
 * `handler t_info;` answers every request with one line of JSON-ish
 * text describing the child that served it and the request:
 *
 *   {"module":"t_info","slot":0,"pid":1234,"init_child":1,
 *    "master_slot":-1,"requests":3,"https":"on","tls_protocol":"TLS1.3",
 *    "tls_cipher":"...","method":"GET","uri":"/_t/info","query":"",
 *    "abi":"1.0","api_size":328,"server":"gannet/0.1.0",
 *    "tag":"none","number":0,"flag":0,"size":1024,"duration":1000,
 *    "main_only":0,"max_slots":4,"live":2,"server_children":2}
 *
 * init_master and init_child log at notice ("t_info: init_master pid P",
 * "t_info: init_child slot S pid P") so that tests can count them; each
 * child also reports how many times its init_child ran ("init_child").
 * A URI ending in "/decline" is declined (the static files serve it);
 * one ending in "/decline-late" is declined after a line was written (a
 * module's bug, which the server answers with a 500).
 * The directives t_info_* (one of each type; t_info_main_only is allowed
 * at the main level only) are echoed so that tests can check parsing and
 * inheritance. A negative t_info_main_only makes init_master fail (what a
 * resource that cannot be had does: the configuration checks passed).
 */

#include <stdio.h>
#include <string.h>
#include <stdarg.h>
#include <unistd.h>

#include <gannet/module.h>


typedef struct {
    const char  *tag;
    int64_t      number;
    int64_t      flag;
    int64_t      size;
    int64_t      duration;
    int64_t      main_only;
} t_info_conf_t;


static int t_info_init_master(const gn_api_t *api, void *conf);
static int t_info_init_child(const gn_api_t *api, void *conf);
static int t_info_handler(const gn_api_t *api, gn_request_t *r);
static int t_info_filter_log(const gn_api_t *api, gn_request_t *r);
static void t_info_exit_child(const gn_api_t *api);


static const gn_directive_t  t_info_directives[] = {
    { "t_info_tag", GN_DIR_STRING,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(t_info_conf_t, tag), "none" },
    { "t_info_number", GN_DIR_NUMBER,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(t_info_conf_t, number), "0" },
    { "t_info_flag", GN_DIR_FLAG,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(t_info_conf_t, flag), "off" },
    { "t_info_size", GN_DIR_SIZE,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(t_info_conf_t, size), "1k" },
    { "t_info_duration", GN_DIR_DURATION,
      GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION,
      offsetof(t_info_conf_t, duration), "1s" },
    { "t_info_main_only", GN_DIR_NUMBER,
      GN_CTX_MAIN,
      offsetof(t_info_conf_t, main_only), "0" },
    { NULL, 0, 0, 0, NULL }
};


static const gn_module_t  t_info_module = {
    GN_MODULE_V1, "t_info", "1.0", t_info_directives, sizeof(t_info_conf_t),
    t_info_init_master, t_info_init_child, t_info_handler,
    NULL, NULL, t_info_filter_log,
    t_info_exit_child
};

GN_MODULE_EXPORT(t_info_module)


static int       t_info_master_slot = -2;
static int       t_info_init_child_calls;
static uint64_t  t_info_requests;


#define t_info_str(s)  (int) (s).len, (s).data ? (const char *) (s).data : ""


static int
t_info_printf(const gn_api_t *api, gn_request_t *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
t_info_printf(const gn_api_t *api, gn_request_t *r, const char *fmt, ...)
{
    int      n;
    char     buf[2048];
    va_list  args;

    va_start(args, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);

    if (n < 0) {
        return GN_ERROR;
    }

    if ((size_t) n >= sizeof(buf)) {
        n = sizeof(buf) - 1;
    }

    return api->write(r, buf, (size_t) n);
}


static int
t_info_init_master(const gn_api_t *api, void *conf)
{
    t_info_master_slot = api->child_slot();

    if (((t_info_conf_t *) conf)->main_only < 0) {
        api->log(NULL, GN_LOG_EMERG, "t_info: init_master fails on purpose "
                 "(t_info_main_only %lld)",
                 (long long) ((t_info_conf_t *) conf)->main_only);
        return GN_ERROR;
    }

    api->log(NULL, GN_LOG_NOTICE, "t_info: init_master pid %ld slot %d",
             (long) getpid(), t_info_master_slot);

    return GN_OK;
}


static int
t_info_init_child(const gn_api_t *api, void *conf)
{
    t_info_init_child_calls++;

    api->log(NULL, GN_LOG_NOTICE, "t_info: init_child slot %d pid %ld",
             api->child_slot(), (long) getpid());

    return GN_OK;
}


static void
t_info_exit_child(const gn_api_t *api)
{
    api->log(NULL, GN_LOG_NOTICE, "t_info: exit_child slot %d pid %ld",
             api->child_slot(), (long) getpid());
}


static int
t_info_filter_log(const gn_api_t *api, gn_request_t *r)
{
    t_info_requests++;

    return GN_OK;
}


/* Live children according to the scoreboard. */
static int
t_info_live(const gn_api_t *api)
{
    int               i, n, live;
    gn_child_stats_t  cs;

    n = api->max_slots();
    live = 0;

    for (i = 0; i < n; i++) {
        memset(&cs, 0, sizeof(cs));
        if (api->child_stats(i, &cs)) {
            live++;
        }
    }

    return live;
}


static int
t_info_ends_with(gn_str_t s, const char *tail)
{
    size_t  n = strlen(tail);

    return s.len >= n && memcmp(s.data + s.len - n, tail, n) == 0;
}


static int
t_info_handler(const gn_api_t *api, gn_request_t *r)
{
    t_info_conf_t      *cf;
    gn_server_stats_t   ss;

    cf = api->module_conf(r, &t_info_module);

    /* ".../decline": not ours, the static files serve it; ".../decline-
     * late": a buggy module that writes, then declines */
    if (t_info_ends_with(api->uri(r), "/decline")) {
        return GN_DECLINED;
    }
    if (t_info_ends_with(api->uri(r), "/decline-late")) {
        t_info_printf(api, r, "half a response\n");
        return GN_DECLINED;
    }

    /* the return value of server_stats is not specified: rely on the
     * zeroed struct */
    memset(&ss, 0, sizeof(ss));
    (void) api->server_stats(&ss);

    api->set_header(r, "Content-Type", "application/json");
    api->set_header(r, "Cache-Control", "no-store");

    t_info_printf(api, r,
        "{\"module\":\"t_info\",\"slot\":%d,\"pid\":%ld,"
        "\"init_child\":%d,\"master_slot\":%d,\"requests\":%llu,",
        api->child_slot(), (long) getpid(), t_info_init_child_calls,
        t_info_master_slot, (unsigned long long) t_info_requests);

    t_info_printf(api, r,
        "\"https\":\"%.*s\",\"tls_protocol\":\"%.*s\","
        "\"tls_cipher\":\"%.*s\",",
        t_info_str(api->variable(r, "HTTPS")),
        t_info_str(api->variable(r, "TLS_PROTOCOL")),
        t_info_str(api->variable(r, "TLS_CIPHER")));

    t_info_printf(api, r,
        "\"method\":\"%.*s\",\"uri\":\"%.*s\",\"query\":\"%.*s\","
        "\"remote_addr\":\"%.*s\",\"server_port\":\"%.*s\",",
        t_info_str(api->method(r)), t_info_str(api->uri(r)),
        t_info_str(api->query(r)),
        t_info_str(api->variable(r, "REMOTE_ADDR")),
        t_info_str(api->variable(r, "SERVER_PORT")));

    t_info_printf(api, r,
        "\"abi\":\"%d.%d\",\"api_size\":%u,\"server\":\"%s\",",
        api->abi_major, api->abi_minor, (unsigned) api->size,
        api->server_version());

    t_info_printf(api, r,
        "\"tag\":\"%s\",\"number\":%lld,\"flag\":%lld,\"size\":%lld,"
        "\"duration\":%lld,\"main_only\":%lld,",
        cf->tag != NULL ? cf->tag : "(null)", (long long) cf->number,
        (long long) cf->flag, (long long) cf->size,
        (long long) cf->duration, (long long) cf->main_only);

    t_info_printf(api, r,
        "\"max_slots\":%d,\"live\":%d,\"server_children\":%u}\n",
        api->max_slots(), t_info_live(api), (unsigned) ss.children);

    return GN_OK;
}
