#!/usr/bin/perl

# modules/status (mod_status.so): the scoreboard as JSON, Prometheus text
# and HTML with inline SVG charts; per-child rows that match the real
# children; counters by status class; the shared history ring filled by
# the children's timers; the core allow/deny rules govern the status
# location as any other (status_allow is gone and says so); TLS handshake counters and the
# session cache when certificates and a TLS build are available.

use strict;
use warnings;

use Test::More;
use JSON::PP;
use IO::Socket::IP;
use Time::HiRes qw(time sleep);
use GnTest;
use GnTLS;

my $t = GnTest->new(timeout => 90);
$t->skip_unless_bin;
$t->skip_unless_module('mod_status');

# ---- optional parts: IPv6 loopback, TLS -----------------------------------

my $v6 = IO::Socket::IP->new(LocalHost => '::1', LocalPort => 0,
                             Proto => 'tcp', Listen => 1) ? 1 : 0;

my $tls = GnTLS::optional($t, 'curl');

# ---- configuration ----------------------------------------------------------

# location => [allow/deny rules, expected status from 127.0.0.1]
my @v4_rules = (
    [ '/a-deny',    'deny all;',                          403 ],
    [ '/a-local',   'allow 127.0.0.1; deny all;',         200 ],
    [ '/a-other',   'allow 10.0.0.0/8; deny all;',        403 ],
    [ '/a-open',    '',                                   200 ],
);

# location => [allow/deny rules, expected status from ::1]
my @v6_rules = (
    [ '/b-local',   'allow ::1; deny all;',               200 ],
    [ '/b-v4',      'allow 127.0.0.1; deny all;',         403 ],
    [ '/a-open',    '',                                   200 ],
);

my $locs = '';
my %seen;
for my $r (grep { !$seen{$_->[0]}++ } @v4_rules, @v6_rules) {
    $locs .= "    location = $r->[0] { handler status; $r->[1] }\n";
}

my $listen6 = $v6 ? 'listen [::1]:%%PORT_1%%;' : '';
my $tls_main = $tls ? 'tls_session_cache 1m;' : '';
my $tls_srv = $tls ? <<'EOF' : '';
server {
    listen 127.0.0.1:%%PORT_2%% tls;
    server_name localhost;
    tls_certificate %%CERTS%%/localhost-ec.pem;
    tls_certificate_key %%CERTS%%/localhost-ec.key;
    location = /status { handler status; }
}
EOF

$t->write_conf(<<"EOF");
load_module %%MODDIR%%/mod_status.so;
children 2;
user %%USER%%;
status_sample_interval 1s;
$tls_main
types { text/html html; }

server {
    listen 127.0.0.1:%%PORT_0%%;
    $listen6
    server_name localhost;
    location = /status { handler status; status_refresh 3s; }
$locs}

$tls_srv
EOF

my $index = "<html>status test page</html>\n";
$t->write_file('html/index.html', $index);
$t->run;

my @kids = $t->wait_children(2, 5);
is(scalar @kids, 2, '2 children');

# ---- traffic ---------------------------------------------------------------

my $n200 = 20;
my $n404 = 3;
my ($ok200, $ok404, $bytes_req) = (0, 0, 0);

