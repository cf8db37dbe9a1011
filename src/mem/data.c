// SPDX-License-Identifier: MIT
/*
 * File data over the page map.  A written page is resident in the pool; a
 * hole or a same-filled page uses no pool memory and is materialised only
 * when written; a swapped page lives in the backend until it is read or
 * written.  size= counts every present page, wherever it lives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/clock.h"
#include "tierfs/data.h"
#include "tierfs/log.h"
#include "tierfs/lru.h"
#include "tierfs/ns.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"

#include "data_priv.h"

/*
 * Slots an inode keeps back while its loads are unchecked, at most: a few
 * swap-ins' batches and their readahead.  Past that, whoever frees waits.
 */
#define DATA_MAX_DEFERRED 256

static const char zero_page[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

/* One each: a shared one told the suppressed count of the other's message. */
static struct log_ratelimit size_log, full_log, load_log;

/* An ENOSPC for want of room that a caller gets, not one a write waits out. */
static void log_full(void)
{
	log_limited(&full_log, LOG_WARNING,
		    "ENOSPC: no room: the resident budget and the backend hold no more, or "
		    "nothing could be evicted");
}

/*
 * Count nr new present pages against size= and the capacity, nr_filled of
 * them holding no memory yet (fallocated).  All or nothing.
 */
static int charge(struct data_space *ds, uint64_t nr, uint64_t nr_filled)
{
	uint64_t before = atomic_fetch_add(&ds->nr_pages, nr), max = atomic_load(&ds->max_pages);

	if (max && before + nr > max) {
		log_limited(&size_log, LOG_INFO, "ENOSPC: size= is reached");
		goto refuse;
	}
	if (!budget_fits(ds, nr_filled)) {
		/*
		 * The capacity is an estimate refreshed now and then: refresh
		 * it first, unless it is fresh (on a full mount every write is
		 * refused here, and a forced update reads /proc and trims).
		 */
		if (budget_refresh(ds))
			reclaim_kick(ds);
		/* Counted, not logged: a write waits for room and tries again. */
		if (!budget_fits(ds, nr_filled)) {
			atomic_fetch_add_explicit(&ds->swap.nr_capacity_enospc, 1,
						  memory_order_relaxed);
			goto refuse;
		}
	}
	budget_note_growth(ds, before + nr);
	return 0;

refuse:
	atomic_fetch_sub(&ds->nr_pages, nr);
	return -ENOSPC;
}

static void fill_page(void *page, uint32_t fill)
{
	uint32_t *w = page;

	if (!fill) {
		memset(page, 0, PAGE_SIZE);
		return;
	}
	for (size_t i = 0; i < PAGE_SIZE / sizeof(*w); i++)
		w[i] = fill;
}

/* Bytes [start, start + n) of a page filled with fill, into dst. */
static void fill_page_range(char *dst, uint32_t fill, size_t start, size_t n)
{
	const char *word = (const char *)&fill; /* as fill_page lays it out */

	for (size_t i = 0; i < n; i++)
		dst[i] = word[(start + i) & 3];
}

uint64_t data_load_begin(struct inode *inode)
{
	inode->nr_unchecked++;
	atomic_fetch_add(&inode->nr_loading, 1);
	return inode->slot_gen;
}

/*
 * Only the last load of an inode takes load_lock.  A waiter checks the count
 * and sleeps under it, so a broadcast made under it after the count reached
 * 0 finds the waiter asleep or finds it never slept.
 */
void data_load_end(struct data_space *ds, struct inode *inode)
{
	if (atomic_fetch_sub(&inode->nr_loading, 1) != 1)
		return;
	pthread_mutex_lock(&ds->load_lock);
	pthread_cond_broadcast(&ds->load_done);
	pthread_mutex_unlock(&ds->load_lock);
}

static void give_back_deferred(struct data_space *ds, struct inode *inode)
{
	if (!inode->nr_deferred)
		return;
	ds->backend->ops->free(ds->backend, inode->deferred, inode->nr_deferred);
	inode->nr_deferred = 0;
	free(inode->deferred);
	inode->deferred = NULL;
}

bool data_load_recheck(struct data_space *ds, struct inode *inode, uint64_t gen)
{
	if (!--inode->nr_unchecked)
		give_back_deferred(ds, inode);
	return inode->slot_gen != gen;
}

/* Wait until no read of inode's slots is in flight: one given back now cannot tear it. */
static void wait_reads(struct data_space *ds, struct inode *inode)
{
	if (!atomic_load(&inode->nr_loading))
		return;
	pthread_mutex_lock(&ds->load_lock);
	while (atomic_load(&inode->nr_loading))
		pthread_cond_wait(&ds->load_done, &ds->load_lock);
	pthread_mutex_unlock(&ds->load_lock);
}

/*
 * Before a slot goes back without waiting for the checks: wait for the
 * reads in flight, and tell the unchecked loads to load again.
 */
static void unchecked_load_again(struct data_space *ds, struct inode *inode)
{
	wait_reads(ds, inode);
	if (inode->nr_unchecked)
		inode->slot_gen++;
}

void data_wait_loads(struct data_space *ds, struct inode *inode)
{
	if (!inode->nr_deferred)
		return;
	unchecked_load_again(ds, inode);
	give_back_deferred(ds, inode);
}

void data_free_slot(struct data_space *ds, struct inode *inode, uint64_t slot)
{
	if (inode->nr_unchecked) {
		if (!inode->deferred)
			inode->deferred = malloc(DATA_MAX_DEFERRED * sizeof(*inode->deferred));
		if (inode->deferred && inode->nr_deferred < DATA_MAX_DEFERRED) {
			inode->deferred[inode->nr_deferred++] = slot;
			return;
		}
		/* A truncate of many pages, or no memory: the loads load again. */
		unchecked_load_again(ds, inode);
	}
	ds->backend->ops->free(ds->backend, &slot, 1);
}

/* Stores refused so far, by the backend or the memory limit. */
static uint64_t nr_refused(struct data_space *ds)
{
	return atomic_load_explicit(&ds->swap.nr_store_failures, memory_order_relaxed) +
	       atomic_load_explicit(&ds->swap.nr_limit_rejects, memory_order_relaxed);
}

bool data_wait_room(struct data_space *ds, struct data_room_wait *w)
{
	uint64_t now = clock_now_ns(), cap = atomic_load(&ds->budget.capacity_x1024);
	uint64_t max = atomic_load(&ds->max_pages), evicted = atomic_load(&ds->swap.nr_evicted);

	if (!ds->backend || !cap || (max && atomic_load(&ds->nr_pages) >= max))
		return false;
	if (pagepool_nr_in_use(ds->pool) <= BUDGET_MIN_PAGES)
		goto full;
	if (!w->start_ns || cap > w->capacity || evicted != w->nr_evicted) {
		w->start_ns = w->start_ns ? w->start_ns : now;
		w->progress_ns = now;
		w->capacity = cap;
		w->nr_evicted = evicted;
	}
	if (now - w->progress_ns >= (uint64_t)DATA_ROOM_STALL_MS * 1000000 ||
	    now - w->start_ns >= (uint64_t)DATA_ROOM_MAX_MS * 1000000)
		goto full;
	atomic_fetch_add_explicit(&ds->swap.nr_room_waits, 1, memory_order_relaxed);
	/*
	 * The reclaimer rests below its low mark, where the capacity may not
	 * yet know what pages compress to: evict here, and so measure.
	 */
	if (!reclaim_batch(ds, NULL))
		usleep(5000);
	budget_refresh(ds);
	return true;

full:
	log_full();
	return false;
}

bool data_is_short(struct data_space *ds, uint64_t nr_pages)
{
	return ds->backend && !budget_has_room(ds, nr_pages);
}

bool data_may_reclaim(struct data_space *ds, const struct inode *inode, uint64_t nr_pages)
{
	if (!ds->backend)
		return false;
	/* inode->lists is set when the inode is made and never changed. */
	if (inode->lists && lru_lists_is_at_share(inode->lists, nr_pages))
		return true;
	return pagepool_nr_in_use(ds->pool) + nr_pages >= atomic_load(&ds->budget.high_pages);
}

int64_t data_alloc_page(struct data_space *ds, struct inode *held, bool may_exceed)
{
	bool is_rechecked = false, is_draining = atomic_load(&ds->is_draining);
	uint64_t used;

	if (!ds->backend)
		return pagepool_alloc(ds->pool);
	/* A tenant over its share pays with its own pages first. */
	if (held && held->lists) {
		/* A batch or two may only promote pages in use. */
		for (int i = 0; lru_lists_is_at_share(held->lists, 0) && i < 4; i++)
			reclaim_batch_from(ds, held, held->lists);
	}
	used = pagepool_nr_in_use(ds->pool);
	if (used >= ds->budget.high_pages)
		reclaim_kick(ds);
	/*
	 * A batch that frees nothing may only have promoted pages in use, so
	 * every other one looks again at once; the others may have found
	 * their victims' inodes busy (being read or written) and wait a
	 * moment, for up to about a fifth of a second in all, before calling
	 * the budget exhausted.  A drain evicts nothing: no wait frees room.
	 */
	for (int nr_idle = 0; used >= ds->budget.mem_pages && nr_idle < 400 && !is_draining;) {
		uint64_t refused = nr_refused(ds);

		atomic_fetch_add_explicit(&ds->swap.nr_direct_reclaims, 1, memory_order_relaxed);
		if (!reclaim_batch(ds, held)) {
			if (nr_refused(ds) != refused) {
				/* The backend or the limit said no: waiting frees nothing. */
				if (is_rechecked)
					break;
				/* Unless files went meanwhile: the budget may be stale. */
				if (budget_update(ds, true))
					reclaim_kick(ds);
				is_rechecked = true;
				continue;
			}
			if (nr_idle++ % 2)
				usleep(1000);
		}
		used = pagepool_nr_in_use(ds->pool);
	}
	if (used >= ds->budget.mem_pages) {
		if (may_exceed) {
			atomic_fetch_add_explicit(&ds->swap.nr_budget_exceeded, 1,
						  memory_order_relaxed);
		} else {
			/* Counted, not logged: as at the capacity, a write waits and tries again. */
			atomic_fetch_add_explicit(&ds->swap.nr_budget_enospc, 1,
						  memory_order_relaxed);
			return -ENOSPC;
		}
	}
	return pagepool_alloc(ds->pool);
}

/* The tenant's lists an inode's pages go on. */
static struct lru_lists *lists_of(struct data_space *ds, const struct inode *inode)
{
	return inode->lists ? inode->lists : &ds->lru.root;
}

void data_track_resident(struct data_space *ds, struct inode *inode, uint64_t index, uint32_t pfn,
			 uint64_t swap_slot)
{
	struct lru_lists *lists = lists_of(ds, inode);

	if (!ds->backend)
		return;
	lru_add(&ds->lru, lists, pfn, inode, index, swap_slot);
	atomic_fetch_add_explicit(&lists->nr_resident, 1, memory_order_relaxed);
}

void data_untrack_swapped(struct data_space *ds, const struct inode *inode, uint64_t nr)
{
	atomic_fetch_sub_explicit(&lists_of(ds, inode)->nr_swapped, nr, memory_order_relaxed);
}

/* A resident page is read or written: a use, and a hit if read ahead. */
static void used_resident(struct data_space *ds, uint32_t pfn)
{
	struct lru_page *p = lru_page(&ds->lru, pfn);

	if (atomic_load_explicit(&p->is_readahead, memory_order_relaxed) &&
	    atomic_exchange_explicit(&p->is_readahead, false, memory_order_relaxed))
		readahead_hit(&ds->ra);
	lru_touch(&ds->lru, pfn);
}

/* The page is about to change: its backend copy, if any, is stale. */
static void dirty_resident(struct data_space *ds, uint32_t pfn)
{
	struct lru_page *p;

	if (!ds->backend)
		return;
	p = lru_page(&ds->lru, pfn);
	if (p->swap_slot) {
		data_free_slot(ds, p->inode, p->swap_slot - 1);
		p->swap_slot = 0;
	}
	if (p->is_writeback) {
		p->is_redirtied = true;
		reclaim_wait_stable(&ds->reclaim, p);
	}
	used_resident(ds, pfn);
}

/* What release_entry needs to know. */
struct release_ctx {
	struct data_space *ds;
	struct inode *inode;
};

static void release_entry(void *ctx, uint64_t index, uint64_t entry)
{
	struct data_space *ds = ((struct release_ctx *)ctx)->ds;
	struct inode *inode = ((struct release_ctx *)ctx)->inode;
	uint32_t pfn;

	(void)index;
	switch (pagemap_kind(entry)) {
	case PAGEMAP_KIND_RESIDENT:
		pfn = pagemap_pfn(entry);
		if (ds->backend) {
			struct lru_page *p = lru_page(&ds->lru, pfn);

			atomic_fetch_sub_explicit(&p->lists->nr_resident, 1, memory_order_relaxed);
			if (p->swap_slot)
				data_free_slot(ds, inode, p->swap_slot - 1);
			p->swap_slot = 0;
			if (atomic_exchange(&p->is_readahead, false))
				atomic_fetch_add_explicit(&ds->ra.nr_misses, 1,
							  memory_order_relaxed);
			if (!lru_del_unless_writeback(&ds->lru, pfn))
				break; /* reclaim is storing it: it frees the page */
		}
		pagepool_free_page(ds->pool, pfn);
		break;
	case PAGEMAP_KIND_SWAPPED:
		data_free_slot(ds, inode, pagemap_slot(entry));
		data_untrack_swapped(ds, inode, 1);
		break;
	case PAGEMAP_KIND_FILLED:
		atomic_fetch_sub(&ds->nr_filled, 1);
		if (pagemap_is_unwritten(entry))
			atomic_fetch_sub(&ds->nr_unwritten, 1);
		break;
	default:
		break;
	}
	atomic_fetch_sub(&ds->nr_pages, 1);
}

/*
 * The memory of page index, made resident.  A new page is zeroed unless
 * the caller overwrites all of it (is_whole).  may_exceed lets it past a
 * full budget, as a read is.  Returns NULL with *err set.
 */
static char *page_for_write(struct data_space *ds, struct inode *inode, uint64_t index,
			    bool is_whole, bool may_exceed, int *err)
{
	uint64_t entry = pagemap_get(&inode->pages, index);
	int64_t pfn;
	char *page;
	int ret;

	if (pagemap_kind(entry) == PAGEMAP_KIND_RESIDENT) {
		dirty_resident(ds, pagemap_pfn(entry));
		return pagepool_addr(ds->pool, pagemap_pfn(entry));
	}
	if (entry == PAGEMAP_HOLE) {
		*err = charge(ds, 1, 0);
		if (*err)
			return NULL;
	}
	/* A fallocated page was promised: past a full budget, like a read. */
	pfn = data_alloc_page(ds, inode, may_exceed || pagemap_is_unwritten(entry));
	if (pfn < 0) {
		*err = (int)pfn;
		goto uncharge;
	}
	page = pagepool_addr(ds->pool, (uint32_t)pfn);
	if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED && !is_whole) {
		uint64_t slot = pagemap_slot(entry);
		void *dst = page;

		if (ds->backend->ops->load(ds->backend, &slot, &dst, 1)) {
			atomic_fetch_add_explicit(&ds->swap.nr_swapin_errors, 1,
						  memory_order_relaxed);
			log_limited(&load_log, LOG_ERR, "a swapped page failed to load: EIO");
			*err = -EIO;
			goto free_page;
		}
	}
	ret = pagemap_set(&inode->pages, index, pagemap_mk_resident((uint32_t)pfn), NULL);
	if (ret < 0) {
		*err = ret;
		goto free_page;
	}
	if (pagemap_kind(entry) == PAGEMAP_KIND_FILLED) {
		atomic_fetch_sub(&ds->nr_filled, 1);
		if (pagemap_is_unwritten(entry))
			atomic_fetch_sub(&ds->nr_unwritten, 1);
		fill_page(page, pagemap_fill(entry));
	} else if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED) {
		data_free_slot(ds, inode, pagemap_slot(entry)); /* about to be written: stale */
		data_untrack_swapped(ds, inode, 1);
	} else if (!is_whole) {
		memset(page, 0, PAGE_SIZE);
	}
	data_track_resident(ds, inode, index, (uint32_t)pfn, 0);
	return page;

