#!/bin/sh
# tests/bench/instr_write.sh: instructions per WriteValue of write100, in
# the broker and in the worker (`make bench-instr`).
#
#   sh tests/bench/instr_write.sh [SESSIONS [SECONDS]]     (default 4 8)
#
# INSTR_SCENARIO=read100 (or read1, browse: any uabench scenario) counts
# that scenario instead, per value for read100 and write100, per request
# for the others: the same measure for the Read and Browse paths.
#
# CPU time per request moves with the host of this VM (the same code has
# measured 10 to 17 µs of server CPU per write100 on different hours), so
# a change to the Write path is judged by what does not move: the
# instructions each process executes.  The broker (and the worker it
# starts) run under `valgrind --tool=callgrind`; after a warm-up uabench
# runs write100 with SESSIONS sessions, depth 1, for SECONDS; the
# counters are zeroed just before that window (callgrind_control -z), so
# start-up (the broker's key generation, the address space build) is not
# counted.  The requests are counted by uabench (ops/s × seconds), each
# of 100 WriteValues.  Needs valgrind (Debian package valgrind).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
. "$here/benchlib.sh"

sessions=${1:-4}
secs=${2:-8}
scenario=${INSTR_SCENARIO:-write100}
case $scenario in
    read100|write100) per=100 ;;
    *)                per=1 ;;
esac
case $scenario in
    write100) unit=WriteValue ;;
    read100)  unit=ReadValueId ;;
    *)        unit="$scenario request" ;;
esac
broker=${UABROKER:-build/uabroker}
bench=${UABENCH:-build/bench/uabench}
command -v valgrind >/dev/null 2>&1 || {
    echo "instr_write: valgrind not found (apt-get install valgrind)" >&2
    exit 1
}
for f in "$broker" "$bench"; do
    [ -x "$f" ] || { echo "instr_write: $f not found: make first" >&2
                     exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-instr.XXXXXX")
pid=
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
bench_traps

bench_ports

mkdir -p "$tmp/run"
valgrind --tool=callgrind --compress-strings=no --trace-children=yes \
    --callgrind-out-file="$tmp/cg.%p" \
    "$broker" -w 1 -p "$port" --stats "127.0.0.1:$sport" \
    --runtime-dir "$tmp/run" --set security.anonymous_write=true \
    >"$tmp/broker.log" 2>&1 &
pid=$!

# Ready when a short write100 goes through (valgrind starts slowly); that
# run is the warm-up.
n=0
until timeout 30 "$bench" --url "$url" --scenario "$scenario" --sessions \
        "$sessions" --seconds 2 --warmup 1 --quiet >/dev/null 2>&1; do
    n=$((n + 1))
    if [ $n -ge 10 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "instr_write: the broker is not serving; its log:" >&2
        cat "$tmp/broker.log" >&2
        exit 1
    fi
    sleep 2
done

for p in "$pid" $(pgrep -P "$pid"); do
    callgrind_control -z "$p" >/dev/null 2>&1
done
out=$("$bench" --url "$url" --scenario "$scenario" --sessions "$sessions" \
      --seconds "$secs" --warmup 0 --quiet)
kill -INT "$pid"
wait "$pid" 2>/dev/null || true
pid=

reqs=$(echo "$out" | awk -v s="$secs" '{
    for (i = 1; i <= NF; i++)
        if (index($i, "ops/s=") == 1) printf "%d", substr($i, 7) * s }')
errs=$(echo "$out" | sed -n 's/.* errors=\([0-9]*\).*/\1/p')
if [ -z "$reqs" ] || [ "$reqs" -eq 0 ] || [ "${errs:-1}" != 0 ]; then
    echo "instr_write: the measured run failed: $out" >&2
    exit 1
fi
echo "$scenario: $reqs requests of $per ${unit}s in ${secs} s," \
     "$sessions sessions (under callgrind)"
for f in "$tmp"/cg.*; do
    who=$(sed -n 's/^cmd: *//p' "$f" | head -n 1 | awk '{ print $1 }')
    who=${who##*/}
    awk -v who="$who" -v wv="$((reqs * per))" -v unit="$unit" '/^totals:/ {
        printf "%-9s %6.1f instructions per %s\n", who, $2 / wv, unit }' "$f"
done
