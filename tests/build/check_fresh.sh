#!/bin/sh
# tests/build/check_fresh.sh: `make run` on a machine that has none of the
# packages yet builds and runs, in one command (README: the first command a
# new user types).
#
# A copy of the source tree is built from nothing with a pkg-config that
# knows no package until the install step has run (as on a fresh Debian
# 12: no .pc files before apt-get), and an install step that only marks
# the packages installed.  Before the two-phase Makefile (phase 1 in the
# Makefile) this failed at link time: make had asked pkg-config while it
# read the Makefile, before the install, and linked without -lnanomsg
# (undefined reference to nn_close).  The broker must link and answer
# --version, and the install step must have run before any pkg-config
# question got an answer.
#
# Run from the repository root (make check does); needs the real
# pkg-config with the packages installed (make check's phase 1 did that).

set -eu

root=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-fresh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "check_fresh: FAIL: $*" >&2
    exit 1
}

real=$(command -v pkg-config) || fail "pkg-config not found"
mkdir -p "$tmp/src" "$tmp/bin"
# The tree as a clone would have it (tracked and new files, not build/).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard -z \
        | (cd "$root" && xargs -0 tar -cf -) | tar -xf - -C "$tmp/src"
else
    tar -cf - --exclude=./build --exclude=node_modules . \
        | tar -xf - -C "$tmp/src"
fi
[ -f "$tmp/src/Makefile" ] || fail "no copy of the tree"

mark=$tmp/installed
log=$tmp/pkg.log
cat > "$tmp/bin/pkg-config" <<EOT
#!/bin/sh
# No package is known before the install step ran.
if [ -f "$mark" ]; then echo "after $*" >> "$log"; exec "$real" "\$@"; fi
echo "before $*" >> "$log"
echo "Package \$* was not found in the pkg-config search path." >&2
exit 1
EOT
cat > "$tmp/bin/install-deps" <<EOT
#!/bin/sh
# The packages are "installed" (they are on this machine already).
echo "install \$*" >> "$log"
touch "$mark"
EOT
chmod +x "$tmp/bin/pkg-config" "$tmp/bin/install-deps"

out=$tmp/make.out
# A make of its own, as a user's: nothing of the make check that runs this
# (its UA_DEPS_DONE, SAN, jobserver) may reach it.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
        -u UA_DEPS_DONE -u SAN make -C "$tmp/src" -j2 run PKG="$tmp/bin/pkg-config" \
        DEPS_CMD="$tmp/bin/install-deps" RUN_ARGS=--version \
        > "$out" 2>&1; then
    tail -20 "$out" >&2
    fail "make run on a fresh machine failed"
fi
[ -f "$mark" ] || fail "make run did not run the install step"
grep -q '^install' "$log" || fail "no install step logged"
if grep -q '^before' "$log"; then
    sed -n '1,5p' "$log" >&2
    fail "pkg-config was asked before the install step"
fi
grep -q -- '-lnanomsg' "$out" || fail "the broker was linked without nanomsg"
grep -qi 'uabroker' "$out" || fail "uabroker --version printed nothing"
echo "check_fresh: make run on a fresh machine: installed first, then" \
     "built and ran ($(grep -c '^after' "$log") pkg-config answers)"
