// tests/interop/test/kill.test.js: a worker's death is a reconnect, not
// a loss (issue 19 item 2, docs/architecture.md §11 "A worker's death"),
// with node-opcua's own automatic reconnection as the client.
//
// Starts its own `uabroker -w 4` (UA_INTEROP_UABROKER, in a temporary
// runtime directory).  A subscriber connects: one session, one
// subscription of 10 Int32 items; a writer, on another worker than the
// subscriber's, writes counters into the 10 variables every 100 ms.  The
// worker holding the subscriber's connection is killed (SIGKILL, its pid
// from /stats); node-opcua reconnects, through SO_REUSEPORT onto any
// worker (or the dead one's successor).  Then:
//   - the same session (its sessionId, no second CreateSession on the
//     workers that lived),
//   - the subscription keeps its id,
//   - every value written arrives exactly once and in order, per item,
//   - the broker took the session over (sessions_inherited) and lost no
//     value of it (session_park_values_lost 0 in /stats).
//
// Run by tests/interop/run.sh (UA_INTEROP_UABROKER).
"use strict";

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const fs = require("node:fs");
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
const WRITE_MS = 100;

describe("a worker's death (-w 4, kill -9)", { skip }, () => {
    let broker;
    let dir;
    let port;
    let sport;
    let cm;
    let log = "";

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-kill-"));
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
            if (/claim|move|took over|exited|respawn|cannot/.test(line)) {
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

    function makeClient(reconnect) {
        return OPCUAClient.create({
            applicationName: "uabroker-interop-kill",
            clientCertificateManager: cm,
            securityMode: MessageSecurityMode.None,
            securityPolicy: SecurityPolicy.None,
            endpointMustExist: false,
            keepSessionAlive: false,
            requestedSessionTimeout: 60000,
            connectionStrategy: reconnect
                ? { maxRetry: 1000, initialDelay: 100, maxDelay: 300 }
                : { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
        });
    }

    it("kill -9 of the subscriber's worker: the same session and subscription, every value once and in order, none lost",
       async () => {
        const sub = makeClient(true);
        await sub.connect("opc.tcp://127.0.0.1:" + port);
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
        // sequence number taken once (node-opcua may hand a republished
        // message over twice: the same sequence number, the same message).
        const seen = new Set();
        const byHandle = new Map();
        const got = [];
        subscription.on("raw_notification", (m) => {
            if (seen.has(m.sequenceNumber)) {
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

        // The writer, on another worker.
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
        const victim = workerOf(sub) - 1;
        const wslot = workerOf(writer) - 1;

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

        try {
            await sleep(1000);
            const st0 = await stats(sport);
            const row = st0.workers.find((w) => w.slot === victim);
            assert.ok(row && row.pid > 0, "the subscriber's worker in /stats");
            const creates0 = st0.workers.filter((w) => w.slot !== victim)
                .reduce((a, w) => a + ((w.requests || {}).CreateSession || 0),
                        0);
            const t0 = Date.now();
            process.kill(row.pid, "SIGKILL");
            const ok = await until(() => reconnections > 0, 20000);
            assert.ok(ok, "node-opcua reconnected");
            console.log("# killed worker " + victim + " (pid " + row.pid
                        + "); reconnected after " + (Date.now() - t0)
                        + " ms, now on worker " + (workerOf(sub) - 1)
                        + "; the writer on worker " + wslot);
            await sleep(1500);
            writing = false;
            await loop;
            const last = 100000 + n;
            await until(() => got.every((g) => g.length > 0
                                        && g[g.length - 1] === last), 10000);

            assert.equal(session.sessionId.toString(), sessionId,
                         "the same session after the kill");
            assert.equal(subscription.subscriptionId, subId,
                         "the subscription keeps its id");
            for (let i = 0; i < NVARS; i++) {
                const vals = got[i].filter((v) => v > 100000);
                for (let k = 1; k < vals.length; k++) {
                    assert.equal(vals[k], vals[k - 1] + 1, "item " + i
                        + ": value " + vals[k] + " after " + vals[k - 1]
                        + "; values " + vals.join(" "));
                }
                assert.ok(vals[0] <= 100002, "item " + i + " starts at "
                          + vals[0]);
                assert.equal(vals[vals.length - 1], last,
                             "item " + i + " ends at the last value");
            }
            const st = await stats(sport);
            const creates = st.workers.filter((w) => w.slot !== victim)
                .reduce((a, w) => a + ((w.requests || {}).CreateSession || 0),
                        0);
            assert.equal(creates, creates0, "no second CreateSession");
            assert.ok(sumWorkers(st, "sessions_inherited") >= 1,
                      "the dead worker's successor took the session over");
            assert.equal(sumWorkers(st, "session_park_values_lost"), 0,
                         "no value of it lost");
            console.log("# values per item: " + (last - 100000)
                        + "; sessions_inherited "
                        + sumWorkers(st, "sessions_inherited"));
        } finally {
            writing = false;
            await loop;
            await ws.close().catch(() => {});
            await writer.disconnect().catch(() => {});
            await subscription.terminate().catch(() => {});
            await session.close().catch(() => {});
            await sub.disconnect().catch(() => {});
        }
    });
});
