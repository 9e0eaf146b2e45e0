#!/usr/bin/perl

# Listening sockets handed over at start (issue 21, the first step of the
# binary upgrade): LISTEN_FDS / LISTEN_PID, as systemd's socket
# activation passes them (systemd-socket-activate here). A connection
# made before gannet runs waits in the inherited socket's queue and is
# served; each inherited socket serves the listen directive with its
# address, with that directive's options (tls); a listen directive no
# socket matches is bound by gannet; an inherited socket no directive
# names is closed with a warning; a reload keeps them all; the variables
# do not reach CGI scripts.

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use Time::HiRes qw(sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 90);
GnTLS::init($t, 'curl');
my $sa = GnTest::_which('systemd-socket-activate');
plan(skip_all => 'systemd-socket-activate not found') unless defined $sa;
my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => 'mod_cgi not built')
    unless -f "$ENV{GN_MODDIR}/mod_cgi.so";

my $dir = $t->testdir;
my $root = $< == 0;
my ($p0, $p1, $p2, $p3) = map { $t->port($_) } 0 .. 3;

$t->write_file('html/index.html', "activated\n");
mkdir "$dir/html/cgi" or die "mkdir cgi: $!";
copy("$t->{srcdir}/t/cgi/env.cgi", "$dir/html/cgi/env.cgi")
    or die "copy env.cgi: $!";
chmod(0755, $dir, "$dir/html", "$dir/html/cgi", "$dir/html/cgi/env.cgi");

my $cgi_user = $root ? 'nobody' : '%%USER%%';
$t->write_conf(<<"EOF");
load_module %%MODDIR%%/mod_cgi.so;
children 2;
user %%USER%%;
cgi_user $cgi_user;
types { text/html html; }

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_3%%;
    root html;
    location /cgi/ { handler cgi; }
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
}
EOF

# sockets 3, 4, 5: port 0 (plain), port 1 (tls), port 2 (no directive);
# port 3 is gannet's own. systemd-socket-activate execs gannet at the
# first connection: that one waits in the queue of the inherited socket.
my $early = "$dir/early.out";
my $cpid = $t->spawn(['curl', '-s', '--retry', '50',
                      '--retry-connrefused', '--retry-delay', '1',
                      '-m', '20', "http://127.0.0.1:$p0/"],
                     out => $early);
{
    local $ENV{TEST_GN_WRAP} = "$sa -l 127.0.0.1:$p0 -l 127.0.0.1:$p1 "
                               . "-l 127.0.0.1:$p2";
    $t->run;
}
my $out = $t->spawned_output($cpid, $early, 30);
is($out, "activated\n", 'a connection queued before the start is served');

my $master = $t->master_pid;
my %inode;
for my $fd (3, 4) {
    my $l = readlink("/proc/$master/fd/$fd") // '';
    ok($l =~ /^socket:\[(\d+)\]$/, "master holds inherited descriptor $fd");
    $inode{$1} = $fd if defined $1;
}

# which socket (inode) listens on which port: /proc/net/tcp, state 0A
sub listeners
{
    my %by_port;
    open(my $fh, '<', '/proc/net/tcp') or return %by_port;
    while (my $l = <$fh>) {
        my @f = split ' ', $l;
        next unless @f > 9 && $f[3] eq '0A';
        my ($port) = $f[1] =~ /:([0-9A-F]{4})$/ or next;
        $by_port{hex $port} = $f[9];
    }
    return %by_port;
}

my %l = listeners();
is($inode{$l{$p0} // ''}, 3, "port $p0 is served on inherited socket 3");
is($inode{$l{$p1} // ''}, 4, "port $p1 is served on inherited socket 4");
ok(defined $l{$p3} && !defined $inode{$l{$p3}},
   "port $p3, not passed, is bound by gannet");
ok(!defined $l{$p2}, "port $p2, passed but not configured, is closed");
# (said at the start, before the error log is opened: on stderr)
like($t->stderr_log,
     qr/\[warn\].*inherited socket 127\.0\.0\.1 port $p2 \(descriptor 5\)/,
     'the unused socket is named in a warning');
unlike($t->error_log, qr/bind\(\) to 127\.0\.0\.1:($p0|$p1)\b/,
       'no bind() for the inherited addresses');

my ($rc, $body);
($rc, $body) = $t->curl("http://127.0.0.1:$p3/");
is($body, "activated\n", "port $p3 answers");
($rc, $body) = $t->curl('--cacert', GnTLS::certs() . "/ca.pem",
                        '--resolve', "localhost:$p1:127.0.0.1",
                        "https://localhost:$p1/");
is($body, "activated\n", 'the inherited socket keeps its tls option');

($rc, $body) = $t->curl("http://127.0.0.1:$p0/cgi/env.cgi");
like($body, qr/GATEWAY_INTERFACE=CGI/, 'CGI runs');
unlike($body, qr/^LISTEN_(FDS|PID|FDNAMES)=/m,
       'LISTEN_* do not reach a CGI script');

# a reload takes the sockets over as any others
my $before = length $t->error_log;
$t->signal('HUP');
ok($t->wait_log(qr/reconfigur|reload/i, 10, undef, $before),
   'reload logged');
sleep(0.5);
%l = listeners();
is($inode{$l{$p0} // ''}, 3, 'after the reload, still inherited socket 3');
for my $p ($p0, $p3) {
    ($rc, $body) = $t->curl("http://127.0.0.1:$p/");
    is($body, "activated\n", "after the reload, port $p answers");
}

$t->done;
