#!/bin/sh
# tests/bench/bench_ab.sh: two uabroker builds through the server benchmark
# matrix, alternating, in one run (`make bench-ab A=... B=...`).
#
#   sh tests/bench/bench_ab.sh A_BROKER B_BROKER [ROUNDS]      (default 2)
#
# Each round runs tests/bench/bench_server.sh --no-doc once with
# UABROKER=A_BROKER, then once with UABROKER=B_BROKER (each broker starts
# the uaworker beside it), with the same uabench.  A change is judged by
# the ratio within this run, not by figures of other runs (the host's
# speed moves by more than most changes: docs/benchmarks.md "How to read
# these figures").  Prints every run's table, then one line per scenario:
# the median over the rounds of ops/s and of server CPU µs/op for A and
# B, and B's CPU over A's.  BENCH_SECONDS etc. as for bench_server.sh.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
a=${1:?usage: bench_ab.sh A_BROKER B_BROKER [ROUNDS]}
b=${2:?usage: bench_ab.sh A_BROKER B_BROKER [ROUNDS]}
rounds=${3:-2}
case $rounds in
    ''|*[!0-9]*|0) echo "bench_ab: ROUNDS must be a positive integer" >&2
                   exit 2 ;;
esac
for f in "$a" "$b"; do
    [ -x "$f" ] || { echo "bench_ab: $f is not an executable" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

r=1
while [ "$r" -le "$rounds" ]; do
    for side in A B; do
        if [ "$side" = A ]; then bin=$a; else bin=$b; fi
        echo "## round $r, $side: $bin"
        UABROKER=$bin sh "$here/bench_server.sh" --no-doc \
            | tee "$tmp/$side.$r"
    done
    r=$((r + 1))
done

# The table rows: | scenario | sessions | depth | ops/s | p50 | p90 | p99 |
# client CPU | server CPU | allocs | errors | other |
echo
echo "| scenario | sessions | depth | A ops/s | B ops/s | A server CPU µs/op | B server CPU µs/op | B/A CPU |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for side in A B; do
    cat "$tmp/$side".* | awk -v s="$side" -F'|' '
        NF >= 13 && $2 ~ /^ [a-z]/ && $5 ~ /[0-9]/ {
            gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $4)
            gsub(/ /, "", $5); gsub(/ /, "", $10)
            print s, $2 "/" $3 "/" $4, $5, $10
        }'
done | awk -v rounds="$rounds" '
    function median(list,   n, v, i, j, t) {
        n = split(list, v, " ")
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
                t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
            }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    {
        if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 }
        ops[$1, $2] = ops[$1, $2] " " $3
        cpu[$1, $2] = cpu[$1, $2] " " $4
    }
    END {
        for (i = 1; i <= k; i++) {
            key = order[i]
            split(key, p, "/")
            ca = median(cpu["A", key]); cb = median(cpu["B", key])
            printf "| %s | %s | %s | %.0f | %.0f | %.2f | %.2f | %s |\n",
                   p[1], p[2], p[3], median(ops["A", key]),
                   median(ops["B", key]), ca, cb,
                   (ca > 0 ? sprintf("%.2f", cb / ca) : "-")
        }
    }'
