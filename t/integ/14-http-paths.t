#!/usr/bin/perl

# Request paths (issue 3): escapes from the root in every encoding never
# serve a file outside it, percent-encoded names are served, symlinks
# inside the root are followed, symlinks leading outside are 404 unless
# symlinks_outside_root is on.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new(timeout => 90);

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
shutdown_timeout 5s;

types {
    text/plain  txt;
}

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
}

server {
    listen 127.0.0.1:%%PORT_1%%;
    root html;
    symlinks_outside_root on;
}
EOF_CONF

my $dir = $t->testdir;
my $secret = "TOPSECRET outside the root\n";

$t->write_file('secret.txt', $secret);
$t->write_file('outside/o.txt', "TOPSECRET in outside dir\n");
$t->write_file('html/real.txt', "real file\n");
$t->write_file('html/sub/s.txt', "sub file\n");
$t->write_file('html/sub/deeper/d.txt', "deeper file\n");
$t->write_file('html/a b.txt', "name with a space\n");
$t->write_file("html/caf\xc3\xa9.txt", "utf-8 name\n");
$t->write_file('html/100%.txt', "percent name\n");
$t->write_file('html/plus+sign.txt', "plus name\n");
$t->write_file('html/q?.txt', "question mark name\n");
$t->write_file('html/%2e%2e/x.txt', "literal dir named %2e%2e\n");
$t->write_file('html/d i r/index.html', "dir with spaces\n");

symlink('real.txt', "$dir/html/link-in.txt") or die "symlink: $!";
symlink("$dir/html/real.txt", "$dir/html/link-in-abs.txt") or die;
symlink('sub', "$dir/html/linkdir-in") or die;
symlink('../secret.txt', "$dir/html/link-out.txt") or die;
symlink("$dir/secret.txt", "$dir/html/link-out-abs.txt") or die;
symlink('link-out.txt', "$dir/html/link-chain.txt") or die;
symlink('../outside', "$dir/html/linkdir-out") or die;
symlink('../../outside', "$dir/html/sub/linkdir-out2") or die;
symlink('../real.txt', "$dir/html/sub/link-up.txt") or die;
symlink('../../html/real.txt', "$dir/html/sub/link-via-parent.txt") or die;
symlink('/', "$dir/html/rootlink") or die;

$t->run;

my $r;

# ---- escapes ----------------------------------------------------------------

my @escapes = (
    '/../secret.txt',
    '/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/%2E%2E/secret.txt',
    '/%2E%2E%2Fsecret.txt',
    '/..%2fsecret.txt',
    '/..%2Fsecret.txt',
    '/%2e./secret.txt',
    '/.%2e/secret.txt',
    '//../secret.txt',
    '/./../secret.txt',
    '/sub/../../secret.txt',
    '/sub/%2e%2e/%2e%2e/secret.txt',
    '/sub%2f..%2f..%2fsecret.txt',
    '/sub/deeper/../../../secret.txt',
    '/sub/./../../secret.txt',
    '/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/..%5csecret.txt',
    '/..\\secret.txt',
    '/sub\\..\\..\\secret.txt',
    '/%5c..%5csecret.txt',
    '/%00/../secret.txt',
    '/real.txt%00/../../secret.txt',
    '/..%00/secret.txt',
    '/%252e%252e/secret.txt',
    '/%c0%ae%c0%ae/secret.txt',
    '/..;/secret.txt',
    '/../outside/o.txt',
    '/%2e%2e/outside/o.txt',
    '/.../secret.txt',
    '/sub/..././../secret.txt',
);

