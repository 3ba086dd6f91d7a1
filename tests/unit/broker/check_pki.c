/*
 * tests/unit/broker/check_pki.c: the PKI directory, the application
 * certificate, the offers, the lists in shared memory (double buffer and
 * generation) and the rejected mailbox (broker/pki.c, shm/pki.c).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/config.h"
#include "broker/pki.h"
#include "proto/cert.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/pki.h"
#include "shm/plan.h"
#include "shm/segment.h"

static char dir[64];

static int
rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    remove(p);
    return 0;
}

static void
setup(void)
{
    strcpy(dir, "/tmp/uabroker-pki-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
    if (dir[0] != '\0')
        nftw(dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
    dir[0] = '\0';
}

static void
conf(struct bk_config *c)
{
    bk_config_defaults(c);
    snprintf(c->runtime_dir, sizeof(c->runtime_dir), "%s/run", dir);
    strcpy(c->hostname, "pkitest");
    strcpy(c->application_uri, "urn:pkitest:uabroker");
}

static void
put(const char *sub, const char *name, const uint8_t *b, size_t n)
{
    char  p[256];
    FILE *f;

    snprintf(p, sizeof(p), "%s/run/pki/%s/%s", dir, sub, name);
    f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

START_TEST(test_offers)
{
    uint32_t o;
    char     err[256];

    ck_assert_int_eq(bk_pki_offers("None, Basic256Sha256, "
                                   "Aes128_Sha256_RsaOaep, "
                                   "Aes256_Sha256_RsaPss",
                                   "None, Sign, SignAndEncrypt", false, &o,
                                   err, sizeof(err)), 0);
    ck_assert(o & UA_SC_OFFER(UA_POLICY_NONE, UA_MESSAGESECURITYMODE_NONE));
    ck_assert(o & UA_SC_OFFER(UA_POLICY_BASIC256SHA256,
                              UA_MESSAGESECURITYMODE_SIGN));
    ck_assert(o & UA_SC_OFFER(UA_POLICY_AES256_SHA256_RSAPSS,
                              UA_MESSAGESECURITYMODE_SIGNANDENCRYPT));
    ck_assert(!(o & UA_SC_OFFER(UA_POLICY_BASIC256SHA256,
                                UA_MESSAGESECURITYMODE_NONE)));
    ck_assert_uint_eq(__builtin_popcount(o), 7);
    /* Names are case-insensitive; URIs work too. */
    ck_assert_int_eq(bk_pki_offers("basic256sha256", "signandencrypt", false,
                                   &o, err, sizeof(err)), 0);
    ck_assert_uint_eq(o, UA_SC_OFFER(UA_POLICY_BASIC256SHA256,
                                     UA_MESSAGESECURITYMODE_SIGNANDENCRYPT));
    ck_assert_int_eq(bk_pki_offers(
        "http://opcfoundation.org/UA/SecurityPolicy#None", "None", false,
        &o, err, sizeof(err)), 0);
    ck_assert_uint_eq(o, UA_SC_OFFER(UA_POLICY_NONE,
                                     UA_MESSAGESECURITYMODE_NONE));
    /* Errors. */
    ck_assert_int_eq(bk_pki_offers("Basic257", "Sign", false, &o, err,
                                   sizeof(err)), -1);
    ck_assert(strstr(err, "Basic257") != NULL);
    ck_assert_int_eq(bk_pki_offers("None", "Sgn", false, &o, err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_pki_offers("Basic128Rsa15", "Sign", false, &o, err,
                                   sizeof(err)), -1);
    ck_assert(strstr(err, "deprecated") != NULL);
    ck_assert_int_eq(bk_pki_offers("Basic128Rsa15", "Sign", true, &o, err,
                                   sizeof(err)), 0);
    /* None with only secure modes offers nothing. */
    ck_assert_int_eq(bk_pki_offers("None", "Sign", false, &o, err,
                                   sizeof(err)), -1);
}
END_TEST

