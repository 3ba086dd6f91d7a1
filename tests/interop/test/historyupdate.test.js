// tests/interop/test/historyupdate.test.js: HistoryUpdate of uabroker
// (issue 18; worker/svc_histupd.c, through the broker to the historian)
// with node-opcua 2.182.0 as the client.
//
// run.sh historizes ns=1;s=v6 (history.nodes) and makes the user
// "interop" (role operator).  As that user, on a history of its own far
// in the past (nothing else writes there):
//   - UpdateDataDetails Insert of three values: GoodEntryInserted each;
//     the same times again: BadEntryExists; read back raw, values,
//     status codes and times as inserted;
//   - Replace of one that is there (GoodEntryReplaced) and one that is not
//     (BadNoEntryExists); Update of one that is there (GoodEntryReplaced)
//     and one that is not (GoodEntryInserted);
//   - isReadModified: the replaced value's old value with updateType
//     Replace and the user's name ("interop"), the updated one's with
//     Update, the inserted ones with Insert (HistoryModifiedData);
//   - annotations through the variable's Annotations Property (Browse
//     finds it): UpdateStructureDataDetails Insert (GoodEntryInserted),
//     again (BadEntryExists), a raw read of the property gives the
//     Annotation back; a Double instead of an Annotation BadTypeMismatch;
//   - ReadAnnotationDataDetails (Part 11 §6.5.6) at the annotated time and
//     one without: the Annotation, in the request's order; GoodNoData at
//     a time without any; BadHistoryOperationUnsupported on a variable
//     that is not historized (ns=1;s=v8);
//   - DeleteAtTimeDetails: one there (Good), one not (BadNoEntryExists);
//   - DeleteRawModifiedDetails over the rest: nothing left in the range;
//   - Part 13's Historian1 raw table inserted (another day), the values
//     before it and the live values after it deleted: Average (5 s) and Maximum (16 s) read back
//     as Part 13's tables give them (tests/integ/integ_hist_p13.c does
//     every table);
//   - 100 details (history.max_update_nodes) answered, 101
//     BadTooManyOperations;
//   - a node that is not historized (BadHistoryOperationUnsupported), an
//     unknown one (BadNodeIdUnknown);
//   - an anonymous session: BadUserAccessDenied, nothing changed;
//   - AccessLevel HistoryRead and HistoryWrite; UserAccessLevel the same
//     for the operator, HistoryRead only for an anonymous session;
//   - HistoryServerCapabilities says Insert/Replace/Update/DeleteRaw,
//     DeleteAtTime and InsertAnnotation are supported, OperationLimits
//     MaxNodesPerHistoryUpdateData history.max_update_nodes (100).
//
// Run by tests/interop/run.sh (UA_INTEROP_URL, UA_INTEROP_PASSWORD).
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
    DataValue,
    Variant,
    AttributeIds,
    TimestampsToReturn,
    UserTokenType,
    HistoryReadRequest,
    HistoryUpdateRequest,
    ReadRawModifiedDetails,
    ReadProcessedDetails,
} = require("node-opcua");
// node-opcua's own dependency (pinned by package-lock.json): the
// HistoryUpdateDetails, which node-opcua does not re-export.
const {
    UpdateDataDetails,
    UpdateStructureDataDetails,
    DeleteAtTimeDetails,
    DeleteRawModifiedDetails,
    Annotation,
    ReadAnnotationDataDetails,
} = require("node-opcua-types");

// PerformUpdateType (Part 11 §6.8.3).
const PerformUpdateType = { Insert: 1, Replace: 2, Update: 3 };

const URL = process.env.UA_INTEROP_URL;
const PASSWORD = process.env.UA_INTEROP_PASSWORD;
const NODE = "ns=1;s=v6";
const skip = !URL || !PASSWORD ? "needs run.sh (UA_INTEROP_PASSWORD)" : false;

const ownPki = !process.env.UA_INTEROP_PKI;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));

// A day in 2001: no live value of v6 is that old.
const T0 = Date.UTC(2001, 0, 1, 0, 0, 0);
const at = (s) => new Date(T0 + s * 1000);

function transact(session, req) {
    return new Promise((resolve, reject) => {
        session.performMessageTransaction(req, (err, resp) =>
            (err ? reject(err) : resolve(resp)));
    });
}

