#!/usr/bin/env bash
#
# bench/farm.sh - TLS 1.2 session-ID resumption across a farm of gannet
# instances through memcached (tls_session_memcached, issue 21): what a
# resumption through memcached costs the server against one from its own
# shared memory, and what the memcached lookup of an unknown session id
# adds to a full handshake.
#
# One memcached (/usr/bin/memcached, -U 0, a free loopback port) and four
# gannet instances, each its own master with one child, TLS 1.2 only,
# tickets off, the same ECDSA P-256 certificate (t/mkcerts.sh):
#   A   tls_session_memcached (CPU 1): makes the sessions B resumes
#   B   tls_session_memcached (CPU 0): the measured server
#   B0  no memcached (CPU 0): the measured server without the tier
#   C   no memcached (CPU 1): makes a session no other instance knows
# The client bench/tlsfarm.c (GnuTLS, built here with gcc) runs on CPU 1,
# as do memcached, A and C.  Every connection is a TLS 1.2 handshake, one
# "GET / HTTP/1.0" and the server's close.  Tests (interleaved: round 1
# runs every test, then round 2 ...), each for S seconds:
#   cross      loop { full handshake on A; its session resumed on B }:
#              on B a shared-memory miss and a memcached hit; the B
#              connections are the measured ones
#   reuse      one full handshake on B, then its session resumed on B
#              again and again: shared-memory hits, no memcached
#   unk-memc   C's session offered to B again and again: a shared-memory
#              miss, a memcached miss, then a full handshake
#   unk-plain  the same against B0: a shared-memory miss, a full handshake
#   reuse-paced  a control, no target: reuse, but each B connection
#              follows a full handshake on A, so that B's connections come
#              as seldom as in cross (and B idles between them, as in
#              cross): cross / reuse-paced is the memcached tier's own
#              cost, cross / reuse adds the pacing's
# Around each run the measured server's CPU time (utime+stime from
# /proc/PID/stat, master and child) is read; CPU per connection = delta
# CPU / measured connections.  B's (B0's) status JSON is read before and
# after each run, outside the CPU window: the deltas of its
# tls_session_memcached and tls_session_cache counters and of its TLS
# handshake counts prove which path each test took.  Reported: medians,
# the resumed share of cross (target >= 99 %), cross / reuse (target:
# within 15 %) and unk-memc / unk-plain (target: within 5 %).
#
# Each round also measures the floor: bench/memcrtt.c, on CPU 0 against
# the same memcached, makes bare lookups (one at a time, then four to a
# send) and reports its own CPU a lookup; the summary says what ratio
# that floor alone allows, the least any implementation could reach on
# this machine.
#
# Saturated runs (--clients, --count): the client's processes keep
# several connections to B in flight, so that B is busy rather than idle
# between connections (the sequential runs above pay one sleep and
# wake-up of B's child a connection, and cross one more, for memcached's
# answer): what a loaded farm member spends.  cross then is a pool run:
# the sessions are made on A first (setup, while B idles), and the
# measured part offers each to B once, back to back.  reuse-paced is
# sequential by nature and is left out of them.
#
# Usage: bench/farm.sh [--rounds N] [--duration S] [--gannet PATH]
#                      [--clients N] [--count K] [--tests "T ..."]
#                      [--raw FILE] [--keep]
#   --rounds N     interleaved rounds (default 5; medians are reported)
#   --duration S   seconds per run (default 5)
#   --clients N    client processes, N connections in flight (default 1)
#   --count K      K measured connections a run instead of --duration
#                  (cross: K sessions made on A, then resumed on B)
#   --tests LIST   which tests (default: all five; with --clients > 1 or
#                  --count, all but reuse-paced)
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --raw FILE     also write the raw per-run results (TSV) to FILE
#   --keep         keep the temporary directory (configs, error logs)
#
# Needs: memcached (1.6 or later), gcc and the GnuTLS headers, taskset,
# curl, perl (JSON::PP), certtool (for t/mkcerts.sh); mod_status.so
# (GANNET_MOD_STATUS, default modules/.libs/mod_status.so of this tree).
# About 2.5 minutes with the defaults.

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rounds=5
duration=5
gannet_bin="$here/../core/gannet"
raw_out=""
mod_status=${GANNET_MOD_STATUS:-$here/../modules/.libs/mod_status.so}
memcached_bin=${MEMCACHED:-/usr/bin/memcached}
tests=""
clients=1
count=0

