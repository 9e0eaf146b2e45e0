package GnBackend;

# The proxy tests' backend (t/lib/backend.py), on top of GnTest:
#
#   GnBackend::init($t)            skip unless python3 is there
#   GnBackend::start($t, $port, $name, [$cert, $key])
#                                  backend.py on 127.0.0.1:PORT (TLS
#                                  with the certificate and key), as a
#                                  child of the test; returns its pid
#                                  once it accepts connections
#   GnBackend::start_fcgi($t, $port, $name)
#                                  t/lib/fcgi_responder.py, a FastCGI
#                                  responder, the same way ($port may
#                                  be "unix:PATH")
#   GnBackend::stop($pid)          TERM, then reap
#   GnBackend::stats($t, $port)    its counters, asked directly: a hash
#                                  of conns, requests, open
#
# Every backend is killed at END (by the process that started it).
# Core Perl modules only.

use strict;
use warnings;

use Test::More ();
use IO::Socket::INET;
use IO::Socket::UNIX;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(time sleep);
use GnTest;

my $OWNER_PID = $$;
my %PIDS;


sub init
{
    my ($t) = @_;

    Test::More::plan(skip_all => 'python3 not found')
        unless defined GnTest::_which('python3');
    return $t;
}


sub start
{
    my ($t, $port, $name, @tls) = @_;

    return _start($t, $port, 'backend.py', $name, @tls);
}


sub start_fcgi
{
    my ($t, $port, $name) = @_;

    return _start($t, $port, 'fcgi_responder.py', $name);
}


sub _start
{
    my ($t, $port, $file, @args) = @_;
    my $script = "$t->{srcdir}/t/lib/$file";
    my $log = $t->testdir . "/backend." . ($port =~ s{\W}{_}gr) . ".log";
    my $pid = $t->spawn(['python3', $script, $port, @args], out => $log);
    my $end = time() + GnTest::slow(10);

    $PIDS{$pid} = 1;
    while (time() < $end) {
        if (waitpid($pid, WNOHANG) == $pid) {
            delete $PIDS{$pid};
            die "GnBackend: $file exited at start: "
                . ($t->read_file($log) // '') . "\n";
        }
        my $s = $port =~ /^unix:(.*)/
                ? IO::Socket::UNIX->new(Peer => $1)
                : IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                        PeerPort => $port, Proto => 'tcp');
        if ($s) {
            close $s;
            return $pid;
        }
        sleep(0.05);
    }
    stop($pid);
    die "GnBackend: $file did not listen on $port\n";
}


sub stop
{
    my ($pid) = @_;

    return unless delete $PIDS{$pid};
    kill('TERM', $pid);
    my $end = time() + 5;
    while (waitpid($pid, WNOHANG) != $pid) {
        if (time() > $end) {
            kill('KILL', -$pid, $pid);
            waitpid($pid, 0);
            last;
        }
        sleep(0.02);
    }
}


sub stats
{
    my ($t, $port) = @_;
    my $r = $t->http_get('/stats', port => $port);
    my %s = ($r->{body} // '') =~ /(\w+)=(\d+)/g;

    return \%s;
}


END {
    if ($$ == $OWNER_PID) {
        stop($_) for keys %PIDS;
    }
}

1;
