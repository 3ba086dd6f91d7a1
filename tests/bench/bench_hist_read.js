// tests/bench/bench_hist_read.js: HistoryRead raw of 10,000 values of one
// node through the whole server, node-opcua 2.182.0 as the client
// (tests/bench/bench_hist_read.sh starts the broker and feeds the values).
//
//   node bench_hist_read.js URL WORKER_PID [READS]
//
// Reads ns=1;s=v7 between 2026-12-05T10:00:00Z and 13:00:00Z (the 10,000
// fed values, one page, both timestamps) READS times (default 300) and
// prints the worker's CPU per value returned, from /proc/PID/stat's utime
// and stime before and after (10 ms ticks: keep READS * 10,000 large).
"use strict";

const fs = require("node:fs");
const {
    OPCUAClient, MessageSecurityMode, SecurityPolicy, TimestampsToReturn,
    HistoryReadRequest, ReadRawModifiedDetails,
} = require("node-opcua");

const [url, pidText, readsText] = process.argv.slice(2);
const pid = Number(pidText);
const reads = Number(readsText || 300);

function cpuTicks() {
    const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
        .split(") ")[1].split(" ");
    return Number(f[11]) + Number(f[12]);
}

function request() {
    return new HistoryReadRequest({
        historyReadDetails: new ReadRawModifiedDetails({
            startTime: new Date(Date.UTC(2026, 11, 5, 10, 0, 0)),
            endTime: new Date(Date.UTC(2026, 11, 5, 13, 0, 0)),
            numValuesPerNode: 10000,
        }),
        timestampsToReturn: TimestampsToReturn.Both,
        nodesToRead: [{ nodeId: "ns=1;s=v7" }],
    });
}

(async () => {
    const client = OPCUAClient.create({
        securityMode: MessageSecurityMode.None,
        securityPolicy: SecurityPolicy.None,
        endpointMustExist: false,
        connectionStrategy: { maxRetry: 0 },
    });
    await client.connect(url);
    const session = await client.createSession();
    const first = (await session.historyRead(request())).results[0];
    const n = first.historyData.dataValues.length;
    if (n !== 10000 || (first.continuationPoint
                        && first.continuationPoint.length)) {
        throw new Error(`${n} values in one page expected 10000`);
    }
    const c0 = cpuTicks();
    const t0 = Date.now();
    for (let i = 0; i < reads; i++) {
        const r = (await session.historyRead(request())).results[0];
        if (!r.historyData || r.historyData.dataValues.length !== n) {
            throw new Error(`read ${i}: ${r.statusCode}`);
        }
    }
    const ms = (cpuTicks() - c0) * 10;
    console.log(`HistoryRead raw of ${n} values, ${reads} times: worker `
        + `CPU ${ms} ms, ${(ms * 1e6 / (reads * n)).toFixed(1)} ns per `
        + `value; wall ${Date.now() - t0} ms`);
    await session.close();
    await client.disconnect();
})().catch((e) => {
    console.error(`bench_hist_read: ${e.message}`);
    process.exit(1);
});
