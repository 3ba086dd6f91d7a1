// tests/interop/test/roam.test.js: any worker serves any session (issue
// 19 item 1, docs/architecture.md §11), with node-opcua's own automatic
// reconnection as the client.
//
// Starts its own `uabroker -w 4` (UA_INTEROP_UABROKER, in a temporary
// runtime directory) and a TCP proxy (lib/common.js) in front of it.  A
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
const fs = require("node:fs");
const path = require("node:path");

const {
    OPCUACertificateManager,
    MessageSecurityMode,
    SecurityPolicy,
    AttributeIds,
} = require("node-opcua");
const {
    sleep, until, stats, sumWorkers, workerOf, startBroker, makeClient,
    makeProxy, subscribeCounters, clientOnOtherWorker, writeCounters,
    assertCounters, untilCounters,
} = require("../lib/common.js");

const UABROKER = process.env.UA_INTEROP_UABROKER;
const skip = !UABROKER ? "needs run.sh (UA_INTEROP_UABROKER)" : false;
const NVARS = 10;
const CUTS = 8;
const WRITE_MS = 100;

describe("sessions that move between workers (-w 4)", { skip }, () => {
    let b;

    before(async () => {
        b = await startBroker(UABROKER, "roam", 4);
    });

    after(async () => {
        if (b) {
            await b.stop(/claim|move|cannot/);
        }
    });

    function client(reconnect, policy, mode, m) {
        return makeClient(m || b.cm, "roam", reconnect, policy, mode);
    }

    // The operator trusts the certificate of manager m (refused once,
    // saved in rejected/, moved to trusted/certs, SIGHUP).
    async function trust(m) {
        const bpki = path.join(b.runDir, "pki");
        const rejected = path.join(bpki, "rejected");
        const first = client(false, SecurityPolicy.Basic256Sha256,
                             MessageSecurityMode.SignAndEncrypt, m);
        try {
            await first.connect(b.url);
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
        b.proc.kill("SIGHUP");
        await sleep(500);
    }

    it("8 cuts: the same session, the same subscription, every value once and in order",
       async () => {
        const proxy = makeProxy(b.port);
        const pport = await proxy.listen();
        const sub = client(true);
        await sub.connect("opc.tcp://127.0.0.1:" + pport);
        const session = await sub.createSession();
        const sessionId = session.sessionId.toString();
        let reconnections = 0;
        sub.on("after_reconnection", () => { reconnections++; });
        const { subscription, subId, rec } =
            await subscribeCounters(session, NVARS);

        // The writer, straight to the broker, on another worker.
        const writer = await clientOnOtherWorker(() => client(false), b.url,
                                                 sub);
        assert.ok(writer, "a writer on another worker than the subscriber");
        const ws = await writer.createSession();
        const creates0 = sumWorkers(await stats(b.sport), "CreateSession");
        const wr = writeCounters(ws, NVARS, WRITE_MS, false);

        const workers = [workerOf(sub)];
        try {
        for (let cut = 0; cut < CUTS; cut++) {
            await sleep(800);
            const r0 = reconnections;
            proxy.cut(1000);
            rec.seqs.push("cut");
            const ok = await until(() => reconnections > r0, 20000);
            assert.ok(ok, "cut " + (cut + 1) + ": node-opcua reconnected");
            workers.push(workerOf(sub));
        }
        await sleep(800);
        await wr.stop();
        const last = 100000 + wr.n();
        await untilCounters(rec, last);

        assert.equal(session.sessionId.toString(), sessionId,
                     "the same session after " + CUTS + " cuts");
        assert.equal(subscription.subscriptionId, subId,
                     "the subscription keeps its id");
        assertCounters(assert, rec, last,
                       () => "sequence numbers " + rec.seqs.join(" "));
        const st = await stats(b.sport);
        const moved = sumWorkers(st, "sessions_moved_in");
        assert.equal(sumWorkers(st, "CreateSession"), creates0,
                     "no second CreateSession");
        console.log("# workers of the subscriber's channel: "
                    + workers.join(" ") + "; sessions moved: " + moved
                    + "; values per item: " + (last - 100000)
                    + "; messages handed over twice by the client: "
                    + rec.dupMessages);
        const changed = workers.slice(1).filter((w, k) => w !== workers[k]);
        assert.ok(moved >= changed.length,
                  "every reconnect onto another worker moved the session ("
                  + moved + " of " + changed.length + ")");
        } finally {
            await wr.stop();
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
        await trust(b.cm);
        const proxy = makeProxy(b.port);
        const pport = await proxy.listen();
        const c = client(true, SecurityPolicy.Basic256Sha256,
                         MessageSecurityMode.SignAndEncrypt);
        await c.connect("opc.tcp://127.0.0.1:" + pport);
        const session = await c.createSession();
        const sessionId = session.sessionId.toString();
        let reconnections = 0;
        c.on("after_reconnection", () => { reconnections++; });
        const moved0 = sumWorkers(await stats(b.sport), "sessions_moved_in");
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
            const moved = sumWorkers(await stats(b.sport),
                                     "sessions_moved_in");
            assert.ok(moved > moved0, "it moved to another worker");
        }

        // Another client certificate (trusted too) cannot take it, on
        // whichever worker its channel lands (Part 4 §5.7.3).
        const cm2 = new OPCUACertificateManager({
            rootFolder: path.join(b.dir, "client2-pki"),
            automaticallyAcceptUnknownCertificate: true,
        });
        await cm2.initialize();
        await trust(cm2);
        const moved1 = sumWorkers(await stats(b.sport), "sessions_moved_in");
        for (let k = 0; k < 4; k++) {
            const thief = client(false, SecurityPolicy.Basic256Sha256,
                                 MessageSecurityMode.SignAndEncrypt, cm2);
            await thief.connect(b.url);
            await assert.rejects(thief.reactivateSession(session),
                                 "another certificate is refused");
            await thief.disconnect();
        }
        await cm2.dispose();
        assert.equal(sumWorkers(await stats(b.sport), "sessions_moved_in"),
                     moved1, "and nothing moved");
        await session.close().catch(() => {});
        await c.disconnect();
        await proxy.close();
    });
});
