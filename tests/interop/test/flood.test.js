// tests/interop/test/flood.test.js: a flood of sessions that are never
// activated does not lock real clients out (issue 19 item 5,
// docs/design-notes.md D89), with node-opcua as the client.
//
// Starts its own `uabroker -w 1` (UA_INTEROP_UABROKER, in a temporary
// runtime directory) twice:
//   1. limits.max_sessions 100, limits.max_unactivated_per_address 500:
//      500 CreateSessions on 10 SecureChannels (node-opcua's low-level
//      performMessageTransaction: created, never activated) are all
//      Good, the oldest evicted as the table fills (/stats
//      sessions_evicted 400); then a normal node-opcua client connects,
//      creates and activates its session and reads the server's
//      state: Running;
//   2. limits.max_unactivated_per_address 20 (the per-address cap at its
//      limit): 20 CreateSessions from this address are Good, the 21st
//      BadTooManySessions; CloseSession of one of them, and one more is
//      Good again (20 again), the next BadTooManySessions.
//
// Run by tests/interop/run.sh (UA_INTEROP_UABROKER) in `make check`.
"use strict";

const { describe, it, after } = require("node:test");
const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const {
    OPCUAClient,
    AttributeIds,
    StatusCodes,
    CreateSessionRequest,
    CloseSessionRequest,
} = require("node-opcua");
const { until, freePort, stats, sumWorkers } = require("../lib/common.js");

const UABROKER = process.env.UA_INTEROP_UABROKER;
const skip = !UABROKER ? "needs run.sh (UA_INTEROP_UABROKER)" : false;

// A broker of one worker with extra settings; resolves { proc, url,
// sport, log() }.
async function startBroker(extra) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "uabroker-flood-"));
    const port = await freePort();
    const sport = await freePort();
    let log = "";
    const proc = spawn(UABROKER, ["-w", "1", "-p", String(port),
        "--stats", "127.0.0.1:" + sport,
        "--runtime-dir", path.join(dir, "run"), ...extra],
        { stdio: ["ignore", "pipe", "pipe"] });
    proc.stdout.on("data", (d) => { log += d; });
    proc.stderr.on("data", (d) => { log += d; });
    const up = await until(() => /serving opc\.tcp/.test(log), 20000);
    assert.ok(up, "the broker starts: " + log);
    return {
        proc, dir, sport,
        url: "opc.tcp://127.0.0.1:" + port,
        log: () => log,
    };
}

async function stopBroker(b) {
    if (!b) {
        return;
    }
    if (b.proc.exitCode === null) {
        b.proc.kill("SIGTERM");
        await until(() => b.proc.exitCode !== null, 10000);
    }
    fs.rmSync(b.dir, { recursive: true, force: true });
}

// A client with a SecureChannel (None) and no session.
async function channel(url) {
    const c = OPCUAClient.create({
        endpointMustExist: false,
        connectionStrategy: { maxRetry: 0 },
        requestedSessionTimeout: 60000,
    });
    await c.connect(url);
    return c;
}

// One request on c's channel: the response, or the ServiceFault's
// response; its serviceResult as .status.
function transact(c, req) {
    return new Promise((resolve, reject) => {
        c.performMessageTransaction(req, (err, resp) => {
            const r = resp || (err && err.response);
            if (!r) {
                reject(err || new Error("no response"));
                return;
            }
            r.status = r.responseHeader.serviceResult;
            resolve(r);
        });
    });
}

// CreateSession, never activated.
function createSession(c, url, name) {
    return transact(c, new CreateSessionRequest({
        clientDescription: { applicationUri: "urn:flood", applicationName:
            { text: "flood" }, applicationType: 1 },
        endpointUrl: url,
        sessionName: name,
        clientNonce: crypto.randomBytes(32),
        requestedSessionTimeout: 60000,
        maxResponseMessageSize: 0,
    }));
}

describe("session flood (-w 1)", { skip }, () => {
    let broker;
    const clients = [];

    after(async () => {
        for (const c of clients) {
            await c.disconnect().catch(() => {});
        }
        await stopBroker(broker);
    });

    it("500 sessions never activated, then a real client gets in",
        { timeout: 120000 }, async () => {
            broker = await startBroker([
                "--set", "limits.max_sessions=100",
                "--set", "limits.max_unactivated_per_address=500"]);
            let good = 0;
            const bad = {};
            for (let k = 0; k < 10; k++) {
                const c = await channel(broker.url);
                clients.push(c);
                const rs = await Promise.all(Array.from({ length: 50 },
                    (_, i) => createSession(c, broker.url,
                        "flood-" + k + "-" + i)));
                for (const r of rs) {
                    if (r.status.value === StatusCodes.Good.value) {
                        good++;
                    } else {
                        bad[r.status.name] = (bad[r.status.name] || 0) + 1;
                    }
                }
            }
            assert.equal(good, 500, "every CreateSession Good: "
                + JSON.stringify(bad));
            const st = await stats(broker.sport);
            assert.equal(sumWorkers(st, "sessions_evicted"), 400,
                "400 evicted to make room");

            const real = OPCUAClient.create({
                endpointMustExist: false,
                connectionStrategy: { maxRetry: 0 },
            });
            await real.connect(broker.url);
            clients.push(real);
            const session = await real.createSession();
            const dv = await session.read({
                nodeId: "i=2259",       // Server_ServerStatus_State
                attributeId: AttributeIds.Value,
            });
            assert.equal(dv.statusCode.value, StatusCodes.Good.value);
            assert.equal(dv.value.value, 0, "ServerState Running");
            await session.close();
        });

    it("the per-address cap of unactivated sessions at its limit",
        { timeout: 60000 }, async () => {
            for (const c of clients.splice(0)) {
                await c.disconnect().catch(() => {});
            }
            await stopBroker(broker);
            broker = await startBroker([
                "--set", "limits.max_sessions=100",
                "--set", "limits.max_unactivated_per_address=20"]);
            const c = await channel(broker.url);
            clients.push(c);
            const made = [];
            for (let i = 0; i < 20; i++) {
                const r = await createSession(c, broker.url, "cap-" + i);
                assert.equal(r.status.value, StatusCodes.Good.value,
                    "CreateSession " + (i + 1) + " of 20: " + r.status.name);
                made.push(r);
            }
            let r = await createSession(c, broker.url, "cap-21");
            assert.equal(r.status.value,
                StatusCodes.BadTooManySessions.value,
                "the 21st: " + r.status.name);
            // One of them closed: room for exactly one more.
            const close = new CloseSessionRequest({ deleteSubscriptions: true });
            close.requestHeader.authenticationToken = made[0].authenticationToken;
            r = await transact(c, close);
            assert.equal(r.status.value, StatusCodes.Good.value,
                "CloseSession of an unactivated session: " + r.status.name);
            r = await createSession(c, broker.url, "cap-again");
            assert.equal(r.status.value, StatusCodes.Good.value,
                "one more after a close: " + r.status.name);
            r = await createSession(c, broker.url, "cap-again-2");
            assert.equal(r.status.value,
                StatusCodes.BadTooManySessions.value,
                "and no more: " + r.status.name);
        });
});
