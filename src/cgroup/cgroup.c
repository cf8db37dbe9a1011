// SPDX-License-Identifier: MIT
/*
 * cgroup discovery: the memory hierarchies from mountinfo, a process's
 * cgroups from /proc/PID/cgroup, the limit that binds them and a memory
 * pressure fd.  Only small text files are read; nothing is cached.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tierfs/cgroup.h"

/* v1 reports "no limit" as LONG_MAX rounded down to a page, or more. */
#define CGROUP_V1_UNLIMITED (1ULL << 62)
#define CGROUP_V2_UNLIMITED UINT64_MAX

/* out = a + b; -ENAMETOOLONG when it does not fit. */
static int cgroup_join(char *out, size_t size, const char *a, const char *b)
{
	int n = snprintf(out, size, "%s%s", a, b);

	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* Whether item is one of the delims-separated words of list. */
static bool cgroup_list_has(const char *list, const char *delims, const char *item)
{
	size_t len = strlen(item);

	while (*list) {
		size_t n = strcspn(list, delims);

		if (n == len && !strncmp(list, item, len))
			return true;
		list += n;
		if (*list)
			list++;
	}
	return false;
}

/* Read a small file into buf, NUL-terminated.  Returns its length or -errno. */
static int cgroup_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return (int)n;
}

