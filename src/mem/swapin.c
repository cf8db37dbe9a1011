// SPDX-License-Identifier: MIT
/*
 * Swap-in: swapped pages back to memory, on a fault with the readahead
 * policy's window around it (readahead.c picks the pages), and in bulk, in
 * the backend's order, for the drain.
 */
#include <errno.h>
#include <stdlib.h>

#include "tierfs/backend.h"
#include "tierfs/log.h"
#include "tierfs/ns.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "tierfs/swapin.h"

#include "data_priv.h"

static struct log_ratelimit load_log;

/*
 * The swap_slot + 1 a page loaded from slot keeps, or 0 with the slot freed:
 * a clean copy saves a store at the next eviction, but when the backend's
 * slots may not cover every page or a RAM pool holds the memory limit, the
 * room matters more (a read must not grow the footprint past the limit).
 */
static uint64_t keep_copy(struct data_space *ds, struct inode *inode, uint64_t slot)
{
	if (!atomic_load_explicit(&ds->budget.is_backend_tight, memory_order_relaxed))
		return slot + 1;
	data_free_slot(ds, inode, slot);
	atomic_fetch_add_explicit(&ds->swap.nr_copies_freed, 1, memory_order_relaxed);
	return 0;
}

/*
 * Load nr slots into pages with inode->lock dropped, so that other faults on
 * the file go on; called and returns with it held for writing.  No slot the
 * load reads is given back before its pages are checked, unless freeing
 * could not wait (data_free_slot): then it returns 1 and the caller throws
 * what it read away.  Otherwise the backend's result: a page is its own
 * while its entry still names the slot it read.
 */
static int load_unlocked(struct data_space *ds, struct inode *inode, const uint64_t *slots,
			 void *const *pages, unsigned int nr)
{
	uint64_t gen = data_load_begin(inode);
	int ret;

	pthread_rwlock_unlock(&inode->lock);
	ret = ds->backend->ops->load(ds->backend, slots, pages, nr);
	data_load_end(ds, inode);
	pthread_rwlock_wrlock(&inode->lock);
	return data_load_recheck(ds, inode, gen) ? 1 : ret;
}

/*
 * Whether index still holds slot, as when a load of it began.  A page
 * another fault brought in meanwhile is resident; one reclaim dropped again
 * since (clean) holds the same slot, whose data the load has.
 */
static bool is_still_swapped(struct inode *inode, uint64_t index, uint64_t slot)
{
	uint64_t entry = pagemap_get(&inode->pages, index);

	return pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED && pagemap_slot(entry) == slot;
}

/*
 * Load what readahead picks besides a fault on [first, last]: clean pages
 * on the inactive list, unused, so that those never read go first.  Only
 * within the budget, never by reclaiming on this thread: it wakes the
 * reclaimer to make room for the next window instead.
 */
static void swap_in_ahead(struct data_space *ds, struct inode *inode, uint64_t first, uint64_t last,
			  uint64_t fault_slot)
{
	enum readahead_policy policy = readahead_effective_at(&ds->ra, ds->backend, fault_slot);
	uint64_t idx[READAHEAD_MAX_WINDOW], slots[READAHEAD_MAX_WINDOW];
	uint32_t pfns[READAHEAD_MAX_WINDOW];
	void *pages[READAHEAD_MAX_WINDOW];
	bool is_forward = first >= inode->ra_prev_end &&
			  first - inode->ra_prev_end <= READAHEAD_MAX_WINDOW;
	bool is_backward = last < inode->ra_prev_first &&
			   inode->ra_prev_first - last <= READAHEAD_MAX_WINDOW;
	unsigned int window, nr, nr_room = 0;

	inode->ra_prev_first = first;
	inode->ra_prev_end = last + 1;
	if (policy == READAHEAD_DIRECT)
		return;
	window = readahead_window(&ds->ra, is_forward || is_backward);
	nr = readahead_collect(policy, inode, first, last, fault_slot, is_backward, window, idx,
			       slots);
	if (nr && pagepool_nr_in_use(ds->pool) + nr >= ds->budget.high_pages)
		reclaim_kick(ds); /* room for the next window */
	for (; nr_room < nr && pagepool_nr_in_use(ds->pool) < ds->budget.mem_pages; nr_room++) {
		int64_t pfn = pagepool_alloc(ds->pool);

		if (pfn < 0)
			break;
		pfns[nr_room] = (uint32_t)pfn;
		pages[nr_room] = pagepool_addr(ds->pool, (uint32_t)pfn);
	}
	if (nr_room && load_unlocked(ds, inode, slots, pages, nr_room))
		goto free_pages; /* readahead failing fails no read */
	for (unsigned int i = 0; i < nr_room; i++) {
		if (!is_still_swapped(inode, idx[i], slots[i]) ||
		    pagemap_set(&inode->pages, idx[i], pagemap_mk_resident(pfns[i]), NULL)) {
			pagepool_free_page(ds->pool, pfns[i]);
			continue;
		}
		data_track_resident(ds, inode, idx[i], pfns[i], keep_copy(ds, inode, slots[i]));
		data_untrack_swapped(ds, inode, 1);
		atomic_store(&lru_page(&ds->lru, pfns[i])->is_readahead, true);
		atomic_fetch_add_explicit(&ds->ra.nr_pages, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&ds->swap.nr_swapins, 1, memory_order_relaxed);
	}
	return;

free_pages:
	for (unsigned int i = 0; i < nr_room; i++)
		pagepool_free_page(ds->pool, pfns[i]);
}

