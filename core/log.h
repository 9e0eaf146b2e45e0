/*
 * Error log: levels, timestamps, errno text and connection context.
 *
 * Format:  2026/11/30 14:05:01 [notice] 1234#2: message (errno: text)
 *          [, while <action>][, client: ..., server: ...]
 * "1234" is the pid, "#2" the child's slot (#- in the master).
 */

#ifndef GN_CORE_LOG_H_INCLUDED
#define GN_CORE_LOG_H_INCLUDED

#include "gn_config.h"


#define GN_LOG_MAX_LINE   2048

typedef struct gn_log_s  gn_log_t;

/* Appends context ("client: ..., server: ...") after the message. */
typedef size_t (*gn_log_handler_pt)(gn_log_t *log, char *buf, size_t len);

/* Sends a formatted line somewhere else than fd (syslog): `line` ends in
 * '\n', the message proper ("[level] pid#slot: ...") starts at line+msg. */
typedef void (*gn_log_writer_pt)(gn_log_t *log, gn_uint_t level,
    char *line, size_t len, size_t msg);

struct gn_log_s {
    gn_uint_t            level;     /* messages above it are dropped */
    int                  fd;        /* error log file, or 2 */
    const char          *action;    /* ", while <action>" */
    gn_log_handler_pt    handler;
    void                *data;      /* for handler */
    gn_log_t            *next;      /* a second log also fed (stderr copy) */
    gn_log_writer_pt     writer;    /* NULL: write(fd) */
    void                *wdata;     /* for writer */
};


extern gn_log_t   gn_log_default;    /* level notice, fd 2, until configured */
extern gn_int_t   gn_log_slot;       /* child slot or -1 in the master */

/* If set, gn_log_error() lets it pick the log a message goes to (a
 * server's own error_log); it returns `log` or `tmp`, filled. */
extern gn_log_t *(*gn_log_route)(gn_log_t *log, gn_log_t *tmp);

void gn_log_error(gn_uint_t level, gn_log_t *log, int err, const char *fmt,
    ...) gn_printf(4, 5);
void gn_log_verror(gn_uint_t level, gn_log_t *log, int err, const char *fmt,
    va_list args);

/* While set (the master, during a reload): the first message at [error]
 * or worse is copied there as "[level] message" (NUL-terminated). */
extern char    *gn_log_capture;
extern size_t   gn_log_capture_size;

/* Writes "gannet: message" to stderr (command-line tools, -t, -s). */
void gn_log_stderr(int err, const char *fmt, ...) gn_printf(2, 3);

/* "emerg", ..., "debug" to a level. Returns GN_ERROR on an unknown name. */
gn_int_t gn_log_level_parse(const gn_str_t *name);

/* Opens a log file for appending (O_APPEND|O_CREAT|O_CLOEXEC, 0644).
 * Returns the fd or -1 with errno set. */
int gn_log_open_file(const char *path);

#endif /* GN_CORE_LOG_H_INCLUDED */
