/*
 * HTTP Basic authentication: htpasswd parsing (master, configuration
 * time), password verification and the 401 (children).
 *
 * bcrypt is slow by design (cost 10: 50-100 ms per check). crypt_r() runs
 * in the child's event loop, so each check stalls every connection of
 * that child for that long. Successful checks are therefore remembered
 * per child for 60 s (see gn_auth_basic_cache_*): a keep-alive client, or
 * one that resends its credentials on every request as browsers do, pays
 * once a minute. What remains: the first check of each client, and every
 * wrong password, still block the loop; many clients sending bad
 * passwords can slow a child down (rate limiting or a thread pool for
 * crypt_r would be the next step). Unknown users are answered at once,
 * which lets a client tell them from known ones by timing.
 */

#include "gn_config.h"

#include <crypt.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "auth_basic.h"
#include "log.h"
#include "timer.h"
#include "http_request.h"
#include "http_response.h"


#define GN_AUTH_BASIC_MAX_FILE     (16 * 1024 * 1024)
#define GN_AUTH_BASIC_MAX_PASS     1024
#define GN_AUTH_BASIC_CACHE_SLOTS  64
#define GN_AUTH_BASIC_CACHE_TTL    60000

typedef struct {
    u_char            key[32];
    gn_msec_t         expires;
} gn_auth_basic_cached_t;


static gn_int_t gn_auth_basic_parse_line(gn_array_t *users, u_char *p,
    u_char *end, const char *file, gn_uint_t line, char *err,
    size_t errlen);
static gn_uint_t gn_auth_basic_hash_type(const gn_str_t *h,
    const char **why);


static const u_char  gn_auth_basic_itoa64[] =
    "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* per child: see the comment at the top */
static gn_auth_basic_cached_t  gn_auth_basic_cache[GN_AUTH_BASIC_CACHE_SLOTS];
static u_char                  gn_auth_basic_cache_salt[16];
static gn_int_t                gn_auth_basic_cache_state;  /* 1 ok, -1 off */

/* crypt_r's work area is ~32 KB: one per process, children are single
 * threaded */
static struct crypt_data       gn_auth_basic_crypt_data;


static int
gn_auth_basic_user_cmp(const void *a, const void *b)
{
    const gn_auth_basic_user_t  *x = a, *y = b;

    return gn_str_cmp(&x->user, &y->user);
}


gn_auth_basic_users_t *
gn_auth_basic_parse(gn_pool_t *pool, const char *file, const u_char *text,
    size_t len, char *err, size_t errlen)
{
    gn_auth_basic_users_t  *users;
    gn_auth_basic_user_t   *u;
    u_char                 *copy, *p, *end, *eol;
    gn_uint_t               line, i;

    users = gn_pcalloc(pool, sizeof(gn_auth_basic_users_t));
    copy = gn_pnalloc(pool, len + 1);
    if (users == NULL || copy == NULL
        || gn_array_init(&users->users, pool, 8,
                         sizeof(gn_auth_basic_user_t)) != GN_OK)
    {
        snprintf(err, errlen, "%s: out of memory", file);
        return NULL;
    }

    users->file.len = strlen(file);
    users->file.data = gn_pnalloc(pool, users->file.len + 1);
    if (users->file.data == NULL) {
        snprintf(err, errlen, "%s: out of memory", file);
        return NULL;
    }
    memcpy(users->file.data, file, users->file.len + 1);

    /* the hashes point into this copy and are NUL-terminated in place */
    if (len) {
        memcpy(copy, text, len);
    }
    copy[len] = '\0';

    p = copy;
    end = copy + len;

    for (line = 1; p < end; line++, p = eol + 1) {
        eol = memchr(p, '\n', (size_t) (end - p));
        if (eol == NULL) {
            eol = end;
        }

        if (gn_auth_basic_parse_line(&users->users, p, eol, file, line,
                                     err, errlen) != GN_OK)
        {
            return NULL;
        }
    }

    qsort(users->users.elts, users->users.nelts,
          sizeof(gn_auth_basic_user_t), gn_auth_basic_user_cmp);

    u = users->users.elts;
    for (i = 1; i < users->users.nelts; i++) {
        if (gn_str_cmp(&u[i - 1].user, &u[i].user) == 0) {
            snprintf(err, errlen, "%s:%u: duplicate user \"%.*s\"", file,
                     (unsigned) gn_max(u[i - 1].line, u[i].line),
                     GN_STR_ARG(&u[i].user));
            return NULL;
        }
    }

    return users;
}


