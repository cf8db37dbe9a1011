/* SPDX-License-Identifier: MIT */
/*
 * The shards of a RAM backend's slot space (zpool, ramdisk): shard i holds
 * a range of slot numbers, under a lock of its own.  The shards made at
 * create are stride numbers apart; those added later, as remount size=
 * grows the mount, grow_stride apart after them.  A shard may hold fewer
 * slots than its stride (the last one made at create, or one added for
 * what was left): the rest of its numbers go unused, so that adding shards
 * moves no slot and disturbs nothing in flight.
 *
 * The shard count only grows.  It is stored with release order after the
 * new shard is in the table, so a reader that sees a count sees the shards
 * below it; a shard's own range never changes.
 */
#ifndef TIERFS_SLOT_RANGES_H
#define TIERFS_SLOT_RANGES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct slot_ranges {
	uint64_t stride;      /* of the shards made at create */
	uint64_t grow_stride; /* of those added since */
	unsigned int nr_first;
	unsigned int max_shards; /* the table's room */
	size_t shard_size, shard_align;
	/* Fill a zeroed shard for nr slots from first on: 0, or -ENOMEM with nothing held. */
	int (*setup)(void *shard, uint64_t first, uint32_t nr);
	void **shards;
	atomic_uint nr_shards;
	atomic_uint_fast64_t nr_slots; /* every shard's */
};

/*
 * Room for nr_first shards stride apart and slots for BACKEND_GROW_MAX_RAM
 * times RAM more, and the shards to hold nr_slots (each shard_size bytes,
 * shard_align aligned, set up by setup).  Returns 0 or -ENOMEM;
 * slot_ranges_fini either way.
 */
int slot_ranges_init(struct slot_ranges *r, uint64_t stride, unsigned int nr_first,
		     uint64_t nr_slots, size_t shard_size, size_t shard_align,
		     int (*setup)(void *shard, uint64_t first, uint32_t nr));

/*
 * Add shards until the slots reach nr_slots: 0, or -ENOMEM (-ENOSPC past
 * the table's room) with what could be added added.  One call at a time.
 */
int slot_ranges_grow(struct slot_ranges *r, uint64_t nr_slots);

/* teardown(ctx, shard) for each shard, then free them and the table. */
void slot_ranges_fini(struct slot_ranges *r, void (*teardown)(void *ctx, void *shard), void *ctx);

static inline unsigned int slot_ranges_nr(const struct slot_ranges *r)
{
	return atomic_load_explicit(&r->nr_shards, memory_order_acquire);
}

/* Shard i, below slot_ranges_nr(). */
static inline void *slot_ranges_shard(const struct slot_ranges *r, unsigned int i)
{
	return r->shards[i];
}

/* The first slot number of shard i. */
static inline uint64_t slot_ranges_first(const struct slot_ranges *r, unsigned int i)
{
	if (i <= r->nr_first)
		return (uint64_t)i * r->stride;
	return (uint64_t)r->nr_first * r->stride + (uint64_t)(i - r->nr_first) * r->grow_stride;
}

/*
 * The shard slot is in and its index there; false when no shard published
 * spans it (the caller checks the index against the shard's size).
 */
static inline bool slot_ranges_find(const struct slot_ranges *r, uint64_t slot, unsigned int *shard,
				    uint64_t *idx)
{
	uint64_t base = (uint64_t)r->nr_first * r->stride, i;

	if (slot < base) {
		i = slot / r->stride;
		*idx = slot % r->stride;
	} else {
		i = r->nr_first + (slot - base) / r->grow_stride;
		*idx = (slot - base) % r->grow_stride;
	}
	if (i >= slot_ranges_nr(r))
		return false;
	*shard = (unsigned int)i;
	return true;
}

#endif
