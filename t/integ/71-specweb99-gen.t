#!/usr/bin/perl

# gannet-specweb99 (issue 7): the file set has NUMDIRS directories of 36
# files with the class sizes, printable contents, ad tags (with the file's
# own identity, every 4 KiB) in class 1 and 2 files only, and the same
# bytes for the same seed whatever the directory count; User.Personality
# and Custom.Ads have 15- and 39-byte records with the documented fields,
# deterministic for a seed (and -T NOW); usage errors exit 1, write
# errors 2.  No server is started.

use strict;
use warnings;

use Test::More;
use File::Temp qw(tempdir);
use Digest::MD5 qw(md5_hex);
use POSIX ();

my $bin = ($ENV{GN_BUILDDIR} // '/work/main') . '/tools/gannet-specweb99';
plan(skip_all => "no $bin") unless -x $bin;

alarm(300);

my $tmp = tempdir('gannet-sw99-XXXXXXXX', TMPDIR => 1, CLEANUP => 1);
my $dirbytes = 5119470;
my @base = (102, 1024, 10240, 102400);
my $tagre = qr{<!WEB99CAD><IMG\ SRC="/file_set/dir(\d{5})/class(\d)_(\d)">
               <!/WEB99CAD>}x;

# Runs the tool; returns (exit code, stdout, stderr).
sub tool
{
    my (@args) = @_;
    my ($pid, $rc);

    $pid = fork();
    die "fork: $!" unless defined $pid;

    if ($pid == 0) {
        open(STDIN, '<', '/dev/null');
        open(STDOUT, '>', "$tmp/out");
        open(STDERR, '>', "$tmp/err");
        { no warnings 'exec'; exec { $bin } $bin, @args; }
        POSIX::_exit(127);
    }

    waitpid($pid, 0);
    $rc = ($? & 127) ? 128 + ($? & 127) : $? >> 8;

    return ($rc, slurp("$tmp/out") // '', slurp("$tmp/err") // '');
}

sub slurp
{
    my ($path) = @_;
    my $fh;

    open($fh, '<:raw', $path) or return undef;
    local $/;
    my $data = <$fh>;
    close($fh);

    return $data // '';
}

sub numdirs
{
    my ($conns) = @_;
    return int(25 + ((400000.0 / 122000.0) * $conns) / 5);
}

# { "dirNNNNN/classX_Y" => md5 } of a tree's file_set.
sub digests
{
    my ($root) = @_;
    my %d;
    my ($dh, $fh);

    opendir($dh, "$root/file_set") or return {};
    for my $dir (grep { !/^\./ } readdir($dh)) {
        opendir($fh, "$root/file_set/$dir") or next;
        for my $f (grep { !/^\./ } readdir($fh)) {
            $d{"$dir/$f"} = md5_hex(slurp("$root/file_set/$dir/$f"));
        }
        closedir($fh);
    }
    closedir($dh);

    return \%d;
}

sub same
{
    my ($x, $y) = @_;
    return 0 unless keys %$x == keys %$y;
    for (keys %$x) {
        return 0 unless defined $y->{$_} && $x->{$_} eq $y->{$_};
    }
    return 1;
}


# --- fileset: the full tree for 1 connection --------------------------

my ($rc, $out, $err) = tool('fileset', '-C', "$tmp/a", '-n', 1, '-s', 7);
is($rc, 0, 'fileset -n 1 exits 0') or diag($err);
like($out, qr/\bdirs=25 files=900 bytes=127986750\b/,
     'fileset prints dirs, files and bytes');

my @dirs = sort grep { !/^\./ } do {
    opendir(my $dh, "$tmp/a/file_set"); readdir($dh);
};
is_deeply(\@dirs, [map { sprintf('dir%05d', $_) } 0 .. 24],
          'NUMDIRS(1) = 25 directories dir00000..dir00024');

my @names = map { my $c = $_; map { "class${c}_$_" } 0 .. 8 } 0 .. 3;
my (@badnames, @badsize, @badtext, @badtag, @tag03);
my $tags = 0;

for my $dir (@dirs) {
    my @f = sort grep { !/^\./ } do {
        opendir(my $dh, "$tmp/a/file_set/$dir"); readdir($dh);
    };
    push @badnames, $dir unless "@f" eq join(' ', sort @names);

    my ($n) = $dir =~ /(\d+)/;

    for my $c (0 .. 3) {
        for my $y (0 .. 8) {
            my $name = "$dir/class${c}_$y";
            my $data = slurp("$tmp/a/file_set/$name") // '';
            my $size = $base[$c] * ($y + 1);

            push @badsize, "$name: " . length($data) . " != $size"
                unless length($data) == $size;
            push @badtext, $name
                unless $data =~ /\A[\x20-\x7e\n]*\n\z/;

            my $count = () = $data =~ /WEB99CAD/g;

            if ($c == 0 || $c == 3) {
                push @tag03, $name if $count || index($data, '<') >= 0;
                next;
            }

            my (@pos, @want);
            while ($data =~ /$tagre/g) {
                push @pos, $-[0];
                push @badtag, "$name: tag for dir$1/class$2_$3"
                    unless $1 == $n && $2 == $c && $3 == $y;
            }
            for (my $o = 0; $o + 64 <= $size; $o += 4096) {
                push @want, $o;
            }
            push @badtag, "$name: tags at @pos, want @want"
                unless "@pos" eq "@want" && $count == 2 * @want;
            $tags += @pos;
        }
    }
}

ok(!@badnames, 'every directory holds class{0..3}_{0..8}, nothing else')
    or diag("@badnames");
ok(!@badsize, 'every file has its class size ((Y+1) x 102, 1K, 10K, 100K)')
    or diag(join("\n", @badsize[0 .. ($#badsize < 9 ? $#badsize : 9)]));
ok(!@badtext, 'contents are printable ASCII lines ending in a newline')
    or diag("@badtext[0 .. ($#badtext < 9 ? $#badtext : 9)]");
ok(!@badtag && $tags > 0,
   'class 1 and 2 files carry their own ad tag every 4096 bytes')
    or diag(join("\n", @badtag[0 .. ($#badtag < 9 ? $#badtag : 9)]));
is($tags, 25 * (15 + 115), 'ad tag count');
ok(!@tag03, 'class 0 and 3 files carry no ad tag (and no "<")')
    or diag("@tag03");


# --- fileset: determinism -------------------------------------------------

my $da = digests("$tmp/a");
my %a3 = map { $_ => $da->{$_} } grep { /^dir0000[0-2]\// } keys %$da;

($rc, $out) = tool('fileset', '-C', "$tmp/b", '-n', 1, '-s', 7, '-d', 3);
like($out, qr/\bdirs=3 files=108 bytes=${\($dirbytes * 3)}\b/,
     'fileset -d 3 writes 3 directories');
my $db = digests("$tmp/b");
ok(same($db, \%a3), 'same seed: the same bytes, whatever the dir count');

tool('fileset', '-C', "$tmp/b", '-n', 1, '-s', 7, '-d', 3);
ok(same(digests("$tmp/b"), $db), 'a second run over the tree: identical');

tool('fileset', '-C', "$tmp/c", '-n', 5, '-s', 7, '-d', 3);
ok(same(digests("$tmp/c"), $db), 'a second tree, same seed: identical');

tool('fileset', '-C', "$tmp/d", '-n', 1, '-s', 8, '-d', 3);
my $dd = digests("$tmp/d");
is(scalar(grep { $dd->{$_} ne ($db->{$_} // '') } keys %$dd), 108,
   'another seed: every file differs');

tool('fileset', '-C', "$tmp/e", '-n', 1, '-d', 1);
tool('fileset', '-C', "$tmp/f", '-n', 1, '-d', 1, '-s', 99);
ok(same(digests("$tmp/e"), digests("$tmp/f")), 'the default seed is 99');


# --- fileset: NUMDIRS -----------------------------------------------------

for my $conns (1, 2, 10, 100, 122, 1000, 3442, 17210, 100000) {
    my $n = numdirs($conns);
    ($rc, $out) = tool('fileset', '-C', "$tmp/n", '-n', $conns, '-N');
    like($out, qr/\bconns=$conns\ seed=99\ dirs=$n\ files=${\($n * 36)}
                  \ bytes=${\($n * $dirbytes)}\ \(not\ written\)/x,
         "NUMDIRS($conns) = $n");
}
ok(!-e "$tmp/n", '-N writes nothing');


# --- upfgen -----------------------------------------------------------------

($rc, $out, $err) = tool('upfgen', '-C', "$tmp/u1", '-n', 5, '-t', 3,
                         '-s', 7);
is($rc, 0, 'upfgen exits 0') or diag($err);
like($out, qr/\bmaxload=5 users=50 bytes=750 seed=7\b/, 'upfgen prints');

my $upf = slurp("$tmp/u1/User.Personality") // '';
is(length($upf), 50 * 15, 'User.Personality: 50 records of 15 bytes');

my @bad;
for my $i (0 .. 49) {
    my $r = substr($upf, $i * 15, 15);
    if ($r !~ /\A( {0,4}\d+) ( {0,7}[0-9A-F]+)\n\z/ || length($1) != 5
        || length($2) != 8 || $1 != $i)
    {
        push @bad, "record $i: '$r'";
        next;
    }
    my $dem = hex($2);
    for my $m (0x30000000, 0x0f000000, 0x00f00000, 0x000ffc00, 0x000003ff) {
        my $bits = unpack('%32b*', pack('N', $dem & $m));
        push @bad, "record $i: $bits bits in mask $m" if $bits != 1;
    }
    push @bad, "record $i: stray bits" if $dem & ~0x3fffffff;
}
ok(!@bad, 'records "%5d %8X\n": id, one demographic bit per category')
    or diag(join("\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)]));

tool('upfgen', '-C', "$tmp/u2", '-n', 5, '-s', 7);
is(slurp("$tmp/u2/User.Personality"), $upf,
   'upfgen: same seed, same bytes (threads do not matter)');
tool('upfgen', '-C', "$tmp/u2", '-n', 5, '-s', 8);
isnt(slurp("$tmp/u2/User.Personality"), $upf, 'upfgen: another seed differs');

($rc, $out) = tool('upfgen', '-C', "$tmp/u3", '-n', 20000);
like($out, qr/\busers=100000 bytes=1500000\b/, 'upfgen caps at 100000 users');
is(-s "$tmp/u3/User.Personality", 1500000, 'capped file size');
like(substr(slurp("$tmp/u3/User.Personality"), 99999 * 15, 6), qr/^99999 $/,
     'last user id 99999 fits the 5-digit field');


# --- cadgen -----------------------------------------------------------------

my $now = 1700000000;

($rc, $out, $err) = tool('cadgen', '-C', "$tmp/k1", '-e', 3600, '-t', 2,
                         '-s', 7, '-T', $now, 5, 7);
is($rc, 0, 'cadgen exits 0') or diag($err);
like($out, qr/\bads=360\ bytes=14040\ now=$now\ expiry=${\($now + 3600)}
              \ expired=5-7\ seed=7\b/x, 'cadgen prints');

my $cad = slurp("$tmp/k1/Custom.Ads") // '';
is(length($cad), 360 * 39, 'Custom.Ads: 360 records of 39 bytes');

@bad = ();
my ($catchall, $expired) = (0, 0);
for my $i (0 .. 359) {
    my $r = substr($cad, $i * 39, 39);
    my ($id, $dem, $wt, $mm, $exp) = (substr($r, 0, 5), substr($r, 6, 8),
        substr($r, 15, 8), substr($r, 24, 3), substr($r, 28, 10));

    if ($r !~ /\A {0,4}\d+ {1,8}[0-9A-F]+ {1,8}[0-9A-F]+ {1,3}\d+ {1,10}\d+\n\z/
        || substr($r, 5, 1) ne ' ' || substr($r, 14, 1) ne ' '
        || substr($r, 23, 1) ne ' ' || substr($r, 27, 1) ne ' ')
    {
        push @bad, "record $i: '$r'";
        next;
    }
    s/^ +// for ($id, $dem, $wt, $mm, $exp);
    push @bad, "record $i: id $id" if $id != $i;
    for my $m (0x30000000, 0x0f000000, 0x00f00000, 0x000ffc00, 0x000003ff) {
        push @bad, "record $i: no bit in $m" unless hex($dem) & $m;
    }
    push @bad, "record $i: dem $dem" if hex($dem) & ~0x3fffffff;
    push @bad, "record $i: weightings $wt" if hex($wt) > 0xfffff;
    push @bad, "record $i: minmatch $mm" if $mm > 40;
    push @bad, "record $i: minmatch $mm, not catch-all"
        if ($i % 40 == 39) != ($mm == 0);
    $catchall++ if $mm == 0;

    my $want = ($i >= 5 && $i <= 7) ? $now - 1 : $now + 3600;
    push @bad, "record $i: expiry $exp != $want" if $exp != $want;
    $expired++ if $exp < $now;
}
ok(!@bad, 'records "%5d %8X %8X %3d %10d\n" at offsets 0, 6, 15, 24, 28')
    or diag(join("\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)]));
is($catchall, 9, 'every 40th ad is a catch-all (minmatch 0)');
is($expired, 3, 'ads E1..E2 (5..7) already expired');

tool('cadgen', '-C', "$tmp/k2", '-e', 3600, '-s', 7, '-T', $now, 7, 5);
is(slurp("$tmp/k2/Custom.Ads"), $cad,
   'cadgen: same seed and -T, same bytes (E2 < E1 and threads alike)');

tool('cadgen', '-C', "$tmp/k3", '-e', 60, '-s', 7, '-T', $now + 10);
my $k3 = slurp("$tmp/k3/Custom.Ads") // '';
my ($samefix, $allnew) = (1, 1);
for my $i (0 .. 359) {
    $samefix = 0 if substr($k3, $i * 39, 28) ne substr($cad, $i * 39, 28);
    $allnew = 0 if substr($k3, $i * 39 + 28, 10) != $now + 70;
}
ok($samefix && $allnew,
   'another -T/-e: only the expiry field changes; no E1 E2, none expired');

tool('cadgen', '-C', "$tmp/k4", '-e', 3600, '-s', 8, '-T', $now, 5, 7);
isnt(slurp("$tmp/k4/Custom.Ads"), $cad, 'cadgen: another seed differs');

($rc, $out) = tool('cadgen', '-C', "$tmp/k5", '-e', 10);
is($rc, 0, 'cadgen without -T uses the current time');
my ($t) = $out =~ /\bnow=(\d+)/;
ok(defined $t && abs($t - time()) < 60, 'now is the current time');


# --- errors -------------------------------------------------------------

for my $args (['fileset', '-C', "$tmp/x", '-n', 1, '-x'],
              ['fileset', '-C', "$tmp/x"],
              ['fileset', '-C', "$tmp/x", '-n', 'abc'],
              ['fileset', '-C', "$tmp/x", '-n', 0],
              ['upfgen', '-n', 5],
              ['upfgen', '-C', "$tmp/x", '-n'],
              ['cadgen', '-C', "$tmp/x", '-e', 5, 3],
              ['cadgen', '-C', "$tmp/x", '-e', -1],
              ['frobnicate'],
              [])
{
    ($rc, $out, $err) = tool(@$args);
    ok($rc == 1 && $err =~ /^usage: /m && $out eq '',
       "usage error, exit 1: @$args") or diag("rc $rc: $err");
}
ok(!-e "$tmp/x", 'usage errors write nothing');

open(my $fh, '>', "$tmp/file") or die;
close($fh);
($rc, $out, $err) = tool('fileset', '-C', "$tmp/file", '-n', 1, '-d', 1);
is($rc, 2, 'a root that is a file: exit 2');
like($err, qr/mkdir\(".*file\/file_set"\) failed/, 'names the failing call');

($rc, $out) = tool('help');
ok($rc == 0 && $out =~ /^usage: /, 'help: usage on stdout, exit 0');

done_testing();
