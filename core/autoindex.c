/*
 * Directory listings (autoindex.h). The directory is read through the
 * descriptor the open-file cache opened for it, so the way to it went
 * through the location's root or alias and `symlinks_outside_root`; its
 * entries are sorted, then the page is written twice by the same code:
 * once only to measure it, once into the request's pool.
 */

#include "gn_config.h"

#include <dirent.h>

#include "autoindex.h"
#include "http_request.h"
#include "http_file.h"
#include "http_response.h"
#include "binlog.h"
#include "timer.h"
#include "log.h"
#include "str.h"


static const gn_conf_enum_t  gn_autoindex_formats[] = {
    { gn_string("html"), GN_AUTOINDEX_HTML },
    { gn_string("json"), GN_AUTOINDEX_JSON },
    { gn_null_string, 0 }
};

/* Plain slots of each level, their defaults in their rows. */
static const gn_conf_cmd_t  gn_autoindex_commands[] = {

    { gn_string("autoindex"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF, gn_autoindex_offset(enable),
      NULL, "off" },
    { gn_string("autoindex_format"), GN_CONF_ANY | GN_CONF_TAKE1,
      gn_conf_set_enum_slot, GN_CONF_LOC_CONF, gn_autoindex_offset(format),
      gn_autoindex_formats, "html" },
    { gn_string("autoindex_exact_size"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_autoindex_offset(exact_size), NULL, "on" },
    { gn_string("autoindex_localtime"), GN_CONF_ANY | GN_CONF_FLAG,
      gn_conf_set_flag_slot, GN_CONF_LOC_CONF,
      gn_autoindex_offset(localtime), NULL, "off" },
    gn_conf_null_cmd
};


/* nginx's name column: a longer name is cut to 47 characters and "..>" */
#define GN_AUTOINDEX_NAME_COLS  50

/* the HTML's date ("01-Jan-2026 00:00") and size columns */
#define GN_AUTOINDEX_DATE_COLS  17
#define GN_AUTOINDEX_SIZE_COLS  19
#define GN_AUTOINDEX_HUMAN_COLS 7

typedef enum {
    GN_AUTOINDEX_DIR = 0,                  /* listed first */
    GN_AUTOINDEX_FILE,
    GN_AUTOINDEX_OTHER
} gn_autoindex_type_e;

typedef struct {
    gn_str_t             name;
    time_t               mtime;
    off_t                size;             /* a file's; else 0 */
    gn_uint_t            type;             /* gn_autoindex_type_e */
} gn_autoindex_entry_t;

typedef struct {
    gn_autoindex_entry_t  *entry;
    gn_uint_t              n;
    u_char                 col;            /* sorted by 'N', 'M' or 'S' */
    gn_uint_t              desc;
} gn_autoindex_list_t;

/* Where a page goes: written at p, or only measured when p is NULL. */
typedef struct {
    u_char              *p;
    size_t               len;
} gn_autoindex_out_t;

#define gn_autoindex_lit(o, s)  gn_autoindex_put(o, s, sizeof(s) - 1)


/* ---- writing ----------------------------------------------------------- */

static void
gn_autoindex_put(gn_autoindex_out_t *o, const void *s, size_t n)
{
    if (o->p != NULL) {
        memcpy(o->p + o->len, s, n);
    }
    o->len += n;
}


static void
gn_autoindex_pad(gn_autoindex_out_t *o, size_t n)
{
    if (o->p != NULL) {
        memset(o->p + o->len, ' ', n);
    }
    o->len += n;
}


/* A name in an href: every byte but RFC 3986's unreserved ones as %XX,
 * so that quotes, '<', '%', '?', '#', ':', spaces, control and
 * non-ASCII bytes can neither end the attribute nor change what the link
 * names; the server decodes it back to the same bytes. */
static void
gn_autoindex_href(gn_autoindex_out_t *o, const gn_str_t *name)
{
    static const char  hex[] = "0123456789ABCDEF";
    u_char             c, esc[3];
    size_t             i;

    for (i = 0; i < name->len; i++) {
        c = name->data[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
            || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'
            || c == '~')
        {
            gn_autoindex_put(o, &c, 1);
            continue;
        }

        esc[0] = '%';
        esc[1] = (u_char) hex[c >> 4];
        esc[2] = (u_char) hex[c & 0xf];
        gn_autoindex_put(o, esc, 3);
    }
}


/* The bytes of the character at s[0..n): a well-formed UTF-8 sequence,
 * else one byte (which the page shows as one U+FFFD). */
static size_t
gn_autoindex_char_len(const u_char *s, size_t n)
{
    size_t  k;

    if (s[0] < 0x80) {
        return 1;
    }

    k = gn_binlog_utf8_len(s, n);
    return k > 0 ? k : 1;
}


static size_t
gn_autoindex_chars(const gn_str_t *s)
{
    size_t  i, chars;

    chars = 0;
    for (i = 0; i < s->len; i += gn_autoindex_char_len(s->data + i,
                                                       s->len - i))
    {
        chars++;
    }

    return chars;
}


/* The first `max` characters of s as HTML text: the markup characters
 * as references, a control character or a byte that is not UTF-8 as
 * U+FFFD, so that no name breaks the page or makes it invalid UTF-8. */
static void
gn_autoindex_text(gn_autoindex_out_t *o, const gn_str_t *s, size_t max)
{
    const char  *ref;
    size_t       i, k;
    u_char       c;

    for (i = 0; i < s->len && max > 0; i += k, max--) {
        c = s->data[i];
        k = gn_autoindex_char_len(s->data + i, s->len - i);

        switch (c) {
        case '&':
            ref = "&amp;";
            break;
        case '<':
            ref = "&lt;";
            break;
        case '>':
            ref = "&gt;";
            break;
        case '"':
            ref = "&quot;";
            break;
        case '\'':
            ref = "&#39;";
            break;
        default:
            ref = (c < 0x20 || c == 0x7f || (c >= 0x80 && k == 1))
                  ? "&#xFFFD;" : NULL;
        }

        if (ref != NULL) {
            gn_autoindex_put(o, ref, strlen(ref));
        } else {
            gn_autoindex_put(o, s->data + i, k);
        }
    }
}


/* "01-Jan-2026 00:00", nginx's HTML date, in GMT or local time. */
static void
gn_autoindex_date(gn_autoindex_out_t *o, time_t t, gn_uint_t local)
{
    struct tm  tm, *tp;
    char       buf[64];

    tp = local ? localtime_r(&t, &tm) : gmtime_r(&t, &tm);
    if (tp == NULL) {
        memset(&tm, 0, sizeof(tm));            /* a time out of range */
    }

    gn_autoindex_put(o, buf, strftime(buf, sizeof(buf), "%d-%b-%Y %H:%M",
                                      &tm));
}


/* The size column: "-" but for files; the bytes, or (not exact) nginx's
 * rounding: up to 9999 bytes as they are, then K, M, G rounded half
 * up. */
static void
gn_autoindex_size(gn_autoindex_out_t *o, const gn_autoindex_entry_t *e,
    gn_uint_t exact)
{
    off_t  unit, n;
    char   buf[48], scale;
    int    len;

    if (e->type != GN_AUTOINDEX_FILE) {
        gn_autoindex_pad(o, (exact ? GN_AUTOINDEX_SIZE_COLS
                                   : GN_AUTOINDEX_HUMAN_COLS) - 1);
        gn_autoindex_lit(o, "-");
        return;
    }

    if (exact) {
        len = snprintf(buf, sizeof(buf), "%*lld", GN_AUTOINDEX_SIZE_COLS,
                       (long long) e->size);
        gn_autoindex_put(o, buf, (size_t) len);
        return;
    }

    if (e->size >= (off_t) 1 << 30) {
        unit = (off_t) 1 << 30;
        scale = 'G';
    } else if (e->size >= (off_t) 1 << 20) {
        unit = (off_t) 1 << 20;
        scale = 'M';
    } else if (e->size > 9999) {
        unit = 1024;
        scale = 'K';
    } else {
        unit = 1;
        scale = ' ';
    }

    n = e->size / unit + (e->size % unit >= unit / 2 && unit > 1);

    if (scale == ' ') {
        len = snprintf(buf, sizeof(buf), " %6lld", (long long) n);
    } else {
        len = snprintf(buf, sizeof(buf), "%6lld%c", (long long) n, scale);
    }
    gn_autoindex_put(o, buf, (size_t) len);
}


/* ---- HTML and JSON ----------------------------------------------------- */

/* A column's header: a link that sorts by it, ascending, or descending
 * when the page is sorted by it ascending already (Apache's). */
static void
gn_autoindex_column(gn_autoindex_out_t *o, const gn_autoindex_list_t *l,
    u_char col, const char *title)
{
    u_char  q[] = "?C=N&amp;O=A";

    q[3] = col;
    q[11] = (l->col == col && !l->desc) ? 'D' : 'A';

    gn_autoindex_lit(o, "<a href=\"");
    gn_autoindex_put(o, q, sizeof(q) - 1);
    gn_autoindex_lit(o, "\">");
    gn_autoindex_put(o, title, strlen(title));
    gn_autoindex_lit(o, "</a>");
}


static void
gn_autoindex_html_row(gn_autoindex_out_t *o, const gn_autoindex_entry_t *e,
    const gn_autoindex_conf_t *ac)
{
    size_t     chars, cols;
    gn_uint_t  dir;

    dir = (e->type == GN_AUTOINDEX_DIR);

    gn_autoindex_lit(o, "<a href=\"");
    gn_autoindex_href(o, &e->name);
    if (dir) {
        gn_autoindex_lit(o, "/");
    }
    gn_autoindex_lit(o, "\">");

    chars = gn_autoindex_chars(&e->name);
    cols = chars + dir;

    if (cols > GN_AUTOINDEX_NAME_COLS) {
        gn_autoindex_text(o, &e->name, GN_AUTOINDEX_NAME_COLS - 3);
        gn_autoindex_lit(o, "..&gt;</a>");
        cols = GN_AUTOINDEX_NAME_COLS;

    } else {
        gn_autoindex_text(o, &e->name, chars);
        if (dir) {
            gn_autoindex_lit(o, "/");
        }
        gn_autoindex_lit(o, "</a>");
    }

    gn_autoindex_pad(o, GN_AUTOINDEX_NAME_COLS + 1 - cols);
    gn_autoindex_date(o, e->mtime, (gn_uint_t) ac->localtime);
    gn_autoindex_lit(o, " ");
    gn_autoindex_size(o, e, (gn_uint_t) ac->exact_size);
    gn_autoindex_lit(o, "\r\n");
}


/* nginx's page, with a line of column headers that sort (Apache's). */
static void
gn_autoindex_html(gn_autoindex_out_t *o, gn_http_request_t *r,
    const gn_autoindex_list_t *l, const gn_autoindex_conf_t *ac)
{
    gn_uint_t  i;
    size_t     size_cols;

    size_cols = ac->exact_size ? GN_AUTOINDEX_SIZE_COLS
                               : GN_AUTOINDEX_HUMAN_COLS;

    gn_autoindex_lit(o, "<html>\r\n<head><title>Index of ");
    gn_autoindex_text(o, &r->uri, r->uri.len);
    gn_autoindex_lit(o, "</title></head>\r\n<body>\r\n<h1>Index of ");
    gn_autoindex_text(o, &r->uri, r->uri.len);
    gn_autoindex_lit(o, "</h1><hr><pre>");

    gn_autoindex_column(o, l, 'N', "Name");
    gn_autoindex_pad(o, GN_AUTOINDEX_NAME_COLS + 1 - (sizeof("Name") - 1));
    gn_autoindex_column(o, l, 'M', "Last modified");
    gn_autoindex_pad(o, GN_AUTOINDEX_DATE_COLS + 1
                        - (sizeof("Last modified") - 1));
    gn_autoindex_pad(o, size_cols - (sizeof("Size") - 1));
    gn_autoindex_column(o, l, 'S', "Size");
    gn_autoindex_lit(o, "\r\n<a href=\"../\">../</a>\r\n");

    for (i = 0; i < l->n; i++) {
        gn_autoindex_html_row(o, &l->entry[i], ac);
    }

    gn_autoindex_lit(o, "</pre><hr></body>\r\n</html>\r\n");
}


/* nginx's JSON: names escaped as the access log's escape=json (any
 * bytes give valid JSON: a byte that is not UTF-8 becomes U+FFFD), the
 * size for files only, mtime an IMF-fixdate. */
static void
gn_autoindex_json(gn_autoindex_out_t *o, const gn_autoindex_list_t *l)
{
    static const char *const  types[] = { "directory", "file", "other" };
    gn_autoindex_entry_t     *e;
    gn_uint_t                 i;
    u_char                    buf[GN_HTTP_TIME_LEN + 1 + GN_INT_T_LEN];
    size_t                    n;

    gn_autoindex_lit(o, "[");

    for (i = 0; i < l->n; i++) {
        e = &l->entry[i];

        if (i > 0) {
            gn_autoindex_lit(o, ",");
        }
        gn_autoindex_lit(o, "\r\n{ \"name\":\"");
        o->len += gn_binlog_escape(o->p != NULL ? o->p + o->len : NULL,
                                   e->name.data, e->name.len,
                                   GN_BINLOG_ESC_JSON);
        gn_autoindex_lit(o, "\", \"type\":\"");
        gn_autoindex_put(o, types[e->type], strlen(types[e->type]));
        gn_autoindex_lit(o, "\", \"mtime\":\"");
        gn_autoindex_put(o, buf, gn_time_http(buf, e->mtime));
        gn_autoindex_lit(o, "\"");

        if (e->type == GN_AUTOINDEX_FILE) {
            n = (size_t) snprintf((char *) buf, sizeof(buf), ", \"size\":%lld",
                                  (long long) e->size);
            gn_autoindex_put(o, buf, n);
        }

        gn_autoindex_lit(o, " }");
    }

    gn_autoindex_lit(o, "\r\n]\r\n");
}


/* ---- sorting ----------------------------------------------------------- */

/* Directories before the rest, whatever the column and order; then by
 * the column's key; then by name, so that no two entries tie. */
static int
gn_autoindex_cmp(const gn_autoindex_entry_t *a, const gn_autoindex_entry_t *b,
    int64_t ka, int64_t kb)
{
    int  rc;

    rc = (b->type == GN_AUTOINDEX_DIR) - (a->type == GN_AUTOINDEX_DIR);
    if (rc == 0) {
        rc = (ka > kb) - (ka < kb);
    }
    return rc != 0 ? rc : gn_str_cmp(&a->name, &b->name);
}


static int
gn_autoindex_cmp_name(const void *one, const void *two)
{
    return gn_autoindex_cmp(one, two, 0, 0);
}


static int
gn_autoindex_cmp_mtime(const void *one, const void *two)
{
    const gn_autoindex_entry_t  *a = one, *b = two;

    return gn_autoindex_cmp(a, b, (int64_t) a->mtime, (int64_t) b->mtime);
}


static int
gn_autoindex_cmp_size(const void *one, const void *two)
{
    const gn_autoindex_entry_t  *a = one, *b = two;

    return gn_autoindex_cmp(a, b, (int64_t) a->size, (int64_t) b->size);
}


static void
gn_autoindex_reverse(gn_autoindex_entry_t *e, gn_uint_t n)
{
    gn_autoindex_entry_t  t;
    gn_uint_t             i;

    for (i = 0; i < n / 2; i++) {
        t = e[i];
        e[i] = e[n - 1 - i];
        e[n - 1 - i] = t;
    }
}


/* Apache's query: C=N|M|S, the column, and O=A|D, the order, joined by
 * '&' or ';'; anything else is ignored (name, ascending). Descending
 * reverses each group, which keeps the directories first; ties are
 * broken by name, so both orders are the same every time. */
static void
gn_autoindex_sort(gn_http_request_t *r, gn_autoindex_list_t *l)
{
    int       (*cmp)(const void *, const void *);
    u_char     *p, *q, *end;
    gn_uint_t   dirs;

    l->col = 'N';
    l->desc = 0;

    p = r->head.query.data;
    end = p + (r->head.has_query ? r->head.query.len : 0);

    for ( /* void */ ; p < end; p = q + 1) {
        for (q = p; q < end && *q != '&' && *q != ';'; q++) { /* void */ }

        if (q - p != 3 || p[1] != '=') {
            continue;
        }
        if (p[0] == 'C' && (p[2] == 'N' || p[2] == 'M' || p[2] == 'S')) {
            l->col = p[2];
        } else if (p[0] == 'O' && (p[2] == 'A' || p[2] == 'D')) {
            l->desc = (p[2] == 'D');
        }
    }

    cmp = l->col == 'M' ? gn_autoindex_cmp_mtime
          : l->col == 'S' ? gn_autoindex_cmp_size : gn_autoindex_cmp_name;
    qsort(l->entry, l->n, sizeof(gn_autoindex_entry_t), cmp);

    if (l->desc) {
        for (dirs = 0; dirs < l->n; dirs++) {
            if (l->entry[dirs].type != GN_AUTOINDEX_DIR) {
                break;
            }
        }
        gn_autoindex_reverse(l->entry, dirs);
        gn_autoindex_reverse(l->entry + dirs, l->n - dirs);
    }
}


/* ---- reading ----------------------------------------------------------- */

/* A call on the directory failed: logged; the status to answer. */
static gn_int_t
gn_autoindex_fail(gn_http_request_t *r, const char *call, int err)
{
    gn_uint_t  denied = (err == EACCES || err == EPERM);

    gn_log_error(denied ? GN_LOG_ERR : GN_LOG_CRIT, &r->c->log, err,
                 "%s of \"%.*s%.*s\" failed", call, GN_STR_ARG(&r->fdir),
                 GN_STR_ARG(&r->fpath));
    return denied ? 403 : 500;
}


/* One entry of the directory d: listed as what fstatat() says, or, for
 * a symlink, as what it leads to when a GET of it would follow it
 * (gn_http_file_stat: beneath the root unless symlinks_outside_root).
 * GN_DECLINED: not listed (gone, dangling, refused). */
static gn_int_t
gn_autoindex_entry(gn_http_request_t *r, DIR *d, const char *name,
    gn_array_t *list)
{
    gn_autoindex_entry_t  *e;
    struct stat            st;
    gn_str_t               n;
    int                    err;

    n.data = (u_char *) name;
    n.len = strlen(name);

    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
        return GN_DECLINED;                /* gone since readdir() */
    }

    if (S_ISLNK(st.st_mode)
        && gn_http_file_stat(r, &r->fdir, &r->fpath, &n,
                             !gn_file_conf(r->loc)->symlinks_outside_root,
                             &st, &err) != GN_OK)
    {
        if (err == EXDEV) {
            gn_log_error(GN_LOG_INFO, &r->c->log, 0, "\"%.*s%.*s\" resolves "
                         "outside root, not listed (symlinks_outside_root "
                         "off)", GN_STR_ARG(&r->uri), GN_STR_ARG(&n));
        }
        return GN_DECLINED;
    }

    e = gn_array_push(list);
    if (e == NULL) {
        return GN_ERROR;
    }

    e->name.data = gn_pnalloc(r->pool, n.len);
    if (e->name.data == NULL) {
        return GN_ERROR;
    }
    memcpy(e->name.data, n.data, n.len);
    e->name.len = n.len;

    e->type = S_ISDIR(st.st_mode) ? GN_AUTOINDEX_DIR
              : S_ISREG(st.st_mode) ? GN_AUTOINDEX_FILE : GN_AUTOINDEX_OTHER;
    e->mtime = st.st_mtime;
    e->size = (e->type == GN_AUTOINDEX_FILE) ? st.st_size : 0;

    return GN_OK;
}


/* The entries of dir but those starting with '.', at most
 * GN_AUTOINDEX_MAX. GN_OK, GN_ERROR (memory) or a status (logged). */
static gn_int_t
gn_autoindex_read(gn_http_request_t *r, gn_fc_entry_t *dir,
    gn_array_t *list)
{
    struct dirent  *de;
    gn_int_t        rc;
    DIR            *d;
    int             fd;

    /* a descriptor of its own: readdir() moves the offset, which a dup()
     * would share with the cache's */
    fd = openat(dir->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd == -1) {
        return gn_autoindex_fail(r, "openat()", errno);
    }

    d = fdopendir(fd);
    if (d == NULL) {
        rc = gn_autoindex_fail(r, "fdopendir()", errno);
        close(fd);
        return rc;
    }

    for ( ;; ) {
        errno = 0;
        de = readdir(d);
        if (de == NULL) {
            rc = errno == 0 ? GN_OK : gn_autoindex_fail(r, "readdir()", errno);
            break;
        }

        if (de->d_name[0] == '.') {
            continue;
        }

        if (list->nelts == GN_AUTOINDEX_MAX) {
            gn_log_error(GN_LOG_INFO, &r->c->log, 0, "\"%.*s%.*s\" has more "
                         "than %u entries, only so many listed",
                         GN_STR_ARG(&r->fdir), GN_STR_ARG(&r->fpath),
                         (unsigned) GN_AUTOINDEX_MAX);
            rc = GN_OK;
            break;
        }

        rc = gn_autoindex_entry(r, d, de->d_name, list);
        if (rc == GN_ERROR) {
            break;
        }
    }

    closedir(d);
    return rc;
}


gn_int_t
gn_autoindex_handler(gn_http_request_t *r, gn_fc_entry_t *dir)
{
    gn_autoindex_conf_t  *ac = gn_autoindex_conf(r->loc);
    gn_autoindex_list_t   l;
    gn_autoindex_out_t    o;
    gn_array_t           *list;
    gn_int_t              rc;

    if (!ac->enable) {
        return GN_DECLINED;
    }

    list = gn_array_create(r->pool, 64, sizeof(gn_autoindex_entry_t));
    if (list == NULL) {
        return GN_ERROR;
    }

    rc = gn_autoindex_read(r, dir, list);
    if (rc != GN_OK) {
        return rc == GN_ERROR ? GN_ERROR
                              : gn_http_response_error(r, (gn_uint_t) rc);
    }

    l.entry = list->elts;
    l.n = list->nelts;
    gn_autoindex_sort(r, &l);

    /* measured, then written: one allocation of the exact size */
    o.p = NULL;
    o.len = 0;
    for ( ;; ) {
        if (ac->format == GN_AUTOINDEX_JSON) {
            gn_autoindex_json(&o, &l);
        } else {
            gn_autoindex_html(&o, r, &l, ac);
        }

        if (o.p != NULL) {
            break;
        }
        o.p = gn_pnalloc(r->pool, o.len);
        if (o.p == NULL) {
            return GN_ERROR;
        }
        o.len = 0;
    }

    r->status = 200;
    r->content_length = (off_t) o.len;
    r->last_modified = -1;             /* no conditional GET, no ranges */
    r->etag.len = 0;
    r->accept_ranges = 0;
    if (ac->format == GN_AUTOINDEX_JSON) {
        gn_str_set(&r->content_type, "application/json");
    } else {
        gn_str_set(&r->content_type, "text/html; charset=utf-8");
    }

    if (r->head.method == GN_HTTP_HEAD) {
        return GN_OK;
    }

    return gn_http_add_mem(r, o.p, o.len);
}


const gn_feature_t  gn_autoindex_feature = {
    .name = "autoindex", .commands = gn_autoindex_commands,
    .conf_size = sizeof(gn_autoindex_conf_t)
};
