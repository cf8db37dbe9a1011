// SPDX-License-Identifier: MIT
/*
 * Unit tests of reclaim's writeback: a backend whose store blocks at a gate
 * lets the test read, write, truncate, punch and release the victims, keep
 * their owner busy, or start a second reclaim or reclaim_stop, while the
 * store is in flight, then checks what each page became and that no pool
 * page or backend slot leaked.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "faulty_backend.h"
#include "space.h"

#define MEM_PAGES 512 /* far above what a case writes: no reclaim on its own */
#define SWAP_PAGES 256
#define GATE_TIMEOUT_S 10 /* only so that a broken reclaim fails instead of hanging */

/* Linked with -Wl,--wrap=malloc: every malloc of a thread that set this fails. */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static _Thread_local bool is_malloc_failing;

void *__wrap_malloc(size_t size)
{
	return is_malloc_failing ? NULL : __real_malloc(size);
}

/*
 * Wait until store call number nr has entered; returns the pages it was
 * asked for, or 0 after GATE_TIMEOUT_S.
 */
static unsigned int gate_wait_entered(struct faulty_backend *g, unsigned int nr)
{
	if (faulty_wait_calls(g, FAULTY_STORE, nr, GATE_TIMEOUT_S * 1000) < 0)
		return 0;
	return faulty_nr_last(g, FAULTY_STORE);
}

/*
 * A data space over a ramdisk wrapped for faults and a gate at its store,
 * which reclaim takes for a synchronous backend or, is_sync false, for an
 * asynchronous one such as the file backend.
 */
static bool gated_space_new_as(struct data_space *ds, struct faulty_backend **g, bool is_sync)
{
	struct tier_backend *inner = space_ramdisk(SWAP_PAGES);

	if (!inner)
		return false;
	if (!CHECK_EQ(0, faulty_new(inner, is_sync, g))) {
		inner->ops->destroy(inner);
		return false;
	}
	return space_new(ds, faulty_base(*g), MEM_PAGES);
}

static bool gated_space_new(struct data_space *ds, struct faulty_backend **g)
{
	return gated_space_new_as(ds, g, true);
}

/*
 * Lock the file while a store is in flight.  Reclaim must not hold the lock
 * then; if it does, fail, and open the gate so that the case ends instead
 * of hanging.
 */
static void lock_during_store(struct faulty_backend *g, struct inode *inode, bool is_write)
{
	struct timespec deadline;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += GATE_TIMEOUT_S;
	err = is_write ? pthread_rwlock_clockwrlock(&inode->lock, CLOCK_MONOTONIC, &deadline) :
			 pthread_rwlock_clockrdlock(&inode->lock, CLOCK_MONOTONIC, &deadline);
	if (CHECK_EQ(0, err))
		return;
	faulty_gate_open(g, FAULTY_STORE);
	if (is_write)
		pthread_rwlock_wrlock(&inode->lock);
	else
		pthread_rwlock_rdlock(&inode->lock);
}

/* Whether page index reads as expected (caller holds the lock, or runs alone). */
static bool check_page(struct data_space *ds, const struct inode *inode, uint64_t index,
		       const unsigned char *expected)
{
	static unsigned char got[P];

	memset(got, 0xee, P);
	CHECK_EQ((ssize_t)P, data_read_mem(ds, inode, index * P, got, P));
	return CHECK_MEM(expected, got, P);
}

static bool check_pattern(struct data_space *ds, const struct inode *inode, uint64_t index,
			  unsigned int seed)
{
	static unsigned char expected[P];

	pattern(expected, seed, index);
	return check_page(ds, inode, index, expected);
}

/*
 * All @nr pages of @inode are swapped, in the backend and none in the pool,
 * and each reads back its pattern.
 */
static void check_all_swapped(struct data_space *ds, const struct inode *inode, uint64_t nr,
			      unsigned int seed)
{
	CHECK_EQ(0, pool_in_use(ds));
	CHECK_EQ(nr, backend_stored(ds));
	for (uint64_t i = 0; i < nr; i++) {
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(inode, i));
		check_pattern(ds, inode, i, seed);
	}
}

static uint32_t pfn_of(const struct inode *inode, uint64_t index)
{
	return pagemap_pfn(pagemap_get(&inode->pages, index));
}

/* reclaim_batch on its own thread, as the reclaimer would run it. */
struct batch_thread {
	struct data_space *ds;
	pthread_t thread;
	uint64_t nr_freed;
};

static void *batch_main(void *arg)
{
	struct batch_thread *t = arg;

	t->nr_freed = reclaim_batch(t->ds, NULL);
	return NULL;
}

static bool batch_start(struct batch_thread *t, struct data_space *ds)
{
	t->ds = ds;
	t->nr_freed = UINT64_MAX;
	return CHECK_EQ(0, pthread_create(&t->thread, NULL, batch_main, t));
}

static uint64_t batch_join(struct batch_thread *t)
{
	pthread_join(t->thread, NULL);
	return t->nr_freed;
}

#define NR 4 /* pages of the file in each case */

/* Case 1: the store runs with no inode lock; the victims stay readable. */
static void test_no_lock_during_store(void)
{
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct inode f;

	check_set_context("no lock during store");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 1);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));

	/* A writer (and a reader) can take the lock while the store runs. */
	if (CHECK_EQ(0, pthread_rwlock_trywrlock(&f.lock)))
		pthread_rwlock_unlock(&f.lock);
	lock_during_store(g, &f, false);
	for (uint64_t i = 0; i < NR; i++) {
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
		CHECK(lru_page(&ds.lru, pfn_of(&f, i))->is_writeback);
		check_pattern(&ds, &f, i, 1);
	}
	pthread_rwlock_unlock(&f.lock);
	CHECK_EQ(NR, pool_in_use(&ds));
	CHECK_EQ(0, backend_stored(&ds));

	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(NR, batch_join(&t));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(NR, atomic_load(&ds.swap.nr_evicted));
	check_all_swapped(&ds, &f, NR, 1);
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * A change to the file on its own thread, as a FUSE worker makes it: the
 * file locked, the change, then the lock held until the case lets go, so
 * that the case knows who holds it when the store ends.
 */
