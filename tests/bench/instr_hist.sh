#!/bin/sh
# tests/bench/instr_hist.sh: the broker's instructions per value change
# with history off and on, with and without a subscriber on the same
# variables (`make bench-instr-hist`; docs/benchmarks.md "History: end to
# end").
#
#   sh tests/bench/instr_hist.sh [VARS [SECONDS [CASES]]]
#                                          (default 2000 8 "off off+sub
#                                           on on+sub")
#
# The wall-clock version of this comparison (bench_hist_ingest.sh) moves
# by ±10 ns per change with the load of a 2-vCPU machine shared by the
# broker, its worker, its historian and the client; instructions do not.
# Each case starts the broker under `valgrind --tool=callgrind` (the
# broker only: its worker and historian run natively after their exec)
# with VARS Demo.Vars changed by the simulation every 10 ms, historized
# (history.demo_vars) in "on" and "on+sub"; in the "+sub" cases one
# uabench session subscribes to all of them (queue 1, publishing 1 s).
# After the start and a warm-up the counters are zeroed
# (callgrind_control -z); SECONDS later they are dumped.  The changes
# made in that window are VARS x the simulation's ticks (calls of
# bk_sim_tick in the dump); the figure is the broker's whole count
# (event loop, fan-out, drains included) over those changes.  Needs
# valgrind (Debian package valgrind).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
. "$here/benchlib.sh"

vars=${1:-2000}
secs=${2:-8}
cases=${3:-off off+sub on on+sub}
broker=${UABROKER:-build/uabroker}
bench=${UABENCH:-build/bench/uabench}
command -v valgrind >/dev/null 2>&1 || {
    echo "instr_hist: valgrind not found (apt-get install valgrind)" >&2
    exit 1
}
for f in "$broker" "$bench"; do
    [ -x "$f" ] || { echo "instr_hist: $f not found: make first" >&2
                     exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-instrh.XXXXXX")
pid=
bpid=
cleanup() {
    for p in "$bpid" "$pid"; do
        if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
            kill -KILL "$p" 2>/dev/null || true
        fi
    done
    rm -rf "$tmp"
}
bench_traps

# run CASE: one line, the broker's instructions per change.
run() {
    name=$1
    hv=0
    case $name in on*) hv=$vars ;; esac
    rm -rf "$tmp/run" "$tmp"/cg.*
    mkdir -p "$tmp/run"
    bench_ports
    valgrind --tool=callgrind --compress-strings=no --trace-children=no \
        --callgrind-out-file="$tmp/cg.out" \
        "$broker" -w 1 -p "$port" --stats "127.0.0.1:$sport" \
        --runtime-dir "$tmp/run" --vars "$vars" \
        --set addrspace.simulation_vars="$vars" \
        --set addrspace.simulation_interval_ms=10 \
        --set history.demo_vars="$hv" --set history.retention_s=0 \
        --set limits.max_monitored_items_per_call="$vars" \
        --set limits.max_monitored_items_per_subscription="$vars" \
        >"$tmp/broker.log" 2>&1 &
    pid=$!
    w=0
    until curl -s "$stats/stats" 2>/dev/null | grep -q '"state": *"up"'; do
        w=$((w + 1))
        if [ $w -ge 600 ] || ! kill -0 "$pid" 2>/dev/null; then
            echo "instr_hist: the broker is not serving; its log:" >&2
            cat "$tmp/broker.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    case $name in
        *+sub)
            "$bench" --url "$url" --scenario sub --source sim \
                --items "$vars" --vars-count "$vars" --interval 1000 \
                --queue 1 --rate 100 --warmup 3 --seconds "$((secs + 8))" \
                --quiet >"$tmp/uabench.out" 2>&1 &
            bpid=$!
            sleep 6 ;;
        *)  sleep 4 ;;
    esac
    callgrind_control -z "$pid" >/dev/null 2>&1
    sleep "$secs"
    callgrind_control -d "$pid" >/dev/null 2>&1
    if [ -n "$bpid" ]; then
        wait "$bpid" 2>/dev/null || true
        bpid=
        grep -q "errors=0" "$tmp/uabench.out" || {
            echo "instr_hist: $name: the subscriber failed:" \
                 "$(tail -1 "$tmp/uabench.out")" >&2
            exit 1
        }
    fi
    kill -INT "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
    # callgrind_control -d wrote cg.out.1: the window (cg.out, written
    # at the exit, holds only what came after it).
    f=$tmp/cg.out.1
    [ -f "$f" ] || { echo "instr_hist: $name: no dump" >&2; exit 1; }
    awk -v name="$name" -v vars="$vars" '
        /^totals:/ { total = $2 }
        /^cfn=/ { tick = ($0 ~ /bk_sim_tick/) }
        /^calls=/ && tick { split($1, c, "="); ticks += c[2]; tick = 0 }
        END {
            changes = vars * ticks
            if (changes == 0) { print name ": no tick counted"; exit 1 }
            printf "run=%-7s changes=%d instructions/change=%.1f\n",
                name, changes, total / changes }' "$f"
}

echo "# $vars Demo.Vars every 10 ms, $secs s under callgrind, the broker only"
for c in $cases; do
    run "$c"
done
