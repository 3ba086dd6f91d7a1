#!/bin/sh
# tests/check-deps.sh: enforce the include layering of DESIGN.md §5 and
# STYLE.md §1 on every .c/.h file outside tests/ (tests/ may include
# anything).  Run from anywhere; `make check-deps` and `make check` call it.
#
#   proto/   proto/ headers, libc/system, wolfSSL (proto/crypto_wolf.c only)
#   shm/     shm/ headers, libc/system, nanomsg (shm/doorbell.c and
#            shm/feed.c only)
#   worker/  proto/, shm/, worker/ headers, libevent, libc/system
#   broker/  proto/, shm/, broker/ headers, libevent, libc/system (inih
#            in broker/config.c only, libmosquitto in broker/mqtt.c only,
#            libxml2 in broker/nodeset.c only)
#   nothing outside worker/ (broker/) includes worker/ (broker/) headers;
#   proto/ and shm/ never include each other; only tests/ includes tests/.
#
# A quoted include is looked up beside the including file first, then from
# the repository root (the build passes -I.).  An angle include is a project
# header when it starts with a project folder, else a library header: one of
# wolfSSL, libevent, nanomsg, Check, or a libc/POSIX/Linux header from the
# list below; any other library is refused in proto/, shm/, worker/, broker/.
#
# Prints every violation as "file:line: reason" and exits 1 if there is any.

set -eu

cd "$(dirname "$0")/.."

list=$(mktemp)
trap 'rm -f "$list"' EXIT HUP INT TERM

find . \( -name .git -o -path ./build -o -name node_modules \) -prune \
    -o -type f -print | sed 's|^\./||' | LC_ALL=C sort > "$list"

srcs=$(grep -E '\.[ch]$' "$list" | grep -v '^tests/' || true)
[ -n "$srcs" ] || exit 0

# libc (C11), POSIX and common GNU/Linux headers; directories below are
# matched by prefix in the awk program.
sys="assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h
limits.h locale.h math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h
stdbool.h stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h string.h tgmath.h
threads.h time.h uchar.h wchar.h wctype.h
aio.h cpio.h dirent.h dlfcn.h fcntl.h fmtmsg.h fnmatch.h ftw.h glob.h grp.h
iconv.h langinfo.h libgen.h monetary.h mqueue.h ndbm.h netdb.h nl_types.h
poll.h pthread.h pwd.h regex.h sched.h search.h semaphore.h spawn.h strings.h
syslog.h tar.h termios.h ulimit.h unistd.h utime.h utmpx.h wordexp.h
alloca.h byteswap.h endian.h err.h error.h execinfo.h features.h getopt.h
ifaddrs.h link.h malloc.h mntent.h paths.h pty.h shadow.h sysexits.h
ucontext.h cpuid.h"

