// SPDX-License-Identifier: MIT
/*
 * The file backend: a swap file driven by io_uring.  Slots are 4 KiB-aligned
 * offsets in an anonymous (O_TMPFILE or unlinked) preallocated file, handed
 * out in contiguous runs so that a batch becomes a few large vectored
 * requests, read and written with O_DIRECT where the filesystem allows it.
 * Unless asked for plaintext, every slot is sealed with an AEAD under a key
 * made for this backend alone that never leaves its memory.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <liburing.h>

#include "tierfs/backend.h"
#include "tierfs/log.h"
#include "tierfs/seal.h"

extern const struct tier_backend_ops tier_backend_file;

#define FILE_CLUSTER_PAGES 64  /* a store looks for a free run this long first */
#define FILE_RUN_MAX_PAGES 256 /* one request moves at most 1 MiB */
#define FILE_RING_ENTRIES 64   /* requests in flight on one ring */
#define FILE_WAVE_IOVS 1024    /* iovecs in flight on one ring */
#define FILE_MAX_RINGS 16
#define FILE_SEAL_WAVE_PAGES FILE_RUN_MAX_PAGES /* a ring's bounce buffer, in pages */

/*
 * How a slot's last store sealed it, kept in memory only: a tag on disk
 * would let whoever can write the file put back an old page with its old
 * tag.  The nonce is the slot and how many times it was sealed (gen), so
 * it is never used twice with the key, and costs 4 bytes a slot where a
 * number drawn from all of the key's writes took 8.  A slot sealed for the
 * 2^32 - 1st time is retired when freed: never handed out again, it costs
 * 4 KiB of swap per 2^32 stores into one slot.  The slot number is the
 * associated data too, so a sealed page copied to another slot does not
 * verify there either.
 */
struct file_seal {
	uint32_t gen;
	unsigned char tag[SEAL_TAG_BYTES];
};

/* A contiguous range of slots moved by one request. */
struct file_run {
	uint64_t slot;	    /* first slot */
	unsigned int first; /* index of its first page in the batch */
	unsigned int nr_pages;
	int res; /* 0 done, -errno failed, 1 not completed */
};

/*
 * One io_uring and the request memory recycled with it.  io_uring is not
 * thread-safe per ring, so lock is held by the thread driving the ring from
 * the first submission to the last completion; it protects every field.
 */
struct file_ring {
	pthread_mutex_t lock;
	bool is_ready; /* ring set up, file registered if has_fixed_file */
	bool has_fixed_file;
	struct io_uring ring;
	struct iovec *iovs;    /* FILE_WAVE_IOVS */
	unsigned char *bounce; /* FILE_SEAL_WAVE_PAGES sealed pages of a store's wave */
	struct file_run *runs;
	unsigned int runs_cap;
};

/*
 * alloc_lock protects the slot bitmap, the cursor, nr_used and nr_retired.  A ring's lock
 * may be held while alloc_lock is taken, never the other way round.
 */
struct file_backend {
	struct tier_backend base;
	int fd;
	bool is_direct;	      /* false: the filesystem refused O_DIRECT */
	bool is_preallocated; /* false: no fallocate, the file is sparse */
	uint64_t nr_slots;    /* file size / PAGE_SIZE */
	pthread_mutex_t alloc_lock;
	uint64_t *bitmap; /* bit set: slot in use (and bits past nr_slots) */
	uint64_t cursor;  /* next-fit: where the last run ended */
	uint64_t nr_used;
	uint64_t nr_retired; /* slots whose nonces are used up: in use for good */
	unsigned int nr_rings;
	struct file_ring *rings;
	struct seal_key *key;		 /* NULL: plaintext */
	struct file_seal *seals;	 /* one a slot; written by the store that owns the slot */
	atomic_uint_fast64_t ring_bytes; /* iovecs and bounce buffers of rings set up */
	atomic_uint_fast64_t nr_stores, nr_loads, nr_frees;
	atomic_uint_fast64_t nr_store_errors, nr_load_errors, nr_reject_full, nr_reject_alloc;
	atomic_uint_fast64_t nr_decrypt_errors;
};

static atomic_uint file_nr_threads;

static _Thread_local unsigned int file_thread_id; /* 0: not yet numbered */

static struct file_backend *to_file(struct tier_backend *tb)
{
	return (struct file_backend *)tb;
}

/* ---- slot bitmap (under alloc_lock) ---- */

/* The first slot in [pos, end) whose bit equals is_used, or end. */
static uint64_t file_bitmap_find(const uint64_t *bitmap, uint64_t pos, uint64_t end, bool is_used)
{
	while (pos < end) {
		uint64_t word = is_used ? bitmap[pos / 64] : ~bitmap[pos / 64];

		word &= ~0ULL << (pos % 64);
		if (word) {
			pos = (pos & ~63ULL) + (uint64_t)__builtin_ctzll(word);
			return pos < end ? pos : end;
		}
		pos = (pos | 63) + 1;
	}
	return end;
}

