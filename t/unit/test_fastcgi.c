/*
 * Unit tests for the FastCGI records (core/fastcgi.c): what a request is
 * made of, byte for byte as the specification lays records out, and the
 * decoding of a responder's records whole and split at every byte, with
 * padding, STDERR, management records and the errors.
 */

#include "gn_config.h"

#include "fastcgi.h"
#include "../tap.h"


/* A record as a responder writes it. */
static size_t
rec(u_char *p, unsigned type, unsigned id, const char *content, size_t len,
    size_t pad)
{
    p[0] = 1;
    p[1] = (u_char) type;
    p[2] = (u_char) (id >> 8);
    p[3] = (u_char) id;
    p[4] = (u_char) (len >> 8);
    p[5] = (u_char) len;
    p[6] = (u_char) pad;
    p[7] = 0;
    memcpy(p + 8, content, len);
    memset(p + 8 + len, 0xee, pad);
    return 8 + len + pad;
}


static u_char  err_seen[256];
static size_t  err_len;

static void
on_stderr(void *data, const u_char *p, size_t len)
{
    (void) data;
    if (err_len + len <= sizeof(err_seen)) {
        memcpy(err_seen + err_len, p, len);
        err_len += len;
    }
}


static void
test_request(void)
{
    u_char   buf[80000], big[70000];
    size_t   n;

    is_int(gn_fcgi_begin(buf, 1) - buf, 16, "BEGIN_REQUEST: 16 bytes");
    ok(memcmp(buf, "\1\1\0\1\0\10\0\0\0\1\1\0\0\0\0\0", 16) == 0,
       "... version 1, id 1, body of 8: responder, FCGI_KEEP_CONN");
    (void) gn_fcgi_begin(buf, 0);
    is_int(buf[10], 0, "... no FCGI_KEEP_CONN when not kept");

    is_int(gn_fcgi_pair_len(NULL, 5, 127), 2, "pair lengths: 1 + 1 bytes");
    is_int(gn_fcgi_pair_len(buf, 200, 70000), 8, "pair lengths: 4 + 4");
    ok(memcmp(buf, "\x80\0\0\xc8\x80\1\x11\x70", 8) == 0,
       "... with the high bit, big-endian");
    is_int(gn_fcgi_pair_len(buf, 128, 3), 5, "pair lengths: 4 + 1");
    ok(memcmp(buf, "\x80\0\0\x80\3", 5) == 0, "... 128 takes 4 bytes");

    n = gn_fcgi_stream(buf, GN_FCGI_STDIN, NULL, 0, 1);
    is_int(n, 8, "an empty stream: its end record only");
    ok(memcmp(buf, "\1\5\0\1\0\0\0\0", 8) == 0, "... STDIN, length 0");

    n = gn_fcgi_stream(buf, GN_FCGI_PARAMS, (const u_char *) "0123456789",
                       10, 1);
    is_int(n, 8 + 10 + 6 + 8, "10 bytes: padded to 16, then the end");
    is_int(gn_fcgi_stream(NULL, GN_FCGI_PARAMS, (const u_char *) "x", 10,
                          1), n, "... measured as written");
    is_int(gn_fcgi_stream(NULL, GN_FCGI_STDIN, (const u_char *) "x", 10, 0),
           n - 8, "... without its end record: a piece of a stream");
    is_int(gn_fcgi_stream(NULL, GN_FCGI_STDIN, NULL, 0, 0), 0,
           "... an empty piece: nothing");
    ok(buf[4] == 0 && buf[5] == 10 && buf[6] == 6
       && memcmp(buf + 8, "0123456789", 10) == 0,
       "... length 10, padding 6, the content");
    ok(memcmp(buf + 24, "\1\4\0\1\0\0\0\0", 8) == 0, "... the end record");

    memset(big, 'b', sizeof(big));
    n = gn_fcgi_stream(buf, GN_FCGI_STDIN, big, sizeof(big), 1);
    is_int(n, 8 + 65528 + 8 + 4472 + 8, "70000 bytes: two records and "
           "the end");
    ok(buf[4] == 0xff && buf[5] == 0xf8 && buf[6] == 0,
       "... the first of 65528 bytes, unpadded");
    ok(buf[8 + 65528 + 4] == 0x11 && buf[8 + 65528 + 5] == 0x78,
       "... the second of the 4472 left");
}


/* The responder's side of one request, and what it decodes to. */
static size_t
responder(u_char *p)
{
    size_t  n = 0;

    n += rec(p + n, GN_FCGI_STDOUT, 1, "Status: 200\r\n\r\nhel", 18, 6);
    n += rec(p + n, GN_FCGI_STDERR, 1, "a warning", 9, 0);
    n += rec(p + n, 10, 0, "\3\0ABC", 5, 3);        /* GET_VALUES_RESULT */
    n += rec(p + n, GN_FCGI_STDOUT, 1, "lo", 2, 1);
    n += rec(p + n, GN_FCGI_STDERR, 1, "", 0, 0);
    n += rec(p + n, GN_FCGI_STDOUT, 1, "", 0, 0);
    n += rec(p + n, GN_FCGI_END_REQUEST, 1, "\0\0\0\7\0\0\0\0", 8, 0);
    return n;
}


