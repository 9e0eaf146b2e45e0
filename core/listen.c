/*
 * Listening sockets.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "listen.h"


gn_int_t
gn_listen_parse_addr(const gn_str_t *text, gn_listen_opt_t *lo, char *err,
    size_t errlen)
{
    struct sockaddr_in   *sin;
    struct sockaddr_in6  *sin6;
    u_char               *p, *last, *colon;
    char                  host[64];
    gn_int_t              port;
    size_t                hlen;

    p = text->data;
    last = p + text->len;
    memset(&lo->sa, 0, sizeof(lo->sa));

    if (text->len > 0 && p[0] == '[') {
        colon = memchr(p, ']', text->len);
        if (colon == NULL || colon + 1 >= last || colon[1] != ':') {
            snprintf(err, errlen, "invalid address \"%.*s\", expected "
                     "[IPv6]:PORT", GN_STR_ARG(text));
            return GN_ERROR;
        }
        hlen = colon - p - 1;
        if (hlen >= sizeof(host)) {
            goto invalid;
        }
        memcpy(host, p + 1, hlen);
        host[hlen] = '\0';
        port = gn_atoi(colon + 2, last - colon - 2);

        sin6 = (struct sockaddr_in6 *) &lo->sa;
        sin6->sin6_family = AF_INET6;
        if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1) {
            goto invalid;
        }
        sin6->sin6_port = htons((uint16_t) port);
        lo->socklen = sizeof(struct sockaddr_in6);
        goto port;
    }

    sin = (struct sockaddr_in *) &lo->sa;
    sin->sin_family = AF_INET;
    lo->socklen = sizeof(struct sockaddr_in);

    colon = NULL;
    for (p = text->data; p < last; p++) {
        if (*p == ':') {
            colon = p;
        }
    }

    if (colon == NULL) {
        port = gn_atoi(text->data, text->len);
        sin->sin_addr.s_addr = htonl(INADDR_ANY);

    } else {
        hlen = colon - text->data;
        if (hlen == 0 || hlen >= sizeof(host)) {
            goto invalid;
        }
        memcpy(host, text->data, hlen);
        host[hlen] = '\0';
        port = gn_atoi(colon + 1, last - colon - 1);

        if (strcmp(host, "*") == 0) {
            sin->sin_addr.s_addr = htonl(INADDR_ANY);
        } else if (strcmp(host, "localhost") == 0) {
            sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        } else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
            goto invalid;
        }
    }

    sin->sin_port = htons((uint16_t) port);

port:

    if (port <= 0 || port > 65535) {
        snprintf(err, errlen, "invalid port in \"%.*s\", expected a number "
                 "from 1 to 65535", GN_STR_ARG(text));
        return GN_ERROR;
    }

    lo->text = *text;
    return GN_OK;

invalid:

    snprintf(err, errlen, "invalid address \"%.*s\", expected [ADDR:]PORT "
             "with ADDR an IPv4 address, [IPv6], * or localhost",
             GN_STR_ARG(text));
    return GN_ERROR;
}


size_t
gn_sockaddr_text(const struct sockaddr *sa, char *buf, size_t len)
{
    const void     *addr;
    const u_char   *b;
    u_char         *p;
    gn_uint_t       i, v;

    if (sa->sa_family == AF_INET6) {
        addr = &((const struct sockaddr_in6 *) sa)->sin6_addr;

    } else if (len >= INET_ADDRSTRLEN) {
        /* every accepted connection comes here: inet_ntop's sprintf
         * showed in the one-request-per-connection profile */
        b = (const u_char *) &((const struct sockaddr_in *) sa)->sin_addr;
        p = (u_char *) buf;
        for (i = 0; i < 4; i++) {
            v = b[i];
            if (v >= 100) {
                *p++ = (u_char) ('0' + v / 100);
            }
            if (v >= 10) {
                *p++ = (u_char) ('0' + v / 10 % 10);
            }
            *p++ = (u_char) ('0' + v % 10);
            *p++ = '.';
        }
        p[-1] = '\0';
        return (size_t) (p - 1 - (u_char *) buf);

    } else {
        addr = &((const struct sockaddr_in *) sa)->sin_addr;
    }

    if (inet_ntop(sa->sa_family, addr, buf, (socklen_t) len) == NULL) {
        buf[0] = '\0';
        return 0;
    }

    return strlen(buf);
}


