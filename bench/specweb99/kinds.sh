#!/usr/bin/env bash
#
# bench/specweb99/kinds.sh - server CPU per request of each kind of
# SPECweb99 operation, alone: a static GET, a dynamic GET (the module's
# wrapper around the file), a GET with custom ad rotation (CAD: the
# cookie, the ad lookup and the tag rewrite) and a POST (the shared post
# log), each for the same file.  Where run.sh gives one figure for the
# whole mix, this says which kind costs what, and with several build
# trees it is an A/B of a change.
#
# One gannet (one child) per build, pinned to CPU 0, wrk -t1 with
# keep-alive connections on CPU 1.  For each round, each build, each kind
# (builds alternating their order from round to round) the server's CPU
# time over the wrk run (utime+stime of its process tree) divided by the
# requests; medians over the rounds.
#
# Usage: bench/specweb99/kinds.sh --root DIR [--builddirs "DIR..."]
#            [--rounds N] [--duration S] [--conns C] [--file PATH]
#            [--kinds "LIST"] [--tls] [--raw FILE] [--keep]
#   --root DIR      the file set (gannet-specweb99 fileset, upfgen,
#                   cadgen: run.sh --keep leaves one, or see README.md)
#   --builddirs L   build trees to compare (default: this source tree);
#                   DIR:isapi serves the dynamic kinds of DIR through
#                   mod_isapi and modules/specweb99/isapi_specweb99.so
#                   instead of mod_specweb99 (so "DIR DIR:isapi" compares
#                   the two); it writes ROOT/specweb99.tool
#   --rounds N      interleaved rounds (default 3)
#   --duration S    seconds per wrk run (default 4)
#   --conns C       keep-alive connections (default 50)
#   --file PATH     the file every request names, under ROOT (default
#                   /file_set/dir00003/class1_4: 5 KB, the most
#                   requested file of the most requested class)
#   --kinds L       a subset of "static dyn cad post big new" (default
#                   the first four); big: a static GET of a 60 KB file
#                   (/file_set/dir00003/class2_5, several TLS records),
#                   new: the static GET with "Connection: close", one
#                   connection per request (over TLS a full handshake
#                   each: wrk does not resume sessions)
#   --tls           over HTTPS (ECDSA P-256 certificate, TLS 1.3 as wrk's
#                   OpenSSL negotiates it) instead of HTTP
#   --raw FILE      also write the per-run results (TSV) to FILE
#   --keep          keep the temporary directory (configs, logs)
#
# The POSTs append records to ROOT/post.log.  Needs: wrk, taskset, curl,
# perl; 2 CPUs; root (the servers run as root, like run.sh's).  Not
# while other benchmarks run.

# shellcheck disable=SC2154,SC2034
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=../lib.sh disable=SC2154
. "$top/bench/lib.sh"

root=""
builddirs=$top
rounds=3
duration=4
conns=50
file=/file_set/dir00003/class1_4
kinds="static dyn cad post"
tls=0
raw_out=""
keep=0

parse_options "--root=root --builddirs=builddirs --rounds=rounds
               --duration=duration --conns=conns --file=file --kinds=kinds
               --tls=tls:1 --raw=raw_out --keep=keep:1" "$@"

require_tools wrk taskset curl perl getconf
require_two_cpus wrk
if [ -z "$root" ] || [ ! -f "$root$file" ]; then
    echo "$me: --root DIR with $file in it is needed" >&2
    exit 1
fi
root=$(cd "$root" && pwd)

raise_nofile 20000
bench_workdir /tmp/gnkinds.XXXXXX

cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.body = "urlroot=/file_set/&dir=${file#/file_set/dir}"
wrk.body = wrk.body:gsub("/class(%d)_(%d)$", "&class=%1&num=%2&client=7")
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
EOF
cookie="Cookie: my_cookie=user_id=10003&last_ad=7"
big=/file_set/dir00003/class2_5
declare -A url=([static]="$file" [dyn]="/specweb99?$file"
                [cad]="/specweb99?$file" [post]="/specweb99" [big]="$big"
                [new]="$file")
for k in $kinds; do
    [ -n "${url[$k]:-}" ] || { echo "$me: unknown kind $k" >&2; exit 1; }
done
[ ! -f "$root$big" ] && [ "${kinds/big/}" != "$kinds" ] \
    && { echo "$me: no $big under $root" >&2; exit 1; }

scheme=http listen_tls="" tls_conf=""
if [ "$tls" = 1 ]; then
    certs=$top/t/certs
    if [ ! -f "$certs/stamp" ]; then
        certs=$work/certs
        sh "$top/t/mkcerts.sh" "$certs" >/dev/null 2>&1 \
            || { echo "$me: cannot make certificates (certtool?)" >&2; exit 1; }
    fi
    scheme=https listen_tls=" tls"
    tls_conf="tls_certificate $certs/localhost-ec.pem;
    tls_certificate_key $certs/localhost-ec.key;"
fi

