#!/usr/bin/perl

# Modules: loading and the ABI checks. Each bad fixture (no entry symbol,
# entry of another major, bad magic, newer major, a module that needs a
# newer minor, descriptor too small, not a shared object, missing file,
# loaded twice) makes `gannet -t` exit 1 with the exact [emerg] message
# and FILE:LINE, and a start fail; the good modules load, export only
# their entry symbol, a module built against the 1.0 headers (mod_t_old)
# serves requests, and so does one built with the current headers that
# says it needs only 1.0 (mod_t_needs0, GN_MODULE_V1_NEEDS(0)) and calls
# read_file (1.1) after testing for it with GN_API_HAS().
# `handler` with an unknown name and typed module directives are
# configuration errors with FILE:LINE; directive values are parsed and
# inherited main -> server -> location; init_master runs once in the
# master, init_child once per child (also after a reload), exit_child at
# stop; an init_master failure stops the server from starting.
#
# Modules: GN_MODDIR (default modules/.libs of the build tree), fixtures:
# GN_TMODDIR (default t/modules/.libs).

use strict;
use warnings;

use Config;
use Test::More;
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new(timeout => 90);
$t->skip_unless_bin;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
$ENV{GN_TMODDIR} //= "$top/t/modules/.libs";
my $moddir = $ENV{GN_MODDIR};
my $tmoddir = $ENV{GN_TMODDIR};
my $dir = $t->testdir;

for my $m ("$tmoddir/mod_t_info.so", "$tmoddir/mod_t_old.so",
           "$tmoddir/mod_t_needs0.so", "$moddir/mod_example.so")
{
    plan(skip_all => "$m not built") unless -f $m;
}

# The ABI version this server implements, from the headers it was built
# with.
my ($abi_major, $abi_minor) = abi_version("$t->{srcdir}/api/gannet/abi.h");
my $abi = "$abi_major.$abi_minor";

sub abi_version
{
    my ($h) = @_;
    my ($maj, $min);

    open(my $fh, '<', $h) or die "$h: $!\n";
    while (<$fh>) {
        $maj = $1 if /^#define\s+GN_ABI_MAJOR\s+(\d+)/;
        $min = $1 if /^#define\s+GN_ABI_MINOR\s+(\d+)/;
    }
    close $fh;
    die "no GN_ABI_MAJOR/MINOR in $h\n" unless defined $maj && defined $min;
    return ($maj, $min);
}

# Writes a config file and runs gannet -t on it.
sub configtest
{
    my ($name, $text) = @_;
    my $path = $t->write_file($name, $t->expand($text));

    return ($path, $t->gannet('-t', '-p', "$dir/", '-c', $path));
}

# A broken config: exit 1, "[emerg] MESSAGE in FILE:LINE", "test failed";
# with start => 1 also a start of the server fails with the same message.
sub bad
{
    my ($name, $text, $msg, $line, %opt) = @_;
    my ($f, $rc, $out, $err) = configtest("$name.conf", $text);
    my $re = ref $msg ? $msg : qr/\Q$msg\E/;

    is($rc, 1, "$name: gannet -t exits 1");
    like($err, qr/^gannet: \[emerg\] $re in \Q$f\E:$line$/m,
         "$name: [emerg] message and FILE:$line")
        or diag($err);
    like($err, qr/^gannet: configuration file \Q$f\E test failed$/m,
         "$name: test failed");

    return unless $opt{start};

    ($rc, $out, $err) = $t->gannet('-f', '-p', "$dir/", '-c', $f);
    is($rc, 1, "$name: the server refuses to start (exit 1)");
    like($err, qr/^gannet: \[emerg\] $re in \Q$f\E:$line$/m,
         "$name: start: [emerg] on stderr");
    ok(!-e "$dir/logs/gannet.pid", "$name: no pid file");
    ok(!$t->probe($t->port(0)), "$name: nothing listens");
}

sub load_conf
{
    my ($path) = @_;

    return <<"EOF_CONF";
children 1;
user %%USER%%;
load_module $path;
error_log logs/error.log info;

server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF_CONF
}

# ---- the ABI checks -------------------------------------------------------

my $no_sym = 'has no symbol gn_module_v1 (built for another ABI major, '
             . 'or not a gannet module)';

bad('nosym', load_conf("%%TMODDIR%%/mod_t_nosym.so"),
    qq{module "$tmoddir/mod_t_nosym.so" $no_sym}, 3, start => 1);

