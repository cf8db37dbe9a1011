// SPDX-License-Identifier: MIT
/*
 * The tier chain: a RAM tier (zpool or ramdisk) in front of the file
 * backend, as zswap is in front of a swap device.  Stores go to the RAM tier
 * while it is under its bound; a writeback thread moves its oldest entries to
 * the file in large batches once it nears the bound; pages it refuses (they
 * do not compress) and pages that come while it is at its bound go straight
 * to the file.
 *
 * The chain names its own slots.  Each holds one word, the tier and the
 * tier's slot, so writeback moves a page between tiers without touching the
 * page map or the page's clean copy.
 *
 * A spill chain is the same with no bound and no writeback: redis takes
 * what it can, and what it refuses (full) or fails to store (a node down, a
 * timeout) goes to the file.  As the lower tier of a chain it makes three
 * tiers, zpool+redis://...+file:PATH; its words cost 8 bytes more a page.
 * Once redis has turned a store away, stores go to the file first for a
 * while: a second when it was full, and when it failed a second doubling
 * while it goes on failing, since a server down would otherwise make every
 * store wait out redis_timeout= first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tierfs/backend.h"
#include "tierfs/clock.h"
#include "tierfs/log.h"

#define CHAIN_SHARD_SLOTS 16384	  /* 64 MiB of slot space a shard */
#define CHAIN_BATCH 256		  /* pages a store piece or a writeback batch */
#define CHAIN_HIGH_PERMILLE 950	  /* writeback starts at 95 % of the bound... */
#define CHAIN_ACCEPT_PERMILLE 900 /* ...and stops at 90 %, where stores come back */
/* A spill chain's upper tier that failed a store is left alone 1 s, to 64 s if it goes on. */
#define CHAIN_HOLD_MIN_NS 1000000000ULL /* and a full one, always */
#define CHAIN_HOLD_MAX_NS (64 * CHAIN_HOLD_MIN_NS)

/*
 * A slot's word: state in the top two bits, then a writeback flag, then a
 * 21-bit generation (FIFO entries name the store they came from), then the
 * tier's slot (or, free, the next free slot of the shard + 1).
 */
#define W_STATE_SHIFT 62
#define W_FREE 0ULL
#define W_UPPER 1ULL
#define W_LOWER 2ULL
#define W_DEAD 3ULL /* freed during its writeback, which frees it */
#define W_WB (1ULL << 61)
#define W_GEN_SHIFT 40
#define W_GEN_MASK ((1ULL << 21) - 1)
#define W_SLOT_MASK ((1ULL << W_GEN_SHIFT) - 1)

static uint64_t w_state(uint64_t w)
{
	return w >> W_STATE_SHIFT;
}

static uint64_t w_slot(uint64_t w)
{
	return w & W_SLOT_MASK;
}

static uint64_t w_gen(uint64_t w)
{
	return (w >> W_GEN_SHIFT) & W_GEN_MASK;
}

static uint64_t w_make(uint64_t state, uint64_t gen, uint64_t slot)
{
	return state << W_STATE_SHIFT | (gen & W_GEN_MASK) << W_GEN_SHIFT | slot;
}

/*
 * Locking.  A shard's lock protects its free list and fresh cursor; the
 * words themselves change by compare-and-swap.  tier_lock is held shared by
 * a load while it reads a slot from the RAM tier, and taken exclusively
 * once by writeback after it moved a batch, before it frees the RAM tier's
 * copies, so no load reads a RAM slot that was freed under it.  fifo_lock
 * protects the FIFO, wb_lock the writeback thread's wakeups.  No lock is
 * held across I/O; shard locks and fifo_lock are never held together.
 */
struct chain_shard {
	_Alignas(64) pthread_mutex_t lock;
	pthread_rwlock_t tier_lock;
	uint64_t first, nr_slots;
	uint64_t nr_fresh;  /* local slots from here up were never used */
	uint64_t free_head; /* first free local slot + 1; 0: none */
};

struct chain {
	struct tier_backend base;
	struct tier_backend *upper, *lower;
	bool is_spill;	       /* no bound, no writeback, no FIFO: chain_new_spill() */
	_Atomic uint64_t *map; /* a word per slot, mapped lazily */
	uint64_t nr_slots;
	unsigned int nr_shards;
	struct chain_shard *shards;
	atomic_uint_fast64_t gen;

	/* The RAM tier's entries in store order: slot | generation << 40. */
	pthread_mutex_t fifo_lock;
	uint64_t *fifo;
	size_t fifo_cap, fifo_head, fifo_len;

	_Atomic uint64_t pool_max; /* bytes of the RAM tier's pool_bytes */
	atomic_bool is_full;	   /* at the bound: stores go to the file */
	atomic_bool wants_room;	   /* the RAM tier refused a store: write a batch back */

	/* A spill chain: the upper tier is left alone until hold_until (CLOCK_MONOTONIC). */
	_Atomic uint64_t hold_until_ns;
	_Atomic uint64_t hold_ns;	     /* the last hold, while the upper tier keeps failing */
	atomic_bool is_hold_error;	     /* it failed a store, rather than being full */
	_Atomic uint64_t upper_store_errors; /* its nr_store_errors when last looked at */

	pthread_t thread; /* started by the first store */
	pthread_mutex_t wb_lock;
	pthread_cond_t wb_cond;
	bool is_started, is_kicked, is_stopping;
	atomic_bool has_thread; /* is_started, read without wb_lock */
	void *wb_buf;		/* CHAIN_BATCH pages, touched at creation */

	atomic_uint_fast64_t nr_stores, nr_loads, nr_frees, nr_load_errors, nr_store_errors;
	atomic_uint_fast64_t nr_reject_full;
	atomic_uint_fast64_t nr_upper_loads, nr_lower_loads;
	atomic_uint_fast64_t nr_writebacks, nr_writeback_errors;
	atomic_uint_fast64_t nr_huge, nr_sent_full, nr_sent_error;
};

