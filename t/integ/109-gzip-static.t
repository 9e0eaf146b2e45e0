#!/usr/bin/perl

# gzip_static and brotli_static (issue 23, item 2, first part): FILE.gz
# or FILE.br served for FILE when the client takes that coding (q=0
# refuses it) and the compressed file is no older; its own size and
# ETag, Content-Encoding and Vary: Accept-Encoding; br before gzip; a
# Range request answered from the uncompressed file; curl --compressed
# gets the original bytes back; over HTTP/2 too.

use strict;
use warnings;

use Test::More;
use IO::Compress::Gzip qw(gzip $GzipError);
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
error_log logs/error.log info;

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    types { text/plain txt; text/css css; }

    location /gz/ { gzip_static on; }
    location /both/ { gzip_static on; brotli_static on; }
    location /off/ { }
}
EOF_CONF

my $dir = $t->testdir;
my $text = join('', map { "line $_ of some compressible text\n" } 1 .. 400);
my $gz;
gzip(\$text => \$gz) or die "gzip: $GzipError";
my $br = "not really brotli, but the bytes of a.txt.br\n";

for my $d (qw(gz both off)) {
    $t->write_file("html/$d/a.txt", $text);
    $t->write_file("html/$d/a.txt.gz", $gz);
}
$t->write_file('html/both/a.txt.br', $br);
# an old .gz: the original changed after it was made
$t->write_file('html/gz/stale.txt', $text);
$t->write_file('html/gz/stale.txt.gz', $gz);
my $now = time();
utime($now - 3600, $now - 3600, "$dir/html/gz/stale.txt.gz");
utime($now - 3600, $now - 3600, "$dir/html/gz/a.txt");
$t->run;

sub get
{
    my ($path, $ae, %h) = @_;
    $h{'Accept-Encoding'} = $ae if defined $ae;
    return $t->http_get($path, headers => \%h);
}

my $plain = get('/gz/a.txt');
my $r = get('/gz/a.txt', 'gzip');
is($r->{status}, 200, 'gzip_static: 200');
is($r->{headers}{'content-encoding'}, 'gzip', 'Content-Encoding: gzip');
is($r->{body}, $gz, 'the .gz file\'s bytes');
is($r->{headers}{'content-length'}, length $gz, 'its length');
is($r->{headers}{vary}, 'Accept-Encoding', 'Vary: Accept-Encoding');
isnt($r->{headers}{etag}, $plain->{headers}{etag},
     'its own ETag, not the original\'s');
is($r->{headers}{'content-type'}, 'text/plain', 'the original\'s type');

is($plain->{body}, $text, 'no Accept-Encoding: the original');
is($plain->{headers}{'content-encoding'}, undef, '... not encoded');
is($plain->{headers}{vary}, 'Accept-Encoding', '... with Vary too');

$r = get('/gz/a.txt', 'gzip;q=0');
is($r->{body}, $text, 'gzip;q=0: the original');
$r = get('/gz/a.txt', 'deflate, gzip;q=0.5');
is($r->{headers}{'content-encoding'}, 'gzip', 'deflate, gzip;q=0.5: gzip');
$r = get('/gz/a.txt', 'gzipx, xgzip');
is($r->{body}, $text, 'a coding that only contains "gzip": the original');
$r = get('/gz/stale.txt', 'gzip');
is($r->{body}, $text, 'a .gz older than the file: the original');

$r = get('/gz/a.txt', 'gzip', Range => 'bytes=0-9');
is($r->{status}, 206, 'Range with gzip accepted: 206');
is($r->{body}, substr($text, 0, 10), '... from the uncompressed file');
is($r->{headers}{'content-encoding'}, undef, '... not encoded');

$r = get('/gz/a.txt', 'gzip', 'If-None-Match' => get('/gz/a.txt', 'gzip')
                                                 ->{headers}{etag});
is($r->{status}, 304, 'If-None-Match with the .gz\'s ETag: 304');

$r = $t->http_head('/gz/a.txt', headers => { 'Accept-Encoding' => 'gzip' });
is($r->{headers}{'content-length'}, length $gz, 'HEAD: the .gz\'s length');

$r = get('/both/a.txt', 'gzip, br');
is($r->{headers}{'content-encoding'}, 'br', 'brotli_static: br first');
is($r->{body}, $br, '... the .br file');
$r = get('/both/a.txt', 'gzip');
is($r->{headers}{'content-encoding'}, 'gzip', '... gzip when br is not taken');

$r = get('/off/a.txt', 'gzip');
is($r->{body}, $text, 'off: the original');
is($r->{headers}{vary}, undef, 'off: no Vary');

my ($rc, $out) = $t->curl('--compressed',
                          'http://127.0.0.1:' . $t->port(0) . '/gz/a.txt');
is($out, $text, 'curl --compressed: the original bytes back');

SKIP: {
    ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 2 unless $out =~ /\bHTTP2\b/;
    ($rc, $out) = $t->curl('--http2-prior-knowledge', '-D', '-', '-o',
                           '/dev/null', '-H', 'Accept-Encoding: gzip',
                           'http://127.0.0.1:' . $t->port(1) . '/gz/a.txt');
    like($out, qr/^content-encoding: gzip\r?$/mi, 'h2: content-encoding');
    like($out, qr/^content-length: ${\ length $gz}\r?$/mi,
         'h2: the .gz\'s length');
}

$t->done;
