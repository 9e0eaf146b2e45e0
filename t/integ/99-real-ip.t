#!/usr/bin/perl

# The client's address behind a load balancer (issue 22, item 4):
# set_real_ip_from / real_ip_from, real_ip_header (X-Forwarded-For with
# real_ip_recursive, X-Real-IP, proxy_protocol) and `listen ...
# proxy_protocol` (PROXY protocol v1 and v2, over plain HTTP, TLS and
# HTTP/2). The address a trusted proxy gives is what allow/deny match,
# what $remote_addr and $remote_port log and what a module's
# REMOTE_ADDR is; $realip_remote_addr keeps the peer's, and
# $proxy_protocol_addr / _port the header's. An untrusted peer's header
# changes nothing; a connection without a valid PROXY header, or with
# none in time, is closed without an answer and logged at "info".

use strict;
use warnings;

use Test::More;
use IO::Socket::INET;
use Socket qw(inet_pton AF_INET6);
use Time::HiRes qw(sleep time);
use GnTest;

my $t = GnTest->new(timeout => 60);
$t->skip_unless_module('mod_example');
my $tls = eval { require GnTLS; GnTLS::optional($t) }
          && eval { require IO::Socket::SSL; 1 };

$t->write_file('html/index.html', "index\n");
$t->write_file('html/deny/index.html', "not denied\n");

my $tls_conf = !$tls ? '' : <<'EOF';
server {
    listen 127.0.0.1:%%PORT_2%% tls proxy_protocol;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    set_real_ip_from 127.0.0.1;
    real_ip_header proxy_protocol;
    root html;
    location /example/ { handler example; }
}
EOF

$t->write_conf(<<"EOF");
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_example.so;
log_format rip '\$remote_addr \$remote_port \$realip_remote_addr '
               '\$proxy_protocol_addr \$proxy_protocol_port \$status \$uri';
access_log logs/access.log rip;
set_real_ip_from 10.0.0.0/8;

server {
    listen 127.0.0.1:%%PORT_0%%;
    set_real_ip_from 127.0.0.1;
    set_real_ip_from 10.0.0.0/8;
    real_ip_header X-Forwarded-For;
    real_ip_recursive on;
    root html;
    location /example/ { handler example; }
    location /deny/ { deny 192.0.2.0/24; }
}

server {
    listen 127.0.0.1:%%PORT_1%% proxy_protocol;
    real_ip_from 127.0.0.0/8;
    real_ip_header proxy_protocol;
    client_header_timeout 1s;
    root html;
    location /example/ { handler example; }
    location /deny/ { deny 192.0.2.0/24; }
}

server {
    listen 127.0.0.1:%%PORT_3%%;
    root html;
    location /example/ { handler example; }
}

server {
    listen 127.0.0.1:%%PORT_4%% proxy_protocol http2;
    root html;
}

server {
    listen 127.0.0.1:%%PORT_5%%;
    set_real_ip_from 127.0.0.1;
    root html;
    location /example/ { handler example; }
}
$tls_conf
EOF
$t->run;

sub info
{
    my ($body) = @_;
    my %h;

    for my $l (split /\n/, $body // '') {
        $h{$1} = $2 if $l =~ /^var (\w+): ?(.*)$/;
    }
    return \%h;
}

# the access log's last line, as fields
my $seen = 0;
sub last_log
{
    my $end = time() + GnTest::slow(5);
    my @l;

    while (time() < $end) {
        @l = split /\n/, $t->read_file('logs/access.log') // '';
        last if @l > $seen;
        sleep(0.05);
    }
    $seen = @l;
    return $l[-1] // '';
}

sub pp_v1
{
    my ($src, $sport, $port) = @_;
    return "PROXY TCP4 $src 127.0.0.1 $sport $port\r\n";
}

sub pp_v2
{
    my ($cmd, $fam, $addr) = @_;
    return "\x0d\x0a\x0d\x0a\x00\x0d\x0a\x51\x55\x49\x54\x0a"
           . pack('CCn', 0x20 | $cmd, $fam, length $addr) . $addr;
}

my $get = "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

# ---- X-Forwarded-For from a trusted peer, recursive -------------------------

my $r = $t->http_get('/example/info', headers =>
    ['X-Forwarded-For: 198.51.100.9, 192.0.2.7, 10.0.0.1']);
my $i = info($r->{body});
is($i->{REMOTE_ADDR}, '192.0.2.7', 'X-Forwarded-For, recursive: the first '
   . 'untrusted address from the right is REMOTE_ADDR');
is($i->{REMOTE_PORT}, '', 'REMOTE_PORT: none from a header');
is(last_log(), '192.0.2.7 - 127.0.0.1 - - 200 /example/info',
   '$remote_addr logs it, $remote_port "-", $realip_remote_addr the peer');

$r = $t->http_get('/example/info', headers =>
    ['X-Forwarded-For: 192.0.2.7', 'X-Forwarded-For: 10.0.0.2, 10.0.0.1']);
