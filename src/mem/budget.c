// SPDX-License-Identifier: MIT
/*
 * The resident budget from mem= and the memory limit.  Under a limit every
 * byte the data costs outside resident pages comes off the budget, so the
 * daemon's footprint stays inside the limit however the pool grows.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/clock.h"
#include "tierfs/pagepool.h"
#include "tierfs/space.h"

/* Stored pages from which a RAM pool's cost per page is measured, not assumed. */
#define BUDGET_MEASURE_PAGES 4096

/* How often budget_update recomputes unless forced. */
#define BUDGET_INTERVAL_NS (5 * 1000 * 1000)

/*
 * A RAM pool shrunk by this much gives malloc's free memory back: 16 MiB,
 * or a 64th of a smaller limit, well inside the headroom (reads of swapped
 * pages shrink the pool while the daemon's memory grows).
 */
static uint64_t trim_bytes(uint64_t limit)
{
	return limit >> 6 < (16ULL << 20) ? limit >> 6 : 16ULL << 20;
}

/*
 * What a resident page costs: the page and, with a backend, its
 * descriptor.  Budgeted as one, the room for pages is honest from the
 * start: with the descriptors counted as other memory as they grew, the
 * capacity df had shown shrank by 48 bytes for every page written.
 */
static uint64_t page_cost(const struct data_space *ds)
{
	return PAGE_SIZE + (ds->backend ? sizeof(struct lru_page) : 0);
}

/* The footprint from stats already taken; bs is zero but for a RAM backend. */
static void footprint_of(struct data_space *ds, const struct pagepool_stats *ps,
			 const struct backend_stats *bs, struct budget_footprint *out)
{
	out->resident = ps->nr_in_use * PAGE_SIZE;
	out->stock = ps->nr_ready * PAGE_SIZE;
	out->backend = bs->ram_bytes;
	out->descriptors = ds->backend ? ps->nr_backed * sizeof(struct lru_page) : 0;
	out->transport = atomic_load(&ds->budget.transport_bytes);
	out->meta = atomic_load(&ds->budget.meta_bytes);
	out->total = out->resident + out->stock + out->backend + out->descriptors + out->transport +
		     out->meta;
}

static void raise_to(atomic_uint_fast64_t *peak, uint64_t v)
{
	uint64_t old = atomic_load_explicit(peak, memory_order_relaxed);

	while (v > old && !atomic_compare_exchange_weak(peak, &old, v))
		;
}

/* Both peaks at least what fp and bs show. */
static void note_peaks(struct data_space *ds, const struct budget_footprint *fp,
		       const struct backend_stats *bs)
{
	raise_to(&ds->budget.peak_footprint_bytes, fp->total);
	raise_to(&ds->budget.peak_pool_bytes, bs->pool_bytes);
}

void budget_footprint(struct data_space *ds, struct budget_footprint *out, struct backend_stats *bs)
{
	struct pagepool_stats ps;
	struct backend_stats own;

	if (!bs)
		bs = &own;
	memset(bs, 0, sizeof(*bs));
	pagepool_get_stats(ds->pool, &ps);
	if (ds->backend)
		ds->backend->ops->get_stats(ds->backend, bs);
	footprint_of(ds, &ps, bs, out);
	note_peaks(ds, out, bs);
}

void budget_sample_peaks(struct data_space *ds)
{
	struct budget_footprint fp;

	budget_footprint(ds, &fp, NULL);
}

void budget_note_growth(struct data_space *ds, uint64_t nr_pages)
{
	uint64_t mark = atomic_load_explicit(&ds->budget.peak_mark_pages, memory_order_relaxed);

	if (nr_pages >= mark + BUDGET_PEAK_STEP || nr_pages + BUDGET_PEAK_STEP <= mark) {
		atomic_store_explicit(&ds->budget.peak_mark_pages, nr_pages, memory_order_relaxed);
		budget_sample_peaks(ds);
	}
}

void budget_reset_peaks(struct data_space *ds)
{
	atomic_store(&ds->budget.peak_footprint_bytes, 0);
	atomic_store(&ds->budget.peak_pool_bytes, 0);
	atomic_store(&ds->budget.peak_mark_pages, atomic_load(&ds->nr_pages));
	budget_sample_peaks(ds);
}

