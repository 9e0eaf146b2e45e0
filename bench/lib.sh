# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: the globals below are set here for the scripts, or by
# the scripts for the helpers.)
#
# bench/lib.sh - helpers shared by the bench scripts (static.sh, tls.sh,
# idle.sh, module.sh, accesslog.sh).  Sourced, never run:
#
#     here=$(cd "$(dirname "$0")" && pwd)
#     . "$here/lib.sh"
#
# Plain bash (4.3 or later: associative arrays, printf -v).  Safe under
# "set -eu": no function ends on a failed test by accident.
#
# Globals the helpers use; the script sets those it needs before calling:
#   me           the script's name, for messages ("static.sh: ...")
#   pid          associative array KEY -> pid of the root of each running
#                server tree (filled by spawn_server, emptied by stop_*)
#   stop_signal  what stop_server and stop_all send first (default TERM)
#   work         the temporary directory (bench_workdir)
#   results      $work/results.tsv, created empty (bench_workdir)
#   clk_tck      clock ticks a second, getconf CLK_TCK (bench_workdir)
#   keep         1: bench_cleanup keeps $work (default 0)
#   gannet_bin   the gannet binary (gannet_conf's command line)
#   cap_procs    the cgroup.procs file of the CPU cap (cpu_cap_setup);
#                spawn_server starts servers in that cgroup when set

