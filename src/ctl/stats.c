// SPDX-License-Identifier: MIT
/*
 * The stats of a mount, collected once and rendered as aligned text or as
 * JSON through jansson: every string escaped, every key in a fixed order.
 */
#include <assert.h>
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
#include "tierfs/tierfs.h"
#include "tierfs/log.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "ctl_priv.h"

/* stored / pool in thousandths, or RATIO_NONE for an empty pool. */
static uint64_t ratio_of(uint64_t stored, uint64_t pool)
{
	return pool ? stored * 1000 / pool : RATIO_NONE;
}

static const struct ctl_array_group array_groups[] = {
	{ "tier:", "tiers", "tier" },
	{ "node:", "nodes", "node" },
};

const struct ctl_array_group *ctl_array_group_of(const struct stat_item *it)
{
	for (size_t i = 0; it->group && i < sizeof(array_groups) / sizeof(array_groups[0]); i++)
		if (!strncmp(it->group, array_groups[i].prefix, strlen(array_groups[i].prefix)))
			return &array_groups[i];
	return NULL;
}

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

int ctl_collect_stats(struct tierfs *fs, const struct ctl_counters *cc, struct stat_item *it)
{
	struct data_space *ds = &fs->data;
	struct swap_counters *sw = &ds->swap;
	struct fs_counters *c = &fs->counters;
	struct pagepool_stats ps;
	struct budget_footprint fp;
	struct backend_stats bs;
	uint64_t nr_free, nr_used;
	int n = 0;

	/* Strings outlive the call: render() runs after it returns. */
	static _Thread_local char source[PATH_MAX + 8];

	pagepool_get_stats(ds->pool, &ps);
	/* One snapshot: a pool shown is never above the peak shown with it. */
	budget_footprint(ds, &fp, &bs);
#define ITEM(g, k, v, u) \
	(assert(n < NR_STAT_ITEMS), it[n++] = (struct stat_item){ g, k, v, u, NULL })
#define STR(g, k, s) \
	(assert(n < NR_STAT_ITEMS), it[n++] = (struct stat_item){ g, k, 0, UNIT_STRING, s })
	ITEM(NULL, "size_bytes", ds->max_pages * PAGE_SIZE, UNIT_BYTES);
	nr_free = budget_nr_free_pages(ds, &nr_used);
	ITEM(NULL, "data_bytes", nr_used * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "free_bytes", nr_free == UINT64_MAX ? 0 : nr_free * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "fallocated_bytes", atomic_load(&ds->nr_unwritten) * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "mem_budget_bytes", ds->budget.mem_pages * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "mem_limit_bytes", budget_limit(ds), UNIT_BYTES);
	ITEM(NULL, "cgroup_others_bytes", atomic_load(&ds->budget.others_bytes), UNIT_BYTES);
	STR(NULL, "mem_source", mem_source(fs, source, sizeof(source)));
	ITEM(NULL, "resident_bytes", ps.nr_in_use * PAGE_SIZE, UNIT_BYTES);
	ITEM(NULL, "footprint_bytes", fp.total, UNIT_BYTES);
	ITEM(NULL, "footprint_peak_bytes", atomic_load(&ds->budget.peak_footprint_bytes),
	     UNIT_BYTES);
	ITEM(NULL, "same_filled_pages", atomic_load(&ds->nr_filled), UNIT_NUMBER);
	ITEM(NULL, "metadata_bytes", fp.meta, UNIT_BYTES);
	ITEM(NULL, "inodes", atomic_load(&fs->ns.nr_inodes), UNIT_NUMBER);
	ITEM(NULL, "max_inodes", atomic_load(&fs->ns.max_inodes), UNIT_NUMBER);
	ITEM(NULL, "inode_space_bytes", atomic_load(&fs->ns.ispace_used), UNIT_BYTES);
	STR(NULL, "backends_built", backend_names);
	STR(NULL, "compressors_built", codec_names);
	ITEM("pool", "reserved_bytes", ps.nr_pages_max * PAGE_SIZE, UNIT_BYTES);
	ITEM("pool", "backed_bytes", ps.nr_backed * PAGE_SIZE, UNIT_BYTES);
	ITEM("pool", "ready_bytes", ps.nr_ready * PAGE_SIZE, UNIT_BYTES);
	ITEM("pool", "slow_allocs", ps.nr_slow_allocs, UNIT_COUNT);
	ITEM("pool", "trimmed_pages", ps.nr_trimmed, UNIT_COUNT);
	ITEM("pool", "alloc_failures", ps.nr_alloc_failures, UNIT_COUNT);
	if (ds->backend) {
		static _Thread_local char name[32], groups[BACKEND_MAX_TIERS][32];
		/* A chain compresses when its first tier does (zpool, or redis before a file). */
		const struct tier_backend_ops *ram = fs->opts.upper ? fs->opts.upper :
						     fs->opts.lower ? fs->opts.lower :
								      fs->opts.backend;
		struct backend_tier_stats tiers[BACKEND_MAX_TIERS];
		/* Static: the items point into them. */
		static _Thread_local struct backend_node_stats nodes[BACKEND_MAX_NODES];
		static _Thread_local char node_groups[BACKEND_MAX_NODES][8 + sizeof(nodes[0].name)];
		unsigned int nr_tiers = 0, nr_nodes;

		if (ds->backend->ops->get_tiers)
			nr_tiers =
				ds->backend->ops->get_tiers(ds->backend, tiers, BACKEND_MAX_TIERS);
		STR("backend", "name", options_backend_name(&fs->opts, name, sizeof(name)));
		if (ram && ram->is_compressed) {
			STR("backend", "compressor", fs->opts.codec->name);
			ITEM("backend", "compressor_level", (uint64_t)fs->opts.codec_level,
			     UNIT_NUMBER);
		}
		ITEM("backend", "stored_pages", bs.stored_pages, UNIT_NUMBER);
		ITEM("backend", "stored_bytes", bs.stored_bytes, UNIT_BYTES);
		ITEM("backend", "pool_bytes", bs.pool_bytes, UNIT_BYTES);
		ITEM("backend", "pool_peak_bytes", atomic_load(&ds->budget.peak_pool_bytes),
		     UNIT_BYTES);
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
			     ratio_of(bs.stored_bytes, bs.pool_bytes), UNIT_RATIO);
		}
		if (bs.nr_shards) {
			ITEM("backend", "shards", bs.nr_shards, UNIT_NUMBER);
			ITEM("backend", "lock_contended", bs.nr_lock_contended, UNIT_COUNT);
			/* The busiest shard's count: a maximum, not a counter. */
			ITEM("backend", "max_shard_lock_contended", bs.max_shard_contended,
			     UNIT_NUMBER);
		}
		if (nr_tiers)
			ITEM("backend", "writebacks", tiers[0].nr_writebacks, UNIT_COUNT);
		for (unsigned int t = 0; t < nr_tiers; t++) {
			const struct backend_tier_stats *ts = &tiers[t];
			const char *g = groups[t];

			snprintf(groups[t], sizeof(groups[t]), "tier:%s", ts->name);
			STR(g, "name", ts->name);
			ITEM(g, "stored_pages", ts->st.stored_pages, UNIT_NUMBER);
			ITEM(g, "stored_bytes", ts->st.stored_bytes, UNIT_BYTES);
			ITEM(g, "pool_bytes", ts->st.pool_bytes, UNIT_BYTES);
			ITEM(g, "capacity_bytes", ts->st.capacity_bytes, UNIT_BYTES);
			ITEM(g, "loads", ts->st.nr_loads, UNIT_COUNT);
			ITEM(g, "stores", ts->st.nr_stores, UNIT_COUNT);
			ITEM(g, "writebacks", ts->nr_writebacks, UNIT_COUNT);
			ITEM(g, "rejects", ts->nr_rejects, UNIT_COUNT);
			/* auto: direct for a synchronous tier, as readahead_effective_at picks. */
			STR(g, "readahead",
			    readahead_name(ts->is_sync && atomic_load(&ds->ra.policy) ==
								   READAHEAD_AUTO ?
						   READAHEAD_DIRECT :
						   readahead_effective(&ds->ra, ds->backend)));
			/* The RAM tier's bound and writeback; what a tier with a next one sent on. */
			if (ts->is_sync && t + 1 < nr_tiers) {
				ITEM(g, "pool_max_bytes", ts->pool_max_bytes, UNIT_BYTES);
				ITEM(g, "writeback_errors", ts->nr_writeback_errors, UNIT_COUNT);
			}
			if (t + 1 < nr_tiers) {
				ITEM(g, "rejects_huge", ts->nr_rejects_huge, UNIT_COUNT);
				ITEM(g, "rejects_full", ts->nr_rejects_full, UNIT_COUNT);
				ITEM(g, "rejects_error", ts->nr_rejects_error, UNIT_COUNT);
				ITEM(g, "compression_ratio",
				     ratio_of(ts->st.stored_bytes, ts->st.pool_bytes), UNIT_RATIO);
			}
		}
		nr_nodes =
			ds->backend->ops->get_nodes ?
				ds->backend->ops->get_nodes(ds->backend, nodes, BACKEND_MAX_NODES) :
				0;
		for (unsigned int k = 0; k < nr_nodes; k++) {
			const struct backend_node_stats *ns = &nodes[k];
			const char *g = node_groups[k];

			snprintf(node_groups[k], sizeof(node_groups[k]), "node:%.*s",
				 (int)sizeof(ns->name) - 1, ns->name);
			STR(g, "name", ns->name);
			STR(g, "state", ns->is_down ? "down" : ns->is_master ? "master" : "idle");
			ITEM(g, "stored_pages", ns->stored_pages, UNIT_NUMBER);
			ITEM(g, "pool_bytes", ns->stored_bytes, UNIT_BYTES);
			ITEM(g, "round_trips", ns->nr_round_trips, UNIT_COUNT);
			ITEM(g, "commands", ns->nr_commands, UNIT_COUNT);
			ITEM(g, "redirects", ns->nr_redirects, UNIT_COUNT);
			ITEM(g, "errors", ns->nr_errors, UNIT_COUNT);
			ITEM(g, "failovers", ns->nr_failovers, UNIT_COUNT);
			ITEM(g, "latency_p50_us", ns->latency_p50_us, UNIT_NUMBER);
			ITEM(g, "latency_p99_us", ns->latency_p99_us, UNIT_NUMBER);
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
		ITEM("reclaim", "room_waits", atomic_load(&sw->nr_room_waits), UNIT_COUNT);
		ITEM("reclaim", "copies_freed", atomic_load(&sw->nr_copies_freed), UNIT_COUNT);
		STR("reclaim", "pressure_source",
		    fs->memcg.pressure.fd >= 0 ? fs->memcg.pressure.describe : "none");
		ITEM("reclaim", "pressure_events", atomic_load(&fs->memcg.nr_pressure_events),
		     UNIT_COUNT);
		ITEM("reclaim", "limit_changes", atomic_load(&fs->memcg.nr_limit_changes),
		     UNIT_COUNT);
		ITEM("reclaim", "inactive_pages", lru_nr_listed(&ds->lru, LRU_INACTIVE),
		     UNIT_NUMBER);
		ITEM("reclaim", "active_pages", lru_nr_listed(&ds->lru, LRU_ACTIVE), UNIT_NUMBER);
		STR("readahead", "policy",
		    readahead_name(readahead_effective(&ds->ra, ds->backend)));
		STR("readahead", "policy_set", readahead_name(atomic_load(&ds->ra.policy)));
		ITEM("readahead", "hits", atomic_load(&ds->ra.nr_hits), UNIT_COUNT);
		ITEM("readahead", "misses", atomic_load(&ds->ra.nr_misses), UNIT_COUNT);
		ITEM("readahead", "pages_read_ahead", atomic_load(&ds->ra.nr_pages), UNIT_COUNT);
		ITEM("readahead", "window", atomic_load(&ds->ra.window), UNIT_NUMBER);
		for (int b = 0; b < READAHEAD_NR_BUCKETS; b++)
			ITEM("readahead", window_keys[b], atomic_load(&ds->ra.hist[b]), UNIT_COUNT);
	} else {
		STR("backend", "name", "none");
	}
	{
		const char *reason = atomic_load(&fs->dirty.reason);

		STR("cache", "mode", options_cache_name(fs->opts.cache));
		if (fs->opts.cache == CACHE_ALWAYS) {
			ITEM("cache", "dirty_max_bytes", atomic_load(&fs->dirty.max_bytes),
			     UNIT_BYTES);
			if (reason)
				STR("cache", "dirty_bound", reason);
		}
	}
	{
		struct transport_stats *ts = &fs->transport;
		const char *mode = atomic_load(&ts->mode), *reason = atomic_load(&ts->reason);

		STR("transport", "mode", mode ? mode : "starting");
		STR("transport", "asked", options_transport_name(fs->opts.transport));
		if (reason)
			STR("transport", "reason", reason);
		ITEM("transport", "queues", ts->nr_queues, UNIT_NUMBER);
		ITEM("transport", "depth", ts->depth, UNIT_NUMBER);
		ITEM("transport", "ring_bytes", atomic_load(&ds->budget.transport_bytes),
		     UNIT_BYTES);
		ITEM("transport", "ring_requests", atomic_load(&ts->nr_ring_requests), UNIT_COUNT);
		ITEM("transport", "handoffs", atomic_load(&ts->nr_handoffs), UNIT_COUNT);
		ITEM("transport", "poll_us", atomic_load(&ts->poll_us), UNIT_NUMBER);
		ITEM("transport", "poll_hits", atomic_load(&ts->nr_poll_hits), UNIT_COUNT);
		ITEM("transport", "commit_errors", atomic_load(&ts->nr_commit_errors), UNIT_COUNT);
		ITEM("transport", "init_flags", atomic_load(&ts->init_granted), UNIT_NUMBER);
		STR("transport", "suid_clearing",
		    atomic_load(&ts->is_killpriv_v2) ? "tierfs (KILLPRIV_V2)" : "kernel");
		/* Requests by opcode, those that came. */
		for (unsigned int op = 0; op < TRANSPORT_NR_OPCODES; op++) {
			uint64_t nr = atomic_load(&ts->nr_ops[op]);
			const char *name = transport_opcode_name(op);

			if (nr && name)
				ITEM("ops", name, nr, UNIT_COUNT);
		}
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
	ITEM("requests", "bytes_read", atomic_load(&c->bytes_read), UNIT_BYTES_TOTAL);
	ITEM("requests", "bytes_written", atomic_load(&c->bytes_written), UNIT_BYTES_TOTAL);
	ITEM("requests", "enospc", atomic_load(&c->nr_enospc), UNIT_COUNT);
#undef ITEM
#undef STR
	return n;
}