static size_t
gn_listen_text(gn_listen_t *ls, gn_pool_t *pool)
{
    char    host[INET6_ADDRSTRLEN];
    int     port;
    size_t  n;

    n = gn_sockaddr_text((struct sockaddr *) &ls->sa, host, sizeof(host));
    port = ntohs(((struct sockaddr_in *) &ls->sa)->sin_port);

    ls->text.data = gn_pnalloc(pool, n + 10);
    if (ls->text.data == NULL) {
        return 0;
    }

    ls->text.len = snprintf((char *) ls->text.data, n + 10,
                            ls->sa.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d",
                            host, port);
    return ls->text.len;
}


static gn_int_t
gn_listen_build(gn_cycle_t *cycle, char *err, size_t errlen)
{
    gn_srv_conf_t   **psc, **ps;
    gn_listen_opt_t  *lo;
    gn_listen_t      *ls;
    gn_uint_t         i, j, k;

    psc = cycle->main->servers.elts;

    for (i = 0; i < cycle->main->servers.nelts; i++) {
        lo = psc[i]->listens.elts;

        for (j = 0; j < psc[i]->listens.nelts; j++) {

            ls = cycle->listening.elts;
            for (k = 0; k < cycle->listening.nelts; k++) {
                if (ls[k].socklen == lo[j].socklen
                    && memcmp(&ls[k].sa, &lo[j].sa, lo[j].socklen) == 0)
                {
                    break;
                }
            }

            if (k == cycle->listening.nelts) {
                ls = gn_array_push(&cycle->listening);
                if (ls == NULL
                    || gn_array_init(&ls->servers, cycle->pool, 2,
                                     sizeof(gn_srv_conf_t *)) != GN_OK)
                {
                    snprintf(err, errlen, "out of memory");
                    return GN_ERROR;
                }
                memcpy(&ls->sa, &lo[j].sa, lo[j].socklen);
                ls->socklen = lo[j].socklen;
                ls->fd = -1;
                ls->backlog = lo[j].backlog;
                ls->deferred = 1;                /* the default */
                ls->deferred_on = 0;
                ls->deferred_off = 0;
                ls->default_srv = NULL;
                ls->tls = 0;
                ls->http2 = 0;
                ls->proxy_protocol = 0;
                if (gn_listen_text(ls, cycle->pool) == 0) {
                    snprintf(err, errlen, "out of memory");
                    return GN_ERROR;
                }

            } else {
                ls = &ls[k];
            }

            /* every server on an address agrees on "tls" */
            if (ls->servers.nelts > 0 && ls->tls != lo[j].tls) {
                snprintf(err, errlen, "%.*s is used with and without "
                         "\"tls\" in %.*s:%d", GN_STR_ARG(&ls->text),
                         GN_STR_ARG(&psc[i]->file), (int) psc[i]->line);
                return GN_ERROR;
            }
            ls->tls = lo[j].tls;
            ls->http2 |= lo[j].http2;    /* as nginx: any server's says */
            ls->proxy_protocol |= lo[j].proxy_protocol;         /* too */

            /* deferred by default; "deferred=off" from any server on the
             * address turns it off (it wants silent connections at once),
             * and "deferred" with "deferred=off" is a contradiction */
            if ((lo[j].deferred == 0 && ls->deferred_on)
                || (lo[j].deferred == 1 && ls->deferred_off))
            {
                snprintf(err, errlen, "%.*s is used with \"deferred\" and "
                         "\"deferred=off\" in %.*s:%d", GN_STR_ARG(&ls->text),
                         GN_STR_ARG(&psc[i]->file), (int) psc[i]->line);
                return GN_ERROR;
            }
            if (lo[j].deferred == 0) {
                ls->deferred = 0;
                ls->deferred_off = 1;
            } else if (lo[j].deferred == 1) {
                ls->deferred_on = 1;
            }

            if (lo[j].default_server) {
                if (ls->default_srv != NULL && ls->default_srv != psc[i]) {
                    snprintf(err, errlen, "a duplicate default server for "
                             "%.*s in %.*s:%d", GN_STR_ARG(&ls->text),
                             GN_STR_ARG(&psc[i]->file), (int) psc[i]->line);
                    return GN_ERROR;
                }
                ls->default_srv = psc[i];
                ls->backlog = lo[j].backlog;
            }

            ps = gn_array_push(&ls->servers);
            if (ps == NULL) {
                snprintf(err, errlen, "out of memory");
                return GN_ERROR;
            }
            *ps = psc[i];
        }
    }

    ls = cycle->listening.elts;
    for (k = 0; k < cycle->listening.nelts; k++) {
        if (ls[k].default_srv == NULL) {
            ps = ls[k].servers.elts;
            ls[k].default_srv = ps[0];
        }
    }

    return GN_OK;
}


