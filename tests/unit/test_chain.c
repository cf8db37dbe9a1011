// SPDX-License-Identifier: MIT
/*
 * The tier chain beyond what every backend must do (test_backend.c): the
 * oldest entries are written back first and stay loadable while they move,
 * incompressible pages go straight to the file, a failed writeback keeps the
 * entry in the RAM tier, a page freed during its writeback leaks nothing, a
 * failing RAM tier sends pages on or fails one load, and a full file with
 * the RAM tier at its bound is ENOSPC with nothing lost.  A spill chain (a
 * far tier, redis in a mount, then the file) sends on what the far tier
 * refuses or fails and loads each tier's pages in one call; with a RAM tier
 * in front, three tiers, writeback fills the far tier and then the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "faulty_backend.h"
#include "tierfs/backend.h"
#include "tierfs/codec.h"

#define NR 2048 /* pages a case stores: writeback moves 256 at a time */

struct rig {
	struct tier_backend *chain;
	struct faulty_backend *ram, *far, *file; /* wrappers around the tiers */
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Page n: half random, half its number (compresses to about half), or random. */
static void make_page(unsigned int n, bool is_random, char *page)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * (n + 1);

	memset(page, 0, PAGE_SIZE);
	if (is_random) {
		for (size_t i = 0; i < PAGE_SIZE; i += 8) {
			uint64_t v = rng_next(&s);

			memcpy(page + i, &v, 8);
		}
		return;
	}
	for (size_t i = 0; i < PAGE_SIZE / 2; i += 8) {
		uint64_t v = rng_next(&s);

		memcpy(page + i, &v, 8);
	}
	for (size_t i = PAGE_SIZE / 2; i < PAGE_SIZE; i += 512)
		memcpy(page + i, &n, sizeof(n));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static char *pages_new(unsigned int nr, void **ptr)
{
	char *p = aligned_alloc(PAGE_SIZE, (size_t)nr * PAGE_SIZE);

	if (!p)
		abort();
	for (unsigned int i = 0; i < nr; i++)
		ptr[i] = p + (size_t)i * PAGE_SIZE;
	return p;
}

/* Backend name with nr_pages slots, wrapped; a RAM tier in a chain refuses raw pages. */
static struct faulty_backend *tier_new(const char *name, uint64_t nr_pages, bool is_raw_refused,
				       bool is_sync)
{
	char path[] = "/var/tmp/tierfs-test-chain.XXXXXX";
	struct backend_config cfg = {
		.capacity_bytes = nr_pages * PAGE_SIZE,
		.codec = codec_table[0],
		.codec_level = codec_table[0]->default_level,
		.is_raw_refused = is_raw_refused,
		.path = path,
		.is_plaintext = false,
	};
	struct tier_backend *b;
	struct faulty_backend *f;
	int fd = mkstemp(path);

	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	if (!CHECK_EQ(0, backend_find(name)->create(&cfg, &b)))
		abort();
	if (!CHECK_EQ(0, faulty_new(b, is_sync, &f)))
		abort();
	return f;
}

static bool rig_open(const char *upper_name, uint64_t file_pages, uint64_t pool_max, struct rig *r)
{
	r->ram = tier_new(upper_name, NR, true, true);
	r->far = NULL;
	r->file = tier_new("file", file_pages, false, false);
	return CHECK_EQ(0,
			chain_new(faulty_base(r->ram), faulty_base(r->file), pool_max, &r->chain));
}

/*
 * A far tier of far_pages (a ramdisk that says it waits for I/O, as redis
 * does) spilling to a file of file_pages; with a zpool in front when
 * pool_max is not 0.
 */
static bool rig_open_spill(uint64_t far_pages, uint64_t file_pages, uint64_t pool_max,
			   struct rig *r)
{
	struct tier_backend *spill;

