#!/usr/bin/perl

# The TLS transport under the records: how the client's bytes are cut into
# TCP segments is not how they are cut into records, and the server reads
# ahead of what GnuTLS asks for.  Every cut is answered the same:
#   - two requests as two records in one segment, and in one record
#     (pipelining), after TLS 1.2 and TLS 1.3 handshakes;
#   - a request record whose header and body arrive apart, and one whose
#     every byte is its own segment;
#   - a whole connection (handshake included) relayed one byte per
#     segment;
#   - a 200 KB request body in 16 KB records, echoed byte for byte;
#   - a client that stops reading gets a 4 MB module response and a 4 MB
#     file whole, in order, on one connection;
#   - a 300 KB response on a closing connection arrives whole, followed by
#     the server's close_notify (the last records, the alert and the FIN
#     leave together), and also to a client that asks for 512-byte
#     records;
#   - plain HTTP on the TLS port still gets its 400.

use strict;
use warnings;

use Test::More;
use IO::Socket::INET;
use Socket qw(IPPROTO_TCP);
use Time::HiRes qw(sleep time);
use GnTest;
use GnTLS;

use constant TCP_CORK => 3;         # linux/tcp.h

my $t = GnTest->new(timeout => 180);
GnTLS::init($t);
eval { require IO::Socket::SSL; 1 }
    or plan(skip_all => 'IO::Socket::SSL (libio-socket-ssl-perl) not found');

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => "mod_example not built")
    unless -f "$ENV{GN_MODDIR}/mod_example.so";

$t->write_conf(<<'EOF');
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_example.so;

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    client_max_body_size 8m;
    location /example/ {
        handler example;
        example_max_echo 8m;
    }
}
EOF

# bytes that say where they are: a short read or a shifted copy shows
my $big = join('', map { sprintf("%07d\n", $_) } 0 .. 300 * 1024 / 8 - 1);
$t->write_file('html/a.txt', "first\n");
$t->write_file('html/b.txt', "second\n");
$t->write_file('html/big.bin', $big);
# 4 MB: more than the socket buffers of both ends hold
my $huge = join('', map { sprintf("%015d\n", $_) } 0 .. 4 * 1024 * 1024 / 16 - 1);
$t->write_file('html/huge.bin', $huge);

$t->run;

my $port = $t->port(0);

sub tls_connect
{
    my (%o) = @_;
    my $s = IO::Socket::SSL->new(
        PeerAddr => '127.0.0.1', PeerPort => $o{port} // $port,
        SSL_version => $o{version} // 'TLSv1_2:TLSv1_3',
        SSL_ca_file => GnTLS::ca(), SSL_hostname => 'localhost',
        SSL_verifycn_name => 'localhost', SSL_verifycn_scheme => 'http',
        Timeout => GnTest::slow(10));
    diag("TLS connect: " . IO::Socket::SSL::errstr()) unless $s;
    return $s;
}

sub get
{
    my ($path, %o) = @_;
    return "GET $path HTTP/1.1\r\nHost: localhost\r\n"
           . ($o{close} ? "Connection: close\r\n" : '') . "\r\n";
}

# Reads until n whole responses (Content-Length) are in, or EOF. Returns
# (list of [status, body], eof: 1 clean close_notify, 0 none yet,
# -1 error).
sub responses
{
    my ($s, $n, %o) = @_;
    my ($buf, @r, $eof) = ('');

    $eof = 0;
    while (@r < $n || $o{to_eof}) {
        while ($buf =~ /\A(HTTP\/1\.1 (\d{3})[^\r\n]*\r\n(.*?)\r\n\r\n)/s) {
            my ($head, $st, $h) = ($1, $2, $3);
            last unless $h =~ /^content-length:\s*(\d+)/mi;
            my $len = $1;
            last if length($buf) < length($head) + $len;
            push @r, [$st, substr($buf, length($head), $len)];
            substr($buf, 0, length($head) + $len) = '';
        }
        last if @r >= $n && !$o{to_eof};
        my $k = $s->sysread(my $chunk, 65536);
        if (!defined $k) {
            $eof = -1;
            last;
        }
        if ($k == 0) {
            $eof = 1;
            last;
        }
        $buf .= $chunk;
    }
    return (\@r, $eof);
}

