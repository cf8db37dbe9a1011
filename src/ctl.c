// SPDX-License-Identifier: MIT
/*
 * Control channel: the requests, the stats rendered through jansson, the
 * server that answers them and the client that finds the daemon of a
 * mount.  Replies are built in memory first, so a slow or vanished client
 * never holds a lock of the filesystem.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/cgroup.h"
#include "tierfs/clock.h"
#include "tierfs/codec.h"
#include "tierfs/ctl.h"
#include "tierfs/drain.h"
#include "tierfs/fs.h"
#include "tierfs/log.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"

/* What the server let in and turned away, shown in the stats. */
struct ctl_counters {
	atomic_uint_fast64_t nr_connections;	/* accepted and served */
	atomic_uint_fast64_t nr_refused_total;	/* CTL_CONN_MAX open already */
	atomic_uint_fast64_t nr_refused_uid;	/* CTL_CONN_PER_UID of that uid open */
	atomic_uint_fast64_t nr_timed_out;	/* no request line, or reply not read, in time */
	atomic_uint_fast64_t nr_malformed;	/* too long, incomplete, or holding a NUL */
	atomic_uint_fast64_t nr_queue_full;	/* CTL_QUEUE_MAX changes waiting already */
};


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
	uint64_t limit = budget_limit(&fs->data), mem_cap, limit_cap;
	const char *mem;
	size_t len;

	budget_get_caps(&fs->data, &mem_cap, &limit_cap);
	mem = mem_cap ? (fs->opts.mem ? "mem=" : "MemAvailable/2") : NULL;
	if (!limit)
		return mem ? mem : "none";
	len = (size_t)snprintf(buf, size, "%s%s", mem ? mem : "", mem ? " and " : "");
	if (len >= size)
		return buf;
	if (limit == limit_cap) {
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

static int collect_stats(struct tierfs *fs, struct ctl_counters *cc, struct stat_item *it)
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
	STR(NULL, "backends_built", backend_names);
	STR(NULL, "compressors_built", codec_names);
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
		ITEM("backend", "decrypt_errors", bs.nr_decrypt_errors, UNIT_COUNT);
		ITEM("backend", "meta_bytes", bs.meta_bytes, UNIT_BYTES);
		ITEM("backend", "fallback_buffered", bs.nr_fallback_buffered, UNIT_COUNT);
		ITEM("backend", "fallback_sparse", bs.nr_fallback_sparse, UNIT_COUNT);
		ITEM("backend", "reject_full", bs.nr_reject_full, UNIT_COUNT);
		ITEM("backend", "reject_alloc", bs.nr_reject_alloc, UNIT_COUNT);
		if (ds->backend->ops->is_compressed) {
			ITEM("backend", "reject_raw", bs.nr_reject_raw, UNIT_COUNT);
			ITEM("backend", "compression_ratio",
			     bs.pool_bytes ? bs.stored_bytes * 1000 / bs.pool_bytes : 0,
			     UNIT_RATIO);
		}
		if (bs.nr_shards) {
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
	if (cc) {
		ITEM("control", "connections", atomic_load(&cc->nr_connections), UNIT_COUNT);
		ITEM("control", "refused_total", atomic_load(&cc->nr_refused_total), UNIT_COUNT);
		ITEM("control", "refused_uid", atomic_load(&cc->nr_refused_uid), UNIT_COUNT);
		ITEM("control", "timed_out", atomic_load(&cc->nr_timed_out), UNIT_COUNT);
		ITEM("control", "malformed", atomic_load(&cc->nr_malformed), UNIT_COUNT);
		ITEM("control", "queue_full", atomic_load(&cc->nr_queue_full), UNIT_COUNT);
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

/*
 * s with control bytes and backslashes as \ooo, so that a cgroup named with
 * a newline cannot make lines of its own in the text stats.
 */
static const char *printable(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (; *s && n + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\')
			n += (size_t)snprintf(out + n, size - n, "\\%03o", c);
		else
			out[n++] = (char)c;
	}
	out[n] = '\0';
	return out;
}

static void tenant_text(const struct lru_lists *ls, const char *path, const char *source,
			char *buf, size_t size, size_t *len)
{
	uint64_t limit = atomic_load(&ls->limit_pages) * PAGE_SIZE;
	char r[32], w[32], l[32], p[4 * PATH_MAX], src[4 * PATH_MAX];

	format_bytes(atomic_load(&ls->nr_resident) * PAGE_SIZE, r, sizeof(r));
	format_bytes(atomic_load(&ls->nr_swapped) * PAGE_SIZE, w, sizeof(w));
	format_bytes(limit, l, sizeof(l));
	put(buf, size, len, "  %-30s resident %s, swapped %s, limit %s (%s)\n",
	    printable(path, p, sizeof(p)), r, w, limit ? l : "none",
	    printable(source, src, sizeof(src)));
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
	uint64_t mem, limit, size_bytes = fs->opts.size, nr_inodes = fs->opts.nr_inodes;
	enum readahead_policy policy = (enum readahead_policy)atomic_load(&ds->ra.policy);
	uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	char copy[CTL_REQUEST_MAX], *save = NULL, *pair, *cgroup = NULL;
	char msg[256], warnings[512] = "";
	size_t warnings_len = 0;
	bool has_mem = false, has_budget = false, has_limits = false, has_other = false;
	int nr = 0, ret;

	budget_get_caps(ds, &mem, &limit);
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
		if (ds->backend && budget_set(ds, mem, limit) > 0)
			reclaim_kick(ds);
		fs->opts.mem = mem;
		fs->opts.memlimit = limit;
	}
	atomic_store(&ds->ra.policy, (int)policy);
	fs->opts.readahead = policy;
	log_msg(LOG_INFO,
		"%s: size=%" PRIu64 " nr_inodes=%" PRIu64 " mem=%" PRIu64 " memlimit=%" PRIu64
		" readahead=%s",
		verb, fs->opts.size, fs->opts.nr_inodes, mem, limit, readahead_name(policy));
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
		ret = drain_start(&fs->drain, msg, sizeof(msg));
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

static struct log_ratelimit refused_log, conn_log;

/* A change asked for by someone else: refused, and logged (at a limited rate). */
static int refuse(uid_t peer_uid, const char *verb, char *buf, size_t size)
{
	log_limited(&refused_log, LOG_NOTICE, "control: %s refused to uid %u", verb,
		    (unsigned int)peer_uid);
	snprintf(buf, size, "error: %s: permission denied (root or the user who mounted)\n", verb);
	return -EPERM;
}

/* ctl_handle(), with the server's counters in the stats when cc is set. */
static int handle(struct tierfs *fs, struct ctl_counters *cc, const char *request,
		  uid_t peer_uid, char *buf, size_t size)
{
	struct stat_item items[NR_STAT_ITEMS];
	size_t len = 0;
	int n;

	if (!strcmp(request, "stats") || !strcmp(request, "stats json")) {
		n = collect_stats(fs, cc, items);
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
		if (!may_change(peer_uid))
			return refuse(peer_uid, "set", buf, size);
		return handle_set(fs, "set", request + 3, buf, size);
	}
	if (!strncmp(request, "remount ", 8)) {
		if (!may_change(peer_uid))
			return refuse(peer_uid, "remount", buf, size);
		return handle_remount(fs, request + 8, buf, size);
	}
	if (!strncmp(request, "drain", 5) && (request[5] == ' ' || !request[5])) {
		if (strcmp(request, "drain status") && !may_change(peer_uid))
			return refuse(peer_uid, "drain", buf, size);
		return handle_drain(fs, request[5] ? request + 6 : "", buf, size);
	}
	if (!strncmp(request, "reclaim ", 8)) {
		uint64_t bytes = UINT64_MAX, freed;

		if (!may_change(peer_uid))
			return refuse(peer_uid, "reclaim", buf, size);
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

int ctl_handle(struct tierfs *fs, const char *request, uid_t peer_uid, char *buf, size_t size)
{
	return handle(fs, NULL, request, peer_uid, buf, size);
}

/*
 * The server: one thread polls every connection, so a client that sends
 * slowly or not at all holds nothing but its own slot, and stop is one
 * wake-up away.  Reads (stats, drain status) are answered on that thread;
 * changes go one at a time to a worker, so a long reclaim delays neither
 * the reads nor the loop, and two sets never interleave.
 *
 * Locking: lock protects queue, nr_queued and is_stopping.  A connection
 * whose state is CONN_QUEUED belongs to the worker until it stores
 * CONN_WRITING; every other state belongs to the loop.  Nothing is done
 * under lock but moving pointers.
 */
enum conn_state { CONN_READING, CONN_QUEUED, CONN_WRITING };

struct ctl_conn {
	int fd;
	uid_t uid;			/* SO_PEERCRED of the client */
	atomic_int state;		/* enum conn_state */
	uint64_t deadline_ms;		/* to send the line, then to read the reply */
	size_t len;			/* of req */
	char req[CTL_REQUEST_MAX + 1];
	char *reply;			/* CTL_REPLY_MAX, NUL-terminated */
	size_t reply_len, reply_off;
};

struct ctl_server {
	struct tierfs *fs;
	int listen_fd;
	int wake_fd;			/* eventfd: stop, or the worker is done */
	pthread_t loop, worker;
	atomic_bool stop;
	struct ctl_conn *conns[CTL_CONN_MAX]; /* the loop's alone */
	unsigned int nr_conns;
	pthread_mutex_t lock;
	pthread_cond_t queued;		/* signalled with lock held */
	struct ctl_conn *queue[CTL_QUEUE_MAX];
	unsigned int nr_queued;
	bool is_stopping;
	struct ctl_counters counters;
	char name[108];			/* the abstract name, without its NUL */
};

static void wake(int fd)
{
	uint64_t one = 1;

	/* A full counter is a wake-up already pending. */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

static void conn_free(struct ctl_conn *c)
{
	close(c->fd);
	free(c->reply);
	free(c);
}

/* Whose connections count against CTL_CONN_PER_UID: all but the trusted. */
static bool is_capped(uid_t uid)
{
	return uid != 0 && uid != geteuid();
}

/* The reply is ready: the loop sends it, with a fresh deadline. */
static void conn_reply_ready(struct ctl_conn *c)
{
	c->reply_len = strlen(c->reply);
	c->reply_off = 0;
	c->deadline_ms = clock_now_ms() + CTL_IO_TIMEOUT_MS;
	atomic_store(&c->state, CONN_WRITING);
}

static bool is_read_request(const char *req)
{
	return !strcmp(req, "stats") || !strcmp(req, "stats json") || !strcmp(req, "drain status");
}

/* A whole line (or its absence) is in: answer it here or hand it on. */
static void conn_dispatch(struct ctl_server *srv, struct ctl_conn *c, bool is_eof)
{
	char *newline = memchr(c->req, '\n', c->len);
	bool is_queued = false;

	c->reply = malloc(CTL_REPLY_MAX);
	if (!c->reply) {
		c->reply = strdup("error: out of memory\n");
		if (!c->reply) {
			c->len = 0;
			return; /* the deadline closes it */
		}
		goto ready;
	}
	if (!newline || memchr(c->req, '\0', (size_t)(newline - c->req))) {
		atomic_fetch_add(&srv->counters.nr_malformed, 1);
		snprintf(c->reply, CTL_REPLY_MAX, "error: %s\n",
			 newline ? "request holds a NUL byte" :
			 is_eof	 ? "request incomplete (no newline)" :
				   "request too long");
		goto ready;
	}
	*newline = '\0';
	if (is_read_request(c->req)) {
		handle(srv->fs, &srv->counters, c->req, c->uid, c->reply, CTL_REPLY_MAX);
		goto ready;
	}
	pthread_mutex_lock(&srv->lock);
	if (srv->nr_queued < CTL_QUEUE_MAX) {
		atomic_store(&c->state, CONN_QUEUED);
		srv->queue[srv->nr_queued++] = c;
		pthread_cond_signal(&srv->queued);
		is_queued = true;
	}
	pthread_mutex_unlock(&srv->lock);
	if (is_queued)
		return;
	atomic_fetch_add(&srv->counters.nr_queue_full, 1);
	snprintf(c->reply, CTL_REPLY_MAX, "error: busy: %d changes waiting already\n",
		 CTL_QUEUE_MAX);
ready:
	conn_reply_ready(c);
}

/* Returns false when the connection is done with. */
static bool conn_read(struct ctl_server *srv, struct ctl_conn *c)
{
	ssize_t n = read(c->fd, c->req + c->len, CTL_REQUEST_MAX - c->len);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->len += (size_t)n;
	if (n && c->len < CTL_REQUEST_MAX && !memchr(c->req + c->len - (size_t)n, '\n', (size_t)n))
		return true;
	c->req[c->len] = '\0';
	if (!n && !c->len)
		return false; /* connected and went: nothing to answer */
	conn_dispatch(srv, c, !n);
	return c->reply != NULL;
}

static bool conn_write(struct ctl_conn *c)
{
	ssize_t n = send(c->fd, c->reply + c->reply_off, c->reply_len - c->reply_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->reply_off += (size_t)n;
	return c->reply_off < c->reply_len;
}

static void accept_all(struct ctl_server *srv, uint64_t *paused_until)
{
	for (;;) {
		struct ucred cred;
		socklen_t cred_len = sizeof(cred);
		struct ctl_conn *c;
		unsigned int nr_same = 0;
		int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			/* Out of descriptors: leave the backlog be for a while, or spin. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
				*paused_until = clock_now_ms() + 100;
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len))
			cred.uid = (uid_t)-1; /* unknown: may read, not change */
		for (unsigned int i = 0; i < srv->nr_conns; i++)
			nr_same += srv->conns[i]->uid == cred.uid;
		if (srv->nr_conns == CTL_CONN_MAX ||
		    (is_capped(cred.uid) && nr_same >= CTL_CONN_PER_UID)) {
			atomic_fetch_add(srv->nr_conns == CTL_CONN_MAX ?
						 &srv->counters.nr_refused_total :
						 &srv->counters.nr_refused_uid,
					 1);
			log_limited(&conn_log, LOG_NOTICE,
				    "control: connection of uid %u refused: %s", (unsigned int)cred.uid,
				    srv->nr_conns == CTL_CONN_MAX ? "too many in all" :
								    "too many of that uid");
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = cred.uid;
		c->deadline_ms = clock_now_ms() + CTL_IO_TIMEOUT_MS;
		atomic_store(&c->state, CONN_READING);
		srv->conns[srv->nr_conns++] = c;
		atomic_fetch_add(&srv->counters.nr_connections, 1);
	}
}

static void *serve_loop(void *arg)
{
	struct ctl_server *srv = arg;
	struct pollfd pfd[CTL_CONN_MAX + 2];
	struct ctl_conn *polled[CTL_CONN_MAX];
	uint64_t paused_until = 0;

	while (!atomic_load(&srv->stop)) {
		uint64_t now = clock_now_ms(), next = now + 60 * 1000;
		unsigned int nr = 0, nr_fds;

		/* Past their deadline go; the rest are polled. */
		for (unsigned int i = 0; i < srv->nr_conns;) {
			struct ctl_conn *c = srv->conns[i];
			int state = atomic_load(&c->state);

			if (state != CONN_QUEUED && now >= c->deadline_ms) {
				atomic_fetch_add(&srv->counters.nr_timed_out, 1);
				conn_free(c);
				srv->conns[i] = srv->conns[--srv->nr_conns];
				continue;
			}
			if (state != CONN_QUEUED) {
				if (c->deadline_ms < next)
					next = c->deadline_ms;
				pfd[2 + nr] = (struct pollfd){
					.fd = c->fd,
					.events = state == CONN_READING ? POLLIN : POLLOUT,
				};
				polled[nr++] = c;
			}
			i++;
		}
		pfd[0] = (struct pollfd){ .fd = srv->wake_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = now >= paused_until ? srv->listen_fd : -1,
					  .events = POLLIN };
		if (now < paused_until && paused_until < next)
			next = paused_until;
		nr_fds = 2 + nr;
		if (poll(pfd, nr_fds, (int)(next - now)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents) {
			uint64_t v;

			if (read(srv->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		}
		for (unsigned int i = 0; i < nr; i++) {
			struct ctl_conn *c = polled[i];
			bool is_live = true;

			if (!pfd[2 + i].revents)
				continue;
			if (atomic_load(&c->state) == CONN_READING)
				is_live = conn_read(srv, c);
			else
				is_live = conn_write(c);
			if (is_live)
				continue;
			for (unsigned int j = 0; j < srv->nr_conns; j++) {
				if (srv->conns[j] == c) {
					srv->conns[j] = srv->conns[--srv->nr_conns];
					break;
				}
			}
			conn_free(c);
		}
		/* After the connections, so that a new one is not polled stale. */
		if (pfd[1].revents)
			accept_all(srv, &paused_until);
	}
	return NULL;
}

static void *serve_changes(void *arg)
{
	struct ctl_server *srv = arg;

	pthread_mutex_lock(&srv->lock);
	for (;;) {
		struct ctl_conn *c;

		while (!srv->nr_queued && !srv->is_stopping)
			pthread_cond_wait(&srv->queued, &srv->lock);
		if (srv->is_stopping)
			break;
		c = srv->queue[0];
		memmove(srv->queue, srv->queue + 1, --srv->nr_queued * sizeof(srv->queue[0]));
		pthread_mutex_unlock(&srv->lock);
		handle(srv->fs, &srv->counters, c->req, c->uid, c->reply, CTL_REPLY_MAX);
		conn_reply_ready(c);
		wake(srv->wake_fd);
		pthread_mutex_lock(&srv->lock);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/*
 * Bind "tierfs/MAJ:MIN/PID/TOKEN": anyone may bind any abstract name, so
 * the name only has to be found, not trusted (tierctl checks who listens).
 * The random token makes it unguessable; a name taken anyway costs one
 * more draw, never a wait.
 */
static int bind_name(struct ctl_server *srv, dev_t dev)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int err = -EADDRINUSE;

	for (int i = 0; i < 8 && err == -EADDRINUSE; i++) {
		uint64_t token;
		int len;

		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			return -errno;
		len = snprintf(srv->name, sizeof(srv->name), "%s%u:%u/%d/%016" PRIx64,
			       CTL_NAME_PREFIX, major(dev), minor(dev), (int)getpid(), token);
		memcpy(sun.sun_path + 1, srv->name, (size_t)len);
		err = bind(srv->listen_fd, (struct sockaddr *)&sun,
			   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) ?
			      -errno :
			      0;
	}
	return err;
}

int ctl_server_start(struct tierfs *fs, dev_t dev, struct ctl_server **out)
{
	struct ctl_server *srv = calloc(1, sizeof(*srv));
	int err;

	if (!srv)
		return -ENOMEM;
	srv->fs = fs;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->queued, NULL);
	srv->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->listen_fd < 0) {
		err = -errno;
		goto free_srv;
	}
	srv->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv->wake_fd < 0) {
		err = -errno;
		goto close_listen;
	}
	err = bind_name(srv, dev);
	if (err)
		goto close_wake;
	if (listen(srv->listen_fd, 128)) {
		err = -errno;
		goto close_wake;
	}
	err = -pthread_create(&srv->worker, NULL, serve_changes, srv);
	if (err)
		goto close_wake;
	err = -pthread_create(&srv->loop, NULL, serve_loop, srv);
	if (err)
		goto stop_worker;
	*out = srv;
	return 0;

stop_worker:
	pthread_mutex_lock(&srv->lock);
	srv->is_stopping = true;
	pthread_cond_signal(&srv->queued);
	pthread_mutex_unlock(&srv->lock);
	pthread_join(srv->worker, NULL);
close_wake:
	close(srv->wake_fd);
close_listen:
	close(srv->listen_fd);
free_srv:
	pthread_cond_destroy(&srv->queued);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
	return err;
}

const char *ctl_server_name(const struct ctl_server *srv)
{
	return srv->name;
}

void ctl_server_stop(struct ctl_server *srv)
{
	atomic_store(&srv->stop, true);
	wake(srv->wake_fd);
	pthread_join(srv->loop, NULL);
	/* The name goes now, so a new mount's tierctl never finds this one. */
	close(srv->listen_fd);
	pthread_mutex_lock(&srv->lock);
	srv->is_stopping = true;
	pthread_cond_signal(&srv->queued);
	pthread_mutex_unlock(&srv->lock);
	/* A change under way finishes: it may hold the filesystem's locks. */
	pthread_join(srv->worker, NULL);
	for (unsigned int i = 0; i < srv->nr_conns; i++)
		conn_free(srv->conns[i]);
	close(srv->wake_fd);
	pthread_cond_destroy(&srv->queued);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

/* Whether mountpoint is path or a directory above it. */
static size_t covers(const char *mountpoint, const char *path)
{
	size_t len = strlen(mountpoint);

	if (!strcmp(mountpoint, "/"))
		return 1;
	if (strncmp(mountpoint, path, len) || (path[len] && path[len] != '/'))
		return 0;
	return len + 1;
}

/*
 * The mount that holds path, from /proc/self/mountinfo, which only the
 * kernel writes: the longest mount point above it, the last (on top) of
 * equals.  With is_exact, only a mount at path itself.
 */
static int find_mount(const char *path, bool is_exact, struct ctl_mount *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], where[4096], fstype[256];
	unsigned int maj, min;
	size_t best = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - "), *uid;
		size_t score;

		if (!sep || sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, where) != 3 ||
		    sscanf(sep, " - %255s", fstype) != 1)
			continue;
		cgroup_mountinfo_unescape(where);
		score = is_exact ? (strcmp(where, path) ? 0 : 1) : covers(where, path);
		if (!score || score < best)
			continue;
		best = score;
		m->dev = makedev(maj, min);
		m->is_tierfs = !strcmp(fstype, "fuse.tierfs") || !strcmp(fstype, "fuseblk.tierfs");
		uid = strstr(sep, ",user_id=");
		if (!uid)
			uid = strstr(sep, " user_id=");
		m->owner = uid ? (uid_t)strtoul(uid + 9, NULL, 10) : 0;
	}
	fclose(f);
	return best ? 0 : -ENOENT;
}

/*
 * Without touching path itself where it can: a mount point whose daemon
 * is stopped hangs every stat of it, and tierctl must tell that apart.
 * So the parent is resolved and the name appended; only a path that is no
 * mount point is resolved whole.
 */
int ctl_find_mount(const char *path, struct ctl_mount *m)
{
	char copy[PATH_MAX], parent[PATH_MAX], full[PATH_MAX];
	char *slash, *base;
	int len;

	if (strlen(path) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, path);
	for (len = (int)strlen(copy); len > 1 && copy[len - 1] == '/'; len--)
		copy[len - 1] = '\0';
	slash = strrchr(copy, '/');
	base = slash ? slash + 1 : copy;
	if (slash == copy)
		strcpy(parent, "/");
	else if (slash)
		*slash = '\0';
	if (*base && strcmp(base, ".") && strcmp(base, "..") &&
	    realpath(slash == copy ? "/" : slash ? copy : ".", parent)) {
		len = snprintf(full, sizeof(full), "%s%s%s", parent, strcmp(parent, "/") ? "/" : "",
			       base);
		if (len < (int)sizeof(full) && !find_mount(full, true, m))
			return 0;
	}
	if (!realpath(path, full))
		return -errno;
	return find_mount(full, false, m);
}

int ctl_mount_dev(const char *mountpoint, dev_t *dev)
{
	struct ctl_mount m;
	int ret = find_mount(mountpoint, true, &m);

	if (!ret)
		*dev = m.dev;
	return ret;
}

/* The names bound under "tierfs/MAJ:MIN/", from /proc/net/unix, into *out. */
static int list_candidates(dev_t dev, char (**out)[108], unsigned int *nr)
{
	FILE *f = fopen("/proc/net/unix", "re");
	char line[512], prefix[64], (*names)[108] = NULL;
	unsigned int cap = 0;
	int len;

	*nr = 0;
	if (!f)
		return -errno;
	len = snprintf(prefix, sizeof(prefix), "@%s%u:%u/", CTL_NAME_PREFIX, major(dev), minor(dev));
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '@');

		if (!name || strncmp(name, prefix, (size_t)len))
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strlen(name + 1) >= sizeof(names[0]))
			continue;
		if (*nr == cap) {
			void *grown = realloc(names, (cap = cap ? cap * 2 : 8) * sizeof(names[0]));

			if (!grown)
				break;
			names = grown;
		}
		strcpy(names[(*nr)++], name + 1);
	}
	fclose(f);
	*out = names;
	return 0;
}

/* Whether process pid holds /dev/fuse open; true where tierctl may not look. */
static bool holds_fuse(pid_t pid)
{
	char dir[64], link[PATH_MAX + 64], target[64];
	struct dirent *d;
	bool is_found = false;
	DIR *fds;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	fds = opendir(dir);
	if (!fds)
		return errno == EACCES || errno == EPERM;
	while (!is_found && (d = readdir(fds))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			is_found = !strcmp(target, "/dev/fuse");
		}
	}
	closedir(fds);
	return is_found;
}

/*
 * Connect to name and check who listens: root or the mount's owner (only
 * they can run the daemon of this mount), the very process the name says,
 * and, where tierctl may look, one that holds /dev/fuse.  Returns the
 * socket, -EAGAIN if the listener's backlog is full (a stopped daemon),
 * or -EPERM for an impostor.
 */
static int connect_verified(const char *name, const struct ctl_mount *m)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	const char *pid_text = strrchr(name, ':');
	long pid;
	int fd, err;

	pid_text = pid_text ? strchr(pid_text, '/') : NULL;
	if (!pid_text)
		return -EPERM;
	pid = strtol(pid_text + 1, NULL, 10);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(sun.sun_path + 1, name, len);
	if (connect(fd, (struct sockaddr *)&sun,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len))) {
		err = -errno;
		goto close_fd;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len)) {
		err = -errno;
		goto close_fd;
	}
	err = -EPERM;
	if ((cred.uid != 0 && cred.uid != m->owner) || cred.pid != pid || !holds_fuse(cred.pid))
		goto close_fd;
	return fd;

close_fd:
	close(fd);
	return err;
}

