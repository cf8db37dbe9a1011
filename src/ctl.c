// SPDX-License-Identifier: MIT
/*
 * Control channel: an abstract Unix socket per mount, served by one thread.
 * Replies are built in memory first, so a slow or vanished client never
 * holds a lock of the filesystem.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/ctl.h"
#include "tierfs/drain.h"
#include "tierfs/fs.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"

struct ctl_server {
	struct tierfs *fs;
	int fd;
	pthread_t thread;
	atomic_bool stop;
};

static socklen_t ctl_address(dev_t dev, struct sockaddr_un *sun)
{
	int len;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	/* Abstract: a leading NUL, no file to clean up after a crash. */
	len = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "tierfs/%u:%u", major(dev),
		       minor(dev));
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
}

enum stat_unit { UNIT_COUNT, UNIT_BYTES, UNIT_RATIO, UNIT_STRING };

struct stat_item {
	const char *group; /* NULL at top level */
	const char *key;
	uint64_t value; /* UNIT_RATIO: thousandths */
	enum stat_unit unit;
	const char *str; /* UNIT_STRING */
};

#define NR_STAT_ITEMS 96

/* The window histogram's keys, one per bucket of readahead.h. */
static const char *const window_keys[READAHEAD_NR_BUCKETS] = {
	"windows_1", "windows_2", "windows_4", "windows_8", "windows_16", "windows_32",
};

/* Where the budget and the limit in force come from, for the stats. */
static const char *mem_source(struct tierfs *fs, char *buf, size_t size)
{
	uint64_t limit = budget_limit(&fs->data);
	const char *mem = fs->data.mem_cap_pages ? (fs->opts.mem ? "mem=" : "MemAvailable/2") :
						   NULL;
	size_t len;

	if (!limit)
		return mem ? mem : "none";
	len = (size_t)snprintf(buf, size, "%s%s", mem ? mem : "", mem ? " and " : "");
	if (len >= size)
		return buf;
	if (limit == fs->data.limit_bytes) {
		snprintf(buf + len, size - len, "memlimit=");
	} else if (limit == fs->fallback_limit && !fs->memcg.limit) {
		snprintf(buf + len, size - len, "MemAvailable at mount");
	} else {
		pthread_mutex_lock(&fs->memcg.lock);
		snprintf(buf + len, size - len, "cgroup %s", fs->memcg.source);
		pthread_mutex_unlock(&fs->memcg.lock);
	}
	return buf;
}

