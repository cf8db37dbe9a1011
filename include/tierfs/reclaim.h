/* SPDX-License-Identifier: MIT */
/*
 * Reclaim: evict cold resident pages to the backend.  A thread (like
 * kswapd) runs when resident pages pass the high watermark and stops at the
 * low one; a thread that allocates at the hard limit reclaims a batch
 * itself.  Victims come from the inactive LRU tail; same-filled pages become
 * a map entry, clean pages whose backend copy is valid are dropped without
 * a store, the rest are stored in one call.  The stores hold no lock that
 * another reclaimer needs, so those of the thread and of allocating
 * threads overlap.
 */
#ifndef TIERFS_RECLAIM_H
#define TIERFS_RECLAIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct data_space;
struct inode;
struct lru_lists;
struct lru_page;

/* Pages one batch (one isolation) takes at most. */
#define RECLAIM_BATCH 32

/*
 * Batches one reclaim stores in one call to an asynchronous backend, which
 * writes them as a few large requests; a synchronous backend, whose store
 * is work on the caller's thread, gets one batch a call.
 */
#define RECLAIM_ASYNC_BATCHES 4
#define RECLAIM_MAX_STORE (RECLAIM_BATCH * RECLAIM_ASYNC_BATCHES)

/* A page reclaim has stored (or failed to) and must still take off its owner. */
struct reclaim_pending {
	uint32_t pfn;
	bool is_stored; /* slot holds its copy */
	uint64_t slot;
};

/*
 * Most pages being stored or stored and waiting for a busy owner, in all:
 * room for the stores of the thread and of a few allocating threads, and
 * for a store whose pages all belong to a file being written.
 */
#define RECLAIM_MAX_PENDING (8 * RECLAIM_MAX_STORE)

/*
 * The reclaimer of a data space: its thread and the batches' state.  See
 * the Locking section of space.h for where its locks stand.  The stores
 * of several reclaimers may be in flight at once; each holds room for its
 * pages in pending[] (nr_in_flight) until it appends them.
 */
struct reclaimer {
	pthread_mutex_t batch_lock; /* one isolation at a time, and: */
	struct reclaim_pending pending[RECLAIM_MAX_PENDING];
	atomic_uint nr_pending;	    /* read without the lock by the thread */
	unsigned int nr_in_flight;  /* pages being stored, room kept in pending[] */
	pthread_mutex_t store_lock; /* with stored: a store's pages are stable again */
	pthread_cond_t stored;
	pthread_mutex_t lock; /* protects: */
	pthread_cond_t wake;
	bool stop;
	bool has_thread; /* reclaim_start ran: to join */
	pthread_t thread;
};

void reclaim_init(struct reclaimer *r);

/* After reclaim_stop. */
void reclaim_fini(struct reclaimer *r);

/*
 * Before a write to pool page p (its owner's lock held): wait until no
 * store is reading it.  A page waits a batch's store at most.
 */
void reclaim_wait_stable(struct reclaimer *r, struct lru_page *p);

/* Pages stored whose owners have not been updated yet. */
static inline unsigned int reclaim_nr_pending(struct reclaimer *r)
{
	return atomic_load(&r->nr_pending);
}

/*
 * Evict up to one batch, or RECLAIM_ASYNC_BATCHES of them stored together
 * on an asynchronous backend.  Takes inode locks with trylock only; held
 * is an inode the caller has write-locked (or NULL), whose pages may be
 * evicted too, and which stays locked across the store.  Other reclaimers'
 * stores may be in flight meanwhile.  Returns the number of pool pages
 * freed (0: nothing could be); pages whose owner was busy when the store
 * ended are left pending, for whoever comes next.
 */
uint64_t reclaim_batch(struct data_space *ds, struct inode *held);

/* reclaim_batch from one tenant's lists only (a tenant over its share). */
uint64_t reclaim_batch_from(struct data_space *ds, struct inode *held, struct lru_lists *from);

/*
 * Evict until nr pages are freed or nothing more can be, up to
 * RECLAIM_ASYNC_BATCHES batches a store.  Returns pages freed.
 */
uint64_t reclaim_pages(struct data_space *ds, uint64_t nr);

/* Wake the reclaim thread (cheap; call when above the high watermark). */
void reclaim_kick(struct data_space *ds);

/*
 * Start the reclaim thread; stop it and finish the stores in flight,
 * waiting for those of other threads (no request may run).  Returns 0 or
 * -errno.
 */
int reclaim_start(struct data_space *ds);
void reclaim_stop(struct data_space *ds);

#endif