/* One line [p, end): blank, "# comment" or "user:hash[:comment]". */
static gn_int_t
gn_auth_basic_parse_line(gn_array_t *users, u_char *p, u_char *end,
    const char *file, gn_uint_t line, char *err, size_t errlen)
{
    gn_auth_basic_user_t  *u;
    gn_str_t               user, hash;
    u_char                *colon, *q;
    const char            *why;
    gn_uint_t              type;

    while (end > p && (end[-1] == '\r' || end[-1] == ' '
                       || end[-1] == '\t'))
    {
        end--;
    }
    for (q = p; q < end && (*q == ' ' || *q == '\t'); q++) {
        /* void */
    }
    if (q == end || *q == '#') {
        return GN_OK;
    }

    colon = memchr(p, ':', (size_t) (end - p));
    if (colon == NULL || colon == p) {
        snprintf(err, errlen, "%s:%u: invalid line, \"user:hash\" expected",
                 file, (unsigned) line);
        return GN_ERROR;
    }

    user.data = p;
    user.len = (size_t) (colon - p);
    hash.data = colon + 1;
    q = memchr(hash.data, ':', (size_t) (end - hash.data));
    hash.len = (size_t) ((q ? q : end) - hash.data);

    type = gn_auth_basic_hash_type(&hash, &why);
    if (type == 0) {
        snprintf(err, errlen, "%s:%u: user \"%.*s\": %s", file,
                 (unsigned) line, GN_STR_ARG(&user), why);
        return GN_ERROR;
    }

    u = gn_array_push(users);
    if (u == NULL) {
        snprintf(err, errlen, "%s: out of memory", file);
        return GN_ERROR;
    }

    hash.data[hash.len] = '\0';          /* a ':', '\r', ' ' or '\n' */
    u->user = user;
    u->hash = hash;
    u->type = type;
    u->line = line;

    return GN_OK;
}


static gn_uint_t
gn_auth_basic_is_b64(const u_char *p, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (strchr((const char *) gn_auth_basic_itoa64, p[i]) == NULL
            || p[i] == '\0')
        {
            return 0;
        }
    }

    return 1;
}


/* "$5$" / "$6$" [rounds=N$] salt(<= 16) "$" hash(43 / 86) */
static gn_uint_t
gn_auth_basic_sha_ok(const gn_str_t *h, size_t hlen)
{
    const u_char  *p = h->data + 3, *end = h->data + h->len, *d;

    if ((size_t) (end - p) > 7 && memcmp(p, "rounds=", 7) == 0) {
        for (p += 7, d = p; p < end && *p >= '0' && *p <= '9'; p++) {
            /* void */
        }
        if (p == d || p - d > 9 || p == end || *p++ != '$') {
            return 0;
        }
    }

    d = memchr(p, '$', (size_t) (end - p));
    if (d == NULL || d - p > 16) {
        return 0;
    }

    return (size_t) (end - d - 1) == hlen && gn_auth_basic_is_b64(d + 1, hlen);
}


/* "$apr1$" or "$1$", salt (<= 8) "$" hash (22) */
static gn_uint_t
gn_auth_basic_md5_ok(const gn_str_t *h, size_t mlen)
{
    const u_char  *p = h->data + mlen, *end = h->data + h->len, *d;

    d = memchr(p, '$', (size_t) (end - p));
    if (d == NULL || d - p > 8) {
        return 0;
    }

    return end - d - 1 == 22 && gn_auth_basic_is_b64(d + 1, 22);
}


