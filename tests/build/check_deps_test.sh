#!/bin/sh
# tests/build/check_deps_test.sh: tests/check-deps.sh itself, on small fake
# trees built in a temporary directory (check-deps.sh takes the root of the
# tree to check as its argument).
#
# A good tree must pass; each broken copy of it must fail with the message
# that names the fault: a circle of two stems, a longer circle, an upward
# include, a file in no layer, a stem listed twice, a stem with no file, a
# required LAYERS missing, a malformed LAYERS line, a module that opts in
# with its own LAYERS, an allowlisted circle (passes) and a stale allowlist
# entry, a private header x_int.h under its stem x (and on its own when
# listed), and rules between modules (hist/ and LMDB among them).
#
# Run from the repository root (make check does).

set -eu

root=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-deps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The default allowlist names files of the real tree: none here.
UA_DEPS_ALLOW=
export UA_DEPS_ALLOW
# The small trees have proto/ and shm/; the default list (every module)
# is tried once, on the good tree, below.
UA_DEPS_REQUIRED="proto shm"
export UA_DEPS_REQUIRED

fails=0

# put CASE PATH LINE...: write the lines to CASE/PATH.
put() {
    c=$1
    p=$2
    shift 2
    mkdir -p "$(dirname "$tmp/$c/$p")"
    if [ $# -eq 0 ]; then
        : > "$tmp/$c/$p"
    else
        printf '%s\n' "$@" > "$tmp/$c/$p"
    fi
}

# The good tree: proto/ and shm/ layered, the same-layer include
# shm/ring.c -> blockpool.h allowed, a lone .h and a lone .c, and a circle
# in worker/, which has no LAYERS and so no layer or circle check.
put good proto/LAYERS '# a comment' '' 'base: types' 'top: codec version'
put good proto/types.h '/* #include "codec.h" in a comment */'
put good proto/types.c '#include "types.h"' '#include <string.h>'
put good proto/codec.h '#include "types.h"'
put good proto/codec.c '#include "codec.h"' '#include "proto/types.h"'
put good proto/version.h
put good shm/LAYERS 'base: layout' 'region: ring blockpool' 'top: fanout main'
put good shm/layout.h '#include <stdint.h>'
put good shm/ring.h '#include "layout.h"'
put good shm/ring.c '#include "ring.h"' '#include "blockpool.h"'
put good shm/blockpool.h '#include "layout.h"'
put good shm/blockpool.c '#include "blockpool.h"'
put good shm/fanout.h '#include "ring.h"'
put good shm/fanout.c '#include "fanout.h"' '#include "shm/layout.h"'
put good shm/main.c '#include "fanout.h"'
put good worker/a.c '#include "b.h"' '#include "proto/codec.h"'
put good worker/a.h
put good worker/b.c '#include "a.h"' '#include "shm/ring.h"'
put good worker/b.h

# fork NAME: a copy of the good tree to break.
fork() {
    cp -R "$tmp/good" "$tmp/$1"
}

run() {
    rc=0
    sh "$root/tests/check-deps.sh" "$tmp/$1" > "$tmp/$1.out" 2>&1 || rc=$?
}

# pass NAME: the checker passes on the tree.
pass() {
    run "$1"
    if [ "$rc" -eq 0 ] && [ ! -s "$tmp/$1.out" ]; then
        echo "ok: $1 passes"
    else
        echo "FAIL: $1: expected to pass, exit $rc:" >&2
        sed 's/^/    /' "$tmp/$1.out" >&2
        fails=$((fails + 1))
    fi
}

# fail NAME TEXT [NOT]: the checker exits 1 and prints a line with TEXT
# (and nothing with NOT).
fail() {
    run "$1"
    if [ "$rc" -ne 1 ]; then
        echo "FAIL: $1: expected exit 1, got $rc:" >&2
    elif ! grep -qF -- "$2" "$tmp/$1.out"; then
        echo "FAIL: $1: no line with '$2':" >&2
    elif [ $# -ge 3 ] && grep -qF -- "$3" "$tmp/$1.out"; then
        echo "FAIL: $1: a line with '$3' (not expected):" >&2
    else
        echo "ok: $1 fails: $2"
        return 0
    fi
    sed 's/^/    /' "$tmp/$1.out" >&2
    fails=$((fails + 1))
}

pass good

fork circle2
put circle2 shm/blockpool.c '#include "blockpool.h"' '#include "ring.h"'
fail circle2 \
    'shm/ring.c:2: include circle in shm/: ring -> blockpool -> ring' \
    'may not include'
grep -qF '    shm/blockpool.c:2 includes "ring.h"' "$tmp/circle2.out" || {
    echo "FAIL: circle2: the steps of the circle are not listed" >&2
    fails=$((fails + 1))
}

fork circle3
put circle3 shm/LAYERS 'base: layout' 'region: ring blockpool pki' \
    'top: fanout main'
put circle3 shm/blockpool.h '#include "layout.h"' '#include "pki.h"'
put circle3 shm/pki.h '#include "layout.h"'
put circle3 shm/pki.c '#include "pki.h"' '#include "ring.h"'
fail circle3 'include circle in shm/: ring -> blockpool -> pki -> ring'

fork upward
put upward proto/types.c '#include "types.h"' '#include "version.h"'
fail upward 'proto/types.c:2: base may not include version (layer top)' \
    'circle'

fork upward_h
put upward_h shm/layout.h '#include <stdint.h>' '#include "shm/main.c"'
fail upward_h 'shm/layout.h:2: base may not include main (layer top)'

fork unlisted
put unlisted proto/extra.c '#include "types.h"'
fail unlisted 'proto/extra.c: not in proto/LAYERS (put stem extra in a layer)'

fork twice
put twice proto/LAYERS 'base: types' 'top: codec version codec'
fail twice 'proto/LAYERS:2: stem codec listed twice (also on line 2)'

fork nofile
put nofile proto/LAYERS 'base: types' 'top: codec version ghost'
fail nofile 'proto/LAYERS:2: stem ghost has no proto/ghost.c or proto/ghost.h'

fork badline
put badline proto/LAYERS 'base: types' 'codec version'
fail badline 'proto/LAYERS:2: expected "<layer>: <stem> <stem> ..."'

fork nolayers
rm "$tmp/nolayers/shm/LAYERS"
fail nolayers 'shm/LAYERS: missing'

# Without UA_DEPS_REQUIRED every module needs its LAYERS: the good tree
# has none for worker/ and broker/.
UA_DEPS_REQUIRED=proto\ shm\ worker\ broker
fail good 'worker/LAYERS: missing'
unset UA_DEPS_REQUIRED
fail good 'broker/LAYERS: missing'
UA_DEPS_REQUIRED="proto shm"
export UA_DEPS_REQUIRED

fork optin
put optin worker/LAYERS 'all: a b'
fail optin 'include circle in worker/: a -> b -> a'

fork allowed
put allowed shm/blockpool.c '#include "blockpool.h"' '#include "ring.h"'
UA_DEPS_ALLOW='shm/blockpool.c:shm/ring.h'
pass allowed

fork stale
UA_DEPS_ALLOW='shm/ring.c:shm/fanout.h'
fail stale 'UA_DEPS_ALLOW: shm/ring.c:shm/fanout.h no longer occurs'
UA_DEPS_ALLOW=

# A private header x_int.h belongs to stem x: ring.c -> ring_int.h ->
# ring.h is no circle, and ring_int.h needs no stem of its own; listed on
# its own (an x_int stem), it is a stem like any other.
fork private
put private shm/ring_int.h '#include "ring.h"'
put private shm/ring.c '#include "ring_int.h"' '#include "blockpool.h"'
pass private
fork private_own
cp -R "$tmp/private/." "$tmp/private_own"
put private_own shm/LAYERS 'base: layout' 'region: ring blockpool' \
    'top: fanout main ring_int'
fail private_own 'shm/ring.c:1: region may not include ring_int (layer top)'
fork private_up
cp -R "$tmp/private/." "$tmp/private_up"
put private_up shm/ring_int.h '#include "ring.h"' '#include "fanout.h"'
fail private_up 'shm/ring_int.h:2: region may not include fanout (layer top)'

fork between
put between proto/codec.c '#include "codec.h"' '#include "shm/ring.h"'
fail between 'proto/codec.c:2: proto/ and shm/ never include each other'

# hist/ (the history store) stands alone: LMDB in hist/store.c (and the
# side databases' and the events' files) only, no
# other module's headers; worker/ may include it.
fork hist
put hist hist/LAYERS 'base: sample' 'top: store'
put hist hist/sample.h '#include <stdint.h>'
put hist hist/store.c '#include "sample.h"' '#include <lmdb.h>'
put hist worker/c.c '#include "hist/sample.h"'
pass hist
fork hist_lmdb
cp -R "$tmp/hist/." "$tmp/hist_lmdb"
put hist_lmdb hist/sample.c '#include "sample.h"' '#include <lmdb.h>'
fail hist_lmdb 'hist/sample.c:2: LMDB may be included only by hist/store.c'
fork hist_shm
cp -R "$tmp/hist/." "$tmp/hist_shm"
put hist_shm hist/sample.c '#include "sample.h"' '#include "shm/ring.h"'
fail hist_shm 'hist/sample.c:2: hist/ may include only hist/ headers'

if [ "$fails" -ne 0 ]; then
    echo "check_deps_test: $fails case(s) failed" >&2
    exit 1
fi
echo "check_deps_test: all cases as expected"
