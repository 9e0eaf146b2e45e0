#!/usr/bin/perl
#
# gannetctl against the real daemon: exit codes (LSB) and messages of
# start, status, reload (good configuration; one `gannet -t` refuses; one
# a module's check refuses; one the master refuses), reopen-logs,
# restart, graceful-stop, stop, configtest, a stale pid file; status,
# reopen-logs and stop with a configuration that no longer loads; and the
# shipped gannet.conf.in / mime.types checked by `gannet -t`.
#
# Environment: GN_BIN (the daemon), GN_BUILDDIR (the build tree holding
# etc/gannetctl; default: two levels above GN_BIN, else /work/main),
# GN_SRCDIR (for etc/gannet.conf.in and etc/mime.types; default
# GN_BUILDDIR), TEST_GN_LEAVE (keep the temporary directory).

use strict;
use warnings;

use Test::More;
use File::Basename qw(dirname);
use File::Temp qw(tempdir);
use IO::Select;
use IO::Socket::INET;
use POSIX qw(:errno_h);

my ($builddir, $srcdir, $bin, $ctl, $ctl_pid, $dir, $port, %masters);

$bin = $ENV{GN_BIN};
$builddir = $ENV{GN_BUILDDIR};
if (!defined $builddir) {
    $builddir = defined $bin ? dirname(dirname($bin)) : '/work/main';
}
$bin //= "$builddir/core/gannet";
$srcdir = $ENV{GN_SRCDIR} // $builddir;
$ctl = "$builddir/etc/gannetctl";

plan skip_all => "no daemon at $bin (set GN_BIN)" unless -x $bin;
plan skip_all => "no $ctl (run make first)" unless -x $ctl;

$SIG{ALRM} = sub { die "timed out\n" };
alarm 120;

$dir = tempdir('gn-60-XXXXXX', TMPDIR => 1,
    CLEANUP => $ENV{TEST_GN_LEAVE} ? 0 : 1);
diag("test directory $dir") if $ENV{TEST_GN_LEAVE};

mkdir "$dir/logs" or die "mkdir: $!";
mkdir "$dir/html" or die "mkdir: $!";
write_file("$dir/html/index.html", "gannetctl test page\n");
copy_file("$srcdir/etc/mime.types", "$dir/mime.types");

$port = free_port();

my $pidfile = "$dir/logs/gannet.pid";
my $errlog = "$dir/logs/error.log";
my $user = $> == 0 ? 'root' : (getpwuid($>))[0];

# Relative paths: they are resolved against GANNET_PREFIX (-p), and the
# include against the directory of the configuration file.
my $good = <<"EOF";
user $user;
children 2;
pid logs/gannet.pid;
error_log logs/error.log info;
shutdown_timeout 3s;
include mime.types;

server {
    listen 127.0.0.1:$port;
    server_name localhost;
    root html;
    access_log logs/access.log;
}
EOF

my $bad = $good;
$bad =~ s/^(\s*)server_name localhost;$/$1server_name localhost;\n$1lsten 80;/m
    or die "cannot break the configuration";
my $bad_line = line_of($bad, qr/lsten/);

write_file("$dir/gannet.conf", $good);

$ENV{GANNET_BIN} = $bin;
$ENV{GANNET_CONF} = "$dir/gannet.conf";
$ENV{GANNET_PREFIX} = $dir;
delete $ENV{GANNET_STOP_TIMEOUT};
delete $ENV{GANNET_START_TIMEOUT};

my ($rc, $out, $err, $pid, $pid2);

# --- usage -------------------------------------------------------------------

($rc, $out, $err) = ctl();
is($rc, 2, 'no command: exit 2');
like($err, qr/usage/, 'no command: usage on stderr');

($rc, $out, $err) = ctl('bogus');
is($rc, 2, 'unknown command: exit 2');
like($err, qr/unknown command "bogus"/, 'unknown command: named');

# --- stopped server -----------------------------------------------------------

($rc, $out, $err) = ctl('status');
is($rc, 3, 'status, not running: exit 3');
like($out, qr/^gannet is not running$/m, 'status, not running: message');

($rc, $out, $err) = ctl('configtest');
is($rc, 0, 'configtest, good: exit 0') or diag($err);
like($err, qr/syntax is ok/, 'configtest, good: syntax is ok');
like($err, qr/test is successful/, 'configtest, good: test is successful');

