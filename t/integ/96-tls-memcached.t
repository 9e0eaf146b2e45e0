#!/usr/bin/perl

# memcached as the second tier of the TLS 1.2 session-ID cache
# (tls_session_memcached): a session made by one gannet farm member (its
# own master, its own shared memory) resumes on another that shares the
# memcached and the key prefix, under the documented key
# PREFIX:IDENTITY16:SESSIONID; never with another prefix or in another
# server block (another certificate). Faults never fail a connection, they
# only cost a full handshake: memcached killed and restarted under load
# (one log line per state change, back up by itself), a memcached that
# accepts and never answers (tls_session_memcached_timeout), one that
# answers garbage, one whose answers carry other requests' tokens, and
# garbage stored under the right key. The counters
# are read from mod_status's JSON ("tls_session_memcached").

use strict;
use warnings;

use Test::More;
use JSON::PP;
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;
use GnMemc;

my $ta = GnTest->new(timeout => 300);
GnTLS::init($ta, 'curl');
GnMemc::init($ta);
$ta->skip_unless_module('mod_status');

my $dir = $ta->testdir;
my $mport = $ta->port(5);       # the real memcached
my $stall_port = $ta->port(6);  # a fake that never answers
my $junk_port = $ta->port(7);   # a fake that answers garbage
my $tok_port = $ta->port(8);    # a fake that answers other requests
my $KEY_RE = qr/^gannet:([0-9a-f]{16}):([0-9a-f]{64})$/;

# ---- helpers ----------------------------------------------------------------

# The memcached directives of a configuration (servers: "HOST:PORT ...").
sub memc_conf
{
    my (%o) = @_;
    my $c = "tls_session_memcached $o{servers};\n";

    $c .= "tls_session_memcached_timeout $o{timeout};\n" if $o{timeout};
    $c .= "tls_session_memcached_prefix $o{prefix};\n" if $o{prefix};
    return $c;
}

# A farm member: 2 children, TLS 1.2 only, no tickets, its own session
# cache in shared memory; PORT_0 localhost (localhost-ec.pem), PORT_1
# another certificate (other.pem), PORT_2 plain HTTP with /status.
sub conf
{
    my ($t, %o) = @_;
    my $memc = memc_conf(%o);

    $t->write_conf(<<"EOF");
load_module %%MODDIR%%/mod_status.so;
children 2;
user %%USER%%;
error_log logs/error.log notice;
tls_protocols TLSv1.2;
tls_session_tickets off;
tls_session_cache 1m;
tls_session_timeout 300s;
${memc}types { text/html html; }

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

server {
    listen 127.0.0.1:%%PORT_2%%;
    server_name status;
    location = /status { handler status; }
}
EOF
    $t->write_file('html/index.html', "memcached tier\n");
    return $t;
}

# A new farm member, started, with both children up.  Under valgrind
# (TEST_GN_SLOW) a lookup takes longer than the default 20ms: a lookup
# that timed out would be a full handshake, not the miss or hit looked for.
sub member
{
    my ($t, %o) = @_;

    $t //= GnTest->new(timeout => 0);   # keeps the file's alarm
    $o{timeout} //= '2s' if GnTest::slow(1) > 1;
    conf($t, servers => "127.0.0.1:$mport", %o);
    $t->run;
    $t->wait_children(2, 10);
    return $t;
}

# openssl s_client, TLS 1.2 without tickets (GnTLS::s_client options).
sub s12
{
    my ($t, %o) = @_;

    return GnTLS::s_client($t, tls => '1.2', args => ['-no_ticket'], %o);
}

