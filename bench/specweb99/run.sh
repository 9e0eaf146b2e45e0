#!/usr/bin/env bash
#
# bench/specweb99/run.sh - the SPECweb99-style reference run (issue 7):
# conforming simultaneous connections of gannet over HTTP and HTTPS with
# the full mix, and of gannet and nginx with the static part alone.
#
# Usage: bench/specweb99/run.sh [--min N] [--max N] [--step S] [--rampup S]
#            [--time S] [--rampdown S] [--resume-share P]
#            [--runs "LIST"] [--root DIR] [--dirs D] [--seed S]
#            [--builddir DIR] [--gannet PATH] [--raw FILE] [--keep]
#            [--procs P] [--client-cpus LIST] [--cert ec|rsa]
#            [--server-cpu PCT] [--tls-priority STR]
#            [--dynamic native|isapi]
#   --min, --max   search bounds (default 100 and 2000)
#   --step S       stop the search once fewer than S values of N are left
#                  undecided (default 1: the exact largest N)
#   --rampup, --time, --rampdown  seconds per probe (default 10, 30, 5)
#   --resume-share P  percent of new TLS connections that offer a saved
#                  session (default 50)
#   --runs L       subset of "gannet-http gannet-https gannet-static
#                  nginx-static gannet-static-https nginx-static-https
#                  gannet-isapi-http gannet-isapi-https" (default the
#                  first four); the gannet-isapi-* runs serve the
#                  dynamic operations through mod_isapi and the ISAPI
#                  extension modules/specweb99/isapi_specweb99.so
#                  instead of mod_specweb99 (the gannet server is
#                  restarted when a run needs the other kind)
#   --dynamic native|isapi  what the other gannet-* runs serve the
#                  dynamic operations with (default native:
#                  mod_specweb99). With isapi, ROOT/specweb99.tool is
#                  written (the extension's Reset reads it)
#   --root DIR     use this file set (made by gannet-specweb99 fileset,
#                  upfgen, cadgen) instead of making one in the work dir
#   --dirs D       make at most D directories (about 5 MB each; the file
#                  set for --max N has 25 + 0.656 N; fewer directories
#                  make the load generator use those it finds)
#   --seed S       the load generator's seed (default 1)
#   --builddir DIR the build tree (default: this source tree)
#   --gannet PATH  gannet binary (default BUILDDIR/core/gannet)
#   --raw FILE     also write every probe (TSV) to FILE
#   --keep         keep the temporary directory (configs, logs, outputs)
#   --procs P      load generator worker processes (default 1)
#   --client-cpus LIST  taskset CPU list of the load generator (default
#                  1; the server stays alone on CPU 0): with more cores,
#                  e.g. --procs 3 --client-cpus 1-3
#   --cert ec|rsa  the servers' certificate (default ec: P-256 ECDSA;
#                  rsa: 2048-bit RSA, closer to SPECweb99_SSL's RSA key
#                  exchange, where the server's private-key operation
#                  dominates)
#   --server-cpu PCT  cap each server at PCT percent of CPU 0 (a cgroup
#                  with CFS bandwidth control; root): with the server
#                  capped below what the load generator can drive, the
#                  server, not the client, limits the run, and servers
#                  compared in one run get the same CPU (default: no
#                  cap, the whole of CPU 0)
#   --tls-priority STR  the load generator's GnuTLS priority string for
#                  the HTTPS runs (default its own: TLS 1.3 and 1.2,
#                  X25519 first); e.g. "NORMAL:-VERS-ALL:+VERS-TLS1.2"
#                  for TLS 1.2 clients, whose resumed handshakes
#                  (session tickets) make no key exchange, as
#                  SPECweb99_SSL's SSLv3/TLS 1.0 clients did
#
# The server runs pinned to CPU 0 (gannet: one child; nginx: one
# worker), the load generator (bench/specweb99/gannet-specweb99-load)
# pinned to CPU 1.  Each run is a binary search for the largest N with
# at least 95% conforming connections and at most 1% errors; each probe
# is a full run (ramp-up, measurement, ramp-down).  Over each probe's
# measurement interval the server's CPU time (utime+stime of its process
# tree) and the load generator's are reported by the load generator
# itself (getrusage, /proc with --server-pid), as shares of a CPU and as
# CPU microseconds per operation: a probe where the load generator used
# ~100% of CPU 1 measured the load generator, not the server.
#
# Without modules/.libs/mod_specweb99.so the gannet runs are static-only
# (and say so).  Without mod_cgi the CGI share goes to the module's URL.

