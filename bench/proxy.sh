#!/usr/bin/env bash
#
# bench/proxy.sh - the reverse proxy: server CPU per request of gannet's
# proxy_pass beside nginx's and H2O's, all in front of the same backend
# (issue 22: 1 KiB with upstream keep-alive at most 0.8 x nginx's CPU per
# request; 1 MiB within 10 % of nginx's CPU per byte). With --fastcgi:
# fastcgi_pass (H2O's fastcgi.connect) to one small FastCGI responder,
# bench/fcgi_responder.c (built here with gcc), that answers every
# request with SIZE bytes (the load's FILE: 1k), connections kept
# (gannet and nginx: fastcgi_keep_conn on, upstream keepalive 64; H2O:
# fastcgi.timeout.keepalive, which is 0 -- a connection per request --
# by default).
#
# The backend is a gannet (one child) serving 1k.bin and 1m.bin from a
# docroot, pinned to CPU 1 with the load generator (it is the same for
# every proxy: only the proxy's CPU is measured). Each proxy runs one
# worker / child / thread pinned to CPU 0, keeps up to 64 idle
# connections to the backend (gannet: upstream keepalive 64; nginx:
# upstream keepalive 64, proxy_http_version 1.1, Connection ""; H2O:
# proxy.preserve-host, its own pool), no access log. For each round,
# each load, each proxy (interleaved), `taskset -c 1 wrk -t1 -cCONNS
# -dS` runs against the proxy; around it the proxy's CPU time (its
# whole process tree, /proc/PID/schedstat or utime+stime) is read: CPU
# per request = delta CPU / requests completed, and for 1m per MiB.
#
# Usage: bench/proxy.sh [--rounds N] [--duration S] [--servers "LIST"]
#                       [--loads "LIST"] [--gannet PATH] [--raw FILE]
#                       [--keep]
#   --rounds N     interleaved rounds (default 5; medians are reported)
#   --duration S   seconds per wrk run (default 5)
#   --servers L    subset/order of "gannet nginx h2o"
#   --loads L      FILE:CONNS ..., FILE 1k or 1m; default "1k:50 1m:10"
#   --gannet PATH  gannet binary (proxy and backend; default: core/gannet
#                  next to this script)
#   --raw FILE     also write the raw per-run results (TSV) to FILE
#   --keep         keep the temporary directory (configs, error logs)
#   --fastcgi      FastCGI instead of HTTP (loads default to "1k:50")
#
# Needs: wrk, taskset, curl, perl; nginx (Debian's), h2o (Debian's
# 2.2.5); a server whose binary is missing is skipped. 2 CPUs. About 4
# minutes with the defaults.

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rounds=5
duration=5
servers="gannet nginx h2o"
loads="1k:50 1m:10"
gannet_bin="$here/../core/gannet"
raw_out=""
keep=0
fastcgi=0

parse_options "--rounds=rounds --duration=duration --servers=servers
               --loads=loads --gannet=gannet_bin --raw=raw_out
               --keep=keep:1 --fastcgi=fastcgi:1" "$@"
[ "$fastcgi" = 1 ] && [ "$loads" = "1k:50 1m:10" ] && loads="1k:50"

require_tools wrk taskset curl perl getconf
require_two_cpus wrk
[ -x "$gannet_bin" ] || { echo "proxy.sh: no $gannet_bin" >&2; exit 1; }

raise_nofile 20000
bench_workdir /tmp/gnbench-proxy.XXXXXX
bench_docroot
random_file 1024 1 >"$doc/1k.bin"
random_file 1048576 3 >"$doc/1m.bin"
stop_signal=QUIT

declare -A port

# --- the backend: a gannet on CPU 1, or the FastCGI responder --------------

bport=$(free_port)
mkdir -p "$work/backend"
if [ "$fastcgi" = 1 ]; then
    case $loads in
    1k:*) ;;
    *) echo "proxy.sh: --fastcgi has the load 1k only" >&2; exit 1 ;;
    esac
    build_c fcgi_responder
    spawn_server backend 1 "$work/backend.out" \
        "$work/fcgi_responder" "$bport" 1024
