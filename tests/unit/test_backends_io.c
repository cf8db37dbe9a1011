// SPDX-License-Identifier: MIT
/*
 * The ramdisk and file backends: byte-exact round trips in batches, reuse of
 * freed slots, a full backend, stats, two threads at once, and for the file
 * backend an anonymous swap file, on /tmp, /var/tmp, /dev/shm and (as root,
 * in a mount namespace of its own) ramfs, which has neither O_DIRECT nor
 * fallocate, plus I/O errors provoked with RLIMIT_FSIZE and a truncated file,
 * the paths the file backend refuses to trust, and its seals: sealed,
 * plaintext and with the software cipher, a tampered slot fails alone,
 * each backend has its own key, locked in memory, and no plaintext reaches
 * the file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include "tierfs/backend.h"

#include "check.h"

#define NR_ROUND_TRIP_PAGES 1024
#define THREAD_SECONDS 1.0
#define THREAD_MAX_HELD 1024

static uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* A page whose every word follows from seed, so any mix-up shows. */
static void page_fill(void *page, uint64_t seed)
{
	uint64_t state = seed * 0x9e3779b97f4a7c15ULL | 1, *words = page;

	for (size_t i = 0; i < PAGE_SIZE / sizeof(*words); i++)
		words[i] = xorshift64(&state);
}

static bool page_matches(const void *page, uint64_t seed)
{
	uint64_t state = seed * 0x9e3779b97f4a7c15ULL | 1;
	const uint64_t *words = page;

	for (size_t i = 0; i < PAGE_SIZE / sizeof(*words); i++)
		if (words[i] != xorshift64(&state))
			return false;
	return true;
}

/* nr PAGE_SIZE-aligned pages, like the page pool's. */
static void **pages_new(unsigned int nr)
{
	void **pages = calloc(nr, sizeof(*pages));
	char *mem = aligned_alloc(PAGE_SIZE, (size_t)nr * PAGE_SIZE);

	if (!pages || !mem) {
		fprintf(stderr, "out of memory\n");
		exit(T_EXIT_FAIL);
	}
	for (unsigned int i = 0; i < nr; i++)
		pages[i] = mem + (size_t)i * PAGE_SIZE;
	return pages;
}

