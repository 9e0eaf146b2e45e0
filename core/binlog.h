/*
 * Binary access log records (Zeus's Binary CLF in spirit): a 16-byte file
 * header, then one self-delimiting record per request. Everything is
 * little-endian, whatever the host. doc/binary-log.md is the reference
 * for the layout; GN_BINLOG_VERSION changes with any incompatible change.
 *
 * Pure: no I/O, no logging. Shared by the server (access_log.c) and
 * gannet-logcat, and by the log text escapers of both.
 */

#ifndef GN_CORE_BINLOG_H_INCLUDED
#define GN_CORE_BINLOG_H_INCLUDED

#include "gn_config.h"


#define GN_BINLOG_MAGIC        "GNBLOG"
#define GN_BINLOG_VERSION      1
#define GN_BINLOG_BOM          0x01020304u
#define GN_BINLOG_HEADER_SIZE  16
#define GN_BINLOG_FIXED_SIZE   64
#define GN_BINLOG_STR_MAX      4096      /* each string is capped */

/* The strings of the variable part, in record order. */
enum {
    GN_BINLOG_HOST = 0,
    GN_BINLOG_TARGET,
    GN_BINLOG_REFERER,
    GN_BINLOG_USER_AGENT,
    GN_BINLOG_METHOD,        /* only for a method without an id */
    GN_BINLOG_NSTR
};

#define GN_BINLOG_RECORD_MAX                                                 \
    (GN_BINLOG_FIXED_SIZE + GN_BINLOG_NSTR * (2 + GN_BINLOG_STR_MAX))

/* tls byte */
#define GN_BINLOG_TLS_NONE     0
#define GN_BINLOG_TLS_12       1
#define GN_BINLOG_TLS_13       2
#define GN_BINLOG_TLS_OTHER    3
#define GN_BINLOG_TLS_RESUMED  0x4

/* Escapes for text logs. */
#define GN_BINLOG_ESC_DEFAULT  0         /* " \ and non-printables: \xHH */
#define GN_BINLOG_ESC_JSON     1         /* JSON string rules, \u00XX */
#define GN_BINLOG_ESC_NONE     2
#define GN_BINLOG_ESC_VALUE    3         /* as NONE, but empty is "", not
                                            "-" (a header's value) */

typedef struct {
    int64_t       sec;                   /* unix time */
    uint16_t      msec;
    uint16_t      status;
    uint8_t       method;                /* gn_binlog_method_id() */
    uint8_t       version;               /* 10, 11, 20, or 0 unknown */
    uint8_t       tls;                   /* GN_BINLOG_TLS_* bits */
    u_char        addr[16];              /* IPv6, or v4-mapped */
    uint64_t      bytes_sent;
    uint64_t      body_bytes;
    uint32_t      request_time;          /* milliseconds */
    uint32_t      pid;
    gn_str_t      str[GN_BINLOG_NSTR];   /* len 0: absent */
} gn_binlog_rec_t;


/* Writes the file header (GN_BINLOG_HEADER_SIZE bytes) at p. */
void gn_binlog_header(u_char *p);

/*
 * Checks a file header. Returns GN_OK, GN_AGAIN (fewer than
 * GN_BINLOG_HEADER_SIZE bytes) or GN_ERROR with *err set to
 * "not a gannet binary log" or "unsupported format version N".
 */
gn_int_t gn_binlog_check_header(const u_char *p, size_t len,
    char *err, size_t errlen);

/* The encoded size of rec (strings capped at GN_BINLOG_STR_MAX). */
size_t gn_binlog_size(const gn_binlog_rec_t *rec);

/* Encodes rec at p (gn_binlog_size() bytes); returns the end. */
u_char *gn_binlog_encode(u_char *p, const gn_binlog_rec_t *rec);

/*
 * Decodes the record at p. Returns GN_OK with *used set; GN_AGAIN if
 * len does not hold the whole record yet; GN_ERROR with err set when
 * the bytes cannot be a record. Strings point into p.
 */
gn_int_t gn_binlog_decode(const u_char *p, size_t len, gn_binlog_rec_t *rec,
    size_t *used, char *err, size_t errlen);

/* GN_HTTP_* method bit <-> record id (0: none or unknown); names. */
uint8_t gn_binlog_method_id(gn_uint_t method);
const char *gn_binlog_method_name(uint8_t id);

/* Address text ("127.0.0.1", "::1") of a record's 16 bytes. */
size_t gn_binlog_addr_text(const u_char *addr, char *buf, size_t len);

/* The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or 0 (an
 * ASCII byte too). For the JSON escape and other text that must stay
 * valid UTF-8 whatever bytes a client or a file name holds. */
size_t gn_binlog_utf8_len(const u_char *s, size_t n);

/*
 * Copies s escaped into p, or only measures it when p is NULL. An
 * absent value (n == 0) is "-", or nothing in JSON mode.
 */
size_t gn_binlog_escape(u_char *p, const u_char *s, size_t n,
    gn_uint_t mode);

#endif /* GN_CORE_BINLOG_H_INCLUDED */
