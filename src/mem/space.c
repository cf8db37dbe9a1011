// SPDX-License-Identifier: MIT
/*
 * Builds a data space from its mechanisms and takes it apart in reverse,
 * so that neither the FUSE edge nor the tests know how they fit together.
 */
#include <string.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "tierfs/space.h"

void space_init(struct data_space *ds, struct pagepool *pool, uint64_t max_pages,
		enum readahead_policy policy, uint64_t env_limit_bytes)
{
	memset(ds, 0, sizeof(*ds));
	ds->pool = pool;
	atomic_init(&ds->max_pages, max_pages);
	atomic_init(&ds->nr_pages, 0);
	atomic_init(&ds->nr_filled, 0);
	readahead_init(&ds->ra, policy);
	budget_init(&ds->budget, env_limit_bytes);
	reclaim_init(&ds->reclaim);
	pthread_mutex_init(&ds->load_lock, NULL);
	pthread_cond_init(&ds->load_done, NULL);
}

int space_attach_backend(struct data_space *ds, struct tier_backend *backend)
{
	struct pagepool_stats ps;
	int err;

	pagepool_get_stats(ds->pool, &ps);
	err = lru_init(&ds->lru, ps.nr_pages_max);
	if (err)
		return err;
	ds->backend = backend;
	/* Again, now that the pool of a RAM backend counts; no reclaimer runs yet. */
	budget_update(ds, true);
	return 0;
}

void space_fini(struct data_space *ds)
{
	if (ds->backend) {
		ds->backend->ops->destroy(ds->backend);
		ds->backend = NULL;
		lru_destroy(&ds->lru);
	}
	pthread_cond_destroy(&ds->load_done);
	pthread_mutex_destroy(&ds->load_lock);
	reclaim_fini(&ds->reclaim);
	budget_fini(&ds->budget);
	pagepool_destroy(ds->pool);
}
