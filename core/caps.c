/*
 * Linux capabilities, through the raw capget/capset system calls (no
 * libcap): the master keeps only what it still needs once it has
 * started, and children keep none at all.
 */

#include "gn_config.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#if (HAVE_LINUX_CAPABILITY_H)
#include <linux/capability.h>
#endif

#include "caps.h"


#if (HAVE_LINUX_CAPABILITY_H)

#define gn_cap_bit(c)   ((uint64_t) 1 << (c))

/* What the master does after start-up, and the capability each needs:
 * bind privileged ports again on reload; fork children that change
 * uid, gid and groups (and a CGI launcher that does); signal children
 * running as another user; create, fchown and reopen logs and read
 * certificates, keys and configuration owned by others. */
static const uint64_t  gn_caps_master_mask =
      gn_cap_bit(CAP_NET_BIND_SERVICE)
    | gn_cap_bit(CAP_SETUID)
    | gn_cap_bit(CAP_SETGID)
    | gn_cap_bit(CAP_KILL)
    | gn_cap_bit(CAP_CHOWN)
    | gn_cap_bit(CAP_DAC_OVERRIDE)
    | gn_cap_bit(CAP_DAC_READ_SEARCH);


gn_int_t
gn_caps_get(gn_caps_t *caps)
{
    struct __user_cap_header_struct  hdr;
    struct __user_cap_data_struct    data[2];
    int                              i;

    memset(&hdr, 0, sizeof(hdr));
    memset(data, 0, sizeof(data));
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = 0;

    if (syscall(SYS_capget, &hdr, data) == -1) {
        return GN_ERROR;
    }

    caps->effective = (uint64_t) data[1].effective << 32 | data[0].effective;
    caps->permitted = (uint64_t) data[1].permitted << 32 | data[0].permitted;
    caps->inheritable = (uint64_t) data[1].inheritable << 32
                        | data[0].inheritable;

    /* the ambient set has no capget: ask for each capability */
    caps->ambient = 0;
    for (i = 0; i < 64; i++) {
        int  rc = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, i, 0, 0);

        if (rc == -1) {
            break;                              /* past CAP_LAST_CAP */
        }
        if (rc == 1) {
            caps->ambient |= gn_cap_bit(i);
        }
    }

    return GN_OK;
}


static gn_int_t
gn_caps_set(uint64_t eff, uint64_t prm, uint64_t inh)
{
    struct __user_cap_header_struct  hdr;
    struct __user_cap_data_struct    data[2];

    memset(&hdr, 0, sizeof(hdr));
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = 0;

    data[0].effective = (uint32_t) eff;
    data[1].effective = (uint32_t) (eff >> 32);
    data[0].permitted = (uint32_t) prm;
    data[1].permitted = (uint32_t) (prm >> 32);
    data[0].inheritable = (uint32_t) inh;
    data[1].inheritable = (uint32_t) (inh >> 32);

    return syscall(SYS_capset, &hdr, data) == -1 ? GN_ERROR : GN_OK;
}


uint64_t
gn_caps_master_needs(gn_uint_t chroot)
{
    return gn_caps_master_mask | (chroot ? gn_cap_bit(CAP_SYS_CHROOT) : 0);
}


gn_uint_t
gn_caps_have(int cap)
{
    gn_caps_t  caps;

    if (gn_caps_get(&caps) != GN_OK) {
        return 0;
    }

    return (caps.effective & gn_cap_bit(cap)) != 0;
}


gn_int_t
gn_caps_restrict(uint64_t keep, const char **failed)
{
    gn_caps_t  caps;
    int        i, rc;

    if (gn_caps_get(&caps) != GN_OK) {
        *failed = "capget()";
        return GN_ERROR;
    }

    keep &= caps.permitted;

    /* the bounding set first: dropping from it needs CAP_SETPCAP, which
     * the capset below gives up; without CAP_SETPCAP (not root) there
     * is nothing an exec could gain that the kernel does not bound */
    if (caps.effective & gn_cap_bit(CAP_SETPCAP)) {
        for (i = 0; i < 64; i++) {
            if (keep & gn_cap_bit(i)) {
                continue;
            }
            rc = prctl(PR_CAPBSET_READ, i, 0, 0, 0);
            if (rc == -1) {
                break;                          /* past CAP_LAST_CAP */
            }
            if (rc == 0) {
                continue;                       /* not there anyway */
            }
            if (prctl(PR_CAPBSET_DROP, i, 0, 0, 0) == -1) {
                *failed = "prctl(PR_CAPBSET_DROP)";
                return GN_ERROR;
            }
        }
    }

    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1
        && errno != EINVAL)
    {
        *failed = "prctl(PR_CAP_AMBIENT_CLEAR_ALL)";
        return GN_ERROR;
    }

    if (gn_caps_set(keep, keep, 0) != GN_OK) {
        *failed = "capset()";
        return GN_ERROR;
    }

    return GN_OK;
}

#else /* !HAVE_LINUX_CAPABILITY_H */

gn_int_t
gn_caps_get(gn_caps_t *caps)
{
    memset(caps, 0, sizeof(gn_caps_t));
    return GN_OK;
}


uint64_t
gn_caps_master_needs(gn_uint_t chroot)
{
    return 0;
}


gn_uint_t
gn_caps_have(int cap)
{
    return geteuid() == 0;
}


gn_int_t
gn_caps_restrict(uint64_t keep, const char **failed)
{
    return GN_OK;
}

#endif
