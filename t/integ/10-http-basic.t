#!/usr/bin/perl

# Static GET/HEAD, 404, 301 for directories, index files, 405/501,
# keep-alive, HTTP/1.0, Connection: close, pipelining, the access log and
# path escapes.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
shutdown_timeout 5s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types {
        text/html   html htm;
        text/plain  txt;
    }
    default_type application/octet-stream;
    access_log logs/access.log;
}
EOF_CONF

my $index = "<html><body>index</body></html>\n";
my $dindex = "<html><body>dir index</body></html>\n";
my $fa = "file a\n" x 100;
my $fb = join('', map { chr($_ % 256) } 0 .. 4999);     # binary, 5000 bytes

$t->write_file('html/index.html', $index);
$t->write_file('html/dir/index.html', $dindex);
$t->write_file('html/a.txt', $fa);
$t->write_file('html/b.bin', $fb);

$t->run;

my ($r, @r);

# GET a file
$r = $t->http_get('/a.txt');
is($r->{status}, 200, 'GET /a.txt: 200');
is($r->{body}, $fa, 'GET /a.txt: body');
is($r->{headers}{'content-length'}, length $fa, 'GET /a.txt: Content-Length');
like($r->{headers}{'content-type'} // '', qr{^text/plain\b},
     'GET /a.txt: Content-Type');
