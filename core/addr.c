/*
 * Peer addresses (addr.h).
 */

#include "gn_config.h"

#include <netdb.h>
#include <sys/un.h>

#include "addr.h"
#include "str.h"


const char *
gn_addr_parse(gn_addr_t *a, const gn_str_t *text,
    gn_uint_t unix_ok)
{
    struct addrinfo      hints, *res;
    struct sockaddr_un  *sun;
    char                 host[256], port[8];
    const u_char        *p, *colon;
    size_t               hlen, plen;
    int                  rc;

    memset(a, 0, sizeof(gn_addr_t));
    a->name = *text;
    p = text->data;

    if (unix_ok && text->len > 5 && memcmp(p, "unix:", 5) == 0) {
        sun = (struct sockaddr_un *) &a->sa;
        if (text->len - 5 >= sizeof(sun->sun_path)) {
            return "unix socket path too long";
        }
        if (p[5] != '/') {
            /* a child's working directory is "/": say what is meant */
            return "a unix socket path must be absolute";
        }
        sun->sun_family = AF_UNIX;
        memcpy(sun->sun_path, p + 5, text->len - 5);
        a->socklen = (socklen_t) sizeof(struct sockaddr_un);
        return NULL;
    }

    if (text->len > 0 && p[0] == '[') {
        colon = memchr(p, ']', text->len);
        if (colon == NULL || colon + 1 == p + text->len || colon[1] != ':') {
            return "expected [IPv6]:PORT";
        }
        p++;
        hlen = (size_t) (colon - p);
        colon++;
    } else {
        colon = memrchr(p, ':', text->len);
        if (colon == NULL) {
            return "expected HOST:PORT";
        }
        hlen = (size_t) (colon - p);
    }

    plen = (size_t) (text->data + text->len - (colon + 1));
    if (hlen == 0 || hlen >= sizeof(host) || plen == 0) {
        return "expected HOST:PORT";
    }
    memcpy(host, p, hlen);
    host[hlen] = '\0';

    rc = (int) gn_atoi(colon + 1, plen);
    if (plen > 5 || rc < 1 || rc > 65535) {
        return "invalid port";
    }
    snprintf(port, sizeof(port), "%d", rc);

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        return gai_strerror(rc);
    }
    memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
    a->socklen = res->ai_addrlen;
    freeaddrinfo(res);

    return NULL;
}
