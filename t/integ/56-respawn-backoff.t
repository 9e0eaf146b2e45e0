#!/usr/bin/perl

# A child that keeps dying right after it starts is respawned with a
# growing delay (so a crash loop does not burn the machine), and one that
# lived normally is replaced at once.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(sleep);
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;

server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF_CONF

$t->write_file('html/index.html', "ok\n");
$t->expect_log(qr/\[alert\] .*exited on signal 9/);
$t->expect_log(qr/\[alert\] .*died \d+ times in a row/);
$t->run;

my ($child) = $t->wait_children(1, 5);
ok($child, 'one child');

# kill each new child as soon as it appears: every death is "quick"
my @seen = ($child);
for my $i (1 .. 4) {
    kill 'KILL', $seen[-1];
    my ($next) = $t->wait_children(1, 10, not => [@seen]);
    ok($next, "child respawned after quick death $i") or last;
    push @seen, $next;
}

my $log = $t->error_log;
like($log, qr/died 2 times in a row, respawning in 100 ms/,
     'second quick death: 100 ms back-off');
like($log, qr/died 3 times in a row, respawning in 200 ms/,
     'third: 200 ms');
like($log, qr/died 4 times in a row, respawning in 400 ms/,
     'fourth: 400 ms');

# a child that lived past the first second is replaced at once
sleep(1.5);
my $from = length $t->error_log;
kill 'KILL', $seen[-1];
my ($again) = $t->wait_children(1, 5, not => [@seen]);
ok($again, 'respawned after a normal life');
unlike(substr($t->error_log, $from), qr/times in a row/,
       'no back-off after a normal life (respawned at once)');

is($t->http_get('/index.html')->{status}, 200, 'still serving');

$t->done;
