// SPDX-License-Identifier: MIT
/*
 * Conformance of every compiled-in backend (zpool once per codec) and of the
 * chains of a RAM tier and the file or redis, and of redis spilling to the
 * file with or without a RAM tier in front: round trips in batches, prefix
 * stores when full, stats, concurrent batches, failed stores and loads
 * that lose and leak nothing, and RAM backends grown while in use.  redis runs against the servers named by
 * TIERFS_TEST_REDIS (HOST:PORT,...), which redis_env.sh starts.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "faulty_backend.h"
#include "tierfs/backend.h"
#include "tierfs/codec.h"

#define NR_PAGES 256 /* capacity of each backend under test, in pages */

struct config {
	const struct tier_backend_ops *ops;
	const struct codec *codec;
	const struct tier_backend_ops *upper; /* a chain's RAM tier */
	uint64_t pool_max_bytes;	      /* a chain's bound: writeback runs past it */
	const struct tier_backend_ops *lower; /* a chain's last tier; NULL: the file */
	bool is_spill;			      /* lower (redis) spills to the file */
};

static bool is_redis(const struct config *c)
{
	const struct tier_backend_ops *last = c->lower ? c->lower : c->ops;

	return last && !strcmp(last->name, "redis");
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Page n of a fixed sequence: a third sparse, a third text, a third random. */
static void make_page(unsigned int n, char *page)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * (n + 1);

	switch (n % 3) {
	case 0:
		memset(page, 0, PAGE_SIZE);
		for (int i = 0; i < 16; i++)
			page[rng_next(&s) % PAGE_SIZE] = (char)rng_next(&s);
		break;
	case 1:
		for (size_t i = 0; i < PAGE_SIZE; i++)
			page[i] = "the quick brown fox jumps over a lazy dog\n"[rng_next(&s) % 42];
		break;
	default:
		for (size_t i = 0; i < PAGE_SIZE; i += 8) {
			uint64_t v = rng_next(&s);

			memcpy(page + i, &v, 8);
		}
		break;
	}
}

static char *alloc_pages(unsigned int nr)
{
	char *p = aligned_alloc(PAGE_SIZE, (size_t)nr * PAGE_SIZE);

	if (!p)
		abort();
	return p;
}

static int open_backend(const struct config *c, uint64_t nr_pages, struct tier_backend **out)
{
	char path[] = "/var/tmp/tierfs-test-swap.XXXXXX";
	char spill[] = "/var/tmp/tierfs-test-spill.XXXXXX";
	/*
	 * A chain's last tier has nr_pages slots, and its RAM tier as many;
	 * redis spilling to a file has half and the file the rest.
	 */
	struct backend_config cfg = {
		.capacity_bytes = (c->is_spill ? nr_pages / 2 : nr_pages) * PAGE_SIZE,
		.codec = c->codec,
		.codec_level = c->codec ? c->codec->default_level : 0,
		.path = is_redis(c) ? getenv("TIERFS_TEST_REDIS") : path,
		.upper = c->upper,
		.upper_capacity_bytes = nr_pages * PAGE_SIZE,
		.pool_max_bytes = c->pool_max_bytes,
		.lower = c->lower,
		.redis_timeout_ms = 10000,
		.redis_ttl_s = 60,
		.spill_path = c->is_spill ? spill : NULL,
		.spill_capacity_bytes = (nr_pages - nr_pages / 2) * PAGE_SIZE,
	};

	/* Fresh names the backend creates itself. */
	for (char *p = path; p; p = p == path ? spill : NULL) {
		int fd = mkstemp(p);

		if (fd >= 0) {
			close(fd);
			unlink(p);
		}
	}
	return c->ops->create(&cfg, out);
}

static void stats_of(struct tier_backend *b, struct backend_stats *st)
{
	memset(st, 0, sizeof(*st));
	b->ops->get_stats(b, st);
}

