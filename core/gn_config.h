/*
 * First include of every file in core/: configure's results, the system
 * headers nearly every file needs, and the basic types.
 */

#ifndef GN_CORE_GN_CONFIG_H_INCLUDED
#define GN_CORE_GN_CONFIG_H_INCLUDED

#include "gn_auto_config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <limits.h>
#include <time.h>

#include <gannet/types.h>



#define GN_ALIGNMENT        sizeof(uintptr_t)
#define gn_align(d, a)      (((d) + ((a) - 1)) & ~((a) - 1))
#define gn_align_ptr(p, a)                                                    \
    (u_char *) (((uintptr_t) (p) + ((uintptr_t) (a) - 1))                    \
                & ~((uintptr_t) (a) - 1))

#define gn_min(a, b)        ((a) < (b) ? (a) : (b))
#define gn_max(a, b)        ((a) > (b) ? (a) : (b))
#define gn_nelems(a)        (sizeof(a) / sizeof((a)[0]))

#define GN_INT_T_LEN        (sizeof("-9223372036854775808") - 1)
#define GN_MAX_INT_T_VALUE  INTPTR_MAX

#define gn_unused           __attribute__((unused))
#define gn_printf(f, a)     __attribute__((format(printf, f, a)))
#define gn_likely(x)        __builtin_expect(!!(x), 1)
#define gn_unlikely(x)      __builtin_expect(!!(x), 0)

/* Most processes a configuration may ask for ("children"). */
#define GN_MAX_CHILDREN     256

#endif /* GN_CORE_GN_CONFIG_H_INCLUDED */
