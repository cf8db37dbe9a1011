/* SPDX-License-Identifier: MIT */
/*
 * A tierfs: its options, namespace, data space, drain, cgroup watch and
 * tenants, built and taken apart by the composition root (core/tierfs.c).
 * Free of FUSE types: the control channel and the tests see this, the FUSE
 * edge fs.h.
 */
#ifndef TIERFS_TIERFS_H
#define TIERFS_TIERFS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tierfs/drain.h"
#include "tierfs/memcg.h"
#include "tierfs/ns.h"
#include "tierfs/options.h"
#include "tierfs/space.h"
#include "tierfs/tenant.h"

/* Request counters; relaxed atomics, for the stats only. */
struct fuse_session;

struct fs_counters {
	atomic_uint_fast64_t nr_reads, nr_writes;
	atomic_uint_fast64_t bytes_read, bytes_written;
	atomic_uint_fast64_t nr_enospc; /* requests refused for size= or nr_inodes= */
};

/*
 * What the FUSE edge's transport reports, for the stats: set once the
 * kernel's INIT is answered (mode), counters relaxed atomics.  The ring's
 * memory is data.budget.transport_bytes, part of the footprint.
 */
/* FUSE opcodes the stats count requests of (FUSE_SYNCFS is 50). */
#define TRANSPORT_NR_OPCODES 64

/* The stats' name of a FUSE opcode ("lookup"), or NULL for one not counted. */
const char *transport_opcode_name(unsigned int opcode);

struct transport_stats {
	const char *_Atomic mode;	       /* "classic" or "uring"; NULL before INIT */
	const char *_Atomic reason;	       /* why classic where uring was asked; NULL if not */
	unsigned int nr_queues;		       /* ring queues, one per possible CPU; 0 classic */
	unsigned int depth;		       /* entries per queue */
	atomic_uint poll_us;		       /* ring_poll= in effect; 0: queues sleep at once */
	atomic_uint_fast64_t nr_poll_hits;     /* times a polling queue found work, no sleep */
	atomic_uint_fast64_t nr_ring_requests; /* requests that came over the ring */
	atomic_uint_fast64_t nr_handoffs;      /* of them, served off the ring thread */
	atomic_uint_fast64_t nr_commit_errors; /* replies the kernel refused */
	/* The bridge to libfuse (src/fuse/bridge.c), both transports. */
	_Atomic uint64_t init_unique;  /* of the INIT request */
	_Atomic uint64_t init_offered; /* the kernel's INIT flags, flags2 << 32 */
	_Atomic uint64_t init_granted; /* what the reply took of them, flags2 << 32 */
	atomic_bool is_killpriv_v2;    /* taken: tierfs clears SUID/SGID */
	atomic_uint_fast64_t nr_ops[TRANSPORT_NR_OPCODES]; /* requests by opcode */
};

/* The writeback cache's bound, cache=always only (src/fuse/dirty.c). */
struct dirty_stats {
	dev_t dev;			/* the mount's, whose bdi is set; 0 before */
	atomic_uint_fast64_t max_bytes; /* the bdi's max_bytes as set; 0: the kernel's */
	const char *_Atomic reason;	/* why the kernel's bound stays; NULL if not */
	char why[160];
};

struct tierfs {
	struct tierfs_options opts;
	struct transport_stats transport;
	struct dirty_stats dirty;
	struct ns ns;
	struct data_space data;
	struct fs_counters counters;
	double timeout; /* attr and entry cache, seconds */
	struct drain drain;
	struct memcg_watch memcg;
	struct tenants tenants;
	bool is_cgroup_budget;	       /* no mem= or memlimit=: the cgroup's limit alone */
	uint64_t fallback_limit;       /* a RAM pool's bound with no cgroup limit */
	_Atomic enum atime_mode atime; /* opts.atime, then each remount's */
	atomic_bool is_nodiratime;     /* opts.is_nodiratime, then each remount's */
	struct fuse_session *se;       /* for notifications to the kernel; NULL: none */
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

/* The writeback cache's bound for fs's budget, in bytes. */
uint64_t dirty_bound(struct tierfs *fs);

/*
 * With cache=always, bound the kernel's dirty pages of the mount (device
 * dev) by dirty_bound; again after the budget changes.  Logs and notes in
 * fs->dirty why where it cannot.
 */
void dirty_tune(struct tierfs *fs, dev_t dev);

#endif
