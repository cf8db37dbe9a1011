/* SPDX-License-Identifier: MIT */
/*
 * A test-only backend that wraps a real one and fails a chosen call: the
 * Nth store or load, once or from then on.  Tests use it to prove that a
 * failure loses and leaks nothing.
 */
#ifndef TIERFS_TESTS_FAULTY_BACKEND_H
#define TIERFS_TESTS_FAULTY_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>

#include "tierfs/backend.h"

enum faulty_op { FAULTY_STORE, FAULTY_LOAD };

struct faulty_backend {
	struct tier_backend base;
	struct tier_backend *inner;
	enum faulty_op op;
	unsigned int fail_at;		/* 1 = the next call of op */
	bool is_sticky;			/* fail every call from fail_at on */
	atomic_uint nr_calls;		/* calls of op so far */
};

/* Wrap inner (which the wrapper then owns). */
void faulty_wrap(struct faulty_backend *f, struct tier_backend *inner, enum faulty_op op,
		 unsigned int fail_at, bool is_sticky);

extern const struct tier_backend_ops faulty_backend_ops;

#endif
