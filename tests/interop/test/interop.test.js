// tests/interop/test/interop.test.js: uabroker against node-opcua 2.182.0,
// an OPC UA client written independently of ours.
//
// Run by tests/interop/run.sh, which starts the broker and passes its
// endpoint in UA_INTEROP_URL (and a scratch PKI folder for node-opcua's own
// client certificate in UA_INTEROP_PKI).  Every test asserts values, not
// just the absence of an exception: a server that answers with the wrong
// thing fails here.
//
//   node --test test/         (with UA_INTEROP_URL=opc.tcp://127.0.0.1:PORT)
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
    NodeClass,
    BrowseDirection,
    UserTokenType,
    ApplicationType,
    ServerState,
    makeBrowsePath,
    coerceNodeId,
    ReadRequest,
    TimestampsToReturn,
} = require("node-opcua");

const URL = process.env.UA_INTEROP_URL;
const VARS = Number(process.env.UA_INTEROP_VARS || 1000);
const NONE_URI = "http://opcfoundation.org/UA/SecurityPolicy#None";
const UA_NS = "http://opcfoundation.org/UA/";
const BINARY_PROFILE =
    "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary";

if (!URL) {
    throw new Error("UA_INTEROP_URL is not set (run tests/interop/run.sh)");
}

// run.sh passes a scratch folder; run alone, the test makes (and removes)
// its own.
const ownPki = !process.env.UA_INTEROP_PKI;
const pkiRoot = process.env.UA_INTEROP_PKI ||
    fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-interop-pki-"));
let certificateManager;

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

// One raw service call: resolves with the response, rejects on a
// ServiceFault or a transport error.
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
    if (ownPki) {
        fs.rmSync(pkiRoot, { recursive: true, force: true });
    }
});

describe("discovery", () => {
    let client;

    before(async () => {
        client = makeClient();
        await client.connect(URL);
    });
    after(async () => {
        await client.disconnect();
    });

    it("GetEndpoints offers None/None with an anonymous token policy",
        async () => {
            const endpoints = await client.getEndpoints();
            assert.ok(Array.isArray(endpoints) && endpoints.length >= 1,
                "at least one endpoint");
            const none = endpoints.filter((e) =>
                e.securityMode === MessageSecurityMode.None &&
                e.securityPolicyUri === NONE_URI);
            assert.equal(none.length, 1, "exactly one None/None endpoint");
            const e = none[0];
            assert.match(e.endpointUrl, /^opc\.tcp:\/\/[^/]+:\d+/);
            const port = new globalThis.URL(URL.replace("opc.tcp", "http")).port;
            assert.ok(e.endpointUrl.includes(`:${port}`),
                `endpoint URL ${e.endpointUrl} names port ${port}`);
            assert.equal(e.transportProfileUri, BINARY_PROFILE);
            assert.ok(Array.isArray(e.userIdentityTokens));
            const anon = e.userIdentityTokens.filter((t) =>
                t.tokenType === UserTokenType.Anonymous);
            assert.equal(anon.length, 1, "one anonymous token policy");
            assert.ok(typeof anon[0].policyId === "string" &&
                anon[0].policyId.length > 0, "the policy has an id");
            assert.ok(e.server.applicationUri.length > 0,
                "server applicationUri");
            assert.ok([ApplicationType.Server,
                ApplicationType.ClientAndServer].includes(
                e.server.applicationType));
        });

    it("FindServers returns this server with its discovery URL", async () => {
        const servers = await client.findServers();
        assert.ok(Array.isArray(servers) && servers.length >= 1);
        const s = servers[0];
        assert.ok(typeof s.applicationUri === "string" &&
            s.applicationUri.length > 0);
        assert.ok([ApplicationType.Server, ApplicationType.ClientAndServer]
            .includes(s.applicationType));
        assert.ok(s.applicationName && s.applicationName.text &&
            s.applicationName.text.length > 0, "applicationName");
        assert.ok(Array.isArray(s.discoveryUrls) &&
            s.discoveryUrls.some((u) => u.startsWith("opc.tcp://")),
            "an opc.tcp discovery URL");
        // The applicationUri is the one GetEndpoints names.
        const endpoints = await client.getEndpoints();
        assert.equal(s.applicationUri, endpoints[0].server.applicationUri);
    });
});