# --- start, status, start again ----------------------------------------------

($rc, $out, $err) = ctl('start');
is($rc, 0, 'start: exit 0') or diag($out, $err, slurp($errlog));
($pid) = $out =~ /gannet started \(pid (\d+)\)/;
ok(defined $pid, 'start: prints the pid') or diag($out);
$pid //= 0;
$masters{$pid} = 1;

($rc, $out, $err) = ctl('status');
is($rc, 0, 'status, running: exit 0');
like($out, qr/^gannet is running \(pid $pid\)$/m, 'status: pid');
is(pid_from_file(), $pid, 'pid file names the master');
ok(kill(0, $pid), 'master is alive');

like(http_get('/'), qr/gannetctl test page/, 'serving');

($rc, $out, $err) = ctl('start');
is($rc, 0, 'start, already running: exit 0');
like($out, qr/gannet is already running \(pid $pid\)/,
    'start, already running: message');

# --- reload: good, then bad ---------------------------------------------------

# gannetctl reload waits for the master's verdict (no fixed sleep): once
# it returns, the reload is complete.
($rc, $out, $err) = ctl('reload');
is($rc, 0, 'reload, good configuration: exit 0') or diag($err);
like($out, qr/^gannet reloaded \(pid $pid, generation 2\)$/m,
     'reload, good configuration: the new generation') or diag($out, $err);
like(slurp($errlog), qr/reload complete, generation 2/,
     'reload, good configuration: complete when gannetctl returns');

write_file("$dir/gannet.conf", $bad);
my $reloads = () = slurp($errlog) =~ /reloading configuration/g;

($rc, $out, $err) = ctl('reload');
is($rc, 6, 'reload, bad configuration: exit 6 (LSB: not configured)');
like($err, qr/unknown directive "lsten" in \Q$dir\E\/gannet\.conf:$bad_line/,
    'reload, bad configuration: the error with file:line');
my $reloads2 = () = slurp($errlog) =~ /reloading configuration/g;
is($reloads2, $reloads, 'reload, bad configuration: master not signalled');

ok(pid_from_file() == $pid && kill(0, $pid),
    'still running after the bad reload');
like(http_get('/'), qr/gannetctl test page/, 'still serving');

# status and reopen-logs find the server while the configuration is broken
($rc, $out, $err) = ctl('status');
is($rc, 0, 'status, configuration broken: exit 0') or diag($out, $err);
like($out, qr/^gannet is running \(pid $pid\)$/m,
     'status, configuration broken: the master');
like($err, qr/warning: the configuration does not load: unknown directive/,
     'status, configuration broken: says the configuration is broken');

($rc, $out, $err) = ctl('reopen-logs');
is($rc, 0, 'reopen-logs, configuration broken: exit 0') or diag($err);

($rc, $out, $err) = ctl('restart');
is($rc, 6, 'restart, bad configuration: exit 6');
like($err, qr/lsten/, 'restart, bad configuration: the error');
ok(pid_from_file() == $pid && kill(0, $pid),
    'restart, bad configuration: same master still running');

# a configuration the master refuses (`gannet -t` cannot see a port in
# use): gannetctl reload says why and exits 1; the old one keeps serving
my $bport = 0;
{
    my $busy = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                     Listen => 1, ReuseAddr => 1)
        or die "listen: $!";
    $bport = $busy->sockport;
    my $refused = $good;
    $refused =~ s/^(\s*)listen 127\.0\.0\.1:$port;$/$1listen 127.0.0.1:$port;\n$1listen 127.0.0.1:$bport;/m
        or die "cannot add a listener";
    write_file("$dir/gannet.conf", $refused);

    ($rc, $out, $err) = ctl('reload');
    is($rc, 1, 'reload the master refuses: exit 1') or diag($out, $err);
    like($err, qr/bind\(\) to 127\.0\.0\.1:$bport failed/,
         "reload the master refuses: the master's reason");
    like($err, qr/reload refused, gannet \(pid $pid\) still runs the previous/,
         'reload the master refuses: the previous configuration runs');
    like(http_get('/'), qr/gannetctl test page/, 'still serving');
}

