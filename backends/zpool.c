// SPDX-License-Identifier: MIT
/*
 * The zpool backend: evicted pages compressed in RAM.  Slot space is split
 * into shards, each with its own lock, slot index and blob allocator, so
 * threads storing and loading in different shards never meet; each thread
 * keeps its own compression context.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tierfs/backend.h"
#include "tierfs/codec.h"
#include "tierfs/pagemap.h"
#include "slot_ranges.h"

/*
 * Shards: without cfg->nr_shards, one per 64 MiB of slot space.  Slots are
 * numbered as slot_ranges.h says, with a stride of ceil(capacity pages /
 * nr_shards); the last shard gets the remainder, so the slots add up to
 * the capacity exactly and a shard with no free slot is a full shard.
 * nr_shards = 1 puts every slot under one lock (the one-lock build the
 * benchmarks compare against).  nr_shards is lowered when it would leave a
 * shard empty.  Growing adds shards.
 */
#define ZPOOL_SHARD_BYTES (64ULL << 20)
#define ZPOOL_SHARD_SLOTS_MAX (UINT32_MAX - 1)

/*
 * Blobs are rounded up to a size class, a multiple of 64 bytes.  A page that
 * does not compress to 3/4 of a page or less is stored raw in the last
 * class.  Each class carves its objects out of zspages: one to four pages
 * of memory, whichever count wastes the least at the end.
 */
#define ZPOOL_CLASS_STEP 64
#define ZPOOL_MAX_COMPRESSED (PAGE_SIZE * 3 / 4)
#define ZPOOL_NR_CLASSES (ZPOOL_MAX_COMPRESSED / ZPOOL_CLASS_STEP + 1)
#define ZPOOL_RAW_CLASS (ZPOOL_NR_CLASSES - 1)
#define ZSPAGE_MAX_PAGES 4
#define ZSPAGE_MAX_OBJS (ZSPAGE_MAX_PAGES * PAGE_SIZE / ZPOOL_CLASS_STEP)

#define ZPOOL_NO_OBJ UINT16_MAX
#define ZPOOL_NO_SLOT UINT32_MAX

struct zpool_list {
	struct zpool_list *next, *prev;
};

/*
 * A zspage: one malloc holding this header, the owner array and the
 * objects.  Objects never handed out are those from nr_fresh up; freed ones
 * form a stack through owner[].  The shard lock protects it all.
 */
struct zspage {
	struct zpool_list link; /* in the class's partial list while partly used */
	unsigned char *objs;	/* object i at objs + i * class size */
	uint16_t class_idx;
	uint16_t nr_used;
	uint16_t nr_fresh;
	uint16_t free_head; /* last freed object, or ZPOOL_NO_OBJ */
	uint32_t owner[];   /* used: its slot in the shard; freed: next freed object */
};

struct zpool_class_geom {
	uint16_t size;	     /* bytes an object takes */
	uint16_t nr_objs;    /* objects a zspage holds */
	size_t objs_offset;  /* from the zspage's start */
	size_t zspage_bytes; /* the whole malloc */
};

struct zpool_class {
	struct zpool_list partial; /* zspages with both used and free objects */
	uint64_t nr_zspages;
	uint64_t nr_used; /* objects */
};

/* A slot: where its blob lives, or a link in the shard's free slot list. */
struct zpool_entry {
	struct zspage *zspage; /* NULL: the slot is free */
	uint32_t next_free;    /* free: the next free slot, or ZPOOL_NO_SLOT */
	uint16_t obj;
	uint16_t len; /* blob length; PAGE_SIZE: stored raw */
};

/*
 * lock protects everything in the shard: the slot index, the classes and
 * their zspages, and the counters.  No other lock is taken while holding
 * it; it is the only lock the store/load/free paths take.
 */
struct zpool_shard {
	_Alignas(64) pthread_mutex_t lock;
	struct zpool_entry *entries; /* nr_slots of them */
	uint32_t nr_slots;
	uint32_t nr_fresh_slots; /* slots from here up were never used */
	uint32_t free_slot;	 /* head of the free slot list, or ZPOOL_NO_SLOT */
	uint64_t nr_stored;	 /* pages */
	uint64_t pool_bytes;	 /* every zspage's malloc */
	uint64_t nr_stores, nr_loads, nr_frees, nr_reject_raw, nr_lock_contended;
	struct zpool_class classes[ZPOOL_NR_CLASSES];
};

