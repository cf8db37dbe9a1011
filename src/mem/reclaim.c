// SPDX-License-Identifier: MIT
/*
 * Eviction from the LRU to the backend, in three steps.  Isolation happens
 * under the LRU lock, trylocking each victim's inode (a victim is on the
 * list, so its inode is alive; once locked, it cannot be freed: freeing
 * takes the inode lock).  Pages that need a store are marked writeback and
 * their inodes unlocked, so the store (a device write for the file backend)
 * holds no lock a reader, a writer or another reclaimer needs.  Then each
 * page is taken off its owner, unless it was written or freed meanwhile.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/clock.h"
#include "tierfs/log.h"
#include "tierfs/ns.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "tierfs/space.h"

static struct log_ratelimit store_log, limit_log;

struct victim {
	uint32_t pfn;
	struct inode *inode;
	uint64_t index;
};

/* Whether every 32-bit word of page is the same; its value in *fill. */
static bool is_same_filled(const void *page, uint32_t *fill)
{
	const uint32_t *w = page;

	for (size_t i = 1; i < PAGE_SIZE / sizeof(*w); i++)
		if (w[i] != w[0])
			return false;
	*fill = w[0];
	return true;
}

static bool holds(struct inode *const *locked, unsigned int nr, const struct inode *inode)
{
	for (unsigned int i = 0; i < nr; i++)
		if (locked[i] == inode)
			return true;
	return false;
}

/*
 * Whose pages go: the tenant furthest over its share; else the one whose
 * inactive tail promises the most evictions: its listed pages times the
 * share of its recent scans that found a page to evict.  A tenant
 * re-reading a hot set yields almost nothing to a scan (its pages are used
 * twice again before they reach the tail), one streaming through a large
 * file yields nearly every page, so the streamer pays for its pass while
 * the hot set stays, whichever of the two holds more pages.
 *
 * A record older than one pass over everything listed (as long as an idle
 * page lasts in a single LRU) is forgotten, and the lists looked at again:
 * a hot set gone idle is found out and goes in its turn.  lru->lock held.
 */
static uint64_t nr_listed_all(const struct lru *lru)
{
	uint64_t nr = 0;

	for (unsigned int i = 0; i < lru->nr_all; i++)
		nr += lru_lists_nr_listed(lru->all[i]);
	return nr;
}

static bool is_record_stale(const struct lru *lru, const struct lru_lists *ls, uint64_t all_listed)
{
	return lru->scan_clock - ls->scanned_at > all_listed;
}

/* Never 0 for a list with pages: one that only promoted still gets a turn. */
static uint64_t expected_yield(const struct lru *lru, const struct lru_lists *ls,
			       uint64_t all_listed)
{
	uint64_t listed = lru_lists_nr_listed(ls);

	if (!ls->nr_scanned || is_record_stale(lru, ls, all_listed))
		return listed;
	return (listed * (ls->nr_scanned - ls->nr_rotated + 1) + ls->nr_scanned) /
	       (ls->nr_scanned + 1);
}

static struct lru_lists *pick_lists(struct lru *lru)
{
	struct lru_lists *over = NULL, *best = NULL;
	uint64_t most_over = 0, most = 0, all_listed = nr_listed_all(lru);

	for (unsigned int i = 0; i < lru->nr_all; i++) {
		struct lru_lists *ls = lru->all[i];
		uint64_t limit = atomic_load(&ls->limit_pages);
		uint64_t resident = atomic_load(&ls->nr_resident);
		uint64_t yield;

		if (!lru_lists_nr_listed(ls))
			continue;
		if (limit && resident > limit && resident - limit > most_over) {
			over = ls;
			most_over = resident - limit;
		}
		yield = expected_yield(lru, ls, all_listed);
		if (!best || yield > most) {
			best = ls;
			most = yield;
		}
	}
	return over ? over : best ? best : &lru->root;
}

/*
 * What a scan of ls found (looked at: evicted or promoted; rotated:
 * promoted) into its record, a stale record forgotten first, and onto the
 * clock.  Pages passed over (busy, or loaded for a read) tell nothing of
 * the list and are not counted.  lru->lock held.
 */
