/*
 * broker/histcmd.c: `uabroker history list`, `uabroker history export`
 * and `uabroker history events` (broker/histcmd.h): the history store
 * (hist/store.h, hist/events.h, hist/side.h) opened read-only, its
 * NodeIds and values printed with the feed's text forms
 * (broker/feedline.h), its times as RFC 3339 (proto/text.h).  An event is
 * the fan-out's record as the historian kept it (shm/fanout.h): its
 * fields are found by path and decoded one by one.
 *
 * A one-shot command, not the server: it allocates as it likes (one
 * arena per value) and exits.
 */
#include "histcmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "feedline.h"
#include "hist/events.h"
#include "hist/side.h"
#include "hist/store.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeid.h"
#include "proto/status_gen.h"
#include "proto/text.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"

static void bk_histcmd_usage(FILE *err);
static void bk_histcmd_time(int64_t t, char *buf, size_t cap);
static int bk_histcmd_list_one(void *arg, uint64_t key,
                               const struct hs_node *nd,
                               const uint8_t *nodeid, size_t len);
static int bk_histcmd_list(struct hs_store *s, FILE *out, FILE *err);
static int bk_histcmd_range(const char *what, int argc, char **argv,
                            int64_t *lo, int64_t *hi, FILE *err);
static int bk_histcmd_export(struct hs_store *s, int argc, char **argv,
                             FILE *out, FILE *err);
static bool bk_histcmd_field(const struct shm_fo_ev_field *f, int nf,
                             const char *path, struct ua_arena *a,
                             struct ua_variant *v);
static void bk_histcmd_csv(FILE *out, const char *s, bool last);
static void bk_histcmd_event(const struct hs_event *ev, struct ua_arena *a,
                             FILE *out);
static int bk_histcmd_events(struct hs_store *s, int argc, char **argv,
                             FILE *out, FILE *err);

static void
bk_histcmd_usage(FILE *err)
{
    fprintf(err, "usage: uabroker [options] history list\n"
                 "       uabroker [options] history export NODEID "
                 "[FROM [TO]]\n"
                 "       uabroker [options] history events NOTIFIER "
                 "[FROM [TO]]\n");
}

static void
bk_histcmd_time(int64_t t, char *buf, size_t cap)
{
    if (ua_text_datetime_print(t, buf, cap) < 0)
        snprintf(buf, cap, "%" PRId64, t);
}

/* One line of `list`. */
static int
bk_histcmd_list_one(void *arg, uint64_t key, const struct hs_node *nd,
                    const uint8_t *nodeid, size_t len)
{
    FILE            *out = arg;
    struct ua_nodeid id;
    uint8_t          abuf[4608];
    struct ua_arena  a;
    char             name[1024], first[40], last[40];

    (void)key;
    ua_arena_init(&a, abuf, sizeof(abuf));
    if (ua_decode(nodeid, len, NULL, &id, &ua_types[UA_TYPE_NODEID], &a,
                  NULL) != UA_GOOD)
        snprintf(name, sizeof(name), "(bad NodeId)");
    else
        bk_feedline_print_nodeid(&id, name, sizeof(name));
    bk_histcmd_time(nd->first, first, sizeof(first));
    bk_histcmd_time(nd->last, last, sizeof(last));
    fprintf(out, "%s values=%" PRIu64 " bytes=%" PRIu64 " first=%s "
            "last=%s dropped=%" PRIu64 "\n", name, nd->samples, nd->bytes,
            nd->samples ? first : "-", nd->samples ? last : "-",
            nd->dropped);
    return 0;
}

