// SPDX-License-Identifier: MIT
/*
 * Radix tree page map.  Nodes have 64 slots; leaves hold entries, inner
 * nodes hold child pointers.  The tree grows in height on demand and frees
 * nodes as they empty, so memory follows the number of present pages.
 */
#include <errno.h>
#include <stdlib.h>

#include "tierfs/pagemap.h"

#define MAP_BITS 6
#define MAP_FANOUT (1U << MAP_BITS)
#define MAP_MAX_HEIGHT 9 /* 64^9 = 2^54 > PAGEMAP_MAX_INDEX */

struct pagemap_node {
	uint64_t slots[MAP_FANOUT]; /* entries in leaves, child pointers above */
	unsigned int count;	    /* non-empty slots */
};

const size_t pagemap_node_size = sizeof(struct pagemap_node);

static inline struct pagemap_node *child_of(const struct pagemap_node *node, unsigned int i)
{
	return (struct pagemap_node *)(uintptr_t)node->slots[i];
}

static inline unsigned int slot_of(uint64_t index, unsigned int level)
{
	return (index >> (level * MAP_BITS)) & (MAP_FANOUT - 1);
}

/* Number of indices a map of this height can hold. */
static inline uint64_t capacity(unsigned int height)
{
	return height ? 1ULL << (height * MAP_BITS) : 0;
}

uint64_t pagemap_get(const struct pagemap *pm, uint64_t index)
{
	const struct pagemap_node *node = pm->root;
	unsigned int level;

	if (index >= capacity(pm->height))
		return PAGEMAP_HOLE;
	for (level = pm->height - 1; level > 0; level--) {
		node = child_of(node, slot_of(index, level));
		if (!node)
			return PAGEMAP_HOLE;
	}
	return node->slots[index & (MAP_FANOUT - 1)];
}

static int map_insert(struct pagemap *pm, uint64_t index, uint64_t entry, uint64_t *old_entry)
{
	struct pagemap_node *spare[2 * MAP_MAX_HEIGHT];
	unsigned int nr_spare = 0, need = 0, height = pm->height, level;
	struct pagemap_node *node;
	uint64_t old;

	/* Count and allocate every node first so failure changes nothing. */
	while (index >= capacity(height))
		height++;
	if (!pm->root) {
		need = height;
	} else if (height > pm->height) {
		/*
		 * New roots above the old one, and a fresh path under the
		 * top root's first non-zero digit of index, which is the top.
		 */
		need = (height - pm->height) + (height - 1);
	} else {
		node = pm->root;
		for (level = height - 1; level > 0; level--) {
			node = child_of(node, slot_of(index, level));
			if (!node) {
				need = level;
				break;
			}
		}
	}
	for (nr_spare = 0; nr_spare < need; nr_spare++) {
		spare[nr_spare] = calloc(1, sizeof(struct pagemap_node));
		if (!spare[nr_spare]) {
			while (nr_spare--)
				free(spare[nr_spare]);
			return -ENOMEM;
		}
	}
	pm->nr_nodes += need;

	if (!pm->root) {
		pm->height = height;
		pm->root = spare[--nr_spare];
	}
	while (pm->height < height) {
		struct pagemap_node *up = spare[--nr_spare];

		up->slots[0] = (uintptr_t)pm->root;
		up->count = 1;
		pm->root = up;
		pm->height++;
	}
	node = pm->root;
	for (level = height - 1; level > 0; level--) {
		unsigned int i = slot_of(index, level);

		if (!node->slots[i]) {
			node->slots[i] = (uintptr_t)spare[--nr_spare];
			node->count++;
		}
		node = child_of(node, i);
	}
	old = node->slots[index & (MAP_FANOUT - 1)];
	if (!old) {
		node->count++;
		pm->nr_entries++;
	}
	node->slots[index & (MAP_FANOUT - 1)] = entry;
	*old_entry = old;
	return 0;
}

