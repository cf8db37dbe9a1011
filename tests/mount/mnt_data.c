// SPDX-License-Identifier: MIT
/*
 * File data conformance of a mounted filesystem against tmpfs: sparse files,
 * I/O at the edges, truncate, fallocate, SEEK_HOLE/SEEK_DATA,
 * copy_file_range, mmap, locks and a byte-exact 64 MiB round trip.
 * Usage: mnt_data DIR, where DIR is the empty root of the mount.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <linux/aio_abi.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>

#include "harness.h"

#define DATA_PAGE 4096L
#define DATA_BIG_SIZE (64L << 20)
#define DATA_BIG_MAX_SEGMENT (256L << 10)
#define DATA_SEED 0x7f4a7c159e3779b9ULL

#ifndef FALLOC_FL_WRITE_ZEROES
#define FALLOC_FL_WRITE_ZEROES 0x80
#endif

/* xorshift64: a fixed seed gives the same bytes on every run. */
static uint64_t data_rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static void data_rng_fill(uint64_t *state, unsigned char *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = data_rng_next(state);

		memcpy(buf + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = data_rng_next(state);

		memcpy(buf + i, &v, len - i);
	}
}

static int data_expect_size(int fd, off_t size, blkcnt_t blocks)
{
	struct stat st;

	T_OK(fstat(fd, &st));
	if (st.st_size != size || st.st_blocks != blocks)
		T_FAIL("st_size/st_blocks: expected %lld/%lld, got %lld/%lld", (long long)size,
		       (long long)blocks, (long long)st.st_size, (long long)st.st_blocks);
	return T_EXIT_PASS;
}

/* Checks that [off, off + len) reads back as the byte @c. */
static int data_expect_fill(int fd, off_t off, size_t len, unsigned char c)
{
	unsigned char buf[8192];

	while (len) {
		size_t chunk = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t n;
		size_t i;

		T_OK(n = pread(fd, buf, chunk, off));
		if ((size_t)n != chunk)
			T_FAIL("pread(%zu at %lld): expected %zu bytes, got %zd", chunk,
			       (long long)off, chunk, n);
		for (i = 0; i < chunk; i++)
			if (buf[i] != c)
				T_FAIL("byte at %lld: expected 0x%02x, got 0x%02x",
				       (long long)off + (long long)i, c, buf[i]);
		off += chunk;
		len -= chunk;
	}
	return T_EXIT_PASS;
}

static int data_write_fill(int fd, off_t off, size_t len, unsigned char c)
{
	unsigned char buf[8192];

	memset(buf, c, sizeof(buf));
	while (len) {
		size_t chunk = len < sizeof(buf) ? len : sizeof(buf);

		T_EQ(pwrite(fd, buf, chunk, off), chunk);
		off += chunk;
		len -= chunk;
	}
	return T_EXIT_PASS;
}

