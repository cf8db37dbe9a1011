/* SPDX-License-Identifier: MIT */
/*
 * What the control channel's files share: the server's counters, the
 * request dispatcher the server calls, and the stats reply.
 */
#ifndef TIERFS_CTL_PRIV_H
#define TIERFS_CTL_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tierfs/backend.h"
#include "tierfs/tierfs.h"

/* What the server let in and turned away, shown in the stats. */
struct ctl_counters {
	atomic_uint_fast64_t nr_connections;   /* accepted and served */
	atomic_uint_fast64_t nr_refused_total; /* CTL_CONN_MAX open already */
	atomic_uint_fast64_t nr_refused_uid;   /* CTL_CONN_PER_UID of that uid open */
	atomic_uint_fast64_t nr_timed_out;     /* no request line, or reply not read, in time */
	atomic_uint_fast64_t nr_malformed;     /* too long, incomplete, or holding a NUL */
	atomic_uint_fast64_t nr_queue_full;    /* CTL_QUEUE_MAX changes waiting already */
};

/*
 * One figure of the stats.  COUNT and BYTES_TOTAL only ever grow
 * (Prometheus counters); NUMBER, BYTES and RATIO go both ways (gauges).
 */
enum stat_unit { UNIT_COUNT, UNIT_NUMBER, UNIT_BYTES, UNIT_BYTES_TOTAL, UNIT_RATIO, UNIT_STRING };

struct stat_item {
	const char *group; /* NULL at top level */
	const char *key;
	uint64_t value; /* UNIT_RATIO: thousandths, RATIO_NONE where undefined */
	enum stat_unit unit;
	const char *str; /* UNIT_STRING */
};

/* A ratio of nothing to nothing: null in JSON, "-" in text, no sample. */
#define RATIO_NONE UINT64_MAX

#define NR_TIER_ITEMS 16
#define NR_NODE_ITEMS 12
/* The chain's writebacks total, its tiers' and nodes' items besides the rest. */
#define NR_STAT_ITEMS                                                     \
	(120 + TRANSPORT_NR_OPCODES + BACKEND_MAX_TIERS * NR_TIER_ITEMS + \
	 BACKEND_MAX_NODES * NR_NODE_ITEMS)

/*
 * Every figure of the mount into it (NR_STAT_ITEMS at most), in a fixed
 * order, with the server's counters when cc is set; returns how many.
 * Strings point into thread-local buffers: render before the next call.
 */
int ctl_collect_stats(struct tierfs *fs, const struct ctl_counters *cc, struct stat_item *it);

/*
 * Groups that are entries of an array under "backend" in the JSON: a chain's
 * tiers ("tier:NAME", backend.tiers[]) and a remote backend's servers
 * ("node:HOST:PORT", backend.nodes[]); in Prometheus, one family per key
 * with the entry's name as a label.
 */
struct ctl_array_group {
	const char *prefix, *array, *label;
};

/* The array group item is in, or NULL. */
const struct ctl_array_group *ctl_array_group_of(const struct stat_item *it);

/*
 * A string as JSON text, whatever bytes it holds: jansson takes UTF-8
 * only, and a cgroup name may be any bytes, so others become '?'.  NULL
 * when out of memory.
 */
struct json_t *ctl_json_text(const char *s);

/* Append to buf at *len, never past size; a full buffer truncates quietly. */
void ctl_put(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

enum ctl_stats_format {
	CTL_STATS_TEXT,	 /* "stats": sizes in units */
	CTL_STATS_BYTES, /* "stats bytes": sizes in bytes */
	CTL_STATS_JSON,	 /* "stats json" */
};

/*
 * The stats reply into buf; with the server's counters when cc is set.
 * Returns 0 or -ENOMEM (buf then holds the error line).
 */
int ctl_stats(struct tierfs *fs, const struct ctl_counters *cc, enum ctl_stats_format format,
	      char *buf, size_t size);

/*
 * "stats prometheus MOUNTPOINT": the reply in the Prometheus text format,
 * every sample labelled mountpoint="MOUNTPOINT".  Returns 0.
 */
int ctl_stats_prometheus(struct tierfs *fs, const struct ctl_counters *cc, const char *mountpoint,
			 char *buf, size_t size);

/*
 * "files INO...": for each inode number, a line "INO SIZE RESIDENT FILLED
 * SWAPPED..." (pages; swapped by tier, as the "tiers" line
 * names them), or "INO -" for no regular file peer_uid may see, after
 * lines "cache MODE" and "tiers NAME...".  Returns 0 or -errno.
 */
int ctl_files(struct tierfs *fs, const char *args, uid_t peer_uid, char *buf, size_t size);

/* ctl_handle(), with the server's counters in the stats when cc is set. */
int ctl_handle_counted(struct tierfs *fs, const struct ctl_counters *cc, const char *request,
		       uid_t peer_uid, char *buf, size_t size);

#endif
