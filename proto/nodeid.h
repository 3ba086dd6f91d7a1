/*
 * proto/nodeid.h: the NodeId forms written and read outside the
 * table-driven codec.
 *
 *   binary  an ns=0 numeric NodeId in the smallest of its three binary
 *           encodings (Part 6 §5.2.2.9: TwoByte, FourByte, Numeric), as
 *           the hand-built message headers carry the type id of a body
 *           (proto/securechannel.c, proto/client.c).
 *   text    the NodeId string form (Part 6 §5.3.1.10) as the feed writes
 *           it (docs/feed.md): [ns=N;](i=N|s=TEXT|g=GUID|b=BASE64).
 *
 * Pure: no allocation but from the caller's arena, no I/O.
 */
#ifndef UA_NODEID_H
#define UA_NODEID_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "types.h"

/* The longest binary form ua_nodeid_ns0_put() writes (Numeric). */
#define UA_NODEID_NS0_MAX 7

/*
 * ns=0;i=id into p (UA_NODEID_NS0_MAX bytes of room) in the smallest
 * form: TwoByte for id <= 255, FourByte for id <= 65535, else Numeric.
 * Returns the bytes written (2, 4 or 7).  Inline: every response's
 * header writes one (proto/securechannel.c ua_sc_send), and a call there
 * made its copy a call to memcpy too.
 */
static inline size_t
ua_nodeid_ns0_put(uint8_t *p, uint32_t id)
{
    if (id <= 0xFF) {
        p[0] = 0x00;
        p[1] = (uint8_t)id;
        return 2;
    }
    if (id <= 0xFFFF) {
        p[0] = 0x01;
        p[1] = 0;
        p[2] = (uint8_t)id;
        p[3] = (uint8_t)(id >> 8);
        return 4;
    }
    p[0] = 0x02;
    p[1] = 0;
    p[2] = 0;
    p[3] = (uint8_t)id;
    p[4] = (uint8_t)(id >> 8);
    p[5] = (uint8_t)(id >> 16);
    p[6] = (uint8_t)(id >> 24);
    return 7;
}

/*
 * A numeric ns=0 NodeId at p[n] in any of those three forms: UA_GOOD with
 * *id and *used (its length).  BadDecodingError for another form, another
 * namespace, or too few bytes.
 */
ua_status ua_nodeid_ns0_get(const uint8_t *p, size_t n, size_t *used,
                            uint32_t *id);

/*
 * The NodeId at the start of s[n] in the feed's text form into *id,
 * *used the characters it took (the caller checks what follows).  ns is
 * at most 65535, i= at most 2^32-1, g= is 8-4-4-4-12 hex (text.h), b= is
 * base64 with its padding (RFC 4648 §4).  A string identifier runs to the
 * first stop character (0: to the end of s) and points into s (no copy);
 * an opaque one is decoded into a (one allocation of at most n bytes).
 * UA_GOOD, or BadNodeIdInvalid.
 */
ua_status ua_nodeid_parse(const char *s, size_t n, char stop,
                          struct ua_arena *a, struct ua_nodeid *id,
                          size_t *used);

/*
 * id in the same text form ("ns=" left out for namespace 0; a Guid in
 * lower case; an opaque id, or one of an unknown idtype, as b=) into
 * buf[cap], NUL-terminated: its length, or -1 (and buf "" when cap > 0)
 * when it does not fit.
 */
int ua_nodeid_print(const struct ua_nodeid *id, char *buf, size_t cap);

#endif /* UA_NODEID_H */
