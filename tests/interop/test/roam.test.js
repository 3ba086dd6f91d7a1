// tests/interop/test/roam.test.js: any worker serves any session (issue
// 19 item 1, docs/architecture.md §11), with node-opcua's own automatic
// reconnection as the client.
//
// Starts its own `uabroker -w 4` (UA_INTEROP_UABROKER, in a temporary
// runtime directory) and a TCP proxy (below) in front of it.  A
// subscriber connects through the proxy: one session, one subscription
// of 10 Int32 items; a writer, straight to the broker on another worker
// than the subscriber's, writes counters into the 10 variables every
// 100 ms.  The proxy is cut 8 times (every connection through it
// destroyed, new ones refused for about a second); node-opcua reconnects
// each time, through SO_REUSEPORT onto any worker.  Then:
//   - the same session every time (its sessionId, no second
//     CreateSession: /stats counts CreateSession requests),
//   - the subscription keeps its id,
//   - every value written arrives exactly once and in order, per item,
//   - the broker counts the moves (sessions_moved_in in /stats).
// And with Basic256Sha256 SignAndEncrypt: a cut, the same certificate
// reconnects to the same session; a client with another (trusted)
// certificate that tries to take the session over is refused
// (reactivateSession rejects) and nothing moves.
//
// Run by tests/interop/run.sh (UA_INTEROP_UABROKER, UA_INTEROP_PKI).
"use strict";

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");
const path = require("node:path");

const {
    OPCUAClient,
    OPCUACertificateManager,
    MessageSecurityMode,
    SecurityPolicy,
    AttributeIds,
    DataType,
    TimestampsToReturn,
    ClientSubscription,
    ClientMonitoredItem,
} = require("node-opcua");
const {
    sleep, until, freePort, stats, sumWorkers, workerOf,
} = require("../lib/common.js");

const UABROKER = process.env.UA_INTEROP_UABROKER;
const skip = !UABROKER ? "needs run.sh (UA_INTEROP_UABROKER)" : false;
const NVARS = 10;
const CUTS = 8;
const WRITE_MS = 100;

// A TCP proxy to port: cut() destroys every connection through it and
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