START_TEST(test_create_and_reload_own)
{
    static struct bk_pki k, k2;
    struct bk_config     c;
    struct ua_cert       cert;
    char                 err[256], p[256];
    struct stat          st;
    static const char   *subs[] = { "own/certs", "own/private",
                                    "trusted/certs", "trusted/crl",
                                    "issuers/certs", "issuers/crl",
                                    "rejected" };

    conf(&c);
    ck_assert_int_eq(bk_pki_init(&k, &c, 1800000000, err, sizeof(err)), 0);
    ck_assert(k.created);
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        snprintf(p, sizeof(p), "%s/run/pki/%s", dir, subs[i]);
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_uint_eq(st.st_mode & 0777, 0700);
    }
    snprintf(p, sizeof(p), "%s/run/pki/own/private/uabroker.key", dir);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(ua_cert_parse(k.cert, k.cert_len, &cert), UA_GOOD);
    ck_assert(ua_cert_has_uri(&cert, (const uint8_t *)"urn:pkitest:uabroker",
                              20));
    ck_assert_uint_eq(cert.key_bits, 2048);
    ck_assert(!cert.is_ca);
    ck_assert_uint_eq(cert.key_usage & UA_KU_APPLICATION_REQUIRED,
                      UA_KU_APPLICATION_REQUIRED);
    ck_assert(cert.eku & UA_EKU_SERVER_AUTH);
    ck_assert(cert.eku & UA_EKU_CLIENT_AUTH);
    ck_assert_int_eq(cert.not_after - cert.not_before,
                     (int64_t)c.certificate_days * 86400);
    /* A second start loads the same files. */
    ck_assert_int_eq(bk_pki_init(&k2, &c, 1800000100, err, sizeof(err)), 0);
    ck_assert(!k2.created);
    ck_assert_uint_eq(k2.cert_len, k.cert_len);
    ck_assert_mem_eq(k2.cert, k.cert, k.cert_len);
    ck_assert_uint_eq(k2.key_len, k.key_len);
    ck_assert_mem_eq(k2.key, k.key, k.key_len);
    /* A certificate without its key is an error, never overwritten. */
    unlink(p);
    ck_assert_int_eq(bk_pki_init(&k2, &c, 1800000100, err, sizeof(err)),
                     -1);
    ck_assert(strstr(err, "uabroker.key") != NULL);
    bk_pki_clear(&k);
    bk_pki_clear(&k2);
}
END_TEST

START_TEST(test_lists_and_generation)
{
    static struct bk_pki k;
    static uint8_t       snap[sizeof(struct shm_pki_half) + 65536];
    struct shm_pki_half *h = (struct shm_pki_half *)snap;
    struct bk_config     c;
    struct shm_plan      plan;
    struct shm_segment   seg;
    struct shm_pki      *sp;
    char                 err[256];
    uint64_t             gen = 99;
    static const uint8_t a[] = { 0x30, 0x03, 0x02, 0x01, 0x01 };
    static const uint8_t b[] = { 0x30, 0x03, 0x02, 0x01, 0x02 };

    conf(&c);
    ck_assert_int_eq(bk_pki_init(&k, &c, 1800000000, err, sizeof(err)), 0);
    put("trusted/certs", "a.der", a, sizeof(a));
    put("issuers/crl", "i.crl", b, sizeof(b));
    memset(&plan, 0, sizeof(plan));
    plan.nodes = 4;
    plan.refs = 4;
    plan.strings = 64;
    plan.slots = 4;
    plan.vheap = 4096;
    plan.pki_list_bytes = 65536;
    plan.pki_workers = 2;
    ck_assert_int_eq(shm_plan_create(&seg, &plan, "check_pki"), 0);
    ck_assert_int_eq(bk_pki_publish(&k, &seg, err, sizeof(err)), 0);
    sp = shm_pki_get(&seg);
    ck_assert_ptr_nonnull(sp);
    ck_assert_uint_eq(sp->offers, k.offers);
    ck_assert_uint_eq(sp->cert_len, k.cert_len);
    ck_assert_mem_eq(sp->cert, k.cert, k.cert_len);
    ck_assert_uint_eq(sp->key_len, k.key_len);
    ck_assert(sp->flags & SHM_PKI_F_ANONYMOUS);
    ck_assert(!(sp->flags & SHM_PKI_F_DEPRECATED));
    ck_assert_uint_eq(shm_pki_generation(sp), 1);
    ck_assert_int_eq(shm_pki_snapshot(sp, snap, sizeof(snap), &gen), 0);
    ck_assert_uint_eq(gen, 1);
    ck_assert_uint_eq(h->n, 2);
    ck_assert_uint_eq(k.n_trusted, 1);
    ck_assert_uint_eq(k.n_issuer_crls, 1);
    for (uint32_t i = 0; i < h->n; i++) {
        const uint8_t *d = h->data + h->blobs[i].off;

        ck_assert_uint_eq(h->blobs[i].len, 5);
        if (h->blobs[i].kind == SHM_PKI_TRUSTED)
            ck_assert_mem_eq(d, a, 5);
        else
            ck_assert_mem_eq(d, b, 5);
    }
    /* SIGHUP: another trusted certificate, the other half. */
    put("trusted/certs", "b.der", b, sizeof(b));
    ck_assert_int_eq(bk_pki_reload(&k), 0);
    ck_assert_uint_eq(shm_pki_generation(sp), 2);
    ck_assert_int_eq(shm_pki_snapshot(sp, snap, sizeof(snap), &gen), 0);
    ck_assert_uint_eq(gen, 2);
    ck_assert_uint_eq(h->n, 3);
    ck_assert_uint_eq(k.n_trusted, 2);
    ck_assert_ptr_ne(shm_pki_half(sp, 0), shm_pki_half(sp, 1));
    bk_pki_clear(&k);
    shm_segment_close(&seg);
}
END_TEST

