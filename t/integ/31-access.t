#!/usr/bin/perl

# Access control: allow/deny by IPv4 and IPv6 address and CIDR (clients on
# 127.0.0.1 and, when the machine has it, [::1]); first match wins; deny
# all -> 403; an inner level with rules replaces the outer list (main ->
# server -> location). Basic authentication: no credentials -> 401 with
# the challenge; each hash format (bcrypt $2y$ $2b$, apr1, SHA-512,
# SHA-256); wrong password, unknown user, malformed or non-Basic
# Authorization -> 401; keep-alive with credentials; satisfy any / all; a
# module's handler is protected too; auth_basic off inside; a reload
# rereads the htpasswd file. Config errors (bad CIDR, bad htpasswd line,
# auth_basic without a user file) name file and line.

use strict;
use warnings;

use Test::More;
use MIME::Base64 qw(encode_base64);
use IO::Socket::IP;
use GnTest;

my $t = GnTest->new(timeout => 90);
$t->skip_unless_bin;

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
my $mod = -f "$ENV{GN_MODDIR}/mod_example.so";

# IPv6 loopback: a listener on [::1] only where it can be bound.
my $v6 = IO::Socket::IP->new(LocalHost => '::1', LocalPort => 0,
                             Listen => 1, Proto => 'tcp') ? 1 : 0;
diag('no IPv6 loopback: the [::1] checks are skipped') unless $v6;

# vectors: htpasswd -nbB, python crypt ($2b$), htpasswd -nbm,
# openssl passwd -6 / -5
my %pw = (
    alice => ['secret1',
              '$2y$05$NqwBiuFGH99s2zb5j8r4ZejruiMsFHBUNFwyqgIlAkNlwR6TeaKIC'],
    bob   => ['secret7',
              '$2b$04$wliW6nHKEMimv31oyBoXLuWPtDj9v0e0Fq3u5Kdin.nf5Yb6c1cSe'],
    carol => ['secret3', '$apr1$AbQSFQge$R5ER3crMsjj/QVrkWpmKy1'],
    dan   => ['secret4', '$6$saltsalt$sJQ//Um8FaXxhPwlNM8HXPv/AOW4xO7O1OfRAAj'
                         . 'jcXJ0llh.4e6XQKF9OnCI4ND3Dd6xNcUrwQ//rq6.Wp1HR/'],
    erin  => ['secret5', '$5$pepper$WZuqFimIWaFz3KG6eb4N/WSw3LwnOZkMVomQgUfCRRA'],
);
my $htpasswd = "# test users\n\n"
               . join('', map { "$_:$pw{$_}[1]\n" } sort keys %pw);
$t->write_file('conf/htpasswd', $htpasswd);

for my $d (qw(v4only v6only first first2 denyall auth quote any all
              auth/pub inner other))
{
    $t->write_file("html/$d/f.txt", "$d\n");
}

my $v6listen = $v6 ? 'listen [::1]:%%PORT_1%%;' : '';
my $modconf = $mod ? 'load_module %%MODDIR%%/mod_example.so;' : '';
my $modloc = $mod ? <<'EOF' : '';
    location /example/ {
        handler example;
        auth_basic "module";
        auth_basic_user_file conf/htpasswd;
    }
EOF

$t->write_conf(<<"EOF");
children 2;
user %%USER%%;
error_log logs/error.log info;
$modconf

deny all;

server {
    listen 127.0.0.1:%%PORT_0%%;
    $v6listen
    root html;
    allow all;

    location /v4only/ { allow 127.0.0.0/8; deny all; }
    location /v6only/ { allow ::1/128; deny all; }
    location /first/  { deny 127.0.0.1; allow 127.0.0.0/8; deny all; }
    location /first2/ { allow 127.0.0.1; deny 127.0.0.1; deny all; }
    location /denyall/ { deny all; }

    location /auth/ {
        auth_basic "Private Area";
        auth_basic_user_file conf/htpasswd;
    }
    location /auth/pub/ {
        auth_basic off;
    }
    location /quote/ {
        auth_basic "say \\"hi\\"";
        auth_basic_user_file %%TESTDIR%%/conf/htpasswd;
    }

    location /any/ {
        satisfy any;
        allow 127.0.0.1;
        deny all;
        auth_basic "any";
        auth_basic_user_file conf/htpasswd;
    }
    location /all/ {
        satisfy all;
        allow 127.0.0.1;
        deny all;
        auth_basic "all";
        auth_basic_user_file conf/htpasswd;
    }
$modloc}

server {
    listen 127.0.0.1:%%PORT_2%%;
    root html;

    location /inner/ { allow 127.0.0.1; }
}
EOF

$t->run;

sub creds { return 'Basic ' . encode_base64(join(':', @_), ''); }