static void pages_free(void **pages)
{
	if (pages)
		free(pages[0]);
	free(pages);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One backend under test: how to make it, and where (file backend). */
struct target {
	const struct tier_backend_ops *ops;
	const char *dir; /* file: a fresh directory of its own */
	char path[PATH_MAX];
	bool is_plaintext; /* file: encrypt=off */
	bool is_xchacha;   /* file: the software cipher even with AES-NI */
};

static struct tier_backend *target_create(struct target *t, uint64_t nr_pages)
{
	struct backend_config cfg = { .capacity_bytes = nr_pages * PAGE_SIZE,
				      .path = t->path,
				      .is_plaintext = t->is_plaintext,
				      .is_xchacha = t->is_xchacha };
	struct tier_backend *b = NULL;
	int ret = t->ops->create(&cfg, &b);

	if (!CHECK_EQ(0, ret))
		return NULL;
	CHECK(b != NULL && b->ops == t->ops);
	return b;
}

static struct backend_stats stats_of(struct tier_backend *b)
{
	struct backend_stats st;

	b->ops->get_stats(b, &st);
	return st;
}

/* Store pages seeded seeds[0..nr) in batches of batch; every store must fit. */
static bool store_all(struct tier_backend *b, void **pages, const uint64_t *seeds, uint64_t *slots,
		      unsigned int nr, unsigned int batch)
{
	for (unsigned int i = 0; i < nr; i += batch) {
		unsigned int n = nr - i < batch ? nr - i : batch;

		for (unsigned int k = 0; k < n; k++)
			page_fill(pages[k], seeds[i + k]);
		if (!CHECK_EQ((int)n, b->ops->store(b, pages, n, slots + i)))
			return false;
	}
	return true;
}

/* Load slots in batches and compare with the seeds; counts bad pages. */
static unsigned int load_check(struct tier_backend *b, void **pages, const uint64_t *seeds,
			       const uint64_t *slots, unsigned int nr, unsigned int batch)
{
	unsigned int nr_bad = 0;

	for (unsigned int i = 0; i < nr; i += batch) {
		unsigned int n = nr - i < batch ? nr - i : batch;

		for (unsigned int k = 0; k < n; k++)
			memset(pages[k], 0xa5, PAGE_SIZE);
		if (!CHECK_EQ(0, b->ops->load(b, slots + i, pages, n)))
			return nr - i;
		for (unsigned int k = 0; k < n; k++)
			nr_bad += !page_matches(pages[k], seeds[i + k]);
	}
	return nr_bad;
}

static bool slots_unique(const uint64_t *slots, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		for (unsigned int k = i + 1; k < nr; k++)
			if (slots[i] == slots[k])
				return false;
	return true;
}

static void free_in_batches(struct tier_backend *b, const uint64_t *slots, unsigned int nr,
			    unsigned int batch)
{
	for (unsigned int i = 0; i < nr; i += batch)
		b->ops->free(b, slots + i, nr - i < batch ? nr - i : batch);
}

static void check_empty(struct tier_backend *b)
{
	struct backend_stats st = stats_of(b);

	CHECK_EQ(0, st.stored_pages);
	CHECK_EQ(0, st.stored_bytes);
	CHECK_EQ(0, st.pool_bytes);
}

static void test_round_trips(struct target *t)
{
	static const unsigned int batches[] = { 1, 7, 32, 256 };
	unsigned int nr = NR_ROUND_TRIP_PAGES;
	uint64_t *seeds = calloc(nr, sizeof(*seeds)), *slots = calloc(nr, sizeof(*slots));
	uint64_t *reversed_seeds = calloc(nr, sizeof(*seeds));
	uint64_t *reversed_slots = calloc(nr, sizeof(*slots));
	void **pages = pages_new(256);
	struct tier_backend *b = target_create(t, 4 * nr);

	for (size_t i = 0; b && i < sizeof(batches) / sizeof(batches[0]); i++) {
		unsigned int batch = batches[i];
		struct backend_stats st;

		check_set_context("%s round trip, batch %u", t->ops->name, batch);
		for (unsigned int k = 0; k < nr; k++)
			seeds[k] = (uint64_t)batch << 32 | k;
		if (!store_all(b, pages, seeds, slots, nr, batch))
			break;
		CHECK(slots_unique(slots, nr));
		st = stats_of(b);
		CHECK_EQ((uint64_t)nr, st.stored_pages);
		CHECK_EQ((uint64_t)nr * PAGE_SIZE, st.stored_bytes);
		CHECK(st.pool_bytes >= (uint64_t)nr * PAGE_SIZE);
		CHECK(st.pool_bytes <= st.capacity_bytes + (1 << 20));
		CHECK_EQ(0u, load_check(b, pages, seeds, slots, nr, batch));
		/* Backwards: no two neighbours are contiguous slots any more. */
		for (unsigned int k = 0; k < nr; k++) {
			reversed_seeds[k] = seeds[nr - 1 - k];
			reversed_slots[k] = slots[nr - 1 - k];
		}
		CHECK_EQ(0u, load_check(b, pages, reversed_seeds, reversed_slots, nr, batch));
		free_in_batches(b, slots, nr, batch);
		check_empty(b);
	}
	if (b) {
		struct backend_stats st = stats_of(b);
		uint64_t expected = (uint64_t)nr * (sizeof(batches) / sizeof(batches[0]));

		check_set_context("%s round trip counters", t->ops->name);
		CHECK_EQ(expected, st.nr_stores);
		CHECK_EQ(2 * expected, st.nr_loads);
		CHECK_EQ(expected, st.nr_frees);
		CHECK_EQ(0, st.nr_store_errors);
		CHECK_EQ(0, st.nr_load_errors);
		CHECK_EQ(0, st.nr_reject_full);
		CHECK_EQ(0, st.nr_reject_alloc);
		b->ops->destroy(b);
	}
	check_clear_context();
	pages_free(pages);
	free(seeds);
	free(slots);
	free(reversed_seeds);
	free(reversed_slots);
}

/* Fill a backend, free every other page, fill the holes, lose nothing. */
static void test_free_reuse(struct target *t)
{
	enum { NR = 64 };
	uint64_t seeds[NR], slots[NR], freed[NR / 2], one;
	void **pages = pages_new(NR);
	struct tier_backend *b = target_create(t, NR);

	check_set_context("%s free and reuse", t->ops->name);
	for (unsigned int i = 0; i < NR; i++)
		seeds[i] = 1000 + i;
	if (!b || !store_all(b, pages, seeds, slots, NR, NR))
		goto out;
	page_fill(pages[0], 1);
	CHECK_EQ(-ENOSPC, b->ops->store(b, pages, 1, &one));
	for (unsigned int i = 0; i < NR / 2; i++)
		freed[i] = slots[2 * i + 1];
	b->ops->free(b, freed, NR / 2);
	CHECK_EQ((uint64_t)NR / 2, stats_of(b).stored_pages);
	for (unsigned int i = 0; i < NR / 2; i++)
		seeds[2 * i + 1] = 2000 + i;
	for (unsigned int i = 0; i < NR / 2; i++)
		page_fill(pages[i], seeds[2 * i + 1]);
	if (!CHECK_EQ(NR / 2, b->ops->store(b, pages, NR / 2, freed)))
		goto out;
	for (unsigned int i = 0; i < NR / 2; i++)
		slots[2 * i + 1] = freed[i];
	CHECK(slots_unique(slots, NR));
	CHECK_EQ(0u, load_check(b, pages, seeds, slots, NR, NR));
	free_in_batches(b, slots, NR, 5);
	check_empty(b);
out:
	check_clear_context();
	if (b)
		b->ops->destroy(b);
	pages_free(pages);
}

/* 1000 pages of room, stores of 256: three fit, a prefix, then nothing. */
static void test_full(struct target *t)
{
	enum { NR = 1000, BATCH = 256 };
	uint64_t seeds[NR + BATCH], slots[NR + BATCH];
	void **pages = pages_new(BATCH);
	struct tier_backend *b = target_create(t, NR);
	unsigned int nr_stored = 0;
	struct backend_stats st;

	check_set_context("%s full", t->ops->name);
	if (!b)
		goto out;
	CHECK_EQ((uint64_t)NR * PAGE_SIZE, stats_of(b).capacity_bytes);
	for (unsigned int i = 0; i < NR + BATCH; i++)
		seeds[i] = 5000 + i;
	for (unsigned int round = 0; round < 5; round++) {
		unsigned int expected = NR - nr_stored < BATCH ? NR - nr_stored : BATCH;
		int ret;

		for (unsigned int k = 0; k < BATCH; k++)
			page_fill(pages[k], seeds[nr_stored + k]);
		ret = b->ops->store(b, pages, BATCH, slots + nr_stored);
		if (expected)
			CHECK_EQ((int)expected, ret);
		else
			CHECK_EQ(-ENOSPC, ret);
		if (ret > 0)
			nr_stored += (unsigned int)ret;
	}
	CHECK_EQ((unsigned int)NR, nr_stored);
	CHECK(slots_unique(slots, nr_stored));
	st = stats_of(b);
	CHECK_EQ((uint64_t)NR, st.stored_pages);
	CHECK_EQ((uint64_t)(5 * BATCH - NR), st.nr_reject_full);
	CHECK_EQ(0u, load_check(b, pages, seeds, slots, nr_stored, 32));
	free_in_batches(b, slots, nr_stored, 100);
	check_empty(b);
out:
	check_clear_context();
	if (b)
		b->ops->destroy(b);
	pages_free(pages);
}

struct worker {
	struct tier_backend *b;
	pthread_t thread;
	unsigned int id;
	uint64_t nr_rounds, nr_pages_checked, nr_bad, nr_errors;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct tier_backend *b = w->b;
	uint64_t held_slots[THREAD_MAX_HELD], held_seeds[THREAD_MAX_HELD], check_slots[64];
	uint64_t check_seeds[64], rng = 0x1234567ULL + w->id, next_seed = (uint64_t)w->id << 40;
	void **pages = pages_new(64);
	unsigned int nr_held = 0;
	double end = now() + THREAD_SECONDS;

	while (now() < end) {
		unsigned int n = 1 + (unsigned int)(xorshift64(&rng) % 64);
		int ret;

		/* Store a batch. */
		if (nr_held + n > THREAD_MAX_HELD)
			n = THREAD_MAX_HELD - nr_held;
		for (unsigned int k = 0; k < n; k++) {
			held_seeds[nr_held + k] = next_seed + k;
			page_fill(pages[k], next_seed + k);
		}
		next_seed += n;
		ret = n ? b->ops->store(b, pages, n, held_slots + nr_held) : 0;
		if (ret > 0)
			nr_held += (unsigned int)ret;
		else if (ret < 0 && ret != -ENOSPC && w->nr_errors++ == 0)
			printf("# thread %u: store of %u: %s\n", w->id, n, strerror(-ret));

		/* Load a random selection of what is held, in one batch. */
		n = nr_held < 64 ? nr_held : 64;
		for (unsigned int k = 0; k < n; k++) {
			unsigned int pick = (unsigned int)(xorshift64(&rng) % nr_held);

			check_slots[k] = held_slots[pick];
			check_seeds[k] = held_seeds[pick];
		}
		ret = n ? b->ops->load(b, check_slots, pages, n) : 0;
		if (ret < 0 && w->nr_errors++ == 0)
			printf("# thread %u: load of %u: %s\n", w->id, n, strerror(-ret));
		for (unsigned int k = 0; k < n; k++)
			w->nr_bad += !page_matches(pages[k], check_seeds[k]);
		w->nr_pages_checked += n;

		/* Free a random run of what is held. */
		n = nr_held ? (unsigned int)(xorshift64(&rng) % (nr_held / 2 + 1)) : 0;
		if (n) {
			unsigned int from = (unsigned int)(xorshift64(&rng) % (nr_held - n + 1));

			b->ops->free(b, held_slots + from, n);
			memmove(held_slots + from, held_slots + from + n,
				(nr_held - from - n) * sizeof(*held_slots));
			memmove(held_seeds + from, held_seeds + from + n,
				(nr_held - from - n) * sizeof(*held_seeds));
			nr_held -= n;
		}
		w->nr_rounds++;
	}
	for (unsigned int i = 0; i < nr_held; i += 64) {
		unsigned int n = nr_held - i < 64 ? nr_held - i : 64;

		if (b->ops->load(b, held_slots + i, pages, n) < 0)
			w->nr_errors++;
		for (unsigned int k = 0; k < n; k++)
			w->nr_bad += !page_matches(pages[k], held_seeds[i + k]);
		w->nr_pages_checked += n;
	}
	free_in_batches(b, held_slots, nr_held, 64);
	pages_free(pages);
	return NULL;
}

static void test_threads(struct target *t)
{
	struct worker workers[2];
	struct tier_backend *b = target_create(t, 4 * THREAD_MAX_HELD);

	check_set_context("%s two threads", t->ops->name);
	if (!b)
		goto out;
	for (unsigned int i = 0; i < 2; i++) {
		workers[i] = (struct worker){ .b = b, .id = i + 1 };
		if (!CHECK_EQ(0, pthread_create(&workers[i].thread, NULL, worker_run, &workers[i])))
			exit(T_EXIT_FAIL);
	}
	for (unsigned int i = 0; i < 2; i++) {
		pthread_join(workers[i].thread, NULL);
		CHECK_EQ(0, workers[i].nr_bad);
		CHECK_EQ(0, workers[i].nr_errors);
		CHECK(workers[i].nr_rounds > 10);
		if (check_is_verbose())
			printf("# %s thread %u: %" PRIu64 " rounds, %" PRIu64 " pages checked\n",
			       t->ops->name, i, workers[i].nr_rounds, workers[i].nr_pages_checked);
	}
	check_empty(b);
	b->ops->destroy(b);
out:
	check_clear_context();
}

static void test_backend(struct target *t)
{
	test_round_trips(t);
	test_free_reuse(t);
	test_full(t);
	test_threads(t);
}

/* One thread's stores or frees, so that each has the home shard of a thread of its own. */
struct shard_job {
	struct tier_backend *b;
	void **pages;
	uint64_t *slots;
	unsigned int nr;
	bool is_free;
	int ret;
};

static void *shard_job_run(void *arg)
{
	struct shard_job *j = arg;

	if (j->is_free)
		j->b->ops->free(j->b, j->slots, j->nr);
	else
		j->ret = j->b->ops->store(j->b, j->pages, j->nr, j->slots);
	return NULL;
}

static int run_in_thread(struct shard_job *j)
{
	pthread_t thread;

	if (!CHECK_EQ(0, pthread_create(&thread, NULL, shard_job_run, j)))
		return -1;
	pthread_join(thread, NULL);
	return j->ret;
}

/*
 * Loads free pages in the shards of their slots, stores come from the
 * storing thread's: a thread with another home shard fills the holes
 * another left before the pool maps a chunk more.
 */
static void test_ramdisk_holes(const struct tier_backend_ops *ops)
{
	enum { NR = 128 };
	struct backend_config cfg = { .capacity_bytes = 4096 * PAGE_SIZE, .nr_shards = 2 };
	uint64_t seeds[NR], slots[NR], holes[NR / 2];
	void **pages = pages_new(NR);
	struct tier_backend *b = NULL;
	struct shard_job j;
	uint64_t pool;

	check_set_context("ramdisk: holes filled across shards");
	if (!CHECK_EQ(0, ops->create(&cfg, &b)))
		goto out;
	for (unsigned int i = 0; i < NR; i++)
		page_fill(pages[i], seeds[i] = 3000 + i);
	j = (struct shard_job){ .b = b, .pages = pages, .slots = slots, .nr = NR };
	if (!CHECK_EQ(NR, run_in_thread(&j)))
		goto out;
	for (unsigned int i = 0; i < NR / 2; i++)
		holes[i] = slots[2 * i]; /* every other page: no chunk empties */
	j = (struct shard_job){ .b = b, .slots = holes, .nr = NR / 2, .is_free = true };
	run_in_thread(&j);
	pool = stats_of(b).pool_bytes;
	for (unsigned int i = 0; i < NR / 2; i++)
		page_fill(pages[i], seeds[2 * i] = 4000 + i);
	j = (struct shard_job){ .b = b, .pages = pages, .slots = holes, .nr = NR / 2 };
	if (!CHECK_EQ(NR / 2, run_in_thread(&j)))
		goto out;
	CHECK_EQ(pool, stats_of(b).pool_bytes);
	CHECK_EQ((uint64_t)NR, stats_of(b).stored_pages);
	for (unsigned int i = 0; i < NR / 2; i++)
		slots[2 * i] = holes[i];
	CHECK_EQ(0u, load_check(b, pages, seeds, slots, NR, NR));
out:
	check_clear_context();
	if (b)
		b->ops->destroy(b);
	pages_free(pages);
}

/* Entries of dir other than . and .. */
static unsigned int dir_nr_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned int nr = 0;

	if (!d)
		return UINT_MAX;
	while ((e = readdir(d)))
		nr += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return nr;
}

