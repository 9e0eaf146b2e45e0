/*
 * The regex layer: compile errors with PCRE2's message and offset,
 * captures, named groups, case-insensitivity, and the match limit that
 * stops a catastrophic pattern.
 */

#include "gn_config.h"

#include "regex.h"
#include "../tap.h"


static gn_int_t
compile(gn_regex_t *re, gn_pool_t *pool, const char *p, gn_uint_t ci,
    char *err)
{
    gn_str_t  s;

    s.data = (u_char *) p;
    s.len = strlen(p);

    return gn_regex_compile(re, pool, &s, ci, err, 256);
}


int
main(void)
{
    gn_pool_t        *pool;
    gn_regex_t        re;
    gn_regex_caps_t   caps;
    const char       *err;
    char              msg[256], subject[64];

    pool = gn_pool_create(4096);

    is_int(compile(&re, pool, "^(a", 0, msg), GN_ERROR, "bad pattern");
    ok(strstr(msg, "missing closing parenthesis at offset 3") != NULL,
       "message with reason and offset: %s", msg);

    is_int(compile(&re, pool, "^/old/(\\w+)/(?<id>\\d+)$", 0, msg), GN_OK,
           "compiled");
    is_int((gn_int_t) re.captures, 2, "two groups");
    is_int(gn_regex_group(&re, (u_char *) "id", 2), 2, "named group number");
    is_int(gn_regex_group(&re, (u_char *) "nope", 4), GN_ERROR,
           "unknown name");

    is_int(gn_regex_exec(&re, (u_char *) "/old/hats/42", 12, &caps, &err), 1,
           "match");
    is_str("/old/hats/42" + caps.ovec[2], caps.ovec[3] - caps.ovec[2], "hats",
           "$1");
    is_str("/old/hats/42" + caps.ovec[4], caps.ovec[5] - caps.ovec[4], "42",
           "$2");
    is_int(gn_regex_exec(&re, (u_char *) "/old/hats/x", 11, &caps, &err), 0,
           "no match");

    is_int(compile(&re, pool, "^/abc$", 1, msg), GN_OK, "caseless");
    is_int(gn_regex_exec(&re, (u_char *) "/ABC", 4, NULL, &err), 1,
           "caseless match");

    is_int(compile(&re, pool, "^(a+)+$", 0, msg), GN_OK, "catastrophic");
    is_int(gn_regex_init_child(GN_REGEX_MATCH_LIMIT), GN_OK, "child init");
    memset(subject, 'a', 40);
    subject[40] = 'b';
    is_int(gn_regex_exec(&re, (u_char *) subject, 41, NULL, &err), GN_ERROR,
           "stopped by the match limit");
    ok(strstr(err, "limit") != NULL, "reason: %s", err);

    gn_pool_destroy(pool);
    return done_testing();
}
