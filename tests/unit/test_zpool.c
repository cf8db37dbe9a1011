// SPDX-License-Identifier: MIT
/*
 * Unit tests of the codecs and the zpool backend: byte-exact round trips,
 * raw storage, capacity, memory given back, compaction, allocation
 * failure, corrupt data, one shard, and threads sharing a pool.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tierfs/backend.h"
#include "tierfs/codec.h"
#include "tierfs/pagemap.h"
#include "check.h"

extern const struct tier_backend_ops tier_backend_zpool;
extern const struct codec codec_lz4;

/* Test-only hook in backends/zpool.c. */
int zpool_test_corrupt(struct tier_backend *b, uint64_t slot);

/* Linked with -Wl,--wrap=malloc: fail every malloc while this is set. */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static atomic_bool fail_malloc;

void *__wrap_malloc(size_t size)
{
	if (atomic_load(&fail_malloc))
		return NULL;
	return __real_malloc(size);
}

enum data_kind { DATA_SPARSE, DATA_TEXT, DATA_RANDOM, NR_DATA_KINDS };
static const char *const data_kind_names[] = { "sparse", "text", "random" };

static uint64_t rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/*
 * A page of the given kind, the same for the same seed: zeros with a few
 * random bytes, words of a small vocabulary, or random bytes.
 */
static void fill_page(void *page, enum data_kind kind, uint64_t seed)
{
	static const char *const words[] = { "the ",   "page ",	 "swap ", "tier ",  "cold ",
					     "evict ", "inode ", "lru ",  "batch ", "slot\n" };
	uint64_t rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	unsigned char *p = page;
	size_t off = 0;

	switch (kind) {
	case DATA_SPARSE:
		memset(p, 0, PAGE_SIZE);
		for (int i = 0; i < 24; i++)
			p[rng_next(&rng) % PAGE_SIZE] = (unsigned char)(rng_next(&rng) | 1);
		break;
	case DATA_TEXT:
		while (off < PAGE_SIZE) {
			const char *w = words[rng_next(&rng) % 10];
			size_t len = strlen(w);

			if (len > PAGE_SIZE - off)
				len = PAGE_SIZE - off;
			memcpy(p + off, w, len);
			off += len;
		}
		break;
	default:
		for (off = 0; off < PAGE_SIZE; off += 8) {
			uint64_t v = rng_next(&rng);

			memcpy(p + off, &v, 8);
		}
		break;
	}
}

static struct tier_backend *pool_new(const struct codec *codec, int level, uint64_t pages,
				     unsigned int nr_shards)
{
	struct backend_config cfg = {
		.capacity_bytes = pages * PAGE_SIZE,
		.codec = codec,
		.codec_level = level,
		.nr_shards = nr_shards,
	};
	struct tier_backend *b = NULL;

	if (!CHECK_EQ(0, tier_backend_zpool.create(&cfg, &b)))
		return NULL;
	return b;
}

static struct backend_stats pool_stats(struct tier_backend *b)
{
	struct backend_stats st;

	b->ops->get_stats(b, &st);
	return st;
}

static const char *const codec_specs[] = {
	"lz4:1", "lz4:4", "lz4:16", "zstd:1", "zstd:3", "zstd:19",
};
#define NR_CODEC_SPECS (sizeof(codec_specs) / sizeof(codec_specs[0]))

/* The codec and level of spec, false when the codec is not built in. */
static bool codec_case(const char *spec, const struct codec **codec, int *level)
{
	const char *why = codec_why_left_out(spec);

	if (why) {
		printf("# skip %s: %s\n", spec, why);
		return false;
	}
	return CHECK_EQ(0, codec_parse(spec, codec, level));
}

/* zstd where it is built in, so that both codecs run through the pool; else lz4. */
static const struct codec *second_codec(void)
{
	return codec_table[1] ? codec_table[1] : codec_table[0];
}