is(info($r->{body})->{REMOTE_ADDR}, '192.0.2.7',
   'a list across two header fields');
last_log();

is($t->http_get('/deny/', headers => ['X-Forwarded-For: 192.0.2.7'])
   ->{status}, 403, 'deny matches the address from the header');
is(last_log(), '192.0.2.7 - 127.0.0.1 - - 403 /deny/', 'logged with it');
is($t->http_get('/deny/', headers => ['X-Forwarded-For: 198.51.100.1'])
   ->{status}, 200, 'another address is not denied');
last_log();

$r = $t->http_get('/example/info', headers => ['X-Forwarded-For: junk']);
is(info($r->{body})->{REMOTE_ADDR}, '127.0.0.1',
   'no valid address in the header: the peer stays');
last_log();
$r = $t->http_get('/example/info');
is(info($r->{body})->{REMOTE_ADDR}, '127.0.0.1', 'no header: the peer');
like(info($r->{body})->{REMOTE_PORT}, qr/^\d+$/, 'and its port');
last_log();

is($t->http_get('/missing', headers => ['X-Forwarded-For: 192.0.2.56'])
   ->{status}, 404, 'a missing file');
ok($t->wait_log(qr/No such file or directory\), client: 192\.0\.2\.56,/, 5),
   'the error log names the client from the header');
last_log();

# ---- untrusted peers, X-Real-IP ---------------------------------------------

$r = $t->http_get('/example/info', port => $t->port(3),
                  headers => ['X-Real-IP: 192.0.2.7']);
is(info($r->{body})->{REMOTE_ADDR}, '127.0.0.1',
   'from a peer outside set_real_ip_from (the main level\'s): ignored');
last_log();

$r = $t->http_get('/example/info', port => $t->port(5),
                  headers => ['X-Forwarded-For: 192.0.2.8',
                              'X-Real-IP: 2001:db8::7']);
is(info($r->{body})->{REMOTE_ADDR}, '2001:db8::7',
   'X-Real-IP, the default real_ip_header');
last_log();

# ---- PROXY protocol ---------------------------------------------------------

my $p1 = $t->port(1);
my $raw = $t->http_raw(pp_v1('192.0.2.7', 56324, $p1)
                       . sprintf($get, '/deny/'), port => $p1);
like($raw, qr{^HTTP/1.1 403 }, 'PROXY v1: the source is denied');
is(last_log(), "192.0.2.7 56324 127.0.0.1 192.0.2.7 56324 403 /deny/",
   'and logged with its port; $proxy_protocol_addr and _port');

$raw = $t->http_raw(pp_v1('198.51.100.1', 1, $p1)
                    . sprintf($get, '/example/info'), port => $p1);
$i = info($raw);
is($i->{REMOTE_ADDR}, '198.51.100.1', 'PROXY v1: REMOTE_ADDR');
is($i->{REMOTE_PORT}, '1', 'REMOTE_PORT');
last_log();

my $a6 = inet_pton(AF_INET6, '2001:db8::7') . inet_pton(AF_INET6, '::1')
         . pack('nn', 12345, $p1);
$raw = $t->http_raw(pp_v2(1, 0x21, $a6 . ("\xee" x 40))
                    . sprintf($get, '/example/info'), port => $p1);
$i = info($raw);
is($i->{REMOTE_ADDR}, '2001:db8::7', 'PROXY v2 TCP6 with TLVs: REMOTE_ADDR');
is($i->{REMOTE_PORT}, '12345', 'REMOTE_PORT');
is(last_log(), "2001:db8::7 12345 127.0.0.1 2001:db8::7 12345 200 "
   . "/example/info", 'logged');

$raw = $t->http_raw(pp_v2(0, 0x11, pack('C12', 1 .. 12))
                    . sprintf($get, '/example/info'), port => $p1);
is(info($raw)->{REMOTE_ADDR}, '127.0.0.1',
   'PROXY v2 LOCAL (a health check): the peer');
is(last_log(), '127.0.0.1 ' . info($raw)->{REMOTE_PORT}
   . ' 127.0.0.1 - - 200 /example/info', 'no $proxy_protocol_addr');

$raw = $t->http_raw(pp_v1('192.0.2.55', 1, $p1) . sprintf($get, '/missing'),
                    port => $p1);
like($raw, qr{^HTTP/1.1 404 }, 'PROXY v1: a missing file');
ok($t->wait_log(qr/No such file or directory\), client: 192\.0\.2\.55,/, 5),
   'the error log names the PROXY header\'s client');
last_log();

# in pieces, then two requests on the connection
my $s = $t->connect(port => $p1);
my $hdr = pp_v1('192.0.2.9', 4242, $p1);
$t->write_all($s, substr($hdr, 0, 10));
sleep(0.2);
$t->write_all($s, substr($hdr, 10)
              . "GET /example/info HTTP/1.1\r\nHost: localhost\r\n\r\n");
