#!/usr/bin/perl

# The SPECweb99-style load generator's full mix, validated, against the
# ISAPI variant of the dynamic operations (issue 24, item 6:
# modules/specweb99/isapi_specweb99.c under mod_isapi): the checks of
# t/integ/72-specweb99-load.t with the extension instead of
# mod_specweb99.

use strict;
use warnings;

use File::Basename qw(dirname);

$ENV{GN_SPECWEB99_ISAPI} = 1;

my $file = dirname(__FILE__) . '/72-specweb99-load.t';

do $file;
die "$file: $@" if $@;
