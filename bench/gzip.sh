#!/usr/bin/env bash
#
# bench/gzip.sh - on-the-fly gzip of a 100 KiB HTML file: server CPU per
# request of gannet's `gzip on` beside nginx's, at the same level (issue
# 23: at most 0.8 x nginx's, thanks to the compressed-output cache).
#
# Servers: "gannet" (gzip on, its default gzip_cache_size: the file is
# compressed once, then served from the open-file cache), "gannet-nc"
# (gzip_cache_size 0: compressed on every request, as nginx does; the
# compressor's own cost) and "nginx" (gzip on; gzip_types text/html is
# its default). Every server: one worker/child pinned to CPU 0, no
# access log, keep-alive; wrk -t1 on CPU 1 with "Accept-Encoding: gzip".
# Before the runs every server's compressed response is fetched and
# inflated: it must be the file. For each round, each server
# (interleaved): CPU per request = delta of the server tree's CPU time /
# requests completed; medians and ratios to nginx.
#
# The file: HTML of pseudo-random words from a fixed list and seed (so
# every run serves the same bytes), which compresses about as real pages
# do (3-4 x).
#
# Usage: bench/gzip.sh [--rounds N] [--duration S] [--servers "LIST"]
#                      [--level N] [--conns N] [--gannet PATH]
#                      [--raw FILE] [--keep]
#   --rounds N     interleaved rounds (default 5; medians are reported)
#   --duration S   seconds per wrk run (default 5)
#   --servers L    subset/order of "gannet gannet-nc nginx"
#   --level N      gzip_comp_level of every server (default 1, both
#                  servers' default)
#   --conns N      wrk connections (default 50)
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --raw FILE     also write the raw per-run results (TSV) to FILE
#   --keep         keep the temporary directory (configs, error logs)
#
# Needs: wrk, taskset, curl, perl; nginx (nginx-light or nginx). 2 CPUs.

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rounds=5
duration=5
servers="gannet gannet-nc nginx"
level=1
conns=50
gannet_bin="$here/../core/gannet"
raw_out=""
keep=0

parse_options "--rounds=rounds --duration=duration --servers=servers
               --level=level --conns=conns --gannet=gannet_bin
               --raw=raw_out --keep=keep:1" "$@"

require_tools wrk taskset curl perl getconf
require_two_cpus wrk

raise_nofile 20000
bench_workdir /tmp/gnbench.XXXXXX
bench_docroot

declare -A port

perl -e '
    srand(7);
    my @w = qw(the server request response file cache module stream
               connection header body client upstream gzip level child
               master event loop TLS session ticket key memory buffer
               and of to in for with on by a is that as are be this);
    my $out = "<!DOCTYPE html>\n<html><head><title>bench</title></head>"
              . "<body>\n";
    my $n = 0;
    while (length($out) < 102400 - 200) {
        $n++;
        $out .= "<div class=\"item\" id=\"i$n\"><h2>Item $n</h2><p>";
        $out .= join(" ", map { $w[int(rand(@w))] } 1 .. 12 + int(rand(30)));
        $out .= sprintf(" <a href=\"/page/%d\">%d</a></p></div>\n",
                        int(rand(100000)), int(rand(1000)));
    }
    $out .= "</body></html>\n";
    print substr($out, 0, 102400 - 15), "</body></html>\n";
' >"$doc/100k.html"
chmod 644 "$doc/100k.html"

conf_gannet()
{
    gannet_conf "$work/$1" 1 20000 <<EOF
gzip_cache_size $2;

server {
    listen 127.0.0.1:${port[$1]} backlog=4096;
    root $doc;
    access_log off;
    keepalive_requests 0;
    keepalive_timeout 300s;
    types { text/html html; }
    gzip on;
    gzip_comp_level $level;
}
EOF
}

conf_nginx()
{
    nginx_conf "$work/nginx" 1 20000 20000 <<EOF
    sendfile on;
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    types { text/html html; }
    gzip on;
    gzip_comp_level $level;

    server {
        listen 127.0.0.1:${port[nginx]} backlog=4096;
        root $doc;
    }
EOF
}

start_server()
{
    local s=$1 cmd
    port[$s]=$(free_port)
    case "$s" in
    gannet)    cmd=$(conf_gannet gannet 16m) ;;
    gannet-nc) cmd=$(conf_gannet gannet-nc 0) ;;
    nginx)     cmd=$(conf_nginx) ;;
    esac
    # shellcheck disable=SC2086
    spawn_server "$s" 0 "$work/$s.out" $cmd
    wait_url "http://127.0.0.1:${port[$s]}/100k.html" || return 1
    if ! curl -s --max-time 5 -H 'Accept-Encoding: gzip' -D "$work/$s.hdr" \
            "http://127.0.0.1:${port[$s]}/100k.html" | gzip -dc \
            | cmp -s - "$doc/100k.html" \
       || ! grep -qi '^content-encoding: gzip' "$work/$s.hdr"
    then
        echo "gzip.sh: $s does not send the file gzipped; output:" >&2
        cat "$work/$s.out" "$work/$s.hdr" >&2
        return 1
    fi
    echo "started $s: pid ${pid[$s]}, port ${port[$s]}: $cmd" >&2
}

