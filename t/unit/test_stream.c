/*
 * A second implementation of the stream interface (gn_http_stream_t,
 * http_request.h), on memory, proves it is the only way from a request
 * to its client: requests go through the phases (gn_http_core_start)
 * and their handlers -- static files, an error page, rewrite's return,
 * access rules, and a module (mod_example: a plain response, a request
 * body read through the stream, a response streamed from timers, and
 * core code's in-place writes into it, gn_http_module_room) --
 * over a connection with no I/O at all, whose ops fail the test if
 * anything calls them. What reaches the "client" is what the stream's
 * ops were given.
 */

#include "gn_config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cycle.h"
#include "conn.h"
#include "http_request.h"
#include "http_core.h"
#include "http_module.h"
#include "module.h"
#include "timer.h"
#include "t_cycle.h"
#include "../tap.h"


/* What the client got, and how. */
typedef struct {
    gn_uint_t   responded;      /* respond() calls */
    gn_uint_t   status;
    char        ctype[64];
    char        body[4096];
    size_t      len;
    gn_uint_t   streamed;       /* the response was streamed */
    gn_uint_t   ended;          /* frame_end() */
    gn_uint_t   waited;         /* wait() calls */
    gn_uint_t   aborted;
    gn_uint_t   body_reads;     /* read_body() calls */
    const char *req_body;       /* what read_body delivers */
    gn_uint_t   verbatim;       /* the stream says it takes bytes as
                                   they are */
    gn_uint_t   room_tried;     /* respond() tried the in-place room */
    gn_uint_t   room_given;     /* ... and got it */
    gn_int_t    commit_rc;
} t_client_t;

static t_client_t   t_cl;
static gn_uint_t    t_next_verbatim;  /* t_cl.verbatim of the next request */
static gn_uint_t    t_io;       /* the connection's I/O was used */
static char         t_html[] = "/tmp/gn-test-stream-XXXXXX";


/* ---- a connection without I/O ------------------------------------------- */

static ssize_t
t_recv(gn_conn_t *c, u_char *buf, size_t len)
{
    (void) c; (void) buf; (void) len;
    t_io++;
    return GN_ERROR;
}


static ssize_t
t_writev(gn_conn_t *c, struct iovec *iov, int n, int more)
{
    (void) c; (void) iov; (void) n; (void) more;
    t_io++;
    return GN_ERROR;
}


static ssize_t
t_sendfile(gn_conn_t *c, int fd, off_t *off, size_t len)
{
    (void) c; (void) fd; (void) off; (void) len;
    t_io++;
    return GN_ERROR;
}


static const gn_conn_ops_t  t_no_io = { t_recv, t_writev, t_sendfile };


/* ---- the stream, on memory ---------------------------------------------- */

static void
t_take(const u_char *p, size_t n)
{
    n = gn_min(n, sizeof(t_cl.body) - 1 - t_cl.len);
    memcpy(t_cl.body + t_cl.len, p, n);
    t_cl.len += n;
    t_cl.body[t_cl.len] = '\0';
}


/* The streamed bytes queued so far leave. */
static void
t_drain(gn_http_request_t *r)
{
    t_take(r->sbuf + r->sbuf_pos, r->sbuf_last - r->sbuf_pos);
    r->sbuf_pos = r->sbuf_last = 0;
}


static gn_int_t
t_limits(gn_http_request_t *r)
{
    (void) r;
    return GN_OK;
}


/* Core code's in-place write (gn_http_module_room/commit) at the start
 * of a streamed response: given only when the stream is verbatim. */
static void
t_room(gn_http_request_t *r)
{
    u_char  *p;
    size_t   size = 0;

    t_cl.room_tried = 1;
    p = gn_http_module_room(r, 7, &size);
    if (p == NULL) {
        return;
    }
    t_cl.room_given = size >= 7;
    memcpy(p, "direct\n", 7);
    t_cl.commit_rc = gn_http_module_commit(r, 7);
}