static void file_bitmap_assign(uint64_t *bitmap, uint64_t pos, uint64_t nr, bool is_used)
{
	for (uint64_t end = pos + nr; pos < end;) {
		unsigned int bit = pos % 64;
		uint64_t n = 64 - bit < end - pos ? 64 - bit : end - pos;
		uint64_t mask = (n == 64 ? ~0ULL : ((1ULL << n) - 1)) << bit;

		if (is_used)
			bitmap[pos / 64] |= mask;
		else
			bitmap[pos / 64] &= ~mask;
		pos += n;
	}
}

/*
 * Look in [lo, hi) for a free run of at least target slots.  Returns its
 * start, or hi; meanwhile remembers the first free slot seen in *first_free.
 */
static uint64_t file_find_run(const struct file_backend *b, uint64_t lo, uint64_t hi,
			      uint64_t target, uint64_t *first_free)
{
	uint64_t pos = lo;

	while ((pos = file_bitmap_find(b->bitmap, pos, hi, false)) < hi) {
		uint64_t limit = hi - pos < target ? hi : pos + target;
		uint64_t end = file_bitmap_find(b->bitmap, pos, limit, true);

		if (*first_free == UINT64_MAX)
			*first_free = pos;
		if (end - pos >= target)
			return pos;
		pos = end;
	}
	return hi;
}

/*
 * Take a run of up to want free slots, preferring one of a cluster's length
 * from the cursor on (next-fit, like the swap allocator's clusters) over the
 * first free hole.  Returns its length (0: full) and its start in *start.
 */
static unsigned int file_alloc_run(struct file_backend *b, unsigned int want, uint64_t *start)
{
	uint64_t target = want < FILE_CLUSTER_PAGES ? want : FILE_CLUSTER_PAGES;
	uint64_t first_free = UINT64_MAX;
	uint64_t pos, limit, end;

	if (b->nr_used + b->nr_retired == b->nr_slots)
		return 0;
	pos = file_find_run(b, b->cursor, b->nr_slots, target, &first_free);
	if (pos == b->nr_slots) {
		pos = file_find_run(b, 0, b->cursor, target, &first_free);
		if (pos == b->cursor)
			pos = first_free;
	}
	assert(pos < b->nr_slots);
	if (want > FILE_RUN_MAX_PAGES)
		want = FILE_RUN_MAX_PAGES;
	limit = b->nr_slots - pos < want ? b->nr_slots : pos + want;
	end = file_bitmap_find(b->bitmap, pos, limit, true);
	file_bitmap_assign(b->bitmap, pos, end - pos, true);
	b->nr_used += end - pos;
	b->cursor = end == b->nr_slots ? 0 : end;
	*start = pos;
	return (unsigned int)(end - pos);
}

/* Free nr slots from slot on, but those sealed as often as a nonce allows. */
static void file_put_slots(struct file_backend *b, uint64_t slot, uint64_t nr)
{
	file_bitmap_assign(b->bitmap, slot, nr, false);
	b->nr_used -= nr;
	for (uint64_t i = slot; b->seals && i < slot + nr; i++) {
		if (b->seals[i].gen == UINT32_MAX) {
			file_bitmap_assign(b->bitmap, i, 1, true);
			b->nr_retired++;
		}
	}
}

static void file_release_runs(struct file_backend *b, const struct file_run *runs,
			      unsigned int nr_runs)
{
	pthread_mutex_lock(&b->alloc_lock);
	for (unsigned int i = 0; i < nr_runs; i++)
		file_put_slots(b, runs[i].slot, runs[i].nr_pages);
	pthread_mutex_unlock(&b->alloc_lock);
}

/* ---- rings ---- */

static int file_ring_setup(struct file_backend *b, struct file_ring *r)
{
	int ret;

	uint64_t bytes = FILE_WAVE_IOVS * sizeof(*r->iovs);

	r->iovs = malloc(FILE_WAVE_IOVS * sizeof(*r->iovs));
	if (!r->iovs)
		return -ENOMEM;
	/* Kept with the ring: a store seals into it, as the caller's pages are the caller's. */
	if (b->key && !r->bounce) {
		r->bounce = aligned_alloc(PAGE_SIZE, FILE_SEAL_WAVE_PAGES * PAGE_SIZE);
		if (!r->bounce) {
			ret = -ENOMEM;
			goto free_iovs;
		}
		atomic_fetch_add(&b->ring_bytes, FILE_SEAL_WAVE_PAGES * PAGE_SIZE);
	}
	ret = io_uring_queue_init(FILE_RING_ENTRIES, &r->ring, 0);
	if (ret < 0)
		goto free_iovs;
	/* A registered file saves a file reference per request; optional. */
	r->has_fixed_file = io_uring_register_files(&r->ring, &b->fd, 1) == 0;
	r->is_ready = true;
	atomic_fetch_add(&b->ring_bytes, bytes);
	return 0;

free_iovs:
	free(r->iovs);
	r->iovs = NULL;
	return ret;
}

