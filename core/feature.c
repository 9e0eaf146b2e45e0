/*
 * The registry (feature.h). The order is the order in which the parser
 * looks directives up: the first table that has a name allowed in the
 * context wins.
 */

#include "gn_config.h"

#include "feature.h"
#include "module.h"
#include "rewrite.h"
#include "access.h"
#include "http_static.h"
#include "http_request.h"
#include "tls.h"


const gn_feature_t  gn_features[] = {

    { "core", gn_cycle_commands, 0, NULL, NULL },

    /* limits and timeouts of requests and connections */
    { "http", gn_http_commands, 0, NULL, NULL },

    /* static files and the open-file cache */
    { "static", gn_http_static_commands, 0, NULL, NULL },

    /* load_module, handler; each loaded module's directives */
    { "modules", gn_module_commands, GN_MAX_MODULES, gn_module_loc_init,
      gn_module_loc_merge },

    { "tls", gn_tls_commands, 0, NULL, gn_tls_merge_loc },

    { "rewrite", gn_rewrite_commands, 0, NULL, NULL },

    { "access", gn_access_commands, 0, NULL, gn_access_merge },

    { NULL, NULL, 0, NULL, NULL }
};
