/*
 * tests/unit/shm/check_segment.c: shm/segment.c, the allocator: lay out,
 * create, attach, and the header checks (magic, version, size, region
 * table) a worker makes before it trusts a segment.  What the regions
 * hold and the checks of their header fields: check_plan.c.
 *
 * Corruption cases never touch a live segment: the segment is copied into a
 * second memfd and the copy is damaged, so each case changes one thing and
 * the untouched copy is attached first as the control.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/layout.h"
#include "shm/segment.h"

/* Region sizes of a small segment: every region, odd sizes, one empty. */
static const uint64_t sizes_small[SHM_R_MAX] = {
    [SHM_R_NODES] = 8800, [SHM_R_REFS] = 2400, [SHM_R_INDEX] = 2048,
    [SHM_R_STRINGS] = 4008, [SHM_R_REFTYPES] = 8200, [SHM_R_SLOTS] = 3200,
    [SHM_R_VHEAP] = 65536, [SHM_R_INTEREST] = 400, [SHM_R_CONFIG] = 1000,
    [SHM_R_WORKERS] = 5000, [SHM_R_RINGS] = 0, [SHM_R_BLOCKS] = 1,
    [SHM_R_FANOUT] = 129, [SHM_R_PKI] = 127, [SHM_R_THROTTLE] = 128,
};

static void
create_or_fail(struct shm_segment *s, const uint64_t *sizes)
{
    int rc = shm_segment_create(s, sizes, "check_segment");

    ck_assert_int_eq(rc, 0);
    ck_assert_int_ge(s->fd, 0);
    ck_assert_ptr_nonnull(s->base);
}

/* The region table: in enum order, aligned, past the header, disjoint,
 * each as large as asked; the rest of the segment zero and writable. */
START_TEST(test_layout)
{
    struct shm_segment       s;
    struct shm_region_desc   r[SHM_R_MAX];
    struct stat              st;
    const struct shm_header *h;
    uint64_t                 total = shm_segment_layout(sizes_small, r);

    create_or_fail(&s, sizes_small);
    h = s.hdr;
    ck_assert_uint_eq(s.size, total);
    ck_assert_int_eq(fstat(s.fd, &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, s.size);
    ck_assert_uint_eq(h->magic, SHM_MAGIC);
    ck_assert_uint_eq(h->version, SHM_LAYOUT_VERSION);
    ck_assert_uint_eq(h->size, s.size);
    ck_assert_int_eq(memcmp(h->regions, r, sizeof(r)), 0);
    for (int i = 0; i < SHM_R_MAX; i++) {
        const struct shm_region_desc *a = &h->regions[i];

        ck_assert_uint_eq(a->size, sizes_small[i]);
        ck_assert_uint_eq(a->off % SHM_CACHELINE, 0);
        ck_assert_uint_ge(a->off, sizeof(struct shm_header));
        ck_assert_uint_le(a->off + a->size, h->size);
        if (i > 0)
            ck_assert_uint_ge(a->off, h->regions[i - 1].off
                                          + h->regions[i - 1].size);
        ck_assert_uint_eq((uintptr_t)shm_segment_region(&s, i) % SHM_CACHELINE,
                          0);
    }
    /* Zero past the header's four fields and region table. */
    for (uint64_t k = offsetof(struct shm_header, regions) + sizeof(r);
         k < s.size; k++)
        ck_assert_msg(s.base[k] == 0, "byte %llu not zero",
                      (unsigned long long)k);
    memset(s.base + sizeof(struct shm_header), 0xA5,
           s.size - sizeof(struct shm_header));
    shm_segment_close(&s);
}
END_TEST

/* ------------------------------------------------------------ attach */

START_TEST(test_attach_read_write)
{
    struct shm_segment s, a;
    int                fd;

    create_or_fail(&s, sizes_small);
    fd = dup(s.fd);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(shm_segment_attach(&a, fd, 1), 0);
    ck_assert_int_eq(a.fd, fd);
    ck_assert_uint_eq(a.size, s.size);
    ck_assert_ptr_ne(a.base, s.base);       /* a second mapping */
    ck_assert_int_eq(memcmp(a.hdr, s.hdr, sizeof(struct shm_header)), 0);
    for (int i = 0; i < SHM_R_MAX; i++)
        ck_assert_uint_eq(a.hdr->regions[i].off, s.hdr->regions[i].off);

    /* Both mappings see one memory, in both directions. */
    ((uint8_t *)shm_segment_region(&s, SHM_R_VHEAP))[7] = 0x5A;
    ck_assert_uint_eq(((uint8_t *)shm_segment_region(&a, SHM_R_VHEAP))[7],
                      0x5A);
    ((uint8_t *)shm_segment_region(&a, SHM_R_INTEREST))[3] = 0xC3;
    ck_assert_uint_eq(((uint8_t *)shm_segment_region(&s, SHM_R_INTEREST))[3],
                      0xC3);
    shm_segment_close(&a);
    ck_assert_ptr_null(a.base);
    ck_assert_int_eq(a.fd, -1);
    shm_segment_close(&a);                  /* idempotent */
    /* Closing the attachment left the creator's mapping and fd alone. */
    ck_assert_uint_eq(((uint8_t *)shm_segment_region(&s, SHM_R_VHEAP))[7],
                      0x5A);
    ck_assert_int_eq(fcntl(s.fd, F_GETFD) != -1, 1);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_attach_read_only)
{
    struct shm_segment s, a;
    pid_t              pid;
    int                st, fd;
    volatile uint8_t  *p;

    create_or_fail(&s, sizes_small);
    fd = dup(s.fd);
    ck_assert_int_eq(shm_segment_attach(&a, fd, 0), 0);
    ck_assert_uint_eq(a.hdr->magic, SHM_MAGIC);
    ck_assert_uint_eq(a.size, s.size);
    p = shm_segment_region(&a, SHM_R_SLOTS);
    ((uint8_t *)shm_segment_region(&s, SHM_R_SLOTS))[0] = 42;
    ck_assert_uint_eq(p[0], 42);            /* reads see the writer */

    /* A write through the read-only mapping faults (in a child). */
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        p[0] = 1;
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
                  "write to a read-only attachment did not fault (st %#x)",
                  st);
    ck_assert_uint_eq(p[0], 42);
    shm_segment_close(&a);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_attach_bad_fd)
{
    struct shm_segment a;
    int                pfd[2];

    ck_assert_int_eq(shm_segment_attach(&a, -1, 0), -EBADF);
    /* A pipe has no size and no header. */
    ck_assert_int_eq(pipe(pfd), 0);
    ck_assert_int_lt(shm_segment_attach(&a, pfd[0], 0), 0);
    close(pfd[0]);
    close(pfd[1]);
}
END_TEST

