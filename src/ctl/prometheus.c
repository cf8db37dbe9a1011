// SPDX-License-Identifier: MIT
/*
 * The stats in the Prometheus text format (version 0.0.4), as
 * node-exporter's textfile collector and `promtool check metrics` read
 * it: a family per figure, "tierfs_GROUP_KEY" in base units (bytes,
 * seconds), counters ending in _total, a HELP line that says what the
 * figure is; a chain's tiers and a remote backend's servers as one family
 * per key with a "tier" or "node" label, requests by opcode and readahead
 * windows by size as labels, tenant cgroups with a "cgroup" label, and
 * every string as a label of tierfs_info.  Every sample has
 * mountpoint="...", so that `tierctl stats --all` can put mounts together.
 */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "tierfs/lru.h"
#include "tierfs/tenant.h"
#include "tierfs/tierfs.h"
#include "ctl_priv.h"

/*
 * What a figure is called and means in Prometheus.  id is "GROUP.KEY",
 * "KEY" at the top, "tier.KEY" or "node.KEY" for an array group's entries;
 * name, when set, replaces GROUP_KEY; a figure in pages is scaled to bytes
 * and one in microseconds to seconds; help NULL leaves out a figure
 * another gives in bytes.  One with no entry goes out as GROUP_KEY with a
 * HELP saying "undocumented", which the tests look for.
 */
enum prom_scale { AS_IS, PAGES_TO_BYTES, US_TO_SECONDS };

struct prom_meta {
	const char *id;
	const char *name;
	enum prom_scale scale;
	const char *help;
};

