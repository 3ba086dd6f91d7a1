// tests/interop/test/history.test.js: HistoryRead of uabroker (issue 18)
// with node-opcua 2.182.0 as the client.
//
// run.sh historizes ns=1;s=v7 (history.nodes): the test writes 50 values
// to it, lets the historian commit them, and reads them back:
//   - HistoryServerCapabilities: data access, MaxReturnDataValues,
//     events (test/historyevents.test.js reads them), Insert
//     (test/historyupdate.test.js does the updates);
//     OperationLimits MaxNodesPerHistoryReadData;
//   - ReadRawModifiedDetails forward with numValuesPerNode 7: eight pages
//     through continuation points, every value in order, nothing twice;
//   - backwards (endTime before startTime): the same values reversed;
//   - returnBounds: the value before the start time (v7's initial value)
//     first, BadBoundNotFound at the end time last; mirrored backwards;
//     the same across pages;
//   - a continuation point released (releaseContinuationPoints), then
//     used: BadContinuationPointInvalid;
//   - TimestampsToReturn Server: server timestamps only;
//   - ReadProcessed (h-agg's Part 13 engine): Count, Average, Maximum
//     of the written values in one interval; an unknown aggregate
//     (the Server object's NodeId) BadAggregateNotSupported; Count over
//     25,000 intervals in pages of history.max_return_values (10,000)
//     through continuation points, forward and backward (endTime before
//     startTime), every interval once and every value
//     counted once; a released point BadContinuationPointInvalid after,
//     and a raw read refusing a processed read's point;
//   - an IndexRange: an array's values cut (Demo.Static.Array.UInt32,
//     also historized by run.sh), a scalar's BadIndexRangeNoData, a bad
//     range BadIndexRangeInvalid;
//   - ReadAtTimeDetails: a time between two values gives the linear
//     interpolation with the Interpolated bit, a time before all of them
//     BadNoData; with an IndexRange, the array's value cut after its time
//     (stepped), a scalar's interpolated value BadIndexRangeNoData, a bad
//     range BadIndexRangeInvalid;
//   - bad input: no times (BadHistoryOperationInvalid), TimestampsToReturn
//     Neither (BadTimestampsToReturnInvalid), a variable that is not
//     historized (BadHistoryOperationUnsupported), an unknown node
//     (BadNodeIdUnknown), a forged continuation point
//     (BadContinuationPointInvalid).
//
// Run by tests/interop/run.sh (UA_INTEROP_URL, UA_INTEROP_PKI).
"use strict";

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const os = require("node:os");
const path = require("node:path");
const fs = require("node:fs");

const {
    OPCUAClient,
    OPCUACertificateManager,
    MessageSecurityMode,
    SecurityPolicy,
    StatusCodes,
    DataType,
    AttributeIds,
    TimestampsToReturn,
    HistoryReadRequest,
    ReadRawModifiedDetails,
    ReadAtTimeDetails,
    ReadProcessedDetails,
} = require("node-opcua");
const { sleep } = require("../lib/common.js");

const URL = process.env.UA_INTEROP_URL;
const NODE = "ns=1;s=v7";
const N = 50;

if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}

const ownPki = !process.env.UA_INTEROP_PKI;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));

