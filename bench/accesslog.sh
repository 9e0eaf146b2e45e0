#!/usr/bin/env bash
# Access log formats: CPU per request of one gannet child (pinned to CPU
# 0) under wrk (pinned to CPU 1), for: no access log, the combined text
# log, the binary log, each unbuffered and with buffer=64k.  Interleaved
# rounds; prints one TSV line per run and the medians.
#
#   bench/accesslog.sh [--gannet BIN] [--rounds N] [--duration S]
#                      [--connections C]

set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

GANNET=${GANNET:-core/gannet}
ROUNDS=3
DURATION=5
CONNS=50

while [ $# -gt 0 ]; do
    case $1 in
    --gannet) GANNET=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --connections) CONNS=$2; shift 2 ;;
    *) echo "usage: $0 [--gannet BIN] [--rounds N] [--duration S]" \
            "[--connections C]" >&2; exit 1 ;;
    esac
done

case $GANNET in /*) ;; *) GANNET=$(pwd)/$GANNET ;; esac
command -v wrk >/dev/null || { echo "$0: wrk not found" >&2; exit 1; }

bench_workdir /tmp/gn-bench-log.XXXXXX
stop_signal=QUIT                # graceful: buffered logs are flushed
mkdir -p "$work/html" "$work/logs"
head -c 1024 /dev/zero | tr '\0' x > "$work/html/1k.html"
PORT=18377

run() {                                 # run NAME ACCESS_LOG_LINES
    local name=$1 t0 t1 out size
    cat > "$work/gannet.conf" <<EOC
children 1;
user $(id -un);
error_log logs/error.log;
server {
    listen 127.0.0.1:$PORT;
    types { text/html html; }
    access_log off;
    $2
}
EOC
    rm -f "$work"/logs/*.log "$work"/logs/*.bin
    spawn_server gannet 0 "$work/gannet.out" \
        "$GANNET" -f -p "$work/" -c "$work/gannet.conf"
    if ! wait_url "http://127.0.0.1:$PORT/1k.html"; then
        echo "$0: gannet did not start ($name):" >&2
        cat "$work/gannet.out" >&2
        exit 1
    fi
    t0=$(tree_ticks "${pid[gannet]}")
    out=$(run_wrk "$CONNS" "$DURATION" "" "http://127.0.0.1:$PORT/1k.html")
    t1=$(tree_ticks "${pid[gannet]}")
    stop_server gannet
    wrk_parse "$out"
    size=$(cat "$work"/logs/a.* 2>/dev/null | wc -c)
    echo "$name	$wrk_reqs	$t0	$t1	$size" \
        | awk -v tick="$clk_tck" -v d="$DURATION" '
        { cpu = ($4 - $3) / tick;
          printf "%s\t%.0f\t%.2f\t%.1f\n", $1, $2 / d, cpu * 1e6 / $2,
                 ($2 ? $5 / $2 : 0) }' | tee -a "$results"
}

echo "format	req/s	CPU_us/req	log_bytes/req" >&2
for r in $(seq "$ROUNDS"); do
    run off ""
    run combined "access_log logs/a.log combined;"
    run combined-buf "access_log logs/a.log combined buffer=64k;"
    run binary "access_log logs/a.bin binary;"
    run binary-buf "access_log logs/a.bin binary buffer=64k;"
done

echo "medians:"
for f in off combined combined-buf binary binary-buf; do
    awk -v f="$f" '$1 == f' "$results" | sort -t'	' -k3 -n \
        | awk -v n="$ROUNDS" 'NR == int((n + 1) / 2)'
done
