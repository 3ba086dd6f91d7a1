# tests/bench/benchlib.sh: what the server benchmark scripts share
# (sourced by bench_server.sh and instr_write.sh).

# bench_ports: two free TCP ports of 127.0.0.1 into $port and $sport, the
# server's endpoint into $url and its stats endpoint into $stats.
bench_ports() {
    ports=$(python3 -c '
import socket
a = socket.socket(); a.bind(("127.0.0.1", 0))
b = socket.socket(); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
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
