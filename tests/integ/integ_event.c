/*
 * tests/integ/integ_event.c: events from the feed to a client, on
 * loopback (docs/subscriptions.md "Events", docs/feed.md "Events").
 *
 *   1. starts `uabroker -w 2` with limits.max_event_queue_size 10;
 *   2. two clients (sessions on whichever workers the kernel gives them)
 *      each monitor the Server object (i=2253, EventNotifier) with an
 *      EventFilter selecting EventId, EventType, SourceNode, Severity,
 *      Message and 1:Temp, queueSize 100 (revised to 10, the limit);
 *   3. `uabroker feed 'event=ns=1;s=Demo;severity=321;message="hi";
 *      1:Temp=7.5'`: ok 1; each client's Publish brings one
 *      EventNotificationList with the fields as fed, the same EventId;
 *      a refused event line is reported (BadOutOfRange, exit 1);
 *   4. 25 events in one feed batch while nobody publishes: a client gets
 *      an EventQueueOverflowEventType (i=3035) event first, then the 10
 *      newest (severities 16..25), in order (discardOldest);
 *   5. SIGTERM: the broker exits 0.
 *
 * Prints "ok N - what" / "FAIL N - what"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/itevent.h"
#include "tests/lib/uaconn.h"

#define IE_WATCHDOG_S 120
#define IE_START_MS   30000
#define IE_ARENA      (1u << 20)
#define IE_QUEUE      10
#define IE_WAIT_MS    5000

static char            ie_dir[PATH_MAX];
static char            ie_log[PATH_MAX + 16];
static char            ie_bin[PATH_MAX];
static struct ua_arena ie_arena;

/* Run argv, its output in out; its exit status (-1: it did not exit). */
static int
ie_run(char *const argv[], char *out, size_t cap)
{
    int     p[2], status;
    pid_t   pid;
    size_t  len = 0;
    ssize_t r;

    if (pipe(p) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    while (len + 1 < cap && (r = read(p[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(p[0]);
    if (pid == -1 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static int
ie_feed(const char *line, char *out, size_t cap)
{
    char *const argv[] = { ie_bin, "--runtime-dir", ie_dir, "feed",
                           (char *)(uintptr_t)line, NULL };

    return ie_run(argv, out, cap);
}

/* The event item's select clauses. */
static const struct itev_sel ie_sel[6] = {
    { { "EventId", NULL }, 0, false }, { { "EventType", NULL }, 0, false },
    { { "SourceNode", NULL }, 0, false }, { { "Severity", NULL }, 0, false },
    { { "Message", NULL }, 0, false }, { { "Temp", NULL }, 1, false },
};

/* Each client's event item. */
static struct itev ie_item[2];

/* A subscription with one event item on the Server (client i); its
 * revised queue. */
static uint32_t
ie_subscribe(struct uaconn *c, int i)
{
    itev_filter(&ie_item[i], ie_sel, 6);
    itev_subscribe(&ie_item[i], c, &ie_arena, 77);
    return ie_item[i].queue;
}

/* One event's fields, copied out of the arena. */
struct ie_ev {
    uint8_t  id[16];
    uint32_t type;
    uint16_t sev;
    char     msg[32];
    double   temp;
    bool     has_temp;
    bool     src_demo;
};

/* itev_decode_fn: the fields into ((struct ie_ev *)arg)[slot]. */
static void
ie_decode(void *arg, int slot, const struct ua_event_field_list *f)
{
    struct ie_ev *e = (struct ie_ev *)arg + slot;

    memset(e, 0, sizeof(*e));
    if (f->client_handle != 77 || f->n_event_fields != 6)
        return;
    if (f->event_fields[0].type == UA_BT_BYTESTRING
        && ((struct ua_string *)f->event_fields[0].data)->len == 16)
        memcpy(e->id, ((struct ua_string *)f->event_fields[0].data)->data,
               16);
    if (f->event_fields[1].type == UA_BT_NODEID)
        e->type = ((struct ua_nodeid *)f->event_fields[1].data)->id.num;
    if (f->event_fields[2].type == UA_BT_NODEID) {
        const struct ua_nodeid *sn = f->event_fields[2].data;

        e->src_demo = sn->ns == 1 && sn->idtype == UA_IDTYPE_STRING
                      && ua_string_eq(&sn->id.str, "Demo");
    }
    if (f->event_fields[3].type == UA_BT_UINT16)
        e->sev = *(uint16_t *)f->event_fields[3].data;
    if (f->event_fields[4].type == UA_BT_LOCALIZEDTEXT) {
        const struct ua_localizedtext *t = f->event_fields[4].data;

        if (t->text.len > 0 && t->text.len < (int32_t)sizeof(e->msg))
            memcpy(e->msg, t->text.data, (size_t)t->text.len);
    }
    if (f->event_fields[5].type == UA_BT_DOUBLE) {
        e->temp = *(double *)f->event_fields[5].data;
        e->has_temp = true;
    }
}

/*
 * Publish on client i until n events came or IE_WAIT_MS passed; the
 * events in out[max].  The number taken.
 */
static int
ie_events(struct uaconn *c, int i, struct ie_ev *out, int max, int n)
{
    return itev_publish(&ie_item[i], c, &ie_arena, max, n, IE_WAIT_MS,
                        ie_decode, out);
}

int
main(int argc, char **argv)
{
    struct uaconn c[2];
    struct ie_ev  ev[2][40];
    char          out[8192], batch[4096];
    uint16_t      oport, sport;
    ua_status     s;
    pid_t         broker;
    int           rc, n;
    uint32_t      q;

    itest_init("integ_event");
    (void)argc;
    itest_guard(IE_WATCHDOG_S, ie_log);
    ua_arena_init(&ie_arena, malloc(IE_ARENA), IE_ARENA);
    itest_broker_bin(argv[0], ie_bin, sizeof(ie_bin));
    itest_tmpdir("uabroker-ev", ie_dir, sizeof(ie_dir));
    snprintf(ie_log, sizeof(ie_log), "%s/broker.log", ie_dir);

    /* 1. The broker. */
    {
        const char *const extra[] = {
            "--set", "limits.max_event_queue_size=10", NULL
        };

        broker = itest_broker_start(ie_bin, 2, ie_dir, ie_log, extra,
                                    IE_START_MS, &oport, &sport);
    }
    /* 2. Two clients, an event item each. */
    for (int i = 0; i < 2; i++) {
        s = uaconn_start_retry(&c[i], "127.0.0.1", oport, IE_START_MS);
        if (s != UA_GOOD)
            itest_fatal("no session: 0x%08X", s);
        q = ie_subscribe(&c[i], i);
        itest_check(q == IE_QUEUE, "client %d: event item on the Server, "
                    "queueSize 100 revised to %u (limit 10)", i, q);
    }

    /* 3. One event from the feed to both. */
    rc = ie_feed("event=ns=1;s=Demo;severity=321;message=\"hi\";1:Temp=7.5",
                 out, sizeof(out));
    itest_check(rc == 0 && strstr(out, "ok 1 failed 0") != NULL,
                "uabroker feed event=...: exit %d, %s", rc, out);
    for (int i = 0; i < 2; i++) {
        n = ie_events(&c[i], i, ev[i], 40, 1);
        itest_check(n == 1 && ev[i][0].type == UA_NS0ID_BASEEVENTTYPE
                        && ev[i][0].src_demo && ev[i][0].sev == 321
                        && strcmp(ev[i][0].msg, "hi") == 0
                        && ev[i][0].has_temp && ev[i][0].temp == 7.5,
                    "client %d: the event with its fields (%d events, "
                    "type %u, severity %u, message \"%s\")", i, n,
                    n > 0 ? ev[i][0].type : 0, n > 0 ? ev[i][0].sev : 0,
                    n > 0 ? ev[i][0].msg : "");
    }
    itest_check(memcmp(ev[0][0].id, ev[1][0].id, 16) == 0,
                "both got the same EventId");
    rc = ie_feed("event=ns=1;s=Demo;severity=0", out, sizeof(out));
    itest_check(rc == 1 && strstr(out, "BadOutOfRange") != NULL,
                "severity=0 refused (exit %d): %s", rc, out);

    /* 4. 25 events at once: overflow, then the 10 newest. */
    {
        size_t k = 0;
        char  *av[30];
        char   lines[25][64];

        av[k++] = ie_bin;
        av[k++] = "--runtime-dir";
        av[k++] = ie_dir;
        av[k++] = "feed";
        for (int i = 0; i < 25; i++) {
            snprintf(lines[i], sizeof(lines[i]),
                     "event=ns=1;s=Demo;severity=%d", i + 1);
            av[k++] = lines[i];
        }
        av[k] = NULL;
        rc = ie_run(av, batch, sizeof(batch));
        itest_check(rc == 0 && strstr(batch, "ok 25 failed 0") != NULL,
                    "25 event lines in one batch: exit %d", rc);
    }
    n = ie_events(&c[0], 0, ev[0], 40, IE_QUEUE + 1);
    {
        bool order = n == IE_QUEUE + 1;

        for (int i = 1; order && i < n; i++)
            if (ev[0][i].sev != 15 + i || ev[0][i].type
                                              != UA_NS0ID_BASEEVENTTYPE)
                order = false;
        itest_check(n == IE_QUEUE + 1
                        && ev[0][0].type
                               == UA_NS0ID_EVENTQUEUEOVERFLOWEVENTTYPE
                        && order,
                    "queue of 10: an EventQueueOverflow event first, then "
                    "severities 16..25 (%d events, first type %u)", n,
                    n > 0 ? ev[0][0].type : 0);
    }

    /* 5. The end. */
    for (int i = 0; i < 2; i++) {
        uaconn_close(&c[i]);
        ua_client_clear(&c[i].cl);
        uaconn_clear(&c[i]);
    }
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    return itest_finish();
}
