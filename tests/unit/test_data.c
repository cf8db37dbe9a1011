// SPDX-License-Identifier: MIT
/*
 * Unit tests of file data over a real page pool: reads and writes against a
 * flat model, truncate, hole punch, fallocate and its accounting, SEEK_DATA
 * and SEEK_HOLE, copy, same-filled pages, and that every page goes back.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tierfs/data.h"
#include "tierfs/ns.h"
#include "tierfs/pagepool.h"
#include "tierfs/space.h"
#include "check.h"

#define P PAGE_SIZE

static bool space_new(struct data_space *ds, uint64_t pool_pages, uint64_t max_pages)
{
	struct pagepool *pool;

	if (!CHECK_EQ(0, pagepool_new(pool_pages, 0, &pool)))
		return false;
	space_init(ds, pool, max_pages, READAHEAD_AUTO, 0); /* no backend: no swap tier */
	return true;
}

static uint64_t pool_in_use(struct data_space *ds)
{
	struct pagepool_stats st;

	pagepool_get_stats(ds->pool, &st);
	return st.nr_in_use;
}

/* Every page back in the pool and nothing counted: then the pool goes. */
static void space_destroy(struct data_space *ds)
{
	CHECK_EQ(0, pool_in_use(ds));
	CHECK_EQ(0, atomic_load(&ds->nr_pages));
	CHECK_EQ(0, atomic_load(&ds->nr_filled));
	space_fini(ds);
}

static void file_init(struct inode *inode)
{
	memset(inode, 0, sizeof(*inode));
	inode->mode = S_IFREG | 0644;
}

/* Bytes in [off, off+len) of the file that differ from byte. */
static size_t nr_bytes_not(struct data_space *ds, struct inode *inode, uint64_t off, size_t len,
			   unsigned char byte)
{
	unsigned char *buf = malloc(len);
	size_t got, nr = 0;

	if (!buf)
		return len;
	got = data_read_mem(ds, inode, off, buf, len);
	for (size_t i = 0; i < len; i++)
		if (i >= got || buf[i] != byte)
			nr++;
	free(buf);
	return nr;
}

static ssize_t write_fill(struct data_space *ds, struct inode *inode, uint64_t off, size_t len,
			  unsigned char byte)
{
	unsigned char *buf = malloc(len);
	ssize_t ret;

	if (!buf)
		return -ENOMEM;
	memset(buf, byte, len);
	ret = data_write_mem(ds, inode, buf, len, off);
	free(buf);
	return ret;
}

/* Counts of the entries in the map, by kind. */
struct map_census {
	uint64_t nr_resident, nr_filled, nr_unwritten, nr_total;
	uint64_t last_index; /* of the highest entry, if any */
};

static struct map_census census(const struct inode *inode)
{
	struct map_census c = { 0 };
	uint64_t index, entry;

	for (index = 0; pagemap_next(&inode->pages, &index, UINT64_MAX, &entry); index++) {
		c.nr_total++;
		c.last_index = index;
		if (pagemap_kind(entry) == PAGEMAP_KIND_RESIDENT)
			c.nr_resident++;
		else if (pagemap_is_unwritten(entry))
			c.nr_unwritten++;
		else if (pagemap_kind(entry) == PAGEMAP_KIND_FILLED)
			c.nr_filled++;
	}
	return c;
}

