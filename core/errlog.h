/*
 * Error log targets beyond the main file: a server's own error_log, and
 * syslog (RFC 3164-style datagrams to /dev/log, or UDP to server=).
 *
 *   error_log PATH|stderr|syslog:[server=ADDR[:PORT]][,facility=F][,tag=T]
 *             [LEVEL];
 *
 * In main it sets the cycle's error log (opened with the cycle); in a server
 * block it sets where that server's requests log (gn_log_route picks it
 * for a connection's messages). Sends never block: a full socket buffer
 * or an absent syslog daemon drops the message.
 */

#ifndef GN_CORE_ERRLOG_H_INCLUDED
#define GN_CORE_ERRLOG_H_INCLUDED

#include "gn_config.h"

#include <sys/un.h>

#include "conf.h"
#include "log.h"
#include "feature.h"


typedef struct {
    struct gn_open_file_s   *file;      /* a file target, or NULL */
    int                      fd;        /* stderr; syslog socket, or -1 */
    gn_uint_t                level;
    gn_uint_t                syslog;
    gn_uint_t                facility;
    char                     tag[33];
    union {
        struct sockaddr          sa;
        struct sockaddr_un       un;
        struct sockaddr_storage  ss;
    }                        addr;
    socklen_t                addrlen;
} gn_errlog_t;


/* The "errlog" feature's part of a level (feature.h). */
typedef struct {
    gn_str_t          path;        /* main: absolute, "stderr", syslog: */
    gn_uint_t         level;       /* main */
    gn_errlog_t      *syslog;      /* main: an "error_log syslog:" target */
    gn_errlog_t      *srv_log;     /* a server's own, or NULL: the main */
} gn_errlog_conf_t;

#define gn_errlog_conf(lc)                                                    \
    ((gn_errlog_conf_t *) (lc)->conf[GN_FEATURE_ERRLOG])

/* The registry's "errlog": the error_log directive (main and server);
 * the cycle's log files: the master opens the error log, then every
 * file a log directive named (gn_cycle_open_files), closes them, and
 * reopens them in that order on USR1 (children too). */
extern const gn_feature_t  gn_errlog_feature;

/* gn_log_writer_pt of syslog targets; log->wdata is the gn_errlog_t. */
void gn_errlog_syslog_write(gn_log_t *log, gn_uint_t level, char *line,
    size_t len, size_t msg);

/* Pure, for tests: formats "<PRI>Mmm dd hh:mm:ss tag[pid]: text" into
 * buf; returns its length (at most len). */
size_t gn_errlog_syslog_format(char *buf, size_t len, gn_uint_t facility,
    gn_uint_t level, const char *tag, time_t now, long pid,
    const char *text, size_t n);

#endif /* GN_CORE_ERRLOG_H_INCLUDED */
