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
#                        [--keep]
#   --rounds N     interleaved rounds (default 3; medians are reported)
#   --duration S   seconds per wrk run (default 5)
#   --servers L    subset/order of "gannet nginx lighttpd apache h2o"
#   --loads L      loads, each FILE:CONNS[:close], FILE one of 1k 100k 1m;
#                  default "1k:50 1k:1000 100k:50 1m:50 1k:50:close"
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --raw FILE     also write the raw per-run results (TSV) to FILE
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
rounds=3
duration=5
servers="gannet nginx lighttpd apache h2o"
loads="1k:50 1k:1000 100k:50 1m:50 1k:50:close"
gannet_bin="$here/../core/gannet"
raw_out=""
keep=0

while [ $# -gt 0 ]; do
    case "$1" in
    --rounds)   rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --servers)  servers=$2; shift 2 ;;
    --loads)    loads=$2; shift 2 ;;
    --gannet)   gannet_bin=$2; shift 2 ;;
    --raw)      raw_out=$2; shift 2 ;;
    --keep)     keep=1; shift ;;
    -h|--help)  sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *)          echo "static.sh: unknown option $1" >&2; exit 1 ;;
    esac
done

for t in wrk taskset curl perl getconf; do
    command -v "$t" >/dev/null || { echo "static.sh: $t not found" >&2; exit 1; }
done
if [ "$(nproc)" -lt 2 ]; then
    echo "static.sh: need 2 CPUs (server on 0, wrk on 1)" >&2
    exit 1
fi

ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
clk_tck=$(getconf CLK_TCK)
work=$(mktemp -d /tmp/gnbench.XXXXXX)
chmod 755 "$work"              # Apache's child runs as www-data
doc="$work/html"
mkdir -p "$doc"
results="$work/results.tsv"
: >"$results"

declare -A pid port

# --- helpers ----------------------------------------------------------------

# Every process of the server tree rooted at $1 (the root and all its
# descendants), one pid a line.
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

# utime+stime in clock ticks summed over the server tree rooted at $1
# (fields 14 and 15 of /proc/PID/stat; they already include all threads).
tree_ticks()
{
    local p sum=0 s
    for p in $(tree_pids "$1"); do
        s=$(perl -ne 's/^.*\) //s; @f = split / /; print $f[11] + $f[12]' \
            "/proc/$p/stat" 2>/dev/null) || continue
        [ -n "$s" ] && sum=$((sum + s))
    done
    echo "$sum"
}

# "BUSY TOTAL" clock ticks of CPU 0 since boot (/proc/stat cpu0 line).
cpu0_busy()
{
    awk '$1 == "cpu0" { t = 0; for (i = 2; i <= 9; i++) t += $i;
                        print t - $5 - $6, t }' /proc/stat
}

free_port()
{
    perl -MIO::Socket::INET -e '
        my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
                                      LocalPort => 0, Listen => 1,
                                      ReuseAddr => 1) or die "bind: $!";
        print $s->sockport, "\n";'
}

stop_all()
{
    local s p pids
    for s in "${!pid[@]}"; do
        p=${pid[$s]}
        pids=$(tree_pids "$p")
        kill -TERM "$p" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.3
        done
        for p in $pids; do
            kill -KILL "$p" 2>/dev/null
        done
        unset "pid[$s]"
    done
    wait 2>/dev/null
}

