#!/usr/bin/perl

# fastcgi_pass to Debian's PHP-FPM (issue 22, item 3): a real PHP page
# through `index index.php` and the shipped fastcgi_params, query
# strings, PATH_INFO by fastcgi_split_path_info, POST forms, file
# uploads (multipart, binary), raw and chunked bodies read by
# php://input, header() redirects and statuses, cookies, a 1 MiB page, a
# Content-Length the script sets, error_log() to the error log, a fatal
# error, HEAD, HTTP/2 clients, PHP-FPM over TCP too, and pooled
# connections (fastcgi_keep_conn), seen in the PHP-FPM worker's sockets.
#
# PHP-FPM is started here, on a unix socket and a TCP port of its own;
# the test installs nothing and skips when php-fpm is not there
# (quickstart.sh installs php8.2-fpm).

use strict;
use warnings;

use Test::More;
use Digest::MD5 qw(md5_hex);
use JSON::PP;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use IO::Socket::UNIX;
use GnTest;

my $t = GnTest->new(timeout => 120);

my ($fpm) = grep { defined } map { GnTest::_which($_) }
    qw(php-fpm8.2 /usr/sbin/php-fpm8.2 php-fpm /usr/sbin/php-fpm);
plan(skip_all => 'php-fpm not found (quickstart.sh installs php8.2-fpm)')
    unless defined $fpm;

my $dir = $t->testdir;
my $sock = "$dir/fpm.sock";
my $tcp = $t->port(1);

# ---- PHP-FPM -----------------------------------------------------------------

$t->write_file('fpm.conf', <<"EOF");
[global]
error_log = $dir/fpm.log
pid = $dir/fpm.pid
daemonize = no

[unix]
listen = $sock
listen.mode = 0666
pm = static
pm.max_children = 2
php_admin_value[upload_tmp_dir] = $dir/uploads
php_admin_flag[log_errors] = on
php_admin_value[error_log] =
php_admin_value[display_errors] = off

[tcp]
listen = 127.0.0.1:$tcp
pm = static
pm.max_children = 1
EOF
mkdir("$dir/uploads");

$t->write_file('www/index.php', <<'EOF');
<?php echo "INDEX-PAGE ", PHP_VERSION, "\n";
EOF
$t->write_file('www/info.php', <<'EOF');
<?php
header('Content-Type: application/json');
$files = [];
foreach ($_FILES as $k => $f) {
    $files[$k] = ['name' => $f['name'], 'size' => $f['size'],
                  'error' => $f['error'],
                  'md5' => $f['error'] ? '' : md5_file($f['tmp_name'])];
}
$in = file_get_contents('php://input');
$s = [];
foreach (['SCRIPT_NAME', 'SCRIPT_FILENAME', 'PATH_INFO', 'REQUEST_METHOD',
          'QUERY_STRING', 'REQUEST_URI', 'SERVER_SOFTWARE', 'REMOTE_ADDR',
          'SERVER_PORT', 'HTTPS', 'CONTENT_TYPE', 'CONTENT_LENGTH',
          'HTTP_X_CUSTOM', 'SERVER_PROTOCOL'] as $k) {
    $s[$k] = $_SERVER[$k] ?? null;
}
echo json_encode(['get' => $_GET, 'post' => $_POST, 'files' => $files,
                  'server' => $s, 'input' => strlen($in) . ':' . md5($in),
                  'cookie' => $_COOKIE]);
EOF
$t->write_file('www/redirect.php', <<'EOF');
<?php
if (isset($_GET['perm'])) {
    header('Location: /moved.php', true, 301);
} else {
    header('Location: /done.php');
}
EOF
$t->write_file('www/status.php', <<'EOF');
<?php http_response_code(404); echo "no such thing\n";
EOF
$t->write_file('www/cookies.php', <<'EOF');
<?php setcookie('a', '1'); setcookie('b', '2'); echo "cookies\n";
EOF
$t->write_file('www/big.php', <<'EOF');
<?php
$s = '';
for ($i = 0; strlen($s) < 1048576; $i++) { $s .= sprintf("%07d\n", $i); }
$s = substr($s, 0, 1048576);
header('X-MD5: ' . md5($s));
echo $s;
EOF
$t->write_file('www/length.php', <<'EOF');
<?php header('Content-Length: 5'); echo "hello";
EOF
$t->write_file('www/log.php', <<'EOF');
<?php error_log("PHP-STDERR-MARK"); echo "logged\n";
EOF
$t->write_file('www/pid.php', <<'EOF');
<?php echo getmypid();
EOF
$t->write_file('www/fatal.php', <<'EOF');
<?php no_such_function();
EOF