struct zpool_tctx;

extern const struct tier_backend_ops tier_backend_zpool;

struct zpool {
	struct tier_backend base;
	const struct codec *codec;
	int level;
	uint64_t id;		   /* unique for the process's life: keys the thread caches */
	struct slot_ranges ranges; /* the shards */
	struct zpool_class_geom geom[ZPOOL_NR_CLASSES];
	bool is_raw_refused; /* a chain's pool: the file behind takes those raw */
	/*
	 * Every shard's pool_bytes, and a chain's bound on it: a store that
	 * needs a zspage past the bound is refused as full.
	 */
	atomic_uint_fast64_t pool_bytes, pool_bound;
	/* Rare events, counted outside any shard. */
	atomic_uint_fast64_t nr_reject_full, nr_reject_alloc;
	atomic_uint_fast64_t nr_refused_raw; /* pages refused raw, in nr_reject_raw */
	atomic_uint_fast64_t nr_store_errors, nr_load_errors;
	/* Under zpool_registry_lock. */
	struct zpool_tctx *tctx_list;
	unsigned int next_shard_hint;
};

/*
 * A thread's compression context for one pool, with a page buffer.  The
 * thread finds it through its own list (zpool_thread_cache), which only the
 * thread itself links and unlinks.  The pool lists its contexts too, so
 * destroying the pool frees them; it then leaves the emptied entry (pool
 * NULL) for its thread to free, since pool ids are never reused and the
 * thread cannot mistake it for a live one.  zpool_registry_lock protects
 * pool, ctx and the pool links, and is never taken under a shard lock.
 */
struct zpool_tctx {
	struct zpool_tctx *thread_next;
	struct zpool_tctx *pool_next, **pool_pprev;
	uint64_t pool_id;
	struct zpool *pool; /* NULL once the pool is destroyed */
	const struct codec *codec;
	struct codec_ctx *ctx;
	unsigned int shard_hint; /* where this thread stores */
	unsigned char buf[PAGE_SIZE];
};

static pthread_mutex_t zpool_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t zpool_next_id = 1;
static pthread_once_t zpool_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t zpool_key;
static int zpool_key_err;
static __thread struct zpool_tctx *zpool_thread_cache;

static void zpool_list_init(struct zpool_list *head)
{
	head->next = head->prev = head;
}

static bool zpool_list_is_empty(const struct zpool_list *head)
{
	return head->next == head;
}

static void zpool_list_add(struct zpool_list *item, struct zpool_list *head)
{
	item->next = head->next;
	item->prev = head;
	head->next->prev = item;
	head->next = item;
}

static void zpool_list_add_tail(struct zpool_list *item, struct zpool_list *head)
{
	zpool_list_add(item, head->prev);
}

static void zpool_list_del(struct zpool_list *item)
{
	item->prev->next = item->next;
	item->next->prev = item->prev;
	item->next = item->prev = item;
}

static struct zspage *zspage_of(struct zpool_list *link)
{
	return (struct zspage *)((char *)link - offsetof(struct zspage, link));
}

static struct zpool *zpool_of(struct tier_backend *b)
{
	return (struct zpool *)((char *)b - offsetof(struct zpool, base));
}

static void zpool_shard_lock(struct zpool_shard *sh)
{
	if (pthread_mutex_trylock(&sh->lock)) {
		pthread_mutex_lock(&sh->lock);
		sh->nr_lock_contended++;
	}
}

static void zpool_shard_unlock(struct zpool_shard *sh)
{
	pthread_mutex_unlock(&sh->lock);
}

/* ---- per-thread contexts ---- */

static void zpool_tctx_unlink_pool(struct zpool_tctx *t)
{
	*t->pool_pprev = t->pool_next;
	if (t->pool_next)
		t->pool_next->pool_pprev = t->pool_pprev;
}

/* Free this thread's entries whose pool is gone.  Registry lock held. */
static void zpool_thread_prune(void)
{
	struct zpool_tctx **pp = &zpool_thread_cache;

	while (*pp) {
		struct zpool_tctx *t = *pp;

		if (t->pool) {
			pp = &t->thread_next;
			continue;
		}
		*pp = t->thread_next;
		free(t);
	}
}