static void
t_respond(gn_http_request_t *r)
{
    gn_http_seg_t  *seg;
    u_char          buf[4096];
    ssize_t         n;
    gn_uint_t       i;

    t_cl.responded++;
    t_cl.status = r->status;
    snprintf(t_cl.ctype, sizeof(t_cl.ctype), "%.*s",
             (int) r->content_type.len, (char *) r->content_type.data);

    /* segments [1, nsegs): memory, or ranges of files */
    for (i = 1; i < r->nsegs; i++) {
        seg = &r->segs[i];
        if (seg->fd == -1) {
            t_take(seg->pos, seg->len);
            continue;
        }
        n = pread(seg->fd, buf, gn_min(seg->len, sizeof(buf)), seg->off);
        if (n > 0) {
            t_take(buf, (size_t) n);
        }
    }

    t_cl.streamed = r->streaming;
    if (r->streaming) {
        t_room(r);
        t_drain(r);
    }
}


static void
t_send(gn_http_request_t *r)
{
    t_drain(r);
}


static gn_int_t
t_frame(gn_http_request_t *r, const u_char *data, size_t len)
{
    return gn_http_sbuf_append(r, data, len);      /* no framing here */
}


static gn_int_t
t_frame_end(gn_http_request_t *r)
{
    (void) r;
    t_cl.ended = 1;
    return GN_OK;
}


/* The whole body at once, then its end, as HTTP/1's reader hands it. */
static void
t_read_body(gn_http_request_t *r)
{
    t_cl.body_reads++;

    if (r->module == NULL) {
        gn_http_core_body_read(r);             /* read past: static */
        return;
    }

    if (t_cl.req_body != NULL && r->body_cb != NULL) {
        gn_http_module_body(r, (u_char *) t_cl.req_body,
                            strlen(t_cl.req_body));
    }
    r->body_done = 1;
    gn_http_module_body_done(r, GN_OK);
}


static void
t_wait(gn_http_request_t *r)
{
    (void) r;
    t_cl.waited++;
}


static void
t_abort(gn_http_request_t *r)
{
    (void) r;
    t_cl.aborted++;
}


static gn_uint_t
t_verbatim(gn_http_request_t *r)
{
    (void) r;
    return t_cl.verbatim;
}


static const gn_http_stream_t  t_stream = {
    t_limits, t_respond, t_send, t_frame, t_frame_end, t_read_body, t_wait,
    t_abort, NULL, t_verbatim
};


/* ---- requests ----------------------------------------------------------- */

static gn_cycle_t  *t_cycle;
static gn_conn_t    t_conn;
static gn_pool_t   *t_pool;


/* Runs `head` (a whole request head) through the phases; for a module's
 * request that is not done at once, the timers run for up to 2 s. */
static gn_http_request_t *
t_request(const char *head, const char *body)
{
    static gn_http_header_t   hdrs[32];
    gn_http_request_t        *r;
    gn_http_limits_t          lim = { 8192, 32768, 32, 32768 };
    gn_listen_t              *ls = t_cycle->listening.elts;
    u_char                   *buf;
    size_t                    len = strlen(head);
    gn_uint_t                 i;

    memset(&t_cl, 0, sizeof(t_cl));
    t_cl.req_body = body;
    t_cl.verbatim = t_next_verbatim;
    if (t_pool != NULL) {
        gn_pool_destroy(t_pool);            /* the previous request */
    }
    t_pool = gn_pool_create(16384);
    buf = gn_pnalloc(t_pool, len);
    r = gn_pcalloc(t_pool, sizeof(gn_http_request_t));
    if (t_pool == NULL || buf == NULL || r == NULL) {
        return NULL;
    }
    memcpy(buf, head, len);

    r->c = &t_conn;
    r->stream = &t_stream;
    r->pool = t_pool;
    r->raw = buf;
    r->head_len = len;
    r->last_modified = -1;
    r->content_length = -1;
    r->start_msec = gn_current_msec;
    r->srv = ls[0].default_srv;
    r->loc = r->srv->loc;

    if (gn_http_parse_head(&r->head, buf, len, &lim, hdrs, 32) != GN_OK) {
        ok(0, "the test's head parses");
        return NULL;
    }
    r->head.headers = hdrs;

    gn_http_core_start(r);

    for (i = 0; i < 200 && r->module != NULL && !t_cl.aborted
                && !(r->finished && t_cl.responded
                     && r->sbuf_pos == r->sbuf_last); i++)
    {
        usleep(10000);
        gn_time_update();
        gn_timer_expire();
    }

    return r;
}


