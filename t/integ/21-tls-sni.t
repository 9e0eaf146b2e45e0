#!/usr/bin/perl

# SNI: three server blocks on one TLS listener (third.test is the default
# server, localhost, other.test with *.wild.test): the certificate and the
# content follow SNI; unknown or absent SNI -> the default server; a Host naming another
# server block than the SNI one -> 421 Misdirected Request.

use strict;
use warnings;

use Test::More;
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 60);
GnTLS::init($t, 'curl');

my $lf = $GnTLS::LOG_FORMAT;

$t->write_conf(<<"EOF");
children 2;
user %%USER%%;
$lf
access_log logs/access.log tls;
types { text/html html; }

server {
    listen 127.0.0.1:%%PORT_0%% tls default_server;
    server_name third.test;
    tls_certificate %%CERTS%%/third.pem;
    tls_certificate_key %%CERTS%%/third.key;
    root html-default;
}

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html-localhost;
}

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name other.test *.wild.test;
    tls_certificate %%CERTS%%/other.pem;
    tls_certificate_key %%CERTS%%/other.key;
    root html-other;
}
EOF

$t->write_file('html-default/index.html', "default\n");
$t->write_file('html-localhost/index.html', "localhost\n");
$t->write_file('html-other/index.html', "other\n");

$t->run;

my $r;

for my $v ('1.2', '1.3') {
    $r = GnTLS::s_client($t, tls => $v, servername => 'localhost');
    is($r->{subject_cn}, 'localhost', "TLSv$v SNI localhost: its certificate")
        or diag($r->{all});
    ok($r->{verify_ok}, "TLSv$v SNI localhost: verified");
    is($r->{body}, "localhost\n", "TLSv$v SNI localhost: its content");

    $r = GnTLS::s_client($t, tls => $v, servername => 'other.test');
    is($r->{subject_cn}, 'other.test', "TLSv$v SNI other.test: its certificate")
        or diag($r->{all});
    ok($r->{verify_ok}, "TLSv$v SNI other.test: verified");
    is($r->{body}, "other\n", "TLSv$v SNI other.test: its content");

    $r = GnTLS::s_client($t, tls => $v, servername => 'nosuch.test');
    is($r->{subject_cn}, 'third.test',
       "TLSv$v unknown SNI: the default server's certificate")
        or diag($r->{all});
    is($r->{body}, "default\n", "TLSv$v unknown SNI: default content");

    $r = GnTLS::s_client($t, tls => $v, servername => undef,
                         request => GnTLS::request(host => 'third.test'));
    is($r->{subject_cn}, 'third.test',
       "TLSv$v no SNI: the default server's certificate")
        or diag($r->{all});
    is($r->{body}, "default\n", "TLSv$v no SNI: default content");
}

# The other clients.
$r = GnTLS::gnutls_cli($t, host => 'other.test');
like($r->{out}, qr/subject `CN=other\.test/, 'gnutls-cli SNI other.test: cert')
    or diag($r->{all});
like($r->{out}, qr/The certificate is trusted/,
     'gnutls-cli SNI other.test: verified');
is($r->{body}, "other\n", 'gnutls-cli SNI other.test: content');

$r = GnTLS::curl($t, host => 'other.test');
is($r->{status}, '200', 'curl https://other.test: 200 (name verified)')
    or diag($r->{err});
is($r->{body}, "other\n", 'curl https://other.test: content');
$r = GnTLS::curl($t, host => 'localhost');
is($r->{body}, "localhost\n", 'curl https://localhost: content');

# Host and SNI name different server blocks -> 421.
$r = GnTLS::s_client($t, servername => 'other.test',
                     request => GnTLS::request(host => 'localhost'));
is($r->{subject_cn}, 'other.test', 'SNI other.test, Host localhost: handshake');
is($r->{status}, 421, 'SNI other.test, Host localhost: 421');

$r = GnTLS::s_client($t, servername => 'localhost',
                     request => GnTLS::request(host => 'other.test'));
is($r->{status}, 421, 'SNI localhost, Host other.test: 421');

$r = GnTLS::s_client($t, servername => 'nosuch.test',
                     request => GnTLS::request(host => 'localhost'));
is($r->{status}, 421,
   'unknown SNI (default server), Host localhost: 421');

# A wildcard name: SNI a.wild.test is other.test's block; the bare domain
# is not.
$r = GnTLS::s_client($t, servername => 'a.wild.test',
                     request => GnTLS::request(host => 'a.wild.test'));
is($r->{subject_cn}, 'other.test', 'SNI a.wild.test (*.wild.test): its cert');
is($r->{body}, "other\n", 'SNI a.wild.test: its content');
$r = GnTLS::s_client($t, servername => 'wild.test',
                     request => GnTLS::request(host => 'wild.test'));
is($r->{subject_cn}, 'third.test', 'SNI wild.test: not *.wild.test');

# Same server block, different spelling -> fine.
$r = GnTLS::s_client($t, servername => 'other.test',
                     request => GnTLS::request(host => 'OTHER.test'));
is($r->{status}, 200, 'SNI other.test, Host OTHER.test: 200');
$r = GnTLS::s_client($t, servername => 'other.test',
    request => GnTLS::request(host => 'other.test:' . $t->port(0)));
is($r->{status}, 200, 'SNI other.test, Host other.test:PORT: 200');
is($r->{body}, "other\n", 'SNI other.test, Host other.test:PORT: content');

# Without SNI there is nothing to contradict: Host selects as usual.
$r = GnTLS::s_client($t, servername => undef,
                     request => GnTLS::request(host => 'localhost'));
isnt($r->{status} // 0, 421, 'no SNI, Host localhost: not 421');
is($r->{body}, "localhost\n", 'no SNI, Host localhost: localhost content');

# Keep-alive: a second request on the same connection with another Host.
$r = GnTLS::s_client($t, servername => 'other.test',
    request => GnTLS::request(host => 'other.test', keepalive => 1)
               . GnTLS::request(host => 'localhost'));
my @st = $r->{out} =~ m{^HTTP/1\.1 (\d{3})}mg;
is("@st", '200 421', 'keep-alive: other.test then localhost: 200 421');

# $tls_sni in the access log.
my @l = GnTLS::wait_lines($t, undef, 10, 3);
my %sni = map { $_->{sni} => 1 } @l;
ok($sni{'other.test'} && $sni{localhost} && $sni{'nosuch.test'} && $sni{'-'},
   'access log: $tls_sni other.test, localhost, nosuch.test and -')
    or diag(join("\n", map { $_->{line} } @l));
ok((grep { $_->{status} == 421 && $_->{sni} eq 'other.test' } @l),
   'access log: the 421 is logged with its SNI');

$t->done;
