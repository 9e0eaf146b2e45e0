/*
 * The PROXY protocol, versions 1 and 2 (proxy_protocol.h): the parser.
 * Reading it off a connection is conn.c's.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "proxy_protocol.h"


#define GN_PP_V1_MAX   107               /* with its CRLF */

static const u_char  gn_pp_v2_sig[12] = {
    0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};


/* An IPv4 or IPv6 address, as text of len bytes, into *ss. */
static gn_int_t
gn_pp_addr(const u_char *p, size_t len, int family,
    struct sockaddr_storage *ss)
{
    char                  text[INET6_ADDRSTRLEN];
    struct sockaddr_in   *sin = (struct sockaddr_in *) ss;
    struct sockaddr_in6  *sin6 = (struct sockaddr_in6 *) ss;

    if (len == 0 || len >= sizeof(text)) {
        return GN_ERROR;
    }
    memcpy(text, p, len);
    text[len] = '\0';

    if (family == AF_INET) {
        sin->sin_family = AF_INET;
        return inet_pton(AF_INET, text, &sin->sin_addr) == 1
               ? GN_OK : GN_ERROR;
    }
    sin6->sin6_family = AF_INET6;
    return inet_pton(AF_INET6, text, &sin6->sin6_addr) == 1
           ? GN_OK : GN_ERROR;
}


/* A port, 0 .. 65535 in decimal without a leading zero (the spec's
 * form), into *ss's port field. */
static gn_int_t
gn_pp_port(const u_char *p, size_t len, struct sockaddr_storage *ss)
{
    gn_uint_t  port = 0;
    size_t     i;

    if (len == 0 || len > 5 || (len > 1 && p[0] == '0')) {
        return GN_ERROR;
    }
    for (i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return GN_ERROR;
        }
        port = port * 10 + (gn_uint_t) (p[i] - '0');
    }
    if (port > 65535) {
        return GN_ERROR;
    }

    if (ss->ss_family == AF_INET) {
        ((struct sockaddr_in *) ss)->sin_port = htons((uint16_t) port);
    } else {
        ((struct sockaddr_in6 *) ss)->sin6_port = htons((uint16_t) port);
    }
    return GN_OK;
}


/* "PROXY TCP4 src dst sport dport\r\n", TCP6, or "PROXY UNKNOWN ...". */
static ssize_t
gn_pp_v1(const u_char *buf, size_t len, gn_proxy_protocol_t *pp,
    const char **err)
{
    const u_char  *end, *p, *f[4];
    size_t         n, flen[4], i;
    int            family;

    n = gn_min(len, GN_PP_V1_MAX);
    if (memcmp(buf, "PROXY ", gn_min(n, 6)) != 0) {
        *err = "not a PROXY protocol header";
        return -1;
    }

    end = NULL;
    for (i = 0; i < n; i++) {
        if (buf[i] == '\r' && i + 1 < n && buf[i + 1] == '\n') {
            end = buf + i;
            break;
        }
        if (buf[i] == '\n' || buf[i] == '\0'
            || (buf[i] == '\r' && i + 1 < n))
        {
            *err = "a broken version 1 header";
            return -1;
        }
    }
    if (end == NULL) {
        if (len >= GN_PP_V1_MAX) {
            *err = "a version 1 header longer than 107 bytes";
            return -1;
        }
        return 0;
    }

    pp->version = 1;
    p = buf + 6;

    if (end - p >= 7 && memcmp(p, "UNKNOWN", 7) == 0
        && (end - p == 7 || p[7] == ' '))
    {
        return end + 2 - buf;          /* the rest is to be ignored */
    }

    if (end - p < 5 || (memcmp(p, "TCP4 ", 5) != 0
                        && memcmp(p, "TCP6 ", 5) != 0))
    {
        *err = "a version 1 header of an unknown protocol";
        return -1;
    }
    family = p[3] == '4' ? AF_INET : AF_INET6;
    p += 5;

    /* four fields, one space between them */
    for (i = 0; i < 4; i++) {
        f[i] = p;
        while (p < end && *p != ' ') {
            p++;
        }
        flen[i] = (size_t) (p - f[i]);
        if (i < 3) {
            if (p == end) {
                *err = "a version 1 header with fields missing";
                return -1;
            }
            p++;
        }
    }
    if (p != end) {
        *err = "a version 1 header with fields missing";
        return -1;
    }

    if (gn_pp_addr(f[0], flen[0], family, &pp->src) != GN_OK
        || gn_pp_addr(f[1], flen[1], family, &pp->dst) != GN_OK
        || gn_pp_port(f[2], flen[2], &pp->src) != GN_OK
        || gn_pp_port(f[3], flen[3], &pp->dst) != GN_OK)
    {
        memset(&pp->src, 0, sizeof(pp->src));
        memset(&pp->dst, 0, sizeof(pp->dst));
        *err = "a version 1 header with an invalid address or port";
        return -1;
    }

    return end + 2 - buf;
}