/* Whether a page of the batch is swapped to a slot other than the one loaded. */
static bool is_any_moved(struct inode *inode, const uint64_t *idx, const uint64_t *slots,
			 unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		uint64_t entry = pagemap_get(&inode->pages, idx[i]);

		if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED && pagemap_slot(entry) != slots[i])
			return true;
	}
	return false;
}

int swapin_range(struct data_space *ds, struct inode *inode, uint64_t off, size_t len)
{
	enum { BATCH = 32 };
	uint64_t index = off >> PAGE_SHIFT, last, entry;
	uint64_t idx[BATCH], slots[BATCH], fault_index = UINT64_MAX, fault_slot = 0;
	int64_t pfns[BATCH];
	void *pages[BATCH];
	unsigned int nr;
	bool may_unlock = true;
	int err = 0, ret;

	if (!len || off >= inode->size)
		return 0;
	last = (off + len - 1) >> PAGE_SHIFT;
	while (!err) {
		for (nr = 0; nr < BATCH && pagemap_next(&inode->pages, &index, last, &entry);
		     index++) {
			if (pagemap_kind(entry) != PAGEMAP_KIND_SWAPPED)
				continue;
			pfns[nr] = data_alloc_page(ds, inode, true);
			if (pfns[nr] < 0) {
				err = (int)pfns[nr];
				break;
			}
			idx[nr] = index;
			slots[nr] = pagemap_slot(entry);
			pages[nr] = pagepool_addr(ds->pool, (uint32_t)pfns[nr]);
			if (fault_index == UINT64_MAX) {
				fault_index = index;
				fault_slot = slots[nr];
			}
			nr++;
		}
		if (!nr)
			break;
		ret = may_unlock ? load_unlocked(ds, inode, slots, pages, nr) :
				   ds->backend->ops->load(ds->backend, slots, pages, nr);
		if (ret < 0) {
			atomic_fetch_add_explicit(&ds->swap.nr_swapin_errors, nr,
						  memory_order_relaxed);
			log_limited(&load_log, LOG_ERR, "%u swapped pages failed to load: EIO", nr);
			err = -EIO;
		}
		/*
		 * Thrown away, or a page swapped again elsewhere while it
		 * loaded: the batch once more, under the lock, so that a writer
		 * of the same pages cannot starve a read.
		 */
		if (ret > 0 || (!ret && may_unlock && is_any_moved(inode, idx, slots, nr))) {
			may_unlock = false;
			index = idx[0];
		}
		for (unsigned int i = 0; i < nr; i++) {
			if (ret || !is_still_swapped(inode, idx[i], slots[i]) ||
			    pagemap_set(&inode->pages, idx[i],
					pagemap_mk_resident((uint32_t)pfns[i]), NULL)) {
				pagepool_free_page(ds->pool, (uint32_t)pfns[i]);
				continue;
			}
			/* Clean: the backend copy stays valid until a write. */
			data_track_resident(ds, inode, idx[i], (uint32_t)pfns[i],
					    keep_copy(ds, inode, slots[i]));
			data_untrack_swapped(ds, inode, 1);
			lru_mark_loaded(&ds->lru, (uint32_t)pfns[i]);
			atomic_fetch_add_explicit(&ds->swap.nr_swapins, 1, memory_order_relaxed);
		}
	}
	if (!err && fault_index != UINT64_MAX)
		swap_in_ahead(ds, inode, fault_index, last, fault_slot);
	return err;
}

/* A swapped page the drain found: where the backend lays it, its slot and its index. */
struct found_page {
	uint64_t key, slot, index;
};

