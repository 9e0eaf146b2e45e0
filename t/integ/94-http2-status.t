#!/usr/bin/perl

# Requests by protocol and the HTTP/2 numbers on the status page (issue
# 20, item 6), read through the module ABI (1.3, proto_stats): one child
# serves a known number of HTTP/1.1 and HTTP/2 requests (curl) and the
# JSON and Prometheus counts are exactly those (the status requests,
# HTTP/1.1 themselves, counted in); then each HTTP/2 limit is tripped
# with t/lib/h2raw.py and its counter is what the attack caused (a head
# that never completes is a request too, logged 400, as in HTTP/1):
# streams refused past http2_max_concurrent_streams, a PING flood past
# http2_max_glitches, a CONTINUATION flood (nghttp2's limit), an HPACK
# bomb (431), a window kept shut past send_timeout, streams the client
# resets. The open connections and streams go back to 0 when the
# clients are gone, the counters survive a reload (the retired totals),
# and the HTML page has its Protocols section.

use strict;
use warnings;

use Test::More;
use JSON::PP;
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 180);
plan(skip_all => 'gannet built without HTTP/2')
    unless ($ENV{GN_HTTP2} // '') eq 'yes';
$t->skip_unless_bin;
$t->skip_unless_module('mod_status');
$t->skip_unless_module('mod_example');
$t->has_prog('curl');
plan(skip_all => 'python3-h2 / python3-hyperframe not installed')
    unless system('/usr/bin/python3', '-c', 'import h2, hyperframe, hpack')
           == 0;

my $dir = $t->testdir;
my $h2raw = "$t->{srcdir}/t/lib/h2raw.py";

$t->write_file('html/index.html', "hello h2\n");
$t->write_file('html/big.txt', 'b' x (1024 * 1024));

# PORT_0: the status page, the normal clients and most attacks; PORT_1:
# low limits for the refused streams and the PING flood.
$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_status.so;
load_module %%MODDIR%%/mod_example.so;
status_sample_interval 0;

server {
    listen 127.0.0.1:%%PORT_0%% http2;
    root html;
    keepalive_requests 100000;
    send_timeout 2s;
    location = /status { handler status; }
    location /example/ { handler example; }
}

server {
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    http2_max_concurrent_streams 4;
    http2_max_glitches 50;
    location /example/ { handler example; }
}
EOF_CONF

$t->run;
my @kids = $t->wait_children(1, 5);
is(scalar @kids, 1, 'one child');

my $port = $t->port(0);
my $nstatus = 0;                 # status requests so far (HTTP/1.1)

sub status
{
    my ($fmt) = @_;
    my $r = $t->http_get('/status' . ($fmt ? "?format=$fmt" : ''));

    $nstatus++;
    return $r;
}

sub json
{
    my $r = status('json');

    return eval { JSON::PP->new->decode($r->{body}) } // {};
}

# The totals' numbers as one flat hash.
sub flat
{
    my ($row) = @_;
    my $h = $row->{http2} // {};
    my %f = (h1 => $row->{h1_requests}, h2 => $row->{h2_requests},
             connections => $h->{connections},
             open => $h->{connections_open},
             streams => $h->{streams_open},
             resets => $h->{client_resets});

    $f{$_} = $h->{limits}{$_}
        for qw(refused glitches flood header_list timeout);
    return \%f;
}

sub prom
{
    my $r = status('prometheus');
    my %p;

    for my $l (split /\n/, $r->{body}) {
        $p{$1} = $2 if $l =~ /^(gannet_\w+(?:\{[^}]*\})?) (\d+)$/;
    }
    return (\%p, $r->{body});
}

