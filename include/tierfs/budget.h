/* SPDX-License-Identifier: MIT */
/*
 * The memory budget: how many pages may be resident.  mem= caps resident
 * pages; a memory limit (memlimit=, later the daemon's cgroup) caps the
 * whole footprint of the data, so the resident budget shrinks as a RAM
 * backend's pool, the page stock and the page descriptors grow.  When even
 * the smallest resident budget no longer fits, a RAM backend takes no more
 * stores and writes fail with ENOSPC instead of the daemon being killed.
 */
#ifndef TIERFS_BUDGET_H
#define TIERFS_BUDGET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct backend_stats;
struct data_space;

/*
 * The budget of a data space (ds->budget).  The atomics are written under
 * lock and read without it; the rest is read and written under lock.
 */
struct budget {
	atomic_uint_fast64_t mem_pages;		/* resident budget now: the hard limit */
	atomic_uint_fast64_t high_pages;	/* reclaimer wakes above high, */
	atomic_uint_fast64_t low_pages;		/* stops at low */
	atomic_bool is_pool_full;		/* the limit allows no RAM backend growth */
	atomic_uint_fast64_t full_stored_pages; /* what the pool held as it filled */
	atomic_bool is_backend_tight;		/* no room to keep clean copies */
	atomic_uint_fast64_t capacity_x1024;	/* weighted pages data may use; 0 = no bound */
	atomic_uint_fast64_t filled_weight;	/* of a page using no memory yet, x1024 */
	pthread_mutex_t lock;
	uint64_t mem_cap_pages;	     /* mem=; 0 = none */
	uint64_t limit_bytes;	     /* memlimit=; 0 = none */
	uint64_t env_limit_bytes;    /* the cgroup's limit, or RAM's; 0 = none */
	uint64_t stamp_ns;	     /* last update, CLOCK_MONOTONIC */
	uint64_t excess_floor_bytes; /* least memory beyond the model since a trim */
	uint64_t other_bytes;	     /* the limit's part not for data, last followed */
	uint64_t meta_seen_bytes;    /* meta_bytes at the last update */
	uint64_t pool_max_bytes;     /* pool_max=SIZE of a chain's RAM tier, */
	unsigned int pool_max_pct;   /* or N% of the limit */
	bool is_pool_max_pct;
	/* What the rest of the limited cgroup holds, page cache aside. */
	atomic_uint_fast64_t others_bytes;
	/* The FUSE transport's buffers (mapped); written by the edge, lock or not. */
	atomic_uint_fast64_t transport_bytes;
	/*
	 * The namespace's memory (inodes, names, symlink targets, xattrs,
	 * open directories), charged by the namespace as it allocates, and
	 * the most it may hold until the next update: under a limit, what
	 * the resident pages can give up down to BUDGET_MIN_PAGES, at most
	 * a quarter of the headroom ahead of what is free now; UINT64_MAX
	 * without a limit (nr_inodes= bounds it then, as on tmpfs).
	 */
	atomic_uint_fast64_t meta_bytes;
	atomic_uint_fast64_t meta_max_bytes;
	/* The highest footprint and RAM pool seen since mount or the last reset. */
	atomic_uint_fast64_t peak_footprint_bytes;
	atomic_uint_fast64_t peak_pool_bytes;
	atomic_uint_fast64_t peak_mark_pages; /* data at the last sample from charge() */
};

/* What the file data costs in memory, in bytes. */
struct budget_footprint {
	uint64_t resident;    /* pool pages holding data */
	uint64_t stock;	      /* populated free pool pages */
	uint64_t backend;     /* a RAM backend's or tier's pool; 0 for the file backend */
	uint64_t descriptors; /* one struct lru_page per populated pool page */
	uint64_t transport;   /* the FUSE transport's buffers (the io_uring ring) */
	uint64_t meta;	      /* the namespace: inodes, names, targets, xattrs */
	uint64_t total;
};