static void record_scan(struct lru *lru, struct lru_lists *ls, unsigned int looked,
			unsigned int rotated)
{
	if (is_record_stale(lru, ls, nr_listed_all(lru))) {
		ls->nr_scanned = 0;
		ls->nr_rotated = 0;
	} else if (ls->nr_scanned > lru_lists_nr_listed(ls) + 8 * RECLAIM_BATCH) {
		ls->nr_scanned /= 2;
		ls->nr_rotated /= 2;
	}
	ls->nr_scanned += looked;
	ls->nr_rotated += rotated;
	lru->scan_clock += looked;
	ls->scanned_at = lru->scan_clock;
}

/* From the active tail to the inactive head: one more use takes it back. */
static void deactivate(struct lru *lru, uint32_t pfn)
{
	atomic_store(&lru->pages[pfn].uses, LRU_USED_ONCE);
	lru_rotate_locked(lru, pfn, LRU_INACTIVE);
}

/*
 * Take up to max victims off the inactive tail of from (NULL: as
 * pick_lists chooses), promoting pages used twice since the last scan,
 * sparing pages loaded for a read not done yet, and ageing the active
 * list into the inactive one.  Their inodes end up
 * write-locked, listed in locked.
 */
static unsigned int isolate(struct data_space *ds, struct inode *held, struct lru_lists *from,
			    unsigned int max, struct victim *v, struct inode **locked,
			    unsigned int *nr_locked)
{
	struct lru *lru = &ds->lru;
	struct lru_lists *ls;
	unsigned int nr = 0, scanned = 0, looked = 0, rotated = 0;
	uint32_t spared = LRU_NIL;
	bool has_promoted = false;
	unsigned char uses;

	pthread_mutex_lock(&lru->lock);
	ls = from ? from : pick_lists(lru);
	while (nr < max && scanned++ < 8 * RECLAIM_BATCH) {
		uint32_t pfn = ls->tail[LRU_INACTIVE];
		struct lru_page *p;

		if (pfn != LRU_NIL && pfn == spared)
			break; /* round the whole inactive list */
		if (pfn == LRU_NIL) {
			/*
			 * Nothing inactive: age the active tail, unless this
			 * scan promoted pages: evicting what was active a
			 * moment ago would leave it no time for its next use.
			 */
			pfn = ls->tail[LRU_ACTIVE];
			if (pfn == LRU_NIL || has_promoted)
				break;
			deactivate(lru, pfn);
			continue;
		}
		p = &lru->pages[pfn];
		uses = atomic_exchange(&p->uses, LRU_UNUSED);
		switch (uses) {
		case LRU_USED_TWICE:
			looked++;
			rotated++;
			has_promoted = true;
			lru_rotate_locked(lru, pfn, LRU_ACTIVE);
			continue;
		case LRU_LOADED:
			/* Its read is still to come: one more pass, unused. */
			if (spared == LRU_NIL)
				spared = pfn;
			lru_rotate_locked(lru, pfn, LRU_INACTIVE);
			continue;
		}
		if (p->inode != held && !holds(locked, *nr_locked, p->inode)) {
			if (pthread_rwlock_trywrlock(&p->inode->lock)) {
				/* Busy (maybe ours): look again later. */
				atomic_store(&p->uses, uses);
				lru_rotate_locked(lru, pfn, LRU_INACTIVE);
				continue;
			}
			locked[(*nr_locked)++] = p->inode;
		}
		looked++;
		lru_del_locked(lru, pfn);
		v[nr++] = (struct victim){ pfn, p->inode, p->index };
	}
	record_scan(lru, ls, looked, rotated);
	/* Keep the inactive list at least as long as the active one. */
	for (int i = 0; i < RECLAIM_BATCH && ls->nr[LRU_ACTIVE] > ls->nr[LRU_INACTIVE]; i++)
		deactivate(lru, ls->tail[LRU_ACTIVE]);
	pthread_mutex_unlock(&lru->lock);
	return nr;
}

/*
 * The page leaves memory for entry; its pool page goes back, and may be
 * handed out again at once: nothing of it may be touched after.  The
 * owner's lock held.
 */
