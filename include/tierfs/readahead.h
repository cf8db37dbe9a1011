/* SPDX-License-Identifier: MIT */
/*
 * Swap-in readahead: which swapped pages besides the ones a read needs are
 * loaded with them.  direct loads none (synchronous RAM backends, where
 * readahead only burns CPU and memory); cluster the pages of the file whose
 * slots lie in the aligned slot window of the faulting page; vma the
 * swapped pages at neighbouring offsets of the file, in the direction the
 * reads go, within its 2 MiB region.  The window adapts like the kernel's
 * swapin_nr_pages: hits on pages read ahead since the last fault grow it,
 * it never shrinks faster than halving, and it is capped.
 */
#ifndef TIERFS_READAHEAD_H
#define TIERFS_READAHEAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct inode;
struct tier_backend;

enum readahead_policy { READAHEAD_AUTO, READAHEAD_DIRECT, READAHEAD_CLUSTER, READAHEAD_VMA };

/* Largest window, in pages, the faulting page included. */
#define READAHEAD_MAX_WINDOW 32

/* vma readahead stays within a region of this many pages (2 MiB). */
#define READAHEAD_VMA_REGION 512

/* Window sizes the histogram counts: 1, 2, 4, ... READAHEAD_MAX_WINDOW. */
#define READAHEAD_NR_BUCKETS 6

/* State and counters, shared by all files; lock-free. */
struct readahead {
	_Atomic int policy;		    /* enum readahead_policy as set */
	bool is_page_cache;		    /* reads come through the kernel's page cache */
	atomic_uint window;		    /* the last window chosen */
	atomic_uint_fast64_t nr_hits_since; /* hits since the last window was chosen */
	atomic_uint_fast64_t nr_hits;	    /* pages read ahead, then used */
	atomic_uint_fast64_t nr_misses;	    /* pages read ahead, evicted or freed unused */
	atomic_uint_fast64_t nr_pages;	    /* pages read ahead */
	atomic_uint_fast64_t hist[READAHEAD_NR_BUCKETS]; /* windows chosen, by size */
};

void readahead_init(struct readahead *ra, enum readahead_policy policy);

/* Parse "auto", "direct", "cluster" or "vma".  Returns 0 or -EINVAL. */
int readahead_parse(const char *s, enum readahead_policy *out);

const char *readahead_name(enum readahead_policy policy);

/*
 * The policy in force: auto resolved for backend (NULL: direct), a chain's
 * last tier, and for how reads come (the page cache reads ahead itself).
 */
enum readahead_policy readahead_effective(const struct readahead *ra,
					  const struct tier_backend *backend);

/* The same for a fault on slot: in a chain, auto is the policy of the tier holding it. */
enum readahead_policy readahead_effective_at(const struct readahead *ra,
					     struct tier_backend *backend, uint64_t slot);

/*
 * Choose the window for a fault, in pages with the faulting one; 1 means
 * no readahead.  is_sequential: the fault is next to the previous one.
 */
unsigned int readahead_window(struct readahead *ra, bool is_sequential);

/* A page read ahead was used. */
static inline void readahead_hit(struct readahead *ra)
{
	atomic_fetch_add_explicit(&ra->nr_hits, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ra->nr_hits_since, 1, memory_order_relaxed);
}

/*
 * Swapped pages of inode worth loading with the faulting range [first,
 * last] (whose first swapped page has slot fault_slot): up to window - 1
 * of them, by policy, outside the range, into idx and slots (at most
 * READAHEAD_MAX_WINDOW).  is_backward: the reads go down the file.  The
 * inode's lock held.  Returns how many.
 */
unsigned int readahead_collect(enum readahead_policy policy, const struct inode *inode,
			       uint64_t first, uint64_t last, uint64_t fault_slot, bool is_backward,
			       unsigned int window, uint64_t *idx, uint64_t *slots);

#endif
