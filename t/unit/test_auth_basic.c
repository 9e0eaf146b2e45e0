/*
 * htpasswd files and Basic credentials: each accepted hash type (bcrypt
 * $2y$ $2b$ $2a$, SHA-512 $6$, SHA-256 $5$, MD5 $apr1$ and $1$) verified
 * against vectors made by htpasswd(1), openssl passwd and libxcrypt;
 * plain-text, DES and {SHA} entries refused with file:line and the user;
 * comments, blank lines, CRLF; the Authorization value decoder.
 *
 * Vectors (generated once, hard-coded):
 *   htpasswd -nbB alice secret1         htpasswd -nbm carol secret3
 *   openssl passwd -6 -salt saltsalt secret4
 *   openssl passwd -5 -salt pepper secret5
 *   openssl passwd -apr1 -salt abcdefgh secret3
 *   openssl passwd -1 -salt xyz pw1
 *   python3 crypt.crypt('secret7', mksalt(METHOD_BLOWFISH, rounds=16))
 */

#include "gn_config.h"

#include "auth_basic.h"
#include "../tap.h"


#define ALICE  "$2y$05$NqwBiuFGH99s2zb5j8r4ZejruiMsFHBUNFwyqgIlAkNlwR6TeaKIC"
#define BOB    "$2b$04$wliW6nHKEMimv31oyBoXLuWPtDj9v0e0Fq3u5Kdin.nf5Yb6c1cSe"
#define BOBA   "$2a$04$wliW6nHKEMimv31oyBoXLuWPtDj9v0e0Fq3u5Kdin.nf5Yb6c1cSe"
#define CAROL  "$apr1$AbQSFQge$R5ER3crMsjj/QVrkWpmKy1"
#define DAN    "$6$saltsalt$sJQ//Um8FaXxhPwlNM8HXPv/AOW4xO7O1OfRAAjjcXJ0llh" \
               ".4e6XQKF9OnCI4ND3Dd6xNcUrwQ//rq6.Wp1HR/"
#define ERIN   "$5$pepper$WZuqFimIWaFz3KG6eb4N/WSw3LwnOZkMVomQgUfCRRA"
#define ERINR  "$5$rounds=6000$pepper$pGrSdInG5OuFdqQZum7ZtqNmrr/AQ4rFZKy4f6" \
               ".HGnD"
#define FRED   "$1$xyz$unEmvaPYTZ4OLu3M.GO.z1"


static gn_pool_t  *pool;


static gn_auth_basic_users_t *
parse(const char *text, char *err)
{
    err[0] = '\0';
    return gn_auth_basic_parse(pool, "/etc/htpasswd", (const u_char *) text,
                               strlen(text), err, 512);
}


static gn_int_t
verify(gn_auth_basic_users_t *u, const char *user, const char *pass)
{
    gn_str_t  us, ps;

    us.data = (u_char *) user;
    us.len = strlen(user);
    ps.data = (u_char *) pass;
    ps.len = strlen(pass);

    return gn_auth_basic_verify(u, &us, &ps);
}


static void
test_md5crypt(void)
{
    static const struct {
        const char  *pass;
        const char  *hash;
    } v[] = {
        { "secret3", CAROL },
        { "secret3", "$apr1$abcdefgh$jIudz8hddYl1huJKFV04g0" },
        { "x", "$apr1$$jYtXyIcDHukcQfHjblNhq/" },
        { "", "$apr1$ab$S8K6Sgp3W8c9Jb6LxgywZ." },
        { "pw1", FRED },
    };
    u_char     out[GN_AUTH_BASIC_MD5_LEN];
    size_t     n;
    gn_uint_t  i;

    for (i = 0; i < gn_nelems(v); i++) {
        n = gn_auth_basic_md5crypt((u_char *) v[i].pass, strlen(v[i].pass),
                                   (u_char *) v[i].hash, strlen(v[i].hash),
                                   out);
        is_str(out, n, v[i].hash, "md5crypt(\"%s\")", v[i].pass);
    }

    /* the salt alone is enough as a setting; longer salts are cut at 8 */
    n = gn_auth_basic_md5crypt((u_char *) "secret3", 7,
                               (u_char *) "$apr1$abcdefghijk", 17, out);
    is_str(out, n, "$apr1$abcdefgh$jIudz8hddYl1huJKFV04g0", "salt cut at 8");

    is_int((gn_int_t) gn_auth_basic_md5crypt((u_char *) "x", 1,
                                             (u_char *) "$5$abc", 6, out),
           0, "not an MD5-crypt setting");
}


