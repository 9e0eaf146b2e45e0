#!/usr/bin/perl

# limit_req and limit_conn (issue 23, item 4), counted in shared memory:
# one client over four children is counted once (the refusals come from
# more than one child), burst and nodelay, a delayed request that still
# gets its 200 (logged and counted as delayed; no timing is asserted),
# limit_req_status 429, limit_conn refusing a second request while the
# first is in progress and letting one through once it ended (or its
# client went away), over HTTP/2 too, the counters on the status page
# (JSON, Prometheus, HTML), and a reload keeping the zones and their
# state.

use strict;
use warnings;

use Test::More;
use JSON::PP ();
use IO::Select;
use Time::HiRes qw(time);
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 4;
user %%USER%%;
error_log logs/error.log info;
load_module %%MODDIR%%/mod_status.so;
log_format lim '$pid $status $uri';

limit_req_zone $binary_remote_addr zone=once:1m rate=1r/m;
limit_req_zone $binary_remote_addr zone=four:1m rate=1r/m;
limit_req_zone $binary_remote_addr zone=slow:64k rate=20r/s;
limit_req_zone "$binary_remote_addr$uri" zone=peruri:1m rate=1r/m;
limit_conn_zone $binary_remote_addr zone=addr:1m;

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    access_log logs/lim.log lim;
    client_body_timeout 30s;

    location /once/ {
        limit_req zone=once;
        limit_req_status 429;
    }
    location /four/ {
        limit_req zone=four burst=3 nodelay;
    }
    location /slow/ {
        limit_req zone=slow burst=10;
    }
    location /peruri/ {
        limit_req zone=peruri;
    }
    location /conn/ {
        limit_conn addr 1;
        limit_conn_log_level info;
    }
    location = /status {
        handler status;
    }
}
EOF_CONF

$t->write_file("html/$_/a.txt", "$_\n") for qw(once four slow peruri conn);
$t->write_file('html/peruri/b.txt', "b\n");
$t->run;
$t->wait_children(4, 10);

