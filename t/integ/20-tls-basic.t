#!/usr/bin/perl

# TLS basics: handshake and GET with openssl s_client, gnutls-cli and curl,
# TLS 1.2 and 1.3, with an ECDSA and an RSA certificate (and both side by
# side); ALPN; plain HTTP to a TLS port; the handshake counts against
# client_header_timeout; old protocols, CBC and non-forward-secret suites
# refused; client-initiated renegotiation refused; the access log
# variables $tls_protocol $tls_cipher $tls_resumed $tls_sni.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 90);
GnTLS::init($t, 'curl');

my $lf = $GnTLS::LOG_FORMAT;

$t->write_conf(<<"EOF");
children 2;
user %%USER%%;
error_log logs/error.log info;
$lf

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    access_log logs/access.log tls;
    client_header_timeout 2s;
    types { text/html html; }
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-rsa.pem;
    tls_certificate_key %%CERTS%%/localhost-rsa.key;
    root html;
    access_log logs/access.log tls;
    types { text/html html; }
}

server {
    listen 127.0.0.1:%%PORT_2%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    tls_certificate %%CERTS%%/localhost-rsa.pem;
    tls_certificate_key %%CERTS%%/localhost-rsa.key;
    root html;
    access_log logs/access.log tls;
    types { text/html html; }
}

server {
    listen 127.0.0.1:%%PORT_3%% tls;
    server_name localhost;
    tls_protocols TLSv1.3;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    types { text/html html; }
}
EOF

my $body = "hello over tls\n";
$t->write_file('html/index.html', $body);
$t->write_file('html/big.html', 'x' x 300000);

my ($rc, $out, $err) = $t->gannet('-t', '-p', $t->testdir . '/',
                                  '-c', $t->conf_path);
is($rc, 0, 'gannet -t accepts the TLS configuration')
    or diag($err);

$t->run;

my %port = (ec => $t->port(0), rsa => $t->port(1));
my $r;

# ---- the three clients, both protocols, both key types ----------------------

for my $kt (qw(ec rsa)) {
    my $p = $port{$kt};
    my $kx = $kt eq 'ec' ? 'ECDSA' : 'RSA';

    for my $v ('1.2', '1.3') {
        my $pname = "TLSv$v";

        $r = GnTLS::s_client($t, port => $p, tls => $v, path => "/?s$kt$v");
        is($r->{protocol}, $pname, "s_client $kt $pname: handshake")
            or diag($r->{all});
        ok($r->{verify_ok}, "s_client $kt $pname: certificate verified");
        is($r->{status}, 200, "s_client $kt $pname: 200");
        is($r->{body}, $body, "s_client $kt $pname: body");
        if ($v eq '1.2') {
            like($r->{cipher} // '', qr/^ECDHE-$kx-(AES\d+-GCM|CHACHA20)/,
                 "s_client $kt TLSv1.2: ECDHE-$kx AEAD suite");
        } else {
            like($r->{cipher} // '', qr/^TLS_/,
                 "s_client $kt TLSv1.3: TLS 1.3 suite");
        }

        $r = GnTLS::gnutls_cli($t, port => $p,
            priority => "NORMAL:-VERS-ALL:+VERS-TLS$v");
        is($r->{protocol}, "TLS$v", "gnutls-cli $kt TLS$v: handshake")
            or diag($r->{all});
        is($r->{status}, 200, "gnutls-cli $kt TLS$v: 200");
        is($r->{body}, $body, "gnutls-cli $kt TLS$v: body");

        $r = GnTLS::curl($t, port => $p, path => "/?c$kt$v",
                         args => ["--tlsv$v", '--tls-max', $v]);
        is($r->{status}, '200', "curl $kt TLSv$v: 200") or diag($r->{err});
        is($r->{body}, $body, "curl $kt TLSv$v: body");
    }
}

