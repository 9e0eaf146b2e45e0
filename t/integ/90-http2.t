#!/usr/bin/perl

# HTTP/2 (issue 20): ALPN h2 on TLS (and not where "http2 off" or a TLS
# priority RFC 9113 9.2 forbids), prior knowledge on "listen ... http2"
# with HTTP/1.1 still served there, and every feature over h2 with the
# meaning it has over HTTP/1.1: static files (index, conditional
# requests, ranges, HEAD, error pages), return, access rules, basic
# auth, modules (async, streamed, request bodies, the ABI 1.0 fixture),
# CGI (SERVER_PROTOCOL, bodies), the status page, the access log
# ($server_protocol, $request). Request bodies past client_max_body_size
# get 413 on their stream. Malformed requests (RFC 9113 8.2, 8.3) get a
# stream error and the connection goes on; connection errors a GOAWAY.
# http2_max_concurrent_streams refuses streams past it. h2load: no
# failed request.

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 180);
plan(skip_all => 'gannet built without HTTP/2')
    unless ($ENV{GN_HTTP2} // '') eq 'yes';
GnTLS::init($t, 'curl', 'nghttp', 'h2load');
plan(skip_all => 'python3-h2 / python3-hyperframe not installed')
    unless system('/usr/bin/python3', '-c', 'import h2, hyperframe, hpack')
           == 0;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
$ENV{GN_TMODDIR} //= "$top/t/modules/.libs";
plan(skip_all => 'modules not built')
    unless -f "$ENV{GN_MODDIR}/mod_example.so"
           && -f "$ENV{GN_MODDIR}/mod_cgi.so"
           && -f "$ENV{GN_TMODDIR}/mod_t_old.so";

my $dir = $t->testdir;
my $h2raw = "$t->{srcdir}/t/lib/h2raw.py";
my $root = $< == 0;
my $cgi_user = $root ? 'nobody' : '%%USER%%';

$t->write_file('html/index.html', "hello h2\n");
$t->write_file('html/404.html', "custom not found\n");
$t->write_file('html/dir/index.html', "dir index\n");
$t->write_file('html/private/f.txt', "private\n");
$t->write_file('html/deny/f.txt', "denied\n");
my $big = join('', map { sprintf("%07d\n", $_) } 0 .. 262143);   # 2 MiB
$t->write_file('html/big.txt', $big);
$t->write_file('conf/htpasswd',
               "carol:\$apr1\$AbQSFQge\$R5ER3crMsjj/QVrkWpmKy1\n");
mkdir "$dir/html/cgi" or die "mkdir cgi: $!";
for my $f ('env.cgi', 'echo.cgi') {
    copy("$t->{srcdir}/t/cgi/$f", "$dir/html/cgi/$f") or die "copy $f: $!";
    chmod(0755, "$dir/html/cgi/$f");
}
chmod(0755, $dir, "$dir/html", "$dir/html/cgi");

$t->write_conf(<<"EOF_CONF");
children 2;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_example.so;
load_module %%MODDIR%%/mod_cgi.so;
load_module %%MODDIR%%/mod_status.so;
load_module %%TMODDIR%%/mod_t_old.so;
cgi_user $cgi_user;
log_format h2 '\$server_protocol "\$request" \$status \$body_bytes_sent '
              '[\$http2 \$stream_id]';

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    listen 127.0.0.1:%%PORT_1%% http2;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    access_log logs/access.log h2;
    error_page 404 /404.html;
    client_max_body_size 1m;
    http2_max_concurrent_streams 8;
    types { text/html html; text/plain txt; }

    location = /ret { return 302 /index.html; }
    location /deny/ { deny all; }
    location /private/ {
        auth_basic "h2";
        auth_basic_user_file conf/htpasswd;
    }
    location /example/ { handler example; example_max_echo 2m; }
    location /old/ { handler t_old; }
    location /cgi/ { handler cgi; }
    location = /status { handler status; }
}

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name off.example;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    http2 off;
    root html;
}

server {
    listen 127.0.0.1:%%PORT_2%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-rsa.pem;
    tls_certificate_key %%CERTS%%/localhost-rsa.key;
    tls_priority "+AES-128-CBC:+SHA1:+RSA";
    root html;
}

server {
    listen 127.0.0.1:%%PORT_3%%;
    root html;
}
EOF_CONF

$t->run;

my $tls = 'https://localhost:' . $t->port(0);
my $h2c = 'http://127.0.0.1:' . $t->port(1);
my @res = ('--resolve', 'localhost:' . $t->port(0) . ':127.0.0.1',
           '--cacert', "$ENV{GN_CERTS}/ca.pem");