/* ------------------------------------------------------------ corruption */

/* A second memfd holding a byte copy of s. */
static int
copy_segment(const struct shm_segment *s)
{
    int fd = memfd_create("check_segment_copy", MFD_CLOEXEC);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)s->size), 0);
    ck_assert_int_eq(pwrite(fd, s->base, s->size, 0), (ssize_t)s->size);
    return fd;
}

/* Attach fd; on success unmap without closing fd (the caller owns it). */
static int
try_attach(int fd, int writable)
{
    struct shm_segment a;
    int                rc = shm_segment_attach(&a, fd, writable);

    if (rc == 0) {
        ck_assert_int_eq(a.fd, fd);
        munmap(a.base, a.size);
    }
    return rc;
}

/* Copy s, overwrite sizeof(*val) bytes at off in the copy, attach it. */
static int
attach_patched(const struct shm_segment *s, size_t off, const void *val,
               size_t n)
{
    int fd = copy_segment(s);
    int rc;

    ck_assert_int_eq(try_attach(fd, 0), 0);         /* control */
    ck_assert_int_eq(pwrite(fd, val, n, (off_t)off), (ssize_t)n);
    rc = try_attach(fd, 0);
    ck_assert_int_eq(try_attach(fd, 1), rc);        /* same for writers */
    close(fd);
    return rc;
}

#define PATCH(s, field, v)                                                  \
    do {                                                                    \
        __typeof__(((struct shm_header *)0)->field) v_ = (v);               \
        ck_assert_int_eq(attach_patched((s),                                \
                                        offsetof(struct shm_header, field), \
                                        &v_, sizeof(v_)),                   \
                         -EPROTO);                                          \
    } while (0)