/*
 * "listen ... deferred": TCP_DEFER_ACCEPT, as nginx's parameter of that
 * name and Apache's default AcceptFilter on Linux. The kernel hands a
 * connection to accept() only once its first data arrived (or, for a
 * silent client, after about a second of SYN-ACK retries), so one
 * wake-up accepts, reads and answers: a third less server CPU per
 * one-request connection in bench/RESULTS.md. Also set to 0 to clear it
 * on a socket kept across a reload.
 */
static void
gn_listen_deferred(gn_listen_t *ls, int fd, gn_log_t *log)
{
    int  secs;

    secs = ls->deferred ? 1 : 0;
    if (setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof(secs))
        == -1)
    {
        gn_log_error(GN_LOG_ALERT, log, errno,
                     "setsockopt(TCP_DEFER_ACCEPT) for %.*s failed",
                     GN_STR_ARG(&ls->text));
    }
}


static int
gn_listen_socket(gn_listen_t *ls, gn_log_t *log)
{
    int  fd, on;

    fd = socket(ls->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                0);
    if (fd == -1) {
        gn_log_error(GN_LOG_EMERG, log, errno, "socket() for %.*s failed",
                     GN_STR_ARG(&ls->text));
        return -1;
    }

    on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1) {
        gn_log_error(GN_LOG_EMERG, log, errno,
                     "setsockopt(SO_REUSEADDR) for %.*s failed",
                     GN_STR_ARG(&ls->text));
        goto failed;
    }

    if (ls->sa.ss_family == AF_INET6
        && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) == -1)
    {
        gn_log_error(GN_LOG_EMERG, log, errno,
                     "setsockopt(IPV6_V6ONLY) for %.*s failed",
                     GN_STR_ARG(&ls->text));
        goto failed;
    }

    if (bind(fd, (struct sockaddr *) &ls->sa, ls->socklen) == -1) {
        gn_log_error(GN_LOG_EMERG, log, errno, "bind() to %.*s failed",
                     GN_STR_ARG(&ls->text));
        goto failed;
    }

    if (listen(fd, (int) ls->backlog) == -1) {
        gn_log_error(GN_LOG_EMERG, log, errno, "listen() on %.*s failed",
                     GN_STR_ARG(&ls->text));
        goto failed;
    }

    gn_listen_deferred(ls, fd, log);

    return fd;

failed:

    close(fd);
    return -1;
}


/* ---- sockets handed over at start ------------------------------------- */

/*
 * The convention of systemd's socket activation (sd_listen_fds(3)):
 * LISTEN_PID is our pid and LISTEN_FDS the number of listening sockets
 * passed from descriptor 3 on. The first cycle takes those whose bound
 * address is that of a listen directive instead of binding its own
 * (so a socket unit, or the master of an upgrade, keeps the queue of
 * connections waiting on it); the others are closed. The variables are
 * removed, so that no CGI or module child believes it was activated.
 */