# shellcheck disable=SC2154
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=../lib.sh disable=SC2154
. "$top/bench/lib.sh"

min=100
max=2000
step=1
rampup=10
duration=30
rampdown=5
resume=50
runs="gannet-http gannet-https gannet-static nginx-static"
root=""
dirs=""
seed=1
builddir=$top
gannet_bin=""
raw_out=""
procs=1
client_cpus=1
cert=ec
server_cpu=""
tls_priority=""
dynamic=native

parse_options "--min=min --max=max --step=step --rampup=rampup --time=duration
    --rampdown=rampdown --resume-share=resume --runs=runs --root=root
    --dirs=dirs --seed=seed --builddir=builddir --gannet=gannet_bin
    --raw=raw_out --keep=keep:1 --procs=procs --client-cpus=client_cpus
    --cert=cert --server-cpu=server_cpu --tls-priority=tls_priority
    --dynamic=dynamic" "$@"

case "$cert" in
ec|rsa) ;;
*) echo "$me: --cert: ec or rsa, not \"$cert\"" >&2; exit 1 ;;
esac
case "$dynamic" in
native|isapi) ;;
*) echo "$me: --dynamic: native or isapi, not \"$dynamic\"" >&2; exit 1 ;;
esac

# absolute: the configurations name the modules from the work directory
builddir=$(cd "$builddir" && pwd) || exit 1
[ -n "$gannet_bin" ] || gannet_bin=$builddir/core/gannet
loadgen=$builddir/bench/specweb99/gannet-specweb99-load
tool=$builddir/tools/gannet-specweb99
modso=$builddir/modules/.libs/mod_specweb99.so
cgiso=$builddir/modules/.libs/mod_cgi.so
isapiso=$builddir/modules/.libs/mod_isapi.so
extso=$builddir/modules/specweb99/.libs/isapi_specweb99.so

require_tools taskset curl perl
require_two_cpus "the load generator"
for f in "$gannet_bin" "$loadgen"; do
    [ -x "$f" ] || { echo "$me: $f not built" >&2; exit 1; }
done
raise_nofile 200000
bench_workdir /tmp/gnspecweb.XXXXXX
[ -z "$server_cpu" ] || cpu_cap_setup "$server_cpu"
chmod 755 "$work"

full=1
if [ ! -f "$modso" ]; then
    full=0
    echo "$me: $modso not built: the gannet runs are STATIC-ONLY" >&2
fi
case "$dynamic $runs" in
isapi*|*gannet-isapi-*)
    for f in "$isapiso" "$extso"; do
        [ -f "$f" ] || { echo "$me: $f not built (make)" >&2; exit 1; }
    done ;;
esac

# --- the file set -------------------------------------------------------------

if [ -z "$root" ]; then
    [ -x "$tool" ] || { echo "$me: $tool not built" >&2; exit 1; }
    root=$work/root
    mkdir -p "$root"
    d=$(perl -e 'print int(25 + ((400000.0 / 122000.0) * $ARGV[0]) / 5)' \
            "$max")
    [ -n "$dirs" ] && [ "$dirs" -lt "$d" ] && d=$dirs
    echo "$me: making the file set: $d directories (~$((d * 5)) MB)" >&2
    "$tool" fileset -C "$root" -n "$max" -d "$d" >&2 || exit 1
    "$tool" upfgen -C "$root" -n "$max" >&2 || exit 1
    "$tool" cadgen -C "$root" -e $((24 * 3600)) >&2 || exit 1
fi
chmod 755 "$root"

certs=$builddir/t/certs
if [ ! -f "$certs/stamp" ]; then
    certs=$work/certs
    sh "$top/t/mkcerts.sh" "$certs" >/dev/null 2>&1 \
        || { echo "$me: cannot make certificates (certtool?)" >&2; exit 1; }