describe("session lifecycle", () => {
    it("CreateSession, ActivateSession, CloseSession", async () => {
        const client = makeClient();
        await client.connect(URL);
        try {
            const session = await client.createSession();
            assert.ok(session.sessionId && !session.sessionId.isEmpty(),
                "a session id");
            assert.ok(session.timeout >= 10000 && session.timeout <= 3600000,
                `revised timeout ${session.timeout} within the server's bounds`);
            // The session works...
            const dv = await session.read({ nodeId: "ns=1;s=v0",
                attributeId: AttributeIds.Value });
            assert.equal(dv.statusCode.value, StatusCodes.Good.value);
            // ...closes cleanly...
            await session.close();
            // ...and stays closed: its token is no longer accepted.
            await assert.rejects(session.read({ nodeId: "ns=1;s=v0",
                attributeId: AttributeIds.Value }));
        } finally {
            await client.disconnect();
        }
    });

    it("two sessions on one channel are independent", async () => {
        const client = makeClient();
        await client.connect(URL);
        try {
            const a = await client.createSession();
            const b = await client.createSession();
            assert.notEqual(a.sessionId.toString(), b.sessionId.toString());
            await a.close();
            const dv = await b.read({ nodeId: "ns=1;s=v1",
                attributeId: AttributeIds.Value });
            assert.equal(dv.statusCode.value, StatusCodes.Good.value);
            assert.equal(dv.value.value, 1.5);
            await b.close();
        } finally {
            await client.disconnect();
        }
    });
});

