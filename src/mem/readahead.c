// SPDX-License-Identifier: MIT
/*
 * Swap-in readahead policies and the adaptive window.
 */
#include <errno.h>
#include <string.h>

#include "tierfs/backend.h"
#include "tierfs/ns.h"
#include "tierfs/readahead.h"

static const char *const names[] = {
	[READAHEAD_AUTO] = "auto",
	[READAHEAD_DIRECT] = "direct",
	[READAHEAD_CLUSTER] = "cluster",
	[READAHEAD_VMA] = "vma",
};

void readahead_init(struct readahead *ra, enum readahead_policy policy)
{
	memset(ra, 0, sizeof(*ra));
	atomic_init(&ra->policy, (int)policy);
	atomic_init(&ra->window, 1);
}

int readahead_parse(const char *s, enum readahead_policy *out)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum readahead_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *readahead_name(enum readahead_policy policy)
{
	return names[policy];
}

enum readahead_policy readahead_effective(const struct readahead *ra,
					  const struct tier_backend *backend)
{
	enum readahead_policy p = (enum readahead_policy)atomic_load(&ra->policy);

	if (p != READAHEAD_AUTO)
		return p;
	/*
	 * A synchronous backend loads a page in microseconds: reading ahead
	 * only spends CPU and memory.  Through the page cache the kernel's
	 * own readahead has the next reads in flight on other threads, which
	 * ours would load a second time: a sequential read under pressure
	 * ran 25 % faster without it.  Otherwise (cache=never) neighbouring
	 * offsets beat neighbouring slots in bench/readahead.sh.
	 */
	if (!backend || backend->ops->is_sync || ra->is_page_cache)
		return READAHEAD_DIRECT;
	return READAHEAD_VMA;
}

enum readahead_policy readahead_effective_at(const struct readahead *ra,
					     struct tier_backend *backend, uint64_t slot)
{
	if (atomic_load(&ra->policy) == READAHEAD_AUTO && backend && backend->ops->is_slot_sync &&
	    backend->ops->is_slot_sync(backend, slot))
		return READAHEAD_DIRECT;
	return readahead_effective(ra, backend);
}

unsigned int readahead_window(struct readahead *ra, bool is_sequential)
{
	uint64_t hits = atomic_exchange(&ra->nr_hits_since, 0);
	unsigned int prev = atomic_load(&ra->window), pages, bucket = 0;

	/* Two more than the hits, rounded up to a power of two. */
	pages = hits + 2 > READAHEAD_MAX_WINDOW ? READAHEAD_MAX_WINDOW : (unsigned int)hits + 2;
	if (pages == 2) {
		/* No hits: a random fault reads nothing ahead. */
		if (!is_sequential)
			pages = 1;
	} else {
		unsigned int p = 1;

		while (p < pages)
			p <<= 1;
		pages = p;
	}
	if (pages > READAHEAD_MAX_WINDOW)
		pages = READAHEAD_MAX_WINDOW;
	/* Never shrink faster than halving. */
	if (pages < prev / 2)
		pages = prev / 2;
	atomic_store(&ra->window, pages);
	while ((1u << bucket) < pages && bucket + 1 < READAHEAD_NR_BUCKETS)
		bucket++;
	atomic_fetch_add_explicit(&ra->hist[bucket], 1, memory_order_relaxed);
	return pages;
}

/* The swapped pages in [from, to] outside [first, last], in index order. */
static unsigned int collect_range(const struct inode *inode, uint64_t from, uint64_t to,
				  uint64_t first, uint64_t last, unsigned int max, uint64_t *idx,
				  uint64_t *slots)
{
	uint64_t index = from, entry;
	unsigned int nr = 0;

	while (nr < max && index <= to && pagemap_next(&inode->pages, &index, to, &entry)) {
		if (pagemap_kind(entry) == PAGEMAP_KIND_SWAPPED &&
		    (index < first || index > last)) {
			idx[nr] = index;
			slots[nr++] = pagemap_slot(entry);
		}
		if (index == UINT64_MAX)
			break;
		index++;
	}
	return nr;
}

unsigned int readahead_collect(enum readahead_policy policy, const struct inode *inode,
			       uint64_t first, uint64_t last, uint64_t fault_slot, bool is_backward,
			       unsigned int window, uint64_t *idx, uint64_t *slots)
{
	unsigned int extra = window - 1, nr = 0;
	uint64_t from, to;

	if (window <= 1)
		return 0;
	if (extra > READAHEAD_MAX_WINDOW)
		extra = READAHEAD_MAX_WINDOW;
	if (policy == READAHEAD_VMA) {
		uint64_t region = first & ~(uint64_t)(READAHEAD_VMA_REGION - 1);
		uint64_t region_end = region + READAHEAD_VMA_REGION - 1;

		/* In the direction the reads go, within the 2 MiB region. */
		if (is_backward) {
			from = first - region > extra ? first - extra : region;
			to = first - 1;
		} else {
			from = last + 1;
			to = region_end - last > extra ? last + extra : region_end;
		}
		if (from <= to && (is_backward ? first > region : last < region_end))
			nr = collect_range(inode, from, to, first, last, extra, idx, slots);
	} else if (policy == READAHEAD_CLUSTER) {
		uint64_t start = fault_slot & ~(uint64_t)(window - 1), end = start + window;
		/* Neighbouring slots hold neighbouring pages of one eviction batch. */
		uint64_t reach = 4 * (uint64_t)window;
		uint64_t cand_idx[4 * READAHEAD_MAX_WINDOW * 2 + 2],
			cand_slots[4 * READAHEAD_MAX_WINDOW * 2 + 2];
		unsigned int nr_cand;

		from = first > reach ? first - reach : 0;
		to = last + reach < last ? UINT64_MAX : last + reach;
		nr_cand = collect_range(inode, from, to, first, last,
					sizeof(cand_idx) / sizeof(cand_idx[0]), cand_idx,
					cand_slots);
		for (unsigned int i = 0; i < nr_cand && nr < extra; i++) {
			if (cand_slots[i] >= start && cand_slots[i] < end) {
				idx[nr] = cand_idx[i];
				slots[nr++] = cand_slots[i];
			}
		}
	}
	return nr;
}
