#!/usr/bin/env bash
#
# bench/h2.sh - HTTP/2 over TLS: server CPU per request of gannet beside
# nginx and H2O (h2load), next to the same servers' HTTP/1.1 over TLS
# (wrk, as bench/tls.sh's ka-1k-ec), same certificate (ECDSA P-256 from
# t/mkcerts.sh), same docroot.
#
# Every server runs one worker/child/thread, pinned to CPU 0; the client
# (h2load -t1 or wrk -t1) runs on CPU 1.  Each server offers h2 and
# http/1.1 by ALPN on one TLS listener (wrk sends no ALPN: HTTP/1.1).
# TLS 1.3 with X25519; AES-128-GCM for gannet (GnuTLS's choice) and
# nginx (told to prefer it); H2O 2.2 has no TLS 1.3 suite setting and
# picks AES-256-GCM (the start-up line of each server says which).
# Tests (all interleaved: round 1 runs every test on every server, then
# round 2 ...), each for S seconds:
#   h2-1k-m10  h2load -t1 -c50 -m10 .../1k.bin   (10 streams a connection)
#   h2-1k-m1   h2load -t1 -c50 -m1  .../1k.bin
#   h1-1k      wrk -t1 -c50 .../1k.bin           (HTTP/1.1 keep-alive)
#   h2-1m      h2load -t1 -c50 -m1  .../1m.bin
#   h1-1m      wrk -t1 -c50 .../1m.bin
# Around each run the server's CPU time (utime+stime from /proc/PID/stat,
# master and all descendants) is read: CPU per request = delta CPU /
# requests completed; for 1 MiB also per byte of body.  A run is an error
# row unless every request succeeded: h2load's failed + errored + timeout
# + non-2xx, wrk's socket errors + non-2xx; h2load must also report
# "Application protocol: h2".
#
# Usage: bench/h2.sh [--rounds N] [--duration S] [--servers "LIST"]
#                    [--tests "LIST"] [--gannet PATH] [--raw FILE]
#                    [--perf S] [--keep]
#   --rounds N     interleaved rounds (default 5; medians are reported)
#   --duration S   seconds per run (default 5)
#   --servers L    subset/order of "gannet nginx h2o"
#   --tests L      subset/order of the tests above
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --raw FILE     also write the raw per-run results (TSV) to FILE
#   --perf S       after the rounds, perf record gannet's child for S
#                  seconds under h2-1k-m10 and print the top 15 symbols
#   --keep         keep the temporary directory (configs, error logs)
#
# Needs: h2load (nghttp2-client), wrk, openssl, taskset, curl, perl,
# certtool (for t/mkcerts.sh); nginx with http_v2 (Debian's nginx or
# nginx-light), h2o (Debian's 2.2.5); perf for --perf.  A server whose
# binary is missing is skipped.  About 7 minutes with the defaults.

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rounds=5
duration=5
servers="gannet nginx h2o"
tests="h2-1k-m10 h2-1k-m1 h1-1k h2-1m h1-1m"
gannet_bin="$here/../core/gannet"
raw_out=""
perf_secs=""
keep=0

parse_options "--rounds=rounds --duration=duration --servers=servers
               --tests=tests --gannet=gannet_bin --raw=raw_out
               --perf=perf_secs --keep=keep:1" "$@"

require_tools h2load wrk openssl taskset curl perl getconf
require_two_cpus client

raise_nofile 20000
bench_workdir /tmp/gnh2.XXXXXX
bench_docroot
certs="$work/certs"

declare -A port

now()
{
    date +%s.%N
}

# --- certificates and docroot -----------------------------------------------

