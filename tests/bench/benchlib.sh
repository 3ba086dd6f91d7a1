# tests/bench/benchlib.sh: what the server benchmark scripts share
# (sourced by bench_server.sh and instr_write.sh).

# bench_ports: two free TCP ports (tests/lib/free-ports.py; $here is the
# caller's directory, tests/bench) into $port and $sport, the
# server's endpoint into $url and its stats endpoint into $stats.
bench_ports() {
    ports=$(python3 "$here/../lib/free-ports.py" 2 | tr '\n' ' ')
    ports=${ports% }
    port=${ports% *}
    sport=${ports#* }
    url="opc.tcp://127.0.0.1:$port"
    stats="http://127.0.0.1:$sport"
}

# bench_traps: run cleanup (the caller's function) on exit, and exit on
# INT, TERM and HUP so that it runs then too.
bench_traps() {
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM HUP
}
