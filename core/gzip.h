/*
 * On-the-fly gzip (nginx's gzip filter; libdeflate and zlib), for every
 * handler's response over HTTP/1.1 and HTTP/2 alike:
 *
 *   gzip on|off;                 (off)
 *   gzip_types TYPE ... | *;     (text/html, always compressed)
 *   gzip_min_length LENGTH;      (20; a response of unknown length is
 *                                 compressed whatever its length)
 *   gzip_comp_level 1..9;        (1)
 *   gzip_vary on|off;            (off) Vary: Accept-Encoding on every
 *                                 response that could be compressed
 *   gzip_cache_size SIZE;        (main level, per child; 16m; 0: off)
 *
 * A response is compressed when its status is 200, 403 or 404, its type
 * is one of gzip_types, it has no Content-Encoding (gzip_static's file,
 * an upstream's) and no Cache-Control: no-transform, the request is
 * HTTP/1.1 or later and not HEAD (HTTP/1.0 has no chunked framing:
 * nginx's gzip_http_version 1.1) and its Accept-Encoding takes gzip. It
 * then gets Content-Encoding: gzip, a weak ETag, no Accept-Ranges. A
 * Range request answered with 206 is never compressed (its ranges are
 * the original's); HEAD is not (nginx).
 *
 * How: a body set up whole (a static file, an error page, a module's
 * response that did not stream) is compressed at once and gets a
 * Content-Length; a static file's output is kept with its open-file
 * cache entry (file_cache.h's derived bytes, within gzip_cache_size), so
 * the next request for it compresses nothing. A static file larger than
 * GN_GZIP_WHOLE_MAX is compressed as it is sent, a piece at a time as
 * the client takes it. A streamed body (a module's after flush(), a
 * proxied or FastCGI response) goes through a deflate stream between
 * the request and its stream (gn_http_stream_t), flushed (Z_SYNC_FLUSH)
 * whenever the handler's output is sent, so nothing waits in zlib.
 */

#ifndef GN_CORE_GZIP_H_INCLUDED
#define GN_CORE_GZIP_H_INCLUDED

#include "gn_config.h"

#include "feature.h"


struct gn_http_request_s;

/* The "gzip" feature's part of a level (feature.h). */
typedef struct {
    gn_flag_t        enable;
    gn_array_t      *types;          /* of gn_str_t; NULL: the outer's */
    gn_uint_t        any_type;       /* merged: "*" among them */
    size_t           min_length;
    gn_int_t         comp_level;
    gn_flag_t        vary;
    size_t           cache_size;     /* main level only */
} gn_gzip_conf_t;

#define gn_gzip_conf(lc)    ((gn_gzip_conf_t *) (lc)->conf[GN_FEATURE_GZIP])

/* Static files above this are compressed as they are sent (never whole
 * in memory, never cached). */
#define GN_GZIP_WHOLE_MAX   (1024 * 1024)

/* The registry's "gzip". */
extern const gn_feature_t  gn_gzip_feature;

/* r's response is set up and about to go (stream->respond): compress
 * it when the location asks (above). GN_OK: respond; GN_DONE: r is now
 * the request of gzip's own handler (r->module), which sends the file
 * compressed as the client takes it: the caller runs it
 * (gn_http_module_run) instead of responding; GN_ERROR: memory. */
gn_int_t gn_gzip_respond(struct gn_http_request_s *r);

/* A module's (or upstream's) response begins to stream, before its
 * first frame: compress it when the location asks (above), through a
 * deflate stream between r and r->stream. GN_OK or GN_ERROR (memory). */
gn_int_t gn_gzip_streaming(struct gn_http_request_s *r);

#endif /* GN_CORE_GZIP_H_INCLUDED */
