// SPDX-License-Identifier: MIT
/*
 * Unit tests of the page map: entry encoding, growth to the largest index,
 * node freeing, pagemap_next and pagemap_erase_range against a model, and
 * the promise that a failed node allocation leaves the map unchanged.
 */
#include <errno.h>
#include <stdlib.h>

#include "tierfs/pagemap.h"
#include "check.h"

/*
 * calloc is wrapped at link time (-Wl,--wrap=calloc): fail_calloc_in = N
 * fails the call N calls from now, once; -1 never fails.
 */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static int fail_calloc_in = -1;
static unsigned int nr_calloc_calls;

void *__wrap_calloc(size_t n, size_t size)
{
	nr_calloc_calls++;
	if (fail_calloc_in == 0) {
		fail_calloc_in = -1;
		return NULL;
	}
	if (fail_calloc_in > 0)
		fail_calloc_in--;
	return __real_calloc(n, size);
}

/* Number of nodes a map of this height holding these sorted indices needs. */
static uint64_t nodes_needed(const uint64_t *idx, size_t nr, unsigned int height)
{
	uint64_t nodes = nr ? 1 : 0;

	for (unsigned int level = 1; nr && level < height; level++) {
		uint64_t prev = UINT64_MAX;

		for (size_t i = 0; i < nr; i++) {
			uint64_t prefix = idx[i] >> (6 * level);

			if (prefix != prev)
				nodes++;
			prev = prefix;
		}
	}
	return nodes;
}

/* pagemap_set, folded to the old entry on success or the error: short to check. */
static int64_t set_entry(struct pagemap *pm, uint64_t index, uint64_t entry)
{
	uint64_t old;
	int err = pagemap_set(pm, index, entry, &old);

	return err ? err : (int64_t)old;
}

static void ignore_release(void *ctx, uint64_t index, uint64_t entry)
{
	(void)ctx;
	(void)index;
	(void)entry;
}

static void test_encoding(void)
{
	uint64_t e;

	CHECK_EQ(PAGEMAP_KIND_HOLE, pagemap_kind(PAGEMAP_HOLE));

	e = pagemap_mk_resident(0);
	CHECK(e != PAGEMAP_HOLE);
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, pagemap_kind(e));
	CHECK_EQ(0, pagemap_pfn(e));
	e = pagemap_mk_resident(UINT32_MAX);
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, pagemap_kind(e));
	CHECK_EQ(UINT32_MAX, pagemap_pfn(e));

	e = pagemap_mk_filled(0xdeadbeef);
	CHECK_EQ(PAGEMAP_KIND_FILLED, pagemap_kind(e));
	CHECK_EQ(0xdeadbeef, pagemap_fill(e));
	CHECK(!pagemap_is_unwritten(e));

	e = pagemap_mk_filled(0);
	CHECK(e != PAGEMAP_HOLE);
	CHECK_EQ(PAGEMAP_KIND_FILLED, pagemap_kind(e));
	CHECK_EQ(0, pagemap_fill(e));
	CHECK(!pagemap_is_unwritten(e));

	e = pagemap_mk_unwritten();
	CHECK_EQ(PAGEMAP_KIND_FILLED, pagemap_kind(e));
	CHECK_EQ(0, pagemap_fill(e));
	CHECK(pagemap_is_unwritten(e));

	e = pagemap_mk_swapped(0);
	CHECK(e != PAGEMAP_HOLE);
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, pagemap_kind(e));
	CHECK_EQ(0, pagemap_slot(e));
	e = pagemap_mk_swapped(123456789012ULL);
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, pagemap_kind(e));
	CHECK_EQ(123456789012ULL, pagemap_slot(e));
}

static void test_empty(void)
{
	struct pagemap pm = { 0 };
	uint64_t index = 0, entry = 0;

	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, 0));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, PAGEMAP_MAX_INDEX));
	CHECK(!pagemap_next(&pm, &index, UINT64_MAX, &entry));
	CHECK_EQ(0, pagemap_erase_range(&pm, 0, UINT64_MAX, ignore_release, NULL));
	CHECK_EQ(0, set_entry(&pm, 7, PAGEMAP_HOLE));
	CHECK_EQ(0, pm.nr_entries);
	CHECK_EQ(0, pm.nr_nodes);
	CHECK_EQ(0, pagemap_node_bytes(&pm));
	CHECK(pm.root == NULL);
}