fi

# --- servers ------------------------------------------------------------------

cgi_url=/specweb99
gannet_dyn=""
# start_gannet [native|isapi]: the dynamic operations by mod_specweb99 or
# by the ISAPI extension under mod_isapi (in the event loop: isapi_threads
# 0; its data directory is the location's root, its generator named in
# ROOT/specweb99.tool)
start_gannet()
{
    local d=$work/gannet cmd mods="" locs="" dyn=${1:-$dynamic}
    port_http=$(free_port)
    port_https=$(free_port)
    gannet_dyn=$dyn
    if [ "$dyn" = isapi ]; then
        echo "$tool" >"$root/specweb99.tool"
        mods="load_module $isapiso;"
        locs="location /specweb99 {
        handler isapi;
        isapi_extension $extso;
    }"
    elif [ "$full" = 1 ]; then
        mods="load_module $modso;"
        locs="location /specweb99 {
        handler specweb99;
        specweb99_root $root;
        specweb99_tool $tool;
    }"
    fi
    if [ "$full" = 1 ] || [ "$dyn" = isapi ]; then
        if [ -f "$cgiso" ]; then
            mkdir -p "$root/cgi-bin"
            # the compiled CGI when built (the Perl one adds an
            # interpreter's start-up to every CGI request)
            if [ -x "$builddir/modules/specweb99/specweb99-cgi" ]; then
                cp "$builddir/modules/specweb99/specweb99-cgi" \
                   "$root/cgi-bin/specweb99.cgi"
            else
                cp "$top/modules/specweb99/specweb99.cgi" "$root/cgi-bin/"
            fi
            chmod 755 "$root/cgi-bin" "$root/cgi-bin/specweb99.cgi"
            echo "$root" >"$root/cgi-bin/specweb99.root"
            mods="$mods
load_module $cgiso;
cgi_user nobody;
cgi_max_processes 16;"
            locs="$locs
    location /cgi-bin/ {
        handler cgi;
    }"
            cgi_url=/cgi-bin/specweb99.cgi
        else
            echo "$me: no mod_cgi: CGI requests go to /specweb99" >&2
        fi
    fi
    cmd=$(gannet_conf "$d" 1 200000 <<EOF
$mods
tls_protocols TLSv1.2 TLSv1.3;
tls_session_cache 10m;
tls_session_tickets on;
file_cache_entries 20000;
file_cache_valid 60s;
symlinks_outside_root on;

server {
    listen 127.0.0.1:$port_http backlog=4096;
    listen 127.0.0.1:$port_https tls backlog=4096;
    tls_certificate $certs/localhost-$cert.pem;
    tls_certificate_key $certs/localhost-$cert.key;
    root $root;
    access_log off;
    sendfile on;
    keepalive_requests 0;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    $locs
}
EOF
)
    # shellcheck disable=SC2086
    spawn_server gannet 0 "$work/gannet.out" $cmd
    wait_url "http://127.0.0.1:$port_http/file_set/dir00000/class0_0" \
        || { echo "$me: gannet did not start:" >&2;
             cat "$work/gannet.out" "$d/logs/error.log" >&2; return 1; }
    echo "$me: gannet ($dyn): pid ${pid[gannet]}, http $port_http," \
         "https $port_https" >&2
}

start_nginx()
{
    local d=$work/nginx cmd
    port_http=$(free_port)
    port_https=$(free_port)
    cmd=$(nginx_conf "$d" 1 200000 100000 <<EOF
    sendfile on;
    open_file_cache max=20000 inactive=60s;
    open_file_cache_valid 60s;
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:10m;
    ssl_session_tickets on;

    server {
        listen 127.0.0.1:$port_http backlog=4096;
        listen 127.0.0.1:$port_https ssl backlog=4096;
        ssl_certificate $certs/localhost-$cert.pem;
        ssl_certificate_key $certs/localhost-$cert.key;
        root $root;
    }
EOF
)
    # shellcheck disable=SC2086
    spawn_server nginx 0 "$work/nginx.out" $cmd
    wait_url "http://127.0.0.1:$port_http/file_set/dir00000/class0_0" \
        || { echo "$me: nginx did not start:" >&2;
             cat "$work/nginx.out" >&2; return 1; }
    echo "$me: nginx: pid ${pid[nginx]}, http $port_http," \
         "https $port_https" >&2
}