static void zpool_thread_exit(void *unused)
{
	struct zpool_tctx *t, *next;

	(void)unused;
	pthread_mutex_lock(&zpool_registry_lock);
	for (t = zpool_thread_cache; t; t = next) {
		next = t->thread_next;
		if (t->pool) {
			zpool_tctx_unlink_pool(t);
			t->codec->ctx_free(t->ctx);
		}
		free(t);
	}
	zpool_thread_cache = NULL;
	pthread_mutex_unlock(&zpool_registry_lock);
}

static void zpool_key_create(void)
{
	zpool_key_err = pthread_key_create(&zpool_key, zpool_thread_exit);
}

static struct zpool_tctx *zpool_tctx_new(struct zpool *pool)
{
	struct zpool_tctx *t = malloc(sizeof(*t));

	if (!t)
		return NULL;
	t->pool_id = pool->id;
	t->pool = pool;
	t->codec = pool->codec;
	if (pool->codec->ctx_new(pool->level, &t->ctx))
		goto free_tctx;
	/* Any non-NULL value makes the thread's exit run zpool_thread_exit. */
	if (pthread_setspecific(zpool_key, &zpool_key))
		goto free_ctx;

	pthread_mutex_lock(&zpool_registry_lock);
	zpool_thread_prune();
	t->shard_hint = pool->next_shard_hint++ % slot_ranges_nr(&pool->ranges);
	t->pool_next = pool->tctx_list;
	if (t->pool_next)
		t->pool_next->pool_pprev = &t->pool_next;
	t->pool_pprev = &pool->tctx_list;
	pool->tctx_list = t;
	t->thread_next = zpool_thread_cache;
	zpool_thread_cache = t;
	pthread_mutex_unlock(&zpool_registry_lock);
	return t;

free_ctx:
	pool->codec->ctx_free(t->ctx);
free_tctx:
	free(t);
	return NULL;
}

/* This thread's context for pool, made on first use; NULL: no memory. */
static struct zpool_tctx *zpool_tctx_get(struct zpool *pool)
{
	struct zpool_tctx *t;

	for (t = zpool_thread_cache; t; t = t->thread_next)
		if (t->pool_id == pool->id)
			return t;
	return zpool_tctx_new(pool);
}

/* ---- the blob allocator (shard lock held) ---- */

static void zpool_geom_init(struct zpool *pool)
{
	for (unsigned int c = 0; c < ZPOOL_NR_CLASSES; c++) {
		struct zpool_class_geom *g = &pool->geom[c];
		size_t size = c == ZPOOL_RAW_CLASS ? PAGE_SIZE : (c + 1) * ZPOOL_CLASS_STEP;
		size_t best_pages = 1, best_waste = PAGE_SIZE % size, header;

		/* Least waste per page; on a tie, the smaller zspage. */
		for (size_t pages = 2; pages <= ZSPAGE_MAX_PAGES; pages++) {
			size_t waste = pages * PAGE_SIZE % size;

			if (waste * best_pages < best_waste * pages) {
				best_pages = pages;
				best_waste = waste;
			}
		}
		g->size = (uint16_t)size;
		g->nr_objs = (uint16_t)(best_pages * PAGE_SIZE / size);
		header = offsetof(struct zspage, owner) + g->nr_objs * sizeof(uint32_t);
		g->objs_offset = (header + 63) & ~(size_t)63;
		g->zspage_bytes = g->objs_offset + best_pages * PAGE_SIZE;
	}
}

static unsigned int zpool_class_of(size_t len)
{
	if (len > ZPOOL_MAX_COMPRESSED)
		return ZPOOL_RAW_CLASS;
	return (unsigned int)((len + ZPOOL_CLASS_STEP - 1) / ZPOOL_CLASS_STEP - 1);
}

/* A zspage for class c, on its partial list.  -ENOSPC: past the bound. */
static int zspage_new(struct zpool *pool, struct zpool_shard *sh, unsigned int c,
		      struct zspage **out)
{
	const struct zpool_class_geom *g = &pool->geom[c];
	uint64_t total = atomic_fetch_add(&pool->pool_bytes, g->zspage_bytes) + g->zspage_bytes;
	struct zspage *zs;

