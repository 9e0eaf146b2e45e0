#!/usr/bin/env bash
#
# bench/module.sh - server CPU per request of a trivial module handler
# answering "hello\n" against the same 6 bytes served as a static file
# (issue 5, item 7: the module may cost at most 10% more).
#
# One gannet, one child, pinned to CPU 0; wrk on CPU 1. The module is the
# hello module of the <gannet/module.h> header comment, compiled here
# with the public headers exactly as a module writer does; it has no
# filters. Both URIs are served by the same server, so everything but the
# content path is the same:
#
#   /hello            handler hello;     (module: set_header + write)
#   /static/hello     the file "hello\n" (static: open/fstat/cached fd)
#
# For each round, each load, each target (interleaved: round 1 runs every
# load on both targets, then round 2 ...) we record wrk's requests and the
# server's CPU time over the run (master and child: utime+stime from
# /proc/PID/stat in clock ticks, or the nanosecond run time of
# /proc/PID/schedstat when the kernel has it), and print medians of CPU
# per request and the module/static ratio, with a verdict against the
# limit.
#
# Usage: bench/module.sh [--rounds N] [--duration S] [--loads "LIST"]
#                        [--limit PCT] [--gannet PATH] [--api DIR]
#                        [--raw FILE] [--keep] [--check]
#   --rounds N     interleaved rounds (default 5; medians are reported)
#   --duration S   seconds per wrk run (default 5)
#   --loads L      CONNS[:close] ..., default "50 1:close"; a load of
#                  50 keep-alive connections measures the request path,
#                  :close adds a connection per request
#   --limit PCT    allowed extra CPU per request of the module (default 10)
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --api DIR      directory holding gannet/module.h (default: api/ next to
#                  this script; or $(pkg-config --cflags gannet) if set to
#                  "pkg-config")
#   --raw FILE     also write the raw per-run results (TSV) to FILE
#   --keep         keep the temporary directory (config, error log)
#   --check        exit 1 when a load exceeds the limit
#
# Needs: wrk, taskset, curl, perl, cc; 2 CPUs. Do not run it while other
# benchmarks run: they share the CPUs.

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rounds=5
duration=5
loads="50 1:close"
limit=10
gannet_bin="$here/../core/gannet"
api_dir="$here/../api"
raw_out=""
keep=0
check=0

parse_options "--rounds=rounds --duration=duration --loads=loads
               --limit=limit --gannet=gannet_bin --api=api_dir --raw=raw_out
               --keep=keep:1 --check=check:1" "$@"

require_tools wrk taskset curl perl getconf cc
require_two_cpus wrk
[ -x "$gannet_bin" ] || { echo "module.sh: no $gannet_bin" >&2; exit 1; }

raise_nofile 20000
bench_workdir /tmp/gnbench-mod.XXXXXX
stop_signal=QUIT                # graceful: the child finishes and reports

# --- the module ---------------------------------------------------------------

if [ "$api_dir" = pkg-config ]; then
    cflags=$(pkg-config --cflags gannet) \
        || { echo "module.sh: pkg-config gannet failed" >&2; exit 1; }
else
    cflags="-I$api_dir -fvisibility=hidden -fPIC"
fi

cat >"$work/mod_hello.c" <<'EOF'
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
EOF
# shellcheck disable=SC2086
cc -O2 -shared -fPIC $cflags "$work/mod_hello.c" -o "$work/mod_hello.so" \
    || { echo "module.sh: cannot build the hello module" >&2; exit 1; }

# --- the server -----------------------------------------------------------------

port=$(free_port)
mkdir -p "$work/logs" "$work/html/static"
printf 'hello\n' >"$work/html/static/hello"
cmd=$(gannet_conf "$work" 1 20000 <<EOF
load_module $work/mod_hello.so;

server {
    listen 127.0.0.1:$port backlog=4096;
    root $work/html;
    access_log off;
    keepalive_requests 0;
    keepalive_timeout 300s;
    default_type text/plain;

    location /hello {
        handler hello;
    }
}
EOF
)

# shellcheck disable=SC2086
spawn_server gannet 0 "$work/gannet.out" $cmd
server_pid=${pid[gannet]}
wait_url "http://127.0.0.1:$port/hello"
for u in /hello /static/hello; do
    b=$(curl -s --max-time 5 "http://127.0.0.1:$port$u")
    if [ "$b" != hello ]; then
        echo "module.sh: $u does not answer \"hello\"; output:" >&2
        cat "$work/gannet.out" "$work/logs/error.log" >&2 2>/dev/null
        exit 1
    fi
done
echo "started gannet: pid $server_pid, port $port," \
     "$(tree_pids "$server_pid" | wc -l) process(es)" >&2

declare -A url=([module]="/hello" [static]="/static/hello")

# run_one ROUND LOAD TARGET
run_one()
{
    local r=$1 load=$2 what=$3 conns close c0 c1 out
    IFS=: read -r conns close <<<"$load"
    c0=$(tree_cpu_ns "$server_pid")
    out=$(run_wrk "$conns" "$duration" "$close" \
              "http://127.0.0.1:$port${url[$what]}")
    c1=$(tree_cpu_ns "$server_pid")
    echo "$out" >>"$work/wrk.log"
    kill -0 "$server_pid" 2>/dev/null \
        || { echo "module.sh: gannet exited" >&2; exit 1; }
    wrk_parse "$out"
    if [ -z "$wrk_rps" ] || [ -z "$wrk_reqs" ] || [ "$wrk_reqs" = 0 ]; then
        echo "module.sh: wrk failed ($load $what):" >&2
        echo "$out" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$load" "$what" \
        "$wrk_rps" "$wrk_reqs" "$((c1 - c0))" "$wrk_errors" >>"$results"
    printf '  round %s %-8s %-6s %9.0f req/s %7.2f us CPU/req errors %s\n' \
        "$r" "$load" "$what" "$wrk_rps" \
        "$(perl -e 'printf "%.4f", $ARGV[0] / $ARGV[1] / 1000' -- \
            "$((c1 - c0))" "$wrk_reqs")" "$wrk_errors" >&2
}

# --- main -------------------------------------------------------------------

echo "warming up (1 s per load and target)" >&2
for load in $loads; do
    IFS=: read -r conns close <<<"$load"
    for what in module static; do
        run_wrk "$conns" 1 "$close" \
            "http://127.0.0.1:$port${url[$what]}" >/dev/null
    done
done

for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    for load in $loads; do
        # alternate which target goes first, so that drift (thermal,
        # other load) does not always favour the same one
        if [ $((r % 2)) = 1 ]; then order="module static"
        else order="static module"; fi
        for what in $order; do
            run_one "$r" "$load" "$what"
        done
    done
done

[ -n "$raw_out" ] && cp "$results" "$raw_out"

echo
echo "gannet: $("$gannet_bin" -v 2>&1 | head -n 1)"
echo "wrk -t1 -d${duration}s, $rounds interleaved rounds, medians;" \
     "server (1 child) on CPU 0, wrk on CPU 1;" \
     "CPU = server run time / requests"
perl -e "$bench_pl"'
    my ($file, $limit, $check) = @ARGV; my (%d, @loads, %seen);
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp; my ($r, $l, $w, $rps, $n, $ns, $err) = split /\t/;
        push @loads, $l unless $seen{$l}++;
        push @{$d{$l}{$w}{rps}}, $rps;
        push @{$d{$l}{$w}{cpu}}, $ns / $n / 1000;
        $d{$l}{$w}{err} += $err;
    }
    my ($over, @verdict) = (0);
    print "\n| load | target | req/s | CPU us/req | vs static | errors |\n";
    print "|------|--------|------:|-----------:|----------:|-------:|\n";
    for my $l (@loads) {
        my ($c, $cl) = split /:/, $l;
        my $name = "$c conns" . ($cl ? ", close" : ", keep-alive");
        my $s = med(@{$d{$l}{static}{cpu}});
        for my $w (qw(static module)) {
            my $x = $d{$l}{$w} or next;
            my $cpu = med(@{$x->{cpu}});
            printf "| %s | %s | %.0f | %.3f | %s | %d |\n", $name, $w,
                med(@{$x->{rps}}), $cpu,
                $w eq "static" ? "1.00" : sprintf("%.3f", $s ? $cpu / $s : 0),
                $x->{err};
        }
        my $ratio = $s ? med(@{$d{$l}{module}{cpu}}) / $s : 0;
        my $ok = $ratio <= 1 + $limit / 100;
        $over++ unless $ok;
        push @verdict, sprintf("%s: module/static CPU per request %.3f"
                               . " (limit %.2f): %s", $name, $ratio,
                               1 + $limit / 100, $ok ? "PASS" : "FAIL");
    }
    print "\n", map { "$_\n" } @verdict;
    exit($check && $over ? 1 : 0);
' "$results" "$limit" "$check"
