/*
 * Name and location lookup on a configuration parsed by gn_cycle_create:
 * the server a Host or SNI name picks among those of one address (exact
 * names before any wildcard whatever their order, the longest matching
 * wildcard, no case, a trailing dot, "*.example.com" not matching
 * "example.com" itself) and the location a path picks in a server
 * (exact "=" locations only for equal paths, the longest prefix,
 * whatever the order in the file; the server level when none matches).
 */

#include "gn_config.h"

#include "cycle.h"
#include "listen.h"
#include "lookup.h"
#include "t_cycle.h"
#include "../tap.h"


static const char  text[] =
    "server {\n"
    "    listen 127.0.0.1:1;\n"
    "    server_name *.example.com;\n"
    "}\n"
    "server {\n"
    "    listen 127.0.0.1:1;\n"
    "    server_name example.com www.example.com;\n"
    "}\n"
    "server {\n"
    "    listen 127.0.0.1:1;\n"
    "    server_name *.a.example.com Mixed.Example.ORG;\n"
    "}\n"
    "server {\n"
    "    listen 127.0.0.1:1 default_server;\n"
    "    server_name paths;\n"
    "    location /a/b/ { }\n"
    "    location / { }\n"
    "    location /a/ { }\n"
    "    location = /a { }\n"
    "    location = /exact/ { }\n"
    "    location /exact/more/ { }\n"
    "}\n";


/* The index in the file (0-based) of the server `name` picks, or -1. */
static int
pick(gn_cycle_t *cycle, const char *name)
{
    gn_listen_t     *ls = cycle->listening.elts;
    gn_srv_conf_t  **psc = cycle->main->servers.elts, *s;
    gn_uint_t        i;

    s = gn_lookup_server(&ls[0], (const u_char *) name, strlen(name));
    for (i = 0; s != NULL && i < cycle->main->servers.nelts; i++) {
        if (psc[i] == s) {
            return (int) i;
        }
    }

    return -1;
}


/* The name of the location `path` picks in server 3, "(server)" for the
 * server level. */
static const char *
loc(gn_cycle_t *cycle, const char *path)
{
    gn_srv_conf_t  **psc = cycle->main->servers.elts;
    gn_loc_conf_t   *lc;
    static char      buf[64];

    lc = gn_lookup_location(psc[3], (const u_char *) path, strlen(path));
    if (lc == psc[3]->loc) {
        return "(server)";
    }
    snprintf(buf, sizeof(buf), "%s%.*s", lc->exact ? "= " : "",
             (int) lc->name.len, (char *) lc->name.data);
    return buf;
}


int
main(void)
{
    gn_cycle_t  *cycle;
    char         err[1024];
    const char  *got;

    cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (!ok(cycle != NULL, "the configuration loads")) {
        diag("%s", err);
        return done_testing();
    }
    is_int(cycle->listening.nelts, 1, "one address for the four servers");

    /* names */
    is_int(pick(cycle, "example.com"), 1, "exact name");
    is_int(pick(cycle, "www.example.com"), 1,
           "an exact name wins over an earlier wildcard");
    is_int(pick(cycle, "x.example.com"), 0, "*.example.com");
    is_int(pick(cycle, "deep.x.example.com"), 0,
           "*.example.com matches any depth");
    is_int(pick(cycle, "y.a.example.com"), 2,
           "the longest matching wildcard wins, whatever the order");
    is_int(pick(cycle, "a.example.com"), 0,
           "*.a.example.com does not match a.example.com itself");
    is_int(pick(cycle, "WWW.EXAMPLE.COM"), 1, "names compare without case");
    is_int(pick(cycle, "mixed.example.org"), 2,
           "... either side's case");
    is_int(pick(cycle, "example.com."), 1, "a trailing dot is dropped");
    is_int(pick(cycle, "xexample.com"), -1,
           "*.example.com needs the dot: xexample.com matches nothing");
    is_int(pick(cycle, "example.net"), -1, "an unknown name: none");
    is_int(pick(cycle, ""), -1, "an empty name: none");
    is_int(pick(cycle, "."), -1, "a lone dot: none");

    /* locations */
    got = loc(cycle, "/a");
    is_str(got, strlen(got), "= /a", "= /a: the equal path");
    got = loc(cycle, "/a/");
    is_str(got, strlen(got), "/a/", "/a/: the prefix, not = /a");
    got = loc(cycle, "/a/b/c.html");
    is_str(got, strlen(got), "/a/b/",
           "the longest prefix, though written first");
    got = loc(cycle, "/a/bc");
    is_str(got, strlen(got), "/a/", "/a/bc: /a/ (/a/b/ needs its slash)");
    got = loc(cycle, "/ab");
    is_str(got, strlen(got), "/", "/ab: / (not = /a, not /a/)");
    got = loc(cycle, "/exact/");
    is_str(got, strlen(got), "= /exact/", "an exact location");
    got = loc(cycle, "/exact/x");
    is_str(got, strlen(got), "/",
           "an exact location is no prefix: /exact/x falls to /");
    got = loc(cycle, "/exact/more/x");
    is_str(got, strlen(got), "/exact/more/",
           "a prefix under an exact location's path");
    got = loc(cycle, "/A/b/");
    is_str(got, strlen(got), "/", "paths compare with their case");

    gn_cycle_destroy(cycle);
    return done_testing();
}
