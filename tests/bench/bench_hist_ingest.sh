#!/bin/sh
# tests/bench/bench_hist_ingest.sh: historized value changes through the
# whole broker (docs/benchmarks.md "History: end to end").
#
#   tests/bench/bench_hist_ingest.sh [UABROKER] [VARS] [SECONDS] [ROUNDS]
#
# Each round starts UABROKER (default build/uabroker) four times, with
# one worker and the VARS (default 10000) Demo.Vars changed by the
# simulation every 10 ms (addrspace.simulation_vars: VARS x 100 changes a
# second at most):
#   off      not historized, nobody watching them
#   off+sub  not historized, one uabench session (UABENCH, default
#            build/bench/uabench) subscribed to every one of them
#            (publishing interval 1000 ms, queue 1: the client stays
#            cheap, the broker fans out every change to the worker)
#   on       historized (history.demo_vars), nobody else watching
#   on+sub   historized and that subscriber
# (the order rotates from round to round).  In all of them the historian
# runs and keeps the 4 Demo.Simulation variables (history.simulation):
# Demo.Simulation.Counter's values counted in the store (`uabroker
# history list`) are the ticks the broker made.  After 3 s (5 s with the
# subscriber, whose 15,000 items take a moment) it measures SECONDS
# (default 20) of the broker's and the historian's CPU (utime+stime from
# /proc, 10 ms ticks) and the historian's committed values (/stats
# history.values_stored, which moves once a commit).  One line per run:
#
#   run=on+sub changes/s=... broker_ns/change=... stored/s=...
#       historian_ns/value=... lost=... sub_notif/s=...
#
# changes/s is VARS x the ticks counted / the window; broker_ns/change
# the broker's CPU over the window / those changes; historian_ns/value
# its CPU / the values it committed; sub_notif/s what the subscriber
# received (uabench ops/s).  CASES (default "off off+sub on on+sub")
# picks the cases.
# The store is in a scratch directory under TMPDIR (default /tmp).

