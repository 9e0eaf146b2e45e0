# Public module ABI headers, installed as <gannet/...>.
gannetincludedir = $(includedir)/gannet
gannetinclude_HEADERS = %reldir%/gannet/types.h
