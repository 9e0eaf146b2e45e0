# gannet-logcat: binary access logs to text. Shares only the pure record
# code (core/binlog.c) with the server.

bin_PROGRAMS += %reldir%/gannet-logcat
%canon_reldir%_gannet_logcat_SOURCES = %reldir%/logcat.c \
    core/binlog.c core/binlog.h