my $buf = '';
my $r1 = $t->read_response($s, \$buf);
$t->write_all($s, sprintf($get, '/example/info'));
my $r2 = $t->read_response($s, \$buf);
close $s;
is(info($r1->{body})->{REMOTE_ADDR}, '192.0.2.9',
   'a header in two pieces: the first request has its address');
is(info($r2->{body})->{REMOTE_ADDR}, '192.0.2.9',
   'and the second on the connection too');
last_log();

# refused: no header, a broken one, none in time
my ($out, $closed) = $t->http_raw(sprintf($get, '/'), port => $p1);
ok($closed && $out eq '', 'HTTP without a PROXY header: closed, no answer');
ok($t->wait_log(qr/\[info\] .*closing the connection: not a PROXY protocol /
                . qr/header on a proxy_protocol listener/, 5),
   'logged at info');
($out, $closed) = $t->http_raw("PROXY TCP4 192.0.2.7 127.0.0.1 99999 80\r\n"
                               . sprintf($get, '/'), port => $p1);
ok($closed && $out eq '', 'a bad port: closed, no answer');
ok($t->wait_log(qr/invalid address or port on a proxy_protocol/, 5),
   'logged with the reason');
($out, $closed) = $t->http_raw('PROXY TCP4 192.0.2', port => $p1,
                               shutdown => 1);
ok($closed && $out eq '', 'a header cut by the client\'s FIN: closed');
ok($t->wait_log(qr/the client closed in its PROXY protocol header/, 5),
   'at once, not at the timeout: logged so');

# a head the parser refuses is logged with the header's address
$raw = $t->http_raw(pp_v1('192.0.2.77', 7777, $p1)
                    . "GET / HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n"
                    . "\r\n", port => $p1);
like($raw, qr{^HTTP/1.1 400 }, 'a malformed head after a PROXY header: 400');
like(last_log(), qr{^192\.0\.2\.77 7777 127\.0\.0\.1 192\.0\.2\.77 7777 400 },
     'logged with the PROXY header\'s address');

my $t0 = time();
($out, $closed) = $t->http_raw('', port => $p1, timeout => 10);
my $waited = time() - $t0;
ok($closed && $out eq '', 'nothing sent: closed');
ok($waited >= 0.8, sprintf('after client_header_timeout (%.1f s)', $waited));
ok($t->wait_log(qr/no PROXY protocol header in time/, 5), 'logged');

is($t->http_get('/', port => $t->port(0))->{status}, 200,
   'the server serves on');

# ---- without real_ip_header proxy_protocol; HTTP/2, TLS ---------------------

my $p4 = $t->port(4);
$raw = $t->http_raw(pp_v1('192.0.2.7', 56324, $p4) . sprintf($get, '/'),
                    port => $p4);
like($raw, qr{^HTTP/1.1 200 }, 'a proxy_protocol listener without realip');
# ($uri: "/" went to its index file, as nginx's internal redirect does)
like(last_log(),
     qr{^127\.0\.0\.1 \d+ 127\.0\.0\.1 192\.0\.2\.7 56324 200 /index\.html$},
     '$remote_addr stays the peer, $proxy_protocol_addr has the header\'s');

SKIP: {
    my ($rc, $body) = $t->curl('--haproxy-protocol', '--http2-prior-knowledge',
                               '-w', '%{http_version}', '-o', '/dev/null',
                               "http://127.0.0.1:$p4/");
    skip('curl has no --haproxy-protocol', 2) if $rc == 2;
    is($body, '2', 'curl --haproxy-protocol, HTTP/2 with prior knowledge');
    my $lo = qr/127\.0\.0\.1/;
    like(last_log(), qr{^$lo (\d+) $lo $lo \1 200 /index\.html$},
         'its PROXY header (its own address and port) logged');
}

SKIP: {
    skip('no TLS clients', 4) unless $tls;
    my $p2 = $t->port(2);
    my $c = $t->connect(port => $p2);
    $t->write_all($c, pp_v1('192.0.2.7', 5555, $p2));
    my $ok = IO::Socket::SSL->start_SSL($c, SSL_verify_mode => 0,
                                        SSL_hostname => 'localhost',
                                        Timeout => GnTest::slow(5));
    ok($ok, 'TLS after a PROXY header') or diag($IO::Socket::SSL::SSL_ERROR);
    my $resp = '';
    if ($ok) {
        print $c sprintf($get, '/example/info');
        local $/;
        $resp = <$c> // '';
        close $c;
    }
    is(info($resp)->{REMOTE_ADDR}, '192.0.2.7', 'TLS: REMOTE_ADDR');
    last_log();

    my $cr = GnTLS::curl($t, port => $p2, path => '/example/info',
                         args => ['--haproxy-protocol', '--http2']);
    is($cr->{status}, '200', 'curl over TLS (h2) after its PROXY header')
        or diag($cr->{err});
    is(info($cr->{body})->{REMOTE_ADDR}, '127.0.0.1',
       'REMOTE_ADDR: the address of its header');
}

$t->done;
