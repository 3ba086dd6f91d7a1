// tests/interop/test/subscription.test.js: subscriptions of uabroker with
// node-opcua 2.182.0 as the client.
//
//   - node-opcua's own ClientSubscription on 10 variables, written from a
//     second session: every value arrives, per variable in the order
//     written (the writes are paced past the sampling interval, so none
//     is coalesced);
//   - raw Subscription services: CreateSubscription revision, Publish
//     without acknowledgements, Republish of a kept message (the same
//     DataChangeNotification), Republish of an unknown one
//     (BadMessageNotAvailable), acknowledgements, GetMonitoredItems via
//     Call, DeleteSubscriptions (then BadSubscriptionIdInvalid).
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
    AttributeIds,
    StatusCodes,
    DataType,
    TimestampsToReturn,
    ClientSubscription,
    ClientMonitoredItem,
    MonitoringMode,
    CreateSubscriptionRequest,
    CreateMonitoredItemsRequest,
    PublishRequest,
    RepublishRequest,
    DeleteSubscriptionsRequest,
} = require("node-opcua");

const URL = process.env.UA_INTEROP_URL;
if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));
let certificateManager;

const NVARS = 10;
const ROUNDS = 20;

function makeClient() {
    return OPCUAClient.create({
        applicationName: "uabroker-interop",
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

function transact(session, request) {
    return new Promise((resolve, reject) => {
        session.performMessageTransaction(request, (err, response) =>
            err ? reject(err) : resolve(response));
    });
}

// The value written to variable i in round k: v0, v2, ... are Int32,
// v1, v3, ... Double (docs/architecture.md §6).
function valueOf(i, k) {
    return i % 2 === 0 ? { dataType: DataType.Int32, value: 1000 * i + k }
                       : { dataType: DataType.Double, value: 1000 * i + k + 0.5 };
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

describe("subscriptions", () => {
    let client;
    let sub;        // the subscriber's session
    let writer;     // the writer's session

    before(async () => {
        client = makeClient();
        await client.connect(URL);
        sub = await client.createSession();
        writer = await client.createSession();
    });
    after(async () => {
        if (sub) await sub.close();
        if (writer) await writer.close();
        await client.disconnect();
    });

    it("10 variables written from another session arrive in order",
        async () => {
            // A known starting point: round 0.
            await writer.write(Array.from({ length: NVARS }, (_, i) => ({
                nodeId: `ns=1;s=v${i}`, attributeId: AttributeIds.Value,
                value: { value: valueOf(i, 0) },
            })));
            const subscription = ClientSubscription.create(sub, {
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
            assert.ok(subscription.subscriptionId > 0);
            assert.ok(subscription.publishingInterval >= 50);

            const seen = Array.from({ length: NVARS }, () => []);
            const items = [];
            for (let i = 0; i < NVARS; i++) {
                const item = ClientMonitoredItem.create(subscription, {
                    nodeId: `ns=1;s=v${i}`,
                    attributeId: AttributeIds.Value,
                }, {
                    samplingInterval: 0,
                    queueSize: 100,
                    discardOldest: true,
                }, TimestampsToReturn.Both);
                item.on("changed", (dv) => {
                    assert.equal(dv.statusCode.value, StatusCodes.Good.value);
                    seen[i].push(dv.value.value);
                });
                items.push(item);
            }
            await Promise.all(items.map((item) => new Promise((res, rej) => {
                item.on("initialized", res);
                item.on("err", rej);
            })));
            for (const item of items) {
                assert.ok(item.monitoredItemId > 0);
                assert.ok(item.monitoringParameters.queueSize >= 1);
            }
            // Wait for the initial values, then write the rounds, each
            // one a sampling interval apart.
            const t0 = Date.now();
            while (seen.some((s) => s.length < 1) && Date.now() - t0 < 5000) {
                await sleep(20);
            }
            for (let k = 1; k <= ROUNDS; k++) {
                const res = await writer.write(Array.from({ length: NVARS },
                    (_, i) => ({
                        nodeId: `ns=1;s=v${i}`,
                        attributeId: AttributeIds.Value,
                        value: { value: valueOf(i, k) },
                    })));
                for (const s of res) {
                    assert.equal(s.value, StatusCodes.Good.value);
                }
                await sleep(70);
            }
            const t1 = Date.now();
            while (seen.some((s) => s.length < ROUNDS + 1) &&
                   Date.now() - t1 < 10000) {
                await sleep(20);
            }
            for (let i = 0; i < NVARS; i++) {
                const want = Array.from({ length: ROUNDS + 1 },
                    (_, k) => valueOf(i, k).value);
                assert.deepEqual(seen[i], want, `v${i}: every value in order`);
            }
            await subscription.terminate();
        });

    it("Publish, Republish, acknowledgements, GetMonitoredItems, delete",
        async () => {
            const cs = await transact(sub, new CreateSubscriptionRequest({
                requestedPublishingInterval: 0,         // revised up
                requestedLifetimeCount: 1,              // >= 3 x keep-alive
                requestedMaxKeepAliveCount: 5,
                maxNotificationsPerPublish: 0,
                publishingEnabled: true,
                priority: 0,
            }));
            const subId = cs.subscriptionId;
            assert.ok(subId > 0);
            assert.ok(cs.revisedPublishingInterval > 0);
            assert.equal(cs.revisedMaxKeepAliveCount, 5);
            assert.ok(cs.revisedLifetimeCount >= 15);

            const cm = await transact(sub, new CreateMonitoredItemsRequest({
                subscriptionId: subId,
                timestampsToReturn: TimestampsToReturn.Both,
                itemsToCreate: [0, 1, 2].map((i) => ({
                    itemToMonitor: { nodeId: `ns=1;s=v${i}`,
                        attributeId: AttributeIds.Value },
                    monitoringMode: MonitoringMode.Reporting,
                    requestedParameters: { clientHandle: 100 + i,
                        samplingInterval: -1, queueSize: 1,
                        discardOldest: true },
                })),
            }));
            assert.equal(cm.results.length, 3);
            for (const r of cm.results) {
                assert.equal(r.statusCode.value, StatusCodes.Good.value);
            }

            // The first message: the three initial values, seq 1.
            const p1 = await transact(sub, new PublishRequest({
                subscriptionAcknowledgements: [] }));
            assert.equal(p1.subscriptionId, subId);
            const m1 = p1.notificationMessage;
            assert.equal(m1.sequenceNumber, 1);
            assert.equal(m1.notificationData.length, 1);
            const handles = m1.notificationData[0].monitoredItems
                .map((n) => n.clientHandle).sort();
            assert.deepEqual(handles, [100, 101, 102]);
            assert.deepEqual(p1.availableSequenceNumbers, [1]);

            // A change, a second message, still nothing acknowledged.
            await writer.write({ nodeId: "ns=1;s=v1",
                attributeId: AttributeIds.Value,
                value: { value: { dataType: DataType.Double, value: 77.5 } } });
            const p2 = await transact(sub, new PublishRequest({
                subscriptionAcknowledgements: [] }));
            assert.equal(p2.notificationMessage.sequenceNumber, 2);
            assert.deepEqual(p2.availableSequenceNumbers, [1, 2]);
            const n2 = p2.notificationMessage.notificationData[0]
                .monitoredItems;
            assert.equal(n2.length, 1);
            assert.equal(n2[0].clientHandle, 101);
            assert.equal(n2[0].value.value.value, 77.5);

            // Republish gives the very same message back.
            const rp = await transact(sub, new RepublishRequest({
                subscriptionId: subId, retransmitSequenceNumber: 1 }));
            assert.equal(rp.notificationMessage.sequenceNumber, 1);
            assert.deepEqual(rp.notificationMessage.notificationData[0]
                .monitoredItems.map((n) => n.clientHandle).sort(), handles);
            await assert.rejects(transact(sub, new RepublishRequest({
                subscriptionId: subId, retransmitSequenceNumber: 99 })),
                /BadMessageNotAvailable/);

            // GetMonitoredItems through Call.
            const call = await sub.call({
                objectId: "ns=0;i=2253", methodId: "ns=0;i=11492",
                inputArguments: [{ dataType: DataType.UInt32,
                    value: subId }],
            });
            assert.equal(call.statusCode.value, StatusCodes.Good.value);
            assert.deepEqual(Array.from(call.outputArguments[1].value).sort(),
                [100, 101, 102]);

            // Acknowledge 1 and 2 (and one unknown): the next Publish (a
            // keep-alive or data) names nothing left to republish.
            await writer.write({ nodeId: "ns=1;s=v2",
                attributeId: AttributeIds.Value,
                value: { value: { dataType: DataType.Int32, value: 4242 } } });
            const p3 = await transact(sub, new PublishRequest({
                subscriptionAcknowledgements: [
                    { subscriptionId: subId, sequenceNumber: 1 },
                    { subscriptionId: subId, sequenceNumber: 2 },
                    { subscriptionId: subId, sequenceNumber: 1234 },
                ] }));
            assert.deepEqual(p3.results.map((s) => s.value), [
                StatusCodes.Good.value, StatusCodes.Good.value,
                StatusCodes.BadSequenceNumberUnknown.value]);
            assert.equal(p3.notificationMessage.sequenceNumber, 3);
            assert.deepEqual(p3.availableSequenceNumbers, [3]);
            await assert.rejects(transact(sub, new RepublishRequest({
                subscriptionId: subId, retransmitSequenceNumber: 1 })),
                /BadMessageNotAvailable/);

            const del = await transact(sub, new DeleteSubscriptionsRequest({
                subscriptionIds: [subId, subId] }));
            assert.deepEqual(del.results.map((s) => s.value), [
                StatusCodes.Good.value,
                StatusCodes.BadSubscriptionIdInvalid.value]);
            await assert.rejects(transact(sub, new PublishRequest({
                subscriptionAcknowledgements: [] })), /BadNoSubscription/);
        });
});
