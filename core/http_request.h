/*
 * A request, whatever carries it: its head, the server and location it
 * maps to, its response being set up, and the stream it reaches its
 * client through. HTTP/1 makes them (http1.c); the phases every request
 * goes through are http_core.c's; handlers (static files, modules,
 * rules, access) work on this object only.
 */

#ifndef GN_CORE_HTTP_REQUEST_H_INCLUDED
#define GN_CORE_HTTP_REQUEST_H_INCLUDED

#include "gn_config.h"

#include "conn.h"
#include "cycle.h"
#include "http_parse.h"


typedef struct gn_http_request_s  gn_http_request_t;

typedef gn_int_t (*gn_http_handler_pt)(gn_http_request_t *r);

/* A piece of the response: memory (fd == -1) or a range of a file. */
typedef struct {
    u_char              *pos;            /* memory: next byte */
    size_t               len;            /* bytes left to send */
    int                  fd;             /* file, or -1 */
    off_t                off;            /* file: next offset */
} gn_http_seg_t;

#define GN_HTTP_SEGS_INLINE   3

/*
 * How a request reaches its client: a request does not own its
 * connection. HTTP/1 implements this on the connection (http1.c),
 * HTTP/2 on a stream of one (http2.c), t/unit/test_stream on memory.
 * Handlers set up the response in r (status, headers, the body as
 * segments with gn_http_add_mem and gn_http_add_file, or streamed
 * through frame) and call these; none of them touches r->c's I/O or
 * state (r->c gives the connection's properties: log, peer, listener,
 * TLS).
 */
typedef struct {
    /* The server block is chosen (r->srv): the limits of its level on
     * what the stream received (HTTP/1: the head is scanned again when
     * they differ from the listener's default server's). GN_OK or the
     * status to answer (414, 431). */
    gn_int_t  (*limits)(gn_http_request_t *r);

    /* The response in r is final up to its head: send the head, then
     * the body segments queued; a streamed response (r->streaming) goes
     * on with send as frames are queued, and ends after frame_end. */
    void      (*respond)(gn_http_request_t *r);

    /* More of a streamed response is queued: send what can go now. */
    void      (*send)(gn_http_request_t *r);

    /* Queue streamed body bytes (len > 0) in the stream's framing:
     * HTTP/1.1 a chunk, HTTP/1.0 the bytes as they are. GN_OK or
     * GN_ERROR (memory). */
    gn_int_t  (*frame)(gn_http_request_t *r, const u_char *data,
                       size_t len);

    /* Queue the end of a streamed body (HTTP/1.1: the last chunk). */
    gn_int_t  (*frame_end)(gn_http_request_t *r);

    /* Read the request body: each piece to gn_http_module_body() as it
     * arrives, then gn_http_module_body_done(); reading follows the
     * handler (nothing is buffered beyond what one read brings). */
    void      (*read_body)(gn_http_request_t *r);

    /* The handler has not finished: wait for it (send_timeout); a
     * client that is gone ends the request, at once: the caller must not
     * touch r after wait returns. */
    void      (*wait)(gn_http_request_t *r);

    /* End the request now, without (the rest of) a response. */
    void      (*abort)(gn_http_request_t *r);

    /* The connection leaves HTTP (HTTP/1 only, else NULL): an Upgrade
     * answered with 101, whose head the caller has queued into its own
     * relay. r is logged (its status and bytes as set) and freed; what
     * the client sent past r's head stays at the front of c->buf
     * (c->buf_len bytes); from then on c's events go to handler and its
     * close to on_close, with c->data = data and c->state
     * GN_CONN_TUNNEL. The caller must not touch r again. */
    void      (*tunnel)(gn_http_request_t *r, gn_conn_handler_pt handler,
                        gn_conn_handler_pt on_close, void *data);

    /* Whether frame() would queue r's bytes as they are, with no
     * framing or coding of its own (NULL: never), so that they may be
     * read straight into r->sbuf (gn_http_module_room). */
    gn_uint_t (*verbatim)(gn_http_request_t *r);
} gn_http_stream_t;

