/*
 * Gannet public ABI: plain data types shared by the server and its modules.
 *
 * Everything in this header is part of the stable module ABI (see
 * api/gannet/abi.h once it exists): types may only be added, never changed.
 * It contains plain data only -- no server structs, no functions.
 */

#ifndef GN_API_TYPES_H_INCLUDED
#define GN_API_TYPES_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>


typedef intptr_t   gn_int_t;
typedef uintptr_t  gn_uint_t;
typedef intptr_t   gn_flag_t;
typedef uint64_t   gn_msec_t;      /* milliseconds */


/* One result vocabulary for the whole server and its modules. */
#define GN_OK          0
#define GN_ERROR      -1
#define GN_AGAIN      -2      /* would block: call again on the next event */
#define GN_BUSY       -3
#define GN_DONE       -4
#define GN_DECLINED   -5      /* not mine: try the next handler */


/* Error log levels, most severe first. */
#define GN_LOG_STDERR  0
#define GN_LOG_EMERG   1      /* cannot start */
#define GN_LOG_ALERT   2      /* our bug, a crashed child, a forced unlock */
#define GN_LOG_CRIT    3      /* resource exhaustion */
#define GN_LOG_ERR     4      /* a request failed on our side */
#define GN_LOG_WARN    5
#define GN_LOG_NOTICE  6
#define GN_LOG_INFO    7      /* client misbehaviour */
#define GN_LOG_DEBUG   8


/* Length-delimited byte string: wire data is never NUL-terminated. */
typedef struct {
    size_t          len;
    unsigned char  *data;
} gn_str_t;

#define gn_string(str)     { sizeof(str) - 1, (unsigned char *) str }
#define gn_null_string     { 0, NULL }
#define gn_str_set(str, text)                                                 \
    (str)->len = sizeof(text) - 1; (str)->data = (unsigned char *) text
#define gn_str_null(str)   (str)->len = 0; (str)->data = NULL

#endif /* GN_API_TYPES_H_INCLUDED */
