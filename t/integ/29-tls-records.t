#!/usr/bin/perl

# TLS records a normal client never sends (issue 17, items 1-4), through
# t/lib/tlsraw.py (a TLS 1.3 client of the test's own, from RFC 8446):
#
# 1. A TLS read never waits for an edge that already came: a ClientHello
#    cut into 1-byte or 20-byte records, one of 40 KB (and of 64 KB in
#    1000-byte records) over several records, two KeyUpdates in one
#    record, zero-length records between handshake records: each
#    completes (or gets its alert) at once, not at the header timeout.
# 2. A failed handshake says why: protocol_version, inappropriate_fallback,
#    decode_error, illegal_parameter, handshake_failure.
# 3. Errors after the handshake get their fatal alert, not close_notify:
#    KeyUpdates malformed or out of place, a ChangeCipherSpec after
#    Finished, records over 2^14 of plaintext or 2^14+256 of ciphertext,
#    a bad record MAC; and the client reads the alert, then a clean end,
#    not a reset.
# 4. Renegotiation (TLS 1.2) is refused with a warning; the request in
#    flight is answered.

use strict;
use warnings;

use Test::More;
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 150);
GnTLS::init($t);

my $PY = '/usr/bin/python3';
my $TOOL = GnTLS::srcdir() . '/t/lib/tlsraw.py';
plan(skip_all => "$PY with python3-cryptography is needed")
    unless -x $PY && system($PY, '-c', 'import cryptography') == 0;

$t->write_conf(<<'EOF');
children 1;
user %%USER%%;
types { text/html html; }
client_header_timeout 30s;

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
}
EOF

$t->write_file('html/index.html', "hello\n");
$t->run;

my $GET = 'data:GET /index.html HTTP/1.1\r\nHost: localhost\r\n'
          . 'Connection: close\r\n\r\n';

# Runs the tool; returns its events (hash refs) and a summary: the first
# alert ("level/name"), whether a 200 came, and how it ended.
sub tlsraw
{
    my (@args) = @_;
    my ($rc, $out, $err) = $t->run_client(
        [$PY, $TOOL, '--port', $t->port(0), '--timeout', GnTest::slow(5),
         @args], timeout => GnTest::slow(60));
    my (@ev, %s);
    for my $l (split /\n/, $out) {
        my %e = $l =~ /"(\w+)": "?([^",}]*)"?/g;
        push @ev, \%e;
        $s{alert} //= "$e{level}/$e{name}" if $e{ev} eq 'alert';
        $s{ok} = 1 if $e{ev} eq 'data' && ($e{text} // '') =~ /^HTTP\/1\.1 200/;
        $s{end} = $e{ev} if $e{ev} =~ /^(eof|reset|timeout|error)$/;
        $s{handshake} = 1 if $e{ev} eq 'handshake';
    }
    $s{end} //= "tool failed ($rc): $err";
    $s{alert} //= '-';
    return \%s;
}

# ---- 1. no read waits for an edge that came ------------------------------

my @complete = (
    ['a ClientHello in 1-byte records',            '--hello-frag', 1],
    ['a ClientHello in 20-byte records',           '--hello-frag', 20],
    ['a 40 KB ClientHello over three records',     '--hello-pad', 40000],
    ['a 64 KB ClientHello in 1000-byte records',
     '--hello-pad', 64000, '--hello-frag', 1000],
    ['a ClientHello in 7-byte records, one write each',
     '--hello-frag', 7, '--hello-write-each'],
    # the KeyUpdate and the request in one write: GnuTLS stops after the
    # KeyUpdate's record with the request already read ahead
    ['a KeyUpdate and the request in one write',
     '--actions-one-write', 'keyupdate'],
    ['a KeyUpdate asking for ours and the request in one write',
     '--actions-one-write', 'keyupdate-req'],
    ['two KeyUpdates in one record and the request, one write',
     '--actions-one-write', 'keyupdate2'],
    ['a KeyUpdate, then the request a moment later', 'keyupdate'],
);

for my $c (@complete) {
    my ($name, @args) = @$c;
    my $s = tlsraw(@args, $GET);
    ok($s->{ok}, "$name: 200 at once") or diag(explain($s));
    is($s->{end}, 'eof', "$name: then the server's clean close");
}

