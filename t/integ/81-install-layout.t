#!/usr/bin/perl

# What `make install` puts down works on day one (issue 18, items 5, 7, 8).
# `make install DESTDIR=TMP` from the build tree, then: the compiled-in
# default pid file, logs and root (gannet -V) lie in directories the
# install made; the module directory holds modules, no libtool .la files,
# and not the SPECweb99 kit; mod_example.c and the CGI README are in the
# docs; the logrotate snippet is there; every load_module line of the
# installed gannet.conf and docs names the real module directory; the
# systemd unit passes `systemd-analyze verify` and `systemd-analyze
# security` rates its exposure 5.0 or less (it was 9.6, UNSAFE).
#
# Then the installed binary runs the minimal configuration
# `server { listen PORT; }` with no -p, in a private mount namespace where
# DESTDIR/PREFIX is bind-mounted on PREFIX (root only, needs unshare(1)):
# it serves the default page, writes the default access log and error log
# in the installed tree; with `access_log off` in its server it opens no
# default access log.  The installed logrotate snippet rotates its logs
# and gannetctl reopen-logs (its postrotate) makes it write new ones.

use strict;
use warnings;

use Test::More;
use File::Find;
use GnTest;

my $t = GnTest->new(timeout => 120);
my $build = $ENV{GN_BUILDDIR};

plan(skip_all => 'GN_BUILDDIR not set (run from make check)')
    unless defined $build && -f "$build/Makefile";
$t->has_prog('make');

my $dest = $t->testdir . '/dest';

# the installation directories, as make expands them
my @vars = qw(prefix bindir sbindir pkglibdir docdir sysconfdir
              localstatedir datadir mandir systemdunitdir includedir);
$t->write_file('dirs.mk', "gn-test-dirs:\n"
               . join('', map { "\t\@echo '$_=\$($_)'\n" } @vars));
my ($rc, $out, $err) = $t->run_client(['make', '-s', '-C', $build,
    '-f', 'Makefile', '-f', $t->testdir . '/dirs.mk', 'gn-test-dirs'],
    timeout => 30);
my %dir = $out =~ /^(\w+)=(.*)$/mg;
plan(skip_all => "cannot read the installation directories: $err")
    unless $rc == 0 && keys %dir == @vars;

($rc, $out, $err) = $t->run_client(['make', '-C', $build, 'install',
                                    "DESTDIR=$dest"], timeout => 120);
is($rc, 0, 'make install DESTDIR=... succeeds') or diag($err, $out);
unlike($out . $err, qr/Libraries have been installed in|libtool --finish/,
       'no libtool lecture about LD_LIBRARY_PATH');

my $gannet = "$dest$dir{sbindir}/gannet";
ok(-x $gannet, 'gannet installed in sbindir');