me=${0##*/}
declare -A pid
stop_signal=TERM
keep=0
work=""
cap_procs=""
cap_dir=""


# --- checks and setup ---------------------------------------------------------

# parse_options SPEC ARG...: parse the script's command line ARG... by
# SPEC, words OPTION=VARIABLE (the option takes a value, stored in
# VARIABLE) and OPTION=VARIABLE:VALUE (a flag: VALUE is stored).  -h and
# --help print the script's header comment (line 2 to the first empty
# line, without "# ") and exit 0; an unknown option, or one missing its
# value: a message and exit 1.
parse_options()
{
    local spec=$1 w v
    shift
    while [ $# -gt 0 ]; do
        case "$1" in
        -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        esac
        v=""
        for w in $spec; do
            if [ "${w%%=*}" = "$1" ]; then
                v=${w#*=}
                break
            fi
        done
        if [ -z "$v" ]; then
            echo "$me: unknown option $1" >&2
            exit 1
        elif [ "$v" != "${v%%:*}" ]; then
            printf -v "${v%%:*}" '%s' "${v#*:}"
            shift
        elif [ $# -lt 2 ]; then
            echo "$me: $1 needs a value" >&2
            exit 1
        else
            printf -v "$v" '%s' "$2"
            shift 2
        fi
    done
    return 0
}


# build_c NAME [GCC ARGS...]: bench/NAME.c compiled with gcc -O2 -Wall
# into $work/NAME (its errors in $work/NAME.build); exit 1, with the
# errors, when it does not build.
build_c()
{
    local name=$1
    shift
    if ! gcc -O2 -Wall -o "$work/$name" "$here/$name.c" "$@" \
            2>"$work/$name.build"; then
        echo "$me: cannot build bench/$name.c:" >&2
        cat "$work/$name.build" >&2
        exit 1
    fi
}


# require_tools TOOL...: exit 1 with "$me: TOOL not found" unless every
# TOOL is on the PATH.
require_tools()
{
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null \
            || { echo "$me: $t not found" >&2; exit 1; }
    done
}


# require_two_cpus CLIENT: exit 1 unless the machine has 2 CPUs, the
# server's (0) and the client's (1); CLIENT names the client in the
# message ("wrk", "client").
require_two_cpus()
{
    if [ "$(nproc)" -lt 2 ]; then
        echo "$me: need 2 CPUs (server on 0, $1 on 1)" >&2
        exit 1
    fi
}


# raise_nofile N: ulimit -n N, or the hard limit when N is above it.
raise_nofile()
{
    ulimit -n "$1" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
}


# cpu_cap_setup PERCENT: a cgroup whose processes together get at most
# PERCENT of one CPU (CFS bandwidth control: PERCENT/100 x 10 ms in every
# 10 ms period; the short period keeps the stalls short), for servers
# that spawn_server starts afterwards (every process they fork inherits
# it, the CGI launcher included).  Capping the server below the load
# generator's capacity makes the server, not the client, the limit of
# a run; both servers of a comparison get the same cap.  cgroup v2 (the
# unified hierarchy with the cpu controller) or v1 (the cpu controller's
# own hierarchy); needs root.  Sets $cap_dir and $cap_procs; exits 1
# with the reason when no cgroup can be made.
cpu_cap_setup()
{
    local pct=$1 base v2="" quota
    case "$pct" in
    ''|*[!0-9]*) echo "$me: the CPU cap is a percentage, not \"$pct\"" >&2
                 exit 1 ;;
    esac
    if [ "$pct" -lt 5 ] || [ "$pct" -gt 100 ]; then
        echo "$me: the CPU cap must be 5 to 100 (%), not $pct" >&2
        exit 1
    fi
    quota=$((pct * 100))
    for base in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if [ -f "$base/cgroup.subtree_control" ] \
           && grep -qw cpu "$base/cgroup.controllers" 2>/dev/null
        then
            v2=$base
            break
        fi
    done
    if [ -n "$v2" ]; then
        cap_dir=$v2/gannet-bench.$$
        grep -qw cpu "$v2/cgroup.subtree_control" \
            || echo +cpu >"$v2/cgroup.subtree_control" 2>/dev/null
        mkdir "$cap_dir" 2>/dev/null \
            && echo "$quota 10000" >"$cap_dir/cpu.max" 2>/dev/null \
            || { echo "$me: cannot make a CPU-capped cgroup under $v2" \
                      "(root? cgroup delegation?)" >&2
                 rmdir "$cap_dir" 2>/dev/null; cap_dir=""; exit 1; }
    elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
        cap_dir=/sys/fs/cgroup/cpu/gannet-bench.$$
        mkdir "$cap_dir" 2>/dev/null \
            && echo 10000 >"$cap_dir/cpu.cfs_period_us" \
            && echo "$quota" >"$cap_dir/cpu.cfs_quota_us" \
            || { echo "$me: cannot make a CPU-capped cgroup under" \
                      "/sys/fs/cgroup/cpu (root?)" >&2
                 rmdir "$cap_dir" 2>/dev/null; cap_dir=""; exit 1; }
    else
        echo "$me: no cgroup cpu controller: cannot cap the server's CPU" >&2
        exit 1
    fi
    cap_procs=$cap_dir/cgroup.procs
    return 0
}


# bench_workdir TEMPLATE: make the temporary directory (mktemp -d
# TEMPLATE) as $work, an empty $work/results.tsv as $results, set
# $clk_tck, and install the cleanup traps: on exit bench_cleanup; on
# SIGINT or SIGTERM exit 130 (which runs it).
bench_workdir()
{
    clk_tck=$(getconf CLK_TCK)
    work=$(mktemp -d "$1")
    results="$work/results.tsv"
    : >"$results"
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
}


# bench_docroot: make $work world-readable (Apache's child runs as
# www-data) and the document root $work/html, as $doc.
bench_docroot()
{
    chmod 755 "$work"
    doc="$work/html"
    mkdir -p "$doc"
}


# bench_cleanup: the EXIT trap: stop every server in pid, then remove
# $work, or keep it and say so when $keep is 1.
bench_cleanup()
{
    stop_all
    [ -z "$cap_dir" ] || rmdir "$cap_dir" 2>/dev/null || true
    [ -n "$work" ] || return 0
    if [ "$keep" = 1 ]; then
        echo "$me: kept $work" >&2
    else
        rm -rf "$work"
    fi
    return 0
}


# random_file BYTES SEED: BYTES pseudo-random bytes on stdout, always the
# same for one SEED (Perl's srand/rand), so every run serves the same.
random_file()
{
    perl -e 'srand($ARGV[1]); my $n = $ARGV[0]; my $b = "";
             $b .= pack("N", int(rand(4294967296))) while length($b) < $n;
             print substr($b, 0, $n);' "$1" "$2"
}


# --- processes and CPU time ---------------------------------------------------

# free_port: a TCP port of 127.0.0.1 that was free a moment ago (bound
# to port 0 and released).
free_port()
{
    perl -MIO::Socket::INET -e '
        my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
                                      LocalPort => 0, Listen => 1,
                                      ReuseAddr => 1) or die "bind: $!";
        print $s->sockport, "\n";'
}


# tree_pids ROOT: every process of the tree rooted at ROOT (ROOT first,
# then its descendants, breadth first), one pid a line.
tree_pids()
{
    perl -e '
        my $root = shift; my %kids;
        for my $f (glob "/proc/[0-9]*/stat") {
            open my $fh, "<", $f or next; my $s = <$fh>; close $fh;
            next unless defined $s;
            my ($p) = $s =~ /^(\d+)/; $s =~ s/^.*\) //s;
            my @f = split / /, $s; push @{$kids{$f[1]}}, $p;
        }
        my @q = ($root); my %seen;
        while (@q) { my $p = shift @q; next if $seen{$p}++;
                     print "$p\n"; push @q, @{$kids{$p} || []}; }
    ' "$1"
}


# tree_ticks ROOT: utime+stime in clock ticks summed over the tree rooted
# at ROOT (fields 14 and 15 of /proc/PID/stat; they already include all
# threads).  A process gone meanwhile counts 0.
tree_ticks()
{
    # shellcheck disable=SC2046
    perl -e '
        my $sum = 0;
        for my $p (@ARGV) {
            open(my $fh, "<", "/proc/$p/stat") or next;
            my $s = <$fh>; close $fh; next unless defined $s;
            $s =~ s/^.*\) //s; my @f = split / /, $s;
            $sum += $f[11] + $f[12];
        }
        print "$sum\n";
    ' $(tree_pids "$1")
}


