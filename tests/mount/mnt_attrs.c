// SPDX-License-Identifier: MIT
/*
 * Attribute conformance of a mounted filesystem against tmpfs: ownership,
 * modes, times, permission checks, POSIX ACLs, xattrs and inode flags.
 * Usage: mnt_attrs DIR, where DIR is the empty root of the mount.
 */
#include <endian.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>

#include "harness.h"

/* An O_DIRECT write's buffer: page-aligned. */
static _Alignas(4096) char attr_direct_page[4096];

/* Unprivileged identities; they need no entry in /etc/passwd. */
#define ATTR_UID_A 1000
#define ATTR_UID_B 1001
#define ATTR_UID_C 1002
#define ATTR_GID_A 1000
#define ATTR_GID_B 1001
#define ATTR_GID_SHARED 2000
#define ATTR_GID_OTHER 3000

/* The POSIX ACL xattr format (linux/posix_acl_xattr.h), little endian. */
#define ATTR_ACL_VERSION 2
#define ATTR_ACL_USER_OBJ 0x01
#define ATTR_ACL_USER 0x02
#define ATTR_ACL_GROUP_OBJ 0x04
#define ATTR_ACL_GROUP 0x08
#define ATTR_ACL_MASK 0x10
#define ATTR_ACL_OTHER 0x20
#define ATTR_ACL_UNDEFINED_ID 0xffffffffu
#define ATTR_ACL_MAX_ENTRIES 16

#define ATTR_XATTR_ACCESS "system.posix_acl_access"
#define ATTR_XATTR_DEFAULT "system.posix_acl_default"

