# gannet-logcat: binary access logs to text. Shares only the pure record
# code (core/binlog.c) with the server.

bin_PROGRAMS += %reldir%/gannet-logcat
%canon_reldir%_gannet_logcat_SOURCES = %reldir%/logcat.c \
    core/binlog.c core/binlog.h

# gannet-specweb99: the SPECweb99 file set and data files (issue 7).
# specweb99_data.c is pure and shared with the load generator. Built by
# `make`, installed (with mod_specweb99.so) only by `make
# install-specweb99`: the benchmark's, not what a server needs.

noinst_PROGRAMS += %reldir%/gannet-specweb99
%canon_reldir%_gannet_specweb99_SOURCES = %reldir%/specweb99.c \
    %reldir%/specweb99_data.c %reldir%/specweb99_data.h

install-specweb99: %reldir%/gannet-specweb99 $(GN_MODULES_SPECWEB99)
	@$(NORMAL_INSTALL)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(LIBTOOL) $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) --mode=install \
	    $(INSTALL_PROGRAM) %reldir%/gannet-specweb99 '$(DESTDIR)$(bindir)'
	@$(gn_mod_install); gn_mod_install $(GN_MODULES_SPECWEB99)

uninstall-local: gn-specweb99-uninstall
gn-specweb99-uninstall:
	@$(NORMAL_UNINSTALL)
	rm -f '$(DESTDIR)$(bindir)/gannet-specweb99'

.PHONY: install-specweb99 gn-specweb99-uninstall