# a module's configuration check refuses a value: gannet -t already says
# where
SKIP: {
    my $mod = ($ENV{GN_MODDIR} // "$builddir/modules/.libs") . '/mod_status.so';
    skip "no $mod", 3 unless -f $mod;
    my $checked = "load_module $mod;\nstatus_sample_interval 2h;\n$good";
    write_file("$dir/gannet.conf", $checked);

    ($rc, $out, $err) = ctl('reload');
    is($rc, 6, "reload, a module's check refuses: exit 6");
    like($err, qr/"status_sample_interval" directive must be 0 \(off\) or (?#
                 )from 1s to 1h, not 7200000 ms in \Q$dir\E\/gannet\.conf:2$/m,
         "reload, a module's check refuses: its reason at file:line")
        or diag($err);
    like(http_get('/'), qr/gannetctl test page/, 'still serving');
}

write_file("$dir/gannet.conf", $good);

($rc, $out, $err) = ctl('status');
is($rc, 0, 'status with the configuration repaired: exit 0');
like($out, qr/running \(pid $pid\)/, 'status: the same master');

# --- reopen-logs ---------------------------------------------------------------

rename($errlog, "$errlog.1") or die "rename: $!";
($rc, $out, $err) = ctl('reopen-logs');
is($rc, 0, 'reopen-logs: exit 0') or diag($err);
ok(wait_file($errlog), 'reopen-logs: error log reopened');

# --- restart -------------------------------------------------------------------

($rc, $out, $err) = ctl('restart');
is($rc, 0, 'restart: exit 0') or diag($out, $err);
($pid2) = $out =~ /gannet started \(pid (\d+)\)/;
ok(defined $pid2 && $pid2 != $pid, 'restart: a new master');
$pid = $pid2 // 0;
$masters{$pid} = 1;
like(http_get('/'), qr/gannetctl test page/, 'serving after restart');

# --- graceful-stop, then stop / graceful-stop / reload when stopped --------------

($rc, $out, $err) = ctl('graceful-stop');
is($rc, 0, 'graceful-stop: exit 0') or diag($out, $err);
like($out, qr/gannet stopped/, 'graceful-stop: stopped');
ok(!kill(0, $pid), 'graceful-stop: master gone');

($rc, $out, $err) = ctl('status');
is($rc, 3, 'status after graceful-stop: exit 3');

($rc, $out, $err) = ctl('stop');
is($rc, 0, 'stop, not running: exit 0');
like($out, qr/^gannet is not running$/m, 'stop, not running: message');

($rc, $out, $err) = ctl('graceful-stop');
is($rc, 0, 'graceful-stop, not running: exit 0');

($rc, $out, $err) = ctl('reload');
is($rc, 7, 'reload, not running: exit 7');
like($err, qr/not running/, 'reload, not running: message');

($rc, $out, $err) = ctl('reopen-logs');
is($rc, 7, 'reopen-logs, not running: exit 7');

# --- stale pid file -------------------------------------------------------------

my $dead = dead_pid();
write_file($pidfile, "$dead\n");

($rc, $out, $err) = ctl('status');
is($rc, 1, 'status, stale pid file: exit 1 (LSB: dead, pid file exists)');
like($out, qr/^gannet is not running \(stale pid file\)$/m,
    'status, stale pid file: message');

($rc, $out, $err) = ctl('start');
is($rc, 0, 'start over a stale pid file: exit 0') or diag($out, $err);
like($out, qr/removing stale pid file/, 'start: stale pid file removed');
($pid) = $out =~ /gannet started \(pid (\d+)\)/;
$pid //= 0;
$masters{$pid} = 1;
is(pid_from_file(), $pid, 'start over a stale pid file: new pid file');

# stop with a configuration that no longer loads (pid found by a scan)
write_file("$dir/gannet.conf", $bad);
($rc, $out, $err) = ctl('stop');
is($rc, 0, 'stop, configuration broken: exit 0') or diag($out, $err);
like($out, qr/gannet stopped/, 'stop: stopped');
ok(!kill(0, $pid), 'stop: master gone');

($rc, $out, $err) = ctl('status');
is($rc, 3, 'status after stop: exit 3');
write_file("$dir/gannet.conf", $good);

# --- broken configurations -------------------------------------------------------

write_file("$dir/bad.conf", "pid logs/gannet.pid;\n\nlsten 80;\n");
{
    local $ENV{GANNET_CONF} = "$dir/bad.conf";

    ($rc, $out, $err) = ctl('configtest');
    is($rc, 6, 'configtest, bad: exit 6');
    like($err, qr/\Q$dir\E\/bad\.conf:3/, 'configtest, bad: file:line');
    like($err, qr/test failed/, 'configtest, bad: test failed');

    ($rc, $out, $err) = ctl('start');
    is($rc, 6, 'start, bad configuration: exit 6');
    like($err, qr/bad\.conf:3/, 'start, bad configuration: file:line');
}

($rc, $out, $err) = ctl('status');
is($rc, 3, 'not running after the failed start');

# --- the shipped configuration and mime.types parse ---------------------------

SKIP: {
    my $in = "$srcdir/etc/gannet.conf.in";
    skip "no $in", 2 unless -f $in;

    my $root = "$dir/inst";
    for my $d ($root, "$root/etc", "$root/var", "$root/var/run",
        "$root/var/log", "$root/var/log/gannet", "$root/share",
        "$root/share/gannet", "$root/share/gannet/html")
    {
        mkdir $d or die "mkdir $d: $!";
    }

    my $conf = slurp($in);
    my %subst = (
        prefix => $root, sbindir => "$root/sbin",
        sysconfdir => "$root/etc", localstatedir => "$root/var",
        datadir => "$root/share", PACKAGE_VERSION => '0.1.0',
        # the modules as built in the tree
        pkglibdir => $ENV{GN_MODDIR} // "$builddir/modules/.libs",
    );
    $conf =~ s/\@(\w+)\@/$subst{$1} \/\/ die "unknown \@$1\@"/ge;
    write_file("$root/etc/gannet.conf", $conf);
    copy_file("$srcdir/etc/mime.types", "$root/etc/mime.types");

    local $ENV{GANNET_CONF} = "$root/etc/gannet.conf";
    local $ENV{GANNET_PREFIX} = $root;

    ($rc, $out, $err) = ctl('configtest');
    is($rc, 0, 'shipped gannet.conf.in and mime.types: configtest ok')
        or diag($err);
    unlike($err, qr/\[(emerg|alert|crit|error|warn)\]/,
        'shipped configuration: no warnings');

    # its commented-out proxy, PHP, assets and listing examples,
    # uncommented, are valid too (with the shipped fastcgi_params)
    copy_file("$srcdir/etc/fastcgi_params", "$root/etc/fastcgi_params");
    my ($px, $in_block, $n) = ('', 0, 0);
    for my $l (split /^/, $conf) {
        $in_block = 1
            if $l =~ /^\s*#(upstream app|location \/app\/|location ~ \S+php|location \/assets\/|location \/downloads\/)/;
        $l =~ s/#// if $l =~ /^\s*#location \@missing/;
        if ($in_block) {
            $l =~ s/#//;
            $n++, $in_block = 0 if $l =~ /^\s*\}$/;
        }
        $px .= $l;
    }
    write_file("$root/etc/gannet.conf", $px);
    ($rc, $out, $err) = ctl('configtest');
    ok($n == 5 && $rc == 0, 'the shipped proxy, PHP, assets and listing '
       . 'examples, uncommented: configtest ok') or diag($err);
}

