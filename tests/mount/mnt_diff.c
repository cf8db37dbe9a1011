// SPDX-License-Identifier: MIT
/*
 * Differential test: applies one seeded pseudo-random sequence of file system
 * operations to DIR_A (a tierfs mount) and DIR_B (a kernel tmpfs), compares
 * every result and errno as it goes and the whole trees every few hundred
 * operations. tmpfs (DIR_B) is what is expected, DIR_A is what we got.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

#define NR_PREFIXES 5
#define NR_LEAVES 8
#define NR_PATHS (NR_PREFIXES * NR_LEAVES)
#define NR_DIR_PATHS 4
#define NR_STEPS 6
#define MAX_IO (256 * 1024)
#define MAX_EXTENT (8 << 20)
#define MAX_XATTR_VALUE 128
#define XATTR_LIST_SIZE 4096
#define COMPARE_CHUNK (1 << 20)
#define MAX_TREE_REPORTS 20
#define DEFAULT_SEED 1
#define DEFAULT_NR_OPS 3000
#define DEFAULT_CHECK_EVERY 200

/*
 * Five directories times eight leaf names: the leaves a..d double as the
 * directory names, so creating, renaming and removing directories moves whole
 * subtrees under the other paths and collisions are frequent.
 */
static const char *const prefixes[NR_PREFIXES] = { "", "a/", "b/", "a/c/", "b/d/" };
static const char *const leaves[NR_LEAVES] = { "a", "b", "c", "d", "w", "x", "y", "z" };
static const char *const dir_paths[NR_DIR_PATHS] = { "a", "b", "a/c", "b/d" };

/* Relative, without "..": whatever a symlink resolves to stays inside the tree. */
static const char *const link_targets[] = { "a", "b", "x", "y", "a/x", "c/y", "missing", "a/c" };
#define NR_LINK_TARGETS (sizeof(link_targets) / sizeof(link_targets[0]))

static const char *const xattr_names[] = { "user.k0", "user.k1", "user.k2",
					   "user.a.longer.name.for.k3" };
#define NR_XATTR_NAMES (sizeof(xattr_names) / sizeof(xattr_names[0]))

static char path_pool[NR_PATHS][16];

enum op_kind {
	OP_WRITE,
	OP_OVERWRITE,
	OP_APPEND,
	OP_TRUNCATE,
	OP_FALLOCATE,
	OP_RENAME,
	OP_LINK,
	OP_UNLINK,
	OP_MKDIR,
	OP_RMDIR,
	OP_SYMLINK,
	OP_CHMOD,
	OP_MMAP,
	OP_SETXATTR,
	OP_REMOVEXATTR,
	OP_READ,
	OP_SEEK,
	OP_STAT,
	NR_OP_KINDS
};

struct op_kind_info {
	const char *name;
	unsigned int weight;
	bool is_xattr;
};

static const struct op_kind_info op_kinds[NR_OP_KINDS] = {
	[OP_WRITE] = { "write", 14, false },
	[OP_OVERWRITE] = { "overwrite", 6, false },
	[OP_APPEND] = { "append", 5, false },
	[OP_TRUNCATE] = { "truncate", 6, false },
	[OP_FALLOCATE] = { "fallocate", 7, false },
	[OP_RENAME] = { "rename", 8, false },
	[OP_LINK] = { "link", 6, false },
	[OP_UNLINK] = { "unlink", 6, false },
	[OP_MKDIR] = { "mkdir", 7, false },
	[OP_RMDIR] = { "rmdir", 3, false },
	[OP_SYMLINK] = { "symlink", 3, false },
	[OP_CHMOD] = { "chmod", 3, false },
	[OP_MMAP] = { "mmap", 5, false },
	[OP_SETXATTR] = { "setxattr", 5, true },
	[OP_REMOVEXATTR] = { "removexattr", 2, true },
	[OP_READ] = { "read", 9, false },
	[OP_SEEK] = { "seek", 3, false },
	[OP_STAT] = { "stat", 3, false },
};

enum data_kind { DATA_ZERO, DATA_BYTE, DATA_RANDOM, DATA_MIXED, DATA_TEXT, NR_DATA_KINDS };

static const char *const data_kind_names[NR_DATA_KINDS] = { "zeros", "byte", "random", "mixed",
							    "text" };

/* One operation, drawn once and then run on both sides. */
struct op {
	enum op_kind kind;
	const char *path;
	const char *path2;  /* rename/link destination */
	const char *target; /* symlink target */
	const char *xattr_name;
	int flags;   /* open, renameat2, linkat, fstatat or xattr flags */
	int mode;    /* fallocate mode, or lseek whence */
	mode_t perm; /* create, mkdir and chmod permission bits */
	off_t off;
	size_t len;
	uint64_t pick_off; /* offsets chosen relative to the file size once it is known */
	uint64_t pick_len;
	bool use_pwrite; /* O_APPEND: pwrite at 0 instead of write */
	bool use_msync;
	bool nofollow; /* l*xattr instead of *xattr */
	enum data_kind data;
};

/* What running one op on one side gave: each step's result or -errno, and data read back. */
struct outcome {
	int nr_steps;
	const char *step_name[NR_STEPS];
	long step[NR_STEPS];
	const unsigned char *data;
	size_t data_len;
};

struct side {
	char root[PATH_MAX - 64]; /* working directory of this side */
	int dirfd;
	unsigned char *readbuf;
	unsigned char *chunk; /* tree compare buffer */
};

struct rng {
	uint64_t state;
};

static unsigned char *wbuf;
static size_t page_size;
static bool verbose;
static unsigned int nr_tree_reports;

static sigjmp_buf mmap_fault_jmp;
static volatile sig_atomic_t in_mmap_copy;

