// tests/interop/test/methods.test.js: calling a method of the imported
// model (nodesets/plant.xml) with node-opcua 2.182.0: the worker checks
// the arguments against InputArguments, the broker forwards the call to
// the method owner, which run.sh starts as `uabroker methods --exec
// methods/handler.sh` (docs/feed.md "Methods").
//
// Start(Speed Double) -> Started Boolean on Objects/Plant/Pump1: Good with
// true; the type's own Start (PumpType's, inherited by Pump1) too; a
// negative speed BadOutOfRange (the owner's status); an Int32 for the
// Double BadInvalidArgument with inputArgumentResults [BadTypeMismatch]
// (no conversion); no argument BadArgumentsMissing; Pump1's method on
// the Plant folder BadMethodInvalid.
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
    Variant,
} = require("node-opcua");

const URL = process.env.UA_INTEROP_URL;
const PLANT_URI = "http://example.com/UA/Plant/";

if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}

const ownPki = !process.env.UA_INTEROP_PKI;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));

describe("methods of the imported model, served by the owner", () => {
    let certificateManager;
    let client;
    let session;
    let ns;

    function start(speed, dataType = DataType.Double, methodId) {
        return session.call({
            objectId: `ns=${ns};s=Plant.Pump1`,
            methodId: methodId || `ns=${ns};s=Plant.Pump1.Start`,
            inputArguments: speed === undefined ? []
                : [new Variant({ dataType, value: speed })],
        });
    }

    before(async () => {
        certificateManager = new OPCUACertificateManager({
            rootFolder: pkiRoot,
            automaticallyAcceptUnknownCertificate: true,
        });
        await certificateManager.initialize();
        client = OPCUAClient.create({
            applicationName: "uabroker-interop-methods",
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
        const dv = await session.read({ nodeId: "i=2255", attributeId: 13 });
        ns = dv.value.value.indexOf(PLANT_URI);
        assert.ok(ns > 0, "the model's namespace is in NamespaceArray");
        // The owner starts next to the broker: wait for its hello.
        for (let i = 0; i < 50; i++) {
            const r = await start(1500);
            if (r.statusCode.value !== StatusCodes.BadNoCommunication.value) {
                break;
            }
            await new Promise((res) => setTimeout(res, 100));
        }
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

    it("Start(1500) on Pump1: Good, Started = true", async () => {
        const r = await start(1500);
        assert.equal(r.statusCode.value, StatusCodes.Good.value,
            r.statusCode.toString());
        assert.equal(r.outputArguments.length, 1);
        assert.equal(r.outputArguments[0].dataType, DataType.Boolean);
        assert.equal(r.outputArguments[0].value, true);
    });

    it("PumpType's Start on Pump1 (a component of its type): Good",
        async () => {
            const r = await start(10, DataType.Double, `ns=${ns};i=7001`);
            assert.equal(r.statusCode.value, StatusCodes.Good.value,
                r.statusCode.toString());
            assert.equal(r.outputArguments[0].value, true);
        });

    it("the owner's status comes through: a negative speed is "
        + "BadOutOfRange", async () => {
        const r = await start(-1);
        assert.equal(r.statusCode.value, StatusCodes.BadOutOfRange.value,
            r.statusCode.toString());
        assert.equal((r.outputArguments || []).length, 0);
    });

    it("an Int32 for the Double: BadInvalidArgument, BadTypeMismatch",
        async () => {
            const r = await start(1500, DataType.Int32);
            assert.equal(r.statusCode.value,
                StatusCodes.BadInvalidArgument.value, r.statusCode.toString());
            assert.equal(r.inputArgumentResults.length, 1);
            assert.equal(r.inputArgumentResults[0].value,
                StatusCodes.BadTypeMismatch.value);
        });

    it("no argument: BadArgumentsMissing", async () => {
        const r = await start(undefined);
        assert.equal(r.statusCode.value,
            StatusCodes.BadArgumentsMissing.value, r.statusCode.toString());
    });

    it("Pump1's Start on the Plant folder: BadMethodInvalid", async () => {
        const r = await session.call({
            objectId: `ns=${ns};s=Plant`,
            methodId: `ns=${ns};s=Plant.Pump1.Start`,
            inputArguments: [new Variant({ dataType: DataType.Double,
                value: 1 })],
        });
        assert.equal(r.statusCode.value, StatusCodes.BadMethodInvalid.value,
            r.statusCode.toString());
    });
});