/* The hash's GN_AUTH_BASIC_* type, or 0 with `why` set. */
static gn_uint_t
gn_auth_basic_hash_type(const gn_str_t *h, const char **why)
{
    const u_char  *p = h->data;

    *why = "malformed or unsupported password hash";

    if (h->len == 0) {
        *why = "empty password hash";
        return 0;
    }

    /* the salts are not checked byte by byte, and the hash is used as a
     * C string: a NUL in it would cut it short */
    if (memchr(p, '\0', h->len) != NULL) {
        return 0;
    }

    if (h->len == 60 && p[0] == '$' && p[1] == '2'
        && (p[2] == 'y' || p[2] == 'b' || p[2] == 'a') && p[3] == '$'
        && p[4] >= '0' && p[4] <= '3' && p[5] >= '0' && p[5] <= '9'
        && (p[4] - '0') * 10 + (p[5] - '0') >= 4
        && (p[4] - '0') * 10 + (p[5] - '0') <= 31
        && p[6] == '$' && gn_auth_basic_is_b64(p + 7, 53))
    {
        return GN_AUTH_BASIC_BCRYPT;
    }

    if (h->len > 3 && memcmp(p, "$6$", 3) == 0) {
        return gn_auth_basic_sha_ok(h, 86) ? GN_AUTH_BASIC_SHA512 : 0;
    }

    if (h->len > 3 && memcmp(p, "$5$", 3) == 0) {
        return gn_auth_basic_sha_ok(h, 43) ? GN_AUTH_BASIC_SHA256 : 0;
    }

    if (h->len > 6 && memcmp(p, "$apr1$", 6) == 0) {
        return gn_auth_basic_md5_ok(h, 6) ? GN_AUTH_BASIC_APR1 : 0;
    }

    if (h->len > 3 && memcmp(p, "$1$", 3) == 0) {
        return gn_auth_basic_md5_ok(h, 3) ? GN_AUTH_BASIC_MD5 : 0;
    }

    if (p[0] == '$') {
        /* *why as set above */

    } else if (h->len == 13 && gn_auth_basic_is_b64(p, 13)) {
        *why = "DES crypt() hashes are refused, they are too weak "
               "(use bcrypt: \"htpasswd -B\")";

    } else if (h->len > 5 && memcmp(p, "{SHA}", 5) == 0) {
        *why = "{SHA} hashes are refused, they are unsalted "
               "(use bcrypt: \"htpasswd -B\")";

    } else {
        *why = "plain-text passwords are refused "
               "(use bcrypt: \"htpasswd -B\")";
    }

    return 0;
}


gn_auth_basic_users_t *
gn_auth_basic_load(gn_pool_t *pool, const char *file, char *err,
    size_t errlen)
{
    gn_auth_basic_users_t  *users;
    struct stat             st;
    u_char                 *buf;
    size_t                  got;
    ssize_t                 n = 0;
    int                     fd;

    fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        snprintf(err, errlen, "open() \"%s\" failed (%d: %s)", file, errno,
                 strerror(errno));
        return NULL;
    }

    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)
        || st.st_size > GN_AUTH_BASIC_MAX_FILE)
    {
        snprintf(err, errlen, "\"%s\" is not a regular file of at most "
                 "16m", file);
        close(fd);
        return NULL;
    }

    buf = malloc((size_t) st.st_size + 1);
    if (buf == NULL) {
        snprintf(err, errlen, "%s: out of memory", file);
        close(fd);
        return NULL;
    }

    for (got = 0; got < (size_t) st.st_size; got += (size_t) n) {
        n = read(fd, buf + got, (size_t) st.st_size - got);
        if (n == -1 && errno == EINTR) {
            n = 0;
            continue;
        }
        if (n <= 0) {
            break;               /* shrank under us: parse what we have */
        }
    }

    if (n == -1) {
        snprintf(err, errlen, "read() \"%s\" failed (%d: %s)", file, errno,
                 strerror(errno));
        free(buf);
        close(fd);
        return NULL;
    }

    close(fd);

    users = gn_auth_basic_parse(pool, file, buf, got, err, errlen);
    free(buf);

    return users;
}


static const gn_auth_basic_user_t *
gn_auth_basic_find(const gn_auth_basic_users_t *users, const gn_str_t *user)
{
    gn_auth_basic_user_t  key;

    key.user = *user;

    return bsearch(&key, users->users.elts, users->users.nelts,
                   sizeof(gn_auth_basic_user_t), gn_auth_basic_user_cmp);
}


/* MD5 of `data`; GN_OK or GN_ERROR */
static gn_int_t
gn_auth_basic_md5(const u_char *data, size_t len, u_char out[16])
{
    return gnutls_hash_fast(GNUTLS_DIG_MD5, data, len, out) == 0
           ? GN_OK : GN_ERROR;
}


static u_char *
gn_auth_basic_to64(u_char *p, uint32_t v, gn_uint_t n)
{
    while (n--) {
        *p++ = gn_auth_basic_itoa64[v & 0x3f];
        v >>= 6;
    }

    return p;
}


/*
 * MD5 crypt (Poul-Henning Kamp's algorithm; Apache's $apr1$ is the same
 * with another magic string), written from the published description:
 * a digest of password, magic and salt, stretched by 1000 rounds that mix
 * the three in an order set by the round number, then a custom base64.
 */
