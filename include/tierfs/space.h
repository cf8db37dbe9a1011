/* SPDX-License-Identifier: MIT */
/*
 * The composition root of a data space: builds its mechanisms in order
 * (counters, readahead, budget, reclaimer; then the LRU and the backend)
 * and tears them down in reverse.  The daemon and the unit tests build a
 * space only through here.
 */
#ifndef TIERFS_SPACE_H
#define TIERFS_SPACE_H

#include <stdint.h>

#include "tierfs/readahead.h"

struct data_space;
struct pagepool;
struct tier_backend;

/*
 * A space over pool (owned by the space from now on) with no backend:
 * max_pages for size= (0: none), readahead as policy, env_limit_bytes the
 * limit of the surroundings (see budget_set_env_limit; 0: none).  The
 * caps are set next, with budget_set.
 */
void space_init(struct data_space *ds, struct pagepool *pool, uint64_t max_pages,
		enum readahead_policy policy, uint64_t env_limit_bytes);

/*
 * Give the space its swap tier: page lists for every pool page, then
 * backend, owned by the space from now on, and the budget recomputed with
 * it.  Before reclaim_start.  Returns 0, or -ENOMEM with backend still the
 * caller's.
 */
int space_attach_backend(struct data_space *ds, struct tier_backend *backend);

/* Tear down what space_init and space_attach_backend built; after reclaim_stop. */
void space_fini(struct data_space *ds);

#endif