parse_options "--rounds=rounds --duration=duration --gannet=gannet_bin
               --clients=clients --count=count --tests=tests
               --raw=raw_out --keep=keep:1" "$@"

if [ -z "$tests" ]; then
    tests="cross reuse unk-memc unk-plain"
    [ "$clients" = 1 ] && [ "$count" = 0 ] && tests="$tests reuse-paced"
fi
# the client's options: -c, and -n COUNT for the measured runs
load_opts=(-c "$clients")
[ "$count" != 0 ] && load_opts+=(-n "$count")

require_tools taskset curl perl getconf gcc
require_two_cpus client
[ -x "$gannet_bin" ] || { echo "$me: $gannet_bin not found" >&2; exit 1; }
[ -x "$memcached_bin" ] || { echo "$me: $memcached_bin not found" >&2; exit 1; }
[ -f "$mod_status" ] || { echo "$me: $mod_status not found" \
    "(build the tree, or set GANNET_MOD_STATUS)" >&2; exit 1; }
perl -MJSON::PP -e 1 2>/dev/null \
    || { echo "$me: perl's JSON::PP not found" >&2; exit 1; }

bench_workdir /tmp/gnfarm.XXXXXX
bench_docroot
certs="$work/certs"

# port[INSTANCE] (A B B0 C memc); pid[INSTANCE]
declare -A port

now()
{
    date +%s.%N
}