static void test_write_read(void)
{
	struct data_space ds;
	struct inode f;
	struct iovec iov[DATA_MAX_READ_PAGES];
	char buf[256], *scratch = NULL;
	int nr_iov;

	if (!space_new(&ds, 64, 0))
		return;
	file_init(&f);

	/* Five bytes across the first page boundary. */
	CHECK_EQ(5, data_write_mem(&ds, &f, "hello", 5, P - 3));
	CHECK_EQ(P + 2, f.size);
	CHECK_EQ(2, f.pages.nr_entries);
	CHECK_EQ(2, atomic_load(&ds.nr_pages));
	CHECK_EQ(2, pool_in_use(&ds));
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(5, data_read_mem(&ds, &f, P - 3, buf, 5));
	CHECK_MEM("hello", buf, 5);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 0, P - 3, 0));
	/* Reads stop at the size. */
	CHECK_EQ(0, data_read_mem(&ds, &f, P + 2, buf, 10));
	CHECK_EQ(0, data_read_mem(&ds, &f, 1 << 20, buf, 10));
	CHECK_EQ(8, data_read_mem(&ds, &f, P - 6, buf, 100));
	CHECK_MEM("\0\0\0hello", buf, 8);

	/* The iovec form: one iovec a page, clamped to the size. */
	nr_iov = data_read(&ds, &f, P - 100, 1000, iov, &scratch);
	CHECK_EQ(2, nr_iov);
	if (nr_iov == 2) {
		CHECK_EQ(100, iov[0].iov_len);
		CHECK_EQ(2, iov[1].iov_len);
		CHECK_MEM("hel", (char *)iov[0].iov_base + 97, 3);
		CHECK_MEM("lo", iov[1].iov_base, 2);
	}
	CHECK_EQ(0, data_read(&ds, &f, P + 2, 10, iov, &scratch));

	/* Overwrite in place: no new pages. */
	CHECK_EQ(3, data_write_mem(&ds, &f, "HEL", 3, P - 3));
	CHECK_EQ(P + 2, f.size);
	CHECK_EQ(2, pool_in_use(&ds));
	CHECK_EQ(5, data_read_mem(&ds, &f, P - 3, buf, 5));
	CHECK_MEM("HELlo", buf, 5);

	/* Several buffers, an empty one among them, land one after the other. */
	{
		struct iovec parts[] = { { "h", 1 }, { "", 0 }, { "ELL", 3 }, { "O", 1 } };

		CHECK_EQ(5, data_write(&ds, &f, parts, 4, P - 3));
		CHECK_EQ(5, data_read_mem(&ds, &f, P - 3, buf, 5));
		CHECK_MEM("hELLO", buf, 5);
		CHECK_EQ(5, data_write_mem(&ds, &f, "HELlo", 5, P - 3));
	}

	/* A write of nothing changes nothing. */
	CHECK_EQ(0, data_write_mem(&ds, &f, "", 0, 1 << 20));
	CHECK_EQ(P + 2, f.size);

	/* Sparse: one byte far out makes one page; the gap is holes. */
	CHECK_EQ(1, data_write_mem(&ds, &f, "z", 1, 10 * P + 7));
	CHECK_EQ(10 * P + 8, f.size);
	CHECK_EQ(3, f.pages.nr_entries);
	CHECK_EQ(3, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, P + 2, 9 * P + 5, 0));
	CHECK_EQ(1, data_read_mem(&ds, &f, 10 * P + 7, buf, 1));
	CHECK_EQ('z', buf[0]);
	nr_iov = data_read(&ds, &f, 0, 10 * P + 8, iov, &scratch);
	CHECK_EQ(11, nr_iov);
	/* Holes and resident pages need no scratch memory. */
	CHECK(scratch == NULL);
	free(scratch);

	data_release(&ds, &f);
	CHECK_EQ(0, f.pages.nr_entries);
	CHECK_EQ(0, f.pages.nr_nodes);
	space_destroy(&ds);
}

/* xorshift64, fixed seed. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define MODEL_PAGES 40
#define MODEL_BYTES (MODEL_PAGES * P)

/*
 * Random writes, truncates, punches and fallocates within the size,
 * compared with a flat model after each step: the bytes through both read
 * paths, the size, and the page accounting.  Beyond the size the model is
 * all zeros, so a regrow must read zeros.
 */
static void test_model(void)
{
	static unsigned char model[MODEL_BYTES], got[MODEL_BYTES], src[3 * P + 1];
	static struct iovec iov[DATA_MAX_READ_PAGES];
	struct data_space ds;
	struct inode f;
	uint64_t seed = 0x2545f4914f6cdd1dULL, msize = 0;
	unsigned int nr_bad_bytes = 0, nr_bad_iov = 0, nr_bad_size = 0, nr_bad_count = 0;
	unsigned int nr_bad_ret = 0, nr_bad_eof = 0;

	if (!space_new(&ds, MODEL_PAGES + 8, 0))
		return;
	file_init(&f);
	for (int step = 0; step < 600; step++) {
		unsigned int op = (unsigned int)(rng_next(&seed) % 10);
		uint64_t off = rng_next(&seed) % (MODEL_BYTES - sizeof(src));
		uint64_t len = 1 + rng_next(&seed) % sizeof(src);
		struct map_census c;
		size_t n;

		if (op < 5) {
			unsigned char b = (unsigned char)(1 + step % 255);

			/* Page-aligned whole pages now and then: the no-memset path. */
			if (op == 0) {
				off &= ~(uint64_t)(P - 1);
				len = P * (1 + len % 3);
			}
			memset(src, b, len);
			src[0] ^= 0x80;
			if (data_write_mem(&ds, &f, src, len, off) != (ssize_t)len)
				nr_bad_ret++;
			memcpy(model + off, src, len);
			if (off + len > msize)
				msize = off + len;
		} else if (op < 7) {
			uint64_t size = rng_next(&seed) % MODEL_BYTES;

			if (rng_next(&seed) % 3 == 0)
				size &= ~(uint64_t)(P - 1);
			if (data_truncate(&ds, &f, size))
				nr_bad_ret++;
			if (size < msize)
				memset(model + size, 0, msize - size);
			msize = size;
		} else if (op < 9) {
			if (data_punch(&ds, &f, off, len))
				nr_bad_ret++;
			memset(model + off, 0, len);
		} else if (msize) {
			off %= msize;
			if (off + len > msize)
				len = msize - off;
			if (data_allocate(&ds, &f, off, len))
				nr_bad_ret++;
		}

		if (f.size != msize)
			nr_bad_size++;
		n = data_read_mem(&ds, &f, 0, got, MODEL_BYTES);
		if (n != msize || memcmp(got, model, msize))
			nr_bad_bytes++;
		if (msize) {
			char *scratch = NULL;
			int nr = data_read(&ds, &f, 0, msize, iov, &scratch);
			size_t pos = 0;

			for (int i = 0; i < nr; i++) {
				if (pos + iov[i].iov_len > msize ||
				    memcmp(iov[i].iov_base, model + pos, iov[i].iov_len))
					break;
				pos += iov[i].iov_len;
			}
			if (pos != msize)
				nr_bad_iov++;
			free(scratch);
		}
		c = census(&f);
		if (c.nr_total != atomic_load(&ds.nr_pages) || c.nr_resident != pool_in_use(&ds) ||
		    c.nr_filled + c.nr_unwritten != atomic_load(&ds.nr_filled) ||
		    c.nr_total != f.pages.nr_entries)
			nr_bad_count++;
		/* Fallocates here stay within the size, so nothing lies past it. */
		if (c.nr_total && c.last_index >= (msize + P - 1) / P)
			nr_bad_eof++;
	}
	CHECK_EQ(0, nr_bad_ret);
	CHECK_EQ(0, nr_bad_size);
	CHECK_EQ(0, nr_bad_bytes);
	CHECK_EQ(0, nr_bad_iov);
	CHECK_EQ(0, nr_bad_count);
	CHECK_EQ(0, nr_bad_eof);
	data_release(&ds, &f);
	space_destroy(&ds);
}