	if (total > atomic_load_explicit(&pool->pool_bound, memory_order_relaxed)) {
		atomic_fetch_sub(&pool->pool_bytes, g->zspage_bytes);
		return -ENOSPC;
	}
	zs = malloc(g->zspage_bytes);
	if (!zs) {
		atomic_fetch_sub(&pool->pool_bytes, g->zspage_bytes);
		return -ENOMEM;
	}
	zs->objs = (unsigned char *)zs + g->objs_offset;
	zs->class_idx = (uint16_t)c;
	zs->nr_used = 0;
	zs->nr_fresh = 0;
	zs->free_head = ZPOOL_NO_OBJ;
	zpool_list_add(&zs->link, &sh->classes[c].partial);
	sh->classes[c].nr_zspages++;
	sh->pool_bytes += g->zspage_bytes;
	*out = zs;
	return 0;
}

/* Allocate an object of class c for slot; returns 0, -ENOSPC (the bound) or -ENOMEM. */
static int zpool_obj_alloc(struct zpool *pool, struct zpool_shard *sh, unsigned int c,
			   uint32_t slot, struct zspage **zs_out, uint16_t *obj_out)
{
	struct zpool_class *cls = &sh->classes[c];
	struct zspage *zs;
	uint16_t obj;

	if (zpool_list_is_empty(&cls->partial)) {
		int ret = zspage_new(pool, sh, c, &zs);

		if (ret)
			return ret;
	} else {
		zs = zspage_of(cls->partial.next);
	}
	if (zs->free_head != ZPOOL_NO_OBJ) {
		obj = zs->free_head;
		zs->free_head = (uint16_t)zs->owner[obj];
	} else {
		obj = zs->nr_fresh++;
	}
	zs->owner[obj] = slot;
	zs->nr_used++;
	cls->nr_used++;
	if (zs->nr_used == pool->geom[c].nr_objs)
		zpool_list_del(&zs->link);
	*zs_out = zs;
	*obj_out = obj;
	return 0;
}

/* Free object obj of zs; an emptied zspage goes back to malloc at once. */
static void zpool_obj_free(struct zpool *pool, struct zpool_shard *sh, struct zspage *zs,
			   uint16_t obj)
{
	const struct zpool_class_geom *g = &pool->geom[zs->class_idx];
	struct zpool_class *cls = &sh->classes[zs->class_idx];
	bool was_full = zs->nr_used == g->nr_objs;

	zs->owner[obj] = zs->free_head;
	zs->free_head = obj;
	zs->nr_used--;
	cls->nr_used--;
	if (zs->nr_used == 0) {
		if (!was_full)
			zpool_list_del(&zs->link);
		cls->nr_zspages--;
		sh->pool_bytes -= g->zspage_bytes;
		atomic_fetch_sub(&pool->pool_bytes, g->zspage_bytes);
		free(zs);
	} else if (was_full) {
		/* At the head: the next stores fill it again. */
		zpool_list_add(&zs->link, &cls->partial);
	}
}

/*
 * Compact when under half of the class's objects are used and at least two
 * zspages' worth are free: then moving objects frees whole zspages.  A
 * compacted class is nearly full, so it takes many frees to come back.
 */
static bool zpool_class_wants_compaction(const struct zpool_class_geom *g,
					 const struct zpool_class *cls)
{
	uint64_t nr_objs = cls->nr_zspages * g->nr_objs;

	return g->nr_objs > 1 && cls->nr_used * 2 < nr_objs &&
	       nr_objs - cls->nr_used >= 2ULL * g->nr_objs;
}

/*
 * Move src's objects into dst until dst is full or src is empty.  Returns
 * true when src was emptied, and so freed.
 */
static bool zpool_compact_move(struct zpool *pool, struct zpool_shard *sh, struct zspage *src,
			       struct zspage *dst)
{
	const struct zpool_class_geom *g = &pool->geom[src->class_idx];

	for (uint16_t obj = 0; obj < src->nr_fresh; obj++) {
		uint32_t slot = src->owner[obj];
		struct zpool_entry *e;
		struct zspage *moved_to;
		uint16_t new_obj;
		bool is_last;

		/* A freed object's owner is a free-list link: check it is really used. */
		if (slot >= sh->nr_slots)
			continue;
		e = &sh->entries[slot];
		if (e->zspage != src || e->obj != obj)
			continue;
		if (dst->nr_used == g->nr_objs)
			return false;
		is_last = src->nr_used == 1;
		/* dst heads the partial list and has room: this does not allocate. */
		zpool_obj_alloc(pool, sh, src->class_idx, slot, &moved_to, &new_obj);
		assert(moved_to == dst);
		memcpy(dst->objs + (size_t)new_obj * g->size, src->objs + (size_t)obj * g->size,
		       e->len);
		e->zspage = dst;
		e->obj = new_obj;
		zpool_obj_free(pool, sh, src, obj);
		if (is_last)
			return true;
	}
	return false;
}

