/*
 * Access logs: text formats compiled once at configuration time into a
 * list of literal and variable parts, or binary records (binlog.h).
 *
 * Each line (record) is built whole. Unbuffered, it is written with one
 * write(2) to an O_APPEND file; with `buffer=`, a child appends whole
 * lines to a private per-file buffer written with one write(2) when the
 * next line would not fit, `flush=` after the oldest buffered line, on
 * reopen and at exit. Either way a write holds whole lines only, so the
 * lines of several children never tear or interleave.
 */

#ifndef GN_CORE_ACCESS_LOG_H_INCLUDED
#define GN_CORE_ACCESS_LOG_H_INCLUDED

#include "gn_config.h"

#include "pool.h"
#include "array.h"
#include "conf.h"
#include "timer.h"
#include "feature.h"


struct gn_http_request_s;
struct gn_cycle_s;
struct gn_open_file_s;

typedef struct gn_log_format_s  gn_log_format_t;

typedef struct {
    gn_uint_t         var;         /* 0: literal text; else a variable */
    gn_str_t          text;        /* literal, or the header of $http_x */
} gn_log_op_t;

struct gn_log_format_s {
    gn_str_t          name;
    gn_array_t        ops;         /* of gn_log_op_t */
    gn_uint_t         escape;      /* GN_BINLOG_ESC_* */
};

/* One access log file: its settings (the first access_log naming the
 * file with buffer=/flush= sets them) and, in a child, its buffer. */
typedef struct gn_access_file_s  gn_access_file_t;

struct gn_access_file_s {
    struct gn_open_file_s  *file;
    size_t                  size;      /* buffer=; 0: unbuffered */
    gn_msec_t               flush;     /* flush=; 0: only when full */
    gn_uint_t               binary;

    /* child only */
    u_char                 *buf;       /* malloc()ed on first use */
    size_t                  len;
    gn_timer_t              timer;
    gn_access_file_t       *next;      /* files with a buffer */
    gn_uint_t               lost;      /* failed writes since the last
                                          good one; only the first is
                                          logged */
};

#define GN_ACCESS_LOG_BUFFER_DEFAULT  65536
#define GN_ACCESS_LOG_BUFFER_MAX      (16 * 1024 * 1024)


/* One access_log of a level. */
typedef struct {
    struct gn_open_file_s  *file;
    gn_log_format_t        *format;
    gn_access_file_t       *af;        /* buffering, binary */
} gn_access_log_t;

/* The "access_log" feature's part of a level (feature.h). */
typedef struct {
    gn_array_t       *logs;        /* of gn_access_log_t; NULL: inherit */
    gn_flag_t         off;         /* access_log off; unset: inherit */
    gn_array_t       *formats;     /* main: of gn_log_format_t * */
} gn_access_log_conf_t;

#define gn_access_log_conf(lc)                                               \
    ((gn_access_log_conf_t *) (lc)->conf[GN_FEATURE_ACCESS_LOG])

/* The registry's "access_log":
 *   access_log PATH [FORMAT|binary] [buffer=SIZE] [flush=TIME] | off;
 *   log_format NAME [escape=default|json|none] STRING ...;
 * the default access log; an empty binary log gets its file header when
 * the master opens or reopens the cycle's files. */
extern const gn_feature_t  gn_access_log_feature;

/* Writes one line for a finished request to every access log of its
 * location. Child only. */
void gn_access_log_request(struct gn_http_request_s *r);

/* A value with the access log's variables ($name, ${name}) for another
 * feature (proxy_set_header), compiled at load into fmt: GN_OK, or
 * GN_ERROR with err set (an unknown variable). Its value for r, with
 * nothing escaped: measured (p NULL) or copied to p; its length. */
gn_int_t gn_access_log_template(gn_pool_t *pool, gn_log_format_t *fmt,
    const gn_str_t *s, char *err, size_t errlen);
size_t gn_access_log_render(struct gn_http_request_s *r,
    const gn_log_format_t *fmt, u_char *p);

/* Child only: writes every buffered line out (reopen, exit). */
void gn_access_log_flush_all(void);

#endif /* GN_CORE_ACCESS_LOG_H_INCLUDED */
