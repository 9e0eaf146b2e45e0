/*
 * The SPECweb99 dynamic operations without a server: what the Gannet
 * module (mod_specweb99.c) and the ISAPI extension (isapi_specweb99.c)
 * both do, written once and compiled into each of them. The bytes of
 * every page, cookie and record are described in mod_specweb99.c's
 * header comment and in doc/specweb99.md.
 *
 * libc and POSIX only. Neither Gannet's module API nor ISAPI is seen
 * here: the extension must stay an extension as IIS would load it, and
 * the module must not need <windows.h>. So each side keeps its glue (how
 * a request's bytes come in and go out, how it logs, where it keeps its
 * state, how it runs Reset's generators) and calls these for the rest.
 *
 * Nothing here logs by itself. A failure an operator must hear of is
 * formatted into one line and handed to the caller's sw_err_pt, which
 * logs it its own way (mod_specweb99: the error log at "error"; the
 * extension: HSE_APPEND_LOG_PARAMETER). Results are 0 and -1 (errno set
 * where a system call failed) unless a function says otherwise.
 *
 * Threads: a sw_data_t belongs to the thread that made it (each side:
 * its event loop's). The post log functions may be called from any
 * thread: the lock is an flock() on a descriptor of the caller's own.
 */

#ifndef GN_MODULES_SPECWEB99_LOGIC_H_INCLUDED
#define GN_MODULES_SPECWEB99_LOGIC_H_INCLUDED


#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>


/* The page: SW_HEAD1, the four variables (sw_head_format), the file's
 * bytes, SW_TAIL. */
#define SW_HEAD1       "<html>\n<head><title>SPECweb99 Dynamic GET & POST " \
                       "Test</title></head>\n<body>\n"
#define SW_TAIL        "\n</pre>\n</body></html>\n"

#define SW_MAX_BODY    4096             /* a POST's */
#define SW_MAX_PATH    4096             /* the root's, with its NUL */


/* A string of the request, or of ours; len bytes at data. */
typedef struct {
    size_t                len;
    const unsigned char  *data;
} sw_str_t;

#define sw_str(s)  (int) (s).len, (s).data ? (const char *) (s).data : ""


/* Takes one error line (no newline) to log; arg is the caller's. */
typedef void (*sw_err_pt)(void *arg, const char *line);

/* Writes len bytes of a response body: 0, or -1 when it cannot. */
typedef int (*sw_out_pt)(void *arg, const void *data, size_t len);


/* The two data files of one root, in memory (opaque). */
typedef struct sw_data_s  sw_data_t;


/* What a request asks for (sw_route). */
typedef enum {
    SW_OP_GET = 0,              /* a file, with or without the ad cookie */
    SW_OP_POST,
    SW_OP_FETCH,
    SW_OP_RESET,
    SW_OP_NOT_ALLOWED,          /* a 405: neither GET nor POST */
    SW_OP_BAD                   /* a 400: command/ but no known one */
} sw_op_e;


/* A POST's fields, checked (sw_post_parse). */
typedef struct {
    int64_t      dir;
    int64_t      cls;
    int64_t      num;
    int64_t      client;
    char         file[128];     /* urlroot + "dirNNNNN/classX_Y" */
} sw_post_t;


/* Reset's parameters, as the generators' arguments (sw_reset_parse). */
typedef struct {
    char         maxload[24];
    char         pttime[24];
    char         maxthread[24];     /* "": none */
    char         exp1[24];          /* "": no exp= */
    char         exp2[24];
} sw_reset_args_t;


/* ---- requests ---------------------------------------------------------- */

/* The operation of a request, from its method and query string (each
 * len bytes, not NUL-terminated). */
sw_op_e sw_route(const unsigned char *method, size_t mlen,
    const unsigned char *query, size_t qlen);

/* A relative file name under the root: no "..", no odd bytes. 1 or 0. */
int sw_safe_path(const unsigned char *p, size_t len);

/* The my_cookie cookie's user_id and last_ad in a Cookie header's value
 * (-1 when absent); returns 0 when there is no my_cookie at all, else 1. */
