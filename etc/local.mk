# What an operator edits or runs: gannetctl, gannet.conf, mime.types,
# fastcgi_params, the systemd unit and a default page.
#
# Installation paths are substituted at make time, not by config.status:
# configure's @sbindir@ is the unexpanded ${exec_prefix}/sbin, make's
# $(sbindir) is the real path (Autoconf manual, "Installation Directory
# Variables"). The [@] keeps config.status off these patterns.

gannetconfdir  = $(sysconfdir)/gannet
gannethtmldir  = $(datadir)/gannet/html
gannetlogdir   = $(localstatedir)/log/gannet
gannetrundir   = $(localstatedir)/run
# Override with `make systemdunitdir=/usr/lib/systemd/system install`.
systemdunitdir = $(prefix)/lib/systemd/system

sbin_SCRIPTS += %reldir%/gannetctl
systemdunit_DATA = %reldir%/gannet.service %reldir%/gannet.socket
logrotatedir = $(sysconfdir)/logrotate.d

CLEANFILES += \
    %reldir%/gannetctl %reldir%/gannetctl.tmp \
    %reldir%/gannet.conf %reldir%/gannet.conf.tmp \
    %reldir%/gannet.service %reldir%/gannet.service.tmp \
    %reldir%/gannet.logrotate %reldir%/gannet.logrotate.tmp

EXTRA_DIST += \
    %reldir%/gannetctl.in \
    %reldir%/gannet.conf.in \
    %reldir%/gannet.service.in \
    %reldir%/gannet.socket \
    %reldir%/gannet.logrotate.in \
    %reldir%/mime.types \
    %reldir%/fastcgi_params \
    %reldir%/html/index.html

gn_etc_edit = $(SED) \
    -e 's|@sbindir[@]|$(sbindir)|g' \
    -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
    -e 's|@localstatedir[@]|$(localstatedir)|g' \
    -e 's|@datadir[@]|$(datadir)|g' \
    -e 's|@pkglibdir[@]|$(pkglibdir)|g' \
    -e 's|@prefix[@]|$(prefix)|g' \
    -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g'

%reldir%/gannetctl: %reldir%/gannetctl.in Makefile
	$(AM_V_GEN)$(MKDIR_P) %reldir% && rm -f $@ $@.tmp && \
	$(gn_etc_edit) $(srcdir)/%reldir%/gannetctl.in >$@.tmp && \
	chmod +x $@.tmp && mv $@.tmp $@

%reldir%/gannet.conf: %reldir%/gannet.conf.in Makefile
	$(AM_V_GEN)$(MKDIR_P) %reldir% && rm -f $@ $@.tmp && \
	$(gn_etc_edit) $(srcdir)/%reldir%/gannet.conf.in >$@.tmp && \
	mv $@.tmp $@

%reldir%/gannet.service: %reldir%/gannet.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) %reldir% && rm -f $@ $@.tmp && \
	$(gn_etc_edit) $(srcdir)/%reldir%/gannet.service.in >$@.tmp && \
	mv $@.tmp $@

%reldir%/gannet.logrotate: %reldir%/gannet.logrotate.in Makefile
	$(AM_V_GEN)$(MKDIR_P) %reldir% && rm -f $@ $@.tmp && \
	$(gn_etc_edit) $(srcdir)/%reldir%/gannet.logrotate.in >$@.tmp && \
	mv $@.tmp $@

# gannet.conf, mime.types, fastcgi_params and index.html are the
# operator's once installed: `make install` puts the shipped gannet.conf,
# mime.types and fastcgi_params in $(gannetconfdir) as *.default every
# time, but the live files (and the page) only when they do not exist yet
# (as nginx does). `make uninstall` removes a live file only if it is
# still the shipped one.
install-data-hook: gn-etc-install-data
uninstall-hook: gn-etc-uninstall-data

gn-etc-install-data: %reldir%/gannet.conf %reldir%/gannet.logrotate
	@$(NORMAL_INSTALL)
	$(MKDIR_P) '$(DESTDIR)$(gannetconfdir)' '$(DESTDIR)$(gannethtmldir)' \
	    '$(DESTDIR)$(gannetlogdir)' '$(DESTDIR)$(gannetrundir)' \
	    '$(DESTDIR)$(logrotatedir)'
	$(INSTALL_DATA) %reldir%/gannet.logrotate '$(DESTDIR)$(logrotatedir)/gannet'
	$(INSTALL_DATA) %reldir%/gannet.conf \
	    '$(DESTDIR)$(gannetconfdir)/gannet.conf.default'
	$(INSTALL_DATA) $(srcdir)/%reldir%/mime.types \
	    '$(DESTDIR)$(gannetconfdir)/mime.types.default'
	$(INSTALL_DATA) $(srcdir)/%reldir%/fastcgi_params \
	    '$(DESTDIR)$(gannetconfdir)/fastcgi_params.default'
	@gn_new () { \
	    if test -f "$$2"; then \
	        echo " $$2 exists, not replaced"; \
	    else \
	        echo " $(INSTALL_DATA) $$1 '$$2'"; \
	        $(INSTALL_DATA) "$$1" "$$2" || exit 1; \
	    fi; \
	}; \
	gn_new %reldir%/gannet.conf \
	    '$(DESTDIR)$(gannetconfdir)/gannet.conf' && \
	gn_new $(srcdir)/%reldir%/mime.types \
	    '$(DESTDIR)$(gannetconfdir)/mime.types' && \
	gn_new $(srcdir)/%reldir%/fastcgi_params \
	    '$(DESTDIR)$(gannetconfdir)/fastcgi_params' && \
	gn_new $(srcdir)/%reldir%/html/index.html \
	    '$(DESTDIR)$(gannethtmldir)/index.html'

gn-etc-uninstall-data:
	@$(NORMAL_UNINSTALL)
	@gn_old () { \
	    if test -f "$$2" && cmp -s "$$1" "$$2"; then \
	        echo " rm -f '$$2'"; rm -f "$$2"; \
	    elif test -f "$$2"; then \
	        echo " $$2 was changed, kept"; \
	    fi; \
	}; \
	d='$(DESTDIR)$(gannetconfdir)'; \
	gn_old "$$d/gannet.conf.default" "$$d/gannet.conf"; \
	gn_old "$$d/mime.types.default" "$$d/mime.types"; \
	gn_old "$$d/fastcgi_params.default" "$$d/fastcgi_params"; \
	gn_old $(srcdir)/%reldir%/html/index.html \
	    '$(DESTDIR)$(gannethtmldir)/index.html'; \
	echo " rm -f '$$d/gannet.conf.default' '$$d/mime.types.default'" \
	    "'$$d/fastcgi_params.default'"; \
	rm -f "$$d/gannet.conf.default" "$$d/mime.types.default" \
	    "$$d/fastcgi_params.default"; \
	echo " rm -f '$(DESTDIR)$(logrotatedir)/gannet'"; \
	rm -f '$(DESTDIR)$(logrotatedir)/gannet'; \
	for d in '$(DESTDIR)$(gannetconfdir)' '$(DESTDIR)$(gannethtmldir)' \
	    '$(DESTDIR)$(datadir)/gannet' '$(DESTDIR)$(gannetlogdir)'; do \
	    rmdir "$$d" 2>/dev/null || :; \
	done

.PHONY: gn-etc-install-data gn-etc-uninstall-data
