#!/usr/bin/perl

# Start, pid file, master + N children, start/exit notices, a GET, stop.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
shutdown_timeout 5s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types { text/html html; text/plain txt; }
}
EOF_CONF

my $index = "<html><body>gannet smoke test</body></html>\n";
$t->write_file('html/index.html', $index);

$t->run;

my $master = $t->master_pid;
my $pidf = $t->read_file('logs/gannet.pid');

is($pidf, "$master\n", 'pid file holds the master pid');
ok(kill(0, $master), 'master is alive');

my @kids = $t->wait_children(2, 5);
is(scalar @kids, 2, 'exactly 2 children');

ok($t->wait_log(qr{\[notice\] $master#-: gannet/\d+\.\d+\.\d+ started,}
                . qr{ 2 children}, 5),
   'error log has the "started, 2 children" notice');

for my $k (@kids) {
    ok($t->wait_log(qr/\[notice\] \d+#[-\d]+: started child $k \(slot \d+,/
                    . qr/ generation \d+\)/, 5),
       "error log has the \"started child $k\" notice");
}

my $r = $t->http_get('/index.html');
is($r->{status}, 200, 'GET /index.html: 200');
is($r->{body}, $index, 'GET /index.html: body');
is($r->{headers}{'content-length'}, length $index, 'Content-Length');
like($r->{headers}{'content-type'} // '', qr{^text/html\b}, 'Content-Type');

ok($t->stop, 'graceful stop (QUIT) exits');
ok(!-e $t->pid_file, 'pid file removed after stop');
is_deeply([$t->leftovers], [], 'no child remains after stop');
ok(!grep({ $t->alive($_) } @kids), 'the children are gone');
like($t->error_log, qr/\[notice\] $master#-: exiting/,
     'master "exiting" notice');

# The scoreboard: each child's counters, reported by the master when the
# child exits, add up to what this test sent.
my ($reqs, $ok2xx, $out) = (0, 0, 0);
for my $k (@kids) {
    if ($t->error_log =~ /child $k served (\d+) requests on \d+ connections, (\d+) bytes in, (\d+) out \(2xx (\d+)/) {
        $reqs += $1;
        $out += $3;
        $ok2xx += $4;
    } else {
        fail("scoreboard counters of child $k reported");
    }
}
is($reqs, 1, 'scoreboard: 1 request counted over both children');
is($ok2xx, 1, 'scoreboard: 1 response in 2xx');
ok($out >= length $index, "scoreboard: bytes out ($out) cover the body");

$t->done;
