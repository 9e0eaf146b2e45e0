#!/usr/bin/env bash
#
# bench/tls.sh - TLS handshake and TLS keep-alive cost of gannet beside
# nginx (Debian's, OpenSSL), same certificates, same key-exchange group.
#
# Each server runs two instances, pinned to CPU 0 (the client runs on
# CPU 1):
#   "1w"  one worker/child; session tickets on; shared session cache 10 MB;
#         an ECDSA P-256 listener and an RSA-2048 listener
#   "2w"  two workers/children; session tickets off; shared session cache
#         10 MB; ECDSA P-256 (the TLS 1.2 session-ID resumption test)
# Tests (all interleaved: round 1 runs every test on every server, then
# round 2 ...), each for S seconds:
#   t13-full-ec   openssl s_time -new   -tls1_3               (1w, ECDSA)
#   t12-full-ec   openssl s_time -new   -tls1_2               (1w, ECDSA)
#   t12-sid-ec    openssl s_time -reuse -tls1_2               (2w, ECDSA)
#   t13-res-ec    openssl s_time -reuse -tls1_3 -www /        (1w, ECDSA)
#   ka-1k-ec      wrk -t1 -c50 https://.../1k.bin             (1w, ECDSA)
#   t13-full-rsa  openssl s_time -new   -tls1_3               (1w, RSA)
#   t12-full-rsa  openssl s_time -new   -tls1_2               (1w, RSA)
# Around each run the server's CPU time (utime+stime from /proc/PID/stat,
# master and all descendants) is read; CPU per handshake (or request) =
# delta CPU / handshakes (requests) completed.  s_time prints one
# character per connection: '*' a full handshake, 'r' a resumed one; both
# are counted and shown, so every row proves what it measured.  Before
# measuring, openssl s_client -sess_out/-sess_in checks that each server
# resumes ("Reused") where it should and not ("New") where it should not.
#
# Then the crypto ceiling: gnutls-cli --benchmark-tls-kx (client and
# server handshakes in one process, GnuTLS) and openssl speed for the
# primitives, both pinned to CPU 0.
#
# Usage: bench/tls.sh [--rounds N] [--duration S] [--servers "LIST"]
#                     [--tests "LIST"] [--gannet PATH] [--raw FILE]
#                     [--no-ceiling] [--keep]
#   --rounds N     interleaved rounds (default 3; medians are reported)
#   --duration S   seconds per run (default 5)
#   --servers L    subset/order of "gannet nginx"
#   --tests L      subset/order of the tests above
#   --gannet PATH  gannet binary (default: core/gannet next to this script)
#   --raw FILE     also write the raw per-run results (TSV) to FILE
#   --no-ceiling   skip gnutls-cli --benchmark-tls-kx and openssl speed
#   --keep         keep the temporary directory (configs, error logs)
#
# Needs: openssl, wrk, taskset, curl, perl, certtool (for t/mkcerts.sh),
# gnutls-cli (ceiling), nginx (nginx-light is enough); gcc and the GnuTLS
# headers for the signature loop (optional).  About 5.5 minutes with the
# defaults, ceiling included.

set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

rounds=3
duration=5
servers="gannet nginx"
tests="t13-full-ec t12-full-ec t12-sid-ec t13-res-ec ka-1k-ec t13-full-rsa t12-full-rsa"
gannet_bin="$here/../core/gannet"
raw_out=""
ceiling=1
keep=0

parse_options "--rounds=rounds --duration=duration --servers=servers
               --tests=tests --gannet=gannet_bin --raw=raw_out
               --no-ceiling=ceiling:0 --keep=keep:1" "$@"

require_tools openssl wrk taskset curl perl getconf
require_two_cpus client

raise_nofile 20000
bench_workdir /tmp/gntls.XXXXXX
bench_docroot
certs="$work/certs"

# port[SERVER:INSTANCE:CERT] (CERT ec or rsa); pid[SERVER:INSTANCE]
declare -A port

