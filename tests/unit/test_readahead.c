// SPDX-License-Identifier: MIT
/*
 * Unit tests of swap-in readahead and the drain's swapin_drain: the policy
 * names, the adaptive window, which pages each policy picks from a page map,
 * what swapin_range reads ahead and how hits and misses are counted, and
 * swapin_drain bringing a file back in batches, in the backend's order and
 * through failing loads too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "faulty_backend.h"
#include "space.h"

#define MEM_PAGES 512 /* far above what a case writes: no reclaim on its own */
#define SWAP_PAGES 512
#define NR_FILE 64 /* pages of the file in the swap-in cases */

/*
 * A data space over a ramdisk wrapped for faults, synchronous or not as the
 * case needs (not: as a file backend would be, so that auto means vma),
 * with a resident budget of mem_pages.
 */
static bool wrap_space_new(struct data_space *ds, struct faulty_backend **w, bool is_sync,
			   uint64_t mem_pages)
{
	struct tier_backend *inner = space_ramdisk(SWAP_PAGES);

	if (!inner)
		return false;
	if (!CHECK_EQ(0, faulty_new(inner, is_sync, w))) {
		inner->ops->destroy(inner);
		return false;
	}
	return space_new(ds, faulty_base(*w), mem_pages);
}

/* Whether page index reads as pattern seed through data_read_mem (a use if resident). */
static bool check_pattern(struct data_space *ds, struct inode *inode, uint64_t index,
			  unsigned int seed)
{
	static unsigned char expected[P], got[P];

	pattern(expected, seed, index);
	memset(got, 0xee, P);
	pthread_rwlock_rdlock(&inode->lock);
	CHECK_EQ((ssize_t)P, data_read_mem(ds, inode, index * P, got, P));
	pthread_rwlock_unlock(&inode->lock);
	return CHECK_MEM(expected, got, P);
}

/* Whether resident page index reads as pattern seed through data_read, as FUSE reads. */
static bool check_pattern_iov(struct data_space *ds, struct inode *inode, uint64_t index,
			      unsigned int seed)
{
	static unsigned char expected[P];
	static struct iovec iov[DATA_MAX_READ_PAGES];
	char *scratch = NULL;
	bool ok = false;
	int nr;

	pattern(expected, seed, index);
	pthread_rwlock_rdlock(&inode->lock);
	if (CHECK(!data_has_swapped(inode, index * P, P))) {
		nr = data_read(ds, inode, index * P, P, iov, &scratch);
		ok = CHECK_EQ(1, nr) && CHECK_EQ(P, iov[0].iov_len) &&
		     CHECK_MEM(expected, iov[0].iov_base, P);
	}
	pthread_rwlock_unlock(&inode->lock);
	free(scratch);
	return ok;
}

/* Evict every resident page of the file (nr of them) to the backend. */
static bool evict_all(struct data_space *ds, struct inode *inode, uint64_t nr)
{
	bool ok = CHECK_EQ(nr, reclaim_pages(ds, nr));

	for (uint64_t i = 0; i < nr; i++)
		ok &= CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(inode, i));
	return ok && CHECK_EQ(0, pool_in_use(ds));
}

static int swap_in(struct data_space *ds, struct inode *inode, uint64_t index, uint64_t nr)
{
	int err;

	pthread_rwlock_wrlock(&inode->lock);
	err = swapin_range(ds, inode, index * P, nr * P);
	pthread_rwlock_unlock(&inode->lock);
	return err;
}

static uint64_t nr_swapped(const struct inode *inode, uint64_t nr)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < nr; i++)
		n += kind(inode, i) == PAGEMAP_KIND_SWAPPED;
	return n;
}

/* Case 1: policy names and the policy in force. */
static void test_policy(void)
{
	static const struct tier_backend_ops async_ops = { .name = "async", .is_sync = false };
	static const char *const bad[] = { "", "VMA", "vma ", " vma", "dir", "autox", "none" };
	const struct tier_backend_ops *ramdisk = backend_find("ramdisk");
	struct tier_backend async = { .ops = &async_ops }, sync = { .ops = ramdisk };
	struct readahead ra;

	check_set_context("policy");
	for (int p = READAHEAD_AUTO; p <= READAHEAD_VMA; p++) {
		enum readahead_policy got = READAHEAD_AUTO;

		CHECK_EQ(0, readahead_parse(readahead_name((enum readahead_policy)p), &got));
		CHECK_EQ(p, (int)got);
	}
	CHECK_STR("auto", readahead_name(READAHEAD_AUTO));
	CHECK_STR("direct", readahead_name(READAHEAD_DIRECT));
	CHECK_STR("cluster", readahead_name(READAHEAD_CLUSTER));
	CHECK_STR("vma", readahead_name(READAHEAD_VMA));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum readahead_policy got = READAHEAD_CLUSTER;

		CHECK_EQ(-EINVAL, readahead_parse(bad[i], &got));
		CHECK_EQ(READAHEAD_CLUSTER, got); /* untouched */
	}

	if (!CHECK(ramdisk != NULL) || !CHECK(ramdisk->is_sync))
		return;
	readahead_init(&ra, READAHEAD_AUTO);
	CHECK_EQ(READAHEAD_DIRECT, readahead_effective(&ra, &sync));
	CHECK_EQ(READAHEAD_DIRECT, readahead_effective(&ra, NULL));
	CHECK_EQ(READAHEAD_VMA, readahead_effective(&ra, &async));
	/* Through the page cache the kernel reads ahead: auto adds nothing. */
	ra.is_page_cache = true;
	CHECK_EQ(READAHEAD_DIRECT, readahead_effective(&ra, &async));
	for (int p = READAHEAD_DIRECT; p <= READAHEAD_VMA; p++) {
		readahead_init(&ra, (enum readahead_policy)p);
		for (int cached = 0; cached < 2; cached++) {
			ra.is_page_cache = cached;
			CHECK_EQ(p, (int)readahead_effective(&ra, &sync));
			CHECK_EQ(p, (int)readahead_effective(&ra, NULL));
			CHECK_EQ(p, (int)readahead_effective(&ra, &async));
		}
	}
	check_clear_context();
}

/* The histogram bucket of a window size. */
static unsigned int bucket_of(unsigned int pages)
{
	unsigned int b = 0;

	while ((1u << b) < pages)
		b++;
	return b;
}

