/*
 * Open-file cache: a hash table with LRU eviction, one per child.
 */

#include "gn_config.h"

#include <sys/syscall.h>
#include <linux/openat2.h>

#include "file_cache.h"
#include "http_cond.h"
#include "timer.h"
#include "log.h"
#include "str.h"


typedef struct {
    gn_str_t   root;
    int        fd;
} gn_fc_root_t;

static gn_fc_entry_t  **gn_fc_buckets;
static gn_uint_t        gn_fc_mask;
static gn_uint_t        gn_fc_count;
static gn_uint_t        gn_fc_max;          /* lowered when out of fds */
static gn_uint_t        gn_fc_configured;   /* file_cache_entries */
static gn_fc_entry_t   *gn_fc_lru_head;
static gn_fc_entry_t   *gn_fc_lru_tail;
static gn_uint_t        gn_fc_fd_room;      /* 0: no budget set */
static const gn_uint_t *gn_fc_conns;
static gn_uint_t        gn_fc_budget_warned;

/* directory descriptors of the roots, for openat2(RESOLVE_BENEATH); one
 * per distinct `root` of the configuration, so the table only grows
 * while a child warms up */
static gn_fc_root_t    *gn_fc_roots;
static gn_uint_t        gn_fc_nroots;
static gn_uint_t        gn_fc_nalloc;
static gn_uint_t        gn_fc_no_openat2;

/* derived bytes (gn_file_cache_derive): their entries, most recently
 * used first; their total and its limit */
static gn_fc_entry_t   *gn_fc_dhead;
static gn_fc_entry_t   *gn_fc_dtail;
static size_t           gn_fc_dbytes;
static size_t           gn_fc_dbudget;


gn_int_t
gn_file_cache_init(gn_uint_t max_entries)
{
    gn_uint_t  n;

    for (n = 64; n < 2 * max_entries; n <<= 1) { /* void */ }

    gn_fc_buckets = calloc(n, sizeof(gn_fc_entry_t *));
    if (gn_fc_buckets == NULL) {
        return GN_ERROR;
    }

    gn_fc_mask = n - 1;
    gn_fc_max = max_entries;
    gn_fc_configured = max_entries;

    return GN_OK;
}


static uint32_t
gn_fc_hash(const u_char *p, size_t n)
{
    uint32_t  h = 2166136261u;

    while (n--) {
        h = (h ^ *p++) * 16777619u;
    }

    return h;
}


static void
gn_fc_lru_unlink(gn_fc_entry_t *e)
{
    if (e->prev) { e->prev->next = e->next; } else { gn_fc_lru_head = e->next; }
    if (e->next) { e->next->prev = e->prev; } else { gn_fc_lru_tail = e->prev; }
    e->prev = e->next = NULL;
}


static void
gn_fc_lru_push(gn_fc_entry_t *e)
{
    e->prev = NULL;
    e->next = gn_fc_lru_head;
    if (gn_fc_lru_head) {
        gn_fc_lru_head->prev = e;
    } else {
        gn_fc_lru_tail = e;
    }
    gn_fc_lru_head = e;
}


static void
gn_fc_derived_drop(gn_fc_entry_t *e)
{
    if (e->derived == NULL) {
        return;
    }

    if (e->dprev) { e->dprev->dnext = e->dnext; } else { gn_fc_dhead = e->dnext; }
    if (e->dnext) { e->dnext->dprev = e->dprev; } else { gn_fc_dtail = e->dprev; }
    e->dprev = e->dnext = NULL;

    gn_fc_dbytes -= e->derived_len;
    free(e->derived);
    e->derived = NULL;
    e->derived_len = 0;
}


static void
gn_fc_derived_push(gn_fc_entry_t *e)
{
    e->dprev = NULL;
    e->dnext = gn_fc_dhead;
    if (gn_fc_dhead) {
        gn_fc_dhead->dprev = e;
    } else {
        gn_fc_dtail = e;
    }
    gn_fc_dhead = e;
}


void
gn_file_cache_derived_budget(size_t bytes)
{
    gn_fc_dbudget = bytes;
}


