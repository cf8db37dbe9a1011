// SPDX-License-Identifier: MIT
/*
 * The daemon's log: where log= sends it (syslog, standard error or a
 * file), /dev/kmsg or standard error when syslog has no /dev/log, and a
 * lock-free rate limit for episodes that repeat at request rate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tierfs/clock.h"
#include "tierfs/log.h"

/* stderr until log_open(): messages before the daemon detaches go there. */
static enum log_target target = LOG_TARGET_STDERR, chosen = LOG_TARGET_STDERR;
static int log_fd = -1; /* LOG_TARGET_FILE and LOG_TARGET_KMSG */
static char ident[PATH_MAX + 8];
static char fallback_note[160]; /* why syslog is not used, for the log itself */

/* Whether a syslog daemon listens at /dev/log, as syslog(3) would find it. */
static bool has_syslog(int *err)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		int ret;

		if (fd < 0) {
			*err = errno;
			continue;
		}
		ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		*err = errno;
		close(fd);
		if (!ret)
			return true;
	}
	return false;
}

int log_prepare(enum log_target want, const char *path, bool foreground, char *note,
		size_t note_len)
{
	int err;

	note[0] = '\0';
	if (want == LOG_TARGET_DEFAULT)
		want = foreground ? LOG_TARGET_STDERR : LOG_TARGET_SYSLOG;
	chosen = want;
	if (want == LOG_TARGET_FILE) {
		log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
		return log_fd < 0 ? -errno : 0;
	}
	if (want != LOG_TARGET_SYSLOG || has_syslog(&err))
		return 0;
	/* No syslog daemon: the kernel's ring (dmesg, the journal later), as systemd does. */
	log_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	chosen = log_fd >= 0 ? LOG_TARGET_KMSG : LOG_TARGET_STDERR;
	snprintf(fallback_note, sizeof(fallback_note),
		 "log=syslog: no syslog at /dev/log (%s): logging to %s", strerror(err),
		 log_fd >= 0 ? "/dev/kmsg" : "standard error");
	snprintf(note, note_len, "%s", fallback_note);
	return 0;
}

bool log_keeps_stderr(void)
{
	return chosen == LOG_TARGET_STDERR;
}

void log_open(const char *mountpoint)
{
	/* The tag names the mount, so that a machine's many are told apart. */
	snprintf(ident, sizeof(ident), "tierfs %s", mountpoint);
	target = chosen;
	if (target == LOG_TARGET_SYSLOG)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	if (fallback_note[0])
		log_msg(LOG_WARNING, "%s", fallback_note);
}

static const char *level_of(int priority)
{
	return priority <= LOG_ERR ? "error: " : priority == LOG_WARNING ? "warning: " : "";
}

/*
 * One line in one write(2), so that the lines of threads do not mix: the
 * kernel's ring takes the priority from "<N>", a file gets the time.
 */
static void write_line(int priority, const char *line)
{
	char buf[1280], stamp[48] = "";
	struct timespec ts;
	struct tm tm;
	int len;

	if (target == LOG_TARGET_KMSG) {
		len = snprintf(buf, sizeof(buf), "<%d>%s[%d]: %s%s\n", LOG_DAEMON | priority, ident,
			       (int)getpid(), level_of(priority), line);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		if (localtime_r(&ts.tv_sec, &tm)) {
			size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);

			n += (size_t)snprintf(stamp + n, sizeof(stamp) - n, ".%03ld",
					      ts.tv_nsec / 1000000);
			strftime(stamp + n, sizeof(stamp) - n, "%z", &tm);
		}
		len = snprintf(buf, sizeof(buf), "%s %s[%d]: %s%s\n", stamp, ident, (int)getpid(),
			       level_of(priority), line);
	}
	if (len >= (int)sizeof(buf)) {
		len = (int)sizeof(buf) - 1;
		buf[len - 1] = '\n';
	}
	if (write(log_fd, buf, (size_t)len) < 0)
		return; /* nowhere left to say so */
}

void log_msg(int priority, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	if (target == LOG_TARGET_SYSLOG) {
		vsyslog(priority, fmt, ap);
		va_end(ap);
		return;
	}
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (target == LOG_TARGET_STDERR)
		fprintf(stderr, "tierfs: %s%s\n", level_of(priority), line);
	else
		write_line(priority, line);
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