static uint64_t rng_next(struct rng *r)
{
	r->state ^= r->state >> 12;
	r->state ^= r->state << 25;
	r->state ^= r->state >> 27;
	return r->state * 0x2545F4914F6CDD1DULL;
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

static bool rng_one_in(struct rng *r, uint64_t n)
{
	return rng_below(r, n) == 0;
}

static void rng_init(struct rng *r, uint64_t seed)
{
	/* xorshift must not start at 0; spread small seeds over all bits. */
	r->state = (seed + 1) * 0x9E3779B97F4A7C15ULL;
	if (!r->state)
		r->state = 1;
	for (int i = 0; i < 4; i++)
		rng_next(r);
}

static const char *pick_path(struct rng *r)
{
	return path_pool[rng_below(r, NR_PATHS)];
}

static const char *pick_file_path(struct rng *r)
{
	/* Mostly the leaves no directory is named after, so data operations mostly reach a file. */
	unsigned int leaf = rng_below(r, NR_LEAVES);

	if (!rng_one_in(r, 4))
		leaf = NR_LEAVES / 2 + leaf % (NR_LEAVES / 2);
	return path_pool[rng_below(r, NR_PREFIXES) * NR_LEAVES + leaf];
}

static const char *pick_dir_path(struct rng *r)
{
	/* Half the time one of the directories the other paths live in. */
	if (rng_one_in(r, 2))
		return dir_paths[rng_below(r, NR_DIR_PATHS)];
	return pick_path(r);
}

static off_t pick_offset(struct rng *r)
{
	uint64_t roll = rng_below(r, 100);
	off_t limit;
	off_t off;

	if (roll < 50)
		limit = 256 * 1024;
	else if (roll < 80)
		limit = 1 << 20;
	else if (roll < 95)
		limit = 4 << 20;
	else
		limit = MAX_EXTENT;
	off = rng_below(r, limit);
	if (rng_one_in(r, 4))
		off &= ~(off_t)(page_size - 1);
	return off;
}

static size_t pick_len(struct rng *r, size_t max)
{
	size_t len;

	if (rng_one_in(r, 32))
		return 0;
	len = 1 + rng_below(r, (uint64_t)1 << rng_below(r, 19));
	if (rng_one_in(r, 4))
		len = (len + page_size - 1) & ~(page_size - 1);
	return len > max ? max : len;
}

static mode_t pick_perm(struct rng *r)
{
	static const mode_t common[] = { 0644, 0600, 0755, 0700, 0444, 0777 };

	if (rng_one_in(r, 4))
		return rng_below(r, 010000);
	return common[rng_below(r, sizeof(common) / sizeof(common[0]))];
}

static void fill_data(struct rng *r, enum data_kind kind, size_t len)
{
	unsigned char byte = rng_next(r);
	size_t i;

	switch (kind) {
	case DATA_ZERO:
		memset(wbuf, 0, len);
		break;
	case DATA_BYTE:
		memset(wbuf, byte, len);
		break;
	case DATA_RANDOM:
		for (i = 0; i < len; i += 8) {
			uint64_t v = rng_next(r);

			memcpy(wbuf + i, &v, len - i < 8 ? len - i : 8);
		}
		break;
	case DATA_MIXED:
		/* Page by page: zeros, a repeated byte or noise. */
		for (i = 0; i < len; i += page_size) {
			size_t n = len - i < page_size ? len - i : page_size;
			uint64_t which = rng_below(r, 3);

			if (which == 0) {
				memset(wbuf + i, 0, n);
			} else if (which == 1) {
				memset(wbuf + i, byte, n);
			} else {
				for (size_t j = 0; j < n; j += 8) {
					uint64_t v = rng_next(r);

					memcpy(wbuf + i + j, &v, n - j < 8 ? n - j : 8);
				}
			}
		}
		break;
	case DATA_TEXT:
		for (i = 0; i < len; i++)
			wbuf[i] = "etaoin shrdlu\n"[rng_below(r, 14)];
		break;
	default:
		break;
	}
}

static void gen_op(struct rng *r, struct op *op, const unsigned int *weights,
		   unsigned int total_weight)
{
	/* ZERO_RANGE is left out: tierfs has it, tmpfs refuses it. */
	static const int fallocate_modes[] = {
		0,
		FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE,
	};
	unsigned int roll = rng_below(r, total_weight);
	int kind;

	memset(op, 0, sizeof(*op));
	for (kind = 0; kind < NR_OP_KINDS - 1; kind++) {
		if (roll < weights[kind])
			break;
		roll -= weights[kind];
	}
	op->kind = kind;
	op->path = pick_file_path(r);

	switch (op->kind) {
	case OP_WRITE:
		op->flags = O_WRONLY | O_CREAT;
		if (rng_one_in(r, 8))
			op->flags |= O_TRUNC;
		if (rng_one_in(r, 8))
			op->flags |= O_EXCL;
		if (rng_one_in(r, 16))
			op->flags |= O_NOFOLLOW;
		op->perm = pick_perm(r);
		op->off = pick_offset(r);
		op->len = pick_len(r, MAX_IO);
		op->data = rng_below(r, NR_DATA_KINDS);
		fill_data(r, op->data, op->len);
		break;
	case OP_OVERWRITE:
	case OP_MMAP:
		op->pick_off = rng_next(r);
		op->pick_len = rng_next(r);
		op->use_msync = rng_one_in(r, 2);
		op->data = rng_below(r, NR_DATA_KINDS);
		fill_data(r, op->data, MAX_IO);
		break;
	case OP_APPEND:
		op->flags = O_WRONLY | O_APPEND;
		if (rng_one_in(r, 2))
			op->flags |= O_CREAT;
		op->perm = pick_perm(r);
		op->use_pwrite = rng_one_in(r, 4);
		op->len = pick_len(r, MAX_IO);
		op->data = rng_below(r, NR_DATA_KINDS);
		fill_data(r, op->data, op->len);
		break;
	case OP_TRUNCATE:
		switch (rng_below(r, 4)) {
		case 0:
			op->off = 0;
			break;
		case 1:
			op->off = rng_below(r, 64 * 1024);
			break;
		default:
			op->off = pick_offset(r);
			break;
		}
		break;
	case OP_FALLOCATE:
		op->mode = fallocate_modes[rng_below(r, sizeof(fallocate_modes) /
								sizeof(fallocate_modes[0]))];
		op->off = pick_offset(r);
		op->len = pick_len(r, 1 << 20);
		if (rng_one_in(r, 4))
			op->len *= 4;
		break;
	case OP_RENAME:
		op->path = pick_path(r);
		op->path2 = rng_one_in(r, 16) ? op->path : pick_path(r);
		switch (rng_below(r, 4)) {
		case 0:
			op->flags = RENAME_NOREPLACE;
			break;
		case 1:
			op->flags = RENAME_EXCHANGE;
			break;
		default:
			op->flags = 0;
			break;
		}
		break;
	case OP_LINK:
		op->path2 = rng_one_in(r, 16) ? op->path : pick_path(r);
		op->flags = rng_one_in(r, 4) ? AT_SYMLINK_FOLLOW : 0;
		break;
	case OP_MKDIR:
		op->path = pick_dir_path(r);
		op->perm = rng_one_in(r, 8) ? pick_perm(r) : 0755;
		if (rng_one_in(r, 16))
			op->perm |= S_ISGID;
		break;
	case OP_UNLINK:
	case OP_RMDIR:
		/* Also removes files and symlinks that block the directory paths. */
		op->path = pick_dir_path(r);
		break;
	case OP_SYMLINK:
		op->path = pick_path(r);
		op->target = link_targets[rng_below(r, NR_LINK_TARGETS)];
		break;
	case OP_CHMOD:
		op->path = pick_path(r);
		op->perm = pick_perm(r);
		break;
	case OP_SETXATTR:
		op->path = pick_path(r);
		op->xattr_name = xattr_names[rng_below(r, NR_XATTR_NAMES)];
		op->len = rng_below(r, MAX_XATTR_VALUE + 1);
		op->data = DATA_RANDOM;
		fill_data(r, op->data, op->len);
		switch (rng_below(r, 4)) {
		case 0:
			op->flags = XATTR_CREATE;
			break;
		case 1:
			op->flags = XATTR_REPLACE;
			break;
		default:
			op->flags = 0;
			break;
		}
		op->nofollow = rng_one_in(r, 4);
		break;
	case OP_REMOVEXATTR:
		op->path = pick_path(r);
		op->xattr_name = xattr_names[rng_below(r, NR_XATTR_NAMES)];
		op->nofollow = rng_one_in(r, 4);
		break;
	case OP_READ:
		op->off = pick_offset(r);
		op->len = pick_len(r, MAX_IO);
		break;
	case OP_SEEK:
		op->mode = rng_one_in(r, 2) ? SEEK_DATA : SEEK_HOLE;
		op->off = pick_offset(r);
		break;
	case OP_STAT:
		op->path = pick_path(r);
		op->flags = rng_one_in(r, 2) ? AT_SYMLINK_NOFOLLOW : 0;
		break;
	default:
		break;
	}
}

static void describe_open_flags(int flags, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s", (flags & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDWR",
		 flags & O_CREAT ? "|O_CREAT" : "", flags & O_TRUNC ? "|O_TRUNC" : "",
		 flags & O_EXCL ? "|O_EXCL" : "", flags & O_NOFOLLOW ? "|O_NOFOLLOW" : "");
}