static void test_truncate(void)
{
	struct data_space ds;
	struct inode f;
	struct map_census c;

	if (!space_new(&ds, 64, 0))
		return;
	file_init(&f);
	CHECK_EQ(3 * P, write_fill(&ds, &f, 0, 3 * P, 0xaa));

	/* Down mid-page: page 2 goes, page 1 keeps its head. */
	CHECK_EQ(0, data_truncate(&ds, &f, 5000));
	CHECK_EQ(5000, f.size);
	CHECK_EQ(2, f.pages.nr_entries);
	CHECK_EQ(2, atomic_load(&ds.nr_pages));
	CHECK_EQ(2, pool_in_use(&ds));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 0, 5000, 0xaa));

	/* Regrow: the old tail reads as zeros, no pages are added. */
	CHECK_EQ(0, data_truncate(&ds, &f, 3 * P));
	CHECK_EQ(3 * P, f.size);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 0, 5000, 0xaa));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 5000, 3 * P - 5000, 0));
	CHECK_EQ(2, f.pages.nr_entries);

	/* Same size: pages fallocated past the end go. */
	CHECK_EQ(0, data_allocate(&ds, &f, 3 * P, 2 * P));
	CHECK_EQ(3 * P, f.size);
	CHECK_EQ(4, atomic_load(&ds.nr_pages));
	CHECK_EQ(2, atomic_load(&ds.nr_filled));
	CHECK_EQ(0, data_truncate(&ds, &f, 3 * P));
	CHECK_EQ(2, f.pages.nr_entries);
	CHECK_EQ(2, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, atomic_load(&ds.nr_filled));
	CHECK_EQ(2, pool_in_use(&ds));

	/* Into a hole mid-page, and into an unwritten page: nothing is made resident. */
	CHECK_EQ(0, data_truncate(&ds, &f, 10 * P));
	CHECK_EQ(0, data_truncate(&ds, &f, 5 * P + 100));
	CHECK_EQ(2, f.pages.nr_entries);
	CHECK_EQ(0, data_allocate(&ds, &f, 4 * P, P));
	CHECK_EQ(0, data_truncate(&ds, &f, 4 * P + 100));
	c = census(&f);
	CHECK_EQ(1, c.nr_unwritten);
	CHECK_EQ(2, c.nr_resident);
	CHECK_EQ(2, pool_in_use(&ds));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 5000, 4 * P + 100 - 5000, 0));

	/* To zero: everything goes. */
	CHECK_EQ(0, data_truncate(&ds, &f, 0));
	CHECK_EQ(0, f.size);
	CHECK_EQ(0, f.pages.nr_entries);
	CHECK_EQ(0, f.pages.nr_nodes);
	CHECK_EQ(0, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, pool_in_use(&ds));

	/* A recycled page written in part shows zeros around the write. */
	CHECK_EQ(P, write_fill(&ds, &f, 0, P, 0xee));
	CHECK_EQ(0, data_truncate(&ds, &f, 0));
	CHECK_EQ(1, data_write_mem(&ds, &f, "q", 1, 2000));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 0, 2000, 0));
	CHECK_EQ(0, data_truncate(&ds, &f, P));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 2001, P - 2001, 0));

	data_release(&ds, &f);
	space_destroy(&ds);
}