bad('v2sym', load_conf("%%TMODDIR%%/mod_t_abi_v2sym.so"),
    qq{module "$tmoddir/mod_t_abi_v2sym.so" $no_sym}, 3);

bad('badmagic', load_conf("%%TMODDIR%%/mod_t_badmagic.so"),
    qq{module "$tmoddir/mod_t_badmagic.so" has a bad descriptor }
    . '(magic 0xdeadbeef, expected 0x474e4d44)', 3, start => 1);

bad('abi2', load_conf("%%TMODDIR%%/mod_t_abi2.so"),
    qq{module "$tmoddir/mod_t_abi2.so" was built for ABI 2.0, }
    . "this server implements $abi", 3, start => 1);

# A module that needs the next minor (built with its headers, calling
# what it adds): both versions named.
bad('newminor', load_conf("%%TMODDIR%%/mod_t_newminor.so"),
    qq{module "$tmoddir/mod_t_newminor.so" needs ABI $abi_major.}
    . ($abi_minor + 1) . ", this server implements $abi", 3, start => 1);

# The 1.0 descriptor: magic, major, minor, size (12 bytes, padded to the
# pointer alignment), then 4 pointers/size_t and 7 hooks.
my $ptr = $Config{ptrsize};
my $desc_1_0 = ($ptr == 8 ? 16 : 12) + 11 * $ptr;

bad('small', load_conf("%%TMODDIR%%/mod_t_small.so"),
    qq{module "$tmoddir/mod_t_small.so" descriptor size 40 is smaller }
    . "than the 1.0 descriptor ($desc_1_0)", 3, start => 1);

bad('missing', load_conf("$dir/nonexistent.so"),
    qr/cannot load module "\Q$dir\E\/nonexistent\.so": .*\S/, 3,
    start => 1);

$t->write_file('notelf.so', "this is not a shared object\n");
bad('notelf', load_conf("$dir/notelf.so"),
    qr/cannot load module "\Q$dir\E\/notelf\.so": .*\S/, 3);

bad('twice', <<'EOF_CONF',
children 1;
user %%USER%%;
load_module %%TMODDIR%%/mod_t_info.so;
load_module %%TMODDIR%%/mod_t_info.so;

server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF_CONF
    qq{module "t_info" is loaded twice ("$tmoddir/mod_t_info.so")}, 4);

bad('load-context', <<'EOF_CONF',
children 1;
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%%;
    load_module %%TMODDIR%%/mod_t_info.so;
}
EOF_CONF
    '"load_module" directive is not allowed here', 5);

# The error log of the refused starts may hold the same [emerg] lines.
$t->expect_log(qr/\[emerg\] (?:module "|cannot load module ")/);

# ---- `handler` ------------------------------------------------------------

bad('handler-unknown', <<'EOF_CONF',
children 1;
user %%USER%%;
load_module %%TMODDIR%%/mod_t_info.so;

server {
    listen 127.0.0.1:%%PORT_0%%;
    location /a/ {
        handler t_nosuch;
    }
}
EOF_CONF
    'unknown handler "t_nosuch", load its module first with load_module',
    8, start => 1);
$t->expect_log(qr/\[emerg\] unknown handler "t_nosuch"/);

bad('handler-not-loaded', <<'EOF_CONF',
children 1;
user %%USER%%;

server {
    listen 127.0.0.1:%%PORT_0%%;
    handler t_info;
}
EOF_CONF
    'unknown handler "t_info", load its module first with load_module', 6);

# ---- typed module directives ----------------------------------------------

sub dir_conf
{
    my ($loc_line) = @_;

    return <<"EOF_CONF";
children 1;
user %%USER%%;
load_module %%TMODDIR%%/mod_t_info.so;

server {
    listen 127.0.0.1:%%PORT_0%%;
    location /a/ {
        handler t_info;
        $loc_line
    }
}
EOF_CONF
}

bad('dir-number', dir_conf('t_info_number 12abc;'),
    'invalid number "12abc" in "t_info_number" directive', 9, start => 1);
bad('dir-size', dir_conf('t_info_size 10q;'),
    'invalid size "10q" in "t_info_size" directive', 9);
bad('dir-duration', dir_conf('t_info_duration 5x;'),
    'invalid time "5x" in "t_info_duration" directive', 9);
