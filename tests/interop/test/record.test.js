// tests/interop/test/record.test.js: the subscriber's record of
// tests/interop/lib/common.js (recordValues), which kill, roam and
// roll .test.js count values with, against NotificationMessages made up
// here (no broker).
//
// A keep-alive carries the sequence number of the NotificationMessage
// that comes next (Part 4 §5.14.1.1).  The record once took a
// keep-alive's number as a message seen and then skipped the message
// that came with that number as a duplicate: the values of 1 to 15
// writes missing on every item, no gap in the sequence numbers, after
// any pause of a second or more (a worker retired, a connection cut),
// which read as a silent loss of the server's (docs/design-notes.md
// D109).
"use strict";

const { describe, it } = require("node:test");
const assert = require("node:assert/strict");
const { EventEmitter } = require("node:events");

const { recordValues } = require("../lib/common.js");

// A NotificationMessage of values per clientHandle (none: a keep-alive).
function message(seq, values) {
    if (values === undefined) {
        return { sequenceNumber: seq, notificationData: [] };
    }
    return {
        sequenceNumber: seq,
        notificationData: [{
            monitoredItems: values.map(([h, v]) => ({
                clientHandle: h, value: { value: { value: v } },
            })),
        }],
    };
}

describe("recordValues (lib/common.js)", () => {
    it("a keep-alive does not take the sequence number of the message after it",
       () => {
        const sub = new EventEmitter();
        const rec = recordValues(sub);
        rec.got.push([], []);
        rec.byHandle.set(7, 0);
        rec.byHandle.set(8, 1);
        sub.emit("raw_notification", message(14, [[7, 100007], [8, 100007]]));
        sub.emit("raw_notification", message(15));          /* keep-alive */
        sub.emit("raw_notification", message(15));          /* another */
        sub.emit("raw_notification", message(15, [[7, 100008], [8, 100008]]));
        sub.emit("raw_notification", message(16, [[7, 100009], [8, 100009]]));
        assert.deepEqual(rec.got, [[100007, 100008, 100009],
                                   [100007, 100008, 100009]]);
        assert.equal(rec.dupMessages, 0);
        assert.deepEqual(rec.seqs, [14, "k15", "k15", 15, 16]);
    });

    it("a message handed over twice is taken once", () => {
        const sub = new EventEmitter();
        const rec = recordValues(sub);
        rec.got.push([]);
        rec.byHandle.set(7, 0);
        sub.emit("raw_notification", message(3, [[7, 100003]]));
        sub.emit("raw_notification", message(4, [[7, 100004], [9, 5]]));
        sub.emit("raw_notification", message(4, [[7, 100004], [9, 5]]));
        sub.emit("raw_notification", message(5, [[7, 100005]]));
        assert.deepEqual(rec.got, [[100003, 100004, 100005]]);
        assert.equal(rec.dupMessages, 1);
    });
});
