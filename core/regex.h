/*
 * PCRE2 for rules: patterns compiled once, in the master, at
 * configuration time (with JIT where available); matching in the
 * children with per-child match data and a match context whose limits
 * stop a catastrophic pattern instead of letting it stall the child.
 * Pure layer: returns codes and error strings, never logs.
 */

#ifndef GN_CORE_REGEX_H_INCLUDED
#define GN_CORE_REGEX_H_INCLUDED

#include "gn_config.h"

#include "pool.h"


#define GN_REGEX_MAX_CAPTURES   32

/* PCRE2's own default (10,000,000) lets one catastrophic pattern hold a
 * child for tens of milliseconds per request; 100,000 keeps it below a
 * millisecond (doc/internals.md section 5). */
#define GN_REGEX_MATCH_LIMIT    100000

typedef struct {
    void          *code;          /* pcre2_code * */
    gn_str_t       pattern;
    gn_uint_t      captures;      /* capture groups in the pattern */
    gn_uint_t      jit;           /* JIT-compiled */
} gn_regex_t;

/* Offsets of a match: [2n, 2n+1) for group n; -1 if unset. */
typedef struct {
    const u_char  *subject;
    gn_int_t       n;             /* groups + 1 */
    size_t         ovec[2 * (GN_REGEX_MAX_CAPTURES + 1)];
} gn_regex_caps_t;


/* Master, config time. The pool frees the compiled pattern. Returns
 * GN_OK, or GN_ERROR with err = PCRE2's message and the offset. */
gn_int_t gn_regex_compile(gn_regex_t *re, gn_pool_t *pool,
    const gn_str_t *pattern, gn_uint_t caseless, char *err, size_t errlen);

/* The number of a named group, or GN_ERROR. */
gn_int_t gn_regex_group(gn_regex_t *re, const u_char *name, size_t len);

/* Child, once: the match context (match limit, depth/heap limits, JIT
 * stack) and match data. */
gn_int_t gn_regex_init_child(uint32_t match_limit);

/* 1 on a match (caps filled when not NULL), 0 on none, GN_ERROR when a
 * limit was hit or matching failed (err names the reason). */
gn_int_t gn_regex_exec(gn_regex_t *re, const u_char *s, size_t len,
    gn_regex_caps_t *caps, const char **err);

#endif /* GN_CORE_REGEX_H_INCLUDED */