# A large response (many records, partial writes).
$r = GnTLS::curl($t, path => '/big.html');
is($r->{status}, '200', 'curl: 300 kB file: 200');
is(length($r->{body} // ''), 300000, 'curl: 300 kB file: complete');

# Keep-alive: two requests on one TLS connection.
$r = GnTLS::s_client($t, tls => '1.3',
    request => GnTLS::request(keepalive => 1) . GnTLS::request());
my @st = $r->{out} =~ m{^HTTP/1\.1 (\d{3})}mg;
is("@st", '200 200', 'two requests on one TLS connection');

# ---- ECDSA and RSA side by side ---------------------------------------------

$r = GnTLS::s_client($t, port => $t->port(2), tls => '1.2',
                     cipher => 'ECDHE-ECDSA-AES128-GCM-SHA256');
is($r->{cipher}, 'ECDHE-ECDSA-AES128-GCM-SHA256',
   'both certificates: an ECDSA-only client gets the ECDSA one')
    or diag($r->{all});
is($r->{status}, 200, 'both certificates: ECDSA client: 200');
$r = GnTLS::s_client($t, port => $t->port(2), tls => '1.2',
                     cipher => 'ECDHE-RSA-AES128-GCM-SHA256');
is($r->{cipher}, 'ECDHE-RSA-AES128-GCM-SHA256',
   'both certificates: an RSA-only client gets the RSA one')
    or diag($r->{all});
is($r->{status}, 200, 'both certificates: RSA client: 200');
$r = GnTLS::s_client($t, port => $t->port(2), tls => '1.3',
                     args => ['-sigalgs', 'rsa_pss_rsae_sha256']);
like($r->{out}, qr/^Peer signature type: RSA-PSS/m,
     'both certificates: TLS 1.3 client with RSA-PSS only gets the RSA one')
    or diag($r->{all});
is($r->{status}, 200, 'both certificates: TLS 1.3 RSA client: 200');

# ---- ALPN -------------------------------------------------------------------

$r = GnTLS::s_client($t, alpn => 'http/1.1');
is($r->{alpn}, 'http/1.1', 'ALPN http/1.1 negotiated') or diag($r->{out});
is($r->{status}, 200, 'ALPN http/1.1: 200');
$r = GnTLS::s_client($t, alpn => 'h2,http/1.1');
if (($ENV{GN_HTTP2} // '') eq 'yes') {
    is($r->{alpn}, 'h2', 'ALPN h2,http/1.1 offered: h2 chosen');
} else {
    is($r->{alpn}, 'http/1.1', 'ALPN h2,http/1.1 offered: http/1.1 chosen '
       . '(built without HTTP/2)');
}
$r = GnTLS::s_client($t);
like($r->{out}, qr/^No ALPN negotiated/m, 'no ALPN offered: none negotiated');
is($r->{status}, 200, 'client without ALPN: 200');
$r = GnTLS::gnutls_cli($t, alpn => 'http/1.1');
is($r->{alpn}, 'http/1.1', 'gnutls-cli: ALPN http/1.1') or diag($r->{out});

# ---- plain HTTP to the TLS port ---------------------------------------------

my ($resp, $closed) = $t->http_raw("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
                                   timeout => 5);
like($resp, qr{^HTTP/1\.1 400 }, 'plain HTTP to the TLS port: 400');
like($resp, qr/plain HTTP/i, 'plain HTTP to the TLS port: the body says so');
ok($closed, 'plain HTTP to the TLS port: connection closed');

# ---- the handshake counts against client_header_timeout (2s on PORT_0) ------

# The server says which timer closed a connection: "client timed out,
# while TLS handshaking" (info).
{
    my $timed_out = qr/\[info\] .*client timed out, while TLS handshaking/;
    my $from = length $t->error_log;
    my $s = $t->connect;
    # a TLS record header announcing a 512-byte handshake message, then
    # nothing more
    $t->write_all($s, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03");
    my ($b, $c) = $t->read_until_close($s, 8);
    ok($c, 'stalled ClientHello: connection closed');
    ok($t->wait_log($timed_out, 5, undef, $from),
       'stalled ClientHello: by client_header_timeout');
    close $s;

    $from = length $t->error_log;
    $s = $t->connect;
    ($b, $c) = $t->read_until_close($s, 8);
    ok($c, 'silent TCP connection closed');
    ok($t->wait_log($timed_out, 5, undef, $from),
       'silent TCP connection: by client_header_timeout');
    close $s;
}

# ---- what is refused --------------------------------------------------------

for my $v ('1.0', '1.1') {
    $r = GnTLS::gnutls_cli($t,
        priority => "NORMAL:-VERS-ALL:+VERS-TLS$v:%VERIFY_ALLOW_SHA1");
    ok(!$r->{handshake} && !defined $r->{status},
       "gnutls-cli TLS$v: refused") or diag($r->{all});
}

SKIP: {
    # Can the local openssl still send TLS 1.1?  Ask a local s_server.
    $r = GnTLS::s_client($t, tls => '1.1', request => undef,
                         args => ['-cipher', 'DEFAULT@SECLEVEL=0']);
    skip 'local openssl cannot send TLS 1.1', 2
        if $r->{all} =~ /no protocols available|unsupported protocol
                         |wrong ssl version/xi
           && $r->{all} !~ /alert/i;
    ok(!$r->{handshake}, 'openssl s_client -tls1_1: refused')
        or diag($r->{all});
    isnt($r->{protocol} // '', 'TLSv1.1',
         'openssl s_client -tls1_1: no TLSv1.1');
}

for my $c (qw(ECDHE-ECDSA-AES128-SHA ECDHE-ECDSA-AES256-SHA384
              ECDHE-ECDSA-AES128-SHA256))
{
    $r = GnTLS::s_client($t, tls => '1.2', cipher => $c, request => undef);
    ok(!$r->{handshake}, "CBC suite $c refused") or diag($r->{all});
}

$r = GnTLS::s_client($t, port => $port{rsa}, tls => '1.2',
                     cipher => 'AES128-GCM-SHA256', request => undef);
ok(!$r->{handshake}, 'RSA key exchange (no forward secrecy) refused')
    or diag($r->{all});

$r = GnTLS::s_client($t, port => $port{rsa}, tls => '1.2',
                     cipher => 'DHE-RSA-AES128-GCM-SHA256', request => undef);
ok(!$r->{handshake}, 'finite-field DHE refused') or diag($r->{all});

$r = GnTLS::gnutls_cli($t, priority => 'NORMAL:-VERS-ALL:+VERS-TLS1.2:'
                            . '-CIPHER-ALL:+AES-128-CBC:+AES-256-CBC:'
                            . '-MAC-ALL:+SHA1:+SHA256:+SHA384');
ok(!$r->{handshake}, 'gnutls-cli: CBC-only client refused')
    or diag($r->{all});

# the server still works after all of that
$r = GnTLS::s_client($t, tls => '1.2', path => '/?after');
is($r->{status}, 200, 'still serving after the refused handshakes');

# tls_protocols TLSv1.3 (PORT_3)
$r = GnTLS::s_client($t, port => $t->port(3), tls => '1.2', request => undef);
ok(!$r->{handshake}, 'tls_protocols TLSv1.3: TLS 1.2 refused')
    or diag($r->{all});
$r = GnTLS::s_client($t, port => $t->port(3), tls => '1.3');
is($r->{status}, 200, 'tls_protocols TLSv1.3: TLS 1.3 served');

# ---- renegotiation ----------------------------------------------------------

for my $kt (qw(ec rsa)) {
    $r = GnTLS::s_client($t, port => $port{$kt}, tls => '1.2',
                         args => ['-state'],
                         shell_stdin => "printf 'R\\n'; sleep 3",
                         timeout => 10);
    my $all = $r->{all};
    like($all, qr/^RENEGOTIATING/m, "$kt: s_client asked to renegotiate")
        or diag($all);
    my $after = $r->{err} =~ /^RENEGOTIATING\n(.*)\z/ms ? $1 : '';
    unlike($after, qr/read finished/,
           "$kt: the renegotiation does not complete")
        or diag($all);
    unlike($after, qr/read server hello/, "$kt: no second ServerHello");
    like($after, qr/alert.*no renegotiation/i,
         "$kt: the server sends a no_renegotiation alert");
    unlike($after, qr/^DONE/m,
           "$kt: the server closes the connection (before stdin ends)");
}

# ---- the access log ---------------------------------------------------------

my @l = GnTLS::wait_lines($t, undef, 1, 3);
my ($l12) = grep { $_->{uri} eq '/?sec1.2' } @l;
my ($l13) = grep { $_->{uri} eq '/?sec1.3' } @l;
my ($lr12) = grep { $_->{uri} eq '/?srsa1.2' } @l;

ok($l12 && $l13 && $lr12, 'access log has the s_client requests')
    or diag(join("\n", map { $_->{line} } @l));
$l12 //= {}; $l13 //= {}; $lr12 //= {};
is($l12->{proto}, 'TLSv1.2', 'access log: $tls_protocol TLSv1.2');
is($l13->{proto}, 'TLSv1.3', 'access log: $tls_protocol TLSv1.3');
like($l12->{cipher} // '',
     qr/^TLS_ECDHE_ECDSA_(?:WITH_)?(AES_\d+_GCM|CHACHA20)/,
     'access log: $tls_cipher TLS 1.2 ECDSA (GnuTLS name)');
like($lr12->{cipher} // '', qr/^TLS_ECDHE_RSA_(?:WITH_)?(AES_\d+_GCM|CHACHA20)/,
     'access log: $tls_cipher TLS 1.2 RSA');
like($l13->{cipher} // '', qr/^TLS_(AES_\d+_GCM_SHA\d+|CHACHA20_POLY1305)/,
     'access log: $tls_cipher TLS 1.3');
is($l12->{resumed}, '.', 'access log: $tls_resumed "." on a full handshake');
is($l12->{sni}, 'localhost', 'access log: $tls_sni');
is($l12->{status}, 200, 'access log: $status');

$r = GnTLS::s_client($t, servername => undef, path => '/?nosni');
is($r->{status}, 200, 'no SNI: 200');
my ($ln) = GnTLS::lines_for($t, undef, '/?nosni');
is($ln && $ln->{sni}, '-', 'access log: $tls_sni "-" without SNI');

# ---- configuration errors (gannet -t) ---------------------------------------

{
    my $tc = GnTest->new(timeout => 0);
    my ($rc, $err);

    $tc->write_conf(<<'EOF');
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
}
EOF
    ($rc, undef, $err) = $tc->gannet('-t', '-p', $tc->testdir . '/',
                                     '-c', $tc->conf_path);
    is($rc, 1, 'tls listener without tls_certificate: gannet -t fails');
    like($err, qr/\[emerg\](?=.*tls_certificate).*gannet\.conf:2\b/,
         'tls listener without tls_certificate: error names the server '
         . 'block (gannet.conf:2)') or diag($err);

    $tc->write_conf(<<'EOF');
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%% tls;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/other.key;
}
EOF
    ($rc, undef, $err) = $tc->gannet('-t', '-p', $tc->testdir . '/',
                                     '-c', $tc->conf_path);
    is($rc, 1, 'certificate and key do not match: gannet -t fails');
    like($err, qr/\[emerg\].*other\.key/,
         'certificate and key do not match: [emerg] names the key file')
        or diag($err);

    $tc->write_conf(<<'EOF');
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%% tls;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%TESTDIR%%/no-such.key;
}
EOF
    ($rc, undef, $err) = $tc->gannet('-t', '-p', $tc->testdir . '/',
                                     '-c', $tc->conf_path);
    is($rc, 1, 'unreadable key: gannet -t fails');
    like($err, qr/\[emerg\].*no-such\.key/,
         'unreadable key: [emerg] names the file') or diag($err);
}

$t->done;