# --- the daemon logged no trouble -------------------------------------------------

my $logs = slurp("$errlog.1") . slurp($errlog);
$logs =~ s/^.*\[emerg\] .*bind\(\) to 127\.0\.0\.1:$bport failed.*\n//mg;  # above
unlike($logs, qr/\[(alert|crit|emerg)\]|AddressSanitizer|runtime error:/,
    'no alert, crit or emerg in the error log') or diag($logs);

done_testing();


# --- helpers ---------------------------------------------------------------------

# Runs gannetctl; returns (exit status, stdout, stderr). Output goes through
# files, not pipes, so a daemon keeping a descriptor cannot hang us.
sub ctl {
    my @args = @_;
    my $o = "$dir/ctl.out";
    my $e = "$dir/ctl.err";
    my $pid = fork() // die "fork: $!";

    if ($pid == 0) {
        setpgrp(0, 0);
        open(STDIN, '<', '/dev/null') or die;
        open(STDOUT, '>', $o) or die;
        open(STDERR, '>', $e) or die;
        exec($ctl, @args) or POSIX::_exit(127);
    }
    $ctl_pid = $pid;
    waitpid($pid, 0);
    $ctl_pid = undef;
    my $status = $? >> 8;

    my ($so, $se) = (slurp($o), slurp($e));
    note("gannetctl @args -> $status\n$so$se");
    return ($status, $so, $se);
}


