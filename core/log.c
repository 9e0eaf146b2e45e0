/*
 * Error log. Every line is formatted in a stack buffer and written with
 * one write(2) to an O_APPEND file, so lines from several processes never
 * interleave.
 */

#include "gn_config.h"

#include "log.h"
#include "str.h"


gn_log_t   gn_log_default = { GN_LOG_NOTICE, 2, NULL, NULL, NULL, NULL,
                              NULL, NULL };
gn_int_t   gn_log_slot = -1;
gn_log_t  *(*gn_log_route)(gn_log_t *log, gn_log_t *tmp);

char      *gn_log_capture;
size_t     gn_log_capture_size;


static const char  *gn_log_levels[] = {
    "", "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug"
};


static size_t
gn_log_time(char *buf, size_t len)
{
    time_t     now;
    struct tm  tm;

    now = time(NULL);
    localtime_r(&now, &tm);

    return strftime(buf, len, "%Y/%m/%d %H:%M:%S", &tm);
}


void
gn_log_verror(gn_uint_t level, gn_log_t *log, int err, const char *fmt,
    va_list args)
{
    char      buf[GN_LOG_MAX_LINE];
    size_t    n, max, msg, text;
    va_list   copy;
    gn_log_t *l;

    max = sizeof(buf) - 1;        /* room for the newline */

    n = gn_log_time(buf, max);
    msg = n + 1;
    if (gn_log_slot >= 0) {
        n += snprintf(buf + n, max - n, " [%s] %d#%d: ",
                      gn_log_levels[level], (int) getpid(), (int) gn_log_slot);
    } else {
        n += snprintf(buf + n, max - n, " [%s] %d#-: ",
                      gn_log_levels[level], (int) getpid());
    }
    text = gn_min(n, max);

    if (n < max) {
        va_copy(copy, args);
        n += vsnprintf(buf + n, max - n, fmt, copy);
        va_end(copy);
    }

    if (err && n < max) {
        n += snprintf(buf + n, max - n, " (%d: %s)", err, strerror(err));
    }

    if (log->action != NULL && n < max) {
        n += snprintf(buf + n, max - n, ", while %s", log->action);
    }

    if (log->handler != NULL && n < max) {
        n += log->handler(log, buf + n, max - n);
    }

    n = gn_min(n, max);

    if (gn_log_capture != NULL && level <= GN_LOG_ERR
        && gn_log_capture[0] == '\0')
    {
        snprintf(gn_log_capture, gn_log_capture_size, "[%s] %.*s",
                 gn_log_levels[level], (int) (n - text), buf + text);
    }

    buf[n++] = '\n';

    for (l = log; l != NULL; l = l->next) {
        if (level <= l->level && l->writer != NULL) {
            l->writer(l, level, buf, n, msg);
        } else if (level <= l->level) {
            (void) write(l->fd, buf, n);
        }
    }
}


void
gn_log_error(gn_uint_t level, gn_log_t *log, int err, const char *fmt, ...)
{
    va_list   args;
    gn_log_t  tmp;

    if (log == NULL) {
        log = &gn_log_default;
    }

    if (gn_log_route != NULL) {
        log = gn_log_route(log, &tmp);
    }

    if (level > log->level && (log->next == NULL || level > log->next->level))
    {
        return;
    }

    va_start(args, fmt);
    gn_log_verror(level, log, err, fmt, args);
    va_end(args);
}


void
gn_log_stderr(int err, const char *fmt, ...)
{
    char     buf[GN_LOG_MAX_LINE];
    size_t   n, max;
    va_list  args;

    max = sizeof(buf) - 1;
    n = snprintf(buf, max, "gannet: ");

    va_start(args, fmt);
    n += vsnprintf(buf + n, max - n, fmt, args);
    va_end(args);

    if (err && n < max) {
        n += snprintf(buf + n, max - n, " (%d: %s)", err, strerror(err));
    }

    n = gn_min(n, max);
    buf[n++] = '\n';

    (void) write(2, buf, n);
}


gn_int_t
gn_log_level_parse(const gn_str_t *name)
{
    gn_uint_t  i;

    for (i = 1; i < gn_nelems(gn_log_levels); i++) {
        if (name->len == strlen(gn_log_levels[i])
            && memcmp(name->data, gn_log_levels[i], name->len) == 0)
        {
            return (gn_int_t) i;
        }
    }

    return GN_ERROR;
}


int
gn_log_open_file(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}
