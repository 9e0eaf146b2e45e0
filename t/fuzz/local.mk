# libFuzzer harnesses (issue 8). `make fuzz` builds %reldir%/fuzz_<name>
# with clang, compiling the core sources each harness needs directly into
# it (libgncore.la is built by $(CC) with other flags); %reldir%/run.sh
# builds them and runs each on a copy of its seed corpus. Not part of
# `make all` or `make check`: clang is needed only here.

FUZZ_CC = clang
# (AM_CPPFLAGS: the core's compiled-in paths, -DGN_PREFIX and the rest)
FUZZ_CFLAGS = -fsanitize=fuzzer,address,undefined -g -O1 \
    $(AM_CPPFLAGS) $(GNUTLS_CFLAGS) $(PCRE2_CFLAGS) $(NGHTTP2_CFLAGS) \
    $(ZLIB_CFLAGS) $(LIBDEFLATE_CFLAGS) $(LIBURING_CFLAGS)
FUZZ_LIBS = $(GNUTLS_LIBS) $(PCRE2_LIBS) $(NGHTTP2_LIBS) $(ZLIB_LIBS) \
    $(LIBDEFLATE_LIBS) $(LIBURING_LIBS) $(LIBS) -lpthread

FUZZ_PROGS = \
    %reldir%/fuzz_http_head \
    %reldir%/fuzz_http2_head \
    %reldir%/fuzz_http_response \
    %reldir%/fuzz_fastcgi \
    %reldir%/fuzz_chunked \
    %reldir%/fuzz_path \
    %reldir%/fuzz_conf \
    %reldir%/fuzz_htpasswd \
    %reldir%/fuzz_binlog \
    %reldir%/fuzz_scache \
    %reldir%/fuzz_tls_hello \
    %reldir%/fuzz_proxy_protocol \
    %reldir%/fuzz_regex

FUZZ_HDRS = $(wildcard $(top_srcdir)/core/*.h $(top_srcdir)/api/gannet/*.h) \
    $(top_srcdir)/%reldir%/fz.h \
    $(top_builddir)/gn_auto_config.h
FUZZ_HTTP_SRCS = $(top_srcdir)/core/http_parse.c $(top_srcdir)/core/str.c \
    $(top_srcdir)/core/pool.c
FUZZ_CONF_SRCS = $(top_srcdir)/core/conf.c $(top_srcdir)/core/str.c \
    $(top_srcdir)/core/pool.c $(top_srcdir)/core/array.c
FUZZ_REGEX_SRCS = $(top_srcdir)/core/regex.c $(top_srcdir)/core/str.c \
    $(top_srcdir)/core/pool.c
# auth_basic.c also holds the per-request check and the 401, which pull in
# the request code: that harness links the whole core (minus main.c)
FUZZ_CORE_SRCS = \
    $(addprefix $(top_srcdir)/,$(filter %.c,$(core_libgncore_la_SOURCES)))

fuzz: $(FUZZ_PROGS)

%reldir%/fuzz_http_head: $(top_srcdir)/%reldir%/fuzz_http_head.c \
    $(FUZZ_HTTP_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_http_head.c $(FUZZ_HTTP_SRCS)

%reldir%/fuzz_http2_head: $(top_srcdir)/%reldir%/fuzz_http2_head.c \
    $(FUZZ_HTTP_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_http2_head.c $(FUZZ_HTTP_SRCS)

%reldir%/fuzz_http_response: $(top_srcdir)/%reldir%/fuzz_http_response.c \
    $(FUZZ_HTTP_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_http_response.c $(FUZZ_HTTP_SRCS)

%reldir%/fuzz_fastcgi: $(top_srcdir)/%reldir%/fuzz_fastcgi.c \
    $(FUZZ_HTTP_SRCS) $(top_srcdir)/core/fastcgi.c $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_fastcgi.c $(FUZZ_HTTP_SRCS) \
	    $(top_srcdir)/core/fastcgi.c

%reldir%/fuzz_chunked: $(top_srcdir)/%reldir%/fuzz_chunked.c \
    $(FUZZ_HTTP_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_chunked.c $(FUZZ_HTTP_SRCS)

%reldir%/fuzz_path: $(top_srcdir)/%reldir%/fuzz_path.c \
    $(FUZZ_HTTP_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_path.c $(FUZZ_HTTP_SRCS)

%reldir%/fuzz_conf: $(top_srcdir)/%reldir%/fuzz_conf.c \
    $(FUZZ_CONF_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_conf.c $(FUZZ_CONF_SRCS)

%reldir%/fuzz_htpasswd: $(top_srcdir)/%reldir%/fuzz_htpasswd.c \
    $(FUZZ_CORE_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_htpasswd.c $(FUZZ_CORE_SRCS) \
	    $(FUZZ_LIBS)

%reldir%/fuzz_binlog: $(top_srcdir)/%reldir%/fuzz_binlog.c \
    $(top_srcdir)/core/binlog.c $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_binlog.c $(top_srcdir)/core/binlog.c

%reldir%/fuzz_scache: $(top_srcdir)/%reldir%/fuzz_scache.c \
    $(top_srcdir)/core/tls_scache.c $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_scache.c \
	    $(top_srcdir)/core/tls_scache.c -lpthread

%reldir%/fuzz_regex: $(top_srcdir)/%reldir%/fuzz_regex.c \
    $(FUZZ_REGEX_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_regex.c $(FUZZ_REGEX_SRCS) \
	    $(PCRE2_LIBS)

%reldir%/fuzz_tls_hello: $(top_srcdir)/%reldir%/fuzz_tls_hello.c \
    $(top_srcdir)/core/tls_hello.c $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_tls_hello.c \
	    $(top_srcdir)/core/tls_hello.c

%reldir%/fuzz_proxy_protocol: $(top_srcdir)/%reldir%/fuzz_proxy_protocol.c \
    $(top_srcdir)/core/proxy_protocol.c $(FUZZ_HDRS)
	@$(MKDIR_P) %reldir%
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(top_srcdir)/%reldir%/fuzz_proxy_protocol.c \
	    $(top_srcdir)/core/proxy_protocol.c

.PHONY: fuzz

CLEANFILES += $(FUZZ_PROGS)
EXTRA_DIST += %reldir%/run.sh %reldir%/corpus %reldir%/fz.h \
    %reldir%/fuzz_http_head.c %reldir%/fuzz_http2_head.c \
    %reldir%/fuzz_http_response.c %reldir%/fuzz_fastcgi.c \
    %reldir%/fuzz_chunked.c %reldir%/fuzz_path.c \
    %reldir%/fuzz_conf.c %reldir%/fuzz_htpasswd.c %reldir%/fuzz_binlog.c \
    %reldir%/fuzz_scache.c %reldir%/fuzz_regex.c %reldir%/fuzz_tls_hello.c \
    %reldir%/fuzz_proxy_protocol.c