/*
 * Sort the partial zspages fullest first, then empty the last (emptiest)
 * into the first (fullest) until they meet.  Objects are reached only
 * through their slot's entry, so a move is an entry update.
 */
static void zpool_class_compact(struct zpool *pool, struct zpool_shard *sh, unsigned int c)
{
	const struct zpool_class_geom *g = &pool->geom[c];
	struct zpool_class *cls = &sh->classes[c];
	struct zpool_list buckets[ZSPAGE_MAX_OBJS];

	for (unsigned int i = 0; i < g->nr_objs; i++)
		zpool_list_init(&buckets[i]);
	while (!zpool_list_is_empty(&cls->partial)) {
		struct zspage *zs = zspage_of(cls->partial.next);

		zpool_list_del(&zs->link);
		zpool_list_add_tail(&zs->link, &buckets[zs->nr_used]);
	}
	for (unsigned int i = g->nr_objs; i-- > 0;) {
		while (!zpool_list_is_empty(&buckets[i])) {
			struct zpool_list *link = buckets[i].next;

			zpool_list_del(link);
			zpool_list_add_tail(link, &cls->partial);
		}
	}

	/* Each round fills dst (it leaves the list) or frees src. */
	while (!zpool_list_is_empty(&cls->partial)) {
		struct zspage *dst = zspage_of(cls->partial.next);
		struct zspage *src = zspage_of(cls->partial.prev);

		if (dst == src)
			break;
		if (!zpool_compact_move(pool, sh, src, dst) && dst->nr_used < g->nr_objs)
			break;
	}
}

/* ---- slots (shard lock held) ---- */

static bool zpool_slot_take(struct zpool_shard *sh, uint32_t *idx)
{
	if (sh->free_slot != ZPOOL_NO_SLOT) {
		*idx = sh->free_slot;
		sh->free_slot = sh->entries[*idx].next_free;
		return true;
	}
	if (sh->nr_fresh_slots < sh->nr_slots) {
		*idx = sh->nr_fresh_slots++;
		return true;
	}
	return false;
}

static void zpool_slot_put(struct zpool_shard *sh, uint32_t idx)
{
	sh->entries[idx].zspage = NULL;
	sh->entries[idx].next_free = sh->free_slot;
	sh->free_slot = idx;
}

/* Find the shard and index of slot; false when it is out of range. */
static bool zpool_slot_locate(const struct zpool *pool, uint64_t slot, struct zpool_shard **sh,
			      uint32_t *idx)
{
	unsigned int shard;
	uint64_t i;

	if (!slot_ranges_find(&pool->ranges, slot, &shard, &i))
		return false;
	*sh = slot_ranges_shard(&pool->ranges, shard);
	*idx = (uint32_t)i;
	return i < (*sh)->nr_slots;
}

/* Store one blob of len bytes in the shard.  -ENOSPC: no free slot, or the bound. */
static int zpool_shard_store(struct zpool *pool, struct zpool_shard *sh, const void *blob,
			     size_t len, uint32_t *idx_out)
{
	unsigned int c = zpool_class_of(len);
	struct zpool_entry *e;
	struct zspage *zs;
	uint16_t obj;
	uint32_t idx;
	int ret;

	if (!zpool_slot_take(sh, &idx))
		return -ENOSPC;
	ret = zpool_obj_alloc(pool, sh, c, idx, &zs, &obj);
	if (ret) {
		zpool_slot_put(sh, idx);
		return ret;
	}
	memcpy(zs->objs + (size_t)obj * pool->geom[c].size, blob, len);
	e = &sh->entries[idx];
	e->zspage = zs;
	e->obj = obj;
	e->len = (uint16_t)len;
	sh->nr_stored++;
	sh->nr_stores++;
	if (c == ZPOOL_RAW_CLASS)
		sh->nr_reject_raw++;
	*idx_out = idx;
	return 0;
}

/*
 * Store in the thread's shard; when it is full move the thread on to the
 * next one, so threads spread out and stay put.
 */
