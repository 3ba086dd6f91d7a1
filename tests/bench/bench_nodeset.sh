#!/bin/sh
# tests/bench/bench_nodeset.sh: NodeSet2 import time and shared memory per
# imported node (`make bench-nodeset`).
#
#   sh tests/bench/bench_nodeset.sh BROKER [NODES]     (default 100000)
#
# tests/bench/gen_nodeset.py writes a model of NODES nodes (objects and
# variables of mixed types with values, two references each) into a
# temporary file; `uabroker --once --vars 0` builds the address space
# without it and with it (--nodeset), best of 3 each.  Import time is the
# difference of the two build times (parse, plan, add, values); bytes per
# node is the difference of the segment bytes in use (nodes, references at
# both ends, NodeId index, strings, value slots, interest masks, value
# heap) divided by NODES, and the planned segment's growth per node.
set -eu
broker=$1
nodes=${2:-100000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-nodeset.XXXXXX")
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

python3 "$here/gen_nodeset.py" "$nodes" "$tmp/bench.xml"
bytes=$(wc -c < "$tmp/bench.xml")

field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
used() {
    echo $(( $(field "$1" node_bytes) + $(field "$1" ref_bytes) \
             + $(field "$1" index_bytes) + $(field "$1" string_bytes) \
             + $(field "$1" slot_bytes) + $(field "$1" interest_bytes) \
             + $(field "$1" vheap_used) ))
}
best() {
    b=
    for i in 1 2 3; do
        l=$("$broker" --once --vars 0 --set addrspace.value_heap_mb=1 "$@" \
            2>/dev/null)
        t=$(field "$l" build_s)
        if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then
            b=$t; line=$l
        fi
    done
    echo "$line"
}
base=$(best)
with=$(best --nodeset "$tmp/bench.xml")
awk -v n="$nodes" -v fb="$bytes" \
    -v t0="$(field "$base" build_s)" -v t1="$(field "$with" build_s)" \
    -v u0="$(used "$base")" -v u1="$(used "$with")" \
    -v s0="$(field "$base" segment_bytes)" \
    -v s1="$(field "$with" segment_bytes)" \
    -v r0="$(field "$base" refs)" -v r1="$(field "$with" refs)" 'BEGIN {
    printf "nodeset: %d nodes, file %.1f MiB, %d references stored\n",
           n, fb / 1048576, r1 - r0
    printf "nodeset: build %.3f s without, %.3f s with: import %.3f s " \
           "(%.0f nodes/s)\n", t0, t1, t1 - t0, n / (t1 - t0)
    printf "nodeset: shared memory in use %.1f bytes/node; " \
           "segment planned %.1f bytes/node\n",
           (u1 - u0) / n, (s1 - s0) / n
}'