START_TEST(test_refuse_bad_magic_version_size)
{
    struct shm_segment s;
    struct shm_header  before;

    create_or_fail(&s, sizes_small);
    memcpy(&before, s.hdr, sizeof(before));
    PATCH(&s, magic, SHM_MAGIC ^ 1);
    PATCH(&s, magic, 0);
    PATCH(&s, version, SHM_LAYOUT_VERSION + 1);
    PATCH(&s, version, 0);
    PATCH(&s, size, s.size + SHM_CACHELINE);
    PATCH(&s, size, s.size - SHM_CACHELINE);
    PATCH(&s, size, 0);
    /* The live header was never touched. */
    ck_assert_int_eq(memcmp(&before, s.hdr, sizeof(before)), 0);
    ck_assert_int_eq(try_attach(s.fd, 0), 0);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_refuse_truncated)
{
    struct shm_segment s;
    int                fd;

    create_or_fail(&s, sizes_small);
    /* Shorter than the header says. */
    fd = copy_segment(&s);
    ck_assert_int_eq(try_attach(fd, 0), 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)s.size - 1), 0);
    ck_assert_int_eq(try_attach(fd, 0), -EPROTO);
    ck_assert_int_eq(ftruncate(fd, (off_t)s.size / 2), 0);
    ck_assert_int_eq(try_attach(fd, 0), -EPROTO);
    /* Shorter than a header. */
    ck_assert_int_eq(ftruncate(fd, (off_t)sizeof(struct shm_header) - 1), 0);
    ck_assert_int_eq(try_attach(fd, 0), -EPROTO);
    ck_assert_int_eq(ftruncate(fd, 8), 0);
    ck_assert_int_eq(try_attach(fd, 0), -EPROTO);
    ck_assert_int_eq(ftruncate(fd, 0), 0);
    ck_assert_int_eq(try_attach(fd, 0), -EPROTO);
    /* Longer than the header says. */
    ck_assert_int_eq(ftruncate(fd, (off_t)s.size), 0);
    ck_assert_int_eq(pwrite(fd, s.base, s.size, 0), (ssize_t)s.size);
    ck_assert_int_eq(try_attach(fd, 0), 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)s.size + 4096), 0);
    ck_assert_int_eq(try_attach(fd, 0), -EPROTO);
    close(fd);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_refuse_bad_region_table)
{
    struct shm_segment s;
    uint64_t           sz;

    create_or_fail(&s, sizes_small);
    sz = s.size;
    for (int r = 0; r < SHM_R_MAX; r++) {
        const struct shm_region_desc *d = &s.hdr->regions[r];

        /* One byte past the end. */
        PATCH(&s, regions[r].size, sz - d->off + 1);
        /* Starts past the end. */
        PATCH(&s, regions[r].off, sz + SHM_CACHELINE);
        /* off + size wraps around. */
        PATCH(&s, regions[r].off, UINT64_MAX - 8);
        PATCH(&s, regions[r].size, UINT64_MAX - d->off + 2);
        /* Overlaps the header. */
        PATCH(&s, regions[r].off, 0);
    }
    /* Ending exactly at the end is fine. */
    {
        size_t   at = offsetof(struct shm_header, regions[SHM_R_VHEAP].size);
        uint64_t v = sz - s.hdr->regions[SHM_R_VHEAP].off;

        ck_assert_int_eq(attach_patched(&s, at, &v, sizeof(v)), 0);
    }
    shm_segment_close(&s);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Shared-memory segment");
    TCase   *tc_plan = tcase_create("Lay out and create");
    TCase   *tc_attach = tcase_create("Attach");
    TCase   *tc_refuse = tcase_create("Refuse a bad segment");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc_plan, test_layout);
    tcase_set_timeout(tc_plan, 20);
    suite_add_tcase(s, tc_plan);

    tcase_add_test(tc_attach, test_attach_read_write);
    tcase_add_test(tc_attach, test_attach_read_only);
    tcase_add_test(tc_attach, test_attach_bad_fd);
    suite_add_tcase(s, tc_attach);

    tcase_add_test(tc_refuse, test_refuse_bad_magic_version_size);
    tcase_add_test(tc_refuse, test_refuse_truncated);
    tcase_add_test(tc_refuse, test_refuse_bad_region_table);
    suite_add_tcase(s, tc_refuse);

    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