static struct chain *chain_of(struct tier_backend *b)
{
	return (struct chain *)b;
}

static atomic_uint chain_nr_threads;
static _Thread_local unsigned int chain_thread_id;

static unsigned int chain_home_shard(const struct chain *ch)
{
	if (!chain_thread_id)
		chain_thread_id = atomic_fetch_add(&chain_nr_threads, 1) + 1;
	return (chain_thread_id - 1) % ch->nr_shards;
}

static struct chain_shard *chain_shard_of(struct chain *ch, uint64_t slot)
{
	return &ch->shards[slot / CHAIN_SHARD_SLOTS];
}

/* Take up to nr free slots, from the thread's shard on.  Returns how many. */
static unsigned int chain_slots_take(struct chain *ch, unsigned int nr, uint64_t *out)
{
	unsigned int got = 0, start = chain_home_shard(ch);

	for (unsigned int t = 0; t < ch->nr_shards && got < nr; t++) {
		struct chain_shard *sh = &ch->shards[(start + t) % ch->nr_shards];

		pthread_mutex_lock(&sh->lock);
		while (got < nr && sh->free_head) {
			uint64_t local = sh->free_head - 1;

			out[got++] = sh->first + local;
			sh->free_head = w_slot(atomic_load(&ch->map[sh->first + local]));
		}
		while (got < nr && sh->nr_fresh < sh->nr_slots)
			out[got++] = sh->first + sh->nr_fresh++;
		pthread_mutex_unlock(&sh->lock);
	}
	return got;
}

static void chain_slot_put(struct chain *ch, uint64_t slot)
{
	struct chain_shard *sh = chain_shard_of(ch, slot);

	pthread_mutex_lock(&sh->lock);
	atomic_store(&ch->map[slot], w_make(W_FREE, 0, sh->free_head));
	sh->free_head = slot - sh->first + 1;
	pthread_mutex_unlock(&sh->lock);
}

static uint64_t chain_upper_pool(struct chain *ch)
{
	struct backend_stats st;

	ch->upper->ops->get_stats(ch->upper, &st);
	return st.pool_bytes;
}

static void chain_kick(struct chain *ch)
{
	pthread_mutex_lock(&ch->wb_lock);
	ch->is_kicked = true;
	pthread_cond_signal(&ch->wb_cond);
	pthread_mutex_unlock(&ch->wb_lock);
}

static void *chain_writeback_main(void *arg);

/* The writeback thread, once something may need it: a mount that never swaps has none. */
static int chain_start(struct chain *ch)
{
	int ret = 0;

	if (ch->is_spill || atomic_load(&ch->has_thread))
		return 0;
	pthread_mutex_lock(&ch->wb_lock);
	if (!ch->is_started) {
		ret = -pthread_create(&ch->thread, NULL, chain_writeback_main, ch);
		ch->is_started = !ret;
		atomic_store(&ch->has_thread, !ret);
	}
	pthread_mutex_unlock(&ch->wb_lock);
	return ret;
}

/*
 * Whether stores may go to the RAM tier: zswap's accept threshold.  At the
 * bound they go to the file until writeback has brought the tier down to
 * 90 % of it, so a full pool does not flap between the two.  Past 95 % the
 * writeback thread is woken.
 */
static bool chain_upper_accepts(struct chain *ch)
{
	uint64_t max = atomic_load(&ch->pool_max), pool;

	if (ch->is_spill)
		return clock_now_ns() >= atomic_load(&ch->hold_until_ns);
	pool = chain_upper_pool(ch);
	if (pool && pool >= max / 1000 * CHAIN_HIGH_PERMILLE)
		chain_kick(ch);
	if (pool >= max)
		atomic_store(&ch->is_full, true);
	else if (pool <= max / 1000 * CHAIN_ACCEPT_PERMILLE)
		atomic_store(&ch->is_full, false);
	return max && !atomic_load(&ch->is_full);
}

static void fifo_push(struct chain *ch, const uint64_t *entries, unsigned int nr);

/*
 * Whether a spill chain's upper tier that stored only nr_upper of nr pages
 * (ret, its return) failed rather than being full.  A prefix does not say
 * which (redis stores one when a node is down as when the server is full):
 * its store errors, counted only when a store fell short, say.
 */
static bool chain_spill_is_error(struct chain *ch, unsigned int nr_upper, unsigned int nr, int ret)
{
	struct backend_stats st;

	if (nr_upper == nr)
		return false;
	ch->upper->ops->get_stats(ch->upper, &st);
	if (atomic_exchange(&ch->upper_store_errors, st.nr_store_errors) < st.nr_store_errors)
		return true;
	return ret < 0 && ret != -ENOSPC;
}

/*
 * A spill chain's upper tier stored nr_upper of nr pages, is_error telling
 * why not all: a store turned away holds it off, for a second when it was
 * full (frees make room), for twice as long as the last time when it failed
 * again (a node down costs redis_timeout= each time); one taken whole ends
 * the run.  Only a store that did not race with a hold already in force
 * sets one, so concurrent stores failing together double it once.
 */
static void chain_spill_note(struct chain *ch, unsigned int nr_upper, unsigned int nr,
			     bool is_error)
{
	uint64_t now, hold;

	if (nr_upper == nr) {
		if (atomic_load(&ch->hold_ns))
			atomic_store(&ch->hold_ns, 0);
		return;
	}
	now = clock_now_ns();
	if (now < atomic_load(&ch->hold_until_ns))
		return;
	hold = atomic_load(&ch->hold_ns);
	hold = is_error && hold ? hold * 2 : CHAIN_HOLD_MIN_NS;
	if (hold > CHAIN_HOLD_MAX_NS)
		hold = CHAIN_HOLD_MAX_NS;
	atomic_store(&ch->hold_ns, is_error ? hold : 0);
	atomic_store(&ch->is_hold_error, is_error);
	atomic_store(&ch->hold_until_ns, now + hold);
}

