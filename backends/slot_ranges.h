/* SPDX-License-Identifier: MIT */
/*
 * The slot space of a sharded RAM backend (zpool, ramdisk): shard i holds
 * a range of slot numbers.  The shards made at create are stride numbers
 * apart; those added later, as remount size= grows the mount, grow_stride
 * apart after them.  A shard may hold fewer slots than its stride (the
 * last one made at create, or one added for what was left): the rest of
 * its numbers go unused, so that adding shards moves no slot and disturbs
 * nothing in flight.
 *
 * The shard count only grows.  It is stored with release order after the
 * new shard is in the table, so a reader that sees a count sees the shards
 * below it; a shard's own size never changes.
 */
#ifndef TIERFS_SLOT_RANGES_H
#define TIERFS_SLOT_RANGES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tierfs/pagemap.h"

/* The room a table keeps for shards added later: 16 TiB of slots. */
#define SLOT_RANGES_GROW_MAX_PAGES ((16ULL << 40) >> PAGE_SHIFT)
/* What an added shard spans at least: 64 MiB of slots. */
#define SLOT_RANGES_GROW_MIN_SLOTS ((64ULL << 20) >> PAGE_SHIFT)

struct slot_ranges {
	uint64_t stride;      /* of the shards made at create */
	uint64_t grow_stride; /* of those added since */
	unsigned int nr_first;
	unsigned int max_shards; /* the table's room */
	atomic_uint nr_shards;
};

/* nr_first shards stride apart, and room for 16 TiB more. */
static inline void slot_ranges_init(struct slot_ranges *r, uint64_t stride, unsigned int nr_first)
{
	uint64_t more;

	r->stride = stride;
	r->grow_stride = stride > SLOT_RANGES_GROW_MIN_SLOTS ? stride : SLOT_RANGES_GROW_MIN_SLOTS;
	r->nr_first = nr_first;
	more = SLOT_RANGES_GROW_MAX_PAGES / r->grow_stride;
	r->max_shards = more < UINT32_MAX - nr_first ? nr_first + (unsigned int)more : UINT32_MAX;
	atomic_init(&r->nr_shards, 0);
}

static inline unsigned int slot_ranges_nr(const struct slot_ranges *r)
{
	return atomic_load_explicit(&r->nr_shards, memory_order_acquire);
}

/* Publish shard nr - 1, already in the table. */
static inline void slot_ranges_publish(struct slot_ranges *r, unsigned int nr)
{
	atomic_store_explicit(&r->nr_shards, nr, memory_order_release);
}

/* The first slot number of shard i. */
static inline uint64_t slot_ranges_first(const struct slot_ranges *r, unsigned int i)
{
	if (i <= r->nr_first)
		return (uint64_t)i * r->stride;
	return (uint64_t)r->nr_first * r->stride + (uint64_t)(i - r->nr_first) * r->grow_stride;
}

/* How many slots shard i may hold. */
static inline uint64_t slot_ranges_span(const struct slot_ranges *r, unsigned int i)
{
	return i < r->nr_first ? r->stride : r->grow_stride;
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