static void
test_static(void)
{
    gn_http_request_t  *r;

    r = t_request("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n", NULL);
    ok(r != NULL && t_cl.responded == 1, "static: responded once");
    is_int(t_cl.status, 200, "static: 200");
    is_str(t_cl.body, t_cl.len, "hello from a file\n",
           "static: the file's bytes, from its segments");
    is_str(t_cl.ctype, strlen(t_cl.ctype), "text/plain",
           "static: its type");

    r = t_request("GET /nope.txt HTTP/1.1\r\nHost: x\r\n\r\n", NULL);
    is_int(t_cl.status, 404, "error page: 404");
    is_str(t_cl.body, t_cl.len, "custom not found\n",
           "error page: error_page's file as the body");

    r = t_request("POST /a.txt HTTP/1.1\r\nHost: x\r\n"
                  "Content-Length: 5\r\n\r\n", "hello");
    is_int(t_cl.body_reads, 1, "a body for the static files: read past "
           "through the stream");
    ok(r != NULL && r->body_done && t_cl.responded == 1,
       "... then the response");
}


static void
test_rules(void)
{
    gn_http_request_t  *r;

    r = t_request("GET /r/x HTTP/1.1\r\nHost: x\r\n\r\n", NULL);
    is_int(t_cl.status, 302, "rewrite: return 302");
    ok(r != NULL && r->location.len > 0
       && strstr((char *) r->location.data, "/elsewhere") != NULL,
       "rewrite: its Location");

    r = t_request("GET /deny/x HTTP/1.1\r\nHost: x\r\n\r\n", NULL);
    is_int(t_cl.status, 403, "access: deny all is a 403");
    ok(r != NULL && t_cl.responded == 1, "access: responded");
}


static void
test_module(void)
{
    gn_http_request_t  *r;

    r = t_request("GET /ex/ HTTP/1.1\r\nHost: x\r\n\r\n", NULL);
    ok(r != NULL && r->module != NULL, "module: the handler is the module's");
    is_int(t_cl.status, 200, "module: 200");
    is_str(t_cl.body, t_cl.len, "greetings through a stream\n",
           "module: what it wrote");
    is_int(t_cl.streamed, 0, "module: not streamed");

    r = t_request("POST /ex/echo HTTP/1.1\r\nHost: x\r\n"
                  "Content-Length: 11\r\n\r\n", "echo me now");
    is_int(t_cl.body_reads, 1, "module body: read through the stream");
    is_int(t_cl.status, 200, "module body: 200");
    if (!ok(strstr(t_cl.body, "echo me now") != NULL,
            "module body: the body came back"))
    {
        diag("got: %s", t_cl.body);
    }
    ok(t_cl.waited >= 1, "module body: the module was waited for");

    r = t_request("GET /ex/stream HTTP/1.1\r\nHost: x\r\n\r\n", NULL);
    is_int(t_cl.streamed, 1, "module stream: streamed");
    ok(t_cl.ended, "module stream: its end framed by the stream");
    if (!ok(strstr(t_cl.body, "tick 1\n") != NULL
            && strstr(t_cl.body, "tick 3\n") != NULL,
            "module stream: every tick sent through send"))
    {
        diag("got: %s", t_cl.body);
    }
    ok(r != NULL && r->finished, "module stream: finished");
    ok(t_cl.room_tried && !t_cl.room_given
       && strstr(t_cl.body, "direct") == NULL,
       "module stream: no in-place room when the stream frames its bytes");

    t_next_verbatim = 1;
    r = t_request("GET /ex/stream HTTP/1.1\r\nHost: x\r\n\r\n", NULL);
    t_next_verbatim = 0;
    ok(t_cl.room_given, "in-place room: given when the stream is verbatim");
    is_int(t_cl.commit_rc, GN_OK, "in-place room: commit queues the bytes");
    if (!ok(strstr(t_cl.body, "direct\n") != NULL
            && strstr(t_cl.body, "tick 3\n") != NULL
            && strstr(t_cl.body, "direct\n") < strstr(t_cl.body, "tick 3\n"),
            "in-place room: its bytes go out in order with the module's"))
    {
        diag("got: %s", t_cl.body);
    }
    ok(r != NULL && r->finished, "in-place room: the stream finished");
}


