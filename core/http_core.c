/*
 * The phases of a request, whatever carries it (HTTP/1 today, HTTP/2
 * streams next): the server its Host (and SNI) picks, the checks of the
 * head, the path, rewrite rules, the modules' filters, access rules, the
 * body rules, and the handler -- a module's or the static files. What
 * the protocol does is behind r->stream (http_request.h).
 */

#include "gn_config.h"

#include "http_core.h"
#include "http_response.h"
#include "http_static.h"
#include "http_module.h"
#include "lookup.h"
#include "module.h"
#include "rewrite.h"
#include "access.h"
#include "realip.h"
#include "proxy.h"
#include "try_files.h"
#include "limit.h"
#include "timer.h"
#include "tls.h"
#include "log.h"
#include "access_log.h"
#include "scoreboard.h"


/* The server for a request's Host, else the listener's default. */
static gn_srv_conf_t *
gn_http_find_server(gn_http_request_t *r, const gn_str_t *host,
    gn_uint_t *matched)
{
    gn_listen_t    *ls = r->c->listen;
    gn_srv_conf_t  *sc;
    gn_str_t        name;

    *matched = 0;
    if (ls->servers.nelts == 1 || host->len == 0) {
        return ls->default_srv;
    }

    name = gn_http_host_name(host);
    sc = gn_lookup_server(ls, name.data, name.len);
    if (sc == NULL) {
        return ls->default_srv;
    }

    *matched = 1;
    return sc;
}


/*
 * Request bodies. The framing was validated by the parser (RFC 9112 6.3:
 * chunked wins and Content-Length together with it is refused). Here:
 * POST and PUT must be framed (411); a declared length above
 * client_max_body_size is refused before any byte is read (413); an
 * Expect other than 100-continue is refused (417). Otherwise the body is
 * read by the stream before the handler runs ("100 Continue" first when
 * asked for); handlers that take no body (static files) drop it, so the
 * connection can be kept alive.
 */
static gn_int_t
gn_http_body_rules(gn_http_request_t *r)
{
    gn_http_head_t  *h = &r->head;
    size_t           max = gn_http_conf(r->loc)->client_max_body_size;

    if (!h->expect_continue
        && gn_http_header_find(h, "Expect", 6) != NULL
        && h->version >= GN_HTTP_VERSION_11)
    {
        r->close = 1;
        r->linger = 1;
        return 417;
    }

    if ((h->method & (GN_HTTP_POST | GN_HTTP_PUT))
        && h->content_length < 0 && !h->chunked)
    {
        return 411;
    }

    r->has_body = h->chunked || h->content_length > 0;
    if (!r->has_body) {
        return GN_OK;
    }

    if (max > 0 && h->content_length > (off_t) max) {
        gn_log_error(GN_LOG_INFO, &r->c->log, 0, "client intended to send a "
                     "body of %lld bytes, more than client_max_body_size",
                     (long long) h->content_length);
        r->close = 1;
        r->linger = 1;
        return 413;
    }

    /* read (and, for handlers that take no body, drop) before answering:
     * a malformed or oversized chunked body then gets its 400 or 413 */
    return GN_OK;
}


/* Maps the parsed head to a server, location and handler, and sets up
 * the response: GN_OK (it is set up), GN_DONE (a module's request),
 * GN_AGAIN (the body is to be read past, then the static files serve
 * it), GN_ERROR. */
/* The request's server (Host, SNI), and its client's address as that
 * server says (realip.h): before anything looks at either. Returns 1
 * when the Host names another server than the TLS connection's (RFC
 * 9110 7.4: misdirected, 421), 0 otherwise, GN_ERROR. */
static gn_int_t
gn_http_core_server(gn_http_request_t *r)
{
    gn_srv_conf_t  *sni;
    gn_uint_t       matched, misdirected;

    r->srv = gn_http_find_server(r, &r->head.host, &matched);
    r->loc = r->srv->loc;

    sni = gn_tls_sni_server(r->c);
    misdirected = sni != NULL && matched && r->srv != sni;
    if (sni != NULL) {
        r->srv = sni;
        r->loc = sni->loc;
    }

    /* the client's address, whatever the answer: the log has it */
    if (gn_realip_apply(r) != GN_OK) {
        return GN_ERROR;
    }

    return misdirected;
}


/* An index file's URI that ends in '/' (a directory named index.html),
 * try_files falling back to its own location, cannot redirect for
 * ever. */
#define GN_HTTP_MAX_INDEX_REDIRECTS  10