my @refused = (
    ['zero-length records between ClientHello fragments',
     ['--hello-frag', 37, '--hello-zero'], '2/unexpected_message'],
    ['a Finished and a KeyUpdate in one record',
     ['--finished-plus-keyupdate'], '2/unexpected_message'],

    # ---- 2. a failed handshake says why ---------------------------------
    ['only TLS 1.0 and 1.1 offered', ['--versions', '1.0,1.1'],
     '2/protocol_version'],
    ['TLS 1.2 with TLS_FALLBACK_SCSV', ['--versions', '1.2',
                                        '--fallback-scsv'],
     '2/inappropriate_fallback'],
    ['an X25519 key share of the wrong length', ['--bad-share'],
     '2/illegal_parameter'],
    ['only groups the server does not have', ['--groups', 'x448',
                                              '--share', 'x448'],
     '2/handshake_failure'],

    # ---- 3. errors after the handshake ----------------------------------
    ['a KeyUpdate of the wrong length', ['keyupdate-bad-len'],
     '2/decode_error'],
    ['a KeyUpdate with request_update 5', ['keyupdate-bad-val'],
     '2/illegal_parameter'],
    ['a ChangeCipherSpec after Finished', ['ccs'], '2/unexpected_message'],
    ['a record with 2^14+100 bytes of plaintext', ['big-plain'],
     '2/record_overflow'],
    ['a record of 2^14+257 bytes of ciphertext', ['big-cipher'],
     '2/record_overflow'],
    ['a record with a bad MAC', ['bad-mac'], '2/bad_record_mac'],
);

for my $c (@refused) {
    my ($name, $args, $want) = @$c;
    my $s = tlsraw(@$args, $GET);
    is($s->{alert}, $want, "$name: alert $want");
    ok(!$s->{ok}, "$name: no response");
    is($s->{end}, 'eof', "$name: the alert, then a clean end (no reset, "
                         . "no wait)");
}

# A ClientHello whose extensions claim more bytes than they have.
{
    my $ext = pack('nn/a*', 43, pack('C/a*', pack('n', 0x0304)));
    my $body = pack('n', 0x0303) . ('r' x 32) . pack('C/a*', 's' x 32)
               . pack('n/a*', pack('n', 0x1301)) . pack('C/a*', "\0")
               . pack('n', length($ext) + 40) . $ext;
    my $hs = pack('C', 1) . substr(pack('N', length $body), 1) . $body;
    my $s = tlsraw('--hello-hex',
                   unpack('H*', pack('Cnn', 22, 0x0301, length $hs) . $hs));
    is($s->{alert}, '2/decode_error', 'a ClientHello with a lying '
                                      . 'extensions length: decode_error');
    is($s->{end}, 'eof', 'a lying ClientHello: then a clean end');
}

# ---- 4. renegotiation refused with a warning -----------------------------

# openssl s_client: a request, then at once "R" (renegotiate): the answer
# comes, and the refusal is a warning.  (OpenSSL then gives up the
# connection itself: a warning no_renegotiation is fatal to its client.)
{
    # s_client takes "R" only as a line read by itself, and quits at the
    # end of its input: the lines come a moment apart
    my $port = $t->port(0);
    my ($rc, $out, $err) = $t->run_client(
        ['sh', '-c', "(printf 'GET /index.html HTTP/1.1\\r\\nHost: "
                     . "localhost\\r\\n\\r\\n'; sleep 0.5; echo R; "
                     . "sleep 1.5) | openssl s_client -tls1_2 -msg -connect "
                     . "127.0.0.1:$port -servername localhost"],
        timeout => GnTest::slow(20));
    like($out, qr{^HTTP/1\.1 200 OK}m, 'TLS 1.2 renegotiation after a '
                                       . 'request: the request is answered');
    like($out, qr{^<<< TLS 1\.2, Alert \[length 0002\], warning no_renegotiation}m,
         'TLS 1.2 renegotiation: refused with a warning alert');
    unlike($out, qr{^<<< .*Alert.*fatal}m, 'TLS 1.2 renegotiation: no fatal '
                                           . 'alert from the server');
}

# gnutls-cli --rehandshake tries again and again: every try gets the
# warning, and the connection is never ended by the server.
{
    my ($rc, $out, $err) = $t->run_client(
        ['gnutls-cli', '--insecure', '--rehandshake', '--priority',
         'NORMAL:-VERS-TLS1.3', '-p', $t->port(0), '127.0.0.1'],
        stdin => '/dev/null', timeout => GnTest::slow(20));
    my $all = "$out\n$err";
    my $warn = () = $all =~ /Received alert \[100\]/g;
    ok($warn >= 1, "gnutls-cli --rehandshake: no_renegotiation warnings "
                   . "($warn)");
    unlike($all, qr/Received alert \[(?!100\])\d+\]/,
           'gnutls-cli --rehandshake: no other alert');
}

# The child that read all of this still serves, and no wait met the
# header timeout.
my $s = tlsraw($GET);
ok($s->{ok}, 'after all of that: 200');
unlike($t->error_log, qr/client timed out/, 'no connection waited for the '
                                           . 'header timeout');
unlike($t->error_log, qr/signal/, 'no child was killed by a signal');

$t->done;