/*
 * Store one piece of at most CHAIN_BATCH pages; the contract of store().
 * The upper tier is asked first, and the lower takes what it did not store.
 * A spill chain holding its upper tier off asks the file first instead, and
 * the upper tier takes what the file could not: a hold never makes a store
 * fail that one of the two had room for.
 */
static int chain_store_piece(struct chain *ch, void *const *pages, unsigned int nr, uint64_t *slots)
{
	uint64_t cs[CHAIN_BATCH], fs[CHAIN_BATCH], rs[CHAIN_BATCH], fifo[CHAIN_BATCH];
	void *rpages[CHAIN_BATCH];
	unsigned int ridx[CHAIN_BATCH], nr_first = 0, nr_rest = 0, nr_ok, nr_fifo = 0;
	bool in_first[CHAIN_BATCH];
	struct tier_backend *first = ch->upper, *rest = ch->lower;
	bool is_held = false, is_refused = false;
	int stored_rest = 0, ret = -ENOSPC;
	uint64_t gen;

	nr = chain_slots_take(ch, nr, cs);
	if (!nr) {
		atomic_fetch_add(&ch->nr_reject_full, 1);
		return -ENOSPC;
	}
	if (!chain_upper_accepts(ch)) {
		is_held = ch->is_spill;
		first = is_held ? ch->lower : NULL;
		rest = is_held ? ch->upper : ch->lower;
		if (!is_held)
			atomic_fetch_add(&ch->nr_sent_full, nr);
	}
	if (first) {
		int n = first->ops->store(first, pages, nr, fs);

		nr_first = n > 0 ? (unsigned int)n : 0;
		if (is_held) {
			/* The file took these for the upper tier, for the hold's reason. */
			atomic_fetch_add(atomic_load(&ch->is_hold_error) ? &ch->nr_sent_error :
									   &ch->nr_sent_full,
					 nr_first);
		} else {
			/* A prefix, or -ENOSPC: the tier is full; another -errno: it failed. */
			bool is_error = ch->is_spill ? chain_spill_is_error(ch, nr_first, nr, n) :
						       n < 0 && n != -ENOSPC;

			if (nr_first < nr)
				atomic_fetch_add(is_error ? &ch->nr_sent_error : &ch->nr_sent_full,
						 nr - nr_first);
			if (ch->is_spill)
				chain_spill_note(ch, nr_first, nr, is_error);
			else if (nr_first < nr && !is_error) {
				/* At its bound: the file takes stores until writeback made room. */
				atomic_store(&ch->is_full, true);
				is_refused = true;
			}
		}
	}
	for (unsigned int i = 0; i < nr; i++) {
		in_first[i] = i < nr_first && fs[i] != BACKEND_SLOT_REFUSED;
		if (i < nr_first && !in_first[i])
			atomic_fetch_add(&ch->nr_huge, 1);
		if (!in_first[i]) {
			ridx[nr_rest] = i;
			rpages[nr_rest++] = pages[i];
		}
	}
	if (nr_rest) {
		stored_rest = rest->ops->store(rest, rpages, nr_rest, rs);
		if (stored_rest < 0) {
			ret = stored_rest;
			stored_rest = 0;
		}
	}
	/* A prefix is stored: up to the first page the second tier did not take. */
	nr_ok = (unsigned int)stored_rest < nr_rest ? ridx[stored_rest] : nr;
	/* The second tier took none of the pages past it: only first copies to undo. */
	for (unsigned int i = nr_ok; i < nr; i++) {
		if (in_first[i])
			first->ops->free(first, &fs[i], 1);
		chain_slot_put(ch, cs[i]);
	}
	gen = atomic_fetch_add(&ch->gen, nr_ok);
	for (unsigned int i = 0, j = 0; i < nr_ok; i++, gen = (gen + 1) & W_GEN_MASK) {
		uint64_t ts = in_first[i] ? fs[i] : rs[j++];

		if ((in_first[i] ? first : rest) == ch->upper) {
			atomic_store(&ch->map[cs[i]], w_make(W_UPPER, gen, ts));
			if (!ch->is_spill)
				fifo[nr_fifo++] = cs[i] | gen << W_GEN_SHIFT;
		} else {
			atomic_store(&ch->map[cs[i]], w_make(W_LOWER, 0, ts));
		}
		slots[i] = cs[i];
	}
	if (nr_fifo)
		fifo_push(ch, fifo, nr_fifo);
	/* Woken once the pages are in the FIFO, writeback finds them there. */
	if (is_refused) {
		atomic_store(&ch->wants_room, true);
		chain_kick(ch);
	}
	if (nr_ok < nr)
		atomic_fetch_add(&ch->nr_reject_full, 1);
	if (!nr_ok)
		return ret;
	atomic_fetch_add(&ch->nr_stores, nr_ok);
	return (int)nr_ok;
}

static int chain_store(struct tier_backend *b, void *const *pages, unsigned int nr, uint64_t *slots)
{
	struct chain *ch = chain_of(b);
	unsigned int done = 0;

	if (nr && chain_start(ch)) {
		atomic_fetch_add(&ch->nr_store_errors, 1);
		return -ENOMEM;
	}
	while (done < nr) {
		unsigned int n = nr - done < CHAIN_BATCH ? nr - done : CHAIN_BATCH;
		int ret = chain_store_piece(ch, pages + done, n, slots + done);

		if (ret < 0)
			return done ? (int)done : ret;
		done += (unsigned int)ret;
		if ((unsigned int)ret < n)
			break;
	}
	return (int)done;
}