int sw_cookie(const unsigned char *p, size_t len, int64_t *user,
    int64_t *last);

/* The wrapper up to the file's bytes, into buf: SW_HEAD1 and the four
 * server variables. Its length, or -1 when it does not fit in size. */
int sw_head_format(char *buf, size_t size, sw_str_t soft, sw_str_t addr,
    sw_str_t script, sw_str_t query);


/* ---- custom ad rotation ------------------------------------------------ */

/* The data files of `root`, read into *dp (made on the first call) or
 * read again when they changed (stat(), at most once a second) or when
 * force is set. NULL when root is NULL or too long, or out of memory.
 * The files' own failures leave *dp empty and go to err. */
sw_data_t *sw_data_get(sw_data_t **dp, const char *root, int force,
    sw_err_pt err, void *arg);

/* Frees *dp and sets it to NULL. */
void sw_data_free(sw_data_t **dp);

/* The ad for user and last_ad (from sw_cookie) into cookie (size bytes):
 * "found_cookie=Ad_id=..." -- always. Returns the ad id the page at path
 * must be rewritten for (sw_rewrite), or -1 when it is served unchanged
 * (no ad, or not a class 1 or 2 file). d may be NULL (no ad). */
int sw_cad_select(sw_data_t *d, int64_t user, int64_t last,
    const char *path, char *cookie, size_t size);

/* Rewrites every ad tag in buf (len bytes) for ad `id`. */
void sw_rewrite(unsigned char *buf, size_t len, int id);


/* ---- the post log (ROOT/post.log) -------------------------------------- */

/* Opens the log and takes the lock shared by all the children (flock,
 * waited for); the descriptor, or -1 (told to err). close() unlocks. */
int sw_log_lock(const char *root, sw_err_pt err, void *arg);

/* Locked: makes the header count the complete records (an empty or short
 * log gets the header alone) and sets *size to the bytes to send. */
int sw_log_repair(int fd, off_t *size);

/* Locked: the log's first `size` bytes, through out. */
int sw_log_copy(int fd, off_t size, sw_out_pt out, void *arg);

/* Locked: empties the log to the header "         0\n" (failure told to
 * err). */
int sw_log_truncate(int fd, sw_err_pt err, void *arg);

/* A POST's body (len bytes): its fields into *p; -1 when one is missing
 * or out of range (a 400). */
int sw_post_parse(sw_post_t *p, const unsigned char *body, size_t len);

/* Appends the record of a POST by `user` to ROOT/post.log under the lock
 * (failures told to err). The caller's pid is the record's thread id. */
int sw_post_log(const char *root, const sw_post_t *p, int64_t user,
    sw_err_pt err, void *arg);


/* ---- Reset ------------------------------------------------------------- */

/* Reset's parameters from q (the query after "command/Reset&") into *a,
 * which the caller has zeroed; -1 at the first bad or missing one. */
int sw_reset_parse(sw_str_t q, sw_reset_args_t *a);

/* The argv of generator `step` (0: upfgen, 1: cadgen): at most 11
 * entries with the closing NULL; the strings stay the caller's. */
void sw_reset_argv(char **argv, const char *tool, const char *root,
    const sw_reset_args_t *a, int step);

/* len without the trailing CRs and LFs of s (a generator's stderr). */
size_t sw_chomp(const char *s, size_t len);


/* ---- files -------------------------------------------------------------- */

/* Reads a whole regular file of at most max bytes (a page-cache read)
 * into memory from malloc() (one byte more than *len; a read error ends
 * it short); *st is its fstat(). NULL with errno: open's or fstat's,
 * EINVAL (not a regular file), EFBIG (larger than max), ENOMEM. */
unsigned char *sw_read_file(const char *path, size_t max, size_t *len,
    struct stat *st);

/* The same file, unchanged (inode, size, mtime)? */
int sw_same(const struct stat *a, const struct stat *b);


#endif /* GN_MODULES_SPECWEB99_LOGIC_H_INCLUDED */
