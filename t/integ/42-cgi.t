#!/usr/bin/perl

# mod_cgi (issue 5): CGI/1.1 meta-variables, httpoxy, a scrubbed
# environment, request bodies (sized, chunked, answered before they are
# read), streamed and large output, Status/Location, 502 for broken
# scripts with an error-log line, the time limit (504, or a cut
# response), cgi_max_processes (503), nph- scripts, 403/404, client
# disconnects, and a child that keeps serving static files while a
# script sleeps. Scripts: t/cgi/*.cgi.
#
# Modules: GN_MODDIR (default modules/.libs of the build tree).

use strict;
use warnings;

use Test::More;
use File::Copy qw(copy);
use IO::Select;
use POSIX qw(:errno_h);
use Time::HiRes qw(time sleep);
use GnTest;

my $t = GnTest->new(timeout => 120);

my $top = $ENV{GN_BUILDDIR} // $t->{srcdir};
$ENV{GN_MODDIR} //= "$top/modules/.libs";
plan(skip_all => "$ENV{GN_MODDIR}/mod_cgi.so not built")
    unless -f "$ENV{GN_MODDIR}/mod_cgi.so";
plan(skip_all => 'no perl at /usr/bin/perl for the test scripts')
    unless -x '/usr/bin/perl';

my $dir = $t->testdir;
my $root = $< == 0;
my $nobody = (getpwnam('nobody'))[2];
plan(skip_all => 'running as root but there is no user "nobody"')
    if $root && !defined $nobody;

# As root, scripts run as cgi_user nobody: it must reach them.
my $cgi_user = $root ? 'nobody' : '%%USER%%';

for my $d ('cgi', 'cgit', 'nph') {
    mkdir "$dir/html/$d" or die "mkdir $d: $!";
}
opendir(my $dh, "$t->{srcdir}/t/cgi") or die "t/cgi: $!";
for my $f (grep { /\.cgi$/ } readdir $dh) {
    my @to = $f =~ /^(?:hang|cut)\.cgi$/ ? ('cgit', 'cgi')
             : $f =~ /^nph-/ ? ('nph', 'cgi') : ('cgi');
    for my $to (@to) {
        copy("$t->{srcdir}/t/cgi/$f", "$dir/html/$to/$f")
            or die "copy $f: $!";
        chmod($f eq 'noexec.cgi' ? 0644 : 0755, "$dir/html/$to/$f");
    }
}
closedir $dh;
$t->write_file('html/static.txt', "static file\n");
chmod(0755, $dir, "$dir/html", map { "$dir/html/$_" } qw(cgi cgit nph));

$t->write_conf(<<"EOF_CONF");
children 1;
user %%USER%%;
shutdown_timeout 5s;
load_module %%MODDIR%%/mod_cgi.so;
cgi_max_processes 2;
cgi_user $cgi_user;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;

    location /cgi/ {
        handler cgi;
        cgi_timeout 20s;
        cgi_pass_env GN_CGI_PASSME;
    }
    location /cgit/ {
        handler cgi;
        cgi_timeout 1s;
    }
    location /nph/ {
        handler cgi;
        cgi_nph on;
    }
}
EOF_CONF

# the server's environment: only what cgi_pass_env names may reach a script
$ENV{GN_CGI_SECRET} = 'leaked';
$ENV{GN_CGI_PASSME} = 'passed';

$t->run;


sub env_of
{
    my ($body) = @_;

    return { map { /^([^=]+)=(.*)$/ ? ($1, $2) : () } split /\n/, $body };
}


# The pid a script printed on stderr ("pid N"), from the error log.
sub script_pid
{
    my ($name, $from) = @_;

    return undef unless $t->wait_log(qr/\Q$name\E" stderr: pid \d+/, 5,
                                     undef, $from);
    my ($pid) = substr($t->error_log, $from)
                =~ /\Q$name\E" stderr: pid (\d+)/;
    return $pid;
}