# curl ARGS, -w the protocol and status: (version, status, body)
sub h2
{
    my (@args) = @_;
    my ($rc, $out) = $t->curl('-w', '\n%{http_version} %{http_code}', @args);
    return ('', 0, "curl exit $rc") if $rc != 0 && $rc != 22;
    $out =~ s/\n(\S+) (\d+)\z// or return ('', 0, $out);
    return ($1, $2, $out);
}

sub alpn_of
{
    my ($port, $name) = @_;
    my ($rc, $out, $err) = $t->run_client(
        ['openssl', 's_client', '-connect', "127.0.0.1:$port",
         '-servername', $name, '-alpn', 'h2,http/1.1'],
        stdin => '/dev/null', timeout => 10);
    return ($out . $err) =~ /^ALPN protocol: (\S+)/m ? $1 : 'none';
}


# nghttp -v: the :status of the response, or 0
sub nghttp_status
{
    my (@args) = @_;
    my ($rc, $out, $err) = $t->run_client(['nghttp', '-nv', @args],
                                          timeout => 20);
    return $out =~ /recv \(stream_id=\d+\) :status: (\d+)/ ? $1 : 0;
}


sub raw
{
    my (@args) = @_;
    my ($rc, $out, $err) = $t->run_client(['/usr/bin/python3', $h2raw, @args],
                                          timeout => 20);
    diag($err) if $err ne '';
    return $out;
}


# ---- negotiation -----------------------------------------------------------

my ($v, $s, $b) = h2('--http2', @res, "$tls/index.html");
is("$v $s", '2 200', 'TLS: curl --http2 gets h2 by ALPN');
is($b, "hello h2\n", 'TLS h2: body');

is(alpn_of($t->port(0), 'localhost'), 'h2', 'ALPN h2,http/1.1: h2 chosen');
is(alpn_of($t->port(0), 'off.example'), 'http/1.1',
   'ALPN: the SNI server with "http2 off" chooses http/1.1');
is(alpn_of($t->port(2), 'localhost'), 'http/1.1',
   'ALPN: a server whose tls_priority allows CBC/RSA suites gets no h2');

($v, $s) = h2('--http2-prior-knowledge', "$h2c/index.html");
is("$v $s", '2 200', 'listen ... http2: prior knowledge h2');
($v, $s) = h2('--http1.1', "$h2c/index.html");
is("$v $s", '1.1 200', 'listen ... http2: HTTP/1.1 still served');
($v, $s) = h2('--http2', "$h2c/index.html");
is("$v $s", '1.1 200', 'no h2c Upgrade: HTTP/1.1 answers it');

my $p3 = 'http://127.0.0.1:' . $t->port(3);
($v, $s) = h2('--http2-prior-knowledge', "$p3/index.html");
isnt($v, '2', 'a listener without http2 does not speak h2');

my $out = raw('--tls', $t->port(0), 'bad-preface');
like($out, qr/^GOAWAY 0 PROTOCOL_ERROR/m,
     'TLS h2: a bad preface gets GOAWAY PROTOCOL_ERROR');


# ---- static files, rules, auth --------------------------------------------

($v, $s, $b) = h2('--http2', @res, "$tls/dir/");
is("$s $b", "200 dir index\n", 'h2: directory index');
($v, $s, $b) = h2('--http2', @res, "$tls/nothere");
is("$s $b", "404 custom not found\n", 'h2: error_page 404');

my ($rc, $hd) = $t->curl('--http2', @res, '-D', '-', '-o', '/dev/null',
                         "$tls/index.html");
my ($etag) = $hd =~ /^etag: (\S+)\r?$/mi;
ok(defined $etag, 'h2: ETag header, lower-case name') or diag($hd);
unlike($hd, qr/^(connection|keep-alive|transfer-encoding):/mi,
       'h2: no connection-specific response headers');
($v, $s) = h2('--http2', @res, '-H', "If-None-Match: $etag",
              "$tls/index.html");
is($s, 304, 'h2: If-None-Match gives 304');
($v, $s, $b) = h2('--http2', @res, '-r', '8-23', "$tls/big.txt");
is("$s $b", "206 0000001\n0000002\n", 'h2: a range gives 206 with its bytes');
($v, $s, $b) = h2('--http2', @res, "$tls/big.txt");
ok($s == 200 && $b eq $big, 'h2: a 2 MiB file arrives whole');
($rc, $hd) = $t->curl('--http2', @res, '-I', "$tls/index.html");
like($hd, qr/^content-length: 9\r?$/mi, 'h2: HEAD has the length');

($v, $s) = h2('--http2', @res, "$tls/ret");
is($s, 302, 'h2: return 302');
($rc, $hd) = $t->curl('--http2', @res, '-D', '-', '-o', '/dev/null',
                      "$tls/ret");