static int cmp_by_key(const void *a, const void *b)
{
	const struct found_page *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

void swapin_load_in_turn(void *ctx, struct swapin_piece *pieces, unsigned int nr)
{
	struct tier_backend *backend = ctx;

	for (unsigned int i = 0; i < nr; i++)
		pieces[i].ret =
			backend->ops->load(backend, pieces[i].slots, pieces[i].pages, pieces[i].nr);
}

int64_t swapin_drain(struct data_space *ds, struct inode *inode, uint64_t *from, unsigned int max,
		     uint64_t *nr_hits, swapin_load_fn *load, void *ctx)
{
	uint64_t (*locate)(struct tier_backend *, uint64_t) = ds->backend->ops->locate;
	struct found_page *found = malloc(max * sizeof(*found));
	uint64_t *slots = malloc(max * sizeof(*slots));
	uint32_t *pfns = malloc(max * sizeof(*pfns));
	void **pages = malloc(max * sizeof(*pages));
	struct swapin_piece *pieces =
		malloc((max + SWAPIN_PIECE_PAGES - 1) / SWAPIN_PIECE_PAGES * sizeof(*pieces));
	uint64_t index = *from, entry, done = 0;
	unsigned int nr = 0, got, nr_pieces = 0;
	int err = 0;

	if (!found || !slots || !pfns || !pages || !pieces) {
		err = -ENOMEM;
		goto out;
	}
	while (nr < max && pagemap_next(&inode->pages, &index, UINT64_MAX, &entry)) {
		if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED) {
			uint64_t slot = pagemap_slot(entry);

			found[nr++] = (struct found_page){
				.key = locate ? locate(ds->backend, slot) : slot,
				.slot = slot,
				.index = index,
			};
		} else if (pagemap_kind(entry) == PAGEMAP_KIND_RESIDENT) {
			struct lru_page *p = lru_page(&ds->lru, pagemap_pfn(entry));

			/* Resident already: only its backend copy goes. */
			if (p->swap_slot) {
				data_free_slot(ds, inode, p->swap_slot - 1);
				p->swap_slot = 0;
				/* Counted here, so not again when read. */
				atomic_store(&p->is_readahead, false);
				(*nr_hits)++;
			}
		}
		if (index++ == UINT64_MAX)
			break;
	}
	/* In the backend's order: runs for the file backend to read. */
	qsort(found, nr, sizeof(*found), cmp_by_key);
	for (got = 0; got < nr; got++) {
		int64_t pfn = pagepool_alloc(ds->pool);

		if (pfn < 0)
			break;
		pfns[got] = (uint32_t)pfn;
		pages[got] = pagepool_addr(ds->pool, (uint32_t)pfn);
		slots[got] = found[got].slot;
	}
	/* Short of pages: those it has come back, and the call fails after. */
	if (got < nr)
		err = -ENOMEM;
	for (unsigned int i = 0; i < got; i += SWAPIN_PIECE_PAGES)
		pieces[nr_pieces++] = (struct swapin_piece){
			.slots = slots + i,
			.pages = pages + i,
			.nr = got - i < SWAPIN_PIECE_PAGES ? got - i : SWAPIN_PIECE_PAGES,
		};
	if (nr_pieces)
		load(ctx, pieces, nr_pieces);
	for (unsigned int i = 0; i < got; i++) {
		if (pieces[i / SWAPIN_PIECE_PAGES].ret ||
		    pagemap_set(&inode->pages, found[i].index, pagemap_mk_resident(pfns[i]),
				NULL)) {
			pagepool_free_page(ds->pool, pfns[i]);
			continue;
		}
		data_free_slot(ds, inode, slots[i]);
		data_track_resident(ds, inode, found[i].index, pfns[i], 0);
		data_untrack_swapped(ds, inode, 1);
		atomic_fetch_add_explicit(&ds->swap.nr_swapins, 1, memory_order_relaxed);
		done++;
	}
	/* Nothing kept back for loads of others: the backend's count is exact. */
	data_wait_loads(ds, inode);
	for (unsigned int i = 0; i < nr_pieces; i++) {
		if (!pieces[i].ret)
			continue;
		atomic_fetch_add_explicit(&ds->swap.nr_swapin_errors, pieces[i].nr,
					  memory_order_relaxed);
		log_limited(&load_log, LOG_ERR, "drain: %u swapped pages failed to load: EIO",
			    pieces[i].nr);
		err = -EIO;
	}
out:
	free(found);
	free(slots);
	free(pfns);
	free(pages);
	free(pieces);
	if (!err)
		*from = index;
	return done || !err ? (int64_t)done : err;
}
