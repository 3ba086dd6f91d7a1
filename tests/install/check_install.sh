#!/bin/sh
# tests/install/check_install.sh: make install / make uninstall into a
# scratch DESTDIR, run from the repository root by make check.
#
#   1. make install DESTDIR=D: every file there with its mode; the unit's
#      Exec lines name PREFIX's binary and SYSCONFDIR's configuration; the
#      installed configuration puts the sockets in /run/uabroker and the
#      PKI in /var/lib/uabroker;
#   2. the installed uabroker: --version, -t with the installed
#      configuration, and serving (sockets and PKI moved into D) with its
#      worker exec'd from the installed uaworker beside it;
#   3. systemd-analyze verify on the unit (when systemd-analyze exists);
#   4. a second install keeps a changed uabroker.conf and puts the new one
#      beside it as uabroker.conf.dist;
#   5. PREFIX=/opt/uabroker: the unit follows;
#   6. make uninstall: everything gone but uabroker.conf.
#
# Prints "ok N - ..." / "FAIL N - ..." and "check_install: N passed, M
# failed"; exits 1 on any failure (D is then kept and named).

set -u

MAKE=${MAKE:-make}
n=0
failed=0
D=$(mktemp -d "${TMPDIR:-/tmp}/uabroker-install-XXXXXX") || exit 1
broker=

check() {
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        echo "ok $n - $2"
    else
        echo "FAIL $n - $2"
        failed=$((failed + 1))
    fi
}

# check_that "what" command...: the command's exit status decides.
check_that() {
    what=$1
    shift
    "$@" >/dev/null 2>&1
    check $? "$what"
}

finish() {
    if [ -n "$broker" ]; then
        kill -KILL "$broker" 2>/dev/null
    fi
    echo "check_install: $((n - failed)) passed, $failed failed"
    if [ "$failed" -ne 0 ]; then
        echo "# kept $D"
        exit 1
    fi
    rm -rf "$D"
    exit 0
}
trap finish EXIT
trap 'exit 1' INT TERM

mode_is() {
    [ -f "$2" ] && [ "$(stat -c %a "$2")" = "$1" ]
}

free_port() {
    python3 "$(dirname "$0")/../lib/free-ports.py"
}

# ---- 1. the tree
if ! $MAKE -s --no-print-directory install DESTDIR="$D/root" \
        >"$D/install.log" 2>&1; then
    cat "$D/install.log"
    check 1 "make install DESTDIR=..."
    exit 1
fi
check 0 "make install DESTDIR=..."
R=$D/root
U=$R/usr/local/lib/systemd/system/uabroker.service
C=$R/etc/uabroker/uabroker.conf
check_that "uabroker in PREFIX/bin, 0755" mode_is 755 "$R/usr/local/bin/uabroker"
check_that "uaworker beside it, 0755" mode_is 755 "$R/usr/local/bin/uaworker"
check_that "/etc/uabroker/uabroker.conf, 0644" mode_is 644 "$C"
check_that "the unit in PREFIX/lib/systemd/system, 0644" mode_is 644 "$U"
check_that "the sysusers.d entry, 0644" \
    mode_is 644 "$R/usr/local/lib/sysusers.d/uabroker.conf"
check_that "the docs in PREFIX/share/doc/uabroker" \
    mode_is 644 "$R/usr/local/share/doc/uabroker/operations.md"
check_that "unit: ExecStart=/usr/local/bin/uabroker -c /etc/uabroker/uabroker.conf" \
    grep -qx 'ExecStart=/usr/local/bin/uabroker -c /etc/uabroker/uabroker.conf' "$U"
check_that "unit: no @VARIABLE@ left" sh -c "! grep -q '@[A-Z]*@' '$U'"
check_that "unit: Type=notify, ExecReload sends SIGHUP" sh -c \
    "grep -qx 'Type=notify' '$U' && grep -qx 'ExecReload=/bin/kill -HUP \$MAINPID' '$U'"
check_that "conf: runtime_dir = /run/uabroker" \
    grep -qx 'runtime_dir = /run/uabroker' "$C"
