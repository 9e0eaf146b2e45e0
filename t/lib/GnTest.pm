package GnTest;

# Integration test harness for gannet (the nginx-tests model).
#
# Each test file makes one GnTest object: a temp dir with html/ and logs/,
# a config written with ->write_conf (placeholders %%TESTDIR%%, %%PORT_n%%,
# %%USER%%, %%SRCDIR%%, %%CERTS%%, %%MODDIR%%), a server started with ->run
# (`gannet -f -p TESTDIR/ -c TESTDIR/gannet.conf`) and clients that talk
# raw HTTP to 127.0.0.1.  ->done stops the server, adds the log checks
# (no [alert]/[crit]/[emerg] unless declared with ->expect_log, no sanitizer
# reports) and calls done_testing.
#
# Core Perl modules only.  Environment:
#   GN_BIN           the gannet binary (default: ../../core/gannet from here)
#   GN_SRCDIR        the source tree (%%SRCDIR%%)
#   GN_CERTS         certificates (%%CERTS%%), GN_MODDIR modules (%%MODDIR%%)
#   TEST_GN_LEAVE    keep the temp dir (its path is printed)
#   TEST_GN_VERBOSE  diag what the harness does and the error log at the end
#   TEST_GN_CATLOG   diag the error log and stderr.log at the end
#   TEST_GN_WRAP     command prefix for the server (strace, gdb, ...);
#                    "valgrind" is the same as TEST_GN_VALGRIND=1
#   TEST_GN_VALGRIND 1 (or valgrind's path): run the server (and `gannet -t`,
#                    `gannet -V`) under valgrind memcheck, as `make
#                    check-valgrind` does; one log per process,
#                    TESTDIR/vg/valgrind.PID.log; ->done fails on any
#                    memcheck error or definite leak in a gannet process
#   TEST_GN_VALGRIND_OPTS  more valgrind options (--track-origins=yes,
#                    --gen-suppressions=all, ...)
#   TEST_GN_SLOW     factor applied to every time bound of the harness and
#                    of the tests (through GnTest::slow); default 1, 20
#                    under valgrind
#   TEST_GN_TIMEOUT  global alarm per test file in seconds (default 120,
#                    times TEST_GN_SLOW)
#   GN_LONG_TESTS    1: the fault-under-load tests (58-faults-load.t,
#                    59-faults-fd.t, helpers in GnLoad.pm) run heavier and
#                    longer: minutes instead of under one

use strict;
use warnings;

use File::Copy ();

use Test::More ();
use IO::Socket::INET;
use IO::Select;
use Socket qw(SOL_SOCKET SO_RCVBUF);
use POSIX qw(:sys_wait_h :errno_h);
use Fcntl qw(O_CREAT O_EXCL O_WRONLY);
use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Spec;
use File::Temp qw(tempdir);
use Time::HiRes qw(time sleep);
use Scalar::Util qw(weaken);

our $VERSION = '0.1';

my $OWNER_PID = $$;     # forked helpers must not clean up
my %PORT_LOCKS;         # port => lock file path, removed at END
my @INSTANCES;          # weak refs, stopped at END
my $ALARM_SET = 0;

