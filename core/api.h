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
#include "module.h"             /* gn_api */


/* gn_api, the table itself, is declared in module.h (included above):
 * the module loader hands it to every hook without depending on what
 * implements it. */

/* Child: frees watches removed during the last batch of events (not
 * before: an event for one may still be in the batch). */
void gn_api_collect(void);

#endif /* GN_CORE_API_H_INCLUDED */