static int
bk_histcmd_list(struct hs_store *s, FILE *out, FILE *err)
{
    struct hs_totals    t;
    struct hs_ev_totals et;
    struct hs_events   *ev;
    uint64_t            mod = 0, modb = 0, an = 0, anb = 0;
    char                e[256], first[40], last[40];

    if (hs_store_nodes(s, bk_histcmd_list_one, out) != 0
        || hs_store_totals(s, &t) != 0
        || hs_side_stat(s, HS_SIDE_MODIFIED, &mod, &modb) != 0
        || hs_side_stat(s, HS_SIDE_ANNOTS, &an, &anb) != 0) {
        fprintf(err, "uabroker: history store: %s\n", hs_store_error(s));
        return 1;
    }
    fprintf(out, "total nodes=%" PRIu64 " values=%" PRIu64 " bytes=%" PRIu64
            " blocks=%" PRIu64 " dropped=%" PRIu64 " rejected=%" PRIu64
            " file_bytes=%" PRIu64 "\n", t.nodes, t.samples, t.bytes,
            t.blocks, t.dropped, t.rejected, hs_store_file_bytes(s));
    fprintf(out, "modified values=%" PRIu64 " bytes=%" PRIu64 "\n"
            "annotations count=%" PRIu64 " bytes=%" PRIu64 "\n", mod, modb,
            an, anb);
    /* A store the historian kept no events in has none to show. */
    ev = hs_events_open(s, e, sizeof(e));
    memset(&et, 0, sizeof(et));
    if (ev != NULL && hs_events_totals(ev, &et) != 0)
        memset(&et, 0, sizeof(et));
    hs_events_close(ev);
    bk_histcmd_time(et.first, first, sizeof(first));
    bk_histcmd_time(et.last, last, sizeof(last));
    fprintf(out, "events count=%" PRIu64 " bytes=%" PRIu64 " first=%s "
            "last=%s dropped=%" PRIu64 " duplicates=%" PRIu64
            " rejected=%" PRIu64 "\n", et.events, et.bytes,
            et.events ? first : "-", et.events ? last : "-", et.dropped,
            et.duplicates, et.rejected);
    return 0;
}

/* FROM and TO of argv[0..argc) (RFC 3339; missing: all): 0, or 2. */
static int
bk_histcmd_range(const char *what, int argc, char **argv, int64_t *lo,
                 int64_t *hi, FILE *err)
{
    *lo = 0;
    *hi = INT64_MAX;
    if ((argc > 0 && ua_text_datetime_parse(argv[0], strlen(argv[0]),
                                            UA_TEXT_XML, lo) != 0)
        || (argc > 1 && ua_text_datetime_parse(argv[1], strlen(argv[1]),
                                               UA_TEXT_XML, hi) != 0)) {
        fprintf(err, "uabroker: history %s: FROM and TO are RFC 3339 "
                "times (2024-05-01T12:00:00Z)\n", what);
        return 2;
    }
    return 0;
}

static int
bk_histcmd_export(struct hs_store *s, int argc, char **argv, FILE *out,
                  FILE *err)
{
    static struct hs_read r;
    struct ua_nodeid      id;
    struct ua_arena       a;
    uint8_t              *abuf;
    uint8_t               idb[4200];
    size_t                used, idlen;
    int64_t               lo = 0, hi = INT64_MAX;
    struct hs_sample      smp;
    int                   rc, ret = 0;

    if (argc < 1 || argc > 3) {
        bk_histcmd_usage(err);
        return 2;
    }
    abuf = malloc(1u << 20);
    if (abuf == NULL)
        return 1;
    ua_arena_init(&a, abuf, 1u << 20);
    if (ua_nodeid_parse(argv[0], strlen(argv[0]), 0, &a, &id, &used)
            != UA_GOOD
        || ua_encode(&id, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb),
                     &idlen) != UA_GOOD) {
        fprintf(err, "uabroker: history export: \"%s\" is not a NodeId\n",
                argv[0]);
        free(abuf);
        return 2;
    }
    if (bk_histcmd_range("export", argc - 1, argv + 1, &lo, &hi, err)
        != 0) {
        free(abuf);
        return 2;
    }
    if (hs_read_begin(s, &r) != 0
        || hs_read_seek(&r, hs_store_key(idb, idlen), lo, hi, false) != 0) {
        fprintf(err, "uabroker: history store: %s\n", hs_store_error(s));
        free(abuf);
        return 1;
    }
    fprintf(out, "source_time,server_time,status,value\n");
    while ((rc = hs_read_next(&r, &smp)) == 0) {
        struct ua_datavalue dv;
        uint8_t             enc[4096], *big = NULL, *p = enc;
        size_t              n = hs_sample_dv_size(&smp, HS_TS_BOTH);
        char                src[40] = "", srv[40] = "", val[4096];

        if (n > sizeof(enc)) {
            big = malloc(n);
            if (big == NULL)
                break;
            p = big;
        }
        hs_sample_dv_write(&smp, HS_TS_BOTH, p, n);
        ua_arena_reset(&a);
        val[0] = '\0';
        if (ua_decode(p, n, NULL, &dv, &ua_types[UA_TYPE_DATAVALUE], &a,
                      NULL) == UA_GOOD
            && (dv.mask & UA_DV_VALUE)
            && bk_feedline_print_value(&dv.value, val, sizeof(val)) < 0)
            snprintf(val, sizeof(val), "(too long)");
        if (smp.has_src)
            bk_histcmd_time(smp.t, src, sizeof(src));
        if (smp.has_srv)
            bk_histcmd_time(smp.srv, srv, sizeof(srv));
        /* A value with commas or quotes is quoted (RFC 4180). */
        if (strpbrk(val, ",\"\n") != NULL) {
            fprintf(out, "%s,%s,0x%08" PRIX32 ",\"", src, srv,
                    hs_sample_status(&smp));
            for (const char *c = val; *c; c++)
                fprintf(out, *c == '"' ? "\"\"" : "%c", *c);
            fprintf(out, "\"\n");
        } else {
            fprintf(out, "%s,%s,0x%08" PRIX32 ",%s\n", src, srv,
                    hs_sample_status(&smp), val);
        }
        free(big);
    }
    if (rc == -EINVAL) {
        fprintf(err, "uabroker: history store: a damaged block\n");
        ret = 1;
    }
    hs_read_end(&r);
    free(abuf);
    return ret;
}

