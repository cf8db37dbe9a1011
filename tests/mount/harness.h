/* SPDX-License-Identifier: MIT */
/*
 * Check macros and the runner shared by the mount tests. Each check runs in a
 * forked process inside a fresh directory of its own under the mount, so a
 * crash, a change of credentials or a leftover file stays with that check.
 */
#ifndef TIERFS_TESTS_MOUNT_HARNESS_H
#define TIERFS_TESTS_MOUNT_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/* A check that runs longer than this is killed and counted as failed. */
#define HARNESS_CHECK_TIMEOUT_SEC 20

struct harness_check {
	const char *name;
	int (*fn)(void);
};

#define HARNESS_CHECK(fn) \
	{                 \
#fn, fn   \
	}

static const char *harness_check_name; /* check running in this process */

static inline const char *harness_errname(int err)
{
	static char unknown[32];
	const char *name = err ? strerrorname_np(err) : NULL;

	if (name)
		return name;
	snprintf(unknown, sizeof(unknown), "errno %d", err);
	return unknown;
}

__attribute__((format(printf, 3, 4))) static inline void harness_fail(const char *file, int line,
								      const char *fmt, ...)
{
	const char *base = strrchr(file, '/');
	va_list ap;

	printf("FAIL - %s: ", harness_check_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (%s:%d)\n", base ? base + 1 : file, line);
	fflush(stdout);
}

#define T_FAIL(...)                                            \
	do {                                                   \
		harness_fail(__FILE__, __LINE__, __VA_ARGS__); \
		return T_EXIT_FAIL;                            \
	} while (0)

#define T_SKIP(...)                                        \
	do {                                               \
		printf("skip - %s: ", harness_check_name); \
		printf(__VA_ARGS__);                       \
		printf("\n");                              \
		fflush(stdout);                            \
		return T_EXIT_SKIP;                        \
	} while (0)

/* A libc call that returns -1 and sets errno on failure must succeed. */
#define T_OK(expr)                                                                             \
	do {                                                                                   \
		long long ret_;                                                                \
		errno = 0;                                                                     \
		ret_ = (long long)(expr);                                                      \
		if (ret_ == -1)                                                                \
			T_FAIL("%s: expected success, got %s", #expr, harness_errname(errno)); \
	} while (0)

/* A libc call must fail with exactly this errno. */
#define T_ERRNO(expected, expr)                                                             \
	do {                                                                                \
		long long ret_;                                                             \
		int err_;                                                                   \
		errno = 0;                                                                  \
		ret_ = (long long)(expr);                                                   \
		err_ = errno;                                                               \
		if (ret_ != -1)                                                             \
			T_FAIL("%s: expected %s, got success (%lld)", #expr,                \
			       harness_errname(expected), ret_);                            \
		if (err_ != (expected))                                                     \
			T_FAIL("%s: expected %s, got %s", #expr, harness_errname(expected), \
			       harness_errname(err_));                                      \
	} while (0)

#define T_EQ(got, expected)                                                      \
	do {                                                                     \
		long long got_ = (long long)(got);                               \
		long long exp_ = (long long)(expected);                          \
		if (got_ != exp_)                                                \
			T_FAIL("%s: expected %lld, got %lld", #got, exp_, got_); \
	} while (0)

/* Same as T_EQ, printed in octal: for modes. */
#define T_EQ_OCT(got, expected)                                                    \
	do {                                                                       \
		unsigned long long got_ = (unsigned long long)(got);               \
		unsigned long long exp_ = (unsigned long long)(expected);          \
		if (got_ != exp_)                                                  \
			T_FAIL("%s: expected 0%llo, got 0%llo", #got, exp_, got_); \
	} while (0)

/* Same as T_EQ, printed in hex: for flag words. */
#define T_EQ_HEX(got, expected)                                                      \
	do {                                                                         \
		unsigned long long got_ = (unsigned long long)(got);                 \
		unsigned long long exp_ = (unsigned long long)(expected);            \
		if (got_ != exp_)                                                    \
			T_FAIL("%s: expected 0x%llx, got 0x%llx", #got, exp_, got_); \
	} while (0)

#define T_TRUE(cond)                                                   \
	do {                                                           \
		if (!(cond))                                           \
			T_FAIL("%s: expected true, got false", #cond); \
	} while (0)

#define T_STR(got, expected)                                                               \
	do {                                                                               \
		const char *got_ = (got);                                                  \
		const char *exp_ = (expected);                                             \
		if (strcmp(got_, exp_) != 0)                                               \
			T_FAIL("%s: expected \"%.64s\", got \"%.64s\"", #got, exp_, got_); \
	} while (0)

/* Byte-exact comparison; reports the first differing offset. */
#define T_MEM(got, expected, len)                                                               \
	do {                                                                                    \
		const unsigned char *got_ = (const void *)(got);                                \
		const unsigned char *exp_ = (const void *)(expected);                           \
		size_t len_ = (len), i_;                                                        \
		for (i_ = 0; i_ < len_; i_++)                                                   \
			if (got_[i_] != exp_[i_])                                               \
				T_FAIL("%s: at byte %zu expected 0x%02x, got 0x%02x", #got, i_, \
				       exp_[i_], got_[i_]);                                     \
	} while (0)

/* Propagates a non-pass result (already reported) of a sub-step. */
#define T_CALL(expr)                     \
	do {                             \
		int res_ = (expr);       \
		if (res_ != T_EXIT_PASS) \
			return res_;     \
	} while (0)

/* Waits for a child made by harness_fork() and propagates its result. */
#define T_WAIT(pid) T_CALL(harness_wait(pid))

/*
 * fork() for use inside a check. A child forked in the check function itself
 * returns from it into harness_run_one(), which ends the child with that
 * result without reporting "ok", so the T_* macros work in the child as in the
 * check. A child forked in a helper must end with harness_exit() instead.
 */
static inline pid_t harness_fork(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		alarm(HARNESS_CHECK_TIMEOUT_SEC); /* alarms are not inherited */
	else if (pid < 0)
		harness_fail(__FILE__, __LINE__, "fork: expected success, got %s",
			     harness_errname(errno));
	return pid;
}

/*
 * Forks a child running with the given credentials and no capabilities.
 * Returns as harness_fork(); the child exits at once if it cannot switch.
 */
static inline pid_t harness_fork_as(uid_t uid, gid_t gid, size_t nr_groups, const gid_t *groups)
{
	pid_t pid = harness_fork();

	if (pid != 0)
		return pid;
	if (setgroups(nr_groups, groups) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)) {
		harness_fail(__FILE__, __LINE__, "switch to uid %u gid %u: %s", (unsigned)uid,
			     (unsigned)gid, harness_errname(errno));
		_exit(T_EXIT_FAIL);
	}
	return 0;
}

/* Ends a child from harness_fork() with a T_EXIT_* result. */
static inline __attribute__((noreturn)) void harness_exit(int result)
{
	fflush(stdout);
	_exit(result);
}

/* Waits for a child from harness_fork(): its T_EXIT_* code, or fail if it died. */
static inline int harness_wait(pid_t pid)
{
	int status;

	if (pid < 0)
		return T_EXIT_FAIL;
	if (waitpid(pid, &status, 0) < 0) {
		harness_fail(__FILE__, __LINE__, "waitpid: %s", harness_errname(errno));
		return T_EXIT_FAIL;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		harness_fail(__FILE__, __LINE__, "expected to finish, got killed after %d s",
			     HARNESS_CHECK_TIMEOUT_SEC);
		return T_EXIT_FAIL;
	}
	if (WIFSIGNALED(status)) {
		harness_fail(__FILE__, __LINE__, "expected an exit, got signal SIG%s",
			     sigabbrev_np(WTERMSIG(status)));
		return T_EXIT_FAIL;
	}
	return WEXITSTATUS(status);
}

static inline int harness_is_root(void)
{
	return geteuid() == 0;
}

static int harness_unflag_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	int fd, flags;

	(void)st;
	(void)ftw;
	if (type != FTW_F && type != FTW_D)
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
		flags &= ~(FS_IMMUTABLE_FL | FS_APPEND_FL);
		ioctl(fd, FS_IOC_SETFLAGS, &flags);
	}
	close(fd);
	return 0;
}

static int harness_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP ? rmdir(path) : unlink(path)) {
		printf("FAIL - %s: cleanup: remove %s: %s\n", harness_check_name, path,
		       harness_errname(errno));
		return -1;
	}
	return 0;
}

/* Removes a check's directory, clearing immutable/append-only flags first. */
static inline int harness_remove_tree(const char *path)
{
	nftw(path, harness_unflag_one, 16, FTW_PHYS);
	if (nftw(path, harness_remove_one, 16, FTW_PHYS | FTW_DEPTH))
		return T_EXIT_FAIL;
	return T_EXIT_PASS;
}

static inline int harness_run_one(const char *root, const struct harness_check *check)
{
	char path[PATH_MAX];
	pid_t pid;
	int ret;

	harness_check_name = check->name;
	snprintf(path, sizeof(path), "%s/%s", root, check->name);
	if (mkdir(path, 0755)) {
		printf("FAIL - %s: mkdir %s: expected success, got %s\n", check->name, path,
		       harness_errname(errno));
		return T_EXIT_FAIL;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("FAIL - %s: fork: %s\n", check->name, harness_errname(errno));
		return T_EXIT_FAIL;
	}
	if (pid == 0) {
		alarm(HARNESS_CHECK_TIMEOUT_SEC);
		if (chdir(path)) {
			printf("FAIL - %s: chdir %s: %s\n", check->name, path,
			       harness_errname(errno));
			_exit(T_EXIT_FAIL);
		}
		ret = check->fn();
		fflush(stdout);
		_exit(ret);
	}
	ret = harness_wait(pid);
	if (ret != T_EXIT_PASS && ret != T_EXIT_SKIP)
		ret = T_EXIT_FAIL;
	if (harness_remove_tree(path) != T_EXIT_PASS)
		ret = T_EXIT_FAIL;
	if (ret == T_EXIT_PASS)
		printf("ok - %s\n", check->name);
	return ret;
}

/*
 * Runs every check (or only those named after DIR) against the directory
 * DIR.  Exits 1 if any check failed, 77 if all were skipped, else 0.
 */
static inline int harness_main(int argc, char **argv, const struct harness_check *checks,
			       size_t nr_checks)
{
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	int nr_pass = 0, nr_fail = 0, nr_skip = 0;
	struct stat st;
	size_t i;

	if (argc < 2) {
		fprintf(stderr,
			"usage: %s DIR [CHECK...] (DIR: root of an empty, writable mount)\n", prog);
		return T_EXIT_FAIL;
	}
	if (stat(argv[1], &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %s is not a directory\n", prog, argv[1]);
		return T_EXIT_FAIL;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	for (i = 0; i < nr_checks; i++) {
		bool is_named = argc == 2;

		for (int j = 2; j < argc && !is_named; j++)
			is_named = !strcmp(argv[j], checks[i].name);
		if (!is_named)
			continue;
		switch (harness_run_one(argv[1], &checks[i])) {
		case T_EXIT_PASS:
			nr_pass++;
			break;
		case T_EXIT_SKIP:
			nr_skip++;
			break;
		default:
			nr_fail++;
			break;
		}
	}
	printf("# %s: %d passed, %d failed, %d skipped, %zu checks\n", prog, nr_pass, nr_fail,
	       nr_skip, nr_checks);
	if (nr_fail)
		return T_EXIT_FAIL;
	return nr_pass ? T_EXIT_PASS : T_EXIT_SKIP;
}

#endif /* TIERFS_TESTS_MOUNT_HARNESS_H */
