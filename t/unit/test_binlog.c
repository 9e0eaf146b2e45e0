/*
 * Binary access log records (core/binlog.c): encode then decode gives
 * the record back; every truncation of a record asks for more bytes and
 * a file ending there is refused; a foreign or newer header is refused;
 * caps; the text escapers; syslog line format (core/errlog.c).
 */

#include "gn_config.h"

#include "binlog.h"
#include "errlog.h"
#include "../tap.h"


static void
fill(gn_binlog_rec_t *rec)
{
    static u_char  v4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
                              192, 0, 2, 7 };

    memset(rec, 0, sizeof(*rec));
    rec->sec = 1796050000;
    rec->msec = 987;
    rec->status = 404;
    rec->method = gn_binlog_method_id(0x0002);           /* GN_HTTP_GET */
    rec->version = 11;
    rec->tls = GN_BINLOG_TLS_13 | GN_BINLOG_TLS_RESUMED;
    memcpy(rec->addr, v4, 16);
    rec->bytes_sent = 0x1122334455ULL;
    rec->body_bytes = 12345;
    rec->request_time = 70000;
    rec->pid = 4242;
    gn_str_set(&rec->str[GN_BINLOG_HOST], "example.com");
    gn_str_set(&rec->str[GN_BINLOG_TARGET], "/a?b=c");
    gn_str_set(&rec->str[GN_BINLOG_USER_AGENT], "curl/8 \"x\"");
}


static int
rec_eq(const gn_binlog_rec_t *a, const gn_binlog_rec_t *b)
{
    gn_uint_t  i;

    if (a->sec != b->sec || a->msec != b->msec || a->status != b->status
        || a->method != b->method || a->version != b->version
        || a->tls != b->tls || memcmp(a->addr, b->addr, 16) != 0
        || a->bytes_sent != b->bytes_sent || a->body_bytes != b->body_bytes
        || a->request_time != b->request_time || a->pid != b->pid)
    {
        return 0;
    }

    for (i = 0; i < GN_BINLOG_NSTR; i++) {
        if (a->str[i].len != b->str[i].len
            || (a->str[i].len
                && memcmp(a->str[i].data, b->str[i].data, a->str[i].len)))
        {
            return 0;
        }
    }

    return 1;
}


static void
test_roundtrip(void)
{
    gn_binlog_rec_t  rec, out;
    u_char           buf[GN_BINLOG_RECORD_MAX], *end;
    size_t           n, used, cut;
    gn_int_t         rc;
    char             err[160];
    int              again;

    fill(&rec);
    n = gn_binlog_size(&rec);
    is_int(n, GN_BINLOG_FIXED_SIZE + 5 * 2 + 11 + 6 + 10, "encoded size");

    end = gn_binlog_encode(buf, &rec);
    is_int(end - buf, n, "encode writes gn_binlog_size() bytes");
    is_int(buf[0] | buf[1] << 8, n, "record length first, little-endian");
    is_int(buf[6] | buf[7] << 8, 404, "status at offset 6");
    is_int(buf[18], 1, "GET has method id 1");

    rc = gn_binlog_decode(buf, n, &out, &used, err,
                          sizeof(err));
    is_int(rc, GN_OK, "decode");
    is_int(used, n, "decode uses the whole record");
    ok(rec_eq(&rec, &out), "decode(encode(rec)) == rec");

    /* every truncation asks for more; none decodes */
    again = 1;
    for (cut = 0; cut < n; cut++) {
        if (gn_binlog_decode(buf, cut, &out, &used, err, sizeof(err))
            != GN_AGAIN)
        {
            again = 0;
            diag("cut at %zu did not give GN_AGAIN", cut);
        }
    }
    ok(again, "every truncated record gives GN_AGAIN");

    /* a record whose strings overrun its length is corrupt */
    buf[GN_BINLOG_FIXED_SIZE] = 200;
    rc = gn_binlog_decode(buf, n, &out, &used, err, sizeof(err));
    is_int(rc, GN_ERROR, "string overrunning the record: error");
    ok(strstr(err, "corrupt record") != NULL, "... message: %s", err);

    /* an absurd length is refused at once, not waited for */
    buf[0] = buf[1] = buf[2] = buf[3] = 0xff;
    rc = gn_binlog_decode(buf, 8, &out, &used, err, sizeof(err));
    is_int(rc, GN_ERROR, "absurd record length: error");
}


static void
test_caps(void)
{
    static u_char    big[GN_BINLOG_STR_MAX + 100];
    gn_binlog_rec_t  rec, out;
    u_char           buf[GN_BINLOG_RECORD_MAX];
    size_t           used;
    char             err[160];

    memset(big, 'a', sizeof(big));
    fill(&rec);
    rec.method = 0;
    gn_str_set(&rec.str[GN_BINLOG_METHOD], "BREW");
    rec.str[GN_BINLOG_REFERER].data = big;
    rec.str[GN_BINLOG_REFERER].len = sizeof(big);

    (void) gn_binlog_encode(buf, &rec);
    is_int(gn_binlog_decode(buf, sizeof(buf), &out, &used, err,
                            sizeof(err)), GN_OK, "capped record decodes");
    is_int(out.str[GN_BINLOG_REFERER].len, GN_BINLOG_STR_MAX,
           "a long string is capped at GN_BINLOG_STR_MAX");
    is_str((char *) out.str[GN_BINLOG_METHOD].data,
           out.str[GN_BINLOG_METHOD].len, "BREW", "unknown method by name");
    ok(gn_binlog_method_name(0) == NULL, "id 0 has no name");
    is_str(gn_binlog_method_name(9), 5, "PATCH", "id 9 is PATCH");
}