describe("HistoryRead of a historized variable (ns=1;s=v7)", () => {
    let certificateManager;
    let client;
    let session;
    let t0;
    let t1;
    const written = [];

    function raw(nodes, start, end, nv, ttr, release) {
        return session.historyRead(new HistoryReadRequest({
            historyReadDetails: new ReadRawModifiedDetails({
                isReadModified: false,
                startTime: start,
                endTime: end,
                numValuesPerNode: nv,
                returnBounds: false,
            }),
            timestampsToReturn: ttr === undefined
                ? TimestampsToReturn.Source : ttr,
            releaseContinuationPoints: !!release,
            nodesToRead: nodes.map((n) => (typeof n === "string"
                ? { nodeId: n } : n)),
        }));
    }

    // Every page of one node's raw read, through its continuation points.
    async function allPages(start, end, nv) {
        const values = [];
        let cp = null;
        let pages = 0;
        do {
            const r = await raw([{ nodeId: NODE, continuationPoint: cp }],
                start, end, nv);
            const res = r.results[0];
            assert.ok(res.statusCode.isGood(), res.statusCode.toString());
            const dvs = res.historyData.dataValues || [];
            assert.ok(dvs.length <= nv, `${dvs.length} values in a page`);
            values.push(...dvs);
            cp = res.continuationPoint && res.continuationPoint.length
                ? res.continuationPoint : null;
            pages++;
            assert.ok(pages < 100, "paging ends");
        } while (cp);
        return { values, pages };
    }

    before(async () => {
        certificateManager = new OPCUACertificateManager({
            rootFolder: pkiRoot,
            automaticallyAcceptUnknownCertificate: true,
        });
        await certificateManager.initialize();
        client = OPCUAClient.create({
            applicationName: "uabroker-interop-history",
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
        t0 = new Date(Date.now() - 1);
        for (let i = 0; i < N; i++) {
            const v = 1000 + i * 0.5;
            const sc = await session.write({
                nodeId: NODE,
                attributeId: AttributeIds.Value,
                value: { value: { dataType: DataType.Double, value: v } },
            });
            assert.equal(sc.value, StatusCodes.Good.value, sc.toString());
            written.push(v);
            await sleep(3);     /* source times >= 3 ms apart */
        }
        // history.flush_ms is 100: the historian has committed by then.
        await sleep(600);
        t1 = new Date(Date.now() + 1000);
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

    it("the variable says it is historized", async () => {
        const dv = await session.read([
            { nodeId: NODE, attributeId: AttributeIds.Historizing },
            { nodeId: NODE, attributeId: AttributeIds.AccessLevel },
            { nodeId: NODE, attributeId: AttributeIds.UserAccessLevel },
        ]);
        assert.equal(dv[0].value.value, true);
        assert.equal(dv[1].value.value & 4, 4, "AccessLevel HistoryRead");
        assert.equal(dv[2].value.value & 4, 4, "UserAccessLevel HistoryRead");
    });

    it("HistoryServerCapabilities and OperationLimits say so",
        async () => {
            const dv = await session.read([
                // AccessHistoryDataCapability, MaxReturnDataValues,
                // AccessHistoryEventsCapability, InsertDataCapability,
                // OperationLimits MaxNodesPerHistoryReadData.
                { nodeId: "i=11193", attributeId: AttributeIds.Value },
                { nodeId: "i=11273", attributeId: AttributeIds.Value },
                { nodeId: "i=11242", attributeId: AttributeIds.Value },
                { nodeId: "i=11196", attributeId: AttributeIds.Value },
                { nodeId: "i=12165", attributeId: AttributeIds.Value },
            ]);
            assert.equal(dv[0].value.value, true);
            assert.equal(dv[1].value.value, 10000);
            assert.equal(dv[2].value.value, true,
                "event history (test/historyevents.test.js)");
            assert.equal(dv[3].value.value, true, "HistoryUpdate Insert");
            assert.ok(dv[4].value.value > 0, `${dv[4].value.value}`);
        });

    it("raw, 7 a page: every written value once, in order", async () => {
        const { values, pages } = await allPages(t0, t1, 7);
        assert.equal(values.length, N, `${values.length} values`);
        assert.equal(pages, Math.ceil(N / 7) + (N % 7 === 0 ? 1 : 0));
        for (let i = 0; i < N; i++) {
            assert.equal(values[i].value.value, written[i], `value ${i}`);
            assert.ok(values[i].sourceTimestamp, "a source timestamp");
            if (i > 0) {
                assert.ok(values[i].sourceTimestamp.getTime()
                    >= values[i - 1].sourceTimestamp.getTime());
            }
        }
    });

    it("raw backwards (endTime before startTime): reversed", async () => {
        const r = await raw([NODE], t1, t0, 0);
        const dvs = r.results[0].historyData.dataValues;
        assert.equal(dvs.length, N);
        for (let i = 0; i < N; i++) {
            assert.equal(dvs[i].value.value, written[N - 1 - i]);
        }
    });

    it("returnBounds: the value before the start and BadBoundNotFound "
        + "after the end, forward, backward and paged", async () => {
        function rawBounds(start, end, nv, cp) {
            return session.historyRead(new HistoryReadRequest({
                historyReadDetails: new ReadRawModifiedDetails({
                    isReadModified: false, startTime: start, endTime: end,
                    numValuesPerNode: nv, returnBounds: true }),
                timestampsToReturn: TimestampsToReturn.Source,
                nodesToRead: [{ nodeId: NODE, continuationPoint: cp }],
            }));
        }
        // Forward: the value before t0 is v7's initial 7.5 (the
        // historian took it at its start); nothing lies after t1.
        let r = await rawBounds(t0, t1, 0, null);
        let dvs = r.results[0].historyData.dataValues;
        assert.equal(dvs.length, N + 2);
        assert.equal(dvs[0].value.value, 7.5);
        assert.ok(dvs[0].sourceTimestamp.getTime() < t0.getTime());
        assert.equal(dvs[1].value.value, written[0]);
        assert.equal(dvs[N + 1].statusCode.value,
            StatusCodes.BadBoundNotFound.value, dvs[N + 1].statusCode.toString());
        assert.equal(dvs[N + 1].sourceTimestamp.getTime(), t1.getTime());
        // Backward: mirrored.
        r = await rawBounds(t1, t0, 0, null);
        dvs = r.results[0].historyData.dataValues;
        assert.equal(dvs.length, N + 2);
        assert.equal(dvs[0].statusCode.value,
            StatusCodes.BadBoundNotFound.value);
        assert.equal(dvs[1].value.value, written[N - 1]);
        assert.equal(dvs[N + 1].value.value, 7.5);
        // Paged, 7 a page, and 3 (51 values fill 17 pages: the missing
        // end bound comes on a page of its own): the same 52 values.
        for (const nv of [7, 3]) {
            const got = [];
            let cp = null;
            do {
                r = await rawBounds(t0, t1, nv, cp);
                const page = r.results[0].historyData.dataValues || [];
                assert.ok(page.length <= nv);
                got.push(...page);
                cp = r.results[0].continuationPoint
                    && r.results[0].continuationPoint.length
                    ? r.results[0].continuationPoint : null;
            } while (cp);
            assert.equal(got.length, N + 2, `${nv} a page`);
            assert.equal(got[0].value.value, 7.5);
            for (let i = 0; i < N; i++) {
                assert.equal(got[i + 1].value.value, written[i]);
            }
            assert.equal(got[N + 1].statusCode.value,
                StatusCodes.BadBoundNotFound.value);
        }
    });

    it("a released continuation point is invalid", async () => {
        const a = await raw([NODE], t0, t1, 5);
        const cp = a.results[0].continuationPoint;
        assert.ok(cp && cp.length > 0, "a continuation point");
        const rel = await raw([{ nodeId: NODE, continuationPoint: cp }],
            t0, t1, 5, TimestampsToReturn.Source, true);
        assert.equal(rel.results[0].statusCode.value, StatusCodes.Good.value);
        const b = await raw([{ nodeId: NODE, continuationPoint: cp }],
            t0, t1, 5);
        assert.equal(b.results[0].statusCode.value,
            StatusCodes.BadContinuationPointInvalid.value,
            b.results[0].statusCode.toString());
        const forged = await raw([{ nodeId: NODE,
            continuationPoint: Buffer.alloc(12, 7) }], t0, t1, 5);
        assert.equal(forged.results[0].statusCode.value,
            StatusCodes.BadContinuationPointInvalid.value);
    });

    it("TimestampsToReturn Server: server timestamps only", async () => {
        const r = await raw([NODE], t0, t1, 3, TimestampsToReturn.Server);
        const dvs = r.results[0].historyData.dataValues;
        assert.equal(dvs.length, 3);
        for (const dv of dvs) {
            assert.ok(dv.serverTimestamp, "a server timestamp");
            assert.equal(dv.sourceTimestamp, null, "no source timestamp");
        }
        await raw([{ nodeId: NODE,
            continuationPoint: r.results[0].continuationPoint }],
        t0, t1, 3, TimestampsToReturn.Server, true);
    });

    it("ReadAtTime: between two values, and before all of them",
        async () => {
            const all = await raw([NODE], t0, t1, 0);
            const dvs = all.results[0].historyData.dataValues;
            const a = dvs[10].sourceTimestamp;
            const b = dvs[11].sourceTimestamp;
            // A JS Date has whole milliseconds: a millisecond after value
            // 10's (truncated) time is after it and before value 11's,
            // written 3 ms or more later.
            const mid = new Date(a.getTime() + 1);
            assert.ok(b.getTime() >= mid.getTime() + 1);
            const r = await session.historyRead(new HistoryReadRequest({
                historyReadDetails: new ReadAtTimeDetails({
                    reqTimes: [mid, new Date(t0.getTime() - 86400000)],
                    useSimpleBounds: true }),
                timestampsToReturn: TimestampsToReturn.Source,
                nodesToRead: [{ nodeId: NODE }],
            }));
            const at = r.results[0].historyData.dataValues;
            assert.equal(at.length, 2);
            assert.equal(at[0].statusCode.value & 0xC0000000, 0,
                `Good: ${at[0].statusCode}`);
            assert.equal(at[0].statusCode.value & 3, 2, "Interpolated");
            assert.ok(at[0].value.value >= written[10]
                && at[0].value.value <= written[11],
                `${at[0].value.value} between ${written[10]} and `
                + `${written[11]}`);
            assert.equal(at[0].sourceTimestamp.getTime(), mid.getTime());
            assert.equal(at[1].statusCode.value, StatusCodes.BadNoData.value,
                at[1].statusCode.toString());
        });

    it("ReadProcessed: Count, Average and Maximum over the written values "
        + "in one interval; an unknown aggregate", async () => {
        const r = await session.historyRead(new HistoryReadRequest({
            historyReadDetails: new ReadProcessedDetails({
                startTime: t0, endTime: t1,
                processingInterval: t1.getTime() - t0.getTime(),
                aggregateType: ["i=2352", "i=2342", "i=2347", "i=2253"],
            }),
            timestampsToReturn: TimestampsToReturn.Source,
            nodesToRead: [{ nodeId: NODE }, { nodeId: NODE },
                { nodeId: NODE }, { nodeId: NODE }],
        }));
        const one = (k) => {
            assert.ok(r.results[k].statusCode.isGood(),
                r.results[k].statusCode.toString());
            const dvs = r.results[k].historyData.dataValues;
            assert.equal(dvs.length, 1, "one interval");
            return dvs[0];
        };
        const count = one(0);
        assert.equal(count.value.value, N, `Count ${count.value.value}`);
        assert.equal(count.value.dataType, DataType.Int32);
        const mean = written.reduce((a, b) => a + b, 0) / N;
        assert.ok(Math.abs(one(1).value.value - mean) < 1e-9,
            `Average ${one(1).value.value}, want ${mean}`);
        assert.equal(one(2).value.value, Math.max(...written));
        assert.equal(r.results[3].statusCode.value,
            StatusCodes.BadAggregateNotSupported.value,
            r.results[3].statusCode.toString());
    });

    it("ReadProcessed past history.max_return_values intervals: pages "
        + "through continuation points, every interval once; a released "
        + "point", async () => {
        const D = t1.getTime() - t0.getTime();
        const ticks = Math.floor(D * 0.4);          // 25,000 intervals
        const all = Math.ceil(D * 10000 / ticks);
        const proc = (cp, release, back) => session.historyRead(
            new HistoryReadRequest({
                historyReadDetails: new ReadProcessedDetails({
                    startTime: back ? t1 : t0, endTime: back ? t0 : t1,
                    processingInterval: ticks / 10000,
                    aggregateType: ["i=2352"],
                }),
                timestampsToReturn: TimestampsToReturn.Source,
                releaseContinuationPoints: !!release,
                nodesToRead: [{ nodeId: NODE, continuationPoint: cp }],
            }));
        for (const back of [false, true]) {
            let cp = null;
            let pages = 0;
            let n = 0;
            let count = 0;
            let last = back ? Infinity : 0;
            do {
                const r = await proc(cp, false, back);
                const res = r.results[0];
                assert.ok(res.statusCode.isGood(), res.statusCode.toString());
                const dvs = res.historyData.dataValues;
                assert.ok(dvs.length <= 10000, `${dvs.length} in a page`);
                for (const dv of dvs) {
                    const t = dv.sourceTimestamp.getTime();
                    assert.ok(back ? t <= last : t >= last,
                        "intervals in order");
                    last = t;
                    count += dv.value.value;
                }
                n += dvs.length;
                cp = res.continuationPoint && res.continuationPoint.length
                    ? res.continuationPoint : null;
                pages++;
                assert.ok(pages < 10, "paging ends");
            } while (cp);
            assert.equal(n, all, "every interval");
            assert.equal(pages, Math.ceil(all / 10000));
            assert.equal(count, N, `each value counted once (back ${back})`);
        }
        // A released point, then used; a raw read refuses a processed one.
        const first = (await proc(null)).results[0].continuationPoint;
        assert.ok(first && first.length);
        const rel = await proc(first, true);
        assert.ok(rel.results[0].statusCode.isGood());
        const again = await proc(first);
        assert.equal(again.results[0].statusCode.value,
            StatusCodes.BadContinuationPointInvalid.value);
        const other = (await proc(null)).results[0].continuationPoint;
        const byRaw = await raw([{ nodeId: NODE, continuationPoint: other }],
            t0, t1, 7);
        assert.equal(byRaw.results[0].statusCode.value,
            StatusCodes.BadContinuationPointInvalid.value);
        await proc(other, true);
    });

    it("an IndexRange cuts each value; a scalar's is "
        + "BadIndexRangeNoData; a bad one BadIndexRangeInvalid", async () => {
        const arr = "ns=1;s=Demo.Static.Array.UInt32";
        const now = await session.read({ nodeId: arr,
            attributeId: AttributeIds.Value });
        const whole = Array.from(now.value.value);
        assert.ok(whole.length >= 2, "an array of 2 or more");
        const r = await raw([
            { nodeId: arr, indexRange: "1" },
            { nodeId: NODE, indexRange: "0:1" },
            { nodeId: NODE, indexRange: "x" },
        ], new Date(0), t1, 5);
        const a = r.results[0].historyData.dataValues;
        assert.ok(a.length >= 1, "the array's initial value is kept");
        assert.deepEqual(Array.from(a[0].value.value), [whole[1]]);
        const sc = r.results[1].historyData.dataValues;
        assert.ok(sc.length >= 1);
        assert.equal(sc[0].statusCode.value,
            StatusCodes.BadIndexRangeNoData.value, sc[0].statusCode.toString());
        assert.equal(r.results[2].statusCode.value,
            StatusCodes.BadIndexRangeInvalid.value);
        for (const res of r.results) {
            if (res.continuationPoint && res.continuationPoint.length) {
                await raw([{ nodeId: NODE,
                    continuationPoint: res.continuationPoint }],
                new Date(0), t1, 5, TimestampsToReturn.Source, true);
            }
        }
    });

    it("ReadAtTime with an IndexRange: an array's value cut after its "
        + "time (stepped); a scalar's BadIndexRangeNoData; a bad one "
        + "BadIndexRangeInvalid", async () => {
        const arr = "ns=1;s=Demo.Static.Array.UInt32";
        const now = await session.read({ nodeId: arr,
            attributeId: AttributeIds.Value });
        const whole = Array.from(now.value.value);
        const first = (await raw([arr], new Date(0), t1, 1))
            .results[0];
        const at = first.historyData.dataValues[0].sourceTimestamp;
        if (first.continuationPoint && first.continuationPoint.length) {
            await raw([{ nodeId: arr,
                continuationPoint: first.continuationPoint }],
            new Date(0), t1, 1, TimestampsToReturn.Source, true);
        }
        const all = await raw([NODE], t0, t1, 0);
        const dvs = all.results[0].historyData.dataValues;
        const mid = new Date(dvs[10].sourceTimestamp.getTime() + 1);
        const atTime = (nodes, times) => session.historyRead(
            new HistoryReadRequest({
                historyReadDetails: new ReadAtTimeDetails({
                    reqTimes: times, useSimpleBounds: true }),
                timestampsToReturn: TimestampsToReturn.Source,
                nodesToRead: nodes,
            }));
        const r = await atTime([
            { nodeId: arr, indexRange: "1" },
            { nodeId: NODE, indexRange: "0:1" },
            { nodeId: NODE, indexRange: "x" },
        ], [new Date(at.getTime() + 1), new Date(at.getTime() + 1000)]);
        assert.ok(r.results[0].statusCode.isGood(),
            r.results[0].statusCode.toString());
        const a = r.results[0].historyData.dataValues;
        assert.equal(a.length, 2);
        for (const dv of a) {
            assert.ok(dv.value.value, `${dv}`);
            assert.deepEqual(Array.from(dv.value.value), [whole[1]]);
        }
        const r2 = await atTime([{ nodeId: NODE, indexRange: "0:1" }],
            [mid]);
        const sc = r2.results[0].historyData.dataValues;
        assert.equal(sc.length, 1);
        assert.equal(sc[0].statusCode.value,
            StatusCodes.BadIndexRangeNoData.value, sc[0].statusCode.toString());
        assert.equal(r.results[2].statusCode.value,
            StatusCodes.BadIndexRangeInvalid.value,
            r.results[2].statusCode.toString());
    });

    it("bad input gets its status", async () => {
        await assert.rejects(raw([NODE], null, null, 0),
            /BadHistoryOperationInvalid/);
        await assert.rejects(raw([NODE], t0, t1, 0,
            TimestampsToReturn.Neither), /BadTimestampsToReturnInvalid/);
        const r = await raw(["ns=1;s=v8", "ns=1;s=nosuch"], t0, t1, 0);
        assert.equal(r.results[0].statusCode.value,
            StatusCodes.BadHistoryOperationUnsupported.value,
            r.results[0].statusCode.toString());
        assert.equal(r.results[1].statusCode.value,
            StatusCodes.BadNodeIdUnknown.value);
    });
});