struct locked_change {
	struct data_space *ds;
	struct inode *inode;
	uint64_t size; /* UINT64_MAX: write news at off; else truncate to it */
	const void *news;
	size_t len;
	uint64_t off;
	pthread_t thread;
	atomic_bool is_changed;
	atomic_bool is_let_go;
	ssize_t ret;
};

static void *change_main(void *arg)
{
	struct locked_change *c = arg;
	const struct timespec tick = { 0, 1000000 };

	pthread_rwlock_wrlock(&c->inode->lock);
	c->ret = c->size == UINT64_MAX ? data_write_mem(c->ds, c->inode, c->news, c->len, c->off) :
					 data_truncate(c->ds, c->inode, c->size);
	atomic_store(&c->is_changed, true);
	while (!atomic_load(&c->is_let_go))
		nanosleep(&tick, NULL);
	pthread_rwlock_unlock(&c->inode->lock);
	return NULL;
}

/*
 * Start c while a call of op held at its gate uses the pages (a store reads
 * them: stable pages; a load reads their slots): the change must wait for
 * it, so it has not happened 100 ms later; then open the gate and wait for
 * it.  Returns whether it waited and then happened.
 */
static bool change_after_gate(struct locked_change *c, struct faulty_backend *g, enum faulty_op op)
{
	const struct timespec wait = { 0, 100000000 };
	bool has_waited;

	atomic_init(&c->is_changed, false);
	atomic_init(&c->is_let_go, false);
	if (!CHECK_EQ(0, pthread_create(&c->thread, NULL, change_main, c)))
		return false;
	nanosleep(&wait, NULL);
	has_waited = CHECK(!atomic_load(&c->is_changed));
	faulty_gate_open(g, op);
	for (int i = 0; i < GATE_TIMEOUT_S * 100 && !atomic_load(&c->is_changed); i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	return CHECK(atomic_load(&c->is_changed)) && has_waited;
}

static void change_let_go(struct locked_change *c)
{
	atomic_store(&c->is_let_go, true);
	pthread_join(c->thread, NULL);
}

/* swapin_range on its own thread, the file locked as a read fault locks it. */
struct swapin_thread {
	struct data_space *ds;
	struct inode *inode;
	uint64_t len;
	pthread_t thread;
	int ret;
};

static void *swapin_main(void *arg)
{
	struct swapin_thread *t = arg;

	pthread_rwlock_wrlock(&t->inode->lock);
	t->ret = swapin_range(t->ds, t->inode, 0, t->len);
	pthread_rwlock_unlock(&t->inode->lock);
	return NULL;
}

/*
 * Start a swap-in of t->len bytes of f on its own thread and return once
 * its load is held at the gate (false: no thread); *nr_loads is the load
 * count before it.
 */
static bool swapin_held(struct data_space *ds, struct faulty_backend *g, struct inode *f,
			struct swapin_thread *t, unsigned int *nr_loads)
{
	*nr_loads = faulty_nr_calls(g, FAULTY_LOAD);
	faulty_gate_close(g, FAULTY_LOAD);
	t->ds = ds;
	t->inode = f;
	if (!CHECK_EQ(0, pthread_create(&t->thread, NULL, swapin_main, t))) {
		faulty_gate_open(g, FAULTY_LOAD);
		return false;
	}
	CHECK_EQ(0, faulty_wait_calls(g, FAULTY_LOAD, *nr_loads + 1, GATE_TIMEOUT_S * 1000));
	return true;
}

/*
 * A gated space whose file f has NR pages of seed, every one evicted, and
 * a swap-in of t->len bytes of it held at its load (false: none).
 */
static bool held_swapin_new(struct data_space *ds, struct faulty_backend **g, struct inode *f,
			    struct swapin_thread *t, unsigned int *nr_loads, unsigned int seed)
{
	if (!gated_space_new(ds, g))
		return false;
	file_init(f);
	write_pages(ds, f, NR, seed);
	CHECK_EQ(NR, reclaim_batch(ds, NULL));
	check_all_swapped(ds, f, NR, seed);
	return swapin_held(ds, *g, f, t, nr_loads);
}

/* Pages [0, nr) of f resident, written reading as news and the others as pattern seed. */
static void check_swapped_in(struct data_space *ds, struct inode *f, uint64_t nr, uint64_t written,
			     const unsigned char *news, unsigned int seed)
{
	for (uint64_t i = 0; i < nr; i++) {
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(f, i));
		if (i == written)
			check_page(ds, f, i, news);
		else
			check_pattern(ds, f, i, seed);
	}
}

/* Truncate f to nothing, see that no slot or pool page is left, and destroy ds. */
static void truncate_and_destroy(struct data_space *ds, struct inode *f)
{
	pthread_rwlock_wrlock(&f->lock);
	CHECK_EQ(0, data_truncate(ds, f, 0));
	pthread_rwlock_unlock(&f->lock);
	CHECK_EQ(0, backend_stored(ds));
	CHECK_EQ(0, pool_in_use(ds));
	space_destroy(ds);
}

/*
 * A swap-in loads with the file unlocked, so that other faults on it go on.
 * While its load is held at the gate the file can be locked, and a write
 * over a page being loaded goes on at once: the page's slot is kept back,
 * not reused, until the load ends.  The swap-in then leaves the written
 * page alone and brings the others in from that one load; the slot goes
 * back as it takes the lock again, and no slot or pool page leaks.
 */