void ctl_put(char *buf, size_t size, size_t *len, const char *fmt, ...)
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

void ctl_format_bytes(uint64_t v, char *out, size_t size)
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

/* bytes in units, or as a plain number with is_raw. */
static void put_bytes(uint64_t v, bool is_raw, char *out, size_t size)
{
	if (is_raw)
		snprintf(out, size, "%" PRIu64, v);
	else
		ctl_format_bytes(v, out, size);
}

static void render_text(const struct stat_item *it, int n, bool is_raw, char *buf, size_t size,
			size_t *len)
{
	const char *group = NULL;
	char human[32];

	for (int i = 0; i < n; i++) {
		const char *indent = it[i].group ? "  " : "";

		if (it[i].group && (!group || strcmp(group, it[i].group))) {
			const struct ctl_array_group *ag = ctl_array_group_of(&it[i]);

			ctl_put(buf, size, len, "%s%s%s%s:\n", ag ? "backend " : "",
				ag ? ag->label : "", ag ? " " : "",
				it[i].group + (ag ? strlen(ag->prefix) : 0));
		}
		group = it[i].group;
		if (it[i].unit == UNIT_BYTES || it[i].unit == UNIT_BYTES_TOTAL) {
			put_bytes(it[i].value, is_raw, human, sizeof(human));
			ctl_put(buf, size, len, "%s%-20s %s\n", indent, it[i].key, human);
		} else if (it[i].unit == UNIT_STRING) {
			ctl_put(buf, size, len, "%s%-20s %s\n", indent, it[i].key, it[i].str);
		} else if (it[i].unit == UNIT_RATIO && it[i].value == RATIO_NONE) {
			ctl_put(buf, size, len, "%s%-20s -\n", indent, it[i].key);
		} else if (it[i].unit == UNIT_RATIO) {
			ctl_put(buf, size, len, "%s%-20s %" PRIu64 ".%02" PRIu64 "\n", indent,
				it[i].key, it[i].value / 1000, it[i].value % 1000 / 10);
		} else {
			ctl_put(buf, size, len, "%s%-20s %" PRIu64 "\n", indent, it[i].key,
				it[i].value);
		}
	}
}

