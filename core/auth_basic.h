/*
 * HTTP Basic authentication (RFC 7617): htpasswd files, password
 * verification, the Authorization header, the 401 challenge.
 *
 * htpasswd files are read by the master at configuration time (a reload
 * reads them again). Accepted hashes: bcrypt ($2y$, $2b$, $2a$), SHA-512
 * ($6$) and SHA-256 ($5$) crypt -- all through libcrypt's crypt_r() --
 * and MD5 crypt (Apache's $apr1$ and the glibc $1$ form), done here.
 * Plain-text, DES crypt and {SHA} entries are refused: a configuration
 * error names the htpasswd file, the line and the user.
 *
 * The parser, decoder and verification are pure (no logging).
 */

#ifndef GN_CORE_AUTH_BASIC_H_INCLUDED
#define GN_CORE_AUTH_BASIC_H_INCLUDED

#include "gn_config.h"

#include "pool.h"
#include "array.h"
#include "str.h"


struct gn_http_request_s;

#define GN_AUTH_BASIC_BCRYPT    1
#define GN_AUTH_BASIC_SHA512    2
#define GN_AUTH_BASIC_SHA256    3
#define GN_AUTH_BASIC_APR1      4
#define GN_AUTH_BASIC_MD5       5      /* $1$ */

/* the longest MD5-crypt string: "$apr1$" + 8 salt + "$" + 22, NUL */
#define GN_AUTH_BASIC_MD5_LEN   (6 + 8 + 1 + 22 + 1)

typedef struct {
    gn_str_t          user;
    gn_str_t          hash;        /* NUL-terminated */
    gn_uint_t         type;        /* GN_AUTH_BASIC_* */
    gn_uint_t         line;        /* in the file */
} gn_auth_basic_user_t;

typedef struct gn_auth_basic_users_s {
    gn_str_t          file;        /* NUL-terminated */
    gn_array_t        users;       /* of gn_auth_basic_user_t, sorted */
} gn_auth_basic_users_t;


/*
 * Parses htpasswd text: "user:hash" lines, optionally ":comment" after the
 * hash; blank lines and lines starting with '#' are skipped; CRLF is
 * accepted. `file` names the source in errors, which look like
 *     /etc/gannet/htpasswd:3: user "bob": plain-text passwords are ...
 * Returns the users (allocated in pool), or NULL with err filled.
 */
gn_auth_basic_users_t *gn_auth_basic_parse(gn_pool_t *pool,
    const char *file, const u_char *text, size_t len, char *err,
    size_t errlen);

/* Reads and parses a file (master, configuration time). */
gn_auth_basic_users_t *gn_auth_basic_load(gn_pool_t *pool, const char *file,
    char *err, size_t errlen);

/*
 * Checks user / password against the users. GN_OK: the password is right;
 * GN_DECLINED: unknown user or wrong password; GN_ERROR: the hash could
 * not be computed. Successes are cached for 60 s in the calling process
 * (see auth_basic.c), so a keep-alive client does not pay bcrypt on every
 * request.
 */
gn_int_t gn_auth_basic_verify(const gn_auth_basic_users_t *users,
    const gn_str_t *user, const gn_str_t *pass);

/*
 * MD5 crypt of `pass` with the salt of `setting` ("$apr1$SALT[$...]" or
 * "$1$SALT[$...]"); writes the NUL-terminated result into out and returns
 * its length, or 0 when setting is not an MD5-crypt string.
 */
size_t gn_auth_basic_md5crypt(const u_char *pass, size_t len,
    const u_char *setting, size_t slen, u_char out[GN_AUTH_BASIC_MD5_LEN]);

/*
 * Decodes an Authorization value "Basic <base64>" into buf (at least
 * value->len bytes) and splits it at the first ':'. The password is
 * followed by a NUL in buf. Returns GN_OK, GN_DECLINED when the scheme
 * is not Basic, or GN_ERROR when the credentials are malformed.
 */
gn_int_t gn_auth_basic_decode(const gn_str_t *value, u_char *buf,
    gn_str_t *user, gn_str_t *pass);

/* Child, per request: GN_OK when the request carries valid credentials
 * for `users`, GN_DECLINED otherwise (logged at info, as the reason). */
gn_int_t gn_auth_basic_check(struct gn_http_request_s *r,
    const gn_auth_basic_users_t *users);

/* Prepares the 401 with `challenge` ("WWW-Authenticate: ...\r\n"). */
gn_int_t gn_auth_basic_challenge(struct gn_http_request_s *r,
    const gn_str_t *challenge);

#endif /* GN_CORE_AUTH_BASIC_H_INCLUDED */
