/*
 * allow / deny rules: parsing of addresses and CIDR networks (IPv4, IPv6,
 * `all`), the error messages, edge prefixes (/0, /32, /128), masking of
 * host bits, first-match order, and IPv4-mapped IPv6 peers
 * (::ffff:127.0.0.1) matching IPv4 networks.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "access.h"
#include "../tap.h"


static gn_int_t
parse(gn_access_rule_t *r, gn_uint_t deny, const char *text, char *err)
{
    gn_str_t  s;

    s.data = (u_char *) text;
    s.len = strlen(text);
    r->deny = deny;

    return gn_access_parse_rule(&s, r, err, 256);
}


/* the verdict of `rules` (texts, '!' prefix = deny) for peer `addr` */
static gn_uint_t
verdict(const char **rules, const char *addr)
{
    gn_access_rule_t         r[16];
    struct sockaddr_storage  ss;
    struct sockaddr_in      *sin = (struct sockaddr_in *) &ss;
    struct sockaddr_in6     *sin6 = (struct sockaddr_in6 *) &ss;
    gn_uint_t                n;
    char                     err[256];

    for (n = 0; rules[n] != NULL; n++) {
        if (parse(&r[n], rules[n][0] == '!', rules[n] + (rules[n][0] == '!'),
                  err) != GN_OK)
        {
            diag("rule %s: %s", rules[n], err);
            return 99;
        }
    }

    memset(&ss, 0, sizeof(ss));
    if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
    } else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
    } else {
        ss.ss_family = AF_UNIX;
    }

    return gn_access_match(r, n, (struct sockaddr *) &ss);
}


