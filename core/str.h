/*
 * Length-delimited strings and the number parsers the rest of the server
 * shares. Pure functions: no I/O, no logging.
 */

#ifndef GN_CORE_STR_H_INCLUDED
#define GN_CORE_STR_H_INCLUDED

#include "gn_config.h"

#include "pool.h"


#define gn_tolower(c)      (u_char) (((c) >= 'A' && (c) <= 'Z') ? ((c) | 0x20) : (c))
#define gn_toupper(c)      (u_char) (((c) >= 'a' && (c) <= 'z') ? ((c) & ~0x20) : (c))
#define gn_cpymem(dst, src, n)  (((u_char *) memcpy(dst, src, n)) + (n))

#define gn_str_eq(s, lit)                                                     \
    ((s)->len == sizeof(lit) - 1 && memcmp((s)->data, lit, sizeof(lit) - 1) == 0)
#define gn_str_caseeq(s, lit)                                                 \
    ((s)->len == sizeof(lit) - 1                                              \
     && gn_first_caseeq((s)->data, (const u_char *) lit, (s)->len)           \
     && gn_strncasecmp((s)->data, (u_char *) lit, sizeof(lit) - 1) == 0)

/* a and b hold the same bytes but for ASCII case (equality only: the
 * lengths are compared first, which gn_str_casecmp's order cannot) */
#define gn_str_caseeq_str(a, b)                                               \
    ((a)->len == (b)->len                                                     \
     && gn_first_caseeq((a)->data, (b)->data, (a)->len)                      \
     && gn_strncasecmp((a)->data, (b)->data, (a)->len) == 0)

/* n == 0, or the first bytes of a and b may be equal but for case (they
 * are equal or differ in the 0x20 bit only): most strings of a length
 * that are not the one sought are told apart here, without a call */
#define gn_first_caseeq(a, b, n)                                              \
    ((n) == 0 || (((a)[0] ^ (b)[0]) & ~0x20) == 0)

/* printf helper: printf("%.*s", GN_STR_ARG(s)) */
#define GN_STR_ARG(s)      (int) (s)->len, (const char *) (s)->data


gn_int_t gn_strncasecmp(const u_char *s1, const u_char *s2, size_t n);

/* n bytes of src to dst in lower case (ASCII; dst may be src). Returns
 * dst + n. */
u_char *gn_strlow(u_char *dst, const u_char *src, size_t n);
int gn_str_cmp(const gn_str_t *a, const gn_str_t *b);
int gn_str_casecmp(const gn_str_t *a, const gn_str_t *b);

/* Decimal, no sign, no spaces. Returns GN_ERROR on an empty string, a
 * non-digit or overflow past GN_MAX_INT_T_VALUE. */
gn_int_t gn_atoi(const u_char *s, size_t n);

/* Hexadecimal, as for chunk sizes. GN_ERROR as gn_atoi(). */
gn_int_t gn_hextoi(const u_char *s, size_t n);

/* "10", "10k", "8m", "1g" (case-insensitive) -> bytes; GN_ERROR if bad or
 * overflowing. */
ssize_t gn_parse_size(const gn_str_t *s);

/* "500ms", "30s", "5m", "2h", "1d", "1y", and sums such as "1m30s"; a bare
 * number means seconds. Returns GN_ERROR on a bad value. */
gn_int_t gn_parse_msec(const gn_str_t *s, gn_msec_t *out);

/* NUL-terminated copy from a pool (for syscalls). NULL when out of memory. */
char *gn_pstrdup_cstr(gn_pool_t *pool, const gn_str_t *s);
u_char *gn_pstrdup(gn_pool_t *pool, const gn_str_t *src, gn_str_t *dst);

/* Room for `need` bytes in a malloc()ed buffer of *cap bytes (NULL and 0
 * at first): when it is short, the capacity doubles, from at least
 * `min`, until it holds them, and the buffer is realloc()ed (its bytes
 * kept). GN_OK, or GN_ERROR with *buf and *cap unchanged (out of
 * memory). Any process. Modules link nothing of the core: they keep
 * their own. */
gn_int_t gn_str_reserve(u_char **buf, size_t *cap, size_t need, size_t min);

/* n bytes of s with & < > " ' as HTML entities, to p, or only measured
 * when p is NULL. Returns the escaped length. */
size_t gn_str_escape_html(u_char *p, const u_char *s, size_t n);

#endif /* GN_CORE_STR_H_INCLUDED */
