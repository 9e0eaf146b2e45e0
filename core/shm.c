/*
 * Shared memory zones.
 */

#include "gn_config.h"

#include <sys/mman.h>

#include "shm.h"
#include "log.h"


#define GN_SHM_ZONES_MAX   16

/* the master's live zones (what an upgrade passes), and the zones passed
 * to this one */
static gn_shm_zone_t  *gn_shm_zones[GN_SHM_ZONES_MAX];

typedef struct {
    char       name[32];
    size_t     size;
    int        fd;              /* -1: taken */
} gn_shm_passed_t;

static gn_shm_passed_t  gn_shm_passed[GN_SHM_ZONES_MAX];
static gn_uint_t        gn_shm_npassed;


void
gn_shm_inherit(gn_log_t *log)
{
    const char  *v;
    char         name[32];
    unsigned     long long size;
    struct stat  st;
    int          fd, n;

    v = getenv("GANNET_ZONES");

    while (v != NULL && *v != '\0' && gn_shm_npassed < GN_SHM_ZONES_MAX) {
        n = 0;
        if (sscanf(v, "%31[^:,]:%llu:%d%n", name, &size, &fd, &n) != 3
            || n == 0)
        {
            gn_log_error(GN_LOG_WARN, log, 0, "GANNET_ZONES: \"%s\" "
                         "ignored: expected NAME:SIZE:FD", v);
            break;
        }
        v += n;
        v += *v == ',';

        if (fd < 3 || fstat(fd, &st) == -1 || (size_t) st.st_size < size) {
            gn_log_error(GN_LOG_WARN, log, 0, "GANNET_ZONES: zone \"%s\" "
                         "(descriptor %d) is not there: a new one is made",
                         name, fd);
            continue;
        }
        (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
        snprintf(gn_shm_passed[gn_shm_npassed].name,
                 sizeof(gn_shm_passed[0].name), "%s", name);
        gn_shm_passed[gn_shm_npassed].size = (size_t) size;
        gn_shm_passed[gn_shm_npassed].fd = fd;
        gn_shm_npassed++;
    }

    (void) unsetenv("GANNET_ZONES");
}


void
gn_shm_inherited_close(void)
{
    gn_uint_t  i;

    for (i = 0; i < gn_shm_npassed; i++) {
        if (gn_shm_passed[i].fd != -1) {
            close(gn_shm_passed[i].fd);
            gn_shm_passed[i].fd = -1;
        }
    }
    gn_shm_npassed = 0;
}


/* The passed zone name of size bytes, taken; -1: none. */
static int
gn_shm_take_passed(const char *name, size_t size)
{
    gn_uint_t  i;
    int        fd;

    for (i = 0; i < gn_shm_npassed; i++) {
        if (gn_shm_passed[i].fd != -1 && gn_shm_passed[i].size == size
            && strcmp(gn_shm_passed[i].name, name) == 0)
        {
            fd = gn_shm_passed[i].fd;
            gn_shm_passed[i].fd = -1;
            return fd;
        }
    }
    return -1;
}


void *
gn_shm_map_passed(const char *name, size_t size)
{
    void  *addr;
    int    fd;

    fd = gn_shm_take_passed(name, size);
    if (fd == -1) {
        return NULL;
    }

    addr = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);

    return addr == MAP_FAILED ? NULL : addr;
}


gn_shm_zone_t *
gn_shm_zone_get(size_t size, const char *name, gn_log_t *log)
{
    gn_shm_zone_t  *zone;
    void           *addr;
    gn_uint_t       i;
    int             fd, inherited;

    for (i = 0; i < GN_SHM_ZONES_MAX && gn_shm_zones[i] != NULL; i++) {
        /* void */
    }
    zone = i < GN_SHM_ZONES_MAX ? malloc(sizeof(gn_shm_zone_t)) : NULL;
    if (zone == NULL) {
        gn_log_error(GN_LOG_EMERG, log, errno, "no room for zone \"%s\"",
                     name);
        return NULL;
    }

    fd = gn_shm_take_passed(name, size);
    inherited = fd != -1;

    if (fd == -1) {
        /* a memfd, which an upgrade can pass on; else anonymous */
        fd = memfd_create(name, MFD_CLOEXEC);
        if (fd != -1 && ftruncate(fd, (off_t) size) == -1) {
            close(fd);
            fd = -1;
        }
    }

    addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
                fd != -1 ? MAP_SHARED : MAP_ANONYMOUS | MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
        gn_log_error(GN_LOG_EMERG, log, errno,
                     "mmap(MAP_SHARED, %zu) for \"%s\" failed", size, name);
        if (fd != -1) {
            close(fd);
        }
        free(zone);
        return NULL;
    }

    zone->addr = addr;
    zone->size = size;
    zone->refs = 1;
    zone->fd = fd;
    zone->inherited = inherited;
    snprintf(zone->name, sizeof(zone->name), "%s", name);
    gn_shm_zones[i] = zone;

    return zone;
}


void
gn_shm_zone_put(gn_shm_zone_t *zone)
{
    gn_uint_t  i;

    if (zone == NULL || --zone->refs > 0) {
        return;
    }

    for (i = 0; i < GN_SHM_ZONES_MAX; i++) {
        if (gn_shm_zones[i] == zone) {
            gn_shm_zones[i] = NULL;
        }
    }
    (void) munmap(zone->addr, zone->size);
    if (zone->fd != -1) {
        close(zone->fd);
    }
    free(zone);
}


void
gn_shm_child(void)
{
    gn_uint_t  i;

    for (i = 0; i < GN_SHM_ZONES_MAX; i++) {
        if (gn_shm_zones[i] != NULL && gn_shm_zones[i]->fd != -1) {
            close(gn_shm_zones[i]->fd);
            gn_shm_zones[i]->fd = -1;
        }
    }
}


gn_int_t
gn_shm_pass(int first)
{
    char       env[GN_SHM_ZONES_MAX * 64], *p = env;
    gn_uint_t  i;
    int        fd;

    env[0] = '\0';

    for (i = 0; i < GN_SHM_ZONES_MAX; i++) {
        if (gn_shm_zones[i] == NULL || gn_shm_zones[i]->fd == -1) {
            continue;
        }
        fd = fcntl(gn_shm_zones[i]->fd, F_DUPFD, first);
        if (fd == -1) {
            return GN_ERROR;
        }
        p += snprintf(p, (size_t) (env + sizeof(env) - p), "%s%s:%zu:%d",
                      p == env ? "" : ",", gn_shm_zones[i]->name,
                      gn_shm_zones[i]->size, fd);
        first = fd + 1;
    }

    return setenv("GANNET_ZONES", env, 1) == 0 ? GN_OK : GN_ERROR;
}
