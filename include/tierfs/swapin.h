/* SPDX-License-Identifier: MIT */
/*
 * Swap-in: bringing swapped pages back to memory.  A fault loads the pages
 * asked for and then what the readahead policy (readahead.h, ds->ra)
 * picks around them; the drain loads whole files in slot order.  Each call
 * expects the inode's write lock.
 */
#ifndef TIERFS_SWAPIN_H
#define TIERFS_SWAPIN_H

#include <stddef.h>
#include <stdint.h>

#include "tierfs/space.h"

struct inode;

/*
 * Bring the swapped pages of [off, off+len) back to memory, keeping their
 * backend copies while they stay clean.  inode->lock held for writing; it
 * is dropped across each load from the backend, so other faults on the
 * file go on meanwhile and a page brought in may be gone again when this
 * returns (the caller looks again).  Returns 0, -EIO (a load failed: that
 * page stays swapped) or -ENOSPC (no memory within the budget).
 */
int swapin_range(struct data_space *ds, struct inode *inode, uint64_t off, size_t len);

/* Pages one load of the drain moves, at most: a piece of its batch. */
#define SWAPIN_PIECE_PAGES 32

/* A piece of a drain's batch: nr slots to load into pages, and the load's result. */
struct swapin_piece {
	const uint64_t *slots;
	void *const *pages;
	unsigned int nr;
	int ret;
};

/*
 * Load each of nr pieces from the backend (ret set as its load() returns),
 * in any order and on any threads, and return when all are done.  The
 * drain's own loaders run them in parallel; swapin_load_in_turn one after
 * another.
 */
typedef void swapin_load_fn(void *ctx, struct swapin_piece *pieces, unsigned int nr);

void swapin_load_in_turn(void *ctx, struct swapin_piece *pieces, unsigned int nr);

/*
 * Bring up to max swapped pages of inode from page *from on back to memory
 * for good (their slots freed), loading in the backend's order (its
 * locate(), else the slots') in pieces through load (ctx its first
 * argument), and free the backend copies of its clean resident pages,
 * counted in *nr_hits.  *from moves past the pages looked
 * at, so that a file is walked once however many calls it takes.
 * Allocates without reclaim: the caller made sure they fit.  Returns pages
 * brought back (0: none left from *from on), or -ENOMEM / -EIO when none
 * was and a page could not be.  When some could not, *from stays, so that
 * the next call looks at them again (and fails if they still cannot).
 */
int64_t swapin_drain(struct data_space *ds, struct inode *inode, uint64_t *from, unsigned int max,
		     uint64_t *nr_hits, swapin_load_fn *load, void *ctx);

#endif
