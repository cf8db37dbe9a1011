/* SPDX-License-Identifier: MIT */
/*
 * Drain, like swapoff: bring every swapped page back to memory and empty
 * the backend, on a thread of its own, file by file, in batches loaded in
 * the order the backend lays them out, by loader threads beside it where
 * the backend waits for I/O.  While it runs reclaim evicts nothing.  It
 * can be stopped between batches with nothing lost, and started again.
 */
#ifndef TIERFS_DRAIN_H
#define TIERFS_DRAIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct data_space;
struct ns;

enum drain_state { DRAIN_IDLE, DRAIN_RUNNING, DRAIN_DONE, DRAIN_STOPPED, DRAIN_FAILED };

/* lock protects everything but the atomics and what drain_init set. */
struct drain {
	struct ns *ns;	       /* whose files it walks */
	struct data_space *ds; /* whose backend it empties */
	pthread_mutex_t lock;
	pthread_t thread;
	bool has_thread; /* to join */
	enum drain_state state;
	atomic_bool stop;
	atomic_uint_fast64_t nr_done;	/* pages brought back */
	atomic_uint_fast64_t nr_hits;	/* pages found resident already */
	atomic_uint_fast64_t nr_pauses; /* waits for writers to give room back */
	uint64_t nr_total;		/* swapped pages at the start */
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
	char error[128];
};

struct drain_status {
	enum drain_state state;
	uint64_t nr_done, nr_total, nr_hits;
	uint64_t elapsed_ms, bytes_per_sec;
	char error[128];
};

/* A drain of the files of ns, whose data lives in ds. */
void drain_init(struct drain *d, struct ns *ns, struct data_space *ds);

/* Stop a running drain and wait for it.  Before unmounting. */
void drain_destroy(struct drain *d);

/*
 * Start draining.  Returns 0 (started), 1 (already running) or -ENOSPC
 * with a message in msg when the swapped data does not fit the budget, or
 * another -errno.
 */
int drain_start(struct drain *d, char *msg, size_t size);

/* Ask a running drain to stop after its batch.  Returns true if one runs. */
bool drain_stop(struct drain *d);

void drain_get_status(struct drain *d, struct drain_status *st);

const char *drain_state_name(enum drain_state state);

#endif
