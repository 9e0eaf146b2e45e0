/*
 * mod_t_abi2: test fixture. Exports the 1.x entry symbol gn_module_v1 but
 * its descriptor claims ABI 2.0 (a module built against a future major
 * that forgot to rename the symbol). The server must refuse it:
 *
 *   module "PATH" was built for ABI 2.0, this server implements 1.0
 */

#include <gannet/module.h>


static int
t_abi2_handler(const gn_api_t *api, gn_request_t *r)
{
    return api->write(r, "abi2\n", 5);
}


static const gn_module_t  t_abi2_module = {
    GN_ABI_MAGIC, 2, 0, (uint32_t) sizeof(gn_module_t),
    "t_abi2", "1.0", NULL, 0,
    NULL, NULL, t_abi2_handler, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_abi2_module)
