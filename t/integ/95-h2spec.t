#!/usr/bin/perl

# h2spec (the HTTP/2 conformance suite) against Gannet, when it is
# installed: it is not packaged for Debian 12 (nor on npm), so the test
# skips without it and says so. Put the h2spec binary on PATH (or in
# GN_H2SPEC) to run it: every test case must pass.

use strict;
use warnings;

use Test::More;
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 300);
plan(skip_all => 'gannet built without HTTP/2')
    unless ($ENV{GN_HTTP2} // '') eq 'yes';

my $h2spec = $ENV{GN_H2SPEC} // GnTest::_which('h2spec');
plan(skip_all => 'h2spec not installed (not packaged for Debian 12: get it '
     . 'from github.com/summerwind/h2spec, put it on PATH or in GN_H2SPEC)')
    unless defined $h2spec && -x $h2spec;
GnTLS::init($t);

$t->write_file('html/index.html', "h2spec\n");
$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
error_log logs/error.log info;

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    listen 127.0.0.1:%%PORT_1%% http2;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    access_log off;
}
EOF_CONF

$t->run;

for my $m (['plain', '-p', $t->port(1)], ['TLS', '-p', $t->port(0), '-t', '-k'])
{
    my ($name, @args) = @$m;
    my ($rc, $out, $err) = $t->run_client(
        [$h2spec, '-h', '127.0.0.1', '-o', '5', @args, '-P', '/index.html'],
        timeout => 200);
    my ($total, $passed, $failed) =
        $out =~ /(\d+) tests, (\d+) passed, \d+ skipped, (\d+) failed/;
    ok(defined $total && $failed == 0, "h2spec $name: "
       . (defined $total ? "$passed of $total passed" : 'no summary'))
        or diag(join("\n", grep { /^\s*(?:×|[0-9.]+\s)/ || /failed/i }
                                split /\n/, $out . $err));
}

$t->done;