static void test_set_get(void)
{
	struct pagemap pm = { 0 };
	uint64_t a = pagemap_mk_resident(11), b = pagemap_mk_filled(0x01010101);

	CHECK_EQ(PAGEMAP_HOLE, set_entry(&pm, 0, a));
	CHECK_EQ(a, pagemap_get(&pm, 0));
	CHECK_EQ(1, pm.nr_entries);
	CHECK_EQ(1, pm.height);
	CHECK_EQ(1, pm.nr_nodes);
	CHECK_EQ(pagemap_node_size, pagemap_node_bytes(&pm));

	/* Overwriting returns the old entry and does not count twice. */
	CHECK_EQ(a, set_entry(&pm, 0, b));
	CHECK_EQ(b, pagemap_get(&pm, 0));
	CHECK_EQ(1, pm.nr_entries);

	/* Neighbours within and past the root's reach stay holes. */
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, 1));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, 64));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, PAGEMAP_MAX_INDEX));

	/* Erasing returns the old entry and frees the emptied node. */
	CHECK_EQ(b, set_entry(&pm, 0, PAGEMAP_HOLE));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, 0));
	CHECK_EQ(0, pm.nr_entries);
	CHECK_EQ(0, pm.nr_nodes);
	CHECK_EQ(0, pm.height);
	CHECK(pm.root == NULL);
}

static void test_growth(void)
{
	struct pagemap pm = { 0 };
	uint64_t lo = pagemap_mk_resident(1), hi = pagemap_mk_resident(2);
	uint64_t idx[2] = { 0, PAGEMAP_MAX_INDEX };

	/* 64 slots a node: index 64 needs a second level, 4096 a third. */
	set_entry(&pm, 0, lo);
	set_entry(&pm, 64, hi);
	CHECK_EQ(2, pm.height);
	CHECK_EQ(3, pm.nr_nodes);
	set_entry(&pm, 4096, hi);
	CHECK_EQ(3, pm.height);
	CHECK_EQ(lo, pagemap_get(&pm, 0));
	CHECK_EQ(hi, pagemap_get(&pm, 64));
	CHECK_EQ(hi, pagemap_get(&pm, 4096));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, 4095));
	set_entry(&pm, 64, PAGEMAP_HOLE);
	set_entry(&pm, 4096, PAGEMAP_HOLE);
	CHECK_EQ(lo, pagemap_get(&pm, 0));
	CHECK_EQ(1, pm.nr_entries);

	/* The largest index: 2^51 - 1 pages, nine levels. */
	CHECK_EQ(PAGEMAP_HOLE, set_entry(&pm, PAGEMAP_MAX_INDEX, hi));
	CHECK_EQ(9, pm.height);
	CHECK_EQ(hi, pagemap_get(&pm, PAGEMAP_MAX_INDEX));
	CHECK_EQ(lo, pagemap_get(&pm, 0));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, PAGEMAP_MAX_INDEX - 1));
	CHECK_EQ(2, pm.nr_entries);
	CHECK_EQ(nodes_needed(idx, 2, 9), pm.nr_nodes);
	CHECK_EQ(pm.nr_nodes * pagemap_node_size, pagemap_node_bytes(&pm));

	/* Past the largest index: refused, nothing changes. */
	CHECK_EQ(-EFBIG, set_entry(&pm, PAGEMAP_MAX_INDEX + 1, hi));
	CHECK_EQ(2, pm.nr_entries);
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, PAGEMAP_MAX_INDEX + 1));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, UINT64_MAX));

	/* Removing the far entry frees its path but keeps the root. */
	CHECK_EQ(hi, set_entry(&pm, PAGEMAP_MAX_INDEX, PAGEMAP_HOLE));
	CHECK_EQ(nodes_needed(idx, 1, pm.height), pm.nr_nodes);
	CHECK_EQ(lo, pagemap_get(&pm, 0));
	CHECK_EQ(lo, set_entry(&pm, 0, PAGEMAP_HOLE));
	CHECK_EQ(0, pm.nr_nodes);
	CHECK(pm.root == NULL);
	CHECK_EQ(0, pm.height);
}

