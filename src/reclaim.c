// SPDX-License-Identifier: MIT
/*
 * Eviction from the LRU to the backend.  Isolation happens under the LRU
 * lock, trylocking each victim's inode (a victim is on the list, so its
 * inode is alive; once locked, the inode cannot be freed: freeing takes the
 * inode lock).  The backend store runs with the victims' inodes locked and
 * the LRU lock dropped.
 */
#include <errno.h>
#include <string.h>

#include "tierfs/backend.h"
#include "tierfs/data.h"
#include "tierfs/ns.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"

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
 * Take up to RECLAIM_BATCH victims off the inactive tail, promoting pages
 * referenced since the last scan and ageing the active list into the
 * inactive one.  Their inodes end up write-locked, listed in locked.
 */
static unsigned int isolate(struct data_space *ds, struct inode *held, struct victim *v,
			    struct inode **locked, unsigned int *nr_locked)
{
	struct lru *lru = &ds->lru;
	unsigned int nr = 0, scanned = 0;

	pthread_mutex_lock(&lru->lock);
	while (nr < RECLAIM_BATCH && scanned++ < 8 * RECLAIM_BATCH) {
		uint32_t pfn = lru->tail[LRU_INACTIVE];
		struct lru_page *p;

		if (pfn == LRU_NIL) {
			/* Nothing inactive: age the active tail. */
			pfn = lru->tail[LRU_ACTIVE];
			if (pfn == LRU_NIL)
				break;
			atomic_store(&lru->pages[pfn].referenced, false);
			lru_rotate_locked(lru, pfn, LRU_INACTIVE);
			continue;
		}
		p = &lru->pages[pfn];
		if (atomic_exchange(&p->referenced, false)) {
			lru_rotate_locked(lru, pfn, LRU_ACTIVE);
			continue;
		}
		if (p->inode != held && !holds(locked, *nr_locked, p->inode)) {
			if (pthread_rwlock_trywrlock(&p->inode->lock)) {
				/* Busy (maybe ours): look again later. */
				lru_rotate_locked(lru, pfn, LRU_INACTIVE);
				continue;
			}
			locked[(*nr_locked)++] = p->inode;
		}
		lru_del_locked(lru, pfn);
		v[nr++] = (struct victim){ pfn, p->inode, p->index };
	}
	/* Keep the inactive list at least as long as the active one. */
	for (int i = 0; i < RECLAIM_BATCH && lru->nr[LRU_ACTIVE] > lru->nr[LRU_INACTIVE]; i++) {
		uint32_t pfn = lru->tail[LRU_ACTIVE];

		atomic_store(&lru->pages[pfn].referenced, false);
		lru_rotate_locked(lru, pfn, LRU_INACTIVE);
	}
	pthread_mutex_unlock(&lru->lock);
	return nr;
}

/*
 * The page leaves memory for entry; its pool page goes back, and may be
 * handed out again at once: nothing of it may be touched after.
 */
static void evict(struct data_space *ds, const struct victim *v, uint64_t entry)
{
	pagemap_set(&v->inode->pages, v->index, entry, NULL);
	lru_page(&ds->lru, v->pfn)->inode = NULL;
	pagepool_free_page(ds->pool, v->pfn);
}