	r->ram = NULL;
	r->far = tier_new("ramdisk", far_pages, false, false);
	r->file = tier_new("file", file_pages, false, false);
	if (!CHECK_EQ(0, chain_new_spill(faulty_base(r->far), faulty_base(r->file), &spill)))
		return false;
	if (!pool_max) {
		r->chain = spill;
		return true;
	}
	r->ram = tier_new("zpool", NR, true, true);
	return CHECK_EQ(0, chain_new(faulty_base(r->ram), spill, pool_max, &r->chain));
}

static void tiers_of(struct rig *r, struct backend_tier_stats *t)
{
	CHECK_EQ(r->ram && r->far ? 3u : 2u,
		 r->chain->ops->get_tiers(r->chain, t, BACKEND_MAX_TIERS));
}

/* Poll until the RAM tier holds at most max_stored pages (or 5 s pass). */
static bool wait_ram_stored(struct rig *r, uint64_t max_stored)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];

	for (int i = 0; i < 500; i++) {
		r->chain->ops->get_tiers(r->chain, t, BACKEND_MAX_TIERS);
		if (t[0].st.stored_pages <= max_stored)
			return true;
		usleep(10000);
	}
	return false;
}

static void check_loads(struct rig *r, const uint64_t *slots, const char *src, unsigned int nr)
{
	void **ptr = calloc(nr, sizeof(*ptr));
	char *dst = pages_new(nr, ptr);

	memset(dst, 0x5a, (size_t)nr * PAGE_SIZE);
	CHECK_EQ(0, r->chain->ops->load(r->chain, slots, ptr, nr));
	CHECK_MEM(src, dst, (size_t)nr * PAGE_SIZE);
	free(dst);
	free(ptr);
}

/*
 * The chain's locate orders the pages as the tiers lay them out: the RAM
 * tier's first, then the far tier's, then the file's in the order of the
 * file's own slots, and gives each slot a key of its own.  Which tier holds
 * a page, and at which of its slots, is seen by loading it alone.
 */
static void check_locate(struct rig *r, const uint64_t *slots, unsigned int nr)
{
	struct placed {
		uint64_t key, tier, tier_slot;
	} *p = calloc(nr, sizeof(*p));
	void *page = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	unsigned int nr_bad = 0;

	for (unsigned int i = 0; i < nr; i++) {
		unsigned int far_calls = r->far ? faulty_nr_calls(r->far, FAULTY_LOAD) : 0;
		unsigned int file_calls = faulty_nr_calls(r->file, FAULTY_LOAD);

		p[i].key = r->chain->ops->locate(r->chain, slots[i]);
		CHECK_EQ(0, r->chain->ops->load(r->chain, &slots[i], &page, 1));
		if (faulty_nr_calls(r->file, FAULTY_LOAD) != file_calls) {
			p[i].tier = 2;
			faulty_last_load(r->file, &p[i].tier_slot);
		} else if (r->far && faulty_nr_calls(r->far, FAULTY_LOAD) != far_calls) {
			p[i].tier = 1;
		}
	}
	qsort(p, nr, sizeof(*p), cmp_u64); /* by key, the first member */
	for (unsigned int i = 1; i < nr; i++) {
		nr_bad += p[i].key == p[i - 1].key || p[i].tier < p[i - 1].tier;
		nr_bad += p[i].tier == 2 && p[i - 1].tier == 2 &&
			  p[i].tier_slot <= p[i - 1].tier_slot;
	}
	CHECK_EQ(0u, nr_bad);
	CHECK(p[nr - 1].tier == 2); /* the file holds some */
	free(page);
	free(p);
}

static void check_empty(struct rig *r)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];

	tiers_of(r, t);
	CHECK_EQ((uint64_t)0, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)0, t[1].st.stored_pages);
	if (r->ram && r->far)
		CHECK_EQ((uint64_t)0, t[2].st.stored_pages);
}

/* Free the slots, check that both tiers are empty, and destroy the chain. */
static void rig_close(struct rig *r, const uint64_t *slots, unsigned int nr)
{
	r->chain->ops->free(r->chain, slots, nr);
	check_empty(r);
	r->chain->ops->destroy(r->chain);
}

