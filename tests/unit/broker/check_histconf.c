/*
 * tests/unit/broker/check_histconf.c: the `[history NAME]` sections
 * (broker/histcfg.c, read by broker/config.c) and what the build makes of
 * them and of the [history] defaults (broker/histconf.c): every
 * historized variable's HA Configuration with its properties, the
 * history bits of AccessLevel, the aggregate functions organized under
 * both AggregateFunctions folders, and each refusal.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/histcfg.h"
#include "proto/aggregate.h"
#include "proto/nodeids_gen.h"
#include "shm/nodestore.h"
#include "shm/value.h"

#define T0 INT64_C(133470720000000000)      /* 2023-12-15 */

static char path[64];

static void
write_file(const char *text)
{
    FILE *f;
    int   fd;

    strcpy(path, "/tmp/uabroker-histcfg-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static void
teardown(void)
{
    if (path[0] != '\0')
        unlink(path);
    path[0] = '\0';
}

/* Load text with a section table: the result, err filled. */
static int
load(const char *text, struct bk_config *c, struct bk_histcfg *hc,
     char *err, size_t errlen)
{
    bk_config_defaults(c);
    memset(hc, 0, sizeof(*hc));
    c->histnodes = hc;
    write_file(text);
    err[0] = '\0';
    return bk_config_load(c, path, err, errlen);
}

/* Build the address space of c: the result, err filled. */
static int
build(struct bk_config *c, struct bk_addrspace *as, char *err, size_t errlen)
{
    bk_config_finish(c);
    snprintf(c->application_uri, sizeof(c->application_uri),
             "urn:test:uabroker");
    c->value_heap_mb = 4;
    c->vars = 10;
    err[0] = '\0';
    return bk_addrspace_build(as, c, T0, err, errlen);
}

static uint32_t
lookup_str(const struct bk_addrspace *as, const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as->ns, &k);
}

static uint32_t
lookup_num(const struct bk_addrspace *as, uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(&as->ns, &k);
}

/* The encoded Variant of property 0:name of node (its bytes into b). */
static uint32_t
prop(const struct bk_addrspace *as, uint32_t node, const char *name,
     uint8_t *b)
{
    uint32_t         p = shm_nodestore_property(&as->ns, node, name);
    struct shm_value m;

    ck_assert_msg(p != SHM_NONE, "property %s", name);
    ck_assert_int_eq(shm_value_read(&as->vals, as->ns.nodes[p].u.var.slot,
                                    &m, b, 64), 0);
    return m.len;
}

/* Forward references of node of reftype (ns=0 id) to target. */
static int
refs_to(const struct bk_addrspace *as, uint32_t node, uint32_t reftype,
        uint32_t target)
{
    const struct shm_node *n = &as->ns.nodes[node];
    uint32_t rt = shm_nodestore_reftype_of(&as->ns, lookup_num(as, reftype));
    int      k = 0;

    for (uint32_t i = 0; i < n->nrefs; i++) {
        const struct shm_ref *r = &as->ns.refs[n->refs + i];

        if (!(r->flags & SHM_REF_INVERSE) && r->reftype == rt
            && (target == SHM_NONE || r->target == target))
            k++;
    }
    return k;
}

START_TEST(test_sections)
{
    struct bk_config  c;
    struct bk_histcfg hc;
    char              err[512];

    ck_assert_int_eq(load("[history A]\nnode = ns=1;s=v1\nstepped = true\n"
                          "percent_data_good = 80\n"
                          "exception_deviation_format = percent_of_range\n"
                          "\n[history B]\nnode = ns=1;s=v2\n"
                          "min_time_interval_ms = 250\n",
                          &c, &hc, err, sizeof(err)), 0);
    ck_assert_uint_eq(hc.n, 2);
    ck_assert_str_eq(hc.a[0].node, "ns=1;s=v1");
    ck_assert(hc.a[0].def.stepped);
    ck_assert_uint_eq(hc.a[0].def.percent_data_good, 80);
    ck_assert_uint_eq(hc.a[0].def.exception_deviation_format,
                      BK_HISTCFG_PERCENT_OF_RANGE);
    ck_assert_uint_eq(hc.a[0].seen, (1u << BK_HC_STEPPED)
                      | (1u << BK_HC_PERCENT_DATA_GOOD)
                      | (1u << BK_HC_EXCEPTION_DEVIATION_FORMAT));
    ck_assert(hc.a[1].def.min_time_interval_ms == 250);
    bk_histcfg_free(&hc);
    /* Refusals. */
    ck_assert_int_ne(load("[history A]\nstepped = true\n", &c, &hc, err,
                          sizeof(err)), 0);
    ck_assert_msg(strstr(err, "no node") != NULL, "%s", err);
    bk_histcfg_free(&hc);
    ck_assert_int_ne(load("[history A]\nnode = ns=1;s=v1\nstepped = yes\n",
                          &c, &hc, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "stepped") != NULL, "%s", err);
    bk_histcfg_free(&hc);
    ck_assert_int_ne(load("[history A]\nnode = ns=1;s=v1\n"
                          "percent_data_bad = 101\n", &c, &hc, err,
                          sizeof(err)), 0);
    bk_histcfg_free(&hc);
    ck_assert_int_ne(load("[history A]\nnode = ns=1;s=v1\ncolour = red\n",
                          &c, &hc, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "unknown setting") != NULL, "%s", err);
    bk_histcfg_free(&hc);
    ck_assert_int_ne(load("[history A]\nnode = ns=1;s=v1\n[history B]\n"
                          "node = ns=1;s=v2\n[history A]\nnode = x\n", &c,
                          &hc, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "second section") != NULL, "%s", err);
    bk_histcfg_free(&hc);
    ck_assert_int_ne(load("[history A]\nnode = ns=1;s=v1\nstepped = true\n"
                          "stepped = false\n", &c, &hc, err, sizeof(err)),
                     0);
    ck_assert_msg(strstr(err, "twice") != NULL, "%s", err);
    bk_histcfg_free(&hc);
    /* The [history] default of the format is checked too. */
    bk_config_defaults(&c);
    snprintf(c.history_exception_deviation_format,
             sizeof(c.history_exception_deviation_format), "often");
    ck_assert_int_ne(bk_config_check(&c, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "exception_deviation_format") != NULL, "%s",
                  err);
    /* Without a table the sections are skipped. */
    bk_config_defaults(&c);
    write_file("[history A]\ncolour = red\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_build)
{
    struct bk_config    c;
    struct bk_histcfg   hc;
    struct bk_addrspace as;
    char                err[512];
    uint8_t             b[64];
    uint32_t            v1, v2, v3, cfg, agg, sine;

    ck_assert_int_eq(load("[history]\nnodes = ns=1;s=v2\n"
                          "percent_data_bad = 40\n"
                          "\n[history A]\nnode = ns=1;s=v1\nstepped = true\n"
                          "percent_data_good = 80\n", &c, &hc, err,
                          sizeof(err)), 0);
    ck_assert_msg(build(&c, &as, err, sizeof(err)) == 0, "%s", err);
    v1 = lookup_str(&as, "v1");
    v2 = lookup_str(&as, "v2");
    v3 = lookup_str(&as, "v3");
    sine = lookup_str(&as, "Demo.Simulation.Sine");
    /* Historized, with both history bits; v3 is not. */
    for (int i = 0; i < 3; i++) {
        const struct shm_node *n = &as.ns.nodes[i == 0 ? v1
                                                : i == 1 ? v2 : sine];

        ck_assert(n->flags & SHM_NF_HISTORIZING);
        ck_assert_uint_eq(n->access_level_ex & 0x0C, 0x0C);
        ck_assert_uint_eq(n->user_access_level & 0x0C, 0x0C);
        ck_assert_int_eq(refs_to(&as, i == 0 ? v1 : i == 1 ? v2 : sine,
                                 UA_NS0ID_HASHISTORICALCONFIGURATION,
                                 SHM_NONE), 1);
    }
    ck_assert(!(as.ns.nodes[v3].flags & SHM_NF_HISTORIZING));
    ck_assert_int_eq(refs_to(&as, v3, UA_NS0ID_HASHISTORICALCONFIGURATION,
                             SHM_NONE), 0);
    /* v1: its section over the defaults. */
    cfg = lookup_str(&as, "v1.HAConfiguration");
    agg = lookup_str(&as, "v1.HAConfiguration.AggregateConfiguration");
    ck_assert_uint_ne(cfg, SHM_NONE);
    ck_assert_uint_ne(agg, SHM_NONE);
    ck_assert_int_eq(refs_to(&as, v1, UA_NS0ID_HASHISTORICALCONFIGURATION,
                             cfg), 1);
    ck_assert_uint_eq(as.ns.nodes[cfg].type_def,
                      lookup_num(&as,
                                 UA_NS0ID_HISTORICALDATACONFIGURATIONTYPE));
    ck_assert_uint_eq(as.ns.nodes[agg].type_def,
                      lookup_num(&as, UA_NS0ID_AGGREGATECONFIGURATIONTYPE));
    ck_assert_int_eq(refs_to(&as, cfg, UA_NS0ID_HASCOMPONENT, agg), 1);
    ck_assert_uint_eq(prop(&as, cfg, "Stepped", b), 2);
    ck_assert(b[0] == UA_BT_BOOLEAN && b[1] == 1);
    ck_assert_uint_eq(prop(&as, agg, "PercentDataGood", b), 2);
    ck_assert(b[0] == UA_BT_BYTE && b[1] == 80);
    ck_assert_uint_eq(prop(&as, agg, "PercentDataBad", b), 2);
    ck_assert(b[0] == UA_BT_BYTE && b[1] == 40);
    ck_assert_uint_eq(prop(&as, agg, "TreatUncertainAsBad", b), 2);
    ck_assert(b[0] == UA_BT_BOOLEAN && b[1] == 1);
    ck_assert_uint_eq(prop(&as, cfg, "ExceptionDeviationFormat", b), 5);
    ck_assert(b[0] == UA_BT_INT32 && b[1] == 0);
    ck_assert_uint_eq(prop(&as, cfg, "MinTimeInterval", b), 9);
    ck_assert_uint_eq(prop(&as, cfg, "MaxTimeInterval", b), 9);
    ck_assert_uint_eq(prop(&as, cfg, "ExceptionDeviation", b), 9);
    ck_assert_uint_eq(prop(&as, cfg, "ServerTimestampSupported", b), 2);
    /* StartOfArchive and StartOfOnlineArchive: UtcTime, flagged for the
     * workers to read from the store (worker/histarchive.c). */
    for (int i = 0; i < 2; i++) {
        const char *name = i == 0 ? "StartOfArchive" : "StartOfOnlineArchive";
        uint32_t    p = shm_nodestore_property(&as.ns, cfg, name);

        ck_assert_uint_eq(prop(&as, cfg, name, b), 9);
        ck_assert(b[0] == UA_BT_DATETIME);
        ck_assert_uint_ne(p, SHM_NONE);
        ck_assert(as.ns.nodes[p].flags & SHM_NF_HIST_ARCHIVE);
    }
    ck_assert(!(as.ns.nodes[shm_nodestore_property(&as.ns, cfg,
                                                   "MinTimeInterval")].flags
                & SHM_NF_HIST_ARCHIVE));
    /* v2: the defaults. */
    cfg = lookup_str(&as, "v2.HAConfiguration");
    ck_assert_uint_ne(cfg, SHM_NONE);
    ck_assert_uint_eq(prop(&as, cfg, "Stepped", b), 2);
    ck_assert(b[0] == UA_BT_BOOLEAN && b[1] == 0);
    /* The aggregates, under both folders. */
    for (int f = 0; f < 2; f++) {
        uint32_t folder = lookup_num(&as, f == 0
            ? UA_NS0ID_HISTORYSERVERCAPABILITIES_AGGREGATEFUNCTIONS
            : UA_NS0ID_SERVER_SERVERCAPABILITIES_AGGREGATEFUNCTIONS);

        ck_assert_int_eq(refs_to(&as, folder, UA_NS0ID_ORGANIZES, SHM_NONE),
                         UA_AGG_COUNT_);
        ck_assert_int_eq(refs_to(&as, folder, UA_NS0ID_ORGANIZES,
                                 lookup_num(&as,
                                     UA_NS0ID_AGGREGATEFUNCTION_AVERAGE)),
                         1);
    }
    bk_addrspace_close(&as);
    bk_histcfg_free(&hc);
}
END_TEST

START_TEST(test_build_refused)
{
    struct bk_config    c;
    struct bk_histcfg   hc;
    struct bk_addrspace as;
    char                err[512];

    /* A node that is no Variable of the address space. */
    ck_assert_int_eq(load("[history A]\nnode = ns=1;s=nothing\n", &c, &hc,
                          err, sizeof(err)), 0);
    ck_assert_int_ne(build(&c, &as, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "[history A]") != NULL, "%s", err);
    ck_assert(as.nodeset_failed);
    bk_histcfg_free(&hc);
    ck_assert_int_eq(load("[history A]\nnode = ns=1;s=Demo\n", &c, &hc,
                          err, sizeof(err)), 0);
    ck_assert_int_ne(build(&c, &as, err, sizeof(err)), 0);
    bk_histcfg_free(&hc);
    /* Two sections of one node. */
    ck_assert_int_eq(load("[history A]\nnode = ns=1;s=v1\n[history B]\n"
                          "node = ns=1;s=v1\n", &c, &hc, err, sizeof(err)),
                     0);
    ck_assert_int_ne(build(&c, &as, err, sizeof(err)), 0);
    ck_assert_msg(strstr(err, "already") != NULL, "%s", err);
    bk_histcfg_free(&hc);
    /* History off: nothing historized, no configuration. */
    ck_assert_int_eq(load("[history]\nenabled = false\n", &c, &hc, err,
                          sizeof(err)), 0);
    ck_assert_msg(build(&c, &as, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(lookup_str(&as,
                                 "Demo.Simulation.Sine.HAConfiguration"),
                      SHM_NONE);
    ck_assert_int_eq(refs_to(&as, lookup_num(&as,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_AGGREGATEFUNCTIONS),
        UA_NS0ID_ORGANIZES, SHM_NONE), 0);
    bk_addrspace_close(&as);
    bk_histcfg_free(&hc);
}
END_TEST

static Suite *
histconf_suite(void)
{
    Suite *s = suite_create("histconf");
    TCase *t = tcase_create("core");

    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_set_timeout(t, 30);
    tcase_add_test(t, test_sections);
    tcase_add_test(t, test_build);
    tcase_add_test(t, test_build_refused);
    suite_add_tcase(s, t);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(histconf_suite());
    int      nf;

    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
