#!/usr/bin/perl

# Access logs: log_format with escape=json and $http_<name>, buffered
# logs flushed by time and at stop, no torn or interleaved lines from two
# children under concurrent load, a reopen under load that loses no line,
# and access_log off in one location.

use strict;
use warnings;

use Test::More;
use Time::HiRes qw(time sleep);
use IO::Socket::INET;
use JSON::PP;
use POSIX qw(_exit);
use GnTest;

my $t = GnTest->new;

$t->write_conf(<<'EOF_CONF');
children 2;
user %%USER%%;
shutdown_timeout 10s;

log_format j escape=json
    '{"uri":"$request_uri","ua":"$http_user_agent","foo":"$http_x_foo",'
    '"ref":"$http_referer","status":$status,"scheme":"$scheme",'
    '"port":$server_port,"proto":"$server_protocol","user":"$remote_user",'
    '"tls":"$tls_protocol","sni":"$tls_sni"}';
log_format plain '$request_uri|$http_x_foo|$status';
log_format vars '$request_method|$uri|$args|$host|$server_name|'
    '$server_protocol|$sent_http_content_type|$bytes_sent|$body_bytes_sent|'
    '$connection_requests|$request_length|$remote_port|$pid|'
    '$time_iso8601|$msec';

server {
    listen 127.0.0.1:%%PORT_0%%;
    server_name logs.test alt.test;
    types { text/html html; }
    access_log logs/access.log;

    location /vars/ {
        access_log logs/vars.log vars;
    }
    location /j/ {
        access_log logs/j.log j;
        access_log logs/plain.log plain;
    }
    location /timed/ {
        access_log logs/timed.log combined buffer=64k flush=2s;
    }
    location /atstop/ {
        access_log logs/atstop.log combined buffer=64k;
    }
    location /load/ {
        access_log logs/load.log combined buffer=4k flush=1s;
        access_log logs/load-unbuf.log;
    }
    location /reopen/ {
        access_log logs/reopen.log combined buffer=8k flush=1s;
    }
    location /off/ {
        access_log off;
    }
}
EOF_CONF

for my $d (qw(j timed atstop load reopen off vars)) {
    $t->write_file("html/$d/index.html", "$d\n");
}
$t->write_file('html/index.html', "index\n");

$t->run;
$t->wait_children(2, 5);
my $dir = $t->testdir;
my $port = $t->port(0);

# ---- escape=json, $http_x_foo ---------------------------------------------

my $ua = "a \"q\" \\ \xC3\xA9";
my $r = $t->http_get('/j/?x=1', headers => { 'User-Agent' => $ua,
                                             'X-Foo' => 'bar"baz' });
is($r->{status}, 200, 'GET /j/');
$t->http_get('/j/?x=2');
ok($t->wait_log(qr/x=2/, 5, 'logs/j.log'), 'json log written');