const u_char *
gn_file_cache_derived(gn_fc_entry_t *e, gn_uint_t tag, size_t *len)
{
    if (e->derived == NULL || e->derived_tag != tag) {
        return NULL;
    }

    if (gn_fc_dhead != e) {                  /* most recently used */
        e->dprev->dnext = e->dnext;
        if (e->dnext) { e->dnext->dprev = e->dprev; } else { gn_fc_dtail = e->dprev; }
        gn_fc_derived_push(e);
    }

    *len = e->derived_len;
    return e->derived;
}


gn_int_t
gn_file_cache_derive(gn_fc_entry_t *e, gn_uint_t tag, u_char *data,
    size_t len)
{
    gn_fc_entry_t  *victim, *prev;

    if (!e->cached || len > gn_fc_dbudget) {
        return GN_DECLINED;
    }

    /* bytes of another tag that another user of e may be sending: kept
     * (the caller, one of e's users, sends its own from its memory) */
    if (e->derived != NULL && e->refs > 1) {
        return GN_DECLINED;
    }

    gn_fc_derived_drop(e);

    for (victim = gn_fc_dtail; victim && gn_fc_dbytes + len > gn_fc_dbudget;
         victim = prev)
    {
        prev = victim->dprev;
        if (victim->refs == 0) {
            gn_fc_derived_drop(victim);
        }
    }

    if (gn_fc_dbytes + len > gn_fc_dbudget) {
        return GN_DECLINED;
    }

    e->derived = data;
    e->derived_len = len;
    e->derived_tag = tag;
    gn_fc_dbytes += len;
    gn_fc_derived_push(e);

    return GN_OK;
}


static void
gn_fc_free(gn_fc_entry_t *e)
{
    if (e->fd != -1) {
        close(e->fd);
    }
    gn_fc_derived_drop(e);
    free(e->content);
    free(e);
}


/* Takes e out of the table; it is freed now or when its last user lets
 * go of it. */
static void
gn_fc_remove(gn_fc_entry_t *e)
{
    gn_fc_entry_t  **pp;

    for (pp = &gn_fc_buckets[e->hash & gn_fc_mask]; *pp; pp = &(*pp)->hnext) {
        if (*pp == e) {
            *pp = e->hnext;
            break;
        }
    }

    gn_fc_lru_unlink(e);
    e->cached = 0;
    gn_fc_count--;

    if (e->refs == 0) {
        gn_fc_free(e);
    }
}


void
gn_file_cache_release(gn_fc_entry_t *e)
{
    if (--e->refs == 0 && !e->cached) {
        gn_fc_free(e);
    }
}


/*
 * Every cached entry holds a descriptor. When the process runs out of
 * them (file_cache_entries plus the connections above the descriptor
 * limit), the cache gives back a quarter of its entries, but never goes
 * below `keep`, from the cold end and only those no response is using,
 * and from then on holds at most what it kept: the connections and
 * files that need a descriptor get one, and the cache stops growing into
 * them again.
 */
gn_uint_t
gn_file_cache_emfile(gn_uint_t keep)
{
    gn_fc_entry_t  *e, *prev;
    gn_uint_t       want, freed, before;

    before = gn_fc_count;
    if (before <= keep) {
        return 0;
    }
    want = gn_min(before / 4 + 1, before - keep);
    freed = 0;

    for (e = gn_fc_lru_tail; e != NULL && freed < want; e = prev) {
        prev = e->prev;
        if (e->refs == 0) {
            gn_fc_remove(e);
            freed++;
        }
    }

    if (freed == 0) {
        return 0;
    }

    if (gn_fc_max > gn_max(gn_fc_count, 1)) {
        gn_fc_max = gn_max(gn_fc_count, 1);
        gn_log_error(GN_LOG_WARN, NULL, 0, "open-file cache: out of "
                     "descriptors with %u entries open; it holds at most %u "
                     "from now on (file_cache_entries %u): raise the "
                     "descriptor limit (ulimit -n) or lower "
                     "file_cache_entries", (unsigned) before,
                     (unsigned) gn_fc_max, (unsigned) gn_fc_configured);
    }

    return freed;
}


gn_uint_t
gn_file_cache_size(void)
{
    return gn_fc_count;
}