sub get
{
    my ($path, %o) = @_;
    my @h = map { "Authorization: $_" } @{$o{auth} // []};
    my $req = $t->request($path, headers => \@h);

    return $o{v6} ? http6($req) : $t->http($req, port => $o{port});
}

# one request to [::1]
sub http6
{
    my ($req) = @_;
    my $buf = '';
    my $s = IO::Socket::IP->new(PeerHost => '::1',
                                PeerPort => $t->port(1), Proto => 'tcp',
                                Timeout => 5)
        or return { error => "connect: $!", headers => {}, body => '' };
    $t->write_all($s, $req);
    my $r = $t->read_response($s, \$buf);
    close $s;
    return $r;
}

# ---- allow / deny ---------------------------------------------------------

is(get('/v4only/f.txt')->{status}, 200, '127.0.0.1 in 127.0.0.0/8: 200');
is(get('/v6only/f.txt')->{status}, 403, '127.0.0.1 not ::1: 403');
is(get('/first/f.txt')->{status}, 403, 'first match (deny 127.0.0.1) wins');
is(get('/first2/f.txt')->{status}, 200, 'first match (allow 127.0.0.1) wins');
my $r = get('/denyall/f.txt');
is($r->{status}, 403, 'deny all: 403');
like($r->{body}, qr/403 Forbidden/, '403 page');
is(get('/auth/pub/f.txt')->{status}, 200,
   'server level "allow all" inherited by a location without rules');

is(get('/inner/f.txt', port => $t->port(2))->{status}, 200,
   'location rules replace the main "deny all"');
is(get('/other/f.txt', port => $t->port(2))->{status}, 403,
   'server without rules inherits the main "deny all"');

SKIP: {
    skip 'no IPv6 loopback', 6 unless $v6;
    is(get('/v6only/f.txt', v6 => 1)->{status}, 200, '::1 allowed by ::1/128');
    is(get('/v4only/f.txt', v6 => 1)->{status}, 403, '::1 not in 127/8: 403');
    is(get('/first/f.txt', v6 => 1)->{status}, 403, '::1: deny all');
    is(get('/any/f.txt', v6 => 1)->{status}, 401,
       'satisfy any, ::1 denied, no credentials: 401');
    is(get('/any/f.txt', v6 => 1, auth => [creds('alice', 'secret1')])
       ->{status}, 200, 'satisfy any, ::1 denied, good credentials: 200');
    is(get('/all/f.txt', v6 => 1, auth => [creds('alice', 'secret1')])
       ->{status}, 403, 'satisfy all, ::1 denied, good credentials: 403');
}

# ---- basic authentication -------------------------------------------------

$r = get('/auth/f.txt');
is($r->{status}, 401, 'no credentials: 401');
is($r->{headers}{'www-authenticate'},
   'Basic realm="Private Area", charset="UTF-8"', 'the challenge');
like($r->{body}, qr/401 Unauthorized/, '401 page');

for my $u (sort keys %pw) {
    $r = get('/auth/f.txt', auth => [creds($u, $pw{$u}[0])]);
    my ($type) = $pw{$u}[1] =~ /^(\$\w+\$)/;
    is($r->{status}, 200, "$u ($type): 200");
    is($r->{body}, "auth\n", "$u: the file");
    ok(!exists $r->{headers}{'www-authenticate'}, "$u: no challenge");
}

is(get('/auth/f.txt', auth => [creds('alice', 'secret2')])->{status}, 401,
   'wrong password: 401');
is(get('/auth/f.txt', auth => [creds('alice', 'secret1x')])->{status}, 401,
   'longer password: 401');
is(get('/auth/f.txt', auth => [creds('carol', 'secret1')])->{status}, 401,
   "another user's password: 401");
is(get('/auth/f.txt', auth => [creds('mallory', 'secret1')])->{status}, 401,
   'unknown user: 401');
$r = get('/auth/f.txt', auth => ['Basic %%%notbase64']);
is($r->{status}, 401, 'malformed credentials: 401');
ok(defined $r->{headers}{'www-authenticate'}, 'malformed: challenge');
is(get('/auth/f.txt', auth => ['Basic ' . encode_base64('alice', '')])
   ->{status}, 401, 'no colon: 401');
is(get('/auth/f.txt', auth => ['Bearer abc'])->{status}, 401,
   'another scheme: 401');
is(get('/auth/f.txt', auth => ['basic ' . encode_base64('erin:secret5', '')])
   ->{status}, 200, 'scheme is case-insensitive');

$r = get('/quote/f.txt');
is($r->{headers}{'www-authenticate'},
   'Basic realm="say \"hi\"", charset="UTF-8"', 'realm quoted');
is(get('/quote/f.txt', auth => [creds('dan', 'secret4')])->{status}, 200,
   'absolute user file');

# keep-alive: the second check comes from the child's cache
my $auth = 'Authorization: ' . creds('alice', 'secret1');
my @k = $t->http_keepalive([map { $t->request('/auth/f.txt', keepalive => 1,
                                             headers => [$auth]) } 1 .. 3]);
is(join(',', map { $_->{status} // $_->{error} } @k), '200,200,200',
   'keep-alive with credentials');

# satisfy any / all from 127.0.0.1 (allowed)
is(get('/any/f.txt')->{status}, 200, 'satisfy any: allowed address, no '
   . 'credentials: 200');
is(get('/all/f.txt')->{status}, 401, 'satisfy all: allowed address, no '
   . 'credentials: 401');
is(get('/all/f.txt', auth => [creds('bob', 'secret7')])->{status}, 200,
   'satisfy all: allowed address and credentials: 200');

SKIP: {
    skip 'mod_example not built', 3 unless $mod;
    $r = get('/example/');
    is($r->{status}, 401, 'module handler: 401 without credentials');
    unlike($r->{body}, qr/mod_example/, 'module did not run');
    $r = get('/example/', auth => [creds('alice', 'secret1')]);
    is($r->{status}, 200, 'module handler: 200 with credentials');
}

like($t->error_log, qr/\[info\].*user "mallory" was not found in ".*htpasswd"/,
     'unknown user logged');
like($t->error_log, qr/\[info\].*user "alice": password mismatch/,
     'mismatch logged');
like($t->error_log, qr/\[info\].*access forbidden by rule/, '403 logged');

# ---- reload rereads the htpasswd file -------------------------------------

$t->write_file('conf/htpasswd', $htpasswd . "zed:$pw{erin}[1]\n");
my $from = length $t->error_log;
$t->signal('HUP');
ok($t->wait_log(qr/reload complete/, 10, undef, $from), 'reloaded');
my $ok = 0;
for (1 .. 50) {
    $ok = get('/auth/f.txt', auth => [creds('zed', 'secret5')])->{status}
          == 200 and last;
    select(undef, undef, undef, 0.1);
}
ok($ok, 'a user added to the file works after the reload');

# ---- configuration errors -------------------------------------------------

sub configtest
{
    my ($name, $text) = @_;
    my $path = $t->testdir . "/$name";

    $t->write_file($name, $t->expand($text));
    my ($rc, $out, $err) = $t->gannet('-t', '-p', $t->testdir . '/',
                                      '-c', $path);
    return ($rc, $err, $path);
}

my ($rc, $err, $path) = configtest('bad-cidr.conf', <<'EOF');
server {
    listen 127.0.0.1:%%PORT_3%%;
    location / {
        allow 10.0.0.0/33;
    }
}
EOF
isnt($rc, 0, 'bad CIDR: -t fails');
like($err, qr/\Q"allow" directive: invalid prefix length in "10.0.0.0\/33" (0 to 32) in $path:4\E/,
     'bad CIDR: message with file:line');

($rc, $err, $path) = configtest('bad-addr.conf', <<'EOF');
deny 300.1.1.1;
server { listen 127.0.0.1:%%PORT_3%%; }
EOF
like($err, qr/\Q"deny" directive: invalid address "300.1.1.1"\E.* in \Q$path\E:1/,
     'bad address: message with file:line');

$t->write_file('conf/htpasswd.bad', "# ok\nalice:$pw{alice}[1]\n"
                                    . "eve:plaintext\n");
($rc, $err, $path) = configtest('bad-htpasswd.conf', <<'EOF');
server {
    listen 127.0.0.1:%%PORT_3%%;
    auth_basic "x";
    auth_basic_user_file conf/htpasswd.bad;
}
EOF
isnt($rc, 0, 'plain-text entry: -t fails');
like($err, qr{\Q$t->{dir}\E/conf/htpasswd\.bad:3: user "eve": plain-text passwords are refused.* in \Q$path\E:4},
     'plain-text entry: htpasswd file:line, user, and conf file:line');

$t->write_file('conf/htpasswd.des', "dave:.04DPBvN6.Q3o\n");
($rc, $err, $path) = configtest('des-htpasswd.conf', <<'EOF');
server {
    listen 127.0.0.1:%%PORT_3%%;
    auth_basic_user_file conf/htpasswd.des;
}
EOF
like($err, qr{htpasswd\.des:1: user "dave": DES crypt\(\) hashes are refused},
     'DES entry refused');

($rc, $err, $path) = configtest('no-file.conf', <<'EOF');
server {
    listen 127.0.0.1:%%PORT_3%%;
    location / {
        auth_basic "x";
    }
}
EOF
isnt($rc, 0, 'auth_basic without a user file: -t fails');
like($err, qr/\Q"auth_basic" has no "auth_basic_user_file"\E.* in \Q$path\E:4/,
     'auth_basic without a user file: file:line');

($rc, $err, $path) = configtest('missing-file.conf', <<'EOF');
server {
    listen 127.0.0.1:%%PORT_3%%;
    auth_basic_user_file conf/nonexistent;
}
EOF
like($err, qr/open\(\) ".*conf\/nonexistent" failed .* in \Q$path\E:3/,
     'missing user file');

($rc, $err, $path) = configtest('good.conf', <<'EOF');
satisfy any;
allow 10.0.0.0/8;
allow 2001:db8::/32;
deny all;
auth_basic "main";
auth_basic_user_file conf/htpasswd;
server { listen 127.0.0.1:%%PORT_3%%; location / { auth_basic off; } }
EOF
is($rc, 0, 'all directives at the main level: -t ok') or diag($err);

$t->done;