like($hd, qr{^location: (?:https?://[^/]+)?/index.html\r?$}mi,
     'h2: the redirect has its Location');
($v, $s) = h2('--http2', @res, "$tls/deny/f.txt");
is($s, 403, 'h2: deny all gives 403');
($v, $s) = h2('--http2', @res, "$tls/private/f.txt");
is($s, 401, 'h2: basic auth without credentials gives 401');
($v, $s, $b) = h2('--http2', @res, '-u', 'carol:secret3',
                  "$tls/private/f.txt");
is("$s $b", "200 private\n", 'h2: basic auth with credentials');


# ---- modules, CGI, status --------------------------------------------------

($v, $s, $b) = h2('--http2', @res, '-H', 'X-Test: one',
                  "$tls/example/info?q=1");
is($s, 200, 'h2: a module answers');
like($b, qr/x-test: one/i, 'h2: the module sees the request headers');
like($b, qr/host: localhost/i, 'h2: the module sees :authority as Host');

($v, $s, $b) = h2('--http2', @res, "$tls/example/delay?ms=200");
is($s, 200, 'h2: an async module answers from its timer');
($v, $s, $b) = h2('--http2', @res, "$tls/example/stream");
is($s, 200, 'h2: a streamed module response');
is(($b =~ tr/\n//), 3, 'h2: the streamed response has its three lines');

my $post = join('', map { sprintf("%05d\n", $_) } 0 .. 99999);   # 600 KB
$t->write_file('post.bin', $post);
($v, $s, $b) = h2('--http2', @res, '--data-binary', "\@$dir/post.bin",
                  "$tls/example/echo");
ok($s == 200 && $b eq "read 600000 bytes: $post\n", 'h2: a 600 KB body '
   . 'through flow control to a module and back')
    or diag("status $s, " . length($b) . ' bytes');

# (curl 7.88 takes the RST_STREAM NO_ERROR that follows an early
# response, RFC 9113 8.1, for an error: nghttp does not)
$t->write_file('post2.bin', 'x' x (1536 * 1024));
is(nghttp_status('-d', "$dir/post2.bin", "$tls/example/echo"), 413,
   'h2: a body past client_max_body_size gets 413');
is(nghttp_status('-d', "$dir/post2.bin", "$tls/index.html"), 413,
   'h2: ... also for a static file');

# a body without Content-Length: DATA frames frame it, as chunked does
$out = raw($t->port(1), 'post-stream', '/example/echo', 60000);
like($out, qr/^SENT 60000\nSTATUS 1 200\nDATA 1 60019\nEND 1$/m,
     'h2: a body of no announced length, through the windows, to a module');
$out = raw($t->port(1), 'post-stream', '/cgi/echo.cgi', 300000);
like($out, qr/^SENT 300000\nSTATUS 1 200\nDATA 1 300010\nEND 1$/m,
     'h2: ... to CGI, which gets its CONTENT_LENGTH');
$out = raw($t->port(1), 'post-stream', '/index.html', 3000000);
like($out, qr/^STATUS 1 413$/m, 'h2: ... 413 once it passes '
     . 'client_max_body_size');
unlike($out, qr/^SENT/m, 'h2: ... without reading the rest of it');

$out = raw($t->port(1), 'cookies', '/cgi/env.cgi');
like($out, qr/HTTP_COOKIE=a=1; b=2; c=3\\n/,
     'h2: Cookie crumbs joined with "; " for CGI (RFC 9113 8.2.3)')
    or diag($out);
$out = raw($t->port(1), 'expect', '/example/echo');
like($out, qr/^STATUS 1 100\nSTATUS 1 200\n/m,
     'h2: Expect: 100-continue gets its 100 before the body');
$out = raw($t->port(1), 'host-differs');
like($out, qr/^(?:RST 1 PROTOCOL_ERROR|STATUS 1 400)\nSTATUS 3 200$/m,
     'h2: a Host that differs from :authority is refused');

($v, $s, $b) = h2('--http2', @res, "$tls/old/x");
like("$s $b", qr/^200 old module built for ABI 1\.0/,
     'h2: the ABI 1.0 fixture module, unchanged');

($v, $s, $b) = h2('--http2', @res, "$tls/cgi/env.cgi?a=b");
is($s, 200, 'h2: CGI answers');
like($b, qr/^SERVER_PROTOCOL=HTTP\/2\.0$/m, 'h2: CGI SERVER_PROTOCOL');
like($b, qr/^HTTP_HOST=localhost/m, 'h2: CGI HTTP_HOST from :authority');
($v, $s, $b) = h2('--http2', @res, '--data-binary', "\@$dir/post.bin",
                  "$tls/cgi/echo.cgi");
ok($s == 200 && $b eq 'CL=' . length($post) . "\n" . $post,
   'h2: a POST body to CGI and back') or diag("status $s");

($v, $s, $b) = h2('--http2', @res, "$tls/status?json");
is($s, 200, 'h2: the status page');

($v, $s, $b) = h2('--http2-prior-knowledge', "$h2c/example/info");
is($s, 200, 'h2 prior knowledge: a module answers');


# ---- malformed requests (RFC 9113 8.2, 8.3) --------------------------------

my $p1 = $t->port(1);
for my $c (['pseudo-unknown', 'an unknown pseudo-header'],
           ['pseudo-after', 'a pseudo-header after a field'],
           ['pseudo-missing', 'no :path'],
           ['uppercase', 'an upper-case field name'],
           ['connection', 'Connection'],
           ['transfer-encoding', 'Transfer-Encoding'],
           ['te-gzip', 'TE other than trailers'],
           ['content-length', 'a Content-Length the DATA does not match'])
{
    $out = raw($p1, $c->[0]);
    like($out, qr/^RST 1 PROTOCOL_ERROR\nSTATUS 3 200\n/m,
         "$c->[1]: stream error, the connection goes on") or diag($out);
}
$out = raw($p1, 'te-trailers');
like($out, qr/^STATUS 1 200$/m, 'TE: trailers is allowed');
$out = raw($p1, 'closed-stream');
like($out, qr/^(?:GOAWAY \d+|RST 1) STREAM_CLOSED$/m,
     'DATA on a closed stream: STREAM_CLOSED') or diag($out);
$out = raw($p1, 'window-overflow');
like($out, qr/^GOAWAY 0 FLOW_CONTROL_ERROR$/m,
     'a window past 2^31-1: GOAWAY FLOW_CONTROL_ERROR');
$out = raw($p1, 'settings-push');
like($out, qr/^GOAWAY 0 PROTOCOL_ERROR$/m,
     'SETTINGS_ENABLE_PUSH 2: GOAWAY PROTOCOL_ERROR');
$out = raw($p1, 'settings-window');
like($out, qr/^GOAWAY 0 FLOW_CONTROL_ERROR$/m,
     'SETTINGS_INITIAL_WINDOW_SIZE 2^31: GOAWAY FLOW_CONTROL_ERROR');

$out = raw($p1, 'streams', 20, '/example/delay?ms=300');
my $ok = () = $out =~ /^END \d+$/mg;
my $refused = () = $out =~ /^RST \d+ REFUSED_STREAM$/mg;
ok($ok == 8 && $refused == 12, 'http2_max_concurrent_streams 8: 8 of 20 '
   . 'at once served, 12 refused') or diag($out);


# ---- load -----------------------------------------------------------------

my ($hrc, $hout, $herr) = $t->run_client(
    ['h2load', '-n', '4000', '-c', '10', '-m', '8',
     "https://127.0.0.1:" . $t->port(0) . '/index.html'], timeout => 60);
like($hout, qr/4000 succeeded, 0 failed, 0 errored/,
     'h2load 4000 requests over TLS: none failed') or diag($hout . $herr);


# ---- the access log --------------------------------------------------------

$t->wait_log(qr/"GET \/index.html HTTP\/2.0" 200/, 5, 'logs/access.log');
my $log = $t->read_file('logs/access.log') // '';
like($log, qr{^HTTP/2\.0 "GET /index\.html HTTP/2\.0" 200 9 \[h2 1\]$}m,
     'access log: $server_protocol HTTP/2.0, $request, $http2, $stream_id');
like($log, qr{^HTTP/2\.0 "GET /index\.html HTTP/2\.0" 200 9 \[h2c 1\]$}m,
     'access log: $http2 h2c in the clear');
# the six malformed heads with a :path of /index.html, and the one without
my $bad_re = '^HTTP/2\.0 "GET (?:/index\.html)? HTTP/2\.0" 400 \d+ '
             . '\[h2c 1\]$';
my @bad = $log =~ /$bad_re/mg;
is(scalar(@bad), 7, 'access log: each malformed head nghttp2 reset is '
   . 'logged 400') or diag(join("\n", grep { / 400 / } split /\n/, $log));
like($log,
     qr{^HTTP/2\.0 "GET /index\.html HTTP/2\.0" 200 9 \[h2 \d*[13579]\]$}m,
     'access log: stream ids are odd');
like($log, qr{^HTTP/1\.1 "GET /index\.html HTTP/1\.1" 200 9 \[- 0\]$}m,
     'access log: HTTP/1.1 on the same listener, $http2 "-", $stream_id 0');
like($log,
     qr{^HTTP/2\.0 "POST /example/echo HTTP/2\.0" 413 \d+ \[h2 \d+\]$}m,
     'access log: the 413 of a body too large');

$t->done;
