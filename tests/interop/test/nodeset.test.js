// tests/interop/test/nodeset.test.js: a NodeSet2 model imported at start
// (addrspace.nodesets) as node-opcua 2.182.0 sees it.
//
// run.sh always starts the broker with --nodeset nodesets/plant.xml, a
// small companion-specification-like model: its own namespace URI, a
// PumpType ObjectType, the instance Objects/Plant/Pump1 (EventNotifier 1)
// with Speed, SerialNumber, Setpoints and a Start method whose
// InputArguments / OutputArguments hold Argument structures.  The tests
// find the model's namespace index through NamespaceArray, as a client
// must, then browse, read and translate.
"use strict";

const { describe, it, before, after } = require("node:test");
const assert = require("node:assert/strict");
const os = require("node:os");
const path = require("node:path");
const fs = require("node:fs");
const { spawnSync } = require("node:child_process");

const {
    OPCUAClient,
    OPCUACertificateManager,
    MessageSecurityMode,
    SecurityPolicy,
    AttributeIds,
    StatusCodes,
    DataType,
    NodeClass,
    BrowseDirection,
    makeBrowsePath,
} = require("node-opcua");

const URL = process.env.UA_INTEROP_URL;
const PLANT_URI = "http://example.com/UA/Plant/";

if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}

const ownPki = !process.env.UA_INTEROP_PKI;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));

