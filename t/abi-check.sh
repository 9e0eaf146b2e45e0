#!/bin/sh
#
# t/abi-check.sh - the module ABI gate (doc/modules.md section 8).
#
# Builds the reference module t/modules/mod_t_abiref.c with -g twice,
# against the previous release's headers (t/modules/abi-1.0, a copy of
# api/gannet/*.h as released) and against the current api/, dumps both
# with abidw and compares them with abidiff. Identical: pass. Otherwise
# only a pure append passes:
#
#   - members inserted at the end of gn_api_t or gn_module_t (the tables
#     whose users check size / GN_API_HAS()) or of gn_child_stats_t,
#     gn_server_stats_t or gn_proto_stats_t (size-prefixed), the struct
#     growing: every inserted member's offset is at or past the old size;
#   - every other line of the report is one of the structural lines that
#     lead to such an insertion (through pointers and parameters).
#
# Anything else fails: a deletion, an insertion into the middle or into
# padding ("type size hasn't changed" with an insertion), a changed offset
# or type, a rename, an append to any other struct (gn_directive_t and
# gn_str_t are array elements and values: their size is their ABI).
#
# The constants are compared too (cpp -dM of <gannet/module.h>): every
# GN_* macro of the old headers must still exist with the same definition
# (GN_ABI_MINOR excepted). An accepted append or a new GN_* macro requires
# GN_ABI_MINOR to be bumped, as the rules in abi.h say.
#
# Usage: t/abi-check.sh [OLD_INCLUDE_DIR [NEW_INCLUDE_DIR]]
# Output: TAP (the reasons as # lines). Exit: 0 pass, 1 fail, 77 skip
# (abidw/abidiff not installed: Debian's abigail-tools), 99 error.
# Environment: CC (default cc), GN_SRCDIR (default: this script's ..),
# ABI_CHECK_KEEP=1 keeps the temporary directory.