/* The codec contract on its own: lengths, -ENOSPC, -EIO. */
static void test_codecs(void)
{
	static unsigned char page[PAGE_SIZE], out[PAGE_SIZE], blob[2 * PAGE_SIZE];

	for (size_t i = 0; i < NR_CODEC_SPECS; i++) {
		const struct codec *codec;
		struct codec_ctx *ctx;
		int level;

		if (!codec_case(codec_specs[i], &codec, &level))
			continue;
		check_set_context("%s", codec_specs[i]);
		CHECK(codec->min_level <= codec->default_level);
		CHECK(codec->default_level <= codec->max_level);
		if (!CHECK_EQ(0, codec->ctx_new(level, &ctx)))
			continue;
		for (int kind = 0; kind < NR_DATA_KINDS; kind++) {
			int len;

			check_set_context("%s %s", codec_specs[i], data_kind_names[kind]);
			fill_page(page, kind, 42 + kind);
			len = codec->compress(ctx, page, PAGE_SIZE, blob, sizeof(blob));
			if (!CHECK(len > 0))
				continue;
			/* What zpool keeps compressed. */
			if (kind != DATA_RANDOM)
				CHECK(len <= (int)PAGE_SIZE * 3 / 4);
			memset(out, 0xa5, sizeof(out));
			CHECK_EQ(0, codec->decompress(ctx, blob, (size_t)len, out, PAGE_SIZE));
			CHECK_MEM(page, out, PAGE_SIZE);
			/* The wrong length, or a truncated blob, is corrupt data. */
			CHECK_EQ(-EIO,
				 codec->decompress(ctx, blob, (size_t)len, out, PAGE_SIZE / 2));
			CHECK_EQ(-EIO,
				 codec->decompress(ctx, blob, (size_t)len / 2, out, PAGE_SIZE));
			/* Too small a destination is "did not fit". */
			CHECK_EQ(-ENOSPC, codec->compress(ctx, page, PAGE_SIZE, blob, 8));
		}
		fill_page(page, DATA_RANDOM, 7);
		CHECK_EQ(-ENOSPC, codec->compress(ctx, page, PAGE_SIZE, blob, PAGE_SIZE * 3 / 4));
		codec->ctx_free(ctx);
	}
	check_clear_context();
}

/* Every codec and level, the three kinds mixed in one batch, byte-exact. */
static void test_round_trip(void)
{
	enum { NR = 60 };
	static unsigned char pages[NR][PAGE_SIZE], out[NR][PAGE_SIZE];
	void *in_ptrs[NR], *out_ptrs[NR];
	uint64_t slots[NR];

	for (int i = 0; i < NR; i++) {
		fill_page(pages[i], i % NR_DATA_KINDS, 1000 + i);
		in_ptrs[i] = pages[i];
		out_ptrs[i] = out[i];
	}
	for (size_t c = 0; c < NR_CODEC_SPECS; c++) {
		const struct codec *codec;
		struct tier_backend *b;
		struct backend_stats st;
		int nr_bad = 0, level;

		if (!codec_case(codec_specs[c], &codec, &level))
			continue;
		check_set_context("%s", codec_specs[c]);
		b = pool_new(codec, level, 1024, 0);
		if (!b)
			continue;
		CHECK_EQ(NR, b->ops->store(b, in_ptrs, NR, slots));
		memset(out, 0, sizeof(out));
		CHECK_EQ(0, b->ops->load(b, slots, out_ptrs, NR));
		for (int i = 0; i < NR; i++)
			nr_bad += memcmp(pages[i], out[i], PAGE_SIZE) != 0;
		CHECK_EQ(0, nr_bad);
		st = pool_stats(b);
		CHECK_EQ(NR, st.stored_pages);
		CHECK_EQ(NR * PAGE_SIZE, st.stored_bytes);
		CHECK_EQ(NR, st.nr_stores);
		CHECK_EQ(NR, st.nr_loads);
		CHECK_EQ(NR / 3, st.nr_reject_raw);
		CHECK_EQ(1024 * PAGE_SIZE, st.capacity_bytes);
		/* The raw third takes a page each, the rest less. */
		CHECK(st.pool_bytes < st.stored_bytes * 9 / 10);
		CHECK(st.pool_bytes >= NR / 3 * PAGE_SIZE);
		b->ops->free(b, slots, NR);
		st = pool_stats(b);
		CHECK_EQ(0, st.stored_pages);
		CHECK_EQ(0, st.pool_bytes);
		CHECK_EQ(NR, st.nr_frees);
		b->ops->destroy(b);
	}
	check_clear_context();
}

