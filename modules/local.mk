# Modules built with the tree. They compile against api/ only (no core/
# header is on their include path), export exactly one symbol, and are
# installed into $(pkglibdir).

GN_MOD_CPPFLAGS = -I$(top_srcdir)/api
GN_MOD_CFLAGS = $(GN_CFLAGS) -fvisibility=hidden
GN_MOD_LDFLAGS = -module -avoid-version -no-undefined \
    -export-symbols-regex '^gn_module_'

pkglib_LTLIBRARIES = \
    %reldir%/mod_example.la \
    %reldir%/mod_status.la \
    %reldir%/mod_cgi.la \
    %reldir%/mod_specweb99.la

%canon_reldir%_mod_specweb99_la_SOURCES = %reldir%/specweb99/mod_specweb99.c
%canon_reldir%_mod_specweb99_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_specweb99_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_specweb99_la_LDFLAGS = $(GN_MOD_LDFLAGS)
EXTRA_DIST += %reldir%/specweb99/specweb99.cgi

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

%canon_reldir%_mod_example_la_SOURCES = %reldir%/example/mod_example.c
%canon_reldir%_mod_example_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_example_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_example_la_LDFLAGS = $(GN_MOD_LDFLAGS)

%canon_reldir%_mod_status_la_SOURCES = %reldir%/status/mod_status.c
%canon_reldir%_mod_status_la_CPPFLAGS = $(GN_MOD_CPPFLAGS)
%canon_reldir%_mod_status_la_CFLAGS = $(GN_MOD_CFLAGS)
%canon_reldir%_mod_status_la_LDFLAGS = $(GN_MOD_LDFLAGS)