/* Lowering the bound writes back the oldest entries; every page still loads. */
static void test_writeback_order(const char *upper)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	static void *ptr[NR];
	static uint64_t slots[NR];
	char *src = pages_new(NR, ptr);
	struct rig r;

	check_set_context("%s+file writeback order", upper);
	if (!rig_open(upper, NR, 1ULL << 30, &r))
		goto out;
	for (unsigned int i = 0; i < NR; i++)
		make_page(i, false, ptr[i]);
	for (unsigned int i = 0; i < NR; i += 64)
		CHECK_EQ(64, r.chain->ops->store(r.chain, ptr + i, 64, slots + i));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)NR, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)0, t[1].st.stored_pages);
	CHECK(r.chain->ops->is_slot_sync(r.chain, slots[0]));
	/* Half the pool: writeback stops at 90 % of that. */
	r.chain->ops->set_pool_max(r.chain, t[0].st.pool_bytes / 2);
	CHECK(wait_ram_stored(&r, NR / 2));
	usleep(100000); /* it would go on now if it did not stop */
	tiers_of(&r, t);
	CHECK(t[0].st.pool_bytes <= t[0].pool_max_bytes);
	CHECK_EQ(t[1].st.stored_pages, t[0].nr_writebacks);
	CHECK_EQ((uint64_t)NR, t[0].st.stored_pages + t[1].st.stored_pages);
	CHECK_EQ((uint64_t)0, t[0].nr_writeback_errors);
	/* Oldest first: the first stored went, the last stored stayed. */
	CHECK(!r.chain->ops->is_slot_sync(r.chain, slots[0]));
	CHECK(r.chain->ops->is_slot_sync(r.chain, slots[NR - 1]));
	check_locate(&r, slots, NR);
	check_loads(&r, slots, src, NR);
	rig_close(&r, slots, NR);
out:
	free(src);
	check_clear_context();
}

/* Pages that do not compress never take RAM: the file takes them raw. */
static void test_huge(void)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	void *ptr[64];
	char *src = pages_new(64, ptr);
	uint64_t slots[64];
	struct rig r;

	check_set_context("zpool+file huge pages");
	if (!rig_open("zpool", NR, 1ULL << 30, &r))
		goto out;
	for (unsigned int i = 0; i < 64; i++)
		make_page(i, i % 2, ptr[i]);
	CHECK_EQ(64, r.chain->ops->store(r.chain, ptr, 64, slots));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)32, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)32, t[1].st.stored_pages);
	CHECK_EQ((uint64_t)32, t[0].nr_rejects_huge);
	CHECK_EQ((uint64_t)0, t[0].nr_rejects_full);
	CHECK(!r.chain->ops->is_slot_sync(r.chain, slots[1]));
	CHECK(r.chain->ops->is_slot_sync(r.chain, slots[0]));
	check_loads(&r, slots, src, 64);
	rig_close(&r, slots, 64);
out:
	free(src);
	check_clear_context();
}

/* Store pages 0..nr-1, compressible, in one call: all go to the RAM tier. */
static void rig_fill(struct rig *r, void **ptr, uint64_t *slots, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		make_page(i, false, ptr[i]);
	CHECK_EQ((int)nr, r->chain->ops->store(r->chain, ptr, nr, slots));
}

/* Lower the RAM tier's bound to a share of its pool: writeback starts. */
static void rig_shrink(struct rig *r, unsigned int divisor)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];

	tiers_of(r, t);
	r->chain->ops->set_pool_max(r->chain, t[0].st.pool_bytes / divisor);
}

/*
 * One store of a whole piece into an empty RAM tier far smaller than the
 * piece: the tier stops at its bound and the file takes the rest.  Checked
 * only before each piece, the bound let the whole piece in.  Then the
 * tier, refused, makes room.
 */
static void test_bound(const char *upper, uint64_t pool_max)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	static void *ptr[256];
	static uint64_t slots[256];
	char *src = pages_new(256, ptr);
	struct rig r;

	check_set_context("%s+file bound of %llu KiB", upper, (unsigned long long)pool_max >> 10);
	if (!rig_open(upper, NR, pool_max, &r))
		goto out;
	rig_fill(&r, ptr, slots, 256);
	tiers_of(&r, t);
	CHECK(t[0].st.pool_bytes <= pool_max);
	CHECK(t[0].nr_rejects_full > 0);
	/*
	 * Refused, the tier has a batch written back, even below 90 % of a
	 * small bound; the tiers add up once it is done.
	 */
	for (int i = 0; i < 500 && !t[0].nr_writebacks; i++) {
		usleep(10000);
		tiers_of(&r, t);
	}
	CHECK(t[0].nr_writebacks > 0);
	CHECK(t[0].st.pool_bytes <= pool_max);
	CHECK_EQ((uint64_t)256, t[0].st.stored_pages + t[1].st.stored_pages);
	check_loads(&r, slots, src, 256);
	rig_close(&r, slots, 256);
out:
	free(src);
	check_clear_context();
}

