/*
 * The one implementation of the module ABI's function table. Everything
 * a module can do to the server passes through here: this file is the
 * firewall between internal structs and the stable ABI.
 */

#ifndef GN_CORE_API_H_INCLUDED
#define GN_CORE_API_H_INCLUDED

#include "gn_config.h"

#include <gannet/module.h>

#include "http_request.h"


extern const gn_api_t  gn_api;

/* Child: frees watches removed during the last batch of events (not
 * before: an event for one may still be in the batch). */
void gn_api_collect(void);

#endif /* GN_CORE_API_H_INCLUDED */
