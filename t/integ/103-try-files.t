#!/usr/bin/perl

# try_files, named locations, internal and alias (issue 23, item 1), with
# nginx's corner cases: a directory with "$uri/" then its index, the
# query of the fallback URI, falling through to a named location (which
# runs its own rules, not the server's), =CODE, a fallback that loops,
# `internal` refused from outside and reached by try_files, alias in
# prefix locations (with and without the slash: no climbing out on
# "/img../"), in an exact location naming a file, in a regex location
# with captures, with try_files, and $document_root / $request_filename
# under alias. Over HTTP/1.1 and over HTTP/2 (curl --http2-prior-knowledge).

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;
my $dir = $t->testdir;

$t->write_conf(<<"EOF_CONF");
children 2;
user %%USER%%;
error_log logs/error.log info;
log_format files '\$uri|\$args|\$document_root|\$request_filename|\$status';

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    access_log logs/files.log files;
    types { text/html html; text/plain txt; image/png png; }

    rewrite ^/old/(.*)\$ /app/\$1 last;

    location / {
        try_files \$uri \$uri/ /front.html?from=\$uri;
    }
    location /app/ {
        try_files \$uri \@backend;
    }
    location \@backend {
        rewrite ^ /named-rewritten;
        return 200 "backend \$uri \$args\\n";
    }
    location /code/ {
        try_files \$uri \$uri.txt =410;
    }
    location /loop/ {
        try_files /none /loop/again;
    }
    location /secret/ {
        internal;
    }
    # a FILE from the client's query: never a ".." out of root
    location /q/ {
        try_files /\$args =404;
        symlinks_outside_root on;
    }
    location /via/ {
        try_files /none /secret/s.txt;
    }
    location /img/ {
        alias $dir/data/images/;
    }
    # the path, not RESOLVE_BENEATH, keeps "/noslash../" inside
    location /noslash {
        alias $dir/data/images;
        symlinks_outside_root on;
    }
    location /slash2 {
        alias $dir/data/images/;
        symlinks_outside_root on;
    }
    location = /favicon.ico {
        alias $dir/data/icons/fav.ico;
    }
    location ~ ^/users/([a-z]+)/(.+\\.txt)\$ {
        alias $dir/data/users/\$1/\$2;
    }
    location /tf/ {
        alias $dir/data/images/;
        try_files \$uri \$uri/ =404;
    }
}
EOF_CONF

$t->write_file('html/index.html', "root index\n");
$t->write_file('html/front.html', "front\n");
$t->write_file('html/a.txt', "a\n");
$t->write_file('html/dir/index.html', "dir index\n");
$t->write_file('html/app/real.txt', "app file\n");
$t->write_file('html/code/x.txt', "x.txt\n");
$t->write_file('html/secret/s.txt', "internal only\n");
$t->write_file('data/images/p.png', "png\n");
$t->write_file('data/images/sub/index.html', "sub index\n");
$t->write_file('data/icons/fav.ico', "icon\n");
$t->write_file('data/users/ann/notes.txt', "ann's notes\n");
$t->write_file('data/secret.txt', "outside\n");
$t->write_file('data/imagesx.txt', "glued\n");
$t->run;

