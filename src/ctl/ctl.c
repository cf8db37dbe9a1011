// SPDX-License-Identifier: MIT
/*
 * Control channel requests: stats, set, remount, drain and reclaim, with
 * who may change what.  Replies are built in memory first, so a slow or
 * vanished client never holds a lock of the filesystem.
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
#include "tierfs/tierfs.h"
#include "tierfs/log.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "ctl_priv.h"

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
		/* Inodes, links, xattrs and targets, as tmpfs's inode space counts them. */
		used = ns_nr_used_inodes(&fs->ns);
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
 * A RAM backend has slots for size= unless swapsize= said otherwise: a
 * larger size= gets slots for all of it, so df grows with it as on tmpfs.
 * Slots never go: a smaller size= bounds the files, not the backend.
 */
static void grow_backend(struct tierfs *fs, char *warnings, size_t size, size_t *len)
{
	struct tier_backend *b = fs->data.backend;
	uint64_t bytes = (fs->opts.size + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
	int err;

	if (!b || !b->ops->grow || fs->opts.swapsize || !bytes)
		return;
	err = b->ops->grow(b, bytes);
	if (err) {
		struct backend_stats st = { 0 };
		char why[64];

		if (err == -ENOSPC)
			snprintf(why, sizeof(why), "at most %d times RAM", BACKEND_GROW_MAX_RAM);
		else
			snprintf(why, sizeof(why), "%s", strerror(-err));
		b->ops->get_stats(b, &st);
		ctl_put(warnings, size, len,
			"warning: backend=%s: slots for %" PRIu64 " MiB of size= only (%s): "
			"df shows the smaller\n",
			b->ops->name, st.capacity_bytes >> 20, why);
	}
	if (budget_update(&fs->data, true))
		reclaim_kick(&fs->data);
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
	uint64_t pool_max = fs->opts.pool_max_bytes;
	unsigned int pool_pct = fs->opts.pool_max_pct;
	bool is_pool_pct = fs->opts.is_pool_max_pct, has_pool_max = false;
	const char *why = NULL; /* what a bad value should have been */
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
				ctl_put(warnings, sizeof(warnings), &warnings_len, "warning: %s\n",
					msg);
			if (!strcmp(pair, "mem"))
				has_mem = true;
			else
				has_other = true;
			has_budget = true;
		} else if (!strcmp(pair, "readahead")) {
			why = "want auto, direct, cluster or vma";
			if (readahead_parse(val, &policy))
				goto bad_value;
			has_other = true;
		} else if (!strcmp(pair, "pool_max")) {
			if (!fs->opts.upper) {
				snprintf(buf, size,
					 "error: %s: pool_max= bounds a chain's RAM tier, and "
					 "backend=%s has no RAM tier\n",
					 verb, options_backend_name(&fs->opts, msg, sizeof(msg)));
				return -EINVAL;
			}
			if (options_parse_pool_max(val, &pool_max, &pool_pct, &is_pool_pct)) {
				snprintf(
					buf, size,
					"error: %s: invalid pool_max= value '%.64s': want a size or "
					"N%% of the memory limit, up to 100%%\n",
					verb, val);
				return -EINVAL;
			}
			has_pool_max = has_other = true;
		} else if (!strcmp(pair, "cgroup")) {
			why = "want a cgroup's path as /proc/PID/cgroup shows it, from /";
			if (val[0] != '/' || strlen(val) >= PATH_MAX)
				goto bad_value;
			cgroup = val;
		} else {
			snprintf(buf, size,
				 "error: %s: unknown key '%.64s' (size, nr_inodes, mem, memlimit, "
				 "readahead, pool_max, cgroup)\n",
				 verb, pair);
			return -EINVAL;
		}
		continue;
bad_value:
		snprintf(buf, size, "error: %s: invalid %.16s= value '%.64s': %s\n", verb, pair,
			 val, why);
		return -EINVAL;
	}
	if (!nr && strcmp(verb, "remount")) {
		snprintf(buf, size,
			 "error: %s: want KEY=VALUE (size, nr_inodes, mem, memlimit, readahead, "
			 "pool_max, cgroup)\n",
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
	if (has_limits) {
		set_limits(fs, size_bytes, nr_inodes);
		grow_backend(fs, warnings, sizeof(warnings), &warnings_len);
	}
	if (has_budget) {
		if (ds->backend && budget_set(ds, mem, limit) > 0)
			reclaim_kick(ds);
		fs->opts.mem = mem;
		fs->opts.memlimit = limit;
		if (fs->dirty.dev)
			dirty_tune(fs, fs->dirty.dev);
	}
	if (has_pool_max) {
		if (budget_set_pool_max(ds, pool_max, pool_pct, is_pool_pct))
			reclaim_kick(ds);
		fs->opts.pool_max_bytes = pool_max;
		fs->opts.pool_max_pct = pool_pct;
		fs->opts.is_pool_max_pct = is_pool_pct;
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
	if (fs->opts.upper) {
		size_t len = strlen(buf);

		/* The bound in force, in bytes, whichever way it was given. */
		ctl_put(buf, size, &len, "pool_max=%" PRIu64 "\n", budget_pool_max(ds));
	}
	return 0;
}

/* "remount LIST": mount(8)'s whole option list; what changes goes through set. */
static int handle_remount(struct tierfs *fs, const char *list, char *buf, size_t size)
{
	uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	char pairs[CTL_REQUEST_MAX], msg[256];
	struct tierfs_options cur = fs->opts;
	enum atime_mode atime;
	bool is_nodiratime;
	int ret;

	/* The atime flags in force are the last remount's. */
	cur.atime = atomic_load(&fs->atime);
	cur.is_nodiratime = atomic_load(&fs->is_nodiratime);
	ret = options_remount(&cur, list, ram, pairs, sizeof(pairs), &atime, &is_nodiratime, msg,
			      sizeof(msg));
	if (ret) {
		snprintf(buf, size, "error: remount: %s\n", msg);
		return ret;
	}
	ret = handle_set(fs, "remount", pairs, buf, size);
	if (!ret) {
		atomic_store(&fs->atime, atime);
		atomic_store(&fs->is_nodiratime, is_nodiratime);
	}
	return ret;
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

static struct log_ratelimit refused_log;

/* A change asked for by someone else: refused, and logged (at a limited rate). */
static int refuse(uid_t peer_uid, const char *verb, char *buf, size_t size)
{
	log_limited(&refused_log, LOG_NOTICE, "control: %s refused to uid %u", verb,
		    (unsigned int)peer_uid);
	snprintf(buf, size, "error: %s: permission denied (root or the user who mounted)\n", verb);
	return -EPERM;
}

int ctl_handle_counted(struct tierfs *fs, const struct ctl_counters *cc, const char *request,
		       uid_t peer_uid, char *buf, size_t size)
{
	if (!strcmp(request, "stats"))
		return ctl_stats(fs, cc, CTL_STATS_TEXT, buf, size);
	if (!strcmp(request, "stats bytes"))
		return ctl_stats(fs, cc, CTL_STATS_BYTES, buf, size);
	if (!strcmp(request, "stats json"))
		return ctl_stats(fs, cc, CTL_STATS_JSON, buf, size);
	if (!strncmp(request, "stats prometheus ", 17) && request[17])
		return ctl_stats_prometheus(fs, cc, request + 17, buf, size);
	if (!strncmp(request, "files ", 6))
		return ctl_files(fs, request + 6, peer_uid, buf, size);
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
	if (!strcmp(request, "reset-peaks")) {
		if (!may_change(peer_uid))
			return refuse(peer_uid, "reset-peaks", buf, size);
		budget_reset_peaks(&fs->data);
		snprintf(buf, size, "ok\n");
		return 0;
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
	return ctl_handle_counted(fs, NULL, request, peer_uid, buf, size);
}