/* The swap file leaves no name behind, whether path names a file or the directory. */
static void test_file_anonymous(struct target *t)
{
	struct tier_backend *b;

	check_set_context("file in %s: no name", t->dir);
	b = target_create(t, 16);
	if (b) {
		CHECK_EQ(0u, dir_nr_entries(t->dir));
		CHECK(access(t->path, F_OK) < 0 && errno == ENOENT);
		b->ops->destroy(b);
	}

	snprintf(t->path, sizeof(t->path), "%s", t->dir);
	b = target_create(t, 16);
	if (b) {
		CHECK_EQ(0u, dir_nr_entries(t->dir));
		CHECK_EQ(16 * PAGE_SIZE, stats_of(b).capacity_bytes);
		b->ops->destroy(b);
	}
	snprintf(t->path, sizeof(t->path), "%s/swap", t->dir);
	check_clear_context();
}

/* Make every open with O_TMPFILE fail with EOPNOTSUPP, as a filesystem without it does. */
static bool deny_tmpfile(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_TMPFILE & ~O_DIRECTORY, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	return !prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) &&
	       !prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/*
 * Without O_TMPFILE the swap file is made under a name no one can guess
 * and unlinked at once: a file already at path (a swap file prepared
 * beforehand) neither stops it nor is touched, nor does a directory path;
 * no name is left.  In a child, whose syscalls a seccomp filter changes.
 */
