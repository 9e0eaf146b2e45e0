# Modules built with the tree. They compile against api/ only (no core/
# header is on their include path), export exactly one symbol, and are
# installed into $(pkglibdir) as mod_NAME.so -- by the rule below, not by
# automake's pkglib_LTLIBRARIES: libtool's own install puts a .la next to
# each module (of no use to dlopen) and prints its lecture on
# LD_LIBRARY_PATH and `libtool --finish`, which is about libraries that
# programs link against, not modules.
#
# mod_specweb99 is built for the tests and the benchmark but installed
# only by `make install-specweb99` (with gannet-specweb99): it is the
# benchmark's, not what a server needs.

GN_MOD_CPPFLAGS = -I$(top_srcdir)/api
GN_MOD_CFLAGS = $(GN_CFLAGS) -fvisibility=hidden
GN_MOD_LDFLAGS = -module -avoid-version -no-undefined -rpath $(pkglibdir) \
    -export-symbols-regex '^gn_module_'

GN_MODULES = \
    %reldir%/mod_example.la \
    %reldir%/mod_status.la \
    %reldir%/mod_cgi.la \
    %reldir%/mod_isapi.la
GN_MODULES_SPECWEB99 = %reldir%/mod_specweb99.la
noinst_LTLIBRARIES += $(GN_MODULES) $(GN_MODULES_SPECWEB99)

install-exec-local: gn-modules-install
uninstall-local: gn-modules-uninstall

# gn_mod_install MODULE.la ...: each as DESTDIR/pkglibdir/MODULE.so. The
# shared object named by the .la (dlname, in libtool's .libs) is copied
# as it is: a module links against no library of the tree, so nothing
# needs relinking (and libtool's --no-warn does not silence the lecture).
gn_mod_install = gn_mod_install () { \
    $(MKDIR_P) '$(DESTDIR)$(pkglibdir)' || return 1; \
    for m in "$$@"; do \
        so=`$(SED) -n "s/^dlname='\\(.*\\)'$$/\\1/p" "$$m"`; \
        test -n "$$so" || { echo "$$m: no dlname" >&2; return 1; }; \
        echo " $(INSTALL) $(INSTALL_STRIP_FLAG) -m 755 `dirname $$m`/.libs/$$so '$(DESTDIR)$(pkglibdir)'"; \
        $(INSTALL) $(INSTALL_STRIP_FLAG) -m 755 "`dirname $$m`/.libs/$$so" \
            '$(DESTDIR)$(pkglibdir)' || return 1; \
    done; \
}

gn-modules-install: $(GN_MODULES)
	@$(NORMAL_INSTALL)
	@$(gn_mod_install); gn_mod_install $(GN_MODULES)

# make uninstall removes the SPECweb99 kit too, if it was installed
gn-modules-uninstall:
	@$(NORMAL_UNINSTALL)
	@for m in $(GN_MODULES) $(GN_MODULES_SPECWEB99); do \
	    f='$(DESTDIR)$(pkglibdir)/'`basename "$$m" .la`.so; \
	    echo " rm -f '$$f'"; rm -f "$$f"; \
	done

.PHONY: gn-modules-install gn-modules-uninstall

# specweb99_logic.c is the SPECweb99 logic itself, in libc and POSIX
# only, compiled into the module and into the ISAPI extension below: each
# keeps only its glue to its own API.
GN_SPECWEB99_LOGIC = %reldir%/specweb99/specweb99_logic.c \
    %reldir%/specweb99/specweb99_logic.h

%canon_reldir%_mod_specweb99_la_SOURCES = %reldir%/specweb99/mod_specweb99.c \
    $(GN_SPECWEB99_LOGIC)
%canon_reldir%_mod_specweb99_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_specweb99_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_specweb99_la_LDFLAGS = $(GN_MOD_LDFLAGS)
EXTRA_DIST += %reldir%/specweb99/specweb99.cgi

# The same dynamic operations as an ISAPI extension (mod_isapi), written
# to <windows.h>/<httpext.h> only. A noinst library like mod_specweb99,
# not a check_LTLIBRARIES sample: plain `make` builds it, and
# bench/specweb99/run.sh --dynamic isapi needs it without `make check`.
noinst_LTLIBRARIES += %reldir%/specweb99/isapi_specweb99.la
%canon_reldir%_specweb99_isapi_specweb99_la_SOURCES = \
    %reldir%/specweb99/isapi_specweb99.c $(GN_SPECWEB99_LOGIC)
