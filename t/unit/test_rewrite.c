/*
 * rewrite, return and regex locations (core/rewrite.c) through the real
 * directive tables: each configuration is written to a temporary file and
 * parsed by gn_cycle_create(), as `gannet -t` does; each request is made
 * by hand and run through gn_rewrite_run(), as a child does. Covered:
 * what the directives refuse, with the file:line of the mistake; the
 * templates ($N, ${N}, ${name}, $$, $args, $uri, $host, $scheme,
 * $request_uri), captures a match did not set; nginx's query rules ("?"
 * adds, a trailing "?" drops); the flags; redirects and `return`;
 * location precedence; the cap of 10 internal redirects; and the lines
 * the child logs when a rule fails.
 */

#include "gn_config.h"

#include <fcntl.h>

#include "cycle.h"
#include "http_request.h"
#include "log.h"
#include "regex.h"
#include "rewrite.h"
#include "t_cycle.h"
#include "../tap.h"


typedef struct {
    gn_http_request_t  r;
    gn_conn_t          c;
} t_req_t;


static char        t_dir[] = "/tmp/gn-test-rewrite-XXXXXX";
static char        t_conf[64];     /* the last one loaded */
static char        t_logfile[64];
static gn_log_t    t_log;
static gn_pool_t  *t_pool;


/* Writes `body` as the inside of one `server` block, from line 5 of the
 * file, and parses it. NULL with err filled when it is refused. */
static gn_cycle_t *
t_load(const char *body, char *err, size_t errlen)
{
    char  text[8192];

    snprintf(text, sizeof(text), "%s"
             "server {\n"
             "    listen 127.0.0.1:1;\n"
             "    server_name rw.test;\n"
             "%s\n"
             "}\n", t_cycle_user(), body);

    return t_cycle_load(text, t_conf, sizeof(t_conf), err, errlen);
}


/* The configuration must be refused with `msg` at line `line`. */
static void
t_refused(const char *body, const char *msg, int line, const char *what)
{
    gn_cycle_t  *cycle;
    char         err[1024], want[1024];

    cycle = t_load(body, err, sizeof(err));
    if (cycle != NULL) {
        ok(0, "%s: refused (it was accepted)", what);
        gn_cycle_destroy(cycle);
        return;
    }

    snprintf(want, sizeof(want), "%s in %s:%d", msg, t_conf, line);
    is_str(err, strlen(err), want, "%s", what);
}


/* Runs the rules of the cycle's server on a request for `target` (a
 * normalised path, maybe "?query") with Host `host` (NULL: none), over
 * TLS or not. Returns what gn_rewrite_run() returned. */
static gn_int_t
t_run(t_req_t *q, gn_cycle_t *cycle, const char *target, const char *host,
    gn_uint_t tls)
{
    gn_srv_conf_t  **srv;
    const char      *qm;

    memset(q, 0, sizeof(t_req_t));

    q->c.log = t_log;
    q->c.tls = tls ? (void *) q : NULL;      /* only its being set counts */

    srv = cycle->main->servers.elts;
    q->r.c = &q->c;
    q->r.pool = t_pool;
    q->r.srv = srv[0];
    q->r.loc = srv[0]->loc;
    q->r.content_length = -1;
    q->r.last_modified = -1;

    q->r.head.target.data = (u_char *) target;
    q->r.head.target.len = strlen(target);

    qm = strchr(target, '?');
    q->r.uri.data = (u_char *) target;
    q->r.uri.len = qm != NULL ? (size_t) (qm - target) : strlen(target);
    if (qm != NULL) {
        q->r.head.query.data = (u_char *) qm + 1;
        q->r.head.query.len = strlen(qm + 1);
        q->r.head.has_query = 1;
    }

    if (host != NULL) {
        q->r.head.host.data = (u_char *) host;
        q->r.head.host.len = strlen(host);
    }

    return gn_rewrite_run(&q->r);
}


/* "uri?query" after the rules, or "uri" when there is no query. */
static const char *
t_uri(t_req_t *q)
{
    static char  buf[512];

    snprintf(buf, sizeof(buf), "%.*s%s%.*s", GN_STR_ARG(&q->r.uri),
             q->r.head.has_query ? "?" : "",
             GN_STR_ARG(&q->r.head.query));
    return buf;
}