static void test_write_during_swapin(void)
{
	static unsigned char news[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct swapin_thread t = { .len = NR * P };
	struct timespec deadline;
	struct inode f;
	unsigned int nr_loads;
	ssize_t ret;

	check_set_context("write during swap-in");
	if (!held_swapin_new(&ds, &g, &f, &t, &nr_loads, 4))
		return;

	/* The load is in flight and the file is free: the write does not wait for it. */
	memset(news, 0x5a, P);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 1;
	if (CHECK_EQ(0, pthread_rwlock_clockwrlock(&f.lock, CLOCK_MONOTONIC, &deadline))) {
		ret = data_write_mem(&ds, &f, news, P, 2 * P);
		CHECK_EQ((ssize_t)P, ret);
		CHECK_EQ(1, f.nr_deferred);
		pthread_rwlock_unlock(&f.lock);
	}
	CHECK_EQ(NR, backend_stored(&ds)); /* kept back: the load may be reading it */
	faulty_gate_open(g, FAULTY_LOAD);
	pthread_join(t.thread, NULL);
	CHECK_EQ(0, t.ret);
	CHECK_EQ(nr_loads + 1, faulty_nr_calls(g, FAULTY_LOAD));
	check_swapped_in(&ds, &f, NR, 2, news, 4);
	/* The clean ones keep their copies; the written one's slot went back. */
	CHECK_EQ(0, f.nr_deferred);
	CHECK_EQ(NR - 1, backend_stored(&ds));
	CHECK_EQ(NR, pool_in_use(&ds));
	CHECK_EQ(0, atomic_load(&f.nr_loading));
	truncate_and_destroy(&ds, &f);
}

/* A write of page 2 of an inode with no memory to keep its slot back in. */
struct nomem_write {
	struct data_space *ds;
	struct inode *inode;
	const unsigned char *news;
	atomic_bool is_done;
	ssize_t ret;
	uint32_t nr_deferred;
};

static void *nomem_write_main(void *arg)
{
	struct nomem_write *w = arg;

	pthread_rwlock_wrlock(&w->inode->lock);
	is_malloc_failing = true;
	w->ret = data_write_mem(w->ds, w->inode, w->news, P, 2 * P);
	is_malloc_failing = false;
	w->nr_deferred = w->inode->nr_deferred;
	pthread_rwlock_unlock(&w->inode->lock);
	atomic_store(&w->is_done, true);
	return NULL;
}

/*
 * The same write with no memory for the list of kept-back slots: it waits
 * for the read in flight instead, gives the slot back at once and tells
 * the loader, which loads its batch again under the lock.
 */
static void test_write_during_swapin_nomem(void)
{
	static unsigned char news[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct swapin_thread t = { .len = NR * P };
	struct nomem_write w = { .news = news };
	struct inode f;
	unsigned int nr_loads;
	pthread_t writer;

	check_set_context("write during swap-in, no memory");
	if (!held_swapin_new(&ds, &g, &f, &t, &nr_loads, 7))
		return;
	memset(news, 0x6b, P);
	w.ds = &ds;
	w.inode = &f;
	atomic_init(&w.is_done, false);
	if (!CHECK_EQ(0, pthread_create(&writer, NULL, nomem_write_main, &w))) {
		faulty_gate_open(g, FAULTY_LOAD);
		pthread_join(t.thread, NULL);
		return;
	}
	nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	CHECK(!atomic_load(&w.is_done)); /* nothing to keep the slot in: it waits */
	faulty_gate_open(g, FAULTY_LOAD);
	pthread_join(writer, NULL);
	pthread_join(t.thread, NULL);
	CHECK_EQ((ssize_t)P, w.ret);
	CHECK_EQ(0, w.nr_deferred);
	CHECK_EQ(0, t.ret);
	CHECK_EQ(nr_loads + 2, faulty_nr_calls(g, FAULTY_LOAD)); /* once more, under the lock */
	check_swapped_in(&ds, &f, NR, 2, news, 7);
	CHECK_EQ(NR - 1, backend_stored(&ds));
	truncate_and_destroy(&ds, &f);
}

/*
 * While a swap-in's load is held, its page is written and evicted again,
 * to a slot of its own (the old one is kept back): the swap-in loads that
 * batch once more under the lock, and the page reads as written.
 */
static void test_evict_during_swapin(void)
{
	static unsigned char news[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct swapin_thread t = { .len = NR * P };
	struct inode f;
	unsigned int nr_loads;
	uint64_t slot;

	check_set_context("evict during swap-in");
	if (!held_swapin_new(&ds, &g, &f, &t, &nr_loads, 5))
		return;
	pthread_rwlock_rdlock(&f.lock);
	slot = pagemap_slot(pagemap_get(&f.pages, 1));
	pthread_rwlock_unlock(&f.lock);
	pattern(news, 9, 1); /* not same-filled: it takes a slot */
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ((ssize_t)P, data_write_mem(&ds, &f, news, P, 1 * P));
	pthread_rwlock_unlock(&f.lock);
	/* Stores go on while a load is held: only loads wait at the gate. */
	CHECK_EQ(1, reclaim_batch(&ds, NULL));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 1));
	CHECK(pagemap_slot(pagemap_get(&f.pages, 1)) != slot);
	faulty_gate_open(g, FAULTY_LOAD);
	pthread_join(t.thread, NULL);
	CHECK_EQ(0, t.ret);
	CHECK_EQ(nr_loads + 2, faulty_nr_calls(g, FAULTY_LOAD));
	check_swapped_in(&ds, &f, NR, 1, news, 5);
	CHECK_EQ(0, f.nr_deferred);
	truncate_and_destroy(&ds, &f);
}

/* A truncate past what a file keeps back, then a write and an eviction, all under one lock. */
struct truncate_write {
	struct data_space *ds;
	struct inode *inode;
	const unsigned char *news;
	atomic_bool is_done;
	uint64_t nr_evicted;
};

static void *truncate_write_main(void *arg)
{
	struct truncate_write *c = arg;

	pthread_rwlock_wrlock(&c->inode->lock);
	data_truncate(c->ds, c->inode, 8 * P);
	data_write_mem(c->ds, c->inode, c->news, P, 2 * P);
	c->nr_evicted = reclaim_batch(c->ds, c->inode);
	pthread_rwlock_unlock(&c->inode->lock);
	atomic_store(&c->is_done, true);
	return NULL;
}

/*
 * More slots freed during a held load than a file keeps back: the truncate
 * waits for the read, gives the slots back at once and tells the loader,
 * which loads its batch again under the lock; a page written and evicted
 * meanwhile, maybe to a slot the load had read, reads as written.
 */
static void test_truncate_during_swapin(void)
{
	enum { NR_BIG = 320 };
	static unsigned char news[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct tier_backend *inner = space_ramdisk(1024);
	struct swapin_thread t = { .len = 4 * P };
	struct truncate_write c = { .news = news };
	struct inode f;
	unsigned int nr_loads;
	pthread_t changer;

	check_set_context("truncate during swap-in");
	if (!inner || !CHECK_EQ(0, faulty_new(inner, true, &g)) ||
	    !space_new(&ds, faulty_base(g), MEM_PAGES))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR_BIG, 6);
	CHECK_EQ(NR_BIG, reclaim_pages(&ds, NR_BIG));
	if (!swapin_held(&ds, g, &f, &t, &nr_loads))
		return;
	pattern(news, 9, 2);
	c.ds = &ds;
	c.inode = &f;
	atomic_init(&c.is_done, false);
	if (!CHECK_EQ(0, pthread_create(&changer, NULL, truncate_write_main, &c))) {
		faulty_gate_open(g, FAULTY_LOAD);
		pthread_join(t.thread, NULL);
		return;
	}
	nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	CHECK(!atomic_load(&c.is_done)); /* past 256 kept back, it waits for the read */
	faulty_gate_open(g, FAULTY_LOAD);
	pthread_join(changer, NULL);
	pthread_join(t.thread, NULL);
	CHECK_EQ(1, c.nr_evicted);
	CHECK_EQ(0, t.ret);
	CHECK_EQ(nr_loads + 2, faulty_nr_calls(g, FAULTY_LOAD)); /* once more, under the lock */
	check_swapped_in(&ds, &f, 4, 2, news, 6);
	CHECK_EQ(0, f.nr_unchecked);
	CHECK_EQ(0, f.nr_deferred);
	truncate_and_destroy(&ds, &f);
}

/* Finish the pending pages and isolate no more: reclaim from empty lists. */
static uint64_t finish_pending_only(struct data_space *ds)
{
	struct lru_lists none;

	lru_lists_init(&none);
	return reclaim_batch_from(ds, NULL, &none);
}

/*
 * Case 2: a write to a page being stored waits for the store, then the page
 * keeps its new bytes and the stale copy's slot goes back.  The store ends
 * with the file locked: its pages wait, pending, for the next reclaim.
 */
static void test_write_during_store(void)
{
	static const unsigned char news[16] = "written mid-way";
	static unsigned char expected[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct lru_page *p;
	struct inode f;
	struct locked_change c = { .size = UINT64_MAX, .news = news, .len = sizeof(news) };

	check_set_context("write during store");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 2);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));

	/* A few bytes only: the copy being stored is stale all the same. */
	c.ds = &ds;
	c.inode = &f;
	c.off = 2 * P + 100;
	if (!change_after_gate(&c, g, FAULTY_STORE)) {
		change_let_go(&c);
		batch_join(&t);
		return;
	}
	CHECK_EQ((ssize_t)sizeof(news), c.ret);
	CHECK_EQ(0, batch_join(&t));
	CHECK_EQ(NR, reclaim_nr_pending(&ds.reclaim));
	CHECK(lru_page(&ds.lru, pfn_of(&f, 2))->is_redirtied);
	change_let_go(&c);
	pattern(expected, 2, 2);
	memcpy(expected + 100, news, sizeof(news));

	/* Finished once the lock is free: three evicted, the written one kept. */
	CHECK_EQ(NR - 1, finish_pending_only(&ds));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 2));
	p = lru_page(&ds.lru, pfn_of(&f, 2));
	CHECK(!p->is_writeback);
	CHECK_EQ(LRU_ACTIVE + 1, p->list);
	CHECK(p->inode == &f);
	CHECK_EQ(0, p->swap_slot);
	check_page(&ds, &f, 2, expected);
	for (uint64_t i = 0; i < NR; i++) {
		if (i == 2)
			continue;
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, i));
		check_pattern(&ds, &f, i, 2);
	}
	/* The stale copy's slot went back. */
	CHECK_EQ(NR - 1, backend_stored(&ds));
	CHECK_EQ(NR - 1, atomic_load(&ds.swap.nr_evicted));
	CHECK_EQ(0, atomic_load(&ds.swap.nr_store_failures));
	CHECK_EQ(1, pool_in_use(&ds));

	/* The kept page is evictable again, with its new bytes. */
	CHECK_EQ(1, reclaim_batch(&ds, NULL));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 2));
	CHECK_EQ(NR, backend_stored(&ds));
	check_page(&ds, &f, 2, expected);

	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Case 3: truncated to 0 during the store: pages and slots all go back. */