else
cmd=$(gannet_conf "$work/backend" 1 20000 <<EOF
server {
    listen 127.0.0.1:$bport backlog=4096;
    root $doc;
    access_log off;
    keepalive_requests 0;
    keepalive_timeout 300s;
    sendfile on;
}
EOF
)
# shellcheck disable=SC2086
spawn_server backend 1 "$work/backend.out" $cmd
wait_url "http://127.0.0.1:$bport/1k.bin" \
    || { echo "proxy.sh: the backend does not serve" >&2; exit 1; }
fi

# What goes to the backend, as each proxy says it: HTTP or FastCGI.
if [ "$fastcgi" = 1 ]; then
    gannet_pass="fastcgi_pass backend; fastcgi_keep_conn on;"
    nginx_pass="fastcgi_pass backend; fastcgi_keep_conn on;"
    h2o_pass="fastcgi.connect:
          port: $bport
          type: tcp
        fastcgi.timeout.keepalive: 60000"
else
    gannet_pass="proxy_pass http://backend;"
    nginx_pass="proxy_pass http://backend; proxy_http_version 1.1;
            proxy_set_header Connection \"\";"
    h2o_pass="proxy.reverse.url: http://127.0.0.1:$bport/
        proxy.preserve-host: ON"
fi

# --- the proxies ------------------------------------------------------------

conf_gannet()
{
    local d="$work/gannet"
    mkdir -p "$d"
    gannet_conf "$d" 1 20000 <<EOF
upstream backend {
    server 127.0.0.1:$bport;
    keepalive 64;
    keepalive_requests 1000000;
}
server {
    listen 127.0.0.1:${port[gannet]} backlog=4096;
    access_log off;
    keepalive_requests 0;
    keepalive_timeout 300s;
    location / { $gannet_pass }
}
EOF
}

conf_nginx()
{
    local d="$work/nginx"
    mkdir -p "$d"
    nginx_conf "$d" 1 20000 20000 <<EOF
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    upstream backend {
        server 127.0.0.1:$bport;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:${port[nginx]} backlog=4096;
        location / {
            $nginx_pass
        }
    }
EOF
}

conf_h2o()
{
    local d="$work/h2o"
    mkdir -p "$d"
    cat >"$d/h2o.conf" <<EOF
listen:
  host: 127.0.0.1
  port: ${port[h2o]}
num-threads: 1
user: root
pid-file: $d/h2o.pid
error-log: $d/error.log
max-connections: 20000
http1-request-timeout: 300
hosts:
  default:
    paths:
      /:
        $h2o_pass
EOF
    echo "h2o -c $d/h2o.conf"
}

binary_of()
{
    case $1 in
    gannet) echo "$gannet_bin" ;;
    *)      command -v "$1" ;;
    esac
}

version_of()
{
    case $1 in
    gannet) "$gannet_bin" -v 2>&1 | head -n 1 ;;
    nginx)  nginx -v 2>&1 | head -n 1 ;;
    h2o)    h2o -v 2>&1 | head -n 1 ;;
    esac
}

