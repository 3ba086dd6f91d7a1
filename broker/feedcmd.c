/*
 * broker/feedcmd.c: the `uabroker feed` command (feedcmd.h), the client
 * side of the feed: lines from the arguments or standard input go out in
 * batches of at most feed.max_batch_bytes to a running broker's feed
 * sockets (broker/feed.c), and the reports that come back are printed
 * with line numbers of the whole input.
 *
 * A process of its own (not the broker's loop): blocking sends and
 * receives with timeouts; the buffers are allocated once per run.
 */
#include "feedcmd.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "feed.h"
#include "shm/feed.h"

#define BK_FEEDCMD_CONNECT_MS 5000
#define BK_FEEDCMD_REPORT_MS  30000
#define BK_FEEDCMD_LINGER_MS  200       /* --push: before closing */

int
bk_feedcmd_run(const struct bk_config *c, int argc, char **argv, FILE *in,
               FILE *out, FILE *err)
{
    struct shm_feed sock;
    char            url[BK_FEED_URL_MAX];
    char           *batch = NULL, *reply = NULL, *line = NULL;
    size_t          blen = 0, bcap = c->feed_max_batch_bytes, lcap = 0;
    const char     *force_url = NULL;
    bool            push = false, from_stdin = false;
    int             i, rc, code = 2;
    unsigned long   ok = 0, failed = 0, base_line = 0, sent_lines = 0;

    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--push") == 0)
            push = true;
        else if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
            force_url = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            break;
    }
    if (i == argc) {
        fprintf(err, "usage: uabroker [options] feed [--push] [--url URL] "
                "('NODEID=VALUE[;status=..][;ts=..]'... | -)\n");
        return 2;
    }
    if (argc - i == 1 && strcmp(argv[i], "-") == 0)
        from_stdin = true;
    if (force_url != NULL)
        snprintf(url, sizeof(url), "%s", force_url);
    else
        bk_feed_url(c, push ? BK_FEED_PULL_NAME : BK_FEED_CTL_NAME, url,
                    sizeof(url));
    rc = shm_feed_connect(&sock, push ? SHM_FEED_PUSH : SHM_FEED_REQ, url,
                          BK_FEEDCMD_CONNECT_MS);
    if (rc != 0) {
        fprintf(err, "uabroker feed: %s: %s\n", url, strerror(-rc));
        return 2;
    }
    batch = bk_alloc(bcap);
    reply = bk_alloc(64 * 1024 + 1);
    if (batch == NULL || reply == NULL)
        goto out;
    code = 0;
    /* Lines go out in batches of at most feed.max_batch_bytes. */
    for (;;) {
        const char *l;
        size_t      n;
        ssize_t     got = 0;
        bool        done;

        if (from_stdin) {
            got = getline(&line, &lcap, in);
            done = got < 0;
            l = line;
            n = got > 0 ? (size_t)got : 0;
            if (n > 0 && l[n - 1] == '\n')
                n--;
        } else {
            done = i >= argc;
            l = done ? NULL : argv[i++];
            n = l != NULL ? strlen(l) : 0;
        }
        if (!done && n + 1 > bcap) {
            fprintf(err, "uabroker feed: line %lu: longer than "
                    "feed.max_batch_bytes\n", base_line + sent_lines + 1);
            failed++;
            sent_lines++;
            code = 1;
            continue;
        }
        if (blen != 0 && (done || blen + n + 1 > bcap)) {
            /* Send this batch; with a report, line numbers shift by the
             * lines sent before it. */
            rc = shm_feed_send(&sock, batch, blen);
            if (rc != 0) {
                fprintf(err, "uabroker feed: send to %s: %s\n", url,
                        strerror(-rc));
                code = 2;
                break;
            }
            if (!push) {
                int          r = shm_feed_recv(&sock, reply, 64 * 1024,
                                               BK_FEEDCMD_REPORT_MS);
                char        *p, *nl;
                unsigned long o = 0, f = 0;

                if (r < 0) {
                    fprintf(err, "uabroker feed: no report from %s: %s\n",
                            url, strerror(-r));
                    code = 2;
                    break;
                }
                reply[r] = '\0';
                for (p = reply; *p != '\0'; p = nl + 1) {
                    unsigned long ln;
                    char         *rest;

                    nl = strchr(p, '\n');
                    if (nl == NULL)
                        nl = p + strlen(p) - 1;
                    if (sscanf(p, "ok %lu failed %lu", &o, &f) == 2)
                        continue;
                    if (strncmp(p, "line ", 5) == 0) {
                        ln = strtoul(p + 5, &rest, 10);
                        fprintf(err, "line %lu%.*s\n", ln + base_line,
                                (int)(nl - rest), rest);
                    } else {
                        fprintf(err, "%.*s\n", (int)(nl - p), p);
                    }
                    if (*nl == '\0')
                        break;
                }
                ok += o;
                failed += f;
            } else {
                ok += sent_lines;
            }
            base_line += sent_lines;
            sent_lines = 0;
            blen = 0;
        }
        if (done)
            break;
        memcpy(batch + blen, l, n);
        batch[blen + n] = '\n';
        blen += n + 1;
        sent_lines++;
    }
    if (push && ok != 0) {
        /* nanomsg has no linger: a message still queued when the socket
         * closes is dropped.  Give the pipe a moment to carry it. */
        struct timespec linger = { 0, BK_FEEDCMD_LINGER_MS * 1000000L };

        nanosleep(&linger, NULL);
    }
    if (code != 2) {
        if (push)
            fprintf(out, "sent %lu line%s\n", ok, ok == 1 ? "" : "s");
        else
            fprintf(out, "ok %lu failed %lu\n", ok, failed);
        if (failed != 0)
            code = 1;
    }
out:
    bk_free(line);                      /* getline()'s: libc's, uncounted */
    bk_free(batch);
    bk_free(reply);
    shm_feed_close(&sock);
    return code;
}