run_one()
{
    local r=$1 s=$2 t0 t1 c0 c1 out other
    c0=$(cpu0_busy)
    t0=$(tree_ticks "${pid[$s]}")
    out=$(run_wrk "$conns" "$duration" "" \
              "http://127.0.0.1:${port[$s]}/100k.html" \
              -H 'Accept-Encoding: gzip')
    t1=$(tree_ticks "${pid[$s]}")
    c1=$(cpu0_busy)
    wrk_parse "$out"
    if [ -z "$wrk_rps" ] || [ -z "$wrk_reqs" ]; then
        echo "gzip.sh: wrk failed against $s:" >&2
        echo "$out" >&2
        return
    fi
    other=$(cpu0_other "$c0" "$c1" "$((t1 - t0))")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$wrk_rps" "$wrk_reqs" \
        "$((t1 - t0))" "$wrk_errors" "$other" >>"$results"
    printf '  round %s %-10s %9.0f req/s %8.2f us CPU/req  errors %s  cpu0 other %s%%\n' \
        "$r" "$s" "$wrk_rps" "$(ticks_us "$((t1 - t0))" "$wrk_reqs")" \
        "$wrk_errors" "$other" >&2
}

started=""
for s in $servers; do
    case "$s" in
    nginx) command -v nginx >/dev/null 2>&1 \
               || { echo "gzip.sh: nginx not found, skipped" >&2; continue; } ;;
    gannet|gannet-nc) ;;
    *) echo "gzip.sh: unknown server $s" >&2; exit 2 ;;
    esac
    if start_server "$s"; then
        started="$started $s"
    else
        echo "gzip.sh: $s skipped" >&2
    fi
done
[ -n "$started" ] || { echo "gzip.sh: no server started" >&2; exit 1; }

echo "warming up (1 s per server)" >&2
for s in $started; do
    run_wrk "$conns" 1 "" "http://127.0.0.1:${port[$s]}/100k.html" \
        -H 'Accept-Encoding: gzip' >/dev/null
done

for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    for s in $started; do
        run_one "$r" "$s"
    done
done

[ -n "$raw_out" ] && cp "$results" "$raw_out"

echo
echo "gannet: $("$gannet_bin" -v 2>&1 | head -n 1)"
command -v nginx >/dev/null 2>&1 && echo "nginx: $(nginx -v 2>&1 | head -n 1)"
echo "wrk: $(wrk_version)"
echo "100k.html: $(stat -c %s "$doc/100k.html") bytes, gzip level $level:" \
     "$(gzip -"$level" -c "$doc/100k.html" | wc -c) bytes compressed"
echo "wrk -t1 -c$conns -d${duration}s -H 'Accept-Encoding: gzip'," \
     "$rounds interleaved rounds, medians; server on CPU 0, wrk on CPU 1;" \
     "CPU = server utime+stime / requests"
perl -e "$bench_pl"'
    my ($file, $tck, $order) = @ARGV; my %d;
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp; my ($r, $s, $rps, $n, $ticks, $err, $o) = split /\t/;
        push @{$d{$s}{rps}}, $rps;
        push @{$d{$s}{cpu}}, $n ? $ticks / $tck / $n * 1e6 : 0;
        push @{$d{$s}{other}}, $o;
        $d{$s}{err} += $err;
    }
    print "\n| server    |     req/s | vs nginx | CPU us/req | vs nginx | errors | CPU0 other |\n";
    print "|-----------|----------:|---------:|-----------:|---------:|-------:|-----------:|\n";
    my $n = $d{nginx};
    my ($nr, $nc) = $n ? (med(@{$n->{rps}}), med(@{$n->{cpu}})) : (0, 0);
    for my $s (split " ", $order) {
        my $x = $d{$s} or next;
        my ($r, $c) = (med(@{$x->{rps}}), med(@{$x->{cpu}}));
        printf "| %-9s | %9.0f | %8s | %10.2f | %8s | %6d | %9s%% |\n",
            $s, $r, ratio($r, $nr), $c, ratio($c, $nc), $x->{err},
            join("/", @{$x->{other}});
    }
' "$results" "$clk_tck" "$started"
