#!/usr/bin/perl

# The layering of issue 19, kept: the include graph of core/ has no
# cycle (t/include-graph.pl), cycle.c includes no feature's header, and
# the transport (conn, tls and its session-cache tiers) includes no HTTP
# header.

use strict;
use warnings;

use Test::More;

my $src = $ENV{GN_SRCDIR} // '.';
my $core = "$src/core";

my $out = `$^X $src/t/include-graph.pl $core 2>&1`;
my $rc = $? >> 8;
is($out, '', 'the include graph of core/ has no cycle') or diag($out);
is($rc, 0, 'include-graph.pl says so');

sub includes {
    my ($f) = @_;
    open(my $fh, '<', "$core/$f") or die "$core/$f: $!";
    return map { /^\s*#\s*include\s+"([a-z_0-9]+)\.h"/ ? $1 : () } <$fh>;
}

# cycle.c: the cycle's own header, the registry's, and support units
my %support = map { $_ => 1 } qw(gn_config cycle feature regex conf pool
                                 array str log);
my @bad = grep { !$support{$_} } includes('cycle.c'), includes('cycle.h');
is("@bad", '', 'cycle.c and cycle.h include no feature header');

for my $f (qw(conn.c conn.h tls.c tls.h tls_hello.c tls_hello.h memc.c memc.h
               chash.c chash.h)) {
    my @http = grep { /^http/ || $_ eq 'lookup' } includes($f);
    is("@http", '', "$f includes no HTTP (or lookup) header");
}

done_testing();
