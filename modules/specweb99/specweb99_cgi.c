/*
 * specweb99-cgi: the SPECweb99 CGI dynamic GET as a compiled CGI program
 * (run by mod_cgi), the same page as specweb99.cgi (Perl) and as
 * mod_specweb99's standard dynamic GET:
 *
 *   GET /cgi-bin/specweb99.cgi?/file_set/dirNNNNN/classX_Y
 *
 * answers the file ROOT/file_set/dirNNNNN/classX_Y in the wrapper
 *
 *   <html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n
 *   <body>\n<p>SERVER_SOFTWARE = S\n<p>REMOTE_ADDR = A\n<p>SCRIPT_NAME = N\n
 *   <p>QUERY_STRING = Q\n<pre>\n  FILE BYTES  \n</pre>\n</body></html>\n
 *
 * ROOT is the environment variable SPECWEB99_ROOT, else the file
 * "specweb99.root" next to the program (SCRIPT_FILENAME's directory; one
 * line: the path), else DOCUMENT_ROOT.
 *
 * SPEC's CGI test measured what a server pays to start a program per
 * request; the Perl variant adds an interpreter's start-up (several ms of
 * CPU) to that, this one only fork and exec. bench/specweb99/run.sh uses
 * this one when it is built.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>


/* the CGI header and the page up to the file's bytes: SERVER_SOFTWARE,
 * REMOTE_ADDR, SCRIPT_NAME, QUERY_STRING */
#define SW_HEAD                                                             \
    "Content-Type: text/html\r\n\r\n"                                       \
    "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title>"        \
    "</head>\n<body>\n<p>SERVER_SOFTWARE = %s\n<p>REMOTE_ADDR = %s\n"       \
    "<p>SCRIPT_NAME = %s\n<p>QUERY_STRING = %s\n<pre>\n"

#define SW_TAIL  "\n</pre>\n</body></html>\n"


static void
sw_fail(const char *status, const char *msg)
{
    printf("Status: %s\r\nContent-Type: text/plain\r\n\r\n%s\n", status, msg);
    exit(0);
}


static const char *
sw_env(const char *name)
{
    const char  *v;

    v = getenv(name);
    return v != NULL ? v : "";
}


/* The root from SCRIPT_FILENAME's directory's "specweb99.root", or NULL. */
static char *
sw_root_file(void)
{
    static char  root[4096];
    const char  *sf, *slash;
    char         path[4096];
    FILE        *f;
    size_t       n;

    sf = sw_env("SCRIPT_FILENAME");
    slash = strrchr(sf, '/');
    if (slash != NULL) {
        n = (size_t) (slash - sf);
        if (n + sizeof("/specweb99.root") > sizeof(path)) {
            return NULL;
        }
        memcpy(path, sf, n);
        memcpy(path + n, "/specweb99.root", sizeof("/specweb99.root"));
    } else {
        memcpy(path, "specweb99.root", sizeof("specweb99.root"));
    }

    f = fopen(path, "re");
    if (f == NULL) {
        return NULL;
    }
    if (fgets(root, sizeof(root), f) == NULL) {
        fclose(f);
        return NULL;
    }
    fclose(f);

    root[strcspn(root, "\n")] = '\0';
    return root[0] != '\0' ? root : NULL;
}


/* The Perl variant's m{^/[A-Za-z0-9_/.-]{1,511}$} and no "..". */
static int
sw_name_ok(const char *q)
{
    size_t  len;

    len = strlen(q);
    if (len < 2 || len > 512 || q[0] != '/' || strstr(q, "..") != NULL) {
        return 0;
    }
    return strspn(q + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                         "0123456789_/.-") == len - 1;
}


static int
sw_write_all(const char *p, size_t len)
{
    ssize_t  n;

    while (len > 0) {
        n = write(STDOUT_FILENO, p, len);
        if (n == -1) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}


int
main(void)
{
    const char   *root, *q;
    char         *path, *page, *p;
    struct stat   st;
    size_t        head, tail, flen;
    ssize_t       n;
    int           fd, len, rc;

    root = getenv("SPECWEB99_ROOT");
    if (root == NULL || root[0] == '\0') {
        root = sw_root_file();
    }
    if (root == NULL || root[0] == '\0') {
        root = getenv("DOCUMENT_ROOT");
    }
    if (root == NULL || root[0] == '\0') {
        sw_fail("500 Internal Server Error", "no root");
    }

    q = sw_env("QUERY_STRING");
    if (!sw_name_ok(q)) {
        sw_fail("400 Bad Request", "bad file name");
    }

    len = snprintf(NULL, 0, "%s%s", root, q);
    path = malloc((size_t) len + 1);
    if (path == NULL) {
        sw_fail("500 Internal Server Error", "out of memory");
    }
    snprintf(path, (size_t) len + 1, "%s%s", root, q);

    fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd == -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
        sw_fail("404 Not Found", "not found");
    }
    flen = (size_t) st.st_size;

    /* the page in one buffer, written with one write() where it fits */
    len = snprintf(NULL, 0, SW_HEAD, sw_env("SERVER_SOFTWARE"),
                   sw_env("REMOTE_ADDR"), sw_env("SCRIPT_NAME"), q);
    head = (size_t) len;
    tail = sizeof(SW_TAIL) - 1;

    page = malloc(head + flen + tail + 1);
    if (page == NULL) {
        sw_fail("500 Internal Server Error", "out of memory");
    }
    snprintf(page, head + 1, SW_HEAD, sw_env("SERVER_SOFTWARE"),
             sw_env("REMOTE_ADDR"), sw_env("SCRIPT_NAME"), q);

    p = page + head;
    while ((size_t) (p - page - head) < flen) {
        n = read(fd, p, flen - (size_t) (p - page - head));
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;                      /* the file shrank: send what is read */
        }
        p += n;
    }
    close(fd);

    memcpy(p, SW_TAIL, tail);
    p += tail;

    rc = sw_write_all(page, (size_t) (p - page));
    free(page);                     /* for LeakSanitizer, in ASan builds */

    return rc == 0 ? 0 : 1;
}
