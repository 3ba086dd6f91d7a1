// tests/interop/test/alarms.test.js: uabroker's alarms (issue 17,
// docs/operations.md "Alarms") with node-opcua 2.182.0 as the client,
// on the alarms of tests/interop/alarms.conf:
//
//   - TankLevel (ExclusiveLimitAlarmType on ns=1;s=v991): a value
//     crossing High, then HighHigh, then back raises the right events
//     (ActiveState/Id, LimitState/CurrentState, Severity, Retain true
//     until acknowledged), with the ConditionId;
//   - Acknowledge as anonymous (security.anonymous_write is on) is
//     BadUserAccessDenied, a stale EventId BadEventIdUnknown, as the
//     operator "interop" Good (acknowledged, no longer retained), a second
//     one BadConditionBranchAlreadyAcked;
//   - with events.audit (run.sh), the Acknowledge raises an
//     AuditConditionAcknowledgeEventType (i=8944) event;
//   - a Read of the condition's variables agrees with its last event;
//   - PumpRunning (OffNormalAlarmType on ns=1;s=v990) off normal, listed
//     by ConditionRefresh between RefreshStart and RefreshEnd;
//   - Disable / Enable (BadConditionAlreadyDisabled), TimedShelve past
//     MaxTimeShelved (BadShelvingTimeOutOfRange) and a shelving of 1 s
//     that runs out by itself;
//   - Tank2/LevelAlarm of nodesets/alarms.xml (an ExclusiveLevelAlarmType
//     instance of an imported NodeSet): fires, is listed by
//     ConditionRefresh, is acknowledged (its audit event with the
//     request's auditEntryId as ClientAuditEntryId); the file's refused
//     instance stays a plain Object.
//
// Each test leaves the alarms normal and acknowledged (events.test.js
// expects no retained condition). Run by tests/interop/run.sh
// (UA_INTEROP_URL, UA_INTEROP_PKI, UA_INTEROP_PASSWORD).
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
    AttributeIds,
    StatusCodes,
    TimestampsToReturn,
    ClientSubscription,
    ClientMonitoredItem,
    constructEventFilter,
    SimpleAttributeOperand,
    DataType,
    UserTokenType,
    CallRequest,
} = require("node-opcua");
const { sleep, until } = require("../lib/common.js");

const URL = process.env.UA_INTEROP_URL;
if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}
const PASSWORD = process.env.UA_INTEROP_PASSWORD;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));
let certificateManager;

const TANK = "ns=1;s=Alarms.TankLevel";
const PUMP = "ns=1;s=Alarms.PumpRunning";
const ACK = "ns=0;i=9111";
const FIELDS = ["EventType", "ConditionName", "Severity", "ActiveState.Id",
    "AckedState.Id", "LimitState.CurrentState", "Retain", "EventId",
    "Message", "ClientAuditEntryId"];
const F = Object.fromEntries(FIELDS.map((n, i) => [n, i]));
const F_COND = FIELDS.length;           // the ConditionId, added below

