/* SPDX-License-Identifier: MIT */
/*
 * The cgroups a process is in, the memory limit that binds it, and a
 * pollable fd that wakes on memory pressure; on cgroup v1, v2 and hybrid
 * machines.  Nothing here keeps state between calls: every function may be
 * called from any thread.
 */
#ifndef TIERFS_CGROUP_H
#define TIERFS_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Where the memory controller can be found.  The mount points carry the
 * prefix given to cgroup_roots_find() and are "" where nothing is mounted.
 * A mount may show only a subtree (a container's bind mount): its base is
 * the cgroup at the mount point, "/" usually, and is cut from the front of
 * the paths /proc/PID/cgroup gives.
 */
struct cgroup_roots {
	char v1_memory[PATH_MAX];      /* v1 hierarchy with the memory controller */
	char v1_memory_base[PATH_MAX]; /* the cgroup at that mount point */
	char v2[PATH_MAX];	       /* the cgroup2 mount */
	char v2_base[PATH_MAX];	       /* the cgroup at that mount point */
	bool v2_has_memory;	       /* "memory" in <v2>/cgroup.controllers */
};

/*
 * Find the mounts in <prefix>/proc/self/mountinfo (prefix NULL or "" for the
 * running system; a fixture tree in tests): fstype cgroup with the memory
 * super option, and fstype cgroup2.  Mountinfo's octal escapes (\040) are
 * undone; malformed lines are skipped.  When a hierarchy is mounted twice,
 * the first mount wins unless a later one shows the whole tree.
 * Returns 0, -ENOENT when neither is mounted, or -errno from reading
 * mountinfo.
 */
int cgroup_roots_find(const char *prefix, struct cgroup_roots *out);

/*
 * Undo mountinfo's escapes in place: the kernel writes a space, tab, newline
 * or backslash in a path as \ooo, three octal digits.  Only that is undone,
 * for a byte from \001 to \377; any other backslash stays as it is.
 */
void cgroup_mountinfo_unescape(char *s);

/*
 * Parse a /proc/PID/cgroup file: the path of the v1 memory cgroup (a line
 * "N:...,memory,...:/a/b") into v1 and of the v2 cgroup (a line "0::/a/b")
 * into v2, "" for one that is absent.  Either buffer may be NULL.  Lines that
 * are malformed are skipped.  Returns 0, -ENODATA when neither is listed,
 * -ENAMETOOLONG when a path does not fit its buffer, or -errno from opening
 * or reading the file.
 */
int cgroup_of_pid(const char *proc_cgroup_path, char *v1, size_t v1size, char *v2, size_t v2size);

/*
 * cgroup_of_pid() on /proc/<pid>/cgroup.  pid may be a thread id (FUSE
 * passes those).  Returns -ESRCH for pid 0 (FUSE's "from another pid
 * namespace"), and for a process that is gone or hidden.
 */
int cgroup_of(pid_t pid, char *v1, size_t v1size, char *v2, size_t v2size);

struct cgroup_limit {
	uint64_t limit_bytes;  /* the tightest limit; 0 and source "" = none */
	uint64_t usage_bytes;  /* charged to the limiting cgroup now; 0 = unknown */
	char source[PATH_MAX]; /* the file the limit was read from; "" when none */
};

/*
 * The memory limit on the cgroups v1path and v2path (from cgroup_of(); NULL
 * or "" to leave a hierarchy out) and on all their ancestors up to the top
 * of the mount.  The tightest of v2 memory.max and memory.high ("max" = no
 * limit; only read where v2 has the memory controller) and v1
 * memory.limit_in_bytes (2^62 and above = no limit) wins; a v1 parent with
 * memory.use_hierarchy 0 does not limit its children.  Missing or unreadable
 * files are skipped; so is a hierarchy whose path lies outside its mount.
 * With the limit comes the limiting cgroup's usage.
 * Returns 0 (out filled, maybe with no limit) or -EINVAL for a path that is
 * not absolute or has a "." or ".." component.
 */
int cgroup_limit(const struct cgroup_roots *r, const char *v1path, const char *v2path,
		 struct cgroup_limit *out);

/*
 * The page cache (the file LRUs of memory.stat, counted over the subtree)
 * of the cgroup whose limit cl holds, in bytes; UINT64_MAX when there is
 * none or memory.stat says nothing of it.
 */
uint64_t cgroup_file_bytes(const struct cgroup_limit *cl);

enum cgroup_pressure_kind {
	CGROUP_PRESSURE_NONE,
	CGROUP_PRESSURE_V2,	/* PSI trigger on the cgroup's memory.pressure */
	CGROUP_PRESSURE_V1,	/* eventfd on a v1 memory.pressure_level, level low */
	CGROUP_PRESSURE_SYSTEM, /* PSI trigger on /proc/pressure/memory */
};

struct cgroup_pressure {
	int fd;				/* poll this for poll_events; -1 when closed */
	short poll_events;		/* POLLPRI for PSI, POLLIN for v1 */
	enum cgroup_pressure_kind kind; /* the source that worked */
	unsigned int nr_fallbacks;	/* kinds that were tried and failed first */
	char describe[64];		/* for stats: "v1 memory.pressure_level low" */
};

/*
 * Open a pollable fd that wakes when the cgroups v1path/v2path are short of
 * memory, trying in turn:
 *  1. a PSI trigger "some 100 ms in 1 s" on <v2 cgroup>/memory.pressure when
 *     v2 has the memory controller;
 *  2. an eventfd registered through cgroup.event_control for
 *     memory.pressure_level "low", at the v1 cgroup whose limit
 *     cgroup_limit() names (the hierarchy's top when there is none: the
 *     kernel signals the cgroup being reclaimed and its ancestors only);
 *  3. the PSI trigger on the v2 cgroup without the memory controller (PSI
 *     still counts its tasks' stalls);
 *  4. the PSI trigger on /proc/pressure/memory (always the running system's).
 * Without CAP_SYS_RESOURCE the kernel only takes 2 s windows: a refused
 * trigger is retried as "some 200 ms in 2 s".  This writes to the cgroup
 * files: never point it at a fixture tree.  Returns 0 with out filled, or
 * the -errno of the last kind tried, /proc/pressure/memory's (out->fd -1).
 */
int cgroup_pressure_open(const struct cgroup_roots *r, const char *v1path, const char *v2path,
			 struct cgroup_pressure *out);

/*
 * Clear the event after poll() reported poll_events.  Returns the number of
 * v1 events since the last call (0 when there were none), 0 for PSI (the
 * trigger rearms by itself and does not count), or -errno.  A v1 eventfd is
 * also signalled once when its cgroup is removed; a PSI fd then polls
 * POLLERR.
 */
int cgroup_pressure_consume(struct cgroup_pressure *p);

/* Close the fd and unregister the event.  Safe to call twice. */
void cgroup_pressure_close(struct cgroup_pressure *p);

#endif
