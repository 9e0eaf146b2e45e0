package GnMemc;

# memcached helpers for the integration tests (96-tls-memcached.t), on
# top of GnTest:
#
#   GnMemc::init($t)             skip unless memcached is installed
#   GnMemc::start($t, $port)     memcached -l 127.0.0.1 -p PORT -U 0 (and
#                                -u nobody as root) in the foreground, as
#                                a child of the test; returns when it
#                                answers "version"; returns its pid
#   GnMemc::stop($pid, $sig)     kill (default TERM) and reap
#   GnMemc::fake($port, $mode)   a fake memcached: 'stall' accepts and
#                                reads, never writes; 'garbage' answers
#                                "HELLO GARBAGE\r\n" to every read;
#                                returns its pid (stop it with stop())
#   GnMemc::cmd($port, $bytes, $end_re, $timeout)
#                                one text-protocol exchange: the answer
#                                up to $end_re (default END/STORED/
#                                ERROR lines), or undef
#   GnMemc::metadump($port)      `lru_crawler metadump all` as a list of
#                                hashes: key (URL-decoded), rawkey, exp,
#                                la, size, fetch, ...
#   GnMemc::get($port, $key)     the value under $key, or undef
#   GnMemc::set($port, $key, $value, $exptime)  true when STORED
#
# Every process started here is killed at END (the owner process only),
# so that none outlives the test.  Core Perl modules only.

use strict;
use warnings;

use Test::More ();
use IO::Socket::INET;
use IO::Select;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(time sleep);
use GnTest;

my $OWNER_PID = $$;
my %PIDS;               # pid => what, killed at END


sub bin { return GnTest::_which('memcached'); }


sub init
{
    my ($t) = @_;

    Test::More::plan(skip_all => 'memcached not found (Debian memcached)')
        unless defined bin();
    return $t;
}


# Starts memcached on 127.0.0.1:$port; dies when it does not answer
# within 5 s (scaled).
sub start
{
    my ($t, $port) = @_;
    my @cmd = (bin(), '-l', '127.0.0.1', '-p', $port, '-U', '0',
               '-m', '16', '-c', '256');
    my $log = $t->testdir . "/memcached.$port.log";

    push @cmd, '-u', 'nobody' if $< == 0;
    my $pid = $t->spawn(\@cmd, out => $log);
    $PIDS{$pid} = "memcached :$port";

    my $end = time() + GnTest::slow(5);
    while (time() < $end) {
        if (waitpid($pid, WNOHANG) == $pid) {
            delete $PIDS{$pid};
            die "GnMemc: memcached exited at start: "
                . ($t->read_file($log) // '') . "\n";
        }
        my $v = cmd($port, "version\r\n", qr/^VERSION .*\r\n/m, 1);
        return $pid if defined $v && $v =~ /^VERSION /;
        sleep(0.05);
    }
    stop($pid, 'KILL');
    die "GnMemc: memcached on port $port did not answer\n";
}


# Kills $pid (default TERM; KILL after 5 s) and reaps it.
sub stop
{
    my ($pid, $sig) = @_;

    return unless $pid;
    kill($sig // 'TERM', $pid);
    my $end = time() + GnTest::slow(5);
    while (waitpid($pid, WNOHANG) != $pid) {
        if (time() > $end) {
            kill('KILL', $pid);
            waitpid($pid, 0);
            last;
        }
        sleep(0.02);
    }
    delete $PIDS{$pid};
    return 1;
}


# A fake memcached on 127.0.0.1:$port (listening when this returns).
sub fake
{
    my ($port, $mode) = @_;
    my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                  LocalPort => $port, Listen => 64,
                                  ReuseAddr => 1, Proto => 'tcp')
        or die "GnMemc: fake listen $port: $!\n";
    my $pid = fork();

    die "GnMemc: fork: $!\n" unless defined $pid;
    if ($pid) {
        close $l;
        $PIDS{$pid} = "fake memcached ($mode) :$port";
        return $pid;
    }

    # the child: serve until killed (or 10 min, in case nobody does)
    $SIG{ALRM} = $SIG{TERM} = sub { POSIX::_exit(0) };
    $SIG{PIPE} = 'IGNORE';
    alarm(600);
    my $sel = IO::Select->new($l);
    while (1) {
        for my $s ($sel->can_read) {
            if ($s == $l) {
                my $c = $l->accept or next;
                $sel->add($c);
                next;
            }
            my $n = sysread($s, my $buf, 65536);
            if (!$n) {
                $sel->remove($s);
                close $s;
                next;
            }
            syswrite($s, "HELLO GARBAGE\r\n") if $mode eq 'garbage';
            # well-formed answers, each to another request than asked
            while ($mode eq 'mistoken' && $buf =~ /^mg \S+ .*?O(\d+)/mg) {
                syswrite($s, 'EN O' . ($1 + 1000) . "\r\n");
            }
        }
    }
}


# One exchange on a new connection: sends $bytes, reads until $end_re
# matches what came (default: a line END, STORED, NOT_STORED, ERROR, ...).
sub cmd
{
    my ($port, $bytes, $end_re, $timeout) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                  Proto => 'tcp',
                                  Timeout => GnTest::slow($timeout // 3))
        or return undef;
    my $end = time() + GnTest::slow($timeout // 3);
    my $sel = IO::Select->new($s);
    my $buf = '';

    $end_re //= qr/^(?:END|STORED|NOT_STORED|EXISTS|NOT_FOUND|DELETED
                       |OK|ERROR|CLIENT_ERROR[^\r]*|SERVER_ERROR[^\r]*)\r\n/mx;
    $s->autoflush(1);
    binmode($s);
    syswrite($s, $bytes) or return undef;
    while ($buf !~ $end_re) {
        my $left = $end - time();
        return undef if $left <= 0 || !$sel->can_read($left);
        my $n = sysread($s, $buf, 65536, length $buf);
        return undef unless $n;
    }
    close $s;
    return $buf;
}


# The items memcached holds, from `lru_crawler metadump all`.
sub metadump
{
    my ($port) = @_;
    my $out = cmd($port, "lru_crawler metadump all\r\n",
                  qr/^(?:END|ERROR[^\r]*|BUSY[^\r]*)\r\n/m, 5) // '';
    my @items;

    for my $l (split /\r?\n/, $out) {
        next unless $l =~ /^key=/;
        my %i = map { /^([^=]+)=(.*)$/ ? ($1, $2) : () } split / /, $l;
        $i{rawkey} = $i{key};
        ($i{key} = $i{rawkey}) =~ s/%([0-9A-Fa-f]{2})/chr(hex $1)/ge;
        push @items, \%i;
    }
    return @items;
}


sub get
{
    my ($port, $key) = @_;
    my $out = cmd($port, "get $key\r\n", qr/^END\r\n/m) // '';

    return undef unless $out =~ /^VALUE \Q$key\E \d+ (\d+)\r\n/mg;
    return substr($out, pos($out), $1);
}


sub set
{
    my ($port, $key, $value, $exptime) = @_;
    my $out = cmd($port, "set $key 0 " . ($exptime // 300) . ' '
                         . length($value) . "\r\n$value\r\n") // '';

    return $out =~ /^STORED\r\n/ ? 1 : 0;
}


END {
    if ($$ == $OWNER_PID) {
        local ($?, $!, $@);
        for my $pid (keys %PIDS) {
            kill('KILL', $pid);
            waitpid($pid, 0);
        }
    }
}

1;