uint64_t reclaim_batch(struct data_space *ds, struct inode *held)
{
	struct victim v[RECLAIM_BATCH], *to_store[RECLAIM_BATCH];
	struct inode *locked[RECLAIM_BATCH];
	void *pages[RECLAIM_BATCH];
	uint64_t slots[RECLAIM_BATCH], freed = 0;
	unsigned int nr_locked = 0, nr, nr_store = 0;
	int stored = 0;

	/*
	 * One batch at a time: a second reclaimer would only find the first
	 * one's inodes locked and give up, failing an allocation that waiting
	 * a moment would have served.
	 */
	pthread_mutex_lock(&ds->reclaim_batch_lock);
	nr = isolate(ds, held, v, locked, &nr_locked);
	for (unsigned int i = 0; i < nr; i++) {
		struct lru_page *p = lru_page(&ds->lru, v[i].pfn);
		void *page = pagepool_addr(ds->pool, v[i].pfn);
		uint32_t fill;

		if (p->swap_slot) {
			/* Read back and never written: the backend copy is current. */
			uint64_t slot = p->swap_slot - 1;

			p->swap_slot = 0; /* before evict(): the page may be reused at once */
			evict(ds, &v[i], pagemap_mk_swapped(slot));
			atomic_fetch_add_explicit(&ds->swap.nr_clean_dropped, 1, memory_order_relaxed);
			freed++;
		} else if (is_same_filled(page, &fill)) {
			evict(ds, &v[i], pagemap_mk_filled(fill));
			atomic_fetch_add(&ds->nr_filled, 1);
			atomic_fetch_add_explicit(&ds->swap.nr_filled_evicted, 1, memory_order_relaxed);
			freed++;
		} else {
			to_store[nr_store] = &v[i];
			pages[nr_store++] = page;
		}
	}
	if (nr_store) {
		stored = ds->backend->ops->store(ds->backend, pages, nr_store, slots);
		if (stored < 0)
			stored = 0;
	}
	for (unsigned int i = 0; i < nr_store; i++) {
		if ((int)i < stored) {
			evict(ds, to_store[i], pagemap_mk_swapped(slots[i]));
			freed++;
			continue;
		}
		/* Refused or failed: the page stays, at the active head. */
		atomic_fetch_add_explicit(&ds->swap.nr_store_failures, 1, memory_order_relaxed);
		lru_add(&ds->lru, to_store[i]->pfn, to_store[i]->inode, to_store[i]->index, 0);
		pthread_mutex_lock(&ds->lru.lock);
		lru_rotate_locked(&ds->lru, to_store[i]->pfn, LRU_ACTIVE);
		pthread_mutex_unlock(&ds->lru.lock);
	}
	atomic_fetch_add_explicit(&ds->swap.nr_evicted, (uint64_t)stored, memory_order_relaxed);
	for (unsigned int i = 0; i < nr_locked; i++)
		pthread_rwlock_unlock(&locked[i]->lock);
	pthread_mutex_unlock(&ds->reclaim_batch_lock);
	return freed;
}

uint64_t reclaim_pages(struct data_space *ds, uint64_t nr)
{
	uint64_t freed = 0, n;

	if (!ds->backend)
		return 0;
	while (freed < nr && (n = reclaim_batch(ds, NULL)))
		freed += n;
	return freed;
}

void reclaim_kick(struct data_space *ds)
{
	pthread_mutex_lock(&ds->reclaim_lock);
	pthread_cond_signal(&ds->reclaim_wake);
	pthread_mutex_unlock(&ds->reclaim_lock);
}

static void *reclaimer(void *arg)
{
	struct data_space *ds = arg;

	pthread_mutex_lock(&ds->reclaim_lock);
	while (!ds->reclaim_stop) {
		if (pagepool_nr_in_use(ds->pool) <= ds->high_pages) {
			pthread_cond_wait(&ds->reclaim_wake, &ds->reclaim_lock);
			continue;
		}
		pthread_mutex_unlock(&ds->reclaim_lock);
		while (pagepool_nr_in_use(ds->pool) > ds->low_pages && reclaim_batch(ds, NULL))
			;
		pthread_mutex_lock(&ds->reclaim_lock);
		if (pagepool_nr_in_use(ds->pool) > ds->high_pages && !ds->reclaim_stop) {
			/* Nothing evictable now (all busy or the backend full): back off. */
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&ds->reclaim_wake, &ds->reclaim_lock, &ts);
		}
	}
	pthread_mutex_unlock(&ds->reclaim_lock);
	return NULL;
}

int reclaim_start(struct data_space *ds)
{
	int err;

	if (!ds->backend)
		return 0;
	err = pthread_create(&ds->reclaimer, NULL, reclaimer, ds);
	if (err)
		return -err;
	ds->has_reclaimer = true;
	return 0;
}

void reclaim_stop(struct data_space *ds)
{
	if (!ds->has_reclaimer)
		return;
	pthread_mutex_lock(&ds->reclaim_lock);
	ds->reclaim_stop = true;
	pthread_cond_signal(&ds->reclaim_wake);
	pthread_mutex_unlock(&ds->reclaim_lock);
	pthread_join(ds->reclaimer, NULL);
	ds->has_reclaimer = false;
}