static void test_truncate_during_store(void)
{
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct inode f;

	check_set_context("truncate during store");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 3);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));

	lock_during_store(g, &f, true);
	CHECK_EQ(0, data_truncate(&ds, &f, 0));
	pthread_rwlock_unlock(&f.lock);
	/* The store still reads them: the orphans stay in the pool until it ends. */
	CHECK_EQ(NR, pool_in_use(&ds));
	CHECK_EQ(0, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, f.pages.nr_entries);

	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(NR, batch_join(&t));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(0, pool_in_use(&ds));
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(0, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, atomic_load(&ds.swap.nr_evicted));
	CHECK_EQ(0, f.size);

	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 3b: truncated to a page and a half during the store: the page before
 * goes to its slot, the one cut in half is kept (its tail was zeroed), the
 * pages past the end go with their slots.
 */
static void test_truncate_partial_during_store(void)
{
	static unsigned char expected[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct inode f;
	struct locked_change c = { .size = P + P / 2 };
	uint64_t freed;

	check_set_context("partial truncate during store");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 4);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));

	/* Zeroing the tail of page 1 waits for the store. */
	c.ds = &ds;
	c.inode = &f;
	if (!change_after_gate(&c, g, FAULTY_STORE)) {
		change_let_go(&c);
		batch_join(&t);
		return;
	}
	CHECK_EQ(0, c.ret);
	CHECK_EQ(2, atomic_load(&ds.nr_pages));
	/*
	 * 0 and 1 wait for the lock; 2 and 3 too, unless the truncate had
	 * orphaned them when the store ended: then they were freed.
	 */
	freed = batch_join(&t);
	CHECK(freed == 0 || freed == 2);
	CHECK_EQ(NR - freed, reclaim_nr_pending(&ds.reclaim));
	change_let_go(&c);

	/* Page 0 evicted, page 1 kept, pages 2 and 3 freed as orphans. */
	CHECK_EQ(3, freed + finish_pending_only(&ds));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 0));
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 1));
	CHECK_EQ(PAGEMAP_KIND_HOLE, kind(&f, 2));
	CHECK_EQ(PAGEMAP_KIND_HOLE, kind(&f, 3));
	CHECK_EQ(1, pool_in_use(&ds));
	CHECK_EQ(1, backend_stored(&ds));
	CHECK_EQ(2, atomic_load(&ds.nr_pages));

	CHECK_EQ(0, data_truncate(&ds, &f, 2 * P));
	check_pattern(&ds, &f, 0, 4);
	pattern(expected, 4, 1);
	memset(expected + P / 2, 0, P / 2);
	check_page(&ds, &f, 1, expected);

	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Case 3c: a hole punched during the store over the middle pages. */
