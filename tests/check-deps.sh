#!/bin/sh
# tests/check-deps.sh: enforce the include layering of docs/architecture.md
# §5 and docs/style.md §1 on every .c/.h file outside tests/ (tests/ may
# include anything).  `make check-deps` and `make check` call it.
#
#   check-deps.sh [ROOT]     ROOT: the tree to check (default: this
#                            script's repository; tests/build/
#                            check_deps_test.sh points it at fake trees)
#
# Between modules:
#
#   proto/   proto/ headers, libc/system, wolfSSL (proto/crypto_wolf.c only)
#   shm/     shm/ headers, libc/system, nanomsg (shm/doorbell.c and
#            shm/feed.c only)
#   hist/    hist/ headers, libc/system, LMDB (hist/store.c, store_int.h,
#            the side databases' side.c, modified.c, annot.c and the
#            events' events.c only)
#   worker/  proto/, shm/, hist/, worker/ headers, libevent, libc/system
#   broker/  proto/, shm/, hist/, broker/ headers, libevent, libc/system
#            (inih in broker/config.c only, libmosquitto in broker/mqtt.c
#            only, libxml2 in broker/nodeset.c only)
#   nothing outside worker/ (broker/) includes worker/ (broker/) headers;
#   proto/, shm/ and hist/ never include each other; only tests/ includes
#   tests/.
#
# Inside a module, when it has a file <module>/LAYERS (required for the
# modules in $required below):
#
#   # comment lines start with '#'; blank lines are ignored
#   <layer>: <stem> <stem> ...
#
# Layers are listed lowest first.  A stem names a .c/.h pair of the module
# (or a lone .h, or a lone .c such as main); a private header x_int.h
# (docs/style.md §3) belongs to stem x unless x_int is listed as a stem of
# its own.  Every .c/.h file of the
# module is covered by exactly one stem; a file may include headers of
# stems in its own layer or an earlier one only; and no two stems include
# each other, directly or round a longer circle (a.c or a.h includes b.h,
# b.c or b.h includes a.h), even inside one layer.  Known circles not yet
# untied are listed, one include each, in UA_DEPS_ALLOW below.
#
# A quoted include is looked up beside the including file first, then from
# the repository root (the build passes -I.).  An angle include is a project
# header when it starts with a project folder, else a library header: one of
# wolfSSL, libevent, nanomsg, Check, or a libc/POSIX/Linux header from the
# list below; any other library is refused in proto/, shm/, worker/, broker/.
#
# Prints every violation as "file:line: reason" and exits 1 if there is any.

set -eu

cd "${1:-$(dirname "$0")/..}"

# Modules that must have a LAYERS file (UA_DEPS_REQUIRED replaces the list:
# tests/build/check_deps_test.sh's small trees); a module not listed is
# checked when it has one.
required=${UA_DEPS_REQUIRED-proto shm hist worker broker}