/* jansson's integers are signed: a count past INT64_MAX shows as INT64_MAX. */
static json_t *json_u64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

json_t *ctl_json_text(const char *s)
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
	json_t *root = json_object(), *group = NULL, *arrays[2] = { NULL, NULL };
	const char *group_name = NULL;

	if (!root)
		return NULL;
	for (int i = 0; i < n; i++) {
		json_t *obj = root, *value;

		if (it[i].group) {
			if (!group_name || strcmp(group_name, it[i].group)) {
				const struct ctl_array_group *ag = ctl_array_group_of(&it[i]);
				json_t **array = ag ? &arrays[ag - array_groups] : NULL;

				if (array && !*array) {
					*array = json_array();
					if (json_put(json_object_get(root, "backend"), ag->array,
						     *array))
						goto free_root;
				}
				group = json_object();
				if (array ? json_array_append_new(*array, group) :
					    json_put(root, it[i].group, group))
					goto free_root;
				group_name = it[i].group;
			}
			obj = group;
		}
		if (it[i].unit == UNIT_STRING)
			value = ctl_json_text(it[i].str);
		else if (it[i].unit == UNIT_RATIO)
			value = it[i].value == RATIO_NONE ? json_null() :
							    json_real((double)it[i].value / 1000);
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
	return json_pack("{s:o?,s:o?,s:o?,s:o?,s:o?}", "path", ctl_json_text(path),
			 "resident_bytes", json_u64(atomic_load(&ls->nr_resident) * PAGE_SIZE),
			 "swapped_bytes", json_u64(atomic_load(&ls->nr_swapped) * PAGE_SIZE),
			 "limit_bytes", json_u64(atomic_load(&ls->limit_pages) * PAGE_SIZE),
			 "source", ctl_json_text(source));
}