static void test_punch_during_store(void)
{
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct inode f;

	check_set_context("punch during store");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 5);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));

	lock_during_store(g, &f, true);
	CHECK_EQ(0, data_punch(&ds, &f, P, 2 * P));
	pthread_rwlock_unlock(&f.lock);

	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(NR, batch_join(&t));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 0));
	CHECK_EQ(PAGEMAP_KIND_HOLE, kind(&f, 1));
	CHECK_EQ(PAGEMAP_KIND_HOLE, kind(&f, 2));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 3));
	CHECK_EQ(0, pool_in_use(&ds));
	CHECK_EQ(2, backend_stored(&ds));
	CHECK_EQ(2, atomic_load(&ds.nr_pages));
	check_pattern(&ds, &f, 0, 5);
	check_pattern(&ds, &f, 3, 5);

	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 4: the file released and its inode freed during the store, as a last
 * unlink and forget would: reclaim may not touch the inode after (ASan).
 */
static void test_release_during_store(void)
{
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct inode *f = malloc(sizeof(*f));

	check_set_context("release during store");
	if (!CHECK(f != NULL) || !gated_space_new(&ds, &g)) {
		free(f);
		return;
	}
	file_init(f);
	write_pages(&ds, f, NR, 6);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));

	lock_during_store(g, f, true);
	data_release(&ds, f);
	pthread_rwlock_unlock(&f->lock);
	pthread_rwlock_destroy(&f->lock);
	free(f);
	CHECK_EQ(NR, pool_in_use(&ds));
	CHECK_EQ(0, atomic_load(&ds.nr_pages));

	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(NR, batch_join(&t));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(0, pool_in_use(&ds));
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(0, atomic_load(&ds.nr_pages));
	space_destroy(&ds);
}

/* How a case 5 variant finishes the pages left pending. */
enum finish_by { FINISH_BY_BATCH, FINISH_BY_OWNER, FINISH_BY_STOP };

/*
 * Case 5: the owner is busy (read-locked) when the store ends: the pages
 * stay pending and resident, and whoever comes next finishes them.  With
 * FINISH_BY_STOP, page 0 is written while pending and must be kept.
 */
static void test_busy_owner(enum finish_by by)
{
	static const unsigned char news[8] = "pending";
	static unsigned char expected[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct inode f;

	check_set_context("busy owner, finished by %s",
			  by == FINISH_BY_BATCH ? "a batch" :
			  by == FINISH_BY_OWNER ? "the owner's batch" :
						  "reclaim_stop");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 7);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));

	lock_during_store(g, &f, false);
	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(0, batch_join(&t));
	CHECK_EQ(NR, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(NR, backend_stored(&ds));
	CHECK_EQ(NR, pool_in_use(&ds));
	for (uint64_t i = 0; i < NR; i++) {
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
		CHECK(lru_page(&ds.lru, pfn_of(&f, i))->is_writeback);
		check_pattern(&ds, &f, i, 7);
	}
	pthread_rwlock_unlock(&f.lock);

	switch (by) {
	case FINISH_BY_BATCH:
		CHECK_EQ(NR, reclaim_batch(&ds, NULL));
		break;
	case FINISH_BY_OWNER:
		/* As a writer's direct reclaim: the owner locked by the caller. */
		pthread_rwlock_wrlock(&f.lock);
		CHECK_EQ(NR, reclaim_batch(&ds, &f));
		pthread_rwlock_unlock(&f.lock);
		break;
	case FINISH_BY_STOP:
		pthread_rwlock_wrlock(&f.lock);
		CHECK_EQ((ssize_t)sizeof(news), data_write_mem(&ds, &f, news, sizeof(news), 8));
		pthread_rwlock_unlock(&f.lock);
		reclaim_stop(&ds);
		break;
	}
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(0, atomic_load(&ds.swap.nr_store_failures));
	if (by == FINISH_BY_STOP) {
		pattern(expected, 7, 0);
		memcpy(expected + 8, news, sizeof(news));
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 0));
		CHECK(!lru_page(&ds.lru, pfn_of(&f, 0))->is_writeback);
		CHECK_EQ(LRU_ACTIVE + 1, lru_page(&ds.lru, pfn_of(&f, 0))->list);
		check_page(&ds, &f, 0, expected);
		CHECK_EQ(NR - 1, backend_stored(&ds));
		CHECK_EQ(1, pool_in_use(&ds));
	} else {
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 0));
		check_pattern(&ds, &f, 0, 7);
		CHECK_EQ(NR, backend_stored(&ds));
		CHECK_EQ(0, pool_in_use(&ds));
	}
	for (uint64_t i = 1; i < NR; i++) {
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, i));
		check_pattern(&ds, &f, i, 7);
	}
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Case 6: a failed store, then a short one: the pages not stored stay. */
static void test_store_failure(void)
{
	struct data_space ds;
	struct faulty_backend *g;
	struct inode f;
	uint64_t nr_resident = 0;

	check_set_context("store failure");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 8);

	CHECK_EQ(0, faulty_fail(g, FAULTY_STORE, 1, -EIO, true));
	CHECK_EQ(0, reclaim_batch(&ds, NULL));
	CHECK_EQ(1, faulty_nr_calls(g, FAULTY_STORE));
	CHECK_EQ(1, faulty_nr_faulted(g, FAULTY_STORE));
	CHECK_EQ(NR, atomic_load(&ds.swap.nr_store_failures));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(NR, pool_in_use(&ds));
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(NR, lru_lists_nr_listed(&ds.lru.root));
	for (uint64_t i = 0; i < NR; i++) {
		struct lru_page *p = lru_page(&ds.lru, pfn_of(&f, i));

		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
		CHECK(!p->is_writeback);
		CHECK(p->list != 0);
		CHECK(p->inode == &f);
		check_pattern(&ds, &f, i, 8);
	}

	/* Only a prefix of two fits: two go, the other two stay. */
	CHECK_EQ(0, faulty_short_store(g, 1, 2, true));
	CHECK_EQ(2, reclaim_batch(&ds, NULL));
	CHECK_EQ(2, faulty_nr_faulted(g, FAULTY_STORE));
	CHECK_EQ(NR + 2, atomic_load(&ds.swap.nr_store_failures));
	CHECK_EQ(2, backend_stored(&ds));
	CHECK_EQ(2, pool_in_use(&ds));
	CHECK_EQ(2, lru_lists_nr_listed(&ds.lru.root));
	for (uint64_t i = 0; i < NR; i++)
		nr_resident += kind(&f, i) == PAGEMAP_KIND_RESIDENT;
	CHECK_EQ(2, nr_resident);

	faulty_clear(g, FAULTY_STORE);
	CHECK_EQ(2, reclaim_batch(&ds, NULL));
	check_all_swapped(&ds, &f, NR, 8);
	CHECK_EQ(NR, atomic_load(&ds.swap.nr_evicted));

	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 7: a same-filled page becomes a map entry and a page read back and
 * never written is dropped, neither with a store; a written one is stored.
 */