static const char *fallocate_mode_name(int mode)
{
	switch (mode) {
	case 0:
		return "0";
	case FALLOC_FL_KEEP_SIZE:
		return "KEEP_SIZE";
	case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE:
		return "PUNCH_HOLE|KEEP_SIZE";
	case FALLOC_FL_PUNCH_HOLE:
		return "PUNCH_HOLE";
	default:
		return "?";
	}
}

static void describe_op(const struct op *op, char *buf, size_t size)
{
	const char *name = op_kinds[op->kind].name;
	char flags[64];

	switch (op->kind) {
	case OP_WRITE:
	case OP_APPEND:
		describe_open_flags(op->flags, flags, sizeof(flags));
		snprintf(buf, size, "%s(%s, %s%s, 0%o, off %jd, len %zu, %s)", name, op->path,
			 flags, op->flags & O_APPEND ? "|O_APPEND" : "", (unsigned int)op->perm,
			 (intmax_t)op->off, op->len, data_kind_names[op->data]);
		if (op->kind == OP_APPEND)
			snprintf(buf + strlen(buf), size - strlen(buf), " via %s",
				 op->use_pwrite ? "pwrite at 0" : "write");
		break;
	case OP_OVERWRITE:
	case OP_MMAP:
		snprintf(buf, size, "%s(%s, range picked from %#" PRIx64 "/%#" PRIx64 ", %s%s)",
			 name, op->path, op->pick_off, op->pick_len, data_kind_names[op->data],
			 op->kind == OP_MMAP && op->use_msync ? ", msync" : "");
		break;
	case OP_TRUNCATE:
		snprintf(buf, size, "%s(%s, %jd)", name, op->path, (intmax_t)op->off);
		break;
	case OP_FALLOCATE:
		snprintf(buf, size, "%s(%s, %s, off %jd, len %zu)", name, op->path,
			 fallocate_mode_name(op->mode), (intmax_t)op->off, op->len);
		break;
	case OP_RENAME:
		snprintf(buf, size, "%s(%s -> %s, %s)", name, op->path, op->path2,
			 op->flags == RENAME_NOREPLACE ? "RENAME_NOREPLACE" :
			 op->flags == RENAME_EXCHANGE  ? "RENAME_EXCHANGE" :
							 "0");
		break;
	case OP_LINK:
		snprintf(buf, size, "%s(%s -> %s%s)", name, op->path, op->path2,
			 op->flags ? ", AT_SYMLINK_FOLLOW" : "");
		break;
	case OP_MKDIR:
	case OP_CHMOD:
		snprintf(buf, size, "%s(%s, 0%o)", name, op->path, (unsigned int)op->perm);
		break;
	case OP_SYMLINK:
		snprintf(buf, size, "%s(%s -> \"%s\")", name, op->path, op->target);
		break;
	case OP_SETXATTR:
		snprintf(buf, size, "%s%s(%s, %s, %zu bytes, %s)", op->nofollow ? "l" : "", name,
			 op->path, op->xattr_name, op->len,
			 op->flags == XATTR_CREATE  ? "XATTR_CREATE" :
			 op->flags == XATTR_REPLACE ? "XATTR_REPLACE" :
						      "0");
		break;
	case OP_REMOVEXATTR:
		snprintf(buf, size, "%s%s(%s, %s)", op->nofollow ? "l" : "", name, op->path,
			 op->xattr_name);
		break;
	case OP_READ:
		snprintf(buf, size, "%s(%s, off %jd, len %zu)", name, op->path, (intmax_t)op->off,
			 op->len);
		break;
	case OP_SEEK:
		snprintf(buf, size, "%s(%s, %jd, %s)", name, op->path, (intmax_t)op->off,
			 op->mode == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE");
		break;
	case OP_STAT:
		snprintf(buf, size, "%s(%s%s)", name, op->path, op->flags ? ", NOFOLLOW" : "");
		break;
	default:
		snprintf(buf, size, "%s(%s)", name, op->path);
		break;
	}
}

/* Records a step; a negative libc return becomes -errno, so call it right after the call. */
static long note(struct outcome *out, const char *what, long ret)
{
	if (ret < 0)
		ret = -errno;
	if (out->nr_steps < NR_STEPS) {
		out->step_name[out->nr_steps] = what;
		out->step[out->nr_steps] = ret;
		out->nr_steps++;
	}
	return ret;
}

/* Like note(), for calls whose success value (an fd, an address) differs between sides. */
static long note_ok(struct outcome *out, const char *what, long ret)
{
	if (ret < 0)
		return note(out, what, ret);
	note(out, what, 0);
	return ret;
}

static void full_path(const struct side *s, const char *rel, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", s->root, rel);
}

static void mmap_fault(int sig)
{
	if (in_mmap_copy)
		siglongjmp(mmap_fault_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void run_mmap(struct side *s, const struct op *op, struct outcome *out)
{
	size_t off, len, map_off, map_len;
	struct stat st;
	char *map;
	int fd;

	fd = note_ok(out, "open O_RDWR", openat(s->dirfd, op->path, O_RDWR));
	if (fd < 0)
		return;
	if (note(out, "fstat", fstat(fd, &st)) < 0)
		goto close_fd;
	note(out, "st_size", st.st_size);
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		goto close_fd;

	off = op->pick_off % st.st_size;
	len = st.st_size - off;
	if (len > MAX_IO)
		len = MAX_IO;
	len = 1 + op->pick_len % len;
	map_off = off & ~(page_size - 1);
	map_len = off + len - map_off;
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, map_off);
	if (map == MAP_FAILED) {
		note(out, "mmap", -1);
		goto close_fd;
	}
	note(out, "mmap", 0);

	in_mmap_copy = 1;
	if (sigsetjmp(mmap_fault_jmp, 1) == 0)
		memcpy(map + (off - map_off), wbuf, len);
	else
		note(out, "store SIGBUS", -EFAULT);
	in_mmap_copy = 0;

	if (op->use_msync)
		note(out, "msync", msync(map, map_len, MS_SYNC));
	if (note(out, "munmap", munmap(map, map_len)) < 0)
		goto close_fd;

	/* Read the stored range back through the fd: page cache and file must agree. */
	if (note(out, "pread back", pread(fd, s->readbuf, len, off)) >= 0) {
		out->data = s->readbuf;
		out->data_len = out->step[out->nr_steps - 1];
	}
close_fd:
	note(out, "close", close(fd));
}

static void run_overwrite(struct side *s, const struct op *op, struct outcome *out)
{
	struct stat st;
	size_t len;
	off_t off;
	int fd;

	fd = note_ok(out, "open O_RDWR", openat(s->dirfd, op->path, O_RDWR));
	if (fd < 0)
		return;
	if (note(out, "fstat", fstat(fd, &st)) < 0)
		goto close_fd;
	off = op->pick_off % ((uint64_t)st.st_size + 1);
	len = op->pick_len % (MAX_IO + 1);
	if (note(out, "lseek SET", lseek(fd, off, SEEK_SET)) < 0)
		goto close_fd;
	if (note(out, "write", write(fd, wbuf, len)) < 0)
		goto close_fd;
	note(out, "lseek CUR", lseek(fd, 0, SEEK_CUR));
close_fd:
	note(out, "close", close(fd));
}

static void run_op(struct side *s, const struct op *op, struct outcome *out)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	memset(out, 0, sizeof(*out));

	switch (op->kind) {
	case OP_WRITE:
		fd = note_ok(out, "open", openat(s->dirfd, op->path, op->flags, op->perm));
		if (fd < 0)
			break;
		note(out, "pwrite", pwrite(fd, wbuf, op->len, op->off));
		note(out, "close", close(fd));
		break;
	case OP_OVERWRITE:
		run_overwrite(s, op, out);
		break;
	case OP_APPEND:
		fd = note_ok(out, "open", openat(s->dirfd, op->path, op->flags, op->perm));
		if (fd < 0)
			break;
		if (op->use_pwrite)
			n = note(out, "pwrite", pwrite(fd, wbuf, op->len, 0));
		else
			n = note(out, "write", write(fd, wbuf, op->len));
		if (n >= 0)
			note(out, "lseek CUR", lseek(fd, 0, SEEK_CUR));
		note(out, "close", close(fd));
		break;
	case OP_TRUNCATE:
		full_path(s, op->path, path, sizeof(path));
		note(out, "truncate", truncate(path, op->off));
		break;
	case OP_FALLOCATE:
		fd = note_ok(out, "open", openat(s->dirfd, op->path, O_WRONLY));
		if (fd < 0)
			break;
		note(out, "fallocate", fallocate(fd, op->mode, op->off, op->len));
		note(out, "close", close(fd));
		break;
	case OP_RENAME:
		note(out, "renameat2",
		     syscall(SYS_renameat2, s->dirfd, op->path, s->dirfd, op->path2, op->flags));
		break;
	case OP_LINK:
		note(out, "linkat", linkat(s->dirfd, op->path, s->dirfd, op->path2, op->flags));
		break;
	case OP_UNLINK:
		note(out, "unlinkat", unlinkat(s->dirfd, op->path, 0));
		break;
	case OP_MKDIR:
		note(out, "mkdirat", mkdirat(s->dirfd, op->path, op->perm));
		break;
	case OP_RMDIR:
		note(out, "rmdir", unlinkat(s->dirfd, op->path, AT_REMOVEDIR));
		break;
	case OP_SYMLINK:
		note(out, "symlinkat", symlinkat(op->target, s->dirfd, op->path));
		break;
	case OP_CHMOD:
		note(out, "fchmodat", fchmodat(s->dirfd, op->path, op->perm, 0));
		break;
	case OP_MMAP:
		run_mmap(s, op, out);
		break;
	case OP_SETXATTR:
		full_path(s, op->path, path, sizeof(path));
		if (op->nofollow)
			n = note(out, "lsetxattr",
				 lsetxattr(path, op->xattr_name, wbuf, op->len, op->flags));
		else
			n = note(out, "setxattr",
				 setxattr(path, op->xattr_name, wbuf, op->len, op->flags));
		if (n < 0)
			break;
		n = note(out, "getxattr",
			 op->nofollow ? lgetxattr(path, op->xattr_name, s->readbuf, MAX_IO) :
					getxattr(path, op->xattr_name, s->readbuf, MAX_IO));
		if (n >= 0) {
			out->data = s->readbuf;
			out->data_len = n;
		}
		break;
	case OP_REMOVEXATTR:
		full_path(s, op->path, path, sizeof(path));
		if (op->nofollow)
			note(out, "lremovexattr", lremovexattr(path, op->xattr_name));
		else
			note(out, "removexattr", removexattr(path, op->xattr_name));
		break;
	case OP_READ:
		fd = note_ok(out, "open", openat(s->dirfd, op->path, O_RDONLY));
		if (fd < 0)
			break;
		n = note(out, "pread", pread(fd, s->readbuf, op->len, op->off));
		if (n >= 0) {
			out->data = s->readbuf;
			out->data_len = n;
		}
		note(out, "close", close(fd));
		break;
	case OP_SEEK: {
		struct stat st;

		fd = note_ok(out, "open", openat(s->dirfd, op->path, O_RDONLY));
		if (fd < 0)
			break;
		/*
		 * FUSE answers SEEK_DATA/SEEK_HOLE on a directory in the kernel,
		 * without asking the daemon, so only regular files are compared.
		 */
		if (note(out, "fstat", fstat(fd, &st)) >= 0 &&
		    note(out, "file type", st.st_mode & S_IFMT) == S_IFREG)
			note(out, "lseek", lseek(fd, op->off, op->mode));
		note(out, "close", close(fd));
		break;
	}
	case OP_STAT: {
		struct stat st;

		if (note(out, "fstatat", fstatat(s->dirfd, op->path, &st, op->flags)) < 0)
			break;
		note(out, "st_mode", st.st_mode);
		note(out, "st_size", st.st_size);
		note(out, "st_nlink", st.st_nlink);
		break;
	}
	default:
		break;
	}
}

static bool all_steps_ok(const struct outcome *out)
{
	for (int i = 0; i < out->nr_steps; i++)
		if (out->step[i] < 0)
			return false;
	return true;
}

static void format_result(long v, char *buf, size_t size)
{
	const char *name;

	if (v >= 0) {
		snprintf(buf, size, "%ld", v);
		return;
	}
	name = strerrorname_np(-v);
	snprintf(buf, size, "-%s (%s)", name ? name : "?", strerror(-v));
}

static void describe_step(const struct outcome *out, int i, char *buf, size_t size)
{
	char res[96];

	if (i >= out->nr_steps) {
		snprintf(buf, size, "no step %d", i);
		return;
	}
	format_result(out->step[i], res, sizeof(res));
	snprintf(buf, size, "%s %s", out->step_name[i], res);
}

/* Prints the first difference between the outcomes; returns true if they are equal. */
static bool outcomes_equal(unsigned long nr, const struct op *op, const struct outcome *got,
			   const struct outcome *want)
{
	char desc[256], got_buf[128], want_buf[128];
	int nr_steps = got->nr_steps > want->nr_steps ? got->nr_steps : want->nr_steps;

	describe_op(op, desc, sizeof(desc));
	for (int i = 0; i < nr_steps; i++) {
		if (i < got->nr_steps && i < want->nr_steps && got->step[i] == want->step[i] &&
		    !strcmp(got->step_name[i], want->step_name[i]))
			continue;
		describe_step(got, i, got_buf, sizeof(got_buf));
		describe_step(want, i, want_buf, sizeof(want_buf));
		printf("FAIL op %lu %s: step %d: expected %s, got %s\n", nr, desc, i, want_buf,
		       got_buf);
		return false;
	}
	if (got->data_len == want->data_len &&
	    (!got->data_len || !memcmp(got->data, want->data, got->data_len)))
		return true;
	if (got->data_len != want->data_len) {
		printf("FAIL op %lu %s: data length: expected %zu, got %zu\n", nr, desc,
		       want->data_len, got->data_len);
		return false;
	}
	for (size_t i = 0; i < got->data_len; i++) {
		if (got->data[i] != want->data[i]) {
			printf("FAIL op %lu %s: data byte %zu: expected 0x%02x, got 0x%02x\n", nr,
			       desc, i, want->data[i], got->data[i]);
			break;
		}
	}
	return false;
}

/* Prints one tree difference, up to MAX_TREE_REPORTS of them. */
static void tree_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void tree_report(const char *fmt, ...)
{
	va_list ap;

	nr_tree_reports++;
	if (nr_tree_reports > MAX_TREE_REPORTS) {
		if (nr_tree_reports == MAX_TREE_REPORTS + 1)
			printf("FAIL tree: more differences not shown\n");
		return;
	}
	printf("FAIL tree: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct name_list {
	char **names;
	size_t nr;
};

static void name_list_free(struct name_list *list)
{
	for (size_t i = 0; i < list->nr; i++)
		free(list->names[i]);
	free(list->names);
	list->names = NULL;
	list->nr = 0;
}

static int list_dir(const char *path, struct name_list *list)
{
	struct dirent *de;
	size_t cap = 0;
	DIR *dir;
	int ret;

	list->names = NULL;
	list->nr = 0;
	dir = opendir(path);
	if (!dir)
		return -errno;
	errno = 0;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (list->nr == cap) {
			char **grown;

			cap = cap ? cap * 2 : 16;
			grown = realloc(list->names, cap * sizeof(*grown));
			if (!grown)
				goto nomem;
			list->names = grown;
		}
		list->names[list->nr] = strdup(de->d_name);
		if (!list->names[list->nr])
			goto nomem;
		list->nr++;
		errno = 0;
	}
	ret = errno ? -errno : 0;
	closedir(dir);
	if (list->nr)
		qsort(list->names, list->nr, sizeof(*list->names), cmp_names);
	return ret;
nomem:
	closedir(dir);
	name_list_free(list);
	return -ENOMEM;
}

static int list_xattrs(const char *path, char *buf, struct name_list *list)
{
	ssize_t len = llistxattr(path, buf, XATTR_LIST_SIZE);
	int ret = 0;

	list->names = NULL;
	list->nr = 0;
	if (len < 0)
		return -errno;
	for (ssize_t i = 0; i < len; i += strlen(buf + i) + 1)
		list->nr++;
	list->names = calloc(list->nr ? list->nr : 1, sizeof(*list->names));
	if (!list->names)
		return -ENOMEM;
	list->nr = 0;
	for (ssize_t i = 0; i < len; i += strlen(buf + i) + 1) {
		list->names[list->nr] = strdup(buf + i);
		if (!list->names[list->nr]) {
			ret = -ENOMEM;
			break;
		}
		list->nr++;
	}
	if (list->nr)
		qsort(list->names, list->nr, sizeof(*list->names), cmp_names);
	return ret;
}

static void compare_xattrs(const char *rel, const char *pa, const char *pb)
{
	static char list_a[XATTR_LIST_SIZE], list_b[XATTR_LIST_SIZE];
	static char val_a[XATTR_SIZE_MAX], val_b[XATTR_SIZE_MAX];
	struct name_list xa, xb;
	int ra, rb;

	ra = list_xattrs(pa, list_a, &xa);
	rb = list_xattrs(pb, list_b, &xb);
	if (ra != rb) {
		tree_report("%s: llistxattr: expected %d, got %d", rel, rb, ra);
		goto free_lists;
	}
	if (ra < 0)
		goto free_lists;
	if (xa.nr != xb.nr) {
		tree_report("%s: number of xattrs: expected %zu, got %zu", rel, xb.nr, xa.nr);
		goto free_lists;
	}
	for (size_t i = 0; i < xa.nr; i++) {
		ssize_t la, lb;

		if (strcmp(xa.names[i], xb.names[i])) {
			tree_report("%s: xattr name %zu: expected %s, got %s", rel, i, xb.names[i],
				    xa.names[i]);
			break;
		}
		la = lgetxattr(pa, xa.names[i], val_a, sizeof(val_a));
		if (la < 0)
			la = -errno;
		lb = lgetxattr(pb, xb.names[i], val_b, sizeof(val_b));
		if (lb < 0)
			lb = -errno;
		if (la != lb)
			tree_report("%s: xattr %s length: expected %zd, got %zd", rel, xa.names[i],
				    lb, la);
		else if (la > 0 && memcmp(val_a, val_b, la))
			tree_report("%s: xattr %s value differs (%zd bytes)", rel, xa.names[i], la);
	}
free_lists:
	name_list_free(&xa);
	name_list_free(&xb);
}

static void compare_contents(const char *rel, struct side *a, struct side *b, const char *pa,
			     const char *pb)
{
	struct stat sa, sb;
	int fa, fb;
	off_t pos = 0;

	fa = open(pa, O_RDONLY | O_NOFOLLOW);
	if (fa < 0) {
		tree_report("%s: open: expected success, got -%s", rel, strerrorname_np(errno));
		return;
	}
	fb = open(pb, O_RDONLY | O_NOFOLLOW);
	if (fb < 0) {
		tree_report("%s: open of the tmpfs side failed: %s", rel, strerror(errno));
		goto close_a;
	}
	if (fsync(fa) < 0)
		tree_report("%s: fsync: expected success, got -%s", rel, strerrorname_np(errno));
	if (fsync(fb) < 0)
		tree_report("%s: fsync of the tmpfs side failed: %s", rel, strerror(errno));
	if (fstat(fa, &sa) < 0 || fstat(fb, &sb) < 0) {
		tree_report("%s: fstat failed: %s", rel, strerror(errno));
		goto close_b;
	}
	if (sa.st_blocks != sb.st_blocks)
		tree_report("%s: st_blocks after fsync (size %jd): expected %jd, got %jd", rel,
			    (intmax_t)sb.st_size, (intmax_t)sb.st_blocks, (intmax_t)sa.st_blocks);

	for (;;) {
		ssize_t na = pread(fa, a->chunk, COMPARE_CHUNK, pos);
		int err_a = errno;
		ssize_t nb = pread(fb, b->chunk, COMPARE_CHUNK, pos);

		if (na < 0) {
			tree_report("%s: read at %jd: expected %zd, got -%s", rel, (intmax_t)pos,
				    nb, strerrorname_np(err_a));
			break;
		}
		if (nb < 0) {
			tree_report("%s: read of the tmpfs side at %jd failed", rel, (intmax_t)pos);
			break;
		}
		/* Short reads are legal; compare what both returned and go on from there. */
		ssize_t n = na < nb ? na : nb;

		if (n && memcmp(a->chunk, b->chunk, n)) {
			for (ssize_t i = 0; i < n; i++) {
				if (a->chunk[i] != b->chunk[i]) {
					tree_report(
						"%s: byte at offset %jd: expected 0x%02x, got 0x%02x",
						rel, (intmax_t)(pos + i), b->chunk[i], a->chunk[i]);
					break;
				}
			}
			break;
		}
		if (na == 0 || nb == 0) {
			if (na != nb)
				tree_report("%s: end of file at %jd: expected read of %zd, got %zd",
					    rel, (intmax_t)pos, nb, na);
			break;
		}
		pos += n;
	}
close_b:
	close(fb);
close_a:
	close(fa);
}

struct tree_stats {
	unsigned long nr_files;
	unsigned long nr_dirs;
	unsigned long nr_symlinks;
	unsigned long long nr_bytes;
};

static void compare_dir(struct side *a, struct side *b, const char *rel, struct tree_stats *ts);

/* Compares one entry present on both sides; rel is "" for the roots. */
static void compare_entry(struct side *a, struct side *b, const char *rel, struct tree_stats *ts)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	const char *shown = *rel ? rel : ".";
	struct stat sa, sb;

	full_path(a, rel, pa, sizeof(pa));
	full_path(b, rel, pb, sizeof(pb));
	if (lstat(pa, &sa) < 0) {
		tree_report("%s: lstat: expected success, got -%s", shown, strerrorname_np(errno));
		return;
	}
	if (lstat(pb, &sb) < 0) {
		tree_report("%s: lstat of the tmpfs side failed: %s", shown, strerror(errno));
		return;
	}
	if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
		tree_report("%s: file type: expected 0%o, got 0%o", shown,
			    (unsigned int)(sb.st_mode & S_IFMT),
			    (unsigned int)(sa.st_mode & S_IFMT));
		return;
	}
	if (sa.st_mode != sb.st_mode)
		tree_report("%s: mode: expected 0%o, got 0%o", shown, (unsigned int)sb.st_mode,
			    (unsigned int)sa.st_mode);
	if (sa.st_nlink != sb.st_nlink)
		tree_report("%s: st_nlink: expected %ju, got %ju", shown, (uintmax_t)sb.st_nlink,
			    (uintmax_t)sa.st_nlink);
	if (sa.st_size != sb.st_size)
		tree_report("%s: st_size: expected %jd, got %jd", shown, (intmax_t)sb.st_size,
			    (intmax_t)sa.st_size);

	compare_xattrs(shown, pa, pb);

	if (S_ISREG(sb.st_mode)) {
		ts->nr_files++;
		ts->nr_bytes += sb.st_size;
		compare_contents(shown, a, b, pa, pb);
	} else if (S_ISLNK(sb.st_mode)) {
		char ta[PATH_MAX], tb[PATH_MAX];
		ssize_t la, lb;

		ts->nr_symlinks++;
		la = readlink(pa, ta, sizeof(ta) - 1);
		if (la < 0)
			la = -errno;
		lb = readlink(pb, tb, sizeof(tb) - 1);
		if (lb < 0)
			lb = -errno;
		if (la >= 0)
			ta[la] = '\0';
		if (lb >= 0)
			tb[lb] = '\0';
		if (la != lb || (la > 0 && memcmp(ta, tb, la)))
			tree_report("%s: symlink target: expected \"%s\" (%zd), got \"%s\" (%zd)",
				    shown, lb >= 0 ? tb : "", lb, la >= 0 ? ta : "", la);
	} else if (S_ISDIR(sb.st_mode)) {
		ts->nr_dirs++;
		compare_dir(a, b, rel, ts);
	}
}

