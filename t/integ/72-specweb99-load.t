#!/usr/bin/perl

# The SPECweb99-style load generator (issue 7) against a live gannet: a
# short run (3 s measured, 5 connections, HTTP) over a small file set made
# by gannet-specweb99 completes with zero errors and a report that parses;
# the full mix when mod_specweb99 is built (and then the post log holds
# one 139-byte record per POST), the static part alone otherwise.  A run
# against a file set made with another seed must count content errors:
# the validation is not a no-op (with the full mix, also for the CAD
# pages whose ad tags are rewritten).  --procs 2 gives the same report
# with zero errors.  No timing is asserted.
#
# Environment: GN_BUILDDIR (the build tree holding
# tools/gannet-specweb99 and bench/specweb99/gannet-specweb99-load),
# GN_MODDIR (default modules/.libs of the build tree).
#
# With GN_SPECWEB99_ISAPI=1 (t/integ/113-isapi-specweb99-load.t) the
# dynamic operations are the ISAPI extension's
# (modules/specweb99/isapi_specweb99.c under mod_isapi), and the test is
# skipped, not run static-only, when it is not built.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new(timeout => 120);
$t->skip_unless_bin;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
my $tool = "$top/tools/gannet-specweb99";
my $load = "$top/bench/specweb99/gannet-specweb99-load";
plan(skip_all => "no $tool") unless -x $tool;
plan(skip_all => "no $load") unless -x $load;

my $isapi = $ENV{GN_SPECWEB99_ISAPI} ? 1 : 0;
my $modso = $isapi ? "$ENV{GN_MODDIR}/mod_isapi.so"
                   : "$ENV{GN_MODDIR}/mod_specweb99.so";
my $isapi_so = "$top/modules/specweb99/.libs/isapi_specweb99.so";
my $full = -f $modso && (!$isapi || -f $isapi_so);
plan(skip_all => "$modso or $isapi_so not built") if $isapi && !$full;
diag("$modso not built: static-only run") unless $full;

my $dir = $t->testdir;
my $root = "$dir/root";

# A small set: the directory count for 5 connections is 28 (about 140
# MB); 3 are enough here, the load generator uses the ones it finds.
sub make_set
{
    my ($r, @seed) = @_;

    mkdir $r or die "mkdir $r: $!";
    for my $cmd (['fileset', '-C', $r, '-n', 5, '-d', 3, @seed],
                 ['upfgen', '-C', $r, '-n', 5, @seed],
                 ['cadgen', '-C', $r, '-e', 86400, @seed])
    {
        my ($rc, $out, $err) = $t->run_client([$tool, @$cmd], timeout => 60);
        die "gannet-specweb99 @$cmd: exit $rc: $err" if $rc != 0;
    }
}

make_set($root);
make_set("$dir/other", '-s', 5);

my $mod_conf = $full ? "load_module $modso;" : '';
my $loc_conf = !$full ? '' : $isapi ? <<"EOF_ISAPI" : <<"EOF_LOC";
    location /specweb99 {
        handler isapi;
        isapi_extension $isapi_so;
        root $root;
    }
EOF_ISAPI
    location /specweb99 {
        handler specweb99;
        specweb99_root $root;
    }
EOF_LOC

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
$mod_conf

server {
    listen 127.0.0.1:%%PORT_0%%;
    root $root;
    keepalive_timeout 60s;
$loc_conf
}
EOF_CONF

$t->run;


sub load
{
    my ($r, @args) = @_;
    my ($rc, $out, $err) = $t->run_client(
        [$load, '-h', '127.0.0.1', '-p', $t->port(0), '-C', $r,
         '--cgi-url', '/specweb99', '--seed', 7, @args], timeout => 60);
    my %k = map { /^([a-z_]+): (.*)$/ ? ($1, $2) : () } split /\n/, $out;
    return ($rc, \%k, $out, $err);
}


my @mode = $full ? () : ('--static-only');
my ($rc, $k, $out, $err) = load($root, '-n', 5, '--rampup', 1,
                                '--time', 3, '--rampdown', 1, @mode);

is($rc, 0, 'load generator exits 0 (no error)')
    or diag("stdout:\n$out\nstderr:\n$err");
