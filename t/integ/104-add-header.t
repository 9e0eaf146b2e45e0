#!/usr/bin/perl

# add_header, expires and tls_hsts (issue 23, item 1), as nginx's:
# add_header with variables, only on 2xx/3xx without `always`, on every
# status with it, an empty value adding nothing, and inheritance (a
# level with an add_header of its own takes none of the outer level's);
# expires TIME / -TIME / epoch / max / modified / off, replacing the
# Cache-Control and Expires a module set; tls_hsts on TLS responses
# only, on errors too. Over HTTP/1.1, HTTPS and HTTP/2.

use strict;
use warnings;

use Test::More;
use Time::Local qw(timegm);
use GnTest;
use GnTLS;

my $t = GnTest->new;
GnTLS::init($t, 'curl');

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%TMODDIR%%/mod_t_info.so;

add_header X-Main main;

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% tls;
    listen 127.0.0.1:%%PORT_2%% http2;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    tls_hsts 1y includeSubDomains;
    root html;
    types { text/html html; }

    add_header X-Server "server $host";
    add_header X-Empty "$http_x_nothing";

    location /own/ {
        add_header X-Own "own $uri";
        add_header X-Always "always $status" always;
    }
    location /inherit/ {
        expires 1h;
    }
    location /past/ {
        expires -10m;
    }
    location /epoch/ {
        expires epoch;
    }
    location /max/ {
        expires max;
    }
    location /modified/ {
        expires modified 1d;
    }
    location /module/ {
        handler t_info;
        expires 30s;
    }
    location /off/ {
        expires off;
        tls_hsts off;
        add_header X-Off off;
    }
}
EOF_CONF

for my $d (qw(own inherit past epoch max modified off)) {
    $t->write_file("html/$d/index.html", "$d\n");
}
my $mtime = time() - 7 * 86400;
utime($mtime, $mtime, $t->testdir . '/html/modified/index.html');
$t->run;

sub h { my ($r, $n) = @_; return $r->{headers}{lc $n}; }

