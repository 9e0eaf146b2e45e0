/*
 * mod_t_old: test fixture built against a copy of the 1.0 headers
 * (t/modules/abi-1.0/gannet/, -I t/modules/abi-1.0), the "module built
 * for the previous release": every later 1.x server must load it and
 * serve it. Keep this file and those headers unchanged.
 *
 * `handler t_old;` answers "old module built for ABI 1.0, server ABI
 * X.Y\n" (with "server_version" when the server's table has it, which
 * every 1.x table does: it shows the GN_API_HAS() idiom).
 */

#include <stdio.h>

#include <gannet/module.h>


static int
t_old_handler(const gn_api_t *api, gn_request_t *r)
{
    int         n;
    char        buf[160];
    const char *version;

    version = GN_API_HAS(api, server_version) ? api->server_version() : "?";

    n = snprintf(buf, sizeof(buf),
                 "old module built for ABI %d.%d, server ABI %d.%d (%s)\n",
                 GN_ABI_MAJOR, GN_ABI_MINOR, api->abi_major, api->abi_minor,
                 version);

    if (n < 0 || (size_t) n >= sizeof(buf)) {
        return GN_ERROR;
    }

    api->set_header(r, "Content-Type", "text/plain");

    return api->write(r, buf, (size_t) n);
}


static const gn_module_t  t_old_module = {
    GN_MODULE_V1, "t_old", "1.0", NULL, 0,
    NULL, NULL, t_old_handler, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_old_module)
