// tests/interop/test/histconf.test.js: how uabroker describes its history
// (issue 18; Part 11 §5.2 and §5.4.2, Part 13 §4.2) as node-opcua 2.182.0
// browses it.
//
// run.sh historizes ns=1;s=v7 (history.nodes) and imports
// nodesets/historian.xml: Tank.Level (Historizing="true" with its own
// HasHistoricalConfiguration, Stepped) and Tank.Flow (Historizing="true"
// alone), both with AccessLevel 3 in the file.
//   - HistoryServerCapabilities/AggregateFunctions and
//     Server/ServerCapabilities/AggregateFunctions organize the 37
//     AggregateFunction objects of namespace 0 (AggregateFunctionType);
//   - v7 has one "HA Configuration" (HistoricalDataConfigurationType)
//     through HasHistoricalConfiguration with the [history] defaults:
//     Stepped false, the intervals and deviation 0, AbsoluteValue, and
//     its AggregateConfiguration (TreatUncertainAsBad true,
//     PercentDataBad/Good 100, no sloped extrapolation), also found by
//     TranslateBrowsePathsToNodeIds;
//   - Tank.Level keeps the file's configuration (one, Stepped true);
//     Tank.Flow gets the server's;
//   - both have Historizing, HistoryRead and HistoryWrite in AccessLevel;
//     UserAccessLevel HistoryRead for anonymous, HistoryWrite only for
//     the operator;
//   - the file's Stepped is used: two values inserted (HistoryUpdate, the
//     operator) into each, ReadAtTime halfway between them gives
//     Tank.Level the first value, Tank.Flow the line between them.
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
    BrowseDirection,
    TimestampsToReturn,
    UserTokenType,
    HistoryReadRequest,
    HistoryUpdateRequest,
    ReadAtTimeDetails,
    makeBrowsePath,
} = require("node-opcua");
const { UpdateDataDetails } = require("node-opcua-types");
const { sleep } = require("../lib/common.js");

const URL = process.env.UA_INTEROP_URL;
const PASSWORD = process.env.UA_INTEROP_PASSWORD;
const HIST_URI = "http://example.com/UA/Historian/";
const skip = !URL || !PASSWORD ? "needs run.sh (UA_INTEROP_PASSWORD)" : false;

const ownPki = !process.env.UA_INTEROP_PKI;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));

// An hour ago: inside the retention, before the nodes' start values.
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3600 * 1000;
const at = (s) => new Date(T0 + s * 1000);

function transact(session, req) {
    return new Promise((resolve, reject) => {
        session.performMessageTransaction(req, (err, resp) =>
            (err ? reject(err) : resolve(resp)));
    });
}