my @j = split /\n/, $t->read_file('logs/j.log') // '';
is(scalar @j, 2, 'two json lines');
# JSON text is UTF-8 (RFC 8259): decoded as such, strictly
my $rec = eval { JSON::PP->new->utf8->decode($j[0]) };
ok($rec, 'line 1 parses as UTF-8 JSON') or diag("$@: $j[0]");
is($rec->{uri}, '/j/?x=1', 'json: $request_uri');
(my $ua_chars = $ua) =~ s/\xC3\xA9/\x{e9}/;
is($rec->{ua}, $ua_chars, 'json: quotes, backslash, UTF-8 survive');
like($j[0], qr/ \xC3\xA9"/, 'json: valid UTF-8 passes unchanged');
is($rec->{foo}, 'bar"baz', 'json: $http_x_foo');
is($rec->{ref}, '', 'json: a missing header is ""');
is($rec->{user}, '', 'json: no $remote_user is ""');
is($rec->{tls}, '', 'json: $tls_protocol of a plain connection is "", '
                    . 'like every variable with no value');
is($rec->{sni}, '', 'json: $tls_sni of a plain connection is ""');
is($rec->{status}, 200, 'json: $status is a number');
is($rec->{scheme}, 'http', 'json: $scheme');
is($rec->{port}, $port, 'json: $server_port');
is($rec->{proto}, 'HTTP/1.1', 'json: $server_protocol');
my $rec2 = eval { JSON::PP->new->utf8->decode($j[1] // '') };
ok($rec2 && $rec2->{foo} eq '', 'line 2 parses, no X-Foo');

# bytes that are not UTF-8 become U+FFFD, so the line stays valid JSON
$t->http_get('/j/?x=3', headers => { 'User-Agent' => "a\xFF\xC3(\xE2\x82" });
ok($t->wait_log(qr/x=3/, 5, 'logs/j.log'), 'json line 3 written');
my ($j3) = grep { /x=3/ } split /\n/, $t->read_file('logs/j.log') // '';
my $rec3 = eval { JSON::PP->new->utf8->decode($j3 // '') };
ok($rec3, 'a User-Agent that is not UTF-8: the line parses as UTF-8 JSON')
    or diag("$@: " . ($j3 // ''));
is($rec3 && $rec3->{ua}, "a\x{fffd}\x{fffd}(\x{fffd}\x{fffd}",
   'json: each byte that is not UTF-8 is U+FFFD');

# the same request's line reaches plain.log just after j.log
$t->wait_log(qr/x=2/, 5, 'logs/plain.log');
my $plain = $t->read_file('logs/plain.log') // '';
like($plain, qr{^/j/\?x=1\|bar\\x22baz\|200$}m,
     'default escape: \xHH in a header value');
like($plain, qr{^/j/\?x=2\|-\|200$}m, 'default escape: missing is "-"');

# ---- the other variables, one line each for three requests -----------------

{
    my @req = ("GET /vars/index.html?a=1&b=2 HTTP/1.1\r\n"
               . "Host: Logs.TEST.:8080\r\n\r\n",
               "POST /vars/index.html HTTP/1.1\r\nHost: alt.test\r\n"
               . "Content-Length: 5\r\n\r\n",
               "GET /vars/index.html HTTP/1.0\r\n\r\n");
    my (@resp, @port, $b);

    my $s = $t->connect;
    $b = '';
    $t->write_all($s, $req[0]);
    push @resp, $t->read_response($s, \$b);
    $t->write_all($s, $req[1] . '12345');
    push @resp, $t->read_response($s, \$b);
    push @port, ($s->sockport) x 2;
    close $s;
    $s = $t->connect;
    $t->write_all($s, $req[2]);
    my ($raw) = $t->read_until_close($s, 5);
    push @resp, { raw => $raw, body => $raw =~ /\r\n\r\n(.*)\z/s ? $1 : '' };
    push @port, $s->sockport;
    close $s;

    # the whole third line, up to its newline, $msec and all
    ok($t->wait_log(qr/^GET\|.*HTTP\/1\.0.*\|\d+\.\d{3}\n/m, 5,
                    'logs/vars.log'),
       'vars: three lines written');
    my @l = map { [split /\|/, $_, -1] } split /\n/,
            $t->read_file('logs/vars.log') // '';
    is(scalar @l, 3, 'vars: three lines') or diag(explain(\@l));
    my %kids = map { $_ => 1 } $t->children;
    my @want = (
        [ 'GET', '/vars/index.html', 'a=1&b=2', 'logs.test', 'logs.test',
          'HTTP/1.1', 'text/html' ],
        [ 'POST', '/vars/index.html', '-', 'alt.test', 'logs.test',
          'HTTP/1.1', 'text/html' ],
        [ 'GET', '/vars/index.html', '-', 'logs.test', 'logs.test',
          'HTTP/1.0', 'text/html' ],
    );
    for my $i (0 .. 2) {
        my $f = $l[$i] // [];
        my $n = $i + 1;
        is_deeply([@$f[0 .. 6]], $want[$i],
                  "vars $n: method, uri, args, host, server_name, protocol, "
                  . 'content type');
        is($f->[7], length($resp[$i]{raw} // ''),
           "vars $n: \$bytes_sent is what the client got");
        is($f->[8], length($resp[$i]{body} // ''),
           "vars $n: \$body_bytes_sent");
        is($f->[9], $i == 1 ? 2 : 1, "vars $n: \$connection_requests");
        is($f->[10], length $req[$i], "vars $n: \$request_length (the head)");
        is($f->[11], $port[$i], "vars $n: \$remote_port");
        ok($kids{$f->[12] // ''}, "vars $n: \$pid is a child's");
        like($f->[13] // '',
             qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/,
             "vars $n: \$time_iso8601") or diag(join('|', @$f));
        ok(($f->[14] // '') =~ /^(\d+\.\d{3})$/ && abs($1 - time()) < 60,
           "vars $n: \$msec is now, in seconds.milliseconds")
            or diag(join('|', @$f));
    }
    is($resp[1]{status}, 405, 'vars: the POST got the static files\' 405');
}

# ---- access_log off -------------------------------------------------------

is($t->http_get('/off/')->{status}, 200, 'GET /off/');
$t->http_get('/index.html');
ok($t->wait_log(qr{GET /index\.html}, 5, 'logs/access.log'),
   'main access log written');
unlike($t->read_file('logs/access.log') // '', qr{/off/},
       'access_log off: not logged');

# ---- flush= ---------------------------------------------------------------

my $t0 = time();
is($t->http_get('/timed/')->{status}, 200, 'GET /timed/');
my $early = -s "$dir/logs/timed.log" // 0;
ok($early == 0 || time() - $t0 > 1.5, 'buffered: not written at once');
ok($t->wait_log(qr{GET /timed/ HTTP}, 6, 'logs/timed.log'),
   'buffered: written after flush time');
ok(time() - $t0 >= 1.5, 'buffered: written no sooner than flush=2s')
    or diag(time() - $t0);

is($t->http_get('/atstop/')->{status}, 200, 'GET /atstop/');

# ---- concurrent load, 2 children ------------------------------------------

sub client
{
    my ($path, $n, $tag, $pause) = @_;
    my $ok = 0;
    my $long = 'L' x 300;

    for my $i (1 .. $n) {
        my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port",
                                      Timeout => 5) or next;
        print $s "GET $path?c=$tag&i=$i HTTP/1.0\r\nHost: localhost\r\n"
                 . "User-Agent: ua-$tag-$i-$long\r\n\r\n";
        local $/;
        my $resp = <$s> // '';
        $ok++ if $resp =~ m{^HTTP/1\.1 200 };
        close $s;
        sleep($pause) if $pause;
    }
    return $ok;
}

sub load
{
    my ($path, $clients, $n, $pause) = @_;
    my @pids;

    for my $c (1 .. $clients) {
        my $pid = fork();
        die "fork: $!" unless defined $pid;
        if ($pid == 0) {
            my $ok = client($path, $n, $c, $pause);
            _exit($ok == $n ? 0 : 1);
        }
        push @pids, $pid;
    }
    return @pids;
}

sub wait_pids
{
    my $bad = 0;
    for my $pid (@_) {
        waitpid($pid, 0);
        $bad++ if $?;
    }
    return $bad;
}

my ($nc, $nr) = (8, 200);
my $bad = wait_pids(load('/load/', $nc, $nr));
is($bad, 0, "$nc clients x $nr requests answered 200");

# ---- reopen under load ----------------------------------------------------

# paced (about 1 s per client), so the rename falls in the middle
my @pids = load('/reopen/', 4, 250, 0.004);
sleep(0.4);
ok(rename("$dir/logs/reopen.log", "$dir/logs/reopen.log.1"),
   'reopen.log renamed under load');
ok($t->signal('USR1'), 'USR1 under load');
is(wait_pids(@pids), 0, '4 clients x 250 requests answered 200');

# stop: flushes every buffer
ok($t->stop, 'stopped');

sub lines
{
    my ($file) = @_;
    my $text = $t->read_file($file) // '';
    return split /\n/, $text, -1;
}

my $line_re = qr{^127\.0\.0\.1 - - \[[^\]]+\] "GET /\w+/\?c=(\d+)&i=(\d+) }
              . qr{HTTP/1\.0" 200 \d+ "-" "ua-(\d+)-(\d+)-L{300}"$};

for my $file ('logs/load.log', 'logs/load-unbuf.log') {
    my @l = lines($file);
    pop @l if @l && $l[-1] eq '';
    is(scalar @l, $nc * $nr, "$file: one line per request");
    my @badl = grep { !/$line_re/ || $1 ne $3 || $2 ne $4 } @l;
    is(scalar @badl, 0, "$file: every line whole and parseable")
        or diag(join("\n", @badl[0 .. ($#badl < 2 ? $#badl : 2)]));
    my %seen = map { /c=(\d+)&i=(\d+)/ ? ("$1.$2" => 1) : () } @l;
    is(scalar keys %seen, $nc * $nr, "$file: no line lost or doubled");
}

my @old = lines('logs/reopen.log.1');
my @new = lines('logs/reopen.log');
pop @old if @old && $old[-1] eq '';
pop @new if @new && $new[-1] eq '';
is(@old + @new, 1000, 'reopen: old + new file hold every request')
    or diag(scalar(@old) . ' + ' . scalar(@new));
ok(@new > 0, 'reopen: the new file got lines');
is(scalar(grep { !/$line_re/ } @old, @new), 0,
   'reopen: every line whole');

like($t->read_file('logs/atstop.log') // '', qr{GET /atstop/ HTTP},
     'buffer without flush= is written at stop');

$t->done;