bad('dir-flag', dir_conf('t_info_flag maybe;'),
    'invalid value "maybe" in "t_info_flag" directive, '
    . 'it must be "on" or "off"', 9);
bad('dir-context', dir_conf('t_info_main_only 3;'),
    '"t_info_main_only" directive is not allowed here', 9);
bad('dir-arity', dir_conf('t_info_number 1 2;'),
    'invalid number of arguments in "t_info_number" directive', 9);
bad('dir-duplicate', dir_conf("t_info_number 1;\n        t_info_number 2;"),
    '"t_info_number" directive is duplicate', 10);
$t->expect_log(qr/\[emerg\] invalid number "12abc"/);

bad('dir-not-loaded', <<'EOF_CONF',
children 1;
user %%USER%%;

server {
    listen 127.0.0.1:%%PORT_0%%;
    t_info_number 3;
}
EOF_CONF
    'unknown directive "t_info_number"', 6);

# A module's configuration check (ABI 1.2, GN_MODULE_CHECK: mod_example
# checks the range of example_repeat at every level) refuses the
# configuration under `gannet -t` already, naming the file and line of
# the value -- written at that level or inherited -- and the server does
# not start. A module without a check (mod_t_old, ABI 1.0) loads as ever.
for my $case (
    [ 'main', "example_repeat 1000;\n", '', 5 ],
    [ 'location', '', "    location /x {\n        example_repeat -1;\n"
                      . "    }\n", 9 ],
    [ 'inherited', '', "    example_repeat 101;\n"
                       . "    location /x { handler example; }\n", 8 ])
{
    my ($name, $main, $srv, $line) = @$case;
    my $f = $t->write_file("check-$name.conf", $t->expand(<<"EOF_CONF"));
children 1;
user %%USER%%;
load_module %%MODDIR%%/mod_example.so;
load_module %%TMODDIR%%/mod_t_old.so;
${main}
server {
    listen 127.0.0.1:%%PORT_0%%;
${srv}}
EOF_CONF
    my ($rc, $out, $err) = $t->gannet('-t', '-p', "$dir/", '-c', $f);
    my $v = $name eq 'location' ? -1 : $name eq 'main' ? 1000 : 101;
    is($rc, 1, "check ($name): gannet -t fails");
    my $msg = "[emerg] \"example_repeat\" directive must be from 0 to 100, "
              . "not $v in $f:$line";
    like($err, qr/\Q$msg\E$/m,
         "check ($name): the module's reason at the value's file:line")
        or diag($err);
    like($err, qr/test failed/, "check ($name): test failed");

    ($rc, $out, $err) = $t->gannet('-f', '-p', "$dir/", '-c', $f);
    is($rc, 1, "check ($name): the server does not start");
}
ok(!$t->probe($t->port(0)), 'check: nothing listens');

# init_master fails for what a check cannot see (a resource): the checks
# passed, so `gannet -t` succeeds, and the start fails.
{
    my $f = $t->write_file('initfail.conf', $t->expand(<<'EOF_CONF'));
children 1;
user %%USER%%;
error_log logs/initfail.log info;
load_module %%TMODDIR%%/mod_t_info.so;
t_info_main_only -1;

server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF_CONF
    my ($rc, $out, $err) = $t->gannet('-t', '-p', "$dir/", '-c', $f);
    is($rc, 0, 'init_master failure: the checks pass') or diag($err);

    ($rc, $out, $err) = $t->gannet('-f', '-p', "$dir/", '-c', $f);
    my $log = ($t->read_file('logs/initfail.log') // '') . $err;

    is($rc, 1, 'init_master failure: the server does not start');
    like($log, qr/t_info: init_master fails on purpose/,
         'init_master failure: the module says why');
    like($log, qr/\[emerg\].*module "t_info": init_master failed/,
         'init_master failure: [emerg] names the module');
    ok(!$t->probe($t->port(0)), 'init_master failure: nothing listens');
    $t->expect_log(qr/init_master fails on purpose
                      |module "t_info": init_master failed/x);
}

# ---- symbol visibility ----------------------------------------------------

SKIP: {
    skip('nm not found', 5) unless defined GnTest::_which('nm');

    for my $m ("$moddir/mod_example.so", "$tmoddir/mod_t_info.so",
               "$tmoddir/mod_t_old.so", "$tmoddir/mod_t_crash.so",
               "$tmoddir/mod_t_needs0.so")
    {
        my ($rc, $out) = $t->run_client(['nm', '-D', '--defined-only', $m]);
        my @syms = sort map { (split ' ')[-1] } grep { /\S/ } split /\n/, $out;
        my $want = $m =~ /mod_example/ ? 'gn_module_v1 gn_module_v1_check_conf'
                                       : 'gn_module_v1';
        is("@syms", $want, "$m exports only $want");
    }
}

# ---- the good modules -----------------------------------------------------

my $good = <<'EOF_CONF';
children 2;
user %%USER%%;
error_log logs/error.log info;

load_module %%TMODDIR%%/mod_t_info.so;
load_module %%TMODDIR%%/mod_t_old.so;
load_module %%MODDIR%%/mod_example.so;
load_module %%TMODDIR%%/mod_t_needs0.so;

t_info_tag main;
t_info_main_only 7;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
    t_info_number -5;
    t_info_size 16k;

    location /a/ {
        handler t_info;
        t_info_tag loc;
        t_info_flag on;
        t_info_duration 1m30s;
    }
    location /b/ {
        handler t_info;
    }
    location /c/ {
        handler t_info .json .JS;
    }
    location /old/ {
        handler t_old;
    }
    location /needs0/ {
        handler t_needs0;
    }
}

