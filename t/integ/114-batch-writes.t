#!/usr/bin/perl

# batch_writes: the small writes of a round of the event loop go out in
# one io_uring_enter (sendq.h).  Proves that it batches (the debug log
# counts the sockets of a round), that nothing is lost or reordered when
# a batched send finds the socket full (a client with a small receive
# buffer that does not read for a while: the rest waits and goes on
# EPOLLOUT, behind a response's close, a half-closed client, pipelined
# responses), that a client resetting such a connection costs nothing
# but itself, that `batch_writes off` writes directly, and the
# directive's errors.  The whole suite runs with batching on (the
# default); this test is its dedicated proof.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use Socket qw(SOL_SOCKET SO_LINGER SO_RCVBUF IPPROTO_TCP TCP_MAXSEG
              pack_sockaddr_in inet_aton);
use IO::Select;
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 120);
GnTLS::init($t);
$t->has('io_uring');

my $conf = <<'EOF';
children 1;
user %%USER%%;
error_log logs/error.log debug;
types { text/plain txt; }
%%BATCH%%

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
    keepalive_requests 10000;
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    keepalive_requests 10000;
}
EOF

sub conf
{
    my ($batch) = @_;
    (my $c = $conf) =~ s/%%BATCH%%/$batch/;
    $t->write_conf($c);
}

conf('');

# 15,000 bytes: a response under GN_SENDQ_SMALL (16 KiB), read from
# memory (under sendfile_min_size) and written by writev, so batched
for my $i (0 .. 9) {
    $t->write_file("html/m$i.txt", "file $i " . ('x' x 15000) . "\n");
}
$t->write_file('html/s.txt', "small\n");

$t->run;

if ($t->error_log =~ /batch_writes: io_uring is not available/) {
    # seccomp (a container's default profile) or io_uring_disabled
    ok($t->http_get('/s.txt')->{status} == 200,
       'io_uring unavailable: served by direct writes');
    $t->done;
    exit 0;
}

my $port = $t->port(0);

# ---- batching: many sockets' writes in one io_uring_enter ----------------