static void test_file_no_tmpfile(struct target *t)
{
	uint64_t seed = 4242, slot;
	void **pages = pages_new(1);
	int status = -1, fd;
	pid_t pid;

	check_set_context("file in %s: no O_TMPFILE", t->dir);
	fd = open(t->path, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (!CHECK(fd >= 0))
		goto out;
	CHECK(pwrite(fd, "prepared", 8, 0) == 8);
	close(fd);
	pid = fork();
	if (pid == 0) {
		struct tier_backend *b;
		char back[8];

		if (!deny_tmpfile()) {
			printf("# skip no O_TMPFILE: seccomp: %s\n", strerror(errno));
			_exit(T_EXIT_SKIP);
		}
		CHECK(open(t->dir, O_TMPFILE | O_RDWR, 0600) < 0 && errno == EOPNOTSUPP);
		b = target_create(t, 16);
		if (b) {
			CHECK_EQ(1u, dir_nr_entries(t->dir));
			if (store_all(b, pages, &seed, &slot, 1, 1))
				CHECK_EQ(0u, load_check(b, pages, &seed, &slot, 1, 1));
			b->ops->destroy(b);
		}
		fd = open(t->path, O_RDONLY);
		CHECK(fd >= 0 && pread(fd, back, 8, 0) == 8 && !memcmp(back, "prepared", 8));
		CHECK(fd >= 0 && lseek(fd, 0, SEEK_END) == 8);
		close(fd);
		unlink(t->path);
		snprintf(t->path, sizeof(t->path), "%s", t->dir);
		b = target_create(t, 16);
		if (b) {
			CHECK_EQ(0u, dir_nr_entries(t->dir));
			b->ops->destroy(b);
		}
		_exit(check_nr_failed ? T_EXIT_FAIL : T_EXIT_PASS);
	}
	if (CHECK(pid > 0))
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      (WEXITSTATUS(status) == T_EXIT_PASS || WEXITSTATUS(status) == T_EXIT_SKIP));
	unlink(t->path);
	CHECK_EQ(0u, dir_nr_entries(t->dir));
out:
	pages_free(pages);
	check_clear_context();
}

