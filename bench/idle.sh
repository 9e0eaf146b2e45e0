#!/usr/bin/env bash
#
# bench/idle.sh - memory per idle keep-alive connection held by one child.
#
# For each server (gannet, nginx), starts it with one child/worker, opens
# N connections from a client process, each of which completes one request
# (so it sits in keep-alive state, waiting for its next request), and
# compares the child's memory (Rss, Pss, Private_Dirty from
# /proc/PID/smaps_rollup) before and after.  The kernel's socket buffers
# are not the server's memory; /proc/net/sockstat's TCP "mem" (pages,
# both ends of every loopback connection) is shown separately.
#
# Usage: bench/idle.sh [--conns N] [--servers "gannet nginx"]
#                      [--gannet PATH] [--keep]
#   --conns N      idle connections (default 10000; needs ulimit -Hn > N+100)
#   --servers L    subset/order of "gannet nginx"
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --keep         keep the temporary directory
#
# Each server is configured for max_connections / worker_connections of
# N + N/8 + 64 (nginx drains idle keep-alive connections when fewer than
# 1/16 of its connections are free).  nginx preallocates its connection
# and event structures for that limit at start: they show in the
# baseline, not in the delta, so the table gives the total Rss after too.

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

conns=10000
servers="gannet nginx"
gannet_bin="$here/../core/gannet"
keep=0

parse_options "--conns=conns --servers=servers --gannet=gannet_bin
               --keep=keep:1" "$@"

need=$((conns + conns / 8 + 200))
ulimit -n "$need" 2>/dev/null || {
    echo "idle.sh: cannot raise ulimit -n to $need (hard limit" \
         "$(ulimit -Hn))" >&2
    exit 1
}
# nginx closes idle keep-alive connections once fewer than 1/16 of its
# worker_connections are free (ngx_drain_connections), so leave room.
limit=$((conns + conns / 8 + 64))
py=$(command -v python3) || { echo "idle.sh: python3 not found" >&2; exit 1; }

bench_workdir /tmp/gnidle.XXXXXX
bench_docroot
perl -e 'srand(1); print map { chr(int rand 256) } 1 .. 1024' >"$doc/1k.bin"
chmod 644 "$doc/1k.bin"

