/*
 * gn_http_parse_head_end(), gn_http_parse_head(), gn_http_header_find()
 * and gn_http_chunked_parse(): a table of request heads, each also fed to
 * the incremental scan one byte at a time and split at every offset, and
 * chunked bodies fed whole, split at every offset and byte by byte.
 *
 * Sources: t/unit/test_http_parse.c core/http_parse.c core/str.c
 * core/pool.c t/tap.c
 */

#include "gn_config.h"

#include "str.h"
#include "http_parse.h"
#include "../tap.h"


#define H(s)        s, sizeof(s) - 1
#define NOQ         NULL        /* no '?' in the target */
#define V10         GN_HTTP_VERSION_10
#define V11         GN_HTTP_VERSION_11
#define HOST        "Host: example.com\r\n"

#define LIM_DEF     0
#define LIM_SMALL   1


typedef struct {
    const char  *name;
    const char  *head;
    size_t       len;
    size_t       extra;         /* bytes after the head (a body) */
    int          lim;           /* LIM_DEF or LIM_SMALL */
    gn_int_t     end_rc;        /* gn_http_parse_head_end() */
    gn_int_t     rc;            /* gn_http_parse_head() on the whole head */
    gn_uint_t    method;
    const char  *path;
    const char  *query;
    gn_uint_t    version;
    const char  *host;
    off_t        content_length;
    gn_uint_t    chunked;
    gn_uint_t    keepalive;
} head_case_t;


static gn_http_limits_t  limits[] = {
    { 8192, 32768, 100, 8192 },
    { 32, 128, 4, 40 }          /* LIM_SMALL */
};


#define OKC(nm, hd, m, pa, q, v, ho, cl, ch, ka)                              \
    { nm, H(hd), 0, LIM_DEF, GN_OK, GN_OK, m, pa, q, v, ho, cl, ch, ka }
#define BAD(nm, hd, rc)                                                       \
    { nm, H(hd), 0, LIM_DEF, GN_OK, rc, 0, NULL, NULL, 0, NULL, 0, 0, 0 }
#define SCANBAD(nm, hd, lim, erc, rc)                                         \
    { nm, H(hd), 0, lim, erc, rc, 0, NULL, NULL, 0, NULL, 0, 0, 0 }
/* refused by the scan as soon as the request line ends */
#define LINEBAD(nm, hd, rc)     SCANBAD(nm, hd, LIM_DEF, rc, rc)

