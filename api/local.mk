# Public module ABI headers, installed as <gannet/...>, the pkg-config
# file for building modules out of the tree, and gannet-module-test, the
# module writer's harness (a module and a config in a throwaway server).
gannetincludedir = $(includedir)/gannet
gannetinclude_HEADERS = \
    %reldir%/gannet/types.h \
    %reldir%/gannet/abi.h \
    %reldir%/gannet/module.h
gannetisapidir = $(includedir)/gannet/isapi
gannetisapi_HEADERS = \
    %reldir%/gannet/isapi/windows.h \
    %reldir%/gannet/isapi/httpext.h

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = %reldir%/gannet.pc
CLEANFILES += %reldir%/gannet.pc
EXTRA_DIST += %reldir%/gannet.pc.in

# make-time substitution (expanded paths; the ABI version from abi.h)
%reldir%/gannet.pc: %reldir%/gannet.pc.in $(top_srcdir)/%reldir%/gannet/abi.h Makefile
	$(AM_V_GEN)$(MKDIR_P) %reldir% && \
	major=`$(SED) -n 's/^#define GN_ABI_MAJOR *\([0-9]*\).*/\1/p' $(top_srcdir)/%reldir%/gannet/abi.h` && \
	minor=`$(SED) -n 's/^#define GN_ABI_MINOR *\([0-9]*\).*/\1/p' $(top_srcdir)/%reldir%/gannet/abi.h` && \
	$(SED) -e 's|@prefix[@]|$(prefix)|g' -e 's|@exec_prefix[@]|$(exec_prefix)|g' \
	    -e 's|@libdir[@]|$(libdir)|g' -e 's|@includedir[@]|$(includedir)|g' \
	    -e 's|@bindir[@]|$(bindir)|g' \
	    -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	    -e "s|@GN_ABI_MAJOR[@]|$$major|g" -e "s|@GN_ABI_MINOR[@]|$$minor|g" \
	    $(top_srcdir)/%reldir%/gannet.pc.in >$@.tmp && mv $@.tmp $@

bin_SCRIPTS += %reldir%/gannet-module-test
CLEANFILES += %reldir%/gannet-module-test %reldir%/gannet-module-test.tmp
EXTRA_DIST += %reldir%/gannet-module-test.in

%reldir%/gannet-module-test: %reldir%/gannet-module-test.in Makefile
	$(AM_V_GEN)$(MKDIR_P) %reldir% && rm -f $@ $@.tmp && \
	$(SED) -e 's|@sbindir[@]|$(sbindir)|g' \
	    -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	    $(srcdir)/%reldir%/gannet-module-test.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@