my $fpm_pid = $t->spawn([$fpm, ($< == 0 ? ('-R') : ()), '-F', '-y',
                         "$dir/fpm.conf", '-p', $dir],
                        out => "$dir/fpm.out");
my $end = time() + GnTest::slow(15);
while (time() < $end) {
    last if -S $sock && IO::Socket::UNIX->new(Peer => $sock)
            && IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                     PeerPort => $tcp);
    if (waitpid($fpm_pid, WNOHANG) == $fpm_pid) {
        undef $fpm_pid;
        last;
    }
    sleep(0.05);
}
if (!defined $fpm_pid || !-S $sock) {
    diag($t->read_file('fpm.out') // '', $t->read_file('fpm.log') // '');
    BAIL_OUT('php-fpm did not start');
}

END {
    local $?;                            # the test's exit status

    if (defined $fpm_pid) {
        kill('TERM', $fpm_pid);
        my $e = time() + 10;
        while (waitpid($fpm_pid, WNOHANG) != $fpm_pid && time() < $e) {
            sleep(0.05);
        }
        kill('KILL', -$fpm_pid, $fpm_pid) if kill(0, $fpm_pid);
        waitpid($fpm_pid, 0);
    }
}

# ---- Gannet ------------------------------------------------------------------

$t->write_conf(<<"EOF");
user %%USER%%;
children 1;
error_log logs/error.log info;

upstream fpmtcp {
    server 127.0.0.1:$tcp;
    keepalive 1;
}

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_2%% http2;
    root %%TESTDIR%%/www;
    client_max_body_size 8m;

    location / {
        index index.php;
    }
    location ~ [^/]\\.php(/|\$) {
        fastcgi_split_path_info ^(.+?\\.php)(/.*)\$;
        include %%SRCDIR%%/etc/fastcgi_params;
        fastcgi_pass unix:$sock;
    }
    location ^~ /tcp/ {
        root %%TESTDIR%%/www;
        fastcgi_split_path_info ^/tcp(/.+\\.php)(.*)\$;
        include %%SRCDIR%%/etc/fastcgi_params;
        fastcgi_pass 127.0.0.1:$tcp;
    }
    location ^~ /stream/ {
        fastcgi_split_path_info ^/stream(/.+\\.php)(.*)\$;
        include %%SRCDIR%%/etc/fastcgi_params;
        fastcgi_pass unix:$sock;
        fastcgi_request_buffering off;
    }
    location ^~ /keep/ {
        fastcgi_split_path_info ^/keep(/.+\\.php)(.*)\$;
        include %%SRCDIR%%/etc/fastcgi_params;
        fastcgi_pass fpmtcp;
        fastcgi_keep_conn on;
    }
    location ^~ /nokeep/ {
        fastcgi_split_path_info ^/nokeep(/.+\\.php)(.*)\$;
        include %%SRCDIR%%/etc/fastcgi_params;
        fastcgi_pass fpmtcp;
    }
}
EOF
$t->run;

sub get { my ($path, %o) = @_; return $t->http_get($path, %o); }

