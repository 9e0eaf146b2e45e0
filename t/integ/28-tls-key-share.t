#!/usr/bin/perl

# TLS 1.3 key shares: a client whose key share is for one of the server's
# groups gets that group at once, with no HelloRetryRequest, even when the
# server prefers another group the client also supports; the server's own
# order still decides among several shares, and a client with no usable
# share is asked for the server's first group.  Per server block (SNI),
# with that block's groups.  TLS 1.2 keeps the server's order.  Malformed
# key_share extensions get an alert, and the child lives on.

use strict;
use warnings;

use Test::More;
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 60);
GnTLS::init($t);

$t->write_conf(<<"EOF");
children 1;
user %%USER%%;
types { text/html html; }

server {
    listen 127.0.0.1:%%PORT_0%% tls default_server;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
}

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name other.test;
    tls_certificate %%CERTS%%/other.pem;
    tls_certificate_key %%CERTS%%/other.key;
    tls_priority "-GROUP-ALL:+GROUP-SECP384R1:+GROUP-SECP256R1";
    root html;
}
EOF

$t->write_file('html/index.html', "hello\n");
$t->run;

# s_client with -groups LIST (it sends one key share: the first group's);
# returns (number of ClientHellos it sent, the group, the result).
sub hello
{
    my ($groups, %o) = @_;
    my $r = GnTLS::s_client($t, args => ['-groups', $groups, '-msg'], %o);
    my $n = () = $r->{out} =~ /^>>> .*ClientHello/mg;
    my ($g) = $r->{out} =~ /^Server Temp Key: (?:ECDH, )?([^,\s]+)/m;
    return ($n, $g // '-', $r);
}

my @cases = (
    # client's groups, SNI, expected group, ClientHellos, why
    ['X25519:P-256',       'localhost',  'X25519',     1, 'our first group'],
    ['P-256:X25519',       'localhost',  'prime256v1', 1, 'a P-256 share'],
    ['P-384:X25519',       'localhost',  'secp384r1',  1, 'a P-384 share'],
    ['P-521:P-256:X25519', 'localhost',  'X25519',     2,
     'no share for our groups: retry for X25519'],
    ['P-256:P-384',        'other.test', 'prime256v1', 1,
     'SNI server with P-384 first, a P-256 share'],
    ['X25519:P-384',       'other.test', 'secp384r1',  2,
     'SNI server without X25519: retry for its P-384'],
);

for my $c (@cases) {
    my ($groups, $sn, $want, $nhello, $why) = @$c;
    my ($n, $g, $r) = hello($groups, tls => '1.3', servername => $sn);
    is($r->{status}, 200, "TLSv1.3 $groups to $sn: 200")
        or diag($r->{all});
    is($g, $want, "TLSv1.3 $groups to $sn: $want ($why)");
    is($n, $nhello, "TLSv1.3 $groups to $sn: $nhello ClientHello(s)");
}

# Resumption with a P-256 share: the ticket resumes, no retry.
my $sess = $t->testdir . '/p256.sess';
my ($n, $g, $r) = hello('P-256:X25519', tls => '1.3', sess_out => $sess);
is($r->{reused}, 0, 'P-256 share: full handshake, session saved');
($n, $g, $r) = hello('P-256:X25519', tls => '1.3', sess_in => $sess);
is($r->{reused}, 1, 'P-256 share: resumed');
is($g, 'prime256v1', 'P-256 share: resumed with P-256');
is($n, 1, 'P-256 share: resumed without a retry');

# TLS 1.2 has no key shares: the server's order decides.
($n, $g, $r) = hello('P-256:X25519', tls => '1.2');
is($g, 'X25519', 'TLSv1.2 P-256:X25519: the server\'s X25519');
is($r->{status}, 200, 'TLSv1.2 P-256:X25519: 200');

# Raw ClientHellos: key_share extensions (51) well formed or lying about
# their lengths.
sub client_hello
{
    my ($key_share) = @_;
    my $ext = '';
    my $e = sub { $ext .= pack('nn/a*', @_) };

    $e->(43, pack('C/a*', pack('n', 0x0304)));          # supported_versions
    $e->(10, pack('n/a*', pack('n*', 0x0a0a, 29, 23))); # supported_groups
    $e->(13, pack('n/a*', pack('n*', 0x0403)));         # signature_algorithms
    $e->(0, pack('n/a*', pack('Cn/a*', 0, 'localhost'))); # server_name
    $ext .= pack('n', 51) . $key_share;

    my $body = pack('n', 0x0303) . ('r' x 32) . pack('C/a*', 's' x 32)
               . pack('n/a*', pack('n', 0x1301)) . pack('C/a*', "\0")
               . pack('n/a*', $ext);
    my $hs = pack('C', 1) . substr(pack('N', length $body), 1) . $body;
    return pack('Cnn', 22, 0x0301, length $hs) . $hs;
}

my $x = 'k' x 32;
my %raw = (
    'GREASE share then X25519' =>
        [pack('n/a*', pack('n/a*', pack('nn/a*', 0x0a0a, "\0")
                                   . pack('nn/a*', 29, $x))), 'hello'],
    'share longer than the list' =>
        [pack('n/a*', pack('n/a*', pack('nn', 29, 200) . $x)), 'alert'],
    'list longer than the extension' =>
        [pack('n/a*', pack('n', 300) . pack('nn/a*', 29, $x)), 'alert'],
    'extension shorter than its list length' =>
        [pack('n', 1) . "\0", 'alert'],
    'five shares' =>
        [pack('n/a*', pack('n/a*', join('', map { pack('nn/a*', 0x1a1a + $_,
                                                        "\0") } 0 .. 3)
                                   . pack('nn/a*', 29, $x))), 'hello'],
);

for my $name (sort keys %raw) {
    my ($ks, $want) = @{$raw{$name}};
    my $resp = $t->http_raw(client_hello($ks), shutdown => 1, timeout => 5);
    my ($type, $hs) = length $resp >= 6 ? unpack('C x4 C', $resp) : ();
    if ($want eq 'hello') {
        ok(defined $type && $type == 22 && $hs == 2,
           "raw ClientHello, $name: a ServerHello")
            or diag(unpack('H*', substr($resp, 0, 16)));
    } else {
        ok(!defined $type || $type == 21,
           "raw ClientHello, $name: an alert or a close")
            or diag(unpack('H*', substr($resp, 0, 16)));
    }
}

# The child that read all of that still serves.
($n, $g, $r) = hello('P-256:X25519', tls => '1.3');
is($r->{status}, 200, 'after the raw hellos: 200');
unlike($t->error_log, qr/signal/, 'no child was killed by a signal');

$t->done;
