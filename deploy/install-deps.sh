#!/bin/sh
# deploy/install-deps.sh: install the Debian 12 packages uabroker needs.
#
#   deploy/install-deps.sh [--fuzz] [--node] [--test]
#
# Always: the build and unit-test dependencies, and python3 for the
# generators (make regen).  --fuzz adds clang and its sanitizer/libFuzzer
# runtime (make fuzz); --node adds Node.js and npm (interop tests, test
# vector scripts); --test adds the programs the tests run beside the
# broker (mosquitto, the MQTT broker of tests/integ/integ_mqtt.c, openssl
# for its test certificates, promtool from prometheus, git).  `make check`
# asks for --node --test.
#
# Nothing missing: exits 0 silently.  Something missing: as root, runs
# apt-get update and apt-get install; otherwise prints the exact apt-get
# line to stderr and exits 1.  `make run` and `make check` call this.

set -eu

base="gcc libc6-dev libevent-dev libwolfssl-dev libnanomsg-dev libinih-dev libxml2-dev libmosquitto-dev liblmdb-dev check pkg-config python3"
fuzz="clang libclang-rt-14-dev"
node="nodejs npm"
test="git mosquitto openssl prometheus"

usage() {
    sed -n '2,16s/^# \{0,1\}//p' "$0"
}

want=$base
for arg in "$@"; do
    case $arg in
    --fuzz) want="$want $fuzz" ;;
    --node) want="$want $node" ;;
    --test) want="$want $test" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-deps: unknown option: $arg" >&2; usage >&2; exit 2 ;;
    esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: dpkg-query not found: this script knows Debian 12" \
         "only; install the equivalents of: $want" >&2
    exit 1
fi

# Installed as a Debian package, or (nodejs, npm, python3) as a command on
# PATH: NodeSource's nodejs package ships npm and conflicts with Debian's npm
# package, and a pyenv python3 serves the generators as well.
have() {
    case $1 in
    nodejs) command -v node >/dev/null 2>&1 && return 0 ;;
    npm|python3) command -v "$1" >/dev/null 2>&1 && return 0 ;;
    prometheus) command -v promtool >/dev/null 2>&1 && return 0 ;;
    esac
    dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q ' installed$'
}

missing=
for p in $want; do
    have "$p" || missing="$missing $p"
done
[ -n "$missing" ] || exit 0

if [ "$(id -u)" -eq 0 ]; then
    echo "install-deps: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    # shellcheck disable=SC2086
    apt-get install -y --no-install-recommends $missing
else
    echo "install-deps: missing Debian packages:$missing" >&2
    echo "install-deps: as root, after apt-get update, run:" >&2
    echo "apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
