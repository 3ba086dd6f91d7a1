/*
 * broker/feed.c: the feed's sockets in the broker (feed.h): text batches
 * from producers on a nanomsg NN_PULL socket, and from `uabroker feed`
 * (broker/feedcmd.c) on an NN_REP socket that answers a report; each
 * batch is parsed line by line (broker/feedline.c) and applied through
 * the value path as one value batch (broker/value.h).
 *
 * A batch is bounded by feed.max_batch_bytes; lines are parsed in the
 * feed's arena (reset per line) and encoded there; nothing is allocated
 * per batch.  Runs on the broker's event loop only.
 *
 * The hold (feed.h "Back-pressure"): holding => neither socket's event is
 * added and hold_ev is pending; behind => a wait began at behind_ms and
 * has not ended (it may have expired: then the sockets are read again
 * while the consumer is still behind).
 */
#include "feed.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "event.h"
#include "fanout.h"
#include "feedline.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/text.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"
#include "shm/log.h"

#define BK_FEED_PULL_BATCH   64         /* messages per callback */

static void bk_feed_on_pull(evutil_socket_t fd, short what, void *arg);
static void bk_feed_on_rep(evutil_socket_t fd, short what, void *arg);
static bool bk_feed_hold(struct bk_feed *fd);
static void bk_feed_on_hold(evutil_socket_t fd, short what, void *arg);
static void bk_feed_wait_end(struct bk_feed *fd, uint64_t now);

/* ------------------------------------------------------------ sockets */

void
bk_feed_url(const struct bk_config *c, const char *name, char *url,
            size_t cap)
{
    if (strcmp(name, BK_FEED_PULL_NAME) == 0 && c->feed_listen[0] != '\0')
        snprintf(url, cap, "%s", c->feed_listen);
    else
        snprintf(url, cap, "ipc://%s/%s", c->runtime_dir, name);
}

int
bk_feed_init(struct bk_feed *fd, struct event_base *base,
             struct bk_addrspace *as, const struct bk_config *c, char *err,
             size_t errlen)
{
    char ctl[BK_FEED_URL_MAX];
    int  rc;

    memset(fd, 0, sizeof(*fd));
    fd->as = as;
    fd->pull.sock = fd->rep.sock = -1;
    fd->cap = c->feed_max_batch_bytes;
    fd->report_cap = 64 * 1024;
    fd->arena_cap = 2 * fd->cap + (256u << 10);
    fd->buf = bk_alloc(fd->cap);
    fd->report = bk_alloc(fd->report_cap);
    fd->arena_buf = bk_alloc(fd->arena_cap);
    if (fd->buf == NULL || fd->report == NULL || fd->arena_buf == NULL) {
        snprintf(err, errlen, "feed: out of memory");
        goto fail;
    }
    ua_arena_init(&fd->arena, fd->arena_buf, fd->arena_cap);
    bk_feed_url(c, BK_FEED_PULL_NAME, fd->url, sizeof(fd->url));
    bk_feed_url(c, BK_FEED_CTL_NAME, ctl, sizeof(ctl));
    /* A socket file left by a dead broker would refuse the bind. */
    if (strncmp(fd->url, "ipc://", 6) == 0)
        (void)unlink(fd->url + 6);
    (void)unlink(ctl + 6);
    rc = shm_feed_bind(&fd->pull, SHM_FEED_PULL, fd->url, (int)fd->cap);
    if (rc != 0) {
        snprintf(err, errlen, "feed socket %s: %s", fd->url, strerror(-rc));
        goto fail;
    }
    rc = shm_feed_bind(&fd->rep, SHM_FEED_REP, ctl, (int)fd->cap);
    if (rc != 0) {
        snprintf(err, errlen, "feed control socket %s: %s", ctl,
                 strerror(-rc));
        goto fail;
    }
    fd->fanout = as->val.fanout;
    fd->hold_max_ms = c->feed_backpressure_ms;
    evtimer_assign(&fd->hold_ev, base, bk_feed_on_hold, fd);
    event_assign(&fd->pull_ev, base, shm_feed_fd(&fd->pull),
                 EV_READ | EV_PERSIST, bk_feed_on_pull, fd);
    event_assign(&fd->rep_ev, base, shm_feed_fd(&fd->rep),
                 EV_READ | EV_PERSIST, bk_feed_on_rep, fd);
    if (event_add(&fd->pull_ev, NULL) != 0
        || event_add(&fd->rep_ev, NULL) != 0) {
        snprintf(err, errlen, "feed: event_add() failed");
        goto fail;
    }
    return 0;
fail:
    bk_feed_clear(fd);
    return -1;
}

