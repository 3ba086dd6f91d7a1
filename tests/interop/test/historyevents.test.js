// tests/interop/test/historyevents.test.js: event history of uabroker
// (issue 18; Part 11 §6.5.2 ReadEventDetails) with node-opcua 2.182.0 as
// the client.
//
// `uabroker feed` raises 7 events of ns=1;s=Demo.Analog (an event
// notifier under the Server: alarms.conf's alarms have it as their
// source) and 2 of ns=1;s=Demo, a second apart, in the past; the
// historian keeps them. Then:
//   - HistoryServerCapabilities: AccessHistoryEventsCapability true,
//     MaxReturnEventValues 10,000 (history.max_return_events); the Server
//     object's EventNotifier has HistoryRead (4) beside SubscribeToEvents;
//   - ReadEventDetails on the Server with select clauses EventId,
//     EventType, SourceNode, Message, Severity, Time and 1:Temperature:
//     all 9 with their fields as fed, oldest first; with
//     numValuesPerNode 2 in five pages through continuation points, each
//     once; newest first (endTime before startTime);
//   - on Demo.Analog: its own 7 only;
//   - a where clause (Severity >= 600): the two of Demo;
//   - a released continuation point is BadContinuationPointInvalid;
//   - bad input: a Variable and an Object that is no notifier
//     (BadHistoryOperationUnsupported), no times
//     (BadHistoryOperationInvalid);
//   - kill -9 of the historian: respawned, the events still there, and a
//     new one kept.
//
// Run by tests/interop/run.sh (UA_INTEROP_URL, UA_INTEROP_PKI,
// UA_INTEROP_UABROKER, UA_INTEROP_RUNTIME, UA_INTEROP_BROKER_PID).
"use strict";

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const os = require("node:os");
const path = require("node:path");
const fs = require("node:fs");
const { execFileSync } = require("node:child_process");

const {
    OPCUAClient,
    OPCUACertificateManager,
    MessageSecurityMode,
    SecurityPolicy,
    AttributeIds,
    StatusCodes,
    TimestampsToReturn,
    HistoryReadRequest,
    ReadEventDetails,
    constructEventFilter,
    ContentFilter,
    ContentFilterElement,
    FilterOperator,
    SimpleAttributeOperand,
    LiteralOperand,
    Variant,
    DataType,
} = require("node-opcua");
const { sleep, until } = require("../lib/common.js");

// Waits until the async pred() is true or ms have passed; its last value.
async function untilAsync(pred, ms) {
    const end = Date.now() + ms;
    let ok = await pred();
    while (!ok && Date.now() < end) {
        await sleep(50);
        ok = await pred();
    }
    return ok;
}

const URL = process.env.UA_INTEROP_URL;
if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}
const UABROKER = process.env.UA_INTEROP_UABROKER;
const RUNTIME = process.env.UA_INTEROP_RUNTIME;
const BROKER_PID = Number(process.env.UA_INTEROP_BROKER_PID || 0);
const BROKER_LOG = process.env.UA_INTEROP_BROKER_LOG;
const ownPki = !process.env.UA_INTEROP_PKI;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));

const FIELDS = ["EventId", "EventType", "SourceNode", "Message", "Severity",
    "Time", "1:Temperature"];
const F = Object.fromEntries(FIELDS.map((f, i) => [f, i]));
const ANALOG = "ns=1;s=Demo.Analog";

function feed(...lines) {
    return execFileSync(UABROKER, ["--runtime-dir", RUNTIME, "feed",
        ...lines], { encoding: "utf8" });
}

// How many times a uahistorian has said it is ready in the broker's log
// ("history of N variables", logged once its event interest is set: an
// event fed after that is its to keep).
function historianReady() {
    if (!BROKER_LOG) {
        return 0;
    }
    const log = fs.readFileSync(BROKER_LOG, "utf8");
    return (log.match(/uahistorian \d+: history of \d+ variables/g) ||
        []).length;
}

// The pid of the broker's uahistorian, 0 when none.
function historian() {
    for (const e of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(e)) {
            continue;
        }
        let stat;
        try {
            stat = fs.readFileSync(`/proc/${e}/stat`, "utf8");
        } catch (err) {
            continue;
        }
        const m = /^(\d+) \(([^)]*)\) \S (\d+)/.exec(stat);
        if (m && m[2] === "uahistorian" && Number(m[3]) === BROKER_PID) {
            return Number(m[1]);
        }
    }
    return 0;
}

