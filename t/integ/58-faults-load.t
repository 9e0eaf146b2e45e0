#!/usr/bin/perl

# Faults under load (issue 8, item 4), part 1, with wrk as the load:
#
#  1. a child killed with SIGKILL under load is replaced (a new pid that
#     serves) and only the connections the killed child held fail;
#  2. 20 reloads (SIGHUP) under load fail no request: wrk reports no
#     socket error and no non-2xx response;
#  3. a graceful stop (SIGQUIT) under load completes every in-flight
#     response byte for byte (several slow readers of 8 MiB), then the
#     master exits 0 and no process remains;
#  4. an access log on a full disk (/dev/full: every write fails with
#     ENOSPC) does not stop requests, is reported once per child, not per
#     request, and writes resume after the log is reopened on a good file.
#
# Part 2 (descriptors, slowloris, killed lock holders) is 59-faults-fd.t.
# wrk (Debian package wrk) is required for 1, 2 and 4 and optional for 3;
# without it those parts are skipped, saying so.
#
# GN_LONG_TESTS=1 makes the runs heavier and longer (GnLoad.pm): more
# connections and time under load, 100 reloads instead of 20, more slow
# readers. The default run takes about 30 s.
#
# No timing assertions: the only time bound checked is the one the promise
# itself states ("replaced within a second"), with a generous margin
# (3 s) because the machine is shared and noisy.

use strict;
use warnings;

use Test::More;
use IO::Select;
use JSON::PP;
use POSIX qw(:errno_h);
use Time::HiRes qw(time sleep);
use GnTest;
use GnLoad;

my $t = GnTest->new(timeout => GnLoad::pick(110, 900));
my ($wrk, $nowrk, $moddir) = GnLoad::prepare($t);
my $status = -f "$moddir/mod_status.so";

my $index = "<html>faults under load</html>\n" x 8;
$t->write_file('html/index.html', $index);

sub conf
{
    my (%o) = @_;
    my $mod = $status ? 'load_module %%MODDIR%%/mod_status.so;' : '';
    my $loc = $status ? 'location = /status { handler status; }' : '';
    my $al = $o{access_log} // 'access_log off;';
    my $n = $o{children} // 2;
    my $st = $o{shutdown_timeout} // '10s';

    $t->write_conf(<<"EOF_CONF");
$mod
children $n;
user %%USER%%;
shutdown_timeout $st;
error_log logs/error.log info;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
    keepalive_timeout 60s;
    send_timeout 60s;
    $al
    types { text/html html; application/octet-stream bin; }
    $loc
}
EOF_CONF
}

