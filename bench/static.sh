#!/usr/bin/env bash
#
# bench/static.sh - static-file throughput and CPU cost of gannet and its
# peers (nginx, lighttpd, Apache event MPM, H2O), all on one docroot.
#
# Every server runs one worker/child, pinned to CPU 0; wrk runs on CPU 1.
# For each round, each load, each server (interleaved: round 1 runs every
# load on every server, then round 2 ...) we record wrk's requests/s and
# the server's CPU time (utime+stime from /proc/PID/stat, summed over the
# master and all its descendants) and print medians with ratios to nginx.
#
# Usage: bench/static.sh [--rounds N] [--duration S] [--servers "LIST"]
#                        [--loads "LIST"] [--gannet PATH] [--raw FILE]
#                        [--deferred] [--keep]
#   --rounds N     interleaved rounds (default 3; medians are reported)
#   --duration S   seconds per wrk run (default 5)
#   --servers L    subset/order of "gannet nginx lighttpd apache h2o"
#   --loads L      loads, each FILE:CONNS[:close], FILE one of 1k 100k 1m;
#                  default "1k:50 1k:1000 100k:50 1m:50 1k:50:close"
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --raw FILE     also write the raw per-run results (TSV) to FILE
#   --deferred     TCP_DEFER_ACCEPT on every server that has a setting for
#                  it: gannet and nginx "listen ... deferred", lighttpd
#                  server.defer-accept (Apache's event MPM sets it by
#                  default on Linux; H2O 2.2 has no setting)
#   --keep         keep the temporary directory (configs, error logs)
#
# Environment: APACHE_THREADS (default 1024) sets Apache's ThreadsPerChild;
# fewer threads is cheaper per request at 50 connections, but the event
# MPM then closes keep-alive connections at 1,000 (wrk read errors).
#
# Needs: wrk, taskset, curl, perl; the peers' Debian packages
# (nginx-light or nginx, lighttpd, apache2, h2o).  A server whose binary
# is missing is skipped with a message.  Run as root (Apache drops to
# www-data; the others stay as the invoking user).

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rounds=3
duration=5
servers="gannet nginx lighttpd apache h2o"
loads="1k:50 1k:1000 100k:50 1m:50 1k:50:close"
gannet_bin="$here/../core/gannet"
raw_out=""
keep=0
deferred=""

parse_options "--rounds=rounds --duration=duration --servers=servers
               --loads=loads --gannet=gannet_bin --raw=raw_out
               --deferred=deferred:1 --keep=keep:1" "$@"

require_tools wrk taskset curl perl getconf
require_two_cpus wrk

raise_nofile 20000
bench_workdir /tmp/gnbench.XXXXXX
bench_docroot

declare -A port

# --- docroot: random bytes, fixed seed, so every run serves the same ------