static void test_filled_and_clean(void)
{
	static unsigned char page[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct inode f;
	uint64_t slot;

	check_set_context("same-filled and clean pages");
	if (!gated_space_new(&ds, &g))
		return;
	file_init(&f);
	pthread_rwlock_wrlock(&f.lock);
	memset(page, 0xab, P);
	CHECK_EQ((ssize_t)P, data_write_mem(&ds, &f, page, P, 0));
	pattern(page, 9, 1);
	CHECK_EQ((ssize_t)P, data_write_mem(&ds, &f, page, P, P));
	pthread_rwlock_unlock(&f.lock);

	/* One store, of the patterned page only. */
	CHECK_EQ(2, reclaim_batch(&ds, NULL));
	CHECK_EQ(1, faulty_nr_calls(g, FAULTY_STORE));
	CHECK_EQ(1, faulty_nr_last(g, FAULTY_STORE));
	CHECK_EQ(PAGEMAP_KIND_FILLED, kind(&f, 0));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 1));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_filled_evicted));
	CHECK_EQ(1, atomic_load(&ds.nr_filled));
	CHECK_EQ(1, backend_stored(&ds));
	CHECK_EQ(0, pool_in_use(&ds));
	memset(page, 0xab, P);
	check_page(&ds, &f, 0, page);
	check_pattern(&ds, &f, 1, 9);
	slot = pagemap_slot(pagemap_get(&f.pages, 1));

	/* Read back, not written: its copy stays and reclaim just drops it. */
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(0, swapin_range(&ds, &f, 0, 2 * P));
	pthread_rwlock_unlock(&f.lock);
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 1));
	check_pattern(&ds, &f, 1, 9); /* the read it was loaded for */
	CHECK_EQ(1, backend_stored(&ds));
	CHECK_EQ(1, reclaim_batch(&ds, NULL));
	CHECK_EQ(1, faulty_nr_calls(g, FAULTY_STORE));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_clean_dropped));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_evicted));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 1));
	CHECK_EQ(slot, pagemap_slot(pagemap_get(&f.pages, 1)));
	CHECK_EQ(1, backend_stored(&ds));
	CHECK_EQ(0, pool_in_use(&ds));
	check_pattern(&ds, &f, 1, 9);

	/* Read back and written: the copy is stale, so the next eviction stores. */
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(0, swapin_range(&ds, &f, P, P));
	CHECK_EQ(1, data_write_mem(&ds, &f, "x", 1, P));
	pthread_rwlock_unlock(&f.lock);
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(1, reclaim_batch(&ds, NULL));
	CHECK_EQ(2, faulty_nr_calls(g, FAULTY_STORE));
	CHECK_EQ(1, atomic_load(&ds.swap.nr_clean_dropped));
	CHECK_EQ(2, atomic_load(&ds.swap.nr_evicted));
	CHECK_EQ(1, backend_stored(&ds));
	pattern(page, 9, 1);
	page[0] = 'x';
	check_page(&ds, &f, 1, page);

	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Pages reclaim is storing now, read under its lock. */
static unsigned int nr_in_flight(struct data_space *ds)
{
	unsigned int nr;

	pthread_mutex_lock(&ds->reclaim.batch_lock);
	nr = ds->reclaim.nr_in_flight;
	pthread_mutex_unlock(&ds->reclaim.batch_lock);
	return nr;
}

/* Pages one reclaim_batch stores in one call on a backend so synchronous or not. */
static unsigned int nr_one_store(bool is_sync)
{
	return is_sync ? RECLAIM_BATCH : RECLAIM_MAX_STORE;
}

/*
 * Start a reclaim whose store is held at the closed gate, then a second
 * one, on pages the first did not take, and check that its store reaches
 * the gate too: both in flight at once, the first of nr_first pages, the
 * second of a batch.  A second reclaim kept out until the first store
 * ends fails the check after GATE_TIMEOUT_S; the caller opens the gate and
 * joins both either way.  Returns false, the gate open, if a thread could
 * not start.
 */
static bool start_two_stores(struct data_space *ds, struct faulty_backend *g, unsigned int nr_first,
			     struct batch_thread *t1, struct batch_thread *t2)
{
	unsigned int nr_calls = faulty_nr_calls(g, FAULTY_STORE);

	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(t1, ds)) {
		faulty_gate_open(g, FAULTY_STORE);
		return false;
	}
	CHECK_EQ(nr_first, gate_wait_entered(g, nr_calls + 1));
	if (!batch_start(t2, ds)) {
		faulty_gate_open(g, FAULTY_STORE);
		batch_join(t1);
		return false;
	}
	CHECK_EQ(RECLAIM_BATCH, gate_wait_entered(g, nr_calls + 2));
	CHECK_EQ(nr_calls + 2, faulty_nr_calls(g, FAULTY_STORE));
	return true;
}