sub no_escape
{
    my ($port, $p, $label) = @_;
    my $r = $t->http_get($p, port => $port, timeout => 5);

    ok(defined $r->{status} && $r->{status} =~ /^(400|404)$/,
       "$label $p: 400 or 404")
        or diag('got ' . ($r->{status} // $r->{error}));
    unlike($r->{body}, qr/TOPSECRET/, "$label $p: nothing from outside");
}

for my $p (@escapes) {
    no_escape($t->port(0), $p, 'escape');
}

# symlinks_outside_root on allows symlinks, never ".." above the root
for my $p (@escapes[0 .. 15]) {
    no_escape($t->port(1), $p, 'escape (symlinks_outside_root on)');
}

# absolute-form targets carry the same path rules
for my $target ('http://localhost/../secret.txt',
                'http://localhost/%2e%2e/secret.txt')
{
    my ($raw) = $t->http_raw("GET $target HTTP/1.1\r\nHost: localhost\r\n"
                             . "Connection: close\r\n\r\n", timeout => 5);
    like($raw, qr{^HTTP/1\.1 (400|404) }, "absolute-form $target: 400 or 404");
    unlike($raw, qr/TOPSECRET/, "absolute-form $target: nothing from outside");
}

# the spec's explicit 400s
for my $p ('/real.txt%00', '/%00', '/a%zz.txt', '/a%2', '/a%', '/a%g1.txt',
           '/%01real.txt', '/real%7f.txt', '/../secret.txt')
{
    $r = $t->http_get($p, timeout => 5);
    is($r->{status}, 400, "$p: 400");
}

# dot segments that stay inside the root resolve normally
for my $p ('/sub/../real.txt', '/sub/%2e%2e/real.txt', '/./real.txt',
           '//real.txt', '/sub//s.txt', '/sub/deeper/%2E%2E/s.txt')
{
    $r = $t->http_get($p, timeout => 5);
    ok(($r->{status} // 0) == 200 && $r->{body} =~ /^(real|sub) file/,
       "$p: resolves inside the root") or diag('got ' . ($r->{status} // ''));
}

# %2f decodes to a separator inside the root (or is refused): never a
# different file
$r = $t->http_get('/sub%2fs.txt', timeout => 5);
ok(($r->{status} // 0) == 200 && $r->{body} eq "sub file\n"
   || ($r->{status} // 0) =~ /^(400|404)$/, '/sub%2fs.txt: sub/s.txt or 4xx');

# ---- percent-encoded names ------------------------------------------------

$r = $t->http_get('/a%20b.txt');
is($r->{status}, 200, '/a%20b.txt: 200');
is($r->{body}, "name with a space\n", '/a%20b.txt: "a b.txt"');
$r = $t->http_get('/caf%C3%A9.txt');
is($r->{body}, "utf-8 name\n", '/caf%C3%A9.txt: UTF-8 name');
$r = $t->http_get('/caf%c3%a9.txt');
is($r->{body}, "utf-8 name\n", 'lowercase hex escapes');
$r = $t->http_get('/100%25.txt');
is($r->{body}, "percent name\n", '/100%25.txt: "100%.txt"');
$r = $t->http_get('/plus+sign.txt');
is($r->{body}, "plus name\n", '"+" is not a space in paths');
$r = $t->http_get('/q%3F.txt');
is($r->{body}, "question mark name\n", '/q%3F.txt: "q?.txt"');
$r = $t->http_get('/q?.txt');
is($r->{status}, 404, '/q?.txt: "?" starts the query: /q is 404');
$r = $t->http_get('/%72eal.txt');
is($r->{body}, "real file\n", '/%72eal.txt: unreserved byte escaped');
$r = $t->http_get('/real.txt?a=../../secret.txt');
is($r->{body}, "real file\n", 'query with ".." does not touch the path');
$r = $t->http_get('/%252e%252e/x.txt');
is($r->{body}, "literal dir named %2e%2e\n",
   'double encoding decodes once: literal "%2e%2e" directory');

$r = $t->http_get('/d%20i%20r');
is($r->{status}, 301, 'directory with spaces, no slash: 301');
like($r->{headers}{location} // '', qr{/d%20i%20r/$},
     'directory redirect: Location is percent-encoded');
$r = $t->http_get('/d%20i%20r/');
is($r->{body}, "dir with spaces\n", 'directory with spaces: index');

# ---- symlinks ---------------------------------------------------------------

$r = $t->http_get('/link-in.txt');
is($r->{status}, 200, 'symlink inside the root (relative): 200');
is($r->{body}, "real file\n", 'symlink inside the root: target body');
$r = $t->http_get('/link-in-abs.txt');
is($r->{status}, 200, 'symlink inside the root (absolute path): 200');
$r = $t->http_get('/linkdir-in/s.txt');
is($r->{body}, "sub file\n", 'symlinked directory inside the root: 200');
$r = $t->http_get('/sub/link-up.txt');
is($r->{body}, "real file\n", 'symlink to ../real.txt inside the root: 200');
$r = $t->http_get('/sub/link-via-parent.txt');
is($r->{body}, "real file\n",
   'symlink via ../../html/ resolving inside the root: 200');

for my $p ('/link-out.txt', '/link-out-abs.txt', '/link-chain.txt',
           '/linkdir-out/o.txt', '/sub/linkdir-out2/o.txt',
           '/rootlink' . "$dir/secret.txt")
{
    $r = $t->http_get($p);
    is($r->{status}, 404, "symlink outside the root $p: 404");
    unlike($r->{body}, qr/TOPSECRET/, "symlink outside the root $p: no data");
}

# a directory symlink leading outside: no redirect to it either
$r = $t->http_get('/linkdir-out');
ok(($r->{status} // 0) == 404, 'symlinked directory outside, no slash: 404')
    or diag('got ' . ($r->{status} // ''));

$r = $t->http_get('/link-out.txt', port => $t->port(1));
is($r->{status}, 200, 'symlinks_outside_root on: symlink outside: 200');
is($r->{body}, $secret, 'symlinks_outside_root on: target body');
$r = $t->http_get('/linkdir-out/o.txt', port => $t->port(1));
is($r->{status}, 200,
   'symlinks_outside_root on: symlinked directory outside: 200');
$r = $t->http_get('/link-chain.txt', port => $t->port(1));
is($r->{status}, 200, 'symlinks_outside_root on: symlink chain: 200');
$r = $t->http_get('/link-in.txt', port => $t->port(1));
is($r->{body}, "real file\n", 'symlinks_outside_root on: inside still fine');

# a symlink changed to point outside is refused (no stale decision)
unlink("$dir/html/link-in.txt");
symlink('../secret.txt', "$dir/html/link-in.txt") or die;
my $end = time() + GnTest::slow(5);
while (1) {
    $r = $t->http_get('/link-in.txt');
    last if ($r->{status} // 0) != 200 || $r->{body} =~ /TOPSECRET/;
    last if time() > $end;
    select(undef, undef, undef, 0.2);
}
is($r->{status}, 404, 'symlink retargeted outside the root: 404');
unlike($r->{body}, qr/TOPSECRET/, 'symlink retargeted outside: no data');

$t->done;
