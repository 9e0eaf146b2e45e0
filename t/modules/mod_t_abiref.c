/*
 * mod_t_abiref: the ABI reference module for t/abi-check.sh.
 *
 * Built with -g twice, against the previous release's headers
 * (t/modules/abi-1.0) and against api/, then compared with abidw and
 * abidiff. abidiff only sees types reachable from exported symbols, so
 * this module exports one function taking a pointer to every public type
 * of <gannet/module.h> and <gannet/types.h> (the function-pointer types
 * are reached through the structs that hold them). A type added to the
 * public headers is added here too (and to the previous release's copy
 * only when that release is cut).
 *
 * It is never loaded: it exists for its debug information.
 */

#include <gannet/module.h>


__attribute__((visibility("default"))) size_t
gn_abiref_types(const gn_api_t *api, const gn_module_t *module,
    const gn_directive_t *directive, const gn_child_stats_t *child,
    const gn_server_stats_t *server, const gn_str_t *str,
    gn_request_t *r, gn_watch_t *watch, gn_mtimer_t *timer,
    gn_init_pt init, gn_handler_pt handler, gn_exit_pt exit_child,
    gn_watch_pt watch_cb, gn_mtimer_pt timer_cb, gn_body_pt body_cb,
    gn_int_t i, gn_uint_t u, gn_flag_t flag, gn_msec_t msec)
{
    return sizeof(*api) + sizeof(*module) + sizeof(*directive)
           + sizeof(*child) + sizeof(*server) + sizeof(*str)
           + (r != NULL) + (watch != NULL) + (timer != NULL)
           + (init != NULL) + (handler != NULL) + (exit_child != NULL)
           + (watch_cb != NULL) + (timer_cb != NULL) + (body_cb != NULL)
           + (size_t) i + u + (size_t) flag + (size_t) msec;
}


static const gn_module_t  t_abiref_module = {
    GN_MODULE_V1, "t_abiref", "1.0", NULL, 0,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(t_abiref_module)
