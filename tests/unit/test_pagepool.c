// SPDX-License-Identifier: MIT
/*
 * Unit tests of the page pool: limits, distinct and usable pages, the
 * counters, the refill thread's stock and trimming, and concurrent use.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tierfs/pagepool.h"
#include "check.h"

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait up to 3 s for the refill thread to bring nr_ready into [lo, hi]. */
static bool wait_ready(struct pagepool *pool, uint64_t lo, uint64_t hi, struct pagepool_stats *st)
{
	for (int i = 0; i < 300; i++) {
		pagepool_get_stats(pool, st);
		if (st->nr_ready >= lo && st->nr_ready <= hi)
			return true;
		sleep_ms(10);
	}
	return false;
}

static void test_new_limits(void)
{
	struct pagepool *pool = NULL;

	CHECK_EQ(-EINVAL, pagepool_new(0, 0, &pool));
	CHECK_EQ(-EINVAL, pagepool_new((uint64_t)UINT32_MAX + 1, 0, &pool));
	CHECK(pool == NULL);
}

/* Without the refill thread: every allocation populates on demand. */
static void test_no_thread(void)
{
	enum { NR = 100 };
	struct pagepool *pool;
	struct pagepool_stats st;
	int64_t pfn[NR];
	unsigned char seen[NR] = { 0 };
	unsigned int nr_bad_pfn = 0, nr_dup = 0, nr_bad_addr = 0, nr_bad_data = 0;

	if (!CHECK_EQ(0, pagepool_new(NR, 8, &pool)))
		return;
	pagepool_get_stats(pool, &st);
	CHECK_EQ(NR, st.nr_pages_max);
	CHECK_EQ(0, st.nr_in_use);
	CHECK_EQ(0, st.nr_ready);
	CHECK_EQ(0, st.nr_backed);
	CHECK_EQ(0, st.nr_alloc_failures);

	for (int i = 0; i < NR; i++) {
		pfn[i] = pagepool_alloc(pool);
		if (pfn[i] < 0 || pfn[i] >= NR) {
			nr_bad_pfn++;
			continue;
		}
		if (seen[pfn[i]]++)
			nr_dup++;
	}
	CHECK_EQ(0, nr_bad_pfn);
	CHECK_EQ(0, nr_dup);
	if (nr_bad_pfn)
		goto destroy;

	/* Pages are PAGE_SIZE apart, aligned, and hold what is written. */
	for (int i = 0; i < NR; i++) {
		char *p = pagepool_addr(pool, (uint32_t)pfn[i]);

		if ((uintptr_t)p % PAGE_SIZE ||
		    (char *)pagepool_addr(pool, (uint32_t)pfn[i] + 1) - p != (ptrdiff_t)PAGE_SIZE)
			nr_bad_addr++;
		memset(p, i + 1, PAGE_SIZE);
	}
	for (int i = 0; i < NR; i++) {
		unsigned char *p = pagepool_addr(pool, (uint32_t)pfn[i]);

		if (p[0] != i + 1 || p[PAGE_SIZE - 1] != i + 1)
			nr_bad_data++;
	}
	CHECK_EQ(0, nr_bad_addr);
	CHECK_EQ(0, nr_bad_data);

	pagepool_get_stats(pool, &st);
	CHECK_EQ(NR, st.nr_in_use);
	CHECK_EQ(0, st.nr_ready);
	CHECK_EQ(NR, st.nr_backed);
	CHECK(st.nr_slow_allocs >= 1);

	/* Full: refused and counted. */
	CHECK_EQ(-ENOSPC, pagepool_alloc(pool));
	CHECK_EQ(-ENOSPC, pagepool_alloc(pool));
	pagepool_get_stats(pool, &st);
	CHECK_EQ(2, st.nr_alloc_failures);
	CHECK_EQ(NR, st.nr_in_use);

	/* Freed pages come back as ready ones, and can be had again. */
	for (int i = 0; i < NR; i++)
		pagepool_free_page(pool, (uint32_t)pfn[i]);
	pagepool_get_stats(pool, &st);
	CHECK_EQ(0, st.nr_in_use);
	CHECK_EQ(NR, st.nr_ready);
	CHECK_EQ(NR, st.nr_backed);
	memset(seen, 0, sizeof(seen));
	nr_bad_pfn = nr_dup = 0;
	for (int i = 0; i < NR; i++) {
		pfn[i] = pagepool_alloc(pool);
		if (pfn[i] < 0 || pfn[i] >= NR)
			nr_bad_pfn++;
		else if (seen[pfn[i]]++)
			nr_dup++;
	}
	CHECK_EQ(0, nr_bad_pfn);
	CHECK_EQ(0, nr_dup);
	CHECK_EQ(-ENOSPC, pagepool_alloc(pool));
	for (int i = 0; i < NR; i++)
		if (pfn[i] >= 0)
			pagepool_free_page(pool, (uint32_t)pfn[i]);
	pagepool_get_stats(pool, &st);
	CHECK_EQ(0, st.nr_in_use);
destroy:
	pagepool_destroy(pool);
}

/* A one-page pool: the smallest there is. */
static void test_one_page(void)
{
	struct pagepool *pool;
	int64_t pfn;

	if (!CHECK_EQ(0, pagepool_new(1, 0, &pool)))
		return;
	pfn = pagepool_alloc(pool);
	CHECK_EQ(0, pfn);
	CHECK_EQ(-ENOSPC, pagepool_alloc(pool));
	if (pfn >= 0)
		pagepool_free_page(pool, (uint32_t)pfn);
	CHECK_EQ(0, pagepool_alloc(pool));
	pagepool_free_page(pool, 0);
	pagepool_destroy(pool);
}