for (1 .. $n200) {
    my $req = $t->request('/index.html');
    my $r = $t->http($req);
    $bytes_req += length $req;
    $ok200++ if ($r->{status} // 0) == 200 && $r->{body} eq $index;
}
for (1 .. $n404) {
    my $req = $t->request('/no-such-file');
    my $r = $t->http($req);
    $bytes_req += length $req;
    $ok404++ if ($r->{status} // 0) == 404;
}
is($ok200, $n200, "$n200 GETs answered 200");
is($ok404, $n404, "$n404 GETs answered 404");

my $sent = $n200 + $n404;

sub get_json
{
    my $r = $t->http_get('/status?format=json');
    my $j = eval { JSON::PP->new->decode($r->{body}) };

    return ($r, $j);
}

# Counters are bumped when the request is logged, just after the
# response leaves: poll until they catch up.
my ($r, $j);
my $end = time() + GnTest::slow(5);
while (1) {
    ($r, $j) = get_json();
    # (and, under valgrind, a child that served nothing yet may still be
    # starting)
    last if $j && $j->{totals}{requests} >= $sent
            && $j->{totals}{responses}{'4xx'} >= $n404
            && 2 == grep { ($_->{state} // '') eq 'running' }
                         @{$j->{children} // []};
    last if time() > $end;
    sleep(0.1);
}

my $first_j = $j // {};

# ---- JSON -------------------------------------------------------------------

is($r->{status}, 200, 'json: 200');
like($r->{headers}{'content-type'} // '', qr{^application/json},
     'json: Content-Type application/json');
ok($j, 'json: parses') or diag($r->{body} // $r->{error});
$j //= { children => [], totals => { responses => {}, tls => {} },
         tls_session_cache => {}, history => [] };

is($j->{version}, 'gannet', 'json: version hidden (server_tokens off)');
is($j->{master_pid}, $t->master_pid, 'json: master_pid');
is($j->{children_configured}, 2, 'json: children_configured 2');
ok(defined $j->{generation} && $j->{generation} =~ /^\d+$/,
   'json: generation');
ok(defined $j->{uptime} && $j->{uptime} >= 0 && $j->{uptime} < 60,
   "json: uptime ($j->{uptime})");

my @ch = @{$j->{children}};
is(scalar @ch, 2, 'json: 2 children');
is_deeply([ sort { $a <=> $b } map { $_->{pid} } @ch ],
          [ sort { $a <=> $b } $t->children ],
          'json: child pids are the real children (/proc)');
is(scalar(grep { ($_->{state} // '') eq 'running' } @ch), 2,
   'json: both children running');
is(scalar(grep { defined $_->{slot} && $_->{slot} =~ /^\d+$/ } @ch), 2,
   'json: slots');
my %slots = map { $_->{slot} => 1 } @ch;
is(scalar keys %slots, 2, 'json: distinct slots');
is(scalar(grep { $_->{generation} == $j->{generation} } @ch), 2,
   'json: children of the current generation');
is(scalar(grep { ref $_->{responses} eq 'HASH' && ref $_->{tls} eq 'HASH'
                 && exists $_->{responses}{'5xx'}
                 && exists $_->{tls}{resumed} } @ch), 2,
   'json: per-child responses and tls objects');

my %sum;
for my $c (@ch) {
    $sum{$_} += $c->{$_} for qw(requests bytes_in bytes_out accepted);
    $sum{"r$_"} += $c->{responses}{"${_}xx"} for 1 .. 5;
}
my $tot = $j->{totals};
is($tot->{requests}, $sum{requests}, 'json: totals.requests = sum of rows');
is($tot->{bytes_out}, $sum{bytes_out}, 'json: totals.bytes_out = sum');
is($tot->{responses}{'2xx'}, $sum{r2}, 'json: totals 2xx = sum');
is($tot->{children}, 2, 'json: totals.children');
cmp_ok($tot->{requests}, '>=', $sent, "json: requests >= $sent sent");
cmp_ok($tot->{accepted}, '>=', $sent, "json: accepted >= $sent");
cmp_ok($tot->{responses}{'2xx'}, '>=', $n200, "json: 2xx >= $n200");
cmp_ok($tot->{responses}{'4xx'}, '>=', $n404, "json: 4xx >= $n404 (the 404s)");
is($tot->{responses}{'5xx'}, 0, 'json: no 5xx yet');
cmp_ok($tot->{bytes_in}, '>=', $bytes_req,
       "json: bytes_in >= $bytes_req request bytes");
cmp_ok($tot->{bytes_out}, '>=', $n200 * length($index),
       'json: bytes_out >= the bodies sent');
cmp_ok($tot->{connections}, '>=', 1,
       'json: connections >= 1 (this one is open)');
my $tc = $j->{tls_session_cache};
ok(ref $tc eq 'HASH'
   && !grep({ !exists $tc->{$_} }
            qw(enabled entries used stores hits misses evictions)),
   'json: tls_session_cache members');

# ---- Prometheus --------------------------------------------------------------

$r = $t->http_get('/status?format=prometheus');
is($r->{status}, 200, 'prometheus: 200');
like($r->{headers}{'content-type'} // '',
     qr{^text/plain; version=0\.0\.4}, 'prometheus: Content-Type');

my $sample_re = qr/^([a-zA-Z_:][a-zA-Z0-9_:]*)
                   (?:\{((?:[a-zA-Z_]\w*="(?:[^"\\]|\\.)*",?)*)\})?
                   \ (-?[0-9.eE+]+)$/x;
my (%type, %help, %samples, @badline, @untyped);
for my $l (split /\n/, $r->{body}) {
    if ($l =~ /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge)$/) {
        $type{$1} = $2;
    } elsif ($l =~ /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S/) {
        $help{$1} = 1;
    } elsif ($l =~ $sample_re) {
        my ($name, $labels, $v) = ($1, $2 // '', $3);
        my %l = $labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
        push @untyped, $name unless $type{$name};
        push @{$samples{$name}}, { labels => \%l, value => $v };
    } else {
        push @badline, $l;
    }
}
is(scalar @badline, 0, 'prometheus: every line parses')
    or diag(join("\n", @badline[0 .. ($#badline > 5 ? 5 : $#badline)]));
is(scalar @untyped, 0, 'prometheus: every sample follows its # TYPE line')
    or diag("@untyped");
is(scalar(grep { !$help{$_} } keys %type), 0,
   'prometheus: HELP for every TYPE');
my @badc = grep { $type{$_} eq 'counter' && !/_total$/ } keys %type;
is(scalar @badc, 0, 'prometheus: counters end in _total') or diag("@badc");
is($type{gannet_requests_total}, 'counter', 'prometheus: requests counter');
is($type{gannet_connections}, 'gauge', 'prometheus: connections gauge');
is_deeply([ map { $_->{value} } @{$samples{gannet_up} // []} ], [1],
          'prometheus: gannet_up 1');

my @rq = @{$samples{gannet_child_requests_total} // []};
is(scalar @rq, 2, 'prometheus: gannet_child_requests_total for 2 children');
is_deeply([ sort { $a <=> $b } map { $_->{labels}{pid} } @rq ],
          [ sort { $a <=> $b } @kids ], 'prometheus: pid labels');
my $psum = 0;
$psum += $_->{value} for @rq;
cmp_ok($psum, '>=', $tot->{requests},
       "prometheus: requests sum $psum >= the JSON total");
my @rt = @{$samples{gannet_requests_total} // []};
ok(@rt == 1 && !%{$rt[0]{labels}} && $rt[0]{value} >= $psum,
   'prometheus: gannet_requests_total, the server total, no labels');
my $p4 = 0;
$p4 += $_->{value}
    for grep { $_->{labels}{class} eq '4xx' }
        @{$samples{gannet_responses_total} // []};
cmp_ok($p4, '>=', $n404, 'prometheus: 4xx responses');
ok(exists $samples{gannet_tls_session_cache_entries}
   && $type{gannet_tls_session_cache_hits_total},
   'prometheus: gannet_tls_session_cache_*');

# ---- history and HTML ------------------------------------------------------

# The window is whole from the start (the ring in shared memory is filled
# when it is made): no waiting for samples. A period in which no child
# woke has no sample; under valgrind the children start slowly enough to
# miss some, so the exact count is checked only without it.
sub whole_window
{
    my ($j, $what, $oldest) = @_;
    my @h = @{$j->{history} // []};
    my @ts = map { $_->{t} } @h;

    ok(@ts && $ts[0] <= $j->{time} - 58,
       "$what: the oldest sample is a window (60 s) old")
        or diag("time $j->{time}, oldest " . ($ts[0] // 'none'))
        if $oldest;
    is(scalar(grep { $ts[$_] <= $ts[$_ - 1] } 1 .. $#ts), 0,
       "$what: timestamps increasing");
    # (a busy machine, too, may let a period pass unsampled: a few may
    # be missing, never more than the window)
    SKIP: {
        skip 'periods may pass unsampled under valgrind', 1
            if GnTest::valgrind();
        ok(@h >= 56 && @h <= 60, "$what: a window of samples (" . @h
           . " of 60)");
    }
}

is($first_j->{history_interval}, 1, 'history: interval 1 s');
is($first_j->{history_interval_ms}, 1000, 'history: interval_ms 1000');
is($first_j->{history_window}, 60, 'history: a window of 60 samples');
whole_window($first_j, 'history right after the start', 1);
my @h;

# samples every second: poll until one holds the traffic
my $end_h = time() + GnTest::slow(10);
while (1) {
    ($r, $j) = get_json();
    @h = @{($j // {})->{history} // []};
    last if @h && $h[-1]{requests} >= $sent && $h[-1]{children} == 2;
    last if time() > $end_h;
    sleep(0.1);
}
ok(@h && $h[-1]{requests} >= $sent && $h[-1]{children} == 2,
   'history: the newest sample has the totals')
    or diag(explain($h[-1]));
whole_window($j // {}, 'history later');

$r = $t->http_get('/status');
is($r->{status}, 200, 'html: 200');
like($r->{headers}{'content-type'} // '', qr{^text/html}, 'html: text/html');
unlike($r->{body}, qr{\bsrc=|href="?(?:https?:)?//|\@import|url\(}i,
       'html: no external resource');
is(scalar(grep { $r->{body} =~ /\b$_\b/ } @kids), 2, 'html: both pids');
like($r->{body}, qr{<th>TLS full / resumed / failed</th>},
     'html: the TLS column says what its three numbers are');
like($r->{body}, qr{<div id=gn-charts>}, 'html: the charts box');
unlike($r->{body}, qr{http-equiv=refresh}, 'html: no page reload');

# the page carries the snapshot as JSON for its script, whole window too
my $data_tag = '<script type=application/json id=gn-data data-refresh=3000>';
my ($data) = $r->{body} =~ m{\Q$data_tag\E(.*?)</script>}s;
ok(defined $data, 'html: the JSON snapshot, refresh every 3000 ms');
my $pj = eval { JSON::PP->new->decode($data // '') };
# (the window's samples as whole_window counts them: a busy machine may
# let a few periods pass unsampled, valgrind more)
my $nh = $pj ? scalar(@{$pj->{history} // []}) : 0;
ok($pj && $nh <= 60 && $nh >= (GnTest::valgrind() ? 1 : 56)
   && @{$pj->{children}} == 2,
   'html: ... which parses, with the window\'s samples and the children')
    or diag("samples $nh, children "
            . ($pj ? scalar(@{$pj->{children} // []}) : 'none'));
unlike($data // '', qr{[<>&]}, 'html: ... and no <, >, & in it');

# the script: draws SVG, fetches ?format=json and redraws in place
my ($js) = $r->{body} =~ m{<script>(.*?)</script>}s;
ok(defined $js, 'html: an inline script');
like($js // '', qr{location\.pathname \+ '\?format=json'},
     'html: ... polling the JSON endpoint of this page');
like($js // '', qr{fetch\(url,}, 'html: ... with fetch()');
like($js // '', qr{setTimeout\(poll, every\)}, 'html: ... every refresh');
like($js // '', qr{createElementNS\(NS,.*svg}s, 'html: ... into SVG');
like($js // '', qr{hms\(x\)}, 'html: ... a time axis (hh:mm:ss)');
like($js // '', qr{req/s.*B/s}s, 'html: ... scales with units');
unlike($js // '', qr{innerHTML|document\.write|eval\(}, 'html: ... text '
       . 'goes in as text only');
like($r->{body}, qr{^<!DOCTYPE html>.*</html>\n\z}s, 'html: complete page');
like($r->{headers}{'cache-control'} // '', qr/no-store/,
     'html: Cache-Control no-store');

$r = $t->http_get('/a-open');
like($r->{body}, qr{id=gn-data data-refresh=5000>},
     'html: refreshes every 5 s by default');

# ---- request handling -------------------------------------------------------

$r = $t->http_get('/status?format=bogus');
is($r->{status}, 400, 'unknown format: 400');
$r = $t->http_get('/status?x=1&format=json&y');
is($r->{status}, 200, 'format among other arguments');
like($r->{headers}{'content-type'} // '', qr{^application/json},
     '... is found');
$r = $t->http_get('/status', method => 'POST', body => 'x');
is($r->{status}, 405, 'POST: 405');
$r = $t->http_head('/status');
is($r->{status}, 200, 'HEAD: 200');

# ---- allow / deny ----------------------------------------------------------

for my $a (@v4_rules) {
    $r = $t->http_get($a->[0] . '?format=json');
    is($r->{status}, $a->[2], "127.0.0.1, \"$a->[1]\": $a->[2]");
}

SKIP: {
    skip 'no IPv6 loopback', scalar @v6_rules unless $v6;

    my $p = $t->port(1);
    my $get = sub {
        my ($path) = @_;
        my $s = IO::Socket::IP->new(PeerHost => '::1', PeerPort => $p,
                                    Proto => 'tcp', Timeout => 5);
        return { error => "connect: $!", headers => {}, body => '' }
            unless $s;
        my $buf = '';
        $t->write_all($s, $t->request($path));
        my $resp = $t->read_response($s, \$buf);
        close $s;
        return $resp;
    };

    for my $a (@v6_rules) {
        $r = $get->($a->[0]);
        is($r->{status}, $a->[2], "::1, \"$a->[1]\": $a->[2]");
    }
}

# ---- TLS -------------------------------------------------------------------

SKIP: {
    skip 'no TLS build, certificates or curl', 6 unless $tls;

    my $c = GnTLS::curl($t, port => $t->port(2), path => '/status');
    is($c->{status}, '200', 'TLS: curl https://.../status: 200')
        or diag($c->{err});
    like($c->{body} // '', qr{id=gn-charts}, 'TLS: the HTML page');

    my $have_openssl = defined GnTest::_which('openssl');
    my $sess = $t->testdir . '/s.sess';
    if ($have_openssl) {
        GnTLS::s_client($t, port => $t->port(2), tls => '1.2',
                        sess_out => $sess, path => '/status');
        GnTLS::s_client($t, port => $t->port(2), tls => '1.2',
                        sess_in => $sess, path => '/status');
    }

    my $end = time() + GnTest::slow(3);
    while (1) {
        ($r, $j) = get_json();
        last if !$j || time() > $end;
        last if $j->{totals}{tls}{full} >= 1
                && (!$have_openssl || $j->{totals}{tls}{resumed} >= 1);
        sleep(0.1);
    }
    cmp_ok($j->{totals}{tls}{full}, '>=', 1, 'TLS: full handshakes >= 1');
    SKIP: {
        skip 'no openssl', 1 unless $have_openssl;
        cmp_ok($j->{totals}{tls}{resumed}, '>=', 1,
               'TLS: resumed handshakes >= 1 (s_client -sess_in)');
    }
    ok($j->{tls_session_cache}{enabled}
       && $j->{tls_session_cache}{entries} > 0,
       'TLS: tls_session_cache enabled with entries')
        or diag(explain($j->{tls_session_cache}));
    is($j->{totals}{tls}{failed}, 0, 'TLS: no failed handshakes');
}

# ---- reload ------------------------------------------------------------------

# A reload: new children of the next generation; the history ring made by
# the master before the first fork is kept.
my $gen = $j->{generation};
my $last = $j->{history}[-1] // {};
my @new = GnTLS::reload($t, 2, @kids);
is(scalar @new, 2, 'reload: 2 new children');
$end = time() + GnTest::slow(5);
while (1) {
    ($r, $j) = get_json();
    last if !$j || @{$j->{children}} == 2 || time() > $end;
    sleep(0.1);
}
is($j->{generation}, $gen + 1, 'reload: generation + 1');
is_deeply([ sort { $a <=> $b } map { $_->{pid} } @{$j->{children}} ],
          [ sort { $a <=> $b } @new ], 'reload: the new pids');
is(scalar(grep { $_->{generation} == $gen + 1 } @{$j->{children}}), 2,
   'reload: rows of the new generation');
whole_window($j, 'history after the reload');
ok(scalar(grep { $_->{t} == ($last->{t} // -1)
                 && $_->{requests} == $last->{requests} }
          @{$j->{history}}) == 1,
   'reload: the samples from before it are kept (shared memory)')
    or diag(explain($last));

# ---- main-level checks at start ----------------------------------------------

# A configuration that still says status_allow is refused with what to
# write instead; the module's configuration check (so `gannet -t` too) an
# out-of-range sample interval, at its line. Run in a prefix of their own:
# the [emerg] lines stay out of the main error log.
my $removed = 'unknown directive "status_allow" (removed: use the core '
              . '"allow" and "deny" in the location';
my @bad = (
    [ 'status_allow "127.0.0.1 ::1";',
      qr/\[emerg\] \Q$removed\E/, 'test' ],
    [ 'status_sample_interval 500ms;',
      qr/\[emerg\] "status_sample_interval" directive must be 0 \(off\) or (?#
         )from 1s to 1h, not 500 ms in \S+gannet\.conf:4$/m,
      'test' ],
);
for my $i (0 .. $#bad) {
    my $pfx = "bad$i";
    $t->write_file("$pfx/logs/.keep", '');
    $t->write_file("$pfx/gannet.conf", $t->expand(<<"EOF"));
load_module %%MODDIR%%/mod_status.so;
children 1;
user %%USER%%;
$bad[$i][0]
server {
    listen 127.0.0.1:%%PORT_3%%;
    location = /status { handler status; }
}
EOF
    my ($rc, $out, $err) = $t->run_client([ $t->bin, '-f', '-p',
                                            $t->testdir . "/$pfx/", '-c',
                                            $t->testdir . "/$pfx/gannet.conf" ],
                                          timeout => 10);
    isnt($rc, 0, "start refused with $bad[$i][0]");
    like(($t->read_file("$pfx/logs/error.log") // '') . $err, $bad[$i][1],
         '... and says why');
    next unless $bad[$i][2];

    # a configuration check: `gannet -t` tells already
    ($rc, $out, $err) = $t->run_client([ $t->bin, '-t', '-p',
                                         $t->testdir . "/$pfx/", '-c',
                                         $t->testdir . "/$pfx/gannet.conf" ],
                                       timeout => 10);
    isnt($rc, 0, "gannet -t refuses $bad[$i][0]");
    like($err, $bad[$i][1], '... at its line');
}

$t->done;
