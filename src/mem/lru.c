// SPDX-License-Identifier: MIT
/*
 * Two doubly linked lists threaded through a per-pfn descriptor array, so
 * that adding, removing and moving a page is O(1) and allocation-free.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include "tierfs/lru.h"

int lru_init(struct lru *lru, uint64_t nr_pages)
{
	lru->pages = mmap(NULL, nr_pages * sizeof(*lru->pages), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (lru->pages == MAP_FAILED)
		return -errno;
	lru->nr_pages = nr_pages;
	pthread_mutex_init(&lru->lock, NULL);
	lru_lists_init(&lru->root);
	lru->all[0] = &lru->root;
	lru->nr_all = 1;
	lru->scan_clock = 0;
	return 0;
}

void lru_lists_init(struct lru_lists *l)
{
	for (int i = 0; i < NR_LRU_LISTS; i++) {
		l->head[i] = l->tail[i] = LRU_NIL;
		l->nr[i] = 0;
	}
	l->nr_scanned = l->nr_rotated = l->scanned_at = 0;
	atomic_init(&l->nr_resident, 0);
	atomic_init(&l->nr_swapped, 0);
	atomic_init(&l->limit_pages, 0);
}

int lru_register(struct lru *lru, struct lru_lists *l)
{
	int err = 0;

	pthread_mutex_lock(&lru->lock);
	if (lru->nr_all < LRU_MAX_LISTS)
		lru->all[lru->nr_all++] = l;
	else
		err = -ENOSPC;
	pthread_mutex_unlock(&lru->lock);
	return err;
}

uint64_t lru_nr_listed(struct lru *lru, enum lru_list list)
{
	uint64_t nr = 0;

	pthread_mutex_lock(&lru->lock);
	for (unsigned int i = 0; i < lru->nr_all; i++)
		nr += lru->all[i]->nr[list];
	pthread_mutex_unlock(&lru->lock);
	return nr;
}

void lru_destroy(struct lru *lru)
{
	pthread_mutex_destroy(&lru->lock);
	munmap(lru->pages, lru->nr_pages * sizeof(*lru->pages));
}

static void link_head(struct lru *lru, uint32_t pfn, enum lru_list l)
{
	struct lru_page *p = &lru->pages[pfn];
	struct lru_lists *ls = p->lists;

	p->list = (uint8_t)(l + 1);
	p->prev = LRU_NIL;
	p->next = ls->head[l];
	if (ls->head[l] != LRU_NIL)
		lru->pages[ls->head[l]].prev = pfn;
	else
		ls->tail[l] = pfn;
	ls->head[l] = pfn;
	ls->nr[l]++;
}

void lru_del_locked(struct lru *lru, uint32_t pfn)
{
	struct lru_page *p = &lru->pages[pfn];
	struct lru_lists *ls = p->lists;
	enum lru_list l = (enum lru_list)(p->list - 1);

	if (!p->list)
		return;
	if (p->prev != LRU_NIL)
		lru->pages[p->prev].next = p->next;
	else
		ls->head[l] = p->next;
	if (p->next != LRU_NIL)
		lru->pages[p->next].prev = p->prev;
	else
		ls->tail[l] = p->prev;
	ls->nr[l]--;
	p->list = 0;
}

void lru_rotate_locked(struct lru *lru, uint32_t pfn, enum lru_list to)
{
	lru_del_locked(lru, pfn);
	link_head(lru, pfn, to);
}

void lru_add(struct lru *lru, struct lru_lists *lists, uint32_t pfn, struct inode *inode,
	     uint64_t index, uint64_t swap_slot)
{
	struct lru_page *p = &lru->pages[pfn];

	p->lists = lists;
	p->inode = inode;
	p->index = index;
	p->swap_slot = swap_slot;
	atomic_store_explicit(&p->uses, LRU_UNUSED, memory_order_relaxed);
	atomic_store_explicit(&p->is_readahead, false, memory_order_relaxed);
	pthread_mutex_lock(&lru->lock);
	link_head(lru, pfn, LRU_INACTIVE);
	pthread_mutex_unlock(&lru->lock);
}

bool lru_del_unless_writeback(struct lru *lru, uint32_t pfn)
{
	struct lru_page *p = &lru->pages[pfn];
	bool is_writeback;

	pthread_mutex_lock(&lru->lock);
	lru_del_locked(lru, pfn);
	p->inode = NULL;
	is_writeback = p->is_writeback;
	pthread_mutex_unlock(&lru->lock);
	return !is_writeback;
}
