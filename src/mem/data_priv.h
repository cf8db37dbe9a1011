/* SPDX-License-Identifier: MIT */
/*
 * What the file data and swap-in share inside mem/: taking a pool page
 * within the budget and keeping the LRU's counts as pages come and go.
 * Each expects the inode's write lock.
 */
#ifndef TIERFS_DATA_PRIV_H
#define TIERFS_DATA_PRIV_H

#include <stdbool.h>
#include <stdint.h>

struct data_space;
struct inode;

/*
 * A pool page within the budget: at the hard limit this thread reclaims a
 * few batches itself, from held, the inode it holds locked, too.  When
 * nothing can be evicted (the backend is full), a write fails with ENOSPC
 * but a read or a write into a fallocated page (may_exceed) goes over the
 * budget: refusing to read data, or to keep fallocate's promise, is worse.
 * Returns the pfn or -ENOSPC / -ENOMEM.
 */
int64_t data_alloc_page(struct data_space *ds, struct inode *held, bool may_exceed);

/* A page became resident at index; swap_slot + 1 of its clean copy, or 0. */
void data_track_resident(struct data_space *ds, struct inode *inode, uint64_t index, uint32_t pfn,
			 uint64_t swap_slot);

/* nr swapped pages of inode were loaded or freed. */
void data_untrack_swapped(struct data_space *ds, const struct inode *inode, uint64_t nr);

/*
 * Give a backend slot of inode back.  While a load of the inode has not
 * had its pages checked (one may be reading the slot, or have read it) it
 * is kept back, and given back once none is unchecked, so that no store
 * reuses it for a page a loader then takes for its own and no one waits
 * for the I/O.  Past DATA_MAX_DEFERRED kept back it waits for the reads
 * in flight, gives it back and bumps inode->slot_gen: the unchecked loads
 * throw their pages away.  inode->lock held for writing.
 */
void data_free_slot(struct data_space *ds, struct inode *inode, uint64_t slot);

/*
 * A load from the backend for inode runs with its lock dropped.  Begin
 * with inode->lock held for writing (returns the slot generation to pass
 * to data_load_recheck); end when the read is done, before taking the lock
 * again; then data_load_recheck, which gives back what was kept back if no
 * load is unchecked any more, and returns whether a slot went back under
 * the load (then throw its pages away).  The pages are then checked under
 * the same hold of the lock.
 */
uint64_t data_load_begin(struct inode *inode);
void data_load_end(struct data_space *ds, struct inode *inode);
bool data_load_recheck(struct data_space *ds, struct inode *inode, uint64_t gen);

/*
 * Wait for inode's reads in flight, then give back every slot kept back
 * (bumping slot_gen if a load is still unchecked): the backend's count is
 * exact afterwards.  inode->lock held for writing.
 */
void data_wait_loads(struct data_space *ds, struct inode *inode);

#endif