static void test_punch(void)
{
	struct data_space ds;
	struct inode f;
	struct map_census c;

	if (!space_new(&ds, 64, 0))
		return;
	file_init(&f);
	CHECK_EQ(4 * P, write_fill(&ds, &f, 0, 4 * P, 0xbb));

	/* Inside one page: zeroed, the page stays. */
	CHECK_EQ(0, data_punch(&ds, &f, 100, 200));
	CHECK_EQ(4, f.pages.nr_entries);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 0, 100, 0xbb));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 100, 200, 0));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 300, 4 * P - 300, 0xbb));

	/* Across pages: the partial ends are zeroed, whole pages freed. */
	CHECK_EQ(0, data_punch(&ds, &f, 2000, 3 * P));
	CHECK_EQ(2, f.pages.nr_entries);
	CHECK_EQ(2, atomic_load(&ds.nr_pages));
	CHECK_EQ(2, pool_in_use(&ds));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 300, 1700, 0xbb));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 2000, 3 * P, 0));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 3 * P + 2000, P - 2000, 0xbb));
	CHECK_EQ(4 * P, f.size);

	/* One whole aligned page. */
	CHECK_EQ(0, data_punch(&ds, &f, 3 * P, P));
	CHECK_EQ(1, f.pages.nr_entries);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 3 * P, P, 0));
	CHECK_EQ(4 * P, f.size);

	/* Up to the end of a page from its middle: zeroed in place. */
	CHECK_EQ(0, data_punch(&ds, &f, 10, P - 10));
	CHECK_EQ(1, f.pages.nr_entries);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 0, 10, 0xbb));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 10, P - 10, 0));

	/* Nothing to do: zero length, past the end, over holes. */
	CHECK_EQ(0, data_punch(&ds, &f, 0, 0));
	CHECK_EQ(0, data_punch(&ds, &f, 100 * P + 5, 3 * P));
	CHECK_EQ(0, data_punch(&ds, &f, P + 1, 2 * P));
	CHECK_EQ(1, f.pages.nr_entries);
	CHECK_EQ(4 * P, f.size);

	/* A partial punch of an unwritten page leaves it unwritten. */
	CHECK_EQ(0, data_allocate(&ds, &f, 2 * P, P));
	CHECK_EQ(0, data_punch(&ds, &f, 2 * P + 5, 100));
	c = census(&f);
	CHECK_EQ(1, c.nr_unwritten);
	CHECK_EQ(1, pool_in_use(&ds));

	/* To the end of the address space (off + len wraps): everything goes. */
	CHECK_EQ(0, data_punch(&ds, &f, 0, UINT64_MAX));
	CHECK_EQ(0, f.pages.nr_entries);
	CHECK_EQ(0, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, pool_in_use(&ds));
	CHECK_EQ(4 * P, f.size);

	data_release(&ds, &f);
	space_destroy(&ds);
}