sub status_of { return $t->http_get($_[0])->{status} // 0; }

# ---- one client over four children, counted once --------------------------

my @st = map { status_of('/once/a.txt') } 1 .. 20;
is(scalar(grep { $_ == 200 } @st), 1, 'rate 1r/m: one request of 20 passes')
    or diag("@st");
is(scalar(grep { $_ == 429 } @st), 19, 'the others get limit_req_status 429');

ok($t->wait_log(qr{ 429 /once/a\.txt$}m, 5, 'logs/lim.log'), 'logged');
my %pids;
sub refusers
{
    %pids = ();
    for (split /\n/, $t->read_file('logs/lim.log') // '') {
        $pids{$1} = 1 if m{^(\d+) 429 /once/};
    }
    return scalar keys %pids;
}
# a slow run (valgrind) may hand every connection to one child: more
# requests, each of which must be refused too, until two children have
my @more;
while (refusers() < 2 && @more < 80) {
    push @more, status_of('/once/a.txt');
    select(undef, undef, undef, 0.05);
}
is(scalar(grep { $_ != 429 } @more), 0, '... and every request after them');
cmp_ok(refusers(), '>=', 2,
       'refused by more than one child: the count is shared')
    or diag(explain(\%pids));

like($t->error_log, qr/\[error\] .*limiting requests, excess: \d\.\d{3} by zone "once"/,
     'a refusal is logged at error, as nginx');

# ---- burst, nodelay --------------------------------------------------------

@st = map { status_of('/four/a.txt') } 1 .. 8;
is("@st", '200 200 200 200 503 503 503 503',
   'burst=3 nodelay: four at once, then limit_req_status 503 (default)');

# ---- a key with the URI: counted apart -------------------------------------

is(status_of('/peruri/a.txt'), 200, 'key $binary_remote_addr$uri: a.txt');
is(status_of('/peruri/b.txt'), 200, '... b.txt is another key');
is(status_of('/peruri/a.txt'), 503, '... a.txt again is refused');

# ---- delays: burst without nodelay -----------------------------------------

{
    my @s = map { $t->connect } 1 .. 6;
    $t->write_all($_, $t->request('/slow/a.txt')) for @s;
    my @r = map { my $b = ''; $t->read_response($_, \$b) } @s;
    close $_ for @s;
    is(join(' ', map { $_->{status} // 0 } @r), '200 200 200 200 200 200',
       'burst=10 without nodelay: six at once all pass, some after a wait');
    like($t->error_log, qr/\[warn\] .*delaying request, excess: \d\.\d{3}, by zone "slow"/,
         'a delay is logged one level below limit_req_log_level');
}

# ---- limit_conn ------------------------------------------------------------

# A POST whose body is half sent, its request counted: the server's
# "100 Continue" comes after the limits let it through, so once it is
# read no other request of the client can hold the one place first.
sub partial_post
{
    my $s = $t->connect;
    my ($buf, $end) = ('', time() + GnTest::slow(10));

    $t->write_all($s, "POST /conn/a.txt HTTP/1.1\r\nHost: localhost\r\n"
                      . "Expect: 100-continue\r\nContent-Length: 10\r\n\r\n");
    my $sel = IO::Select->new($s);
    while ($buf !~ /\r\n\r\n/ && time() < $end) {
        next unless $sel->can_read(0.1);
        my $n = sysread($s, $buf, 512, length $buf);
        last if !defined $n || $n == 0;
    }
    diag("no 100 Continue: $buf") unless $buf =~ m{^HTTP/1\.1 100 };
    $t->write_all($s, '12345');
    return $s;
}

{
    my $s = partial_post();
    my $second = status_of('/conn/a.txt');
    is($second, 503, 'limit_conn 1: a second request while the first is '
       . 'being served is refused');
    like($t->error_log, qr/\[info\] .*limiting connections by zone "addr"/,
         'logged at limit_conn_log_level');

    $t->write_all($s, '67890');
    my $b = '';
    my $r = $t->read_response($s, \$b);
    is($r->{status}, 405, 'the first one ends (a POST to a file: 405)');
    close $s;
    # the count goes back once the server is done with the request, just
    # after the client has its response: a slow run (valgrind) may see
    # the next request first
    my $next = 0;
    for (1 .. 50) {
        $next = status_of('/conn/a.txt');
        last if $next == 200;
        select(undef, undef, undef, 0.05 * GnTest::slow(1));
    }
    is($next, 200, 'then the next one passes');

    $s = partial_post();
    for (1 .. 50) {
        last if status_of('/conn/a.txt') == 503;
        select(undef, undef, undef, 0.05);
    }
    close $s;                             # the client goes away
    my $after = 0;
    for (1 .. 50) {
        $after = status_of('/conn/a.txt');
        last if $after == 200;
        select(undef, undef, undef, 0.05);
    }
    is($after, 200, 'a client that went away gives its count back');

    # each request of a keep-alive connection gives its count back as it
    # ends, not when the connection does
    my @r = $t->http_keepalive([ map { $t->request('/conn/a.txt',
                                                   keepalive => 1) } 1 .. 3 ]);
    is(join(' ', map { $_->{status} // 0 } @r), '200 200 200',
       'limit_conn 1: three requests one after another on one connection');
}

# ---- HTTP/2 ----------------------------------------------------------------

SKIP: {
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 1 unless $out =~ /\bHTTP2\b/;
    ($rc, $out) = $t->curl('--http2-prior-knowledge', '-o', '/dev/null',
                           '-w', '%{http_version} %{http_code}',
                           'http://127.0.0.1:' . $t->port(1)
                           . '/once/a.txt');
    is($out, '2 429', 'h2: the same zone refuses the same client');
}

# ---- the status page -------------------------------------------------------

sub zones
{
    my $j = eval { JSON::PP::decode_json($t->http_get('/status?format=json')
                                         ->{body} // '') } // {};
    return { map { $_->{zone} => $_ } @{$j->{limit_zones} // []} };
}

my $z = zones();
is($z->{once}{kind}, 'req', 'JSON: limit_zones, kind req');
is($z->{once}{passed}, 1, 'JSON: once passed 1');
cmp_ok($z->{once}{rejected}, '>=', 20, 'JSON: once rejected 20 and more');
is($z->{four}{passed}, 4, 'JSON: four passed 4');
is($z->{four}{rejected}, 4, 'JSON: four rejected 4');
cmp_ok($z->{slow}{delayed}, '>=', 1, 'JSON: slow delayed some');
is($z->{slow}{passed} + $z->{slow}{delayed}, 6, 'JSON: slow let six in');
is($z->{addr}{kind}, 'conn', 'JSON: addr is a conn zone');
cmp_ok($z->{addr}{rejected}, '>=', 2, 'JSON: addr rejected');

my $prom = $t->http_get('/status?format=prometheus')->{body} // '';
like($prom, qr/^gannet_limit_requests_total\{zone="four",kind="req",result="rejected"\} 4$/m,
     'Prometheus: gannet_limit_requests_total');
like($t->http_get('/status')->{body} // '',
     qr{<p class=gn-limit>limit_req zone four: 4 passed, 0 delayed, 4 rejected</p>},
     'HTML: a line per zone');

# ---- a reload keeps the zones ----------------------------------------------

my @old = $t->children;
my $from = length $t->error_log;
$t->signal('HUP');
ok($t->wait_log(qr/reload complete/, 10, undef, $from), 'reloaded');
$t->wait_children(4, 15, not => \@old);
is(status_of('/once/a.txt'), 429,
   'after a reload the zone still holds the client\'s state');
$z = zones();
is($z->{four}{passed}, 4, 'after a reload the counters are kept');

$t->done;
