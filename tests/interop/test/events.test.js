// tests/interop/test/events.test.js: events of uabroker with node-opcua
// 2.182.0 as the client.
//
//   - two clients whose secure channels are on two different workers
//     (the top byte of a channel id is the worker slot + 1) monitor the
//     Server object (i=2253) with an EventFilter selecting EventId,
//     EventType, SourceNode, Message, Severity, Time and an extra field
//     1:Temperature; `uabroker feed 'event=...'` raises one event; both
//     receive every field as fed;
//   - refusals: an EventFilter on a Value (BadFilterNotAllowed), a
//     DataChangeFilter on EventNotifier (BadFilterNotAllowed), an event
//     item on a Variable (BadAttributeIdInvalid), a bad select clause
//     (Good item, BadTypeDefinitionInvalid in the EventFilterResult);
//   - a where clause: Severity >= 500 AND OfType AuditEventType (i=2052):
//     of four fed events only the two that match (one of a subtype) come;
//   - audit (run.sh sets events.audit): a client monitoring the Server
//     sees another client's CreateSession, ActivateSession and
//     CloseSession as AuditCreateSessionEventType (i=2071),
//     AuditActivateSessionEventType (i=2075) and AuditSessionEventType
//     (i=2069) events with their SessionId, Status and SourceName;
//   - ConditionRefresh (i=3875 on ConditionType i=2782) queues a
//     RefreshStartEvent (i=2787) and a RefreshEndEvent (i=2788); another
//     subscription id is BadSubscriptionIdInvalid.
//
// Run by tests/interop/run.sh (UA_INTEROP_URL, UA_INTEROP_PKI,
// UA_INTEROP_UABROKER, UA_INTEROP_RUNTIME).
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
    ClientSubscription,
    ClientMonitoredItem,
    MonitoringMode,
    constructEventFilter,
    CreateMonitoredItemsRequest,
    DataChangeFilter,
    DataChangeTrigger,
    DeadbandType,
    EventFilter,
    SimpleAttributeOperand,
    ContentFilter,
    ContentFilterElement,
    FilterOperator,
    LiteralOperand,
    ElementOperand,
    Variant,
    DataType,
    resolveNodeId,
} = require("node-opcua");

const URL = process.env.UA_INTEROP_URL;
if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}
const UABROKER = process.env.UA_INTEROP_UABROKER;
const RUNTIME = process.env.UA_INTEROP_RUNTIME;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));
let certificateManager;

const FIELDS = ["EventId", "EventType", "SourceNode", "Message", "Severity",
    "Time", "1:Temperature"];

function makeClient() {
    return OPCUAClient.create({
        applicationName: "uabroker-interop-events",
        clientCertificateManager: certificateManager,
        securityMode: MessageSecurityMode.None,
        securityPolicy: SecurityPolicy.None,
        endpointMustExist: false,
        keepSessionAlive: false,
        requestedSessionTimeout: 60000,
        connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    });
}

function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

function feed(...lines) {
    return execFileSync(UABROKER, ["--runtime-dir", RUNTIME, "feed",
        ...lines], { encoding: "utf8" });
}

function workerOf(client) {
    return client._secureChannel.channelId >>> 24;
}

function transact(session, request) {
    return new Promise((resolve, reject) => {
        session.performMessageTransaction(request, (err, response) =>
            err ? reject(err) : resolve(response));
    });
}

before(async () => {
    certificateManager = new OPCUACertificateManager({
        rootFolder: pkiRoot,
        automaticallyAcceptUnknownCertificate: true,
    });
    await certificateManager.initialize();
});

after(async () => {
    if (certificateManager) {
        await certificateManager.dispose();
    }
});

