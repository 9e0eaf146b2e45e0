#!/usr/bin/perl
#
# t/include-graph.pl [DIR] - the include cycles of core/ (issue 19).
#
# Each unit is NAME.c + NAME.h; an edge A -> B when A.c or A.h includes
# "B.h".  Prints every strongly connected component of more than one unit
# (an include cycle) and exits 1 if there is one, 0 if the graph is a DAG.
#
# t/integ/85-layering.t runs it: the graph is a DAG since issue 19, and
# stays one.
use strict; use warnings;
my $dir = shift // 'core';
my (%edges, %units);
opendir(my $dh, $dir) or die "$dir: $!";
for my $f (grep { /\.[ch]$/ } readdir $dh) {
    (my $u = $f) =~ s/\.[ch]$//;
    $units{$u} = 1;
    open(my $fh, '<', "$dir/$f") or die;
    while (<$fh>) {
        next unless /^\s*#\s*include\s+"([a-z_0-9]+)\.h"/;
        next if $1 eq $u || $1 eq 'gn_config';
        $edges{$u}{$1} = 1;
    }
}
# Tarjan
my ($idx, @stack, %on, %index, %low, @sccs) = (0);
sub sc {
    my ($v) = @_;
    $index{$v} = $low{$v} = $idx++; push @stack, $v; $on{$v} = 1;
    for my $w (sort keys %{$edges{$v} // {}}) {
        next unless $units{$w};
        if (!defined $index{$w}) { sc($w); $low{$v} = $low{$w} if $low{$w} < $low{$v}; }
        elsif ($on{$w}) { $low{$v} = $index{$w} if $index{$w} < $low{$v}; }
    }
    if ($low{$v} == $index{$v}) {
        my @c; my $w;
        do { $w = pop @stack; $on{$w} = 0; push @c, $w; } while ($w ne $v);
        push @sccs, [sort @c] if @c > 1;
    }
}
sc($_) for grep { !defined $index{$_} } sort keys %units;
for my $c (@sccs) { printf "cycle of %d units: %s\n", scalar @$c, "@$c"; }
exit(@sccs ? 1 : 0);