/* Anonymous memory of the daemon, from /proc/self/statm; 0 if unknown. */
uint64_t budget_rss_anon_bytes(void)
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

void budget_init(struct budget *b, uint64_t env_limit_bytes)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->env_limit_bytes = env_limit_bytes;
	atomic_init(&b->meta_max_bytes, UINT64_MAX);
}

void budget_fini(struct budget *b)
{
	pthread_mutex_destroy(&b->lock);
}

/* The tighter of memlimit= and the daemon's surroundings; budget.lock held. */
static uint64_t limit_locked(const struct data_space *ds)
{
	if (!ds->budget.limit_bytes ||
	    (ds->budget.env_limit_bytes && ds->budget.env_limit_bytes < ds->budget.limit_bytes))
		return ds->budget.env_limit_bytes;
	return ds->budget.limit_bytes;
}

/*
 * The limit the daemon's own memory has: limit_locked() with the part of
 * the surroundings' limit that the rest of the cgroup holds past
 * BUDGET_EXCESS_FREE taken off, down to a page (the smallest budget and
 * metadata refused: the others hold the room).  budget.lock held.
 */
static uint64_t own_limit_locked(const struct data_space *ds)
{
	uint64_t limit = limit_locked(ds), env = ds->budget.env_limit_bytes;
	uint64_t others = atomic_load(&ds->budget.others_bytes);

	if (!env || others <= BUDGET_EXCESS_FREE)
		return limit;
	others -= BUDGET_EXCESS_FREE;
	env = env > others + PAGE_SIZE ? env - others : PAGE_SIZE;
	return ds->budget.limit_bytes && ds->budget.limit_bytes < env ? ds->budget.limit_bytes :
									env;
}

/*
 * What a RAM pool's stored pages cost: their bytes in the pool and their
 * index entries.  Both count back into the memory for data, and the cost
 * of a page stored is measured with both: with the index left out, it grew
 * out of the limit's other memory as pages were stored, and df's size
 * shrank by an entry (16 bytes in zpool) for each.  Index entries of slots
 * used once and freed stay in the other memory: nothing is stored in them.
 */
static uint64_t pool_data_bytes(const struct backend_stats *bs)
{
	return bs->pool_bytes + bs->stored_pages * bs->index_page_bytes;
}

/*
 * What the data may use, in pages x 1024, with the weight of a page that
 * holds no memory yet (same-filled or fallocated: it may be written with
 * anything later).  Without a RAM pool under a limit that is the resident
 * budget plus the backend's slots, each page weighing one.  A RAM pool
 * under a limit grows until the resident budget is down to its minimum, so
 * the memory left for data (data_bytes) holds BUDGET_MIN_PAGES resident
 * pages and the rest at the pool's measured cost per page, a page with no
 * memory yet counted at its cost stored raw.  budget.lock held.
 */
static uint64_t capacity_locked(struct data_space *ds, uint64_t mem, uint64_t limit,
				uint64_t data_bytes, const struct backend_stats *bs,
				uint64_t *weight)
{
	uint64_t slots = bs->capacity_bytes >> PAGE_SHIFT, per_page, raw, pool_max, resident;
	uint64_t cost = page_cost(ds);

	*weight = 1024;
	if (!ds->backend)
		return ds->budget.mem_cap_pages || limit ? mem * 1024 : 0;
	if (!limit || !ds->backend->ops->is_sync)
		return (mem + slots) * 1024;
	raw = bs->raw_page_bytes > PAGE_SIZE ? bs->raw_page_bytes : PAGE_SIZE;
	/* A few pages tell more about half-used chunks and classes than about data. */
	per_page = bs->stored_pages >= BUDGET_MEASURE_PAGES ?
			   (pool_data_bytes(bs) + bs->stored_pages - 1) / bs->stored_pages :
			   raw;
	if (per_page > raw)
		raw = per_page;
	pool_max = slots * per_page;
	if (pool_max + BUDGET_MIN_PAGES * cost < data_bytes) {
		/* The slots run out first, with the resident budget not yet at its minimum. */
		resident = (data_bytes - pool_max) / cost;
		if (ds->budget.mem_cap_pages && resident > ds->budget.mem_cap_pages)
			resident = ds->budget.mem_cap_pages;
		return (resident + slots) * 1024;
	}
	*weight = raw * 1024 / per_page;
	if (data_bytes <= BUDGET_MIN_PAGES * cost)
		return data_bytes / cost * 1024;
	/* Divided first: x 1024 overflows from 16 PiB on. */
	data_bytes -= BUDGET_MIN_PAGES * cost;
	return BUDGET_MIN_PAGES * 1024 + data_bytes / per_page * 1024 +
	       data_bytes % per_page * 1024 / per_page;
}