/* Add hits since the last window, then choose one; checks what it chose. */
static void window_after(struct readahead *ra, uint64_t nr_hits, bool is_sequential,
			 unsigned int expected)
{
	uint64_t hist[READAHEAD_NR_BUCKETS], hits_before = atomic_load(&ra->nr_hits);
	unsigned int got;

	for (int b = 0; b < READAHEAD_NR_BUCKETS; b++)
		hist[b] = atomic_load(&ra->hist[b]);
	for (uint64_t i = 0; i < nr_hits; i++)
		readahead_hit(ra);
	CHECK_EQ(nr_hits, atomic_load(&ra->nr_hits_since));
	CHECK_EQ(hits_before + nr_hits, atomic_load(&ra->nr_hits));
	got = readahead_window(ra, is_sequential);
	CHECK_EQ(expected, got);
	CHECK_EQ(expected, atomic_load(&ra->window));
	CHECK_EQ(0, atomic_load(&ra->nr_hits_since));
	if (!CHECK(bucket_of(got) < READAHEAD_NR_BUCKETS))
		return;
	hist[bucket_of(got)]++;
	for (int b = 0; b < READAHEAD_NR_BUCKETS; b++)
		CHECK_EQ(hist[b], atomic_load(&ra->hist[b]));
}

/* Case 2: the window, like the kernel's swapin_nr_pages. */
static void test_window(void)
{
	/* hits -> window from a window of 1. */
	static const struct {
		uint64_t nr_hits;
		unsigned int window;
	} grow[] = {
		{ 1, 4 },   { 2, 4 },	{ 3, 8 },   { 6, 8 },	{ 7, 16 },
		{ 14, 16 }, { 15, 32 }, { 30, 32 }, { 31, 32 }, { 1000, 32 },
	};
	struct readahead ra;

	check_set_context("window");
	readahead_init(&ra, READAHEAD_VMA);
	CHECK_EQ(1, atomic_load(&ra.window));
	CHECK_EQ(0, atomic_load(&ra.nr_hits) + atomic_load(&ra.nr_misses) +
			    atomic_load(&ra.nr_pages) + atomic_load(&ra.nr_hits_since));
	window_after(&ra, 0, false, 1);
	window_after(&ra, 0, true, 2);
	window_after(&ra, 0, false, 1);
	window_after(&ra, 0, true, 2);
	window_after(&ra, 0, true, 2);
	/* From 2, halving gives 1: a random fault reads nothing ahead. */
	window_after(&ra, 0, false, 1);

	for (size_t i = 0; i < sizeof(grow) / sizeof(grow[0]); i++) {
		check_set_context("window: %" PRIu64 " hits", grow[i].nr_hits);
		readahead_init(&ra, READAHEAD_VMA);
		window_after(&ra, grow[i].nr_hits, false, grow[i].window);
		readahead_init(&ra, READAHEAD_VMA);
		window_after(&ra, grow[i].nr_hits, true, grow[i].window);
	}

	/* Down from the cap, never faster than halving, sequential or not. */
	check_set_context("window shrinking");
	readahead_init(&ra, READAHEAD_VMA);
	window_after(&ra, 40, false, 32);
	window_after(&ra, 0, false, 16);
	window_after(&ra, 0, true, 8);
	window_after(&ra, 1, false, 4); /* 1 hit alone asks for 4 */
	window_after(&ra, 0, false, 2);
	window_after(&ra, 0, false, 1);
	window_after(&ra, 0, false, 1);
	/* Hits grow it again at once, past any halving. */
	window_after(&ra, 20, false, 32);
	window_after(&ra, 3, false, 16); /* 3 hits ask for 8: halving keeps 16 */
	window_after(&ra, 7, true, 16);
	window_after(&ra, 0, true, 8);
	/* Every call was counted once in its bucket. */
	{
		uint64_t total = 0;

		for (int b = 0; b < READAHEAD_NR_BUCKETS; b++)
			total += atomic_load(&ra.hist[b]);
		CHECK_EQ(11, total);
		CHECK_EQ(2, atomic_load(&ra.hist[5]));
		CHECK_EQ(3, atomic_load(&ra.hist[4]));
		CHECK_EQ(2, atomic_load(&ra.hist[3]));
		CHECK_EQ(1, atomic_load(&ra.hist[2]));
		CHECK_EQ(1, atomic_load(&ra.hist[1]));
		CHECK_EQ(2, atomic_load(&ra.hist[0]));
	}
	CHECK_EQ(40 + 1 + 20 + 3 + 7, atomic_load(&ra.nr_hits));
	check_clear_context();
}

/* readahead_collect's answer against the expected indexes, in order. */
static void check_collect(enum readahead_policy policy, const struct inode *inode, uint64_t first,
			  uint64_t last, uint64_t fault_slot, bool is_backward, unsigned int window,
			  const uint64_t *expected, unsigned int nr_expected)
{
	uint64_t idx[READAHEAD_MAX_WINDOW], slots[READAHEAD_MAX_WINDOW];
	unsigned int nr;

	check_set_context("collect %s%s [%" PRIu64 ", %" PRIu64 "] slot %" PRIu64 " window %u",
			  readahead_name(policy), is_backward ? " backward" : "", first, last,
			  fault_slot, window);
	memset(idx, 0xff, sizeof(idx));
	nr = readahead_collect(policy, inode, first, last, fault_slot, is_backward, window, idx,
			       slots);
	if (!CHECK_EQ(nr_expected, nr) && nr > nr_expected)
		nr = nr_expected;
	for (unsigned int i = 0; i < nr; i++) {
		uint64_t entry = pagemap_get(&inode->pages, idx[i]);

		CHECK_EQ(expected[i], idx[i]);
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, pagemap_kind(entry));
		CHECK_EQ(pagemap_slot(entry), slots[i]);
	}
	check_clear_context();
}

#define IDX(...)                           \
	(const uint64_t[]){ __VA_ARGS__ }, \
		sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)
#define NONE NULL, 0

static void map_set(struct inode *inode, uint64_t index, uint64_t entry)
{
	CHECK_EQ(0, pagemap_set(&inode->pages, index, entry, NULL));
}

static void map_clear(struct inode *inode)
{
	pagemap_erase_range(&inode->pages, 0, UINT64_MAX, NULL, NULL);
	CHECK_EQ(0, inode->pages.nr_entries);
	CHECK_EQ(0, inode->pages.nr_nodes);
}

