// SPDX-License-Identifier: MIT
/*
 * The ramdisk backend, brd-style: evicted pages are kept uncompressed in
 * memory, found through a sparse index of slots, and their memory goes back
 * to malloc when it is discarded.  The baseline that shows what compression
 * costs and saves.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tierfs/backend.h"
#include "slot_ranges.h"

/*
 * Page memory comes in chunks, each its own mapping: a store rarely asks
 * for memory, and a chunk released goes back to the system at once.  From
 * malloc, a chunk freed by one thread's arena would not be reused by
 * another's, and the daemon would grow past the pool it reports while
 * loads and stores move pages between threads.
 */
extern const struct tier_backend_ops tier_backend_ramdisk;

#define RAMDISK_CHUNK_PAGES 64 /* one free mask word a chunk */
#define RAMDISK_CHUNK_ALL_FREE UINT64_MAX
#define RAMDISK_LEAF_SLOTS 512	     /* index entries a leaf: one 4 KiB allocation */
#define RAMDISK_SHARD_SLOTS 16384    /* 64 MiB of slot space a shard by default... */
#define RAMDISK_SHARD_MIN_SLOTS 1024 /* ...but small disks still get a few */
#define RAMDISK_MIN_SHARDS 4
#define RAMDISK_MAX_SHARDS 64
#define RAMDISK_PIECE 64 /* pages looked up under one lock hold, copied after */
/* A slot used once: its index entry and its free-stack entry. */
#define RAMDISK_INDEX_BYTES (sizeof(uintptr_t) + sizeof(uint32_t))

/*
 * A chunk of RAMDISK_CHUNK_PAGES pages.  The header is aligned to 64 bytes so
 * that an index entry can carry the page number in its low six bits.
 */
struct ramdisk_chunk {
	char *base;			   /* PAGE_SIZE-aligned page memory */
	uint64_t free_mask;		   /* bit i set: page i holds nothing */
	struct ramdisk_chunk *prev, *next; /* on the shard's partial list */
};

/*
 * One range of the slot space: slots first_slot .. first_slot + nr_slots - 1.
 * lock protects every field below it.  Page contents are copied outside the
 * lock: a slot being stored is not yet known to anyone but the storing
 * thread, and a slot being loaded may not be freed until the load returns.
 * Only one shard lock is held at a time.
 */
struct ramdisk_shard {
	_Alignas(64) pthread_mutex_t lock;
	uint64_t first_slot;
	uint32_t nr_slots;
	uint32_t nr_used_once; /* local slots below this were handed out */
	uint32_t *free_slots;  /* stack of freed local slots */
	uint32_t nr_free_slots;
	uint32_t free_slots_cap;       /* kept >= nr_used_once so free never allocates */
	uintptr_t **leaves;	       /* index: chunk | page number, 0 when unused */
	struct ramdisk_chunk *partial; /* chunks with at least one free page */
	struct ramdisk_chunk *spare;   /* an all-free chunk kept warm, or NULL */
	uint64_t nr_chunks;
	uint64_t nr_stored;
	atomic_uint_fast64_t nr_holes; /* free pages of its chunks, read unlocked */
	uint64_t nr_stores, nr_loads, nr_frees, nr_load_errors;
};

struct ramdisk {
	struct tier_backend base;
	struct slot_ranges ranges; /* the shards */
	atomic_uint_fast64_t nr_reject_full, nr_reject_alloc;
	/*
	 * Every shard's chunk memory, and a chain's bound on it: a store that
	 * needs a chunk past the bound is refused as full.
	 */
	atomic_uint_fast64_t pool_bytes, pool_bound;
};

static atomic_uint ramdisk_nr_threads;
static _Thread_local unsigned int ramdisk_thread_id; /* 0: not yet numbered */

static struct ramdisk *to_ramdisk(struct tier_backend *tb)
{
	return (struct ramdisk *)tb;
}

