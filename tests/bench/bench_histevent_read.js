// tests/bench/bench_histevent_read.js: HistoryRead ReadEventDetails of
// 10,000 events of the Server through the whole server, node-opcua 2.182.0
// as the client (tests/bench/bench_histevent_read.sh starts the broker and
// feeds the events).
//
//   node bench_histevent_read.js URL WORKER_PID [READS]
//
// Reads i=2253's events between 2026-12-05T10:00:00Z and 10,000 s later
// (the first 10,000 fed, one page) with 6 select clauses (EventId,
// EventType, Time, Message, Severity, 1:Temperature) READS times (default
// 100) and prints the worker's CPU per event returned, from
// /proc/PID/stat's utime and stime before and after (10 ms ticks).
"use strict";

const fs = require("node:fs");
const {
    OPCUAClient, MessageSecurityMode, SecurityPolicy, TimestampsToReturn,
    HistoryReadRequest, ReadEventDetails, constructEventFilter,
} = require("node-opcua");

const [url, pidText, readsText] = process.argv.slice(2);
const pid = Number(pidText);
const reads = Number(readsText || 100);
const t0 = Date.UTC(2026, 11, 5, 10, 0, 0);

function cpuTicks() {
    const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
        .split(") ")[1].split(" ");
    return Number(f[11]) + Number(f[12]);
}

function request() {
    return new HistoryReadRequest({
        historyReadDetails: new ReadEventDetails({
            startTime: new Date(t0),
            endTime: new Date(t0 + 10000 * 1000),
            numValuesPerNode: 10000,
            filter: constructEventFilter(["EventId", "EventType", "Time",
                "Message", "Severity", "1:Temperature"]),
        }),
        timestampsToReturn: TimestampsToReturn.Source,
        nodesToRead: [{ nodeId: "i=2253" }],
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
    const n = first.historyData ? first.historyData.events.length : 0;
    if (n !== 10000 || (first.continuationPoint
                        && first.continuationPoint.length)) {
        throw new Error(`${n} events in one page, expected 10000 ` +
            `(${first.statusCode})`);
    }
    const c0 = cpuTicks();
    const w0 = Date.now();
    for (let i = 0; i < reads; i++) {
        const r = (await session.historyRead(request())).results[0];
        if (!r.historyData || r.historyData.events.length !== n) {
            throw new Error(`read ${i}: ${r.statusCode}`);
        }
    }
    const ms = (cpuTicks() - c0) * 10;
    console.log(`HistoryRead ReadEventDetails of ${n} events, ${reads} ` +
        `times: worker CPU ${ms} ms, ${(ms * 1e6 / (reads * n)).toFixed(1)}` +
        ` ns per event; wall ${Date.now() - w0} ms`);
    await session.close();
    await client.disconnect();
})().catch((e) => {
    console.error(`bench_histevent_read: ${e.message}`);
    process.exit(1);
});
