/* SPDX-License-Identifier: MIT */
/*
 * The daemon's log: stderr until it daemonizes; then where log= says,
 * by default stderr with -f and syslog (which the journal collects) in
 * the background, or the kernel's ring when no syslog listens.  Episodes
 * that can repeat at request rate (ENOSPC, failed stores and loads) go
 * through a rate limit that says how many were suppressed.
 */
#ifndef TIERFS_LOG_H
#define TIERFS_LOG_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

enum log_target {
	LOG_TARGET_DEFAULT, /* stderr with -f, else syslog */
	LOG_TARGET_SYSLOG,
	LOG_TARGET_STDERR,
	LOG_TARGET_FILE,
	LOG_TARGET_KMSG, /* syslog's stand-in when /dev/log does not answer */
};

/*
 * Decide where messages will go, before the daemon daemonizes: open the
 * log file (appended to, made 0640), or for syslog check that /dev/log
 * answers, else take /dev/kmsg, else stderr, and say so in note ("" when
 * there is nothing to say).  Messages still go to stderr until
 * log_open(): what the mount's set-up says reaches its caller.  Returns 0
 * or -errno of the file's open(2).
 */
int log_prepare(enum log_target want, const char *path, bool foreground, char *note,
		size_t note_len);

/* Whether log_prepare() chose stderr: daemonizing must keep it open. */
bool log_keeps_stderr(void);

/*
 * Messages go where log_prepare() chose from now on, tagged "tierfs
 * MOUNTPOINT" with the pid.  Call once, before the threads that log start.
 */
void log_open(const char *mountpoint);

/* Log one message at a syslog priority (LOG_ERR, LOG_WARNING, LOG_INFO). */
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* At most one message a LOG_RATELIMIT_SEC from one place; zero-initialise. */
struct log_ratelimit {
	atomic_uint_fast64_t next_ns;	    /* CLOCK_MONOTONIC of the next allowed message */
	atomic_uint_fast64_t nr_suppressed; /* since the last message */
};

#define LOG_RATELIMIT_SEC 10

/*
 * log_msg, unless one went from rl less than LOG_RATELIMIT_SEC ago; the
 * message that goes says how many were held back.  Lock-free.
 */
void log_limited(struct log_ratelimit *rl, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
