#!/usr/bin/perl

# End-to-end guard for the shared TLS session cache lock: many concurrent
# TLS 1.2 full handshakes and resumptions (tickets off, so every full
# handshake stores a session in the cache) while children are SIGKILLed
# repeatedly.  A child killed while it holds the cache lock must not stop
# the others from storing and resuming sessions afterwards.  (The unit
# test of the cache covers the exact case deterministically.)

use strict;
use warnings;

use Test::More;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 90);
GnTLS::init($t);

my $lf = $GnTLS::LOG_FORMAT;

$t->write_conf(<<"EOF");
children 4;
user %%USER%%;
tls_session_tickets off;
tls_session_cache 1m;
$lf

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    access_log logs/access.log tls;
    types { text/html html; }
}
EOF
$t->write_file('html/index.html', "lock\n");

$t->expect_log(qr/\[alert\] .*exited on signal 9/);
$t->expect_log(qr/\[alert\] .*died \d+ times in a row/);
$t->expect_log(qr/\[alert\] .*(?:lock|session cache)/i);

$t->run;
my @kids = $t->wait_children(4, 5);
is(scalar @kids, 4, '4 children');

my $port = $t->port(0);
my $dir = $t->testdir;
my $ca = GnTLS::ca();
my $storm = 5;          # seconds
my $nworkers = 6;

# Runs one s_client to completion (max 5 s); true if it handshook.
sub one_client
{
    my (@args) = @_;
    my $pid = fork();

    return 0 unless defined $pid;
    if ($pid == 0) {
        POSIX::setpgid(0, 0);
        open(STDIN, '<', '/dev/null');
        open(STDOUT, '>', '/dev/null');
        open(STDERR, '>', '/dev/null');
        { no warnings 'exec';
          exec('openssl', 's_client', '-connect', "127.0.0.1:$port",
             '-servername', 'localhost', '-CAfile', $ca, '-tls1_2',
             '-no_ticket', '-no_ign_eof', @args); }
        POSIX::_exit(127);
    }
    my $end = time() + GnTest::slow(5);
    while (time() < $end) {
        return $? == 0 if waitpid($pid, WNOHANG) == $pid;
        sleep(0.01);
    }
    kill('KILL', -$pid, $pid);
    waitpid($pid, 0);
    return 0;
}

# the load: each worker loops full handshake (store) + 2 resumptions
my @workers;
my $until = time() + $storm;
for my $w (1 .. $nworkers) {
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        $SIG{ALRM} = 'DEFAULT';
        alarm($storm + 15);
        my $sess = "$dir/w$w.sess";
        my ($n, $ok) = (0, 0);
        while (time() < $until) {
            $n++;
            $ok++ if one_client('-sess_out', $sess);
            next unless -s $sess;
            for (1 .. 2) {
                $n++;
                $ok++ if one_client('-sess_in', $sess);
            }
        }
        open(my $fh, '>', "$dir/w$w.count");
        print $fh "$n $ok\n";
        close $fh;
        POSIX::_exit(0);
    }
    push @workers, $pid;
}

# the killer: SIGKILL a child that has lived > 1.2 s (no respawn back-off)
my %born = map { $_ => time() - 10 } @kids;
my $kills = 0;
while (time() < $until) {
    my @now = $t->children;
    for my $k (@now) {
        $born{$k} //= time();
    }
    my @old = grep { time() - $born{$_} > 1.2 } @now;
    if (@old) {
        kill('KILL', $old[int(rand(@old))]);
        $kills++;
    }
    sleep(0.25);
}
waitpid($_, 0) for @workers;

my ($total, $good) = (0, 0);
for my $w (1 .. $nworkers) {
    my $c = $t->read_file("w$w.count") // '';
    my ($n, $ok) = $c =~ /(\d+) (\d+)/;
    $total += $n // 0;
    $good += $ok // 0;
}
diag("storm: $total connections, $good handshakes, $kills children killed")
    if $ENV{TEST_GN_VERBOSE};
cmp_ok($kills, '>=', 5, 'children were killed during the load');
# (under valgrind a handshake costs ~20 times more: fewer fit the storm)
cmp_ok($good, '>=', GnTest::valgrind() ? 5 : 50,
       'handshakes succeeded during the load')
    or diag("$good of $total");

ok($t->running, 'master still running');
my @after = $t->wait_children(4, 10);
is(scalar @after, 4, '4 children again');
sleep(0.5);

# Afterwards: new sessions are still stored and resumed.
my $r;
for my $round (1 .. 2) {
    my $sess = "$dir/after$round.sess";
    $r = GnTLS::s_client($t, tls => '1.2', args => ['-no_ticket'],
                         sess_out => $sess);
    is($r->{reused}, 0, "round $round: a new full handshake")
        or diag($r->{all});
    is($r->{status}, 200, "round $round: 200");
    my $n = 0;
    for my $i (1 .. 20) {
        $r = GnTLS::s_client($t, tls => '1.2', args => ['-no_ticket'],
                             sess_in => $sess, path => "/?a$round-$i");
        $n++ if $r->{reused} && ($r->{status} // 0) == 200;
    }
    is($n, 20, "round $round: 20 of 20 resumed after the storm");
}

my @l = GnTLS::wait_lines($t, undef, 1, 3);
my %pids = map { $_->{pid} => 1 }
           grep { $_->{uri} =~ m{^/\?a\d-\d+$} && $_->{resumed} eq 'r' } @l;
cmp_ok(scalar keys %pids, '>=', 2, 'resumed on at least 2 children');

my $log = $t->error_log;
my @odd = grep { /\[(?:alert|crit|emerg)\]/ && !/exited on signal 9/
                 && !/died \d+ times in a row/ } split /\n/, $log;
diag("other alerts (allowed: lock recovery):\n" . join("\n", @odd)) if @odd;
unlike($log, qr/\[(?:crit|emerg)\]/, 'no [crit] or [emerg] in the error log');

$t->done;