static void compare_dir(struct side *a, struct side *b, const char *rel, struct tree_stats *ts)
{
	char pa[PATH_MAX], pb[PATH_MAX], child[PATH_MAX];
	const char *shown = *rel ? rel : ".";
	struct name_list la, lb;
	size_t i = 0, j = 0;
	int ra, rb;

	full_path(a, rel, pa, sizeof(pa));
	full_path(b, rel, pb, sizeof(pb));
	ra = list_dir(pa, &la);
	rb = list_dir(pb, &lb);
	if (ra < 0 || rb < 0) {
		tree_report("%s: readdir: expected %d, got %d", shown, rb, ra);
		goto free_lists;
	}
	while (i < la.nr || j < lb.nr) {
		int c;

		if (i == la.nr)
			c = 1;
		else if (j == lb.nr)
			c = -1;
		else
			c = strcmp(la.names[i], lb.names[j]);
		if (c < 0) {
			tree_report("%s%s%s: expected no such entry, got one", rel, *rel ? "/" : "",
				    la.names[i]);
			i++;
			continue;
		}
		if (c > 0) {
			tree_report("%s%s%s: expected an entry, got none", rel, *rel ? "/" : "",
				    lb.names[j]);
			j++;
			continue;
		}
		snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", la.names[i]);
		compare_entry(a, b, child, ts);
		i++;
		j++;
	}
free_lists:
	name_list_free(&la);
	name_list_free(&lb);
}

