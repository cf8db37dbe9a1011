/* SPDX-License-Identifier: MIT */
/*
 * The page pool: every resident file page lives here.  Pages are pre-touched
 * in 2 MiB batches by a background thread (MADV_POPULATE_WRITE costs a tenth
 * of a first-touch fault per page here) and recycled through a free stack,
 * so the write path never faults in fresh memory or calls malloc.
 */
#ifndef TIERFS_PAGEPOOL_H
#define TIERFS_PAGEPOOL_H

#include <stdint.h>

#include "tierfs/pagemap.h"

struct pagepool;

struct pagepool_stats {
	uint64_t nr_pages_max;	    /* address space reserved, in pages */
	uint64_t nr_in_use;	    /* pages handed out and not yet returned */
	uint64_t nr_ready;	    /* free pages backed by memory */
	uint64_t nr_ready_target;   /* the stock the refill thread keeps */
	uint64_t nr_backed;	    /* pages backed by memory: in use + ready */
	uint64_t nr_slow_allocs;    /* allocations that had to populate memory themselves */
	uint64_t nr_trimmed;	    /* free pages given back to the kernel */
	uint64_t nr_alloc_failures; /* allocations refused: address space full */
};

/*
 * Reserve address space for max_pages pages; nothing is touched yet.
 * ready_pages is the number of free, populated pages the refill thread
 * keeps at hand; free pages beyond 4 * ready_pages that stay unused for a
 * second go back to the kernel.
 * Returns 0 or -errno.
 */
int pagepool_new(uint64_t max_pages, uint64_t ready_pages, struct pagepool **out);

/*
 * Start the refill thread (after any fork: threads do not survive one).
 * Without it the pool still works, populating on demand.  Returns 0 or
 * -errno.
 */
int pagepool_start(struct pagepool *pool);

/* Stop the thread and unmap everything.  No page may be in use after. */
void pagepool_destroy(struct pagepool *pool);

/*
 * A page's number (pfn, for the page map) or -ENOSPC when the reserved
 * space is used up.  The page's contents are undefined.  Thread-safe.
 */
int64_t pagepool_alloc(struct pagepool *pool);

/*
 * Give free pages beyond keep back to the kernel now, coldest first (a
 * memory limit cannot wait for the idle trim).  Thread-safe.
 */
void pagepool_trim(struct pagepool *pool, uint64_t keep);

/* Give a page back.  Thread-safe. */
void pagepool_free_page(struct pagepool *pool, uint32_t pfn);

/* The page's memory: PAGE_SIZE bytes. */
void *pagepool_addr(const struct pagepool *pool, uint32_t pfn);

void pagepool_get_stats(struct pagepool *pool, struct pagepool_stats *st);

/* Pages in use now, without taking the lock (for budget checks). */
uint64_t pagepool_nr_in_use(struct pagepool *pool);

#endif
