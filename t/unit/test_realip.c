/*
 * The client's address from a trusted proxy's header (core/realip.c,
 * gn_realip_pick): X-Real-IP-style single values (the last field wins),
 * lists from the right with and without real_ip_recursive, lists across
 * several fields, "[v6]:port" and "v4:port", empty elements, and what is
 * declined: no value, an invalid address, all of a list invalid.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "realip.h"
#include "../tap.h"


static gn_access_rule_t  trusted[4];
static gn_uint_t         ntrusted;


static void
trust(const char *cidr)
{
    gn_str_t  s;
    char      err[256];

    s.data = (u_char *) cidr;
    s.len = strlen(cidr);
    if (gn_access_parse_rule(&s, &trusted[ntrusted++], err, sizeof(err))
        != GN_OK)
    {
        diag("%s: %s", cidr, err);
    }
}


/* The address picked from the values (NULL-terminated), or "declined". */
static const char *
pick(gn_uint_t list, gn_uint_t recursive, ...)
{
    static char               buf[INET6_ADDRSTRLEN];
    struct sockaddr_storage   ss;
    gn_str_t                  v[8];
    gn_uint_t                 n = 0;
    const char               *s;
    va_list                   ap;

    va_start(ap, recursive);
    while ((s = va_arg(ap, const char *)) != NULL && n < 8) {
        v[n].data = (u_char *) s;
        v[n].len = strlen(s);
        n++;
    }
    va_end(ap);

    if (gn_realip_pick(v, n, list, trusted, ntrusted, recursive, &ss)
        != GN_OK)
    {
        return "declined";
    }
    if (ss.ss_family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in *) &ss)->sin_addr, buf,
                  sizeof(buf));
        if (((struct sockaddr_in *) &ss)->sin_port != 0) {
            return "port set";
        }
    } else {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *) &ss)->sin6_addr, buf,
                  sizeof(buf));
    }
    return buf;
}

#define is_pick(got, want, ...)                                               \
    do {                                                                      \
        const char *g_ = (got);                                               \
        is_str(g_, strlen(g_), (want), __VA_ARGS__);                          \
    } while (0)


int
main(void)
{
    trust("10.0.0.0/8");
    trust("2001:db8:f::/48");

    is_pick(pick(0, 0, "192.0.2.7", NULL), "192.0.2.7", "X-Real-IP");
    is_pick(pick(0, 0, "192.0.2.7", "192.0.2.8", NULL), "192.0.2.8",
            "X-Real-IP twice: the last field");
    is_pick(pick(0, 0, "2001:db8::7", NULL), "2001:db8::7", "an IPv6 one");
    is_pick(pick(0, 0, "[2001:db8::7]:443", NULL), "2001:db8::7",
            "[v6]:port");
    is_pick(pick(0, 0, "192.0.2.7:8080", NULL), "192.0.2.7",
            "v4:port, the port dropped");
    is_pick(pick(0, 0, "192.0.2.7:junk", NULL), "declined",
            "v4:junk: not an address");
    is_pick(pick(0, 0, "[2001:db8::7]:", NULL), "declined",
            "[v6]: with no port: not an address");
    is_pick(pick(0, 0, "192.0.2.7, 192.0.2.8", NULL), "declined",
            "X-Real-IP holding a list: not an address");
    is_pick(pick(0, 0, "unknown", NULL), "declined", "not an address");
    is_pick(pick(0, 0, NULL), "declined", "no field");

    is_pick(pick(1, 0, "192.0.2.7, 10.0.0.2, 10.0.0.1", NULL), "10.0.0.1",
            "a list, not recursive: its last");
    is_pick(pick(1, 1, "192.0.2.7, 10.0.0.2, 10.0.0.1", NULL), "192.0.2.7",
            "recursive: the trusted ones skipped");
    is_pick(pick(1, 1, "198.51.100.9, 192.0.2.7, 10.0.0.1", NULL),
            "192.0.2.7", "recursive: the first untrusted from the right");
    is_pick(pick(1, 1, "10.0.0.3,10.0.0.2 ,  10.0.0.1", NULL), "10.0.0.3",
            "all trusted: the leftmost");
    is_pick(pick(1, 1, "192.0.2.7", "10.0.0.2, 10.0.0.1", NULL),
            "192.0.2.7", "a list across two fields");
    is_pick(pick(1, 0, "192.0.2.7", "10.0.0.2", NULL), "10.0.0.2",
            "two fields, not recursive: the last field's last");
    is_pick(pick(1, 1, "192.0.2.7, , 10.0.0.1", NULL), "192.0.2.7",
            "an empty element skipped");
    is_pick(pick(1, 1, "192.0.2.7, [2001:db8:f::5]:80, 2001:db8:f::1", NULL),
            "192.0.2.7", "trusted IPv6 proxies skipped");
    is_pick(pick(1, 1, "192.0.2.7, garbage, 10.0.0.1", NULL), "10.0.0.1",
            "an invalid element stops the walk at the last valid one");
    is_pick(pick(1, 1, "garbage", NULL), "declined",
            "nothing valid: declined");
    is_pick(pick(1, 0, "", NULL), "declined", "an empty field: declined");

    return done_testing();
}