# shellcheck disable=SC2086
awk -v listfile="$list" -v syslist="$sys" '
function dirof(p) {
    return match(p, /.*\//) ? substr(p, 1, RLENGTH - 1) : ""
}
function topof(p,    i) {
    i = index(p, "/")
    return i ? substr(p, 1, i - 1) : ""
}
# Resolve "." and ".." ; a path that climbs out of the repository gives "..".
function norm(p,    n, a, i, k, out, r) {
    n = split(p, a, "/")
    k = 0
    for (i = 1; i <= n; i++) {
        if (a[i] == "" || a[i] == ".")
            continue
        if (a[i] == "..") {
            if (k == 0)
                return ".."
            k--
            continue
        }
        out[++k] = a[i]
    }
    r = ""
    for (i = 1; i <= k; i++)
        r = r (i > 1 ? "/" : "") out[i]
    return r
}
function libof(h) {
    if (h ~ /^(wolfssl|cyassl)\//)
        return "wolfssl"
    if (h ~ /^event2\// || h ~ /^(event|evhttp|evdns|evrpc|evutil)\.h$/)
        return "libevent"
    if (h ~ /^nanomsg\//)
        return "nanomsg"
    if (h == "check.h")
        return "check"
    if (h == "ini.h")
        return "inih"
    if (h == "mosquitto.h")
        return "mosquitto"
    if (h ~ /^libxml\//)
        return "libxml2"
    if ((h in sysh) || h ~ /intrin\.h$/ \
        || h ~ /^(sys|bits|linux|asm|asm-generic|gnu)\// \
        || h ~ /^(net|netinet|arpa|netpacket)\//)
        return "system"
    return "other"
}
# The line with block comments removed; tracks incomment across lines.
function code(s,    out, i, c, n, instr) {
    if (incomment && index(s, "*/") == 0)
        return ""
    if (!incomment && index(s, "/*") == 0)
        return s
    out = ""
    n = length(s)
    instr = ""
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        if (incomment) {
            if (c == "*" && substr(s, i + 1, 1) == "/") {
                incomment = 0
                i++
            }
            continue
        }
        if (instr != "") {
            out = out c
            if (c == "\\") {
                out = out substr(s, i + 1, 1)
                i++
            } else if (c == instr)
                instr = ""
            continue
        }
        if (c == "\"" || c == "\047") {
            instr = c
        } else if (c == "/" && substr(s, i + 1, 1) == "*") {
            incomment = 1
            i++
            continue
        }
        out = out c
    }
    return out
}
function report(why) {
    printf "%s:%d: %s (#include %s%s%s)\n", file, FNR, why, q, inc, cq
    bad = 1
}
BEGIN {
    while ((getline l < listfile) > 0)
        exists[l] = 1
    close(listfile)
    n = split(syslist, t, /[ \t\n]+/)
    for (i = 1; i <= n; i++)
        sysh[t[i]] = 1
    proj["proto"] = proj["shm"] = proj["worker"] = proj["broker"] = 1
    proj["tests"] = 1
    bad = 0
}
FNR == 1 {
    file = FILENAME
    dir = dirof(file)
    mod = topof(file)
    incomment = 0
}
{
    s = code($0)
    if (s !~ /^[ \t]*#[ \t]*include[ \t]*[<"]/)
        next
    sub(/^[ \t]*#[ \t]*include[ \t]*/, "", s)
    q = substr(s, 1, 1)
    cq = q == "<" ? ">" : "\""
    s = substr(s, 2)
    i = index(s, cq)
    inc = i ? substr(s, 1, i - 1) : s
    if (!i || inc == "") {
        report("malformed #include")
        next
    }

    target = ""
    lib = ""
    if (q == "\"") {
        c1 = norm(dir == "" ? inc : dir "/" inc)
        c2 = norm(inc)
        if (c1 in exists)
            target = c1
        else if (c2 in exists)
            target = c2
        else if (topof(c2) in proj)
            target = c2
        else if (libof(inc) != "system" && libof(inc) != "other")
            lib = libof(inc)
        else
            target = c1         # not written yet: beside the includer
    } else if (topof(inc) in proj) {
        target = norm(inc)
    } else {
        lib = libof(inc)
    }

    if (lib != "") {
        if (lib == "wolfssl" && file != "proto/crypto_wolf.c")
            report("wolfSSL may be included only by proto/crypto_wolf.c")
        else if (lib == "nanomsg" && file != "shm/doorbell.c" \
                 && file != "shm/feed.c")
            report("nanomsg may be included only by shm/doorbell.c and " \
                   "shm/feed.c")
        else if (lib == "libevent" && (mod == "proto" || mod == "shm"))
            report(mod "/ may not use libevent (only worker/ and broker/)")
        else if (lib == "check")
            report("Check is for tests/ only")
        else if (lib == "inih" && file != "broker/config.c")
            report("libinih may be included only by broker/config.c")
        else if (lib == "mosquitto" && file != "broker/mqtt.c")
            report("libmosquitto may be included only by broker/mqtt.c")
        else if (lib == "libxml2" && file != "broker/nodeset.c")
            report("libxml2 may be included only by broker/nodeset.c")
        else if (lib == "other" && (mod in proj))
            report("not a libc/system header nor a library " mod "/ may use")
        next
    }

    tm = topof(target)
    if (target == "..")
        report("includes a file outside the repository")
    else if (tm == "tests" && mod != "tests")
        report("only tests/ may include from tests/")
    else if ((tm == "worker" || tm == "broker") && tm != mod)
        report("nothing outside " tm "/ may include " tm "/ headers")
    else if ((mod == "proto" && tm == "shm") || (mod == "shm" && tm == "proto"))
        report("proto/ and shm/ never include each other")
    else if ((mod == "proto" || mod == "shm") && tm != mod)
        report(mod "/ may include only " mod "/ headers")
    else if ((mod == "worker" || mod == "broker") && tm != mod \
             && tm != "proto" && tm != "shm")
        report(mod "/ may include only proto/, shm/ and " mod "/ headers")
}
END {
    exit bad
}
' $srcs
