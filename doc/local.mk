# Manual pages (roff, -man macros), distributed as they are.
dist_man_MANS += \
    %reldir%/gannet.8 \
    %reldir%/gannetctl.8 \
    %reldir%/gannet-logcat.1 \
    %reldir%/gannet.conf.5

dist_doc_DATA += %reldir%/binary-log.md %reldir%/internals.md

# The module writer's guide, the module template it tells you to copy
# (mod_example.c), the Makefile for building one out of the tree, the
# CGI module's README (README.cgi) and the SPECweb99
# notes: installed with their load_module lines naming the real module
# directory (the sources show that of the default prefix).
gn_doc_files = %reldir%/modules.md %reldir%/specweb99.md \
    %reldir%/isapi.md %reldir%/module-Makefile.example \
    modules/example/mod_example.c modules/cgi/README
EXTRA_DIST += %reldir%/modules.md %reldir%/specweb99.md \
    %reldir%/isapi.md %reldir%/module-Makefile.example

install-data-local: gn-doc-install
uninstall-local: gn-doc-uninstall

gn-doc-install:
	@$(NORMAL_INSTALL)
	$(MKDIR_P) '$(DESTDIR)$(docdir)'
	@for f in $(gn_doc_files); do \
	    case $$f in */README) t=README.`basename \`dirname $$f\``;; \
	                *) t=`basename $$f`;; esac; \
	    echo " $(SED) ... $$f >'$(DESTDIR)$(docdir)/'$$t"; \
	    $(SED) -e 's|/usr/local/lib/gannet/|$(pkglibdir)/|g' \
	        $(srcdir)/$$f >'$(DESTDIR)$(docdir)/'$$t.tmp && \
	    chmod 644 '$(DESTDIR)$(docdir)/'$$t.tmp && \
	    mv '$(DESTDIR)$(docdir)/'$$t.tmp '$(DESTDIR)$(docdir)/'$$t || exit 1; \
	done

gn-doc-uninstall:
	@$(NORMAL_UNINSTALL)
	@for t in modules.md specweb99.md isapi.md module-Makefile.example \
	          mod_example.c README.cgi; do \
	    echo " rm -f '$(DESTDIR)$(docdir)/'$$t"; \
	    rm -f '$(DESTDIR)$(docdir)/'$$t; \
	done

.PHONY: gn-doc-install gn-doc-uninstall