async function subscribe(session) {
    const subscription = ClientSubscription.create(session, {
        requestedPublishingInterval: 50,
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
    return subscription;
}

async function monitorServer(subscription, fields, where) {
    const got = [];
    const item = ClientMonitoredItem.create(subscription, {
        nodeId: "i=2253", attributeId: AttributeIds.EventNotifier,
    }, {
        samplingInterval: 0, queueSize: 100, discardOldest: true,
        filter: constructEventFilter(fields, where),
    }, TimestampsToReturn.Neither);
    item.on("changed", (ev) => got.push(ev));
    await new Promise((resolve, reject) => {
        item.on("initialized", resolve);
        item.on("err", (e) => reject(new Error(String(e))));
    });
    return { item, got };
}

async function until(pred, ms) {
    const end = Date.now() + ms;
    while (!pred() && Date.now() < end) {
        await sleep(20);
    }
}

describe("events", () => {
    const clients = [];
    const sessions = [];

    before(async () => {
        // Two clients on two different workers (connections are spread
        // by the kernel: try a few).
        for (let k = 0; k < 16 && clients.length < 2; k++) {
            const c = makeClient();
            await c.connect(URL);
            if (clients.length === 1 && workerOf(c) === workerOf(clients[0])) {
                await c.disconnect();
                continue;
            }
            clients.push(c);
        }
        assert.equal(clients.length, 2, "two clients on two workers");
        for (const c of clients) {
            sessions.push(await c.createSession());
        }
    });
    after(async () => {
        for (const s of sessions) await s.close();
        for (const c of clients) await c.disconnect();
    });

    it("a fed event reaches both workers' clients with its fields",
        async () => {
            const subs = [];
            const mons = [];
            for (const s of sessions) {
                const sub = await subscribe(s);
                subs.push(sub);
                mons.push(await monitorServer(sub, FIELDS));
            }
            const out = feed('event=ns=1;s=Demo;type=i=2041;severity=700;' +
                'message="Tank 4 high";time=2024-05-01T12:00:00Z;' +
                '1:Temperature=21.5');
            assert.match(out, /ok 1 failed 0/);
            await until(() => mons.every((m) => m.got.length >= 1), 5000);
            for (const m of mons) {
                assert.equal(m.got.length, 1, "one event");
                const f = m.got[0];
                assert.equal(f.length, FIELDS.length);
                // EventId: 16 bytes
                assert.ok(Buffer.isBuffer(f[0].value));
                assert.equal(f[0].value.length, 16);
                assert.equal(f[1].value.toString(), "ns=0;i=2041");
                assert.equal(f[2].value.toString(), "ns=1;s=Demo");
                assert.equal(f[3].value.text, "Tank 4 high");
                assert.equal(f[4].value, 700);
                assert.equal(f[5].value.toISOString(),
                    "2024-05-01T12:00:00.000Z");
                assert.equal(f[6].value, 21.5);
            }
            // The same event on both: the same EventId.
            assert.deepEqual(mons[0].got[0][0].value, mons[1].got[0][0].value);
            // A second event, without the extra field: null there.
            feed("event=i=2253;severity=100");
            await until(() => mons.every((m) => m.got.length >= 2), 5000);
            for (const m of mons) {
                const f = m.got[1];
                assert.equal(f[4].value, 100);
                assert.equal(f[2].value.toString(), "ns=0;i=2253");
                assert.equal(f[6].dataType, 0);     // null Variant
            }
            for (const sub of subs) await sub.terminate();
        });

    it("a where clause: Severity >= 500 AND OfType AuditEventType",
        async () => {
            const sub = await subscribe(sessions[0]);
            const where = new ContentFilter({ elements: [
                new ContentFilterElement({
                    filterOperator: FilterOperator.And,
                    filterOperands: [new ElementOperand({ index: 1 }),
                        new ElementOperand({ index: 2 })],
                }),
                new ContentFilterElement({
                    filterOperator: FilterOperator.GreaterThanOrEqual,
                    filterOperands: [
                        new SimpleAttributeOperand({
                            typeDefinitionId: "i=2041",
                            browsePath: [{ name: "Severity" }],
                            attributeId: AttributeIds.Value,
                        }),
                        new LiteralOperand({ value: new Variant({
                            dataType: DataType.UInt16, value: 500 }) }),
                    ],
                }),
                new ContentFilterElement({
                    filterOperator: FilterOperator.OfType,
                    filterOperands: [new LiteralOperand({ value: new Variant({
                        dataType: DataType.NodeId,
                        value: resolveNodeId("i=2052") }) })],
                }),
            ] });
            const m = await monitorServer(sub, ["Severity", "EventType"],
                where);
            const out = feed("event=i=2253;type=i=2052;severity=700",
                "event=i=2253;type=i=2052;severity=300",
                "event=i=2253;type=i=2041;severity=900",
                "event=i=2253;type=i=2071;severity=600");
            assert.match(out, /ok 4 failed 0/);
            await until(() => m.got.length >= 2, 5000);
            await sleep(300);
            assert.deepEqual(m.got.map((f) => f[0].value), [700, 600]);
            assert.equal(m.got[1][1].value.toString(), "ns=0;i=2071");
            await sub.terminate();
        });

    it("audit events of another client's session", async () => {
        const sub = await subscribe(sessions[0]);
        const m = await monitorServer(sub, ["EventType", "SourceName",
            "SessionId", "Status", "ServerId", "ClientUserId"]);
        const c = makeClient();
        await c.connect(URL);
        const s = await c.createSession();
        const sid = s.sessionId.toString();
        await s.close();
        await c.disconnect();
        await until(() => m.got.length >= 3, 5000);
        const types = m.got.map((f) => f[0].value.toString());
        assert.deepEqual(types, ["ns=0;i=2071", "ns=0;i=2075",
            "ns=0;i=2069"]);
        assert.deepEqual(m.got.map((f) => f[1].value), [
            "Session/CreateSession", "Session/ActivateSession",
            "Session/CloseSession"]);
        for (const f of m.got) {
            assert.equal(f[2].value.toString(), sid);
            assert.equal(f[3].value, true);
            assert.ok(f[4].value.length > 0, "ServerId");
        }
        await sub.terminate();
    });

    it("ConditionRefresh: RefreshStart, then RefreshEnd", async () => {
        const sub = await subscribe(sessions[0]);
        const m = await monitorServer(sub, ["EventType", "Severity"]);
        const r = await sessions[0].call({
            objectId: "i=2782", methodId: "i=3875",
            inputArguments: [{ dataType: DataType.UInt32,
                value: sub.subscriptionId }],
        });
        assert.equal(r.statusCode.value, StatusCodes.Good.value);
        await until(() => m.got.length >= 2, 5000);
        assert.deepEqual(m.got.map((f) => f[0].value.toString()),
            ["ns=0;i=2787", "ns=0;i=2788"]);
        const bad = await sessions[0].call({
            objectId: "i=2782", methodId: "i=3875",
            inputArguments: [{ dataType: DataType.UInt32,
                value: sub.subscriptionId + 1000 }],
        });
        assert.equal(bad.statusCode.value,
            StatusCodes.BadSubscriptionIdInvalid.value);
        await sub.terminate();
    });

    it("refuses the wrong filters and nodes", async () => {
        const sub = await subscribe(sessions[0]);
        const evf = constructEventFilter(["EventId"]);
        const dcf = new DataChangeFilter({
            trigger: DataChangeTrigger.StatusValue,
            deadbandType: DeadbandType.None, deadbandValue: 0,
        });
        const badSel = new EventFilter({
            selectClauses: [
                new SimpleAttributeOperand({
                    typeDefinitionId: "i=2041", browsePath: [{ name: "Severity" }],
                    attributeId: AttributeIds.Value,
                }),
                new SimpleAttributeOperand({
                    typeDefinitionId: "i=85", browsePath: [{ name: "Severity" }],
                    attributeId: AttributeIds.Value,
                }),
            ],
        });
        const mk = (nodeId, attributeId, filter, h) => ({
            itemToMonitor: { nodeId, attributeId },
            monitoringMode: MonitoringMode.Reporting,
            requestedParameters: {
                clientHandle: h, samplingInterval: 0, queueSize: 10,
                discardOldest: true, filter,
            },
        });
        const resp = await transact(sessions[0], new CreateMonitoredItemsRequest({
            subscriptionId: sub.subscriptionId,
            timestampsToReturn: TimestampsToReturn.Neither,
            itemsToCreate: [
                mk("ns=1;s=v0", AttributeIds.Value, evf, 1),
                mk("i=2253", AttributeIds.EventNotifier, dcf, 2),
                mk("ns=1;s=v0", AttributeIds.EventNotifier, evf, 3),
                mk("i=2253", AttributeIds.EventNotifier, badSel, 4),
            ],
        }));
        const r = resp.results;
        assert.equal(r[0].statusCode.value, StatusCodes.BadFilterNotAllowed.value);
        assert.equal(r[1].statusCode.value, StatusCodes.BadFilterNotAllowed.value);
        assert.equal(r[2].statusCode.value,
            StatusCodes.BadAttributeIdInvalid.value);
        assert.equal(r[3].statusCode.value, StatusCodes.Good.value);
        const fr = r[3].filterResult;
        assert.ok(fr, "an EventFilterResult");
        assert.equal(fr.selectClauseResults.length, 2);
        assert.equal(fr.selectClauseResults[0].value, StatusCodes.Good.value);
        assert.equal(fr.selectClauseResults[1].value,
            StatusCodes.BadTypeDefinitionInvalid.value);
        await sub.terminate();
    });
});