/* Case 3a: vma takes neighbouring offsets, within the 2 MiB region. */
static void test_collect_vma(void)
{
	uint64_t range[READAHEAD_MAX_WINDOW];
	struct inode f;

	memset(&f, 0, sizeof(f));
	/* Pages 0..99 swapped, but for 5 (resident), 7 (hole) and 8 (filled). */
	for (uint64_t i = 0; i < 100; i++)
		if (i != 7)
			map_set(&f, i, pagemap_mk_swapped(1000 + i));
	map_set(&f, 5, pagemap_mk_resident(3));
	map_set(&f, 8, pagemap_mk_filled(0xabcd));
	/* And 480..530, across the first region's end. */
	for (uint64_t i = 480; i <= 530; i++)
		map_set(&f, i, pagemap_mk_swapped(5000 + i));

	/* Forward: after last, up to window - 1 offsets, swapped pages only. */
	check_collect(READAHEAD_VMA, &f, 2, 2, 1002, false, 8, IDX(3, 4, 6, 9));
	check_collect(READAHEAD_VMA, &f, 10, 10, 1010, false, 2, IDX(11));
	check_collect(READAHEAD_VMA, &f, 10, 10, 1010, false, 4, IDX(11, 12, 13));
	check_collect(READAHEAD_VMA, &f, 0, 3, 1000, false, 4, IDX(4, 6));
	check_collect(READAHEAD_VMA, &f, 500, 500, 5500, false, 4, IDX(501, 502, 503));
	check_collect(READAHEAD_VMA, &f, 90, 90, 1090, false, 32,
		      IDX(91, 92, 93, 94, 95, 96, 97, 98, 99));
	for (unsigned int i = 0; i < 31; i++)
		range[i] = 33 + i;
	check_collect(READAHEAD_VMA, &f, 20, 32, 1020, false, 32, range, 31);
	/* The region ends at 511: nothing beyond, though 512.. are swapped. */
	check_collect(READAHEAD_VMA, &f, 505, 505, 5505, false, 32,
		      IDX(506, 507, 508, 509, 510, 511));
	check_collect(READAHEAD_VMA, &f, 500, 509, 5500, false, 8, IDX(510, 511));
	check_collect(READAHEAD_VMA, &f, 511, 511, 5511, false, 32, NONE);
	check_collect(READAHEAD_VMA, &f, 512, 512, 5512, false, 4, IDX(513, 514, 515));

	/* Backward: before first, within the region. */
	check_collect(READAHEAD_VMA, &f, 20, 20, 1020, true, 8, IDX(13, 14, 15, 16, 17, 18, 19));
	check_collect(READAHEAD_VMA, &f, 10, 12, 1010, true, 8, IDX(3, 4, 6, 9));
	check_collect(READAHEAD_VMA, &f, 3, 3, 1003, true, 8, IDX(0, 1, 2));
	check_collect(READAHEAD_VMA, &f, 0, 0, 1000, true, 8, NONE);
	check_collect(READAHEAD_VMA, &f, 512, 512, 5512, true, 8, NONE);
	check_collect(READAHEAD_VMA, &f, 515, 515, 5515, true, 32, IDX(512, 513, 514));
	check_collect(READAHEAD_VMA, &f, 505, 505, 5505, true, 4, IDX(502, 503, 504));

	/* No readahead: window 1 (or 0), direct, or auto unresolved. */
	check_collect(READAHEAD_VMA, &f, 2, 2, 1002, false, 1, NONE);
	check_collect(READAHEAD_VMA, &f, 2, 2, 1002, true, 1, NONE);
	check_collect(READAHEAD_VMA, &f, 2, 2, 1002, false, 0, NONE);
	check_collect(READAHEAD_DIRECT, &f, 2, 2, 1002, false, 8, NONE);
	check_collect(READAHEAD_DIRECT, &f, 20, 20, 1020, true, 32, NONE);
	check_collect(READAHEAD_AUTO, &f, 2, 2, 1002, false, 8, NONE);
	check_collect(READAHEAD_CLUSTER, &f, 2, 2, 1002, false, 1, NONE);
	map_clear(&f);
}

/* Case 3b: cluster takes the pages whose slots lie in the aligned slot window. */
static void test_collect_cluster(void)
{
	struct inode f;

	memset(&f, 0, sizeof(f));
	/* Slots in reverse: page i at 200 - i... */
	for (uint64_t i = 0; i < 64; i++)
		map_set(&f, i, pagemap_mk_swapped(200 - i));
	map_set(&f, 40, pagemap_mk_resident(1));
	/*
	 * ...but for 15 (a slot far away), and 41, 43 and 1000, slots in
	 * [184, 192): 41 within 32 pages (4 windows of 8) of page 10, 43 only
	 * of pages 11 and up, 1000 of none.
	 */
	map_set(&f, 15, pagemap_mk_swapped(500));
	map_set(&f, 41, pagemap_mk_swapped(187));
	map_set(&f, 43, pagemap_mk_swapped(188));
	map_set(&f, 1000, pagemap_mk_swapped(185));

	/* Fault at 10, slot 190: window 8 is slots [184, 192), pages 9..16 but 15. */
	check_collect(READAHEAD_CLUSTER, &f, 10, 10, 190, false, 8, IDX(9, 11, 12, 13, 14, 16, 41));
	/* The direction does not matter to cluster. */
	check_collect(READAHEAD_CLUSTER, &f, 10, 10, 190, true, 8, IDX(9, 11, 12, 13, 14, 16, 41));
	/* The faulting range is left out; the reach is counted from its ends. */
	check_collect(READAHEAD_CLUSTER, &f, 10, 12, 190, false, 8, IDX(9, 13, 14, 16, 41, 43));
	/* Window 4: slots [188, 192); window 2: [190, 192). */
	check_collect(READAHEAD_CLUSTER, &f, 10, 10, 190, false, 4, IDX(9, 11, 12));
	check_collect(READAHEAD_CLUSTER, &f, 10, 10, 190, false, 2, IDX(9));
	/* Slot 199 (page 1): window 8 is [192, 200), pages 2..8. */
	check_collect(READAHEAD_CLUSTER, &f, 1, 1, 199, false, 8, IDX(2, 3, 4, 5, 6, 7, 8));
	/* A slot window no other page is in. */
	check_collect(READAHEAD_CLUSTER, &f, 15, 15, 500, false, 8, NONE);

	/* Eight candidates for seven places: the first seven by index. */
	map_set(&f, 0, pagemap_mk_swapped(191));
	check_collect(READAHEAD_CLUSTER, &f, 10, 10, 190, false, 8, IDX(0, 9, 11, 12, 13, 14, 16));
	map_clear(&f);
}

/*
 * Fault at index after index through swapin_range, each time at the page
 * next in the direction of the walk still swapped, and use every page read
 * ahead (one through a write, the rest through data_read or data_read_mem);
 * checks the window each fault chose and what it read ahead.
 */
