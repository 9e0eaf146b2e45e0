/*
 * Shared memory zones.
 */

#include "gn_config.h"

#include <sys/mman.h>

#include "shm.h"
#include "log.h"


gn_int_t
gn_shm_alloc(gn_shm_t *shm)
{
    shm->addr = mmap(NULL, shm->size, PROT_READ | PROT_WRITE,
                     MAP_ANONYMOUS | MAP_SHARED, -1, 0);

    if (shm->addr == MAP_FAILED) {
        gn_log_error(GN_LOG_EMERG, NULL, errno,
                     "mmap(MAP_ANONYMOUS|MAP_SHARED, %zu) for \"%.*s\" failed",
                     shm->size, (int) shm->name.len, shm->name.data);
        shm->addr = NULL;
        return GN_ERROR;
    }

    return GN_OK;
}


gn_shm_zone_t *
gn_shm_zone_get(size_t size, const char *name, gn_log_t *log)
{
    gn_shm_zone_t  *zone;
    void           *addr;

    zone = malloc(sizeof(gn_shm_zone_t));
    if (zone == NULL) {
        gn_log_error(GN_LOG_EMERG, log, errno, "malloc() for zone \"%s\" "
                     "failed", name);
        return NULL;
    }

    addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
                MAP_ANONYMOUS | MAP_SHARED, -1, 0);
    if (addr == MAP_FAILED) {
        gn_log_error(GN_LOG_EMERG, log, errno,
                     "mmap(MAP_ANONYMOUS|MAP_SHARED, %zu) for \"%s\" failed",
                     size, name);
        free(zone);
        return NULL;
    }

    zone->addr = addr;
    zone->size = size;
    zone->refs = 1;

    return zone;
}


void
gn_shm_zone_put(gn_shm_zone_t *zone)
{
    if (zone == NULL || --zone->refs > 0) {
        return;
    }

    (void) munmap(zone->addr, zone->size);
    free(zone);
}
