/*
 * mod_t_newminor: test fixture. Says it needs ABI 1.(GN_ABI_MINOR + 1),
 * as a module built against the next minor's headers that calls what it
 * adds: it may use gn_api_t members this server does not have, so the
 * server refuses it:
 *
 *   module "PATH" needs ABI 1.4, this server implements 1.3
 */

#include <gannet/module.h>


static int
t_newminor_handler(const gn_api_t *api, gn_request_t *r)
{
    return api->write(r, "newminor\n", 9);
}


static const gn_module_t  t_newminor_module = {
    GN_ABI_MAGIC, GN_ABI_MAJOR, GN_ABI_MINOR + 1,
    (uint32_t) sizeof(gn_module_t),
    "t_newminor", "1.0", NULL, 0,
    NULL, NULL, t_newminor_handler, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_newminor_module)