/* The Variant of the event's field path, decoded into a: false when the
 * event has none or it does not decode. */
static bool
bk_histcmd_field(const struct shm_fo_ev_field *f, int nf, const char *path,
                 struct ua_arena *a, struct ua_variant *v)
{
    size_t plen = strlen(path);

    for (int i = 0; i < nf; i++)
        if (f[i].plen == plen && memcmp(f[i].path, path, plen) == 0)
            return ua_decode(f[i].var, f[i].vlen, NULL, v,
                             &ua_types[UA_TYPE_VARIANT], a, NULL)
                   == UA_GOOD;
    return false;
}

/* One CSV cell (RFC 4180: quoted when it has a comma, a quote or a line
 * break), then a comma or the line's end. */
static void
bk_histcmd_csv(FILE *out, const char *s, bool last)
{
    if (strpbrk(s, ",\"\r\n") != NULL) {
        fputc('"', out);
        for (const char *c = s; *c; c++)
            fprintf(out, *c == '"' ? "\"\"" : "%c", *c);
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    fputc(last ? '\n' : ',', out);
}

/* One event as a CSV line: Time, EventType, SourceNode, Severity,
 * Message, EventId (hex); a field the event has not is empty. */
static void
bk_histcmd_event(const struct hs_event *ev, struct ua_arena *a, FILE *out)
{
    static struct shm_fo_ev_field f[SHM_FO_EV_FIELDS_MAX];
    struct shm_fo_ev              head;
    struct ua_variant             v;
    char                          cell[4096];
    int                           nf;

    nf = shm_fo_ev_parse(ev->rec, ev->len, &head, f, SHM_FO_EV_FIELDS_MAX);
    if (nf < 0)
        nf = 0;                     /* not a record: its time only */
    ua_arena_reset(a);
    bk_histcmd_time(ev->time, cell, sizeof(cell));
    bk_histcmd_csv(out, cell, false);
    for (int k = 0; k < 2; k++) {
        cell[0] = '\0';
        if (bk_histcmd_field(f, nf, k == 0 ? "0:EventType" : "0:SourceNode",
                             a, &v)
            && v.type == UA_BT_NODEID && v.ndims < 0 && v.data != NULL)
            bk_feedline_print_nodeid(v.data, cell, sizeof(cell));
        bk_histcmd_csv(out, cell, false);
    }
    cell[0] = '\0';
    if (bk_histcmd_field(f, nf, "0:Severity", a, &v)
        && v.type == UA_BT_UINT16 && v.ndims < 0 && v.data != NULL)
        snprintf(cell, sizeof(cell), "%u",
                 (unsigned)*(const uint16_t *)v.data);
    bk_histcmd_csv(out, cell, false);
    cell[0] = '\0';
    if (bk_histcmd_field(f, nf, "0:Message", a, &v)
        && v.type == UA_BT_LOCALIZEDTEXT && v.ndims < 0 && v.data != NULL) {
        const struct ua_localizedtext *lt = v.data;

        if (lt->text.len > 0)
            snprintf(cell, sizeof(cell), "%.*s", (int)lt->text.len,
                     (const char *)lt->text.data);
    }
    bk_histcmd_csv(out, cell, false);
    cell[0] = '\0';
    if (bk_histcmd_field(f, nf, "0:EventId", a, &v)
        && v.type == UA_BT_BYTESTRING && v.ndims < 0 && v.data != NULL) {
        const struct ua_string *b = v.data;

        for (int32_t i = 0; i < b->len && 2 * (size_t)i + 2 < sizeof(cell);
             i++)
            snprintf(cell + 2 * i, 3, "%02x", b->data[i]);
    }
    bk_histcmd_csv(out, cell, true);
}

static int
bk_histcmd_events(struct hs_store *s, int argc, char **argv, FILE *out,
                  FILE *err)
{
    struct hs_events *ev;
    struct hs_evread  r;
    struct hs_event   e;
    struct ua_nodeid  id;
    struct ua_arena   a;
    uint8_t          *abuf;
    uint8_t           idb[4200];
    size_t            used, idlen;
    int64_t           lo, hi;
    char              es[256];
    int               rc, ret = 0;

    if (argc < 1 || argc > 3)
        return 2;
    abuf = malloc(1u << 20);
    if (abuf == NULL)
        return 1;
    ua_arena_init(&a, abuf, 1u << 20);
    if (ua_nodeid_parse(argv[0], strlen(argv[0]), 0, &a, &id, &used)
            != UA_GOOD
        || ua_encode(&id, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb),
                     &idlen) != UA_GOOD) {
        fprintf(err, "uabroker: history events: \"%s\" is not a NodeId\n",
                argv[0]);
        free(abuf);
        return 2;
    }
    if (bk_histcmd_range("events", argc - 1, argv + 1, &lo, &hi, err)
        != 0) {
        free(abuf);
        return 2;
    }
    ev = hs_events_open(s, es, sizeof(es));
    if (ev == NULL || hs_evread_begin(ev, &r) != 0
        || hs_evread_seek(&r, hs_events_notifier(idb, idlen), lo, hi,
                          false, false, 0, 0) != 0) {
        fprintf(err, "uabroker: history store: %s\n",
                ev == NULL ? es : hs_store_error(s));
        hs_events_close(ev);
        free(abuf);
        return 1;
    }
    fprintf(out, "time,event_type,source_node,severity,message,event_id\n");
    while ((rc = hs_evread_next(&r, &e)) == 0)
        bk_histcmd_event(&e, &a, out);
    if (rc != -ENOENT) {
        fprintf(err, "uabroker: history store: %s\n", hs_store_error(s));
        ret = 1;
    }
    hs_evread_end(&r);
    hs_events_close(ev);
    free(abuf);
    return ret;
}