/* A number or "max" (UINT64_MAX), as cgroup files hold them. */
static int cgroup_read_u64(const char *path, uint64_t *out)
{
	char buf[32], *end;
	unsigned long long v;
	int ret = cgroup_read_small(path, buf, sizeof(buf));

	if (ret < 0)
		return ret;
	if (!strcmp(buf, "max\n") || !strcmp(buf, "max")) {
		*out = UINT64_MAX;
		return 0;
	}
	/* strtoull() takes "-1" and leading blanks; cgroup files have neither. */
	if (!isdigit((unsigned char)buf[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || (*end && strcmp(end, "\n")))
		return -EINVAL;
	*out = v;
	return 0;
}

static bool cgroup_is_octal(char c)
{
	return c >= '0' && c <= '7';
}

void cgroup_mountinfo_unescape(char *s)
{
	char *out = s;

	while (*s) {
		/* A byte's worth, never NUL: anything else was not written by the kernel. */
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && cgroup_is_octal(s[2]) &&
		    cgroup_is_octal(s[3]) && (s[1] != '0' || s[2] != '0' || s[3] != '0')) {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/*
 * Keep a mount for a hierarchy: the first one seen, or a later one that
 * shows the whole tree when the kept one shows a subtree.
 */
static void cgroup_keep_mount(char *mount, char *base, const char *prefix, const char *mountpoint,
			      const char *root)
{
	char path[PATH_MAX];

	if (mount[0] && (!strcmp(base, "/") || strcmp(root, "/")))
		return;
	if (strlen(root) >= PATH_MAX || cgroup_join(path, sizeof(path), prefix, mountpoint))
		return;
	strcpy(mount, path);
	strcpy(base, root);
}

/* One mountinfo line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
static void cgroup_parse_mount(char *line, const char *prefix, struct cgroup_roots *out)
{
	char *field[5], *fstype, *super, *save = NULL, *tok;
	int i;

	for (i = 0; i < 5; i++) {
		field[i] = strtok_r(i ? NULL : line, " \n", &save);
		if (!field[i])
			return;
	}
	do {
		tok = strtok_r(NULL, " \n", &save);
	} while (tok && strcmp(tok, "-"));
	fstype = strtok_r(NULL, " \n", &save);
	if (!fstype || !strtok_r(NULL, " \n", &save))
		return;
	super = strtok_r(NULL, " \n", &save);
	if (!super)
		return;
	cgroup_mountinfo_unescape(field[3]);
	cgroup_mountinfo_unescape(field[4]);
	if (field[3][0] != '/' || field[4][0] != '/')
		return;
	if (!strcmp(fstype, "cgroup2"))
		cgroup_keep_mount(out->v2, out->v2_base, prefix, field[4], field[3]);
	else if (!strcmp(fstype, "cgroup") && cgroup_list_has(super, ",", "memory"))
		cgroup_keep_mount(out->v1_memory, out->v1_memory_base, prefix, field[4], field[3]);
}

int cgroup_roots_find(const char *prefix, struct cgroup_roots *out)
{
	char path[PATH_MAX], controllers[512];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!prefix)
		prefix = "";
	ret = cgroup_join(path, sizeof(path), prefix, "/proc/self/mountinfo");
	if (ret)
		return ret;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		cgroup_parse_mount(line, prefix, out);
	ret = ferror(f) ? -EIO : 0;
	free(line);
	fclose(f);
	if (ret)
		return ret;
	if (!out->v1_memory[0] && !out->v2[0])
		return -ENOENT;
	if (out->v2[0] && !cgroup_join(path, sizeof(path), out->v2, "/cgroup.controllers") &&
	    cgroup_read_small(path, controllers, sizeof(controllers)) > 0)
		out->v2_has_memory = cgroup_list_has(controllers, " \n", "memory");
	return 0;
}

/* Copy a cgroup path into a caller's buffer, which may be NULL. */
static int cgroup_copy_path(char *dst, size_t size, const char *path)
{
	if (!dst)
		return 0;
	if (strlen(path) >= size)
		return -ENAMETOOLONG;
	strcpy(dst, path);
	return 0;
}

/* /proc/PID/cgroup lines are "ID:CONTROLLERS:PATH"; PATH may hold ':'. */
static int cgroup_parse_proc(FILE *f, char *v1, size_t v1size, char *v2, size_t v2size)
{
	bool has_v1 = false, has_v2 = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	if (v1 && v1size)
		v1[0] = '\0';
	if (v2 && v2size)
		v2[0] = '\0';
	while ((len = getline(&line, &cap, f)) > 0) {
		char *controllers, *path, *end;
		unsigned long id;
		int err;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		controllers = strchr(line, ':');
		if (!controllers)
			continue;
		*controllers++ = '\0';
		path = strchr(controllers, ':');
		if (!path || !isdigit((unsigned char)line[0]))
			continue;
		*path++ = '\0';
		errno = 0;
		id = strtoul(line, &end, 10);
		if (errno || *end || path[0] != '/')
			continue;
		if (id == 0 && !controllers[0] && !has_v2) {
			err = cgroup_copy_path(v2, v2size, path);
			has_v2 = !err;
		} else if (id != 0 && cgroup_list_has(controllers, ",", "memory") && !has_v1) {
			err = cgroup_copy_path(v1, v1size, path);
			has_v1 = !err;
		} else {
			continue;
		}
		if (err)
			ret = err;
	}
	if (ferror(f))
		ret = -EIO;
	free(line);
	if (!ret && !has_v1 && !has_v2)
		ret = -ENODATA;
	return ret;
}

int cgroup_of_pid(const char *proc_cgroup_path, char *v1, size_t v1size, char *v2, size_t v2size)
{
	FILE *f = fopen(proc_cgroup_path, "re");
	int ret;

	if (!f)
		return -errno;
	ret = cgroup_parse_proc(f, v1, v1size, v2, v2size);
	fclose(f);
	return ret;
}

int cgroup_of(pid_t pid, char *v1, size_t v1size, char *v2, size_t v2size)
{
	char path[64];
	FILE *f;
	int ret;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		ret = errno;
		/* Gone, or hidden by hidepid=: either way not ours to charge. */
		if (ret == ENOENT || ret == ESRCH || ret == EACCES || ret == EPERM)
			return -ESRCH;
		return -ret;
	}
	ret = cgroup_parse_proc(f, v1, v1size, v2, v2size);
	fclose(f);
	return ret;
}

/*
 * The directory of cgroup path in a hierarchy mounted at mount whose top is
 * cgroup base.  -ENOENT when there is no such mount or the path lies outside
 * it; -EINVAL for a path that could climb out of the mount.
 */
static int cgroup_dir(char *dir, size_t size, const char *mount, const char *base, const char *path)
{
	size_t base_len = strlen(base);
	const char *rel = path;

	if (!mount[0] || !path || !path[0])
		return -ENOENT;
	if (path[0] != '/')
		return -EINVAL;
	for (const char *p = path; *p;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		p += n;
	}
	if (strcmp(base, "/")) {
		if (strncmp(path, base, base_len) || (path[base_len] && path[base_len] != '/'))
			return -ENOENT;
		rel = path + base_len;
	}
	if (!strcmp(rel, "/"))
		rel = "";
	return cgroup_join(dir, size, mount, rel);
}

/*
 * Tighten out with the limit file in dir unless it is missing or at least
 * unlimited; the usage file beside it gives the usage.
 */
static void cgroup_consider(const char *dir, const char *limit_file, const char *usage_file,
			    uint64_t unlimited, struct cgroup_limit *out)
{
	char path[PATH_MAX];
	uint64_t limit, usage;

	if (cgroup_join(path, sizeof(path), dir, limit_file) || cgroup_read_u64(path, &limit) < 0 ||
	    limit >= unlimited)
		return;
	if (out->source[0] && limit >= out->limit_bytes)
		return;
	out->limit_bytes = limit;
	strcpy(out->source, path);
	out->usage_bytes = 0;
	if (!cgroup_join(path, sizeof(path), dir, usage_file) && !cgroup_read_u64(path, &usage) &&
	    usage != UINT64_MAX)
		out->usage_bytes = usage;
}

/*
 * Walk dir up to the mount (top bytes of dir), tightening out.  A v1
 * parent with use_hierarchy 0 does not charge, so does not limit, its
 * children: the walk stops below it.
 */
static void cgroup_walk(char *dir, size_t top, bool is_v1, struct cgroup_limit *out)
{
	for (;;) {
		char path[PATH_MAX];
		uint64_t use_hierarchy;

		if (is_v1) {
			cgroup_consider(dir, "/memory.limit_in_bytes", "/memory.usage_in_bytes",
					CGROUP_V1_UNLIMITED, out);
		} else {
			cgroup_consider(dir, "/memory.max", "/memory.current", CGROUP_V2_UNLIMITED,
					out);
			cgroup_consider(dir, "/memory.high", "/memory.current", CGROUP_V2_UNLIMITED,
					out);
		}
		if (strlen(dir) <= top)
			return;
		*strrchr(dir + top, '/') = '\0';
		if (is_v1 && !cgroup_join(path, sizeof(path), dir, "/memory.use_hierarchy") &&
		    !cgroup_read_u64(path, &use_hierarchy) && !use_hierarchy)
			return;
	}
}

int cgroup_limit(const struct cgroup_roots *r, const char *v1path, const char *v2path,
		 struct cgroup_limit *out)
{
	char dir[PATH_MAX];
	int ret;

	memset(out, 0, sizeof(*out));
	if (r->v2_has_memory) {
		ret = cgroup_dir(dir, sizeof(dir), r->v2, r->v2_base, v2path);
		if (ret == -EINVAL)
			return ret;
		if (!ret)
			cgroup_walk(dir, strlen(r->v2), false, out);
	}
	ret = cgroup_dir(dir, sizeof(dir), r->v1_memory, r->v1_memory_base, v1path);
	if (ret == -EINVAL)
		return ret;
	if (!ret)
		cgroup_walk(dir, strlen(r->v1_memory), true, out);
	return 0;
}

/*
 * The sum of the values of keys (NULL-terminated) in the memory.stat of
 * dir; UINT64_MAX where it cannot be read or has none of them.
 */
static uint64_t cgroup_stat_sum(const char *dir, const char *const *keys)
{
	char path[PATH_MAX], line[128];
	uint64_t sum = 0;
	bool is_found = false;
	FILE *f;

	if (cgroup_join(path, sizeof(path), dir, "/memory.stat"))
		return UINT64_MAX;
	f = fopen(path, "re");
	if (!f)
		return UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		char *value = strchr(line, ' ');

		if (!value)
			continue;
		*value++ = '\0';
		for (const char *const *key = keys; *key; key++) {
			if (!strcmp(line, *key)) {
				sum += strtoull(value, NULL, 10);
				is_found = true;
			}
		}
	}
	fclose(f);
	return is_found ? sum : UINT64_MAX;
}

uint64_t cgroup_file_bytes(const struct cgroup_limit *cl)
{
	/* v1's hierarchical counts, v2's (always hierarchical). */
	static const char *const v1_keys[] = { "total_active_file", "total_inactive_file", NULL };
	static const char *const v2_keys[] = { "active_file", "inactive_file", NULL };
	char dir[PATH_MAX];
	char *slash;

	if (!cl->source[0] || snprintf(dir, sizeof(dir), "%s", cl->source) >= (int)sizeof(dir))
		return UINT64_MAX;
	slash = strrchr(dir, '/');
	if (!slash)
		return UINT64_MAX;
	*slash = '\0';
	return cgroup_stat_sum(dir, strcmp(slash + 1, "memory.limit_in_bytes") ? v2_keys : v1_keys);
}

/* Install a PSI trigger on a pressure file. */
static int cgroup_psi_open(const char *path, const char *what, struct cgroup_pressure *out)
{
	static const struct {
		const char *trigger;
		const char *window;
	} triggers[] = {
		{ "some 100000 1000000", "100ms/1s" },
		{ "some 200000 2000000", "200ms/2s" },
	};
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int err = -EINVAL;

	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(triggers) / sizeof(triggers[0]); i++) {
		/* The kernel overwrites the last byte written with a NUL: send ours. */
		if (write(fd, triggers[i].trigger, strlen(triggers[i].trigger) + 1) >= 0) {
			out->fd = fd;
			out->poll_events = POLLPRI;
			snprintf(out->describe, sizeof(out->describe), "%s some %s", what,
				 triggers[i].window);
			return 0;
		}
		err = -errno;
		/* Without CAP_SYS_RESOURCE: EINVAL for short windows (EPERM before 6.5). */
		if (err != -EINVAL && err != -EPERM)
			break;
	}
	close(fd);
	return err;
}

/* Register an eventfd for memory.pressure_level "low" of the v1 cgroup in dir. */
static int cgroup_v1_level_open(const char *dir, struct cgroup_pressure *out)
{
	char path[PATH_MAX], cmd[64];
	int efd, level_fd, control_fd, n, err;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	err = cgroup_join(path, sizeof(path), dir, "/memory.pressure_level");
	if (err)
		goto close_efd;
	level_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (level_fd < 0) {
		err = -errno;
		goto close_efd;
	}
	err = cgroup_join(path, sizeof(path), dir, "/cgroup.event_control");
	if (err)
		goto close_level;
	control_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (control_fd < 0) {
		err = -errno;
		goto close_level;
	}
	n = snprintf(cmd, sizeof(cmd), "%d %d low", efd, level_fd);
	if (write(control_fd, cmd, (size_t)n) < 0)
		err = -errno;
	close(control_fd);
	/* The kernel needs pressure_level's fd only while registering. */
	close(level_fd);
	if (err)
		goto close_efd;
	out->fd = efd;
	out->poll_events = POLLIN;
	snprintf(out->describe, sizeof(out->describe), "v1 memory.pressure_level low");
	return 0;

close_level:
	close(level_fd);
close_efd:
	close(efd);
	return err;
}

/*
 * The v1 cgroup to listen at: the kernel raises pressure_level events at
 * the cgroup being reclaimed (the one at its limit) and its ancestors.
 */
static int cgroup_v1_level_dir(const struct cgroup_roots *r, const char *v1path, char *dir,
			       size_t size)
{
	struct cgroup_limit limit;
	int ret;

	ret = cgroup_dir(dir, size, r->v1_memory, r->v1_memory_base, v1path);
	if (ret)
		return ret;
	/* Global reclaim: events go to the root only. */
	if (cgroup_limit(r, v1path, NULL, &limit) || !limit.source[0])
		return cgroup_join(dir, size, r->v1_memory, "");
	*strrchr(limit.source, '/') = '\0';
	return cgroup_join(dir, size, limit.source, "");
}

int cgroup_pressure_open(const struct cgroup_roots *r, const char *v1path, const char *v2path,
			 struct cgroup_pressure *out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int err;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (r->v2_has_memory && !cgroup_dir(dir, sizeof(dir), r->v2, r->v2_base, v2path) &&
	    !cgroup_join(path, sizeof(path), dir, "/memory.pressure")) {
		err = cgroup_psi_open(path, "v2 memory.pressure", out);
		if (!err) {
			out->kind = CGROUP_PRESSURE_V2;
			return 0;
		}
		out->nr_fallbacks++;
	}
	if (!cgroup_v1_level_dir(r, v1path, dir, sizeof(dir))) {
		err = cgroup_v1_level_open(dir, out);
		if (!err) {
			out->kind = CGROUP_PRESSURE_V1;
			return 0;
		}
		out->nr_fallbacks++;
	}
	if (!r->v2_has_memory && !cgroup_dir(dir, sizeof(dir), r->v2, r->v2_base, v2path) &&
	    !cgroup_join(path, sizeof(path), dir, "/memory.pressure")) {
		err = cgroup_psi_open(path, "v2 memory.pressure (no memcg)", out);
		if (!err) {
			out->kind = CGROUP_PRESSURE_V2;
			return 0;
		}
		out->nr_fallbacks++;
	}
	err = cgroup_psi_open("/proc/pressure/memory", "/proc/pressure/memory", out);
	if (!err) {
		out->kind = CGROUP_PRESSURE_SYSTEM;
		return 0;
	}
	out->nr_fallbacks++;
	return err;
}

int cgroup_pressure_consume(struct cgroup_pressure *p)
{
	uint64_t count;

	if (p->fd < 0)
		return -EBADF;
	if (p->kind != CGROUP_PRESSURE_V1)
		return 0;
	if (read(p->fd, &count, sizeof(count)) < 0)
		return errno == EAGAIN ? 0 : -errno;
	return count > INT_MAX ? INT_MAX : (int)count;
}

void cgroup_pressure_close(struct cgroup_pressure *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->kind = CGROUP_PRESSURE_NONE;
}