server {
    listen 127.0.0.1:%%PORT_1%%;
    handler t_info;
}
EOF_CONF

{
    my ($f, $rc, $out, $err) = configtest('good.conf', $good);

    is($rc, 0, 'good modules: gannet -t exits 0') or diag($err);
    like($err, qr/^gannet: configuration file \Q$f\E test is successful$/m,
         'good modules: test is successful');
}

$t->write_conf($good);
$t->write_file('html/c/page.txt', "static page\n");
$t->write_file('html/c/page.json', "not served as a file\n");
$t->write_file('html/needs0/f.txt', "the needs0 file\n");
$t->run;

my @kids = $t->wait_children(2, 5);
is(scalar @kids, 2, '2 children');
my $master = $t->master_pid;

# Naive parser for mod_t_info's one-line JSON: flat, no escapes.
sub info
{
    my ($r) = @_;
    my %h;

    return {} unless ($r->{status} // 0) == 200;
    while ($r->{body} =~ /"(\w+)":(?:"([^"]*)"|(-?\d+))/g) {
        $h{$1} = defined $2 ? $2 : $3;
    }
    return \%h;
}

my $r = $t->http_get('/a/x?q=1');
is($r->{status}, 200, 'GET /a/x: 200');
like($r->{headers}{'content-type'} // '', qr{^application/json},
     'content type set by the module');