# An IMF-fixdate as seconds since the epoch, or undef.
sub http_time
{
    my %mon = (Jan => 0, Feb => 1, Mar => 2, Apr => 3, May => 4, Jun => 5,
               Jul => 6, Aug => 7, Sep => 8, Oct => 9, Nov => 10, Dec => 11);
    my ($d, $m, $y, $H, $M, $S) = ($_[0] // '')
        =~ /^\w{3}, (\d\d) (\w{3}) (\d{4}) (\d\d):(\d\d):(\d\d) GMT$/
        or return undef;
    return timegm($S, $M, $H, $d, $mon{$m}, $y);
}

# ---- add_header and its inheritance ----------------------------------------

my $r = $t->http_get('/inherit/index.html', host => 'localhost');
is($r->{status}, 200, 'GET /inherit/');
is(h($r, 'X-Server'), 'server localhost',
   'add_header: the server\'s, with a variable');
is(h($r, 'X-Main'), undef,
   'add_header: the server has its own, so none of the main level\'s');
is(h($r, 'X-Empty'), undef, 'add_header: an empty value adds nothing');

$r = $t->http_get('/own/index.html');
is(h($r, 'X-Own'), 'own /own/index.html', 'add_header: the location\'s own');
is(h($r, 'X-Server'), undef,
   'add_header: a location with its own inherits none');
is(h($r, 'X-Always'), 'always 200', 'add_header always: on a 200');

$r = $t->http_get('/own/missing.html');
is($r->{status}, 404, 'GET a missing file');
is(h($r, 'X-Own'), undef, 'add_header: not on a 404');
is(h($r, 'X-Always'), 'always 404', 'add_header always: on a 404');

$r = $t->http_get('/own/index.html');
my $etag = h($r, 'ETag');
$r = $t->http_get('/own/index.html', headers => { 'If-None-Match' => $etag });
is($r->{status}, 304, 'a 304');
is(h($r, 'X-Own'), 'own /own/index.html', 'add_header: on a 304 too');

$r = $t->http_get('/own');
is($r->{status}, 301, 'a directory redirect');
is(h($r, 'X-Own'), undef, 'add_header: a 301 of the server level\'s '
   . 'location ("/own" is not under "/own/")');
is(h($r, 'X-Server'), 'server localhost', '... with the server\'s fields');

# ---- expires ---------------------------------------------------------------

sub expires_ok
{
    my ($r, $age, $what) = @_;
    my $exp = http_time(h($r, 'Expires') // '');
    my $cc = h($r, 'Cache-Control') // '';

    if ($age < 0) {
        is($cc, 'no-cache', "$what: Cache-Control: no-cache");
    } else {
        is($cc, "max-age=$age", "$what: Cache-Control: max-age=$age");
    }
    ok(defined $exp && abs($exp - (time() + $age)) <= 5,
       "$what: Expires is now + $age s") or diag(h($r, 'Expires'));
}

$r = $t->http_get('/inherit/index.html');
expires_ok($r, 3600, 'expires 1h');
expires_ok($t->http_get('/past/index.html'), -600, 'expires -10m');

$r = $t->http_get('/epoch/index.html');
is(h($r, 'Expires'), 'Thu, 01 Jan 1970 00:00:01 GMT', 'expires epoch');
is(h($r, 'Cache-Control'), 'no-cache', 'expires epoch: no-cache');

$r = $t->http_get('/max/index.html');
is(h($r, 'Expires'), 'Thu, 31 Dec 2037 23:55:55 GMT', 'expires max');
is(h($r, 'Cache-Control'), 'max-age=315360000', 'expires max: ten years');

$r = $t->http_get('/modified/index.html');
is(http_time(h($r, 'Expires') // ''), $mtime + 86400,
   'expires modified 1d: Last-Modified + 1 day');
is(h($r, 'Cache-Control'), 'no-cache',
   'expires modified 1d: a week-old file is already stale');

$r = $t->http_get('/inherit/missing.html');
is(h($r, 'Expires'), undef, 'expires: not on a 404');

$r = $t->http_get('/module/x');
is($r->{status}, 200, 'a module\'s response (it sets Cache-Control)');
expires_ok($r, 30, 'expires on a module');
my @cc = grep { lc $_->[0] eq 'cache-control' } @{$r->{header_list} // []};
is(scalar @cc, 1, 'expires: the module\'s own Cache-Control was replaced')
    or diag(explain(\@cc));

$r = $t->http_get('/off/index.html');
is(h($r, 'Expires'), undef, 'expires off');
is(h($r, 'X-Off'), 'off', 'the off location\'s own field');

# ---- tls_hsts --------------------------------------------------------------

is(h($t->http_get('/inherit/index.html'), 'Strict-Transport-Security'),
   undef, 'tls_hsts: never over plain HTTP');

my @tls = ('--resolve', 'localhost:' . $t->port(1) . ':127.0.0.1',
           '--cacert', "$ENV{GN_CERTS}/ca.pem", '-D', '-', '-o', '/dev/null');
my $https = 'https://localhost:' . $t->port(1);

sub curl_head
{
    my (@args) = @_;
    my ($rc, $out) = $t->curl(@args);
    my %h;
    for (split /\r?\n/, $out) {
        $h{lc $1} = $2 if /^([^:\s]+):\s*(.*?)\s*$/;
        $h{':status'} = $1 if m{^HTTP/\S+ (\d+)};
    }
    return \%h;
}

my $h = curl_head(@tls, '--http1.1', "$https/inherit/index.html");
is($h->{'strict-transport-security'}, 'max-age=31536000; includeSubDomains',
   'tls_hsts: over HTTPS');
is($h->{'x-server'}, 'server localhost', 'add_header: over HTTPS');
$h = curl_head(@tls, '--http1.1', "$https/nothing.html");
is($h->{':status'}, 404, 'HTTPS 404');
is($h->{'strict-transport-security'}, 'max-age=31536000; includeSubDomains',
   'tls_hsts: on an error too');
$h = curl_head(@tls, '--http1.1', "$https/off/index.html");
is($h->{'strict-transport-security'}, undef, 'tls_hsts off in a location');

SKIP: {
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 6 unless $out =~ /\bHTTP2\b/;

    $h = curl_head(@tls, '--http2', "$https/inherit/index.html");
    is($h->{':status'}, 200, 'h2 over TLS');
    is($h->{'strict-transport-security'},
       'max-age=31536000; includeSubDomains', 'h2: tls_hsts');
    is($h->{'cache-control'}, 'max-age=3600', 'h2: expires');
    is($h->{'x-server'}, 'server localhost', 'h2: add_header');

    $h = curl_head('-D', '-', '-o', '/dev/null', '--http2-prior-knowledge',
                   'http://127.0.0.1:' . $t->port(2) . '/own/missing.html');
    is($h->{':status'}, 404, 'h2 cleartext: 404');
    is($h->{'x-always'}, 'always 404', 'h2: add_header always');
}

$t->done;
