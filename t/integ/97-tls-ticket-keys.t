#!/usr/bin/perl

# Ticket keys for a farm (issue 21 item 4).  TLS 1.3 resumes only with
# tickets, so farm-wide resumption means the same tls_ticket_key_file on
# every machine.  Each part runs its own masters on free loopback ports:
#
#   a. a key file others may read (0644) or write, or a directory: gannet
#      -t and a start fail, naming the file, the mode, the fix and the
#      directive's file:line; 0600 is accepted;
#   b. two servers with copies of one key resume each other's TLS 1.3
#      tickets (openssl s_client -sess_out / -sess_in), a third with
#      another key does not;
#   c. a reload with the same key keeps the tickets; `gannetctl
#      ticket-key` and a reload: an old ticket gets one full handshake,
#      the ticket of that connection resumes; the other server resumes it
#      once it has the new key and reloaded;
#   e. a reload with the key file made world-readable is refused (by
#      gannetctl, and by the master on SIGHUP) and the server keeps
#      serving with the key it had;
#   d. under a loop of TLS 1.3 connections (s_client resuming with the
#      last ticket, and curl), two rotations with reloads: no connection
#      fails;
#   f. no log and no output holds a key, in hex or base64.

use strict;
use warnings;

use Test::More;
use File::Basename qw(dirname);
use File::Temp ();
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $ta = GnTest->new(timeout => 150);
$ta->skip_unless_bin;
$ta->has_prog('openssl');
$ta->has('tls');
GnTLS::certs();

my $builddir = $ENV{GN_BUILDDIR} // dirname(dirname($ta->bin));
my $ctl = "$builddir/etc/gannetctl";
plan skip_all => "no $ctl (run make first)" unless -x $ctl;

my $kdir = File::Temp::tempdir('gannet-farm-XXXXXXXX', TMPDIR => 1,
                               CLEANUP => !$ENV{TEST_GN_LEAVE});
chmod(0711, $kdir);        # the keys are in 0700 subdirectories
my (@keys, $said);           # every key written; everything printed

sub conf
{
    my ($t, $key, $children) = @_;

    $children //= 2;
    $t->write_conf(<<"EOF");
children $children;
user %%USER%%;
error_log logs/error.log info;
tls_ticket_key_file $key;

server {
    listen 127.0.0.1:%%PORT_0%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    root html;
}
EOF
    $t->write_file('html/index.html', "farm\n");
    return $t;
}

sub key_line
{
    my ($t) = @_;
    my @l = split /\n/, $t->read_file($t->conf_path);

    for my $i (0 .. $#l) {
        return $i + 1 if $l[$i] =~ /^tls_ticket_key_file /;
    }
    return 0;
}

sub read_key
{
    my ($path) = @_;

    open(my $fh, '<:raw', $path) or die "$path: $!";
    local $/;
    my $k = <$fh>;
    close $fh;
    return $k;
}

# gannetctl ARGS, for server $t (or none): (exit code, stdout . stderr)
sub ctl
{
    my ($t, @args) = @_;
    local $ENV{GANNET_BIN} = $ta->bin;
    local $ENV{GANNET_CONF} = defined $t ? $t->conf_path : '/nonexistent';
    local $ENV{GANNET_PREFIX} = defined $t ? $t->testdir . '/' : '';
    my ($rc, $out, $err) = $ta->run_client([$ctl, @args], timeout => 20);

    $said .= "$out\n$err\n";
    return ($rc, "$out$err");
}

sub new_key
{
    my ($path) = @_;
    my ($rc, $out) = ctl(undef, 'ticket-key', $path);

    is($rc, 0, "gannetctl ticket-key $path: exit 0") or diag($out);
    push @keys, read_key($path) if -f $path;
    return $out;
}