sh "$here/../t/mkcerts.sh" "$certs" || exit 1
printf 'ok\n' >"$doc/index.html"
chmod 644 "$doc"/*

# The client (GnuTLS), and the floor: one memcached lookup and nothing
# else; gcc into $work
build_c tlsfarm -lgnutls
build_c memcrtt

# --- memcached ----------------------------------------------------------------

# memc_cmd COMMAND: COMMAND to memcached, its answer up to END on stdout
memc_cmd()
{
    perl -MIO::Socket::INET -e '
        my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1",
                                      PeerPort => $ARGV[0], Timeout => 2)
            or exit 1;
        print $s "$ARGV[1]\r\n";
        while (<$s>) { last if /^(END|ERROR)/; print; last if /^VERSION/; }' \
        "${port[memc]}" "$1"
}

# memc_stats: "get_hits N get_misses N cmd_set N curr_items N evictions N"
memc_stats()
{
    memc_cmd stats | perl -ne '
        $v{$1} = $2 if /^STAT (\S+) (\d+)/;
        END { print join(" ", map { "$_ $v{$_}" } qw(cmd_get get_hits
              get_misses cmd_set curr_items evictions)), "\n" }'
}

port[memc]=$(free_port)
memc_args=(-l 127.0.0.1 -p "${port[memc]}" -U 0 -m 256 -t 1 -c 1024)
[ "$(id -u)" = 0 ] && memc_args+=(-u nobody)
spawn_server memc 1 "$work/memcached.out" "$memcached_bin" "${memc_args[@]}"
for _ in $(seq 1 50); do
    memc_cmd version >/dev/null 2>&1 && break
    sleep 0.1
done
if ! memc_cmd version 2>/dev/null | grep -q '^VERSION'; then
    echo "$me: memcached does not answer on 127.0.0.1:${port[memc]}" >&2
    cat "$work/memcached.out" >&2
    exit 1
fi

# --- gannet instances -----------------------------------------------------

# conf_gannet INSTANCE MEMCACHED(0|1)
conf_gannet()
{
    {
        echo "load_module $mod_status;"
        cat <<EOF
tls_protocols TLSv1.2;
tls_session_tickets off;
EOF
        [ "$2" = 1 ] \
            && echo "tls_session_memcached 127.0.0.1:${port[memc]};"
        cat <<EOF

server {
    listen 127.0.0.1:${port[$1]} tls backlog=4096;
    tls_certificate $certs/localhost-ec.pem;
    tls_certificate_key $certs/localhost-ec.key;
    root $doc;
    access_log off;
    default_type text/plain;
    location = /status {
        handler status;
    }
}
EOF
    } | gannet_conf "$work/gannet-$1" 1 1000
}

# start INSTANCE CPU MEMCACHED(0|1)
start()
{
    local i=$1 cmd
    port[$i]=$(free_port)
    cmd=$(conf_gannet "$i" "$3")
    # shellcheck disable=SC2086
    spawn_server "$i" "$2" "$work/gannet-$i/out" $cmd
    if ! wait_url "https://127.0.0.1:${port[$i]}/" -k --tls-max 1.2 \
       || ! curl -s -k --tls-max 1.2 "https://127.0.0.1:${port[$i]}/" \
            | grep -q '^ok$'
    then
        echo "$me: gannet $i does not serve / over TLS" >&2
        cat "$work/gannet-$i/out" "$work/gannet-$i/logs/error.log" \
            2>/dev/null | tail -n 20 >&2
        exit 1
    fi
    echo "started gannet $i: pid ${pid[$i]}, $(tree_pids "${pid[$i]}" \
        | wc -l) processes, port ${port[$i]}, CPU $2," \
        "memcached $([ "$3" = 1 ] && echo on || echo off)" >&2
}

start A 1 1
start B 0 1
start B0 0 0
start C 1 0

# status INSTANCE: the counters of its status JSON, one line:
# "lookups hits misses timeouts skipped stores errors shm_hits shm_misses
#  full resumed failed" (memcached ones 0 when it has no tier).  curl
# offers no session id (TLS 1.2 at most), so it causes no lookup; its
# handshake is one full.
status()
{
    curl -s -k --tls-max 1.2 \
        "https://127.0.0.1:${port[$1]}/status?format=json" | perl -MJSON::PP -e '
        local $/; my $j = eval { decode_json(<STDIN>) } or do {
            print "- - - - - - - - - - - -\n"; exit };
        my $m = $j->{tls_session_memcached} || {};
        my $e = $m->{errors} || {};
        my $c = $j->{tls_session_cache} || {};
        my $t = ($j->{totals} || {})->{tls} || {};
        print join(" ", map { $_ // 0 } $m->{lookups}, $m->{hits},
                   $m->{misses}, $m->{timeouts}, $m->{skipped}, $m->{stores},
                   ($e->{connect} // 0) + ($e->{protocol} // 0)
                   + ($e->{stall} // 0), $c->{hits}, $c->{misses},
                   $t->{full}, $t->{resumed}, $t->{failed}), "\n"'
}

# memc_json INSTANCE: its status JSON's tls_session_memcached object
memc_json()
{
    curl -s -k --tls-max 1.2 \
        "https://127.0.0.1:${port[$1]}/status?format=json" | perl -MJSON::PP -e '
        local $/; my $j = eval { decode_json(<STDIN>) } or exit;
        print JSON::PP->new->canonical->encode(
            $j->{tls_session_memcached} // "absent"), "\n"'
}

# tree_ctxsw ROOT: "VOLUNTARY INVOLUNTARY" context switches summed over
# the tree rooted at ROOT and its threads (/proc/PID/task/TID/status)
tree_ctxsw()
{
    # shellcheck disable=SC2046
    perl -e '
        my ($v, $i) = (0, 0);
        for my $p (@ARGV) {
            for my $t (glob "/proc/$p/task/*/status") {
                open(my $fh, "<", $t) or next;
                while (<$fh>) {
                    $v += $1 if /^voluntary_ctxt_switches:\s+(\d+)/;
                    $i += $1 if /^nonvoluntary_ctxt_switches:\s+(\d+)/;
                }
            }
        }
        print "$v $i\n";' $(tree_pids "$1")
}

# --- one run --------------------------------------------------------------

# test_spec TEST: "SERVER CLIENT_ARGS..."
test_spec()
{
    case "$1" in
    cross)     echo "B cross ${port[A]} ${port[B]}" ;;
    reuse)     echo "B reuse ${port[B]}" ;;
    unk-memc)  echo "B unknown ${port[C]} ${port[B]}" ;;
    unk-plain) echo "B0 unknown ${port[C]} ${port[B0]}" ;;
    reuse-paced) echo "B paced ${port[A]} ${port[B]}" ;;
    *)         return 1 ;;
    esac
}

