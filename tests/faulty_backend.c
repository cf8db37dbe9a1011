// SPDX-License-Identifier: MIT
/*
 * Fault injection and gates around a real backend (see faulty_backend.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "faulty_backend.h"

/* One op's counters, fault and gate; under the wrapper's lock. */
struct faulty_op_state {
	unsigned int nr_calls;	 /* entered since faulty_new() */
	unsigned int nr_faulted; /* struck by the fault */
	unsigned int nr_last;	 /* pages of the last call entered */
	unsigned int armed_at;	 /* nr_calls when the fault was armed */
	unsigned int nth;	 /* the call after armed_at to strike; 0: no fault */
	int err;		 /* -errno it fails with; 0: a short store */
	unsigned int nr_max;	 /* short store: pages kept */
	bool is_persistent;	 /* strike every call from the nth on */
	bool is_gate_closed;
	unsigned int delay_ms; /* each call waits this long before it goes on */
};

/*
 * lock protects ops[]; changed is signalled when a call enters or a gate
 * opens, on CLOCK_MONOTONIC so that a timed wait ignores clock steps.
 */
struct faulty_backend {
	struct tier_backend base;
	struct tier_backend *inner;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct faulty_op_state ops[FAULTY_NR_OPS];
	bool is_locate_reversed;
	uint64_t last_load[FAULTY_LAST_LOAD]; /* the first slots of the last load */
	unsigned int nr_last_load;
};

static struct faulty_backend *faulty(struct tier_backend *b)
{
	return (struct faulty_backend *)((char *)b - offsetof(struct faulty_backend, base));
}

static bool faulty_is_due(const struct faulty_op_state *s, unsigned int call)
{
	unsigned int nr_since;

	if (!s->nth || call <= s->armed_at)
		return false;
	nr_since = call - s->armed_at;
	return s->is_persistent ? nr_since >= s->nth : nr_since == s->nth;
}

/*
 * Count a call of op for *nr pages and hold it while op's gate is closed.
 * Returns 0 to forward it, with *nr cut to what a short store keeps, or the
 * -errno to fail it with.
 */
