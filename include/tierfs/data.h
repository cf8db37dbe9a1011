/* SPDX-License-Identifier: MIT */
/*
 * File data: reads and writes through an inode's page map and the page
 * pool, and the range operations (truncate, hole punch, allocate, seek,
 * copy).  Every function expects the inode's lock: read for
 * data_has_swapped, data_read, data_read_mem, data_seek and data_copy's
 * source, write for the rest (data_copy's destination included).
 */
#ifndef TIERFS_DATA_H
#define TIERFS_DATA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "tierfs/lru.h"
#include "tierfs/readahead.h"
#include "tierfs/reclaim.h"

struct inode;
struct pagepool;
struct tier_backend;

/* Swap tier counters; relaxed atomics, for the stats. */
struct swap_counters {
	atomic_uint_fast64_t nr_evicted;	/* pages stored to the backend */
	atomic_uint_fast64_t nr_clean_dropped;	/* evicted without a store: copy still valid */
	atomic_uint_fast64_t nr_filled_evicted;	/* evicted as a same-filled entry */
	atomic_uint_fast64_t nr_swapins;	/* pages loaded back */
	atomic_uint_fast64_t nr_swapin_errors;	/* loads that failed: EIO to the reader */
	atomic_uint_fast64_t nr_store_failures;	/* stores refused or failed: page kept */
	atomic_uint_fast64_t nr_direct_reclaims;	/* batches reclaimed by an allocating thread */
	atomic_uint_fast64_t nr_budget_enospc;	/* writes refused: over budget, nothing to evict */
	atomic_uint_fast64_t nr_budget_exceeded;	/* reads let past a full budget */
	atomic_uint_fast64_t nr_limit_rejects;	/* stores refused: the RAM pool may not grow */
	atomic_uint_fast64_t nr_capacity_enospc;	/* writes refused: budget and backend full */
	atomic_uint_fast64_t nr_copies_freed;	/* swapped in with no clean copy kept: tight */
};

/*
 * The memory all files share: the page pool, the count size= limits, and
 * the swap tier.  backend NULL means no swap tier: pages stay resident and
 * mem_pages is not enforced.
 *
 * Locking
 *
 * inode->lock (rwlock, ns.h): the inode's page map and size, and the
 *	index, swap_slot and writeback flags of its struct lru_page.  Read
 *	for data_has_swapped, data_read, data_read_mem (which loads from the
 *	backend: I/O under a read lock) and data_seek, write for the rest.
 *	Held across backend loads (swap-in, readahead, drain batches) and
 *	across direct reclaim by an allocating thread, which passes it in as
 *	held.
 * reclaim.batch_lock (struct reclaimer, reclaim.h): one reclaim batch at a
 *	time; pending[] and the writes of nr_pending (which the reclaimer
 *	reads without it).  Held across the batch's backend store, a device
 *	write for the file backend; the victims' inodes are unlocked before
 *	it, but the inode a direct reclaimer holds stays locked across it.
 * lru->lock (lru.h): the lists, their links and counts, the scan record,
 *	lru->all[]; an lru_page's inode while it is under writeback.  Short;
 *	no I/O.  Victims' inodes are taken under it by trylock only.
 * budget_lock: the caps below it, the stamps, and the writes of the
 *	budget's atomics (mem_pages, high_pages, low_pages, is_pool_full,
 *	is_backend_tight, capacity_x1024, filled_weight; read lock-free).
 *	Under it budget_update reads /proc/self/statm, takes the backend's
 *	and the pool's stats locks, may trim the pool and malloc.
 * reclaim.lock (struct reclaimer): stop and the reclaimer's sleep on wake.
 *	Never held across a batch: the reclaimer drops it first.
 * tenants->lock (tenant.h): the tenant table; reads the cgroup files
 *	under it (file I/O), and registers lists under lru->lock.
 *
 * Order:
 *	inode->lock (held by the allocating thread)
 *	  reclaim.batch_lock
 *	    lru->lock
 *	      inode->lock of a victim, by trylock only
 *	inode->lock -> budget_lock (a refused write refreshes the budget)
 *	tenants->lock -> lru->lock
 * budget_lock is never taken under reclaim.batch_lock: reclaim_batch
 * updates the budget after dropping it.  reclaim.lock nests under none:
 * whoever saw the budget shrink kicks the reclaimer after budget_lock is
 * dropped.
 */
struct data_space {
	struct pagepool *pool;
	atomic_uint_fast64_t max_pages;	/* 0 = unlimited; set live by remount */
	atomic_uint_fast64_t nr_pages;		/* present pages of all files */
	atomic_uint_fast64_t nr_filled;		/* of which same-filled */

