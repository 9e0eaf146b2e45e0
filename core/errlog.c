/*
 * Error log targets: a server's own error_log (picked per connection by
 * gn_log_route) and syslog. See errlog.h.
 */

#include "gn_config.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "errlog.h"
#include "cycle.h"
#include "conn.h"


static const gn_conf_enum_t  gn_errlog_facilities[] = {
    { gn_string("kern"), 0 },     { gn_string("user"), 1 },
    { gn_string("mail"), 2 },     { gn_string("daemon"), 3 },
    { gn_string("auth"), 4 },     { gn_string("syslog"), 5 },
    { gn_string("lpr"), 6 },      { gn_string("news"), 7 },
    { gn_string("uucp"), 8 },     { gn_string("cron"), 9 },
    { gn_string("authpriv"), 10 }, { gn_string("ftp"), 11 },
    { gn_string("local0"), 16 },  { gn_string("local1"), 17 },
    { gn_string("local2"), 18 },  { gn_string("local3"), 19 },
    { gn_string("local4"), 20 },  { gn_string("local5"), 21 },
    { gn_string("local6"), 22 },  { gn_string("local7"), 23 },
    { gn_null_string, 0 }
};


/* True for an "error_log syslog:..." name. */
static gn_uint_t
gn_errlog_is_syslog(const gn_str_t *name)
{
    return name->len >= 7 && memcmp(name->data, "syslog:", 7) == 0;
}


/* server=unix:/path | server=A.B.C.D[:PORT] | server=[V6][:PORT] */
static gn_int_t
gn_errlog_parse_server(gn_errlog_t *el, const u_char *s, size_t n)
{
    char        host[64];
    const u_char *colon, *end;
    gn_int_t    port;

    if (n > 5 && memcmp(s, "unix:", 5) == 0) {
        if (n - 5 >= sizeof(el->addr.un.sun_path)) {
            return GN_ERROR;
        }
        el->addr.un.sun_family = AF_UNIX;
        memcpy(el->addr.un.sun_path, s + 5, n - 5);
        el->addrlen = sizeof(struct sockaddr_un);
        return GN_OK;
    }

    port = 514;
    end = s + n;

    if (n > 0 && s[0] == '[') {
        colon = memchr(s, ']', n);
        if (colon == NULL) {
            return GN_ERROR;
        }
        snprintf(host, sizeof(host), "%.*s", (int) (colon - s - 1), s + 1);
        colon++;
        if (colon < end && *colon != ':') {
            return GN_ERROR;
        }
    } else {
        colon = memchr(s, ':', n);
        snprintf(host, sizeof(host), "%.*s",
                 (int) ((colon ? colon : end) - s), s);
    }

    if (colon != NULL && colon < end) {
        port = gn_atoi(colon + 1, end - colon - 1);
        if (port < 1 || port > 65535) {
            return GN_ERROR;
        }
    }

    {
        struct sockaddr_in  sin;

        memset(&sin, 0, sizeof(sin));
        if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
            goto v6;
        }
        sin.sin_family = AF_INET;
        sin.sin_port = htons((uint16_t) port);
        memset(&el->addr, 0, sizeof(el->addr));
        memcpy(&el->addr.ss, &sin, sizeof(sin));
        el->addrlen = sizeof(sin);
        return GN_OK;
    }

v6:
    {
        struct sockaddr_in6  sin6;

        memset(&sin6, 0, sizeof(sin6));
        if (inet_pton(AF_INET6, host, &sin6.sin6_addr) != 1) {
            return GN_ERROR;
        }
        sin6.sin6_family = AF_INET6;
        sin6.sin6_port = htons((uint16_t) port);
        memset(&el->addr, 0, sizeof(el->addr));
        memcpy(&el->addr.ss, &sin6, sizeof(sin6));
        el->addrlen = sizeof(sin6);
    }

    return GN_OK;
}


