/*
 * hist/annot.h: the annotations of historized nodes (Part 11 §5.1.2 the
 * Annotations Property, §6.6.6 the Annotation structure), kept in the
 * store's side database "annots" (hist/side.h) per node, time and user.
 *
 * An annotation is the DataValue HistoryUpdate gave
 * (UpdateStructureDataDetails, Part 11 §6.9.3): its Value the Annotation
 * (message, userName, annotationTime), its SourceTimestamp the time of
 * the data it is about.  What makes one unique (Part 11 §6.9.3 leaves it
 * to the server): the node, the SourceTimestamp and the Annotation's
 * userName, so each user may annotate a value once; the key's suffix is
 * the userName's bytes, the entry the DataValue packed after its own
 * time (hist/sample.h).
 *
 * Concurrency and errors as hist/store.h.
 */
#ifndef HS_ANNOT_H
#define HS_ANNOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"
#include "side.h"
#include "store.h"

#define HS_ANNOT_USER_MAX HS_SIDE_SUFFIX_MAX

/* PerformUpdateType (Part 11 §6.9.3): hs_upd's and Remove. */
#define HS_ANNOT_REMOVE 4

/*
 * One annotation of node key (its own write transaction): op is
 * HS_UPD_INSERT, HS_UPD_REPLACE, HS_UPD_UPDATE or HS_ANNOT_REMOVE; user
 * the Annotation's userName.  0 and *out (a removal that found its entry
 * is HS_REPLACED), or -EINVAL (no SourceTimestamp, a name too long, an
 * op out of range), -ENOENT (node not registered), -ENOSPC, -EIO.
 */
int hs_annot_update(struct hs_store *s, uint64_t key, int op,
                    const uint8_t *dv, size_t len, const uint8_t *user,
                    size_t user_len, enum hs_outcome *out);

/*
 * Readers: node key's annotations between lo and hi (inclusive), in rd's
 * snapshot, as hs_side_seek(); hs_annot_next() the next: 0 with its
 * DataValue as a sample (body in the map) and its userName, -ENOENT at
 * the end, -EINVAL for an entry that does not parse.
 */
int hs_annot_seek(struct hs_side_read *r, struct hs_read *rd, uint64_t key,
                  int64_t lo, int64_t hi, bool reverse);
int hs_annot_next(struct hs_side_read *r, struct hs_sample *smp,
                  const uint8_t **user, size_t *user_len);

#endif /* HS_ANNOT_H */