static void
test_header(void)
{
    u_char  h[GN_BINLOG_HEADER_SIZE];
    char    err[160];

    gn_binlog_header(h);
    ok(memcmp(h, "GNBLOG", 6) == 0, "header magic");
    is_int(gn_binlog_check_header(h, sizeof(h), err, sizeof(err)), GN_OK,
           "own header accepted");
    is_int(gn_binlog_check_header(h, 10, err, sizeof(err)), GN_AGAIN,
           "short header: GN_AGAIN");

    h[0] = 'X';
    is_int(gn_binlog_check_header(h, sizeof(h), err, sizeof(err)), GN_ERROR,
           "bad magic rejected");
    is_str(err, strlen(err), "not a gannet binary log", "bad magic message");

    gn_binlog_header(h);
    h[6] = 2;
    is_int(gn_binlog_check_header(h, sizeof(h), err, sizeof(err)), GN_ERROR,
           "newer version rejected");
    ok(strncmp(err, "unsupported format version 2", 28) == 0,
       "newer version message: %s", err);

    gn_binlog_header(h);
    h[8] = 1;
    is_int(gn_binlog_check_header(h, sizeof(h), err, sizeof(err)), GN_ERROR,
           "bad byte order marker rejected");
}


static void
test_escape_and_text(void)
{
    u_char  out[64];
    char    addr[64], line[256];
    size_t  n;
    u_char  v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                       0, 1 };

    n = gn_binlog_escape(out, (u_char *) "a\"b\\c\x01\xc3", 7,
                         GN_BINLOG_ESC_DEFAULT);
    is_str((char *) out, n, "a\\x22b\\x5Cc\\x01\\xC3", "default escape");
    n = gn_binlog_escape(out, (u_char *) "a\"b\\c\x01\xc3", 7,
                         GN_BINLOG_ESC_JSON);
    is_str((char *) out, n, "a\\\"b\\\\c\\u0001\\ufffd",
           "json escape: a lone 0xC3 is U+FFFD");
    {
        static const struct {
            const char  *in, *out, *what;
        } u8[] = {
            { "caf\xc3\xa9", "caf\xc3\xa9", "2-byte UTF-8 unchanged" },
            { "\xe2\x82\xac!", "\xe2\x82\xac!", "3-byte UTF-8 unchanged" },
            { "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80",
              "4-byte UTF-8 unchanged" },
            { "\x7f", "\x7f", "DEL needs no escape" },
            { "\xc0\xaf", "\\ufffd\\ufffd", "overlong: one U+FFFD a byte" },
            { "\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd", "a surrogate" },
            { "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd",
              "above U+10FFFF" },
            { "a\xe2\x82", "a\\ufffd\\ufffd", "cut at the end" },
            { "\xf5x", "\\ufffdx", "0xF5 is never UTF-8" },
            { "\n\t", "\\u000A\\u0009", "control characters" },
        };
        size_t  k, m;

        for (k = 0; k < sizeof(u8) / sizeof(u8[0]); k++) {
            m = strlen(u8[k].in);
            n = gn_binlog_escape(out, (const u_char *) u8[k].in, m,
                                 GN_BINLOG_ESC_JSON);
            is_str((char *) out, n, u8[k].out, "json: %s", u8[k].what);
            is_int(gn_binlog_escape(NULL, (const u_char *) u8[k].in, m,
                                    GN_BINLOG_ESC_JSON), n,
                   "json: %s: measured as written", u8[k].what);
        }
    }
    n = gn_binlog_escape(out, NULL, 0, GN_BINLOG_ESC_DEFAULT);
    is_str((char *) out, n, "-", "absent: -");
    is_int(gn_binlog_escape(out, NULL, 0, GN_BINLOG_ESC_JSON), 0,
           "absent in json: empty");
    is_int(gn_binlog_escape(NULL, (u_char *) "\"", 1, GN_BINLOG_ESC_JSON), 2,
           "measure only");

    gn_binlog_addr_text(v6, addr, sizeof(addr));
    is_str(addr, strlen(addr), "2001:db8::1", "IPv6 address text");

    n = gn_errlog_syslog_format(line, sizeof(line), 23, 4 /* error */,
                                "gannet", 0, 77, "[error] x", 9);
    ok(n > 0 && strncmp(line, "<187>", 5) == 0, "syslog PRI local7.err");
    ok(strstr(line, " gannet[77]: [error] x") != NULL
       && line[8] == ' ' && line[14] == ':',
       "syslog line: %s", line);
}


int
main(void)
{
    test_roundtrip();
    test_caps();
    test_header();
    test_escape_and_text();

    return done_testing();
}