static void walk(struct data_space *ds, struct inode *f, unsigned int seed, bool is_backward,
		 const unsigned int *windows, unsigned int nr_steps)
{
	uint64_t slots[NR_FILE], nr_hits = 0, nr_read_ahead = 0, nr_stored = NR_FILE;
	uint64_t index = is_backward ? NR_FILE - 1 : 0;
	unsigned int step;
	bool has_written = false;

	for (uint64_t i = 0; i < NR_FILE; i++)
		slots[i] = pagemap_slot(pagemap_get(&f->pages, i));
	for (step = 0; step < nr_steps; step++) {
		uint64_t before = atomic_load(&ds->ra.nr_pages), nr_ahead, expected, lo;
		struct lru_page *p;

		check_set_context("%s walk, step %u, fault at %" PRIu64,
				  is_backward ? "backward" : "forward", step, index);
		if (!CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(f, index)))
			break;
		CHECK_EQ(0, swap_in(ds, f, index, 1));
		CHECK_EQ(windows[step], atomic_load(&ds->ra.window));
		nr_ahead = atomic_load(&ds->ra.nr_pages) - before;
		/* window - 1 of them, but not past the file's ends. */
		expected = windows[step] - 1;
		if (expected > (is_backward ? index : NR_FILE - 1 - index))
			expected = is_backward ? index : NR_FILE - 1 - index;
		CHECK_EQ(expected, nr_ahead);
		nr_read_ahead += nr_ahead;
		CHECK_EQ(nr_read_ahead + step + 1, atomic_load(&ds->swap.nr_swapins));

		/* The faulting page: clean, loaded for its read, not read ahead. */
		p = lru_page_of(ds, f, index);
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(f, index));
		CHECK_EQ(LRU_LOADED, atomic_load(&p->uses));
		CHECK(!atomic_load(&p->is_readahead));
		CHECK_EQ(slots[index] + 1, p->swap_slot);

		/* The pages read ahead: clean, unused, inactive, flagged. */
		lo = is_backward ? index - nr_ahead : index + 1;
		for (uint64_t i = lo; i < lo + nr_ahead; i++) {
			check_set_context("%s walk, step %u, page %" PRIu64 " read ahead",
					  is_backward ? "backward" : "forward", step, i);
			if (!CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(f, i)))
				continue;
			p = lru_page_of(ds, f, i);
			CHECK(atomic_load(&p->is_readahead));
			CHECK_EQ(LRU_UNUSED, atomic_load(&p->uses));
			CHECK_EQ(LRU_INACTIVE + 1, p->list);
			CHECK(p->inode == f);
			CHECK_EQ(i, p->index);
			CHECK_EQ(slots[i] + 1, p->swap_slot);
		}
		CHECK_EQ(nr_hits, atomic_load(&ds->ra.nr_hits));
		CHECK_EQ(nr_stored, backend_stored(ds));

		/* Use them: each use is one hit, a second use none. */
		for (uint64_t i = lo; i < lo + nr_ahead; i++) {
			check_set_context("%s walk, step %u, using page %" PRIu64,
					  is_backward ? "backward" : "forward", step, i);
			p = lru_page_of(ds, f, i);
			if (!has_written && step == 2) {
				static unsigned char page[P];

				/* Rewritten with the same bytes: its copy goes all the same. */
				pattern(page, seed, i);
				pthread_rwlock_wrlock(&f->lock);
				CHECK_EQ(16, data_write_mem(ds, f, page + 100, 16, i * P + 100));
				pthread_rwlock_unlock(&f->lock);
				CHECK_EQ(0, p->swap_slot);
				nr_stored--;
				has_written = true;
			} else if (i % 2) {
				check_pattern_iov(ds, f, i, seed);
			} else {
				check_pattern(ds, f, i, seed);
			}
			CHECK(!atomic_load(&p->is_readahead));
			CHECK_EQ(LRU_USED_ONCE, atomic_load(&p->uses));
			CHECK_EQ(++nr_hits, atomic_load(&ds->ra.nr_hits));
			check_pattern(ds, f, i, seed);
			CHECK_EQ(nr_hits, atomic_load(&ds->ra.nr_hits));
		}
		CHECK_EQ(nr_stored, backend_stored(ds));
		if (is_backward ? index < 1 + nr_ahead : index + 1 + nr_ahead >= NR_FILE) {
			step++;
			break;
		}
		index = is_backward ? index - 1 - nr_ahead : index + 1 + nr_ahead;
	}
	check_set_context("%s walk, at the end", is_backward ? "backward" : "forward");
	CHECK_EQ(nr_steps, step);
	CHECK(has_written);
	CHECK_EQ(0, nr_swapped(f, NR_FILE));
	CHECK_EQ(NR_FILE, nr_read_ahead + nr_steps);
	CHECK_EQ(nr_read_ahead, atomic_load(&ds->ra.nr_pages));
	CHECK_EQ(nr_read_ahead, atomic_load(&ds->ra.nr_hits));
	CHECK_EQ(0, atomic_load(&ds->ra.nr_misses));
	CHECK_EQ(NR_FILE, atomic_load(&ds->swap.nr_swapins));
	CHECK_EQ(0, atomic_load(&ds->swap.nr_swapin_errors));
	CHECK_EQ(NR_FILE, pool_in_use(ds));
	/* Clean pages keep their copies; the written one lost it. */
	CHECK_EQ(NR_FILE - 1, backend_stored(ds));
	for (uint64_t i = 0; i < NR_FILE; i++)
		check_pattern(ds, f, i, seed);
}

/* Case 4a: vma going forward: the window doubles with every round of hits. */
static void test_swap_in_vma_forward(void)
{
	/* Faults at 0, 2, 6, 14, 30, 62: a fresh file's first fault counts as sequential. */
	static const unsigned int windows[] = { 2, 4, 8, 16, 32, 32 };
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;

	check_set_context("vma forward");
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	atomic_store(&ds.ra.policy, READAHEAD_VMA);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 1);
	if (evict_all(&ds, &f, NR_FILE))
		walk(&ds, &f, 1, false, windows, sizeof(windows) / sizeof(windows[0]));
	CHECK_EQ(1, atomic_load(&ds.ra.hist[1]));
	CHECK_EQ(1, atomic_load(&ds.ra.hist[2]));
	CHECK_EQ(1, atomic_load(&ds.ra.hist[3]));
	CHECK_EQ(1, atomic_load(&ds.ra.hist[4]));
	CHECK_EQ(2, atomic_load(&ds.ra.hist[5]));

	/*
	 * All evicted, a fault far from the last: one hit since asks for 4,
	 * but the window only halves, to 16.
	 */
	CHECK_EQ(NR_FILE, reclaim_pages(&ds, NR_FILE));
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	check_set_context("vma forward, random fault after");
	CHECK_EQ(0, swap_in(&ds, &f, 10, 1));
	CHECK_EQ(16, atomic_load(&ds.ra.window));
	CHECK_EQ(58 + 15, atomic_load(&ds.ra.nr_pages));
	CHECK_EQ(NR_FILE - 16, nr_swapped(&f, NR_FILE));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 9));
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 25));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 26));
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Case 4b: vma going backward from the end of the file. */
static void test_swap_in_vma_backward(void)
{
	/* Faults at 63 (not sequential), 62, 60, 56, 48, 32, 0. */
	static const unsigned int windows[] = { 1, 2, 4, 8, 16, 32, 32 };
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;

	check_set_context("vma backward");
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	atomic_store(&ds.ra.policy, READAHEAD_VMA);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 2);
	if (evict_all(&ds, &f, NR_FILE))
		walk(&ds, &f, 2, true, windows, sizeof(windows) / sizeof(windows[0]));
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 4c: direct, and auto over a synchronous backend, load the faulting
 * pages only; auto over an asynchronous one reads ahead like vma.
 */