static int collect_stats(struct tierfs *fs, struct stat_item *it)
{
	struct data_space *ds = &fs->data;
	struct swap_counters *sw = &ds->swap;
	struct fs_counters *c = &fs->counters;
	struct pagepool_stats ps;
	struct budget_footprint fp;
	struct backend_stats bs;
	uint64_t nr_free;
	int n = 0;

	/* Strings outlive the call: render() runs after it returns. */
	static _Thread_local char source[PATH_MAX + 8];

	pagepool_get_stats(ds->pool, &ps);
	budget_footprint(ds, &fp);
	memset(&bs, 0, sizeof(bs));
	if (ds->backend)
		ds->backend->ops->get_stats(ds->backend, &bs);
#define ITEM(g, k, v, u) (it[n++] = (struct stat_item){ g, k, v, u, NULL })
#define STR(g, k, s) (it[n++] = (struct stat_item){ g, k, 0, UNIT_STRING, s })
	ITEM(NULL, "size_bytes", ds->max_pages * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "data_bytes", atomic_load(&ds->nr_pages) * PAGE_SIZE, UNIT_BYTES);
	nr_free = budget_nr_free_pages(ds);
	ITEM(NULL, "free_bytes", nr_free == UINT64_MAX ? 0 : nr_free * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "fallocated_bytes", atomic_load(&ds->nr_unwritten) * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "mem_budget_bytes", ds->mem_pages * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "mem_limit_bytes", budget_limit(ds), UNIT_BYTES);
	STR(NULL, "mem_source", mem_source(fs, source, sizeof(source)));
	ITEM(NULL, "resident_bytes", ps.nr_in_use * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "footprint_bytes", fp.total, UNIT_BYTES);
	ITEM(NULL, "same_filled_pages", atomic_load(&ds->nr_filled), UNIT_COUNT);
	ITEM(NULL, "inodes", atomic_load(&fs->ns.nr_inodes), UNIT_COUNT);
	ITEM(NULL, "max_inodes", atomic_load(&fs->ns.max_inodes), UNIT_COUNT);
	ITEM("pool", "reserved_bytes", ps.nr_pages_max * PAGE_SIZE, UNIT_BYTES);
	ITEM("pool", "backed_bytes", ps.nr_backed * PAGE_SIZE, UNIT_BYTES);
	ITEM("pool", "ready_bytes", ps.nr_ready * PAGE_SIZE, UNIT_BYTES);
	ITEM("pool", "slow_allocs", ps.nr_slow_allocs, UNIT_COUNT);
	ITEM("pool", "trimmed_pages", ps.nr_trimmed, UNIT_COUNT);
	ITEM("pool", "alloc_failures", ps.nr_alloc_failures, UNIT_COUNT);
	if (ds->backend) {
		STR("backend", "name", ds->backend->ops->name);
		ITEM("backend", "stored_pages", bs.stored_pages, UNIT_COUNT);
		ITEM("backend", "stored_bytes", bs.stored_bytes, UNIT_BYTES);
		ITEM("backend", "pool_bytes", bs.pool_bytes, UNIT_BYTES);
		ITEM("backend", "capacity_bytes", bs.capacity_bytes, UNIT_BYTES);
		ITEM("backend", "stores", bs.nr_stores, UNIT_COUNT);
		ITEM("backend", "loads", bs.nr_loads, UNIT_COUNT);
		ITEM("backend", "frees", bs.nr_frees, UNIT_COUNT);
		ITEM("backend", "store_errors", bs.nr_store_errors, UNIT_COUNT);
		ITEM("backend", "load_errors", bs.nr_load_errors, UNIT_COUNT);
		ITEM("backend", "reject_full", bs.nr_reject_full, UNIT_COUNT);
		ITEM("backend", "reject_alloc", bs.nr_reject_alloc, UNIT_COUNT);
		if (!strcmp(ds->backend->ops->name, "zpool")) {
			ITEM("backend", "reject_raw", bs.nr_reject_raw, UNIT_COUNT);
			ITEM("backend", "compression_ratio",
			     bs.pool_bytes ? bs.stored_bytes * 1000 / bs.pool_bytes : 0,
			     UNIT_RATIO);
			ITEM("backend", "shards", bs.nr_shards, UNIT_COUNT);
			ITEM("backend", "lock_contended", bs.nr_lock_contended, UNIT_COUNT);
			ITEM("backend", "max_shard_lock_contended", bs.max_shard_contended,
			     UNIT_COUNT);
		}
		ITEM("reclaim", "evicted", atomic_load(&sw->nr_evicted), UNIT_COUNT);
		ITEM("reclaim", "clean_dropped", atomic_load(&sw->nr_clean_dropped), UNIT_COUNT);
		ITEM("reclaim", "filled_evicted", atomic_load(&sw->nr_filled_evicted), UNIT_COUNT);
		ITEM("reclaim", "swapins", atomic_load(&sw->nr_swapins), UNIT_COUNT);
		ITEM("reclaim", "swapin_errors", atomic_load(&sw->nr_swapin_errors), UNIT_COUNT);
		ITEM("reclaim", "store_failures", atomic_load(&sw->nr_store_failures), UNIT_COUNT);
		ITEM("reclaim", "direct_reclaims", atomic_load(&sw->nr_direct_reclaims),
		     UNIT_COUNT);
		ITEM("reclaim", "budget_enospc", atomic_load(&sw->nr_budget_enospc), UNIT_COUNT);
		ITEM("reclaim", "budget_exceeded", atomic_load(&sw->nr_budget_exceeded),
		     UNIT_COUNT);
		ITEM("reclaim", "limit_rejects", atomic_load(&sw->nr_limit_rejects), UNIT_COUNT);
		ITEM("reclaim", "capacity_enospc", atomic_load(&sw->nr_capacity_enospc),
		     UNIT_COUNT);
		ITEM("reclaim", "copies_freed", atomic_load(&sw->nr_copies_freed), UNIT_COUNT);
		STR("reclaim", "pressure_source",
		    fs->memcg.pressure.fd >= 0 ? fs->memcg.pressure.describe : "none");
		ITEM("reclaim", "pressure_events", atomic_load(&fs->memcg.nr_pressure_events),
		     UNIT_COUNT);
		ITEM("reclaim", "limit_changes", atomic_load(&fs->memcg.nr_limit_changes),
		     UNIT_COUNT);
		ITEM("reclaim", "inactive_pages", lru_nr_listed(&ds->lru, LRU_INACTIVE),
		     UNIT_COUNT);
		ITEM("reclaim", "active_pages", lru_nr_listed(&ds->lru, LRU_ACTIVE), UNIT_COUNT);
		STR("readahead", "policy",
		    readahead_name(readahead_effective(&ds->ra, ds->backend)));
		STR("readahead", "policy_set", readahead_name(atomic_load(&ds->ra.policy)));
		ITEM("readahead", "hits", atomic_load(&ds->ra.nr_hits), UNIT_COUNT);
		ITEM("readahead", "misses", atomic_load(&ds->ra.nr_misses), UNIT_COUNT);
		ITEM("readahead", "pages_read_ahead", atomic_load(&ds->ra.nr_pages), UNIT_COUNT);
		ITEM("readahead", "window", atomic_load(&ds->ra.window), UNIT_COUNT);
		for (int b = 0; b < READAHEAD_NR_BUCKETS; b++)
			ITEM("readahead", window_keys[b], atomic_load(&ds->ra.hist[b]), UNIT_COUNT);
	} else {
		STR("backend", "name", "none");
	}
	ITEM("requests", "reads", atomic_load(&c->nr_reads), UNIT_COUNT);
	ITEM("requests", "writes", atomic_load(&c->nr_writes), UNIT_COUNT);
	ITEM("requests", "bytes_read", atomic_load(&c->bytes_read), UNIT_BYTES);
	ITEM("requests", "bytes_written", atomic_load(&c->bytes_written), UNIT_BYTES);
	ITEM("requests", "enospc", atomic_load(&c->nr_enospc), UNIT_COUNT);
#undef ITEM
#undef STR
	return n;
}

