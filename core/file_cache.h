/*
 * The per-child open-file cache (Zeus's stat cache, nginx's
 * open_file_cache): descriptor, size, mtime, ETag, and for small files the
 * bytes themselves, so a hit costs no system call. An entry older than
 * `valid` milliseconds is checked with stat() before use, so a changed
 * file is never served stale longer than that.
 *
 * Entries are reference counted: a response holds its entry until it is
 * sent, so eviction or revalidation never closes a descriptor in use.
 */

#ifndef GN_CORE_FILE_CACHE_H_INCLUDED
#define GN_CORE_FILE_CACHE_H_INCLUDED

#include "gn_config.h"


typedef struct gn_fc_entry_s  gn_fc_entry_t;

struct gn_fc_entry_s {
    gn_fc_entry_t   *hnext;         /* hash chain */
    gn_fc_entry_t   *prev;          /* LRU list, most recent first */
    gn_fc_entry_t   *next;
    uint32_t         hash;
    gn_uint_t        refs;
    gn_uint_t        cached;        /* in the table (else freed at 0 refs) */
    gn_msec_t        checked;       /* when stat() last agreed */

    int              fd;
    gn_uint_t        is_dir;
    gn_uint_t        is_file;
    off_t            size;
    time_t           mtime;
    struct timespec  ctime;         /* chmod, chown, rename... */
    ino_t            ino;
    dev_t            dev;
    mode_t           mode;          /* for the private_files check */
    uid_t            uid;
    u_char          *content;       /* whole file when small, or NULL */
    u_char          *derived;       /* bytes made from the file (its gzip
                                       output), malloc'd, or NULL */
    size_t           derived_len;
    gn_uint_t        derived_tag;   /* ... what they are (the level) */
    gn_fc_entry_t   *dprev;         /* entries with derived bytes, most */
    gn_fc_entry_t   *dnext;         /* ... recently used first */
    gn_str_t         etag;          /* points into etag_buf */
    u_char           etag_buf[40];

    size_t           key_len;
    u_char           key[1];        /* flag byte + absolute path + NUL */
};

typedef struct {
    const gn_str_t  *root;          /* absolute, no trailing slash */
    const gn_str_t  *uri;           /* normalised, starts with '/' */
    const gn_str_t  *name;          /* appended to uri (index), or NULL */
    gn_uint_t        beneath;       /* refuse symlinks leaving root */
    gn_uint_t        use_cache;
    gn_msec_t        valid;
    size_t           content_max;   /* keep bytes of files smaller */
} gn_fc_open_t;


/* Child only, once. */
gn_int_t gn_file_cache_init(gn_uint_t max_entries);

/* Returns a referenced entry, or NULL with *err set to the errno of the
 * failure (ENOENT, EACCES, ...; EXDEV when a symlink leads out of root). */
gn_fc_entry_t *gn_file_cache_open(const gn_fc_open_t *op, int *err);

void gn_file_cache_release(gn_fc_entry_t *e);

/* What op's file is (a stat() of it), resolved as gn_file_cache_open
 * would (with op->beneath, never past root), without opening it to read
 * and without the cache: for a listing that follows symlinks, where an
 * open would read small files and hold a descriptor for each. GN_OK, or
 * GN_ERROR with *err set as gn_file_cache_open's. */
gn_int_t gn_file_cache_stat(const gn_fc_open_t *op, struct stat *st,
    int *err);

/* Out of descriptors: closes up to a quarter of the entries no response
 * uses (coldest first), keeping at least `keep`, and caps the cache at
 * what is left, with a warning. Returns how many descriptors it freed
 * (0: none to give). A file open that needs a descriptor keeps 0: a
 * cold entry is worth less than the file asked for now. accept() keeps
 * GN_FC_ACCEPT_KEEP: connections do not take the last entries, which
 * serve the hottest files with no descriptor of their own and which a
 * later file open can still trade for the one it needs (without them,
 * out of descriptors, every new file would fail to open). */
gn_uint_t gn_file_cache_emfile(gn_uint_t keep);

#define GN_FC_ACCEPT_KEEP  16

/* Child, once its own descriptors are open: the cache, the connections
 * (*conns) and GN_FC_FD_RESERVE spare descriptors (a module's open, CGI
 * pipes, a log reopen) together stay within `room` descriptors (the
 * descriptor limit less those the child holds already). A new entry
 * that would pass it evicts a cold one, or is used once and not kept. */
void gn_file_cache_fd_budget(gn_uint_t room, const gn_uint_t *conns);

#define GN_FC_FD_RESERVE   32

/* The owner of a root directory (through the directory descriptor the
 * cache keeps for it). GN_ERROR with errno when it cannot be opened. */
gn_int_t gn_file_cache_root_owner(const gn_str_t *root, uid_t *uid);

/*
 * Bytes derived from an entry's file (gzip.c keeps its compressed output
 * here, tag = the level): they live and die with the entry, so a changed
 * file, which gets a new entry, is never served another's output. All
 * entries' derived bytes together stay within the budget (bytes per
 * child; 0: none are kept), the least recently used of the entries no
 * response holds giving way.
 */
void gn_file_cache_derived_budget(size_t bytes);

/* e's derived bytes with this tag, or NULL. */
const u_char *gn_file_cache_derived(gn_fc_entry_t *e, gn_uint_t tag,
    size_t *len);

/* Keeps data (malloc'd, len bytes) as e's derived bytes with this tag,
 * replacing any that no other user of e holds: GN_OK, data now the
 * cache's; GN_DECLINED (e is not in the table, another user of e may be
 * sending its bytes of another tag, or the budget has no room even
 * after evicting), data still the caller's. The caller holds e. */
gn_int_t gn_file_cache_derive(gn_fc_entry_t *e, gn_uint_t tag, u_char *data,
    size_t len);

/* Reads len bytes of fd at off into buf, through EINTR and short
 * reads: GN_OK, or GN_ERROR with errno (EIO when the file ends first:
 * it shrank). */
gn_int_t gn_file_read(int fd, u_char *buf, size_t len, off_t off);

/* Entries in the table now (for tests and the status module). */
gn_uint_t gn_file_cache_size(void);

#endif /* GN_CORE_FILE_CACHE_H_INCLUDED */