free_page:
	pagepool_free_page(ds->pool, (uint32_t)pfn);
uncharge:
	if (entry == PAGEMAP_HOLE)
		atomic_fetch_sub(&ds->nr_pages, 1);
	return NULL;
}

ssize_t data_write(struct data_space *ds, struct inode *inode, const struct iovec *iov,
		   unsigned int nr_iov, uint64_t off)
{
	size_t len = 0, done = 0, iov_off = 0;
	int err = 0;

	for (unsigned int i = 0; i < nr_iov; i++) {
		if (len + iov[i].iov_len < len)
			return -EFBIG;
		len += iov[i].iov_len;
	}
	if (off + len < off || (len && ((off + len - 1) >> PAGE_SHIFT) > PAGEMAP_MAX_INDEX))
		return -EFBIG;
	while (done < len) {
		uint64_t pos = off + done;
		size_t in_page = pos & (PAGE_SIZE - 1);
		size_t n = PAGE_SIZE - in_page < len - done ? PAGE_SIZE - in_page : len - done;
		char *page =
			page_for_write(ds, inode, pos >> PAGE_SHIFT, n == PAGE_SIZE, false, &err);

		if (!page)
			break;
		/* One copy, from the caller's memory into the page. */
		for (size_t put = 0; put < n;) {
			size_t m;

			while (iov_off == iov->iov_len) {
				iov++;
				iov_off = 0;
			}
			m = iov->iov_len - iov_off < n - put ? iov->iov_len - iov_off : n - put;
			memcpy(page + in_page + put, (const char *)iov->iov_base + iov_off, m);
			iov_off += m;
			put += m;
		}
		done += n;
	}
	if (done && off + done > inode->size)
		inode->size = off + done;
	return done ? (ssize_t)done : err;
}

