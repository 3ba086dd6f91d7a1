// tests/interop/lib/common.js: helpers the interop tests share: ports,
// /stats, and for the tests that start their own broker and follow a
// subscriber through reconnections (kill, roam, roll .test.js) the broker
// start-up, the clients, a TCP proxy, the counters' writer and the
// subscriber's record of what arrived.  node-opcua is required only by
// the helpers that use it (run.sh takes freePort before `npm ci`).
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const http = require("node:http");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");

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

// ------------------------------------------------------------ a broker of
// the test's own

// Starts `uabroker -w workers` (binary uabroker) on free ports, log level
// info, in a temporary runtime directory (name in its name), with
// anonymous Writes and queues of up to 1,000 values, plus args; waits for
// "serving opc.tcp" (20 s) and makes a client certificate manager there.
// Its fields: proc, dir, runDir, port, sport, url, cm, log() (stdout and
// stderr so far), and stop(pattern): prints the log lines pattern
// matches ("# broker: "), disposes of cm, SIGTERM (10 s), removes dir.
async function startBroker(uabroker, name, workers, args) {
    const { OPCUACertificateManager } = require("node-opcua");
    const b = {
        dir: fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-" + name + "-")),
    };
    let log = "";
    b.runDir = path.join(b.dir, "run");
    b.port = await freePort();
    b.sport = await freePort();
    b.url = "opc.tcp://127.0.0.1:" + b.port;
    b.log = () => log;
    b.proc = spawn(uabroker, ["-w", String(workers), "-p", String(b.port),
        "--set", "log.level=info",
        "--stats", "127.0.0.1:" + b.sport,
        "--runtime-dir", b.runDir,
        "--set", "security.anonymous_write=true",
        "--set", "limits.max_monitored_item_queue_size=1000"]
        .concat(args || []),
        { stdio: ["ignore", "pipe", "pipe"] });
    b.proc.stdout.on("data", (d) => { log += d; });
    b.proc.stderr.on("data", (d) => { log += d; });
    b.stop = async (pattern) => {
        for (const line of log.split("\n")) {
            if (pattern && pattern.test(line)) {
                console.log("# broker: " + line);
            }
        }
        if (b.cm) {
            await b.cm.dispose();
        }
        if (b.proc.exitCode === null) {
            b.proc.kill("SIGTERM");
            await until(() => b.proc.exitCode !== null, 10000);
        }
        fs.rmSync(b.dir, { recursive: true, force: true });
    };
    if (!await until(() => /serving opc\.tcp/.test(log), 20000)) {
        await b.stop();
        throw new Error("the broker did not start: " + log);
    }
    b.cm = new OPCUACertificateManager({
        rootFolder: path.join(b.dir, "client-pki"),
        automaticallyAcceptUnknownCertificate: true,
    });
    await b.cm.initialize();
    return b;
}

