#!/usr/bin/perl

# mod_status totals never go backwards (issue 18, item 3): the master
# folds the counters of every child it reaps into totals in shared
# memory, so across a reload (the old generation drains and exits) and a
# child killed with SIGKILL (respawned in its slot) the requests, bytes,
# connections, responses by class and TLS handshakes keep counting. The
# test counts every request and byte it sends and receives (the status
# requests too) and wants the totals exactly: a count lost or counted
# twice fails. The JSON totals, the unlabelled Prometheus totals and the
# history samples are checked.

use strict;
use warnings;

use Test::More;
use JSON::PP;
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 120);
$t->skip_unless_bin;
$t->skip_unless_module('mod_status');

my $tls = GnTLS::optional($t, 'openssl');

my $tls_srv = $tls ? <<'EOF' : '';
server {
    listen 127.0.0.1:%%PORT_1%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
}
EOF

$t->write_conf(<<"EOF");
load_module %%MODDIR%%/mod_status.so;
children 2;
user %%USER%%;
status_sample_interval 1s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    server_name localhost;
    location = /status { handler status; }
}
$tls_srv
EOF

my $index = "<html>totals</html>\n";
$t->write_file('html/index.html', $index);
$t->expect_log(qr/child \d+ exited on signal 9/);
$t->run;

my @kids = $t->wait_children(2, 5);
is(scalar @kids, 2, '2 children');

# ---- what the client counts ---------------------------------------------

# Every connection carries one request (Connection: close) and is read
# to its end: the bytes the server received and sent are exactly these.
my %n = (accepted => 0, requests => 0, bytes_in => 0, bytes_out => 0,
         map { ("${_}xx" => 0) } 1 .. 5);
my %tls_n = (full => 0, resumed => 0, failed => 0);