sub json
{
    my ($r) = @_;
    my $j = eval { decode_json($r->{body} // '') };

    diag("not JSON: " . substr($r->{body} // '(none)', 0, 300)) unless $j;
    return $j // {};
}

# ---- pages -------------------------------------------------------------------

my $r = get('/');
is($r->{status}, 200, 'GET /: index.php through PHP-FPM');
like($r->{body}, qr/^INDEX-PAGE \d/, '... run, not sent as a file');

my $j = json(get('/info.php?a=1&b=x%20y', headers => ['X-Custom: c']));
is_deeply($j->{get}, { a => '1', b => 'x y' }, 'the query string: $_GET');
is($j->{server}{SCRIPT_NAME}, '/info.php', 'SCRIPT_NAME');
is($j->{server}{SCRIPT_FILENAME}, "$dir/www/info.php", 'SCRIPT_FILENAME');
is($j->{server}{REQUEST_METHOD}, 'GET', 'REQUEST_METHOD');
is($j->{server}{REQUEST_URI}, '/info.php?a=1&b=x%20y', 'REQUEST_URI');
like($j->{server}{SERVER_SOFTWARE} // '', qr{^gannet/}, 'SERVER_SOFTWARE');
is($j->{server}{REMOTE_ADDR}, '127.0.0.1', 'REMOTE_ADDR');
is($j->{server}{SERVER_PORT}, $t->port(0), 'SERVER_PORT');
is($j->{server}{HTTP_X_CUSTOM}, 'c', 'a request field');
ok(!defined $j->{server}{HTTPS}, 'no HTTPS in the clear');

$j = json(get('/info.php/some/path'));
is($j->{server}{PATH_INFO}, '/some/path', 'PATH_INFO');
is($j->{server}{SCRIPT_NAME}, '/info.php', '... SCRIPT_NAME without it');

$r = $t->http_head('/info.php');
is($r->{status}, 200, 'HEAD');
is($r->{body}, '', '... no body');

# ---- bodies ------------------------------------------------------------------

$j = json($t->http($t->request('/info.php', method => 'POST',
                               headers => ['Content-Type: application/'
                                           . 'x-www-form-urlencoded'],
                               body => 'name=Gannet&list%5B%5D=1&list%5B%5D=2'
                                       . '&t=a+b')));
is_deeply($j->{post}, { name => 'Gannet', list => ['1', '2'], t => 'a b' },
          'a POST form: $_POST');

my $bin = join('', map { chr(($_ * 31 + 7) % 256) } 0 .. 299_999);
my $txt = "line one\r\nline two\n";
my $bd = 'gannetBoundary1234';
my $mp = "--$bd\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\n"
         . "value\r\n"
         . "--$bd\r\nContent-Disposition: form-data; name=\"bin\"; "
         . "filename=\"data.bin\"\r\nContent-Type: application/octet-stream"
         . "\r\n\r\n$bin\r\n"
         . "--$bd\r\nContent-Disposition: form-data; name=\"txt\"; "
         . "filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n$txt\r\n"
         . "--$bd--\r\n";
$j = json($t->http($t->request('/info.php', method => 'POST',
                               headers => ["Content-Type: multipart/form-data;"
                                           . " boundary=$bd"],
                               body => $mp)));
is($j->{post}{field}, 'value', 'a file upload: its form field');
is_deeply($j->{files}{bin}, { name => 'data.bin', size => 300000, error => 0,
                              md5 => md5_hex($bin) },
          '... a binary file of 300000 bytes, every byte');
is_deeply($j->{files}{txt}, { name => 'a.txt', size => length($txt),
                              error => 0, md5 => md5_hex($txt) },
          '... and a text file');

$j = json($t->http($t->request('/stream/info.php', method => 'POST',
                               headers => ["Content-Type: multipart/form-data;"
                                           . " boundary=$bd"],
                               body => $mp)));
is_deeply($j->{files}{bin}, { name => 'data.bin', size => 300000, error => 0,
                              md5 => md5_hex($bin) },
          'fastcgi_request_buffering off: the upload streamed to PHP');

my $raw = '{"json": [1, 2, 3]}' x 1000;
$j = json($t->http($t->request('/info.php', method => 'PUT',
                               headers => ['Content-Type: application/json'],
                               body => $raw)));
is($j->{input}, length($raw) . ':' . md5_hex($raw),
   'a raw body: php://input');
is($j->{server}{CONTENT_TYPE}, 'application/json', '... CONTENT_TYPE');
is($j->{server}{REQUEST_METHOD}, 'PUT', '... PUT');

$j = json($t->http("POST /info.php HTTP/1.1\r\nHost: localhost\r\n"
                   . "Transfer-Encoding: chunked\r\nConnection: close\r\n"
                   . "Content-Type: text/plain\r\n\r\n"
                   . "4\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\n"));
is($j->{input}, '7:' . md5_hex('abcdefg'), 'a chunked body: php://input');
is($j->{server}{CONTENT_LENGTH}, '7', '... CONTENT_LENGTH as read');

# ---- responses ---------------------------------------------------------------

$r = get('/redirect.php');
is($r->{status}, 302, "header('Location: ...'): 302");
is($r->{headers}{location}, '/done.php', '... its Location');
$r = get('/redirect.php?perm=1');
is($r->{status}, 301, '... with a status: 301');

$r = get('/status.php');
is($r->{status}, 404, 'http_response_code(404)');
is($r->{body}, "no such thing\n", '... its own body');

$r = get('/cookies.php');
my @sc = grep { lc($_->[0]) eq 'set-cookie' } @{$r->{header_list} // []};
is(scalar(@sc), 2, 'two setcookie(): two Set-Cookie fields');

$r = get('/big.php');
is(length($r->{body}), 1048576, 'a 1 MiB page');
is(md5_hex($r->{body}), $r->{headers}{'x-md5'}, '... every byte');

$r = get('/length.php');
is($r->{headers}{'content-length'}, '5', "the script's Content-Length");
is($r->{body}, 'hello', '... and its body');

$r = get('/log.php');
is($r->{body}, "logged\n", 'error_log()');
ok($t->wait_log(qr/FastCGI sent in stderr: "PHP message: PHP-STDERR-MARK"/),
   '... in the error log');

$r = get('/fatal.php');
is($r->{status}, 500, 'a fatal error: the 500 PHP-FPM sends');

$r = get('/missing.php');
is($r->{status}, 404, 'a script that is not there: 404 from PHP-FPM');

SKIP: {
    my ($rc, $out) = $t->curl('--http2-prior-knowledge', '-d', 'k=v2',
                              '-w', ' %{http_version}',
                              'http://127.0.0.1:' . $t->port(2)
                              . '/info.php');
    skip('curl cannot speak HTTP/2', 2) if $rc == 2 || $rc == 1;
    my ($body, $v) = $out =~ /^(.*) (\S+)$/s;
    is($v, '2', 'HTTP/2 to PHP');
    is(json({ body => $body })->{post}{k}, 'v2', '... a form posted by it');
}

# ---- TCP, pooled connections -------------------------------------------------

$j = json(get('/tcp/info.php?over=tcp'));
is($j->{get}{over}, 'tcp', 'PHP-FPM over TCP');
is($j->{server}{SCRIPT_FILENAME}, "$dir/www/info.php", '... the same script');

# The sockets a PHP-FPM worker holds, by inode: its listening one, and
# the connection of a request while it keeps it (FCGI_KEEP_CONN).
sub sockets
{
    my ($pid) = @_;
    my %s;

    for my $fd (glob("/proc/$pid/fd/*")) {
        my $l = readlink($fd) // next;
        $s{$1} = 1 if $l =~ /^socket:\[(\d+)\]$/;
    }
    return \%s;
}

# The TCP pool has one worker: every request meets the same one.
my $worker = get('/nokeep/pid.php')->{body} // '';
like($worker, qr/^\d+$/, "PHP-FPM's worker over TCP");
my ($base, $stable) = ({}, 0);
for (1 .. 100) {                  # the worker closes after its response
    my $now = sockets($worker);
    $stable = join(',', sort keys %$now) eq join(',', sort keys %$base)
              ? $stable + 1 : 0;
    $base = $now;
    last if $stable >= 3;
    sleep(0.05);
}
ok(%$base, '... its sockets, between requests without fastcgi_keep_conn');

my (%conn, $same_worker);
for my $i (1 .. 10) {
    my $r = get("/keep/pid.php?i=$i");
    $same_worker += ($r->{body} // '') eq $worker;
    my $now = sockets($worker);
    $conn{$_} = 1 for grep { !$base->{$_} } keys %$now;
}
is($same_worker, 10, '10 requests with fastcgi_keep_conn');
is(scalar(keys %conn), 1,
   '... over one connection, which the worker kept between them');

get('/nokeep/pid.php') for 1 .. 3;
my $left = 1;
for (1 .. 100) {
    $left = grep { !$base->{$_} } keys %{sockets($worker)};
    last unless $left;
    sleep(0.05);
}
is($left, 0, '... and without it none is kept: the pooled one was closed '
   . 'by the worker');

$t->stop;
$t->done;
