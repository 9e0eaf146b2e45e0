#!/usr/bin/perl

# SIGUSR2 does nothing, on purpose (issue 19, item 4): the master fetches
# it from its one signal table, says it ignored it, and keeps serving with
# the same children; a child sent USR2 keeps serving too.  Before, the
# master blocked USR2 but never fetched it, so the signal stayed pending
# for the life of the process (ShdPnd in /proc), silently.

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

# the signals pending for the whole process, as a bit mask
sub pending
{
    my ($pid) = @_;

    open(my $fh, '<', "/proc/$pid/status") or return undef;
    while (my $l = <$fh>) {
        return hex($1) if $l =~ /^ShdPnd:\s+([0-9a-f]+)/;
    }
    return undef;
}

my $usr2 = 1 << (POSIX::SIGUSR2() - 1);

ok($t->signal('USR2'), 'USR2 to the master');
ok($t->wait_log(qr/\[notice\] $m#-: SIGUSR2 ignored/, 5),
   'the master says it ignored USR2');
ok($t->alive($m), 'the master lives');
my $p = pending($m);
ok(defined $p && !($p & $usr2), 'USR2 is not left pending')
    or diag(sprintf('ShdPnd %x', $p // 0));
is(join(',', $t->wait_children(2, 2)), join(',', @kids),
   'the same children');
is($t->http_get('/index.html')->{status}, 200, 'served after USR2');

# a child the signal reaches directly ignores it too
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
like($err, qr/invalid signal "usr2", expected stop, quit, reload, reopen or status/,
     'the message lists the names');
($rc) = $t->gannet('-s', 'status', '-p', $t->testdir . '/',
                   '-c', $t->conf_path);
is($rc, 0, 'gannet -s status: running');

$t->done;