now()
{
    date +%s.%N
}

# --- certificates and docroot -----------------------------------------------

sh "$here/../t/mkcerts.sh" "$certs" || exit 1
random_file 1024 1 >"$doc/1k.bin"
printf 'ok\n' >"$doc/index.html"
chmod 644 "$doc"/*

# --- configurations -----------------------------------------------------------

# gannet_server PORT CERT: a TLS server block of gannet on PORT with
# the certificate localhost-CERT
gannet_server()
{
    cat <<EOF

server {
    listen 127.0.0.1:$1 tls backlog=4096;
    tls_certificate $certs/localhost-$2.pem;
    tls_certificate_key $certs/localhost-$2.key;
    root $doc;
    access_log off;
    keepalive_requests 0;
    keepalive_timeout 300s;
    default_type application/octet-stream;
}
EOF
}

# conf_gannet INSTANCE CHILDREN TICKETS
conf_gannet()
{
    local c
    {
        cat <<EOF
tls_protocols TLSv1.2 TLSv1.3;
tls_session_cache 10m;
tls_session_tickets $3;
EOF
        for c in ec rsa; do
            [ -z "${port[gannet:$1:$c]:-}" ] \
                || gannet_server "${port[gannet:$1:$c]}" "$c"
        done
    } | gannet_conf "$work/gannet-$1" "$2" 20000
}

# conf_nginx INSTANCE WORKERS TICKETS
conf_nginx()
{
    local c p
    {
        cat <<EOF
    keepalive_requests 1000000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;

    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1;
    ssl_session_cache shared:SSL:10m;
    ssl_session_tickets $3;
EOF
        for c in ec rsa; do
            p=${port[nginx:$1:$c]:-}
            [ -n "$p" ] || continue
            cat <<EOF

    server {
        listen 127.0.0.1:$p ssl backlog=4096;
        ssl_certificate $certs/localhost-$c.pem;
        ssl_certificate_key $certs/localhost-$c.key;
        root $doc;
    }
EOF
        done
    } | nginx_conf "$work/nginx-$1" "$2" 20000 20000
}

# start SERVER INSTANCE WORKERS TICKETS WITH_RSA
start()
{
    local s=$1 i=$2 cmd p c
    port[$s:$i:ec]=$(free_port)
    [ "$5" = 1 ] && port[$s:$i:rsa]=$(free_port)
    cmd=$("conf_$s" "$i" "$3" "$4")
    mkdir -p "$work/$s-$i"
    # shellcheck disable=SC2086
    spawn_server "$s:$i" 0 "$work/$s-$i/out" $cmd
    for c in ec rsa; do
        p=${port[$s:$i:$c]:-}
        [ -n "$p" ] || continue
        wait_url "https://127.0.0.1:$p/1k.bin" -k
        if ! curl -s --cacert "$certs/ca.pem" \
                --resolve "localhost:$p:127.0.0.1" \
                "https://localhost:$p/1k.bin" | cmp -s - "$doc/1k.bin"; then
            echo "tls.sh: $s ($i, $c) does not serve 1k.bin over TLS" >&2
            cat "$work/$s-$i/out" "$work/$s-$i/logs/error.log" 2>/dev/null \
                | tail -n 20 >&2
            return 1
        fi
    done
    echo "started $s-$i: pid ${pid[$s:$i]}, $(tree_pids "${pid[$s:$i]}" \
        | wc -l) process(es), ports ec ${port[$s:$i:ec]}" \
        "rsa ${port[$s:$i:rsa]:-none}" >&2
}

# --- verification with s_client ---------------------------------------------

# sclient PORT VERSION EXTRA... : prints "New," / "Reused," line and the
# negotiated protocol, cipher and group
sclient()
{
    local p=$1 v=$2
    shift 2
    printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' \
        | timeout 10 openssl s_client -connect "127.0.0.1:$p" \
            -servername localhost "-$v" -ign_eof "$@" 2>&1
}

# verify SERVER INSTANCE CERT VERSION: one full handshake saving the
# session, then one resumption; prints the outcome; returns 1 when the
# second connection did not resume or the first did not start new.
verify()
{
    local s=$1 i=$2 c=$3 v=$4 p sess out1 out2 first second info
    p=${port[$s:$i:$c]}
    sess="$work/$s-$i-$c-$v.sess"
    out1=$(sclient "$p" "$v" -sess_out "$sess")
    out2=$(sclient "$p" "$v" -sess_in "$sess")
    first=$(grep -oE '^(New|Reused),' <<<"$out1" | head -n 1)
    second=$(grep -oE '^(New|Reused),' <<<"$out2" | head -n 1)
    info=$(perl -ne 'print "$1 $2 " if /^(?:New|Reused), (\S+), Cipher is (\S+)/;
                     print "group $1 " if /^(?:Server Temp Key|Negotiated TLS1.3 group): (\S+?),?\s/;
                     print "sig $1 " if /^Peer signature type: (\S+)/;' \
           <<<"$out1")
    echo "  $s-$i $c $v: first ${first:-?} then ${second:-?}  ($info)" >&2
    [ "$first" = "New," ] && [ "$second" = "Reused," ]
}

# --- one measured run ---------------------------------------------------------

# test_spec TEST: "INSTANCE CERT KIND ARGS..." (KIND s_time or wrk)
test_spec()
{
    case "$1" in
    t13-full-ec)  echo "1w ec s_time -new -tls1_3" ;;
    t12-full-ec)  echo "1w ec s_time -new -tls1_2" ;;
    t12-sid-ec)   echo "2w ec s_time -reuse -tls1_2" ;;
    t13-res-ec)   echo "1w ec s_time -reuse -tls1_3 -www /" ;;
    ka-1k-ec)     echo "1w ec wrk" ;;
    t13-full-rsa) echo "1w rsa s_time -new -tls1_3" ;;
    t12-full-rsa) echo "1w rsa s_time -new -tls1_2" ;;
    *)            return 1 ;;
    esac
}

# run_one ROUND TEST SERVER [DURATION] [quiet]
run_one()
{
    local r=$1 t=$2 s=$3 d=${4:-$duration} inst cert kind args p root
    local t0 t1 c0 c1 w0 w1 out ops full reused err other
    read -r inst cert kind args <<<"$(test_spec "$t")"
    p=${port[$s:$inst:$cert]}
    root=${pid[$s:$inst]}
    if ! kill -0 "$root" 2>/dev/null; then
        echo "tls.sh: $s-$inst is gone" >&2
        return
    fi
    t0=$(tree_ticks "$root")
    c0=$(cpu0_busy)
    w0=$(now)
    if [ "$kind" = wrk ]; then
        out=$(run_wrk 50 "$d" "" "https://127.0.0.1:$p/1k.bin")
    else
        # shellcheck disable=SC2086
        out=$(taskset -c 1 openssl s_time -connect "127.0.0.1:$p" \
              $args -time "$d" 2>&1)
    fi
    w1=$(now)
    c1=$(cpu0_busy)
    t1=$(tree_ticks "$root")
    [ "${5:-}" = quiet ] && return
    if [ "$kind" = wrk ]; then
        wrk_parse "$out"
        ops=$wrk_reqs
        full=-
        reused=-
        err=$wrk_errors
    else
        # the last "N connections in" line of the timed loop
        ops=$(awk '/ connections in .*real seconds/ {n = $1} END {print n}' \
              <<<"$out")
        # s_time prints one character per connection: '*' new, 'r' reused
        full=$(perl -ne 'next unless /^[*r]+$/;
                         $n += tr/*//; END { print $n || 0 }' <<<"$out")
        reused=$(perl -ne 'next unless /^[*r]+$/;
                           $n += tr/r//; END { print $n || 0 }' <<<"$out")
        err=$(grep -c -iE 'error|fail' <<<"$out")
    fi
    if [ -z "$ops" ] || [ "$ops" = 0 ]; then
        echo "tls.sh: $t against $s failed:" >&2
        tail -n 5 <<<"$out" >&2
        return
    fi
    other=$(cpu0_other "$c0" "$c1" "$((t1 - t0))")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$t" "$s" "$ops" \
        "$(perl -e 'printf "%.3f", $ARGV[1] - $ARGV[0]' -- "$w0" "$w1")" \
        "$((t1 - t0))" "$full" "$reused" "$err" "$other" >>"$results"
    printf '  round %s %-12s %-7s %8d ops %8.0f /s %8.1f us CPU/op  new %s resumed %s errors %s cpu0 other %s%%\n' \
        "$r" "$t" "$s" "$ops" \
        "$(perl -e 'printf "%.1f", $ARGV[0] / ($ARGV[2] - $ARGV[1])' -- \
            "$ops" "$w0" "$w1")" \
        "$(ticks_us "$((t1 - t0))" "$ops" 2)" \
        "$full" "$reused" "$err" "$other" >&2
}

