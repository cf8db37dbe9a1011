// SPDX-License-Identifier: MIT
/*
 * Unit tests of the drain on a filesystem set up with tierfs_init(), for
 * zpool, the file backend and the chain of both: three files evicted whole,
 * then brought back by the drain thread and its loaders while other threads
 * read the first file, fault the second back in and overwrite half of the
 * third.  Every page reads back as last written and the backend ends
 * empty.  Under ThreadSanitizer this is where the drain's threads meet the
 * paths a FUSE request takes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/ctl.h"
#include "tierfs/data.h"
#include "tierfs/swapin.h"
#include "tierfs/tierfs.h"
#include "check.h"

#define RAM (1ULL << 30)
#define NR 4096 /* pages a file */
#define P PAGE_SIZE

/* Page index of file n as written gen: no two alike. */
static void pattern(unsigned char *page, unsigned int n, unsigned int gen, uint64_t index)
{
	uint64_t v = (index + 1) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)n << 56 ^ (uint64_t)gen << 48;

	for (size_t i = 0; i < P; i += sizeof(v)) {
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		/* Half the page repeats: it compresses, as most data does. */
		memcpy(page + i, i < P / 2 ? &v : &index, sizeof(v));
	}
}

struct rig {
	struct tierfs fs;
	bool is_init; /* tierfs_init() succeeded */
	struct inode *files[3];
	atomic_bool is_done;
	atomic_uint nr_bad; /* pages a thread read wrong */
};

static uint64_t stored(struct rig *r)
{
	struct backend_stats st;

	r->fs.data.backend->ops->get_stats(r->fs.data.backend, &st);
	return st.stored_pages;
}

static bool read_is(struct rig *r, unsigned int n, unsigned int gen, uint64_t index)
{
	static _Thread_local unsigned char want[P], got[P];
	struct inode *inode = r->files[n];
	ssize_t len;

	pattern(want, n, gen, index);
	pthread_rwlock_rdlock(&inode->lock);
	len = data_read_mem(&r->fs.data, inode, index * P, got, P);
	pthread_rwlock_unlock(&inode->lock);
	return len == (ssize_t)P && !memcmp(want, got, P);
}

/* File 0: read through, loading swapped pages without bringing them back. */
static void *reader(void *arg)
{
	struct rig *r = arg;

	while (!atomic_load(&r->is_done))
		for (uint64_t i = 0; i < NR; i += 7)
			if (!read_is(r, 0, 1, i))
				atomic_fetch_add(&r->nr_bad, 1);
	return NULL;
}

/* File 1: faults, as a read of swapped pages does, going backwards. */
static void *faulter(void *arg)
{
	struct rig *r = arg;
	struct inode *inode = r->files[1];

	for (uint64_t i = NR; i-- > 0;) {
		pthread_rwlock_wrlock(&inode->lock);
		if (swapin_range(&r->fs.data, inode, i * P, P))
			atomic_fetch_add(&r->nr_bad, 1);
		pthread_rwlock_unlock(&inode->lock);
		if (!read_is(r, 1, 1, i))
			atomic_fetch_add(&r->nr_bad, 1);
	}
	return NULL;
}

/* File 2: every other page written again, as generation 2. */
static void *writer(void *arg)
{
	struct rig *r = arg;
	struct inode *inode = r->files[2];
	unsigned char page[P];

	for (uint64_t i = 0; i < NR; i += 2) {
		pattern(page, 2, 2, i);
		pthread_rwlock_wrlock(&inode->lock);
		if (data_write_mem(&r->fs.data, inode, page, P, i * P) != (ssize_t)P)
			atomic_fetch_add(&r->nr_bad, 1);
		pthread_rwlock_unlock(&inode->lock);
	}
	return NULL;
}

static const char *ctl(struct rig *r, const char *request)
{
	static char buf[4096];

	ctl_handle(&r->fs, request, 0, buf, sizeof(buf));
	return buf;
}

