#!/usr/bin/perl

# The binary upgrade (issue 21): `gannetctl upgrade` under wrk load over
# HTTP and TLS starts the binary installed at the running one's path as
# a new master that takes the listening sockets over (LISTEN_FDS), then
# stops the old one gracefully: zero failed requests, the pid file names
# the new master, no .oldbin is left, and sessions made before the
# upgrade resume after it: TLS 1.3 tickets (tls_ticket_key_file) and TLS
# 1.2 session ids (the shared-memory cache, passed as a memfd), and the
# status page's request total carries what the old master's children
# served (the scoreboard, passed too). A new binary that does not start
# rolls back: `gannet -s upgrade` says so and exits 1,
# the old master takes its pid file back and serves on; a configuration
# that does not load is refused before anything is sent, and a second
# upgrade waits (USR2 ignored) until the master the running one replaced
# is gone, whose totals it then takes over.

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;
use GnLoad;

my $t = GnTest->new(timeout => 120);
GnTLS::init($t, 'openssl');
my ($wrk, $nowrk) = GnLoad::prepare($t);
plan(skip_all => $nowrk) unless $wrk;
$t->skip_under_valgrind('a master under valgrind execs its successor '
                        . 'outside it');

my $dir = $t->testdir;
my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
my $status = -f "$ENV{GN_MODDIR}/mod_status.so";
diag('no mod_status: the checks of the totals are skipped') unless $status;
my $ctl = "$top/etc/gannetctl";
plan(skip_all => "no $ctl (run make first)") unless -x $ctl;

# the installed binary: a copy, so that a new one can be put in its place
my ($orig, $sbin) = $t->bin_installed_copy;

my $key = "$dir/ticket.key";
$t->write_file('ticket.key', join('', map { chr(int(rand(256))) } 1 .. 64));
chmod(0600, $key);

my $body = "upgrade under load\n" x 20;
$t->write_file('html/index.html', $body);
my $conf87 = <<'EOF';
children 2;
user %%USER%%;
shutdown_timeout 10s;
error_log logs/error.log info;
access_log off;
%%STATUS_MODULE%%
tls_ticket_key_file ticket.key;
types { text/html html; }

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    location = /status { handler status; }
}

server {
    listen 127.0.0.1:%%PORT_2%% tls;
    server_name localhost;
    tls_protocols TLSv1.2;
    tls_session_tickets off;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
}
EOF
$conf87 =~ s{%%STATUS_MODULE%%\n}
            {$status ? "load_module %%MODDIR%%/mod_status.so;\n" : ''}e;
$conf87 =~ s{ *location = /status \{ handler status; \}\n}{} unless $status;
$t->write_conf($conf87);
$t->run;
my $old = $t->master_pid;
my $pidfile = $t->pid_file;

sub s13
{
    return GnTLS::s_client($t, port => $t->port(1), tls => '1.3', @_);
}

my $sess = "$dir/s13.pem";
my $r = s13(sess_out => $sess);
is($r->{reused}, 0, 'before: a TLS 1.3 session, full handshake');

# a TLS 1.2 session id: in the shared-memory cache only
sub s12
{
    return GnTLS::s_client($t, port => $t->port(2), tls => '1.2',
                           args => ['-no_ticket'], @_);
}
my $sess12 = "$dir/s12.pem";
$r = s12(sess_out => $sess12);
is($r->{reused}, 0, 'before: a TLS 1.2 session id, full handshake');
is(s12(sess_in => $sess12)->{reused}, 1, 'before: it resumes');

sub ctl
{
    my @env = ("GANNET_BIN=$sbin", 'GANNET_CONF=' . $t->conf_path,
               "GANNET_PREFIX=$dir/");
    my ($rc, $out, $err) = $t->run_client(['env', @env, $ctl, @_],
                                          timeout => 60);
    return ($rc, "$out$err");
}

sub master_of_pidfile
{
    my $p = $t->read_file($pidfile) // '';
    return $p =~ /^(\d+)/ ? $1 : 0;
}

# the server's request total (children now and reaped, Prometheus)
sub requests_total
{
    my $b = $t->http_get('/status?format=prometheus')->{body} // '';
    return $b =~ /^gannet_requests_total (\d+)$/m ? $1 : -1;
}

$t->http_get('/index.html') for 1 .. 20;
my $before = $status ? requests_total() : 20;
ok($before >= 20, "before: $before requests counted");

# ---- under load -------------------------------------------------------------

my $w1 = GnLoad::wrk_start($t, connections => 10, threads => 1,
                           duration => 30);
my $w2out = "$dir/wrk-tls.out";
my $w2 = { pid => $t->spawn([$wrk, '-t', 1, '-c', 10, '-d', '30s',
                             '--timeout', '10s',
                             'https://127.0.0.1:' . $t->port(1) . '/'],
                            out => $w2out),
           out => $w2out };
sleep(1.5);

# a new binary at the path: another file (inode) with the same program
copy($orig, "$sbin.new") or die "copy: $!";
chmod(0755, "$sbin.new");
rename("$sbin.new", $sbin) or die "rename: $!";
my $ino = (stat $sbin)[1];

my ($rc, $out) = ctl('upgrade');
is($rc, 0, 'gannetctl upgrade: exit 0') or diag($out);
like($out, qr/gannet upgraded \(pid (\d+), was $old\)/,
     'gannetctl upgrade: names the new and the old master');