# --- main -------------------------------------------------------------------

started=""
for s in $servers; do
    case "$s" in
    gannet) b=$gannet_bin ;;
    nginx)  b=nginx ;;
    *)      echo "tls.sh: unknown server $s" >&2; continue ;;
    esac
    if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "$b" ]; then
        echo "tls.sh: $s: $b not found, skipped" >&2
        continue
    fi
    if start "$s" 1w 1 on 1 && start "$s" 2w 2 off 0; then
        started="$started $s"
    else
        echo "tls.sh: $s skipped" >&2
    fi
done
[ -n "$started" ] || { echo "tls.sh: no server started" >&2; exit 1; }

echo "checking resumption with openssl s_client -sess_out/-sess_in:" >&2
for s in $started; do
    ok=1
    verify "$s" 1w ec tls1_3 || ok=0        # ticket resumption
    verify "$s" 2w ec tls1_2 || ok=0        # session ID (tickets off)
    verify "$s" 1w ec tls1_2 || ok=0        # TLS 1.2, tickets on
    verify "$s" 1w rsa tls1_3 || ok=0
    out=$(sclient "${port[$s:2w:ec]}" tls1_2 -sess_out "$work/t.sess")
    if grep -q 'TLS session ticket:' <<<"$out"; then
        echo "  $s-2w: a ticket was issued with tickets off" >&2
        ok=0
    else
        echo "  $s-2w: no ticket issued (tickets off): ok" >&2
    fi
    [ "$ok" = 1 ] || echo "tls.sh: WARNING: $s: resumption check failed" >&2