is($k->{connections}, 5, 'report: connections');
like($k->{conforming} // '', qr/^\d+$/, 'report: conforming');
ok(defined $k->{conforming} && $k->{conforming} <= 5,
   'report: conforming <= connections');
like($k->{percent_conforming} // '', qr/^\d+\.\d$/,
     'report: percent conforming');
like($k->{ops_per_sec} // '', qr/^\d+\.\d$/, 'report: ops/s');
like($k->{response_msec} // '', qr/^\d+\.\d+$/, 'report: response time');
like($k->{kbit_per_sec} // '', qr/^\d+\.\d$/, 'report: kbit/s');
is($k->{errors}, 0, 'report: zero errors');
ok(($k->{ops_total} // 0) > 0, 'requests were made');
like($out, qr/^\| \d+ \| \d+\.\d% \|/m, 'report: the seed-style table');
like($k->{client_cpu_us_per_op} // '', qr/^\d+\.\d\d$/,
     'report: client CPU per op');
like($k->{client_cpu_percent} // '', qr/^\d+\.\d$/,
     'report: client CPU share');
my $ops1 = $k->{ops_total} // 0;

my %mix = ($k->{mix} // '') =~ /(\w+) (\d+)/g;
ok(($mix{static} // 0) > 0, 'static requests were made');
if ($full) {
    ok(($mix{dynamic} // 0) + ($mix{cad} // 0) > 0,
       'dynamic requests were made');
    my ($sent, $answered) = ($k->{posts} // '') =~ /^(\d+) sent, (\d+) answ/;
    ok(defined $answered, 'report: POST counts');
    my $log = $t->read_file('root/post.log') // '';
    my $n = $answered // -1;
    if ($n > 0 || length $log) {
        is(length $log, 11 + 139 * $n, 'post.log: one 139-byte record '
           . 'per POST');
        is(substr($log, 0, 11), sprintf("%10d\n", $n),
           'post.log: the count header');
    } else {
        pass('no POST and no post.log') for 1 .. 2;
    }
} else {
    is(($mix{dynamic} // 0) + ($mix{cad} // 0) + ($mix{post} // 0), 0,
       'static only: no dynamic request');
}

# --procs 2: two workers share the slots; the same report, no error, and
# the server's CPU with --server-pid
my $spid = $t->master_pid // '';
($rc, $k, $out, $err) = load($root, '-n', 5, '--rampup', 1, '--time', 3,
                             '--rampdown', 1, '--procs', 2, @mode,
                             $spid =~ /^\d+$/ ? ('--server-pid', $spid) : ());
is($rc, 0, '--procs 2: exits 0 (no error)')
    or diag("stdout:\n$out\nstderr:\n$err");
is($k->{connections}, 5, '--procs 2: connections');
is($k->{errors}, 0, '--procs 2: zero errors');
ok(($k->{ops_total} // 0) > 0, '--procs 2: requests were made');
like($k->{client_cpu_us_per_op} // '', qr/^\d+\.\d\d$/,
     '--procs 2: client CPU per op');
SKIP: {
    skip 'no server pid', 1 unless $spid =~ /^\d+$/;
    like($k->{server_cpu_percent} // '', qr/^\d+\.\d$/,
         '--server-pid: server CPU share');
}
like($out, qr/^\| \d+ \| \d+\.\d% \|/m, '--procs 2: the seed-style table');

# validation: another seed's files do not match what the server sends
($rc, $k, $out, $err) = load("$dir/other", '-n', 2, '--rampup', 0,
                             '--time', 1, '--rampdown', 0, '--static-only');
is($rc, 3, 'wrong file set: exit code 3 (errors)')
    or diag("stdout:\n$out\nstderr:\n$err");
ok(($k->{errors} // 0) > 0, 'wrong file set: errors counted');
like($k->{error_kinds} // '', qr/content \d+/, 'wrong file set: as content');

SKIP: {
    skip 'the dynamic operations are not built', 2 unless $full;
    # the full mix: the dynamic pages and the CAD pages with rewritten ad
    # tags are checked against the files too
    ($rc, $k, $out, $err) = load("$dir/other", '-n', 5, '--rampup', 0,
                                 '--time', 3, '--rampdown', 0, '--verbose');
    is($rc, 3, 'wrong file set, full mix: exit code 3')
        or diag("stdout:\n$out\nstderr:\n$err");
    like($err, qr/error \(content\) cad \S+class[12]_\d/,
         'wrong file set: a CAD page with rewritten tags is a content error');
}

$t->done;
