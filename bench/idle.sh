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
#                      [--protocols "h1 h1-tls h2"] [--gannet PATH] [--keep]
#   --conns N      idle connections (default 10000; needs ulimit -Hn > N+100)
#   --servers L    subset/order of "gannet nginx"
#   --protocols L  what each connection speaks, in order (default "h1"):
#                  h1      HTTP/1.1 on a plain listener
#                  h1-tls  HTTP/1.1 over TLS 1.3 (ALPN http/1.1)
#                  h2      HTTP/2 over TLS 1.3 (ALPN h2): the preface, an
#                          empty SETTINGS, the ACK of the server's, and
#                          one GET on stream 1, then idle
#                  TLS: ECDSA P-256 certificate from t/mkcerts.sh; every
#                  protocol gets a freshly started server
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
protocols="h1"
gannet_bin="$here/../core/gannet"
keep=0

parse_options "--conns=conns --servers=servers --protocols=protocols
               --gannet=gannet_bin --keep=keep:1" "$@"

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
certs="$work/certs"
case " $protocols " in
*" h1-tls "*|*" h2 "*) sh "$here/../t/mkcerts.sh" "$certs" || exit 1 ;;
esac

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
# MODE: h1 (plain HTTP/1.1), h1-tls (HTTP/1.1 over TLS, ALPN http/1.1) or
# h2 (HTTP/2 over TLS, ALPN h2: preface, empty SETTINGS, the ACK of the
# server's SETTINGS, one GET on stream 1; the response must end there).
import selectors, socket, ssl, struct, sys, errno

host, port, n, path, mode = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                             sys.argv[4], sys.argv[5])
req = ("GET %s HTTP/1.1\r\nHost: bench\r\nUser-Agent: idle.py\r\n\r\n"
       % path).encode()
sel = selectors.DefaultSelector()
held, pending, opened, failed = [], 0, 0, 0
INFLIGHT = 256
ctx = None
if mode != "h1":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.set_alpn_protocols(["h2"] if mode == "h2" else ["http/1.1"])


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) \
        + struct.pack(">I", sid) + payload


def lit(index, value):
    # HPACK literal with incremental indexing, indexed name (< 63), no
    # Huffman, value shorter than 127 bytes
    v = value.encode()
    return bytes([0x40 | index, len(v)]) + v


# :method GET, :scheme https (static 2, 7), :path, :authority, user-agent
h2req = (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0)
         + frame(1, 0x5, 1, b"\x82\x87" + lit(4, path) + lit(1, "localhost")
                 + lit(58, "idle.py")))


def h1_done(st):
    head, sep, body = st["buf"].partition(b"\r\n\r\n")
    if not sep:
        return False
    clen = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            clen = int(v)
    if len(body) < clen:
        return False
    if not head.startswith(b"HTTP/1.1 200"):
        raise OSError(0, head.split(b"\r\n")[0].decode())
    return True


def h2_done(s, st):
    # frames of st["buf"]: ACK the server's SETTINGS; done at END_STREAM
    # of stream 1 (its HEADERS must begin with :status 200, static 8)
    b = st["buf"]
    while len(b) >= 9:
        ln = int.from_bytes(b[0:3], "big")
        if len(b) < 9 + ln:
            break
        ftype, flags = b[3], b[4]
        sid = int.from_bytes(b[5:9], "big") & 0x7fffffff
        payload, b = b[9:9 + ln], b[9 + ln:]
        if ftype == 4 and not flags & 1:
            s.send(frame(4, 1, 0))
        elif ftype == 7:
            raise OSError(0, "GOAWAY")
        elif ftype == 3 and sid == 1:
            raise OSError(0, "RST_STREAM")
        elif ftype == 1 and sid == 1 and not payload.startswith(b"\x88"):
            raise OSError(0, "status not 200 (%r)" % payload[:4])
        if sid == 1 and ftype in (0, 1) and flags & 1:
            st["buf"] = b
            return True
    st["buf"] = b
    return False


def open_one():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_WRITE,
                 {"buf": b"", "state": "connect", "sock": s})


def step(key):
    # advance one connection; True when its request completed
    st = key.data
    s = st["sock"]
    if st["state"] == "connect":
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise OSError(err, "connect")
        if ctx is None:
            st["state"] = "send"
        else:
            s = st["sock"] = ctx.wrap_socket(s, server_hostname="localhost",
                                             do_handshake_on_connect=False)
            st["state"] = "handshake"
    if st["state"] == "handshake":
        try:
            s.do_handshake()
        except ssl.SSLWantReadError:
            sel.modify(key.fileobj, selectors.EVENT_READ, st)
            return False
        except ssl.SSLWantWriteError:
            sel.modify(key.fileobj, selectors.EVENT_WRITE, st)
            return False
        want = "h2" if mode == "h2" else "http/1.1"
        if s.selected_alpn_protocol() != want:
            raise OSError(0, "ALPN %s, not %s"
                          % (s.selected_alpn_protocol(), want))
        st["state"] = "send"
    if st["state"] == "send":
        s.send(h2req if mode == "h2" else req)
        st["state"] = "read"
        sel.modify(key.fileobj, selectors.EVENT_READ, st)
        return False
    while True:
        try:
            data = s.recv(65536)
        except (ssl.SSLWantReadError, BlockingIOError):
            return False
        if not data:
            raise OSError(errno.ECONNRESET, "closed by server")
        st["buf"] += data
        if h2_done(s, st) if mode == "h2" else h1_done(st):
            return True
        if ctx is None or not s.pending():
            return False