const char *ctl_escape(const char *s, bool is_space_too, char *out, size_t size)
{
	size_t n = 0;

	for (; *s && n + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\' || (is_space_too && c == ' '))
			n += (size_t)snprintf(out + n, size - n, "\\%03o", c);
		else
			out[n++] = (char)c;
	}
	out[n] = '\0';
	return out;
}

static void tenant_text(const struct lru_lists *ls, const char *path, const char *source,
			bool is_raw, char *buf, size_t size, size_t *len)
{
	uint64_t limit = atomic_load(&ls->limit_pages) * PAGE_SIZE;
	char r[32], w[32], l[32], p[4 * PATH_MAX], src[4 * PATH_MAX];

	put_bytes(atomic_load(&ls->nr_resident) * PAGE_SIZE, is_raw, r, sizeof(r));
	put_bytes(atomic_load(&ls->nr_swapped) * PAGE_SIZE, is_raw, w, sizeof(w));
	put_bytes(limit, is_raw, l, sizeof(l));
	ctl_put(buf, size, len, "  %-30s resident %s, swapped %s, limit %s (%s)\n",
		ctl_escape(path, false, p, sizeof(p)), r, w, limit ? l : "none",
		ctl_escape(source, false, src, sizeof(src)));
}

/* One line or object per tenant, the root lists first; into cgroups if JSON. */
static void render_tenants(struct tierfs *fs, json_t *cgroups, bool is_raw, char *buf, size_t size,
			   size_t *len)
{
	struct tenants *t = &fs->tenants;
	const char *root_source = "root: files of no tenant";

	if (cgroups)
		json_array_append_new(cgroups, tenant_json(&fs->data.lru.root, "/", root_source));
	else
		tenant_text(&fs->data.lru.root, "/", root_source, is_raw, buf, size, len);
	pthread_mutex_lock(&t->lock);
	for (unsigned int i = 0; i < t->nr; i++) {
		struct tenant *tn = t->all[i];

		if (cgroups)
			json_array_append_new(cgroups,
					      tenant_json(&tn->lists, tn->path, tn->source));
		else
			tenant_text(&tn->lists, tn->path, tn->source, is_raw, buf, size, len);
	}
	pthread_mutex_unlock(&t->lock);
}