/* Load a run of one tier's slots, then start the next run.  Returns 0 or -errno. */
static int chain_load_run(struct tier_backend *tier, const uint64_t *ts, void *const *pages,
			  unsigned int *nr, atomic_uint_fast64_t *counter)
{
	int err;

	if (!*nr)
		return 0; /* no shared counter touched for an empty run */
	err = tier->ops->load(tier, ts, pages, *nr);
	atomic_fetch_add(counter, *nr);
	*nr = 0;
	return err;
}

/*
 * A RAM slot is read under its shard's tier_lock, so writeback cannot free
 * it meanwhile; a file slot changes only when the page is freed, which the
 * caller never does during a load.  A spill chain has no writeback: its
 * upper tier's slots are loaded in runs, as the lower tier's are.
 */
static int chain_load(struct tier_backend *b, const uint64_t *slots, void *const *pages,
		      unsigned int nr)
{
	struct chain *ch = chain_of(b);
	uint64_t ls[CHAIN_BATCH], us[CHAIN_BATCH];
	void *lpages[CHAIN_BATCH], *upages[CHAIN_BATCH];
	unsigned int nr_lower = 0, nr_upper = 0, nr_run = 0;
	int err = 0;

	for (unsigned int i = 0; i < nr && !err; i++) {
		uint64_t w;

		if (slots[i] >= ch->nr_slots) {
			err = -EIO;
			break;
		}
		w = atomic_load(&ch->map[slots[i]]);
		if (w_state(w) == W_UPPER && ch->is_spill) {
			us[nr_run] = w_slot(w);
			upages[nr_run++] = pages[i];
			if (nr_run == CHAIN_BATCH)
				err = chain_load_run(ch->upper, us, upages, &nr_run,
						     &ch->nr_upper_loads);
			continue;
		}
		if (w_state(w) == W_UPPER) {
			struct chain_shard *sh = chain_shard_of(ch, slots[i]);

			pthread_rwlock_rdlock(&sh->tier_lock);
			w = atomic_load(&ch->map[slots[i]]);
			if (w_state(w) == W_UPPER) {
				uint64_t ts = w_slot(w);

				err = ch->upper->ops->load(ch->upper, &ts, &pages[i], 1);
				nr_upper++;
			}
			pthread_rwlock_unlock(&sh->tier_lock);
			if (w_state(w) == W_UPPER)
				continue;
		}
		if (w_state(w) != W_LOWER) {
			err = -EIO;
			break;
		}
		ls[nr_lower] = w_slot(w);
		lpages[nr_lower++] = pages[i];
		if (nr_lower == CHAIN_BATCH)
			err = chain_load_run(ch->lower, ls, lpages, &nr_lower, &ch->nr_lower_loads);
	}
	if (!err)
		err = chain_load_run(ch->upper, us, upages, &nr_run, &ch->nr_upper_loads);
	if (!err)
		err = chain_load_run(ch->lower, ls, lpages, &nr_lower, &ch->nr_lower_loads);
	atomic_fetch_add(&ch->nr_upper_loads, nr_upper);
	if (err) {
		atomic_fetch_add(&ch->nr_load_errors, 1);
		return err;
	}
	atomic_fetch_add(&ch->nr_loads, nr);
	return 0;
}

/*
 * The upper tier's slots first, then the lower's, each in its tier's own
 * order: a tier's keys are its slots (below 2^40), or a lower chain's,
 * which are below 2^57.
 */
static uint64_t chain_locate(struct tier_backend *b, uint64_t slot)
{
	struct chain *ch = chain_of(b);
	uint64_t w = slot < ch->nr_slots ? atomic_load(&ch->map[slot]) : 0;
	bool is_lower = w_state(w) == W_LOWER;
	struct tier_backend *tier = is_lower ? ch->lower : ch->upper;
	uint64_t key = tier->ops->locate ? tier->ops->locate(tier, w_slot(w)) : w_slot(w);

	return (is_lower ? 1ULL << 56 : 0) + key;
}

/* Upper 0, lower 1, and a lower chain's own tiers after it. */
static unsigned int chain_tier_of(struct tier_backend *b, uint64_t slot)
{
	struct chain *ch = chain_of(b);
	uint64_t w = slot < ch->nr_slots ? atomic_load(&ch->map[slot]) : 0;

	if (w_state(w) != W_LOWER)
		return 0;
	return 1 + (ch->lower->ops->tier_of ? ch->lower->ops->tier_of(ch->lower, w_slot(w)) : 0);
}

/* A slot under writeback is left to it (marked dead); it frees both copies. */
static void chain_free(struct tier_backend *b, const uint64_t *slots, unsigned int nr)
{
	struct chain *ch = chain_of(b);
	uint64_t us[CHAIN_BATCH], ls[CHAIN_BATCH];
	unsigned int nr_upper = 0, nr_lower = 0;

	for (unsigned int i = 0; i < nr; i++) {
		_Atomic uint64_t *word = &ch->map[slots[i]];
		uint64_t w = atomic_load(word);

		for (;;) {
			if (w & W_WB) {
				if (atomic_compare_exchange_weak(word, &w,
								 w_make(W_DEAD, 0, w_slot(w))))
					break;
				continue;
			}
			if (w_state(w) == W_UPPER) {
				/* Claimed by the CAS, so writeback can no longer take it. */
				if (!atomic_compare_exchange_weak(word, &w, w_make(W_DEAD, 0, 0)))
					continue;
				us[nr_upper++] = w_slot(w);
			} else if (w_state(w) == W_LOWER) {
				ls[nr_lower++] = w_slot(w);
			}
			chain_slot_put(ch, slots[i]);
			break;
		}
		if (nr_upper == CHAIN_BATCH || i + 1 == nr) {
			ch->upper->ops->free(ch->upper, us, nr_upper);
			nr_upper = 0;
		}
		if (nr_lower == CHAIN_BATCH || i + 1 == nr) {
			ch->lower->ops->free(ch->lower, ls, nr_lower);
			nr_lower = 0;
		}
	}
	atomic_fetch_add(&ch->nr_frees, nr);
}