done

echo "warming up (1 s per server and test)" >&2
for t in $tests; do
    test_spec "$t" >/dev/null || { echo "tls.sh: unknown test $t" >&2; exit 1; }
    for s in $started; do
        run_one 0 "$t" "$s" 1 quiet
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

# gannet's own handshake counters, from its children's exit notices
stop_all
for i in 1w 2w; do
    f="$work/gannet-$i/logs/error.log"
    [ -f "$f" ] || continue
    echo "gannet-$i exit counters:" >&2
    grep -E 'tls: [0-9]+ full|tls session cache:' "$f" | sed 's/^/  /' >&2
done

echo
for s in $started; do
    case "$s" in
    gannet) echo "gannet: $("$gannet_bin" -V 2>&1 | tr '\n' ' ')" ;;
    nginx)  echo "nginx: $(nginx -V 2>&1 | head -n 2 | tr '\n' ' ')" ;;
    esac
done
echo "client: $(openssl version); wrk: $(wrk_version)"
echo "$rounds interleaved rounds of ${duration} s, medians; server on CPU 0," \
     "client on CPU 1; CPU = server utime+stime / handshakes (requests)"
perl -e "$bench_pl"'
    my ($file, $tck, $order) = @ARGV; my (%d, @tests, %seen);
    my @srv = split " ", $order;
    my %name = (
        "t13-full-ec"  => "TLS 1.3 full handshake, ECDSA P-256 (s_time -new -tls1_3)",
        "t12-full-ec"  => "TLS 1.2 full handshake, ECDSA P-256 (s_time -new -tls1_2)",
        "t12-sid-ec"   => "TLS 1.2 session-ID resumption, tickets off, 2 workers (s_time -reuse -tls1_2)",
        "t13-res-ec"   => "TLS 1.3 ticket resumption + GET / (s_time -reuse -tls1_3 -www /)",
        "ka-1k-ec"     => "1 KiB keep-alive GET over TLS 1.3, ECDSA (wrk -t1 -c50)",
        "t13-full-rsa" => "TLS 1.3 full handshake, RSA-2048 (s_time -new -tls1_3)",
        "t12-full-rsa" => "TLS 1.2 full handshake, RSA-2048 (s_time -new -tls1_2)");
    open my $fh, "<", $file or die;
    while (<$fh>) {
        chomp;
        my ($r, $t, $s, $n, $wall, $ticks, $new, $res, $err, $o) = split /\t/;
        push @tests, $t unless $seen{$t}++;
        my $x = $d{$t}{$s} ||= {};
        push @{$x->{rate}}, $n / $wall;
        push @{$x->{cpu}}, $ticks / $tck / $n * 1e6;
        push @{$x->{other}}, $o;
        $x->{n} += $n; $x->{err} += $err;
        $x->{new} += $new if $new ne "-";
        $x->{res} += $res if $res ne "-";
        $x->{kind} = $new eq "-" ? "req" : "hs";
    }
    for my $t (@tests) {
        printf "\n### %s\n\n", $name{$t} || $t;
        my $hs = (values %{$d{$t}})[0]{kind} eq "hs";
        printf "| server | %s/s | vs nginx | CPU us/%s | vs nginx | %s | errors | CPU0 other |\n",
            $hs ? "handshakes" : "requests", $hs ? "handshake" : "request",
            $hs ? "new / resumed (all rounds)" : "requests (all rounds)";
        print "|--------|------:|------:|------:|------:|------|------:|------:|\n";
        my $nx = $d{$t}{nginx};
        my ($nr, $nc) = $nx ? (med(@{$nx->{rate}}), med(@{$nx->{cpu}})) : (0, 0);
        for my $s (@srv) {
            my $x = $d{$t}{$s} or next;
            my ($r, $c) = (med(@{$x->{rate}}), med(@{$x->{cpu}}));
            printf "| %s | %.0f | %s | %.1f | %s | %s | %d | %s%% |\n",
                $s, $r, ratio($r, $nr), $c, ratio($c, $nc),
                $hs ? "$x->{new} / $x->{res}" : $x->{n}, $x->{err},
                join("/", @{$x->{other}});
        }
    }