static void
test_parse_ok(void)
{
    gn_auth_basic_users_t  *u;
    gn_auth_basic_user_t   *e;
    char                    err[512];

    u = parse("# users\n"
              "\n"
              "   \t\n"
              "  # indented comment\n"
              "alice:" ALICE "\n"
              "bob:" BOB "\r\n"
              "boba:" BOBA ":a comment field\n"
              "carol:" CAROL "  \n"
              "dan:" DAN "\n"
              "erin:" ERIN "\n"
              "erinr:" ERINR "\n"
              "fred:" FRED, err);
    ok(u != NULL, "file parsed %s", err);
    if (u == NULL) {
        return;
    }

    is_int((gn_int_t) u->users.nelts, 8, "8 users");
    e = u->users.elts;
    is_str(e[0].user.data, e[0].user.len, "alice", "sorted: alice first");
    is_int((gn_int_t) e[0].type, GN_AUTH_BASIC_BCRYPT, "bcrypt");
    is_int((gn_int_t) e[0].line, 5, "alice on line 5");
    is_str(e[1].hash.data, strlen((char *) e[1].hash.data), BOB,
           "CRLF stripped, hash NUL-terminated");
    is_str(e[2].hash.data, e[2].hash.len, BOBA, "comment field cut");
    is_int((gn_int_t) e[3].type, GN_AUTH_BASIC_APR1, "apr1");
    is_int((gn_int_t) e[4].type, GN_AUTH_BASIC_SHA512, "sha512");
    is_int((gn_int_t) e[5].type, GN_AUTH_BASIC_SHA256, "sha256");
    is_int((gn_int_t) e[6].type, GN_AUTH_BASIC_SHA256, "sha256 rounds=");
    is_int((gn_int_t) e[7].type, GN_AUTH_BASIC_MD5, "md5 $1$");

    is_int(verify(u, "alice", "secret1"), GN_OK, "bcrypt $2y$ ok");
    is_int(verify(u, "alice", "secret1"), GN_OK, "bcrypt again (cached)");
    is_int(verify(u, "alice", "secret2"), GN_DECLINED, "bcrypt wrong");
    is_int(verify(u, "alice", "secret1x"), GN_DECLINED, "bcrypt longer");
    is_int(verify(u, "alice", ""), GN_DECLINED, "bcrypt empty");
    is_int(verify(u, "bob", "secret7"), GN_OK, "bcrypt $2b$ ok");
    is_int(verify(u, "bob", "Secret7"), GN_DECLINED, "bcrypt $2b$ wrong");
    is_int(verify(u, "boba", "secret7"), GN_OK, "bcrypt $2a$ ok");
    is_int(verify(u, "carol", "secret3"), GN_OK, "apr1 ok");
    is_int(verify(u, "carol", "secret"), GN_DECLINED, "apr1 wrong");
    is_int(verify(u, "dan", "secret4"), GN_OK, "sha512 ok");
    is_int(verify(u, "dan", "secret5"), GN_DECLINED, "sha512 wrong");
    is_int(verify(u, "erin", "secret5"), GN_OK, "sha256 ok");
    is_int(verify(u, "erin", "secret4"), GN_DECLINED, "sha256 wrong");
    is_int(verify(u, "erinr", "secret5"), GN_OK, "sha256 rounds= ok");
    is_int(verify(u, "fred", "pw1"), GN_OK, "md5 $1$ ok");
    is_int(verify(u, "fred", "pw2"), GN_DECLINED, "md5 $1$ wrong");
    is_int(verify(u, "nobody", "secret1"), GN_DECLINED, "unknown user");
    is_int(verify(u, "Alice", "secret1"), GN_DECLINED, "users are exact");
    is_int(verify(u, "alic", "secret1"), GN_DECLINED, "no prefix match");

    /* another user's right password is wrong here, cache or not */
    is_int(verify(u, "carol", "secret1"), GN_DECLINED, "not alice's");

    {
        gn_str_t  us = gn_string("alice");
        gn_str_t  ps = { 8, (u_char *) "secret1\0" };

        is_int(gn_auth_basic_verify(u, &us, &ps), GN_DECLINED,
               "a NUL in the password never matches");
    }

    u = parse("", err);
    ok(u != NULL && u->users.nelts == 0, "empty file: no users");
    u = parse("# only a comment", err);
    ok(u != NULL && u->users.nelts == 0, "comment without newline");
}


