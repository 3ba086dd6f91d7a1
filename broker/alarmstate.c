/*
 * broker/alarmstate.c: the alarms' state file (alarmstate.h).
 *
 * Invariant: a file is used whole or not at all -- every line is parsed
 * into a table first, and only a file without a fault is applied.
 */
#include "alarmstate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"

#define BK_AS_HEADER "uabroker-alarms 2"
#define BK_AS_LINE   2048       /* one condition's line at most */
#define BK_AS_NUMS   19         /* numbers after the name */

static void bk_alarmstate_hex(FILE *f, const void *p, size_t n);
static int bk_alarmstate_unhex(const char *s, void *out, size_t cap,
                               size_t *n);
static int bk_alarmstate_line(char *line, struct bk_alarmnode_saved *s);

/* n bytes as hex, "-" for none. */
static void
bk_alarmstate_hex(FILE *f, const void *p, size_t n)
{
    const uint8_t *b = p;

    if (n == 0)
        fputc('-', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", b[i]);
}

/* Hex text (or "-") into out[cap]: 0 and *n, or -1. */
static int
bk_alarmstate_unhex(const char *s, void *out, size_t cap, size_t *n)
{
    uint8_t *o = out;
    size_t   len = strlen(s);

    *n = 0;
    if (strcmp(s, "-") == 0)
        return 0;
    if (len % 2 != 0 || len / 2 > cap)
        return -1;
    for (size_t i = 0; i < len; i += 2) {
        unsigned v;

        if (sscanf(s + i, "%2x", &v) != 1)
            return -1;
        o[i / 2] = (uint8_t)v;
    }
    *n = len / 2;
    return 0;
}

int
bk_alarmstate_save(struct bk_alarmnode *an, const char *path, char *err,
                   size_t errlen)
{
    char  tmp[1100];
    FILE *f;
    int   ok;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "%s\n", BK_AS_HEADER);
    for (uint32_t i = 0; i < an->n; i++) {
        struct bk_alarmnode_saved    s;
        const struct bk_alarm_state *t = &s.st;

        bk_alarmnode_saved_get(an, i, &s);
        fprintf(f, "%s %d %d %d %d %u %u %u %u %u %lld %lld %lld %lld "
                "%lld %lld %lld %lld %lld %lld ", s.name, t->enabled,
                t->active, t->acked, t->confirmed, t->over, t->limits,
                t->shelving, t->severity, t->last_severity,
                (long long)t->unshelve_at, (long long)t->enabled_ts,
                (long long)t->active_ts, (long long)t->acked_ts,
                (long long)t->confirmed_ts, (long long)t->limit_ts,
                (long long)t->shelving_ts, (long long)t->severity_ts,
                (long long)s.time, (long long)s.comment_ts);
        bk_alarmstate_hex(f, s.last_id, 16);
        fputc(' ', f);
        bk_alarmstate_hex(f, s.user, strlen(s.user));
        fputc(' ', f);
        bk_alarmstate_hex(f, s.comment, strlen(s.comment));
        fputc(' ', f);
        bk_alarmstate_hex(f, s.message, strlen(s.message));
        fputc('\n', f);
    }
    ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        (void)unlink(tmp);
        return -1;
    }
    an->dirty = false;
    an->st.saved++;
    return 0;
}

