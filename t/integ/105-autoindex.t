#!/usr/bin/perl

# autoindex (issue 23, item 3), as nginx's: off keeps the 403 of a
# directory without an index file; on lists it (directories first, dot
# files hidden), with exact or rounded sizes, GMT or local dates, sorted
# by Apache's ?C=N|M|S&O=A|D with headers that toggle the order; names
# with markup, quotes, spaces, '%', '?', '#', a newline, a byte that is
# not UTF-8 escaped in the text and percent-encoded in the hrefs, which
# lead back to the files; the JSON format parsed; HEAD; an alias
# location; symlinks that lead out of the root neither listed nor
# followed with symlinks_outside_root off. Over HTTP/1.1 and HTTP/2.

use strict;
use warnings;

use Test::More;
use JSON::PP;
use Time::Local qw(timegm);
use GnTest;

my $t = GnTest->new;
my $dir = $t->testdir;

# autoindex_localtime: a zone of its own, half an hour off, that needs no
# zoneinfo file (POSIX TZ: "XYZ-05:30" is UTC+5:30)
$ENV{TZ} = 'XYZ-05:30';

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
error_log logs/error.log info;
autoindex_format html;

server {
    listen 127.0.0.1:%%PORT_0%%;
    listen 127.0.0.1:%%PORT_1%% http2;
    root html;
    types { text/html html; text/plain txt; }
    autoindex on;

    location /off/ {
        autoindex off;
    }
    location /human/ {
        autoindex_exact_size off;
    }
    location /local/ {
        autoindex_localtime on;
    }
    location /json/ {
        alias $dir/html/names/;
        autoindex_format json;
    }
    location /sortjson/ {
        alias $dir/html/list/;
        autoindex_format json;
    }
    location /pub/ {
        alias $dir/data/pub/;
    }
    location /follow/ {
        alias $dir/html/links/;
        symlinks_outside_root on;
    }
}

server {
    listen 127.0.0.1:%%PORT_2%%;
    root html;
}
EOF_CONF

# 2026-01-01 00:00:00 GMT, and days around it
my $T = timegm(0, 0, 0, 1, 0, 2026);
my $day = 86400;

sub file
{
    my ($rel, $content, $mtime) = @_;
    my $p = $t->write_file($rel, $content);
    utime($mtime, $mtime, $p) if defined $mtime;
    return $p;
}

sub mkdir_at
{
    my ($rel, $mtime) = @_;
    my $p = "$dir/$rel";
    mkdir $p or die "mkdir $p: $!" unless -d $p;
    utime($mtime, $mtime, $p) if defined $mtime;
}

# /list/: two directories, three files, dot files
file('html/list/a.txt', 'a' x 300, $T + $day);
file('html/list/b.txt', 'b' x 100, $T + 3 * $day);
file('html/list/c.txt', 'c' x 200, $T);
file('html/list/.hidden', "hidden\n");
file('html/list/.hdir/x', "x\n");
file('html/list/adir/x', "x\n");
file('html/list/zdir/x', "x\n");
mkdir_at('html/list/adir', $T + 2 * $day);
mkdir_at('html/list/zdir', $T);

file('html/off/x.txt', "x\n");
file('html/indexed/index.html', "the index\n");
file('html/indexed/other.txt', "other\n");

# /human/: nginx's rounding
file('html/human/small.txt', 'x' x 5000, $T);
file('html/human/k.txt', 'x' x 12000, $T);
file('html/human/m.bin', 'x' x (3 * 1048576), $T);
file('html/human/half.bin', 'x' x 1572864, $T);
my $sparse = 0;
if (open(my $fh, '>', "$dir/html/human/big.iso")) {
    $sparse = truncate($fh, 2684354560);      # 2.5 GiB, sparse
    close $fh;
    unlink "$dir/html/human/big.iso" unless $sparse;
}
mkdir_at('html/human/sub', $T);

file('html/local/a.txt', "a\n", $T);