# --- probes and the search ----------------------------------------------------

# probe RUN SERVER N ARG...: one full load generator run; appends a row to
# $results (run, N, conforming, percent, ops/s, response ms, kbit/s,
# errors, valid, server CPU %, load generator CPU %, CPU 0 other %,
# server CPU us/op, load generator CPU us/op) and returns 0 when the
# probe is valid.  The CPU figures are the load generator's report (over
# its measurement interval); "CPU 0 other" is the share of CPU 0 not
# used by the server (other processes, interrupts), sampled here over
# the same interval: a noise marker, as in bench/static.sh.
probe()
{
    local run=$1 srv=$2 n=$3 out lpid t0 t1 c0 c1 v
    shift 3
    out=$work/probe-$run-$n.out
    # the post log starts empty, as SPEC's Reset leaves it (under the
    # module's lock): the load generator Fetches all of it before and
    # after the probe, and a log kept from probe to probe grows without
    # end (a gigabyte after a few days of runs on one ROOT)
    if [ -f "$root/post.log" ]; then
        flock "$root/post.log" sh -c 'printf "%10d\n" 0 >"$1"' sh \
            "$root/post.log"
    fi
    taskset -c "$client_cpus" "$loadgen" -h 127.0.0.1 -C "$root" -n "$n" \
        --rampup "$rampup" --time "$duration" --rampdown "$rampdown" \
        --seed "$seed" --cgi-url "$cgi_url" --procs "$procs" \
        --server-pid "${pid[$srv]}" "$@" >"$out" 2>"$out.err" &
    lpid=$!
    sleep "$rampup"
    c0=$(cpu0_busy)
    t0=$(tree_ticks "${pid[$srv]}")
    sleep "$duration"
    t1=$(tree_ticks "${pid[$srv]}")
    c1=$(cpu0_busy)
    wait "$lpid"
    v=$(perl -e '
        my ($f) = @ARGV; my %k;
        open my $fh, "<", $f or die; while (<$fh>) {
            $k{$1} = $2 if /^([a-z_]+): (\S+)/; }
        exit 2 unless defined $k{conforming};
        my $ok = $k{percent_conforming} >= 95
                 && $k{errors} * 100 <= $k{ops_total} ? "yes" : "no";
        printf "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%s\t%.0f\t%.0f\n",
            $k{conforming}, $k{percent_conforming}, $k{ops_per_sec},
            $k{response_msec}, $k{kbit_per_sec}, $k{errors}, $ok,
            $k{server_cpu_percent} // 0, $k{client_cpu_percent} // 0;
        ' "$out") || {
        echo "$me: $run N=$n: the load generator failed:" >&2
        cat "$out.err" >&2
        return 1
    }
    v="$v	$(cpu0_other "$c0" "$c1" "$((t1 - t0))")"
    v="$v	$(perl -ne '$s = $1 if /^server_cpu_us_per_op: (\S+)/;
                       $c = $1 if /^client_cpu_us_per_op: (\S+)/;
                       END { print $s // "-", "\t", $c // "-" }' "$out")"
    printf '%s\t%s\t%s\n' "$run" "$n" "$v" >>"$results"
    printf '  %-20s N=%-6s %s\n' "$run" "$n" "$v" | tr '\t' ' ' >&2
    # the first errors the load generator described (a response's, or the
    # post log's: a failed Fetch or a count that does not add up)
    grep -E 'error \(|post log|Fetch failed' "$out.err" | head -n 3 >&2
    [ "$(cut -f7 <<<"$v")" = yes ]
}

# search RUN SERVER ARG...: binary search over [min, max].
search()
{
    local run=$1 srv=$2 lo=$min hi=$max mid
    shift 2
    echo "$me: $run: searching $min..$max" >&2
    while [ "$lo" -le "$hi" ] && [ $((hi - lo + 1)) -ge "$step" ]; do
        mid=$(( (lo + hi) / 2 ))
        if probe "$run" "$srv" "$mid" "$@"; then
            lo=$((mid + 1))
        else
            hi=$((mid - 1))
        fi
    done
}

for run in $runs; do
    dyn=$dynamic
    case "$run" in
    gannet-isapi-http|gannet-isapi-https) srv=gannet dyn=isapi ;;
    gannet-*) srv=gannet ;;
    nginx-*)  srv=nginx ;;
    *) echo "$me: unknown run $run" >&2; exit 1 ;;
    esac
    if [ "$srv" = nginx ] && ! command -v nginx >/dev/null; then
        echo "$me: nginx not found: $run skipped" >&2
        continue
    fi
    if [ -z "${pid[$srv]:-}" ] \
        || { [ "$srv" = gannet ] && [ "$gannet_dyn" != "$dyn" ]; }
    then
        stop_all
        start_"$srv" "$dyn" || exit 1
    fi
    case "$run" in
    *-static-https) args=(-p "$port_https" --tls --resume-share "$resume"
                          --static-only) ;;
    *-static)       args=(-p "$port_http" --static-only) ;;
    *-https)        args=(-p "$port_https" --tls --resume-share "$resume") ;;
    *-http)         args=(-p "$port_http") ;;
    esac
    case "$run" in
    *-https) [ -z "$tls_priority" ] || args+=(--priority "$tls_priority") ;;
    esac
    if [ "$full" = 0 ] && [ "$srv" = gannet ] && [ "$dyn" = native ]; then
        case " ${args[*]} " in
        *" --static-only "*) ;;
        *) args+=(--static-only) ;;
        esac
    fi
    search "$run" "$srv" "${args[@]}"
