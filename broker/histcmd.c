/*
 * broker/histcmd.c: `uabroker history list` and `uabroker history export`
 * (broker/histcmd.h): the history store (hist/store.h) opened read-only,
 * its NodeIds and values printed with the feed's text forms
 * (broker/feedline.h), its times as RFC 3339 (proto/text.h).
 *
 * A one-shot command, not the server: it allocates as it likes (one
 * arena per value) and exits.
 */
#include "histcmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "feedline.h"
#include "hist/store.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeid.h"
#include "proto/status_gen.h"
#include "proto/text.h"
#include "proto/types_gen.h"

static void bk_histcmd_usage(FILE *err);
static void bk_histcmd_time(int64_t t, char *buf, size_t cap);
static int bk_histcmd_list_one(void *arg, uint64_t key,
                               const struct hs_node *nd,
                               const uint8_t *nodeid, size_t len);
static int bk_histcmd_list(struct hs_store *s, FILE *out, FILE *err);
static int bk_histcmd_export(struct hs_store *s, int argc, char **argv,
                             FILE *out, FILE *err);

static void
bk_histcmd_usage(FILE *err)
{
    fprintf(err, "usage: uabroker [options] history list\n"
                 "       uabroker [options] history export NODEID "
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
    struct hs_totals t;

    if (hs_store_nodes(s, bk_histcmd_list_one, out) != 0
        || hs_store_totals(s, &t) != 0) {
        fprintf(err, "uabroker: history store: %s\n", hs_store_error(s));
        return 1;
    }
    fprintf(out, "total nodes=%" PRIu64 " values=%" PRIu64 " bytes=%" PRIu64
            " blocks=%" PRIu64 " dropped=%" PRIu64 " rejected=%" PRIu64
            " file_bytes=%" PRIu64 "\n", t.nodes, t.samples, t.bytes,
            t.blocks, t.dropped, t.rejected, hs_store_file_bytes(s));
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
    if ((argc > 1 && ua_text_datetime_parse(argv[1], strlen(argv[1]),
                                            UA_TEXT_XML, &lo) != 0)
        || (argc > 2 && ua_text_datetime_parse(argv[2], strlen(argv[2]),
                                               UA_TEXT_XML, &hi) != 0)) {
        fprintf(err, "uabroker: history export: FROM and TO are RFC 3339 "
                "times (2024-05-01T12:00:00Z)\n");
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

int
bk_histcmd_run(const struct bk_config *c, int argc, char **argv, FILE *out,
               FILE *err)
{
    struct hs_store_config hc = { .readonly = true };
    struct hs_store       *s;
    char                   dir[BK_CONF_PATH_MAX], e[256];
    int                    rc;

    if (argc < 1 || (strcmp(argv[0], "list") != 0
                     && strcmp(argv[0], "export") != 0)) {
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
    else
        rc = bk_histcmd_export(s, argc - 1, argv + 1, out, err);
    if (rc == 2)
        bk_histcmd_usage(err);
    hs_store_close(s);
    return rc;
}
