// SPDX-License-Identifier: MIT
/*
 * The budget's capacity: what a data space says can still be written is
 * what a writer gets before ENOSPC, bounded by size=, by the resident
 * budget and the backend's slots, or by a memory limit; fallocated pages
 * are reserved; the tighter of memlimit= and the surroundings' limit wins.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "space.h"

#define NR_SLOTS 512
#define MEM_PAGES 256

/* Write page after page until the first failure; returns pages written. */
static uint64_t fill(struct data_space *ds, struct inode *f, uint64_t from, ssize_t *last)
{
	static unsigned char page[P];
	uint64_t n = 0;

	pthread_rwlock_wrlock(&f->lock);
	for (;; n++) {
		pattern(page, 1, from + n);
		*last = data_write_mem(ds, f, page, P, (from + n) * P);
		if (*last != (ssize_t)P)
			break;
	}
	pthread_rwlock_unlock(&f->lock);
	return n;
}

/* Budget plus slots, each page one: free pages are exactly what fits. */
static void test_slots_bound(void)
{
	struct data_space ds;
	struct inode f;
	ssize_t last;
	uint64_t want, got;

	check_set_context("slots");
	if (!space_new(&ds, space_ramdisk(NR_SLOTS), MEM_PAGES))
		return;
	file_init(&f);
	want = budget_nr_free_pages(&ds, NULL);
	CHECK_EQ(MEM_PAGES + NR_SLOTS, want);
	got = fill(&ds, &f, 0, &last);
	CHECK_EQ(-ENOSPC, last);
	/* A store-time ENOSPC may come a batch early: never later. */
	CHECK(got <= want && got + 32 >= want);
	CHECK_EQ(0, budget_nr_free_pages(&ds, NULL) > 32);
	file_destroy(&ds, &f);
	CHECK_EQ(want, budget_nr_free_pages(&ds, NULL));
	space_destroy(&ds);
}

/* size= below the capacity: the smaller bound is the one reported. */
static void test_size_bound(void)
{
	struct data_space ds;
	struct inode f;
	ssize_t last;

	check_set_context("size");
	if (!space_new(&ds, space_ramdisk(NR_SLOTS), MEM_PAGES))
		return;
	ds.max_pages = 100;
	file_init(&f);
	CHECK_EQ(100, budget_nr_free_pages(&ds, NULL));
	CHECK_EQ(100, fill(&ds, &f, 0, &last));
	CHECK_EQ(-ENOSPC, last);
	CHECK_EQ(0, budget_nr_free_pages(&ds, NULL));
	file_destroy(&ds, &f);
	ds.max_pages = 0;
	space_destroy(&ds);
}

/* A fallocated range is reserved: the rest fills, the range still writes. */
static void test_fallocate_reserves(void)
{
	static unsigned char page[P];
	struct data_space ds;
	struct inode r, f;
	uint64_t before;
	ssize_t last;

	check_set_context("fallocate");
	if (!space_new(&ds, space_ramdisk(NR_SLOTS), MEM_PAGES))
		return;
	file_init(&r);
	file_init(&f);
	before = budget_nr_free_pages(&ds, NULL);
	pthread_rwlock_wrlock(&r.lock);
	CHECK_EQ(0, data_allocate(&ds, &r, 0, 64 * P));
	pthread_rwlock_unlock(&r.lock);
	CHECK_EQ(before - 64, budget_nr_free_pages(&ds, NULL));
	CHECK_EQ(64, atomic_load(&ds.nr_unwritten));
	/* More than is left: refused whole. */
	pthread_rwlock_wrlock(&r.lock);
	CHECK_EQ(-ENOSPC, data_allocate(&ds, &r, 64 * P, (before - 63) * P));
	pthread_rwlock_unlock(&r.lock);
	fill(&ds, &f, 0, &last);
	CHECK_EQ(-ENOSPC, last);
	pthread_rwlock_wrlock(&r.lock);
	for (uint64_t i = 0; i < 64; i++) {
		pattern(page, 2, i);
		CHECK_EQ((ssize_t)P, data_write_mem(&ds, &r, page, P, i * P));
	}
	pthread_rwlock_unlock(&r.lock);
	CHECK_EQ(0, atomic_load(&ds.nr_unwritten));
	file_destroy(&ds, &r);
	file_destroy(&ds, &f);
	CHECK_EQ(before, budget_nr_free_pages(&ds, NULL));
	space_destroy(&ds);
}

