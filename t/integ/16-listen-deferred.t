#!/usr/bin/perl

# "listen ... deferred" (TCP_DEFER_ACCEPT), the default (as H2O's and
# Apache's; "deferred=off" turns it off): the kernel keeps a connection
# that has sent nothing away from accept(), so the server side of a silent
# connection stays in SYN_RECV (/proc/net/tcp state 03) where a
# "deferred=off" listener has it ESTABLISHED (01). A request on it is
# served; a silent one reaches the server after the kernel's retries and
# is closed by client_header_timeout; a reload turns the option on and off
# on a kept socket; `gannet -t` names a misspelt parameter and refuses
# "deferred" with "deferred=off" on one address.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use GnTest;

plan(skip_all => 'no /proc/net/tcp') unless -r '/proc/net/tcp';

my $t = GnTest->new;

sub conf
{
    my ($plain_opt, $defer_opt) = @_;
    $t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
shutdown_timeout 5s;

server {
    listen 127.0.0.1:%%PORT_0%% $plain_opt;
    listen 127.0.0.1:%%PORT_1%% $defer_opt;
    client_header_timeout 2s;
    types { text/html html; }
}
EOF_CONF
}

# The server-side state of the connection from client port $cport to
# server port $sport, from /proc/net/tcp ("0100007F:1F90" addresses).
sub server_state
{
    my ($sport, $cport) = @_;
    open my $fh, '<', '/proc/net/tcp' or return '';
    while (my $line = <$fh>) {
        my @f = split ' ', $line;
        next unless @f > 3 && $f[1] =~ /:([0-9A-F]{4})$/;
        my $local = hex $1;
        next unless $f[2] =~ /:([0-9A-F]{4})$/;
        my $remote = hex $1;
        return $f[3] if $local == $sport && $remote == $cport;
    }
    return '';
}

# Opens a silent connection to $port and returns it with the state the
# server side shows a moment later.
sub silent
{
    my ($port) = @_;
    my $s = $t->connect(port => $port) or return (undef, 'connect failed');
    my $state = '';
    my $end = time() + 0.5;
    while (time() < $end) {
        $state = server_state($port, $s->sockport);
        last if $state ne '' && $state ne '03';
        sleep(0.05);
    }
    return ($s, $state);
}

conf('deferred=off', '');
$t->write_file('html/index.html', "index\n");
$t->run;

my ($p0, $p1) = ($t->port(0), $t->port(1));

my ($s0, $st0) = silent($p0);
is($st0, '01', 'deferred=off: a silent connection is ESTABLISHED');
my ($s1, $st1) = silent($p1);
is($st1, '03', 'the default listener: a silent connection waits in SYN_RECV');

# Data on the waiting connection completes the accept: it is served.
my $buf = '';
ok($t->write_all($s1, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
   'request sent on the deferred connection');
my $r = $t->read_response($s1, \$buf, timeout => 5);
is($r->{status}, 200, 'deferred listener: the request is served');
is($r->{body}, "index\n", 'deferred listener: body');
close $s1;

# A connection that never speaks is handed over after the kernel's
# SYN-ACK retries and then closed by client_header_timeout (2 s): it does
# not hang forever. The bound is generous (the machine may be busy).
($s1, $st1) = silent($p1);
my $t0 = time();
my $got = '';
my $rin = '';
vec($rin, fileno($s1), 1) = 1;
my $closed = 0;
while (time() - $t0 < 20) {
    my $rout = $rin;
    next unless select($rout, undef, undef, 1) > 0;
    my $n = sysread($s1, $got, 4096, length $got);
    if (!defined $n || $n == 0) {
        $closed = 1;
        last;
    }
}
ok($closed, 'deferred listener: a silent connection is closed in the end');
is($got, '', 'deferred listener: silently (no 408 for no request)')
    or diag("got: $got");
close $s1;
close $s0;

# ---- reload: the option moves to the other (kept) socket --------------------

conf('deferred', 'deferred=off');
my $from = length $t->error_log;
ok($t->signal('HUP'), 'SIGHUP');
ok($t->wait_log(qr/reload complete, generation 2\b/, 10, undef, $from),
   'reload complete');
sleep(0.3);

($s0, $st0) = silent($p0);
is($st0, '03', 'after the reload: the first listener defers');
($s1, $st1) = silent($p1);
is($st1, '01', 'after the reload: the second no longer defers');
close $s0;
close $s1;

is($t->http_get('/', port => $p1)->{status}, 200,
   'after the reload: plain listener serves');
is($t->http_get('/', port => $p0)->{status}, 200,
   'after the reload: deferred listener serves');

# ---- configuration errors --------------------------------------------------

$t->write_file('bad.conf', <<"EOF_BAD");
server {
    listen 127.0.0.1:$p0 deferd;
}
EOF_BAD
my ($rc, $out, $err) = $t->gannet('-t', '-c', $t->testdir . '/bad.conf');
isnt($rc, 0, 'misspelt listen parameter: gannet -t fails');
like($err, qr/invalid parameter "deferd".*"deferred".*bad\.conf:2/,
     'the error names the parameter, the choices, file and line');

$t->write_file('both.conf', <<"EOF_BAD");
server {
    listen 127.0.0.1:$p0 deferred;
}
server {
    listen 127.0.0.1:$p0 deferred=off;
    server_name other;
}
EOF_BAD
($rc, $out, $err) = $t->gannet('-t', '-c', $t->testdir . '/both.conf');
isnt($rc, 0, 'deferred and deferred=off on one address: gannet -t fails');
like($err, qr/127\.0\.0\.1:$p0 is used with "deferred" and "deferred=off" (?#
              )in .*both\.conf:4/,
     '... naming the address and the second server');

$t->done;