static int data_open_new(const char *path, int *fd)
{
	T_OK(*fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	return T_EXIT_PASS;
}

static int data_sparse_1tib(void)
{
	const off_t tib = 1LL << 40, mid = 1LL << 39;
	unsigned char c = 0x5a;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_OK(ftruncate(fd, tib));
	T_CALL(data_expect_size(fd, tib, 0));
	/* Reading a hole returns zeros and allocates nothing. */
	T_CALL(data_expect_fill(fd, mid, 3 * DATA_PAGE, 0));
	T_CALL(data_expect_fill(fd, tib - DATA_PAGE, DATA_PAGE, 0));
	T_CALL(data_expect_size(fd, tib, 0));
	T_EQ(pread(fd, &c, 1, tib), 0);
	T_EQ(pwrite(fd, &c, 1, mid + 100), 1);
	T_CALL(data_expect_size(fd, tib, 8));
	c = 0;
	T_EQ(pread(fd, &c, 1, mid + 100), 1);
	T_EQ(c, 0x5a);
	T_CALL(data_expect_fill(fd, mid, 100, 0));
	T_CALL(data_expect_fill(fd, mid + 101, DATA_PAGE, 0));
	T_EQ(lseek(fd, 0, SEEK_DATA), mid);
	T_EQ(lseek(fd, mid, SEEK_HOLE), mid + DATA_PAGE);
	T_OK(ftruncate(fd, 0));
	T_CALL(data_expect_size(fd, 0, 0));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_read_write(void)
{
	struct iovec iov[3];
	char buf[64], a[4], b[4];
	struct stat st;
	int fd, ro;

	T_CALL(data_open_new("f", &fd));
	T_OK(fstat(fd, &st));
	T_EQ(st.st_blksize, DATA_PAGE);
	T_EQ(write(fd, "hello world", 11), 11);
	T_EQ(lseek(fd, 0, SEEK_CUR), 11);
	T_CALL(data_expect_size(fd, 11, 8));
	T_EQ(pwrite(fd, "HELLO", 5, 0), 5);
	T_EQ(lseek(fd, 0, SEEK_CUR), 11);
	T_EQ(pread(fd, buf, sizeof(buf), 0), 11);
	T_MEM(buf, "HELLO world", 11);
	T_EQ(read(fd, buf, sizeof(buf)), 0);
	/* Short reads at EOF. */
	T_EQ(lseek(fd, 5, SEEK_SET), 5);
	T_EQ(read(fd, buf, sizeof(buf)), 6);
	T_MEM(buf, " world", 6);
	T_EQ(lseek(fd, 0, SEEK_CUR), 11);
	T_EQ(pread(fd, buf, sizeof(buf), 10), 1);
	T_EQ(pread(fd, buf, sizeof(buf), 11), 0);
	T_EQ(pread(fd, buf, sizeof(buf), 1000), 0);
	T_EQ(write(fd, buf, 0), 0);
	T_CALL(data_expect_size(fd, 11, 8));
	/* Writing past EOF leaves a hole that reads as zeros. */
	T_EQ(pwrite(fd, "x", 1, 10000), 1);
	T_CALL(data_expect_size(fd, 10001, 16));
	T_EQ(pread(fd, buf, 10, 9995), 6);
	T_MEM(buf, "\0\0\0\0\0x", 6);
	T_CALL(data_expect_fill(fd, 11, 10000 - 11, 0));
	T_EQ(lseek(fd, -1, SEEK_END), 10000);
	T_ERRNO(EINVAL, lseek(fd, -20000, SEEK_END));
	T_ERRNO(EINVAL, pread(fd, buf, 1, -1));
	/* Vectored I/O. */
	iov[0] = (struct iovec){ "ab", 2 };
	iov[1] = (struct iovec){ "", 0 };
	iov[2] = (struct iovec){ "cd", 2 };
	T_EQ(pwritev(fd, iov, 3, 4094), 4);
	iov[0] = (struct iovec){ a, 3 };
	iov[1] = (struct iovec){ b, 1 };
	T_EQ(preadv(fd, iov, 2, 4094), 4);
	T_MEM(a, "abc", 3);
	T_MEM(b, "d", 1);
	T_CALL(data_expect_size(fd, 10001, 24));
	/* Access modes. */
	T_OK(ro = open("f", O_RDONLY | O_CLOEXEC));
	T_ERRNO(EBADF, write(ro, "x", 1));
	T_OK(close(ro));
	T_OK(ro = open("f", O_WRONLY | O_CLOEXEC));
	T_ERRNO(EBADF, read(ro, buf, 1));
	T_OK(close(ro));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* One large unaligned write and read, crossing many pages. */
static int data_large_io(void)
{
	const size_t len = (1 << 20) + 4097;
	const off_t off = DATA_PAGE - 1;
	unsigned char *out, *in;
	uint64_t rng = DATA_SEED;
	int fd;

	out = malloc(len);
	in = malloc(len);
	T_TRUE(out && in);
	data_rng_fill(&rng, out, len);
	T_CALL(data_open_new("f", &fd));
	T_EQ(pwrite(fd, out, len, off), len);
	T_CALL(data_expect_size(fd, off + len, 8 * ((off + len + DATA_PAGE - 1) / DATA_PAGE)));
	T_EQ(pread(fd, in, len, off), len);
	T_MEM(in, out, len);
	T_CALL(data_expect_fill(fd, 0, off, 0));
	T_OK(close(fd));
	free(out);
	free(in);
	return T_EXIT_PASS;
}

static int data_truncate(void)
{
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_CALL(data_write_fill(fd, 0, 2 * DATA_PAGE, 0xaa));
	T_CALL(data_expect_size(fd, 2 * DATA_PAGE, 16));
	T_OK(ftruncate(fd, 100));
	T_CALL(data_expect_size(fd, 100, 8));
	T_OK(ftruncate(fd, 2 * DATA_PAGE));
	T_CALL(data_expect_size(fd, 2 * DATA_PAGE, 8));
	T_CALL(data_expect_fill(fd, 0, 100, 0xaa));
	T_CALL(data_expect_fill(fd, 100, 2 * DATA_PAGE - 100, 0));
	/* The tail of a partial page is zeroed too. */
	T_CALL(data_write_fill(fd, 0, 2 * DATA_PAGE, 0xbb));
	T_OK(ftruncate(fd, 5000));
	T_CALL(data_expect_size(fd, 5000, 16));
	T_OK(ftruncate(fd, 3 * DATA_PAGE));
	T_CALL(data_expect_size(fd, 3 * DATA_PAGE, 16));
	T_CALL(data_expect_fill(fd, 0, 5000, 0xbb));
	T_CALL(data_expect_fill(fd, 5000, 3 * DATA_PAGE - 5000, 0));
	/* A write after a shrink does not bring old data back. */
	T_OK(ftruncate(fd, 10));
	T_EQ(pwrite(fd, "z", 1, 2 * DATA_PAGE), 1);
	T_CALL(data_expect_fill(fd, 10, 2 * DATA_PAGE - 10, 0));
	T_OK(truncate("f", 0));
	T_CALL(data_expect_size(fd, 0, 0));
	T_OK(truncate("f", 12345));
	T_CALL(data_expect_size(fd, 12345, 0));
	T_ERRNO(EINVAL, ftruncate(fd, -1));
	T_OK(close(fd));
	T_OK(fd = open("f", O_RDONLY | O_CLOEXEC));
	T_ERRNO(EINVAL, ftruncate(fd, 0));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_append(void)
{
	char buf[32];
	int fd, plain;

	T_OK(fd = open("f", O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	T_EQ(write(fd, "abc", 3), 3);
	T_EQ(lseek(fd, 0, SEEK_SET), 0);
	T_EQ(write(fd, "def", 3), 3);
	T_EQ(lseek(fd, 0, SEEK_CUR), 6);
	/* On Linux pwrite() on an O_APPEND descriptor appends too. */
	T_EQ(pwrite(fd, "XYZ", 3, 0), 3);
	T_OK(plain = open("f", O_RDWR | O_CLOEXEC));
	T_EQ(pread(plain, buf, sizeof(buf), 0), 9);
	T_MEM(buf, "abcdefXYZ", 9);
	/* Appends land after data written through another descriptor. */
	T_EQ(pwrite(plain, "0123456789", 10, 9), 10);
	T_EQ(write(fd, "!", 1), 1);
	T_EQ(pread(plain, buf, sizeof(buf), 0), 20);
	T_MEM(buf, "abcdefXYZ0123456789!", 20);
	T_CALL(data_expect_size(fd, 20, 8));
	T_OK(close(plain));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_open_trunc(void)
{
	int fd, fd2;

	T_CALL(data_open_new("f", &fd));
	T_CALL(data_write_fill(fd, 0, 3 * DATA_PAGE, 1));
	T_OK(fd2 = open("f", O_WRONLY | O_TRUNC | O_CLOEXEC));
	T_CALL(data_expect_size(fd, 0, 0));
	T_OK(close(fd2));
	/* Linux truncates on O_RDONLY|O_TRUNC as well, given write permission. */
	T_CALL(data_write_fill(fd, 0, 10, 1));
	T_OK(fd2 = open("f", O_RDONLY | O_TRUNC | O_CLOEXEC));
	T_CALL(data_expect_size(fd, 0, 0));
	T_OK(close(fd2));
	T_CALL(data_write_fill(fd, 0, 10, 1));
	T_OK(fd2 = open("f", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
	T_CALL(data_expect_size(fd, 0, 0));
	T_OK(close(fd2));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_fallocate(void)
{
	const off_t mib = 1 << 20;
	char c;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_OK(fallocate(fd, 0, 0, mib));
	T_CALL(data_expect_size(fd, mib, 2048));
	T_CALL(data_expect_fill(fd, 0, mib, 0));
	/* Inside the file nothing changes. */
	T_OK(fallocate(fd, 0, 100, DATA_PAGE));
	T_CALL(data_expect_size(fd, mib, 2048));
	/* Past the end, the size follows; unaligned ends allocate whole pages. */
	T_OK(fallocate(fd, 0, 2 * mib + 10, 100));
	T_CALL(data_expect_size(fd, 2 * mib + 110, 2048 + 8));
	T_CALL(data_open_new("k", &fd));
	T_OK(fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, mib));
	T_CALL(data_expect_size(fd, 0, 2048));
	T_EQ(pread(fd, &c, 1, 0), 0);
	/* Growing the size keeps the pages preallocated beyond it. */
	T_OK(ftruncate(fd, mib / 2));
	T_CALL(data_expect_size(fd, mib / 2, 2048));
	T_CALL(data_expect_fill(fd, 0, mib / 2, 0));
	T_OK(ftruncate(fd, 0));
	T_CALL(data_expect_size(fd, 0, 0));
	T_ERRNO(EINVAL, fallocate(fd, 0, 0, 0));
	T_ERRNO(EINVAL, fallocate(fd, 0, -1, DATA_PAGE));
	T_ERRNO(EINVAL, fallocate(fd, 0, 0, -1));
	T_ERRNO(EFBIG, fallocate(fd, 0, LLONG_MAX - 10, 100));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_punch_hole(void)
{
	const off_t mib = 1 << 20;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_CALL(data_write_fill(fd, 0, mib, 0xff));
	T_CALL(data_expect_size(fd, mib, 2048));
	T_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, DATA_PAGE, 2 * DATA_PAGE));
	T_CALL(data_expect_size(fd, mib, 2048 - 16));
	T_CALL(data_expect_fill(fd, 0, DATA_PAGE, 0xff));
	T_CALL(data_expect_fill(fd, DATA_PAGE, 2 * DATA_PAGE, 0));
	T_CALL(data_expect_fill(fd, 3 * DATA_PAGE, DATA_PAGE, 0xff));
	/* Inside one page: zeroed, still allocated. */
	T_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 10 * DATA_PAGE + 100, 100));
	T_CALL(data_expect_size(fd, mib, 2048 - 16));
	T_CALL(data_expect_fill(fd, 10 * DATA_PAGE, 100, 0xff));
	T_CALL(data_expect_fill(fd, 10 * DATA_PAGE + 100, 100, 0));
	T_CALL(data_expect_fill(fd, 10 * DATA_PAGE + 200, DATA_PAGE - 200, 0xff));
	/* Across pages: only the whole page in the middle is freed. */
	T_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 20 * DATA_PAGE + 100,
		       2 * DATA_PAGE));
	T_CALL(data_expect_size(fd, mib, 2048 - 24));
	T_CALL(data_expect_fill(fd, 20 * DATA_PAGE, 100, 0xff));
	T_CALL(data_expect_fill(fd, 20 * DATA_PAGE + 100, 2 * DATA_PAGE, 0));
	T_CALL(data_expect_fill(fd, 22 * DATA_PAGE + 100, DATA_PAGE - 100, 0xff));
	/* Up to and past EOF: the size stays. */
	T_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, mib - DATA_PAGE, mib));
	T_CALL(data_expect_size(fd, mib, 2048 - 32));
	T_CALL(data_expect_fill(fd, mib - DATA_PAGE, DATA_PAGE, 0));
	/* A hole punch must keep the size. */
	T_ERRNO(EOPNOTSUPP, fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, DATA_PAGE));
	T_CALL(data_expect_size(fd, mib, 2048 - 32));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/*
 * ZERO_RANGE: tmpfs refuses it, tierfs has it (zeros the range, counts its
 * pages, and grows the file unless KEEP_SIZE).
 */
static int data_fallocate_zero_range(void)
{
	struct statfs sfs;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_CALL(data_write_fill(fd, 0, 4 * DATA_PAGE, 0x11));
	T_OK(fstatfs(fd, &sfs));
	if (sfs.f_type == TMPFS_MAGIC) {
		T_ERRNO(EOPNOTSUPP, fallocate(fd, FALLOC_FL_ZERO_RANGE, DATA_PAGE, DATA_PAGE));
		T_OK(close(fd));
		return T_EXIT_PASS;
	}
	T_OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, DATA_PAGE + 100, DATA_PAGE));
	T_CALL(data_expect_fill(fd, 0, DATA_PAGE + 100, 0x11));
	T_CALL(data_expect_fill(fd, DATA_PAGE + 100, DATA_PAGE, 0));
	T_CALL(data_expect_fill(fd, 2 * DATA_PAGE + 100, 2 * DATA_PAGE - 100, 0x11));
	T_CALL(data_expect_size(fd, 4 * DATA_PAGE, 32));
	T_OK(fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 3 * DATA_PAGE,
		       3 * DATA_PAGE));
	T_CALL(data_expect_size(fd, 4 * DATA_PAGE, 48));
	T_CALL(data_expect_fill(fd, 3 * DATA_PAGE, DATA_PAGE, 0));
	T_OK(fallocate(fd, FALLOC_FL_ZERO_RANGE, 4 * DATA_PAGE, 2 * DATA_PAGE));
	T_CALL(data_expect_size(fd, 6 * DATA_PAGE, 48));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* Neither has COLLAPSE_RANGE, INSERT_RANGE, UNSHARE_RANGE nor WRITE_ZEROES. */
