# Tests: C unit tests (TAP) and integration tests (Perl, TAP), all run by
# automake's TAP driver.

TEST_EXTENSIONS = .t .sh
SH_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_COMPILER = $(SHELL)
AM_SH_LOG_DRIVER_FLAGS = --ignore-exit
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
T_LOG_DRIVER = $(LOG_DRIVER)
T_LOG_COMPILER = $(PERL)
AM_T_LOG_FLAGS = -I$(top_srcdir)/t/lib

AM_TESTS_ENVIRONMENT = \
    GN_BIN='$(abs_top_builddir)/core/gannet'; \
    GN_CERTS='$(abs_top_builddir)/t/certs'; export GN_CERTS; \
    GN_MODDIR='$(abs_top_builddir)/modules/.libs'; export GN_MODDIR; \
    CC='$(CC)'; export CC; \
    GN_SPECWEB99_TOOL='$(abs_top_builddir)/tools/gannet-specweb99'; \
    export GN_SPECWEB99_TOOL; \
    GN_TMODDIR='$(abs_top_builddir)/t/modules/.libs'; export GN_TMODDIR; \
    GN_ISAPIDIR='$(abs_top_builddir)/modules/isapi/examples/.libs'; \
    GN_TISAPIDIR='$(abs_top_builddir)/t/isapi/.libs'; \
    export GN_ISAPIDIR GN_TISAPIDIR; \
    GN_BUILDDIR='$(abs_top_builddir)'; \
    GN_SRCDIR='$(abs_top_srcdir)'; \
    GN_HTTP2='$(GN_WITH_HTTP2)'; \
    export GN_BIN GN_BUILDDIR GN_SRCDIR GN_HTTP2;

GN_UNIT_TESTS = \
    %reldir%/unit/test_pool \
    %reldir%/unit/test_str \
    %reldir%/unit/test_timer \
    %reldir%/unit/test_listen \
    %reldir%/unit/test_conf \
    %reldir%/unit/test_http_parse \
    %reldir%/unit/test_http_cond \
    %reldir%/unit/test_tls_scache \
    %reldir%/unit/test_chash \
    %reldir%/unit/test_upstream \
    %reldir%/unit/test_fastcgi \
    %reldir%/unit/test_tls_hello \
    %reldir%/unit/test_file_cache \
    %reldir%/unit/test_regex \
    %reldir%/unit/test_access \
    %reldir%/unit/test_realip \
    %reldir%/unit/test_proxy_protocol \
    %reldir%/unit/test_lookup \
    %reldir%/unit/test_conn \
    %reldir%/unit/test_rewrite \
    %reldir%/unit/test_auth_basic \
    %reldir%/unit/test_binlog \
    %reldir%/unit/test_scoreboard \
    %reldir%/unit/test_scoreboard_upgrade \
    %reldir%/unit/test_module \
    %reldir%/unit/test_feature \
    %reldir%/unit/test_stream \
    %reldir%/unit/test_specweb99_logic

GN_UNIT_CFLAGS = $(AM_CFLAGS) $(GNUTLS_CFLAGS) $(PCRE2_CFLAGS) \
    $(NGHTTP2_CFLAGS)
GN_UNIT_LDADD = core/libgncore.la $(LIBS)

check_PROGRAMS += $(GN_UNIT_TESTS)

