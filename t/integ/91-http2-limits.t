#!/usr/bin/perl

# HTTP/2 limits against the known attacks (issue 20, item 3), each run
# against one child while a normal client (curl --http2) is served by the
# same child: PING, SETTINGS, PRIORITY and empty-DATA floods and rapid
# reset (CVE-2023-44487) spend the glitch budget (http2_max_glitches)
# and get GOAWAY ENHANCE_YOUR_CALM; a CONTINUATION flood (CVE-2024-28182)
# too; an HPACK "bomb" (a small block that decodes to megabytes) gets 431
# on its stream and the connection goes on; streams reset at once stop
# their work (CGI scripts are killed); a client whose window stays shut
# is cut off by send_timeout (logged 408); an idle connection gets GOAWAY
# after keepalive_timeout, a head that never ends after
# client_header_timeout. And fairness: a 50 MB response asked for first
# does not hold up 20 small ones on the same connection.

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new(timeout => 180);
plan(skip_all => 'gannet built without HTTP/2')
    unless ($ENV{GN_HTTP2} // '') eq 'yes';
$t->skip_unless_bin;
$t->has_prog('curl');
plan(skip_all => 'python3-h2 / python3-hyperframe not installed')
    unless system('/usr/bin/python3', '-c', 'import h2, hyperframe, hpack')
           == 0;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => 'modules not built')
    unless -f "$ENV{GN_MODDIR}/mod_cgi.so"
           && -f "$ENV{GN_MODDIR}/mod_example.so";

my $dir = $t->testdir;
my $h2raw = "$t->{srcdir}/t/lib/h2raw.py";
my $cgi_user = $< == 0 ? 'nobody' : '%%USER%%';

$t->write_file('html/index.html', "hello h2\n");
$t->write_file('html/big.txt', 'b' x (1024 * 1024));
mkdir "$dir/html/cgi" or die "mkdir cgi: $!";
copy("$t->{srcdir}/t/cgi/slow.cgi", "$dir/html/cgi/slow.cgi")
    or die "copy slow.cgi: $!";
chmod(0755, $dir, "$dir/html", "$dir/html/cgi", "$dir/html/cgi/slow.cgi");

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_cgi.so;
load_module %%MODDIR%%/mod_example.so;
cgi_user $cgi_user;
cgi_max_processes 40;
log_format h2 '\$server_protocol "\$request" \$status';

server {
    listen 127.0.0.1:%%PORT_0%% http2;
    root html;
    access_log logs/access.log h2;
    keepalive_requests 100000;
    keepalive_timeout 3s;
    client_header_timeout 2s;
    send_timeout 2s;
    http2_max_glitches 500;
    location /cgi/ { handler cgi; cgi_timeout 60s; }
    location /example/ { handler example; }
}

server {
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    access_log logs/access.log h2;
    keepalive_requests 3;
    send_timeout 5s;
}
EOF_CONF

$t->run;

our $port = $t->port(0);
my $url = "http://127.0.0.1:$port/index.html";

# Starts h2raw CASE ARGS in the background: (pid, its output file).
my $nattack = 0;
sub attack
{
    my (@args) = @_;
    my $out = "$dir/attack." . ++$nattack;
    my $pid = $t->spawn(['/usr/bin/python3', $h2raw, $port, @args],
                        out => $out, err => "$out.err");
    return ($pid, $out);
}

sub finish
{
    return $t->spawned_output(@_);
}

# While an attack runs: a normal client gets its answers.
sub served
{
    my ($n) = @_;
    my $ok = 0;

    for (1 .. $n) {
        my ($rc, $body) = $t->curl('--http2-prior-knowledge', $url);
        $ok++ if $rc == 0 && $body eq "hello h2\n";
    }
    return $ok == $n;
}

for my $a (['ping-flood', 'PING'], ['settings-flood', 'SETTINGS'],
           ['priority-flood', 'PRIORITY'], ['empty-data-flood', 'empty DATA'],
           ['rapid-reset', 'RST_STREAM'])
{
    my $from = length($t->error_log);
    my ($pid, $out) = attack($a->[0], 20000);
    ok(served(5), "$a->[0]: a normal client is served meanwhile");
    my $res = finish($pid, $out);
    like($res, qr/^GOAWAY \d+ ENHANCE_YOUR_CALM$/m,
         "$a->[0]: GOAWAY ENHANCE_YOUR_CALM") or diag($res);
    my $re = qr/too many HTTP\/2 frames that carry no request \Q($a->[1])\E/;
    ok($t->wait_log($re, 5, undef, $from),
       "$a->[0]: logged with its frame type");
}

{
    my ($pid, $out) = attack('continuation-flood', 5000);
    ok(served(3), 'CONTINUATION flood: a normal client is served');
    my $res = finish($pid, $out);
    like($res, qr/^GOAWAY \d+ ENHANCE_YOUR_CALM$/m,
         'CONTINUATION flood: GOAWAY ENHANCE_YOUR_CALM') or diag($res);
}