// A node-opcua client of certificate manager cm (application name
// "uabroker-interop-" + name), session timeout 60 s, no keep-alive reads;
// reconnect: it reconnects on its own (every 100-300 ms, 1,000 times);
// policy and mode: None unless given.
function makeClient(cm, name, reconnect, policy, mode) {
    const {
        OPCUAClient, MessageSecurityMode, SecurityPolicy,
    } = require("node-opcua");
    return OPCUAClient.create({
        applicationName: "uabroker-interop-" + name,
        clientCertificateManager: cm,
        securityMode: mode || MessageSecurityMode.None,
        securityPolicy: policy || SecurityPolicy.None,
        endpointMustExist: false,
        keepSessionAlive: false,
        requestedSessionTimeout: 60000,
        connectionStrategy: reconnect
            ? { maxRetry: 1000, initialDelay: 100, maxDelay: 300 }
            : { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    });
}

// A TCP proxy to port: cut(ms) destroys every connection through it and
// refuses new ones for ms.
function makeProxy(port) {
    const pairs = new Set();
    let refuseUntil = 0;
    const server = net.createServer((c) => {
        if (Date.now() < refuseUntil) {
            c.destroy();
            return;
        }
        const u = net.connect(port, "127.0.0.1");
        const pair = { c, u };
        pairs.add(pair);
        const drop = () => {
            c.destroy();
            u.destroy();
            pairs.delete(pair);
        };
        c.on("error", drop);
        u.on("error", drop);
        c.on("close", drop);
        u.on("close", drop);
        c.pipe(u);
        u.pipe(c);
    });
    return {
        listen: () => new Promise((resolve) => {
            server.listen(0, "127.0.0.1", () => resolve(server.address().port));
        }),
        cut(ms) {
            refuseUntil = Date.now() + ms;
            for (const p of pairs) {
                p.c.destroy();
                p.u.destroy();
            }
            pairs.clear();
        },
        close: () => new Promise((resolve) => server.close(() => resolve())),
    };
}

// ------------------------------------------------------------ counters:
// nvars Int32 variables ns=1;s=v0, v2, v4, ... written 100001, 100002, ...

// The subscriber's record of a subscription: per item index the values
// of the NotificationMessages as they came (record.got[i]), each message
// once.  After a reconnection node-opcua republishes from its last
// sequence number while its Publish requests run, and may hand the same
// message over twice: the same sequence number, the same message.  A
// keep-alive is no message of its own: it carries the sequence number of
// the NotificationMessage that comes next (Part 4 §5.14.1.1), so it
// neither counts as that message nor may make it a duplicate.
// record.seqs: the sequence numbers as they came, a keep-alive's as
// "k<n>" (the test adds marks of its own); record.dupMessages: the
// messages skipped as duplicates.
// record.byHandle: clientHandle -> item index.
function recordValues(subscription) {
    const rec = { got: [], seqs: [], byHandle: new Map(), dupMessages: 0 };
    const seen = new Set();
    subscription.on("raw_notification", (m) => {
        const data = m.notificationData || [];
        if (data.length === 0) {
            rec.seqs.push("k" + m.sequenceNumber);     /* a keep-alive */
            return;
        }
        rec.seqs.push(m.sequenceNumber);
        if (seen.has(m.sequenceNumber)) {
            rec.dupMessages++;
            return;
        }
        seen.add(m.sequenceNumber);
        for (const d of data) {
            for (const n of (d && d.monitoredItems) || []) {
                const i = rec.byHandle.get(n.clientHandle);
                if (i !== undefined && n.value && n.value.value) {
                    rec.got[i].push(n.value.value.value);
                }
            }
        }
    });
    return rec;
}

// A subscription of session (100 ms, keep-alive every 10) with nvars
// items on the counters (sampling 50 ms, queue 1,000, discardOldest),
// recorded: { subscription, subId, rec } (recordValues).
async function subscribeCounters(session, nvars) {
    const {
        ClientSubscription, ClientMonitoredItem, AttributeIds,
        TimestampsToReturn,
    } = require("node-opcua");
    const subscription = ClientSubscription.create(session, {
        requestedPublishingInterval: 100,
        requestedLifetimeCount: 600,
        requestedMaxKeepAliveCount: 10,
        maxNotificationsPerPublish: 0,
        publishingEnabled: true,
        priority: 10,
    });
    await new Promise((resolve, reject) => {
        subscription.on("started", resolve);
        subscription.on("internal_error", reject);
    });
    const rec = recordValues(subscription);
    for (let i = 0; i < nvars; i++) {
        rec.got.push([]);
        const item = ClientMonitoredItem.create(subscription, {
            nodeId: "ns=1;s=v" + 2 * i, attributeId: AttributeIds.Value,
        }, { samplingInterval: 50, queueSize: 1000, discardOldest: true },
        TimestampsToReturn.Both);
        await new Promise((resolve, reject) => {
            item.on("initialized", resolve);
            item.on("err", (e) => reject(new Error(String(e))));
        });
        rec.byHandle.set(item.monitoringParameters.clientHandle, i);
    }
    return { subscription, subId: subscription.subscriptionId, rec };
}

// A client connected to url whose channel is on another worker than
// other's (newClient() makes it; at most 32 tries); null when none was.
async function clientOnOtherWorker(newClient, url, other) {
    for (let k = 0; k < 32; k++) {
        const c = newClient();
        await c.connect(url);
        if (workerOf(c) !== workerOf(other)) {
            return c;
        }
        await c.disconnect();
    }
    return null;
}

// Writes the counters from session ws, value n in all nvars variables,
// n = 1, 2, ... every ms.  retry: a Write that failed (its connection
// down) is made again, the same value, every 100 ms (the same value twice
// is no change); else a failure ends the loop with it.  Returns { n(),
// retries(), stop() } (stop: ends the loop, resolves when it ended).
function writeCounters(ws, nvars, ms, retry) {
    const { AttributeIds, DataType } = require("node-opcua");
    let n = 0;
    let retries = 0;
    let writing = true;
    const loop = (async () => {
        while (writing) {
            n++;
            const nodes = [];
            for (let i = 0; i < nvars; i++) {
                nodes.push({ nodeId: "ns=1;s=v" + 2 * i,
                    attributeId: AttributeIds.Value,
                    value: { value: { dataType: DataType.Int32,
                                      value: 100000 + n } } });
            }
            if (!retry) {
                await ws.write(nodes);
            } else {
                for (;;) {
                    try {
                        const r = await ws.write(nodes);
                        if (r.every((s) => s.value === 0)) {
                            break;
                        }
                    } catch (e) {
                        // its connection is down: again, the same value
                    }
                    retries++;
                    await sleep(100);
                }
            }
            await sleep(ms);
        }
    })();
    return {
        n: () => n,
        retries: () => retries,
        stop: async () => {
            writing = false;
            await loop;
        },
    };
}

// Asserts (node:assert) that every item of rec got each counter value
// after its first exactly once and in order, starting at 100002 at the
// latest and ending at last; more: text for the order's message.
function assertCounters(assert, rec, last, more) {
    for (let i = 0; i < rec.got.length; i++) {
        const vals = rec.got[i].filter((v) => v > 100000);
        for (let k = 1; k < vals.length; k++) {
            assert.equal(vals[k], vals[k - 1] + 1, "item " + i
                + ": value " + vals[k] + " after " + vals[k - 1]
                + (more ? "; " + more() : "")
                + "; values " + vals.join(" "));
        }
        assert.ok(vals[0] <= 100002, "item " + i + " starts at " + vals[0]);
        assert.equal(vals[vals.length - 1], last,
                     "item " + i + " ends at the last value");
    }
}

// Waits (10 s at most) until every item of rec got last.
function untilCounters(rec, last) {
    return until(() => rec.got.every((g) => g.length > 0
                                     && g[g.length - 1] === last), 10000);
}

module.exports = {
    sleep, until, freePort, stats, sumWorkers, workerOf,
    startBroker, makeClient, makeProxy,
    recordValues, subscribeCounters, clientOnOtherWorker, writeCounters,
    assertCounters, untilCounters,
};