static int zpool_store_blob(struct zpool *pool, struct zpool_tctx *t, const void *blob, size_t len,
			    uint64_t *slot)
{
	unsigned int nr_shards = slot_ranges_nr(&pool->ranges);

	for (unsigned int tries = 0; tries < nr_shards; tries++) {
		unsigned int shard = t->shard_hint; /* below any count since: it only grows */
		struct zpool_shard *sh = slot_ranges_shard(&pool->ranges, shard);
		uint32_t idx;
		int ret;

		zpool_shard_lock(sh);
		ret = zpool_shard_store(pool, sh, blob, len, &idx);
		zpool_shard_unlock(sh);
		if (ret == 0) {
			*slot = slot_ranges_first(&pool->ranges, shard) + idx;
			return 0;
		}
		if (ret != -ENOSPC) {
			atomic_fetch_add(&pool->nr_reject_alloc, 1);
			return ret;
		}
		t->shard_hint = (shard + 1) % nr_shards;
	}
	atomic_fetch_add(&pool->nr_reject_full, 1);
	return -ENOSPC;
}

/* ---- the ops ---- */

/*
 * Compress outside any lock into the thread's buffer, then copy the blob in
 * under the shard lock.  A call that stops short counts once in
 * nr_reject_full or nr_reject_alloc, for the page that did not fit.
 */
static int zpool_store(struct tier_backend *b, void *const *pages, unsigned int nr, uint64_t *slots)
{
	struct zpool *pool = zpool_of(b);
	struct zpool_tctx *t = zpool_tctx_get(pool);
	unsigned int i;
	int ret = 0;

	if (!t) {
		atomic_fetch_add(&pool->nr_reject_alloc, 1);
		return nr ? -ENOMEM : 0;
	}
	for (i = 0; i < nr; i++) {
		const void *blob = t->buf;
		int len = pool->codec->compress(t->ctx, pages[i], PAGE_SIZE, t->buf,
						ZPOOL_MAX_COMPRESSED);

		if (len == -ENOSPC || len > (int)ZPOOL_MAX_COMPRESSED) {
			if (pool->is_raw_refused) {
				/* The tier behind takes it raw, at no memory. */
				atomic_fetch_add(&pool->nr_refused_raw, 1);
				slots[i] = BACKEND_SLOT_REFUSED;
				continue;
			}
			blob = pages[i];
			len = PAGE_SIZE;
		} else if (len <= 0) {
			atomic_fetch_add(&pool->nr_store_errors, 1);
			ret = -EIO;
			break;
		}
		ret = zpool_store_blob(pool, t, blob, (size_t)len, &slots[i]);
		if (ret)
			break;
	}
	return i ? (int)i : ret;
}

static int zpool_load(struct tier_backend *b, const uint64_t *slots, void *const *pages,
		      unsigned int nr)
{
	struct zpool *pool = zpool_of(b);
	struct zpool_tctx *t = NULL;

	for (unsigned int i = 0; i < nr; i++) {
		struct zpool_shard *sh;
		struct zpool_entry *e;
		uint32_t idx;
		size_t len;

		if (!zpool_slot_locate(pool, slots[i], &sh, &idx))
			goto invalid;
		if (!t) {
			t = zpool_tctx_get(pool);
			if (!t) {
				atomic_fetch_add(&pool->nr_load_errors, 1);
				return -ENOMEM;
			}
		}
		zpool_shard_lock(sh);
		e = &sh->entries[idx];
		if (!e->zspage) {
			zpool_shard_unlock(sh);
			goto invalid;
		}
		len = e->len;
		sh->nr_loads++;
		/* Copy out under the lock, decompress outside it. */
		if (len == PAGE_SIZE) {
			memcpy(pages[i], e->zspage->objs + (size_t)e->obj * PAGE_SIZE, PAGE_SIZE);
			zpool_shard_unlock(sh);
			continue;
		}
		memcpy(t->buf,
		       e->zspage->objs + (size_t)e->obj * pool->geom[e->zspage->class_idx].size,
		       len);
		zpool_shard_unlock(sh);
		if (pool->codec->decompress(t->ctx, t->buf, len, pages[i], PAGE_SIZE)) {
			atomic_fetch_add(&pool->nr_load_errors, 1);
			return -EIO;
		}
	}
	return 0;

invalid:
	atomic_fetch_add(&pool->nr_load_errors, 1);
	return -EIO;
}

