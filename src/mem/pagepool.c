// SPDX-License-Identifier: MIT
/*
 * Pre-touched, recycled page pool.  One reserved mapping; a page is its
 * offset in it.  A refill thread keeps a stock of populated free pages and
 * hands surplus back to the kernel, so neither a write nor an unlink pays
 * for page faults or munmap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tierfs/pagepool.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define CHUNK_PAGES 512 /* 2 MiB: one huge page, one populate call */
#define TRIM_INTERVAL_SEC 1

/*
 * lock protects everything below it.  The free pages are two stacks: ready
 * (populated) and cold (given back with MADV_DONTNEED, to be populated again
 * before use); never-used pages are those from next_fresh up.
 */
struct pagepool {
	char *base; /* PAGE_SIZE-aligned start of the pages */
	void *map;  /* the whole reservation, for munmap */
	size_t map_len;
	uint64_t nr_max;       /* pages in the reservation */
	uint64_t ready_target; /* stock the refill thread keeps */

	pthread_mutex_t lock;
	pthread_cond_t wake; /* refill thread sleeps here */
	uint32_t *ready;     /* stack of populated free pages */
	uint64_t nr_ready;
	uint64_t min_ready; /* lowest nr_ready since the last trim tick */
	uint32_t *cold;	    /* stack of unpopulated free pages */
	uint64_t nr_cold;
	uint64_t next_fresh;		/* first never-used page */
	atomic_uint_fast64_t nr_in_use; /* read without the lock by the budget */
	uint64_t nr_slow_allocs;
	uint64_t nr_trimmed;
	uint64_t nr_alloc_failures;
	bool stop;
	bool has_thread;
	pthread_t thread;
};

void *pagepool_addr(const struct pagepool *pool, uint32_t pfn)
{
	return pool->base + ((size_t)pfn << PAGE_SHIFT);
}

