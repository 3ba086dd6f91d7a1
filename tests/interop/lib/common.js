// tests/interop/lib/common.js: helpers the interop tests share (their
// own clients and brokers stay in each test file).
"use strict";

const fs = require("node:fs");
const http = require("node:http");
const net = require("node:net");

// Resolves after ms.
function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

// Waits until pred() is true or ms have passed; pred()'s last value.
async function until(pred, ms) {
    const end = Date.now() + ms;
    while (!pred() && Date.now() < end) {
        await sleep(20);
    }
    return pred();
}

// A TCP port free a moment ago, below the kernel's ephemeral range: a
// port the kernel hands out for listen(0) is also what the next outgoing
// connect() may take as its local port before the broker binds it.
// Never the same port twice in one process.
let portNext = -1;
function tryListen(p) {
    return new Promise((resolve) => {
        const s = net.createServer();
        s.once("error", () => resolve(false));
        s.listen(p, "0.0.0.0", () => s.close(() => resolve(true)));
    });
}
async function freePort() {
    let lo = 32768;
    try {
        lo = parseInt(fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8"), 10) || lo;
    } catch (e) { /* not Linux: the default range */ }
    const base = 20000;
    if (lo <= base + 1000) {
        return new Promise((resolve) => {
            const s = net.createServer().listen(0, "127.0.0.1", () => {
                const p = s.address().port;
                s.close(() => resolve(p));
            });
        });
    }
    const span = lo - base;
    if (portNext < 0) {
        portNext = (process.pid * 7919 + Date.now()) % span;
    }
    for (let i = 0; i < span; i++) {
        const p = base + portNext;
        portNext = (portNext + 1) % span;
        if (await tryListen(p)) {
            return p;
        }
    }
    throw new Error("no free port below the ephemeral range");
}

// The broker's /stats (JSON) from the stats endpoint on sport.
function stats(sport) {
    return new Promise((resolve, reject) => {
        http.get({ host: "127.0.0.1", port: sport, path: "/stats" }, (r) => {
            let body = "";
            r.on("data", (d) => { body += d; });
            r.on("end", () => {
                try {
                    resolve(JSON.parse(body));
                } catch (e) {
                    reject(e);
                }
            });
        }).on("error", reject);
    });
}

// A counter summed over the workers of /stats (key, or requests.key).
function sumWorkers(st, key) {
    let n = 0;
    for (const w of st.workers || []) {
        if (typeof w[key] === "number") {
            n += w[key];
        } else if (w.requests && typeof w.requests[key] === "number") {
            n += w.requests[key];
        }
    }
    return n;
}

// The worker slot + 1 that serves client's SecureChannel (a channel id
// carries it in its top byte, docs/architecture.md §1).
function workerOf(client) {
    return client._secureChannel.channelId >>> 24;
}

module.exports = { sleep, until, freePort, stats, sumWorkers, workerOf };
