// SPDX-License-Identifier: MIT
/*
 * Namespace conformance of a mounted filesystem against tmpfs: file types,
 * links, unlink/rmdir, every rename flavour, name limits and readdir.
 * Usage: mnt_namespace DIR, where DIR is the empty root of the mount.
 */
#include <dirent.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "harness.h"

#define NS_NR_MANY 2000	  /* entries in the readdir-while-modifying checks */
#define NS_HANDLE_MAX 128 /* MAX_HANDLE_SZ */

static int ns_make_file(const char *path, const char *data)
{
	size_t len = data ? strlen(data) : 0;
	int fd;

	T_OK(fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	if (len)
		T_EQ(write(fd, data, len), len);
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* Reads a small file and checks it holds exactly @expected. */
static int ns_expect_content(const char *path, const char *expected)
{
	char content[256];
	ssize_t n;
	int fd;

	T_OK(fd = open(path, O_RDONLY | O_CLOEXEC));
	T_OK(n = read(fd, content, sizeof(content) - 1));
	content[n] = '\0';
	T_OK(close(fd));
	if (strcmp(content, expected) != 0)
		T_FAIL("content of %s: expected \"%s\", got \"%s\"", path, expected, content);
	return T_EXIT_PASS;
}

static int ns_expect_nlink(const char *path, nlink_t expected)
{
	struct stat st;

	T_OK(lstat(path, &st));
	if (st.st_nlink != expected)
		T_FAIL("st_nlink of %s: expected %lu, got %lu", path, (unsigned long)expected,
		       (unsigned long)st.st_nlink);
	return T_EXIT_PASS;
}

static int ns_expect_ino(const char *path, ino_t expected)
{
	struct stat st;

	T_OK(lstat(path, &st));
	if (st.st_ino != expected)
		T_FAIL("st_ino of %s: expected %lu, got %lu", path, (unsigned long)expected,
		       (unsigned long)st.st_ino);
	return T_EXIT_PASS;
}

static ino_t ns_ino(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return 0;
	return st.st_ino;
}

static int ns_regular_file(void)
{
	struct stat st, st2;
	int fd;

	T_OK(fd = open("f", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	T_OK(fstat(fd, &st));
	T_EQ_OCT(st.st_mode, S_IFREG | 0644);
	T_EQ(st.st_size, 0);
	T_EQ(st.st_nlink, 1);
	T_EQ(st.st_blocks, 0);
	T_OK(stat("f", &st2));
	T_EQ(st2.st_ino, st.st_ino);
	T_OK(stat(".", &st2));
	T_EQ(st.st_dev, st2.st_dev);
	T_ERRNO(EEXIST, open("f", O_RDWR | O_CREAT | O_EXCL, 0644));
	T_OK(close(fd));
	/* Without O_EXCL an existing file is opened, its mode untouched. */
	T_OK(fd = open("f", O_RDWR | O_CREAT | O_CLOEXEC, 0600));
	T_OK(fstat(fd, &st));
	T_EQ_OCT(st.st_mode, S_IFREG | 0644);
	T_OK(close(fd));
	T_ERRNO(ENOENT, open("missing", O_RDONLY));
	T_ERRNO(ENOENT, open("missing/f", O_RDWR | O_CREAT, 0644));
	/* mknod(S_IFREG) makes a regular file too. */
	T_OK(mknod("m", S_IFREG | 0640, 0));
	T_OK(stat("m", &st));
	T_EQ_OCT(st.st_mode, S_IFREG | 0640);
	return T_EXIT_PASS;
}

static int ns_directory(void)
{
	struct stat st, dot, dotdot;

	T_CALL(ns_expect_nlink(".", 2));
	T_OK(mkdir("d", 0755));
	T_OK(stat("d", &st));
	T_EQ_OCT(st.st_mode, S_IFDIR | 0755);
	T_EQ(st.st_nlink, 2);
	T_CALL(ns_expect_nlink(".", 3));
	T_ERRNO(EEXIST, mkdir("d", 0755));
	T_CALL(ns_make_file("f", NULL));
	T_ERRNO(EEXIST, mkdir("f", 0755));
	T_OK(stat("d/.", &dot));
	T_OK(stat("d/..", &dotdot));
	T_EQ(dot.st_ino, st.st_ino);
	T_EQ(dotdot.st_ino, ns_ino("."));
	/* mkdir applies the umask (022 here) but keeps the sticky bit. */
	T_OK(mkdir("e", 01777));
	T_OK(stat("e", &st));
	T_EQ_OCT(st.st_mode, S_IFDIR | 01755);
	return T_EXIT_PASS;
}

/* A directory's link count is 2 plus its subdirectories; other types add nothing. */
static int ns_dir_nlink(void)
{
	T_OK(mkdir("p", 0755));
	T_OK(mkdir("p/a", 0755));
	T_OK(mkdir("p/b", 0755));
	T_OK(mkdir("p/c", 0755));
	T_CALL(ns_make_file("p/f", NULL));
	T_OK(symlink("a", "p/l"));
	T_OK(mkfifo("p/q", 0644));
	T_CALL(ns_expect_nlink("p", 5));
	T_OK(mkdir("p/a/x", 0755));
	T_CALL(ns_expect_nlink("p/a", 3));
	T_CALL(ns_expect_nlink("p", 5));
	T_OK(rmdir("p/b"));
	T_CALL(ns_expect_nlink("p", 4));
	T_OK(rmdir("p/a/x"));
	T_CALL(ns_expect_nlink("p/a", 2));
	T_CALL(ns_expect_nlink(".", 3));
	return T_EXIT_PASS;
}

/* tmpfs reports a directory's size as 20 bytes per entry, "." and ".." included. */
static int ns_dir_size(void)
{
	struct stat st;

	T_OK(mkdir("d", 0755));
	T_OK(stat("d", &st));
	T_EQ(st.st_size, 40);
	T_EQ(st.st_blocks, 0);
	T_CALL(ns_make_file("d/f", NULL));
	T_OK(mkdir("d/sub", 0755));
	T_OK(symlink("f", "d/l"));
	T_OK(stat("d", &st));
	T_EQ(st.st_size, 100);
	T_OK(unlink("d/f"));
	T_OK(stat("d", &st));
	T_EQ(st.st_size, 80);
	T_OK(rename("d/l", "d/l2"));
	T_OK(stat("d", &st));
	T_EQ(st.st_size, 80);
	return T_EXIT_PASS;
}

static int ns_symlink(void)
{
	char target[16];
	struct stat st;
	int fd;

	T_OK(symlink("t/x", "l"));
	T_OK(lstat("l", &st));
	T_EQ_OCT(st.st_mode, S_IFLNK | 0777);
	T_EQ(st.st_size, 3);
	T_EQ(st.st_nlink, 1);
	T_EQ(readlink("l", target, sizeof(target)), 3);
	T_MEM(target, "t/x", 3);
	/* A short buffer is filled without a terminating NUL. */
	memset(target, '#', sizeof(target));
	T_EQ(readlink("l", target, 2), 2);
	T_MEM(target, "t/#", 3);
	T_ERRNO(ENOENT, stat("l", &st));
	T_OK(mkdir("t", 0755));
	T_CALL(ns_make_file("t/x", "through"));
	T_OK(stat("l", &st));
	T_TRUE(S_ISREG(st.st_mode));
	T_CALL(ns_expect_content("l", "through"));
	T_ERRNO(ELOOP, open("l", O_RDONLY | O_NOFOLLOW));
	T_ERRNO(EINVAL, readlink("t", target, sizeof(target)));
	T_ERRNO(EEXIST, symlink("other", "l"));
	T_ERRNO(EEXIST, symlink("other", "t"));
	/* O_PATH|O_NOFOLLOW opens the link itself. */
	T_OK(fd = open("l", O_PATH | O_NOFOLLOW | O_CLOEXEC));
	T_OK(fstat(fd, &st));
	T_TRUE(S_ISLNK(st.st_mode));
	T_OK(close(fd));
	/* A loop of links. */
	T_OK(symlink("loop2", "loop1"));
	T_OK(symlink("loop1", "loop2"));
	T_ERRNO(ELOOP, stat("loop1", &st));
	return T_EXIT_PASS;
}

/* Targets may hold up to PATH_MAX - 1 bytes; the content is not checked. */
static int ns_symlink_max(void)
{
	static char target[PATH_MAX + 1], back[PATH_MAX + 16];
	struct stat st;
	int i;

	for (i = 0; i < PATH_MAX - 1; i++)
		target[i] = (i % 4 == 3) ? '/' : 'a' + i % 26;
	target[PATH_MAX - 1] = '\0';
	T_OK(symlink(target, "l4095"));
	T_OK(lstat("l4095", &st));
	T_EQ(st.st_size, PATH_MAX - 1);
	T_EQ(readlink("l4095", back, sizeof(back)), PATH_MAX - 1);
	T_MEM(back, target, PATH_MAX - 1);
	target[PATH_MAX - 1] = 'z';
	target[PATH_MAX] = '\0';
	T_ERRNO(ENAMETOOLONG, symlink(target, "l4096"));
	T_ERRNO(ENOENT, lstat("l4096", &st));
	/* One component longer than NAME_MAX is still a valid target. */
	memset(target, 'n', 300);
	target[300] = '\0';
	T_OK(symlink(target, "long_component"));
	T_EQ(readlink("long_component", back, sizeof(back)), 300);
	T_MEM(back, target, 300);
	T_ERRNO(ENAMETOOLONG, stat("long_component", &st));
	return T_EXIT_PASS;
}

static int ns_hardlink(void)
{
	struct stat a, b;
	int fd;

	T_CALL(ns_make_file("f", "one"));
	T_OK(link("f", "g"));
	T_OK(stat("f", &a));
	T_OK(stat("g", &b));
	T_EQ(a.st_ino, b.st_ino);
	T_EQ(a.st_nlink, 2);
	T_EQ(b.st_nlink, 2);
	T_OK(fd = open("g", O_WRONLY | O_TRUNC | O_CLOEXEC));
	T_EQ(write(fd, "two", 3), 3);
	T_OK(close(fd));
	T_CALL(ns_expect_content("f", "two"));
	T_OK(link("g", "h"));
	T_CALL(ns_expect_nlink("f", 3));
	T_OK(unlink("f"));
	T_CALL(ns_expect_nlink("g", 2));
	T_OK(unlink("h"));
	T_CALL(ns_expect_nlink("g", 1));
	T_CALL(ns_expect_content("g", "two"));
	T_CALL(ns_make_file("other", NULL));
	T_ERRNO(EEXIST, link("g", "other"));
	T_ERRNO(ENOENT, link("missing", "x"));
	T_OK(mkdir("d", 0755));
	T_ERRNO(EPERM, link("d", "d2"));
	T_ERRNO(ENOENT, lstat("d2", &a));
	/* link() does not follow a symlink: the link itself gets a second name. */
	T_OK(symlink("g", "sl"));
	T_OK(link("sl", "sl2"));
	T_OK(lstat("sl2", &a));
	T_TRUE(S_ISLNK(a.st_mode));
	T_EQ(a.st_nlink, 2);
	T_OK(linkat(AT_FDCWD, "sl", AT_FDCWD, "followed", AT_SYMLINK_FOLLOW));
	T_CALL(ns_expect_ino("followed", ns_ino("g")));
	T_CALL(ns_expect_nlink("g", 2));
	/* Links into a subdirectory do not change directory link counts. */
	T_OK(link("g", "d/g"));
	T_CALL(ns_expect_nlink("d", 2));
	T_CALL(ns_expect_nlink(".", 3));
	return T_EXIT_PASS;
}

static int ns_fifo(void)
{
	struct stat st;
	char c;
	int fd;

	T_OK(mkfifo("p", 0640));
	T_OK(lstat("p", &st));
	T_EQ_OCT(st.st_mode, S_IFIFO | 0640);
	T_EQ(st.st_size, 0);
	T_OK(mknod("q", S_IFIFO | 0600, 0));
	T_OK(lstat("q", &st));
	T_EQ_OCT(st.st_mode, S_IFIFO | 0600);
	T_ERRNO(EEXIST, mkfifo("p", 0600));
	/* The pipe lives in the kernel; the node only names it. */
	T_OK(fd = open("p", O_RDWR | O_NONBLOCK | O_CLOEXEC));
	T_EQ(write(fd, "x", 1), 1);
	T_EQ(read(fd, &c, 1), 1);
	T_EQ(c, 'x');
	T_ERRNO(EAGAIN, read(fd, &c, 1));
	T_OK(close(fd));
	T_ERRNO(ENXIO, open("p", O_WRONLY | O_NONBLOCK));
	T_OK(unlink("p"));
	return T_EXIT_PASS;
}

static int ns_unix_socket(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX, .sun_path = "s" };
	int server, client, conn;
	struct stat st;
	char c;

	T_OK(server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	T_OK(bind(server, (struct sockaddr *)&addr, sizeof(addr)));
	T_OK(lstat("s", &st));
	T_EQ_OCT(st.st_mode, S_IFSOCK | 0755);
	T_EQ(st.st_size, 0);
	T_OK(listen(server, 1));
	T_OK(client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	T_OK(connect(client, (struct sockaddr *)&addr, sizeof(addr)));
	T_OK(conn = accept(server, NULL, NULL));
	T_EQ(write(client, "k", 1), 1);
	T_EQ(read(conn, &c, 1), 1);
	T_EQ(c, 'k');
	T_OK(close(conn));
	T_OK(close(client));
	T_OK(client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	T_ERRNO(EADDRINUSE, bind(client, (struct sockaddr *)&addr, sizeof(addr)));
	T_OK(close(client));
	T_OK(close(server));
	/* The node outlives the socket and is removed like a file. */
	T_OK(lstat("s", &st));
	T_ERRNO(ENXIO, open("s", O_RDONLY));
	T_OK(unlink("s"));
	return T_EXIT_PASS;
}

static int ns_device_nodes(void)
{
	const dev_t big = makedev(4095, 1048575); /* largest a 32-bit dev_t encodes */
	struct stat st;
	int ret, err;

	errno = 0;
	ret = mknod("c", S_IFCHR | 0600, makedev(1, 3));
	err = errno;
	if (ret && err == EPERM && !harness_is_root())
		T_SKIP("mknod needs CAP_MKNOD");
	if (ret)
		T_FAIL("mknod(c, S_IFCHR, 1:3): expected success, got %s", harness_errname(err));
	T_OK(lstat("c", &st));
	T_EQ_OCT(st.st_mode, S_IFCHR | 0600);
	T_EQ(major(st.st_rdev), 1);
	T_EQ(minor(st.st_rdev), 3);
	T_EQ(st.st_size, 0);
	T_OK(mknod("b", S_IFBLK | 0640, makedev(7, 0)));
	T_OK(lstat("b", &st));
	T_EQ_OCT(st.st_mode, S_IFBLK | 0640);
	T_EQ(major(st.st_rdev), 7);
	T_EQ(minor(st.st_rdev), 0);
	T_OK(mknod("big", S_IFCHR | 0600, big));
	T_OK(lstat("big", &st));
	T_EQ(major(st.st_rdev), 4095);
	T_EQ(minor(st.st_rdev), 1048575);
	T_OK(mknod("zero", S_IFCHR | 0600, 0));
	T_OK(lstat("zero", &st));
	T_EQ(st.st_rdev, 0);
	T_ERRNO(EEXIST, mknod("c", S_IFCHR | 0600, makedev(1, 3)));
	T_ERRNO(EPERM, mknod("dir", S_IFDIR | 0755, 0));
	T_ERRNO(EINVAL, mknod("bad", 0170000 | 0644, 0));
	/* Renaming and linking a device keeps its number. */
	T_OK(rename("c", "c2"));
	T_OK(link("c2", "c3"));
	T_OK(lstat("c3", &st));
	T_EQ(st.st_rdev, makedev(1, 3));
	T_EQ(st.st_nlink, 2);
	return T_EXIT_PASS;
}

static int ns_unlink(void)
{
	struct stat st;

	T_CALL(ns_make_file("f", "x"));
	T_OK(unlink("f"));
	T_ERRNO(ENOENT, lstat("f", &st));
	T_ERRNO(ENOENT, unlink("f"));
	T_OK(mkdir("d", 0755));
	T_ERRNO(EISDIR, unlink("d"));
	T_CALL(ns_make_file("g", NULL));
	T_ERRNO(ENOTDIR, unlink("g/x"));
	T_ERRNO(ENOENT, unlink("missing/x"));
	/* Unlinking a symlink removes the link, not its target. */
	T_OK(symlink("g", "l"));
	T_OK(unlink("l"));
	T_OK(lstat("g", &st));
	T_OK(symlink("d", "ld"));
	T_OK(unlink("ld"));
	T_OK(stat("d", &st));
	T_CALL(ns_expect_nlink(".", 3));
	return T_EXIT_PASS;
}

static int ns_rmdir(void)
{
	struct stat st;

	T_OK(mkdir("d", 0755));
	T_CALL(ns_make_file("d/f", NULL));
	T_ERRNO(ENOTEMPTY, rmdir("d"));
	T_ERRNO(ENOTDIR, rmdir("d/f"));
	T_OK(unlink("d/f"));
	T_OK(mkdir("d/sub", 0755));
	T_ERRNO(ENOTEMPTY, rmdir("d"));
	T_ERRNO(EINVAL, rmdir("d/sub/."));
	T_ERRNO(ENOTEMPTY, rmdir("d/sub/.."));
	T_OK(rmdir("d/sub"));
	T_CALL(ns_expect_nlink("d", 2));
	T_OK(symlink("d", "l"));
	T_ERRNO(ENOTDIR, rmdir("l"));
	T_ERRNO(EINVAL, rmdir("."));
	T_OK(rmdir("d"));
	T_ERRNO(ENOENT, rmdir("d"));
	T_ERRNO(ENOENT, lstat("d", &st));
	T_CALL(ns_expect_nlink(".", 2));
	return T_EXIT_PASS;
}

/* A directory removed while open: link count 0, no new entries, empty listing. */
static int ns_dead_dir(void)
{
	char buf[1024];
	struct stat st;
	int fd;

	T_OK(mkdir("d", 0755));
	T_OK(fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	T_OK(rmdir("d"));
	T_OK(fstat(fd, &st));
	T_EQ(st.st_nlink, 0);
	T_ERRNO(ENOENT, openat(fd, "f", O_WRONLY | O_CREAT, 0644));
	T_ERRNO(ENOENT, mkdirat(fd, "sub", 0755));
	T_ERRNO(ENOENT, getdents64(fd, buf, sizeof(buf)));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int ns_rename_file(void)
{
	ino_t ino_a, ino_c;
	struct stat st;
	int fd;

	T_CALL(ns_make_file("a", "A"));
	ino_a = ns_ino("a");
	T_OK(rename("a", "b"));
	T_ERRNO(ENOENT, lstat("a", &st));
	T_CALL(ns_expect_ino("b", ino_a));
	T_CALL(ns_expect_content("b", "A"));
	/* Over an existing file: the old target lives on only while open. */
	T_CALL(ns_make_file("c", "C"));
	ino_c = ns_ino("c");
	T_OK(fd = open("c", O_RDONLY | O_CLOEXEC));
	T_OK(rename("b", "c"));
	T_ERRNO(ENOENT, lstat("b", &st));
	T_CALL(ns_expect_ino("c", ino_a));
	T_CALL(ns_expect_content("c", "A"));
	T_OK(fstat(fd, &st));
	T_EQ(st.st_ino, ino_c);
	T_EQ(st.st_nlink, 0);
	T_OK(close(fd));
	/* Onto itself, and between two names of one inode: nothing happens. */
	T_OK(rename("c", "c"));
	T_CALL(ns_expect_content("c", "A"));
	T_OK(link("c", "h"));
	T_OK(rename("c", "h"));
	T_CALL(ns_expect_nlink("c", 2));
	T_CALL(ns_expect_nlink("h", 2));
	T_ERRNO(ENOENT, rename("missing", "x"));
	T_ERRNO(ENOENT, rename("c", "missing/x"));
	T_CALL(ns_make_file("g", NULL));
	T_ERRNO(ENOTDIR, rename("c", "g/x"));
	/* Symlinks are renamed, not followed. */
	T_OK(symlink("c", "l"));
	T_OK(rename("l", "l2"));
	T_OK(lstat("l2", &st));
	T_TRUE(S_ISLNK(st.st_mode));
	T_CALL(ns_expect_content("c", "A"));
	return T_EXIT_PASS;
}

static int ns_rename_dir(void)
{
	ino_t ino_d1;

	T_OK(mkdir("d1", 0755));
	T_CALL(ns_make_file("d1/f", "in d1"));
	T_OK(mkdir("d2", 0755));
	ino_d1 = ns_ino("d1");
	T_CALL(ns_expect_nlink(".", 4));
	/* Over an empty directory. */
	T_OK(rename("d1", "d2"));
	T_CALL(ns_expect_ino("d2", ino_d1));
	T_CALL(ns_expect_content("d2/f", "in d1"));
	T_CALL(ns_expect_nlink(".", 3));
	/* Over a non-empty one: tmpfs says ENOTEMPTY (POSIX also allows EEXIST). */
	T_OK(mkdir("d3", 0755));
	T_CALL(ns_make_file("d3/x", NULL));
	T_ERRNO(ENOTEMPTY, rename("d2", "d3"));
	T_CALL(ns_expect_content("d2/f", "in d1"));
	/* Type mismatches. */
	T_CALL(ns_make_file("file", NULL));
	T_ERRNO(EISDIR, rename("file", "d2"));
	T_ERRNO(ENOTDIR, rename("d2", "file"));
	T_ERRNO(ENOTDIR, rename("file", "d2/f/"));
	/* Into its own subtree. */
	T_OK(mkdir("d2/sub", 0755));
	T_ERRNO(EINVAL, rename("d2", "d2/sub/x"));
	T_ERRNO(EINVAL, rename("d2", "d2/x"));
	T_CALL(ns_expect_nlink("d2", 3));
	T_CALL(ns_expect_nlink(".", 4));
	/* Trailing slashes are fine on directories. */
	T_OK(rename("d2/", "d4/"));
	T_CALL(ns_expect_ino("d4", ino_d1));
	return T_EXIT_PASS;
}

static int ns_rename_noreplace(void)
{
	struct stat st;

	T_CALL(ns_make_file("a", "A"));
	T_CALL(ns_make_file("b", "B"));
	T_ERRNO(EEXIST, renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_NOREPLACE));
	T_CALL(ns_expect_content("a", "A"));
	T_CALL(ns_expect_content("b", "B"));
	T_OK(mkdir("d", 0755));
	T_ERRNO(EEXIST, renameat2(AT_FDCWD, "a", AT_FDCWD, "d", RENAME_NOREPLACE));
	T_OK(mkdir("e", 0755));
	T_ERRNO(EEXIST, renameat2(AT_FDCWD, "e", AT_FDCWD, "d", RENAME_NOREPLACE));
	T_OK(renameat2(AT_FDCWD, "a", AT_FDCWD, "c", RENAME_NOREPLACE));
	T_ERRNO(ENOENT, lstat("a", &st));
	T_CALL(ns_expect_content("c", "A"));
	T_OK(renameat2(AT_FDCWD, "e", AT_FDCWD, "d/e", RENAME_NOREPLACE));
	T_CALL(ns_expect_nlink("d", 3));
	T_ERRNO(ENOENT, renameat2(AT_FDCWD, "missing", AT_FDCWD, "x", RENAME_NOREPLACE));
	return T_EXIT_PASS;
}

static int ns_rename_exchange(void)
{
	ino_t ino_a, ino_b, ino_sub, ino_file;
	struct stat st;

	T_CALL(ns_make_file("a", "A"));
	T_CALL(ns_make_file("b", "B"));
	ino_a = ns_ino("a");
	ino_b = ns_ino("b");
	T_OK(renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_EXCHANGE));
	T_CALL(ns_expect_content("a", "B"));
	T_CALL(ns_expect_content("b", "A"));
	T_CALL(ns_expect_ino("a", ino_b));
	T_CALL(ns_expect_ino("b", ino_a));
	/* A file and a directory trade places. */
	T_OK(mkdir("d", 0755));
	T_CALL(ns_make_file("d/x", "X"));
	T_OK(renameat2(AT_FDCWD, "a", AT_FDCWD, "d", RENAME_EXCHANGE));
	T_OK(lstat("a", &st));
	T_TRUE(S_ISDIR(st.st_mode));
	T_CALL(ns_expect_content("a/x", "X"));
	T_CALL(ns_expect_content("d", "B"));
	T_CALL(ns_expect_nlink(".", 3));
	/* Across directories the parents' link counts follow the directory. */
	T_OK(mkdir("p", 0755));
	T_OK(mkdir("q", 0755));
	T_OK(mkdir("p/sub", 0755));
	T_CALL(ns_make_file("q/file", "F"));
	ino_sub = ns_ino("p/sub");
	ino_file = ns_ino("q/file");
	T_CALL(ns_expect_nlink("p", 3));
	T_CALL(ns_expect_nlink("q", 2));
	T_OK(renameat2(AT_FDCWD, "p/sub", AT_FDCWD, "q/file", RENAME_EXCHANGE));
	T_CALL(ns_expect_nlink("p", 2));
	T_CALL(ns_expect_nlink("q", 3));
	T_CALL(ns_expect_ino("q/file", ino_sub));
	T_CALL(ns_expect_ino("p/sub", ino_file));
	T_CALL(ns_expect_ino("q/file/..", ns_ino("q")));
	T_CALL(ns_expect_content("p/sub", "F"));
	T_ERRNO(ENOENT, renameat2(AT_FDCWD, "a", AT_FDCWD, "missing", RENAME_EXCHANGE));
	T_ERRNO(ENOENT, renameat2(AT_FDCWD, "missing", AT_FDCWD, "a", RENAME_EXCHANGE));
	T_ERRNO(EINVAL,
		renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_EXCHANGE | RENAME_NOREPLACE));
	/* A directory cannot be swapped with its own descendant. */
	T_ERRNO(EINVAL, renameat2(AT_FDCWD, "q", AT_FDCWD, "q/file", RENAME_EXCHANGE));
	/* Exchanging a name with itself is a no-op. */
	T_OK(renameat2(AT_FDCWD, "b", AT_FDCWD, "b", RENAME_EXCHANGE));
	T_CALL(ns_expect_content("b", "A"));
	return T_EXIT_PASS;
}

static int ns_rename_whiteout(void)
{
	struct stat st;
	int ret, err;

	T_CALL(ns_make_file("a", "A"));
	errno = 0;
	ret = renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_WHITEOUT);
	err = errno;
	if (ret && err == EPERM && !harness_is_root())
		T_SKIP("RENAME_WHITEOUT needs CAP_MKNOD");
	if (ret)
		T_FAIL("renameat2(a, b, RENAME_WHITEOUT): expected success, got %s",
		       harness_errname(err));
	T_CALL(ns_expect_content("b", "A"));
	T_OK(lstat("a", &st));
	T_EQ_OCT(st.st_mode, S_IFCHR);
	T_EQ(st.st_rdev, 0);
	T_EQ(st.st_nlink, 1);
	/* Owned by the caller, as any node it makes. */
	T_EQ(st.st_uid, geteuid());
	T_EQ(st.st_gid, getegid());
	T_TRUE(st.st_ino != ns_ino("b"));
	/* Over an existing target, which is replaced. */
	T_CALL(ns_make_file("c", "C"));
	T_OK(renameat2(AT_FDCWD, "b", AT_FDCWD, "c", RENAME_WHITEOUT));
	T_CALL(ns_expect_content("c", "A"));
	T_OK(lstat("b", &st));
	T_EQ_OCT(st.st_mode, S_IFCHR);
	T_EQ(st.st_rdev, 0);
	/* A directory leaves a whiteout too, and its parent loses a link. */
	T_OK(mkdir("d", 0755));
	T_CALL(ns_expect_nlink(".", 3));
	T_OK(renameat2(AT_FDCWD, "d", AT_FDCWD, "e", RENAME_WHITEOUT));
	T_OK(lstat("d", &st));
	T_EQ_OCT(st.st_mode, S_IFCHR);
	T_CALL(ns_expect_nlink(".", 3));
	T_ERRNO(EINVAL, renameat2(AT_FDCWD, "c", AT_FDCWD, "x", RENAME_WHITEOUT | RENAME_EXCHANGE));
	/* A whiteout is an ordinary 0:0 device node that unlink removes. */
	T_OK(unlink("a"));
	return T_EXIT_PASS;
}

static int ns_rename_cross_dir(void)
{
	ino_t ino_s, ino_f;

	T_OK(mkdir("A", 0755));
	T_OK(mkdir("B", 0755));
	T_OK(mkdir("A/s", 0755));
	T_CALL(ns_make_file("A/s/inner", "in"));
	T_CALL(ns_make_file("A/f", "F"));
	ino_s = ns_ino("A/s");
	ino_f = ns_ino("A/f");
	T_CALL(ns_expect_nlink("A", 3));
	T_CALL(ns_expect_nlink("B", 2));
	T_OK(rename("A/s", "B/s"));
	T_CALL(ns_expect_nlink("A", 2));
	T_CALL(ns_expect_nlink("B", 3));
	T_CALL(ns_expect_ino("B/s", ino_s));
	T_CALL(ns_expect_ino("B/s/..", ns_ino("B")));
	T_CALL(ns_expect_content("B/s/inner", "in"));
	T_OK(rename("A/f", "B/f"));
	T_CALL(ns_expect_nlink("A", 2));
	T_CALL(ns_expect_nlink("B", 3));
	T_CALL(ns_expect_ino("B/f", ino_f));
	/* Over an empty directory in the other parent. */
	T_OK(mkdir("A/t", 0755));
	T_CALL(ns_expect_nlink("A", 3));
	T_OK(rename("B/s", "A/t"));
	T_CALL(ns_expect_nlink("A", 3));
	T_CALL(ns_expect_nlink("B", 2));
	T_CALL(ns_expect_ino("A/t", ino_s));
	T_CALL(ns_expect_ino("A/t/..", ns_ino("A")));
	/* Over an existing file in the other parent. */
	T_CALL(ns_make_file("A/g", "G"));
	T_OK(rename("B/f", "A/g"));
	T_CALL(ns_expect_content("A/g", "F"));
	T_CALL(ns_expect_nlink(".", 4));
	return T_EXIT_PASS;
}

static int ns_open_unlinked(void)
{
	char content[16] = "";
	struct stat st;
	int fd;

	T_OK(fd = open("f", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	T_EQ(write(fd, "hello", 5), 5);
	T_OK(unlink("f"));
	T_OK(fstat(fd, &st));
	T_EQ(st.st_nlink, 0);
	T_EQ(st.st_size, 5);
	T_EQ(pwrite(fd, "HELLO", 5, 5), 5);
	T_EQ(pread(fd, content, sizeof(content), 0), 10);
	T_MEM(content, "helloHELLO", 10);
	T_OK(ftruncate(fd, 3));
	T_OK(fstat(fd, &st));
	T_EQ(st.st_size, 3);
	T_OK(fchmod(fd, 0600));
	T_OK(fstat(fd, &st));
	T_EQ_OCT(st.st_mode, S_IFREG | 0600);
	/* The name is free again, for a different inode. */
	T_CALL(ns_make_file("f", "new"));
	T_TRUE(ns_ino("f") != st.st_ino);
	T_EQ(pread(fd, content, sizeof(content), 0), 3);
	T_MEM(content, "hel", 3);
	T_OK(close(fd));
	T_CALL(ns_expect_content("f", "new"));
	return T_EXIT_PASS;
}

static int ns_name_max(void)
{
	char n255[NAME_MAX + 1], n256[NAME_MAX + 2];
	struct dirent *ent;
	struct stat st;
	int fd, found = 0;
	DIR *dir;

	memset(n255, 'x', NAME_MAX);
	n255[NAME_MAX] = '\0';
	memset(n256, 'y', NAME_MAX + 1);
	n256[NAME_MAX + 1] = '\0';

	T_OK(fd = open(n255, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	T_OK(close(fd));
	T_OK(stat(n255, &st));
	T_TRUE(dir = opendir("."));
	while ((ent = readdir(dir)))
		if (strcmp(ent->d_name, n255) == 0)
			found++;
	closedir(dir);
	T_EQ(found, 1);
	T_OK(unlink(n255));
	T_OK(mkdir(n255, 0755));
	T_OK(rmdir(n255));
	T_OK(symlink("target", n255));
	T_OK(unlink(n255));

	T_CALL(ns_make_file("f", NULL));
	T_OK(mkdir("d", 0755));
	T_ERRNO(ENAMETOOLONG, open(n256, O_WRONLY | O_CREAT, 0644));
	T_ERRNO(ENAMETOOLONG, open(n256, O_RDONLY));
	T_ERRNO(ENAMETOOLONG, stat(n256, &st));
	T_ERRNO(ENAMETOOLONG, mkdir(n256, 0755));
	T_ERRNO(ENAMETOOLONG, mknod(n256, S_IFIFO | 0644, 0));
	T_ERRNO(ENAMETOOLONG, symlink("target", n256));
	T_ERRNO(ENAMETOOLONG, link("f", n256));
	T_ERRNO(ENAMETOOLONG, rename("f", n256));
	T_ERRNO(ENAMETOOLONG, unlink(n256));
	T_ERRNO(ENAMETOOLONG, rmdir(n256));
	T_OK(fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	T_ERRNO(ENAMETOOLONG, fstatat(fd, n256, &st, AT_SYMLINK_NOFOLLOW));
	T_ERRNO(ENAMETOOLONG, openat(fd, n256, O_WRONLY | O_CREAT, 0644));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int ns_expect_dirent(const char *name, unsigned char d_type, ino_t d_ino,
			    unsigned char want_type)
{
	struct stat st;

	if (d_type != want_type)
		T_FAIL("d_type of %s: expected %u, got %u", name, want_type, d_type);
	T_OK(lstat(name, &st));
	if (d_ino != st.st_ino)
		T_FAIL("d_ino of %s: expected %lu (st_ino), got %lu", name,
		       (unsigned long)st.st_ino, (unsigned long)d_ino);
	return T_EXIT_PASS;
}

static int ns_readdir_types(void)
{
	static const struct {
		const char *name;
		unsigned char d_type;
	} kinds[] = {
		{ ".", DT_DIR },  { "..", DT_DIR }, { "f", DT_REG },
		{ "d", DT_DIR },  { "l", DT_LNK },  { "p", DT_FIFO },
		{ "s", DT_SOCK }, { "c", DT_CHR },  { "b", DT_BLK },
	};
	struct sockaddr_un addr = { .sun_family = AF_UNIX, .sun_path = "s" };
	int seen[sizeof(kinds) / sizeof(kinds[0])] = { 0 };
	size_t nr_kinds = sizeof(kinds) / sizeof(kinds[0]);
	int has_dev = harness_is_root();
	struct dirent *ent;
	size_t i;
	DIR *dir;
	int sock;

	T_CALL(ns_make_file("f", NULL));
	T_OK(mkdir("d", 0755));
	T_OK(symlink("f", "l"));
	T_OK(mkfifo("p", 0644));
	T_OK(sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	T_OK(bind(sock, (struct sockaddr *)&addr, sizeof(addr)));
	T_OK(close(sock));
	if (has_dev) {
		T_OK(mknod("c", S_IFCHR | 0644, makedev(1, 3)));
		T_OK(mknod("b", S_IFBLK | 0644, makedev(7, 0)));
	} else {
		nr_kinds -= 2;
	}

	T_TRUE(dir = opendir("."));
	while ((ent = readdir(dir))) {
		for (i = 0; i < nr_kinds; i++)
			if (strcmp(ent->d_name, kinds[i].name) == 0)
				break;
		if (i == nr_kinds)
			T_FAIL("readdir: expected only known names, got \"%s\"", ent->d_name);
		seen[i]++;
		T_CALL(ns_expect_dirent(ent->d_name, ent->d_type, ent->d_ino, kinds[i].d_type));
	}
	closedir(dir);
	for (i = 0; i < nr_kinds; i++)
		if (seen[i] != 1)
			T_FAIL("readdir: expected \"%s\" once, got %d times", kinds[i].name,
			       seen[i]);
	if (!has_dev)
		T_SKIP("device nodes need CAP_MKNOD; other types ok");
	return T_EXIT_PASS;
}

static int ns_readdir_empty(void)
{
	int dot = 0, dotdot = 0, other = 0;
	struct dirent *ent;
	DIR *dir;

	T_OK(mkdir("e", 0755));
	T_TRUE(dir = opendir("e"));
	while ((ent = readdir(dir))) {
		if (strcmp(ent->d_name, ".") == 0)
			dot++;
		else if (strcmp(ent->d_name, "..") == 0)
			dotdot++;
		else
			other++;
	}
	closedir(dir);
	T_EQ(dot, 1);
	T_EQ(dotdot, 1);
	T_EQ(other, 0);
	return T_EXIT_PASS;
}

#define NS_NR_SEEK 100 /* files in the directory of the seek checks */
#define NS_NR_SEEK_ENTRIES (NS_NR_SEEK + 2)

static const int ns_seek_probes[] = { 0, 1, 2, 37, 64, NS_NR_SEEK, NS_NR_SEEK + 1 };

static int ns_make_seek_dir(void)
{
	char path[64];
	int i;

	T_OK(mkdir("d", 0755));
	for (i = 0; i < NS_NR_SEEK; i++) {
		snprintf(path, sizeof(path), "d/f%03d", i);
		T_CALL(ns_make_file(path, NULL));
	}
	return T_EXIT_PASS;
}

/* A position from telldir() brings seekdir() back to the same entry. */
static int ns_readdir_telldir(void)
{
	static char names[NS_NR_SEEK_ENTRIES][NAME_MAX + 1];
	static long pos[NS_NR_SEEK_ENTRIES];
	struct dirent *ent;
	int i, nr = 0;
	size_t p;
	DIR *dir;

	T_CALL(ns_make_seek_dir());
	T_TRUE(dir = opendir("d"));
	for (;;) {
		long here = telldir(dir);

		ent = readdir(dir);
		if (!ent)
			break;
		if (nr == NS_NR_SEEK_ENTRIES)
			T_FAIL("readdir: expected %d entries, got more", NS_NR_SEEK_ENTRIES);
		pos[nr] = here;
		snprintf(names[nr], sizeof(names[nr]), "%s", ent->d_name);
		nr++;
	}
	T_EQ(nr, NS_NR_SEEK_ENTRIES);
	for (p = 0; p < sizeof(ns_seek_probes) / sizeof(ns_seek_probes[0]); p++) {
		i = ns_seek_probes[p];
		seekdir(dir, pos[i]);
		T_TRUE(ent = readdir(dir));
		if (strcmp(ent->d_name, names[i]) != 0)
			T_FAIL("readdir after seekdir(entry %d): expected \"%s\", got \"%s\"", i,
			       names[i], ent->d_name);
	}
	rewinddir(dir);
	T_TRUE(ent = readdir(dir));
	T_STR(ent->d_name, names[0]);
	closedir(dir);
	return T_EXIT_PASS;
}

/* The d_off of an entry, given to lseek() on another open, resumes after it. */
static int ns_readdir_d_off(void)
{
	static char names[NS_NR_SEEK_ENTRIES][NAME_MAX + 1];
	static off_t d_off[NS_NR_SEEK_ENTRIES];
	char buf[512];
	int fd, i, nr = 0;
	size_t p;
	long n;

	T_CALL(ns_make_seek_dir());
	T_OK(fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			if (nr == NS_NR_SEEK_ENTRIES)
				T_FAIL("getdents64: expected %d entries, got more",
				       NS_NR_SEEK_ENTRIES);
			snprintf(names[nr], sizeof(names[nr]), "%s", d->d_name);
			d_off[nr] = d->d_off;
			nr++;
			off += d->d_reclen;
		}
	}
	T_OK(n);
	T_OK(close(fd));
	T_EQ(nr, NS_NR_SEEK_ENTRIES);
	for (p = 0; p < sizeof(ns_seek_probes) / sizeof(ns_seek_probes[0]); p++) {
		i = ns_seek_probes[p];
		T_OK(fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		T_EQ(lseek(fd, d_off[i], SEEK_SET), d_off[i]);
		T_OK(n = getdents64(fd, buf, sizeof(buf)));
		if (i == NS_NR_SEEK_ENTRIES - 1) {
			T_EQ(n, 0);
		} else {
			struct dirent64 *d = (struct dirent64 *)buf;

			T_TRUE(n > 0);
			if (strcmp(d->d_name, names[i + 1]) != 0)
				T_FAIL("getdents64 after lseek(d_off of entry %d): expected \"%s\", got \"%s\"",
				       i, names[i + 1], d->d_name);
		}
		T_OK(close(fd));
	}
	return T_EXIT_PASS;
}

static int ns_make_many(const char *dir, int nr)
{
	char path[64];
	int i;

	T_OK(mkdir(dir, 0755));
	for (i = 0; i < nr; i++) {
		snprintf(path, sizeof(path), "%s/e%04d", dir, i);
		T_CALL(ns_make_file(path, NULL));
	}
	return T_EXIT_PASS;
}

/* Returns the index of a name made by ns_make_many(), or -1 for "." and "..". */
static int ns_many_index(const char *name, int nr)
{
	char *end;
	long i;

	if (name[0] != 'e')
		return -1;
	i = strtol(name + 1, &end, 10);
	if (*end || i < 0 || i >= nr)
		return -2;
	return i;
}

/*
 * Entries removed while a directory is read: each survivor must be returned
 * exactly once and nothing twice, whatever the removals do to the offsets.
 */
static int ns_readdir_unlink_during(void)
{
	static int seen[NS_NR_MANY], removed[NS_NR_MANY];
	char buf[1024], path[64];
	int fd, i, idx, nr_calls = 0;
	long n;

	T_CALL(ns_make_many("d", NS_NR_MANY));
	T_OK(fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
		nr_calls++;
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			off += d->d_reclen;
			idx = ns_many_index(d->d_name, NS_NR_MANY);
			if (idx == -1)
				continue;
			if (idx < 0)
				T_FAIL("getdents64: expected only e0000..e%04d, got \"%s\"",
				       NS_NR_MANY - 1, d->d_name);
			if (seen[idx]++)
				T_FAIL("getdents64: expected \"%s\" once, got it again", d->d_name);
			/* Remove every other entry just read... */
			if (idx % 2 == 0 && !removed[idx]) {
				T_OK(unlinkat(fd, d->d_name, 0));
				removed[idx] = 1;
			}
		}
		/* ...and a few far ahead of and behind the reading position. */
		for (i = (nr_calls * 37) % NS_NR_MANY; i < NS_NR_MANY; i += 211) {
			if (removed[i] || i % 2 == 0)
				continue;
			snprintf(path, sizeof(path), "d/e%04d", i);
			T_OK(unlink(path));
			removed[i] = 1;
		}
	}
	T_OK(n);
	T_OK(close(fd));
	for (i = 0; i < NS_NR_MANY; i++)
		if (!removed[i] && seen[i] != 1)
			T_FAIL("surviving entry e%04d: expected once, got %d times", i, seen[i]);
	return T_EXIT_PASS;
}

/* The rm -rf pattern: remove each entry as readdir() returns it. */
static int ns_readdir_remove_all(void)
{
	static int seen[NS_NR_MANY];
	struct dirent *ent;
	int i, idx;
	DIR *dir;

	T_CALL(ns_make_many("d", NS_NR_MANY));
	T_TRUE(dir = opendir("d"));
	while ((ent = readdir(dir))) {
		idx = ns_many_index(ent->d_name, NS_NR_MANY);
		if (idx == -1)
			continue;
		if (idx < 0)
			T_FAIL("readdir: expected only e0000..e%04d, got \"%s\"", NS_NR_MANY - 1,
			       ent->d_name);
		if (seen[idx]++)
			T_FAIL("readdir: expected \"%s\" once, got it again", ent->d_name);
		T_OK(unlinkat(dirfd(dir), ent->d_name, 0));
	}
	closedir(dir);
	for (i = 0; i < NS_NR_MANY; i++)
		if (seen[i] != 1)
			T_FAIL("entry e%04d: expected once, got %d times", i, seen[i]);
	T_CALL(ns_expect_nlink("d", 2));
	T_OK(rmdir("d"));
	return T_EXIT_PASS;
}

/*
 * Entries created while a directory is read must not disturb the others, nor
 * keep the listing going forever: one new entry per getdents64() call must not
 * be outrun. tmpfs ends a listing at the entries present when it was opened.
 */
static int ns_readdir_create_during(void)
{
	static int seen[NS_NR_MANY];
	char buf[1024], path[64];
	int fd, i, idx, nr_calls = 0;
	long n;

	T_CALL(ns_make_many("d", NS_NR_MANY));
	T_OK(fd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
		if (++nr_calls > NS_NR_MANY)
			T_FAIL("listing while creating: expected an end within %d getdents64 calls, got none",
			       NS_NR_MANY);
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			off += d->d_reclen;
			if (d->d_name[0] == 'n')
				continue;
			idx = ns_many_index(d->d_name, NS_NR_MANY);
			if (idx == -1)
				continue;
			if (idx < 0)
				T_FAIL("getdents64: expected only e* and n* names, got \"%s\"",
				       d->d_name);
			if (seen[idx]++)
				T_FAIL("getdents64: expected \"%s\" once, got it again", d->d_name);
		}
		snprintf(path, sizeof(path), "d/n%05d", nr_calls);
		T_CALL(ns_make_file(path, NULL));
	}
	T_OK(n);
	T_OK(close(fd));
	for (i = 0; i < NS_NR_MANY; i++)
		if (seen[i] != 1)
			T_FAIL("entry e%04d: expected once, got %d times", i, seen[i]);
	return T_EXIT_PASS;
}

static int ns_inode_stable(void)
{
	ino_t ino_f, ino_d;

	T_CALL(ns_make_file("f", "F"));
	T_OK(mkdir("d", 0755));
	ino_f = ns_ino("f");
	ino_d = ns_ino("d");
	T_TRUE(ino_f != ino_d);
	T_OK(rename("f", "g"));
	T_CALL(ns_expect_ino("g", ino_f));
	T_OK(rename("d", "e"));
	T_CALL(ns_expect_ino("e", ino_d));
	T_OK(mkdir("x", 0755));
	T_OK(rename("g", "x/g"));
	T_OK(rename("e", "x/e"));
	T_CALL(ns_expect_ino("x/g", ino_f));
	T_CALL(ns_expect_ino("x/e", ino_d));
	T_OK(renameat2(AT_FDCWD, "x/g", AT_FDCWD, "x/e", RENAME_EXCHANGE));
	T_CALL(ns_expect_ino("x/g", ino_d));
	T_CALL(ns_expect_ino("x/e", ino_f));
	T_OK(link("x/e", "hard"));
	T_CALL(ns_expect_ino("hard", ino_f));
	T_OK(rename("x", "y"));
	T_CALL(ns_expect_ino("y/e", ino_f));
	T_CALL(ns_expect_ino("y/g", ino_d));
	return T_EXIT_PASS;
}

static int ns_enotdir_eisdir(void)
{
	struct stat st;
	char c;
	int fd;

	T_CALL(ns_make_file("f", "x"));
	T_OK(mkdir("d", 0755));
	T_ERRNO(ENOTDIR, stat("f/x", &st));
	T_ERRNO(ENOTDIR, stat("f/", &st));
	T_ERRNO(ENOTDIR, open("f/", O_RDONLY));
	T_ERRNO(ENOTDIR, open("f", O_RDONLY | O_DIRECTORY));
	T_ERRNO(ENOTDIR, mkdir("f/x", 0755));
	T_ERRNO(ENOTDIR, open("f/x", O_WRONLY | O_CREAT, 0644));
	T_ERRNO(EISDIR, open("d", O_WRONLY));
	T_ERRNO(EISDIR, open("d", O_RDWR));
	T_ERRNO(EISDIR, open("d", O_WRONLY | O_CREAT, 0644));
	T_ERRNO(EISDIR, open("d/", O_RDWR | O_CREAT, 0644));
	T_ERRNO(EISDIR, truncate("d", 0));
	T_OK(fd = open("d", O_RDONLY | O_CLOEXEC));
	T_ERRNO(EISDIR, read(fd, &c, 1));
	T_ERRNO(EBADF, write(fd, &c, 1));
	T_OK(close(fd));
	T_OK(stat("d/", &st));
	T_OK(stat("d/.", &st));
	T_OK(stat("d/../d", &st));
	return T_EXIT_PASS;
}

/* Free blocks of the mount, as df sees them. */
static int ns_bfree(unsigned long *out)
{
	struct statvfs sv;

	T_OK(statvfs(".", &sv));
	*out = sv.f_bfree;
	return T_EXIT_PASS;
}

/*
 * O_TMPFILE: a file with no name, that linkat can name (unless O_EXCL),
 * whose pages go at its last close otherwise; as on tmpfs.
 */
static int ns_tmpfile(void)
{
	static char data[1 << 20];
	unsigned long before, during, after;
	char path[64], buf[8];
	struct stat st;
	int fd, tries;

	memset(data, 'q', sizeof(data));
	T_OK(mkdir("t", 0755));
	T_CALL(ns_bfree(&before));
	T_OK(fd = open("t", O_TMPFILE | O_RDWR | O_CLOEXEC, 0640));
	T_EQ(write(fd, data, sizeof(data)), sizeof(data));
	T_OK(fstat(fd, &st));
	T_EQ(st.st_nlink, 0);
	T_EQ_OCT(st.st_mode, S_IFREG | 0640);
	T_EQ(st.st_uid, getuid());
	T_EQ(pread(fd, buf, 4, 0), 4);
	T_MEM(buf, "qqqq", 4);
	T_CALL(ns_bfree(&during));
	T_TRUE(during < before);
	T_OK(close(fd));
	for (tries = 0; tries < 100; tries++) {
		T_CALL(ns_bfree(&after));
		if (after >= before)
			break;
		usleep(20000);
	}
	T_EQ(after, before);
	T_OK(rmdir("t")); /* nothing was left in it */

	T_OK(mkdir("t", 0755));
	T_OK(fd = open("t", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
	T_EQ(write(fd, "named", 5), 5);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	T_OK(linkat(AT_FDCWD, path, AT_FDCWD, "t/named", AT_SYMLINK_FOLLOW));
	T_OK(close(fd));
	T_OK(stat("t/named", &st));
	T_EQ(st.st_nlink, 1);
	T_EQ(st.st_size, 5);
	T_OK(fd = open("t/named", O_RDONLY | O_CLOEXEC));
	T_EQ(read(fd, buf, sizeof(buf)), 5);
	T_MEM(buf, "named", 5);
	T_OK(close(fd));

	T_OK(fd = open("t", O_TMPFILE | O_EXCL | O_WRONLY | O_CLOEXEC, 0600));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	T_ERRNO(ENOENT, linkat(AT_FDCWD, path, AT_FDCWD, "t/never", AT_SYMLINK_FOLLOW));
	T_OK(close(fd));
	T_ERRNO(ENOTDIR, open("t/named", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
	return T_EXIT_PASS;
}

/* path's file handle, into h (NS_HANDLE_MAX bytes of room). */
static int ns_get_handle(const char *path, struct file_handle *h)
{
	int mount_id;

	h->handle_bytes = NS_HANDLE_MAX;
	T_OK(name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0));
	return T_EXIT_PASS;
}

/* The kernel forgets what nothing uses: unused dentries and inodes. */
static int ns_drop_caches(void)
{
	int fd;

	T_OK(fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC));
	T_EQ(write(fd, "2", 1), 1);
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/*
 * File handles, as NFS export, fanotify and backup tools use them: they
 * open linked files and directories after the kernel forgot their inodes,
 * and refuse a file that has lost its last name and is open nowhere.
 */
static int ns_file_handles(void)
{
	union {
		struct file_handle h;
		char space[sizeof(struct file_handle) + NS_HANDLE_MAX];
	} file, sub, dir, gone;
	char content[16] = "";
	struct stat st;
	int fd, held, mount_fd;

	if (!harness_is_root())
		T_SKIP("open_by_handle_at needs CAP_DAC_READ_SEARCH");
	T_CALL(ns_make_file("f", "handled"));
	T_OK(mkdir("d", 0755));
	T_OK(mkdir("d/e", 0755));
	T_CALL(ns_make_file("d/e/g", "deep"));
	T_CALL(ns_make_file("gone", "x"));
	T_CALL(ns_get_handle("f", &file.h));
	T_CALL(ns_get_handle("d/e/g", &sub.h));
	T_CALL(ns_get_handle("d/e", &dir.h));
	T_CALL(ns_get_handle("gone", &gone.h));
	T_OK(unlink("gone"));
	T_OK(mount_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	T_CALL(ns_drop_caches());

	T_OK(fd = open_by_handle_at(mount_fd, &file.h, O_RDONLY | O_CLOEXEC));
	T_EQ(read(fd, content, sizeof(content)), 7);
	T_MEM(content, "handled", 7);
	T_OK(close(fd));
	T_OK(fd = open_by_handle_at(mount_fd, &sub.h, O_RDONLY | O_CLOEXEC));
	T_EQ(read(fd, content, sizeof(content)), 4);
	T_MEM(content, "deep", 4);
	T_OK(close(fd));
	/* A directory is connected back to the tree through "..". */
	T_OK(fd = open_by_handle_at(mount_fd, &dir.h, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	T_OK(fstatat(fd, "g", &st, 0));
	T_EQ(st.st_size, 4);
	T_OK(close(fd));
	T_ERRNO(ESTALE, open_by_handle_at(mount_fd, &gone.h, O_RDONLY | O_CLOEXEC));
	/* One still open is not gone yet. */
	T_OK(held = open("f", O_RDONLY | O_CLOEXEC));
	T_OK(unlink("f"));
	T_CALL(ns_drop_caches());
	T_OK(fd = open_by_handle_at(mount_fd, &file.h, O_RDONLY | O_CLOEXEC));
	T_OK(close(fd));
	T_OK(close(held));

	/* Once removed, a directory's handle is stale too. */
	T_OK(unlink("d/e/g"));
	T_OK(rmdir("d/e"));
	T_CALL(ns_drop_caches());
	T_ERRNO(ESTALE, open_by_handle_at(mount_fd, &dir.h, O_RDONLY | O_CLOEXEC));
	T_ERRNO(ESTALE, open_by_handle_at(mount_fd, &sub.h, O_RDONLY | O_CLOEXEC));
	T_OK(close(mount_fd));
	return T_EXIT_PASS;
}

static const struct harness_check ns_checks[] = {
	HARNESS_CHECK(ns_regular_file),
	HARNESS_CHECK(ns_directory),
	HARNESS_CHECK(ns_dir_nlink),
	HARNESS_CHECK(ns_dir_size),
	HARNESS_CHECK(ns_symlink),
	HARNESS_CHECK(ns_symlink_max),
	HARNESS_CHECK(ns_hardlink),
	HARNESS_CHECK(ns_tmpfile),
	HARNESS_CHECK(ns_fifo),
	HARNESS_CHECK(ns_unix_socket),
	HARNESS_CHECK(ns_device_nodes),
	HARNESS_CHECK(ns_unlink),
	HARNESS_CHECK(ns_rmdir),
	HARNESS_CHECK(ns_dead_dir),
	HARNESS_CHECK(ns_rename_file),
	HARNESS_CHECK(ns_rename_dir),
	HARNESS_CHECK(ns_rename_noreplace),
	HARNESS_CHECK(ns_rename_exchange),
	HARNESS_CHECK(ns_rename_whiteout),
	HARNESS_CHECK(ns_rename_cross_dir),
	HARNESS_CHECK(ns_open_unlinked),
	HARNESS_CHECK(ns_file_handles),
	HARNESS_CHECK(ns_name_max),
	HARNESS_CHECK(ns_readdir_types),
	HARNESS_CHECK(ns_readdir_empty),
	HARNESS_CHECK(ns_readdir_telldir),
	HARNESS_CHECK(ns_readdir_d_off),
	HARNESS_CHECK(ns_readdir_unlink_during),
	HARNESS_CHECK(ns_readdir_remove_all),
	HARNESS_CHECK(ns_readdir_create_during),
	HARNESS_CHECK(ns_inode_stable),
	HARNESS_CHECK(ns_enotdir_eisdir),
};

int main(int argc, char **argv)
{
	return harness_main(argc, argv, ns_checks, sizeof(ns_checks) / sizeof(ns_checks[0]));
}
