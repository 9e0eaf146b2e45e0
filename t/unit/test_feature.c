/*
 * The feature registry (feature.h, features.c) and what the cycle does
 * with it: every ID has its entry, every plain row's slot lies inside
 * the struct it addresses, no directive is shadowed by another table,
 * each feature's part of a level starts with its declared defaults and
 * is inherited main -> server -> location, a feature's row writes to the
 * feature's part (never to the core's struct or another part), and the
 * hooks run (the default error and access logs, *:80 without `listen`)
 * in their order: a module's refusal of a level before the core's root
 * check of it, the error log opened before the files log directives
 * name, and everything opened closed again when a later open fails.
 */

#include "gn_config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cycle.h"
#include "feature.h"
#include "errlog.h"
#include "access_log.h"
#include "lookup.h"
#include "http_request.h"
#include "http_file.h"
#include "http_static.h"
#include "tls.h"
#include "t_cycle.h"
#include "../tap.h"


/* The size of a slot a row's generic setter writes, by the setter; 0:
 * none. (Not conf.c's gn_conf_plain_size on purpose: the test keeps its
 * own account, path slots included, to check the rows against.) */
static size_t
t_plain_size(const gn_conf_cmd_t *c)
{
    if (c->set == gn_conf_set_flag_slot) {
        return sizeof(gn_flag_t);
    }
    if (c->set == gn_conf_set_num_slot) {
        return sizeof(gn_int_t);
    }
    if (c->set == gn_conf_set_size_slot) {
        return sizeof(size_t);
    }
    if (c->set == gn_conf_set_msec_slot) {
        return sizeof(gn_msec_t);
    }
    if (c->set == gn_conf_set_str_slot || c->set == gn_conf_set_path_slot) {
        return sizeof(gn_str_t);
    }
    return 0;
}


static void
test_registry(void)
{
    const gn_feature_t   *f, *g;
    const gn_conf_cmd_t  *c, *d;
    gn_uint_t             i, j, bad_slot, shadowed, nrows;
    size_t                n, room;

    for (i = 0; i < GN_FEATURE_N; i++) {
        f = gn_features[i];
        if (!ok(f != NULL && f->name != NULL && f->commands != NULL,
                "feature %u has an entry, a name and a table", (unsigned) i))
        {
            return;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(gn_features[j]->name, f->name) == 0) {
                ok(0, "feature name \"%s\" is unique", f->name);
            }
        }
    }
    is_str(gn_features[GN_FEATURE_CORE]->name,
           strlen(gn_features[GN_FEATURE_CORE]->name), "core",
           "GN_FEATURE_CORE is the core");
    is_str(gn_features[GN_FEATURE_TLS]->name,
           strlen(gn_features[GN_FEATURE_TLS]->name), "tls",
           "GN_FEATURE_TLS is tls (IDs and entries agree)");

    /* every plain slot inside the struct its row addresses */
    bad_slot = 0;
    nrows = 0;
    for (i = 0; i < GN_FEATURE_N; i++) {
        f = gn_features[i];
        for (c = f->commands; c->name.len != 0; c++) {
            n = t_plain_size(c);
            if (n == 0) {
                continue;
            }
            nrows++;
            room = c->conf == GN_CONF_MAIN_CONF ? sizeof(gn_main_conf_t)
                   : c->conf == GN_CONF_SRV_CONF ? sizeof(gn_srv_conf_t)
                   : f->conf_size ? f->conf_size : sizeof(gn_loc_conf_t);
            if (c->offset + n > room) {
                diag("%s: \"%.*s\" at %zu + %zu is outside its struct "
                     "(%zu bytes)", f->name, (int) c->name.len,
                     (char *) c->name.data, c->offset, n, room);
                bad_slot++;
            }
            if (c->conf == GN_CONF_LOC_CONF && f->conf_size == 0
                && i != GN_FEATURE_CORE)
            {
                diag("%s: \"%.*s\" writes to the core's level struct",
                     f->name, (int) c->name.len, (char *) c->name.data);
                bad_slot++;
            }
        }
    }
    ok(nrows >= 25, "the registry has its plain rows (%u)", (unsigned) nrows);
    is_int(bad_slot, 0, "every plain slot lies inside its feature's part");

    /* a name in two tables with a context in common: the second would
     * never be found */
    shadowed = 0;
    for (i = 0; i < GN_FEATURE_N; i++) {
        for (c = gn_features[i]->commands; c->name.len != 0; c++) {
            for (j = i; j < GN_FEATURE_N; j++) {
                g = gn_features[j];
                for (d = (j == i ? c + 1 : g->commands); d->name.len != 0;
                     d++)
                {
                    if (gn_str_cmp(&c->name, &d->name) == 0
                        && (c->type & d->type & GN_CONF_ANY))
                    {
                        diag("\"%.*s\" in %s and %s", (int) c->name.len,
                             (char *) c->name.data, gn_features[i]->name,
                             g->name);
                        shadowed++;
                    }
                }
            }
        }
    }
    is_int(shadowed, 0, "no directive is shadowed by another table");
}