static void test_allocate(void)
{
	struct data_space ds;
	struct inode f;
	struct map_census c;

	if (!space_new(&ds, 64, 8))
		return;
	file_init(&f);
	CHECK_EQ(1, data_write_mem(&ds, &f, "a", 1, 0));
	CHECK_EQ(P, write_fill(&ds, &f, 3 * P, P, 0xcc));
	CHECK_EQ(4 * P, f.size);
	CHECK_EQ(2, atomic_load(&ds.nr_pages));

	/* 8 holes on top of 2 pages is over 8: all or nothing. */
	CHECK_EQ(-ENOSPC, data_allocate(&ds, &f, 0, 10 * P));
	CHECK_EQ(2, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, atomic_load(&ds.nr_filled));
	CHECK_EQ(2, f.pages.nr_entries);
	CHECK_EQ(4 * P, f.size);

	/* Pages 1, 2, 4, 5: counted, no memory, size unchanged. */
	CHECK_EQ(0, data_allocate(&ds, &f, 100, 6 * P - 200));
	CHECK_EQ(6, atomic_load(&ds.nr_pages));
	CHECK_EQ(4, atomic_load(&ds.nr_filled));
	CHECK_EQ(6, f.pages.nr_entries);
	CHECK_EQ(2, pool_in_use(&ds));
	CHECK_EQ(4 * P, f.size);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 1, 3 * P - 1, 0));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 3 * P, P, 0xcc));

	/* Unwritten pages are holes to SEEK_DATA / SEEK_HOLE. */
	CHECK_EQ(0, data_seek(&f, 0, SEEK_DATA));
	CHECK_EQ(P, data_seek(&f, 0, SEEK_HOLE));
	CHECK_EQ(3 * P, data_seek(&f, P, SEEK_DATA));
	CHECK_EQ(3 * P, data_seek(&f, 5000, SEEK_DATA));
	CHECK_EQ(5000, data_seek(&f, 5000, SEEK_HOLE));
	CHECK_EQ(4 * P, data_seek(&f, 3 * P, SEEK_HOLE));
	CHECK_EQ(-ENXIO, data_seek(&f, 4 * P, SEEK_DATA));
	CHECK_EQ(-ENXIO, data_seek(&f, 4 * P, SEEK_HOLE));
	CHECK_EQ(0, data_truncate(&ds, &f, 6 * P));
	CHECK_EQ(6, atomic_load(&ds.nr_pages));
	CHECK_EQ(-ENXIO, data_seek(&f, 4 * P, SEEK_DATA));
	CHECK_EQ(4 * P, data_seek(&f, 4 * P, SEEK_HOLE));

	/* Fallocated again, an unwritten page becomes data; nothing more is counted. */
	CHECK_EQ(0, data_allocate(&ds, &f, P, 1));
	CHECK_EQ(P, data_seek(&f, P, SEEK_DATA));
	CHECK_EQ(2 * P, data_seek(&f, P, SEEK_HOLE));
	CHECK_EQ(6, atomic_load(&ds.nr_pages));
	CHECK_EQ(4, atomic_load(&ds.nr_filled));
	CHECK_EQ(2, pool_in_use(&ds));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, P, P, 0));
	c = census(&f);
	CHECK_EQ(3, c.nr_unwritten);
	CHECK_EQ(1, c.nr_filled);

	/* Writing into an unwritten page makes it resident without a new charge. */
	CHECK_EQ(1, data_write_mem(&ds, &f, "w", 1, 2 * P + 10));
	CHECK_EQ(6, atomic_load(&ds.nr_pages));
	CHECK_EQ(3, atomic_load(&ds.nr_filled));
	CHECK_EQ(3, pool_in_use(&ds));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 2 * P, 10, 0));
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 2 * P + 11, P - 11, 0));
	CHECK_EQ(2 * P, data_seek(&f, 2 * P, SEEK_DATA));

	/* Already present pages cost nothing; the limit counts only holes. */
	CHECK_EQ(0, data_allocate(&ds, &f, 0, 6 * P));
	CHECK_EQ(6, atomic_load(&ds.nr_pages));
	CHECK_EQ(-ENOSPC, data_allocate(&ds, &f, 6 * P, 3 * P));
	CHECK_EQ(6, atomic_load(&ds.nr_pages));
	CHECK_EQ(0, data_allocate(&ds, &f, 6 * P, 2 * P));
	CHECK_EQ(8, atomic_load(&ds.nr_pages));
	CHECK_EQ(6 * P, f.size);

	/* Full: a write to a hole is refused and changes nothing. */
	CHECK_EQ(-ENOSPC, data_write_mem(&ds, &f, "x", 1, 20 * P));
	CHECK_EQ(6 * P, f.size);
	CHECK_EQ(8, f.pages.nr_entries);
	CHECK_EQ(8, atomic_load(&ds.nr_pages));
	CHECK_EQ(-ENOSPC, data_allocate(&ds, &f, 20 * P, 1));

	/* Beyond the largest file, or wrapping around. */
	CHECK_EQ(-EFBIG, data_allocate(&ds, &f, 1ULL << 63, 1));
	CHECK_EQ(-EFBIG, data_allocate(&ds, &f, UINT64_MAX - 10, 100));
	CHECK_EQ(0, data_allocate(&ds, &f, 50 * P, 0));
	CHECK_EQ(8, atomic_load(&ds.nr_pages));

	data_release(&ds, &f);
	CHECK_EQ(0, f.pages.nr_nodes);
	space_destroy(&ds);
}