# Includes exempt from the layer and circle checks, as
# "<including file>:<included file>", each a known circle that issue 16
# unties; an entry that no longer occurs is an error (delete it).
#   proto/crypto_int.h:proto/cert.h  cert.c uses crypto_int.h (wolfSSL's
#       side of X.509) and crypto_int.h includes cert.h, which it needs only
#       for `struct ua_cert` pointers: a forward declaration would end it.
: "${UA_DEPS_ALLOW=proto/crypto_int.h:proto/cert.h}"

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
awk -v listfile="$list" -v syslist="$sys" -v allowlist="$UA_DEPS_ALLOW" \
    -v required="$required" '
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
    if (h == "lmdb.h")
        return "lmdb"
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
# The stem of a file: its path inside its module without .c/.h.
function stemof(p) {
    sub(/^[^\/]*\//, "", p)
    sub(/\.[ch]$/, "", p)
    return p
}
# The listed stem that the stem s of a file of module m falls under: s, or
# x for a private header x_int.h when x_int is not listed on its own.
function stemat(m, s,    b) {
    if ((m, s) in lay)
        return s
    b = s
    if (sub(/_int$/, "", b) && ((m, b) in lay))
        return b
    return s
}
function err(msg) {
    print msg
    bad = 1
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
    proj["hist"] = 1
    # The files of the history store on LMDB (the samples, the side
    # databases beside them, the events).
    lmdb_files = "^hist/(store\\.c|store_int\\.h|side\\.c|modified\\.c|" \
                 "annot\\.c|events\\.c)$"
    proj["tests"] = 1
    n = split(allowlist, t, /[ \t\n]+/)
    for (i = 1; i <= n; i++)
        if (t[i] != "")
            allow[t[i]] = 0     # becomes 1 when the include is seen
    n = split(required, t, /[ \t\n]+/)
    for (i = 1; i <= n; i++)
        if (t[i] != "")
            need[t[i]] = 1
    ninc = 0
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
        else if (lib == "lmdb" && file !~ lmdb_files)
            report("LMDB may be included only by hist/store.c, " \
                   "store_int.h, side.c, modified.c, annot.c, events.c")
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
    else if ((mod == "proto" || mod == "shm" || mod == "hist") && tm != mod)
        report(mod "/ may include only " mod "/ headers")
    else if ((mod == "worker" || mod == "broker") && tm != mod \
             && tm != "proto" && tm != "shm" && tm != "hist")
        report(mod "/ may include only proto/, shm/, hist/ and " mod \
               "/ headers")

    # Includes inside a module, for the layer and circle checks in END.
    if (tm == mod && (mod in proj) && target ~ /\.[ch]$/) {
        if ((file ":" target) in allow) {
            allow[file ":" target] = 1
        } else {
            ninc++
            i_file[ninc] = file
            i_line[ninc] = FNR
            i_mod[ninc] = mod
            i_from[ninc] = stemof(file)
            i_to[ninc] = stemof(target)
            i_target[ninc] = target
            i_text[ninc] = q inc cq
        }
    }
}
# Reads <m>/LAYERS: layer numbers of stems (lay[m, stem]), layer names
# (lname[m, k]), the stems in file order (sord[m, k], sidx[m, s],
# nst[m]); reports malformed lines, stems listed twice and stems with no
# file.
function layers_read(m,    path, l, ln, name, rest, n, t, i, s) {
    path = m "/LAYERS"
    nl[m] = 0
    nst[m] = 0
    ln = 0
    while ((getline l < path) > 0) {
        ln++
        if (l ~ /^[ \t]*#/ || l ~ /^[ \t]*$/)
            continue
        if (!match(l, /^[ \t]*[A-Za-z0-9_.-]+[ \t]*:/)) {
            err(path ":" ln ": expected \"<layer>: <stem> <stem> ...\"")
            continue
        }
        name = substr(l, RSTART, RLENGTH - 1)
        rest = substr(l, RSTART + RLENGTH)
        gsub(/[ \t]/, "", name)
        if ((m, name) in lline) {
            err(path ":" ln ": layer " name " named twice (first on line " \
                lline[m, name] ")")
            continue
        }
        lline[m, name] = ln
        lname[m, ++nl[m]] = name
        n = split(rest, t, /[ \t]+/)
        for (i = 1; i <= n; i++) {
            s = t[i]
            if (s == "")
                continue
            if ((m, s) in lay) {
                err(path ":" ln ": stem " s " listed twice (also on line " \
                    sline[m, s] ")")
                continue
            }
            lay[m, s] = nl[m]
            sline[m, s] = ln
            sord[m, ++nst[m]] = s
            sidx[m, s] = nst[m]
            if (!((m "/" s ".c") in exists) && !((m "/" s ".h") in exists))
                err(path ":" ln ": stem " s " has no " m "/" s ".c or " \
                    m "/" s ".h")
        }
    }
    close(path)
}

# Shortest circle of includes through stem v of module m (breadth-first
# over succ[]), as "v a b ... v" with the including site of each step in
# csite[]; "" when v is on none.
function circle_from(m, v,    head, tail, q, par, u, n, t, i, w, path, k) {
    head = 1
    tail = 0
    q[++tail] = v
    while (head <= tail) {
        u = q[head++]
        n = split(succ[m, u], t, " ")
        for (i = 1; i <= n; i++) {
            w = t[i]
            if (w == v) {
                path = v
                k = u
                while (k != v) {
                    path = k " " path
                    k = par[k]
                }
                return v " " path
            }
            if (w in par || w == v)
                continue
            par[w] = u
            q[++tail] = w
        }
    }
    return ""
}

END {
    # Which modules have LAYERS; the missing required ones.
    for (m in proj) {
        if (m == "tests")
            continue
        if ((m "/LAYERS") in exists) {
            haslay[m] = 1
            layers_read(m)
        } else if (m in need) {
            err(m "/LAYERS: missing (every " m "/ file in a layer, " \
                "lowest first; see tests/check-deps.sh)")
        }
    }

    # Every .c/.h file of a module with LAYERS is in one stem.
    while ((getline l < listfile) > 0) {
        m = topof(l)
        if ((m in haslay) && l ~ /\.[ch]$/ \
            && !((m, stemat(m, stemof(l))) in lay))
            err(l ": not in " m "/LAYERS (put stem " stemof(l) \
                " in a layer)")
    }
    close(listfile)

    # Each include downwards or sideways only; collect the stem graph.
    for (i = 1; i <= ninc; i++) {
        m = i_mod[i]
        if (!(m in haslay))
            continue
        f = stemat(m, i_from[i])
        g = stemat(m, i_to[i])
        if (f == g)
            continue
        if ((m, f) in lay && (m, g) in lay && lay[m, g] > lay[m, f])
            err(i_file[i] ":" i_line[i] ": " lname[m, lay[m, f]] \
                " may not include " g " (layer " lname[m, lay[m, g]] ")")
        else if (!((m, g) in lay) && !(i_target[i] in exists))
            err(i_file[i] ":" i_line[i] ": includes " i_text[i] \
                ", no such file in " m "/")
        if (!((m, f, g) in site)) {
            site[m, f, g] = i_file[i] ":" i_line[i] " includes " i_text[i]
            succ[m, f] = succ[m, f] (succ[m, f] == "" ? "" : " ") g
        }
    }

    # Circles, each once (rotated to start at its lowest-listed stem).
    for (m in haslay) {
        for (k = 1; k <= nst[m]; k++) {
            c = circle_from(m, sord[m, k])
            if (c == "")
                continue
            n = split(c, cs, " ")
            low = 1
            for (j = 2; j < n; j++)
                if (sidx[m, cs[j]] < sidx[m, cs[low]])
                    low = j
            key = ""
            for (j = 0; j < n; j++)
                key = key (j ? " -> " : "") cs[(low - 1 + j) % (n - 1) + 1]
            if (key in seen)
                continue
            seen[key] = 1
            first = ""
            steps = ""
            for (j = 0; j < n - 1; j++) {
                a = cs[(low - 1 + j) % (n - 1) + 1]
                b = cs[(low + j) % (n - 1) + 1]
                steps = steps "\n    " site[m, a, b]
                if (first == "")
                    first = site[m, a, b]
            }
            sub(/ includes .*/, "", first)
            err(first ": include circle in " m "/: " key steps)
        }
    }

    for (e in allow)
        if (!allow[e])
            err("UA_DEPS_ALLOW: " e " no longer occurs (delete it from " \
                "tests/check-deps.sh)")
    exit bad
}
' $srcs
