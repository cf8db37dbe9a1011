// SPDX-License-Identifier: MIT
/*
 * How fast does each backend store and load pages?  Store/load MB/s and
 * per-batch latency percentiles for every backend (zpool per codec, and
 * zpool with one shard: the one-lock build), 1 and 2 threads, on pages of
 * three compressibilities, and the file backend sealed (encrypt=on, and
 * with XChaCha20-Poly1305 forced) against plaintext in the same run.  Fixed
 * seeds; every result line carries all of its parameters.  --results FILE
 * also writes TSV records for bench/run (see bench/run): sharded zpool
 * against one lock and against ramdisk, the file backend against ramdisk,
 * sealed against plaintext, and the latency percentiles as plot points.
 *
 * usage: backend_bench [--quick] [--batches N] [--dir DIR] [--backend NAME]
 *                      [--results FILE]
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
#define MAX_RUNS 256

enum data_kind { DATA_SPARSE, DATA_TEXT, DATA_RANDOM, NR_DATA_KINDS };
static const char *const data_names[] = { "sparse", "text", "random" };

/* The file backend's seals: "on" is its default cipher, AES-256-GCM with AES-NI. */
enum seal_mode { SEAL_NONE, SEAL_OFF, SEAL_ON, SEAL_XCHACHA };
static const char *const seal_names[] = { "-", "off", "on", "xchacha" };

struct run {
	const struct tier_backend_ops *ops;
	const struct codec *codec;
	unsigned int nr_shards; /* zpool only; 0 = default */
	enum seal_mode seal;	/* file only */
	enum data_kind kind;
	unsigned int nr_threads;
	unsigned int nr_batches; /* per thread */
	const char *dir;
};

/* What one run measured, kept for the --results records. */
struct run_result {
	const char *backend, *codec; /* codec "-" when none */
	unsigned int nr_shards;	     /* asked for: 0 = default */
	unsigned int nr_shards_used; /* zpool: what the default gave */
	enum seal_mode seal;
	enum data_kind kind;
	unsigned int nr_threads;
	double store_mbps, load_mbps;
	double store_us[3], load_us[3]; /* p50, p99, p99.9 */
	unsigned long long nr_contended;
};

static struct run_result results[MAX_RUNS];
static unsigned int nr_results;

struct thread_result {
	double store_s, load_s;
	double *store_lat, *load_lat; /* per batch, seconds */
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
		/* redis: the servers redis_env.sh started */
		.path = strcmp(r->ops->name, "redis") ? path : getenv("TIERFS_TEST_REDIS"),
		.is_plaintext = r->seal == SEAL_OFF,
		.is_xchacha = r->seal == SEAL_XCHACHA,
	};
	struct thread_arg args[2];
	pthread_t t[2];
	struct tier_backend *b;
	struct backend_stats st;
	double store_s = 0, load_s = 0, *slat, *llat;
	size_t nr_lat = (size_t)r->nr_threads * r->nr_batches;
	char shards[16];
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
	if (r->nr_shards == 1)
		snprintf(shards, sizeof(shards), "1");
	else if (st.nr_shards)
		snprintf(shards, sizeof(shards), "auto/%u", (unsigned int)st.nr_shards);
	else
		snprintf(shards, sizeof(shards), "auto");
	if (nr_results < MAX_RUNS) {
		struct run_result *res = &results[nr_results++];
		static const double ps[3] = { 0.5, 0.99, 0.999 };

		*res = (struct run_result){
			.backend = r->ops->name,
			.codec = r->codec ? r->codec->name : "-",
			.nr_shards = r->nr_shards,
			.nr_shards_used = (unsigned int)st.nr_shards,
			.seal = r->seal,
			.kind = r->kind,
			.nr_threads = r->nr_threads,
			.store_mbps = (double)pages * PAGE_SIZE / 1e6 / store_s,
			.load_mbps = (double)pages * PAGE_SIZE / 1e6 / load_s,
			.nr_contended = (unsigned long long)st.nr_lock_contended,
		};
		for (int i = 0; i < 3; i++) {
			res->store_us[i] = percentile(slat, nr_lat, ps[i]) * 1e6;
			res->load_us[i] = percentile(llat, nr_lat, ps[i]) * 1e6;
		}
	}
	printf("%-8s %-5s %6s %-7s %-6s %7u | %8.0f %8.0f | %7.1f %7.1f %7.1f | %7.1f %7.1f %7.1f | %8u\n",
	       r->ops->name, r->codec ? r->codec->name : "-", shards, seal_names[r->seal],
	       data_names[r->kind], r->nr_threads, (double)pages * PAGE_SIZE / 1e6 / store_s,
	       (double)pages * PAGE_SIZE / 1e6 / load_s, percentile(slat, nr_lat, 0.5) * 1e6,
	       percentile(slat, nr_lat, 0.99) * 1e6, percentile(slat, nr_lat, 0.999) * 1e6,
	       percentile(llat, nr_lat, 0.5) * 1e6, percentile(llat, nr_lat, 0.99) * 1e6,
	       percentile(llat, nr_lat, 0.999) * 1e6, (unsigned int)st.nr_lock_contended);
	fflush(stdout);
	free(slat);
	free(llat);
	return 0;
}

