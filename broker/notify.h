/*
 * broker/notify.h: the systemd service notification protocol
 * (sd_notify(3)), by hand: no libsystemd.
 *
 * systemd (Type=notify) passes the path of an AF_UNIX datagram socket in
 * $NOTIFY_SOCKET: a file system path, or an abstract address when it
 * starts with '@'.  The broker sends one datagram of newline-separated
 * VAR=VALUE assignments per state change: "READY=1" once every worker is
 * up and accepting, "RELOADING=1" (with MONOTONIC_USEC) before a SIGHUP
 * reload and "READY=1" after it, "STOPPING=1" at SIGTERM/SIGINT, and
 * STATUS=... lines for `systemctl status`.  Without $NOTIFY_SOCKET (not
 * started by systemd) nothing is sent.
 */
#ifndef BK_NOTIFY_H
#define BK_NOTIFY_H

/*
 * Send msg (e.g. "READY=1\nSTATUS=serving") to $NOTIFY_SOCKET: 1 sent,
 * 0 no $NOTIFY_SOCKET, or a negative errno (-ENAMETOOLONG for a path
 * that does not fit, -EINVAL for one neither absolute nor abstract, the
 * socket's error).  Never blocks: a full receiver loses the message.
 */
int bk_notify(const char *msg);

/*
 * The same, formatted like printf.  A message longer than 1 KiB is cut.
 */
int bk_notify_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * "RELOADING=1" with MONOTONIC_USEC (CLOCK_MONOTONIC now, in µs: what
 * Type=notify-reload wants beside it); the same return values.
 */
int bk_notify_reloading(void);

#endif /* BK_NOTIFY_H */
