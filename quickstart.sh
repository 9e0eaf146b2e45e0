#!/bin/sh
# Gannet quick start.
#
#   ./quickstart.sh serve   set up, build, and run gannet in the foreground
#                           on a demo site at http://127.0.0.1:8080/
#   ./quickstart.sh test    set up, build, and run the whole test suite:
#                           a plain build, a sanitizer build (ASan+UBSan),
#                           the suite under valgrind memcheck, `make
#                           distcheck` and each fuzzer for 10 s; ends
#                           with "N passed, N failed"
#
# Set-up installs missing Debian packages when run as root, and otherwise
# prints the apt-get line to run. Builds go to _build/ (VPATH), so the
# source tree stays clean. GN_JOBS sets make's -j (default: CPUs).

set -u

top=$(cd "$(dirname "$0")" && pwd)
build="$top/_build"
jobs=${GN_JOBS:-$(nproc 2>/dev/null || echo 2)}

say() { printf '== %s\n' "$*"; }
die() { printf 'quickstart: %s\n' "$*" >&2; exit 1; }

# Debian packages: the build, then what the tests talk to the server with.
build_pkgs="autoconf automake libtool pkg-config make gcc libgnutls28-dev libpcre2-dev libcrypt-dev libnghttp2-dev zlib1g-dev libdeflate-dev liburing-dev"
test_pkgs="perl curl nghttp2-client python3-h2 python3-hyperframe gnutls-bin openssl libio-socket-ssl-perl python3-cryptography abigail-tools clang libclang-rt-14-dev wrk gdb testssl.sh valgrind systemd logrotate chromium memcached php8.2-fpm"

missing_pkgs() {
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
            | grep -q 'install ok installed' || printf '%s ' "$p"
    done
}

setup() {
    pkgs="$build_pkgs"
    [ "$1" = test ] && pkgs="$pkgs $test_pkgs"
    command -v dpkg-query >/dev/null 2>&1 || {
        say "not a Debian system: make sure these are installed: $pkgs"
        return 0
    }
    miss=$(missing_pkgs $pkgs)
    [ -z "$miss" ] && return 0
    if [ "$(id -u)" = 0 ]; then
        say "installing: $miss"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq || die "apt-get update failed"
        apt-get install -y -qq $miss >/dev/null || die "apt-get install $miss failed"
    else
        die "missing packages; run as root: apt-get install -y $miss"
    fi
}

# configure_build DIR [configure args...]
configure_build() {
    dir=$1; shift
    [ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null 2>&1) \
        || die "autogen.sh failed"
    mkdir -p "$dir"
    if [ ! -f "$dir/Makefile" ]; then
        say "configuring $dir"
        # configure's "rm: cannot remove 'core': Is a directory" is harmless
        # (autoconf cleans up core dumps; our sources live in core/).
        (cd "$dir" && "$top/configure" "$@" >configure.out 2>&1) \
            || { cat "$dir/configure.out"; die "configure failed"; }
    fi
    say "building $dir"
    make -C "$dir" -j"$jobs" >"$dir/make.out" 2>&1 \
        || { tail -50 "$dir/make.out"; die "build failed"; }
}

serve() {
    setup serve
    configure_build "$build/plain"
    demo="$build/demo"
    mkdir -p "$demo/html" "$demo/logs"
    cp "$top/etc/html/index.html" "$demo/html/index.html"
    cp "$top/etc/mime.types" "$demo/mime.types"
    user=$(id -un)
    cat >"$demo/gannet.conf" <<CONF
# The demo configuration made by quickstart.sh (see etc/gannet.conf for
# every directive, with comments).
user $user;
children auto;
error_log stderr notice;
pid logs/gannet.pid;
include mime.types;
load_module $build/plain/modules/.libs/mod_status.so;

server {
    listen 127.0.0.1:8080;
    root html;
    access_log logs/access.log combined;

    # the scoreboard: /status, /status?format=json, ?format=prometheus
    location = /status {
        handler status;
        allow 127.0.0.1;
        deny all;
    }
}
CONF
    say "gannet on http://127.0.0.1:8080/ and its status page on /status"
    say "(Ctrl-C stops it; logs in $demo/logs)"
    exec "$build/plain/core/gannet" -f -p "$demo/" -c "$demo/gannet.conf"
}