static void evict(struct data_space *ds, struct inode *inode, uint64_t index, uint32_t pfn,
		  uint64_t entry)
{
	struct lru_lists *ls = lru_page(&ds->lru, pfn)->lists;

	pagemap_set(&inode->pages, index, entry, NULL);
	atomic_fetch_sub_explicit(&ls->nr_resident, 1, memory_order_relaxed);
	if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED)
		atomic_fetch_add_explicit(&ls->nr_swapped, 1, memory_order_relaxed);
	if (atomic_exchange_explicit(&lru_page(&ds->lru, pfn)->is_readahead, false,
				     memory_order_relaxed))
		atomic_fetch_add_explicit(&ds->ra.nr_misses, 1, memory_order_relaxed);
	lru_page(&ds->lru, pfn)->inode = NULL;
	pagepool_free_page(ds->pool, pfn);
}

/* Back to the LRU, at the active head: the page stays. */
static void keep(struct data_space *ds, uint32_t pfn)
{
	struct lru_page *p = lru_page(&ds->lru, pfn);

	lru_add(&ds->lru, p->lists, pfn, p->inode, p->index, 0);
	pthread_mutex_lock(&ds->lru.lock);
	lru_rotate_locked(&ds->lru, pfn, LRU_ACTIVE);
	pthread_mutex_unlock(&ds->lru.lock);
}

/*
 * End the writeback of a page: evict it to its slot if nobody wrote it
 * meanwhile, else free the slot and keep the page; free an orphan.  held
 * is an inode the caller has locked.  Returns 1 if the pool page was freed,
 * 0 if kept, -EAGAIN if its owner is busy (try again later).
 */
static int finish(struct data_space *ds, const struct reclaim_pending *w, struct inode *held)
{
	struct lru_page *p = lru_page(&ds->lru, w->pfn);
	struct inode *inode;
	bool is_evicted;

	/* The owner is read under lru->lock: freeing it clears p->inode under it. */
	pthread_mutex_lock(&ds->lru.lock);
	inode = p->inode;
	if (inode && inode != held && pthread_rwlock_trywrlock(&inode->lock)) {
		pthread_mutex_unlock(&ds->lru.lock);
		return -EAGAIN;
	}
	p->is_writeback = false;
	pthread_mutex_unlock(&ds->lru.lock);
	if (!inode) {
		if (w->is_stored)
			ds->backend->ops->free(ds->backend, &w->slot, 1);
		pagepool_free_page(ds->pool, w->pfn);
		return 1;
	}
	is_evicted = w->is_stored && !p->is_redirtied;
	if (is_evicted) {
		evict(ds, inode, p->index, w->pfn, pagemap_mk_swapped(w->slot));
		atomic_fetch_add_explicit(&ds->swap.nr_evicted, 1, memory_order_relaxed);
	} else {
		if (w->is_stored)
			ds->backend->ops->free(ds->backend, &w->slot, 1);
		else
			atomic_fetch_add_explicit(&ds->swap.nr_store_failures, 1,
						  memory_order_relaxed);
		keep(ds, w->pfn);
	}
	if (inode != held)
		pthread_rwlock_unlock(&inode->lock);
	return is_evicted;
}
/* Finish the pending pages whose owners are free now.  Returns pages freed. */
static uint64_t finish_pending(struct data_space *ds, struct inode *held)
{
	unsigned int kept = 0;
	uint64_t freed = 0;

	for (unsigned int i = 0; i < ds->reclaim.nr_pending; i++) {
		int ret = finish(ds, &ds->reclaim.pending[i], held);

		if (ret == -EAGAIN)
			ds->reclaim.pending[kept++] = ds->reclaim.pending[i];
		else
			freed += (uint64_t)ret;
	}
	ds->reclaim.nr_pending = kept;
	return freed;
}

void reclaim_init(struct reclaimer *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->batch_lock, NULL);
	atomic_init(&r->nr_pending, 0);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	pthread_mutex_init(&r->store_lock, NULL);
	pthread_cond_init(&r->stored, NULL);
}

void reclaim_fini(struct reclaimer *r)
{
	pthread_cond_destroy(&r->stored);
	pthread_mutex_destroy(&r->store_lock);
	pthread_cond_destroy(&r->wake);
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->batch_lock);
}

