/*
 * Unit tests for the open-file cache: hits and misses, the contents of
 * small files, LRU eviction (entries in use are skipped and outlive
 * their eviction), staleness, derived bytes (gzip's output) within
 * their budget and gone with their entry, the descriptor budget and giving back
 * descriptors, the refusal of symlinks out of the root, and gn_file_read.
 *
 * The cache is one per process and cannot be reset, so the cases run in
 * order on one cache of MAX entries, each with files of its own, and
 * what lowers the cache for good (gn_file_cache_emfile) comes last.
 */

#include "gn_config.h"

#include "file_cache.h"
#include "http_cond.h"
#include "log.h"
#include "timer.h"

#include "../tap.h"

#define MAX  4

static char      dir[64];
static gn_str_t  root;
static char      uri_buf[64][128];
static gn_str_t  uris[64];
static int       nuris;
static int       log_fd;


static void
write_file(const char *name, const char *data, size_t len)
{
    char  path[256];
    int   fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd == -1 || write(fd, data, len) != (ssize_t) len) {
        diag("cannot write %s: %s", path, strerror(errno));
        exit(1);
    }
    close(fd);
}


static const gn_str_t *
uri(const char *name)
{
    snprintf(uri_buf[nuris], sizeof(uri_buf[0]), "/%s", name);
    uris[nuris].data = (u_char *) uri_buf[nuris];
    uris[nuris].len = strlen(uri_buf[nuris]);
    return &uris[nuris++];
}


static gn_fc_entry_t *
fc_open(const char *name, gn_uint_t beneath, gn_uint_t use_cache,
    gn_msec_t valid, int *err)
{
    gn_fc_open_t  op;

    memset(&op, 0, sizeof(op));
    op.root = &root;
    op.uri = uri(name);
    op.beneath = beneath;
    op.use_cache = use_cache;
    op.valid = valid;
    op.content_max = 16;
    *err = 0;

    return gn_file_cache_open(&op, err);
}


/* opened through the cache, 60 s valid, symlinks not checked */
static gn_fc_entry_t *
get(const char *name)
{
    int  err;

    return fc_open(name, 0, 1, 60000, &err);
}


/* get() and let go at once: a hit or a new entry, in use by nobody */
static gn_fc_entry_t *
touch(const char *name)
{
    gn_fc_entry_t  *e = get(name);

    if (e != NULL) {
        gn_file_cache_release(e);
    }
    return e;
}


/* Is the descriptor open? (an evicted entry's must be closed) */
static int
fd_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}