ssize_t data_write_mem(struct data_space *ds, struct inode *inode, const void *buf, size_t len,
		       uint64_t off)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return data_write(ds, inode, &iov, 1, off);
}

/*
 * Where the bytes of one page can be read from.  A page filled with a
 * non-zero word is expanded into the next page of *scratch, allocated on
 * first need (DATA_MAX_READ_PAGES pages); NULL when that fails.
 */
static const char *page_for_read(struct data_space *ds, uint64_t entry, char **scratch,
				 unsigned int *nr_scratch)
{
	char *page;

	switch (pagemap_kind(entry)) {
	case PAGEMAP_KIND_RESIDENT:
		if (ds->backend)
			used_resident(ds, pagemap_pfn(entry));
		return pagepool_addr(ds->pool, pagemap_pfn(entry));
	case PAGEMAP_KIND_FILLED:
		if (!pagemap_fill(entry))
			return zero_page;
		if (!*scratch)
			*scratch = malloc(DATA_MAX_READ_PAGES * PAGE_SIZE);
		if (!*scratch)
			return NULL;
		page = *scratch + (size_t)(*nr_scratch)++ * PAGE_SIZE;
		fill_page(page, pagemap_fill(entry));
		return page;
	default:
		return zero_page;
	}
}

bool data_has_swapped(const struct inode *inode, uint64_t off, size_t len)
{
	uint64_t index = off >> PAGE_SHIFT, entry;

	if (!len || off >= inode->size)
		return false;
	for (; pagemap_next(&inode->pages, &index, (off + len - 1) >> PAGE_SHIFT, &entry); index++)
		if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED)
			return true;
	return false;
}