%canon_reldir%_specweb99_isapi_specweb99_la_CPPFLAGS = $(GN_ISAPI_CPPFLAGS)
%canon_reldir%_specweb99_isapi_specweb99_la_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_specweb99_isapi_specweb99_la_LDFLAGS = $(GN_ISAPI_LDFLAGS)
%canon_reldir%_specweb99_isapi_specweb99_la_LIBADD = -lpthread

# The same CGI dynamic GET compiled: what bench/specweb99/run.sh runs (a
# Perl start-up per request would measure Perl, not the server). Not
# installed: a benchmark's program, like the load generator.
noinst_PROGRAMS += %reldir%/specweb99/specweb99-cgi
%canon_reldir%_specweb99_specweb99_cgi_SOURCES = \
    %reldir%/specweb99/specweb99_cgi.c
%canon_reldir%_specweb99_specweb99_cgi_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_specweb99_specweb99_cgi_LDFLAGS = $(GN_LDFLAGS) \
    $(GN_STATIC_LDFLAGS)

%canon_reldir%_mod_cgi_la_SOURCES = %reldir%/cgi/mod_cgi.c
%canon_reldir%_mod_cgi_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_cgi_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_cgi_la_LDFLAGS = $(GN_MOD_LDFLAGS)
EXTRA_DIST += %reldir%/cgi/README

%canon_reldir%_mod_isapi_la_SOURCES = %reldir%/isapi/mod_isapi.c
%canon_reldir%_mod_isapi_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_isapi_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_isapi_la_LDFLAGS = $(GN_MOD_LDFLAGS)
%canon_reldir%_mod_isapi_la_LIBADD = -ldl

# The ISAPI samples: built for the tests (make check), from sources as
# written for IIS: <windows.h> and <httpext.h> from api/gannet/isapi.
GN_ISAPI_CPPFLAGS = -I$(top_srcdir)/api/gannet/isapi
GN_ISAPI_LDFLAGS = -module -avoid-version -no-undefined -rpath /nowhere \
    -export-symbols-regex \
    '^(GetExtensionVersion|HttpExtensionProc|TerminateExtension)$$'
check_LTLIBRARIES += %reldir%/isapi/examples/hello.la \
    %reldir%/isapi/examples/formecho.la \
    %reldir%/isapi/examples/asyncwrite.la \
    %reldir%/isapi/examples/transmit.la
%canon_reldir%_isapi_examples_hello_la_SOURCES = %reldir%/isapi/examples/hello.c
%canon_reldir%_isapi_examples_hello_la_CPPFLAGS = $(GN_ISAPI_CPPFLAGS)
%canon_reldir%_isapi_examples_hello_la_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_isapi_examples_hello_la_LDFLAGS = $(GN_ISAPI_LDFLAGS)
%canon_reldir%_isapi_examples_formecho_la_SOURCES = %reldir%/isapi/examples/formecho.c
%canon_reldir%_isapi_examples_formecho_la_CPPFLAGS = $(GN_ISAPI_CPPFLAGS)
%canon_reldir%_isapi_examples_formecho_la_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_isapi_examples_formecho_la_LDFLAGS = $(GN_ISAPI_LDFLAGS)
%canon_reldir%_isapi_examples_asyncwrite_la_SOURCES = %reldir%/isapi/examples/asyncwrite.c
%canon_reldir%_isapi_examples_asyncwrite_la_CPPFLAGS = $(GN_ISAPI_CPPFLAGS)
%canon_reldir%_isapi_examples_asyncwrite_la_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_isapi_examples_asyncwrite_la_LDFLAGS = $(GN_ISAPI_LDFLAGS)
%canon_reldir%_isapi_examples_transmit_la_SOURCES = %reldir%/isapi/examples/transmit.c
%canon_reldir%_isapi_examples_transmit_la_CPPFLAGS = $(GN_ISAPI_CPPFLAGS)
%canon_reldir%_isapi_examples_transmit_la_CFLAGS = $(GN_CFLAGS)
%canon_reldir%_isapi_examples_transmit_la_LDFLAGS = $(GN_ISAPI_LDFLAGS)

%canon_reldir%_mod_example_la_SOURCES = %reldir%/example/mod_example.c
%canon_reldir%_mod_example_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_example_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_example_la_LDFLAGS = $(GN_MOD_LDFLAGS)

%canon_reldir%_mod_status_la_SOURCES = %reldir%/status/mod_status.c
%canon_reldir%_mod_status_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_status_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_status_la_LDFLAGS = $(GN_MOD_LDFLAGS)