/*
 * Case 8: the stores of two reclaims in flight at once, the first of
 * RECLAIM_ASYNC_BATCHES batches in one call on an asynchronous backend and
 * of one on a synchronous one; then every page evicted to its slot.
 */
static void test_overlapping_stores(bool is_sync)
{
	unsigned int first = nr_one_store(is_sync);
	uint64_t nr = first + RECLAIM_BATCH;
	struct batch_thread t1, t2;
	struct data_space ds;
	struct faulty_backend *g;
	struct inode f;

	check_set_context("overlapping stores, %s backend", is_sync ? "synchronous" : "async");
	if (!gated_space_new_as(&ds, &g, is_sync))
		return;
	file_init(&f);
	write_pages(&ds, &f, nr, 10);
	if (!start_two_stores(&ds, g, first, &t1, &t2))
		return;
	/* Both batches under writeback, the file's lock free, nothing stored yet. */
	lock_during_store(g, &f, false);
	for (uint64_t i = 0; i < nr; i++) {
		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
		CHECK(lru_page(&ds.lru, pfn_of(&f, i))->is_writeback);
	}
	pthread_rwlock_unlock(&f.lock);
	CHECK_EQ(0, lru_lists_nr_listed(&ds.lru.root));
	CHECK_EQ(nr, pool_in_use(&ds));
	CHECK_EQ(0, backend_stored(&ds));

	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(first, batch_join(&t1));
	CHECK_EQ(RECLAIM_BATCH, batch_join(&t2));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(0, nr_in_flight(&ds));
	CHECK_EQ(nr, atomic_load(&ds.swap.nr_evicted));
	check_all_swapped(&ds, &f, nr, 10);
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 9: stores that fail while another is in flight, on an asynchronous
 * backend: both failing, then the first cut short while the second ends
 * whole.  A page not stored stays, listed, with its bytes; nothing is
 * stored twice or left under writeback.
 */
static void test_overlapping_failures(void)
{
	const unsigned int first = RECLAIM_MAX_STORE, nr_cut = 40;
	const uint64_t nr = first + RECLAIM_BATCH;
	struct batch_thread t1, t2;
	struct data_space ds;
	struct faulty_backend *g;
	struct inode f;
	uint64_t nr_swapped = 0;

	check_set_context("stores failing while overlapping");
	if (!gated_space_new_as(&ds, &g, false))
		return;
	file_init(&f);
	write_pages(&ds, &f, nr, 11);

	/* Both fail. */
	CHECK_EQ(0, faulty_fail(g, FAULTY_STORE, 1, -EIO, true));
	if (!start_two_stores(&ds, g, first, &t1, &t2))
		return;
	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(0, batch_join(&t1));
	CHECK_EQ(0, batch_join(&t2));
	CHECK_EQ(2, faulty_nr_faulted(g, FAULTY_STORE));
	CHECK_EQ(nr, atomic_load(&ds.swap.nr_store_failures));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(0, nr_in_flight(&ds));
	CHECK_EQ(nr, pool_in_use(&ds));
	CHECK_EQ(0, backend_stored(&ds));
	CHECK_EQ(nr, lru_lists_nr_listed(&ds.lru.root));
	for (uint64_t i = 0; i < nr; i++) {
		struct lru_page *p = lru_page(&ds.lru, pfn_of(&f, i));

		CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, i));
		CHECK(!p->is_writeback);
		CHECK(p->list != 0);
		CHECK(p->inode == &f);
		check_pattern(&ds, &f, i, 11);
	}

	/* The first keeps a prefix only; the second stores all of its batch. */
	CHECK_EQ(0, faulty_short_store(g, 1, nr_cut, false));
	if (!start_two_stores(&ds, g, first, &t1, &t2))
		return;
	faulty_gate_open(g, FAULTY_STORE);
	CHECK_EQ(nr_cut, batch_join(&t1));
	CHECK_EQ(RECLAIM_BATCH, batch_join(&t2));
	CHECK_EQ(3, faulty_nr_faulted(g, FAULTY_STORE));
	CHECK_EQ(nr + first - nr_cut, atomic_load(&ds.swap.nr_store_failures));
	CHECK_EQ(nr_cut + RECLAIM_BATCH, backend_stored(&ds));
	CHECK_EQ(nr_cut + RECLAIM_BATCH, atomic_load(&ds.swap.nr_evicted));
	CHECK_EQ(first - nr_cut, pool_in_use(&ds));
	CHECK_EQ(first - nr_cut, lru_lists_nr_listed(&ds.lru.root));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	for (uint64_t i = 0; i < nr; i++) {
		nr_swapped += kind(&f, i) == PAGEMAP_KIND_SWAPPED;
		CHECK(kind(&f, i) == PAGEMAP_KIND_SWAPPED ||
		      !lru_page(&ds.lru, pfn_of(&f, i))->is_writeback);
		check_pattern(&ds, &f, i, 11);
	}
	CHECK_EQ(nr_cut + RECLAIM_BATCH, nr_swapped);

	/* What stayed is evictable again. */
	faulty_clear(g, FAULTY_STORE);
	CHECK_EQ(first - nr_cut, reclaim_batch(&ds, NULL));
	check_all_swapped(&ds, &f, nr, 11);
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* reclaim_stop on its own thread, saying when it returned. */
struct stop_thread {
	struct data_space *ds;
	pthread_t thread;
	atomic_bool is_done;
};

static void *stop_main(void *arg)
{
	struct stop_thread *t = arg;

	reclaim_stop(t->ds);
	atomic_store(&t->is_done, true);
	return NULL;
}

/*
 * Case 10: reclaim_stop while another thread's store is in flight returns
 * only once that store has ended and its pages are finished.
 */