static void zpool_free(struct tier_backend *b, const uint64_t *slots, unsigned int nr)
{
	struct zpool *pool = zpool_of(b);
	struct zpool_shard *locked = NULL;

	for (unsigned int i = 0; i < nr; i++) {
		struct zpool_shard *sh;
		struct zpool_entry *e;
		struct zspage *zs;
		unsigned int c;
		uint32_t idx;
		bool is_valid = zpool_slot_locate(pool, slots[i], &sh, &idx);

		assert(is_valid);
		if (!is_valid)
			continue;
		/* Runs of slots in one shard take its lock once. */
		if (sh != locked) {
			if (locked)
				zpool_shard_unlock(locked);
			zpool_shard_lock(sh);
			locked = sh;
		}
		e = &sh->entries[idx];
		zs = e->zspage;
		assert(zs);
		if (!zs)
			continue;
		c = zs->class_idx;
		sh->nr_stored--;
		sh->nr_frees++;
		zpool_obj_free(pool, sh, zs, e->obj);
		zpool_slot_put(sh, idx);
		if (zpool_class_wants_compaction(&pool->geom[c], &sh->classes[c]))
			zpool_class_compact(pool, sh, c);
	}
	if (locked)
		zpool_shard_unlock(locked);
}

static void zpool_get_stats(struct tier_backend *b, struct backend_stats *st)
{
	struct zpool *pool = zpool_of(b);
	unsigned int nr_shards = slot_ranges_nr(&pool->ranges);

	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < nr_shards; i++) {
		struct zpool_shard *sh = slot_ranges_shard(&pool->ranges, i);

		pthread_mutex_lock(&sh->lock);
		st->stored_pages += sh->nr_stored;
		st->pool_bytes += sh->pool_bytes;
		/* The index entries in use once: calloc's pages beyond are untouched. */
		st->ram_bytes += (uint64_t)sh->nr_fresh_slots * sizeof(struct zpool_entry);
		st->nr_stores += sh->nr_stores;
		st->nr_loads += sh->nr_loads;
		st->nr_frees += sh->nr_frees;
		st->nr_reject_raw += sh->nr_reject_raw;
		st->nr_lock_contended += sh->nr_lock_contended;
		if (sh->nr_lock_contended > st->max_shard_contended)
			st->max_shard_contended = sh->nr_lock_contended;
		pthread_mutex_unlock(&sh->lock);
	}
	st->nr_shards = nr_shards;
	st->ram_bytes += st->pool_bytes;
	st->stored_bytes = st->stored_pages * PAGE_SIZE;
	st->capacity_bytes = atomic_load(&pool->ranges.nr_slots) * PAGE_SIZE;
	st->index_page_bytes = sizeof(struct zpool_entry);
	st->raw_page_bytes =
		pool->geom[ZPOOL_RAW_CLASS].zspage_bytes / pool->geom[ZPOOL_RAW_CLASS].nr_objs +
		st->index_page_bytes;
	st->nr_store_errors = atomic_load(&pool->nr_store_errors);
	st->nr_load_errors = atomic_load(&pool->nr_load_errors);
	st->nr_reject_full = atomic_load(&pool->nr_reject_full);
	st->nr_reject_alloc = atomic_load(&pool->nr_reject_alloc);
	st->nr_reject_raw += atomic_load(&pool->nr_refused_raw);
}

static void zpool_shard_teardown(void *ctx, void *shard)
{
	struct zpool_shard *sh = shard;

	for (uint32_t idx = 0; idx < sh->nr_fresh_slots; idx++)
		if (sh->entries[idx].zspage)
			zpool_obj_free(ctx, sh, sh->entries[idx].zspage, sh->entries[idx].obj);
	free(sh->entries);
	pthread_mutex_destroy(&sh->lock);
}

static void zpool_destroy(struct tier_backend *b)
{
	struct zpool *pool;

	if (!b)
		return;
	pool = zpool_of(b);
	pthread_mutex_lock(&zpool_registry_lock);
	while (pool->tctx_list) {
		struct zpool_tctx *t = pool->tctx_list;

		zpool_tctx_unlink_pool(t);
		t->codec->ctx_free(t->ctx);
		t->ctx = NULL;
		t->pool = NULL;
	}
	zpool_thread_prune();
	pthread_mutex_unlock(&zpool_registry_lock);

	slot_ranges_fini(&pool->ranges, zpool_shard_teardown, pool);
	free(pool);
}

