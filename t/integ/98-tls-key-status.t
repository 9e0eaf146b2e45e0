#!/usr/bin/perl

# The session-ticket key on the status page (issue 21, item 6): where it
# comes from (made by the master, or tls_ticket_key_file), an id that is
# a hash of it and never the key, its age, the tickets issued and the
# resumptions by ticket and by session id, in JSON, Prometheus and HTML;
# a reload keeps the master's key and the counters, a key file's id is
# its SHA-256 and changes with the file.

use strict;
use warnings;

use Test::More;
use Digest::SHA qw(sha256_hex);
use JSON::PP qw(decode_json);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 60);
GnTLS::init($t, 'curl', 'openssl');
my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => 'mod_status not built')
    unless -f "$ENV{GN_MODDIR}/mod_status.so";

my $dir = $t->testdir;

sub conf
{
    my ($key) = @_;
    my $k = defined $key ? "tls_ticket_key_file $key;" : '';

    $t->write_conf(<<"EOF");
load_module %%MODDIR%%/mod_status.so;
children 2;
user %%USER%%;
$k

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
    location = /status { handler status; }
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_protocols TLSv1.2;
    tls_session_tickets off;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
}
EOF
}

sub status
{
    my ($fmt) = @_;
    my ($rc, $out) = $t->curl('-k', 'https://127.0.0.1:' . $t->port(0)
                              . '/status' . ($fmt ? "?format=$fmt" : ''));
    return $out;
}

sub key
{
    my $j = eval { decode_json(status('json')) } // {};
    return $j->{tls_ticket_key} // {};
}

$t->write_file('html/index.html', "key\n");
conf(undef);
$t->run;

my $k0 = key();
is($k0->{source}, 'generated', 'no key file: the master made the key');
like($k0->{id} // '', qr/^[0-9a-f]{16}$/, 'its id: 16 hex digits');
ok(defined $k0->{age} && $k0->{age} < 60, 'its age: seconds');
is($k0->{rotation_period}, 900, 'GnuTLS derives a key every 3 x 5m');

my $s13 = "$dir/s13.pem";
my $r = GnTLS::s_client($t, tls => '1.3', sess_out => $s13);
is($r->{reused}, 0, 'TLS 1.3: a full handshake');
my $k1 = key();
ok($k1->{tickets_issued} >= $k0->{tickets_issued} + 2,
   "two tickets issued ($k0->{tickets_issued} -> $k1->{tickets_issued})");
$r = GnTLS::s_client($t, tls => '1.3', sess_in => $s13);
is($r->{reused}, 1, 'TLS 1.3: resumed');
my $k2 = key();
is($k2->{resumed_by_ticket}, $k1->{resumed_by_ticket} + 1,
   'counted as a resumption by ticket');

my $s12 = "$dir/s12.pem";
$r = GnTLS::s_client($t, port => $t->port(1), tls => '1.2',
                     args => ['-no_ticket'], sess_out => $s12);
$r = GnTLS::s_client($t, port => $t->port(1), tls => '1.2',
                     args => ['-no_ticket'], sess_in => $s12);
is($r->{reused}, 1, 'TLS 1.2 without tickets: resumed by session id');
my $k3 = key();
is($k3->{resumed_by_id}, $k2->{resumed_by_id} + 1,
   'counted as a resumption by session id');
is($k3->{resumed_by_ticket}, $k2->{resumed_by_ticket},
   'and not by ticket');

my $prom = status('prometheus');
like($prom,
     qr/^gannet_tls_ticket_key_info\{id="$k0->{id}",source="generated"\} 1$/m,
     'Prometheus: the key info');
like($prom, qr/^gannet_tls_resumptions_total\{by="session_id"\} \d+$/m,
     'Prometheus: resumptions by session id');
like(status(), qr/<p id=gn-key>TLS ticket key: generated, id $k0->{id}/,
     'HTML: the key line');

# a reload keeps the master's key and the counters
my @old = $t->children;
$t->signal('HUP');
$t->wait_children(2, 10, not => \@old);
my $k4 = key();
is($k4->{id}, $k0->{id}, 'reload: the same key');
ok($k4->{resumed_by_id} >= $k3->{resumed_by_id}, 'reload: counters kept');
is(GnTLS::s_client($t, tls => '1.3', sess_in => $s13)->{reused}, 1,
   'reload: the ticket still resumes');

# a key file: its id is its SHA-256, its age the file's
my $raw = join('', map { chr(int(rand(256))) } 1 .. 64);
$t->write_file('ticket.key', $raw);
chmod(0600, "$dir/ticket.key");
utime(time() - 1000, time() - 1000, "$dir/ticket.key");
conf('ticket.key');
@old = $t->children;
$t->signal('HUP');
$t->wait_children(2, 10, not => \@old);
my $k5 = key();
is($k5->{source}, 'file', 'tls_ticket_key_file: the key from the file');
is($k5->{id}, substr(sha256_hex($raw), 0, 16),
   'its id: the first 16 hex digits of its SHA-256');
ok($k5->{age} >= 1000 && $k5->{age} < 1100,
   "its age: the file's ($k5->{age} s)");
my $all = status('json') . status('prometheus') . status();
my $hex = unpack('H*', $raw);
ok(index($all, $hex) < 0 && index($all, substr($hex, 0, 32)) < 0,
   'the key itself is nowhere on the page');

$t->done;