static void test_swap_in_no_readahead(enum readahead_policy policy, bool is_sync)
{
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;
	bool is_vma = policy == READAHEAD_AUTO && !is_sync;

	check_set_context("swap-in, %s over a %s backend", readahead_name(policy),
			  is_sync ? "sync" : "async");
	if (!wrap_space_new(&ds, &w, is_sync, MEM_PAGES))
		return;
	atomic_store(&ds.ra.policy, (int)policy);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 3);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	CHECK_EQ(is_vma ? READAHEAD_VMA : READAHEAD_DIRECT,
		 readahead_effective(&ds.ra, ds.backend));
	/* Pages 0..7 read in turn, each faulted in unless read ahead. */
	for (uint64_t i = 0; i < 8; i++) {
		if (kind(&f, i) == PAGEMAP_KIND_SWAPPED)
			CHECK_EQ(0, swap_in(&ds, &f, i, 1));
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
		check_pattern(&ds, &f, i, 3);
	}
	/* A range is loaded whole. */
	CHECK_EQ(0, swap_in(&ds, &f, 20, 4));
	for (uint64_t i = 20; i < 24; i++)
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
	if (is_vma) {
		/*
		 * Faults at 0, 2, 6: windows 2, 4, 8; 7 used of 7..13; then
		 * 20..23 (sequential: within 32 of 7): 1 hit asks for 4, and
		 * halving from 8 allows it: 24..26.
		 */
		CHECK_EQ(1 + 3 + 7 + 3, atomic_load(&ds.ra.nr_pages));
		CHECK_EQ(1 + 3 + 1, atomic_load(&ds.ra.nr_hits));
		CHECK_EQ(4, atomic_load(&ds.ra.window));
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 26));
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 27));
	} else {
		CHECK_EQ(0, atomic_load(&ds.ra.nr_pages));
		CHECK_EQ(1, atomic_load(&ds.ra.window));
		for (int b = 0; b < READAHEAD_NR_BUCKETS; b++)
			CHECK_EQ(0, atomic_load(&ds.ra.hist[b]));
		CHECK_EQ(8 + 4, pool_in_use(&ds));
		CHECK_EQ(NR_FILE - 12, nr_swapped(&f, NR_FILE));
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 8));
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 24));
		for (uint64_t i = 0; i < NR_FILE; i++)
			if (kind(&f, i) == PAGEMAP_KIND_RESIDENT)
				CHECK(!atomic_load(&lru_page_of(&ds, &f, i)->is_readahead));
	}
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	CHECK_EQ(0, atomic_load(&ds.ra.nr_misses));
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 4d: pages read ahead and evicted unused count as misses, and so do
 * those freed unused; used ones do not.
 */
static void test_swap_in_misses(void)
{
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;

	check_set_context("misses");
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	atomic_store(&ds.ra.policy, READAHEAD_VMA);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 4);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;

	CHECK_EQ(0, swap_in(&ds, &f, 0, 1)); /* reads 1 ahead */
	check_pattern(&ds, &f, 1, 4);
	CHECK_EQ(0, swap_in(&ds, &f, 2, 1)); /* reads 3, 4, 5 ahead */
	CHECK_EQ(4, atomic_load(&ds.ra.nr_pages));
	CHECK_EQ(1, atomic_load(&ds.ra.nr_hits));
	CHECK_EQ(6, pool_in_use(&ds));
	for (uint64_t i = 3; i <= 5; i++)
		CHECK(atomic_load(&lru_page_of(&ds, &f, i)->is_readahead));

	/* All six go, clean: dropped without a store, three of them misses. */
	CHECK_EQ(6, reclaim_pages(&ds, NR_FILE));
	CHECK_EQ(3, atomic_load(&ds.ra.nr_misses));
	CHECK_EQ(1, atomic_load(&ds.ra.nr_hits));
	CHECK_EQ(6, atomic_load(&ds.swap.nr_clean_dropped));
	CHECK_EQ(NR_FILE, atomic_load(&ds.swap.nr_evicted));
	CHECK_EQ(0, pool_in_use(&ds));
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	CHECK_EQ(NR_FILE, nr_swapped(&f, NR_FILE));
	for (uint64_t i = 0; i <= 5; i++)
		check_pattern(&ds, &f, i, 4);

	/* Read back and used at once, then evicted: a hit, no miss. */
	CHECK_EQ(0, swap_in(&ds, &f, 6, 1)); /* sequential, no hits, halved from 4: 2 */
	CHECK_EQ(2, atomic_load(&ds.ra.window));
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 7));
	check_pattern_iov(&ds, &f, 7, 4);
	CHECK_EQ(2, atomic_load(&ds.ra.nr_hits));
	CHECK_EQ(2, reclaim_pages(&ds, NR_FILE));
	CHECK_EQ(3, atomic_load(&ds.ra.nr_misses));

	/* Freed unused, by a truncate or with the file: misses. */
	CHECK_EQ(0, swap_in(&ds, &f, 8, 1)); /* one hit since: 4 */
	CHECK_EQ(4, atomic_load(&ds.ra.window));
	CHECK_EQ(3, atomic_load(&lru_page_of(&ds, &f, 9)->is_readahead) +
			    atomic_load(&lru_page_of(&ds, &f, 10)->is_readahead) +
			    atomic_load(&lru_page_of(&ds, &f, 11)->is_readahead));
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(0, data_truncate(&ds, &f, 11 * P));
	pthread_rwlock_unlock(&f.lock);
	CHECK_EQ(4, atomic_load(&ds.ra.nr_misses));
	CHECK_EQ(11, backend_stored(&ds));
	file_destroy(&ds, &f);
	CHECK_EQ(6, atomic_load(&ds.ra.nr_misses));
	CHECK_EQ(2, atomic_load(&ds.ra.nr_hits));
	space_destroy(&ds);
	return;
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 4e: readahead stays within the budget (the hard limit) and never
 * reclaims on the faulting thread.
 */
static void test_swap_in_watermark(void)
{
	enum { MEM = BUDGET_MIN_PAGES, HIGH = MEM - MEM / 16, NR_OTHER = MEM - 2 };
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f, other;

	check_set_context("high watermark");
	if (!wrap_space_new(&ds, &w, true, MEM) ||
	    !CHECK_EQ(HIGH, atomic_load(&ds.budget.high_pages)))
		return;
	atomic_store(&ds.ra.policy, READAHEAD_VMA);
	file_init(&f);
	file_init(&other);
	write_pages(&ds, &f, NR_FILE, 5);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	write_pages(&ds, &other, NR_OTHER, 6);
	CHECK_EQ(NR_OTHER, pool_in_use(&ds));
	for (int i = 0; i < 30; i++)
		readahead_hit(&ds.ra);

	/* The fault takes one page, readahead the one left in the budget. */
	CHECK_EQ(0, swap_in(&ds, &f, 0, 1));
	CHECK_EQ(32, atomic_load(&ds.ra.window));
	CHECK_EQ(1, atomic_load(&ds.ra.nr_pages));
	CHECK_EQ(MEM, pool_in_use(&ds));
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 1));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 2));
	CHECK_EQ(0, atomic_load(&ds.swap.nr_direct_reclaims));
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	check_pattern(&ds, &f, 1, 5);
	check_pattern(&ds, &f, 2, 5);
	check_pattern(&ds, &other, NR_OTHER - 1, 6);