like($r->{headers}{server} // '', qr{^gannet}, 'Server header');
ok(defined $r->{headers}{date}, 'Date header');
ok(defined $r->{headers}{'last-modified'}, 'Last-Modified header');
ok(defined $r->{headers}{etag}, 'ETag header');

$r = $t->http_get('/b.bin');
is($r->{status}, 200, 'GET /b.bin: 200');
ok($r->{body} eq $fb, 'GET /b.bin: binary body exact');
is($r->{headers}{'content-type'}, 'application/octet-stream',
   'GET /b.bin: default_type');

# HEAD: same headers, no body (read until close to be sure)
{
    my ($raw, $closed) = $t->http_raw($t->request('/a.txt', method => 'HEAD'));
    my ($head, $rest) = split /\r\n\r\n/, $raw, 2;

    like($head, qr{^HTTP/1\.1 200 }, 'HEAD /a.txt: 200');
    like($head, qr/^Content-Length: ${\ length $fa}\r?$/mi,
         'HEAD: same Content-Length as GET');
    is($rest, '', 'HEAD: no body');
    ok($closed, 'HEAD with Connection: close: closed');
}

# 404
$r = $t->http_get('/missing.html');
is($r->{status}, 404, 'GET missing file: 404');
$r = $t->http_get('/nodir/missing.html');
is($r->{status}, 404, 'GET file in a missing dir: 404');

# directories
$r = $t->http_get('/dir');
is($r->{status}, 301, 'directory without slash: 301');
like($r->{headers}{location} // '', qr{/dir/$},
     'Location ends in "/dir/"');

$r = $t->http_get('/dir/');
is($r->{status}, 200, 'directory with slash: 200');
is($r->{body}, $dindex, 'directory with slash: index.html');

$r = $t->http_get('/');
is($r->{status}, 200, 'GET /: 200');
is($r->{body}, $index, 'GET /: index.html');

# methods
for my $m (qw(POST DELETE PUT)) {
    $r = $t->http_get('/index.html', method => $m,
                      body => $m eq 'DELETE' ? undef : 'x=1');
    is($r->{status}, 405, "$m on a static file: 405");
    my $allow = $r->{headers}{allow} // '';
    ok($allow =~ /\bGET\b/ && $allow =~ /\bHEAD\b/,
       "$m: Allow lists GET and HEAD") or diag("Allow: $allow");
}

$r = $t->http_get('/index.html', method => 'FOO');
is($r->{status}, 501, 'unknown method: 501');

# keep-alive: two requests on one connection
@r = $t->http_keepalive([$t->request('/a.txt', keepalive => 1),
                         $t->request('/index.html', keepalive => 1)]);
is($r[0]{status}, 200, 'keep-alive: first response');
is($r[1]{status}, 200, 'keep-alive: second response on the same connection');
is($r[0]{body}, $fa, 'keep-alive: first body');
is($r[1]{body}, $index, 'keep-alive: second body');
unlike($r[0]{headers}{connection} // '', qr/close/i,
       'keep-alive: first response does not close');
is($r[0]{conn}, $r[1]{conn}, 'keep-alive: one connection');

# HTTP/1.0 without keep-alive closes after the response
{
    my ($raw, $closed) = $t->http_raw("GET /a.txt HTTP/1.0\r\n\r\n",
                                      timeout => 5);
    like($raw, qr{^HTTP/1\.[01] 200 }, 'HTTP/1.0: 200');
    ok($closed, 'HTTP/1.0 without keep-alive: closed after the response');
    my $n = () = $raw =~ m{^HTTP/1\.}mg;
    is($n, 1, 'HTTP/1.0: exactly one response');
    like($raw, qr/\r\n\r\n\Q$fa\E\z/, 'HTTP/1.0: complete body');
}

# HTTP/1.0 with keep-alive stays open
@r = $t->http_keepalive(
    ["GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
     "GET /index.html HTTP/1.0\r\n\r\n"]);
is($r[0]{status}, 200, 'HTTP/1.0 keep-alive: first');
like($r[0]{headers}{connection} // '', qr/keep-alive/i,
     'HTTP/1.0 keep-alive: Connection: keep-alive');
is($r[1]{status}, 200, 'HTTP/1.0 keep-alive: second on the same connection');

# Connection: close honoured
{
    my ($raw, $closed) = $t->http_raw($t->request('/a.txt'), timeout => 5);
    ok($closed, 'Connection: close: closed after the response');
    like($raw, qr/^Connection: close\r$/mi, 'Connection: close header');
    my $n = () = $raw =~ m{^HTTP/1\.}mg;
    is($n, 1, 'Connection: close: one response');
}

# pipelining: three requests in one write, answered in order
@r = $t->http_keepalive([$t->request('/a.txt', keepalive => 1),
                         $t->request('/b.bin', keepalive => 1),
                         $t->request('/index.html')], pipeline => 1);
is(scalar(grep { ($_->{status} // 0) == 200 } @r), 3,
   'pipelined: 3 responses');
ok($r[0]{body} eq $fa && $r[1]{body} eq $fb && $r[2]{body} eq $index,
   'pipelined: answered in order');

# access log: one combined line per request
{
    my $log = "logs/access.log";

    # the pipelined burst's last request (/index.html) is logged once its
    # response is out, which a slow server (valgrind) may do after the
    # client has read it: count from after that line
    my $end0 = time() + GnTest::slow(3);
    while (time() < $end0
           && ($t->read_file($log) // '') !~ m{"GET /index\.html [^\n]*\n\z})
    {
        select(undef, undef, undef, 0.05);
    }
    my $n0 = () = ($t->read_file($log) // '') =~ /\n/g;
    my @req = (
        [$t->request('/a.txt', keepalive => 1,
                     headers => ['User-Agent: gn-test/1', 'Referer: /ref'])],
        [$t->request('/missing', keepalive => 1)],
        [$t->request('/b.bin', method => 'HEAD')],
    );
    my @res = $t->http_keepalive([map { $_->[0] } @req]);
    my @new;

    my $end = time() + GnTest::slow(3);
    while (time() < $end) {
        my @l = split /\n/, $t->read_file($log) // '';
        @new = @l[$n0 .. $#l];
        last if @new >= 3;
        select(undef, undef, undef, 0.05);
    }
    is(scalar @new, 3, 'access log: one line per request');

    my $re = '^127\.0\.0\.1 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d '
             . '[+-]\d{4}\] "([A-Z]+) (\S+) HTTP/1\.1" (\d{3}) (\d+) '
             . '"([^"]*)" "([^"]*)"$';
    $re = qr/$re/;
    my @m = map { [ ($new[$_] // '') =~ $re ] } 0 .. 2;

    is_deeply($m[0], ['GET', '/a.txt', 200, length $fa, '/ref', 'gn-test/1'],
              'access log: combined line for GET /a.txt')
        or diag($new[0]);
    is_deeply($m[1], ['GET', '/missing', 404,
                      length($res[1]{body}), '-', '-'],
              'access log: 404 line with body bytes')
        or diag($new[1]);
    is_deeply($m[2], ['HEAD', '/b.bin', 200, 0, '-', '-'],
              'access log: HEAD line with 0 body bytes')
        or diag($new[2]);
}

# a real client
SKIP: {
    skip 'curl not found', 2 unless grep { -x "$_/curl" } split /:/, $ENV{PATH};
    my $url = 'http://127.0.0.1:' . $t->port(0);
    my ($rc, $out) = $t->curl("$url/a.txt");
    is($rc, 0, 'curl: exit 0');
    ok($out eq $fa, 'curl: body');
}

# path escapes never return a file outside the root
for my $p ('/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd',
           '/dir/../../../etc/passwd', '/%2E%2E/%2E%2E/%2E%2E/etc/passwd',
           '/..%2f..%2f..%2fetc%2fpasswd', '/dir/%2e%2e/%2e%2e/etc/passwd',
           '/./.././../etc/passwd')
{
    $r = $t->http_get($p);
    ok(defined $r->{status} && $r->{status} =~ /^(400|404)$/,
       "escape $p: 400 or 404") or diag('got ' . ($r->{status} // 'none'));
    unlike($r->{body}, qr/root:/, "escape $p: no passwd");
}

# a request path that stays inside the root after ".." is fine either way
$r = $t->http_get('/dir/../a.txt');
ok(($r->{status} // 0) == 200 && $r->{body} eq $fa
   || ($r->{status} // 0) == 400, '/dir/../a.txt: the file or 400');

$t->done;