# tree_cpu_ns ROOT: CPU time of the tree rooted at ROOT in nanoseconds:
# the sum over its processes and their threads of the run time of
# /proc/PID/task/TID/schedstat when the kernel has it, else of
# utime+stime ticks converted with $clk_tck.
tree_cpu_ns()
{
    # shellcheck disable=SC2046
    perl -e '
        my ($tck, @pids) = @ARGV; my $ns = 0;
        for my $p (@pids) {
            my $done = 0;
            for my $t (glob "/proc/$p/task/*") {
                open(my $fh, "<", "$t/schedstat") or last;
                my ($run) = split / /, scalar <$fh>; close $fh;
                $ns += $run; $done = 1;
            }
            next if $done;
            open(my $fh, "<", "/proc/$p/stat") or next;
            my $s = <$fh>; close $fh; $s =~ s/^.*\) //s;
            my @f = split / /, $s;
            $ns += ($f[11] + $f[12]) * 1e9 / $tck;
        }
        printf "%.0f\n", $ns;
    ' "$clk_tck" $(tree_pids "$1")
}


# cpu0_busy: "BUSY TOTAL", clock ticks of CPU 0 since boot (the cpu0 line
# of /proc/stat; busy is all but idle and iowait).
cpu0_busy()
{
    awk '$1 == "cpu0" { t = 0; for (i = 2; i <= 9; i++) t += $i;
                        print t - $5 - $6, t }' /proc/stat
}


# cpu0_other BUSY0 BUSY1 TICKS: from two cpu0_busy samples and the
# server's ticks between them, the percentage of CPU 0 not used by the
# server (other processes, interrupts): a noise indicator for a run.
cpu0_other()
{
    perl -e 'my ($b, $t, $w) = @ARGV; $w ||= 1;
             printf "%.0f", 100 * ($b - $t) / $w' -- \
        "$((${2% *} - ${1% *}))" "$3" "$((${2#* } - ${1#* }))"
}


# ticks_us TICKS OPS [DECIMALS]: microseconds of CPU per operation,
# TICKS clock ticks over OPS operations, with DECIMALS (default 4).
ticks_us()
{
    perl -e 'printf "%.$ARGV[3]f", $ARGV[0] / $ARGV[2] / $ARGV[1] * 1e6' -- \
        "$1" "$2" "$clk_tck" "${3:-4}"
}


# --- servers ----------------------------------------------------------------

# spawn_server KEY CPU OUT CMD [ARG...]: start CMD in its own session (so
# its tree is easy to find and a ^C of the script does not reach it),
# pinned with taskset to CPU (children and threads inherit it; an empty
# CPU: not pinned), stdout and stderr to OUT, stdin /dev/null; its pid
# goes to pid[KEY].  With a CPU cap (cpu_cap_setup) it starts in the
# capped cgroup.
spawn_server()
{
    local key=$1 cpu=$2 out=$3
    shift 3
    if [ -n "$cap_procs" ]; then
        set -- sh -c 'echo $$ >"$0" && exec "$@"' "$cap_procs" "$@"
    fi
    if [ -n "$cpu" ]; then
        setsid taskset -c "$cpu" "$@" >"$out" 2>&1 </dev/null &
    else
        setsid "$@" >"$out" 2>&1 </dev/null &
    fi
    pid[$key]=$!
}


# wait_url URL [CURL_OPTION...]: poll URL with curl (and the options) ten
# times a second for up to 5 s; returns 0 once it answers, 1 if never.
wait_url()
{
    local url=$1
    shift
    for _ in $(seq 1 50); do
        curl -s -o /dev/null "$@" "$url" && return 0
        sleep 0.1
    done
    return 1
}


# stop_tree ROOT [SIGNAL]: send SIGNAL (default $stop_signal) to ROOT,
# wait up to 3 s for it to exit, then SIGKILL whatever is left of the
# tree it had when called.
stop_tree()
{
    local root=$1 sig=${2:-$stop_signal} pids p
    pids=$(tree_pids "$root")
    kill -"$sig" "$root" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        kill -0 "$root" 2>/dev/null || break
        sleep 0.3
    done
    for p in $pids; do
        kill -KILL "$p" 2>/dev/null || true
    done
    return 0
}


# stop_server KEY [SIGNAL]: stop_tree the server pid[KEY], reap it and
# forget it.
stop_server()
{
    local p=${pid[$1]:-}
    [ -n "$p" ] || return 0
    stop_tree "$p" "${2:-}"
    wait "$p" 2>/dev/null || true
    unset "pid[$1]"
    return 0
}