/*
 * What the limit holds besides the data moves with every allocation the
 * daemon makes and with the stock's target: taken as measured, the capacity
 * and df's size would wander a page at a time while nothing is written.  It
 * is followed once it has moved by 1/1024 of the limit, well inside the
 * headroom.  budget.lock held.
 */
static uint64_t steady_other(struct budget *b, uint64_t other, uint64_t limit)
{
	uint64_t step = limit >> 10;

	if (other + step > b->other_bytes && b->other_bytes + step > other)
		return b->other_bytes;
	b->other_bytes = other;
	return other;
}

/* budget.lock held. */
static uint64_t pool_max_locked(const struct data_space *ds)
{
	uint64_t limit = limit_locked(ds), max = ds->budget.pool_max_bytes;

	if (ds->budget.is_pool_max_pct)
		max = limit / 100 * ds->budget.pool_max_pct;
	return limit && max > limit / 2 ? limit / 2 : max;
}

/*
 * A chain's RAM tier is budgeted at its bound, as the stock is at its
 * target: what it may still grow by.  Counted as it grew, the pool would
 * take its room from resident pages in bursts, while the workload's own
 * memory in the cgroup had already taken the slack.  budget.lock held.
 */
static uint64_t pool_reserve_locked(struct data_space *ds)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	uint64_t max = pool_max_locked(ds);

	/* redis spilling to the file (redis://...+file:PATH) has no RAM tier. */
	if (!ds->backend || !ds->backend->ops->get_tiers ||
	    !ds->backend->ops->get_tiers(ds->backend, t, BACKEND_MAX_TIERS) || !t[0].is_sync)
		return 0;
	return max > t[0].st.pool_bytes ? max - t[0].st.pool_bytes : 0;
}

/*
 * How far metadata may run ahead of what is free now, while the reclaimer
 * evicts the resident pages it takes the room of: a quarter of the
 * headroom, so the daemon stays inside its limit meanwhile, and a create
 * beside a heavy writer is not refused for a reclaimer a moment behind.
 */
static uint64_t meta_step(uint64_t limit)
{
	return (BUDGET_HEADROOM + (limit >> BUDGET_HEADROOM_SHIFT)) / 4;
}

/*
 * The most the namespace may hold, holding meta bytes now, with room pages
 * for resident data under the limit (meta counted out of it already): what
 * resident pages can give up down to the smallest budget, and never more
 * than meta_step() beyond what is free now.  Without a backend nothing can
 * be evicted: only what is free.  budget.lock held.
 */
static uint64_t meta_max_locked(struct data_space *ds, uint64_t meta, uint64_t limit, uint64_t room,
				uint64_t nr_in_use)
{
	uint64_t cost = page_cost(ds), step = meta_step(limit);
	uint64_t room_bytes = room * cost, used = nr_in_use * cost, ahead, evictable;

	if (!ds->backend)
		return meta + (room_bytes > used ? room_bytes - used : 0);
	ahead = room_bytes + step > used ? room_bytes + step - used : 0;
	evictable = room > BUDGET_MIN_PAGES ? (room - BUDGET_MIN_PAGES) * cost : 0;
	return meta + (ahead < evictable ? ahead : evictable);
}