static int
gn_fc_root_fd(const gn_str_t *root)
{
    gn_fc_root_t  *roots;
    gn_uint_t      i, n;
    char           path[PATH_MAX];
    int            fd;

    for (i = 0; i < gn_fc_nroots; i++) {
        if (gn_fc_roots[i].root.len == root->len
            && memcmp(gn_fc_roots[i].root.data, root->data, root->len) == 0)
        {
            return gn_fc_roots[i].fd;
        }
    }

    if (root->len >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, root->data, root->len);
    path[root->len] = '\0';

    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd == -1) {
        return -1;
    }

    /* every descriptor handed out stays in the table (a full table used
     * to leak one per lookup) */
    if (gn_fc_nroots == gn_fc_nalloc) {
        n = gn_fc_nalloc ? 2 * gn_fc_nalloc : 16;
        roots = realloc(gn_fc_roots, n * sizeof(gn_fc_root_t));
        if (roots == NULL) {
            close(fd);
            errno = ENOMEM;
            return -1;
        }
        gn_fc_roots = roots;
        gn_fc_nalloc = n;
    }

    gn_fc_roots[gn_fc_nroots].root = *root;      /* config memory: stable */
    gn_fc_roots[gn_fc_nroots].fd = fd;
    gn_fc_nroots++;

    return fd;
}


gn_int_t
gn_file_read(int fd, u_char *buf, size_t len, off_t off)
{
    ssize_t  n;

    while (len > 0) {
        n = pread(fd, buf, len, off);
        if (n > 0) {
            buf += n;
            off += n;
            len -= (size_t) n;
            continue;
        }
        if (n == 0) {
            errno = EIO;
            return GN_ERROR;
        }
        if (errno != EINTR) {
            return GN_ERROR;
        }
    }

    return GN_OK;
}


gn_int_t
gn_file_cache_root_owner(const gn_str_t *root, uid_t *uid)
{
    struct stat  st;
    int          fd;

    fd = gn_fc_root_fd(root);
    if (fd == -1 || fstat(fd, &st) == -1) {
        return GN_ERROR;
    }

    /* not remembered: a chown of the root counts at once */
    *uid = st.st_uid;
    return GN_OK;
}


/* Does the opened fd lie under root? Decided by the path the kernel
 * reports for the descriptor itself, so nothing can be swapped between
 * the check and the open. */
static gn_uint_t
gn_fc_fd_under_root(int fd, const gn_str_t *root)
{
    char     link[64], real[PATH_MAX], root0[PATH_MAX], rroot[PATH_MAX];
    ssize_t  n;
    size_t   rlen;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, real, sizeof(real) - 1);
    if (n <= 0 || root->len >= sizeof(root0)) {
        return 0;
    }
    real[n] = '\0';

    memcpy(root0, root->data, root->len);
    root0[root->len] = '\0';
    if (realpath(root0, rroot) == NULL) {
        return 0;
    }

    rlen = strlen(rroot);
    if (rlen == 1) {
        return 1;                                   /* root is "/" */
    }

    return strncmp(real, rroot, rlen) == 0
           && (real[rlen] == '/' || real[rlen] == '\0');
}


/*
 * Opens `path` (root + rel) with `flags` (O_RDONLY | O_NONBLOCK to read
 * it, O_PATH to look at it). With `beneath`, the file must resolve to a
 * place under root, whatever symlinks lead there. The fast path is
 * openat2(RESOLVE_BENEATH) from the root's directory fd; it refuses more
 * than we must (an absolute symlink, or a ".." hop out and back in), so
 * on its EXDEV -- and on kernels without openat2 -- the file is opened
 * normally and kept only if its real path is under root.
 */
static int
gn_fc_open_file(const gn_str_t *root, const char *path, size_t root_len,
    gn_uint_t beneath, int flags)
{
    struct open_how  how;
    const char      *rel;
    int              rfd, fd;

    flags |= O_CLOEXEC;

    if (!beneath) {
        return open(path, flags);
    }

    if (!gn_fc_no_openat2) {
        rfd = gn_fc_root_fd(root);
        if (rfd == -1) {
            return -1;
        }

        rel = path + root_len;
        while (*rel == '/') {
            rel++;
        }
        if (*rel == '\0') {
            rel = ".";
        }

        memset(&how, 0, sizeof(how));
        how.flags = (uint64_t) flags;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

        fd = (int) syscall(SYS_openat2, rfd, rel, &how, sizeof(how));
        if (fd != -1 || (errno != ENOSYS && errno != EXDEV)) {
            return fd;
        }
        if (errno == ENOSYS) {
            gn_fc_no_openat2 = 1;
        }
    }

    fd = open(path, flags);
    if (fd == -1) {
        return -1;
    }

    if (!gn_fc_fd_under_root(fd, root)) {
        close(fd);
        errno = EXDEV;
        return -1;
    }

    return fd;
}