sh "$here/../t/mkcerts.sh" "$certs" || exit 1
random_file 1024 1 >"$doc/1k.bin"
random_file 1048576 3 >"$doc/1m.bin"
chmod 644 "$doc"/*

# --- configurations -----------------------------------------------------------
#
# Common: 127.0.0.1, one TLS listener with the ECDSA certificate, h2 and
# http/1.1 by ALPN, access log off, no limit of requests a connection
# (gannet and nginx default to 1000 and then send GOAWAY, which h2load
# counts as failures), 300 s idle timeout.

conf_gannet()
{
    gannet_conf "$work/gannet" 1 20000 <<EOF
tls_protocols TLSv1.2 TLSv1.3;
tls_session_cache 10m;

server {
    listen 127.0.0.1:${port[gannet]} tls backlog=4096;
    tls_certificate $certs/localhost-ec.pem;
    tls_certificate_key $certs/localhost-ec.key;
    root $doc;
    access_log off;
    http2 on;
    keepalive_requests 0;
    keepalive_timeout 300s;
    default_type application/octet-stream;
}
EOF
}

conf_nginx()
{
    nginx_conf "$work/nginx" 1 20000 20000 <<EOF
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;

    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1;
    ssl_session_cache shared:SSL:10m;
    ssl_prefer_server_ciphers on;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256;

    server {
        listen 127.0.0.1:${port[nginx]} ssl http2 backlog=4096;
        ssl_certificate $certs/localhost-ec.pem;
        ssl_certificate_key $certs/localhost-ec.key;
        root $doc;
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
  ssl:
    certificate-file: $certs/localhost-ec.pem
    key-file: $certs/localhost-ec.key
    minimum-version: TLSv1.2
    cipher-preference: server
num-threads: 1
user: root
pid-file: $d/h2o.pid
error-log: $d/error.log
max-connections: 20000
http1-request-timeout: 300
http2-idle-timeout: 300
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
    gannet) echo "$gannet_bin" ;;
    *)      echo "$1" ;;
    esac
}

# start_server SERVER: start it pinned to CPU 0, check both files over
# h2 and over HTTP/1.1, print the negotiated TLS parameters
start_server()
{
    local s=$1 cmd ok f v info
    port[$s]=$(free_port)
    cmd=$(conf_"$s")
    # shellcheck disable=SC2086
    spawn_server "$s" 0 "$work/$s.out" $cmd
    wait_url "https://127.0.0.1:${port[$s]}/1k.bin" -k
    ok=1
    for f in 1k.bin 1m.bin; do
        for v in --http2 --http1.1; do
            if ! curl -s --max-time 5 "$v" --cacert "$certs/ca.pem" \
                    --resolve "localhost:${port[$s]}:127.0.0.1" \
                    "https://localhost:${port[$s]}/$f" \
                    | cmp -s - "$doc/$f"; then
                echo "h2.sh: $s: $f over $v: not the docroot's bytes" >&2
                ok=0
            fi
        done
    done
    v=$(curl -s -o /dev/null -w '%{http_version}' --http2 -k \
        "https://127.0.0.1:${port[$s]}/1k.bin")
    [ "$v" = 2 ] || { echo "h2.sh: $s: curl --http2 got HTTP/$v" >&2; ok=0; }
    if [ "$ok" != 1 ]; then
        cat "$work/$s.out" "$work/$s"/logs/error.log "$work/$s"/error.log \
            2>/dev/null | tail -n 20 >&2
        return 1
    fi
    info=$(printf 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n' \
           | timeout 10 openssl s_client -connect "127.0.0.1:${port[$s]}" \
               -servername localhost -alpn h2,http/1.1 2>&1 \
           | perl -ne 'print "$1 $2 " if /^New, (\S+), Cipher is (\S+)/;
                       print "group $1 " if /^(?:Server Temp Key|Negotiated TLS1.3 group): (\S+?),?\s/;
                       print "alpn $1 " if /^ALPN protocol: (\S+)/;')
    echo "started $s: pid ${pid[$s]}, port ${port[$s]}," \
         "$(tree_pids "${pid[$s]}" | wc -l) process(es); $info" >&2
}

# --- one measured run ---------------------------------------------------------

# test_spec TEST: "KIND FILE M" (KIND h2load or wrk; M streams a connection)
test_spec()
{
    case "$1" in
    h2-1k-m10) echo "h2load 1k 10" ;;
    h2-1k-m1)  echo "h2load 1k 1" ;;
    h1-1k)     echo "wrk 1k -" ;;
    h2-1m)     echo "h2load 1m 1" ;;
    h1-1m)     echo "wrk 1m -" ;;
    *)         return 1 ;;
    esac
}

# client TEST PORT SECONDS: the load of TEST, pinned to CPU 1; output on
# stdout
client()
{
    local kind file m
    read -r kind file m <<<"$(test_spec "$1")"
    if [ "$kind" = wrk ]; then
        run_wrk 50 "$3" "" "https://127.0.0.1:$2/$file.bin"
    else
        timeout $(($3 + 30)) taskset -c 1 h2load -t1 -c50 -m"$m" -D"$3" \
            "https://127.0.0.1:$2/$file.bin" 2>&1
    fi
}

# h2load_parse OUTPUT: h2_reqs (succeeded), h2_errors (failed + errored
# + timeout + non-2xx, and 1 if the protocol was not h2)
h2load_parse()
{
    h2_reqs=$(perl -ne 'print $1 if /^requests: .* (\d+) succeeded/' <<<"$1")
    h2_errors=$(perl -ne '
        $e += $1 + $2 + $3
            if /^requests: .* (\d+) failed, (\d+) errored, (\d+) timeout/;
        $e += $1 + $2 + $3 if /^status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/;
        $h2 = 1 if /^Application protocol: h2$/;
        END { print $e + ($h2 ? 0 : 1) }' <<<"$1")
}

# run_one ROUND TEST SERVER
run_one()
{
    local r=$1 t=$2 s=$3 kind file m root t0 t1 c0 c1 w0 w1 out n err other
    read -r kind file m <<<"$(test_spec "$t")"
    root=${pid[$s]}
    if ! kill -0 "$root" 2>/dev/null; then
        echo "h2.sh: $s is gone" >&2
        return
    fi
    t0=$(tree_ticks "$root")
    c0=$(cpu0_busy)
    w0=$(now)
    out=$(client "$t" "${port[$s]}" "$duration")
    w1=$(now)
    c1=$(cpu0_busy)
    t1=$(tree_ticks "$root")
    echo "== round $r $t $s" >>"$work/client-$s.log"
    echo "$out" >>"$work/client-$s.log"
    if [ "$kind" = wrk ]; then
        wrk_parse "$out"
        n=$wrk_reqs
        err=$wrk_errors
    else
        h2load_parse "$out"
        n=$h2_reqs
        err=$h2_errors
    fi
    if [ -z "$n" ] || [ "$n" = 0 ]; then
        echo "h2.sh: $t against $s failed:" >&2
        tail -n 8 <<<"$out" >&2
        return
    fi
    other=$(cpu0_other "$c0" "$c1" "$((t1 - t0))")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$t" "$s" "$n" \
        "$(perl -e 'printf "%.3f", $ARGV[1] - $ARGV[0]' -- "$w0" "$w1")" \
        "$((t1 - t0))" "$err" "$other" >>"$results"
    printf '  round %s %-10s %-7s %8d req %8.1f us CPU/req  errors %s cpu0 other %s%%\n' \
        "$r" "$t" "$s" "$n" "$(ticks_us "$((t1 - t0))" "$n" 2)" "$err" \
        "$other" >&2
    if [ "$err" != 0 ]; then
        echo "h2.sh: $t against $s: $err failed requests; output:" >&2
        grep -E '^(requests|status codes|Application)' <<<"$out" >&2
    fi
}

# --- main -------------------------------------------------------------------

started=""
for s in $servers; do
    b=$(binary_of "$s")
    if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "$b" ]; then
        echo "h2.sh: $s: $b not found, skipped" >&2
        continue
    fi
    if start_server "$s"; then
        started="$started $s"
    else
        echo "h2.sh: $s skipped" >&2
    fi
done
[ -n "$started" ] || { echo "h2.sh: no server started" >&2; exit 1; }

echo "warming up (1 s per server and test)" >&2
for t in $tests; do
    test_spec "$t" >/dev/null || { echo "h2.sh: unknown test $t" >&2; exit 1; }
    for s in $started; do
        client "$t" "${port[$s]}" 1 >/dev/null
    done
done

for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    for t in $tests; do
        for s in $started; do
            run_one "$r" "$t" "$s"
        done
    done
done

[ -n "$raw_out" ] && cp "$results" "$raw_out"

# perf_top: perf record gannet's child (call graphs off: flat self time)
# for $perf_secs seconds under h2-1k-m10, then the top 15 symbols
perf_top()
{
    local child cpid
    child=$(tree_pids "${pid[gannet]}" | sed -n 2p)
    if ! command -v perf >/dev/null || [ -z "$child" ]; then
        echo "h2.sh: no perf or no gannet child: profile skipped" >&2
        return
    fi
    client h2-1k-m10 "${port[gannet]}" $((perf_secs + 2)) \
        >"$work/perf-client.log" &
    cpid=$!
    sleep 1
    perf record -q -o "$work/perf.data" -p "$child" -- sleep "$perf_secs" \
        >/dev/null 2>&1
    wait "$cpid"                     # not the servers: they are jobs too
    h2load_parse "$(cat "$work/perf-client.log")"
    echo
    echo "### perf: gannet child under h2-1k-m10, ${perf_secs} s" \
         "($h2_reqs requests, $h2_errors errors), top 15 symbols (self)"
    echo
    # a library without symbols (libnghttp2's static functions) gives
    # one row an address: those are summed as "DSO [unresolved]"
    perf report -i "$work/perf.data" --no-children --sort dso,symbol \
        --stdio 2>/dev/null | perl -ne '
            next unless /^\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)/;
            my ($pc, $dso, $sym) = ($1, $2, $4);
            $sym = "[unresolved]" if $sym =~ /^0x/;
            $t{"$dso $sym"} += $pc; $d{$dso} += $pc;
            END {
                my @k = sort { $t{$b} <=> $t{$a} } keys %t;
                printf "    %6.2f%%  %s\n", $t{$_}, $_ for @k[0 .. 14];
                print "\n    by object: ", join(", ", map { sprintf "%s %.1f%%",
                    $_, $d{$_} } sort { $d{$b} <=> $d{$a} } keys %d), "\n";
            }'
}
[ -n "$perf_secs" ] && [ -n "${pid[gannet]:-}" ] && perf_top

stop_all
for s in $started; do
    for f in "$work/$s/logs/error.log" "$work/$s/error.log"; do
        [ -f "$f" ] || continue
        echo "$s error log: $(grep -cE '\[(emerg|alert|crit|error)\]' "$f")" \
             "lines at error or worse, $(wc -l <"$f") in all" >&2
        grep -E '\[(emerg|alert|crit|error|warn)\]' "$f" | sort \
            | uniq -c | sort -rn | head -n 5 | sed 's/^/  /' >&2
    done
done

version_of()
{
    case "$1" in
    gannet) "$gannet_bin" -V 2>&1 | head -n 3 | tr '\n' ' ' ;;
    nginx)  nginx -V 2>&1 | head -n 2 | tr '\n' ' ' ;;
    h2o)    h2o -v 2>&1 | head -n 2 | tr '\n' ' ' ;;
    esac
}

echo
for s in $started; do
    echo "$s: $(version_of "$s")"
done
echo "client: $(h2load --version 2>&1 | head -n 1); $(wrk_version);" \
     "$(openssl version)"
echo "$rounds interleaved rounds of ${duration} s, medians; server on" \
     "CPU 0, client on CPU 1; CPU = server utime+stime / requests"
perl -e "$bench_pl"'
    my ($file, $tck, $order) = @ARGV; my (%d, @tests, %seen);
    my @srv = split " ", $order;
    my %name = (
        "h2-1k-m10" => "1 KiB over h2, h2load -t1 -c50 -m10",
        "h2-1k-m1"  => "1 KiB over h2, h2load -t1 -c50 -m1",
        "h1-1k"     => "1 KiB over HTTP/1.1 + TLS keep-alive, wrk -t1 -c50",
        "h2-1m"     => "1 MiB over h2, h2load -t1 -c50 -m1",
        "h1-1m"     => "1 MiB over HTTP/1.1 + TLS keep-alive, wrk -t1 -c50");
    my %bytes = ("h2-1m" => 1048576, "h1-1m" => 1048576);
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp;
        my ($r, $t, $s, $n, $wall, $ticks, $err, $o) = split /\t/;
        push @tests, $t unless $seen{$t}++;
        my $x = $d{$t}{$s} ||= {};
        push @{$x->{rate}}, $n / $wall;
        push @{$x->{cpu}}, $ticks / $tck / $n * 1e6;
        push @{$x->{other}}, $o;
        $x->{n} += $n; $x->{err} += $err;
    }
    for my $t (@tests) {
        printf "\n### %s\n\n", $name{$t} || $t;
        my $b = $bytes{$t};
        printf "| server | requests/s | CPU us/request | vs nginx |%s requests (all rounds) | errors | CPU0 other |\n",
            $b ? " CPU ns/byte |" : "";
        printf "|--------|------:|------:|------:|%s------:|------:|------:|\n",
            $b ? "------:|" : "";
        my $nx = $d{$t}{nginx};
        my $nc = $nx ? med(@{$nx->{cpu}}) : 0;
        for my $s (@srv) {
            my $x = $d{$t}{$s} or next;
            my ($r, $c) = (med(@{$x->{rate}}), med(@{$x->{cpu}}));
            printf "| %s | %.0f | %.2f | %s |%s %d | %d | %s%% |\n",
                $s, $r, $c, ratio($c, $nc),
                $b ? sprintf(" %.3f |", $c * 1000 / $b) : "",
                $x->{n}, $x->{err}, join("/", @{$x->{other}});
        }
    }
    # gannet h2 against its own HTTP/1.1 and the peers
    my $g = sub { my ($t, $s) = @_; my $x = $d{$t}{$s || "gannet"};
                  $x ? med(@{$x->{cpu}}) : 0 };
    print "\n### Ratios of medians (CPU per request)\n\n";
    print "| comparison | ratio |\n|---|---:|\n";
    for my $p (["h2-1k-m10", "h1-1k"], ["h2-1k-m1", "h1-1k"],
               ["h2-1m", "h1-1m"]) {
        printf "| gannet %s / gannet %s | %s |\n", @$p,
            ratio($g->(@$p[0]), $g->(@$p[1]));
    }
    for my $t ("h2-1k-m10", "h2-1k-m1", "h2-1m") {
        for my $s (grep { $_ ne "gannet" } @srv) {
            printf "| gannet %s / %s %s | %s |\n", $t, $s, $t,
                ratio($g->($t), $g->($t, $s));
        }
    }
' "$results" "$clk_tck" "$started"
