/*
 * FastCGI 1.0 records (the FastCGI Specification, 1996), for
 * `fastcgi_pass` (proxy.c): what a request to a responder is made of,
 * and the decoding of what the responder sends back.
 *
 * One request at a time on a connection, always request id 1 (as
 * nginx): a pooled connection (FCGI_KEEP_CONN) carries its requests one
 * after the other.
 *
 * Pure layer: no I/O, no logging.
 */

#ifndef GN_CORE_FASTCGI_H_INCLUDED
#define GN_CORE_FASTCGI_H_INCLUDED

#include "gn_config.h"


#define GN_FCGI_BEGIN_REQUEST      1
#define GN_FCGI_ABORT_REQUEST      2
#define GN_FCGI_END_REQUEST        3
#define GN_FCGI_PARAMS             4
#define GN_FCGI_STDIN              5
#define GN_FCGI_STDOUT             6
#define GN_FCGI_STDERR             7

#define GN_FCGI_HEADER_LEN         8
#define GN_FCGI_BEGIN_LEN          16     /* header and body */
#define GN_FCGI_RECORD_MAX         65535  /* content bytes per record */

#define GN_FCGI_REQUEST_COMPLETE   0      /* END_REQUEST protocolStatus */


/* A BEGIN_REQUEST record, role responder, FCGI_KEEP_CONN if keep: 16
 * bytes at p. Returns p + 16. */
u_char *gn_fcgi_begin(u_char *p, gn_uint_t keep);

/* The lengths that start a name-value pair of a PARAMS stream (1 byte
 * each up to 127, else 4), name and value to follow: written at p, or
 * measured (p NULL). Returns their size. */
size_t gn_fcgi_pair_len(u_char *p, size_t nlen, size_t vlen);

/* The records of a stream of `type` carrying data[0..len) (none when
 * len is 0), then, when `last`, its empty end record: written at p, or
 * measured (p NULL). Content is padded to multiples of 8 bytes. Returns
 * the length. */
size_t gn_fcgi_stream(u_char *p, gn_uint_t type, const u_char *data,
    size_t len, gn_uint_t last);


/* The decoder of a responder's records, kept across reads. */
typedef struct {
    u_char      hdr[GN_FCGI_HEADER_LEN];   /* a header being read */
    size_t      hlen;
    gn_uint_t   type;                      /* of the current record */
    size_t      content;                   /* its content left */
    size_t      padding;                   /* ... then its padding */
    u_char      end[8];                    /* END_REQUEST's body */
    size_t      end_len;
    gn_uint_t   stdout_ended;              /* the empty STDOUT came */
    gn_uint_t   app_status;                /* END_REQUEST's */
    gn_uint_t   protocol_status;
} gn_fcgi_dec_t;

/* Called with each piece of STDERR content as it is decoded. */
typedef void (*gn_fcgi_stderr_pt)(void *data, const u_char *p, size_t len);

/*
 * Decodes buf[0..len), the next bytes from the responder: the STDOUT
 * content they carry is moved to buf[0..*out) (in place, in order),
 * STDERR content given to err(data, ...). Records of other request ids
 * than 1 of types the request does not use are skipped (management
 * records). Returns GN_OK (more to come), GN_DONE (END_REQUEST read
 * whole: *rest bytes followed it in buf, which a responder must not
 * send), or GN_ERROR with *why: a version other than 1, a STDOUT,
 * STDERR or END_REQUEST of another request, an END_REQUEST of another
 * length than 8, STDOUT after its end.
 */
gn_int_t gn_fcgi_decode(gn_fcgi_dec_t *d, u_char *buf, size_t len,
    size_t *out, size_t *rest, gn_fcgi_stderr_pt err, void *data,
    const char **why);

#endif /* GN_CORE_FASTCGI_H_INCLUDED */