static void test_seek(void)
{
	struct data_space ds;
	struct inode f;

	if (!space_new(&ds, 64, 0))
		return;
	file_init(&f);

	/* Empty: both ENXIO. */
	CHECK_EQ(-ENXIO, data_seek(&f, 0, SEEK_DATA));
	CHECK_EQ(-ENXIO, data_seek(&f, 0, SEEK_HOLE));

	/* All hole. */
	CHECK_EQ(0, data_truncate(&ds, &f, 10 * P));
	CHECK_EQ(-ENXIO, data_seek(&f, 0, SEEK_DATA));
	CHECK_EQ(0, data_seek(&f, 0, SEEK_HOLE));
	CHECK_EQ(5000, data_seek(&f, 5000, SEEK_HOLE));
	CHECK_EQ(-ENXIO, data_seek(&f, 10 * P, SEEK_HOLE));
	CHECK_EQ(-ENXIO, data_seek(&f, UINT64_MAX, SEEK_HOLE));

	/* Data in page 0 only, size 10000. */
	CHECK_EQ(0, data_truncate(&ds, &f, 10000));
	CHECK_EQ(1, data_write_mem(&ds, &f, "d", 1, 200));
	CHECK_EQ(100, data_seek(&f, 100, SEEK_DATA));
	CHECK_EQ(P, data_seek(&f, 100, SEEK_HOLE));
	CHECK_EQ(-ENXIO, data_seek(&f, 5000, SEEK_DATA));
	CHECK_EQ(9999, data_seek(&f, 9999, SEEK_HOLE));
	CHECK_EQ(-ENXIO, data_seek(&f, 10000, SEEK_DATA));

	/* Data in pages 2 and 4, holes around. */
	CHECK_EQ(1, data_write_mem(&ds, &f, "d", 1, 2 * P + 5));
	CHECK_EQ(1, data_write_mem(&ds, &f, "d", 1, 4 * P + 5));
	CHECK_EQ(4 * P + 6, f.size);
	CHECK_EQ(2 * P, data_seek(&f, P, SEEK_DATA));
	CHECK_EQ(3 * P, data_seek(&f, 2 * P, SEEK_HOLE));
	CHECK_EQ(4 * P, data_seek(&f, 3 * P + 1, SEEK_DATA));
	CHECK_EQ(4 * P + 6, data_seek(&f, 4 * P, SEEK_HOLE));
	CHECK_EQ(4 * P + 5, data_seek(&f, 4 * P + 5, SEEK_DATA));

	/* All data: the only hole is the end of the file. */
	data_release(&ds, &f);
	file_init(&f);
	CHECK_EQ(3 * P, write_fill(&ds, &f, 0, 3 * P, 1));
	CHECK_EQ(3 * P, data_seek(&f, 0, SEEK_HOLE));
	CHECK_EQ(3 * P - 1, data_seek(&f, 3 * P - 1, SEEK_DATA));
	CHECK_EQ(3 * P, data_seek(&f, 3 * P - 1, SEEK_HOLE));

	/* The last page runs past the size: the hole is still at the size. */
	CHECK_EQ(0, data_truncate(&ds, &f, 2 * P + 1));
	CHECK_EQ(2 * P + 1, data_seek(&f, 0, SEEK_HOLE));

	/* Data only past the size (fallocated twice, keep size): none for SEEK_DATA. */
	data_release(&ds, &f);
	file_init(&f);
	CHECK_EQ(0, data_truncate(&ds, &f, P));
	CHECK_EQ(0, data_allocate(&ds, &f, 2 * P, P));
	CHECK_EQ(0, data_allocate(&ds, &f, 2 * P, P));
	CHECK_EQ(-ENXIO, data_seek(&f, 0, SEEK_DATA));
	CHECK_EQ(0, data_seek(&f, 0, SEEK_HOLE));

	data_release(&ds, &f);
	space_destroy(&ds);
}

static void test_copy(void)
{
	static unsigned char pattern[4 * P], got[5 * P];
	struct data_space ds;
	struct inode src, dst, dst2;

	if (!space_new(&ds, 64, 0))
		return;
	file_init(&src);
	file_init(&dst);
	file_init(&dst2);
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)(i * 7 + i / 4096);
	memset(pattern + 2 * P, 0, P); /* page 2 is a hole */
	CHECK_EQ(2 * P, data_write_mem(&ds, &src, pattern, 2 * P, 0));
	CHECK_EQ(P, data_write_mem(&ds, &src, pattern + 3 * P, P, 3 * P));
	CHECK_EQ(3, src.pages.nr_entries);

	/* To an odd offset. */
	CHECK_EQ(4 * P, data_copy(&ds, &dst, 777, &src, 0, 4 * P));
	CHECK_EQ(4 * P + 777, dst.size);
	CHECK_EQ(4 * P + 777, data_read_mem(&ds, &dst, 0, got, sizeof(got)));
	CHECK_EQ(0, nr_bytes_not(&ds, &dst, 0, 777, 0));
	CHECK_MEM(pattern, got + 777, 4 * P);
	/* The source is untouched. */
	CHECK_EQ(4 * P, data_read_mem(&ds, &src, 0, got, sizeof(got)));
	CHECK_MEM(pattern, got, 4 * P);

	/* Stops at the source's size; nothing past it. */
	CHECK_EQ(4 * P - 10000, data_copy(&ds, &dst2, 0, &src, 10000, 100 * P));
	CHECK_EQ(4 * P - 10000, dst2.size);
	CHECK_EQ(4 * P - 10000, data_read_mem(&ds, &dst2, 0, got, sizeof(got)));
	CHECK_MEM(pattern + 10000, got, 4 * P - 10000);
	CHECK_EQ(0, data_copy(&ds, &dst2, 0, &src, 4 * P, 10));
	CHECK_EQ(0, data_copy(&ds, &dst2, 0, &src, 0, 0));
	CHECK_EQ(4 * P - 10000, dst2.size);

	/* Within one file, ranges apart. */
	CHECK_EQ(P, data_copy(&ds, &src, 8 * P + 1, &src, 1, P));
	CHECK_EQ(9 * P + 1, src.size);
	CHECK_EQ(P, data_read_mem(&ds, &src, 8 * P + 1, got, P));
	CHECK_MEM(pattern + 1, got, P);

	/* Out of space part way: the bytes that fit are reported. */
	data_release(&ds, &dst2);
	file_init(&dst2);
	ds.max_pages = atomic_load(&ds.nr_pages) + 2;
	CHECK_EQ(2 * P, data_copy(&ds, &dst2, 0, &src, 0, 4 * P));
	CHECK_EQ(2 * P, dst2.size);
	CHECK_EQ(-ENOSPC, data_copy(&ds, &dst2, 10 * P, &src, 0, P));
	ds.max_pages = 0;

	data_release(&ds, &src);
	data_release(&ds, &dst);
	data_release(&ds, &dst2);
	space_destroy(&ds);
}

