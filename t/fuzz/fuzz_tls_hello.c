/*
 * libFuzzer harness: the ClientHello reader of the TLS session cache's
 * memcached tier (gn_tls_hello_parse() in core/tls_hello.c), which reads
 * a client's bytes before GnuTLS does.
 *
 * Input: the first bytes of a TLS connection. On GN_OK the session id
 * (at most 32 bytes) and the name must lie inside the input; any prefix
 * of an input whose first record it ends must not parse (it waits for
 * more or is refused).
 */

#include "gn_config.h"

#include "tls_hello.h"

#define FZ_NAME  "fuzz_tls_hello"
#include "fz.h"


static int
fz_inside(const u_char *p, size_t n, const uint8_t *data, size_t size)
{
    return p >= data && n <= size && (size_t) (p - data) <= size - n;
}


int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gn_tls_hello_t  h, h2;
    gn_int_t        rc;

    rc = gn_tls_hello_parse(data, size, &h);
    fz_check(rc == GN_OK || rc == GN_AGAIN || rc == GN_DECLINED,
             "a known result");

    if (rc != GN_OK) {
        return 0;
    }

    fz_check(h.sid_len <= 32, "a session id of at most 32 bytes");
    fz_check((h.sid == NULL) == (h.sid_len == 0), "an id, or none");
    if (h.sid != NULL) {
        fz_check(fz_inside(h.sid, h.sid_len, data, size), "id inside");
    }
    if (h.sni != NULL) {
        fz_check(h.sni_len > 0, "a name is not empty");
        fz_check(fz_inside(h.sni, h.sni_len, data, size), "name inside");
    }

    /* one byte less of a record that ends the input: the record is cut,
     * so never a hello */
    if (size == 5 + ((size_t) data[3] << 8 | data[4])) {
        fz_check(gn_tls_hello_parse(data, size - 1, &h2) != GN_OK,
                 "a cut record does not parse");
    }

    return 0;
}
