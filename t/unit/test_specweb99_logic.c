/*
 * Unit tests for modules/specweb99/specweb99_logic.c, the SPECweb99 logic
 * that mod_specweb99 and the ISAPI extension share: routing, the cookie,
 * the wrapper, POST and Reset parameters, tag rewriting, the ad scan over
 * small data files of known content, and the post log in a temporary
 * directory. Compiled with no include path but the file's own directory:
 * the logic must build without the server's headers or ISAPI's.
 * t/integ/70 and 112 check the same bytes through a running server.
 */

#define _GNU_SOURCE  1                  /* mkdtemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include "specweb99_logic.h"
#include "../tap.h"


#define S(s)  (const unsigned char *) (s), sizeof(s) - 1


static char    errs[4096];
static size_t  nerrs;


static void
collect(void *arg, const char *line)
{
    nerrs += (size_t) snprintf(errs + nerrs, sizeof(errs) - nerrs, "%s|",
                               line);
}


static int
out(void *arg, const void *data, size_t len)
{
    memcpy((char *) arg + strlen(arg), data, len);
    return 0;
}


static void
put(const char *path, const char *data)
{
    FILE  *f = fopen(path, "w");

    if (f == NULL || fputs(data, f) == EOF || fclose(f) != 0) {
        diag("cannot write %s", path);
        exit(1);
    }
}


static void
test_route(void)
{
    is_int(sw_route(S("POST"), S("command/Fetch")), SW_OP_POST, "POST");
    is_int(sw_route(S("PUT"), S("")), SW_OP_NOT_ALLOWED, "PUT");
    is_int(sw_route(S("GET"), S("/file_set/dir00000/class0_0")), SW_OP_GET,
           "GET a file");
    is_int(sw_route(S("GET"), S("command/Fetch")), SW_OP_FETCH, "Fetch");
    is_int(sw_route(S("GET"), S("command/Fetchx")), SW_OP_BAD, "Fetchx");
    is_int(sw_route(S("GET"), S("command/Reset")), SW_OP_RESET, "Reset");
    is_int(sw_route(S("GET"), S("command/Reset&maxload=1")), SW_OP_RESET,
           "Reset&");
    is_int(sw_route(S("GET"), S("command/Resetx")), SW_OP_BAD, "Resetx");

    ok(sw_safe_path(S("/file_set/dir00000/class0_0")), "a safe path");
    ok(!sw_safe_path(S("/file_set/../x")), "no ..");
    ok(!sw_safe_path(S("file_set")), "a leading /");
    ok(!sw_safe_path(S("/a b")), "no space");
}


static void
test_cookie_and_head(void)
{
    int      n;
    char     buf[512];
    int64_t  user, last;
    sw_str_t soft = { 3, (const unsigned char *) "gnx" }, none = { 0, NULL };

    is_int(sw_cookie(S("a=b; my_cookie=user_id=10005&last_ad=7"), &user,
                     &last), 1, "my_cookie found");
    is_int(user, 10005, "user_id");
    is_int(last, 7, "last_ad");
    is_int(sw_cookie(S("xmy_cookie=user_id=1"), &user, &last), 0,
           "not my_cookie");
    is_int(sw_cookie(S("my_cookie=foo"), &user, &last), 1, "my_cookie=foo");
    ok(user == -1 && last == -1, "no user_id, no last_ad");

    n = sw_head_format(buf, sizeof(buf), soft, none, none, none);
    is_str(buf, (size_t) (n < 0 ? 0 : n), SW_HEAD1
           "<p>SERVER_SOFTWARE = gnx\n<p>REMOTE_ADDR = \n"
           "<p>SCRIPT_NAME = \n<p>QUERY_STRING = \n<pre>\n", "the wrapper");
    is_int(sw_head_format(buf, (size_t) n, soft, none, none, none), -1,
           "the wrapper does not fit");
}


static void
test_params(void)
{
    char             *argv[16];
    sw_post_t         p;
    sw_reset_args_t   a;
    sw_str_t          q;

    is_int(sw_post_parse(&p, S("urlroot=/file_set/&dir=00001&class=1&num=2"
                                "&client=7")), 0, "a POST");
    is_str(p.file, strlen(p.file), "/file_set/dir00001/class1_2",
           "its file");
    is_int(sw_post_parse(&p, S("urlroot=/file_set/&dir=abc&class=1&num=2"
                                "&client=7")), -1, "a bad dir");
    is_int(sw_post_parse(&p, S("urlroot=../&dir=1&class=1&num=2&client=7")),
           -1, "an unsafe urlroot");

    memset(&a, 0, sizeof(a));
    q.data = (const unsigned char *) "maxload=10&pttime=5&exp=3,7";
    q.len = strlen((const char *) q.data);
    is_int(sw_reset_parse(q, &a), 0, "Reset's parameters");
    sw_reset_argv(argv, "tool", "/r", &a, 1);
    ok(strcmp(argv[1], "cadgen") == 0 && strcmp(argv[4], "-e") == 0
       && strcmp(argv[5], "5") == 0 && strcmp(argv[6], "3") == 0
       && strcmp(argv[7], "7") == 0 && argv[8] == NULL, "cadgen's argv");
    sw_reset_argv(argv, "tool", "/r", &a, 0);
    ok(strcmp(argv[1], "upfgen") == 0 && strcmp(argv[4], "-n") == 0
       && strcmp(argv[5], "10") == 0 && argv[6] == NULL, "upfgen's argv");

    memset(&a, 0, sizeof(a));
    q.data = (const unsigned char *) "maxload=10&exp=3";
    q.len = strlen((const char *) q.data);
    is_int(sw_reset_parse(q, &a), -1, "no pttime");

    is_int((long long) sw_chomp("err\r\n\n", 6), 3, "chomp");
}


