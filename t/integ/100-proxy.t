#!/usr/bin/perl

# The reverse proxy (issue 22, items 1, 2 and 5 as far as they are
# built): `upstream` groups (weighted round robin, least_conn, backup,
# max_fails), `proxy_pass` to a group or a URL with nginx's URI rules,
# HTTP/1.1 to the upstream over connections pooled per child, the
# request's fields less the hop-by-hop ones, proxy_set_header with
# variables, bodies by Content-Length, chunked and up to the close,
# proxy_redirect default, the timeouts, proxy_next_upstream, and the
# errors: a refused server is skipped, garbage and an oversized head are
# 502, silence is 504, a response the upstream cuts is cut at the client
# too, one longer than its Content-Length is cut to it and its
# connection not kept. Upstreams over TLS: verified (or not), SNI, the
# session resumed by a new connection, kept connections pooled.
# WebSocket: the Upgrade goes to the upstream, its
# 101 to the client, then frames both ways, big ones too, until a close.
# Many clients over a small pool each get their own bytes. The backends
# are t/lib/backend.py, started here.

use strict;
use warnings;

use Test::More;
use Digest::MD5 qw(md5_hex);
use IO::Socket::INET;
use IO::Select;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use GnTest;
use GnBackend;

my $t = GnTest->new(timeout => 120);
GnBackend::init($t);

my ($b1, $b2, $b3) = ($t->port(1), $t->port(2), $t->port(3));
my $dead = $t->port(4);                  # nothing listens there
my $b4 = $t->port(5);                    # over TLS
my ($b5, $b6) = ($t->port(6), $t->port(7));   # the load's, alone
my $certs = $ENV{GN_CERTS} // "$t->{srcdir}/t/certs";

$t->skip_unless_module('mod_status');

$t->write_conf(<<"EOF");
user %%USER%%;
children 1;
rlimit_nofile 8192;
max_connections 4096;
load_module %%MODDIR%%/mod_status.so;
error_log logs/error.log info;
log_format up '\$request_uri \$status [\$upstream_addr] [\$upstream_status] '
              '[\$upstream_connect_time] \$proxy_host';
access_log logs/access.log up;

upstream app {
    server 127.0.0.1:$b1;
    server 127.0.0.1:$b2;
    keepalive 4;
}

upstream weighted {
    server 127.0.0.1:$b1 weight=3;
    server 127.0.0.1:$b2;
}

upstream flaky {
    server 127.0.0.1:$dead max_fails=1 fail_timeout=30s;
    server 127.0.0.1:$b1;
    keepalive 2;
}

upstream spare {
    server 127.0.0.1:$dead;
    server 127.0.0.1:$b3 backup;
}

upstream gone {
    server 127.0.0.1:$dead;
}

upstream least {
    least_conn;
    server 127.0.0.1:$b1;
    server 127.0.0.1:$b2;
    keepalive 8;
}

upstream small {
    server 127.0.0.1:$b1;
    keepalive 2;
}

upstream pool8 {
    server 127.0.0.1:$b5;
    server 127.0.0.1:$b6;
    keepalive 8;
}

upstream byuri {
    hash \$request_uri consistent;
    server 127.0.0.1:$b1;
    server 127.0.0.1:$b2;
}

upstream tlsgrp {
    server 127.0.0.1:$b4;
    keepalive 4;
}

upstream pair {
    server 127.0.0.1:$b1 max_fails=0;
    server 127.0.0.1:$b2 max_fails=0;
}

