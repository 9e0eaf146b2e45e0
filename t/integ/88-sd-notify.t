#!/usr/bin/perl

# systemd's readiness protocol (sd_notify(3); the shipped gannet.service
# is Type=notify, NotifyAccess=all): with NOTIFY_SOCKET set, the master
# says READY=1 with its MAINPID once it serves, RELOADING=1 and READY=1
# again around a reload (a failed one too), STOPPING=1 when it stops.
# A binary upgrade's new master says READY=1 with its own MAINPID, so
# that systemd follows it; the old master, replaced, stops without
# STOPPING=1 (which would end the service), and after a failed upgrade
# the old one takes MAINPID back. The socket here is a datagram socket
# of the test's own, as systemd's.

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use IO::Select;
use IO::Socket::UNIX;
use Socket qw(SOCK_DGRAM);
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new(timeout => 60);
$t->skip_under_valgrind('a master under valgrind execs its successor '
                        . 'outside it');
my $dir = $t->testdir;

my $path = "$dir/notify.sock";
my $sock = IO::Socket::UNIX->new(Type => SOCK_DGRAM, Local => $path)
    or die "notify socket: $!";
$ENV{NOTIFY_SOCKET} = $path;

# the installed binary: a copy, so that a new one can be put in its place
my ($orig, $sbin) = $t->bin_installed_copy;

$t->write_file('html/index.html', "notify\n");
my $conf = <<'EOF';
children 2;
user %%USER%%;
shutdown_timeout 5s;
error_log logs/error.log info;
server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
}
EOF
$t->write_conf($conf);

# the next datagram, or undef after the timeout
sub msg
{
    my ($timeout) = @_;
    my $sel = IO::Select->new($sock);
    my $m;

    return undef unless $sel->can_read(GnTest::slow($timeout // 10));
    $sock->recv($m, 4096);
    return $m;
}

sub fields
{
    my ($m) = @_;
    return { map { /^([A-Z_]+)=(.*)$/ ? ($1, $2) : () }
             split /\n/, $m // '' };
}

sub pidfile_master
{
    my $p = $t->read_file($t->pid_file) // '';
    return $p =~ /^(\d+)/ ? $1 : 0;
}

sub gannet_s
{
    my ($bin, $sig) = @_;
    my ($rc, $out, $err) = $t->run_client([$bin, '-s', $sig, '-p', "$dir/",
                                           '-c', $t->conf_path],
                                          timeout => 60);
    return ($rc, "$out$err");
}

$t->run;
my $master = $t->master_pid;

my $f = fields(msg());
is($f->{READY}, 1, 'READY=1 once the master serves');
is($f->{MAINPID}, $master, 'with MAINPID, the master');
like($f->{STATUS} // '', qr/^serving, 2 children$/, 'and a STATUS');
is($t->http_get('/index.html')->{status}, 200, 'it serves');

# ---- reload -----------------------------------------------------------------

my ($rc, $out) = gannet_s($sbin, 'reload');
is($rc, 0, 'reload') or diag($out);
is(fields(msg())->{RELOADING}, 1, 'RELOADING=1');
$f = fields(msg());
is($f->{READY}, 1, 'then READY=1');
like($f->{STATUS} // '', qr/^serving, generation 2$/, 'the new generation');

$t->write_file('gannet.conf', "no_such_directive 1;\n" . $t->read_file(
    'gannet.conf'));
# (`gannet -s reload` would test it first and send nothing: HUP itself)
ok(kill('HUP', $master), 'a reload that fails');
is(fields(msg())->{RELOADING}, 1, 'RELOADING=1');
$f = fields(msg());
is($f->{READY}, 1, 'READY=1 all the same: it serves on');
like($f->{STATUS} // '', qr/^reload failed, serving generation 2$/,
     'saying so');
$t->write_conf($conf);

# ---- a binary upgrade that fails: MAINPID back ------------------------------

$t->write_file('sbin/gannet.bad', "#!/bin/sh\nexit 1\n");
chmod(0755, "$sbin.bad");
rename("$sbin.bad", $sbin) or die "rename: $!";
($rc, $out) = gannet_s($orig, 'upgrade');
is($rc, 1, 'an upgrade to a broken binary fails') or diag($out);
$f = fields(msg());
is($f->{MAINPID}, $master, 'the old master takes MAINPID back');
is($f->{READY}, 1, 'READY=1');

# ---- a binary upgrade: the new master is the main process -------------------

copy($orig, "$sbin.new") or die "copy: $!";
chmod(0755, "$sbin.new");
rename("$sbin.new", $sbin) or die "rename: $!";
($rc, $out) = gannet_s($orig, 'upgrade');
is($rc, 0, 'an upgrade') or diag($out);
my $new = pidfile_master();
ok($new && $new != $master, "a new master ($new)");
$f = fields(msg());
is($f->{MAINPID}, $new, 'it says MAINPID, its own');
is($f->{READY}, 1, 'and READY=1');

kill('QUIT', $master);
my $end = time() + GnTest::slow(15);
sleep(0.05) while $t->alive($master) && time() < $end;
ok(!$t->alive($master), 'the old master stops on QUIT');
is(msg(1), undef, 'without a word: no STOPPING=1 from a replaced master');
is($t->http_get('/index.html')->{status}, 200, 'the new master serves');

kill('QUIT', $new);
$f = fields(msg());
is($f->{STOPPING}, 1, 'STOPPING=1 from the new master on QUIT');
$end = time() + GnTest::slow(15);
sleep(0.05) while kill(0, $new) && time() < $end;
ok(!kill(0, $new), 'and it stops');

$t->expect_log(qr/binary upgrade failed/);
$t->expect_log(qr/unknown directive "no_such_directive"/);
$t->done;
