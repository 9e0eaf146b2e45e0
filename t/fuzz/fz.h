/*
 * What every libFuzzer harness checks with: fz_check() aborts (so the
 * fuzzer keeps the input) with the harness's name and the invariant
 * that failed; fz_check_str() checks that a string found in buf lies
 * inside it. Define FZ_NAME before including this.
 */

#ifndef GN_T_FUZZ_FZ_H_INCLUDED
#define GN_T_FUZZ_FZ_H_INCLUDED

#include <stdio.h>
#include <stdlib.h>


static inline void
fz_check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, FZ_NAME ": invariant failed: %s\n", what);
        abort();
    }
}


#ifdef GN_API_TYPES_H_INCLUDED
static inline void
fz_check_str(const gn_str_t *s, const u_char *buf, size_t len,
    const char *what)
{
    if (s->len == 0) {
        return;
    }

    fz_check(s->data != NULL && s->data >= buf
             && s->data + s->len <= buf + len, what);
}
#endif

#endif /* GN_T_FUZZ_FZ_H_INCLUDED */