int data_read(struct data_space *ds, const struct inode *inode, uint64_t off, size_t len,
	      struct iovec *iov, char **scratch)
{
	unsigned int nr_scratch = 0;
	int nr = 0;

	if (off >= inode->size)
		return 0;
	if (len > inode->size - off)
		len = inode->size - off;
	while (len) {
		size_t in_page = off & (PAGE_SIZE - 1);
		size_t n = PAGE_SIZE - in_page < len ? PAGE_SIZE - in_page : len;
		uint64_t entry = pagemap_get(&inode->pages, off >> PAGE_SHIFT);
		const char *page = page_for_read(ds, entry, scratch, &nr_scratch);

		if (!page)
			return -ENOMEM;
		iov[nr].iov_base = (char *)page + in_page;
		iov[nr].iov_len = n;
		nr++;
		off += n;
		len -= n;
	}
	return nr;
}

/* Swapped pages data_read_mem loads in one backend call. */
#define READ_MEM_BATCH 32

/* Swapped pages of a data_read_mem waiting for their load, into bounce pages. */
struct read_mem_batch {
	unsigned int nr;
	uint64_t slots[READ_MEM_BATCH];
	void *pages[READ_MEM_BATCH];
	char *dst[READ_MEM_BATCH]; /* where in the caller's buffer each goes */
	size_t in_page[READ_MEM_BATCH], len[READ_MEM_BATCH];
	char *bounce; /* page-aligned, allocated at the first swapped page */
};