sub copy_key
{
    my ($from, $to) = @_;
    my $k = read_key($from);
    my $tmp = "$to.tmp";

    open(my $fh, '>:raw', $tmp) or die "$tmp: $!";
    chmod(0600, $tmp);
    print $fh $k;
    close $fh or die "$tmp: $!";
    rename($tmp, $to) or die "rename $tmp: $!";
}

# gannetctl reload, then wait until only new children are left, so that
# the next connection meets the new configuration
sub reload
{
    my ($t, $n, $what) = @_;
    my @old = $t->children;
    my ($rc, $out) = ctl($t, 'reload');

    is($rc, 0, "$what: gannetctl reload: exit 0") or diag($out);
    my @new = $t->wait_children($n // 2, 15, not => \@old);
    is(scalar @new, $n // 2, "$what: only new children left");
}

sub tls13
{
    my ($t, %o) = @_;

    return GnTLS::s_client($t, tls => '1.3', %o);
}

# ---- a. the file's mode and type --------------------------------------------

mkdir("$kdir/a", 0700);
my $key_a = "$kdir/a/ticket.key";
my $out = new_key($key_a);
like($out, qr/\Q$key_a\E.*mode 0600/, 'ticket-key: says what it wrote');
like($out, qr/copy it to every machine/, 'ticket-key: copy it next');
like($out, qr/gannetctl reload.*on each/, 'ticket-key: then reload each');
is(length(read_key($key_a)), 64, 'ticket-key: 64 bytes');
is((stat $key_a)[2] & 07777, 0600, 'ticket-key: mode 0600');
is(scalar(() = glob("$kdir/a/.*.key.*")), 0, 'ticket-key: no temp file left');
my $k0 = read_key($key_a);
new_key($key_a);
isnt(read_key($key_a), $k0, 'ticket-key: a second run writes another key');

conf($ta, $key_a);
$ta->expect_log(qr/\[emerg\] .*ticket key/);
my $line = key_line($ta);
my $cp = $ta->conf_path;
my @t_args = ('-t', '-p', $ta->testdir . '/', '-c', $cp);

for my $mode (0644, 0604, 0602) {
    my $m = sprintf('%04o', $mode);
    chmod($mode, $key_a);
    my ($rc, $o, $e) = $ta->gannet(@t_args);
    $said .= "$o\n$e\n";
    my $how = $mode & 4 ? $mode & 2 ? 'readable and writable' : 'readable'
                        : 'writable';
    my $msg = "gannet: [emerg] the ticket key \"$key_a\" is $how by others "
              . "(mode $m), make it private: chmod 600 $key_a "
              . "(\"tls_ticket_key_file\" directive in $cp:$line)";
    is($rc, 1, "key file $m: gannet -t fails");
    like($e, qr/^\Q$msg\E$/m,
         "key file $m: names the file, the mode, the fix and line $line")
        or diag($e);
}
{
    chmod(0644, $key_a);
    my ($rc, $o, $e) = $ta->gannet('-f', '-p', $ta->testdir . '/',
                                   '-c', $cp);
    $said .= "$o\n$e\n";
    is($rc, 1, 'key file 0644: gannet does not start');
    like($e, qr/\[emerg\] the ticket key .*chmod 600/,
         'key file 0644: the start says why');
    ok(!$ta->probe($ta->port(0)), 'key file 0644: nothing listens');
}

chmod(0600, $key_a);
{
    my ($rc, $o, $e) = $ta->gannet(@t_args);
    $said .= "$o\n$e\n";
    is($rc, 0, 'key file 0600: gannet -t accepts it') or diag($e);
    chmod(0640, $key_a);
    ($rc, $o, $e) = $ta->gannet(@t_args);
    is($rc, 0, 'key file 0640 (group may read): accepted') or diag($e);
    chmod(0600, $key_a);
}

conf($ta, "$kdir/a");
{
    my ($rc, $o, $e) = $ta->gannet(@t_args);
    $said .= "$o\n$e\n";
    is($rc, 1, 'key file is a directory: gannet -t fails');
    my $msg = "[emerg] the ticket key \"$kdir/a\" is not a regular file "
              . "(\"tls_ticket_key_file\" directive in $cp:$line)";
    like($e, qr/\Q$msg\E$/m, 'key file is a directory: named, with the line')
        or diag($e);
}

{
    my ($rc, $o) = ctl(undef, 'ticket-key', "$kdir/a");
    is($rc, 1, 'ticket-key onto a directory: exit 1');
    like($o, qr/not a regular file/, 'ticket-key onto a directory: says so');
    ($rc, $o) = ctl(undef, 'ticket-key', "$kdir/nodir/k.key");
    is($rc, 1, 'ticket-key into a missing directory: exit 1');
    like($o, qr/\Q$kdir\E\/nodir is not a directory/,
         'ticket-key into a missing directory: says so');
    ($rc, $o) = ctl(undef, 'ticket-key');
    is($rc, 2, 'ticket-key without FILE: usage, exit 2');
}

SKIP: {
    # a directory the user cannot write: root may write anywhere, so as
    # root the script runs as nobody
    mkdir("$kdir/ro", 0755);
    my @as;
    if ($< == 0) {
        skip 'root, and no setpriv to run gannetctl as nobody', 3
            unless defined GnTest::_which('setpriv');
        @as = ('setpriv', '--reuid=nobody', '--regid=nogroup',
               '--clear-groups');
        skip 'nobody cannot run the build tree\'s gannetctl', 3
            if system("@as sh -c 'test -r $ctl' 2>/dev/null") != 0;
    } else {
        chmod(0555, "$kdir/ro");
    }
    my ($rc, $o, $e) = $ta->run_client([@as, $ctl, 'ticket-key',
                                        "$kdir/ro/k.key"], timeout => 10);
    $said .= "$o\n$e\n";
    is($rc, 1, 'ticket-key into a read-only directory: exit 1');
    like($e, qr/the directory \Q$kdir\E\/ro is not writable/,
         'ticket-key into a read-only directory: says so') or diag($e);
    ok(!-e "$kdir/ro/k.key", 'ticket-key: nothing written');
}

GnTLS::finish($ta);

# ---- b. a farm: A and B with copies of one key, C with another --------------

mkdir("$kdir/$_", 0700) for qw(b c);
my $key_b = "$kdir/b/ticket.key";
my $key_c = "$kdir/c/ticket.key";
copy_key($key_a, $key_b);
new_key($key_c);

my $A = conf(GnTest->new(timeout => 150), $key_a)->run;
my $B = conf(GnTest->new(timeout => 150), $key_b)->run;
my $C = conf(GnTest->new(timeout => 150), $key_c)->run;
$A->wait_children(2, 5);
$B->wait_children(2, 5);

my $dir = $A->testdir;
my $r = tls13($A, sess_out => "$dir/t1.sess");
is($r->{reused}, 0, 'farm: a full handshake on A') or diag($r->{all});
is($r->{protocol}, 'TLSv1.3', 'farm: TLS 1.3');
ok(-s "$dir/t1.sess", 'farm: s_client saved A\'s ticket');
$r = tls13($B, sess_in => "$dir/t1.sess");
ok($r->{reused} && $r->{protocol} eq 'TLSv1.3',
   'farm: A\'s ticket resumes on B (Reused, TLSv1.3)') or diag($r->{all});
is($r->{status}, 200, 'farm: B answers the resumed connection');
$r = tls13($C, sess_in => "$dir/t1.sess");
is($r->{reused}, 0, 'farm: not on C, another key (New)') or diag($r->{all});
is($r->{status}, 200, 'farm: C falls back to a full handshake');

# ---- c. reloads: the same key, then a new one -------------------------------

reload($A, 2, 'same key');
$r = tls13($A, sess_in => "$dir/t1.sess");
is($r->{reused}, 1, 'same key: a ticket from before the reload resumes')
    or diag($r->{all});

new_key($key_a);
reload($A, 2, 'new key');
$r = tls13($A, sess_in => "$dir/t1.sess", sess_out => "$dir/t2.sess");
is($r->{reused}, 0, 'new key: the old ticket gets a full handshake (New)')
    or diag($r->{all});
is($r->{status}, 200, 'new key: and the connection succeeds');
$r = tls13($A, sess_in => "$dir/t2.sess");
is($r->{reused}, 1, 'new key: the ticket of that connection resumes')
    or diag($r->{all});

$r = tls13($B, sess_in => "$dir/t2.sess");
is($r->{reused}, 0, 'new key: B, not reloaded yet, does not resume it');
is($r->{status}, 200, 'new key: B answers with a full handshake');
copy_key($key_a, $key_b);
reload($B, 2, 'B with the new key');
$r = tls13($B, sess_in => "$dir/t2.sess");
is($r->{reused}, 1, 'new key: B resumes it once it has the key')
    or diag($r->{all});

# ---- e. a reload with a key file others may read ----------------------------

$A->expect_log(qr/\[emerg\] .*: the ticket key "\Q$key_a\E" is readable by /);
chmod(0644, $key_a);
{
    my ($rc, $o) = ctl($A, 'reload');
    is($rc, 6, 'key file 0644: gannetctl reload refuses (exit 6)');
    like($o, qr/chmod 600 \Q$key_a\E/, 'key file 0644: and says why');
}
{
    my @kids = $A->children;
    my $from = length $A->error_log;
    $A->signal('HUP');
    ok($A->wait_log(qr/reload failed, still running the previous/, 10,
                    undef, $from), 'key file 0644: SIGHUP: reload failed');
    my $msg = "the ticket key \"$key_a\" is readable by others "
              . "(mode 0644), make it private: chmod 600 $key_a "
              . "(\"tls_ticket_key_file\" directive in "
              . $A->conf_path . ':' . key_line($A) . ')';
    like(substr($A->error_log, $from), qr/\[emerg\] \d+#-: \Q$msg\E$/m,
         'key file 0644: SIGHUP: the error log says why');
    is_deeply([$A->children], \@kids, 'key file 0644: the children stay');
    $r = tls13($A, sess_in => "$dir/t2.sess");
    is($r->{reused}, 1, 'key file 0644: the old key still resumes')
        or diag($r->{all});
    is($r->{status}, 200, 'key file 0644: and the server answers');
}
chmod(0600, $key_a);
reload($A, 2, 'key file 0600 again');
$r = tls13($A, sess_in => "$dir/t2.sess");
is($r->{reused}, 1, 'key file 0600 again: the same key resumes');

# ---- d. rotations under load ------------------------------------------------

my $load = $A->write_file('load.sh', <<'EOF');
#!/bin/sh
# load.sh s_client|curl PORT CA DIR STOPFILE SECONDS: TLS 1.3 connections
# one after another until STOPFILE exists or SECONDS passed; one line
# each: "N EXIT STATUS New|Reused|-".  s_client resumes with the last
# ticket it got.
mode=$1 port=$2 ca=$3 dir=$4 stop=$5
end=$(( $(date +%s) + $6 ))
req="$dir/load.req"
printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' \
    >"$req"
n=0
while [ ! -e "$stop" ] && [ "$(date +%s)" -lt "$end" ]; do
    n=$((n + 1))
    case $mode in
    s_client)
        o="$dir/load.$mode.out"
        in=
        if [ -s "$dir/load.sess" ]; then
            in="-sess_in $dir/load.sess"
        fi
        openssl s_client -connect "127.0.0.1:$port" -CAfile "$ca" \
            -servername localhost -tls1_3 -ign_eof -nocommands $in \
            -sess_out "$dir/load.new" <"$req" >"$o" 2>&1
        rc=$?
        st=$(sed -n 's|^HTTP/1\.1 \([0-9][0-9]*\) .*|\1|p' "$o" | head -n 1)
        how=$(sed -n 's/^\([A-Za-z]*\), TLSv1\.3, .*/\1/p' "$o" | head -n 1)
        if [ -s "$dir/load.new" ]; then
            mv -f "$dir/load.new" "$dir/load.sess"
        fi
        ;;
    curl)
        st=$(curl -sS --max-time 5 --tlsv1.3 --cacert "$ca" \
             --resolve "localhost:$port:127.0.0.1" -o /dev/null \
             -w '%{http_code}' "https://localhost:$port/" \
             2>>"$dir/curl.err")
        rc=$?
        how=-
        ;;
    esac
    echo "$n $rc ${st:-none} ${how:-none}"
