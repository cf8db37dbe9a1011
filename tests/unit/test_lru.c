// SPDX-License-Identifier: MIT
/*
 * Unit tests of what reclaim evicts: a page used once goes before one used
 * twice, a page loaded for a read survives a scan until read and then
 * counts as used once, and between tenants the one over its share pays
 * first, then the one whose pages a scan finds unused, not the one holding
 * the most: a streaming tenant does not evict a larger hot set, while a
 * hot set left idle is evicted in its turn, and a tenant whose every page
 * is in use still gives up its oldest.
 */
#include <errno.h>
#include <stdlib.h>

#include "space.h"

#define MEM_PAGES 1000 /* no reclaim on its own: the cases call it */
#define SWAP_PAGES 16384

static uint64_t nr_resident(const struct inode *inode, uint64_t first, uint64_t nr)
{
	uint64_t n = 0;

	for (uint64_t i = first; i < first + nr; i++)
		n += kind(inode, i) == PAGEMAP_KIND_RESIDENT;
	return n;
}

/*
 * Read pages [first, first + nr) once each as a FUSE read does: swapped
 * ones brought back first, checking their bytes.
 */
static void read_pages(struct data_space *ds, struct inode *inode, uint64_t first, uint64_t nr,
		       unsigned int seed)
{
	static unsigned char expected[P];
	static struct iovec iov[DATA_MAX_READ_PAGES];
	char *scratch = NULL;

	pthread_rwlock_wrlock(&inode->lock);
	for (uint64_t i = first; i < first + nr; i++) {
		if (data_has_swapped(inode, i * P, P))
			CHECK_EQ(0, swapin_range(ds, inode, i * P, P));
		pattern(expected, seed, i);
		if (CHECK_EQ(1, data_read(ds, inode, i * P, P, iov, &scratch)))
			CHECK_MEM(expected, iov[0].iov_base, P);
	}
	pthread_rwlock_unlock(&inode->lock);
	free(scratch);
}

/* Write pages [first, first + nr) of pattern seed. */
static void write_range(struct data_space *ds, struct inode *inode, uint64_t first, uint64_t nr,
			unsigned int seed)
{
	static unsigned char page[P];

	pthread_rwlock_wrlock(&inode->lock);
	for (uint64_t i = first; i < first + nr; i++) {
		pattern(page, seed, i);
		CHECK_EQ((ssize_t)P, data_write_mem(ds, inode, page, P, i * P));
	}
	pthread_rwlock_unlock(&inode->lock);
}

/* A file of its own tenant, whose lists are registered with the space's LRU. */
static void tenant_file_init(struct data_space *ds, struct lru_lists *lists, struct inode *inode)
{
	lru_lists_init(lists);
	CHECK_EQ(0, lru_register(&ds->lru, lists));
	file_init(inode);
	inode->lists = lists;
}

/* Case 1: within one list, pages used once go and pages used twice stay. */
static void test_used_once(void)
{
	struct data_space ds;
	struct inode twice, once;

	check_set_context("used once against used twice");
	if (!space_new(&ds, space_ramdisk(SWAP_PAGES), MEM_PAGES))
		return;
	file_init(&twice);
	file_init(&once);
	/* The pages used twice are the older ones, at the inactive tail. */
	write_pages(&ds, &twice, 64, 1);
	read_pages(&ds, &twice, 0, 64, 1);
	read_pages(&ds, &twice, 0, 64, 1);
	write_pages(&ds, &once, 64, 2);
	read_pages(&ds, &once, 0, 64, 2);
	for (uint64_t i = 0; i < 64; i++) {
		CHECK_EQ(LRU_USED_TWICE, atomic_load(&lru_page_of(&ds, &twice, i)->uses));
		CHECK_EQ(LRU_USED_ONCE, atomic_load(&lru_page_of(&ds, &once, i)->uses));
	}

	CHECK_EQ(64, reclaim_pages(&ds, 64));
	CHECK_EQ(64, nr_resident(&twice, 0, 64));
	CHECK_EQ(0, nr_resident(&once, 0, 64));

	/*
	 * The promoted ones age back to the inactive list, used once: unused
	 * again, they go next.
	 */
	CHECK_EQ(64, reclaim_pages(&ds, 64));
	CHECK_EQ(0, nr_resident(&twice, 0, 64));
	read_pages(&ds, &twice, 0, 64, 1);
	read_pages(&ds, &once, 0, 64, 2);

	file_destroy(&ds, &twice);
	file_destroy(&ds, &once);
	space_destroy(&ds);
}

