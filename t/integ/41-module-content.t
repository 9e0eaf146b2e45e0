#!/usr/bin/perl

# Modules serving content (mod_example, mod_t_info, mod_t_crash): a plain
# response with directive values; request info through the API and the
# server variables (HTTP and TLS); request bodies (Content-Length,
# chunked, too large); pending requests answered from a timer without
# blocking the child, and a client that goes away while one is pending;
# a streamed (flushed, chunked) response; filters on static files and
# module content (a header added, a 403 from filter_headers); a module
# that crashes kills only its child: keep-alive connections on the other
# child carry on and the master replaces the dead one, with an [alert].

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use IO::Select;
use GnTest;

my $t = GnTest->new(timeout => 90);
$t->skip_unless_bin;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
$ENV{GN_TMODDIR} //= "$top/t/modules/.libs";

for my $m ("$ENV{GN_MODDIR}/mod_example.so", "$ENV{GN_TMODDIR}/mod_t_info.so",
           "$ENV{GN_TMODDIR}/mod_t_crash.so")
{
    plan(skip_all => "$m not built") unless -f $m;
}

# TLS only when the server has it and a client and certificates can be had.
my ($rc, $vout, $verr) = $t->gannet('-V');
my $tls = ($vout . $verr) =~ /gnutls/i && defined GnTest::_which('curl')
          && defined GnTest::_which('certtool');
my $tls_conf = '';
if ($tls) {
    require GnTLS;
    GnTLS::certs();
    $tls_conf = <<'EOF_TLS';
server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    location /_t/ {
        handler t_info;
    }
    location /example/ {
        handler example;
    }
    location /bigfile/ {
        handler example;
        example_file %%TESTDIR%%/data/big.bin;
    }
}
EOF_TLS
}

$t->write_conf(<<"EOF_CONF");
children 2;
user %%USER%%;
error_log logs/error.log info;

load_module %%MODDIR%%/mod_example.so;
load_module %%TMODDIR%%/mod_t_info.so;
load_module %%TMODDIR%%/mod_t_crash.so;

example_delay_max 1s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
    client_max_body_size 1m;
    keepalive_timeout 30s;
    types { text/html html; }

    location /example/ {
        handler example;
        example_greeting "hi there";
        example_repeat 2;
        example_max_echo 2m;
    }
    location /small/ {
        handler example;
        example_max_echo 16;
    }
    location /stuck/ {
        handler example;
        send_timeout 300ms;
    }
    location /_t/ {
        handler t_info;
    }
    location /crash/ {
        handler t_crash;
    }

    # send_file: from the open-file cache (small: bytes in memory; big:
    # sendfile), with the cache off, and its failures
    location /file/ {
        handler example;
        example_file %%TESTDIR%%/data/small.bin;
        file_cache_valid 200ms;
    }
    location /bigfile/ {
        handler example;
        example_file %%TESTDIR%%/data/big.bin;
    }
    location /nocache/ {
        handler example;
        example_file %%TESTDIR%%/data/inplace.bin;
        file_cache off;
    }
    location /nofile/ {
        handler example;
        example_file %%TESTDIR%%/data/missing.bin;
    }
    location /dirfile/ {
        handler example;
        example_file %%TESTDIR%%/data;
    }
}

$tls_conf
EOF_CONF

my $index = "<html>static</html>\n";
$t->write_file('html/index.html', $index);
my $small = join('', map { chr(($_ * 7 + 3) % 256) } 0 .. 999);     # 1000
my $bigf = join('', map { chr(($_ * 13 + $_ / 251) % 256) } 0 .. 199_999);
$t->write_file('data/small.bin', $small);
$t->write_file('data/big.bin', $bigf);
$t->write_file('data/inplace.bin', 'a' x 64);
$t->write_file('html/_t/decline', "static, not t_info\n");
$t->run;
my @kids = $t->wait_children(2, 5);
is(scalar @kids, 2, '2 children');

# ---- a plain response ------------------------------------------------------

