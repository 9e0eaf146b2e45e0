#!/usr/bin/perl

# No response destroyed by a reset (issue 17, item 5).  A server that
# closes while the client is still sending must not close() with input
# unread: the kernel answers that with a reset, and the reset destroys at
# the client the responses it has not read yet.  Gannet closes lingering:
# the write side shut (after TLS's close_notify), input read and dropped
# until the client closes.
#
# 1,000 / 1,500 / 3,000 requests pipelined in one write against
# keepalive_requests 1000, over plain TCP and TLS: exactly 1,000
# responses, in order, the last with "Connection: close", and the client
# reads all of them and then a clean end (no reset).  A client that
# pipelines 3,000 requests and reads nothing for longer than the header
# timeout gets all of them, in order, once it reads.  An error response
# with the request's body unread, and a graceful stop with requests still
# coming, are not lost either.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use IO::Select;
use Errno qw(EAGAIN EINTR);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 180);
GnTLS::init($t);

eval { require IO::Socket::SSL; 1 }
    or plan(skip_all => 'IO::Socket::SSL is not installed');

$t->write_conf(<<'EOF');
children 1;
user %%USER%%;
shutdown_timeout 10s;
types { text/plain txt; }

client_header_timeout 1s;
send_timeout 20s;
keepalive_timeout 20s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
    keepalive_requests 1000;
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    keepalive_requests 1000;
}

server {
    listen 127.0.0.1:%%PORT_2%%;
    root html;
    keepalive_requests 0;
}

server {
    listen 127.0.0.1:%%PORT_3%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    keepalive_requests 0;
}
EOF

for my $i (0 .. 9) {
    $t->write_file("html/f$i.txt", "file $i " . ('x' x ($i * 13)) . "\n");
}
# 8 KB each: 3,000 of them fill every socket buffer on the way
for my $i (0 .. 9) {
    $t->write_file("html/b$i.txt", "file $i " . ('x' x 8192) . "\n");
}

$t->run;

my $CA = GnTLS::ca();

sub tls_connect
{
    my ($port) = @_;
    my $s = IO::Socket::SSL->new(
        PeerHost => '127.0.0.1', PeerPort => $port,
        SSL_hostname => 'localhost', SSL_ca_file => $CA,
        SSL_verifycn_name => 'localhost', Timeout => GnTest::slow(5))
        or return undef;
    return $s;
}

sub requests
{
    my ($n, $f) = @_;
    $f //= 'f';
    return join('', map { "GET /$f" . ($_ % 10) . ".txt HTTP/1.1\r\n"
                          . "Host: localhost\r\n\r\n" } 0 .. $n - 1);
}