while len(held) + failed < n:
    while pending < INFLIGHT and opened < n:
        open_one()
        opened += 1
        pending += 1
    for key, ev in sel.select(timeout=10):
        try:
            if not step(key):
                continue
            sel.unregister(key.fileobj)
            held.append(key.data["sock"])
            pending -= 1
        except (OSError, ssl.SSLError) as e:
            if failed < 5:
                print("client: %s" % e, file=sys.stderr)
            sel.unregister(key.fileobj)
            key.data["sock"].close()
            failed += 1
            pending -= 1

print("ready %d failed %d" % (len(held), failed), flush=True)
sys.stdin.readline()
for s in held:
    s.close()
EOF

# conf_gannet, conf_nginx PROTOCOL: write the configuration for a plain
# (h1) or a TLS listener (h1-tls, h2: h2 and http/1.1 offered by ALPN),
# print the command
conf_gannet()
{
    local tls="" certs_conf=""
    if [ "$1" != h1 ]; then
        tls=" tls"
        certs_conf="tls_certificate $certs/localhost-ec.pem;
    tls_certificate_key $certs/localhost-ec.key;
    http2 on;"
    fi
    gannet_conf "$work/gannet-$1" 1 "$limit" <<EOF

server {
    listen 127.0.0.1:$port$tls backlog=4096;
    $certs_conf
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
    local tls="" certs_conf=""
    if [ "$1" != h1 ]; then
        tls=" ssl http2"
        certs_conf="ssl_certificate $certs/localhost-ec.pem;
        ssl_certificate_key $certs/localhost-ec.key;"
    fi
    nginx_conf "$work/nginx-$1" 1 "$need" "$limit" <<EOF
    keepalive_timeout 600s;
    keepalive_requests 1000000000;
    client_header_timeout 600s;
    default_type application/octet-stream;
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:$port$tls backlog=4096;
        $certs_conf
        root $doc;
    }
EOF
}

# url_of PROTOCOL: the URL and curl options of the warm-up requests
url_of()
{
    case "$1" in
    h1)     echo "http://127.0.0.1:$port/1k.bin" ;;
    h1-tls) echo "https://127.0.0.1:$port/1k.bin -k --http1.1" ;;
    h2)     echo "https://127.0.0.1:$port/1k.bin -k --http2" ;;
    esac
}

rows=""
for proto in $protocols; do
    case "$proto" in
    h1|h1-tls|h2) ;;
    *) echo "idle.sh: unknown protocol $proto" >&2; continue ;;
    esac
for s in $servers; do
    port=$(free_port)
    if ! declare -F "conf_$s" >/dev/null; then
        echo "idle.sh: unknown server $s" >&2
        continue
    fi
    key=$s-$proto
    mkdir -p "$work/$key"
    # shellcheck disable=SC2046
    spawn_server "$key" "" "$work/$key/out" $("conf_$s" "$proto")
    # shellcheck disable=SC2046
    wait_url $(url_of "$proto")
    child=$(child_pids "$key" | head -n 1)
    # shellcheck disable=SC2046
    v=$(curl -sf -o /dev/null -w '%{http_version}' $(url_of "$proto"))
    case "$proto:$v" in
    h1:1.1|h1-tls:1.1|h2:2) ;;
    *) v="" ;;
    esac
    if [ -z "$child" ] || [ -z "$v" ]; then
        echo "idle.sh: $s ($proto) did not start:" >&2
        cat "$work/$key/out" >&2
        stop_server "$key"
        continue
    fi
    # A few requests first, so lazily allocated per-child state is there.
    for _ in 1 2 3 4 5 6 7 8; do
        # shellcheck disable=SC2046
        curl -s -o /dev/null $(url_of "$proto")
    done
    sleep 0.5
    read -r rss0 pss0 pd0 <<<"$(mem_of "$child")"
    tcp0=$(tcp_mem_pages)

    coproc CLIENT { "$py" "$work/client.py" 127.0.0.1 "$port" "$conns" \
                        /1k.bin "$proto"; }
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
        echo "idle.sh: $s ($proto): client failed" >&2
        stop_server "$key"
        continue
    fi
    echo "$s ($proto): child $child had $est sockets open" \
         "(client: $held held, $failed failed)" >&2
    rows="$rows$s $held $failed $est $rss0 $rss1 $pss0 $pss1 $pd0 $pd1 $tcp0 $tcp1 $rss2 $proto
"
    stop_server "$key"
done
done

echo
echo "$conns idle keep-alive connections (one completed GET of a 1 KiB file" \
     "each), one child; memory of that child"
echo
echo "| server | protocol | held | failed | Rss before | Rss after | Rss after close | Rss B/conn | Pss B/conn | Private_Dirty B/conn | kernel TCP mem B/conn (both ends) |"
echo "|--------|----------|-----:|-------:|-----------:|----------:|----------------:|-----------:|-----------:|---------------------:|----------------------------------:|"
printf '%s' "$rows" | awk '
NF {
    n = $2
    printf "| %s | %s | %d | %d | %d kB | %d kB | %d kB | %.0f | %.0f | %.0f | %.0f |\n",
        $1, $14, n, $3, $5, $6, $13, ($6 - $5) * 1024 / n,
        ($8 - $7) * 1024 / n, ($10 - $9) * 1024 / n, ($12 - $11) * 4096 / n
    rss[$1 " " $14] = ($6 - $5) * 1024 / n
}
END {
    for (k in rss) {
        split(k, a, " ")
        if (a[2] == "h2" && rss[a[1] " h1-tls"] > 0)
            printf "\n%s: idle h2 / idle HTTP/1.1 over TLS, Rss per connection: %.2f\n",
                a[1], rss[k] / rss[a[1] " h1-tls"]
    }
}'