describe("event history (ReadEventDetails)", () => {
    let certificateManager;
    let client;
    let session;
    const mark = `he${process.pid}x${Date.now() % 100000}`;
    // Whole seconds in the past, so each event has its own Time.
    const base = new Date(Math.floor(Date.now() / 1000) * 1000 - 60000);
    const t0 = new Date(base.getTime() - 1000);
    const t1 = new Date(base.getTime() + 30000);
    const fed = [];     // { sev, ms, analog } in time order

    function iso(ms) {
        return new Date(base.getTime() + ms).toISOString();
    }

    async function historyRead(nodeId, details, cp, release) {
        const req = new HistoryReadRequest({
            historyReadDetails: details,
            timestampsToReturn: TimestampsToReturn.Source,
            releaseContinuationPoints: !!release,
            nodesToRead: [{ nodeId, continuationPoint: cp || null }],
        });
        const resp = await new Promise((resolve, reject) => {
            session.performMessageTransaction(req, (err, r) =>
                err ? reject(err) : resolve(r));
        });
        return resp;
    }

    function details(opts) {
        return new ReadEventDetails({
            startTime: opts.start === undefined ? t0 : opts.start,
            endTime: opts.end === undefined ? t1 : opts.end,
            numValuesPerNode: opts.num || 0,
            filter: opts.filter || constructEventFilter(FIELDS),
        });
    }

    // Every page; our events (by their Message) in the order returned.
    async function all(nodeId, opts) {
        const got = [];
        let cp = null;
        let pages = 0;
        for (;;) {
            const resp = await historyRead(nodeId, details(opts), cp);
            assert.equal(resp.responseHeader.serviceResult.value,
                StatusCodes.Good.value);
            const r = resp.results[0];
            assert.ok(r.statusCode.value === StatusCodes.Good.value ||
                r.statusCode.value === StatusCodes.GoodNoData.value,
                r.statusCode.toString());
            pages++;
            const evs = r.historyData ? r.historyData.events || [] : [];
            if (opts.num) {
                assert.ok(evs.length <= opts.num, `${evs.length} a page`);
            }
            for (const e of evs) {
                const msg = e.eventFields[F.Message].value;
                if (msg && msg.text && msg.text.startsWith(mark)) {
                    got.push(e.eventFields);
                }
            }
            if (!r.continuationPoint || r.continuationPoint.length === 0) {
                return { got, pages };
            }
            cp = r.continuationPoint;
        }
    }

    before(async () => {
        certificateManager = new OPCUACertificateManager({
            rootFolder: pkiRoot,
            automaticallyAcceptUnknownCertificate: true,
        });
        await certificateManager.initialize();
        client = OPCUAClient.create({
            applicationName: "uabroker-interop-historyevents",
            clientCertificateManager: certificateManager,
            securityMode: MessageSecurityMode.None,
            securityPolicy: SecurityPolicy.None,
            endpointMustExist: false,
            keepSessionAlive: false,
            connectionStrategy: { maxRetry: 0, initialDelay: 100,
                maxDelay: 200 },
        });
        await client.connect(URL);
        session = await client.createSession();
        // Analog's at 0..6 s (severity 100..106), Demo's at 2.5 and 4.5 s
        // (severity 700, 701); 1:Temperature the severity + 0.25.
        const lines = [];
        for (let i = 0; i < 7; i++) {
            fed.push({ sev: 100 + i, ms: i * 1000, analog: true });
        }
        fed.push({ sev: 700, ms: 2500, analog: false });
        fed.push({ sev: 701, ms: 4500, analog: false });
        fed.sort((a, b) => a.ms - b.ms);
        for (const f of fed) {
            lines.push(`event=${f.analog ? ANALOG : "ns=1;s=Demo"};` +
                `severity=${f.sev};message="${mark} ${f.sev}";` +
                `time=${iso(f.ms)};1:Temperature=${f.sev + 0.25}`);
        }
        assert.match(feed(...lines), /ok 9 failed 0/);
        // The historian writes every history.flush_ms (100 ms).
        assert.ok(await untilAsync(async () =>
            (await all("i=2253", {})).got.length === 9, 5000),
        "the historian kept the 9 events");
    });

    after(async () => {
        if (session) {
            await session.close();
        }
        if (client) {
            await client.disconnect();
        }
        if (certificateManager) {
            await certificateManager.dispose();
        }
        if (ownPki) {
            fs.rmSync(pkiRoot, { recursive: true, force: true });
        }
    });

    it("HistoryServerCapabilities and the Server's EventNotifier say so",
        async () => {
            const dv = await session.read([
                // AccessHistoryEventsCapability, MaxReturnEventValues.
                { nodeId: "i=11242", attributeId: AttributeIds.Value },
                { nodeId: "i=11274", attributeId: AttributeIds.Value },
                { nodeId: "i=2253", attributeId: AttributeIds.EventNotifier },
            ]);
            assert.equal(dv[0].value.value, true);
            assert.equal(dv[1].value.value, 10000);
            assert.equal(dv[2].value.value & 5, 5, "SubscribeToEvents and " +
                "HistoryRead");
        });

    it("the Server: every event with its fields, oldest first", async () => {
        const { got } = await all("i=2253", {});
        assert.equal(got.length, 9);
        for (let i = 0; i < 9; i++) {
            const f = fed[i];
            const e = got[i];
            assert.equal(e[F.Severity].value, f.sev);
            assert.equal(e[F.Message].value.text, `${mark} ${f.sev}`);
            assert.equal(e[F.Time].value.getTime(), base.getTime() + f.ms);
            assert.equal(e[F["1:Temperature"]].value, f.sev + 0.25);
            assert.equal(e[F.SourceNode].value.toString(),
                f.analog ? ANALOG : "ns=1;s=Demo");
            assert.equal(e[F.EventType].value.toString(), "ns=0;i=2041");
            assert.equal(e[F.EventId].dataType, DataType.ByteString);
            assert.equal(e[F.EventId].value.length, 16);
        }
    });

    it("pages of 2: five pages, every event once", async () => {
        const { got, pages } = await all("i=2253", { num: 2 });
        assert.equal(got.length, 9);
        assert.ok(pages >= 5, `${pages} pages`);
        const ids = new Set(got.map((e) =>
            e[F.EventId].value.toString("hex")));
        assert.equal(ids.size, 9);
        assert.deepEqual(got.map((e) => e[F.Severity].value),
            fed.map((f) => f.sev));
    });

    it("newest first when endTime is before startTime", async () => {
        const { got } = await all("i=2253", { start: t1, end: t0 });
        assert.deepEqual(got.map((e) => e[F.Severity].value),
            fed.map((f) => f.sev).reverse());
    });

    it("Demo.Analog (a notifier under the Server): its own events only",
        async () => {
            const { got } = await all(ANALOG, { num: 3 });
            assert.deepEqual(got.map((e) => e[F.Severity].value),
                [100, 101, 102, 103, 104, 105, 106]);
        });

    it("a where clause: Severity >= 600", async () => {
        const filter = constructEventFilter(FIELDS);
        filter.whereClause = new ContentFilter({
            elements: [new ContentFilterElement({
                filterOperator: FilterOperator.GreaterThanOrEqual,
                filterOperands: [
                    new SimpleAttributeOperand({
                        typeDefinitionId: "i=2041",
                        browsePath: [{ namespaceIndex: 0,
                            name: "Severity" }],
                        attributeId: AttributeIds.Value,
                    }),
                    new LiteralOperand({ value: new Variant({
                        dataType: DataType.UInt16, value: 600 }) }),
                ],
            })],
        });
        const { got } = await all("i=2253", { filter });
        assert.deepEqual(got.map((e) => e[F.Severity].value), [700, 701]);
    });

    it("a released continuation point is refused", async () => {
        const r1 = await historyRead("i=2253", details({ num: 1 }));
        const cp = r1.results[0].continuationPoint;
        assert.ok(cp && cp.length > 0, "a continuation point");
        const rel = await historyRead("i=2253", details({ num: 1 }), cp,
            true);
        assert.equal(rel.results[0].statusCode.value, StatusCodes.Good.value);
        const again = await historyRead("i=2253", details({ num: 1 }), cp);
        assert.equal(again.results[0].statusCode.value,
            StatusCodes.BadContinuationPointInvalid.value);
    });

    it("bad input", async () => {
        let r = await historyRead("ns=1;s=v7", details({}));
        assert.equal(r.results[0].statusCode.value,
            StatusCodes.BadHistoryOperationUnsupported.value, "a Variable");
        r = await historyRead("ns=1;s=Demo", details({}));
        assert.equal(r.results[0].statusCode.value,
            StatusCodes.BadHistoryOperationUnsupported.value,
            "no notifier");
        await assert.rejects(historyRead("i=2253", details({ start: null,
            end: null, num: 5 })), /BadHistoryOperationInvalid/, "no times");
    });

    it("kill -9 of the historian: the events are still there, new ones " +
        "kept", async () => {
        const pid = historian();
        assert.ok(pid > 0, "the historian runs");
        const ready = historianReady();
        process.kill(pid, "SIGKILL");
        // Respawned, and ready: an event raised while no historian has
        // its event interest set is not kept (docs/operations.md
        // "History").
        assert.ok(await until(() => {
            const p = historian();
            return p > 0 && p !== pid &&
                (!BROKER_LOG || historianReady() > ready);
        }, 10000), "the historian is respawned and ready");
        const { got } = await all("i=2253", {});
        assert.equal(got.length, 9);
        assert.match(feed(`event=${ANALOG};severity=107;` +
            `message="${mark} 107";time=${iso(7000)};1:Temperature=107.25`),
        /ok 1 failed 0/);
        assert.ok(await untilAsync(async () =>
            (await all(ANALOG, {})).got.length === 8, 10000),
        "the new event is kept");
    });
});
