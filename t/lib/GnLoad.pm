package GnLoad;

# Load and fault helpers for the "faults under load" tests
# (t/integ/58-faults-load.t, 59-faults-fd.t): wrk in the background with
# its summary parsed, per-process CPU time and TCP connections from /proc,
# and the long mode switch.
#
#   GN_LONG_TESTS=1   heavier, longer runs (more wrk time, reloads,
#                     connections); the default keeps each file well
#                     under a minute.

use strict;
use warnings;

use POSIX qw(:sys_wait_h);
use Time::HiRes qw(time sleep);

our $VERSION = '0.1';


sub long { return ($ENV{GN_LONG_TESTS} // '') =~ /^[1-9yYtT]/ ? 1 : 0; }


# $short in the default mode, $long with GN_LONG_TESTS=1.
sub pick { return long() ? $_[1] : $_[0]; }


# The path of wrk, or undef.
sub wrk_path { return GnTest::_which('wrk'); }


# The common start of a fault test: skip without a gannet binary; find
# wrk (its absence is said once: the wrk parts skip with the returned
# reason); point GN_MODDIR at the built modules. Returns (wrk path or
# undef, the skip reason, the module directory).
sub prepare
{
    my ($t) = @_;
    my $nowrk = 'wrk not found (install the Debian package wrk)';
    my $wrk = wrk_path();
    my $moddir = $ENV{GN_MODDIR} // '';

    $t->skip_unless_bin;
    Test::More::diag($nowrk) unless $wrk;

    $moddir = ($ENV{GN_BUILDDIR} // $t->{srcdir}) . '/modules/.libs'
        if $moddir eq '';
    $ENV{GN_MODDIR} = $moddir;

    return ($wrk, $nowrk, $moddir);
}


# Starts wrk against 127.0.0.1:port/path in the background, until it is
# stopped with wrk_stop (it runs for at most `duration` s, default 300,
# so that a lost test cannot leave it running). Options: port, path,
# connections, threads, duration, timeout (wrk's per-request timeout, s).
sub wrk_start
{
    my ($t, %opt) = @_;
    my $n = ++$t->{nclient};
    my $out = $t->testdir . "/wrk.$n.out";
    my $url = sprintf('http://127.0.0.1:%d%s', $opt{port} // $t->port(0),
                      $opt{path} // '/');
    my @cmd = (wrk_path(), '-t', $opt{threads} // 2,
               '-c', $opt{connections} // 50,
               '-d', ($opt{duration} // 300) . 's',
               '--timeout', ($opt{timeout} // 10) . 's', $url);
    my $pid;

    $t->verbose("wrk: @cmd");
    $pid = $t->spawn(\@cmd, out => $out);

    return { pid => $pid, out => $out, cmd => "@cmd" };
}


# Stops wrk with SIGINT (it prints its summary and exits), waits max
# 20 s and returns the parsed summary (see wrk_parse).
sub wrk_stop
{
    my ($t, $w) = @_;
    my $end = time() + 20;
    my $done = 0;

    kill('INT', $w->{pid});
    while (time() < $end) {
        if (waitpid($w->{pid}, WNOHANG) == $w->{pid}) {
            $done = 1;
            last;
        }
        sleep(0.05);
    }
    if (!$done) {
        kill('KILL', -$w->{pid}, $w->{pid});
        waitpid($w->{pid}, 0);
    }

    my $r = wrk_parse($t->read_file($w->{out}) // '');
    $r->{exited} = $done;
    return $r;
}


# wrk's summary: requests (undef if the "N requests in" line is missing),
# connect/read/write/timeout socket errors and non2xx (0 when wrk printed
# no such line, which it does when there were none), errors (the sum of
# all five) and the raw text.
sub wrk_parse
{
    my ($text) = @_;
    my %r = (raw => $text, connect => 0, read => 0, write => 0,
             timeout => 0, non2xx => 0);

    $r{requests} = $1 if $text =~ /^\s*(\d+) requests in /m;
    if ($text =~ /^\s*Socket errors:\s*(.*)$/m) {
        my $l = $1;
        for my $k (qw(connect read write timeout)) {
            $r{$k} = $1 if $l =~ /\b$k (\d+)/;
        }
    }
    $r{non2xx} = $1 if $text =~ /^\s*Non-2xx or 3xx responses:\s*(\d+)/m;
    $r{errors} = $r{connect} + $r{read} + $r{write} + $r{timeout}
                 + $r{non2xx};
    return \%r;
}


sub wrk_text
{
    my ($r) = @_;

    return sprintf('requests %s, connect %d, read %d, write %d, timeout %d,'
                   . ' non-2xx %d', $r->{requests} // 'n/a', $r->{connect},
                   $r->{read}, $r->{write}, $r->{timeout}, $r->{non2xx});
}


# utime + stime of a process, in clock ticks, or undef.
sub cpu_ticks
{
    my ($pid) = @_;
    my ($fh, $l);

    open($fh, '<', "/proc/$pid/stat") or return undef;
    $l = <$fh>;
    close $fh;
    return undef unless defined $l;
    $l =~ s/^.*\)\s+//s;
    my @f = split ' ', $l;
    return $f[11] + $f[12];     # fields 14 and 15 of proc(5)
}


sub ticks_per_sec
{
    my $hz = eval { POSIX::sysconf(POSIX::_SC_CLK_TCK()) };

    return $hz && $hz > 0 ? $hz : 100;
}


# TCP sockets that process $pid holds with local port $port, other than
# listeners: the connections it would drop if it died.
sub tcp_conns
{
    my ($pid, $port) = @_;
    my (%inode, $n);

    opendir(my $dh, "/proc/$pid/fd") or return 0;
    for my $fd (readdir $dh) {
        my $l = readlink("/proc/$pid/fd/$fd") // next;
        $inode{$1} = 1 if $l =~ /^socket:\[(\d+)\]$/;
    }
    closedir $dh;

    $n = 0;
    for my $f ("/proc/$pid/net/tcp", "/proc/$pid/net/tcp6") {
        open(my $fh, '<', $f) or next;
        while (my $l = <$fh>) {
            my @c = split ' ', $l;
            next unless @c > 9 && $c[1] =~ /:([0-9A-F]{4})$/;
            next unless hex($1) == $port;
            next if $c[3] eq '0A';              # LISTEN
            $n++ if $inode{$c[9]};
        }
        close $fh;
    }
    return $n;
}

1;
