package GnTLS;

# TLS helpers for the integration tests (t/integ/2x-tls-*.t), on top of
# GnTest:
#
#   GnTLS::init($t, @progs)   skip unless openssl, gnutls-cli (and @progs)
#                             exist; make sure certificates exist: use
#                             $ENV{GN_CERTS} when it holds a `stamp`, else
#                             run t/mkcerts.sh into a temp dir and point
#                             GN_CERTS (and so %%CERTS%%) at it.
#   GnTLS::s_client($t, %o)   openssl s_client, sends an HTTP request on
#                             stdin, returns a parsed hash (see below)
#   GnTLS::gnutls_cli($t, %o) gnutls-cli, same idea
#   GnTLS::curl($t, %o)       curl --cacert CA --resolve HOST:PORT:127.0.0.1
#   GnTLS::log_lines($t, $file)    the access log written with LOG_FORMAT
#   GnTLS::wait_lines($t, $file, $n, $timeout)
#   GnTLS::reload($t, $n, @old)   SIGHUP, wait for n new children
#   GnTLS::finish($t)         ->done without done_testing (several servers)
#   GnTLS::relay($listen, $to, %o)  a TCP relay process (see below)
#
# The access log format the tests use (LOG_FORMAT below):
#   $pid $tls_protocol $tls_cipher $tls_resumed $tls_sni $status $request
# (log_lines() splits it; `uri` is the request target with its query)
#
# Core Perl modules only.

use strict;
use warnings;

use Test::More ();
use File::Basename qw(dirname);
use File::Spec;
use File::Temp qw(tempdir);
use Time::HiRes qw(time sleep);
use Digest::MD5 qw(md5_hex);
use IO::Socket::INET;
use Socket ();
use POSIX ();
use GnTest;