/* Stores past the capacity store a prefix, then fail; nothing is lost. */
static void test_capacity(void)
{
	enum { CAP = 10, NR = 16 };
	static unsigned char pages[NR][PAGE_SIZE], out[PAGE_SIZE];
	void *ptrs[NR];
	uint64_t slots[NR], slot;
	struct backend_stats st;
	struct tier_backend *b = pool_new(&codec_lz4, 1, CAP, 3);
	int nr_bad = 0;

	if (!b)
		return;
	for (int i = 0; i < NR; i++) {
		fill_page(pages[i], i % NR_DATA_KINDS, 2000 + i);
		ptrs[i] = pages[i];
	}
	CHECK_EQ(CAP - 4, b->ops->store(b, ptrs, CAP - 4, slots));
	CHECK_EQ(4, b->ops->store(b, ptrs + CAP - 4, NR - (CAP - 4), slots + CAP - 4));
	CHECK_EQ(-ENOSPC, b->ops->store(b, ptrs + CAP, 1, &slot));
	st = pool_stats(b);
	CHECK_EQ(CAP, st.stored_pages);
	CHECK_EQ(2, st.nr_reject_full);
	CHECK_EQ(0, st.nr_store_errors);
	for (int i = 0; i < CAP; i++) {
		void *p = out;

		for (int j = 0; j < i; j++)
			CHECK(slots[i] != slots[j]);
		CHECK_EQ(0, b->ops->load(b, &slots[i], &p, 1));
		nr_bad += memcmp(pages[i], out, PAGE_SIZE) != 0;
	}
	CHECK_EQ(0, nr_bad);
	/* A freed slot makes room for exactly one more. */
	b->ops->free(b, &slots[3], 1);
	CHECK_EQ(1, b->ops->store(b, ptrs + CAP, 2, &slots[3]));
	{
		void *p = out;

		CHECK_EQ(0, b->ops->load(b, &slots[3], &p, 1));
		CHECK_MEM(pages[CAP], out, PAGE_SIZE);
	}
	b->ops->free(b, slots, CAP);
	st = pool_stats(b);
	CHECK_EQ(0, st.stored_pages);
	CHECK_EQ(0, st.pool_bytes);
	b->ops->destroy(b);
}

/*
 * Free every other slot of many small objects: without compaction each
 * zspage would keep half its objects and all its memory.
 */
static void test_compaction(void)
{
	enum { NR = 4096 };
	static unsigned char page[PAGE_SIZE], out[PAGE_SIZE];
	static uint64_t slots[NR];
	struct backend_stats full, half;
	struct tier_backend *b = pool_new(&codec_lz4, 1, NR, 1);
	unsigned int nr_bad = 0;

	if (!b)
		return;
	for (int i = 0; i < NR; i++) {
		void *p = page;

		fill_page(page, DATA_SPARSE, 3000 + i);
		if (!CHECK_EQ(1, b->ops->store(b, &p, 1, &slots[i])))
			goto destroy;
	}
	full = pool_stats(b);
	for (int i = 0; i < NR; i += 2)
		b->ops->free(b, &slots[i], 1);
	half = pool_stats(b);
	printf("# compaction: %d sparse pages in %" PRIu64 " bytes, half of them in %" PRIu64 "\n",
	       NR, full.pool_bytes, half.pool_bytes);
	CHECK_EQ(NR / 2, half.stored_pages);
	CHECK(half.pool_bytes < full.pool_bytes * 6 / 10);
	for (int i = 1; i < NR; i += 2) {
		void *p = out;

		fill_page(page, DATA_SPARSE, 3000 + i);
		if (b->ops->load(b, &slots[i], &p, 1) || memcmp(page, out, PAGE_SIZE))
			nr_bad++;
	}
	CHECK_EQ(0, nr_bad);
	for (int i = 1; i < NR; i += 2)
		b->ops->free(b, &slots[i], 1);
	half = pool_stats(b);
	CHECK_EQ(0, half.stored_pages);
	CHECK_EQ(0, half.pool_bytes);
destroy:
	b->ops->destroy(b);
}

