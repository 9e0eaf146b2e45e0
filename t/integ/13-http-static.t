#!/usr/bin/perl

# Static files (issue 3): MIME types, index files, directory redirects,
# 403, conditional requests, ranges, large files with and without
# sendfile, the file cache's validity period, error_page, server_tokens.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use POSIX qw(strftime);
use GnTest;

my $t = GnTest->new(timeout => 90);

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
shutdown_timeout 5s;

types {
    text/html               html htm;
    text/plain              txt;
    text/css                css;
    image/png               png;
    application/javascript  js;
}
default_type application/x-test-default;

server {
    listen 127.0.0.1:%%PORT_0%%;
    server_tokens on;
    root html;
    index a.html b.html;
    file_cache_valid 1s;
    error_page 404 /404.html;

    location /noetag/ {
        etag off;
    }
    location /nolm/ {
        last_modified off;
    }
    location /nosendfile/ {
        sendfile off;
    }
    location /noranges/ {
        max_ranges 0;
    }
    location /few/ {
        max_ranges 2;
    }
    location /badep/ {
        error_page 404 /no-such-page.html;
    }
}

server {
    listen 127.0.0.1:%%PORT_1%%;
    root html;
}
EOF_CONF

# content that differs at every offset
sub pattern
{
    my ($len, $seed) = @_;
    my $unit = join('', map { sprintf('%07d:', $_) } 0 .. 8191);   # 64 KiB
    $unit = "$seed$unit";
    my $s = $unit x (int($len / length $unit) + 1);
    return substr($s, 0, $len);
}

my $rbin = pattern(10000, 'r');
my $large = pattern(3 * 1024 * 1024 + 17, 'L');
my $small = "small file\n";
my $page404 = "<html>custom not found</html>\n";

$t->write_file('html/a.html', "<p>a</p>\n");
$t->write_file('html/page.html', "<p>page</p>\n");
$t->write_file('html/style.css', "p { }\n");
$t->write_file('html/img.png', "\x89PNG\r\n\x1a\n");
$t->write_file('html/app.js', "var x;\n");
$t->write_file('html/data.xyz', "xyz\n");
$t->write_file('html/noext', "noext\n");
$t->write_file('html/small.txt', $small);
$t->write_file('html/r.bin', $rbin);
$t->write_file('html/large.bin', $large);
$t->write_file('html/404.html', $page404);
$t->write_file('html/idx/b.html', "<p>idx b</p>\n");
$t->write_file('html/idx2/a.html', "<p>idx2 a</p>\n");
$t->write_file('html/idx2/b.html', "<p>idx2 b</p>\n");
$t->write_file('html/noindex/c.txt', "c\n");
$t->write_file('html/secret.txt', "unreadable\n");
$t->write_file('html/cond.txt', "conditional\n");
$t->write_file('html/noetag/f.txt', "no etag\n");
$t->write_file('html/nolm/f.txt', "no last-modified\n");
$t->write_file('html/nosendfile/large.bin', $large);
$t->write_file('html/noranges/r.bin', $rbin);
$t->write_file('html/few/r.bin', $rbin);
$t->write_file('html/fresh.txt', "version one\n");
$t->write_file('html/doomed.txt', "doomed\n");
$t->write_file('html/empty.txt', '');
chmod(0000, $t->testdir . '/html/secret.txt');

# a fixed, old modification time for the conditional tests
my $mtime = 1_700_000_000;
utime($mtime, $mtime, $t->testdir . '/html/cond.txt');
utime($mtime, $mtime, $t->testdir . '/html/nolm/f.txt');
utime($mtime, $mtime, $t->testdir . '/html/noetag/f.txt');

$t->run;

sub hdate { return strftime('%a, %d %b %Y %H:%M:%S GMT', gmtime($_[0])); }

sub get
{
    my ($path, @h) = @_;
    return $t->http_get($path, headers => [@h], timeout => 10);
}

my ($r, $raw, $closed);

# ---- MIME types ------------------------------------------------------------