/* The surroundings' limit bounds even with mem= set; the tighter wins. */
static void test_limits(void)
{
	struct data_space ds;
	uint64_t mem, mem_cap, limit_cap;

	check_set_context("limits");
	if (!space_new(&ds, space_ramdisk(NR_SLOTS), MEM_PAGES))
		return;
	CHECK_EQ(0, budget_limit(&ds));
	budget_set_env_limit(&ds, 256ULL << 20);
	CHECK_EQ(256ULL << 20, budget_limit(&ds));
	CHECK_EQ(0, budget_set(&ds, MEM_PAGES * P, 128ULL << 20));
	CHECK_EQ(128ULL << 20, budget_limit(&ds));
	CHECK_EQ(0, budget_set(&ds, MEM_PAGES * P, 512ULL << 20));
	CHECK_EQ(256ULL << 20, budget_limit(&ds));
	/* mem= and memlimit= both none is fine while the cgroup bounds. */
	CHECK_EQ(0, budget_set(&ds, 0, 0));
	mem = atomic_load(&ds.budget.mem_pages);
	/* The cgroup's limit lifted: the budget in force stays, as mem=. */
	budget_set_env_limit(&ds, 0);
	CHECK_EQ(mem, atomic_load(&ds.budget.mem_pages));
	budget_get_caps(&ds, &mem_cap, &limit_cap);
	CHECK_EQ(mem * P, mem_cap);
	CHECK_EQ(0, limit_cap);
	CHECK_EQ(-EINVAL, budget_set(&ds, 0, 0));
	CHECK_EQ(0, budget_set(&ds, MEM_PAGES * P, 0));
	space_destroy(&ds);
}

/*
 * A RAM pool under a limit: bounded by memory, not slots, and a page with
 * no memory yet weighs at least one stored page.
 */
static void test_memory_bound(void)
{
	struct data_space ds;

	check_set_context("memory");
	if (!space_new(&ds, space_ramdisk(1 << 20), MEM_PAGES))
		return;
	budget_set_env_limit(&ds, 64ULL << 20);
	CHECK(budget_nr_free_pages(&ds, NULL) < (64ULL << 20) / P);
	CHECK(budget_nr_free_pages(&ds, NULL) > (16ULL << 20) / P);
	CHECK(atomic_load(&ds.budget.filled_weight) >= 1024);
	budget_set_env_limit(&ds, 0);
	space_destroy(&ds);
}

/*
 * The namespace's memory under a limit: charged in pieces it takes what
 * the resident pages can give up, the capacity df shows shrinks with it,
 * then it is refused; given back, it can be taken again.
 */
