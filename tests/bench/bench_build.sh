#!/bin/sh
# tests/bench/bench_build.sh: address-space build time, segment size and
# bytes per variable node for namespace 0 plus 1,000 / 100,000 / 1,000,000
# variables (`uabroker --once`).  Part of `make bench-addrspace`.
#
#   sh tests/bench/bench_build.sh BROKER [--markdown FILE]
#
# "Bytes per variable node" is what one more Vars variable adds to the node
# store (node, its references at both ends, its share of the NodeId index
# and its strings) plus its interest mask, measured as the difference
# between the 1,000,000 and the 1,000 build; its value slot (64 bytes) and
# value-heap bytes are reported apart, as the issue asks.
set -eu
broker=$1
shift
md=
if [ "${1-}" = "--markdown" ]; then md=$2; fi

run() {
    "$broker" --once --vars "$1" --set addrspace.value_heap_mb=1 2>/dev/null
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

out=$(mktemp)
{
    echo "| variables | nodes | references | build (s) | segment (MiB) | node store (MiB) |"
    echo "|---:|---:|---:|---:|---:|---:|"
} > "$out"
for n in 1000 100000 1000000; do
    best=
    # Best of 3: the machine is shared.
    for i in 1 2 3; do
        l=$(run $n)
        t=$(field "$l" build_s)
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then
            best=$t; line=$l
        fi
    done
    store=$(( $(field "$line" node_bytes) + $(field "$line" ref_bytes) \
              + $(field "$line" index_bytes) + $(field "$line" string_bytes) ))
    eval "store_$n=$store; interest_$n=$(field "$line" interest_bytes)"
    awk -v n=$n -v nodes="$(field "$line" nodes)" \
        -v refs="$(field "$line" refs)" -v t="$best" \
        -v seg="$(field "$line" segment_bytes)" -v st="$store" 'BEGIN {
        printf "| %d | %d | %d | %.3f | %.1f | %.1f |\n",
               n, nodes, refs, t, seg / 1048576, st / 1048576 }' >> "$out"
done
per=$(awk -v a="$store_1000" -v b="$store_1000000" -v ia="$interest_1000" \
          -v ib="$interest_1000000" \
          'BEGIN { printf "%.1f", ((b + ib) - (a + ia)) / 999000 }')
{
    echo
    echo "Bytes per variable node, apart from its value: **$per** (target ≤ 160;"
    echo "a leading C stack spends about 1 kB). Its value slot adds 64 bytes;"
    echo "values over 24 bytes also take a value-heap block."
    echo "Build of 1,000,000 variables: target ≤ 2 s."
} >> "$out"
cat "$out"
if [ -n "$md" ]; then
    python3 - "$md" "$out" <<'PY'
import sys
path, table = sys.argv[1], open(sys.argv[2]).read()
b, e = "<!-- bench-build:begin -->", "<!-- bench-build:end -->"
doc = open(path).read()
section = b + "\n" + table + e
if b in doc and e in doc:
    doc = doc[:doc.index(b)] + section + doc[doc.index(e) + len(e):]
else:
    doc = doc.rstrip("\n") + "\n\n" + section + "\n"
open(path, "w").write(doc)
PY
fi
rm -f "$out"