# delta "A1 A2 ..." "B1 B2 ...": "B1-A1 B2-A2 ..." ("-" when unknown)
delta()
{
    perl -e 'my @a = split " ", $ARGV[0]; my @b = split " ", $ARGV[1];
             print join(" ", map { $a[$_] =~ /^\d+$/ && $b[$_] =~ /^\d+$/
                                   ? $b[$_] - $a[$_] : "-" } 0 .. $#b), "\n"' \
        -- "$1" "$2"
}

# run_one ROUND TEST [DURATION] [quiet]
run_one()
{
    local r=$1 t=$2 d=${3:-$duration} srv args root
    local s0 s1 t0 t1 n0 n1 c0 c1 x0 x1 out conns res full fail secs other dl
    read -r srv args <<<"$(test_spec "$t")"
    root=${pid[$srv]}
    if ! kill -0 "$root" 2>/dev/null; then
        echo "$me: gannet $srv is gone" >&2
        return
    fi
    s0=$(status "$srv")
    x0=$(tree_ctxsw "$root")
    t0=$(tree_ticks "$root")
    n0=$(tree_cpu_ns "$root")
    c0=$(cpu0_busy)
    # shellcheck disable=SC2086
    out=$(taskset -c 1 "$work/tlsfarm" "${load_opts[@]}" "$d" $args 2>&1)
    c1=$(cpu0_busy)
    n1=$(tree_cpu_ns "$root")
    t1=$(tree_ticks "$root")
    x1=$(tree_ctxsw "$root")
    s1=$(status "$srv")
    [ "${4:-}" = quiet ] && return
    read -r conns res full fail secs <<<"$(perl -ne '
        print "$1 $2 $3 $4 $5\n" if /^connections (\d+) resumed (\d+) full (\d+) failed (\d+) .* seconds (\S+)/' \
        <<<"$out")"
    if [ -z "${conns:-}" ] || [ "$conns" = 0 ]; then
        echo "$me: $t failed:" >&2
        tail -n 5 <<<"$out" >&2
        return
    fi
    other=$(cpu0_other "$c0" "$c1" "$((t1 - t0))")
    dl=$(delta "$s0" "$s1")
    # round test server conns resumed full failed seconds ticks cpu_ns
    # cpu0_other voluntary_cs involuntary_cs, then the status deltas:
    # lookups hits misses timeouts skipped stores errors shm_hits
    # shm_misses tls_full tls_resumed tls_failed
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" \
        "$t" "$srv" "$conns" "$res" "$full" "$fail" "$secs" "$((t1 - t0))" \
        "$((n1 - n0))" "$other" "$(delta "$x0" "$x1" | tr ' ' '\t')" \
        "$(tr ' ' '\t' <<<"$dl")" >>"$results"
    printf '  round %s %-11s %-2s %6d conns %6.0f /s %7.1f us CPU/conn  resumed %s full %s failed %s  cpu0 other %s%%\n' \
        "$r" "$t" "$srv" "$conns" \
        "$(perl -e 'printf "%.1f", $ARGV[0] / $ARGV[1]' -- "$conns" "$secs")" \
        "$(ticks_us "$((t1 - t0))" "$conns" 2)" "$res" "$full" "$fail" \
        "$other" >&2
    # shellcheck disable=SC2086
    printf '           status delta: memcached lookups %s hits %s misses %s timeouts %s skipped %s stores %s errors %s; shm hits %s misses %s; tls full %s resumed %s failed %s\n' \
        $dl >&2
}

# --- main -------------------------------------------------------------------

echo "checking the paths with one connection each:" >&2
ok=1
for t in $tests; do
    read -r srv args <<<"$(test_spec "$t")"
    # shellcheck disable=SC2086
    out=$(taskset -c 1 "$work/tlsfarm" 0.001 $args 2>&1)
    echo "  $t on $srv: $out" >&2
    case "$t" in
    unk-*) grep -qE 'resumed 0 full [1-9][0-9]* failed 0 ' <<<"$out" \
               || ok=0 ;;
    *)     grep -qE 'resumed [1-9][0-9]* full 0 failed 0 ' <<<"$out" \
               || ok=0 ;;
    esac
