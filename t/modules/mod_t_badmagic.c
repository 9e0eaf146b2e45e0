/*
 * mod_t_badmagic: test fixture. The descriptor's magic is wrong (memory
 * that is not a gannet descriptor). The server must refuse it:
 *
 *   module "PATH" has a bad descriptor (magic 0xdeadbeef, expected
 *   0x474e4d44)
 */

#include <gannet/module.h>


static const gn_module_t  t_badmagic_module = {
    0xdeadbeefu, GN_ABI_MAJOR, GN_ABI_MINOR, (uint32_t) sizeof(gn_module_t),
    "t_badmagic", "1.0", NULL, 0,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_badmagic_module)