sub cork
{
    my ($s, $on) = @_;
    setsockopt($s, IPPROTO_TCP, TCP_CORK, $on ? 1 : 0);
}

for my $v ('TLSv1_2', 'TLSv1_3') {
    my $s = tls_connect(version => $v);
    ok($s, "$v: handshake") or next;

    # two records in one segment
    cork($s, 1);
    $s->syswrite(get('/a.txt'));
    $s->syswrite(get('/b.txt'));
    cork($s, 0);
    my ($r) = responses($s, 2);
    is(scalar(@$r), 2, "$v: two records in one segment: two responses");
    is(join('|', map { "$_->[0] $_->[1]" } @$r), "200 first\n|200 second\n",
       "$v: two records in one segment: in order");

    # two requests in one record
    $s->syswrite(get('/b.txt') . get('/a.txt'));
    ($r) = responses($s, 2);
    is(join('|', map { "$_->[0] $_->[1]" } @$r), "200 second\n|200 first\n",
       "$v: two requests in one record: both answered, in order");

    # and the connection goes on
    $s->syswrite(get('/a.txt'));
    ($r) = responses($s, 1);
    is($r->[0][1], "first\n", "$v: keep-alive after pipelining");
    $s->close(SSL_no_shutdown => 1);
}

# Through a relay that passes the client's bytes on one per TCP segment.
my $rport = $t->port(1);
my $rpid = GnTLS::relay($rport, $port, bytes => 0.001);

for my $v ('TLSv1_2', 'TLSv1_3') {
    my $s = tls_connect(version => $v, port => $rport);
    ok($s, "$v: handshake, every byte its own segment") or next;
    $s->syswrite(get('/a.txt'));
    my ($r) = responses($s, 1);
    is($r->[0][1], "first\n",
       "$v: a request, every byte its own segment: answered");
    $s->syswrite(get('/b.txt', close => 1));
    ($r, my $eof) = responses($s, 1, to_eof => 1);
    is($r->[0][1], "second\n", "$v: the next one too, then the close");
    is($eof, 1, "$v: close_notify through the relay");
    $s->close(SSL_no_shutdown => 1);
}
kill('TERM', $rpid);
waitpid($rpid, 0);