done

[ -n "$raw_out" ] && cp "$results" "$raw_out"

echo
echo "gannet: $("$gannet_bin" -v 2>&1 | head -n 1)"
command -v nginx >/dev/null && echo "nginx: $(nginx -v 2>&1 | head -n 1)"
echo "$(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "file set: $(find "$root/file_set" -mindepth 1 -maxdepth 1 | wc -l)" \
     "directories;" \
     "probes: ramp-up $rampup s, measurement $duration s, ramp-down" \
     "$rampdown s; server on CPU 0${server_cpu:+ capped at $server_cpu%}," \
     "load generator on CPU $client_cpus ($procs process(es));" \
     "certificate $cert${tls_priority:+; TLS clients: $tls_priority}"
[ "$full" = 0 ] && echo "NOTE: mod_specweb99 not built: gannet runs were" \
                        "static-only"
perl -e '
    my ($file, $ncpu) = @ARGV; my (%best, @order, %seen);
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp; my @f = split /\t/;
        push @order, $f[0] unless $seen{$f[0]}++;
        $best{$f[0]} = \@f if $f[8] eq "yes"
            && (!$best{$f[0]} || $f[1] > $best{$f[0]}[1]);
    }
    print "\n| run | Conforming | Percent | ops/s | Response ms | ",
          "ops/s/conn | kbit/s | Errors | server CPU | loadgen CPU | ",
          "CPU0 other | server us/op | loadgen us/op |\n";
    print "|-----|-----------:|--------:|------:|------------:|",
          "-----------:|-------:|-------:|-----------:|------------:|",
          "-----------:|-------------:|--------------:|\n";
    for my $r (@order) {
        my $b = $best{$r};
        if (!$b) { print "| $r | no valid probe |", " |" x 11, "\n"; next; }
        printf "| %s | %d | %.1f%% | %.1f | %.1f | %.2f | %.1f | %d | "
             . "%d%% | %d%%%s | %d%% | %s | %s |\n", $r, $b->[2], $b->[3],
             $b->[4], $b->[5], $b->[1] ? $b->[4] / $b->[1] : 0, $b->[6],
             $b->[7], $b->[9], $b->[10],
             $b->[10] >= 90 * $ncpu ? " (saturated)" : "",
             $b->[11], $b->[12] // "-", $b->[13] // "-";
    }
' "$results" "$(perl -e 'my $n = 0; for (split /,/, $ARGV[0]) {
        $n += /^(\d+)-(\d+)$/ ? $2 - $1 + 1 : 1 } print $n' "$client_cpus")"
