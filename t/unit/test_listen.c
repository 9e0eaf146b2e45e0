/*
 * listen.c: gn_sockaddr_text, its IPv4 formatter against inet_ntop.
 */

#include "gn_config.h"

#include <arpa/inet.h>

#include "listen.h"

#include "../tap.h"


/* gn_sockaddr_text's own IPv4 formatter against inet_ntop's text */
static void
test_addr_text(void)
{
    static const char  *v4[] = { "0.0.0.0", "127.0.0.1", "10.9.99.100",
                                 "255.255.255.255", "1.20.199.250" };
    struct sockaddr_in  sin;
    struct sockaddr_in6 sin6;
    char                buf[INET6_ADDRSTRLEN], want[INET6_ADDRSTRLEN];
    size_t              i, n;
    uint32_t            a;

    for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        (void) inet_pton(AF_INET, v4[i], &sin.sin_addr);
        n = gn_sockaddr_text((struct sockaddr *) &sin, buf, sizeof(buf));
        is_str(buf, n, v4[i], "IPv4 %s", v4[i]);
        is_int((long) strlen(buf), (long) n, "IPv4 %s: NUL-terminated",
               v4[i]);
    }

    /* a sweep of octet values against inet_ntop */
    for (a = 0; a < 256; a += 7) {
        memset(&sin, 0, sizeof(sin));
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(a << 24 | (255 - a) << 16 | a / 3 << 8
                                    | (a * 37 & 0xff));
        (void) inet_ntop(AF_INET, &sin.sin_addr, want, sizeof(want));
        n = gn_sockaddr_text((struct sockaddr *) &sin, buf, sizeof(buf));
        if (n != strlen(want) || memcmp(buf, want, n + 1) != 0) {
            break;
        }
    }
    ok(a >= 256, "IPv4 sweep matches inet_ntop (stopped at %u)", a);

    memset(&sin6, 0, sizeof(sin6));
    sin6.sin6_family = AF_INET6;
    (void) inet_pton(AF_INET6, "2001:db8::1", &sin6.sin6_addr);
    n = gn_sockaddr_text((struct sockaddr *) &sin6, buf, sizeof(buf));
    is_str(buf, n, "2001:db8::1", "IPv6 through inet_ntop");
}


int
main(void)
{
    test_addr_text();

    return done_testing();
}
