#!/usr/bin/perl

# Regression (issue 3): answers given before the body rules ran (501 for
# an unknown method, 405 for CONNECT, OPTIONS *, 400 for a bad path) left
# the announced body in the buffer, where it was parsed as the next
# request: a smuggled request. Now any answer to a request whose body was
# not read closes the connection.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;

server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF_CONF

$t->write_file('html/a.txt', "public\n");
$t->write_file('html/secret.txt', "smuggled\n");
$t->run;

my $inner = "GET /secret.txt HTTP/1.1\r\nHost: localhost\r\n\r\n";
my $len = length $inner;

for my $case (['FOO /a.txt', 501], ['CONNECT localhost:80', 405],
              ['OPTIONS *', 200], ['GET /%00', 400])
{
    my ($line, $status) = @$case;
    my $req = "$line HTTP/1.1\r\nHost: localhost\r\n"
              . "Content-Length: $len\r\n\r\n$inner";
    my ($bytes, $closed) = $t->http_raw($req, 5);
    like($bytes, qr{^HTTP/1\.1 $status }, "$line with a body: $status");
    unlike($bytes, qr/smuggled/, "$line: the body is not run as a request");
    ok($closed, "$line: connection closed after the answer");
}

# the same with a chunked body
my $chunked = sprintf("%x\r\n%s\r\n0\r\n\r\n", $len, $inner);
my ($bytes, $closed) = $t->http_raw("FOO /a.txt HTTP/1.1\r\nHost: localhost\r\n"
                                    . "Transfer-Encoding: chunked\r\n\r\n"
                                    . $chunked, 5);
like($bytes, qr{^HTTP/1\.1 501 }, 'chunked body, unknown method: 501');
unlike($bytes, qr/smuggled/, 'chunked: the body is not run as a request');

$t->done;
