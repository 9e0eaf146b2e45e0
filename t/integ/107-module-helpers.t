#!/usr/bin/perl

# The module writer helpers of ABI 1.8 (issue 23, item 6), from a module
# (t/modules/mod_t_helpers.c) in a real server: arg() present, absent,
# empty, repeated, with '+' and %XX (raw, and decoded as a form field);
# cookie() with several cookies in one field, several Cookie fields over
# HTTP/1.1, and the crumbs of an HTTP/2 request (curl
# --http2-prior-knowledge on `listen ... http2`); unescape() with bad
# escapes ("%zz", a trailing '%') kept, "%00" a NUL inside a
# length-delimited result, '+' only with GN_UNESCAPE_PLUS; escape_json()
# of control bytes, quotes, backslashes and invalid UTF-8 (every answer
# is parsed with JSON::PP); escape_html(); {0, NULL} stays absent.

use strict;
use warnings;

use Test::More;
use JSON::PP;
use GnTest;

my $t = GnTest->new(timeout => 60);
$t->skip_unless_bin;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_TMODDIR} //= "$top/t/modules/.libs";
my $mod = "$ENV{GN_TMODDIR}/mod_t_helpers.so";
plan(skip_all => "$mod not built") unless -f $mod;

my $h2 = ($ENV{GN_HTTP2} // '') eq 'yes';
my $h2_listen = $h2 ? 'listen 127.0.0.1:%%PORT_1%% http2;' : '';

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%TMODDIR%%/mod_t_helpers.so;

server {
    listen 127.0.0.1:%%PORT_0%%;
    $h2_listen
    location /h/ {
        handler t_helpers;
    }
}
EOF_CONF

$t->run;

my $json = JSON::PP->new->utf8;

# GET path (raw target) over HTTP/1.1 with extra header lines; the
# answer's JSON, or undef (with a failed test) when it is not JSON.
sub get_json
{
    my ($path, $what, @headers) = @_;
    my $r = $t->http_get($path, headers => \@headers);

    is($r->{status}, 200, "$what: 200") or diag($r->{raw} // $r->{error});
    my $v = eval { $json->decode($r->{body}) };
    ok(defined $v, "$what: the answer is JSON")
        or diag("$@: " . ($r->{body} // ''));
    return $v // {};
}

sub arg_is
{
    my ($query, $name, $raw, $form, $what) = @_;
    my $v = get_json("/h/arg/$name?$query", $what);

    if (!defined $raw) {
        is($v->{found}, 0, "$what: absent");
        return;
    }
    is($v->{found}, 1, "$what: found");
    is($v->{raw}, $raw, "$what: raw value");
    is($v->{form}, $form, "$what: decoded as a form field") if defined $form;
    return $v;
}

# ---- arg ---------------------------------------------------------------------

arg_is('a=1&b=&c', 'a', '1', '1', 'arg a=1');
arg_is('a=1&b=&c', 'b', '', '', 'arg b= (empty)');
arg_is('a=1&b=&c', 'c', '', '', 'arg c alone (empty, present)');
arg_is('a=1&b=&c', 'd', undef, undef, 'arg d');
arg_is('a=1&a=2', 'a', '1', '1', 'arg repeated: the first');
arg_is('aa=1&a=2', 'a', '2', '2', 'arg a after aa: names match whole');
arg_is('A=1', 'a', undef, undef, 'arg names are case-sensitive');
arg_is('q=hello+world%21', 'q', 'hello+world%21', 'hello world!',
       "arg with '+' and %XX");
arg_is('q=a%2Bb', 'q', 'a%2Bb', 'a+b', "arg: %2B is a '+', not a space");
arg_is('q=%E2%82%AC', 'q', '%E2%82%AC', "\x{20ac}",
       'arg: UTF-8 percent-encoded');
{
    # the decoded URI gives the name "a b": the query's raw "a%20b" is
    # not it (names are compared raw, not decoded)
    my $v = get_json('/h/arg/a%20b?a%20b=1', 'arg: names are raw');
    is($v->{found}, 0, 'arg: a raw "a%20b" is not the name "a b"');
}
{
    my $v = arg_is('z=%00x', 'z', '%00x', "\0x", 'arg: %00 decoded');
    is($v->{form_hex}, '0078', 'arg: %00 is a NUL byte, then x');
}
{
    my $v = get_json('/h/arg/a', 'arg: no query at all');
    is($v->{found}, 0, 'arg: no query: absent');
}

# ---- cookie --------------------------------------------------------------

sub cookie_is
{
    my ($name, $want, $what, @headers) = @_;
    my $v = get_json("/h/cookie/$name", $what, @headers);

    if (!defined $want) {
        is($v->{found}, 0, "$what: absent");
    } else {
        is($v->{found}, 1, "$what: found");
        is($v->{value}, $want, "$what: value");
    }
}

cookie_is('b', '2', 'cookie: several in one field',
          'Cookie: a=1; b=2; c=3');
cookie_is('a', '1', 'cookie: the first of one field',
          'Cookie: a=1; b=2; c=3');
cookie_is('c', '3', 'cookie: from the second field',
          'Cookie: a=1; b=2', 'Cookie: c=3');
cookie_is('a', '1', 'cookie: the first occurrence wins across fields',
          'Cookie: a=1', 'cookie: a=9');
cookie_is('sid', 'x y', 'cookie: blanks around = trimmed',
          "Cookie: other=0;  sid = x y ;z=1");
cookie_is('q', '"quoted"', 'cookie: quotes kept', 'Cookie: q="quoted"');
cookie_is('e', '', 'cookie: empty value', 'Cookie: e=; f=1');
cookie_is('b', undef, 'cookie: ab= is not b', 'Cookie: ab=1');
cookie_is('A', undef, 'cookie: names are case-sensitive', 'Cookie: a=1');
cookie_is('a', undef, 'cookie: no Cookie field');

# ---- unescape ----------------------------------------------------------

sub unescape_is
{
    my ($query, $hex, $plus_hex, $what) = @_;
    my $v = get_json("/h/unescape?$query", $what);

    is($v->{hex}, $hex, "$what: decoded bytes");
    is($v->{len}, length($hex) / 2, "$what: length") if defined $hex;
    is($v->{plus_hex}, $plus_hex, "$what: with GN_UNESCAPE_PLUS")
        if defined $plus_hex;
}

sub hx { return unpack('H*', $_[0]); }

unescape_is('%41%62c', hx('Abc'), hx('Abc'), 'unescape %XX, both cases');
unescape_is('a+b', hx('a+b'), hx('a b'), "unescape '+': only with PLUS");
unescape_is('%zz%4', hx('%zz%4'), undef, 'unescape: bad escapes kept');
unescape_is('x%', hx('x%'), undef, "unescape: a trailing '%' kept");
unescape_is('%2', hx('%2'), undef, 'unescape: one hex digit kept');
unescape_is('a%00b%00', hx("a\0b\0"), undef,
            'unescape: %00 is a NUL in a length-delimited result');
unescape_is('%%41', hx('%A'), undef, "unescape: '%' then %41");
unescape_is('', '', '', 'unescape: empty');

# ---- escape_json ---------------------------------------------------------

sub json_is
{
    my ($query, $want, $what) = @_;
    my $r = $t->http_get("/h/json?$query");
    my $v = eval { $json->decode($r->{body}) };

    ok(defined $v, "$what: valid JSON") or diag("$@: $r->{body}");
    is($v->{s}, $want, "$what: the string") if defined $want;
    return $r->{body};
}

my $body = json_is('%01%1f%0a%0d%09%00', "\x01\x1f\n\r\t\0",
                   'escape_json: control bytes');
like($body, qr/\\u0001\\u001F\\u000A\\u000D\\u0009\\u0000/,
     'escape_json: control bytes as \\u00XX');
json_is('%22%5c/', '"\\/', 'escape_json: quote, backslash, slash');
$body = json_is('a%ffb%c3%28%e2%82', "a\x{fffd}b\x{fffd}(\x{fffd}\x{fffd}",
                'escape_json: invalid UTF-8');
like($body, qr/a\\ufffdb/, 'escape_json: a bad byte is \\ufffd');
json_is('%e2%82%ac%f0%9f%90%a6', "\x{20ac}\x{1f426}",
        'escape_json: well-formed UTF-8 as it is');
json_is('%ed%a0%80', "\x{fffd}" x 3, 'escape_json: a surrogate is invalid');
json_is('%c0%af', "\x{fffd}" x 2, 'escape_json: an overlong form is invalid');
json_is(join('', map { sprintf('%%%02x', $_) } 0 .. 255), undef,
        'escape_json: all 256 bytes');

# ---- escape_html -----------------------------------------------------------

{
    my $r = $t->http_get('/h/html?%3Ca%20href=%22x%22%3ETom%20%26%20'
                         . '%27J%27%3C/a%3E%ff');
    is($r->{headers}{'content-type'}, 'text/html; charset=utf-8',
       'escape_html: text/html');
    is($r->{body}, '&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;J&#39;'
                   . "&lt;/a&gt;\xff", 'escape_html: & < > " \' escaped');
}

# ---- absent stays absent -----------------------------------------------------

{
    my $v = get_json('/h/absent', 'absent');
    is_deeply($v, { unescape => 1, html => 1, json => 1 },
              'unescape, escape_html, escape_json: {0, NULL} in, out');
}

# ---- HTTP/2: cookie crumbs, args -------------------------------------------

SKIP: {
    skip 'built without HTTP/2', 8 unless $h2;
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 8 unless $out =~ /\bHTTP2\b/;

    my $base = 'http://127.0.0.1:' . $t->port(1);
    my $h2get = sub {
        my ($path, @args) = @_;
        my ($rc2, $o) = $t->curl('--http2-prior-knowledge', '-w',
                                 '\n%{http_version}', @args, "$base$path");
        my ($b, $ver) = ($o // '') =~ /\A(.*)\n(\S+)\z/s;
        is($ver, '2', "h2: $path: over HTTP/2");
        return eval { $json->decode($b // '') } // {};
    };

    # curl sends each -H Cookie as its own field: HPACK crumbs
    my $v = $h2get->('/h/cookie/c', '-H', 'Cookie: a=1; b=2',
                     '-H', 'Cookie: c=3');
    is($v->{value}, '3', 'h2: cookie from the second crumb');
    $v = $h2get->('/h/cookie/b', '-H', 'Cookie: a=1; b=2',
                  '-H', 'Cookie: c=3');
    is($v->{value}, '2', 'h2: cookie from the first crumb');
    $v = $h2get->('/h/arg/q?x=1&q=a+b%21');
    is($v->{raw}, 'a+b%21', 'h2: arg raw');
    is($v->{form}, 'a b!', 'h2: arg decoded');
}

$t->done;