void reclaim_wait_stable(struct reclaimer *r, struct lru_page *p)
{
	if (!atomic_load_explicit(&p->is_storing, memory_order_acquire))
		return;
	pthread_mutex_lock(&r->store_lock);
	while (atomic_load_explicit(&p->is_storing, memory_order_acquire))
		pthread_cond_wait(&r->stored, &r->store_lock);
	pthread_mutex_unlock(&r->store_lock);
}

/* The store of pages[0..nr) has returned: they may change again. */
static void end_storing(struct data_space *ds, const uint32_t *pfns, unsigned int nr)
{
	struct reclaimer *r = &ds->reclaim;

	pthread_mutex_lock(&r->store_lock);
	for (unsigned int i = 0; i < nr; i++)
		atomic_store_explicit(&lru_page(&ds->lru, pfns[i])->is_storing, false,
				      memory_order_release);
	pthread_cond_broadcast(&r->stored);
	pthread_mutex_unlock(&r->store_lock);
}

/*
 * The victims of one isolation, their inodes still locked: a same-filled
 * page and a clean one leave at once, the rest are put under writeback and
 * appended to pfns and pages at *nr_store.  Returns the pool pages freed.
 */
static uint64_t sort_victims(struct data_space *ds, const struct victim *v, unsigned int nr,
			     uint64_t store_room, uint32_t *pfns, void **pages,
			     unsigned int *nr_store)
{
	uint64_t freed = 0;

	for (unsigned int i = 0; i < nr; i++) {
		struct lru_page *p = lru_page(&ds->lru, v[i].pfn);
		void *page = pagepool_addr(ds->pool, v[i].pfn);
		uint32_t fill;

		if (p->swap_slot) {
			/* Read back and never written: the backend copy is current. */
			uint64_t slot = p->swap_slot - 1;

			p->swap_slot = 0; /* before evict(): the page may be reused at once */
			evict(ds, v[i].inode, v[i].index, v[i].pfn, pagemap_mk_swapped(slot));
			atomic_fetch_add_explicit(&ds->swap.nr_clean_dropped, 1,
						  memory_order_relaxed);
			freed++;
		} else if (is_same_filled(page, &fill)) {
			evict(ds, v[i].inode, v[i].index, v[i].pfn, pagemap_mk_filled(fill));
			atomic_fetch_add(&ds->nr_filled, 1);
			atomic_fetch_add_explicit(&ds->swap.nr_filled_evicted, 1,
						  memory_order_relaxed);
			freed++;
		} else if (*nr_store >= store_room) {
			/* The memory limit leaves a RAM pool no room: the page stays. */
			atomic_fetch_add_explicit(&ds->swap.nr_limit_rejects, 1,
						  memory_order_relaxed);
			log_limited(&limit_log, LOG_WARNING,
				    "the %s pool fills the memory limit: no more stores",
				    ds->backend->ops->name);
			keep(ds, v[i].pfn);
		} else {
			p->is_writeback = true;
			p->is_redirtied = false;
			atomic_store_explicit(&p->is_storing, true, memory_order_relaxed);
			pfns[*nr_store] = v[i].pfn;
			pages[(*nr_store)++] = page;
		}
	}
	return freed;
}

/*
 * Evict up to nr_batches batches, isolated one after the other and stored
 * in one call.  Isolation is one reclaimer at a time, under batch_lock: a
 * second one would only find the first one's inodes locked and give up,
 * failing an allocation that waiting a moment would have served.  The
 * store runs without it, so that the stores of the reclaim thread and of
 * the threads reclaiming directly overlap, each page's room in pending[]
 * reserved meanwhile (nr_in_flight).
 */
