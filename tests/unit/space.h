/* SPDX-License-Identifier: MIT */
/*
 * A data space for the unit tests of reclaim, readahead and the LRU, built
 * by the same constructors as the daemon's, over a backend the test wraps
 * around a ramdisk,
 * and files (bare inodes) with patterned pages.  Header-only, as check.h,
 * whose counters its checks add to.
 */
#ifndef TIERFS_TESTS_UNIT_SPACE_H
#define TIERFS_TESTS_UNIT_SPACE_H

#include <sys/stat.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/data.h"
#include "tierfs/ns.h"
#include "tierfs/pagepool.h"
#include "tierfs/readahead.h"
#include "tierfs/reclaim.h"
#include "tierfs/space.h"
#include "tierfs/swapin.h"
#include "check.h"

#define P PAGE_SIZE
#define SPACE_POOL_PAGES 1024

/* A ramdisk of nr_pages for a test's backend to wrap; NULL on failure. */
static inline struct tier_backend *space_ramdisk(uint64_t nr_pages)
{
	const struct tier_backend_ops *ramdisk = backend_find("ramdisk");
	struct backend_config cfg = { .capacity_bytes = nr_pages * P };
	struct tier_backend *b = NULL;

	if (!CHECK(ramdisk != NULL) || !CHECK_EQ(0, ramdisk->create(&cfg, &b)))
		return NULL;
	return b;
}

/*
 * A data space over backend (destroyed with the space), a pool of
 * SPACE_POOL_PAGES, a resident budget of mem_pages and readahead as auto.
 */
static inline bool space_new(struct data_space *ds, struct tier_backend *backend,
			     uint64_t mem_pages)
{
	struct pagepool *pool;

	memset(ds, 0, sizeof(*ds));
	if (!CHECK(backend != NULL) || !CHECK_EQ(0, pagepool_new(SPACE_POOL_PAGES, 0, &pool)))
		return false;
	space_init(ds, pool, 0, READAHEAD_AUTO, 0);
	CHECK_EQ(0, budget_set(ds, mem_pages * P, 0));
	if (!CHECK_EQ(0, space_attach_backend(ds, backend)))
		return false;
	return CHECK_EQ(mem_pages, atomic_load(&ds->budget.mem_pages));
}

static inline uint64_t pool_in_use(struct data_space *ds)
{
	struct pagepool_stats st;

	pagepool_get_stats(ds->pool, &st);
	return st.nr_in_use;
}

static inline uint64_t backend_stored(struct data_space *ds)
{
	struct backend_stats st;

	ds->backend->ops->get_stats(ds->backend, &st);
	return st.stored_pages;
}

/* Every page released by the case: nothing may be left anywhere. */
static inline void space_destroy(struct data_space *ds)
{
	reclaim_stop(ds);
	CHECK_EQ(0, reclaim_nr_pending(&ds->reclaim));
	CHECK_EQ(0, pool_in_use(ds));
	CHECK_EQ(0, backend_stored(ds));
	CHECK_EQ(0, atomic_load(&ds->nr_pages));
	CHECK_EQ(0, atomic_load(&ds->nr_filled));
	for (unsigned int i = 0; i < ds->lru.nr_all; i++)
		CHECK_EQ(0, lru_lists_nr_listed(ds->lru.all[i]));
	space_fini(ds);
	check_clear_context();
}

static inline void file_init(struct inode *inode)
{
	memset(inode, 0, sizeof(*inode));
	inode->mode = S_IFREG | 0644;
	pthread_rwlock_init(&inode->lock, NULL);
}

/* Free the file's data with its lock held, as fs.c does, then the lock. */
static inline void file_destroy(struct data_space *ds, struct inode *inode)
{
	pthread_rwlock_wrlock(&inode->lock);
	data_release(ds, inode);
	pthread_rwlock_unlock(&inode->lock);
	pthread_rwlock_destroy(&inode->lock);
}

/* Page index of a file of pattern seed: bytes no two words of which are alike. */
static inline void pattern(unsigned char *page, unsigned int seed, uint64_t index)
{
	uint32_t x = seed * 7919u + (uint32_t)index * 104729u + 1;

	for (size_t i = 0; i < P; i++) {
		x = x * 1103515245u + 12345u;
		page[i] = (unsigned char)(x >> 24);
	}
}

/* Write pages [0, nr) of pattern seed, under the file's write lock. */
static inline void write_pages(struct data_space *ds, struct inode *inode, uint64_t nr,
			       unsigned int seed)
{
	static unsigned char page[P];

	pthread_rwlock_wrlock(&inode->lock);
	for (uint64_t i = 0; i < nr; i++) {
		pattern(page, seed, i);
		CHECK_EQ((ssize_t)P, data_write_mem(ds, inode, page, P, i * P));
	}
	pthread_rwlock_unlock(&inode->lock);
}

static inline enum pagemap_kind kind(const struct inode *inode, uint64_t index)
{
	return pagemap_kind(pagemap_get(&inode->pages, index));
}

static inline struct lru_page *lru_page_of(struct data_space *ds, const struct inode *inode,
					   uint64_t index)
{
	return lru_page(&ds->lru, pagemap_pfn(pagemap_get(&inode->pages, index)));
}

#endif