/* Bit-exact return of an old entry whose top bit is set. */
static void test_high_entries(void)
{
	struct pagemap pm = { 0 };
	uint64_t high = pagemap_mk_filled(0xfffffffe);

	set_entry(&pm, 3, high);
	CHECK_EQ(high, pagemap_get(&pm, 3));
	CHECK_EQ(high, (uint64_t)set_entry(&pm, 3, pagemap_mk_resident(5)));
	CHECK_EQ(pagemap_mk_resident(5), (uint64_t)set_entry(&pm, 3, PAGEMAP_HOLE));
	CHECK_EQ(0, pm.nr_nodes);
}

static void test_next(void)
{
	static const uint64_t idx[] = {
		5, 63, 64, 4095, 4096, 262143, 1ULL << 30, PAGEMAP_MAX_INDEX - 64, PAGEMAP_MAX_INDEX
	};
	const size_t nr = sizeof(idx) / sizeof(idx[0]);
	struct pagemap pm = { 0 };
	uint64_t index, entry;
	size_t n = 0;

	for (size_t i = 0; i < nr; i++)
		set_entry(&pm, idx[i], pagemap_mk_resident((uint32_t)i + 100));
	CHECK_EQ(nr, pm.nr_entries);
	CHECK_EQ(nodes_needed(idx, nr, pm.height), pm.nr_nodes);

	/* A full walk finds every entry once, in order. */
	for (index = 0; pagemap_next(&pm, &index, UINT64_MAX, &entry); index++) {
		if (n >= nr || index != idx[n] || entry != pagemap_mk_resident((uint32_t)n + 100))
			break;
		n++;
	}
	CHECK_EQ(nr, n);

	/* From inside a gap, from an entry itself, and bounded by last. */
	index = 6;
	CHECK(pagemap_next(&pm, &index, UINT64_MAX, &entry));
	CHECK_EQ(63, index);
	index = 64;
	CHECK(pagemap_next(&pm, &index, 64, &entry));
	CHECK_EQ(64, index);
	CHECK_EQ(pagemap_mk_resident(102), entry);
	index = 65;
	CHECK(!pagemap_next(&pm, &index, 4094, &entry));
	index = 65;
	CHECK(pagemap_next(&pm, &index, 4095, &entry));
	CHECK_EQ(4095, index);
	index = 262144;
	CHECK(pagemap_next(&pm, &index, UINT64_MAX, &entry));
	CHECK_EQ(1ULL << 30, index);
	index = (1ULL << 30) + 1;
	CHECK(pagemap_next(&pm, &index, UINT64_MAX, &entry));
	CHECK_EQ(PAGEMAP_MAX_INDEX - 64, index);
	index = PAGEMAP_MAX_INDEX;
	CHECK(pagemap_next(&pm, &index, PAGEMAP_MAX_INDEX, &entry));
	CHECK_EQ(PAGEMAP_MAX_INDEX, index);
	index = PAGEMAP_MAX_INDEX + 1;
	CHECK(!pagemap_next(&pm, &index, UINT64_MAX, &entry));
	index = 10;
	CHECK(!pagemap_next(&pm, &index, 9, &entry));

	CHECK_EQ(nr, pagemap_erase_range(&pm, 0, UINT64_MAX, ignore_release, NULL));
	CHECK_EQ(0, pm.nr_entries);
	CHECK_EQ(0, pm.nr_nodes);
	CHECK(pm.root == NULL);
}

/* What erase_range handed to its release callback. */
struct released {
	uint64_t index[1024];
	uint64_t entry[1024];
	size_t nr;
	bool is_overflow;
};

static void record_release(void *ctx, uint64_t index, uint64_t entry)
{
	struct released *r = ctx;

	if (r->nr == 1024) {
		r->is_overflow = true;
		return;
	}
	r->index[r->nr] = index;
	r->entry[r->nr] = entry;
	r->nr++;
}