static void test_stop_waits_for_store(void)
{
	const struct timespec moment = { .tv_nsec = 100 * 1000000 };
	struct data_space ds;
	struct faulty_backend *g;
	struct batch_thread t;
	struct stop_thread st = { .ds = &ds };
	struct inode f;

	check_set_context("reclaim_stop with a store in flight");
	if (!gated_space_new_as(&ds, &g, false))
		return;
	file_init(&f);
	write_pages(&ds, &f, NR, 12);
	faulty_gate_close(g, FAULTY_STORE);
	if (!batch_start(&t, &ds))
		return;
	CHECK_EQ(NR, gate_wait_entered(g, 1));
	atomic_init(&st.is_done, false);
	if (!CHECK_EQ(0, pthread_create(&st.thread, NULL, stop_main, &st))) {
		faulty_gate_open(g, FAULTY_STORE);
		batch_join(&t);
		return;
	}
	nanosleep(&moment, NULL);
	CHECK(!atomic_load(&st.is_done));
	CHECK_EQ(NR, nr_in_flight(&ds));

	faulty_gate_open(g, FAULTY_STORE);
	pthread_join(st.thread, NULL);
	CHECK_EQ(0, nr_in_flight(&ds));
	CHECK_EQ(0, reclaim_nr_pending(&ds.reclaim));
	CHECK_EQ(NR, batch_join(&t));
	check_all_swapped(&ds, &f, NR, 12);
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * Case 11: reclaim_pages stores as many batches in one call as the count
 * needs, up to RECLAIM_ASYNC_BATCHES, on an asynchronous backend; a batch
 * a call on a synchronous one.
 */
static void test_reclaim_pages_batches(bool is_sync)
{
	const uint64_t nr = RECLAIM_MAX_STORE + 2 * RECLAIM_BATCH;
	struct data_space ds;
	struct faulty_backend *g;
	struct inode f;

	check_set_context("reclaim_pages, %s backend", is_sync ? "synchronous" : "async");
	if (!gated_space_new_as(&ds, &g, is_sync))
		return;
	file_init(&f);
	write_pages(&ds, &f, nr, 13);

	/* One page past a batch: two batches. */
	CHECK_EQ(2 * RECLAIM_BATCH, reclaim_pages(&ds, RECLAIM_BATCH + 1));
	CHECK_EQ(is_sync ? 2 : 1, faulty_nr_calls(g, FAULTY_STORE));
	CHECK_EQ(is_sync ? RECLAIM_BATCH : 2 * RECLAIM_BATCH, faulty_nr_last(g, FAULTY_STORE));

	/* All that is left, as tierctl reclaim all asks. */
	CHECK_EQ(nr - 2 * RECLAIM_BATCH, reclaim_pages(&ds, UINT64_MAX));
	CHECK_EQ(is_sync ? 6 : 2, faulty_nr_calls(g, FAULTY_STORE));
	CHECK_EQ(is_sync ? RECLAIM_BATCH : RECLAIM_MAX_STORE, faulty_nr_last(g, FAULTY_STORE));
	CHECK_EQ(0, pool_in_use(&ds));
	CHECK_EQ(nr, backend_stored(&ds));
	for (uint64_t i = 0; i < nr; i++) {
		CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, i));
		check_pattern(&ds, &f, i, 13);
	}
	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/*
 * A truncate or punch inside a swapped page must not fail: with the budget
 * full and nothing evictable (stores fail) it loads the page past the
 * budget, as a read does; a page that cannot be read goes whole, and the
 * file shrinks all the same.
 */
static void test_cut_on_full_budget(void)
{
	static unsigned char got[P], want[P];
	struct data_space ds;
	struct faulty_backend *g;
	struct tier_backend *inner = space_ramdisk(1024);
	struct inode f, filler;
	ssize_t last = 0;

	check_set_context("cut on a full budget");
	if (!inner || !CHECK_EQ(0, faulty_new(inner, true, &g)) ||
	    !space_new(&ds, faulty_base(g), MEM_PAGES))
		return;
	file_init(&f);
	file_init(&filler);
	write_pages(&ds, &f, 4, 3);
	CHECK_EQ(4, reclaim_pages(&ds, 4));
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 2));
	CHECK_EQ(0, faulty_fail(g, FAULTY_STORE, 1, -EIO, true));
	pthread_rwlock_wrlock(&filler.lock);
	for (uint64_t i = 0; last >= 0; i++) {
		pattern(want, 5, i);
		last = data_write_mem(&ds, &filler, want, P, i * P);
	}
	pthread_rwlock_unlock(&filler.lock);
	CHECK_EQ(-ENOSPC, last);

	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(0, data_truncate(&ds, &f, 2 * P + 100));
	CHECK_EQ(0, data_punch(&ds, &f, 10, 20));
	CHECK_EQ(2 * P + 100, f.size);
	CHECK_EQ(PAGEMAP_KIND_RESIDENT, kind(&f, 2));
	pattern(want, 3, 2);
	CHECK_EQ(100, data_read_mem(&ds, &f, 2 * P, got, P));
	CHECK_MEM(want, got, 100);

	/* Unreadable: the cut page goes, and the file shrinks all the same. */
	CHECK_EQ(PAGEMAP_KIND_SWAPPED, kind(&f, 1));
	CHECK_EQ(0, faulty_fail(g, FAULTY_LOAD, 1, -EIO, true));
	CHECK_EQ(0, data_truncate(&ds, &f, P + 7));
	CHECK_EQ(P + 7, f.size);
	CHECK_EQ(PAGEMAP_HOLE, pagemap_get(&f.pages, 1));
	faulty_clear(g, FAULTY_LOAD);
	faulty_clear(g, FAULTY_STORE);
	CHECK_EQ(7, data_read_mem(&ds, &f, P, got, P));
	memset(want, 0, 7);
	CHECK_MEM(want, got, 7);
	pthread_rwlock_unlock(&f.lock);
	file_destroy(&ds, &filler);
	truncate_and_destroy(&ds, &f);
}

int main(void)
{
	test_no_lock_during_store();
	test_write_during_store();
	test_truncate_during_store();
	test_truncate_partial_during_store();
	test_punch_during_store();
	test_release_during_store();
	test_busy_owner(FINISH_BY_BATCH);
	test_busy_owner(FINISH_BY_OWNER);
	test_busy_owner(FINISH_BY_STOP);
	test_store_failure();
	test_filled_and_clean();
	test_write_during_swapin();
	test_write_during_swapin_nomem();
	test_evict_during_swapin();
	test_truncate_during_swapin();
	test_cut_on_full_budget();
	test_overlapping_stores(false);
	test_overlapping_stores(true);
	test_overlapping_failures();
	test_stop_waits_for_store();
	test_reclaim_pages_batches(false);
	test_reclaim_pages_batches(true);
	return check_done("reclaim");
}
