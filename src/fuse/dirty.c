// SPDX-License-Identifier: MIT
/*
 * The writeback cache's bound (cache=always).  The kernel keeps a FUSE
 * mount's dirty pages under a per-bdi limit: strict_limit=1, max_ratio=1,
 * about 47 MiB on the test machines.  Random 4 KiB writes then reach tierfs
 * one page a request as soon as the limit is hit, and ran at 0.4-0.6x of
 * tmpfs; with the limit in bytes and tied to the budget they ran at tmpfs
 * speed until the bound filled.  The dirty pages are in the kernel's page
 * cache (charged to the writer's cgroup), not in the daemon, so the bound
 * is a share of the budget: an eighth of it.  Setting it needs root.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "tierfs/budget.h"
#include "tierfs/tierfs.h"
#include "tierfs/log.h"
#include "tierfs/pagemap.h"

#define DIRTY_MIN_BYTES (16ULL << 20)
#define DIRTY_BUDGET_SHIFT 3

static int write_attr(dev_t dev, const char *attr, uint64_t value)
{
	char path[96];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/%s", major(dev), minor(dev), attr);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	if (fprintf(f, "%" PRIu64 "\n", value) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

uint64_t dirty_bound(struct tierfs *fs)
{
	uint64_t budget = atomic_load(&fs->data.budget.mem_pages) << PAGE_SHIFT;
	uint64_t bound = budget >> DIRTY_BUDGET_SHIFT;

	return bound > DIRTY_MIN_BYTES ? bound : DIRTY_MIN_BYTES;
}

void dirty_tune(struct tierfs *fs, dev_t dev)
{
	struct dirty_stats *st = &fs->dirty;
	uint64_t bound;
	int ret;

	if (fs->opts.cache != CACHE_ALWAYS)
		return;
	st->dev = dev;
	bound = dirty_bound(fs);
	/* strict_limit first: with it the bdi is held to its own bound. */
	ret = write_attr(dev, "strict_limit", 1);
	if (!ret)
		ret = write_attr(dev, "max_bytes", bound);
	if (ret) {
		snprintf(st->why, sizeof(st->why), "the kernel's (setting the bdi's limit: %s)",
			 strerror(-ret));
		atomic_store(&st->reason, st->why);
		atomic_store(&st->max_bytes, 0);
		log_msg(LOG_WARNING, "cache=always: dirty data bounded by %s", st->why);
		return;
	}
	atomic_store(&st->reason, NULL);
	atomic_store(&st->max_bytes, bound);
	log_msg(LOG_INFO, "cache=always: at most %" PRIu64 " MiB dirty in the kernel (bdi %u:%u)",
		bound >> 20, major(dev), minor(dev));
}
