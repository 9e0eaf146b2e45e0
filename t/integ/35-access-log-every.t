#!/usr/bin/perl

# Every request gets an access-log line, as nginx logs one (issue 18,
# item 2), and the scoreboard counts the same requests as the log:
#
#   - a client that gives up mid-response: the status sent, and the
#     bytes that actually went out (less than the file);
#   - a request cut off at send_timeout: the same;
#   - a streamed module response the client left: the same;
#   - a module request pending when its client left: 499 and 0 bytes;
#   - plain HTTP on a TLS port: 400, the bytes of the answer, its line;
#   - a head that times out (client_header_timeout): 408 and the part of
#     the request line that came; a head that breaks off: 400;
#   - a body that breaks off: 400; a body that times out: 408;
#   - a connection that sends nothing gets no line.

use strict;
use warnings;

use Test::More;
use Socket qw(SOL_SOCKET SO_LINGER);
use JSON::PP;
use IO::Select;
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 120);
GnTLS::init($t);

for my $m ('mod_example.so', 'mod_status.so') {
    plan(skip_all => "no $ENV{GN_MODDIR}/$m")
        unless -f "$ENV{GN_MODDIR}/$m";
}

$t->write_conf(<<'EOF');
children 1;
user %%USER%%;
load_module %%MODDIR%%/mod_example.so;
load_module %%MODDIR%%/mod_status.so;
example_delay_max 60s;
types { application/octet-stream bin; }

client_header_timeout 1s;
client_body_timeout 1s;
send_timeout 30s;

log_format every '$status|$bytes_sent|$body_bytes_sent|$request|$scheme|'
                 '$tls_protocol$tls_cipher$tls_resumed';

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
    access_log logs/every.log every;

    location /example/ {
        handler example;
    }
    location = /status {
        handler status;
    }
    location /slow/ {
        send_timeout 1s;
    }
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    access_log logs/every.log every;
}
EOF

my $size = 16 << 20;         # more than every socket buffer on the way
$t->write_file('html/big.bin', 'b' x $size);
$t->write_file('html/slow/big.bin', 's' x $size);
$t->write_file('html/small.bin', "small\n");

$t->run;

my $log = $t->testdir . '/logs/every.log';
my @lines;                   # every line expected so far, in order

