/* SPDX-License-Identifier: MIT */
/*
 * The data space, the memory all files share, and its composition root:
 * builds its mechanisms in order (counters, readahead, budget, reclaimer;
 * then the LRU and the backend) and tears them down in reverse.  The
 * daemon and the unit tests build a space only through here.
 */
#ifndef TIERFS_SPACE_H
#define TIERFS_SPACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tierfs/budget.h"
#include "tierfs/lru.h"
#include "tierfs/readahead.h"
#include "tierfs/reclaim.h"

struct pagepool;
struct tier_backend;

/* Swap tier counters; relaxed atomics, for the stats. */
struct swap_counters {
	atomic_uint_fast64_t nr_evicted;	 /* pages stored to the backend */
	atomic_uint_fast64_t nr_clean_dropped;	 /* evicted without a store: copy still valid */
	atomic_uint_fast64_t nr_filled_evicted;	 /* evicted as a same-filled entry */
	atomic_uint_fast64_t nr_swapins;	 /* pages loaded back */
	atomic_uint_fast64_t nr_swapin_errors;	 /* loads that failed: EIO to the reader */
	atomic_uint_fast64_t nr_store_failures;	 /* stores refused or failed: page kept */
	atomic_uint_fast64_t nr_direct_reclaims; /* batches reclaimed by an allocating thread */
	atomic_uint_fast64_t nr_budget_enospc;	 /* writes refused: over budget, nothing to evict */
	atomic_uint_fast64_t nr_budget_exceeded; /* reads let past a full budget */
	atomic_uint_fast64_t nr_limit_rejects;	 /* stores refused: the RAM pool may not grow */
	atomic_uint_fast64_t nr_capacity_enospc; /* writes refused: budget and backend full */
	atomic_uint_fast64_t nr_room_waits;	 /* 5 ms waits of writers for the capacity */
	atomic_uint_fast64_t nr_copies_freed;	 /* swapped in with no clean copy kept: tight */
};