size_t
gn_auth_basic_md5crypt(const u_char *pass, size_t len, const u_char *setting,
    size_t slen, u_char out[GN_AUTH_BASIC_MD5_LEN])
{
    u_char         buf[3 * GN_AUTH_BASIC_MAX_PASS + 64], fin[16], *p;
    const u_char  *salt, *magic, *d;
    size_t         mlen, saltlen, n, k;
    gn_uint_t      i;
    static const gn_uint_t  order[5][3] = {
        { 0, 6, 12 }, { 1, 7, 13 }, { 2, 8, 14 }, { 3, 9, 15 }, { 4, 10, 5 }
    };

    if (slen >= 6 && memcmp(setting, "$apr1$", 6) == 0) {
        mlen = 6;
    } else if (slen >= 3 && memcmp(setting, "$1$", 3) == 0) {
        mlen = 3;
    } else {
        return 0;
    }

    if (len > GN_AUTH_BASIC_MAX_PASS) {
        return 0;
    }

    magic = setting;
    salt = setting + mlen;
    d = memchr(salt, '$', slen - mlen);
    saltlen = gn_min((size_t) ((d ? d : setting + slen) - salt), 8);

    /* the "alternate" digest: password, salt, password */
    p = gn_cpymem(buf, pass, len);
    p = gn_cpymem(p, salt, saltlen);
    p = gn_cpymem(p, pass, len);
    if (gn_auth_basic_md5(buf, (size_t) (p - buf), fin) != GN_OK) {
        return 0;
    }

    /* password, magic, salt, then len bytes of the alternate digest
     * (repeated), then per bit of len: a zero byte or the first char */
    p = gn_cpymem(buf, pass, len);
    p = gn_cpymem(p, magic, mlen);
    p = gn_cpymem(p, salt, saltlen);
    for (n = len; n > 0; n -= k) {
        k = gn_min(n, 16);
        p = gn_cpymem(p, fin, k);
    }
    for (n = len; n; n >>= 1) {
        *p++ = (n & 1) ? '\0' : pass[0];
    }
    if (gn_auth_basic_md5(buf, (size_t) (p - buf), fin) != GN_OK) {
        return 0;
    }

    for (i = 0; i < 1000; i++) {
        p = (i & 1) ? gn_cpymem(buf, pass, len) : gn_cpymem(buf, fin, 16);
        if (i % 3) {
            p = gn_cpymem(p, salt, saltlen);
        }
        if (i % 7) {
            p = gn_cpymem(p, pass, len);
        }
        p = (i & 1) ? gn_cpymem(p, fin, 16) : gn_cpymem(p, pass, len);
        if (gn_auth_basic_md5(buf, (size_t) (p - buf), fin) != GN_OK) {
            return 0;
        }
    }

    p = gn_cpymem(out, magic, mlen);
    p = gn_cpymem(p, salt, saltlen);
    *p++ = '$';
    for (i = 0; i < 5; i++) {
        p = gn_auth_basic_to64(p, ((uint32_t) fin[order[i][0]] << 16)
                                  | ((uint32_t) fin[order[i][1]] << 8)
                                  | fin[order[i][2]], 4);
    }
    p = gn_auth_basic_to64(p, fin[11], 2);
    *p = '\0';

    return (size_t) (p - out);
}


/* Equal strings, in time that depends on the lengths only. */
static gn_uint_t
gn_auth_basic_ct_eq(const u_char *a, size_t alen, const u_char *b,
    size_t blen)
{
    volatile u_char  d;
    size_t           i;

    if (alen != blen) {
        return 0;
    }

    d = 0;
    for (i = 0; i < alen; i++) {
        d |= a[i] ^ b[i];
    }

    return d == 0;
}