static void
test_defaults(void)
{
    gn_cycle_t            *cycle;
    gn_loc_conf_t         *m;
    gn_http_conf_t        *hc;
    gn_file_conf_t        *fc;
    gn_tls_conf_t         *tc;
    gn_errlog_conf_t      *ec;
    gn_access_log_conf_t  *al;
    gn_listen_t           *ls;
    char                   text[512], err[1024];

    /* nothing but a server: every default */
    snprintf(text, sizeof(text), "%sserver { }\n", t_cycle_user());
    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (!ok(cycle != NULL, "a bare server loads")) {
        diag("%s", err);
        return;
    }

    m = cycle->main_loc;
    hc = gn_http_conf(m);
    is_int(hc->keepalive_timeout, 75000, "http: keepalive_timeout 75s");
    is_int(hc->keepalive_requests, 1000, "http: keepalive_requests 1000");
    is_int((long long) hc->client_max_body_size, 1024 * 1024,
           "http: client_max_body_size 1m");
    is_int(hc->server_tokens, 0, "http: server_tokens off");

    fc = gn_file_conf(m);
    is_int(fc->sendfile, 1, "file: sendfile on");
    is_int((long long) fc->sendfile_min_size, 16384,
           "file: sendfile_min_size 16k");
    is_int(fc->file_cache_entries, 1024, "file: file_cache_entries 1024");
    is_int(fc->file_cache_valid, 2000, "file: file_cache_valid 2s");

    is_int(gn_static_conf(m)->max_ranges, 16, "static: max_ranges 16");
    is_int(gn_static_conf(m)->log_not_found, 1, "static: log_not_found on");

    tc = gn_tls_conf(m);
    is_int(tc->protocols, GN_TLS_PROTO_12 | GN_TLS_PROTO_13,
           "tls: TLSv1.2 and TLSv1.3 (a merge hook's default)");
    is_int(tc->session_cache, 4 * 1024 * 1024, "tls: session cache 4m");
    is_int(tc->session_timeout, 300000, "tls: session timeout 300s");
    is_int(tc->session_tickets, 1, "tls: tickets on");

    is_str(gn_types_conf(m)->default_type.data,
           gn_types_conf(m)->default_type.len, "application/octet-stream",
           "types: default_type");

    ec = gn_errlog_conf(m);
    ok(ec->path.len > 0 && ec->path.data[0] == '/',
       "errlog: the default error log, absolute (%.*s)", (int) ec->path.len,
       (char *) ec->path.data);
    is_int(ec->level, GN_LOG_NOTICE, "errlog: level notice");

    al = gn_access_log_conf(m);
    ok(al->logs != NULL && al->logs->nelts == 1,
       "access_log: the default access log, added at the main level");

    is_int(cycle->listening.nelts, 1, "listen: one listener without listen");
    ls = cycle->listening.elts;
    is_int(ntohs(((struct sockaddr_in *) &ls[0].sa)->sin_port), 80,
           "listen: a server without listen listens on port 80");

    gn_cycle_destroy(cycle);

    /* every server says `access_log off`: no default log */
    snprintf(text, sizeof(text), "%sserver { listen 127.0.0.1:1; "
             "access_log off; }\n", t_cycle_user());
    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (ok(cycle != NULL, "access_log off everywhere loads")) {
        ok(gn_access_log_conf(cycle->main_loc)->logs == NULL,
           "access_log: no default log when no server uses it");
        gn_cycle_destroy(cycle);
    }
}