/*
 * The memory all files share: the page pool, the count size= limits, and
 * the swap tier.  backend NULL means no swap tier: pages stay resident and
 * mem_pages is not enforced.
 *
 * Locking
 *
 * ns->lock (rwlock, ns.h): directory contents, link counts, the list of
 *	all inodes and their lookup counts; write for any change.  Taken
 *	before any inode->lock, never under one.  A file that loses its
 *	last name has its pages freed after it is dropped (fs_ops.h).
 * inode->lock (rwlock, ns.h): the inode's page map and size, and the
 *	index, swap_slot and writeback flags of its struct lru_page.  Read
 *	for data_has_swapped, data_read, data_read_mem (which loads from the
 *	backend: I/O under a read lock) and data_seek, write for the rest.
 *	Dropped across the loads of a swap-in and its readahead, so that
 *	other faults on the file go on: the loader's pages stay its own
 *	(in no page map) until it takes the lock again and checks them.
 *	A slot of the inode freed while a load has not had its pages
 *	checked (nr_unchecked) is kept back in inode->deferred and given
 *	to the backend when none is left unchecked, so no store reuses a
 *	slot a loader may take for its own, and no one waits; past
 *	DATA_MAX_DEFERRED, the drain and a release wait for the reads in
 *	flight (nr_loading) instead, give the slots back and bump
 *	slot_gen, and a loader that finds it moved throws its pages away
 *	and loads again under the lock.  A loader that finds an entry
 *	changed throws that page away, and loads its batch again under the
 *	lock if the page was swapped to another slot meanwhile.
 *	Held across drain batches and across direct reclaim by an
 *	allocating thread, which passes it in as held.
 * reclaim.batch_lock (struct reclaimer, reclaim.h): one isolation at a
 *	time; pending[], nr_in_flight and the writes of nr_pending (which
 *	the reclaimer reads without it).  Not held across the backend store
 *	(a device write for the file backend): the victims are put under
 *	writeback, their inodes unlocked and their room in pending[]
 *	reserved under it, then it is dropped for the store and taken again
 *	to append and finish them, so the stores of several reclaimers are
 *	in flight at once.  The inode a direct reclaimer holds stays locked
 *	across its store.
 * lru->lock (lru.h): the lists, their links and counts, the scan record,
 *	lru->all[]; an lru_page's inode while it is under writeback.  Short;
 *	no I/O.  Victims' inodes are taken under it by trylock only.
 * budget.lock (struct budget, budget.h): the caps, the stamps, and the
 *	writes of the budget's atomics (mem_pages, high_pages, low_pages,
 *	is_pool_full, is_backend_tight, capacity_x1024, filled_weight; read
 *	lock-free).
 *	Under it budget_update reads /proc/self/statm, takes the backend's
 *	and the pool's stats locks, may trim the pool and malloc.
 * reclaim.lock (struct reclaimer): stop and the reclaimer's sleep on wake.
 *	Never held across a batch: the reclaimer drops it first.
 * reclaim.store_lock (struct reclaimer): the end of a store's is_storing,
 *	which a writer of a page under writeback waits for, its inode's lock
 *	held; the store takes no inode lock, so it always ends.  Innermost.
 * tenants->lock (tenant.h): the tenant table; reads the cgroup files
 *	under it (file I/O), and registers lists under lru->lock.
 * load_lock: the end of an unlocked read (nr_loading reaching 0), which
 *	the drain, a release and a free past DATA_MAX_DEFERRED wait for
 *	with the inode's lock held; the read takes no inode lock before it
 *	ends, so the wait always ends.
 * drain_loaders.lock (drain.c): a drain batch's pieces, taken with the
 *	inode's lock held by the drain thread; the loaders take no other.
 *	Innermost.
 *
 * Order:
 *	ns->lock -> inode->lock
 *	inode->lock (held by the allocating thread)
 *	  reclaim.batch_lock
 *	    lru->lock
 *	      inode->lock of a victim, by trylock only
 *	inode->lock -> budget.lock (a refused write refreshes the budget)
 *	tenants->lock -> lru->lock
 * budget.lock is never taken under reclaim.batch_lock: reclaim_batch
 * updates the budget after dropping it.  reclaim.lock nests under none:
 * whoever saw the budget shrink kicks the reclaimer after budget.lock is
 * dropped.
 */
struct data_space {
	struct pagepool *pool;
	atomic_uint_fast64_t max_pages; /* 0 = unlimited; set live by remount */
	atomic_uint_fast64_t nr_pages;	/* present pages of all files */
	atomic_uint_fast64_t nr_filled; /* of which same-filled */

	struct tier_backend *backend;
	struct lru lru;			   /* resident pages, when backend */
	struct budget budget;		   /* how many of them may be resident */
	atomic_uint_fast64_t nr_unwritten; /* fallocated pages never written */
	struct swap_counters swap;
	struct readahead ra;
	atomic_bool is_draining; /* a drain runs: reclaim stores nothing */
	pthread_mutex_t load_lock;
	pthread_cond_t load_done; /* an inode's nr_loading reached 0 */
	struct reclaimer reclaim;
};

/*
 * A space over pool (owned by the space from now on) with no backend:
 * max_pages for size= (0: none), readahead as policy, env_limit_bytes the
 * limit of the surroundings (see budget_set_env_limit; 0: none).  The
 * caps are set next, with budget_set.
 */
void space_init(struct data_space *ds, struct pagepool *pool, uint64_t max_pages,
		enum readahead_policy policy, uint64_t env_limit_bytes);

/*
 * Give the space its swap tier: page lists for every pool page, then
 * backend, owned by the space from now on, and the budget recomputed with
 * it.  Before reclaim_start.  Returns 0, or -ENOMEM with backend still the
 * caller's.
 */
int space_attach_backend(struct data_space *ds, struct tier_backend *backend);

/* Tear down what space_init and space_attach_backend built; after reclaim_stop. */
void space_fini(struct data_space *ds);

#endif
