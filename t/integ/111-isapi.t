#!/usr/bin/perl

# mod_isapi (issue 24, first step): ISAPI extensions written to the IIS
# interface, built from modules/isapi/examples/ and t/isapi/ with
# <windows.h> and <httpext.h> from api/gannet/isapi, run by a real
# server. The samples (server variables, a form POST with ReadClient, an
# async writer, TRANSMIT_FILE), every callback and support code with bad
# arguments, async completion order, async reads, a crashing and a
# hanging extension, an extension that refuses to load (a configuration
# error with file:line), a reload with extensions loaded, HTTP/2.

use strict;
use warnings;

use Test::More;
use IO::Select;
use GnTest;

my $t = GnTest->new;
$t->skip_unless_module('mod_isapi');
my $idir = $ENV{GN_ISAPIDIR} // '';
my $tdir = $ENV{GN_TISAPIDIR} // '';
plan(skip_all => 'the ISAPI samples are not built (make check builds them)')
    unless -f "$idir/hello.so" && -f "$tdir/isapi_t_misc.so";

my $dir = $t->testdir;

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_isapi.so;

log_format isapi '\$request_uri [\$module_log]';

server {
    access_log logs/isapi.log isapi;
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    client_max_body_size 4m;

    location /hello { handler isapi; isapi_extension $idir/hello.so; }
    location /form { handler isapi; isapi_extension $idir/formecho.so; }
    location /async { handler isapi; isapi_extension $idir/asyncwrite.so; }
    location /tf { handler isapi; isapi_extension $idir/transmit.so; }
    location /t { handler isapi; isapi_extension $tdir/isapi_t_misc.so; }
    location /th { handler isapi; isapi_extension $tdir/isapi_t_misc.so;
                   isapi_threads 4; }
    location /thform { handler isapi; isapi_extension $idir/formecho.so;
                       isapi_threads 2; }
    location /thasync { handler isapi; isapi_extension $idir/asyncwrite.so;
                        isapi_threads 2; }
    location /hang {
        handler isapi;
        isapi_extension $tdir/isapi_t_misc.so;
        send_timeout 1s;
    }
}
EOF_CONF

# TerminateExtension of the test extension notes its calls here
$ENV{GN_ISAPI_TERM_FILE} = "$dir/terminated";

my $data = join('', map { "data line $_\n" } 1 .. 3000);
$t->write_file('html/data.txt', $data);
$t->run;

sub get { my ($p, %h) = @_; return $t->http_get($p, headers => \%h); }

sub post
{
    my ($path, $body, %h) = @_;
    my $req = "POST $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
              . "Content-Type: application/x-www-form-urlencoded\r\n"
              . "Content-Length: " . length($body) . "\r\n\r\n" . $body;
    return $t->http($req, timeout => 10);
}

# ---- hello: server variables ----------------------------------------------

my $r = get('/hello?x=1', 'X-Test' => 'abc', 'User-Agent' => 'isapi-test');
is($r->{status}, 200, 'hello: 200');
is($r->{headers}{'x-isapi'}, 'hello', 'HSE_REQ_SEND_RESPONSE_HEADER_EX: field');
is($r->{headers}{'content-type'}, 'text/plain', '... Content-Type');
my $b = $r->{body} // '';
like($b, qr/^Hello from ISAPI\n/, 'WriteClient');
like($b, qr/^method=GET query=x=1 path_info=\/hello$/m, 'the ECB\'s strings');
like($b, qr/^REQUEST_METHOD=GET$/m, 'REQUEST_METHOD');
like($b, qr/^QUERY_STRING=x=1$/m, 'QUERY_STRING');
like($b, qr/^URL=\/hello$/m, 'URL');
like($b, qr/^PATH_TRANSLATED=\Q$dir\E\/html\/hello$/m, 'PATH_TRANSLATED');
like($b, qr/^SERVER_PORT=${\ $t->port(0)}$/m, 'SERVER_PORT');
like($b, qr/^SERVER_PROTOCOL=HTTP\/1.1$/m, 'SERVER_PROTOCOL');
like($b, qr/^REMOTE_ADDR=127.0.0.1$/m, 'REMOTE_ADDR');
like($b, qr/^HTTPS=off$/m, 'HTTPS');
like($b, qr/^SERVER_PORT_SECURE=0$/m, 'SERVER_PORT_SECURE');
like($b, qr/^HTTP_USER_AGENT=isapi-test$/m, 'HTTP_USER_AGENT');
like($b, qr/^HTTP_X_TEST=abc$/m, 'HTTP_X_TEST: a request field');
like($b, qr/^ALL_HTTP=.*^HTTP_X_TEST:abc$/ms, 'ALL_HTTP');
like($b, qr/^small buffer: ERROR_INSUFFICIENT_BUFFER need=7$/m,
     'a short buffer: ERROR_INSUFFICIENT_BUFFER and the size needed');