sub gone
{
    my ($pid, $timeout) = @_;
    my $end = time() + GnTest::slow($timeout // 5);

    while (time() < $end) {
        return 1 unless $t->alive($pid);
        sleep(0.05);
    }
    return 0;
}


# Sends a request on a new socket; returns it.
sub start_request
{
    my ($path) = @_;
    my $s = $t->connect or return undef;

    $t->write_all($s, $t->request($path));
    return $s;
}


# Reads from $s until $re matches the bytes read (or $timeout s).
sub read_until
{
    my ($s, $re, $timeout) = @_;
    my $end = time() + GnTest::slow($timeout);
    my $sel = IO::Select->new($s);
    my $buf = '';

    while ($buf !~ $re) {
        my $left = $end - time();
        last if $left <= 0 || !$sel->can_read($left);
        my $n = sysread($s, $buf, 65536, length $buf);
        next if !defined $n && ($! == EINTR || $! == EAGAIN);
        last unless $n;
    }
    return $buf;
}


# ---- the environment ------------------------------------------------------

my $r = $t->http_get('/cgi/env.cgi/extra/path?a=b&c=d',
                     headers => ['X-Foo: bar', 'Proxy: http://evil:8080/',
                                 'Authorization: Basic Zm9vOmJhcg==',
                                 'Cookie: a=1', 'Cookie: b=2',
                                 'X_Under: spoof']);
is($r->{status}, 200, 'env.cgi: 200');
is($r->{headers}{'content-type'}, 'text/plain', 'env.cgi: Content-Type');
my $e = env_of($r->{body});
is($e->{GATEWAY_INTERFACE}, 'CGI/1.1', 'GATEWAY_INTERFACE');
is($e->{REQUEST_METHOD}, 'GET', 'REQUEST_METHOD');
is($e->{QUERY_STRING}, 'a=b&c=d', 'QUERY_STRING');
is($e->{SCRIPT_NAME}, '/cgi/env.cgi', 'SCRIPT_NAME');
is($e->{PATH_INFO}, '/extra/path', 'PATH_INFO');
is($e->{PATH_TRANSLATED}, "$dir/html/extra/path", 'PATH_TRANSLATED');
is($e->{SCRIPT_FILENAME}, "$dir/html/cgi/env.cgi", 'SCRIPT_FILENAME');
is($e->{DOCUMENT_ROOT}, "$dir/html", 'DOCUMENT_ROOT');
is($e->{REQUEST_URI}, '/cgi/env.cgi/extra/path?a=b&c=d', 'REQUEST_URI');
is($e->{SERVER_PROTOCOL}, 'HTTP/1.1', 'SERVER_PROTOCOL');
is($e->{SERVER_PORT}, $t->port(0), 'SERVER_PORT');
is($e->{SERVER_NAME}, 'localhost', 'SERVER_NAME (no port)');
like($e->{SERVER_SOFTWARE} // '', qr/^gannet/, 'SERVER_SOFTWARE');
is($e->{REMOTE_ADDR}, '127.0.0.1', 'REMOTE_ADDR');
is($e->{REMOTE_HOST}, '127.0.0.1', 'REMOTE_HOST is the address');
is($e->{HTTP_X_FOO}, 'bar', 'HTTP_X_FOO from a request header');
is($e->{HTTP_COOKIE}, 'a=1; b=2', 'repeated Cookie headers joined');
ok(!exists $e->{HTTP_PROXY}, 'no HTTP_PROXY from a Proxy: header (httpoxy)');
ok(!exists $e->{HTTP_AUTHORIZATION}, 'no HTTP_AUTHORIZATION');
is($e->{AUTH_TYPE}, 'Basic', 'AUTH_TYPE is the scheme only');
ok(!grep({ /Zm9vOmJhcg/ } values %$e), 'credentials are passed nowhere');
ok(!exists $e->{HTTP_X_UNDER} && !exists $e->{HTTP_X__UNDER},
   'a header name with "_" is not passed');
ok(!exists $e->{CONTENT_LENGTH}, 'no CONTENT_LENGTH without a body');
ok(!exists $e->{GN_CGI_SECRET}, 'environment scrubbed');
is($e->{GN_CGI_PASSME}, 'passed', 'cgi_pass_env passes a variable');
is($e->{PATH}, '/usr/local/bin:/usr/bin:/bin', 'minimal PATH');
is($e->{CWD}, "$dir/html/cgi", 'runs in the script\'s directory');
is($e->{UID}, $root ? $nobody : $<,
   $root ? 'runs as cgi_user nobody' : 'runs as the server user');

$r = $t->http_get('/cgi/env.cgi');
$e = env_of($r->{body});
is($e->{QUERY_STRING}, '', 'QUERY_STRING set and empty');
ok(!exists $e->{PATH_INFO}, 'no PATH_INFO');

# ---- request bodies --------------------------------------------------------

$r = $t->http_get('/cgi/echo.cgi', method => 'POST', body => 'hello=world',
                  headers => ['Content-Type: application/x-www-form-'
                              . 'urlencoded']);
is($r->{status}, 200, 'POST: 200');
is($r->{body}, "CL=11\nhello=world", 'POST body on stdin, CONTENT_LENGTH');

my $big = join('', map { sprintf("%07d\n", $_) } 1 .. 50000);    # 400 kB
$r = $t->http_get('/cgi/echo.cgi', method => 'POST', body => $big);
ok($r->{body} eq "CL=400000\n$big", 'POST 400 kB: echoed whole')
    or diag("got " . length($r->{body}) . " bytes");

$r = $t->http($t->request('/cgi/echo.cgi', method => 'POST',
                          headers => ['Transfer-Encoding: chunked'])
              . "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
is($r->{body}, "CL=11\nhello world", 'chunked body spooled, CONTENT_LENGTH');

# The script answers before it reads its stdin: the server must go on
# reading the body (the response starts after it), else the script waits
# for the rest of its stdin for ever.  The second half of the body is
# sent once the script has run (its stderr line is logged).
{
    my $off = length $t->error_log;
    my $half = join('', map { sprintf("%07d\n", $_) } 1 .. 2500);  # 20 kB
    my $s = $t->connect;
    $t->write_all($s, $t->request('/cgi/early.cgi', method => 'POST',
                                  headers => ['Content-Length: '
                                              . 2 * length $half])
                      . $half);
    ok(script_pid('early.cgi', $off), 'answer before the body: script runs');
    $t->write_all($s, $half);
    my $buf = '';
    my $resp = $t->read_response($s, \$buf, timeout => 10);
    close $s;
    is($resp->{status}, 200, 'answer before the body: 200');
    ok(($resp->{body} // '') eq $half x 2,
       'answer before the body: the whole body echoed')
        or diag("got " . length($resp->{body} // '') . " bytes, "
                . ($resp->{error} // 'no error'));
}

# ---- output ----------------------------------------------------------------

$r = $t->http_get('/cgi/big.cgi', timeout => 30);
is($r->{status}, 200, 'big.cgi: 200');
is(length($r->{body}), 5 * 1024 * 1024, '5 MB received completely');
ok(substr($r->{body}, -1024, 8) eq '00005120'
   && substr($r->{body}, 0, 8) eq '00000001', '5 MB: first and last line');

{
    my $t0 = time();
    my $s = start_request('/cgi/slow.cgi?3');
    my $got = read_until($s, qr/first\n/, 5);
    my $dt = time() - $t0;
    like($got, qr/\r\n\r\n.*first\n/s, 'streaming: first line arrives');
    ok($got !~ /second/, 'streaming: before the script ends')
        or diag(sprintf("after %.2f s", $dt));

    # the child's loop is free meanwhile: a static file is answered before
    # the script's second line (order, not time)
    my $st = $t->http_get('/static.txt');
    is($st->{body}, "static file\n", 'static file while a script sleeps');
    # what has arrived by now, without waiting
    while (IO::Select->new($s)->can_read(0)) {
        last unless sysread($s, $got, 65536, length $got);
    }
    ok($got !~ /second/, 'static file: answered before the script went on');

    $got .= read_until($s, qr/second\n/, 10);
    like($got, qr/first\n.*second\n/s, 'streaming: second line');
    close $s;
}

$r = $t->http_get('/cgi/status.cgi');
is($r->{status}, 404, 'Status: 404 honoured');
is($r->{body}, "not here\n", 'Status: the script\'s body');
is($r->{headers}{'x-cgi'}, 'yes', 'other headers passed through');

$r = $t->http_get('/cgi/redirect.cgi');
is($r->{status}, 302, 'absolute Location: 302');
is($r->{headers}{location}, 'http://example.com/elsewhere', 'Location');

$r = $t->http_get('/cgi/local.cgi');
is($r->{status}, 302, 'local Location: 302 (no internal redirect)');
like($r->{headers}{location} // '', qr{/static\.txt$}, 'local Location');

# ---- broken scripts --------------------------------------------------------

my $off = length $t->error_log;

$r = $t->http_get('/cgi/noheader.cgi');
is($r->{status}, 502, 'no header: 502');
ok($t->wait_log(qr/noheader\.cgi" sent an invalid header line/, 5, undef,
                $off), 'no header: logged');

$r = $t->http_get('/cgi/crash.cgi');
is($r->{status}, 502, 'crash (SIGSEGV): 502');
ok($t->wait_log(qr/crash\.cgi" was killed by signal 11/, 5, undef, $off),
   'crash: logged with the signal');
ok($t->wait_log(qr/crash\.cgi" stderr: about to crash/, 5, undef, $off),
   'crash: its stderr logged');

$r = $t->http_get('/cgi/exit1.cgi');
is($r->{status}, 502, 'exit 1 before output: 502');
ok($t->wait_log(qr/exit1\.cgi" exited with status 1/, 5, undef, $off),
   'exit 1: logged');

$r = $t->http_get('/cgi/bighead.cgi');
is($r->{status}, 502, 'header over 8k: 502');
ok($t->wait_log(qr/bighead\.cgi" sent a header larger than 8k/, 5, undef,
                $off), 'header over 8k: logged');

$r = $t->http_get('/cgi/nph-test.cgi');
is($r->{status}, 502, 'nph- script refused (cgi_nph off)');
$r = $t->http_get('/nph/nph-test.cgi');
is($r->{status}, 200, 'nph- script with cgi_nph on');
is($r->{body}, "nph output\n", 'nph- script: body');

is($t->http_get('/cgi/noexec.cgi')->{status}, 403, 'not executable: 403');
is($t->http_get('/cgi/missing.cgi')->{status}, 404, 'missing: 404');
is($t->http_get('/cgi/missing.cgi/x')->{status}, 404,
   'missing with PATH_INFO: 404');
is($t->http_get('/cgi/')->{status}, 403, 'a directory: 403');

# ---- the time limit --------------------------------------------------------

{
    $off = length $t->error_log;
    $r = $t->http_get('/cgit/hang.cgi', timeout => 10);
    is($r->{status}, 504, 'time limit: 504');
    ok($t->wait_log(qr/hang\.cgi" timed out after 1000 ms/, 5, undef, $off),
       'time limit: logged');
    my $pid = script_pid('hang.cgi', $off);
    ok($pid && gone($pid), 'time limit: the script is gone');

    $off = length $t->error_log;
    my $s = start_request('/cgit/cut.cgi');
    my ($got, $closed) = $t->read_until_close($s, 10);
    close $s;
    like($got, qr/^HTTP\/1\.1 200.*begun\n/s, 'cut: the response began');
    ok($closed && $got !~ /\r\n0\r\n\r\n$/,
       'cut: the connection closed, no last chunk');
    ok($t->wait_log(qr/cut\.cgi" timed out .* the response is cut/, 5, undef,
                    $off), 'cut: logged');
    $pid = script_pid('cut.cgi', $off);
    ok($pid && gone($pid), 'cut: the script is gone');
}

# ---- client disconnect -----------------------------------------------------

# before the script's header (the request is pending)
{
    $off = length $t->error_log;
    my $s = start_request('/cgi/hang.cgi');
    my $pid = script_pid('hang.cgi', $off);
    ok($pid && $t->alive($pid), 'disconnect before the header: script runs');
    close $s;
    ok($pid && gone($pid, 5), 'disconnect before the header: script killed');
}

# ---- cgi_max_processes -----------------------------------------------------

{
    my @s = map { start_request('/cgi/slow.cgi?2') } 1 .. 3;
    my @st;
    for my $s (@s) {
        my $buf = '';
        my $resp = $t->read_response($s, \$buf, timeout => 10);
        push @st, $resp->{status} // 0;
        close $s;
    }
    is(join(',', sort @st), '200,200,503',
       'cgi_max_processes 2: the third concurrent request gets 503');
    # a slot is free once its response has been sent, whether or not
    # the launcher has reported the script's exit yet: no waiting here
    is($t->http_get('/cgi/status.cgi')->{status}, 404,
       'slots are free again afterwards');
}

# after the script's header (the response is streaming)
{
    $off = length $t->error_log;
    my $s = start_request('/cgi/slow.cgi?30');
    my $got = read_until($s, qr/first\n/, 5);
    like($got, qr/first\n/, 'disconnect while streaming: the script runs');
    my $pid = script_pid('slow.cgi', $off);
    close $s;
    ok($pid && gone($pid, 5), 'disconnect while streaming: script killed');
}

# ---- the launcher leaves with the server -----------------------------------

my @launchers = launchers();
is(scalar @launchers, 1, 'one launcher process');
ok($t->stop, 'server stops gracefully on QUIT');
my $end = time() + GnTest::slow(5);
sleep(0.05) while launchers() && time() < $end;
is(scalar(launchers()), 0, 'the launcher exits with the server');

$t->done;


sub launchers
{
    my @l;

    opendir(my $d, '/proc') or return ();
    for my $pid (grep { /^\d+$/ } readdir $d) {
        open(my $fh, '<', "/proc/$pid/stat") or next;
        my $l = <$fh>;
        close $fh;
        next unless defined $l
                    && $l =~ /^\d+ \(gannet-cgi\) (\S) \d+ (\d+)/;
        next if $1 eq 'Z' || $2 != $t->{pgid};
        push @l, $pid;
    }
    closedir $d;
    return @l;
}