# child_pids KEY: the direct children of the server pid[KEY], one a line.
child_pids()
{
    cat /proc/"${pid[$1]}"/task/*/children 2>/dev/null | tr ' ' '\n' | grep .
}

# "Rss Pss Private_Dirty" in kB
mem_of()
{
    awk '/^Rss:/ {r = $2} /^Pss:/ {p = $2} /^Private_Dirty:/ {d = $2}
         END {print r, p, d}' "/proc/$1/smaps_rollup"
}

tcp_mem_pages()
{
    awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "mem") print $(i + 1) }' \
        /proc/net/sockstat
}

cat >"$work/client.py" <<'EOF'
# Open N keep-alive connections, complete one request on each, report
# "ready N", hold them until stdin says anything (or closes), then exit.
import selectors, socket, sys, errno

host, port, n, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
req = ("GET %s HTTP/1.1\r\nHost: bench\r\nUser-Agent: idle.py\r\n\r\n"
       % path).encode()
sel = selectors.DefaultSelector()
held, pending, opened, failed = [], 0, 0, 0
INFLIGHT = 256


def open_one():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_WRITE, {"buf": b"", "sent": False})


while len(held) + failed < n:
    while pending < INFLIGHT and opened < n:
        open_one()
        opened += 1
        pending += 1
    for key, ev in sel.select(timeout=10):
        s, st = key.fileobj, key.data
        try:
            if not st["sent"]:
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    raise OSError(err, "connect")
                s.send(req)
                st["sent"] = True
                sel.modify(s, selectors.EVENT_READ, st)
                continue
            data = s.recv(65536)
            if not data:
                raise OSError(errno.ECONNRESET, "closed by server")
            st["buf"] += data
            head, sep, body = st["buf"].partition(b"\r\n\r\n")
            if not sep:
                continue
            clen = 0
            for line in head.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    clen = int(v)
            if len(body) < clen:
                continue
            if not head.startswith(b"HTTP/1.1 200"):
                raise OSError(0, head.split(b"\r\n")[0].decode())
            sel.unregister(s)
            held.append(s)
            pending -= 1
        except OSError as e:
            if failed < 5:
                print("client: %s" % e, file=sys.stderr)
            sel.unregister(s)
            s.close()
            failed += 1
            pending -= 1

print("ready %d failed %d" % (len(held), failed), flush=True)
sys.stdin.readline()
for s in held:
    s.close()
EOF

# conf_gannet, conf_nginx: write the configuration, print the command
conf_gannet()
{
    gannet_conf "$work/gannet" 1 "$limit" <<EOF

server {
    listen 127.0.0.1:$port backlog=4096;
    root $doc;
    access_log off;
    keepalive_timeout 600s;
    keepalive_requests 1000000000;
    client_header_timeout 600s;
}
EOF
}

conf_nginx()
{
    nginx_conf "$work/nginx" 1 "$need" "$limit" <<EOF
    keepalive_timeout 600s;
    keepalive_requests 1000000000;
    client_header_timeout 600s;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$port backlog=4096;
        root $doc;
    }
EOF
}

rows=""
for s in $servers; do
    port=$(free_port)
    if ! declare -F "conf_$s" >/dev/null; then
        echo "idle.sh: unknown server $s" >&2
        continue
    fi
    # shellcheck disable=SC2046
    spawn_server "$s" "" "$work/$s/out" $("conf_$s")
    wait_url "http://127.0.0.1:$port/1k.bin"
    child=$(child_pids "$s" | head -n 1)
    if [ -z "$child" ] || ! curl -sf -o /dev/null "http://127.0.0.1:$port/1k.bin"; then
        echo "idle.sh: $s did not start:" >&2
        cat "$work/$s/out" >&2
        stop_server "$s"
        continue
    fi
    # A few requests first, so lazily allocated per-child state is there.
    for _ in 1 2 3 4 5 6 7 8; do
        curl -s -o /dev/null "http://127.0.0.1:$port/1k.bin"
    done
    sleep 0.5
    read -r rss0 pss0 pd0 <<<"$(mem_of "$child")"
    tcp0=$(tcp_mem_pages)

    coproc CLIENT { "$py" "$work/client.py" 127.0.0.1 "$port" "$conns" /1k.bin; }
    read -r -t 300 ready held _ failed <&"${CLIENT[0]}"
    sleep 1
    read -r rss1 pss1 pd1 <<<"$(mem_of "$child")"
    tcp1=$(tcp_mem_pages)
    est=$(find "/proc/$child/fd" -lname 'socket:*' 2>/dev/null | wc -l)
    echo "close" >&"${CLIENT[1]}"
    wait "$CLIENT_PID" 2>/dev/null
    sleep 1
    read -r rss2 pss2 pd2 <<<"$(mem_of "$child")"

    if [ "$ready" != ready ] || [ "${held:-0}" -eq 0 ]; then
        echo "idle.sh: $s: client failed" >&2
        stop_server "$s"
        continue
    fi
    echo "$s: child $child had $est sockets open" \
         "(client: $held held, $failed failed)" >&2
    rows="$rows$s $held $failed $est $rss0 $rss1 $pss0 $pss1 $pd0 $pd1 $tcp0 $tcp1 $rss2
"
    stop_server "$s"
done

echo
echo "$conns idle keep-alive connections (one completed GET of a 1 KiB file" \
     "each), one child; memory of that child"
echo
echo "| server | held | Rss before | Rss after | Rss after close | Rss B/conn | Pss B/conn | Private_Dirty B/conn | kernel TCP mem B/conn (both ends) |"
echo "|--------|-----:|-----------:|----------:|----------------:|-----------:|-----------:|---------------------:|----------------------------------:|"
printf '%s' "$rows" | awk '
NF {
    n = $2
    printf "| %s | %d | %d kB | %d kB | %d kB | %.0f | %.0f | %.0f | %.0f |\n",
        $1, n, $5, $6, $13, ($6 - $5) * 1024 / n, ($8 - $7) * 1024 / n,
        ($10 - $9) * 1024 / n, ($12 - $11) * 4096 / n
}'