/* All slots in one shard: numbers 0 to capacity - 1, all usable. */
static void test_one_shard(void)
{
	enum { CAP = 1000 };
	static unsigned char page[PAGE_SIZE], out[PAGE_SIZE];
	static uint64_t slots[CAP];
	struct tier_backend *b = pool_new(second_codec(), second_codec()->default_level, CAP, 1);
	unsigned int nr_bad = 0, nr_out_of_range = 0;
	uint64_t slot;
	void *p = page;

	if (!b)
		return;
	for (int i = 0; i < CAP; i++) {
		fill_page(page, i % NR_DATA_KINDS, 4000 + i);
		if (!CHECK_EQ(1, b->ops->store(b, &p, 1, &slots[i])))
			goto destroy;
		nr_out_of_range += slots[i] >= CAP;
	}
	CHECK_EQ(0, nr_out_of_range);
	CHECK_EQ(-ENOSPC, b->ops->store(b, &p, 1, &slot));
	for (int i = 0; i < CAP; i++) {
		void *o = out;

		fill_page(page, i % NR_DATA_KINDS, 4000 + i);
		if (b->ops->load(b, &slots[i], &o, 1) || memcmp(page, out, PAGE_SIZE))
			nr_bad++;
	}
	CHECK_EQ(0, nr_bad);
	b->ops->free(b, slots, CAP);
	CHECK_EQ(0, pool_stats(b).pool_bytes);
destroy:
	b->ops->destroy(b);
}

static void test_bad_slots_and_corruption(void)
{
	static unsigned char page[PAGE_SIZE], out[PAGE_SIZE];
	void *p = page, *o = out;
	uint64_t slot, bogus = 1ULL << 40;
	struct backend_stats st;

	for (const struct codec *const *c = codec_table; *c; c++) {
		struct tier_backend *b = pool_new(*c, 0, 64, 0);

		if (!b)
			return;
		check_set_context("%s", (*c)->name);
		CHECK_EQ(-EIO, b->ops->load(b, &bogus, &o, 1));
		fill_page(page, DATA_TEXT, 5000);
		CHECK_EQ(1, b->ops->store(b, &p, 1, &slot));
		CHECK_EQ(0, zpool_test_corrupt(b, slot));
		CHECK_EQ(-EIO, b->ops->load(b, &slot, &o, 1));
		st = pool_stats(b);
		CHECK_EQ(2, st.nr_load_errors);
		b->ops->free(b, &slot, 1);
		CHECK_EQ(0, pool_stats(b).pool_bytes);
		b->ops->destroy(b);
	}
	check_clear_context();
}

/* Allocation failure: -ENOMEM, counted, nothing stored, nothing lost. */
static void test_enomem(void)
{
	static unsigned char page[PAGE_SIZE], out[PAGE_SIZE];
	void *p = page, *o = out;
	uint64_t slots[2];
	struct backend_stats st;
	struct tier_backend *b = pool_new(&codec_lz4, 1, 64, 0);

	if (!b)
		return;
	/* No thread context yet. */
	atomic_store(&fail_malloc, true);
	CHECK_EQ(-ENOMEM, b->ops->store(b, &p, 1, slots));
	atomic_store(&fail_malloc, false);
	fill_page(page, DATA_TEXT, 6000);
	CHECK_EQ(1, b->ops->store(b, &p, 1, &slots[0]));
	/* A raw page needs a new zspage. */
	fill_page(page, DATA_RANDOM, 6001);
	atomic_store(&fail_malloc, true);
	CHECK_EQ(-ENOMEM, b->ops->store(b, &p, 1, &slots[1]));
	atomic_store(&fail_malloc, false);
	st = pool_stats(b);
	CHECK_EQ(1, st.stored_pages);
	CHECK_EQ(2, st.nr_reject_alloc);
	fill_page(page, DATA_TEXT, 6000);
	CHECK_EQ(0, b->ops->load(b, &slots[0], &o, 1));
	CHECK_MEM(page, out, PAGE_SIZE);
	b->ops->free(b, slots, 1);
	b->ops->destroy(b);
}

/* ---- threads ---- */