/* Returns true if the trees are equal. */
static bool compare_trees(struct side *a, struct side *b, unsigned long after_ops, bool is_last)
{
	struct tree_stats ts = { 0 };
	unsigned int before = nr_tree_reports;

	compare_entry(a, b, "", &ts);
	if (verbose || is_last || nr_tree_reports != before)
		printf("%s tree compare after %lu ops: %lu files (%llu bytes), %lu dirs, %lu "
		       "symlinks\n",
		       nr_tree_reports != before ? "FAIL" : "ok", after_ops, ts.nr_files,
		       ts.nr_bytes, ts.nr_dirs - 1, ts.nr_symlinks);
	return nr_tree_reports == before;
}

/*
 * Each side runs in a fresh directory of its own under DIR, so whatever else
 * the mount holds stays out of the comparison and several seeds can share it.
 */
static int side_open(struct side *s, const char *dir, unsigned long seed)
{
	int ret;

	s->dirfd = -1;
	ret = snprintf(s->root, sizeof(s->root), "%s/mnt_diff.%lu", dir, seed);
	if (ret < 0 || (size_t)ret >= sizeof(s->root) - 64) {
		fprintf(stderr, "mnt_diff: %s: path too long\n", dir);
		return -1;
	}
	if (mkdir(s->root, 0755) < 0) {
		fprintf(stderr, "mnt_diff: mkdir %s: %s%s\n", s->root, strerror(errno),
			errno == EEXIST ? " (left by an earlier run: remove it)" : "");
		return -1;
	}
	s->dirfd = open(s->root, O_RDONLY | O_DIRECTORY);
	if (s->dirfd < 0) {
		fprintf(stderr, "mnt_diff: open %s: %s\n", s->root, strerror(errno));
		return -1;
	}
	s->readbuf = malloc(MAX_IO);
	s->chunk = malloc(COMPARE_CHUNK);
	if (!s->readbuf || !s->chunk) {
		fprintf(stderr, "mnt_diff: out of memory\n");
		return -1;
	}
	return 0;
}

