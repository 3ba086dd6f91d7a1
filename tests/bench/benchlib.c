/*
 * tests/bench/benchlib.c: the clock, median, caption stamp and Markdown
 * section rewrite shared by the micro benchmarks (see benchlib.h).
 */
#include "benchlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

static int benchlib_cmp_double(const void *a, const void *b);

uint64_t
benchlib_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int
benchlib_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double
benchlib_median(double *v, size_t n)
{
    qsort(v, n, sizeof(v[0]), benchlib_cmp_double);
    return v[n / 2];
}

void
benchlib_stamp(char *date, size_t dcap, char *machine, size_t mcap)
{
    struct utsname u;
    time_t         now = time(NULL);
    struct tm      tm;

    if (uname(&u) != 0)
        snprintf(u.machine, sizeof(u.machine), "unknown");
    snprintf(machine, mcap, "%s", u.machine);
    gmtime_r(&now, &tm);
    if (strftime(date, dcap, "%Y-%m-%d", &tm) == 0 && dcap > 0)
        date[0] = '\0';
}

int
benchlib_markdown(const char *path, const char *begin, const char *end,
                  void (*section)(FILE *f, void *ctx), void *ctx)
{
    FILE  *f;
    char  *old = NULL, *b, *e;
    size_t len = 0;
    char   tmp[4096];

    f = fopen(path, "rb");
    if (f != NULL) {
        size_t k;

        while ((k = fread(tmp, 1, sizeof(tmp), f)) > 0) {
            char *p = realloc(old, len + k + 1);

            if (p == NULL) {
                fclose(f);
                free(old);
                return -1;
            }
            old = p;
            memcpy(old + len, tmp, k);
            len += k;
        }
        fclose(f);
    }
    if (old != NULL)
        old[len] = '\0';
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "wb");
    if (f == NULL) {
        perror(tmp);
        free(old);
        return -1;
    }
    b = old != NULL ? strstr(old, begin) : NULL;
    e = b != NULL ? strstr(b, end) : NULL;
    if (b != NULL && e != NULL) {
        e += strlen(end);
        if (*e == '\n')
            e++;
        fwrite(old, 1, (size_t)(b - old), f);
    } else if (old != NULL) {
        fputs(old, f);
        if (len > 0 && old[len - 1] != '\n')
            fputc('\n', f);
        fputc('\n', f);
    }
    fprintf(f, "%s\n", begin);
    section(f, ctx);
    fprintf(f, "%s\n", end);
    if (b != NULL && e != NULL)
        fputs(e, f);
    free(old);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}