struct worker {
	struct tier_backend *b;
	unsigned int id;
	double seconds;
	uint64_t nr_stored, nr_verified, nr_bad, nr_errors;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Keep a window of live pages: store batches, load random live ones and
 * check them, free the oldest.  Page content follows from its seed.
 */
static void *worker_run(void *arg)
{
	enum { LIVE = 512, BATCH = 8 };
	struct worker *w = arg;
	static _Thread_local unsigned char in[BATCH][PAGE_SIZE], out[BATCH][PAGE_SIZE],
		expect[PAGE_SIZE];
	uint64_t slots[LIVE], seeds[LIVE], rng = w->id + 77, seq = 0;
	unsigned int head = 0, nr_live = 0;
	double end = now() + w->seconds;
	void *in_ptrs[BATCH], *out_ptrs[BATCH];

	for (int i = 0; i < BATCH; i++) {
		in_ptrs[i] = in[i];
		out_ptrs[i] = out[i];
	}
	while (now() < end) {
		uint64_t batch_seeds[BATCH], batch_slots[BATCH], load_slots[BATCH];
		unsigned int load_idx[BATCH];
		int ret;

		if (nr_live + BATCH > LIVE) {
			for (int i = 0; i < BATCH; i++) {
				w->b->ops->free(w->b, &slots[head], 1);
				head = (head + 1) % LIVE;
			}
			nr_live -= BATCH;
		}
		for (int i = 0; i < BATCH; i++) {
			batch_seeds[i] = (uint64_t)w->id << 40 | seq++;
			fill_page(in[i], batch_seeds[i] % NR_DATA_KINDS, batch_seeds[i]);
		}
		ret = w->b->ops->store(w->b, in_ptrs, BATCH, batch_slots);
		if (ret != BATCH) {
			w->nr_errors++;
			if (ret > 0)
				w->b->ops->free(w->b, batch_slots, (unsigned int)ret);
			continue;
		}
		for (int i = 0; i < BATCH; i++) {
			unsigned int at = (head + nr_live + i) % LIVE;

			slots[at] = batch_slots[i];
			seeds[at] = batch_seeds[i];
		}
		nr_live += BATCH;
		w->nr_stored += BATCH;

		for (int i = 0; i < BATCH; i++) {
			load_idx[i] = (head + (unsigned int)(rng_next(&rng) % nr_live)) % LIVE;
			load_slots[i] = slots[load_idx[i]];
		}
		if (w->b->ops->load(w->b, load_slots, out_ptrs, BATCH)) {
			w->nr_errors++;
			continue;
		}
		for (int i = 0; i < BATCH; i++) {
			uint64_t seed = seeds[load_idx[i]];

			fill_page(expect, seed % NR_DATA_KINDS, seed);
			w->nr_bad += memcmp(expect, out[i], PAGE_SIZE) != 0;
			w->nr_verified++;
		}
	}
	/* Everything still live must read back before it goes. */
	for (unsigned int n = 0; n < nr_live; n++) {
		unsigned int at = (head + n) % LIVE;
		void *o = out[0];

		fill_page(expect, seeds[at] % NR_DATA_KINDS, seeds[at]);
		if (w->b->ops->load(w->b, &slots[at], &o, 1))
			w->nr_errors++;
		else
			w->nr_bad += memcmp(expect, out[0], PAGE_SIZE) != 0;
		w->nr_verified++;
		w->b->ops->free(w->b, &slots[at], 1);
	}
	return NULL;
}

/* Two threads on four shards, and on one shard (one lock between them). */
static void test_threads(void)
{
	enum { NR_THREADS = 2 };
	const struct {
		const struct codec *codec;
		unsigned int nr_shards;
	} configs[] = { { &codec_lz4, 4 }, { second_codec(), 4 }, { &codec_lz4, 1 } };
	struct worker w[NR_THREADS];
	pthread_t tid[NR_THREADS];
	struct backend_stats st;

	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		struct tier_backend *b = pool_new(configs[c].codec, 0, 4096, configs[c].nr_shards);

		if (!b)
			return;
		check_set_context("%s, %u shards", configs[c].codec->name, configs[c].nr_shards);
		for (unsigned int i = 0; i < NR_THREADS; i++) {
			w[i] = (struct worker){ .b = b, .id = i, .seconds = 0.35 };
			if (!CHECK_EQ(0, pthread_create(&tid[i], NULL, worker_run, &w[i])))
				w[i].b = NULL;
		}
		for (unsigned int i = 0; i < NR_THREADS; i++) {
			if (!w[i].b)
				continue;
			pthread_join(tid[i], NULL);
			CHECK_EQ(0, w[i].nr_bad);
			CHECK_EQ(0, w[i].nr_errors);
			CHECK(w[i].nr_verified > 100);
		}
		st = pool_stats(b);
		printf("# threads, %s, %u shards: %" PRIu64 " + %" PRIu64 " pages stored, %" PRIu64
		       " + %" PRIu64 " verified, shard lock contended %" PRIu64 " times\n",
		       configs[c].codec->name, configs[c].nr_shards, w[0].nr_stored, w[1].nr_stored,
		       w[0].nr_verified, w[1].nr_verified, st.nr_lock_contended);
		CHECK_EQ(0, st.stored_pages);
		CHECK_EQ(0, st.pool_bytes);
		CHECK_EQ(st.nr_stores, st.nr_frees);
		b->ops->destroy(b);
	}
	check_clear_context();
}