void
bk_feed_clear(struct bk_feed *fd)
{
    if (event_initialized(&fd->hold_ev))
        event_del(&fd->hold_ev);
    if (fd->pull.sock != -1) {
        if (event_initialized(&fd->pull_ev))
            event_del(&fd->pull_ev);
        shm_feed_close(&fd->pull);
    }
    if (fd->rep.sock != -1) {
        if (event_initialized(&fd->rep_ev))
            event_del(&fd->rep_ev);
        shm_feed_close(&fd->rep);
    }
    bk_free(fd->buf);
    bk_free(fd->report);
    bk_free(fd->arena_buf);
    fd->buf = NULL;
    fd->report = NULL;
    fd->arena_buf = NULL;
}

/* Batches without an answer. */
static void
bk_feed_on_pull(evutil_socket_t s, short what, void *arg)
{
    struct bk_feed       *fd = arg;
    struct bk_feed_result res;
    int                   n;

    (void)s;
    (void)what;
    for (int i = 0; i < BK_FEED_PULL_BATCH; i++) {
        if (bk_feed_hold(fd))
            return;
        n = shm_feed_recv(&fd->pull, fd->buf, fd->cap, -1);
        if (n == -EMSGSIZE)
            continue;                   /* the transport refuses those */
        if (n < 0)
            return;
        bk_feed_batch(fd->as, (const char *)fd->buf, (size_t)n,
                      ua_datetime_now(), &fd->arena, NULL, 0, &res);
    }
}

/* A batch that wants its report. */
static void
bk_feed_on_rep(evutil_socket_t s, short what, void *arg)
{
    struct bk_feed       *fd = arg;
    struct bk_feed_result res;
    size_t                len;
    int                   n;

    (void)s;
    (void)what;
    if (bk_feed_hold(fd))
        return;
    n = shm_feed_recv(&fd->rep, fd->buf, fd->cap, -1);
    if (n < 0) {
        if (n == -EMSGSIZE) {
            snprintf(fd->report, fd->report_cap, "batch larger than "
                     "feed.max_batch_bytes (%zu)\nok 0 failed 1\n", fd->cap);
            (void)shm_feed_send(&fd->rep, fd->report, strlen(fd->report));
        }
        return;
    }
    bk_feed_batch(fd->as, (const char *)fd->buf, (size_t)n, ua_datetime_now(),
                  &fd->arena, fd->report, fd->report_cap - 40, &res);
    len = strlen(fd->report);
    snprintf(fd->report + len, fd->report_cap - len, "ok %u failed %u\n",
             res.ok, res.failed);
    (void)shm_feed_send(&fd->rep, fd->report, strlen(fd->report));
}

/* ------------------------------------------------------------ the hold */

/* A wait is over (caught up, or expired): count its time. */
static void
bk_feed_wait_end(struct bk_feed *fd, uint64_t now)
{
    fd->fanout->feed_wait_ms += now - fd->behind_ms;
    fd->behind = false;
}

/*
 * Before a batch: true when the feed must wait for a consumer that is
 * behind (the sockets are then off and the timer on).
 */
static bool
bk_feed_hold(struct bk_feed *fd)
{
    static const struct timeval tick = { 0, 1000 };
    uint64_t                    now;

    if (fd->fanout == NULL || fd->hold_max_ms == 0)
        return false;
    if (!bk_fanout_backlogged(fd->fanout)) {
        if (fd->behind && !fd->expired)
            bk_feed_wait_end(fd, bk_clock_ms());
        fd->behind = fd->expired = false;
        return false;
    }
    if (fd->expired)
        return false;                   /* go on: losses are counted */
    now = bk_clock_ms();
    if (!fd->behind) {
        fd->behind = true;
        fd->behind_ms = now;
        fd->fanout->feed_waits++;
    } else if (now - fd->behind_ms >= fd->hold_max_ms) {
        bk_feed_wait_end(fd, now);
        fd->behind = fd->expired = true;
        fd->fanout->feed_wait_expired++;
        shm_log(SHM_LOG_WARNING, "feed: a worker or the historian is still "
                "behind after %u ms (feed.backpressure_ms): reading again, "
                "what the block pool cannot hold is lost and counted",
                fd->hold_max_ms);
        return false;
    }
    if (!fd->holding) {
        fd->holding = true;
        event_del(&fd->pull_ev);
        event_del(&fd->rep_ev);
    }
    evtimer_add(&fd->hold_ev, &tick);
    return true;
}

