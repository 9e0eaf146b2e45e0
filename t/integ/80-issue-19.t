#!/usr/bin/perl

# SIGUSR2 in a child does nothing (issue 19, item 4): a child sent USR2
# keeps serving and is not replaced, and gannet -s knows only the names
# of its one signal table. (The master's USR2 is the binary upgrade of
# issue 21: t/87; before it, the master fetched USR2 and said it ignored
# it, where it had left it pending for good.)

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use POSIX ();
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
shutdown_timeout 5s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types { text/html html; }
}
EOF_CONF

$t->write_file('html/index.html', "index\n");

$t->run;
my $m = $t->master_pid;
my @kids = $t->wait_children(2, 5);
is(scalar @kids, 2, 'two children');

is($t->http_get('/index.html')->{status}, 200, 'served before USR2');

# a child the signal reaches directly ignores it
ok(kill('USR2', $kids[0]), 'USR2 to a child');
sleep(0.3);
ok($t->alive($kids[0]), 'the child lives');
is(join(',', $t->children), join(',', @kids), 'no child replaced');
for (1 .. 4) {
    is($t->http_get('/index.html')->{status}, 200, "served ($_)");
}

# `gannet -s` knows only the table's names (and status)
my ($rc, undef, $err) = $t->gannet('-s', 'usr2', '-p', $t->testdir . '/',
                                   '-c', $t->conf_path);
is($rc, 1, 'gannet -s usr2: refused');
like($err,
     qr/invalid signal "usr2", expected stop, quit, reload, reopen, upgrade/,
     'the message lists the names');
($rc) = $t->gannet('-s', 'status', '-p', $t->testdir . '/',
                   '-c', $t->conf_path);
is($rc, 0, 'gannet -s status: running');

$t->done;
