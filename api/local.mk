# Public module ABI headers, installed as <gannet/...>.
nobase_include_HEADERS += %reldir%/gannet/types.h