describe("address space", () => {
    let client;
    let session;

    before(async () => {
        client = makeClient();
        await client.connect(URL);
        session = await client.createSession();
    });
    after(async () => {
        if (session) {
            await session.close();
        }
        await client.disconnect();
    });

    async function browseAll(nodeId, extra = {}) {
        const r = await session.browse({
            nodeId,
            browseDirection: BrowseDirection.Forward,
            referenceTypeId: "HierarchicalReferences",
            includeSubtypes: true,
            nodeClassMask: 0,
            resultMask: 63,
            ...extra,
        });
        assert.equal(r.statusCode.value, StatusCodes.Good.value,
            `browse ${nodeId}: ${r.statusCode.toString()}`);
        return r;
    }

    function findRef(r, name) {
        return r.references.find((ref) => ref.browseName.name === name);
    }

    it("browses Root -> Objects -> Server", async () => {
        const root = await browseAll("i=84");
        const objects = findRef(root, "Objects");
        assert.ok(objects, "Root has Objects");
        assert.equal(objects.nodeId.toString(), "ns=0;i=85");
        assert.equal(objects.nodeClass, NodeClass.Object);
        assert.equal(objects.isForward, true);
        assert.equal(objects.referenceTypeId.toString(), "ns=0;i=35",
            "Root Organizes Objects");
        assert.equal(objects.typeDefinition.toString(), "ns=0;i=61",
            "Objects is a FolderType");
        assert.ok(findRef(root, "Types") && findRef(root, "Views"));

        const obj = await browseAll("i=85");
        const server = findRef(obj, "Server");
        assert.ok(server, "Objects has Server");
        assert.equal(server.nodeId.toString(), "ns=0;i=2253");
        assert.equal(server.browseName.namespaceIndex, 0);
        assert.equal(server.displayName.text, "Server");
        assert.equal(server.typeDefinition.toString(), "ns=0;i=2004",
            "Server is a ServerType");
        const demo = findRef(obj, "Demo");
        assert.ok(demo, "Objects has Demo");
        assert.equal(demo.nodeId.toString(), "ns=1;s=Demo");
        assert.equal(demo.browseName.namespaceIndex, 1);

        const srv = await browseAll("i=2253");
        const want = { ServerStatus: 2256, NamespaceArray: 2255,
            ServerArray: 2254, ServerCapabilities: 2268 };
        for (const [name, id] of Object.entries(want)) {
            const ref = findRef(srv, name);
            assert.ok(ref, `Server has ${name}`);
            assert.equal(ref.nodeId.toString(), `ns=0;i=${id}`);
        }
        // Inverse direction: Server is organized by Objects.
        const inv = await session.browse({ nodeId: "i=2253",
            browseDirection: BrowseDirection.Inverse,
            referenceTypeId: "Organizes", includeSubtypes: false,
            nodeClassMask: 0, resultMask: 63 });
        assert.equal(inv.statusCode.value, StatusCodes.Good.value);
        assert.ok(inv.references.some((ref) =>
            ref.nodeId.toString() === "ns=0;i=85" && ref.isForward === false));
    });

    it("reads ServerStatus as a structure", async () => {
        const dv = await session.read({ nodeId: "i=2256",
            attributeId: AttributeIds.Value });
        assert.equal(dv.statusCode.value, StatusCodes.Good.value);
        assert.equal(dv.value.dataType, DataType.ExtensionObject);
        const st = dv.value.value;
        assert.ok(st, "a decoded ServerStatusDataType");
        assert.equal(st.constructor.name, "ServerStatusDataType");
        assert.equal(st.state, ServerState.Running);
        assert.ok(st.startTime instanceof Date);
        assert.ok(st.currentTime instanceof Date);
        assert.ok(st.startTime.getTime() <= st.currentTime.getTime());
        assert.ok(Math.abs(st.currentTime.getTime() - Date.now()) < 10000,
            "currentTime is now");
        assert.ok(st.buildInfo.productName.length > 0, "productName");
        assert.ok(st.buildInfo.productUri.length > 0, "productUri");
        assert.ok(st.buildInfo.softwareVersion.length > 0, "softwareVersion");
        // The children agree with the structure.
        const state = await session.read({ nodeId: "i=2259",
            attributeId: AttributeIds.Value });
        assert.equal(state.statusCode.value, StatusCodes.Good.value);
        assert.equal(state.value.value, ServerState.Running);
        const pn = await session.read({ nodeId: "i=2261",
            attributeId: AttributeIds.Value });
        assert.equal(pn.value.value, st.buildInfo.productName);
    });

    it("reads NamespaceArray", async () => {
        const dv = await session.read({ nodeId: "i=2255",
            attributeId: AttributeIds.Value });
        assert.equal(dv.statusCode.value, StatusCodes.Good.value);
        assert.equal(dv.value.dataType, DataType.String);
        const ns = Array.from(dv.value.value);
        assert.ok(ns.length >= 2, "namespace 0 and 1");
        assert.equal(ns[0], UA_NS);
        const endpoints = await client.getEndpoints();
        assert.equal(ns[1], endpoints[0].server.applicationUri,
            "namespace 1 is the server's application URI");
    });

    it("reads CurrentTime, and it advances", async () => {
        const read = async () => {
            const dv = await session.read({ nodeId: "i=2258",
                attributeId: AttributeIds.Value });
            assert.equal(dv.statusCode.value, StatusCodes.Good.value);
            assert.equal(dv.value.dataType, DataType.DateTime);
            return dv.value.value.getTime();
        };
        const t1 = await read();
        assert.ok(Math.abs(t1 - Date.now()) < 10000, "CurrentTime is now");
        await sleep(2100);
        const t2 = await read();
        assert.ok(t2 > t1, `CurrentTime advanced (${t1} -> ${t2})`);
        assert.ok(t2 - t1 >= 1000 && t2 - t1 <= 6000,
            `by about the time waited (${t2 - t1} ms)`);
    });

    async function readAll(nodeId) {
        const ids = [];
        for (let a = 1; a <= 27; a++) {
            ids.push({ nodeId, attributeId: a });
        }
        const dvs = await session.read(ids);
        assert.equal(dvs.length, 27);
        const byId = {};
        dvs.forEach((dv, i) => { byId[i + 1] = dv; });
        return byId;
    }

    function good(dv, what) {
        assert.equal(dv.statusCode.value, StatusCodes.Good.value,
            `${what}: ${dv.statusCode.toString()}`);
        return dv.value;
    }

    async function checkVar(name, dataType, typeId, value) {
        const nodeId = `ns=1;s=${name}`;
        const a = await readAll(nodeId);
        assert.equal(good(a[AttributeIds.NodeId], "NodeId").value.toString(),
            nodeId);
        assert.equal(good(a[AttributeIds.NodeClass], "NodeClass").value,
            NodeClass.Variable);
        const bn = good(a[AttributeIds.BrowseName], "BrowseName").value;
        assert.equal(bn.name, name);
        assert.equal(bn.namespaceIndex, 1);
        assert.equal(good(a[AttributeIds.DisplayName], "DisplayName").value
            .text, name);
        const v = good(a[AttributeIds.Value], "Value");
        assert.equal(v.dataType, dataType);
        assert.equal(v.arrayType, 0, "a scalar");
        assert.equal(v.value, value);
        assert.equal(good(a[AttributeIds.DataType], "DataType").value
            .toString(), `ns=0;i=${typeId}`);
        assert.equal(good(a[AttributeIds.ValueRank], "ValueRank").value, -1);
        const al = good(a[AttributeIds.AccessLevel], "AccessLevel").value;
        assert.equal(al & 3, 3, "CurrentRead | CurrentWrite");
        const ual = good(a[AttributeIds.UserAccessLevel], "UserAccessLevel")
            .value;
        assert.equal(ual & 3, 3, "anonymous may read and write");
        assert.equal(good(a[AttributeIds.Historizing], "Historizing").value,
            false);
        const msi = good(a[AttributeIds.MinimumSamplingInterval],
            "MinimumSamplingInterval").value;
        assert.ok(typeof msi === "number" && msi >= 0);
        assert.equal(good(a[AttributeIds.WriteMask], "WriteMask").dataType,
            DataType.UInt32);
        // Attributes a Variable does not have.
        for (const id of [AttributeIds.IsAbstract, AttributeIds.Symmetric,
            AttributeIds.InverseName, AttributeIds.ContainsNoLoops,
            AttributeIds.EventNotifier, AttributeIds.Executable,
            AttributeIds.UserExecutable]) {
            assert.equal(a[id].statusCode.value,
                StatusCodes.BadAttributeIdInvalid.value,
                `attribute ${id} of a Variable: ${a[id].statusCode}`);
        }
    }

    it("reads every attribute of ns=1;s=v0 (Int32 0)", async () => {
        await checkVar("v0", DataType.Int32, 6, 0);
    });

    it("reads every attribute of ns=1;s=v1 (Double 1.5)", async () => {
        await checkVar("v1", DataType.Double, 11, 1.5);
    });

    it("reads with every TimestampsToReturn", async () => {
        for (const [ts, src, srv] of [[TimestampsToReturn.Both, true, true],
            [TimestampsToReturn.Source, true, false],
            [TimestampsToReturn.Server, false, true],
            [TimestampsToReturn.Neither, false, false]]) {
            const resp = await transact(session,
                new ReadRequest({ timestampsToReturn: ts, maxAge: 0,
                    nodesToRead: [{ nodeId: coerceNodeId("ns=1;s=v2"),
                        attributeId: AttributeIds.Value }] }));
            assert.equal(resp.responseHeader.serviceResult.value,
                StatusCodes.Good.value);
            const dv = resp.results[0];
            assert.equal(dv.value.value, 2);
            assert.equal(dv.serverTimestamp !== null, srv,
                `server timestamp with ${TimestampsToReturn[ts]}`);
            if (!src) {
                assert.equal(dv.sourceTimestamp, null,
                    `no source timestamp with ${TimestampsToReturn[ts]}`);
            }
        }
    });

    it("pages a large folder with BrowseNext", async () => {
        const page = 37;
        const old = session.requestedMaxReferencesPerNode;
        session.requestedMaxReferencesPerNode = page;
        const seen = new Map();
        let pages = 0;
        try {
            let r = await session.browse({ nodeId: "ns=1;s=Demo.Vars",
                browseDirection: BrowseDirection.Forward,
                referenceTypeId: "Organizes", includeSubtypes: true,
                nodeClassMask: NodeClass.Variable, resultMask: 63 });
            for (;;) {
                assert.equal(r.statusCode.value, StatusCodes.Good.value,
                    `page ${pages}: ${r.statusCode.toString()}`);
                pages++;
                assert.ok(r.references.length <= page,
                    `page ${pages} has ${r.references.length} > ${page}`);
                for (const ref of r.references) {
                    const k = ref.nodeId.toString();
                    seen.set(k, (seen.get(k) || 0) + 1);
                    assert.equal(ref.nodeClass, NodeClass.Variable);
                }
                const cp = r.continuationPoint;
                if (!cp || cp.length === 0) {
                    break;
                }
                assert.ok(r.references.length > 0,
                    "a page with a continuation point is not empty");
                assert.ok(pages < 10 * Math.ceil(VARS / page), "bounded");
                r = await session.browseNext(cp, false);
            }
        } finally {
            session.requestedMaxReferencesPerNode = old;
        }
        assert.equal(pages, Math.ceil(VARS / page), "number of pages");
        assert.equal(seen.size, VARS, "every variable");
        for (const [k, n] of seen) {
            assert.equal(n, 1, `${k} seen ${n} times`);
        }
        for (const i of [0, 1, VARS - 1]) {
            assert.ok(seen.has(`ns=1;s=v${i}`), `v${i} seen`);
        }
    });

    it("releases a continuation point", async () => {
        const old = session.requestedMaxReferencesPerNode;
        session.requestedMaxReferencesPerNode = 10;
        try {
            const r = await session.browse({ nodeId: "ns=1;s=Demo.Vars",
                browseDirection: BrowseDirection.Forward,
                referenceTypeId: "Organizes", includeSubtypes: true,
                nodeClassMask: 0, resultMask: 63 });
            assert.equal(r.statusCode.value, StatusCodes.Good.value);
            assert.equal(r.references.length, 10);
            assert.ok(r.continuationPoint && r.continuationPoint.length > 0);
            const rel = await session.browseNext(r.continuationPoint, true);
            assert.equal(rel.statusCode.value, StatusCodes.Good.value);
            assert.equal(rel.references.length, 0);
            const again = await session.browseNext(r.continuationPoint,
                false);
            assert.equal(again.statusCode.value,
                StatusCodes.BadContinuationPointInvalid.value,
                `a released point: ${again.statusCode.toString()}`);
        } finally {
            session.requestedMaxReferencesPerNode = old;
        }
    });

    it("translates browse paths", async () => {
        const paths = [
            makeBrowsePath("RootFolder", "/Objects/Server"),
            makeBrowsePath("RootFolder", "/Objects/1:Demo/1:Vars/1:v0"),
            makeBrowsePath("RootFolder",
                "/Objects/Server.ServerStatus.CurrentTime"),
            makeBrowsePath("RootFolder", "/Objects/NoSuchChild"),
        ];
        const r = await session.translateBrowsePath(paths);
        assert.equal(r.length, 4);
        const one = (i) => {
            assert.equal(r[i].statusCode.value, StatusCodes.Good.value,
                `path ${i}: ${r[i].statusCode.toString()}`);
            assert.equal(r[i].targets.length, 1);
            assert.equal(r[i].targets[0].remainingPathIndex, 0xFFFFFFFF);
            return r[i].targets[0].targetId.toString();
        };
        assert.equal(one(0), "ns=0;i=2253");
        assert.equal(one(1), "ns=1;s=v0");
        assert.equal(one(2), "ns=0;i=2258");
        assert.equal(r[3].statusCode.value, StatusCodes.BadNoMatch.value,
            `missing child: ${r[3].statusCode.toString()}`);
    });

    it("answers an unknown NodeId with BadNodeIdUnknown", async () => {
        const dvs = await session.read([
            { nodeId: "ns=1;s=NoSuchNode", attributeId: AttributeIds.Value },
            { nodeId: "ns=0;i=999999", attributeId: AttributeIds.Value },
            { nodeId: "ns=1;s=v0", attributeId: AttributeIds.Value },
        ]);
        assert.equal(dvs[0].statusCode.value, StatusCodes.BadNodeIdUnknown.value,
            `string id: ${dvs[0].statusCode.toString()}`);
        assert.equal(dvs[1].statusCode.value, StatusCodes.BadNodeIdUnknown.value,
            `numeric id: ${dvs[1].statusCode.toString()}`);
        assert.equal(dvs[2].statusCode.value, StatusCodes.Good.value,
            "a bad node does not spoil the others");
        assert.equal(dvs[2].value.value, 0);
        const b = await session.browse({ nodeId: "ns=1;s=NoSuchNode",
            browseDirection: BrowseDirection.Forward,
            referenceTypeId: "HierarchicalReferences", includeSubtypes: true,
            nodeClassMask: 0, resultMask: 63 });
        assert.equal(b.statusCode.value, StatusCodes.BadNodeIdUnknown.value,
            `browse: ${b.statusCode.toString()}`);
    });
});