/*
 * Bounce pages for the swapped pages of [pos, pos + len): no more than the
 * read spans, so that a small O_DIRECT read costs no large allocation.
 */
static size_t read_mem_bounce_pages(uint64_t pos, size_t len)
{
	uint64_t nr = ((pos & (PAGE_SIZE - 1)) + len + PAGE_SIZE - 1) >> PAGE_SHIFT;

	return nr < READ_MEM_BATCH ? (size_t)nr : READ_MEM_BATCH;
}

/* Load the batch and copy it out.  Returns 0, -ENOMEM or -EIO. */
static int read_mem_flush(struct data_space *ds, struct read_mem_batch *b)
{
	int err;

	if (!b->nr)
		return 0;
	err = ds->backend->ops->load(ds->backend, b->slots, b->pages, b->nr);
	if (err)
		return err == -ENOMEM ? err : -EIO;
	for (unsigned int i = 0; i < b->nr; i++)
		memcpy(b->dst[i], (char *)b->pages[i] + b->in_page[i], b->len[i]);
	b->nr = 0;
	return 0;
}

ssize_t data_read_mem(struct data_space *ds, const struct inode *inode, uint64_t off, void *buf,
		      size_t len)
{
	struct read_mem_batch b = { .nr = 0 };
	size_t done = 0;
	int err = 0;

	if (off >= inode->size)
		return 0;
	if (len > inode->size - off)
		len = inode->size - off;
	while (!err && done < len) {
		uint64_t pos = off + done;
		size_t in_page = pos & (PAGE_SIZE - 1);
		size_t n = PAGE_SIZE - in_page < len - done ? PAGE_SIZE - in_page : len - done;
		uint64_t entry = pagemap_get(&inode->pages, pos >> PAGE_SHIFT);

		if (pagemap_kind(entry) == PAGEMAP_KIND_FILLED) {
			fill_page_range((char *)buf + done, pagemap_fill(entry), in_page, n);
		} else if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED) {
			if (!b.bounce)
				b.bounce = aligned_alloc(PAGE_SIZE,
							 read_mem_bounce_pages(pos, len - done) *
								 PAGE_SIZE);
			if (!b.bounce) {
				err = -ENOMEM;
				break;
			}
			b.slots[b.nr] = pagemap_slot(entry);
			b.pages[b.nr] = b.bounce + b.nr * PAGE_SIZE;
			b.dst[b.nr] = (char *)buf + done;
			b.in_page[b.nr] = in_page;
			b.len[b.nr++] = n;
			if (b.nr == READ_MEM_BATCH)
				err = read_mem_flush(ds, &b);
		} else {
			memcpy((char *)buf + done, page_for_read(ds, entry, NULL, NULL) + in_page,
			       n);
		}
		done += n;
	}
	if (!err)
		err = read_mem_flush(ds, &b);
	free(b.bounce);
	return err ? err : (ssize_t)done;
}