/* Spreads threads over shards so two storing threads rarely share a lock. */
static unsigned int ramdisk_home_shard(const struct ramdisk *rd)
{
	if (!ramdisk_thread_id)
		ramdisk_thread_id = atomic_fetch_add(&ramdisk_nr_threads, 1) + 1;
	return (ramdisk_thread_id - 1) % slot_ranges_nr(&rd->ranges);
}

static uintptr_t *ramdisk_entry(struct ramdisk_shard *sh, uint32_t local)
{
	return &sh->leaves[local / RAMDISK_LEAF_SLOTS][local % RAMDISK_LEAF_SLOTS];
}

static void ramdisk_partial_add(struct ramdisk_shard *sh, struct ramdisk_chunk *c)
{
	c->prev = NULL;
	c->next = sh->partial;
	if (sh->partial)
		sh->partial->prev = c;
	sh->partial = c;
}

static void ramdisk_partial_del(struct ramdisk_shard *sh, struct ramdisk_chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		sh->partial = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

static void ramdisk_chunk_release(struct ramdisk *rd, struct ramdisk_shard *sh,
				  struct ramdisk_chunk *c)
{
	ramdisk_partial_del(sh, c);
	if (sh->spare == c)
		sh->spare = NULL;
	munmap(c->base, RAMDISK_CHUNK_PAGES * PAGE_SIZE);
	free(c);
	sh->nr_chunks--;
	atomic_fetch_sub(&rd->pool_bytes, RAMDISK_CHUNK_PAGES * PAGE_SIZE);
}

/* A new chunk on the partial list, or NULL with *err -ENOSPC (the bound) or -ENOMEM. */
static struct ramdisk_chunk *ramdisk_chunk_new(struct ramdisk *rd, struct ramdisk_shard *sh,
					       int *err)
{
	const uint64_t bytes = RAMDISK_CHUNK_PAGES * PAGE_SIZE;
	struct ramdisk_chunk *c;

	_Static_assert(sizeof(*c) <= 64, "the chunk header must fit its alignment");
	if (atomic_fetch_add(&rd->pool_bytes, bytes) + bytes >
	    atomic_load_explicit(&rd->pool_bound, memory_order_relaxed)) {
		*err = -ENOSPC;
		goto undo;
	}
	c = aligned_alloc(64, 64);
	if (c) {
		c->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);
		if (c->base == MAP_FAILED) {
			free(c);
			c = NULL;
		}
	}
	if (!c) {
		*err = -ENOMEM;
		goto undo;
	}
	c->free_mask = RAMDISK_CHUNK_ALL_FREE;
	ramdisk_partial_add(sh, c);
	sh->nr_chunks++;
	return c;

undo:
	atomic_fetch_sub(&rd->pool_bytes, bytes);
	return NULL;
}

/* Publish the shard's free chunk pages for stores to look at.  Under sh->lock. */
static void ramdisk_count_holes(struct ramdisk_shard *sh)
{
	atomic_store_explicit(&sh->nr_holes, sh->nr_chunks * RAMDISK_CHUNK_PAGES - sh->nr_stored,
			      memory_order_relaxed);
}

/*
 * A free page as an index entry, or 0 when the chunks have none and, if
 * may_grow, a new one could not be had (*err says why).  Under sh->lock.
 */
static uintptr_t ramdisk_page_get(struct ramdisk *rd, struct ramdisk_shard *sh, bool may_grow,
				  int *err)
{
	struct ramdisk_chunk *c = sh->partial;
	unsigned int page;

	/* Fill partly used chunks first so that the spare can stay empty. */
	if (c && c == sh->spare && c->next)
		c = c->next;
	if (!c && may_grow)
		c = ramdisk_chunk_new(rd, sh, err);
	if (!c)
		return 0;
	if (c == sh->spare)
		sh->spare = NULL;
	page = (unsigned int)__builtin_ctzll(c->free_mask);
	c->free_mask &= ~(1ULL << page);
	if (!c->free_mask)
		ramdisk_partial_del(sh, c);
	return (uintptr_t)c | page;
}

