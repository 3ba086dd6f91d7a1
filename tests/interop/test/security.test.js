// tests/interop/test/security.test.js: secured channels, the trust list
// and the three user token types against node-opcua 2.182.0.
//
// Run by tests/interop/run.sh, which passes the broker's PKI folder
// (UA_INTEROP_BROKER_PKI), its pid (UA_INTEROP_BROKER_PID, for SIGHUP), a
// scratch folder under its temporary directory (UA_INTEROP_PKI) and makes
// the user "interop" (role operator, password in UA_INTEROP_PASSWORD) with
// `uabroker passwd`.
//
// 1. node-opcua's client certificate is not trusted at first: the broker
//    refuses it (BadSecurityChecksFailed on the wire, BadCertificateUntrusted
//    in its log, UA_INTEROP_BROKER_LOG) and puts it in rejected/; it stays
//    refused while it sits there; the test moves it to trusted/certs, as an operator would (no trust on
//    first use), and drops an X509 user certificate into
//    trusted_users/certs; SIGHUP reloads both.
// 2. The matrix: Basic256Sha256, Aes128_Sha256_RsaOaep and
//    Aes256_Sha256_RsaPss, each in Sign and SignAndEncrypt; on each
//    channel an anonymous, a UserName and an X509 session, each reading
//    CurrentTime and UserAccessLevel (the operator may write, the X509
//    user is a viewer: security.x509_role's default).
// 3. A wrong password, and an unknown user: BadIdentityTokenRejected (docs/configuration.md:
//    every password failure gives that code; the fourth within 10 s is
//    BadUserAccessDenied); an X509 user certificate that is not in
//    trusted_users/: BadIdentityTokenRejected.
//
// node-opcua makes its client certificate once (OPCUACertificateManager
// in a scratch folder) and every client reuses it.
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
// node-opcua's own dependency (pinned by package-lock.json): PEM to DER
// and key loading for the X509 user token.
const { readCertificate, readPrivateKey, keyOperationsFromPrivateKey } =
    require("node-opcua-crypto");

const URL = process.env.UA_INTEROP_URL;
const BROKER_PKI = process.env.UA_INTEROP_BROKER_PKI;
const BROKER_PID = Number(process.env.UA_INTEROP_BROKER_PID || 0);
const PASSWORD = process.env.UA_INTEROP_PASSWORD;
const BROKER_LOG = process.env.UA_INTEROP_BROKER_LOG;
const SCRATCH = process.env.UA_INTEROP_PKI || os.tmpdir();
const skip = !URL || !BROKER_PKI || !BROKER_PID || !PASSWORD
    ? "needs run.sh (UA_INTEROP_BROKER_PKI, _PID, _PASSWORD)" : false;

const POLICIES = [
    ["Basic256Sha256", SecurityPolicy.Basic256Sha256],
    ["Aes128_Sha256_RsaOaep", SecurityPolicy.Aes128_Sha256_RsaOaep],
    ["Aes256_Sha256_RsaPss", SecurityPolicy.Aes256_Sha256_RsaPss],
];
const MODES = [
    ["Sign", MessageSecurityMode.Sign],
    ["SignAndEncrypt", MessageSecurityMode.SignAndEncrypt],
];

function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

// A user certificate and key made by a second certificate manager (its
// own key pair: a user is not the application).
async function makeUser(root, name, uri) {
    const cm = new OPCUACertificateManager({ rootFolder: path.join(root, name) });
    await cm.initialize();
    const pem = path.join(root, name + ".pem");
    await cm.createSelfSignedCertificate({
        applicationUri: uri,
        subject: "/CN=" + name,
        dns: [],
        startDate: new Date(Date.now() - 3600 * 1000),
        validity: 30,
        outputFile: pem,
    });
    const user = {
        der: readCertificate(pem),
        ops: keyOperationsFromPrivateKey(readPrivateKey(path.join(
            root, name, "own", "private", "private_key.pem"))),
    };
    await cm.dispose();
    return user;
}