cleanup()
{
    stop_all
    if [ "$keep" = 1 ]; then
        echo "static.sh: kept $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- docroot: random bytes, fixed seed, so every run serves the same ------

mkfile()
{
    perl -e 'srand($ARGV[1]); my $n = $ARGV[0]; my $b = "";
             $b .= pack("N", int(rand(4294967296))) while length($b) < $n;
             print substr($b, 0, $n);' "$2" "$3" >"$doc/$1"
}
mkfile 1k.bin 1024 1
mkfile 100k.bin 102400 2
mkfile 1m.bin 1048576 3
chmod 644 "$doc"/*.bin

# --- per-server configuration and start -------------------------------------
#
# Common settings: 127.0.0.1 only, one worker/child, access log off,
# sendfile on (H2O 2.2 has no sendfile: it always copies through
# userspace), keep-alive on with no request limit and a long timeout.

conf_gannet()
{
    local d="$work/gannet"
    mkdir -p "$d/logs"
    cat >"$d/gannet.conf" <<EOF
children 1;
user root;
pid logs/gannet.pid;
error_log logs/error.log notice;
max_connections 20000;

server {
    listen 127.0.0.1:${port[gannet]} backlog=4096;
    root $doc;
    access_log off;
    sendfile on;
    keepalive_requests 0;
    keepalive_timeout 300s;
    default_type application/octet-stream;
}
EOF
    echo "$gannet_bin -f -p $d/ -c $d/gannet.conf"
}

conf_nginx()
{
    local d="$work/nginx"
    mkdir -p "$d/logs"
    cat >"$d/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process on;
user root;
pid $d/nginx.pid;
error_log $d/logs/error.log notice;
worker_rlimit_nofile 20000;

events {
    worker_connections 20000;
}

http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    client_body_temp_path $d/tmp_body;
    proxy_temp_path $d/tmp_proxy;
    fastcgi_temp_path $d/tmp_fastcgi;
    uwsgi_temp_path $d/tmp_uwsgi;
    scgi_temp_path $d/tmp_scgi;

    server {
        listen 127.0.0.1:${port[nginx]} backlog=4096;
        root $doc;
    }
}
EOF
    echo "nginx -p $d/ -e $d/logs/error.log -c $d/nginx.conf"
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
    local s=$1 cmd i ok
    port[$s]=$(free_port)
    cmd=$(conf_"$s")
    # Own session so the tree is easy to find; pinned to CPU 0 (children
    # and threads inherit the affinity).
    setsid taskset -c 0 $cmd >"$work/$s.out" 2>&1 </dev/null &
    pid[$s]=$!
    for i in $(seq 1 50); do
        curl -s -o /dev/null "http://127.0.0.1:${port[$s]}/1k.bin" && break
        sleep 0.1
    done
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
    local r=$1 load=$2 s=$3 file conns close url t0 t1 out rps reqs err
    IFS=: read -r file conns close <<<"$load"
    url="http://127.0.0.1:${port[$s]}/$file.bin"
    local hdr=()
    [ "$close" = close ] && hdr=(-H 'Connection: close')
    local c0 c1
    c0=$(cpu0_busy)
    t0=$(tree_ticks "${pid[$s]}")
    out=$(taskset -c 1 wrk -t1 -c"$conns" -d"${duration}s" --latency \
              "${hdr[@]}" "$url" 2>&1)
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
    rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
    reqs=$(awk '/ requests in / {print $1}' <<<"$out")
    err=$(perl -ne '
        $e += $1 + $2 + $3 + $4
            if /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/;
        $e += $1 if /Non-2xx or 3xx responses: (\d+)/;
        END { print $e || 0 }' <<<"$out")
    if [ -z "$rps" ] || [ -z "$reqs" ]; then
        echo "static.sh: wrk failed against $s ($load):" >&2
        echo "$out" >&2
        return
    fi
    local p50 other
    p50=$(awk '/^ +50%/ {print $2}' <<<"$out")
    # CPU 0 time not spent in the server (other processes, interrupts),
    # in percent of the run: a noise indicator for this run.
    other=$(perl -e 'my ($b, $t, $w) = @ARGV; $w ||= 1;
                     printf "%.0f", 100 * ($b - $t) / $w' -- \
            "$((${c1% *} - ${c0% *}))" "$((t1 - t0))" \
            "$((${c1#* } - ${c0#* }))")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$load" "$s" "$rps" \
        "$reqs" "$((t1 - t0))" "$err" "$p50" "$other" >>"$results"
    printf '  round %s %-12s %-9s %10.0f req/s %7.2f us CPU/req  p50 %-8s errors %s  cpu0 other %s%%\n' \
        "$r" "$load" "$s" "$rps" \
        "$(perl -e 'printf "%.4f", $ARGV[0] / $ARGV[2] / $ARGV[1] * 1e6' -- \
            "$((t1 - t0))" "$reqs" "$clk_tck")" "$p50" "$err" "$other" >&2
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
        hdr=()
        [ "$close" = close ] && hdr=(-H 'Connection: close')
        taskset -c 1 wrk -t1 -c"$conns" -d1s "${hdr[@]}" \
            "http://127.0.0.1:${port[$s]}/$file.bin" >/dev/null 2>&1
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
echo "wrk: $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)"
echo "wrk -t1 -d${duration}s, $rounds interleaved rounds, medians;" \
     "server on CPU 0, wrk on CPU 1; CPU = server utime+stime / requests;"
echo "CPU0 other: per round, % of CPU 0 not used by the server (other" \
     "processes, interrupts; a noise indicator)"
perl -e '
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
    sub med { my @v = sort { $a <=> $b } @_; my $n = @v;
              return 0 unless $n;
              $n % 2 ? $v[$n/2] : ($v[$n/2-1] + $v[$n/2]) / 2 }
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
                $s, $r, $nr ? sprintf("%.2f", $r / $nr) : "-", $c,
                $nc ? sprintf("%.2f", $c / $nc) : "-", $x->{err},
                join("/", @{$x->{other}});
        }
    }
' "$results" "$clk_tck" "$started"
