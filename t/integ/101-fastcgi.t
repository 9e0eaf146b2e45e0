#!/usr/bin/perl

# fastcgi_pass (issue 22, item 3) against t/lib/fcgi_responder.py, a
# FastCGI responder that can also misbehave: the params (fastcgi_param,
# if_not_empty, a later one of a name replacing the earlier, the shipped
# fastcgi_params, fastcgi_split_path_info, fastcgi_index, the request's
# fields as HTTP_ ones, joined, less Proxy), request bodies by length and
# chunked to STDIN, responses with and without a Content-Length, split
# into one-byte records, Status and Location, STDERR to the error log,
# TCP and unix sockets, pooled connections with fastcgi_keep_conn (and
# none without), the next server, the timeouts, and the errors: garbage,
# no head, no output, an overloaded responder, a response cut or shorter
# than its Content-Length is cut at the client, a longer one trimmed.
# Many clients over a small pool each get their own answer.
# PHP-FPM itself is t/integ/102-fastcgi-php.t.

use strict;
use warnings;

use Test::More;
use Digest::MD5 qw(md5_hex);
use POSIX qw(:sys_wait_h);
use GnTest;
use GnBackend;

my $t = GnTest->new(timeout => 120);
GnBackend::init($t);

my ($f1, $f2) = ($t->port(1), $t->port(2));
my $dead = $t->port(3);                  # nothing listens there
my $sock = $t->testdir . '/fcgi.sock';

$t->write_file('html/dir/index.php', "not served: the responder answers\n");

$t->write_conf(<<"EOF");
user %%USER%%;
children 1;
error_log logs/error.log info;
log_format up '\$request_uri \$status [\$upstream_addr] [\$upstream_status]';
access_log logs/access.log up;

upstream fpool {
    server 127.0.0.1:$f1;
    keepalive 2;
}

upstream fnext {
    server 127.0.0.1:$dead;
    server 127.0.0.1:$f2;
}

upstream fpair {
    server 127.0.0.1:$f1 max_fails=0;
    server 127.0.0.1:$f2 max_fails=0;
}

