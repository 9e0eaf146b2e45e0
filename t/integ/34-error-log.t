#!/usr/bin/perl

# error_log per server: a server's request errors go to its own log, the
# main log keeps the rest; error_log syslog:server=... sends RFC 3164-style
# datagrams (here to a UDP listener on 127.0.0.1); bad syslog parameters
# fail the configuration test.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use IO::Socket::INET;
use GnTest;

my $t = GnTest->new;

my $udp_port = $t->port(3);
my $udp = IO::Socket::INET->new(Proto => 'udp', LocalAddr => '127.0.0.1',
                                LocalPort => $udp_port)
    or plan(skip_all => "UDP listener on $udp_port: $!");

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
error_log logs/error.log info;

server {
    listen 127.0.0.1:%%PORT_0%%;
    client_header_timeout 1s;
}
server {
    listen 127.0.0.1:%%PORT_1%%;
    client_header_timeout 1s;
    error_log logs/b.log info;
}
server {
    listen 127.0.0.1:%%PORT_2%%;
    client_header_timeout 1s;
    error_log syslog:server=127.0.0.1:%%PORT_3%%,facility=local3,tag=gtest info;
}
EOF_CONF

$t->write_file('html/index.html', "index\n");
$t->run;
$t->wait_children(2, 5);

# half a request head on each server: "client timed out" at info
my @s;
for my $i (0 .. 2) {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1:' . $t->port($i))
        or die "connect: $!";
    print $s "GET / HTTP/1.1\r\n";
    push @s, $s;
}

my $a_port = $t->port(0);
my $b_port = $t->port(1);
my $c_port = $t->port(2);

ok($t->wait_log(qr/client timed out.*server: 127\.0\.0\.1:$b_port/, 5,
                'logs/b.log'),
   "server B's error goes to its own error_log");
ok($t->wait_log(qr/client timed out.*server: 127\.0\.0\.1:$a_port/, 5),
   "server A's error goes to the main error_log");

my $msg = '';
my $end = time() + GnTest::slow(5);
while (time() < $end) {
    my $rin = '';
    vec($rin, fileno($udp), 1) = 1;
    next unless select(my $rout = $rin, undef, undef, 0.2);
    $udp->recv(my $d, 4096);
    if ($d =~ /client timed out/) {
        $msg = $d;
        last;
    }
}
my $syslog_re = '^<158>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d gtest\[\d+\]: '
    . '\[info\] \d+#\d+: client timed out, while reading the request head, '
    . "client: 127\\.0\\.0\\.1, server: 127\\.0\\.0\\.1:$c_port\$";
like($msg, qr/$syslog_re/, 'syslog: <local3.info> date tag[pid]: message');

my $main = $t->error_log;
unlike($main, qr/server: 127\.0\.0\.1:$b_port/,
       "server B's error is not in the main log");
unlike($main, qr/server: 127\.0\.0\.1:$c_port/,
       "server C's error is not in the main log");
like($main, qr/\[notice\] \d+#-: .*started/,
     'the master still logs to the main log');
unlike($t->read_file('logs/b.log') // '', qr/$a_port|started/,
       "server B's log has only its own messages");

close $_ for @s;

# configuration errors
$t->write_file('bad1.conf', "error_log syslog:facility=bogus;\n"
               . "server { listen 127.0.0.1:1; }\n");
my ($rc, undef, $err) = $t->gannet('-t', '-p', $t->testdir . '/', '-c',
                                   $t->testdir . '/bad1.conf');
is($rc, 1, 'bad facility: -t fails');
like($err, qr/unknown syslog facility "bogus".*bad1\.conf:1/,
     'bad facility: message names file:line');

$t->write_file('bad2.conf', "server { listen 127.0.0.1:1;\n"
               . "error_log syslog:server=nowhere:x; }\n");
($rc, undef, $err) = $t->gannet('-t', '-p', $t->testdir . '/', '-c',
                                $t->testdir . '/bad2.conf');
is($rc, 1, 'bad server: -t fails');
like($err, qr/invalid syslog server "nowhere:x".*bad2\.conf:2/,
     'bad server: message');

$t->done;
