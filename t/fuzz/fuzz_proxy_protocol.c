/*
 * libFuzzer harness: the PROXY protocol reader (gn_proxy_protocol_parse()
 * in core/proxy_protocol.c), which reads a connection's first bytes on a
 * `listen ... proxy_protocol` listener.
 *
 * Input: the first bytes of a connection. A header taken is at most
 * GN_PROXY_PROTOCOL_MAX bytes, within the input, and the same header is
 * taken from any longer input that starts with it; every shorter prefix
 * of it asks for more; a refusal names a reason and keeps no address.
 */

#include "gn_config.h"

#include "proxy_protocol.h"

#define FZ_NAME  "fuzz_proxy_protocol"
#include "fz.h"


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gn_proxy_protocol_t  pp, pp2;
    const char          *err;
    ssize_t              n, n2;
    size_t               i;

    n = gn_proxy_protocol_parse(data, size, &pp, &err);

    if (n < 0) {
        fz_check(err != NULL, "a refusal without a reason");
        fz_check(pp.src.ss_family == 0, "a refusal that kept an address");
        return 0;
    }
    if (n == 0) {
        fz_check(size < GN_PROXY_PROTOCOL_MAX, "more asked past the limit");
        return 0;
    }

    fz_check((size_t) n <= size, "a header past the input");
    fz_check(n <= GN_PROXY_PROTOCOL_MAX, "a header past the limit");
    fz_check(pp.version == 1 || pp.version == 2, "no version");
    fz_check(pp.src.ss_family == 0 || pp.src.ss_family == AF_INET
             || pp.src.ss_family == AF_INET6, "an odd address family");

    /* the header alone: the same */
    n2 = gn_proxy_protocol_parse(data, (size_t) n, &pp2, &err);
    fz_check(n2 == n, "the header alone is not the same header");
    fz_check(memcmp(&pp, &pp2, sizeof(pp)) == 0,
             "the header alone says something else");

    /* a few of its prefixes: more */
    for (i = 0; i < (size_t) n; i += 1 + (size_t) n / 16) {
        fz_check(gn_proxy_protocol_parse(data, i, &pp2, &err) == 0,
                 "a prefix of a header is not asked to go on");
    }

    return 0;
}