out:
	file_destroy(&ds, &f);
	file_destroy(&ds, &other);
	space_destroy(&ds);
}

/* Case 4f: a failing load: the fault's fails the read, readahead's fails nothing. */
static void test_swap_in_load_failure(void)
{
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;

	check_set_context("load failure");
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	atomic_store(&ds.ra.policy, READAHEAD_VMA);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 7);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;

	/* The fault's load fails: -EIO, the page stays swapped, nothing read ahead. */
	CHECK_EQ(0, faulty_fail(w, FAULTY_LOAD, 1, -EIO, false));
	CHECK_EQ(-EIO, swap_in(&ds, &f, 0, 1));
	CHECK_EQ(1, faulty_nr_faulted(w, FAULTY_LOAD));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 0));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_swapin_errors));
	CHECK_EQ(0, atomic_load(&ds.swap.nr_swapins));
	CHECK_EQ(0, atomic_load(&ds.ra.nr_pages));
	CHECK_EQ(0, pool_in_use(&ds));
	check_pattern(&ds, &f, 0, 7);

	/* Readahead's load fails: the fault is served all the same. */
	CHECK_EQ(0, faulty_fail(w, FAULTY_LOAD, 2, -EIO, false));
	CHECK_EQ(0, swap_in(&ds, &f, 0, 1));
	CHECK_EQ(2, faulty_nr_faulted(w, FAULTY_LOAD));
	CHECK_EQ(2, atomic_load(&ds.ra.window));
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 0));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 1));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_swapin_errors));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_swapins));
	CHECK_EQ(0, atomic_load(&ds.ra.nr_pages));
	CHECK_EQ(1, pool_in_use(&ds));
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	check_pattern(&ds, &f, 0, 7);
	check_pattern(&ds, &f, 1, 7);

	/* Cleared: the next fault reads ahead again. */
	faulty_clear(w, FAULTY_LOAD);
	CHECK_EQ(0, swap_in(&ds, &f, 1, 1));
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 2));
	CHECK_EQ(1, atomic_load(&ds.ra.nr_pages));
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* One swapin_drain call, loading in turn, with inode's lock held. */
static int64_t drain_once(struct data_space *ds, struct inode *inode, uint64_t *from,
			  unsigned int max, uint64_t *nr_hits)
{
	int64_t n;

	pthread_rwlock_wrlock(&inode->lock);
	n = swapin_drain(ds, inode, from, max, nr_hits, swapin_load_in_turn, ds->backend);
	pthread_rwlock_unlock(&inode->lock);
	return n;
}

/*
 * swapin_drain from *from on until it returns 0 (or fails); checks each
 * call's count.
 */
static int64_t drain_all(struct data_space *ds, struct inode *inode, uint64_t *from,
			 unsigned int max, uint64_t *nr_hits, uint64_t *nr_calls)
{
	int64_t n, total = 0;

	*nr_hits = 0;
	*nr_calls = 0;
	do {
		uint64_t swapped = nr_swapped(inode, NR_FILE * 2), stored = backend_stored(ds);

		n = drain_once(ds, inode, from, max, nr_hits);
		++*nr_calls;
		if (n < 0)
			return n;
		CHECK(n <= (int64_t)max);
		CHECK_EQ(swapped - (uint64_t)n, nr_swapped(inode, NR_FILE * 2));
		CHECK(backend_stored(ds) <= stored - (uint64_t)n);
		total += n;
	} while (n > 0 && *nr_calls < 1000);
	return total;
}

/*
 * Case 4g: a page read back keeps its copy while the backend's slots cover
 * every page of data, however full they are, so evicting it again costs no
 * store; once they do not, the copy goes as the page is read.
 */
static void test_swap_in_keeps_copy(void)
{
	struct data_space ds;
	struct inode f;

	check_set_context("keeps copy");
	if (!space_new(&ds, space_ramdisk(NR_FILE), MEM_PAGES))
		return;
	atomic_store(&ds.ra.policy, READAHEAD_DIRECT);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 6);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	budget_update(&ds, true);
	CHECK(!atomic_load(&ds.budget.is_backend_tight)); /* full, but a slot a page */
	CHECK_EQ(0, swap_in(&ds, &f, 0, 1));
	CHECK_EQ(1, lru_page_of(&ds, &f, 0)->swap_slot ? 1 : 0);
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	CHECK_EQ(1, reclaim_pages(&ds, 1));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_clean_dropped));

	/* One page more than slots: a copy may cost an eviction its slot. */
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ((ssize_t)1, data_write_mem(&ds, &f, "x", 1, NR_FILE * P));
	pthread_rwlock_unlock(&f.lock);
	budget_update(&ds, true);
	CHECK(atomic_load(&ds.budget.is_backend_tight));
	CHECK_EQ(0, swap_in(&ds, &f, 1, 1));
	CHECK_EQ(0, lru_page_of(&ds, &f, 1)->swap_slot);
	CHECK_EQ(1, atomic_load(&ds.swap.nr_copies_freed));
	CHECK_EQ(NR_FILE - 1, backend_stored(&ds));
	check_pattern(&ds, &f, 0, 6);
	check_pattern(&ds, &f, 1, 6);
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Case 5a: a file evicted whole comes back in batches of at most max. */
static void test_drain_batches(unsigned int max)
{
	enum { NR = NR_FILE * 2 };
	uint64_t nr_hits = 0, nr_calls, from = 0;
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;
	int64_t n;

	check_set_context("drain %u pages by %u", NR, max);
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 8);
	if (!evict_all(&ds, &f, NR))
		goto out;

	/* The first call takes the first max swapped pages by index. */
	n = drain_once(&ds, &f, &from, max, &nr_hits);
	CHECK_EQ(max < NR ? max : NR, n);
	CHECK_EQ(max < NR ? max : NR, from);
	CHECK_EQ(0, nr_hits);
	for (uint64_t i = 0; i < NR; i++)
		CHECK_EQ(i < max ? PAGEMAP_KIND_RESIDENT : PAGEMAP_KIND_SWAPPED, kind(&f, i));
	CHECK_EQ(NR - (uint64_t)n, backend_stored(&ds));
	CHECK_EQ((uint64_t)n, pool_in_use(&ds));

	CHECK_EQ(NR - (uint64_t)n, drain_all(&ds, &f, &from, max, &nr_hits, &nr_calls));
	CHECK_EQ(0, nr_hits);
	CHECK_EQ((NR - (uint64_t)n + max - 1) / max + 1, nr_calls);
	CHECK_EQ(NR, from);
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(NR, pool_in_use(&ds));
	CHECK_EQ(NR, atomic_load(&ds.swap.nr_swapins));
	CHECK_EQ(0, atomic_load(&ds.swap.nr_swapin_errors));
	for (uint64_t i = 0; i < NR; i++) {
		struct lru_page *p = lru_page_of(&ds, &f, i);

		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
		CHECK_EQ(0, p->swap_slot);
		CHECK(!atomic_load(&p->is_readahead));
		CHECK(p->inode == &f);
		check_pattern(&ds, &f, i, 8);
	}
	/* Nothing left: 0 at once, from the cursor or from the start. */
	CHECK_EQ(0, drain_once(&ds, &f, &from, max, &nr_hits));
	from = 0;
	CHECK_EQ(0, drain_once(&ds, &f, &from, max, &nr_hits));
	CHECK_EQ(NR, from);
	CHECK_EQ(0, nr_hits);
	CHECK_EQ(0, atomic_load(&ds.ra.nr_hits));

	/* Evictable again, now with a store each. */
	CHECK_EQ(NR, reclaim_pages(&ds, NR));
	CHECK_EQ(NR, backend_stored(&ds));
	CHECK_EQ(NR * 2, atomic_load(&ds.swap.nr_evicted));
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Case 5b: clean resident pages are hits and lose their backend copies. */
static void test_drain_hits(unsigned int max)
{
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;
	uint64_t nr_hits, nr_calls, from = 0;

	check_set_context("drain hits, by %u", max);
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	atomic_store(&ds.ra.policy, READAHEAD_DIRECT);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 9);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	/* Ten clean pages, one of them written again (dirty: no copy, no hit). */
	CHECK_EQ(0, swap_in(&ds, &f, 10, 10));
	CHECK_EQ(0, swap_in(&ds, &f, 40, 1));
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	{
		static unsigned char page[P];

		pattern(page, 9, 40);
		pthread_rwlock_wrlock(&f.lock);
		CHECK_EQ((ssize_t)P, data_write_mem(&ds, &f, page, P, 40 * P));
		pthread_rwlock_unlock(&f.lock);
	}
	CHECK_EQ(NR_FILE - 1, backend_stored(&ds));
	for (uint64_t i = 10; i < 20; i++)
		CHECK(lru_page_of(&ds, &f, i)->swap_slot != 0);

	CHECK_EQ(NR_FILE - 11, drain_all(&ds, &f, &from, max, &nr_hits, &nr_calls));
	CHECK_EQ(10, nr_hits);
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(NR_FILE, pool_in_use(&ds));
	CHECK_EQ(0, nr_swapped(&f, NR_FILE));
	for (uint64_t i = 0; i < NR_FILE; i++) {
		CHECK_EQ(0, lru_page_of(&ds, &f, i)->swap_slot);
		check_pattern(&ds, &f, i, 9);
	}
	/* Evicted again, each is stored: no stale copy was kept. */
	CHECK_EQ(NR_FILE, reclaim_pages(&ds, NR_FILE));
	CHECK_EQ(0, atomic_load(&ds.swap.nr_clean_dropped));
	CHECK_EQ(NR_FILE, backend_stored(&ds));
	for (uint64_t i = 0; i < NR_FILE; i++)
		check_pattern(&ds, &f, i, 9);
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 5c: a load failing part way: the pages that loaded come back and are
 * counted, those of the failed batch stay swapped (-EIO when a call brings
 * none back), readable once the fault clears, then drained.
 */
