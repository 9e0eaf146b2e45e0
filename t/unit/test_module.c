/*
 * gn_module_check_version(): the version rule of load_module. A
 * descriptor's abi_minor is the oldest minor of its major the module
 * needs: a server of the same major and that minor or a newer one loads
 * it, an older one refuses it naming both versions; another major never
 * loads. The server's version is a parameter, so the rule is checked
 * for older servers (1.0, 1.1) too, which this tree cannot build.
 *
 * Sources: t/unit/test_module.c core/module.c t/tap.c
 */

#include "gn_config.h"

#include "module.h"
#include "../tap.h"


typedef struct {
    unsigned     major, minor;      /* the module's descriptor */
    unsigned     smajor, sminor;    /* the server */
    const char  *want;              /* NULL: loads */
} version_case_t;


static const version_case_t  cases[] = {

    /* needs 1.0 (GN_MODULE_V1_NEEDS(0), or built with the 1.0 headers) */
    { 1, 0, 1, 0, NULL },
    { 1, 0, 1, 1, NULL },
    { 1, 0, 1, 2, NULL },
    { 1, 0, 1, 99, NULL },

    /* built with 1.2 headers, needs what 1.2 added */
    { 1, 2, 1, 2, NULL },
    { 1, 2, 1, 3, NULL },
    { 1, 2, 1, 1, "needs ABI 1.2, this server implements 1.1" },
    { 1, 2, 1, 0, "needs ABI 1.2, this server implements 1.0" },

    /* needs 1.1 */
    { 1, 1, 1, 1, NULL },
    { 1, 1, 1, 0, "needs ABI 1.1, this server implements 1.0" },

    /* built with 1.3 headers, needs what 1.3 added (proto_stats) */
    { 1, 3, 1, 3, NULL },
    { 1, 3, 1, 2, "needs ABI 1.3, this server implements 1.2" },

    /* one past the server (mod_t_newminor) */
    { 1, 4, 1, 3, "needs ABI 1.4, this server implements 1.3" },
    { 1, 65535, 1, 3, "needs ABI 1.65535, this server implements 1.3" },

    /* another major, whatever the minors */
    { 2, 0, 1, 2, "was built for ABI 2.0, this server implements 1.2" },
    { 0, 0, 1, 2, "was built for ABI 0.0, this server implements 1.2" },
    { 1, 0, 2, 0, "was built for ABI 1.0, this server implements 2.0" },
    { 2, 5, 1, 9, "was built for ABI 2.5, this server implements 1.9" },
};


int
main(void)
{
    char                   err[128];
    size_t                 i;
    gn_int_t               rc;
    const version_case_t  *c;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        c = &cases[i];
        strcpy(err, "untouched");
        rc = gn_module_check_version(c->major, c->minor, c->smajor,
                                     c->sminor, err, sizeof(err));

        if (c->want == NULL) {
            ok(rc == GN_OK, "module needs %u.%u, server %u.%u: loads",
               c->major, c->minor, c->smajor, c->sminor);
            is_str(err, strlen(err), "untouched",
                   "module needs %u.%u, server %u.%u: no message",
                   c->major, c->minor, c->smajor, c->sminor);
        } else {
            ok(rc == GN_ERROR, "module says %u.%u, server %u.%u: refused",
               c->major, c->minor, c->smajor, c->sminor);
            is_str(err, strlen(err), c->want,
                   "module says %u.%u, server %u.%u: the message",
                   c->major, c->minor, c->smajor, c->sminor);
        }
    }

    /* this server: its own minor loads, the next one does not */
    ok(gn_module_check_version(GN_ABI_MAJOR, GN_ABI_MINOR, GN_ABI_MAJOR,
                               GN_ABI_MINOR, err, sizeof(err)) == GN_OK,
       "this server loads a module of its own version");
    ok(gn_module_check_version(GN_ABI_MAJOR, 0, GN_ABI_MAJOR, GN_ABI_MINOR,
                               err, sizeof(err)) == GN_OK,
       "this server loads a module that needs %d.0", GN_ABI_MAJOR);
    ok(gn_module_check_version(GN_ABI_MAJOR, GN_ABI_MINOR + 1, GN_ABI_MAJOR,
                               GN_ABI_MINOR, err, sizeof(err)) == GN_ERROR,
       "this server refuses a module that needs %d.%d", GN_ABI_MAJOR,
       GN_ABI_MINOR + 1);

    /* a short buffer is cut, never overrun */
    memset(err, 'x', sizeof(err));
    (void) gn_module_check_version(1, 3, 1, 2, err, 8);
    is_str(err, strlen(err), "needs A", "a short buffer: cut and terminated");
    ok(err[8] == 'x', "a short buffer: nothing written past it");

    return done_testing();
}