check_that "conf: pki_dir = /var/lib/uabroker/pki" \
    grep -qx 'pki_dir = /var/lib/uabroker/pki' "$C"

# ---- 2. the installed binaries
B=$R/usr/local/bin/uabroker
out=$("$B" --version 2>&1)
check $? "uabroker --version: $out"
out=$("$B" -c "$C" -t 2>&1)
case $out in *"configuration ok"*) rc=0 ;; *) rc=1 ;; esac
check $rc "uabroker -c <installed conf> -t: $out"
port=$(free_port)
sport=$(free_port)
mkdir -p "$D/run"
"$B" -c "$C" -w 1 -p "$port" --stats "127.0.0.1:$sport" \
    --runtime-dir "$D/run" --set "security.pki_dir=$D/pki" \
    >"$D/broker.log" 2>&1 &
broker=$!
up=1
i=0
while [ $i -lt 100 ]; do
    if "$B" stats "127.0.0.1:$sport" >"$D/stats.json" 2>/dev/null \
       && grep -q '"state": "up"' "$D/stats.json"; then
        up=0
        break
    fi
    i=$((i + 1))
    sleep 0.2
done
check $up "the installed uabroker serves with the installed configuration"
wpid=$(sed -n 's/.*"slot": 0, "pid": \([0-9]*\).*/\1/p' "$D/stats.json")
exe=$(readlink "/proc/$wpid/exe" 2>/dev/null)
[ "$exe" = "$R/usr/local/bin/uaworker" ]
check $? "its worker runs the installed uaworker ($exe)"
kill -TERM "$broker"
wait "$broker"
rc=$?
broker=
check $rc "SIGTERM: it exits 0"
[ $up -eq 0 ] && [ $rc -eq 0 ] || cat "$D/broker.log"

# ---- 3. systemd-analyze verify, on a copy naming the DESTDIR binaries
if command -v systemd-analyze >/dev/null 2>&1; then
    mkdir -p "$D/verify"
    sed "s|/usr/local/bin/|$R/usr/local/bin/|g" "$U" \
        >"$D/verify/uabroker.service"
    out=$(systemd-analyze verify "$D/verify/uabroker.service" 2>&1)
    rc=$?
    [ $rc -eq 0 ] && [ -z "$out" ]
    check $? "systemd-analyze verify: exit $rc, no complaint${out:+: $out}"
else
    echo "# systemd-analyze not found: unit not verified"
fi

# ---- 4. a changed configuration survives a second install
echo "# changed by the admin" >>"$C"
cp "$C" "$D/conf.before"
$MAKE -s --no-print-directory install DESTDIR="$R" >"$D/install2.log" 2>&1
check $? "a second make install"
check_that "it keeps the changed uabroker.conf" cmp -s "$C" "$D/conf.before"
check_that "and installs the new one as uabroker.conf.dist" \
    grep -qx 'runtime_dir = /run/uabroker' "$C.dist"
check_that "and says so" grep -q 'uabroker.conf.dist' "$D/install2.log"

# ---- 5. another PREFIX
$MAKE -s --no-print-directory install DESTDIR="$D/opt" PREFIX=/opt/uabroker \
    >"$D/install3.log" 2>&1
check $? "make install PREFIX=/opt/uabroker"
check_that "unit: ExecStart=/opt/uabroker/bin/uabroker ..." \
    grep -qx 'ExecStart=/opt/uabroker/bin/uabroker -c /etc/uabroker/uabroker.conf' \
    "$D/opt/opt/uabroker/lib/systemd/system/uabroker.service"
check_that "uabroker and uaworker in /opt/uabroker/bin" \
    test -x "$D/opt/opt/uabroker/bin/uabroker" -a \
         -x "$D/opt/opt/uabroker/bin/uaworker"

# ---- 6. uninstall
$MAKE -s --no-print-directory uninstall DESTDIR="$R" >"$D/uninstall.log" 2>&1
check $? "make uninstall"
left=$(find "$R" -type f | sed "s|^$R||" | sort | tr '\n' ' ')
[ "$left" = "/etc/uabroker/uabroker.conf " ]
check $? "only uabroker.conf is left: $left"