struct attr_acl_entry {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

struct attr_acl_xattr {
	uint32_t version;
	struct attr_acl_entry entries[ATTR_ACL_MAX_ENTRIES];
};

/* Encodes entries (already in the kernel's tag/id order); returns the xattr size. */
static size_t attr_acl_encode(struct attr_acl_xattr *x, const struct attr_acl_entry *entries,
			      size_t nr_entries)
{
	size_t i;

	x->version = htole32(ATTR_ACL_VERSION);
	for (i = 0; i < nr_entries; i++) {
		x->entries[i].tag = htole16(entries[i].tag);
		x->entries[i].perm = htole16(entries[i].perm);
		x->entries[i].id = htole32(entries[i].id);
	}
	return sizeof(x->version) + nr_entries * sizeof(x->entries[0]);
}

static int attr_set_acl(const char *path, const char *name, const struct attr_acl_entry *entries,
			size_t nr_entries)
{
	struct attr_acl_xattr x;
	size_t size = attr_acl_encode(&x, entries, nr_entries);

	T_OK(setxattr(path, name, &x, size, 0));
	return T_EXIT_PASS;
}

/* Reads an ACL xattr back and compares it entry by entry. */
static int attr_expect_acl(const char *path, const char *name, const struct attr_acl_entry *entries,
			   size_t nr_entries)
{
	struct attr_acl_xattr want, got;
	size_t size = attr_acl_encode(&want, entries, nr_entries);
	ssize_t len;
	size_t i;

	T_OK(len = getxattr(path, name, &got, sizeof(got)));
	if ((size_t)len != size)
		T_FAIL("%s of %s: expected %zu bytes (%zu entries), got %zd", name, path, size,
		       nr_entries, len);
	T_EQ(le32toh(got.version), ATTR_ACL_VERSION);
	for (i = 0; i < nr_entries; i++) {
		const struct attr_acl_entry *w = &want.entries[i], *g = &got.entries[i];

		if (memcmp(w, g, sizeof(*w)) != 0)
			T_FAIL("%s of %s entry %zu: expected {tag 0x%x, perm %o, id %d}, got {tag 0x%x, perm %o, id %d}",
			       name, path, i, le16toh(w->tag), le16toh(w->perm),
			       (int)le32toh(w->id), le16toh(g->tag), le16toh(g->perm),
			       (int)le32toh(g->id));
	}
	return T_EXIT_PASS;
}

static int attr_make_file(const char *path, mode_t mode, const char *data)
{
	size_t len = data ? strlen(data) : 0;
	int fd;

	T_OK(fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
	if (len)
		T_EQ(write(fd, data, len), len);
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int attr_expect_owner(const char *path, uid_t uid, gid_t gid)
{
	struct stat st;

	T_OK(lstat(path, &st));
	if (st.st_uid != uid || st.st_gid != gid)
		T_FAIL("owner of %s: expected %u:%u, got %u:%u", path, (unsigned)uid, (unsigned)gid,
		       (unsigned)st.st_uid, (unsigned)st.st_gid);
	return T_EXIT_PASS;
}

static int attr_expect_mode(const char *path, mode_t mode)
{
	struct stat st;

	T_OK(lstat(path, &st));
	if (st.st_mode != mode)
		T_FAIL("st_mode of %s: expected 0%o, got 0%o", path, (unsigned)mode,
		       (unsigned)st.st_mode);
	return T_EXIT_PASS;
}

static int attr_ts_cmp(const struct timespec *a, const struct timespec *b)
{
	if (a->tv_sec != b->tv_sec)
		return a->tv_sec < b->tv_sec ? -1 : 1;
	if (a->tv_nsec != b->tv_nsec)
		return a->tv_nsec < b->tv_nsec ? -1 : 1;
	return 0;
}

static int attr_expect_ts(const char *what, const struct timespec *got,
			  const struct timespec *expected)
{
	if (attr_ts_cmp(got, expected) != 0)
		T_FAIL("%s: expected %lld.%09ld, got %lld.%09ld", what, (long long)expected->tv_sec,
		       expected->tv_nsec, (long long)got->tv_sec, got->tv_nsec);
	return T_EXIT_PASS;
}

/*
 * Sleeps until the coarse clock, which file timestamps may come from, has
 * passed @t, so that a timestamp taken from now on is strictly newer.
 */
static void attr_wait_past(const struct timespec *t)
{
	struct timespec now, tick = { 0, 1000000 };
	int i;

	for (i = 0; i < 2000; i++) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (attr_ts_cmp(&now, t) > 0)
			return;
		nanosleep(&tick, NULL);
	}
}

/* Tells whether a step changed ctime (and mtime) of a path. */
struct attr_times {
	const char *path;
	struct stat before;
};

static int attr_times_start(struct attr_times *t, const char *path)
{
	t->path = path;
	T_OK(lstat(path, &t->before));
	attr_wait_past(&t->before.st_ctim);
	attr_wait_past(&t->before.st_mtim);
	return T_EXIT_PASS;
}

static int attr_times_expect(const struct attr_times *t, const char *step, int ctime_changes,
			     int mtime_changes)
{
	struct stat st;

	T_OK(lstat(t->path, &st));
	if ((attr_ts_cmp(&st.st_ctim, &t->before.st_ctim) > 0) != ctime_changes)
		T_FAIL("ctime of %s after %s: expected %s %lld.%09ld, got %lld.%09ld", t->path,
		       step, ctime_changes ? "newer than" : "equal to",
		       (long long)t->before.st_ctim.tv_sec, t->before.st_ctim.tv_nsec,
		       (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	if ((attr_ts_cmp(&st.st_mtim, &t->before.st_mtim) > 0) != mtime_changes)
		T_FAIL("mtime of %s after %s: expected %s %lld.%09ld, got %lld.%09ld", t->path,
		       step, mtime_changes ? "newer than" : "equal to",
		       (long long)t->before.st_mtim.tv_sec, t->before.st_mtim.tv_nsec,
		       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return T_EXIT_PASS;
}

static int attr_skip_unless_root(void)
{
	if (!harness_is_root())
		T_SKIP("needs root to switch credentials");
	return T_EXIT_PASS;
}

static int attr_owner_from_caller(void)
{
	static const gid_t groups[] = { ATTR_GID_OTHER };
	pid_t pid;

	T_CALL(attr_skip_unless_root());
	T_OK(chmod(".", 0777));
	T_CALL(attr_make_file("root_file", 0644, NULL));
	T_CALL(attr_expect_owner("root_file", 0, 0));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 1, groups);
	if (pid == 0) {
		T_CALL(attr_make_file("f", 0644, NULL));
		T_OK(mkdir("d", 0755));
		T_OK(symlink("f", "l"));
		T_OK(mkfifo("p", 0644));
		T_OK(link("f", "hard"));
		/* The primary group, never a supplementary one. */
		T_CALL(attr_expect_owner("f", ATTR_UID_A, ATTR_GID_A));
		T_CALL(attr_expect_owner("d", ATTR_UID_A, ATTR_GID_A));
		T_CALL(attr_expect_owner("l", ATTR_UID_A, ATTR_GID_A));
		T_CALL(attr_expect_owner("p", ATTR_UID_A, ATTR_GID_A));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	/* Renaming by root does not change the owner. */
	T_OK(rename("f", "f2"));
	T_CALL(attr_expect_owner("f2", ATTR_UID_A, ATTR_GID_A));
	T_CALL(attr_expect_owner(".", 0, 0));
	return T_EXIT_PASS;
}

static int attr_make_sgid_dir(const char *path)
{
	T_OK(mkdir(path, 0755));
	T_OK(chown(path, 0, ATTR_GID_SHARED));
	T_OK(chmod(path, 02777));
	T_CALL(attr_expect_mode(path, S_IFDIR | 02777));
	return T_EXIT_PASS;
}

/* New entries in a setgid directory take its group; subdirectories its setgid bit. */
static int attr_setgid_dir_inherit(void)
{
	pid_t pid;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_sgid_dir("sg"));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_CALL(attr_make_file("sg/f", 0644, NULL));
		T_CALL(attr_expect_owner("sg/f", ATTR_UID_A, ATTR_GID_SHARED));
		T_CALL(attr_expect_mode("sg/f", S_IFREG | 0644));
		T_OK(mkdir("sg/d", 0755));
		T_CALL(attr_expect_owner("sg/d", ATTR_UID_A, ATTR_GID_SHARED));
		T_CALL(attr_expect_mode("sg/d", S_IFDIR | 02755));
		T_OK(mkdir("sg/d/e", 0700));
		T_CALL(attr_expect_owner("sg/d/e", ATTR_UID_A, ATTR_GID_SHARED));
		T_CALL(attr_expect_mode("sg/d/e", S_IFDIR | 02700));
		T_OK(symlink("f", "sg/l"));
		T_CALL(attr_expect_owner("sg/l", ATTR_UID_A, ATTR_GID_SHARED));
		T_OK(mkfifo("sg/p", 0644));
		T_CALL(attr_expect_owner("sg/p", ATTR_UID_A, ATTR_GID_SHARED));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(mkdir("sg/r", 0755));
	T_CALL(attr_expect_owner("sg/r", 0, ATTR_GID_SHARED));
	T_CALL(attr_expect_mode("sg/r", S_IFDIR | 02755));
	/* Moving an entry in keeps its group. */
	T_CALL(attr_make_file("outside", 0644, NULL));
	T_OK(rename("outside", "sg/moved"));
	T_CALL(attr_expect_owner("sg/moved", 0, 0));
	/* Clearing the bit stops the inheritance. */
	T_OK(chmod("sg", 0777));
	T_OK(mkdir("sg/plain", 0755));
	T_CALL(attr_expect_owner("sg/plain", 0, 0));
	T_CALL(attr_expect_mode("sg/plain", S_IFDIR | 0755));
	return T_EXIT_PASS;
}

/* S_ISGID asked for by someone outside the file's group is dropped, silently. */
static int attr_sgid_strip(void)
{
	static const gid_t member[] = { ATTR_GID_SHARED };
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_OK(chmod(".", 0777));
	T_CALL(attr_make_sgid_dir("sg"));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		/* umask 022 still applies. */
		T_OK(fd = open("sg/f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 02777));
		T_OK(close(fd));
		T_CALL(attr_expect_owner("sg/f", ATTR_UID_A, ATTR_GID_SHARED));
		T_CALL(attr_expect_mode("sg/f", S_IFREG | 0755));
		/* Without group execute the bit is not a privilege and stays. */
		T_OK(fd = open("sg/g", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 02644));
		T_OK(close(fd));
		T_CALL(attr_expect_mode("sg/g", S_IFREG | 02644));
		T_OK(mkdir("sg/d", 02755));
		T_CALL(attr_expect_mode("sg/d", S_IFDIR | 02755));
		/* chmod g+s on a file of a foreign group: no error, no bit. */
		T_OK(chmod("sg/f", 02755));
		T_CALL(attr_expect_mode("sg/f", S_IFREG | 0755));
		/* In its own group everything is kept, S_ISUID included. */
		T_OK(fd = open("own", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 06755));
		T_OK(close(fd));
		T_CALL(attr_expect_owner("own", ATTR_UID_A, ATTR_GID_A));
		T_CALL(attr_expect_mode("own", S_IFREG | 06755));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork_as(ATTR_UID_B, ATTR_GID_B, 1, member);
	if (pid == 0) {
		T_OK(fd = open("sg/m", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 02755));
		T_OK(close(fd));
		T_CALL(attr_expect_owner("sg/m", ATTR_UID_B, ATTR_GID_SHARED));
		T_CALL(attr_expect_mode("sg/m", S_IFREG | 02755));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

static int attr_chmod(void)
{
	struct stat st;
	pid_t pid;
	int fd;

	T_CALL(attr_make_file("f", 0644, NULL));
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	T_OK(chmod("f", 0640));
	T_CALL(attr_expect_mode("f", S_IFREG | 0640));
	T_OK(chmod("f", 07777));
	T_CALL(attr_expect_mode("f", S_IFREG | 07777));
	T_OK(chmod("f", 0));
	T_CALL(attr_expect_mode("f", S_IFREG | 0));
	T_OK(fchmod(fd, 0604));
	T_OK(fstat(fd, &st));
	T_EQ_OCT(st.st_mode, S_IFREG | 0604);
	T_OK(close(fd));
	/* chmod follows symlinks; the link keeps 0777. */
	T_OK(symlink("f", "l"));
	T_OK(chmod("l", 0600));
	T_CALL(attr_expect_mode("f", S_IFREG | 0600));
	T_CALL(attr_expect_mode("l", S_IFLNK | 0777));
	T_OK(mkdir("d", 0755));
	T_OK(chmod("d", 01777));
	T_CALL(attr_expect_mode("d", S_IFDIR | 01777));
	/* Type bits passed to chmod are ignored. */
	T_OK(chmod("f", S_IFDIR | 0644));
	T_CALL(attr_expect_mode("f", S_IFREG | 0644));
	if (!harness_is_root())
		return T_EXIT_PASS;
	T_CALL(attr_make_file("mine", 0644, NULL));
	T_OK(chown("mine", ATTR_UID_A, ATTR_GID_A));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_OK(chmod("mine", 0600));
		T_CALL(attr_expect_mode("mine", S_IFREG | 0600));
		T_OK(chmod("mine", 01644));
		T_CALL(attr_expect_mode("mine", S_IFREG | 01644));
		T_ERRNO(EPERM, chmod("f", 0666));
		T_ERRNO(EPERM, chmod(".", 0777));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_CALL(attr_expect_mode("f", S_IFREG | 0644));
	return T_EXIT_PASS;
}

static int attr_chown(void)
{
	static const gid_t groups[] = { ATTR_GID_SHARED };
	pid_t pid;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("f", 0644, NULL));
	T_OK(chown("f", ATTR_UID_A, ATTR_GID_A));
	T_CALL(attr_expect_owner("f", ATTR_UID_A, ATTR_GID_A));
	T_OK(chown("f", -1, ATTR_GID_OTHER));
	T_CALL(attr_expect_owner("f", ATTR_UID_A, ATTR_GID_OTHER));
	T_OK(chown("f", ATTR_UID_B, -1));
	T_CALL(attr_expect_owner("f", ATTR_UID_B, ATTR_GID_OTHER));
	T_OK(chown("f", ATTR_UID_A, ATTR_GID_A));
	/* lchown changes the link, chown its target. */
	T_OK(symlink("f", "l"));
	T_OK(lchown("l", ATTR_UID_C, ATTR_GID_B));
	T_CALL(attr_expect_owner("l", ATTR_UID_C, ATTR_GID_B));
	T_CALL(attr_expect_owner("f", ATTR_UID_A, ATTR_GID_A));
	T_CALL(attr_make_file("rootfile", 0666, NULL));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 1, groups);
	if (pid == 0) {
		/* An owner may not give a file away... */
		T_ERRNO(EPERM, chown("f", ATTR_UID_B, -1));
		/* ...nor hand it to a group it is not in... */
		T_ERRNO(EPERM, chown("f", -1, ATTR_GID_OTHER));
		/* ...but may move it between its own groups. */
		T_OK(chown("f", -1, ATTR_GID_SHARED));
		T_CALL(attr_expect_owner("f", ATTR_UID_A, ATTR_GID_SHARED));
		T_OK(chown("f", ATTR_UID_A, ATTR_GID_A));
		T_OK(chown("f", -1, -1));
		T_CALL(attr_expect_owner("f", ATTR_UID_A, ATTR_GID_A));
		/* Not the owner: even a no-op change is refused. */
		T_ERRNO(EPERM, chown("rootfile", -1, ATTR_GID_A));
		T_ERRNO(EPERM, chown("rootfile", 0, 0));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_CALL(attr_expect_owner("rootfile", 0, 0));
	return T_EXIT_PASS;
}

static int attr_utimens(void)
{
	const struct timespec set[2] = { { 1234567890, 123456789 }, { 1000000000, 999999999 } };
	const struct timespec omit_atime[2] = { { 0, UTIME_OMIT }, { 5, 6 } };
	const struct timespec now_mtime[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
	const struct timespec link_times[2] = { { 42, 1 }, { 43, 2 } };
	struct timespec before, after;
	struct stat st;
	int fd;

	T_CALL(attr_make_file("f", 0644, "x"));
	T_OK(utimensat(AT_FDCWD, "f", set, 0));
	T_OK(stat("f", &st));
	T_CALL(attr_expect_ts("atime", &st.st_atim, &set[0]));
	T_CALL(attr_expect_ts("mtime", &st.st_mtim, &set[1]));
	T_OK(utimensat(AT_FDCWD, "f", omit_atime, 0));
	T_OK(stat("f", &st));
	T_CALL(attr_expect_ts("atime after UTIME_OMIT", &st.st_atim, &set[0]));
	T_CALL(attr_expect_ts("mtime", &st.st_mtim, &omit_atime[1]));

	clock_gettime(CLOCK_REALTIME_COARSE, &before);
	before.tv_sec--;
	T_OK(utimensat(AT_FDCWD, "f", now_mtime, 0));
	T_OK(stat("f", &st));
	clock_gettime(CLOCK_REALTIME, &after);
	after.tv_sec++;
	T_CALL(attr_expect_ts("atime after UTIME_OMIT", &st.st_atim, &set[0]));
	if (attr_ts_cmp(&st.st_mtim, &before) < 0 || attr_ts_cmp(&st.st_mtim, &after) > 0)
		T_FAIL("mtime after UTIME_NOW: expected within [%lld, %lld], got %lld.%09ld",
		       (long long)before.tv_sec, (long long)after.tv_sec,
		       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	/* NULL means both now; via the descriptor too. */
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	T_OK(futimens(fd, set));
	T_OK(futimens(fd, NULL));
	T_OK(fstat(fd, &st));
	T_OK(close(fd));
	if (attr_ts_cmp(&st.st_atim, &before) < 0 || attr_ts_cmp(&st.st_atim, &after) > 0)
		T_FAIL("atime after futimens(NULL): expected within [%lld, %lld], got %lld.%09ld",
		       (long long)before.tv_sec, (long long)after.tv_sec,
		       (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec);
	/* A symlink's own times. */
	T_OK(utimensat(AT_FDCWD, "f", set, 0));
	T_OK(symlink("f", "l"));
	T_OK(utimensat(AT_FDCWD, "l", link_times, AT_SYMLINK_NOFOLLOW));
	T_OK(lstat("l", &st));
	T_CALL(attr_expect_ts("symlink mtime", &st.st_mtim, &link_times[1]));
	T_OK(stat("f", &st));
	T_CALL(attr_expect_ts("target mtime", &st.st_mtim, &set[1]));
	T_ERRNO(EINVAL, utimensat(AT_FDCWD, "f",
				  (const struct timespec[2]){ { 0, 1000000000 }, { 0, 0 } }, 0));
	return T_EXIT_PASS;
}

/* Timestamps are 64-bit with nanoseconds: far future and before 1970 round-trip. */
static int attr_times_64bit(void)
{
	static const struct timespec times[][2] = {
		{ { 16725225600LL, 999999999 }, { 16725225601LL, 1 } }, /* year 2500 */
		{ { -1, 500000000 }, { -1, 0 } },
		{ { -2208988800LL, 0 }, { -2208988800LL, 123 } },	  /* year 1900 */
		{ { -62135596800LL, 5 }, { 253402300799LL, 999999999 } }, /* years 1 and 9999 */
		{ { 0x7fffffffLL + 1, 0 }, { -0x80000000LL - 1, 7 } },	  /* just past 32 bits */
	};
	struct stat st;
	size_t i;

	T_CALL(attr_make_file("f", 0644, NULL));
	T_OK(mkdir("d", 0755));
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		T_OK(utimensat(AT_FDCWD, "f", times[i], 0));
		T_OK(stat("f", &st));
		T_CALL(attr_expect_ts("file atime", &st.st_atim, &times[i][0]));
		T_CALL(attr_expect_ts("file mtime", &st.st_mtim, &times[i][1]));
		T_OK(utimensat(AT_FDCWD, "d", times[i], 0));
		T_OK(stat("d", &st));
		T_CALL(attr_expect_ts("dir atime", &st.st_atim, &times[i][0]));
		T_CALL(attr_expect_ts("dir mtime", &st.st_mtim, &times[i][1]));
	}
	/* Still there after a rename. */
	T_OK(rename("f", "g"));
	T_OK(stat("g", &st));
	T_CALL(attr_expect_ts("mtime after rename", &st.st_mtim, &times[i - 1][1]));
	return T_EXIT_PASS;
}

/* Which operations on an inode move its ctime and mtime. */
static int attr_ctime_inode(void)
{
	struct attr_times t;
	int fd, flags;
	char c;

	T_CALL(attr_make_file("f", 0644, "data"));
	T_OK(mkdir("d", 0755));

	T_CALL(attr_times_start(&t, "f"));
	T_OK(chmod("f", 0600));
	T_CALL(attr_times_expect(&t, "chmod", 1, 0));
	if (harness_is_root()) {
		T_CALL(attr_times_start(&t, "f"));
		T_OK(chown("f", ATTR_UID_A, -1));
		T_CALL(attr_times_expect(&t, "chown", 1, 0));
	}
	T_CALL(attr_times_start(&t, "f"));
	T_OK(utimensat(AT_FDCWD, "f", (const struct timespec[2]){ { 1, 0 }, { 0, UTIME_OMIT } },
		       0));
	T_CALL(attr_times_expect(&t, "utimensat(atime)", 1, 0));
	T_CALL(attr_times_start(&t, "f"));
	T_OK(setxattr("f", "user.k", "v", 1, 0));
	T_CALL(attr_times_expect(&t, "setxattr", 1, 0));
	T_CALL(attr_times_start(&t, "f"));
	T_OK(removexattr("f", "user.k"));
	T_CALL(attr_times_expect(&t, "removexattr", 1, 0));
	/* No reply carries an ioctl's attributes: the kernel must be told. */
	T_CALL(attr_times_start(&t, "f"));
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	flags = FS_NODUMP_FL;
	T_OK(ioctl(fd, FS_IOC_SETFLAGS, &flags));
	T_OK(close(fd));
	T_CALL(attr_times_expect(&t, "chattr", 1, 0));
	T_CALL(attr_times_start(&t, "f"));
	T_OK(link("f", "d/hard"));
	T_CALL(attr_times_expect(&t, "link", 1, 0));
	T_CALL(attr_times_start(&t, "f"));
	T_OK(unlink("d/hard"));
	T_CALL(attr_times_expect(&t, "unlink of another name", 1, 0));
	T_CALL(attr_times_start(&t, "f"));
	T_OK(rename("f", "g"));
	t.path = "g";
	T_CALL(attr_times_expect(&t, "rename", 1, 0));

	T_CALL(attr_times_start(&t, "g"));
	T_OK(fd = open("g", O_RDWR | O_CLOEXEC));
	T_EQ(read(fd, &c, 1), 1);
	T_CALL(attr_times_expect(&t, "read", 0, 0));
	T_EQ(pwrite(fd, "D", 1, 0), 1);
	T_CALL(attr_times_expect(&t, "write", 1, 1));
	T_CALL(attr_times_start(&t, "g"));
	T_OK(ftruncate(fd, 2));
	T_CALL(attr_times_expect(&t, "ftruncate", 1, 1));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* A directory's ctime and mtime move with its entries, not with their contents. */
static int attr_ctime_dir(void)
{
	struct attr_times t;
	int fd;

	T_OK(mkdir("d", 0755));
	T_CALL(attr_make_file("g", 0644, NULL));
	T_CALL(attr_times_start(&t, "d"));
	T_CALL(attr_make_file("d/new", 0644, NULL));
	T_CALL(attr_times_expect(&t, "create in dir", 1, 1));
	T_CALL(attr_times_start(&t, "d"));
	T_OK(rename("d/new", "d/renamed"));
	T_CALL(attr_times_expect(&t, "rename in dir", 1, 1));
	T_CALL(attr_times_start(&t, "d"));
	T_OK(rename("g", "d/g"));
	T_CALL(attr_times_expect(&t, "rename into dir", 1, 1));
	T_CALL(attr_times_start(&t, "d"));
	T_OK(unlink("d/renamed"));
	T_CALL(attr_times_expect(&t, "unlink in dir", 1, 1));
	T_CALL(attr_times_start(&t, "d"));
	T_OK(mkdir("d/sub", 0755));
	T_CALL(attr_times_expect(&t, "mkdir in dir", 1, 1));
	T_CALL(attr_times_start(&t, "d"));
	T_OK(fd = open("d/g", O_WRONLY | O_CLOEXEC));
	T_EQ(write(fd, "x", 1), 1);
	T_OK(close(fd));
	T_CALL(attr_times_expect(&t, "write to a file in dir", 0, 0));
	T_CALL(attr_times_start(&t, "."));
	T_OK(rename("d/g", "back"));
	T_CALL(attr_times_expect(&t, "rename out of subdir", 1, 1));
	return T_EXIT_PASS;
}

/* A write or truncate by an unprivileged user clears S_ISUID, and S_ISGID with g+x. */
static int attr_suid_cleared_on_write(void)
{
	static const struct {
		const char *name;
		mode_t before, after;
	} files[] = {
		{ "both", 06777, 0777 },
		{ "sgid_noexec", 06766, 02766 },
		{ "suid", 04777, 0777 },
		{ "sgid", 02777, 0777 },
	};
	size_t i;
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		T_CALL(attr_make_file(files[i].name, 0644, "x"));
		T_OK(chown(files[i].name, ATTR_UID_A, ATTR_GID_A));
		T_OK(chmod(files[i].name, files[i].before));
	}
	T_CALL(attr_make_file("trunc", 0644, "x"));
	T_OK(chown("trunc", ATTR_UID_A, ATTR_GID_A));
	T_OK(chmod("trunc", 06777));
	T_CALL(attr_make_file("by_root", 0644, "x"));
	T_OK(chmod("by_root", 06777));
	T_CALL(attr_make_file("other_owner", 0644, "x"));
	T_OK(chmod("other_owner", 06777));

	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			T_OK(fd = open(files[i].name, O_WRONLY | O_CLOEXEC));
			T_EQ(write(fd, "y", 1), 1);
			T_OK(close(fd));
			T_CALL(attr_expect_mode(files[i].name, S_IFREG | files[i].after));
		}
		T_OK(truncate("trunc", 0));
		T_CALL(attr_expect_mode("trunc", S_IFREG | 0777));
		T_OK(fd = open("other_owner", O_WRONLY | O_APPEND | O_CLOEXEC));
		T_EQ(write(fd, "y", 1), 1);
		T_OK(close(fd));
		T_CALL(attr_expect_mode("other_owner", S_IFREG | 0777));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	/* With CAP_FSETID nothing is cleared. */
	T_OK(fd = open("by_root", O_WRONLY | O_CLOEXEC));
	T_EQ(write(fd, "y", 1), 1);
	T_OK(ftruncate(fd, 0));
	T_OK(close(fd));
	T_CALL(attr_expect_mode("by_root", S_IFREG | 06777));
	return T_EXIT_PASS;
}

/*
 * A writer outside the file's group also clears S_ISGID without g+x (the
 * VFS's in_group_or_capable); one in a supplementary group keeps it.  An
 * O_DIRECT write's clearing shows at once: no reply carries the mode.
 */
static int attr_sgid_cleared_outside_group(void)
{
	static const gid_t shared[] = { ATTR_GID_SHARED };
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("outside", 0644, "x"));
	T_CALL(attr_make_file("supplementary", 0644, "x"));
	T_CALL(attr_make_file("direct", 0644, "x"));
	T_OK(chown("outside", ATTR_UID_A, ATTR_GID_SHARED));
	T_OK(chown("supplementary", ATTR_UID_A, ATTR_GID_SHARED));
	T_OK(chown("direct", ATTR_UID_A, ATTR_GID_SHARED));
	T_OK(chmod("outside", 02666));
	T_OK(chmod("supplementary", 02666));
	T_OK(chmod("direct", 04666));
	pid = harness_fork_as(ATTR_UID_B, ATTR_GID_B, 0, NULL);
	if (pid == 0) {
		T_OK(fd = open("outside", O_WRONLY | O_CLOEXEC));
		T_EQ(write(fd, "y", 1), 1);
		T_OK(close(fd));
		T_CALL(attr_expect_mode("outside", S_IFREG | 0666));
		T_OK(fd = open("direct", O_WRONLY | O_DIRECT | O_CLOEXEC));
		T_EQ(pwrite(fd, attr_direct_page, 4096, 0), 4096);
		T_OK(close(fd));
		T_CALL(attr_expect_mode("direct", S_IFREG | 0666));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork_as(ATTR_UID_B, ATTR_GID_B, 1, shared);
	if (pid == 0) {
		T_OK(fd = open("supplementary", O_WRONLY | O_CLOEXEC));
		T_EQ(write(fd, "y", 1), 1);
		T_OK(close(fd));
		T_CALL(attr_expect_mode("supplementary", S_IFREG | 02666));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

/* chown clears S_ISUID, and S_ISGID with g+x, even for root; not on directories. */
static int attr_suid_cleared_on_chown(void)
{
	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("f", 06755, NULL));
	T_OK(chmod("f", 06755));
	T_OK(chown("f", ATTR_UID_A, ATTR_GID_A));
	T_CALL(attr_expect_mode("f", S_IFREG | 0755));
	T_CALL(attr_make_file("g", 0644, NULL));
	T_OK(chmod("g", 06744));
	T_OK(chown("g", ATTR_UID_A, -1));
	T_CALL(attr_expect_mode("g", S_IFREG | 02744));
	T_CALL(attr_make_file("h", 0644, NULL));
	T_OK(chmod("h", 06755));
	T_OK(chown("h", -1, ATTR_GID_A));
	T_CALL(attr_expect_mode("h", S_IFREG | 0755));
	/* Even a chown that changes nothing. */
	T_CALL(attr_make_file("noop", 0644, NULL));
	T_OK(chmod("noop", 06755));
	T_OK(chown("noop", -1, -1));
	T_CALL(attr_expect_mode("noop", S_IFREG | 0755));
	T_CALL(attr_make_file("same", 0644, NULL));
	T_OK(chmod("same", 06755));
	T_OK(chown("same", 0, 0));
	T_CALL(attr_expect_mode("same", S_IFREG | 0755));
	T_OK(mkdir("d", 0755));
	T_OK(chmod("d", 07755));
	T_OK(chown("d", ATTR_UID_A, ATTR_GID_A));
	T_CALL(attr_expect_mode("d", S_IFDIR | 07755));
	return T_EXIT_PASS;
}

/* statx's STATX_BTIME: set at creation, then kept while the other times move. */
static int attr_btime(void)
{
	struct timespec before, after;
	struct statx stx, later;

	T_OK(clock_gettime(CLOCK_REALTIME, &before));
	T_CALL(attr_make_file("born", 0644, "x"));
	T_OK(clock_gettime(CLOCK_REALTIME, &after));
	T_OK(statx(AT_FDCWD, "born", 0, STATX_BASIC_STATS | STATX_BTIME, &stx));
	T_TRUE(stx.stx_mask & STATX_BTIME);
	T_TRUE(stx.stx_btime.tv_sec >= before.tv_sec - 1 && stx.stx_btime.tv_sec <= after.tv_sec);
	T_TRUE(stx.stx_btime.tv_sec < stx.stx_mtime.tv_sec ||
	       (stx.stx_btime.tv_sec == stx.stx_mtime.tv_sec &&
		stx.stx_btime.tv_nsec <= stx.stx_mtime.tv_nsec));
	T_OK(utimensat(AT_FDCWD, "born", (const struct timespec[2]){ { 1, 0 }, { 2, 0 } }, 0));
	T_OK(statx(AT_FDCWD, "born", 0, STATX_BASIC_STATS | STATX_BTIME, &later));
	T_EQ(later.stx_mtime.tv_sec, 2);
	T_TRUE(later.stx_mask & STATX_BTIME);
	T_EQ(later.stx_btime.tv_sec, stx.stx_btime.tv_sec);
	T_EQ(later.stx_btime.tv_nsec, stx.stx_btime.tv_nsec);
	return T_EXIT_PASS;
}

/* Drop CAP_FSETID from this process's effective set, keeping uid 0. */
static int attr_drop_fsetid(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	T_OK(syscall(SYS_capget, &hdr, data));
	data[CAP_FSETID / 32].effective &= ~(1u << (CAP_FSETID % 32));
	T_OK(syscall(SYS_capset, &hdr, data));
	return T_EXIT_PASS;
}

/*
 * The rest of what clears S_ISUID (and S_ISGID with g+x) on tmpfs:
 * open(O_TRUNC) and fallocate by the unprivileged, and a write by root
 * without CAP_FSETID.  A write also drops a file capability, once the
 * inode has been written before (the kernel's "nothing to clear" mark).
 */
static int attr_suid_cleared_elsewhere(void)
{
	static const unsigned char caps[20] = { 0x01, 0x00, 0x00, 0x02, 0x00, 0x04 };
	char got[32];
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("otrunc", 0644, "x"));
	T_CALL(attr_make_file("falloc", 0644, "x"));
	T_OK(chown("otrunc", ATTR_UID_A, ATTR_GID_A));
	T_OK(chown("falloc", ATTR_UID_A, ATTR_GID_A));
	T_OK(chmod("otrunc", 06777));
	T_OK(chmod("falloc", 06777));
	T_CALL(attr_make_file("nocap", 0644, "x"));
	T_OK(chmod("nocap", 06777));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_OK(fd = open("otrunc", O_WRONLY | O_TRUNC | O_CLOEXEC));
		T_OK(close(fd));
		T_CALL(attr_expect_mode("otrunc", S_IFREG | 0777));
		T_OK(fd = open("falloc", O_WRONLY | O_CLOEXEC));
		T_OK(fallocate(fd, 0, 0, 8192));
		T_OK(close(fd));
		T_CALL(attr_expect_mode("falloc", S_IFREG | 0777));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork();
	if (pid == 0) {
		T_CALL(attr_drop_fsetid());
		T_OK(fd = open("nocap", O_WRONLY | O_APPEND | O_CLOEXEC));
		T_EQ(write(fd, "y", 1), 1);
		T_OK(close(fd));
		T_CALL(attr_expect_mode("nocap", S_IFREG | 0777));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	/* security.capability: root's writes drop it too. */
	T_CALL(attr_make_file("fcap", 0755, "x"));
	T_OK(fd = open("fcap", O_WRONLY | O_APPEND | O_CLOEXEC));
	T_EQ(write(fd, "y", 1), 1);
	T_OK(setxattr("fcap", "security.capability", caps, sizeof(caps), 0));
	T_EQ(getxattr("fcap", "security.capability", got, sizeof(got)), sizeof(caps));
	T_EQ(write(fd, "z", 1), 1);
	T_OK(close(fd));
	T_ERRNO(ENODATA, getxattr("fcap", "security.capability", got, sizeof(got)));
	return T_EXIT_PASS;
}

static int attr_exec(uid_t uid, const char *path, int expected_errno)
{
	char *const argv[] = { (char *)path, NULL };
	char *const envp[] = { NULL };

	errno = 0;
	execve(path, argv, envp);
	if (!expected_errno)
		T_FAIL("execve(%s) as uid %u: expected success, got %s", path, (unsigned)uid,
		       harness_errname(errno));
	if (errno != expected_errno)
		T_FAIL("execve(%s) as uid %u: expected %s, got %s", path, (unsigned)uid,
		       harness_errname(expected_errno), harness_errname(errno));
	return T_EXIT_PASS;
}

/* Runs a program as @uid; it must fail with @expected_errno, or run if that is 0. */
static int attr_exec_as(uid_t uid, const char *path, int expected_errno)
{
	pid_t pid;

	pid = harness_fork_as(uid, uid, 0, NULL);
	if (pid == 0)
		harness_exit(attr_exec(uid, path, expected_errno));
	T_WAIT(pid);
	return T_EXIT_PASS;
}

/* File permission bits, checked as an unprivileged user. */
static int attr_perm_files(void)
{
	struct stat st;
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("secret", 0600, "s"));
	T_CALL(attr_make_file("group_none", 0604, "g"));
	T_OK(chown("group_none", 0, ATTR_GID_A));
	T_CALL(attr_make_file("owner_ro", 0460, "o"));
	T_OK(chown("owner_ro", ATTR_UID_A, ATTR_GID_A));
	T_CALL(attr_make_file("shared", 0644, NULL));
	T_OK(chmod("shared", 0666));
	T_CALL(attr_make_file("readable", 0644, NULL));

	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EACCES, open("secret", O_RDONLY));
		T_ERRNO(EACCES, open("secret", O_WRONLY));
		T_ERRNO(EACCES, access("secret", R_OK));
		T_OK(stat("secret", &st));
		/* The group class decides for a group member, though "other" may read. */
		T_ERRNO(EACCES, open("group_none", O_RDONLY));
		/* The owner class decides for the owner, though its group may write. */
		T_ERRNO(EACCES, open("owner_ro", O_WRONLY));
		T_OK(fd = open("owner_ro", O_RDONLY | O_CLOEXEC));
		T_OK(close(fd));
		T_OK(fd = open("shared", O_RDWR | O_CLOEXEC));
		T_OK(close(fd));
		/* Times: "now" needs write access, explicit values ownership. */
		T_OK(utimensat(AT_FDCWD, "shared", NULL, 0));
		T_ERRNO(EPERM, utimensat(AT_FDCWD, "shared",
					 (const struct timespec[2]){ { 1, 0 }, { 1, 0 } }, 0));
		T_ERRNO(EACCES, utimensat(AT_FDCWD, "readable", NULL, 0));
		/* user.* xattrs need write access to the file. */
		T_ERRNO(EACCES, setxattr("readable", "user.x", "v", 1, 0));
		T_OK(setxattr("shared", "user.x", "v", 1, 0));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

/* Directory permission bits: read lists, search resolves, write changes entries. */
static int attr_perm_dirs(void)
{
	struct stat st;
	char c;
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_OK(mkdir("private", 0700));
	T_CALL(attr_make_file("private/x", 0644, NULL));
	T_OK(mkdir("search_only", 0711));
	T_CALL(attr_make_file("search_only/x", 0644, "x"));
	T_OK(mkdir("read_only", 0744));
	T_CALL(attr_make_file("read_only/x", 0644, NULL));
	T_OK(mkdir("no_write", 0755));
	T_CALL(attr_make_file("no_write/x", 0644, NULL));
	T_OK(chmod("no_write/x", 0666));
	T_OK(mkdir("open", 0755));
	T_OK(chmod("open", 0777));

	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EACCES, stat("private/x", &st));
		T_ERRNO(EACCES, open("private", O_RDONLY | O_DIRECTORY));
		T_ERRNO(EACCES, open("private/new", O_WRONLY | O_CREAT, 0644));
		T_OK(stat("search_only/x", &st));
		T_OK(fd = open("search_only/x", O_RDONLY | O_CLOEXEC));
		T_EQ(read(fd, &c, 1), 1);
		T_OK(close(fd));
		T_ERRNO(EACCES, open("search_only", O_RDONLY | O_DIRECTORY));
		T_OK(fd = open("read_only", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		T_OK(close(fd));
		T_ERRNO(EACCES, stat("read_only/x", &st));
		T_ERRNO(EACCES, open("no_write/new", O_WRONLY | O_CREAT, 0644));
		T_ERRNO(EACCES, mkdir("no_write/sub", 0755));
		T_ERRNO(EACCES, mknod("no_write/p", S_IFIFO | 0644, 0));
		T_ERRNO(EACCES, symlink("x", "no_write/l"));
		T_ERRNO(EACCES, link("no_write/x", "no_write/y"));
		T_ERRNO(EACCES, unlink("no_write/x"));
		T_ERRNO(EACCES, rename("no_write/x", "open/moved"));
		T_ERRNO(EACCES, rename("open", "no_write/open"));
		/* The file itself stays writable. */
		T_OK(fd = open("no_write/x", O_WRONLY | O_CLOEXEC));
		T_OK(close(fd));
		T_OK(link("no_write/x", "open/y"));
		T_OK(unlink("open/y"));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

/* Execute needs an x bit for the caller's class; root needs one in any class. */
static int attr_perm_exec(void)
{
	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("script", 0644, "#!/bin/sh\nexit 0\n"));
	T_CALL(attr_exec_as(ATTR_UID_A, "./script", EACCES));
	T_CALL(attr_exec_as(0, "./script", EACCES));
	T_OK(chmod("script", 0744));
	T_CALL(attr_exec_as(ATTR_UID_A, "./script", EACCES));
	T_CALL(attr_exec_as(0, "./script", 0));
	T_OK(chmod("script", 0705));
	T_CALL(attr_exec_as(ATTR_UID_A, "./script", 0));
	T_OK(mkdir("private", 0700));
	T_CALL(attr_make_file("private/x", 0755, "#!/bin/sh\nexit 0\n"));
	T_CALL(attr_exec_as(ATTR_UID_A, "./private/x", EACCES));
	/* Directories are never executed. */
	T_OK(mkdir("d", 0755));
	T_CALL(attr_exec_as(0, "./d", EACCES));
	return T_EXIT_PASS;
}

/* In a sticky directory only the entry's owner, the directory's owner or root remove. */
static int attr_sticky_dir(void)
{
	pid_t pid;

	T_CALL(attr_skip_unless_root());
	T_OK(mkdir("t", 0777));
	T_OK(chmod("t", 01777));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_CALL(attr_make_file("t/a", 0644, NULL));
		T_OK(chmod("t/a", 0666));
		T_CALL(attr_make_file("t/a2", 0644, NULL));
		T_CALL(attr_make_file("t/a3", 0644, NULL));
		T_OK(mkdir("t/adir", 0755));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork_as(ATTR_UID_B, ATTR_GID_B, 0, NULL);
	if (pid == 0) {
		T_CALL(attr_make_file("t/b", 0666, NULL));
		T_ERRNO(EPERM, unlink("t/a"));
		T_ERRNO(EPERM, rename("t/a", "t/mine"));
		T_ERRNO(EPERM, rename("t/b", "t/a"));
		T_ERRNO(EPERM, rmdir("t/adir"));
		T_ERRNO(EPERM, renameat2(AT_FDCWD, "t/a", AT_FDCWD, "t/b", RENAME_EXCHANGE));
		/* Writing into another's file is a matter of its own mode. */
		T_OK(truncate("t/a", 0));
		/* Own entries are fine. */
		T_OK(rename("t/b", "t/b2"));
		T_OK(unlink("t/b2"));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_OK(unlink("t/a"));
		T_OK(rmdir("t/adir"));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	/* The directory's owner may remove anything in it. */
	T_OK(chown("t", ATTR_UID_C, ATTR_GID_A));
	pid = harness_fork_as(ATTR_UID_C, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_OK(unlink("t/a2"));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(unlink("t/a3"));
	return T_EXIT_PASS;
}

/* An access ACL grants a named user, limited by the mask, which mirrors the group bits. */
static int attr_acl_access(void)
{
	const struct attr_acl_entry acl[] = {
		{ ATTR_ACL_USER_OBJ, 6, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_USER, 4, ATTR_UID_A },
		{ ATTR_ACL_GROUP_OBJ, 0, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_MASK, 4, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 0, ATTR_ACL_UNDEFINED_ID },
	};
	struct attr_acl_entry masked[5];
	struct attr_acl_xattr x;
	char buf[64];
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("f", 0600, "secret"));
	T_CALL(attr_set_acl("f", ATTR_XATTR_ACCESS, acl, 5));
	T_CALL(attr_expect_mode("f", S_IFREG | 0640));
	T_CALL(attr_expect_acl("f", ATTR_XATTR_ACCESS, acl, 5));
	T_EQ(getxattr("f", ATTR_XATTR_ACCESS, NULL, 0), 4 + 5 * 8);
	T_ERRNO(ERANGE, getxattr("f", ATTR_XATTR_ACCESS, buf, 8));

	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
		T_EQ(read(fd, buf, sizeof(buf)), 6);
		T_OK(close(fd));
		T_ERRNO(EACCES, open("f", O_WRONLY));
		/* Reading an ACL needs no permission. */
		T_EQ(getxattr("f", ATTR_XATTR_ACCESS, NULL, 0), 4 + 5 * 8);
		/* Changing it needs ownership. */
		T_ERRNO(EPERM,
			setxattr("f", ATTR_XATTR_ACCESS, &x, attr_acl_encode(&x, acl, 5), 0));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork_as(ATTR_UID_B, ATTR_GID_B, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EACCES, open("f", O_RDONLY));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);

	/* chmod rewrites the mask, not the named entries. */
	T_OK(chmod("f", 0600));
	memcpy(masked, acl, sizeof(acl));
	masked[3].perm = 0;
	T_CALL(attr_expect_acl("f", ATTR_XATTR_ACCESS, masked, 5));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EACCES, open("f", O_RDONLY));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(chmod("f", 0670));
	masked[3].perm = 7;
	T_CALL(attr_expect_acl("f", ATTR_XATTR_ACCESS, masked, 5));

	/* Removing the ACL leaves the mode bits alone. */
	T_OK(removexattr("f", ATTR_XATTR_ACCESS));
	T_ERRNO(ENODATA, getxattr("f", ATTR_XATTR_ACCESS, NULL, 0));
	T_CALL(attr_expect_mode("f", S_IFREG | 0670));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EACCES, open("f", O_RDONLY));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	/* Removing an absent ACL is not an error, unlike other xattrs. */
	T_OK(removexattr("f", ATTR_XATTR_ACCESS));
	T_OK(removexattr("f", ATTR_XATTR_DEFAULT));
	return T_EXIT_PASS;
}

/* A default ACL is inherited: as access ACL masked by the create mode, and by subdirs. */
static int attr_acl_default(void)
{
	const struct attr_acl_entry dflt[] = {
		{ ATTR_ACL_USER_OBJ, 7, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_USER, 7, ATTR_UID_A },
		{ ATTR_ACL_GROUP_OBJ, 5, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_MASK, 7, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 0, ATTR_ACL_UNDEFINED_ID },
	};
	/* Created with 0666: each class is capped by the mode, the mask standing for the group. */
	const struct attr_acl_entry file_acl[] = {
		{ ATTR_ACL_USER_OBJ, 6, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_USER, 7, ATTR_UID_A },
		{ ATTR_ACL_GROUP_OBJ, 5, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_MASK, 6, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 0, ATTR_ACL_UNDEFINED_ID },
	};
	/* Created with 0640. */
	const struct attr_acl_entry narrow_acl[] = {
		{ ATTR_ACL_USER_OBJ, 6, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_USER, 7, ATTR_UID_A },
		{ ATTR_ACL_GROUP_OBJ, 5, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_MASK, 4, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 0, ATTR_ACL_UNDEFINED_ID },
	};
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_OK(mkdir("d", 0755));
	T_CALL(attr_set_acl("d", ATTR_XATTR_DEFAULT, dflt, 5));
	T_CALL(attr_expect_acl("d", ATTR_XATTR_DEFAULT, dflt, 5));
	/* A default ACL alone changes neither mode nor access ACL. */
	T_CALL(attr_expect_mode("d", S_IFDIR | 0755));
	T_ERRNO(ENODATA, getxattr("d", ATTR_XATTR_ACCESS, NULL, 0));

	/* The umask (022) is not applied under a default ACL. */
	T_CALL(attr_make_file("d/f", 0666, NULL));
	T_CALL(attr_expect_mode("d/f", S_IFREG | 0660));
	T_CALL(attr_expect_acl("d/f", ATTR_XATTR_ACCESS, file_acl, 5));
	T_ERRNO(ENODATA, getxattr("d/f", ATTR_XATTR_DEFAULT, NULL, 0));
	T_CALL(attr_make_file("d/narrow", 0640, NULL));
	T_CALL(attr_expect_mode("d/narrow", S_IFREG | 0640));
	T_CALL(attr_expect_acl("d/narrow", ATTR_XATTR_ACCESS, narrow_acl, 5));

	T_OK(mkdir("d/sub", 0777));
	T_CALL(attr_expect_mode("d/sub", S_IFDIR | 0770));
	T_CALL(attr_expect_acl("d/sub", ATTR_XATTR_ACCESS, dflt, 5));
	T_CALL(attr_expect_acl("d/sub", ATTR_XATTR_DEFAULT, dflt, 5));
	T_CALL(attr_make_file("d/sub/deep", 0666, NULL));
	T_CALL(attr_expect_acl("d/sub/deep", ATTR_XATTR_ACCESS, file_acl, 5));
	T_OK(mkfifo("d/fifo", 0666));
	T_CALL(attr_expect_mode("d/fifo", S_IFIFO | 0660));

	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_OK(fd = open("d/f", O_RDWR | O_CLOEXEC));
		T_OK(close(fd));
		T_ERRNO(EACCES, open("d/narrow", O_WRONLY));
		T_CALL(attr_make_file("d/sub/by_user", 0600, NULL));
		T_CALL(attr_expect_owner("d/sub/by_user", ATTR_UID_A, ATTR_GID_A));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	/* Removing the default ACL restores the umask. */
	T_OK(removexattr("d", ATTR_XATTR_DEFAULT));
	T_CALL(attr_make_file("d/plain", 0666, NULL));
	T_CALL(attr_expect_mode("d/plain", S_IFREG | 0644));
	T_ERRNO(ENODATA, getxattr("d/plain", ATTR_XATTR_ACCESS, NULL, 0));
	return T_EXIT_PASS;
}

/* Checks that listxattr() returns exactly the given names, in any order. */
static int attr_expect_xattr_names(const char *path, const char *const *names, size_t nr_names)
{
	char list[1024];
	ssize_t len, off;
	size_t i, nr_seen = 0, total = 0;

	for (i = 0; i < nr_names; i++)
		total += strlen(names[i]) + 1;
	T_OK(len = llistxattr(path, NULL, 0));
	if ((size_t)len != total)
		T_FAIL("llistxattr(%s) size: expected %zu, got %zd", path, total, len);
	T_OK(len = llistxattr(path, list, sizeof(list)));
	for (off = 0; off < len; off += strlen(list + off) + 1) {
		for (i = 0; i < nr_names; i++)
			if (strcmp(list + off, names[i]) == 0)
				break;
		if (i == nr_names)
			T_FAIL("llistxattr(%s): expected only listed names, got \"%s\"", path,
			       list + off);
		nr_seen++;
	}
	if (nr_seen != nr_names)
		T_FAIL("llistxattr(%s): expected %zu names, got %zu", path, nr_names, nr_seen);
	return T_EXIT_PASS;
}

/* A named group entry grants its members. */
/*
 * An owner outside the file's group who sets an access ACL loses SGID, as
 * with a chmod (posix_acl_update_mode); one in the group keeps it.
 */
static int attr_acl_sgid(void)
{
	static const gid_t member[] = { ATTR_GID_SHARED };
	const struct attr_acl_entry acl[] = {
		{ ATTR_ACL_USER_OBJ, 7, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_USER, 4, ATTR_UID_B },
		{ ATTR_ACL_GROUP_OBJ, 5, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_MASK, 5, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 5, ATTR_ACL_UNDEFINED_ID },
	};
	pid_t pid;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("outside", 0644, NULL));
	T_CALL(attr_make_file("inside", 0644, NULL));
	T_OK(chown("outside", ATTR_UID_A, ATTR_GID_SHARED));
	T_OK(chown("inside", ATTR_UID_A, ATTR_GID_SHARED));
	T_OK(chmod("outside", 02755));
	T_OK(chmod("inside", 02755));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_CALL(attr_set_acl("outside", ATTR_XATTR_ACCESS, acl, 5));
		T_CALL(attr_expect_mode("outside", S_IFREG | 0755));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 1, member);
	if (pid == 0) {
		T_CALL(attr_set_acl("inside", ATTR_XATTR_ACCESS, acl, 5));
		T_CALL(attr_expect_mode("inside", S_IFREG | 02755));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

static int attr_acl_named_group(void)
{
	static const gid_t member[] = { ATTR_GID_SHARED };
	const struct attr_acl_entry acl[] = {
		{ ATTR_ACL_USER_OBJ, 6, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_GROUP_OBJ, 0, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_GROUP, 6, ATTR_GID_SHARED },
		{ ATTR_ACL_MASK, 6, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 0, ATTR_ACL_UNDEFINED_ID },
	};
	pid_t pid;
	int fd;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("f", 0600, NULL));
	T_CALL(attr_set_acl("f", ATTR_XATTR_ACCESS, acl, 5));
	T_CALL(attr_expect_mode("f", S_IFREG | 0660));
	T_CALL(attr_expect_acl("f", ATTR_XATTR_ACCESS, acl, 5));
	pid = harness_fork_as(ATTR_UID_B, ATTR_GID_B, 1, member);
	if (pid == 0) {
		T_OK(fd = open("f", O_RDWR | O_CLOEXEC));
		T_OK(close(fd));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	pid = harness_fork_as(ATTR_UID_B, ATTR_GID_B, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EACCES, open("f", O_RDONLY));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

/* An ACL that says no more than the mode is folded into the mode, not stored. */
static int attr_acl_equivalent_mode(void)
{
	const struct attr_acl_entry minimal[] = {
		{ ATTR_ACL_USER_OBJ, 7, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_GROUP_OBJ, 5, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 0, ATTR_ACL_UNDEFINED_ID },
	};

	T_CALL(attr_make_file("g", 0644, NULL));
	T_CALL(attr_set_acl("g", ATTR_XATTR_ACCESS, minimal, 3));
	T_CALL(attr_expect_mode("g", S_IFREG | 0750));
	T_ERRNO(ENODATA, getxattr("g", ATTR_XATTR_ACCESS, NULL, 0));
	T_CALL(attr_expect_xattr_names("g", NULL, 0));
	return T_EXIT_PASS;
}

static int attr_acl_invalid(void)
{
	const struct attr_acl_entry acl[] = {
		{ ATTR_ACL_USER_OBJ, 6, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_USER, 4, ATTR_UID_A },
		{ ATTR_ACL_GROUP_OBJ, 0, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_MASK, 4, ATTR_ACL_UNDEFINED_ID },
		{ ATTR_ACL_OTHER, 0, ATTR_ACL_UNDEFINED_ID },
	};
	const struct attr_acl_entry no_mask[] = { acl[0], acl[1], acl[2], acl[4] };
	const struct attr_acl_entry unsorted[] = { acl[1], acl[0], acl[2], acl[3], acl[4] };
	struct attr_acl_xattr x;
	size_t size;

	T_CALL(attr_make_file("g", 0640, NULL));
	size = attr_acl_encode(&x, acl, 5);
	T_ERRNO(EINVAL, setxattr("g", ATTR_XATTR_ACCESS, &x, size - 8, 0)); /* no OTHER */
	T_ERRNO(EINVAL, setxattr("g", ATTR_XATTR_ACCESS, &x, size - 1, 0)); /* torn entry */
	size = attr_acl_encode(&x, no_mask, 4);
	T_ERRNO(EINVAL, setxattr("g", ATTR_XATTR_ACCESS, &x, size, 0));
	size = attr_acl_encode(&x, unsorted, 5);
	T_ERRNO(EINVAL, setxattr("g", ATTR_XATTR_ACCESS, &x, size, 0));
	size = attr_acl_encode(&x, acl, 5);
	x.version = htole32(1);
	T_ERRNO(EOPNOTSUPP, setxattr("g", ATTR_XATTR_ACCESS, &x, size, 0));
	T_CALL(attr_expect_mode("g", S_IFREG | 0640));
	T_ERRNO(ENODATA, getxattr("g", ATTR_XATTR_ACCESS, NULL, 0));
	/* An empty value is no ACL at all: it removes one, like removexattr. */
	size = attr_acl_encode(&x, acl, 5);
	T_OK(setxattr("g", ATTR_XATTR_ACCESS, &x, size, 0));
	T_OK(setxattr("g", ATTR_XATTR_ACCESS, &x, 0, 0));
	T_ERRNO(ENODATA, getxattr("g", ATTR_XATTR_ACCESS, NULL, 0));
	T_CALL(attr_expect_mode("g", S_IFREG | 0640));
	/* Default ACLs exist only on directories. */
	size = attr_acl_encode(&x, acl, 5);
	T_ERRNO(EACCES, setxattr("g", ATTR_XATTR_DEFAULT, &x, size, 0));
	T_ERRNO(ENODATA, getxattr("g", ATTR_XATTR_DEFAULT, NULL, 0));
	/* Symlinks have no ACLs. */
	T_OK(symlink("g", "l"));
	T_ERRNO(EOPNOTSUPP, lsetxattr("l", ATTR_XATTR_ACCESS, &x, size, 0));
	return T_EXIT_PASS;
}

static int attr_xattr_user(void)
{
	static char big[XATTR_SIZE_MAX + 1], back[XATTR_SIZE_MAX];
	char value[16], name[XATTR_NAME_MAX + 2];
	int fd;

	T_CALL(attr_make_file("f", 0644, NULL));
	T_CALL(attr_expect_xattr_names("f", NULL, 0));
	T_ERRNO(ENODATA, getxattr("f", "user.a", value, sizeof(value)));
	T_OK(setxattr("f", "user.a", "v1", 2, 0));
	T_EQ(getxattr("f", "user.a", NULL, 0), 2);
	T_EQ(getxattr("f", "user.a", value, sizeof(value)), 2);
	T_MEM(value, "v1", 2);
	T_ERRNO(EEXIST, setxattr("f", "user.a", "v2", 2, XATTR_CREATE));
	T_ERRNO(ENODATA, setxattr("f", "user.b", "v2", 2, XATTR_REPLACE));
	T_ERRNO(ENODATA, getxattr("f", "user.b", NULL, 0));
	T_OK(setxattr("f", "user.a", "v22", 3, XATTR_REPLACE));
	T_EQ(getxattr("f", "user.a", value, sizeof(value)), 3);
	T_MEM(value, "v22", 3);
	T_ERRNO(ERANGE, getxattr("f", "user.a", value, 2));
	T_ERRNO(EINVAL, setxattr("f", "user.a", "v", 1, XATTR_CREATE | XATTR_REPLACE | 4));
	/* Empty values exist. */
	T_OK(setxattr("f", "user.empty", "", 0, XATTR_CREATE));
	T_EQ(getxattr("f", "user.empty", value, sizeof(value)), 0);
	T_CALL(attr_expect_xattr_names("f", (const char *const[]){ "user.a", "user.empty" }, 2));
	T_ERRNO(ERANGE, listxattr("f", value, 8));
	/* Values are binary, up to XATTR_SIZE_MAX bytes. */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + (i >> 8));
	T_OK(setxattr("f", "user.big", big, XATTR_SIZE_MAX, 0));
	T_EQ(getxattr("f", "user.big", back, sizeof(back)), XATTR_SIZE_MAX);
	T_MEM(back, big, XATTR_SIZE_MAX);
	T_ERRNO(E2BIG, setxattr("f", "user.big2", big, XATTR_SIZE_MAX + 1, 0));
	T_OK(removexattr("f", "user.big"));
	/* Names up to XATTR_NAME_MAX bytes, prefix included. */
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[XATTR_NAME_MAX] = '\0';
	T_OK(setxattr("f", name, "x", 1, 0));
	T_EQ(getxattr("f", name, value, sizeof(value)), 1);
	T_OK(removexattr("f", name));
	name[XATTR_NAME_MAX] = 'n';
	name[XATTR_NAME_MAX + 1] = '\0';
	T_ERRNO(ERANGE, setxattr("f", name, "x", 1, 0));
	T_ERRNO(ERANGE, getxattr("f", name, value, sizeof(value)));
	T_ERRNO(ERANGE, setxattr("f", "", "x", 1, 0));
	T_ERRNO(EOPNOTSUPP, setxattr("f", "bogus.x", "x", 1, 0));
	T_ERRNO(EOPNOTSUPP, getxattr("f", "bogus.x", value, sizeof(value)));
	/* Through a descriptor, across rename and hard links. */
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	T_OK(fsetxattr(fd, "user.fd", "F", 1, 0));
	T_EQ(fgetxattr(fd, "user.a", value, sizeof(value)), 3);
	T_EQ(flistxattr(fd, NULL, 0),
	     strlen("user.a") + strlen("user.empty") + strlen("user.fd") + 3);
	T_OK(fremovexattr(fd, "user.fd"));
	T_OK(close(fd));
	T_OK(rename("f", "g"));
	T_OK(link("g", "h"));
	T_EQ(getxattr("h", "user.a", value, sizeof(value)), 3);
	T_MEM(value, "v22", 3);
	T_OK(removexattr("g", "user.a"));
	T_ERRNO(ENODATA, removexattr("h", "user.a"));
	T_ERRNO(ENODATA, getxattr("g", "user.a", value, sizeof(value)));
	T_CALL(attr_expect_xattr_names("h", (const char *const[]){ "user.empty" }, 1));
	/* Directories carry them too. */
	T_OK(mkdir("d", 0755));
	T_OK(setxattr("d", "user.d", "dir", 3, XATTR_CREATE));
	T_EQ(getxattr("d", "user.d", value, sizeof(value)), 3);
	return T_EXIT_PASS;
}

/* trusted.* is for CAP_SYS_ADMIN only and hidden from others; security.* is writable by it only. */
static int attr_xattr_trusted_security(void)
{
	char value[16];
	pid_t pid;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("f", 0666, NULL));
	T_OK(setxattr("f", "trusted.t", "T", 1, XATTR_CREATE));
	T_OK(setxattr("f", "security.s", "S", 1, XATTR_CREATE));
	T_OK(setxattr("f", "user.u", "U", 1, XATTR_CREATE));
	T_ERRNO(EEXIST, setxattr("f", "trusted.t", "T", 1, XATTR_CREATE));
	T_ERRNO(ENODATA, setxattr("f", "trusted.missing", "T", 1, XATTR_REPLACE));
	T_ERRNO(ENODATA, setxattr("f", "security.missing", "T", 1, XATTR_REPLACE));
	T_EQ(getxattr("f", "trusted.t", value, sizeof(value)), 1);
	T_EQ(getxattr("f", "security.s", value, sizeof(value)), 1);
	T_MEM(value, "S", 1);
	T_CALL(attr_expect_xattr_names(
		"f", (const char *const[]){ "trusted.t", "security.s", "user.u" }, 3));
	T_OK(chown("f", ATTR_UID_A, ATTR_GID_A));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EPERM, setxattr("f", "trusted.u", "x", 1, 0));
		T_ERRNO(EPERM, removexattr("f", "trusted.t"));
		T_ERRNO(ENODATA, getxattr("f", "trusted.t", value, sizeof(value)));
		T_ERRNO(EPERM, setxattr("f", "security.u", "x", 1, 0));
		T_EQ(getxattr("f", "security.s", value, sizeof(value)), 1);
		T_CALL(attr_expect_xattr_names("f", (const char *const[]){ "security.s", "user.u" },
					       2));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(removexattr("f", "trusted.t"));
	T_OK(removexattr("f", "security.s"));
	T_ERRNO(ENODATA, removexattr("f", "security.s"));
	T_CALL(attr_expect_xattr_names("f", (const char *const[]){ "user.u" }, 1));
	return T_EXIT_PASS;
}

/* user.* is for regular files and directories only; others refuse it. */
static int attr_xattr_user_special(void)
{
	char value[16];
	pid_t pid;

	T_CALL(attr_make_file("f", 0644, NULL));
	T_OK(symlink("f", "l"));
	T_OK(mkfifo("p", 0666));
	T_ERRNO(EPERM, lsetxattr("l", "user.x", "v", 1, 0));
	T_ERRNO(ENODATA, lgetxattr("l", "user.x", value, sizeof(value)));
	T_ERRNO(EPERM, setxattr("p", "user.x", "v", 1, 0));
	T_ERRNO(ENODATA, getxattr("p", "user.x", value, sizeof(value)));
	/* Through a symlink, the target gets it. */
	T_OK(setxattr("l", "user.x", "v", 1, 0));
	T_EQ(getxattr("f", "user.x", value, sizeof(value)), 1);
	T_CALL(attr_expect_xattr_names("l", NULL, 0));
	if (!harness_is_root())
		return T_EXIT_PASS;
	T_OK(mknod("c", S_IFCHR | 0666, makedev(1, 3)));
	T_ERRNO(EPERM, setxattr("c", "user.x", "v", 1, 0));
	/* Other namespaces are fine on every type. */
	T_OK(lsetxattr("l", "trusted.x", "t", 1, 0));
	T_EQ(lgetxattr("l", "trusted.x", value, sizeof(value)), 1);
	T_CALL(attr_expect_xattr_names("l", (const char *const[]){ "trusted.x" }, 1));
	T_OK(setxattr("p", "trusted.x", "t", 1, 0));
	T_OK(setxattr("c", "trusted.x", "t", 1, 0));
	/* On a sticky directory only the owner may set user.*. */
	T_OK(mkdir("t", 0777));
	T_OK(chmod("t", 01777));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_ERRNO(EPERM, setxattr("t", "user.x", "v", 1, 0));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

static int attr_get_flags(int fd, int *flags)
{
	T_OK(ioctl(fd, FS_IOC_GETFLAGS, flags));
	return T_EXIT_PASS;
}

static int attr_set_flags(const char *path, int flags)
{
	int fd;

	T_OK(fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
	T_OK(ioctl(fd, FS_IOC_SETFLAGS, &flags));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* tmpfs keeps exactly the i, a, d and A flags; every other one is EOPNOTSUPP. */
static int attr_chattr_flags(void)
{
	static const int supported[] = {
		FS_IMMUTABLE_FL,
		FS_APPEND_FL,
		FS_NODUMP_FL,
		FS_NOATIME_FL,
	};
	static const unsigned int xflags[] = {
		FS_XFLAG_IMMUTABLE,
		FS_XFLAG_APPEND,
		FS_XFLAG_NODUMP,
		FS_XFLAG_NOATIME,
	};
	static const int unsupported[] = {
		FS_SECRM_FL,  FS_UNRM_FL,	  FS_COMPR_FL,	  FS_SYNC_FL,	FS_DIRSYNC_FL,
		FS_NOCOW_FL,  FS_PROJINHERIT_FL,  FS_TOPDIR_FL,	  FS_EXTENT_FL, FS_DAX_FL,
		FS_NOTAIL_FL, FS_JOURNAL_DATA_FL, FS_CASEFOLD_FL,
	};
	struct fsxattr fsx;
	int fd, flags;
	size_t i;

	T_CALL(attr_make_file("f", 0644, NULL));
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, 0);
	memset(&fsx, 0xff, sizeof(fsx));
	T_OK(ioctl(fd, FS_IOC_FSGETXATTR, &fsx));
	T_EQ_HEX(fsx.fsx_xflags, 0);
	T_EQ(fsx.fsx_projid, 0);
	T_EQ(fsx.fsx_extsize, 0);
	for (i = 0; i < sizeof(supported) / sizeof(supported[0]); i++) {
		if (!harness_is_root() && supported[i] == FS_IMMUTABLE_FL)
			continue;
		if (!harness_is_root() && supported[i] == FS_APPEND_FL)
			continue;
		flags = supported[i];
		T_OK(ioctl(fd, FS_IOC_SETFLAGS, &flags));
		T_CALL(attr_get_flags(fd, &flags));
		T_EQ_HEX(flags, supported[i]);
		T_OK(ioctl(fd, FS_IOC_FSGETXATTR, &fsx));
		T_EQ_HEX(fsx.fsx_xflags, xflags[i]);
		flags = 0;
		T_OK(ioctl(fd, FS_IOC_SETFLAGS, &flags));
	}
	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		int ret, err;

		flags = unsupported[i] | FS_NODUMP_FL;
		errno = 0;
		ret = ioctl(fd, FS_IOC_SETFLAGS, &flags);
		err = errno;
		if (ret == 0 || err != EOPNOTSUPP)
			T_FAIL("FS_IOC_SETFLAGS(0x%x | FS_NODUMP_FL): expected EOPNOTSUPP, got %s",
			       unsupported[i], ret == 0 ? "success" : harness_errname(err));
		T_CALL(attr_get_flags(fd, &flags));
		T_EQ_HEX(flags, 0);
	}
	/* Several at once, and the xfs-style interface. */
	flags = FS_NODUMP_FL | FS_NOATIME_FL;
	T_OK(ioctl(fd, FS_IOC_SETFLAGS, &flags));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, FS_NODUMP_FL | FS_NOATIME_FL);
	memset(&fsx, 0, sizeof(fsx));
	fsx.fsx_xflags = FS_XFLAG_NODUMP;
	T_OK(ioctl(fd, FS_IOC_FSSETXATTR, &fsx));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, FS_NODUMP_FL);
	fsx.fsx_xflags = FS_XFLAG_SYNC;
	T_ERRNO(EOPNOTSUPP, ioctl(fd, FS_IOC_FSSETXATTR, &fsx));
	fsx.fsx_xflags = 0;
	fsx.fsx_projid = 5;
	T_ERRNO(EOPNOTSUPP, ioctl(fd, FS_IOC_FSSETXATTR, &fsx));
	fsx.fsx_projid = 0;
	fsx.fsx_extsize = 4096;
	T_ERRNO(EOPNOTSUPP, ioctl(fd, FS_IOC_FSSETXATTR, &fsx));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, FS_NODUMP_FL);
	T_OK(close(fd));
	/* Not for files other than regular and directories. */
	T_OK(mkfifo("p", 0644));
	T_OK(fd = open("p", O_RDWR | O_CLOEXEC));
	T_ERRNO(ENOTTY, ioctl(fd, FS_IOC_GETFLAGS, &flags));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* Directories take the same flags; new entries inherit d and A, not a. */
static int attr_chattr_dir_inherit(void)
{
	int fd, dfd, flags;

	T_OK(mkdir("d", 0755));
	T_OK(dfd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	flags = FS_NODUMP_FL | FS_NOATIME_FL;
	T_OK(ioctl(dfd, FS_IOC_SETFLAGS, &flags));
	T_CALL(attr_make_file("d/child", 0644, NULL));
	T_OK(fd = open("d/child", O_RDONLY | O_CLOEXEC));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, FS_NODUMP_FL | FS_NOATIME_FL);
	T_OK(close(fd));
	T_OK(mkdir("d/sub", 0755));
	T_OK(fd = open("d/sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, FS_NODUMP_FL | FS_NOATIME_FL);
	T_OK(close(fd));
	flags = FS_NOATIME_FL;
	T_OK(ioctl(dfd, FS_IOC_SETFLAGS, &flags));
	T_CALL(attr_make_file("d/child2", 0644, NULL));
	T_OK(fd = open("d/child2", O_RDONLY | O_CLOEXEC));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, FS_NOATIME_FL);
	T_OK(close(fd));
	flags = FS_DIRSYNC_FL;
	T_ERRNO(EOPNOTSUPP, ioctl(dfd, FS_IOC_SETFLAGS, &flags));
	flags = 0;
	T_OK(ioctl(dfd, FS_IOC_SETFLAGS, &flags));
	T_OK(close(dfd));
	return T_EXIT_PASS;
}

/* Owners may set d and A; i and a need CAP_LINUX_IMMUTABLE; others nothing. */
static int attr_chattr_permissions(void)
{
	int fd, flags;
	pid_t pid;

	T_CALL(attr_skip_unless_root());
	T_CALL(attr_make_file("f", 0644, NULL));
	T_CALL(attr_make_file("mine", 0666, NULL));
	T_OK(chown("mine", ATTR_UID_A, ATTR_GID_A));
	pid = harness_fork_as(ATTR_UID_A, ATTR_GID_A, 0, NULL);
	if (pid == 0) {
		T_OK(fd = open("mine", O_RDONLY | O_CLOEXEC));
		flags = FS_NODUMP_FL | FS_NOATIME_FL;
		T_OK(ioctl(fd, FS_IOC_SETFLAGS, &flags));
		flags = FS_IMMUTABLE_FL;
		T_ERRNO(EPERM, ioctl(fd, FS_IOC_SETFLAGS, &flags));
		flags = FS_APPEND_FL;
		T_ERRNO(EPERM, ioctl(fd, FS_IOC_SETFLAGS, &flags));
		T_CALL(attr_get_flags(fd, &flags));
		T_EQ_HEX(flags, FS_NODUMP_FL | FS_NOATIME_FL);
		T_OK(close(fd));
		T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
		T_CALL(attr_get_flags(fd, &flags));
		flags = 0;
		T_ERRNO(EPERM, ioctl(fd, FS_IOC_SETFLAGS, &flags));
		T_OK(close(fd));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	return T_EXIT_PASS;
}

static int attr_immutable(void)
{
	struct stat st;
	char buf[8];
	int fd;

	if (!harness_is_root())
		T_SKIP("setting FS_IMMUTABLE_FL needs CAP_LINUX_IMMUTABLE");
	T_CALL(attr_make_file("f", 0644, "data"));
	T_OK(setxattr("f", "user.x", "v", 1, 0));
	T_OK(fd = open("f", O_RDWR | O_CLOEXEC));
	T_CALL(attr_set_flags("f", FS_IMMUTABLE_FL));
	T_OK(fstat(fd, &st));

	T_ERRNO(EPERM, open("f", O_WRONLY));
	T_ERRNO(EPERM, open("f", O_RDWR));
	T_ERRNO(EPERM, open("f", O_WRONLY | O_APPEND));
	T_ERRNO(EPERM, open("f", O_RDONLY | O_TRUNC));
	T_ERRNO(EPERM, truncate("f", 0));
	T_ERRNO(EPERM, unlink("f"));
	T_ERRNO(EPERM, rename("f", "g"));
	T_CALL(attr_make_file("other", 0644, NULL));
	T_ERRNO(EPERM, rename("other", "f"));
	T_ERRNO(EPERM, link("f", "g"));
	T_ERRNO(EPERM, chmod("f", 0600));
	T_ERRNO(EPERM, chown("f", 1, 1));
	T_ERRNO(EPERM, utimensat(AT_FDCWD, "f", NULL, 0));
	T_ERRNO(EPERM, setxattr("f", "user.y", "v", 1, 0));
	T_ERRNO(EPERM, setxattr("f", "trusted.y", "v", 1, 0));
	T_ERRNO(EPERM, removexattr("f", "user.x"));
	T_ERRNO(EPERM, fallocate(fd, 0, 0, 8192));
	/* Reading still works, and so does changing the flags back. */
	T_OK(stat("f", &st));
	T_EQ(st.st_size, 4);
	T_EQ(pread(fd, buf, sizeof(buf), 0), 4);
	T_MEM(buf, "data", 4);
	T_EQ(getxattr("f", "user.x", buf, sizeof(buf)), 1);
	T_OK(close(fd));

	/* An immutable directory's entries are fixed; the files in it are not. */
	T_OK(mkdir("d", 0755));
	T_CALL(attr_make_file("d/in", 0644, NULL));
	T_CALL(attr_set_flags("d", FS_IMMUTABLE_FL));
	T_ERRNO(EPERM, open("d/new", O_WRONLY | O_CREAT, 0644));
	T_ERRNO(EPERM, mkdir("d/sub", 0755));
	T_ERRNO(EPERM, unlink("d/in"));
	T_ERRNO(EPERM, rename("d/in", "d/in2"));
	T_ERRNO(EPERM, symlink("x", "d/l"));
	/* As the VFS checks: EPERM before the filesystem looks for entries. */
	T_CALL(attr_set_flags("d", 0));
	T_OK(mkdir("d/full", 0755));
	T_CALL(attr_make_file("d/full/x", 0644, NULL));
	T_CALL(attr_set_flags("d", FS_IMMUTABLE_FL));
	T_ERRNO(EPERM, rmdir("d/full"));
	T_OK(mkdir("e", 0755));
	T_ERRNO(EPERM, rename("e", "d/full"));
	T_OK(fd = open("d/in", O_WRONLY | O_CLOEXEC));
	T_EQ(write(fd, "w", 1), 1);
	T_OK(close(fd));

	T_CALL(attr_set_flags("f", 0));
	T_CALL(attr_set_flags("d", 0));
	T_OK(truncate("f", 0));
	T_OK(unlink("f"));
	T_OK(unlink("d/in"));
	T_OK(unlink("d/full/x"));
	T_OK(rmdir("d/full"));
	T_OK(rmdir("e"));
	return T_EXIT_PASS;
}

static int attr_append_only(void)
{
	char buf[16];
	int fd, flags;

	if (!harness_is_root())
		T_SKIP("setting FS_APPEND_FL needs CAP_LINUX_IMMUTABLE");
	T_CALL(attr_make_file("f", 0644, "abc"));
	T_CALL(attr_set_flags("f", FS_APPEND_FL));
	T_ERRNO(EPERM, open("f", O_WRONLY));
	T_ERRNO(EPERM, open("f", O_RDWR));
	T_ERRNO(EPERM, open("f", O_WRONLY | O_APPEND | O_TRUNC));
	T_OK(fd = open("f", O_WRONLY | O_APPEND | O_CLOEXEC));
	T_EQ(write(fd, "def", 3), 3);
	T_ERRNO(EPERM, ftruncate(fd, 0));
	T_ERRNO(EPERM, fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 0, 1));
	T_OK(close(fd));
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	T_EQ(read(fd, buf, sizeof(buf)), 6);
	T_MEM(buf, "abcdef", 6);
	T_OK(close(fd));

	/*
	 * No write below the end: tmpfs refuses to clear O_APPEND; where the
	 * kernel lets a FUSE file clear it, the writes are refused, and so is
	 * copy_file_range into it.
	 */
	T_OK(fd = open("f", O_RDWR | O_APPEND | O_CLOEXEC));
	if (fcntl(fd, F_SETFL, 0) == 0) {
		T_ERRNO(EPERM, pwrite(fd, "X", 1, 0));
		T_ERRNO(EPERM, write(fd, "X", 1));
		T_ERRNO(EPERM, pwrite(fd, "X", 1, 6));
	} else {
		T_EQ(errno, EPERM);
	}
	T_CALL(attr_make_file("src", 0644, "XY"));
	{
		int src = open("src", O_RDONLY | O_CLOEXEC);
		loff_t off_in = 0, off_out = 0;

		T_OK(src);
		T_EQ(copy_file_range(src, &off_in, fd, &off_out, 2, 0), -1);
		T_TRUE(errno == EPERM || errno == EBADF);
		T_OK(close(src));
	}
	T_OK(close(fd));
	T_OK(unlink("src"));
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	T_EQ(read(fd, buf, sizeof(buf)), 6);
	T_MEM(buf, "abcdef", 6);
	T_OK(close(fd));
	T_ERRNO(EPERM, truncate("f", 0));
	T_ERRNO(EPERM, unlink("f"));
	T_ERRNO(EPERM, rename("f", "g"));
	T_ERRNO(EPERM, link("f", "g"));
	T_ERRNO(EPERM, chmod("f", 0600));
	T_ERRNO(EPERM,
		utimensat(AT_FDCWD, "f", (const struct timespec[2]){ { 1, 0 }, { 1, 0 } }, 0));
	T_ERRNO(EPERM, setxattr("f", "user.y", "v", 1, 0));
	/* "touch" is allowed: it cannot move times backwards. */
	T_OK(utimensat(AT_FDCWD, "f", NULL, 0));

	/* An append-only directory takes new entries but loses none. */
	T_OK(mkdir("d", 0755));
	T_CALL(attr_make_file("d/in", 0644, NULL));
	T_CALL(attr_set_flags("d", FS_APPEND_FL));
	T_CALL(attr_make_file("d/new", 0644, NULL));
	/* Unlike d and A, the a flag is not inherited. */
	T_OK(fd = open("d/new", O_RDWR | O_CLOEXEC));
	T_CALL(attr_get_flags(fd, &flags));
	T_EQ_HEX(flags, 0);
	T_OK(close(fd));
	T_ERRNO(EPERM, unlink("d/in"));
	T_ERRNO(EPERM, rename("d/in", "d/in2"));
	T_CALL(attr_set_flags("d", 0));
	T_CALL(attr_set_flags("f", 0));
	T_OK(unlink("f"));
	return T_EXIT_PASS;
}

static const struct harness_check attr_checks[] = {
	HARNESS_CHECK(attr_owner_from_caller),
	HARNESS_CHECK(attr_setgid_dir_inherit),
	HARNESS_CHECK(attr_sgid_strip),
	HARNESS_CHECK(attr_chmod),
	HARNESS_CHECK(attr_chown),
	HARNESS_CHECK(attr_utimens),
	HARNESS_CHECK(attr_times_64bit),
	HARNESS_CHECK(attr_ctime_inode),
	HARNESS_CHECK(attr_ctime_dir),
	HARNESS_CHECK(attr_suid_cleared_on_write),
	HARNESS_CHECK(attr_sgid_cleared_outside_group),
	HARNESS_CHECK(attr_suid_cleared_on_chown),
	HARNESS_CHECK(attr_suid_cleared_elsewhere),
	HARNESS_CHECK(attr_btime),
	HARNESS_CHECK(attr_perm_files),
	HARNESS_CHECK(attr_perm_dirs),
	HARNESS_CHECK(attr_perm_exec),
	HARNESS_CHECK(attr_sticky_dir),
	HARNESS_CHECK(attr_acl_access),
	HARNESS_CHECK(attr_acl_named_group),
	HARNESS_CHECK(attr_acl_sgid),
	HARNESS_CHECK(attr_acl_equivalent_mode),
	HARNESS_CHECK(attr_acl_invalid),
	HARNESS_CHECK(attr_acl_default),
	HARNESS_CHECK(attr_xattr_user),
	HARNESS_CHECK(attr_xattr_trusted_security),
	HARNESS_CHECK(attr_xattr_user_special),
	HARNESS_CHECK(attr_chattr_flags),
	HARNESS_CHECK(attr_chattr_dir_inherit),
	HARNESS_CHECK(attr_chattr_permissions),
	HARNESS_CHECK(attr_immutable),
	HARNESS_CHECK(attr_append_only),
};

int main(int argc, char **argv)
{
	return harness_main(argc, argv, attr_checks, sizeof(attr_checks) / sizeof(attr_checks[0]));
}