sub http_get {
    my ($uri) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
        Proto => 'tcp', Timeout => 5) or return "connect: $!";
    $s->syswrite("GET $uri HTTP/1.0\r\nHost: localhost\r\n\r\n");

    my $sel = IO::Select->new($s);
    my $end = time() + 10;
    my ($r, $buf) = ('', '');
    while (time() < $end && $sel->can_read(1)) {
        my $n = $s->sysread($buf, 65536);
        last unless $n;
        $r .= $buf;
    }
    return $r;
}


sub free_port {
    my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
        Proto => 'tcp', Listen => 1, ReuseAddr => 1)
        or die "cannot bind a port: $!";
    my $p = $s->sockport();
    close $s;
    return $p;
}


# A pid that no process has now.
sub dead_pid {
    for my $p (999999, 999998, 888888, 777777, 99999, 65000) {
        return $p if !kill(0, $p) && $! == ESRCH;
    }
    die "no free pid found";
}


sub pid_from_file {
    my $s = slurp($pidfile);
    return $s =~ /(\d+)/ ? $1 : -1;
}


sub wait_log {
    my ($re) = @_;
    for (1 .. 50) {
        return 1 if slurp($errlog) =~ $re;
        select(undef, undef, undef, 0.2);
    }
    return 0;
}


sub wait_file {
    my ($f) = @_;
    for (1 .. 50) {
        return 1 if -e $f;
        select(undef, undef, undef, 0.2);
    }
    return 0;
}


sub line_of {
    my ($text, $re) = @_;
    my $n = 0;
    for my $l (split /\n/, $text) {
        $n++;
        return $n if $l =~ $re;
    }
    die "no line matches $re";
}


sub slurp {
    my ($f) = @_;
    open(my $fh, '<', $f) or return '';
    local $/;
    my $s = <$fh>;
    return $s // '';
}


sub write_file {
    my ($f, $s) = @_;
    open(my $fh, '>', $f) or die "open $f: $!";
    print $fh $s;
    close $fh or die "close $f: $!";
}


sub copy_file {
    my ($from, $to) = @_;
    my $s = slurp($from);
    die "cannot read $from" if $s eq '';
    write_file($to, $s);
}


# The processes whose parent is $ppid.
sub children_of {
    my ($ppid) = @_;
    my @kids;
    for my $stat (glob '/proc/[0-9]*/stat') {
        my $s = slurp($stat);
        push @kids, $1 if $s =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $ppid;
    }
    return @kids;
}


# The processes other than us holding a file under $d open (a daemon
# started from $d holds its logs open).
sub users_of {
    my ($d) = @_;
    my @p;
    for my $fd (glob '/proc/[0-9]*/fd/*') {
        my ($pid) = $fd =~ m{^/proc/(\d+)/};
        next if $pid == $$;
        my $t = readlink($fd) // next;
        push @p, $pid if index($t, "$d/") == 0;
    }
    my %u = map { $_ => 1 } @p;
    return keys %u;
}


# Nothing may outlive the test: stop a gannetctl still running (with what
# it started), then TERM every master seen, its children and whatever
# still holds a file of the test directory, then KILL what is left.
END {
    my $code = $?;
    if (defined $ctl_pid) {
        kill('TERM', -$ctl_pid);
        waitpid($ctl_pid, 0);
        select(undef, undef, undef, 0.5);
    }
    if (defined $dir) {
        my %p = %masters;
        my $f = pid_from_file();
        $p{$f} = 1 if $f > 1;
        my @live = grep { $_ > 1 && kill(0, $_) } keys %p;
        push @live, children_of($_) for @live;
        push @live, users_of($dir);
        if (@live) {
            kill('TERM', @live);
            for (1 .. 25) {
                last unless grep { kill(0, $_) } @live;
                select(undef, undef, undef, 0.2);
            }
            kill('KILL', @live);
        }
    }
    $? = $code;
}