int
bk_histcmd_run(const struct bk_config *c, int argc, char **argv, FILE *out,
               FILE *err)
{
    struct hs_store_config hc = { .readonly = true };
    struct hs_store       *s;
    char                   dir[BK_CONF_PATH_MAX], e[256];
    int                    rc;

    if (argc < 1 || (strcmp(argv[0], "list") != 0
                     && strcmp(argv[0], "export") != 0
                     && strcmp(argv[0], "events") != 0)) {
        bk_histcmd_usage(err);
        return 2;
    }
    if (bk_config_history_path(c, dir, sizeof(dir)) != 0) {
        fprintf(err, "uabroker: history.dir: path too long\n");
        return 2;
    }
    hc.dir = dir;
    s = hs_store_open(&hc, e, sizeof(e));
    if (s == NULL) {
        fprintf(err, "uabroker: history store %s: %s\n", dir, e);
        return 1;
    }
    if (strcmp(argv[0], "list") == 0)
        rc = argc == 1 ? bk_histcmd_list(s, out, err) : 2;
    else if (strcmp(argv[0], "export") == 0)
        rc = bk_histcmd_export(s, argc - 1, argv + 1, out, err);
    else
        rc = bk_histcmd_events(s, argc - 1, argv + 1, out, err);
    if (rc == 2)
        bk_histcmd_usage(err);
    hs_store_close(s);
    return rc;
}
