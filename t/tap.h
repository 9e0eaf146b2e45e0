/*
 * A minimal TAP producer for the C unit tests. Failures print file:line.
 */

#ifndef GN_T_TAP_H_INCLUDED
#define GN_T_TAP_H_INCLUDED

#include <stddef.h>

void tap_plan(int n);
void tap_skip_all(const char *why);
int  tap_ok(int pass, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int  tap_is_int(long long got, long long want, const char *file, int line,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int  tap_is_str(const char *got, size_t got_len, const char *want,
    const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int  tap_done_testing(void);     /* prints the plan if none was given;
                                    returns the exit status */

#define plan(n)                 tap_plan(n)
#define skip_all(why)           tap_skip_all(why)
#define ok(c, ...)              tap_ok(!!(c), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(g, w, ...)       tap_is_int((g), (w), __FILE__, __LINE__, __VA_ARGS__)
/* got: pointer + length (wire data need not be NUL-terminated); want: C string */
#define is_str(g, glen, w, ...) tap_is_str((const char *) (g), (glen), (w),   \
                                    __FILE__, __LINE__, __VA_ARGS__)
#define diag(...)               tap_diag(__VA_ARGS__)
#define done_testing()          tap_done_testing()

#endif /* GN_T_TAP_H_INCLUDED */