static uint64_t reclaim_run(struct data_space *ds, struct inode *held, struct lru_lists *from,
			    unsigned int nr_batches)
{
	struct reclaimer *r = &ds->reclaim;
	struct victim v[RECLAIM_BATCH];
	struct inode *locked[RECLAIM_BATCH];
	void *pages[RECLAIM_MAX_STORE];
	uint64_t slots[RECLAIM_MAX_STORE], freed;
	uint32_t pfns[RECLAIM_MAX_STORE];
	unsigned int nr_store = 0;
	uint64_t store_room;
	int stored;

	pthread_mutex_lock(&r->batch_lock);
	freed = finish_pending(ds, held);
	/* Bringing everything back: stores begun before finish, nothing else leaves. */
	if (atomic_load(&ds->is_draining)) {
		pthread_mutex_unlock(&r->batch_lock);
		return freed;
	}
	/* Room at the limit, less what other reclaimers are storing now. */
	store_room = budget_store_room(ds);
	if (store_room != UINT64_MAX)
		store_room = store_room > r->nr_in_flight ? store_room - r->nr_in_flight : 0;
	for (unsigned int b = 0; b < nr_batches && !atomic_load(&ds->is_draining); b++) {
		unsigned int room =
			RECLAIM_MAX_PENDING - r->nr_pending - r->nr_in_flight - nr_store;
		unsigned int want = room < RECLAIM_BATCH ? room : RECLAIM_BATCH;
		unsigned int nr_locked = 0, nr;

		nr = isolate(ds, held, from, want, v, locked, &nr_locked);
		freed += sort_victims(ds, v, nr, store_room, pfns, pages, &nr_store);
		for (unsigned int i = 0; i < nr_locked; i++)
			pthread_rwlock_unlock(&locked[i]->lock);
		if (nr < want || !want)
			break; /* the lists or pending[] ran out: so would the next */
	}
	if (nr_store) {
		r->nr_in_flight += nr_store;
		pthread_mutex_unlock(&r->batch_lock);
		stored = ds->backend->ops->store(ds->backend, pages, nr_store, slots);
		end_storing(ds, pfns, nr_store);
		if (stored < (int)nr_store)
			log_limited(&store_log, stored == -ENOSPC ? LOG_WARNING : LOG_ERR,
				    "%s backend stored %d of %u pages (%s): the rest stay resident",
				    ds->backend->ops->name, stored < 0 ? 0 : stored, nr_store,
				    stored < 0 ? strerror(-stored) : "full");
		if (stored < 0)
			stored = 0;
		pthread_mutex_lock(&r->batch_lock);
		r->nr_in_flight -= nr_store;
		for (unsigned int i = 0; i < nr_store; i++)
			r->pending[r->nr_pending++] =
				(struct reclaim_pending){ pfns[i], (int)i < stored,
							  (int)i < stored ? slots[i] : 0 };
		freed += finish_pending(ds, held);
	}
	pthread_mutex_unlock(&r->batch_lock);
	if (atomic_load(&r->nr_pending))
		reclaim_kick(ds); /* the reclaimer finishes them when the owners are free */
	if (budget_update(ds, false))
		reclaim_kick(ds);
	return freed;
}

/*
 * Batches for one store toward nr pages: one for a synchronous backend,
 * whose store is work on this thread that a larger batch would not
 * shorten; for an asynchronous one, as many as nr needs up to
 * RECLAIM_ASYNC_BATCHES, which the backend writes as a few large requests
 * in hardly more time than one batch's.
 */
static unsigned int nr_batches_for(const struct data_space *ds, uint64_t nr)
{
	if (ds->backend->ops->is_sync || nr <= RECLAIM_BATCH)
		return 1;
	if (nr >= RECLAIM_MAX_STORE)
		return RECLAIM_ASYNC_BATCHES;
	return (unsigned int)((nr + RECLAIM_BATCH - 1) / RECLAIM_BATCH);
}

uint64_t reclaim_batch(struct data_space *ds, struct inode *held)
{
	return reclaim_run(ds, held, NULL, nr_batches_for(ds, RECLAIM_MAX_STORE));
}

uint64_t reclaim_batch_from(struct data_space *ds, struct inode *held, struct lru_lists *from)
{
	return reclaim_run(ds, held, from, nr_batches_for(ds, RECLAIM_MAX_STORE));
}

uint64_t reclaim_pages(struct data_space *ds, uint64_t nr)
{
	uint64_t freed = 0, n, nr_idle = 0, max_idle;

	if (!ds->backend)
		return 0;
	/*
	 * A batch that frees nothing may only have promoted pages in use
	 * or aged the active list: give up once every listed page has had
	 * its scan, and two more batches.
	 */
	max_idle = (lru_nr_listed(&ds->lru, LRU_INACTIVE) + lru_nr_listed(&ds->lru, LRU_ACTIVE)) /
			   (8 * RECLAIM_BATCH) +
		   2;
	while (freed < nr && nr_idle < max_idle) {
		n = reclaim_run(ds, NULL, NULL, nr_batches_for(ds, nr - freed));
		freed += n;
		nr_idle = n ? 0 : nr_idle + 1;
	}
	return freed;
}

