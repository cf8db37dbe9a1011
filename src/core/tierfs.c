// SPDX-License-Identifier: MIT
/*
 * The composition root of a tierfs: builds its mechanisms in order (the
 * cgroup watch, the page pool, the data space with its swap tier, the
 * namespace, the drain, the tenants) and takes them apart in reverse.  The
 * daemon, the faulty test daemon and the control tests build one only
 * through here.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/data.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "tierfs/space.h"
#include "tierfs/tierfs.h"

/* MemAvailable from /proc/meminfo, in bytes; 0 when unknown. */
static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

#define fail(...) (snprintf(err, err_len, __VA_ARGS__), -EINVAL)

/*
 * The swap file's capacity: swapsize=, an existing file's size, or what
 * size= needs beyond the resident budget; checked against the free space of
 * the filesystem that holds it (a default is cut to fit, with a warning).
 * Returns bytes, or -errno with a message naming the option and the path.
 */
static int64_t swap_file_capacity(const struct tierfs_options *opts, const char *path,
				  uint64_t mem_bytes, char *err, size_t err_len)
{
	const struct tier_backend_ops *file = backend_find("file");
	char dir[PATH_MAX], spec[2 * PATH_MAX + 32];
	struct statvfs sv;
	struct stat st;
	uint64_t want = opts->swapsize, avail;
	char why[PATH_MAX + 64];

	snprintf(dir, sizeof(dir), "%s", path);
	options_backend_spec(opts, spec, sizeof(spec));
	/* Before anything is taken from what is there: others may have made it. */
	if (!file)
		return fail("backend=%s: the file backend is not built in", spec);
	if (file->check_path(path, &st, why, sizeof(why)))
		return fail("backend=%s: %s", spec, why);
	if (!want && S_ISREG(st.st_mode))
		want = (uint64_t)st.st_size;
	if (!S_ISDIR(st.st_mode)) {
		const char *parent = dirname(dir); /* may point into dir, or be "." */

		memmove(dir, parent, strlen(parent) + 1);
	}
	if (statvfs(dir, &sv))
		return fail("backend=%s: directory %s: %s", spec, dir, strerror(errno));
	if (!want)
		want = opts->size > mem_bytes ? opts->size - mem_bytes : 2 * mem_bytes;
	want = (want + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (want <= avail)
		return (int64_t)want;
	if (opts->swapsize)
		return fail("swapsize=%llu MiB does not fit on the filesystem of %s: %llu MiB free",
			    (unsigned long long)(want >> 20), dir,
			    (unsigned long long)(avail >> 20));
	/* A default: take what is free, less a sixteenth for everyone else. */
	want = (avail - avail / 16) & ~(uint64_t)(PAGE_SIZE - 1);
	if (want < (1ULL << 20))
		return fail("backend=%s: %llu MiB free on %s, too little for a swap file", spec,
			    (unsigned long long)(avail >> 20), dir);
	return (int64_t)want;
}

static int init_swap(struct data_space *ds, const struct tierfs_options *opts, uint64_t ram,
		     uint64_t memlimit, bool has_cgroup_limit, char *err, size_t err_len)
{
	bool is_redis = opts->lower && !strcmp(opts->lower->name, "redis");
	bool is_file = opts->lower && !is_redis;
	struct backend_config cfg = {
		.codec = opts->codec,
		.codec_level = opts->codec_level,
		/* redis: the seeds after "redis://" */
		.path = is_redis ? opts->swap_path + 2 : opts->swap_path,
		.is_plaintext = !opts->is_encrypted,
		.lower = opts->lower,
		.redis_auth_path = opts->redis_auth[0] ? opts->redis_auth : NULL,
		.redis_timeout_ms = opts->redis_timeout_ms,
		.redis_ttl_s = opts->redis_ttl_s,
		.redis_wait = opts->redis_wait,
	};
	struct tier_backend *backend;
	uint64_t mem = opts->mem;
	char spec[2 * PATH_MAX + 32];
	int ret;

	/* With neither mem=, memlimit= nor a cgroup limit: half of what is free now. */
	if (!mem && !memlimit && !has_cgroup_limit)
		mem = mem_available() / 2 ? mem_available() / 2 : ram / 4;
	budget_set(ds, mem, memlimit);
	budget_set_pool_max(ds, opts->pool_max_bytes, opts->pool_max_pct, opts->is_pool_max_pct);
	if (!opts->backend)
		return 0;
	/* Slots for all of size= (or of RAM); a RAM pool's memory is bounded by the limit. */
	cfg.capacity_bytes = opts->swapsize ? opts->swapsize : opts->size ? opts->size : ram;
	/* Whole pages, as size= counts them: size=1 holds one page, as on tmpfs. */
	cfg.capacity_bytes = (cfg.capacity_bytes + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
	if (opts->upper) {
		/* A chain: swapsize= is the file's; its RAM tier gets slots for size=. */
		cfg.upper = opts->upper;
		cfg.upper_capacity_bytes = opts->size ? opts->size : ram;
		cfg.pool_max_bytes = budget_pool_max(ds);
	}
	if (is_file || opts->spill_path[0]) {
		int64_t cap = swap_file_capacity(opts, is_file ? opts->swap_path : opts->spill_path,
						 atomic_load(&ds->budget.mem_pages) << PAGE_SHIFT,
						 err, err_len);

		if (cap < 0)
			return (int)cap;
		if (is_file) {
			cfg.capacity_bytes = (uint64_t)cap;
		} else {
			/* redis then the file: swapsize= is the file's, redis has slots for size=. */
			cfg.capacity_bytes = opts->size ? opts->size : ram;
			cfg.spill_path = opts->spill_path;
			cfg.spill_capacity_bytes = (uint64_t)cap;
		}
	}
	ret = opts->backend->create(&cfg, &backend);
	if (ret) {
		options_backend_spec(opts, spec, sizeof(spec));
		if (is_redis && opts->spill_path[0])
			return fail("backend=%s: cannot set up redis (see the log) or create the "
				    "swap file %s (%llu MiB): %s",
				    spec, opts->spill_path,
				    (unsigned long long)(cfg.spill_capacity_bytes >> 20),
				    strerror(-ret));
		if (is_redis)
			return fail("backend=%s: %s", spec,
				    ret == -EPERM || ret == -EINVAL || ret == -ENOENT ?
					    "bad redis_auth= file or seed list (see the log)" :
				    ret == -EIO ? "no server answered" :
						  strerror(-ret));
		if (is_file)
			return fail("backend=%s: cannot create the swap file (%llu MiB): %s", spec,
				    (unsigned long long)(cfg.capacity_bytes >> 20), strerror(-ret));
		return fail("backend=%s: cannot set up %llu MiB of slots: %s", opts->backend->name,
			    (unsigned long long)(cfg.capacity_bytes >> 20), strerror(-ret));
	}
	ret = space_attach_backend(ds, backend);
	if (ret) {
		backend->ops->destroy(backend);
		return fail("cannot allocate the page lists: %s", strerror(-ret));
	}
	return 0;
}

int tierfs_init(struct tierfs *fs, const struct tierfs_options *opts, uint64_t ram, char *err,
		size_t err_len)
{
	uint64_t max_pages, pool_pages, stock_pages, cgroup_limit, env_limit, limit;
	struct pagepool *pool;
	int ret;

	memset(fs, 0, sizeof(*fs));
	fs->opts = *opts;
	atomic_init(&fs->atime, opts->atime);
	atomic_init(&fs->is_nodiratime, opts->is_nodiratime);
	fs->timeout = 86400.0;
	max_pages = (opts->size + PAGE_SIZE - 1) >> PAGE_SHIFT;
	/*
	 * The pool holds resident pages only, never more than RAM: its address
	 * space (reserved, not backed) is RAM's, so size= can grow on remount.
	 */
	pool_pages = ram >> PAGE_SHIFT;
	if (pool_pages > UINT32_MAX)
		pool_pages = UINT32_MAX;
	/*
	 * The daemon's cgroup bounds the footprint whatever mem= and memlimit=
	 * say; a RAM pool with no limit at all is bounded by the memory the
	 * machine has free, so that it never grows into the OOM killer.
	 */
	cgroup_limit = memcg_probe(&fs->memcg);
	fs->is_cgroup_budget = !opts->mem && !opts->memlimit && cgroup_limit;
	if (opts->backend && (opts->backend->is_sync || opts->upper))
		fs->fallback_limit = mem_available() ? mem_available() : ram;
	env_limit = cgroup_limit ? cgroup_limit : fs->fallback_limit;
	limit = opts->memlimit && (!env_limit || opts->memlimit < env_limit) ? opts->memlimit :
									       env_limit;
	/* A stock of 32 MiB, less under a small memory limit or budget. */
	stock_pages = 8192;
	if (limit && stock_pages > (limit >> PAGE_SHIFT) / 16)
		stock_pages = (limit >> PAGE_SHIFT) / 16;
	if (opts->mem && stock_pages > (opts->mem >> PAGE_SHIFT) / 8)
		stock_pages = (opts->mem >> PAGE_SHIFT) / 8;
	ret = pagepool_new(pool_pages, stock_pages, &pool);
	if (ret) {
		snprintf(err, err_len, "size=: cannot reserve %llu MiB of address space: %s",
			 (unsigned long long)(pool_pages >> (20 - PAGE_SHIFT)), strerror(-ret));
		goto stop_memcg;
	}
	space_init(&fs->data, pool, max_pages, opts->readahead, env_limit);
	fs->data.ra.is_page_cache = opts->cache != CACHE_NEVER;
	ret = init_swap(&fs->data, opts, ram, opts->memlimit, cgroup_limit != 0, err, err_len);
	if (ret)
		goto destroy_space;
	/* Before the namespace: its inodes point at the tenants' lists. */
	tenants_init(&fs->tenants, opts->cg_share ? opts->cg_share : 50);
	ret = ns_init(&fs->ns, &fs->data, opts->nr_inodes, opts->mode, opts->uid, opts->gid,
		      opts->is_inode32);
	if (ret) {
		snprintf(err, err_len, "nr_inodes=: cannot set up the namespace: %s",
			 strerror(-ret));
		goto destroy_tenants;
	}
	drain_init(&fs->drain, &fs->ns, &fs->data);
	return 0;

destroy_tenants:
	tenants_destroy(&fs->tenants);
destroy_space:
	space_fini(&fs->data);
stop_memcg:
	memcg_stop(&fs->memcg);
	return ret;
}

bool tierfs_capacity_short(struct tierfs *fs, char *msg, size_t size)
{
	uint64_t free_pages, limit, max = atomic_load(&fs->data.max_pages), pages;

	if (budget_update(&fs->data, true))
		reclaim_kick(&fs->data);
	free_pages = budget_nr_free_pages(&fs->data, NULL);
	pages = atomic_load(&fs->data.nr_pages);
	/* size= full already is size='s doing, not the capacity's. */
	if (!max || pages >= max || free_pages >= max - pages)
		return false;
	limit = budget_limit(&fs->data);
	if (fs->data.backend && fs->data.backend->ops->is_sync && limit)
		snprintf(msg, size,
			 "size=%llu MiB, but a memory limit of %llu MiB holds about %llu MiB "
			 "(more as data compresses): df shows the smaller",
			 (unsigned long long)(max >> (20 - PAGE_SHIFT)),
			 (unsigned long long)(limit >> 20),
			 (unsigned long long)(free_pages >> (20 - PAGE_SHIFT)));
	else
		snprintf(msg, size,
			 "size=%llu MiB, but the resident budget (mem=, memlimit= or the cgroup's "
			 "limit) and the backend (swapsize=) hold %llu MiB: df shows the smaller",
			 (unsigned long long)(max >> (20 - PAGE_SHIFT)),
			 (unsigned long long)(free_pages >> (20 - PAGE_SHIFT)));
	return true;
}

int tierfs_start(struct tierfs *fs)
{
	int err = pagepool_start(fs->data.pool);

	if (!err)
		err = reclaim_start(&fs->data);
	return err ? err : memcg_start(&fs->memcg, &fs->data, fs->fallback_limit);
}

/* The threads first, the last started first; then tierfs_init in reverse. */
void tierfs_destroy(struct tierfs *fs)
{
	memcg_stop(&fs->memcg);
	drain_destroy(&fs->drain);
	reclaim_stop(&fs->data);
	ns_destroy(&fs->ns, data_release_unreachable, &fs->data);
	tenants_destroy(&fs->tenants);
	space_fini(&fs->data);
}