my $r = $t->http_get('/example/');
is($r->{status}, 200, 'GET /example/: 200');
is($r->{body}, "hi there\nhi there\n", 'greeting x example_repeat');
is($r->{headers}{'content-type'}, 'text/plain', 'Content-Type from module');
is($r->{headers}{'content-length'}, 18, 'Content-Length by the server');

$r = $t->http_head('/example/');
is($r->{status}, 200, 'HEAD /example/: 200');

$r = $t->http_get('/example/', method => 'DELETE');
is($r->{status}, 405, 'DELETE /example/: 405 from the handler');
is($r->{headers}{allow}, 'GET, HEAD', 'Allow set by the handler');

# ---- a handler that declines -----------------------------------------------

# GN_DECLINED: the request goes on as if the handler were not there, to
# the static files.
$r = $t->http_get('/_t/decline');
is($r->{status}, 200, 'declined: 200');
is($r->{body}, "static, not t_info\n", 'declined: the static file served');
ok(defined $r->{headers}{etag} && !defined $r->{headers}{'cache-control'},
   'declined: the static handler\'s headers, none of the module\'s');
is($t->http_get('/_t/nothing/decline')->{status}, 404,
   'declined, no such file: 404 from the static files');
{
    # a body the module never read: discarded, the connection goes on
    my $s = $t->connect;
    my $b = '';
    $t->write_all($s, $t->request('/_t/decline', method => 'POST',
                                  body => 'x' x 5000, keepalive => 1)
                      . $t->request('/_t/info', keepalive => 1));
    my $x = $t->read_response($s, \$b);
    is($x->{status}, 405, 'declined POST: the static files\' 405');
    $x = $t->read_response($s, \$b);
    like($x->{body} // '', qr/"uri":"\/_t\/info"/,
         'declined POST: its body discarded, the next request served');
    close $s;
}
my $log_from = length $t->error_log;
$r = $t->http_get('/_t/decline-late');
is($r->{status}, 500, 'declined after writing: 500');
unlike($r->{body}, qr/half a response/, '... without the half response');
my $late = 'module "t_info" declined the request after writing to its response';
ok($t->wait_log(qr/\[error\] .*\Q$late\E/, 5, undef, $log_from),
   '... and the module named in the error log');

# ---- request info ----------------------------------------------------------

sub lines
{
    my ($body) = @_;
    my %h;

    for my $l (split /\n/, $body // '') {
        my ($k, $v) = $l =~ /^([^:]+): ?(.*)$/ or next;
        $h{$k} = $v unless exists $h{$k};
    }
    return \%h;
}

$r = $t->http_get('/example/a/../info?x=1&y=%41',
                  headers => ['User-Agent: gntest/1', 'X-Two: a',
                              'X-Two: b']);
is($r->{status}, 200, 'GET /example/info: 200');
my $i = lines($r->{body});
is($i->{method}, 'GET', 'method');
is($i->{uri}, '/example/info', 'uri: decoded, normalised');
is($i->{query}, 'x=1&y=%41', 'query without "?"');
is($i->{request_uri}, '/example/a/../info?x=1&y=%41', 'request_uri as sent');
is($i->{http_version}, 11, 'http_version 11');
is($i->{'header User-Agent'}, 'gntest/1', 'header() by name');
like($r->{body}, qr/^header: Host: localhost$/m, 'header_next: Host');
like($r->{body}, qr/^header: X-Two: a\nheader: X-Two: b$/m,
     'header_next: repeated headers in order');
