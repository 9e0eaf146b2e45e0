/*
 * The registry (feature.h): every core feature, indexed by its ID. The
 * order is the order in which the parser looks directives up (the first
 * table that has a name allowed in the context wins) and in which the
 * cycle runs each kind of hook (feature.h): the error log, then the
 * files log directives named, open before anything else, so that what
 * follows can log to them, and reopen in that order; the checks
 * (check_cycle: the modules' own) run before the core resolves the user,
 * each level's check_level (the modules': no CGI under chroot) before
 * the core checks its root, and the listeners are built before TLS.
 *
 * This file is the only one that names every feature; nothing includes
 * a header of it, so the include graph stays without cycles.
 */

#include "gn_config.h"

#include "cycle.h"
#include "errlog.h"
#include "access_log.h"
#include "listen.h"
#include "lookup.h"
#include "http_request.h"
#include "http_file.h"
#include "http_static.h"
#include "module.h"
#include "tls.h"
#include "rewrite.h"
#include "access.h"
#include "realip.h"
#include "proxy.h"
#include "http_headers.h"
#include "try_files.h"
#include "limit.h"
#include "autoindex.h"
#include "gzip.h"


const gn_feature_t *const  gn_features[GN_FEATURE_N] = {
    [GN_FEATURE_CORE]       = &gn_core_feature,
    [GN_FEATURE_ERRLOG]     = &gn_errlog_feature,
    [GN_FEATURE_ACCESS_LOG] = &gn_access_log_feature,
    [GN_FEATURE_LISTEN]     = &gn_listen_feature,
    [GN_FEATURE_TYPES]      = &gn_types_feature,
    [GN_FEATURE_HTTP]       = &gn_http_feature,
    [GN_FEATURE_FILE]       = &gn_file_feature,
    [GN_FEATURE_STATIC]     = &gn_static_feature,
    [GN_FEATURE_MODULES]    = &gn_modules_feature,
    [GN_FEATURE_TLS]        = &gn_tls_feature,
    [GN_FEATURE_REWRITE]    = &gn_rewrite_feature,
    [GN_FEATURE_ACCESS]     = &gn_access_feature,
    [GN_FEATURE_REALIP]     = &gn_realip_feature,
    [GN_FEATURE_PROXY]      = &gn_proxy_feature,
    [GN_FEATURE_HEADERS]    = &gn_headers_feature,
    [GN_FEATURE_TRY_FILES]  = &gn_try_files_feature,
    [GN_FEATURE_LIMIT]      = &gn_limit_feature,
    [GN_FEATURE_AUTOINDEX]  = &gn_autoindex_feature,
    [GN_FEATURE_GZIP]       = &gn_gzip_feature,
};