/*
 * Memory kept free under a limit: the daemon's threads, request buffers and
 * codecs, and room for the kernel to reclaim page cache charged to the same
 * cgroup before it would have to kill: 24 MiB plus 1/16 of the limit.
 */
#define BUDGET_HEADROOM (24ULL << 20)
#define BUDGET_HEADROOM_SHIFT 4

/*
 * Memory the footprint does not model (heap, stacks, libfuse's request
 * buffers) that the headroom takes; measured beyond it, it counts.
 */
#define BUDGET_EXCESS_FREE (8ULL << 20)

/* The smallest resident budget, in pages: reclaim needs room for a few batches. */
#define BUDGET_MIN_PAGES 256

/* The smallest memory limit that leaves room for the smallest budget. */
#define BUDGET_MIN_LIMIT (BUDGET_HEADROOM + (8ULL << 20))

/*
 * The budget's lock and the limit of the surroundings (as
 * budget_set_env_limit; 0: none), before any cap is set; by space_init.
 */
void budget_init(struct budget *b, uint64_t env_limit_bytes);
void budget_fini(struct budget *b);

/*
 * The footprint now, and in bs (unless NULL) the backend's stats it was
 * taken from, zero without one; the peaks are at least what both show.
 */
void budget_footprint(struct data_space *ds, struct budget_footprint *out,
		      struct backend_stats *bs);

/*
 * The budget does not wake the reclaimer itself (reclaim depends on the
 * budget, not the other way round): the calls that recompute it return
 * whether it shrank below the pages in use, and then the caller calls
 * reclaim_kick.
 *
 * Set the caps: mem_bytes on resident pages (0: none besides the limit),
 * limit_bytes on the footprint plus BUDGET_HEADROOM (0: none), then
 * recompute.  Takes effect at once.  Returns 1 if the budget shrank below
 * the pages in use, 0 if not, or -EINVAL if no cap would be left (neither
 * is set and there is no limit from the surroundings).
 */
int budget_set(struct data_space *ds, uint64_t mem_bytes, uint64_t limit_bytes);

/*
 * The caps budget_set() last took, both read in one hold of its lock:
 * mem= in bytes and memlimit=, 0 = none.
 */
void budget_get_caps(struct data_space *ds, uint64_t *mem_bytes, uint64_t *limit_bytes);

/*
 * The limit the daemon's surroundings set: its memory cgroup's, or for a
 * RAM backend with none the memory the machine had available; 0 = none.
 * The tighter of it and memlimit= bounds the footprint.  Lifted to 0 with
 * no mem= or memlimit=, the budget in force stays as mem=.  Returns whether
 * the budget shrank below the pages in use: the caller kicks the reclaimer.
 */
bool budget_set_env_limit(struct data_space *ds, uint64_t limit_bytes);

/* The footprint limit in force, in bytes; 0 = none. */
uint64_t budget_limit(struct data_space *ds);

/*
 * What the rest of the cgroup whose limit is env_limit_bytes holds, page
 * cache aside (its processes' memory, the kernel's for them: dentries and
 * inodes they pin, socket buffers): the limit's part the daemon cannot
 * have.  Past BUDGET_EXCESS_FREE it comes off that limit, so the daemon
 * gives way (evicts, refuses metadata) before the cgroup's OOM killer would
 * have to pick, and the daemon, holding every file, is the biggest pick.
 * Returns whether the budget shrank below the pages in use, as
 * budget_set_env_limit().
 */
bool budget_set_others(struct data_space *ds, uint64_t bytes);

/* The daemon's anonymous memory now (/proc/self/statm), in bytes. */
uint64_t budget_rss_anon_bytes(void);

/*
 * A chain's RAM tier bound: pool_max= as bytes, or pct % of the limit in
 * force when is_pct, and never above half of that limit, so the resident
 * pages keep the rest; the backend follows it from every update.
 * budget_pool_max() is the bound in force.
 */