done
[ "$ok" = 1 ] || echo "$me: WARNING: a path check failed" >&2

echo "warming up (1 s per test)" >&2
main_opts=("${load_opts[@]}")
load_opts=(-c "$clients")               # 1 s each, whatever --count says
for t in $tests; do
    run_one 0 "$t" 1 quiet
done
load_opts=("${main_opts[@]}")

memc_before=$(memc_stats)
json_before=$(memc_json B)

floors="$work/floors.tsv"
: >"$floors"
for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    for t in $tests; do
        run_one "$r" "$t"
    done
    # the floor of a lookup here, in the same round: bench/memcrtt.c on
    # CPU 0 against the same memcached, one lookup at a time (as the
    # sequential runs), and four to a send
    for m in "seq" "batch 4"; do
        # shellcheck disable=SC2086
        out=$("$work/memcrtt" "${port[memc]}" $m 2>&1)
        f=$(perl -ne 'print $1 if /CPU (\S+) us a lookup/' <<<"$out")
        if [ -n "$f" ]; then
            printf '%s\t%s\t%s\n' "$r" "${m% *}" "$f" >>"$floors"
            echo "  round $r floor ($m): $out" >&2
        else
            echo "$me: memcrtt $m failed: $out" >&2
        fi
    done
done

json_after=$(memc_json B)
memc_after=$(memc_stats)

[ -n "$raw_out" ] && cp "$results" "$raw_out"

echo
echo "gannet: $("$gannet_bin" -V 2>&1 | tr '\n' ' ')"
echo "memcached: $("$memcached_bin" -V 2>&1); client: bench/tlsfarm.c," \
     "GnuTLS $(perl -ne 'print $1 if /define GNUTLS_VERSION "(.*)"/' \
     /usr/include/gnutls/gnutls.h)"
if [ "$count" != 0 ]; then
    echo "client: $clients processes, $count measured connections a run" \
         "(cross: $count sessions made on A first, each resumed on B once)"
else
    echo "client: $clients process(es), ${duration} s a run"
fi
echo "$rounds interleaved rounds, medians; B and B0 on CPU 0;" \
     "client, memcached, A and C on CPU 1; CPU = server utime+stime" \
     "(master + child) / measured connections"
echo
echo "B's tls_session_memcached before the rounds (after the checks and"
echo "the warm-up):"
echo "    $json_before"
echo "after:"
echo "    $json_after"
echo "memcached's own counters, before: $memc_before"
echo "                          after:  $memc_after"

