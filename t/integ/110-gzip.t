#!/usr/bin/perl

# On-the-fly gzip (issue 23, item 2): gzip, gzip_types, gzip_min_length,
# gzip_comp_level, gzip_vary, gzip_cache_size. Static files compressed
# whole (with Content-Length, weak ETag, no Accept-Ranges) and served
# again from the cache, a changed file compressed anew; a large file
# compressed as it is sent; never for Range (206), HEAD, HTTP/1.0, a
# type not listed, a short body, a response with a Content-Encoding
# (gzip_static's file, an upstream's) or Cache-Control: no-transform;
# CGI output streamed compressed, each piece flushed as it comes;
# proxied responses with a length and chunked; over HTTP/2 too; every
# compressed body inflates to the original bytes.

use strict;
use warnings;

use Test::More;
use Compress::Raw::Zlib;
use IO::Compress::Gzip qw(gzip $GzipError);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use IO::Select;
use Time::HiRes qw(time);
use GnTest;
use GnBackend;

my $t = GnTest->new;
GnBackend::init($t);
$t->skip_unless_module('mod_cgi');

my $dir = $t->testdir;
my $b1 = $t->port(2);

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_cgi.so;
gzip_cache_size 1m;

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    types { text/plain txt; text/css css; text/html html;
            image/png png; }
    file_cache_valid 100ms;

    gzip on;
    gzip_types text/plain text/css;
    gzip_min_length 100;
    gzip_vary on;

    location /l9/ { gzip_comp_level 9; }
    location /off/ { gzip off; }
    location /any/ { gzip_types *; }
    location /gzs/ { gzip_static on; }
    location /cgi/ { handler cgi; cgi_timeout 20s; }
    location /p/ { proxy_pass http://127.0.0.1:$b1/; }
    location /pb/ { proxy_pass http://127.0.0.1:$b1/; proxy_buffering off; }
}
EOF_CONF

my $text = join('', map { "line $_ of some compressible text\n" } 1 .. 2000);
my $big = join('', map { sprintf("%08d %s\n", $_, 'abcdefghij' x 10) }
                   1 .. 30000);             # ~3 MB: above the whole limit
$t->write_file("html/a.txt", $text);
$t->write_file("html/a.html", "<p>$text</p>");
$t->write_file("html/small.txt", "short\n");
$t->write_file("html/a.png", $text);
$t->write_file("html/big.txt", $big);
$t->write_file("html/change.txt", $text);
$t->write_file("html/l9/a.txt", $text);
$t->write_file("html/off/a.txt", $text);
$t->write_file("html/any/a.png", $text);
my $pre;
gzip(\"precompressed\n" => \$pre) or die "gzip: $GzipError";
$t->write_file("html/gzs/a.txt", $text);
$t->write_file("html/gzs/a.txt.gz", $pre);
mkdir "$dir/html/cgi";
for my $f (qw(slow.cgi big.cgi)) {
    my $src = $t->read_file("$t->{srcdir}/t/cgi/$f");
    $t->write_file("html/cgi/$f", $src);
    chmod(0755, "$dir/html/cgi/$f");
}
chmod(0755, $dir, "$dir/html");

my $pid = GnBackend::start($t, $b1, 'b1');
$t->run;

sub inflate
{
    my ($gz) = @_;
    my $out;
    return undef unless defined $gz;
    gunzip(\$gz => \$out) or return "gunzip failed: $GunzipError";
    return $out;
}

sub get
{
    my ($path, %h) = @_;
    return $t->http_get($path, headers => { 'Accept-Encoding' => 'gzip',
                                             %h });
}

# ---- static files, compressed whole ---------------------------------------

my $plain = $t->http_get('/a.txt');
my $r = get('/a.txt');
is($r->{status}, 200, 'static: 200');
is($r->{headers}{'content-encoding'}, 'gzip', 'Content-Encoding: gzip');
is(inflate($r->{body}), $text, 'inflates to the file');
ok(length($r->{body}) < length($text) / 4, 'and is much smaller')
    or diag(length $r->{body});
is($r->{headers}{'content-length'}, length $r->{body},
   'whole: Content-Length of the compressed bytes');
is($r->{headers}{vary}, 'Accept-Encoding', 'gzip_vary: Vary');
is($r->{headers}{etag}, "W/$plain->{headers}{etag}", 'a weak ETag');
is($r->{headers}{'accept-ranges'}, undef, 'no Accept-Ranges');
is($r->{headers}{'content-type'}, 'text/plain', 'the file\'s type');

is($plain->{body}, $text, 'no Accept-Encoding: the file as it is');
is($plain->{headers}{vary}, 'Accept-Encoding', '... with Vary too');
is($plain->{headers}{'content-encoding'}, undef, '... not encoded');

my $again = get('/a.txt');
is($again->{body}, $r->{body}, 'again (from the cache): the same bytes');

$r = get('/a.txt', 'If-None-Match' => "W/$plain->{headers}{etag}");
is($r->{status}, 304, 'If-None-Match with the weak ETag: 304');

$r = get('/nosuch.txt');
is($r->{status}, 404, 'an error page: 404');
is($r->{headers}{'content-encoding'}, 'gzip', '... compressed (text/html)');
like(inflate($r->{body}), qr/404 Not Found/, '... inflates to the page');

$r = get('/a.html');
is($r->{headers}{'content-encoding'}, 'gzip', 'text/html: always a type');
is(inflate($r->{body}), "<p>$text</p>", '... inflates');

$r = get('/a.txt', 'Accept-Encoding' => 'gzip;q=0');
is($r->{headers}{'content-encoding'}, undef, 'gzip;q=0: not compressed');
$r = get('/a.txt', 'Accept-Encoding' => 'br, deflate');
is($r->{headers}{'content-encoding'}, undef, 'no gzip taken: not compressed');

$r = get('/small.txt');
is($r->{body}, "short\n", 'below gzip_min_length: as it is');
is($r->{headers}{'content-encoding'}, undef, '... not encoded');
$r = get('/a.png');
is($r->{headers}{'content-encoding'}, undef, 'a type not listed: as it is');
is($r->{headers}{vary}, undef, '... and no Vary');
$r = get('/any/a.png');
is($r->{headers}{'content-encoding'}, 'gzip', 'gzip_types *: any type');
$r = get('/off/a.txt');
is($r->{body}, $text, 'gzip off: as it is');

$r = get('/a.txt', Range => 'bytes=0-9');
is($r->{status}, 206, 'Range: 206');
is($r->{body}, substr($text, 0, 10), '... of the uncompressed file');
is($r->{headers}{'content-encoding'}, undef, '... not encoded');

$r = $t->http_head('/a.txt', headers => { 'Accept-Encoding' => 'gzip' });
is($r->{headers}{'content-encoding'}, undef, 'HEAD: not compressed (nginx)');

$r = $t->http('GET /a.txt HTTP/1.0' . "\r\nAccept-Encoding: gzip\r\n\r\n");
is($r->{status}, 200, 'HTTP/1.0: 200');
is($r->{body}, $text, '... not compressed (gzip_http_version 1.1)');

$r = get('/gzs/a.txt');
is($r->{body}, $pre, 'gzip_static\'s file: sent as it is, never twice');
is($r->{headers}{'content-encoding'}, 'gzip', '... one Content-Encoding');
unlike($r->{raw} // '', qr/Vary:.*\r\nVary:/s, '... one Vary');

$r = get('/l9/a.txt');
my $l1 = get('/a.txt');
is(inflate($r->{body}), $text, 'gzip_comp_level 9: inflates');
# the gzip header's XFL byte: 2 for the slowest level, 4 for the fastest
is(ord(substr($r->{body}, 8, 1)), 2, '... made at level 9 (XFL 2)');
is(ord(substr($l1->{body}, 8, 1)), 4, 'the default is level 1 (XFL 4)');

# a changed file is compressed anew (a new cache entry after its check)
$t->write_file('html/change.txt', "$text$text");
my $first = inflate(get('/change.txt')->{body});
is($first, "$text$text", 'a changed file: its new bytes');
select(undef, undef, undef, 0.3);
$t->write_file('html/change.txt', "changed $text");
my $now = time();
utime($now + 5, $now + 5, "$dir/html/change.txt");
select(undef, undef, undef, 0.3);
is(inflate(get('/change.txt')->{body}), "changed $text",
   '... and again, never the cached output of the old one');

# ---- a large file: compressed as it is sent --------------------------------

$r = get('/big.txt');
is($r->{status}, 200, 'large file: 200');
is($r->{headers}{'content-encoding'}, 'gzip', '... compressed');
ok($r->{chunked}, '... as it is sent (chunked)');
ok(inflate($r->{body}) eq $big, '... inflates to the file');

# ---- CGI: a streamed response, flushed as it comes -------------------------

$r = get('/cgi/big.cgi');
is($r->{headers}{'content-encoding'}, 'gzip', 'CGI: compressed');
my $cgi = inflate($r->{body});
is(length($cgi // ''), 5120 * 1024, '... inflates to the 5 MB');
like($cgi // '', qr/^00000001x+\n/, '... its first line');

{
    my $s = $t->connect;
    print $s "GET /cgi/slow.cgi?3 HTTP/1.1\r\nHost: x\r\n"
             . "Accept-Encoding: gzip\r\n\r\n";
    my ($buf, $got, $head) = ('', '', undef);
    my ($z) = Compress::Raw::Zlib::Inflate->new(
        -WindowBits => WANT_GZIP, -ConsumeInput => 1);
    my $end = time() + 5;
    while (time() < $end && $got !~ /first\n/) {
        last unless IO::Select->new($s)->can_read($end - time());
        last unless sysread($s, $buf, 65536, length $buf);
        if (!defined $head && $buf =~ s/^(.*?\r\n\r\n)//s) {
            $head = $1;
        }
        next unless defined $head;
        # de-chunk what is complete
        while ($buf =~ s/^([0-9a-f]+)\r\n//i) {
            my $n = hex $1;
            if (length($buf) < $n + 2) { $buf = sprintf("%x\r\n", $n) . $buf;
                                         last; }
            my $piece = substr($buf, 0, $n);
            substr($buf, 0, $n + 2) = '';
            my $out;
            $z->inflate($piece, $out);
            $got .= $out // '';
        }
    }
    like($head // '', qr/Content-Encoding: gzip/i, 'slow CGI: compressed');
    is($got, "first\n", '... its first line inflates before the script ends');
    close $s;
}

# ---- proxied -------------------------------------------------------------

$r = get('/p/text/50000');
is($r->{headers}{'content-encoding'}, 'gzip', 'proxied with a length: gzip');
is(inflate($r->{body}), '0123456789' x 5000, '... inflates');
ok($r->{chunked}, '... chunked now (its length is not known in advance)');

$r = get('/pb/textchunked/30000');
is($r->{headers}{'content-encoding'}, 'gzip',
   'proxied chunked, proxy_buffering off: gzip');
is(inflate($r->{body}), '0123456789' x 3000, '... inflates');

$r = get('/p/tagged/5000');
is($r->{headers}{etag}, 'W/"t1"', 'an upstream\'s ETag made weak');
is($r->{headers}{'accept-ranges'}, undef, '... its Accept-Ranges dropped');
is(inflate($r->{body}), '0123456789' x 500, '... inflates');
$r = $t->http_get('/p/tagged/5000');
is($r->{headers}{etag}, '"t1"', 'not compressed: the ETag as it was');

$r = get('/p/text/50');
is($r->{headers}{'content-encoding'}, undef,
   'proxied below gzip_min_length: as it is');
$r = get('/p/coded/5000');
is($r->{headers}{'content-encoding'}, 'x-test',
   'an upstream\'s Content-Encoding: as it is');
is($r->{body}, '0123456789' x 500, '... its bytes untouched');
$r = get('/p/notransform/5000');
is($r->{headers}{'content-encoding'}, undef,
   'Cache-Control: no-transform: as it is');
$r = get('/p/size/5000');
is($r->{headers}{'content-encoding'}, undef,
   'an upstream response without a type: as it is');

# ---- HTTP/2 ----------------------------------------------------------------

SKIP: {
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 4 unless $out =~ /\bHTTP2\b/;
    for my $p ('/a.txt', '/cgi/big.cgi', '/p/textchunked/20000', '/big.txt') {
        my $f = "$dir/h2.out";
        ($rc, $out) = $t->curl('--http2-prior-knowledge', '--compressed',
                               '-D', '-', '-o', $f,
                               'http://127.0.0.1:' . $t->port(1) . $p);
        my $body = $t->read_file($f) // '';
        my $want = $p eq '/a.txt' ? $text : $p eq '/big.txt' ? $big
                 : $p =~ /textchunked/ ? '0123456789' x 2000 : undef;
        ok($out =~ /^content-encoding: gzip\r?$/mi
           && (defined $want ? $body eq $want
                             : length($body) == 5120 * 1024),
           "h2 $p: gzip, inflates (curl --compressed)")
            or diag($out);
    }
}

my ($rc, $out) = $t->curl('--compressed', '-s',
                          'http://127.0.0.1:' . $t->port(0) . '/a.txt');
is($out, $text, 'curl --compressed: the original bytes');

unlike($t->error_log, qr/\[(alert|crit|emerg)\]/, 'no alert in the error log');

GnBackend::stop($pid);
$t->done;