static gn_int_t
t_write(const char *name, const char *text)
{
    char  path[128];
    int   fd;

    snprintf(path, sizeof(path), "%s/%s", t_html, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd == -1 || write(fd, text, strlen(text)) != (ssize_t) strlen(text)) {
        return GN_ERROR;
    }
    close(fd);
    return GN_OK;
}


int
main(void)
{
    const char  *moddir = getenv("GN_MODDIR");
    char         mod[256], text[2048], err[1024], logfile[160];
    gn_uint_t    with_module;

    if (mkdtemp(t_html) == NULL
        || t_write("a.txt", "hello from a file\n") != GN_OK
        || t_write("404.html", "custom not found\n") != GN_OK)
    {
        skip_all("cannot make the document root");
    }

    snprintf(mod, sizeof(mod), "%s/mod_example.so",
             moddir != NULL ? moddir : "modules/.libs");
    with_module = access(mod, R_OK) == 0;

    snprintf(text, sizeof(text), "%s%s%s%s"
             "server {\n"
             "    listen 127.0.0.1:1;\n"
             "    root %s;\n"
             "    types { text/plain txt; text/html html; }\n"
             "    error_page 404 /404.html;\n"
             "    location /r/ { return 302 /elsewhere; }\n"
             "    location /deny/ { deny all; }\n"
             "%s"
             "}\n", t_cycle_user(), with_module ? "load_module " : "",
             with_module ? mod : "", with_module ? ";\n" : "", t_html,
             with_module ? "    location /ex/ { handler example; "
                           "example_greeting \"greetings through a "
                           "stream\"; }\n" : "");

    t_cycle = t_cycle_load(text, NULL, 0, err, sizeof(err));
    if (!ok(t_cycle != NULL, "the configuration loads")) {
        diag("%s", err);
        return done_testing();
    }
    gn_cycle = t_cycle;

    gn_time_update();
    if (gn_timer_heap_init(64) != GN_OK) {
        skip_all("no timer heap");
    }

    snprintf(logfile, sizeof(logfile), "%s/error.log", t_html);
    memset(&t_conn, 0, sizeof(t_conn));
    t_conn.io.fd = -1;                  /* no socket: a send would fail */
    t_conn.listen = t_cycle->listening.elts;
    t_conn.ops = &t_no_io;
    t_conn.log.level = GN_LOG_INFO;
    t_conn.log.fd = open(logfile, O_WRONLY | O_CREAT | O_APPEND, 0644);
    t_conn.peer.ss_family = AF_INET;
    ((struct sockaddr_in *) &t_conn.peer)->sin_addr.s_addr =
        htonl(INADDR_LOOPBACK);
    t_conn.peerlen = sizeof(struct sockaddr_in);
    snprintf(t_conn.addr_text, sizeof(t_conn.addr_text), "127.0.0.1");
    t_conn.addr_len = 9;

    test_static();
    test_rules();
    if (with_module) {
        test_module();
    } else {
        diag("%s not built: the module's requests are not run", mod);
    }

    is_int(t_io, 0, "no handler touched the connection's I/O");

    if (t_pool != NULL) {
        gn_pool_destroy(t_pool);
    }
    gn_cycle_destroy(t_cycle);
    close(t_conn.log.fd);
    (void) unlink(logfile);
    snprintf(text, sizeof(text), "%s/a.txt", t_html);
    (void) unlink(text);
    snprintf(text, sizeof(text), "%s/404.html", t_html);
    (void) unlink(text);
    (void) rmdir(t_html);

    return done_testing();
}