# -V names the compiled-in defaults; each lies in an installed directory
($rc, $out) = $t->run_client([$gannet, '-V']);
my %dflt;
if ($out =~ /^default[ ]paths[ ]\(without[ ]-p\):[ ]pid[ ](\S+),[ ]error[ ]log[ ](\S+),
             [ ]access[ ]log[ ](\S+),[ ]root[ ](\S+)$/mx)
{
    %dflt = (pid => $1, error_log => $2, access_log => $3, root => $4);
}
is(scalar keys %dflt, 4, 'gannet -V names the default paths') or diag($out);
for my $k (qw(pid error_log access_log)) {
    my $d = ($dflt{$k} // '') =~ s{/[^/]+\z}{}r;
    ok($d =~ m{^/} && -d "$dest$d", "directory of the default $k installed"
       . " ($d)");
}
ok(-f "$dest" . ($dflt{root} // '/nonexistent') . '/index.html',
   'the default root holds the default page');

# modules: .so files only, no benchmark module
my $moddir = "$dest$dir{pkglibdir}";
ok(-f "$moddir/mod_status.so", 'mod_status.so installed');
ok(-f "$moddir/mod_isapi.so", 'mod_isapi.so installed');
ok(-f "$dest$dir{includedir}/gannet/isapi/httpext.h"
   && -f "$dest$dir{includedir}/gannet/isapi/windows.h",
   'the ISAPI headers installed (<gannet/isapi/httpext.h>, windows.h)');
SKIP: {
    my $cc = $ENV{CC} // 'cc';
    my $src = ($ENV{GN_SRCDIR} // "$build/../..")
              . '/modules/isapi/examples/hello.c';
    skip 'no sample source', 2 unless -f $src;
    my $so = $t->testdir . '/hello.so';
    my ($crc, $cout, $cerr) = $t->run_client(['sh', '-c',
        "$cc -shared -fPIC -Wall -Werror -I'$dest$dir{includedir}/gannet/isapi' "
        . "'$src' -o '$so'"], timeout => 60);
    is($crc, 0, 'an IIS source compiles against the installed headers '
       . 'alone') or diag($cerr);
    ($crc, $cout) = $t->run_client(['sh', '-c', "nm -D --defined-only '$so'"],
                                   timeout => 10);
    like($cout, qr/\bHttpExtensionProc\b/, '... and exports its entry points');
}
my @la = glob("$moddir/*.la");
is("@la", '', 'no .la files in the module directory');
ok(!-e "$moddir/mod_specweb99.so", 'mod_specweb99.so not installed');
ok(!-e "$dest$dir{bindir}/gannet-specweb99", 'gannet-specweb99 not installed');

# documents: the module template, its Makefile and the CGI README
for my $f (qw(modules.md isapi.md mod_example.c module-Makefile.example
               README.cgi)) {
    ok(-f "$dest$dir{docdir}/$f", "$f in the docs directory");
}
ok(-x "$dest$dir{bindir}/gannet-module-test",
   'gannet-module-test installed in bindir');

ok(-f "$dest$dir{sysconfdir}/logrotate.d/gannet", 'logrotate snippet installed');

# every load_module line of an installed file names an installed module
my (@lines, @bad);
find(sub {
    return unless -f $_ && $File::Find::name !~ m{\.(?:so|gz)\z};
    open(my $fh, '<', $_) or return;
    while (my $l = <$fh>) {
        push @lines, "$File::Find::name: $l"
            if $l =~ /^\s*#?\s*load_module\s+\S+;/;
    }
}, "$dest$dir{sysconfdir}", "$dest$dir{docdir}");
for my $l (@lines) {
    my ($path) = $l =~ /load_module\s+(\S+?);/;
    my $ours = $path =~ m{/mod_(?:status|example|cgi|isapi)\.so\z};
    push @bad, $l unless index($path, "$dir{pkglibdir}/") == 0
                         && (!$ours || -f "$dest$path");
}
ok(@lines >= 4, 'installed files show load_module lines');
is(join('', @bad), '', 'each names the module directory (and an installed'
   . ' module if it is one of ours)');

# ---- the systemd unit: valid, and hardened -------------------------------

SKIP: {
    skip('systemd-analyze not found', 4)
        unless defined GnTest::_which('systemd-analyze');

    # the installed unit with its paths moved into DESTDIR, so that
    # verify finds the programs and (through MANPATH) the man pages
    my $unit = $t->read_file("$dest$dir{systemdunitdir}/gannet.service");
    ok(defined $unit, 'gannet.service installed');
    $unit //= '';
    $unit =~ s{(?<![\w/])\Q$dir{$_}\E(?=/)}{$dest$dir{$_}}g
        for qw(sbindir sysconfdir localstatedir);
    my $copy = $t->write_file('unit/gannet.service', $unit);
    local $ENV{MANPATH} = "$dest$dir{mandir}";
    ($rc, $out, $err) = $t->run_client(['systemd-analyze', 'verify', $copy],
                                       timeout => 30);
    is("$rc $out$err", '0 ', 'systemd-analyze verify: no complaint');
    ($rc, $out, $err) = $t->run_client(['systemd-analyze', 'security',
                                        '--offline=true', $copy],
                                       timeout => 30);
    my ($level) = "$out$err" =~ /Overall exposure level for \S+: ([\d.]+)/;
    ok(defined $level && $level <= 5.0,
       'systemd-analyze security: exposure ' . ($level // '?') . ' <= 5.0')
        or diag($out, $err);

    # the socket unit beside it (socket activation, LISTEN_FDS)
    my $sock = $t->read_file("$dest$dir{systemdunitdir}/gannet.socket");
    $t->write_file('unit/gannet.socket', $sock // '');
    ($rc, $out, $err) = $t->run_client(['systemd-analyze', 'verify', $copy,
                                        "$t->{dir}/unit/gannet.socket"],
                                       timeout => 30);
    is(defined $sock ? "$rc $out$err" : 'missing', '0 ',
       'gannet.socket installed, systemd-analyze verify: no complaint');
}

# ---- the installed binary, no -p, the minimal configuration -----------

SKIP: {
    my $why = $t->ulimit_skip;
    $why //= 'not root: cannot bind-mount the installed tree' if $> != 0;
    $why //= 'under valgrind: the wrapper runs the installed binary as it is'
        if GnTest::valgrind();
    $why //= 'unshare not found' unless defined GnTest::_which('unshare');
    $why //= "prefix $dir{prefix} does not exist: nothing to mount on"
        unless -d $dir{prefix};
    for my $k (qw(sbindir localstatedir datadir)) {
        $why //= "$k is outside the prefix"
            unless index($dir{$k}, "$dir{prefix}/") == 0;
    }
    $why //= 'the default paths are unknown' unless keys %dflt == 4;
    if (!defined $why) {
        ($rc) = $t->run_client(['unshare', '-m', 'true']);
        $why = 'unshare -m is not allowed here' if $rc != 0;
    }
    skip($why, 11) if defined $why;

    # the wrapper drops GnTest's -p: the installed layout is the point
    my $wrap = $t->write_file('ns.sh', <<"EOF");
#!/bin/sh
mount --bind '$dest$dir{prefix}' '$dir{prefix}' || exit 1
exec '$dir{sbindir}/gannet' -f -c '${\ $t->conf_path}'
EOF
    chmod(0755, $wrap);
    $t->{pid_file} = "$dest$dflt{pid}";
    $t->{error_log} = "$dest$dflt{error_log}";
    my $alog = "$dest$dflt{access_log}";

    $t->write_conf("server { listen %%PORT_0%%; }\n");
    {
        local $ENV{TEST_GN_WRAP} = "unshare -m $wrap";
        $t->run;
    }
    my $r = $t->http_get('/');
    is($r->{status}, 200, 'the minimal configuration serves /');
    like($r->{body}, qr/gannet is running/, 'the installed default page');
    ok($t->wait_log(qr{"GET / HTTP/1\.[01]" 200 }, 10, $alog),
       'a line in the default access log of the installed tree');

    # the installed logrotate snippet, forced, in a namespace of its own:
    # it renames the logs and its gannetctl reopen-logs makes the server
    # write a new access.log
    SKIP: {
        skip('logrotate not found', 3)
            unless defined GnTest::_which('logrotate');
        my $lr = $t->write_file('lr.sh', <<"EOF");
#!/bin/sh
mount --bind '$dest$dir{prefix}' '$dir{prefix}' || exit 1
exec logrotate -f -s '${\ $t->testdir}/logrotate.state' \\
    '$dir{sysconfdir}/logrotate.d/gannet'
EOF
        my ($lrc, $lout, $lerr) = $t->run_client(['unshare', '-m', 'sh',
                                                  $lr], timeout => 30);
        is($lrc, 0, 'logrotate -f with the installed snippet')
            or diag($lout, $lerr);
        ok(-s "$alog.1", 'access.log rotated to access.log.1');
        $t->http_get('/again');
        ok($t->wait_log(qr{"GET /again }, 10, $alog),
           'after reopen-logs the server writes a new access.log');
    }
    ok($t->stop, 'stops');
    ok(-s "$dest$dflt{error_log}", 'the default error log was written');

    unlink($alog);
    $t->write_conf("server { listen %%PORT_0%%; access_log off; }\n");
    {
        local $ENV{TEST_GN_WRAP} = "unshare -m $wrap";
        $t->run;
    }
    $r = $t->http_get('/');
    is($r->{status}, 200, 'access_log off: served');
    ok($t->stop, 'stops');
    ok(!-e $alog, 'access_log off in every server: no default access log');
}

$t->done;