START_TEST(test_rejected_mailbox)
{
    static struct bk_pki  k;
    static struct ua_crypto_key key;
    static uint8_t        der[3][2048];
    size_t                len[3];
    char                  err[256], name[UA_CERT_REJECTED_NAME_LEN];
    char                  p[256];
    uint8_t               thumb[UA_CERT_THUMB_LEN];
    struct bk_config      c;
    struct shm_plan       plan;
    struct shm_segment    seg;
    struct shm_pki       *sp;
    struct stat           st;
    struct ua_cert_params cp;

    conf(&c);
    c.rejected_max = 2;
    ck_assert_int_eq(bk_pki_init(&k, &c, 1800000000, err, sizeof(err)), 0);
    memset(&plan, 0, sizeof(plan));
    plan.nodes = 4;
    plan.refs = 4;
    plan.strings = 64;
    plan.slots = 4;
    plan.vheap = 4096;
    plan.pki_list_bytes = 4096;
    plan.pki_workers = 2;
    ck_assert_int_eq(shm_plan_create(&seg, &plan, "check_pki"), 0);
    ck_assert_int_eq(bk_pki_publish(&k, &seg, err, sizeof(err)), 0);
    sp = shm_pki_get(&seg);
    ck_assert_int_eq(ua_crypto_key_generate(&key, 1024), UA_GOOD);
    for (int i = 0; i < 3; i++) {
        char uri[32];

        snprintf(uri, sizeof(uri), "urn:rejected:%d", i);
        memset(&cp, 0, sizeof(cp));
        cp.app_uri = uri;
        cp.common_name = uri;
        cp.not_before = 1800000000;
        cp.days = 1;
        ck_assert_int_eq(ua_cert_create(&cp, &key, der[i], sizeof(der[i]),
                                        &len[i]), UA_GOOD);
    }
    /* Worker 1 posts one; the broker writes rejected/<thumbprint>.der. */
    ck_assert_int_eq(shm_pki_reject_post(sp, 1, der[0], len[0]), 0);
    ck_assert_int_eq(shm_pki_reject_post(sp, 2, der[0], len[0]), -EINVAL);
    ck_assert_int_eq(bk_pki_drain(&k), 1);
    ck_assert_int_eq(bk_pki_drain(&k), 0);
    ua_cert_thumbprint(der[0], len[0], thumb);
    ua_cert_rejected_name(thumb, name);
    snprintf(p, sizeof(p), "%s/run/pki/rejected/%s", dir, name);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_uint_eq((size_t)st.st_size, len[0]);
    /* Ten seconds older than it is: the next file, written within the
     * same tick of the file system's clock, would tie with it, and the
     * oldest is then whichever readdir lists first. */
    {
        struct timespec ts[2] = { st.st_atim, st.st_mtim };

        ts[1].tv_sec -= 10;
        ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
    }
    /* The mailbox is bounded. */
    for (int i = 0; i < SHM_PKI_MBOX_SLOTS; i++)
        ck_assert_int_eq(shm_pki_reject_post(sp, 0, der[1], len[1]), 0);
    ck_assert_int_eq(shm_pki_reject_post(sp, 0, der[1], len[1]), -ENOSPC);
    /* Same certificate several times: one file. */
    ck_assert_int_eq(bk_pki_drain(&k), 1);
    /* rejected_max = 2: the third certificate drops the oldest. */
    usleep(20 * 1000);
    ck_assert_int_eq(shm_pki_reject_post(sp, 0, der[2], len[2]), 0);
    ck_assert_int_eq(bk_pki_drain(&k), 1);
    ck_assert_int_ne(stat(p, &st), 0);
    ua_crypto_key_clear(&key);
    bk_pki_clear(&k);
    shm_segment_close(&seg);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("PKI");
    TCase   *tc = tcase_create("Directory, certificate, lists");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_offers);
    tcase_add_test(tc, test_create_and_reload_own);
    tcase_add_test(tc, test_lists_and_generation);
    tcase_add_test(tc, test_rejected_mailbox);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