static void test_erase_range(void)
{
	struct pagemap pm = { 0 };
	struct released r = { .nr = 0 };
	uint64_t idx[200], n = 0;

	for (uint64_t i = 0; i < 200; i++)
		set_entry(&pm, i * 37, pagemap_mk_resident((uint32_t)i + 1));

	/* first > last erases nothing. */
	CHECK_EQ(0, pagemap_erase_range(&pm, 100, 99, record_release, &r));
	CHECK_EQ(0, r.nr);

	/* [100, 1000]: indices 111 (i=3) .. 999 (i=27). */
	CHECK_EQ(25, pagemap_erase_range(&pm, 100, 1000, record_release, &r));
	CHECK_EQ(25, r.nr);
	for (size_t i = 0; i < r.nr; i++)
		if (r.index[i] == (i + 3) * 37 &&
		    r.entry[i] == pagemap_mk_resident((uint32_t)i + 4))
			n++;
	CHECK_EQ(25, n);
	CHECK_EQ(175, pm.nr_entries);
	CHECK_EQ(pagemap_mk_resident(3), pagemap_get(&pm, 74));
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&pm, 111));
	CHECK_EQ(pagemap_mk_resident(29), pagemap_get(&pm, 1036));

	n = 0;
	for (uint64_t i = 0; i < 200; i++)
		if (i < 3 || i > 27)
			idx[n++] = i * 37;
	CHECK_EQ(nodes_needed(idx, n, pm.height), pm.nr_nodes);

	/* A range holding no entries erases nothing. */
	r.nr = 0;
	CHECK_EQ(0, pagemap_erase_range(&pm, 112, 147, record_release, &r));
	CHECK_EQ(0, r.nr);
	CHECK_EQ(0, pagemap_erase_range(&pm, 1ULL << 40, UINT64_MAX, record_release, &r));

	/* The rest: the map is empty and every node is gone. */
	CHECK_EQ(175, pagemap_erase_range(&pm, 0, UINT64_MAX, record_release, &r));
	CHECK_EQ(175, r.nr);
	CHECK_EQ(0, pm.nr_entries);
	CHECK_EQ(0, pm.nr_nodes);
	CHECK(pm.root == NULL);
	CHECK_EQ(0, pm.height);
}

/* xorshift64, fixed seed. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define NR_CANDIDATES 600

/*
 * Random sets, erases and range erases on a fixed set of indices (dense,
 * sparse and near the top), compared with a flat model after every round.
 */
static void test_model(void)
{
	static uint64_t cand[NR_CANDIDATES], model[NR_CANDIDATES];
	static uint64_t present[NR_CANDIDATES];
	static struct released r;
	struct pagemap pm = { 0 };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	unsigned int nr_bad_get = 0, nr_bad_walk = 0, nr_bad_nodes = 0, nr_bad_count = 0;
	unsigned int nr_bad_release = 0;

	for (size_t i = 0; i < NR_CANDIDATES; i++) {
		if (i < 300)
			cand[i] = i; /* dense: leaves fill up */
		else if (i < 500)
			cand[i] = 300 + (i - 300) * 4099; /* one per leaf */
		else
			cand[i] = PAGEMAP_MAX_INDEX - (NR_CANDIDATES - 1 - i) * 262147;
	}
	for (unsigned int round = 0; round < 400; round++) {
		unsigned int op = (unsigned int)(rng_next(&seed) % 10);
		size_t nr_present = 0;
		uint64_t index, entry;
		size_t n = 0;

		if (op < 6) {
			for (int k = 0; k < 20; k++) {
				size_t i = rng_next(&seed) % NR_CANDIDATES;
				uint64_t e = pagemap_mk_resident((uint32_t)rng_next(&seed));

				if ((uint64_t)set_entry(&pm, cand[i], e) != model[i])
					nr_bad_get++;
				model[i] = e;
			}
		} else if (op < 9) {
			for (int k = 0; k < 20; k++) {
				size_t i = rng_next(&seed) % NR_CANDIDATES;

				if ((uint64_t)set_entry(&pm, cand[i], PAGEMAP_HOLE) != model[i])
					nr_bad_get++;
				model[i] = PAGEMAP_HOLE;
			}
		} else {
			size_t a = rng_next(&seed) % NR_CANDIDATES,
			       b = rng_next(&seed) % NR_CANDIDATES;
			uint64_t first = cand[a < b ? a : b], last = cand[a < b ? b : a];
			uint64_t nr_expected = 0;

			/* Widen past the candidates on either side now and then. */
			if (rng_next(&seed) % 2 && first)
				first--;
			if (rng_next(&seed) % 2)
				last++;
			r.nr = 0;
			for (size_t i = 0; i < NR_CANDIDATES; i++) {
				if (cand[i] >= first && cand[i] <= last && model[i])
					nr_expected++;
			}
			if (pagemap_erase_range(&pm, first, last, record_release, &r) !=
			    nr_expected)
				nr_bad_count++;
			for (size_t i = 0, j = 0; i < NR_CANDIDATES; i++) {
				if (cand[i] < first || cand[i] > last || !model[i])
					continue;
				if (j >= r.nr || r.index[j] != cand[i] || r.entry[j] != model[i])
					nr_bad_release++;
				j++;
				model[i] = PAGEMAP_HOLE;
			}
		}

		for (size_t i = 0; i < NR_CANDIDATES; i++) {
			if (pagemap_get(&pm, cand[i]) != model[i])
				nr_bad_get++;
			if (model[i])
				present[nr_present++] = cand[i];
		}
		if (pm.nr_entries != nr_present)
			nr_bad_count++;
		for (index = 0; pagemap_next(&pm, &index, UINT64_MAX, &entry); index++) {
			if (n >= nr_present || index != present[n])
				break;
			n++;
		}
		if (n != nr_present)
			nr_bad_walk++;
		if (pm.nr_nodes != nodes_needed(present, nr_present, pm.height))
			nr_bad_nodes++;
	}
	CHECK_EQ(0, nr_bad_get);
	CHECK_EQ(0, nr_bad_walk);
	CHECK_EQ(0, nr_bad_count);
	CHECK_EQ(0, nr_bad_release);
	CHECK_EQ(0, nr_bad_nodes);
	CHECK(!r.is_overflow);
	pagemap_erase_range(&pm, 0, UINT64_MAX, ignore_release, NULL);
	CHECK_EQ(0, pm.nr_nodes);
}

