/* SPDX-License-Identifier: MIT */
/*
 * The daemon's log: stderr until it daemonizes and with -f, syslog (which
 * the journal collects) once in the background.  Episodes that can repeat
 * at request rate (ENOSPC, failed stores and loads) go through a rate
 * limit that says how many were suppressed.
 */
#ifndef TIERFS_LOG_H
#define TIERFS_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

/*
 * Where messages go from now on: stderr when to_stderr, else syslog as
 * "tierfs[PID]" with the mount point as tag.  Thread-safe to call once,
 * before the threads that log start.
 */
void log_open(const char *mountpoint, bool to_stderr);

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
