#!/usr/bin/perl

# log_not_found (nginx's): a static file that is not there is logged at
# [error] with its path and errno, unless `log_not_found off` in the
# location that serves it; the 404 is the same either way. (Issue 19's
# example of a plain directive: one field, one row, one use.)

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
    root html;

    location = /favicon.ico {
        log_not_found off;
    }
    location /quiet/ {
        log_not_found off;
    }
}
EOF_CONF

$t->write_file('html/index.html', "hi\n");
$t->run;

my $root = $t->testdir . '/html';

is($t->http_get('/missing.html')->{status}, 404, 'missing file: 404');
is($t->http_get('/favicon.ico')->{status}, 404, 'log_not_found off: 404');
is($t->http_get('/quiet/gone.txt')->{status}, 404,
   'log_not_found off (prefix location): 404');
is($t->http_get('/dir/missing.html')->{status}, 404,
   'missing directory: 404');

my $log = $t->error_log;
like($log, qr{\[error\] .*open\(\) of "\Q$root\E/missing\.html" failed.*No such file or directory},
     'on (the default): [error] line with the path and errno');
like($log, qr{\[error\] .*"\Q$root\E/dir/missing\.html" failed},
     'on: a missing directory too');
unlike($log, qr{favicon\.ico}, 'off: no line for /favicon.ico');
unlike($log, qr{gone\.txt}, 'off in a prefix location: no line');

$t->done;