my %mime = ('/page.html' => 'text/html', '/style.css' => 'text/css',
            '/img.png' => 'image/png', '/app.js' => 'application/javascript',
            '/small.txt' => 'text/plain',
            '/data.xyz' => 'application/x-test-default',
            '/noext' => 'application/x-test-default');
for my $p (sort keys %mime) {
    $r = get($p);
    like($r->{headers}{'content-type'} // '', qr{^\Q$mime{$p}\E(?:;|$)},
         "Content-Type of $p is $mime{$p}");
}

# ---- index files, redirects, 403 -------------------------------------------

$r = get('/idx/');
is($r->{status}, 200, 'index a.html b.html: 200 without a.html');
is($r->{body}, "<p>idx b</p>\n", 'index: b.html used when a.html is missing');
$r = get('/idx2/');
is($r->{body}, "<p>idx2 a</p>\n", 'index: a.html preferred');
$r = get('/');
is($r->{body}, "<p>a</p>\n", 'index at the root');

$r = get('/idx?x=1&y=%20z');
is($r->{status}, 301, 'directory without slash: 301');
like($r->{headers}{location} // '', qr{/idx/\?x=1&y=%20z$},
     'directory redirect keeps the query string');
$r = get('/idx');
like($r->{headers}{location} // '', qr{/idx/$},
     'directory redirect without a query: no "?"');

$r = get('/noindex/');
is($r->{status}, 403, 'directory without an index file: 403');
like($t->error_log, qr{\[error\] .*directory index of "[^"]*/noindex/" is forbidden},
     'directory without an index file: "directory index ... is forbidden" '
     . 'at [error], as nginx');
unlike($t->error_log, qr{noindex.*Permission denied},
       'directory without an index file: not "Permission denied"');
$r = get('/nosuchdir/');
is($r->{status}, 404, 'a directory that does not exist: 404, not 403');

SKIP: {
    skip 'running as root: root can read any file', 1 if $< == 0;
    $r = get('/secret.txt');
    is($r->{status}, 403, 'unreadable file: 403');
}

# ---- conditional requests --------------------------------------------------

$r = get('/cond.txt');
my $etag = $r->{headers}{etag} // '';
my $lm = $r->{headers}{'last-modified'} // '';
is($r->{status}, 200, 'cond.txt: 200');
like($etag, qr/^"[^"]+"$/, 'cond.txt: strong ETag');
is($lm, hdate($mtime), 'cond.txt: Last-Modified is the file mtime');
is($r->{headers}{'accept-ranges'}, 'bytes', 'Accept-Ranges: bytes on 200');

{
    ($raw, $closed) = $t->http_raw(
        $t->request('/cond.txt', headers => ["If-None-Match: $etag"]),
        timeout => 5);
    like($raw, qr{^HTTP/1\.1 304 }, 'If-None-Match with the ETag: 304');
    like($raw, qr/^ETag: \Q$etag\E\r$/mi, '304: ETag present');
    like($raw, qr/^Last-Modified: \Q$lm\E\r$/mi, '304: Last-Modified');
    like($raw, qr/^Date: /mi, '304: Date');
    like($raw, qr/\r\n\r\n\z/, '304: no body');
}

$r = get('/cond.txt', 'If-None-Match: "other"');
is($r->{status}, 200, 'If-None-Match with another ETag: 200');
$r = get('/cond.txt', 'If-None-Match: *');
is($r->{status}, 304, 'If-None-Match: *: 304');
$r = get('/cond.txt', "If-None-Match: \"x\", $etag, \"y\"");
is($r->{status}, 304, 'If-None-Match list containing the ETag: 304');
$r = get('/cond.txt', "If-None-Match: W/$etag");
is($r->{status}, 304, 'If-None-Match: weak comparison matches W/');
$r = $t->http_head('/cond.txt', headers => ["If-None-Match: $etag"]);
is($r->{status}, 304, 'HEAD with If-None-Match: 304');