' "$results" "$clk_tck" "$started"

if [ "$ceiling" = 1 ]; then
    echo
    echo "### Crypto ceiling (pinned to CPU 0)"
    echo
    if command -v gnutls-cli >/dev/null; then
        echo "gnutls-cli --benchmark-tls-kx ($(gnutls-cli --version 2>&1 \
            | head -n 1)); client and server in one process:"
        echo
        taskset -c 0 gnutls-cli --benchmark-tls-kx 2>&1 | sed 's/^/    /'
        echo
    fi
    if command -v gcc >/dev/null && [ -f /usr/include/gnutls/abstract.h ]; then
        # The server's private-key operation in a full handshake, GnuTLS:
        # gnutls_privkey_sign_hash2() with the benchmark's own keys.
        cat >"$work/sign.c" <<'EOF'
#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int
main(int argc, char **argv)
{
    gnutls_privkey_t         k;
    gnutls_datum_t           f, h, sig;
    gnutls_sign_algorithm_t  alg;
    unsigned char            hash[32] = { 1 };
    struct timespec          a, b;
    int                      i, n;

    n = atoi(argv[3]);
    alg = atoi(argv[2]) ? GNUTLS_SIGN_RSA_PSS_RSAE_SHA256
                        : GNUTLS_SIGN_ECDSA_SHA256;
    gnutls_global_init();
    if (gnutls_load_file(argv[1], &f) != 0
        || gnutls_privkey_init(&k) != 0
        || gnutls_privkey_import_x509_raw(k, &f, GNUTLS_X509_FMT_PEM,
                                          NULL, 0) != 0)
    {
        return 1;
    }
    h.data = hash;
    h.size = sizeof(hash);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (i = 0; i < n; i++) {
        if (gnutls_privkey_sign_hash2(k, alg, 0, &h, &sig) != 0) {
            return 1;
        }
        gnutls_free(sig.data);
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    printf("%s: %.1f us CPU per signature (%d signatures)\n",
           alg == GNUTLS_SIGN_ECDSA_SHA256 ? "ECDSA P-256 SHA-256"
                                           : "RSA-2048 PSS SHA-256",
           ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9) / n * 1e6,
           n);
    return 0;
}
EOF
        if gcc -O2 -o "$work/sign" "$work/sign.c" -lgnutls 2>/dev/null; then
            echo "GnuTLS private-key signature (gnutls_privkey_sign_hash2)," \
                 "the benchmark's keys:"
            echo
            taskset -c 0 "$work/sign" "$certs/localhost-ec.key" 0 10000 \
                | sed 's/^/    /'
            taskset -c 0 "$work/sign" "$certs/localhost-rsa.key" 1 1000 \
                | sed 's/^/    /'
            echo
        fi
    fi
    if command -v gcc >/dev/null && [ -f /usr/include/nettle/curve25519.h ]
    then
        # The key exchange every TLS 1.3 handshake pays, resumed or not
        # (clients offer psk_dhe_ke only): an X25519 key pair and a shared
        # secret, in Nettle, which GnuTLS uses for them.
        cat >"$work/x25519.c" <<'EOF'
