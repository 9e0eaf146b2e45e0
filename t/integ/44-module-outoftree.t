#!/usr/bin/perl

# The module development kit from a module writer's side: a module
# written outside the tree (the example of the <gannet/module.h> header
# comment) is compiled with exactly
#
#     cc -shared -fPIC $(pkg-config --cflags gannet) mod_hello.c -o mod_hello.so
#
# loaded with load_module and used with `handler hello;`. The pkg-config
# file is the installed one when GN_PKGCONFIG_DIR names its directory
# (e.g. $DESTDIR$prefix/lib/pkgconfig after `make install DESTDIR=...`),
# otherwise api/gannet.pc.in made into a .pc whose includedir is the
# source tree's api/ (what `make install` would install, without
# installing). Also: the .pc has the ABI version and moduledir variables,
# the flags include -fvisibility=hidden so only the entry symbol is
# exported, and the module builds warning-free as C99 and as C++, also
# when it says it needs an older minor (GN_MODULE_V1_NEEDS(0)); a minor
# newer than the headers' does not compile.
#
# Then the kit a module writer copies: doc/module-Makefile.example builds
# the module (only the entry symbol exported), installs it under DESTDIR
# into the .pc's moduledir, and `make test` runs it with
# gannet-module-test (the .pc's module_test); the harness also answers
# over HTTP/2, says when the server does not start (exit 3, its log
# printed) and always removes its temporary directory.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new(timeout => 60);
$t->skip_unless_bin;
$t->has_prog('cc', 'pkg-config');

my $src = $t->{srcdir};
my $dir = $t->testdir;
my ($pcdir, $pc_from);

if (defined $ENV{GN_PKGCONFIG_DIR} && $ENV{GN_PKGCONFIG_DIR} ne '') {
    $pcdir = $ENV{GN_PKGCONFIG_DIR};
    $pc_from = "installed $pcdir/gannet.pc";
    plan(skip_all => "$pcdir/gannet.pc missing") unless -f "$pcdir/gannet.pc";
} else {
    $pcdir = "$dir/pkgconfig";
    $pc_from = 'api/gannet.pc.in';
    make_pc("$src/api/gannet.pc.in", "$pcdir/gannet.pc");
}
diag("pkg-config file: $pc_from") if $ENV{TEST_GN_VERBOSE};

my ($abi_major, $abi_minor) = abi_version("$src/api/gannet/abi.h");