#define GN_LISTEN_INHERIT_MAX   64

static int        gn_listen_inherited[GN_LISTEN_INHERIT_MAX];
static gn_uint_t  gn_listen_ninherited;


void
gn_listen_inherit(gn_log_t *log)
{
    const char  *fds, *lpid;
    char        *end;
    long         n, i;
    int          fd, type, acc;
    socklen_t    len;

    fds = getenv("LISTEN_FDS");
    lpid = getenv("LISTEN_PID");

    if (fds != NULL && lpid != NULL
        && strtol(lpid, &end, 10) == (long) getpid() && *end == '\0')
    {
        n = strtol(fds, &end, 10);
        if (*end != '\0' || n < 0 || n > GN_LISTEN_INHERIT_MAX) {
            gn_log_error(GN_LOG_WARN, log, 0, "LISTEN_FDS=\"%s\" ignored: "
                         "expected 0 to %d sockets", fds,
                         GN_LISTEN_INHERIT_MAX);
            n = 0;
        }

        for (i = 0; i < n; i++) {
            fd = 3 + (int) i;
            len = sizeof(type);
            if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == -1
                || type != SOCK_STREAM
                || getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len)
                   == -1
                || !acc)
            {
                gn_log_error(GN_LOG_WARN, log, 0, "inherited descriptor %d "
                             "is not a listening TCP socket: ignored", fd);
                continue;
            }
            (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
            gn_listen_inherited[gn_listen_ninherited++] = fd;
        }
    }

    (void) unsetenv("LISTEN_FDS");
    (void) unsetenv("LISTEN_PID");
    (void) unsetenv("LISTEN_FDNAMES");
}


static int
gn_listen_same_addr(const struct sockaddr_storage *a,
    const struct sockaddr_storage *b)
{
    const struct sockaddr_in   *a4, *b4;
    const struct sockaddr_in6  *a6, *b6;

    if (a->ss_family != b->ss_family) {
        return 0;
    }
    if (a->ss_family == AF_INET) {
        a4 = (const struct sockaddr_in *) a;
        b4 = (const struct sockaddr_in *) b;
        return a4->sin_port == b4->sin_port
               && a4->sin_addr.s_addr == b4->sin_addr.s_addr;
    }
    if (a->ss_family == AF_INET6) {
        a6 = (const struct sockaddr_in6 *) a;
        b6 = (const struct sockaddr_in6 *) b;
        return a6->sin6_port == b6->sin6_port
               && memcmp(&a6->sin6_addr, &b6->sin6_addr, 16) == 0;
    }
    return 0;
}


/* The inherited socket bound to ls's address, made ours; -1: none. */
static int
gn_listen_take_inherited(gn_listen_t *ls, gn_log_t *log)
{
    struct sockaddr_storage  sa;
    socklen_t                len;
    gn_uint_t                i;
    int                      fd, fl;

    for (i = 0; i < gn_listen_ninherited; i++) {
        fd = gn_listen_inherited[i];
        len = sizeof(sa);
        if (fd == -1
            || getsockname(fd, (struct sockaddr *) &sa, &len) == -1
            || !gn_listen_same_addr(&sa, &ls->sa))
        {
            continue;
        }

        gn_listen_inherited[i] = -1;
        fl = fcntl(fd, F_GETFL);
        (void) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        (void) listen(fd, (int) ls->backlog);
        gn_listen_deferred(ls, fd, log);
        gn_log_error(GN_LOG_INFO, log, 0, "listening on %.*s: inherited "
                     "socket (descriptor %d)", GN_STR_ARG(&ls->text), fd);
        return fd;
    }

    return -1;
}


/* After the first cycle opened its sockets: the inherited ones no
 * listen directive took. */