/* Append to buf at *len, never past size; a full buffer truncates quietly. */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n < size - *len ? (size_t)n : size - *len - 1;
}

static void format_bytes(uint64_t v, char *out, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v;
	unsigned int u = 0;

	while (d >= 1024 && u < 5)
		d /= 1024, u++;
	if (u)
		snprintf(out, size, "%.1f %s", d, units[u]);
	else
		snprintf(out, size, "%" PRIu64 " B", v);
}

static void render_text(const struct stat_item *it, int n, char *buf, size_t size, size_t *len)
{
	const char *group = NULL;
	char human[32];

	for (int i = 0; i < n; i++) {
		const char *indent = it[i].group ? "  " : "";

		if (it[i].group && (!group || strcmp(group, it[i].group)))
			put(buf, size, len, "%s:\n", it[i].group);
		group = it[i].group;
		if (it[i].unit == UNIT_BYTES) {
			format_bytes(it[i].value, human, sizeof(human));
			put(buf, size, len, "%s%-20s %s\n", indent, it[i].key, human);
		} else if (it[i].unit == UNIT_STRING) {
			put(buf, size, len, "%s%-20s %s\n", indent, it[i].key, it[i].str);
		} else if (it[i].unit == UNIT_RATIO) {
			put(buf, size, len, "%s%-20s %" PRIu64 ".%02" PRIu64 "\n", indent,
			    it[i].key, it[i].value / 1000, it[i].value % 1000 / 10);
		} else {
			put(buf, size, len, "%s%-20s %" PRIu64 "\n", indent, it[i].key,
			    it[i].value);
		}
	}
}

/* jansson's integers are signed: a count past INT64_MAX shows as INT64_MAX. */
static json_t *json_u64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/*
 * A string as JSON text, whatever bytes it holds: jansson takes UTF-8
 * only, and a cgroup name may be any bytes, so others become '?'.
 */
