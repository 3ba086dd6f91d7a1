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

const {
    sleep, until, stats, sumWorkers, workerOf, startBroker, makeClient,
    subscribeCounters, clientOnOtherWorker, writeCounters, assertCounters,
    untilCounters,
} = require("../lib/common.js");

const UABROKER = process.env.UA_INTEROP_UABROKER;
const skip = !UABROKER ? "needs run.sh (UA_INTEROP_UABROKER)" : false;
const NVARS = 10;
const WRITE_MS = 100;

describe("a worker's death (-w 4, kill -9)", { skip }, () => {
    let b;

    before(async () => {
        b = await startBroker(UABROKER, "kill", 4);
    });

    after(async () => {
        if (b) {
            await b.stop(/claim|move|took over|exited|respawn|cannot/);
        }
    });

    it("kill -9 of the subscriber's worker: the same session and subscription, every value once and in order, none lost",
       async () => {
        const sub = makeClient(b.cm, "kill", true);
        await sub.connect(b.url);
        const session = await sub.createSession();
        const sessionId = session.sessionId.toString();
        let reconnections = 0;
        sub.on("after_reconnection", () => { reconnections++; });
        const { subscription, subId, rec } =
            await subscribeCounters(session, NVARS);

        // The writer, on another worker.
        const writer = await clientOnOtherWorker(
            () => makeClient(b.cm, "kill", false), b.url, sub);
        assert.ok(writer, "a writer on another worker than the subscriber");
        const ws = await writer.createSession();
        const victim = workerOf(sub) - 1;
        const wslot = workerOf(writer) - 1;
        const wr = writeCounters(ws, NVARS, WRITE_MS, false);

        try {
            await sleep(1000);
            const st0 = await stats(b.sport);
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
            await wr.stop();
            const last = 100000 + wr.n();
            await untilCounters(rec, last);

            assert.equal(session.sessionId.toString(), sessionId,
                         "the same session after the kill");
            assert.equal(subscription.subscriptionId, subId,
                         "the subscription keeps its id");
            assertCounters(assert, rec, last,
                           () => "sequence numbers " + rec.seqs.join(" "));
            const st = await stats(b.sport);
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
            await wr.stop();
            await ws.close().catch(() => {});
            await writer.disconnect().catch(() => {});
            await subscription.terminate().catch(() => {});
            await session.close().catch(() => {});
            await sub.disconnect().catch(() => {});
        }
    });
});