%canon_reldir%_unit_test_pool_SOURCES = %reldir%/unit/test_pool.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_pool_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_pool_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_str_SOURCES = %reldir%/unit/test_str.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_str_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_str_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_timer_SOURCES = %reldir%/unit/test_timer.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_timer_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_timer_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_listen_SOURCES = %reldir%/unit/test_listen.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_listen_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_listen_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_conf_SOURCES = %reldir%/unit/test_conf.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_conf_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_conf_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_http_parse_SOURCES = %reldir%/unit/test_http_parse.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_http_parse_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_http_parse_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_http_cond_SOURCES = %reldir%/unit/test_http_cond.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_http_cond_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_http_cond_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_scoreboard_upgrade_SOURCES = %reldir%/unit/test_scoreboard_upgrade.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_scoreboard_upgrade_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_scoreboard_upgrade_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_scoreboard_SOURCES = %reldir%/unit/test_scoreboard.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_scoreboard_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_scoreboard_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_tls_scache_SOURCES = %reldir%/unit/test_tls_scache.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_tls_scache_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_tls_scache_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_upstream_SOURCES = %reldir%/unit/test_upstream.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_upstream_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_upstream_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_fastcgi_SOURCES = %reldir%/unit/test_fastcgi.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_fastcgi_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_fastcgi_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_chash_SOURCES = %reldir%/unit/test_chash.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_chash_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_chash_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_tls_hello_SOURCES = %reldir%/unit/test_tls_hello.c %reldir%/unit/tls_hello_data.h %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_tls_hello_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_tls_hello_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_file_cache_SOURCES = %reldir%/unit/test_file_cache.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_file_cache_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_file_cache_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_regex_SOURCES = %reldir%/unit/test_regex.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_regex_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_regex_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_realip_SOURCES = %reldir%/unit/test_realip.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_realip_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_realip_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_proxy_protocol_SOURCES = %reldir%/unit/test_proxy_protocol.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_proxy_protocol_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_proxy_protocol_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_access_SOURCES = %reldir%/unit/test_access.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_access_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_access_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_feature_SOURCES = %reldir%/unit/test_feature.c %reldir%/tap.c %reldir%/tap.h \
    %reldir%/unit/t_cycle.c %reldir%/unit/t_cycle.h
%canon_reldir%_unit_test_feature_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_feature_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_stream_SOURCES = %reldir%/unit/test_stream.c %reldir%/tap.c %reldir%/tap.h \
    %reldir%/unit/t_cycle.c %reldir%/unit/t_cycle.h
%canon_reldir%_unit_test_stream_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_stream_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_lookup_SOURCES = %reldir%/unit/test_lookup.c %reldir%/tap.c %reldir%/tap.h \
    %reldir%/unit/t_cycle.c %reldir%/unit/t_cycle.h
%canon_reldir%_unit_test_lookup_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_lookup_LDADD = $(GN_UNIT_LDADD)
# the SPECweb99 logic of modules/specweb99, with no include path but its
# own directory: it must build without the server's (or ISAPI's) headers
%canon_reldir%_unit_test_specweb99_logic_SOURCES = \
    %reldir%/unit/test_specweb99_logic.c %reldir%/tap.c %reldir%/tap.h \
    modules/specweb99/specweb99_logic.c modules/specweb99/specweb99_logic.h
%canon_reldir%_unit_test_specweb99_logic_CPPFLAGS = \
    -I$(top_srcdir)/modules/specweb99
%canon_reldir%_unit_test_specweb99_logic_CFLAGS = $(AM_CFLAGS)
%canon_reldir%_unit_test_conn_SOURCES = %reldir%/unit/test_conn.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_conn_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_conn_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_rewrite_SOURCES = %reldir%/unit/test_rewrite.c %reldir%/tap.c %reldir%/tap.h \
    %reldir%/unit/t_cycle.c %reldir%/unit/t_cycle.h
%canon_reldir%_unit_test_rewrite_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_rewrite_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_auth_basic_SOURCES = %reldir%/unit/test_auth_basic.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_auth_basic_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_auth_basic_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_binlog_SOURCES = %reldir%/unit/test_binlog.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_binlog_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_binlog_LDADD = $(GN_UNIT_LDADD)
%canon_reldir%_unit_test_module_SOURCES = %reldir%/unit/test_module.c %reldir%/tap.c %reldir%/tap.h
%canon_reldir%_unit_test_module_CFLAGS = $(GN_UNIT_CFLAGS)
%canon_reldir%_unit_test_module_LDADD = $(GN_UNIT_LDADD)