# totals LOG...: sums automake's per-suite counts
totals() {
    awk '/^# (PASS|XFAIL):/ { p += $3 }
         /^# (FAIL|ERROR|XPASS):/ { f += $3 }
         /^# SKIP:/ { s += $3 }
         END { printf "%d %d %d\n", p, f, s }' "$@"
}

# failed_logs DIR: the end of the log of every test that failed in DIR
failed_logs() {
    for t in $(grep -l -E '^:test-result: (FAIL|ERROR|XPASS)' \
               "$1"/t/*/*.trs 2>/dev/null)
    do
        echo "---- ${t%.trs}.log"; tail -60 "${t%.trs}.log"
    done
}

# run_suite NAME DIR [TARGET]: make check (or TARGET), keeps the summary
run_suite() {
    name=$1 dir=$2 target=${3:-check}
    say "make $target ($name)"
    if make -C "$dir" -j"$jobs" "$target" >"$dir/check.out" 2>&1; then
        grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$dir/test-suite.log" | tr '\n' ' '
        echo
    else
        cat "$dir/test-suite.log" 2>/dev/null | tail -200
        failed_logs "$dir"
        # a log may be missing if the build of a test failed
        grep -q '^# TOTAL' "$dir/test-suite.log" 2>/dev/null || tail -40 "$dir/check.out"
    fi
}

test_all() {
    setup test
    rm -f "$build"/*/test-suite.log
    configure_build "$build/plain" --enable-werror
    run_suite plain "$build/plain"

    configure_build "$build/asan" --enable-werror --enable-asan --enable-ubsan --enable-debug
    run_suite "ASan+UBSan" "$build/asan"

    # every unit test and every integration test with each gannet process
    # under valgrind memcheck: a memcheck error or a definite leak fails
    # (t/README.md, "Valgrind"); -O0 -g, and no ASan, which valgrind
    # cannot run
    configure_build "$build/valgrind" --enable-werror --enable-debug
    run_suite "valgrind memcheck" "$build/valgrind" check-valgrind

    say "make distcheck"
    dc_pass=0 dc_fail=0
    if make -C "$build/plain" -j"$jobs" distcheck >"$build/plain/distcheck.out" 2>&1; then
        dc_pass=1
    else
        tail -60 "$build/plain/distcheck.out"
        # which test failed, from the logs of distcheck's own build
        failed_logs "$build"/plain/gannet-*/_build/sub
        dc_fail=1
    fi

    # every libFuzzer harness for a short, bounded time (clang)
    say "fuzzing (t/fuzz/run.sh ${GN_FUZZ_SECONDS:-10})"
    fz_pass=0 fz_fail=0
    if (cd "$build/plain" && sh "$top/t/fuzz/run.sh" "${GN_FUZZ_SECONDS:-10}") \
        >"$build/plain/fuzz.out" 2>&1
    then
        fz_pass=1
        sed -n '/^fuzzing summary/,$p' "$build/plain/fuzz.out"
    else
        tail -40 "$build/plain/fuzz.out"
        fz_fail=1
    fi

    set -- $(totals "$build/plain/test-suite.log" \
                    "$build/asan/test-suite.log" \
                    "$build/valgrind/test-suite.log" 2>/dev/null \
             || echo "0 1 0")
    passed=$(( $1 + dc_pass + fz_pass )) failed=$(( $2 + dc_fail + fz_fail )) skipped=$3
    [ -f "$build/plain/test-suite.log" ] || failed=$((failed + 1))
    [ -f "$build/asan/test-suite.log" ] || failed=$((failed + 1))
    [ -f "$build/valgrind/test-suite.log" ] || failed=$((failed + 1))
    echo
    echo "$passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ]
}

case "${1:-}" in
    serve) serve ;;
    test)  test_all ;;
    *)     sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
