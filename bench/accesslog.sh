#!/bin/sh
# Access log formats: CPU per request of one gannet child (pinned to CPU
# 0) under wrk (pinned to CPU 1), for: no access log, the combined text
# log, the binary log, each unbuffered and with buffer=64k.  Interleaved
# rounds; prints one TSV line per run and the medians.
#
#   bench/accesslog.sh [--gannet BIN] [--rounds N] [--duration S]
#                      [--connections C]

set -eu

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

DIR=$(mktemp -d /tmp/gn-bench-log.XXXXXX)
trap 'kill $(cat "$DIR/logs/gannet.pid" 2>/dev/null) 2>/dev/null || true;
      rm -rf "$DIR"' EXIT INT TERM
mkdir -p "$DIR/html" "$DIR/logs"
head -c 1024 /dev/zero | tr '\0' x > "$DIR/html/1k.html"
PORT=18377
TICK=$(getconf CLK_TCK)

# server tree CPU ticks (utime + stime of master and children)
ticks() {
    t=0
    for p in $(cat "$DIR/logs/gannet.pid") $(pgrep -P "$(cat "$DIR/logs/gannet.pid")"); do
        set -- $(sed 's/^.*) //' "/proc/$p/stat")
        t=$((t + ${12} + ${13}))
    done
    echo $t
}

run() {                                 # run NAME ACCESS_LOG_LINES
    name=$1
    cat > "$DIR/gannet.conf" <<EOC
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
    rm -f "$DIR"/logs/*.log "$DIR"/logs/*.bin
    taskset -c 0 "$GANNET" -f -p "$DIR/" -c "$DIR/gannet.conf" &
    gpid=$!
    sleep 0.5
    curl -s -o /dev/null "http://127.0.0.1:$PORT/1k.html" || true
    t0=$(ticks)
    out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" \
          "http://127.0.0.1:$PORT/1k.html")
    t1=$(ticks)
    kill -QUIT $gpid; wait $gpid || true
    reqs=$(echo "$out" | awk '/requests in/ { print $1 }')
    size=$(cat "$DIR"/logs/a.* 2>/dev/null | wc -c)
    echo "$name	$reqs	$t0	$t1	$size" | awk -v tick="$TICK" -v d="$DURATION" '
        { cpu = ($4 - $3) / tick;
          printf "%s\t%.0f\t%.2f\t%.1f\n", $1, $2 / d, cpu * 1e6 / $2,
                 ($2 ? $5 / $2 : 0) }'
}

echo "format	req/s	CPU_us/req	log_bytes/req" >&2
for r in $(seq "$ROUNDS"); do
    run off ""
    run combined "access_log logs/a.log combined;"
    run combined-buf "access_log logs/a.log combined buffer=64k;"
    run binary "access_log logs/a.bin binary;"
    run binary-buf "access_log logs/a.bin binary buffer=64k;"
done | tee "$DIR/raw.tsv"

echo "medians:"
for f in off combined combined-buf binary binary-buf; do
    awk -v f="$f" '$1 == f' "$DIR/raw.tsv" | sort -t'	' -k3 -n \
        | awk -v n="$ROUNDS" 'NR == int((n + 1) / 2)'
done
