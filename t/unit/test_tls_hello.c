/*
 * Unit tests for the ClientHello reader of the memcached tier: real
 * hellos of openssl (TLS 1.2 resuming a session id; TLS 1.3 with its
 * random legacy id), hand-made ones for the session ticket and the
 * version list, every truncation of a real one, a hello split over two
 * records, and malformed lengths.
 */

#include "gn_config.h"

#include "tls_hello.h"
#include "../tap.h"

#include "tls_hello_data.h"


/* A ClientHello record: sid, then the extensions block exts[0..elen). */
static size_t
build(u_char *b, const u_char *sid, size_t slen, const u_char *exts,
    size_t elen)
{
    size_t  n = 0, body;

    b[n++] = 22;
    b[n++] = 3;
    b[n++] = 1;
    n += 2;                                 /* record length */
    b[n++] = 1;
    n += 3;                                 /* handshake length */
    b[n++] = 3;
    b[n++] = 3;
    memset(b + n, 0xab, 32);
    n += 32;
    b[n++] = (u_char) slen;
    memcpy(b + n, sid, slen);
    n += slen;
    b[n++] = 0;                             /* one cipher suite */
    b[n++] = 2;
    b[n++] = 0xc0;
    b[n++] = 0x2b;
    b[n++] = 1;                             /* null compression */
    b[n++] = 0;
    if (elen) {
        b[n++] = (u_char) (elen >> 8);
        b[n++] = (u_char) elen;
        memcpy(b + n, exts, elen);
        n += elen;
    }

    b[3] = (u_char) ((n - 5) >> 8);
    b[4] = (u_char) (n - 5);
    body = n - 9;
    b[6] = 0;
    b[7] = (u_char) (body >> 8);
    b[8] = (u_char) body;

    return n;
}


int
main(void)
{
    static const u_char  sid[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    static const u_char  ticket[] = {
        0, 35, 0, 4, 0xde, 0xad, 0xbe, 0xef,        /* session_ticket */
        0, 43, 0, 3, 2, 3, 3,                       /* TLS 1.2 only */
        0, 0, 0, 11, 0, 9, 0, 0, 6, 'a', '.', 't', 'e', 's', 't'
    };
    static const u_char  empty_ticket[] = { 0, 35, 0, 0 };
    static const u_char  bad_ext[] = { 0, 35, 0, 9, 1 };
    static const u_char  bad_sni[] = { 0, 0, 0, 5, 0, 3, 0, 0, 9 };
    gn_tls_hello_t       h;
    u_char               b[1024];
    size_t               n, i, wrong;
    gn_int_t             rc;

    is_int(gn_tls_hello_parse(hello12, hello12_len, &h), GN_OK,
           "openssl TLS 1.2 hello parses");
    is_int(h.sid_len, 32, "its session id has 32 bytes");
    ok(h.sid == hello12 + 44, "the id is where the hello has it");
    is_str(h.sni, h.sni_len, "localhost", "its name");
    ok(!h.tls13 && !h.ticket, "no TLS 1.3 offered, no ticket");

    is_int(gn_tls_hello_parse(hello13, hello13_len, &h), GN_OK,
           "openssl TLS 1.3 hello parses");
    ok(h.tls13, "it offers TLS 1.3");
    is_int(h.sid_len, 32, "with a legacy session id");

    wrong = 0;
    for (i = 0; i < hello12_len; i++) {
        rc = gn_tls_hello_parse(hello12, i, &h);
        wrong += rc != GN_AGAIN;
    }
    is_int(wrong, 0, "every truncation of it waits for the rest");

    n = build(b, sid, sizeof(sid), ticket, sizeof(ticket));
    is_int(gn_tls_hello_parse(b, n, &h), GN_OK, "hand-made hello parses");
    ok(h.ticket && !h.tls13, "a session ticket, TLS 1.2 only");
    is_str(h.sni, h.sni_len, "a.test", "its name");
    ok(h.sid != NULL && memcmp(h.sid, sid, 32) == 0, "its session id");

    n = build(b, sid, 0, empty_ticket, sizeof(empty_ticket));
    is_int(gn_tls_hello_parse(b, n, &h), GN_OK, "no id, empty ticket");
    ok(h.sid == NULL && h.sid_len == 0 && !h.ticket,
       "no id, and an empty ticket extension is no ticket");
    ok(h.sni == NULL, "no name");

    n = build(b, sid, 16, NULL, 0);
    is_int(gn_tls_hello_parse(b, n, &h), GN_OK, "no extensions at all");
    is_int(h.sid_len, 16, "a 16-byte id");

    /* the hello claims more than its record holds: the next record has
     * the rest */
    n = build(b, sid, 32, ticket, sizeof(ticket));
    b[8] += 20;
    is_int(gn_tls_hello_parse(b, n, &h), GN_AGAIN, "hello over 2 records");

    n = build(b, sid, 32, NULL, 0);
    b[43] = 33;
    is_int(gn_tls_hello_parse(b, n, &h), GN_DECLINED, "a 33-byte id");

    n = build(b, sid, 32, bad_ext, sizeof(bad_ext));
    is_int(gn_tls_hello_parse(b, n, &h), GN_DECLINED,
           "an extension longer than the block");

    n = build(b, sid, 32, bad_sni, sizeof(bad_sni));
    is_int(gn_tls_hello_parse(b, n, &h), GN_DECLINED,
           "a name longer than its extension");

    memcpy(b, hello12, hello12_len);
    b[0] = 23;
    is_int(gn_tls_hello_parse(b, hello12_len, &h), GN_DECLINED,
           "not a handshake record");
    memcpy(b, hello12, hello12_len);
    b[5] = 2;
    is_int(gn_tls_hello_parse(b, hello12_len, &h), GN_DECLINED,
           "not a ClientHello");

    return tap_done_testing();
}