static void
test_parse_refused(void)
{
    static const struct {
        const char  *text;
        const char  *err;
    } v[] = {
        { "eve:plain\n",
          "/etc/htpasswd:1: user \"eve\": plain-text passwords are refused "
          "(use bcrypt: \"htpasswd -B\")" },
        { "# c\n\nalice:" ALICE "\ndave:.04DPBvN6.Q3o\n",
          "/etc/htpasswd:4: user \"dave\": DES crypt() hashes are refused, "
          "they are too weak (use bcrypt: \"htpasswd -B\")" },
        { "frank:{SHA}2PRZAyDhNDqRW2OUFwZQqPNdaSY=",
          "/etc/htpasswd:1: user \"frank\": {SHA} hashes are refused, they "
          "are unsalted (use bcrypt: \"htpasswd -B\")" },
        { "x:$2y$05$short\n",
          "/etc/htpasswd:1: user \"x\": malformed or unsupported password "
          "hash" },
        { "x:$2y$03$NqwBiuFGH99s2zb5j8r4ZejruiMsFHBUNFwyqgIlAkNlwR6TeaKIC\n",
          "/etc/htpasswd:1: user \"x\": malformed or unsupported password "
          "hash" },
        { "x:$6$saltsalt$tooshort\n",
          "/etc/htpasswd:1: user \"x\": malformed or unsupported password "
          "hash" },
        { "x:$apr1$toolongsalt$R5ER3crMsjj/QVrkWpmKy1\n",
          "/etc/htpasswd:1: user \"x\": malformed or unsupported password "
          "hash" },
        { "x:$y$j9T$abc$def\n",
          "/etc/htpasswd:1: user \"x\": malformed or unsupported password "
          "hash" },
        { "\n\njust a line\n",
          "/etc/htpasswd:3: invalid line, \"user:hash\" expected" },
        { ":" ALICE "\n",
          "/etc/htpasswd:1: invalid line, \"user:hash\" expected" },
        { "alice:\n",
          "/etc/htpasswd:1: user \"alice\": empty password hash" },
        { "alice:" ALICE "\nbob:" BOB "\nalice:" CAROL "\n",
          "/etc/htpasswd:3: duplicate user \"alice\"" },
    };
    char       err[512];
    gn_uint_t  i;

    for (i = 0; i < gn_nelems(v); i++) {
        ok(parse(v[i].text, err) == NULL, "refused #%u", (unsigned) i);
        is_str(err, strlen(err), v[i].err, "message #%u", (unsigned) i);
    }

    /* fuzzing found it (t/fuzz/corpus/htpasswd/nul-in-salt): a NUL in a
     * salt was accepted, and the hash is later used as a C string */
    {
        static const char  nul[] = "u:$apr1$a\0b$R5ER3crMsjj/QVrkWpmKy1\n";

        err[0] = '\0';
        ok(gn_auth_basic_parse(pool, "/etc/htpasswd", (const u_char *) nul,
                               sizeof(nul) - 1, err, 512) == NULL,
           "a NUL inside a salt is refused");
        is_str(err, strlen(err), "/etc/htpasswd:1: user \"u\": malformed or "
               "unsupported password hash", "... with the usual message");
    }
}


