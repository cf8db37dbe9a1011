/* SPDX-License-Identifier: MIT */
/*
 * The page map of one file: a radix tree from page index to a 64-bit entry
 * that says where the page's bytes are.  Sparse by construction, so a 1 TiB
 * hole costs nothing, and O(height) per lookup with 64 slots a node.
 */
#ifndef TIERFS_PAGEMAP_H
#define TIERFS_PAGEMAP_H

#include <stdbool.h>
#include <stdint.h>

#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)

/*
 * An entry is one of:
 *   0                      a hole: reads as zeros, holds no memory
 *   pfn << 2 | 1           resident: the page pool's page number pfn
 *   fill << 32 | 2         same-filled: every 32-bit word of the page is fill
 *   1 << 2 | 2             unwritten: allocated by fallocate, reads as zeros,
 *                          and counts as a hole for SEEK_DATA like tmpfs's
 *   slot << 2 | 3          swapped: a slot in the swap backend
 * so that every present page, wherever it lives, is one word in the map.
 */
#define PAGEMAP_HOLE 0ULL
enum pagemap_kind {
	PAGEMAP_KIND_HOLE = 0,
	PAGEMAP_KIND_RESIDENT = 1,
	PAGEMAP_KIND_FILLED = 2,
	PAGEMAP_KIND_SWAPPED = 3,
};

static inline enum pagemap_kind pagemap_kind(uint64_t entry)
{
	return entry == PAGEMAP_HOLE ? PAGEMAP_KIND_HOLE : (enum pagemap_kind)(entry & 3);
}
static inline uint64_t pagemap_mk_resident(uint32_t pfn)
{
	return (uint64_t)pfn << 2 | PAGEMAP_KIND_RESIDENT;
}
static inline uint64_t pagemap_mk_filled(uint32_t fill)
{
	return (uint64_t)fill << 32 | PAGEMAP_KIND_FILLED;
}
static inline uint64_t pagemap_mk_unwritten(void)
{
	return 1ULL << 2 | PAGEMAP_KIND_FILLED;
}
static inline bool pagemap_is_unwritten(uint64_t entry)
{
	return entry == pagemap_mk_unwritten();
}
static inline uint64_t pagemap_mk_swapped(uint64_t slot)
{
	return slot << 2 | PAGEMAP_KIND_SWAPPED;
}
static inline uint32_t pagemap_pfn(uint64_t entry)
{
	return (uint32_t)(entry >> 2);
}
static inline uint32_t pagemap_fill(uint64_t entry)
{
	return (uint32_t)(entry >> 32);
}
static inline uint64_t pagemap_slot(uint64_t entry)
{
	return entry >> 2;
}

struct pagemap_node;

/*
 * Zero-initialise to get an empty map.  A map has no lock of its own: the
 * owning inode's lock protects it (see ns.h).
 */
struct pagemap {
	struct pagemap_node *root; /* NULL when empty */
	unsigned int height;	   /* levels below root; covers 64^height pages */
	uint64_t nr_entries;	   /* present (non-hole) entries */
	uint64_t nr_nodes;	   /* allocated nodes, for the footprint */
};

/* Largest page index a map can hold: enough for a 2^63-1 byte file. */
#define PAGEMAP_MAX_INDEX ((1ULL << (63 - PAGE_SHIFT)) - 1)

/* The entry at index, or PAGEMAP_HOLE. */
uint64_t pagemap_get(const struct pagemap *pm, uint64_t index);

/*
 * Store entry at index (PAGEMAP_HOLE erases it and frees empty nodes); the
 * entry that was there goes to *old unless old is NULL.  Returns 0, -EFBIG
 * past PAGEMAP_MAX_INDEX, or -ENOMEM when a node could not be allocated; on
 * error the map is unchanged.
 */
int pagemap_set(struct pagemap *pm, uint64_t index, uint64_t entry, uint64_t *old);

/*
 * Find the first present entry with index in [*index, last].  On success
 * stores its index and entry and returns true.
 */
bool pagemap_next(const struct pagemap *pm, uint64_t *index, uint64_t last, uint64_t *entry);

/*
 * Erase every entry in [first, last], calling release(ctx, index, entry) on
 * each before it goes (release may be NULL).  Returns how many were erased.
 */
uint64_t pagemap_erase_range(struct pagemap *pm, uint64_t first, uint64_t last,
			     void (*release)(void *ctx, uint64_t index, uint64_t entry), void *ctx);

/* Bytes of node memory the map uses (for the stats). */
uint64_t pagemap_node_bytes(const struct pagemap *pm);

/* Bytes one node takes: what pagemap_set may allocate per level. */
extern const size_t pagemap_node_size;

#endif
