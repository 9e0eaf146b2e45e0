/*
 * The PROXY protocol parser (core/proxy_protocol.c): version 1 lines
 * (TCP4, TCP6, UNKNOWN), version 2 headers (PROXY and LOCAL, IPv4, IPv6,
 * UNSPEC, with TLVs), headers that arrive in pieces, and what is refused:
 * other bytes, broken fields, bad ports, long lines, wrong versions and
 * commands, lengths too short for the addresses or past the limit.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "proxy_protocol.h"
#include "../tap.h"


static gn_proxy_protocol_t  pp;
static const char          *err;


static ssize_t
parse(const void *buf, size_t len)
{
    return gn_proxy_protocol_parse(buf, len, &pp, &err);
}


static ssize_t
parse_str(const char *s)
{
    return parse(s, strlen(s));
}


/* "ADDR:PORT" of an address the parser filled */
static const char *
text(const struct sockaddr_storage *ss)
{
    static char  buf[2][INET6_ADDRSTRLEN + 8];
    static int   k;
    char         a[INET6_ADDRSTRLEN];
    unsigned     port;

    k ^= 1;
    if (ss->ss_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *) ss)->sin_addr, a,
                  sizeof(a));
        port = ntohs(((const struct sockaddr_in *) ss)->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) ss)->sin6_addr,
                  a, sizeof(a));
        port = ntohs(((const struct sockaddr_in6 *) ss)->sin6_port);
    } else {
        return "none";
    }
    snprintf(buf[k], sizeof(buf[k]), "%s:%u", a, port);
    return buf[k];
}


static void
test_v1(void)
{
    const char  *l4 = "PROXY TCP4 192.0.2.7 198.51.100.1 56324 443\r\nGET";
    const char  *l6 = "PROXY TCP6 2001:db8::7 2001:db8::1 65535 0\r\n";
    size_t       i, n;

    is_int(parse_str(l4), (ssize_t) strlen(l4) - 3,
           "v1 TCP4: the line's length, not more");
    is_int(pp.version, 1, "version 1");
    is_str(text(&pp.src), strlen(text(&pp.src)), "192.0.2.7:56324",
           "its source");
    is_str(text(&pp.dst), strlen(text(&pp.dst)), "198.51.100.1:443",
           "its destination");

    is_int(parse_str(l6), (ssize_t) strlen(l6), "v1 TCP6");
    is_str(text(&pp.src), strlen(text(&pp.src)), "2001:db8::7:65535",
           "its source, port 65535");

    is_int(parse_str("PROXY UNKNOWN\r\n"), 15, "v1 UNKNOWN");
    is_int(pp.src.ss_family, 0, "no address");
    is_int(parse_str("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"), 35,
           "v1 UNKNOWN with addresses: ignored");
    is_int(pp.src.ss_family, 0, "still no address");

    /* byte by byte: more, until the CRLF */
    n = strlen("PROXY TCP4 192.0.2.7 198.51.100.1 56324 443\r\n");
    for (i = 0; i < n; i++) {
        if (parse(l4, i) != 0) {
            break;
        }
    }
    is_int(i, n, "a cut line asks for more at every length");

    is_int(parse_str("GET / HTTP/1.1\r\n"), -1, "HTTP instead: refused");
    is_str(err, strlen(err), "not a PROXY protocol header", "its reason");
    is_int(parse_str("PROXZ"), -1, "a wrong prefix while cut: refused");
    is_int(parse_str("PROXY TCP5 1.2.3.4 1.2.3.4 1 2\r\n"), -1,
           "an unknown protocol");
    is_int(parse_str("PROXY TCP4 1.2.3.4 1.2.3.4 1\r\n"), -1,
           "a field missing");
    is_int(parse_str("PROXY TCP4 1.2.3.4 1.2.3.4 1 2 3\r\n"), -1,
           "a field too many");
    is_int(parse_str("PROXY TCP4 1.2.3.4  1.2.3.4 1 2\r\n"), -1,
           "two spaces");
    is_int(parse_str("PROXY TCP4 1.2.3.999 1.2.3.4 1 2\r\n"), -1,
           "an invalid address");
    is_int(parse_str("PROXY TCP4 2001:db8::1 1.2.3.4 1 2\r\n"), -1,
           "an IPv6 address in TCP4");
    is_int(parse_str("PROXY TCP4 1.2.3.4 1.2.3.4 65536 2\r\n"), -1,
           "port 65536");
    is_int(parse_str("PROXY TCP4 1.2.3.4 1.2.3.4 080 2\r\n"), -1,
           "a port with a leading zero");
    is_int(parse_str("PROXY TCP4 1.2.3.4 1.2.3.4 -1 2\r\n"), -1,
           "a negative port");
    is_int(parse_str("PROXY TCP4 1.2.3.4 1.2.3.4 1 2\n"), -1,
           "a bare LF");
    is_int(pp.src.ss_family, 0, "nothing kept of a refused header");
}


