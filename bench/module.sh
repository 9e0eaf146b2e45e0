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
rounds=5
duration=5
loads="50 1:close"
limit=10
gannet_bin="$here/../core/gannet"
api_dir="$here/../api"
raw_out=""
keep=0
check=0

while [ $# -gt 0 ]; do
    case "$1" in
    --rounds)   rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --loads)    loads=$2; shift 2 ;;
    --limit)    limit=$2; shift 2 ;;
    --gannet)   gannet_bin=$2; shift 2 ;;
    --api)      api_dir=$2; shift 2 ;;
    --raw)      raw_out=$2; shift 2 ;;
    --keep)     keep=1; shift ;;
    --check)    check=1; shift ;;
    -h|--help)  sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *)          echo "module.sh: unknown option $1" >&2; exit 1 ;;
    esac
done

for t in wrk taskset curl perl getconf cc; do
    command -v "$t" >/dev/null || { echo "module.sh: $t not found" >&2; exit 1; }
done
if [ "$(nproc)" -lt 2 ]; then
    echo "module.sh: need 2 CPUs (server on 0, wrk on 1)" >&2
    exit 1
fi
[ -x "$gannet_bin" ] || { echo "module.sh: no $gannet_bin" >&2; exit 1; }

ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
clk_tck=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/gnbench-mod.XXXXXX)
results="$work/results.tsv"
: >"$results"
server_pid=""

# --- helpers ----------------------------------------------------------------

# Every process of the tree rooted at $1, one pid a line.
tree_pids()
{
    perl -e '
        my $root = shift; my %kids;
        for my $f (glob "/proc/[0-9]*/stat") {
            open my $fh, "<", $f or next; my $s = <$fh>; close $fh;
            next unless defined $s;
            my ($p) = $s =~ /^(\d+)/; $s =~ s/^.*\) //s;
            my @f = split / /, $s; push @{$kids{$f[1]}}, $p;
        }
        my @q = ($root); my %seen;
        while (@q) { my $p = shift @q; next if $seen{$p}++;
                     print "$p\n"; push @q, @{$kids{$p} || []}; }
    ' "$1"
}

# CPU time of the tree rooted at $1 in nanoseconds: the sum over its
# processes and their threads of schedstat's run time when available,
# else of utime+stime ticks.
tree_cpu_ns()
{
    perl -e '
        my ($tck, @pids) = @ARGV; my $ns = 0;
        for my $p (@pids) {
            my $done = 0;
            for my $t (glob "/proc/$p/task/*") {
                open(my $fh, "<", "$t/schedstat") or last;
                my ($run) = split / /, scalar <$fh>; close $fh;
                $ns += $run; $done = 1;
            }
            next if $done;
            open(my $fh, "<", "/proc/$p/stat") or next;
            my $s = <$fh>; close $fh; $s =~ s/^.*\) //s;
            my @f = split / /, $s;
            $ns += ($f[11] + $f[12]) * 1e9 / $tck;
        }
        printf "%.0f\n", $ns;
    ' "$clk_tck" $(tree_pids "$1")
}

free_port()
{
    perl -MIO::Socket::INET -e '
        my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
                                      LocalPort => 0, Listen => 1,
                                      ReuseAddr => 1) or die "bind: $!";
        print $s->sockport, "\n";'
}

cleanup()
{
    local p pids
    if [ -n "$server_pid" ]; then
        pids=$(tree_pids "$server_pid")
        kill -QUIT "$server_pid" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.3
        done
        for p in $pids; do
            kill -KILL "$p" 2>/dev/null
        done
        wait 2>/dev/null
    fi
    if [ "$keep" = 1 ]; then
        echo "module.sh: kept $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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
cat >"$work/gannet.conf" <<EOF
children 1;
user root;
pid logs/gannet.pid;
error_log logs/error.log notice;
max_connections 20000;
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

setsid taskset -c 0 "$gannet_bin" -f -p "$work/" -c "$work/gannet.conf" \
    >"$work/gannet.out" 2>&1 </dev/null &
server_pid=$!
for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/hello" && break
    sleep 0.1
done
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
    local r=$1 load=$2 what=$3 conns close c0 c1 out reqs rps err
    IFS=: read -r conns close <<<"$load"
    local hdr=()
    [ "$close" = close ] && hdr=(-H 'Connection: close')
    c0=$(tree_cpu_ns "$server_pid")
    out=$(taskset -c 1 wrk -t1 -c"$conns" -d"${duration}s" "${hdr[@]}" \
              "http://127.0.0.1:$port${url[$what]}" 2>&1)
    c1=$(tree_cpu_ns "$server_pid")
    echo "$out" >>"$work/wrk.log"
    kill -0 "$server_pid" 2>/dev/null \
        || { echo "module.sh: gannet exited" >&2; exit 1; }
    rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
    reqs=$(awk '/ requests in / {print $1}' <<<"$out")
    err=$(perl -ne '
        $e += $1 + $2 + $3 + $4
            if /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/;
        $e += $1 if /Non-2xx or 3xx responses: (\d+)/;
        END { print $e || 0 }' <<<"$out")
    if [ -z "$rps" ] || [ -z "$reqs" ] || [ "$reqs" = 0 ]; then
        echo "module.sh: wrk failed ($load $what):" >&2
        echo "$out" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$load" "$what" "$rps" \
        "$reqs" "$((c1 - c0))" "$err" >>"$results"
    printf '  round %s %-8s %-6s %9.0f req/s %7.2f us CPU/req errors %s\n' \
        "$r" "$load" "$what" "$rps" \
        "$(perl -e 'printf "%.4f", $ARGV[0] / $ARGV[1] / 1000' -- \
            "$((c1 - c0))" "$reqs")" "$err" >&2
}

# --- main -------------------------------------------------------------------

echo "warming up (1 s per load and target)" >&2
for load in $loads; do
    IFS=: read -r conns close <<<"$load"
    for what in module static; do
        hdr=()
        [ "$close" = close ] && hdr=(-H 'Connection: close')
        taskset -c 1 wrk -t1 -c"$conns" -d1s "${hdr[@]}" \
            "http://127.0.0.1:$port${url[$what]}" >/dev/null 2>&1
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
perl -e '
    my ($file, $limit, $check) = @ARGV; my (%d, @loads, %seen);
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp; my ($r, $l, $w, $rps, $n, $ns, $err) = split /\t/;
        push @loads, $l unless $seen{$l}++;
        push @{$d{$l}{$w}{rps}}, $rps;
        push @{$d{$l}{$w}{cpu}}, $ns / $n / 1000;
        $d{$l}{$w}{err} += $err;
    }
    sub med { my @v = sort { $a <=> $b } @_; my $n = @v;
              return 0 unless $n;
              $n % 2 ? $v[$n/2] : ($v[$n/2-1] + $v[$n/2]) / 2 }
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
