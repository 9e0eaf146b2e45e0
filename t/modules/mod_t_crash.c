/*
 * mod_t_crash: test fixture. `handler t_crash;` answers "alive PID" and,
 * for a URI ending in /crash, writes through a NULL struct pointer (to a
 * member at offset 16, in the unmapped first page): the child dies of
 * SIGSEGV, the master logs an [alert] and forks a replacement, and the
 * other children's connections carry on.
 *
 * The default SIGSEGV disposition is restored first so that a sanitizer's
 * SEGV handler does not turn the intended crash into a report, and core
 * dumps are disabled so that a test run leaves no core file. The address
 * is 16, not 0, so that UBSan's null-pointer check (a report, not a
 * crash) does not fire first.
 */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include <gannet/module.h>


/* volatile: the compiler may not fold the address (and warn about it) */
static volatile uintptr_t  t_crash_address = 16;


static int
t_crash_handler(const gn_api_t *api, gn_request_t *r)
{
    int               n;
    char              buf[64];
    gn_str_t          uri;
    struct rlimit     rl;
    volatile int     *p;

    uri = api->uri(r);

    if (uri.len >= 6 && memcmp(uri.data + uri.len - 6, "/crash", 6) == 0) {
        api->log(r, GN_LOG_NOTICE, "t_crash: crashing pid %ld",
                 (long) getpid());

        rl.rlim_cur = 0;
        rl.rlim_max = 0;
        (void) setrlimit(RLIMIT_CORE, &rl);
        signal(SIGSEGV, SIG_DFL);

        p = (volatile int *) t_crash_address;
        *p = 1;
    }

    n = snprintf(buf, sizeof(buf), "alive %ld\n", (long) getpid());

    api->set_header(r, "Content-Type", "text/plain");

    return api->write(r, buf, (size_t) n);
}


static const gn_module_t  t_crash_module = {
    GN_MODULE_V1, "t_crash", "1.0", NULL, 0,
    NULL, NULL, t_crash_handler, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_crash_module)