/*
 * Case 2: a page loaded for a read is spared by a scan before the read,
 * and one read after loading is a first use: a streaming re-read does not
 * promote what it reads.
 */
static void test_loaded(void)
{
	enum { NR = 32 };
	static struct iovec iov[DATA_MAX_READ_PAGES];
	struct data_space ds;
	struct inode f, other;
	char *scratch = NULL;

	check_set_context("pages loaded for a read");
	if (!space_new(&ds, space_ramdisk(SWAP_PAGES), MEM_PAGES))
		return;
	file_init(&f);
	file_init(&other);
	write_pages(&ds, &f, NR, 3);
	CHECK_EQ(NR, reclaim_pages(&ds, NR));

	/* Loaded, not read yet, alone: a scan spares them, once. */
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(0, swapin_range(&ds, &f, 0, NR * P));
	pthread_rwlock_unlock(&f.lock);
	CHECK_EQ(0, reclaim_batch(&ds, NULL));
	CHECK_EQ(NR, nr_resident(&f, 0, NR));
	CHECK_EQ(NR, ds.lru.root.nr[LRU_INACTIVE]);
	CHECK_EQ(NR, reclaim_batch(&ds, NULL));
	CHECK_EQ(0, nr_resident(&f, 0, NR));

	/*
	 * Loaded, not read yet, older than other's unused pages: a scan gives
	 * them another pass and takes other's.
	 */
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(0, swapin_range(&ds, &f, 0, NR * P));
	pthread_rwlock_unlock(&f.lock);
	for (uint64_t i = 0; i < NR; i++)
		CHECK_EQ(LRU_LOADED, atomic_load(&lru_page_of(&ds, &f, i)->uses));
	write_pages(&ds, &other, NR, 8);
	CHECK_EQ(NR, reclaim_batch(&ds, NULL));
	CHECK_EQ(NR, nr_resident(&f, 0, NR));
	CHECK_EQ(0, nr_resident(&other, 0, NR));
	CHECK_EQ(NR, reclaim_pages(&ds, NR)); /* aged back, unread: they go */

	/* Loaded and read once, as a streaming read does: used once, they go. */
	pthread_rwlock_wrlock(&f.lock);
	CHECK_EQ(0, swapin_range(&ds, &f, 0, NR * P));
	CHECK_EQ(NR, data_read(&ds, &f, 0, NR * P, iov, &scratch));
	pthread_rwlock_unlock(&f.lock);
	for (uint64_t i = 0; i < NR; i++)
		CHECK_EQ(LRU_USED_ONCE, atomic_load(&lru_page_of(&ds, &f, i)->uses));
	CHECK_EQ(NR, reclaim_batch(&ds, NULL));
	CHECK_EQ(0, nr_resident(&f, 0, NR));
	CHECK_EQ(0, ds.lru.root.nr[LRU_ACTIVE]);
	read_pages(&ds, &f, 0, NR, 3);
	read_pages(&ds, &other, 0, NR, 8);

	free(scratch);
	file_destroy(&ds, &f);
	file_destroy(&ds, &other);
	space_destroy(&ds);
}

enum { HOT = 384, ROUND = 32 };

/*
 * A round of the two tenants: the streamer writes ROUND new pages, reclaim
 * takes ROUND, the hot tenant (unless idle) reads its set once.  Returns
 * the hot tenant's resident pages after reclaim, before its read brings
 * back what went.
 */
static uint64_t stream_round(struct data_space *ds, struct inode *hot, struct inode *stream,
			     uint64_t *stream_pages, bool is_hot_idle)
{
	uint64_t hot_resident;

	write_range(ds, stream, *stream_pages, ROUND, 5);
	*stream_pages += ROUND;
	reclaim_pages(ds, ROUND);
	hot_resident = atomic_load(&hot->lists->nr_resident);
	if (!is_hot_idle)
		read_pages(ds, hot, 0, HOT, 4);
	return hot_resident;
}

/*
 * Case 3: a tenant streaming through a file beside a tenant re-reading a
 * larger hot set: the streamer's pages go, the hot set stays (the tenant
 * with the most pages is the hot one, so picking by size would evict it).
 * Left idle, the hot set goes in its turn.
 */