# Requests served by each child pid, from the scoreboard (mod_status).
sub served_by
{
    my $r = $t->http_get('/status?format=json', timeout => 5);
    my $j = eval { decode_json($r->{body} // '') };
    my %n;

    return {} unless $j && ref $j->{children} eq 'ARRAY';
    $n{$_->{pid}} = $_->{requests} for @{$j->{children}};
    return \%n;
}

# A fresh connection, one GET, the whole body: true if it was a 200.
sub probe_ok
{
    my $r = $t->http_get('/index.html', timeout => 10);
    return ($r->{status} // 0) == 200 && $r->{body} eq $index;
}


# ---- 1. SIGKILL one child under load ---------------------------------------

SKIP: {
    skip $nowrk, 13 unless $wrk;

    conf();
    $t->run;
    my @kids = $t->wait_children(2, 5);
    is(scalar @kids, 2, 'kill: 2 children');
    $t->expect_log(qr/\[alert\] \d+#-: child \d+ exited on signal 9\b/);

    my $conns = GnLoad::pick(50, 200);
    my $w = GnLoad::wrk_start($t, path => '/index.html',
                              connections => $conns);
    sleep(GnLoad::pick(1.5, 10));

    # the victim: the child holding more of wrk's connections
    my %c = map { $_ => GnLoad::tcp_conns($_, $t->port(0)) } @kids;
    my ($victim, $other) = sort { $c{$b} <=> $c{$a} } @kids;
    my $before = $status ? served_by()->{$other} // 0 : 0;

    # Stop the victim first, so that the count of the connections it
    # holds cannot change before it dies (a stopped process accepts
    # nothing; the listening socket is shared, so its queue is not lost).
    kill('STOP', $victim);
    sleep(0.1);
    my $held = GnLoad::tcp_conns($victim, $t->port(0));
    ok($held > 0 && $held <= $conns,
       "kill: the victim holds $held of the $conns wrk connections");
    ok(kill('KILL', $victim), "kill: SIGKILL child $victim");
    my $killed = time();

    # "Replaced within a second": checked as "a new child pid appears
    # within 3 s", a generous margin on a shared machine.
    my @now;
    my $replaced = 0;
    while (time() - $killed < 3) {
        @now = $t->children;
        if (@now == 2 && !grep { $_ == $victim } @now) {
            $replaced = 1;
            last;
        }
        sleep(0.02);
    }
    ok($replaced, 'kill: a new child replaced the killed one within 3 s')
        or diag("children: @now");
    my ($new) = grep { $_ != $other && $_ != $victim } @now;

    # Fresh connections during and after the kill never fail: only the
    # killed child's own connections may.
    my ($sent, $good) = (0, 0);
    my $end = time() + GnLoad::pick(2, 20);
    while (time() < $end) {
        $sent++;
        $good++ if probe_ok();
    }
    is($good, $sent, "kill: $sent fresh requests after the kill all served");

    # the new child serves (the scoreboard counts its requests; bounded
    # wait, wrk and the probes keep coming meanwhile)
    SKIP: {
        skip 'mod_status.so not built', 2 unless $status;
        my $n = 0;
        $end = time() + GnTest::slow(10);
        while (defined $new && time() < $end) {
            $n = served_by()->{$new} // 0;
            last if $n > 0;
            probe_ok();
        }
        ok($n > 0, "kill: the new child $new serves ($n requests)");
        my $after = served_by()->{$other} // 0;
        ok($after > $before, "kill: the other child $other served"
                             . " throughout ($before -> $after)");
    }

    my $r = GnLoad::wrk_stop($t, $w);
    ok($r->{exited} && defined $r->{requests} && $r->{requests} > 0,
       'kill: wrk ran (' . GnLoad::wrk_text($r) . ')')
        or diag($r->{raw});
    # each wrk connection has at most one request in flight, so the
    # killed child's connections can fail at most one request each
    ok($r->{errors} <= $held,
       "kill: wrk errors ($r->{errors}) <= connections of the killed"
       . " child ($held)") or diag($r->{raw});
    is($r->{non2xx}, 0, 'kill: no non-2xx response');
    ok($t->alive($other), "kill: the other child $other still runs");

    my $m = $t->master_pid;
    ok($t->wait_log(qr/\[alert\] $m#-: child $victim exited on signal 9\b/,
                    5), 'kill: [alert] child exited on signal 9');
    ok($t->stop, 'kill: server stops');
}


# ---- 2. reloads under load --------------------------------------------

SKIP: {
    my $reloads = GnLoad::pick(20, 100);
    skip $nowrk, $reloads + 5 unless $wrk;

    conf();
    $t->run;
    $t->wait_children(2, 5);

    my $w = GnLoad::wrk_start($t, path => '/index.html',
                              connections => GnLoad::pick(50, 200));
    sleep(0.5);
    my $gen = 1;
    for my $i (1 .. $reloads) {
        my $from = length $t->error_log;
        $t->signal('HUP');
        $gen++;
        ok($t->wait_log(qr/reload complete, generation $gen\b/, 15, undef,
                        $from), "reload $i completed");
        sleep(GnLoad::pick(0.2, 0.5));
    }
    sleep(0.5);
    my $r = GnLoad::wrk_stop($t, $w);

    ok($r->{exited} && defined $r->{requests} && $r->{requests} > 0,
       'reloads: wrk ran (' . GnLoad::wrk_text($r) . ')')
        or diag($r->{raw});
    is($r->{connect} + $r->{read} + $r->{write} + $r->{timeout}, 0,
       "reloads: no socket error across $reloads reloads")
        or diag($r->{raw});
    is($r->{non2xx}, 0, "reloads: no non-2xx response across $reloads"
                        . ' reloads') or diag($r->{raw});
    ok($t->wait_children(2, 20), 'reloads: the old generations drained');
    ok($t->stop, 'reloads: server stops');
}


# ---- 3. graceful stop with slow in-flight responses, under load -----------

{
    my $size = 8 * 1024 * 1024;
    my $nslow = GnLoad::pick(4, 12);
    my $big = join('', map { sprintf("%015d\n", $_ * 16) }
                       0 .. $size / 16 - 1);
    $t->write_file('html/big.bin', $big);

    conf(shutdown_timeout => '60s');
    $t->run;
    my $m = $t->master_pid;
    my @kids = $t->wait_children(2, 5);

    my $w = $wrk ? GnLoad::wrk_start($t, path => '/index.html',
                                     connections => GnLoad::pick(20, 100))
                 : undef;

    # slow readers: a small receive buffer, read a bit at a time
    my @c;
    for my $i (1 .. $nslow) {
        my $s = $t->connect(rcvbuf => 16384);
        last unless $s;
        $t->write_all($s, $t->request('/big.bin'));
        push @c, { s => $s, buf => '', eof => 0 };
    }
    is(scalar @c, $nslow, "stop: $nslow slow downloads started");

    my $sel = IO::Select->new(map { $_->{s} } @c);
    my %by = map { fileno($_->{s}) => $_ } @c;

    # Reads at most $chunk bytes from each readable socket for $secs s
    # (until every download is complete when $secs is undef).
    my $pump = sub {
        my ($secs, $chunk, $pause) = @_;
        my $end = time() + ($secs // 120);
        while (time() < $end && $sel->count) {
            my @ready = $sel->can_read(5);
            last if !@ready && !defined $secs;
            for my $s (@ready) {
                my $x = $by{fileno($s)};
                my $n = sysread($s, $x->{buf}, $chunk, length $x->{buf});
                next if !defined $n && ($! == EAGAIN || $! == EINTR);
                if (!$n) {
                    $x->{eof} = 1;
                    $sel->remove($s);
                }
            }
            sleep($pause) if $pause;
        }
    };

    # every download under way (past its head), then QUIT mid-way
    $pump->(1, 16384, 0.05);
    my $started = grep { $_->{buf} =~ m{^HTTP/1\.1 200 } } @c;
    is($started, $nslow, 'stop: every download started before QUIT');
    my $partial = grep { length($_->{buf}) < $size } @c;
    is($partial, $nslow, 'stop: every download in flight at QUIT');

    ok($t->signal('QUIT'), 'stop: QUIT');
    $pump->(1.5, 16384, 0.05);          # still slow for a while
    $pump->(undef, 1 << 20, 0);         # then at full speed

    my $exact = 0;
    for my $x (@c) {
        my $i = index($x->{buf}, "\r\n\r\n");
        my $body = $i >= 0 ? substr($x->{buf}, $i + 4) : '';
        my ($cl) = $x->{buf} =~ /^Content-Length:\s*(\d+)\r$/mi;
        if (defined $cl && $cl == $size && $body eq $big) {
            $exact++;
        } else {
            diag('download: ' . length($body) . " of $size bytes");
        }
        close $x->{s};
    }
    is($exact, $nslow, "stop: all $nslow responses complete, byte-exact");

    my $r = $w ? GnLoad::wrk_stop($t, $w) : undef;
    diag('wrk during the stop: ' . GnLoad::wrk_text($r))
        if $r && $ENV{TEST_GN_VERBOSE};

    ok($t->wait_exit(60), 'stop: the master exited');
    is($t->exit_status, 0, 'stop: exit status 0');
    is_deeply([grep { $t->alive($_) } @kids], [], 'stop: no child remains');
    $t->stop;
    is_deeply([$t->leftovers], [], 'stop: no process left');
    unlink($t->testdir . '/html/big.bin');
}


# ---- 4. access log on a full disk -------------------------------------------

SKIP: {
    skip $nowrk, 11 unless $wrk;
    skip '/dev/full not available', 11 unless -c '/dev/full';

    my $dir = $t->testdir;
    my $log = "$dir/logs/access.log";
    unlink $log;
    symlink('/dev/full', $log) or die "symlink: $!";

    conf(access_log => 'access_log logs/access.log;');
    $t->expect_log(qr/\[crit\] .*write\(\) of \d+ bytes to ".*access\.log"/);
    $t->run;
    my @kids = $t->wait_children(2, 5);

    my $w = GnLoad::wrk_start($t, path => '/index.html',
                              connections => GnLoad::pick(20, 100));
    sleep(GnLoad::pick(3, 30));
    my $r = GnLoad::wrk_stop($t, $w);
    ok(defined $r->{requests} && $r->{requests} > 100,
       'full disk: wrk ran (' . GnLoad::wrk_text($r) . ')')
        or diag($r->{raw});
    is($r->{errors}, 0, 'full disk: every request answered with a 2xx')
        or diag($r->{raw});

    # one report per child that wrote, not one per request
    my $re = qr/write\(\) of \d+ bytes to "[^"]*access\.log" failed/;
    my @fail = grep { /$re/ } split /\n/, $t->error_log;
    ok(@fail >= 1, 'full disk: the failure is reported');
    ok(@fail <= 2, 'full disk: reported at most once per child ('
                   . scalar(@fail) . " lines for $r->{requests} requests)")
        or diag(join("\n", @fail[0 .. ($#fail > 5 ? 5 : $#fail)]));
    like($fail[0] // '', qr/\[crit\].*\(28: No space left on device\)/,
         'full disk: [crit] with ENOSPC');
    # the children that lost lines (under valgrind one child may have
    # accepted every connection of the run, and the other lost nothing)
    my %lost = map { /\] (\d+)#\d+: / ? ($1 => 1) : () } @fail;
    my @lost = sort keys %lost;
    is(scalar @lost, scalar @fail, 'full disk: each report names its child');

    # Recovery: /dev/full cannot be emptied, so the log path is switched
    # to a regular file (rename over the symlink) and USR1 makes the
    # children reopen it; their next good write logs how many were lost.
    my $from = length $t->error_log;
    $t->write_file('logs/access.log.new', '');
    rename("$log.new", $log) or die "rename: $!";
    ok($t->signal('USR1'), 'full disk: USR1 after the log is fixed');
    my $m = $t->master_pid;
    ok($t->wait_log(qr/\[notice\] $m#-: reopening logs/, 5, undef, $from),
       'full disk: the master reopens the logs');
    # The children reopen from their event loop (silently): under load,
    # each one's first good write after it logs the notice.  Which child
    # accepts a connection is the kernel's choice (one may take all ten
    # of a wrk run, above all under valgrind): new connections every
    # second until every child has written.
    my $back = 0;
    my $end = time() + GnTest::slow(10);
    my $again = qr/writes to "[^"]*access\.log" succeed again, \d+ lost/;
    my $errors = 0;
    while (time() < $end) {
        $w = GnLoad::wrk_start($t, path => '/index.html', connections => 10);
        sleep(1);
        $r = GnLoad::wrk_stop($t, $w);
        $errors += $r->{errors} // 1;
        my $l = substr($t->error_log, $from);
        $back = grep { $l =~ /\[notice\] $_#\d+: $again/ } @lost;
        last if $back == @lost;
    }
    is($errors, 0, 'full disk: served after the reopen')
        or diag($r->{raw});
    is($back, scalar @lost, 'full disk: each child that lost lines notes '
                            . '"writes succeed again, N lost" after the '
                            . 'reopen');
    my @lines = grep { m{"GET /index\.html HTTP/1\.1" 200 } }
                split /\n/, $t->read_file($log) // '';
    ok(@lines > 0, 'full disk: lines logged again (' . scalar(@lines) . ')');
    @fail = grep { /$re/ } split /\n/, $t->error_log;
    ok(@fail <= 2, 'full disk: no new failure reports after the reopen');
}

$t->done;
