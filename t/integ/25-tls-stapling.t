#!/usr/bin/perl

# OCSP stapling from a file: a response signed by the test CA for the
# server's certificate is stapled (openssl s_client -status sees it); a
# response for another certificate is refused at configuration time.

use strict;
use warnings;

use Test::More;
use GnTest;
use GnTLS;

my $t = GnTest->new;
GnTLS::init($t);
my $certs = $ENV{GN_CERTS};
plan skip_all => 'test CA key missing (old certificate set)' unless -f "$certs/ca.key";

my $dir = $t->testdir;

# an OCSP response for a certificate, signed by the CA itself
sub ocsp_response
{
    my ($cert, $out) = @_;
    my ($rc, $serial) = $t->run_client(['openssl', 'x509', '-in', $cert,
                                        '-noout', '-serial'], timeout => 10);
    $serial =~ s/^serial=//;
    $serial =~ s/\s+$//;
    my (undef, $subj) = $t->run_client(['openssl', 'x509', '-in', $cert,
                                        '-noout', '-subject', '-nameopt',
                                        'compat'], timeout => 10);
    $subj =~ s/^subject=//;
    $subj =~ s/\s+$//;
    open(my $fh, '>', "$dir/index.txt") or die;
    print $fh "V\t301231235959Z\t\t$serial\tunknown\t$subj\n";
    close $fh;
    ($rc) = $t->run_client(['openssl', 'ocsp', '-index', "$dir/index.txt",
                            '-rsigner', "$certs/ca.pem", '-rkey',
                            "$certs/ca.key", '-CA', "$certs/ca.pem",
                            '-issuer', "$certs/ca.pem", '-cert', $cert,
                            '-respout', $out, '-ndays', '2'], timeout => 20);
    return $rc == 0 && -s $out;
}

ok(ocsp_response("$certs/localhost-ec.pem", "$dir/good.der"),
   'an OCSP response for the server certificate');
ok(ocsp_response("$certs/other.pem", "$dir/other.der"),
   'an OCSP response for another certificate');

sub conf
{
    my ($resp) = @_;
    $t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    tls_stapling_file $resp;
}
EOF_CONF
}

conf("$dir/good.der");
$t->write_file('html/index.html', "stapled\n");
$t->run;

my ($rc, $out) = $t->run_client(['sh', '-c',
    'echo | openssl s_client -connect 127.0.0.1:' . $t->port(0)
    . ' -servername localhost -status -CAfile ' . "$certs/ca.pem"
    . ' 2>&1'], timeout => 15);
like($out, qr/OCSP Response Status: successful/, 'the response is stapled');
like($out, qr/Cert Status: good/, 'status good');

# without -status the handshake is unaffected
$rc = GnTLS::s_client($t, path => '/');
is($rc->{status}, 200, 'a client that asks for no status is served');
$t->stop;

# a response that belongs to another certificate: a config error
conf("$dir/other.der");
my (undef, undef, $err) = $t->gannet('-t', '-p', "$dir/", '-c',
                                     $t->conf_path);
like($err, qr/cannot use OCSP response "\Q$dir\E\/other\.der": .* \(server block at \Q$dir\E\/gannet\.conf:4\)/,
     'a response for another certificate is refused with file and line');

$t->done;
