/*
 * Access logs: formats compiled once at configuration time into a list of
 * literal and variable parts; each request's line is built in a buffer and
 * written with one write(2) to an O_APPEND file, so lines from several
 * children never interleave.
 */

#ifndef GN_CORE_ACCESS_LOG_H_INCLUDED
#define GN_CORE_ACCESS_LOG_H_INCLUDED

#include "gn_config.h"

#include "pool.h"
#include "array.h"


struct gn_http_request_s;
struct gn_access_log_s;

typedef struct {
    gn_uint_t         var;         /* 0: literal text; else a variable */
    gn_str_t          text;
} gn_log_op_t;

struct gn_log_format_s {
    gn_str_t          name;
    gn_array_t        ops;         /* of gn_log_op_t */
};


/*
 * Compiles the format strings args[0..n) (concatenated, as nginx does)
 * into `fmt`. Returns GN_OK, or GN_ERROR with err set (e.g. an unknown
 * variable).
 */
gn_int_t gn_access_log_compile(gn_pool_t *pool,
    struct gn_log_format_s *fmt, const gn_str_t *args, gn_uint_t n,
    char *err, size_t errlen);

/* The built-in "combined" and "common" formats (compiled on first use). */
struct gn_log_format_s *gn_access_log_builtin(gn_pool_t *pool,
    const gn_str_t *name);

/* Writes one line for a finished request to every access log of its
 * location. Child only. */
void gn_access_log_request(struct gn_http_request_s *r);

#endif /* GN_CORE_ACCESS_LOG_H_INCLUDED */