static int data_fallocate_unsupported(void)
{
	static const int modes[] = {
		FALLOC_FL_COLLAPSE_RANGE,
		FALLOC_FL_INSERT_RANGE,
		FALLOC_FL_UNSHARE_RANGE,
		FALLOC_FL_WRITE_ZEROES,
	};
	size_t i;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_CALL(data_write_fill(fd, 0, 4 * DATA_PAGE, 0x11));
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int ret, err;

		errno = 0;
		ret = fallocate(fd, modes[i], DATA_PAGE, DATA_PAGE);
		err = errno;
		if (ret == 0 || err != EOPNOTSUPP)
			T_FAIL("fallocate(mode 0x%x): expected EOPNOTSUPP, got %s", modes[i],
			       ret == 0 ? "success" : harness_errname(err));
	}
	T_CALL(data_expect_size(fd, 4 * DATA_PAGE, 32));
	T_CALL(data_expect_fill(fd, 0, 4 * DATA_PAGE, 0x11));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_seek_hole_data(void)
{
	const off_t p = DATA_PAGE;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_ERRNO(ENXIO, lseek(fd, 0, SEEK_DATA));
	T_ERRNO(ENXIO, lseek(fd, 0, SEEK_HOLE));
	T_CALL(data_write_fill(fd, 0, p, 1));
	T_CALL(data_write_fill(fd, 5 * p, p, 2));
	T_CALL(data_expect_size(fd, 6 * p, 16));
	T_EQ(lseek(fd, 0, SEEK_DATA), 0);
	T_EQ(lseek(fd, 100, SEEK_DATA), 100);
	T_EQ(lseek(fd, 0, SEEK_HOLE), p);
	T_EQ(lseek(fd, 100, SEEK_HOLE), p);
	T_EQ(lseek(fd, p, SEEK_HOLE), p);
	T_EQ(lseek(fd, 3 * p + 7, SEEK_HOLE), 3 * p + 7);
	T_EQ(lseek(fd, p, SEEK_DATA), 5 * p);
	T_EQ(lseek(fd, 3 * p + 7, SEEK_DATA), 5 * p);
	/* The end of the file is a hole. */
	T_EQ(lseek(fd, 5 * p, SEEK_HOLE), 6 * p);
	T_EQ(lseek(fd, 6 * p - 1, SEEK_DATA), 6 * p - 1);
	T_EQ(lseek(fd, 6 * p - 1, SEEK_HOLE), 6 * p);
	/* At or past the size: ENXIO for both. */
	T_ERRNO(ENXIO, lseek(fd, 6 * p, SEEK_DATA));
	T_ERRNO(ENXIO, lseek(fd, 6 * p, SEEK_HOLE));
	T_ERRNO(ENXIO, lseek(fd, 100 * p, SEEK_DATA));
	T_ERRNO(ENXIO, lseek(fd, 100 * p, SEEK_HOLE));
	T_ERRNO(ENXIO, lseek(fd, -1, SEEK_DATA));
	/* Data is found page by page: one byte makes its whole page data. */
	T_EQ(pwrite(fd, "x", 1, 2 * p + 10), 1);
	T_EQ(lseek(fd, p, SEEK_DATA), 2 * p);
	T_EQ(lseek(fd, 2 * p, SEEK_HOLE), 3 * p);
	T_EQ(lseek(fd, 2 * p + 20, SEEK_HOLE), 3 * p);
	/* A larger size adds hole, no data. */
	T_OK(ftruncate(fd, 10 * p));
	T_ERRNO(ENXIO, lseek(fd, 6 * p, SEEK_DATA));
	T_EQ(lseek(fd, 5 * p, SEEK_HOLE), 6 * p);
	T_EQ(lseek(fd, 6 * p, SEEK_HOLE), 6 * p);
	/* A punched page becomes a hole. */
	T_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, p));
	T_EQ(lseek(fd, 0, SEEK_DATA), 2 * p);
	T_EQ(lseek(fd, 0, SEEK_HOLE), 0);
	/* Preallocated pages stay holes until written, though st_blocks counts them. */
	T_OK(fallocate(fd, 0, 7 * p, p));
	T_CALL(data_expect_size(fd, 10 * p, 24));
	T_ERRNO(ENXIO, lseek(fd, 6 * p, SEEK_DATA));
	T_EQ(lseek(fd, 7 * p, SEEK_HOLE), 7 * p);
	T_EQ(pwrite(fd, "y", 1, 7 * p + 5), 1);
	T_EQ(lseek(fd, 6 * p, SEEK_DATA), 7 * p);
	T_EQ(lseek(fd, 7 * p, SEEK_HOLE), 8 * p);
	/* The file offset moves to the result. */
	T_EQ(lseek(fd, 3 * p, SEEK_DATA), 5 * p);
	T_EQ(lseek(fd, 0, SEEK_CUR), 5 * p);
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* Copies between two files: offsets, short copies at EOF, holes left before. */
static int data_copy_file_range(void)
{
	const off_t p = DATA_PAGE;
	unsigned char src_data[3 * DATA_PAGE], buf[3 * DATA_PAGE];
	uint64_t rng = DATA_SEED;
	loff_t in, out;
	int src, dst;

	data_rng_fill(&rng, src_data, sizeof(src_data));
	T_CALL(data_open_new("src", &src));
	T_EQ(pwrite(src, src_data, sizeof(src_data), 0), sizeof(src_data));
	T_CALL(data_open_new("dst", &dst));

	/* Whole file, explicit offsets: they advance, the file offsets do not. */
	in = 0;
	out = 0;
	T_EQ(copy_file_range(src, &in, dst, &out, 3 * p, 0), 3 * p);
	T_EQ(in, 3 * p);
	T_EQ(out, 3 * p);
	T_EQ(lseek(src, 0, SEEK_CUR), 0);
	T_EQ(lseek(dst, 0, SEEK_CUR), 0);
	T_CALL(data_expect_size(dst, 3 * p, 24));
	T_EQ(pread(dst, buf, sizeof(buf), 0), sizeof(buf));
	T_MEM(buf, src_data, sizeof(buf));

	/* Partial: the source ends first. */
	in = 2 * p + 100;
	out = 10 * p;
	T_EQ(copy_file_range(src, &in, dst, &out, 10000, 0), p - 100);
	T_EQ(in, 3 * p);
	T_CALL(data_expect_size(dst, 11 * p - 100, 32));
	T_EQ(pread(dst, buf, p - 100, 10 * p), p - 100);
	T_MEM(buf, src_data + 2 * p + 100, p - 100);
	T_CALL(data_expect_fill(dst, 3 * p, 7 * p, 0));

	/* At or past the end of the source: nothing. */
	in = 3 * p;
	T_EQ(copy_file_range(src, &in, dst, NULL, p, 0), 0);
	in = 100 * p;
	T_EQ(copy_file_range(src, &in, dst, NULL, p, 0), 0);
	T_EQ(copy_file_range(src, NULL, dst, NULL, 0, 0), 0);

	/* Without offsets the file offsets are used and advanced. */
	T_EQ(lseek(src, p, SEEK_SET), p);
	T_EQ(lseek(dst, 20 * p + 1, SEEK_SET), 20 * p + 1);
	T_EQ(copy_file_range(src, NULL, dst, NULL, 1000, 0), 1000);
	T_EQ(lseek(src, 0, SEEK_CUR), p + 1000);
	T_EQ(lseek(dst, 0, SEEK_CUR), 20 * p + 1001);
	T_EQ(pread(dst, buf, 1000, 20 * p + 1), 1000);
	T_MEM(buf, src_data + p, 1000);
	T_OK(close(src));
	T_OK(close(dst));
	return T_EXIT_PASS;
}

