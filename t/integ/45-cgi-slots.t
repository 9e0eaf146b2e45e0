#!/usr/bin/perl

# mod_cgi, cgi_max_processes: a script's slot is free once its response
# has been sent, not only when the launcher reports its exit (that report
# can come later on a busy machine or under valgrind: 42-cgi.t got a 503
# for a request made after the previous one had been answered).  With
# one slot, 200 requests one after another all get their script; two at
# once still get a 503.
#
# Modules: GN_MODDIR (default modules/.libs of the build tree).

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use GnTest;

my $t = GnTest->new(timeout => 60);

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => "$ENV{GN_MODDIR}/mod_cgi.so not built")
    unless -f "$ENV{GN_MODDIR}/mod_cgi.so";

my $dir = $t->testdir;
my $root = $< == 0;
plan(skip_all => 'running as root but there is no user "nobody"')
    if $root && !defined getpwnam('nobody');

mkdir "$dir/html/cgi" or die "mkdir cgi: $!";
for my $f ('status.cgi', 'hang.cgi') {
    copy("$t->{srcdir}/t/cgi/$f", "$dir/html/cgi/$f") or die "copy $f: $!";
    chmod(0755, "$dir/html/cgi/$f");
}
chmod(0755, $dir, "$dir/html", "$dir/html/cgi");

my $cgi_user = $root ? 'nobody' : '%%USER%%';

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
load_module %%MODDIR%%/mod_cgi.so;
cgi_max_processes 1;
cgi_user $cgi_user;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;

    location /cgi/ {
        handler cgi;
    }
}
EOF_CONF

$t->run;

my %st;
$st{$t->http_get('/cgi/status.cgi')->{status} // 0}++ for 1 .. 200;
is(join(' ', map { "$_:$st{$_}" } sort keys %st), '404:200',
   'one slot: 200 requests in a row all run their script')
    or diag('503: the slot was still held by the previous script');

# the limit still holds while a script runs
my $off = length $t->error_log;
my $s = $t->connect;
$t->write_all($s, $t->request('/cgi/hang.cgi'));
ok($t->wait_log(qr/hang\.cgi" stderr: pid \d+/, 5, undef, $off),
   'hang.cgi runs');
is($t->http_get('/cgi/status.cgi')->{status}, 503,
   'one slot: a second script at the same time gets 503');
close $s;

$t->done;