srcdir=${GN_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
old_inc=${1:-$srcdir/t/modules/abi-1.0}
new_inc=${2:-$srcdir/api}
ref=$srcdir/t/modules/mod_t_abiref.c
cc=${CC:-cc}

skip()
{
    echo "1..0 # SKIP $*"
    exit 77
}

hard_error()
{
    echo "Bail out! abi-check: $*"
    exit 99
}

command -v abidw >/dev/null 2>&1 \
    || skip "abidw not installed (Debian package abigail-tools)"
command -v abidiff >/dev/null 2>&1 \
    || skip "abidiff not installed (Debian package abigail-tools)"
command -v perl >/dev/null 2>&1 || skip "perl not installed"

for d in "$old_inc" "$new_inc"; do
    [ -f "$d/gannet/module.h" ] || hard_error "no $d/gannet/module.h"
done
[ -f "$ref" ] || hard_error "no $ref"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gn-abi.XXXXXX") || hard_error "mktemp"
if [ "${ABI_CHECK_KEEP:-0}" = 1 ]; then
    echo "# abi-check: keeping $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi

# The reference module against each set of headers: -O0 -g so that the
# debug information describes every type as written.
for v in old new; do
    if [ $v = old ]; then inc=$old_inc; else inc=$new_inc; fi
    $cc -g -O0 -shared -fPIC -fvisibility=hidden -I"$inc" "$ref" \
        -o "$tmp/$v.so" 2>"$tmp/$v.cc.log" \
        || { cat "$tmp/$v.cc.log" >&2; hard_error "cannot build $ref" \
                                                  "against $inc"; }
    abidw --out-file "$tmp/$v.abi" "$tmp/$v.so" 2>"$tmp/$v.abidw.log" \
        || { cat "$tmp/$v.abidw.log" >&2; hard_error "abidw $v.so failed"; }
    $cc -E -dM -I"$inc" -x c "$inc/gannet/module.h" 2>/dev/null \
        | grep '^#define GN_' | sort >"$tmp/$v.defs" \
        || hard_error "cc -E -dM $inc/gannet/module.h failed"
done

# --harmless: also report renames and other changes abidiff filters out
# as harmless for binaries (they still break modules' sources).
abidiff --harmless "$tmp/old.abi" "$tmp/new.abi" >"$tmp/report" 2>&1
rc=$?

# abidiff's exit status is a bit field: 1 error, 2 usage error, 4 ABI
# change, 8 incompatible ABI change.
if [ $((rc & 3)) -ne 0 ]; then
    cat "$tmp/report" >&2
    hard_error "abidiff failed (exit $rc)"
fi

perl -e '
use strict;
use warnings;

my ($rc, $report, $olddefs, $newdefs, $old_inc, $new_inc) = @ARGV;
my (@fail, @appended);

# Structs that may grow at the end.
my %appendable = map { $_ => 1 }
    qw(gn_api_s gn_module_s gn_child_stats_t gn_server_stats_t
       gn_proto_stats_t);

sub slurp { open(my $fh, "<", $_[0]) or die "$_[0]: $!\n"; local $/; <$fh> }

# ---- abidiff report ----------------------------------------------------------

my @lines = split /\n/, slurp($report);
my (@stack, $blank);

# Each node: { text, indent, kind, struct, old_size, new_size, limit }.
for my $i (0 .. $#lines) {
    my $l = $lines[$i];
    next if $l =~ /^\s*$/;
    my ($sp, $text) = $l =~ /^(\s*)(.*?)\s*$/;
    my $ind = length $sp;
    pop @stack while @stack && $stack[-1]{indent} >= $ind;
    my $parent = @stack ? $stack[-1] : undef;
    my $node = { text => $text, indent => $ind, kind => "other" };
    my $bad;

    if ($text =~ /^Functions changes summary: (\d+) Removed, \d+ Changed(?: \(\d+ filtered out\))?, \d+ Added functions?$/) {
        $bad = "functions removed" if $1 > 0;
    } elsif ($text =~ /^Variables changes summary: (\d+) Removed, \d+ Changed(?: \(\d+ filtered out\))?, \d+ Added variables?$/) {
        $bad = "variables removed" if $1 > 0;
    } elsif ($text =~ /^underlying type .struct (\w+). (?:at \S+ )?changed:$/
             || $text =~ /^.struct (\w+)(?: at \S+)?. changed:$/)
    {
        $node->{kind} = "struct";
        $node->{struct} = $1;
    } elsif ($text =~ /^\d+ functions? with (?:some )?indirect sub-type change/
             || $text =~ /^\[C\] .function .* has some indirect sub-type changes:$/
             || $text =~ /^parameter \d+ of type .* has sub-type changes:$/
             || $text =~ /^return type changed:$/
             || $text =~ /^in pointed to type .*:$/
             || $text =~ /^in unqualified underlying type .*:$/
             || $text =~ /^underlying type .*. (?:at \S+ )?changed:$/
             || $text =~ /^\d+ data member changes? \(\d+ filtered\):$/
             || $text =~ /^\d+ data member changes?:$/
             || $text =~ /^no data member changes? \(\d+ filtered\);?$/
             || $text =~ /^type of .* changed:$/
             || $text =~ /changed(?: at \S+)?, as (?:being reported|reported earlier)$/)
    {
        # structure, or a reference to a change reported elsewhere:
        # judged by what is under it or by that report
    } elsif ($text =~ /^type size changed from (\d+) to (\d+) \(in bits\)$/) {
        if (!$parent || $parent->{kind} ne "struct") {
            $bad = "a type that is not a struct changed size";
        } elsif ($2 < $1) {
            $bad = "struct $parent->{struct} shrank";
        } else {
            @$parent{qw(old_size new_size)} = ($1, $2);
        }
    } elsif ($text =~ /^type size hasn.t changed$/) {
        $parent->{same_size} = 1 if $parent;
    } elsif ($text =~ /^\d+ data member insertions?:$/) {
        $node->{kind} = "insertions";
        if (!$parent || $parent->{kind} ne "struct") {
            $bad = "members inserted into something that is not a struct";
        } elsif (!$appendable{$parent->{struct}}) {
            $bad = "members inserted into struct $parent->{struct}, which"
                   . " may not grow (only gn_api_t, gn_module_t and the"
                   . " stats structs may)";
        } elsif (!defined $parent->{old_size}) {
            $bad = "members inserted into struct $parent->{struct} without"
                   . " it growing (into padding or in place of others)";
        } else {
            $node->{limit} = $parent->{old_size};
            $node->{struct} = $parent->{struct};
        }
    } elsif ($text =~ /^\x27(.*)\x27, at offset (\d+) \(in bits\)(?: at \S+)?$/
             && $parent && $parent->{kind} eq "insertions")
    {
        if (!defined $parent->{limit}) {
            $bad = "(see above)";
        } elsif ($2 < $parent->{limit}) {
            $bad = "member $1 inserted at bit $2 of struct $parent->{struct},"
                   . " before its old end (bit $parent->{limit})";
        } else {
            push @appended, "$parent->{struct}: $1";
        }
    } else {
        $bad = "change not allowed";
    }

    push @fail, "line " . ($i + 1) . ": $text" . ($bad ne "(see above)"
                                                  ? " -- $bad" : "")
        if defined $bad;
    push @stack, $node;
}

# ---- constants -----------------------------------------------------------

sub defs
{
    my %d;
    for (split /\n/, slurp($_[0])) {
        $d{$1} = $2 if /^#define (GN_\w+(?:\([^)]*\))?)\s*(.*)$/;
    }
    # the name without parameters as the key, definition with them
    my %k;
    for my $n (keys %d) {
        my ($base) = $n =~ /^(\w+)/;
        $k{$base} = "$n $d{$n}";
    }
    return \%k;
}

my ($od, $nd) = (defs($olddefs), defs($newdefs));
my @added = grep { !exists $od->{$_} } sort keys %$nd;

for my $m (sort keys %$od) {
    next if $m eq "GN_ABI_MINOR";
    if (!exists $nd->{$m}) {
        push @fail, "constant $m was removed";
    } elsif ($nd->{$m} ne $od->{$m}) {
        push @fail, "constant $m changed: \"$od->{$m}\" -> \"$nd->{$m}\"";
    }
}

my ($omin) = ($od->{GN_ABI_MINOR} // "") =~ /(\d+)\s*$/;
my ($nmin) = ($nd->{GN_ABI_MINOR} // "") =~ /(\d+)\s*$/;
push @fail, "GN_ABI_MINOR missing" unless defined $omin && defined $nmin;

if (!@fail && $nmin < $omin) {
    push @fail, "GN_ABI_MINOR went down from $omin to $nmin";
}
if (!@fail && (@appended || @added) && $nmin <= $omin) {
    push @fail, "the ABI grew (" . join(", ", @appended, @added)
                . ") but GN_ABI_MINOR is still $nmin: bump it and add a"
                . " line to the history in api/gannet/abi.h";
}

# ---- result ----------------------------------------------------------------

print "1..1\n";
if (@fail) {
    print "not ok 1 - module ABI of $new_inc vs $old_inc\n";
    print "# $_\n" for @fail;
    print "# ---- abidiff report ----\n";
    print "# $_\n" for @lines;
    exit 1;
}

my $what = $rc == 0 && !@added ? "identical"
           : "compatible: appended " . join(", ", @appended, @added);
print "ok 1 - module ABI of $new_inc vs $old_inc: $what\n";
exit 0;
' "$rc" "$tmp/report" "$tmp/old.defs" "$tmp/new.defs" "$old_inc" "$new_inc"
status=$?
[ $status -le 1 ] || hard_error "the report parser failed (exit $status)"
exit $status
