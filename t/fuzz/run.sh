#!/bin/sh
# Builds the libFuzzer harnesses (make fuzz) and runs each for SECONDS
# (default 10) on a copy of its seed corpus. Exits non-zero if any harness
# crashes, leaks, times out or fails an invariant; the reproducer is kept
# in $GN_FUZZ_WORK/<name>/ (default: a temporary directory, printed).
#
#   t/fuzz/run.sh [SECONDS]          from the build directory
#   GN_FUZZ_TARGETS="conf path" t/fuzz/run.sh 60

set -u

secs=${1:-10}
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=$(pwd)
all="http_head http2_head http_response fastcgi chunked path conf htpasswd binlog
    scache regex tls_hello proxy_protocol"
targets=${GN_FUZZ_TARGETS:-$all}

case $secs in
    ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

if ! command -v clang >/dev/null 2>&1; then
    echo "run.sh: clang not found (apt-get install clang)" >&2
    exit 2
fi

if [ ! -f "$builddir/Makefile" ]; then
    builddir=$srcdir
fi

make -C "$builddir" fuzz || { echo "run.sh: make fuzz failed" >&2; exit 2; }

work=${GN_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/gannet-fuzz.XXXXXX")}
mkdir -p "$work"

failed=0
summary=""

for t in $targets; do
    bin=$builddir/t/fuzz/fuzz_$t
    dir=$work/$t
    mkdir -p "$dir/corpus"

    if [ -d "$srcdir/t/fuzz/corpus/$t" ]; then
        cp "$srcdir/t/fuzz/corpus/$t"/* "$dir/corpus/" 2>/dev/null
    fi

    seeds=$(ls "$dir/corpus" | wc -l)

    (cd "$dir" && "$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$dir/" corpus \
        > log 2>&1)
    rc=$?

    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
    cov=$(grep -E '^#[0-9]+' "$dir/log" | tail -1 \
          | sed -n 's/.*cov: \([0-9]*\).*ft: \([0-9]*\).*/\1 edges, \2 ft/p')
    corp=$(ls "$dir/corpus" | wc -l)

    if [ $rc -eq 0 ]; then
        status=ok
    else
        status="FAILED (exit $rc)"
        failed=1
        echo "==== fuzz_$t failed; log: $dir/log"
        grep -E 'invariant failed|ERROR: |runtime error|SUMMARY' "$dir/log" \
            | head -5
        ls "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* \
            2>/dev/null | sed 's/^/    reproducer: /'
    fi

    summary="$summary$(printf '%-10s %-18s %10s execs  %-28s corpus %s -> %s' \
        "$t" "$status" "${execs:-?}" "${cov:-?}" "$seeds" "$corp")
"
done

echo
echo "fuzzing summary (${secs}s per harness, work dir $work):"
printf '%s' "$summary"

if [ $failed -ne 0 ]; then
    exit 1
fi

[ -n "${GN_FUZZ_WORK:-}" ] || rm -rf "$work"

exit 0
