#!/usr/bin/perl

# HTTP/2 with a real browser (issue 20): Chromium, headless, loads a page
# with 50 distinct images over TLS. A script in the page writes, on window
# load, each image's natural size and the nextHopProtocol of its resource
# timing entry, and the navigation entry's, into the DOM; --dump-dom
# prints it. Asserted: the document and all 50 images came over "h2", all
# 50 decoded with the size they were made with, and the access log has
# one HTTP/2.0 line with status 200 for the page and each image.
#
# Chromium trusts the server's key through --ignore-certificate-errors-
# spki-list (the SHA-256 of its SubjectPublicKeyInfo), not through a
# blanket --ignore-certificate-errors; it resolves localhost to 127.0.0.1
# and no other name at all (--host-resolver-rules), and runs as root, so
# without its sandbox. Debian package: chromium (/usr/bin/chromium, a
# script that runs /usr/lib/chromium/chromium).

use strict;
use warnings;

use Test::More;
use Compress::Zlib qw(compress crc32);
use Digest::SHA qw(sha256);
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(time);
use GnTest;
use GnTLS;

my $N = 50;

my $t = GnTest->new(timeout => 90);
plan(skip_all => 'gannet built without HTTP/2')
    unless ($ENV{GN_HTTP2} // '') eq 'yes';
my ($browser) = grep { defined GnTest::_which($_) }
                'chromium', 'chromium-browser';
plan(skip_all => 'chromium not installed (Debian package chromium)')
    unless defined $browser;
GnTLS::init($t);

my $dir = $t->testdir;
my $certs = GnTLS::certs();


# A WIDTHx1 RGB PNG, every pixel of colour $rgb (3 bytes).
sub png
{
    my ($width, $rgb) = @_;
    my $chunk = sub {
        my ($type, $data) = @_;
        return pack('N', length $data) . $type . $data
               . pack('N', crc32($type . $data));
    };

    return "\x89PNG\r\n\x1a\n"
           . $chunk->('IHDR', pack('NNCCCCC', $width, 1, 8, 2, 0, 0, 0))
           . $chunk->('IDAT', compress("\0" . ($rgb x $width)))
           . $chunk->('IEND', '');
}


# image i: i pixels wide, its own colour (so its own bytes)
my $imgs = '';
for my $i (1 .. $N) {
    $t->write_file("html/img/$i.png",
                   png($i, pack('CCC', $i * 5, 255 - $i * 5, $i)));
    $imgs .= qq{<img id="i$i" src="/img/$i.png" alt="$i">\n};
}

$t->write_file('html/index.html', <<"EOF_HTML");
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>h2 browser</title>
<link rel="icon" href="data:,">
<script>
window.addEventListener('load', function () {
    var out = [], proto = {}, nav, i, img, e;

    performance.getEntriesByType('resource').forEach(function (e) {
        proto[new URL(e.name).pathname] = e.nextHopProtocol;
    });
    nav = performance.getEntriesByType('navigation')[0];
    out.push('nav ' + (nav ? nav.nextHopProtocol || '-' : 'none'));
    for (i = 1; i <= $N; i++) {
        img = document.getElementById('i' + i);
        out.push('img ' + i + ' ' + (img.complete ? 'complete' : 'pending')
                 + ' ' + img.naturalWidth + 'x' + img.naturalHeight
                 + ' ' + (proto['/img/' + i + '.png'] || '-'));
    }
    out.push('end');
    document.getElementById('result').textContent = out.join('\\n');
});
</script>
</head><body>
<pre id="result">not loaded</pre>
$imgs</body></html>
EOF_HTML

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
error_log logs/error.log info;
log_format br '$server_protocol "$request" $status';

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    access_log logs/access.log br;
    types { text/html html; image/png png; }
}
EOF_CONF

$t->run;

# base64(SHA-256(SubjectPublicKeyInfo)) of the server's key
my ($rc, $spki, $err) = $t->run_client(
    ['openssl', 'pkey', '-in', "$certs/localhost-ec.key", '-pubout',
     '-outform', 'DER']);