GN_INTEG_TESTS = \
    %reldir%/integ/00-smoke.t \
    %reldir%/integ/05-configtest.t \
    %reldir%/integ/10-http-basic.t \
    %reldir%/integ/11-http-malformed.t \
    %reldir%/integ/12-http-pipeline.t \
    %reldir%/integ/13-http-static.t \
    %reldir%/integ/14-http-paths.t \
    %reldir%/integ/15-http-limits.t \
    %reldir%/integ/16-listen-deferred.t \
    %reldir%/integ/17-private-files.t \
    %reldir%/integ/18-server-tokens.t \
    %reldir%/integ/19-http-lingering.t \
    %reldir%/integ/20-tls-basic.t \
    %reldir%/integ/21-tls-sni.t \
    %reldir%/integ/22-tls-session-cache.t \
    %reldir%/integ/23-tls-tickets.t \
    %reldir%/integ/24-tls-cache-lock.t \
    %reldir%/integ/25-tls-stapling.t \
    %reldir%/integ/26-tls-testssl.t \
    %reldir%/integ/27-tls-transport.t \
    %reldir%/integ/28-tls-key-share.t \
    %reldir%/integ/29-tls-records.t \
    %reldir%/integ/30-rewrite.t \
    %reldir%/integ/31-access.t \
    %reldir%/integ/32-access-log.t \
    %reldir%/integ/35-access-log-every.t \
    %reldir%/integ/33-binary-log.t \
    %reldir%/integ/34-error-log.t \
    %reldir%/integ/40-module-load.t \
    %reldir%/integ/41-module-content.t \
    %reldir%/integ/42-cgi.t \
    %reldir%/integ/43-status.t \
    %reldir%/integ/44-module-outoftree.t \
    %reldir%/integ/45-cgi-slots.t \
    %reldir%/integ/46-module-drained.t \
    %reldir%/integ/50-prefork.t \
    %reldir%/integ/51-reload.t \
    %reldir%/integ/52-shutdown.t \
    %reldir%/integ/53-reopen.t \
    %reldir%/integ/54-reload-load.t \
    %reldir%/integ/55-privileges.t \
    %reldir%/integ/56-respawn-backoff.t \
    %reldir%/integ/57-least-privilege.t \
    %reldir%/integ/58-faults-load.t \
    %reldir%/integ/59-faults-fd.t \
    %reldir%/integ/60-gannetctl.t \
    %reldir%/integ/70-specweb99.t \
    %reldir%/integ/71-specweb99-gen.t \
    %reldir%/integ/72-specweb99-load.t \
    %reldir%/integ/80-issue-3.t \
    %reldir%/integ/80-issue-18.t \
    %reldir%/integ/80-issue-19.t \
    %reldir%/integ/81-install-layout.t \
    %reldir%/integ/82-status-totals.t \
    %reldir%/integ/83-rlimit-nofile.t \
    %reldir%/integ/84-log-not-found.t \
    %reldir%/integ/85-layering.t \
    %reldir%/integ/86-socket-activation.t \
    %reldir%/integ/87-binary-upgrade.t \
    %reldir%/integ/88-sd-notify.t \
    %reldir%/integ/90-http2.t \
    %reldir%/integ/91-http2-limits.t \
    %reldir%/integ/92-http2-browser.t \
    %reldir%/integ/93-http2-reload.t \
    %reldir%/integ/94-http2-status.t \
    %reldir%/integ/95-h2spec.t \
    %reldir%/integ/96-tls-memcached.t \
    %reldir%/integ/97-tls-ticket-keys.t \
    %reldir%/integ/98-tls-key-status.t \
    %reldir%/integ/99-real-ip.t \
    %reldir%/integ/100-proxy.t \
    %reldir%/integ/101-fastcgi.t \
    %reldir%/integ/102-fastcgi-php.t \
    %reldir%/integ/103-try-files.t \
    %reldir%/integ/104-add-header.t \
    %reldir%/integ/105-autoindex.t \
    %reldir%/integ/106-limit.t \
    %reldir%/integ/107-module-helpers.t \
    %reldir%/integ/108-tls-client-cert.t \
    %reldir%/integ/109-gzip-static.t \
    %reldir%/integ/110-gzip.t \
    %reldir%/integ/111-isapi.t \
    %reldir%/integ/112-isapi-specweb99.t \
    %reldir%/integ/113-isapi-specweb99-load.t \
    %reldir%/integ/114-batch-writes.t