static void test_tenants_stream_hot(void)
{
	struct data_space ds;
	struct lru_lists hot_lists, stream_lists;
	struct inode hot, stream;
	uint64_t stream_pages = 0, evicted_before, lowest = HOT;

	check_set_context("streaming tenant beside a hot one");
	if (!space_new(&ds, space_ramdisk(SWAP_PAGES), MEM_PAGES))
		return;
	tenant_file_init(&ds, &hot_lists, &hot);
	tenant_file_init(&ds, &stream_lists, &stream);
	write_pages(&ds, &hot, HOT, 4);
	read_pages(&ds, &hot, 0, HOT, 4);
	read_pages(&ds, &hot, 0, HOT, 4);

	for (int round = 0; round < 150; round++) {
		uint64_t n = stream_round(&ds, &hot, &stream, &stream_pages, false);

		if (n < lowest)
			lowest = n;
	}
	check_set_context("streaming tenant beside a hot one: hot lowest %" PRIu64, lowest);
	CHECK_EQ(HOT, lowest);
	CHECK(atomic_load(&stream_lists.nr_resident) <= ROUND);
	CHECK_EQ(stream_pages - atomic_load(&stream_lists.nr_resident),
		 atomic_load(&stream_lists.nr_swapped));

	/* Idle, the hot set is scanned again in time and its pages go. */
	check_set_context("streaming tenant beside an idle one");
	evicted_before = atomic_load(&hot_lists.nr_swapped);
	for (int round = 0; round < 120; round++)
		stream_round(&ds, &hot, &stream, &stream_pages, true);
	CHECK(atomic_load(&hot_lists.nr_swapped) >= evicted_before + HOT / 4);
	read_pages(&ds, &hot, 0, HOT, 4);
	read_pages(&ds, &stream, 0, stream_pages, 5);

	file_destroy(&ds, &hot);
	file_destroy(&ds, &stream);
	space_destroy(&ds);
}

/*
 * Case 4: one tenant whose every page is in use: a scan that only promotes
 * is no reason to stop, the pages used longest ago go.
 */
static void test_all_in_use(void)
{
	enum { NR = 256, WANT = 64 };
	struct data_space ds;
	struct lru_lists lists;
	struct inode f;
	uint64_t freed = 0;

	check_set_context("one tenant, every page in use");
	if (!space_new(&ds, space_ramdisk(SWAP_PAGES), MEM_PAGES))
		return;
	tenant_file_init(&ds, &lists, &f);
	write_pages(&ds, &f, NR, 11);
	for (int round = 0; round < 8; round++) {
		read_pages(&ds, &f, 0, NR, 11);
		read_pages(&ds, &f, 0, NR, 11);
		freed += reclaim_pages(&ds, WANT);
	}
	check_set_context("one tenant, every page in use: %" PRIu64 " freed", freed);
	CHECK_EQ(8 * WANT, freed);
	read_pages(&ds, &f, 0, NR, 11);

	file_destroy(&ds, &f);
	space_destroy(&ds);
}

/* Case 5: a tenant over its share loses its own pages first, used or not. */
static void test_tenant_over_share(void)
{
	struct data_space ds;
	struct lru_lists small_lists, big_lists;
	struct inode small, big;

	check_set_context("tenant over its share");
	if (!space_new(&ds, space_ramdisk(SWAP_PAGES), MEM_PAGES))
		return;
	tenant_file_init(&ds, &small_lists, &small);
	tenant_file_init(&ds, &big_lists, &big);
	write_pages(&ds, &big, 256, 6);
	write_pages(&ds, &small, 128, 7);
	read_pages(&ds, &small, 0, 128, 7);
	read_pages(&ds, &small, 0, 128, 7);
	atomic_store(&small_lists.limit_pages, 64);

	CHECK_EQ(64, reclaim_pages(&ds, 64));
	CHECK_EQ(64, atomic_load(&small_lists.nr_resident));
	CHECK_EQ(256, atomic_load(&big_lists.nr_resident));
	/* At its share: now the big one's unused pages go. */
	CHECK_EQ(32, reclaim_pages(&ds, 32));
	CHECK_EQ(64, atomic_load(&small_lists.nr_resident));
	CHECK_EQ(224, atomic_load(&big_lists.nr_resident));
	read_pages(&ds, &small, 0, 128, 7);
	read_pages(&ds, &big, 0, 256, 6);

	file_destroy(&ds, &small);
	file_destroy(&ds, &big);
	space_destroy(&ds);
}

int main(void)
{
	test_used_once();
	test_loaded();
	test_tenants_stream_hot();
	test_all_in_use();
	test_tenant_over_share();
	return check_done("lru");
}