static void *ramdisk_entry_page(uintptr_t entry)
{
	const struct ramdisk_chunk *c = (const struct ramdisk_chunk *)(entry & ~(uintptr_t)63);

	return c->base + (entry & 63) * PAGE_SIZE;
}

/* Under sh->lock. */
static void ramdisk_page_put(struct ramdisk *rd, struct ramdisk_shard *sh, uintptr_t entry)
{
	struct ramdisk_chunk *c = (struct ramdisk_chunk *)(entry & ~(uintptr_t)63);

	if (!c->free_mask)
		ramdisk_partial_add(sh, c);
	c->free_mask |= 1ULL << (entry & 63);
	if (c->free_mask != RAMDISK_CHUNK_ALL_FREE)
		return;
	/* One empty chunk absorbs a store/free seesaw; more is memory for nothing. */
	if (sh->spare)
		ramdisk_chunk_release(rd, sh, c);
	else
		sh->spare = c;
}

/* A local slot with its index leaf in place, or -ENOSPC / -ENOMEM.  Under sh->lock. */
static int64_t ramdisk_slot_get(struct ramdisk_shard *sh)
{
	uint32_t local;

	if (sh->nr_free_slots)
		return sh->free_slots[--sh->nr_free_slots];
	if (sh->nr_used_once == sh->nr_slots)
		return -ENOSPC;
	local = sh->nr_used_once;
	if (local == sh->free_slots_cap) {
		uint32_t cap = sh->free_slots_cap ? sh->free_slots_cap * 2 : 256;
		uint32_t *grown;

		if (cap > sh->nr_slots || cap < sh->free_slots_cap)
			cap = sh->nr_slots;
		grown = realloc(sh->free_slots, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		sh->free_slots = grown;
		sh->free_slots_cap = cap;
	}
	if (!sh->leaves[local / RAMDISK_LEAF_SLOTS]) {
		sh->leaves[local / RAMDISK_LEAF_SLOTS] =
			calloc(RAMDISK_LEAF_SLOTS, sizeof(**sh->leaves));
		if (!sh->leaves[local / RAMDISK_LEAF_SLOTS])
			return -ENOMEM;
	}
	sh->nr_used_once++;
	return local;
}

/* An idle shard holds no page memory, as brd holds none for discarded sectors. */
static void ramdisk_shard_trim(struct ramdisk *rd, struct ramdisk_shard *sh)
{
	if (!sh->nr_stored && sh->spare)
		ramdisk_chunk_release(rd, sh, sh->spare);
}

/*
 * Store up to RAMDISK_PIECE pages in one shard: how many were stored (a
 * prefix), with *err saying why the rest was not; unless may_grow, only
 * into the free pages of its chunks, stopping with *err unchanged.
 */
static unsigned int ramdisk_shard_store(struct ramdisk *rd, struct ramdisk_shard *sh,
					void *const *pages, unsigned int nr, uint64_t *slots,
					bool may_grow, int *err)
{
	void *dst[RAMDISK_PIECE];
	unsigned int i;

	assert(nr <= RAMDISK_PIECE);
	pthread_mutex_lock(&sh->lock);
	for (i = 0; i < nr; i++) {
		int64_t local = ramdisk_slot_get(sh);
		uintptr_t entry;

		if (local < 0) {
			*err = (int)local;
			break;
		}
		entry = ramdisk_page_get(rd, sh, may_grow, err);
		if (!entry) {
			sh->free_slots[sh->nr_free_slots++] = (uint32_t)local;
			break;
		}
		*ramdisk_entry(sh, (uint32_t)local) = entry;
		slots[i] = sh->first_slot + (uint64_t)local;
		dst[i] = ramdisk_entry_page(entry);
	}
	sh->nr_stored += i;
	sh->nr_stores += i;
	ramdisk_count_holes(sh);
	pthread_mutex_unlock(&sh->lock);

	for (unsigned int k = 0; k < i; k++)
		memcpy(dst[k], pages[k], PAGE_SIZE);
	return i;
}

static int ramdisk_store(struct tier_backend *tb, void *const *pages, unsigned int nr,
			 uint64_t *slots)
{
	struct ramdisk *rd = to_ramdisk(tb);
	unsigned int home = ramdisk_home_shard(rd), nr_shards = slot_ranges_nr(&rd->ranges);
	unsigned int done = 0;
	int err = -ENOSPC;

	if (!nr)
		return 0;
	/*
	 * First into the free pages of chunks mapped already, in any shard:
	 * loads free pages in the shards of their slots, stores come from the
	 * storing thread's, and new chunks while others have holes would grow
	 * the pool with nothing more stored.  Then new chunks: the home shard
	 * first, the others in turn once it is full.
	 */
	for (int may_grow = 0; may_grow < 2 && err != -ENOMEM; may_grow++) {
		for (unsigned int k = 0; k < nr_shards && done < nr && err != -ENOMEM; k++) {
			struct ramdisk_shard *sh =
				slot_ranges_shard(&rd->ranges, (home + k) % nr_shards);

			while (done < nr &&
			       (may_grow ||
				atomic_load_explicit(&sh->nr_holes, memory_order_relaxed))) {
				unsigned int want = nr - done < RAMDISK_PIECE ? nr - done :
										RAMDISK_PIECE;
				unsigned int got = ramdisk_shard_store(
					rd, sh, pages + done, want, slots + done, may_grow, &err);

				done += got;
				if (got < want)
					break;
			}
		}
	}
	if (done < nr) {
		if (err == -ENOMEM)
			atomic_fetch_add(&rd->nr_reject_alloc, nr - done);
		else
			atomic_fetch_add(&rd->nr_reject_full, nr - done);
	}
	return done ? (int)done : err;
}

/* The shard of slot, or NULL when the slot cannot be one of ours. */
static struct ramdisk_shard *ramdisk_slot_shard(struct ramdisk *rd, uint64_t slot)
{
	struct ramdisk_shard *sh;
	unsigned int shard;
	uint64_t local;

	if (!slot_ranges_find(&rd->ranges, slot, &shard, &local))
		return NULL;
	sh = slot_ranges_shard(&rd->ranges, shard);
	return local < sh->nr_slots ? sh : NULL;
}

static int ramdisk_load(struct tier_backend *tb, const uint64_t *slots, void *const *pages,
			unsigned int nr)
{
	struct ramdisk *rd = to_ramdisk(tb);

	for (unsigned int base = 0; base < nr; base += RAMDISK_PIECE) {
		unsigned int n = nr - base < RAMDISK_PIECE ? nr - base : RAMDISK_PIECE;
		const void *src[RAMDISK_PIECE];
		struct ramdisk_shard *locked = NULL;
		int err = 0;

		for (unsigned int i = 0; i < n; i++) {
			uint64_t slot = slots[base + i];
			struct ramdisk_shard *sh = ramdisk_slot_shard(rd, slot);
			uintptr_t entry = 0;

			if (sh != locked) {
				if (locked)
					pthread_mutex_unlock(&locked->lock);
				locked = sh;
				if (locked)
					pthread_mutex_lock(&locked->lock);
			}
			if (sh) {
				uint32_t local = (uint32_t)(slot - sh->first_slot);

				if (local < sh->nr_used_once)
					entry = *ramdisk_entry(sh, local);
			}
			assert(entry && "load of a slot that is not stored");
			if (!entry) {
				if (sh)
					sh->nr_load_errors++;
				err = -EIO;
				break;
			}
			sh->nr_loads++;
			src[i] = ramdisk_entry_page(entry);
		}
		if (locked)
			pthread_mutex_unlock(&locked->lock);
		if (err)
			return err;
		for (unsigned int i = 0; i < n; i++)
			memcpy(pages[base + i], src[i], PAGE_SIZE);
	}
	return 0;
}

static void ramdisk_free(struct tier_backend *tb, const uint64_t *slots, unsigned int nr)
{
	struct ramdisk *rd = to_ramdisk(tb);
	struct ramdisk_shard *locked = NULL;

	for (unsigned int i = 0; i < nr; i++) {
		struct ramdisk_shard *sh = ramdisk_slot_shard(rd, slots[i]);
		uint32_t local;
		uintptr_t *entry;

		assert(sh && "free of a slot out of range");
		if (!sh)
			continue;
		if (sh != locked) {
			if (locked) {
				ramdisk_shard_trim(rd, locked);
				ramdisk_count_holes(locked);
				pthread_mutex_unlock(&locked->lock);
			}
			locked = sh;
			pthread_mutex_lock(&locked->lock);
		}
		local = (uint32_t)(slots[i] - sh->first_slot);
		entry = local < sh->nr_used_once ? ramdisk_entry(sh, local) : NULL;
		assert(entry && *entry && "free of a slot that is not stored");
		if (!entry || !*entry)
			continue;
		ramdisk_page_put(rd, sh, *entry);
		*entry = 0;
		sh->free_slots[sh->nr_free_slots++] = local;
		sh->nr_stored--;
		sh->nr_frees++;
	}
	if (locked) {
		ramdisk_shard_trim(rd, locked);
		ramdisk_count_holes(locked);
		pthread_mutex_unlock(&locked->lock);
	}
}

static void ramdisk_get_stats(struct tier_backend *tb, struct backend_stats *st)
{
	struct ramdisk *rd = to_ramdisk(tb);
	unsigned int nr_shards = slot_ranges_nr(&rd->ranges);

	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < nr_shards; i++) {
		struct ramdisk_shard *sh = slot_ranges_shard(&rd->ranges, i);

		pthread_mutex_lock(&sh->lock);
		st->stored_pages += sh->nr_stored;
		st->pool_bytes += sh->nr_chunks * RAMDISK_CHUNK_PAGES * PAGE_SIZE;
		st->ram_bytes += (uint64_t)sh->nr_used_once * RAMDISK_INDEX_BYTES;
		st->nr_stores += sh->nr_stores;
		st->nr_loads += sh->nr_loads;
		st->nr_frees += sh->nr_frees;
		st->nr_load_errors += sh->nr_load_errors;
		pthread_mutex_unlock(&sh->lock);
	}
	st->ram_bytes += st->pool_bytes;
	st->stored_bytes = st->stored_pages * PAGE_SIZE;
	st->capacity_bytes = atomic_load(&rd->ranges.nr_slots) * PAGE_SIZE;
	/* Its index entry, and its share of chunks that are partly in use (measured). */
	st->raw_page_bytes = PAGE_SIZE + PAGE_SIZE / 128;
	st->index_page_bytes = RAMDISK_INDEX_BYTES;
	st->nr_reject_full = atomic_load(&rd->nr_reject_full);
	st->nr_reject_alloc = atomic_load(&rd->nr_reject_alloc);
}