struct gn_http_request_s {
    gn_conn_t           *c;
    const gn_http_stream_t  *stream;     /* the way to the client */
    gn_pool_t           *pool;
    gn_http_head_t       head;
    u_char              *raw;            /* the head as received, */
    size_t               head_len;       /* ... its length */
    gn_uint_t            conn_requests;  /* on its connection, so far */
    gn_uint_t            stream_id;      /* HTTP/2: its stream; else 0 */
    gn_uint_t            close;          /* the connection closes after */
    gn_uint_t            linger;         /* ... lingering (input unread) */
    gn_srv_conf_t       *srv;
    gn_loc_conf_t       *loc;
    /* the client's address when not the connection's peer (realip.h):
     * NULL, else as gn_http_peer() says */
    struct sockaddr     *peer;
    gn_str_t             peer_text;
    gn_str_t             uri;            /* decoded, normalised path */
    gn_uint_t            uri_changed;    /* ... by a rewrite, index,
                                            try_files: the request may
                                            enter `internal` locations */
    gn_loc_conf_t       *named;          /* try_files' @name to enter */
    gn_uint_t            internal;       /* ... entered: the URI is the
                                            client's, the request is
                                            internal all the same */
    void                *loc_caps;       /* r->loc's regex's captures
                                            (gn_regex_caps_t), or NULL */
    gn_uint_t            redirects;      /* internal, so far */
    gn_uint_t            limited;        /* limit.c's progress */
    gn_msec_t            limit_delay;    /* ... what limit_req asks */
    gn_str_t             fdir;           /* the static files: the file */
    gn_str_t             fpath;          /* r->uri names (http_file.h) */
    struct gn_fc_entry_s *body_file;     /* ... whose whole content the
                                            body is (gzip's cache key) */
    void                *gzip;           /* gzip.c's stream, or NULL */
    gn_msec_t            start_msec;

    /* request body: what is left to read or discard */
    off_t                body_left;      /* Content-Length bytes left */
    gn_http_chunked_t    chunked;
    gn_uint_t            has_body;       /* a body follows the head */
    gn_uint_t            body_done;      /* ... and it has been read */

    /* response */
    gn_uint_t            status;
    off_t                content_length; /* -1: none */
    gn_str_t             content_type;
    gn_str_t             location;       /* Location: */
    time_t               last_modified;  /* -1: none */
    gn_str_t             etag;
    gn_str_t             extra_headers;  /* raw "Name: value\r\n" lines */
    gn_uint_t            keepalive;
    gn_uint_t            header_only;
    gn_uint_t            header_sent;    /* head built: headers are final */
    gn_uint_t            accept_ranges;
    gn_uint_t            error_page_done;

    struct gn_http_upstream_s  *upstream;  /* proxied: what the log
                                              says of it; else NULL */

    /* a module's request (handler NAME), or the proxy's */
    void                *module;         /* gn_mod_t */
    gn_uint_t            in_module;      /* module code on the stack */
    gn_uint_t            pending;        /* handler returned GN_AGAIN */
    gn_uint_t            finished;       /* finish() called */
    gn_uint_t            error_status;   /* finish() with an error */
    gn_uint_t            cut;            /* ... after the response began
                                            (upstream): closed, never
                                            an error page instead */
    gn_uint_t            streaming;      /* flush(): head sent, chunks */
    gn_uint_t            stream_length;  /* ... of content_length bytes,
                                            unframed (a proxied body) */
    gn_uint_t            chunked_out;    /* ... with chunked encoding */
    gn_uint_t            trailer_added;
    gn_uint_t            reading_body;   /* the stream reads it for body_cb */
    gn_array_t          *resp_headers;   /* of gn_http_header_t */
    void                *body_cb;        /* gn_body_pt */
    void                *body_arg;
    size_t               stream_high;    /* write() says GN_AGAIN with
                                            more waiting (0: 256 KiB) */
    u_char              *sbuf;           /* streamed bytes not yet sent */
    size_t               sbuf_pos;
    size_t               sbuf_last;
    size_t               sbuf_cap;
    gn_timer_t           kick;           /* resume after a module call */
    gn_timer_t           drained;        /* on_drained's callback due */
    void               (*drained_cb)(void);  /* a gn_drained_pt, or NULL */
    void                *drained_arg;

    gn_http_seg_t       *segs;           /* [0] is the head */
    gn_uint_t            nsegs;
    gn_uint_t            segs_cap;
    gn_uint_t            cur;            /* first segment not yet sent */
    gn_http_seg_t        seg_inline[GN_HTTP_SEGS_INLINE];
    off_t                bytes_sent;
    off_t                header_bytes;

    /* the end of a request the connection closes under (see
     * gn_http_closed): the status its log line shows when no byte of a
     * response went out, and whether the line is written */
    gn_uint_t            close_status;
    gn_uint_t            logged;
    gn_str_t             module_log;     /* $module_log (api log_note) */
};



/* A proxied request's tries (proxy.c fills them, the access log renders
 * $upstream_* from them, one value per try joined by ", ", nginx's
 * form, only when a log asks), $proxy_host and FastCGI's $fastcgi_*. */
#define GN_HTTP_UPSTREAM_TRIES  8       /* the tries the log shows */

typedef struct {
    const gn_str_t      *addr;           /* the server's name */
    gn_uint_t            status;         /* its status, or the one the
                                            try failed with (502, 504) */
    gn_msec_t            response;       /* ms from its start */
    gn_msec_t            connect;        /* ... to connected; -1: never */
} gn_http_upstream_try_t;