describe("security: trust list, policies x modes, user tokens", { skip }, () => {
    let pkiRoot;
    let cm;
    let user;       // trusted in trusted_users/certs
    let stranger;   // not trusted

    function makeClient(policy, mode) {
        return OPCUAClient.create({
            applicationName: "uabroker-interop-security",
            clientCertificateManager: cm,
            securityMode: mode,
            securityPolicy: policy,
            endpointMustExist: false,
            keepSessionAlive: false,
            requestedSessionTimeout: 60000,
            connectionStrategy: { maxRetry: 0, initialDelay: 100,
                                  maxDelay: 200 },
        });
    }

    async function readChecks(session) {
        const dv = await session.read({
            nodeId: "ns=0;i=2258", attributeId: AttributeIds.Value });
        assert.equal(dv.statusCode.value, StatusCodes.Good.value);
        assert.ok(dv.value.value instanceof Date, "CurrentTime is a Date");
        const ual = await session.read({
            nodeId: "ns=1;s=v0", attributeId: AttributeIds.UserAccessLevel });
        assert.equal(ual.statusCode.value, StatusCodes.Good.value);
        return ual.value.value;
    }

    before(async () => {
        pkiRoot = fs.mkdtempSync(path.join(SCRATCH, "security-"));
        cm = new OPCUACertificateManager({
            rootFolder: path.join(pkiRoot, "client"),
            automaticallyAcceptUnknownCertificate: true,
        });
        await cm.initialize();
        user = await makeUser(pkiRoot, "interop-user", "urn:interop:user");
        stranger = await makeUser(pkiRoot, "interop-stranger",
                                  "urn:interop:stranger");
    });

    after(async () => {
        if (cm) {
            await cm.dispose();
        }
        fs.rmSync(pkiRoot, { recursive: true, force: true });
    });

    it("refuses the untrusted client certificate (BadSecurityChecksFailed) and saves it in rejected/",
       async () => {
        const rejected = path.join(BROKER_PKI, "rejected");
        const before = new Set(fs.existsSync(rejected)
            ? fs.readdirSync(rejected) : []);
        const client = makeClient(SecurityPolicy.Basic256Sha256,
                                  MessageSecurityMode.SignAndEncrypt);
        let error = null;
        try {
            await client.connect(URL);
            await client.createSession();
        } catch (e) {
            error = e;
        }
        await client.disconnect();
        assert.ok(error, "an untrusted certificate must not get a session");
        let files = [];
        for (let i = 0; i < 40 && files.length === 0; i++) {
            files = fs.readdirSync(rejected).filter((f) =>
                /^[0-9a-f]{40}\.der$/.test(f) && !before.has(f));
            if (files.length === 0) {
                await sleep(100);
            }
        }
        assert.equal(files.length, 1, "one new certificate in rejected/");
        // node-opcua does not hand the ERR's code to the caller; the wire
        // code (BadSecurityChecksFailed) is asserted by
        // tests/integ/integ_security.c, the cause is in the broker's log.
        if (BROKER_LOG) {
            const log = fs.readFileSync(BROKER_LOG, "utf8");
            assert.ok(log.includes(files[0] + " refused: "
                                   + "BadCertificateUntrusted"),
                      "the broker logs the refusal as untrusted");
        }
        // Still refused while it sits in rejected/.
        const again = makeClient(SecurityPolicy.Aes128_Sha256_RsaOaep,
                                 MessageSecurityMode.Sign);
        await assert.rejects(async () => {
            await again.connect(URL);
            await again.createSession();
        });
        await again.disconnect();
        // The operator's decision: trust it; and the X509 user.
        for (const f of files) {
            fs.renameSync(path.join(rejected, f),
                          path.join(BROKER_PKI, "trusted", "certs", f));
        }
        const users = path.join(BROKER_PKI, "trusted_users", "certs");
        fs.mkdirSync(users, { recursive: true, mode: 0o700 });
        fs.writeFileSync(path.join(users, "interop-user.der"), user.der);
        process.kill(BROKER_PID, "SIGHUP");
        await sleep(500);
    });

    for (const [pname, policy] of POLICIES) {
        for (const [mname, mode] of MODES) {
            it(`${pname} ${mname}: anonymous, UserName and X509 sessions read`,
               async () => {
                const client = makeClient(policy, mode);
                await client.connect(URL);
                try {
                    const anon = await client.createSession();
                    await readChecks(anon);
                    await anon.close();

                    const op = await client.createSession({
                        type: UserTokenType.UserName,
                        userName: "interop",
                        password: PASSWORD,
                    });
                    assert.equal((await readChecks(op)) & 0x03, 0x03,
                                 "an operator may read and write");
                    await op.close();

                    const x5 = await client.createSession({
                        type: UserTokenType.Certificate,
                        certificateData: user.der,
                        keyOperations: user.ops,
                    });
                    assert.equal((await readChecks(x5)) & 0x03, 0x01,
                                 "an X509 user is a viewer "
                                 + "(security.x509_role)");
                    await x5.close();
                } finally {
                    await client.disconnect();
                }
            });
        }
    }

    it("refuses a wrong password and an unknown user alike (BadIdentityTokenRejected)", async () => {
        const client = makeClient(SecurityPolicy.Aes256_Sha256_RsaPss,
                                  MessageSecurityMode.SignAndEncrypt);
        await client.connect(URL);
        try {
            await assert.rejects(client.createSession({
                type: UserTokenType.UserName,
                userName: "interop",
                password: PASSWORD + "-wrong",
            }), /BadIdentityTokenRejected/);
            // No user enumeration: a user that does not exist reads the
            // same (two failures: under security.login_failure_threshold).
            await assert.rejects(client.createSession({
                type: UserTokenType.UserName,
                userName: "nobody-here",
                password: PASSWORD,
            }), /BadIdentityTokenRejected/);
            // The right one still works on the same channel.
            const op = await client.createSession({
                type: UserTokenType.UserName,
                userName: "interop",
                password: PASSWORD,
            });
            await readChecks(op);
            await op.close();
        } finally {
            await client.disconnect();
        }
    });

    it("refuses an X509 user that is not in trusted_users/ (BadIdentityTokenRejected)",
       async () => {
        const client = makeClient(SecurityPolicy.Basic256Sha256,
                                  MessageSecurityMode.Sign);
        await client.connect(URL);
        try {
            await assert.rejects(client.createSession({
                type: UserTokenType.Certificate,
                certificateData: stranger.der,
                keyOperations: stranger.ops,
            }), /BadIdentityTokenRejected/);
        } finally {
            await client.disconnect();
        }
    });
});