static json_t *json_text(const char *s)
{
	json_t *v = json_string(s);
	char *copy;

	if (v)
		return v;
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

/* Steals value; a NULL value (out of memory) leaves the key out. */
static int json_put(json_t *obj, const char *key, json_t *value)
{
	return value ? json_object_set_new(obj, key, value) : -1;
}

static json_t *stats_json(const struct stat_item *it, int n)
{
	json_t *root = json_object(), *group = NULL;
	const char *group_name = NULL;

	if (!root)
		return NULL;
	for (int i = 0; i < n; i++) {
		json_t *obj = root, *value;

		if (it[i].group) {
			if (!group_name || strcmp(group_name, it[i].group)) {
				group = json_object();
				if (json_put(root, it[i].group, group))
					goto free_root;
				group_name = it[i].group;
			}
			obj = group;
		}
		if (it[i].unit == UNIT_STRING)
			value = json_text(it[i].str);
		else if (it[i].unit == UNIT_RATIO)
			value = json_real((double)it[i].value / 1000);
		else
			value = json_u64(it[i].value);
		if (json_put(obj, it[i].key, value))
			goto free_root;
	}
	return root;

free_root:
	json_decref(root);
	return NULL;
}

static json_t *tenant_json(const struct lru_lists *ls, const char *path, const char *source)
{
	return json_pack("{s:o?,s:o?,s:o?,s:o?,s:o?}", "path", json_text(path), "resident_bytes",
			 json_u64(atomic_load(&ls->nr_resident) * PAGE_SIZE), "swapped_bytes",
			 json_u64(atomic_load(&ls->nr_swapped) * PAGE_SIZE), "limit_bytes",
			 json_u64(atomic_load(&ls->limit_pages) * PAGE_SIZE), "source",
			 json_text(source));
}

static void tenant_text(const struct lru_lists *ls, const char *path, const char *source,
			char *buf, size_t size, size_t *len)
{
	uint64_t limit = atomic_load(&ls->limit_pages) * PAGE_SIZE;
	char r[32], w[32], l[32];

	format_bytes(atomic_load(&ls->nr_resident) * PAGE_SIZE, r, sizeof(r));
	format_bytes(atomic_load(&ls->nr_swapped) * PAGE_SIZE, w, sizeof(w));
	format_bytes(limit, l, sizeof(l));
	put(buf, size, len, "  %-30s resident %s, swapped %s, limit %s (%s)\n", path, r, w,
	    limit ? l : "none", source);
}

/* One line or object per tenant, the root lists first; into cgroups if JSON. */
static void render_tenants(struct tierfs *fs, json_t *cgroups, char *buf, size_t size,
			   size_t *len)
{
	struct tenants *t = &fs->tenants;
	const char *root_source = "root: files of no tenant";

	if (cgroups)
		json_array_append_new(cgroups, tenant_json(&fs->data.lru.root, "/", root_source));
	else
		tenant_text(&fs->data.lru.root, "/", root_source, buf, size, len);
	pthread_mutex_lock(&t->lock);
	for (unsigned int i = 0; i < t->nr; i++) {
		struct tenant *tn = t->all[i];

		if (cgroups)
			json_array_append_new(cgroups,
					      tenant_json(&tn->lists, tn->path, tn->source));
		else
			tenant_text(&tn->lists, tn->path, tn->source, buf, size, len);
	}
	pthread_mutex_unlock(&t->lock);
}

/*
 * "stats json": built as a jansson tree, so every key and string is
 * escaped whatever a cgroup is named; -ENOMEM if it could not be built.
 */
static int render_json(struct tierfs *fs, const struct stat_item *it, int n, char *buf,
		       size_t size, size_t *len)
{
	json_t *root = stats_json(it, n), *cgroups = NULL;
	char *text;

	if (root && fs->data.backend) {
		cgroups = json_array();
		if (json_put(root, "cgroups", cgroups))
			goto free_root;
		render_tenants(fs, cgroups, NULL, 0, NULL);
	}
	text = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	if (!text)
		goto free_root;
	put(buf, size, len, "%s\n", text);
	free(text);
	json_decref(root);
	return 0;

free_root:
	json_decref(root);
	*len = 0;
	put(buf, size, len, "error: stats: out of memory\n");
	return -ENOMEM;
}

/*
 * Changes are for root and the user who mounted, whom the daemon runs as
 * (fusermount3 mounts for its caller).  Not the root directory's uid=:
 * that hands out a directory, as on tmpfs, not the daemon's budget; in a
 * container set-up the container user owns the root but must not lift
 * mem= or memlimit=.
 */
static bool may_change(uid_t peer_uid)
{
	return peer_uid == 0 || peer_uid == geteuid();
}

/*
 * Whether size= (bytes) or nr_inodes= can become v on the running mount.
 * As on tmpfs, whose remount fails with EINVAL "Too small size for current
 * use", not below what is in use.
 */
static int check_limit(struct tierfs *fs, const char *key, const char *val, uint64_t v, char *msg,
		       size_t msg_len)
{
	uint64_t pages = v / PAGE_SIZE + !!(v % PAGE_SIZE), used;
	char text[32];

	if (!strcmp(key, "nr_inodes")) {
		used = atomic_load(&fs->ns.nr_inodes);
		if (v && v < used) {
			snprintf(msg, msg_len,
				 "invalid nr_inodes= value '%s': too few for current use (%" PRIu64
				 " inodes)",
				 val, used);
			return -EINVAL;
		}
		return 0;
	}
	used = atomic_load(&fs->data.nr_pages);
	if (pages && pages < used) {
		options_format_size(used << PAGE_SHIFT, text, sizeof(text));
		snprintf(msg, msg_len,
			 "invalid size= value '%s': too small for current use (%" PRIu64
			 " pages, %s)",
			 val, used, text);
		return -EINVAL;
	}
	return 0;
}

/*
 * The new limits, checked by check_limit().  Writes and creates read them
 * without a lock: one in flight may still pass the old limit.
 */
static void set_limits(struct tierfs *fs, uint64_t size_bytes, uint64_t nr_inodes)
{
	fs->data.max_pages = size_bytes / PAGE_SIZE + !!(size_bytes % PAGE_SIZE);
	fs->opts.size = size_bytes;
	atomic_store(&fs->ns.max_inodes, nr_inodes);
	fs->opts.nr_inodes = nr_inodes;
}

/*
 * "set KEY=VALUE...", and what a remount changes (verb names it in the
 * messages): every pair checked before any is applied.
 */
static int handle_set(struct tierfs *fs, const char *verb, const char *args, char *buf, size_t size)
{
	struct data_space *ds = &fs->data;
	uint64_t mem = ds->mem_cap_pages << PAGE_SHIFT, limit = ds->limit_bytes;
	uint64_t size_bytes = fs->opts.size, nr_inodes = fs->opts.nr_inodes;
	enum readahead_policy policy = (enum readahead_policy)atomic_load(&ds->ra.policy);
	uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	char copy[CTL_REQUEST_MAX], *save = NULL, *pair, *cgroup = NULL;
	char msg[256], warnings[512] = "";
	size_t warnings_len = 0;
	bool has_mem = false, has_budget = false, has_limits = false, has_other = false;
	int nr = 0, ret;

	snprintf(copy, sizeof(copy), "%s", args);
	for (pair = strtok_r(copy, " ", &save); pair; pair = strtok_r(NULL, " ", &save), nr++) {
		char *val = strchr(pair, '=');

		if (!val || val == pair) {
			snprintf(buf, size, "error: %s: want KEY=VALUE, got '%.64s'\n", verb, pair);
			return -EINVAL;
		}
		*val++ = '\0';
		if (!strcmp(pair, "size") || !strcmp(pair, "nr_inodes")) {
			uint64_t *v = !strcmp(pair, "size") ? &size_bytes : &nr_inodes;

			ret = options_parse_amount(pair, val, ram, v, msg, sizeof(msg));
			if (!ret)
				ret = check_limit(fs, pair, val, *v, msg, sizeof(msg));
			if (ret) {
				snprintf(buf, size, "error: %s: %s\n", verb, msg);
				return ret;
			}
			has_limits = has_other = true;
		} else if (!strcmp(pair, "mem") || !strcmp(pair, "memlimit")) {
			/* The check of mount and remount; memlimit=0 is none. */
			ret = options_parse_amount(pair, val, ram,
						   !strcmp(pair, "mem") ? &mem : &limit, msg,
						   sizeof(msg));
			if (ret < 0) {
				snprintf(buf, size, "error: %s: %s\n", verb, msg);
				return ret;
			}
			if (ret)
				put(warnings, sizeof(warnings), &warnings_len, "warning: %s\n",
				    msg);
			if (!strcmp(pair, "mem"))
				has_mem = true;
			else
				has_other = true;
			has_budget = true;
		} else if (!strcmp(pair, "readahead")) {
			if (readahead_parse(val, &policy))
				goto bad_value;
			has_other = true;
		} else if (!strcmp(pair, "cgroup")) {
			if (val[0] != '/' || strlen(val) >= PATH_MAX)
				goto bad_value;
			cgroup = val;
		} else {
			snprintf(buf, size, "error: %s: unknown key '%.64s'\n", verb, pair);
			return -EINVAL;
		}
		continue;
bad_value:
		snprintf(buf, size, "error: %s: invalid %.16s= value '%.64s'\n", verb, pair, val);
		return -EINVAL;
	}
	if (!nr && strcmp(verb, "remount")) {
		snprintf(buf, size,
			 "error: %s: want KEY=VALUE (size, nr_inodes, mem, memlimit, readahead, "
			 "cgroup)\n",
			 verb);
		return -EINVAL;
	}
	if (cgroup) {
		/* A tenant's share: mem=, or without it back to cg_share=. */
		if (has_other || !ds->backend) {
			snprintf(buf, size,
				 "error: %s: cgroup= takes mem= only, on a mount with a backend\n",
				 verb);
			return -EINVAL;
		}
		ret = tenants_set_share(&fs->tenants, &ds->lru, cgroup, has_mem ? mem : 0);
		if (ret) {
			snprintf(buf, size, "error: %s: no room for another cgroup\n", verb);
			return ret;
		}
		snprintf(buf, size, "ok\n%scgroup=%s\nmem=%" PRIu64 "\n", warnings, cgroup,
			 has_mem ? mem : 0);
		return 0;
	}
	if (has_budget && !mem && !limit) {
		snprintf(buf, size, "error: %s: mem= and memlimit= cannot both be none\n", verb);
		return -EINVAL;
	}
	if (has_limits)
		set_limits(fs, size_bytes, nr_inodes);
	if (has_budget) {
		if (ds->backend)
			budget_set(ds, mem, limit);
		fs->opts.mem = mem;
		fs->opts.memlimit = limit;
	}
	atomic_store(&ds->ra.policy, (int)policy);
	fs->opts.readahead = policy;
	snprintf(buf, size,
		 "ok\n%ssize=%" PRIu64 "\nnr_inodes=%" PRIu64 "\nmem=%" PRIu64 "\nmemlimit=%" PRIu64
		 "\nreadahead=%s\n",
		 warnings, fs->opts.size, fs->opts.nr_inodes, mem, limit, readahead_name(policy));
	return 0;
}

/* "remount LIST": mount(8)'s whole option list; what changes goes through set. */
static int handle_remount(struct tierfs *fs, const char *list, char *buf, size_t size)
{
	uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	char pairs[CTL_REQUEST_MAX], msg[256];
	int ret;

	ret = options_remount(&fs->opts, list, ram, pairs, sizeof(pairs), msg, sizeof(msg));
	if (ret) {
		snprintf(buf, size, "error: remount: %s\n", msg);
		return ret;
	}
	return handle_set(fs, "remount", pairs, buf, size);
}

static int handle_drain(struct tierfs *fs, const char *arg, char *buf, size_t size)
{
	struct drain_status st;
	char msg[256] = "";
	int ret;

	if (!strcmp(arg, "start")) {
		ret = drain_start(fs, msg, sizeof(msg));
		if (ret < 0) {
			snprintf(buf, size, "error: %s\n", msg);
			return ret;
		}
		snprintf(buf, size, "ok\n%s\n", ret ? "running" : "started");
	} else if (!strcmp(arg, "stop")) {
		snprintf(buf, size, "ok\n%s\n", drain_stop(&fs->drain) ? "stopping" : "idle");
	} else if (!strcmp(arg, "status")) {
		drain_get_status(&fs->drain, &st);
		snprintf(buf, size,
			 "ok\nstate %s\npages_done %" PRIu64 "\npages_total %" PRIu64
			 "\nbytes_per_sec %" PRIu64 "\nelapsed_ms %" PRIu64 "\nhits %" PRIu64
			 "\n%s%s%s",
			 drain_state_name(st.state), st.nr_done, st.nr_total, st.bytes_per_sec,
			 st.elapsed_ms, st.nr_hits, st.error[0] ? "error " : "", st.error,
			 st.error[0] ? "\n" : "");
	} else {
		snprintf(buf, size, "error: drain: want start, status or stop\n");
		return -EINVAL;
	}
	return 0;
}

int ctl_handle(struct tierfs *fs, const char *request, uid_t peer_uid, char *buf, size_t size)
{
	struct stat_item items[NR_STAT_ITEMS];
	size_t len = 0;
	int n;

	if (!strcmp(request, "stats") || !strcmp(request, "stats json")) {
		n = collect_stats(fs, items);
		put(buf, size, &len, "ok\n");
		if (!strcmp(request, "stats json"))
			return render_json(fs, items, n, buf, size, &len);
		render_text(items, n, buf, size, &len);
		if (fs->data.backend) {
			put(buf, size, &len, "cgroups:\n");
			render_tenants(fs, NULL, buf, size, &len);
		}
		return 0;
	}
	if (!strncmp(request, "set", 3) && (request[3] == ' ' || !request[3])) {
		if (!may_change(peer_uid)) {
			snprintf(buf, size,
				 "error: set: permission denied (root or the user who mounted)\n");
			return -EPERM;
		}
		return handle_set(fs, "set", request + 3, buf, size);
	}
	if (!strncmp(request, "remount ", 8)) {
		if (!may_change(peer_uid)) {
			snprintf(buf, size,
				 "error: remount: permission denied (root or the user who mounted)\n");
			return -EPERM;
		}
		return handle_remount(fs, request + 8, buf, size);
	}
	if (!strncmp(request, "drain", 5) && (request[5] == ' ' || !request[5])) {
		if (strcmp(request, "drain status") && !may_change(peer_uid)) {
			snprintf(buf, size,
				 "error: drain: permission denied (root or the user who mounted)\n");
			return -EPERM;
		}
		return handle_drain(fs, request[5] ? request + 6 : "", buf, size);
	}
	if (!strncmp(request, "reclaim ", 8)) {
		uint64_t bytes = UINT64_MAX, freed;

		if (!may_change(peer_uid)) {
			snprintf(buf, size,
				 "error: reclaim: permission denied (root or the user who mounted)\n");
			return -EPERM;
		}
		if (!fs->data.backend) {
			snprintf(buf, size, "error: reclaim: this mount has no backend\n");
			return -EINVAL;
		}
		if (strcmp(request + 8, "all") && options_parse_size(request + 8, 0, &bytes)) {
			snprintf(buf, size,
				 "error: reclaim: want bytes with a " OPTIONS_SUFFIXES
				 " suffix, or 'all'\n");
			return -EINVAL;
		}
		freed = reclaim_pages(&fs->data, bytes == UINT64_MAX ?
							 UINT64_MAX :
							 (bytes + PAGE_SIZE - 1) >> PAGE_SHIFT);
		snprintf(buf, size, "ok\nreclaimed %" PRIu64 " bytes\n", freed << PAGE_SHIFT);
		return 0;
	}
	snprintf(buf, size, "error: unknown request '%.64s'\n", request);
	return -EINVAL;
}

static void serve_one(struct ctl_server *srv, int fd)
{
	struct timeval tv = { .tv_sec = 2 };
	char req[CTL_REQUEST_MAX + 1];
	char *reply = malloc(CTL_REPLY_MAX), *newline;
	size_t len = 0;
	ssize_t n;

	if (!reply)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < CTL_REQUEST_MAX && !memchr(req, '\n', len)) {
		n = read(fd, req + len, CTL_REQUEST_MAX - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	req[len] = '\0';
	newline = memchr(req, '\n', len);
	if (!newline) {
		snprintf(reply, CTL_REPLY_MAX, "error: request too long or incomplete\n");
	} else if (memchr(req, '\0', (size_t)(newline - req))) {
		snprintf(reply, CTL_REPLY_MAX, "error: request holds a NUL byte\n");
	} else {
		struct ucred cred;
		socklen_t cred_len = sizeof(cred);

		*newline = '\0';
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len))
			cred.uid = (uid_t)-1; /* unknown: may read, not change */
		ctl_handle(srv->fs, req, cred.uid, reply, CTL_REPLY_MAX);
	}
	for (size_t off = 0, total = strlen(reply); off < total; off += (size_t)n) {
		n = send(fd, reply + off, total - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
	}
	free(reply);
}

static void *serve(void *arg)
{
	struct ctl_server *srv = arg;

	while (!atomic_load(&srv->stop)) {
		int fd = accept4(srv->fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* shut down */
		}
		serve_one(srv, fd);
		close(fd);
	}
	return NULL;
}

int ctl_server_start(struct tierfs *fs, dev_t dev, struct ctl_server **out)
{
	struct ctl_server *srv = calloc(1, sizeof(*srv));
	struct sockaddr_un sun;
	socklen_t sun_len = ctl_address(dev, &sun);
	int err;

	if (!srv)
		return -ENOMEM;
	srv->fs = fs;
	srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (srv->fd < 0) {
		err = -errno;
		goto free_srv;
	}
	/*
	 * A device number is reused as soon as a mount goes, while the daemon
	 * that served it may still be shutting down with the name bound.
	 */
	for (int i = 0; bind(srv->fd, (struct sockaddr *)&sun, sun_len); i++) {
		if (errno != EADDRINUSE || i == 50) {
			err = -errno;
			goto close_fd;
		}
		usleep(100 * 1000);
	}
	if (listen(srv->fd, 16)) {
		err = -errno;
		goto close_fd;
	}
	err = -pthread_create(&srv->thread, NULL, serve, srv);
	if (err)
		goto close_fd;
	*out = srv;
	return 0;

close_fd:
	close(srv->fd);
free_srv:
	free(srv);
	return err;
}

void ctl_server_stop(struct ctl_server *srv)
{
	atomic_store(&srv->stop, true);
	shutdown(srv->fd, SHUT_RDWR);
	pthread_join(srv->thread, NULL);
	close(srv->fd);
	free(srv);
}

int ctl_request(const char *path, const char *request, char *buf, size_t size)
{
	struct sockaddr_un sun;
	socklen_t sun_len;
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	if (stat(path, &st))
		return -errno;
	sun_len = ctl_address(st.st_dev, &sun);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sun_len)) {
		err = errno == ECONNREFUSED || errno == ENOENT ? -ENOTCONN : -errno;
		goto close_fd;
	}
	if (dprintf(fd, "%s\n", request) < 0) {
		err = -errno;
		goto close_fd;
	}
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	/* Drop the status line: "ok", or keep the text after "error: ". */
	if (!strncmp(buf, "ok\n", 3)) {
		memmove(buf, buf + 3, len - 2);
	} else {
		size_t skip = strncmp(buf, "error: ", 7) ? 0 : 7;

		len = strcspn(buf, "\n");
		memmove(buf, buf + skip, len - skip);
		buf[len - skip] = '\0';
		err = -EPROTO;
	}
close_fd:
	close(fd);
	return err;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

int ctl_mount_dev(const char *mountpoint, dev_t *dev)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], where[4096];
	unsigned int maj, min;
	bool found = false;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, where) != 3)
			continue;
		unescape(where);
		if (!strcmp(where, mountpoint) && strstr(line, " - fuse")) {
			*dev = makedev(maj, min); /* the last one is on top */
			found = true;
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}