/* ---- the FIFO, the RAM tier's age order ---- */

static bool fifo_is_live(struct chain *ch, uint64_t entry)
{
	uint64_t w = atomic_load(&ch->map[entry & W_SLOT_MASK]);

	return w_state(w) == W_UPPER && !(w & W_WB) && w_gen(w) == entry >> W_GEN_SHIFT;
}

/* Drop entries whose store is gone; grow when that is not enough.  fifo_lock held. */
static void fifo_make_room(struct chain *ch, size_t nr)
{
	size_t kept = 0, cap;
	uint64_t *grown;

	for (size_t i = 0; i < ch->fifo_len; i++) {
		uint64_t e = ch->fifo[(ch->fifo_head + i) % ch->fifo_cap];

		if (fifo_is_live(ch, e))
			ch->fifo[(ch->fifo_head + kept++) % ch->fifo_cap] = e;
	}
	ch->fifo_len = kept;
	if (ch->fifo_len + nr <= ch->fifo_cap - ch->fifo_cap / 4)
		return;
	cap = ch->fifo_cap ? ch->fifo_cap * 2 : 4096;
	while (cap < ch->fifo_len + nr)
		cap *= 2;
	grown = malloc(cap * sizeof(*grown));
	if (!grown)
		return; /* what does not fit stays in the RAM tier until it is freed */
	for (size_t i = 0; i < ch->fifo_len; i++)
		grown[i] = ch->fifo[(ch->fifo_head + i) % ch->fifo_cap];
	free(ch->fifo);
	ch->fifo = grown;
	ch->fifo_cap = cap;
	ch->fifo_head = 0;
}

static void fifo_push(struct chain *ch, const uint64_t *entries, unsigned int nr)
{
	pthread_mutex_lock(&ch->fifo_lock);
	if (ch->fifo_len + nr > ch->fifo_cap)
		fifo_make_room(ch, nr);
	for (unsigned int i = 0; i < nr && ch->fifo_len < ch->fifo_cap; i++)
		ch->fifo[(ch->fifo_head + ch->fifo_len++) % ch->fifo_cap] = entries[i];
	pthread_mutex_unlock(&ch->fifo_lock);
}

/* Claim up to max of the oldest live entries for writeback. */
static unsigned int fifo_claim(struct chain *ch, uint64_t *cs, uint64_t *ts, unsigned int max)
{
	unsigned int nr = 0;

	pthread_mutex_lock(&ch->fifo_lock);
	while (nr < max && ch->fifo_len) {
		uint64_t e = ch->fifo[ch->fifo_head], slot = e & W_SLOT_MASK;
		uint64_t w = atomic_load(&ch->map[slot]);

		ch->fifo_head = (ch->fifo_head + 1) % ch->fifo_cap;
		ch->fifo_len--;
		while (w_state(w) == W_UPPER && !(w & W_WB) && w_gen(w) == e >> W_GEN_SHIFT) {
			if (atomic_compare_exchange_weak(&ch->map[slot], &w, w | W_WB)) {
				cs[nr] = slot;
				ts[nr++] = w_slot(w);
				break;
			}
		}
	}
	pthread_mutex_unlock(&ch->fifo_lock);
	return nr;
}

/* Back to the RAM tier: a writeback that failed keeps the entry there. */
static void chain_unclaim(struct chain *ch, uint64_t slot, uint64_t upper_slot)
{
	_Atomic uint64_t *word = &ch->map[slot];
	uint64_t w = atomic_load(word), entry;

	while (!(w_state(w) == W_DEAD)) {
		if (atomic_compare_exchange_weak(word, &w, w & ~W_WB)) {
			entry = slot | w_gen(w) << W_GEN_SHIFT;
			fifo_push(ch, &entry, 1);
			return;
		}
	}
	ch->upper->ops->free(ch->upper, &upper_slot, 1);
	chain_slot_put(ch, slot);
}

/*
 * Move one batch of the oldest RAM entries to the file.  Returns how many
 * moved, or -errno when the batch could not be read or written (the entries
 * stay in the RAM tier).
 */