/*
 * One pass in r's location, from its limits and filters to its handler:
 * GN_OK (the response is set up), GN_DONE (a module's or the proxy's
 * request), GN_AGAIN (the body is to be read past, then the static
 * files serve it), GN_BUSY (limit_req: wait r->limit_delay ms, then
 * pass again), GN_DECLINED (an internal redirect: locate again),
 * GN_ERROR.
 */
static gn_int_t
gn_http_core_pass(gn_http_request_t *r)
{
    gn_http_head_t  *h = &r->head;
    gn_int_t         rc;
    gn_str_t         uri;

    /* limit_req, limit_conn: once, before the access rules, as nginx */
    rc = gn_limit_check(r, &r->limit_delay);
    if (rc != GN_OK) {
        return rc == GN_BUSY || rc == GN_ERROR
               ? rc : gn_http_response_error(r, (gn_uint_t) rc);
    }

    rc = gn_http_module_filters(r, GN_HTTP_FILTER_MAPPED);
    if (rc != GN_OK) {
        return rc == GN_ERROR ? GN_ERROR : gn_http_response_error(r, rc);
    }

    /* allow/deny, auth_basic: before body rules and any handler */
    rc = gn_access_check(r);
    if (rc != GN_DECLINED) {
        return rc;                    /* 403 or 401 prepared, or error */
    }

    rc = gn_http_body_rules(r);
    if (rc != GN_OK) {
        return gn_http_response_error(r, (gn_uint_t) rc);
    }

    rc = gn_try_files_run(r);
    if (rc == GN_AGAIN) {
        if (r->redirects == GN_HTTP_MAX_INDEX_REDIRECTS) {
            gn_log_error(GN_LOG_ERR, &r->c->log, 0, "rewrite or internal "
                         "redirection cycle while processing \"%.*s\"",
                         GN_STR_ARG(&r->uri));
            return gn_http_response_error(r, 500);
        }
        return GN_DECLINED;
    }
    if (rc != GN_DECLINED) {
        return rc == GN_ERROR ? GN_ERROR
                              : gn_http_response_error(r, (gn_uint_t) rc);
    }

    r->module = gn_proxy_handler_for(r->loc);
    if (r->module == NULL) {
        r->module = gn_module_handler_for(r->loc, &r->uri);
    }
    if (r->module != NULL) {
        return GN_DONE;               /* gn_http_core_start runs it */
    }

    /* `index`, as nginx's: "/dir/" with an index file is an internal
     * redirect to it, which may match another location (index.php goes
     * to its fastcgi_pass, not out as a file) */
    if (r->uri.data[r->uri.len - 1] == '/'
        && (h->method & (GN_HTTP_GET | GN_HTTP_HEAD | GN_HTTP_POST))
        && r->redirects < GN_HTTP_MAX_INDEX_REDIRECTS)
    {
        rc = gn_http_static_index_uri(r, &uri);
        if (rc == GN_ERROR) {
            return GN_ERROR;
        }
        if (rc == GN_OK) {
            r->uri = uri;
            r->uri_changed = 1;
            return GN_DECLINED;
        }
    }

    return r->has_body ? GN_AGAIN : gn_http_static_handler(r);
}


/* The rules find r's location, then a pass there, until no internal
 * redirect follows; `resumed`: a pass that waited for limit_req goes
 * on where it was. As gn_http_core_pass, but for GN_DECLINED. */
static gn_int_t
gn_http_core_locate(gn_http_request_t *r, gn_uint_t resumed)
{
    gn_int_t  rc;

    for ( ;; ) {
        if (!resumed) {
            rc = gn_rewrite_run(r);
            if (rc == GN_DONE) {
                return GN_OK;         /* a redirect or `return` answered */
            }
            if (rc != GN_OK) {
                return GN_ERROR;
            }

            if (gn_try_files_refused(r)) {
                return gn_http_response_error(r, 404);  /* `internal` */
            }
        }
        resumed = 0;

        rc = gn_http_core_pass(r);
        if (rc != GN_DECLINED) {
            return rc;
        }
        r->redirects++;
    }
}


