/*
 * Unit tests' shared loader (t_cycle.h).
 */

#include "gn_config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "t_cycle.h"


gn_cycle_t *
t_cycle_load(const char *text, char *name, size_t namelen, char *err,
    size_t errlen)
{
    char         dir[] = "/tmp/gn-test-cycle-XXXXXX";
    char         conf[64];
    FILE        *f;
    gn_cycle_t  *cycle;

    if (mkdtemp(dir) == NULL) {
        snprintf(err, errlen, "mkdtemp() failed");
        return NULL;
    }
    snprintf(conf, sizeof(conf), "%s/t.conf", dir);
    if (name != NULL) {
        snprintf(name, namelen, "%s", conf);
    }

    f = fopen(conf, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
        snprintf(err, errlen, "cannot write %s", conf);
        (void) unlink(conf);
        (void) rmdir(dir);
        return NULL;
    }

    err[0] = '\0';
    cycle = gn_cycle_create(conf, dir, err, errlen);

    (void) unlink(conf);
    (void) rmdir(dir);
    return cycle;
}


const char *
t_cycle_user(void)
{
    static char     line[300];
    struct passwd  *pw;

    pw = getpwuid(geteuid());
    snprintf(line, sizeof(line), "user %s;\n",
             pw != NULL ? pw->pw_name : "root");
    return line;
}
