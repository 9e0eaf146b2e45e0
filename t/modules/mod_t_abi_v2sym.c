/*
 * mod_t_abi_v2sym: test fixture. A module built for ABI 2 as it should be:
 * its entry symbol is gn_module_v2 and there is no gn_module_v1. The
 * server must refuse it:
 *
 *   module "PATH" has no symbol gn_module_v1 (built for another ABI
 *   major, or not a gannet module)
 */

#include <gannet/module.h>


static int
t_abi_v2sym_handler(const gn_api_t *api, gn_request_t *r)
{
    return api->write(r, "v2\n", 3);
}


static const gn_module_t  t_abi_v2sym_module = {
    GN_ABI_MAGIC, 2, 0, (uint32_t) sizeof(gn_module_t),
    "t_abi_v2sym", "1.0", NULL, 0,
    NULL, NULL, t_abi_v2sym_handler, NULL, NULL, NULL, NULL
};

__attribute__((visibility("default"))) const gn_module_t *
gn_module_v2(void)
{
    return &t_abi_v2sym_module;
}