static void
test_decode(void)
{
    u_char          buf[512], out[512];
    gn_fcgi_dec_t   d;
    size_t          n, i, o, got, rest, olen;
    const char     *why;
    gn_int_t        rc;

    /* whole */
    n = responder(buf);
    memcpy(buf + n, "more", 4);
    memset(&d, 0, sizeof(d));
    err_len = 0;
    rc = gn_fcgi_decode(&d, buf, n + 4, &got, &rest, on_stderr, NULL, &why);
    is_int(rc, GN_DONE, "whole: the end of the request");
    is_str(buf, got, "Status: 200\r\n\r\nhello", "... STDOUT in place");
    is_str(err_seen, err_len, "a warning", "... STDERR to its callback");
    is_int(rest, 4, "... the bytes after END_REQUEST counted");
    is_int(d.app_status, 7, "... the application's status");
    is_int(d.protocol_status, GN_FCGI_REQUEST_COMPLETE, "... complete");
    ok(d.stdout_ended, "... STDOUT's end seen");

    /* byte by byte: the same */
    n = responder(buf);
    memset(&d, 0, sizeof(d));
    err_len = 0;
    olen = 0;
    rc = GN_OK;
    for (i = 0, o = 0; i < n && rc == GN_OK; i++) {
        rc = gn_fcgi_decode(&d, buf + i, 1, &got, &rest, on_stderr, NULL,
                            &why);
        memcpy(out + olen, buf + i, got);
        olen += got;
        o += got > 1;
    }
    is_int(rc, GN_DONE, "byte by byte: the end of the request");
    is_int(i, n, "... at its last byte");
    is_int(o, 0, "... never more than the byte given");
    is_str(out, olen, "Status: 200\r\n\r\nhello", "... the same STDOUT");
    is_str(err_seen, err_len, "a warning", "... and STDERR");

    /* every split in two */
    for (i = 1, o = 0; i < n; i++) {
        n = responder(buf);
        memset(&d, 0, sizeof(d));
        err_len = 0;
        rc = gn_fcgi_decode(&d, buf, i, &got, &rest, on_stderr, NULL, &why);
        memcpy(out, buf, got);
        olen = got;
        if (rc == GN_OK) {
            rc = gn_fcgi_decode(&d, buf + i, n - i, &got, &rest, on_stderr,
                                NULL, &why);
            memcpy(out + olen, buf + i, got);
            olen += got;
        }
        o += rc == GN_DONE && rest == 0 && olen == 20
             && memcmp(out, "Status: 200\r\n\r\nhello", 20) == 0
             && err_len == 9;
    }
    is_int(o, n - 1, "split anywhere in two: the same");
}


static void
test_errors(void)
{
    u_char          buf[256];
    gn_fcgi_dec_t   d;
    size_t          n, got, rest;
    const char     *why;

    n = rec(buf, GN_FCGI_STDOUT, 1, "x", 1, 0);
    buf[0] = 2;
    memset(&d, 0, sizeof(d));
    why = NULL;
    is_int(gn_fcgi_decode(&d, buf, n, &got, &rest, on_stderr, NULL, &why),
           GN_ERROR, "version 2: an error");
    ok(why != NULL, "... with a reason");

    n = rec(buf, GN_FCGI_STDOUT, 2, "x", 1, 0);
    memset(&d, 0, sizeof(d));
    is_int(gn_fcgi_decode(&d, buf, n, &got, &rest, on_stderr, NULL, &why),
           GN_ERROR, "STDOUT of request 2: an error");

    n = rec(buf, GN_FCGI_END_REQUEST, 1, "\0\0\0\0", 4, 4);
    memset(&d, 0, sizeof(d));
    is_int(gn_fcgi_decode(&d, buf, n, &got, &rest, on_stderr, NULL, &why),
           GN_ERROR, "END_REQUEST of 4 bytes: an error");

    n = rec(buf, GN_FCGI_STDOUT, 1, "", 0, 0);
    n += rec(buf + n, GN_FCGI_STDOUT, 1, "late", 4, 4);
    memset(&d, 0, sizeof(d));
    is_int(gn_fcgi_decode(&d, buf, n, &got, &rest, on_stderr, NULL, &why),
           GN_ERROR, "STDOUT after its end: an error");

    n = rec(buf, GN_FCGI_STDIN, 9, "ignored", 7, 1);
    n += rec(buf + n, GN_FCGI_STDOUT, 1, "ok", 2, 6);
    memset(&d, 0, sizeof(d));
    is_int(gn_fcgi_decode(&d, buf, n, &got, &rest, on_stderr, NULL, &why),
           GN_OK, "a record of a type not answered is skipped");
    is_str(buf, got, "ok", "... and what follows it decoded");

    n = rec(buf, GN_FCGI_END_REQUEST, 1, "\0\0\0\0\2\0\0\0", 8, 0);
    memset(&d, 0, sizeof(d));
    is_int(gn_fcgi_decode(&d, buf, n, &got, &rest, on_stderr, NULL, &why),
           GN_DONE, "END_REQUEST alone: done");
    is_int(d.protocol_status, 2, "... its protocol status (overloaded)");
    is_int(got, 0, "... no STDOUT");
}


int
main(void)
{
    test_request();
    test_decode();
    test_errors();

    return done_testing();
}