static void test_drain_load_failure(bool is_persistent)
{
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;
	uint64_t nr_hits = 0, nr_calls, drained, from = 0;
	int64_t n;

	check_set_context("drain with a %s load failure", is_persistent ? "lasting" : "single");
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 10);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;

	/* 64 pages load in two batches of 32: the second fails. */
	CHECK_EQ(0, faulty_fail(w, FAULTY_LOAD, 2, -EIO, is_persistent));
	n = drain_once(&ds, &f, &from, NR_FILE, &nr_hits);
	CHECK_EQ(32, n);   /* those that came back, counted */
	CHECK_EQ(0, from); /* unmoved: the failed pages are looked at again */
	drained = NR_FILE - nr_swapped(&f, NR_FILE);
	CHECK_EQ(32, drained);
	CHECK_EQ(32, backend_stored(&ds));
	CHECK_EQ(32, pool_in_use(&ds));
	CHECK_EQ(32, atomic_load(&ds.swap.nr_swapin_errors));
	CHECK_EQ(32, atomic_load(&ds.swap.nr_swapins));

	if (is_persistent) {
		static unsigned char got[P];
		uint64_t swapped = 0;

		while (swapped < NR_FILE - 1 && kind(&f, swapped) != PAGEMAP_KIND_SWAPPED)
			swapped++;
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, swapped));
		/* Still failing: every call fails and changes nothing. */
		pthread_rwlock_wrlock(&f.lock);
		CHECK_EQ(-EIO, swapin_drain(&ds, &f, &from, NR_FILE, &nr_hits, swapin_load_in_turn,
					    ds.backend));
		CHECK_EQ(-EIO, swapin_range(&ds, &f, 0, NR_FILE * P));
		CHECK_EQ(-EIO, data_read_mem(&ds, &f, swapped * P, got, P));
		pthread_rwlock_unlock(&f.lock);
		CHECK_EQ(32, nr_swapped(&f, NR_FILE));
		CHECK_EQ(32, backend_stored(&ds));
		CHECK_EQ(32, pool_in_use(&ds));
		faulty_clear(w, FAULTY_LOAD);
	}
	for (uint64_t i = 0; i < NR_FILE; i++)
		check_pattern(&ds, &f, i, 10);

	CHECK_EQ(32, drain_all(&ds, &f, &from, NR_FILE, &nr_hits, &nr_calls));
	CHECK_EQ(0, nr_hits);
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(NR_FILE, pool_in_use(&ds));
	for (uint64_t i = 0; i < NR_FILE; i++)
		check_pattern(&ds, &f, i, 10);
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * An O_DIRECT read of swapped data (data_read_mem): the pages load in
 * batches of 32, not one by one, and stay swapped; a read that starts and
 * ends inside pages gets exactly its bytes.
 */
static void test_read_mem_batches(void)
{
	static unsigned char expected[NR_FILE * P], got[NR_FILE * P];
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;
	unsigned int calls;

	check_set_context("O_DIRECT read of swapped pages");
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 12);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	for (uint64_t i = 0; i < NR_FILE; i++)
		pattern(expected + i * P, 12, i);

	calls = faulty_nr_calls(w, FAULTY_LOAD);
	memset(got, 0xee, sizeof(got));
	pthread_rwlock_rdlock(&f.lock);
	CHECK_EQ((ssize_t)sizeof(got), data_read_mem(&ds, &f, 0, got, sizeof(got)));
	pthread_rwlock_unlock(&f.lock);
	CHECK_MEM(expected, got, sizeof(got));
	CHECK_EQ(calls + NR_FILE / 32, faulty_nr_calls(w, FAULTY_LOAD));
	CHECK_EQ(32, faulty_nr_last(w, FAULTY_LOAD));
	CHECK_EQ(NR_FILE, nr_swapped(&f, NR_FILE));
	CHECK_EQ(0, pool_in_use(&ds));

	/* Half a page in, three pages long: four pages in one call. */
	calls = faulty_nr_calls(w, FAULTY_LOAD);
	memset(got, 0xee, sizeof(got));
	pthread_rwlock_rdlock(&f.lock);
	CHECK_EQ((ssize_t)(3 * P), data_read_mem(&ds, &f, P / 2, got, 3 * P));
	pthread_rwlock_unlock(&f.lock);
	CHECK_MEM(expected + P / 2, got, 3 * P);
	CHECK_EQ(0xee, got[3 * P]);
	CHECK_EQ(calls + 1, faulty_nr_calls(w, FAULTY_LOAD));
	CHECK_EQ(4, faulty_nr_last(w, FAULTY_LOAD));
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 5d: a batch loads in the backend's order (locate), not the slots':
 * here reversed, so the last piece holds the lowest slots, highest first.
 */
