/*
 * PCRE2 wrapper (doc/internals.md section 5): compiled code and JIT
 * machine code made in the master are inherited by fork and only read
 * by children; match data, the match context and the JIT stack are per
 * child. The library's default match limit (10,000,000) lets one request
 * burn tens of milliseconds on a catastrophic pattern, so children use a
 * far lower one.
 */

#include "gn_config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "regex.h"
#include "str.h"


static pcre2_match_context  *gn_regex_mctx;
static pcre2_match_data     *gn_regex_mdata;
static pcre2_jit_stack      *gn_regex_jstack;


static void
gn_regex_free(void *data)
{
    pcre2_code_free(data);
}


gn_int_t
gn_regex_compile(gn_regex_t *re, gn_pool_t *pool, const gn_str_t *pattern,
    gn_uint_t caseless, char *err, size_t errlen)
{
    gn_pool_cleanup_t  *cln;
    pcre2_code         *code;
    PCRE2_UCHAR         msg[256];
    PCRE2_SIZE          erroff;
    uint32_t            n;
    int                 errcode;

    cln = gn_pool_cleanup_add(pool, 0);
    if (cln == NULL) {
        snprintf(err, errlen, "out of memory");
        return GN_ERROR;
    }

    code = pcre2_compile(pattern->data, pattern->len,
                         caseless ? PCRE2_CASELESS : 0, &errcode, &erroff,
                         NULL);
    if (code == NULL) {
        pcre2_get_error_message(errcode, msg, sizeof(msg));
        snprintf(err, errlen, "pcre2_compile() failed: %s at offset %zu in "
                 "\"%.*s\"", (char *) msg, (size_t) erroff,
                 GN_STR_ARG(pattern));
        return GN_ERROR;
    }

    cln->handler = gn_regex_free;
    cln->data = code;

    (void) pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &n);
    if (n > GN_REGEX_MAX_CAPTURES) {
        snprintf(err, errlen, "too many captures (%u) in \"%.*s\", at most "
                 "%d", (unsigned) n, GN_STR_ARG(pattern),
                 GN_REGEX_MAX_CAPTURES);
        return GN_ERROR;
    }

    /* without JIT (e.g. a W^X sandbox) the interpreter is used */
    re->jit = (pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0);
    re->code = code;
    re->pattern = *pattern;
    re->captures = n;

    return GN_OK;
}


gn_int_t
gn_regex_group(gn_regex_t *re, const u_char *name, size_t len)
{
    u_char  buf[64];
    int     n;

    if (len >= sizeof(buf)) {
        return GN_ERROR;
    }
    memcpy(buf, name, len);
    buf[len] = '\0';

    n = pcre2_substring_number_from_name(re->code, buf);

    return n > 0 ? n : GN_ERROR;
}


gn_int_t
gn_regex_init_child(uint32_t match_limit)
{
    if (gn_regex_mctx != NULL) {               /* once; only the limit moves */
        pcre2_set_match_limit(gn_regex_mctx, match_limit);
        pcre2_set_depth_limit(gn_regex_mctx, match_limit);
        return GN_OK;
    }

    gn_regex_mctx = pcre2_match_context_create(NULL);
    gn_regex_mdata = pcre2_match_data_create(GN_REGEX_MAX_CAPTURES + 1,
                                             NULL);
    gn_regex_jstack = pcre2_jit_stack_create(32 * 1024, 512 * 1024, NULL);

    if (gn_regex_mctx == NULL || gn_regex_mdata == NULL
        || gn_regex_jstack == NULL)
    {
        return GN_ERROR;
    }

    pcre2_set_match_limit(gn_regex_mctx, match_limit);
    pcre2_set_depth_limit(gn_regex_mctx, match_limit);
    pcre2_set_heap_limit(gn_regex_mctx, 20 * 1024);      /* KiB */
    pcre2_jit_stack_assign(gn_regex_mctx, NULL, gn_regex_jstack);

    return GN_OK;
}


gn_int_t
gn_regex_exec(gn_regex_t *re, const u_char *s, size_t len,
    gn_regex_caps_t *caps, const char **err)
{
    PCRE2_SIZE  *ov;
    int          rc, i;

    if (gn_regex_mdata == NULL
        && gn_regex_init_child(100000) != GN_OK)        /* e.g. tests */
    {
        *err = "out of memory";
        return GN_ERROR;
    }

    rc = pcre2_match(re->code, s, len, 0, 0, gn_regex_mdata, gn_regex_mctx);

    if (rc == PCRE2_ERROR_NOMATCH) {
        return 0;
    }

    if (rc < 0) {
        *err = rc == PCRE2_ERROR_MATCHLIMIT ? "match limit exceeded"
               : rc == PCRE2_ERROR_DEPTHLIMIT ? "depth limit exceeded"
               : rc == PCRE2_ERROR_HEAPLIMIT ? "heap limit exceeded"
               : rc == PCRE2_ERROR_JIT_STACKLIMIT ? "JIT stack exhausted"
               : "matching failed";
        return GN_ERROR;
    }

    if (caps != NULL) {
        ov = pcre2_get_ovector_pointer(gn_regex_mdata);
        caps->subject = s;
        caps->n = (gn_int_t) re->captures + 1;
        for (i = 0; i < 2 * caps->n; i++) {
            caps->ovec[i] = (i < 2 * rc) ? ov[i] : (size_t) -1;
        }
    }

    return 1;
}