# start BUILD INDEX [isapi]: a gannet of BUILD with mod_specweb99 (or the
# ISAPI extension) on ROOT; sets port[INDEX] and server[INDEX]
declare -A port server
start()
{
    local b=$1 i=$2 d=$work/g$2 cmd mod loc
    port[$i]=$(free_port)
    gannet_bin=$b/core/gannet               # gannet_conf's command line
    mod=$b/modules/.libs/mod_specweb99.so
    loc="handler specweb99;
        specweb99_root $root;
        specweb99_tool $b/tools/gannet-specweb99;"
    if [ "${3:-}" = isapi ]; then
        echo "$b/tools/gannet-specweb99" >"$root/specweb99.tool"
        mod=$b/modules/.libs/mod_isapi.so
        loc="handler isapi;
        isapi_extension $b/modules/specweb99/.libs/isapi_specweb99.so;"
    fi
    cmd=$(gannet_conf "$d" 1 20000 <<EOF
load_module $mod;
file_cache_entries 20000;
file_cache_valid 60s;
symlinks_outside_root on;

server {
    listen 127.0.0.1:${port[$i]}$listen_tls backlog=4096;
    $tls_conf
    root $root;
    access_log off;
    keepalive_requests 0;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    location /specweb99 {
        $loc
    }
}
EOF
)
    # shellcheck disable=SC2086
    spawn_server "g$i" 0 "$d/gannet.out" $cmd
    server[$i]=${pid[g$i]}
    wait_url "$scheme://127.0.0.1:${port[$i]}$file" -k \
        || { echo "$me: gannet of $b did not start" >&2;
             cat "$d/gannet.out" "$d/logs/error.log" >&2; exit 1; }
}

# run_one ROUND INDEX KIND
run_one()
{
    local r=$1 i=$2 k=$3 c0 c1 out opt=() close=keep
    case $k in
    cad)  opt=(-H "$cookie") ;;
    post) opt=(-H "$cookie" -s "$work/post.lua") ;;
    new)  close=close ;;
    esac
    c0=$(tree_cpu_ns "${server[$i]}")
    out=$(run_wrk "$conns" "$duration" "$close" \
              "$scheme://127.0.0.1:${port[$i]}${url[$k]}" "${opt[@]}")
    c1=$(tree_cpu_ns "${server[$i]}")
    wrk_parse "$out"
    if [ -z "$wrk_reqs" ] || [ "$wrk_reqs" = 0 ] || [ "$wrk_errors" != 0 ]
    then
        echo "$me: wrk failed or saw errors ($k, build $i):" >&2
        echo "$out" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$i" "$k" "$wrk_reqs" \
        "$((c1 - c0))" >>"$results"
    printf '  round %s build %s %-6s %9.0f req/s %7.2f us CPU/req\n' \
        "$r" "$i" "$k" "$wrk_rps" \
        "$(perl -e 'printf "%.3f", $ARGV[0] / $ARGV[1] / 1000' -- \
            "$((c1 - c0))" "$wrk_reqs")" >&2
}

n=0
for b in $builddirs; do
    dyn=native
    case "$b" in
    *:isapi) dyn=isapi b=${b%:isapi} ;;
    esac
    b=$(cd "$b" && pwd)
    if [ ! -x "$b/core/gannet" ] || [ ! -f "$b/modules/.libs/mod_specweb99.so" ]
    then
        echo "$me: $b: no core/gannet or mod_specweb99.so" >&2
        exit 1
    fi
    start "$b" "$n" "$dyn"
    echo "build $n: $b $dyn ($(git -C "$b" log -1 --format=%h 2>/dev/null)):" \
         "gannet pid ${server[$n]}, port ${port[$n]}" >&2
    n=$((n + 1))
done

for i in $(seq 0 $((n - 1))); do              # warm the caches up
    for k in $kinds; do
        run_wrk "$conns" 1 keep "$scheme://127.0.0.1:${port[$i]}${url[$k]}" \
            >/dev/null
    done
done

for r in $(seq 1 "$rounds"); do
    order=$(seq 0 $((n - 1)))
    [ $((r % 2)) = 0 ] && order=$(seq $((n - 1)) -1 0)
    for i in $order; do
        for k in $kinds; do
            run_one "$r" "$i" "$k"
        done
    done
done

[ -n "$raw_out" ] && cp "$results" "$raw_out"

echo
echo "wrk -t1 -c$conns -d${duration}s keep-alive, $rounds interleaved" \
     "rounds, medians; one gannet child on CPU 0, wrk on CPU 1;" \
     "$scheme; file $file"
# shellcheck disable=SC2086
perl -e "$bench_pl"'
    my ($file, $n, @kinds) = @ARGV; my %d;
    open my $fh, "<", $file or die;
    while (<$fh>) { chomp; my ($r, $i, $k, $req, $ns) = split /\t/;
                    push @{$d{$k}{$i}}, $ns / $req / 1000; }
    print "| kind |", join("", map { " build $_ us/req |" } 0 .. $n - 1),
          ($n > 1 ? join("", map { " $_/0 |" } 1 .. $n - 1) : ""), "\n";
    print "|---|", "---:|" x ($n + ($n > 1 ? $n - 1 : 0)), "\n";
    for my $k (@kinds) {
        my @m = map { med(@{$d{$k}{$_} || []}) } 0 .. $n - 1;
        print "| $k |", join("", map { sprintf " %.2f |", $_ } @m),
              join("", map { " " . ratio($m[$_], $m[0]) . " |" } 1 .. $n - 1),
              "\n";
    }
' "$results" "$n" $kinds