static uint64_t map_remove(struct pagemap *pm, uint64_t index)
{
	struct pagemap_node *path[MAP_MAX_HEIGHT];
	struct pagemap_node *node = pm->root;
	unsigned int level, depth = 0;
	uint64_t old;

	if (index >= capacity(pm->height))
		return PAGEMAP_HOLE;
	for (level = pm->height - 1;; level--) {
		path[depth++] = node;
		if (level == 0)
			break;
		node = child_of(node, slot_of(index, level));
		if (!node)
			return PAGEMAP_HOLE;
	}
	old = node->slots[index & (MAP_FANOUT - 1)];
	if (!old)
		return PAGEMAP_HOLE;
	node->slots[index & (MAP_FANOUT - 1)] = 0;
	pm->nr_entries--;
	/* Free emptied nodes bottom-up; path[0] is the root. */
	for (level = 0; depth--; level++) {
		node = path[depth];
		if (--node->count)
			break;
		free(node);
		pm->nr_nodes--;
		if (depth == 0) {
			pm->root = NULL;
			pm->height = 0;
		} else {
			path[depth - 1]->slots[slot_of(index, level + 1)] = 0;
		}
	}
	return old;
}

int pagemap_set(struct pagemap *pm, uint64_t index, uint64_t entry, uint64_t *old)
{
	uint64_t ignored;

	if (!old)
		old = &ignored;
	if (index > PAGEMAP_MAX_INDEX)
		return -EFBIG;
	if (entry == PAGEMAP_HOLE) {
		*old = map_remove(pm, index);
		return 0;
	}
	return map_insert(pm, index, entry, old);
}

static bool next_in(const struct pagemap_node *node, unsigned int level, uint64_t base,
		    uint64_t *index, uint64_t last, uint64_t *entry)
{
	unsigned int shift = level * MAP_BITS;
	uint64_t start = *index;
	unsigned int i = start > base ? (unsigned int)((start - base) >> shift) : 0;

	for (; i < MAP_FANOUT; i++) {
		uint64_t child_base = base + ((uint64_t)i << shift);

		if (child_base > last)
			return false;
		if (!node->slots[i])
			continue;
		if (level == 0) {
			*index = child_base;
			*entry = node->slots[i];
			return true;
		}
		*index = start > child_base ? start : child_base;
		if (next_in(child_of(node, i), level - 1, child_base, index, last, entry))
			return true;
	}
	return false;
}

bool pagemap_next(const struct pagemap *pm, uint64_t *index, uint64_t last, uint64_t *entry)
{
	uint64_t start = *index;

	if (!pm->root || start > last || start >= capacity(pm->height))
		return false;
	if (next_in(pm->root, pm->height - 1, 0, index, last, entry))
		return true;
	*index = start;
	return false;
}

struct erase_args {
	struct pagemap *pm;
	uint64_t first, last;
	void (*release)(void *ctx, uint64_t index, uint64_t entry);
	void *ctx;
	uint64_t nr_erased;
};

/* Erase [first, last] below node; returns true when node became empty. */
static bool erase_in(struct erase_args *a, struct pagemap_node *node, unsigned int level,
		     uint64_t base)
{
	unsigned int shift = level * MAP_BITS;
	unsigned int i = a->first > base ? (unsigned int)((a->first - base) >> shift) : 0;

	for (; i < MAP_FANOUT; i++) {
		uint64_t child_base = base + ((uint64_t)i << shift);

		if (child_base > a->last)
			break;
		if (!node->slots[i])
			continue;
		if (level == 0) {
			if (a->release)
				a->release(a->ctx, child_base, node->slots[i]);
			a->nr_erased++;
		} else if (!erase_in(a, child_of(node, i), level - 1, child_base)) {
			continue;
		}
		node->slots[i] = 0;
		node->count--;
	}
	if (node->count)
		return false;
	free(node);
	a->pm->nr_nodes--;
	return true;
}

uint64_t pagemap_erase_range(struct pagemap *pm, uint64_t first, uint64_t last,
			     void (*release)(void *ctx, uint64_t index, uint64_t entry), void *ctx)
{
	struct erase_args a = { pm, first, last, release, ctx, 0 };

	if (!pm->root || first > last || first >= capacity(pm->height))
		return 0;
	if (erase_in(&a, pm->root, pm->height - 1, 0)) {
		pm->root = NULL;
		pm->height = 0;
	}
	pm->nr_entries -= a.nr_erased;
	return a.nr_erased;
}

uint64_t pagemap_node_bytes(const struct pagemap *pm)
{
	return pm->nr_nodes * sizeof(struct pagemap_node);
}
