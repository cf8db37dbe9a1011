// SPDX-License-Identifier: MIT
/* The shard table of a RAM backend's slot space: see slot_ranges.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/pagemap.h"
#include "slot_ranges.h"

/* What an added shard spans at least: 64 MiB of slots. */
#define SLOT_RANGES_GROW_MIN_SLOTS ((64ULL << 20) >> PAGE_SHIFT)

int slot_ranges_init(struct slot_ranges *r, uint64_t stride, unsigned int nr_first,
		     uint64_t nr_slots, size_t shard_size, size_t shard_align,
		     int (*setup)(void *shard, uint64_t first, uint32_t nr))
{
	uint64_t more;

	memset(r, 0, sizeof(*r));
	r->stride = stride;
	r->grow_stride = stride > SLOT_RANGES_GROW_MIN_SLOTS ? stride : SLOT_RANGES_GROW_MIN_SLOTS;
	r->nr_first = nr_first;
	more = (uint64_t)sysconf(_SC_PHYS_PAGES) * BACKEND_GROW_MAX_RAM / r->grow_stride;
	r->max_shards = more < UINT32_MAX - nr_first ? nr_first + (unsigned int)more : UINT32_MAX;
	r->shard_size = shard_size;
	r->shard_align = shard_align;
	r->setup = setup;
	atomic_init(&r->nr_shards, 0);
	atomic_init(&r->nr_slots, 0);
	/* Untouched, the room for shards added later costs no memory. */
	r->shards = calloc(r->max_shards, sizeof(*r->shards));
	if (!r->shards)
		return -ENOMEM;
	return slot_ranges_grow(r, nr_slots);
}

int slot_ranges_grow(struct slot_ranges *r, uint64_t nr_slots)
{
	uint64_t have = atomic_load(&r->nr_slots);
	unsigned int nr = slot_ranges_nr(r);

	for (; have < nr_slots; nr++) {
		uint64_t span = nr < r->nr_first ? r->stride : r->grow_stride;
		uint32_t n = (uint32_t)(nr_slots - have < span ? nr_slots - have : span);
		void *shard;

		if (nr >= r->max_shards)
			return -ENOSPC;
		shard = aligned_alloc(r->shard_align,
				      (r->shard_size + r->shard_align - 1) & ~(r->shard_align - 1));
		if (!shard)
			return -ENOMEM;
		memset(shard, 0, r->shard_size);
		if (r->setup(shard, slot_ranges_first(r, nr), n)) {
			free(shard);
			return -ENOMEM;
		}
		r->shards[nr] = shard;
		atomic_store_explicit(&r->nr_shards, nr + 1, memory_order_release);
		have += n;
		atomic_store(&r->nr_slots, have);
	}
	return 0;
}

void slot_ranges_fini(struct slot_ranges *r, void (*teardown)(void *ctx, void *shard), void *ctx)
{
	for (unsigned int i = 0; r->shards && i < slot_ranges_nr(r); i++) {
		teardown(ctx, r->shards[i]);
		free(r->shards[i]);
	}
	free(r->shards);
	r->shards = NULL;
	atomic_store(&r->nr_shards, 0);
}