/* A file that fails every write: the entries stay in RAM and load; then they move. */
static void test_failed_writeback(void)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	void *ptr[256];
	char *src = pages_new(256, ptr);
	uint64_t slots[256];
	struct rig r;

	check_set_context("zpool+file failed writeback");
	if (!rig_open("zpool", NR, 1ULL << 30, &r))
		goto out;
	rig_fill(&r, ptr, slots, 256);
	CHECK_EQ(0, faulty_fail(r.file, FAULTY_STORE, 1, -EIO, true));
	rig_shrink(&r, 4);
	CHECK_EQ(0, faulty_wait_calls(r.file, FAULTY_STORE, 2, 5000));
	tiers_of(&r, t);
	CHECK(t[0].nr_writeback_errors > 0);
	CHECK_EQ((uint64_t)256, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)0, t[1].st.stored_pages);
	CHECK(r.chain->ops->is_slot_sync(r.chain, slots[0]));
	check_loads(&r, slots, src, 256);
	/* The file heals: the next sweep moves them. */
	faulty_clear(r.file, FAULTY_STORE);
	CHECK(wait_ram_stored(&r, 128));
	tiers_of(&r, t);
	CHECK(t[1].st.stored_pages > 0);
	CHECK_EQ((uint64_t)256, t[0].st.stored_pages + t[1].st.stored_pages);
	check_loads(&r, slots, src, 256);
	rig_close(&r, slots, 256);
out:
	free(src);
	check_clear_context();
}

/*
 * Writeback held in the file's store: the pages it carries still load from
 * RAM; freed then, both copies go once the store returns.
 */
static void test_free_during_writeback(void)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	void *ptr[256];
	char *src = pages_new(256, ptr);
	uint64_t slots[256];
	struct rig r;

	check_set_context("zpool+file free during writeback");
	if (!rig_open("zpool", NR, 1ULL << 30, &r))
		goto out;
	rig_fill(&r, ptr, slots, 256);
	faulty_gate_close(r.file, FAULTY_STORE);
	rig_shrink(&r, 4);
	CHECK_EQ(0, faulty_wait_calls(r.file, FAULTY_STORE, 1, 5000));
	check_loads(&r, slots, src, 256);
	r.chain->ops->free(r.chain, slots, 256);
	faulty_gate_open(r.file, FAULTY_STORE);
	CHECK(wait_ram_stored(&r, 0));
	for (int i = 0; i < 500; i++) {
		tiers_of(&r, t);
		if (!t[1].st.stored_pages)
			break;
		usleep(10000);
	}
	check_empty(&r);
	/* Every chain slot came back: the whole space stores again. */
	for (unsigned int i = 0; i < 256; i++)
		make_page(i, true, ptr[i]);
	r.chain->ops->set_pool_max(r.chain, 0);
	CHECK_EQ(256, r.chain->ops->store(r.chain, ptr, 256, slots));
	check_loads(&r, slots, src, 256);
	rig_close(&r, slots, 256);
out:
	free(src);
	check_clear_context();
}

/*
 * The RAM tier failing: a store it refuses goes to the file, a load it
 * fails is that load's EIO, and the page is there once it heals.
 */
static void test_ram_faults(void)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	void *ptr[64];
	char *src = pages_new(64, ptr);
	uint64_t slots[64];
	struct rig r;

	check_set_context("zpool+file RAM tier faults");
	if (!rig_open("zpool", NR, 1ULL << 30, &r))
		goto out;
	CHECK_EQ(0, faulty_fail(r.ram, FAULTY_STORE, 1, -EIO, false));
	for (unsigned int i = 0; i < 64; i++)
		make_page(i, false, ptr[i]);
	CHECK_EQ(32, r.chain->ops->store(r.chain, ptr, 32, slots));
	CHECK_EQ(32, r.chain->ops->store(r.chain, ptr + 32, 32, slots + 32));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)32, t[1].st.stored_pages);
	CHECK_EQ((uint64_t)32, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)32, t[0].nr_rejects_error);
	CHECK(!r.chain->ops->is_slot_sync(r.chain, slots[0]));
	CHECK(r.chain->ops->is_slot_sync(r.chain, slots[32]));
	CHECK_EQ(0, faulty_fail(r.ram, FAULTY_LOAD, 1, -EIO, false));
	{
		void *one = ptr[0];
		char *dst = pages_new(1, &one);

		CHECK_EQ(-EIO, r.chain->ops->load(r.chain, &slots[32], &one, 1));
		CHECK_EQ(0, r.chain->ops->load(r.chain, &slots[32], &one, 1));
		CHECK_MEM(src + 32 * PAGE_SIZE, dst, PAGE_SIZE);
		free(dst);
	}
	check_loads(&r, slots, src, 64);
	rig_close(&r, slots, 64);