/* The refill thread keeps a stock between ready_pages and 4 * ready_pages. */
static void test_refill_and_trim(void)
{
	enum { MAX = 4096, READY = 64, NR = 1500 };
	static int64_t pfn[NR];
	static unsigned char seen[MAX];
	struct pagepool *pool;
	struct pagepool_stats st;
	unsigned int nr_bad = 0, nr_dup = 0;

	if (!CHECK_EQ(0, pagepool_new(MAX, READY, &pool)))
		return;
	if (!CHECK_EQ(0, pagepool_start(pool)))
		goto destroy;
	CHECK(wait_ready(pool, READY, 4 * READY, &st));
	CHECK_EQ(0, st.nr_in_use);

	for (int i = 0; i < NR; i++) {
		pfn[i] = pagepool_alloc(pool);
		if (pfn[i] < 0 || pfn[i] >= MAX) {
			nr_bad++;
			continue;
		}
		if (seen[pfn[i]]++)
			nr_dup++;
		*(volatile char *)pagepool_addr(pool, (uint32_t)pfn[i]) = 1;
	}
	CHECK_EQ(0, nr_bad);
	CHECK_EQ(0, nr_dup);
	pagepool_get_stats(pool, &st);
	CHECK_EQ(NR - nr_bad, st.nr_in_use);
	CHECK_EQ(st.nr_in_use + st.nr_ready, st.nr_backed);

	/* Everything back: the surplus goes back to the kernel. */
	for (int i = 0; i < NR; i++)
		if (pfn[i] >= 0)
			pagepool_free_page(pool, (uint32_t)pfn[i]);
	CHECK(wait_ready(pool, READY, 4 * READY, &st));
	CHECK_EQ(0, st.nr_in_use);
	CHECK(st.nr_trimmed > 0);
	CHECK_EQ(st.nr_ready, st.nr_backed);

	/* Trimmed pages are usable again. */
	nr_bad = 0;
	for (int i = 0; i < NR; i++) {
		pfn[i] = pagepool_alloc(pool);
		if (pfn[i] < 0) {
			nr_bad++;
			continue;
		}
		memset(pagepool_addr(pool, (uint32_t)pfn[i]), 0x5a, PAGE_SIZE);
	}
	CHECK_EQ(0, nr_bad);
	for (int i = 0; i < NR; i++)
		if (pfn[i] >= 0)
			pagepool_free_page(pool, (uint32_t)pfn[i]);
destroy:
	pagepool_destroy(pool);
}

/* ready_pages beyond the pool's size is clamped to it. */
static void test_ready_clamped(void)
{
	struct pagepool *pool;
	struct pagepool_stats st;

	if (!CHECK_EQ(0, pagepool_new(10, 1000, &pool)))
		return;
	if (CHECK_EQ(0, pagepool_start(pool))) {
		CHECK(wait_ready(pool, 10, 10, &st));
		CHECK_EQ(10, st.nr_backed);
	}
	pagepool_destroy(pool);
}

struct worker {
	struct pagepool *pool;
	unsigned int id;
	unsigned int nr_bad;
};

/* Each worker stamps its pages and checks nobody else was handed them. */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	int64_t held[64];

	for (int round = 0; round < 300; round++) {
		int nr = 0;

		for (int i = 0; i < 64; i++) {
			held[nr] = pagepool_alloc(w->pool);
			if (held[nr] < 0)
				continue;
			memset(pagepool_addr(w->pool, (uint32_t)held[nr]), (int)w->id, 64);
			nr++;
		}
		for (int i = 0; i < nr; i++) {
			unsigned char *p = pagepool_addr(w->pool, (uint32_t)held[i]);

			for (int k = 0; k < 64; k++)
				if (p[k] != w->id) {
					w->nr_bad++;
					break;
				}
			pagepool_free_page(w->pool, (uint32_t)held[i]);
		}
	}
	return NULL;
}

static void test_concurrent(void)
{
	enum { NR_WORKERS = 4 };
	struct worker w[NR_WORKERS];
	pthread_t t[NR_WORKERS];
	struct pagepool *pool;
	struct pagepool_stats st;
	unsigned int nr_bad = 0;

	/* Smaller than the workers' demand: allocation failures happen too. */
	if (!CHECK_EQ(0, pagepool_new(200, 16, &pool)))
		return;
	if (!CHECK_EQ(0, pagepool_start(pool)))
		goto destroy;
	for (unsigned int i = 0; i < NR_WORKERS; i++) {
		w[i] = (struct worker){ pool, i + 1, 0 };
		pthread_create(&t[i], NULL, worker_run, &w[i]);
	}
	for (unsigned int i = 0; i < NR_WORKERS; i++) {
		pthread_join(t[i], NULL);
		nr_bad += w[i].nr_bad;
	}
	CHECK_EQ(0, nr_bad);
	pagepool_get_stats(pool, &st);
	CHECK_EQ(0, st.nr_in_use);
	CHECK(st.nr_backed <= 200);
destroy:
	pagepool_destroy(pool);
}

int main(void)
{
	test_new_limits();
	test_no_thread();
	test_one_page();
	test_refill_and_trim();
	test_ready_clamped();
	test_concurrent();
	return check_done("pagepool");
}
