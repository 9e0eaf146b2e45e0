/*
 * mod_t_needs0: test fixture built with the current headers that says,
 * with GN_MODULE_V1_NEEDS(0), that it needs only ABI 1.0: it calls 1.0
 * functions, and read_file (1.1) and proto_stats (1.3) only when the
 * server's table has them (GN_API_HAS). Every 1.x server loads it.
 *
 * `handler t_needs0;` answers one line, from its own descriptor, the
 * headers it was built with and the server's table:
 *
 *   needs 1.0 built 1.3 server 1.3 read_file yes conf_error yes
 *   proto_stats yes
 *
 * (one line). proto_stats is asked for a struct cut short, as an older
 * module's would be: "yes" when the server filled exactly that much and
 * wrote nothing past it ("overran" otherwise, "no" without it).
 *
 * then, when the server has read_file, the bytes of the file the URI
 * maps to (at most 4 KiB), or "no file".
 */

#include <stdio.h>
#include <string.h>

#include <gannet/module.h>


static int t_needs0_handler(const gn_api_t *api, gn_request_t *r);

static const gn_module_t  t_needs0_module = {
    GN_MODULE_V1_NEEDS(0), "t_needs0", "1.0", NULL, 0,
    NULL, NULL, t_needs0_handler, NULL, NULL, NULL, NULL
};


/* read_file (1.1) of the mapped file, for a server that has it */
static int
t_needs0_file(const gn_api_t *api, gn_request_t *r)
{
    char                  path[1024];
    gn_str_t              mapped;
    size_t                len;
    const unsigned char  *data;

    mapped = api->mapped_path(r);
    if (mapped.len == 0 || mapped.len >= sizeof(path)) {
        return api->write(r, "no file\n", 8);
    }
    memcpy(path, mapped.data, mapped.len);
    path[mapped.len] = '\0';

    if (api->read_file(r, path, 4096, &data, &len) != GN_OK) {
        return api->write(r, "no file\n", 8);
    }

    return api->write(r, data, len);
}


/* proto_stats (1.3) into a struct that ends before h2_requests */
static const char *
t_needs0_proto(const gn_api_t *api)
{
    gn_proto_stats_t  ps;
    size_t            part;

    if (!GN_API_HAS(api, proto_stats)) {
        return "no";
    }

    part = offsetof(gn_proto_stats_t, h2_requests);
    memset(&ps, 0xa5, sizeof(ps));

    if (api->proto_stats(api->child_slot(), &ps, part) != 1) {
        return "failed";
    }

    if (ps.size != part || ps.h2_requests != 0xa5a5a5a5a5a5a5a5ULL
        || ps.h2_streams != 0xa5a5a5a5a5a5a5a5ULL)
    {
        return "overran";
    }

    return "yes";
}


static int
t_needs0_handler(const gn_api_t *api, gn_request_t *r)
{
    int   n, has_read;
    char  buf[200];

    has_read = GN_API_HAS(api, read_file);

    n = snprintf(buf, sizeof(buf),
                 "needs %u.%u built %d.%d server %u.%u read_file %s "
                 "conf_error %s proto_stats %s\n",
                 (unsigned) t_needs0_module.abi_major,
                 (unsigned) t_needs0_module.abi_minor,
                 GN_ABI_MAJOR, GN_ABI_MINOR,
                 (unsigned) api->abi_major, (unsigned) api->abi_minor,
                 has_read ? "yes" : "no",
                 GN_API_HAS(api, conf_error) ? "yes" : "no",
                 t_needs0_proto(api));

    if (n < 0 || (size_t) n >= sizeof(buf)) {
        return GN_ERROR;
    }

    api->set_header(r, "Content-Type", "text/plain");

    if (api->write(r, buf, (size_t) n) != GN_OK) {
        return GN_ERROR;
    }

    return has_read ? t_needs0_file(api, r) : GN_OK;
}

GN_MODULE_EXPORT(t_needs0_module)
