/* SPDX-License-Identifier: MIT */
/*
 * The daemon's own memory cgroup.  A FUSE daemon's memory is charged to the
 * cgroup it runs in, not to the writers', so the tightest limit of that
 * cgroup and its ancestors bounds the footprint whatever mem= and memlimit=
 * say (the tighter limit wins), and is followed while mounted.  Memory pressure events of the cgroup (PSI, or
 * v1 memory.pressure_level) make reclaim start before the budget is hit.
 */
#ifndef TIERFS_MEMCG_H
#define TIERFS_MEMCG_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tierfs/cgroup.h"

struct data_space;

/* lock protects limit and source. */
struct memcg_watch {
	struct data_space *ds;
	struct cgroup_roots roots;
	char v1[PATH_MAX], v2[PATH_MAX]; /* the daemon's cgroups */
	uint64_t fallback_limit;	 /* the footprint's bound without a cgroup limit */
	struct cgroup_pressure pressure; /* fd -1: no pressure source */
	int wake_fd;			 /* eventfd that stops the thread */
	pthread_t thread;
	bool has_thread;
	atomic_uint_fast64_t nr_pressure_events;
	atomic_uint_fast64_t nr_limit_changes;
	pthread_mutex_t lock;
	uint64_t limit;	       /* bytes; 0 = none */
	char source[PATH_MAX]; /* the file the limit came from */
};

/*
 * Find the daemon's cgroup and its limit (0 when none, or no cgroup
 * filesystem).  Returns the limit in bytes.
 */
uint64_t memcg_probe(struct memcg_watch *w);

/*
 * Watch on a thread of its own: pressure events reclaim early; a changed
 * limit becomes the data space's limit from its surroundings, and a lifted
 * one gives way to fallback_limit (0: none).  Returns 0 or -errno.
 */
int memcg_start(struct memcg_watch *w, struct data_space *ds, uint64_t fallback_limit);
void memcg_stop(struct memcg_watch *w);

#endif