static int faulty_enter(struct faulty_backend *f, enum faulty_op op, unsigned int *nr)
{
	struct faulty_op_state *s = &f->ops[op];
	unsigned int call, delay_ms;
	int err = 0;

	pthread_mutex_lock(&f->lock);
	call = ++s->nr_calls;
	s->nr_last = *nr;
	pthread_cond_broadcast(&f->changed);
	while (s->is_gate_closed)
		pthread_cond_wait(&f->changed, &f->lock);
	if (faulty_is_due(s, call)) {
		s->nr_faulted++;
		err = s->err;
		if (!err && s->nr_max < *nr)
			*nr = s->nr_max;
	}
	delay_ms = s->delay_ms;
	pthread_mutex_unlock(&f->lock);
	if (delay_ms) {
		struct timespec ts = { delay_ms / 1000, (long)(delay_ms % 1000) * 1000000 };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return err;
}

static int faulty_store(struct tier_backend *b, void *const *pages, unsigned int nr,
			uint64_t *slots)
{
	struct faulty_backend *f = faulty(b);
	int err = faulty_enter(f, FAULTY_STORE, &nr);

	if (err)
		return err;
	return f->inner->ops->store(f->inner, pages, nr, slots);
}

static int faulty_load(struct tier_backend *b, const uint64_t *slots, void *const *pages,
		       unsigned int nr)
{
	struct faulty_backend *f = faulty(b);
	int err = faulty_enter(f, FAULTY_LOAD, &nr);

	if (err)
		return err;
	pthread_mutex_lock(&f->lock);
	f->nr_last_load = nr < FAULTY_LAST_LOAD ? nr : FAULTY_LAST_LOAD;
	memcpy(f->last_load, slots, f->nr_last_load * sizeof(*slots));
	pthread_mutex_unlock(&f->lock);
	return f->inner->ops->load(f->inner, slots, pages, nr);
}

static uint64_t faulty_locate(struct tier_backend *b, uint64_t slot)
{
	struct faulty_backend *f = faulty(b);
	uint64_t key = f->inner->ops->locate ? f->inner->ops->locate(f->inner, slot) : slot;

	return f->is_locate_reversed ? UINT64_MAX - key : key;
}

/* Free and get_stats cannot fail (faulty_fail refuses them): enter to count and gate. */
static void faulty_free(struct tier_backend *b, const uint64_t *slots, unsigned int nr)
{
	struct faulty_backend *f = faulty(b);

	faulty_enter(f, FAULTY_FREE, &nr);
	f->inner->ops->free(f->inner, slots, nr);
}

static void faulty_get_stats(struct tier_backend *b, struct backend_stats *st)
{
	struct faulty_backend *f = faulty(b);
	unsigned int nr = 0;

	faulty_enter(f, FAULTY_GET_STATS, &nr);
	f->inner->ops->get_stats(f->inner, st);
}

static void faulty_set_pool_bound(struct tier_backend *b, uint64_t bytes)
{
	struct faulty_backend *f = faulty(b);

	f->inner->ops->set_pool_bound(f->inner, bytes);
}

static void faulty_destroy(struct tier_backend *b)
{
	struct faulty_backend *f = faulty(b);

	f->inner->ops->destroy(f->inner);
	pthread_cond_destroy(&f->changed);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static const struct tier_backend_ops faulty_sync_ops = {
	.name = "faulty",
	.is_sync = true,
	.destroy = faulty_destroy,
	.store = faulty_store,
	.load = faulty_load,
	.locate = faulty_locate,
	.free = faulty_free,
	.get_stats = faulty_get_stats,
	.set_pool_bound = faulty_set_pool_bound,
};

static const struct tier_backend_ops faulty_async_ops = {
	.name = "faulty",
	.is_sync = false,
	.destroy = faulty_destroy,
	.store = faulty_store,
	.load = faulty_load,
	.locate = faulty_locate,
	.free = faulty_free,
	.get_stats = faulty_get_stats,
};

int faulty_new(struct tier_backend *inner, bool is_sync, struct faulty_backend **out)
{
	struct faulty_backend *f = calloc(1, sizeof(*f));
	pthread_condattr_t attr;
	int err;

	if (!f)
		return -ENOMEM;
	err = pthread_condattr_init(&attr);
	if (err)
		goto free_f;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&f->changed, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		goto free_f;
	err = pthread_mutex_init(&f->lock, NULL);
	if (err)
		goto destroy_cond;
	f->base.ops = is_sync ? &faulty_sync_ops : &faulty_async_ops;
	f->inner = inner;
	*out = f;
	return 0;

destroy_cond:
	pthread_cond_destroy(&f->changed);
free_f:
	free(f);
	return -err;
}

struct tier_backend *faulty_base(struct faulty_backend *f)
{
	return &f->base;
}

/* Arm op's fault; the caller has checked the arguments. */
static void faulty_arm(struct faulty_backend *f, enum faulty_op op, unsigned int nth, int err,
		       unsigned int nr_max, bool is_persistent)
{
	struct faulty_op_state *s = &f->ops[op];

	pthread_mutex_lock(&f->lock);
	s->armed_at = s->nr_calls;
	s->nth = nth;
	s->err = err;
	s->nr_max = nr_max;
	s->is_persistent = is_persistent;
	pthread_mutex_unlock(&f->lock);
}

int faulty_fail(struct faulty_backend *f, enum faulty_op op, unsigned int nth, int err,
		bool is_persistent)
{
	if ((op != FAULTY_STORE && op != FAULTY_LOAD) || !nth || err >= 0)
		return -EINVAL;
	faulty_arm(f, op, nth, err, 0, is_persistent);
	return 0;
}

int faulty_short_store(struct faulty_backend *f, unsigned int nth, unsigned int nr_max,
		       bool is_persistent)
{
	if (!nth || !nr_max)
		return -EINVAL;
	faulty_arm(f, FAULTY_STORE, nth, 0, nr_max, is_persistent);
	return 0;
}

void faulty_clear(struct faulty_backend *f, enum faulty_op op)
{
	faulty_arm(f, op, 0, 0, 0, false);
}

void faulty_reverse_locate(struct faulty_backend *f)
{
	f->is_locate_reversed = true;
}

unsigned int faulty_last_load(struct faulty_backend *f, uint64_t *slots)
{
	unsigned int nr;

	pthread_mutex_lock(&f->lock);
	nr = f->nr_last_load;
	memcpy(slots, f->last_load, nr * sizeof(*slots));
	pthread_mutex_unlock(&f->lock);
	return nr;
}

void faulty_delay(struct faulty_backend *f, enum faulty_op op, unsigned int ms)
{
	pthread_mutex_lock(&f->lock);
	f->ops[op].delay_ms = ms;
	pthread_mutex_unlock(&f->lock);
}

static void faulty_set_gate(struct faulty_backend *f, enum faulty_op op, bool is_closed)
{
	pthread_mutex_lock(&f->lock);
	f->ops[op].is_gate_closed = is_closed;
	pthread_cond_broadcast(&f->changed);
	pthread_mutex_unlock(&f->lock);
}

void faulty_gate_close(struct faulty_backend *f, enum faulty_op op)
{
	faulty_set_gate(f, op, true);
}

void faulty_gate_open(struct faulty_backend *f, enum faulty_op op)
{
	faulty_set_gate(f, op, false);
}

int faulty_wait_calls(struct faulty_backend *f, enum faulty_op op, unsigned int nr,
		      unsigned int timeout_ms)
{
	struct timespec deadline;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&f->lock);
	while (f->ops[op].nr_calls < nr && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&f->changed, &f->lock, &deadline);
	err = f->ops[op].nr_calls < nr ? -ETIMEDOUT : 0;
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* One of op's counters, read under the lock. */
static unsigned int faulty_read(struct faulty_backend *f, const unsigned int *counter)
{
	unsigned int v;

	pthread_mutex_lock(&f->lock);
	v = *counter;
	pthread_mutex_unlock(&f->lock);
	return v;
}

unsigned int faulty_nr_calls(struct faulty_backend *f, enum faulty_op op)
{
	return faulty_read(f, &f->ops[op].nr_calls);
}

unsigned int faulty_nr_faulted(struct faulty_backend *f, enum faulty_op op)
{
	return faulty_read(f, &f->ops[op].nr_faulted);
}

unsigned int faulty_nr_last(struct faulty_backend *f, enum faulty_op op)
{
	return faulty_read(f, &f->ops[op].nr_last);
}