/*
 * DIR_B given as "tmpfs": a tmpfs of our own, mounted in a private mount
 * namespace so that it goes away with this process whatever happens to it.
 * Returns 0, or -errno when this process may not mount (then the test skips).
 */
static int private_tmpfs_mount(char *dir)
{
	int ret;

	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	if (!mkdtemp(dir))
		return -errno;
	if (mount("mnt_diff", dir, "tmpfs", 0, "size=2G") < 0) {
		ret = -errno;
		rmdir(dir);
		return ret;
	}
	return 0;
}

static void private_tmpfs_unmount(const char *dir)
{
	if (umount2(dir, MNT_DETACH) < 0 || rmdir(dir) < 0)
		fprintf(stderr, "mnt_diff: removing %s: %s\n", dir, strerror(errno));
}

static void side_close(struct side *s)
{
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->readbuf);
	free(s->chunk);
}

static bool has_user_xattrs(const struct side *s)
{
	static const char probe[] = ".mnt_diff_xattr_probe";
	bool ok;
	int fd;

	fd = openat(s->dirfd, probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return false;
	ok = fsetxattr(fd, "user.probe", "1", 1, 0) == 0;
	close(fd);
	unlinkat(s->dirfd, probe, 0);
	return ok;
}

static bool parse_ulong(const char *arg, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(arg, &end, 0);
	return !errno && *arg && !*end;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mnt_diff DIR_A DIR_B [--seed N] [--ops N] [--check-every N] [--verbose]\n"
		"  DIR_A: the file system under test (tierfs); DIR_B: a kernel tmpfs, or \"tmpfs\"\n"
		"  to mount a private one. Each run works in DIR/mnt_diff.SEED, removed on success.\n");
}