static void file_ring_teardown(struct file_backend *b, struct file_ring *r)
{
	if (r->is_ready) {
		io_uring_queue_exit(&r->ring);
		atomic_fetch_sub(&b->ring_bytes, FILE_WAVE_IOVS * sizeof(*r->iovs));
	}
	r->is_ready = false;
	free(r->iovs);
	r->iovs = NULL;
}

/*
 * A ring of the pool, locked, with room for nr runs.  Threads start from
 * their own ring and take any free one, so with as many rings as threads
 * none waits for another.
 */
static struct file_ring *file_ring_get(struct file_backend *b, unsigned int nr, int *err)
{
	unsigned int home;
	struct file_ring *r = NULL;

	if (!file_thread_id)
		file_thread_id = atomic_fetch_add(&file_nr_threads, 1) + 1;
	home = (file_thread_id - 1) % b->nr_rings;
	for (unsigned int k = 0; k < b->nr_rings && !r; k++) {
		struct file_ring *candidate = &b->rings[(home + k) % b->nr_rings];

		if (!pthread_mutex_trylock(&candidate->lock))
			r = candidate;
	}
	if (!r) {
		r = &b->rings[home];
		pthread_mutex_lock(&r->lock);
	}
	if (!r->is_ready) {
		*err = file_ring_setup(b, r);
		if (*err < 0)
			goto unlock;
	}
	if (r->runs_cap < nr) {
		struct file_run *runs = realloc(r->runs, nr * sizeof(*runs));

		if (!runs) {
			*err = -ENOMEM;
			goto unlock;
		}
		r->runs = runs;
		r->runs_cap = nr;
	}
	return r;

unlock:
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void file_ring_put(struct file_ring *r)
{
	pthread_mutex_unlock(&r->lock);
}

/* Submit what is queued and wait for nr_wait completions in all. */
static int file_ring_submit_wait(struct io_uring *ring, unsigned int nr_wait)
{
	int ret;

	do
		ret = io_uring_submit_and_wait(ring, nr_wait);
	while (ret == -EINTR || ret == -EAGAIN);
	return ret < 0 ? ret : 0;
}

/* ---- seals ---- */

/* Seal page, to be stored in slot, into out; a fresh nonce for it. */
static void file_seal(struct file_backend *b, uint64_t slot, const void *page, void *out)
{
	struct file_seal *seal = &b->seals[slot];

	/* A slot at the last generation was retired when last freed. */
	assert(seal->gen < UINT32_MAX);
	seal->gen++;
	seal_data(b->key, (struct seal_nonce){ slot, seal->gen }, slot, page, PAGE_SIZE, out,
		  seal->tag);
}

/* Open the sealed page in slot, in place.  Returns 0, or -EIO when it does not verify. */
static int file_unseal(struct file_backend *b, uint64_t slot, void *page)
{
	const struct file_seal *seal = &b->seals[slot];

	return seal_open(b->key, (struct seal_nonce){ slot, seal->gen }, slot, page, PAGE_SIZE,
			 seal->tag);
}

/*
 * Move the pages of runs to or from the file, in waves of at most a ring's
 * worth of requests, setting each run's res.  Returns 0, or -errno when the
 * ring itself failed; then the ring is torn down, to be set up afresh.
 */
static int file_ring_run(struct file_backend *b, struct file_ring *r, void *const *pages,
			 unsigned int nr_runs, bool is_write)
{
	struct io_uring *ring = &r->ring;
	bool is_sealed = is_write && b->key;
	unsigned int wave_iovs = is_sealed ? FILE_SEAL_WAVE_PAGES : FILE_WAVE_IOVS;
	unsigned int next = 0;
	int ret = 0;

	for (unsigned int i = 0; i < nr_runs; i++)
		r->runs[i].res = 1;
	while (next < nr_runs) {
		unsigned int nr_inflight = 0, nr_iovs = 0;

		while (next < nr_runs) {
			const struct file_run *run = &r->runs[next];
			struct iovec *iov = r->iovs + nr_iovs;
			off_t offset = (off_t)(run->slot * PAGE_SIZE);
			int fd = r->has_fixed_file ? 0 : b->fd;
			struct io_uring_sqe *sqe;

			if (nr_iovs + run->nr_pages > wave_iovs)
				break;
			sqe = io_uring_get_sqe(ring);
			if (!sqe)
				break;
			for (unsigned int k = 0; k < run->nr_pages; k++) {
				iov[k].iov_base = pages[run->first + k];
				iov[k].iov_len = PAGE_SIZE;
				if (!is_sealed)
					continue;
				iov[k].iov_base = r->bounce + (size_t)(nr_iovs + k) * PAGE_SIZE;
				file_seal(b, run->slot + k, pages[run->first + k], iov[k].iov_base);
			}
			if (is_write)
				io_uring_prep_writev(sqe, fd, iov, run->nr_pages, offset);
			else
				io_uring_prep_readv(sqe, fd, iov, run->nr_pages, offset);
			if (r->has_fixed_file)
				io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
			io_uring_sqe_set_data64(sqe, next);
			nr_iovs += run->nr_pages;
			nr_inflight++;
			next++;
		}
		ret = file_ring_submit_wait(ring, nr_inflight);
		for (unsigned int done = 0; !ret && done < nr_inflight; done++) {
			struct io_uring_cqe *cqe;
			struct file_run *run;

			do
				ret = io_uring_wait_cqe(ring, &cqe);
			while (ret == -EINTR || ret == -EAGAIN);
			if (ret < 0)
				break;
			run = &r->runs[io_uring_cqe_get_data64(cqe)];
			if (cqe->res < 0)
				run->res = cqe->res;
			else
				run->res = (size_t)cqe->res == run->nr_pages * PAGE_SIZE ? 0 : -EIO;
			io_uring_cqe_seen(ring, cqe);
		}
		if (ret < 0)
			break;
	}
	if (ret < 0) {
		/*
		 * The ring refused to submit or to wait: nothing more can be learnt
		 * from it.  Runs not completed count as failed.
		 */
		for (unsigned int i = 0; i < nr_runs; i++)
			if (r->runs[i].res > 0)
				r->runs[i].res = ret;
		file_ring_teardown(b, r);
	}
	return ret;
}

/* ---- ops ---- */

/*
 * The caller's pages are page pool pages, PAGE_SIZE-aligned, which is what
 * O_DIRECT needs of the memory (the offsets are slots, aligned by design).
 */
static void file_assert_aligned(void *const *pages, unsigned int nr)
{
#ifndef NDEBUG
	for (unsigned int i = 0; i < nr; i++)
		assert(((uintptr_t)pages[i] & (PAGE_SIZE - 1)) == 0);
#else
	(void)pages;
	(void)nr;
#endif
}

static int file_store(struct tier_backend *tb, void *const *pages, unsigned int nr, uint64_t *slots)
{
	struct file_backend *b = to_file(tb);
	unsigned int nr_alloc = 0, nr_runs = 0, stored;
	struct file_run *runs;
	struct file_ring *r;
	int err = 0;

	if (!nr)
		return 0;
	file_assert_aligned(pages, nr);
	r = file_ring_get(b, nr, &err);
	if (!r) {
		atomic_fetch_add(&b->nr_reject_alloc, nr);
		return err;
	}
	runs = r->runs;

	pthread_mutex_lock(&b->alloc_lock);
	while (nr_alloc < nr) {
		uint64_t start;
		unsigned int len = file_alloc_run(b, nr - nr_alloc, &start);

		if (!len)
			break;
		runs[nr_runs++] =
			(struct file_run){ .slot = start, .first = nr_alloc, .nr_pages = len };
		for (unsigned int k = 0; k < len; k++)
			slots[nr_alloc + k] = start + k;
		nr_alloc += len;
	}
	pthread_mutex_unlock(&b->alloc_lock);
	if (nr_alloc < nr)
		atomic_fetch_add(&b->nr_reject_full, nr - nr_alloc);
	if (!nr_alloc) {
		file_ring_put(r);
		return -ENOSPC;
	}

	file_ring_run(b, r, pages, nr_runs, true);
	/* The stored prefix ends at the first failed run; later runs are dropped. */
	stored = nr_alloc;
	for (unsigned int i = 0; i < nr_runs; i++) {
		if (!runs[i].res)
			continue;
		if (stored == nr_alloc) {
			stored = runs[i].first;
			err = runs[i].res;
		}
		atomic_fetch_add(&b->nr_store_errors, runs[i].nr_pages);
	}
	if (stored < nr_alloc) {
		unsigned int first_dropped = 0;

		while (runs[first_dropped].first < stored)
			first_dropped++;
		file_release_runs(b, runs + first_dropped, nr_runs - first_dropped);
	}
	file_ring_put(r);
	atomic_fetch_add(&b->nr_stores, stored);
	return stored ? (int)stored : err;
}

static int file_load(struct tier_backend *tb, const uint64_t *slots, void *const *pages,
		     unsigned int nr)
{
	struct file_backend *b = to_file(tb);
	unsigned int nr_runs = 0;
	struct file_run *runs;
	struct file_ring *r;
	int err = 0;

	if (!nr)
		return 0;
	file_assert_aligned(pages, nr);
	r = file_ring_get(b, nr, &err);
	if (!r) {
		atomic_fetch_add(&b->nr_load_errors, nr);
		return err;
	}
	runs = r->runs;
	for (unsigned int i = 0; i < nr; i++) {
		struct file_run *last = nr_runs ? &runs[nr_runs - 1] : NULL;

		assert(slots[i] < b->nr_slots);
		if (last && slots[i] == last->slot + last->nr_pages &&
		    last->nr_pages < FILE_RUN_MAX_PAGES)
			last->nr_pages++;
		else
			runs[nr_runs++] =
				(struct file_run){ .slot = slots[i], .first = i, .nr_pages = 1 };
	}
	file_ring_run(b, r, pages, nr_runs, false);
	for (unsigned int i = 0; i < nr_runs; i++) {
		if (!runs[i].res)
			continue;
		if (!err)
			err = runs[i].res;
		atomic_fetch_add(&b->nr_load_errors, runs[i].nr_pages);
	}
	/* Every page is opened even after a failure: each bad one is counted. */
	for (unsigned int i = 0; b->key && i < nr_runs; i++) {
		const struct file_run *run = &runs[i];

		for (unsigned int k = 0; !run->res && k < run->nr_pages; k++) {
			if (!file_unseal(b, run->slot + k, pages[run->first + k]))
				continue;
			err = -EIO;
			atomic_fetch_add(&b->nr_decrypt_errors, 1);
			atomic_fetch_add(&b->nr_load_errors, 1);
		}
	}
	file_ring_put(r);
	if (!err)
		atomic_fetch_add(&b->nr_loads, nr);
	return err;
}

static void file_free(struct tier_backend *tb, const uint64_t *slots, unsigned int nr)
{
	struct file_backend *b = to_file(tb);

	pthread_mutex_lock(&b->alloc_lock);
	for (unsigned int i = 0; i < nr; i++) {
		uint64_t slot = slots[i];
		uint64_t bit = 1ULL << (slot % 64);

		assert(slot < b->nr_slots && (b->bitmap[slot / 64] & bit));
		if (slot >= b->nr_slots || !(b->bitmap[slot / 64] & bit))
			continue;
		file_put_slots(b, slot, 1);
	}
	pthread_mutex_unlock(&b->alloc_lock);
	atomic_fetch_add(&b->nr_frees, nr);
}

static void file_get_stats(struct tier_backend *tb, struct backend_stats *st)
{
	struct file_backend *b = to_file(tb);

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&b->alloc_lock);
	st->stored_pages = b->nr_used;
	st->capacity_bytes = (b->nr_slots - b->nr_retired) * PAGE_SIZE;
	pthread_mutex_unlock(&b->alloc_lock);
	st->stored_bytes = st->stored_pages * PAGE_SIZE;
	st->pool_bytes = st->stored_pages * PAGE_SIZE;
	st->nr_stores = atomic_load(&b->nr_stores);
	st->nr_loads = atomic_load(&b->nr_loads);
	st->nr_frees = atomic_load(&b->nr_frees);
	st->nr_store_errors = atomic_load(&b->nr_store_errors);
	st->nr_load_errors = atomic_load(&b->nr_load_errors);
	st->nr_reject_full = atomic_load(&b->nr_reject_full);
	st->nr_reject_alloc = atomic_load(&b->nr_reject_alloc);
	st->nr_decrypt_errors = atomic_load(&b->nr_decrypt_errors);
	st->nr_fallback_buffered = !b->is_direct;
	st->nr_fallback_sparse = !b->is_preallocated;
	st->meta_bytes = (b->nr_slots + 63) / 64 * sizeof(*b->bitmap) +
			 (b->seals ? b->nr_slots * sizeof(*b->seals) : 0) +
			 (b->key ? seal_key_bytes() : 0) + atomic_load(&b->ring_bytes) +
			 b->nr_rings * sizeof(*b->rings);
	st->ram_bytes = st->meta_bytes;
}