static void test_short_write(void)
{
	struct data_space ds;
	struct inode f;
	struct pagepool_stats st;

	/* size= runs out part way. */
	if (!space_new(&ds, 64, 4))
		return;
	file_init(&f);
	CHECK_EQ(4 * P, write_fill(&ds, &f, 0, 5 * P, 3));
	CHECK_EQ(4 * P, f.size);
	CHECK_EQ(4, atomic_load(&ds.nr_pages));
	CHECK_EQ(-ENOSPC, write_fill(&ds, &f, 4 * P, 1, 3));
	CHECK_EQ(4 * P, f.size);
	/* Overwriting present pages needs no space. */
	CHECK_EQ(4 * P, write_fill(&ds, &f, 0, 4 * P, 4));
	data_release(&ds, &f);
	space_destroy(&ds);

	/* The pool runs out part way: the page that failed is not counted. */
	if (!space_new(&ds, 4, 0))
		return;
	file_init(&f);
	CHECK_EQ(4 * P - 100, write_fill(&ds, &f, 100, 5 * P, 3));
	CHECK_EQ(4 * P, f.size);
	CHECK_EQ(4, atomic_load(&ds.nr_pages));
	CHECK_EQ(4, f.pages.nr_entries);
	pagepool_get_stats(ds.pool, &st);
	CHECK(st.nr_alloc_failures >= 1);
	CHECK_EQ(-ENOSPC, write_fill(&ds, &f, 10 * P, 1, 3));
	CHECK_EQ(4, atomic_load(&ds.nr_pages));
	data_release(&ds, &f);
	space_destroy(&ds);
}

static void test_limits(void)
{
	const uint64_t last_byte = (PAGEMAP_MAX_INDEX << PAGE_SHIFT) + P - 2;
	struct data_space ds;
	struct inode f;
	char c = 0;

	if (!space_new(&ds, 8, 0))
		return;
	file_init(&f);
	CHECK_EQ(-EFBIG, data_write_mem(&ds, &f, "x", 1, (PAGEMAP_MAX_INDEX + 1) << PAGE_SHIFT));
	CHECK_EQ(-EFBIG, data_write_mem(&ds, &f, "xxxxx", 5, UINT64_MAX - 2));
	CHECK_EQ(0, f.size);

	/* The last byte of a file of 2^63 - 1 bytes. */
	CHECK_EQ(1, data_write_mem(&ds, &f, "y", 1, last_byte));
	CHECK_EQ((1ULL << 63) - 1, f.size);
	CHECK_EQ(1, data_read_mem(&ds, &f, last_byte, &c, 1));
	CHECK_EQ('y', c);
	CHECK_EQ((int64_t)(PAGEMAP_MAX_INDEX << PAGE_SHIFT), data_seek(&f, 0, SEEK_DATA));
	CHECK_EQ(0, data_seek(&f, 0, SEEK_HOLE));
	CHECK_EQ(0, data_truncate(&ds, &f, 1ULL << 40));
	CHECK_EQ(0, f.pages.nr_entries);
	CHECK_EQ(0, pool_in_use(&ds));
	data_release(&ds, &f);
	space_destroy(&ds);
}

/*
 * Same-filled pages (kind FILLED, a 32-bit pattern) hold no pool memory and
 * read as their pattern; a write, a partial truncate or a partial punch
 * makes them resident with the pattern.  Placed in the map as their owner
 * would, counted in nr_pages and nr_filled.
 */
static void put_filled(struct data_space *ds, struct inode *f, uint64_t index, uint32_t fill)
{
	pagemap_set(&f->pages, index, pagemap_mk_filled(fill), NULL);
	atomic_fetch_add(&ds->nr_pages, 1);
	atomic_fetch_add(&ds->nr_filled, 1);
}

