#!/usr/bin/perl

# Pipelining and keep-alive (issue 3): bursts answered in order, requests
# split at any byte, bodies of rejected or static requests discarded so the
# connection stays usable, keepalive_requests and keepalive_timeout.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new(timeout => 90);

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
shutdown_timeout 5s;

types {
    text/plain  txt;
}

client_header_timeout 10s;
client_body_timeout 10s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
}

server {
    listen 127.0.0.1:%%PORT_1%%;
    root html;
    keepalive_requests 3;
}

server {
    listen 127.0.0.1:%%PORT_2%%;
    root html;
    keepalive_timeout 1s;
}

server {
    listen 127.0.0.1:%%PORT_3%%;
    root html;
    keepalive_timeout 0;
}
EOF_CONF

my @files;
for my $i (0 .. 19) {
    my $name = sprintf('f%02d.txt', $i);
    my $body = "file $i\n" . ("$i" x ($i * 7 + 1)) . "\n";
    $t->write_file("html/$name", $body);
    push @files, [$name, $body];
}

$t->run;

my $H = "Host: localhost\r\n";
my ($r, @r);

sub get
{
    my ($path, %opt) = @_;
    return $t->request($path, keepalive => 1, %opt);
}

# ---- a burst of 20 pipelined requests in one write ----------------------

@r = $t->http_keepalive(
    [ (map { get("/$_->[0]") } @files[0 .. 18]),
      $t->request("/$files[19][0]") ],
    pipeline => 1, timeout => 5);