# Test certificates (a CA, ECDSA and RSA server certificates), made at
# `make check` time: no private key is committed.
check_DATA += %reldir%/certs/stamp
%reldir%/certs/stamp: $(top_srcdir)/t/mkcerts.sh
	@rm -f $@
	$(AM_V_GEN)$(SHELL) $(top_srcdir)/t/mkcerts.sh $(abs_top_builddir)/%reldir%/certs >/dev/null
clean-local: clean-local-certs
clean-local-certs:
	-rm -rf $(abs_top_builddir)/%reldir%/certs
.PHONY: clean-local-certs

# The ABI gate: a reference module built against the released 1.0
# headers and against api/ must differ only by appends (abidiff).
GN_ABI_TESTS = %reldir%/abi-check.sh

TESTS += $(GN_UNIT_TESTS) $(GN_INTEG_TESTS) $(GN_ABI_TESTS)
EXTRA_DIST += $(GN_INTEG_TESTS) %reldir%/lib/GnTest.pm %reldir%/lib/GnTLS.pm \
    %reldir%/lib/GnLoad.pm %reldir%/lib/GnMemc.pm %reldir%/lib/GnBackend.pm \
    %reldir%/lib/backend.py %reldir%/lib/fcgi_responder.py \
    %reldir%/lib/loadcheck.py \
    %reldir%/lib/tlsraw.py %reldir%/lib/h2raw.py \
    %reldir%/README.md %reldir%/valgrind.supp \
    %reldir%/mkcerts.sh %reldir%/include-graph.pl

# Test modules: built for the tests, never installed (-rpath /nowhere).
GN_TMOD_LDFLAGS = -module -avoid-version -no-undefined -rpath /nowhere \
    -export-symbols-regex '^gn_module_'
GN_TMODS = info abi2 abi_v2sym newminor badmagic small nosym crash old \
    needs0 helpers
check_LTLIBRARIES += \
    %reldir%/modules/mod_t_info.la %reldir%/modules/mod_t_abi2.la \
    %reldir%/modules/mod_t_abi_v2sym.la %reldir%/modules/mod_t_newminor.la \
    %reldir%/modules/mod_t_badmagic.la %reldir%/modules/mod_t_small.la \
    %reldir%/modules/mod_t_nosym.la %reldir%/modules/mod_t_crash.la \
    %reldir%/modules/mod_t_old.la %reldir%/modules/mod_t_needs0.la \
    %reldir%/modules/mod_t_helpers.la \
    %reldir%/isapi/isapi_t_refuse.la %reldir%/isapi/isapi_t_misc.la

%canon_reldir%_isapi_isapi_t_refuse_la_SOURCES = %reldir%/isapi/isapi_t_refuse.c
%canon_reldir%_isapi_isapi_t_refuse_la_CPPFLAGS = $(GN_ISAPI_CPPFLAGS)
%canon_reldir%_isapi_isapi_t_refuse_la_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_isapi_isapi_t_refuse_la_LDFLAGS = $(GN_ISAPI_LDFLAGS)
%canon_reldir%_isapi_isapi_t_misc_la_SOURCES = %reldir%/isapi/isapi_t_misc.c
%canon_reldir%_isapi_isapi_t_misc_la_CPPFLAGS = $(GN_ISAPI_CPPFLAGS)
%canon_reldir%_isapi_isapi_t_misc_la_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_isapi_isapi_t_misc_la_LDFLAGS = $(GN_ISAPI_LDFLAGS)

