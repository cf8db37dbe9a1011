/* SPDX-License-Identifier: MIT */
/*
 * The active/inactive lists of resident pages, the kernel's two-list LRU: a
 * page enters the inactive list; used twice while there it is promoted on
 * the next scan; reclaim takes its victims from the inactive tail, so a
 * page written once and read once (a streaming pass) goes before the
 * working set.
 */
#ifndef TIERFS_LRU_H
#define TIERFS_LRU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct inode;

enum lru_list { LRU_INACTIVE, LRU_ACTIVE, NR_LRU_LISTS };

#define LRU_NIL UINT32_MAX

/*
 * What tierfs knows of one pool page (indexed by pfn).  index, swap_slot and
 * the writeback flags change under the owner inode's lock; inode under that
 * lock and, while is_writeback, lru->lock too; the links and list under
 * lru->lock; uses is atomic (counted without any lock on access).
 *
 * A page under writeback is off the lists and still resident: reclaim is
 * storing it with no inode lock held.  A write sets is_redirtied (the copy
 * being stored is stale); freeing it only clears inode (orphaned) and leaves
 * the pool page to reclaim, which is reading it.  While the backend reads
 * the page (is_storing) a write waits for it, as the kernel's stable pages
 * do: a copy made under a memcpy is torn, and it is a data race.
 */
struct lru_lists;

struct lru_page {
	struct inode *inode;	  /* owner, while resident; NULL: free or orphaned */
	struct lru_lists *lists;  /* the lists it is on, or was isolated from */
	uint64_t index;		  /* page index in the owner */
	uint64_t swap_slot;	  /* slot + 1 of a clean backend copy, 0 if none */
	uint32_t prev, next;	  /* pfn links, LRU_NIL at the ends */
	uint8_t list;		  /* enum lru_list + 1; 0 when on none */
	bool is_writeback;	  /* being stored by reclaim */
	bool is_redirtied;	  /* written while under writeback */
	atomic_bool is_storing;	  /* the backend is reading it: writes wait */
	atomic_uchar uses;	  /* enum lru_uses, since listed or scanned */
	atomic_bool is_readahead; /* loaded by readahead, not used yet */
};

/*
 * A page's uses since it was listed or last scanned.  A page loaded for a
 * read is LRU_LOADED until the read uses it: that use is the first, not a
 * second (a streaming pass reads each page once), yet a scan before it
 * gives the page one more pass of the inactive list, so that a request
 * bringing in many pages does not evict its first ones for its last.  A
 * page moved to the inactive list from the active one is LRU_USED_ONCE:
 * one more use takes it back.
 */
enum lru_uses { LRU_UNUSED, LRU_USED_ONCE, LRU_USED_TWICE, LRU_LOADED };

/*
 * One pair of lists: the pages of files no tenant owns (lru->root), or one
 * tenant's.  Links, nr and the scan record under lru->lock; the counters
 * are atomic.
 */
struct lru_lists {
	uint32_t head[NR_LRU_LISTS], tail[NR_LRU_LISTS];
	uint64_t nr[NR_LRU_LISTS];
	/*
	 * Its recent inactive-tail scans: pages looked at, those of them
	 * found used twice and promoted instead of evicted (both halved as
	 * they outgrow the lists), and lru->scan_clock at the last one.
	 */
	uint64_t nr_scanned, nr_rotated, scanned_at;
	atomic_uint_fast64_t nr_resident; /* pages held, listed or being stored */
	atomic_uint_fast64_t nr_swapped;  /* pages of its files in the backend */
	atomic_uint_fast64_t limit_pages; /* resident share; 0 = none */
};

/* Most lists (tenants, the root included) one LRU holds. */
#define LRU_MAX_LISTS 64

struct lru {
	pthread_mutex_t lock;
	struct lru_page *pages; /* one per pool page */
	uint64_t nr_pages;
	struct lru_lists root;
	struct lru_lists *all[LRU_MAX_LISTS]; /* root first; lock */
	unsigned int nr_all;
	uint64_t scan_clock; /* pages scans evicted or promoted; lock */
};

/* Descriptors for nr_pages pool pages (address space only, touched on use). */
int lru_init(struct lru *lru, uint64_t nr_pages);

/* Empty lists, to be registered. */
void lru_lists_init(struct lru_lists *l);

/* Make l one of lru's (it must live as long).  Returns 0 or -ENOSPC. */
int lru_register(struct lru *lru, struct lru_lists *l);

/* Pages on both of l's lists.  lru->lock held (or no reclaim running). */
static inline uint64_t lru_lists_nr_listed(const struct lru_lists *l)
{
	return l->nr[LRU_INACTIVE] + l->nr[LRU_ACTIVE];
}

/* Whether l, with nr_more more resident pages, would be at its share (limit_pages) or past it. */
static inline bool lru_lists_is_at_share(struct lru_lists *l, uint64_t nr_more)
{
	uint64_t limit = atomic_load(&l->limit_pages);

	return limit && atomic_load(&l->nr_resident) + nr_more >= limit;
}

/* Pages on the inactive or active lists of all the lists. */
uint64_t lru_nr_listed(struct lru *lru, enum lru_list list);
void lru_destroy(struct lru *lru);

static inline struct lru_page *lru_page(struct lru *lru, uint32_t pfn)
{
	return &lru->pages[pfn];
}

/* A page became resident in inode at index: onto the inactive head of lists. */
void lru_add(struct lru *lru, struct lru_lists *lists, uint32_t pfn, struct inode *inode,
	     uint64_t index, uint64_t swap_slot);

/*
 * The page is being freed: off the lists, no owner.  Returns false when it
 * is under writeback (orphaned: reclaim frees the pool page when its store
 * is done), true when the caller frees it.  The owner's lock held.
 */
bool lru_del_unless_writeback(struct lru *lru, uint32_t pfn);

/*
 * Count an access, lock-free (two racing ones may count as one): a page
 * used twice is promoted by the next scan.
 */
static inline void lru_touch(struct lru *lru, uint32_t pfn)
{
	atomic_uchar *uses = &lru->pages[pfn].uses;
	unsigned char u = atomic_load_explicit(uses, memory_order_relaxed);

	if (u != LRU_USED_TWICE)
		atomic_store_explicit(uses, u == LRU_USED_ONCE ? LRU_USED_TWICE : LRU_USED_ONCE,
				      memory_order_relaxed);
}

/* The page was just loaded for a read that will use it. */
static inline void lru_mark_loaded(struct lru *lru, uint32_t pfn)
{
	atomic_store_explicit(&lru->pages[pfn].uses, LRU_LOADED, memory_order_relaxed);
}

/* Move a listed page to the head of list to.  lru->lock held. */
void lru_rotate_locked(struct lru *lru, uint32_t pfn, enum lru_list to);

/* Unlink a page; lru->lock held. */
void lru_del_locked(struct lru *lru, uint32_t pfn);

#endif
