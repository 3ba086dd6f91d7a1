// tests/bench/bench_hist_proc.js: ReadProcessed Average per hour over a
// day of 1 s values of one node through the whole server, node-opcua
// 2.182.0 as the client (tests/bench/bench_hist_proc.sh starts the broker
// and feeds the values).
//
//   node bench_hist_proc.js URL WORKER_PID [READS]
//
// Asks for the Average of ns=1;s=v7 per hour over 2026-12-04 (86,400 fed
// values, 24 intervals) READS times (default 500) and prints the worker's
// CPU per ReadProcessed, from /proc/PID/stat's utime and stime before and
// after (10 ms ticks: keep READS large).  The first answer is checked:
// 24 Good intervals, each the mean of its hour's fed values.
"use strict";

const fs = require("node:fs");
const {
    OPCUAClient, MessageSecurityMode, SecurityPolicy, TimestampsToReturn,
    HistoryReadRequest, ReadProcessedDetails, AggregateFunction,
} = require("node-opcua");

const [url, pidText, readsText] = process.argv.slice(2);
const pid = Number(pidText);
const reads = Number(readsText || 500);

function cpuTicks() {
    const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
        .split(") ")[1].split(" ");
    return Number(f[11]) + Number(f[12]);
}

function request() {
    return new HistoryReadRequest({
        historyReadDetails: new ReadProcessedDetails({
            startTime: new Date(Date.UTC(2026, 11, 4, 0, 0, 0)),
            endTime: new Date(Date.UTC(2026, 11, 5, 0, 0, 0)),
            processingInterval: 3600 * 1000,
            aggregateType: [AggregateFunction.Average],
            aggregateConfiguration: { useServerCapabilitiesDefaults: true },
        }),
        timestampsToReturn: TimestampsToReturn.Source,
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
    const dvs = (first.historyData && first.historyData.dataValues) || [];
    if (dvs.length !== 24) {
        throw new Error(`${dvs.length} intervals (${first.statusCode}), `
            + "expected 24");
    }
    dvs.forEach((dv, h) => {
        // The fed values are i + 0.25 for second i of the day.
        const want = h * 3600 + 1799.5 + 0.25;
        if ((dv.statusCode.value & 0xC0000000) !== 0
            || Math.abs(dv.value.value - want) > 1e-6) {
            throw new Error(`hour ${h}: ${dv.value.value} `
                + `${dv.statusCode}, expected ${want}`);
        }
    });
    const c0 = cpuTicks();
    const t0 = Date.now();
    for (let i = 0; i < reads; i++) {
        const r = (await session.historyRead(request())).results[0];
        if (!r.historyData || r.historyData.dataValues.length !== 24) {
            throw new Error(`read ${i}: ${r.statusCode}`);
        }
    }
    const ms = (cpuTicks() - c0) * 10;
    console.log(`ReadProcessed Average per hour over 86,400 values, ${reads} `
        + `times: worker CPU ${ms} ms, ${(ms / reads).toFixed(3)} ms per `
        + `ReadProcessed; wall ${Date.now() - t0} ms`);
    await session.close();
    await client.disconnect();
})().catch((e) => {
    console.error(`bench_hist_proc: ${e.message}`);
    process.exit(1);
});
