/*
 * mod_t_nosym: test fixture. A shared object without the entry symbol (a
 * library that is not a gannet module). The server must refuse it:
 *
 *   module "PATH" has no symbol gn_module_v1 (built for another ABI
 *   major, or not a gannet module)
 */

__attribute__((visibility("default"))) int
gn_module_not_an_entry(int x)
{
    return x + 1;
}