/* Store pages 0..nr-1 in batches of batch, load them back in reverse batches. */
static void test_round_trip(const struct config *c, unsigned int batch)
{
	struct tier_backend *b;
	struct backend_stats st;
	char *src = alloc_pages(NR_PAGES), *dst = alloc_pages(NR_PAGES);
	void *ptr[NR_PAGES];
	uint64_t slots[NR_PAGES];
	unsigned int nr = NR_PAGES / 2;

	check_set_context("%s%s%s%s%s%s batch %u", c->upper ? c->upper->name : "",
			  c->upper ? "+" : "", c->ops->name, c->is_spill ? "(redis+file)" : "",
			  c->codec ? ":" : "", c->codec ? c->codec->name : "", batch);
	CHECK_EQ(0, open_backend(c, NR_PAGES, &b));
	for (unsigned int i = 0; i < nr; i++) {
		make_page(i, src + (size_t)i * PAGE_SIZE);
		ptr[i] = src + (size_t)i * PAGE_SIZE;
	}
	for (unsigned int i = 0; i < nr; i += batch) {
		unsigned int n = nr - i < batch ? nr - i : batch;

		CHECK_EQ((int)n, b->ops->store(b, ptr + i, n, slots + i));
	}
	stats_of(b, &st);
	CHECK_EQ((uint64_t)nr, st.stored_pages);
	CHECK_EQ((uint64_t)nr * PAGE_SIZE, st.stored_bytes);
	CHECK(st.pool_bytes > 0);
	memset(dst, 0xa5, (size_t)NR_PAGES * PAGE_SIZE);
	for (unsigned int i = 0; i < nr; i++)
		ptr[i] = dst + (size_t)(nr - 1 - i) * PAGE_SIZE;
	/* Reverse order, so loads do not simply retrace the stores. */
	for (unsigned int i = 0; i < nr; i += batch) {
		unsigned int n = nr - i < batch ? nr - i : batch;
		uint64_t rev[NR_PAGES];

		for (unsigned int k = 0; k < n; k++)
			rev[k] = slots[nr - 1 - (i + k)];
		CHECK_EQ(0, b->ops->load(b, rev, ptr + i, n));
	}
	CHECK_MEM(src, dst, (size_t)nr * PAGE_SIZE);
	b->ops->free(b, slots, nr);
	stats_of(b, &st);
	CHECK_EQ((uint64_t)0, st.stored_pages);
	CHECK_EQ((uint64_t)0, st.stored_bytes);
	CHECK_EQ((uint64_t)nr, st.nr_stores);
	CHECK_EQ((uint64_t)nr, st.nr_loads);
	b->ops->destroy(b);
	free(src);
	free(dst);
	check_set_context("%s", "");
}

/*
 * Full: the prefix that fits is stored, then -ENOSPC, and nothing is lost.
 * A chain with no room in its RAM tier is as full as its file.
 */
static void test_full(const struct config *c)
{
	enum { CAP = 64 };
	struct config no_pool = *c;
	struct tier_backend *b;
	struct backend_stats st;
	char *src = alloc_pages(CAP + 8), *dst = alloc_pages(1);
	void *ptr[CAP + 8];
	uint64_t slots[CAP + 8];
	int ret;

	check_set_context("%s full", c->ops->name);
	no_pool.pool_max_bytes = 0;
	CHECK_EQ(0, open_backend(&no_pool, CAP, &b));
	for (unsigned int i = 0; i < CAP + 8; i++) {
		make_page(i, src + (size_t)i * PAGE_SIZE);
		ptr[i] = src + (size_t)i * PAGE_SIZE;
	}
	CHECK_EQ(CAP - 4, b->ops->store(b, ptr, CAP - 4, slots));
	ret = b->ops->store(b, ptr + CAP - 4, 8, slots + CAP - 4);
	CHECK_EQ(4, ret);
	CHECK_EQ(-ENOSPC, b->ops->store(b, ptr + CAP, 1, slots + CAP));
	stats_of(b, &st);
	CHECK_EQ((uint64_t)CAP, st.stored_pages);
	CHECK(st.nr_reject_full > 0);
	for (unsigned int i = 0; i < CAP; i++) {
		void *one = dst;

		CHECK_EQ(0, b->ops->load(b, slots + i, &one, 1));
		CHECK_MEM(src + (size_t)i * PAGE_SIZE, dst, PAGE_SIZE);
	}
	/* Room again after a free. */
	b->ops->free(b, slots, 1);
	CHECK_EQ(1, b->ops->store(b, ptr + CAP, 1, slots));
	b->ops->free(b, slots, CAP);
	b->ops->destroy(b);
	free(src);
	free(dst);
	check_set_context("%s", "");
}