static const struct prom_meta metas[] = {
	{ "size_bytes", NULL, AS_IS, "size=: the cap on file data; 0 for none" },
	{ "data_bytes", NULL, AS_IS, "File data held, resident or swapped" },
	{ "free_bytes", NULL, AS_IS, "What more file data df says fits" },
	{ "fallocated_bytes", NULL, AS_IS, "Space fallocate(2) reserved and nothing wrote yet" },
	{ "mem_budget_bytes", NULL, AS_IS, "The resident budget: file pages kept in memory" },
	{ "mem_limit_bytes", NULL, AS_IS,
	  "The limit on the daemon's whole footprint (memlimit=, the cgroup's); 0 for none" },
	{ "cgroup_others_bytes", NULL, AS_IS,
	  "What the rest of the daemon's limited cgroup holds, page cache aside" },
	{ "resident_bytes", NULL, AS_IS, "File data in the daemon's memory" },
	{ "footprint_bytes", NULL, AS_IS,
	  "All the daemon's memory: resident pages, the backend's pool in RAM, metadata" },
	{ "footprint_peak_bytes", NULL, AS_IS, "The footprint's peak since mount or reset-peaks" },
	{ "same_filled_pages", "same_filled_bytes", PAGES_TO_BYTES,
	  "File data in pages of one repeated word, held as that word" },
	{ "metadata_bytes", NULL, AS_IS, "The metadata's part of the footprint" },
	{ "inodes", NULL, AS_IS, "Inodes in use" },
	{ "max_inodes", NULL, AS_IS, "nr_inodes=: the cap on inodes; 0 for none" },
	{ "inode_space_bytes", NULL, AS_IS,
	  "What inodes, names, links, xattrs and symlink targets take" },
	{ "pool.reserved_bytes", NULL, AS_IS, "The page pool's bound" },
	{ "pool.backed_bytes", NULL, AS_IS, "Page pool memory the kernel has backed" },
	{ "pool.ready_bytes", NULL, AS_IS, "Free page pool memory, touched and ready" },
	{ "pool.slow_allocs", NULL, AS_IS, "Pages taken that had to be touched first" },
	{ "pool.trimmed_pages", "pool_trimmed_bytes", PAGES_TO_BYTES,
	  "Free page pool memory given back to the kernel" },
	{ "pool.alloc_failures", NULL, AS_IS, "Page allocations the pool could not serve" },
	{ "backend.compressor_level", NULL, AS_IS, "The compressor's level" },
	{ "backend.stored_pages", NULL, AS_IS, NULL },
	{ "tier.stored_pages", NULL, AS_IS, NULL },
	{ "backend.stored_bytes", NULL, AS_IS, "File data in the backend, as written" },
	{ "backend.pool_bytes", NULL, AS_IS, "Memory or disk the backend uses for it" },
	{ "backend.pool_peak_bytes", NULL, AS_IS, "The backend's pool's peak" },
	{ "backend.capacity_bytes", NULL, AS_IS, "What the backend can hold; 0 for no bound" },
	{ "backend.stores", NULL, AS_IS, "Pages stored into the backend" },
	{ "backend.loads", NULL, AS_IS, "Pages loaded from the backend" },
	{ "backend.frees", NULL, AS_IS, "Pages freed in the backend" },
	{ "backend.store_errors", NULL, AS_IS, "Stores that failed with an error" },
	{ "backend.load_errors", NULL, AS_IS, "Loads that failed with an error" },
	{ "backend.decrypt_errors", NULL, AS_IS, "Loads whose seal did not open" },
	{ "backend.meta_bytes", NULL, AS_IS, "The backend's own metadata in memory" },
	{ "backend.fallback_buffered", NULL, AS_IS, "File backend I/O that fell back to buffered" },
	{ "backend.fallback_sparse", NULL, AS_IS,
	  "Swap file space that could not be preallocated" },
	{ "backend.reject_full", NULL, AS_IS, "Stores refused: the backend was full" },
	{ "backend.reject_alloc", NULL, AS_IS, "Stores refused: no memory for them" },
	{ "backend.reject_raw", NULL, AS_IS, "Pages that did not compress, stored as they are" },
	{ "backend.compression_ratio", NULL, AS_IS, "stored_bytes / pool_bytes of a compressor" },
	{ "backend.shards", NULL, AS_IS, "Lock shards of the backend's slot space" },
	{ "backend.lock_contended", NULL, AS_IS, "Shard lock acquisitions that waited" },
	{ "backend.max_shard_lock_contended", NULL, AS_IS, "Waits on the busiest shard's lock" },
	{ "backend.writebacks", NULL, AS_IS, "Pages a chain's first tier wrote back" },
	{ "tier.stored_bytes", NULL, AS_IS, "File data in the tier, as written" },
	{ "tier.pool_bytes", NULL, AS_IS, "Memory or disk the tier uses" },
	{ "tier.capacity_bytes", NULL, AS_IS, "What the tier can hold; 0 for no bound" },
	{ "tier.loads", NULL, AS_IS, "Pages loaded from the tier" },
	{ "tier.stores", NULL, AS_IS, "Pages stored into the tier" },
	{ "tier.writebacks", NULL, AS_IS, "Pages the tier wrote back to the next" },
	{ "tier.rejects", NULL, AS_IS, "Stores the tier refused" },
	{ "tier.pool_max_bytes", NULL, AS_IS, "pool_max=: the RAM tier's bound" },
	{ "tier.writeback_errors", NULL, AS_IS, "Writebacks to the next tier that failed" },
	{ "tier.rejects_huge", NULL, AS_IS, "Pages sent on: they did not compress" },
	{ "tier.rejects_full", NULL, AS_IS, "Pages sent on: the tier was full" },
	{ "tier.rejects_error", NULL, AS_IS, "Pages sent on: the tier failed" },
	{ "tier.compression_ratio", NULL, AS_IS, "Stored / pool bytes of the tier" },
	{ "node.stored_pages", "node_stored_bytes", PAGES_TO_BYTES, "File data on the server" },
	{ "node.pool_bytes", NULL, AS_IS, "What the server holds for the mount" },
	{ "node.round_trips", NULL, AS_IS, "Round trips to the server" },
	{ "node.commands", NULL, AS_IS, "Commands sent to the server" },
	{ "node.redirects", NULL, AS_IS, "MOVED and ASK replies from the server" },
	{ "node.errors", NULL, AS_IS, "Errors from the server or its connection" },
	{ "node.failovers", NULL, AS_IS, "Times a replica took the server's place" },
	{ "node.latency_p50_us", "node_latency_p50_seconds", US_TO_SECONDS,
	  "Median round trip to the server, recent" },
	{ "node.latency_p99_us", "node_latency_p99_seconds", US_TO_SECONDS,
	  "99th percentile round trip to the server, recent" },
	{ "reclaim.evicted", NULL, AS_IS, "Pages evicted to the backend" },
	{ "reclaim.clean_dropped", NULL, AS_IS, "Pages dropped whose backend copy was still good" },
	{ "reclaim.filled_evicted", NULL, AS_IS, "Same-filled pages evicted as their word" },
	{ "reclaim.swapins", NULL, AS_IS, "Pages brought back from the backend" },
	{ "reclaim.swapin_errors", NULL, AS_IS, "Swap-ins that failed" },
	{ "reclaim.store_failures", NULL, AS_IS, "Evictions the backend refused or failed" },
	{ "reclaim.direct_reclaims", NULL, AS_IS, "Evictions a request had to wait for" },
	{ "reclaim.budget_enospc", NULL, AS_IS, "ENOSPC: the budget was full" },
	{ "reclaim.budget_exceeded", NULL, AS_IS, "Pages taken over the budget" },
	{ "reclaim.limit_rejects", NULL, AS_IS, "Allocations refused at the memory limit" },
	{ "reclaim.capacity_enospc", NULL, AS_IS,
	  "Writes refused at the capacity, most waited out (room_waits)" },
	{ "reclaim.room_waits", NULL, AS_IS, "Requests that waited for room" },
	{ "reclaim.copies_freed", NULL, AS_IS, "Backend copies freed by a write" },
	{ "reclaim.pressure_events", NULL, AS_IS, "Memory pressure events seen" },
	{ "reclaim.limit_changes", NULL, AS_IS, "Changes of the cgroup's limit seen" },
	{ "reclaim.inactive_pages", "reclaim_inactive_bytes", PAGES_TO_BYTES,
	  "Resident file data on the inactive list" },
	{ "reclaim.active_pages", "reclaim_active_bytes", PAGES_TO_BYTES,
	  "Resident file data on the active list" },
	{ "readahead.hits", NULL, AS_IS, "Pages read ahead that were then read" },
	{ "readahead.misses", NULL, AS_IS, "Swap-ins readahead had not brought" },
	{ "readahead.pages_read_ahead", "readahead_read_ahead_bytes", PAGES_TO_BYTES,
	  "File data brought back ahead of a read" },
	{ "readahead.window", "readahead_window_bytes", PAGES_TO_BYTES,
	  "The readahead window now" },
	{ "cache.dirty_max_bytes", NULL, AS_IS,
	  "The kernel's bound on dirty pages (cache=always)" },
	{ "transport.queues", NULL, AS_IS, "The ring's queues; 0 over /dev/fuse" },
	{ "transport.depth", NULL, AS_IS, "Requests each ring queue holds" },
	{ "transport.ring_bytes", NULL, AS_IS, "Memory the ring's buffers take" },
	{ "transport.ring_requests", NULL, AS_IS, "Requests served over the ring" },
	{ "transport.handoffs", NULL, AS_IS, "Ring requests handed to a worker" },
	{ "transport.poll_us", "transport_poll_seconds", US_TO_SECONDS,
	  "How long the ring's threads poll before they sleep" },
	{ "transport.poll_hits", NULL, AS_IS, "Requests found while polling" },
	{ "transport.commit_errors", NULL, AS_IS, "Ring replies the kernel refused" },
	{ "transport.init_flags", NULL, AS_IS, "FUSE INIT flags granted, as a number" },
	{ "control.connections", NULL, AS_IS, "Control connections served" },
	{ "control.refused_total", "control_refused", AS_IS,
	  "Control connections refused: too many open" },
	{ "control.refused_uid", NULL, AS_IS, "Control connections refused: too many of one user" },
	{ "control.timed_out", NULL, AS_IS, "Control connections that timed out" },
	{ "control.malformed", NULL, AS_IS, "Malformed control requests" },
	{ "control.queue_full", NULL, AS_IS, "Changes refused: the queue was full" },
	{ "requests.reads", NULL, AS_IS, "Read requests" },
	{ "requests.writes", NULL, AS_IS, "Write requests" },
	{ "requests.bytes_read", "requests_read_bytes", AS_IS, "Bytes read" },
	{ "requests.bytes_written", "requests_written_bytes", AS_IS, "Bytes written" },
	{ "requests.enospc", NULL, AS_IS, "Requests that failed with ENOSPC" },
};