static void
test_rewrite(void)
{
    char  page[] = "x<!WEB99CAD><IMG SRC=\"/file_set/dir00000/class0_0\">"
                   "<!/WEB99CAD>y";

    sw_rewrite((unsigned char *) page, sizeof(page) - 1, 100);
    is_str(page, strlen(page), "x<!WEB99CAD><IMG SRC=\"/file_set/dir00002/"
           "class3_1\"><!/WEB99CAD>y", "the tag for ad 100");
}


/* One user, 10000, of gender bits; 360 ads that match nobody but ad 5,
 * whose gender weight is 3 (minmatch 2), expired long ago. */
static void
test_ads(const char *root)
{
    int         i, id;
    char        path[256], cookie[128], ads[360 * 39 + 1];
    sw_data_t  *d = NULL;

    snprintf(path, sizeof(path), "%s/User.Personality", root);
    put(path, "10000 30000000\n");

    for (i = 0; i < 360; i++) {
        snprintf(ads + i * 39, 40, "%5d %8X %8X %3d %10d\n", i,
                 i == 5 ? 0x30000000 : 0, i == 5 ? 0x30000 : 0, i == 5 ? 2 : 1,
                 i == 5 ? 0 : 2000000000);
    }
    snprintf(path, sizeof(path), "%s/Custom.Ads", root);
    put(path, ads);

    nerrs = 0;
    ok(sw_data_get(&d, root, 0, collect, NULL) != NULL && nerrs == 0,
       "the data files read");

    id = sw_cad_select(d, 10000, 0, "/f/dir00000/class1_0", cookie,
                       sizeof(cookie));
    is_int(id, 5, "ad 5 for a class 1 page");
    is_str(cookie, strlen(cookie), "found_cookie=Ad_id=5&Ad_weight=3&Expired=1",
           "its cookie");
    is_int(sw_cad_select(d, 10000, 5, "/f/dir00000/class0_0", cookie,
                         sizeof(cookie)), -1, "a class 0 page: unchanged");
    is_str(cookie, strlen(cookie), "found_cookie=Ad_id=5&Ad_weight=3&Expired=1",
           "last_ad 5: ad 5 comes last");
    is_int(sw_cad_select(d, 10001, 0, "/f/dir00000/class1_0", cookie,
                         sizeof(cookie)), -1, "a user out of the file");
    is_str(cookie, strlen(cookie),
           "found_cookie=Ad_id=-1&Ad_weight=0&Expired=0", "no ad");

    snprintf(path, sizeof(path), "%s/none", root);
    ok(sw_data_get(&d, path, 0, collect, NULL) != NULL && nerrs > 0
       && strstr(errs, "specweb99: cannot read \"") == errs,
       "missing data files told to err");
    is_int(sw_cad_select(d, 10000, 0, "/f/dir00000/class1_0", cookie,
                         sizeof(cookie)), -1, "no data: no ad");

    sw_data_free(&d);
    ok(d == NULL, "freed");
}


static void
test_post_log(const char *root)
{
    int        fd;
    char       path[256], body[1024], want[128];
    off_t      size;
    sw_post_t  p;

    is_int(sw_post_parse(&p, S("urlroot=/file_set/&dir=00001&class=1&num=2"
                                "&client=7")), 0, "a POST");
    ok(sw_post_log(root, &p, 10003, collect, NULL) == 0
       && sw_post_log(root, &p, 10004, collect, NULL) == 0, "two records");

    fd = sw_log_lock(root, collect, NULL);
    ok(fd != -1, "locked");
    memset(body, 0, sizeof(body));
    ok(sw_log_repair(fd, &size) == 0 && size == 11 + 2 * 139, "its size");
    ok(sw_log_copy(fd, size, out, body) == 0, "copied");
    is_str(body, 22, "         2\n         1 ", "the header, the first");
    /* the second record's client and file, at 45 in it */
    snprintf(want, sizeof(want), "%10d %-60.60s ", 7, p.file);
    is_str(body + 11 + 139 + 45, strlen(want), want, "the second's file");
    ok(sw_log_truncate(fd, collect, NULL) == 0, "truncated");
    close(fd);

    snprintf(path, sizeof(path), "%s/post.log", root);
    fd = open(path, O_RDONLY);
    memset(body, 0, sizeof(body));
    ok(fd != -1 && read(fd, body, sizeof(body)) == 11, "the header alone");
    is_str(body, 11, "         0\n", "count 0");
    close(fd);
}


int
main(void)
{
    char  dir[] = "/tmp/gn-test-specweb99-XXXXXX", cmd[64];

    if (mkdtemp(dir) == NULL) {
        skip_all("mkdtemp failed");
        return 0;
    }

    test_route();
    test_cookie_and_head();
    test_params();
    test_rewrite();
    test_ads(dir);
    test_post_log(dir);

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) {
        diag("cannot remove %s", dir);
    }

    return done_testing();
}