static void
test_load(void)
{
    gn_auth_basic_users_t  *u;
    char                    path[] = "/tmp/gn-htpasswd-XXXXXX", err[512];
    char                    want[600];
    int                     fd;
    static const char       text[] = "alice:" ALICE "\nbad\n";

    u = gn_auth_basic_load(pool, "/nonexistent/htpasswd", err, sizeof(err));
    ok(u == NULL, "missing file");
    is_str(err, strlen(err), "open() \"/nonexistent/htpasswd\" failed "
           "(2: No such file or directory)", "open error");

    fd = mkstemp(path);
    if (fd == -1 || write(fd, text, sizeof(text) - 1) < 0) {
        ok(0, "temp file");
        return;
    }
    close(fd);

    u = gn_auth_basic_load(pool, path, err, sizeof(err));
    ok(u == NULL, "bad line in a file");
    snprintf(want, sizeof(want), "%s:2: invalid line, \"user:hash\" "
             "expected", path);
    is_str(err, strlen(err), want, "file name and line");

    fd = open(path, O_WRONLY | O_TRUNC);
    if (fd == -1 || write(fd, text, 6 + 60 + 1) < 0) {
        ok(0, "rewrite temp file");
        unlink(path);
        return;
    }
    close(fd);

    u = gn_auth_basic_load(pool, path, err, sizeof(err));
    ok(u != NULL && u->users.nelts == 1, "loaded");
    is_str(u ? u->file.data : (u_char *) "", u ? u->file.len : 0, path,
           "file name kept");
    if (u != NULL) {
        is_int(verify(u, "alice", "secret1"), GN_OK, "verified from file");
    }

    unlink(path);
}


static gn_int_t
decode(const char *value, gn_str_t *user, gn_str_t *pass)
{
    static u_char  buf[256];
    gn_str_t       v;

    v.data = (u_char *) value;
    v.len = strlen(value);

    return gn_auth_basic_decode(&v, buf, user, pass);
}


static void
test_decode(void)
{
    gn_str_t  u, p;

    is_int(decode("Basic YWxpY2U6c2VjcmV0MQ==", &u, &p), GN_OK, "decoded");
    is_str(u.data, u.len, "alice", "user");
    is_str(p.data, p.len, "secret1", "password");
    is_int(p.data[p.len], '\0', "password NUL-terminated");

    is_int(decode("bAsIc YWxpY2U6c2VjcmV0MQ==", &u, &p), GN_OK,
           "scheme is case-insensitive");
    is_int(decode("Basic    YWxpY2U6c2VjcmV0MQ", &u, &p), GN_OK,
           "spaces, no padding");
    is_str(p.data, p.len, "secret1", "password without padding");

    is_int(decode("Basic YTpiOmM=", &u, &p), GN_OK, "a:b:c");
    is_str(u.data, u.len, "a", "split at the first colon: user");
    is_str(p.data, p.len, "b:c", "split at the first colon: password");

    is_int(decode("Basic YWxpY2U6", &u, &p), GN_OK, "empty password");
    is_int((gn_int_t) p.len, 0, "password empty");
    is_int(decode("Basic OnB3", &u, &p), GN_OK, "empty user");
    is_int((gn_int_t) u.len, 0, "user empty");

    is_int(decode("Bearer abc", &u, &p), GN_DECLINED, "other scheme");
    is_int(decode("Basicx YWxpY2U6", &u, &p), GN_DECLINED, "Basicx");
    is_int(decode("", &u, &p), GN_DECLINED, "empty value");
    is_int(decode("Basic", &u, &p), GN_ERROR, "no credentials");
    is_int(decode("Basic   ", &u, &p), GN_ERROR, "only spaces");
    is_int(decode("Basic bm9jb2xvbg==", &u, &p), GN_ERROR, "no colon");
    is_int(decode("Basic YWxp*2U6", &u, &p), GN_ERROR, "bad character");
    is_int(decode("Basic YWxpY2U6c2VjcmV0MQ== x", &u, &p), GN_ERROR,
           "trailing junk");
    is_int(decode("Basic YWxpY", &u, &p), GN_ERROR, "bad length");
    is_int(decode("Basic YWxpY2U6c2VjcmV0M===", &u, &p), GN_ERROR,
           "too much padding");
    is_int(decode("Basic YW=xp", &u, &p), GN_ERROR, "padding inside");
}


int
main(void)
{
    pool = gn_pool_create(16384);

    test_md5crypt();
    test_parse_ok();
    test_parse_refused();
    test_load();
    test_decode();

    gn_pool_destroy(pool);

    return done_testing();
}
