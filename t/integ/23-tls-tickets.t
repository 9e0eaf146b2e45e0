#!/usr/bin/perl

# Session tickets (TLS 1.3 and TLS 1.2) with the key the master makes
# before fork: a ticket from one child resumes on the others and after a
# reload; tickets and cache off -> no resumption; tls_ticket_key_file: two
# separate servers with the same key file resume each other's tickets, a
# different key file does not.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(sleep);
use GnTest;
use GnTLS;
use File::Temp ();

my $t = GnTest->new(timeout => 100);
GnTLS::init($t);

my $lf = $GnTLS::LOG_FORMAT;

sub conf
{
    my ($t, $extra, $children) = @_;

    $children //= 4;
    $t->write_conf(<<"EOF");
children $children;
user %%USER%%;
$extra
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
EOF
    $t->write_file('html/index.html', "ticket\n");
    $t->write_file('html/big.html', 'x' x 100000);
    return $t;
}

# full handshake + $n resumptions; returns (resumed count, \@pids of the
# resumed requests, first result)
sub resume_n
{
    my ($t, $v, $n, $tag, %o) = @_;
    my $sess = $t->testdir . "/$tag.sess";
    my ($first, $ok, @bad);

    $first = GnTLS::s_client($t, tls => $v, sess_out => $sess,
                             path => "/?$tag-full", %o);
    $ok = 0;
    for my $i (1 .. $n) {
        my $r = GnTLS::s_client($t, tls => $v, sess_in => $sess,
                                path => "/?$tag-$i", %o);
        if ($r->{reused} && ($r->{status} // 0) == 200) {
            $ok++;
        } else {
            push @bad, $r->{all};
        }
    }
    diag("not resumed:\n$bad[0]") if @bad && $ENV{TEST_GN_VERBOSE};
    return ($ok, $first);
}

sub resumed_pids
{
    my ($t, $tag) = @_;
    my @l = GnTLS::lines_for($t, undef, qr{^/\?\Q$tag\E-\d+$});
    my %p = map { $_->{pid} => 1 } grep { $_->{resumed} eq 'r' } @l;

    return (scalar(grep { $_->{resumed} eq 'r' } @l), scalar keys %p);
}

conf($t, '');
$t->run;
my @kids = $t->wait_children(4, 5);
is(scalar @kids, 4, '4 children');

# ---- TLS 1.3 ----------------------------------------------------------------

my ($ok, $first) = resume_n($t, '1.3', 20, 't13');
is($first->{reused}, 0, 'TLS 1.3: first connection is a full handshake')
    or diag($first->{all});
like($first->{out}, qr/Post-Handshake New Session Ticket arrived/,
     'TLS 1.3: a ticket arrives');
is($ok, 20, 'TLS 1.3: 20 of 20 resumed with the ticket');
GnTLS::wait_lines($t, undef, 21, 5);
my ($nr, $np) = resumed_pids($t, 't13');
is($nr, 20, 'TLS 1.3: access log: 20 x $tls_resumed "r"');
cmp_ok($np, '>=', 2, 'TLS 1.3: resumed on at least 2 different children');

my $r = GnTLS::gnutls_cli($t, resume => 1);
ok($r->{resumed}, 'gnutls-cli --resume --waitresumption: resumed (TLS 1.3)')
    or diag($r->{all});
is($r->{status}, 200, 'gnutls-cli resumed: 200');

# How many TLS 1.3 tickets, and when: two after a full handshake, one
# after a resumption (which used one); right after the handshake when no
# request came with the client's Finished, else with the first response.
sub nst { return scalar(() = $_[0]->{out} =~ /^<<< .*NewSessionTicket/mg); }

my $cs = $t->testdir . '/count.sess';
$r = GnTLS::s_client($t, tls => '1.3', sess_out => $cs, args => ['-msg']);
is(nst($r), 2, 'TLS 1.3: two tickets after a full handshake')
    or diag($r->{all});
$r = GnTLS::s_client($t, tls => '1.3', sess_in => $cs, args => ['-msg']);
is($r->{reused}, 1, 'TLS 1.3: resumed with one of them');
is(nst($r), 1, 'TLS 1.3: one ticket after a resumption');
$r = GnTLS::s_client($t, tls => '1.3', args => ['-msg'],
                     shell_stdin => 'sleep 1');
is(nst($r), 2, 'TLS 1.3: the tickets come without a request too');

# Finished and the request in one segment (a relay holds the client's
# bytes 0.2 s): the tickets leave with the response.
my $rpid = GnTLS::relay($t->port(1), $t->port(0), coalesce => 0.2);
$r = GnTLS::s_client($t, port => $t->port(1), tls => '1.3', sess_out => $cs,
                     args => ['-msg']);
is($r->{status}, 200, 'TLS 1.3, request with the Finished: 200');
is(nst($r), 2, 'TLS 1.3, request with the Finished: two tickets');
$r = GnTLS::s_client($t, port => $t->port(1), tls => '1.3', sess_in => $cs,
                     args => ['-msg'], path => '/big.html');
is($r->{reused}, 1, 'TLS 1.3, request with the Finished: resumed');
is(nst($r), 1, 'TLS 1.3, request with the Finished: one ticket after it');
is(length($r->{body} // ''), 100000,
   'TLS 1.3, request with the Finished: a file of 100000 bytes after it');
kill('TERM', $rpid);
waitpid($rpid, 0);

# ---- TLS 1.2 tickets --------------------------------------------------------

($ok, $first) = resume_n($t, '1.2', 20, 't12');
is($first->{reused}, 0, 'TLS 1.2: first connection is a full handshake');
like($first->{out}, qr/TLS session ticket lifetime hint/,
     'TLS 1.2: the server issued a ticket') or diag($first->{out});
is($ok, 20, 'TLS 1.2: 20 of 20 resumed with the ticket');
GnTLS::wait_lines($t, undef, 42, 5);
($nr, $np) = resumed_pids($t, 't12');
is($nr, 20, 'TLS 1.2: access log: 20 x "r"');
cmp_ok($np, '>=', 2, 'TLS 1.2 ticket: resumed on at least 2 children');

$r = GnTLS::gnutls_cli($t, resume => 1,
                       priority => 'NORMAL:-VERS-ALL:+VERS-TLS1.2');
ok($r->{resumed}, 'gnutls-cli --resume TLS 1.2 (ticket): resumed')
    or diag($r->{all});

# ---- reload -----------------------------------------------------------------

my @new = GnTLS::reload($t, 4, @kids);
is(scalar @new, 4, 'reload: 4 new children');
my $dir = $t->testdir;
for my $v ('1.3', '1.2') {
    (my $tag = $v) =~ tr/.//d;
    my $n = 0;
    for (1 .. 4) {
        $r = GnTLS::s_client($t, tls => $v, sess_in => "$dir/t$tag.sess");
        $n++ if $r->{reused};
    }
    is($n, 4, "TLS $v: a ticket from before the reload resumes after it")
        or diag($r->{all});
}

GnTLS::finish($t);

# ---- tickets off, cache off -------------------------------------------------

my $t2 = conf(GnTest->new(timeout => 100),
              "tls_session_tickets off;\ntls_session_cache off;", 2);
$t2->run;
$t2->wait_children(2, 5);

for my $v ('1.3', '1.2') {
    my $sess = $t2->testdir . "/off$v.sess";
    $r = GnTLS::s_client($t2, tls => $v, sess_out => $sess);
    is($r->{status}, 200, "tickets and cache off, TLS $v: 200");
    unlike($r->{out}, qr/New Session Ticket arrived|ticket lifetime hint/,
           "tickets off, TLS $v: no ticket sent");
    my $n = 0;
    for (1 .. 4) {
        # (TLS 1.3 without a ticket: s_client saves no session at all)
        if (!-s $sess) {
            $n++;
            next;
        }
        $r = GnTLS::s_client($t2, tls => $v, sess_in => $sess);
        $n++ if defined $r->{reused} && $r->{reused} == 0;
    }
    is($n, 4, "tickets and cache off, TLS $v: no resumption");
}

GnTLS::finish($t2);

# ---- tls_session_timeout limits the tickets' lifetime -----------------------

my $t3 = conf(GnTest->new(timeout => 100),
              "tls_session_timeout 2s;\ntls_session_cache off;", 2);
$t3->run;
for my $v ('1.3', '1.2') {
    my $sess = $t3->testdir . "/short$v.sess";
    $r = GnTLS::s_client($t3, tls => $v, sess_out => $sess);
    is($r->{reused}, 0, "tls_session_timeout 2s, TLS $v: full handshake");
    $r = GnTLS::s_client($t3, tls => $v, sess_in => $sess);
    is($r->{reused}, 1, "tls_session_timeout 2s, TLS $v: ticket resumes "
                        . "at once") or diag($r->{all});
}
sleep(3.5);
for my $v ('1.3', '1.2') {
    $r = GnTLS::s_client($t3, tls => $v,
                         sess_in => $t3->testdir . "/short$v.sess");
    is($r->{reused}, 0, "tls_session_timeout 2s, TLS $v: ticket refused "
                        . "after 3.5 s") or diag($r->{all});
    is($r->{status}, 200, "tls_session_timeout 2s, TLS $v: 200");
}
GnTLS::finish($t3);

# ---- tls_ticket_key_file ----------------------------------------------------

my @inst;
my $kdir = File::Temp::tempdir('gannet-keys-XXXXXXXX', TMPDIR => 1,
                               CLEANUP => 1);
for my $k (qw(a b)) {
    open(my $fh, '>:raw', "$kdir/$k.key") or die "$kdir/$k.key: $!";
    print $fh join('', map { chr(int(rand(256))) } 1 .. 64);
    close $fh;
    chmod 0600, "$kdir/$k.key";
}

# a key file of the wrong size is refused
{
    my $tb = conf(GnTest->new(timeout => 100),
                  "tls_ticket_key_file $kdir/short.key;", 1);
    open(my $fh, '>:raw', "$kdir/short.key") or die;
    print $fh 'x' x 10;
    close $fh;
    my ($rc, $out, $err) = $tb->gannet('-t', '-p', $tb->testdir . '/',
                                       '-c', $tb->conf_path);
    is($rc, 1, 'tls_ticket_key_file with 10 bytes: gannet -t fails');
    like($err, qr/\[emerg\].*short\.key/,
         'tls_ticket_key_file with 10 bytes: [emerg] names the file')
        or diag($err);
}

for my $k (qw(a a b)) {
    my $ti = conf(GnTest->new(timeout => 100),
                  "tls_ticket_key_file $kdir/$k.key;", 2);
    $ti->run;
    push @inst, $ti;
}

for my $v ('1.3', '1.2') {
    my $sess = $inst[0]->testdir . "/farm$v.sess";
    $r = GnTLS::s_client($inst[0], tls => $v, sess_out => $sess);
    is($r->{reused}, 0, "key file, TLS $v: full handshake on server 1");
    $r = GnTLS::s_client($inst[0], tls => $v, sess_in => $sess);
    is($r->{reused}, 1, "key file, TLS $v: resumed on server 1");
    $r = GnTLS::s_client($inst[1], tls => $v, sess_in => $sess);
    is($r->{reused}, 1,
       "key file, TLS $v: server 1's ticket resumes on server 2 (same key)")
        or diag($r->{all});
    $r = GnTLS::s_client($inst[2], tls => $v, sess_in => $sess);
    is($r->{reused}, 0,
       "key file, TLS $v: not on server 3 (another key file)")
        or diag($r->{all});
    is($r->{status}, 200, "key file, TLS $v: server 3 falls back to a full "
                          . "handshake");
}

# the key file is kept across a reload
my @k1 = $inst[1]->wait_children(2, 5);
GnTLS::reload($inst[1], 2, @k1);
$r = GnTLS::s_client($inst[1], tls => '1.3',
                     sess_in => $inst[0]->testdir . '/farm1.3.sess');
is($r->{reused}, 1, 'key file: still resumes on server 2 after its reload');

GnTLS::finish($_) for @inst[0, 1];
$inst[2]->done;
