#!/usr/bin/perl

# server_tokens: off by default, so no version in the Server header, on
# generated error pages, in SERVER_SOFTWARE or on the status page; on
# shows it everywhere.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;

my $moddir = $ENV{GN_MODDIR} // '';
plan skip_all => 'mod_status not built' unless -f "$moddir/mod_status.so";

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
load_module %%MODDIR%%/mod_status.so;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types { text/plain txt; }
    location /status {
        handler status;
    }
}

server {
    listen 127.0.0.1:%%PORT_1%%;
    server_tokens on;
    types { text/plain txt; }
    location /status {
        handler status;
    }
}
EOF_CONF

$t->write_file('html/a.txt', "a\n");
chmod 0644, $t->testdir . '/html/a.txt';

$t->run;

my $version = qr{gannet/\d+\.\d+\.\d+};

for my $case ([0, 'off (default)'], [1, 'on']) {
    my ($p, $tag) = @$case;
    my $port = $t->port($p);
    my $r = $t->http_get('/a.txt', port => $port);
    my $e = $t->http_get('/missing.txt', port => $port);
    my $s = $t->http_get('/status?format=json', port => $port);
    my $h = $t->http_get('/status', port => $port);

    is($r->{status}, 200, "$tag: file 200");
    is($e->{status}, 404, "$tag: error 404");
    is($s->{status}, 200, "$tag: status 200");
    if ($p == 0) {
        is($r->{headers}{server}, 'gannet', "$tag: Server: gannet");
        is($e->{headers}{server}, 'gannet', "$tag: Server on the error");
        unlike($e->{body}, $version, "$tag: no version in the error page");
        like($s->{body}, qr/"version":"gannet"/, "$tag: status JSON");
        unlike($s->{body} . $h->{body}, $version,
               "$tag: no version on the status pages");
    } else {
        like($r->{headers}{server}, qr/^$version$/, "$tag: Server version");
        like($e->{headers}{server}, qr/^$version$/,
             "$tag: Server version on the error");
        unlike($e->{body}, $version, "$tag: error page body stays plain");
        like($s->{body}, qr/"version":"$version"/, "$tag: status JSON");
        like($h->{body}, $version, "$tag: status HTML");
    }
}

$t->done;