started=""
for s in $servers; do
    if [ -z "$(binary_of "$s")" ]; then
        echo "proxy.sh: $s not installed, skipped" >&2
        continue
    fi
    port[$s]=$(free_port)
    cmd=$("conf_$s")
    # shellcheck disable=SC2086
    spawn_server "$s" 0 "$work/$s.out" $cmd
    if ! wait_url "http://127.0.0.1:${port[$s]}/1k.bin" \
        || { [ "$fastcgi" = 0 ] \
             && ! curl -s "http://127.0.0.1:${port[$s]}/1m.bin" \
                  | cmp -s - "$doc/1m.bin"; } \
        || { [ "$fastcgi" = 1 ] \
             && [ "$(curl -s "http://127.0.0.1:${port[$s]}/1k.bin" \
                     | wc -c)" != 1024 ]; }
    then
        echo "proxy.sh: $s does not pass the backend's body byte for" \
             "byte, skipped" >&2
        stop_server "$s"
        continue
    fi
    started="$started $s"
    echo "started $s: pid ${pid[$s]}, port ${port[$s]}" >&2
done
[ -n "$started" ] || { echo "proxy.sh: no proxy started" >&2; exit 1; }

# run_one ROUND LOAD SERVER
run_one()
{
    local r=$1 load=$2 s=$3 file conns c0 c1 out
    IFS=: read -r file conns <<<"$load"
    c0=$(tree_cpu_ns "${pid[$s]}")
    out=$(run_wrk "$conns" "$duration" "" \
              "http://127.0.0.1:${port[$s]}/$file.bin")
    c1=$(tree_cpu_ns "${pid[$s]}")
    echo "$out" >>"$work/wrk.log"
    wrk_parse "$out"
    if [ -z "$wrk_reqs" ] || [ "$wrk_reqs" = 0 ]; then
        echo "proxy.sh: wrk failed ($load $s):" >&2
        echo "$out" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$load" "$s" "$wrk_rps" \
        "$wrk_reqs" "$((c1 - c0))" "$wrk_errors" >>"$results"
    printf '  round %s %-6s %-7s %9.0f req/s %8.2f us CPU/req errors %s\n' \
        "$r" "$load" "$s" "$wrk_rps" \
        "$(perl -e 'printf "%.4f", $ARGV[0] / $ARGV[1] / 1000' -- \
            "$((c1 - c0))" "$wrk_reqs")" "$wrk_errors" >&2
}

echo "warming up (1 s per load and proxy)" >&2
for load in $loads; do
    IFS=: read -r file conns <<<"$load"
    for s in $started; do
        run_wrk "$conns" 1 "" "http://127.0.0.1:${port[$s]}/$file.bin" \
            >/dev/null
    done
done

for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    for load in $loads; do
        for s in $started; do
            run_one "$r" "$load" "$s"
        done
    done
done

[ -n "$raw_out" ] && cp "$results" "$raw_out"

echo
for s in $started; do
    echo "$s: $(version_of "$s")"
done
echo "backend: $([ "$fastcgi" = 1 ] && echo "bench/fcgi_responder.c" \
                || echo "gannet, 1 child"), on CPU 1 with wrk -t1" \
     "-d${duration}s;" \
     "each proxy: 1 worker on CPU 0; $rounds interleaved rounds, medians;" \
     "CPU = proxy run time / requests"
perl -e "$bench_pl"'
    my ($file) = @ARGV; my (%d, @loads, %seen, @srv, %sseen);
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp; my ($r, $l, $s, $rps, $n, $ns, $err) = split /\t/;
        push @loads, $l unless $seen{$l}++;
        push @srv, $s unless $sseen{$s}++;
        push @{$d{$l}{$s}{rps}}, $rps;
        push @{$d{$l}{$s}{cpu}}, $ns / $n / 1000;
        $d{$l}{$s}{err} += $err;
    }
    print "\n| load | proxy | req/s | CPU us/req | CPU ms/MiB | vs nginx "
        . "| errors |\n";
    print "|------|-------|------:|-----------:|-----------:|---------:"
        . "|-------:|\n";
    for my $l (@loads) {
        my ($f, $c) = split /:/, $l;
        my $mib = $f eq "1m" ? 1 : 1 / 1024;
        my $base = $d{$l}{nginx} ? med(@{$d{$l}{nginx}{cpu}}) : 0;
        for my $s (@srv) {
            my $x = $d{$l}{$s} or next;
            my $cpu = med(@{$x->{cpu}});
            printf "| %s x %d | %s | %.0f | %.2f | %.3f | %s | %d |\n",
                $f, $c, $s, med(@{$x->{rps}}), $cpu, $cpu / $mib / 1000,
                ratio($cpu, $base), $x->{err};
        }
    }
' "$results"
