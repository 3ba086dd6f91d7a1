#!/usr/bin/env python3
# tests/lib/free-ports.py [N]: N (default 1) distinct TCP ports free now,
# below the kernel's ephemeral range, one per line.  A port the kernel
# hands out for bind(0) is also what the next outgoing connect() may take
# as its local port before the broker binds it; ports below the range are
# never given to connect().  The C twin is itest_free_port()
# (tests/lib/itest.c), the Node.js one freePort() (tests/interop/lib/common.js).
import os
import random
import socket
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1
try:
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        lo = int(f.read().split()[0])
except (OSError, ValueError, IndexError):
    lo = 32768
base = 20000
got = []
if lo <= base + 1000:
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        got.append(s.getsockname()[1])
        s.close()
else:
    span = lo - base
    start = random.Random(os.getpid() ^ os.urandom(4)[0]).randrange(span)
    for i in range(span):
        p = base + (start + i) % span
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", p))
        except OSError:
            continue
        finally:
            s.close()
        got.append(p)
        if len(got) == n:
            break
if len(got) < n:
    sys.exit("free-ports: no free port")
print("\n".join(str(p) for p in got))
