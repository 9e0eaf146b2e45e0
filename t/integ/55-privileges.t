#!/usr/bin/perl

# A master started as root runs its children as `user`: real, effective,
# saved and file-system ids all dropped, supplementary groups reset, and
# the children still serve files (readable by that user) and write logs
# (opened by the master).

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use GnTest;

plan skip_all => 'needs root' if $> != 0;
my @nobody = getpwnam('nobody');
plan skip_all => 'no user "nobody"' if !@nobody;
my ($uid, $gid) = @nobody[2, 3];

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 2;
user nobody;
file_cache_valid 1s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types { text/html html; }
}
EOF_CONF

$t->write_file('html/index.html', "dropped\n");
# the temp dir is private (0700): let the children's user traverse it
chmod 0755, $t->testdir, $t->testdir . '/html';
chmod 0644, $t->testdir . '/html/index.html';

$t->run;

my @kids = $t->wait_children(2, 5);
is(scalar @kids, 2, 'two children');

sub ids {
    my ($pid, $what) = @_;
    open(my $fh, '<', "/proc/$pid/status") or return '';
    while (<$fh>) {
        return $1 if /^$what:\s*(.*?)\s*$/;
    }
    return '';
}

like(ids($t->master_pid, 'Uid'), qr/^0\s/, 'the master keeps root');
for my $k (@kids) {
    # a child drops privileges early in its start-up; a slow one (under
    # valgrind) may still be on its way when it is first seen
    my $end = time() + GnTest::slow(1);
    sleep(0.05) while ids($k, 'Uid') =~ /^0\s/ && time() < $end;
    is(ids($k, 'Uid'), join("\t", ($uid) x 4), "child $k: every uid is nobody's");
    is(ids($k, 'Gid'), join("\t", ($gid) x 4), "child $k: every gid is nobody's");
    my $groups = ids($k, 'Groups');
    unlike($groups, qr/(^|\s)0(\s|$)/, "child $k: not in group root");
}

my $r = $t->http_get('/index.html');
is($r->{status}, 200, 'a child running as nobody serves the file');
is($r->{body}, "dropped\n", 'body');

chmod 0600, $t->testdir . '/html/index.html';
sleep 2;    # past file_cache_valid: the cache re-checks the file
$r = $t->http_get('/index.html');
is($r->{status}, 403, 'a file nobody cannot read: 403');

like($t->read_file('logs/access.log') // '', qr{"GET /index.html HTTP/1.1" 200 },
     'the access log (opened by the master) is written by the children');

$t->done;