# Polls the JSON totals until $want->(flat) is true or 5 s pass.
sub totals_until
{
    my ($want) = @_;
    my $end = time() + GnTest::slow(5);
    my $f;

    while (1) {
        $f = flat(json()->{totals} // {});
        return $f if $want->($f) || time() > $end;
        sleep(0.1);
    }
}

# h2raw CASE ARGS against port $p in the background: (pid, output file).
sub attack_start
{
    my ($p, @args) = @_;
    my $out = "$dir/attack." . join('-', $args[0], $p);
    my $pid = $t->spawn(['/usr/bin/python3', $h2raw, $p, @args],
                        out => $out, err => "$out.err");

    return ($pid, $out);
}

sub attack_end
{
    return $t->spawned_output(@_);
}

sub attack
{
    return attack_end(attack_start(@_));
}

# ---- known requests over each protocol --------------------------------------

my $f = flat(json()->{totals} // {});
is_deeply($f, { h1 => 0, h2 => 0, connections => 0, open => 0, streams => 0,
                resets => 0, refused => 0, glitches => 0, flood => 0,
                header_list => 0, timeout => 0 },
          'start: every protocol counter 0 (this request not yet counted)')
    or diag(explain($f));

my ($ok1, $ok2) = (0, 0);
for (1 .. 5) {
    my ($rc, $body) = $t->curl('--http1.1', "http://127.0.0.1:$port/");
    $ok1++ if $rc == 0 && $body eq "hello h2\n";
}
for (1 .. 7) {
    my ($rc, $body) = $t->curl('--http2-prior-knowledge',
                               "http://127.0.0.1:$port/index.html");
    $ok2++ if $rc == 0 && $body eq "hello h2\n";
}
is($ok1, 5, '5 requests over HTTP/1.1');
is($ok2, 7, '7 requests over HTTP/2 (prior knowledge)');

# the status requests before this one are HTTP/1.1 requests too
$f = totals_until(sub { $_[0]{open} == 0 });
my $j = json();
$f = flat($j->{totals});
is($f->{h1}, 5 + $nstatus - 1, 'JSON: h1_requests, the status ones too');
is($f->{h2}, 7, 'JSON: h2_requests 7');
is($f->{connections}, 7, 'JSON: 7 HTTP/2 connections');
is($f->{open}, 0, 'JSON: no HTTP/2 connection open');
is($f->{streams}, 0, 'JSON: no stream open');
my $c = flat($j->{children}[0] // {});
is_deeply($c, $f, 'JSON: the one child\'s row is the totals')
    or diag(explain($c));

my ($p) = prom();
is($p->{'gannet_requests_by_protocol_total{protocol="h1"}'}, 5 + $nstatus - 1,
   'Prometheus: requests_by_protocol_total{protocol="h1"}');
is($p->{'gannet_requests_by_protocol_total{protocol="h2"}'}, 7,
   'Prometheus: requests_by_protocol_total{protocol="h2"}');
is($p->{gannet_http2_connections_total}, 7,
   'Prometheus: http2_connections_total 7');
is($p->{gannet_http2_connections_open}, 0, 'Prometheus: connections open 0');
is($p->{gannet_http2_streams_open}, 0, 'Prometheus: streams open 0');
my $who = "slot=\"$j->{children}[0]{slot}\",pid=\"$kids[0]\"";
is($p->{"gannet_child_requests_by_protocol_total{$who,protocol=\"h2\"}"}, 7,
   'Prometheus: the child\'s row, h2');

# ---- open connections and streams, then none --------------------------

# What the server counted so far, and what each step adds; h1 is always
# the 5 curl requests plus the status requests before the one read.
my %w = %$f;
my $h1_more = 0;                 # HTTP/2 requests counted as HTTP/1.x

sub settle
{
    my $g = totals_until(sub { $_[0]{open} == 0 && $_[0]{streams} == 0 });

    $w{h1} = 5 + $nstatus - 1 + $h1_more;
    return $g;
}

{
    my ($pid, $out) = attack_start($port, 'streams', 3,
                                   '/example/delay?ms=1000');
    my $g = totals_until(sub { $_[0]{open} == 1 && $_[0]{streams} == 3 });
    is($g->{open}, 1, 'while a client waits: 1 HTTP/2 connection open');
    is($g->{streams}, 3, 'while a client waits: its 3 streams open');
    my $res = attack_end($pid, $out);
    is(scalar(() = $res =~ /^END \d+$/mg), 3, '3 slow requests: answered')
        or diag($res);
    $w{h2} += 3;
    $w{connections}++;
    $g = settle();
    is_deeply($g, \%w, 'client gone: 0 connections and 0 streams open, '
              . '3 more HTTP/2 requests') or diag(explain($g));
}

# ---- each limit --------------------------------------------------------

# Each attack on a connection of its own; the counters must move by
# exactly what it did (every case below is deterministic, see each).
sub step
{
    my ($name, $res, %d) = @_;
    my $g;

    $w{connections}++;
    $w{$_} += $d{$_} for keys %d;
    $g = settle();
    is_deeply($g, \%w, "$name: the counters") or diag(explain($g), $res);
    return $g;
}

# 10 requests at once, before the client's SETTINGS ACK, for a response
# that takes 1 s: 4 served, 6 refused, on the server with
# http2_max_concurrent_streams 4
my $res = attack($t->port(1), 'streams', 10, '/example/delay?ms=1000');
is(scalar(() = $res =~ /^RST \d+ REFUSED_STREAM$/mg), 6,
   'refused streams: 6 RST_STREAM REFUSED_STREAM') or diag($res);
step('refused streams', $res, refused => 6, h2 => 4);

# 2000 PINGs with http2_max_glitches 50: one connection closed for its
# glitches (then nghttp2's own GOAWAY is not counted as a flood)
$res = attack($t->port(1), 'ping-flood', 2000);
like($res, qr/^GOAWAY \d+ ENHANCE_YOUR_CALM$/m, 'PING flood: GOAWAY')
    or diag($res);
step('PING flood', $res, glitches => 1);

# CONTINUATION frames that never end a head: nghttp2's limit, once; the
# head never completes, and is logged (400) as a cut HTTP/1 head is
$res = attack($port, 'continuation-flood', 2000);
like($res, qr/^GOAWAY \d+ ENHANCE_YOUR_CALM$/m, 'CONTINUATION flood: GOAWAY')
    or diag($res);
step('CONTINUATION flood', $res, flood => 1, h2 => 1);

# a head that decodes to 16 MB: 431 on its stream, then a request that is
# served: two HTTP/2 requests
{
    my $before = settle();
    $res = attack($port, 'hpack-bomb', 4000);
    like($res, qr/^STATUS 1 431$/m, 'HPACK bomb: 431') or diag($res);
    like($res, qr/^STATUS 3 200$/m, 'HPACK bomb: the next request 200');
    my $g = settle();
    is($g->{h1} + $g->{h2} - $w{h1} - $w{h2}, 2,
       'HPACK bomb: 2 requests counted');
    is($g->{h2} - $w{h2}, 2, 'HPACK bomb: both counted as HTTP/2');
    $h1_more += $g->{h1} - $w{h1};
    $w{h2} = $g->{h2};
    step('HPACK bomb', $res, header_list => 1);
}

# a window kept at 0: send_timeout (2 s) cuts the stream, logged 408
$res = attack($port, 'zero-window', '/big.txt', 6);
like($res, qr/^RST 1 CANCEL$/m, 'zero window: RST_STREAM CANCEL')
    or diag($res);
step('zero window', $res, timeout => 1, h2 => 1);

# 10 requests for a response that takes 1.5 s, reset after 0.5 s (each
# logged 499), then one that is served
$res = attack($port, 'reset-some', 10, '/example/delay?ms=1500', 0.5);
like($res, qr/^STATUS 21 200$/m, 'reset streams: the next one is served')
    or diag($res);
step('client resets', $res, resets => 10, h2 => 11);

# ---- the same numbers in Prometheus, the child's row, the page ------------

my $body;
($p, $body) = prom();
$w{h1} = 5 + $nstatus - 1 + $h1_more;
my %pw = (
    'gannet_requests_by_protocol_total{protocol="h1"}' => $w{h1},
    'gannet_requests_by_protocol_total{protocol="h2"}' => $w{h2},
    gannet_http2_connections_total => $w{connections},
    gannet_http2_connections_open => 0,
    gannet_http2_streams_open => 0,
    'gannet_http2_limit_trips_total{limit="refused"}' => 6,
    'gannet_http2_limit_trips_total{limit="glitches"}' => 1,
    'gannet_http2_limit_trips_total{limit="flood"}' => 1,
    'gannet_http2_limit_trips_total{limit="header_list"}' => 1,
    'gannet_http2_limit_trips_total{limit="timeout"}' => 1,
    gannet_http2_client_resets_total => 10,
);
my %pg = map { $_ => $p->{$_} } keys %pw;
is_deeply(\%pg, \%pw, 'Prometheus: the totals') or diag(explain(\%pg));
my %cg = map { (my $k = $_) =~ s/^gannet_/gannet_child_/;
               $k =~ s/\{/{$who,/ or $k .= "{$who}";
               $_ => $p->{$k} } keys %pw;
is_deeply(\%cg, \%pw, 'Prometheus: the child\'s rows') or diag(explain(\%cg));
for my $m (qw(requests_by_protocol_total http2_connections_total
              http2_limit_trips_total http2_client_resets_total))
{
    like($body, qr/^# HELP gannet_$m .+\n# TYPE gannet_$m counter$/m,
         "Prometheus: HELP and TYPE of gannet_$m");
}
like($body, qr/^# TYPE gannet_http2_streams_open gauge$/m,
     'Prometheus: gannet_http2_streams_open is a gauge');

$j = json();
$w{h1} = 5 + $nstatus - 1 + $h1_more;
is_deeply(flat($j->{children}[0]), \%w, 'JSON: the child\'s row');

my $r = status();
$w{h1} = 5 + $nstatus - 1 + $h1_more;
like($r->{body}, qr{<h2>Protocols</h2>}, 'HTML: the Protocols section');
my $line = "requests: HTTP/1.x $w{h1}, HTTP/2 $w{h2}; HTTP/2 connections: "
           . "0 open / $w{connections} total, 0 streams open";
like($r->{body}, qr{<p id=gn-proto>\Q$line\E</p>},
     'HTML: requests by protocol, connections, streams');
$line = 'HTTP/2 limits: refused 6, glitches 1, flood 1, header list 1, '
        . 'timeout 1; client resets 10';
like($r->{body}, qr{<p id=gn-h2limits>\Q$line\E</p>},
     'HTML: each limit\'s trips');

# ---- a reload: the old child's counts stay in the totals ------------------

my @new = GnTLS::reload($t, 1, @kids);
is(scalar @new, 1, 'reload: a new child');
my $end = time() + GnTest::slow(10);
while (1) {
    $j = json();
    last if ($j->{totals}{children_exited} // 0) == 1
            && @{$j->{children} // []} == 1;
    last if time() > $end;
    sleep(0.1);
}
is($j->{totals}{children_exited}, 1, 'reload: the old child exited');
$w{h1} = 5 + $nstatus - 1 + $h1_more;
$f = flat($j->{totals});
is_deeply($f, \%w, 'reload: the totals keep every protocol counter')
    or diag(explain($f));
$c = flat($j->{children}[0]);
is($c->{h2} + $c->{connections} + $c->{refused} + $c->{resets}, 0,
   'reload: the new child counts from 0');

my ($rc, $b2) = $t->curl('--http2-prior-knowledge',
                         "http://127.0.0.1:$port/index.html");
is($b2, "hello h2\n", 'after the reload: an HTTP/2 request');
$w{h2}++;
$w{connections}++;
$f = settle();
is_deeply($f, \%w, 'after the reload: the totals go on from there')
    or diag(explain($f));

$t->done;