static void file_destroy(struct tier_backend *tb)
{
	struct file_backend *b = to_file(tb);

	if (!b)
		return;
	for (unsigned int i = 0; b->rings && i < b->nr_rings; i++) {
		file_ring_teardown(b, &b->rings[i]);
		free(b->rings[i].bounce);
		free(b->rings[i].runs);
		pthread_mutex_destroy(&b->rings[i].lock);
	}
	free(b->rings);
	free(b->seals);
	seal_key_free(b->key);
	free(b->bitmap);
	pthread_mutex_destroy(&b->alloc_lock);
	if (b->fd >= 0)
		close(b->fd);
	free(b);
}

static bool file_is_trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Whom the swap file's path may belong to: "root", or "root or uid N". */
static const char *file_trusted_names(char *buf, size_t len)
{
	if (geteuid() == 0)
		return "root";
	snprintf(buf, len, "root or uid %u", (unsigned int)geteuid());
	return buf;
}

/* Append to why what to do about a directory refused. */
static void file_add_dir_advice(char *why, size_t why_len)
{
	size_t len = strlen(why);
	char trusted[32];

	if (len < why_len)
		snprintf(why + len, why_len - len,
			 "; choose a directory that only %s can change, or a sticky one such as "
			 "/var/tmp",
			 file_trusted_names(trusted, sizeof(trusted)));
}

