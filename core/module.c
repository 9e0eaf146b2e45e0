/*
 * The module loader and registry.
 *
 * load_module dlopen()s with RTLD_NOW (an unresolved symbol fails now,
 * not at the first request) and RTLD_LOCAL (modules cannot interpose on
 * each other), in the master at configuration time, so children inherit
 * the mappings. The descriptor is checked before anything of the module
 * is used: entry symbol of this major, magic, major, the minor it needs
 * (at most this server's), size.
 * A configuration with one bad module is refused whole.
 */

#include "gn_config.h"

#include <dlfcn.h>

#include "module.h"
#include "log.h"
#include "str.h"


#define GN_MOD_MAX_DIRS      64           /* bits in gn_mod_conf_t.set */

static char *gn_module_load(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_module_handler(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);
static char *gn_module_set(gn_conf_t *cf, const gn_conf_cmd_t *cmd,
    void *conf);

static const gn_conf_cmd_t  gn_module_commands[] = {

    { gn_string("load_module"), GN_CONF_MAIN | GN_CONF_TAKE1,
      gn_module_load, GN_CONF_MAIN_CONF, 0, NULL, NULL },
    { gn_string("handler"), GN_CONF_MAIN | GN_CONF_SRV | GN_CONF_LOC
                            | GN_CONF_1MORE,
      gn_module_handler, GN_CONF_LOC_CONF, 0, NULL, NULL },

    gn_conf_null_cmd
};


static gn_cycle_t *
gn_module_cycle(gn_conf_t *cf)
{
    return cf->data;
}


static size_t
gn_module_value_size(uint32_t type)
{
    return type == GN_DIR_STRING ? sizeof(char *) : sizeof(int64_t);
}


gn_int_t
gn_module_check_version(unsigned major, unsigned minor, unsigned smajor,
    unsigned sminor, char *err, size_t len)
{
    if (major != smajor) {
        snprintf(err, len, "was built for ABI %u.%u, this server "
                 "implements %u.%u", major, minor, smajor, sminor);
        return GN_ERROR;
    }

    /* the oldest minor the module needs; what it has beyond that it
     * tests at run time (GN_API_HAS) */
    if (minor > sminor) {
        snprintf(err, len, "needs ABI %u.%u, this server implements %u.%u",
                 major, minor, smajor, sminor);
        return GN_ERROR;
    }

    return GN_OK;
}


/* The descriptor checks, with the messages an operator needs. */
static gn_int_t
gn_module_check(gn_conf_t *cf, const gn_str_t *path, const gn_module_t *m)
{
    char                   err[128];
    const gn_directive_t  *d;
    gn_uint_t              n;

    if (m->magic != GN_ABI_MAGIC) {
        gn_conf_error(cf, "module \"%.*s\" has a bad descriptor (magic "
                      "0x%08x, expected 0x%08x)", GN_STR_ARG(path),
                      (unsigned) m->magic, (unsigned) GN_ABI_MAGIC);
        return GN_ERROR;
    }

    if (gn_module_check_version(m->abi_major, m->abi_minor, GN_ABI_MAJOR,
                                GN_ABI_MINOR, err, sizeof(err))
        != GN_OK)
    {
        gn_conf_error(cf, "module \"%.*s\" %s", GN_STR_ARG(path), err);
        return GN_ERROR;
    }

    /* 1.0's descriptor is the least any 1.x module has */
    if (m->size < offsetof(gn_module_t, exit_child) + sizeof(m->exit_child)) {
        gn_conf_error(cf, "module \"%.*s\" descriptor size %u is smaller "
                      "than the 1.0 descriptor (%zu)", GN_STR_ARG(path),
                      (unsigned) m->size,
                      offsetof(gn_module_t, exit_child)
                      + sizeof(m->exit_child));
        return GN_ERROR;
    }

    if (m->name == NULL || m->name[0] == '\0') {
        gn_conf_error(cf, "module \"%.*s\" has no name", GN_STR_ARG(path));
        return GN_ERROR;
    }

    for (n = 0, d = m->directives; d != NULL && d->name != NULL; d++, n++) {
        if (d->type < GN_DIR_STRING || d->type > GN_DIR_DURATION
            || (d->contexts & (GN_CTX_MAIN | GN_CTX_SERVER | GN_CTX_LOCATION))
               == 0
            || d->offset + gn_module_value_size(d->type) > m->conf_size)
        {
            gn_conf_error(cf, "module \"%s\": directive \"%s\" is malformed "
                          "(type, contexts, or offset beyond conf_size)",
                          m->name, d->name);
            return GN_ERROR;
        }
    }

    if (n > GN_MOD_MAX_DIRS) {
        gn_conf_error(cf, "module \"%s\" declares %u directives, at most %d "
                      "are supported", m->name, (unsigned) n,
                      GN_MOD_MAX_DIRS);
        return GN_ERROR;
    }

    return GN_OK;
}


/* Makes the parser see the module's directives. */
static gn_int_t
gn_module_register_directives(gn_conf_t *cf, gn_cycle_t *cycle,
    gn_mod_t *mod)
{
    const gn_directive_t  *d;
    gn_conf_cmd_t         *cmd;
    gn_uint_t              i, n;

    for (n = 0, d = mod->desc->directives; d && d->name; d++) {
        n++;
    }
    mod->ndirectives = n;
    if (n == 0) {
        return GN_OK;
    }

    mod->cmds = gn_pcalloc(cf->pool, (n + 1) * sizeof(gn_conf_cmd_t));
    if (mod->cmds == NULL) {
        return GN_ERROR;
    }

    /* a module may not take over a name the server (or another module)
     * already has */
    for (d = mod->desc->directives; d && d->name; d++) {
        const gn_conf_cmd_t  **t, *c;

        for (t = cycle->tables; *t != NULL; t++) {
            for (c = *t; c->name.len; c++) {
                if (c->name.len == strlen(d->name)
                    && memcmp(c->name.data, d->name, c->name.len) == 0)
                {
                    gn_conf_error(cf, "module \"%s\" declares directive "
                                  "\"%s\", which already exists",
                                  mod->desc->name, d->name);
                    return GN_DECLINED;
                }
            }
        }
    }

    for (i = 0, d = mod->desc->directives; i < n; i++, d++) {
        cmd = &mod->cmds[i];
        cmd->name.data = (u_char *) d->name;
        cmd->name.len = strlen(d->name);
        /* GN_CTX_* has the values of GN_CONF_MAIN/SRV/LOC */
        cmd->type = (d->contexts & GN_CONF_ANY) | GN_CONF_TAKE1;
        cmd->set = gn_module_set;
        cmd->conf = GN_CONF_LOC_CONF;
        cmd->offset = i;
        cmd->post = mod;
    }

    /* before the terminating NULL */
    cycle->tables[cycle->ntables++] = mod->cmds;
    cycle->tables[cycle->ntables] = NULL;

    return GN_OK;
}


/* The main level's conf slots grow with each module loaded. */
static gn_int_t
gn_module_grow_main(gn_conf_t *cf, gn_cycle_t *cycle, gn_mod_t *mod)
{
    gn_mod_conf_t  *old, *mc;
    gn_uint_t       n = cycle->modules.nelts;

    old = gn_modules_conf(cycle->main_loc)->confs;
    mc = gn_pcalloc(cf->pool, n * sizeof(gn_mod_conf_t));
    if (mc == NULL) {
        return GN_ERROR;
    }
    if (old != NULL) {
        memcpy(mc, old, (n - 1) * sizeof(gn_mod_conf_t));
    }

    if (mod->desc->conf_size) {
        mc[n - 1].conf = gn_pcalloc(cf->pool, mod->desc->conf_size);
        if (mc[n - 1].conf == NULL) {
            return GN_ERROR;
        }
    }

    gn_modules_conf(cycle->main_loc)->confs = mc;
    return GN_OK;
}


static char *
gn_module_load(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_cycle_t          *cycle = gn_module_cycle(cf);
    gn_str_t            *value = cf->args->elts, path;
    gn_mod_t            *mod, **pm;
    const gn_module_t  *(*entry)(void);
    const gn_module_t   *desc;
    gn_uint_t            i;
    void                *handle;

    if (cycle->main->servers.nelts > 0) {
        gn_conf_error(cf, "\"load_module\" must come before the first "
                      "\"server\" block");
        return GN_CONF_ERROR;
    }

    if (cycle->modules.nelts >= GN_MAX_MODULES) {
        gn_conf_error(cf, "too many modules (at most %d)", GN_MAX_MODULES);
        return GN_CONF_ERROR;
    }

    path = value[1];
    if (gn_conf_full_name(cf, &path, 0) != GN_OK) {
        return "failed (out of memory)";
    }

    handle = dlopen((char *) path.data, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        gn_conf_error(cf, "cannot load module \"%.*s\": %s",
                      GN_STR_ARG(&path), dlerror());
        return GN_CONF_ERROR;
    }

    *(void **) &entry = dlsym(handle, GN_MODULE_ENTRY_NAME);
    if (entry == NULL) {
        gn_conf_error(cf, "module \"%.*s\" has no symbol %s (built for "
                      "another ABI major, or not a gannet module)",
                      GN_STR_ARG(&path), GN_MODULE_ENTRY_NAME);
        dlclose(handle);
        return GN_CONF_ERROR;
    }

    desc = entry();
    if (desc == NULL || gn_module_check(cf, &path, desc) != GN_OK) {
        if (desc == NULL) {
            gn_conf_error(cf, "module \"%.*s\" returned no descriptor",
                          GN_STR_ARG(&path));
        }
        dlclose(handle);
        return GN_CONF_ERROR;
    }

    pm = cycle->modules.elts;
    for (i = 0; i < cycle->modules.nelts; i++) {
        if (strcmp(pm[i]->desc->name, desc->name) == 0) {
            gn_conf_error(cf, "module \"%s\" is loaded twice (\"%.*s\")",
                          desc->name, GN_STR_ARG(&path));
            dlclose(handle);
            return GN_CONF_ERROR;
        }
    }

    mod = gn_pcalloc(cf->pool, sizeof(gn_mod_t));
    pm = gn_array_push(&cycle->modules);
    if (mod == NULL || pm == NULL) {
        dlclose(handle);
        return "failed (out of memory)";
    }

    mod->desc = desc;
    mod->path = path;
    mod->handle = handle;

    /* the optional entry point of ABI 1.2: a 1.0 or 1.1 module has none */
    *(void **) &mod->check = dlsym(handle, GN_MODULE_CHECK_ENTRY_NAME);
    mod->index = cycle->modules.nelts - 1;
    *pm = mod;

    switch (gn_module_register_directives(cf, cycle, mod)) {
    case GN_OK:
        break;
    case GN_DECLINED:
        return GN_CONF_ERROR;
    default:
        return "failed (out of memory)";
    }

    if (gn_module_grow_main(cf, cycle, mod) != GN_OK) {
        return "failed (out of memory)";
    }

    return GN_CONF_OK;
}


static char *
gn_module_handler(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_modules_conf_t *mlc = conf;
    gn_cycle_t        *cycle = gn_module_cycle(cf);
    gn_str_t          *value = cf->args->elts;
    gn_mod_t         **pm, *mod;
    gn_mod_handler_t  *h;
    gn_uint_t          i;

    mod = NULL;
    pm = cycle->modules.elts;
    for (i = 0; i < cycle->modules.nelts; i++) {
        if (strlen(pm[i]->desc->name) == value[1].len
            && memcmp(pm[i]->desc->name, value[1].data, value[1].len) == 0)
        {
            mod = pm[i];
            break;
        }
    }

    if (mod == NULL) {
        gn_conf_error(cf, "unknown handler \"%.*s\", load its module first "
                      "with load_module", GN_STR_ARG(&value[1]));
        return GN_CONF_ERROR;
    }

    if (mod->desc->handler == NULL) {
        gn_conf_error(cf, "module \"%s\" has no handler", mod->desc->name);
        return GN_CONF_ERROR;
    }

    if (mlc->handlers == NULL) {
        mlc->handlers = gn_array_create(cf->pool, 2, sizeof(gn_mod_handler_t));
        if (mlc->handlers == NULL) {
            return "failed (out of memory)";
        }
    }

    for (i = (cf->args->nelts > 2) ? 2 : 1; i < cf->args->nelts; i++) {
        h = gn_array_push(mlc->handlers);
        if (h == NULL) {
            return "failed (out of memory)";
        }
        h->mod = mod;
        h->ext.len = 0;
        h->ext.data = NULL;

        if (cf->args->nelts > 2) {
            if (value[i].len < 2 || value[i].data[0] != '.') {
                gn_conf_error(cf, "invalid extension \"%.*s\" in \"handler\" "
                              "directive, expected \".ext\"",
                              GN_STR_ARG(&value[i]));
                return GN_CONF_ERROR;
            }
            h->ext = value[i];
            (void) gn_strlow(h->ext.data, h->ext.data, h->ext.len);
        }
    }

    return GN_CONF_OK;
}


static gn_mod_conf_t *
gn_module_slot(gn_loc_conf_t *lc, gn_mod_t *mod)
{
    return &gn_modules_conf(lc)->confs[mod->index];
}


/* Parses `text` as a value of directive d into the conf struct. */
static gn_int_t
gn_module_parse_value(gn_conf_t *cf, gn_mod_t *mod,
    const gn_directive_t *d, gn_str_t *text, void *conf)
{
    u_char     *slot = (u_char *) conf + d->offset;
    int64_t     v;
    gn_msec_t   ms;
    gn_uint_t   neg;
    char       *s;

    switch (d->type) {

    case GN_DIR_STRING:
        s = gn_pstrdup_cstr(cf->pool, text);
        if (s == NULL) {
            return GN_ERROR;
        }
        memcpy(slot, &s, sizeof(char *));
        return GN_OK;

    case GN_DIR_NUMBER:
        neg = (text->len > 1 && text->data[0] == '-');
        v = gn_atoi(text->data + neg, text->len - neg);
        if (v == GN_ERROR) {
            gn_conf_error(cf, "invalid number \"%.*s\" in \"%s\" directive",
                          GN_STR_ARG(text), d->name);
            return GN_ERROR;
        }
        v = neg ? -v : v;
        break;

    case GN_DIR_FLAG:
        if (gn_str_caseeq(text, "on")) {
            v = 1;
        } else if (gn_str_caseeq(text, "off")) {
            v = 0;
        } else {
            gn_conf_error(cf, "invalid value \"%.*s\" in \"%s\" directive, "
                          "it must be \"on\" or \"off\"", GN_STR_ARG(text),
                          d->name);
            return GN_ERROR;
        }
        break;

    case GN_DIR_SIZE:
        v = gn_parse_size(text);
        if (v == GN_ERROR) {
            gn_conf_error(cf, "invalid size \"%.*s\" in \"%s\" directive",
                          GN_STR_ARG(text), d->name);
            return GN_ERROR;
        }
        break;

    default:                                    /* GN_DIR_DURATION */
        if (gn_parse_msec(text, &ms) != GN_OK || ms > INT64_MAX) {
            gn_conf_error(cf, "invalid time \"%.*s\" in \"%s\" directive",
                          GN_STR_ARG(text), d->name);
            return GN_ERROR;
        }
        v = (int64_t) ms;
        break;
    }

    (void) mod;
    memcpy(slot, &v, sizeof(int64_t));
    return GN_OK;
}


static char *
gn_module_set(gn_conf_t *cf, const gn_conf_cmd_t *cmd, void *conf)
{
    gn_loc_conf_t         *lc = conf;
    gn_mod_t              *mod = (gn_mod_t *) cmd->post;
    const gn_directive_t  *d = &mod->desc->directives[cmd->offset];
    gn_mod_conf_t         *mc;
    gn_str_t              *value = cf->args->elts;

    mc = gn_module_slot(lc, mod);

    if (mc->set & ((uint64_t) 1 << cmd->offset)) {
        return "is duplicate";
    }

    if (gn_module_parse_value(cf, mod, d, &value[1], mc->conf) != GN_OK) {
        return cf->err[0] ? GN_CONF_ERROR : "failed (out of memory)";
    }

    /* where it was written, for check_conf's refusals */
    if (mc->src == NULL) {
        mc->src = gn_pcalloc(cf->pool, mod->ndirectives
                                       * sizeof(gn_mod_src_t));
    }
    if (mc->src == NULL) {
        return "failed (out of memory)";
    }
    mc->src[cmd->offset].file = gn_pstrdup_cstr(cf->pool, &cf->file->name);
    mc->src[cmd->offset].line = cf->file->line;

    mc->set |= (uint64_t) 1 << cmd->offset;
    return GN_CONF_OK;
}


static gn_int_t
gn_module_create_conf(gn_conf_t *cf, gn_loc_conf_t *lc)
{
    gn_cycle_t      *cycle = gn_module_cycle(cf);
    gn_mod_t       **pm;
    gn_mod_conf_t   *mc;
    gn_uint_t        i, n;

    n = cycle->modules.nelts;
    if (n == 0) {
        return GN_OK;
    }

    mc = gn_pcalloc(cf->pool, n * sizeof(gn_mod_conf_t));
    if (mc == NULL) {
        return GN_ERROR;
    }

    pm = cycle->modules.elts;
    for (i = 0; i < n; i++) {
        if (pm[i]->desc->conf_size) {
            mc[i].conf = gn_pcalloc(cf->pool, pm[i]->desc->conf_size);
            if (mc[i].conf == NULL) {
                return GN_ERROR;
            }
        }
    }

    gn_modules_conf(lc)->confs = mc;
    return GN_OK;
}


/* Inner levels inherit what they did not set; the top level gets the
 * directives' declared defaults. */
static gn_int_t
gn_module_merge_conf(gn_conf_t *cf, gn_loc_conf_t *lc, gn_loc_conf_t *prev)
{
    gn_cycle_t            *cycle = gn_module_cycle(cf);
    gn_mod_t             **pm;
    gn_mod_conf_t         *mc, *pc;
    const gn_directive_t  *d;
    gn_str_t               text;
    gn_uint_t              i, j;
    uint64_t               bit;

    if (gn_modules_conf(lc)->handlers == NULL && prev != NULL) {
        gn_modules_conf(lc)->handlers = gn_modules_conf(prev)->handlers;
    }

    pm = cycle->modules.elts;
    for (i = 0; i < cycle->modules.nelts; i++) {
        if (pm[i]->desc->conf_size == 0) {
            continue;
        }

        mc = gn_module_slot(lc, pm[i]);
        pc = prev ? gn_module_slot(prev, pm[i]) : NULL;

        for (j = 0; j < pm[i]->ndirectives; j++) {
            bit = (uint64_t) 1 << j;
            d = &pm[i]->desc->directives[j];

            if (mc->set & bit) {
                continue;
            }

            if (pc != NULL && (pc->set & bit)) {
                memcpy((u_char *) mc->conf + d->offset,
                       (u_char *) pc->conf + d->offset,
                       gn_module_value_size(d->type));
                mc->set |= bit;
                if (pc->src != NULL && pc->src[j].file != NULL) {
                    if (mc->src == NULL) {
                        mc->src = gn_pcalloc(cf->pool, pm[i]->ndirectives
                                                 * sizeof(gn_mod_src_t));
                        if (mc->src == NULL) {
                            return GN_ERROR;
                        }
                    }
                    mc->src[j] = pc->src[j];
                }
                continue;
            }

            if (pc == NULL && d->default_value != NULL) {
                text.data = (u_char *) d->default_value;
                text.len = strlen(d->default_value);
                if (gn_module_parse_value(cf, pm[i], d, &text, mc->conf)
                    != GN_OK)
                {
                    gn_conf_error(cf, "module \"%s\": bad default \"%s\" "
                                  "for directive \"%s\"", pm[i]->desc->name,
                                  d->default_value, d->name);
                    return GN_ERROR;
                }
                mc->set |= bit;
            }
        }
    }

    return GN_OK;
}


/* ---- check_conf (ABI 1.2) ---------------------------------------------- */

/* The check running now: api->conf_error reports against it. */
static struct {
    gn_conf_t           *cf;
    gn_mod_t            *mod;
    gn_mod_conf_t       *mc;
    gn_uint_t            reported;
} gn_module_checking;


int
gn_module_conf_error(const char *directive, const char *fmt, ...)
{
    gn_conf_t      *cf = gn_module_checking.cf;
    gn_mod_t       *mod = gn_module_checking.mod;
    gn_mod_conf_t  *mc = gn_module_checking.mc;
    gn_uint_t       j;
    va_list         ap;
    char            msg[768];

    /* (the message is the module's; the place is the server's) */

    if (cf == NULL || gn_module_checking.reported) {
        return GN_ERROR;             /* not in check_conf, or said once */
    }
    gn_module_checking.reported = 1;

    va_start(ap, fmt);
    (void) vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    for (j = 0; directive != NULL && j < mod->ndirectives; j++) {
        if (strcmp(mod->desc->directives[j].name, directive) == 0) {
            break;
        }
    }

    if (directive == NULL || j == mod->ndirectives) {
        snprintf(cf->err, sizeof(cf->err), "module \"%s\": %s",
                 mod->desc->name, msg);
    } else if (mc->src != NULL && mc->src[j].file != NULL) {
        snprintf(cf->err, sizeof(cf->err), "\"%s\" directive %s in %s:%u",
                 directive, msg, mc->src[j].file, (unsigned) mc->src[j].line);
    } else {
        snprintf(cf->err, sizeof(cf->err), "\"%s\" directive %s (the "
                 "default value of module \"%s\")", directive, msg,
                 mod->desc->name);
    }

    return GN_ERROR;
}


static gn_int_t
gn_module_check_level(gn_conf_t *cf, gn_mod_t *mod, gn_loc_conf_t *lc,
    int level)
{
    gn_check_pt   check = mod->check;
    int           rc;

    gn_module_checking.cf = cf;
    gn_module_checking.mod = mod;
    gn_module_checking.mc = gn_module_slot(lc, mod);
    gn_module_checking.reported = 0;

    rc = check(&gn_api, gn_module_checking.mc->conf, level);

    if (rc != GN_OK && !gn_module_checking.reported) {
        snprintf(cf->err, sizeof(cf->err), "module \"%s\" refused the "
                 "configuration of %s%s%.*s%s", mod->desc->name,
                 level == GN_CTX_MAIN ? "the main level"
                 : level == GN_CTX_SERVER ? "a server" : "location",
                 level == GN_CTX_LOCATION ? " \"" : "",
                 level == GN_CTX_LOCATION ? (int) lc->name.len : 0,
                 level == GN_CTX_LOCATION ? (char *) lc->name.data : "",
                 level == GN_CTX_LOCATION ? "\"" : "");
    }

    gn_module_checking.cf = NULL;
    return rc == GN_OK ? GN_OK : GN_ERROR;
}


static gn_int_t
gn_module_check_confs(gn_conf_t *cf, gn_cycle_t *cycle)
{
    gn_srv_conf_t  **psc;
    gn_loc_conf_t  **plc;
    gn_mod_t       **pm;
    gn_array_t      *locs[2];
    gn_uint_t        i, j, k, l;

    pm = cycle->modules.elts;
    for (i = 0; i < cycle->modules.nelts; i++) {
        if (pm[i]->check == NULL) {
            continue;                 /* 1.0 / 1.1, or no checks */
        }

        if (gn_module_check_level(cf, pm[i], cycle->main_loc, GN_CTX_MAIN)
            != GN_OK)
        {
            return GN_ERROR;
        }

        psc = cycle->main->servers.elts;
        for (j = 0; j < cycle->main->servers.nelts; j++) {
            if (gn_module_check_level(cf, pm[i], psc[j]->loc, GN_CTX_SERVER)
                != GN_OK)
            {
                return GN_ERROR;
            }

            locs[0] = &psc[j]->locations;
            locs[1] = &psc[j]->regex_locations;
            for (k = 0; k < 2; k++) {
                plc = locs[k]->elts;
                for (l = 0; l < locs[k]->nelts; l++) {
                    if (gn_module_check_level(cf, pm[i], plc[l],
                                              GN_CTX_LOCATION)
                        != GN_OK)
                    {
                        return GN_ERROR;
                    }
                }
            }
        }
    }

    return GN_OK;
}


gn_mod_t *
gn_module_handler_for(gn_loc_conf_t *lc, const gn_str_t *uri)
{
    gn_mod_handler_t  *h;
    gn_mod_t          *any;
    gn_array_t        *handlers;
    gn_uint_t          i;

    handlers = gn_modules_conf(lc)->handlers;
    if (handlers == NULL) {
        return NULL;
    }

    any = NULL;
    h = handlers->elts;
    for (i = 0; i < handlers->nelts; i++) {
        if (h[i].ext.len == 0) {
            any = any ? any : h[i].mod;
            continue;
        }
        if (uri->len >= h[i].ext.len
            && gn_strncasecmp(uri->data + uri->len - h[i].ext.len,
                              h[i].ext.data, h[i].ext.len) == 0)
        {
            return h[i].mod;
        }
    }

    return any;
}


void *
gn_module_conf(gn_loc_conf_t *lc, const gn_module_t *desc)
{
    gn_mod_t  **pm;
    gn_uint_t   i;

    pm = gn_cycle->modules.elts;
    for (i = 0; i < gn_cycle->modules.nelts; i++) {
        if (pm[i]->desc == desc) {
            return gn_modules_conf(lc)->confs != NULL
                   ? gn_module_slot(lc, pm[i])->conf : NULL;
        }
    }

    return NULL;
}


/* Runs one init hook of every module, in load order, with its main-level
 * conf; the first failure stops it. */
static gn_int_t
gn_module_init(gn_cycle_t *cycle, gn_log_t *log, gn_uint_t child)
{
    gn_mod_t    **pm;
    gn_init_pt    hook;
    gn_uint_t     i;

    pm = cycle->modules.elts;
    for (i = 0; i < cycle->modules.nelts; i++) {
        hook = child ? pm[i]->desc->init_child : pm[i]->desc->init_master;
        if (hook != NULL
            && hook(&gn_api, gn_module_slot(cycle->main_loc, pm[i])->conf)
               != GN_OK)
        {
            gn_log_error(GN_LOG_EMERG, log, 0, "module \"%s\": %s failed",
                         pm[i]->desc->name,
                         child ? "init_child" : "init_master");
            return GN_ERROR;
        }
    }

    return GN_OK;
}


gn_int_t
gn_module_init_master(gn_cycle_t *cycle, gn_log_t *log)
{
    return gn_module_init(cycle, log, 0);
}


gn_int_t
gn_module_init_child(gn_cycle_t *cycle)
{
    return gn_module_init(cycle, &cycle->log, 1);
}


void
gn_module_exit_child(gn_cycle_t *cycle)
{
    gn_mod_t  **pm;
    gn_uint_t   i;

    pm = cycle->modules.elts;
    for (i = 0; i < cycle->modules.nelts; i++) {
        if (pm[i]->desc->exit_child != NULL) {
            pm[i]->desc->exit_child(&gn_api);
        }
    }
}


static void
gn_module_unload(gn_cycle_t *cycle)
{
    gn_mod_t  **pm;
    gn_uint_t   i;

    pm = cycle->modules.elts;
    for (i = 0; i < cycle->modules.nelts; i++) {
        if (pm[i]->handle != NULL) {
            dlclose(pm[i]->handle);
            pm[i]->handle = NULL;
        }
    }
}


/* A level of a chrooted configuration: mod_cgi's launcher is forked by
 * the master, outside the chroot, and would get paths that only mean
 * something inside it. */
static gn_int_t
gn_module_check_chroot(gn_conf_t *cf, gn_cycle_t *cycle, gn_srv_conf_t *sc,
    gn_loc_conf_t *lc)
{
    gn_array_t        *handlers = gn_modules_conf(lc)->handlers;
    gn_mod_handler_t  *h;
    gn_uint_t          i;

    if (cycle->main->chroot.len == 0) {
        return GN_OK;
    }

    for (i = 0; handlers != NULL && i < handlers->nelts; i++) {
        h = &((gn_mod_handler_t *) handlers->elts)[i];
        if (strcmp(h->mod->desc->name, "cgi") == 0) {
            snprintf(cf->err, sizeof(cf->err), "\"handler cgi\" cannot be "
                     "used with \"chroot\" (the CGI launcher runs outside "
                     "the chroot) in the server in %.*s:%u",
                     GN_STR_ARG(&sc->file), (unsigned) sc->line);
            return GN_ERROR;
        }
    }

    return GN_OK;
}


const gn_feature_t  gn_modules_feature = {
    .name = "modules", .commands = gn_module_commands,
    .extra_tables = GN_MAX_MODULES,
    .conf_size = sizeof(gn_modules_conf_t),
    .create_conf = gn_module_create_conf,
    .merge_conf = gn_module_merge_conf,
    .check_cycle = gn_module_check_confs,
    .check_level = gn_module_check_chroot,
    .exit_cycle = gn_module_unload
};