function makeClient() {
    return OPCUAClient.create({
        applicationName: "uabroker-interop-alarms",
        clientCertificateManager: certificateManager,
        securityMode: MessageSecurityMode.None,
        securityPolicy: SecurityPolicy.None,
        endpointMustExist: false,
        keepSessionAlive: false,
        requestedSessionTimeout: 60000,
        connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
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

describe("alarms", () => {
    let client;
    let anon;
    let op;
    let sub;
    let got;

    async function write(nodeId, dataType, value) {
        const s = await anon.write({
            nodeId, attributeId: AttributeIds.Value,
            value: { value: { dataType, value } },
        });
        assert.equal(s.value, StatusCodes.Good.value, `write ${nodeId}`);
    }

    // The next n events (of the condition name, when given).
    async function next(n, name) {
        const from = got.length;
        const mine = () => got.slice(from).filter((f) => !name ||
            f[F.ConditionName].value === name);
        await until(() => mine().length >= n, 5000);
        return mine();
    }

    function call(session, objectId, methodId, inputArguments) {
        return session.call({ objectId, methodId, inputArguments })
            .then((r) => r.statusCode.value);
    }

    // A Call whose RequestHeader carries auditEntryId (Part 4 §7.32).
    function callAudited(session, objectId, methodId, inputArguments,
        auditEntryId) {
        const request = new CallRequest({
            requestHeader: { auditEntryId },
            methodsToCall: [{ objectId, methodId, inputArguments }],
        });
        return new Promise((resolve, reject) => {
            session.performMessageTransaction(request, (err, resp) => {
                if (err) {
                    reject(err);
                } else {
                    resolve(resp.results[0].statusCode.value);
                }
            });
        });
    }

    function ackArgs(eventId, text) {
        return [{ dataType: DataType.ByteString, value: eventId },
            { dataType: DataType.LocalizedText, value: { text } }];
    }

    before(async () => {
        client = makeClient();
        await client.connect(URL);
        anon = await client.createSession();
        op = await client.createSession({
            type: UserTokenType.UserName, userName: "interop",
            password: PASSWORD,
        });
        sub = ClientSubscription.create(anon, {
            requestedPublishingInterval: 50, requestedLifetimeCount: 600,
            requestedMaxKeepAliveCount: 10, maxNotificationsPerPublish: 0,
            publishingEnabled: true, priority: 10,
        });
        await new Promise((resolve, reject) => {
            sub.on("started", resolve);
            sub.on("internal_error", reject);
        });
        const filter = constructEventFilter(FIELDS);
        filter.selectClauses.push(new SimpleAttributeOperand({
            typeDefinitionId: "ns=0;i=2782", browsePath: [],
            attributeId: AttributeIds.NodeId,
        }));
        got = [];
        const item = ClientMonitoredItem.create(sub, {
            nodeId: "i=2253", attributeId: AttributeIds.EventNotifier,
        }, {
            samplingInterval: 0, queueSize: 1000, discardOldest: true, filter,
        }, TimestampsToReturn.Neither);
        item.on("changed", (ev) => got.push(ev));
        await new Promise((resolve, reject) => {
            item.on("initialized", resolve);
            item.on("err", (e) => reject(new Error(String(e))));
        });
    });
    after(async () => {
        await sub.terminate();
        await anon.close();
        await op.close();
        await client.disconnect();
    });

    let lastId;

    it("High, HighHigh and back: the events, Retain until acknowledged",
        async () => {
            await write("ns=1;s=v991", DataType.Double, 1085);
            let ev = await next(1, "TankLevel");
            assert.equal(ev.length, 1, "one event for High");
            assert.equal(ev[0][F.EventType].value.toString(), "ns=0;i=9341");
            assert.equal(ev[0][F["ActiveState.Id"]].value, true);
            assert.equal(ev[0][F["AckedState.Id"]].value, false);
            assert.equal(ev[0][F["LimitState.CurrentState"]].value.text,
                "High");
            assert.equal(ev[0][F.Severity].value, 500);
            assert.equal(ev[0][F.Retain].value, true);
            assert.equal(ev[0][F.Message].value.text,
                "Tank level out of range");
            assert.equal(ev[0][F_COND].value.toString(), TANK);

            await write("ns=1;s=v991", DataType.Double, 1095);
            ev = await next(1, "TankLevel");
            assert.equal(ev[0][F["LimitState.CurrentState"]].value.text,
                "HighHigh");
            assert.equal(ev[0][F.Severity].value, 900);

            await write("ns=1;s=v991", DataType.Double, 991.5);
            ev = await next(1, "TankLevel");
            assert.equal(ev[0][F["ActiveState.Id"]].value, false);
            assert.equal(ev[0][F["AckedState.Id"]].value, false);
            assert.equal(ev[0][F.Retain].value, true,
                "retained until acknowledged");
            lastId = ev[0][F.EventId].value;
        });

    it("a Read of the condition's variables agrees with the last event",
        async () => {
            const r = await anon.read([
                { nodeId: `${TANK}.ActiveState.Id`,
                    attributeId: AttributeIds.Value },
                { nodeId: `${TANK}.Retain`, attributeId: AttributeIds.Value },
                { nodeId: `${TANK}.EventId`, attributeId: AttributeIds.Value },
                { nodeId: `${TANK}.HighHighLimit`,
                    attributeId: AttributeIds.Value },
            ]);
            assert.equal(r[0].value.value, false);
            assert.equal(r[1].value.value, true);
            assert.ok(Buffer.compare(r[2].value.value, lastId) === 0,
                "EventId of the last event");
            assert.equal(r[3].value.value, 1090);
        });

    it("Acknowledge: anonymous refused, stale EventId, operator, twice",
        async () => {
            assert.equal(await call(anon, TANK, ACK, ackArgs(lastId, "a")),
                StatusCodes.BadUserAccessDenied.value);
            assert.equal(await call(op, TANK, ACK,
                ackArgs(Buffer.alloc(16), "stale")),
            StatusCodes.BadEventIdUnknown.value);
            const from = got.length;
            assert.equal(await call(op, TANK, ACK, ackArgs(lastId, "seen")),
                StatusCodes.Good.value);
            const ev = await next(1, "TankLevel");
            // events.audit (run.sh): the AuditConditionAcknowledgeEvent.
            await until(() => got.slice(from).some((f) =>
                f[F.EventType].value.toString() === "ns=0;i=8944"), 5000);
            const audit = got.slice(from).find((f) =>
                f[F.EventType].value.toString() === "ns=0;i=8944");
            assert.ok(audit, "an AuditConditionAcknowledgeEventType event");
            assert.equal(audit[F.Message].value.text, "Method/Acknowledge");
            assert.equal(ev[0][F["AckedState.Id"]].value, true);
            assert.equal(ev[0][F.Retain].value, false);
            lastId = ev[0][F.EventId].value;
            assert.equal(await call(op, TANK, ACK, ackArgs(lastId, "again")),
                StatusCodes.BadConditionBranchAlreadyAcked.value);
            const who = await anon.read({ nodeId: `${TANK}.ClientUserId`,
                attributeId: AttributeIds.Value });
            assert.equal(who.value.value, "interop");
        });

    it("an off-normal alarm, listed by ConditionRefresh", async () => {
        await write("ns=1;s=v990", DataType.Int32, 0);
        let ev = await next(1, "PumpRunning");
        assert.equal(ev[0][F.EventType].value.toString(), "ns=0;i=10637");
        assert.equal(ev[0][F["ActiveState.Id"]].value, true);
        assert.equal(ev[0][F.Severity].value, 700);
        const pumpId = ev[0][F.EventId].value;

        const from = got.length;
        assert.equal(await call(anon, "ns=0;i=2782", "ns=0;i=3875",
            [{ dataType: DataType.UInt32, value: sub.subscriptionId }]),
        StatusCodes.Good.value);
        await until(() => got.length - from >= 3, 5000);
        const r = got.slice(from);
        assert.deepEqual(r.map((f) => f[F.EventType].value.toString()),
            ["ns=0;i=2787", "ns=0;i=10637", "ns=0;i=2788"],
            "RefreshStart, the retained PumpRunning, RefreshEnd");
        assert.equal(r[1][F.ConditionName].value, "PumpRunning");
        assert.ok(Buffer.compare(r[1][F.EventId].value, pumpId) === 0);

        // Back to normal and acknowledged: nothing retained.
        await write("ns=1;s=v990", DataType.Int32, 990);
        ev = await next(1, "PumpRunning");
        assert.equal(await call(op, PUMP, ACK,
            ackArgs(ev[0][F.EventId].value, "ok")), StatusCodes.Good.value);
        ev = await next(1, "PumpRunning");
        assert.equal(ev[0][F.Retain].value, false);
    });

    it("Disable, Enable, and a timed shelving that runs out", async () => {
        assert.equal(await call(op, TANK, "ns=0;i=9028", []),
            StatusCodes.Good.value);
        assert.equal(await call(op, TANK, "ns=0;i=9028", []),
            StatusCodes.BadConditionAlreadyDisabled.value);
        assert.equal(await call(op, TANK, "ns=0;i=9027", []),
            StatusCodes.Good.value);
        const shelving = `${TANK}.ShelvingState`;
        const shelve = (ms) => call(op, shelving, "ns=0;i=2949",
            [{ dataType: DataType.Double, value: ms }]);
        assert.equal(await shelve(61000),
            StatusCodes.BadShelvingTimeOutOfRange.value);
        assert.equal(await shelve(1000), StatusCodes.Good.value);
        const shelved = async () => (await anon.read({
            nodeId: `${TANK}.SuppressedOrShelved`,
            attributeId: AttributeIds.Value })).value.value;
        assert.equal(await shelved(), true);
        const end = Date.now() + 3000;
        let s = true;
        while (s && Date.now() < end) {
            await sleep(100);
            s = await shelved();
        }
        assert.equal(s, false, "unshelved by itself within 3 s");
    });

    it("an alarm from an imported NodeSet", async () => {
        // nodesets/alarms.xml: Tank2/LevelAlarm (ns=N;i=5001), an
        // ExclusiveLevelAlarmType on Tank2.Level, limits 90/80/20.
        const nsa = (await anon.readNamespaceArray())
            .indexOf("http://example.com/UA/Alarms/");
        assert.ok(nsa > 1, "the file's namespace");
        const cond = `ns=${nsa};i=5001`;
        const level = `ns=${nsa};s=Tank2.Level`;
        await write(level, DataType.Double, 85);
        let ev = await next(1, "LevelAlarm");
        assert.equal(ev[0][F.EventType].value.toString(), "ns=0;i=9482");
        assert.equal(ev[0][F["ActiveState.Id"]].value, true);
        assert.equal(ev[0][F["LimitState.CurrentState"]].value.text, "High");
        assert.equal(ev[0][F.Severity].value, 600, "the file's Severity");
        assert.equal(ev[0][F.Retain].value, true);
        assert.equal(ev[0][F_COND].value.toString(), cond);
        // The file's own ActiveState/Id and an added AckedState/Id.
        const r = await anon.read([
            { nodeId: `ns=${nsa};i=5008`, attributeId: AttributeIds.Value },
            { nodeId: `ns=${nsa};s=5001.AckedState.Id`,
                attributeId: AttributeIds.Value },
        ]);
        assert.equal(r[0].value.value, true);
        assert.equal(r[1].value.value, false);

        // ConditionRefresh lists it (a numeric ConditionId).
        let from = got.length;
        assert.equal(await call(anon, "ns=0;i=2782", "ns=0;i=3875",
            [{ dataType: DataType.UInt32, value: sub.subscriptionId }]),
        StatusCodes.Good.value);
        await until(() => got.length - from >= 3, 5000);
        const refresh = got.slice(from);
        assert.deepEqual(refresh.map((f) => f[F.EventType].value.toString()),
            ["ns=0;i=2787", "ns=0;i=9482", "ns=0;i=2788"]);
        assert.equal(refresh[1][F_COND].value.toString(), cond);
        assert.ok(Buffer.compare(refresh[1][F.EventId].value,
            ev[0][F.EventId].value) === 0);

        // Back to normal, acknowledged by the operator: not retained.
        await write(level, DataType.Double, 50);
        ev = await next(1, "LevelAlarm");
        assert.equal(ev[0][F["ActiveState.Id"]].value, false);
        from = got.length;
        assert.equal(await callAudited(op, cond, ACK,
            ackArgs(ev[0][F.EventId].value, "tank 2 seen"), "shift-7/ack-1"),
        StatusCodes.Good.value);
        ev = await next(1, "LevelAlarm");
        assert.equal(ev[0][F["AckedState.Id"]].value, true);
        assert.equal(ev[0][F.Retain].value, false);
        // The audit event carries the request's auditEntryId.
        await until(() => got.slice(from).some((f) =>
            f[F.EventType].value.toString() === "ns=0;i=8944"), 5000);
        const audit = got.slice(from).find((f) =>
            f[F.EventType].value.toString() === "ns=0;i=8944");
        assert.equal(audit[F.ClientAuditEntryId].value, "shift-7/ack-1");
        // The refused instance of the same file stays a plain Object.
        const broken = await anon.browse(`ns=${nsa};s=Tank2.Broken`);
        assert.equal(broken.statusCode.value, StatusCodes.Good.value);
        assert.ok(!broken.references.some((x) =>
            x.browseName.name === "ActiveState"));
    });
});