static void
test_inheritance(void)
{
    gn_cycle_t      *cycle;
    gn_srv_conf_t  **psc;
    gn_loc_conf_t  **plc, *a, *b;
    char             text[1024], err[1024];

    snprintf(text, sizeof(text), "%s"
             "send_timeout 7s;\n"
             "server {\n"
             "    listen 127.0.0.1:1;\n"
             "    etag off;\n"
             "    file_cache_valid 5s;\n"
             "    location /a/ { send_timeout 3s; }\n"
             "    location /b/ { etag on; default_type text/x-b; }\n"
             "}\n", t_cycle_user());
    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (!ok(cycle != NULL, "a configuration with three levels loads")) {
        diag("%s", err);
        return;
    }

    psc = cycle->main->servers.elts;
    plc = psc[0]->locations.elts;
    a = gn_str_eq(&plc[0]->name, "/a/") ? plc[0] : plc[1];
    b = a == plc[0] ? plc[1] : plc[0];

    is_int(gn_http_conf(cycle->main_loc)->send_timeout, 7000,
           "main: its own value");
    is_int(gn_http_conf(psc[0]->loc)->send_timeout, 7000,
           "server: inherits from main");
    is_int(gn_http_conf(a)->send_timeout, 3000, "location: its own value");
    is_int(gn_http_conf(b)->send_timeout, 7000,
           "location: inherits through the server");

    is_int(gn_static_conf(cycle->main_loc)->etag, 1, "main: etag's default");
    is_int(gn_static_conf(psc[0]->loc)->etag, 0, "server: etag off");
    is_int(gn_static_conf(a)->etag, 0, "location: inherits etag off");
    is_int(gn_static_conf(b)->etag, 1, "location: etag on again");

    is_int(gn_file_conf(a)->file_cache_valid, 5000,
           "another feature's part inherits on its own");
    is_int(gn_http_conf(psc[0]->loc)->keepalive_timeout, 75000,
           "an unset slot gets the row's default at every level");
    is_str(gn_types_conf(b)->default_type.data,
           gn_types_conf(b)->default_type.len, "text/x-b",
           "a string slot at the location");
    is_str(gn_types_conf(a)->default_type.data,
           gn_types_conf(a)->default_type.len, "application/octet-stream",
           "... and the default beside it");

    /* each level has parts of its own: nothing shared by mistake */
    ok(a->conf[GN_FEATURE_HTTP] != b->conf[GN_FEATURE_HTTP]
       && a->conf[GN_FEATURE_HTTP] != psc[0]->loc->conf[GN_FEATURE_HTTP],
       "every level has its own part of a feature");
    ok(a->conf[GN_FEATURE_CORE] == NULL && a->conf[GN_FEATURE_LISTEN] == NULL,
       "features without a part have none");

    gn_cycle_destroy(cycle);
}


static void
test_refusals(void)
{
    gn_cycle_t  *cycle;
    char         text[512], err[1024], name[64], want[256];

    /* a feature's directive, refused with its file:line as before */
    snprintf(text, sizeof(text), "%sserver {\n    listen 127.0.0.1:1;\n"
             "    send_timeout never;\n}\n", t_cycle_user());
    cycle = t_cycle_load(text, name, sizeof(name), err, sizeof(err));
    ok(cycle == NULL, "a bad value in a feature's row is refused");
    snprintf(want, sizeof(want), " in %s:4", name);
    ok(strstr(err, "send_timeout") != NULL && strstr(err, want) != NULL,
       "... naming the directive and its file:line (%s)", err);
    if (cycle != NULL) {
        gn_cycle_destroy(cycle);
    }

    /* a context a feature's row does not allow */
    snprintf(text, sizeof(text), "%sserver {\n    listen 127.0.0.1:1;\n"
             "    location / { tls_session_cache 1m; }\n}\n",
             t_cycle_user());
    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    ok(cycle == NULL && strstr(err, "\"tls_session_cache\" directive is "
                                    "not allowed here") != NULL,
       "a main-only row of a feature is refused in a location (%s)", err);
    if (cycle != NULL) {
        gn_cycle_destroy(cycle);
    }
}


/* With chroot, a location that is both a CGI location and rooted
 * outside the chroot is refused for the CGI (the modules' check_level
 * comes before the core's root check of the same level). */