sub ok200 { my ($r) = @_; return defined $r->{reused}
                                 && ($r->{status} // 0) == 200; }

# "New", "Reused" or what went wrong, for diagnostics.
sub what
{
    my ($r) = @_;

    return $r->{reused} ? 'Reused' : 'New' if defined $r->{reused};
    my @e = grep { /\S/ } split /\n/, $r->{err} // '';

    return "no handshake (rc $r->{rc}): " . join(' | ', @e[0 .. ($#e > 2 ? 2
                                                                 : $#e)]);
}

# The session ID of an s_client session file, lowercase hex.
sub sess_id
{
    my ($t, $file) = @_;
    my ($rc, $out) = $t->run_client(['openssl', 'sess_id', '-in', $file,
                                     '-noout', '-text']);

    return $out =~ /^\s*Session-ID:\s*([0-9A-Fa-f]+)\s*$/m ? lc $1 : undef;
}

# mod_status's JSON, or {}.
sub status_json
{
    my ($t) = @_;
    my $r = $t->http_get('/status?format=json', port => $t->port(2));

    return eval { JSON::PP->new->decode($r->{body} // '') } // {};
}

# The "tls_session_memcached" object (and "tls_session_cache" in list
# context); with $want, polled until $want->($m) is true or 5 s pass
# (counters land after the response).
sub mstat
{
    my ($t, $want) = @_;
    my $end = time() + GnTest::slow(5);
    my $j;

    while (1) {
        $j = status_json($t);
        last if !$want || $want->($j->{tls_session_memcached} // {});
        last if time() > $end;
        sleep(0.1);
    }
    my $m = $j->{tls_session_memcached} // {};
    return wantarray ? ($m, $j->{tls_session_cache} // {}) : $m;
}

sub n { return $_[0] // 0; }

# The error log of $t from byte $from on: the lines naming memcached
# 127.0.0.1:$port.
sub memc_lines
{
    my ($t, $port, $from) = @_;
    my $log = substr($t->error_log, $from // 0);

    return grep { /memcached\s+127\.0\.0\.1:$port\b/ } split /\n/, $log;
}

# The items of memcached whose key has the documented shape.
sub gannet_keys
{
    my ($prefix) = @_;

    $prefix //= 'gannet';
    return grep { $_->{key} =~ /^\Q$prefix\E:[0-9a-f]{16}:[0-9a-f]{64}$/ }
           GnMemc::metadump($mport);
}

# The memcached item of session ID $sid (gannet:IDENT:SID), polled for
# 5 s: a store may still be on its way when the handshake is done.
sub wait_key
{
    my ($sid) = @_;
    my $end = time() + GnTest::slow(5);

    while (1) {
        my ($item) = grep { $_->{key} =~ $KEY_RE && $2 eq ($sid // '') }
                     GnMemc::metadump($mport);
        return $item if $item || time() > $end;
        sleep(0.1);
    }
}

# ---- 1. configuration errors ------------------------------------------------

sub configtest
{
    my ($name, $line4) = @_;
    my $text = "children 1;\nuser %%USER%%;\ntls_session_cache 1m;\n"
               . "$line4\n"
               . "server {\n    listen 127.0.0.1:%%PORT_0%% tls;\n"
               . "    tls_certificate %%CERTS%%/localhost-ec.pem;\n"
               . "    tls_certificate_key %%CERTS%%/localhost-ec.key;\n"
               . "}\n";
    my $path = $ta->write_file("$name.conf", $ta->expand($text));

    return ($path, $ta->gannet('-t', '-p', "$dir/", '-c', $path));
}

for my $c (['noport', 'tls_session_memcached 127.0.0.1;',
            'tls_session_memcached'],
           ['badport', 'tls_session_memcached 127.0.0.1:99999;',
            'tls_session_memcached'],
           ['space', 'tls_session_memcached_prefix "a b";',
            'tls_session_memcached_prefix'],
           ['badtime', 'tls_session_memcached_timeout x;',
            'tls_session_memcached_timeout'])
{
    my ($name, $line, $directive) = @$c;
    my ($f, $rc, $out, $err) = configtest($name, $line);

    is($rc, 1, "config $name, $line: exit 1");
    like($err, qr/\[emerg\] .*\Q$directive\E.* in \Q$f\E:4$/m,
         "config $name: [emerg] names $directive and FILE:4")
        or diag($err);
    unlike($err, qr/unknown directive/,
           "config $name: not an unknown directive");
}

{
    my ($f, $rc, $out, $err) = configtest('good',
        "tls_session_memcached 127.0.0.1:$mport localhost:$mport;\n"
        . "tls_session_memcached_timeout 20ms;\n"
        . 'tls_session_memcached_prefix farm-1;');
    is($rc, 0, 'config: two servers, a timeout and a prefix: gannet -t ok')
        or diag($err);

    # main level only
    my $text = "children 1;\nuser %%USER%%;\ntls_session_cache 1m;\n"
               . "server {\n    listen 127.0.0.1:%%PORT_0%% tls;\n"
               . "    tls_session_memcached 127.0.0.1:$mport;\n"
               . "    tls_certificate %%CERTS%%/localhost-ec.pem;\n"
               . "    tls_certificate_key %%CERTS%%/localhost-ec.key;\n"
               . "}\n";
    $f = $ta->write_file('inserver.conf', $ta->expand($text));
    ($rc, $out, $err) = $ta->gannet('-t', '-p', "$dir/", '-c', $f);
    is($rc, 1, 'config: tls_session_memcached in a server block: exit 1');
    like($err, qr/\[emerg\] .*tls_session_memcached.* in \Q$f\E:6$/m,
         'config: in a server block: [emerg] names it and FILE:6')
        or diag($err);
    unlike($err, qr/unknown directive/,
           'config: in a server block: known, just not allowed there');
}

# ---- 2. a session made on A resumes on B through memcached ------------------

my $mc = GnMemc::start($ta, $mport);
ok($mc, "memcached started on 127.0.0.1:$mport");

member($ta);
my $tb = member(undef);

my $sess = "$dir/a.pem";
my $r = s12($ta, sess_out => $sess, path => '/?a-full');
is(what($r), 'New', 'A: first connection is a full handshake ("New,")')
    or diag($r->{all});
is($r->{status}, 200, 'A: 200');
ok(-s $sess, 'A: session saved');
my $sid = sess_id($ta, $sess);
like($sid // '', qr/^[0-9a-f]{64}$/, 'A: a 32-byte session ID');

my $ma = mstat($ta, sub { n($_[0]{stores}) >= 1 });
cmp_ok(n($ma->{stores}), '>=', 1, 'A: status shows memcached stores >= 1');
is($ma->{enabled}, JSON::PP::true, 'A: status: tls_session_memcached enabled');
my $item = wait_key($sid);

$r = s12($tb, sess_in => $sess, path => '/?b-resume');
is(what($r), 'Reused', "B: A's session resumes (\"Reused, TLSv1.2\")")
    or diag($r->{all});
like($r->{out}, qr/^Reused, TLSv1\.2,/m, 'B: the output says Reused, TLSv1.2');
is($r->{status}, 200, 'B: 200 on the resumed connection');

my ($mb, $cb) = mstat($tb, sub { n($_[0]{hits}) >= 1 });
cmp_ok(n($mb->{hits}), '>=', 1, 'B: status shows memcached hits >= 1')
    or diag(explain($mb));
cmp_ok(n($mb->{lookups}), '>=', 1, 'B: status shows memcached lookups >= 1');

# the shape of the object
my @members = qw(enabled lookups hits misses timeouts skipped stores
                 store_failures errors servers);
ok(!grep({ !exists $mb->{$_} } @members),
   'B: status: tls_session_memcached has all its members')
    or diag(explain($mb));
my $errs = ref $mb->{errors} eq 'HASH' ? $mb->{errors} : {};
ok(!grep({ !exists $errs->{$_} } qw(connect protocol stall)),
   'B: status: errors has connect, protocol, stall') or diag(explain($errs));
my @srv = ref $mb->{servers} eq 'ARRAY' ? @{$mb->{servers}} : ();
is(scalar @srv, 1, 'B: status: one server');
my $s0 = $srv[0] // {};
is($s0->{address}, "127.0.0.1:$mport", 'B: status: the server address');
like($s0->{state} // '', qr/^(?:up|down|connecting|idle)$/,
     'B: status: the server state is up, down, connecting or idle');
ok(!grep({ !exists $s0->{$_} }
         qw(lookups hits misses timeouts stores errors rtt_us)),
   'B: status: the server has all its counters') or diag(explain($s0));
cmp_ok(n($s0->{hits}), '>=', 1, 'B: status: the server has hits >= 1');
ok(ref $cb eq 'HASH' && exists $cb->{hits},
   'B: status: tls_session_cache (shared memory) is still there');

# again on B: from B's shared memory now, memcached is not asked
my ($lookups_b, $shm_hits_b) = (n($mb->{lookups}), n($cb->{hits}));
$r = s12($tb, sess_in => $sess, path => '/?b-again');
is(what($r), 'Reused', 'B: the session resumes again') or diag($r->{all});
my $cb2;
($mb, $cb2) = mstat($tb);
my $end = time() + GnTest::slow(5);
while (n($cb2->{hits}) <= $shm_hits_b && time() < $end) {
    sleep(0.1);
    ($mb, $cb2) = mstat($tb);
}
cmp_ok(n($cb2->{hits}), '>', $shm_hits_b,
       'B: the second resumption is a hit of the shared-memory tier');
is(n($mb->{lookups}), $lookups_b,
   'B: the second resumption did not ask memcached');

# the key in memcached
ok($item, 'memcached: key gannet:<16 hex>:<session id> is there')
    or diag(join("\n", map { $_->{rawkey} } GnMemc::metadump($mport)));
like($item ? $item->{rawkey} : '',
     qr/^gannet%3A[0-9a-f]{16}%3A[0-9a-f]{64}$/,
     'memcached: metadump shows it URL-encoded (gannet%3A...)');
my ($ident) = $item ? $item->{key} =~ $KEY_RE : ();
my $exp = $item ? n($item->{exp}) - n($item->{la}) : 0;
ok($exp >= 290 && $exp <= 310,
   "memcached: the expiry is tls_session_timeout (300 s; is $exp)");
my $val = $item ? GnMemc::get($mport, $item->{key}) : undef;
cmp_ok(length($val // ''), '>', 32,
       'memcached: the value is a packed session');

# A machine that only stores (its clients bring no session) gets no
# answer from memcached, ever: it is not a stall, and its stores go on
sleep(1.5);
my ($okx, @xfail) = (0);
for my $i (1 .. 3) {
    my $sx = "$dir/ax$i.pem";
    $r = s12($ta, sess_out => $sx, path => "/?ax$i");
    wait_key(sess_id($ta, $sx));
    $r = s12($tb, sess_in => $sx, path => "/?bx$i");
    if ($r->{reused}) {
        $okx++;
    } else {
        push @xfail, what($r);
    }
}
is($okx, 3, 'A only stores for 1.5 s: its later sessions still resume on B')
    or diag(join("\n", @xfail));
is(join("\n", grep { /down/ } memc_lines($ta, $mport)), '',
   'A only stores: memcached is never taken for down');

# ---- 3. never across farms (prefix) or server blocks (certificate) ----------

my $tc = member(undef, prefix => 'farm2');
$r = s12($tc, sess_in => $sess, path => '/?c');
is(what($r), 'New', "C (prefix farm2): A's session is not resumed ('New,')")
    or diag($r->{all});
is($r->{status}, 200, 'C: 200 after the full handshake');
my $mc_c = mstat($tc, sub { n($_[0]{lookups}) >= 1 });
is(n($mc_c->{hits}), 0, 'C: status shows no memcached hits')
    or diag(explain($mc_c));
cmp_ok(n($mc_c->{misses}), '>=', 1, 'C: status shows memcached misses >= 1')
    or diag(explain($mc_c));
my @farm2;
$end = time() + GnTest::slow(5);
while (!(@farm2 = gannet_keys('farm2')) && time() < $end) {
    sleep(0.1);
}
ok(@farm2, 'C: its own session is stored as farm2:<16 hex>:<64 hex>')
    or diag(join("\n", map { $_->{rawkey} } GnMemc::metadump($mport)));
my ($ident_c) = @farm2 ? $farm2[0]{key} =~ /^farm2:([0-9a-f]{16}):/ : ();
ok(defined $ident && defined $ident_c && $ident_c eq $ident,
   'C: the same server block identity in the key as A')
    or diag('A ' . ($ident // 'none') . ', C ' . ($ident_c // 'none'));

# another certificate: a fresh session from A's localhost block offered
# to B's other.pem block; the same session on B's localhost block resumes
my $sess2 = "$dir/a2.pem";
$r = s12($ta, sess_out => $sess2, path => '/?a2');
is(what($r), 'New', 'A: a second session (full handshake)');
ok(wait_key(sess_id($ta, $sess2)), 'A: the second session is in memcached');
$r = s12($tb, port => $tb->port(1), sess_in => $sess2, path => '/?b-other');
is(what($r), 'New', "B, another certificate: A's session is not resumed")
    or diag($r->{all});
is($r->{subject_cn}, 'other.test', 'B, another certificate: other.test');
is($r->{status}, 200, 'B, another certificate: 200');
$r = s12($tb, sess_in => $sess2, path => '/?b-same');
is(what($r), 'Reused', 'B, the same certificate: that session resumes')
    or diag($r->{all});

# and the other block's sessions are stored under another identity
my $sess3 = "$dir/a3.pem";
$r = s12($ta, port => $ta->port(1), servername => 'other.test',
         sess_out => $sess3, path => '/?a3');
is(what($r), 'New', 'A, another certificate: full handshake');
my $item3 = wait_key(sess_id($ta, $sess3));
my ($ident3) = $item3 ? $item3->{key} =~ $KEY_RE : ();
ok(defined $ident3 && defined $ident && $ident3 ne $ident,
   'memcached: another certificate, another identity in the key')
    or diag("identities: " . ($ident // 'none') . ' ' . ($ident3 // 'none'));

# ---- 7. garbage stored under the right key ----------------------------------

my $tg;
SKIP: {
    skip 'no key of the first session in memcached', 4 unless $item;

    ok(GnMemc::set($mport, $item->{key}, 'XXXXX', 300),
       'memcached: the session overwritten with XXXXX');
    $tg = member(undef);            # an empty shared-memory cache
    $r = s12($tg, sess_in => $sess, path => '/?g');
    is(what($r), 'New', 'G: garbage under the key: a full handshake ("New,")')
        or diag($r->{all});
    is($r->{status}, 200, 'G: 200');
    my $mg = mstat($tg, sub { n($_[0]{lookups}) >= 1 });
    is(n($mg->{hits}), 0, 'G: the garbage is not counted as a hit')
        or diag(explain($mg));
}

# ---- 4. memcached killed and restarted under load ---------------------------

my $from_a = length $ta->error_log;
my $from_b = length $tb->error_log;
my $before = mstat($tb);
my $stime = "$dir/s_time.out";
my $st = $ta->spawn(['openssl', 's_time', '-connect',
                     '127.0.0.1:' . $tb->port(0), '-tls1_2', '-reuse',
                     '-time', '7'], out => $stime, err => "$stime.err");

my $t0 = time();
my ($killed, $restarted, $rounds, @fail) = (0, 0, 0);
while (time() - $t0 < 7) {
    if (!$killed && time() - $t0 >= 2) {
        GnMemc::stop($mc, 'KILL');
        $killed = time();
    }
    if ($killed && !$restarted && time() - $killed >= 2) {
        $mc = GnMemc::start($ta, $mport);
        $restarted = time();
    }
    $rounds++;
    my $sf = "$dir/load.pem";
    unlink $sf;
    $r = s12($ta, sess_out => $sf, path => "/?load-a$rounds");
    push @fail, "A #$rounds: " . what($r) unless ok200($r);
    $r = s12($tb, sess_in => $sf, path => "/?load-b$rounds");
    push @fail, "B #$rounds: " . what($r) unless ok200($r);
    my $c = GnTLS::curl($tb, path => "/?curl$rounds");
    push @fail, "curl #$rounds: $c->{status} $c->{err}"
        unless $c->{status} eq '200';
}

is(scalar @fail, 0, "load: none of $rounds rounds failed (A, B -sess_in,"
                    . ' curl to B)')
    or diag(join("\n", @fail[0 .. ($#fail > 9 ? 9 : $#fail)]));
ok($killed && $restarted,
   'load: memcached was killed (SIGKILL) and restarted during the rounds');

# s_time: its own connections to B, reusing B's sessions, all along
my $st_rc;
$end = time() + GnTest::slow(15);
while (1) {
    if (waitpid($st, POSIX::WNOHANG()) == $st) {
        $st_rc = $?;
        last;
    }
    if (time() > $end) {
        kill('KILL', -$st, $st);
        waitpid($st, 0);
        last;
    }
    sleep(0.05);
}
my $st_out = ($ta->read_file($stime) // '') . ($ta->read_file("$stime.err")
                                               // '');
is($st_rc, 0, 'load: openssl s_time -reuse against B exits 0')
    or diag($st_out);
my @st_n = $st_out =~ /(\d+) connections in/g;
ok(@st_n && !grep({ $_ == 0 } @st_n) && $st_out !~ /ERROR/,
   'load: s_time made connections all along, no error')
    or diag($st_out);

# back up by itself: a new session from A resumes on B through memcached
my ($back, $last) = (0, '');
$end = time() + GnTest::slow(20);
for (my $i = 0; time() < $end; $i++) {
    my $sf = "$dir/back.pem";
    unlink $sf;
    $r = s12($ta, sess_out => $sf, path => "/?back-a$i");
    my $rb = s12($tb, sess_in => $sf, path => "/?back-b$i");
    $last = what($rb);
    if ($rb->{reused}) {
        $back = 1;
        last;
    }
    sleep(0.2);
}
ok($back, 'after the restart: a new session from A resumes on B again')
    or diag("last: $last");
my $after = mstat($tb, sub { n($_[0]{hits}) > n($before->{hits}) });
cmp_ok(n($after->{hits}), '>', n($before->{hits}),
       'after the restart: B\'s memcached hits went up');
my $aerr = ref $after->{errors} eq 'HASH' ? $after->{errors} : {};
cmp_ok(n($aerr->{connect}) + n($after->{skipped}), '>', 0,
       'B: errors.connect + skipped > 0 (lookups while memcached was down)')
    or diag(explain($after));

my @lb = memc_lines($tb, $mport, $from_b);
my $down_at;
for my $i (0 .. $#lb) {
    if ($lb[$i] =~ /\[(?:warn|error)\].*\bdown\b/) {
        $down_at = $i;
        last;
    }
}
ok(defined $down_at, "B: a [warn] 'memcached 127.0.0.1:$mport ... down' line")
    or diag(join("\n", @lb));
ok(defined $down_at
   && grep({ /\[notice\].*\bup\b/ } @lb[$down_at .. $#lb]),
   "B: then a [notice] 'memcached 127.0.0.1:$mport ... up' line")
    or diag(join("\n", @lb));
cmp_ok(scalar @lb, '<=', 12, 'B: a few memcached lines, not one per request')
    or diag(join("\n", @lb));
my @la = memc_lines($ta, $mport, $from_a);
cmp_ok(scalar @la, '<=', 12, 'A: a few memcached lines, not one per request')
    or diag(join("\n", @la));

# ---- 5. a memcached that never answers --------------------------------------

my $fake = GnMemc::fake($stall_port, 'stall');
my $te = GnTest->new(timeout => 0);
conf($te, servers => "127.0.0.1:$stall_port", timeout => '50ms');
$te->run;
$te->wait_children(2, 10);

my ($new, $n) = (0, 20);
@fail = ();
$t0 = time();
for my $i (1 .. $n) {
    $r = s12($te, sess_in => $sess, path => "/?stall$i");
    if (ok200($r) && !$r->{reused}) {
        $new++;
    } else {
        push @fail, "#$i: " . what($r);
    }
}
my $took = time() - $t0;
is($new, $n, "stalled memcached: $n of $n connections succeed ('New,')")
    or diag(join("\n", @fail[0 .. ($#fail > 4 ? 4 : $#fail)]));
cmp_ok($took, '<', GnTest::slow(15),
       "stalled memcached: the $n connections take < 15 s")
    or diag("took $took s");
my $me = mstat($te, sub { n($_[0]{timeouts}) + n($_[0]{skipped}) >= $n - 2 });
my $eerr = ref $me->{errors} eq 'HASH' ? $me->{errors} : {};
ok(n($me->{timeouts}) >= 1 || n($eerr->{stall}) >= 1,
   'stalled memcached: timeouts >= 1 or errors.stall >= 1')
    or diag(explain($me));
cmp_ok(n($me->{timeouts}) + n($me->{skipped}), '>=', $n - 2,
       'stalled memcached: every lookup timed out or was skipped')
    or diag(explain($me));
is(n($me->{hits}), 0, 'stalled memcached: no hits');
my @le = memc_lines($te, $stall_port);
ok(grep({ /\[(?:warn|error)\]/ } @le),
   "stalled memcached: a [warn] line names memcached 127.0.0.1:$stall_port")
    or diag($te->error_log);
cmp_ok(scalar @le, '<=', 20, 'stalled memcached: not one line per request')
    or diag(join("\n", @le));
GnMemc::stop($fake);

# ---- 6. a memcached that answers garbage ------------------------------------

$fake = GnMemc::fake($junk_port, 'garbage');
my $tf = GnTest->new(timeout => 0);
conf($tf, servers => "127.0.0.1:$junk_port");
$tf->run;
$tf->wait_children(2, 10);

($new, @fail) = (0);
for my $i (1 .. $n) {
    $r = s12($tf, sess_in => $sess, path => "/?junk$i");
    if (ok200($r) && !$r->{reused}) {
        $new++;
    } else {
        push @fail, "#$i: " . what($r);
    }
}
is($new, $n, "garbage memcached: $n of $n connections succeed ('New,')")
    or diag(join("\n", @fail[0 .. ($#fail > 4 ? 4 : $#fail)]));
my $mf = mstat($tf, sub { ref $_[0]{errors} eq 'HASH'
                          && n($_[0]{errors}{protocol}) >= 1 });
my $ferr = ref $mf->{errors} eq 'HASH' ? $mf->{errors} : {};
cmp_ok(n($ferr->{protocol}), '>=', 1,
       'garbage memcached: errors.protocol >= 1') or diag(explain($mf));
is(n($mf->{hits}), 0, 'garbage memcached: no hits');
my @lf = memc_lines($tf, $junk_port);
ok(scalar @lf >= 1,
   "garbage memcached: logged (memcached 127.0.0.1:$junk_port)")
    or diag($tf->error_log);
cmp_ok(scalar @lf, '<=', 10, "garbage memcached: at most 10 lines for $n"
                             . ' connections') or diag(join("\n", @lf));
GnMemc::stop($fake);

# ---- 8. answers to other requests (opaque tokens that do not match) -------

$fake = GnMemc::fake($tok_port, 'mistoken');
my $tk = GnTest->new(timeout => 0);
conf($tk, servers => "127.0.0.1:$tok_port");
$tk->run;
$tk->wait_children(2, 10);
($new, @fail) = (0);
for my $i (1 .. 5) {
    $r = s12($tk, sess_in => $sess, path => "/?tok$i");
    if (ok200($r) && !$r->{reused}) {
        $new++;
    } else {
        push @fail, "#$i: " . what($r);
    }
}
is($new, 5, 'answers with the wrong token: 5 of 5 connections succeed')
    or diag(join("\n", @fail));
my $mk = mstat($tk, sub { ref $_[0]{errors} eq 'HASH'
                          && n($_[0]{errors}{protocol}) >= 1 });
cmp_ok(n(ref $mk->{errors} eq 'HASH' ? $mk->{errors}{protocol} : 0), '>=',
       1, 'answers with the wrong token: a protocol error')
    or diag(explain($mk));
is(n($mk->{misses}), 0, 'answers with the wrong token: not taken as misses');
GnMemc::stop($fake);

# ---- the end: no server, memcached or fake left ----------------------------

# the servers first, so that they do not log memcached going away
GnTLS::finish($_) for grep { defined } $tb, $tc, $tg, $te, $tf, $tk, $ta;
GnMemc::stop($mc);
ok(!kill(0, $mc), 'memcached stopped');
alarm(0);
done_testing();