describe("the history's configuration in the address space", { skip }, () => {
    let certificateManager;
    let client;
    let session;
    let opClient;
    let op;
    let hns;

    async function refs(sess, nodeId, referenceTypeId) {
        const r = await sess.browse({
            nodeId,
            browseDirection: BrowseDirection.Forward,
            referenceTypeId,
            includeSubtypes: true,
            nodeClassMask: 0,
            resultMask: 63,
        });
        assert.equal(r.statusCode.value, StatusCodes.Good.value,
            `browse ${nodeId}`);
        return r.references || [];
    }

    async function value(nodeId) {
        const dv = await session.read({ nodeId,
            attributeId: AttributeIds.Value });
        assert.equal(dv.statusCode.value, StatusCodes.Good.value,
            `read ${nodeId}`);
        return dv.value;
    }

    // The properties of node by BrowseName: { name: Variant }.
    async function props(nodeId) {
        const out = {};
        for (const r of await refs(session, nodeId, "HasProperty")) {
            assert.equal(r.browseName.namespaceIndex, 0, r.browseName.name);
            out[r.browseName.name] = await value(r.nodeId);
        }
        return out;
    }

    // node's one HA Configuration and its AggregateConfiguration.
    async function config(nodeId) {
        const hc = await refs(session, nodeId, "i=56");
        assert.equal(hc.length, 1, `${nodeId}: one configuration`);
        assert.equal(hc[0].browseName.toString(), "HA Configuration");
        assert.equal(hc[0].typeDefinition.value, 2318);
        const comps = await refs(session, hc[0].nodeId, "HasComponent");
        const agg = comps.find((r) =>
            r.browseName.toString() === "AggregateConfiguration");
        assert.ok(agg, `${nodeId}: an AggregateConfiguration`);
        assert.equal(agg.typeDefinition.value, 11187);
        return { id: hc[0].nodeId.toString(),
            cfg: await props(hc[0].nodeId), agg: await props(agg.nodeId) };
    }

    before(async () => {
        certificateManager = new OPCUACertificateManager({
            rootFolder: pkiRoot,
            automaticallyAcceptUnknownCertificate: true,
        });
        await certificateManager.initialize();
        const mk = () => OPCUAClient.create({
            applicationName: "uabroker-interop-histconf",
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
        session = await client.createSession();
        opClient = mk();
        await opClient.connect(URL);
        op = await opClient.createSession({
            type: UserTokenType.UserName,
            userName: "interop",
            password: PASSWORD,
        });
        const uris = Array.from((await value("i=2255")).value);
        hns = uris.indexOf(HIST_URI);
        assert.ok(hns >= 2, `${HIST_URI} in ${JSON.stringify(uris)}`);
    });
    after(async () => {
        for (const s of [session, op]) {
            if (s) {
                await s.close();
            }
        }
        for (const c of [client, opClient]) {
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

    it("organizes the 37 aggregate functions where Part 11 and Part 5 list "
        + "them", async () => {
        for (const folder of ["i=11201", "i=2997"]) {
            const r = await refs(session, folder, "Organizes");
            assert.equal(r.length, 37, `${folder}: ${r.length} functions`);
            const names = new Set(r.map((x) => x.browseName.name));
            assert.equal(names.size, 37);
            for (const n of ["Interpolative", "Average", "TimeAverage2",
                "Count", "PercentGood", "WorstQuality2",
                "StandardDeviationSample", "DeltaBounds"]) {
                assert.ok(names.has(n), `${folder} has ${n}`);
            }
            for (const x of r) {
                assert.equal(x.nodeId.namespace, 0);
                assert.equal(x.typeDefinition.value, 2340,
                    `${x.browseName.name} is an AggregateFunctionType`);
            }
        }
    });

    it("gives ns=1;s=v7 the [history] defaults", async () => {
        const c = await config("ns=1;s=v7");
        assert.equal(c.cfg.Stepped.dataType, DataType.Boolean);
        assert.equal(c.cfg.Stepped.value, false);
        assert.equal(c.cfg.MinTimeInterval.value, 0);
        assert.equal(c.cfg.MaxTimeInterval.value, 0);
        assert.equal(c.cfg.ExceptionDeviation.value, 0);
        assert.equal(c.cfg.ExceptionDeviationFormat.value, 0);
        assert.equal(c.cfg.ServerTimestampSupported.value, true);
        assert.equal(c.agg.TreatUncertainAsBad.value, true);
        assert.equal(c.agg.PercentDataBad.dataType, DataType.Byte);
        assert.equal(c.agg.PercentDataBad.value, 100);
        assert.equal(c.agg.PercentDataGood.value, 100);
        assert.equal(c.agg.UseSlopedExtrapolation.value, false);
        const r = await session.translateBrowsePath(makeBrowsePath(
            "ns=1;s=v7", "/HA Configuration/AggregateConfiguration"
                + "/PercentDataGood"));
        assert.equal(r.statusCode.value, StatusCodes.Good.value);
        assert.equal(r.targets.length, 1);
    });

    it("keeps a NodeSet's configuration and gives one where it has none",
        async () => {
            const level = await config(`ns=${hns};s=Tank.Level`);
            assert.equal(level.id, `ns=${hns};s=Tank.Level.HA`);
            assert.equal(level.cfg.Stepped.value, true);
            assert.equal(level.agg.PercentDataGood.value, 70);
            const flow = await config(`ns=${hns};s=Tank.Flow`);
            assert.equal(flow.id.startsWith("ns=1;"), true, flow.id);
            assert.equal(flow.cfg.Stepped.value, false);
        });

    it("sets Historizing and the history bits of AccessLevel",
        async () => {
            for (const n of ["ns=1;s=v7", `ns=${hns};s=Tank.Level`,
                `ns=${hns};s=Tank.Flow`]) {
                const ids = [AttributeIds.Historizing,
                    AttributeIds.AccessLevel, AttributeIds.UserAccessLevel];
                const a = await session.read(ids.map((attributeId) =>
                    ({ nodeId: n, attributeId })));
                const o = await op.read(ids.map((attributeId) =>
                    ({ nodeId: n, attributeId })));
                assert.equal(a[0].value.value, true, `${n} Historizing`);
                assert.equal(a[1].value.value & 0x0C, 0x0C,
                    `${n} AccessLevel HistoryRead, HistoryWrite`);
                assert.equal(a[2].value.value & 0x0C, 0x04,
                    `${n} anonymous: HistoryRead only`);
                assert.equal(o[2].value.value & 0x0C, 0x0C,
                    `${n} operator: HistoryRead and HistoryWrite`);
            }
        });

    it("reads a Stepped node's history stepped", async () => {
        const level = `ns=${hns};s=Tank.Level`;
        const flow = `ns=${hns};s=Tank.Flow`;
        for (const n of [level, flow]) {
            const r = await transact(op, new HistoryUpdateRequest({
                historyUpdateDetails: [new UpdateDataDetails({
                    nodeId: n,
                    performInsertReplace: 1,        // Insert
                    updateValues: [0, 10].map((s, i) => new DataValue({
                        value: new Variant({ dataType: DataType.Double,
                            value: 10 * (i + 1) }),
                        statusCode: StatusCodes.Good,
                        sourceTimestamp: at(s),
                    })),
                })],
            }));
            assert.equal(r.results[0].statusCode.value,
                StatusCodes.Good.value, `${n}: insert`);
        }
        await sleep(300);
        const r = await session.historyRead(new HistoryReadRequest({
            historyReadDetails: new ReadAtTimeDetails({
                reqTimes: [at(5)], useSimpleBounds: true }),
            timestampsToReturn: TimestampsToReturn.Source,
            nodesToRead: [{ nodeId: level }, { nodeId: flow }],
        }));
        const got = r.results.map((x) => {
            assert.ok(x.statusCode.isGood(), x.statusCode.toString());
            return x.historyData.dataValues[0].value.value;
        });
        assert.deepEqual(got, [10, 15],
            "Tank.Level (Stepped) holds 10; Tank.Flow interpolates 15");
    });
});