# stop_all: stop_tree every server in pid, forget them, reap every
# background job.
stop_all()
{
    local k
    for k in "${!pid[@]}"; do
        stop_tree "${pid[$k]}"
        unset "pid[$k]"
    done
    wait 2>/dev/null || true
    return 0
}


# gannet_conf DIR CHILDREN MAX_CONNECTIONS: write DIR/gannet.conf with the
# common main part (CHILDREN children, user root, pid and error log under
# DIR/logs, MAX_CONNECTIONS) followed by stdin (the server blocks), make
# DIR/logs, and print the command line that runs it in the foreground.
# $GANNET_CONF_EXTRA, when set, is put into the main part (A/B runs of a
# feature: `limit_req_zone ...; limit_req ...;`).
gannet_conf()
{
    local d=$1
    mkdir -p "$d/logs"
    {
        cat <<EOF
children $2;
user root;
pid logs/gannet.pid;
error_log logs/error.log notice;
max_connections $3;
${GANNET_CONF_EXTRA:-}
EOF
        cat
    } >"$d/gannet.conf"
    echo "$gannet_bin -f -p $d/ -c $d/gannet.conf"
}


# nginx_conf DIR WORKERS NOFILE CONNECTIONS: write DIR/nginx.conf (master
# and WORKERS workers in the foreground, user root, pid and error log in
# DIR, worker_rlimit_nofile NOFILE, worker_connections CONNECTIONS, and an
# http block: no access log, the temporary paths in DIR, then stdin: the
# http-level settings and server blocks), make DIR/logs, and print the
# command line that runs it.
nginx_conf()
{
    local d=$1
    mkdir -p "$d/logs"
    {
        cat <<EOF
worker_processes $2;
daemon off;
master_process on;
user root;
pid $d/nginx.pid;
error_log $d/logs/error.log notice;
worker_rlimit_nofile $3;

events {
    worker_connections $4;
}

http {
    access_log off;
    client_body_temp_path $d/tmp_body;
    proxy_temp_path $d/tmp_proxy;
    fastcgi_temp_path $d/tmp_fastcgi;
    uwsgi_temp_path $d/tmp_uwsgi;
    scgi_temp_path $d/tmp_scgi;
EOF
        cat
        echo "}"
    } >"$d/nginx.conf"
    echo "nginx -p $d/ -e $d/logs/error.log -c $d/nginx.conf"
}


# --- wrk ----------------------------------------------------------------------

# run_wrk CONNS SECONDS CLOSE URL [WRK_OPTION...]: one thread of wrk
# pinned to CPU 1, CONNS connections for SECONDS against URL, with
# "Connection: close" when CLOSE is "close"; its stdout and stderr on
# stdout.
run_wrk()
{
    local conns=$1 secs=$2 close=$3 url=$4 hdr=()
    shift 4
    if [ "$close" = close ]; then
        hdr=(-H 'Connection: close')
    fi
    taskset -c 1 wrk -t1 -c"$conns" -d"${secs}s" "$@" "${hdr[@]}" "$url" 2>&1
}


# wrk_parse OUTPUT: from wrk's OUTPUT set wrk_rps (Requests/sec), wrk_reqs
# (requests completed), wrk_errors (socket errors plus non-2xx/3xx
# responses) and wrk_p50 (median latency of --latency; else empty).
wrk_parse()
{
    wrk_rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$1")
    wrk_reqs=$(awk '/ requests in / {print $1}' <<<"$1")
    wrk_errors=$(perl -ne '
        $e += $1 + $2 + $3 + $4
            if /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/;
        $e += $1 if /Non-2xx or 3xx responses: (\d+)/;
        END { print $e || 0 }' <<<"$1")
    wrk_p50=$(awk '/^ +50%/ {print $2}' <<<"$1")
}


# wrk_version: "wrk 4.x.y", the first two words of wrk -v.
wrk_version()
{
    wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2
}


# --- tables -------------------------------------------------------------------

# bench_pl: Perl subroutines for the table printers; prepend to a script:
# perl -e "$bench_pl"'...' .
# shellcheck disable=SC2016
#   med(LIST)          the median of LIST (mean of the middle two when
#                      even; 0 when empty)
#   ratio(X, BASE)     X / BASE as "%.2f", or "-" when BASE is 0
bench_pl='
    sub med { my @v = sort { $a <=> $b } @_; my $n = @v;
              return 0 unless $n;
              $n % 2 ? $v[$n/2] : ($v[$n/2-1] + $v[$n/2]) / 2 }
    sub ratio { my ($x, $base) = @_;
                $base ? sprintf("%.2f", $x / $base) : "-" }
'