static gn_int_t
gn_fc_fill(gn_fc_entry_t *e, const gn_fc_open_t *op, struct stat *st)
{
    e->is_dir = S_ISDIR(st->st_mode);
    e->is_file = S_ISREG(st->st_mode);
    e->size = st->st_size;
    e->mtime = st->st_mtime;
    e->ctime = st->st_ctim;
    e->ino = st->st_ino;
    e->dev = st->st_dev;
    e->mode = st->st_mode;
    e->uid = st->st_uid;
    e->checked = gn_current_msec;
    e->content = NULL;

    e->etag.data = e->etag_buf;
    e->etag.len = gn_http_etag(e->etag_buf, st->st_mtime, st->st_size);

    if (e->is_file && st->st_size > 0
        && (size_t) st->st_size < op->content_max)
    {
        e->content = malloc((size_t) st->st_size);
        if (e->content != NULL
            && gn_file_read(e->fd, e->content, (size_t) st->st_size, 0)
               != GN_OK)
        {
            free(e->content);              /* fall back to the descriptor */
            e->content = NULL;
        }
    }

    return GN_OK;
}


static gn_fc_entry_t *
gn_fc_lookup(const u_char *key, size_t len, uint32_t hash)
{
    gn_fc_entry_t  *e;

    for (e = gn_fc_buckets[hash & gn_fc_mask]; e != NULL; e = e->hnext) {
        if (e->hash == hash && e->key_len == len
            && memcmp(e->key, key, len) == 0)
        {
            return e;
        }
    }

    return NULL;
}


void
gn_file_cache_fd_budget(gn_uint_t room, const gn_uint_t *conns)
{
    gn_fc_fd_room = room;
    gn_fc_conns = conns;
}


/* How many entries the cache may hold now: file_cache_entries (or what
 * running out of descriptors left of it), and no more than the
 * descriptors the connections open now and the reserve leave. */
static gn_uint_t
gn_fc_room(void)
{
    gn_uint_t  used;

    if (gn_fc_fd_room == 0) {
        return gn_fc_max;
    }

    used = *gn_fc_conns + GN_FC_FD_RESERVE;
    if (used >= gn_fc_fd_room) {
        return 0;
    }

    return gn_min(gn_fc_max, gn_fc_fd_room - used);
}


/* e is not kept when there is no room (no descriptor to spare, and every
 * entry in use): e->cached stays 0 and its last user closes it. */
static void
gn_fc_insert(gn_fc_entry_t *e)
{
    gn_fc_entry_t  *victim, *prev;
    gn_uint_t       room;

    room = gn_fc_room();

    if (room < gn_fc_max && gn_fc_count >= room && !gn_fc_budget_warned) {
        gn_fc_budget_warned = 1;
        gn_log_error(GN_LOG_WARN, NULL, 0, "open-file cache: %u entries and "
                     "%u connections fill the descriptor limit less %u "
                     "spare ones; entries are evicted early from now on "
                     "(file_cache_entries %u): raise the descriptor limit "
                     "(ulimit -n) or lower file_cache_entries",
                     (unsigned) gn_fc_count, (unsigned) *gn_fc_conns,
                     (unsigned) GN_FC_FD_RESERVE, (unsigned) gn_fc_configured);
    }

    /* evict from the cold end, skipping entries in use */
    for (victim = gn_fc_lru_tail; victim && gn_fc_count >= room;
         victim = prev)
    {
        prev = victim->prev;
        if (victim->refs == 0) {
            gn_fc_remove(victim);
        }
    }

    if (gn_fc_count >= room && room < gn_fc_max) {
        return;
    }

    e->hnext = gn_fc_buckets[e->hash & gn_fc_mask];
    gn_fc_buckets[e->hash & gn_fc_mask] = e;
    gn_fc_lru_push(e);
    e->cached = 1;
    gn_fc_count++;
}