my $i = info($r);
is($i->{module}, 't_info', 'served by t_info');
is($i->{uri}, '/a/x', 'uri');
is($i->{query}, 'q=1', 'query');
is($i->{method}, 'GET', 'method');
is($i->{https}, 'off', 'HTTPS off');
is($i->{remote_addr}, '127.0.0.1', 'REMOTE_ADDR');
is($i->{server_port}, $t->port(0), 'SERVER_PORT');
is($i->{abi}, $abi, "api->abi_major/minor: $abi");
ok(($i->{api_size} // 0) > 100, "api->size $i->{api_size}");
is($i->{server}, 'gannet', 'server_version: no version by default');
ok((grep { $_ == ($i->{pid} // 0) } @kids), 'pid is one of the children');
ok(defined $i->{slot} && $i->{slot} >= 0 && $i->{slot} < 2,
   "child_slot in a child: $i->{slot}");
is($i->{master_slot}, -1, 'child_slot in init_master: -1');
is($i->{init_child}, 1, 'init_child ran once in this child');
is($i->{live}, 2, 'child_stats: 2 live children');
is($i->{server_children}, 2, 'server_stats: 2 children');
ok(($i->{max_slots} // 0) >= 2, 'max_slots >= 2');

# values and inheritance: location > server > main > default
is($i->{tag}, 'loc', '/a/: string set in the location');
is($i->{number}, -5, '/a/: number inherited from the server');
is($i->{flag}, 1, '/a/: flag on');
is($i->{size}, 16384, '/a/: size 16k inherited from the server');
is($i->{duration}, 90000, '/a/: duration 1m30s');
is($i->{main_only}, 7, '/a/: main-only directive');

$i = info($t->http_get('/b/'));
is($i->{tag}, 'main', '/b/: string inherited from main');
is($i->{flag}, 0, '/b/: flag default off');
is($i->{size}, 16384, '/b/: size from the server');
is($i->{duration}, 1000, '/b/: duration default 1s');

$i = info($t->http_get('/', port => $t->port(1)));
is($i->{tag}, 'main', 'other server: string from main');
is($i->{number}, 0, 'other server: number default');
is($i->{size}, 1024, 'other server: size default 1k');
is($i->{main_only}, 7, 'other server: main-only directive');

# handler NAME .ext: only those URIs
$r = $t->http_get('/c/page.json');
is(info($r)->{module}, 't_info', 'handler .json: /c/page.json by t_info');
is(info($t->http_get('/c/x.js'))->{module}, 't_info',
   'handler .JS matches .js');
$r = $t->http_get('/c/page.txt');
is($r->{status}, 200, '/c/page.txt: static');
is($r->{body}, "static page\n", '/c/page.txt: the file');

# the module built against the 1.0 headers
$r = $t->http_get('/old/');
is($r->{status}, 200, 'module built against the 1.0 headers: 200');
like($r->{body},
     qr{^old module built for ABI 1\.0, server ABI \Q$abi\E \(gannet\)},
     'module built against the 1.0 headers: its answer');

# built with the current headers, needs only 1.0: its descriptor says 1.0,
# and it found read_file (1.1), conf_error (1.2) and proto_stats (1.3, which
# filled a struct cut short without writing past it) in this server's table
$r = $t->http_get('/needs0/f.txt');
is($r->{status}, 200, 'module that needs 1.0, current headers: 200');
is($r->{body}, "needs $abi_major.0 built $abi server $abi read_file yes "
               . "conf_error yes proto_stats yes\nthe needs0 file\n",
   'module that needs 1.0: its descriptor, GN_API_HAS, read_file');

# init_master once in the master, init_child once per child
sub init_lines
{
    my ($what) = @_;
    my @l = $t->error_log =~ /t_info: $what (.*)$/mg;

    return @l;
}

my @im = init_lines('init_master');
is(scalar @im, 1, 'init_master ran once');
like($im[0] // '', qr/^pid $master slot -1$/, 'init_master in the master');

# A child logs init_child as it starts; the master forked it before, so a
# slow one (valgrind, a busy machine) may be listed and not have logged yet.
$t->wait_log(qr/t_info: init_child slot \d+ pid $_$/m) for @kids;
my %slot_of;
for my $l (init_lines('init_child')) {
    $slot_of{$2} = $1 if $l =~ /^slot (\d+) pid (\d+)$/;
}
is(scalar(keys %slot_of), 2, 'init_child ran in 2 processes');
is_deeply([sort { $a <=> $b } keys %slot_of], \@kids,
          'init_child ran in each child');
is(join(',', sort values %slot_of), '0,1', 'init_child: slots 0 and 1');

# Many requests: every child reports init_child = 1.
my %seen;
for (1 .. 20) {
    my $x = info($t->http_get('/b/'));
    $seen{$x->{pid}} = $x->{init_child} if defined $x->{pid};
}
ok(!grep({ $_ != 1 } values %seen), 'init_child = 1 in every child seen')
    or diag(explain \%seen);

# A reload forks a new generation: each new child runs init_child once.
my $from = length $t->error_log;
ok($t->signal('HUP'), 'SIGHUP');
my @new = $t->wait_children(2, 10, not => \@kids);
is(scalar @new, 2, 'reload: 2 new children');
my %n;
my $end = time() + GnTest::slow(5);
while (1) {
    %n = ();
    for my $l (substr($t->error_log, $from) =~ /t_info: init_child (.*)$/mg) {
        $n{$1}++ if $l =~ /pid (\d+)$/;
    }
    last if keys %n >= 2 || time() > $end;
    sleep(0.05);
}
is_deeply([sort { $a <=> $b } keys %n], \@new,
          'reload: init_child ran in each new child');
ok(!grep({ $_ != 1 } values %n), 'reload: once each');
$r = $t->http_get('/old/');
is($r->{status}, 200, 'reload: modules still serve');

# exit_child at a graceful stop
ok($t->stop, 'stop');
my %ex;
for my $l ($t->error_log =~ /t_info: exit_child (.*)$/mg) {
    $ex{$1} = 1 if $l =~ /pid (\d+)$/;
}
ok($ex{$new[0]} && $ex{$new[1]}, 'exit_child ran in each child at stop')
    or diag(explain \%ex);

$t->done;