$r = get('/cond.txt', "If-Modified-Since: $lm");
is($r->{status}, 304, 'If-Modified-Since equal: 304');
is($r->{body}, '', 'If-Modified-Since 304: no body');
$r = get('/cond.txt', 'If-Modified-Since: ' . hdate($mtime + 86400));
is($r->{status}, 304, 'If-Modified-Since later: 304');
$r = get('/cond.txt', 'If-Modified-Since: ' . hdate($mtime - 86400));
is($r->{status}, 200, 'If-Modified-Since earlier: 200');
is($r->{body}, "conditional\n", 'If-Modified-Since earlier: body');
$r = get('/cond.txt', 'If-Modified-Since: not a date');
is($r->{status}, 200, 'If-Modified-Since invalid: 200');
$r = get('/cond.txt', 'If-Modified-Since: Tue, 32 Nov 2023 22:13:20 GMT');
is($r->{status}, 200, 'If-Modified-Since with day 32: 200');

$r = get('/cond.txt', 'If-Match: "nope"');
is($r->{status}, 412, 'If-Match mismatch: 412');
$r = get('/cond.txt', "If-Match: $etag");
is($r->{status}, 200, 'If-Match with the ETag: 200');
$r = get('/cond.txt', 'If-Match: *');
is($r->{status}, 200, 'If-Match: *: 200');
$r = get('/cond.txt', "If-Match: W/$etag");
is($r->{status}, 412, 'If-Match uses strong comparison: W/ fails, 412');

$r = get('/cond.txt', 'If-Unmodified-Since: ' . hdate($mtime - 86400));
is($r->{status}, 412, 'If-Unmodified-Since earlier: 412');
$r = get('/cond.txt', "If-Unmodified-Since: $lm");
is($r->{status}, 200, 'If-Unmodified-Since equal: 200');
$r = get('/cond.txt', 'If-Unmodified-Since: garbage');
is($r->{status}, 200, 'If-Unmodified-Since invalid: ignored');

# precedence: If-None-Match decides, If-Modified-Since is ignored
$r = get('/cond.txt', 'If-None-Match: "other"',
         'If-Modified-Since: ' . hdate($mtime + 86400));
is($r->{status}, 200,
   'If-None-Match mismatch wins over a matching If-Modified-Since: 200');
$r = get('/cond.txt', "If-None-Match: $etag",
         'If-Modified-Since: ' . hdate($mtime - 86400));
is($r->{status}, 304,
   'If-None-Match match wins over an earlier If-Modified-Since: 304');
$r = get('/cond.txt', 'If-Match: "nope"', "If-None-Match: \"other\"");
is($r->{status}, 412, 'If-Match is evaluated first: 412');

# etag off / last_modified off
$r = get('/noetag/f.txt');
is($r->{status}, 200, 'etag off: 200');
ok(!exists $r->{headers}{etag}, 'etag off: no ETag header');
ok(exists $r->{headers}{'last-modified'}, 'etag off: Last-Modified kept');
$r = get('/noetag/f.txt', 'If-None-Match: *');
is($r->{status}, 200, 'etag off: If-None-Match ignored');
$r = get('/noetag/f.txt', "If-Modified-Since: " . hdate($mtime));
is($r->{status}, 304, 'etag off: If-Modified-Since still works');

$r = get('/nolm/f.txt');
is($r->{status}, 200, 'last_modified off: 200');
ok(!exists $r->{headers}{'last-modified'},
   'last_modified off: no Last-Modified header');
ok(exists $r->{headers}{etag}, 'last_modified off: ETag kept');
$r = get('/nolm/f.txt', "If-Modified-Since: " . hdate($mtime + 86400));
is($r->{status}, 200, 'last_modified off: If-Modified-Since ignored');

# ---- ranges -----------------------------------------------------------------

my $n = length $rbin;

$r = get('/r.bin', 'Range: bytes=0-99');
is($r->{status}, 206, 'Range single: 206');
is($r->{headers}{'content-range'}, "bytes 0-99/$n",
   'Range single: Content-Range');
