/*
 * mod_t_small: test fixture. The descriptor claims to be 40 bytes, smaller
 * than the 1.0 gn_module_t: the server must not read past it and refuses
 * the module:
 *
 *   module "PATH" descriptor size 40 is smaller than the 1.0 descriptor
 *   (M)
 */

#include <gannet/module.h>


static const gn_module_t  t_small_module = {
    GN_ABI_MAGIC, GN_ABI_MAJOR, GN_ABI_MINOR, 40,
    "t_small", "1.0", NULL, 0,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_small_module)