static gn_int_t
gn_http_core_run(gn_http_request_t *r, gn_uint_t misdirected)
{
    gn_http_head_t  *h = &r->head;
    gn_int_t         rc;
    const char      *why;
    u_char          *p;

    if (misdirected) {
        return gn_http_response_error(r, 421);
    }

    /* tls_verify_client on / optional: nginx's 496 and 495, sent as 400 */
    if (r->c->tls != NULL && gn_tls_client_check(r->c, r->srv, &why) != GN_OK)
    {
        gn_log_error(GN_LOG_INFO, &r->c->log, 0, "%s", why);
        return gn_http_response_error(r, 400);
    }

    rc = r->stream->limits(r);
    if (rc != GN_OK) {
        return gn_http_response_error(r, (gn_uint_t) rc);
    }

    if (h->method == GN_HTTP_UNKNOWN) {
        return gn_http_response_error(r, 501);
    }

    if (h->method == GN_HTTP_CONNECT) {
        return gn_http_response_error(r, 405);        /* not a proxy */
    }

    if (h->method == GN_HTTP_OPTIONS && gn_str_eq(&h->path, "*")) {
        r->status = 200;
        r->content_length = 0;
        gn_str_set(&r->extra_headers, "Allow: GET, HEAD, OPTIONS\r\n");
        return GN_OK;
    }

    p = gn_pnalloc(r->pool, h->path.len + 1);
    if (p == NULL) {
        return GN_ERROR;
    }

    if (gn_http_normalize_path(h->path.data, h->path.len, p, &r->uri.len)
        != GN_OK)
    {
        r->close = 1;
        gn_log_error(GN_LOG_INFO, &r->c->log, 0,
                     "client sent an invalid path \"%.*s\"",
                     GN_STR_ARG(&h->path));
        return gn_http_response_error(r, 400);
    }
    r->uri.data = p;

    return gn_http_core_locate(r, 0);
}


static void gn_http_core_go(gn_http_request_t *r, gn_int_t rc);


/* limit_req's wait is over: the pass goes on. */
static void
gn_http_core_delayed(gn_timer_t *t)
{
    gn_http_request_t  *r = t->data;

    gn_http_core_go(r, gn_http_core_locate(r, 1));
}


static void
gn_http_core_delay_cleanup(void *data)
{
    gn_http_request_t  *r = data;

    gn_timer_del(&r->kick);
}


/* What the phases ended in, carried out: a module's request runs, the
 * body is read, the response goes, or the request waits (limit_req)
 * on r->kick, which modules use only later. */
static void
gn_http_core_go(gn_http_request_t *r, gn_int_t rc)
{
    gn_pool_cleanup_t  *cln;

    if (rc == GN_BUSY) {
        cln = gn_pool_cleanup_add(r->pool, 0);
        if (cln == NULL) {
            r->stream->abort(r);
            return;
        }
        cln->handler = gn_http_core_delay_cleanup;
        cln->data = r;
        gn_timer_init_node(&r->kick, gn_http_core_delayed, r);
        gn_timer_set(&r->kick, r->limit_delay);
        r->stream->wait(r);             /* last: it may end the request */
        return;
    }

    if (rc == GN_DONE) {
        gn_http_module_run(r);           /* may have ended the request */
        return;
    }

    if (rc == GN_AGAIN) {
        r->stream->read_body(r);
        return;
    }

    gn_http_answer(r, rc);
}


void
gn_http_core_start(gn_http_request_t *r)
{
    gn_int_t  rc, misdirected;

    misdirected = gn_http_core_server(r);
    if (misdirected == GN_ERROR) {
        rc = GN_ERROR;

    } else {
        rc = gn_http_module_filters(r, GN_HTTP_FILTER_HEADERS);
        if (rc == GN_OK) {
            rc = gn_http_core_run(r, (gn_uint_t) misdirected);
        } else if (rc != GN_ERROR) {
            rc = gn_http_response_error(r, (gn_uint_t) rc);
        }
    }

    gn_http_core_go(r, rc);
}


void
gn_http_core_body_read(gn_http_request_t *r)
{
    r->body_done = 1;
    gn_http_answer(r, gn_http_static_handler(r));
}


void
gn_http_core_log(gn_http_request_t *r)
{
    r->logged = 1;
    (void) gn_http_module_filters(r, GN_HTTP_FILTER_LOG);
    gn_access_log_request(r);

    if (gn_sb_me == NULL) {
        return;
    }

    gn_sb_me->requests++;
    if (r->head.version == GN_HTTP_VERSION_20) {
        gn_sb_me->proto.h2_requests++;
    } else {
        gn_sb_me->proto.h1_requests++;
    }
    gn_sb_me->bytes_out += (uint64_t) r->bytes_sent;
    if (r->status >= 100 && r->status < 600) {
        gn_sb_me->status[r->status / 100]++;
    }
}
