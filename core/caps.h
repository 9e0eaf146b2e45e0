/*
 * Capabilities (Linux): what the master keeps after start-up, and the
 * proof that a child holds none. Pure system-call wrappers: they do not
 * log; the caller names what failed.
 */

#ifndef GN_CORE_CAPS_H_INCLUDED
#define GN_CORE_CAPS_H_INCLUDED

#include "gn_config.h"

#if (HAVE_LINUX_CAPABILITY_H)
#include <linux/capability.h>
#else
#define CAP_SYS_CHROOT  18
#endif


typedef struct {
    uint64_t  effective;
    uint64_t  permitted;
    uint64_t  inheritable;
    uint64_t  ambient;
} gn_caps_t;


/* The calling thread's four capability sets. */
gn_int_t gn_caps_get(gn_caps_t *caps);

/* Is `cap` in the effective set? */
gn_uint_t gn_caps_have(int cap);

/* The set the master keeps after start-up (see caps.c for why each
 * one); CAP_SYS_CHROOT only when `chroot` is configured. */
uint64_t gn_caps_master_needs(gn_uint_t chroot);

/*
 * Keeps only `keep` (intersected with what the process has) in the
 * effective and permitted sets, empties the inheritable and ambient
 * sets and, when allowed (CAP_SETPCAP), drops everything else from the
 * bounding set too, so that no program executed later regains it.
 * keep == 0 gives up every capability. On failure *failed names the
 * call.
 */
gn_int_t gn_caps_restrict(uint64_t keep, const char **failed);

#endif /* GN_CORE_CAPS_H_INCLUDED */