/* item's entry, matched by its group (or array group's label) and key. */
static const struct prom_meta *meta_of(const struct stat_item *it)
{
	const struct ctl_array_group *ag = ctl_array_group_of(it);
	const char *group = ag ? ag->label : it->group;
	size_t len = group ? strlen(group) : 0;

	for (size_t i = 0; i < sizeof(metas) / sizeof(metas[0]); i++) {
		const char *id = metas[i].id;

		if (group ? !strncmp(id, group, len) && id[len] == '.' &&
				    !strcmp(id + len + 1, it->key) :
			    !strchr(id, '.') && !strcmp(id, it->key))
			return &metas[i];
	}
	return NULL;
}

static bool is_counter(const struct stat_item *it)
{
	return it->unit == UNIT_COUNT || it->unit == UNIT_BYTES_TOTAL;
}

/* The family's name: tierfs_NAME or tierfs_GROUP_KEY, _total for a counter. */
static void family_name(const struct stat_item *it, const struct prom_meta *m, char *out,
			size_t size)
{
	const struct ctl_array_group *ag = ctl_array_group_of(it);
	const char *group = ag ? ag->label : it->group;

	if (m->name)
		snprintf(out, size, "tierfs_%s%s", m->name, is_counter(it) ? "_total" : "");
	else
		snprintf(out, size, "tierfs_%s%s%s%s", group ? group : "", group ? "_" : "",
			 it->key, is_counter(it) ? "_total" : "");
	for (char *c = out; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			*c = '_';
}

/* A label value: \ " and newline escaped, as UTF-8 as ctl_json_text() makes it. */
static void put_label_value(const char *v, char *buf, size_t size, size_t *len)
{
	json_t *text = ctl_json_text(v);

	for (const char *c = text ? json_string_value(text) : ""; *c; c++) {
		if (*c == '\\' || *c == '"')
			ctl_put(buf, size, len, "\\%c", *c);
		else if (*c == '\n')
			ctl_put(buf, size, len, "\\n");
		else
			ctl_put(buf, size, len, "%c", *c);
	}
	json_decref(text);
}

static void put_family(const char *name, const char *help, bool is_counter, char *buf, size_t size,
		       size_t *len)
{
	ctl_put(buf, size, len, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
		is_counter ? "counter" : "gauge");
}

/* name{mountpoint="...",label="value"} and the value, scaled. */
static void put_sample(const char *name, const struct stat_item *it, enum prom_scale scale,
		       const char *mountpoint, const char *label, const char *label_value,
		       char *buf, size_t size, size_t *len)
{
	ctl_put(buf, size, len, "%s{mountpoint=\"", name);
	put_label_value(mountpoint, buf, size, len);
	if (label) {
		ctl_put(buf, size, len, "\",%s=\"", label);
		put_label_value(label_value, buf, size, len);
	}
	if (it->unit == UNIT_RATIO)
		ctl_put(buf, size, len, "\"} %" PRIu64 ".%03" PRIu64 "\n", it->value / 1000,
			it->value % 1000);
	else if (scale == US_TO_SECONDS)
		ctl_put(buf, size, len, "\"} %" PRIu64 ".%06" PRIu64 "\n", it->value / 1000000,
			it->value % 1000000);
	else
		ctl_put(buf, size, len, "\"} %" PRIu64 "\n",
			scale == PAGES_TO_BYTES ? it->value * PAGE_SIZE : it->value);
}

static bool has_sample(const struct stat_item *it)
{
	return it->unit != UNIT_STRING && !(it->unit == UNIT_RATIO && it->value == RATIO_NONE);
}

/* The settings and names: one sample of 1 with every top-level string a label. */
static void put_info(const struct stat_item *it, int n, const char *mountpoint, char *buf,
		     size_t size, size_t *len)
{
	char name[128];

	put_family("tierfs_info", "The mount's settings and names, as labels; always 1", false, buf,
		   size, len);
	ctl_put(buf, size, len, "tierfs_info{mountpoint=\"");
	put_label_value(mountpoint, buf, size, len);
	for (int i = 0; i < n; i++) {
		if (it[i].unit != UNIT_STRING || ctl_array_group_of(&it[i]))
			continue;
		snprintf(name, sizeof(name), "%s%s%s", it[i].group ? it[i].group : "",
			 it[i].group ? "_" : "", it[i].key);
		ctl_put(buf, size, len, "\",%s=\"", name);
		put_label_value(it[i].str, buf, size, len);
	}
	ctl_put(buf, size, len, "\"} 1\n");
}

/* A group whose keys are a label's values: ops by opcode, windows by size. */
static const struct {
	const char *group, *key_prefix, *name, *label, *help;
} labelled[] = {
	{ "ops", "", "tierfs_ops_total", "op", "Requests by FUSE opcode" },
	{ "readahead", "windows_", "tierfs_readahead_windows_total", "pages",
	  "Readahead windows opened, by size in pages" },
};

/* Which of labelled[] item is a value of, or -1. */
static int labelled_of(const struct stat_item *it)
{
	for (size_t l = 0; it->group && l < sizeof(labelled) / sizeof(labelled[0]); l++)
		if (!strcmp(it->group, labelled[l].group) &&
		    !strncmp(it->key, labelled[l].key_prefix, strlen(labelled[l].key_prefix)))
			return (int)l;
	return -1;
}

static void put_labelled(const struct stat_item *it, int n, const char *mountpoint, char *buf,
			 size_t size, size_t *len)
{
	for (size_t l = 0; l < sizeof(labelled) / sizeof(labelled[0]); l++) {
		bool has_family = false;

		for (int i = 0; i < n; i++) {
			if (labelled_of(&it[i]) != (int)l)
				continue;
			if (!has_family)
				put_family(labelled[l].name, labelled[l].help, true, buf, size,
					   len);
			has_family = true;
			put_sample(labelled[l].name, &it[i], AS_IS, mountpoint, labelled[l].label,
				   it[i].key + strlen(labelled[l].key_prefix), buf, size, len);
		}
	}
}

static void put_tenant(const char *family, const char *path, uint64_t v, const char *mountpoint,
		       char *buf, size_t size, size_t *len)
{
	struct stat_item it = { .value = v, .unit = UNIT_BYTES };

	put_sample(family, &it, AS_IS, mountpoint, "cgroup", path, buf, size, len);
}

/* Each tenant cgroup's figures, the root's ("/": files of no tenant) first. */
static void put_tenants(struct tierfs *fs, const char *mountpoint, char *buf, size_t size,
			size_t *len)
{
	static const struct {
		const char *name, *help;
	} families[] = {
		{ "tierfs_cgroup_resident_bytes", "File data of the cgroup's files in memory" },
		{ "tierfs_cgroup_swapped_bytes", "File data of the cgroup's files in the backend" },
		{ "tierfs_cgroup_limit_bytes", "The cgroup's resident share; 0 for none" },
	};
	struct tenants *t = &fs->tenants;

	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		put_family(families[f].name, families[f].help, false, buf, size, len);
		pthread_mutex_lock(&t->lock);
		for (int i = -1; i < (int)t->nr; i++) {
			const struct lru_lists *ls = i < 0 ? &fs->data.lru.root : &t->all[i]->lists;
			uint64_t v = f == 0 ? atomic_load(&ls->nr_resident) :
				     f == 1 ? atomic_load(&ls->nr_swapped) :
					      atomic_load(&ls->limit_pages);

			put_tenant(families[f].name, i < 0 ? "/" : t->all[i]->path, v * PAGE_SIZE,
				   mountpoint, buf, size, len);
		}
		pthread_mutex_unlock(&t->lock);
	}
}