is($i->{'var REQUEST_METHOD'}, 'GET', 'REQUEST_METHOD');
is($i->{'var QUERY_STRING'}, 'x=1&y=%41', 'QUERY_STRING');
is($i->{'var REQUEST_URI'}, '/example/a/../info?x=1&y=%41', 'REQUEST_URI');
is($i->{'var REMOTE_ADDR'}, '127.0.0.1', 'REMOTE_ADDR');
like($i->{'var REMOTE_PORT'} // '', qr/^\d+$/, 'REMOTE_PORT');
is($i->{'var SERVER_ADDR'}, '127.0.0.1', 'SERVER_ADDR');
is($i->{'var SERVER_PORT'}, $t->port(0), 'SERVER_PORT');
is($i->{'var SERVER_PROTOCOL'}, 'HTTP/1.1', 'SERVER_PROTOCOL');
like($i->{'var SERVER_SOFTWARE'} // '', qr{^gannet}, 'SERVER_SOFTWARE');
is($i->{'var HTTPS'}, 'off', 'HTTPS off');
is($i->{'var TLS_PROTOCOL'}, '', 'TLS_PROTOCOL empty without TLS');
like($i->{'var DOCUMENT_ROOT'} // '', qr{html/?$}, 'DOCUMENT_ROOT');
like($i->{document_root} // '', qr{html/?$}, 'document_root()');
like($i->{mapped_path} // '', qr{html/example/info$}, 'mapped_path()');
is($i->{'conf greeting'}, 'hi there', 'conf: string');
is($i->{'conf repeat'}, 2, 'conf: number');
is($i->{'conf verbose'}, 0, 'conf: flag default');
is($i->{'conf max_echo'}, 2 * 1024 * 1024, 'conf: size 2m');
is($i->{'conf delay_max'}, 1000, 'conf: duration inherited from main');
like($i->{'child slot'} // '', qr/^[01]$/, 'child slot from init_child');

$r = $t->http_get('/example/info', version => '1.0');
$i = lines($r->{body});
is($i->{http_version}, 10, 'HTTP/1.0: http_version 10');
is($i->{'var SERVER_PROTOCOL'}, 'HTTP/1.0', 'HTTP/1.0: SERVER_PROTOCOL');

# filter_log counts the requests of its child: two on one connection.
{
    my @r = $t->http_keepalive([
        $t->request('/example/info', keepalive => 1),
        $t->request('/example/info', keepalive => 1)]);
    my ($a, $b) = map { lines($_->{body})->{'requests logged by this child'} }
                  @r;
    ok(defined $a && defined $b && $b == $a + 1,
       "filter_log ran after the first response ($a, $b)");
}

# ---- request bodies --------------------------------------------------------

$r = $t->http_get('/example/echo', method => 'POST', body => 'hello body',
                  headers => ['Content-Type: text/x-test']);
is($r->{status}, 200, 'POST /example/echo: 200');
is($r->{body}, "read 10 bytes: hello body\n", 'body read');

$r = $t->http(
    "POST /example/echo HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
    . "Transfer-Encoding: chunked\r\n\r\n"
    . "5\r\nhello\r\n6\r\n chunk\r\n0\r\n\r\n");
is($r->{status}, 200, 'chunked POST: 200');
is($r->{body}, "read 11 bytes: hello chunk\n", 'chunked body read');

$r = $t->http_get('/example/echo', method => 'POST', body => '');
is($r->{body}, "no body\n", 'Content-Length: 0: no body');

my $big = join('', map { sprintf("%07d\n", $_) } 1 .. 40000);   # 320000
$r = $t->http_get('/example/echo', method => 'POST', body => $big,
                  timeout => 20);
is($r->{status}, 200, 'POST 320000 bytes: 200');
ok($r->{body} eq "read 320000 bytes: $big\n",
   'POST 320000 bytes: read in pieces, all of it in order');

$r = $t->http_get('/small/echo', method => 'POST', body => 'x' x 100);
is($r->{status}, 413, 'declared length > example_max_echo: 413');

$r = $t->http(
    "POST /small/echo HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
    . "Transfer-Encoding: chunked\r\n\r\n"
    . "20\r\n" . ('y' x 32) . "\r\n0\r\n\r\n");
is($r->{status}, 413, 'chunked body > example_max_echo: 413 from callback');

# declared, not sent: the server answers before reading it
$r = $t->http("POST /example/echo HTTP/1.1\r\nHost: localhost\r\n"
              . "Connection: close\r\nContent-Length: 1048577\r\n\r\n");
is($r->{status}, 413, 'body > client_max_body_size: 413 from the server');

# ---- pending requests ------------------------------------------------------

$r = $t->http_get('/example/delay?ms=300');
is($r->{status}, 200, 'delay 300 ms: 200');
is($r->{body}, "delayed 300 ms\n", 'delay 300 ms: answered by the timer');

$r = $t->http_get('/example/delay?ms=5000');
is($r->{body}, "delayed 1000 ms\n", 'delay capped by example_delay_max');

$r = $t->http_get('/example/delay');
is($r->{status}, 400, 'delay without ms: 400 from the handler');

# Pending requests do not block their child.  Proven by order, not by
# time: a child that blocked in a handler would answer its requests in
# the order it took them.

# Keep-alive connections until each child holds $per of them: pid ->
# [{ s, buf, pid }, ...] (t_info says which child answered).
sub conns_on_children
{
    my ($per) = @_;
    my %on;

    for (1 .. 80) {
        my $s = $t->connect or last;
        my $b = '';
        $t->write_all($s, $t->request('/_t/info', keepalive => 1));
        my $x = $t->read_response($s, \$b);
        my ($pid) = ($x->{body} // '') =~ /"pid":(\d+)/;
        if (!$pid || @{$on{$pid} // []} >= $per) {
            close $s;
            next;
        }
        push @{$on{$pid}}, { s => $s, buf => \$b, pid => $pid };
        last if keys %on == 2 && !grep { @$_ < $per } values %on;
    }
    return %on;
}

sub readable { return IO::Select->new($_[0]{s})->can_read($_[1] // 0); }

{
    my %on = conns_on_children(2);
    my @pids = sort { $a <=> $b } keys %on;
    is(scalar(grep { @{$on{$_}} == 2 } @pids), 2,
       'two keep-alive connections on each child');

    SKIP: {
        skip('could not reach both children twice', 6) unless @pids == 2;

        # 1. A 1000 ms request pending on each child; new connections
        #    until each child has answered one: it must be before the
        #    pending response.
        $t->write_all($on{$_}[0]{s},
                      $t->request('/example/delay?ms=1000', keepalive => 1))
            for @pids;
        my %quick;    # pid -> answered while its request was pending
        for (1 .. 40) {
            my $x = $t->http_get('/_t/info');
            my ($pid) = ($x->{body} // '') =~ /"pid":(\d+)/;
            next if !$pid || !$on{$pid} || exists $quick{$pid};
            $quick{$pid} = !readable($on{$pid}[0]);
            last if keys %quick == 2;
        }
        for my $i (0, 1) {
            ok($quick{$pids[$i]}, "child $i answered a new connection "
               . 'before the request pending on it');
        }
        my $done = 0;
        for my $pid (@pids) {
            my $c = $on{$pid}[0];
            my $x = $t->read_response($c->{s}, $c->{buf}, timeout => 5);
            $done++ if ($x->{body} // '') eq "delayed 1000 ms\n";
        }
        is($done, 2, 'both pending requests answered');

        # 2. On each child, 1000 ms then 100 ms on its two connections:
        #    the later, shorter one is answered first.
        for my $pid (@pids) {
            $t->write_all($on{$pid}[0]{s},
                          $t->request('/example/delay?ms=1000',
                                      keepalive => 1));
            $t->write_all($on{$pid}[1]{s},
                          $t->request('/example/delay?ms=100',
                                      keepalive => 1));
        }
        my @order;    # "pid/connection" in the order they became readable
        my %seen;
        my $end = time() + GnTest::slow(10);
        while (keys %seen < 4 && time() < $end) {
            for my $pid (@pids) {
                for my $k (0, 1) {
                    next if $seen{"$pid/$k"} || !readable($on{$pid}[$k]);
                    $seen{"$pid/$k"} = 1;
                    push @order, "$pid/$k";
                }
            }
            sleep(0.005);
        }
        for my $i (0, 1) {
            my $p = $pids[$i];
            my @mine = grep { m{^$p/} } @order;
            is("@mine", "$p/1 $p/0", "child $i: the 100 ms request sent "
               . 'second is answered first');
        }
        my @bodies;
        for my $pid (@pids) {
            for my $k (0, 1) {
                my $c = $on{$pid}[$k];
                my $x = $t->read_response($c->{s}, $c->{buf}, timeout => 5);
                push @bodies, $x->{body} // '';
            }
        }
        is(join('', @bodies),
           "delayed 1000 ms\ndelayed 100 ms\n" x 2, '... both bodies right');
    }
    for my $pid (keys %on) {
        close $_->{s} for @{$on{$pid}};
    }
}

# A module that does not finish within send_timeout: the connection is
# closed with an error line, the module's timer goes with the request
# (it would fire 700 ms later, on a request that is gone).
{
    my $from = length $t->error_log;
    my $s = $t->connect;
    $t->write_all($s, $t->request('/stuck/delay?ms=1000', keepalive => 1));
    my ($got, $closed) = $t->read_until_close($s, 5);
    ok($closed && $got eq '', 'module past send_timeout: closed, no response');
    my $msg = 'timed out, while waiting for a module to finish the response';
    ok($t->wait_log(qr/\[error\] .*\Q$msg\E/, 5, undef, $from),
       '... with "timed out, while waiting for a module" in the log');
    close $s;
    sleep(1);
    is($t->http_get('/example/')->{status}, 200,
       '... and after the timer would have fired, the server serves');
    is(scalar($t->children), 2, '... no child died');
}

# A client that goes away while its request is pending: the timer is
# cancelled with the request, the child carries on.
{
    my @gone;
    for (1 .. 4) {
        my $s = $t->connect;
        $t->write_all($s, $t->request('/example/delay?ms=200'));
        push @gone, $s;
    }
    sleep(0.05);
    close $_ for @gone;
    sleep(0.4);
    is($t->http_get('/example/')->{status}, 200,
       'clients gone while pending: server still serves');
    is(scalar($t->children), 2, '... and no child died');
}

# ---- a streamed response ---------------------------------------------------

$r = $t->http_get('/example/stream');
is($r->{status}, 200, 'stream: 200');
ok($r->{chunked}, 'stream: chunked (flush before the end)');
is($r->{body}, "tick 1\ntick 2\ntick 3\n", 'stream: body');

$r = $t->http_get('/example/stream', version => '1.0');
is($r->{body}, "tick 1\ntick 2\ntick 3\n", 'stream, HTTP/1.0: body');
ok(!$r->{chunked}, 'stream, HTTP/1.0: not chunked');

# ---- filters ---------------------------------------------------------------

$r = $t->http_get('/index.html', headers => ['X-Example-Filter: 1']);
is($r->{status}, 200, 'static file with filters: 200');
is($r->{body}, $index, 'static file with filters: body');
is($r->{headers}{'x-example-filter'}, 'headers',
   'filter_headers added a header to a static response');
is($r->{headers}{'x-example-mapped'}, 'yes',
   'filter_mapped added a header to a static response');

$r = $t->http_get('/index.html');
ok(!exists $r->{headers}{'x-example-filter'}
   && !exists $r->{headers}{'x-example-mapped'},
   'no filter headers when not asked for');

$r = $t->http_get('/_t/info', headers => ['X-Example-Filter: 1']);
is($r->{headers}{'x-example-filter'}, 'headers',
   'filter of one module on the content of another');

$r = $t->http_get('/index.html', headers => ['X-Example-Deny: 1']);
is($r->{status}, 403, 'filter_headers returning 403: static file refused');
$r = $t->http_get('/example/', headers => ['X-Example-Deny: 1']);
is($r->{status}, 403, 'filter_headers returning 403: handler not run');

# ---- send_file --------------------------------------------------------------

$t->expect_log(qr/\[error\] .*example: cannot send "[^"]*missing\.bin": No such file/);
$t->expect_log(qr/\[error\] .*example: cannot send "[^"]*data": Is a directory/);

for my $f (['/file/', $small, 'small file (cached bytes)'],
           ['/bigfile/', $bigf, 'big file (sendfile)'])
{
    my ($u, $data, $what) = @$f;
    my $n = length $data;

    # twice: the second comes from the cache
    for my $try (1, 2) {
        $r = $t->http_get("${u}file");
        is($r->{status}, 200, "send_file $what, try $try: 200");
        ok(($r->{body} // '') eq "[$data]\n",
           "send_file $what, try $try: the whole file between the writes");
        is($r->{headers}{'content-length'}, $n + 3,
           "send_file $what, try $try: Content-Length");
    }

    $r = $t->http_get("${u}file?off=10&len=20");
    ok(($r->{body} // '') eq '[' . substr($data, 10, 20) . "]\n",
       "send_file $what: off=10 len=20");
    $r = $t->http_get("${u}file?off=" . ($n - 5) . '&len=100');
    ok(($r->{body} // '') eq '[' . substr($data, $n - 5) . "]\n",
       "send_file $what: a length past the end stops at the end");
    $r = $t->http_get("${u}file?off=$n");
    is($r->{body}, "[]\n", "send_file $what: offset at the end: nothing");
    $r = $t->http_get("${u}file?off=" . ($n + 1));
    is($r->{status}, 404, "send_file $what: offset past the end: fails");
    unlike($r->{body} // '', qr/^\[/, "send_file $what: the failed "
           . 'response has none of what the handler wrote');

    $r = $t->http_head("${u}file?off=1");
    is($r->{status}, 200, "HEAD send_file $what: 200");
    is($r->{headers}{'content-length'}, $n - 1 + 3,
       "HEAD send_file $what: Content-Length");
}

# one keep-alive connection, the two files in turn
{
    my @r = $t->http_keepalive([
        map { $t->request($_, keepalive => 1) }
            '/bigfile/file?off=100', '/file/file', '/bigfile/file',
            '/file/file?len=1']);
    ok(($r[0]{body} // '') eq '[' . substr($bigf, 100) . "]\n"
       && ($r[1]{body} // '') eq "[$small]\n"
       && ($r[2]{body} // '') eq "[$bigf]\n"
       && ($r[3]{body} // '') eq '[' . substr($small, 0, 1) . "]\n",
       'send_file: four responses on one keep-alive connection');
}

# read_file (ABI 1.1): the whole file's bytes, which the handler copies
# and upper-cases
$t->expect_log(qr/\[error\] .*example: cannot read "[^"]*small\.bin": File too large/);
$t->expect_log(qr/\[error\] .*example: cannot read "[^"]*missing\.bin": No such file/);
$t->expect_log(qr/\[error\] .*example: cannot read "[^"]*data": Is a directory/);
for my $f (['/file/', $small, 'small file (cached bytes)'],
           ['/bigfile/', $bigf, 'big file (read into the request)'])
{
    my ($u, $data, $what) = @$f;
    (my $want = $data) =~ tr/a-z/A-Z/;
    for my $try (1, 2) {
        $r = $t->http_get("${u}data");
        ok($r->{status} == 200 && ($r->{body} // '') eq $want,
           "read_file $what, try $try: the bytes");
    }
    $r = $t->http_get("${u}data?max=" . length $data);
    ok(($r->{body} // '') eq $want, "read_file $what: max = its size");
}
$r = $t->http_get('/file/data?max=999');
is($r->{status}, 404, 'read_file of a file larger than max: fails (EFBIG)');
$r = $t->http_get('/nofile/data');
is($r->{status}, 404, 'read_file of a missing file: fails');
$r = $t->http_get('/dirfile/data');
is($r->{status}, 404, 'read_file of a directory: fails');
# the cached bytes were not changed by the handler's copy
$r = $t->http_get('/file/file');
ok(($r->{body} // '') eq "[$small]\n", 'read_file left the cached bytes alone');

$r = $t->http_get('/nofile/file');
is($r->{status}, 404, 'send_file of a missing file: 404 from the handler');
$r = $t->http_get('/dirfile/file');
is($r->{status}, 404, 'send_file of a directory: 404 from the handler');

# a replaced file is sent anew once its entry is older than
# file_cache_valid (200ms here): the cache checks it with stat()
my $small2 = 'new contents, another size';
$t->write_file('data/small.bin', $small2);
select(undef, undef, undef, 0.5);
for my $try (1 .. 4) {          # each child revalidates its own entry
    $r = $t->http_get('/file/file');
    ok(($r->{body} // '') eq "[$small2]\n",
       "send_file after file_cache_valid: the new file ($try)");
}
$r = $t->http_get('/file/data');
is($r->{body}, uc $small2, 'read_file after file_cache_valid: the new file');

# file_cache off: a file changed in place is read on every request
$r = $t->http_get('/nocache/file');
is($r->{body}, '[' . ('a' x 64) . "]\n", 'file_cache off: the file');
{
    open(my $fh, '+<:raw', $t->testdir . '/data/inplace.bin') or die "$!";
    print $fh 'b' x 64;
    close $fh;
}
$r = $t->http_get('/nocache/file');
is($r->{body}, '[' . ('b' x 64) . "]\n",
   'file_cache off: a change in place is seen at once');
$r = $t->http_get('/nocache/data');
is($r->{body}, 'B' x 64, 'file_cache off: read_file sees it too');

# ---- TLS variables ---------------------------------------------------------

SKIP: {
    skip('no TLS (server, curl or certtool)', 6) unless $tls;

    my $c = GnTLS::curl($t, port => $t->port(1), path => '/_t/info');
    is($c->{status}, 200, 'TLS: 200') or diag($c->{err});
    my %h;
    while (($c->{body} // '') =~ /"(\w+)":(?:"([^"]*)"|(-?\d+))/g) {
        $h{$1} = defined $2 ? $2 : $3;
    }
    is($h{https}, 'on', 'TLS: HTTPS on');
    like($h{tls_protocol} // '', qr/^TLS(?:v| )?1\.[23]$/i,
         "TLS: TLS_PROTOCOL $h{tls_protocol}");
    like($h{tls_cipher} // '', qr/\S/, "TLS: TLS_CIPHER $h{tls_cipher}");

    $c = GnTLS::curl($t, port => $t->port(1), path => '/example/info');
    like($c->{body} // '', qr/^var HTTPS: on$/m, 'TLS: mod_example sees it');

    $c = GnTLS::curl($t, port => $t->port(1), path => '/bigfile/file?off=3');
    ok(($c->{body} // '') eq '[' . substr($bigf, 3) . "]\n",
       'TLS: send_file of a big file');
}

# ---- a crashing module -----------------------------------------------------

# A keep-alive connection on each child.
my %one = conns_on_children(1);
my %conn_of = map { $_ => $one{$_}[0] } keys %one;
is(scalar(keys %conn_of), 2, 'keep-alive connections on both children');

SKIP: {
    skip('could not reach both children', 8) unless keys %conn_of == 2;

    my ($victim, $other) = sort { $a <=> $b } keys %conn_of;
    my $vc = $conn_of{$victim};
    my $oc = $conn_of{$other};

    $t->expect_log(qr/\[alert\] .*child $victim exited on signal 11\b/);
    # the crash itself is the one error memcheck reports in that child
    $t->expect_valgrind(qr/Invalid write .*\n\S+ +at \S+: t_crash_handler /);

    $t->write_all($vc->{s}, $t->request('/crash/crash', keepalive => 1));
    my $x = $t->read_response($vc->{s}, $vc->{buf}, timeout => 5);
    ok(defined $x->{error} && !defined $x->{status},
       "the crashing request gets no response ($x->{error})");

    my $m = $t->master_pid;
    ok($t->wait_log(qr/\[alert\] $m#-: child $victim exited on signal 11\b/,
                    5),
       '[alert] child exited on signal 11');

    # the other child's connection carries on
    for my $n (1 .. 3) {
        $t->write_all($oc->{s}, $t->request('/crash/', keepalive => 1));
        $x = $t->read_response($oc->{s}, $oc->{buf}, timeout => 5);
        is($x->{body}, "alive $other\n",
           "keep-alive connection on the other child: request $n");
    }

    my @now = $t->wait_children(2, 10, not => [$victim]);
    is(scalar @now, 2, 'the master replaced the crashed child');
    ok(!$t->alive($victim), 'the crashed child is gone');

    # the new child serves
    my %pids;
    for (1 .. 20) {
        my ($p) = ($t->http_get('/crash/')->{body} // '') =~ /^alive (\d+)/;
        $pids{$p} = 1 if $p;
    }
    ok(!$pids{$victim}, 'no answer from the dead child');
}

close $_->{s} for values %conn_of;

$t->done;
