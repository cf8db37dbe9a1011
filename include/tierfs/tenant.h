/* SPDX-License-Identifier: MIT */
/*
 * Tenants: the memory cgroups of the processes that create files.  tmpfs
 * charges a page to the cgroup that first wrote it; a FUSE daemon sees no
 * such thing, so each file is charged to the cgroup of the process that
 * created it, resolved from the request's pid through /proc/PID/cgroup and
 * kept for the file's life.  A tenant's resident pages are held to a share
 * of its cgroup's own limit (cg_share=, 50 % by default) or to what
 * tierctl set gave it; over it, its own pages are evicted first.
 */
#ifndef TIERFS_TENANT_H
#define TIERFS_TENANT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tierfs/cgroup.h"
#include "tierfs/lru.h"

struct tenant {
	struct lru_lists lists;	    /* its pages and counters */
	char path[PATH_MAX];	    /* the cgroup, in its hierarchy */
	char source[PATH_MAX + 32]; /* where the share came from */
	bool is_set;		    /* share given by tierctl set: kept */
	uint64_t checked_ns;	    /* limit last read, CLOCK_MONOTONIC */
};

/* lock protects the table and each tenant's path, source and is_set. */
struct tenants {
	pthread_mutex_t lock;
	struct tenant *all[LRU_MAX_LISTS - 1];
	unsigned int nr;
	unsigned int share_pct; /* cg_share= */
	struct cgroup_roots roots;
	bool has_roots;
	char own_v1[PATH_MAX], own_v2[PATH_MAX]; /* the daemon's cgroup: no tenant */
};

void tenants_init(struct tenants *t, unsigned int share_pct);
void tenants_destroy(struct tenants *t);

/*
 * The lists a file created by pid is charged to: its cgroup's tenant,
 * created on first sight, or NULL (the root lists) for pid 0, a pid not
 * visible, the root cgroup, the daemon's own cgroup, or no room for one
 * more tenant.
 */
struct lru_lists *tenants_charge(struct tenants *t, struct lru *lru, pid_t pid);

/*
 * Give the tenant at cgroup path a share of bytes (0: back to cg_share=),
 * creating it if needed.  Returns 0 or -errno.
 */
int tenants_set_share(struct tenants *t, struct lru *lru, const char *path, uint64_t bytes);

#endif