/* One condition's line (modified in place) into *s: 0 or -1. */
static int
bk_alarmstate_line(char *line, struct bk_alarmnode_saved *s)
{
    char                  *tok[1 + BK_AS_NUMS + 4], *save = NULL;
    long long              v[BK_AS_NUMS];
    struct bk_alarm_state *t = &s->st;
    size_t                 n, k = 0;

    memset(s, 0, sizeof(*s));
    for (char *p = strtok_r(line, " \n", &save); p != NULL;
         p = strtok_r(NULL, " \n", &save)) {
        if (k == sizeof(tok) / sizeof(tok[0]))
            return -1;
        tok[k++] = p;
    }
    if (k != sizeof(tok) / sizeof(tok[0])
        || strlen(tok[0]) >= sizeof(s->name))
        return -1;
    strcpy(s->name, tok[0]);
    for (int i = 0; i < BK_AS_NUMS; i++) {
        char *end;

        errno = 0;
        v[i] = strtoll(tok[1 + i], &end, 10);
        if (*end != '\0' || errno != 0)
            return -1;
    }
    for (int i = 0; i < 4; i++)
        if (v[i] != 0 && v[i] != 1)
            return -1;
    if (v[4] < 0 || v[4] > 15 || v[5] < 0 || v[5] > 15 || v[6] < 0
        || v[6] > BK_ALARM_ONESHOT || v[7] < 1 || v[7] > 1000 || v[8] < 1
        || v[8] > 1000)
        return -1;
    t->enabled = v[0];
    t->active = v[1];
    t->acked = v[2];
    t->confirmed = v[3];
    t->over = (uint8_t)v[4];
    t->limits = (uint8_t)v[5];
    t->shelving = (uint8_t)v[6];
    t->severity = (uint16_t)v[7];
    t->last_severity = (uint16_t)v[8];
    t->unshelve_at = v[9];
    t->enabled_ts = v[10];
    t->active_ts = v[11];
    t->acked_ts = v[12];
    t->confirmed_ts = v[13];
    t->limit_ts = v[14];
    t->shelving_ts = v[15];
    t->severity_ts = v[16];
    s->time = v[17];
    s->comment_ts = v[18];
    if (bk_alarmstate_unhex(tok[1 + BK_AS_NUMS], s->last_id,
                            sizeof(s->last_id), &n) != 0 || n != 16
        || bk_alarmstate_unhex(tok[2 + BK_AS_NUMS], s->user,
                               sizeof(s->user) - 1, &n) != 0)
        return -1;
    s->user[n] = '\0';
    if (bk_alarmstate_unhex(tok[3 + BK_AS_NUMS], s->comment,
                            sizeof(s->comment) - 1, &n) != 0)
        return -1;
    s->comment[n] = '\0';
    if (bk_alarmstate_unhex(tok[4 + BK_AS_NUMS], s->message,
                            sizeof(s->message) - 1, &n) != 0)
        return -1;
    s->message[n] = '\0';
    return 0;
}

int
bk_alarmstate_load(struct bk_alarmnode *an, const char *path, int64_t now,
                   char *err, size_t errlen)
{
    struct bk_alarmnode_saved *tab;
    char                       line[BK_AS_LINE];
    uint32_t                   n = 0, cap, lineno = 1, restored = 0;
    FILE                      *f = fopen(path, "r");

    if (f == NULL) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fgets(line, sizeof(line), f) == NULL
        || strcmp(line, BK_AS_HEADER "\n") != 0) {
        snprintf(err, errlen, "%s line 1: not a uabroker alarm state file",
                 path);
        fclose(f);
        return -1;
    }
    cap = an->n != 0 ? an->n : 1;
    tab = bk_calloc(cap, sizeof(*tab));
    if (tab == NULL) {
        snprintf(err, errlen, "%s: out of memory", path);
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        struct bk_alarmnode_saved s;

        lineno++;
        if (strchr(line, '\n') == NULL || bk_alarmstate_line(line, &s) != 0) {
            snprintf(err, errlen, "%s line %u: damaged", path, lineno);
            bk_free(tab);
            fclose(f);
            return -1;
        }
        if (n == cap) {
            void *p = bk_realloc(tab, 2 * (size_t)cap * sizeof(*tab));

            if (p == NULL) {
                snprintf(err, errlen, "%s: out of memory", path);
                bk_free(tab);
                fclose(f);
                return -1;
            }
            tab = p;
            cap *= 2;
        }
        tab[n++] = s;
    }
    fclose(f);
    for (uint32_t i = 0; i < n; i++)
        restored += bk_alarmnode_saved_put(an, i, &tab[i]);
    bk_free(tab);
    if (restored != 0)
        bk_alarmnode_rewrite(an, now);
    return (int)restored;
}