static head_case_t  cases[] = {

    /* basics */
    OKC("simple GET", "GET / HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com", -1, 0, 1),
    OKC("path and query", "GET /a/b?x=1&y HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_GET, "/a/b", "x=1&y", V11, "example.com", -1, 0, 1),
    OKC("empty query", "GET /a? HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_GET, "/a", "", V11, "example.com", -1, 0, 1),
    OKC("second '?' stays in query", "GET /a?b?c HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_GET, "/a", "b?c", V11, "example.com", -1, 0, 1),
    OKC("HTTP/1.0 without Host", "GET /x HTTP/1.0\r\n\r\n",
        GN_HTTP_GET, "/x", NOQ, V10, "", -1, 0, 0),
    OKC("HTTP/1.0 keep-alive", "GET / HTTP/1.0\r\n"
        "Connection: keep-alive\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V10, "", -1, 0, 1),
    OKC("HTTP/1.0 Keep-Alive any case", "GET / HTTP/1.0\r\n"
        "connection: Upgrade, Keep-Alive\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V10, "", -1, 0, 1),
    OKC("HTTP/1.0 close beats keep-alive", "GET / HTTP/1.0\r\n"
        "Connection: keep-alive\r\nConnection: close\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V10, "", -1, 0, 0),
    OKC("Connection: close", "GET / HTTP/1.1\r\n" HOST
        "Connection: close\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com", -1, 0, 0),
    OKC("Connection list with CLOSE", "GET / HTTP/1.1\r\n" HOST
        "Connection: keep-alive ,CLOSE\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com", -1, 0, 0),
    OKC("close in a second Connection field", "GET / HTTP/1.1\r\n" HOST
        "Connection: upgrade\r\nConnection: close\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com", -1, 0, 0),
    OKC("leading CRLFs skipped", "\r\n\r\nGET / HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com", -1, 0, 1),

    /* methods */
    OKC("HEAD", "HEAD / HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_HEAD, "/", NOQ, V11, "example.com", -1, 0, 1),
    OKC("PUT", "PUT /f HTTP/1.1\r\n" HOST "Content-Length: 0\r\n\r\n",
        GN_HTTP_PUT, "/f", NOQ, V11, "example.com", 0, 0, 1),
    OKC("DELETE", "DELETE /f HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_DELETE, "/f", NOQ, V11, "example.com", -1, 0, 1),
    OKC("TRACE", "TRACE / HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_TRACE, "/", NOQ, V11, "example.com", -1, 0, 1),
    OKC("PATCH", "PATCH / HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_PATCH, "/", NOQ, V11, "example.com", -1, 0, 1),
    OKC("OPTIONS *", "OPTIONS * HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_OPTIONS, "*", NOQ, V11, "example.com", -1, 0, 1),
    OKC("unknown method token", "BREW /pot HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_UNKNOWN, "/pot", NOQ, V11, "example.com", -1, 0, 1),
    OKC("methods are case-sensitive", "get / HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_UNKNOWN, "/", NOQ, V11, "example.com", -1, 0, 1),
    OKC("CONNECT authority-form", "CONNECT example.com:443 HTTP/1.1\r\n"
        HOST "\r\n",
        GN_HTTP_CONNECT, "example.com:443", NOQ, V11, "example.com", -1, 0,
        1),
    LINEBAD("GET asterisk-form", "GET * HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("CONNECT origin-form", "CONNECT / HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("CONNECT without port", "CONNECT example.com HTTP/1.1\r\n"
        HOST "\r\n", 400),
    LINEBAD("GET authority-form", "GET example.com:443 HTTP/1.1\r\n"
        HOST "\r\n", 400),
    LINEBAD("invalid method char", "GE(T / HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("empty method", " / HTTP/1.1\r\n" HOST "\r\n", 400),

    /* request line shape and target */
    LINEBAD("two SP after method", "GET  / HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("two SP before version", "GET /  HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("HTAB separators", "GET\t/\tHTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("no version: HTTP/0.9 -> 505", "GET /\r\n" HOST "\r\n", 505),
    LINEBAD("no version, no target", "GET HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("no version, bad target", "GET /a#b\r\n\r\n", 400),
    LINEBAD("SP inside target", "GET /a b HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("trailing SP after version", "GET / HTTP/1.1 \r\n" HOST "\r\n",
            400),
    LINEBAD("DEL in target", "GET /a\x7f HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("obs-text in target", "GET /caf\xc3\xa9 HTTP/1.1\r\n" HOST "\r\n",
        400),
    LINEBAD("fragment in target", "GET /a#b HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("relative target", "GET a/b HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("ftp scheme", "GET ftp://example.com/ HTTP/1.1\r\n" HOST "\r\n",
        400),

    /* version */
    LINEBAD("HTTP/2.0 -> 505", "GET / HTTP/2.0\r\n" HOST "\r\n", 505),
    LINEBAD("HTTP/1.2 -> 505", "GET / HTTP/1.2\r\n" HOST "\r\n", 505),
    LINEBAD("HTTP/0.9 -> 505", "GET / HTTP/0.9\r\n\r\n", 505),
    LINEBAD("HTTP/1.9 -> 505", "GET / HTTP/1.9\r\n" HOST "\r\n", 505),
    LINEBAD("HTTP/3.0 -> 505", "GET / HTTP/3.0\r\n" HOST "\r\n", 505),
    LINEBAD("HTTP/2 preface -> 505", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            505),
    SCANBAD("HTTP/2.0, request line only", "GET / HTTP/2.0\r\n", LIM_DEF,
            505, 505),
    SCANBAD("HTTP/1.2, request line only", "GET / HTTP/1.2\r\n", LIM_DEF,
            505, 505),
    SCANBAD("HTTP/0.9 simple-request, line only", "GET /\r\n", LIM_DEF, 505,
            505),
    SCANBAD("bad request line, line only", "GET  / HTTP/1.1\r\n", LIM_DEF,
            400, 400),
    SCANBAD("HTTP/1.1, request line only", "GET / HTTP/1.1\r\n", LIM_DEF,
            GN_AGAIN, 400),
    LINEBAD("lowercase http", "GET / http/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("HTTP/11", "GET / HTTP/11\r\n" HOST "\r\n", 400),
    LINEBAD("HTTP/1.10", "GET / HTTP/1.10\r\n" HOST "\r\n", 400),
    LINEBAD("HTTP/a.b", "GET / HTTP/a.b\r\n" HOST "\r\n", 400),

    /* absolute-form */
    OKC("absolute-form overrides Host", "GET http://example.org/a?b HTTP/1.1"
        "\r\nHost: other.example\r\n\r\n",
        GN_HTTP_GET, "/a", "b", V11, "example.org", -1, 0, 1),
    OKC("absolute-form HTTPS, no path", "GET HTTPS://Example.COM:8443 "
        "HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "Example.COM:8443", -1, 0, 1),
    OKC("absolute-form query, no path", "GET http://h.example?x=1 HTTP/1.1"
        "\r\n" HOST "\r\n",
        GN_HTTP_GET, "/", "x=1", V11, "h.example", -1, 0, 1),
    OKC("absolute-form with empty Host", "GET http://h.example/ HTTP/1.1\r\n"
        "Host:\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "h.example", -1, 0, 1),
    LINEBAD("absolute-form with userinfo", "GET http://u:p@example.com/ "
        "HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("absolute-form empty host", "GET http:///a HTTP/1.1\r\n"
            HOST "\r\n", 400),
    OKC("absolute-form IPv6 literal, empty port", "GET http://[::1]:/x "
        "HTTP/1.1\r\n" HOST "\r\n",
        GN_HTTP_GET, "/x", NOQ, V11, "[::1]:", -1, 0, 1),
    LINEBAD("absolute-form empty label", "GET http://a..b/ HTTP/1.1\r\n"
            HOST "\r\n", 400),
    LINEBAD("absolute-form leading dot", "GET http://.a/ HTTP/1.1\r\n"
            HOST "\r\n", 400),
    LINEBAD("absolute-form port 65536", "GET http://a:65536/ HTTP/1.1\r\n"
            HOST "\r\n", 400),
    LINEBAD("absolute-form port 0", "GET http://a:0/ HTTP/1.1\r\n"
            HOST "\r\n", 400),
    LINEBAD("absolute-form bad IPv6", "GET http://[::g]/ HTTP/1.1\r\n"
            HOST "\r\n", 400),
    LINEBAD("absolute-form IPv4 in brackets", "GET http://[1.2.3.4]/ "
            "HTTP/1.1\r\n" HOST "\r\n", 400),
    LINEBAD("CONNECT port 99999", "CONNECT a:99999 HTTP/1.1\r\n"
            HOST "\r\n", 400),
    BAD("absolute-form without Host", "GET http://example.com/ HTTP/1.1"
        "\r\n\r\n", 400),

    /* Host */
    OKC("Host with port", "GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com:8080", -1, 0, 1),
    OKC("Host IPv6 literal", "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "[::1]:8080", -1, 0, 1),
    OKC("Host name case-insensitive, OWS", "GET / HTTP/1.1\r\n"
        "hOST: \t a.example \t\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "a.example", -1, 0, 1),
    BAD("HTTP/1.1 without Host", "GET / HTTP/1.1\r\nX: y\r\n\r\n", 400),
    BAD("two Host fields", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
        400),
    BAD("two Host in HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n"
        "\r\n", 400),
    BAD("empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400),
    BAD("Host with space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
    BAD("Host with slash", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
    BAD("Host with at", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400),
    BAD("Host with comma", "GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", 400),
    BAD("Host with dot-dot", "GET / HTTP/1.1\r\nHost: ..\r\n\r\n", 400),
    BAD("Host empty IP literal", "GET / HTTP/1.1\r\nHost: []\r\n\r\n",
        400),
    BAD("Host with bad port", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", 400),
    OKC("Host with a trailing dot", "GET / HTTP/1.1\r\nHost: a.b.\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "a.b.", -1, 0, 1),
    OKC("Host with an empty port", "GET / HTTP/1.1\r\nHost: a:\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "a:", -1, 0, 1),
    OKC("Host port 65535", "GET / HTTP/1.1\r\nHost: a:65535\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "a:65535", -1, 0, 1),
    OKC("Host port with leading zeros", "GET / HTTP/1.1\r\n"
        "Host: a:00080\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "a:00080", -1, 0, 1),
    OKC("Host IPv4", "GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "127.0.0.1:80", -1, 0, 1),
    OKC("Host IPv4-mapped IPv6", "GET / HTTP/1.1\r\n"
        "Host: [::ffff:10.0.0.1]\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "[::ffff:10.0.0.1]", -1, 0, 1),
    OKC("Host unreserved and sub-delims", "GET / HTTP/1.1\r\n"
        "Host: a-b_c~d!$&'()*+;=e\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "a-b_c~d!$&'()*+;=e", -1, 0, 1),
    BAD("Host leading dot", "GET / HTTP/1.1\r\nHost: .a\r\n\r\n", 400),
    BAD("Host empty label", "GET / HTTP/1.1\r\nHost: a..b\r\n\r\n", 400),
    BAD("Host two trailing dots", "GET / HTTP/1.1\r\nHost: a..\r\n\r\n",
        400),
    BAD("Host only a dot", "GET / HTTP/1.1\r\nHost: .\r\n\r\n", 400),
    BAD("Host only a port", "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400),
    BAD("Host port 0", "GET / HTTP/1.1\r\nHost: a:0\r\n\r\n", 400),
    BAD("Host port 65536", "GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n",
        400),
    BAD("Host port overflowing", "GET / HTTP/1.1\r\n"
        "Host: a:99999999999999999999999\r\n\r\n", 400),
    BAD("Host two ports", "GET / HTTP/1.1\r\nHost: a:1:2\r\n\r\n", 400),
    BAD("Host bare IPv6", "GET / HTTP/1.1\r\nHost: ::1\r\n\r\n", 400),
    BAD("Host bad IPv6 literal", "GET / HTTP/1.1\r\nHost: [::g]\r\n\r\n",
        400),
    BAD("Host IPv6 literal, too many groups", "GET / HTTP/1.1\r\n"
        "Host: [1:2:3:4:5:6:7:8:9]\r\n\r\n", 400),
    BAD("Host IPv4 in brackets", "GET / HTTP/1.1\r\n"
        "Host: [1.2.3.4]\r\n\r\n", 400),
    BAD("Host IPv6 zone identifier", "GET / HTTP/1.1\r\n"
        "Host: [fe80::1%25eth0]\r\n\r\n", 400),
    BAD("Host IPvFuture", "GET / HTTP/1.1\r\nHost: [v1.x]\r\n\r\n",
        400),
    BAD("Host IPv6 literal, port 65536", "GET / HTTP/1.1\r\n"
        "Host: [::1]:65536\r\n\r\n", 400),
    BAD("Host IPv6 literal, junk after", "GET / HTTP/1.1\r\n"
        "Host: [::1]x\r\n\r\n", 400),
    BAD("Host pct-encoded", "GET / HTTP/1.1\r\nHost: a%41\r\n\r\n", 400),
    BAD("Host with '<'", "GET / HTTP/1.1\r\nHost: a<b\r\n\r\n", 400),
    BAD("Host with a bracket inside", "GET / HTTP/1.1\r\n"
        "Host: a[b]\r\n\r\n", 400),
    BAD("Host obs-text", "GET / HTTP/1.1\r\nHost: caf\xc3\xa9\r\n\r\n",
        400),

    /* Content-Length */
    { "Content-Length, body follows", H("POST /f HTTP/1.1\r\n" HOST
      "Content-Length: 5\r\n\r\nhello"), 5, LIM_DEF, GN_OK, GN_OK,
      GN_HTTP_POST, "/f", NOQ, V11, "example.com", 5, 0, 1 },
    OKC("Content-Length leading zeros", "POST /f HTTP/1.1\r\n" HOST
        "Content-Length: 007\r\n\r\n",
        GN_HTTP_POST, "/f", NOQ, V11, "example.com", 7, 0, 1),
    BAD("CL: 5 twice", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 5\r\ncontent-length: 5\r\n\r\n", 400),
    BAD("CL: 5, 5", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 5 ,5\r\n\r\n", 400),
    OKC("CL: max off_t", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 9223372036854775807\r\n\r\n",
        GN_HTTP_POST, "/", NOQ, V11, "example.com", INT64_MAX, 0, 1),
    BAD("CL: 5, 6", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 5, 6\r\n\r\n", 400),
    BAD("CL: 5 then CL: 6", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", 400),
    BAD("CL: +5", "POST / HTTP/1.1\r\n" HOST "Content-Length: +5\r\n\r\n",
        400),
    BAD("CL: -1", "POST / HTTP/1.1\r\n" HOST "Content-Length: -1\r\n\r\n",
        400),
    BAD("CL empty", "POST / HTTP/1.1\r\n" HOST "Content-Length:\r\n\r\n",
        400),
    BAD("CL: 5,", "POST / HTTP/1.1\r\n" HOST "Content-Length: 5,\r\n\r\n",
        400),
    BAD("CL: 5 5", "POST / HTTP/1.1\r\n" HOST "Content-Length: 5 5\r\n\r\n",
        400),
    BAD("CL: 0x10", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 0x10\r\n\r\n", 400),
    BAD("CL overflow", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 9223372036854775808\r\n\r\n", 400),
    BAD("CL huge", "POST / HTTP/1.1\r\n" HOST
        "Content-Length: 99999999999999999999999999\r\n\r\n", 400),

    /* Transfer-Encoding */
    OKC("TE: chunked", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked\r\n\r\n",
        GN_HTTP_POST, "/", NOQ, V11, "example.com", -1, 1, 1),
    OKC("TE: Chunked any case", "POST / HTTP/1.1\r\n" HOST
        "transfer-encoding:  CHUNKED \r\n\r\n",
        GN_HTTP_POST, "/", NOQ, V11, "example.com", -1, 1, 1),
    BAD("TE + CL", "POST / HTTP/1.1\r\n" HOST "Transfer-Encoding: chunked"
        "\r\nContent-Length: 5\r\n\r\n", 400),
    BAD("CL + TE", "POST / HTTP/1.1\r\n" HOST "Content-Length: 5\r\n"
        "Transfer-Encoding: chunked\r\n\r\n", 400),
    BAD("CL + TE: gzip", "POST / HTTP/1.1\r\n" HOST "Content-Length: 5\r\n"
        "Transfer-Encoding: gzip\r\n\r\n", 400),
    BAD("TE: chunked, chunked", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked, chunked\r\n\r\n", 400),
    BAD("TE: chunked in two fields", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        400),
    BAD("TE: xchunked", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: xchunked\r\n\r\n", 400),
    BAD("TE: gzip", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: gzip\r\n\r\n", 400),
    BAD("TE: gzip, chunked", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: gzip, chunked\r\n\r\n", 501),
    BAD("TE: chunked, gzip (final not chunked)", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked, gzip\r\n\r\n", 400),
    BAD("TE: chunked and gzip fields", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
        400),
    BAD("TE: gzip and chunked fields", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
    BAD("TE: chunked;x=1", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked;x=1\r\n\r\n", 400),
    BAD("TE: identity", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: identity\r\n\r\n", 400),
    BAD("TE in HTTP/1.0", "POST / HTTP/1.0\r\n"
        "Transfer-Encoding: chunked\r\n\r\n", 400),
    BAD("TE empty", "POST / HTTP/1.1\r\n" HOST "Transfer-Encoding:\r\n\r\n",
        400),
    BAD("TE: chunked, (empty element)", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked,\r\n\r\n", 400),
    BAD("TE: \"chunked\"", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: \"chunked\"\r\n\r\n", 400),
    BAD("TE: chunked x", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding: chunked x\r\n\r\n", 400),
    BAD("Transfer-Encoding SP colon", "POST / HTTP/1.1\r\n" HOST
        "Transfer-Encoding : chunked\r\n\r\n", 400),
    BAD("other field SP colon", "GET / HTTP/1.1\r\n" HOST
        "X-Foo : bar\r\n\r\n", 400),
    BAD("Host SP colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    BAD("Content-Length HTAB colon", "POST / HTTP/1.1\r\n" HOST
        "Content-Length\t: 5\r\n\r\n", 400),

    /* field syntax */
    OKC("empty field value", "GET / HTTP/1.1\r\n" HOST "X-Empty:\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com", -1, 0, 1),
    OKC("obs-text and HTAB in value", "GET / HTTP/1.1\r\n" HOST
        "X: a\tb \xff\x80\r\n\r\n",
        GN_HTTP_GET, "/", NOQ, V11, "example.com", -1, 0, 1),
    BAD("obs-fold", "GET / HTTP/1.1\r\n" HOST "X: a\r\n b\r\n\r\n", 400),
    BAD("obs-fold with HTAB", "GET / HTTP/1.1\r\n" HOST "X: a\r\n\tb\r\n\r\n",
        400),
    BAD("whitespace before first field", "GET / HTTP/1.1\r\n " HOST "\r\n",
        400),
    BAD("invalid name char", "GET / HTTP/1.1\r\n" HOST "X(y): 1\r\n\r\n",
        400),
    BAD("no colon", "GET / HTTP/1.1\r\n" HOST "Xy\r\n\r\n", 400),
    BAD("empty name", "GET / HTTP/1.1\r\n" HOST ": x\r\n\r\n", 400),
    BAD("CTL in value", "GET / HTTP/1.1\r\n" HOST "X: a\x01" "b\r\n\r\n",
        400),
    BAD("DEL in value", "GET / HTTP/1.1\r\n" HOST "X: a\x7f\r\n\r\n", 400),
    BAD("VT in value", "GET / HTTP/1.1\r\n" HOST "X: a\x0b\r\n\r\n", 400),

    /* rejected by the scan already */
    SCANBAD("bare CR in value", "GET / HTTP/1.1\r\n" HOST "X: a\rb\r\n\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("bare CR ends line", "GET / HTTP/1.1\r" HOST "\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("CR CR LF", "GET / HTTP/1.1\r\r\n" HOST "\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("bare LF line endings", "GET / HTTP/1.1\n" "Host: a\n\n",
            LIM_DEF, 400, 400),
    SCANBAD("bare LF ends the request line", "GET / HTTP/1.1\n" HOST "\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("bare LF ends a field line", "GET / HTTP/1.1\r\nHost: a\n"
            "X: y\r\n\r\n", LIM_DEF, 400, 400),
    SCANBAD("bare LF inside a value", "GET / HTTP/1.1\r\n" HOST
            "X: a\nb\r\n\r\n", LIM_DEF, 400, 400),
    SCANBAD("bare LF ends the head", "GET / HTTP/1.1\r\n" HOST "\n",
            LIM_DEF, 400, 400),
    SCANBAD("leading bare LF", "\nGET / HTTP/1.1\r\n" HOST "\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("NUL in value", "GET / HTTP/1.1\r\n" HOST "X: a\0b\r\n\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("NUL in request line", "GET /\0 HTTP/1.1\r\n" HOST "\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("NUL in field name", "GET / HTTP/1.1\r\nX\0: a\r\n\r\n",
            LIM_DEF, 400, 400),
    SCANBAD("incomplete head", "GET / HTTP/1.1\r\n" HOST,
            LIM_DEF, GN_AGAIN, 400),
    SCANBAD("incomplete, ends in CR", "GET / HTTP/1.1\r\n" HOST "\r",
            LIM_DEF, GN_AGAIN, 400),

    /* limits: max_line 32, max_head 128, max_headers 4, max_field 40 */
    { "request line = max_line", H("GET /234567890123456789 HTTP/1.1\r\n"
      "Host: a\r\n\r\n"), 0, LIM_SMALL, GN_OK, GN_OK, GN_HTTP_GET,
      "/234567890123456789", NOQ, V11, "a", -1, 0, 1 },
    SCANBAD("request line > max_line", "GET /2345678901234567890 HTTP/1.1"
            "\r\nHost: a\r\n\r\n", LIM_SMALL, 414, 414),
    SCANBAD("long request line, no end yet",
            "GET /2345678901234567890123456789",
            LIM_SMALL, 414, 400),
    { "field = max_field", H("GET / HTTP/1.1\r\nHost: a\r\n"
      "X: 4567890123456789012345678901234567890\r\n\r\n"), 0, LIM_SMALL,
      GN_OK, GN_OK, GN_HTTP_GET, "/", NOQ, V11, "a", -1, 0, 1 },
    SCANBAD("field > max_field", "GET / HTTP/1.1\r\nHost: a\r\n"
            "X: 45678901234567890123456789012345678901\r\n\r\n",
            LIM_SMALL, 431, 431),
    { "fields = max_headers", H("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\n"
      "B: 2\r\nC: 3\r\n\r\n"), 0, LIM_SMALL, GN_OK, GN_OK, GN_HTTP_GET,
      "/", NOQ, V11, "a", -1, 0, 1 },
    SCANBAD("fields > max_headers", "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\n"
            "B: 2\r\nC: 3\r\nD: 4\r\n\r\n", LIM_SMALL, 431, 431),
    SCANBAD("head > max_head", "GET / HTTP/1.1\r\nHost: a\r\n"
            "A: 012345678901234567890123456789\r\n"
            "B: 012345678901234567890123456789\r\n"
            "C: 012345678901234567890123456789\r\n\r\n",
            LIM_SMALL, 431, 431),
    SCANBAD("head > max_head mid-line, before any line end",
            "GET / HTTP/1.1\r\nHost: a\r\n"
            "A: 012345678901234567890123456789\r\n"
            "B: 012345678901234567890123456789\r\n"
            "C: 0123456789012345678901234567890123456",
            LIM_SMALL, 431, 400),
    SCANBAD("leading CRLFs count toward max_head",
            "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
            "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
            "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
            "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
            "GET / HTTP/1.0\r\n\r\n", LIM_SMALL, 431, 431),
};


static void
check_fields(head_case_t *c, gn_http_head_t *h)
{
    is_int(h->method, c->method, "%s: method", c->name);
    is_str(h->path.data, h->path.len, c->path, "%s: path", c->name);

    if (c->query == NULL) {
        ok(!h->has_query, "%s: no query", c->name);
    } else {
        ok(h->has_query, "%s: has query", c->name);
        is_str(h->query.data, h->query.len, c->query, "%s: query", c->name);
    }

    is_int(h->version, c->version, "%s: version", c->name);
    is_str(h->host.len ? (const char *) h->host.data : "", h->host.len,
           c->host, "%s: host", c->name);
    is_int(h->content_length, c->content_length, "%s: content_length",
           c->name);
    is_int(h->chunked, c->chunked, "%s: chunked", c->name);
    is_int(h->keepalive, c->keepalive, "%s: keepalive", c->name);
}


/*
 * Feeds the scan the buffer growing one byte at a time (one scan state),
 * then split in two at every offset (a fresh state each), and expects the
 * same result and head_len as a single call. Each prefix is copied into
 * its own allocation so ASan catches a read past the length given.
 */

static gn_int_t
scan_prefixes(const u_char *buf, size_t len, size_t *cuts, size_t ncuts,
    const gn_http_limits_t *lim, size_t *head_len)
{
    u_char          *copy;
    size_t           i;
    gn_int_t         rc;
    gn_http_scan_t   s;

    memset(&s, 0, sizeof(s));
    rc = GN_AGAIN;

    for (i = 0; i < ncuts; i++) {
        copy = malloc(cuts[i] ? cuts[i] : 1);
        memcpy(copy, buf, cuts[i]);
        rc = gn_http_parse_head_end(&s, copy, cuts[i], lim, head_len);
        free(copy);

        if (rc != GN_AGAIN) {
            break;
        }
    }

    return rc;
}


static void
check_scan(head_case_t *c, const gn_http_limits_t *lim, gn_int_t want,
    size_t want_len)
{
    size_t     i, n, hl, cuts[2], *all;
    gn_int_t   rc;
    int        bad_grow, bad_split;

    n = c->len;
    bad_grow = 0;
    bad_split = 0;

    all = malloc(n * sizeof(size_t));
    for (i = 0; i < n; i++) {
        all[i] = i + 1;
    }

    hl = 0;
    rc = scan_prefixes((const u_char *) c->head, n, all, n, lim, &hl);
    if (rc != want || (rc == GN_OK && hl != want_len)) {
        bad_grow = 1;
    }

    for (i = 0; i <= n; i++) {
        cuts[0] = i;
        cuts[1] = n;
        hl = 0;
        rc = scan_prefixes((const u_char *) c->head, n, cuts, 2, lim, &hl);
        if (rc != want || (rc == GN_OK && hl != want_len)) {
            bad_split++;
            if (bad_split == 1) {
                diag("%s: split at %zu gave %ld", c->name, i, (long) rc);
            }
        }
    }

    free(all);

    ok(!bad_grow, "%s: scan byte by byte", c->name);
    ok(!bad_split, "%s: scan split at every offset", c->name);
}


static void
run_head_case(head_case_t *c)
{
    u_char             *buf;
    size_t              head_len, want_len;
    gn_int_t            rc;
    gn_http_head_t      h;
    gn_http_scan_t      s;
    gn_http_header_t    hdrs[64];
    gn_http_limits_t   *lim;

    lim = &limits[c->lim];
    buf = malloc(c->len ? c->len : 1);
    memcpy(buf, c->head, c->len);

    want_len = c->len - c->extra;

    memset(&s, 0, sizeof(s));
    head_len = 0;
    rc = gn_http_parse_head_end(&s, buf, c->len, lim, &head_len);
    is_int(rc, c->end_rc, "%s: head end", c->name);

    if (rc == GN_OK) {
        is_int(head_len, want_len, "%s: head length", c->name);
    } else {
        head_len = c->len;
    }

    check_scan(c, lim, c->end_rc, want_len);

    rc = gn_http_parse_head(&h, buf, head_len, lim, hdrs, gn_nelems(hdrs));
    is_int(rc, c->rc, "%s: parse", c->name);

    if (rc == GN_OK && c->rc == GN_OK) {
        check_fields(c, &h);

    } else {
        ok(rc == GN_OK || h.err != NULL, "%s: error reason '%s'", c->name,
           h.err ? h.err : "(none)");
    }

    free(buf);
}


static void
test_head_misc(void)
{
    static const char   req[] = "GET / HTTP/1.1\r\nHost: a\r\n"
        "If-Modified-Since: Sat, 29 Oct 1994 19:43:31 GMT\r\n"
        "If-None-Match: \"x\"\r\nIf-None-Match: \"y\"\r\n"
        "if-match: *\r\nIf-Unmodified-Since: d\r\nIf-Range: \"e\"\r\n"
        "Range: bytes=0-1\r\nUser-Agent: t/1.0\r\nReferer: http://r/\r\n"
        "Expect: 100-Continue\r\nX-Ows:  \t v \t \r\n\r\n";
    static const char   req10[] = "POST / HTTP/1.0\r\n"
        "Expect: 100-continue\r\n\r\n";
    static const char   req_exp[] = "POST / HTTP/1.1\r\nHost: a\r\n"
        "Expect: something-else\r\n\r\n";

    u_char              *buf;
    gn_int_t             rc;
    gn_http_head_t       h;
    gn_http_header_t     hdrs[32], *hd;
    gn_http_limits_t     lim;

    lim = limits[LIM_DEF];

    buf = malloc(sizeof(req) - 1);
    memcpy(buf, req, sizeof(req) - 1);

    rc = gn_http_parse_head(&h, buf, sizeof(req) - 1, &lim, hdrs, 32);
    is_int(rc, GN_OK, "misc: parse");
    is_int(h.nheaders, 12, "misc: 12 fields");
    is_str(h.if_modified_since.data, h.if_modified_since.len,
           "Sat, 29 Oct 1994 19:43:31 GMT", "misc: If-Modified-Since");
    is_str(h.if_none_match.data, h.if_none_match.len, "\"x\"",
           "misc: If-None-Match first occurrence");
    is_str(h.if_match.data, h.if_match.len, "*", "misc: If-Match");
    is_str(h.if_unmodified_since.data, h.if_unmodified_since.len, "d",
           "misc: If-Unmodified-Since");
    is_str(h.if_range.data, h.if_range.len, "\"e\"", "misc: If-Range");
    is_str(h.range.data, h.range.len, "bytes=0-1", "misc: Range");
    is_str(h.user_agent.data, h.user_agent.len, "t/1.0", "misc: User-Agent");
    is_str(h.referer.data, h.referer.len, "http://r/", "misc: Referer");
    is_int(h.expect_continue, 1, "misc: Expect: 100-Continue");
    is_str(h.method_name.data, h.method_name.len, "GET", "misc: method name");
    is_str(h.target.data, h.target.len, "/", "misc: target");
    ok(h.abs_host.len == 0, "misc: no abs_host");

    hd = gn_http_header_find(&h, "x-ows", 5);
    ok(hd != NULL, "misc: find x-ows");
    if (hd != NULL) {
        is_str(hd->name.data, hd->name.len, "X-Ows", "misc: name kept");
        is_str(hd->value.data, hd->value.len, "v", "misc: value OWS trimmed");
    }

    hd = gn_http_header_find(&h, "IF-NONE-MATCH", 13);
    ok(hd != NULL && hd == &h.headers[2], "misc: find returns first");
    ok(gn_http_header_find(&h, "X-Ow", 4) == NULL, "misc: no prefix match");
    ok(gn_http_header_find(&h, "Cookie", 6) == NULL, "misc: absent");

    rc = gn_http_parse_head(&h, buf, sizeof(req) - 1, &lim, hdrs, 11);
    is_int(rc, 431, "misc: more fields than the array holds");

    free(buf);

    rc = gn_http_parse_head(&h, (u_char *) req10, sizeof(req10) - 1, &lim,
                            hdrs, 32);
    is_int(rc, GN_OK, "misc: HTTP/1.0 Expect parse");
    is_int(h.expect_continue, 0, "misc: 100-continue ignored in HTTP/1.0");
    ok(h.if_modified_since.data == NULL && h.range.len == 0,
       "misc: absent fields stay empty");

    rc = gn_http_parse_head(&h, (u_char *) req_exp, sizeof(req_exp) - 1,
                            &lim, hdrs, 32);
    is_int(rc, GN_OK, "misc: unknown expectation left to the caller");
    is_int(h.expect_continue, 0, "misc: expect_continue 0");

    rc = gn_http_parse_head(&h, (u_char *) "GET / HTTP/1.1\r\n\r\n", 18,
                            &lim, hdrs, 32);
    ok(rc == 400 && h.err != NULL
       && strcmp(h.err, "missing Host header") == 0, "misc: err string");
}


/* Pipelined heads: the scan stops at the first head's end. */

static void
test_head_pipeline(void)
{
    static const char   two[] = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
                                "GET /2 HTTP/1.1\r\nHost: a\r\n\r\n";
    size_t              hl;
    gn_int_t            rc;
    gn_http_scan_t      s;

    memset(&s, 0, sizeof(s));
    rc = gn_http_parse_head_end(&s, (const u_char *) two, sizeof(two) - 1,
                                &limits[LIM_DEF], &hl);
    is_int(rc, GN_OK, "pipeline: first head");
    is_int(hl, (sizeof(two) - 1) / 2, "pipeline: first head length");

    memset(&s, 0, sizeof(s));
    rc = gn_http_parse_head_end(&s, (const u_char *) two + hl,
                                sizeof(two) - 1 - hl, &limits[LIM_DEF], &hl);
    is_int(rc, GN_OK, "pipeline: second head");
    is_int(hl, (sizeof(two) - 1) / 2, "pipeline: second head length");
}


/* Feeding a long head one byte at a time must not rescan: O(n) total. */

static void
test_head_linear(void)
{
    u_char            *buf;
    size_t             i, n, hl;
    gn_int_t           rc;
    gn_http_scan_t     s;
    gn_http_limits_t   lim = { 0, 0, 0, 0 };

    n = 1 << 20;
    buf = malloc(n);
    memcpy(buf, "GET / HTTP/1.1\r\nX: ", 19);
    memset(buf + 19, 'a', n - 19 - 4);
    memcpy(buf + n - 4, "\r\n\r\n", 4);

    memset(&s, 0, sizeof(s));
    rc = GN_AGAIN;

    for (i = 1; i <= n && rc == GN_AGAIN; i++) {
        rc = gn_http_parse_head_end(&s, buf, i, &lim, &hl);

        /* it keeps its place: all given bytes scanned but a final CR */
        if (rc == GN_AGAIN && s.pos != (buf[i - 1] == '\r' ? i - 1 : i)) {
            break;
        }
    }

    is_int(rc, GN_OK, "linear: 1 MiB head byte by byte, no rescanning");
    is_int(hl, n, "linear: head length");

    free(buf);
}


/* chunked */

typedef struct {
    const char  *name;
    const char  *body;
    size_t       len;
    size_t       extra;         /* bytes after the body (next request) */
    off_t        max_body;
    gn_int_t     rc;            /* GN_DONE or GN_ERROR */
    const char  *data;          /* decoded data for GN_DONE */
} chunk_case_t;

#define CK(nm, b, ex, mx, rc, d)   { nm, H(b), ex, mx, rc, d }

static chunk_case_t  chunk_cases[] = {
    CK("one chunk", "5\r\nhello\r\n0\r\n\r\n", 0, 0, GN_DONE, "hello"),
    CK("three chunks", "3\r\nabc\r\n4\r\ndefg\r\n1\r\nh\r\n0\r\n\r\n", 0, 0,
       GN_DONE, "abcdefgh"),
    CK("empty body", "0\r\n\r\n", 0, 0, GN_DONE, ""),
    CK("hex sizes", "A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n", 0, 0,
       GN_DONE, "0123456789abcdefghij"),
    CK("leading zeros", "0005\r\nhello\r\n000\r\n\r\n", 0, 0, GN_DONE,
       "hello"),
    CK("extensions", "5;foo=bar;baz\r\nhello\r\n0;last\r\n\r\n", 0, 0,
       GN_DONE, "hello"),
    CK("quoted extension", "5;a=\"x;y\\\"z\\\\\"\r\nhello\r\n0\r\n\r\n", 0,
       0, GN_DONE, "hello"),
    CK("BWS in extensions", "5 ; a = b ;c\t;d=\"e\"\r\nhello\r\n0\r\n\r\n",
       0, 0, GN_DONE, "hello"),
    CK("BWS before CRLF", "5;a \r\nhello\r\n0\r\n\r\n", 0, 0, GN_ERROR,
       NULL),
    CK("trailers", "2\r\nhi\r\n0\r\nX-Sum: 12\r\nY:\r\n\r\n", 0, 0,
       GN_DONE, "hi"),
    CK("pipelined request after", "2\r\nhi\r\n0\r\n\r\nGET / HTTP/1.1\r\n",
       16, 0, GN_DONE, "hi"),
    CK("max_body exactly", "5\r\nhello\r\n0\r\n\r\n", 0, 5, GN_DONE, "hello"),
    CK("data with CRLF inside", "4\r\n\r\n\r\n\r\n0\r\n\r\n", 0, 0, GN_DONE,
       "\r\n\r\n"),

    CK("max_body exceeded", "3\r\nhel\r\n3\r\nlo!\r\n0\r\n\r\n", 0, 5,
       GN_ERROR, NULL),
    CK("no size", "\r\nhello\r\n0\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("non-hex size", "g\r\n", 0, 0, GN_ERROR, NULL),
    CK("0x prefix", "0x5\r\nhello\r\n0\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("negative size", "-5\r\nhello\r\n0\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("size overflow", "8000000000000000\r\n", 0, 0, GN_ERROR, NULL),
    CK("size overflow, long", "fffffffffffffffffffff\r\n", 0, 0, GN_ERROR,
       NULL),
    CK("trailing space without ext", "5 \r\nhello\r\n0\r\n\r\n", 0, 0,
       GN_ERROR, NULL),
    CK("bare CR after size", "5\rhello\r\n0\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("data too long", "5\r\nhelloX\r\n0\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("data CR then junk", "5\r\nhello\rX0\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("empty extension name", "5;\r\nhello\r\n0\r\n\r\n", 0, 0, GN_ERROR,
       NULL),
    CK("extension '=' without value", "5;a=\r\nhello\r\n0\r\n\r\n", 0, 0,
       GN_ERROR, NULL),
    CK("LF inside quoted extension", "5;a=\"x\ny\"\r\nhello\r\n0\r\n\r\n",
       0, 0, GN_ERROR, NULL),
    CK("NUL in extension", "5;a\0\r\nhello\r\n0\r\n\r\n", 0, 0, GN_ERROR,
       NULL),
    CK("unterminated quote", "5;a=\"x\r\nhello\r\n0\r\n\r\n", 0, 0,
       GN_ERROR, NULL),
    CK("trailer obs-fold", "0\r\nX: a\r\n b\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("trailer without colon", "0\r\nX a\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("trailer CTL", "0\r\nX: a\x01\r\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("last chunk bare CR", "0\r\n\rX", 0, 0, GN_ERROR, NULL),
    CK("bare LF everywhere", "5\nhello\n0\n\n", 0, 0, GN_ERROR, NULL),
    CK("bare LF after the size", "5\nhello\r\n0\r\n\r\n", 0, 0, GN_ERROR,
       NULL),
    CK("bare LF after an extension", "5;a=b\nhello\r\n0\r\n\r\n", 0, 0,
       GN_ERROR, NULL),
    CK("bare LF after a quoted extension", "5;a=\"b\"\nhello\r\n0\r\n\r\n",
       0, 0, GN_ERROR, NULL),
    CK("bare LF after the data", "5\r\nhello\n0\r\n\r\n", 0, 0, GN_ERROR,
       NULL),
    CK("bare LF after the last chunk", "0\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("bare LF ends a trailer", "0\r\nX: a\n\r\n", 0, 0, GN_ERROR, NULL),
    CK("bare LF ends the trailers", "0\r\nX: a\r\n\n", 0, 0, GN_ERROR,
       NULL),
    CK("bare LF ends an empty trailer section", "0\r\n\n", 0, 0, GN_ERROR,
       NULL),
};


/*
 * Feeds body[0..len) in pieces ending at cuts[] (each piece copied into
 * its own allocation), collecting data into out. Returns the final code;
 * *consumed is the offset just past what GN_DONE consumed.
 */

static gn_int_t
feed_chunked(const u_char *body, size_t len, size_t *cuts, size_t ncuts,
    off_t max_body, u_char *out, size_t *out_len, size_t *consumed)
{
    u_char             *piece, *p, *data;
    size_t              i, from, n, size;
    gn_int_t            rc;
    gn_http_chunked_t   ctx;

    memset(&ctx, 0, sizeof(ctx));
    *out_len = 0;
    from = 0;
    rc = GN_AGAIN;

    for (i = 0; i < ncuts && rc == GN_AGAIN; i++) {
        n = cuts[i] - from;
        piece = malloc(n ? n : 1);
        memcpy(piece, body + from, n);
        p = piece;

        for ( ;; ) {
            rc = gn_http_chunked_parse(&ctx, &p, piece + n, &data, &size,
                                       max_body);
            if (rc != GN_OK) {
                break;
            }

            if (data < piece || data + size > piece + n || size == 0) {
                rc = -100;          /* data outside the piece: a bug */
                break;
            }

            memcpy(out + *out_len, data, size);
            *out_len += size;
        }

        if (rc == GN_AGAIN && p != piece + n) {
            rc = -101;              /* GN_AGAIN must consume everything */
        }

        *consumed = from + (p - piece);
        free(piece);
        from = cuts[i];
    }

    return rc;
}


static void
run_chunk_case(chunk_case_t *c)
{
    u_char   *out, *ref;
    size_t    i, n, out_len, ref_len, consumed, cuts[3], *all;
    gn_int_t  rc, ref_rc;
    int       bad_split, bad_byte;

    n = c->len;
    out = malloc(n + 1);
    ref = malloc(n + 1);

    cuts[0] = n;
    consumed = 0;
    ref_rc = feed_chunked((const u_char *) c->body, n, cuts, 1, c->max_body,
                          ref, &ref_len, &consumed);
    is_int(ref_rc, c->rc, "chunked %s: whole", c->name);

    if (c->rc == GN_DONE) {
        is_int(consumed, n - c->extra, "chunked %s: consumed", c->name);
        if (c->data != NULL) {
            is_str(ref, ref_len, c->data, "chunked %s: data", c->name);
        }
    }

    bad_split = 0;

    for (i = 0; i <= n; i++) {
        cuts[0] = i;
        cuts[1] = n;
        rc = feed_chunked((const u_char *) c->body, n, cuts, 2, c->max_body,
                          out, &out_len, &consumed);
        if (rc != ref_rc || out_len != ref_len
            || memcmp(out, ref, ref_len) != 0
            || (rc == GN_DONE && consumed != n - c->extra))
        {
            if (bad_split++ == 0) {
                diag("chunked %s: split at %zu gave %ld", c->name, i,
                     (long) rc);
            }
        }
    }

    ok(!bad_split, "chunked %s: split at every offset", c->name);

    all = malloc(n * sizeof(size_t) + 1);
    for (i = 0; i < n; i++) {
        all[i] = i + 1;
    }

    rc = feed_chunked((const u_char *) c->body, n, all, n, c->max_body, out,
                      &out_len, &consumed);
    bad_byte = rc != ref_rc || out_len != ref_len
               || memcmp(out, ref, ref_len) != 0;
    ok(!bad_byte, "chunked %s: byte by byte", c->name);

    free(all);
    free(out);
    free(ref);
}


static void chunked_error_size(const char *body, off_t max_body, off_t want,
    const char *what);


static void
test_chunked_limits(void)
{
    static const char   one[] = "1;abcdefghij\r\nx\r\n";

    u_char             *buf, *p, *data;
    size_t              n, size;
    gn_int_t            rc;
    gn_http_chunked_t   ctx;

    /* 5000 bytes of extension on one chunk */
    n = 5000 + 32;
    buf = malloc(n);
    memcpy(buf, "1;a=", 4);
    memset(buf + 4, 'x', 5000);
    memcpy(buf + 5004, "\r\nx\r\n0\r\n\r\n", 10);
    n = 5014;

    memset(&ctx, 0, sizeof(ctx));
    p = buf;
    rc = gn_http_chunked_parse(&ctx, &p, buf + n, &data, &size, 0);
    is_int(rc, GN_ERROR, "chunked: extension over 4 KiB rejected");

    /* extensions summed over many chunks */
    memset(&ctx, 0, sizeof(ctx));
    rc = GN_OK;
    for (n = 0; n < 1000; n++) {
        p = (u_char *) one;
        do {
            rc = gn_http_chunked_parse(&ctx, &p, (u_char *) one + 17, &data,
                                       &size, 0);
        } while (rc == GN_OK);

        if (rc == GN_ERROR) {
            break;
        }
    }
    is_int(rc, GN_ERROR, "chunked: extension total bounded");
    ok(n > 300 && n < 400, "chunked: ... after %zu chunks", n);

    /* 5000 bytes of trailer */
    memcpy(buf, "0\r\nX: ", 6);
    memset(buf + 6, 'y', 5000);
    memcpy(buf + 5006, "\r\n\r\n", 4);
    n = 5010;

    memset(&ctx, 0, sizeof(ctx));
    p = buf;
    rc = gn_http_chunked_parse(&ctx, &p, buf + n, &data, &size, 0);
    is_int(rc, GN_ERROR, "chunked: trailer over 4 KiB rejected");

    rc = gn_http_chunked_parse(&ctx, &p, buf + n, &data, &size, 0);
    is_int(rc, GN_ERROR, "chunked: error is sticky");

    free(buf);

    /* largest size accepted when no max_body; data arrives as given */
    memset(&ctx, 0, sizeof(ctx));
    p = (u_char *) "7fffffffffffffff\r\nabc";
    rc = gn_http_chunked_parse(&ctx, &p, p + 21, &data, &size, 0);
    ok(rc == GN_OK && size == 3, "chunked: max off_t chunk size, partial");
    is_int(ctx.size, INT64_MAX - 3, "chunked: bytes left in the chunk");

    chunked_error_size("7fffffffffffffff\r\n", 1024, INT64_MAX,
                       "a valid size past max_body: kept (413)");
    chunked_error_size("401\r\n", 1024, 0x401,
                       "one past max_body: kept (413)");
    chunked_error_size("8000000000000000\r\n", 1024, 0,
                       "a size past off_t: 0 (400)");
    chunked_error_size("fffffffffffffffffffff\r\n", 1024, 0,
                       "a size of 21 digits: 0 (400)");
    chunked_error_size("8000000000000000\r\n", 0, 0,
                       "a size past off_t, no max_body: 0 (400)");
    chunked_error_size("fff x\r\n", 16, 0,
                       "a large size then junk: 0 (400)");
    chunked_error_size("fff\nx", 16, 0,
                       "a large size then bare LF: 0 (400)");
}


/*
 * After GN_ERROR, ctx.size tells the caller which error it was: the
 * chunk size that would cross max_body (413), or 0 for a malformed
 * encoding (400), an overflowing chunk size included.
 */

static void
chunked_error_size(const char *body, off_t max_body, off_t want,
    const char *what)
{
    u_char             *p, *data;
    size_t              size;
    gn_int_t            rc;
    gn_http_chunked_t   ctx;

    memset(&ctx, 0, sizeof(ctx));
    p = (u_char *) body;
    rc = gn_http_chunked_parse(&ctx, &p, p + strlen(body), &data, &size,
                               max_body);
    is_int(rc, GN_ERROR, "chunked error: %s", what);
    is_int(ctx.size, want, "chunked error size: %s", what);
}


static void
test_host_name(void)
{
    static const struct {
        const char  *host;
        const char  *name;
    } t[] = {
        { "example.com", "example.com" },
        { "Example.COM:8080", "Example.COM" },
        { "example.com.", "example.com" },
        { "example.com.:80", "example.com" },
        { "127.0.0.1:443", "127.0.0.1" },
        { "[::1]", "[::1]" },
        { "[::1]:8443", "[::1]" },
        { "[fe80::1%25eth0]:80", "[fe80::1%25eth0]" },
        { "", "" },
    };
    gn_str_t  h, n;
    size_t    i;

    for (i = 0; i < gn_nelems(t); i++) {
        h.data = (u_char *) t[i].host;
        h.len = strlen(t[i].host);
        n = gn_http_host_name(&h);
        is_str(n.data, n.len, t[i].name, "host name of \"%s\"", t[i].host);
    }
}


typedef struct {
    const char  *src;
    size_t       len;
    const char  *want;          /* NULL: GN_ERROR expected */
} path_case_t;


static path_case_t  path_cases[] = {

    /* plain */
    { H("/"), "/" },
    { H("/index.html"), "/index.html" },
    { H("/a/b/c"), "/a/b/c" },
    { H("/a/b/"), "/a/b/" },
    { H("/.hidden"), "/.hidden" },
    { H("/a/..b/c.."), "/a/..b/c.." },
    { H("/..."), "/..." },
    { H("/a/.../b"), "/a/.../b" },

    /* repeated slashes */
    { H("//"), "/" },
    { H("//a//b///c"), "/a/b/c" },
    { H("/a//"), "/a/" },

    /* dot segments */
    { H("/./"), "/" },
    { H("/."), "/" },
    { H("/a/./b"), "/a/b" },
    { H("/a/."), "/a/" },
    { H("/a/b/./"), "/a/b/" },
    { H("/a/b/.."), "/a/" },
    { H("/a/b/../"), "/a/" },
    { H("/a/b/../c"), "/a/c" },
    { H("/a/./../b"), "/b" },
    { H("/a//../b"), "/b" },
    { H("/a/b/c/../../d"), "/a/d" },
    { H("/a/.."), "/" },

    /* climbing above the root, plain and encoded */
    { H("/.."), NULL },
    { H("/../"), NULL },
    { H("/../a"), NULL },
    { H("/a/../../b"), NULL },
    { H("/a/./.././.."), NULL },
    { H("/%2e%2e/a"), NULL },
    { H("/%2E%2e/"), NULL },
    { H("/%2e%2E"), NULL },
    { H("/.%2e/etc/passwd"), NULL },
    { H("/%2e./x"), NULL },
    { H("/a/%2e%2e/%2e%2e/x"), NULL },
    { H("/a%2f..%2f..%2fetc"), NULL },
    { H("/a%2F..%2F..%2Fetc"), NULL },
    { H("/%2f%2e%2e"), NULL },

    /* encoded dots and slashes that stay inside */
    { H("/a/%2e%2e/b"), "/b" },
    { H("/a/%2E/b"), "/a/b" },
    { H("/a%2F..%2Fb"), "/b" },
    { H("/a%2fb"), "/a/b" },
    { H("/a%2f%2fb"), "/a/b" },
    { H("/%2e"), "/" },
    { H("/a/b/%2e"), "/a/b/" },
    { H("/a/b/%2e%2e"), "/a/" },
    { H("/a/b/.%2E/"), "/a/" },

    /* a backslash is just a byte, not a separator */
    { H("/..%5c..%5cetc"), "/..\\..\\etc" },
    { H("/a/%5c../b"), "/a/\\../b" },
    { H("/a\\..\\b"), "/a\\..\\b" },

    /* other escapes */
    { H("/a%20b"), "/a b" },
    { H("/%41%42%43"), "/ABC" },
    { H("/%7e%7Euser"), "/~~user" },
    { H("/caf%C3%A9"), "/caf\xc3\xa9" },
    { H("/100%25"), "/100%" },
    { H("/%25%32%65"), "/%2e" },            /* decoded once only */
    { H("/q%3Fx"), "/q?x" },

    /* bad escapes and forbidden bytes */
    { H("/%00"), NULL },
    { H("/a%00b"), NULL },
    { H("/%zz"), NULL },
    { H("/%g0"), NULL },
    { H("/%2"), NULL },
    { H("/%"), NULL },
    { H("/a%2"), NULL },
    { H("/%0a"), NULL },
    { H("/%0D"), NULL },
    { H("/%1F"), NULL },
    { H("/%7f"), NULL },
    { H("/%7F"), NULL },
    { H("/a\x01" "b"), NULL },
    { H("/a\x7f"), NULL },
    { H("/a\0b"), NULL },

    /* not a path */
    { H(""), NULL },
    { H("a/b"), NULL },
    { H("%2fa"), NULL },
    { H("*"), NULL },
};


/* Printable form of a test input for the TAP line (C-style escapes). */

static const char *
path_esc(const char *s, size_t len)
{
    static char  buf[256];
    size_t       i, n;

    for (i = 0, n = 0; i < len && n < sizeof(buf) - 5; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7f) {
            buf[n++] = s[i];
        } else {
            n += snprintf(buf + n, 5, "\\x%02x", (unsigned char) s[i]);
        }
    }

    buf[n] = '\0';

    return buf;
}



/* gn_http_normalize_path(): percent-decoding, dot segments (also when
 * encoded), repeated slashes, and every way of climbing above the root. */
static void
test_normalize_path(void)
{
    u_char       *src, *dst;
    size_t        i, dst_len;
    gn_int_t      rc;
    path_case_t  *c;

    for (i = 0; i < gn_nelems(path_cases); i++) {
        c = &path_cases[i];

        /* exact-size copies: ASan catches any read or write past them */
        src = malloc(c->len ? c->len : 1);
        memcpy(src, c->src, c->len);
        dst = malloc(c->len + 1);
        dst_len = (size_t) -1;

        rc = gn_http_normalize_path(src, c->len, dst, &dst_len);

        if (c->want == NULL) {
            is_int(rc, GN_ERROR, "'%s' rejected", path_esc(c->src, c->len));

        } else if (is_int(rc, GN_OK, "'%s' accepted", path_esc(c->src, c->len))) {
            is_str(dst, dst_len, c->want, "'%s' -> '%s'",
                   path_esc(c->src, c->len), c->want);

        } else {
            ok(0, "'%s' -> '%s'", path_esc(c->src, c->len), c->want);
        }

        free(src);
        free(dst);
    }

    diag("%zu path cases", gn_nelems(path_cases));
}


/* ---- upstream response heads ------------------------------------------ */

typedef struct {
    const char  *in;
    gn_int_t     rc;
    gn_uint_t    status;
    off_t        clen;
    gn_uint_t    chunked;
    gn_uint_t    keepalive;
    gn_uint_t    nheaders;
} resp_case_t;

static const resp_case_t  resp_cases[] = {
    { "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", GN_OK, 200, 5, 0, 1, 1 },
    { "HTTP/1.1 204 No Content\r\n\r\n", GN_OK, 204, -1, 0, 1, 0 },
    { "HTTP/1.1 404\r\n\r\n", GN_OK, 404, -1, 0, 1, 0 },
    { "HTTP/1.1 200 \r\n\r\n", GN_OK, 200, -1, 0, 1, 0 },
    { "HTTP/1.1 599 x\r\n\r\n", GN_OK, 599, -1, 0, 1, 0 },
    { "HTTP/1.1 100 Continue\r\n\r\n", GN_OK, 100, -1, 0, 1, 0 },
    { "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", GN_OK, 200, 0, 0, 0, 1 },
    { "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n",
      GN_OK, 200, -1, 0, 1, 1 },
    { "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", GN_OK, 200, -1, 0, 0, 1 },
    { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n",
      GN_OK, 200, -1, 1, 1, 2 },
    { "HTTP/1.1 200 OK\r\nX: \t tab\t\r\n\r\n", GN_OK, 200, -1, 0, 1, 1 },
    /* errors: the proxy answers 502 */
    { "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
      GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked"
      "\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
      GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
      GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
      GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\r\nX : a\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\nX: a\n\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 O\x01K\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 20 OK\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 2000 OK\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 600 OK\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 099 OK\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/2.0 200 OK\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1  200 OK\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "ICY 200 OK\r\n\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
    { "HTTP/1.1 200 OK\r\nX: a\r\n", GN_ERROR, 0, 0, 0, 0, 0 },
};


static void
test_response(void)
{
    const resp_case_t  *c;
    gn_http_head_t      h;
    gn_http_header_t    hdrs[4];
    u_char              buf[256];
    size_t              i, len;
    gn_int_t            rc;

    for (i = 0; i < gn_nelems(resp_cases); i++) {
        c = &resp_cases[i];
        len = strlen(c->in);
        memcpy(buf, c->in, len);
        rc = gn_http_parse_response(&h, buf, len, hdrs, gn_nelems(hdrs));
        is_int(rc, c->rc, "response %zu: result (%s)", i,
               rc == GN_OK ? "ok" : h.err);
        if (rc != GN_OK || c->rc != GN_OK) {
            ok(rc != GN_OK || h.err == NULL, "response %zu: no error text "
               "on success", i);
            continue;
        }
        is_int(h.status, c->status, "response %zu: status", i);
        is_int(h.content_length, c->clen, "response %zu: length", i);
        is_int(h.chunked, c->chunked, "response %zu: chunked", i);
        is_int(h.keepalive, c->keepalive, "response %zu: keep-alive", i);
        is_int(h.nheaders, c->nheaders, "response %zu: fields", i);
    }

    len = strlen("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n"
                 "E: 5\r\n\r\n");
    memcpy(buf, "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n"
           "E: 5\r\n\r\n", len);
    is_int(gn_http_parse_response(&h, buf, len, hdrs, gn_nelems(hdrs)),
           GN_ERROR, "more fields than the caller has room for");

    memcpy(buf, "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", 27);
    is_int(gn_http_parse_response(&h, buf, 27, hdrs, gn_nelems(hdrs)),
           GN_ERROR, "a NUL in a field's value");

    len = strlen("HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n");
    memcpy(buf, "HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n", len);
    rc = gn_http_parse_response(&h, buf, len, hdrs, gn_nelems(hdrs));
    ok(rc == GN_OK && h.nheaders == 1
       && gn_str_eq(&hdrs[0].value, "/x"), "a field's value, in place");

    diag("%zu response cases", gn_nelems(resp_cases));
}


/* CGI heads (a FastCGI responder's): Status, Location, LF line ends. */
typedef struct {
    const char  *in;
    gn_int_t     rc;
    gn_uint_t    status;
    off_t        clen;
    gn_uint_t    nheaders;
} cgi_case_t;

static const cgi_case_t  cgi_cases[] = {
    { "Content-Type: text/html\r\n\r\n", GN_OK, 200, -1, 1 },
    { "Content-Type: text/html\n\n", GN_OK, 200, -1, 1 },
    { "Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\n",
      GN_OK, 404, -1, 2 },
    { "Status: 503\r\n\r\n", GN_OK, 503, -1, 1 },
    { "Location: /elsewhere\r\n\r\n", GN_OK, 302, -1, 1 },
    { "Status: 301 Moved\nLocation: http://a/\n\n", GN_OK, 301, -1, 2 },
    { "Content-Length: 12\r\nX-A: b\r\n\r\n", GN_OK, 200, 12, 2 },
    /* errors: 502 */
    { "\r\n", GN_ERROR, 0, 0, 0 },
    { "Status: 99\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Status: 100 Continue\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Status: 600\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Status: 200OK\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Status: abc\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Status: 200\r\nStatus: 404\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Content-Length: x\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "Transfer-Encoding: chunked\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "no colon here\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "X : a\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "X: a\r\n b\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "X: a\x01\r\n\r\n", GN_ERROR, 0, 0, 0 },
    { "<html>body without a head\n\n", GN_ERROR, 0, 0, 0 },
    { "X: a\r\n", GN_ERROR, 0, 0, 0 },
};


static void
test_cgi(void)
{
    const cgi_case_t  *c;
    gn_http_head_t     h;
    gn_http_header_t   hdrs[4];
    u_char             buf[256];
    size_t             i, len, end;
    gn_int_t           rc;

    for (i = 0; i < gn_nelems(cgi_cases); i++) {
        c = &cgi_cases[i];
        len = strlen(c->in);
        memcpy(buf, c->in, len);
        rc = gn_http_parse_cgi(&h, buf, len, hdrs, gn_nelems(hdrs));
        is_int(rc, c->rc, "cgi %zu: result (%s)", i,
               rc == GN_OK ? "ok" : h.err);
        if (rc != GN_OK || c->rc != GN_OK) {
            continue;
        }
        is_int(h.status, c->status, "cgi %zu: status", i);
        is_int(h.content_length, c->clen, "cgi %zu: length", i);
        is_int(h.nheaders, c->nheaders, "cgi %zu: fields", i);
    }

    /* the end of a head, looked for as bytes come */
    len = strlen("A: 1\r\nB: 2\r\n\r\nbody");
    memcpy(buf, "A: 1\r\nB: 2\r\n\r\nbody", len);
    is_int(gn_http_cgi_head_end(buf, len, 0), 14, "head end, CRLF");
    for (end = 0, i = 1; i <= len && end == 0; i++) {
        end = gn_http_cgi_head_end(buf, i, i - 1);
    }
    is_int(end, 14, "head end found byte by byte");
    is_int(i - 1, 14, "... with its last byte");
    is_int(gn_http_cgi_head_end((const u_char *) "A: 1\nB: 2\n\nx", 12, 0),
           11, "head end, LF");
    is_int(gn_http_cgi_head_end((const u_char *) "A: 1\nB: 2\n\r\nx", 13,
                                9), 12, "head end, LF CR LF from the middle");
    is_int(gn_http_cgi_head_end((const u_char *) "A: 1\r\nB: 2\r\n", 12, 0),
           0, "no end yet");
    is_int(gn_http_cgi_head_end((const u_char *) "\r\nbody", 6, 0), 0,
           "an empty head has no LF before its empty line: not found here");

    len = strlen("Status: 404\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n");
    memcpy(buf, "Status: 404\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n",
           len);
    is_int(gn_http_parse_cgi(&h, buf, len, hdrs, gn_nelems(hdrs)),
           GN_ERROR, "cgi: more fields than the caller has room for");

    diag("%zu cgi cases", gn_nelems(cgi_cases));
}


/* Query arguments, cookies and percent-decoding (the ABI 1.8 helpers):
 * want NULL is absent; inputs are exact-size copies for ASan. */
typedef struct {
    const char  *in;
    const char  *name;
    const char  *want;
} lookup_case_t;

static lookup_case_t  arg_cases[] = {
    { "a=1&b=&c", "a", "1" },
    { "a=1&b=&c", "b", "" },
    { "a=1&b=&c", "c", "" },
    { "a=1&b=&c", "d", NULL },
    { "a=1&a=2", "a", "1" },
    { "aa=1&a=2", "a", "2" },
    { "xa=1", "a", NULL },
    { "a=x=y&b", "a", "x=y" },
    { "A=1", "a", NULL },
    { "a+b=1", "a b", NULL },
    { "q=%41+b", "q", "%41+b" },
    { "&&a=1&", "a", "1" },
    { "=1", "", NULL },
    { "", "a", NULL },
};

static lookup_case_t  cookie_cases[] = {
    { "a=1; b=2", "a", "1" },
    { "a=1; b=2", "b", "2" },
    { "a=1;b=2", "b", "2" },
    { " a = 1 ;\tb=2 ", "a", "1" },
    { "a=1; b=2", "c", NULL },
    { "ab=1; b=2", "b", "2" },
    { "b; b=3", "b", "3" },
    { "s=\"q v\"", "s", "\"q v\"" },
    { "e=; f=1", "e", "" },
    { "A=1", "a", NULL },
    { "a=1; a=2", "a", "1" },
    { "", "a", NULL },
};


static void
run_lookup(lookup_case_t *c, gn_uint_t cookie)
{
    gn_str_t   in, v;
    gn_int_t   rc;
    u_char    *copy;
    size_t     n = strlen(c->in);

    copy = malloc(n ? n : 1);
    memcpy(copy, c->in, n);
    in.data = copy;
    in.len = n;

    rc = cookie ? gn_http_cookie(&in, (u_char *) c->name, strlen(c->name), &v)
                : gn_http_arg(&in, (u_char *) c->name, strlen(c->name), &v);

    if (c->want == NULL) {
        ok(rc == GN_DECLINED && v.data == NULL && v.len == 0,
           "%s '%s' in '%s': absent", cookie ? "cookie" : "arg", c->name,
           c->in);
    } else {
        ok(rc == GN_OK && v.data != NULL, "%s '%s' in '%s': found",
           cookie ? "cookie" : "arg", c->name, c->in);
        is_str(v.data, v.len, c->want, "... its value");
    }

    free(copy);
}


static void
test_args_cookies(void)
{
    static const struct {
        const char  *in;
        gn_uint_t    plus;
        const char  *want;
        size_t       want_len;
    } un[] = {
        { "a%41b", 0, "aAb", 3 },
        { "%7e%7E", 0, "~~", 2 },
        { "a+b%2B", 1, "a b+", 4 },
        { "a+b", 0, "a+b", 3 },
        { "%zz%4", 0, "%zz%4", 5 },
        { "x%", 0, "x%", 2 },
        { "%00z", 0, "\0z", 2 },
        { "%%41", 0, "%A", 2 },
        { "", 0, "", 0 },
    };
    gn_uint_t  i;
    u_char    *src, *dst;
    size_t     n, len;
    gn_str_t   none = { 0, NULL }, v;

    for (i = 0; i < gn_nelems(arg_cases); i++) {
        run_lookup(&arg_cases[i], 0);
    }
    for (i = 0; i < gn_nelems(cookie_cases); i++) {
        run_lookup(&cookie_cases[i], 1);
    }

    ok(gn_http_arg(&none, (u_char *) "a", 1, &v) == GN_DECLINED
       && v.data == NULL, "arg: no query at all");

    for (i = 0; i < gn_nelems(un); i++) {
        n = strlen(un[i].in);
        src = malloc(n ? n : 1);
        dst = malloc(n ? n : 1);
        memcpy(src, un[i].in, n);
        len = gn_http_unescape(dst, src, n, un[i].plus);
        is_int((gn_int_t) gn_http_unescape(NULL, src, n, un[i].plus),
               (gn_int_t) len, "unescape '%s': measured as written",
               un[i].in);
        ok(len == un[i].want_len && memcmp(dst, un[i].want, len) == 0,
           "unescape '%s'%s", un[i].in, un[i].plus ? " (plus)" : "");
        free(src);
        free(dst);
    }
}


/* gn_http_head_crlf_end: the end of a response head, found whole, and
 * as it comes in pieces of every size (each call told what the last one
 * saw), at the same place; a bare LF never ends it. */
static void
test_crlf_end(void)
{
    static const char  *heads[] = {
        "HTTP/1.1 200 OK\r\nA: 1\r\n\r\nbody\r\n\r\n",
        "\r\n\r\n",
        "HTTP/1.1 204 x\r\n\r\n",
        "A: 1\n\nB: 2\r\n\n\r\nC: 3\r\r\n\r\n\r\n"
    };
    static const size_t  want[] = { 25, 4, 18, 24 };
    const u_char        *b;
    size_t               i, len, step, at, got, seen;
    gn_uint_t            bad = 0;

    for (i = 0; i < gn_nelems(heads); i++) {
        b = (const u_char *) heads[i];
        len = strlen(heads[i]);
        if (gn_http_head_crlf_end(b, len, 0) != want[i]) {
            diag("head %zu: whole: %zu", i, gn_http_head_crlf_end(b, len, 0));
            bad++;
        }
        for (step = 1; step <= len; step++) {
            got = 0;
            for (seen = 0, at = step; got == 0; at += step) {
                at = gn_min(at, len);
                got = gn_http_head_crlf_end(b, at, seen);
                seen = at;
                if (at == len) {
                    break;
                }
            }
            if (got != want[i]) {
                diag("head %zu: in pieces of %zu: %zu", i, step, got);
                bad++;
            }
        }
    }
    ok(bad == 0, "head_crlf_end: whole and in pieces of every size");
    ok(gn_http_head_crlf_end((const u_char *) "A: 1\n\nB: 2\r\n", 13, 0)
       == 0, "head_crlf_end: no end yet, bare LFs ignored");
}


/*
 * Which limit a head breaks first decides the reason logged, and the
 * scan checks a run of plain bytes at once: the reason must be the one
 * a byte-by-byte check gives, however the head arrives. LIM_SMALL: a
 * field line of 40 bytes at most, a head of 128. The long field line
 * starts at 101: the head's limit is passed at 128, before the field's
 * (at 141); a field line that starts at 25 passes its own first (65).
 */
static void
test_scan_first_limit(void)
{
    static const struct {
        const char  *head;
        const char  *err;
    } t[] = {
        { "GET / HTTP/1.1\r\nHost: a\r\n"
          "X-A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n"
          "X-C: ccccccccccccccccccccccccccccccc\r\n"
          "X-B: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
          "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n\r\n",
          "request head too large" },
        { "GET / HTTP/1.1\r\nHost: a\r\n"
          "X-B: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
          "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\r\n\r\n",
          "header field too large" }
    };
    size_t          i, len, k, head_len;
    gn_int_t        rc;
    gn_uint_t       bad;
    gn_http_scan_t  s;

    for (i = 0; i < gn_nelems(t); i++) {
        len = strlen(t[i].head);
        bad = 0;
        for (k = 1; k <= len; k++) {        /* k bytes, then the rest */
            memset(&s, 0, sizeof(s));
            rc = gn_http_parse_head_end(&s, (const u_char *) t[i].head, k,
                                        &limits[LIM_SMALL], &head_len);
            if (rc == GN_AGAIN) {
                rc = gn_http_parse_head_end(&s, (const u_char *) t[i].head,
                                            len, &limits[LIM_SMALL],
                                            &head_len);
            }
            if (rc != 431 || s.err == NULL || strcmp(s.err, t[i].err) != 0) {
                diag("split at %zu: %d %s", k, (int) rc,
                     s.err ? s.err : "(none)");
                bad++;
            }
        }
        ok(bad == 0, "scan: 431 \"%s\", split anywhere", t[i].err);
    }
}


/*
 * Every byte value, in a field name and in a field value at every
 * position of values 1 to 20 bytes long (the value check looks at eight
 * bytes at a time, the name check at a bitmap): a name takes exactly
 * the tchars of RFC 9110 5.6.2, a value every byte but the controls
 * other than HTAB, and DEL (5.5).
 */
static void
test_byte_classes(void)
{
    static const char  tchars[] = "!#$%&'*+-.^_`|~";
    u_char             buf[96], b;
    size_t             n, i, len, bad_name, bad_value;
    int                c;
    gn_int_t           rc, want;
    gn_http_head_t     h;
    gn_http_header_t   hdrs[8];

    bad_name = 0;
    bad_value = 0;
    for (c = 0; c < 256; c++) {
        b = (u_char) c;

        want = ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c != 0 && strchr(tchars, c) != NULL));
        if (gn_http_token(&b, 1) != want) {
            diag("byte 0x%02x: token %d", c, (int) !want);
            bad_name++;
        }
        len = (size_t) snprintf((char *) buf, sizeof(buf),
                                "GET / HTTP/1.1\r\nHost: a\r\nX%cY: 1"
                                "\r\n\r\n", c ? c : '@');
        if (c == 0) {
            buf[26] = 0;
        }
        rc = gn_http_parse_head(&h, buf, len, &limits[0], hdrs, 8);
        if (c != ':' && (rc == GN_OK) != want) {    /* "X:Y: 1" is good */
            diag("byte 0x%02x in a name: %d", c, (int) rc);
            bad_name++;
        }

        want = !((c < 0x20 && c != '\t') || c == 0x7f);
        for (n = 1; n <= 20; n++) {
            for (i = 0; i < n; i++) {
                len = (size_t) snprintf((char *) buf, sizeof(buf),
                                        "GET / HTTP/1.1\r\nHost: a\r\n"
                                        "X: %.*s\r\n\r\n", (int) n,
                                        "vvvvvvvvvvvvvvvvvvvv");
                buf[28 + i] = b;
                rc = gn_http_parse_head(&h, buf, len, &limits[0], hdrs, 8);
                if ((rc == GN_OK) != want) {
                    diag("byte 0x%02x at %zu of %zu in a value: %d", c, i, n,
                         (int) rc);
                    bad_value++;
                }
            }
        }
    }

    is_int((gn_int_t) bad_name, 0, "bytes: a field name takes the tchars, "
           "and only them");
    is_int((gn_int_t) bad_value, 0, "bytes: a field value takes all but "
           "controls (HTAB allowed) and DEL, at any place");
}


int
main(void)
{
    size_t  i;

    for (i = 0; i < gn_nelems(cases); i++) {
        run_head_case(&cases[i]);
    }

    diag("%zu request-head cases", gn_nelems(cases));

    test_head_misc();
    test_head_pipeline();
    test_head_linear();
    test_byte_classes();
    test_scan_first_limit();
    test_crlf_end();

    for (i = 0; i < gn_nelems(chunk_cases); i++) {
        run_chunk_case(&chunk_cases[i]);
    }

    diag("%zu chunked cases", gn_nelems(chunk_cases));

    test_chunked_limits();
    test_host_name();
    test_normalize_path();
    test_response();
    test_cgi();
    test_args_cookies();

    return done_testing();
}