/* An entry's key: a flag byte ('b' beneath, else 'f'), then root + uri
 * + name, NUL-terminated (the path from key + 1). Its length, or 0 when
 * it does not fit (ENAMETOOLONG). */
static size_t
gn_fc_key(const gn_fc_open_t *op, u_char *key, size_t size)
{
    size_t   len;
    u_char  *p;

    len = 1 + op->root->len + op->uri->len + (op->name ? op->name->len : 0);
    if (len >= size) {
        return 0;
    }

    p = key;
    *p++ = op->beneath ? 'b' : 'f';
    p = gn_cpymem(p, op->root->data, op->root->len);
    p = gn_cpymem(p, op->uri->data, op->uri->len);
    if (op->name) {
        p = gn_cpymem(p, op->name->data, op->name->len);
    }
    *p = '\0';

    return len;
}


gn_int_t
gn_file_cache_stat(const gn_fc_open_t *op, struct stat *st, int *err)
{
    u_char  key[PATH_MAX + 2];
    int     fd;

    if (gn_fc_key(op, key, sizeof(key)) == 0) {
        *err = ENAMETOOLONG;
        return GN_ERROR;
    }

    fd = gn_fc_open_file(op->root, (char *) key + 1, op->root->len,
                         op->beneath, O_PATH);
    if (fd == -1 || fstat(fd, st) == -1) {
        *err = errno;
        if (fd != -1) {
            close(fd);
        }
        return GN_ERROR;
    }

    close(fd);
    return GN_OK;
}


gn_fc_entry_t *
gn_file_cache_open(const gn_fc_open_t *op, int *err)
{
    gn_fc_entry_t  *e;
    struct stat     st;
    size_t          len;
    uint32_t        hash;
    u_char          key[PATH_MAX + 2];

    len = gn_fc_key(op, key, sizeof(key));
    if (len == 0) {
        *err = ENAMETOOLONG;
        return NULL;
    }

    hash = gn_fc_hash(key, len);

    if (op->use_cache && gn_fc_buckets != NULL) {
        e = gn_fc_lookup(key, len, hash);

        if (e != NULL && gn_current_msec - e->checked >= op->valid) {
            /* stale: still the same file? */
            if (stat((char *) key + 1, &st) == 0 && st.st_ino == e->ino
                && st.st_dev == e->dev && st.st_mtime == e->mtime
                && st.st_size == e->size
                && st.st_ctim.tv_sec == e->ctime.tv_sec
                && st.st_ctim.tv_nsec == e->ctime.tv_nsec)
            {
                e->checked = gn_current_msec;
            } else {
                gn_fc_remove(e);
                e = NULL;
            }
        }

        if (e != NULL) {
            gn_fc_lru_unlink(e);
            gn_fc_lru_push(e);
            e->refs++;
            return e;
        }
    }

    e = malloc(sizeof(gn_fc_entry_t) + len);
    if (e == NULL) {
        *err = ENOMEM;
        return NULL;
    }
    memset(e, 0, sizeof(gn_fc_entry_t));
    memcpy(e->key, key, len + 1);
    e->key_len = len;
    e->hash = hash;

    e->fd = gn_fc_open_file(op->root, (char *) key + 1, op->root->len,
                            op->beneath, O_RDONLY | O_NONBLOCK);
    if (e->fd == -1 && (errno == EMFILE || errno == ENFILE)
        && gn_file_cache_emfile(0) > 0)
    {
        e->fd = gn_fc_open_file(op->root, (char *) key + 1, op->root->len,
                                op->beneath, O_RDONLY | O_NONBLOCK);
    }
    if (e->fd == -1 || fstat(e->fd, &st) == -1) {
        *err = errno;
        if (e->fd != -1) {
            close(e->fd);
        }
        free(e);
        return NULL;
    }

    gn_fc_fill(e, op, &st);
    e->refs = 1;

    if (op->use_cache && gn_fc_buckets != NULL && !e->is_dir) {
        gn_fc_insert(e);
    }

    return e;
}
