// tests/interop/test/security.test.js: secured channels, the trust list
// and UserName logins against node-opcua 2.182.0.
//
// Run by tests/interop/run.sh, which also passes the broker's PKI folder
// (UA_INTEROP_BROKER_PKI), its pid (UA_INTEROP_BROKER_PID, for SIGHUP) and
// makes the user "interop" (role operator, password in
// UA_INTEROP_PASSWORD) with `uabroker passwd`.  node-opcua's client
// certificate is not trusted at first: the broker refuses it and puts it
// in rejected/; the test moves it to trusted/certs and sends SIGHUP, as an
// operator would (no trust on first use).
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
    UserTokenType,
} = require("node-opcua");

const URL = process.env.UA_INTEROP_URL;
const BROKER_PKI = process.env.UA_INTEROP_BROKER_PKI;
const BROKER_PID = Number(process.env.UA_INTEROP_BROKER_PID || 0);
const PASSWORD = process.env.UA_INTEROP_PASSWORD;
const skip = !URL || !BROKER_PKI || !BROKER_PID || !PASSWORD
    ? "needs run.sh (UA_INTEROP_BROKER_PKI, _PID, _PASSWORD)" : false;

function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

describe("security: Basic256Sha256 SignAndEncrypt", { skip }, () => {
    let pkiRoot;
    let cm;

    function makeClient() {
        return OPCUAClient.create({
            applicationName: "uabroker-interop-security",
            clientCertificateManager: cm,
            securityMode: MessageSecurityMode.SignAndEncrypt,
            securityPolicy: SecurityPolicy.Basic256Sha256,
            endpointMustExist: false,
            keepSessionAlive: false,
            requestedSessionTimeout: 60000,
            connectionStrategy: { maxRetry: 0, initialDelay: 100,
                                  maxDelay: 200 },
        });
    }

    before(async () => {
        pkiRoot = fs.mkdtempSync(path.join(os.tmpdir(),
                                           "uabroker-interop-sec-"));
        cm = new OPCUACertificateManager({
            rootFolder: pkiRoot,
            automaticallyAcceptUnknownCertificate: true,
        });
        await cm.initialize();
    });

    after(async () => {
        if (cm) {
            await cm.dispose();
        }
        fs.rmSync(pkiRoot, { recursive: true, force: true });
    });

    it("refuses the untrusted client certificate and saves it in rejected/",
       async () => {
        const client = makeClient();
        const rejected = path.join(BROKER_PKI, "rejected");
        let failed = false;
        try {
            await client.connect(URL);
            await client.createSession();
        } catch (e) {
            failed = true;
        }
        await client.disconnect();
        assert.ok(failed, "an untrusted certificate must not get a session");
        let files = [];
        for (let i = 0; i < 40 && files.length === 0; i++) {
            files = fs.readdirSync(rejected).filter((f) =>
                /^[0-9a-f]{40}\.der$/.test(f));
            if (files.length === 0) {
                await sleep(100);
            }
        }
        assert.equal(files.length, 1, "one certificate in rejected/");
        // The operator's decision: trust it, reload.
        for (const f of files) {
            fs.renameSync(path.join(rejected, f),
                          path.join(BROKER_PKI, "trusted", "certs", f));
        }
        process.kill(BROKER_PID, "SIGHUP");
        await sleep(500);
    });

    it("accepts it after the move and SIGHUP; UserName login, Read, UserAccessLevel",
       async () => {
        const client = makeClient();
        await client.connect(URL);
        try {
            const session = await client.createSession({
                type: UserTokenType.UserName,
                userName: "interop",
                password: PASSWORD,
            });
            const dv = await session.read({
                nodeId: "ns=0;i=2258", attributeId: AttributeIds.Value });
            assert.equal(dv.statusCode.value, StatusCodes.Good.value);
            assert.ok(dv.value.value instanceof Date);
            const ual = await session.read({
                nodeId: "ns=1;s=v0",
                attributeId: AttributeIds.UserAccessLevel });
            assert.equal(ual.value.value & 0x03, 0x03,
                         "an operator may read and write");
            await session.close();
        } finally {
            await client.disconnect();
        }
    });

    it("refuses a wrong password", async () => {
        const client = makeClient();
        await client.connect(URL);
        try {
            await assert.rejects(client.createSession({
                type: UserTokenType.UserName,
                userName: "interop",
                password: PASSWORD + "-wrong",
            }), /BadIdentityTokenInvalid|BadUserAccessDenied/);
        } finally {
            await client.disconnect();
        }
    });
});
