// SPDX-License-Identifier: MIT
/*
 * How fast does each backend store and load pages?  Store/load MB/s and
 * per-batch latency percentiles for every backend (zpool per codec, and
 * zpool with one shard: the one-lock build), 1 and 2 threads, on pages of
 * three compressibilities.  Fixed seeds; every result line carries all of
 * its parameters.
 *
 * usage: backend_bench [--quick] [--dir DIR]   (DIR holds the file backend's swap file)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/codec.h"

#define BATCH 32

enum data_kind { DATA_SPARSE, DATA_TEXT, DATA_RANDOM, NR_DATA_KINDS };
static const char *const data_names[] = { "sparse", "text", "random" };

struct run {
	const struct tier_backend_ops *ops;
	const struct codec *codec;
	unsigned int nr_shards;		/* zpool only; 0 = default */
	enum data_kind kind;
	unsigned int nr_threads;
	unsigned int nr_batches;	/* per thread */
	const char *dir;
};

struct thread_result {
	double store_s, load_s;
	double *store_lat, *load_lat;	/* per batch, seconds */
	int err;
};

struct thread_arg {
	const struct run *run;
	struct tier_backend *b;
	unsigned int id;
	struct thread_result res;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* sparse: ~4 % random bytes; text: a small alphabet (about 2:1 with lz4). */
static void fill(char *page, enum data_kind kind, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;

	switch (kind) {
	case DATA_SPARSE:
		memset(page, 0, PAGE_SIZE);
		for (int i = 0; i < 160; i++)
			page[rng_next(&s) % PAGE_SIZE] = (char)rng_next(&s);
		break;
	case DATA_TEXT:
		for (size_t i = 0; i < PAGE_SIZE; i++)
			page[i] = "etaoin shrdlu cmfwyp vbgkqjxz\n"[rng_next(&s) % 30];
		break;
	default:
		for (size_t i = 0; i < PAGE_SIZE; i += 8) {
			uint64_t v = rng_next(&s);

			memcpy(page + i, &v, 8);
		}
		break;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *worker(void *p)
{
	struct thread_arg *a = p;
	const struct run *r = a->run;
	unsigned int n = r->nr_batches;
	char *pages = aligned_alloc(PAGE_SIZE, (size_t)n * BATCH * PAGE_SIZE);
	uint64_t *slots = calloc((size_t)n * BATCH, sizeof(*slots));
	void *ptr[BATCH];
	double t0;

	a->res.store_lat = calloc(n, sizeof(double));
	a->res.load_lat = calloc(n, sizeof(double));
	if (!pages || !slots || !a->res.store_lat || !a->res.load_lat) {
		a->res.err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < (size_t)n * BATCH; i++)
		fill(pages + i * PAGE_SIZE, r->kind, a->id * 1000003ULL + i);
	t0 = now_s();
	for (unsigned int k = 0; k < n && !a->res.err; k++) {
		double t = now_s();

		for (int i = 0; i < BATCH; i++)
			ptr[i] = pages + ((size_t)k * BATCH + i) * PAGE_SIZE;
		if (a->b->ops->store(a->b, ptr, BATCH, slots + (size_t)k * BATCH) != BATCH)
			a->res.err = -ENOSPC;
		a->res.store_lat[k] = now_s() - t;
	}
	a->res.store_s = now_s() - t0;
	t0 = now_s();
	for (unsigned int k = 0; k < n && !a->res.err; k++) {
		double t = now_s();

		for (int i = 0; i < BATCH; i++)
			ptr[i] = pages + ((size_t)k * BATCH + i) * PAGE_SIZE;
		a->res.err = a->b->ops->load(a->b, slots + (size_t)k * BATCH, ptr, BATCH);
		a->res.load_lat[k] = now_s() - t;
	}
	a->res.load_s = now_s() - t0;
	if (!a->res.err)
		a->b->ops->free(a->b, slots, n * BATCH);
out:
	free(pages);
	free(slots);
	return NULL;
}

static double percentile(double *v, size_t n, double p)
{
	return v[(size_t)(p * (double)(n - 1))];
}

static int run_one(const struct run *r)
{
	uint64_t pages = (uint64_t)r->nr_threads * r->nr_batches * BATCH;
	char path[4096];
	struct backend_config cfg = {
		.capacity_bytes = pages * PAGE_SIZE,
		.codec = r->codec,
		.codec_level = r->codec ? r->codec->default_level : 0,
		.nr_shards = r->nr_shards,
		.path = path,
	};
	struct thread_arg args[2];
	pthread_t t[2];
	struct tier_backend *b;
	struct backend_stats st;
	double store_s = 0, load_s = 0, *slat, *llat;
	size_t nr_lat = (size_t)r->nr_threads * r->nr_batches;
	int err;

	snprintf(path, sizeof(path), "%s/tierfs-bench-swap.%d", r->dir, (int)getpid());
	err = r->ops->create(&cfg, &b);
	if (err) {
		fprintf(stderr, "backend_bench: %s: %s\n", r->ops->name, strerror(-err));
		return err;
	}
	for (unsigned int i = 0; i < r->nr_threads; i++) {
		args[i] = (struct thread_arg){ .run = r, .b = b, .id = i };
		pthread_create(&t[i], NULL, worker, &args[i]);
	}
	slat = calloc(nr_lat, sizeof(double));
	llat = calloc(nr_lat, sizeof(double));
	for (unsigned int i = 0; i < r->nr_threads; i++) {
		pthread_join(t[i], NULL);
		err = err ? err : args[i].res.err;
		store_s = args[i].res.store_s > store_s ? args[i].res.store_s : store_s;
		load_s = args[i].res.load_s > load_s ? args[i].res.load_s : load_s;
		if (slat && llat && args[i].res.store_lat && args[i].res.load_lat) {
			memcpy(slat + (size_t)i * r->nr_batches, args[i].res.store_lat,
			       r->nr_batches * sizeof(double));
			memcpy(llat + (size_t)i * r->nr_batches, args[i].res.load_lat,
			       r->nr_batches * sizeof(double));
		}
		free(args[i].res.store_lat);
		free(args[i].res.load_lat);
	}
	memset(&st, 0, sizeof(st));
	b->ops->get_stats(b, &st);
	b->ops->destroy(b);
	if (err || !slat || !llat) {
		fprintf(stderr, "backend_bench: %s failed: %s\n", r->ops->name, strerror(-err));
		free(slat);
		free(llat);
		return err ? err : -ENOMEM;
	}
	qsort(slat, nr_lat, sizeof(double), cmp_double);
	qsort(llat, nr_lat, sizeof(double), cmp_double);
	printf("%-8s %-5s %6s %-6s %7u | %8.0f %8.0f | %7.1f %7.1f %7.1f | %7.1f %7.1f %7.1f | %8u\n",
	       r->ops->name, r->codec ? r->codec->name : "-",
	       r->nr_shards == 1 ? "1" : "auto", data_names[r->kind], r->nr_threads,
	       (double)pages * PAGE_SIZE / 1e6 / store_s, (double)pages * PAGE_SIZE / 1e6 / load_s,
	       percentile(slat, nr_lat, 0.5) * 1e6, percentile(slat, nr_lat, 0.99) * 1e6,
	       percentile(slat, nr_lat, 0.999) * 1e6, percentile(llat, nr_lat, 0.5) * 1e6,
	       percentile(llat, nr_lat, 0.99) * 1e6, percentile(llat, nr_lat, 0.999) * 1e6,
	       (unsigned int)st.nr_lock_contended);
	fflush(stdout);
	free(slat);
	free(llat);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int nr_batches = 2048; /* 256 MiB per thread */
	const char *dir = "/var/tmp";
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			nr_batches = 16;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr, "usage: backend_bench [--quick] [--dir DIR]\n");
			return 2;
		}
	}
	printf("# backend_bench: batch %d pages, %u batches per thread, swap dir %s\n", BATCH,
	       nr_batches, dir);
	printf("# latencies are per batch of %d pages, in microseconds; contended = shard lock found taken\n",
	       BATCH);
	printf("%-8s %-5s %6s %-6s %7s | %8s %8s | %7s %7s %7s | %7s %7s %7s | %8s\n", "backend",
	       "codec", "shards", "data", "threads", "store", "load", "st p50", "st p99",
	       "st p999", "ld p50", "ld p99", "ld p999", "contended");
	printf("%-8s %-5s %6s %-6s %7s | %8s %8s |\n", "", "", "", "", "", "MB/s", "MB/s");
	for (const struct tier_backend_ops *const *b = backend_table; *b; b++) {
		bool is_zpool = !strcmp((*b)->name, "zpool");

		for (const struct codec *const *k = codec_table; *k; k++) {
			if (!is_zpool && k != codec_table)
				break;
			for (unsigned int shards = 0; shards <= (is_zpool ? 1u : 0u); shards++)
				for (int kind = 0; kind < NR_DATA_KINDS; kind++)
					for (unsigned int th = 1; th <= 2; th++) {
						struct run r = {
							.ops = *b,
							.codec = is_zpool ? *k : NULL,
							.nr_shards = shards,
							.kind = kind,
							.nr_threads = th,
							.nr_batches = nr_batches,
							.dir = dir,
						};

						failed |= run_one(&r) != 0;
					}
		}
	}
	return failed ? 1 : 0;
}