static void test_drain_order(void)
{
	uint64_t nr_hits = 0, from = 0, last[FAULTY_LAST_LOAD], lowest = UINT64_MAX;
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;
	unsigned int nr;

	check_set_context("drain in the backend's order");
	if (!wrap_space_new(&ds, &w, false, MEM_PAGES))
		return;
	faulty_reverse_locate(w);
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 11);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	for (uint64_t i = 0; i < NR_FILE; i++) {
		uint64_t slot = pagemap_slot(pagemap_get(&f.pages, i));

		lowest = slot < lowest ? slot : lowest;
	}
	CHECK_EQ(NR_FILE, drain_once(&ds, &f, &from, NR_FILE, &nr_hits));
	nr = faulty_last_load(w, last);
	CHECK_EQ(SWAPIN_PIECE_PAGES, nr);
	for (unsigned int i = 1; i < nr; i++)
		CHECK(last[i - 1] > last[i]);
	CHECK_EQ(lowest, last[nr - 1]);
	CHECK_EQ(0, backend_stored(&ds));
	for (uint64_t i = 0; i < NR_FILE; i++)
		check_pattern(&ds, &f, i, 11);
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Loads the pieces last first, as loader threads may, and fails piece 1 of them. */
static void load_backwards_failing_one(void *ctx, struct swapin_piece *pieces, unsigned int nr)
{
	struct tier_backend *b = ctx;

	for (unsigned int i = nr; i-- > 0;)
		pieces[i].ret =
			i == 1 ? -EIO :
				 b->ops->load(b, pieces[i].slots, pieces[i].pages, pieces[i].nr);
}

/*
 * Case 5e: pieces done in any order, one failing: only its pages stay
 * swapped, counted, and a second drain brings them back.
 */
static void test_drain_pieces(void)
{
	uint64_t nr_hits = 0, from = 0;
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;

	check_set_context("drain pieces out of order, one failing");
	if (!wrap_space_new(&ds, &w, false, MEM_PAGES))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 12);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(NR_FILE - SWAPIN_PIECE_PAGES,
		 swapin_drain(&ds, &f, &from, NR_FILE, &nr_hits, load_backwards_failing_one,
			      ds.backend));
	pthread_rwlock_unlock(&f.lock);
	CHECK_EQ(0, from);
	/* Evicted in index order, so slot order: piece 1 is the second 32 pages. */
	for (uint64_t i = 0; i < NR_FILE; i++)
		CHECK_EQ(i / SWAPIN_PIECE_PAGES == 1 ? PAGEMAP_KIND_SWAPPED : PAGEMAP_KIND_RESIDENT,
			 kind(&f, i));
	CHECK_EQ(SWAPIN_PIECE_PAGES, atomic_load(&ds.swap.nr_swapin_errors));
	CHECK_EQ(NR_FILE - SWAPIN_PIECE_PAGES, atomic_load(&ds.swap.nr_swapins));
	CHECK_EQ(SWAPIN_PIECE_PAGES, backend_stored(&ds));
	CHECK_EQ(NR_FILE - SWAPIN_PIECE_PAGES, pool_in_use(&ds));
	CHECK_EQ(SWAPIN_PIECE_PAGES, drain_once(&ds, &f, &from, NR_FILE, &nr_hits));
	CHECK_EQ(0, backend_stored(&ds));
	for (uint64_t i = 0; i < NR_FILE; i++)
		check_pattern(&ds, &f, i, 12);
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 5f: short of pool pages, a call brings back what it has pages for,
 * and the next one, with none left, fails with -ENOMEM and moves nothing.
 */
static void test_drain_short_of_pages(void)
{
	enum { SPARE = 40 };
	static uint32_t held[SPACE_POOL_PAGES];
	uint64_t nr_hits = 0, from = 0, nr_held = 0;
	struct data_space ds;
	struct faulty_backend *w;
	struct inode f;
	int64_t pfn;

	check_set_context("drain short of pages");
	if (!wrap_space_new(&ds, &w, true, MEM_PAGES))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR_FILE, 13);
	if (!evict_all(&ds, &f, NR_FILE))
		goto out;
	while (pool_in_use(&ds) < SPACE_POOL_PAGES - SPARE && (pfn = pagepool_alloc(ds.pool)) >= 0)
		held[nr_held++] = (uint32_t)pfn;
	CHECK_EQ(SPARE, drain_once(&ds, &f, &from, NR_FILE, &nr_hits));
	CHECK_EQ(0, from);
	CHECK_EQ(-ENOMEM, drain_once(&ds, &f, &from, NR_FILE, &nr_hits));
	CHECK_EQ(NR_FILE - SPARE, nr_swapped(&f, NR_FILE));
	CHECK_EQ(NR_FILE - SPARE, backend_stored(&ds));
	while (nr_held)
		pagepool_free_page(ds.pool, held[--nr_held]);
	CHECK_EQ(NR_FILE - SPARE, drain_once(&ds, &f, &from, NR_FILE, &nr_hits));
	CHECK_EQ(0, backend_stored(&ds));
	for (uint64_t i = 0; i < NR_FILE; i++)
		check_pattern(&ds, &f, i, 13);
out:
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

int main(void)
{
	test_policy();
	test_window();
	test_collect_vma();
	test_collect_cluster();
	test_swap_in_vma_forward();
	test_swap_in_vma_backward();
	test_swap_in_no_readahead(READAHEAD_DIRECT, true);
	test_swap_in_no_readahead(READAHEAD_DIRECT, false);
	test_swap_in_no_readahead(READAHEAD_AUTO, true);
	test_swap_in_no_readahead(READAHEAD_AUTO, false);
	test_swap_in_misses();
	test_swap_in_watermark();
	test_swap_in_load_failure();
	test_swap_in_keeps_copy();
	test_drain_batches(40);
	test_drain_batches(32);
	test_drain_batches(1);
	test_drain_batches(256);
	test_drain_hits(256);
	test_drain_hits(7);
	test_drain_load_failure(false);
	test_drain_load_failure(true);
	test_drain_order();
	test_drain_pieces();
	test_drain_short_of_pages();
	test_read_mem_batches();
	return check_done("readahead");
}
