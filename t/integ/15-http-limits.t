#!/usr/bin/perl

# Resource limits (issue 3): slowloris connections cost only themselves and
# are closed after client_header_timeout; a client that stops reading is
# dropped after send_timeout; max_connections answers 503 and never spins;
# running out of descriptors (EMFILE) does not spin and service resumes.
# Three server runs: timeouts, max_connections, a low descriptor limit.

use strict;
use warnings;

use Test::More;
use IO::Select;
use Time::HiRes qw(time sleep);
use POSIX qw(:errno_h);
use GnTest;

my $t = GnTest->new(timeout => 110);

my $small = "small file\n";
my $big_len = 24 * 1024 * 1024;

$t->write_file('html/small.txt', $small);
$t->write_file('html/index.html', "index\n");
{
    # a large file, written in pieces
    my $path = $t->testdir . '/html/big.bin';
    open(my $fh, '>:raw', $path) or die "$path: $!";
    my $chunk = join('', map { sprintf('%07d\n', $_) } 0 .. 131071);  # 1 MiB
    print $fh substr($chunk x 24, 0, $big_len);
    close $fh;
}

sub conf
{
    my ($main) = @_;
    $t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
shutdown_timeout 3s;
error_log logs/error.log info;
$main

types {
    text/plain  txt;
}

# (deferred=off: these tests count and time out connections that send
# nothing, which the default TCP_DEFER_ACCEPT keeps in the kernel for a
# second or more)
server {
    listen 127.0.0.1:%%PORT_0%% deferred=off;
    root html;
    client_header_timeout 2s;
    client_body_timeout 2s;
    send_timeout 2s;
}
EOF_CONF
}

# Sockets from @$socks that the server closed (EOF or reset) within
# $timeout s, reading and dropping whatever arrives.
sub wait_closed
{
    my ($socks, $timeout, $want) = @_;
    my %open = map { fileno($_) => $_ } @$socks;
    my $closed = 0;
    my $end = time() + GnTest::slow($timeout);

    $want //= scalar @$socks;
    while (%open && time() < $end && $closed < $want) {
        my $sel = IO::Select->new(values %open);
        for my $s ($sel->can_read(0.2)) {
            my $buf;
            my $n = sysread($s, $buf, 65536);
            next if !defined $n && ($! == EAGAIN || $! == EINTR);
            if (!$n) {
                delete $open{fileno($s)};
                $closed++;
            }
        }
    }
    return $closed;
}

sub cpu_ticks
{
    my ($pid) = @_;
    open(my $fh, '<', "/proc/$pid/stat") or return undef;
    my $l = <$fh>;
    close $fh;
    $l =~ s/^.*\)\s+//s;
    my @f = split ' ', $l;
    return $f[11] + $f[12];     # utime + stime (fields 14 and 15)
}

my ($r, @conns);

# ---- run 1: header and send timeouts ---------------------------------------

conf('');
$t->run;

# slowloris: 200 connections trickle an incomplete head
for my $i (1 .. 200) {
    my $s = $t->connect or last;
    $t->write_all($s, "GET /small.txt HTTP/1.1\r\nHost: localhost\r\n");
    push @conns, $s;
}
is(scalar @conns, 200, 'slowloris: 200 connections open');

