#!/usr/bin/perl

# Client certificates (issue 23, item 5): tls_verify_client on, optional
# and optional_no_ca with tls_client_certificate, tls_crl and
# tls_verify_depth, as nginx's ssl_verify_client: a missing, foreign,
# revoked or too deep certificate is the request's 400 (with a reason in
# the error log), never a failed handshake; $tls_client_verify (and
# nginx's $ssl_client_verify), the subject, issuer, serial and
# fingerprint in the log; mod_ssl's SSL_CLIENT_* for CGI; over HTTP/1.1
# and HTTP/2. The client certificates are made here with certtool,
# signed by the test CA (t/mkcerts.sh), by a second CA the server does
# not trust, and by an intermediate CA; one is revoked by a CRL.

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use GnTest;
use GnTLS;

my $t = GnTest->new;
GnTLS::init($t, 'curl', 'certtool');

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => 'modules not built')
    unless -f "$ENV{GN_MODDIR}/mod_cgi.so";

my $dir = $t->testdir;
my $certs = GnTLS::certs();
my $pki = "$dir/pki";
mkdir $pki or die "mkdir $pki: $!";

sub certtool
{
    my (@args) = @_;
    my ($rc, $out, $err) = $t->run_client(['certtool', @args], timeout => 20);
    die "certtool @args: $err" if $rc != 0;
}

sub template
{
    my ($name, @lines) = @_;
    my $f = "$pki/$name.tmpl";
    open(my $fh, '>', $f) or die "$f: $!";
    print $fh map { "$_\n" } @lines;
    close $fh;
    return $f;
}

# cert NAME CA-NAME SERIAL CN [ca]: a key and a certificate signed by
# CA-NAME ("test" is t/mkcerts.sh's CA)
sub cert
{
    my ($name, $ca, $serial, $cn, $is_ca) = @_;
    my ($cacert, $cakey) = $ca eq 'test'
        ? ("$certs/ca.pem", "$certs/ca.key") : ("$pki/$ca.pem", "$pki/$ca.key");

    certtool('--generate-privkey', '--key-type=ecdsa', '--curve=secp256r1',
             '--outfile', "$pki/$name.key");
    my $tmpl = template($name, "cn = \"$cn\"", 'organization = "Gannet tests"',
                        "serial = $serial", 'expiration_days = 3650',
                        $is_ca ? ('ca', 'cert_signing_key')
                               : ('tls_www_client', 'signing_key'));
    certtool('--generate-certificate', '--load-privkey', "$pki/$name.key",
             '--load-ca-certificate', $cacert, '--load-ca-privkey', $cakey,
             '--template', $tmpl, '--outfile', "$pki/$name.pem");
}

# a CA the server does not trust
certtool('--generate-privkey', '--key-type=ecdsa', '--curve=secp256r1',
         '--outfile', "$pki/rogue.key");
certtool('--generate-self-signed', '--load-privkey', "$pki/rogue.key",
         '--template', template('rogue', 'cn = "Rogue CA"', 'serial = 1',
                                'expiration_days = 3650', 'ca',
                                'cert_signing_key', 'crl_signing_key'),
         '--outfile', "$pki/rogue.pem");

cert('alice', 'test', 101, 'alice');
cert('mallory', 'rogue', 102, 'mallory');
cert('revoked', 'test', 103, 'revoked');
cert('inter', 'test', 104, 'Gannet Intermediate', 1);
cert('deep', 'inter', 105, 'deep');
certtool('--generate-crl', '--load-ca-privkey', "$certs/ca.key",
         '--load-ca-certificate', "$certs/ca.pem",
         '--load-certificate', "$pki/revoked.pem",
         '--template', template('crl', 'crl_next_update = 3650',
                                'crl_number = 1'),
         '--outfile', "$pki/crl.pem");
# the chain a client with the intermediate's certificate sends
{
    open(my $out, '>', "$pki/deep-chain.pem") or die $!;
    for my $f ("$pki/deep.pem", "$pki/inter.pem") {
        open(my $in, '<', $f) or die "$f: $!";
        print {$out} <$in>;
    }
}

my $root = $< == 0;
my $cgi_user = $root ? 'nobody' : '%%USER%%';
mkdir "$dir/html";
mkdir "$dir/html/cgi";
copy("$t->{srcdir}/t/cgi/env.cgi", "$dir/html/cgi/env.cgi") or die $!;
chmod(0755, "$dir/html/cgi/env.cgi", $dir, "$dir/html", "$dir/html/cgi");
$t->write_file('html/index.html', "hello\n");

$t->write_conf(<<"EOF_CONF");
children 2;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_cgi.so;
cgi_user $cgi_user;
log_format cert '\$server_port \$status \$tls_client_verify|\$tls_client_s_dn|'
                '\$tls_client_i_dn|\$tls_client_serial|\$ssl_client_fingerprint';

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    tls_verify_client on;
    tls_client_certificate %%CERTS%%/ca.pem;
    tls_crl $pki/crl.pem;
    root html;
    access_log logs/cert.log cert;
    location /cgi/ { handler cgi; }
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    tls_verify_client optional;
    tls_client_certificate %%CERTS%%/ca.pem;
    tls_verify_depth 2;
    root html;
    access_log logs/cert.log cert;
}

