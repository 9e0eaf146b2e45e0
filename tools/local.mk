# gannet-logcat: binary access logs to text. Shares only the pure record
# code (core/binlog.c) with the server.

bin_PROGRAMS += %reldir%/gannet-logcat
%canon_reldir%_gannet_logcat_SOURCES = %reldir%/logcat.c \
    core/binlog.c core/binlog.h

# gannet-specweb99: the SPECweb99 file set and data files (issue 7).
# specweb99_data.c is pure and shared with the load generator.

bin_PROGRAMS += %reldir%/gannet-specweb99
%canon_reldir%_gannet_specweb99_SOURCES = %reldir%/specweb99.c \
    %reldir%/specweb99_data.c %reldir%/specweb99_data.h