/* Poll drain status until it is no longer running; its state's name. */
static const char *wait_drain(struct rig *r)
{
	for (int i = 0; i < 6000; i++) {
		const char *st = strstr(ctl(r, "drain status"), "state ");

		if (st && strncmp(st + 6, "running", 7)) {
			static char state[32];

			sscanf(st + 6, "%31s", state);
			return state;
		}
		usleep(10000);
	}
	return "still running after 60 s";
}

static bool rig_open(struct rig *r, const char *backend)
{
	char opt[512];
	char *argv[] = { "tierfs", "-o", opt, "/mnt", NULL };
	struct tierfs_options opts;
	char err[256] = "";
	unsigned char page[P];

	memset(r, 0, sizeof(*r));
	snprintf(opt, sizeof(opt), "size=128m,mem=96m,swapsize=128m,backend=%s", backend);
	if (!CHECK_EQ(0, options_parse(4, argv, RAM, &opts, err, sizeof(err))) ||
	    !CHECK_EQ(0, tierfs_init(&r->fs, &opts, RAM, err, sizeof(err)))) {
		printf("     %s\n", err);
		return false;
	}
	r->is_init = true;
	for (unsigned int n = 0; n < 3; n++) {
		char name[2] = { (char)('a' + n), 0 };
		struct inode *inode;

		if (!CHECK_EQ(0, ns_inode_new(&r->fs.ns, S_IFREG | 0644, 0, 0, 0, &inode)))
			return false;
		inode->nlink = 1;
		CHECK_EQ(0, dir_add(&r->fs.ns, r->fs.ns.root, name, 1, inode));
		r->files[n] = inode;
		pthread_rwlock_wrlock(&inode->lock);
		for (uint64_t i = 0; i < NR; i++) {
			pattern(page, n, 1, i);
			CHECK_EQ((ssize_t)P, data_write_mem(&r->fs.data, inode, page, P, i * P));
		}
		pthread_rwlock_unlock(&inode->lock);
	}
	ctl(r, "reclaim all");
	return CHECK_EQ((uint64_t)3 * NR, stored(r));
}

static void test_drain(const char *backend)
{
	pthread_t threads[3];
	void *(*fns[3])(void *) = { reader, faulter, writer };
	struct rig r;

	check_set_context("drain, %s", backend);
	if (rig_open(&r, backend)) {
		for (int i = 0; i < 3; i++)
			CHECK_EQ(0, pthread_create(&threads[i], NULL, fns[i], &r));
		CHECK(!strncmp(ctl(&r, "drain start"), "ok\nstarted", 10));
		CHECK_STR("done", wait_drain(&r));
		atomic_store(&r.is_done, true);
		for (int i = 0; i < 3; i++)
			pthread_join(threads[i], NULL);
		CHECK_EQ(0u, atomic_load(&r.nr_bad));
		CHECK_EQ((uint64_t)0, stored(&r));
		for (unsigned int n = 0; n < 3; n++)
			for (uint64_t i = 0; i < NR; i++)
				CHECK(read_is(&r, n, n == 2 && i % 2 == 0 ? 2 : 1, i));
		/* Evictable again, and drained again from the start. */
		ctl(&r, "reclaim all");
		CHECK_EQ((uint64_t)3 * NR, stored(&r));
		CHECK(!strncmp(ctl(&r, "drain start"), "ok\nstarted", 10));
		CHECK_STR("done", wait_drain(&r));
		CHECK_EQ((uint64_t)0, stored(&r));
		CHECK(read_is(&r, 2, 2, NR - 2));
	}
	if (r.is_init)
		tierfs_destroy(&r.fs);
	check_clear_context();
}

int main(void)
{
	char dir[] = "/var/tmp/tierfs-test-drain.XXXXXX";
	char backend[128];

	test_drain("zpool");
	if (!backend_find("file"))
		return check_done("drain");
	if (!CHECK(mkdtemp(dir)))
		return check_done("drain");
	snprintf(backend, sizeof(backend), "file:%s/swap", dir);
	test_drain(backend);
	snprintf(backend, sizeof(backend), "zpool+file:%s/swap", dir);
	test_drain(backend);
	rmdir(dir);
	return check_done("drain");
}
