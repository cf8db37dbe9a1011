// SPDX-License-Identifier: MIT
/*
 * The drain thread: every regular file in turn, pinned so that it cannot
 * go while its lock is dropped between batches, and its swapped pages
 * brought back a batch at a time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/clock.h"
#include "tierfs/data.h"
#include "tierfs/drain.h"
#include "tierfs/log.h"
#include "tierfs/ns.h"
#include "tierfs/pagepool.h"
#include "tierfs/swapin.h"

/*
 * Pages one batch brings back, at most: the inode is locked meanwhile
 * (about 5 ms from the file backend).  Larger batches give the sort by
 * location longer runs to read, and the loaders fewer waits.
 */
#define DRAIN_BATCH 1024
/* Threads that load beside the drain thread: four loads in flight keep the file busy. */
#define DRAIN_LOADERS 3

static const char *const state_names[] = {
	[DRAIN_IDLE] = "idle",	     [DRAIN_RUNNING] = "running", [DRAIN_DONE] = "done",
	[DRAIN_STOPPED] = "stopped", [DRAIN_FAILED] = "failed",
};

const char *drain_state_name(enum drain_state state)
{
	return state_names[state];
}

void drain_init(struct drain *d, struct ns *ns, struct data_space *ds)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->ns = ns;
	d->ds = ds;
}

/*
 * The threads that load a batch's pieces beside the drain thread, so that
 * a backend that waits for I/O (the file, redis, a chain) has reads in
 * flight while pages are opened (decrypted) on every CPU.  A RAM backend
 * loads a page in about a microsecond: handing pieces over costs it more
 * than it gains (zpool drained 1 GiB in 0.48 s with loaders, 0.38 s
 * without), so it has none.  lock protects everything below it; the drain
 * thread hands out a batch and waits for nr_left to come to 0, loading
 * pieces itself meanwhile.
 */
struct drain_loaders {
	struct tier_backend *backend;
	unsigned int nr_threads;
	pthread_t threads[DRAIN_LOADERS];

	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct swapin_piece *pieces;
	unsigned int nr_pieces, next, nr_left;
	bool stop;
};

/* Load pieces until none is left to take; called and returns with lock held. */
static void loaders_take(struct drain_loaders *l)
{
	while (l->next < l->nr_pieces) {
		struct swapin_piece *p = &l->pieces[l->next++];

		pthread_mutex_unlock(&l->lock);
		p->ret = l->backend->ops->load(l->backend, p->slots, p->pages, p->nr);
		pthread_mutex_lock(&l->lock);
		if (!--l->nr_left)
			pthread_cond_signal(&l->done);
	}
}

