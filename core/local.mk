# The server: everything but main.c is a convenience library, linked into
# both gannet and the unit tests.

noinst_LTLIBRARIES += %reldir%/libgncore.la

%canon_reldir%_libgncore_la_SOURCES = \
    %reldir%/gn_config.h \
    %reldir%/pool.c %reldir%/pool.h \
    %reldir%/str.c %reldir%/str.h \
    %reldir%/array.c %reldir%/array.h \
    %reldir%/log.c %reldir%/log.h \
    %reldir%/conf.c %reldir%/conf.h \
    %reldir%/cycle.c %reldir%/cycle.h \
    %reldir%/feature.h %reldir%/features.c \
    %reldir%/lookup.c %reldir%/lookup.h \
    %reldir%/shm.c %reldir%/shm.h \
    %reldir%/scoreboard.c %reldir%/scoreboard.h \
    %reldir%/process.c %reldir%/process.h \
    %reldir%/master.c %reldir%/master.h \
    %reldir%/sd_notify.c %reldir%/sd_notify.h \
    %reldir%/child.c %reldir%/child.h \
    %reldir%/caps.c %reldir%/caps.h \
    %reldir%/event.c %reldir%/event.h \
    %reldir%/sendq.c %reldir%/sendq.h \
    %reldir%/timer.c %reldir%/timer.h \
    %reldir%/listen.c %reldir%/listen.h \
    %reldir%/conn.c %reldir%/conn.h \
    %reldir%/proxy_protocol.c %reldir%/proxy_protocol.h \
    %reldir%/http_parse.c %reldir%/http_parse.h \
    %reldir%/http_request.c %reldir%/http_request.h \
    %reldir%/http_core.c %reldir%/http_core.h \
    %reldir%/http1.c %reldir%/http1.h %reldir%/http2.h \
    %reldir%/http_response.c %reldir%/http_response.h \
    %reldir%/http_headers.c %reldir%/http_headers.h \
    %reldir%/try_files.c %reldir%/try_files.h \
    %reldir%/limit.c %reldir%/limit.h \
    %reldir%/http_static.c %reldir%/http_static.h \
    %reldir%/autoindex.c %reldir%/autoindex.h \
    %reldir%/gzip.c %reldir%/gzip.h \
    %reldir%/http_file.c %reldir%/http_file.h \
    %reldir%/access_log.c %reldir%/access_log.h \
    %reldir%/binlog.c %reldir%/binlog.h \
    %reldir%/errlog.c %reldir%/errlog.h \
    %reldir%/file_cache.c %reldir%/file_cache.h \
    %reldir%/http_cond.c %reldir%/http_cond.h \
    %reldir%/tls.c %reldir%/tls.h \
    %reldir%/tls_scache.c %reldir%/tls_scache.h \
    %reldir%/chash.c %reldir%/chash.h \
    %reldir%/tls_hello.c %reldir%/tls_hello.h \
    %reldir%/tls_client.c %reldir%/tls_client.h \
    %reldir%/memc.c %reldir%/memc.h \
    %reldir%/addr.c %reldir%/addr.h \
    %reldir%/upstream.c %reldir%/upstream.h \
    %reldir%/proxy.c %reldir%/proxy.h \
    %reldir%/fastcgi.c %reldir%/fastcgi.h \
    %reldir%/module.c %reldir%/module.h \
    %reldir%/api.c %reldir%/api.h \
    %reldir%/http_module.c %reldir%/http_module.h \
    %reldir%/regex.c %reldir%/regex.h \
    %reldir%/rewrite.c %reldir%/rewrite.h \
    %reldir%/access.c %reldir%/access.h \
    %reldir%/realip.c %reldir%/realip.h \
    %reldir%/auth_basic.c %reldir%/auth_basic.h
if GN_HTTP2
%canon_reldir%_libgncore_la_SOURCES += %reldir%/http2.c
endif
%canon_reldir%_libgncore_la_CFLAGS = $(AM_CFLAGS) $(GNUTLS_CFLAGS) \
    $(PCRE2_CFLAGS) $(NGHTTP2_CFLAGS) $(ZLIB_CFLAGS) \
    $(LIBDEFLATE_CFLAGS) $(LIBURING_CFLAGS)
%canon_reldir%_libgncore_la_LIBADD = $(GNUTLS_LIBS) $(PCRE2_LIBS) \
    $(NGHTTP2_LIBS) $(ZLIB_LIBS) $(LIBDEFLATE_LIBS) $(LIBURING_LIBS)

sbin_PROGRAMS += %reldir%/gannet
%canon_reldir%_gannet_SOURCES = %reldir%/main.c
%canon_reldir%_gannet_CFLAGS = $(AM_CFLAGS) $(GNUTLS_CFLAGS) $(PCRE2_CFLAGS) \
    $(NGHTTP2_CFLAGS)
%canon_reldir%_gannet_LDADD = %reldir%/libgncore.la $(LIBS)