#include <nettle/curve25519.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double
cpu_now(void)
{
    struct timespec  t;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}


int
main(int argc, char **argv)
{
    unsigned char  s[CURVE25519_SIZE] = { 7 }, p[CURVE25519_SIZE],
                   q[CURVE25519_SIZE];
    double         t;
    int            i, n;

    n = argc > 1 ? atoi(argv[1]) : 2000;
    t = cpu_now();
    for (i = 0; i < n; i++) {
        s[1] = (unsigned char) i;
        curve25519_mul_g(p, s);
    }
    printf("X25519 key generation (curve25519_mul_g): %.1f us CPU\n",
           (cpu_now() - t) / n * 1e6);
    t = cpu_now();
    for (i = 0; i < n; i++) {
        s[1] = (unsigned char) i;
        curve25519_mul(q, s, p);
    }
    printf("X25519 shared secret (curve25519_mul): %.1f us CPU\n",
           (cpu_now() - t) / n * 1e6);
    return 0;
}
EOF
        if gcc -O2 -o "$work/x25519" "$work/x25519.c" -lhogweed -lnettle \
               2>/dev/null
        then
            echo "Nettle X25519 (GnuTLS's implementation), per operation:"
            echo
            taskset -c 0 "$work/x25519" 5000 | sed 's/^/    /'
            echo
        fi
    fi
    echo "openssl speed -seconds 2 ecdsap256 ecdhx25519 ecdhp256 rsa2048:"
    echo
    taskset -c 0 openssl speed -seconds 2 ecdsap256 ecdhx25519 ecdhp256 \
        rsa2048 2>/dev/null | sed -n '/sign *verify\|op *op/,$p' \
        | sed 's/^/    /'
fi