is(scalar(grep { ($_->{status} // 0) == 200 } @r), 20,
   'burst of 20: 20 responses with 200');
is(scalar(grep { $r[$_]{body} eq $files[$_][1] } 0 .. 19), 20,
   'burst of 20: answered in order (each body matches its file)');
is(scalar(grep { ($_->{headers}{connection} // '') =~ /close/i }
          @r[0 .. 18]), 0, 'burst of 20: no Connection: close before the last');

# a burst larger than any read buffer: 60 requests with 1 KiB headers
{
    my $pad = 'X-Pad: ' . ('p' x 1000);
    my @reqs = map { get("/$files[$_ % 20][0]", headers => [$pad]) } 0 .. 58;
    push @reqs, $t->request("/$files[19][0]", headers => [$pad]);
    @r = $t->http_keepalive(\@reqs, pipeline => 1, timeout => 10);
    is(scalar(grep { ($r[$_]{body} // '') eq $files[$_ % 20][1] } 0 .. 59),
       60, 'burst of 60 x 1 KiB: all answered in order');
}

# GET, HEAD, GET, HEAD ... pipelined: HEAD responses carry no body
{
    my @reqs = map { get("/$files[$_][0]", method => $_ % 2 ? 'HEAD' : 'GET') }
               0 .. 8;
    push @reqs, $t->request("/$files[9][0]", method => 'HEAD');
    @r = $t->http_keepalive(\@reqs, pipeline => 1, timeout => 5);
    my $good = grep {
        my $i = $_;
        ($r[$i]{status} // 0) == 200
        && ($i % 2 ? $r[$i]{body} eq '' : $r[$i]{body} eq $files[$i][1])
        && ($r[$i]{headers}{'content-length'} // -1) == length $files[$i][1]
    } 0 .. 9;
    is($good, 10, 'GET and HEAD alternating in a pipeline');
}

# ---- one byte at a time ------------------------------------------------

{
    my $req = $t->request("/$files[3][0]");
    my $s = $t->connect;
    my $buf = '';
    my $ok = 1;

    for my $i (0 .. length($req) - 1) {
        $ok &&= $t->write_all($s, substr($req, $i, 1));
        sleep(0.02);
    }
    ok($ok, 'one byte at a time: all bytes written');
    $r = $t->read_response($s, \$buf, timeout => 5);
    is($r->{status}, 200, 'one byte at a time: 200');
    is($r->{body}, $files[3][1], 'one byte at a time: body');
    close $s;
}

# ---- the second request split across writes -------------------------------

{
    my $s = $t->connect;
    my $buf = '';
    my $r1 = get("/$files[1][0]");
    my $r2 = $t->request("/$files[2][0]");
    my $cut = int(length($r2) / 2);

    $t->write_all($s, $r1 . substr($r2, 0, $cut));
    $r = $t->read_response($s, \$buf, timeout => 5);
    is($r->{status}, 200, 'split second request: first answered');
    is($r->{body}, $files[1][1], 'split second request: first body');
    sleep(0.3);
    $t->write_all($s, substr($r2, $cut, 7));
    sleep(0.3);
    $t->write_all($s, substr($r2, $cut + 7));
    $r = $t->read_response($s, \$buf, timeout => 5);
    is($r->{status}, 200, 'split second request: second answered');
    is($r->{body}, $files[2][1], 'split second request: second body');
    close $s;
}

# split inside the CRLF CRLF that ends the head
{
    my $s = $t->connect;
    my $buf = '';
    my $req = $t->request("/$files[4][0]");

    $t->write_all($s, substr($req, 0, length($req) - 3));
    sleep(0.2);
    $t->write_all($s, substr($req, length($req) - 3, 1));
    sleep(0.2);
    $t->write_all($s, substr($req, length($req) - 2));
    $r = $t->read_response($s, \$buf, timeout => 5);
    is($r->{body}, $files[4][1], 'head split inside the final CRLFCRLF');
    close $s;
}

# ---- bodies on the connection --------------------------------------------

# POST (405) with a Content-Length body, pipelined with a GET
# (the body looks like a request: it must be taken as body bytes)
my $pb = "GET /$files[6][0] HTTP/1.1\r\n${H}\r\n";
@r = $t->http_keepalive(
    [ "POST /$files[5][0] HTTP/1.1\r\n${H}Content-Length: "
      . length($pb) . "\r\n\r\n$pb",
      $t->request("/$files[7][0]") ],
    pipeline => 1, timeout => 5);
is($r[0]{status}, 405, 'pipelined POST: 405');
is($r[1]{status}, 200, 'pipelined GET after POST body: 200');
is($r[1]{body}, $files[7][1], 'pipelined GET after POST body: body');
is(scalar(@r), 2, 'pipelined POST: exactly two responses');

# the same with the body arriving later than the head
{
    my $s = $t->connect;
    my $buf = '';
    $t->write_all($s, "POST /$files[5][0] HTTP/1.1\r\n$H"
                      . "Content-Length: 10\r\n\r\n01234");
    sleep(0.3);
    $t->write_all($s, "56789" . $t->request("/$files[8][0]"));
    my ($raw, $closed) = $t->read_until_close($s, 5);
    my @st = $raw =~ m{^HTTP/1\.1 (\d{3}) }mg;
    is("@st", '405 200', 'POST body in two writes, then GET: 405 200');
    like($raw, qr/\Q$files[8][1]\E\z/, 'POST body in two writes: GET body');
    close $s;
}

# chunked POST body followed by a GET
@r = $t->http_keepalive(
    [ "POST /$files[5][0] HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n"
      . "4\r\nabcd\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n",
      $t->request("/$files[9][0]") ],
    pipeline => 1, timeout => 5);
is($r[0]{status}, 405, 'pipelined chunked POST: 405');
is($r[1]{status}, 200, 'pipelined GET after chunked POST: 200');
is($r[1]{body}, $files[9][1], 'pipelined GET after chunked POST: body');

# a GET with a body (read and discarded), then a GET
@r = $t->http_keepalive(
    [ "GET /$files[10][0] HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello",
      $t->request("/$files[11][0]") ],
    pipeline => 1, timeout => 5);
is($r[0]{body}, $files[10][1], 'GET with a body: answered');
is($r[1]{body}, $files[11][1], 'GET after a GET with a body: answered');

# HEAD in a pipeline: no body bytes that would shift the next response
@r = $t->http_keepalive(
    [ get("/$files[12][0]", method => 'HEAD'),
      $t->request("/$files[13][0]") ],
    pipeline => 1, timeout => 5);
is($r[0]{status}, 200, 'pipelined HEAD: 200');
is($r[1]{body}, $files[13][1], 'GET after HEAD: body intact');

# errors in a pipeline: a 404 keeps the connection, later requests answered
@r = $t->http_keepalive(
    [ get('/missing.txt'), get("/$files[14][0]"),
      $t->request("/$files[15][0]") ],
    pipeline => 1, timeout => 5);
is(join(' ', map { $_->{status} // 'none' } @r), '404 200 200',
   'pipelined 404 then two files');
is($r[2]{body}, $files[15][1], 'pipelined after 404: body');

# a malformed request in the middle of a pipeline: answered 400, then closed
{
    my ($raw, $closed) = $t->http_raw(
        get("/$files[16][0]") . "GET /x HTTP/1.1\r\nHost : bad\r\n\r\n"
        . get("/$files[17][0]"), timeout => 5);
    my @st = $raw =~ m{^HTTP/1\.1 (\d{3}) }mg;
    is("@st", '200 400', 'pipeline with a bad request: 200 400, no more');
    ok($closed, 'pipeline with a bad request: closed after the 400');
}

# ---- keepalive_requests 3 --------------------------------------------------

{
    my $s = $t->connect(port => $t->port(1));
    my $buf = '';
    my @res;

    for my $i (0 .. 2) {
        $t->write_all($s, get("/$files[$i][0]"));
        push @res, $t->read_response($s, \$buf, timeout => 5);
    }
    is(join(' ', map { $_->{status} // 'none' } @res), '200 200 200',
       'keepalive_requests 3: three responses on one connection');
    unlike($res[1]{headers}{connection} // '', qr/close/i,
           'keepalive_requests 3: second keeps alive');
    like($res[2]{headers}{connection} // '', qr/^close$/i,
         'keepalive_requests 3: third has Connection: close');
    is($res[2]{body}, $files[2][1], 'keepalive_requests 3: third body');
    my (undef, $closed) = $t->read_until_close($s, 5);
    ok($closed, 'keepalive_requests 3: closed after the third');
    close $s;
}

# pipelined beyond the limit: exactly 3 answered
{
    my ($raw, $closed) = $t->http_raw(
        join('', map { get("/$files[$_][0]") } 0 .. 4),
        port => $t->port(1), timeout => 5);
    my $n = () = $raw =~ m{^HTTP/1\.1 200 }mg;
    is($n, 3, 'keepalive_requests 3, 5 pipelined: 3 answered');
    ok($closed, 'keepalive_requests 3, 5 pipelined: then closed');
}

# ---- keepalive_timeout 1s --------------------------------------------------

{
    my $s = $t->connect(port => $t->port(2));
    my $buf = '';

    $t->write_all($s, get("/$files[0][0]"));
    $r = $t->read_response($s, \$buf, timeout => 5);
    is($r->{status}, 200, 'keepalive_timeout 1s: 200');
    unlike($r->{headers}{connection} // '', qr/close/i,
           'keepalive_timeout 1s: kept alive');
    my $start = time();
    my ($rest, $closed) = $t->read_until_close($s, 5);
    ok($closed, 'keepalive_timeout 1s: idle connection closed within 5 s');
    is($rest, '', 'keepalive_timeout 1s: closed silently');
    diag(sprintf('closed after %.2f s', time() - $start))
        if $ENV{TEST_GN_VERBOSE};
    close $s;
}

# a connection that is used again before the timeout keeps working
{
    my $s = $t->connect(port => $t->port(2));
    my $buf = '';
    my @st;

    for my $i (0 .. 2) {
        $t->write_all($s, get("/$files[$i][0]"));
        $r = $t->read_response($s, \$buf, timeout => 5);
        push @st, $r->{status} // 'none';
        sleep(0.4);
    }
    is("@st", '200 200 200',
       'keepalive_timeout 1s: reused at 0.4 s intervals');
    close $s;
}

# keepalive_timeout 0 disables keep-alive
{
    my ($raw, $closed) = $t->http_raw(
        get("/$files[0][0]") . get("/$files[1][0]"),
        port => $t->port(3), timeout => 5);
    my $n = () = $raw =~ m{^HTTP/1\.1 200 }mg;
    is($n, 1, 'keepalive_timeout 0: one response only');
    like($raw, qr/^Connection: close\r$/mi,
         'keepalive_timeout 0: Connection: close');
    ok($closed, 'keepalive_timeout 0: closed after the response');
}

# the main server still has its default keep-alive
{
    my $s = $t->connect;
    my $buf = '';
    $t->write_all($s, get("/$files[0][0]"));
    $r = $t->read_response($s, \$buf, timeout => 5);
    my (undef, $closed) = $t->read_until_close($s, 2);
    ok(!$closed, 'default keepalive_timeout: still open after 2 s');
    close $s;
}

$t->done;