is($r->{headers}{'content-length'}, length $b,
   'a response ended by its return: Content-Length');

# ---- formecho: the body, lpbData and ReadClient ---------------------------

$r = post('/form', 'a=1&b=two');
is($r->{body}, "total=9 available=9 type=application/x-www-form-urlencoded\n"
               . "a=1&b=two", 'form POST: lpbData holds it all');
my $big = join('', map { chr(65 + $_ % 26) } 0 .. 199_999);
$r = post('/form', $big);
my ($head, $echo) = split(/\n/, $r->{body} // '', 2);
is($head, 'total=200000 available=49152 '
          . 'type=application/x-www-form-urlencoded',
   '200 KB: 48 KiB in lpbData, cbTotalBytes the whole');
ok(($echo // '') eq $big, '... the rest through ReadClient, in order');

$r = $t->http("POST /form HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
              . "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
              . "6\r\n world\r\n0\r\n\r\n");
like($r->{body} // '', qr/^total=11 available=11 .*\nhello world$/s,
     'a chunked body: read whole first');

# ---- async writes: completions from the loop, in order ---------------------

$r = get('/async?7');
is($r->{status}, 200, 'asyncwrite: 200');
ok($r->{chunked}, '... streamed (chunked)');
my @lines = split /\n/, $r->{body} // '';
is(scalar @lines, 7, '... seven chunks');
my $sizes = join(' ', map {
    my ($n) = ($lines[$_] // '') =~ /^chunk \d+ of 7, after completion $_ \((\d+) bytes\)$/;
    ($n // -1) == ($_ ? length($lines[$_ - 1]) + 1 : 0) ? 'ok' : "bad$_"
} 0 .. 6);
is($sizes, 'ok ok ok ok ok ok ok',
   '... each written from the previous one\'s completion, with its size');
like($lines[6] // '', qr/^chunk 7 of 7, after completion 6 /,
     '... the last, then DONE_WITH_SESSION');

$r = get('/async?3000');
is(scalar(split /\n/, $r->{body} // ''), 3000,
   '3000 async writes: every completion, no stack growth');

$r = get('/t?order');
is($r->{body}, "start\ncompletion 1: first (6 bytes)\n"
               . "completion 2: second (30 bytes)\n",
   'completion order: each after its write, the context of its time');

# ---- TRANSMIT_FILE ---------------------------------------------------------

$r = get('/tf?/data.txt');
is($r->{status}, 200, 'TRANSMIT_FILE: 200');
is($r->{headers}{'x-transmit'}, '1', '... HSE_IO_SEND_HEADERS\' fields');
ok(($r->{body} // '') eq "$data\n-- end of file --\n",
   '... the file, then the tail');
$r = get('/tf?/nosuch.txt');
is($r->{status}, 404, 'MAP_URL_TO_PATH of a missing file: the extension\'s 404');
like($r->{body}, qr/^no such file$/m, '... with the body after its fields');

# ---- the support functions and bad arguments --------------------------------

$r = get('/t?badargs');
my %res = map { /^(\w+)=(\S+)$/ ? ($1, $2) : () } split /\n/, $r->{body} // '';
my %want = (
    var_null_name => 'fail:87', var_null_size => 'fail:87',
    var_unknown => 'fail:1413', var_no_header => 'fail:1413',
    var_short => 'fail:122', need => '4', var_null_buffer => 'fail:122',
    var_bad_conn => 'fail:87', write_null => 'fail:87',
    write_null_size => 'fail:87', write_async_no_completion => 'fail:87',
    read_null => 'fail:87', read_no_body => 'ok', ssf_unknown => 'fail:87',
    ssf_unsupported => 'fail:87', ssf_header_again => 'fail:87',
    ssf_header_ex_null => 'fail:87', ssf_redirect_null => 'fail:87',
    map_short => 'fail:122', map_dotdot => 'fail:87', tf_null => 'fail:87',
    keepconn_null => 'fail:87', ssf_bad_conn => 'fail:87');
for my $k (sort keys %want) {
    is($res{$k} // 'missing', $want{$k}, "bad arguments: $k");
}
like($r->{body}, qr/end\n\z/, '... and the extension carried on to its end');

$r = get('/t?error');
is($r->{status}, 500, 'HSE_STATUS_ERROR: 500');
$r = get('/t?redirect');
is($r->{status}, 302, 'HSE_REQ_SEND_URL_REDIRECT_RESP: 302');
is($r->{headers}{location}, '/elsewhere', '... Location');
$r = get('/t?status');
is($r->{status}, 503, 'a status of its own: 503');
is($r->{headers}{'retry-after'}, '7', '... its fields');
is($r->{body}, "busy now\n", '... the body after the blank line');
$r = get('/t?nohead');
is($r->{status}, 200, 'WriteClient without a header: 200');
is($r->{body}, "no header\n", '... the bytes as the body');
$r = get('/t?donein');
is($r->{body}, "done inside\n",
   'DONE_WITH_SESSION inside HttpExtensionProc, then PENDING');
$r = get('/t?mapex');
like($r->{body}, qr/^path=\Q$dir\E\/html\/x\/y.txt matching_path=\d+ flags=517$/m,
     'HSE_REQ_MAP_URL_TO_PATH_EX');
$r = $t->http("GET /t?keepconn HTTP/1.1\r\nHost: x\r\n\r\n");
is($r->{body}, "keep=1 connected=1\n", 'IS_KEEP_CONN, IS_CONNECTED (1.1)');
$r = get('/t?keepconn');
is($r->{body}, "keep=0 connected=1\n",
   'IS_KEEP_CONN with Connection: close: 0');
$r = $t->http("GET /t?keepconn HTTP/1.0\r\n\r\n");
is($r->{body}, "keep=0 connected=1\n", 'IS_KEEP_CONN on HTTP/1.0: 0');
$r = get('/t?log');
is($r->{body}, "logged\n", 'HSE_APPEND_LOG_PARAMETER');
my $alog = '';
for (1 .. 50) {
    $alog = $t->read_file('logs/isapi.log') // '';
    last if $alog =~ /^\/t\?log /m;
    select(undef, undef, undef, 0.1);
}
like($alog, qr/^\/t\?log \[isapi-log-mark\]$/m,
     '... in the access log\'s $module_log');
like($alog, qr/^\/t\?keepconn \[-\]$/m, '... "-" for the others');

my $sum = 0;
my $body = join('', map { chr(32 + $_ % 90) } 0 .. 99_999);
$sum += ord($_) for split //, $body;
$r = post('/t?readasync', $body);
is($r->{body}, "async read 100000 bytes in 51 reads, sum $sum\n",
   'HSE_REQ_ASYNC_READ_CLIENT: the rest of the body, 1000 a completion');

# ---- threads of the extension's own -----------------------------------------

$r = get('/t?own=50');
is($r->{body}, "from its own thread (write ok)\n",
   'a thread of the extension\'s own writes and says DONE_WITH_SESSION');
{
    # its client leaves first: the ECB stays valid for the thread
    my $s = $t->connect;
    $t->write_all($s, "GET /t?own=300 HTTP/1.1\r\nHost: x\r\n\r\n");
    select(undef, undef, undef, 0.05);
    close $s;
    select(undef, undef, undef, 0.5);
    is(get('/hello')->{status}, 200,
       '... the client gone before it: no harm when the thread goes on');
}

# an async write outstanding when the client leaves: its completion comes,
# with ERROR_NETNAME_DELETED (64), in the loop and on the pool; or, when
# the client goes between a completion and the next write, that write
# fails with it
for my $loc ('/t', '/th') {
    my $before = () = ($t->read_file('terminated') // '')
                      =~ /^completion error 64$/mg;
    my $s = $t->connect;
    $t->write_all($s, "GET $loc?gone HTTP/1.1\r\nHost: x\r\n\r\n");
    my $buf = '';
    sysread($s, $buf, 4096) if IO::Select->new($s)->can_read(5);
    close $s;
    my $n = $before;
    for (1 .. 100) {
        $n = () = ($t->read_file('terminated') // '')
                  =~ /^completion error 64$/mg;
        last if $n > $before;
        select(undef, undef, undef, 0.1);
    }
    is($n, $before + 1, "$loc: the client gone mid-write, the completion "
       . 'reports ERROR_NETNAME_DELETED');
}

# ---- isapi_threads: extensions that block, on a pool ------------------------

{
    my $go = "$dir/go";
    my @s = map { my $s = $t->connect;
                  $t->write_all($s, "GET /th?wait=$go HTTP/1.1\r\nHost: x\r\n"
                                    . "Connection: close\r\n\r\n");
                  $s } 1 .. 2;
    # both block their threads; the loop serves meanwhile
    is(get('/hello')->{status}, 200,
       'isapi_threads: two extensions blocked, the loop still serves');
    ok(!IO::Select->new(@s)->can_read(0.2), '... and they wait');
    $t->write_file('go', "go\n");
    for my $i (0, 1) {
        my $buf = '';
        my $x = $t->read_response($s[$i], \$buf, timeout => 10);
        is($x->{body}, "waited for $go, URL=/th\n",
           "... released, each answers (GetServerVariable from a thread) "
           . ($i + 1));
        close $s[$i];
    }
}

$r = get('/th?badargs');
my %tres = map { /^(\w+)=(\S+)$/ ? ($1, $2) : () } split /\n/, $r->{body} // '';
is(join(',', map { "$_=" . ($tres{$_} // 'missing') } sort keys %want),
   join(',', map { "$_=$want{$_}" } sort keys %want),
   'on a thread: every bad argument, GetLastError() carried across');
$r = post('/thform', $big);
($head, $echo) = split(/\n/, $r->{body} // '', 2);
ok($head =~ /^total=200000 available=49152 / && ($echo // '') eq $big,
   'on a thread: ReadClient of 200 KB');
$r = get('/thasync?50');
my @tl = split /\n/, $r->{body} // '';
ok(@tl == 50 && $tl[49] =~ /^chunk 50 of 50, /,
   'on a thread: 50 async writes, completions on the pool');
$r = get('/th?order');
is($r->{body}, "start\ncompletion 1: first (6 bytes)\n"
               . "completion 2: second (30 bytes)\n",
   'on a thread: completion order');
$r = post('/th?readasync', $body);
is($r->{body}, "async read 100000 bytes in 51 reads, sum $sum\n",
   'on a thread: HSE_REQ_ASYNC_READ_CLIENT');
$r = get('/th?pump=64');
my $block = substr('0123456789' x 6554, 0, 65536);
ok(($r->{body} // '') eq $block x 64,
   'on a thread: 4 MiB of synchronous writes, each waiting for the client')
    or diag(length($r->{body} // '') . ' bytes, ' . ($r->{error} // ''));
$r = get('/th?donein');
is($r->{body}, "done inside\n", 'on a thread: DONE_WITH_SESSION inside');

# ---- a hanging and a crashing extension ------------------------------------

{
    my $s = $t->connect;
    $t->write_all($s, "GET /hang?hang HTTP/1.1\r\nHost: x\r\n\r\n");
    # the child serves others meanwhile
    is(get('/hello')->{status}, 200, 'a pending extension blocks nothing');
    my $buf = '';
    my $x = $t->read_response($s, \$buf, timeout => 10);
    ok(!defined $x->{status} || $x->{error},
       'an extension that never finishes: cut off at send_timeout')
        or diag(explain $x);
    close $s;
}

$t->expect_log(qr/\[alert\] .*exited on signal 11\b/);
$t->expect_valgrind(qr/Invalid write .*\n\S+ +at \S+: HttpExtensionProc /);
$r = get('/t?crash');
ok(!defined $r->{status}, 'a crashing extension: no response');
my $m = $t->master_pid;
ok($t->wait_log(qr/\[alert\] $m#-: child \d+ exited on signal 11\b/, 5),
   '... its child died, logged');
my $ok = 0;
for (1 .. 50) {
    last if ($ok = (get('/hello')->{status} // 0) == 200);
    select(undef, undef, undef, 0.1);
}
ok($ok, '... and the master\'s new child serves');

# ---- HTTP/2 ---------------------------------------------------------------

SKIP: {
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 2 unless $out =~ /\bHTTP2\b/;
    ($rc, $out) = $t->curl('--http2-prior-knowledge', '-s',
                           'http://127.0.0.1:' . $t->port(1) . '/async?4');
    is(scalar(split /\n/, $out // ''), 4, 'h2: async writes');
    ($rc, $out) = $t->curl('--http2-prior-knowledge', '-s',
                           'http://127.0.0.1:' . $t->port(1) . '/hello');
    like($out, qr/^SERVER_PROTOCOL=HTTP\/2.0$/m, 'h2: hello');
}

# ---- reload, and configurations that cannot load ---------------------------

my @gen1 = $t->children;
$t->signal('HUP');
ok($t->wait_log(qr/reconfigur|reload/i, 10), 'reload with extensions loaded');
$ok = 0;
for (1 .. 50) {
    my $x = get('/async?2');
    last if ($ok = ($x->{body} // '') =~ /^chunk 2 of 2/m);
    select(undef, undef, undef, 0.1);
}
ok($ok, '... the new children serve them');
my $term = '';
for (1 .. 50) {
    $term = $t->read_file('terminated') // '';
    last if grep { $term =~ /^terminate $_ 2$/m } @gen1;
    select(undef, undef, undef, 0.1);
}
ok(@gen1 && (grep { $term =~ /^terminate $_ 2$/m } @gen1) == @gen1,
   'TerminateExtension(HSE_TERM_MUST_UNLOAD) in each old child as it exits')
    or diag("children @gen1; file: $term");

for my $case (
    [ 'refuse', "$tdir/isapi_t_refuse.so",
      qr/GetExtensionVersion of "\Q$tdir\E\/isapi_t_refuse.so" returned FALSE: the extension refuses to load in \S+:7$/m ],
    [ 'missing', "$tdir/nosuch.so",
      qr/cannot load "\Q$tdir\E\/nosuch.so": .* in \S+:7$/m ],
    [ 'notisapi', "$ENV{GN_MODDIR}/mod_isapi.so",
      qr/is no ISAPI extension: it does not export GetExtensionVersion in \S+:7$/m ],
) {
    my ($name, $path, $re) = @$case;
    my $f = $t->write_file("$name.conf", $t->expand(<<"EOF"));
children 1;
user %%USER%%;
load_module %%MODDIR%%/mod_isapi.so;
server {
    listen 127.0.0.1:%%PORT_0%%;
    location /x {
        isapi_extension $path;
        handler isapi;
    }
}
EOF
    my ($rc, $out, $err) = $t->gannet('-t', '-p', "$dir/", '-c', $f);
    is($rc, 1, "$name: gannet -t fails");
    like($err, $re, "$name: the reason, with file:line");
}

$t->done;
