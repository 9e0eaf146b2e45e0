/*
 * HTTP/2 on a connection (http2.c, built with libnghttp2): the framing,
 * HPACK and flow-control bookkeeping are nghttp2's; the event loop, the
 * requests of the streams (one gn_http_request_t each, through
 * gn_http_stream_t) and the limits are Gannet's. HTTP/1 (http1.c) hands
 * a connection over: after ALPN chose "h2", or when a connection to a
 * "listen ... http2" address starts with the preface.
 */

#ifndef GN_CORE_HTTP2_H_INCLUDED
#define GN_CORE_HTTP2_H_INCLUDED

#include "gn_config.h"

#include "conn.h"

#if (GN_HAVE_HTTP2)

/* c is HTTP/2 from now on: the bytes in c->buf (a preface that HTTP/1
 * recognised) are the first of it. c->data, c->handler and c->on_close
 * are free for it. */
void gn_http2_init_conn(gn_conn_t *c);

/* Whether buf[0..len) is the client connection preface (RFC 9113 3.4):
 * GN_OK (all 24 bytes of it), GN_AGAIN (the start of it), or
 * GN_DECLINED. */
gn_int_t gn_http2_preface(const u_char *buf, size_t len);

#endif

#endif /* GN_CORE_HTTP2_H_INCLUDED */