# What configure and make install would substitute; includedir points at
# the source tree's api/ so that <gannet/module.h> is found there.
sub make_pc
{
    my ($in, $out) = @_;
    my %sub = (prefix => "$dir/inst", exec_prefix => '${prefix}',
               libdir => '${exec_prefix}/lib', includedir => "$src/api",
               bindir => ($ENV{GN_BUILDDIR} // $src) . '/api',
               PACKAGE_VERSION => '0.0.0-test');

    my $text = $t->read_file($in) // die "$in: $!\n";
    ($sub{GN_ABI_MAJOR}, $sub{GN_ABI_MINOR})
        = abi_version("$src/api/gannet/abi.h");
    $text =~ s/\@(\w+)\@/exists $sub{$1} ? $sub{$1} : die "no \@$1\@\n"/ge;
    $t->write_file($out =~ s{^\Q$dir\E/}{}r, $text);
}

sub abi_version
{
    my ($h) = @_;
    my ($maj, $min);

    open(my $fh, '<', $h) or die "$h: $!\n";
    while (<$fh>) {
        $maj = $1 if /^#define\s+GN_ABI_MAJOR\s+(\d+)/;
        $min = $1 if /^#define\s+GN_ABI_MINOR\s+(\d+)/;
    }
    close $fh;
    return ($maj, $min);
}

sub pkgconfig
{
    my (@args) = @_;
    local $ENV{PKG_CONFIG_PATH} = $pcdir;
    local $ENV{PKG_CONFIG_LIBDIR} = $pcdir;     # only ours
    my ($rc, $out, $err) = $t->run_client(['pkg-config', @args]);

    chomp $out;
    return ($rc, $out, $err);
}

# ---- the .pc file ------------------------------------------------------------

my ($rc, $cflags, $err) = pkgconfig('--cflags', 'gannet');
is($rc, 0, 'pkg-config --cflags gannet') or diag($err);
like($cflags, qr/(?:^|\s)-fvisibility=hidden(?:\s|$)/,
     'cflags: -fvisibility=hidden');
like($cflags, qr/(?:^|\s)-fPIC(?:\s|$)/, 'cflags: -fPIC');
like($cflags, qr/(?:^|\s)-I\S+/, 'cflags: -I');

my ($rc2, $libs) = pkgconfig('--libs', 'gannet');
is($libs, '', 'no libs: modules link against nothing of the server');

my (undef, $maj) = pkgconfig('--variable=abi_major', 'gannet');
my (undef, $min) = pkgconfig('--variable=abi_minor', 'gannet');
is("$maj.$min", "$abi_major.$abi_minor", 'abi_major.abi_minor variables');

my (undef, $moddir) = pkgconfig('--variable=moduledir', 'gannet');
like($moddir, qr{/lib(?:64)?/gannet$}, "moduledir $moddir");

($rc) = pkgconfig('--validate', 'gannet');
is($rc, 0, 'pkg-config --validate');

# ---- an out-of-tree module ---------------------------------------------------

# The example of the <gannet/module.h> header comment, verbatim.
my $hello = <<'EOF_C';
#include <gannet/module.h>

static int hello(const gn_api_t *api, gn_request_t *r)
{
    api->set_header(r, "Content-Type", "text/plain");
    api->write(r, "hello\n", 6);
    return GN_OK;
}

static const gn_module_t  hello_module = {
    GN_MODULE_V1, "hello", "1.0", NULL, 0,
    NULL, NULL, hello, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(hello_module)
EOF_C

$t->write_file('mod_hello/mod_hello.c', $hello);

# cc -shared -fPIC $(pkg-config --cflags gannet) mod_x.c -o mod_x.so
my @cmd = ('cc', '-shared', '-fPIC', split(' ', $cflags),
           "$dir/mod_hello/mod_hello.c", '-o', "$dir/mod_hello/mod_hello.so");
($rc, my $out, $err) = $t->run_client(\@cmd, timeout => 60);
is($rc, 0, 'cc -shared -fPIC $(pkg-config --cflags gannet) mod_hello.c')
    or diag("@cmd\n$err");
is($err, '', 'no compiler output');

SKIP: {
    skip('nm not found', 1) unless defined GnTest::_which('nm');
    my ($nrc, $syms) = $t->run_client(['nm', '-D', '--defined-only',
                                       "$dir/mod_hello/mod_hello.so"]);
    my @s = sort map { (split ' ')[-1] } grep { /\S/ } split /\n/, $syms;
    is("@s", 'gn_module_v1', 'only gn_module_v1 is exported');
}

# Strict builds: C99 pedantic and C++ (extern "C", no C-only constructs).
@cmd = ('cc', '-std=c99', '-Wall', '-Wextra', '-Werror', '-shared',
        '-fPIC', split(' ', $cflags), "$dir/mod_hello/mod_hello.c", '-o',
        "$dir/mod_hello/strict.so");
($rc, $out, $err) = $t->run_client(\@cmd, timeout => 60);
is($rc, 0, 'builds with -std=c99 -Wall -Wextra -Werror') or diag($err);

SKIP: {
    skip('c++ not found', 1) unless defined GnTest::_which('c++');
    $t->write_file('mod_hello/mod_hello_cxx.cc',
                   $hello);
    @cmd = ('c++', '-Wall', '-Wextra', '-Werror', '-shared', '-fPIC',
            split(' ', $cflags), "$dir/mod_hello/mod_hello_cxx.cc", '-o',
            "$dir/mod_hello/cxx.so");
    ($rc, $out, $err) = $t->run_client(\@cmd, timeout => 60);
    is($rc, 0, 'the header compiles as C++') or diag($err);
}

# ---- a configuration check (ABI 1.2), in C and in C++ ------------------------

my $checked = <<'EOF_C';
#include <gannet/module.h>

typedef struct { int64_t times; } hello_conf_t;

static const gn_directive_t  hello_directives[] = {
    { "hello_times", GN_DIR_NUMBER, GN_CTX_MAIN | GN_CTX_LOCATION,
      offsetof(hello_conf_t, times), "1" },
    { NULL, 0, 0, 0, NULL }
};

static int check(const gn_api_t *api, void *conf, int level)
{
    (void) level;
    if (((hello_conf_t *) conf)->times > 10) {
        return api->conf_error("hello_times", "is at most 10");
    }
    return GN_OK;
}

static int hello(const gn_api_t *api, gn_request_t *r)
{
    return api->write(r, "checked\n", 8);
}

static const gn_module_t  hello_module = {
    GN_MODULE_V1, "hello_checked", "1.0", hello_directives,
    sizeof(hello_conf_t),
    NULL, NULL, hello, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(hello_module)
GN_MODULE_CHECK(check)
EOF_C

for my $lang ('c', 'cc') {
    my $cc = $lang eq 'c' ? 'cc' : 'c++';
  SKIP: {
    skip("$cc not found", 4) unless defined GnTest::_which($cc);
    $t->write_file("mod_checked/mod_checked_$lang.$lang", $checked);
    @cmd = ($cc, $lang eq 'c' ? ('-std=c99') : (), '-Wall', '-Wextra',
            '-Werror', '-shared', '-fPIC', split(' ', $cflags),
            "$dir/mod_checked/mod_checked_$lang.$lang", '-o',
            "$dir/mod_checked/$lang.so");
    ($rc, $out, $err) = $t->run_client(\@cmd, timeout => 60);
    is($rc, 0, "GN_MODULE_CHECK: builds as $lang, -Wall -Wextra -Werror")
        or diag($err);

    my ($nrc, $syms) = $t->run_client(['nm', '-D', '--defined-only',
                                       "$dir/mod_checked/$lang.so"]);
    my @s = sort map { (split ' ')[-1] } grep { /\S/ } split /\n/, $syms;
    is("@s", 'gn_module_v1 gn_module_v1_check_conf',
       "GN_MODULE_CHECK ($lang): the two entry points, C names");

    $t->write_file("mod_checked/$lang.conf", <<"EOF_CONF");
load_module $dir/mod_checked/$lang.so;
server {
    listen 127.0.0.1:1;
    location /c {
        hello_times 11;
        handler hello_checked;
    }
}
EOF_CONF
    my ($trc, $tout, $terr) = $t->gannet('-t', '-p', "$dir/", '-c',
                                         "$dir/mod_checked/$lang.conf");
    is($trc, 1, "GN_MODULE_CHECK ($lang): gannet -t refuses");
    like($terr, qr/"hello_times" directive is at most 10 in (?#
                   )\Q$dir\E\/mod_checked\/$lang\.conf:5$/m,
         "GN_MODULE_CHECK ($lang): the module's reason, at the line")
        or diag($terr);
  }
}

# ---- a module that needs an older minor (GN_MODULE_V1_NEEDS) ---------------

my $needs0 = <<'EOF_C';
#include <gannet/module.h>

static int hello(const gn_api_t *api, gn_request_t *r)
{
    if (GN_API_HAS(api, read_file)) {
        api->set_header(r, "X-Read-File", "yes");
    }
    return api->write(r, "needs 1.0\n", 10);
}

static const gn_module_t  hello_module = {
    GN_MODULE_V1_NEEDS(NEEDS), "hello_needs", "1.0", NULL, 0,
    NULL, NULL, hello, NULL, NULL, NULL, NULL
};

GN_MODULE_EXPORT(hello_module)
EOF_C

for my $case ([ 'c', '0', 0 ], [ 'cc', '0', 0 ], [ 'c', 'GN_ABI_MINOR', 0 ],
              [ 'c', 'GN_ABI_MINOR + 1', 1 ], [ 'cc', 'GN_ABI_MINOR + 1', 1 ])
{
    my ($lang, $needs, $fails) = @$case;
    my $cc = $lang eq 'c' ? 'cc' : 'c++';
  SKIP: {
    skip("$cc not found", 1) unless defined GnTest::_which($cc);
    $t->write_file("mod_needs/mod_needs.$lang",
                   $needs0 =~ s/\bNEEDS\b/$needs/r);
    @cmd = ($cc, $lang eq 'c' ? ('-std=c99') : (), '-Wall', '-Wextra',
            '-Werror', '-shared', '-fPIC', split(' ', $cflags),
            "$dir/mod_needs/mod_needs.$lang", '-o', "$dir/mod_needs/m.so");
    ($rc, $out, $err) = $t->run_client(\@cmd, timeout => 60);
    if ($fails) {
        isnt($rc, 0, "GN_MODULE_V1_NEEDS($needs) ($lang): does not compile");
    } else {
        is($rc, 0, "GN_MODULE_V1_NEEDS($needs) ($lang): builds, -Wall "
                   . "-Wextra -Werror") or diag($err);
    }
  }
}

# ---- the shipped Makefile and gannet-module-test ------------------------

SKIP: {
    skip('make not found', 14) unless defined GnTest::_which('make');
    my (undef, $mtest) = pkgconfig('--variable=module_test', 'gannet');
    skip("no $mtest (not built)", 14) unless -x $mtest;

    my $mk = "$dir/mk";
    $t->write_file('mk/mod_hello.c', $hello);
    $t->write_file('mk/Makefile',
                   $t->read_file("$src/doc/module-Makefile.example"));
    mkdir("$dir/tmp");
    local $ENV{PKG_CONFIG_PATH} = $pcdir;
    local $ENV{PKG_CONFIG_LIBDIR} = $pcdir;
    local $ENV{GANNET_BIN} = $t->bin;
    local $ENV{TMPDIR} = "$dir/tmp";

    ($rc, $out, $err) = $t->run_client(['make', '-C', $mk], timeout => 60);
    is($rc, 0, 'module-Makefile.example: make') or diag($out, $err);
    ok(-f "$mk/mod_hello.so", '... builds mod_hello.so');
    my ($nrc, $syms) = $t->run_client(['nm', '-D', '--defined-only',
                                       "$mk/mod_hello.so"]);
    my @s = sort map { (split ' ')[-1] } grep { /\S/ } split /\n/, $syms;
    is("@s", 'gn_module_v1', '... exporting only gn_module_v1');

    ($rc, $out, $err) = $t->run_client(['make', '-C', $mk, 'install',
                                        "DESTDIR=$dir/dest"], timeout => 30);
    is($rc, 0, 'make install DESTDIR=...') or diag($out, $err);
    ok(-f "$dir/dest$moddir/mod_hello.so", "... into $moddir");

    ($rc, $out, $err) = $t->run_client(['make', '-C', $mk, 'test',
                                        'TEST_PATHS=/ /x?a=1'],
                                       timeout => 60);
    is($rc, 0, 'make test: gannet-module-test exits 0') or diag($out, $err);
    my @answers = $out =~ /^HTTP\/1\.1 200 .*?\r\n\r\nhello\n/msg;
    is(scalar @answers, 2, 'make test: both paths answered "hello"')
        or diag($out);
    like($out, qr{^### GET /x\?a=1$}m, 'make test: each request named');
    like($err, qr/\[notice\].*started/, 'the error log goes to stderr');

    # with a configuration, over HTTP/2
  SKIP: {
        skip('built without HTTP/2', 2)
            unless ($ENV{GN_HTTP2} // '') eq 'yes';
        ($rc, $out, $err) = $t->run_client([$mtest, '-2', '-m',
            "$mk/mod_hello.so", '-e', 'location /hi { handler hello; }',
            '/hi'], timeout => 60);
        is($rc, 0, 'gannet-module-test -2 -e ...') or diag($out, $err);
        like($out, qr{^HTTP/2 200.*\r\n\r\nhello\n}ms, '... over HTTP/2');
    }

    # a configuration the server refuses: exit 3, the reason printed
    ($rc, $out, $err) = $t->run_client([$mtest, '-m', "$mk/mod_hello.so",
        '-e', 'location / { handler nosuch; }', '/'], timeout => 60);
    is($rc, 3, 'a refused configuration: exit 3');
    like($err, qr/unknown handler "nosuch"/, '... with the reason');

    opendir(my $dh, "$dir/tmp");
    my @left = grep { !/^\.\.?$/ } readdir($dh);
    is("@left", '', 'gannet-module-test left no temporary directory');
}

# ---- loaded and serving ----------------------------------------------------

$t->write_conf(<<'EOF_CONF');
children 1;
user %%USER%%;
load_module mod_hello/mod_hello.so;

server {
    listen 127.0.0.1:%%PORT_0%%;
    location /hello {
        handler hello;
    }
}
EOF_CONF

{
    my ($trc, $tout, $terr) = $t->gannet('-t', '-p', "$dir/", '-c',
                                         $t->conf_path);
    is($trc, 0, 'gannet -t with the module (path relative to the prefix)')
        or diag($terr);
}

$t->run;
my $r = $t->http_get('/hello');
is($r->{status}, 200, 'GET /hello: 200');
is($r->{body}, "hello\n", 'GET /hello: "hello"');
is($r->{headers}{'content-type'}, 'text/plain', 'its Content-Type');

$t->done;
