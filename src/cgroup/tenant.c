// SPDX-License-Identifier: MIT
/*
 * The tenant table: one struct tenant per cgroup seen creating files,
 * never freed while mounted (inodes point at their lists).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tierfs/clock.h"
#include "tierfs/pagemap.h"
#include "tierfs/tenant.h"

/* A tenant's cgroup limit is read again at most this often. */
#define TENANT_CHECK_NS (1000ULL * 1000 * 1000)

void tenants_init(struct tenants *t, unsigned int share_pct)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->share_pct = share_pct;
	t->has_roots = !cgroup_roots_find(NULL, &t->roots);
	if (t->has_roots)
		cgroup_of(getpid(), t->own_v1, sizeof(t->own_v1), t->own_v2, sizeof(t->own_v2));
}

void tenants_destroy(struct tenants *t)
{
	for (unsigned int i = 0; i < t->nr; i++)
		free(t->all[i]);
	pthread_mutex_destroy(&t->lock);
}

/* The cgroup of path's memory hierarchy that limits it: v2 with memory, else v1. */
static bool uses_v2(const struct tenants *t)
{
	return t->roots.v2_has_memory || !t->roots.v1_memory[0];
}

/* cg_share= of the cgroup's limit, unless tierctl set one.  lock held. */
static void update_share(struct tenants *t, struct tenant *tn)
{
	struct cgroup_limit cl;
	uint64_t share = 0;
	int err;

	tn->checked_ns = clock_now_ns();
	if (tn->is_set)
		return;
	err = uses_v2(t) ? cgroup_limit(&t->roots, "", tn->path, &cl) :
			   cgroup_limit(&t->roots, tn->path, "", &cl);
	if (!err && cl.limit_bytes)
		share = cl.limit_bytes / 100 * t->share_pct +
			cl.limit_bytes % 100 * t->share_pct / 100;
	atomic_store(&tn->lists.limit_pages, share >> PAGE_SHIFT);
	if (share)
		snprintf(tn->source, sizeof(tn->source), "cg_share %u%% of %s", t->share_pct,
			 cl.source);
	else
		snprintf(tn->source, sizeof(tn->source), "none: no limit, shares the budget");
}

/* The tenant for path, created if new.  lock held. */
static struct tenant *find_or_add(struct tenants *t, struct lru *lru, const char *path)
{
	struct tenant *tn;

	for (unsigned int i = 0; i < t->nr; i++)
		if (!strcmp(t->all[i]->path, path))
			return t->all[i];
	if (t->nr == sizeof(t->all) / sizeof(t->all[0]))
		return NULL;
	tn = calloc(1, sizeof(*tn));
	if (!tn)
		return NULL;
	lru_lists_init(&tn->lists);
	snprintf(tn->path, sizeof(tn->path), "%s", path);
	if (lru_register(lru, &tn->lists)) {
		free(tn);
		return NULL;
	}
	t->all[t->nr++] = tn;
	update_share(t, tn);
	return tn;
}

struct lru_lists *tenants_charge(struct tenants *t, struct lru *lru, pid_t pid)
{
	char v1[PATH_MAX], v2[PATH_MAX];
	const char *path, *own;
	struct tenant *tn;

	if (!t->has_roots || pid <= 0 || cgroup_of(pid, v1, sizeof(v1), v2, sizeof(v2)))
		return NULL;
	path = uses_v2(t) ? v2 : v1;
	own = uses_v2(t) ? t->own_v2 : t->own_v1;
	if (!path[0] || !strcmp(path, "/") || !strcmp(path, own))
		return NULL;
	pthread_mutex_lock(&t->lock);
	tn = find_or_add(t, lru, path);
	if (tn && clock_now_ns() - tn->checked_ns > TENANT_CHECK_NS)
		update_share(t, tn);
	pthread_mutex_unlock(&t->lock);
	return tn ? &tn->lists : NULL;
}

int tenants_set_share(struct tenants *t, struct lru *lru, const char *path, uint64_t bytes)
{
	struct tenant *tn;

	if (path[0] != '/')
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	tn = find_or_add(t, lru, path);
	if (tn) {
		tn->is_set = bytes != 0;
		if (bytes) {
			atomic_store(&tn->lists.limit_pages, bytes >> PAGE_SHIFT);
			snprintf(tn->source, sizeof(tn->source), "tierctl set");
		} else {
			update_share(t, tn);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return tn ? 0 : -ENOSPC;
}