sub get
{
    my ($path) = @_;
    my $req = $t->request($path);
    my ($raw) = $t->http_raw($req);
    my ($code) = $raw =~ m{^HTTP/1\.1 (\d{3}) };

    $n{accepted}++;
    $n{requests}++;
    $n{bytes_in} += length $req;
    $n{bytes_out} += length $raw;
    $n{substr($code, 0, 1) . 'xx'}++ if defined $code;
    (my $body = $raw) =~ s/^.*?\r\n\r\n//s;
    return ($code // 0, $body, length $req);
}

sub totals_of
{
    my ($j) = @_;
    my $tot = $j->{totals};
    my %g = map { $_ => $tot->{$_} } qw(accepted requests bytes_in bytes_out);

    $g{$_} = $tot->{responses}{$_} for map { "${_}xx" } 1 .. 5;
    $g{"tls_$_"} = $tot->{tls}{$_} for keys %tls_n;
    return \%g;
}

sub want
{
    my %w = %n;

    $w{"tls_$_"} = $tls_n{$_} for keys %tls_n;
    return \%w;
}

# Fetches the JSON until its totals are what was sent, or for 5 s (the
# counts of a request are bumped before its connection closes, so they
# match at once unless a child is still to be reaped); returns (json,
# totals, wanted).
sub status_json
{
    my $end = time() + GnTest::slow(5);
    my ($j, $got, $w);

    while (1) {
        $w = want();
        my ($code, $body, $len) = get('/status?format=json');
        # this request: its connection and its bytes in are counted
        # already, its response and its bytes out not yet
        $w->{accepted}++;
        $w->{bytes_in} += $len;
        $j = eval { JSON::PP->new->decode($body) };
        $got = $j ? totals_of($j) : {};
        return ($j, $got, $w) if $j && _same($got, $w);
        return ($j, $got, $w) if time() > $end;
        sleep(0.05);
    }
}

sub _same
{
    my ($a, $b) = @_;

    return !grep { ($a->{$_} // -1) != $b->{$_} } keys %$b;
}

# ---- traffic on the first generation ---------------------------------------

# The harness connected once to see the server up: the connections it
# made before this test's first request are what the server counted.
{
    my ($code, $body, $len) = get('/status?format=json');
    my $j0 = eval { JSON::PP->new->decode($body) } // {};
    my $a0 = $j0->{totals}{accepted} // 0;

    ok($a0 >= 1 && ($j0->{totals}{requests} // -1) == 0
       && ($j0->{totals}{bytes_in} // -1) == $len,
       "start: nothing counted but this request and the harness's "
       . "connection(s)") or diag(explain($j0->{totals}));
    $n{accepted} = $a0;
}

my ($ok, $nf) = (0, 0);
for (1 .. 15) {
    my ($code, $body) = get('/index.html');
    $ok++ if $code == 200 && $body eq $index;
}
for (1 .. 4) {
    my ($code) = get('/missing');
    $nf++ if $code == 404;
}
is($ok, 15, '15 GETs: 200');
is($nf, 4, '4 GETs: 404');

SKIP: {
    skip 'no TLS build, certificates or openssl', 1 unless $tls;

    # handshakes alone: no request, no bytes of HTTP
    my $done = 0;
    for (1 .. 3) {
        my $r = GnTLS::s_client($t, port => $t->port(1), tls => '1.2',
                                request => undef);
        $done++ if $r->{handshake};
        $n{accepted}++;
        $tls_n{full}++;
    }
    is($done, 3, '3 TLS handshakes');
}

my ($j, $got, $w) = status_json();
is_deeply($got, $w, 'generation 1: the totals are what was sent')
    or diag(explain($j->{totals}));
my $before = $got;

# ---- reload: the old children drain and exit -------------------------------

my @new = GnTLS::reload($t, 2, @kids);
is(scalar @new, 2, 'reload: 2 new children');

# and the master has reaped them: no row of the old generation left
my $end = time() + GnTest::slow(10);
while (1) {
    ($j, $got, $w) = status_json();
    last if $j && !grep { my $p = $_->{pid}; grep { $_ == $p } @kids }
                         @{$j->{children}};
    last if time() > $end;
    sleep(0.05);
}
is(scalar(grep { my $p = $_->{pid}; grep { $_ == $p } @kids }
           @{$j->{children} // []}), 0, 'reload: the old children are gone');
is($j->{totals}{children_exited}, 2, 'reload: 2 children exited');
is_deeply($got, $w, 'reload: the totals still count the old children')
    or diag(explain($j->{totals}));
is(scalar(grep { $got->{$_} < $before->{$_} } keys %$before), 0,
   'reload: no total went down');

for (1 .. 5) {
    get('/index.html');
}

# ---- SIGKILL: a child dies with its counters in its slot --------------------

($j, $got, $w) = status_json();
is_deeply($got, $w, 'generation 2: the totals are what was sent');
$before = $got;

# the child that served something, so that its counts are at stake
my ($victim) = sort { $b->{requests} <=> $a->{requests} }
               @{$j->{children}};
ok($victim && $victim->{requests} > 0, 'a child with requests to lose');
kill('KILL', $victim->{pid});
my @now = $t->wait_children(2, 10, not => [ $victim->{pid} ]);
is(scalar @now, 2, 'SIGKILL: the child is respawned');

$end = time() + GnTest::slow(10);
while (1) {
    ($j, $got, $w) = status_json();
    last if $j && ($j->{totals}{children_exited} // 0) >= 3
            && !grep { $_->{pid} == $victim->{pid} } @{$j->{children}};
    last if time() > $end;
    sleep(0.05);
}
is($j->{totals}{children_exited}, 3, 'SIGKILL: 3 children exited');
is_deeply($got, $w, 'SIGKILL: the totals keep the dead child\'s counts')
    or diag(explain($j->{totals}));
is(scalar(grep { $got->{$_} < $before->{$_} } keys %$before), 0,
   'SIGKILL: no total went down');

# ---- Prometheus: the server-wide counters carry no per-child label ---------

my ($code, $body) = get('/status?format=prometheus');
is($code, 200, 'prometheus: 200');
my %prom;
for my $l (split /\n/, $body) {
    next if $l =~ /^#/;
    $prom{$1} = $2 if $l =~ /^(gannet_[a-z_]+(?:\{[^}]*\})?) (\d+)$/;
}
# the JSON request before this one counted, this one not yet
is($prom{gannet_requests_total}, $n{requests} - 1,
   'prometheus: gannet_requests_total, no labels, every request');
is($prom{'gannet_responses_total{class="4xx"}'}, $n{'4xx'},
   'prometheus: gannet_responses_total{class="4xx"}');
is($prom{gannet_received_bytes_total}, $n{bytes_in},
   'prometheus: gannet_received_bytes_total');
is($prom{'gannet_tls_handshakes_total{type="full"}'}, $tls_n{full},
   'prometheus: gannet_tls_handshakes_total{type="full"}');
is($prom{gannet_children_exited_total}, 3,
   'prometheus: gannet_children_exited_total');
ok(scalar(grep { /^gannet_child_requests_total\{slot="\d+",pid="\d+"\}$/ }
           keys %prom) == 2, 'prometheus: per-child rows as gannet_child_*');

# ---- history: the samples never go back -----------------------------------

# one sample after the kill at least (one a second)
my $killed_at = time();
$end = time() + GnTest::slow(10);
my @h;
while (1) {
    ($code, $body) = get('/status?format=json');
    $j = eval { JSON::PP->new->decode($body) } // {};
    @h = @{$j->{history} // []};
    last if @h && $h[-1]{t} > $killed_at + 0.1;
    last if time() > $end;
    sleep(0.1);
}
ok(@h && $h[-1]{t} > $killed_at, 'history: a sample after the SIGKILL');
my @down = grep { $h[$_]{requests} < $h[$_ - 1]{requests}
                  || $h[$_]{bytes_out} < $h[$_ - 1]{bytes_out} } 1 .. $#h;
is(scalar @down, 0, 'history: requests and bytes out never go down')
    or diag(explain([ map { $h[$_ - 1], $h[$_] } @down ]));

$t->done;