/* Snapshot of a map's header, to prove a failed set changed nothing. */
static bool map_same(const struct pagemap *a, const struct pagemap *b)
{
	return a->root == b->root && a->height == b->height && a->nr_entries == b->nr_entries &&
	       a->nr_nodes == b->nr_nodes;
}

/* Fail each node allocation a set needs in turn; the map must not change. */
static void check_enomem(struct pagemap *pm, uint64_t index, unsigned int nr_allocs)
{
	struct pagemap before = *pm;
	uint64_t entry = pagemap_mk_resident(77);
	unsigned int nr_unchanged = 0, nr_enomem = 0;

	check_set_context("set %#" PRIx64 " on a map of height %u", index, pm->height);
	for (unsigned int n = 0; n < nr_allocs; n++) {
		fail_calloc_in = (int)n;
		if (set_entry(pm, index, entry) == -ENOMEM)
			nr_enomem++;
		if (map_same(pm, &before) && pagemap_get(pm, index) == PAGEMAP_HOLE)
			nr_unchanged++;
		fail_calloc_in = -1;
	}
	CHECK_EQ(nr_allocs, nr_enomem);
	CHECK_EQ(nr_allocs, nr_unchanged);

	/* With exactly enough allocations it goes through. */
	nr_calloc_calls = 0;
	fail_calloc_in = (int)nr_allocs;
	CHECK_EQ(PAGEMAP_HOLE, set_entry(pm, index, entry));
	CHECK_EQ(nr_allocs, nr_calloc_calls);
	fail_calloc_in = -1;
	CHECK_EQ(entry, pagemap_get(pm, index));
	CHECK_EQ(before.nr_nodes + nr_allocs, pm->nr_nodes);
	check_clear_context();
}

static void test_enomem(void)
{
	struct pagemap pm = { 0 };

	/* The wrapper must see the map's allocations, or nothing is tested. */
	nr_calloc_calls = 0;
	set_entry(&pm, 0, pagemap_mk_resident(1));
	if (!CHECK_EQ(1, nr_calloc_calls))
		return;
	set_entry(&pm, 0, PAGEMAP_HOLE);

	check_enomem(&pm, PAGEMAP_MAX_INDEX, 9); /* empty map: a whole path */
	check_enomem(&pm, 0, 8);		 /* a path under the root */
	pagemap_erase_range(&pm, 0, UINT64_MAX, ignore_release, NULL);
	set_entry(&pm, 1, pagemap_mk_resident(1));
	check_enomem(&pm, PAGEMAP_MAX_INDEX, 16); /* new roots and a path */
	check_enomem(&pm, 1ULL << 36, 6);	  /* a path part way down */
	pagemap_erase_range(&pm, 0, UINT64_MAX, ignore_release, NULL);
	CHECK_EQ(0, pm.nr_nodes);
}

int main(void)
{
	test_encoding();
	test_empty();
	test_set_get();
	test_growth();
	test_high_entries();
	test_next();
	test_erase_range();
	test_model();
	test_enomem();
	return check_done("pagemap");
}