static void
gn_listen_inherited_close(gn_log_t *log)
{
    struct sockaddr_storage  sa;
    socklen_t                len;
    gn_uint_t                i;
    char                     text[64];

    for (i = 0; i < gn_listen_ninherited; i++) {
        if (gn_listen_inherited[i] == -1) {
            continue;
        }
        len = sizeof(sa);
        text[0] = '\0';
        if (getsockname(gn_listen_inherited[i], (struct sockaddr *) &sa,
                        &len) == 0)
        {
            (void) gn_sockaddr_text((struct sockaddr *) &sa, text,
                                    sizeof(text));
        }
        gn_log_error(GN_LOG_WARN, log, 0, "inherited socket %s port %d "
                     "(descriptor %d) matches no \"listen\": closed", text,
                     sa.ss_family == AF_INET6
                     ? ntohs(((struct sockaddr_in6 *) &sa)->sin6_port)
                     : ntohs(((struct sockaddr_in *) &sa)->sin_port),
                     gn_listen_inherited[i]);
        close(gn_listen_inherited[i]);
        gn_listen_inherited[i] = -1;
    }
    gn_listen_ninherited = 0;
}


static gn_int_t
gn_listen_open_all(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    gn_listen_t  *ls, *ols;
    gn_uint_t     i, j;

    ls = cycle->listening.elts;

    for (i = 0; i < cycle->listening.nelts; i++) {

        if (old == NULL && gn_listen_ninherited > 0) {
            ls[i].fd = gn_listen_take_inherited(&ls[i], log);
            if (ls[i].fd != -1) {
                continue;
            }
        }

        if (old != NULL) {
            ols = old->listening.elts;
            for (j = 0; j < old->listening.nelts; j++) {
                if (ols[j].fd != -1 && ols[j].socklen == ls[i].socklen
                    && memcmp(&ols[j].sa, &ls[i].sa, ls[i].socklen) == 0)
                {
                    ls[i].fd = ols[j].fd;
                    if (ols[j].backlog != ls[i].backlog) {
                        (void) listen(ls[i].fd, (int) ls[i].backlog);
                    }
                    if (ols[j].deferred != ls[i].deferred) {
                        gn_listen_deferred(&ls[i], ls[i].fd, log);
                    }
                    break;
                }
            }

            if (ls[i].fd != -1) {
                continue;
            }
        }

        ls[i].fd = gn_listen_socket(&ls[i], log);
        if (ls[i].fd == -1) {
            goto failed;
        }
    }

    if (old == NULL && gn_listen_ninherited > 0) {
        gn_listen_inherited_close(log);
    }

    return GN_OK;

failed:

    gn_listen_close_unused(cycle, old);
    return GN_ERROR;
}


void
gn_listen_close_unused(gn_cycle_t *old, gn_cycle_t *cycle)
{
    gn_listen_t  *ls, *nls;
    gn_uint_t     i, j;

    ls = old->listening.elts;

    for (i = 0; i < old->listening.nelts; i++) {
        if (ls[i].fd == -1) {
            continue;
        }

        if (cycle != NULL) {
            nls = cycle->listening.elts;
            for (j = 0; j < cycle->listening.nelts; j++) {
                if (nls[j].fd == ls[i].fd) {
                    break;
                }
            }
            if (j < cycle->listening.nelts) {
                ls[i].fd = -1;         /* taken over: not ours to close */
                continue;
            }
        }

        close(ls[i].fd);
        ls[i].fd = -1;
    }
}


/* ---- the feature -------------------------------------------------------- */