/* capacity 0: an existing regular file gives the size and stays untouched. */
static void test_file_capacity_from_file(struct target *t)
{
	char sized[PATH_MAX + 16], content[100], back[100];
	struct backend_config cfg = { .path = sized };
	struct tier_backend *b = NULL;
	struct stat st;
	int fd;

	check_set_context("file in %s: capacity 0", t->dir);
	snprintf(sized, sizeof(sized), "%s/sized", t->dir);
	CHECK_EQ(-EINVAL, t->ops->create(&cfg, &b));
	fd = open(sized, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (!CHECK(fd >= 0))
		goto out;
	memset(content, 'z', sizeof(content));
	CHECK(pwrite(fd, content, sizeof(content), 0) == (ssize_t)sizeof(content));
	CHECK_EQ(0, ftruncate(fd, (off_t)(256 * PAGE_SIZE + 100)));
	if (CHECK_EQ(0, t->ops->create(&cfg, &b))) {
		CHECK_EQ(256 * PAGE_SIZE, stats_of(b).capacity_bytes);
		b->ops->destroy(b);
	}
	CHECK(fstat(fd, &st) == 0 && st.st_size == (off_t)(256 * PAGE_SIZE + 100));
	CHECK(pread(fd, back, sizeof(back), 0) == (ssize_t)sizeof(back));
	CHECK_MEM(content, back, sizeof(back));
	close(fd);
	unlink(sized);

	cfg.path = t->dir;
	CHECK_EQ(-EINVAL, t->ops->create(&cfg, &b));
out:
	check_clear_context();
}

/*
 * What others may have put at the path is never trusted: a symlink, a file
 * of someone else's, a directory others can write to without the sticky
 * bit.  Each is refused with why, naming the path; a sticky one is fine.
 */
static void test_file_trust(struct target *t)
{
	char path[PATH_MAX + 32], sub[PATH_MAX + 16], why[PATH_MAX + 64];
	struct backend_config cfg = { .capacity_bytes = 16 * PAGE_SIZE, .path = path };
	struct tier_backend *b = NULL;
	struct stat st;
	int fd;

	check_set_context("file in %s: trust", t->dir);
	snprintf(path, sizeof(path), "%s/link", t->dir);
	CHECK_EQ(0, symlink(t->dir, path));
	CHECK_EQ(-ELOOP, t->ops->check_path(path, &st, why, sizeof(why)));
	CHECK(strstr(why, path) && strstr(why, "is a symlink"));
	CHECK_EQ(-ELOOP, t->ops->create(&cfg, &b));
	unlink(path);

	if (geteuid() != 0) {
		printf("# skip foreign owners: not root\n");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/foreign", t->dir);
	fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (CHECK(fd >= 0)) {
		CHECK_EQ(0, fchown(fd, 65534, 65534));
		close(fd);
	}
	CHECK_EQ(-EPERM, t->ops->check_path(path, &st, why, sizeof(why)));
	CHECK(strstr(why, "owned by uid 65534, not by root") != NULL);
	cfg.capacity_bytes = 0;
	CHECK_EQ(-EPERM, t->ops->create(&cfg, &b));
	cfg.capacity_bytes = 16 * PAGE_SIZE;
	unlink(path);

	snprintf(sub, sizeof(sub), "%s/open", t->dir);
	snprintf(path, sizeof(path), "%s/swap", sub);
	CHECK_EQ(0, mkdir(sub, 0700));
	CHECK_EQ(0, chown(sub, 65534, 65534));
	CHECK_EQ(0, chmod(sub, 0777));
	CHECK_EQ(-EPERM, t->ops->check_path(path, &st, why, sizeof(why)));
	CHECK(strstr(why, sub) && strstr(why, "owned by uid 65534"));
	CHECK_EQ(-EPERM, t->ops->create(&cfg, &b));
	CHECK_EQ(0, chown(sub, 0, 0));
	CHECK_EQ(-EPERM, t->ops->check_path(path, &st, why, sizeof(why)));
	CHECK(strstr(why, "writable by others and not sticky") != NULL);
	CHECK_EQ(0, chmod(sub, 01777));
	CHECK_EQ(0, t->ops->check_path(path, &st, why, sizeof(why)));
	if (CHECK_EQ(0, t->ops->create(&cfg, &b)))
		b->ops->destroy(b);
	rmdir(sub);
out:
	check_clear_context();
}

/* The backend's file among our fds: the one open on a deleted name in dir, but not not_fd. */
static int find_swap_fd_but(const char *dir, int not_fd)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char link[300], target[PATH_MAX];
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (!strncmp(target, dir, strlen(dir)) && strstr(target, "(deleted)") &&
		    atoi(e->d_name) != not_fd)
			found = atoi(e->d_name);
	}
	closedir(d);
	return found;
}

static int find_swap_fd(const char *dir)
{
	return find_swap_fd_but(dir, -1);
}