/* SHA-256 over salt, hash, user and password: the cache key. */
static gn_int_t
gn_auth_basic_cache_key(const gn_auth_basic_user_t *u, const gn_str_t *pass,
    u_char key[32])
{
    gnutls_hash_hd_t  hd;
    static u_char     zero;

    if (gn_auth_basic_cache_state == 0) {
        gn_auth_basic_cache_state =
            gnutls_rnd(GNUTLS_RND_NONCE, gn_auth_basic_cache_salt,
                       sizeof(gn_auth_basic_cache_salt)) == 0 ? 1 : -1;
    }

    if (gn_auth_basic_cache_state < 0
        || gnutls_hash_init(&hd, GNUTLS_DIG_SHA256) != 0)
    {
        return GN_ERROR;
    }

    if (gnutls_hash(hd, gn_auth_basic_cache_salt,
                    sizeof(gn_auth_basic_cache_salt)) != 0
        || gnutls_hash(hd, u->hash.data, u->hash.len + 1) != 0
        || gnutls_hash(hd, u->user.data, u->user.len) != 0
        || gnutls_hash(hd, &zero, 1) != 0
        || gnutls_hash(hd, pass->data, pass->len) != 0)
    {
        gnutls_hash_deinit(hd, key);
        return GN_ERROR;
    }

    gnutls_hash_deinit(hd, key);
    return GN_OK;
}


/*
 * The per-child cache of successful checks: a direct-mapped table of the
 * keys above with an expiry. It holds no password, but a fast hash of one:
 * someone able to read this child's memory could test guesses at SHA-256
 * speed rather than bcrypt speed -- the price of not blocking the loop.
 */
static gn_uint_t
gn_auth_basic_cache_hit(const u_char key[32])
{
    gn_auth_basic_cached_t  *c = &gn_auth_basic_cache[key[0]
                                     % GN_AUTH_BASIC_CACHE_SLOTS];

    return c->expires > gn_current_msec
           && gn_auth_basic_ct_eq(c->key, 32, key, 32);
}


static void
gn_auth_basic_cache_add(const u_char key[32])
{
    gn_auth_basic_cached_t  *c = &gn_auth_basic_cache[key[0]
                                     % GN_AUTH_BASIC_CACHE_SLOTS];

    memcpy(c->key, key, 32);
    c->expires = gn_current_msec + GN_AUTH_BASIC_CACHE_TTL;
}


gn_int_t
gn_auth_basic_verify(const gn_auth_basic_users_t *users, const gn_str_t *user,
    const gn_str_t *pass)
{
    const gn_auth_basic_user_t  *u;
    u_char                       key[32], md5[GN_AUTH_BASIC_MD5_LEN];
    char                         pw[GN_AUTH_BASIC_MAX_PASS + 1];
    const u_char                *got;
    size_t                       len;
    gn_uint_t                    cached;

    u = gn_auth_basic_find(users, user);
    if (u == NULL) {
        return GN_DECLINED;
    }

    /* crypt_r() takes a C string: a NUL would cut the password short */
    if (pass->len > GN_AUTH_BASIC_MAX_PASS
        || (pass->len && memchr(pass->data, '\0', pass->len) != NULL))
    {
        return GN_DECLINED;
    }

    cached = gn_auth_basic_cache_key(u, pass, key) == GN_OK;
    if (cached && gn_auth_basic_cache_hit(key)) {
        return GN_OK;
    }

    if (u->type == GN_AUTH_BASIC_APR1 || u->type == GN_AUTH_BASIC_MD5) {
        len = gn_auth_basic_md5crypt(pass->data, pass->len, u->hash.data,
                                     u->hash.len, md5);
        got = md5;

    } else {
        if (pass->len) {
            memcpy(pw, pass->data, pass->len);
        }
        pw[pass->len] = '\0';

        got = (const u_char *) crypt_r(pw, (const char *) u->hash.data,
                                       &gn_auth_basic_crypt_data);
        explicit_bzero(pw, sizeof(pw));
        len = got != NULL ? strlen((const char *) got) : 0;
        if (len > 0 && got[0] == '*') {
            len = 0;                              /* crypt's failure token */
        }
    }

    if (len == 0) {
        return GN_ERROR;
    }

    if (!gn_auth_basic_ct_eq(got, len, u->hash.data, u->hash.len)) {
        return GN_DECLINED;
    }

    if (cached) {
        gn_auth_basic_cache_add(key);
    }

    return GN_OK;
}


static gn_int_t
gn_auth_basic_b64val(u_char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}