static const struct run_result *find_result(const char *backend, const char *codec,
					    unsigned int nr_shards, enum seal_mode seal,
					    enum data_kind kind, unsigned int nr_threads)
{
	for (unsigned int i = 0; i < nr_results; i++) {
		const struct run_result *r = &results[i];

		if (!strcmp(r->backend, backend) && !strcmp(r->codec, codec) &&
		    r->nr_shards == nr_shards && r->seal == seal && r->kind == kind &&
		    r->nr_threads == nr_threads)
			return r;
	}
	return NULL;
}

/* One "result" record; a missing anchor (the run failed) stays empty. */
static void put_result(FILE *f, const char *metric, const char *unit, double value,
		       const char *anchor_name, const struct run_result *anchor,
		       double anchor_value)
{
	fprintf(f, "result\t%s\t%s\t%.0f\t%s\t", metric, unit, value, anchor_name);
	if (anchor)
		fprintf(f, "%.0f", anchor_value);
	fputc('\n', f);
}

/*
 * Sharded zpool against one lock and against ramdisk (the copy that costs
 * no compression), the file backend against ramdisk; the latency
 * percentiles of the "text" data (about 2:1) as plot points.
 */
static int write_results(const char *path, unsigned int nr_batches, const char *dir)
{
	static const char *const pct_names[3] = { "p50", "p99", "p99.9" };
	FILE *f = fopen(path, "a");
	char metric[128], label[64];

	if (!f) {
		fprintf(stderr, "backend_bench: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	for (unsigned int i = 0; i < nr_results; i++) {
		const struct run_result *r = &results[i], *lock, *ram, *plain;
		bool is_zpool = !strcmp(r->backend, "zpool");

		if (!strcmp(r->backend, "ramdisk") || (is_zpool && r->nr_shards == 1))
			continue;
		lock = is_zpool ? find_result("zpool", r->codec, 1, SEAL_NONE, r->kind,
					      r->nr_threads) :
				  NULL;
		ram = find_result("ramdisk", "-", 0, SEAL_NONE, r->kind, r->nr_threads);
		plain = find_result(r->backend, "-", 0, SEAL_OFF, r->kind, r->nr_threads);
		for (int load = 0; load < 2; load++) {
			if (is_zpool)
				snprintf(metric, sizeof(metric),
					 "zpool %s %s, %u thread%s, %u shard%s, %s", r->codec,
					 data_names[r->kind], r->nr_threads,
					 r->nr_threads > 1 ? "s" : "", r->nr_shards_used,
					 r->nr_shards_used == 1 ? "" : "s",
					 load ? "load" : "store");
			else
				snprintf(metric, sizeof(metric),
					 "%s %s, encrypt %s, %u thread%s, %s", r->backend,
					 data_names[r->kind], seal_names[r->seal], r->nr_threads,
					 r->nr_threads > 1 ? "s" : "", load ? "load" : "store");
			if (r->seal == SEAL_ON || r->seal == SEAL_XCHACHA)
				put_result(f, metric, "MB/s", load ? r->load_mbps : r->store_mbps,
					   "file, plaintext", plain,
					   plain ? (load ? plain->load_mbps : plain->store_mbps) :
						   0);
			if (is_zpool)
				put_result(f, metric, "MB/s", load ? r->load_mbps : r->store_mbps,
					   "zpool, one lock", lock,
					   lock ? (load ? lock->load_mbps : lock->store_mbps) : 0);
			put_result(f, metric, "MB/s", load ? r->load_mbps : r->store_mbps,
				   "ramdisk", ram,
				   ram ? (load ? ram->load_mbps : ram->store_mbps) : 0);
		}
		if (is_zpool && r->nr_threads > 1) {
			snprintf(metric, sizeof(metric),
				 "zpool %s %s, %u threads, %u shard%s, lock found taken", r->codec,
				 data_names[r->kind], r->nr_threads, r->nr_shards_used,
				 r->nr_shards_used == 1 ? "" : "s");
			put_result(f, metric, "times", (double)r->nr_contended, "zpool, one lock",
				   lock, lock ? (double)lock->nr_contended : 0);
		}
	}
	fprintf(f,
		"plot\tstore_latency\tlogbars\tStore latency per batch of %d pages, text data"
		"\tbackend, threads (T)\tmicroseconds\n",
		BATCH);
	fprintf(f,
		"plot\tload_latency\tlogbars\tLoad latency per batch of %d pages, text data"
		"\tbackend, threads (T)\tmicroseconds\n",
		BATCH);
	for (unsigned int i = 0; i < nr_results; i++) {
		const struct run_result *r = &results[i];

		if (r->kind != DATA_TEXT)
			continue;
		snprintf(label, sizeof(label), "%s%s%s%s%s%s %uT", r->backend,
			 strcmp(r->codec, "-") ? " " : "", strcmp(r->codec, "-") ? r->codec : "",
			 r->nr_shards == 1 ? " 1 lock" : "", r->seal > SEAL_OFF ? " sealed " : "",
			 r->seal > SEAL_OFF ? seal_names[r->seal] : "", r->nr_threads);
		for (int p = 0; p < 3; p++) {
			fprintf(f, "point\tstore_latency\t%s\t%s\t%.1f\n", pct_names[p], label,
				r->store_us[p]);
			fprintf(f, "point\tload_latency\t%s\t%s\t%.1f\n", pct_names[p], label,
				r->load_us[p]);
		}
	}
	fprintf(f, "subject\tbackend\n");
	fprintf(f, "param\tbatches\t%u per thread of %d pages (%u MiB per thread)\n", nr_batches,
		BATCH, nr_batches * BATCH / 256);
	fprintf(f, "param\tdata\tsparse: ~4 %% random bytes; text: a 30-letter alphabet (about 2:1"
		   " with lz4); random: incompressible; fixed seeds\n");
	fprintf(f,
		"param\tfile backend\tswap file in %s; encrypt on: AES-256-GCM where the CPU"
		" has AES-NI, else XChaCha20-Poly1305; xchacha: forced\n",
		dir);
	fprintf(f,
		"note\tMB/s: pages stored (or loaded) over the wall time of the slowest thread;"
		" a latency is one batch of %d pages.\n",
		BATCH);
	if (fclose(f)) {
		fprintf(stderr, "backend_bench: %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Sealed over plaintext, file backend: the cost of encrypt=on, as ratios. */
static void print_seal_ratios(void)
{
	for (unsigned int i = 0; i < nr_results; i++) {
		const struct run_result *r = &results[i], *plain;

		if (r->seal != SEAL_ON && r->seal != SEAL_XCHACHA)
			continue;
		plain = find_result(r->backend, "-", 0, SEAL_OFF, r->kind, r->nr_threads);
		if (!plain)
			continue;
		printf("# %s %s, encrypt %s vs off, %u thread%s: store %.0f/%.0f MB/s = %.2f,"
		       " load %.0f/%.0f MB/s = %.2f\n",
		       r->backend, data_names[r->kind], seal_names[r->seal], r->nr_threads,
		       r->nr_threads > 1 ? "s" : "", r->store_mbps, plain->store_mbps,
		       r->store_mbps / plain->store_mbps, r->load_mbps, plain->load_mbps,
		       r->load_mbps / plain->load_mbps);
	}
}

static int usage(FILE *out, int status)
{
	fprintf(out,
		"usage: backend_bench [--quick] [--batches N] [--dir DIR] [--backend NAME]"
		" [--results FILE]\n\n"
		"  --quick         16 batches per thread (smoke test)\n"
		"  --batches N     batches of %d pages per thread (default 2048: 256 MiB)\n"
		"  --dir DIR       where the file backend's swap file goes (/var/tmp)\n"
		"  --backend NAME  only this backend (all)\n"
		"  --results FILE  append TSV records for bench/run (see bench/run)\n",
		BATCH);
	return status;
}

int main(int argc, char **argv)
{
	unsigned int nr_batches = 2048; /* 256 MiB per thread */
	const char *dir = "/var/tmp", *results_path = NULL, *only = NULL;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			nr_batches = 16;
		} else if (!strcmp(argv[i], "--batches") && i + 1 < argc) {
			char *end;
			unsigned long n = strtoul(argv[++i], &end, 10);

			if (*end || !n || n > 1u << 20)
				return usage(stderr, 2);
			nr_batches = (unsigned int)n;
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
			only = argv[++i];
			if (!backend_find(only))
				return usage(stderr, 2);
		} else if (!strcmp(argv[i], "--results") && i + 1 < argc) {
			results_path = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			return usage(stdout, 0);
		} else {
			return usage(stderr, 2);
		}
	}
	printf("# backend_bench: batch %d pages, %u batches per thread, swap dir %s\n", BATCH,
	       nr_batches, dir);
	printf("# latencies are per batch of %d pages, in microseconds; contended = shard lock found taken\n",
	       BATCH);
	printf("# encrypt (file): on = AES-256-GCM where the CPU has AES-NI, else XChaCha20-Poly1305\n");
	printf("%-8s %-5s %6s %-7s %-6s %7s | %8s %8s | %7s %7s %7s | %7s %7s %7s | %8s\n",
	       "backend", "codec", "shards", "encrypt", "data", "threads", "store", "load",
	       "st p50", "st p99", "st p999", "ld p50", "ld p99", "ld p999", "contended");
	printf("%-8s %-5s %6s %-7s %-6s %7s | %8s %8s |\n", "", "", "", "", "", "", "MB/s", "MB/s");
	for (const struct tier_backend_ops *const *b = backend_table; *b; b++) {
		bool is_zpool = !strcmp((*b)->name, "zpool");
		bool is_file = !strcmp((*b)->name, "file");
		bool is_redis = !strcmp((*b)->name, "redis");

		if (only && strcmp((*b)->name, only))
			continue;
		if (is_redis && !getenv("TIERFS_TEST_REDIS")) {
			printf("# redis: no servers (TIERFS_TEST_REDIS), not measured\n");
			continue;
		}

		for (const struct codec *const *k = codec_table; *k; k++) {
			if (!is_zpool && k != codec_table)
				break;
			for (unsigned int shards = 0; shards <= (is_zpool ? 1u : 0u); shards++)
				for (int kind = 0; kind < NR_DATA_KINDS; kind++)
					for (unsigned int th = 1; th <= 2; th++) {
						struct run r = {
							.ops = *b,
							.codec = is_zpool || is_redis ? *k : NULL,
							.nr_shards = shards,
							.seal = is_file	 ? SEAL_OFF :
								is_redis ? SEAL_ON :
									   SEAL_NONE,
							.kind = kind,
							.nr_threads = th,
							.nr_batches = nr_batches,
							.dir = dir,
						};

						failed |= run_one(&r) != 0;
						/*
						 * The seals cost the same on any data: text,
						 * right after its plaintext run, for a ratio
						 * of two runs close in time.
						 */
						for (r.seal = SEAL_ON;
						     is_file && kind == DATA_TEXT &&
						     r.seal <= SEAL_XCHACHA;
						     r.seal++)
							failed |= run_one(&r) != 0;
					}
		}
	}
	print_seal_ratios();
	if (results_path && write_results(results_path, nr_batches, dir))
		failed = 1;
	return failed ? 1 : 0;
}