is($r->{headers}{'content-length'}, 100, 'Range single: Content-Length');
ok($r->{body} eq substr($rbin, 0, 100), 'Range single: exact bytes');

$r = get('/r.bin', 'Range: bytes=1234-5677');
ok($r->{body} eq substr($rbin, 1234, 4444), 'Range in the middle: exact bytes');

$r = get('/r.bin', 'Range: bytes=-500');
is($r->{status}, 206, 'Range suffix: 206');
is($r->{headers}{'content-range'}, 'bytes ' . ($n - 500) . '-' . ($n - 1)
   . "/$n", 'Range suffix: Content-Range');
ok($r->{body} eq substr($rbin, -500), 'Range suffix: exact bytes');

$r = get('/r.bin', 'Range: bytes=9000-');
is($r->{headers}{'content-range'}, 'bytes 9000-' . ($n - 1) . "/$n",
   'Range open-ended: Content-Range');
ok($r->{body} eq substr($rbin, 9000), 'Range open-ended: exact bytes');

$r = get('/r.bin', 'Range: bytes=9990-20000');
is($r->{headers}{'content-range'}, 'bytes 9990-' . ($n - 1) . "/$n",
   'Range past the end: clipped');

$r = get('/r.bin', 'Range: bytes=-20000');
is($r->{status}, 206, 'Range suffix longer than the file: 206');
ok($r->{body} eq $rbin, 'Range suffix longer than the file: whole file');

$r = get('/r.bin', 'Range: bytes=20000-30000');
is($r->{status}, 416, 'Range unsatisfiable: 416');
is($r->{headers}{'content-range'}, "bytes */$n",
   'Range unsatisfiable: Content-Range: bytes */N');

$r = get('/r.bin', 'Range: bytes=0-9,100-199,5000-');
is($r->{status}, 206, 'Range multiple: 206');
{
    my $ct = $r->{headers}{'content-type'} // '';
    like($ct, qr{^multipart/byteranges;\s*boundary=}, 'multipart/byteranges');
    my ($b) = $ct =~ /boundary="?([^";]+)"?/;
    $b //= 'none';
    is($r->{headers}{'content-length'}, length $r->{body},
       'multipart: Content-Length matches the body');
    my @parts = split /\r\n--\Q$b\E(?:--)?/, "\r\n" . $r->{body};
    shift @parts;                                  # before the first
    my @want = ([0, 9], [100, 199], [5000, $n - 1]);
    my @got;
    for my $p (@parts) {
        next unless $p =~ /^\r\n(.*?)\r\n\r\n(.*)\z/s;
        my ($h, $data) = ($1, $2);
        my ($ctype) = $h =~ /^Content-Type:\s*(.*?)\s*$/mi;
        my ($from, $to, $len) =
            $h =~ m{^Content-Range:\s*bytes (\d+)-(\d+)/(\d+)}mi;
        push @got, [$ctype // '', $from // -1, $to // -1, $len // -1, $data];
    }
    is(scalar @got, 3, 'multipart: three parts');
    for my $i (0 .. 2) {
        my ($from, $to) = @{$want[$i]};
        my $g = $got[$i] // ['', -1, -1, -1, ''];
        is("$g->[1]-$g->[2]/$g->[3]", "$from-$to/$n",
           "multipart part $i: Content-Range");
        ok($g->[4] eq substr($rbin, $from, $to - $from + 1),
           "multipart part $i: exact bytes");
        is($g->[0], 'application/x-test-default',
           "multipart part $i: Content-Type");
    }
    like($r->{body}, qr/\r\n--\Q$b\E--\r\n\z/, 'multipart: closing boundary');
}

$r = get('/few/r.bin', 'Range: bytes=0-1,5-6,10-11');
is($r->{status}, 200, 'more ranges than max_ranges: 200');
ok($r->{body} eq $rbin, 'more ranges than max_ranges: full body');
$r = get('/few/r.bin', 'Range: bytes=0-1,5-6');
is($r->{status}, 206, 'as many ranges as max_ranges: 206');