random_file 1024 1 >"$doc/1k.bin"
random_file 102400 2 >"$doc/100k.bin"
random_file 1048576 3 >"$doc/1m.bin"
chmod 644 "$doc"/*.bin

# --- per-server configuration and start -------------------------------------
#
# Common settings: 127.0.0.1 only, one worker/child, access log off,
# sendfile on (H2O 2.2 has no sendfile: it always copies through
# userspace), keep-alive on with no request limit and a long timeout.

conf_gannet()
{
    gannet_conf "$work/gannet" 1 20000 <<EOF

server {
    listen 127.0.0.1:${port[gannet]} backlog=4096${deferred:+ deferred};
    root $doc;
    access_log off;
    sendfile on;
    keepalive_requests 0;
    keepalive_timeout 300s;
    default_type application/octet-stream;
}
EOF
}

conf_nginx()
{
    nginx_conf "$work/nginx" 1 20000 20000 <<EOF
    sendfile on;
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;

    server {
        listen 127.0.0.1:${port[nginx]} backlog=4096${deferred:+ deferred};
        root $doc;
    }
EOF
}

conf_lighttpd()
{
    local d="$work/lighttpd"
    mkdir -p "$d"
    cat >"$d/lighttpd.conf" <<EOF
server.modules = ()
server.document-root = "$doc"
server.bind = "127.0.0.1"
server.port = ${port[lighttpd]}
server.pid-file = "$d/lighttpd.pid"
server.errorlog = "$d/error.log"
server.max-worker = 0
server.network-backend = "sendfile"
server.max-fds = 20000
server.max-connections = 10000
server.listen-backlog = 4096
server.defer-accept = ${deferred:-0}
server.max-keep-alive-requests = 65535
server.max-keep-alive-idle = 300
mimetype.assign = ( "" => "application/octet-stream" )
EOF
    echo "lighttpd -D -f $d/lighttpd.conf"
}

conf_apache()
{
    local d="$work/apache" m=/usr/lib/apache2/modules
    mkdir -p "$d"
    chown www-data "$d" 2>/dev/null
    cat >"$d/apache2.conf" <<EOF
ServerRoot "$d"
DefaultRuntimeDir "$d"
PidFile "$d/apache2.pid"
ErrorLog "$d/error.log"
LogLevel warn
ServerName 127.0.0.1
User www-data
Group www-data
Listen 127.0.0.1:${port[apache]}
ListenBacklog 4096

LoadModule mpm_event_module $m/mod_mpm_event.so
LoadModule authz_core_module $m/mod_authz_core.so
LoadModule mime_module $m/mod_mime.so

# One child process; its threads serve requests, the listener thread
# holds the idle keep-alive connections.
ServerLimit 1
StartServers 1
ThreadLimit ${APACHE_THREADS:-1024}
ThreadsPerChild ${APACHE_THREADS:-1024}
MaxRequestWorkers ${APACHE_THREADS:-1024}
MinSpareThreads 1
MaxSpareThreads ${APACHE_THREADS:-1024}
AsyncRequestWorkerFactor 64
MaxConnectionsPerChild 0

KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 300
EnableSendfile On
EnableMMAP On
Timeout 60

TypesConfig /etc/mime.types
DocumentRoot "$doc"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "$doc">
    AllowOverride None
    Require all granted
</Directory>
EOF
    echo "apache2 -f $d/apache2.conf -DFOREGROUND"
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
        file.dir: $doc
EOF
    echo "h2o -c $d/h2o.conf"
}

binary_of()
{
    case "$1" in
    gannet)   echo "$gannet_bin" ;;
    apache)   echo apache2 ;;
    *)        echo "$1" ;;
    esac
}

start_server()
{
    local s=$1 cmd ok
    port[$s]=$(free_port)
    cmd=$(conf_"$s")
    # Own session, pinned to CPU 0 (children and threads inherit it).
    # shellcheck disable=SC2086
    spawn_server "$s" 0 "$work/$s.out" $cmd
    wait_url "http://127.0.0.1:${port[$s]}/1k.bin"
    ok=1
    for f in 1k.bin 100k.bin 1m.bin; do
        if ! curl -s --max-time 5 "http://127.0.0.1:${port[$s]}/$f" \
                | cmp -s - "$doc/$f"; then
            ok=0
        fi
    done
    if [ "$ok" != 1 ]; then
        echo "static.sh: $s does not serve the docroot; output:" >&2
        cat "$work/$s.out" >&2
        return 1
    fi
    echo "started $s: pid ${pid[$s]}, port ${port[$s]}," \
         "$(tree_pids "${pid[$s]}" | wc -l) process(es): $cmd" >&2
}

# run_one ROUND LOAD SERVER
run_one()
{
    local r=$1 load=$2 s=$3 file conns close url t0 t1 c0 c1 out other
    IFS=: read -r file conns close <<<"$load"
    url="http://127.0.0.1:${port[$s]}/$file.bin"
    c0=$(cpu0_busy)
    t0=$(tree_ticks "${pid[$s]}")
    out=$(run_wrk "$conns" "$duration" "$close" "$url" --latency)
    t1=$(tree_ticks "${pid[$s]}")
    c1=$(cpu0_busy)
    echo "$out" >>"$work/wrk-$s.log"
    if ! kill -0 "${pid[$s]}" 2>/dev/null; then
        echo "static.sh: $s exited during round $r ($load); dropped" >&2
        dead="$dead $s"
        tail -n 5 "$work/$s.out" "$work/$s"/logs/error.log \
            "$work/$s"/error.log 2>/dev/null >&2
        return
    fi
    wrk_parse "$out"
    if [ -z "$wrk_rps" ] || [ -z "$wrk_reqs" ]; then
        echo "static.sh: wrk failed against $s ($load):" >&2
        echo "$out" >&2
        return
    fi
    # CPU 0 time not spent in the server (other processes, interrupts),
    # in percent of the run: a noise indicator for this run.
    other=$(cpu0_other "$c0" "$c1" "$((t1 - t0))")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$load" "$s" \
        "$wrk_rps" "$wrk_reqs" "$((t1 - t0))" "$wrk_errors" "$wrk_p50" \
        "$other" >>"$results"
    printf '  round %s %-12s %-9s %10.0f req/s %7.2f us CPU/req  p50 %-8s errors %s  cpu0 other %s%%\n' \
        "$r" "$load" "$s" "$wrk_rps" \
        "$(ticks_us "$((t1 - t0))" "$wrk_reqs")" "$wrk_p50" "$wrk_errors" \
        "$other" >&2
}

# --- main -------------------------------------------------------------------

started=""
dead=""
for s in $servers; do
    b=$(binary_of "$s")
    if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "$b" ]; then
        echo "static.sh: $s: $b not found, skipped" >&2
        continue
    fi
    if start_server "$s"; then
        started="$started $s"
    else
        echo "static.sh: $s skipped" >&2
    fi
done
[ -n "$started" ] || { echo "static.sh: no server started" >&2; exit 1; }

echo "warming up (1 s per server and load)" >&2
for load in $loads; do
    IFS=: read -r file conns close <<<"$load"
    for s in $started; do
        run_wrk "$conns" 1 "$close" \
            "http://127.0.0.1:${port[$s]}/$file.bin" >/dev/null
    done
done

for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    for load in $loads; do
        for s in $started; do
            case " $dead " in *" $s "*) continue ;; esac
            run_one "$r" "$load" "$s"
        done
    done
done

for s in $dead; do
    echo "static.sh: WARNING: $s exited during the run; its later runs" \
         "are missing from the tables" >&2
done

[ -n "$raw_out" ] && cp "$results" "$raw_out"

version_of()
{
    case "$1" in
    gannet)   "$gannet_bin" -v 2>&1 | head -n 1 ;;
    nginx)    nginx -v 2>&1 | head -n 1 ;;
    lighttpd) lighttpd -v 2>&1 | head -n 1 | cut -d' ' -f1 ;;
    apache)   apache2 -v 2>&1 | head -n 1 ;;
    h2o)      h2o -v 2>&1 | head -n 1 ;;
    esac
}

echo
for s in $started; do
    echo "$s: $(version_of "$s")"
done
echo "wrk: $(wrk_version)"
echo "wrk -t1 -d${duration}s, $rounds interleaved rounds, medians;" \
     "server on CPU 0, wrk on CPU 1; CPU = server utime+stime / requests;"
echo "CPU0 other: per round, % of CPU 0 not used by the server (other" \
     "processes, interrupts; a noise indicator)"
perl -e "$bench_pl"'
    my ($file, $tck, $order) = @ARGV; my (%d, @loads, %seenl);
    my @srv = split " ", $order;
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp; my ($r, $l, $s, $rps, $n, $ticks, $err, $p50, $o) = split /\t/;
        push @{$d{$l}{$s}{other}}, $o;
        push @loads, $l unless $seenl{$l}++;
        push @{$d{$l}{$s}{rps}}, $rps;
        push @{$d{$l}{$s}{cpu}}, $n ? $ticks / $tck / $n * 1e6 : 0;
        $d{$l}{$s}{err} += $err;
    }
    for my $l (@loads) {
        my ($f, $c, $cl) = split /:/, $l;
        printf "\n### %s file, %d connections, %s\n\n", $f, $c,
            $cl ? "Connection: close" : "keep-alive";
        print "| server   |     req/s | vs nginx | CPU us/req | vs nginx | errors | CPU0 other |\n";
        print "|----------|----------:|---------:|-----------:|---------:|-------:|-----------:|\n";
        my $n = $d{$l}{nginx};
        my ($nr, $nc) = $n ? (med(@{$n->{rps}}), med(@{$n->{cpu}})) : (0, 0);
        for my $s (@srv) {
            my $x = $d{$l}{$s} or next;
            my ($r, $c) = (med(@{$x->{rps}}), med(@{$x->{cpu}}));
            printf "| %-8s | %9.0f | %8s | %10.2f | %8s | %6d | %9s%% |\n",
                $s, $r, ratio($r, $nr), $c, ratio($c, $nc), $x->{err},
                join("/", @{$x->{other}});
        }
    }
' "$results" "$clk_tck" "$started"