/*
 * A failed store stores nothing, a short one a prefix; a failed load leaves
 * the slots loadable.
 */
static void test_faults(const struct config *c)
{
	struct faulty_backend *f;
	struct tier_backend *inner, *b;
	struct backend_stats st;
	char *src = alloc_pages(8), *dst = alloc_pages(8);
	void *sp[8], *dp[8];
	uint64_t slots[8];

	check_set_context("%s faults", c->ops->name);
	if (!CHECK_EQ(0, open_backend(c, NR_PAGES, &inner)))
		goto out;
	if (!CHECK_EQ(0, faulty_new(inner, inner->ops->is_sync, &f))) {
		inner->ops->destroy(inner);
		goto out;
	}
	b = faulty_base(f);
	CHECK_EQ(inner->ops->is_sync, b->ops->is_sync);
	for (unsigned int i = 0; i < 8; i++) {
		make_page(i, src + (size_t)i * PAGE_SIZE);
		sp[i] = src + (size_t)i * PAGE_SIZE;
		dp[i] = dst + (size_t)i * PAGE_SIZE;
	}
	CHECK_EQ(0, faulty_fail(f, FAULTY_STORE, 2, -EIO, false));
	CHECK_EQ(4, b->ops->store(b, sp, 4, slots));
	CHECK_EQ(-EIO, b->ops->store(b, sp + 4, 4, slots + 4));
	stats_of(b, &st);
	CHECK_EQ((uint64_t)4, st.stored_pages);
	/* The next store keeps one page: a prefix, as when the backend fills. */
	CHECK_EQ(0, faulty_short_store(f, 1, 1, false));
	CHECK_EQ(1, b->ops->store(b, sp + 4, 4, slots + 4));
	CHECK_EQ(3, b->ops->store(b, sp + 5, 3, slots + 5));
	CHECK_EQ(4, faulty_nr_calls(f, FAULTY_STORE));
	CHECK_EQ(2, faulty_nr_faulted(f, FAULTY_STORE));
	CHECK_EQ(3, faulty_nr_last(f, FAULTY_STORE));

	CHECK_EQ(0, faulty_fail(f, FAULTY_LOAD, 1, -EIO, true));
	CHECK_EQ(-EIO, b->ops->load(b, slots, dp, 8));
	CHECK_EQ(-EIO, b->ops->load(b, slots, dp, 8));
	CHECK_EQ(0, inner->ops->load(inner, slots, dp, 8));
	CHECK_MEM(src, dst, 8 * PAGE_SIZE);
	faulty_clear(f, FAULTY_LOAD);
	memset(dst, 0, 8 * PAGE_SIZE);
	CHECK_EQ(0, b->ops->load(b, slots, dp, 8));
	CHECK_MEM(src, dst, 8 * PAGE_SIZE);
	CHECK_EQ(2, faulty_nr_faulted(f, FAULTY_LOAD));
	/* Nothing to fail in a call that returns nothing. */
	CHECK_EQ(-EINVAL, faulty_fail(f, FAULTY_FREE, 1, -EIO, false));
	b->ops->free(b, slots, 8);
	stats_of(b, &st);
	CHECK_EQ((uint64_t)0, st.stored_pages);
	CHECK_EQ(1, faulty_nr_calls(f, FAULTY_FREE));
	CHECK_EQ(8, faulty_nr_last(f, FAULTY_FREE));
	b->ops->destroy(b);
out:
	free(src);
	free(dst);
	check_set_context("%s", "");
}

struct worker {
	struct tier_backend *b;
	unsigned int seed;
	unsigned int nr_rounds;
	unsigned int nr_bad;
};