static char *
gn_listen_directive(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_srv_conf_t    *sc = conf;
    gn_listen_opt_t  *lo;
    gn_str_t         *value = cf->args->elts, v;
    gn_uint_t         i;
    char              err[256];

    lo = gn_array_push(&sc->listens);
    if (lo == NULL) {
        return "failed (out of memory)";
    }

    memset(lo, 0, sizeof(gn_listen_opt_t));
    lo->backlog = 511;
    lo->deferred = -1;

    if (gn_listen_parse_addr(&value[1], lo, err, sizeof(err)) != GN_OK) {
        gn_conf_error(cf, "%s in \"listen\" directive", err);
        return GN_CONF_ERROR;
    }

    for (i = 2; i < cf->args->nelts; i++) {

        if (gn_str_eq(&value[i], "default_server")) {
            lo->default_server = 1;
            continue;
        }

        if (gn_str_eq(&value[i], "tls")) {
            lo->tls = 1;
            continue;
        }

        if (gn_str_eq(&value[i], "http2")) {
#if (GN_HAVE_HTTP2)
            lo->http2 = 1;
            continue;
#else
            gn_conf_error(cf, "\"http2\" in \"listen\": this gannet was "
                          "built without HTTP/2 (configure --without-http2)");
            return GN_CONF_ERROR;
#endif
        }

        if (gn_str_eq(&value[i], "proxy_protocol")) {
            lo->proxy_protocol = 1;
            continue;
        }

        if (gn_str_eq(&value[i], "deferred")
            || gn_str_eq(&value[i], "deferred=on"))
        {
            lo->deferred = 1;
            continue;
        }

        if (gn_str_eq(&value[i], "deferred=off")) {
            lo->deferred = 0;
            continue;
        }

        if (value[i].len > 8 && memcmp(value[i].data, "backlog=", 8) == 0) {
            v.data = value[i].data + 8;
            v.len = value[i].len - 8;
            lo->backlog = gn_atoi(v.data, v.len);
            if (lo->backlog <= 0 || lo->backlog > 65535) {
                gn_conf_error(cf, "invalid backlog \"%.*s\" in \"listen\" "
                              "directive", GN_STR_ARG(&v));
                return GN_CONF_ERROR;
            }
            continue;
        }

        gn_conf_error(cf, "invalid parameter \"%.*s\" in \"listen\" "
                      "directive, expected \"tls\", \"http2\", "
                      "\"proxy_protocol\", \"default_server\", "
                      "\"deferred\", \"deferred=off\" or \"backlog=N\"",
                      GN_STR_ARG(&value[i]));
        return GN_CONF_ERROR;
    }

    return GN_CONF_OK;
}



static const gn_conf_cmd_t  gn_listen_commands[] = {

    { gn_string("listen"), GN_CONF_SRV | GN_CONF_1MORE,
      gn_listen_directive, GN_CONF_SRV_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


/* A server without `listen` listens on *:80, as nginx's. Then the
 * servers' listen options grouped by address into cycle->listening. */
static gn_int_t
gn_listen_init_cycle(gn_conf_t *cf, gn_cycle_t *cycle)
{
    gn_srv_conf_t    **psc;
    gn_listen_opt_t   *lo;
    gn_uint_t          i;
    gn_str_t           any = gn_string("80");

    psc = cycle->main->servers.elts;
    for (i = 0; i < cycle->main->servers.nelts; i++) {
        if (psc[i]->listens.nelts != 0) {
            continue;
        }
        lo = gn_array_push(&psc[i]->listens);
        if (lo == NULL) {
            snprintf(cf->err, sizeof(cf->err), "out of memory");
            return GN_ERROR;
        }
        memset(lo, 0, sizeof(gn_listen_opt_t));
        lo->backlog = 511;
        lo->deferred = -1;
        (void) gn_listen_parse_addr(&any, lo, cf->err, sizeof(cf->err));
    }

    return gn_listen_build(cycle, cf->err, sizeof(cf->err));
}


static void
gn_listen_close_cycle(gn_cycle_t *cycle, gn_cycle_t *keep)
{
    gn_listen_close_unused(cycle, keep);
}


const gn_feature_t  gn_listen_feature = {
    .name = "listen", .commands = gn_listen_commands,
    .init_cycle = gn_listen_init_cycle,
    .open_cycle = gn_listen_open_all,
    .close_cycle = gn_listen_close_cycle
};
