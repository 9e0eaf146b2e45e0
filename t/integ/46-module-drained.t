#!/usr/bin/perl

# Streamed responses at the client's pace (ABI 1.5, on_drained): a
# module that write() tells GN_AGAIN stops and is called back once the
# response has drained, instead of polling. mod_example's
# /example/generate?mb=N writes N MiB of numbered lines that way; to
# clients that read slowly over HTTP/1.1 and HTTP/2 (curl --limit-rate)
# every byte arrives in order, the module paused (its log line counts
# the pauses and says it was resumed by on_drained). mod_cgi uses it
# too: a 5 MB script's output to a slow reader arrives whole.

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new(timeout => 120);
$t->skip_unless_module('mod_example');
$t->skip_unless_module('mod_cgi');
plan(skip_all => 'no perl at /usr/bin/perl for the CGI script')
    unless -x '/usr/bin/perl';

my $dir = $t->testdir;
my $root = $< == 0;
my $cgi_user = $root ? 'nobody' : '%%USER%%';
mkdir("$dir/html/cgi") or die "mkdir: $!";
copy("$t->{srcdir}/t/cgi/big.cgi", "$dir/html/cgi/big.cgi")
    or die "copy big.cgi: $!";
chmod(0755, $dir, "$dir/html", "$dir/html/cgi", "$dir/html/cgi/big.cgi");

$t->write_conf(<<"EOF");
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_example.so;
load_module %%MODDIR%%/mod_cgi.so;
cgi_user $cgi_user;

server {
    listen 127.0.0.1:%%PORT_0%% http2;
    root html;
    location /example/ { handler example; }
    location /cgi/ { handler cgi; }
}
EOF
$t->run;

# "%015d\\n" for 1 .. n, checked without building the whole expected body
sub lines_ok
{
    my ($body, $n) = @_;

    return "length " . length($body) . ", not " . 16 * $n
        if length($body) != 16 * $n;
    for my $k (1 .. $n) {
        my $l = substr($body, 16 * ($k - 1), 16);
        return "line $k is \"$l\"" if $l ne sprintf("%015d\n", $k);
    }
    return 'ok';
}

# GET on one connection with a small receive buffer, read slowly
sub slow_get
{
    my ($path, $pause) = @_;
    my $s = $t->connect(rcvbuf => 16384);
    my ($buf, $n) = ('');

    $t->write_all($s, "GET $path HTTP/1.1\r\nHost: localhost\r\n"
                      . "Connection: close\r\n\r\n");
    my $end = time() + GnTest::slow(60);
    while (time() < $end) {
        $n = sysread($s, $buf, 65536, length $buf);
        last if !defined $n || $n == 0;
        sleep($pause);
    }
    close $s;
    my ($head, $body) = split /\r\n\r\n/, $buf, 2;
    return ($head // '', $body // '');
}

sub dechunk
{
    my ($b) = @_;
    my $out = '';

    while ($b =~ s/^([0-9a-fA-F]+)\r\n//) {
        my $len = hex $1;
        last if $len == 0;
        $out .= substr($b, 0, $len, '');
        $b =~ s/^\r\n//;
    }
    return $out;
}

# ---- HTTP/1.1, a slow reader ------------------------------------------------

my ($head, $body) = slow_get('/example/generate?mb=8', 0.004);
like($head, qr{^HTTP/1.1 200 }, 'HTTP/1.1: 200');
$body = dechunk($body) if $head =~ /^Transfer-Encoding: chunked/mi;
is(lines_ok($body, 8 * 65536), 'ok', '8 MiB, every line in order');
my $m = $t->wait_log(qr/example: generated 8388608 bytes, (\d+) pauses /
                     . qr/\((\w+)\)/, 10);
ok($m, 'the module logged its end');
my ($pauses, $how) = $t->error_log
    =~ /example: generated 8388608 bytes, (\d+) pauses \((\w+)\)/;
ok(($pauses // 0) > 0, 'it had to wait for the client: '
   . ($pauses // 0) . ' pauses');
is($how, 'on_drained', 'and was resumed by on_drained');

# ---- HTTP/2, curl --limit-rate ----------------------------------------------

SKIP: {
    my $out = "$dir/h2.body";
    my ($rc, $code) = $t->curl('--http2-prior-knowledge', '--limit-rate',
                               '16M', '-o', $out, '-w', '%{http_code} '
                               . '%{http_version}', 'http://127.0.0.1:'
                               . $t->port(0) . '/example/generate?mb=8');
    skip("curl failed ($rc)", 3) if $rc != 0;
    is($code, '200 2', 'HTTP/2: 200');
    is(lines_ok($t->read_file($out) // '', 8 * 65536), 'ok',
       'HTTP/2: 8 MiB, every line in order');
    my @m = $t->error_log
        =~ /example: generated 8388608 bytes, (\d+) pauses \((\w+)\)/g;
    ok(@m >= 4 && $m[2] > 0 && $m[3] eq 'on_drained',
       'HTTP/2: paused ' . ($m[2] // '?') . ' times, resumed by '
       . ($m[3] // '?'));
}

# ---- the end cases ----------------------------------------------------------

my $r = $t->http_get('/example/generate?mb=0');
is($r->{status}, 200, 'nothing to generate: 200');
is(length($r->{body}), 0, 'with an empty body');
is($t->http_get('/example/generate?mb=2000')->{status}, 400,
   'more than 1024 MiB: 400');

# HEAD to a streamed response: its head, never its body, and the next
# response on the connection is intact (HTTP/1.1 sent the body bytes
# after the head once)
my @hr = $t->http_keepalive([
    $t->request('/example/generate?mb=1', method => 'HEAD', keepalive => 1),
    $t->request('/example/generate?mb=0', keepalive => 1)], timeout => 10);
is($hr[0]{status}, 200, 'HEAD of a streamed response: 200');
is($hr[0]{body} // '', '', '... no body');
ok(($hr[1]{status} // 0) == 200 && ($hr[1]{body} // 'x') eq '',
   '... and the next response on the connection is its own');

# a client that goes away while the module waits: the child goes on
my $s = $t->connect(rcvbuf => 4096);
$t->write_all($s, "GET /example/generate?mb=64 HTTP/1.1\r\n"
                  . "Host: localhost\r\n\r\n");
sleep(0.3);
close $s;
sleep(0.2);
$r = $t->http_get('/example/generate?mb=1');
is(lines_ok($r->{body}, 65536), 'ok',
   'after a client left mid-response, the next is served');

# ---- CGI, a slow reader -----------------------------------------------------

($head, $body) = slow_get('/cgi/big.cgi', 0.004);
like($head, qr{^HTTP/1.1 200 }, 'CGI to a slow reader: 200');
$body = dechunk($body) if $head =~ /^Transfer-Encoding: chunked/mi;
is(length($body), 5 * 1024 * 1024, 'CGI: 5 MB whole');
ok(substr($body, 0, 8) eq '00000001'
   && substr($body, -1024, 8) eq '00005120', 'CGI: first and last line');

$t->done;