/* Wait for events on fd until deadline; -ETIMEDOUT past it. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	uint64_t now;
	int n;

	for (;;) {
		now = clock_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, (int)(deadline - now));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n < 0)
			return -EINTR;
	}
}

/* One exchange on a verified socket; the raw reply to buf. */
static int exchange(int fd, const char *request, uint64_t deadline, char *buf, size_t size)
{
	size_t req_len = strlen(request), off = 0, len = 0;
	ssize_t n;
	int err;

	while (off <= req_len) {
		const char *p = off < req_len ? request + off : "\n";
		size_t todo = off < req_len ? req_len - off : 1;

		n = send(fd, p, todo, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN) {
			err = wait_fd(fd, POLLOUT, deadline);
			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	for (;;) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EAGAIN) {
			err = wait_fd(fd, POLLIN, deadline);
			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return errno == ECONNRESET ? 0 : -errno;
		if (!n || (len += (size_t)n) + 1 >= size)
			break;
	}
	buf[len] = '\0';
	return 0;
}

/* Drop the status line: "ok", or keep the text after "error: ". */
static int strip_status(char *buf)
{
	size_t len = strlen(buf), skip;

	if (!strncmp(buf, "ok\n", 3)) {
		memmove(buf, buf + 3, len - 2);
		return 0;
	}
	skip = strncmp(buf, "error: ", 7) ? 0 : 7;
	len = strcspn(buf, "\n");
	memmove(buf, buf + skip, len - skip);
	buf[len - skip] = '\0';
	return -EPROTO;
}

int ctl_request_timeout(const char *path, const char *request, int timeout_ms, char *buf,
			size_t size)
{
	uint64_t deadline = clock_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1);
	char(*names)[108] = NULL;
	struct ctl_mount m;
	unsigned int nr, nr_seen = 0;
	int err, fd = -EPERM;

	buf[0] = '\0';
	err = ctl_find_mount(path, &m);
	if (err)
		return err;
	if (!m.is_tierfs)
		return -ENOTCONN;
	/* A stopped daemon's backlog fills: try it again until the deadline. */
	do {
		bool is_busy = false;

		nr_seen = 0;
		free(names);
		err = list_candidates(m.dev, &names, &nr);
		if (err)
			return err;
		for (unsigned int i = 0; i < nr && fd < 0; i++) {
			fd = connect_verified(names[i], &m);
			is_busy |= fd == -EAGAIN;
			nr_seen += fd != -EPERM && fd != -ECONNREFUSED;
		}
		if (fd >= 0 || !is_busy)
			break;
		poll(NULL, 0, 20);
	} while (clock_now_ms() < deadline);
	free(names);
	/* A tierfs mount, but no daemon of its own listens, or it is stuck. */
	if (fd < 0)
		return nr_seen ? -ETIMEDOUT : -ECONNREFUSED;
	err = exchange(fd, request, deadline, buf, size);
	close(fd);
	if (err)
		return err == -EINTR ? -EINTR : err;
	return strip_status(buf);
}

int ctl_request(const char *path, const char *request, char *buf, size_t size)
{
	return ctl_request_timeout(path, request, CTL_TIMEOUT_MS, buf, size);
}