sub get
{
    my ($path) = @_;
    my $r = $t->http_get($path);
    return ($r->{status} // 0, $r->{body} // '', $r);
}

my @cases = (
    # [ path, status, body (regex), what ]
    [ '/a.txt', 200, qr/^a\n\z/, 'try_files: $uri, a file' ],
    [ '/', 200, qr/^root index\n\z/, 'try_files: "/" is "$uri/", its index' ],
    [ '/dir', 200, qr/^dir index\n\z/,
      'try_files: a directory by "$uri/", then its index file' ],
    [ '/nothing?x=1', 200, qr/^front\n\z/, 'try_files: the fallback URI' ],
    [ '/app/real.txt', 200, qr/^app file\n\z/, 'try_files: a file before @name' ],
    [ '/app/none?q=1', 200, qr{^backend /named-rewritten q=1\n\z},
      'try_files: @name runs the named location\'s own rules' ],
    [ '/old/gone', 200, qr{^backend /named-rewritten \n\z},
      'a server rewrite, then try_files to @name' ],
    [ '/code/x', 200, qr/^x\.txt\n\z/, 'try_files: $uri.txt' ],
    [ '/code/y', 410, qr/410 Gone/, 'try_files: =410' ],
    [ '/loop/z', 500, qr/500/, 'try_files: a fallback that loops is a 500' ],
    [ '/q/?a.txt', 200, qr/^a\n\z/, 'try_files: a FILE from $args' ],
    [ '/q/?../data/secret.txt', 404, qr/404/,
      'try_files: a FILE with a ".." segment is skipped' ],
    [ '/secret/s.txt', 404, qr/404/, 'internal: 404 from outside' ],
    [ '/via/q', 200, qr/^internal only\n\z/, 'internal: reached by try_files' ],
    [ '/img/p.png', 200, qr/^png\n\z/, 'alias: a prefix location' ],
    [ '/img/sub/', 200, qr/^sub index\n\z/, 'alias: an index file under it' ],
    [ '/noslash/p.png', 200, qr/^png\n\z/, 'alias without the slash' ],
    [ '/noslash../secret.txt', 404, qr/404/,
      'alias without the slash: "/noslash../" does not climb out' ],
    [ '/noslashx.txt', 200, qr/^glued\n\z/,
      'alias without the slash: glued to the name, as nginx' ],
    [ '/slash2/p.png', 200, qr/^png\n\z/,
      'a prefix without its slash, an alias with one' ],
    [ '/slash2../secret.txt', 404, qr/404/,
      '... "/slash2../" does not climb out either' ],
    [ '/favicon.ico', 200, qr/^icon\n\z/, 'alias: an exact location, a file' ],
    [ '/users/ann/notes.txt', 200, qr/^ann's notes\n\z/,
      'alias: a regex location with captures' ],
    [ '/users/bob/notes.txt', 404, qr/404/,
      'alias: captures naming no file: 404' ],
    [ '/tf/p.png', 200, qr/^png\n\z/, 'alias with try_files: a file' ],
    [ '/tf/sub', 200, qr/^sub index\n\z/,
      'alias with try_files: a directory, then its index' ],
    [ '/tf/none', 404, qr/404/, 'alias with try_files: =404' ],
);

for my $c (@cases) {
    my ($st, $body) = get($c->[0]);
    is($st, $c->[1], "$c->[3]: status");
    like($body, $c->[2], "$c->[3]: body");
}

# the same over HTTP/2, prior knowledge on PORT_1
SKIP: {
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 2 * 6 unless $out =~ /\bHTTP2\b/;
    for my $c (@cases[0, 2, 3, 5, 13, 22]) {
        my ($rc2, $o) = $t->curl('--http2-prior-knowledge', '-w',
                                 '\n%{http_version} %{http_code}',
                                 'http://127.0.0.1:' . $t->port(1) . $c->[0]);
        my ($body, $ver, $st) = $o =~ /\A(.*)\n(\S+) (\d+)\z/s;
        is("$ver $st", "2 $c->[1]", "h2: $c->[3]: status");
        like($body // '', $c->[2], "h2: $c->[3]: body");
    }
}

# what the log says of them
ok($t->wait_log(qr{^/users/ann/notes\.txt\|}m, 5, 'logs/files.log'),
   'the access log has the lines');
my $log = $t->read_file('logs/files.log') // '';
like($log, qr{^/front\.html\|from=/nothing&x=1\|\Q$dir\E/html\|\Q$dir\E/html/front\.html\|200$}m,
     'the fallback: $uri, $args (its query first), $request_filename');
like($log, qr{^/img/p\.png\|-\|\Q$dir\E/data/images\|\Q$dir\E/data/images/p\.png\|200$}m,
     'alias: $document_root and $request_filename are the alias\'s');
like($log, qr{^/users/ann/notes\.txt\|-\|\Q$dir\E/data/users\|\Q$dir\E/data/users/ann/notes\.txt\|200$}m,
     'alias with captures: $request_filename');

like($t->error_log, qr/rewrite or internal redirection cycle while processing "\/loop\/again"/,
     'the loop is logged');

$t->done;