static int chain_writeback_batch(struct chain *ch)
{
	uint64_t cs[CHAIN_BATCH], ts[CHAIN_BATCH], ls[CHAIN_BATCH];
	uint64_t done_cs[CHAIN_BATCH], done_ts[CHAIN_BATCH];
	void *pages[CHAIN_BATCH];
	unsigned int nr = fifo_claim(ch, cs, ts, CHAIN_BATCH), nr_done = 0;
	int stored, err = 0;

	if (!nr)
		return 0;
	for (unsigned int i = 0; i < nr; i++)
		pages[i] = (char *)ch->wb_buf + (size_t)i * PAGE_SIZE;
	/* Claimed entries are not freed under us: a free marks them dead instead. */
	err = ch->upper->ops->load(ch->upper, ts, pages, nr);
	stored = err ? 0 : ch->lower->ops->store(ch->lower, pages, nr, ls);
	if (stored < 0) {
		err = stored;
		stored = 0;
	}
	for (unsigned int i = 0; i < nr; i++) {
		_Atomic uint64_t *word = &ch->map[cs[i]];
		uint64_t w = atomic_load(word);

		if ((int)i >= stored) {
			chain_unclaim(ch, cs[i], ts[i]);
			continue;
		}
		while (w_state(w) != W_DEAD &&
		       !atomic_compare_exchange_weak(word, &w, w_make(W_LOWER, 0, ls[i])))
			;
		if (w_state(w) == W_DEAD) {
			ch->lower->ops->free(ch->lower, &ls[i], 1);
			ch->upper->ops->free(ch->upper, &ts[i], 1);
			chain_slot_put(ch, cs[i]);
			continue;
		}
		done_cs[nr_done] = cs[i];
		done_ts[nr_done++] = ts[i];
	}
	/*
	 * Loads that read a moved RAM slot before the switch finish first: each
	 * shard's lock once per run of its slots (store order mostly keeps them together).
	 */
	for (unsigned int i = 0; i < nr_done; i++) {
		struct chain_shard *sh = chain_shard_of(ch, done_cs[i]);

		if (i && sh == chain_shard_of(ch, done_cs[i - 1]))
			continue;
		pthread_rwlock_wrlock(&sh->tier_lock);
		pthread_rwlock_unlock(&sh->tier_lock);
	}
	ch->upper->ops->free(ch->upper, done_ts, nr_done);
	atomic_fetch_add(&ch->nr_writebacks, nr_done);
	if (nr_done < nr)
		atomic_fetch_add(&ch->nr_writeback_errors, nr - nr_done);
	return err && !nr_done ? err : (int)nr_done;
}