static int file_why_owner(const char *name, uid_t uid, char *why, size_t why_len)
{
	char trusted[32];

	snprintf(why, why_len, "%s is owned by uid %u, not by %s", name, (unsigned int)uid,
		 file_trusted_names(trusted, sizeof(trusted)));
	file_add_dir_advice(why, why_len);
	return -EPERM;
}

/*
 * Whether one directory may hold the swap file: one that others can write
 * to could have its entries swapped under us, unless the sticky bit keeps
 * them from touching what is not theirs (/tmp, /var/tmp).
 */
static int file_check_dir_stat(const char *name, const struct stat *st, char *why, size_t why_len)
{
	if (!S_ISDIR(st->st_mode)) {
		snprintf(why, why_len, "%s is not a directory", name);
		return -ENOTDIR;
	}
	if (!file_is_trusted_owner(st->st_uid))
		return file_why_owner(name, st->st_uid, why, why_len);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
		snprintf(why, why_len, "%s is writable by %s and not sticky", name,
			 st->st_mode & S_IWOTH ? "others" : "its group");
		file_add_dir_advice(why, why_len);
		return -EPERM;
	}
	return 0;
}

/*
 * dir and every directory above it, as OpenSSH's StrictModes checks a key
 * file's: whoever may rename an ancestor may put a directory of theirs in
 * its place.  Symlinks on the way are resolved first, so the directories
 * checked are the ones the file will be in; resolved (PATH_MAX bytes) gets
 * dir's own resolved name, for the swap file to be opened by.
 */