/* Standard base64 (padding optional); returns the length or -1. */
static ssize_t
gn_auth_basic_b64decode(const u_char *s, size_t len, u_char *out)
{
    u_char    *p = out;
    uint32_t   acc = 0;
    gn_int_t   v;
    size_t     i, pad = 0;

    while (pad < 2 && len > 0 && s[len - 1] == '=') {
        len--;
        pad++;
    }

    if ((pad && (len + pad) % 4 != 0) || len % 4 == 1) {
        return -1;
    }

    for (i = 0; i < len; i++) {
        v = gn_auth_basic_b64val(s[i]);
        if (v < 0) {
            return -1;
        }
        acc = (acc << 6) | (uint32_t) v;
        if (i % 4 == 3) {
            *p++ = (u_char) (acc >> 16);
            *p++ = (u_char) (acc >> 8);
            *p++ = (u_char) acc;
            acc = 0;
        }
    }

    if (len % 4 == 2) {
        *p++ = (u_char) (acc >> 4);
    } else if (len % 4 == 3) {
        *p++ = (u_char) (acc >> 10);
        *p++ = (u_char) (acc >> 2);
    }

    return p - out;
}


gn_int_t
gn_auth_basic_decode(const gn_str_t *value, u_char *buf, gn_str_t *user,
    gn_str_t *pass)
{
    const u_char  *p = value->data, *end = value->data + value->len, *tok;
    u_char        *colon;
    ssize_t        n;

    for (tok = p; tok < end && *tok != ' ' && *tok != '\t'; tok++) {
        /* void */
    }
    if (tok - p != 5 || gn_strncasecmp(p, (u_char *) "basic", 5) != 0) {
        return GN_DECLINED;
    }

    while (tok < end && (*tok == ' ' || *tok == '\t')) {
        tok++;
    }
    if (tok == end) {
        return GN_ERROR;
    }

    n = gn_auth_basic_b64decode(tok, (size_t) (end - tok), buf);
    if (n < 0) {
        return GN_ERROR;
    }

    colon = memchr(buf, ':', (size_t) n);
    if (colon == NULL) {
        return GN_ERROR;
    }

    user->data = buf;
    user->len = (size_t) (colon - buf);
    pass->data = colon + 1;
    pass->len = (size_t) (buf + n - pass->data);
    buf[n] = '\0';

    return GN_OK;
}


/* A user name from the wire, safe to log: printable ASCII, cut at 64. */
static void
gn_auth_basic_log_name(const gn_str_t *s, char *out, size_t size)
{
    size_t  i, n;

    n = gn_min(s->len, size - 1);
    for (i = 0; i < n; i++) {
        out[i] = (s->data[i] >= 0x20 && s->data[i] < 0x7f
                  && s->data[i] != '"') ? (char) s->data[i] : '?';
    }
    out[n] = '\0';
}


gn_int_t
gn_auth_basic_check(gn_http_request_t *r, const gn_auth_basic_users_t *users)
{
    gn_http_header_t  *h;
    gn_str_t           user, pass;
    u_char            *buf;
    gn_int_t           rc;
    char               name[65];

    h = gn_http_header_find(&r->head, "Authorization", 13);
    if (h == NULL) {
        return GN_DECLINED;
    }

    buf = gn_pnalloc(r->pool, h->value.len + 1);
    if (buf == NULL) {
        return GN_ERROR;
    }

    rc = gn_auth_basic_decode(&h->value, buf, &user, &pass);
    if (rc != GN_OK) {
        gn_log_error(GN_LOG_INFO, &r->c->log, 0, "client sent %s",
                     rc == GN_DECLINED ? "an Authorization header that is "
                                         "not Basic"
                                       : "invalid Basic credentials");
        return GN_DECLINED;
    }

    gn_auth_basic_log_name(&user, name, sizeof(name));

    if (gn_auth_basic_find(users, &user) == NULL) {
        gn_log_error(GN_LOG_INFO, &r->c->log, 0,
                     "user \"%s\" was not found in \"%.*s\"", name,
                     GN_STR_ARG(&users->file));
        return GN_DECLINED;
    }

    rc = gn_auth_basic_verify(users, &user, &pass);
    explicit_bzero(pass.data, pass.len);

    if (rc == GN_ERROR) {
        gn_log_error(GN_LOG_ERR, &r->c->log, errno,
                     "crypt of the password of user \"%s\" failed", name);
        return GN_ERROR;
    }

    if (rc != GN_OK) {
        gn_log_error(GN_LOG_INFO, &r->c->log, 0,
                     "user \"%s\": password mismatch", name);
        return GN_DECLINED;
    }

    return GN_OK;
}


gn_int_t
gn_auth_basic_challenge(gn_http_request_t *r, const gn_str_t *challenge)
{
    gn_int_t  rc;

    rc = gn_http_response_error(r, 401);
    if (rc != GN_OK) {
        return rc;
    }

    /* set after the error response, which clears extra headers */
    r->extra_headers = *challenge;

    return GN_OK;
}