void reclaim_kick(struct data_space *ds)
{
	pthread_mutex_lock(&ds->reclaim.lock);
	pthread_cond_signal(&ds->reclaim.wake);
	pthread_mutex_unlock(&ds->reclaim.lock);
}

/*
 * Sleep up to ms unless kicked; ds->reclaim.lock held.  The wait names its
 * clock itself, so a step of the date can neither stretch nor cut it short.
 */
static void wait_ms(struct data_space *ds, long ms)
{
	uint64_t deadline = clock_now_ns() + (uint64_t)ms * 1000000;
	struct timespec ts = { .tv_sec = (time_t)(deadline / 1000000000),
			       .tv_nsec = (long)(deadline % 1000000000) };

	pthread_cond_clockwait(&ds->reclaim.wake, &ds->reclaim.lock, CLOCK_MONOTONIC, &ts);
}

static void *reclaimer(void *arg)
{
	struct data_space *ds = arg;

	pthread_mutex_lock(&ds->reclaim.lock);
	while (!ds->reclaim.stop) {
		if (pagepool_nr_in_use(ds->pool) <= ds->budget.high_pages) {
			if (!atomic_load(&ds->reclaim.nr_pending)) {
				pthread_cond_wait(&ds->reclaim.wake, &ds->reclaim.lock);
				continue;
			}
			/* Stores done whose owners were busy: finish them soon. */
			wait_ms(ds, 1);
			pthread_mutex_unlock(&ds->reclaim.lock);
			pthread_mutex_lock(&ds->reclaim.batch_lock);
			finish_pending(ds, NULL);
			pthread_mutex_unlock(&ds->reclaim.batch_lock);
			pthread_mutex_lock(&ds->reclaim.lock);
			continue;
		}
		pthread_mutex_unlock(&ds->reclaim.lock);
		/* A batch or two that free nothing may only have promoted pages in use. */
		for (unsigned int nr_idle = 0; nr_idle < 3;) {
			uint64_t used = pagepool_nr_in_use(ds->pool), low = ds->budget.low_pages;

			if (used <= low)
				break;
			nr_idle = reclaim_run(ds, NULL, NULL, nr_batches_for(ds, used - low)) ?
					  0 :
					  nr_idle + 1;
		}
		pthread_mutex_lock(&ds->reclaim.lock);
		/* Nothing evictable now (all busy or no room to store): back off. */
		if (pagepool_nr_in_use(ds->pool) > ds->budget.high_pages && !ds->reclaim.stop)
			wait_ms(ds, atomic_load(&ds->budget.is_pool_full) ? 100 : 10);
	}
	pthread_mutex_unlock(&ds->reclaim.lock);
	return NULL;
}

int reclaim_start(struct data_space *ds)
{
	int err;

	if (!ds->backend)
		return 0;
	err = pthread_create(&ds->reclaim.thread, NULL, reclaimer, ds);
	if (err)
		return -err;
	ds->reclaim.has_thread = true;
	return 0;
}

void reclaim_stop(struct data_space *ds)
{
	if (ds->reclaim.has_thread) {
		pthread_mutex_lock(&ds->reclaim.lock);
		ds->reclaim.stop = true;
		pthread_cond_signal(&ds->reclaim.wake);
		pthread_mutex_unlock(&ds->reclaim.lock);
		pthread_join(ds->reclaim.thread, NULL);
		ds->reclaim.has_thread = false;
	}
	/*
	 * No request runs now, and an owner's lock is only ever held
	 * briefly.  A store another thread still has in flight needs
	 * batch_lock to end: wait for it too.
	 */
	pthread_mutex_lock(&ds->reclaim.batch_lock);
	for (;;) {
		finish_pending(ds, NULL);
		if (!ds->reclaim.nr_pending && !ds->reclaim.nr_in_flight)
			break;
		pthread_mutex_unlock(&ds->reclaim.batch_lock);
		sched_yield();
		pthread_mutex_lock(&ds->reclaim.batch_lock);
	}
	pthread_mutex_unlock(&ds->reclaim.batch_lock);
}
