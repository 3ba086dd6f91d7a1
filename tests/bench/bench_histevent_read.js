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
// /proc/PID/stat's utime and stime before and after (10 ms ticks).  Then
// reads all 100,000 with a where clause that matches none of them (OfType
// AlarmConditionType) READS / 5 times: each request examines
// history.max_event_scan events (100,000 by default) and returns none;
// prints the worker's CPU per request and per event examined.
"use strict";

const fs = require("node:fs");
const {
    OPCUAClient, MessageSecurityMode, SecurityPolicy, TimestampsToReturn,
    HistoryReadRequest, ReadEventDetails, constructEventFilter,
    FilterOperator, LiteralOperand, Variant, DataType, resolveNodeId,
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

// All 100,000, a where clause no event passes.
function requestNone() {
    return new HistoryReadRequest({
        historyReadDetails: new ReadEventDetails({
            startTime: new Date(t0),
            endTime: new Date(t0 + 100000 * 1000),
            numValuesPerNode: 10000,
            filter: constructEventFilter(["EventId", "Severity"], {
                elements: [{
                    filterOperator: FilterOperator.OfType,
                    filterOperands: [new LiteralOperand({
                        value: new Variant({ dataType: DataType.NodeId,
                            value: resolveNodeId("i=2915") }) })],
                }],
            }),
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
    const none = Math.max(5, Math.floor(reads / 5));
    let examined = 0;
    const c1 = cpuTicks();
    const w1 = Date.now();
    for (let i = 0; i < none; i++) {
        let r = (await session.historyRead(requestNone())).results[0];
        let pages = 1;
        // At the scan bound: a page of none and a point to go on from.
        while (r.continuationPoint && r.continuationPoint.length) {
            const req = requestNone();
            req.nodesToRead[0].continuationPoint = r.continuationPoint;
            r = (await session.historyRead(req)).results[0];
            pages++;
        }
        if (r.historyData && r.historyData.events
            && r.historyData.events.length) {
            throw new Error(`none-read ${i}: events returned`);
        }
        examined += 100000;
        if (i === 0) {
            console.log(`a where clause that matches nothing over 100000 ` +
                `events: ${pages} request(s) each time`);
        }
    }
    const ms1 = (cpuTicks() - c1) * 10;
    console.log(`... ${none} times: worker CPU ${ms1} ms, ` +
        `${(ms1 * 1e6 / examined).toFixed(1)} ns per event examined, ` +
        `${(ms1 / none).toFixed(1)} ms per 100000; wall ` +
        `${Date.now() - w1} ms`);
    await session.close();
    await client.disconnect();
})().catch((e) => {
    console.error(`bench_histevent_read: ${e.message}`);
    process.exit(1);
});
