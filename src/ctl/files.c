// SPDX-License-Identifier: MIT
/*
 * "files INO...": where each file's pages are, for tierctl files (what
 * fincore is for the kernel's page cache): resident in the daemon, held as
 * a repeated word, or swapped, by tier.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/ctl.h"
#include "tierfs/options.h"
#include "tierfs/pagemap.h"
#include "tierfs/tierfs.h"
#include "ctl_priv.h"

/* One asked-for file's pages. */
struct file_pages {
	uint64_t ino;
	unsigned int order; /* its place in the request */
	bool is_found;
	uint64_t size, nr_resident, nr_filled;
	uint64_t nr_swapped[BACKEND_MAX_TIERS];
};

static int by_ino(const void *a, const void *b)
{
	const struct file_pages *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int by_order(const void *a, const void *b)
{
	const struct file_pages *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * What peer may see of a file: root and the daemon's user all of it,
 * others their own files and those anyone may read (their groups are not
 * known here, so a file only its group may read is not shown them).
 */
static bool may_see(const struct inode *inode, uid_t peer_uid)
{
	return peer_uid == 0 || peer_uid == geteuid() || inode->uid == peer_uid ||
	       (inode->mode & S_IROTH);
}

/* inode->lock held (read). */
static void count_pages(struct tierfs *fs, struct inode *inode, struct file_pages *f)
{
	struct tier_backend *b = fs->data.backend;
	uint64_t index = 0, entry;

	f->size = inode->size;
	while (pagemap_next(&inode->pages, &index, PAGEMAP_MAX_INDEX, &entry)) {
		switch (pagemap_kind(entry)) {
		case PAGEMAP_KIND_RESIDENT:
			f->nr_resident++;
			break;
		case PAGEMAP_KIND_FILLED:
			/* Fallocated and never written holds nothing: not shown. */
			f->nr_filled += !pagemap_is_unwritten(entry);
			break;
		case PAGEMAP_KIND_SWAPPED: {
			unsigned int t =
				b && b->ops->tier_of ? b->ops->tier_of(b, pagemap_slot(entry)) : 0;

			f->nr_swapped[t < BACKEND_MAX_TIERS ? t : BACKEND_MAX_TIERS - 1]++;
			break;
		}
		case PAGEMAP_KIND_HOLE:
			break;
		}
		if (index == PAGEMAP_MAX_INDEX)
			break;
		index++;
	}
}

int ctl_files(struct tierfs *fs, const char *args, uid_t peer_uid, char *buf, size_t size)
{
	struct backend_tier_stats tiers[BACKEND_MAX_TIERS];
	struct tier_backend *b = fs->data.backend;
	struct file_pages *files;
	unsigned int nr = 0, nr_tiers = b ? 1 : 0;
	size_t len = 0;

	files = calloc(CTL_FILES_MAX, sizeof(*files));
	if (!files) {
		snprintf(buf, size, "error: files: out of memory\n");
		return -ENOMEM;
	}
	for (const char *p = args; *p;) {
		char *end;
		unsigned long long ino = strtoull(p, &end, 10);

		if (end == p || (*end && *end != ' ') || nr == CTL_FILES_MAX) {
			free(files);
			snprintf(buf, size, "error: files: want up to %d inode numbers\n",
				 CTL_FILES_MAX);
			return -EINVAL;
		}
		files[nr] = (struct file_pages){ .ino = ino, .order = nr };
		nr++;
		p = *end ? end + 1 : end;
	}
	/* One pass over every inode, the asked-for ones found by bisection. */
	qsort(files, nr, sizeof(*files), by_ino);
	pthread_rwlock_rdlock(&fs->ns.lock);
	for (struct inode *inode = fs->ns.all; inode; inode = inode->all_next) {
		struct file_pages key = { .ino = inode->ino }, *f;

		if (!S_ISREG(inode->mode) || !may_see(inode, peer_uid))
			continue;
		f = bsearch(&key, files, nr, sizeof(*files), by_ino);
		if (!f || f->is_found)
			continue;
		f->is_found = true;
		pthread_rwlock_rdlock(&inode->lock);
		count_pages(fs, inode, f);
		pthread_rwlock_unlock(&inode->lock);
	}
	pthread_rwlock_unlock(&fs->ns.lock);
	qsort(files, nr, sizeof(*files), by_order);

	ctl_put(buf, size, &len, "ok\ncache %s\ntiers", options_cache_name(fs->opts.cache));
	if (b && b->ops->get_tiers)
		nr_tiers = b->ops->get_tiers(b, tiers, BACKEND_MAX_TIERS);
	for (unsigned int t = 0; t < nr_tiers; t++)
		ctl_put(buf, size, &len, " %s",
			b->ops->get_tiers ? tiers[t].name : fs->opts.backend->name);
	ctl_put(buf, size, &len, "\n");
	for (unsigned int i = 0; i < nr; i++) {
		const struct file_pages *f = &files[i];

		if (!f->is_found) {
			ctl_put(buf, size, &len, "%" PRIu64 " -\n", f->ino);
			continue;
		}
		ctl_put(buf, size, &len, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, f->ino,
			f->size, f->nr_resident, f->nr_filled);
		for (unsigned int t = 0; t < nr_tiers; t++)
			ctl_put(buf, size, &len, " %" PRIu64, f->nr_swapped[t]);
		ctl_put(buf, size, &len, "\n");
	}
	free(files);
	return 0;
}