	struct tier_backend *backend;
	struct lru lru;				/* resident pages, when backend */
	atomic_uint_fast64_t mem_pages;		/* resident budget now: the hard limit */
	atomic_uint_fast64_t high_pages;	/* reclaimer wakes above high, */
	atomic_uint_fast64_t low_pages;		/* stops at low */
	atomic_bool is_pool_full;		/* the limit allows no RAM backend growth */
	atomic_bool is_backend_tight;		/* no room to keep clean copies */
	atomic_uint_fast64_t capacity_x1024;	/* weighted pages data may use; 0 = no bound */
	atomic_uint_fast64_t filled_weight;	/* of a page using no memory yet, x1024 */
	atomic_uint_fast64_t nr_unwritten;	/* fallocated pages never written */
	pthread_mutex_t budget_lock;		/* protects the caps, and: */
	uint64_t mem_cap_pages;			/* mem=; 0 = none */
	uint64_t limit_bytes;			/* memlimit=; 0 = none */
	uint64_t env_limit_bytes;		/* the cgroup's limit, or RAM's; 0 = none */
	uint64_t budget_stamp_ns;		/* last update, CLOCK_MONOTONIC */
	uint64_t backend_peak_bytes;		/* RAM pool's largest since the last trim */
	uint64_t rss_trimmed_bytes;		/* anonymous memory after the last trim for it */
	struct swap_counters swap;
	struct readahead ra;
	atomic_bool is_draining;		/* a drain runs: reclaim stores nothing */
	struct reclaimer reclaim;
};

/* Most pages one read can return: 1 MiB, plus one for misalignment. */
#define DATA_MAX_READ_PAGES 257

/*
 * Write the bytes of the nr_iov buffers of iov, one after the other, at
 * off, copying each byte once into the pool.  Returns bytes written (short
 * when space ran out part way), or -ENOSPC / -ENOMEM / -EFBIG when nothing
 * was.  Extends the size; does not touch times.
 */
ssize_t data_write(struct data_space *ds, struct inode *inode, const struct iovec *iov,
		   unsigned int nr_iov, uint64_t off);

/* data_write from memory. */
ssize_t data_write_mem(struct data_space *ds, struct inode *inode, const void *buf, size_t len,
		       uint64_t off);

/*
 * Whether [off, off+len) holds swapped pages: then data_read needs the
 * inode's write lock and data_swap_in first.
 */
bool data_has_swapped(const struct inode *inode, uint64_t off, size_t len);

/*
 * Bring the swapped pages of [off, off+len) back to memory, keeping their
 * backend copies while they stay clean.  Returns 0, -EIO (a load failed:
 * that page stays swapped) or -ENOSPC (no memory within the budget).
 */
int data_swap_in(struct data_space *ds, struct inode *inode, uint64_t off, size_t len);

/*
 * Describe up to len bytes at off (clamped to the size) as iovecs pointing
 * into the pool, a shared zero page or *scratch, a buffer data_read
 * allocates when a page must be expanded (the caller frees it after the
 * reply; start with NULL).  Valid until the inode lock is dropped.  iov must
 * hold DATA_MAX_READ_PAGES; len at most 1 MiB.  No page of the range may be
 * swapped (see data_has_swapped).  Returns the number of iovecs or -ENOMEM.
 */
int data_read(struct data_space *ds, const struct inode *inode, uint64_t off, size_t len,
	      struct iovec *iov, char **scratch);

/*
 * Copy up to len bytes at off into buf, loading swapped pages into buf
 * without bringing them back.  Returns bytes copied or -EIO.
 */
ssize_t data_read_mem(struct data_space *ds, const struct inode *inode, uint64_t off, void *buf,
		      size_t len);

/* Set the size, freeing pages past it and zeroing the tail of the last. */
int data_truncate(struct data_space *ds, struct inode *inode, uint64_t size);

/* Make [off, off+len) read as zeros, freeing whole pages. */
int data_punch(struct data_space *ds, struct inode *inode, uint64_t off, uint64_t len);

/*
 * Back every hole in [off, off+len) with a zero-filled page entry, counted
 * against size= but using no memory.  All or nothing: -ENOSPC changes
 * nothing.  Does not change the size.
 */
int data_allocate(struct data_space *ds, struct inode *inode, uint64_t off, uint64_t len);

/* SEEK_DATA / SEEK_HOLE from off.  Returns the offset or -ENXIO. */
int64_t data_seek(const struct inode *inode, uint64_t off, int whence);

/*
 * Copy len bytes from src at src_off to dst at dst_off (dst != src, or
 * ranges that do not overlap).  Returns bytes copied or -errno.
 */
ssize_t data_copy(struct data_space *ds, struct inode *dst, uint64_t dst_off,
		  const struct inode *src, uint64_t src_off, uint64_t len);

/*
 * Bring up to max swapped pages of inode from page *from on back to memory
 * for good (their slots freed), loading in slot order, and free the backend
 * copies of its clean resident pages, counted in *nr_hits.  *from moves
 * past the pages looked at, so that a file is walked once however many
 * calls it takes.  Allocates without reclaim: the caller made sure they
 * fit.  Returns pages brought back (0: none left from *from on), or
 * -ENOMEM / -EIO with the failed pages still swapped and *from unmoved.
 */
int64_t data_drain(struct data_space *ds, struct inode *inode, uint64_t *from, unsigned int max,
		   uint64_t *nr_hits);

/* Free every page of the inode. */
void data_release(struct data_space *ds, struct inode *inode);

/*
 * data_release of a regular file nothing reaches any more, taking its
 * lock: the release callback of ns_destroy and ns_inode_next, ds the
 * struct data_space.
 */
void data_release_unreachable(void *ds, struct inode *inode);

#endif
