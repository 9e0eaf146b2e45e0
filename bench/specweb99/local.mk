# The SPECweb99-style load generator (issue 7): built by `make` for
# bench/specweb99/run.sh and t/integ/72-specweb99-load.t, not installed.
# It includes no core/ header: a client, not part of the server.

noinst_PROGRAMS += %reldir%/gannet-specweb99-load
%canon_reldir%_gannet_specweb99_load_SOURCES = %reldir%/loadgen.c
%canon_reldir%_gannet_specweb99_load_CFLAGS = $(AM_CFLAGS) $(GNUTLS_CFLAGS)
%canon_reldir%_gannet_specweb99_load_LDADD = $(GNUTLS_LIBS) -lm
EXTRA_DIST += %reldir%/run.sh %reldir%/kinds.sh %reldir%/README.md