typedef struct gn_http_upstream_s {
    gn_http_upstream_try_t  tries[GN_HTTP_UPSTREAM_TRIES];
    gn_uint_t            ntries;         /* made (the first 8 kept) */
    gn_str_t             host;           /* $proxy_host */
    gn_str_t             script_name;    /* $fastcgi_script_name */
    gn_str_t             path_info;      /* $fastcgi_path_info */
    off_t                body_length;    /* $content_length of a body
                                            read whole; -1: none */
} gn_http_upstream_t;


/* $host, as nginx's (the access log, rewrite): the name the request
 * asked for without its port, else the server's first name, else "".
 * In the case it came in: writers put it in lower case. */
gn_str_t gn_http_request_host(gn_http_request_t *r);


/* The module side of a request (api.c calls these). */
struct gn_api_s;
gn_int_t gn_http_module_read_body(gn_http_request_t *r, void *cb,
    void *arg);
gn_int_t gn_http_module_header(gn_http_request_t *r, const char *name,
    const char *value, gn_uint_t replace);
gn_int_t gn_http_module_write(gn_http_request_t *r, const void *data,
    size_t len);
/*
 * A module's streamed bytes read in place (no copy): at least len bytes
 * of room at the end of r's queue, *size in all (size may be NULL),
 * when r streams and its stream queues bytes as they are (HTTP/2,
 * HTTP/1.0, HTTP/1.1 with a length; not chunks, not gzip), else NULL
 * (gn_http_module_write them).
 * gn_http_module_commit then queues the n bytes written there, and
 * returns as gn_http_module_write does: GN_OK, or GN_AGAIN when more
 * than the stream's high mark wait.
 */
u_char *gn_http_module_room(gn_http_request_t *r, size_t len, size_t *size);
gn_int_t gn_http_module_commit(gn_http_request_t *r, size_t n);
gn_int_t gn_http_module_send_file(gn_http_request_t *r, const char *path,
    int64_t offset, int64_t length);
gn_int_t gn_http_module_send_fd(gn_http_request_t *r, int fd,
    int64_t offset, int64_t length);
gn_int_t gn_http_module_read_file(gn_http_request_t *r, const char *path,
    size_t max, const u_char **data, size_t *len);
gn_int_t gn_http_module_flush(gn_http_request_t *r);
gn_int_t gn_http_module_finish(gn_http_request_t *r, int status);
/* on_drained: cb (a gn_drained_pt) once r's unsent streamed bytes are
 * GN_DRAINED_LOW or fewer (half of r->stream_high when that is less).
 * GN_OK, or GN_ERROR after finish. */
gn_int_t gn_http_module_on_drained(gn_http_request_t *r, void (*cb)(void),
    void *arg);
void gn_http_module_enter(gn_http_request_t *r);
void gn_http_module_leave(gn_http_request_t *r);

/* Appends a memory or file segment to the response body. Returns GN_OK
 * or GN_ERROR (out of memory). */
gn_int_t gn_http_add_mem(gn_http_request_t *r, u_char *p, size_t len);
gn_int_t gn_http_add_file(gn_http_request_t *r, int fd, off_t off,
    off_t len);

/* The "http" feature's part of a level (feature.h): keepalive_*,
 * client_*_timeout, send_timeout, client_max_*, server_tokens, http2*
 * (HTTP/2 builds only: 0 otherwise). */
typedef struct {
    gn_msec_t            keepalive_timeout;
    gn_int_t             keepalive_requests;
    gn_msec_t            client_header_timeout;
    gn_msec_t            client_body_timeout;
    gn_msec_t            send_timeout;
    size_t               client_max_request_line;
    size_t               client_max_header_size;
    gn_int_t             client_max_headers;
    size_t               client_max_body_size;
    gn_flag_t            server_tokens;
    gn_flag_t            http2;            /* offered by ALPN */
    gn_int_t             http2_max_concurrent_streams;
    gn_int_t             http2_max_glitches;
} gn_http_conf_t;

/* The client's address: the connection's peer, or what a trusted proxy
 * said it is (realip.h). */
#define gn_http_peer(r)                                                       \
    ((r)->peer != NULL ? (r)->peer : (struct sockaddr *) &(r)->c->peer)

static inline gn_str_t
gn_http_peer_text(const struct gn_http_request_s *r)
{
    gn_str_t  t;

    if (r->peer != NULL) {
        return r->peer_text;
    }
    t.data = (u_char *) r->c->addr_text;
    t.len = r->c->addr_len;
    return t;
}

#define gn_http_conf(lc)    ((gn_http_conf_t *) (lc)->conf[GN_FEATURE_HTTP])
#define gn_http_offset(f)   offsetof(gn_http_conf_t, f)

/* The registry's "http": those directives, plain slots all. */
extern const gn_feature_t  gn_http_feature;

#endif /* GN_CORE_HTTP_REQUEST_H_INCLUDED */