server {
    listen 127.0.0.1:%%PORT_0%% http2;
    proxy_read_timeout 2s;

    location / { proxy_pass http://app; }
    location /w/ { proxy_pass http://weighted/; }
    location /f/ { proxy_pass http://flaky/; }
    location /s/ { proxy_pass http://spare/; }
    location /gone/ { proxy_pass http://gone/; }
    location /lc/ { proxy_pass http://least/; }
    location /small/ { proxy_pass http://small/; }
    location /e/ { proxy_pass http://127.0.0.1:$b1/echo/; }
    location /raw/ { proxy_pass http://127.0.0.1:$b1; }
    location /noredir/ {
        proxy_pass http://127.0.0.1:$b1/;
        proxy_redirect off;
    }
    location /app1/ { proxy_pass http://127.0.0.1:$b1/; }
    location /np/ { try_files /nonexistent \@px; }
    location \@px { proxy_pass http://127.0.0.1:$b1; }
    location /pair/ {
        proxy_pass http://127.0.0.1:$b1/;
        proxy_redirect http://127.0.0.1:$b1/two/ /moved/;
        proxy_redirect http://127.0.0.1:$b1/three/ \$scheme://\$host/other/;
    }
    location /hdr/ {
        proxy_pass http://127.0.0.1:$b1/echo/;
        proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
        proxy_set_header X-Real-IP \$remote_addr;
        proxy_set_header X-Forwarded-Proto \$scheme;
        proxy_set_header Accept "";
    }
    location /nohdr/ {
        proxy_pass http://127.0.0.1:$b1/echo/;
        proxy_pass_request_headers off;
    }
    location /x/ { proxy_pass http://127.0.0.1:$b1/; }
    location /h/ { proxy_pass http://byuri/; }
    location = /status { handler status; }
    location /tv/ {
        proxy_pass https://127.0.0.1:$b4/;
        proxy_tls_verify on;
        proxy_tls_trusted_certificate %%CERTS%%/ca.pem;
        proxy_tls_name localhost;
    }
    location /tbad/ {
        proxy_pass https://127.0.0.1:$b4/;
        proxy_tls_verify on;
        proxy_tls_trusted_certificate %%CERTS%%/ca.pem;
        proxy_tls_name other.example;
    }
    location /tnov/ { proxy_pass https://127.0.0.1:$b4/; }
    location /tk/ {
        proxy_pass https://tlsgrp/;
        proxy_tls_name localhost;
    }
    location /tmo/ {
        proxy_pass http://pair/;
        proxy_read_timeout 1s;
    }
    location /next503/ {
        proxy_pass http://pair/;
        proxy_next_upstream error timeout http_503;
    }
    location /nonext/ {
        proxy_pass http://flaky/;
        proxy_next_upstream off;
    }
    location /short/ {
        proxy_pass http://127.0.0.1:$b1/;
        proxy_buffer_size 1k;
    }
    location /nobuf/ {
        proxy_pass http://127.0.0.1:$b1/;
        proxy_buffering off;
    }
    location /bufs/ {
        proxy_pass http://127.0.0.1:$b1/;
        proxy_buffers 2 4k;
    }
    location /p8/ { proxy_pass http://pool8/; }
    location /stream/ {
        proxy_pass http://127.0.0.1:$b1/;
        proxy_request_buffering off;
    }
    location /streamf/ {
        proxy_pass http://flaky/;
        proxy_request_buffering off;
    }
}
EOF

my %pid;
$pid{1} = GnBackend::start($t, $b1, 'b1');
$pid{2} = GnBackend::start($t, $b2, 'b2');
$pid{3} = GnBackend::start($t, $b3, 'b3');
$pid{5} = GnBackend::start($t, $b5, 'b5');
$pid{6} = GnBackend::start($t, $b6, 'b6');
$pid{4} = GnBackend::start($t, $b4, 'b4', "$certs/localhost-ec.pem",
                           "$certs/localhost-ec.key");
$t->run;

my $pattern = '0123456789';
sub pattern { my ($n) = @_; return substr($pattern x ($n / 10 + 1), 0, $n); }

sub get { my ($path, %o) = @_; return $t->http_get($path, %o); }

# ---- a group, round robin, the pool ----------------------------------------

my @ids = map { get('/id')->{body} } 1 .. 4;
is(join('', @ids), "b1\nb2\nb1\nb2\n", 'round robin over the group');

my @w = map { get('/w/id')->{body} } 1 .. 8;
is(scalar(grep { $_ eq "b1\n" } @w), 6, 'weight=3: three of every four');
unlike(join('', @w), qr/(b1\n){4}/, 'smooth: never four b1 in a row');

my $before = GnBackend::stats($t, $b1)->{conns}
             + GnBackend::stats($t, $b2)->{conns};
my @rs = $t->http_keepalive([map { $t->request('/size/100', keepalive => 1) }
                             1 .. 30]);
is(scalar(grep { ($_->{status} // 0) == 200
                 && $_->{body} eq pattern(100) } @rs), 30,
   '30 requests on one client connection');
my $after = GnBackend::stats($t, $b1)->{conns}
            + GnBackend::stats($t, $b2)->{conns};
# +2: the stats requests themselves, made straight to the backends
ok($after - $before <= 2 + 2, "the pool: at most one upstream connection "
   . "per server (" . ($after - $before - 2) . ")");

my %by = map { my $u = "/h/id?k=$_"; ($u => get($u)->{body}) } 1 .. 20;
my $again = grep { get($_)->{body} eq $by{$_} } sort keys %by;
is($again, 20, 'hash $request_uri consistent: a URI goes to its server');
my %n;
$n{$_}++ for values %by;
ok(($n{"b1\n"} // 0) > 0 && ($n{"b2\n"} // 0) > 0,
   'hash: URIs spread over the servers');

# ---- the request sent ------------------------------------------------------

my $r = get('/np/echo/a%2Cb?x=1');
like($r->{body} // '', qr{^GET /np/echo/a%2Cb\?x=1 HTTP/1\.1\r\n},
     'try_files to a named location: proxy_pass sends the client\'s target');
$r = get('/e/a%20b?x=1&y=%41');
like($r->{body}, qr{^GET /echo/a%20b\?x=1&y=%41 HTTP/1\.1\r\n},
     'a URI part replaces the location prefix; query as it came');
like($r->{body}, qr{^Host: 127\.0\.0\.1:$b1\r$}m, 'Host: $proxy_host');
like($r->{body}, qr{^Connection: close\r$}m,
     'an upstream without keepalive gets Connection: close');

$r = get('/echo/hop', headers => ['Connection: close, X-Hop', 'X-Hop: 1',
                                  'Keep-Alive: 5', 'TE: trailers',
                                  'X-Keep: yes', 'Upgrade: foo']);
my $echo = $r->{body};
like($echo, qr{^Host: app\r$}m, 'Host: $proxy_host, an upstream\'s name');
like($echo, qr{^X-Keep: yes\r$}m, 'an end-to-end field passes');
unlike($echo, qr{^(X-Hop|Keep-Alive|TE|Upgrade):}mi,
       'hop-by-hop fields do not, nor what Connection names');
unlike($echo, qr{^Connection:}mi, 'a pooled upstream gets no Connection');

$r = get('/hopresp');
is($r->{headers}{'x-public'}, 'ok', "the upstream's end-to-end field");
ok(!exists $r->{headers}{'x-private'},
   '... but not one its Connection names');

$r = get('/raw/echo/%7Euser/./x?q');
like($r->{body}, qr{^GET /raw/echo/%7Euser/\./x\?q HTTP/1\.1\r\n},
     'no URI part: the target goes as the client sent it');

$r = get('/echo/post', method => 'POST', body => 'x' x 100000);
like($r->{body}, qr{^POST /echo/post HTTP/1\.1\r\n}, 'POST');
like($r->{body}, qr{^Content-Length: 100000\r$}m, 'its Content-Length');
ok(substr($r->{body}, -100000) eq 'x' x 100000, 'and its body, whole');

my $chunked_req = "POST /e/chunked HTTP/1.1\r\nHost: localhost\r\n"
    . "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
    . "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
$r = $t->http($chunked_req);
like($r->{body}, qr{^Content-Length: 11\r$}m,
     'a chunked request body goes with its length');
like($r->{body}, qr{\r\n\r\nhello world$}, '... and its bytes');
unlike($r->{body}, qr{^Transfer-Encoding:}mi, '... not chunked');

$r = get('/hdr/x', headers => ['X-Forwarded-For: 192.0.2.1',
                               'Accept: text/html']);
like($r->{body}, qr{^X-Forwarded-For: 192\.0\.2\.1, 127\.0\.0\.1\r$}m,
     'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for');
like($r->{body}, qr{^X-Real-IP: 127\.0\.0\.1\r$}m, 'X-Real-IP $remote_addr');
like($r->{body}, qr{^X-Forwarded-Proto: http\r$}m, '$scheme');
unlike($r->{body}, qr{^Accept:}mi, 'an empty value: the field is not sent');
like($r->{body}, qr{^Host: 127\.0\.0\.1:$b1\r$}m,
     'Host $proxy_host stays with a list of our own');

$r = get('/nohdr/x', headers => ['X-Keep: yes']);
unlike($r->{body}, qr{^X-Keep:}mi, 'proxy_pass_request_headers off');
like($r->{body}, qr{^Host: }m, '... Host still sent');

# ---- the response relayed --------------------------------------------------

$r = get('/size/1048576');
is($r->{status}, 200, '1 MiB: 200');
is($r->{headers}{'content-length'}, 1048576, '... its Content-Length kept');
ok($r->{body} eq pattern(1048576), '... every byte');

$r = get('/chunked/100000');
is($r->{headers}{'transfer-encoding'}, 'chunked', 'chunked: chunked on');
ok($r->{body} eq pattern(100000), '... the bytes decoded and framed again');

$r = get('/chunked/3000', version => '1.0');
ok(!exists $r->{headers}{'transfer-encoding'}
   && ($r->{headers}{connection} // '') eq 'close'
   && $r->{body} eq pattern(3000), 'chunked to an HTTP/1.0 client: '
   . 'up to the close');

$r = get('/close/5000');
ok($r->{body} eq pattern(5000), 'a body up to the close');

$r = $t->http($t->request('/size/100', method => 'HEAD'));
is($r->{headers}{'content-length'}, 100, 'HEAD: the upstream length');
is($r->{body}, '', '... and no body');

$r = get('/status/404');
is($r->{status}, 404, 'a 404 passes');
like($r->{body}, qr/^status 404 from b\d$/, '... with its body');

$r = get('/echo/ct');
is($r->{headers}{'content-type'}, 'text/plain', 'Content-Type passes');
like($r->{headers}{server} // '', qr/^gannet/, 'Server is ours');

$r = get('/app1/redirect/two/x');
is($r->{status}, 302, 'a redirect');
is($r->{headers}{location}, '/app1/two/x',
   'proxy_redirect default: into the location');
$r = get('/noredir/redirect/two/x');
is($r->{headers}{location}, "http://127.0.0.1:$b1/two/x",
   'proxy_redirect off: as the upstream said');
is(get('/pair/redirect/two/x')->{headers}{location}, '/moved/x',
   'proxy_redirect FROM TO: the first pair that matches');
is(get('/pair/redirect/three/y')->{headers}{location},
   'http://localhost/other/y', '... TO with variables');
is(get('/pair/redirect/four/z')->{headers}{location},
   "http://127.0.0.1:$b1/four/z",
   '... none matches: as it came (the level has no "default")');

# ---- errors -----------------------------------------------------------------

$r = get('/f/id');
is($r->{body}, "b1\n", 'a refused server: the next one answers');
$r = get('/f/id');
is($r->{body}, "b1\n", '... and again');
# a line is written after its response went out, a moment after the client
# has it all (longer under valgrind): wait for the line, not just read
sub log_like
{
    my ($re, $name) = @_;
    ok($t->wait_log($re, 5, 'logs/access.log'), $name)
        or diag($t->read_file("$t->{dir}/logs/access.log"));
}

log_like(qr{^/f/id 200 \[127\.0\.0\.1:$dead, 127\.0\.0\.1:$b1\] \[502, 200\]}m,
         '$upstream_addr and $upstream_status of both tries');
log_like(qr{^/f/id 200 \[127\.0\.0\.1:$b1\] \[200\]}m,
         'max_fails=1: the failed server is left out for fail_timeout');

$r = get('/nonext/id');
ok($r->{status} == 200 || $r->{status} == 502,
   'proxy_next_upstream off: one try');

$r = get('/s/id');
is($r->{body}, "b3\n", 'the backup serves when the primary cannot');

$r = get('/gone/id');
is($r->{status}, 502, 'no server left: 502');

$r = get('/x/garble');
is($r->{status}, 502, 'a garbled response head: 502');

$r = get('/short/size/10', headers => ['X-Big: ' . ('a' x 2000)]);
is($r->{status}, 200, 'proxy_buffer_size 1k: a small head passes');
$r = get('/short/redirect/' . ('a' x 1500));
is($r->{status}, 502, '... a larger head is 502');

my $t0 = time();
$r = get('/tmo/silent');
is($r->{status}, 504, 'proxy_read_timeout, each server tried: 504');
ok(time() - $t0 < GnTest::slow(10), '... in its time');
log_like(qr{^/tmo/silent 504 \[[^\]]*, [^\]]*\] \[504, 504\]}m,
         '... both tries in the log');

$r = get('/x/cut/50000');
ok($r->{error} && $r->{error} =~ /incomplete|closed/,
   'a cut response is cut at the client too') or diag(explain($r));

$r = get('/x/extra');
is($r->{body}, '01234', 'more than Content-Length: cut to it');
$r = get('/x/id');
is($r->{body}, "b1\n", '... and the next request is fine');

$r = get('/next503/status/503');
is($r->{status}, 503, 'http_503 in proxy_next_upstream: both tried');
log_like(qr{^/next503/status/503 503 \[[^\]]*, [^\]]*\] \[503, 503\]}m,
         '... as the log says');

$r = get('/status/503');
is($r->{status}, 503, 'without it, the first 503 is the answer');

$r = get('/id');
like($r->{body}, qr/^b\d\n$/, 'the group still serves');

$r = get('/x/ws101');
is($r->{status}, 502, 'a 101 nobody asked for: 502');
$r = get('/x/ws');
is($r->{status}, 400, 'no Upgrade asked for: none passed on');

$r = get('/e/x', method => 'POST', body => 'abc');
is($r->{status}, 200, 'a POST after all that');

# a backend restarted under the pool: idle connections it closed are
# dropped, and the next request goes on a new one
get('/small/id') for 1 .. 3;
GnBackend::stop($pid{1});
$pid{1} = GnBackend::start($t, $b1, 'b1');
$r = get('/small/id');
is($r->{body}, "b1\n", 'a restarted backend: the pool recovers (GET)');
$r = get('/small/echo/p', method => 'POST', body => 'abc');
is($r->{status}, 200, '... and POST');

# ---- WebSocket through the proxy --------------------------------------------

sub ws_frame_out
{
    my ($data, $op) = @_;
    my $mask = pack('N', int(rand(2**32)));
    my $n = length $data;
    my $head = chr(0x80 | ($op // 1));
    $head .= $n < 126 ? chr(0x80 | $n)
           : $n < 65536 ? chr(0x80 | 126) . pack('n', $n)
           : chr(0x80 | 127) . pack('Q>', $n);
    my @m = unpack('C4', $mask);
    my $i = 0;
    (my $masked = $data) =~ s/(.)/chr(ord($1) ^ $m[$i++ % 4])/gse;
    return $head . $mask . $masked;
}

# one frame from $$buf (reading $s as needed): (opcode, payload) or ()
sub ws_frame_in
{
    my ($s, $buf) = @_;
    my $end = time() + GnTest::slow(10);
    while (time() < $end) {
        if (length($$buf) >= 2) {
            my ($b0, $b1) = unpack('CC', $$buf);
            my ($n, $off) = ($b1 & 0x7f, 2);
            ($n, $off) = (unpack('n', substr($$buf, 2, 2)), 4) if $n == 126;
            ($n, $off) = (unpack('Q>', substr($$buf, 2, 8)), 10) if $n == 127;
            if (length($$buf) >= $off + $n) {
                my $data = substr($$buf, $off, $n);
                substr($$buf, 0, $off + $n) = '';
                return ($b0 & 0x0f, $data);
            }
        }
        my $sel = IO::Select->new($s);
        last unless $sel->can_read(1);
        my $n = sysread($s, $$buf, 65536, length $$buf);
        last unless $n;
    }
    return ();
}

SKIP: {
    eval { require Digest::SHA; require MIME::Base64; 1 }
        or skip('no Digest::SHA', 9);
    my $key = MIME::Base64::encode_base64(join('', map { chr(rand(256)) }
                                                    1 .. 16), '');
    my $s = $t->connect;
    $t->write_all($s, "GET /x/ws HTTP/1.1\r\nHost: localhost\r\n"
                      . "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                      . "Sec-WebSocket-Key: $key\r\n"
                      . "Sec-WebSocket-Version: 13\r\n\r\n"
                      . ws_frame_out('sent with the request'));
    my $buf = '';
    my $end = time() + GnTest::slow(10);
    while ($buf !~ /\r\n\r\n/ && time() < $end) {
        IO::Select->new($s)->can_read(1) or next;
        sysread($s, $buf, 65536, length $buf) or last;
    }
    my ($head) = $buf =~ /^(.*?\r\n\r\n)/s;
    $head //= '';
    $buf = substr($buf, length $head);
    like($head, qr{^HTTP/1\.1 101 }, 'WebSocket: 101 through the proxy');
    my $accept = MIME::Base64::encode_base64(Digest::SHA::sha1(
        $key . '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'), '');
    like($head, qr{^Sec-WebSocket-Accept: \Q$accept\E\r$}m,
         '... the upstream\'s handshake answer');
    like($head, qr{^Upgrade: websocket\r$}mi, '... Upgrade');
    like($head, qr{^Connection: upgrade\r$}mi, '... Connection: upgrade');
    my @f = ws_frame_in($s, \$buf);
    is($f[1], 'hello from b1', '... the upstream\'s first frame');
    @f = ws_frame_in($s, \$buf);
    is($f[1], 'sent with the request',
       '... bytes that came with the request: echoed');
    my $big = pattern(300000);
    $t->write_all($s, ws_frame_out('one') . ws_frame_out($big)
                      . ws_frame_out('two'));
    my @got = map { (ws_frame_in($s, \$buf))[1] // '' } 1 .. 3;
    ok($got[0] eq 'one' && $got[1] eq $big && $got[2] eq 'two',
       '... frames echoed in order, 300 kB too');
    $t->write_all($s, ws_frame_out('', 8));
    @f = ws_frame_in($s, \$buf);
    is($f[0], 8, '... a close answered');
    my ($rest, $closed) = $t->read_until_close($s, 5);
    ok($closed, '... and the connection closed');
    close $s;
}

# ---- upstreams over TLS ------------------------------------------------------

$r = get('/tv/id');
is($r->{body}, "b4\n", 'https upstream, its certificate verified');
$r = get('/tv/tls');
like($r->{body}, qr/ sni=localhost$/, '... proxy_tls_name sent by SNI');
$r = get('/tbad/id');
is($r->{status}, 502, 'a certificate that does not verify: 502');
$r = get('/tnov/id');
is($r->{body}, "b4\n", 'proxy_tls_verify off: served');
$r = get('/tnov/tls');
like($r->{body}, qr/^reused=1 /,
     'a new connection resumes the last TLS session');
$r = get('/tnov/echo/x', method => 'POST', body => 'y' x 100000);
ok(substr($r->{body}, -100000) eq 'y' x 100000, '... a POST over it');
my @tk = $t->http_keepalive([map { $t->request('/tk/size/70000',
                                                keepalive => 1) } 1 .. 5]);
is(scalar(grep { ($_->{body} // '') eq pattern(70000) } @tk), 5,
   'a pooled TLS upstream: five bodies whole');
# the last line is written after its response went out: wait for it
my @ct;
my $tk_end = time() + GnTest::slow(5);
do {
    my $log = $t->read_file("$t->{dir}/logs/access.log") // '';
    @ct = $log =~ m{^/tk/size/70000 200 \[[^\]]*\] \[200\] \[([^\]]*)\]}mg;
} while (@ct < 5 && time() < $tk_end && sleep(0.05));
ok(@ct == 5 && (grep { $_ eq '0.000' } @ct) >= 3,
   '... most over kept connections (connect time ' . join(' ', @ct) . ')');

# ---- HTTP/2 clients ----------------------------------------------------------

SKIP: {
    my ($rc, $body) = $t->curl('--http2-prior-knowledge',
                               "http://127.0.0.1:" . $t->port(0)
                               . "/size/300000");
    skip('curl cannot speak HTTP/2 in the clear', 3) if $rc == 2;
    ok($rc == 0 && $body eq pattern(300000), 'HTTP/2: a proxied body');
    ($rc, $body) = $t->curl('--http2-prior-knowledge',
                            "http://127.0.0.1:" . $t->port(0)
                            . "/chunked/50000");
    ok($rc == 0 && $body eq pattern(50000), 'HTTP/2: a chunked one');
    ($rc, $body) = $t->curl('--http2-prior-knowledge', '--data-binary',
                            'h2 body', "http://127.0.0.1:" . $t->port(0)
                            . "/echo/h2");
    like($body, qr{^POST /echo/h2 HTTP/1\.1\r\n.*\r\n\r\nh2 body$}s,
         'HTTP/2: a POST goes to the upstream as HTTP/1.1');
}

# ---- a client that goes, a client that is slow ---------------------------------

{
    my $s = $t->connect;
    $t->write_all($s, $t->request('/x/size/20000000'));
    my $got = '';
    while (length($got) < 100000) {
        my $n = sysread($s, $got, 65536, length $got);
        last unless $n;
    }
    close $s;
    sleep(0.3);
    $r = get('/x/id');
    is($r->{body}, "b1\n", 'a client gone mid-response: the next is served');
}

SKIP: {
    skip('memory is not measured under valgrind', 2) if GnTest::valgrind();
    my ($kid) = $t->children;
    my $rss = sub {
        my $st = $t->read_file("/proc/$kid/status") // '';
        return $st =~ /^VmRSS:\s+(\d+) kB/m ? $1 : 0;
    };
    my $before_kb = $rss->();
    my $s = $t->connect(rcvbuf => 4096);
    $t->write_all($s, $t->request('/x/size/60000000'));
    my $got = '';
    for (1 .. 40) {
        my $n = sysread($s, $got, 4096, length $got);
        last unless $n;
        sleep(0.01);
    }
    sleep(0.5);
    my $during_kb = $rss->();
    close $s;
    ok(length($got) > 0, 'a slow client gets its first bytes');
    ok($during_kb - $before_kb < 16 * 1024,
       'a fast upstream and a slow client: the child grew by '
       . ($during_kb - $before_kb) . ' kB, not by 60 MB');
}

for my $p ('/nobuf/chunked/2000000', '/bufs/size/2000000') {
    $r = get($p);
    ok(($r->{body} // '') eq pattern(2000000),
       "$p: proxy_buffering off / proxy_buffers 2 4k, every byte");
}

# ---- load: 1,000 clients at once through a pool of 8 ------------------------

{
    my $want = GnTest::valgrind() ? 100 : 1000;
    my $before = GnBackend::stats($t, $b5)->{conns}
                 + GnBackend::stats($t, $b6)->{conns};
    my ($rc, $out) = $t->run_client(['python3',
                                     "$t->{srcdir}/t/lib/loadcheck.py",
                                     $t->port(0), '/p8/', $want, 3],
                                    timeout => GnTest::slow(150));
    my %l = ($out // '') =~ /(\w+)=(\d+)/g;
    diag("loadcheck: $out") unless ($l{clients} // 0) == $want;
    is($l{clients}, $want, "$want clients at once (the descriptor limit "
       . 'allows them)');
    is($l{ok}, 3 * ($l{clients} // 0), '... 3 requests each, every body '
       . 'checked: all right');
    is(($l{bad} // -1) + ($l{errors} // -1), 0, '... none wrong, none '
       . 'failed');
    my $open = GnBackend::stats($t, $b5)->{open}
               + GnBackend::stats($t, $b6)->{open};
    cmp_ok($open, '<=', 8 + 2, "... then the pool keeps at most 8 "
           . "connections open (and the stats' own): $open");
    note('upstream connections made: '
         . (GnBackend::stats($t, $b5)->{conns}
            + GnBackend::stats($t, $b6)->{conns} - $before));
}

# ---- request bodies as they come (proxy_request_buffering off) ------------

# A request whose body comes in two parts a second apart; the backend says
# how long after the head its body ended.
sub two_parts
{
    my ($path, $chunked, $p1, $p2) = @_;
    my $s = $t->connect;
    my $head = "POST $path HTTP/1.1\r\nHost: localhost\r\nConnection: close"
               . "\r\n" . ($chunked ? "Transfer-Encoding: chunked\r\n"
                                  : 'Content-Length: ' . length($p1 . $p2)
                                    . "\r\n") . "\r\n";
    my $frame = sub { $chunked ? sprintf("%x\r\n%s\r\n", length $_[0], $_[0])
                               : $_[0] };
    $t->write_all($s, $head . $frame->($p1));
    sleep(1);
    $t->write_all($s, $frame->($p2) . ($chunked ? "0\r\n\r\n" : ''));
    my $buf = '';
    my $res = $t->read_response($s, \$buf);
    close $s;
    my %v = ($res->{body} // '') =~ /(\w+)=(\w+)/g;
    return \%v;
}

my ($p1, $p2) = ('a' x 30000, 'b' x 20000);
my $v = two_parts('/x/bodytime', 0, $p1, $p2);
is($v->{md5}, md5_hex($p1 . $p2), 'a body in two parts, buffered: whole');
cmp_ok($v->{body_ms} // 9999, '<', 700,
       '... it went to the upstream once it was all read');
$v = two_parts('/stream/bodytime', 0, $p1, $p2);
is($v->{md5}, md5_hex($p1 . $p2),
   'proxy_request_buffering off: the body whole');
cmp_ok($v->{body_ms} // 0, '>=', 700,
       '... its first part went before the second came ('
       . ($v->{body_ms} // '?') . ' ms)');
is($v->{chunked}, 0, '... with its Content-Length');
$v = two_parts('/stream/bodytime', 1, $p1, $p2);
is($v->{md5}, md5_hex($p1 . $p2), 'a chunked body, streamed: whole');
is($v->{chunked}, 1, '... chunked to the upstream, no length known');
cmp_ok($v->{body_ms} // 0, '>=', 700, '... as it came');
$v = two_parts('/streamf/bodytime', 0, $p1, $p2);
is($v->{md5}, md5_hex($p1 . $p2),
   'streamed, the first server refused: the next one has it whole');

# ---- many clients, a small pool: each gets its own bytes --------------------

my $nproc = 10;
my @kids;
for my $k (1 .. $nproc) {
    my $kid = fork();
    die "fork: $!" unless defined $kid;
    if ($kid == 0) {
        my $bad = 0;
        srand($k);
        my @sizes = map { 1 + int(rand(200000)) } 1 .. 20;
        my @res = $t->http_keepalive([map {
            $t->request("/lc/size/$_", keepalive => 1) } @sizes]);
        for my $i (0 .. $#sizes) {
            $bad++ unless ($res[$i]{status} // 0) == 200
                          && $res[$i]{body} eq pattern($sizes[$i]);
        }
        POSIX::_exit($bad > 255 ? 255 : $bad);
    }
    push @kids, $kid;
}
my $bad = 0;
for (@kids) { waitpid($_, 0); $bad += $? >> 8; }
is($bad, 0, "$nproc clients x 20 responses over a pool of 8: every body "
   . "its own");
my $open = GnBackend::stats($t, $b1)->{open} + GnBackend::stats($t, $b2)->{open};
ok($open <= 8 + 4 + 2 + 2 + 2, "upstream connections open: $open");

# ---- the status page: each upstream server's counters ------------------------

$r = get('/status?format=json');
my ($flaky_dead) = $r->{body} =~ /(\{"upstream":"flaky","server":"127\.0\.0\.1:$dead"[^}]*\}[^}]*\}[^}]*\}[^}]*\})/;
like($flaky_dead // '', qr/"state":"failed"/,
     'status JSON: a server left out after max_fails is "failed"');
like($flaky_dead // '', qr/"failures":\{"connect":[1-9]/,
     '... its refused connects counted');
like($flaky_dead // '', qr/"disabled":[1-9]/, '... and its being left out');
my ($app1) = $r->{body} =~ /(\{"upstream":"app","server":"127\.0\.0\.1:$b1"[^\n]*)/;
like($app1 // '', qr/"requests":[1-9]\d*,"responses":\{"1xx":0,"2xx":[1-9]/,
     '... a busy server: requests and 2xx responses');
like($app1 // '', qr/"idle":[1-9]/, '... and connections idle in its pool');
like($app1 // '', qr/"response_time_ms":\{"1":\d+/, '... response times');
like($r->{body}, qr/"upstream":"127\.0\.0\.1:$b1","server":"127\.0\.0\.1:$b1"/,
     '... a proxy_pass URL\'s server too');
my ($x1) = $r->{body} =~ /(\{"upstream":"127\.0\.0\.1:$b1"[^\n]*)/;
# (a loaded machine can make a 2 s read time out too: that is counted
# as a timeout, which this check is not about)
like($x1 // '', qr/"failures":\{"connect":0,"timeout":\d+,"invalid":[1-9]\d*,"cut":[1-9]/,
     '... a garbled head and a cut response counted as such');
my ($pair1) = $r->{body} =~ /(\{"upstream":"pair","server":"127\.0\.0\.1:$b1"[^\n]*)/;
like($pair1 // '', qr/"timeout":[1-9]/, '... a timeout');
like($pair1 // '', qr/"5xx":[1-9]/, '... a 503');
$r = get('/status?format=prometheus');
like($r->{body}, qr/^gannet_upstream_requests_total\{upstream="app",server="127\.0\.0\.1:$b1"\} [1-9]/m,
     'Prometheus: gannet_upstream_requests_total');
like($r->{body}, qr/^gannet_upstream_up\{upstream="flaky",server="127\.0\.0\.1:$dead"\} 0$/m,
     'Prometheus: gannet_upstream_up 0 for the failed one');
like($r->{body}, qr/^gannet_upstream_response_seconds_bucket\{upstream="app",server="127\.0\.0\.1:$b1",le="\+Inf"\} [1-9]/m,
     'Prometheus: the response-time histogram');
$r = get('/status');
like($r->{body}, qr/<p class=gn-upstream>upstream app, server 127\.0\.0\.1:$b1: up;/,
     'the page: a line per upstream server');

# a reload that keeps the servers keeps their counters
sub app1_requests
{
    my $b = get('/status?format=json')->{body} // '';
    return $b =~ /\{"upstream":"app","server":"127\.0\.0\.1:$b1"[^\n]*?"requests":(\d+)/
           ? $1 : -1;
}
my $n_before = app1_requests();
my $from = length $t->error_log;
$t->signal('HUP');
$t->wait_log(qr/started child \d+ \(slot 0, generation 2\)/, 10, undef,
             $from);
$t->wait_log(qr/child \d+ exited with code 0/, 10, undef, $from);
ok(app1_requests() >= $n_before && $n_before > 0,
   'a reload keeps the upstream counters');

my $el = $t->error_log;
like($el, qr/\[error\].*connect\(\) failed while connecting to upstream, upstream: 127\.0\.0\.1:$dead \(111: Connection refused\)/,
     'the error log: a refused connect, with the upstream');
like($el, qr/\[warn\].*upstream server 127\.0\.0\.1:$dead of "flaky" temporarily disabled/,
     '... a server taken out');
like($el, qr/\[error\].*upstream timed out while reading the response head/,
     '... a timeout');
like($el, qr/\[error\].*upstream closed the connection early while reading the response from upstream 127\.0\.0\.1:$b1/,
     '... a cut response');
like($el, qr/\[error\].*invalid response head/, '... garbage');
like($el, qr/\[warn\].*more data than its response framed/,
     '... a response longer than its length');
unlike($el, qr/no live upstreams in "gone"/,
       '... a lone server that failed: that failure, not "no live '
       . 'upstreams" too');
like($el, qr/\[error\].*the upstream's certificate did not verify, upstream: 127\.0\.0\.1:$b4/,
     '... a certificate that did not verify');

$t->done;
