/*
 * sd_notify(3), the datagram (sd_notify.h).
 */

#include "gn_config.h"

#include <stdarg.h>
#include <sys/un.h>

#include "sd_notify.h"


gn_int_t
gn_sd_notify(const char *fmt, ...)
{
    struct sockaddr_un  sa;
    const char         *path;
    char                msg[512];
    socklen_t           len;
    va_list             ap;
    ssize_t             n;
    int                 fd, m, err;

    path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0') {
        return GN_DECLINED;
    }

    /* a path, or an abstract name written with '@' */
    if ((path[0] != '/' && path[0] != '@')
        || strlen(path) >= sizeof(sa.sun_path))
    {
        errno = EINVAL;
        return GN_ERROR;
    }

    va_start(ap, fmt);
    m = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t) m >= sizeof(msg)) {
        errno = EMSGSIZE;
        return GN_ERROR;
    }

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path));
    if (path[0] == '@') {
        sa.sun_path[0] = '\0';
    }
    len = (socklen_t) (offsetof(struct sockaddr_un, sun_path)
                       + strlen(path) + (path[0] == '/'));

    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        return GN_ERROR;
    }

    do {
        n = sendto(fd, msg, (size_t) m, MSG_DONTWAIT | MSG_NOSIGNAL,
                   (struct sockaddr *) &sa, len);
    } while (n == -1 && errno == EINTR);

    err = errno;
    close(fd);
    errno = err;

    return n == (ssize_t) m ? GN_OK : GN_ERROR;
}