set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
broker=${1:-$root/build/uabroker}
uabench=${UABENCH:-$root/build/bench/uabench}
cases=${CASES:-off off+sub on on+sub}
vars=${2:-10000}
secs=${3:-20}
rounds=${4:-3}
# A commit rewrites the last block page of every node it touches: with
# thousands of nodes the commit interval sets the write amplification
# (docs/benchmarks.md "History: end to end"); FLUSH_MS and BATCH as
# history.flush_ms and history.batch.
flush=${FLUSH_MS:-1000}
batch=${BATCH:-2097152}
# The fan-out's blocks hold the changes while the historian commits (it
# drains no block meanwhile): 4096 of 16 KiB are about 2 s of 1 M/s.
blocks=${FANOUT_BLOCKS:-4096}
hz=$(getconf CLK_TCK)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-ingest.XXXXXX")
pid=
bpid=
trap '[ -n "$bpid" ] && kill "$bpid" 2>/dev/null
      [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

# utime+stime of a process, in clock ticks (0 when it is gone).
cpu() {
    awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# A field of the /stats "history" object (0 when there is none).
hstat() {
    curl -s "http://127.0.0.1:$sport/stats" | python3 -c '
import json, sys
h = json.load(sys.stdin).get("history") or {}
print(h.get(sys.argv[1], 0))' "$1"
}

# Demo.Simulation.Counter's values in the store (the ticks so far).
ticks() {
    "$broker" --runtime-dir "$tmp/run" history list 2>/dev/null \
        | awk '/Demo.Simulation.Counter / { for (i = 1; i <= NF; i++)
            if ($i ~ /^values=/) { sub("values=", "", $i); print $i } }'
}

# run CASE: one of off, off+sub, on, on+sub.
run() {
    name=$1
    on=false
    sub=false
    case $name in on*) on=true ;; esac
    case $name in *+sub) sub=true ;; esac
    hv=0
    [ "$on" = true ] && hv=$vars
    rm -rf "$tmp/run"
    mkdir -p "$tmp/run"
    ports=$(python3 "$root/tests/lib/free-ports.py" 2)
    set -- $ports
    port=$1
    sport=$2
    "$broker" -w 1 -p "$port" --stats "127.0.0.1:$sport" \
        --runtime-dir "$tmp/run" --vars "$vars" \
        --set addrspace.simulation_vars="$vars" \
        --set addrspace.simulation_interval_ms=10 \
        --set history.demo_vars="$hv" \
        --set history.retention_s=0 --set history.flush_ms="$flush" \
        --set history.batch="$batch" --set fanout.blocks="$blocks" \
        --set limits.max_monitored_items_per_call="$vars" \
        --set limits.max_monitored_items_per_subscription="$vars" \
        >"$tmp/broker.log" 2>&1 &
    pid=$!
    : >"$tmp/uabench.out"
    if [ "$sub" = true ]; then
        # The worker listening first (its state in /stats), then a
        # moment for the historian's start.
        w=0
        until curl -s "http://127.0.0.1:$sport/stats" 2>/dev/null \
                | grep -q '"state": *"up"' || [ "$w" -ge 100 ]; do
            sleep 0.1
            w=$((w + 1))
        done
        sleep 1
        "$uabench" --url "opc.tcp://127.0.0.1:$port" --scenario sub \
            --source sim --items "$vars" --vars-count "$vars" \
            --interval 1000 --queue 1 --rate 100 --warmup 3 \
            --seconds "$((secs + 1))" --quiet \
            >"$tmp/uabench.out" 2>"$tmp/uabench.err" &
        bpid=$!
        sleep 4
    else
        sleep 3
    fi
    hpid=$(pgrep -P "$pid" -x uahistorian || echo 0)
    b0=$(cpu "$pid")
    h0=0
    [ "$hpid" != 0 ] && h0=$(cpu "$hpid")
    s0=$(hstat values_stored)
    l0=$(hstat values_lost)
    k0=$(ticks)
    t0=$(date +%s.%N)
    sleep "$secs"
    b1=$(cpu "$pid")
    h1=0
    [ "$hpid" != 0 ] && h1=$(cpu "$hpid")
    s1=$(hstat values_stored)
    l1=$(hstat values_lost)
    k1=$(ticks)
    t1=$(date +%s.%N)
    if [ -n "$bpid" ]; then
        wait "$bpid" 2>/dev/null || true
        bpid=
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
    nps=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^ops\/s=/) {
        sub("ops/s=", "", $i); print $i } }' "$tmp/uabench.out")
    [ "$sub" = true ] && [ -z "$nps" ] && \
        echo "# $name: uabench: $(tail -1 "$tmp/uabench.err")" >&2
    python3 -c '
import sys
name, vars_, hz, b0, b1, h0, h1, s0, s1, l0, l1, k0, k1, t0, t1, nps = \
    sys.argv[1:]
vars_, hz = int(vars_), int(hz)
dt = float(t1) - float(t0)
changes = vars_ * (int(k1 or 0) - int(k0 or 0))     # VARS a tick
stored = (int(s1) - int(s0)) / dt
bcpu = (int(b1) - int(b0)) / hz
hcpu = (int(h1) - int(h0)) / hz
print("run=%-7s changes/s=%.0f broker_cpu=%.2fs broker_ns/change=%.0f"
      " stored/s=%.0f historian_cpu=%.2fs historian_ns/value=%.0f lost=%d"
      " sub_notif/s=%s" % (
    name, changes / dt, bcpu,
    bcpu / max(changes, 1) * 1e9, stored, hcpu,
    hcpu / max(stored * dt, 1) * 1e9, int(l1) - int(l0), nps or "-"))' \
        "$name" "$vars" "$hz" "$b0" "$b1" "$h0" "$h1" "$s0" "$s1" \
        "$l0" "$l1" "$k0" "$k1" "$t0" "$t1" "$nps"
}

echo "# $vars variables every 10 ms, ${secs}s windows, $rounds rounds," \
    "history.flush_ms=$flush history.batch=$batch fanout.blocks=$blocks;" \
    "load: $(cut -d' ' -f1-3 /proc/loadavg)"
r=0
set -- $cases
n=$#
while [ "$r" -lt "$rounds" ]; do
    # Round r starts at case r (mod the number of cases): each case
    # takes each place in turn.
    k=0
    while [ "$k" -lt "$n" ]; do
        eval "c=\${$(( (r + k) % n + 1 ))}"
        run "$c"
        k=$((k + 1))
    done
    r=$((r + 1))
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