bool budget_set_pool_max(struct data_space *ds, uint64_t bytes, unsigned int pct, bool is_pct);
uint64_t budget_pool_max(struct data_space *ds);

/*
 * Capacity: every present page counts, as against size=.  Without a RAM
 * pool under a limit, the resident budget and the backend's slots hold one
 * page each; with one, the memory the limit leaves holds pages at the
 * pool's measured cost, and a page using no memory yet (same-filled,
 * fallocated) is counted at its cost stored raw, so that writing it later
 * always fits.  Refreshed by budget_update.
 *
 * Whether the pages counted in ds->nr_pages fit, nr_more_filled of them
 * about to hold no memory yet (fallocated).  The caller has added them.
 */
bool budget_fits(struct data_space *ds, uint64_t nr_more_filled);

/* Whether nr_pages more written pages would fit, without counting them. */
bool budget_has_room(struct data_space *ds, uint64_t nr_pages);

/*
 * Pages reclaim may store now: any number, unless a RAM pool fills the
 * memory limit (is_pool_full).  Then as many as it held when it filled
 * less what it holds now: loads and frees since left that many holes in
 * the memory it has, so storing into them costs nothing, where refusing
 * would keep every page read resident past the budget.
 */
uint64_t budget_store_room(struct data_space *ds);

/*
 * Pages that can still be written: the smaller of what size= and the
 * capacity leave (what df shows); UINT64_MAX when neither bounds.  In
 * *nr_used (unless NULL) the present pages it was taken against, so that
 * the two add up to df's size.
 */
uint64_t budget_nr_free_pages(struct data_space *ds, uint64_t *nr_used);

/*
 * Recompute the resident budget and the watermarks from the caps and the
 * current footprint.  Cheap enough to call after each reclaim batch; does
 * the work at most every few milliseconds unless force.  Returns whether
 * the budget shrank below the pages in use.
 */
bool budget_update(struct data_space *ds, bool force);

/*
 * budget_update unless the last one ran within those few milliseconds;
 * waits for one in progress instead of skipping it.  For a caller about
 * to refuse on an estimate that may be stale, without paying a full
 * recomputation for each refusal.
 */
bool budget_refresh(struct data_space *ds);

/*
 * The peaks, as zram's mem_used_max: the footprint and the backend's
 * pool_bytes are sampled at every budget update (during reclaim, at most
 * every 5 ms; statfs, a limit change), at every stats
 * read, and when a charge finds the data BUDGET_PEAK_STEP pages away from
 * where the last such sample saw it, so a peak is never below what stats
 * showed; a high between two samples can be missed.
 * budget_sample_peaks() takes a sample now; budget_reset_peaks() starts
 * the peaks again from what is held now.
 */
#define BUDGET_PEAK_STEP 256
void budget_sample_peaks(struct data_space *ds);
void budget_reset_peaks(struct data_space *ds);

/*
 * The namespace's memory.  budget_charge_meta() takes bytes for something
 * about to be allocated: 0, or -ENOSPC when the limit leaves no room for
 * it even with the resident pages evicted down to the smallest budget.
 * Past the room the last update left, it updates the budget first (the
 * resident budget shrinks by what metadata took: the caller kicks the
 * reclaimer when *has_shrunk); metadata runs at most a quarter of the
 * headroom ahead of the memory free now while the reclaimer catches up.
 * Takes budget.lock only past that room; the caller may hold ns->lock and
 * an inode's lock.
 * budget_add_meta() adds delta bytes whatever the room: negative for what
 * is freed, positive for what must not fail (what a request that frees
 * more needs for a moment, what the kernel's own limits bound).
 */
int budget_charge_meta(struct data_space *ds, uint64_t bytes, bool *has_shrunk);
void budget_add_meta(struct data_space *ds, int64_t delta);

/* From charge(): a sample when nr_pages is a step away from the last one. */
void budget_note_growth(struct data_space *ds, uint64_t nr_pages);

#endif
