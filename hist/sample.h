/*
 * hist/sample.h: one historized value as the store keeps it, and the
 * blocks of samples one store key holds (docs/architecture.md §5.5).
 *
 * A value arrives as its encoded DataValue (Part 6 §5.2.2.17), exactly the
 * bytes the broker put in the notification block: a mask, the Variant,
 * the StatusCode, then the timestamps and picoseconds.  The timestamps
 * come last, so a sample splits without decoding the Variant: the body
 * (mask without the timestamp bits, Variant, StatusCode) is kept as it
 * is, the timestamps are delta-coded.  Reading a sample writes the
 * DataValue back: the body copied, the timestamps asked for appended.
 *
 * A block is a small header (the number of samples and the time of the
 * last one) then the samples back to back, in time order (equal times
 * in arrival order).  A sample is
 *
 *   varint  its time minus the previous sample's (the first: minus the
 *           block's key time, the first sample's time, so 0)
 *   varint  (body length - 1) << 3 | timestamps (HS_SF_*)
 *   [zigzag varint  server timestamp minus the time]  (HS_SF_DELTA)
 *   [uint16 source picoseconds] [uint16 server picoseconds]
 *           (after a byte saying which, when HS_SF_PS)
 *   body
 *
 * A Double sampled every second: 4 + 1 + 10 bytes (the body is mask,
 * type and eight bytes), 15 bytes.
 *
 * The time of a sample is its source timestamp, or its server timestamp
 * when it has none (Part 11 §4.4: raw history is ordered by source time).
 * Times are DateTime ticks (100 ns since 1601), never negative here.
 *
 * Pure: no I/O, no clock; any thread on distinct arguments.
 */
#ifndef HS_SAMPLE_H
#define HS_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DataValue mask bits (Part 6 §5.2.2.17). */
#define HS_DV_VALUE       0x01
#define HS_DV_STATUS      0x02
#define HS_DV_SOURCE_TS   0x04
#define HS_DV_SERVER_TS   0x08
#define HS_DV_SOURCE_PS   0x10
#define HS_DV_SERVER_PS   0x20
#define HS_DV_TIMES       0x3C

/* A sample's timestamps (the low 3 bits of the length varint): one of the
 * four forms, and HS_SF_PS. */
#define HS_SF_SAME        0x00u     /* source and server, equal */
#define HS_SF_DELTA       0x01u     /* server ts = time + zigzag delta */
#define HS_SF_SRC_ONLY    0x02u     /* no server timestamp */
#define HS_SF_SRV_ONLY    0x03u     /* no source timestamp: time is server */
#define HS_SF_FORM        0x03u
#define HS_SF_PS          0x04u     /* a picoseconds byte follows */

#define HS_BLOCK_HDR      12u       /* uint32 count, int64 last time */
#define HS_SAMPLE_OVER    24u       /* bytes a sample adds beyond its body,
                                       at most */
#define HS_BODY_MAX       (1u << 24)/* a body longer is refused */

/* timestampsToReturn (Part 4 §7.40). */
enum hs_ts {
    HS_TS_SOURCE = 0,
    HS_TS_SERVER = 1,
    HS_TS_BOTH = 2,
    HS_TS_NEITHER = 3
};

/* One sample, as split from a DataValue or read from a block. */
struct hs_sample {
    int64_t        t;           /* the time (source, else server) */
    int64_t        srv;         /* server timestamp (when has_srv) */
    const uint8_t *body;        /* mask (no time bits), Variant, status */
    uint32_t       body_len;    /* >= 1 */
    uint16_t       src_ps;
    uint16_t       srv_ps;
    bool           has_src;
    bool           has_srv;
};

/*
 * Split the encoded DataValue dv[len] into s (s->body points into dv).
 * -EINVAL when it is empty, its mask has unknown bits, it is shorter than
 * its timestamps, it has no timestamp at all, or a timestamp is negative.
 */
int hs_sample_split(const uint8_t *dv, size_t len, struct hs_sample *s);

/*
 * Write s as an encoded DataValue into buf[cap] with the timestamps that
 * ts asks for (those it has); the bytes written, or 0 when cap is short.
 * hs_sample_dv_size() says how many it takes.
 */
size_t hs_sample_dv_size(const struct hs_sample *s, enum hs_ts ts);
size_t hs_sample_dv_write(const struct hs_sample *s, enum hs_ts ts,
                          uint8_t *buf, size_t cap);

/* The StatusCode of s (Good, 0, when its body has none). */
uint32_t hs_sample_status(const struct hs_sample *s);

/* Bytes hs_sample_pack() writes for s after a sample of time prev. */
size_t hs_sample_packed_size(const struct hs_sample *s, int64_t prev);

/*
 * Pack s after a sample of time prev (s->t >= prev) at p, which has room
 * for hs_sample_packed_size() bytes; the position after it.
 */
uint8_t *hs_sample_pack(const struct hs_sample *s, int64_t prev,
                        uint8_t *p);

/*
 * Unpack the sample at *p (before end) that follows a sample of time
 * prev into s (s->body points into the block) and advance *p: 0, or
 * -EINVAL when the bytes are not a sample (a damaged store).
 */
int hs_sample_unpack(const uint8_t **p, const uint8_t *end, int64_t prev,
                     struct hs_sample *s);

/* A block's header. */
static inline uint32_t
hs_block_count(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16
           | (uint32_t)b[3] << 24;
}

static inline int64_t
hs_block_last(const uint8_t *b)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[4 + i];
    return (int64_t)v;
}

void hs_block_hdr_set(uint8_t *b, uint32_t count, int64_t last);

/*
 * Check a whole block b[len] whose first sample has time first: every
 * sample unpacks, times never go back, the header's count and last time
 * agree.  0 or -EINVAL.
 */
int hs_block_check(const uint8_t *b, size_t len, int64_t first);

#endif /* HS_SAMPLE_H */