/* Call fn on each run of consecutive pages in pfns (sorted in place). */
static int cmp_pfn(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void for_each_run(struct pagepool *pool, uint32_t *pfns, uint64_t nr,
			 void (*fn)(struct pagepool *pool, uint64_t pfn, uint64_t nr))
{
	qsort(pfns, nr, sizeof(*pfns), cmp_pfn);
	for (uint64_t i = 0, start = 0; i < nr; i++) {
		if (i + 1 < nr && pfns[i + 1] == pfns[i] + 1)
			continue;
		fn(pool, pfns[start], i + 1 - start);
		start = i + 1;
	}
}

static void populate(struct pagepool *pool, uint64_t pfn, uint64_t nr)
{
	char *p = pool->base + (pfn << PAGE_SHIFT);

	/* Kernels before 5.14 lack POPULATE_WRITE: touch the pages instead. */
	if (madvise(p, nr << PAGE_SHIFT, MADV_POPULATE_WRITE) == 0)
		return;
	for (uint64_t i = 0; i < nr; i++)
		p[i << PAGE_SHIFT] = 0;
}

/*
 * Take up to want pages that are not yet populated: fresh ones first (a
 * whole chunk populates in one call), then cold ones.  Called with lock held;
 * drops it while populating.  Returns how many were added to the ready stack.
 */
static uint64_t refill_locked(struct pagepool *pool, uint64_t want)
{
	uint32_t batch[CHUNK_PAGES];
	uint64_t nr = 0, first;

	if (pool->next_fresh < pool->nr_max) {
		first = pool->next_fresh;
		nr = pool->nr_max - first;
		if (nr > CHUNK_PAGES)
			nr = CHUNK_PAGES;
		pool->next_fresh += nr;
		pthread_mutex_unlock(&pool->lock);
		populate(pool, first, nr);
		pthread_mutex_lock(&pool->lock);
		for (uint64_t i = nr; i-- > 0;)
			pool->ready[pool->nr_ready++] = (uint32_t)(first + i);
		return nr;
	}
	if (want > CHUNK_PAGES)
		want = CHUNK_PAGES;
	while (nr < want && pool->nr_cold)
		batch[nr++] = pool->cold[--pool->nr_cold];
	if (!nr)
		return 0;
	pthread_mutex_unlock(&pool->lock);
	for_each_run(pool, batch, nr, populate);
	pthread_mutex_lock(&pool->lock);
	for (uint64_t i = 0; i < nr; i++)
		pool->ready[pool->nr_ready++] = batch[i];
	return nr;
}

static void discard(struct pagepool *pool, uint64_t pfn, uint64_t nr)
{
	madvise(pool->base + (pfn << PAGE_SHIFT), nr << PAGE_SHIFT, MADV_DONTNEED);
}

/*
 * Give up to nr of the coldest free pages (the bottom of the LIFO stack)
 * back to the kernel.  Called with lock held; drops it while discarding.
 */
static void trim_locked(struct pagepool *pool, uint64_t nr)
{
	uint32_t batch[CHUNK_PAGES];

	if (nr > CHUNK_PAGES)
		nr = CHUNK_PAGES;
	if (nr > pool->nr_ready)
		nr = pool->nr_ready;
	memcpy(batch, pool->ready, nr * sizeof(*batch));
	memmove(pool->ready, pool->ready + nr, (pool->nr_ready - nr) * sizeof(*batch));
	pool->nr_ready -= nr;
	if (pool->min_ready > pool->nr_ready)
		pool->min_ready = pool->nr_ready;
	pthread_mutex_unlock(&pool->lock);
	for_each_run(pool, batch, nr, discard);
	pthread_mutex_lock(&pool->lock);
	for (uint64_t i = 0; i < nr; i++)
		pool->cold[pool->nr_cold++] = batch[i];
	pool->nr_trimmed += nr;
}

/*
 * Keeps the stock up, and once a second gives back the surplus that stayed
 * unused for the whole second: pages freed by a delete and reused by the
 * next write never pay for a discard and a fault (TLB shootdowns included).
 */
static void *refill_thread(void *arg)
{
	struct pagepool *pool = arg;
	struct timespec tick;

	clock_gettime(CLOCK_MONOTONIC, &tick);
	pthread_mutex_lock(&pool->lock);
	while (!pool->stop) {
		struct timespec now;

		if (pool->nr_ready < pool->ready_target &&
		    refill_locked(pool, pool->ready_target - pool->nr_ready))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > tick.tv_sec ||
		    (now.tv_sec == tick.tv_sec && now.tv_nsec >= tick.tv_nsec)) {
			uint64_t idle = pool->min_ready;

			while (idle > pool->ready_target && !pool->stop) {
				uint64_t before = pool->nr_trimmed;

				trim_locked(pool, idle - pool->ready_target);
				idle -= pool->nr_trimmed - before;
				if (idle > pool->nr_ready)
					idle = pool->nr_ready;
			}
			pool->min_ready = pool->nr_ready;
			tick = now;
			tick.tv_sec += TRIM_INTERVAL_SEC;
		}
		pthread_cond_timedwait(&pool->wake, &pool->lock, &tick);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

void pagepool_trim(struct pagepool *pool, uint64_t keep)
{
	pthread_mutex_lock(&pool->lock);
	while (pool->nr_ready > keep) {
		uint64_t before = pool->nr_trimmed;

		trim_locked(pool, pool->nr_ready - keep);
		if (pool->nr_trimmed == before)
			break;
	}
	pthread_mutex_unlock(&pool->lock);
}

int64_t pagepool_alloc(struct pagepool *pool)
{
	int64_t pfn;

	pthread_mutex_lock(&pool->lock);
	if (!pool->nr_ready) {
		/* The thread fell behind: populate on this thread. */
		pool->nr_slow_allocs++;
		if (!refill_locked(pool, 1)) {
			pool->nr_alloc_failures++;
			pthread_mutex_unlock(&pool->lock);
			return -ENOSPC;
		}
	}
	pfn = pool->ready[--pool->nr_ready];
	if (pool->min_ready > pool->nr_ready)
		pool->min_ready = pool->nr_ready;
	atomic_fetch_add_explicit(&pool->nr_in_use, 1, memory_order_relaxed);
	if (pool->nr_ready < pool->ready_target / 2)
		pthread_cond_signal(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	return pfn;
}

void pagepool_free_page(struct pagepool *pool, uint32_t pfn)
{
	pthread_mutex_lock(&pool->lock);
	pool->ready[pool->nr_ready++] = pfn;
	atomic_fetch_sub_explicit(&pool->nr_in_use, 1, memory_order_relaxed);
	pthread_mutex_unlock(&pool->lock);
}

uint64_t pagepool_nr_in_use(struct pagepool *pool)
{
	return atomic_load_explicit(&pool->nr_in_use, memory_order_relaxed);
}

void pagepool_get_stats(struct pagepool *pool, struct pagepool_stats *st)
{
	pthread_mutex_lock(&pool->lock);
	st->nr_pages_max = pool->nr_max;
	st->nr_in_use = atomic_load(&pool->nr_in_use);
	st->nr_ready = pool->nr_ready;
	st->nr_ready_target = pool->ready_target;
	st->nr_backed = st->nr_in_use + pool->nr_ready;
	st->nr_slow_allocs = pool->nr_slow_allocs;
	st->nr_trimmed = pool->nr_trimmed;
	st->nr_alloc_failures = pool->nr_alloc_failures;
	pthread_mutex_unlock(&pool->lock);
}

int pagepool_new(uint64_t max_pages, uint64_t ready_pages, struct pagepool **out)
{
	const size_t align = (size_t)CHUNK_PAGES << PAGE_SHIFT;
	pthread_condattr_t cattr;
	struct pagepool *pool;
	int err;

	if (!max_pages || max_pages > UINT32_MAX)
		return -EINVAL;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->nr_max = max_pages;
	pool->ready_target = ready_pages < max_pages ? ready_pages : max_pages;
	pool->map_len = (max_pages << PAGE_SHIFT) + align;
	pool->map = mmap(NULL, pool->map_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pool->map == MAP_FAILED) {
		err = -errno;
		goto free_pool;
	}
	/* Align to 2 MiB so each populated chunk can be one huge page. */
	pool->base = (char *)(((uintptr_t)pool->map + align - 1) & ~(uintptr_t)(align - 1));
	madvise(pool->base, max_pages << PAGE_SHIFT, MADV_NOHUGEPAGE);

	/* The stacks are touched only as deep as they are used. */
	pool->ready = mmap(NULL, max_pages * sizeof(uint32_t), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pool->ready == MAP_FAILED) {
		err = -errno;
		goto unmap_pages;
	}
	pool->cold = mmap(NULL, max_pages * sizeof(uint32_t), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (pool->cold == MAP_FAILED) {
		err = -errno;
		goto unmap_ready;
	}
	pthread_mutex_init(&pool->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&pool->wake, &cattr);
	pthread_condattr_destroy(&cattr);
	*out = pool;
	return 0;

unmap_ready:
	munmap(pool->ready, max_pages * sizeof(uint32_t));
unmap_pages:
	munmap(pool->map, pool->map_len);
free_pool:
	free(pool);
	return err;
}

int pagepool_start(struct pagepool *pool)
{
	int err = pthread_create(&pool->thread, NULL, refill_thread, pool);

	if (err)
		return -err;
	pool->has_thread = true;
	return 0;
}

void pagepool_destroy(struct pagepool *pool)
{
	if (pool->has_thread) {
		pthread_mutex_lock(&pool->lock);
		pool->stop = true;
		pthread_cond_signal(&pool->wake);
		pthread_mutex_unlock(&pool->lock);
		pthread_join(pool->thread, NULL);
	}
	pthread_cond_destroy(&pool->wake);
	pthread_mutex_destroy(&pool->lock);
	munmap(pool->cold, pool->nr_max * sizeof(uint32_t));
	munmap(pool->ready, pool->nr_max * sizeof(uint32_t));
	munmap(pool->map, pool->map_len);
	free(pool);
}
