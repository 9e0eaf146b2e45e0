#!/usr/bin/perl

# The TLS 1.2 session-ID cache in shared memory (tickets off): a session
# made by one child resumes on the others; never across server blocks with
# different certificates; it survives a reload (same size); with
# `tls_session_cache off` nothing resumes.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 90);
GnTLS::init($t);

my $lf = $GnTLS::LOG_FORMAT;

sub conf
{
    my ($t, $cache) = @_;

    $t->write_conf(<<"EOF");
children 4;
user %%USER%%;
tls_session_tickets off;
tls_session_cache $cache;
$lf
access_log logs/access.log tls;
types { text/html html; }

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
}

server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name other.test;
    tls_certificate %%CERTS%%/other.pem;
    tls_certificate_key %%CERTS%%/other.key;
    root html;
}
EOF
}

conf($t, '1m');
$t->write_file('html/index.html', "cached\n");
$t->run;

my @kids = $t->wait_children(4, 5);
is(scalar @kids, 4, '4 children');

my $dir = $t->testdir;
my $sess = "$dir/a.sess";
my $r;

# one full handshake, then 20 resumptions
$r = GnTLS::s_client($t, tls => '1.2', args => ['-no_ticket'],
                     sess_out => $sess, path => '/?full');
is($r->{reused}, 0, 'first connection: full handshake ("New,")')
    or diag($r->{all});
is($r->{status}, 200, 'first connection: 200');
ok(-s $sess, 'session saved');
unlike($r->{out}, qr/TLS session ticket:/, 'no ticket issued (tickets off)');