/* The swap file of fd opened again, without O_DIRECT, to look at it byte by byte. */
static int reopen_swap_fd(int fd)
{
	char link[64];

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	return open(link, O_RDWR | O_CLOEXEC);
}

/* A page of text, the same all through, that cannot be missed in the file. */
static void page_fill_marker(void *page)
{
	static const char marker[] = "tierfs-plaintext-marker:";

	for (size_t i = 0; i < PAGE_SIZE; i++)
		((char *)page)[i] = marker[i % (sizeof(marker) - 1)];
}

static bool file_has_marker(int fd)
{
	static char buf[1 << 16];
	ssize_t len;
	off_t off = 0;

	while ((len = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (memmem(buf, (size_t)len, "tierfs-plaintext-marker:", 24))
			return true;
		off += len;
	}
	return false;
}

/* kB of memory this process has locked, from /proc/self/status; -1 unknown. */
static long locked_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * The key is locked in memory, and again in a child after fork(), as the
 * daemon forks into the background after making its backend.
 */
static void test_file_key_locked(struct target *t)
{
	const char *sanitized = getenv("TIERFS_SANITIZED");
	long before = locked_kib();
	struct tier_backend *b;
	int status = -1;
	pid_t pid;

	check_set_context("file in %s: key locked", t->dir);
	b = target_create(t, 16);
	if (!b)
		goto out;
	if (before < 0) {
		printf("# skip key lock: no VmLck in /proc/self/status\n");
		goto destroy;
	}
	/* ASan's and TSan's mlock() do nothing, by design. */
	if (sanitized && (strstr(sanitized, "address") || strstr(sanitized, "thread"))) {
		printf("# skip key lock: mlock is a no-op under %s\n", sanitized);
		goto destroy;
	}
	CHECK(locked_kib() > before);
	pid = fork();
	if (pid == 0)
		_exit(locked_kib() > 0 ? 0 : 1);
	if (CHECK(pid > 0))
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0);
destroy:
	b->ops->destroy(b);
out:
	check_clear_context();
}

/*
 * A byte flipped in one sealed slot on disk: that slot's load fails with
 * -EIO and is counted, alone or in a batch, and every other slot loads.
 */
static void test_file_tamper(struct target *t)
{
	enum { NR = 64, BAD = 10 };
	uint64_t seeds[NR], slots[NR];
	void **pages = pages_new(NR);
	struct tier_backend *b = target_create(t, 128);
	struct backend_stats st;
	unsigned char byte;
	int fd = -1;
	off_t off;

	check_set_context("file in %s%s: tampered slot", t->dir, t->is_xchacha ? ", xchacha" : "");
	if (!b)
		goto out;
	for (unsigned int i = 0; i < NR; i++) {
		seeds[i] = 7000 + i;
		page_fill(pages[i], seeds[i]);
	}
	if (!store_all(b, pages, seeds, slots, NR, NR))
		goto destroy;
	fd = reopen_swap_fd(find_swap_fd(t->dir));
	if (!CHECK(fd >= 0))
		goto destroy;
	off = (off_t)(slots[BAD] * PAGE_SIZE + 1234);
	CHECK(pread(fd, &byte, 1, off) == 1);
	byte ^= 0x20;
	CHECK(pwrite(fd, &byte, 1, off) == 1);
	fsync(fd);
	CHECK_EQ(-EIO, b->ops->load(b, slots + BAD, pages, 1));
	st = stats_of(b);
	CHECK_EQ(1u, (unsigned int)st.nr_decrypt_errors);
	CHECK_EQ(1u, (unsigned int)st.nr_load_errors);
	CHECK_EQ(-EIO, b->ops->load(b, slots, pages, NR));
	CHECK_EQ(2u, (unsigned int)stats_of(b).nr_decrypt_errors);
	CHECK_EQ(0u, load_check(b, pages, seeds, slots, BAD, 8));
	CHECK_EQ(0u, load_check(b, pages, seeds + BAD + 1, slots + BAD + 1, NR - BAD - 1, 16));
	/* Stored afresh, the slot is sound again. */
	b->ops->free(b, slots + BAD, 1);
	page_fill(pages[0], seeds[BAD]);
	CHECK_EQ(1, b->ops->store(b, pages, 1, slots + BAD));
	CHECK_EQ(0u, load_check(b, pages, seeds, slots, NR, NR));
	CHECK_EQ(2u, (unsigned int)stats_of(b).nr_decrypt_errors);
	free_in_batches(b, slots, NR, 16);
	check_empty(b);
destroy:
	if (fd >= 0)
		close(fd);
	b->ops->destroy(b);
out:
	check_clear_context();
	pages_free(pages);
}

int file_test_set_gen(struct tier_backend *tb, uint64_t slot, uint32_t gen);

/*
 * A slot's nonce is the slot and how many times it was sealed: sealed for
 * the last time, the slot still loads, and once freed it is retired, so
 * that no nonce comes round again; the backend is one slot smaller.
 */