%canon_reldir%_modules_mod_t_info_la_SOURCES = %reldir%/modules/mod_t_info.c
%canon_reldir%_modules_mod_t_info_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_info_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_info_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_abi2_la_SOURCES = %reldir%/modules/mod_t_abi2.c
%canon_reldir%_modules_mod_t_abi2_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_abi2_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_abi2_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_abi_v2sym_la_SOURCES = %reldir%/modules/mod_t_abi_v2sym.c
%canon_reldir%_modules_mod_t_abi_v2sym_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_abi_v2sym_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_abi_v2sym_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_newminor_la_SOURCES = %reldir%/modules/mod_t_newminor.c
%canon_reldir%_modules_mod_t_newminor_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_newminor_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_newminor_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_badmagic_la_SOURCES = %reldir%/modules/mod_t_badmagic.c
%canon_reldir%_modules_mod_t_badmagic_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_badmagic_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_badmagic_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_small_la_SOURCES = %reldir%/modules/mod_t_small.c
%canon_reldir%_modules_mod_t_small_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_small_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_small_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_nosym_la_SOURCES = %reldir%/modules/mod_t_nosym.c
%canon_reldir%_modules_mod_t_nosym_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_nosym_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_nosym_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_crash_la_SOURCES = %reldir%/modules/mod_t_crash.c
%canon_reldir%_modules_mod_t_crash_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_crash_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_crash_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_needs0_la_SOURCES = %reldir%/modules/mod_t_needs0.c
%canon_reldir%_modules_mod_t_needs0_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_needs0_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_needs0_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
%canon_reldir%_modules_mod_t_helpers_la_SOURCES = %reldir%/modules/mod_t_helpers.c
%canon_reldir%_modules_mod_t_helpers_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_modules_mod_t_helpers_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_helpers_la_LDFLAGS = $(GN_TMOD_LDFLAGS)
# built against the 1.0 headers as released: an old module on this server
%canon_reldir%_modules_mod_t_old_la_SOURCES = %reldir%/modules/mod_t_old.c
%canon_reldir%_modules_mod_t_old_la_CPPFLAGS = -I$(top_srcdir)/%reldir%/modules/abi-1.0
%canon_reldir%_modules_mod_t_old_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_modules_mod_t_old_la_LDFLAGS = $(GN_TMOD_LDFLAGS)

EXTRA_DIST += %reldir%/cgi %reldir%/modules/abi-1.0 $(GN_ABI_TESTS) \
    %reldir%/modules/mod_t_abiref.c

# `make check-valgrind`: the unit tests and the integration tests with
# every process under valgrind memcheck (see t/README.md).  A unit test
# fails on a memcheck error or a definite leak through valgrind's exit
# code; GnTest.pm checks the log of every gannet process.  Needs a build
# without --enable-asan (valgrind cannot run ASan binaries); -O0/-O1 -g
# (--enable-debug) gives the most useful reports.  --vgdb=no: no vgdb
# files in /tmp, which a killed process would leave behind for the next
# process with its pid (see _valgrind in t/lib/GnTest.pm).
GN_VALGRIND_FLAGS = --tool=memcheck --trace-children=yes --vgdb=no \
    --trace-children-skip='/bin/*,/usr/*,/sbin/*' --error-exitcode=97 \
    --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite --num-callers=30 \
    --suppressions=$(abs_top_srcdir)/t/valgrind.supp
check-valgrind:
	@if test "x$(enable_asan)" = xyes; then \
	    echo "check-valgrind: this build has --enable-asan;" \
	         "valgrind needs a build without it" >&2; exit 1; \
	fi
	@if test -z "$(VALGRIND)"; then \
	    echo "check-valgrind: valgrind not found at configure time" \
	         "(Debian: apt-get install valgrind)" >&2; exit 1; \
	fi
	$(MAKE) $(AM_MAKEFLAGS) check \
	    TESTS='$(GN_UNIT_TESTS) $(GN_INTEG_TESTS)' \
	    LOG_COMPILER='$(VALGRIND) $(GN_VALGRIND_FLAGS)' \
	    TEST_GN_VALGRIND='$(VALGRIND)'
.PHONY: check-valgrind