static void check_filled(uint32_t fill)
{
	struct iovec iov[DATA_MAX_READ_PAGES];
	unsigned char pattern[P], got[P];
	struct data_space ds;
	struct inode f;
	char *scratch = NULL;
	int nr;

	check_set_context("fill %#x", fill);
	for (size_t i = 0; i < P; i += 4)
		memcpy(pattern + i, &fill, 4);
	if (!space_new(&ds, 16, 0))
		goto out;
	file_init(&f);
	put_filled(&ds, &f, 0, fill);
	put_filled(&ds, &f, 1, fill);
	put_filled(&ds, &f, 2, fill);
	f.size = 3 * P;

	CHECK_EQ(P, data_read_mem(&ds, &f, 0, got, P));
	CHECK_MEM(pattern, got, P);
	nr = data_read(&ds, &f, 0, 3 * P, iov, &scratch);
	CHECK_EQ(3, nr);
	for (int i = 0; i < nr && i < 3; i++)
		CHECK_MEM(pattern, iov[i].iov_base, P);
	/* Non-zero fills are expanded into scratch, a page each. */
	CHECK_EQ(fill != 0, scratch != NULL);
	free(scratch);
	scratch = NULL;
	/* A read from inside a page points into its expansion. */
	nr = data_read(&ds, &f, P + 5, 10, iov, &scratch);
	CHECK_EQ(1, nr);
	if (nr == 1) {
		CHECK_EQ(10, iov[0].iov_len);
		CHECK_MEM(pattern + 5, iov[0].iov_base, 10);
	}
	free(scratch);
	CHECK_EQ(0, data_seek(&f, 0, SEEK_DATA));
	CHECK_EQ(3 * P, data_seek(&f, 0, SEEK_HOLE));
	CHECK_EQ(0, pool_in_use(&ds));

	/* A write into page 0 makes it resident, keeping the pattern around. */
	if (!CHECK_EQ(3, data_write_mem(&ds, &f, "abc", 3, 100)))
		goto release;
	CHECK_EQ(3, atomic_load(&ds.nr_pages));
	CHECK_EQ(2, atomic_load(&ds.nr_filled));
	CHECK_EQ(1, pool_in_use(&ds));
	CHECK_EQ(P, data_read_mem(&ds, &f, 0, got, P));
	CHECK_MEM(pattern, got, 100);
	CHECK_MEM("abc", got + 100, 3);
	CHECK_MEM(pattern + 103, got + 103, P - 103);

	/* A punch inside page 1 zeroes its middle (made resident unless all zeros). */
	CHECK_EQ(0, data_punch(&ds, &f, P + 8, 16));
	CHECK_EQ(fill ? 2 : 1, pool_in_use(&ds));
	CHECK_EQ(fill ? 1 : 2, atomic_load(&ds.nr_filled));
	CHECK_EQ(P, data_read_mem(&ds, &f, P, got, P));
	CHECK_MEM(pattern, got, 8);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, P + 8, 16, 0));
	CHECK_MEM(pattern + 24, got + 24, P - 24);

	/* A truncate into page 2 keeps its head and zeroes the rest. */
	CHECK_EQ(0, data_truncate(&ds, &f, 2 * P + 12));
	CHECK_EQ(0, data_truncate(&ds, &f, 3 * P));
	CHECK_EQ(P, data_read_mem(&ds, &f, 2 * P, got, P));
	CHECK_MEM(pattern, got, 12);
	CHECK_EQ(0, nr_bytes_not(&ds, &f, 2 * P + 12, P - 12, 0));
	CHECK_EQ(fill ? 3 : 1, pool_in_use(&ds));
	CHECK_EQ(fill ? 0 : 2, atomic_load(&ds.nr_filled));
	CHECK_EQ(3, atomic_load(&ds.nr_pages));

release:
	data_release(&ds, &f);
	space_destroy(&ds);
out:
	check_clear_context();
}

static void test_filled(void)
{
	check_filled(0x01020304);
	check_filled(0);
	check_filled(0xdeadbeef); /* the top bit of the entry is set */
}

static void test_release(void)
{
	struct data_space ds;
	struct inode f[3];

	if (!space_new(&ds, 64, 0))
		return;
	for (int i = 0; i < 3; i++) {
		file_init(&f[i]);
		write_fill(&ds, &f[i], (uint64_t)i * P, 3 * P, (unsigned char)i);
		data_allocate(&ds, &f[i], 10 * P, 4 * P);
		write_fill(&ds, &f[i], 1ULL << 35, 10, 1);
	}
	CHECK_EQ(3 * 8, atomic_load(&ds.nr_pages));
	CHECK_EQ(3 * 4, atomic_load(&ds.nr_filled));
	CHECK_EQ(3 * 4, pool_in_use(&ds));
	for (int i = 0; i < 3; i++) {
		data_release(&ds, &f[i]);
		CHECK_EQ(0, f[i].pages.nr_entries);
		CHECK_EQ(0, f[i].pages.nr_nodes);
		CHECK(f[i].pages.root == NULL);
	}
	space_destroy(&ds);
}

int main(void)
{
	test_write_read();
	test_model();
	test_truncate();
	test_punch();
	test_allocate();
	test_seek();
	test_copy();
	test_short_write();
	test_limits();
	test_filled();
	test_release();
	return check_done("data");
}