$r = get('/noranges/r.bin', 'Range: bytes=0-99');
is($r->{status}, 200, 'max_ranges 0: Range ignored');
ok(!exists $r->{headers}{'accept-ranges'}, 'max_ranges 0: no Accept-Ranges');

for my $bad ('bytes=abc', 'bytes=5-1', 'items=0-5', 'bytes 0-5', 'bytes=--5',
             'bytes=')
{
    $r = get('/r.bin', "Range: $bad");
    is($r->{status}, 200, "invalid Range \"$bad\": ignored, 200");
}

$r = get('/r.bin');
my $retag = $r->{headers}{etag} // '';
my $rlm = $r->{headers}{'last-modified'} // '';
$r = get('/r.bin', 'Range: bytes=0-9', "If-Range: $retag");
is($r->{status}, 206, 'If-Range with the current ETag: 206');
$r = get('/r.bin', 'Range: bytes=0-9', "If-Range: W/$retag");
is($r->{status}, 200, 'If-Range with a weak ETag: 200 (strong match only)');
$r = get('/r.bin', 'Range: bytes=' . join(',', map { "$_-$_" } 0 .. 19));
is($r->{status}, 200, '20 ranges, default max_ranges 16: 200');
$r = get('/r.bin', 'Range: bytes=0-9', 'If-Range: "old"');
is($r->{status}, 200, 'If-Range with an old ETag: 200');
ok($r->{body} eq $rbin, 'If-Range with an old ETag: full body');
$r = get('/r.bin', 'Range: bytes=0-9', "If-Range: $rlm");
is($r->{status}, 206, 'If-Range with the Last-Modified date: 206');
$r = get('/r.bin', 'Range: bytes=0-9',
         'If-Range: Mon, 01 Jan 2001 00:00:00 GMT');
is($r->{status}, 200, 'If-Range with another date: 200');

{
    ($raw, $closed) = $t->http_raw(
        $t->request('/r.bin', method => 'HEAD',
                    headers => ['Range: bytes=0-9']), timeout => 5);
    like($raw, qr{^HTTP/1\.1 200 }, 'HEAD with Range (GET only): 200');
    like($raw, qr/^Content-Length: $n\r$/mi, 'HEAD with Range: full length');
    like($raw, qr/\r\n\r\n\z/, 'HEAD with Range: no body');
}

$r = get('/r.bin', 'Range: bytes=0-0');
is($r->{headers}{'content-range'}, "bytes 0-0/$n", 'Range 0-0: one byte');
is($r->{body}, substr($rbin, 0, 1), 'Range 0-0: the byte');
$r = get('/r.bin', 'Range: bytes=-0');
is($r->{status}, 416, 'Range suffix of 0 bytes: 416');
$r = get('/r.bin', 'Range: bytes=20000-30000, 0-4');
is($r->{status}, 206, 'one unsatisfiable and one good range: 206');
is($r->{body}, substr($rbin, 0, 5), 'only the satisfiable range is sent');

$r = get('/empty.txt');
is($r->{status}, 200, 'empty file: 200');
is($r->{headers}{'content-length'}, '0', 'empty file: Content-Length: 0');
$r = get('/empty.txt', 'Range: bytes=0-');
is($r->{status}, 416, 'Range on an empty file: 416');
is($r->{headers}{'content-range'}, 'bytes */0',
   'Range on an empty file: bytes */0');

$r = get('/missing.txt', 'If-None-Match: *');
is($r->{status}, 404, 'If-None-Match: * on a missing file: 404');

# ---- bodies: small, large, with and without sendfile ------------------------

$r = get('/small.txt');
ok($r->{body} eq $small, 'small file: exact body');
is($r->{headers}{'content-length'}, length $small,
   'small file: Content-Length');

$r = get('/large.bin');
is($r->{status}, 200, 'large file: 200');
is($r->{headers}{'content-length'}, length $large,
   'large file: Content-Length');
ok($r->{body} eq $large, 'large file: exact body (3 MiB)');