# /names/: every kind of byte a name may hold
my %names = (
    'a<b>&c.txt'    => [ 'a%3Cb%3E%26c.txt', 'a&lt;b&gt;&amp;c.txt' ],
    'q"uote.txt'    => [ 'q%22uote.txt', 'q&quot;uote.txt' ],
    "it's.txt"      => [ 'it%27s.txt', 'it&#39;s.txt' ],
    'sp ace.txt'    => [ 'sp%20ace.txt', 'sp ace.txt' ],
    '100%.txt'      => [ '100%25.txt', '100%.txt' ],
    'what?.txt'     => [ 'what%3F.txt', 'what?.txt' ],
    'hash#.txt'     => [ 'hash%23.txt', 'hash#.txt' ],
    'colon:x.txt'   => [ 'colon%3Ax.txt', 'colon:x.txt' ],
    "new\nline.txt" => [ 'new%0Aline.txt', 'new&#xFFFD;line.txt' ],
    "bad\xff.txt"   => [ 'bad%FF.txt', 'bad&#xFFFD;.txt' ],
    "\xc3\xbc.txt"  => [ '%C3%BC.txt', "\xc3\xbc.txt" ],
    'plain-1_2~.txt' => [ 'plain-1_2~.txt', 'plain-1_2~.txt' ],
    ('l' x 60) . '.txt' => [ ('l' x 60) . '.txt', ('l' x 47) . '..&gt;' ],
);
file("html/names/$_", "body of $_") for keys %names;
file('html/names/d&r/x', "x\n");

# /pub/ under an alias
file('data/pub/readme.txt', "pub readme\n", $T);
file('data/pub/docs/x', "x\n");

# /links/: symlinks inside and outside the root, and one to nowhere
file('secret.txt', "outside the root\n");
file('secretdir/s.txt', "secret\n");
mkdir_at('html/links');
symlink('../list/a.txt', "$dir/html/links/inside.txt") or die $!;
symlink("$dir/secret.txt", "$dir/html/links/outside.txt") or die $!;
symlink("$dir/secretdir", "$dir/html/links/outdir") or die $!;
symlink('nowhere', "$dir/html/links/dangling") or die $!;
symlink("$dir/secretdir", "$dir/html/linkdir") or die $!;

$t->run;

# ---- helpers ---------------------------------------------------------------

# The rows of a listing's <pre>, but the headers and "../": each
# { href, text, date, size }, or { bad => line } for one that does not
# have nginx's shape.
sub rows
{
    my ($body) = @_;
    my ($pre) = ($body // '') =~ m{<pre>(.*)</pre>}s or return ();
    my @rows;

    for my $l (split /\r\n/, $pre) {
        next if $l =~ /^<a href="\?C=N/ || $l eq '<a href="../">../</a>';
        if ($l =~ m{^<a\ href="([^"<>&\s]*)">([^<>"]*)</a>(\ +)
                    (\d\d-\w{3}-\d{4}\ \d\d:\d\d)\ +(\S+)$}x)
        {
            push @rows, { href => $1, text => $2, pad => length $3,
                          date => $4, size => $5, line => $l };
        } else {
            push @rows, { bad => $l };
        }
    }
    return @rows;
}