our $LOG_FORMAT = q{log_format tls '$pid $tls_protocol $tls_cipher }
                  . q{$tls_resumed $tls_sni $status $request';};

my $CERTS;


sub srcdir
{
    return $ENV{GN_SRCDIR}
           // File::Spec->rel2abs(dirname(__FILE__) . '/../..');
}


# Skips the test unless the clients exist; makes sure certificates exist.
sub init
{
    my ($t, @progs) = @_;

    $t->skip_unless_bin;
    $t->has_prog('openssl', 'gnutls-cli', @progs);
    $t->has('tls');
    certs();
    return $t;
}


# For a test with an optional TLS part: true (and the certificates made)
# when the server is built with GnuTLS, the clients exist and there are
# certificates or certtool to make them; false otherwise, no skip.
sub optional
{
    my ($t, @progs) = @_;
    my ($rc, $out, $err) = $t->gannet('-V');
    my $certs = $ENV{GN_CERTS};
    my $have = defined $certs && $certs ne '' && -f "$certs/stamp";

    return 0 unless $rc == 0 && ($out . $err) =~ /gnutls/i;
    return 0 if grep { !defined GnTest::_which($_) } @progs;
    return 0 unless $have || defined GnTest::_which('certtool');
    certs();
    return 1;
}


# The certificate directory (made on first use).
sub certs
{
    my ($d, $rc, $out);

    return $CERTS if defined $CERTS;

    $d = $ENV{GN_CERTS};
    if (defined $d && $d ne '' && -f "$d/stamp") {
        $CERTS = $d;
        return $CERTS;
    }

    if (!defined GnTest::_which('certtool')) {
        Test::More::plan(skip_all => 'no certificates and no certtool');
    }

    $d = tempdir('gannet-certs-XXXXXXXX', TMPDIR => 1,
                 CLEANUP => !$ENV{TEST_GN_LEAVE});
    $out = `sh '@{[srcdir()]}/t/mkcerts.sh' '$d' 2>&1`;
    $rc = $?;
    if ($rc != 0 || !-f "$d/stamp") {
        Test::More::BAIL_OUT("t/mkcerts.sh $d failed: $out");
    }
    $ENV{GN_CERTS} = $d;
    $CERTS = $d;
    return $CERTS;
}


sub ca { return certs() . '/ca.pem'; }


# A file in the test dir holding $content (for a client's stdin).
sub stdin_file
{
    my ($t, $content) = @_;
    my $rel = 'stdin.' . md5_hex($content);
    my $path = $t->testdir . "/$rel";

    $t->write_file($rel, $content) unless -f $path;
    return $path;
}


# The HTTP request sent by the clients.  Options: host (Host header,
# default localhost; '' none), path (default /), keepalive.
sub request
{
    my (%o) = @_;
    my $path = $o{path} // '/';
    my $host = $o{host} // 'localhost';
    my $r = "GET $path HTTP/1.1\r\n";

    $r .= "Host: $host\r\n" if $host ne '';
    $r .= "Connection: close\r\n" unless $o{keepalive};
    return "$r\r\n";
}


# Picks the first HTTP response out of a client's output.
sub parse_http
{
    my ($out, $r) = @_;

    $r->{status} = undef;
    $r->{body} = undef;
    return $r unless $out =~ m{(HTTP/1\.[01]) (\d{3})[^\r\n]*\r\n}g;
    $r->{status} = $2;
    my $hstart = pos($out);
    my $hend = index($out, "\r\n\r\n", $hstart - 2);
    return $r if $hend < 0;
    my $head = substr($out, $hstart, $hend + 2 - $hstart);
    $r->{head} = $head;
    my %h;
    for my $l (split /\r\n/, $head) {
        $h{lc $1} = $2 if $l =~ /^([^:]+):\s*(.*)$/;
    }
    $r->{headers} = \%h;
    if (defined $h{'content-length'}) {
        $r->{body} = substr($out, $hend + 4, $h{'content-length'});
    } else {
        $r->{body} = substr($out, $hend + 4);
    }
    return $r;
}


# openssl s_client.  Options:
#   port (default PORT_0), servername (default localhost; undef or ''
#   -> -noservername), tls ('1.2', '1.3', '1.1', ... -> -tls1_2 ...),
#   request (bytes for stdin; default request(host => servername // localhost,
#   path => path); undef -> none, s_client quits after the handshake),
#   sess_in, sess_out, alpn, cipher, args (array ref), timeout (default 8),
#   shell_stdin (a sh command whose output is piped into s_client; the
#   command letters stay enabled, e.g. "printf 'R\\n'; sleep 2").
# Returns a hash: rc, out, err, all (out . err), reused (1/0/undef),
# protocol, cipher, alpn (undef: none), subject_cn, verify_ok, status, body,
# headers.
sub s_client
{
    my ($t, %o) = @_;
    my $port = $o{port} // $t->port(0);
    my $sn = exists $o{servername} ? $o{servername} : 'localhost';
    my (@cmd, $stdin, %r);

    @cmd = ('openssl', 's_client', '-connect', "127.0.0.1:$port",
            '-CAfile', ca());
    if (defined $sn && $sn ne '') {
        push @cmd, '-servername', $sn;
    } else {
        push @cmd, '-noservername';
    }
    if ($o{tls}) {
        (my $v = $o{tls}) =~ tr/./_/;
        push @cmd, "-tls$v";
    }
    push @cmd, '-sess_in', $o{sess_in} if $o{sess_in};
    push @cmd, '-sess_out', $o{sess_out} if $o{sess_out};
    push @cmd, '-alpn', $o{alpn} if $o{alpn};
    push @cmd, '-cipher', $o{cipher} if $o{cipher};
    push @cmd, @{$o{args}} if $o{args};

    if (defined $o{shell_stdin}) {
        my $q = join(' ', map { "'$_'" } @cmd);
        @cmd = ('sh', '-c', "($o{shell_stdin}) | $q");
    } else {
        my $req = exists $o{request}
                  ? $o{request}
                  : request(host => (defined $sn && $sn ne '' ? $sn
                                                             : 'localhost'),
                            path => $o{path});
        if (defined $req) {
            push @cmd, '-ign_eof', '-nocommands';
            $stdin = stdin_file($t, $req);
        } else {
            push @cmd, '-no_ign_eof';
        }
    }

    my ($rc, $out, $err) = $t->run_client(\@cmd, timeout => $o{timeout} // 8,
                                          defined $stdin ? (stdin => $stdin)
                                                         : ());
    %r = (rc => $rc, out => $out, err => $err, all => "$out\n$err",
          cmd => "@cmd");

    if ($out =~ /^(New|Reused), (\S+), Cipher is (\S+)/m) {
        $r{reused} = $1 eq 'Reused' ? 1 : 0;
        $r{protocol} = $2;
        $r{cipher} = $3;
        $r{protocol} = undef if $r{protocol} eq '(NONE)';
        $r{cipher} = undef if $r{cipher} eq '(NONE)';
    }
    $r{alpn} = $1 if $out =~ /^ALPN protocol: (\S+)/m;
    $r{subject_cn} = $1 if $out =~ /^subject=.*?CN\s*=\s*([^,\n]+)/m;
    $r{verify_ok} = $out =~ /^Verification: OK/m ? 1 : 0;
    $r{handshake} = defined $r{cipher} ? 1 : 0;
    parse_http($out, \%r);
    return \%r;
}


# gnutls-cli.  Options: port, host (SNI and verified name, default
# localhost; the client connects to 127.0.0.1), priority, resume (adds
# --resume --waitresumption), alpn, args, request (default a GET for host),
# timeout.  Returns a hash: rc, out, err, all, resumed, description,
# protocol (TLS1.2 ...), alpn, status, body.
sub gnutls_cli
{
    my ($t, %o) = @_;
    my $port = $o{port} // $t->port(0);
    my $host = $o{host} // 'localhost';
    my (@cmd, %r);

    @cmd = ('gnutls-cli', '--x509cafile', ca(), '-p', $port);
    push @cmd, "--priority=$o{priority}" if $o{priority};
    push @cmd, '--resume', '--waitresumption' if $o{resume};
    push @cmd, "--alpn=$o{alpn}" if $o{alpn};
    push @cmd, @{$o{args}} if $o{args};
    push @cmd, "--sni-hostname=$host", "--verify-hostname=$host",
         '127.0.0.1';

    my $req = exists $o{request} ? $o{request} : request(host => $host);
    my ($rc, $out, $err) = $t->run_client(\@cmd, timeout => $o{timeout} // 8,
        defined $req ? (stdin => stdin_file($t, $req)) : ());
    %r = (rc => $rc, out => $out, err => $err, all => "$out\n$err",
          cmd => "@cmd");
    $r{resumed} = $out =~ /^\*\*\* This is a resumed session/m ? 1 : 0;
    my @d = $out =~ /^- Description: (.*)$/mg;
    $r{description} = $d[-1];
    $r{protocol} = $1 if defined $r{description}
                         && $r{description} =~ /^\((TLS[\d.]+)-/;
    $r{alpn} = $1 if $out =~ /^- Application protocol: (\S+)/m;
    $r{handshake} = $out =~ /^- Handshake was completed/m ? 1 : 0;
    parse_http($out, \%r);
    return \%r;
}


# curl over TLS.  Options: port, host (default localhost), path, args.
# Returns a hash: rc, status, body, err.
sub curl
{
    my ($t, %o) = @_;
    my $port = $o{port} // $t->port(0);
    my $host = $o{host} // 'localhost';
    my $path = $o{path} // '/';
    my $body = $t->testdir . '/curl.body';
    my (@cmd, %r);

    unlink $body;
    @cmd = ('curl', '-sS', '--max-time', '8', '--cacert', ca(),
            '--resolve', "$host:$port:127.0.0.1", '-o', $body,
            '-w', '%{http_code}', @{$o{args} // []},
            "https://$host:$port$path");
    my ($rc, $out, $err) = $t->run_client(\@cmd, timeout => 12);
    %r = (rc => $rc, status => $out, err => $err, cmd => "@cmd",
          body => $t->read_file($body));
    return \%r;
}


# The access log lines (LOG_FORMAT) as hashes: pid proto cipher resumed sni
# status uri.
sub log_lines
{
    my ($t, $file) = @_;
    my $log = $t->read_file($file // 'logs/access.log') // '';
    my @l;

    for my $line (split /\n/, $log) {
        my @f = split / /, $line;
        next unless @f >= 8;
        push @l, { pid => $f[0], proto => $f[1], cipher => $f[2],
                   resumed => $f[3], sni => $f[4], status => $f[5],
                   method => $f[6], uri => $f[7], line => $line };
    }
    return @l;
}


# Waits until the log has at least $n lines; returns them.
sub wait_lines
{
    my ($t, $file, $n, $timeout) = @_;
    my $end = time() + GnTest::slow($timeout // 5);
    my @l;

    while (1) {
        @l = log_lines($t, $file);
        return @l if @l >= $n || time() > $end;
        sleep(0.05);
    }
}


# Log lines whose uri is $uri (exact) or matches $uri (a regexp).
sub lines_for
{
    my ($t, $file, $uri) = @_;

    return grep { ref $uri ? $_->{uri} =~ $uri : $_->{uri} eq $uri }
           log_lines($t, $file);
}


# Reloads with SIGHUP and waits for "reload complete" and for the new
# generation's children (not in @old); returns the new children.
sub reload
{
    my ($t, $n, @old) = @_;
    my $from = length $t->error_log;

    $t->signal('HUP');
    my $ok = $t->wait_log(qr/reload complete/, 10, undef, $from);
    Test::More::diag("no 'reload complete' after SIGHUP") unless $ok;
    return $t->wait_children($n, 15, not => \@old);
}


# ->done for every instance but the last one of a test file: stops the
# server and adds the log checks, without done_testing (and keeps the
# test file's alarm running).
sub finish
{
    my ($t) = @_;
    my $left = alarm(0);

    {
        no warnings 'redefine';
        local *Test::More::done_testing = sub { return 1; };
        $t->done;
    }
    alarm($left > 0 ? $left : GnTest::slow(60));
    return $t;
}


# A relay process between a client and 127.0.0.1:$to, listening on
# 127.0.0.1:$listen, that reshapes the client's bytes (the server's pass
# back as they come), for the connections it accepts within 60 s:
#   bytes => $delay     each byte its own TCP segment, $delay s apart:
#                       every record arrives cut at every byte
#   coalesce => $wait   what arrives within $wait s of a first byte
#                       leaves in one write: records the client sent
#                       one after the other reach the server together
# Returns the pid (kill TERM and waitpid it).
sub relay
{
    my ($listen, $to, %o) = @_;
    my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
                                  LocalPort => $listen, Listen => 5,
                                  ReuseAddr => 1, Proto => 'tcp')
        or die "relay listen: $!";
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid) {
        close $l;
        return $pid;
    }
    $SIG{ALRM} = sub { POSIX::_exit(0) };
    alarm(GnTest::slow(60));
    while (my $c = $l->accept) {
        my $u = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                      PeerPort => $to, Proto => 'tcp')
            or last;
        setsockopt($u, Socket::IPPROTO_TCP(), Socket::TCP_NODELAY(), 1);
        setsockopt($c, Socket::IPPROTO_TCP(), Socket::TCP_NODELAY(), 1);
        my ($rin, $open) = ('', 2);
        vec($rin, fileno($c), 1) = 1;
        vec($rin, fileno($u), 1) = 1;
        while ($open == 2) {
            select(my $rout = $rin, undef, undef, undef);
            if (vec($rout, fileno($c), 1)) {
                my $k = sysread($c, my $b, 65536);
                if (!$k) { shutdown($u, 1); $open--; last; }
                if (defined $o{bytes}) {
                    for my $i (0 .. length($b) - 1) {
                        syswrite($u, substr($b, $i, 1)) or last;
                        sleep($o{bytes});
                    }
                    next;
                }
                if (defined $o{coalesce}) {
                    my $cin = '';
                    vec($cin, fileno($c), 1) = 1;
                    my $end = time() + $o{coalesce};
                    while ((my $left = $end - time()) > 0) {
                        last unless select(my $cout = $cin, undef, undef,
                                           $left);
                        my $m = sysread($c, $b, 65536, length $b);
                        last unless $m;
                    }
                }
                syswrite($u, $b);
            }
            if (vec($rout, fileno($u), 1)) {
                my $k = sysread($u, my $b, 65536);
                if (!$k) { $open--; last; }
                syswrite($c, $b);
            }
        }
        close $c;
        close $u;
    }
    POSIX::_exit(0);
}


1;