static void ramdisk_shard_teardown(void *ctx, void *shard)
{
	struct ramdisk_shard *sh = shard;
	uint32_t nr_leaves = (sh->nr_slots + RAMDISK_LEAF_SLOTS - 1) / RAMDISK_LEAF_SLOTS;

	/* Pages still stored: walk the index to give their chunks back. */
	for (uint32_t local = 0; sh->nr_stored && local < sh->nr_used_once; local++) {
		uintptr_t *entry = ramdisk_entry(sh, local);

		if (*entry) {
			ramdisk_page_put(ctx, sh, *entry);
			*entry = 0;
			sh->nr_stored--;
		}
	}
	if (sh->spare)
		ramdisk_chunk_release(ctx, sh, sh->spare);
	assert(!sh->partial);
	for (uint32_t l = 0; l < nr_leaves; l++)
		free(sh->leaves[l]);
	free(sh->leaves);
	free(sh->free_slots);
	pthread_mutex_destroy(&sh->lock);
}

static void ramdisk_destroy(struct tier_backend *tb)
{
	struct ramdisk *rd = to_ramdisk(tb);

	if (!rd)
		return;
	slot_ranges_fini(&rd->ranges, ramdisk_shard_teardown, rd);
	free(rd);
}

static unsigned int ramdisk_pick_nr_shards(const struct backend_config *cfg, uint64_t nr_slots)
{
	uint64_t n = cfg->nr_shards;

	if (!n) {
		n = nr_slots / RAMDISK_SHARD_SLOTS;
		if (n < RAMDISK_MIN_SHARDS)
			n = nr_slots / RAMDISK_SHARD_MIN_SLOTS < RAMDISK_MIN_SHARDS ?
				    nr_slots / RAMDISK_SHARD_MIN_SLOTS :
				    RAMDISK_MIN_SHARDS;
	}
	if (n > RAMDISK_MAX_SHARDS)
		n = RAMDISK_MAX_SHARDS;
	if (n > nr_slots)
		n = nr_slots;
	return n ? (unsigned int)n : 1;
}

