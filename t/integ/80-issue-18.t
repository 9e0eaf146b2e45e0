#!/usr/bin/perl

# Children do not outlive a dead master (issue 18, item 10).  After
# kill -9 of the master its children stop accepting at once (the kernel
# sends them the graceful stop: PR_SET_PDEATHSIG), answer the request that
# was on its way with "Connection: close", exit once their connections are
# done, and the next start binds the same port.  Without it the children
# kept serving, orphaned, and the next start failed to bind.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new(timeout => 90);

$t->write_conf(<<'EOF');
children 2;
user %%USER%%;
shutdown_timeout 10s;
types { text/html html; }

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
}
EOF
$t->write_file('html/index.html', "hello\n");
$t->run;

my @kids = $t->wait_children(2, 10);
is(scalar @kids, 2, 'two children');

$t->expect_log(qr/\[alert\] \d+#\d+: gracefully shutting down: the master process is gone/);

# a request on its way when the master dies: on a connection a child
# has accepted (a first request answered, kept alive), half of a second
# head now
my $s = $t->connect;
my $buf = '';
$t->write_all($s, "GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n");
is($t->read_response($s, \$buf)->{status}, 200,
   'a kept-alive connection before the kill');
$t->write_all($s, "GET /index.html HTTP/1.1\r\nHost: localhost\r\n");

my $master = $t->master_pid;
ok(kill('KILL', $master), "kill -9 the master ($master)");
ok($t->wait_exit(5), 'the master is gone');

# the children stop accepting: once both closed their listeners the port
# refuses connections
my $end = time() + GnTest::slow(5);
my $refused = 0;
while (time() < $end) {
    my $c = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $t->port(0), Proto => 'tcp');
    if (!$c) {
        $refused = 1;
        last;
    }
    close $c;
    sleep(0.05);
}
ok($refused, 'the children stopped accepting');

# the request on its way is answered, and the connection closed after it
$t->write_all($s, "\r\n");
my $r = $t->read_response($s, \$buf);
is($r->{status}, 200, 'the request on its way is answered');
is(lc($r->{headers}{connection} // ''), 'close',
   'with Connection: close');
close $s;

# and the children exit
$end = time() + GnTest::slow(10);
my @left;
do {
    @left = grep { $t->alive($_) } @kids;
    sleep(0.05) if @left;
} while (@left && time() < $end);
is(scalar @left, 0, 'the orphaned children exited');
like($t->error_log, qr/the master process is gone/,
     'the children say why they stop');

# the next start binds the port
ok(eval { $t->run; 1 }, 'the next start binds the same port')
    or diag($@);
is($t->http_get('/index.html')->{status}, 200, 'and serves');

$t->done;