static void test_meta_bound(void)
{
	const uint64_t piece = 64 << 10, limit = 64ULL << 20;
	uint64_t nr_free, charged = 0;
	struct data_space ds;
	bool has_shrunk;

	check_set_context("meta");
	if (!space_new(&ds, space_ramdisk(1 << 20), MEM_PAGES))
		return;
	CHECK_EQ(0, budget_set(&ds, 0, limit));
	nr_free = budget_nr_free_pages(&ds, NULL);
	while (charged < limit && !budget_charge_meta(&ds, piece, &has_shrunk))
		charged += piece;
	printf("meta: %llu KiB taken under a %llu MiB limit\n", (unsigned long long)charged >> 10,
	       (unsigned long long)limit >> 20);
	/* Less than the limit less its headroom, more than half of that. */
	CHECK(charged <= limit - BUDGET_HEADROOM - (limit >> BUDGET_HEADROOM_SHIFT));
	CHECK(charged >= (limit - BUDGET_HEADROOM - (limit >> BUDGET_HEADROOM_SHIFT)) / 2);
	CHECK_EQ(charged, atomic_load(&ds.budget.meta_bytes));
	CHECK(budget_nr_free_pages(&ds, NULL) + (charged >> PAGE_SHIFT) / 2 <= nr_free);
	/* Refused again at once, and after a recomputation, which takes no charge in. */
	CHECK_EQ(-ENOSPC, budget_charge_meta(&ds, piece, &has_shrunk));
	nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	CHECK_EQ(-ENOSPC, budget_charge_meta(&ds, piece, &has_shrunk));
	nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	CHECK_EQ(-ENOSPC, budget_charge_meta(&ds, piece, &has_shrunk));
	budget_add_meta(&ds, -(int64_t)charged);
	CHECK_EQ(0, budget_charge_meta(&ds, piece, &has_shrunk));
	budget_add_meta(&ds, -(int64_t)piece);
	CHECK_EQ(0, atomic_load(&ds.budget.meta_bytes));
	space_destroy(&ds);
}

/* Charge metadata in 64 KiB pieces until refused; returns what was taken, given back. */
static uint64_t meta_room(struct data_space *ds)
{
	const uint64_t piece = 64 << 10;
	uint64_t charged = 0;
	bool has_shrunk;

	while (charged < (1ULL << 30) && !budget_charge_meta(ds, piece, &has_shrunk))
		charged += piece;
	budget_add_meta(ds, -(int64_t)charged);
	return charged;
}

/*
 * What the rest of the cgroup holds comes off the cgroup's limit past 8
 * MiB: metadata is refused sooner, while the limit shown stays the
 * cgroup's; memlimit= alone takes no such share off.
 */
static void test_others(void)
{
	const uint64_t limit = 128ULL << 20;
	uint64_t alone, beside;
	struct data_space ds;

	check_set_context("others");
	if (!space_new(&ds, space_ramdisk(1 << 20), MEM_PAGES))
		return;
	budget_set_env_limit(&ds, limit);
	CHECK_EQ(0, budget_set(&ds, 0, 0));
	alone = meta_room(&ds);
	/* Within the free 8 MiB: nothing changes. */
	budget_set_others(&ds, BUDGET_EXCESS_FREE);
	CHECK_EQ(alone, meta_room(&ds));
	budget_set_others(&ds, BUDGET_EXCESS_FREE + (32ULL << 20));
	beside = meta_room(&ds);
	printf("others: metadata room %llu KiB alone, %llu KiB beside 40 MiB of others\n",
	       (unsigned long long)alone >> 10, (unsigned long long)beside >> 10);
	CHECK(beside + (24ULL << 20) <= alone);
	CHECK_EQ(limit, budget_limit(&ds));
	/* Others holding all of it: the smallest budget, metadata refused. */
	budget_set_others(&ds, limit);
	CHECK_EQ(BUDGET_MIN_PAGES, atomic_load(&ds.budget.mem_pages));
	CHECK_EQ(0, meta_room(&ds));
	/* Gone again: the room is back. */
	budget_set_others(&ds, 0);
	CHECK_EQ(alone, meta_room(&ds));
	/* memlimit= alone is the daemon's own: no share of a cgroup comes off it. */
	budget_set_env_limit(&ds, 0);
	CHECK_EQ(0, budget_set(&ds, 0, limit));
	alone = meta_room(&ds);
	budget_set_others(&ds, limit);
	CHECK_EQ(alone, meta_room(&ds));
	space_destroy(&ds);
}

int main(void)
{
	test_slots_bound();
	test_size_bound();
	test_fallocate_reserves();
	test_limits();
	test_memory_bound();
	test_meta_bound();
	test_others();
	return check_done("budget");
}
