#!/usr/bin/perl

# USR1 reopens the logs: after renaming access.log, the next request is
# logged in a new access.log.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
shutdown_timeout 5s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types { text/html html; }
    access_log logs/access.log;
}
EOF_CONF

$t->write_file('html/index.html', "index\n");
$t->write_file('html/after.html', "after\n");

$t->run;
my $m = $t->master_pid;
my @kids = $t->wait_children(2, 5);
my $dir = $t->testdir;

my $r = $t->http_get('/index.html');
is($r->{status}, 200, 'request before the rename');
ok($t->wait_log(qr{"GET /index\.html HTTP/1\.1" 200 }, 3,
                'logs/access.log'),
   'logged in access.log');

ok(rename("$dir/logs/access.log", "$dir/logs/access.log.1"),
   'access.log renamed');
ok($t->signal('USR1'), 'USR1');

# Wait for the master's notice, then (up to 1 s) for the children's, if
# they log one; give them a moment either way.
ok($t->wait_log(qr/\[notice\] $m#-: reopening logs/, 5),
   '"reopening logs" notice from the master');
my $end = time() + GnTest::slow(1);
while (time() < $end) {
    my $log = $t->error_log;
    last if @kids == grep { $log =~ /\[notice\] $_#\d+: reopening logs/ }
                     @kids;
    sleep(0.05);
}
sleep(0.2);

$r = $t->http_get('/after.html');
is($r->{status}, 200, 'request after USR1');

ok($t->wait_log(qr/./, 3, 'logs/access.log'), 'new access.log exists');
ok($t->wait_log(qr{"GET /after\.html HTTP/1\.1" 200 }, 3,
                'logs/access.log'),
   'new access.log has the request');
my $new = $t->read_file('logs/access.log') // '';
unlike($new, qr{/index\.html}, 'new access.log has only new lines');
my $old = $t->read_file('logs/access.log.1') // '';
like($old, qr{/index\.html}, 'renamed log keeps the old line');
unlike($old, qr{/after\.html}, 'renamed log did not get the new line');

# The error log itself is reopened too.
ok(rename("$dir/logs/error.log", "$dir/logs/error.log.1"),
   'error.log renamed');
ok($t->signal('USR1'), 'USR1 again');
my $end2 = time() + GnTest::slow(5);
sleep(0.05) while !-e "$dir/logs/error.log" && time() < $end2;
ok(-e "$dir/logs/error.log", 'a new error.log is opened');
ok($t->wait_log(qr/reopening logs/, 3, 'logs/error.log.1')
   || $t->wait_log(qr/reopening logs/, 3),
   'the second reopen is logged');

$t->done;