static size_t
log_text(char *buf, size_t size)
{
    ssize_t  n;

    n = pread(log_fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0 ? (size_t) n : 0;
}


static void
test_hit_and_miss(void)
{
    gn_fc_entry_t  *a, *b, *c;
    u_char          etag[GN_HTTP_ETAG_LEN];
    size_t          n;
    int             err, fd;

    a = get("small");
    ok(a != NULL && a->is_file && !a->is_dir, "a file: opened");
    is_int(a->size, 5, "its size");
    ok(a->content != NULL && memcmp(a->content, "hello", 5) == 0,
       "smaller than content_max: its bytes kept");
    n = gn_http_etag(etag, a->mtime, a->size);
    ok(a->etag.len == n && memcmp(a->etag.data, etag, n) == 0, "its ETag");
    is_int(a->refs, 1, "one user");
    is_int(gn_file_cache_size(), 1, "in the table");

    b = get("small");
    ok(b == a, "the same path again: the same entry");
    is_int(a->refs, 2, "two users");
    gn_file_cache_release(b);
    gn_file_cache_release(a);
    ok(fd_open(a->fd), "released: the descriptor stays open in the table");

    c = get("big");
    ok(c != NULL && c->content == NULL && c->size == 40,
       "content_max or more: the descriptor only");
    gn_file_cache_release(c);

    b = fc_open("small", 1, 1, 60000, &err);
    ok(b != NULL && b != a, "checked against the root: an entry of its own");
    gn_file_cache_release(b);
    is_int(gn_file_cache_size(), 3, "three entries");

    a = fc_open("missing", 0, 1, 60000, &err);
    ok(a == NULL && err == ENOENT, "a missing file: ENOENT");

    a = fc_open("sub", 0, 1, 60000, &err);
    ok(a != NULL && a->is_dir, "a directory: opened");
    gn_file_cache_release(a);
    is_int(gn_file_cache_size(), 3, "directories are not kept");

    a = fc_open("nocache", 0, 0, 60000, &err);
    ok(a != NULL && a->refs == 1, "cache off for the request: opened");
    is_int(gn_file_cache_size(), 3, "and not kept");
    fd = a->fd;
    gn_file_cache_release(a);
    ok(!fd_open(fd), "its descriptor closed on release");
}


static void
test_lru(void)
{
    gn_fc_entry_t  *e[MAX + 1], *inuse;
    char            name[32];
    int             i, fd;

    /* l0 .. l3 fill the cache; l0 used again, so l1 is the coldest */
    for (i = 0; i < MAX; i++) {
        snprintf(name, sizeof(name), "l%d", i);
        e[i] = touch(name);
    }
    is_int(gn_file_cache_size(), MAX, "full");
    ok(touch("l0") == e[0], "l0 is a hit, and the most recent now");

    fd = e[1]->fd;
    e[MAX] = touch("l4");
    is_int(gn_file_cache_size(), MAX, "a new file in a full cache: still full");
    ok(!fd_open(fd), "the coldest entry (l1) evicted, its descriptor closed");
    ok(touch("l0") == e[0], "the recently used l0 survived");
    ok(touch("l2") == e[2] && touch("l3") == e[3] && touch("l4") == e[MAX],
       "and l2, l3, l4");

    /* l0 in use, then the others used: l0 is the coldest */
    inuse = get("l0");
    touch("l2");
    touch("l3");
    touch("l4");
    fd = inuse->fd;
    touch("l5");
    ok(fd_open(fd) && inuse->refs == 1,
       "the coldest entry, in use, is skipped: still open");
    is_int(gn_file_cache_size(), MAX, "another one went instead");

    for (i = 6; i < 6 + MAX; i++) {
        snprintf(name, sizeof(name), "l%d", i);
        touch(name);
    }
    ok(touch("l0") == inuse, "an entry in use stays in the table however "
       "cold it gets");
    is_int(gn_file_cache_size(), MAX, "the table kept to its size");
    gn_file_cache_release(inuse);
}


static void
test_stale(void)
{
    gn_fc_entry_t  *a, *b;
    char            path[256];
    int             err, fd;

    write_file("changing", "one", 3);
    a = fc_open("changing", 0, 1, 1000, &err);
    ok(a != NULL && a->content != NULL && memcmp(a->content, "one", 3) == 0,
       "stale check: the first version");
    fd = a->fd;

    write_file("changing", "second", 6);
    b = fc_open("changing", 0, 1, 1000, &err);
    ok(b == a, "changed within the valid time: the cached entry");
    gn_file_cache_release(b);

    /* a is still in use: it must outlive its removal from the table */
    gn_current_msec += 1000;
    b = fc_open("changing", 0, 1, 1000, &err);
    ok(b != NULL && b != a && b->size == 6
       && memcmp(b->content, "second", 6) == 0,
       "after the valid time: changed, opened again");
    ok(fd_open(fd) && a->size == 3 && memcmp(a->content, "one", 3) == 0,
       "the old entry, still in use, still works");
    gn_file_cache_release(a);
    ok(!fd_open(fd), "released by its last user: closed");

    gn_current_msec += 1000;
    a = fc_open("changing", 0, 1, 1000, &err);
    ok(a == b, "after the valid time, unchanged: the same entry");
    ok(a != NULL && a->checked == gn_current_msec, "checked again now");
    gn_file_cache_release(b);
    if (a != NULL) {
        gn_file_cache_release(a);
    }

    gn_current_msec += 1000;
    snprintf(path, sizeof(path), "%s/changing", dir);
    unlink(path);
    a = fc_open("changing", 0, 1, 1000, &err);
    ok(a == NULL && err == ENOENT, "removed: ENOENT, not the cached entry");
}


static u_char *
bytes(const char *s)
{
    u_char  *p = malloc(strlen(s));

    memcpy(p, s, strlen(s));
    return p;
}


static void
test_derived(void)
{
    gn_fc_entry_t  *a, *b, *c;
    const u_char   *d;
    u_char         *p;
    size_t          len;
    int             err;

    gn_file_cache_derived_budget(10);

    a = get("d0");
    ok(gn_file_cache_derived(a, 1, &len) == NULL, "derived: none at first");
    is_int(gn_file_cache_derive(a, 1, bytes("AAAAAA"), 6), GN_OK,
           "6 bytes kept (budget 10)");
    d = gn_file_cache_derived(a, 1, &len);
    ok(d != NULL && len == 6 && memcmp(d, "AAAAAA", 6) == 0,
       "... found with their tag");
    ok(gn_file_cache_derived(a, 2, &len) == NULL, "... not with another");

    b = get("d1");
    p = bytes("BBBBBB");
    is_int(gn_file_cache_derive(b, 1, p, 6), GN_DECLINED,
           "no room while the other's entry is in use");
    free(p);

    gn_file_cache_release(a);
    is_int(gn_file_cache_derive(b, 1, bytes("BBBBBB"), 6), GN_OK,
           "once it is not: the least recently used gives way");
    a = get("d0");
    ok(gn_file_cache_derived(a, 1, &len) == NULL, "... its bytes are gone");
    d = gn_file_cache_derived(b, 1, &len);
    ok(d != NULL && len == 6 && memcmp(d, "BBBBBB", 6) == 0,
       "... the new ones kept");

    p = bytes("CCCCCCCCCCC");
    is_int(gn_file_cache_derive(a, 1, p, 11), GN_DECLINED,
           "larger than the budget: declined");
    free(p);

    c = fc_open("d2", 0, 0, 60000, &err);
    p = bytes("D");
    is_int(gn_file_cache_derive(c, 1, p, 1), GN_DECLINED,
           "an entry not in the table: declined");
    free(p);
    gn_file_cache_release(c);

    /* bytes another user of b may be sending stay */
    c = get("d1");
    p = bytes("FFFF");
    is_int(gn_file_cache_derive(b, 3, p, 4), GN_DECLINED,
           "another tag while another user holds the entry: declined");
    free(p);
    d = gn_file_cache_derived(b, 1, &len);
    ok(d != NULL && memcmp(d, "BBBBBB", 6) == 0, "... its bytes kept");
    gn_file_cache_release(c);

    /* a changed file gets a new entry, without the old one's bytes */
    is_int(gn_file_cache_derive(b, 3, bytes("EEEE"), 4), GN_OK,
           "replaced by bytes with another tag");
    ok(gn_file_cache_derived(b, 1, &len) == NULL, "... the old tag gone");
    gn_file_cache_release(b);
    write_file("d1", "changed", 7);
    gn_current_msec += 120000;
    b = get("d1");
    ok(b->size == 7 && gn_file_cache_derived(b, 3, &len) == NULL,
       "a changed file: a new entry, no derived bytes");
    gn_file_cache_release(b);
    gn_file_cache_release(a);

    gn_file_cache_derived_budget(0);
}


static void
test_beneath(void)
{
    gn_fc_entry_t  *a;
    char            path[256];
    int             err;

    snprintf(path, sizeof(path), "%s/out", dir);
    ok(symlink("/etc/passwd", path) == 0, "symlink out of the root made");
    snprintf(path, sizeof(path), "%s/in", dir);
    ok(symlink("sub/inner", path) == 0, "symlink within the root made");

    a = fc_open("out", 1, 1, 60000, &err);
    ok(a == NULL && err == EXDEV, "checked: a symlink out of the root: EXDEV");
    a = fc_open("in", 1, 1, 60000, &err);
    ok(a != NULL && a->size == 5, "checked: a symlink within the root: opened");
    if (a != NULL) {
        gn_file_cache_release(a);
    }
    a = fc_open("sub/../out", 1, 1, 60000, &err);
    ok(a == NULL && err == EXDEV, "checked, through a directory: EXDEV");

    a = fc_open("out", 0, 1, 60000, &err);
    ok(a != NULL && a->is_file, "not checked: the link is followed");
    if (a != NULL) {
        gn_file_cache_release(a);
    }
}


static void
test_budget(void)
{
    gn_fc_entry_t  *e;
    gn_uint_t       conns;
    char            buf[4096], name[32];
    int             i, fd;

    /* room for 2 entries: 2 connections and 32 spare of 36 */
    conns = 2;
    gn_file_cache_fd_budget(GN_FC_FD_RESERVE + 2 + 2, &conns);
    for (i = 0; i < MAX; i++) {
        snprintf(name, sizeof(name), "b%d", i);
        touch(name);
    }
    is_int(gn_file_cache_size(), 2, "budget: the connections' share kept");
    log_text(buf, sizeof(buf));
    ok(strstr(buf, "[warn]") != NULL
       && strstr(buf, "2 connections fill the descriptor limit") != NULL,
       "budget: a warning when it starts evicting early");

    conns = 0;
    for (i = 0; i < MAX; i++) {
        snprintf(name, sizeof(name), "b%d", i);
        touch(name);
    }
    is_int(gn_file_cache_size(), MAX,
           "connections gone: the cache grows back");

    conns = 100;
    e = get("b9");
    ok(e != NULL && e->size == 2, "no room at all: the file still served");
    is_int(gn_file_cache_size(), 0,
           "no room at all: every idle entry given back, the new one not kept");
    fd = e->fd;
    gn_file_cache_release(e);
    ok(!fd_open(fd), "no room at all: closed after its use");

    gn_file_cache_fd_budget(0, NULL);
}


/* gn_file_read: the bytes asked for, or EIO when the file ends first */
static void
test_read(void)
{
    char    path[256];
    u_char  buf[64];
    int     fd;

    snprintf(path, sizeof(path), "%s/big", dir);
    fd = open(path, O_RDONLY);
    if (fd == -1) {
        ok(0, "read: open %s: %s", path, strerror(errno));
        return;
    }

    memset(buf, 0, sizeof(buf));
    ok(gn_file_read(fd, buf, 10, 5) == GN_OK
       && memcmp(buf, "5678901234", 10) == 0, "read: 10 bytes at 5");
    ok(gn_file_read(fd, buf, 40, 0) == GN_OK
       && memcmp(buf + 30, "0123456789", 10) == 0, "read: the whole file");
    errno = 0;
    ok(gn_file_read(fd, buf, 11, 30) == GN_ERROR && errno == EIO,
       "read: past the end is EIO (the file shrank)");
    ok(gn_file_read(fd, buf, 0, 100) == GN_OK, "read: nothing asked");
    close(fd);

    errno = 0;
    ok(gn_file_read(fd, buf, 1, 0) == GN_ERROR && errno == EBADF,
       "read: an error keeps its errno");
}


static void
test_emfile(void)
{
    gn_fc_entry_t  *inuse;
    char            buf[8192], name[32];
    gn_uint_t       freed;
    int             i;

    /* e0 in use and the coldest, then e1 .. e3 */
    inuse = get("e0");
    for (i = 1; i < MAX; i++) {
        snprintf(name, sizeof(name), "e%d", i);
        touch(name);
    }
    is_int(gn_file_cache_size(), MAX, "emfile: full");

    freed = gn_file_cache_emfile(MAX);
    is_int(freed, 0, "emfile: nothing given back below keep");

    freed = gn_file_cache_emfile(0);
    is_int(freed, 2, "emfile: a quarter and one given back");
    ok(fd_open(inuse->fd) && touch("e0") == inuse,
       "emfile: the cold entry in use is skipped");
    ok(touch("e3") != NULL && gn_file_cache_size() == MAX - 2,
       "emfile: from the cold end (e3, the most recent, kept)");
    log_text(buf, sizeof(buf));
    ok(strstr(buf, "out of descriptors with 4 entries open; it holds at "
                   "most 2 from now on") != NULL, "emfile: the warning");

    touch("e8");
    touch("e9");
    is_int(gn_file_cache_size(), MAX - 2, "emfile: capped from now on");
    gn_file_cache_release(inuse);
}


int
main(void)
{
    char  path[256];

    snprintf(dir, sizeof(dir), "/tmp/gn-fc-XXXXXX");
    if (mkdtemp(dir) == NULL) {
        skip_all("mkdtemp failed");
    }
    root.data = (u_char *) dir;
    root.len = strlen(dir);

    snprintf(path, sizeof(path), "%s/sub", dir);
    mkdir(path, 0755);
    write_file("small", "hello", 5);
    write_file("big", "0123456789012345678901234567890123456789", 40);
    write_file("nocache", "x", 1);
    write_file("d0", "d0", 2);
    write_file("d1", "d1", 2);
    write_file("d2", "d2", 2);
    write_file("sub/inner", "inner", 5);
    {
        const char  *names[] = { "l0", "l1", "l2", "l3", "l4", "l5", "l6",
                                 "l7", "l8", "l9", "b0", "b1", "b2", "b3",
                                 "b9", "e0", "e1", "e2", "e3", "e8", "e9" };

        size_t       i;

        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            write_file(names[i], "ab", 2);
        }
    }

    snprintf(path, sizeof(path), "%s/log", dir);
    log_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0644);
    gn_log_default.fd = log_fd;
    gn_current_msec = 1000000;

    if (gn_file_cache_init(MAX) != GN_OK) {
        skip_all("gn_file_cache_init failed");
    }

    test_hit_and_miss();
    test_lru();
    test_stale();
    test_derived();
    test_beneath();
    test_read();
    test_budget();
    test_emfile();

    {
        char  cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0) {
            diag("could not remove %s", dir);
        }
    }

    return done_testing();
}