# Valgrind mode and the slowness factor (see the header).
my $VALGRIND = (($ENV{TEST_GN_VALGRIND} // '') !~ /^0?\z/
                || ($ENV{TEST_GN_WRAP} // '') eq 'valgrind') ? 1 : 0;
my $SLOW = $ENV{TEST_GN_SLOW} // '';
my $VALGRIND_BIN = ($ENV{TEST_GN_VALGRIND} // '') =~ m{/}
                   ? $ENV{TEST_GN_VALGRIND} : 'valgrind';
$SLOW = $VALGRIND ? 20 : 1 unless $SLOW =~ /^\d+(?:\.\d+)?\z/ && $SLOW > 0;

# The harness only writes to sockets; a server closing early must show up
# as an error, not kill the test.  Restored before exec.
$SIG{PIPE} = 'IGNORE';

# Ctrl-C / kill: run END so that no server is left behind.
$SIG{INT} = $SIG{TERM} = sub { exit 130; };


sub new
{
    my ($class, %opt) = @_;
    my ($self, $dir, $bin, $timeout);

    $bin = $ENV{GN_BIN};
    if (!defined $bin || $bin eq '') {
        $bin = File::Spec->rel2abs(dirname(__FILE__) . '/../../core/gannet');
    }

    $dir = tempdir('gannet-test-XXXXXXXX', TMPDIR => 1,
                   CLEANUP => !$ENV{TEST_GN_LEAVE});
    make_path("$dir/html", "$dir/logs");

    $self = bless {
        dir        => $dir,
        bin        => $bin,
        srcdir     => $ENV{GN_SRCDIR}
                      // File::Spec->rel2abs(dirname(__FILE__) . '/../..'),
        ports      => {},
        expect     => [],
        pid        => undef,      # the process we forked (and reap)
        master     => undef,      # the master pid (from the pid file)
        seen_kids  => {},
        pid_file   => "$dir/logs/gannet.pid",
        error_log  => "$dir/logs/error.log",
        stderr_log => "$dir/stderr.log",
        nclient    => 0,
        conn_seq   => 0,
    }, $class;

    push @INSTANCES, $self;
    weaken($INSTANCES[-1]);

    Test::More::diag("test dir: $dir") if $ENV{TEST_GN_LEAVE};

    $timeout = $opt{timeout} // $ENV{TEST_GN_TIMEOUT} // 120;
    $self->set_alarm(slow($timeout)) if $timeout;

    return $self;
}


# A global alarm for the test file: kill every server, fail, exit.
sub set_alarm
{
    my ($self, $timeout) = @_;

    $SIG{ALRM} = sub {
        Test::More::fail("test file timed out after $timeout s");
        for my $t (grep { defined } @INSTANCES) {
            $t->_diag_logs();
            $t->_kill_all();
        }
        exit 1;
    };
    alarm($timeout);
    $ALARM_SET = 1;
    return $self;
}


# GnTest::slow($seconds) or $t->slow($seconds): a time bound scaled by
# TEST_GN_SLOW.  Every bound the harness applies goes through it; tests
# use it for their own deadlines (bounds only, never expected durations).
sub slow
{
    my $s = ref $_[0] || (defined $_[0] && $_[0] eq __PACKAGE__)
            ? $_[1] : $_[0];

    return $s * $SLOW;
}


# True when the servers run under valgrind (tests that cannot, skip).
sub valgrind { return $VALGRIND; }


# Skips the whole test file under valgrind, with the reason.
sub skip_under_valgrind
{
    my ($self, $why) = @_;

    Test::More::plan(skip_all => "under valgrind: $why") if $VALGRIND;
    return $self;
}


sub testdir { return $_[0]{dir}; }
sub bin     { return $_[0]{bin}; }


# For the binary upgrade tests: the server runs from a copy in
# TESTDIR/sbin, so that a new binary can be put in its place. Returns
# (the original, the copy's path).
sub bin_installed_copy
{
    my ($self) = @_;
    my $orig = $self->{bin};
    my $sbin = "$self->{dir}/sbin/gannet";

    mkdir("$self->{dir}/sbin") or die "mkdir sbin: $!";
    File::Copy::copy($orig, $sbin) or die "copy $orig: $!";
    chmod(0755, $sbin);
    $self->{bin} = $sbin;
    return ($orig, $sbin);
}


sub verbose
{
    my ($self, @msg) = @_;

    Test::More::diag(@msg) if $ENV{TEST_GN_VERBOSE};
}


# ---- skips ---------------------------------------------------------------

sub has_prog
{
    my ($self, @progs) = @_;

    for my $p (@progs) {
        if (!defined _which($p)) {
            Test::More::plan(skip_all => "$p not found");
        }
    }
    return $self;
}


sub _which
{
    my ($prog) = @_;

    return $prog if $prog =~ m{/} && -x $prog;
    for my $d (split /:/, $ENV{PATH} // '') {
        return "$d/$prog" if $d ne '' && -f "$d/$prog" && -x _;
    }
    return undef;
}


# ->has('tls', 'pcre2'): skip unless `gannet -V` mentions the feature.
sub has
{
    my ($self, @features) = @_;
    my ($rc, $out, $err) = $self->gannet('-V');
    my %re = (tls => qr/gnutls/i, pcre2 => qr/pcre2/i,
              io_uring => qr/built with io_uring/);

    for my $f (@features) {
        my $re = $re{$f} // qr/\Q$f\E/i;
        if ($rc != 0 || ($out . $err) !~ $re) {
            Test::More::plan(skip_all => "gannet built without $f");
        }
    }
    return $self;
}


sub skip_unless_bin
{
    my ($self) = @_;

    Test::More::plan(skip_all => "no gannet binary at $self->{bin}")
        unless -x $self->{bin};
    return $self;
}


# Skips the test unless modules/NAME.so is built (GN_MODDIR, by default
# the source tree's modules/.libs).
sub skip_unless_module
{
    my ($self, $name) = @_;
    my $top = $ENV{GN_SRCDIR} // File::Spec->rel2abs(dirname(__FILE__)
                                                     . '/../..');

    $ENV{GN_MODDIR} = "$top/modules/.libs"
        if !defined $ENV{GN_MODDIR} || $ENV{GN_MODDIR} eq '';
    Test::More::plan(skip_all => "no $ENV{GN_MODDIR}/$name.so")
        unless -f "$ENV{GN_MODDIR}/$name.so";
    return $self;
}


# ---- ports ---------------------------------------------------------------

# Port number n (0..9) for this test: random in 20000-60000 outside the
# ephemeral range where possible, free on 127.0.0.1, and reserved for the
# life of the test by an O_EXCL lock file so `make -j check` is safe.
sub port
{
    my ($self, $n) = @_;

    $n //= 0;
    $self->{ports}{$n} //= _alloc_port();
    return $self->{ports}{$n};
}


sub _port_candidates
{
    my ($lo, $hi) = (32768, 60999);

    if (open my $fh, '<', '/proc/sys/net/ipv4/ip_local_port_range') {
        my $l = <$fh>;
        ($lo, $hi) = ($1, $2) if defined $l && $l =~ /(\d+)\s+(\d+)/;
        close $fh;
    }
    my @r = grep { $_ < $lo || $_ > $hi } (20000 .. 60000);
    @r = (20000 .. 60000) if @r < 1000;
    return \@r;
}


sub _alloc_port
{
    my $cand = _port_candidates();

    for (1 .. 500) {
        my $port = $cand->[int(rand(@$cand))];
        my $lock = "/tmp/gannet-test-port-$port.lock";
        my $fh;

        next if $PORT_LOCKS{$port};

        if (!sysopen($fh, $lock, O_CREAT | O_EXCL | O_WRONLY, 0644)) {
            next unless $! == EEXIST && _stale_lock($lock);
            unlink $lock;
            next unless sysopen($fh, $lock, O_CREAT | O_EXCL | O_WRONLY,
                                0644);
        }
        print $fh "$$\n";
        close $fh;

        my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                      LocalPort => $port, Proto => 'tcp',
                                      Listen => 1, ReuseAddr => 1);
        if (!$s) {
            unlink $lock;
            next;
        }
        close $s;

        $PORT_LOCKS{$port} = $lock;
        return $port;
    }

    die "GnTest: no free port found\n";
}


sub _stale_lock
{
    my ($lock) = @_;
    my ($fh, $pid);

    open($fh, '<', $lock) or return 0;
    $pid = <$fh>;
    close $fh;
    return 0 unless defined $pid && $pid =~ /^(\d+)/;
    $pid = $1;
    return !(kill(0, $pid) || $! == EPERM);
}


# ---- files and configuration ---------------------------------------------

sub expand
{
    my ($self, $text) = @_;
    my $user = $< == 0 ? 'root' : (getpwuid($<))[0] // 'nobody';

    $text =~ s/%%TESTDIR%%/$self->{dir}/g;
    $text =~ s/%%PORT_(\d)%%/$self->port($1)/ge;
    $text =~ s/%%USER%%/$user/g;
    $text =~ s/%%SRCDIR%%/$self->{srcdir}/g;
    $text =~ s{%%CERTS%%}{$ENV{GN_CERTS} // "$self->{srcdir}/t/certs"}ge;
    $text =~ s{%%MODDIR%%}{$ENV{GN_MODDIR} // ''}ge;
    $text =~ s{%%TMODDIR%%}{$ENV{GN_TMODDIR} // ''}ge;
    return $text;
}


sub conf_path { return "$_[0]{dir}/gannet.conf"; }


sub write_conf
{
    my ($self, $text) = @_;

    $self->write_file('gannet.conf', $self->expand($text));
    return $self;
}


sub write_file
{
    my ($self, $rel, $content) = @_;
    my $path = "$self->{dir}/$rel";
    my $fh;

    make_path(dirname($path));
    open($fh, '>:raw', "$path.tmp$$") or die "GnTest: $path: $!\n";
    print $fh $content;
    close($fh) or die "GnTest: $path: $!\n";
    rename("$path.tmp$$", $path) or die "GnTest: rename $path: $!\n";
    return $path;
}


sub read_file
{
    my ($self, $rel) = @_;
    my $path = $rel =~ m{^/} ? $rel : "$self->{dir}/$rel";
    my ($fh, $data);

    open($fh, '<:raw', $path) or return undef;
    local $/;
    $data = <$fh>;
    close $fh;
    return $data // '';
}


sub error_log { return $_[0]->read_file($_[0]{error_log}) // ''; }
sub stderr_log { return $_[0]->read_file($_[0]{stderr_log}) // ''; }


# Declares an [alert]/[crit]/[emerg] line as expected in this test.
sub expect_log
{
    my ($self, $re) = @_;

    push @{$self->{expect}}, $re;
    return $self;
}


# Declares one valgrind error as expected (a test module crashing on
# purpose): a log with exactly one error, matching $re, is not a failure.
sub expect_valgrind
{
    my ($self, $re) = @_;

    push @{$self->{expect_vg}}, $re;
    return $self;
}


# Polls a log (default: the error log) for max $timeout s until it matches
# (from byte offset $from on, if given); returns true on a match.
sub wait_log
{
    my ($self, $re, $timeout, $file, $from) = @_;
    my $end = time() + slow($timeout // 10);

    while (1) {
        my $log = defined $file ? ($self->read_file($file) // '')
                                : $self->error_log;
        $log = length($log) >= $from ? substr($log, $from) : ''
            if defined $from;
        return 1 if $log =~ $re;
        return 0 if time() > $end;
        sleep(0.05);
    }
}


# ---- running the server --------------------------------------------------

# Runs `gannet ARGS` to completion (max $self->{client_timeout} s):
# returns (exit code, stdout, stderr).  stderr is also appended to
# stderr.log so that sanitizer reports are caught by ->done.
sub gannet
{
    my ($self, @args) = @_;
    my @r = $self->run_client([$self->_valgrind, $self->{bin}, @args],
                              timeout => 10);

    if (open my $fh, '>>', $self->{stderr_log}) {
        print $fh $r[2];
        close $fh;
    }
    return @r;
}


sub _wrap
{
    my ($self) = @_;
    my $w = $ENV{TEST_GN_WRAP} // '';
    my @w;

    if ($w eq 'strace') {
        @w = ('strace', '-f', '-tt', '-o', "$self->{dir}/strace.log");
    } elsif ($w ne '' && $w ne 'valgrind') {
        @w = split(' ', $w);
    }
    return (@w, $self->_valgrind);
}


# The valgrind command prefix in valgrind mode, else ().  Children forked
# by the server are traced; programs it executes (CGI scripts and their
# interpreters) are not: their errors are not gannet's, and they would be
# slow.  A memcheck error or a definite leak makes the process exit 97.
#
# --vgdb=no: by default every valgrind process makes three vgdb files,
# $TMPDIR/vgdb-pipe-*-PID-by-*, removed at a normal exit only.  A process
# killed with SIGKILL leaves them, and so does the CGI launcher (made
# as root, it cannot remove them once it runs as cgi_user).  A later
# process with the same pid that runs as another user (a script forked
# by the launcher as "nobody") then cannot make its own, and valgrind
# exits 1 before the exec: to mod_cgi, a script that "exited with status
# 1 before a complete header".  The tests never attach vgdb.  TMPDIR is
# TESTDIR/vgtmp besides, so that valgrind shares nothing with other runs,
# and ->done checks that nothing was left there.
sub _valgrind
{
    my ($self) = @_;
    my $supp = "$self->{srcdir}/t/valgrind.supp";

    return () unless $VALGRIND;

    # processes that changed user (cgi_user) must be able to write too
    for my $d ("$self->{dir}/vg", "$self->{dir}/vgtmp") {
        next if -d $d;
        mkdir($d) or die "GnTest: mkdir $d: $!\n";
        chmod(01777, $d);
    }
    my $vg = "$self->{dir}/vg";

    return ('env', "TMPDIR=$self->{dir}/vgtmp",
            $VALGRIND_BIN, '--tool=memcheck', '--trace-children=yes',
            '--vgdb=no',
            '--trace-children-skip=/bin/*,/usr/*,/sbin/*,*.cgi,*.pl,*.sh',
            '--error-exitcode=97', '--leak-check=full',
            '--errors-for-leak-kinds=definite',
            '--show-leak-kinds=definite', '--num-callers=30',
            (-f $supp ? ("--suppressions=$supp") : ()),
            split(' ', $ENV{TEST_GN_VALGRIND_OPTS} // ''),
            "--log-file=$vg/valgrind.%p.log");
}



# Starts the server as run() does, under `ulimit -n N` (a wrapper script
# through TEST_GN_WRAP). Only where TEST_GN_WRAP is not set already: see
# ulimit_skip.
sub run_ulimit
{
    my ($self, $n, @args) = @_;
    my $wrap = $self->write_file("ulimit-$n.sh",
                                 "#!/bin/sh\nulimit -n $n || exit 1\n"
                                 . "exec \"\$\@\"\n");
    chmod(0755, $wrap);
    local $ENV{TEST_GN_WRAP} = $wrap;
    return $self->run(@args);
}


# Why run_ulimit cannot be used here (undef: it can): TEST_GN_WRAP is
# taken already (a wrapper of the test run's own).
sub ulimit_skip
{
    return 'TEST_GN_WRAP is set: cannot add the ulimit wrapper'
        if ($ENV{TEST_GN_WRAP} // '') ne '';
    return undef;
}

sub run
{
    my ($self, @extra) = @_;
    my (@cmd, $pid, $end, $ready);

    die "GnTest: server already running\n" if $self->{pid};

    @cmd = ($self->_wrap, $self->{bin}, '-f', '-p', "$self->{dir}/",
            '-c', $self->conf_path, @extra);
    $self->verbose("run: @cmd");

    $pid = fork();
    die "GnTest: fork: $!\n" unless defined $pid;

    if ($pid == 0) {
        POSIX::setpgid(0, 0);
        $SIG{PIPE} = $SIG{INT} = $SIG{TERM} = $SIG{ALRM} = 'DEFAULT';
        open(STDIN, '<', '/dev/null');
        open(STDOUT, '>>', $self->{stderr_log});
        open(STDERR, '>&', \*STDOUT);
        { no warnings "exec"; exec { $cmd[0] } @cmd; }
        print STDERR "exec $cmd[0]: $!\n";
        POSIX::_exit(127);
    }

    POSIX::setpgid($pid, $pid);     # either side may win the race; both try
    $self->{pid} = $pid;
    $self->{pgid} = $pid;
    $self->{master} = undef;
    $self->{seen_kids} = {};

    $end = time() + slow(10);
    while (time() < $end) {
        if (waitpid($pid, WNOHANG) == $pid) {
            my $st = $?;
            $self->{pid} = undef;
            $self->{exit_status} = $st;
            $self->_diag_logs(1);
            die "GnTest: gannet exited during startup ("
                . _status_text($st) . ")\n";
        }

        my $mp = $self->_read_pid_file;
        if (defined $mp
            && ($mp == $pid || ($self->_wrap && kill(0, $mp))))
        {
            if (!keys %{$self->{ports}} || $self->probe($self->port(0))) {
                $self->{master} = $mp;
                $ready = 1;
                last;
            }
        }
        sleep(0.02);
    }

    if (!$ready) {
        $self->_diag_logs(1);
        $self->_kill_all;
        die "GnTest: gannet did not become ready within " . slow(10)
            . " s\n";
    }

    $self->verbose("master pid $self->{master}");
    return $self;
}


sub _status_text
{
    my ($st) = @_;

    return "signal " . ($st & 127) if $st & 127;
    return "exit code " . ($st >> 8);
}


sub _read_pid_file
{
    my ($self) = @_;
    my $c = $self->read_file($self->{pid_file});

    return undef unless defined $c && $c =~ /^(\d+)\n?\z/;
    return $1;
}


sub probe
{
    my ($self, $port) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                  Proto => 'tcp', Timeout => slow(1));

    return 0 unless $s;
    close $s;
    return 1;
}


sub running
{
    my ($self) = @_;

    return 0 unless $self->{pid};
    $self->_reap;
    return defined $self->{pid};
}


sub master_pid
{
    my ($self) = @_;

    return $self->{master} // $self->{pid};
}


sub pid_file { return $_[0]{pid_file}; }


sub signal
{
    my ($self, $sig) = @_;
    my $pid = $self->master_pid;

    die "GnTest: no server to signal\n" unless $pid;
    $self->verbose("kill $sig $pid");
    return kill($sig, $pid);
}


# Live (non-zombie) processes whose parent is the master.
sub children
{
    my ($self, $ppid) = @_;
    my @kids;

    $ppid //= $self->master_pid;
    return () unless $ppid;

    opendir(my $dh, '/proc') or return ();
    for my $pid (grep { /^\d+$/ } readdir $dh) {
        my ($pp, $state) = _proc_status($pid);
        next unless defined $pp && $pp == $ppid;
        next if $state =~ /^[ZX]/;
        push @kids, $pid;
    }
    closedir $dh;

    @kids = sort { $a <=> $b } @kids;
    $self->{seen_kids}{$_} = 1 for @kids;
    return @kids;
}


sub _proc_status
{
    my ($pid) = @_;
    my ($fh, $pp, $state);

    open($fh, '<', "/proc/$pid/status") or return ();
    while (my $l = <$fh>) {
        $state = $1 if $l =~ /^State:\s+(\S+)/;
        $pp = $1 if $l =~ /^PPid:\s+(\d+)/;
    }
    close $fh;
    return ($pp, $state // '');
}


# True while /proc/PID exists and is not a zombie.
sub alive
{
    my ($self, $pid) = @_;
    my ($pp, $state) = _proc_status($pid);

    return defined $pp && $state !~ /^[ZX]/;
}


# Polls until exactly $n children exist (and, with `not => [pids]`, none of
# those); list context: the pids, scalar context: true on success.
sub wait_children
{
    my ($self, $n, $timeout, %opt) = @_;
    my $end = time() + slow($timeout // 10);
    my %not = map { $_ => 1 } @{$opt{not} // []};
    my @kids;

    while (1) {
        @kids = $self->children;
        my $ok = @kids == $n && !grep { $not{$_} } @kids;
        return wantarray ? @kids : 1 if $ok;
        last if time() > $end;
        sleep(0.05);
    }
    return wantarray ? @kids : 0;
}


sub _reap
{
    my ($self) = @_;

    return 1 unless $self->{pid};
    if (waitpid($self->{pid}, WNOHANG) == $self->{pid}) {
        $self->{exit_status} = $?;
        $self->verbose("server exited: " . _status_text($?));
        $self->{pid} = undef;
        return 1;
    }
    return 0;
}


# Waits (max $timeout s) for the server we started to exit; true if it did.
sub wait_exit
{
    my ($self, $timeout) = @_;
    my $end = time() + slow($timeout // 10);

    while (1) {
        return 1 if $self->_reap;
        return 0 if time() > $end;
        sleep(0.02);
    }
}


sub exit_status { return $_[0]{exit_status}; }


# Graceful stop: QUIT, then TERM, then KILL; returns true when the master
# left by itself after QUIT.  ->leftovers then lists children that were
# still alive (and not zombies) one second after the master exited.
sub stop
{
    my ($self, %opt) = @_;
    my $clean = 1;

    if ($self->running) {
        $self->children;     # remember them for the leftover check
        $self->signal($opt{signal} // 'QUIT');
        if (!$self->wait_exit($opt{timeout} // 10)) {
            $clean = 0;
            Test::More::diag("gannet did not exit after QUIT, sending TERM");
            kill('TERM', $self->master_pid);
            if (!$self->wait_exit(5)) {
                Test::More::diag("gannet did not exit after TERM, "
                                 . "sending KILL");
                kill('KILL', $self->{pid});
                $self->wait_exit(5);
            }
        }
    }

    my $end = time() + slow(1);
    my @left;
    do {
        @left = grep { $self->alive($_) && _pgrp($_) == $self->{pgid} }
                keys %{$self->{seen_kids}};
        sleep(0.05) if @left;
    } while (@left && time() < $end);

    $self->{leftovers} = [sort { $a <=> $b } @left];
    $self->_kill_leftovers;
    return $clean;
}


sub leftovers { return @{$_[0]{leftovers} // []}; }


sub _pgrp
{
    my ($pid) = @_;
    my ($fh, $l);

    open($fh, '<', "/proc/$pid/stat") or return -1;
    $l = <$fh>;
    close $fh;
    # pid (comm) state ppid pgrp ...; comm may contain spaces or parens
    return -1 unless defined $l && $l =~ /\)\s+\S+\s+\d+\s+(\d+)/;
    return $1;
}


sub _kill_leftovers
{
    my ($self) = @_;
    my %all = %{$self->{seen_kids}};

    for my $pid (keys %all) {
        next unless $self->alive($pid);
        next unless defined $self->{pgid} && _pgrp($pid) == $self->{pgid};
        Test::More::diag("killing leftover process $pid");
        kill('KILL', $pid);
    }
    kill('KILL', -$self->{pgid}) if defined $self->{pgid};
}


sub _kill_all
{
    my ($self) = @_;

    return unless $$ == $OWNER_PID;
    if ($self->{pid}) {
        kill('KILL', $self->{pid});
        kill('KILL', $self->{master}) if $self->{master};
        waitpid($self->{pid}, 0);
        $self->{pid} = undef;
    }
    $self->_kill_leftovers;
}


# ---- clients -------------------------------------------------------------

# Starts @$cmd in the background in its own process group (so that the
# whole group can be killed) and returns its pid. Options: stdin (a file,
# default /dev/null), out (stdout's file), err (stderr's file; default:
# with stdout), chdir (a directory to run in). The signals the harness
# handles are reset to their defaults before exec.
sub spawn
{
    my ($self, $cmd, %opt) = @_;
    my $pid = fork();

    die "GnTest: fork: $!\n" unless defined $pid;

    if ($pid == 0) {
        POSIX::setpgid(0, 0);
        $SIG{PIPE} = $SIG{INT} = $SIG{TERM} = $SIG{ALRM} = 'DEFAULT';
        chdir($opt{chdir}) if defined $opt{chdir};
        open(STDIN, '<', $opt{stdin} // '/dev/null');
        open(STDOUT, '>', $opt{out} // '/dev/null');
        if (defined $opt{err}) {
            open(STDERR, '>', $opt{err});
        } else {
            open(STDERR, '>&', \*STDOUT);
        }
        { no warnings "exec"; exec { $cmd->[0] } @$cmd; }
        print STDERR "exec $cmd->[0]: $!\n";
        POSIX::_exit(127);
    }

    POSIX::setpgid($pid, $pid);
    return $pid;
}


# Waits (at most $timeout s, default 30) for a process started with
# ->spawn(..., out => $out, err => "$out.err") to exit, killing its
# group if it does not; returns its stdout, after a diag of its stderr.
sub spawned_output
{
    my ($self, $pid, $out, $timeout) = @_;
    my $end = time() + slow($timeout // 30);

    while (waitpid($pid, WNOHANG) != $pid) {
        if (time() > $end) {
            kill('KILL', -$pid, $pid);
            waitpid($pid, 0);
            Test::More::diag("$out did not end");
            last;
        }
        sleep(0.05);
    }
    my $err = $self->read_file("$out.err") // '';
    Test::More::diag($err) if $err ne '';
    return $self->read_file($out) // '';
}


# Runs a command (array ref) with stdin from /dev/null in its own process
# group; kills the group after `timeout` s.  Returns (exit code, stdout,
# stderr); the exit code is -1 on timeout, 128+N when killed by signal N.
sub run_client
{
    my ($self, $cmd, %opt) = @_;
    my $n = ++$self->{nclient};
    my $out = "$self->{dir}/client.$n.out";
    my $err = "$self->{dir}/client.$n.err";
    my ($pid, $end, $rc);

    $self->verbose("client: @$cmd");
    $pid = $self->spawn($cmd, stdin => $opt{stdin}, out => $out,
                        err => $err);
    $end = time() + slow($opt{timeout} // 10);
    while (1) {
        if (waitpid($pid, WNOHANG) == $pid) {
            $rc = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
            last;
        }
        if (time() > $end) {
            kill('KILL', -$pid);
            kill('KILL', $pid);
            waitpid($pid, 0);
            $rc = -1;
            Test::More::diag("client timed out: @$cmd");
            last;
        }
        sleep(0.01);
    }
    kill('KILL', -$pid);    # anything the client left behind (a daemon)

    my @r = ($rc, $self->read_file($out) // '', $self->read_file($err) // '');
    unlink $out, $err;
    return @r;
}


# curl -sS --max-time T ARGS: returns (exit code, stdout).
sub curl
{
    my ($self, @args) = @_;
    my $t = slow(10);

    return (-1, '') unless defined _which('curl');
    my ($rc, $out, $err) = $self->run_client(
        ['curl', '-sS', '--max-time', $t, @args], timeout => 15);
    Test::More::diag("curl: $err") if $err ne '' && $ENV{TEST_GN_VERBOSE};
    return ($rc, $out);
}


# A connected TCP socket to 127.0.0.1:port (default PORT_0), or undef.
# Options: port, rcvbuf (set before connect), timeout.
sub connect
{
    my ($self, %opt) = @_;
    my $port = $opt{port} // $self->port(0);
    my $s;

    if ($opt{rcvbuf}) {
        $s = IO::Socket::INET->new(Proto => 'tcp') or return undef;
        setsockopt($s, SOL_SOCKET, SO_RCVBUF, pack('i', $opt{rcvbuf}));
        my $addr = Socket::pack_sockaddr_in($port,
                                            Socket::inet_aton('127.0.0.1'));
        CORE::connect($s, $addr) or return undef;
    } else {
        $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                   PeerPort => $port, Proto => 'tcp',
                                   Timeout => slow($opt{timeout} // 5))
            or return undef;
    }
    $s->autoflush(1);
    binmode($s);
    return $s;
}


# Writes all bytes; returns true or false (with $! set).
sub write_all
{
    my ($self, $s, $data) = @_;
    my $off = 0;

    while ($off < length $data) {
        my $n = syswrite($s, $data, length($data) - $off, $off);
        if (!defined $n) {
            next if $! == EINTR || $! == EAGAIN;
            return 0;
        }
        $off += $n;
    }
    return 1;
}


# Builds a request: method (GET), path, version (1.1), headers (array ref
# of "Name: value" or hash ref), body; Host: localhost and Connection:
# close are added unless given (keepalive => 1 drops Connection).
sub request
{
    my ($self, $path, %opt) = @_;
    my $method = $opt{method} // 'GET';
    my $version = $opt{version} // '1.1';
    my @h;

    if (ref $opt{headers} eq 'HASH') {
        push @h, "$_: $opt{headers}{$_}" for sort keys %{$opt{headers}};
    } elsif (ref $opt{headers} eq 'ARRAY') {
        push @h, @{$opt{headers}};
    }
    unshift @h, 'Host: localhost'
        unless $opt{no_host} || grep { /^host:/i } @h;
    push @h, 'Connection: close'
        unless $opt{keepalive} || grep { /^connection:/i } @h;
    if (defined $opt{body} && !grep { /^content-length:/i } @h) {
        push @h, 'Content-Length: ' . length($opt{body});
    }

    return "$method $path HTTP/$version\r\n" . join('', map { "$_\r\n" } @h)
           . "\r\n" . ($opt{body} // '');
}


# Reads one response from $s, using and consuming the buffer $$buf.
# Options: head (no body), timeout (s, default 10; scaled by TEST_GN_SLOW
# unless `exact`: a quiet period that must stay shorter than a server-side
# timeout).  Returns a hash ref:
# status, version, reason, headers (lowercased names; repeated headers
# joined with ", "), header_list, body, raw, eof (server closed after it),
# error (set on timeout, reset or a close before a complete response).
sub read_response
{
    my ($self, $s, $buf, %opt) = @_;
    my $end = time() + ($opt{exact} ? $opt{timeout} // 10
                                     : slow($opt{timeout} // 10));
    my $sel = IO::Select->new($s);
    my $eof = 0;
    my $r;

    while (1) {
        $r = _parse_response($buf, $opt{head}, $eof);
        return $r if $r;

        if ($eof) {
            return { error => length($$buf) ? 'incomplete response'
                                            : 'connection closed',
                     raw => $$buf, eof => 1, headers => {}, body => '' };
        }

        my $left = $end - time();
        if ($left <= 0 || !$sel->can_read($left)) {
            return { error => 'timeout', raw => $$buf, headers => {},
                     body => '' };
        }

        my $n = sysread($s, $$buf, 65536, length $$buf);
        if (!defined $n) {
            next if $! == EINTR || $! == EAGAIN;
            return { error => "read: $!", raw => $$buf, headers => {},
                     body => '' };
        }
        $eof = 1 if $n == 0;
    }
}


# One complete response from the front of $$buf (consumed), or undef when
# more bytes are needed.
sub _parse_response
{
    my ($buf, $head, $eof) = @_;
    my ($hend, $r, $len);

    $hend = index($$buf, "\r\n\r\n");
    return undef if $hend < 0;

    my @lines = split /\r\n/, substr($$buf, 0, $hend);
    my $sl = shift @lines;
    $r = { headers => {}, header_list => [], body => '' };
    if ($sl =~ m{^HTTP/(\d\.\d) (\d{3})(?: (.*))?$}) {
        @$r{qw(version status reason)} = ($1, $2, $3 // '');
    } else {
        $r->{error} = "bad status line: $sl";
    }
    for my $l (@lines) {
        my ($k, $v) = $l =~ /^([^:\s]+):[ \t]*(.*?)[ \t]*$/ or do {
            $r->{error} //= "bad header line: $l";
            next;
        };
        push @{$r->{header_list}}, [$k, $v];
        $k = lc $k;
        $r->{headers}{$k} = exists $r->{headers}{$k}
                            ? "$r->{headers}{$k}, $v" : $v;
    }

    my $bstart = $hend + 4;
    my $st = $r->{status} // 0;
    my $h = $r->{headers};

    if ($head || $st =~ /^1/ || $st == 204 || $st == 304) {
        $len = 0;
    } elsif (($h->{'transfer-encoding'} // '') =~ /chunked/i) {
        my ($pos, $body) = ($bstart, '');
        while (1) {
            my $e = index($$buf, "\r\n", $pos);
            return undef if $e < 0;
            my ($size) = substr($$buf, $pos, $e - $pos) =~ /^([0-9a-fA-F]+)/;
            if (!defined $size) {
                $r->{error} = 'bad chunk size';
                $pos = length $$buf;
                last;
            }
            $size = hex $size;
            if ($size == 0) {
                # optional trailer fields, then an empty line
                if (length($$buf) < $e + 4) {
                    return undef;
                }
                if (substr($$buf, $e + 2, 2) eq "\r\n") {
                    $pos = $e + 4;
                } else {
                    my $t = index($$buf, "\r\n\r\n", $e + 2);
                    return undef if $t < 0;
                    $pos = $t + 4;
                }
                last;
            }
            return undef if length($$buf) < $e + 2 + $size + 2;
            $body .= substr($$buf, $e + 2, $size);
            $pos = $e + 2 + $size + 2;
        }
        $r->{body} = $body;
        $r->{raw} = substr($$buf, 0, $pos, '');
        $r->{chunked} = 1;
        return $r;
    } elsif (defined $h->{'content-length'}) {
        $len = $h->{'content-length'};
        if ($len !~ /^\d+$/) {
            $r->{error} = "bad Content-Length: $len";
            $len = 0;
        }
    } else {
        return undef unless $eof;
        $len = length($$buf) - $bstart;
    }

    return undef if length($$buf) < $bstart + $len;
    $r->{body} = substr($$buf, $bstart, $len);
    $r->{raw} = substr($$buf, 0, $bstart + $len, '');
    return $r;
}


# Sends raw request bytes on a new connection and reads one response.
# Options: port, timeout, head (default: the request starts with HEAD).
sub http
{
    my ($self, $req, %opt) = @_;
    my $s = $self->connect(%opt);
    my $buf = '';

    return { error => "connect: $!", headers => {}, body => '' } unless $s;
    if (!$self->write_all($s, $req)) {
        return { error => "write: $!", headers => {}, body => '' };
    }
    my $head = $opt{head} // ($req =~ /^HEAD / ? 1 : 0);
    my $r = $self->read_response($s, \$buf, %opt, head => $head);
    close $s;
    return $r;
}


sub http_get
{
    my ($self, $path, %opt) = @_;

    return $self->http($self->request($path, %opt), %opt);
}


sub http_head
{
    my ($self, $path, %opt) = @_;

    return $self->http($self->request($path, %opt, method => 'HEAD'), %opt);
}


# Sends the requests one after another on ONE connection (all in one write
# with pipeline => 1) and returns one parsed response per request.  Each
# response has `conn` (this connection's number) and `sockport`; once the
# connection fails, the remaining entries carry the error.
sub http_keepalive
{
    my ($self, $reqs, %opt) = @_;
    my $s = $self->connect(%opt);
    my ($buf, @res, $err) = ('');
    my $conn = ++$self->{conn_seq};

    if (!$s) {
        return map { { error => "connect: $!", headers => {}, body => '' } }
               @$reqs;
    }
    my $sport = $s->sockport;

    if ($opt{pipeline} && !$self->write_all($s, join('', @$reqs))) {
        $err = "write: $!";
    }

    for my $req (@$reqs) {
        my $r;
        if (!defined $err && !$opt{pipeline}
            && !$self->write_all($s, $req))
        {
            $err = "write: $!";
        }
        if (defined $err) {
            push @res, { error => $err, headers => {}, body => '' };
            next;
        }
        $r = $self->read_response($s, \$buf, head => ($req =~ /^HEAD / ? 1 : 0),
                                  %opt);
        $r->{conn} = $conn;
        $r->{sockport} = $sport;
        $err = $r->{error} if defined $r->{error};
        push @res, $r;
    }

    close $s;
    return @res;
}


# Sends bytes and reads until the server closes or `timeout` s (default 5)
# pass.  Scalar context: the bytes; list context: (bytes, closed flag).
sub http_raw
{
    my ($self, $data, %opt) = @_;
    my $s = $self->connect(%opt);
    my $buf = '';
    my $closed = 0;

    return wantarray ? ('', 0) : '' unless $s;
    $self->write_all($s, $data);
    shutdown($s, 1) if $opt{shutdown};
    ($buf, $closed) = $self->read_until_close($s, $opt{timeout} // 5);
    close $s;
    return wantarray ? ($buf, $closed) : $buf;
}


# Reads from $s until EOF (or reset) or timeout: returns (bytes, closed).
sub read_until_close
{
    my ($self, $s, $timeout) = @_;
    my $end = time() + slow($timeout // 5);
    my $sel = IO::Select->new($s);
    my $buf = '';

    while (1) {
        my $left = $end - time();
        return ($buf, 0) if $left <= 0 || !$sel->can_read($left);
        my $n = sysread($s, $buf, 65536, length $buf);
        if (!defined $n) {
            next if $! == EINTR || $! == EAGAIN;
            return ($buf, 1);
        }
        return ($buf, 1) if $n == 0;
    }
}


# ---- end of test ---------------------------------------------------------

sub _diag_logs
{
    my ($self, $all) = @_;
    my $log = $self->error_log;
    my $err = $self->stderr_log;

    if ($all || $ENV{TEST_GN_CATLOG} || $ENV{TEST_GN_VERBOSE}) {
        Test::More::diag("---- error.log ----\n$log") if $log ne '';
    } else {
        my @l = split /\n/, $log;
        @l = @l[-30 .. -1] if @l > 30;
        Test::More::diag("---- error.log (tail) ----\n" . join("\n", @l))
            if @l;
    }
    if (($all || $ENV{TEST_GN_CATLOG}) && $err ne '') {
        Test::More::diag("---- stderr.log ----\n$err");
    }
}


# Stops the server, adds the log checks and calls done_testing.
sub done
{
    my ($self) = @_;
    my (@bad, $log, $san, $tb);

    if ($self->running) {
        Test::More::ok($self->stop, 'server stops gracefully on QUIT');
    }

    # also logs rotated by the test (error.log.1, ...)
    $log = join("\n", map { $self->read_file($_) // '' }
                      sort glob("$self->{error_log}*"));
    for my $l (split /\n/, $log) {
        next unless $l =~ /\[(?:alert|crit|emerg)\]/;
        next if grep { $l =~ $_ } @{$self->{expect}};
        push @bad, $l;
    }
    Test::More::ok(!@bad, 'no unexpected alert/crit/emerg in error.log')
        or Test::More::diag(join("\n", @bad));

    $san = qr/(?:Address|Leak|UndefinedBehavior|Memory|Thread)Sanitizer
              |runtime\ error:/x;
    @bad = grep { /$san/ } split(/\n/, $log . "\n" . $self->stderr_log);
    Test::More::ok(!@bad, 'no sanitizer reports')
        or Test::More::diag(join("\n", @bad[0 .. ($#bad > 20 ? 20 : $#bad)]));

    $self->_check_valgrind if $VALGRIND;

    $tb = Test::More->builder;
    if (!$tb->is_passing || $ENV{TEST_GN_CATLOG} || $ENV{TEST_GN_VERBOSE}) {
        $self->_diag_logs(0);
    }

    Test::More::done_testing();
    $self->{done} = 1;
    alarm(0) if $ALARM_SET;
}


# Valgrind mode: every log of a gannet process must say "ERROR SUMMARY: 0"
# and nothing "definitely lost".  A process killed with SIGKILL, or one
# that executed another program (a CGI script), writes no summary: such a
# log fails only if it holds an error record.
my $VG_ERROR = qr/^==\d+==[ ](?:Invalid[ ](?:read|write|free)
                               |Conditional[ ]jump|Use[ ]of[ ]uninitialised
                               |Syscall[ ]param|Mismatched[ ]free
                               |Source[ ]and[ ]destination|Argument[ ]'
                               |Process[ ]terminating)/mx;

sub _check_valgrind
{
    my ($self) = @_;
    my (@bad, $nlogs, $nsum);

    ($nlogs, $nsum) = (0, 0);
    for my $f (sort glob("$self->{dir}/vg/valgrind.*.log")) {
        my $log = $self->read_file($f) // '';
        my ($cmd) = $log =~ /^==\d+== Command: (\S+)/m;

        next unless defined $cmd && $cmd eq $self->{bin};
        $nlogs++;
        if ($log !~ /ERROR SUMMARY: ([\d,]+) error/) {
            # no summary, but errors reported before the end still count
            push @bad, _valgrind_excerpt($f, $log) if $log =~ $VG_ERROR;
            next;
        }
        my $errors = $1 =~ tr/,//dr;
        my ($lost) = $log =~ /definitely lost: ([\d,]+) bytes/;
        $lost = ($lost // 0) =~ tr/,//dr;
        $nsum++;
        next if $errors == 0 && $lost == 0;
        next if $errors == 1 && $lost == 0
                && $log =~ /ERROR SUMMARY: 1 errors from 1 contexts/
                && grep { $log =~ $_ } @{$self->{expect_vg} // []};
        push @bad, _valgrind_excerpt($f, $log);
    }

    # see _valgrind: vgdb files would make a later process of another
    # user that gets the same pid fail (unless asked for by hand)
    my @vgdb = glob("$self->{dir}/vgtmp/vgdb-*");
    if (@vgdb && ($ENV{TEST_GN_VALGRIND_OPTS} // '') !~ /--vgdb/) {
        push @bad, "---- valgrind left vgdb files in $self->{dir}/vgtmp ----\n"
                   . join("\n", @vgdb);
    }

    Test::More::ok(!@bad, "valgrind: no memcheck errors or definite leaks"
                          . " ($nsum of $nlogs gannet processes reported)")
        or Test::More::diag(join("\n", @bad));
}


# A valgrind log without its banner (the first 150 lines of the rest).
sub _valgrind_excerpt
{
    my ($file, $log) = @_;
    my @l = split /\n/, $log;

    shift @l while @l && $l[0] !~ /^==\d+== (?:Parent PID|Command)/;
    shift @l while @l && $l[0] =~ /^==\d+== (?:Parent PID|Command|$)/;
    @l = @l[0 .. 149] if @l > 150;
    return "---- $file ----\n" . join("\n", @l);
}


sub DESTROY
{
    my ($self) = @_;

    return unless $$ == $OWNER_PID;
    local ($?, $!, $@);
    $self->_kill_all if $self->{pid};
}


END {
    if ($$ == $OWNER_PID) {
        local ($?, $!, $@);
        for my $t (grep { defined } @INSTANCES) {
            if ($t->{pid}) {
                kill('QUIT', $t->master_pid);
                $t->wait_exit(3);
                $t->_kill_all;
            }
        }
        unlink values %PORT_LOCKS;
    }
}

1;