/* Zero bytes [start, end) of page index, if it holds anything but zeros. */
/*
 * Zero bytes start to end of page index, for a truncate or a punch, which
 * must not fail for want of room: the page is present already and counted
 * (a filled one at its cost written), so it may pass a full budget as a
 * read does.  A swapped page that cannot be read goes whole: its bytes are
 * lost already, and kept they would come back past the cut if the backend
 * recovered.
 */
static int zero_in_page(struct data_space *ds, struct inode *inode, uint64_t index, size_t start,
			size_t end)
{
	uint64_t entry = pagemap_get(&inode->pages, index);
	char *page;
	int err = 0;

	if (entry == PAGEMAP_HOLE ||
	    (pagemap_kind(entry) == PAGEMAP_KIND_FILLED && !pagemap_fill(entry)))
		return 0;
	page = page_for_write(ds, inode, index, false, true, &err);
	if (!page && err == -EIO && pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED) {
		struct release_ctx rc = { ds, inode };

		log_limited(&load_log, LOG_ERR, "an unreadable swapped page is dropped by a cut");
		pagemap_erase_range(&inode->pages, index, index, release_entry, &rc);
		return 0;
	}
	if (!page)
		return err;
	memset(page + start, 0, end - start);
	return 0;
}

int data_truncate(struct data_space *ds, struct inode *inode, uint64_t size)
{
	/* Equal sizes too: pages fallocated past the end go, as on tmpfs. */
	if (size <= inode->size) {
		size_t tail = size & (PAGE_SIZE - 1);
		uint64_t first_gone = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
		int err;

		if (tail) {
			err = zero_in_page(ds, inode, size >> PAGE_SHIFT, tail, PAGE_SIZE);
			if (err)
				return err;
		}
		struct release_ctx rc = { ds, inode };

		pagemap_erase_range(&inode->pages, first_gone, UINT64_MAX, release_entry, &rc);
	}
	inode->size = size;
	return 0;
}