my $start = time();
my $served = 0;
my $served_body = '';
while (time() - $start < 1.2) {
    for my $s (@conns) {
        $t->write_all($s, 'X');     # errors ignored: the server may close
    }
    if (!$served && time() - $start > 0.5) {
        $r = $t->http_get('/small.txt', timeout => 5);
        $served = ($r->{status} // 0) == 200;
        $served_body = $r->{body};
    }
    sleep(0.3);
}
ok($served, 'slowloris: a normal client is served meanwhile');
is($served_body, $small, 'slowloris: the normal client gets the body');

my $closed = wait_closed(\@conns, 6);
is($closed, 200, 'slowloris: all 200 closed after client_header_timeout');
close $_ for @conns;
@conns = ();

$r = $t->http_get('/small.txt', timeout => 5);
is($r->{status}, 200, 'after slowloris: served');

# an idle connection that never sends a byte is closed silently
{
    my $s = $t->connect;
    my ($raw, $cl) = $t->read_until_close($s, 8);
    ok($cl, 'idle connection without a request: closed');
    is($raw, '', 'idle connection without a request: nothing sent');
    close $s;
}

# a body that stops arriving: closed after client_body_timeout
{
    my $s = $t->connect;
    $t->write_all($s, "GET /small.txt HTTP/1.1\r\nHost: localhost\r\n"
                      . "Content-Length: 100\r\n\r\n0123456789");
    my $t0 = time();
    my ($raw, $cl) = $t->read_until_close($s, 8);
    ok($cl, 'stalled body: connection closed within 8 s');
    ok(time() - $t0 > 1, 'stalled body: not closed at once');
    unlike($raw, qr{^HTTP/1\.1 200 .*\r\n\r\n.+HTTP/1\.1 }s,
           'stalled body: no second response');
    close $s;
}

# slow reader: requests a large file and stops reading
{
    my $slow = $t->connect(rcvbuf => 4096);
    $t->write_all($slow, "GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    sleep(0.5);

    # others are served while the slow reader is stuck
    my $ok = 0;
    for (1 .. 5) {
        $r = $t->http_get('/small.txt', timeout => 5);
        $ok++ if ($r->{status} // 0) == 200 && $r->{body} eq $small;
    }
    is($ok, 5, 'slow reader: other clients are served');

    # send_timeout 2s: the server gives up on it
    sleep(4);
    my $got = 0;
    my $cl = 0;
    my $sel = IO::Select->new($slow);
    my $end = time() + GnTest::slow(10);
    while (time() < $end && $sel->can_read(3)) {
        my $buf;
        my $n = sysread($slow, $buf, 1 << 20);
        if (!defined $n) {
            next if $! == EAGAIN || $! == EINTR;
            $cl = 1;
            last;
        }
        if ($n == 0) {
            $cl = 1;
            last;
        }
        $got += $n;
    }
    ok($cl, 'slow reader: connection closed after send_timeout');
    ok($got < $big_len, 'slow reader: response cut short')
        or diag("got $got bytes of $big_len");
    close $slow;
}

ok($t->wait_log(qr/\[info\].*(?:timed out|timeout)/i, 3),
   'error log: [info] line for a timeout');

$r = $t->http_get('/small.txt', timeout => 5);
is($r->{status}, 200, 'after the slow reader: served');

ok($t->stop, 'run 1: server stops');

# ---- run 2: max_connections 20 ---------------------------------------------

conf('max_connections 20;');
$t->run;

for my $i (1 .. 20) {
    my $s = $t->connect or last;
    my $buf = '';
    $t->write_all($s, "GET /small.txt HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $rr = $t->read_response($s, \$buf, timeout => 5);
    last unless ($rr->{status} // 0) == 200;
    push @conns, $s;
}
is(scalar @conns, 20, 'max_connections 20: 20 keep-alive connections served');

{
    my $s = $t->connect;
    my $buf = '';
    my $child = ($t->children)[0];
    my $cpu0 = defined $child ? cpu_ticks($child) : undef;

    $r = $t->read_response($s, \$buf, timeout => 2);
    if (($r->{error} // '') eq 'timeout') {
        # the 503 may wait for a request
        $t->write_all($s, "GET /small.txt HTTP/1.1\r\nHost: localhost\r\n\r\n");
        $r = $t->read_response($s, \$buf, timeout => 5);
    }
    is($r->{status}, 503, 'the 21st connection: 503');
    is($r->{reason}, 'Service Unavailable', '503 Service Unavailable');
    like($r->{headers}{connection} // '', qr/^close$/i,
         '503: Connection: close');
    my ($rest, $cl) = $t->read_until_close($s, 5);
    ok($cl, '503: connection closed');
    close $s;

    # more refused connections while full; the child does not spin
    my @extra;
    for (1 .. 5) {
        my $x = $t->connect;
        push @extra, $x if $x;
    }
    sleep(2);
    my $cpu1 = defined $child ? cpu_ticks($child) : undef;
    ok(defined $cpu0 && defined $cpu1 && $cpu1 - $cpu0 < 50,
       'max_connections: the child does not spin while full')
        or diag('cpu ticks: ' . ($cpu0 // 'undef') . ' -> '
                . ($cpu1 // 'undef'));
    my $n503 = 0;
    for my $x (@extra) {
        my $b = '';
        my $rr = $t->read_response($x, \$b, timeout => 2);
        if (($rr->{error} // '') eq 'timeout') {
            $t->write_all($x, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
            $rr = $t->read_response($x, \$b, timeout => 5);
        }
        $n503++ if ($rr->{status} // 0) == 503;
        close $x;
    }
    is($n503, 5, 'max_connections: further connections also get 503');
}

# the held connections still work
{
    my $buf = '';
    my $s = $conns[0];
    $t->write_all($s, "GET /small.txt HTTP/1.1\r\nHost: localhost\r\n\r\n");
    $r = $t->read_response($s, \$buf, timeout => 5);
    is($r->{status}, 200, 'max_connections: a held connection still served');
}

close $_ for splice(@conns, 0, 5);
{
    my $end = time() + GnTest::slow(5);
    my $ok = 0;
    while (time() < $end) {
        $r = $t->http_get('/small.txt', timeout => 5);
        if (($r->{status} // 0) == 200) {
            $ok = 1;
            last;
        }
        sleep(0.2);
    }
    ok($ok, 'max_connections: served again once idle ones closed');
    is($r->{body}, $small, 'max_connections: body');
}
close $_ for @conns;
@conns = ();

ok($t->stop, 'run 2: server stops');

# ---- run 3: a low descriptor limit (EMFILE) ----------------------------------

SKIP: {
    skip GnTest::ulimit_skip(), 9 if GnTest::ulimit_skip();
    # valgrind keeps descriptors for itself at the top of the limit and
    # multiplies the CPU time this run measures
    skip 'under valgrind: it changes the descriptor limit and CPU time', 9
        if GnTest::valgrind();

    conf('');
    $t->expect_log(qr/\[crit\].*accept/);
    $t->run_ulimit(64);
    # the port answers once the master listens, maybe before it forked
    my ($child) = $t->wait_children(1, 5);

    $r = $t->http_get('/small.txt', timeout => 5);
    is($r->{status}, 200, 'ulimit -n 64: served');

    for my $i (1 .. 100) {
        my $s = $t->connect or last;
        push @conns, $s;
    }
    ok(@conns >= 80, 'ulimit -n 64: 100 connections opened (backlog)')
        or diag(scalar(@conns) . ' connections');
    sleep(0.5);

    # the limit applies to the child and it is reached
    my $limits = defined $child ? $t->read_file("/proc/$child/limits") // ''
                                : '';
    like($limits, qr/^Max open files\s+64\s/m, 'EMFILE: the child has 64 fds');
    my $nfd = 0;
    if (defined $child && opendir(my $dh, "/proc/$child/fd")) {
        $nfd = grep { /^\d+$/ } readdir $dh;
        closedir $dh;
    }
    ok($nfd >= 60, "EMFILE: the child's descriptors are used up ($nfd)");

    my $cpu0 = defined $child ? cpu_ticks($child) : undef;
    sleep(2);
    my $cpu1 = defined $child ? cpu_ticks($child) : undef;
    ok(defined $cpu0 && defined $cpu1 && $cpu1 - $cpu0 < 50,
       'EMFILE: the child does not spin (< 0.5 s CPU in 2 s)')
        or diag('cpu ticks: ' . ($cpu0 // 'undef') . ' -> '
                . ($cpu1 // 'undef'));
    ok(defined $child && $t->alive($child), 'EMFILE: the child is alive');

    close $_ for @conns;
    @conns = ();

    my $end = time() + GnTest::slow(8);
    my $ok = 0;
    while (time() < $end) {
        $r = $t->http_get('/small.txt', timeout => 3);
        if (($r->{status} // 0) == 200) {
            $ok = 1;
            last;
        }
        sleep(0.2);
    }
    ok($ok, 'EMFILE: service resumes after the connections close');
    is($r->{body}, $small, 'EMFILE: body after resuming');

    my @kids = $t->children;
    is_deeply(\@kids, [$child], 'EMFILE: the same child, not respawned');
}

# ---- run 4: an open-file cache larger than the descriptor limit -------------

# file_cache_entries 1000 under ulimit -n 64: every cached entry holds a
# descriptor, so the cache would run the child out of them. It keeps to
# what the limit leaves once the connections and a reserve have theirs
# (with a warning), evicting early, instead of failing the requests that
# need one: opening a file, accepting a connection.
SKIP: {
    skip GnTest::ulimit_skip(), 8 if GnTest::ulimit_skip();
    skip 'under valgrind: it changes the descriptor limit', 8
        if GnTest::valgrind();

    ok($t->stop, 'run 3: server stops');
    conf('file_cache_entries 1000;');
    my $nfiles = 150;
    $t->write_file("html/many/f$_.txt", "file $_\n" x ($_ % 7 + 1))
        for 1 .. $nfiles;
    $t->run_ulimit(64);

    my $bad = 0;
    for my $i (1 .. $nfiles) {
        $r = $t->http_get("/many/f$i.txt", timeout => 5);
        $bad++ unless ($r->{status} // 0) == 200
                      && ($r->{body} // '') eq "file $i\n" x ($i % 7 + 1);
    }
    is($bad, 0, "$nfiles files under ulimit -n 64, file_cache_entries "
       . '1000: every one served');
    like($t->error_log, qr/\[warn\] .*open-file cache: \d+ entries and \d+ connections fill the descriptor limit less \d+ spare ones; entries are evicted early from now on \(file_cache_entries 1000\)/,
         'the cache says it holds fewer entries, and why');
    unlike($t->error_log, qr/open\(\) of "[^"]*" failed/,
           'no file open failed');

    # idle connections take descriptors the cache holds: it gives them
    # back to accept() too, and still serves files
    for (1 .. 30) {
        my $s = $t->connect or last;
        push @conns, $s;
    }
    is(scalar @conns, 30, '30 idle connections');
    $bad = 0;
    for my $i (reverse 1 .. $nfiles) {
        $r = $t->http_get("/many/f$i.txt", timeout => 5);
        $bad++ unless ($r->{status} // 0) == 200;
    }
    is($bad, 0, 'with 30 idle connections open: every file served');
    my $ka = 0;
    for my $s (@conns) {
        my $b = '';
        $t->write_all($s, $t->request('/many/f1.txt'));
        my $x = $t->read_response($s, \$b, timeout => 5);
        $ka++ if ($x->{status} // 0) == 200;
    }
    is($ka, 30, 'the 30 connections are served too');
    close $_ for @conns;
    @conns = ();
    my @kids = $t->children;
    is(scalar @kids, 1, 'one child');
}

$t->done;