static void test_file_last_nonce(struct target *t)
{
	enum { NR = 16, LAST = 5 };
	uint64_t seeds[NR], slots[NR], slot;
	void **pages = pages_new(NR);
	struct tier_backend *b = target_create(t, NR);

	check_set_context("file in %s%s: last nonce", t->dir, t->is_xchacha ? ", xchacha" : "");
	if (!b)
		goto out;
	for (unsigned int i = 0; i < NR; i++) {
		seeds[i] = 9000 + i;
		page_fill(pages[i], seeds[i]);
	}
	if (!store_all(b, pages, seeds, slots, NR, NR))
		goto destroy;
	/* The one free slot is the next store's: sealed then for the last time. */
	slot = slots[LAST];
	b->ops->free(b, &slot, 1);
	CHECK_EQ(0, file_test_set_gen(b, slot, UINT32_MAX - 1));
	page_fill(pages[0], seeds[LAST]);
	CHECK_EQ(1, b->ops->store(b, pages, 1, slots + LAST));
	CHECK_EQ(slot, slots[LAST]);
	CHECK_EQ(0u, load_check(b, pages, seeds, slots, NR, NR));
	b->ops->free(b, &slot, 1);
	CHECK_EQ((uint64_t)(NR - 1) * PAGE_SIZE, stats_of(b).capacity_bytes);
	CHECK_EQ((uint64_t)(NR - 1), stats_of(b).stored_pages);
	CHECK_EQ(-ENOSPC, b->ops->store(b, pages, 1, slots + LAST));
	slots[LAST] = slots[NR - 1];
	free_in_batches(b, slots, NR - 1, 8);
	check_empty(b);
	/* The others are handed out again; the retired one is not. */
	CHECK_EQ(NR - 1, b->ops->store(b, pages, NR, slots));
	for (unsigned int i = 0; i < NR - 1; i++)
		CHECK(slots[i] != slot);
	free_in_batches(b, slots, NR - 1, 8);
destroy:
	b->ops->destroy(b);
out:
	check_clear_context();
	pages_free(pages);
}

/*
 * What reaches the file: sealed, a page of text leaves no trace of itself,
 * the same page differs between two backends (their keys) and between two
 * stores into the same slot (their nonces); plaintext, it is there as is.
 */
static void test_file_on_disk(struct target *t)
{
	void **pages = pages_new(2);
	struct tier_backend *b1 = target_create(t, 16), *b2 = NULL;
	unsigned char *seen1 = malloc(PAGE_SIZE), *seen2 = malloc(PAGE_SIZE);
	uint64_t slot1, slot2;
	int fd1 = -1, fd2 = -1;

	check_set_context("file in %s%s: on disk", t->dir,
			  t->is_plaintext ? ", plaintext" :
			  t->is_xchacha	  ? ", xchacha" :
					    "");
	if (!b1 || !seen1 || !seen2)
		goto out;
	fd1 = find_swap_fd(t->dir);
	b2 = target_create(t, 16);
	if (!b2)
		goto out;
	fd2 = reopen_swap_fd(find_swap_fd_but(t->dir, fd1));
	fd1 = reopen_swap_fd(fd1);
	if (!CHECK(fd1 >= 0 && fd2 >= 0))
		goto out;
	page_fill_marker(pages[0]);
	if (!CHECK_EQ(1, b1->ops->store(b1, pages, 1, &slot1)) ||
	    !CHECK_EQ(1, b2->ops->store(b2, pages, 1, &slot2)))
		goto out;
	CHECK_EQ(t->is_plaintext, file_has_marker(fd1));
	CHECK_EQ(t->is_plaintext, file_has_marker(fd2));
	CHECK(pread(fd1, seen1, PAGE_SIZE, (off_t)(slot1 * PAGE_SIZE)) == (ssize_t)PAGE_SIZE);
	CHECK(pread(fd2, seen2, PAGE_SIZE, (off_t)(slot2 * PAGE_SIZE)) == (ssize_t)PAGE_SIZE);
	CHECK_EQ(t->is_plaintext, !memcmp(seen1, seen2, PAGE_SIZE));
	b1->ops->free(b1, &slot1, 1);
	b2->ops->free(b2, &slot2, 1);
	if (!CHECK_EQ(1, b1->ops->store(b1, pages, 1, &slot2)))
		goto out;
	if (slot2 == slot1) {
		CHECK(pread(fd1, seen2, PAGE_SIZE, (off_t)(slot1 * PAGE_SIZE)) ==
		      (ssize_t)PAGE_SIZE);
		CHECK_EQ(t->is_plaintext, !memcmp(seen1, seen2, PAGE_SIZE));
	}
	memset(pages[1], 0, PAGE_SIZE);
	if (CHECK_EQ(0, b1->ops->load(b1, &slot2, pages + 1, 1)))
		CHECK_MEM(pages[0], pages[1], PAGE_SIZE);
	b1->ops->free(b1, &slot2, 1);
out:
	if (fd1 >= 0)
		close(fd1);
	if (fd2 >= 0)
		close(fd2);
	if (b2)
		b2->ops->destroy(b2);
	if (b1)
		b1->ops->destroy(b1);
	free(seen1);
	free(seen2);
	check_clear_context();
	pages_free(pages);
}

/*
 * A write past RLIMIT_FSIZE fails with EFBIG, a read past the end of a
 * truncated file comes back short: the store reports the prefix before the
 * failed request, the load -EIO, and both are counted.
 */