server {
    listen 127.0.0.1:%%PORT_2%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    tls_verify_client optional_no_ca;
    root html;
    access_log logs/cert.log cert;
}
EOF_CONF

$t->run;

# curl PORT [CERT] [extra args]: (status, body)
sub get
{
    my ($port, $cert, $path, @extra) = @_;
    my @c = defined $cert
        ? ('--cert', "$pki/$cert.pem", '--key',
           "$pki/" . ($cert =~ s/-chain$//r) . '.key') : ();
    my ($rc, $out) = $t->curl('--cacert', GnTLS::ca(), '--resolve',
        'localhost:' . $t->port($port) . ':127.0.0.1', @c, @extra,
        '-w', '\n%{http_code}',
        'https://localhost:' . $t->port($port) . ($path // '/'));
    return (0, "curl exit $rc: $out") unless $out =~ s/\n(\d+)\z//;
    return ($1, $out);
}

my @cases = (
    # port, cert, status, what
    [ 0, undef, 400, 'on: no certificate: 400' ],
    [ 0, 'alice', 200, 'on: a certificate of the CA: 200' ],
    [ 0, 'mallory', 400, 'on: a certificate of another CA: 400' ],
    [ 0, 'revoked', 400, 'on: a revoked certificate (tls_crl): 400' ],
    [ 0, 'deep-chain', 400, 'on: through an intermediate past depth 1: 400' ],
    [ 1, undef, 200, 'optional: no certificate: 200' ],
    [ 1, 'alice', 200, 'optional: a good one: 200' ],
    [ 1, 'mallory', 400, 'optional: a bad one: 400' ],
    [ 1, 'deep-chain', 200, 'optional, tls_verify_depth 2: the intermediate\'s' ],
    [ 2, 'mallory', 200, 'optional_no_ca: any certificate: 200' ],
    [ 2, undef, 200, 'optional_no_ca: none: 200' ],
);
for my $c (@cases) {
    my ($st, $body) = get($c->[0], $c->[1]);
    is($st, $c->[2], $c->[3]) or diag($body);
}

ok($t->wait_log(qr/^\d+ 200 NONE\|/m, 5, 'logs/cert.log'), 'logged');
my $log = $t->read_file('logs/cert.log') // '';
my $p0 = $t->port(0);
my $p2 = $t->port(2);
like($log, qr/^$p0 200 SUCCESS\|CN=alice,O=Gannet tests\|CN=Gannet Test CA,O=Gannet tests\|65\|[0-9A-F]{40}$/m,
     '$tls_client_verify, _s_dn, _i_dn, _serial (hex), $ssl_client_fingerprint');
like($log, qr/^$p0 400 FAILED:[^|]*\|CN=mallory/m,
     'a foreign certificate: FAILED with the reason, and its subject');
like($log, qr/^$p0 400 FAILED:[^|]*revoked[^|]*\|CN=revoked/mi,
     'a revoked one: FAILED, revoked');
like($log, qr/^$p0 400 NONE\|-\|/m, 'none: NONE');
like($log, qr/^$p2 200 FAILED:[^|]*\|CN=mallory/m,
     'optional_no_ca: FAILED in the log, the request served');

my $err = $t->error_log;
like($err, qr/\[info\] .*client sent no required TLS certificate/,
     'the missing certificate is logged at info');
like($err, qr/\[info\] .*client TLS certificate verify error/,
     'the failed one too');

# CGI gets mod_ssl's variables
my ($st, $body) = get(0, 'alice', '/cgi/env.cgi');
is($st, 200, 'CGI with a client certificate');
like($body, qr/^SSL_CLIENT_VERIFY=SUCCESS$/m, 'CGI: SSL_CLIENT_VERIFY');
like($body, qr/^SSL_CLIENT_S_DN=CN=alice,O=Gannet tests$/m,
     'CGI: SSL_CLIENT_S_DN');
like($body, qr/^SSL_CLIENT_M_SERIAL=65$/m, 'CGI: SSL_CLIENT_M_SERIAL');

# HTTP/2
SKIP: {
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 2 unless $out =~ /\bHTTP2\b/;
    ($st) = get(0, 'alice', '/', '--http2', '-o', '/dev/null');
    is($st, 200, 'h2: a good certificate');
    ($st) = get(0, undef, '/', '--http2', '-o', '/dev/null');
    is($st, 400, 'h2: none: 400');
}

# a configuration that asks without saying which CAs
$t->write_file('bad.conf', $t->expand(<<'EOF'));
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_3%% tls;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    tls_verify_client on;
}
EOF
my ($rc, $o, $e) = $t->gannet('-t', '-p', "$dir/", '-c', "$dir/bad.conf");
is($rc, 1, 'tls_verify_client on without tls_client_certificate: refused');
like($e, qr/"tls_verify_client" needs "tls_client_certificate"/,
     '... saying what is missing');

$t->done;