/* Within one file copies must not overlap; descriptors must fit the direction. */
static int data_copy_file_range_same(void)
{
	const off_t p = DATA_PAGE;
	unsigned char src_data[3 * DATA_PAGE], buf[3 * DATA_PAGE];
	uint64_t rng = DATA_SEED;
	loff_t in, out;
	int src, dst, ro, app;

	data_rng_fill(&rng, src_data, sizeof(src_data));
	T_CALL(data_open_new("src", &src));
	T_EQ(pwrite(src, src_data, sizeof(src_data), 0), sizeof(src_data));
	T_CALL(data_open_new("dst", &dst));
	in = 0;
	out = 4 * p + 3;
	T_EQ(copy_file_range(src, &in, src, &out, 2 * p, 0), 2 * p);
	T_CALL(data_expect_size(src, 6 * p + 3, 48));
	T_EQ(pread(src, buf, 2 * p, 4 * p + 3), 2 * p);
	T_MEM(buf, src_data, 2 * p);
	T_CALL(data_expect_fill(src, 3 * p, p + 3, 0));
	in = 0;
	out = 100;
	T_ERRNO(EINVAL, copy_file_range(src, &in, src, &out, p, 0));

	/* Wrong descriptors and flags. */
	in = 0;
	T_ERRNO(EINVAL, copy_file_range(src, &in, dst, NULL, p, 1));
	T_OK(ro = open("dst", O_RDONLY | O_CLOEXEC));
	T_ERRNO(EBADF, copy_file_range(src, &in, ro, NULL, p, 0));
	T_OK(app = open("dst", O_WRONLY | O_APPEND | O_CLOEXEC));
	T_ERRNO(EBADF, copy_file_range(src, &in, app, NULL, p, 0));
	T_ERRNO(EBADF, copy_file_range(app, &in, dst, NULL, p, 0));
	T_OK(mkdir("d", 0755));
	T_OK(close(ro));
	T_OK(ro = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	T_ERRNO(EISDIR, copy_file_range(ro, &in, dst, NULL, p, 0));
	T_OK(close(ro));
	T_OK(close(app));
	T_OK(close(src));
	T_OK(close(dst));
	return T_EXIT_PASS;
}

/*
 * Files reach 2^63 - 1 bytes. I/O at an offset whose end would pass that is
 * EINVAL, not EFBIG; appends and fallocate past it are EFBIG.
 */
static int data_max_file_size(void)
{
	const off_t max = LLONG_MAX;
	unsigned char c = 0x77;
	int fd, app;

	T_CALL(data_open_new("f", &fd));
	T_EQ(pwrite(fd, &c, 1, max - 1), 1);
	T_CALL(data_expect_size(fd, max, 8));
	c = 0;
	T_EQ(pread(fd, &c, 1, max - 1), 1);
	T_EQ(c, 0x77);
	T_EQ(pread(fd, &c, 0, max), 0);
	T_ERRNO(EINVAL, pread(fd, &c, 1, max));
	T_EQ(pwrite(fd, &c, 0, max), 0);
	T_ERRNO(EINVAL, pwrite(fd, &c, 1, max));
	T_ERRNO(EINVAL, pwrite(fd, "ab", 2, max - 1));
	T_EQ(lseek(fd, max, SEEK_SET), max);
	T_ERRNO(EINVAL, write(fd, &c, 1));
	/* An append finds its offset only after that check, and gets EFBIG. */
	T_OK(app = open("f", O_WRONLY | O_APPEND | O_CLOEXEC));
	T_ERRNO(EFBIG, write(app, &c, 1));
	T_OK(close(app));
	T_ERRNO(EFBIG, fallocate(fd, 0, max - 1, 2));
	T_ERRNO(EFBIG, fallocate(fd, FALLOC_FL_KEEP_SIZE, max, 1));
	T_CALL(data_expect_size(fd, max, 8));
	T_OK(ftruncate(fd, 0));
	T_OK(ftruncate(fd, max));
	T_CALL(data_expect_size(fd, max, 0));
	T_OK(ftruncate(fd, 0));
	T_CALL(data_expect_size(fd, 0, 0));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_mmap_shared(void)
{
	char buf[16], *map, *map2;
	pid_t pid;
	int fd, fd2, status;

	T_CALL(data_open_new("f", &fd));
	T_OK(ftruncate(fd, 2 * DATA_PAGE));
	map = mmap(NULL, 2 * DATA_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_TRUE(map != MAP_FAILED);
	T_EQ(map[100], 0);
	/* Stores are visible to read() at once, and write() to loads. */
	memcpy(map + 10, "mapped", 6);
	T_EQ(pread(fd, buf, 6, 10), 6);
	T_MEM(buf, "mapped", 6);
	T_EQ(pwrite(fd, "written", 7, DATA_PAGE + 5), 7);
	T_MEM(map + DATA_PAGE + 5, "written", 7);
	T_OK(msync(map, 2 * DATA_PAGE, MS_SYNC));
	T_OK(msync(map, DATA_PAGE, MS_ASYNC));
	T_OK(msync(map, 2 * DATA_PAGE, MS_INVALIDATE));
	T_CALL(data_expect_size(fd, 2 * DATA_PAGE, 16));
	/* A second mapping through another descriptor shares the pages. */
	T_OK(fd2 = open("f", O_RDWR | O_CLOEXEC));
	map2 = mmap(NULL, DATA_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0);
	T_TRUE(map2 != MAP_FAILED);
	T_MEM(map2 + 10, "mapped", 6);
	map2[0] = 'Z';
	T_EQ(map[0], 'Z');
	T_OK(munmap(map2, DATA_PAGE));
	T_OK(close(fd2));
	T_OK(munmap(map, 2 * DATA_PAGE));
	T_EQ(pread(fd, buf, 6, 10), 6);
	T_MEM(buf, "mapped", 6);
	/* A page entirely beyond EOF raises SIGBUS. */
	map = mmap(NULL, 3 * DATA_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_TRUE(map != MAP_FAILED);
	fflush(stdout);
	pid = fork();
	T_OK(pid);
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL); /* sanitizers catch it otherwise */
		map[2 * DATA_PAGE] = 1;
		_exit(0);
	}
	T_OK(waitpid(pid, &status, 0));
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGBUS)
		T_FAIL("store past EOF: expected SIGBUS, got %s %d",
		       WIFSIGNALED(status) ? "signal" : "exit",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	/* Extending the file makes that page usable. */
	T_OK(ftruncate(fd, 3 * DATA_PAGE));
	map[2 * DATA_PAGE] = 'e';
	T_EQ(pread(fd, buf, 1, 2 * DATA_PAGE), 1);
	T_EQ(buf[0], 'e');
	T_OK(munmap(map, 3 * DATA_PAGE));
	T_CALL(data_expect_size(fd, 3 * DATA_PAGE, 24));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_mmap_private(void)
{
	char buf[16], *priv, *shared;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_EQ(pwrite(fd, "original", 8, 0), 8);
	priv = mmap(NULL, DATA_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	T_TRUE(priv != MAP_FAILED);
	shared = mmap(NULL, DATA_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	T_TRUE(shared != MAP_FAILED);
	T_MEM(priv, "original", 8);
	memcpy(priv, "changed!", 8);
	T_MEM(priv, "changed!", 8);
	T_OK(msync(priv, DATA_PAGE, MS_SYNC));
	T_EQ(pread(fd, buf, 8, 0), 8);
	T_MEM(buf, "original", 8);
	T_MEM(shared, "original", 8);
	/* Once copied, the private page no longer follows the file. */
	T_EQ(pwrite(fd, "rewrite!", 8, 0), 8);
	T_MEM(priv, "changed!", 8);
	T_MEM(shared, "rewrite!", 8);
	T_OK(munmap(priv, DATA_PAGE));
	T_OK(munmap(shared, DATA_PAGE));
	T_CALL(data_expect_size(fd, 8, 8));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* flock() locks belong to the open file description. */
static int data_flock(void)
{
	int fd, other;
	pid_t pid;

	T_CALL(data_open_new("f", &fd));
	T_OK(flock(fd, LOCK_EX));
	pid = harness_fork();
	if (pid == 0) {
		int own;

		T_OK(own = open("f", O_RDWR | O_CLOEXEC));
		T_ERRNO(EWOULDBLOCK, flock(own, LOCK_EX | LOCK_NB));
		T_ERRNO(EWOULDBLOCK, flock(own, LOCK_SH | LOCK_NB));
		/* The inherited descriptor shares the parent's lock. */
		T_OK(flock(fd, LOCK_EX | LOCK_NB));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	/* The same process is refused too, through a second open. */
	T_OK(other = open("f", O_RDWR | O_CLOEXEC));
	T_ERRNO(EWOULDBLOCK, flock(other, LOCK_SH | LOCK_NB));
	T_OK(flock(fd, LOCK_SH));
	T_OK(flock(other, LOCK_SH | LOCK_NB));
	pid = harness_fork();
	if (pid == 0) {
		int own;

		T_OK(own = open("f", O_RDWR | O_CLOEXEC));
		T_OK(flock(own, LOCK_SH | LOCK_NB));
		T_ERRNO(EWOULDBLOCK, flock(own, LOCK_EX | LOCK_NB));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(flock(fd, LOCK_UN));
	T_OK(close(other));
	pid = harness_fork();
	if (pid == 0) {
		int own;

		T_OK(own = open("f", O_RDWR | O_CLOEXEC));
		T_OK(flock(own, LOCK_EX | LOCK_NB));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(close(fd));
	return T_EXIT_PASS;
}

static int data_setlk(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl);
}

/* POSIX record locks belong to the process; F_GETLK names the holder. */
static int data_posix_locks(void)
{
	pid_t parent = getpid(), pid;
	struct flock fl;
	int fd;

	T_CALL(data_open_new("f", &fd));
	T_OK(data_setlk(fd, F_SETLK, F_WRLCK, 0, 100));
	/* The caller's own locks never conflict with it. */
	fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	T_OK(fcntl(fd, F_GETLK, &fl));
	T_EQ(fl.l_type, F_UNLCK);
	pid = harness_fork();
	if (pid == 0) {
		int own;

		T_OK(own = open("f", O_RDWR | O_CLOEXEC));
		T_ERRNO(EAGAIN, data_setlk(own, F_SETLK, F_WRLCK, 50, 10));
		T_ERRNO(EAGAIN, data_setlk(own, F_SETLK, F_RDLCK, 0, 1));
		T_ERRNO(EAGAIN, data_setlk(own, F_SETLK, F_WRLCK, 99, 0));
		T_OK(data_setlk(own, F_SETLK, F_WRLCK, 100, 100));
		fl = (struct flock){
			.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 5, .l_len = 10
		};
		T_OK(fcntl(own, F_GETLK, &fl));
		T_EQ(fl.l_type, F_WRLCK);
		T_EQ(fl.l_pid, parent);
		T_EQ(fl.l_whence, SEEK_SET);
		T_EQ(fl.l_start, 0);
		T_EQ(fl.l_len, 100);
		fl = (struct flock){
			.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 300, .l_len = 10
		};
		T_OK(fcntl(own, F_GETLK, &fl));
		T_EQ(fl.l_type, F_UNLCK);
		/* Inherited descriptors do not carry POSIX locks. */
		T_ERRNO(EAGAIN, data_setlk(fd, F_SETLK, F_WRLCK, 0, 1));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);

	/* Downgraded to a read lock: readers share, writers wait. */
	T_OK(data_setlk(fd, F_SETLK, F_RDLCK, 0, 100));
	pid = harness_fork();
	if (pid == 0) {
		int own;

		T_OK(own = open("f", O_RDWR | O_CLOEXEC));
		T_OK(data_setlk(own, F_SETLK, F_RDLCK, 0, 100));
		T_ERRNO(EAGAIN, data_setlk(own, F_SETLK, F_WRLCK, 0, 1));
		fl = (struct flock){
			.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0
		};
		T_OK(fcntl(own, F_GETLK, &fl));
		T_EQ(fl.l_type, F_RDLCK);
		T_EQ(fl.l_pid, parent);
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* Closing any descriptor of a file drops all the process's POSIX locks on it. */
static int data_posix_locks_close(void)
{
	pid_t pid;
	int fd, other;

	T_CALL(data_open_new("f", &fd));
	T_OK(data_setlk(fd, F_SETLK, F_WRLCK, 0, 0));
	pid = harness_fork();
	if (pid == 0) {
		int own;

		T_OK(own = open("f", O_RDWR | O_CLOEXEC));
		T_ERRNO(EAGAIN, data_setlk(own, F_SETLK, F_WRLCK, 0, 0));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(other = open("f", O_RDONLY | O_CLOEXEC));
	T_OK(close(other));
	pid = harness_fork();
	if (pid == 0) {
		int own;

		T_OK(own = open("f", O_RDWR | O_CLOEXEC));
		T_OK(data_setlk(own, F_SETLK, F_WRLCK, 0, 0));
		return T_EXIT_PASS;
	}
	T_WAIT(pid);
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* Open file description locks conflict between descriptions of one process. */
static int data_ofd_locks(void)
{
	struct flock fl;
	int fd, other;

	T_CALL(data_open_new("f", &fd));
	T_OK(other = open("f", O_RDWR | O_CLOEXEC));
	T_OK(data_setlk(fd, F_OFD_SETLK, F_WRLCK, 0, 10));
	T_ERRNO(EAGAIN, data_setlk(other, F_OFD_SETLK, F_WRLCK, 5, 10));
	fl = (struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	T_OK(fcntl(other, F_OFD_GETLK, &fl));
	T_EQ(fl.l_type, F_WRLCK);
	T_EQ(fl.l_pid, -1);
	T_OK(close(other));
	T_OK(close(fd));
	return T_EXIT_PASS;
}

/* Fills @buf with segments of random, zero, same-filled and repetitive data. */
static void data_pattern_fill(uint64_t *rng, unsigned char *buf, size_t len)
{
	static const char motif[] = "tierfs pattern 0123456789abcdef ";
	size_t off = 0;

	while (off < len) {
		size_t seg = 1 + data_rng_next(rng) % DATA_BIG_MAX_SEGMENT;
		unsigned kind = data_rng_next(rng) % 4;
		size_t i;

		if (seg > len - off)
			seg = len - off;
		switch (kind) {
		case 0:
			data_rng_fill(rng, buf + off, seg);
			break;
		case 1:
			memset(buf + off, 0, seg);
			break;
		case 2:
			memset(buf + off, (int)(data_rng_next(rng) & 0xff), seg);
			break;
		default:
			for (i = 0; i < seg; i++)
				buf[off + i] = motif[(off + i) % (sizeof(motif) - 1)];
			break;
		}
		off += seg;
	}
}

/* 64 MiB written in uneven pieces, partly rewritten, then read back byte-exact. */
static int data_pattern_64m(void)
{
	unsigned char *expected, *got;
	uint64_t rng = DATA_SEED;
	size_t off, i;
	int fd;

	expected = malloc(DATA_BIG_SIZE);
	got = malloc(DATA_BIG_SIZE);
	T_TRUE(expected && got);
	data_pattern_fill(&rng, expected, DATA_BIG_SIZE);
	T_CALL(data_open_new("big", &fd));
	for (off = 0; off < DATA_BIG_SIZE;) {
		size_t len = 1 + data_rng_next(&rng) % (3 * DATA_BIG_MAX_SEGMENT);

		if (len > DATA_BIG_SIZE - off)
			len = DATA_BIG_SIZE - off;
		T_EQ(write(fd, expected + off, len), len);
		off += len;
	}
	T_CALL(data_expect_size(fd, DATA_BIG_SIZE, DATA_BIG_SIZE / 512));
	/* Rewrites at random offsets and lengths. */
	for (i = 0; i < 256; i++) {
		size_t len = 1 + data_rng_next(&rng) % (64 << 10);
		size_t at = data_rng_next(&rng) % (DATA_BIG_SIZE - len);

		data_pattern_fill(&rng, expected + at, len);
		T_EQ(pwrite(fd, expected + at, len, at), len);
	}
	T_CALL(data_expect_size(fd, DATA_BIG_SIZE, DATA_BIG_SIZE / 512));
	T_OK(close(fd));
	/* Read back through a new descriptor, in 1 MiB pieces then unaligned ones. */
	T_OK(fd = open("big", O_RDONLY | O_CLOEXEC));
	for (off = 0; off < DATA_BIG_SIZE; off += 1 << 20)
		T_EQ(read(fd, got + off, 1 << 20), 1 << 20);
	T_EQ(read(fd, got, 1), 0);
	for (off = 0; off < DATA_BIG_SIZE; off += 1 << 20)
		if (memcmp(got + off, expected + off, 1 << 20) != 0)
			for (i = off; i < off + (1 << 20); i++)
				if (got[i] != expected[i])
					T_FAIL("byte %zu of 64 MiB: expected 0x%02x, got 0x%02x", i,
					       expected[i], got[i]);
	for (i = 0; i < 64; i++) {
		size_t len = 1 + data_rng_next(&rng) % (1 << 20);
		size_t at = data_rng_next(&rng) % (DATA_BIG_SIZE - len);

		T_EQ(pread(fd, got, len, at), len);
		if (memcmp(got, expected + at, len) != 0)
			T_FAIL("pread(%zu at %zu): expected the written bytes, got others", len,
			       at);
	}
	T_OK(close(fd));
	T_OK(unlink("big"));
	free(expected);
	free(got);
	return T_EXIT_PASS;
}

/* statfs counts pages as files take and release them. */
static int data_statfs_accounting(void)
{
	struct statvfs before, during, after;
	int fd;

	T_OK(statvfs(".", &before));
	T_EQ(before.f_bsize, DATA_PAGE);
	T_EQ(before.f_namemax, NAME_MAX);
	T_CALL(data_open_new("f", &fd));
	T_CALL(data_write_fill(fd, 0, 256 * DATA_PAGE, 3));
	T_OK(fsync(fd));
	T_OK(statvfs(".", &during));
	T_EQ(before.f_bfree - during.f_bfree, 256);
	T_EQ(before.f_bavail - during.f_bavail, 256);
	T_OK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 128 * DATA_PAGE));
	T_OK(statvfs(".", &during));
	T_EQ(before.f_bfree - during.f_bfree, 128);
	/* An unlinked file keeps its pages until the last close. */
	T_OK(unlink("f"));
	T_OK(statvfs(".", &during));
	T_EQ(before.f_bfree - during.f_bfree, 128);
	T_OK(close(fd));
	/* FUSE sends the release after close(2) returns: allow it 5 s to land. */
	for (int i = 0; i < 100; i++) {
		T_OK(statvfs(".", &after));
		if (after.f_bfree == before.f_bfree)
			break;
		usleep(50 * 1000);
	}
	T_EQ(after.f_bfree, before.f_bfree);
	T_EQ(after.f_blocks, before.f_blocks);
	return T_EXIT_PASS;
}

/*
 * Asynchronous O_DIRECT writes (io_submit, several in flight) over pages
 * the page cache holds: a buffered read after their completion sees them.
 */
static int data_odirect_aio(void)
{
	enum { NR = 4 };
	struct iocb cbs[NR], *cbp[NR];
	struct io_event ev[NR];
	aio_context_t ctx = 0;
	unsigned char *buf;
	int fd, direct, got = 0;

	buf = aligned_alloc(DATA_PAGE, NR * DATA_PAGE);
	T_TRUE(buf);
	memset(buf, 0x55, NR * DATA_PAGE);
	T_OK(fd = open("f", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
	T_EQ(pwrite(fd, buf, NR * DATA_PAGE, 0), NR * DATA_PAGE);
	T_CALL(data_expect_fill(fd, 0, NR * DATA_PAGE, 0x55));
	T_OK(direct = open("f", O_RDWR | O_DIRECT | O_CLOEXEC));
	memset(buf, 0xaa, NR * DATA_PAGE);
	T_OK(syscall(SYS_io_setup, NR, &ctx));
	for (int i = 0; i < NR; i++) {
		memset(&cbs[i], 0, sizeof(cbs[i]));
		cbs[i].aio_fildes = (uint32_t)direct;
		cbs[i].aio_lio_opcode = IOCB_CMD_PWRITE;
		cbs[i].aio_buf = (uint64_t)(uintptr_t)(buf + i * DATA_PAGE);
		cbs[i].aio_nbytes = DATA_PAGE;
		cbs[i].aio_offset = i * DATA_PAGE;
		cbp[i] = &cbs[i];
	}
	T_EQ(syscall(SYS_io_submit, ctx, NR, cbp), NR);
	while (got < NR) {
		long n = syscall(SYS_io_getevents, ctx, 1, NR - got, ev + got, NULL);

		T_OK(n);
		got += (int)n;
	}
	for (int i = 0; i < NR; i++)
		T_EQ(ev[i].res, DATA_PAGE);
	T_OK(syscall(SYS_io_destroy, ctx));
	T_CALL(data_expect_fill(fd, 0, NR * DATA_PAGE, 0xaa));
	T_OK(close(direct));
	T_OK(close(fd));
	free(buf);
	return T_EXIT_PASS;
}

/* O_DIRECT opens work and move the same bytes as buffered I/O. */
static int data_odirect(void)
{
	unsigned char *buf;
	int fd, buffered;

	buf = aligned_alloc(DATA_PAGE, 2 * DATA_PAGE);
	T_TRUE(buf);
	memset(buf, 0x3c, 2 * DATA_PAGE);
	T_OK(fd = open("f", O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0644));
	T_EQ(pwrite(fd, buf, 2 * DATA_PAGE, DATA_PAGE), 2 * DATA_PAGE);
	T_OK(buffered = open("f", O_RDONLY | O_CLOEXEC));
	T_CALL(data_expect_fill(buffered, DATA_PAGE, 2 * DATA_PAGE, 0x3c));
	T_CALL(data_expect_fill(buffered, 0, DATA_PAGE, 0));
	T_OK(close(buffered));
	memset(buf, 0, 2 * DATA_PAGE);
	T_EQ(pread(fd, buf, 2 * DATA_PAGE, 2 * DATA_PAGE), DATA_PAGE);
	T_EQ(buf[0], 0x3c);
	T_EQ(buf[DATA_PAGE - 1], 0x3c);
	T_CALL(data_expect_size(fd, 3 * DATA_PAGE, 16));
	T_OK(close(fd));
	free(buf);
	return T_EXIT_PASS;
}

static const struct harness_check data_checks[] = {
	HARNESS_CHECK(data_sparse_1tib),
	HARNESS_CHECK(data_read_write),
	HARNESS_CHECK(data_large_io),
	HARNESS_CHECK(data_truncate),
	HARNESS_CHECK(data_append),
	HARNESS_CHECK(data_open_trunc),
	HARNESS_CHECK(data_fallocate),
	HARNESS_CHECK(data_punch_hole),
	HARNESS_CHECK(data_fallocate_zero_range),
	HARNESS_CHECK(data_fallocate_unsupported),
	HARNESS_CHECK(data_seek_hole_data),
	HARNESS_CHECK(data_copy_file_range),
	HARNESS_CHECK(data_copy_file_range_same),
	HARNESS_CHECK(data_max_file_size),
	HARNESS_CHECK(data_mmap_shared),
	HARNESS_CHECK(data_mmap_private),
	HARNESS_CHECK(data_flock),
	HARNESS_CHECK(data_posix_locks),
	HARNESS_CHECK(data_posix_locks_close),
	HARNESS_CHECK(data_ofd_locks),
	HARNESS_CHECK(data_pattern_64m),
	HARNESS_CHECK(data_statfs_accounting),
	HARNESS_CHECK(data_odirect),
	HARNESS_CHECK(data_odirect_aio),
};

int main(int argc, char **argv)
{
	return harness_main(argc, argv, data_checks, sizeof(data_checks) / sizeof(data_checks[0]));
}
