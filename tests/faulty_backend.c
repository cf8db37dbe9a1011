// SPDX-License-Identifier: MIT
/*
 * Fault injection around a real backend (see faulty_backend.h).
 */
#include <errno.h>
#include <stddef.h>

#include "faulty_backend.h"

static struct faulty_backend *faulty(struct tier_backend *b)
{
	return (struct faulty_backend *)((char *)b - offsetof(struct faulty_backend, base));
}

static bool should_fail(struct faulty_backend *f, enum faulty_op op)
{
	unsigned int nr;

	if (op != f->op)
		return false;
	nr = atomic_fetch_add(&f->nr_calls, 1) + 1;
	return f->is_sticky ? nr >= f->fail_at : nr == f->fail_at;
}

static int faulty_store(struct tier_backend *b, void *const *pages, unsigned int nr,
			uint64_t *slots)
{
	struct faulty_backend *f = faulty(b);

	if (should_fail(f, FAULTY_STORE))
		return -EIO;
	return f->inner->ops->store(f->inner, pages, nr, slots);
}

static int faulty_load(struct tier_backend *b, const uint64_t *slots, void *const *pages,
		       unsigned int nr)
{
	struct faulty_backend *f = faulty(b);

	if (should_fail(f, FAULTY_LOAD))
		return -EIO;
	return f->inner->ops->load(f->inner, slots, pages, nr);
}

static void faulty_free(struct tier_backend *b, const uint64_t *slots, unsigned int nr)
{
	struct faulty_backend *f = faulty(b);

	f->inner->ops->free(f->inner, slots, nr);
}

static void faulty_get_stats(struct tier_backend *b, struct backend_stats *st)
{
	struct faulty_backend *f = faulty(b);

	f->inner->ops->get_stats(f->inner, st);
}

static void faulty_destroy(struct tier_backend *b)
{
	struct faulty_backend *f = faulty(b);

	f->inner->ops->destroy(f->inner);
}

void faulty_wrap(struct faulty_backend *f, struct tier_backend *inner, enum faulty_op op,
		 unsigned int fail_at, bool is_sticky)
{
	f->base.ops = &faulty_backend_ops;
	f->inner = inner;
	f->op = op;
	f->fail_at = fail_at;
	f->is_sticky = is_sticky;
	atomic_init(&f->nr_calls, 0);
}

const struct tier_backend_ops faulty_backend_ops = {
	.name = "faulty",
	.is_sync = true,
	.destroy = faulty_destroy,
	.store = faulty_store,
	.load = faulty_load,
	.free = faulty_free,
	.get_stats = faulty_get_stats,
};