out:
	free(src);
	check_clear_context();
}

/* The file full and the RAM tier at its bound: a prefix, then ENOSPC, nothing lost. */
static void test_full(void)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	void *ptr[96];
	char *src = pages_new(96, ptr);
	uint64_t slots[96];
	struct rig r;

	check_set_context("zpool+file full");
	if (!rig_open("zpool", 32, 0, &r))
		goto out;
	for (unsigned int i = 0; i < 96; i++)
		make_page(i, false, ptr[i]);
	CHECK_EQ(32, r.chain->ops->store(r.chain, ptr, 48, slots));
	CHECK_EQ(-ENOSPC, r.chain->ops->store(r.chain, ptr + 32, 1, slots + 32));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)0, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)32, t[1].st.stored_pages);
	CHECK(t[0].nr_rejects_full >= 32);
	check_loads(&r, slots, src, 32);
	/* A bound again: the RAM tier takes what the file cannot. */
	r.chain->ops->set_pool_max(r.chain, 1ULL << 30);
	CHECK_EQ(64, r.chain->ops->store(r.chain, ptr + 32, 64, slots + 32));
	check_loads(&r, slots, src, 96);
	rig_close(&r, slots, 96);
out:
	free(src);
	check_clear_context();
}

/*
 * A spill chain: the far tier takes what fits, the file the rest; a load
 * takes each tier's pages in one call.  Once the far tier has turned a store
 * away, stores go to the file first: for a second when it was full, for a
 * second and then two when it failed twice running; then it takes them again.
 */
static void test_spill(void)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	void *ptr[128];
	char *src = pages_new(128, ptr);
	uint64_t slots[128];
	struct rig r;

	check_set_context("far+file spill");
	if (!rig_open_spill(48, NR, 0, &r))
		goto out;
	for (unsigned int i = 0; i < 128; i++)
		make_page(i, i % 2, ptr[i]);
	CHECK_EQ(64, r.chain->ops->store(r.chain, ptr, 64, slots));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)48, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)16, t[1].st.stored_pages);
	CHECK_EQ((uint64_t)16, t[0].nr_rejects_full);
	CHECK_EQ((uint64_t)0, t[0].pool_max_bytes);
	CHECK(!r.chain->ops->is_slot_sync(r.chain, slots[0]));
	/* Mixed tiers in one load: one call to each, of all its pages. */
	check_loads(&r, slots, src, 64);
	CHECK_EQ(1u, faulty_nr_calls(r.far, FAULTY_LOAD));
	CHECK_EQ(48u, faulty_nr_last(r.far, FAULTY_LOAD));
	CHECK_EQ(1u, faulty_nr_calls(r.file, FAULTY_LOAD));
	CHECK_EQ(16u, faulty_nr_last(r.file, FAULTY_LOAD));
	/* Room again, but within the hold the far tier is not asked. */
	r.chain->ops->free(r.chain, slots, 16);
	CHECK_EQ(16, r.chain->ops->store(r.chain, ptr, 16, slots));
	CHECK_EQ(1u, faulty_nr_calls(r.far, FAULTY_STORE));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)32, t[0].nr_rejects_full);
	/* After it, asked again; it fails: the file takes them, and the next store too. */
	usleep(1100 * 1000);
	CHECK_EQ(0, faulty_fail(r.far, FAULTY_STORE, 1, -EIO, false));
	CHECK_EQ(16, r.chain->ops->store(r.chain, ptr + 64, 16, slots + 64));
	CHECK_EQ(16, r.chain->ops->store(r.chain, ptr + 80, 16, slots + 80));
	CHECK_EQ(2u, faulty_nr_calls(r.far, FAULTY_STORE));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)32, t[0].nr_rejects_error);
	/* It fails again after that second: held off for two this time. */
	usleep(1100 * 1000);
	CHECK_EQ(0, faulty_fail(r.far, FAULTY_STORE, 1, -EIO, false));
	CHECK_EQ(16, r.chain->ops->store(r.chain, ptr + 96, 16, slots + 96));
	CHECK_EQ(3u, faulty_nr_calls(r.far, FAULTY_STORE));
	usleep(1100 * 1000);
	CHECK_EQ(16, r.chain->ops->store(r.chain, ptr + 112, 16, slots + 112));
	CHECK_EQ(3u, faulty_nr_calls(r.far, FAULTY_STORE));
	usleep(1000 * 1000);
	r.chain->ops->free(r.chain, slots + 112, 16);
	CHECK_EQ(16, r.chain->ops->store(r.chain, ptr + 112, 16, slots + 112));
	CHECK_EQ(4u, faulty_nr_calls(r.far, FAULTY_STORE));
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)48, t[0].st.stored_pages);
	CHECK_EQ((uint64_t)80, t[1].st.stored_pages);
	CHECK_EQ((uint64_t)64, t[0].nr_rejects_error);
	/* A far tier that fails a load: that load's EIO, the next one whole. */
	CHECK_EQ(0, faulty_fail(r.far, FAULTY_LOAD, 1, -EIO, false));
	CHECK_EQ(-EIO, r.chain->ops->load(r.chain, slots + 112, ptr, 16));
	check_loads(&r, slots, src, 128);
	rig_close(&r, slots, 128);