function dv(v, s, status) {
    return new DataValue({
        value: new Variant({ dataType: DataType.Double, value: v }),
        statusCode: status || StatusCodes.Good,
        sourceTimestamp: at(s),
    });
}

describe("HistoryUpdate of a historized variable (ns=1;s=v6)", { skip },
    () => {
        let certificateManager;
        let client;
        let session;
        let anonClient;
        let anon;

        function update(sess, details) {
            return transact(sess, new HistoryUpdateRequest({
                historyUpdateDetails: details }));
        }

        async function rawAll(sess) {
            const r = await sess.historyRead(new HistoryReadRequest({
                historyReadDetails: new ReadRawModifiedDetails({
                    isReadModified: false, startTime: at(0),
                    endTime: at(100), numValuesPerNode: 0,
                    returnBounds: false }),
                timestampsToReturn: TimestampsToReturn.Source,
                nodesToRead: [{ nodeId: NODE }],
            }));
            // Good, or GoodNoData when nothing is there.
            assert.equal(r.results[0].statusCode.value & 0xC0000000, 0,
                r.results[0].statusCode.toString());
            return (r.results[0].historyData
                && r.results[0].historyData.dataValues) || [];
        }

        function codes(res) {
            return (res.operationResults || []).map((s) => s.value);
        }

        before(async () => {
            certificateManager = new OPCUACertificateManager({
                rootFolder: pkiRoot,
                automaticallyAcceptUnknownCertificate: true,
            });
            await certificateManager.initialize();
            const mk = () => OPCUAClient.create({
                applicationName: "uabroker-interop-historyupdate",
                clientCertificateManager: certificateManager,
                securityMode: MessageSecurityMode.None,
                securityPolicy: SecurityPolicy.None,
                endpointMustExist: false,
                keepSessionAlive: false,
                connectionStrategy: { maxRetry: 0, initialDelay: 100,
                    maxDelay: 200 },
            });
            client = mk();
            await client.connect(URL);
            session = await client.createSession({
                type: UserTokenType.UserName,
                userName: "interop",
                password: PASSWORD,
            });
            anonClient = mk();
            await anonClient.connect(URL);
            anon = await anonClient.createSession();
        });
        after(async () => {
            for (const s of [session, anon]) {
                if (s) {
                    await s.close();
                }
            }
            for (const c of [client, anonClient]) {
                if (c) {
                    await c.disconnect();
                }
            }
            if (certificateManager) {
                await certificateManager.dispose();
            }
            if (ownPki) {
                fs.rmSync(pkiRoot, { recursive: true, force: true });
            }
        });

        it("HistoryServerCapabilities: the updates are supported",
            async () => {
                // InsertData, ReplaceData, UpdateData, DeleteRaw,
                // DeleteAtTime, InsertAnnotation (Part 11 §5.4.2).
                const ids = ["i=11196", "i=11197", "i=11198", "i=11199",
                    "i=11200", "i=11275"];
                const dvs = await session.read(ids.map((nodeId) =>
                    ({ nodeId, attributeId: AttributeIds.Value })));
                dvs.forEach((d, k) => assert.equal(d.value.value, true,
                    `${ids[k]}: ${d.value.value}`));
                // OperationLimits MaxNodesPerHistoryUpdateData.
                const lim = await session.read({ nodeId: "i=12167",
                    attributeId: AttributeIds.Value });
                assert.equal(lim.value.value, 100);
            });

        it("UserAccessLevel: HistoryWrite for the operator only",
            async () => {
                const read = (s) => s.read({ nodeId: NODE,
                    attributeId: AttributeIds.UserAccessLevel });
                // run.sh lets anonymous users write (anonymous_write):
                // still no HistoryWrite for them.
                assert.equal((await read(session)).value.value & 0x0C, 0x0C);
                assert.equal((await read(anon)).value.value & 0x0C, 0x04);
                const al = await session.read({ nodeId: NODE,
                    attributeId: AttributeIds.AccessLevel });
                assert.equal(al.value.value & 0x0C, 0x0C);
            });

        it("an anonymous session may not update history", async () => {
            const r = await update(anon, [new UpdateDataDetails({
                nodeId: NODE,
                performInsertReplace: PerformUpdateType.Insert,
                updateValues: [dv(1, 1)],
            })]);
            assert.equal(r.results[0].statusCode.value,
                StatusCodes.BadUserAccessDenied.value,
                r.results[0].statusCode.toString());
            assert.equal((await rawAll(session)).length, 0);
        });

        it("Insert, then the same times again", async () => {
            const vals = [dv(10, 1), dv(20, 2,
                StatusCodes.UncertainLastUsableValue), dv(30, 3)];
            let r = await update(session, [new UpdateDataDetails({
                nodeId: NODE,
                performInsertReplace: PerformUpdateType.Insert,
                updateValues: vals,
            })]);
            assert.ok(r.results[0].statusCode.isGood(),
                r.results[0].statusCode.toString());
            assert.deepEqual(codes(r.results[0]),
                Array(3).fill(StatusCodes.GoodEntryInserted.value));
            r = await update(session, [new UpdateDataDetails({
                nodeId: NODE,
                performInsertReplace: PerformUpdateType.Insert,
                updateValues: [dv(11, 1), dv(40, 4)],
            })]);
            assert.deepEqual(codes(r.results[0]),
                [StatusCodes.BadEntryExists.value,
                    StatusCodes.GoodEntryInserted.value]);
            const got = await rawAll(session);
            assert.deepEqual(got.map((d) => d.value.value), [10, 20, 30, 40]);
            assert.deepEqual(got.map((d) => d.sourceTimestamp.getTime()),
                [at(1), at(2), at(3), at(4)].map((d) => d.getTime()));
            assert.equal(got[1].statusCode.value,
                StatusCodes.UncertainLastUsableValue.value);
        });

        it("Replace and Update", async () => {
            const r = await update(session, [
                new UpdateDataDetails({
                    nodeId: NODE,
                    performInsertReplace: PerformUpdateType.Replace,
                    updateValues: [dv(21, 2), dv(50, 5)],
                }),
                new UpdateDataDetails({
                    nodeId: NODE,
                    performInsertReplace: PerformUpdateType.Update,
                    updateValues: [dv(31, 3), dv(60, 6)],
                }),
            ]);
            assert.deepEqual(codes(r.results[0]),
                [StatusCodes.GoodEntryReplaced.value,
                    StatusCodes.BadNoEntryExists.value]);
            assert.deepEqual(codes(r.results[1]),
                [StatusCodes.GoodEntryReplaced.value,
                    StatusCodes.GoodEntryInserted.value]);
            const got = await rawAll(session);
            assert.deepEqual(got.map((d) => d.value.value),
                [10, 21, 31, 40, 60]);
            assert.ok(got[1].statusCode.isGood(), "replaced with Good");
        });

        it("isReadModified: the old values with their ModificationInfo",
            async () => {
                const r = await session.historyRead(new HistoryReadRequest({
                    historyReadDetails: new ReadRawModifiedDetails({
                        isReadModified: true, startTime: at(0),
                        endTime: at(100), numValuesPerNode: 0,
                        returnBounds: false }),
                    timestampsToReturn: TimestampsToReturn.Source,
                    nodesToRead: [{ nodeId: NODE }],
                }));
                const res = r.results[0];
                assert.ok(res.statusCode.isGood(), res.statusCode.toString());
                const hm = res.historyData;
                assert.equal(hm.modificationInfos.length,
                    hm.dataValues.length);
                const rows = hm.dataValues.map((d, k) => [
                    d.sourceTimestamp.getTime() - T0,
                    d.value.value,
                    hm.modificationInfos[k].updateType,
                    hm.modificationInfos[k].userName]);
                // HistoryUpdateType: Insert 1, Replace 2, Update 3.
                assert.deepEqual(rows, [
                    [1000, 10, 1, "interop"], [2000, 20, 1, "interop"],
                    [2000, 20, 2, "interop"], [3000, 30, 1, "interop"],
                    [3000, 30, 3, "interop"], [4000, 40, 1, "interop"],
                    [6000, 60, 1, "interop"]]);
                const when = hm.modificationInfos[2].modificationTime;
                assert.ok(Math.abs(when.getTime() - Date.now()) < 600000,
                    `modificationTime ${when.toISOString()}`);
            });

        it("annotations through the Annotations Property", async () => {
            const br = await session.browse({ nodeId: NODE,
                referenceTypeId: "i=46", browseDirection: 0,
                includeSubtypes: true, resultMask: 63 });
            const prop = br.references.find(
                (x) => x.browseName.name === "Annotations");
            assert.ok(prop, "v6 has an Annotations Property");
            const anno = (msg, s, value) => new DataValue({
                value: value || new Variant({
                    dataType: DataType.ExtensionObject,
                    value: new Annotation({ message: msg,
                        userName: "interop",
                        annotationTime: new Date() }) }),
                sourceTimestamp: at(s),
            });
            const put = (values) => update(session, [
                new UpdateStructureDataDetails({ nodeId: prop.nodeId,
                    performInsertReplace: PerformUpdateType.Insert,
                    updateValues: values })]);
            let r = await put([anno("checked by the lab", 1)]);
            assert.deepEqual(codes(r.results[0]),
                [StatusCodes.GoodEntryInserted.value]);
            r = await put([anno("again", 1), anno("no annotation", 2,
                new Variant({ dataType: DataType.Double, value: 1 }))]);
            assert.deepEqual(codes(r.results[0]),
                [StatusCodes.BadEntryExists.value,
                    StatusCodes.BadTypeMismatch.value]);
            const h = await session.historyRead(new HistoryReadRequest({
                historyReadDetails: new ReadRawModifiedDetails({
                    isReadModified: false, startTime: at(0),
                    endTime: at(100), numValuesPerNode: 0,
                    returnBounds: false }),
                timestampsToReturn: TimestampsToReturn.Source,
                nodesToRead: [{ nodeId: prop.nodeId }],
            }));
            assert.ok(h.results[0].statusCode.isGood(),
                h.results[0].statusCode.toString());
            const got = h.results[0].historyData.dataValues;
            assert.equal(got.length, 1);
            assert.equal(got[0].sourceTimestamp.getTime(), at(1).getTime());
            assert.equal(got[0].value.value.message, "checked by the lab");
            assert.equal(got[0].value.value.userName, "interop");
        });

        it("ReadAnnotationDataDetails: the annotations at given times",
            async () => {
                const read = (nodeId, times) => session.historyRead(
                    new HistoryReadRequest({
                        historyReadDetails: new ReadAnnotationDataDetails({
                            reqTimes: times }),
                        timestampsToReturn: TimestampsToReturn.Source,
                        nodesToRead: [{ nodeId }],
                    }));
                let h = await read(NODE, [at(2), at(1)]);
                assert.ok(h.results[0].statusCode.isGood(),
                    h.results[0].statusCode.toString());
                const got = h.results[0].historyData.dataValues;
                assert.equal(got.length, 1);
                assert.equal(got[0].sourceTimestamp.getTime(),
                    at(1).getTime());
                assert.equal(got[0].value.value.message,
                    "checked by the lab");
                assert.equal(got[0].value.value.userName, "interop");
                h = await read(NODE, [at(2)]);
                assert.equal(h.results[0].statusCode.value,
                    StatusCodes.GoodNoData.value,
                    h.results[0].statusCode.toString());
                h = await read("ns=1;s=v8", [at(1)]);
                assert.equal(h.results[0].statusCode.value,
                    StatusCodes.BadHistoryOperationUnsupported.value,
                    h.results[0].statusCode.toString());
            });

        it("DeleteAtTime, then DeleteRawModified", async () => {
            let r = await update(session, [new DeleteAtTimeDetails({
                nodeId: NODE, reqTimes: [at(4), at(5)] })]);
            assert.deepEqual(codes(r.results[0]),
                [StatusCodes.Good.value, StatusCodes.BadNoEntryExists.value]);
            assert.deepEqual((await rawAll(session)).map(
                (d) => d.value.value), [10, 21, 31, 60]);
            r = await update(session, [new DeleteRawModifiedDetails({
                nodeId: NODE, isDeleteModified: false,
                startTime: at(2), endTime: at(6) })]);
            assert.ok(r.results[0].statusCode.isGood(),
                r.results[0].statusCode.toString());
            assert.deepEqual((await rawAll(session)).map(
                (d) => d.value.value), [10, 60]);
        });

        it("history.max_update_nodes (100) details taken, one more "
            + "BadTooManyOperations", async () => {
            const one = () => new DeleteAtTimeDetails({ nodeId: NODE,
                reqTimes: [at(99)] });
            const r = await update(session, Array.from({ length: 100 }, one));
            assert.equal(r.results.length, 100);
            for (const x of r.results) {
                assert.deepEqual(codes(x), [StatusCodes.BadNoEntryExists.value]);
            }
            await assert.rejects(update(session,
                Array.from({ length: 101 }, one)), /BadTooManyOperations/);
        });

        it("Part 13's Historian1 inserted, Average and Maximum read back "
            + "as its tables say", async () => {
            // tests/vectors/aggregates_gen.h (Part 13 Annex A): the raw
            // table, seconds after 12:00:00, and two result tables.
            const B = Date.UTC(2002, 0, 1, 12, 0, 0);
            const t = (ms) => new Date(B + ms);
            const G = StatusCodes.Good;
            const raw = [[0, null, StatusCodes.BadNoData], [10, 10, G],
                [20, 20, G], [30, 30, G], [40, null, StatusCodes.Bad],
                [50, 50, G], [60, 60, G], [70, 70, StatusCodes.Uncertain],
                [80, 80, G], [90, 90, G]];
            let r = await update(session, [new UpdateDataDetails({
                nodeId: NODE,
                performInsertReplace: PerformUpdateType.Insert,
                updateValues: raw.map(([sec, v, st]) => new DataValue({
                    value: v === null ? undefined
                        : new Variant({ dataType: DataType.Double,
                            value: v }),
                    statusCode: st,
                    sourceTimestamp: t(sec * 1000),
                })),
            })]);
            assert.deepEqual(codes(r.results[0]),
                Array(raw.length).fill(StatusCodes.GoodEntryInserted.value));
            // Nothing before the table (the tests above left 2001's) nor
            // after it (the live values): the tables assume none.
            r = await update(session, [new DeleteRawModifiedDetails({
                nodeId: NODE, isDeleteModified: false,
                startTime: t(100000), endTime: new Date(Date.now()
                    + 86400000) }), new DeleteRawModifiedDetails({
                nodeId: NODE, isDeleteModified: false,
                startTime: new Date(Date.UTC(2000, 0, 1)), endTime: t(0) })]);
            for (const x of r.results) {
                assert.ok((x.statusCode.value & 0xC0000000) === 0,
                    x.statusCode.toString());
            }
            const proc = async (agg, ms) => {
                const res = await session.historyRead(new HistoryReadRequest({
                    historyReadDetails: new ReadProcessedDetails({
                        startTime: t(0), endTime: t(100000),
                        processingInterval: ms, aggregateType: [agg],
                        aggregateConfiguration: {
                            useServerCapabilitiesDefaults: false,
                            treatUncertainAsBad: false,
                            percentDataBad: 100, percentDataGood: 100,
                            useSlopedExtrapolation: false },
                    }),
                    timestampsToReturn: TimestampsToReturn.Source,
                    nodesToRead: [{ nodeId: NODE }],
                }));
                assert.ok(res.results[0].statusCode.isGood(),
                    res.results[0].statusCode.toString());
                return res.results[0].historyData.dataValues.map((d) => [
                    (d.sourceTimestamp.getTime() - B) / 1000,
                    d.value && d.value.dataType !== DataType.Null
                        ? d.value.value : null,
                    d.statusCode.value >>> 0]);
            };
            const N = 0x809B0000;
            const avg = [[0, null, N], [5, null, N], [10, 10, 0x401],
                [15, null, N], [20, 20, 0x401], [25, null, N],
                [30, 30, 0x401], [35, null, N], [40, null, N],
                [45, null, N], [50, 50, 0x401], [55, null, N],
                [60, 60, 0x401], [65, null, N], [70, null, N],
                [75, null, N], [80, 80, 0x401], [85, null, N],
                [90, 90, 0x401], [95, null, N]];
            assert.deepEqual(await proc("i=2342", 5000), avg);
            const max = [[0, 10, 0x405], [16, 30, 0x401], [32, null, N],
                [48, 60, 0x401], [64, null, N], [80, 90, 0x405],
                [96, null, N]];
            assert.deepEqual(await proc("i=2347", 16000), max);
        });

        it("bad nodes get their status", async () => {
            const r = await update(session, [
                new DeleteAtTimeDetails({ nodeId: "ns=1;s=v8",
                    reqTimes: [at(1)] }),
                new DeleteAtTimeDetails({ nodeId: "ns=1;s=nosuch",
                    reqTimes: [at(1)] }),
            ]);
            assert.equal(r.results[0].statusCode.value,
                StatusCodes.BadHistoryOperationUnsupported.value,
                r.results[0].statusCode.toString());
            assert.equal(r.results[1].statusCode.value,
                StatusCodes.BadNodeIdUnknown.value);
        });
    });