static void
test_parse(void)
{
    gn_access_rule_t  r;
    char              err[256];
    static const char *bad[] = {
        "", "10.0.0.300", "10.0.0", "10.0.0.1/", "10.0.0.1/33",
        "10.0.0.1/-1", "10.0.0.1/+8", "10.0.0.1/1x", "10.0.0.1/0008",
        "::1/129", "fe80::1%lo", "[::1]", "alll", "1.2.3.4 ", "host.example",
        "10.0.0.0/8/8", "/8", NULL
    };
    gn_uint_t         i;

    is_int(parse(&r, 1, "all", err), GN_OK, "all");
    is_int(r.family, AF_UNSPEC, "all: no family");
    is_int((gn_int_t) r.deny, 1, "deny kept");

    is_int(parse(&r, 0, "192.168.10.77/24", err), GN_OK, "v4 CIDR");
    is_int(r.family, AF_INET, "v4 family");
    is_int((gn_int_t) r.prefix, 24, "prefix 24");
    ok(memcmp(r.addr, "\xc0\xa8\x0a\x00", 4) == 0, "host bits cleared");
    ok(memcmp(r.mask, "\xff\xff\xff\x00", 4) == 0, "mask /24");

    is_int(parse(&r, 0, "10.1.2.3/13", err), GN_OK, "v4 /13");
    ok(memcmp(r.mask, "\xff\xf8\x00\x00", 4) == 0, "mask /13");
    ok(memcmp(r.addr, "\x0a\x00\x00\x00", 4) == 0, "10.0.0.0/13");

    is_int(parse(&r, 0, "10.1.2.3", err), GN_OK, "v4 host");
    is_int((gn_int_t) r.prefix, 32, "host: /32");

    is_int(parse(&r, 0, "2001:db8::1/32", err), GN_OK, "v6 CIDR");
    is_int(r.family, AF_INET6, "v6 family");
    ok(memcmp(r.addr, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0,
       "v6 host bits cleared");

    is_int(parse(&r, 0, "::ffff:127.0.0.0/104", err), GN_OK, "mapped rule");
    is_int(r.family, AF_INET, "mapped rule becomes v4");
    is_int((gn_int_t) r.prefix, 8, "mapped /104 is v4 /8");

    is_int(parse(&r, 0, "::/0", err), GN_OK, "::/0");
    is_int(parse(&r, 0, "0.0.0.0/0", err), GN_OK, "0.0.0.0/0");
    is_int(parse(&r, 0, "::1/128", err), GN_OK, "::1/128");

    for (i = 0; bad[i] != NULL; i++) {
        is_int(parse(&r, 0, bad[i], err), GN_ERROR, "refused: \"%s\"",
               bad[i]);
    }

    parse(&r, 0, "10.0.0.300", err);
    is_str(err, strlen(err), "invalid address \"10.0.0.300\" (an IPv4 or "
           "IPv6 address, a CIDR network or \"all\")", "address message");
    parse(&r, 0, "10.0.0.0/33", err);
    is_str(err, strlen(err), "invalid prefix length in \"10.0.0.0/33\" "
           "(0 to 32)", "v4 prefix message");
    parse(&r, 0, "::/129", err);
    is_str(err, strlen(err), "invalid prefix length in \"::/129\" "
           "(0 to 128)", "v6 prefix message");
}


static void
test_match(void)
{
    static const char *lo8[] = { "127.0.0.0/8", NULL };
    static const char *first[] = { "!10.0.0.1", "10.0.0.0/8", "!all",
                                   NULL };
    static const char *order[] = { "10.0.0.0/8", "!10.0.0.1", NULL };
    static const char *zero4[] = { "!0.0.0.0/0", NULL };
    static const char *zero6[] = { "!::/0", NULL };
    static const char *host32[] = { "192.0.2.7/32", "!all", NULL };
    static const char *host128[] = { "2001:db8::7/128", "!all", NULL };
    static const char *v6net[] = { "2001:db8:a::/48", "!all", NULL };
    static const char *mixed[] = { "::1", "!127.0.0.1", "all", NULL };
    static const char *none[] = { "10.0.0.0/8", NULL };
    static const char *odd[] = { "172.16.0.0/12", "!all", NULL };

    is_int(verdict(lo8, "127.0.0.1"), GN_ACCESS_ALLOW, "127.0.0.1 in /8");
    is_int(verdict(lo8, "127.255.1.2"), GN_ACCESS_ALLOW, "127.255.1.2");
    is_int(verdict(lo8, "128.0.0.1"), GN_ACCESS_NOMATCH, "128.0.0.1 not");
    is_int(verdict(lo8, "::ffff:127.0.0.1"), GN_ACCESS_ALLOW,
           "::ffff:127.0.0.1 matches 127.0.0.0/8");
    is_int(verdict(lo8, "::ffff:10.0.0.1"), GN_ACCESS_NOMATCH,
           "::ffff:10.0.0.1 does not");
    is_int(verdict(lo8, "::1"), GN_ACCESS_NOMATCH, "::1 is not IPv4");
    is_int(verdict(lo8, "::127.0.0.1"), GN_ACCESS_NOMATCH,
           "v4-compatible (not mapped) address is IPv6");

    is_int(verdict(first, "10.0.0.1"), GN_ACCESS_DENY, "first match: deny");
    is_int(verdict(first, "10.0.0.2"), GN_ACCESS_ALLOW, "then allow");
    is_int(verdict(first, "11.0.0.1"), GN_ACCESS_DENY, "then deny all");
    is_int(verdict(first, "::1"), GN_ACCESS_DENY, "deny all covers v6");
    is_int(verdict(first, "/unix"), GN_ACCESS_DENY, "and non-IP peers");
    is_int(verdict(order, "10.0.0.1"), GN_ACCESS_ALLOW,
           "order matters: the earlier allow wins");

    is_int(verdict(zero4, "1.2.3.4"), GN_ACCESS_DENY, "/0 matches any v4");
    is_int(verdict(zero4, "::ffff:1.2.3.4"), GN_ACCESS_DENY,
           "/0 matches a mapped v4");
    is_int(verdict(zero4, "::2"), GN_ACCESS_NOMATCH, "v4 /0 is not v6");
    is_int(verdict(zero6, "2001:db8::1"), GN_ACCESS_DENY, "::/0 any v6");
    is_int(verdict(zero6, "1.2.3.4"), GN_ACCESS_NOMATCH, "::/0 is not v4");
    is_int(verdict(zero6, "/unix"), GN_ACCESS_NOMATCH, "nor AF_UNIX");

    is_int(verdict(host32, "192.0.2.7"), GN_ACCESS_ALLOW, "/32 exact");
    is_int(verdict(host32, "192.0.2.6"), GN_ACCESS_DENY, "/32 neighbour");
    is_int(verdict(host128, "2001:db8::7"), GN_ACCESS_ALLOW, "/128 exact");
    is_int(verdict(host128, "2001:db8::6"), GN_ACCESS_DENY,
           "/128 neighbour");
    is_int(verdict(v6net, "2001:db8:a:ffff::1"), GN_ACCESS_ALLOW,
           "v6 /48 inside");
    is_int(verdict(v6net, "2001:db8:b::1"), GN_ACCESS_DENY, "v6 /48 outside");

    is_int(verdict(mixed, "::1"), GN_ACCESS_ALLOW, "::1 allowed");
    is_int(verdict(mixed, "127.0.0.1"), GN_ACCESS_DENY, "127.0.0.1 denied");
    is_int(verdict(mixed, "::ffff:127.0.0.1"), GN_ACCESS_DENY,
           "mapped 127.0.0.1 denied like 127.0.0.1");
    is_int(verdict(mixed, "10.9.9.9"), GN_ACCESS_ALLOW, "others: all");

    is_int(verdict(none, "192.0.2.1"), GN_ACCESS_NOMATCH, "no match");

    is_int(verdict(odd, "172.31.255.255"), GN_ACCESS_ALLOW, "/12 top");
    is_int(verdict(odd, "172.32.0.0"), GN_ACCESS_DENY, "/12 past the top");
    is_int(verdict(odd, "172.15.255.255"), GN_ACCESS_DENY, "/12 below");
}


int
main(void)
{
    test_parse();
    test_match();

    return done_testing();
}
