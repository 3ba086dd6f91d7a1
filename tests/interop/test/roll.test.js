// tests/interop/test/roll.test.js: a rolling restart keeps every
// session (issue 19 item 3, docs/operations.md "Rolling restart"), with
// node-opcua's own automatic reconnection as the client.
//
// Starts its own `uabroker -w 2` (UA_INTEROP_UABROKER, in a temporary
// runtime directory).  A subscriber: one session, one subscription of 10
// Int32 items; a writer on the other worker writes counters into the 10
// variables every 100 ms (retrying a value whose Write failed while its
// connection was down: the same value twice is no change).  Two rolling
// restarts, `uabroker restart-workers` and SIGUSR2; both clients lose
// their connection once per restart and reconnect.  Then:
//   - /stats: each worker's restarts went up by one per rolling restart,
//   - the subscriber has the same session (node-opcua creates a new one
//     when reactivation fails) and the subscription its id,
//   - every value written arrives exactly once and in order, per item.
//
// Run by tests/interop/run.sh (UA_INTEROP_UABROKER) when UA_INTEROP_ROLL=1
// is set: not yet in `make check`.  Alone it passes; with the machine's
// cores saturated (three busy loops beside it) it failed 3 runs of about
// 20: node-opcua ended on a new session, the old one gone from the worker
// it had moved to without a hand-over or a timeout logged (under
// investigation: a reactivation that timed out client-side and a
// CloseSession is the suspect).  With a load average of about 12 (other
// builds and tests, two busy loops) it failed 5 runs of 5, and main's
// build 6 of 7 (one of them the new session), the others another way:
// values missing, silently.
// The broker had applied every value (history.nodes=ns=1;s=v0 read back
// afterwards holds all of them) and no Write failed or was retried, but
// the subscriber's 10 items all lacked the same 1 to 15 consecutive
// values, with no Overflow bit and no gap in the sequence numbers, often
// while the OTHER worker (not the one holding the subscription) retired,
// exited and was respawned.  Next suspect: the notification path of the
// worker holding the subscription while a peer is reaped (the broker
// reclaims the reaped worker's block references) or respawned.
// tests/integ/integ_roll.c asserts the same with our own client in
// `make check`.
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
const skip = !UABROKER ? "needs run.sh (UA_INTEROP_UABROKER)"
    : process.env.UA_INTEROP_ROLL !== "1"
        ? "set UA_INTEROP_ROLL=1 (intermittent under load, see above)" : false;
const NVARS = 10;
const ROLLS = 2;
const WRITE_MS = 100;

describe("rolling restart (-w 2)", { skip }, () => {
    let broker;
    let dir;
    let port;
    let sport;
    let cm;
    let log = "";

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-roll-"));
        port = await freePort();
        sport = await freePort();
        broker = spawn(UABROKER, ["-w", "2", "-p", String(port),
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
            if (/rolling|retir|claim|moved|timed out|cannot/.test(line)) {
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

    function makeClient() {
        return OPCUAClient.create({
            applicationName: "uabroker-interop-roll",
            clientCertificateManager: cm,
            securityMode: MessageSecurityMode.None,
            securityPolicy: SecurityPolicy.None,
            endpointMustExist: false,
            keepSessionAlive: false,
            requestedSessionTimeout: 60000,
            connectionStrategy: { maxRetry: 1000, initialDelay: 100,
                                  maxDelay: 300 },
        });
    }

    function restarts(st) {
        return (st.workers || []).map((w) => w.restarts);
    }

    it("2 rolling restarts: the same session, the same subscription, every value once and in order",
       async () => {
        const sub = makeClient();
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
        // Per item from the NotificationMessages, each sequence number
        // once (node-opcua may hand a republished message over twice).
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

        // The writer, on the other worker, reconnecting too.
        let writer;
        for (let k = 0; k < 32; k++) {
            const c = makeClient();
            await c.connect("opc.tcp://127.0.0.1:" + port);
            if (workerOf(c) !== workerOf(sub)) {
                writer = c;
                break;
            }
            await c.disconnect();
        }
        assert.ok(writer, "a writer on another worker than the subscriber");
        const ws = await writer.createSession();

        let n = 0;
        let writing = true;
        let retries = 0;
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
                await sleep(WRITE_MS);
            }
        })();

        try {
            const r0 = restarts(await stats(sport));
            for (let roll = 0; roll < ROLLS; roll++) {
                await sleep(800);
                const rc0 = reconnections;
                if (roll === 0) {
                    const cmd = spawn(UABROKER, ["--runtime-dir",
                        path.join(dir, "run"), "restart-workers"],
                        { stdio: "ignore" });
                    const code = await new Promise((resolve) => {
                        cmd.on("exit", resolve);
                    });
                    assert.equal(code, 0, "uabroker restart-workers");
                } else {
                    broker.kill("SIGUSR2");
                }
                const done = await until(() =>
                    /rolling restart done/.test(log.split("rolling restart of")
                        .slice(roll + 1).join("")), 30000);
                assert.ok(done, "rolling restart " + (roll + 1) + " done");
                assert.ok(await until(() => reconnections > rc0, 20000),
                          "rolling restart " + (roll + 1)
                          + ": node-opcua reconnected");
            }
            const r1 = restarts(await stats(sport));
            for (let w = 0; w < r0.length; w++) {
                assert.equal(r1[w], r0[w] + ROLLS,
                             "/stats: worker " + w + " restarted " + ROLLS
                             + " times");
            }
            await sleep(800);
            writing = false;
            await loop;
            const last = 100000 + n;
            await until(() => got.every((g) => g.length > 0
                                        && g[g.length - 1] === last), 10000);
            assert.equal(session.sessionId.toString(), sessionId,
                         "the same session after " + ROLLS
                         + " rolling restarts");
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
            console.log("# values per item: " + (last - 100000)
                        + "; subscriber reconnections: " + reconnections
                        + "; writes retried: " + retries);
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
