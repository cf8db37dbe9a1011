/* SPDX-License-Identifier: MIT */
/*
 * Parts of the FUSE protocol after 7.38, which the 6.1 <linux/fuse.h> of
 * Debian 12 stops at, that the bridge speaks: FUSE_STATX (7.39, Linux 6.6)
 * and FUSE_DIRECT_IO_ALLOW_MMAP (7.39), under names of our own so that a
 * newer header cannot clash with them.
 */
#ifndef TIERFS_BRIDGE_ABI_H
#define TIERFS_BRIDGE_ABI_H

#include <stdint.h>

/* init_out flags2 (bit 36 of the 64-bit flags): shared mmap with direct I/O. */
#define BRIDGE_INIT_FLAGS2_DIRECT_IO_ALLOW_MMAP (1u << 4)

#define BRIDGE_OP_STATX 52

struct bridge_statx_in {
	uint32_t getattr_flags;
	uint32_t reserved;
	uint64_t fh;
	uint32_t sx_flags;
	uint32_t sx_mask;
};

struct bridge_sx_time {
	int64_t tv_sec;
	uint32_t tv_nsec;
	int32_t reserved;
};

struct bridge_statx {
	uint32_t mask; /* STATX_* */
	uint32_t blksize;
	uint64_t attributes;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint16_t mode;
	uint16_t spare0;
	uint64_t ino;
	uint64_t size;
	uint64_t blocks;
	uint64_t attributes_mask;
	struct bridge_sx_time atime, btime, ctime, mtime;
	uint32_t rdev_major, rdev_minor;
	uint32_t dev_major, dev_minor;
	uint64_t spare2[14];
};

struct bridge_statx_out {
	uint64_t attr_valid; /* seconds the attributes may be cached */
	uint32_t attr_valid_nsec;
	uint32_t flags;
	uint64_t spare[2];
	struct bridge_statx stat;
};

#endif