static void
test_v1_long(void)
{
    char  buf[200];

    memset(buf, 'x', sizeof(buf));
    memcpy(buf, "PROXY UNKNOWN ", 14);
    is_int(parse(buf, 106), 0, "106 bytes without CRLF: more");
    is_int(parse(buf, 107), -1, "107 without CRLF: too long");

    memcpy(buf + 105, "\r\n", 2);
    is_int(parse(buf, 150), 107, "a 107-byte line is taken");
}


static size_t
v2(u_char *b, u_char cmd, u_char fam, const u_char *addr, size_t alen,
    size_t tlv)
{
    static const u_char  sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                     0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a };

    memcpy(b, sig, 12);
    b[12] = (u_char) (0x20 | cmd);
    b[13] = fam;
    b[14] = (u_char) ((alen + tlv) >> 8);
    b[15] = (u_char) (alen + tlv);
    memcpy(b + 16, addr, alen);
    memset(b + 16 + alen, 0xee, tlv);
    return 16 + alen + tlv;
}


static void
test_v2(void)
{
    u_char        b[2048];
    size_t        n, i;
    const u_char  a4[12] = { 192, 0, 2, 7,  198, 51, 100, 1,
                             0xdc, 0x04,  0x01, 0xbb };
    u_char        a6[36];

    n = v2(b, 1, 0x11, a4, sizeof(a4), 0);
    b[n] = 0x16;                        /* a ClientHello after it */
    is_int(parse(b, n + 1), (ssize_t) n, "v2 PROXY TCP4: 28 bytes");
    is_int(pp.version, 2, "version 2");
    is_str(text(&pp.src), strlen(text(&pp.src)), "192.0.2.7:56324",
           "its source");
    is_str(text(&pp.dst), strlen(text(&pp.dst)), "198.51.100.1:443",
           "its destination");

    for (i = 0; i < n; i++) {
        if (parse(b, i) != 0) {
            break;
        }
    }
    is_int(i, n, "a cut v2 header asks for more at every length");

    n = v2(b, 1, 0x11, a4, sizeof(a4), 300);
    is_int(parse(b, n), (ssize_t) n, "with 300 bytes of TLVs: skipped");
    is_str(text(&pp.src), strlen(text(&pp.src)), "192.0.2.7:56324",
           "the source still");

    memset(a6, 0, sizeof(a6));
    inet_pton(AF_INET6, "2001:db8::7", a6);
    inet_pton(AF_INET6, "2001:db8::1", a6 + 16);
    a6[32] = 0x30;
    a6[33] = 0x39;
    a6[35] = 80;
    n = v2(b, 1, 0x21, a6, sizeof(a6), 0);
    is_int(parse(b, n), 52, "v2 PROXY TCP6");
    is_str(text(&pp.src), strlen(text(&pp.src)), "2001:db8::7:12345",
           "its source");
    is_str(text(&pp.dst), strlen(text(&pp.dst)), "2001:db8::1:80",
           "its destination");

    n = v2(b, 0, 0x11, a4, sizeof(a4), 0);
    is_int(parse(b, n), (ssize_t) n, "v2 LOCAL (a health check)");
    is_int(pp.src.ss_family, 0, "LOCAL: no address");
    n = v2(b, 1, 0x00, a4, 0, 0);
    is_int(parse(b, n), 16, "v2 PROXY UNSPEC");
    is_int(pp.src.ss_family, 0, "UNSPEC: no address");

    n = v2(b, 1, 0x11, a4, 8, 0);
    is_int(parse(b, n), -1, "TCP4 with 8 bytes of addresses: refused");
    n = v2(b, 1, 0x21, a6, 20, 0);
    is_int(parse(b, n), -1, "TCP6 with 20: refused");
    n = v2(b, 2, 0x11, a4, sizeof(a4), 0);
    is_int(parse(b, n), -1, "command 2: refused");
    n = v2(b, 1, 0x41, a4, sizeof(a4), 0);
    is_int(parse(b, n), -1, "family 4: refused");
    n = v2(b, 1, 0x1f, a4, sizeof(a4), 0);
    is_int(parse(b, n), -1, "transport 15: refused");
    n = v2(b, 1, 0x12, a4, sizeof(a4), 0);
    is_int(parse(b, n), (ssize_t) n, "TCP4 over DGRAM: its address taken");
    n = v2(b, 1, 0x11, a4, sizeof(a4), 0);
    b[12] = 0x11;
    is_int(parse(b, n), -1, "version 1 in a v2 signature: refused");
    n = v2(b, 1, 0x11, a4, sizeof(a4), GN_PROXY_PROTOCOL_MAX);
    is_int(parse(b, 16), -1, "a length past the limit: refused at once");

    n = v2(b, 1, 0x11, a4, sizeof(a4), 0);
    b[5] = 0x0c;
    is_int(parse(b, 8), -1, "a broken signature: refused while cut");
    is_int(parse(b, 0), 0, "nothing yet: more");
}


int
main(void)
{
    test_v1();
    test_v1_long();
    test_v2();

    return done_testing();
}
