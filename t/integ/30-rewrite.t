#!/usr/bin/perl

# rewrite (captures, named groups, flags, query rules, the cycle cap),
# return, and location precedence with regexes as nginx documents it:
# exact, then the longest prefix when it is ^~, then regexes in order,
# else the longest prefix. A catastrophic pattern answers 500 quickly
# and the child keeps serving. A bad pattern is a config error.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
error_log logs/error.log info;

server {
    listen 127.0.0.1:%%PORT_0%%;
    server_name rw.test;

    rewrite ^/old/(\w+)/(\d+)$ /new/$2?name=$1 last;
    rewrite ^/keep/(.*)$ /new/$1 last;
    rewrite ^/drop/(.*)$ /new/$1? last;
    rewrite ^/perm(/.*)$ $1 permanent;
    rewrite ^/temp(/.*)$ $1 redirect;
    rewrite ^/abs/(.*)$ https://example.test/$1;

    location / { }
    location /new/ { return 200 "new uri=$uri args=$args"; }
    location /loop { rewrite ^/loop(.*)$ /loop$1x last; }
    location /brk/ {
        rewrite ^/brk/(.*)$ /data/$1 break;
        return 200 "not reached";
    }
    location /chain/ {
        rewrite ^/chain/a$ /chain/b;
        rewrite ^/chain/b$ /new/chained last;
    }
    location = /exact { return 200 "exact"; }
    location /docs/ { return 200 "prefix docs"; }
    location ^~ /static/ { return 200 "noregex static"; }
    location ~ \.(gif|jpg)$ { return 200 "regex image $1"; }
    location ~* ^/upper/(?<word>[a-z]+)$ { return 200 "word=$word"; }
    location ~ ^/first/ { return 200 "first regex"; }
    location ~ ^/first/second { return 200 "second regex"; }
    location ~ ^/bomb/(a+)+$ { return 200 "never"; }
    location /go { return 301 https://example.test/elsewhere; }
    location /plain { return https://example.test/plain; }
    location /gone { return 410; }
    location /teapot { return 418 "short and stout"; }
    location /tohttps/ { return 301 https://$host$request_uri; }
    location /hostis/ { return 200 "host=$host scheme=$scheme"; }
}
EOF_CONF

$t->write_file('html/data/x.txt', "data x\n");
$t->write_file('html/index.html', "index\n");
$t->run;

sub body_of { my $r = $t->http_get($_[0]); return ($r->{status}, $r->{body}, $r); }

my ($s, $b, $r);

($s, $b) = body_of('/old/hats/7');
is("$s $b", '200 new uri=/new/7 args=name=hats', 'rewrite with captures and a new query');
($s, $b) = body_of('/old/hats/7?x=1');
is($b, 'new uri=/new/7 args=name=hats&x=1', 'the old query is appended after the new one');
($s, $b) = body_of('/keep/a?x=1');
is($b, 'new uri=/new/a args=x=1', 'no "?" in the replacement: the query is kept');
($s, $b) = body_of('/drop/a?x=1');
is($b, 'new uri=/new/a args=', 'a trailing "?" drops the query');

($s, $b, $r) = body_of('/perm/p?q=1');
is($s, 301, 'permanent: 301');
is($r->{headers}{location}, '/p?q=1', 'permanent: Location with the query');
($s, $b, $r) = body_of('/temp/t');
is($s, 302, 'redirect: 302');
is($r->{headers}{location}, '/t', 'redirect: Location');
($s, $b, $r) = body_of('/abs/x?y=2');
is($s, 302, 'an absolute replacement redirects');
is($r->{headers}{location}, 'https://example.test/x?y=2', 'absolute Location keeps the query');

my $from = length $t->error_log;
($s) = body_of('/loop');
is($s, 500, 'a rewrite loop is capped: 500');
ok($t->wait_log(qr/rewrite or internal redirection cycle/, 3, undef, $from),
   'the loop is logged');

($s, $b) = body_of('/brk/x.txt');
is("$s $b", "200 data x\n", 'break: the new URI is served in this location');
($s, $b) = body_of('/chain/a');
is($b, 'new uri=/new/chained args=', 'rewrites without a flag chain, then a new search');

# location precedence (nginx's documented order)
is((body_of('/exact'))[1], 'exact', 'exact match');
is((body_of('/docs/a.gif'))[1], 'regex image gif',
   'a regex wins over a plain prefix');
is((body_of('/docs/a.txt'))[1], 'prefix docs', 'else the longest prefix');
is((body_of('/static/a.gif'))[1], 'noregex static', '^~ stops the regex search');
is((body_of('/first/second'))[1], 'first regex', 'regexes are tried in order');
is((body_of('/UPPER/abc'))[1], 'word=abc', '~* is case-insensitive, named capture');
is((body_of('/upper/ABC'))[0], 200, '~* matches either case');

# return
($s, $b, $r) = body_of('/go');
is("$s " . ($r->{headers}{location} // ''), '301 https://example.test/elsewhere',
   'return 301 URL');
($s, $b, $r) = body_of('/plain');
is("$s " . ($r->{headers}{location} // ''), '302 https://example.test/plain',
   'return URL: 302');
is((body_of('/gone'))[0], 410, 'return 410');
($s, $b) = body_of('/teapot');
is("$s $b", '418 short and stout', 'return CODE TEXT');

# $host as nginx's: lower case, no port, the server's name when none was
# given -- the https redirect idiom must not carry the plain port along
$r = $t->http("GET /tohttps/x?y=1 HTTP/1.1\r\nHost: Example.TEST:8080\r\n"
              . "Connection: close\r\n\r\n");
is("$r->{status} " . ($r->{headers}{location} // ''),
   '301 https://example.test/tohttps/x?y=1',
   'return 301 https://$host$request_uri: no port, lower case');
$r = $t->http("GET /hostis/ HTTP/1.0\r\n\r\n");
is($r->{body}, 'host=rw.test scheme=http',
   '$host without a Host header: the server\'s name');
$r = $t->http("GET /hostis/ HTTP/1.1\r\nHost: [::1]:8080\r\n"
              . "Connection: close\r\n\r\n");
is($r->{body}, 'host=[::1] scheme=http', '$host of an IPv6 literal');

# a catastrophic pattern: 500 quickly, the child lives on
my $kids = join(',', $t->children);
$from = length $t->error_log;
($s) = body_of('/bomb/' . ('a' x 40) . 'b');
is($s, 500, 'catastrophic backtracking: 500');
ok($t->wait_log(qr/match limit exceeded/, 3, undef, $from),
   'logged: stopped by the match limit, not run to the end');
is((body_of('/index.html'))[0], 200, 'the child keeps serving');
is(join(',', $t->children), $kids, 'same child');

# configuration errors
my $bad = $t->testdir . '/bad.conf';
open(my $fh, '>', $bad) or die;
print $fh "server {\n    listen 127.0.0.1:1;\n    rewrite ^(a /x;\n}\n";
close $fh;
my ($rc, undef, $err) = $t->gannet('-t', '-p', $t->testdir . '/', '-c', $bad);
is($rc, 1, 'a bad pattern: gannet -t fails');
like($err, qr/pcre2_compile\(\) failed: missing closing parenthesis at offset 3 in "\^\(a" in \Q$bad\E:3/,
     'the message names PCRE2\'s reason, the offset, file and line');

open($fh, '>', $bad) or die;
print $fh "server {\n    listen 127.0.0.1:1;\n    rewrite ^/(a) /\$2;\n}\n";
close $fh;
($rc, undef, $err) = $t->gannet('-t', '-p', $t->testdir . '/', '-c', $bad);
like($err, qr/"\$2" refers to a capture the pattern does not have.* in \Q$bad\E:3/,
     'a reference to a missing capture is a config error');

$t->done;