/*
 * "stats json": built as a jansson tree, so every key and string is
 * escaped whatever a cgroup is named; -ENOMEM if it could not be built.
 */
static int render_json(struct tierfs *fs, const struct stat_item *it, int n, char *buf, size_t size,
		       size_t *len)
{
	json_t *root = stats_json(it, n), *cgroups = NULL;
	char *text;

	if (root && fs->data.backend) {
		cgroups = json_array();
		if (json_put(root, "cgroups", cgroups))
			goto free_root;
		render_tenants(fs, cgroups, false, NULL, 0, NULL);
	}
	text = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	if (!text)
		goto free_root;
	ctl_put(buf, size, len, "%s\n", text);
	free(text);
	json_decref(root);
	return 0;

free_root:
	json_decref(root);
	*len = 0;
	ctl_put(buf, size, len, "error: stats: out of memory\n");
	return -ENOMEM;
}

int ctl_stats(struct tierfs *fs, const struct ctl_counters *cc, enum ctl_stats_format format,
	      char *buf, size_t size)
{
	struct stat_item items[NR_STAT_ITEMS];
	size_t len = 0;
	int n;

	n = ctl_collect_stats(fs, cc, items);
	ctl_put(buf, size, &len, "ok\n");
	switch (format) {
	case CTL_STATS_JSON:
		return render_json(fs, items, n, buf, size, &len);
	case CTL_STATS_TEXT:
	case CTL_STATS_BYTES:
		break;
	}
	render_text(items, n, format == CTL_STATS_BYTES, buf, size, &len);
	if (fs->data.backend) {
		ctl_put(buf, size, &len, "cgroups:\n");
		render_tenants(fs, NULL, format == CTL_STATS_BYTES, buf, size, &len);
	}
	return 0;
}
