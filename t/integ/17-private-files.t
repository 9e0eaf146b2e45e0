#!/usr/bin/perl

# private_files (default off): a static file that is not world-readable,
# or that belongs to someone other than root, the server's user or the
# owner of the root directory, is refused with 403 and an [error] line;
# `private_files on` serves it. The file cache re-checks after a chmod.
# The ownership cases need root (chown) and are skipped otherwise.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;
my $dir = $t->testdir;
my $root = $> == 0;

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
file_cache_valid 1s;

server {
    listen 127.0.0.1:%%PORT_0%%;
    types { text/html html; text/plain txt; }
    location /pub/ {
        private_files on;
    }
    location /own/ {
        root %%TESTDIR%%/ownroot;
    }
}
EOF_CONF

# one regex from pieces (long messages, short lines)
sub re { my $s = join('', @_); return qr/$s/; }

sub put {
    my ($rel, $mode, $uid) = @_;
    my $p = $t->write_file($rel, "$rel\n");
    chmod $mode, $p;
    chown $uid, -1, $p if defined $uid;
}

put('html/open.txt', 0644);
put('html/group.txt', 0640);
put('html/none.txt', 0600);
put('html/later.txt', 0644);
put('html/dir/index.html', 0640);
put('html/pub/group.txt', 0640);
if ($root) {
    mkdir "$dir/ownroot";
    put('html/stranger.txt', 0644, 4242);
    put('html/pub/stranger.txt', 0644, 4242);
    put('ownroot/own/mine.txt', 0644, 4343);
    put('ownroot/own/stranger.txt', 0644, 4242);
    chown 4343, -1, "$dir/ownroot";
}

$t->run;

my $r = $t->http_get('/open.txt');
is($r->{status}, 200, 'world-readable file: 200');
$r = $t->http_get('/group.txt');
is($r->{status}, 403, 'mode 0640: 403');
like($t->error_log, re(qr{\[error\].*"\Q$dir\E/html/group\.txt" is not },
                       qr{world-readable \(mode 0640\), refused}), '... logged');
is($t->http_get('/none.txt')->{status}, 403, 'mode 0600: 403');
is($t->http_get('/dir/')->{status}, 403, 'an index file of mode 0640: 403');
like($t->error_log, qr{"\Q$dir\E/html/dir/index\.html" is not world-readable},
     '... logged with the index file');
$r = $t->http_get('/pub/group.txt');
is($r->{status}, 200, 'private_files on: mode 0640 served');
is($r->{body}, "html/pub/group.txt\n", '... the file');

# the file cache sees the chmod (ctime) once file_cache_valid has passed
is($t->http_get('/later.txt')->{status}, 200, 'cached while world-readable');
chmod 0640, "$dir/html/later.txt";
select(undef, undef, undef, 1.3);
is($t->http_get('/later.txt')->{status}, 403,
   'the file cache does not keep serving it after chmod 0640');
chmod 0644, "$dir/html/later.txt";
select(undef, undef, undef, 1.3);
is($t->http_get('/later.txt')->{status}, 200, 'and serves it again after 0644');

SKIP: {
    skip 'ownership cases need root', 6 unless $root;

    $r = $t->http_get('/stranger.txt');
    is($r->{status}, 403, 'owned by another user: 403');
    like($t->error_log, re(qr{"\Q$dir\E/html/stranger\.txt" is owned by },
                           qr{uid 4242, not by root}), '... logged');
    is($t->http_get('/pub/stranger.txt')->{status}, 200,
       'private_files on: served');
    is($t->http_get('/own/mine.txt')->{status}, 200,
       'owned by the owner of the root directory: 200');
    is($t->http_get('/own/stranger.txt')->{status}, 403,
       'under that root, owned by someone else: 403');

    # one [error] line per refused request
    my $n = () = $t->error_log =~ /html\/stranger\.txt" is owned/g;
    is($n, 1, 'logged once per request');
}

$t->done;