# Writes $data (non-blocking, so that the server's answers are read
# meanwhile) and reads, from `delay` s on (calling `at_read` then), until
# the server closes or `limit` s pass.  Returns (bytes read, how the read ended: 'eof',
# 'reset', 'timeout', 'write error').
sub exchange
{
    my ($s, $data, %o) = @_;
    my ($in, $off, $end) = ('', 0, time() + GnTest::slow($o{limit} // 30));
    my $tls = ref($s) =~ /SSL/;
    my $reading_from = time() + ($o{delay} // 0);

    $s->blocking(0);
    while (time() < $end) {
        my $want_write = $off < length $data;
        my $may_read = time() >= $reading_from;
        if ($want_write) {
            my $n = syswrite($s, $data, gn_min(16384, length($data) - $off),
                             $off);
            if (defined $n) {
                $off += $n;
                next;
            }
            if ($! != EAGAIN && $! != EINTR
                && !($tls && ($IO::Socket::SSL::SSL_ERROR // 0)
                     == IO::Socket::SSL::SSL_WANT_WRITE()))
            {
                return ($in, "write error: $!");
            }
        }
        if (!$may_read) {
            sleep(0.05);
            next;
        }
        if ($o{at_read}) {
            $o{at_read}->();
            delete $o{at_read};
        }
        my $n = sysread($s, $in, 65536, length $in);
        if (defined $n) {
            return ($in, 'eof') if $n == 0;
            next;
        }
        return ($in, 'reset') if $!{ECONNRESET};
        if ($! != EAGAIN && $! != EINTR
            && !($tls && $IO::Socket::SSL::SSL_ERROR))
        {
            return ($in, "read error: $!");
        }
        IO::Select->new($s)->can_read(0.05)
            unless $tls && $s->pending;
    }
    return ($in, 'timeout');
}

sub gn_min { return $_[0] < $_[1] ? $_[0] : $_[1]; }

# Splits what was read into responses; returns (count, in order, last's
# Connection header, leftover bytes).
sub responses
{
    my ($in, $x) = @_;
    my ($n, $order, $last) = (0, 1, '');
    while ($in =~ s/^HTTP\/1\.1 200 OK\r\n((?:[^\r\n]+\r\n)*)\r\n//) {
        my $h = $1;
        my ($len) = $h =~ /^Content-Length: (\d+)\r$/mi;
        last unless defined $len && length($in) >= $len;
        my $body = substr($in, 0, $len, '');
        my $i = $n % 10;
        my $xs = $x // $i * 13;
        $order = 0 unless $body =~ /^file $i x{$xs}\n\z/;
        ($last) = $h =~ /^Connection: (\S+)\r$/mi;
        $last //= '';
        $n++;
    }
    return ($n, $order, $last, length $in);
}

for my $tls (0, 1) {
    my $what = $tls ? 'TLS' : 'plain';
    my $port = $t->port($tls ? 1 : 0);

    for my $n (1000, 1500, 3000) {
        my $s = $tls ? tls_connect($port) : $t->connect(port => $port);
        ok($s, "$what, $n pipelined: connected") or next;
        my ($in, $how) = exchange($s, requests($n));
        my ($count, $order, $last, $left) = responses($in);
        is($count, 1000, "$what, $n pipelined, limit 1000: 1000 responses");
        ok($order, "$what, $n pipelined: in order");
        is(lc $last, 'close', "$what, $n pipelined: the last says "
                              . "Connection: close");
        is($how, 'eof', "$what, $n pipelined: all read, then a clean end "
                        . "(no reset)");
        is($left, 0, "$what, $n pipelined: nothing after the last "
                     . "response");
        close $s;
    }

    # 3,000 requests, no limit, the client reads nothing for longer than
    # the header timeout (1 s): every one is answered, in order
    my $s = $tls ? tls_connect($t->port($tls ? 3 : 2))
                 : $t->connect(port => $t->port(2));
    ok($s, "$what, a client that does not read: connected") or next;
    my $data = requests(3000) . "GET /f0.txt HTTP/1.1\r\nHost: localhost\r\n"
               . "Connection: close\r\n\r\n";
    my ($in, $how) = exchange($s, $data, delay => 2.5);
    my ($count, $order, $last) = responses($in);
    is($count, 3001, "$what, 3001 pipelined, read after 2.5 s: all answered");
    ok($order, "$what, 3001 pipelined, read late: in order");
    is($how, 'eof', "$what, 3001 pipelined, read late: a clean end");
    close $s;
}

# An error response whose request body was not read: the client gets the
# 413 although it goes on sending the body.
{
    my $s = $t->connect;
    my $body = 'b' x (4 * 1024 * 1024);
    my ($in, $how) = exchange($s, "POST /f0.txt HTTP/1.1\r\nHost: localhost"
                                  . "\r\nContent-Length: " . length($body)
                                  . "\r\n\r\n" . $body, limit => 20);
    like($in, qr{^HTTP/1\.1 413 }, 'a 4 MB body past client_max_body_size: '
                                   . 'its 413 arrives whole')
        or diag(substr($in, 0, 200));
    like($how, qr/^(eof|write error: .*)$/, 'a POST with a body not read: '
                                            . 'no reset before the answer');
    close $s;
}

# A reload while a client's 3,000 pipelined requests are being answered:
# the old child answers what it is on with "Connection: close" and
# lingers; the client reads every response up to that one, in order.
for my $tls (0, 1) {
    my $what = $tls ? 'TLS' : 'plain';
    my $s = $tls ? tls_connect($t->port(3)) : $t->connect(port => $t->port(2));
    my ($in, $how) = exchange($s, requests(3000, 'b'), delay => 1,
                              at_read => sub {
        my $from = length $t->error_log;
        $t->signal('HUP');
        $t->wait_log(qr/reload complete/, 10, undef, $from);
    });
    my ($count, $order, $last, $left) = responses($in, 8192);
    ok($count > 0 && $count < 3000, "$what, reload during 3000 pipelined: "
                                     . "$count answered");
    ok($order, "$what, reload during 3000 pipelined: in order");
    is(lc $last, 'close', "$what, reload: the last says Connection: close");
    is($how, 'eof', "$what, reload: all read, then a clean end");
    is($left, 0, "$what, reload: nothing after the last response");
    close $s;
}

like($t->error_log, qr/\[notice\]/, 'the server logged its start');
unlike($t->error_log, qr/client timed out/,
       'no connection met the header timeout');

$t->done;
