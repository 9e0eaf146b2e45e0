#!/usr/bin/perl

# Descriptors (issue 18, item 7). Under a soft limit of 256 descriptors
# the master warns, with the numbers, that a child's max_connections,
# open-file cache, listeners and reserved descriptors exceed it;
# `rlimit_nofile 4096` raises the limit the children inherit (read from
# /proc/PID/limits) and the warning goes away; a reload to a lower
# rlimit_nofile applies it to the new children and warns again.  Only the
# soft limit is lowered, so raising it needs no privilege.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new(timeout => 60);
$t->skip_under_valgrind('valgrind keeps descriptors at the top of the '
                        . 'limit and handles setrlimit itself');
my $why = $t->ulimit_skip;
plan(skip_all => $why) if defined $why;
plan(skip_all => 'no /proc/self/limits') unless -r '/proc/self/limits';

my $hard = `sh -c 'ulimit -Hn'`;
chomp $hard;
plan(skip_all => "hard descriptor limit $hard is below 4096")
    unless $hard eq 'unlimited' || $hard >= 4096;

# the soft limit of a process, from /proc/PID/limits
sub soft_limit
{
    my ($pid) = @_;
    my $l = $t->read_file("/proc/$pid/limits") // '';

    return $l =~ /^Max open files\s+(\d+|unlimited)/m ? $1 : 'none';
}

sub conf
{
    my ($extra) = @_;

    $t->write_conf(<<"EOF");
children 1;
user %%USER%%;
$extra
server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF
}

my $wrap = $t->write_file('soft-256.sh',
                          "#!/bin/sh\nulimit -Sn 256 || exit 1\n"
                          . "exec \"\$\@\"\n");
chmod(0755, $wrap);
my $warn = qr/\[warn\] \d+#-: max_connections 1024 \+ file_cache_entries 1024 /
    . qr/\+ 1 listeners \+ \d+ reserved = \d+ exceed the descriptor limit /
    . qr/256 of a child; raise rlimit_nofile/;
$t->write_file('html/index.html', "hi\n");

# ---- soft limit 256, no rlimit_nofile: the warning --------------------
conf('');
{
    local $ENV{TEST_GN_WRAP} = $wrap;
    $t->run;
}
ok($t->wait_log($warn, 10), 'start: the warning names the numbers');
my @kids = $t->wait_children(1, 10);
is(soft_limit($kids[0] // 0), 256, 'the child has the low limit');
ok($t->stop, 'stops');

# ---- rlimit_nofile 4096 raises it -------------------------------------
unlink($t->{error_log});
conf('rlimit_nofile 4096;');
{
    local $ENV{TEST_GN_WRAP} = $wrap;
    $t->run;
}
@kids = $t->wait_children(1, 10);
is(soft_limit($kids[0] // 0), 4096, 'rlimit_nofile 4096: the child has 4096');
is($t->http_get('/')->{status}, 200, 'and serves');
unlike($t->error_log, qr/exceed the descriptor limit/, 'no warning');

# ---- reload to rlimit_nofile 512: applied to the new children, warned --
my $from = length($t->error_log);
conf('rlimit_nofile 512;');
$t->signal('HUP');
ok($t->wait_log(qr/reload complete/, 10, undef, $from), 'reloaded');
ok($t->wait_log(qr/limit 512 of a child; raise rlimit_nofile/, 0, undef,
                $from), 'reload: the warning with the new limit');
my $new;
for (1 .. 200) {
    ($new) = grep { soft_limit($_) eq '512' } $t->children;
    last if $new;
    select(undef, undef, undef, 0.05);
}
ok($new, 'a child of the new generation has 512');

$t->done;