{
    # keep-alive: a response followed by a close is pushed out by the
    # close itself, at once
    my $ok = 1;
    my @s = map { $t->connect } 1 .. 16;
    for my $round (1 .. 20) {
        $t->write_all($_, $t->request('/s.txt', keepalive => 1)) for @s;
        for my $s (@s) {
            my $buf = '';
            my $r = $t->read_response($s, \$buf);
            $ok = 0 unless ($r->{status} // 0) == 200
                           && $r->{body} eq "small\n";
        }
    }
    close($_) for @s;
    ok($ok, '16 keep-alive clients at once, 20 times: every response whole');

    my @n = $t->error_log =~ /batch_writes: (\d+) sockets' writes in one /g;
    ok(@n > 0, 'the debug log counts the rounds of batched writes');
    my $max = 0;
    $max = $_ > $max ? $_ : $max for @n;
    cmp_ok($max, '>=', 2, "writes to several sockets in one io_uring_enter "
                          . "(at most $max)");
}

# Responses each followed by its close: the close sends what was staged
# at once, outside the round; 60 of 15 KB (more than the 512 KiB staging
# area) must each find room (ASan and valgrind see a write past it).
{
    my $ok = 0;
    for my $i (0 .. 59) {
        $ok++ if body_ok($t->http_get('/m' . ($i % 10) . '.txt'), $i % 10);
    }
    is($ok, 60, '60 responses of 15 KB, each closed at once: all whole');
}

# ---- the socket full: the rest waits, nothing lost or reordered ----------

# A connection whose socket at the server takes little: a small receive
# buffer, and a small MSS, from which the kernel sizes the server's send
# buffer (a loopback MSS of 64 KB makes it hold ~500 KB).
sub narrow
{
    my ($p) = @_;
    my $s = IO::Socket::INET->new(Proto => 'tcp') or return undef;
    setsockopt($s, SOL_SOCKET, SO_RCVBUF, pack('i', 2048));
    setsockopt($s, IPPROTO_TCP, TCP_MAXSEG, pack('i', 1024));
    CORE::connect($s, pack_sockaddr_in($p // $port, inet_aton('127.0.0.1')))
        or return undef;
    $s->autoflush(1);
    binmode($s);
    return $s;
}

# After a response: the server's close, clean (an end of file, no reset,
# nothing more).
sub closed_cleanly
{
    my ($s, $buf) = @_;
    my $end = time() + GnTest::slow(5);
    my $sel = IO::Select->new($s);
    while (time() < $end) {
        next unless $sel->can_read(0.1);
        my $n = sysread($s, $buf, 65536, length $buf);
        return 0 unless defined $n;                 # a reset
        return $buf eq '' if $n == 0;
    }
    return 0;
}

sub body_ok
{
    my ($r, $i) = @_;
    return ($r->{status} // 0) == 200
           && $r->{body} eq "file $i " . ('x' x 15000) . "\n";
}

# Six requests for m0..m5 at once on a narrow connection (the last with
# "Connection: close" unless `keep`; then the client's write side shut if
# `half`), nothing read for half a second: returns whether the error log
# then matched $re, how many responses arrived whole and in order, and
# what was read past them.
sub six
{
    my (%o) = @_;
    my $from = length $t->error_log;
    my $s = narrow();
    $t->write_all($s, join('', map { $t->request("/m$_.txt", keepalive => 1) }
                                   0 .. 4)
                      . $t->request('/m5.txt', keepalive => $o{keep}));
    shutdown($s, 1) if $o{half};
    sleep(0.5);
    my $logged = $t->wait_log($o{re}, 1, undef, $from);
    my ($buf, $good) = ('', 0);
    for my $i (0 .. 5) {
        $good++ if body_ok($t->read_response($s, \$buf, timeout => 5), $i);
    }
    return ($logged, $good, $s, $buf);
}

# A client whose receive buffer is small sends six requests, the last
# with "Connection: close": their responses, 90 KB batched in one round,
# are more than the socket takes, and the close comes with the rest still
# waiting.
{
    my ($logged, $good, $s, $buf) = six(re => qr/closing with \d+ bytes /);
    ok($logged, 'the close came with bytes waiting');
    is($good, 6, 'closing with bytes waiting: every response arrives whole');
    ok(closed_cleanly($s, $buf), '... and then the close, no reset');
    close($s);
}

# The same from a client that half-closes after its requests: the server
# has seen the end of input when it closes, and still sends the rest.
{
    my ($logged, $good, $s, $buf) = six(re => qr/closing with \d+ bytes /,
                                        half => 1);
    ok($logged, 'a half-closed client: bytes waiting at the close');
    is($good, 6, '... every response arrives whole');
    ok(closed_cleanly($s, $buf), '... then the close');
    close($s);
}

# Six keep-alive requests and then silence: the server answers them in
# one round and waits for the next request; what the socket did not take
# must go by itself as the client reads.
{
    my ($logged, $good, $s) = six(re => qr/the rest waits for room/,
                                  keep => 1);
    ok($logged, 'keep-alive, then idle: bytes waiting');
    is($good, 6, '... all sent while the connection waits for a request');
    close($s);
}

# 300 pipelined requests, read slowly: every response, in order, then
# the connection still serves.
{
    my $s = narrow();
    my $n = 300;
    my $req = join('', map { $t->request('/m' . ($_ % 10) . '.txt',
                                         keepalive => 1) } 0 .. $n - 1);
    $t->write_all($s, $req);
    sleep(0.3);
    my ($buf, $good, $order) = ('', 0, 1);
    for my $i (0 .. $n - 1) {
        my $r = $t->read_response($s, \$buf);
        last if $r->{error};
        if (body_ok($r, $i % 10)) {
            $good++;
        } else {
            $order = 0;
        }
        sleep(0.002) if $i % 50 == 0;
    }
    is($good, $n, "$n pipelined 15 KB responses through a small window: "
                  . 'all whole');
    ok($order, '... and in order');
    $t->write_all($s, $t->request('/s.txt'));
    my $r = $t->read_response($s, \$buf);
    is($r->{body}, "small\n", '... and the connection serves on');
    close($s);
}

# Over TLS: records are batched too, and the close_notify goes after the
# responses' records that wait.
SKIP: {
    eval { require IO::Socket::SSL; 1 }
        or skip('IO::Socket::SSL is not installed', 4);
    my $from = length $t->error_log;
    my $s = narrow($t->port(1));
    IO::Socket::SSL->start_SSL($s, SSL_hostname => 'localhost',
                               SSL_ca_file => GnTLS::ca(),
                               SSL_verifycn_name => 'localhost')
        or skip("TLS handshake: $IO::Socket::SSL::SSL_ERROR", 4);
    print $s join('', map { $t->request("/m$_.txt", keepalive => 1) } 0 .. 4)
             . $t->request('/m5.txt');
    sleep(0.5);
    ok($t->wait_log(qr/closing with \d+ bytes still to send/, 1, undef,
                    $from), 'TLS: the close came with records waiting');
    my ($in, $how) = ('', 'timeout');
    my $end = time() + GnTest::slow(10);
    while (time() < $end) {
        my $n = sysread($s, $in, 65536, length $in);
        if (defined $n) {
            if ($n == 0) { $how = 'eof'; last; }
            next;
        }
        if ($!{ECONNRESET}) { $how = 'reset'; last; }
        IO::Select->new($s)->can_read(0.1) unless $s->pending;
    }
    my $good = 0;
    for my $i (0 .. 5) {
        my $r = GnTest::_parse_response(\$in, 0, 0) // {};
        $good++ if body_ok($r, $i);
    }
    is($good, 6, 'TLS: every response arrives whole');
    is($how . ($in eq '' ? '' : ', then ' . length($in) . ' bytes more'),
       'eof', 'TLS: then the end, no reset');
    # SSL_RECEIVED_SHUTDOWN: the server's last record went too
    ok(Net::SSLeay::get_shutdown($s->_get_ssl_object) & 2,
       'TLS: ... with its close_notify');
    close($s);
}

# A client that resets the connection while the rest waits: only that
# connection ends; the child lives on and serves.
{
    my @pids = $t->children;
    my $s = narrow();
    $t->write_all($s, join('', map { $t->request('/m1.txt', keepalive => 1) }
                                   1 .. 20));
    sleep(0.5);
    setsockopt($s, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
    close($s);                                     # a reset
    sleep(0.3);
    is(join(',', $t->children), join(',', @pids),
       'a reset with bytes waiting: the child lives');
    ok(body_ok($t->http_get('/m2.txt'), 2), '... and serves');
}

# ---- batch_writes off: direct writes --------------------------------------

conf('batch_writes off;');
{
    my $from = length $t->error_log;
    ok($t->signal('HUP'), 'reload with batch_writes off');
    ok($t->wait_log(qr/gracefully shutting down/, 10, undef, $from),
       '... the old child leaves');
    sleep(0.5);
    $from = length $t->error_log;
    my $ok = 1;
    for (1 .. 20) {
        $ok = 0 unless body_ok($t->http_get('/m5.txt'), 5);
    }
    ok($ok, 'batch_writes off: responses whole');
    my $s = narrow();
    $t->write_all($s, $t->request('/m6.txt'));
    sleep(0.3);
    my $buf = '';
    ok(body_ok($t->read_response($s, \$buf), 6),
       'batch_writes off: a small window, the whole response');
    close($s);
    unlike(substr($t->error_log, $from), qr/batch_writes: /,
           'batch_writes off: no batched write');
}

# ---- the directive --------------------------------------------------------

for my $case (['batch_writes maybe;', qr/"on" or "off"/],
              ["batch_writes on;\nbatch_writes off;", qr/duplicate/],
              ["server { listen 127.0.0.1:%%PORT_0%%; batch_writes on; }",
               qr/not allowed here/])
{
    my ($text, $re) = @$case;
    $t->write_file('bad.conf', $t->expand("user %%USER%%;\n$text\n"));
    my ($rc, $out, $err) = $t->gannet('-t', '-c', $t->testdir . '/bad.conf');
    ok($rc != 0 && $err =~ /bad\.conf:\d+/ && $err =~ $re,
       "gannet -t: \"$text\" refused with file:line")
        or diag($err);
}

$t->done;