{
    my ($pid, $out) = attack('hpack-bomb', 4000);
    ok(served(3), 'HPACK bomb: a normal client is served');
    my $res = finish($pid, $out);
    like($res, qr/^STATUS 1 431$/m, 'HPACK bomb (16 MB decoded): 431');
    like($res, qr/^STATUS 3 200$/m, 'HPACK bomb: the connection goes on');
    ok($t->wait_log(qr/too large a request head \(\d+ bytes decoded/, 5),
       'HPACK bomb: logged');
}

# streams reset at once: the scripts they started are killed
{
    my $from = length($t->error_log);
    my ($pid, $out) = attack('reset-some', 10, '/cgi/slow.cgi?30', 1);
    my $res = finish($pid, $out);
    like($res, qr/^STATUS 21 200$/m, 'reset streams: the next one is served');
    my $started = () = substr($t->error_log, $from)
                       =~ /slow\.cgi" stderr: pid \d+/g;
    is($started, 10, 'reset streams: their 10 scripts had started');
    ok($t->wait_log(qr{(?:"GET /cgi/slow\.cgi\?30 HTTP/2\.0" 200\n.*){10}}s,
                    5, 'logs/access.log'), 'reset streams: each logged (with '
       . 'the status its response had begun with)');
    my $left;
    my $end = time() + GnTest::slow(5);
    do {
        sleep(0.2);
        $left = () = grep { (($t->read_file("/proc/$_/cmdline") // '')
                             =~ /slow\.cgi/) } map { m{/proc/(\d+)} ? $1 : () }
                     glob('/proc/[0-9]*');
    } while ($left && time() < $end);
    is($left, 0, 'reset streams: their CGI scripts are gone');
}

# a window that stays shut: send_timeout ends the stream
{
    my $from = length($t->error_log);
    my ($pid, $out) = attack('zero-window', '/big.txt', 8);
    ok(served(3), 'zero window: a normal client is served');
    my $res = finish($pid, $out);
    like($res, qr/^STATUS 1 200\n(?:.*\n)*RST 1 CANCEL$/m,
         'zero window: the stream is reset after send_timeout') or diag($res);
    ok($t->wait_log(qr/client timed out, while sending the response/, 5,
                    undef, $from), 'zero window: logged');
    ok($t->wait_log(qr{^HTTP/2\.0 "GET /big.txt HTTP/2\.0" 408$}m, 5,
                    'logs/access.log'), 'zero window: access log 408');
}

# idle connection, head that never ends
{
    my ($pid, $out) = attack('idle', 15);
    my $res = finish($pid, $out);
    like($res, qr/^END 1\nGOAWAY 1 NO_ERROR\nCLOSED$/m,
         'idle: GOAWAY after keepalive_timeout, then closed') or diag($res);
    ($pid, $out) = attack('headers-stall', 15);
    $res = finish($pid, $out);
    like($res, qr/^GOAWAY \d+ NO_ERROR\nCLOSED$/m,
         'a head that never ends: closed after client_header_timeout')
        or diag($res);
}

# ---- fairness: one big response does not hold up small ones ----------------

{
    open(my $fh, '>', "$dir/html/big50.bin") or die "big50.bin: $!";
    truncate($fh, 50 * 1024 * 1024) or die "truncate: $!";
    close $fh;
    my $out = finish(attack('fairness', '/big50.bin', '/index.html', 20));
    my @ends = $out =~ /^END (\d+)$/mg;
    is(scalar(@ends), 21, 'fairness: the 50 MB response and 20 small ones '
       . 'end') or diag($out);
    is($ends[-1], 1, 'fairness: the 20 small responses end before the 50 MB '
       . 'one that was asked for first') or diag("@ends");
    like($out, qr/^DATA 1 52428800$/m, 'fairness: all 50 MB arrive');
}


# bodies a handler answers without reading give the connection's window
# back: 20 of 60000 bytes (more than its 1 MiB), then 200000 more
{
    my $res = finish(attack('window-leak', 20, '/example/delay?ms=10',
                            '/index.html'));
    like($res, qr/^SENT 200000$/m, 'unread bodies do not shut the '
         . "connection's window") or diag($res);
}

# keepalive_requests 3: GOAWAY after the third stream; the streams sent
# with it are refused, not run; the three are served to the end through
# a small window (the connection is still read after a graceful GOAWAY)
{
    local $port = $t->port(1);
    my $res = finish(attack('many-then-goaway', 5, '/index.html'));
    like($res, qr/^GOAWAY 5 NO_ERROR$/m, 'keepalive_requests 3: GOAWAY '
         . 'names the third stream') or diag($res);
    my $refused = () = $res =~ /^RST (?:7|9) REFUSED_STREAM$/mg;
    is($refused, 2, 'keepalive_requests 3: the two past it are refused');
    my $log = $t->read_file('logs/access.log') // '';
    unlike($log, qr{GET /index\.html\?s=[79] }, '... and were not run');
    $res = finish(attack('small-window', 3, '/big.txt'));
    my @ends = $res =~ /^DATA (\d+) 1048576$/mg;
    is(scalar(@ends), 3, 'after a graceful GOAWAY: three 1 MiB responses '
       . 'through a 16 KiB window end') or diag($res);
    like($res, qr/^CLOSED$/m, '... and then the connection closes');
}

ok(served(3), 'after every attack: a normal client is served');

$t->done;