static void *loader_thread(void *arg)
{
	struct drain_loaders *l = arg;

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		loaders_take(l);
		pthread_cond_wait(&l->work, &l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* swapin_load_fn: the pieces loaded by every loader and the drain thread. */
static void loaders_run(void *ctx, struct swapin_piece *pieces, unsigned int nr)
{
	struct drain_loaders *l = ctx;

	pthread_mutex_lock(&l->lock);
	l->pieces = pieces;
	l->nr_pieces = nr;
	l->next = 0;
	l->nr_left = nr;
	if (nr > 1)
		pthread_cond_broadcast(&l->work);
	loaders_take(l);
	while (l->nr_left)
		pthread_cond_wait(&l->done, &l->lock);
	l->pieces = NULL;
	l->nr_pieces = 0;
	pthread_mutex_unlock(&l->lock);
}

/* Start the loaders, none for a RAM backend; with none the drain thread loads alone. */
static void loaders_start(struct drain_loaders *l, struct tier_backend *backend)
{
	memset(l, 0, sizeof(*l));
	l->backend = backend;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->work, NULL);
	pthread_cond_init(&l->done, NULL);
	while (!backend->ops->is_sync && l->nr_threads < DRAIN_LOADERS &&
	       !pthread_create(&l->threads[l->nr_threads], NULL, loader_thread, l))
		l->nr_threads++;
}

static void loaders_stop(struct drain_loaders *l)
{
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
	for (unsigned int i = 0; i < l->nr_threads; i++)
		pthread_join(l->threads[i], NULL);
	pthread_cond_destroy(&l->done);
	pthread_cond_destroy(&l->work);
	pthread_mutex_destroy(&l->lock);
}

/* How long a drain with no room waits before it looks again. */
#define DRAIN_PAUSE_US 10000

/*
 * Pages a batch may bring back now: up to the reclaimer's high watermark,
 * so the drain never allocates past the budget, and writers beside it keep
 * the rest (they get ENOSPC, not a wait, while nothing is evicted).
 */
static uint64_t drain_room(struct data_space *ds)
{
	uint64_t high = atomic_load(&ds->budget.high_pages), used = pagepool_nr_in_use(ds->pool);

	return used < high ? high - used : 0;
}

static uint64_t nr_stored(struct data_space *ds)
{
	struct backend_stats bs;

	ds->backend->ops->get_stats(ds->backend, &bs);
	return bs.stored_pages;
}

/*
 * One pass over every file, loading through load (ctx its first argument);
 * returns 0, -EINTR when stopped, or -errno.
 */
static int drain_pass(struct drain *d, swapin_load_fn *load, void *ctx)
{
	struct inode *inode = NULL;
	int err = 0;

	while (!err && (inode = ns_inode_next(d->ns, inode, data_release_unreachable, d->ds))) {
		uint64_t from = 0;
		int64_t n;

		do {
			uint64_t hits = 0, room = drain_room(d->ds);

			if (atomic_load(&d->stop)) {
				err = -EINTR;
				break;
			}
			/* Writers took the room: wait, with no lock held, until it is back. */
			if (!room) {
				atomic_fetch_add(&d->nr_pauses, 1);
				usleep(DRAIN_PAUSE_US);
				n = 1;
				continue;
			}
			pthread_rwlock_wrlock(&inode->lock);
			if (room > DRAIN_BATCH)
				room = DRAIN_BATCH;
			n = swapin_drain(d->ds, inode, &from, room, &hits, load, ctx);
			pthread_rwlock_unlock(&inode->lock);
			if (n < 0)
				err = (int)n;
			else
				atomic_fetch_add(&d->nr_done, (uint64_t)n);
			atomic_fetch_add(&d->nr_hits, hits);
			atomic_fetch_add_explicit(&d->ds->ra.nr_hits, hits, memory_order_relaxed);
		} while (n > 0);
	}
	if (inode)
		ns_inode_next(d->ns, inode, data_release_unreachable, d->ds); /* unpin */
	return err;
}

static void *drain_thread(void *arg)
{
	struct drain *d = arg;
	enum drain_state state = DRAIN_DONE;
	struct drain_loaders loaders;
	int err = 0;

	loaders_start(&loaders, d->ds->backend);
	/* Pages freed behind the walk and swapped again are found by the next pass. */
	for (int pass = 0; pass < 4 && !err && nr_stored(d->ds); pass++)
		err = loaders.nr_threads ? drain_pass(d, loaders_run, &loaders) :
					   drain_pass(d, swapin_load_in_turn, d->ds->backend);
	loaders_stop(&loaders);
	atomic_store(&d->ds->is_draining, false);
	pthread_mutex_lock(&d->lock);
	if (err == -EINTR) {
		state = DRAIN_STOPPED;
	} else if (err) {
		state = DRAIN_FAILED;
		snprintf(d->error, sizeof(d->error), "%s", strerror(-err));
	} else if (nr_stored(d->ds)) {
		state = DRAIN_FAILED;
		snprintf(d->error, sizeof(d->error),
			 "pages kept being swapped out behind the drain");
	}
	d->state = state;
	d->end_ns = clock_now_ns();
	log_msg(state == DRAIN_DONE ? LOG_INFO : LOG_WARNING,
		"drain %s after %llu of %llu pages in %llu ms, paused %llu times%s%s",
		drain_state_name(state), (unsigned long long)atomic_load(&d->nr_done),
		(unsigned long long)d->nr_total,
		(unsigned long long)((d->end_ns - d->start_ns) / 1000000),
		(unsigned long long)atomic_load(&d->nr_pauses), d->error[0] ? ": " : "", d->error);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int drain_start(struct drain *d, char *msg, size_t size)
{
	struct data_space *ds = d->ds;
	uint64_t need, stored;
	int err;

	if (!ds->backend) {
		snprintf(msg, size, "this mount has no backend");
		return -EINVAL;
	}
	pthread_mutex_lock(&d->lock);
	if (d->state == DRAIN_RUNNING) {
		pthread_mutex_unlock(&d->lock);
		return 1;
	}
	if (d->has_thread) {
		pthread_join(d->thread, NULL);
		d->has_thread = false;
	}
	stored = nr_stored(ds);
	need = stored + pagepool_nr_in_use(ds->pool);
	/* The drain fills the budget up to the high watermark (drain_room). */
	if (need > ds->budget.high_pages) {
		pthread_mutex_unlock(&d->lock);
		snprintf(msg, size,
			 "drain needs %" PRIu64 " MiB within the budget, which holds %" PRIu64
			 " MiB: raise it first (tierctl set MOUNT mem=SIZE)",
			 (need * PAGE_SIZE + (1 << 20) - 1) >> 20,
			 ((uint64_t)ds->budget.high_pages * PAGE_SIZE) >> 20);
		return -ENOSPC;
	}
	d->state = DRAIN_RUNNING;
	d->nr_total = stored;
	atomic_store(&d->nr_done, 0);
	atomic_store(&d->nr_hits, 0);
	atomic_store(&d->nr_pauses, 0);
	atomic_store(&d->stop, false);
	d->error[0] = '\0';
	d->start_ns = clock_now_ns();
	atomic_store(&ds->is_draining, true);
	err = pthread_create(&d->thread, NULL, drain_thread, d);
	if (err) {
		atomic_store(&ds->is_draining, false);
		d->state = DRAIN_FAILED;
		snprintf(d->error, sizeof(d->error), "%s", strerror(err));
		snprintf(msg, size, "cannot start: %s", strerror(err));
		pthread_mutex_unlock(&d->lock);
		return -err;
	}
	d->has_thread = true;
	log_msg(LOG_INFO, "drain started: %llu pages to bring back", (unsigned long long)stored);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

bool drain_stop(struct drain *d)
{
	bool is_running;

	pthread_mutex_lock(&d->lock);
	is_running = d->state == DRAIN_RUNNING;
	if (is_running)
		atomic_store(&d->stop, true);
	pthread_mutex_unlock(&d->lock);
	return is_running;
}

void drain_get_status(struct drain *d, struct drain_status *st)
{
	uint64_t end;

	pthread_mutex_lock(&d->lock);
	st->state = d->state;
	st->nr_done = atomic_load(&d->nr_done);
	st->nr_hits = atomic_load(&d->nr_hits);
	st->nr_total = d->nr_total;
	end = d->state == DRAIN_RUNNING ? clock_now_ns() : d->end_ns;
	st->elapsed_ms = d->state == DRAIN_IDLE ? 0 : (end - d->start_ns) / 1000000;
	st->bytes_per_sec = st->elapsed_ms ? st->nr_done * PAGE_SIZE * 1000 / st->elapsed_ms : 0;
	snprintf(st->error, sizeof(st->error), "%s", d->error);
	pthread_mutex_unlock(&d->lock);
}

void drain_destroy(struct drain *d)
{
	drain_stop(d);
	pthread_mutex_lock(&d->lock);
	if (d->has_thread) {
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
		pthread_mutex_lock(&d->lock);
		d->has_thread = false;
	}
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_destroy(&d->lock);
}