describe("sessions that move between workers (-w 4)", { skip }, () => {
    let broker;
    let dir;
    let port;
    let sport;
    let cm;
    let log = "";

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-roam-"));
        port = await freePort();
        sport = await freePort();
        broker = spawn(UABROKER, ["-w", "4", "-p", String(port),
            "--set", "log.level=info",
            "--stats", "127.0.0.1:" + sport,
            "--runtime-dir", path.join(dir, "run"),
            "--set", "security.anonymous_write=true",
            "--set", "limits.max_monitored_item_queue_size=1000"],
            { stdio: ["ignore", "pipe", "pipe"] });
        broker.stdout.on("data", (d) => { log += d; });
        broker.stderr.on("data", (d) => { log += d; });
        const up = await until(() => /serving opc\.tcp/.test(log), 20000);
        assert.ok(up, "the broker starts: " + log);
        cm = new OPCUACertificateManager({
            rootFolder: path.join(dir, "client-pki"),
            automaticallyAcceptUnknownCertificate: true,
        });
        await cm.initialize();
    });

    after(async () => {
        for (const line of log.split("\n")) {
            if (/claim|move|cannot/.test(line)) {
                console.log("# broker: " + line);
            }
        }
        if (cm) {
            await cm.dispose();
        }
        if (broker && broker.exitCode === null) {
            broker.kill("SIGTERM");
            await until(() => broker.exitCode !== null, 10000);
        }
        fs.rmSync(dir, { recursive: true, force: true });
    });

    // The operator trusts the certificate of manager m (refused once,
    // saved in rejected/, moved to trusted/certs, SIGHUP).
    async function trust(m) {
        const bpki = path.join(dir, "run", "pki");
        const rejected = path.join(bpki, "rejected");
        const first = makeClient(false, SecurityPolicy.Basic256Sha256,
                                 MessageSecurityMode.SignAndEncrypt, m);
        try {
            await first.connect("opc.tcp://127.0.0.1:" + port);
            await first.createSession();
        } catch (e) {
            // refused: untrusted
        }
        await first.disconnect();
        let files = [];
        for (let i = 0; i < 50 && files.length === 0; i++) {
            files = fs.existsSync(rejected)
                ? fs.readdirSync(rejected).filter((f) => /\.der$/.test(f))
                : [];
            if (files.length === 0) {
                await sleep(100);
            }
        }
        assert.ok(files.length > 0, "the certificate was refused and kept");
        for (const f of files) {
            fs.renameSync(path.join(rejected, f),
                          path.join(bpki, "trusted", "certs", f));
        }
        broker.kill("SIGHUP");
        await sleep(500);
    }

    function makeClient(reconnect, policy, mode, m) {
        return OPCUAClient.create({
            applicationName: "uabroker-interop-roam",
            clientCertificateManager: m || cm,
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

    it("8 cuts: the same session, the same subscription, every value once and in order",
       async () => {
        const proxy = makeProxy(port);
        const pport = await proxy.listen();
        const sub = makeClient(true);
        await sub.connect("opc.tcp://127.0.0.1:" + pport);
        const session = await sub.createSession();
        const sessionId = session.sessionId.toString();
        let reconnections = 0;
        sub.on("after_reconnection", () => { reconnections++; });

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
        const subId = subscription.subscriptionId;
        // Values per item from the NotificationMessages themselves, each
        // sequence number taken once: after a reconnection node-opcua
        // republishes from its last sequence number while its Publish
        // requests run, and may hand the same message over twice (the
        // same sequence number: the same message, Part 4 §5.13.1.1).
        const seqs = [];
        const seen = new Set();
        const byHandle = new Map();
        let dupMessages = 0;
        const got = [];
        subscription.on("raw_notification", (m) => {
            seqs.push(m.sequenceNumber);
            if (seen.has(m.sequenceNumber)) {
                dupMessages++;
                return;
            }
            seen.add(m.sequenceNumber);
            for (const d of m.notificationData || []) {
                for (const n of (d && d.monitoredItems) || []) {
                    const i = byHandle.get(n.clientHandle);
                    if (i !== undefined && n.value && n.value.value) {
                        got[i].push(n.value.value.value);
                    }
                }
            }
        });
        for (let i = 0; i < NVARS; i++) {
            got.push([]);
            const item = ClientMonitoredItem.create(subscription, {
                nodeId: "ns=1;s=v" + 2 * i, attributeId: AttributeIds.Value,
            }, { samplingInterval: 50, queueSize: 1000, discardOldest: true },
            TimestampsToReturn.Both);
            await new Promise((resolve, reject) => {
                item.on("initialized", resolve);
                item.on("err", (e) => reject(new Error(String(e))));
            });
            byHandle.set(item.monitoringParameters.clientHandle, i);
        }

        // The writer, straight to the broker, on another worker.
        let writer;
        for (let k = 0; k < 32; k++) {
            const c = makeClient(false);
            await c.connect("opc.tcp://127.0.0.1:" + port);
            if (workerOf(c) !== workerOf(sub)) {
                writer = c;
                break;
            }
            await c.disconnect();
        }
        assert.ok(writer, "a writer on another worker than the subscriber");
        const ws = await writer.createSession();
        const creates0 = sumWorkers(await stats(sport), "CreateSession");

        let n = 0;
        let writing = true;
        const loop = (async () => {
            while (writing) {
                n++;
                const nodes = [];
                for (let i = 0; i < NVARS; i++) {
                    nodes.push({ nodeId: "ns=1;s=v" + 2 * i,
                        attributeId: AttributeIds.Value,
                        value: { value: { dataType: DataType.Int32,
                                          value: 100000 + n } } });
                }
                await ws.write(nodes);
                await sleep(WRITE_MS);
            }
        })();

        const workers = [workerOf(sub)];
        try {
        for (let cut = 0; cut < CUTS; cut++) {
            await sleep(800);
            const r0 = reconnections;
            proxy.cut(1000);
            seqs.push("cut");
            const ok = await until(() => reconnections > r0, 20000);
            assert.ok(ok, "cut " + (cut + 1) + ": node-opcua reconnected");
            workers.push(workerOf(sub));
        }
        await sleep(800);
        writing = false;
        await loop;
        const last = 100000 + n;
        await until(() => got.every((g) => g.length > 0
                                    && g[g.length - 1] === last), 10000);

        assert.equal(session.sessionId.toString(), sessionId,
                     "the same session after " + CUTS + " cuts");
        assert.equal(subscription.subscriptionId, subId,
                     "the subscription keeps its id");
        for (let i = 0; i < NVARS; i++) {
            const vals = got[i].filter((v) => v > 100000);
            const first = vals[0];
            for (let k = 1; k < vals.length; k++) {
                assert.equal(vals[k], vals[k - 1] + 1, "item " + i
                    + ": value " + vals[k] + " after " + vals[k - 1]
                    + "; sequence numbers " + seqs.join(" ")
                    + "; values " + vals.join(" "));
            }
            assert.ok(first <= 100002, "item " + i + " starts at " + first);
            assert.equal(vals[vals.length - 1], last,
                         "item " + i + " ends at the last value");
        }
        const after = await stats(sport);
        const moved = sumWorkers(after, "sessions_moved_in");
        assert.equal(sumWorkers(after, "CreateSession"), creates0,
                     "no second CreateSession");
        console.log("# workers of the subscriber's channel: "
                    + workers.join(" ") + "; sessions moved: " + moved
                    + "; values per item: " + (last - 100000)
                    + "; messages handed over twice by the client: "
                    + dupMessages);
        const changed = workers.slice(1).filter((w, k) => w !== workers[k]);
        assert.ok(moved >= changed.length,
                  "every reconnect onto another worker moved the session ("
                  + moved + " of " + changed.length + ")");
        } finally {
            writing = false;
            await loop;
            await ws.close().catch(() => {});
            await writer.disconnect().catch(() => {});
            await subscription.terminate().catch(() => {});
            await session.close().catch(() => {});
            await sub.disconnect().catch(() => {});
            await proxy.close();
        }
    });

    it("SignAndEncrypt: a cut, the same certificate reactivates the same session; another certificate is refused",
       async () => {
        await trust(cm);
        const proxy = makeProxy(port);
        const pport = await proxy.listen();
        const c = makeClient(true, SecurityPolicy.Basic256Sha256,
                             MessageSecurityMode.SignAndEncrypt);
        await c.connect("opc.tcp://127.0.0.1:" + pport);
        const session = await c.createSession();
        const sessionId = session.sessionId.toString();
        let reconnections = 0;
        c.on("after_reconnection", () => { reconnections++; });
        const moved0 = sumWorkers(await stats(sport), "sessions_moved_in");
        const w0 = workerOf(c);
        let other = false;
        for (let cut = 0; cut < 6 && !other; cut++) {
            const r0 = reconnections;
            proxy.cut(300);
            assert.ok(await until(() => reconnections > r0, 20000),
                      "reconnected");
            other = workerOf(c) !== w0;
        }
        const dv = await session.read({ nodeId: "ns=1;s=v0",
                                        attributeId: AttributeIds.Value });
        assert.equal(dv.statusCode.value, 0, "the session reads");
        assert.equal(session.sessionId.toString(), sessionId,
                     "the same session");
        if (other) {
            const moved = sumWorkers(await stats(sport), "sessions_moved_in");
            assert.ok(moved > moved0, "it moved to another worker");
        }

        // Another client certificate (trusted too) cannot take it, on
        // whichever worker its channel lands (Part 4 §5.7.3).
        const cm2 = new OPCUACertificateManager({
            rootFolder: path.join(dir, "client2-pki"),
            automaticallyAcceptUnknownCertificate: true,
        });
        await cm2.initialize();
        await trust(cm2);
        const moved1 = sumWorkers(await stats(sport), "sessions_moved_in");
        for (let k = 0; k < 4; k++) {
            const thief = makeClient(false, SecurityPolicy.Basic256Sha256,
                                     MessageSecurityMode.SignAndEncrypt, cm2);
            await thief.connect("opc.tcp://127.0.0.1:" + port);
            await assert.rejects(thief.reactivateSession(session),
                                 "another certificate is refused");
            await thief.disconnect();
        }
        await cm2.dispose();
        assert.equal(sumWorkers(await stats(sport), "sessions_moved_in"),
                     moved1, "and nothing moved");
        await session.close().catch(() => {});
        await c.disconnect();
        await proxy.close();
    });
});