/* Returns whether the budget shrank below the pages in use.  budget.lock held. */
static bool update_locked(struct data_space *ds)
{
	struct pagepool_stats ps;
	struct backend_stats bs = { 0 };
	struct budget_footprint fp;
	uint64_t mem = ds->budget.mem_cap_pages ? ds->budget.mem_cap_pages : UINT64_MAX, old;
	uint64_t limit = own_limit_locked(ds), data_bytes = 0, weight;
	uint64_t meta_max = UINT64_MAX;
	bool is_full = false;

	pagepool_get_stats(ds->pool, &ps);
	if (ds->backend && ds->backend->ops->set_pool_max)
		ds->backend->ops->set_pool_max(ds->backend, pool_max_locked(ds));
	if (ds->backend)
		ds->backend->ops->get_stats(ds->backend, &bs);
	footprint_of(ds, &ps, &bs, &fp);
	note_peaks(ds, &fp, &bs);
	if (limit) {
		uint64_t other, room, rss, headroom, model, excess, ram_pool;

		/*
		 * The stock is budgeted at its target; a surplus (left by
		 * eviction or deletes) goes back now, or evicting would only
		 * grow it and shrink the budget further.
		 */
		if (ps.nr_ready > ps.nr_ready_target) {
			pagepool_trim(ds->pool, ps.nr_ready_target);
			pagepool_get_stats(ds->pool, &ps);
			footprint_of(ds, &ps, &bs, &fp);
		}
		headroom = BUDGET_HEADROOM + (limit >> BUDGET_HEADROOM_SHIFT);
		other = fp.backend + fp.transport + fp.meta + ps.nr_ready_target * page_cost(ds) +
			headroom + pool_reserve_locked(ds);
		/*
		 * What the daemon should hold now.  Not other's reservations:
		 * the stock's target beside the stock it has, and the room the
		 * RAM tier may still grow into, are not memory yet, and counted
		 * here they hid as much unmodelled memory (the redis tier's
		 * buffers, up to 40 MiB) from the measurement below, and a
		 * chain's daemon was OOM-killed at the edge of its cgroup.
		 */
		model = fp.total;
		/*
		 * What the model misses (heap, stacks, libfuse buffers), measured.
		 * Memory malloc holds but no one uses (what a RAM pool freed, or
		 * what one thread's arena freed and another's does not reuse)
		 * shows as the excess growing: once it has grown by a trim's
		 * worth since its lowest, malloc gives it back.
		 */
		rss = budget_rss_anon_bytes();
		excess = rss > model ? rss - model : 0;
		if (excess > ds->budget.excess_floor_bytes + trim_bytes(limit)) {
			malloc_trim(0);
			rss = budget_rss_anon_bytes();
			excess = rss > model ? rss - model : 0;
			ds->budget.excess_floor_bytes = excess;
		}
		if (excess < ds->budget.excess_floor_bytes)
			ds->budget.excess_floor_bytes = excess;
		/*
		 * Measured, the excess past BUDGET_EXCESS_FREE adds to the
		 * model's guess, not taken from the headroom: the workload
		 * sharing the cgroup keeps all of that (its page cache, dirty
		 * pages the daemon has yet to take, the kernel's memory for the
		 * requests); with less, a writer in the daemon's cgroup had it
		 * OOM-killed (bench/pressure.sh, 512 MiB).  Only the part past
		 * it: counted whole from the threshold on, an excess that grew
		 * across it in mid-write cut the capacity by all of it at once,
		 * and writes stopped with ENOSPC 6 to 10 MiB short of what df
		 * had shown (mnt_limit, now and then).
		 */
		if (excess > BUDGET_EXCESS_FREE)
			other += excess - BUDGET_EXCESS_FREE;
		other = steady_other(&ds->budget, other, limit);
		room = limit > other ? (limit - other) / page_cost(ds) : 0;
		ram_pool = ds->backend && ds->backend->ops->is_sync ? pool_data_bytes(&bs) : 0;
		data_bytes = limit + ram_pool > other ? limit + ram_pool - other : 0;
		meta_max = meta_max_locked(ds, fp.meta, limit, room, ps.nr_in_use);
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
	old = atomic_exchange(&ds->budget.mem_pages, mem);
	atomic_store(&ds->budget.high_pages, mem - mem / 16);
	atomic_store(&ds->budget.low_pages, mem - mem / 8);
	is_full = is_full && ds->backend && ds->backend->ops->is_sync;
	if (is_full && !atomic_load(&ds->budget.is_pool_full))
		atomic_store(&ds->budget.full_stored_pages, bs.stored_pages);
	atomic_store(&ds->budget.is_pool_full, is_full);
	/*
	 * A page holds one slot at most, as a copy or swapped, so while the
	 * slots outnumber the pages that may need one (present, not
	 * same-filled), keeping copies never leaves an eviction without a slot.
	 * The kernel guesses instead (vm_swap_full: half full) and frees copies
	 * that had room, paying a store for each at the next eviction.
	 */
	atomic_store(&ds->budget.is_backend_tight,
		     is_full || atomic_load(&ds->nr_pages) - atomic_load(&ds->nr_filled) >
					bs.capacity_bytes >> PAGE_SHIFT);
	atomic_store(&ds->budget.capacity_x1024,
		     capacity_locked(ds, mem, limit, data_bytes, &bs, &weight));
	atomic_store(&ds->budget.filled_weight, weight);
	atomic_store(&ds->budget.meta_max_bytes, meta_max);
	ds->budget.meta_seen_bytes = fp.meta;
	ds->budget.stamp_ns = clock_now_ns();
	return mem < old && ds->backend && pagepool_nr_in_use(ds->pool) > mem - mem / 16;
}

bool budget_update(struct data_space *ds, bool force)
{
	bool has_shrunk;

	if (force) {
		pthread_mutex_lock(&ds->budget.lock);
	} else {
		if (pthread_mutex_trylock(&ds->budget.lock))
			return false; /* someone is at it */
		if (clock_now_ns() - ds->budget.stamp_ns < BUDGET_INTERVAL_NS) {
			pthread_mutex_unlock(&ds->budget.lock);
			return false;
		}
	}
	has_shrunk = update_locked(ds);
	pthread_mutex_unlock(&ds->budget.lock);
	return has_shrunk;
}

bool budget_refresh(struct data_space *ds)
{
	bool has_shrunk = false;

	pthread_mutex_lock(&ds->budget.lock);
	if (clock_now_ns() - ds->budget.stamp_ns >= BUDGET_INTERVAL_NS)
		has_shrunk = update_locked(ds);
	pthread_mutex_unlock(&ds->budget.lock);
	return has_shrunk;
}

int budget_set(struct data_space *ds, uint64_t mem_bytes, uint64_t limit_bytes)
{
	int ret = -EINVAL;

	pthread_mutex_lock(&ds->budget.lock);
	if (mem_bytes || limit_bytes || ds->budget.env_limit_bytes) {
		ds->budget.mem_cap_pages = mem_bytes >> PAGE_SHIFT;
		ds->budget.limit_bytes = limit_bytes;
		ret = update_locked(ds);
	}
	pthread_mutex_unlock(&ds->budget.lock);
	return ret;
}

void budget_get_caps(struct data_space *ds, uint64_t *mem_bytes, uint64_t *limit_bytes)
{
	pthread_mutex_lock(&ds->budget.lock);
	*mem_bytes = ds->budget.mem_cap_pages << PAGE_SHIFT;
	*limit_bytes = ds->budget.limit_bytes;
	pthread_mutex_unlock(&ds->budget.lock);
}

bool budget_set_env_limit(struct data_space *ds, uint64_t limit_bytes)
{
	bool has_shrunk;

	pthread_mutex_lock(&ds->budget.lock);
	/*
	 * Lifted with nothing else to bound the budget: the one in force
	 * stays, as mem=.  Under the same hold as the caps it reads, so a
	 * set racing the change is not undone.
	 */
	if (!limit_bytes && ds->budget.env_limit_bytes && !ds->budget.mem_cap_pages &&
	    !ds->budget.limit_bytes)
		ds->budget.mem_cap_pages = atomic_load(&ds->budget.mem_pages);
	ds->budget.env_limit_bytes = limit_bytes;
	has_shrunk = update_locked(ds);
	pthread_mutex_unlock(&ds->budget.lock);
	return has_shrunk;
}

bool budget_set_others(struct data_space *ds, uint64_t bytes)
{
	uint64_t old, step;
	bool has_shrunk = false;

	pthread_mutex_lock(&ds->budget.lock);
	old = atomic_load(&ds->budget.others_bytes);
	/* Followed once it has moved by 1/1024 of the limit, as steady_other(). */
	step = ds->budget.env_limit_bytes >> 10;
	if (bytes > old + step || old > bytes + step || (!bytes && old)) {
		atomic_store(&ds->budget.others_bytes, bytes);
		has_shrunk = update_locked(ds);
	}
	pthread_mutex_unlock(&ds->budget.lock);
	return has_shrunk;
}

uint64_t budget_limit(struct data_space *ds)
{
	uint64_t limit;

	pthread_mutex_lock(&ds->budget.lock);
	limit = limit_locked(ds);
	pthread_mutex_unlock(&ds->budget.lock);
	return limit;
}

bool budget_set_pool_max(struct data_space *ds, uint64_t bytes, unsigned int pct, bool is_pct)
{
	bool has_shrunk;

	pthread_mutex_lock(&ds->budget.lock);
	ds->budget.pool_max_bytes = bytes;
	ds->budget.pool_max_pct = pct;
	ds->budget.is_pool_max_pct = is_pct;
	has_shrunk = update_locked(ds);
	pthread_mutex_unlock(&ds->budget.lock);
	return has_shrunk;
}

uint64_t budget_pool_max(struct data_space *ds)
{
	uint64_t max;

	pthread_mutex_lock(&ds->budget.lock);
	max = pool_max_locked(ds);
	pthread_mutex_unlock(&ds->budget.lock);
	return max;
}

int budget_charge_meta(struct data_space *ds, uint64_t bytes, bool *has_shrunk)
{
	struct budget *b = &ds->budget;
	uint64_t meta = atomic_fetch_add(&b->meta_bytes, bytes) + bytes;

	*has_shrunk = false;
	if (meta <= atomic_load(&b->meta_max_bytes))
		return 0;
	/*
	 * Recomputed without this charge (counted in, it would make room for
	 * itself): when metadata has grown since the last update, else at
	 * most once every few milliseconds, so a flood of refused requests
	 * costs its senders errors, not the daemon a /proc read each.
	 */
	meta = atomic_fetch_sub(&b->meta_bytes, bytes) - bytes;
	pthread_mutex_lock(&b->lock);
	if (meta > b->meta_seen_bytes || clock_now_ns() - b->stamp_ns >= BUDGET_INTERVAL_NS)
		*has_shrunk = update_locked(ds);
	pthread_mutex_unlock(&b->lock);
	if (atomic_fetch_add(&b->meta_bytes, bytes) + bytes <= atomic_load(&b->meta_max_bytes))
		return 0;
	atomic_fetch_sub(&b->meta_bytes, bytes);
	return -ENOSPC;
}

void budget_add_meta(struct data_space *ds, int64_t delta)
{
	atomic_fetch_add(&ds->budget.meta_bytes, (uint64_t)delta);
}

/* Weighted pages in use: data pages one each, the rest at the filled weight. */
static uint64_t used_x1024(struct data_space *ds, uint64_t pages, uint64_t nr_more_filled)
{
	uint64_t filled = atomic_load(&ds->nr_filled) + nr_more_filled;

	if (filled > pages)
		filled = pages;
	return (pages - filled) * 1024 + filled * atomic_load(&ds->budget.filled_weight);
}

bool budget_has_room(struct data_space *ds, uint64_t nr_pages)
{
	uint64_t cap = atomic_load(&ds->budget.capacity_x1024);

	return !cap || used_x1024(ds, atomic_load(&ds->nr_pages) + nr_pages, 0) <= cap;
}

bool budget_fits(struct data_space *ds, uint64_t nr_more_filled)
{
	uint64_t cap = atomic_load(&ds->budget.capacity_x1024);

	return !cap || used_x1024(ds, atomic_load(&ds->nr_pages), nr_more_filled) <= cap;
}

uint64_t budget_store_room(struct data_space *ds)
{
	struct backend_stats bs;
	uint64_t full;

	if (!atomic_load(&ds->budget.is_pool_full))
		return UINT64_MAX;
	full = atomic_load(&ds->budget.full_stored_pages);
	ds->backend->ops->get_stats(ds->backend, &bs);
	return full > bs.stored_pages ? full - bs.stored_pages : 0;
}

uint64_t budget_nr_free_pages(struct data_space *ds, uint64_t *nr_used)
{
	uint64_t cap = atomic_load(&ds->budget.capacity_x1024), pages = atomic_load(&ds->nr_pages);
	uint64_t max = atomic_load(&ds->max_pages), nr_free = UINT64_MAX, used;

	/*
	 * One load of each: pages freed between two (a release landing) made
	 * df's size, used plus free, pass size=; a remount may change
	 * max_pages.
	 */
	if (nr_used)
		*nr_used = pages;
	if (cap) {
		used = used_x1024(ds, pages, 0);
		nr_free = used < cap ? (cap - used) / 1024 : 0;
	}
	if (max && (pages >= max || max - pages < nr_free))
		nr_free = pages < max ? max - pages : 0;
	return nr_free;
}
