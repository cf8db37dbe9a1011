// SPDX-License-Identifier: MIT
/*
 * The daemon's log: stderr in the foreground, syslog in the background,
 * and a lock-free rate limit for episodes that repeat at request rate.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tierfs/clock.h"
#include "tierfs/log.h"

static bool is_syslog;
static char ident[64];

void log_open(const char *mountpoint, bool to_stderr)
{
	if (to_stderr)
		return;
	/* The tag names the mount, so that a machine's many are told apart. */
	snprintf(ident, sizeof(ident), "tierfs %s", mountpoint);
	openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	is_syslog = true;
}

void log_msg(int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (is_syslog) {
		vsyslog(priority, fmt, ap);
	} else {
		char line[1024];

		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "tierfs: %s%s\n",
			priority <= LOG_ERR	? "error: " :
			priority == LOG_WARNING ? "warning: " :
						  "",
			line);
	}
	va_end(ap);
}

/* Whether a message may go now, and how many were held back before it. */
static bool may_log(struct log_ratelimit *rl, uint64_t *nr_suppressed)
{
	uint64_t now = clock_now_ns();
	uint64_t next = atomic_load_explicit(&rl->next_ns, memory_order_relaxed);

	if (now < next || !atomic_compare_exchange_strong(
				  &rl->next_ns, &next, now + LOG_RATELIMIT_SEC * 1000000000ull)) {
		atomic_fetch_add_explicit(&rl->nr_suppressed, 1, memory_order_relaxed);
		return false;
	}
	*nr_suppressed = atomic_exchange(&rl->nr_suppressed, 0);
	return true;
}

void log_limited(struct log_ratelimit *rl, int priority, const char *fmt, ...)
{
	uint64_t nr_suppressed;
	char line[768];
	va_list ap;

	if (!may_log(rl, &nr_suppressed))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (nr_suppressed)
		log_msg(priority, "%s (and %llu more since the last such message)", line,
			(unsigned long long)nr_suppressed);
	else
		log_msg(priority, "%s", line);
}