static void test_file_io_errors(struct target *t)
{
	enum { NR = 300, LIMIT = 256 };
	uint64_t seeds[NR], slots[LIMIT + 256], more[8];
	void **pages = pages_new(NR);
	struct tier_backend *b = target_create(t, 512);
	struct rlimit old, limit;
	struct backend_stats st;
	int ret = 0, fd;

	check_set_context("file in %s: I/O errors", t->dir);
	if (!b)
		goto out;
	for (unsigned int i = 0; i < NR; i++) {
		seeds[i] = 9000 + i;
		page_fill(pages[i], seeds[i]);
	}
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	limit = old;
	limit.rlim_cur = LIMIT * PAGE_SIZE;
	if (setrlimit(RLIMIT_FSIZE, &limit) < 0) {
		printf("# skip store error: setrlimit: %s\n", strerror(errno));
		ret = b->ops->store(b, pages, LIMIT, slots);
		CHECK_EQ(LIMIT, ret);
		goto load_error;
	}
	/* A fresh file: slots 0..255 in one request, 256..299 in another. */
	ret = b->ops->store(b, pages, NR, slots);
	CHECK_EQ(LIMIT, ret);
	CHECK_EQ(-EFBIG, b->ops->store(b, pages, 8, more));
	setrlimit(RLIMIT_FSIZE, &old);
	st = stats_of(b);
	CHECK_EQ((uint64_t)LIMIT, st.stored_pages);
	CHECK_EQ((uint64_t)LIMIT, st.nr_stores);
	CHECK_EQ((uint64_t)(NR - LIMIT + 8), st.nr_store_errors);
	if (ret == LIMIT)
		CHECK_EQ(0u, load_check(b, pages, seeds, slots, LIMIT, 64));
	/* The failed slots were given back: all the rest fits now. */
	CHECK_EQ(256, b->ops->store(b, pages, 256, slots + LIMIT));
	b->ops->free(b, slots + LIMIT, 256);

load_error:
	fd = find_swap_fd(t->dir);
	if (!CHECK(fd >= 0))
		goto destroy;
	CHECK_EQ(0, ftruncate(fd, (off_t)(128 * PAGE_SIZE)));
	CHECK_EQ(-EIO, b->ops->load(b, slots + 120, pages, 16));
	CHECK_EQ(16u, (unsigned int)stats_of(b).nr_load_errors);
	CHECK_EQ(0u, load_check(b, pages, seeds, slots, 120, 40));
	if (ret > 0)
		free_in_batches(b, slots, (unsigned int)ret, 64);
	check_empty(b);
destroy:
	b->ops->destroy(b);
out:
	signal(SIGXFSZ, SIG_DFL);
	check_clear_context();
	pages_free(pages);
}

/* Whether the filesystem of dir takes O_DIRECT: the backend falls back if not. */
static const char *dir_io_mode(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_DIRECT, 0600);

	if (fd < 0)
		return "buffered (no O_DIRECT)";
	close(fd);
	return "O_DIRECT";
}

static bool test_file_in(const struct tier_backend_ops *ops, const char *base)
{
	char dir[PATH_MAX / 2];
	struct target t = { .ops = ops, .dir = dir };

	snprintf(dir, sizeof(dir), "%s/tierfs-bkio-XXXXXX", base);
	if (!mkdtemp(dir)) {
		printf("# skip file backend on %s: %s\n", base, strerror(errno));
		return false;
	}
	printf("# file backend on %s: %s\n", base, dir_io_mode(dir));
	snprintf(t.path, sizeof(t.path), "%s/swap", dir);
	test_file_anonymous(&t);
	test_file_no_tmpfile(&t);
	test_backend(&t);
	test_file_capacity_from_file(&t);
	test_file_trust(&t);
	test_file_io_errors(&t);
	test_file_tamper(&t);
	test_file_last_nonce(&t);
	test_file_on_disk(&t);
	test_file_key_locked(&t);
	/* The same again, with the software cipher and in plaintext. */
	t.is_xchacha = true;
	test_backend(&t);
	test_file_tamper(&t);
	test_file_last_nonce(&t);
	test_file_on_disk(&t);
	t.is_xchacha = false;
	t.is_plaintext = true;
	test_backend(&t);
	test_file_io_errors(&t);
	test_file_on_disk(&t);
	CHECK_EQ(0u, dir_nr_entries(dir));
	rmdir(dir);
	return true;
}

/*
 * ramfs takes neither O_DIRECT nor fallocate: the buffered, sparse fallbacks.
 * Mounting it needs root and a mount namespace, which needs a process with a
 * single thread, so this runs first.
 */
static bool test_file_on_ramfs(const struct tier_backend_ops *ops)
{
	char mnt[] = "/tmp/tierfs-bkio-ramfs-XXXXXX";
	bool has_run = false;

	if (geteuid() != 0) {
		printf("# skip file backend on ramfs: not root\n");
		return false;
	}
	if (!mkdtemp(mnt)) {
		printf("# skip file backend on ramfs: mkdtemp: %s\n", strerror(errno));
		return false;
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tierfs-test", mnt, "ramfs", 0, "mode=0700") < 0) {
		printf("# skip file backend on ramfs: %s\n", strerror(errno));
	} else {
		has_run = test_file_in(ops, mnt);
		umount2(mnt, MNT_DETACH);
	}
	rmdir(mnt);
	return has_run;
}

int main(void)
{
	static const char *const bases[] = { "/tmp", "/var/tmp", "/dev/shm" };
	const struct tier_backend_ops *ops;
	unsigned int nr_parts = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ops = backend_find("file");
	if (ops)
		nr_parts += test_file_on_ramfs(ops);

	ops = backend_find("ramdisk");
	if (ops) {
		struct target t = { .ops = ops };

		test_backend(&t);
		test_ramdisk_holes(ops);
		nr_parts++;
	} else {
		printf("# skip ramdisk: not compiled in\n");
	}

	ops = backend_find("file");
	for (size_t i = 0; ops && i < sizeof(bases) / sizeof(bases[0]); i++)
		nr_parts += test_file_in(ops, bases[i]);
	if (!ops)
		printf("# skip file: not compiled in\n");

	if (!nr_parts) {
		printf("# test_backends_io: nothing could run\n");
		return T_EXIT_SKIP;
	}
	return check_done("test_backends_io");
}