is($rc, 0, 'openssl: the SPKI of the server key') or diag($err);
my $pin = encode_base64(sha256($spki), '');

my $port = $t->port(0);
my $start = time();
my $out;
($rc, $out, $err) = $t->run_client(
    [$browser, '--headless=new', '--no-sandbox', '--disable-gpu',
     '--no-first-run', '--no-default-browser-check',
     '--disable-background-networking', '--disable-component-update',
     '--disable-sync', '--disable-extensions', '--disable-dev-shm-usage',
     "--user-data-dir=$dir/chromium",
     "--ignore-certificate-errors-spki-list=$pin",
     '--host-resolver-rules=MAP localhost 127.0.0.1, MAP * ~NOTFOUND',
     '--virtual-time-budget=10000', '--dump-dom',
     "https://localhost:$port/"],
    timeout => 40);
my $took = time() - $start;
is($rc, 0, sprintf('chromium exited 0 (%.1f s)', $took))
    or diag("stderr: " . substr($err, -3000));

my ($res) = $out =~ m{<pre id="result">(.*?)</pre>}s;
$res //= '';
like($res, qr/\nend\z/, 'the page script ran on load')
    or diag(substr($out, 0, 2000) . "\nstderr: " . substr($err, -3000));
like($res, qr/^nav h2$/m, 'the document came over h2 (nextHopProtocol)');

my (%img, @bad);
for my $l (split /\n/, $res) {
    $img{$1} = [$2, $3, $4, $5] if $l =~ /^img (\d+) (\S+) (\d+)x(\d+) (\S+)$/;
}
@bad = grep { !$img{$_} || $img{$_}[0] ne 'complete'
              || $img{$_}[1] != $_ || $img{$_}[2] != 1 } 1 .. $N;
ok(!@bad, "all $N images loaded, each with its own size (naturalWidth)")
    or diag("not loaded or wrong size: @bad\n$res");
@bad = grep { !$img{$_} || $img{$_}[3] ne 'h2' } 1 .. $N;
ok(!@bad, "all $N images came over h2 (nextHopProtocol)")
    or diag("not h2: @bad\n$res");


# ---- the access log --------------------------------------------------------

my $lines = $N + 1;
$t->wait_log(qr/(?:.*\n){$lines}/, 5, 'logs/access.log');
my @log = split /\n/, $t->read_file('logs/access.log') // '';
cmp_ok(scalar @log, '>=', $N + 1, 'access log: a line per request')
    or diag(join("\n", @log));
my @other = grep { !m{^HTTP/2\.0 "[A-Z]+ \S+ HTTP/2\.0" \d+$} } @log;
ok(!@other, 'access log: every request was HTTP/2.0')
    or diag(join("\n", @other));
my %seen;
for my $l (@log) {
    $seen{$1}++ if $l =~ m{^HTTP/2\.0 "GET (\S+) HTTP/2\.0" 200$};
}
ok($seen{'/'}, 'access log: GET / HTTP/2.0 200');
@bad = grep { !$seen{"/img/$_.png"} } 1 .. $N;
ok(!@bad, "access log: GET /img/N.png HTTP/2.0 200 for all $N")
    or diag("missing: @bad");
@other = grep { !m{ "GET (?:/|/img/\d+\.png|/favicon\.ico) HTTP/2\.0" } }
         @log;
ok(!@other, 'access log: nothing but the page, its images (a favicon)')
    or diag(join("\n", @other));

# no chromium process of this test left (run_client killed its group)
my @left;
for my $p (glob('/proc/[0-9]*')) {
    open(my $fh, '<', "$p/cmdline") or next;
    my $cmd = <$fh> // '';
    close $fh;
    push @left, $p =~ s{/proc/}{}r if index($cmd, "$dir/chromium") >= 0;
}
ok(!@left, 'no chromium process left behind') or do {
    diag("left: @left");
    kill('KILL', @left);
};

$t->done;