describe("imported NodeSet (nodesets/plant.xml)", () => {
    let certificateManager;
    let client;
    let session;
    let ns;             // the model's namespace index on this server

    before(async () => {
        certificateManager = new OPCUACertificateManager({
            rootFolder: pkiRoot,
            automaticallyAcceptUnknownCertificate: true,
        });
        await certificateManager.initialize();
        client = OPCUAClient.create({
            applicationName: "uabroker-interop-nodeset",
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

    // A namespace-0 numeric NodeId (or ExpandedNodeId) is i=n.
    function isNs0(id, n) {
        assert.equal(id.namespace, 0, `${id} in namespace 0`);
        assert.equal(id.value, n, `${id} is i=${n}`);
    }

    async function read(nodeId, attributeId) {
        const dv = await session.read({ nodeId, attributeId });
        assert.equal(dv.statusCode.value, StatusCodes.Good.value,
            `${nodeId} attribute ${attributeId}: ${dv.statusCode}`);
        return dv.value.value;
    }

    async function children(nodeId) {
        const r = await session.browse({
            nodeId,
            browseDirection: BrowseDirection.Forward,
            referenceTypeId: "HierarchicalReferences",
            includeSubtypes: true,
            nodeClassMask: 0,
            resultMask: 63,
        });
        assert.equal(r.statusCode.value, StatusCodes.Good.value);
        return r.references;
    }

    it("lists the model's namespace URI in NamespaceArray", async () => {
        const dv = await session.read({ nodeId: "i=2255",
            attributeId: AttributeIds.Value });
        assert.equal(dv.value.dataType, DataType.String);
        const uris = Array.from(dv.value.value);
        ns = uris.indexOf(PLANT_URI);
        assert.ok(ns >= 2, `${PLANT_URI} in ${JSON.stringify(uris)}`);
        assert.equal(uris.lastIndexOf(PLANT_URI), ns, "listed once");
    });

    it("browses Objects -> Plant -> Pump1", async () => {
        const top = await children("i=85");
        const plant = top.find((r) => r.browseName.name === "Plant");
        assert.ok(plant, "Objects has Plant");
        assert.equal(plant.browseName.namespaceIndex, ns);
        assert.equal(plant.nodeId.toString(), `ns=${ns};s=Plant`);
        assert.equal(plant.nodeClass, NodeClass.Object);
        isNs0(plant.typeDefinition, 61);
        const pumps = await children(plant.nodeId);
        assert.equal(pumps.length, 1);
        assert.equal(pumps[0].nodeId.toString(), `ns=${ns};s=Plant.Pump1`);
        assert.equal(pumps[0].displayName.text, "Pump 1");
        assert.equal(pumps[0].typeDefinition.toString(), `ns=${ns};i=1001`);
        const parts = (await children(pumps[0].nodeId))
            .map((r) => r.browseName.name).sort();
        assert.deepEqual(parts,
            ["SerialNumber", "Setpoints", "Speed", "Start"]
                .sort());
    });

    it("reads the object's attributes", async () => {
        const id = `ns=${ns};s=Plant.Pump1`;
        assert.equal(await read(id, AttributeIds.NodeClass), NodeClass.Object);
        const dn = await read(id, AttributeIds.DisplayName);
        assert.equal(dn.text, "Pump 1");
        assert.equal(dn.locale, "en");
        const desc = await read(id, AttributeIds.Description);
        assert.equal(desc.text, "Feed water pump, line 1.");
        assert.equal(await read(id, AttributeIds.EventNotifier), 1);
        const bn = await read(id, AttributeIds.BrowseName);
        assert.equal(bn.namespaceIndex, ns);
        assert.equal(bn.name, "Pump1");
    });

    it("reads variables: Value, DataType, Description", async () => {
        const speed = `ns=${ns};s=Plant.Pump1.Speed`;
        const dv = await session.read({ nodeId: speed,
            attributeId: AttributeIds.Value });
        assert.equal(dv.statusCode.value, StatusCodes.Good.value);
        assert.equal(dv.value.dataType, DataType.Double);
        assert.equal(dv.value.value, 1450.5);
        isNs0(await read(speed, AttributeIds.DataType), 11);
        assert.equal((await read(speed, AttributeIds.Description)).text,
            "Rotational speed in r/min.");
        assert.equal(await read(speed, AttributeIds.AccessLevel), 3);
        assert.equal(await read(speed, AttributeIds.MinimumSamplingInterval),
            100);
        assert.equal(await read(`ns=${ns};s=Plant.Pump1.Serial`,
            AttributeIds.Value), "P-2026-0042");
        const sp = await read(`ns=${ns};s=Plant.Pump1.Setpoints`,
            AttributeIds.Value);
        assert.deepEqual(Array.from(sp), [1000, 1450, 2900]);
        assert.equal(await read(`ns=${ns};s=Plant.Pump1.Setpoints`,
            AttributeIds.ValueRank), 1);
        assert.deepEqual(Array.from(await read(
            `ns=${ns};s=Plant.Pump1.Setpoints`,
            AttributeIds.ArrayDimensions)), [3]);
    });

    it("writes an imported variable and reads it back", async () => {
        const speed = `ns=${ns};s=Plant.Pump1.Speed`;
        const st = await session.write({ nodeId: speed,
            attributeId: AttributeIds.Value,
            value: { value: { dataType: DataType.Double, value: 1200.25 } } });
        assert.equal(st.value, StatusCodes.Good.value, `${st}`);
        assert.equal(await read(speed, AttributeIds.Value), 1200.25);
        // Setpoints has AccessLevel 1 (CurrentRead): not writable.
        const ro = await session.write({
            nodeId: `ns=${ns};s=Plant.Pump1.Setpoints`,
            attributeId: AttributeIds.Value,
            value: { value: { dataType: DataType.Int32, arrayType: 1,
                value: [1, 2, 3] } } });
        assert.equal(ro.value, StatusCodes.BadNotWritable.value, `${ro}`);
        await session.write({ nodeId: speed,
            attributeId: AttributeIds.Value,
            value: { value: { dataType: DataType.Double, value: 1450.5 } } });
    });

    it("reads the method's InputArguments (Argument[])", async () => {
        const m = `ns=${ns};s=Plant.Pump1.Start`;
        assert.equal(await read(m, AttributeIds.NodeClass), NodeClass.Method);
        assert.equal(await read(m, AttributeIds.Executable), true);
        const props = await children(m);
        const input = props.find((r) => r.browseName.name ===
            "InputArguments");
        assert.ok(input, "Start has InputArguments");
        assert.equal(input.browseName.namespaceIndex, 0);
        const dv = await session.read({ nodeId: input.nodeId,
            attributeId: AttributeIds.Value });
        assert.equal(dv.statusCode.value, StatusCodes.Good.value);
        assert.equal(dv.value.dataType, DataType.ExtensionObject);
        const args = Array.from(dv.value.value);
        assert.equal(args.length, 1);
        assert.equal(args[0].name, "Speed");
        isNs0(args[0].dataType, 11);
        assert.equal(args[0].valueRank, -1);
        assert.equal(args[0].description.text, "Target speed in r/min");
        isNs0(await read(input.nodeId, AttributeIds.DataType), 296);
        const out = await read(`${m}.OutputArguments`, AttributeIds.Value);
        assert.equal(out[0].name, "Started");
        isNs0(out[0].dataType, 1);
    });

    it("translates a browse path into the model", async () => {
        const r = await session.translateBrowsePath(makeBrowsePath("i=85",
            `/${ns}:Plant/${ns}:Pump1/${ns}:Start/InputArguments`));
        assert.equal(r.statusCode.value, StatusCodes.Good.value);
        assert.equal(r.targets.length, 1);
        assert.equal(r.targets[0].targetId.toString(),
            `ns=${ns};s=Plant.Pump1.Start.InputArguments`);
    });

    it("serves the ObjectType with its subtype reference", async () => {
        const t = `ns=${ns};i=1001`;
        assert.equal(await read(t, AttributeIds.NodeClass),
            NodeClass.ObjectType);
        assert.equal(await read(t, AttributeIds.IsAbstract), false);
        assert.equal((await read(t, AttributeIds.Description)).text,
            "A centrifugal pump.");
        const r = await session.browse({
            nodeId: t,
            browseDirection: BrowseDirection.Inverse,
            referenceTypeId: "HasSubtype",
            includeSubtypes: false,
            nodeClassMask: 0,
            resultMask: 63,
        });
        assert.equal(r.references.length, 1);
        isNs0(r.references[0].nodeId, 58);
    });
});

// A bad model is a configuration error: `uabroker -t` says FILE:LINE and
// exits 2, and so does a start with it (before anything is served).
describe("a bad NodeSet stops the broker", () => {
    const broker = process.env.UA_INTEROP_BROKER;
    let dir;

    before(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-nodeset-"));
    });
    after(() => {
        fs.rmSync(dir, { recursive: true, force: true });
    });

    it("uabroker -t validates --nodeset files", { skip: !broker }, () => {
        const good = path.join(__dirname, "..", "nodesets", "plant.xml");
        const ok = spawnSync(broker, ["-t", "--nodeset", good],
            { encoding: "utf8" });
        assert.equal(ok.status, 0, ok.stderr);
        const bad = path.join(dir, "bad.xml");
        fs.writeFileSync(bad, fs.readFileSync(good, "utf8").replace(
            '<Reference ReferenceType="HasTypeDefinition">i=68</Reference>',
            '<Reference ReferenceType="HasTypeDefinition">i=987654</Reference>'));
        const line = fs.readFileSync(bad, "utf8").split("\n")
            .findIndex((l) => l.includes("i=987654")) + 1;
        for (const args of [["-t"], ["--once", "-w", "1"]]) {
            const r = spawnSync(broker, [...args, "--nodeset", bad],
                { encoding: "utf8" });
            assert.equal(r.status, 2, `${args}: ${r.stderr}`);
            assert.match(r.stderr, new RegExp(`bad\\.xml:${line}: unknown ` +
                "reference target ns=0;i=987654"));
        }
    });
});