done
EOF
chmod(0755, $load);

my @modes = ('s_client');
push @modes, 'curl' if defined GnTest::_which('curl');
my $stop = "$dir/load.stop";
my %pid;
for my $m (@modes) {
    $pid{$m} = $A->spawn([$load, $m, $A->port(0), GnTLS::ca(), $dir, $stop,
                          GnTest::slow(30)],
                         out => "$dir/load.$m", err => "$dir/load.$m.err");
}
sleep(1);
for my $i (1, 2) {
    new_key($key_a);
    reload($A, 2, "under load, rotation $i");
    sleep(1);
}
# the load runs on until each client made 10 connections (a slow run,
# valgrind's, makes fewer a second), bounded by the script's own limit
for my $m (@modes) {
    my $end = time() + GnTest::slow(20);
    while (time() < $end) {
        my $n = () = ($A->read_file("$dir/load.$m") // '') =~ /\n/g;
        last if $n >= 10;
        sleep(0.2);
    }
}
open(my $sfh, '>', $stop) or die "$stop: $!";
close $sfh;

for my $m (@modes) {
    my @l = split /\n/, $A->spawned_output($pid{$m}, "$dir/load.$m", 20);
    my @bad = grep { (split / /)[2] ne '200' } @l;
    cmp_ok(scalar @l, '>=', 10, "under load, $m: at least 10 connections");
    is(scalar @bad, 0, "under load, $m: no connection failed ("
                       . scalar(@l) . ' made)')
        or diag(join("\n", @bad[0 .. ($#bad > 9 ? 9 : $#bad)]));
    next unless $m eq 's_client';
    my $new = grep { (split / /)[3] eq 'New' } @l;
    my $reused = grep { (split / /)[3] eq 'Reused' } @l;
    cmp_ok($new, '>=', 3, 'under load: a full handshake after each '
                          . "rotation ($new in all)");
    cmp_ok($reused, '>=', scalar(@l) - $new,
           "under load: every other connection resumed ($reused)");
}
diag($A->read_file("$dir/curl.err")) if -s "$dir/curl.err";

# ---- f. no key in any log ---------------------------------------------------

my @seen = ($said);
for my $t ($ta, $A, $B, $C) {
    push @seen, map { $t->read_file($_) // '' }
                glob($t->testdir . '/logs/*.log*');
    push @seen, $t->stderr_log;
}
my $all = join("\n", @seen);
my $leaks = 0;
for my $k (@keys) {
    my $hex = unpack('H*', $k);
    for my $s ($hex, uc $hex, substr($hex, 0, 32), uc substr($hex, 0, 32),
               encode_base64($k, ''), encode_base64(substr($k, 0, 16), ''))
    {
        $leaks++ if index($all, $s) >= 0;
    }
    $leaks++ if index($all, $k) >= 0;
}
cmp_ok(scalar @keys, '>=', 6, 'keys written: ' . scalar @keys);
is($leaks, 0, 'no log or output holds a key (raw, hex, base64)');

GnTLS::finish($_) for ($B, $C);
$A->done;
