// SPDX-License-Identifier: MIT
/*
 * The resident budget from mem= and the memory limit.  Under a limit every
 * byte the data costs outside resident pages comes off the budget, so the
 * daemon's footprint stays inside the limit however the pool grows.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/data.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"

/* How often budget_update recomputes unless forced. */
#define BUDGET_INTERVAL_NS (5 * 1000 * 1000)

/* A RAM pool shrunk by this much gives malloc's free memory back. */
#define BUDGET_TRIM_BYTES (16ULL << 20)

void budget_footprint(struct data_space *ds, struct budget_footprint *out)
{
	struct pagepool_stats ps;
	struct backend_stats bs = { 0 };

	pagepool_get_stats(ds->pool, &ps);
	if (ds->backend && ds->backend->ops->is_sync)
		ds->backend->ops->get_stats(ds->backend, &bs);
	out->resident = ps.nr_in_use * PAGE_SIZE;
	out->stock = ps.nr_ready * PAGE_SIZE;
	out->backend = bs.pool_bytes;
	out->descriptors = ds->backend ? ps.nr_backed * sizeof(struct lru_page) : 0;
	out->total = out->resident + out->stock + out->backend + out->descriptors;
}

/* Anonymous memory of the daemon, from /proc/self/statm; 0 if unknown. */
static uint64_t rss_anon_bytes(void)
{
	unsigned long long size, resident, shared;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu %llu", &size, &resident, &shared);
	fclose(f);
	return n == 3 && resident > shared ? (resident - shared) * (uint64_t)sysconf(_SC_PAGESIZE) :
					     0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* budget_lock held. */
static void update_locked(struct data_space *ds)
{
	struct pagepool_stats ps;
	uint64_t mem = ds->mem_cap_pages ? ds->mem_cap_pages : UINT64_MAX, old;
	bool is_full = false;

	pagepool_get_stats(ds->pool, &ps);
	if (ds->limit_bytes) {
		struct budget_footprint fp;
		uint64_t other, room, rss, headroom;

		/*
		 * The stock is budgeted at its target; a surplus (left by
		 * eviction or deletes) goes back now, or evicting would only
		 * grow it and shrink the budget further.
		 */
		if (ps.nr_ready > ps.nr_ready_target)
			pagepool_trim(ds->pool, ps.nr_ready_target);
		budget_footprint(ds, &fp);
		/*
		 * malloc keeps what a RAM pool frees until told to give it
		 * back, and without that the budget would count memory the
		 * daemon still holds as free.
		 */
		if (fp.backend + BUDGET_TRIM_BYTES < ds->backend_peak_bytes) {
			malloc_trim(0);
			ds->backend_peak_bytes = fp.backend;
		}
		if (fp.backend > ds->backend_peak_bytes)
			ds->backend_peak_bytes = fp.backend;
		headroom = BUDGET_HEADROOM + (ds->limit_bytes >> BUDGET_HEADROOM_SHIFT);
		other = fp.backend + fp.descriptors + ps.nr_ready_target * PAGE_SIZE + headroom;
		/* What the model misses (heap, stacks, libfuse buffers), measured. */
		rss = rss_anon_bytes();
		if (rss > fp.resident + fp.stock + other - headroom + (8ULL << 20))
			other = rss - fp.resident - fp.stock + ps.nr_ready_target * PAGE_SIZE;
		room = ds->limit_bytes > other ? (ds->limit_bytes - other) >> PAGE_SHIFT : 0;
		if (room < BUDGET_MIN_PAGES) {
			is_full = true;
			room = BUDGET_MIN_PAGES;
		}
		if (room < mem)
			mem = room;
	}
	if (mem > ps.nr_pages_max)
		mem = ps.nr_pages_max;
	if (mem < BUDGET_MIN_PAGES)
		mem = BUDGET_MIN_PAGES;
	old = atomic_exchange(&ds->mem_pages, mem);
	atomic_store(&ds->high_pages, mem - mem / 16);
	atomic_store(&ds->low_pages, mem - mem / 8);
	atomic_store(&ds->is_pool_full, is_full && ds->backend && ds->backend->ops->is_sync);
	ds->budget_stamp_ns = now_ns();
	if (mem < old && ds->backend && pagepool_nr_in_use(ds->pool) > mem - mem / 16)
		reclaim_kick(ds);
}

void budget_update(struct data_space *ds, bool force)
{
	if (force) {
		pthread_mutex_lock(&ds->budget_lock);
	} else {
		if (pthread_mutex_trylock(&ds->budget_lock))
			return; /* someone is at it */
		if (now_ns() - ds->budget_stamp_ns < BUDGET_INTERVAL_NS) {
			pthread_mutex_unlock(&ds->budget_lock);
			return;
		}
	}
	update_locked(ds);
	pthread_mutex_unlock(&ds->budget_lock);
}

int budget_set(struct data_space *ds, uint64_t mem_bytes, uint64_t limit_bytes)
{
	if (!mem_bytes && !limit_bytes)
		return -EINVAL;
	pthread_mutex_lock(&ds->budget_lock);
	ds->mem_cap_pages = mem_bytes >> PAGE_SHIFT;
	ds->limit_bytes = limit_bytes;
	update_locked(ds);
	pthread_mutex_unlock(&ds->budget_lock);
	return 0;
}
