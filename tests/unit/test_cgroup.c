// SPDX-License-Identifier: MIT
/*
 * Unit tests of cgroup discovery: mountinfo, /proc/PID/cgroup and limits on
 * fixture trees (argv[1]) of a hybrid, a pure v2 and a container machine,
 * malformed input, and live checks in a v1 memory cgroup of our own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tierfs/cgroup.h"
#include "check.h"

#define MiB (1ULL << 20)
#define V1_UNLIMITED "9223372036854771712"

static const char *fixtures; /* argv[1]: tests/unit/cgroup-fixtures */

/* out = <fixtures>/rel */
static char *fixture(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", fixtures, rel);
	return out;
}

/* out = dir/name, or "" when that does not fit in PATH_MAX. */
static char *join(char *out, const char *dir, const char *name)
{
	if (snprintf(out, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		out[0] = '\0';
	return out;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static void test_roots(void)
{
	char prefix[PATH_MAX], expected[PATH_MAX];
	struct cgroup_roots r;

	CHECK_EQ(0, cgroup_roots_find(fixture(prefix, "hybrid"), &r));
	CHECK_STR(fixture(expected, "hybrid/sys/fs/cgroup/memory"), r.v1_memory);
	CHECK_STR("/", r.v1_memory_base);
	CHECK_STR(fixture(expected, "hybrid/sys/fs/cgroup/unified"), r.v2);
	CHECK_STR("/", r.v2_base);
	CHECK(!r.v2_has_memory);

	CHECK_EQ(0, cgroup_roots_find(fixture(prefix, "v2"), &r));
	CHECK_STR("", r.v1_memory);
	CHECK_STR(fixture(expected, "v2/sys/fs/cgroup"), r.v2);
	CHECK(r.v2_has_memory);

	CHECK_EQ(0, cgroup_roots_find(fixture(prefix, "container"), &r));
	CHECK_STR(fixture(expected, "container/sys/fs/cgroup/memory"), r.v1_memory);
	CHECK_STR("/docker/abc", r.v1_memory_base);
	CHECK_STR("", r.v2);

	/*
	 * \040 and \134 and \011 undone; lines that are cut short, lack the
	 * " - " separator or name memory_recursiveprot/nomemory skipped; the
	 * first cgroup2 mount kept.
	 */
	CHECK_EQ(0, cgroup_roots_find(fixture(prefix, "escapes"), &r));
	CHECK_STR(fixture(expected, "escapes/sys/fs/cgroup/with space"), r.v2);
	CHECK(r.v2_has_memory);
	CHECK_STR(fixture(expected, "escapes/mnt/back\\slash\ttab"), r.v1_memory);

	CHECK_EQ(-ENOENT, cgroup_roots_find(fixture(prefix, "none"), &r));
	CHECK_STR("", r.v1_memory);
	CHECK_STR("", r.v2);
	CHECK_EQ(-ENOENT, cgroup_roots_find(fixture(prefix, "no-such-tree"), &r));
}

static void test_proc_cgroup(void)
{
	char path[PATH_MAX], v1[PATH_MAX], v2[PATH_MAX], tiny[8];

	CHECK_EQ(0, cgroup_of_pid(fixture(path, "hybrid/proc/100/cgroup"), v1, sizeof(v1), v2,
				  sizeof(v2)));
	CHECK_STR("/tenants/alice", v1);
	CHECK_STR("/system.slice/tierfs.service", v2);

	CHECK_EQ(0, cgroup_of_pid(fixture(path, "v2/proc/200/cgroup"), v1, sizeof(v1), v2,
				  sizeof(v2)));
	CHECK_STR("", v1);
	CHECK_STR("/system.slice/tenant.service", v2);

	/* Either buffer may be left out. */
	CHECK_EQ(0,
		 cgroup_of_pid(fixture(path, "hybrid/proc/100/cgroup"), NULL, 0, v2, sizeof(v2)));
	CHECK_STR("/system.slice/tierfs.service", v2);
	CHECK_EQ(-ENAMETOOLONG, cgroup_of_pid(fixture(path, "hybrid/proc/100/cgroup"), tiny,
					      sizeof(tiny), v2, sizeof(v2)));

	/* Colons inside a path are kept; a second line for a hierarchy is ignored. */
	CHECK_EQ(0,
		 cgroup_of_pid(fixture(path, "malformed/mixed"), v1, sizeof(v1), v2, sizeof(v2)));
	CHECK_STR("/first:with:colons", v1);
	CHECK_STR("/v2/path", v2);

	/* Every line malformed, an empty file, no file. */
	strcpy(v1, "stale");
	strcpy(v2, "stale");
	CHECK_EQ(-ENODATA,
		 cgroup_of_pid(fixture(path, "malformed/garbage"), v1, sizeof(v1), v2, sizeof(v2)));
	CHECK_STR("", v1);
	CHECK_STR("", v2);
	CHECK_EQ(-ENODATA,
		 cgroup_of_pid(fixture(path, "malformed/empty"), v1, sizeof(v1), v2, sizeof(v2)));
	CHECK_EQ(-ENOENT, cgroup_of_pid(fixture(path, "malformed/no-such-file"), v1, sizeof(v1), v2,
					sizeof(v2)));
}

/*
 * cgroup_limit() for the process whose /proc/PID/cgroup is at rel: the
 * limit, its file, and the limiting cgroup's usage; cgroup_file_bytes()
 * its page cache (UINT64_MAX: no limit, or no memory.stat).
 */
static void check_limit(const struct cgroup_roots *r, const char *rel, uint64_t limit,
			const char *source_rel, uint64_t usage, uint64_t file)
{
	char path[PATH_MAX], v1[PATH_MAX], v2[PATH_MAX], source[PATH_MAX];
	struct cgroup_limit lim;

	check_set_context("%s", rel);
	CHECK(cgroup_of_pid(fixture(path, rel), v1, sizeof(v1), v2, sizeof(v2)) >= 0);
	CHECK_EQ(0, cgroup_limit(r, v1, v2, &lim));
	CHECK_EQ(limit, lim.limit_bytes);
	CHECK_STR(source_rel ? fixture(source, source_rel) : "", lim.source);
	CHECK_EQ(usage, lim.usage_bytes);
	CHECK_EQ(file, cgroup_file_bytes(&lim));
	check_clear_context();
}

static void test_limits(void)
{
	char prefix[PATH_MAX];
	struct cgroup_limit lim;
	struct cgroup_roots r;

	CHECK_EQ(0, cgroup_roots_find(fixture(prefix, "hybrid"), &r));
	/*
	 * alice's 1 GiB is looser than her parent's 256 MiB; its page cache is
	 * v1's hierarchical count (total_*_file), not the cgroup's own.
	 */
	check_limit(&r, "hybrid/proc/100/cgroup", 256 * MiB,
		    "hybrid/sys/fs/cgroup/memory/tenants/memory.limit_in_bytes", 192 * MiB,
		    48 * MiB);
	/* bob has none of his own. */
	check_limit(&r, "hybrid/proc/101/cgroup", 256 * MiB,
		    "hybrid/sys/fs/cgroup/memory/tenants/memory.limit_in_bytes", 192 * MiB,
		    48 * MiB);
	/* 2^62 is unlimited; a soft limit is no limit. */
	check_limit(&r, "hybrid/proc/102/cgroup", 0, NULL, 0, UINT64_MAX);
	/* A parent with use_hierarchy 0 does not limit its children. */
	check_limit(&r, "hybrid/proc/103/cgroup", 0, NULL, 0, UINT64_MAX);

	/* Climbing out of the mount, or relative paths, are refused. */
	CHECK_EQ(-EINVAL, cgroup_limit(&r, "/tenants/../../..", NULL, &lim));
	CHECK_EQ(-EINVAL, cgroup_limit(&r, "/tenants/..", NULL, &lim));
	CHECK_EQ(-EINVAL, cgroup_limit(&r, "/./tenants", NULL, &lim));
	CHECK_EQ(-EINVAL, cgroup_limit(&r, "tenants", NULL, &lim));
	CHECK_EQ(0, cgroup_limit(&r, "", NULL, &lim));
	CHECK_EQ(0, lim.limit_bytes);
	CHECK_EQ(0, cgroup_limit(&r, "/tenants/..hidden", NULL, &lim));
	CHECK_EQ(256 * MiB, lim.limit_bytes);

	CHECK_EQ(0, cgroup_roots_find(fixture(prefix, "v2"), &r));
	/* memory.max "max" at the leaf, memory.high at the parent. */
	check_limit(&r, "v2/proc/200/cgroup", 512 * MiB,
		    "v2/sys/fs/cgroup/system.slice/memory.high", 320 * MiB, 60 * MiB);
	/* The leaf's memory.max is tighter than the parent's memory.high; no memory.stat. */
	check_limit(&r, "v2/proc/201/cgroup", 100 * MiB,
		    "v2/sys/fs/cgroup/system.slice/db.service/memory.max", 50 * MiB, UINT64_MAX);

	CHECK_EQ(0, cgroup_roots_find(fixture(prefix, "container"), &r));
	/* The mount's top is /docker/abc; no usage file there: usage unknown. */
	check_limit(&r, "container/proc/300/cgroup", 2048 * MiB,
		    "container/sys/fs/cgroup/memory/memory.limit_in_bytes", 0, UINT64_MAX);
	/* A cgroup outside the mount cannot be seen: no limit. */
	check_limit(&r, "container/proc/301/cgroup", 0, NULL, 0, UINT64_MAX);
}

/* Only \ooo that makes a byte other than NUL is an escape; the rest stays as it is. */
static void test_unescape(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "/mnt/a\\040b", "/mnt/a b" },
		{ "\\011\\012\\134", "\t\n\\" },
		{ "\\377", "\377" },
		{ "\\001x", "\001x" },
		{ "/a\\134040", "/a\\040" }, /* an escaped backslash, then digits */
		{ "\\000", "\\000" },	     /* NUL would cut the path short */
		{ "\\400", "\\400" },	     /* more than a byte */
		{ "\\089", "\\089" },	     /* not octal */
		{ "\\04x", "\\04x" },
		{ "\\04", "\\04" }, /* cut short at the end */
		{ "\\0", "\\0" },
		{ "end\\", "end\\" },
		{ "\\\\040", "\\ " }, /* a stray backslash, then an escape */
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		cgroup_mountinfo_unescape(buf);
		check_set_context("unescape \"%s\"", cases[i].in);
		CHECK_STR(cases[i].out, buf);
	}
	check_clear_context();
}

/* Random bytes as mountinfo and /proc/PID/cgroup must not crash the parsers. */
static void test_garbage(void)
{
	static const char alphabet[] = "0123456789:,-/ \\\nmemorycgroup2";
	char dir[] = "/tmp/tierfs-cgroup-XXXXXX", path[PATH_MAX], v1[64], v2[64];
	struct cgroup_roots r;
	unsigned int seed = 1;

	if (!mkdtemp(dir)) {
		printf("skip: garbage input: mkdtemp: %s\n", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/proc", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/self", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", dir);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "w");
		int len = rand_r(&seed) % 600;
		int ret;

		if (!CHECK(f != NULL))
			break;
		for (int j = 0; j < len; j++)
			fputc(alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)], f);
		fclose(f);
		ret = cgroup_roots_find(dir, &r);
		if (!CHECK(ret == 0 || ret == -ENOENT))
			break;
		ret = cgroup_of_pid(path, v1, sizeof(v1), v2, sizeof(v2));
		if (!CHECK(ret == 0 || ret == -ENODATA || ret == -ENAMETOOLONG))
			break;
		CHECK(strlen(v1) < sizeof(v1) && strlen(v2) < sizeof(v2));
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/self", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/proc", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_live_self(void)
{
	char v1[PATH_MAX], v2[PATH_MAX], self_v1[PATH_MAX], self_v2[PATH_MAX];
	struct cgroup_pressure p;
	struct cgroup_limit lim;
	struct cgroup_roots r;
	pid_t gone;
	int ret;

	CHECK_EQ(-ESRCH, cgroup_of(0, v1, sizeof(v1), v2, sizeof(v2)));
	CHECK_EQ(-ESRCH, cgroup_of(-1, v1, sizeof(v1), v2, sizeof(v2)));
	gone = fork();
	if (gone == 0)
		_exit(0);
	if (CHECK(gone > 0)) {
		waitpid(gone, NULL, 0);
		CHECK_EQ(-ESRCH, cgroup_of(gone, v1, sizeof(v1), v2, sizeof(v2)));
	}

	ret = cgroup_roots_find(NULL, &r);
	if (ret == -ENOENT) {
		printf("skip: live: no cgroup mounts here\n");
		return;
	}
	CHECK_EQ(0, ret);
	ret = cgroup_of_pid("/proc/self/cgroup", self_v1, sizeof(self_v1), self_v2,
			    sizeof(self_v2));
	CHECK_EQ(0, ret);
	CHECK_EQ(ret, cgroup_of(getpid(), v1, sizeof(v1), v2, sizeof(v2)));
	CHECK_STR(self_v1, v1);
	CHECK_STR(self_v2, v2);
	CHECK_EQ(0, cgroup_limit(&r, v1, v2, &lim));
	printf("# live: v1 memory at \"%s\" (base %s), v2 at \"%s\" (memory %s); we are in "
	       "\"%s\" and \"%s\"; limit %" PRIu64 " from \"%s\", usage %" PRIu64 "\n",
	       r.v1_memory, r.v1_memory_base, r.v2, r.v2_has_memory ? "on" : "off", v1, v2,
	       lim.limit_bytes, lim.source, lim.usage_bytes);

	/* What the daemon would get here: root may register anywhere. */
	ret = cgroup_pressure_open(&r, v1, v2, &p);
	if (geteuid() == 0)
		CHECK_EQ(0, ret);
	if (!ret)
		printf("# live: our pressure fd: %s after %u fallbacks\n", p.describe,
		       p.nr_fallbacks);
	else
		printf("# live: our pressure fd: %s\n", strerror(-ret));
	cgroup_pressure_close(&p);
}

/* Each pressure source on its own; PSI may be missing or refused. */
static void test_live_pressure_kinds(void)
{
	struct cgroup_roots live, none;
	char v1[PATH_MAX], v2[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	struct cgroup_pressure p;
	struct pollfd pfd;
	int ret;

	memset(&none, 0, sizeof(none));
	ret = cgroup_pressure_open(&none, NULL, NULL, &p);
	if (ret == -ENOENT || ret == -EACCES || ret == -EPERM || ret == -EOPNOTSUPP) {
		printf("skip: /proc/pressure/memory trigger: %s\n", strerror(-ret));
	} else if (CHECK_EQ(0, ret)) {
		CHECK_EQ(CGROUP_PRESSURE_SYSTEM, p.kind);
		CHECK_EQ(POLLPRI, p.poll_events);
		CHECK_EQ(0, p.nr_fallbacks);
		pfd = (struct pollfd){ .fd = p.fd, .events = p.poll_events };
		CHECK(poll(&pfd, 1, 0) >= 0);
		CHECK_EQ(0, cgroup_pressure_consume(&p));
		printf("# live: %s\n", p.describe);
		cgroup_pressure_close(&p);
		CHECK_EQ(-1, p.fd);
	}
	cgroup_pressure_close(&p);
	CHECK_EQ(-EBADF, cgroup_pressure_consume(&p));

	if (cgroup_roots_find(NULL, &live) || !live.v2[0] ||
	    cgroup_of(getpid(), v1, sizeof(v1), v2, sizeof(v2)) || !v2[0]) {
		printf("skip: live v2 memory.pressure: no cgroup2 here\n");
		return;
	}
	/* Our cgroup's own file, which only root or a delegatee may write. */
	if (snprintf(dir, sizeof(dir), "%s%s", live.v2, v2) >= (int)sizeof(dir) ||
	    strcmp(live.v2_base, "/") || access(join(path, dir, "memory.pressure"), W_OK)) {
		printf("skip: v2 memory.pressure trigger: %s not writable\n", path);
		return;
	}
	live.v1_memory[0] = '\0';
	ret = cgroup_pressure_open(&live, NULL, v2, &p);
	if (CHECK_EQ(0, ret)) {
		CHECK_EQ(CGROUP_PRESSURE_V2, p.kind);
		CHECK_EQ(POLLPRI, p.poll_events);
		printf("# live: %s\n", p.describe);
	}
	cgroup_pressure_close(&p);
}

/* The child waits for a byte: 'w' writes 128 MiB of page cache; EOF exits. */
static void child_run(int from_parent)
{
	static char buf[1 << 20];
	char cmd;
	int fd;

	if (read(from_parent, &cmd, 1) != 1 || cmd != 'w')
		_exit(0);
	fd = open("/var/tmp", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		_exit(2);
	memset(buf, 0x5a, sizeof(buf));
	for (int i = 0; i < 128; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			_exit(3);
	close(fd);
	_exit(0);
}

/*
 * A v1 memory cgroup with a 64 MiB limit, a child moved into it: its
 * cgroup, limit and pressure fd as the daemon would see them.
 */
static void test_live_v1(void)
{
	char dir[PATH_MAX], path[PATH_MAX], expected[PATH_MAX], v1[PATH_MAX], v2[PATH_MAX];
	char pid_str[32];
	struct cgroup_pressure p = { .fd = -1 };
	struct cgroup_limit lim;
	struct cgroup_roots r;
	int pipe_fds[2], status, nr_events, ret;
	pid_t child;

	if (geteuid()) {
		printf("skip: live v1 cgroup: not root\n");
		return;
	}
	if (cgroup_roots_find(NULL, &r) || !r.v1_memory[0] || strcmp(r.v1_memory_base, "/")) {
		printf("skip: live v1 cgroup: no v1 memory hierarchy here\n");
		return;
	}
	snprintf(expected, sizeof(expected), "tierfs-test-%d", (int)getpid());
	if (mkdir(join(dir, r.v1_memory, expected), 0755)) {
		printf("skip: live v1 cgroup: mkdir %s: %s\n", dir, strerror(errno));
		return;
	}
	CHECK_EQ(0, write_file(join(path, dir, "memory.limit_in_bytes"), "67108864"));
	if (!CHECK_EQ(0, pipe2(pipe_fds, O_CLOEXEC)))
		goto remove_cgroup;
	child = fork();
	if (child == 0) {
		close(pipe_fds[1]);
		child_run(pipe_fds[0]);
	}
	close(pipe_fds[0]);
	if (!CHECK(child > 0)) {
		close(pipe_fds[1]);
		goto remove_cgroup;
	}
	snprintf(pid_str, sizeof(pid_str), "%d", (int)child);
	CHECK_EQ(0, write_file(join(path, dir, "cgroup.procs"), pid_str));

	CHECK_EQ(0, cgroup_of(child, v1, sizeof(v1), v2, sizeof(v2)));
	snprintf(expected, sizeof(expected), "/tierfs-test-%d", (int)getpid());
	CHECK_STR(expected, v1);
	CHECK_EQ(0, cgroup_limit(&r, v1, v2, &lim));
	CHECK_EQ(64 * MiB, lim.limit_bytes);
	CHECK_STR(join(expected, dir, "memory.limit_in_bytes"), lim.source);
	CHECK(lim.usage_bytes <= 64 * MiB);

	if (CHECK_EQ(0, cgroup_pressure_open(&r, v1, v2, &p))) {
		CHECK_EQ(CGROUP_PRESSURE_V1, p.kind);
		CHECK_STR("v1 memory.pressure_level low", p.describe);
		CHECK_EQ(POLLIN, p.poll_events);
		CHECK_EQ(0, cgroup_pressure_consume(&p));
	}

	/* Reclaim at the limit should raise events; the kernel decides. */
	CHECK_EQ(1, write(pipe_fds[1], "w", 1));
	close(pipe_fds[1]);
	CHECK_EQ(child, waitpid(child, &status, 0));
	CHECK(WIFEXITED(status));
	CHECK_EQ(0, WEXITSTATUS(status));
	if (p.fd >= 0) {
		struct pollfd pfd = { .fd = p.fd, .events = p.poll_events };

		nr_events = poll(&pfd, 1, 1000) > 0 ? cgroup_pressure_consume(&p) : 0;
		CHECK(nr_events >= 0);
		printf("# live: %d v1 pressure_level events while the child wrote 128 MiB in a "
		       "64 MiB cgroup\n",
		       nr_events);
	}
	cgroup_pressure_close(&p);

remove_cgroup:
	ret = rmdir(dir) ? -errno : 0;
	if (!CHECK_EQ(0, ret))
		printf("     rmdir %s\n", dir);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1) {
		fixtures = argv[1];
		test_roots();
		test_proc_cgroup();
		test_limits();
	} else {
		printf("skip: fixture checks: no fixture directory given as argv[1]\n");
	}
	test_unescape();
	test_garbage();
	test_live_self();
	test_live_pressure_kinds();
	test_live_v1();
	return check_done("cgroup");
}