/* The 16-byte header, then the addresses (and TLVs, skipped). */
static ssize_t
gn_pp_v2(const u_char *buf, size_t len, gn_proxy_protocol_t *pp,
    const char **err)
{
    struct sockaddr_in   *s4, *d4;
    struct sockaddr_in6  *s6, *d6;
    const u_char         *a;
    size_t                hlen, total;
    u_char                cmd, fam;

    if (memcmp(buf, gn_pp_v2_sig, gn_min(len, sizeof(gn_pp_v2_sig)))
        != 0)
    {
        *err = "not a PROXY protocol header";
        return -1;
    }
    if (len < 16) {
        return 0;
    }

    if ((buf[12] >> 4) != 2) {
        *err = "a version 2 signature with another version";
        return -1;
    }
    cmd = buf[12] & 0x0f;
    if (cmd > 1) {
        *err = "a version 2 header with an unknown command";
        return -1;
    }

    fam = buf[13];
    hlen = ((size_t) buf[14] << 8) | buf[15];
    total = 16 + hlen;
    if (total > GN_PROXY_PROTOCOL_MAX) {
        *err = "a version 2 header longer than it may be";
        return -1;
    }
    if (len < total) {
        return 0;
    }

    pp->version = 2;
    if (cmd == 0) {
        return (ssize_t) total;         /* LOCAL: the balancer's own */
    }

    /* the transport: UNSPEC, STREAM or DGRAM; others are undefined */
    if ((fam & 0x0f) > 2) {
        pp->version = 0;
        *err = "a version 2 header of an unknown transport";
        return -1;
    }

    a = buf + 16;

    switch (fam >> 4) {

    case 1:                             /* AF_INET */
        if (hlen < 12) {
            *err = "a version 2 header too short for its addresses";
            return -1;
        }
        s4 = (struct sockaddr_in *) &pp->src;
        d4 = (struct sockaddr_in *) &pp->dst;
        s4->sin_family = d4->sin_family = AF_INET;
        memcpy(&s4->sin_addr, a, 4);
        memcpy(&d4->sin_addr, a + 4, 4);
        memcpy(&s4->sin_port, a + 8, 2);
        memcpy(&d4->sin_port, a + 10, 2);
        break;

    case 2:                             /* AF_INET6 */
        if (hlen < 36) {
            *err = "a version 2 header too short for its addresses";
            return -1;
        }
        s6 = (struct sockaddr_in6 *) &pp->src;
        d6 = (struct sockaddr_in6 *) &pp->dst;
        s6->sin6_family = d6->sin6_family = AF_INET6;
        memcpy(&s6->sin6_addr, a, 16);
        memcpy(&d6->sin6_addr, a + 16, 16);
        memcpy(&s6->sin6_port, a + 32, 2);
        memcpy(&d6->sin6_port, a + 34, 2);
        break;

    case 0:                             /* AF_UNSPEC */
    case 3:                             /* AF_UNIX: no address of ours */
        break;

    default:
        *err = "a version 2 header of an unknown address family";
        return -1;
    }

    return (ssize_t) total;
}


ssize_t
gn_proxy_protocol_parse(const u_char *buf, size_t len,
    gn_proxy_protocol_t *pp, const char **err)
{
    memset(pp, 0, sizeof(*pp));
    *err = NULL;

    if (len == 0) {
        return 0;
    }
    if (buf[0] == 'P') {
        return gn_pp_v1(buf, len, pp, err);
    }
    if (buf[0] == 0x0d) {
        return gn_pp_v2(buf, len, pp, err);
    }

    *err = "not a PROXY protocol header";
    return -1;
}