perl -e "$bench_pl"'
    my ($file, $tck, $floor_file) = @ARGV; my (%d, @tests, %seen, %round);
    my %name = (
        "cross"     => "resumed on B through memcached (session made on A)",
        "reuse"     => "resumed on B from its shared memory",
        "reuse-paced" => "control: as reuse, paced by a full handshake on A",
        "unk-memc"  => "unknown id on B: memcached miss, full handshake",
        "unk-plain" => "unknown id on B0 (no memcached): full handshake");
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp;
        my ($r, $t, $s, $n, $res, $full, $fail, $secs, $ticks, $ns, $o,
            $vcs, $ics, @st) = split /\t/;
        push @tests, $t unless $seen{$t}++;
        my $x = $d{$t} ||= { srv => $s };
        my $cpu = $ticks / $tck / $n * 1e6;
        push @{$x->{rate}}, $n / $secs;
        push @{$x->{cpu}}, $cpu;
        push @{$x->{ns}}, $ns / 1e3 / $n;
        push @{$x->{other}}, $o;
        push @{$x->{cs}}, ($vcs + $ics) / $n;
        $round{$r}{$t} = $cpu;
        $x->{n} += $n; $x->{res} += $res; $x->{full} += $full;
        $x->{fail} += $fail;
        for my $i (0 .. $#st) { $x->{st}[$i] += $st[$i] if $st[$i] ne "-" }
    }
    print "\n| test | server | conns/s | CPU us/conn | (schedstat) | per round | ctx sw/conn | conns | resumed / full / failed | CPU0 other |\n";
    print "|------|--------|------:|------:|------:|------|------:|------:|------|------|\n";
    for my $t (@tests) {
        my $x = $d{$t};
        printf "| %s: %s | %s | %.0f | %.1f | %.1f | %s | %.2f | %d | %d / %d / %d | %s%% |\n",
            $t, $name{$t} || $t, $x->{srv}, med(@{$x->{rate}}),
            med(@{$x->{cpu}}), med(@{$x->{ns}}),
            join(" ", map { sprintf "%.1f", $_ } @{$x->{cpu}}),
            med(@{$x->{cs}}), $x->{n},
            $x->{res}, $x->{full}, $x->{fail}, join("/", @{$x->{other}});
    }
    print "\nStatus JSON deltas, summed over the rounds (each run: B or B0,",
          " read before and after, outside the CPU window; the tls full",
          " count includes the one curl handshake of each reading):\n\n";
    print "| test | memcached lookups | hits | misses | timeouts | skipped | stores | errors | shm hits | shm misses | tls full | tls resumed | tls failed |\n";
    print "|------|------:|------:|------:|------:|------:|------:|------:|------:|------:|------:|------:|------:|\n";
    for my $t (@tests) {
        print "| $t | ", join(" | ", map { $_ // 0 } @{$d{$t}{st}}[0 .. 11]),
              " |\n";
    }
    print "\n";
    my $c = $d{cross};
    if ($c) {
        my $share = $c->{n} ? 100 * $c->{res} / $c->{n} : 0;
        printf "cross: resumed share %.2f %% (%d of %d): target >= 99 %%: %s\n",
            $share, $c->{res}, $c->{n}, $share >= 99 ? "met" : "NOT MET";
    }
    my @targets = (["cross", "reuse", 0.15], ["unk-memc", "unk-plain", 0.05]);
    for my $p (@targets,
               ["cross", "reuse-paced", 0], ["reuse-paced", "reuse", 0]) {
        my ($a, $b, $tol) = @$p;
        next unless $d{$a} && $d{$b};
        my $rm = med(@{$d{$a}{cpu}}) / med(@{$d{$b}{cpu}});
        my @pr = map { $round{$_}{$a} / $round{$_}{$b} }
                 grep { $round{$_}{$a} && $round{$_}{$b} } sort keys %round;
        my $mr = med(@pr);
        my $rs = med(@{$d{$a}{ns}}) / med(@{$d{$b}{ns}});
        printf "%s / %s CPU per connection: %.3f (ratio of medians), %.3f (median of per-round ratios: %s); by schedstat %.3f%s\n",
            $a, $b, $rm, $mr, join(" ", map { sprintf "%.3f", $_ } @pr),
            $rs,
            !$tol ? " (control, no target)"
            : sprintf(": target within %d %%: %s", $tol * 100,
                      abs($rm - 1) <= $tol ? "met" : "NOT MET");
    }
    if (open my $ff, "<", $floor_file) {
        my %f;
        while (<$ff>) { chomp; my ($r, $m, $us) = split /\t/; push @{$f{$m}}, $us }
        print "\nThe floor: one memcached lookup and nothing else (bench/memcrtt.c",
              " on CPU 0, the same memcached; median of the rounds):",
              " the least any implementation pays a lookup here\n";
        for my $m (sort keys %f) {
            my $us = med(@{$f{$m}});
            printf "  %s: %.2f us CPU a lookup (%s)\n", $m eq "seq"
                ? "one at a time" : "four to a send", $us,
                join(" ", map { sprintf "%.2f", $_ } @{$f{$m}});
            for my $p (@targets) {
                my ($a, $b, $tol) = @$p;
                next unless $d{$a} && $d{$b};
                my $base = med(@{$d{$b}{ns}});
                printf "    %s / %s can be no lower than (%.1f + %.2f) / %.1f = %.3f (target %.2f)\n",
                    $a, $b, $base, $us, $base, ($base + $us) / $base, 1 + $tol;
            }
        }
    }
' "$results" "$clk_tck" "$floors"