/* Store a batch, load it back, compare, free; until the time is up. */
static void *work(void *arg)
{
	struct worker *w = arg;
	char *src = alloc_pages(16), *dst = alloc_pages(16);
	void *sp[16], *dp[16];
	uint64_t slots[16];
	struct timespec end, now;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += 300 * 1000 * 1000;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (unsigned int i = 0; i < 16; i++) {
		sp[i] = src + (size_t)i * PAGE_SIZE;
		dp[i] = dst + (size_t)i * PAGE_SIZE;
	}
	do {
		unsigned int n = 1 + (w->seed + w->nr_rounds) % 16;

		for (unsigned int i = 0; i < n; i++)
			make_page(w->seed * 7919 + w->nr_rounds * 16 + i, sp[i]);
		if (w->b->ops->store(w->b, sp, n, slots) != (int)n ||
		    w->b->ops->load(w->b, slots, dp, n) || memcmp(src, dst, n * PAGE_SIZE))
			w->nr_bad++;
		w->b->ops->free(w->b, slots, n);
		w->nr_rounds++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	free(src);
	free(dst);
	return NULL;
}

/* A chain's pool bound far below what the workers store: writeback runs beside them. */
static void test_concurrent(const struct config *c)
{
	struct config small = *c;
	struct worker w[2];
	pthread_t t[2];
	struct tier_backend *b;
	struct backend_stats st;

	check_set_context("%s concurrent", c->ops->name);
	small.pool_max_bytes = 8 * PAGE_SIZE;
	CHECK_EQ(0, open_backend(&small, NR_PAGES, &b));
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ .b = b, .seed = (unsigned int)i + 1 };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(0u, w[i].nr_bad);
		CHECK(w[i].nr_rounds > 0);
	}
	stats_of(b, &st);
	CHECK_EQ((uint64_t)0, st.stored_pages);
	/* A chain's tiers let go too, once a writeback of freed pages ends. */
	if (b->ops->get_tiers) {
		struct backend_tier_stats t[BACKEND_MAX_TIERS];
		unsigned int nr = 0, held = 1;

		for (int i = 0; i < 500 && held; i++, usleep(10000)) {
			nr = b->ops->get_tiers(b, t, BACKEND_MAX_TIERS);
			held = 0;
			for (unsigned int k = 0; k < nr; k++)
				held += (unsigned int)t[k].st.stored_pages;
		}
		CHECK_EQ(c->upper && c->is_spill ? 3u : 2u, nr);
		CHECK_EQ(0u, held);
	}
	b->ops->destroy(b);
	check_set_context("%s", "");
}

/*
 * A RAM backend grown as remount size= grows the mount: while two workers
 * store and load, twice, by less than a shard each time; then every slot of
 * the new capacity takes a page, and every page stored reads back.
 */
static void test_grow(const struct config *c)
{
	enum { CAP = 64, HELD = CAP - 32, GROWN = CAP + 300 + 500 };
	struct worker w[2];
	pthread_t t[2];
	struct tier_backend *b;
	struct backend_stats st;
	char *src = alloc_pages(GROWN + 1), *dst = alloc_pages(1);
	void **ptr = calloc(GROWN + 1, sizeof(*ptr));
	uint64_t *slots = calloc(GROWN + 1, sizeof(*slots));
	unsigned int nr_bad = 0;

	if (!c->ops->grow || !ptr || !slots)
		goto out;
	check_set_context("%s grow", c->ops->name);
	CHECK_EQ(0, open_backend(c, CAP, &b));
	for (unsigned int i = 0; i <= GROWN; i++) {
		make_page(i, src + (size_t)i * PAGE_SIZE);
		ptr[i] = src + (size_t)i * PAGE_SIZE;
	}
	CHECK_EQ(HELD, b->ops->store(b, ptr, HELD, slots));
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ .b = b, .seed = (unsigned int)i + 1 };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	usleep(50000);
	CHECK_EQ(0, b->ops->grow(b, (CAP + 300) * PAGE_SIZE));
	usleep(50000);
	CHECK_EQ(0, b->ops->grow(b, GROWN * PAGE_SIZE));
	/* Never smaller. */
	CHECK_EQ(0, b->ops->grow(b, CAP * PAGE_SIZE));
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(0u, w[i].nr_bad);
	}
	stats_of(b, &st);
	CHECK_EQ((uint64_t)GROWN * PAGE_SIZE, st.capacity_bytes);
	CHECK_EQ(GROWN - HELD, b->ops->store(b, ptr + HELD, GROWN - HELD, slots + HELD));
	CHECK_EQ(-ENOSPC, b->ops->store(b, ptr + GROWN, 1, slots + GROWN));
	for (unsigned int i = 0; i < GROWN; i++) {
		void *one = dst;

		if (b->ops->load(b, slots + i, &one, 1) ||
		    memcmp(src + (size_t)i * PAGE_SIZE, dst, PAGE_SIZE))
			nr_bad++;
	}
	CHECK_EQ(0u, nr_bad);
	b->ops->free(b, slots, GROWN);
	stats_of(b, &st);
	CHECK_EQ((uint64_t)0, st.stored_pages);
	b->ops->destroy(b);
	check_set_context("%s", "");
