/* SPDX-License-Identifier: MIT */
/*
 * A test-only backend that wraps a real one and, per op, counts the calls,
 * fails the Nth call with a chosen -errno (once, or from then on), cuts a
 * store short, holds calls at a gate until the test opens it, or slows them.  Unit tests
 * and the test build of the daemon use it to prove that a failure, or work
 * done while a call is in flight, loses and leaks nothing.
 *
 * Every function is thread-safe: the wrapped ops run on the callers'
 * threads, the controls on the test's.
 */
#ifndef TIERFS_TESTS_FAULTY_BACKEND_H
#define TIERFS_TESTS_FAULTY_BACKEND_H

#include <stdbool.h>

#include "tierfs/backend.h"

struct faulty_backend;

/* The ops a wrapper sees; create and destroy are not calls it intercepts. */
enum faulty_op {
	FAULTY_STORE,
	FAULTY_LOAD,
	FAULTY_FREE,
	FAULTY_GET_STATS,
	FAULTY_NR_OPS,
};

/*
 * Wrap inner, which the wrapper then owns: destroying the wrapper through
 * its ops destroys inner too.  is_sync is what the wrapper reports as
 * ops->is_sync (inner->ops->is_sync to look like inner, or the other value
 * to test a policy that depends on it).  Returns 0 and *out, or -errno
 * (-ENOMEM, or a pthread init's) and then inner is still the caller's.
 */
int faulty_new(struct tier_backend *inner, bool is_sync, struct faulty_backend **out);

/* The wrapper as a backend, to install where inner was. */
struct tier_backend *faulty_base(struct faulty_backend *f);

/*
 * Fail the nth call of op from now on (1: the next) with err, a -errno, and
 * when is_persistent every call after it too; a failed call never reaches
 * inner.  A call counts from when it enters, so one already held at the
 * gate is not one of them.  Replaces whatever fault op had.  Returns 0, or
 * -EINVAL for an op that cannot fail (free and get_stats return nothing),
 * nth 0 or err not negative.
 */
int faulty_fail(struct faulty_backend *f, enum faulty_op op, unsigned int nth, int err,
		bool is_persistent);

/*
 * Cut the nth store from now on (1: the next), and when is_persistent every
 * store after it too, to its first nr_max pages (>= 1): inner stores that
 * prefix at most, as a backend that ran out of room would.  Replaces
 * whatever fault store had.  Returns 0, or -EINVAL for nth or nr_max 0.
 */
int faulty_short_store(struct faulty_backend *f, unsigned int nth, unsigned int nr_max,
		       bool is_persistent);

/* Disarm op's fault: its calls go to inner whole again. */
void faulty_clear(struct faulty_backend *f, enum faulty_op op);

/*
 * Close op's gate: each call of op that enters from now on is counted, then
 * waits there until faulty_gate_open(), and only then meets its fault, if
 * any, or goes to inner.  The test must open every gate it closed before
 * the wrapper is destroyed.
 */
void faulty_gate_close(struct faulty_backend *f, enum faulty_op op);

/* Open op's gate and let every call held there go on. */
void faulty_gate_open(struct faulty_backend *f, enum faulty_op op);

/*
 * Reverse the order locate() gives the inner backend's slots; set before
 * the wrapper is used.
 */
void faulty_reverse_locate(struct faulty_backend *f);

/* Slots the last load call was given, its first FAULTY_LAST_LOAD at most, into slots. */
#define FAULTY_LAST_LOAD 64
unsigned int faulty_last_load(struct faulty_backend *f, uint64_t *slots);

/*
 * Make each call of op that enters from now on wait ms (0: none) after its
 * gate and before it goes to inner, as a slow device would.
 */
void faulty_delay(struct faulty_backend *f, enum faulty_op op, unsigned int ms);

/*
 * Wait until op's calls since faulty_new() number nr or more, entered but
 * maybe held at the gate.  Returns 0, or -ETIMEDOUT after timeout_ms, so
 * that a case whose call never comes fails instead of hanging.
 */
int faulty_wait_calls(struct faulty_backend *f, enum faulty_op op, unsigned int nr,
		      unsigned int timeout_ms);

/* Calls of op since faulty_new(), failed and held ones too. */
unsigned int faulty_nr_calls(struct faulty_backend *f, enum faulty_op op);

/* Calls of op a fault struck (failed or cut short) since faulty_new(). */
unsigned int faulty_nr_faulted(struct faulty_backend *f, enum faulty_op op);

/* Pages the last call of op to enter was asked for (0 for get_stats, or no call yet). */
unsigned int faulty_nr_last(struct faulty_backend *f, enum faulty_op op);

#endif