static void
test_check_order(const char *dir)
{
    gn_cycle_t  *cycle;
    const char  *moddir = getenv("GN_MODDIR");
    char         mod[256], text[1024], err[1024];

    snprintf(mod, sizeof(mod), "%s/mod_cgi.so",
             moddir != NULL ? moddir : "modules/.libs");
    if (access(mod, R_OK) != 0) {
        diag("%s not built: the check order is not tested", mod);
        return;
    }

    snprintf(text, sizeof(text), "%sload_module %s;\nchroot %s;\n"
             "server {\n    listen 127.0.0.1:1;\n    root %s;\n"
             "    location /o/ { handler cgi; root /elsewhere; }\n}\n",
             t_cycle_user(), mod, dir, dir);
    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (!ok(cycle == NULL && strstr(err, "\"handler cgi\" cannot be used "
                                         "with \"chroot\"") != NULL,
            "a CGI location outside the chroot: refused for the CGI, "
            "before its root"))
    {
        diag("got: %s", err);
    }
    if (cycle != NULL) {
        gn_cycle_destroy(cycle);
    }
}


/* The log that gn_cycle_open reports its failures to: a file. */
static int
t_log_open(gn_log_t *log, const char *path)
{
    memset(log, 0, sizeof(gn_log_t));
    log->level = GN_LOG_DEBUG;
    log->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return log->fd;
}


static void
t_log_read(gn_log_t *log, char *buf, size_t size)
{
    ssize_t  n;

    n = pread(log->fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
}


static void
test_open(const char *dir)
{
    gn_cycle_t         *cycle;
    gn_open_file_t    **files;
    gn_log_t            log;
    struct sockaddr_in  sin;
    socklen_t           len = sizeof(sin);
    char                text[1024], err[1024], got[4096], path[256];
    int                 s;

    snprintf(path, sizeof(path), "%s/open.log", dir);
    if (t_log_open(&log, path) == -1) {
        ok(0, "a log for gn_cycle_open");
        return;
    }

    /* the error log and an access log both in missing directories: the
     * error log is the one reported (it opens first) */
    snprintf(text, sizeof(text), "%serror_log %s/nodir/error.log;\n"
             "server {\n    listen 127.0.0.1:1;\n"
             "    access_log %s/nodir2/access.log;\n}\n",
             t_cycle_user(), dir, dir);
    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (ok(cycle != NULL, "a configuration with unopenable logs loads")) {
        is_int(gn_cycle_open(cycle, NULL, &log), GN_ERROR,
               "... and does not open");
        t_log_read(&log, got, sizeof(got));
        if (!ok(strstr(got, "nodir/error.log") != NULL
                && strstr(got, "nodir2") == NULL,
                "the error log is opened (and fails) first"))
        {
            diag("logged: %s", got);
        }
        gn_cycle_destroy(cycle);
    }

    /* a listener whose address is taken: what opened before it is
     * closed again */
    s = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s == -1 || bind(s, (struct sockaddr *) &sin, sizeof(sin)) == -1
        || listen(s, 1) == -1
        || getsockname(s, (struct sockaddr *) &sin, &len) == -1)
    {
        ok(0, "a port to take");
        close(log.fd);
        return;
    }

    snprintf(text, sizeof(text), "%serror_log %s/error.log;\n"
             "server {\n    listen 127.0.0.1:%u;\n"
             "    access_log %s/access.log;\n}\n",
             t_cycle_user(), dir, (unsigned) ntohs(sin.sin_port), dir);
    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (ok(cycle != NULL, "a configuration on a taken port loads")) {
        is_int(gn_cycle_open(cycle, NULL, &log), GN_ERROR,
               "... and does not open (the address is in use)");
        files = cycle->open_files.elts;
        ok(cycle->error_log_fd == -1 && cycle->open_files.nelts == 1
           && files[0]->fd == -1,
           "the error log and the access log opened before it are closed");
        gn_cycle_destroy(cycle);
    }

    close(s);
    close(log.fd);
    snprintf(text, sizeof(text), "%s/error.log", dir);
    (void) unlink(text);
    snprintf(text, sizeof(text), "%s/access.log", dir);
    (void) unlink(text);
    (void) unlink(path);
}


int
main(void)
{
    char  dir[] = "/tmp/gn-test-feature-XXXXXX";

    test_registry();
    test_defaults();
    test_inheritance();
    test_refusals();

    if (mkdtemp(dir) != NULL) {
        test_check_order(dir);
        test_open(dir);
        (void) rmdir(dir);
    } else {
        ok(0, "mkdtemp()");
    }

    return done_testing();
}