my $new = master_of_pidfile();
ok($new && $new != $old, "the pid file names the new master ($new)");
ok(!$t->alive($old), 'the old master is gone');
ok(!-e "$pidfile.oldbin", 'no .oldbin left');
is((stat "/proc/$new/exe")[1], $ino, 'the new master runs the new file');
sleep(1.5);

my $r1 = GnLoad::wrk_stop($t, $w1);
my $r2 = GnLoad::wrk_stop($t, $w2);
ok(($r1->{requests} // 0) > 0, 'HTTP load ran: ' . GnLoad::wrk_text($r1));
is($r1->{errors}, 0, 'HTTP: no failed request across the upgrade')
    or diag($r1->{raw});
ok(($r2->{requests} // 0) > 0, 'TLS load ran: ' . GnLoad::wrk_text($r2));
is($r2->{errors}, 0, 'TLS: no failed request across the upgrade')
    or diag($r2->{raw});

# the old master's children served the first part of the load and what
# their connections still held after the upgrade: the new master's total
# carries all of it (a server counts at least what wrk saw answered)
my $after = $status ? requests_total() : -1;
my $served = $before + $r1->{requests} + $r2->{requests};
SKIP: {
skip('no mod_status', 1) unless $status;
ok($after >= $served, "the request total survives the upgrade: $after, "
   . "at least $before before + $r1->{requests} + $r2->{requests} by wrk");
}

$r = s13(sess_in => $sess);
is($r->{reused}, 1, 'a TLS 1.3 session from before the upgrade resumes')
    or diag($r->{all});
is($r->{status}, 200, 'and is answered');
$r = s12(sess_in => $sess12);
is($r->{reused}, 1, 'a TLS 1.2 session id from before the upgrade resumes: '
   . 'the new master has the old one\'s cache') or diag($r->{all});
is($r->{status}, 200, 'and is answered');
like($t->error_log, qr/binary upgrade: new master $new runs \Q$sbin\E/,
     'the old master logged the upgrade');

# ---- a new binary that does not start: rollback -----------------------------

$t->write_file('sbin/gannet.bad',
               "#!/bin/sh\necho 'broken new binary' >&2\nexit 1\n");
chmod(0755, "$sbin.bad");
rename("$sbin.bad", $sbin) or die "rename: $!";
my ($rc2, $o2, $e2) = $t->run_client([$orig, '-s', 'upgrade', '-p', "$dir/",
                                      '-c', $t->conf_path], timeout => 60);
is($rc2, 1, 'gannet -s upgrade with a broken binary: exit 1');
like("$o2$e2", qr/upgrade failed, the server \(pid $new\) still runs/,
     'it says the old master still runs');
is(master_of_pidfile(), $new, 'the pid file is the old master\'s again');
ok(!-e "$pidfile.oldbin", 'no .oldbin left');
ok($t->wait_log(qr/binary upgrade failed: the new master exited with code 1/,
                5), 'the master logged the failure');
ok(kill(0, $new), 'the master still runs');
is($t->http_get('/index.html')->{status}, 200, 'and serves');

# ---- a configuration that does not load: refused up front -------------------

copy($orig, $sbin) or die "copy: $!";
chmod(0755, $sbin);
my $conf = $t->read_file($t->conf_path);
$t->write_file('gannet.conf', "no_such_directive 1;\n$conf");
($rc, $out) = ctl('upgrade');
is($rc, 6, 'gannetctl upgrade, broken configuration: exit 6');
like($out, qr/configuration test failed, not upgrading/,
     'it says why');
is(master_of_pidfile(), $new, 'the master is unchanged');
$t->write_file('gannet.conf', $conf);

# ---- a second upgrade while the first is not finished -----------------------

# `gannet -s upgrade` alone leaves the old master serving: the new one
# reads its totals from the old scoreboard and takes no USR2 meanwhile
($rc2, $o2, $e2) = $t->run_client([$orig, '-s', 'upgrade', '-p', "$dir/",
                                   '-c', $t->conf_path], timeout => 60);
is($rc2, 0, 'gannet -s upgrade: exit 0') or diag("$o2$e2");
my $third = master_of_pidfile();
ok($third && $third != $new, "a third master ($third)");
ok(kill('USR2', $third), 'USR2 to it while the second still runs');
ok($t->wait_log(qr/$third#-: SIGUSR2 ignored: the master this one replaced/,
                5), 'is ignored, and logged');
my $mid = $status ? requests_total() : 0;
ok(!$status || $mid >= $after, "the total goes on meanwhile: $mid");

kill('QUIT', $new);
my $end = time() + 15;
sleep(0.05) while kill(0, $new) && time() < $end;
ok(!kill(0, $new), 'the second master stops on QUIT');
ok($t->wait_log(qr/$third#-: the totals of the old master $new \(\d+ req/,
                5), 'the third master takes its totals over');
my $last = $status ? requests_total() : 0;
ok(!$status || $last >= $mid, "and the total never went back: $last");

# the new master is not the harness's child: stop it by its pid file
kill('QUIT', $third);
$end = time() + 15;
sleep(0.05) while kill(0, $third) && time() < $end;
ok(!kill(0, $third), 'the new master stops on QUIT');

$t->expect_log(qr/binary upgrade failed/);
$t->done;
