/*
 * libFuzzer harness: htpasswd files and Basic credentials
 * (core/auth_basic.c).
 *
 * The input is parsed as an htpasswd file by gn_auth_basic_parse():
 * on success the users must be sorted and unique, each with a name, no
 * ':' in it, a known hash type and a NUL-terminated hash; on failure the
 * message must start with the file name. When the first user has an MD5
 * hash (checked by our own code, not libcrypt), a password taken from
 * the input is verified against it. The input is also decoded as an
 * Authorization value by gn_auth_basic_decode() and, when it starts
 * like one, used as an MD5-crypt setting by gn_auth_basic_md5crypt().
 */

#include "gn_config.h"

#include "auth_basic.h"

#define FZ_NAME  "fuzz_htpasswd"
#include "fz.h"


#define FZ_FILE  "fuzz.htpasswd"


static void
fz_parse(const u_char *data, size_t size)
{
    char                    err[512];
    gn_int_t                rc;
    gn_str_t                pass;
    gn_uint_t               i;
    gn_pool_t              *pool;
    gn_auth_basic_user_t   *u;
    gn_auth_basic_users_t  *users;

    pool = gn_pool_create(256);
    if (pool == NULL) {
        return;
    }

    err[0] = '\0';

    users = gn_auth_basic_parse(pool, FZ_FILE, data, size, err, sizeof(err));

    if (users == NULL) {
        fz_check(strnlen(err, sizeof(err)) < sizeof(err), "err terminated");
        fz_check(strncmp(err, FZ_FILE ":", sizeof(FZ_FILE)) == 0,
                 "the error names the file");
        goto done;
    }

    u = users->users.elts;

    for (i = 0; i < users->users.nelts; i++) {
        fz_check(u[i].user.len > 0, "user name not empty");
        fz_check(memchr(u[i].user.data, ':', u[i].user.len) == NULL,
                 "no ':' in a user name");
        fz_check(memchr(u[i].user.data, '\n', u[i].user.len) == NULL,
                 "no LF in a user name");
        fz_check(u[i].type >= GN_AUTH_BASIC_BCRYPT
                 && u[i].type <= GN_AUTH_BASIC_MD5, "known hash type");
        fz_check(u[i].hash.len > 0
                 && u[i].hash.data[u[i].hash.len] == '\0'
                 && strlen((char *) u[i].hash.data) == u[i].hash.len,
                 "hash NUL-terminated");
        fz_check(u[i].line >= 1, "line number");

        if (i > 0) {
            fz_check(gn_str_cmp(&u[i - 1].user, &u[i].user) < 0,
                     "users sorted and unique");
        }
    }

    if (users->users.nelts > 0
        && (u[0].type == GN_AUTH_BASIC_APR1
            || u[0].type == GN_AUTH_BASIC_MD5))
    {
        /* the password: the input's last line */
        pass.data = (u_char *) data + size;
        while (pass.data > data && pass.data[-1] != '\n') {
            pass.data--;
        }
        pass.len = (size_t) (data + size - pass.data);

        rc = gn_auth_basic_verify(users, &u[0].user, &pass);
        fz_check(rc == GN_OK || rc == GN_DECLINED || rc == GN_ERROR,
                 "verify: known result");
    }

done:

    gn_pool_destroy(pool);
}


static void
fz_decode(const u_char *data, size_t size)
{
    u_char    *buf;
    gn_int_t   rc;
    gn_str_t   value, user, pass;

    buf = malloc(size ? size : 1);
    if (buf == NULL) {
        return;
    }

    value.data = (u_char *) data;
    value.len = size;

    rc = gn_auth_basic_decode(&value, buf, &user, &pass);

    fz_check(rc == GN_OK || rc == GN_DECLINED || rc == GN_ERROR,
             "decode: known result");

    if (rc == GN_OK) {
        fz_check(user.data == buf, "user at the start of buf");
        fz_check(memchr(user.data, ':', user.len) == NULL,
                 "split at the first ':'");
        fz_check(pass.data == user.data + user.len + 1, "pass after ':'");
        fz_check(pass.data + pass.len < buf + size, "pass inside buf");
        fz_check(pass.data[pass.len] == '\0', "pass NUL-terminated");
    }

    free(buf);
}


static void
fz_md5crypt(const u_char *data, size_t size)
{
    u_char        out[GN_AUTH_BASIC_MD5_LEN];
    size_t        slen, n;
    const u_char  *nl;

    if (!(size >= 3 && memcmp(data, "$1$", 3) == 0)
        && !(size >= 6 && memcmp(data, "$apr1$", 6) == 0))
    {
        return;
    }

    /* setting up to the first LF, the password after it */
    nl = memchr(data, '\n', size);
    slen = nl ? (size_t) (nl - data) : size;

    memset(out, 0xa5, sizeof(out));

    n = gn_auth_basic_md5crypt(nl ? nl + 1 : data + size,
                               nl ? size - slen - 1 : 0, data, slen, out);

    if (n > 0) {
        fz_check(n < GN_AUTH_BASIC_MD5_LEN, "md5crypt fits its buffer");
        /* the salt is copied as is: only the end is checked */
        fz_check(out[n] == '\0', "md5crypt NUL-terminated");
        fz_check(out[0] == '$', "md5crypt starts with the magic");
    }
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char  *copy;

    /* an exact copy: any read past the end is an ASan report */
    copy = malloc(size ? size : 1);
    if (copy == NULL) {
        return 0;
    }

    if (size) {
        memcpy(copy, data, size);
    }

    fz_parse(copy, size);
    fz_decode(copy, size);
    fz_md5crypt(copy, size);

    free(copy);

    return 0;
}