server {
    listen 127.0.0.1:%%PORT_0%%;
    root %%TESTDIR%%/html;
    fastcgi_read_timeout 2s;

    location / {
        fastcgi_pass 127.0.0.1:$f1;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
        fastcgi_param REQUEST_METHOD \$request_method;
        fastcgi_param CONTENT_LENGTH \$content_length;
        fastcgi_param QUERY_STRING \$query_string;
        fastcgi_param NOT_EMPTY \$http_x_maybe if_not_empty;
        fastcgi_param ALWAYS \$http_x_maybe;
        fastcgi_param APP first;
        fastcgi_param APP second;
    }
    location /inc/ {
        include %%SRCDIR%%/etc/fastcgi_params;
        fastcgi_param GN_SCRIPT /echo;
        fastcgi_split_path_info ^(/inc/[^/]*\\.php)(/.*)\$;
        fastcgi_index index.php;
        fastcgi_pass unix:$sock;
    }
    location /keep/ {
        fastcgi_pass fpool;
        fastcgi_keep_conn on;
        fastcgi_split_path_info ^/keep(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
        fastcgi_param QUERY_STRING \$query_string;
    }
    location /nokeep/ {
        fastcgi_pass fpool;
        fastcgi_split_path_info ^/nokeep(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
    }
    location /next/ {
        fastcgi_pass fnext;
        fastcgi_split_path_info ^/next(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
    }
    location /pair/ {
        fastcgi_pass fpair;
        fastcgi_next_upstream error timeout http_503;
        fastcgi_split_path_info ^/pair(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
    }
    location /tmo/ {
        fastcgi_pass 127.0.0.1:$f1;
        fastcgi_read_timeout 500ms;
        fastcgi_split_path_info ^/tmo(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
    }
    location /dead/ {
        fastcgi_pass 127.0.0.1:$dead;
    }
    location /stream/ {
        fastcgi_pass 127.0.0.1:$f1;
        fastcgi_request_buffering off;
        fastcgi_split_path_info ^/stream(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
        fastcgi_param CONTENT_LENGTH \$content_length;
    }
    location /small/ {
        fastcgi_pass 127.0.0.1:$f1;
        fastcgi_buffer_size 1k;
        fastcgi_param GN_SCRIPT /echo;
        fastcgi_param BIG \$http_x_big;
    }
    location /dir/ {
        index index.php;
    }
    location ~ \\.php\$ {
        fastcgi_pass 127.0.0.1:$f2;
        fastcgi_param GN_SCRIPT /echo;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
    }
}

# what waits for a slow client, seen in the debug log
server {
    listen 127.0.0.1:%%PORT_4%%;
    error_log logs/debug.log debug;

    location /nobuf/ {
        fastcgi_pass 127.0.0.1:$f1;
        fastcgi_buffering off;
        fastcgi_buffer_size 4k;
        fastcgi_split_path_info ^/nobuf(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
    }
    location /buf/ {
        fastcgi_pass 127.0.0.1:$f1;
        fastcgi_buffers 4 16k;
        fastcgi_split_path_info ^/buf(/.*)()\$;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
    }
}
EOF

my @pids = (GnBackend::start_fcgi($t, $f1, 'f1'),
            GnBackend::start_fcgi($t, $f2, 'f2'),
            GnBackend::start_fcgi($t, "unix:$sock", 'fu'));
$t->run;

my $pattern = '0123456789';
sub pattern { my ($n) = @_; return substr($pattern x ($n / 10 + 1), 0, $n); }

sub get { my ($path, %o) = @_; return $t->http_get($path, %o); }

# The echo's params as a hash.
sub params
{
    my ($r) = @_;
    my %p = ($r->{body} // '') =~ /^([^=\n]+)=(.*)$/mg;

    return \%p;
}

# ---- params ----------------------------------------------------------------

my $r = get('/echo?a=1&b=2', headers => ['X-Custom: yes', 'Proxy: evil',
                                         'X_Under: no', 'X-Dup: 1',
                                         'X-Dup: 2', 'Cookie: a=1',
                                         'Cookie: b=2']);
is($r->{status}, 200, 'a request through fastcgi_pass');
is($r->{headers}{'content-type'}, 'text/plain', "... the responder's type");
my $p = params($r);
is($p->{SCRIPT_NAME}, '/echo', 'SCRIPT_NAME from $fastcgi_script_name');
is($p->{REQUEST_METHOD}, 'GET', 'REQUEST_METHOD');
is($p->{QUERY_STRING}, 'a=1&b=2', 'QUERY_STRING');
is($p->{CONTENT_LENGTH}, '', 'CONTENT_LENGTH empty without a body');
ok(!exists $p->{NOT_EMPTY}, 'if_not_empty: an empty value is not sent');
ok(exists $p->{ALWAYS} && $p->{ALWAYS} eq '', '... without it it is');
is($p->{APP}, 'second', 'a later fastcgi_param of a name replaces it');
is($p->{HTTP_X_CUSTOM}, 'yes', 'request fields as HTTP_ params');
is($p->{HTTP_HOST}, 'localhost', '... Host too');
ok(!exists $p->{HTTP_PROXY}, '... but not Proxy (httpoxy)');
ok(!exists $p->{HTTP_X_UNDER}, '... nor a name with an underscore');
is($p->{HTTP_X_DUP}, '1, 2', '... repeated ones joined with ", "');
is($p->{HTTP_COOKIE}, 'a=1; b=2', '... Cookie with "; "');
is($p->{stdin}, '0:' . md5_hex(''), 'an empty STDIN');

$r = get('/echo', headers => ['X-Maybe: here']);
is(params($r)->{NOT_EMPTY}, 'here', 'if_not_empty: a value is sent');

$r = get('/inc/app.php/extra/path?q=1', headers => ['X-Custom: 1']);
$p = params($r);
is($r->{status}, 200, 'the shipped fastcgi_params, over a unix socket');
is($p->{SCRIPT_NAME}, '/inc/app.php', 'fastcgi_split_path_info: script');
is($p->{PATH_INFO}, '/extra/path', '... and PATH_INFO');
is($p->{SCRIPT_FILENAME}, $t->testdir . '/html/inc/app.php',
   'SCRIPT_FILENAME: $document_root$fastcgi_script_name');
is($p->{DOCUMENT_ROOT}, $t->testdir . '/html', 'DOCUMENT_ROOT');
is($p->{REQUEST_URI}, '/inc/app.php/extra/path?q=1', 'REQUEST_URI');
is($p->{DOCUMENT_URI}, '/inc/app.php/extra/path', 'DOCUMENT_URI');
is($p->{QUERY_STRING}, 'q=1', 'QUERY_STRING');
is($p->{SERVER_PROTOCOL}, 'HTTP/1.1', 'SERVER_PROTOCOL');
is($p->{REQUEST_SCHEME}, 'http', 'REQUEST_SCHEME');
ok(!exists $p->{HTTPS}, 'no HTTPS in the clear');
is($p->{GATEWAY_INTERFACE}, 'CGI/1.1', 'GATEWAY_INTERFACE');
like($p->{SERVER_SOFTWARE} // '', qr{^gannet/\d}, 'SERVER_SOFTWARE');
is($p->{REMOTE_ADDR}, '127.0.0.1', 'REMOTE_ADDR');
like($p->{REMOTE_PORT} // '', qr/^\d+$/, 'REMOTE_PORT');
is($p->{SERVER_ADDR}, '127.0.0.1', 'SERVER_ADDR');
is($p->{SERVER_PORT}, $t->port(0), 'SERVER_PORT');
is($p->{REDIRECT_STATUS}, '200', 'REDIRECT_STATUS');
is($p->{HTTP_X_CUSTOM}, '1', 'and the fields');

$r = get('/inc/');
is(params($r)->{SCRIPT_NAME}, '/inc/index.php',
   'fastcgi_index after a script name that ends in /');
ok(!exists params($r)->{PATH_INFO}, '... PATH_INFO if_not_empty');

$r = get('/dir/');
is($r->{status}, 200, 'index index.php: an internal redirect');
is(params($r)->{SCRIPT_NAME}, '/dir/index.php',
   '... to the location of index.php, not the file as it is');

# ---- request bodies --------------------------------------------------------

my $body = join('', map { chr(($_ * 7) % 256) } 0 .. 299_999);
$r = $t->http($t->request('/echo', method => 'POST', body => $body));
$p = params($r);
is($p->{CONTENT_LENGTH}, '300000', 'a POST: CONTENT_LENGTH');
is($p->{stdin}, '300000:' . md5_hex($body), '... its body whole on STDIN');
is($p->{REQUEST_METHOD}, 'POST', '... REQUEST_METHOD');

my $chunked = "POST /echo HTTP/1.1\r\nHost: localhost\r\n"
              . "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
              . "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
$r = $t->http($chunked);
$p = params($r);
is($p->{CONTENT_LENGTH}, '11', 'a chunked body: CONTENT_LENGTH as read');
is($p->{stdin}, '11:' . md5_hex('hello world'), '... on STDIN');

# fastcgi_request_buffering off: STDIN as the body comes
for my $c (['/echo', 0, 'buffered'], ['/stream/stdintime', 1, 'streamed'],
           ['/stream/stdintime', 2, 'streamed, chunked'])
{
    my ($path, $mode, $what) = @$c;
    my ($p1, $p2) = ('c' x 40000, 'd' x 30000);
    my $s = $t->connect;
    $t->write_all($s, "POST $path HTTP/1.1\r\nHost: localhost\r\n"
                  . "Connection: close\r\n"
                  . ($mode == 2 ? "Transfer-Encoding: chunked\r\n\r\n"
                                  . sprintf("%x\r\n%s\r\n", 40000, $p1)
                                : "Content-Length: 70000\r\n\r\n$p1"));
    sleep(1);
    $t->write_all($s, $mode == 2 ? sprintf("%x\r\n%s\r\n0\r\n\r\n", 30000,
                                           $p2)
                                 : $p2);
    my $buf = '';
    my $x = $t->read_response($s, \$buf);
    close $s;
    my %v = ($x->{body} // '') =~ /^(\w+)=(.*)$/mg;
    my $md5 = md5_hex($p1 . $p2);
    if ($mode == 0) {
        is($v{stdin}, "70000:$md5", "$what: STDIN whole");
        next;
    }
    my ($ms, $len, $m) = ($x->{body} // '')
                         =~ /stdin_ms=(\d+) len=(\d+) md5=(\w+)/;
    is("$len:$m", "70000:$md5", "$what: STDIN whole");
    cmp_ok($ms // 0, '>=', 700, "$what: its first part went before the "
           . 'second came (' . ($ms // '?') . ' ms)');
}

# ---- responses -------------------------------------------------------------

$r = get('/size/300000');
is($r->{status}, 200, 'a big response without a length');
is($r->{headers}{'transfer-encoding'}, 'chunked', '... chunked to the client');
ok($r->{body} eq pattern(300000), '... every byte, from varied records');

$r = get('/length/70000');
is($r->{headers}{'content-length'}, '70000',
   "the application's Content-Length passed on");
ok($r->{body} eq pattern(70000), '... and its body');

$r = $t->http_head('/length/100');
is($r->{status}, 200, 'HEAD');
is($r->{headers}{'content-length'}, '100', '... its length');
is($r->{body}, '', '... no body');

$r = get('/split');
is($r->{status}, 201, 'a head sent one byte per record: Status 201');
is($r->{headers}{'x-split'}, 'yes', '... its fields');
is($r->{body}, pattern(50), '... and the body');
ok(!exists $r->{headers}{status}, 'Status is not passed on as a field');

$r = get('/status/404');
is($r->{status}, 404, 'Status: 404');
is($r->{body}, "status\n", '... with its body, not an error page');

$r = get('/location');
is($r->{status}, 302, 'Location without Status: 302');
is($r->{headers}{location}, '/elsewhere', '... Location as it came');

$r = get('/stderr');
is($r->{status}, 200, 'STDERR and a response');
ok($t->wait_log(qr/FastCGI sent in stderr: "STDERR-MARK f1"/),
   '... STDERR in the error log');

# ---- errors ----------------------------------------------------------------

is(get('/garbage')->{status}, 502, 'no FastCGI records: 502');
ok($t->wait_log(qr/a FastCGI record of an unknown version/),
   '... logged as such');
is(get('/nohead')->{status}, 502, 'STDOUT that is no CGI head: 502');
ok($t->wait_log(qr/FastCGI responder sent an invalid response head/),
   '... logged');
is(get('/noout')->{status}, 502, 'an end without any STDOUT: 502');
ok($t->wait_log(qr/ended the request without a complete response head/),
   '... logged');
is(get('/overloaded')->{status}, 502, 'an overloaded responder: 502');
ok($t->wait_log(qr/FastCGI responder refused the request/), '... logged');
is(get('/dead/x')->{status}, 502, 'a responder that refuses: 502');

$r = get('/short');
ok(defined $r->{error} && length($r->{body}) < 100,
   'shorter than its Content-Length: the response is cut, not completed');
ok(!defined $r->{status} || ($r->{headers}{'content-length'} // '') eq '100',
   '... never a complete-looking one of another length');
ok($t->wait_log(qr/FastCGI response shorter than its Content-Length/),
   '... logged');

$r = get('/long');
is($r->{body}, '01234', 'longer than its Content-Length: trimmed to it');
ok($t->wait_log(qr/more than its Content-Length/), '... with a warning');

$r = get('/cut');
ok(defined $r->{error}, 'a connection closed mid-body: the response cut');
ok($t->wait_log(qr/upstream closed the connection early/), '... logged');

$r = get('/small/', headers => ['X-Big: ' . ('b' x 2000)]);
is(params($r)->{BIG}, 'b' x 2000,
   'a param longer than fastcgi_buffer_size goes');
$r = $t->http($t->request('/small/', method => 'POST',
                          body => 'x' x 2000));
is(params($r)->{stdin}, '2000:' . md5_hex('x' x 2000), '... a body too');

# ---- timeouts, next server -------------------------------------------------

is(get('/tmo/silent')->{status}, 504, 'fastcgi_read_timeout: 504');
ok($t->wait_log(qr/upstream timed out while reading the response head/),
   '... logged');
is(get('/tmo/delay/100/id')->{body}, "f1\n", '... a quick answer is fine');

is(get('/next/id')->{body}, "f2\n", 'a refusing server: the next one');
is(get('/pair/status/503')->{status}, 503,
   'http_503 from both: the last 503 passed on');
is(get('/pair/id')->{body} =~ /^f[12]\n$/ ? 1 : 0, 1, '... the pair works');

# ---- pooled connections ----------------------------------------------------

sub stats
{
    my ($path) = @_;
    my %s = (get($path)->{body} // '') =~ /(\w+)=(\d+)/g;

    return \%s;
}

my $before = stats('/keep/stats');
my @rs = $t->http_keepalive([map { $t->request("/keep/id?$_",
                                               keepalive => 1) } 1 .. 20]);
is(scalar(grep { ($_->{body} // '') eq "f1\n" } @rs), 20,
   '20 requests over fastcgi_keep_conn');
my $after = stats('/keep/stats');
cmp_ok($after->{conns} - $before->{conns}, '<=', 1,
       '... over the pooled connection (' . ($after->{conns}
                                            - $before->{conns}) . ' new)');

$before = stats('/keep/stats');
get('/nokeep/id') for 1 .. 5;
$after = stats('/keep/stats');
cmp_ok($after->{conns} - $before->{conns}, '>=', 5,
       'without fastcgi_keep_conn: a connection each (the responder '
       . 'closes)');

# many clients, a pool of 2: each gets its own answer
my @kids;
for my $k (1 .. 6) {
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        my $bad = 0;
        for my $i (1 .. 25) {
            my $q = "k$k-$i";
            my $x = get("/keep/echo?$q");
            $bad++ unless ($x->{status} // 0) == 200
                          && ($x->{body} // '') =~ /^QUERY_STRING=\Q$q\E$/m;
        }
        POSIX::_exit($bad > 250 ? 250 : $bad);
    }
    push @kids, $pid;
}
my $bad = 0;
for my $pid (@kids) {
    waitpid($pid, 0);
    $bad += $? >> 8;
}
is($bad, 0, '150 requests of 6 clients over 2 pooled connections: each '
   . 'its own answer');

# ---- a slow client: what may wait for it -----------------------------------

# The most that waited when reads from the responder paused, from the
# debug log's lines since `from`.
sub paused_max
{
    my ($from) = @_;
    my $log = $t->read_file('logs/debug.log') // '';
    my @n = substr($log, $from) =~ /upstream reads paused: (\d+) bytes/g;

    return (scalar(@n), (sort { $b <=> $a } @n)[0] // 0);
}

for my $c (['/nobuf/', 4096 + 4096 + 64, 'fastcgi_buffering off, 4k'],
           ['/buf/', 65536 + 65536 + 64, 'fastcgi_buffers 4 16k'])
{
    my ($path, $bound, $what) = @$c;
    my $from = length($t->read_file('logs/debug.log') // '');
    my $s = $t->connect(port => $t->port(4), rcvbuf => 4096);
    $t->write_all($s, $t->request("${path}size/3000000"));
    sleep(1);                            # the client reads nothing
    my $buf = '';
    my $r = $t->read_response($s, \$buf, timeout => 20);
    close $s;
    ok(($r->{body} // '') eq pattern(3000000),
       "$what: a slow client gets every byte");
    my ($n, $max) = paused_max($from);
    ok($n > 0, "$what: reads from the responder paused ($n times)");
    cmp_ok($max, '<=', $bound, "$what: at most $bound bytes waited "
           . "($max)");
}

# ---- the access log --------------------------------------------------------

ok($t->wait_log(qr{^/next/id 200 \[127\.0\.0\.1:$dead, 127\.0\.0\.1:$f2\] }m,
                10, 'logs/access.log'),
   '$upstream_addr: both servers tried');
ok($t->wait_log(qr{^/inc/ 200 \[unix:\Q$sock\E\] \[200\]}m, 10,
                'logs/access.log'),
   '... a unix socket');

$t->stop;
GnBackend::stop($_) for @pids;
$t->done;