/* The body a `return CODE TEXT` or an error page set up. */
static const char *
t_body(t_req_t *q)
{
    static char  buf[512];

    if (q->r.segs == NULL || q->r.nsegs < 2) {
        return "";
    }

    snprintf(buf, sizeof(buf), "%.*s", (int) q->r.segs[1].len,
             (char *) q->r.segs[1].pos);
    return buf;
}


static void
t_log_reset(void)
{
    if (ftruncate(t_log.fd, 0) == -1) {
        diag("ftruncate(%s) failed", t_logfile);
    }
}


static gn_uint_t
t_logged(const char *needle)
{
    char     buf[8192];
    ssize_t  n;
    int      fd;

    fd = open(t_logfile, O_RDONLY);
    if (fd == -1) {
        return 0;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';

    return strstr(buf, needle) != NULL;
}


static void
test_refused(void)
{
    t_refused("    rewrite ^/(a /b;",
              "pcre2_compile() failed: missing closing parenthesis at "
              "offset 4 in \"^/(a\"", 5, "a bad pattern, PCRE2's reason");
    t_refused("    location / { }\n    rewrite ^/a /b sometimes;",
              "invalid flag \"sometimes\" in \"rewrite\" directive, it must "
              "be last, break, redirect or permanent", 6,
              "an unknown flag, on its own line");
    t_refused("    rewrite ^/a /b LAST;",
              "invalid flag \"LAST\" in \"rewrite\" directive, it must be "
              "last, break, redirect or permanent", 5,
              "flags are case-sensitive, as nginx's");
    t_refused("    rewrite ^/(a)(b) /$3;",
              "\"$3\" refers to a capture the pattern does not have, in "
              "\"/$3\"", 5, "a capture past the pattern's groups");
    t_refused("    rewrite ^/a /$1;",
              "\"$1\" refers to a capture the pattern does not have, in "
              "\"/$1\"", 5, "$1 of a pattern without groups");
    t_refused("    rewrite ^/a /b$;",
              "a lone \"$\" in \"/b$\" (write \"$$\" for a dollar sign)", 5,
              "a lone $ at the end");
    t_refused("    rewrite ^/a /$-;",
              "a lone \"$\" in \"/$-\" (write \"$$\" for a dollar sign)", 5,
              "a $ before a non-name");
    t_refused("    rewrite ^/(a) /${1;",
              "unterminated \"${\" in \"/${1\"", 5, "an unclosed ${");
    t_refused("    rewrite ^/(a) /${};",
              "unterminated \"${\" in \"/${}\"", 5, "an empty ${}");
    t_refused("    rewrite ^/a /$nosuch;",
              "unknown variable or group \"$nosuch\" in \"/$nosuch\"", 5,
              "an unknown variable");
    t_refused("    rewrite ^/(?<id>\\d+) /${name};",
              "unknown variable or group \"$name\" in \"/${name}\"", 5,
              "a group name the pattern does not have");
    t_refused("    rewrite ^/a;",
              "invalid number of arguments in \"rewrite\" directive", 5,
              "rewrite needs a replacement");

    t_refused("    return abc;",
              "invalid return code \"abc\", expected a status or a URL "
              "(http://, https://)", 5, "return of a word");
    t_refused("    return /relative;",
              "invalid return code \"/relative\", expected a status or a "
              "URL (http://, https://)", 5,
              "return of a bare path is not a URL");
    t_refused("    return https://a.test/ text;",
              "invalid return code \"https://a.test/\", expected a status "
              "or a URL (http://, https://)", 5,
              "return URL takes nothing after it");
    t_refused("    return 600;",
              "invalid return code \"600\", it must be from 200 to 599", 5,
              "return 600");
    t_refused("    return 199;",
              "invalid return code \"199\", it must be from 200 to 599", 5,
              "return 199");
    t_refused("    location /a/ { return 302 /b/$1; }",
              "\"$1\" refers to a capture the pattern does not have, in "
              "\"/b/$1\"", 5, "return $1 in a prefix location");
    t_refused("    location ~ ^/(a)$ { return 200 \"$2\"; }",
              "\"$2\" refers to a capture the pattern does not have, in "
              "\"$2\"", 5, "return $2 of a one-group location");
    t_refused("    location / { }\n    location ~* ^/(a { }",
              "pcre2_compile() failed: missing closing parenthesis at "
              "offset 4 in \"^/(a\"", 6, "a bad location pattern");
}


static void
test_templates(void)
{
    gn_cycle_t  *cycle;
    t_req_t      q;
    char         err[1024];

    cycle = t_load(
        "    rewrite ^/t12/(\\w)(\\w)$ /r/$12 break;\n"
        "    rewrite ^/brace/(\\w)$ /r/${1}2 break;\n"
        "    rewrite ^/named/(?<id>\\d+)$ /r/${id}-$id break;\n"
        "    rewrite ^/dollar/(\\w+)$ /r/$$1-$1 break;\n"
        "    rewrite ^/opt/(a)?(b)?$ /r/[$1][$2] break;\n"
        "    rewrite ^/vars(/.*)$ \"/r$1?u=$uri&a=$args&h=$host&s=$scheme"
        "&q=$request_uri\" break;\n"
        "    rewrite ^/empty$ \"\" break;\n"
        "    rewrite ^/rel$ rel break;\n"
        "    rewrite ^/dots/(.*)$ /r/x/../$1 break;\n"
        "    rewrite ^/climb/(.*)$ /../$1 break;\n"
        "    location / { }\n"
        "    location /r/ { }", err, sizeof(err));
    ok(cycle != NULL, "template configuration: %s", err);
    if (cycle == NULL) {
        return;
    }

    is_int(t_run(&q, cycle, "/t12/ab", NULL, 0), GN_OK, "$12: runs");
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/a2",
           "$12 is $1 followed by \"2\" (one digit, as nginx)");
    t_run(&q, cycle, "/brace/a", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/a2", "${1}2");
    t_run(&q, cycle, "/named/42", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/42-42",
           "a named group, with and without braces");
    t_run(&q, cycle, "/dollar/x", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/$1-x",
           "$$ is a dollar sign, not the start of $1");

    t_run(&q, cycle, "/opt/a", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/[a][]",
           "a group past the last one that matched is empty");
    t_run(&q, cycle, "/opt/b", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/[][b]",
           "an unset group before a set one is empty");
    t_run(&q, cycle, "/opt/", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/[][]", "no group set");

    is_int(t_run(&q, cycle, "/vars/p?x=1", "Rw.TEST:8080", 0), GN_OK,
           "variables: runs");
    is_str(t_uri(&q), strlen(t_uri(&q)),
           "/r/p?u=/vars/p&a=x=1&h=rw.test&s=http&q=/vars/p?x=1&x=1",
           "$uri, $args, $host (lower case, no port), $scheme, "
           "$request_uri; then the old query");
    t_run(&q, cycle, "/vars/p", NULL, 1);
    is_str(t_uri(&q), strlen(t_uri(&q)),
           "/r/p?u=/vars/p&a=&h=rw.test&s=https&q=/vars/p",
           "no Host: $host is the server's name; TLS: $scheme https");

    t_log_reset();
    is_int(t_run(&q, cycle, "/empty", NULL, 0), GN_ERROR,
           "an empty replacement fails the request");
    ok(t_logged("rewrite \"^/empty$\" made an invalid URI \"\""),
       "and says so in the error log");
    t_log_reset();
    is_int(t_run(&q, cycle, "/rel", NULL, 0), GN_ERROR,
           "a replacement not starting with / fails");
    ok(t_logged("made an invalid URI \"rel\""), "logged");

    is_int(t_run(&q, cycle, "/dots/y", NULL, 0), GN_OK, "dot segments");
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/y",
           "the new URI is normalised");
    t_log_reset();
    is_int(t_run(&q, cycle, "/climb/etc", NULL, 0), GN_ERROR,
           "a new URI climbing above the root fails");
    ok(t_logged("made an invalid URI \"/../etc\""), "logged");

    gn_cycle_destroy(cycle);
}


static void
test_query(void)
{
    gn_cycle_t  *cycle;
    t_req_t      q;
    char         err[1024];

    cycle = t_load(
        "    rewrite ^/add/(\\w+)$ /r/$1?n=$1 break;\n"
        "    rewrite ^/keep/(\\w+)$ /r/$1 break;\n"
        "    rewrite ^/drop/(\\w+)$ /r/$1? break;\n"
        "    location / { }", err, sizeof(err));
    ok(cycle != NULL, "query configuration: %s", err);
    if (cycle == NULL) {
        return;
    }

    t_run(&q, cycle, "/add/a", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/a?n=a",
           "a query in the replacement, none in the request");
    t_run(&q, cycle, "/add/a?x=1", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/a?n=a&x=1",
           "the request's query goes after the new one");
    t_run(&q, cycle, "/keep/a?x=1", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/a?x=1",
           "no \"?\": the query is kept");
    t_run(&q, cycle, "/keep/a", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/a", "no query, none added");
    t_run(&q, cycle, "/drop/a?x=1", NULL, 0);
    is_str(t_uri(&q), strlen(t_uri(&q)), "/r/a",
           "a trailing \"?\" drops the query");
    t_run(&q, cycle, "/keep/a?", NULL, 0);
    is_int((gn_int_t) q.r.head.has_query, 1,
           "an empty query (\"a?\") is kept as it came");

    gn_cycle_destroy(cycle);
}


static void
test_flags(void)
{
    gn_cycle_t  *cycle;
    t_req_t      q;
    char         err[1024];

    cycle = t_load(
        "    rewrite ^/srv-last$ /a/one last;\n"
        "    rewrite ^/srv-last$ /never;\n"
        "    rewrite ^/srv-break$ /b/from-srv break;\n"
        "    rewrite ^/srv-break$ /never;\n"
        "    location / { }\n"
        "    location /a/ { return 200 \"a $uri\"; }\n"
        "    location /b/ {\n"
        "        rewrite ^/b/from-srv$ /a/moved;\n"
        "    }\n"
        "    location /brk/ {\n"
        "        rewrite ^/brk/(.*)$ /a/$1 break;\n"
        "        return 200 \"not reached\";\n"
        "    }\n"
        "    location /lst/ {\n"
        "        rewrite ^/lst/(.*)$ /a/$1 last;\n"
        "        return 200 \"not reached\";\n"
        "    }\n"
        "    location /chain/ {\n"
        "        rewrite ^/chain/1$ /chain/2;\n"
        "        rewrite ^/chain/2$ /chain/3;\n"
        "    }\n"
        "    location /c/ { rewrite ^/c/x(.*)$ /c/$1 last; }\n"
        "    location /loop { rewrite ^/loop(.*)$ /loop$1x last; }",
        err, sizeof(err));
    ok(cycle != NULL, "flags configuration: %s", err);
    if (cycle == NULL) {
        return;
    }

    is_int(t_run(&q, cycle, "/srv-last", NULL, 0), GN_DONE,
           "server-level last: the location of the new URI answers");
    is_str(t_body(&q), strlen(t_body(&q)), "a /a/one",
           "and the server's later rules did not run");

    is_int(t_run(&q, cycle, "/srv-break", NULL, 0), GN_DONE,
           "server-level break");
    is_str(t_body(&q), strlen(t_body(&q)), "a /a/moved",
           "stops the server's rules, not the location's (nginx), and a "
           "rewrite without a flag there searches again");

    is_int(t_run(&q, cycle, "/brk/x", NULL, 0), GN_OK, "break");
    is_str(t_uri(&q), strlen(t_uri(&q)), "/a/x", "break: the new URI");
    is_str(q.r.loc->name.data, q.r.loc->name.len, "/brk/",
           "break: served in the same location, no new search");
    is_int((gn_int_t) q.r.status, 0, "break: the return after it did not "
           "run");

    is_int(t_run(&q, cycle, "/lst/x", NULL, 0), GN_DONE, "last");
    is_str(t_body(&q), strlen(t_body(&q)), "a /a/x",
           "last: a new search, and the location of the new URI answers");

    is_int(t_run(&q, cycle, "/chain/1", NULL, 0), GN_OK, "no flag");
    is_str(t_uri(&q), strlen(t_uri(&q)), "/chain/3",
           "without a flag the next rule sees the new URI");

    is_int(t_run(&q, cycle, "/c/xxxxxxxxxx", NULL, 0), GN_OK,
           "10 internal redirects are allowed");
    is_str(t_uri(&q), strlen(t_uri(&q)), "/c/", "all 10 made");
    t_log_reset();
    is_int(t_run(&q, cycle, "/c/xxxxxxxxxxx", NULL, 0), GN_ERROR,
           "the 11th fails the request");
    ok(t_logged("[error]") && t_logged("rewrite or internal redirection "
                                       "cycle while processing \"/c/\""),
       "logged at error, with the URI it reached");
    is_int(t_run(&q, cycle, "/loop", NULL, 0), GN_ERROR,
           "an endless loop ends");

    gn_cycle_destroy(cycle);
}


static void
test_redirects(void)
{
    gn_cycle_t  *cycle;
    t_req_t      q;
    char         err[1024];

    cycle = t_load(
        "    rewrite ^/perm(/.*)$ $1 permanent;\n"
        "    rewrite ^/temp(/.*)$ $1?n=1 redirect;\n"
        "    rewrite ^/tdrop(/.*)$ $1? redirect;\n"
        "    rewrite ^/abs/(.*)$ https://example.test/$1;\n"
        "    rewrite ^/ABS/(.*)$ HTTP://example.test/$1 last;\n"
        "    rewrite ^/scheme/(.*)$ $scheme://$host/$1 redirect;\n"
        "    location / { }\n"
        "    location /go { return 301 https://example.test/elsewhere; }\n"
        "    location /plain { return https://example.test/plain; }\n"
        "    location /bare { return 302; }\n"
        "    location ~ ^/img/(\\w+)\\.gif$ { return 302 /pics/$1.png; }\n"
        "    location /gone { return 410; }\n"
        "    location /nobody { return 204; }\n"
        "    location /teapot { return 418 \"short and stout\"; }\n"
        "    location /deny { return 403 \"go away: $uri\"; }",
        err, sizeof(err));
    ok(cycle != NULL, "redirect configuration: %s", err);
    if (cycle == NULL) {
        return;
    }

    is_int(t_run(&q, cycle, "/perm/p?q=1", NULL, 0), GN_DONE, "permanent");
    is_int((gn_int_t) q.r.status, 301, "permanent: 301");
    is_str(q.r.location.data, q.r.location.len, "/p?q=1",
           "permanent: Location keeps the query");

    t_run(&q, cycle, "/temp/t?x=2", NULL, 0);
    is_int((gn_int_t) q.r.status, 302, "redirect: 302");
    is_str(q.r.location.data, q.r.location.len, "/t?n=1&x=2",
           "redirect: the query rules apply to the Location");
    t_run(&q, cycle, "/tdrop/t?x=2", NULL, 0);
    is_str(q.r.location.data, q.r.location.len, "/t",
           "redirect: a trailing \"?\" drops the query");

    t_run(&q, cycle, "/abs/x?y=2", NULL, 0);
    is_int((gn_int_t) q.r.status, 302,
           "an absolute replacement redirects without a flag");
    is_str(q.r.location.data, q.r.location.len,
           "https://example.test/x?y=2", "absolute Location with the query");
    is_int(t_run(&q, cycle, "/ABS/x", NULL, 0), GN_DONE,
           "HTTP:// in capitals redirects too, even with last");
    is_int((gn_int_t) q.r.status, 302, "302");
    t_run(&q, cycle, "/scheme/x", "Example.Test:8443", 1);
    is_str(q.r.location.data, q.r.location.len, "https://example.test/x",
           "$scheme://$host/...");

    is_int(t_run(&q, cycle, "/go", NULL, 0), GN_DONE, "return 301 URL");
    is_int((gn_int_t) q.r.status, 301, "return 301");
    is_str(q.r.location.data, q.r.location.len,
           "https://example.test/elsewhere", "return 301: Location");
    t_run(&q, cycle, "/plain", NULL, 0);
    is_int((gn_int_t) q.r.status, 302, "return URL: 302");
    is_str(q.r.location.data, q.r.location.len, "https://example.test/plain",
           "return URL: Location");
    is_int(t_run(&q, cycle, "/bare", NULL, 0), GN_DONE, "return 302");
    is_int((gn_int_t) q.r.status, 302, "return 302 without a URL");
    is_int((gn_int_t) q.r.location.len, 0, "and no Location");

    t_run(&q, cycle, "/img/cat.gif?v=1", NULL, 0);
    is_str(q.r.location.data, q.r.location.len, "/pics/cat.png",
           "return with the location's capture; the query is not added");

    is_int(t_run(&q, cycle, "/gone", NULL, 0), GN_DONE, "return 410");
    is_int((gn_int_t) q.r.status, 410, "410");
    ok(strstr(t_body(&q), "<h1>410 Gone</h1>") != NULL,
       "with the error page body");
    t_run(&q, cycle, "/nobody", NULL, 0);
    is_int((gn_int_t) q.r.status, 204, "return 204");
    is_int((gn_int_t) q.r.content_length, 0, "204: no body");
    t_run(&q, cycle, "/teapot", NULL, 0);
    is_int((gn_int_t) q.r.status, 418, "return 418 TEXT");
    is_str(t_body(&q), strlen(t_body(&q)), "short and stout",
           "the text is the body");
    is_str(q.r.content_type.data, q.r.content_type.len, "text/plain",
           "as text/plain");
    t_run(&q, cycle, "/deny/x", NULL, 0);
    is_int((gn_int_t) q.r.status, 403, "return 403 TEXT");
    is_str(t_body(&q), strlen(t_body(&q)), "go away: /deny/x",
           "an error status with a text: the text, expanded");

    gn_cycle_destroy(cycle);
}


static void
test_locations(void)
{
    gn_cycle_t  *cycle;
    t_req_t      q;
    char         err[1024], bomb[64];

    cycle = t_load(
        "    location / { }\n"
        "    location = /exact { }\n"
        "    location /docs/ { }\n"
        "    location ^~ /static/ { }\n"
        "    location ~ \\.(gif|jpg)$ { }\n"
        "    location ~* ^/upper/(?<word>[a-z]+)$ {\n"
        "        return 200 \"word=$word\";\n"
        "    }\n"
        "    location ~ ^/first/ { }\n"
        "    location ~ ^/first/second { }\n"
        "    location ~ ^/bomb/(a+)+$ { }", err, sizeof(err));
    ok(cycle != NULL, "location configuration: %s", err);
    if (cycle == NULL) {
        return;
    }

    t_run(&q, cycle, "/exact", NULL, 0);
    is_str(q.r.loc->name.data, q.r.loc->name.len, "/exact", "exact");
    t_run(&q, cycle, "/exact.gif", NULL, 0);
    is_str(q.r.loc->name.data, q.r.loc->name.len, "\\.(gif|jpg)$",
           "= is exact only");
    t_run(&q, cycle, "/docs/a.gif", NULL, 0);
    is_str(q.r.loc->name.data, q.r.loc->name.len, "\\.(gif|jpg)$",
           "a regex wins over a plain prefix");
    t_run(&q, cycle, "/docs/a.txt", NULL, 0);
    is_str(q.r.loc->name.data, q.r.loc->name.len, "/docs/",
           "else the longest prefix");
    t_run(&q, cycle, "/static/a.gif", NULL, 0);
    is_str(q.r.loc->name.data, q.r.loc->name.len, "/static/",
           "^~ stops the regex search");
    t_run(&q, cycle, "/first/second", NULL, 0);
    is_str(q.r.loc->name.data, q.r.loc->name.len, "^/first/",
           "regexes in the order written, not the longest");
    t_run(&q, cycle, "/UPPER/abc", NULL, 0);
    is_str(t_body(&q), strlen(t_body(&q)), "word=abc",
           "~* ignores case; a named capture of the location");
    is_int(t_run(&q, cycle, "/elsewhere", NULL, 0), GN_OK, "no rule");
    is_str(q.r.loc->name.data, q.r.loc->name.len, "/", "location /");

    memcpy(bomb, "/bomb/", 6);
    memset(bomb + 6, 'a', 40);
    memcpy(bomb + 46, "b", 2);
    t_log_reset();
    is_int(t_run(&q, cycle, bomb, NULL, 0), GN_ERROR,
           "a catastrophic pattern fails the request");
    ok(t_logged("location \"^/bomb/(a+)+$\": match limit exceeded"),
       "logged: stopped by the match limit");

    gn_cycle_destroy(cycle);
}


int
main(void)
{
    if (mkdtemp(t_dir) == NULL) {
        skip_all("mkdtemp() failed");
        return 0;
    }
    snprintf(t_logfile, sizeof(t_logfile), "%s/error.log", t_dir);

    t_log.level = GN_LOG_INFO;
    t_log.fd = open(t_logfile, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    t_pool = gn_pool_create(16384);
    if (t_log.fd == -1 || t_pool == NULL
        || gn_regex_init_child(GN_REGEX_MATCH_LIMIT) != GN_OK)
    {
        skip_all("no log file, pool or match context");
        return 0;
    }

    test_refused();
    test_templates();
    test_query();
    test_flags();
    test_redirects();
    test_locations();

    close(t_log.fd);
    gn_pool_destroy(t_pool);
    unlink(t_logfile);
    if (rmdir(t_dir) == -1) {
        diag("could not remove %s", t_dir);
    }

    return done_testing();
}