struct run_config {
	unsigned long seed;
	unsigned long nr_ops;
	unsigned long check_every;
	bool is_b_private; /* DIR_B is our own tmpfs, gone when we exit */
};

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	if (remove(path) < 0)
		fprintf(stderr, "mnt_diff: remove %s: %s\n", path, strerror(errno));
	return 0;
}

static void print_op(unsigned long nr, const struct op *op, const struct outcome *want)
{
	char desc[256], res[96];

	describe_op(op, desc, sizeof(desc));
	printf("op %lu %s:", nr, desc);
	for (int k = 0; k < want->nr_steps; k++) {
		format_result(want->step[k], res, sizeof(res));
		printf(" %s %s%s", want->step_name[k], res, k + 1 < want->nr_steps ? "," : "");
	}
	printf("\n");
}

/* Runs the whole sequence; returns T_EXIT_PASS or T_EXIT_FAIL. */
static int run(const struct run_config *cfg, const char *dir_a, const char *dir_b)
{
	unsigned long nr_done[NR_OP_KINDS] = { 0 }, nr_ok[NR_OP_KINDS] = { 0 };
	unsigned int weights[NR_OP_KINDS], total_weight = 0;
	struct side a = { .dirfd = -1 }, b = { .dirfd = -1 };
	unsigned long nr, nr_checks = 0;
	struct outcome got, want;
	struct timespec t0, t1;
	bool failed = false;
	struct statfs sfs;
	struct rng rng;
	struct op op;

	if (side_open(&a, dir_a, cfg->seed) < 0 || side_open(&b, dir_b, cfg->seed) < 0) {
		failed = true;
		goto close_sides;
	}
	if (statfs(dir_b, &sfs) == 0 && sfs.f_type != TMPFS_MAGIC)
		printf("note: %s is not tmpfs (f_type %#lx); it is still taken as the expected "
		       "side\n",
		       dir_b, (unsigned long)sfs.f_type);

	for (int k = 0; k < NR_OP_KINDS; k++) {
		weights[k] = op_kinds[k].weight;
		total_weight += weights[k];
	}
	if (!has_user_xattrs(&b)) {
		printf("note: %s has no user.* xattrs; xattr operations left out\n", dir_b);
		for (int k = 0; k < NR_OP_KINDS; k++) {
			if (op_kinds[k].is_xattr) {
				total_weight -= weights[k];
				weights[k] = 0;
			}
		}
	}

	rng_init(&rng, cfg->seed);
	printf("mnt_diff: seed %lu, %lu ops, tree compare every %lu; got %s, expected %s\n",
	       cfg->seed, cfg->nr_ops, cfg->check_every, a.root, b.root);
	clock_gettime(CLOCK_MONOTONIC, &t0);

	for (nr = 1; nr <= cfg->nr_ops; nr++) {
		gen_op(&rng, &op, weights, total_weight);
		run_op(&a, &op, &got);
		run_op(&b, &op, &want);
		if (verbose)
			print_op(nr, &op, &want);
		nr_done[op.kind]++;
		if (all_steps_ok(&want))
			nr_ok[op.kind]++;
		if (!outcomes_equal(nr, &op, &got, &want)) {
			failed = true;
			break;
		}
		if (nr % cfg->check_every == 0 || nr == cfg->nr_ops) {
			nr_checks++;
			if (!compare_trees(&a, &b, nr, nr == cfg->nr_ops)) {
				failed = true;
				break;
			}
		}
	}
	if (!cfg->nr_ops) {
		nr_checks++;
		failed = !compare_trees(&a, &b, 0, true);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("ops run (all steps succeeded on tmpfs / total):");
	for (int k = 0; k < NR_OP_KINDS; k++)
		printf(" %s %lu/%lu", op_kinds[k].name, nr_ok[k], nr_done[k]);
	printf("\n");
	printf("mnt_diff: %s seed %lu, %lu of %lu ops, %lu tree compares, %.2f s\n",
	       failed ? "FAIL" : "PASS", cfg->seed, failed ? nr : cfg->nr_ops, cfg->nr_ops,
	       nr_checks, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (failed)
		printf("mnt_diff: %s%s%s left in place; --verbose lists every op\n", a.root,
		       cfg->is_b_private ? "" : " and ", cfg->is_b_private ? "" : b.root);
	else if (nftw(a.root, remove_one, 16, FTW_DEPTH | FTW_PHYS) ||
		 nftw(b.root, remove_one, 16, FTW_DEPTH | FTW_PHYS))
		fprintf(stderr, "mnt_diff: could not walk the trees to remove them\n");
close_sides:
	side_close(&a);
	side_close(&b);
	return failed ? T_EXIT_FAIL : T_EXIT_PASS;
}

int main(int argc, char **argv)
{
	struct run_config cfg = {
		.seed = DEFAULT_SEED,
		.nr_ops = DEFAULT_NR_OPS,
		.check_every = DEFAULT_CHECK_EVERY,
	};
	char tmpfs_dir[] = "/tmp/mnt_diff-tmpfs.XXXXXX";
	const char *dirs[2] = { NULL, NULL };
	int nr_dirs = 0;
	int ret;

	for (int k = 1; k < argc; k++) {
		unsigned long *val = NULL;

		if (!strcmp(argv[k], "--seed"))
			val = &cfg.seed;
		else if (!strcmp(argv[k], "--ops"))
			val = &cfg.nr_ops;
		else if (!strcmp(argv[k], "--check-every"))
			val = &cfg.check_every;
		else if (!strcmp(argv[k], "--verbose") || !strcmp(argv[k], "-v"))
			verbose = true;
		else if (argv[k][0] != '-' && nr_dirs < 2)
			dirs[nr_dirs++] = argv[k];
		else
			goto usage;
		if (val && (k + 1 >= argc || !parse_ulong(argv[++k], val)))
			goto usage;
	}
	if (nr_dirs != 2 || !cfg.check_every)
		goto usage;

	page_size = sysconf(_SC_PAGESIZE);
	for (int k = 0; k < NR_PREFIXES; k++)
		for (int l = 0; l < NR_LEAVES; l++)
			snprintf(path_pool[k * NR_LEAVES + l], sizeof(path_pool[0]), "%s%s",
				 prefixes[k], leaves[l]);
	wbuf = malloc(MAX_IO);
	if (!wbuf) {
		fprintf(stderr, "mnt_diff: out of memory\n");
		return T_EXIT_FAIL;
	}

	if (!strcmp(dirs[1], "tmpfs")) {
		ret = private_tmpfs_mount(tmpfs_dir);
		if (ret < 0) {
			printf("skip: cannot mount a private tmpfs: %s\n", strerror(-ret));
			free(wbuf);
			return T_EXIT_SKIP;
		}
		cfg.is_b_private = true;
		dirs[1] = tmpfs_dir;
	}

	signal(SIGBUS, mmap_fault);
	umask(0);
	ret = run(&cfg, dirs[0], dirs[1]);

	if (cfg.is_b_private)
		private_tmpfs_unmount(tmpfs_dir);
	free(wbuf);
	return ret;
usage:
	usage();
	return T_EXIT_FAIL;
}
