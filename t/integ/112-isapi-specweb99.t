#!/usr/bin/perl

# The SPECweb99 dynamic operations as an ISAPI extension (issue 24, item
# 6: modules/specweb99/isapi_specweb99.c under mod_isapi): the same
# byte-for-byte checks as t/integ/70-specweb99.t -- every operation, the
# post log under concurrent POSTs over two children, Fetch, Reset (its
# generators run on the extension's own thread, HSE_STATUS_PENDING and
# DONE_WITH_SESSION) -- run against the extension instead of
# mod_specweb99.

use strict;
use warnings;

use File::Basename qw(dirname);

$ENV{GN_SPECWEB99_ISAPI} = 1;

my $file = dirname(__FILE__) . '/70-specweb99.t';

do $file;
die "$file: $@" if $@;
