#!/usr/bin/perl

# HTTP/2 and the lifecycle (issue 20, item 4): ten reloads while h2load
# keeps eight TLS connections busy fail no request (a draining child
# keeps serving a busy connection and sends it GOAWAY once it is idle or
# half of shutdown_timeout is over; new connections go to the new
# children meanwhile); a graceful stop lets a stream in progress finish
# and sends GOAWAY with the last stream id; the old children exit once
# their connections are done.

use strict;
use warnings;

use Test::More;
use POSIX qw(WNOHANG);
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 120);
plan(skip_all => 'gannet built without HTTP/2')
    unless ($ENV{GN_HTTP2} // '') eq 'yes';
GnTLS::init($t, 'curl', 'h2load');
plan(skip_all => 'python3-h2 / python3-hyperframe not installed')
    unless system('/usr/bin/python3', '-c', 'import h2, hyperframe, hpack')
           == 0;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => 'mod_example not built')
    unless -f "$ENV{GN_MODDIR}/mod_example.so";

my $dir = $t->testdir;
my $h2raw = "$t->{srcdir}/t/lib/h2raw.py";
$t->write_file('html/index.html', "reload under h2 load\n");

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
shutdown_timeout 40s;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_example.so;

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    listen 127.0.0.1:%%PORT_1%% http2;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    access_log off;
    keepalive_requests 100000;
    location /example/ { handler example; }
}
EOF_CONF

$t->run;

my $url = 'https://127.0.0.1:' . $t->port(0) . '/index.html';
my $n = GnTest::valgrind() ? 4000 : 24000;
my $rps = GnTest::valgrind() ? 100 : 400;     # per connection: ~8 s

my @first = $t->children;
my $out = "$dir/h2load.out";
my $pid = $t->spawn(['h2load', '-c', '8', '-m', '4', '--rps', $rps,
                     '-n', $n, $url], out => $out);
sleep(0.5);

my $gen = 1;
my $fresh = 0;
for my $i (1 .. 10) {
    my $from = length $t->error_log;
    $t->signal('HUP');
    $gen++;
    ok($t->wait_log(qr/reload complete, generation $gen\b/, 10, undef, $from),
       "reload $i completed");
    my ($rc, $body) = $t->curl('-k', '--http2', $url);
    $fresh++ if $rc == 0 && $body eq "reload under h2 load\n";
    sleep(0.3);
}
is($fresh, 10, 'a new h2 connection is served after each reload');

my $end = time() + GnTest::slow(60);
while (waitpid($pid, WNOHANG) != $pid && time() < $end) {
    sleep(0.1);
}
kill('KILL', -$pid, $pid);
my $res = $t->read_file($out) // '';
my $want = "requests: $n total, $n started, $n done, $n succeeded, "
           . '0 failed, 0 errored';
like($res, qr/\Q$want\E/,
     "h2load: $n requests across 10 reloads, none failed") or diag($res);

$end = time() + GnTest::slow(10);
sleep(0.1) while grep({ $t->alive($_) } @first) && time() < $end;
ok(!grep({ $t->alive($_) } @first),
   'the first children, which held the busy connections, exit once '
   . 'they are done');


# graceful stop: a stream in progress finishes, GOAWAY names it
my $rout = "$dir/raw.out";
my $rpid = $t->spawn(['/usr/bin/python3', $h2raw, $t->port(1), 'idle', 20,
                      '/example/delay?ms=1500'], out => $rout);
sleep(0.5);
$t->signal('QUIT');
$end = time() + GnTest::slow(20);
while (waitpid($rpid, WNOHANG) != $rpid && time() < $end) {
    sleep(0.05);
}
kill('KILL', -$rpid, $rpid);
my $raw = $t->read_file($rout) // '';
like($raw,
     qr/^STATUS 1 200\n(?:DATA 1 \d+\n)?END 1\nGOAWAY 1 NO_ERROR\nCLOSED$/m,
     'graceful stop: the stream in progress gets its whole response, then '
     . 'GOAWAY with its id') or diag($raw);
ok($t->wait_exit(20), 'the server stops once the stream is done');

$t->done;