# Whole records, more than the read-ahead holds, in one burst: a request
# body of 200 KB in 16 KB records.
{
    my $s = tls_connect(version => 'TLSv1_2');
    my $body = substr($big, 0, 200 * 1024);
    my $req = "POST /example/echo HTTP/1.1\r\nHost: localhost\r\n"
              . "Content-Length: " . length($body) . "\r\n\r\n";
    cork($s, 1);
    $s->syswrite($req);
    for (my $off = 0; $off < length($body); $off += 16384) {
        $s->syswrite(substr($body, $off, 16384));
    }
    cork($s, 0);
    my ($r) = responses($s, 1);
    is($r->[0][0], 200, 'a 200 KB body in 16 KB records: 200');
    my $want = 'read ' . length($body) . " bytes: $body\n";
    ok(defined $r->[0][1] && $r->[0][1] eq $want,
       'a 200 KB body in 16 KB records: echoed byte for byte')
        or diag('got ' . length($r->[0][1] // '') . ' bytes');
    $s->close(SSL_no_shutdown => 1);
}

# The last response of a closing connection: all of it, then close_notify.
for my $v ('TLSv1_2', 'TLSv1_3') {
    my $s = tls_connect(version => $v);
    $s->syswrite(get('/big.bin', close => 1));
    my ($r, $eof) = responses($s, 1, to_eof => 1);
    ok(@$r == 1 && $r->[0][0] == 200 && $r->[0][1] eq $big,
       "$v: 300 KB on a closing connection: all of it")
        or diag('got ' . length($r->[0][1] // '') . ' bytes');
    is($eof, 1, "$v: then the server's close_notify");
    $s->close(SSL_no_shutdown => 1);
}

# A client that stops reading: the server's sends fill the socket and
# GnuTLS keeps the record it could not send; each later send finishes it
# first.  A 4 MB echo (a module's memory: the writev path), then a 4 MB
# file (the sendfile path) on one keep-alive connection, read with pauses
# through a small receive buffer; then a small request, to show that the
# connection is still in step.
for my $v ('TLSv1_2', 'TLSv1_3') {
    my $raw = $t->connect(rcvbuf => 8192);
    my $s = $raw && IO::Socket::SSL->start_SSL($raw,
        SSL_version => $v, SSL_ca_file => GnTLS::ca(),
        SSL_hostname => 'localhost', SSL_verifycn_name => 'localhost',
        SSL_verifycn_scheme => 'http', Timeout => GnTest::slow(10));
    ok($s, "$v, slow reader: handshake") or next;

    # one response, read 4 KB at a time after a pause, and pausing again
    # every 256 KB: [status, body]
    my $slow = sub {
        my ($buf, $next) = ('', 256 * 1024);
        sleep(0.3);                          # let the server hit the wall
        while (1) {
            if ($buf =~ /\A(HTTP\/1\.1 (\d{3})[^\r\n]*\r\n(.*?)\r\n\r\n)/s) {
                my ($head, $st, $h) = ($1, $2, $3);
                my ($len) = $h =~ /^content-length:\s*(\d+)/mi;
                return [$st, substr($buf, length($head), $len)]
                    if defined $len && length($buf) >= length($head) + $len;
            }
            my $k = $s->sysread(my $chunk, 4096);
            return [0, ''] unless $k;
            $buf .= $chunk;
            if (length($buf) > $next) {
                sleep(0.05);
                $next += 256 * 1024;
            }
        }
    };

    my $body = $huge;
    my $post = "POST /example/echo HTTP/1.1\r\nHost: localhost\r\n"
               . 'Content-Length: ' . length($body) . "\r\n\r\n" . $body;
    for (my $off = 0; $off < length $post; ) {      # a record per write
        my $k = $s->syswrite($post, 16384, $off) or last;
        $off += $k;
    }
    my $r = $slow->();
    ok($r->[0] == 200 && $r->[1] eq 'read ' . length($body) . " bytes: $body\n",
       "$v, slow reader: a 4 MB echo, all of it in order")
        or diag('got ' . length($r->[1]) . ' bytes');

    $s->syswrite(get('/huge.bin'));
    $r = $slow->();
    ok($r->[0] == 200 && $r->[1] eq $huge,
       "$v, slow reader: a 4 MB file, all of it in order")
        or diag('got ' . length($r->[1]) . ' bytes');

    $s->syswrite(get('/a.txt'));
    $r = $slow->();
    is($r->[1], "first\n", "$v, slow reader: the connection goes on");
    $s->close(SSL_no_shutdown => 1);
}

# A client that asks for small records (max_fragment_length 512): every
# record the server sends is at most that, and none of the response is
# lost to a record GnuTLS cut shorter than what it was given.
for my $v ('1.2', '1.3') {
    my $r = GnTLS::s_client($t, tls => $v, args => ['-maxfraglen', '512'],
                            request => get('/big.bin', close => 1),
                            timeout => 20);
    is($r->{status}, 200, "TLSv$v, 512-byte records: 200")
        or diag($r->{err});
    ok(defined $r->{body} && $r->{body} eq $big,
       "TLSv$v, 512-byte records: 300 KB, all of it")
        or diag('got ' . length($r->{body} // '') . ' bytes');
}

# plain HTTP on the TLS port
{
    my $s = $t->connect;
    print $s get('/a.txt', close => 1);
    my $out = join('', <$s>);
    like($out, qr{^HTTP/1\.1 400 }, 'plain HTTP on the TLS port: 400');
}

$t->done;