static void *chain_writeback_main(void *arg)
{
	static struct log_ratelimit wb_log;
	struct chain *ch = arg;

	pthread_mutex_lock(&ch->wb_lock);
	while (!ch->is_stopping) {
		struct timespec ts;
		bool is_failing = false;

		pthread_mutex_unlock(&ch->wb_lock);
		while (!is_failing) {
			uint64_t max = atomic_load(&ch->pool_max);
			int ret;

			/*
			 * Below the accept threshold, one batch still when the
			 * tier refused a store: a bound of a few zspages or
			 * chunks fills below it, and would keep its oldest
			 * pages for good while every store was turned away.
			 */
			if (chain_upper_pool(ch) <= max / 1000 * CHAIN_ACCEPT_PERMILLE &&
			    !atomic_exchange(&ch->wants_room, false))
				break;
			ret = chain_writeback_batch(ch);
			if (ret < 0)
				log_limited(
					&wb_log, LOG_ERR,
					"chain: writeback to the next tier failed (%s): the pages "
					"stay in the %s tier",
					strerror(-ret), ch->upper->ops->name);
			is_failing = ret <= 0;
			pthread_mutex_lock(&ch->wb_lock);
			is_failing = is_failing || ch->is_stopping;
			pthread_mutex_unlock(&ch->wb_lock);
		}
		/* A bound that was lowered, or a failing file: look again in a while. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&ch->wb_lock);
		if (!ch->is_kicked && !ch->is_stopping)
			pthread_cond_timedwait(&ch->wb_cond, &ch->wb_lock, &ts);
		ch->is_kicked = false;
	}
	pthread_mutex_unlock(&ch->wb_lock);
	return NULL;
}

/* ---- the rest of the ops ---- */

struct tier_backend **chain_tier(struct tier_backend *b, unsigned int i)
{
	struct chain *ch = chain_of(b);

	return i ? &ch->lower : &ch->upper;
}

static void chain_set_pool_max(struct tier_backend *b, uint64_t bytes)
{
	struct chain *ch = chain_of(b);

	if (ch->is_spill)
		return;
	ch->upper->ops->set_pool_bound(ch->upper, bytes);
	if (atomic_exchange(&ch->pool_max, bytes) > bytes)
		chain_kick(ch);
}

static bool chain_is_slot_sync(struct tier_backend *b, uint64_t slot)
{
	struct chain *ch = chain_of(b);

	return slot < ch->nr_slots && w_state(atomic_load(&ch->map[slot])) == W_UPPER &&
	       ch->upper->ops->is_sync;
}

/* Memory the chain itself takes: the words in use, the FIFO, the writeback buffer. */
static uint64_t chain_meta_bytes(struct chain *ch)
{
	uint64_t words = 0, fifo;

	for (unsigned int i = 0; i < ch->nr_shards; i++) {
		pthread_mutex_lock(&ch->shards[i].lock);
		words += ch->shards[i].nr_fresh;
		pthread_mutex_unlock(&ch->shards[i].lock);
	}
	pthread_mutex_lock(&ch->fifo_lock);
	fifo = ch->fifo_cap * sizeof(*ch->fifo);
	pthread_mutex_unlock(&ch->fifo_lock);
	return ((words * sizeof(*ch->map) + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1)) + fifo +
	       (ch->wb_buf ? (uint64_t)CHAIN_BATCH * PAGE_SIZE : 0) +
	       ch->nr_shards * sizeof(*ch->shards);
}

/* The upper tier's entry, then the lower's, or the lower chain's entries. */
static unsigned int chain_get_tiers(struct tier_backend *b, struct backend_tier_stats *out,
				    unsigned int max)
{
	struct chain *ch = chain_of(b);
	struct backend_tier_stats t[BACKEND_MAX_TIERS];
	unsigned int n = 2;

	memset(t, 0, sizeof(t));
	t[0].name = ch->upper->ops->name;
	t[0].is_sync = ch->upper->ops->is_sync;
	ch->upper->ops->get_stats(ch->upper, &t[0].st);
	t[0].pool_max_bytes = ch->is_spill ? 0 : atomic_load(&ch->pool_max);
	t[0].nr_writebacks = atomic_load(&ch->nr_writebacks);
	t[0].nr_writeback_errors = atomic_load(&ch->nr_writeback_errors);
	t[0].nr_rejects_huge = atomic_load(&ch->nr_huge);
	t[0].nr_rejects_full = atomic_load(&ch->nr_sent_full);
	t[0].nr_rejects_error = atomic_load(&ch->nr_sent_error);
	t[0].nr_rejects = t[0].nr_rejects_huge + t[0].nr_rejects_full + t[0].nr_rejects_error;
	if (ch->lower->ops->get_tiers) {
		n = 1 + ch->lower->ops->get_tiers(ch->lower, &t[1], BACKEND_MAX_TIERS - 1);
	} else {
		t[1].name = ch->lower->ops->name;
		t[1].is_sync = ch->lower->ops->is_sync;
		ch->lower->ops->get_stats(ch->lower, &t[1].st);
	}
	t[1].nr_writebacks = t[0].nr_writebacks;
	n = n < max ? n : max;
	memcpy(out, t, n * sizeof(*t));
	return n;
}

static void chain_get_stats(struct tier_backend *b, struct backend_stats *st)
{
	struct chain *ch = chain_of(b);
	struct backend_stats up, low;
	uint64_t meta;

	ch->upper->ops->get_stats(ch->upper, &up);
	ch->lower->ops->get_stats(ch->lower, &low);
	memset(st, 0, sizeof(*st));
	/*
	 * The pages the caller holds slots for: a page in flight to the file is
	 * in both tiers, and a freed one stays in them until its writeback ends.
	 */
	st->nr_frees = atomic_load(&ch->nr_frees);
	st->nr_stores = atomic_load(&ch->nr_stores);
	st->stored_pages = st->nr_stores - st->nr_frees;
	st->stored_bytes = st->stored_pages * PAGE_SIZE;
	st->pool_bytes = up.pool_bytes + low.pool_bytes;
	/*
	 * What the chain surely holds: the file's slots (the pool adds as it
	 * compresses); a spill chain's redis names its slots, as alone.
	 */
	st->capacity_bytes = low.capacity_bytes + (ch->is_spill ? up.capacity_bytes : 0);
	meta = chain_meta_bytes(ch);
	st->meta_bytes = meta + up.meta_bytes + low.meta_bytes;
	st->ram_bytes = up.ram_bytes + low.ram_bytes + meta;
	st->nr_loads = atomic_load(&ch->nr_loads);
	/* The upper tier's failed stores went on to the lower: rejects_error, not errors. */
	st->nr_store_errors = low.nr_store_errors + atomic_load(&ch->nr_store_errors);
	st->nr_load_errors = atomic_load(&ch->nr_load_errors);
	st->nr_reject_full = atomic_load(&ch->nr_reject_full);
	st->nr_reject_alloc = up.nr_reject_alloc + low.nr_reject_alloc;
	st->nr_reject_raw = up.nr_reject_raw;
	st->nr_decrypt_errors = up.nr_decrypt_errors + low.nr_decrypt_errors;
	st->nr_fallback_buffered = low.nr_fallback_buffered;
	st->nr_fallback_sparse = low.nr_fallback_sparse;
}

static void chain_destroy(struct tier_backend *b)
{
	struct chain *ch = chain_of(b);

	if (!b)
		return;
	pthread_mutex_lock(&ch->wb_lock);
	ch->is_stopping = true;
	pthread_cond_signal(&ch->wb_cond);
	pthread_mutex_unlock(&ch->wb_lock);
	if (ch->is_started)
		pthread_join(ch->thread, NULL);
	if (ch->wb_buf)
		munmap(ch->wb_buf, (size_t)CHAIN_BATCH * PAGE_SIZE);
	for (unsigned int i = 0; i < ch->nr_shards; i++) {
		pthread_mutex_destroy(&ch->shards[i].lock);
		pthread_rwlock_destroy(&ch->shards[i].tier_lock);
	}
	if (ch->map)
		munmap(ch->map, ch->nr_slots * sizeof(*ch->map));
	free(ch->shards);
	free(ch->fifo);
	pthread_mutex_destroy(&ch->fifo_lock);
	pthread_mutex_destroy(&ch->wb_lock);
	pthread_cond_destroy(&ch->wb_cond);
	ch->upper->ops->destroy(ch->upper);
	ch->lower->ops->destroy(ch->lower);
	free(ch);
}

static int chain_init(struct tier_backend *upper, struct tier_backend *lower,
		      uint64_t pool_max_bytes, bool is_spill, struct tier_backend **out)
{
	struct backend_stats up, low;
	struct chain *ch = calloc(1, sizeof(*ch));
	unsigned int nr_shards;
	int ret = -ENOMEM;

	if (!ch) {
		upper->ops->destroy(upper);
		lower->ops->destroy(lower);
		return -ENOMEM;
	}
	ch->base.ops = &tier_backend_chain;
	ch->upper = upper;
	ch->lower = lower;
	ch->is_spill = is_spill;
	pthread_mutex_init(&ch->fifo_lock, NULL);
	pthread_mutex_init(&ch->wb_lock, NULL);
	pthread_cond_init(&ch->wb_cond, NULL);
	atomic_init(&ch->pool_max, pool_max_bytes);
	/*
	 * The tier itself refuses what would take it past the bound: stores
	 * that found it below the bound and ran together took it past by up
	 * to a piece each.
	 */
	if (!is_spill)
		upper->ops->set_pool_bound(upper, pool_max_bytes);
	upper->ops->get_stats(upper, &up);
	lower->ops->get_stats(lower, &low);
	/* Every slot of both tiers may be in use at once. */
	ch->nr_slots = (up.capacity_bytes + low.capacity_bytes) >> PAGE_SHIFT;
	if (!ch->nr_slots || ch->nr_slots > W_SLOT_MASK ||
	    (up.capacity_bytes >> PAGE_SHIFT) > W_SLOT_MASK) {
		ret = -EINVAL;
		goto destroy;
	}
	ch->map = mmap(NULL, ch->nr_slots * sizeof(*ch->map), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ch->map == MAP_FAILED) {
		ch->map = NULL;
		goto destroy;
	}
	nr_shards = (unsigned int)((ch->nr_slots + CHAIN_SHARD_SLOTS - 1) / CHAIN_SHARD_SLOTS);
	ch->shards = calloc(nr_shards, sizeof(*ch->shards));
	if (!ch->shards)
		goto destroy;
	ch->nr_shards = nr_shards;
	for (unsigned int i = 0; i < ch->nr_shards; i++) {
		struct chain_shard *sh = &ch->shards[i];

		pthread_mutex_init(&sh->lock, NULL);
		pthread_rwlock_init(&sh->tier_lock, NULL);
		sh->first = (uint64_t)i * CHAIN_SHARD_SLOTS;
		sh->nr_slots = ch->nr_slots - sh->first < CHAIN_SHARD_SLOTS ?
				       ch->nr_slots - sh->first :
				       CHAIN_SHARD_SLOTS;
	}
	if (!is_spill) {
		ch->wb_buf = mmap(NULL, (size_t)CHAIN_BATCH * PAGE_SIZE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (ch->wb_buf == MAP_FAILED) {
			ch->wb_buf = NULL;
			goto destroy;
		}
	}
	*out = &ch->base;
	return 0;

destroy:
	chain_destroy(&ch->base);
	return ret;
}

int chain_new(struct tier_backend *upper, struct tier_backend *lower, uint64_t pool_max_bytes,
	      struct tier_backend **out)
{
	return chain_init(upper, lower, pool_max_bytes, false, out);
}

int chain_new_spill(struct tier_backend *upper, struct tier_backend *lower,
		    struct tier_backend **out)
{
	return chain_init(upper, lower, 0, true, out);
}

/*
 * redis (cfg->lower) and the file it spills to (spill_path,
 * spill_capacity_bytes), as a spill chain; or the one last tier cfg names.
 */
static int chain_create_last(const struct backend_config *cfg, struct tier_backend **out)
{
	const struct tier_backend_ops *last = cfg->lower ? cfg->lower : backend_find("file");
	const struct tier_backend_ops *file = backend_find("file");
	struct backend_config fcfg = *cfg;
	struct tier_backend *upper, *lower;
	int ret;

	if (!last || last->is_sync || (cfg->spill_path && (!file || last == file)))
		return -EINVAL;
	ret = last->create(cfg, &upper);
	if (ret)
		return ret;
	if (!cfg->spill_path) {
		*out = upper;
		return 0;
	}
	fcfg.path = cfg->spill_path;
	fcfg.capacity_bytes = cfg->spill_capacity_bytes;
	ret = file->create(&fcfg, &lower);
	if (ret) {
		/* redis logged its own failure; this one would only show as an errno. */
		log_msg(LOG_ERR, "chain: cannot create the swap file %s (%llu MiB): %s",
			cfg->spill_path, (unsigned long long)(cfg->spill_capacity_bytes >> 20),
			strerror(-ret));
		upper->ops->destroy(upper);
		return ret;
	}
	return chain_new_spill(upper, lower, out);
}

/*
 * cfg names the last tier (lower: the file when NULL, or redis; path,
 * capacity_bytes, sealing, and spill_path for a file after redis) and the
 * RAM tier (upper, upper_capacity_bytes, the codec; NULL: none, redis spills
 * to the file); the RAM tier refuses what does not compress, which the next
 * tier takes raw.
 */
static int chain_create(const struct backend_config *cfg, struct tier_backend **out)
{
	struct backend_config ucfg = *cfg;
	struct tier_backend *upper, *lower;
	int ret;

	if ((cfg->upper && !cfg->upper->is_sync) || (!cfg->upper && !cfg->spill_path))
		return -EINVAL;
	if (!cfg->upper)
		return chain_create_last(cfg, out);
	ucfg.capacity_bytes = cfg->upper_capacity_bytes;
	ucfg.is_raw_refused = true;
	ret = cfg->upper->create(&ucfg, &upper);
	if (ret)
		return ret;
	ret = chain_create_last(cfg, &lower);
	if (ret) {
		upper->ops->destroy(upper);
		return ret;
	}
	return chain_new(upper, lower, cfg->pool_max_bytes, out);
}

static int chain_check_path(const char *path, struct stat *st, char *why, size_t why_len)
{
	const struct tier_backend_ops *file = backend_find("file");

	if (!file) {
		snprintf(why, why_len, "the file backend is not built in");
		return -EINVAL;
	}
	return file->check_path(path, st, why, why_len);
}

/* redis's servers, in whichever tier redis is. */
static unsigned int chain_get_nodes(struct tier_backend *b, struct backend_node_stats *out,
				    unsigned int max)
{
	struct chain *ch = chain_of(b);

	if (ch->upper->ops->get_nodes)
		return ch->upper->ops->get_nodes(ch->upper, out, max);
	return ch->lower->ops->get_nodes ? ch->lower->ops->get_nodes(ch->lower, out, max) : 0;
}

const struct tier_backend_ops tier_backend_chain = {
	.name = "chain",
	.is_sync = false,
	.create = chain_create,
	.destroy = chain_destroy,
	.store = chain_store,
	.load = chain_load,
	.locate = chain_locate,
	.free = chain_free,
	.get_stats = chain_get_stats,
	.check_path = chain_check_path,
	.get_tiers = chain_get_tiers,
	.tier_of = chain_tier_of,
	.set_pool_max = chain_set_pool_max,
	.is_slot_sync = chain_is_slot_sync,
	.get_nodes = chain_get_nodes,
};