int data_punch(struct data_space *ds, struct inode *inode, uint64_t off, uint64_t len)
{
	uint64_t end = off + len < off ? UINT64_MAX : off + len;
	uint64_t first = (off + PAGE_SIZE - 1) >> PAGE_SHIFT, last = end >> PAGE_SHIFT;
	int err;

	if (!len)
		return 0;
	if ((off >> PAGE_SHIFT) == ((end - 1) >> PAGE_SHIFT) &&
	    (off & (PAGE_SIZE - 1) || end & (PAGE_SIZE - 1)))
		return zero_in_page(ds, inode, off >> PAGE_SHIFT, off & (PAGE_SIZE - 1),
				    ((end - 1) & (PAGE_SIZE - 1)) + 1);
	if (off & (PAGE_SIZE - 1)) {
		err = zero_in_page(ds, inode, off >> PAGE_SHIFT, off & (PAGE_SIZE - 1), PAGE_SIZE);
		if (err)
			return err;
	}
	if (end & (PAGE_SIZE - 1)) {
		err = zero_in_page(ds, inode, end >> PAGE_SHIFT, 0, end & (PAGE_SIZE - 1));
		if (err)
			return err;
	}
	if (first < last) {
		struct release_ctx rc = { ds, inode };

		pagemap_erase_range(&inode->pages, first, last - 1, release_entry, &rc);
	}
	return 0;
}

