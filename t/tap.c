/*
 * TAP output for the unit tests, read by automake's tap-driver.sh.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"


static int  tap_planned = -1;
static int  tap_run;
static int  tap_failed;


void
tap_plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}


void
tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    exit(0);
}


static int
tap_vok(int pass, const char *file, int line, const char *fmt, va_list ap)
{
    tap_run++;
    printf("%sok %d - ", pass ? "" : "not ", tap_run);
    vprintf(fmt, ap);
    printf("\n");

    if (!pass) {
        tap_failed++;
        printf("#   Failed at %s:%d\n", file, line);
    }

    fflush(stdout);
    return pass;
}


int
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
    int      rc;
    va_list  ap;

    va_start(ap, fmt);
    rc = tap_vok(pass, file, line, fmt, ap);
    va_end(ap);

    return rc;
}


int
tap_is_int(long long got, long long want, const char *file, int line,
    const char *fmt, ...)
{
    int      rc;
    va_list  ap;

    va_start(ap, fmt);
    rc = tap_vok(got == want, file, line, fmt, ap);
    va_end(ap);

    if (!rc) {
        printf("#        got: %lld\n#   expected: %lld\n", got, want);
    }

    return rc;
}


int
tap_is_str(const char *got, size_t got_len, const char *want,
    const char *file, int line, const char *fmt, ...)
{
    int      rc, pass;
    va_list  ap;

    if (got == NULL || want == NULL) {
        pass = (got == NULL && want == NULL);
    } else {
        pass = (got_len == strlen(want) && memcmp(got, want, got_len) == 0);
    }

    va_start(ap, fmt);
    rc = tap_vok(pass, file, line, fmt, ap);
    va_end(ap);

    if (!rc) {
        printf("#        got: '%.*s'\n#   expected: '%s'\n",
               got ? (int) got_len : 6, got ? got : "(null)",
               want ? want : "(null)");
    }

    return rc;
}


void
tap_diag(const char *fmt, ...)
{
    va_list  ap;

    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}


int
tap_done_testing(void)
{
    int  rc;

    rc = tap_failed ? 1 : 0;

    if (tap_planned < 0) {
        printf("1..%d\n", tap_run);
    } else if (tap_planned != tap_run) {
        printf("# planned %d tests but ran %d\n", tap_planned, tap_run);
        rc = 1;
    }

    /* before any exit handler (LeakSanitizer's) can end the process */
    fflush(stdout);
    return rc;
}