/*
 * A thread outlives a pool it used and then uses another: its cached
 * context for the dead pool must be dropped, not reused or leaked.
 */
struct outlive {
	struct tier_backend *first, *second;
	pthread_barrier_t barrier;
	int first_ret, second_ret;
};

static void *outlive_run(void *arg)
{
	struct outlive *o = arg;
	unsigned char page[PAGE_SIZE], out[PAGE_SIZE];
	void *p = page, *q = out;
	uint64_t slot;

	fill_page(page, DATA_TEXT, 7000);
	o->first_ret = o->first->ops->store(o->first, &p, 1, &slot);
	pthread_barrier_wait(&o->barrier);
	pthread_barrier_wait(&o->barrier); /* the first pool is destroyed */
	o->second_ret = o->second->ops->store(o->second, &p, 1, &slot);
	if (o->second_ret == 1 &&
	    (o->second->ops->load(o->second, &slot, &q, 1) || memcmp(page, out, PAGE_SIZE)))
		o->second_ret = -EIO;
	return NULL;
}

static void test_thread_outlives_pool(void)
{
	struct outlive o = { 0 };
	pthread_t tid;

	o.first = pool_new(second_codec(), second_codec()->default_level, 16, 0);
	o.second = pool_new(second_codec(), second_codec()->default_level, 16, 0);
	if (!o.first || !o.second)
		goto destroy;
	pthread_barrier_init(&o.barrier, NULL, 2);
	if (!CHECK_EQ(0, pthread_create(&tid, NULL, outlive_run, &o)))
		goto barrier;
	pthread_barrier_wait(&o.barrier);
	o.first->ops->destroy(o.first);
	o.first = NULL;
	pthread_barrier_wait(&o.barrier);
	pthread_join(tid, NULL);
	CHECK_EQ(1, o.first_ret);
	CHECK_EQ(1, o.second_ret);
	CHECK_EQ(1, pool_stats(o.second).stored_pages);
barrier:
	pthread_barrier_destroy(&o.barrier);
destroy:
	if (o.first)
		o.first->ops->destroy(o.first);
	if (o.second)
		o.second->ops->destroy(o.second);
}

static void test_create_limits(void)
{
	struct backend_config cfg = { .capacity_bytes = PAGE_SIZE - 1, .codec = &codec_lz4 };
	struct tier_backend *b = NULL;

	CHECK_EQ(-EINVAL, tier_backend_zpool.create(&cfg, &b));
	cfg.capacity_bytes = 1 << 20;
	cfg.codec = NULL;
	CHECK_EQ(-EINVAL, tier_backend_zpool.create(&cfg, &b));
	CHECK(b == NULL);
	CHECK_STR("zpool", tier_backend_zpool.name);
	CHECK(tier_backend_zpool.is_sync);
}

int main(void)
{
	test_create_limits();
	test_codecs();
	test_round_trip();
	test_capacity();
	test_compaction();
	test_one_shard();
	test_bad_slots_and_corruption();
	test_enomem();
	test_threads();
	test_thread_outlives_pool();
	return check_done("zpool");
}