int data_allocate(struct data_space *ds, struct inode *inode, uint64_t off, uint64_t len)
{
	uint64_t first = off >> PAGE_SHIFT, last, index, entry, nr_present = 0, nr_holes;
	int err;

	if (!len)
		return 0;
	if (off + len < off || ((off + len - 1) >> PAGE_SHIFT) > PAGEMAP_MAX_INDEX)
		return -EFBIG;
	last = (off + len - 1) >> PAGE_SHIFT;
	for (index = first; pagemap_next(&inode->pages, &index, last, &entry); index++)
		nr_present++;
	nr_holes = last - first + 1 - nr_present;
	err = charge(ds, nr_holes, nr_holes);
	if (err) {
		if (!budget_fits(ds, nr_holes))
			log_full();
		return err;
	}
	for (index = first; index <= last; index++) {
		int ret;

		entry = pagemap_get(&inode->pages, index);
		if (pagemap_is_unwritten(entry)) {
			/* tmpfs initialises a page fallocated twice: it is data now. */
			pagemap_set(&inode->pages, index, pagemap_mk_filled(0), NULL);
			atomic_fetch_sub(&ds->nr_unwritten, 1);
			continue;
		}
		if (entry != PAGEMAP_HOLE)
			continue;
		ret = pagemap_set(&inode->pages, index, pagemap_mk_unwritten(), NULL);
		if (ret < 0) {
			/* Out of node memory: give back what was not placed. */
			atomic_fetch_sub(&ds->nr_pages, nr_holes);
			return ret;
		}
		atomic_fetch_add(&ds->nr_filled, 1);
		atomic_fetch_add(&ds->nr_unwritten, 1);
		nr_holes--;
	}
	return 0;
}

int64_t data_seek(const struct inode *inode, uint64_t off, int whence)
{
	uint64_t index = off >> PAGE_SHIFT, found, entry, pos;

	if (off >= inode->size)
		return -ENXIO;
	/* Unwritten (fallocated) pages are holes to SEEK_*, as on tmpfs. */
	for (;;) {
		found = index;
		if (!pagemap_next(&inode->pages, &found, UINT64_MAX, &entry)) {
			if (whence == SEEK_DATA)
				return -ENXIO;
			break;
		}
		if (whence == SEEK_DATA) {
			if (!pagemap_is_unwritten(entry)) {
				index = found;
				break;
			}
		} else if (found != index || pagemap_is_unwritten(entry)) {
			break; /* index is a hole */
		}
		index = found + 1;
	}
	pos = index << PAGE_SHIFT;
	if (pos < off)
		pos = off;
	if (whence == SEEK_DATA)
		return pos >= inode->size ? -ENXIO : (int64_t)pos;
	return (int64_t)(pos < inode->size ? pos : inode->size);
}

ssize_t data_copy(struct data_space *ds, struct inode *dst, uint64_t dst_off,
		  const struct inode *src, uint64_t src_off, uint64_t len)
{
	enum { CHUNK = 64 * 1024 };
	char *buf = malloc(CHUNK);
	uint64_t done = 0;
	ssize_t ret = 0;

	if (!buf)
		return -ENOMEM;
	while (done < len) {
		size_t want = len - done < CHUNK ? (size_t)(len - done) : CHUNK;
		ssize_t got = data_read_mem(ds, src, src_off + done, buf, want);

		if (got <= 0) {
			ret = got;
			break;
		}
		ret = data_write_mem(ds, dst, buf, (size_t)got, dst_off + done);
		if (ret < 0)
			break;
		done += (uint64_t)ret;
		if (ret < got)
			break;
	}
	free(buf);
	return done ? (ssize_t)done : ret;
}

void data_release(struct data_space *ds, struct inode *inode)
{
	struct release_ctx rc = { ds, inode };

	pagemap_erase_range(&inode->pages, 0, UINT64_MAX, release_entry, &rc);
	if (ds->backend)
		data_wait_loads(ds, inode);
}

/* The inode lock keeps reclaim, which may hold it, away from freed pages. */
void data_release_unreachable(void *ds, struct inode *inode)
{
	if (!S_ISREG(inode->mode))
		return;
	pthread_rwlock_wrlock(&inode->lock);
	data_release(ds, inode);
	pthread_rwlock_unlock(&inode->lock);
}