{
    ($raw, $closed) = $t->http_raw(
        $t->request('/large.bin', method => 'HEAD'), timeout => 5);
    like($raw, qr/^Content-Length: ${\ length $large}\r$/mi,
         'HEAD of a large file: Content-Length');
    like($raw, qr/\r\n\r\n\z/, 'HEAD of a large file: no body');
}

$r = get('/nosendfile/large.bin');
is($r->{status}, 200, 'sendfile off: 200');
ok($r->{body} eq $large, 'sendfile off: exact body (3 MiB)');

$r = get('/large.bin', 'Range: bytes=1000000-1000099');
ok($r->{body} eq substr($large, 1000000, 100),
   'Range in a large file: exact bytes');

# several large bodies on one keep-alive connection
{
    my @r = $t->http_keepalive(
        [$t->request('/large.bin', keepalive => 1),
         $t->request('/small.txt', keepalive => 1),
         $t->request('/nosendfile/large.bin')], pipeline => 1, timeout => 10);
    ok(($r[0]{body} // '') eq $large && ($r[1]{body} // '') eq $small
       && ($r[2]{body} // '') eq $large,
       'pipelined large, small, large: exact bodies');
}

# ---- the file cache: changes seen after file_cache_valid --------------------

for (1 .. 3) {
    $r = get('/fresh.txt');
}
is($r->{body}, "version one\n", 'file cache: first version');
my $etag1 = $r->{headers}{etag} // '';
$r = get('/doomed.txt');
is($r->{status}, 200, 'file cache: doomed file served');

$t->write_file('html/fresh.txt', "version two, longer\n");
unlink($t->testdir . '/html/doomed.txt');
sleep(1.5);

$r = get('/fresh.txt');
is($r->{body}, "version two, longer\n",
   'file cache: a replaced file is served fresh after file_cache_valid');
is($r->{headers}{'content-length'}, length("version two, longer\n"),
   'file cache: fresh Content-Length');
isnt($r->{headers}{etag} // '', $etag1, 'file cache: a new ETag');
$r = get('/fresh.txt', "If-None-Match: $etag1");
is($r->{status}, 200, 'file cache: the old ETag no longer matches');
$r = get('/doomed.txt');
is($r->{status}, 404, 'file cache: a deleted file is 404 after the validity');

# in-place rewrite (same inode) with another size
{
    open(my $fh, '>', $t->testdir . '/html/fresh.txt') or die;
    print $fh "v3\n";
    close $fh;
    sleep(1.5);
    $r = get('/fresh.txt');
    is($r->{body}, "v3\n", 'file cache: an in-place rewrite is served fresh');
}

# ---- error_page, server_tokens --------------------------------------------

$r = get('/missing.html');
is($r->{status}, 404, 'error_page 404: status stays 404');
is($r->{body}, $page404, 'error_page 404: the custom body');
like($r->{headers}{'content-type'} // '', qr{^text/html},
     'error_page 404: Content-Type of the page');

$r = get('/badep/missing.txt');
is($r->{status}, 404, 'error_page naming a missing page: still 404');

{
    ($raw, $closed) = $t->http_raw(
        $t->request('/missing.html', method => 'HEAD'), timeout => 5);
    like($raw, qr{^HTTP/1\.1 404 }, 'HEAD of a missing file: 404');
    like($raw, qr/\r\n\r\n\z/, 'HEAD of a missing file: no body');
}

$r = $t->http_get('/small.txt', port => $t->port(1));
is($r->{headers}{server}, 'gannet',
   'server_tokens off (the default): "Server: gannet"');
$r = $t->http_get('/missing.html', port => $t->port(1));
is($r->{status}, 404, 'server_tokens off: 404');
is($r->{headers}{server}, 'gannet', 'server_tokens off: Server on errors');
unlike($r->{body}, qr{gannet/\d}, 'server_tokens off: no version in the page');
$r = get('/small.txt');
like($r->{headers}{server} // '', qr{^gannet/\d+\.\d+\.\d+$},
     'server_tokens on: version shown');

$t->done;