/* One "key=value" of a syslog: target. */
static char *
gn_errlog_syslog_param(gn_conf_t *cf, gn_errlog_t *el, u_char *p, size_t n)
{
    gn_str_t   v;
    gn_uint_t  i;

    if (n > 7 && memcmp(p, "server=", 7) == 0) {
        if (gn_errlog_parse_server(el, p + 7, n - 7) != GN_OK) {
            gn_conf_error(cf, "invalid syslog server \"%.*s\" in "
                          "\"error_log\" directive (A.B.C.D[:PORT], "
                          "[V6][:PORT] or unix:PATH)", (int) n - 7, p + 7);
            return GN_CONF_ERROR;
        }
        return GN_CONF_OK;
    }

    if (n > 9 && memcmp(p, "facility=", 9) == 0) {
        v.data = p + 9;
        v.len = n - 9;
        for (i = 0; gn_errlog_facilities[i].name.len; i++) {
            if (gn_str_cmp(&gn_errlog_facilities[i].name, &v) == 0) {
                el->facility = gn_errlog_facilities[i].value;
                return GN_CONF_OK;
            }
        }
        gn_conf_error(cf, "unknown syslog facility \"%.*s\" in "
                      "\"error_log\" directive", GN_STR_ARG(&v));
        return GN_CONF_ERROR;
    }

    if (n > 4 && memcmp(p, "tag=", 4) == 0 && n - 4 < sizeof(el->tag)) {
        for (i = 4; i < n; i++) {
            if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z')
                  || (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
            {
                break;
            }
        }
        if (i == n) {
            memcpy(el->tag, p + 4, n - 4);
            el->tag[n - 4] = '\0';
            return GN_CONF_OK;
        }
    }

    gn_conf_error(cf, "invalid syslog parameter \"%.*s\" in \"error_log\" "
                  "directive (server=, facility=, tag= of at most 32 "
                  "letters, digits or '_')", (int) n, p);
    return GN_CONF_ERROR;
}


static char *
gn_errlog_syslog_parse(gn_conf_t *cf, gn_errlog_t *el, gn_str_t *name)
{
    u_char  *p, *last, *comma;
    char    *rv;

    el->syslog = 1;
    el->fd = -1;
    el->facility = 23;                                  /* local7 */
    memcpy(el->tag, "gannet", sizeof("gannet"));
    el->addr.un.sun_family = AF_UNIX;
    memcpy(el->addr.un.sun_path, "/dev/log", sizeof("/dev/log"));
    el->addrlen = sizeof(struct sockaddr_un);

    p = name->data + 7;
    last = name->data + name->len;

    while (p < last) {
        comma = memchr(p, ',', last - p);
        if (comma == NULL) {
            comma = last;
        }
        rv = gn_errlog_syslog_param(cf, el, p, comma - p);
        if (rv != GN_CONF_OK) {
            return rv;
        }
        p = comma + 1;
    }

    return GN_CONF_OK;
}


/* The log a connection's message goes to: its server's, if it has one. */
static gn_log_t *
gn_errlog_route(gn_log_t *log, gn_log_t *tmp)
{
    gn_conn_t      *c;
    gn_srv_conf_t  *srv;
    gn_errlog_t    *el;

    c = log->data;
    if (log->handler == NULL || c == NULL || &c->log != log) {
        return log;
    }

    srv = c->listen != NULL && c->listen->proto != NULL
          && c->listen->proto->log_server != NULL
          ? c->listen->proto->log_server(c) : NULL;
    if (srv == NULL || gn_errlog_conf(srv->loc)->srv_log == NULL) {
        return log;
    }

    el = gn_errlog_conf(srv->loc)->srv_log;
    *tmp = *log;
    tmp->level = el->level;
    tmp->next = NULL;

    if (el->syslog) {
        tmp->fd = el->fd;
        tmp->writer = gn_errlog_syslog_write;
        tmp->wdata = el;
    } else {
        tmp->fd = el->file != NULL ? el->file->fd : el->fd;
        tmp->writer = NULL;
        tmp->wdata = NULL;
    }

    return tmp;
}


static char *
gn_errlog_target(gn_conf_t *cf, gn_errlog_t *el, gn_str_t *name)
{
    gn_str_t  path;

    if (gn_errlog_is_syslog(name)) {
        return gn_errlog_syslog_parse(cf, el, name);
    }

    if (gn_str_eq(name, "stderr")) {
        el->fd = 2;
        return GN_CONF_OK;
    }

    path = *name;
    if (gn_conf_full_name(cf, &path, 0) != GN_OK) {
        return "failed (out of memory)";
    }

    el->file = gn_cycle_open_file_add(cf, &path);
    return el->file ? GN_CONF_OK : "failed (out of memory)";
}


static char *
gn_errlog_directive(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_errlog_conf_t  *ec = conf;
    gn_str_t          *value = cf->args->elts;
    gn_errlog_t     *el;
    gn_int_t         level;
    char            *rv;

    level = GN_LOG_NOTICE;
    if (cf->args->nelts == 3) {
        level = gn_log_level_parse(&value[2]);
        if (level == GN_ERROR) {
            gn_conf_error(cf, "invalid log level \"%.*s\" in \"error_log\" "
                          "directive, it must be one of emerg, alert, crit, "
                          "error, warn, notice, info, debug",
                          GN_STR_ARG(&value[2]));
            return GN_CONF_ERROR;
        }
    }

    if (cf->ctx == GN_CONF_MAIN ? ec->path.data != NULL
                                : ec->srv_log != NULL)
    {
        return "is duplicate";
    }

    el = gn_pcalloc(cf->pool, sizeof(gn_errlog_t));
    if (el == NULL) {
        return "failed (out of memory)";
    }
    el->fd = -1;
    el->level = (gn_uint_t) level;

    if (cf->ctx != GN_CONF_MAIN) {
        rv = gn_errlog_target(cf, el, &value[1]);
        if (rv == GN_CONF_OK) {
            ec->srv_log = el;
            gn_log_route = gn_errlog_route;
        }
        return rv;
    }

    /* main: the cycle's error log ("stderr", a path, or syslog:) */
    ec->path = value[1];
    ec->level = (gn_uint_t) level;

    if (gn_errlog_is_syslog(&value[1])) {
        ec->syslog = el;
        return gn_errlog_syslog_parse(cf, el, &value[1]);
    }

    if (!gn_str_eq(&value[1], "stderr")
        && gn_conf_full_name(cf, &ec->path, 0) != GN_OK)
    {
        return "failed (out of memory)";
    }

    return GN_CONF_OK;
}


static int
gn_errlog_syslog_open(gn_errlog_t *el)
{
    if (el->fd != -1) {
        return el->fd;
    }

    el->fd = socket(el->addr.sa.sa_family,
                    SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    return el->fd;
}


size_t
gn_errlog_syslog_format(char *buf, size_t len, gn_uint_t facility,
    gn_uint_t level, const char *tag, time_t now, long pid,
    const char *text, size_t n)
{
    static const char  *months[] = { "Jan", "Feb", "Mar", "Apr", "May",
                                     "Jun", "Jul", "Aug", "Sep", "Oct",
                                     "Nov", "Dec" };
    struct tm           tm;
    int                 k;
    gn_uint_t           severity;

    localtime_r(&now, &tm);

    /* emerg (1) .. debug (8) are syslog severities 0 .. 7 */
    severity = level >= 1 && level <= 8 ? level - 1 : 3;

    k = snprintf(buf, len, "<%u>%s %2d %02d:%02d:%02d %s[%ld]: %.*s",
                 (unsigned) (facility * 8 + severity), months[tm.tm_mon],
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tag, pid,
                 (int) n, text);

    return k < 0 ? 0 : gn_min((size_t) k, len - 1);
}


void
gn_errlog_syslog_write(gn_log_t *log, gn_uint_t level, char *line,
    size_t len, size_t msg)
{
    gn_errlog_t  *el = log->wdata;
    char          buf[GN_LOG_MAX_LINE + 128];
    size_t        n;

    if (el == NULL || msg > len || gn_errlog_syslog_open(el) == -1) {
        return;
    }

    n = len - msg;
    if (n > 0 && line[msg + n - 1] == '\n') {
        n--;
    }

    n = gn_errlog_syslog_format(buf, sizeof(buf), el->facility, level,
                                el->tag, time(NULL), (long) getpid(),
                                line + msg, n);

    /* a datagram: never blocks, never partial; lost if nobody listens */
    (void) sendto(el->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL, &el->addr.sa,
                  el->addrlen);
}


/* ---- the feature: the cycle's error log -------------------------------- */

static const gn_conf_cmd_t  gn_errlog_commands[] = {

    { gn_string("error_log"), GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_TAKE12,
      gn_errlog_directive, GN_CONF_LOC_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


static gn_int_t
gn_errlog_create_conf(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    (void) cf;

    gn_errlog_conf(lc)->level = GN_LOG_NOTICE;
    return GN_OK;
}


/* the main level without error_log: the default file of the layout */
static gn_int_t
gn_errlog_merge_conf(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_errlog_conf_t  *ec = gn_errlog_conf(lc);
    gn_cycle_t        *cycle = cf->data;

    if (prev != NULL || ec->path.data != NULL) {
        return GN_OK;
    }

    ec->path.data = (u_char *) cycle->paths->error_log;
    ec->path.len = strlen(cycle->paths->error_log);
    return gn_conf_full_name(cf, &ec->path, 0);
}


static gn_int_t
gn_errlog_open_cycle(gn_cycle_t *cycle, gn_cycle_t *old, gn_log_t *log)
{
    gn_errlog_conf_t  *ec = gn_errlog_conf(cycle->main_loc);

    (void) old;

    if (ec->syslog != NULL) {
        cycle->error_log_fd = gn_errlog_syslog_open(ec->syslog);
        cycle->log.writer = gn_errlog_syslog_write;
        cycle->log.wdata = ec->syslog;
    } else if (gn_str_eq(&ec->path, "stderr")) {
        cycle->error_log_fd = dup(2);
    } else {
        cycle->error_log_fd = gn_log_open_file((char *) ec->path.data);
    }

    if (cycle->error_log_fd == -1) {
        gn_log_error(GN_LOG_EMERG, log, errno, "open() \"%s\" failed",
                     (char *) ec->path.data);
        return GN_ERROR;
    }

    if (geteuid() == 0 && !gn_str_eq(&ec->path, "stderr")
        && ec->syslog == NULL)
    {
        (void) fchown(cycle->error_log_fd, cycle->main->uid, (gid_t) -1);
    }

    cycle->log.level = ec->level;
    cycle->log.fd = cycle->error_log_fd;

    /* then the files the log directives named (servers' error logs,
     * access logs); a failure is logged to `log`, as the error log's */
    return gn_cycle_open_files(cycle, log);
}


static void
gn_errlog_close_cycle(gn_cycle_t *cycle, gn_cycle_t *keep)
{
    (void) keep;

    gn_cycle_close_files(cycle);

    if (cycle->error_log_fd != -1) {
        close(cycle->error_log_fd);
        cycle->error_log_fd = -1;
    }
}


static void
gn_errlog_reopen(gn_cycle_t *cycle, uid_t owner)
{
    gn_errlog_conf_t  *ec = gn_errlog_conf(cycle->main_loc);

    if (cycle->error_log_fd != -1 && !gn_str_eq(&ec->path, "stderr")
        && ec->syslog == NULL)
    {
        gn_cycle_reopen_fd(&cycle->error_log_fd, (char *) ec->path.data,
                           owner);
    }

    gn_cycle_reopen_files(cycle, owner);
}


const gn_feature_t  gn_errlog_feature = {
    .name = "errlog", .commands = gn_errlog_commands,
    .conf_size = sizeof(gn_errlog_conf_t),
    .create_conf = gn_errlog_create_conf,
    .merge_conf = gn_errlog_merge_conf,
    .open_cycle = gn_errlog_open_cycle,
    .close_cycle = gn_errlog_close_cycle,
    .reopen = gn_errlog_reopen
};