static int ramdisk_shard_setup(void *shard, uint64_t first, uint32_t nr)
{
	struct ramdisk_shard *sh = shard;

	sh->first_slot = first;
	sh->nr_slots = nr;
	sh->leaves =
		calloc((nr + RAMDISK_LEAF_SLOTS - 1) / RAMDISK_LEAF_SLOTS, sizeof(*sh->leaves));
	if (!sh->leaves)
		return -ENOMEM;
	pthread_mutex_init(&sh->lock, NULL);
	return 0;
}

static int ramdisk_grow(struct tier_backend *tb, uint64_t capacity_bytes)
{
	return slot_ranges_grow(&to_ramdisk(tb)->ranges, capacity_bytes / PAGE_SIZE);
}

/*
 * capacity_bytes (rounded down to pages) bounds the slots; nr_shards, when
 * not 0, overrides the number of slot ranges with their own lock.
 */
static int ramdisk_create(const struct backend_config *cfg, struct tier_backend **out)
{
	uint64_t nr_slots = cfg->capacity_bytes / PAGE_SIZE, per_shard;
	unsigned int nr_shards;
	struct ramdisk *rd;

	if (!nr_slots)
		return -EINVAL;
	nr_shards = ramdisk_pick_nr_shards(cfg, nr_slots);
	per_shard = (nr_slots + nr_shards - 1) / nr_shards;
	if (per_shard > UINT32_MAX)
		return -EINVAL;
	rd = calloc(1, sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	rd->base.ops = &tier_backend_ramdisk;
	atomic_init(&rd->nr_reject_full, 0);
	atomic_init(&rd->nr_reject_alloc, 0);
	atomic_init(&rd->pool_bytes, 0);
	atomic_init(&rd->pool_bound, UINT64_MAX);
	/* Rounding up may leave the last shards without slots: drop them. */
	if (slot_ranges_init(&rd->ranges, per_shard,
			     (unsigned int)((nr_slots + per_shard - 1) / per_shard), nr_slots,
			     sizeof(struct ramdisk_shard), _Alignof(struct ramdisk_shard),
			     ramdisk_shard_setup)) {
		ramdisk_destroy(&rd->base);
		return -ENOMEM;
	}
	*out = &rd->base;
	return 0;
}

static void ramdisk_set_pool_bound(struct tier_backend *tb, uint64_t bytes)
{
	atomic_store(&to_ramdisk(tb)->pool_bound, bytes);
}

const struct tier_backend_ops tier_backend_ramdisk = {
	.name = "ramdisk",
	.is_sync = true,
	.create = ramdisk_create,
	.destroy = ramdisk_destroy,
	.store = ramdisk_store,
	.load = ramdisk_load,
	.free = ramdisk_free,
	.get_stats = ramdisk_get_stats,
	.set_pool_bound = ramdisk_set_pool_bound,
	.grow = ramdisk_grow,
};