static int file_check_dirs(const char *dir, char *resolved, char *why, size_t why_len)
{
	char real[PATH_MAX];
	struct stat st;
	int ret;

	if (!realpath(dir, resolved)) {
		ret = -errno;
		snprintf(why, why_len, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	memcpy(real, resolved, PATH_MAX);
	for (;;) {
		char *slash = strrchr(real, '/');

		if (stat(real[0] ? real : "/", &st) < 0) {
			ret = -errno;
			snprintf(why, why_len, "%s: %s", real[0] ? real : "/", strerror(-ret));
			return ret;
		}
		ret = file_check_dir_stat(real[0] ? real : "/", &st, why, why_len);
		if (ret < 0 || !real[0] || !slash)
			return ret;
		*slash = '\0';
	}
}

/* The directory path names or, when path names a file, the one it is in. */
static int file_dir_of(const char *path, bool is_dir, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (is_dir)
		return snprintf(dir, len, "%s", path) < (int)len ? 0 : -ENAMETOOLONG;
	if (!slash)
		return snprintf(dir, len, ".") < 0 ? -EINVAL : 0;
	if (slash == path)
		return snprintf(dir, len, "/") < 0 ? -EINVAL : 0;
	if ((size_t)(slash - path) >= len)
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return 0;
}

/*
 * Why the name path, which another user made (a symlink or a file), is
 * refused, and what to do: name its directory instead, where the swap file
 * has no name for anyone to take first.
 */
static void file_why_taken(const char *path, bool is_link, uid_t uid, char *why, size_t why_len)
{
	char dir[PATH_MAX], trusted[32];

	if (file_dir_of(path, false, dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "DIRECTORY");
	snprintf(why, why_len,
		 "%s is %sowned by uid %u, not by %s: %s; remove it, or name the directory "
		 "instead (file:%s), where the swap file gets no name anyone could take first",
		 path, is_link ? "a symlink " : "", (unsigned int)uid,
		 file_trusted_names(trusted, sizeof(trusted)),
		 is_link ? "refusing to follow it" : "another user made it, so it is not used",
		 dir);
}

/* The check_path op, with the resolved name of the directory it checked in dir_resolved. */
static int file_check_path(const char *path, struct stat *st, char *dir_resolved, char *why,
			   size_t why_len)
{
	char dir[PATH_MAX];
	int ret;

	if (lstat(path, st) < 0) {
		ret = -errno;
		if (ret != -ENOENT) {
			snprintf(why, why_len, "%s: %s", path, strerror(-ret));
			return ret;
		}
		st->st_mode = 0;
	} else if (S_ISLNK(st->st_mode)) {
		if (!file_is_trusted_owner(st->st_uid)) {
			file_why_taken(path, true, st->st_uid, why, why_len);
			return -ELOOP;
		}
		snprintf(why, why_len, "%s is a symlink: refusing to follow it; name its target",
			 path);
		return -ELOOP;
	} else if (!S_ISDIR(st->st_mode) && !S_ISREG(st->st_mode)) {
		snprintf(why, why_len, "%s is not a regular file or a directory", path);
		return -EINVAL;
	} else if (S_ISREG(st->st_mode) && !file_is_trusted_owner(st->st_uid)) {
		file_why_taken(path, false, st->st_uid, why, why_len);
		return -EPERM;
	}
	ret = file_dir_of(path, S_ISDIR(st->st_mode), dir, sizeof(dir));
	if (ret < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	return file_check_dirs(dir, dir_resolved, why, why_len);
}

static int file_backend_check_path(const char *path, struct stat *st, char *why, size_t why_len)
{
	char dir_resolved[PATH_MAX];

	return file_check_path(path, st, dir_resolved, why, why_len);
}

/*
 * Where the filesystem has no O_TMPFILE: a file of a random name in dfd,
 * made with O_EXCL and unlinked at once, so that no one can have made it
 * first, nor, by taking its name, keep it from being made.  Returns the fd
 * or -errno.
 */
static int file_open_unlinked(int dfd)
{
	for (int i = 0; i < 8; i++) {
		char name[64];
		uint64_t token;
		int fd, err;

		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			return -EIO;
		snprintf(name, sizeof(name), ".tierfs-swap-%016" PRIx64, token);
		fd = openat(dfd, name, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		if (unlinkat(dfd, name, 0) < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		return fd;
	}
	return -EEXIST;
}

/*
 * An anonymous file in dir, the directory path names or the one it is in:
 * O_TMPFILE, so that the data never has a name, or else a name no one can
 * guess, unlinked at once; never path itself, which may exist (a swap file
 * prepared beforehand gives only its size).  dir is opened once, by the
 * name file_check_path() resolved it to and without following a symlink
 * there, and checked again through that fd, so that what was checked is
 * what the file goes into: a symlink put in place since is refused, never
 * followed.  Returns the fd or -errno.
 */
static int file_open_anonymous(const char *dir)
{
	char why[PATH_MAX + 64];
	struct stat st;
	int dfd, fd, err;

	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOTDIR ? -ELOOP : -errno;
	if (fstat(dfd, &st) < 0) {
		fd = -errno;
		goto close_dir;
	}
	fd = file_check_dir_stat(dir, &st, why, sizeof(why));
	if (fd < 0)
		goto close_dir;
	fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		goto close_dir;
	err = errno;
	/* No O_TMPFILE: EOPNOTSUPP from the filesystem, EISDIR from a kernel before 3.11. */
	fd = err == EOPNOTSUPP || err == EISDIR ? file_open_unlinked(dfd) : -err;
close_dir:
	close(dfd);
	return fd;
}

/*
 * Switch fd to O_DIRECT and prove it with one aligned write at offset 0;
 * filesystems without direct I/O (tmpfs on older kernels, some FUSE ones)
 * refuse either step with EINVAL, and the backend then runs buffered.
 */
static bool file_try_direct(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	bool is_direct = false;
	void *probe;

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_DIRECT) < 0)
		return false;
	probe = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	if (probe) {
		memset(probe, 0, PAGE_SIZE);
		is_direct = pwrite(fd, probe, PAGE_SIZE, 0) == (ssize_t)PAGE_SIZE;
		free(probe);
	}
	if (!is_direct)
		fcntl(fd, F_SETFL, flags);
	return is_direct;
}

/* A key of b's own and room for a seal a slot. */
static int file_key_new(struct file_backend *b, bool is_aes_allowed)
{
	b->seals = calloc(b->nr_slots, sizeof(*b->seals));
	if (!b->seals)
		return -ENOMEM;
	return seal_key_new(is_aes_allowed, &b->key);
}

/*
 * cfg->path names the swap file, or a directory to hold it; the data goes to
 * an anonymous file there (see file_open_anonymous).  cfg->capacity_bytes is
 * its size; when 0, the size of an existing regular file at path is taken,
 * as with a swap file prepared beforehand, but that file itself is left
 * untouched (others may have it open).  A path file_check_path()
 * refuses is refused with its -errno; anything else: -EINVAL.
 */
static int file_create(const struct backend_config *cfg, struct tier_backend **out)
{
	uint64_t capacity = cfg->capacity_bytes;
	char why[PATH_MAX + 64], dir[PATH_MAX];
	struct file_backend *b;
	struct stat st;
	long nr_cpus;
	int ret;

	if (!cfg->path || !cfg->path[0])
		return -EINVAL;
	ret = file_check_path(cfg->path, &st, dir, why, sizeof(why));
	if (ret < 0)
		return ret;
	if (!capacity && S_ISREG(st.st_mode))
		capacity = (uint64_t)st.st_size;
	capacity &= ~(uint64_t)(PAGE_SIZE - 1);
	if (!capacity || capacity > (uint64_t)INT64_MAX)
		return -EINVAL;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->base.ops = &tier_backend_file;
	b->fd = -1;
	atomic_init(&b->ring_bytes, 0);
	pthread_mutex_init(&b->alloc_lock, NULL);
	b->nr_slots = capacity / PAGE_SIZE;

	ret = file_open_anonymous(dir);
	if (ret < 0)
		goto destroy;
	b->fd = ret;
	b->is_preallocated = true;
	if (fallocate(b->fd, 0, 0, (off_t)capacity) < 0) {
		ret = -errno;
		if (ret != -EOPNOTSUPP)
			goto destroy;
		/* Sparse, then: a store may meet ENOSPC later and report it. */
		b->is_preallocated = false;
		if (ftruncate(b->fd, (off_t)capacity) < 0) {
			ret = -errno;
			goto destroy;
		}
		log_msg(LOG_WARNING,
			"backend=file:%s: the filesystem cannot preallocate: the swap file is "
			"sparse, and a store may find the disk full",
			cfg->path);
	}
	b->is_direct = file_try_direct(b->fd);
	if (!b->is_direct)
		log_msg(LOG_WARNING,
			"backend=file:%s: the filesystem refuses O_DIRECT: the swap file's I/O "
			"goes through the page cache",
			cfg->path);

	ret = -ENOMEM;
	b->bitmap = calloc((b->nr_slots + 63) / 64, sizeof(*b->bitmap));
	if (!b->bitmap)
		goto destroy;
	if (b->nr_slots % 64)
		b->bitmap[b->nr_slots / 64] = ~0ULL << (b->nr_slots % 64);

	if (!cfg->is_plaintext) {
		ret = file_key_new(b, !cfg->is_xchacha);
		if (ret < 0)
			goto destroy;
	}

	ret = -ENOMEM;
	nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	b->nr_rings = nr_cpus < 1 ? 2 : (unsigned int)nr_cpus * 2;
	if (b->nr_rings > FILE_MAX_RINGS)
		b->nr_rings = FILE_MAX_RINGS;
	b->rings = calloc(b->nr_rings, sizeof(*b->rings));
	if (!b->rings)
		goto destroy;
	for (unsigned int i = 0; i < b->nr_rings; i++)
		pthread_mutex_init(&b->rings[i].lock, NULL);
	atomic_init(&b->nr_stores, 0);
	atomic_init(&b->nr_loads, 0);
	atomic_init(&b->nr_frees, 0);
	atomic_init(&b->nr_store_errors, 0);
	atomic_init(&b->nr_load_errors, 0);
	atomic_init(&b->nr_reject_full, 0);
	atomic_init(&b->nr_reject_alloc, 0);
	atomic_init(&b->nr_decrypt_errors, 0);
	*out = &b->base;
	return 0;

destroy:
	file_destroy(&b->base);
	return ret;
}

/*
 * For tests/unit/test_backends_io.c only: set how many times slot was
 * sealed, to reach the last nonce without 2^32 stores.  Returns 0, or
 * -EINVAL in plaintext or for a slot past the end.
 */
int file_test_set_gen(struct tier_backend *tb, uint64_t slot, uint32_t gen);
int file_test_set_gen(struct tier_backend *tb, uint64_t slot, uint32_t gen)
{
	struct file_backend *b = to_file(tb);

	if (!b->seals || slot >= b->nr_slots)
		return -EINVAL;
	b->seals[slot].gen = gen;
	return 0;
}

const struct tier_backend_ops tier_backend_file = {
	.name = "file",
	.is_sync = false,
	.create = file_create,
	.destroy = file_destroy,
	.store = file_store,
	.load = file_load,
	.free = file_free,
	.get_stats = file_get_stats,
	.check_path = file_backend_check_path,
};