int ctl_stats_prometheus(struct tierfs *fs, const struct ctl_counters *cc, const char *mountpoint,
			 char *buf, size_t size)
{
	struct stat_item it[NR_STAT_ITEMS];
	char name[128], help[128];
	size_t buf_len = 0, *len = &buf_len;
	int n = ctl_collect_stats(fs, cc, it);

	ctl_put(buf, size, len, "ok\n");
	put_info(it, n, mountpoint, buf, size, len);
	for (int i = 0; i < n; i++) {
		const struct ctl_array_group *ag = ctl_array_group_of(&it[i]);
		const struct prom_meta *m = meta_of(&it[i]), undocumented = { .help = help };
		bool is_first = true;

		if (it[i].unit == UNIT_STRING || labelled_of(&it[i]) >= 0 || (m && !m->help))
			continue;
		if (!m) {
			snprintf(help, sizeof(help), "tierctl stats %s%s%s (undocumented)",
				 it[i].group ? it[i].group : "", it[i].group ? "." : "", it[i].key);
			m = &undocumented;
		}
		/* An entry's key: once, with every entry's sample of it. */
		for (int j = 0; ag && j < i && is_first; j++)
			is_first = ctl_array_group_of(&it[j]) != ag || strcmp(it[j].key, it[i].key);
		if (!is_first)
			continue;
		family_name(&it[i], m, name, sizeof(name));
		put_family(name, m->help, is_counter(&it[i]), buf, size, len);
		for (int j = i; j < n; j++) {
			if (!has_sample(&it[j]) || ctl_array_group_of(&it[j]) != ag ||
			    (ag ? strcmp(it[j].key, it[i].key) : j != i))
				continue;
			put_sample(name, &it[j], m->scale, mountpoint, ag ? ag->label : NULL,
				   ag ? it[j].group + strlen(ag->prefix) : NULL, buf, size, len);
		}
	}
	put_labelled(it, n, mountpoint, buf, size, len);
	if (fs->data.backend)
		put_tenants(fs, mountpoint, buf, size, len);
	return 0;
}