my $reused = 0;
my @bad;
for my $i (1 .. 20) {
    $r = GnTLS::s_client($t, tls => '1.2', args => ['-no_ticket'],
                         sess_in => $sess, path => "/?r$i");
    if ($r->{reused} && ($r->{status} // 0) == 200) {
        $reused++;
    } else {
        push @bad, "#$i: " . ($r->{out} =~ /^((?:New|Reused),.*)$/m
                              ? $1 : 'no handshake') . " " . ($r->{err});
    }
}
is($reused, 20, '20 of 20 connections resumed ("Reused,") with status 200')
    or diag(join("\n", @bad[0 .. ($#bad > 4 ? 4 : $#bad)]));

my @l = GnTLS::wait_lines($t, undef, 21, 5);
my @rl = grep { $_->{uri} =~ m{^/\?r\d+$} } @l;
is(scalar(grep { $_->{resumed} eq 'r' } @rl), 20,
   'access log: $tls_resumed "r" on all 20')
    or diag(join("\n", map { $_->{line} } @rl));
my ($full) = grep { $_->{uri} eq '/?full' } @l;
is($full && $full->{resumed}, '.', 'access log: "." on the full handshake');
my %pids = map { $_->{pid} => 1 } grep { $_->{resumed} eq 'r' } @rl;
$pids{$full->{pid}} = 1 if $full;
cmp_ok(scalar(keys %pids), '>=', 2,
       'the session was used by at least 2 different children')
    or diag('pids: ' . join(' ', keys %pids));

# gnutls-cli --resume (session ID only). GnuTLS stores a new session
# after it sent the server's Finished, and gnutls-cli reconnects at once:
# under valgrind its second ClientHello sometimes reached a child before
# the store was done. There (only) a full handshake is tried again, twice
# at most; a cache that does not work fails every time.
for (1 .. (GnTest::valgrind() ? 3 : 1)) {
    $r = GnTLS::gnutls_cli($t, resume => 1, args => ['--noticket'],
                           priority => 'NORMAL:-VERS-ALL:+VERS-TLS1.2');
    last if $r->{resumed};
}
ok($r->{resumed}, 'gnutls-cli --resume --noticket TLS 1.2: resumed')
    or diag($r->{all});
is($r->{status}, 200, 'gnutls-cli --resume: 200');

# ---- not across server blocks -----------------------------------------------

$r = GnTLS::s_client($t, port => $t->port(1), tls => '1.2',
                     args => ['-no_ticket'], sess_in => $sess,
                     path => '/?cross');
ok(defined $r->{reused}, 'server B: handshake done') or diag($r->{all});
is($r->{reused}, 0, "server A's session offered to server B: not resumed");
is($r->{subject_cn}, 'other.test', "server B answers with its certificate");

my $sessb = "$dir/b.sess";
$r = GnTLS::s_client($t, port => $t->port(1), tls => '1.2',
                     servername => 'other.test', args => ['-no_ticket'],
                     sess_out => $sessb);
is($r->{reused}, 0, 'server B: full handshake');
$r = GnTLS::s_client($t, port => $t->port(1), tls => '1.2',
                     servername => 'other.test', args => ['-no_ticket'],
                     sess_in => $sessb);
is($r->{reused}, 1, 'server B: its own session resumes');
$r = GnTLS::s_client($t, port => $t->port(0), tls => '1.2',
                     servername => 'other.test', args => ['-no_ticket'],
                     sess_in => $sessb);
is($r->{reused}, 0, "server B's session offered to server A: not resumed");

# TLS 1.3 does not use the cache; with tickets off it never resumes.
my $s13 = "$dir/13.sess";
$r = GnTLS::s_client($t, tls => '1.3', sess_out => $s13);
is($r->{reused}, 0, 'TLS 1.3: full handshake');
unlike($r->{out}, qr/New Session Ticket arrived/,
       'TLS 1.3 with tickets off: no ticket');
if (-s $s13) {
    $r = GnTLS::s_client($t, tls => '1.3', sess_in => $s13);
    is($r->{reused}, 0, 'TLS 1.3 with tickets off: not resumed');
} else {
    pass('TLS 1.3 with tickets off: nothing to resume with');
}

# ---- reload -----------------------------------------------------------------

@kids = $t->wait_children(4, 5);
my @new = GnTLS::reload($t, 4, @kids);
is(scalar @new, 4, 'reload: 4 new children');
my %new = map { $_ => 1 } @new;

my ($rr, $newpid) = (0, 0);
for my $i (1 .. 6) {
    $r = GnTLS::s_client($t, tls => '1.2', args => ['-no_ticket'],
                         sess_in => $sess, path => "/?after$i");
    $rr++ if $r->{reused};
}
is($rr, 6, 'after the reload: a session stored before it still resumes');
@l = GnTLS::wait_lines($t, undef, scalar(@l) + 6, 5);
my @al = grep { $_->{uri} =~ m{^/\?after\d$} } @l;
ok(@al && !grep({ !$new{$_->{pid}} } @al),
   'after the reload: served by new children')
    or diag(join("\n", map { $_->{line} } @al));

GnTLS::finish($t);

# the master's statistics at exit
my ($stores, $hits) = $t->error_log
    =~ /tls\ session\ cache:\ \d+\ entries,(?:\ \d+\ \w+,)*
        \ (\d+)\ stores,(?:\ \d+\ \w+,)*\ (\d+)\ hits,(?:\ \d+\ \w+,)*
        \ \d+\ misses,(?:\ \d+\ \w+,)*\ \d+\ evictions/x;
ok(defined $stores, 'exit: "tls session cache: ..." statistics logged')
    or diag($t->error_log);
cmp_ok($hits // 0, '>=', 26, 'exit statistics: at least 26 hits');
cmp_ok($stores // 0, '>=', 2, 'exit statistics: at least 2 stores');

# ---- tls_session_cache off --------------------------------------------------

my $t2 = GnTest->new(timeout => 90);
conf($t2, 'off');
$t2->write_file('html/index.html', "not cached\n");
$t2->run;
$t2->wait_children(4, 5);

$sess = $t2->testdir . '/off.sess';
$r = GnTLS::s_client($t2, tls => '1.2', args => ['-no_ticket'],
                     sess_out => $sess);
is($r->{reused}, 0, 'cache off: full handshake');
is($r->{status}, 200, 'cache off: 200');

my ($new, $any) = (0, 0);
for my $i (1 .. 8) {
    $r = GnTLS::s_client($t2, tls => '1.2', args => ['-no_ticket'],
                         sess_in => $sess, path => "/?off$i");
    $new++ if defined $r->{reused} && !$r->{reused};
    $any++ if ($r->{status} // 0) == 200;
}
is($new, 8, 'cache off: 8 of 8 not resumed ("New,")');
is($any, 8, 'cache off: all answered 200');
@l = GnTLS::wait_lines($t2, undef, 9, 5);
ok(!grep({ $_->{resumed} ne '.' } @l), 'cache off: access log has no "r"');

GnTLS::finish($t2);

# ---- tls_session_timeout ----------------------------------------------------

# The second handshake must come within the timeout of the first: two
# handshakes by a slow server (valgrind, a busy machine; TEST_GN_SLOW)
# took more than 2 s, so it gets 10 s.
my $sto = GnTest::slow(1) > 1 ? 10 : 2;
my $t3 = GnTest->new(timeout => 90);
conf($t3, "1m;\ntls_session_timeout ${sto}s");
$t3->write_file('html/index.html', "short\n");
$t3->run;

$sess = $t3->testdir . '/short.sess';
$r = GnTLS::s_client($t3, tls => '1.2', args => ['-no_ticket'],
                     sess_out => $sess);
is($r->{reused}, 0, "tls_session_timeout ${sto}s: full handshake");
$r = GnTLS::s_client($t3, tls => '1.2', args => ['-no_ticket'],
                     sess_in => $sess);
is($r->{reused}, 1, "tls_session_timeout ${sto}s: resumed at once");
sleep($sto + 1.5);
$r = GnTLS::s_client($t3, tls => '1.2', args => ['-no_ticket'],
                     sess_in => $sess);
is($r->{reused}, 0, "tls_session_timeout ${sto}s: not resumed after "
                    . ($sto + 1.5) . ' s') or diag($r->{all});
is($r->{status}, 200, "tls_session_timeout ${sto}s: full handshake, 200");

$t3->done;
