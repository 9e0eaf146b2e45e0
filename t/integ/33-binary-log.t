#!/usr/bin/perl

# Binary access log: the same requests logged as text and as binary
# records; gannet-logcat turns the binary log back into the same text
# (combined and common), into JSON, follows a growing file (records split
# across reads), and rejects truncated, foreign and newer-version files.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use JSON::PP;
use POSIX ();
use GnTest;

my $t = GnTest->new;

my $logcat = ($ENV{GN_BUILDDIR} // '.') . '/tools/gannet-logcat';
plan(skip_all => "no $logcat") unless -x $logcat;

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types { text/html html; }
    access_log logs/a.log combined;
    access_log logs/c.log common;
    access_log logs/a.bin binary;
    access_log logs/b.bin binary buffer=16k flush=1s;
}
EOF_CONF

$t->write_file('html/index.html', "index\n");
$t->write_file('html/x.html', "x" x 1000);

$t->run;
my $dir = $t->testdir;

is(substr($t->read_file('logs/a.bin') // '', 0, 6), 'GNBLOG',
   'an empty binary log gets its header at start');

sub logcat
{
    my (@args) = @_;
    my ($rc, $out, $err) = $t->run_client([$logcat, @args], timeout => 10);
    return ($rc, $out // '', $err // '');
}

$t->http_get('/');
$t->http_get('/x.html?a=1&b=%22', headers => {
    'User-Agent' => "Mozilla/5.0 \"quoted\" \\ \xC3\xA9",
    'Referer' => 'http://example.com/from' });
$t->http_get('/missing');
$t->http_head('/x.html');
$t->http_get('/', version => '1.0');
$t->http_get('/x.html', method => 'POST', body => 'abc');
$t->http_get('/', method => 'BREW');

ok($t->wait_log(qr/BREW/, 5, 'logs/a.log'), 'text log written');
sleep(0.2);

my $text = $t->read_file('logs/a.log');
my ($rc, $out, $err) = logcat("$dir/logs/a.bin");
is($rc, 0, 'logcat exits 0') or diag($err);
# two children write their lines to each file with separate writes, so
# the files hold the same lines, possibly in another order
sub lines { return join("\n", sort split /\n/, $_[0] // ''); }
is(lines($out), lines($text),
   'binary log through logcat equals the combined text log');

($rc, $out) = logcat('-F', 'common', "$dir/logs/a.bin");
is(lines($out), lines($t->read_file('logs/c.log')),
   '-F common equals the common log');

($rc, $out) = logcat('-F', 'json', "$dir/logs/a.bin");
is($rc, 0, '-F json exits 0');
my @j = map { eval { JSON::PP->new->utf8->decode($_) } } split /\n/, $out;
is(scalar @j, 7, '-F json: every line parses');

# With two children a line is written after its response is sent, so the
# order of lines across children is not the order of the requests: find
# the records by their request line.
my %by = map { (($_->{request} // '') => $_) } grep { defined } @j;
@j = map { $by{$_} // {} } ('GET / HTTP/1.1', 'GET /x.html?a=1&b=%22 HTTP/1.1',
                            'GET /missing HTTP/1.1', 'HEAD /x.html HTTP/1.1',
                            'GET / HTTP/1.0', 'POST /x.html HTTP/1.1',
                            'BREW / HTTP/1.1');
is($j[1]{request}, 'GET /x.html?a=1&b=%22 HTTP/1.1', 'json: request');
is($j[1]{http_user_agent}, "Mozilla/5.0 \"quoted\" \\ \x{e9}",
   'json: the user agent, its UTF-8 unchanged');
is($j[1]{http_referer}, 'http://example.com/from', 'json: referer');
is($j[1]{status}, 200, 'json: status');
is($j[1]{body_bytes_sent}, 1000, 'json: body bytes');
ok($j[1]{bytes_sent} > 1000, 'json: bytes sent include the head');
is($j[2]{status}, 404, 'json: 404');
is($j[3]{request_method}, 'HEAD', 'json: HEAD');
is($j[4]{server_protocol}, 'HTTP/1.0', 'json: HTTP/1.0');
is($j[6]{request_method}, 'BREW', 'json: a method without an id');
is($j[0]{remote_addr}, '127.0.0.1', 'json: remote address');
ok($j[0]{pid} > 0 && $j[0]{msec} > 1e9, 'json: pid and msec');
is($j[0]{tls_protocol}, '', 'json: plain connection');

# ---- follow ---------------------------------------------------------------

my $fout = "$dir/follow.out";
my $pid = fork();
die "fork: $!" unless defined $pid;
if ($pid == 0) {
    open(STDOUT, '>', $fout) or POSIX::_exit(2);
    exec('timeout', '20', $logcat, '-f', "$dir/logs/a.bin")
        or POSIX::_exit(127);
}

sub wait_lines
{
    my ($file, $n, $timeout) = @_;
    my $end = time() + GnTest::slow($timeout);
    my @l;
    while (time() < $end) {
        @l = split /\n/, $t->read_file($file) // '';
        return scalar @l if @l >= $n;
        sleep(0.1);
    }
    return scalar @l;
}

is(wait_lines('follow.out', 7, 5), 7, '-f prints the existing records');
$t->http_get('/?follow=1');
$t->http_get('/?follow=2');
is(wait_lines('follow.out', 9, 5), 9, '-f prints appended records');
like($t->read_file('follow.out') // '', qr{GET /\?follow=2 HTTP/1\.1" 200 },
     '-f: the new request');

kill('TERM', $pid);
waitpid($pid, 0);

# a record split across two appends
my $bin = $t->read_file('logs/a.bin');
my $hdr = substr($bin, 0, 16);
my $len0 = unpack('V', substr($bin, 16, 4));
my $len1 = unpack('V', substr($bin, 16 + $len0, 4));
my $two = substr($bin, 16, $len0 + $len1);
$t->write_file('split.bin', $hdr . substr($two, 0, $len0 + 10));

$fout = "$dir/split.out";
$pid = fork();
die "fork: $!" unless defined $pid;
if ($pid == 0) {
    open(STDOUT, '>', $fout) or POSIX::_exit(2);
    exec('timeout', '20', $logcat, '-f', "$dir/split.bin")
        or POSIX::_exit(127);
}
is(wait_lines('split.out', 1, 5), 1, '-f: first record of a split pair');
sleep(0.5);
is(wait_lines('split.out', 2, 0.1), 1, '-f: waits for the rest');
open(my $fh, '>>:raw', "$dir/split.bin") or die;
print $fh substr($two, $len0 + 10);
close $fh;
is(wait_lines('split.out', 2, 5), 2, '-f: the split record completes');
kill('TERM', $pid);
waitpid($pid, 0);

# ---- rejects --------------------------------------------------------------

$t->write_file('trunc.bin', substr($bin, 0, 16 + $len0 + $len1 - 3));
($rc, $out, $err) = logcat("$dir/trunc.bin");
is($rc, 1, 'truncated file: exit 1');
like($err, qr/truncated record at offset ${\(16 + $len0)}\b/,
     'truncated file: message names the offset');
is(scalar(split /\n/, $out), 1, 'truncated file: whole records printed');

$t->write_file('foreign.bin', "127.0.0.1 - - [01/Jan/2026:00:00:00 +0000]\n");
($rc, $out, $err) = logcat("$dir/foreign.bin");
is($rc, 1, 'foreign file: exit 1');
like($err, qr/foreign\.bin: not a gannet binary log/, 'foreign file: message');

my $newer = $hdr;
substr($newer, 6, 2) = pack('v', 99);
$t->write_file('newer.bin', $newer . substr($two, 0, $len0));
($rc, $out, $err) = logcat("$dir/newer.bin");
is($rc, 1, 'newer version: exit 1');
like($err, qr/unsupported format version 99/, 'newer version: message');

# ---- buffered binary log, written at stop ---------------------------------

ok($t->stop, 'stopped');
($rc, $out) = logcat("$dir/logs/b.bin");
# each child flushes its own buffer: the same lines, in another order
is(join("\n", sort split /\n/, $out),
   join("\n", sort split /\n/, $t->read_file('logs/a.log')),
   'buffered binary log has the lines of the text log');

$t->done;