out:
	free(src);
	check_clear_context();
}

/* Three tiers: writeback from the RAM tier fills the far tier, then the file. */
static void test_three(void)
{
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	static void *ptr[NR];
	static uint64_t slots[NR];
	char *src = pages_new(NR, ptr);
	struct rig r;

	check_set_context("zpool+far+file");
	if (!rig_open_spill(NR / 4, NR, 1ULL << 30, &r))
		goto out;
	rig_fill(&r, ptr, slots, NR);
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)NR, t[0].st.stored_pages);
	rig_shrink(&r, 4);
	CHECK(wait_ram_stored(&r, NR / 4));
	usleep(100000);
	tiers_of(&r, t);
	CHECK_EQ((uint64_t)NR, t[0].st.stored_pages + t[1].st.stored_pages + t[2].st.stored_pages);
	CHECK_EQ(t[0].nr_writebacks, t[1].nr_writebacks);
	CHECK_EQ(t[0].nr_writebacks, t[1].st.stored_pages + t[2].st.stored_pages);
	CHECK_EQ((uint64_t)0, t[0].nr_writeback_errors);
	CHECK_EQ((uint64_t)NR / 4, t[1].st.stored_pages);
	CHECK_EQ(t[1].nr_rejects_full, t[2].st.stored_pages);
	CHECK(t[2].st.stored_pages > 0);
	CHECK(!r.chain->ops->is_slot_sync(r.chain, slots[0]));
	CHECK(r.chain->ops->is_slot_sync(r.chain, slots[NR - 1]));
	check_locate(&r, slots, NR);
	/*
	 * Free 64 of the file's pages, store them again and write them back:
	 * the far chain gives its freed slots back last-freed first, the file
	 * takes slots after its cursor, so the far chain's slots now run
	 * against the file's, and a key that skips the far chain's own
	 * locate sorts them wrongly.
	 */
	for (unsigned int k = NR / 4 + 64; k < NR / 4 + 192; k += 2)
		r.chain->ops->free(r.chain, &slots[k], 1);
	for (unsigned int k = NR / 4 + 64; k < NR / 4 + 192; k += 2)
		CHECK_EQ(1, r.chain->ops->store(r.chain, &ptr[k], 1, &slots[k]));
	rig_shrink(&r, 4);
	CHECK(wait_ram_stored(&r, (NR / 4 + 64) / 4));
	usleep(100000); /* the batch that brought it there is done */
	check_locate(&r, slots, NR);
	check_loads(&r, slots, src, NR);
	rig_close(&r, slots, NR);
out:
	free(src);
	check_clear_context();
}

int main(void)
{
	if (!backend_find("file")) {
		printf("skip: the file backend is not built in\n");
		return 77;
	}
	test_writeback_order("zpool");
	test_writeback_order("ramdisk");
	test_bound("zpool", 200 << 10);
	test_bound("ramdisk", 600 << 10);
	test_huge();
	test_failed_writeback();
	test_free_during_writeback();
	test_ram_faults();
	test_full();
	test_spill();
	test_three();
	return check_done("chain");
}