static int zpool_shard_setup(void *shard, uint64_t first, uint32_t nr)
{
	struct zpool_shard *sh = shard;

	(void)first;
	sh->nr_slots = nr;
	sh->free_slot = ZPOOL_NO_SLOT;
	/* Untouched slots cost no memory: calloc maps zero pages. */
	sh->entries = calloc(nr, sizeof(*sh->entries));
	if (!sh->entries)
		return -ENOMEM;
	for (unsigned int c = 0; c < ZPOOL_NR_CLASSES; c++)
		zpool_list_init(&sh->classes[c].partial);
	pthread_mutex_init(&sh->lock, NULL);
	return 0;
}

static int zpool_grow(struct tier_backend *b, uint64_t capacity_bytes)
{
	return slot_ranges_grow(&zpool_of(b)->ranges, capacity_bytes / PAGE_SIZE);
}

/*
 * Shard layout: see ZPOOL_SHARD_BYTES.  A codec_level outside the codec's
 * range (0 included) means its default.  -EINVAL for no codec or less than a
 * page of capacity, or a shard over 2^32 - 2 slots (16 TiB: ask for more
 * shards); -ENOMEM.
 */
static int zpool_create(const struct backend_config *cfg, struct tier_backend **out)
{
	uint64_t capacity_pages = cfg->capacity_bytes / PAGE_SIZE;
	uint64_t nr_shards, shard_slots;
	struct zpool *pool;
	int ret;

	if (!cfg->codec || !capacity_pages)
		return -EINVAL;
	nr_shards = cfg->nr_shards;
	if (!nr_shards)
		nr_shards = (cfg->capacity_bytes + ZPOOL_SHARD_BYTES - 1) / ZPOOL_SHARD_BYTES;
	if (nr_shards > capacity_pages)
		nr_shards = capacity_pages;
	shard_slots = (capacity_pages + nr_shards - 1) / nr_shards;
	nr_shards = (capacity_pages + shard_slots - 1) / shard_slots;
	if (shard_slots > ZPOOL_SHARD_SLOTS_MAX)
		return -EINVAL;

	ret = pthread_once(&zpool_key_once, zpool_key_create);
	if (ret || zpool_key_err)
		return -(ret ? ret : zpool_key_err);

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->base.ops = &tier_backend_zpool;
	pool->codec = cfg->codec;
	pool->level = cfg->codec_level;
	if (pool->level < cfg->codec->min_level || pool->level > cfg->codec->max_level)
		pool->level = cfg->codec->default_level;
	pool->is_raw_refused = cfg->is_raw_refused;
	atomic_init(&pool->pool_bound, UINT64_MAX);
	zpool_geom_init(pool);
	if (slot_ranges_init(&pool->ranges, shard_slots, (unsigned int)nr_shards, capacity_pages,
			     sizeof(struct zpool_shard), _Alignof(struct zpool_shard),
			     zpool_shard_setup)) {
		zpool_destroy(&pool->base);
		return -ENOMEM;
	}

	pthread_mutex_lock(&zpool_registry_lock);
	pool->id = zpool_next_id++;
	pthread_mutex_unlock(&zpool_registry_lock);
	*out = &pool->base;
	return 0;
}

/*
 * For tests/unit/test_zpool.c only: make a compressed slot's blob undecodable
 * by cutting its recorded length in half.  Returns 0, or -EINVAL for a free
 * or raw slot.
 */
int zpool_test_corrupt(struct tier_backend *b, uint64_t slot);
int zpool_test_corrupt(struct tier_backend *b, uint64_t slot)
{
	struct zpool *pool = zpool_of(b);
	struct zpool_shard *sh;
	struct zpool_entry *e;
	uint32_t idx;
	int ret = -EINVAL;

	if (!zpool_slot_locate(pool, slot, &sh, &idx))
		return -EINVAL;
	zpool_shard_lock(sh);
	e = &sh->entries[idx];
	if (e->zspage && e->len < PAGE_SIZE) {
		e->len /= 2;
		ret = 0;
	}
	zpool_shard_unlock(sh);
	return ret;
}

static void zpool_set_pool_bound(struct tier_backend *b, uint64_t bytes)
{
	atomic_store(&zpool_of(b)->pool_bound, bytes);
}

const struct tier_backend_ops tier_backend_zpool = {
	.name = "zpool",
	.is_sync = true,
	.is_compressed = true,
	.create = zpool_create,
	.destroy = zpool_destroy,
	.store = zpool_store,
	.load = zpool_load,
	.free = zpool_free,
	.get_stats = zpool_get_stats,
	.set_pool_bound = zpool_set_pool_bound,
	.grow = zpool_grow,
};