/* The hold's timer: look again; read the sockets once it is over. */
static void
bk_feed_on_hold(evutil_socket_t s, short what, void *arg)
{
    struct bk_feed *fd = arg;

    (void)s;
    (void)what;
    if (bk_feed_hold(fd))
        return;
    fd->holding = false;
    (void)event_add(&fd->pull_ev, NULL);
    (void)event_add(&fd->rep_ev, NULL);
}

/* ------------------------------------------------------------ batches */

void
bk_feed_batch(struct bk_addrspace *as, const char *text, size_t len,
              int64_t now, struct ua_arena *a, char *report, size_t rcap,
              struct bk_feed_result *res)
{
    const char              *p = text, *end = text + len;
    struct bk_feedline_value fv;
    struct shm_value         m;
    char                     why[BK_FEEDLINE_WHY_MAX];
    size_t                   rlen = 0;
    uint32_t                 lineno = 0;

    memset(res, 0, sizeof(*res));
    if (report != NULL && rcap != 0)
        report[0] = '\0';
    bk_value_batch_begin(&as->val);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        size_t      n = (size_t)(le - p);
        const char *s = ua_text_trim(p, &n);
        ua_status   st;
        uint8_t    *buf;
        size_t      need, elen;
        int         rc;

        lineno++;
        p = nl != NULL ? nl + 1 : end;
        if (n == 0 || s[0] == '#')
            continue;
        res->lines++;
        ua_arena_reset(a);
        if (n >= 6 && memcmp(s, "alarm=", 6) == 0) {
            /* An external alarm's state (broker/alarmnode.h). */
            st = bk_alarmnode_feed(&as->alarms, s + 6, n - 6, now, why,
                                   sizeof(why));
            if (st == UA_GOOD) {
                res->ok++;
                continue;
            }
            goto refused;
        }
        if (n >= 6 && memcmp(s, "event=", 6) == 0) {
            struct bk_event ev;
            uint32_t        cap = BK_FEEDLINE_EVENT_MAX;

            buf = ua_arena_alloc(a, cap);
            st = buf == NULL ? UA_BAD_OUT_OF_MEMORY
                             : bk_feedline_parse_event(&as->ns, s, n, now, a,
                                                       &ev, buf, cap, why,
                                                       sizeof(why));
            if (st == UA_GOOD) {
                res->ok++;
                res->events++;
                bk_value_event(&as->val, ev.buf, ev.len);
                continue;
            }
            goto refused;
        }
        st = bk_feedline_parse(&as->ns, s, n, a, &fv, why, sizeof(why));
        if (st == UA_GOOD) {
            need = ua_encoded_size(&fv.v, &ua_types[UA_TYPE_VARIANT]);
            buf = need != 0 ? ua_arena_alloc(a, need) : NULL;
            if (buf == NULL
                || ua_encode(&fv.v, &ua_types[UA_TYPE_VARIANT], buf, need,
                             &elen) != UA_GOOD) {
                st = UA_BAD_ENCODING_LIMITS_EXCEEDED;
                snprintf(why, sizeof(why), "the value does not encode");
            } else {
                memset(&m, 0, sizeof(m));
                m.status = fv.status;
                m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
                m.source_ts = fv.has_ts ? fv.source_ts : now;
                m.server_ts = now;
                rc = bk_value_write(&as->val, fv.slot, buf, (uint32_t)elen,
                                    &m);
                if (rc != 0) {
                    st = UA_BAD_OUT_OF_MEMORY;
                    snprintf(why, sizeof(why), "the value heap is full");
                }
            }
        }
        if (st == UA_GOOD) {
            res->ok++;
            continue;
        }
refused:
        res->failed++;
        if (report != NULL && rlen + 1 < rcap) {
            int k = snprintf(report + rlen, rcap - rlen, "line %u: %s: %s\n",
                             lineno, ua_status_name(st), why);

            if (k > 0)
                rlen += (size_t)k < rcap - rlen ? (size_t)k : rcap - rlen - 1;
        }
    }
    bk_value_batch_end(&as->val);
    ua_arena_reset(a);
    bk_fanout_count_feed(as->val.fanout, res->ok - res->events,
                         res->events);
}