out:
	free(ptr);
	free(slots);
	free(src);
	free(dst);
}

static void test_config(const struct config *c)
{
	static const unsigned int batches[] = { 1, 7, 32, 128 };

	for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
		test_round_trip(c, batches[i]);
	test_full(c);
	test_faults(c);
	test_concurrent(c);
	test_grow(c);
}

int main(void)
{
	for (const struct tier_backend_ops *const *b = backend_table; *b; b++) {
		if (!strcmp((*b)->name, "zpool") || !strcmp((*b)->name, "redis")) {
			if (!strcmp((*b)->name, "redis") && !getenv("TIERFS_TEST_REDIS")) {
				printf("# redis: TIERFS_TEST_REDIS is not set, not tested\n");
				continue;
			}
			for (const struct codec *const *k = codec_table; *k; k++)
				test_config(&(struct config){ *b, *k, NULL, 0, NULL, false });
		} else {
			test_config(&(struct config){ *b, NULL, NULL, 0, NULL, false });
		}
	}
	/* Chains, with a bound the tests do not reach but the concurrent one. */
	for (const struct tier_backend_ops *const *b = backend_table; *b; b++) {
		if ((*b)->is_sync || (!strcmp((*b)->name, "redis") && !getenv("TIERFS_TEST_REDIS")))
			continue;
		for (const struct codec *const *k = codec_table; *k; k++)
			test_config(&(struct config){ &tier_backend_chain, *k,
						      backend_find("zpool"), 1ULL << 30, *b,
						      false });
		test_config(&(struct config){ &tier_backend_chain, codec_table[0],
					      backend_find("ramdisk"), 1ULL << 30, *b, false });
	}
	/* redis spilling to the file, alone and as a RAM tier's next tier. */
	if (backend_find("redis") && backend_find("file") && getenv("TIERFS_TEST_REDIS")) {
		test_config(&(struct config){ &tier_backend_chain, codec_table[0], NULL, 0,
					      backend_find("redis"), true });
		test_config(&(struct config){ &tier_backend_chain, codec_table[0],
					      backend_find("zpool"), 1ULL << 30,
					      backend_find("redis"), true });
	}
	CHECK(backend_find("zpool") != NULL);
	CHECK(backend_find("nonesuch") == NULL);
	for (size_t i = 0; backend_left_out[i][0]; i++)
		CHECK(backend_find(backend_left_out[i][0]) == NULL);
	{
		const struct codec *k;
		char spec[64];
		int level;

		CHECK_EQ(0, codec_parse("lz4", &k, &level));
		CHECK(!strcmp(k->name, "lz4") && level == k->default_level);
		for (const struct codec *const *c = codec_table; *c; c++) {
			check_set_context("%s", (*c)->name);
			snprintf(spec, sizeof(spec), "%s:%d", (*c)->name, (*c)->max_level);
			CHECK_EQ(0, codec_parse(spec, &k, &level));
			CHECK(k == *c && level == (*c)->max_level);
			snprintf(spec, sizeof(spec), "%s:%d", (*c)->name, (*c)->max_level + 1);
			CHECK_EQ(-EINVAL, codec_parse(spec, &k, &level));
			snprintf(spec, sizeof(spec), "%s:", (*c)->name);
			CHECK_EQ(-EINVAL, codec_parse(spec, &k, &level));
		}
		for (size_t i = 0; codec_left_out[i][0]; i++) {
			check_set_context("%s", codec_left_out[i][0]);
			CHECK_EQ(-EINVAL, codec_parse(codec_left_out[i][0], &k, &level));
		}
		check_clear_context();
		CHECK_EQ(-EINVAL, codec_parse("lz", &k, &level));
		CHECK_EQ(-EINVAL, codec_parse("gzip", &k, &level));
	}
	return check_done("backend");
}