sub lines { return split /\n/, ($t->read_file($log) // ''); }

# Waits for the line matching $re; returns its fields (status, bytes,
# body bytes, request, scheme, TLS) or an empty list.
sub wait_line
{
    my ($re, $timeout) = @_;

    $re = qr/$re\|[^|]*/;
    return () unless $t->wait_log(qr/^$re$/m, $timeout // 15, $log);
    my ($line) = grep { /^$re$/ } lines();
    push @lines, $line;
    return split /\|/, $line;
}

sub reset_close
{
    my ($s) = @_;
    setsockopt($s, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
    close $s;
}

# Reads from $s until $n bytes came or 10 s passed.
sub read_some
{
    my ($s, $n) = @_;
    my $buf = '';
    my $sel = IO::Select->new($s);
    while (length $buf < $n && $sel->can_read(GnTest::slow(10))) {
        last unless sysread($s, $buf, $n - length $buf, length $buf);
    }
    return $buf;
}


# ---- a response the client gave up on -------------------------------------

{
    my $s = $t->connect(rcvbuf => 4096);
    $t->write_all($s, $t->request('/big.bin'));
    my $got = read_some($s, 2000);
    like($got, qr{^HTTP/1\.1 200 }, 'abort: the response started');
    reset_close($s);

    my @f = wait_line(qr{200\|\d+\|\d+\|GET /big\.bin HTTP/1\.1\|http});
    is($f[0], 200, 'abort: logged with the status sent');
    ok(@f && $f[1] > 0 && $f[2] < $size,
       "abort: the bytes that went out, less than the file ($f[2] of "
       . "$size)") or diag("line: @f");
}

{
    my $s = $t->connect(rcvbuf => 4096);
    $t->write_all($s, $t->request('/slow/big.bin'));
    my @f = wait_line(qr{200\|\d+\|\d+\|GET /slow/big\.bin HTTP/1\.1\|http});
    is($f[0], 200, 'send_timeout: logged with the status sent');
    ok(@f && $f[2] < $size, "send_timeout: bytes sent, less than the "
       . "file ($f[2])") or diag("line: @f");
    close $s;
}

{
    my $s = $t->connect;
    $t->write_all($s, $t->request('/example/stream'));
    my $got = read_some($s, 1);
    ok(length $got, 'stream: the response started');
    close $s;
    my @f = wait_line(qr{200\|\d+\|\d+\|GET /example/stream HTTP/1\.1\|http});
    is($f[0], 200, 'stream cut: logged with the status sent');
    ok(@f && $f[1] > 0, 'stream cut: with the bytes sent') or diag("@f");
}


# ---- a module request pending when its client left -------------------------

for my $how ('close', 'reset') {
    my $s = $t->connect;
    $t->write_all($s, $t->request("/example/delay?ms=30000&$how"));
    $how eq 'reset' ? reset_close($s) : close $s;
    my @f = wait_line(qr{499\|0\|0\|GET /example/delay\?ms=30000&$how HTTP/1\.1\|http});
    is($f[0], 499, "pending module, client left ($how): 499, 0 bytes");
}


# ---- plain HTTP on a TLS port -----------------------------------------------

{
    my $resp = $t->http_raw("GET /plain HTTP/1.1\r\nHost: localhost\r\n\r\n",
                            port => $t->port(1), timeout => 10);
    like($resp, qr{^HTTP/1\.1 400 }, 'plain HTTP to TLS: 400');
    my @f = wait_line(qr{400\|\d+\|\d+\|GET /plain HTTP/1\.1\|https});
    is($f[0], 400, 'plain HTTP to TLS: logged 400 with the request line');
    is($f[1], length $resp, 'plain HTTP to TLS: bytes_sent is the answer');
    is($f[2], 52, 'plain HTTP to TLS: body_bytes_sent is its body');
    is($f[5], '---', 'plain HTTP to TLS: no TLS protocol, cipher, resumed');
}


# ---- heads and bodies that did not come ------------------------------------

{
    my $s = $t->connect;
    $t->write_all($s, "GET /partial HTTP/1.1\r\nHost: loc");
    my @f = wait_line(qr{408\|0\|0\|GET /partial HTTP/1\.1\|http});
    is($f[0], 408, 'header timeout: 408 with the request line');
    close $s;

    $s = $t->connect;
    $t->write_all($s, "GET /partial-li");
    @f = wait_line(qr{408\|0\|0\|GET /partial-li\|http});
    is($f[0], 408, 'header timeout in the request line: 408, what came');
    close $s;

    $s = $t->connect;
    $t->write_all($s, "GET /cut HTTP/1.1\r\nHost: x\r\n");
    close $s;
    @f = wait_line(qr{400\|0\|0\|GET /cut HTTP/1\.1\|http});
    is($f[0], 400, 'head broken off: 400');

    $s = $t->connect;
    $t->write_all($s, "POST /small.bin HTTP/1.1\r\nHost: x\r\n"
                      . "Content-Length: 1000\r\n\r\nabc");
    close $s;
    @f = wait_line(qr{400\|0\|0\|POST /small\.bin HTTP/1\.1\|http});
    is($f[0], 400, 'body broken off: 400');

    $s = $t->connect;
    $t->write_all($s, "POST /small.bin HTTP/1.1\r\nHost: x\r\n"
                      . "Content-Length: 1000\r\n\r\nabc");
    @f = wait_line(qr{408\|0\|0\|POST /small\.bin HTTP/1\.1\|http});
    is($f[0], 408, 'body timeout: 408');
    close $s;

    # nothing sent: no request, no line (a fresh connection closed, and
    # one the header timeout closed)
    $s = $t->connect;
    close $s;
    $s = $t->connect;
    my ($rest, $closed) = $t->read_until_close($s, 10);
    ok($closed && $rest eq '', 'silent connection: closed at the timeout');
    close $s;
}


# ---- the log has exactly these lines, and the scoreboard agrees ------------

{
    my $r = $t->http_get('/small.bin');
    is($r->{status}, 200, 'a complete request');
    my @f = wait_line(qr{200\|\d+\|6\|GET /small\.bin HTTP/1\.1\|http});
    is($f[0], 200, 'its line');

    my @got = lines();
    is(scalar @got, scalar @lines, 'one line per request, no more')
        or diag(join("\n", @got));

    $r = $t->http_get('/status?format=json');
    is($r->{status}, 200, 'status json');
    my $j = eval { decode_json($r->{body}) } // {};
    my %class;
    $class{substr((split /\|/)[0], 0, 1) . 'xx'}++ for @lines;
    is($j->{totals}{requests}, scalar @lines,
       'scoreboard: as many requests as log lines');
    for my $k ('2xx', '4xx', '5xx') {
        is($j->{totals}{responses}{$k} // 0, $class{$k} // 0,
           "scoreboard: $k as in the log");
    }
}

$t->stop;
done_testing;