sub names { return join(' ', map { $_->{href} // "BAD($_->{bad})" } @_); }

# The columns a row's text takes: a reference or a UTF-8 character is one.
sub width
{
    my ($s) = @_;
    $s =~ s/&(?:#x?[0-9a-fA-F]+|[a-z]+);/x/g;
    utf8::decode($s);
    return length $s;
}

sub get
{
    my ($path, %opt) = @_;
    return $t->http_get($path, %opt);
}

# ---- off, inheritance, index ----------------------------------------------

my $r = get('/off/');
is($r->{status}, 403, 'autoindex off: a directory without an index is 403');
like($t->error_log, qr/directory index of "\Q$dir\E\/html\/off\/" is forbidden/,
     '... logged as before');
$r = get('/list/', port => $t->port(2));
is($r->{status}, 403, 'autoindex is off by default');

$r = get('/indexed/');
is($r->{status}, 200, 'an index file is served before a listing');
is($r->{body}, "the index\n", '... the index file');

$r = get('/list');
is($r->{status}, 301, 'a directory without its slash is redirected');

# ---- a listing ----------------------------------------------------------------

$r = get('/list/');
is($r->{status}, 200, 'autoindex on: 200');
is($r->{headers}{'content-type'}, 'text/html; charset=utf-8',
   'Content-Type text/html; charset=utf-8');
is($r->{headers}{'content-length'}, length $r->{body},
   'Content-Length is the body\'s');
is($r->{headers}{'last-modified'}, undef, 'no Last-Modified');
is($r->{headers}{'etag'}, undef, 'no ETag');
is($r->{headers}{'accept-ranges'}, undef, 'no Accept-Ranges');
like($r->{body}, qr{<title>Index of /list/</title>}, 'the title');
like($r->{body}, qr{<h1>Index of /list/</h1>}, 'the heading');
like($r->{body}, qr{<pre><a href="\?C=N&amp;O=D">Name</a> +<a href="\?C=M&amp;O=A">Last modified</a> +<a href="\?C=S&amp;O=A">Size</a>\r\n<a href="\.\./">\.\./</a>\r\n},
     'the column headers (Name sorts descending next), then "../"');
my $list_body = $r->{body};

my @rows = rows($r->{body});
is(names(@rows), 'adir/ zdir/ a.txt b.txt c.txt',
   'directories first, then files, each by name; no dot files');
my %row = map { $_->{href} => $_ } @rows;
is($row{'adir/'}{text}, 'adir/', 'a directory\'s name ends in "/"');
is($row{'adir/'}{size}, '-', 'a directory\'s size is "-"');
is($row{'a.txt'}{size}, 300, 'a file\'s exact size');
is($row{'c.txt'}{date}, '01-Jan-2026 00:00', 'the date, in GMT');
is($row{'a.txt'}{date}, '02-Jan-2026 00:00', 'another date');
is($row{'adir/'}{date}, '03-Jan-2026 00:00', 'a directory\'s date');
ok(!grep({ width($_->{text}) + $_->{pad} != 51 } @rows),
   'the dates line up in one column (nginx\'s 50 + 1)');
like($row{'a.txt'}{line}, qr/ {16}300$/, 'sizes right-aligned in 19 columns');

# ---- sorting -----------------------------------------------------------------

my @sorts = (
    [ 'C=N&O=A', 'adir/ zdir/ a.txt b.txt c.txt', 'N', 'D' ],
    [ 'C=N&O=D', 'zdir/ adir/ c.txt b.txt a.txt', 'N', 'A' ],
    [ 'C=M&O=A', 'zdir/ adir/ c.txt a.txt b.txt', 'M', 'D' ],
    [ 'C=M&O=D', 'adir/ zdir/ b.txt a.txt c.txt', 'M', 'A' ],
    [ 'C=S&O=A', 'adir/ zdir/ b.txt c.txt a.txt', 'S', 'D' ],
    [ 'C=S&O=D', 'zdir/ adir/ a.txt c.txt b.txt', 'S', 'A' ],
    [ 'C=S;O=D', 'zdir/ adir/ a.txt c.txt b.txt', 'S', 'A' ],
    [ 'C=M', 'zdir/ adir/ c.txt a.txt b.txt', 'M', 'D' ],
    [ 'O=D', 'zdir/ adir/ c.txt b.txt a.txt', 'N', 'A' ],
    [ 'C=X&O=Z&foo=bar', 'adir/ zdir/ a.txt b.txt c.txt', 'N', 'D' ],
);

for my $s (@sorts) {
    my ($q, $want, $col, $next) = @$s;
    $r = get("/list/?$q");
    is(names(rows($r->{body})), $want, "?$q sorts");
    like($r->{body}, qr{<a href="\?C=$col&amp;O=$next">},
         "?$q: its column's header sorts O=$next next");
    for my $other (grep { $_ ne $col } qw(N M S)) {
        like($r->{body}, qr{<a href="\?C=$other&amp;O=A">},
             "?$q: column $other sorts ascending");
    }
}

# ---- exact_size off, localtime ------------------------------------------------

$r = get('/human/');
is($r->{status}, 200, 'autoindex_exact_size off: 200');
%row = map { $_->{href} => $_ } rows($r->{body});
is($row{'small.txt'}{size}, '5000', 'up to 9999 bytes as they are');
like($row{'small.txt'}{line}, qr/ {3}5000$/, '... in 7 columns');
is($row{'k.txt'}{size}, '12K', '12000 bytes: 12K');
is($row{'m.bin'}{size}, '3M', '3 MiB: 3M');
is($row{'half.bin'}{size}, '2M', '1.5 MiB rounds up: 2M');
is($row{'sub/'}{size}, '-', 'a directory: "-"');
like($row{'sub/'}{line}, qr/ {6}-$/, '... in 7 columns');
SKIP: {
    skip 'no sparse file', 1 unless $sparse;
    is($row{'big.iso'}{size}, '3G', '2.5 GiB rounds up: 3G');
}
like($r->{body}, qr{<a href="\?C=M&amp;O=A">Last modified</a> {5} {3}<a href="\?C=S&amp;O=A">Size</a>\r\n},
     'the Size header right-aligned over 7 columns');

$r = get('/local/');
%row = map { $_->{href} => $_ } rows($r->{body});
is($row{'a.txt'}{date}, '01-Jan-2026 05:30',
   'autoindex_localtime on: the date in local time (UTC+5:30 here)');

# ---- names ---------------------------------------------------------------------

$r = get('/names/');
is($r->{status}, 200, 'names: 200');
@rows = rows($r->{body});
my @bad = grep { $_->{bad} } @rows;
is(scalar @bad, 0, 'every row has nginx\'s shape: no name breaks the page')
    or diag(explain(\@bad));
my $copy = $r->{body};
ok(utf8::decode($copy), 'the page is valid UTF-8');
ok(!grep({ width($_->{text}) + $_->{pad} != 51 } @rows),
   'names: the dates still line up (characters, not bytes, counted)');
%row = map { $_->{href} => $_ } @rows;
is($row{'d%26r/'}{text}, 'd&amp;r/', 'a directory with "&" in its name');
is(scalar @rows, 1 + keys %names, 'every name listed');

for my $name (sort keys %names) {
    my ($href, $text) = @{$names{$name}};
    (my $show = $name) =~ s/([^\x20-\x7e])/sprintf('\\x%02x', ord $1)/ge;
    ok(exists $row{$href}, "\"$show\": the href is $href")
        or next;
    is($row{$href}{text}, $text, "\"$show\": the text");

    my $f = get("/names/$href");
    if ($name =~ /\n/) {
        # the request path parser refuses a decoded control character
        is($f->{status}, 400, "\"$show\": its href is refused (400), as "
           . "any path with a control character");
        next;
    }
    is($f->{status}, 200, "\"$show\": following the href: 200");
    is($f->{body}, "body of $name", "\"$show\": ... the file");
}

# ---- JSON ----------------------------------------------------------------------

$r = get('/json/');
is($r->{status}, 200, 'JSON: 200');
is($r->{headers}{'content-type'}, 'application/json',
   'JSON: Content-Type application/json');
my $json = eval { JSON::PP->new->utf8->decode($r->{body}) };
ok(ref $json eq 'ARRAY', 'JSON: the body parses to a list') or diag($@);
$json //= [];
is($json->[0]{name}, 'd&r', 'JSON: the directory first, without a slash');
is($json->[0]{type}, 'directory', 'JSON: type directory');
ok(!exists $json->[0]{size}, 'JSON: no size for a directory');
my %j = map { $_->{name} => $_ } @$json;
is(scalar keys %j, 1 + keys %names, 'JSON: every name');
for my $name (sort keys %names) {
    my $want = $name;
    $want =~ s/\xff/\x{fffd}/;                     # not UTF-8: U+FFFD
    utf8::decode($want) unless $want =~ /\x{fffd}/;
    (my $show = $name) =~ s/([^\x20-\x7e])/sprintf('\\x%02x', ord $1)/ge;
    ok(exists $j{$want}, "JSON: \"$show\" listed") or next;
    is($j{$want}{type}, 'file', "JSON: \"$show\" is a file");
    is($j{$want}{size}, length("body of $name"), "JSON: \"$show\": size");
}
like($json->[1]{mtime} // '', qr/^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/,
     'JSON: mtime as an IMF-fixdate');

$r = get('/sortjson/?C=S&O=D');
$json = eval { decode_json($r->{body}) } // [];
is(join(' ', map { "$_->{name}:" . ($_->{size} // '-') } @$json),
   'zdir:- adir:- a.txt:300 c.txt:200 b.txt:100',
   'JSON: sorted by the query too, sizes');
is((grep { $_->{name} eq 'c.txt' } @$json)[0]{mtime},
   'Thu, 01 Jan 2026 00:00:00 GMT', 'JSON: mtime in GMT');

# ---- HEAD ----------------------------------------------------------------------

$r = $t->http_head('/list/');
is($r->{status}, 200, 'HEAD: 200');
is($r->{headers}{'content-length'}, length $list_body,
   'HEAD: the Content-Length of the GET');
my $raw = $t->http_raw("HEAD /list/ HTTP/1.1\r\nHost: localhost\r\n"
                       . "Connection: close\r\n\r\n");
like($raw, qr/\r\n\r\n\z/, 'HEAD: no body');

# ---- alias ---------------------------------------------------------------------

$r = get('/pub/');
is($r->{status}, 200, 'alias: 200');
like($r->{body}, qr{<title>Index of /pub/</title>}, 'alias: the URI\'s title');
is(names(rows($r->{body})), 'docs/ readme.txt', 'alias: the alias\'s entries');
$r = get('/pub/readme.txt');
is($r->{body}, "pub readme\n", 'alias: the href leads to the file');

# ---- symlinks ------------------------------------------------------------------

$r = get('/links/');
is($r->{status}, 200, 'symlinks: 200');
@rows = rows($r->{body});
is(names(@rows), 'inside.txt',
   'symlinks_outside_root off: only the symlink that stays in the root');
is($rows[0]{size}, 300, '... listed as its target');
is(get('/links/inside.txt')->{status}, 200, '... and followed');
is(get('/links/outside.txt')->{status}, 404,
   'a symlink out of the root is not followed');
is(get('/linkdir/')->{status}, 404,
   'a directory reached by a symlink out of the root is not listed');
like($t->error_log, qr{"/links/outside\.txt" resolves outside root, not listed},
     'the refused symlink is logged');

$r = get('/follow/');
is(names(rows($r->{body})), 'outdir/ inside.txt outside.txt',
   'symlinks_outside_root on: followed, the dangling one not listed');
is(get('/follow/outside.txt')->{body}, "outside the root\n",
   '... and its href leads there');

# ---- HTTP/2 --------------------------------------------------------------------

SKIP: {
    my ($rc, $out) = $t->curl('--version');
    skip 'curl without HTTP/2', 6 unless $out =~ /\bHTTP2\b/;

    my $base = 'http://127.0.0.1:' . $t->port(1);
    my ($rc2, $o) = $t->curl('--http2-prior-knowledge', '-w',
                             '\n%{http_version} %{http_code} %{content_type}',
                             "$base/list/");
    my ($body, $ver, $st, $ct) = $o =~ /\A(.*)\n(\S+) (\d+) (.*)\z/s;
    is("$ver $st", '2 200', 'h2: 200');
    is($ct, 'text/html; charset=utf-8', 'h2: Content-Type');
    is($body, $list_body, 'h2: the same listing as HTTP/1.1');

    ($rc2, $o) = $t->curl('--http2-prior-knowledge', '-w',
                          '\n%{http_version} %{http_code}', "$base/json/");
    ($body, $ver, $st) = $o =~ /\A(.*)\n(\S+) (\d+)\z/s;
    is("$ver $st", '2 200', 'h2: JSON 200');
    $json = eval { decode_json($body // '') } // [];
    is(scalar @$json, 1 + keys %names, 'h2: the JSON parses, every name');

    ($rc2, $o) = $t->curl('--http2-prior-knowledge', '-I', '-w',
                          '%{http_code}', "$base/list/");
    like($o, qr/content-length: ${\ length $list_body}\r?\n.*200\z/is,
         'h2: HEAD, with the length');
}

$t->done;
