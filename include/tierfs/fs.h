/* SPDX-License-Identifier: MIT */
/*
 * A mounted tierfs: its options, namespace and data space, and the FUSE
 * low-level operations that serve it.
 */
#ifndef TIERFS_FS_H
#define TIERFS_FS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdatomic.h>

#include "tierfs/data.h"
#include "tierfs/drain.h"
#include "tierfs/memcg.h"
#include "tierfs/tenant.h"
#include "tierfs/ns.h"
#include "tierfs/options.h"

/* Request counters; relaxed atomics, for the stats only. */
struct fs_counters {
	atomic_uint_fast64_t nr_reads, nr_writes;
	atomic_uint_fast64_t bytes_read, bytes_written;
	atomic_uint_fast64_t nr_enospc; /* requests refused for size= or nr_inodes= */
};

struct tierfs {
	struct tierfs_options opts;
	struct ns ns;
	struct data_space data;
	struct fs_counters counters;
	double timeout; /* attr and entry cache, seconds */
	struct drain drain;
	struct memcg_watch memcg;
	struct tenants tenants;
	bool is_cgroup_budget;	 /* no mem= or memlimit=: the cgroup's limit alone */
	uint64_t fallback_limit; /* a RAM pool's bound with no cgroup limit */
};

/*
 * Set up the namespace and the data space for opts.  Returns 0, or -errno
 * with a message in err that names the option (and the path) at fault.
 */
int tierfs_init(struct tierfs *fs, const struct tierfs_options *opts, uint64_t ram, char *err,
		size_t err_len);

/*
 * Whether the budget and the backend cannot hold size=: then msg says so,
 * with both figures, for the mount to print.
 */
bool tierfs_capacity_short(struct tierfs *fs, char *msg, size_t size);

/* Start the background threads: after daemonizing.  Returns 0 or -errno. */
int tierfs_start(struct tierfs *fs);

/* Free everything, open-unlinked files included. */
void tierfs_destroy(struct tierfs *fs);

/* The operations; userdata is the struct tierfs. */
extern const struct fuse_lowlevel_ops tierfs_ops;

#endif
