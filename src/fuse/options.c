// SPDX-License-Identifier: MIT
/*
 * Option parsing.  tierfs's own keys are checked here; the usual mount
 * flags are passed on to the kernel; anything else stops the mount with a
 * message that names it.  A remount is checked here too, against the
 * options the mount runs with.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/codec.h"
#include "tierfs/options.h"
#include "tierfs/readahead.h"

const char options_usage[] =
	"usage: tierfs [SOURCE] MOUNTPOINT [-o OPTIONS] [--config FILE] [-f] [-d] [-s]\n"
	"       tierfs --config FILE [-o OPTIONS] [-f]  (FILE gives mountpoint=)\n"
	"       tierfs -h|--help, tierfs -V|--version\n"
	"\n"
	"  --config FILE  options from FILE, one or a comma list per line, '#' for a\n"
	"                 comment, mountpoint=PATH for the mount point; where it\n"
	"                 stands, so a later -o overrides it\n"
	"  -f             stay in the foreground\n"
	"  -d             debug: print every request (implies -f)\n"
	"  -s             serve requests on one thread\n"
	"  -h, --help     print this and exit\n"
	"  -V, --version  print the version and exit\n"
	"\n"
	"SIZE is bytes with a " OPTIONS_SUFFIXES " suffix (powers of 1024) or N% of RAM.\n"
	"  -o size=SIZE   file data limit, N% may pass 100; 0 = none (50%)\n"
	"  -o nr_inodes=N inode limit, same suffixes or N% of RAM pages; 0 = none (RAM pages/2)\n"
	"  -o mode=OCTAL  root directory mode (1777)\n"
	"  -o uid=N,gid=N root directory owner (the mounting user)\n"
	"  -o cache=auto|always|never  kernel page cache use (auto)\n"
	"  -o transport=auto|uring|classic  how requests reach the daemon: FUSE over\n"
	"                 io_uring or /dev/fuse (auto)\n"
	"  -o ring_poll=US  after a request, up to two of the ring's threads look for\n"
	"                 the next one this many microseconds before they sleep; 0: never (50)\n"
	"  -o mem=SIZE    resident budget, at least 4k (half of MemAvailable)\n"
	"  -o memlimit=SIZE  memory the daemon may use in all: resident pages, a RAM\n"
	"                 backend's pool, page stock and descriptors; at least 32m (none)\n"
	"  -o backend=zpool|ramdisk|file:PATH|redis://HOST:PORT[,...]|none  where\n"
	"                 evicted pages go (zpool); zpool+file:PATH, zpool+redis://...\n"
	"                 (or ramdisk+...): a RAM tier written back to the last as it fills;\n"
	"                 redis://...+file:PATH: the file takes what redis turns away\n"
	"  -o redis_timeout=MS  a redis request's bound, retries included (5000)\n"
	"  -o redis_ttl=SECONDS  the mount's redis keys' time to live, re-armed while\n"
	"                 it runs: a dead mount's keys expire, and so do those of a\n"
	"                 daemon stopped that long; 0: never (86400)\n"
	"  -o redis_wait=N  a store is done when N replicas have it (0)\n"
	"  -o redis_auth=FILE  \"PASSWORD\" or \"USER PASSWORD\", in a file only the\n"
	"                 daemon's user can read\n"
	"  -o pool_max=SIZE|N%  a chain's RAM tier bound, N% of the memory limit (25%)\n"
	"  -o encrypt=on|off  seal what the file and redis backends store with a\n"
	"                 per-mount key (on)\n"
	"  -o compressor=lz4|zstd[:LEVEL]  zpool's compressor (lz4)\n"
	"  -o swapsize=SIZE  backend capacity (size=; the file backend: what size= needs\n"
	"                 beyond mem=, or an existing swap file's size)\n"
	"  -o cg_share=N%  a tenant cgroup's resident share of its own limit (50%)\n"
	"  -o readahead=auto|direct|cluster|vma  swap-in readahead (auto: vma for the\n"
	"                 file and redis backends with cache=never, else direct)\n"
	"  -o allow_other others may use the mount (default when root)\n"
	"  -o log=syslog|stderr|FILE  where the daemon logs (stderr with -f, else\n"
	"                 syslog; /dev/kmsg when nothing listens at /dev/log)\n"
	"  tmpfs's too: nr_blocks=N (size= in 4 KiB pages), noswap (backend=none),\n"
	"                 inode32|inode64, mpol=POLICY (the daemon's memory),\n"
	"                 huge=VALUE (taken, pages stay 4 KiB); no quota options\n"
	"  and the usual mount flags: ro, rw, nosuid, nodev, noexec, noatime, ...\n";

static const char *const cache_names[] = {
	[CACHE_AUTO] = "auto", [CACHE_ALWAYS] = "always", [CACHE_NEVER] = "never", NULL
};
static const char *const transport_names[] = {
	[TRANSPORT_AUTO] = "auto", [TRANSPORT_URING] = "uring", [TRANSPORT_CLASSIC] = "classic", NULL
};

const char *options_transport_name(enum transport_mode mode)
{
	return transport_names[mode];
}

const char *options_cache_name(enum cache_mode mode)
{
	return cache_names[mode];
}

/* The index of val in the NULL-ended names, or -1. */
static int parse_choice(const char *const *names, const char *val)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], val))
			return i;
	return -1;
}

/* Flags mount(8) and fstab use that go to the kernel unchanged. */
static const char *const kernel_flags[] = {
	"ro",	    "rw",	  "suid",	 "nosuid",	  "dev",
	"nodev",    "exec",	  "noexec",	 "sync",	  "async",
	"dirsync",  "atime",	  "noatime",	 "diratime",	  "nodiratime",
	"relatime", "norelatime", "strictatime", "nostrictatime", "auto_unmount",
	NULL,
};

/* The atime flags in order, the last one winning, as a remount applies them. */
static void set_atime(struct tierfs_options *o, const char *flag)
{
	if (!strcmp(flag, "noatime"))
		o->atime = ATIME_NONE;
	else if (!strcmp(flag, "strictatime") || !strcmp(flag, "norelatime"))
		o->atime = ATIME_STRICT;
	else if (!strcmp(flag, "atime") || !strcmp(flag, "relatime") ||
		 !strcmp(flag, "nostrictatime"))
		o->atime = ATIME_RELATIME;
	else if (!strcmp(flag, "nodiratime") || !strcmp(flag, "diratime"))
		o->is_nodiratime = !strcmp(flag, "nodiratime");
}

/* Flags for mount(8) itself (fstab), meaningless to tierfs: accepted and dropped. */
static const char *const ignored_flags[] = {
	"defaults", "auto",   "noauto",
	"user",	    "nouser", "users",
	"_netdev",  "nofail", "default_permissions",
	NULL,
};

/*
 * What /proc/mounts shows of the FUSE connection besides the flags above:
 * mount(8) repeats it on a remount, and it is libfuse's to set, not ours.
 */
static const char *const fuse_keys[] = {
	"user_id", "group_id", "rootmode", "max_read", "blksize", "fd", NULL,
};

/* The options that change on a remount (tierctl set takes them too). */
static const char *const live_keys[] = {
	"size", "nr_inodes", "mem", "memlimit", "readahead", "pool_max", NULL,
};

static bool is_in(const char *const *list, const char *key)
{
	for (; *list; list++)
		if (!strcmp(*list, key))
			return true;
	return false;
}

int options_parse_size(const char *s, uint64_t whole, uint64_t *out)
{
	unsigned long long v;
	char *end;
	unsigned int shift = 0;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	/* Above 100% too, as tmpfs takes size=200%: a swap tier holds more than RAM. */
	if (*end == '%' && !end[1]) {
		unsigned __int128 part = (unsigned __int128)whole * v / 100;

		if (part > UINT64_MAX)
			return -EINVAL;
		*out = (uint64_t)part;
		return 0;
	}
	switch (*end) {
	case 'e':
	case 'E':
		shift += 10; /* fall through */
	case 'p':
	case 'P':
		shift += 10; /* fall through */
	case 't':
	case 'T':
		shift += 10; /* fall through */
	case 'g':
	case 'G':
		shift += 10; /* fall through */
	case 'm':
	case 'M':
		shift += 10; /* fall through */
	case 'k':
	case 'K':
		shift += 10;
		end++;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

void options_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffixes[] = "kmgtpe";
	int i = -1;

	while (bytes && !(bytes & 1023) && i < 5) {
		bytes >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes, suffixes[i]);
}

static uint64_t min_mem(const char *key)
{
	return strcmp(key, "memlimit") ? OPTIONS_MIN_MEM : BUDGET_MIN_LIMIT;
}

static int below_minimum(const char *key, const char *val, char *msg, size_t msg_len)
{
	char min[32];

	options_format_size(min_mem(key), min, sizeof(min));
	snprintf(msg, msg_len, "invalid %s= value '%s': the minimum is %s%s", key, val, min,
		 min_mem(key) == OPTIONS_MIN_MEM ? " (one page)" : "");
	return -EINVAL;
}

int options_parse_amount(const char *key, const char *val, uint64_t ram, uint64_t *out, char *msg,
			 size_t msg_len)
{
	bool is_count = !strcmp(key, "nr_inodes"), is_mem = !strncmp(key, "mem", 3);
	uint64_t v;

	/* nr_inodes=N% is a tierfs extension (tmpfs has none), up to all RAM pages. */
	if (options_parse_size(val, is_count ? ram / 4096 : ram, &v) ||
	    (is_count && strchr(val, '%') && v > ram / 4096)) {
		snprintf(msg, msg_len, "invalid %s= value '%s': want %s", key, val,
			 is_count ? OPTIONS_COUNT_FORM : OPTIONS_SIZE_FORM);
		return -EINVAL;
	}
	/* Below a page, mem= became 0 pages, which means no cap at all. */
	if (is_mem && v < min_mem(key) && (v || strcmp(key, "memlimit")))
		return below_minimum(key, val, msg, msg_len);
	*out = v;
	/* A budget the machine cannot give is allowed, but is a slip more often than not. */
	if (is_mem && v > ram) {
		snprintf(msg, msg_len, "%s= value '%s' is more than the machine's RAM (%.1f GiB)",
			 key, val, (double)ram / (1 << 30));
		return 1;
	}
	return 0;
}

static int parse_uint(const char *s, int base, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, base);
	if (errno || *end || *out > max)
		return -EINVAL;
	return 0;
}

static int add_kernel_opt(struct tierfs_options *o, const char *opt)
{
	size_t len = strlen(o->kernel_opts);

	if (len + strlen(opt) + 2 > sizeof(o->kernel_opts))
		return -EINVAL;
	snprintf(o->kernel_opts + len, sizeof(o->kernel_opts) - len, "%s%s", len ? "," : "", opt);
	return 0;
}

#define fail(...) (snprintf(err, err_len, __VA_ARGS__), -EINVAL)

int options_parse_pool_max(const char *s, uint64_t *bytes, unsigned int *pct, bool *is_pct)
{
	size_t len = strlen(s);
	char *end;

	if (len && s[len - 1] == '%') {
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end != s + len - 1 || s[0] < '0' || s[0] > '9' || v > 100)
			return -EINVAL;
		*bytes = 0;
		*pct = (unsigned int)v;
		*is_pct = true;
		return 0;
	}
	if (options_parse_size(s, 0, bytes))
		return -EINVAL;
	*pct = 0;
	*is_pct = false;
	return 0;
}

const char *options_backend_name(const struct tierfs_options *o, char *buf, size_t size)
{
	if (!o->backend)
		snprintf(buf, size, "none");
	else if (o->upper || o->spill_path[0])
		snprintf(buf, size, "%s%s%s%s", o->upper ? o->upper->name : "", o->upper ? "+" : "",
			 o->lower->name, o->spill_path[0] ? "+file" : "");
	else
		snprintf(buf, size, "%s", o->backend->name);
	return buf;
}

const char *options_backend_spec(const struct tierfs_options *o, char *buf, size_t size)
{
	if (!o->lower)
		return options_backend_name(o, buf, size);
	snprintf(buf, size, "%s%s%s:%s%s%s", o->upper ? o->upper->name : "", o->upper ? "+" : "",
		 o->lower->name, o->swap_path, o->spill_path[0] ? "+file:" : "", o->spill_path);
	return buf;
}

/* What backend= takes in this build: "zpool, ramdisk, file:PATH or none". */
static const char *backend_values(char *buf, size_t size)
{
	size_t len = 0;

	for (const struct tier_backend_ops *const *b = backend_table; *b && len < size; b++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", (*b)->name,
					!strcmp((*b)->name, "file")  ? ":PATH, " :
					!strcmp((*b)->name, "redis") ? "://HOST:PORT, " :
								       ", ");
	if (len >= 2 && len < size)
		snprintf(buf + len - 2, size - len + 2, " or none");
	return buf;
}

/* size=, nr_inodes=, mem= or memlimit= into out; a warning is added to the lines in err. */
static int parse_amount(const char *key, const char *val, uint64_t ram, uint64_t *out, char *err,
			size_t err_len)
{
	char msg[256];
	size_t len = strlen(err);
	int ret = options_parse_amount(key, val, ram, out, msg, sizeof(msg));

	if (ret < 0)
		return fail("%s", msg);
	if (ret)
		snprintf(err + len, err_len - len, "%s\n", msg);
	return 0;
}

static int parse_one(struct tierfs_options *o, char *opt, uint64_t ram, char *err, size_t err_len)
{
	char *val = strchr(opt, '=');
	unsigned long long n;

	if (val)
		*val++ = '\0';
	if (!strcmp(opt, "size") && val) {
		if (parse_amount(opt, val, ram, &o->size, err, err_len))
			return -EINVAL;
	} else if (!strcmp(opt, "nr_inodes") && val) {
		if (parse_amount(opt, val, ram, &o->nr_inodes, err, err_len))
			return -EINVAL;
	} else if (!strcmp(opt, "mode") && val) {
		if (parse_uint(val, 8, 07777, &n))
			return fail("invalid mode= value '%s': want octal up to 7777", val);
		o->mode = (mode_t)n;
	} else if (!strcmp(opt, "uid") && val) {
		if (parse_uint(val, 10, UINT32_MAX - 1, &n))
			return fail("invalid uid= value '%s'", val);
		o->uid = (uid_t)n;
	} else if (!strcmp(opt, "gid") && val) {
		if (parse_uint(val, 10, UINT32_MAX - 1, &n))
			return fail("invalid gid= value '%s'", val);
		o->gid = (gid_t)n;
	} else if (!strcmp(opt, "cache") && val) {
		int i = parse_choice(cache_names, val);

		if (i < 0)
			return fail("invalid cache= value '%s': want auto, always or never", val);
		o->cache = (enum cache_mode)i;
	} else if (!strcmp(opt, "transport") && val) {
		int i = parse_choice(transport_names, val);

		if (i < 0)
			return fail("invalid transport= value '%s': want auto, uring or classic",
				    val);
		o->transport = (enum transport_mode)i;
	} else if (!strcmp(opt, "mem") && val) {
		if (parse_amount(opt, val, ram, &o->mem, err, err_len))
			return -EINVAL;
	} else if (!strcmp(opt, "cg_share") && val) {
		char *end;
		unsigned long pct = strtoul(val, &end, 10);

		if (end == val || (*end && strcmp(end, "%")) || !pct || pct > 100)
			return fail("invalid cg_share= value '%s': want 1%% to 100%%", val);
		o->cg_share = (unsigned int)pct;
	} else if (!strcmp(opt, "readahead") && val) {
		if (readahead_parse(val, &o->readahead))
			return fail(
				"invalid readahead= value '%s': want auto, direct, cluster or vma",
				val);
	} else if (!strcmp(opt, "memlimit") && val) {
		if (parse_amount(opt, val, ram, &o->memlimit, err, err_len))
			return -EINVAL;
		/* None is the default here: the daemon's cgroup may set one. */
		if (!o->memlimit)
			return below_minimum(opt, val, err, err_len);
	} else if (!strcmp(opt, "nr_blocks") && val) {
		uint64_t blocks;

		/* tmpfs's size in pages: a count with a suffix, no %. */
		if (strchr(val, '%') || options_parse_size(val, 0, &blocks) ||
		    blocks > UINT64_MAX / PAGE_SIZE)
			return fail("invalid nr_blocks= value '%s': want a count of 4 KiB pages "
				    "with a %s suffix",
				    val, OPTIONS_SUFFIXES);
		o->size = blocks * PAGE_SIZE;
	} else if (!strcmp(opt, "noswap") && !val) {
		o->is_noswap = true;
	} else if ((!strcmp(opt, "inode64") || !strcmp(opt, "inode32")) && !val) {
		o->is_inode32 = !strcmp(opt, "inode32");
	} else if (!strcmp(opt, "huge") && val) {
		static const char *const huge_names[] = {
			"never", "always", "within_size", "advise", NULL,
		};
		size_t len = strlen(err);

		if (parse_choice(huge_names, val) < 0)
			return fail("invalid huge= value '%s': want never, always, within_size or "
				    "advise",
				    val);
		if (strcmp(val, "never"))
			snprintf(err + len, err_len - len,
				 "huge=%s: ignored: tierfs keeps file data in 4 KiB pages\n", val);
	} else if (!strcmp(opt, "mpol") && val) {
		char msg[256];

		if (mpol_parse(val, NULL, &o->mpol, msg, sizeof(msg)))
			return fail("%s", msg);
		o->has_mpol = true;
	} else if (!strcmp(opt, "quota") || !strcmp(opt, "usrquota") || !strcmp(opt, "grpquota") ||
		   !strncmp(opt, "usrquota_", 9) || !strncmp(opt, "grpquota_", 9)) {
		return fail("%s%s%s: tierfs has no quotas; nr_inodes= and size= bound the "
			    "whole mount",
			    opt, val ? "=" : "", val ? val : "");
	} else if (!strcmp(opt, "log") && val) {
		if (!strcmp(val, "syslog")) {
			o->log_target = LOG_TARGET_SYSLOG;
		} else if (!strcmp(val, "stderr")) {
			o->log_target = LOG_TARGET_STDERR;
		} else if (val[0] == '/' && strlen(val) < sizeof(o->log_path)) {
			o->log_target = LOG_TARGET_FILE;
			snprintf(o->log_path, sizeof(o->log_path), "%s", val);
		} else {
			return fail("invalid log= value '%s': want syslog, stderr or an absolute "
				    "file path",
				    val);
		}
	} else if (!strcmp(opt, "swapsize") && val) {
		if (options_parse_size(val, ram, &o->swapsize) || !o->swapsize)
			return fail("invalid swapsize= value '%s': want %s", val,
				    OPTIONS_SIZE_FORM);
	} else if (!strcmp(opt, "backend") && val) {
		o->is_backend_given = true;
		/*
		 * [RAM+]NAME[:ARG][+file:PATH]: a RAM tier's name has no ':', a
		 * seed list no '+', and the file's path, last, may hold either.
		 */
		const char *plus = strchr(val, '+'), *last = val, *spill = NULL, *why;
		bool is_redis;
		size_t len;
		char values[160], upper[16];

		if (plus && memchr(val, ':', (size_t)(plus - val)))
			plus = NULL;
		if (plus)
			last = plus + 1;
		is_redis = !strncmp(last, "redis:", 6);
		if (is_redis && strchr(last, '+'))
			spill = strchr(last, '+') + 1;
		snprintf(upper, sizeof(upper), "%.*s", plus ? (int)(plus - val) : 0, val);
		/* Each tier named, the one this build left out named in the message. */
		for (int t = 0; t < 3; t++) {
			const char *part = t == 0 ? upper : t == 1 ? last : spill;

			if (part && *part && (why = backend_why_left_out(part)))
				return fail("backend=%.*s: not built in (%s)",
					    (int)strcspn(part, ":+"), part, why);
		}
		o->upper = o->lower = NULL;
		o->spill_path[0] = '\0';
		if (plus) {
			o->upper = backend_find(upper);
			if (!o->upper || !o->upper->is_sync ||
			    (strncmp(last, "file:", 5) && !is_redis))
				return fail(
					"invalid backend= value '%s': a chain is zpool+file:PATH, "
					"zpool+redis://HOST:PORT, zpool+redis://HOST:PORT+file:PATH "
					"or the same with ramdisk",
					val);
		}
		if (is_redis) {
			/* swap_path holds what follows "redis:", "//HOST:PORT,...". */
			len = spill ? (size_t)(spill - 1 - (last + 6)) : strlen(last + 6);
			if (strncmp(last + 6, "//", 2) || len <= 2 || len >= sizeof(o->swap_path))
				return fail("invalid backend= value '%s': want %sredis://HOST:PORT"
					    "[,HOST:PORT...][+file:PATH]",
					    val, plus ? "zpool+" : "");
			if (spill && (strncmp(spill, "file:", 5) || !spill[5] ||
				      strlen(spill + 5) >= sizeof(o->spill_path)))
				return fail("invalid backend= value '%s': after redis://HOST:PORT "
					    "comes +file:PATH, the swap file for what redis turns "
					    "away",
					    val);
			if (spill && spill[5] != '/')
				return fail(
					"invalid backend= value '%s': the swap file's path %s is "
					"not absolute",
					val, spill + 5);
			memcpy(o->swap_path, last + 6, len);
			o->swap_path[len] = '\0';
			if (spill)
				strcpy(o->spill_path, spill + 5);
			o->lower = backend_find("redis");
			o->backend = plus || spill ? &tier_backend_chain : o->lower;
		} else if (!strncmp(last, "file:", 5)) {
			if (!last[5] || strlen(last + 5) >= sizeof(o->swap_path))
				return fail("invalid backend= value '%s': want %sfile:PATH", val,
					    plus ? "zpool+" : "");
			/* The daemon runs from /, and a remount names the same file. */
			if (last[5] != '/')
				return fail("invalid backend= value '%s': the swap file's path %s "
					    "is not absolute",
					    val, last + 5);
			strcpy(o->swap_path, last + 5);
			o->lower = backend_find("file");
			o->backend = plus ? &tier_backend_chain : o->lower;
		} else if (!strcmp(val, "none")) {
			o->backend = NULL;
		} else if (strcmp(val, "file") && strcmp(val, "redis") && backend_find(val)) {
			o->backend = backend_find(val);
		} else {
			return fail("invalid backend= value '%s': want %s", val,
				    backend_values(values, sizeof(values)));
		}
	} else if (!strcmp(opt, "ring_poll") && val) {
		if (parse_uint(val, 10, OPTIONS_RING_POLL_MAX_US, &n))
			return fail("invalid ring_poll= value '%s': want microseconds, 0 to %u",
				    val, OPTIONS_RING_POLL_MAX_US);
		o->ring_poll_us = (unsigned int)n;
		o->is_ring_poll_given = true;
	} else if (!strcmp(opt, "redis_timeout") && val) {
		if (parse_uint(val, 10, 600000, &n) || !n)
			return fail("invalid redis_timeout= value '%s': want milliseconds, 1 to "
				    "600000",
				    val);
		o->redis_timeout_ms = (unsigned int)n;
	} else if (!strcmp(opt, "redis_ttl") && val) {
		if (parse_uint(val, 10, 30 * 86400, &n) || (n && n < 3))
			return fail("invalid redis_ttl= value '%s': want seconds, 0 (never) or 3 "
				    "to 2592000",
				    val);
		o->redis_ttl_s = (unsigned int)n;
	} else if (!strcmp(opt, "redis_wait") && val) {
		if (parse_uint(val, 10, 16, &n))
			return fail("invalid redis_wait= value '%s': want replicas, 0 to 16", val);
		o->redis_wait = (unsigned int)n;
	} else if (!strcmp(opt, "redis_auth") && val) {
		if (!*val || strlen(val) >= sizeof(o->redis_auth))
			return fail("invalid redis_auth= value '%s': want the path of a file", val);
		strcpy(o->redis_auth, val);
	} else if (!strcmp(opt, "pool_max") && val) {
		if (options_parse_pool_max(val, &o->pool_max_bytes, &o->pool_max_pct,
					   &o->is_pool_max_pct))
			return fail("invalid pool_max= value '%s': want a size (%s) or N%% of the "
				    "memory limit, up to 100%%",
				    val, "bytes with a " OPTIONS_SUFFIXES " suffix");
	} else if (!strcmp(opt, "encrypt") && val) {
		if (strcmp(val, "on") && strcmp(val, "off"))
			return fail("invalid encrypt= value '%s': want on or off", val);
		o->is_encrypted = !strcmp(val, "on");
	} else if (!strcmp(opt, "compressor") && val) {
		const char *why = codec_why_left_out(val);

		if (why)
			return fail("compressor=%.*s: not built in (%s)", (int)strcspn(val, ":"),
				    val, why);
		if (codec_parse(val, &o->codec, &o->codec_level))
			return fail("invalid compressor= value '%s': want one of %s, with :LEVEL",
				    val, codec_names);
	} else if (!strcmp(opt, "remount") && !val && o->is_remount) {
		return 0;
	} else if (val && o->is_remount && is_in(fuse_keys, opt)) {
		return 0;
	} else if (!strcmp(opt, "allow_other") && !val) {
		o->allow_other = true;
	} else if ((!strcmp(opt, "fsname") || !strcmp(opt, "subtype")) && val) {
		return 0; /* tierfs names itself */
	} else if (!val && is_in(kernel_flags, opt)) {
		/* libfuse 3.14 refuses these: the daemon sets them (daemon.c set_atime_attr). */
		bool is_libfuse_flag = !strstr(opt, "relatime") && !strstr(opt, "strictatime") &&
				       !strstr(opt, "diratime");

		set_atime(o, opt);
		if ((o->is_remount || is_libfuse_flag) && add_kernel_opt(o, opt))
			return fail("too many mount options");
	} else if ((!val && is_in(ignored_flags, opt)) || !strncmp(opt, "x-", 2) ||
		   (!strcmp(opt, "comment") && val)) {
		return 0;
	} else if (val) {
		return fail("unknown option '%s=%s'", opt, val);
	} else {
		return fail("unknown option '%s'", opt);
	}
	return 0;
}

/*
 * Cut s in place into its options, each ended by a '\0', and return the end
 * of the last.  Options end at a comma; "\," is a comma within one
 * (redis://A\,B), as in libfuse, and so is one before a digit in mpol=, as
 * tmpfs takes "mpol=bind:0,2".
 */
static char *split_list(char *s)
{
	char *out = s, *opt = s;

	for (const char *p = s; *p; p++) {
		bool is_in_nodes = p[0] == ',' && isdigit((unsigned char)p[1]) && out - opt > 5 &&
				   !strncmp(opt, "mpol=", 5);

		if (p[0] == '\\' && p[1] == ',') {
			*out++ = *++p;
		} else if (*p == ',' && !is_in_nodes) {
			*out++ = '\0';
			opt = out;
		} else {
			*out++ = *p;
		}
	}
	*out = '\0';
	return out;
}

static int parse_list(struct tierfs_options *o, const char *list, uint64_t ram, char *err,
		      size_t err_len)
{
	char *copy = strdup(list), *end;
	int ret = 0;

	if (!copy)
		return fail("out of memory");
	end = split_list(copy);
	for (char *opt = copy; opt < end && !ret;) {
		size_t len = strlen(opt);

		if (len)
			ret = parse_one(o, opt, ram, err, err_len);
		opt += len + 1;
	}
	free(copy);
	return ret;
}

/* The option list of argv[*i] if it is -oLIST or -o LIST (*i moved past it), else NULL. */
static const char *list_at(int argc, char **argv, int *i)
{
	if (strncmp(argv[*i], "-o", 2))
		return NULL;
	if (argv[*i][2])
		return argv[*i] + 2;
	return *i + 1 < argc ? argv[++*i] : NULL;
}

static bool has_remount(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *list = list_at(argc, argv, &i);

		for (const char *p = list; p && *p; p += strcspn(p, ",")) {
			p += *p == ',';
			if (!strncmp(p, "remount", 7) && (!p[7] || p[7] == ','))
				return true;
		}
	}
	return false;
}

int options_join_lists(int argc, char **argv, char *out, size_t len)
{
	size_t n = 0;

	if (len)
		out[0] = '\0';
	for (int i = 1; i < argc; i++) {
		const char *list = list_at(argc, argv, &i);

		if (list)
			n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
					      list);
	}
	return n < len ? 0 : -E2BIG;
}

/* The first key whose value differs between a and b among those a remount cannot change. */
static const char *fixed_change(const struct tierfs_options *a, const struct tierfs_options *b)
{
	if (a->mode != b->mode)
		return "mode=";
	if (a->uid != b->uid)
		return "uid=";
	if (a->gid != b->gid)
		return "gid=";
	if (a->cache != b->cache)
		return "cache=";
	if (a->transport != b->transport)
		return "transport=";
	if (a->ring_poll_us != b->ring_poll_us)
		return "ring_poll=";
	if (a->backend != b->backend || a->upper != b->upper || a->lower != b->lower ||
	    strcmp(a->swap_path, b->swap_path) || strcmp(a->spill_path, b->spill_path))
		return "backend=";
	if (a->redis_timeout_ms != b->redis_timeout_ms)
		return "redis_timeout=";
	if (a->redis_ttl_s != b->redis_ttl_s)
		return "redis_ttl=";
	if (a->redis_wait != b->redis_wait)
		return "redis_wait=";
	if (strcmp(a->redis_auth, b->redis_auth))
		return "redis_auth=";
	if (a->is_encrypted != b->is_encrypted)
		return "encrypt=";
	if (a->codec != b->codec || a->codec_level != b->codec_level)
		return "compressor=";
	if (a->swapsize != b->swapsize)
		return "swapsize=";
	/* 0 is the default, 50%: either may be repeated. */
	if ((a->cg_share ? a->cg_share : 50) != (b->cg_share ? b->cg_share : 50))
		return "cg_share=";
	if (a->allow_other != b->allow_other)
		return "allow_other";
	/* b starts as a copy of a: noswap can only be added, a no-op without a backend. */
	if (b->is_noswap && !a->is_noswap && a->backend)
		return "noswap";
	if (a->log_target != b->log_target || strcmp(a->log_path, b->log_path))
		return "log=";
	if (a->is_inode32 != b->is_inode32)
		return a->is_inode32 ? "inode64" : "inode32";
	if (a->has_mpol != b->has_mpol || a->mpol.mode != b->mpol.mode ||
	    memcmp(a->mpol.nodes, b->mpol.nodes, sizeof(a->mpol.nodes)))
		return "mpol=";
	return NULL;
}

static bool live_differs(const char *key, const struct tierfs_options *a,
			 const struct tierfs_options *b)
{
	if (!strcmp(key, "size"))
		return a->size != b->size;
	if (!strcmp(key, "nr_inodes"))
		return a->nr_inodes != b->nr_inodes;
	if (!strcmp(key, "mem"))
		return a->mem != b->mem;
	if (!strcmp(key, "memlimit"))
		return a->memlimit != b->memlimit;
	if (!strcmp(key, "pool_max"))
		return a->pool_max_bytes != b->pool_max_bytes ||
		       a->pool_max_pct != b->pool_max_pct ||
		       a->is_pool_max_pct != b->is_pool_max_pct;
	return a->readahead != b->readahead;
}

int options_remount(const struct tierfs_options *cur, const char *list, uint64_t ram, char *set,
		    size_t set_len, enum atime_mode *atime, bool *is_nodiratime, char *err,
		    size_t err_len)
{
	const char *vals[sizeof(live_keys) / sizeof(live_keys[0])] = { NULL };
	char blocks_size[24];
	struct tierfs_options o = *cur;
	char *copy = strdup(list), *end;
	const char *changed;
	size_t n = 0;
	int ret = 0;

	if (!copy)
		return fail("out of memory");
	err[0] = '\0';
	o.kernel_opts[0] = '\0';
	o.is_remount = true;
	end = split_list(copy);
	for (char *opt = copy, *next; opt < end && !ret; opt = next) {
		next = opt + strlen(opt) + 1;
		if (!*opt)
			continue;
		ret = parse_one(&o, opt, ram, err, err_len);
		/* parse_one cut opt at its '=': the value follows the key. */
		for (int k = 0; live_keys[k] && !ret; k++)
			if (!strcmp(opt, live_keys[k]))
				vals[k] = opt + strlen(opt) + 1;
		/* nr_blocks= is size= in pages: vals[0] is size='s. */
		if (!ret && !strcmp(opt, "nr_blocks")) {
			snprintf(blocks_size, sizeof(blocks_size), "%llu",
				 (unsigned long long)o.size);
			vals[0] = blocks_size;
		}
	}
	if (ret)
		goto free_copy;
	changed = fixed_change(cur, &o);
	if (changed) {
		ret = fail("%s cannot change on a mounted tierfs", changed);
		goto free_copy;
	}
	/* The warnings come again from set's checks of the same values. */
	err[0] = '\0';
	/* Each live value as given, for the messages, and only if it changes. */
	if (set_len)
		set[0] = '\0';
	for (int k = 0; live_keys[k]; k++)
		if (vals[k] && live_differs(live_keys[k], cur, &o))
			n += (size_t)snprintf(set + n, n < set_len ? set_len - n : 0, "%s%s=%s",
					      n ? " " : "", live_keys[k], vals[k]);
	if (n >= set_len)
		ret = fail("too many options");
	*atime = o.atime;
	*is_nodiratime = o.is_nodiratime;
free_copy:
	free(copy);
	return ret;
}

/* What each kernel flag of a remount sets and clears among statvfs's ST_ bits. */
static const struct {
	const char *name;
	unsigned long set, clear;
} remount_flags[] = {
	{ "ro", ST_RDONLY, 0 },
	{ "rw", 0, ST_RDONLY },
	{ "nosuid", ST_NOSUID, 0 },
	{ "suid", 0, ST_NOSUID },
	{ "nodev", ST_NODEV, 0 },
	{ "dev", 0, ST_NODEV },
	{ "noexec", ST_NOEXEC, 0 },
	{ "exec", 0, ST_NOEXEC },
	{ "sync", ST_SYNCHRONOUS, 0 },
	{ "async", 0, ST_SYNCHRONOUS },
	/* One of noatime, relatime and strictatime; atime is the kernel's default. */
	{ "noatime", ST_NOATIME, ST_RELATIME },
	{ "atime", ST_RELATIME, ST_NOATIME },
	{ "relatime", ST_RELATIME, ST_NOATIME },
	{ "norelatime", 0, ST_RELATIME },
	{ "strictatime", 0, ST_RELATIME | ST_NOATIME },
	{ "nostrictatime", ST_RELATIME, ST_NOATIME },
	{ "nodiratime", ST_NODIRATIME, 0 },
	{ "diratime", 0, ST_NODIRATIME },
};

#define REMOUNT_ST_MASK                                                               \
	(ST_RDONLY | ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_SYNCHRONOUS | ST_NOATIME | \
	 ST_NODIRATIME | ST_RELATIME)

unsigned long options_remount_flags(const struct tierfs_options *o, unsigned long st_flags,
				    bool *is_changed)
{
	unsigned long st = st_flags & REMOUNT_ST_MASK, ms = 0;
	char copy[sizeof(o->kernel_opts)], *save = NULL, *opt;
	bool has_dirsync = false;

	snprintf(copy, sizeof(copy), "%s", o->kernel_opts);
	for (opt = strtok_r(copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		for (size_t i = 0; i < sizeof(remount_flags) / sizeof(remount_flags[0]); i++) {
			if (!strcmp(opt, remount_flags[i].name))
				st = (st & ~remount_flags[i].clear) | remount_flags[i].set;
		}
		/* statvfs does not show it: given, it is passed and counts as a change. */
		has_dirsync |= !strcmp(opt, "dirsync");
	}
	*is_changed = st != (st_flags & REMOUNT_ST_MASK) || has_dirsync;
	ms |= st & ST_RDONLY ? MS_RDONLY : 0;
	ms |= st & ST_NOSUID ? MS_NOSUID : 0;
	ms |= st & ST_NODEV ? MS_NODEV : 0;
	ms |= st & ST_NOEXEC ? MS_NOEXEC : 0;
	ms |= st & ST_SYNCHRONOUS ? MS_SYNCHRONOUS : 0;
	ms |= st & ST_NOATIME ? MS_NOATIME : 0;
	ms |= st & ST_NODIRATIME ? MS_NODIRATIME : 0;
	ms |= has_dirsync ? MS_DIRSYNC : 0;
	/* Without an atime flag the kernel keeps the old ones: say them all. */
	if (st & ST_RELATIME)
		ms |= MS_RELATIME;
	else if (!(st & ST_NOATIME))
		ms |= MS_STRICTATIME;
	return ms;
}

/* The usage, and which backends and compressors this build has. */
static void print_usage(FILE *out)
{
	fputs(options_usage, out);
	fprintf(out, "\nbuilt in: backend=%s; compressor=%s\n", backend_names, codec_names);
	for (size_t i = 0; backend_left_out[i][0]; i++)
		fprintf(out, "not built in: backend=%s (%s)\n", backend_left_out[i][0],
			backend_left_out[i][1]);
	for (size_t i = 0; codec_left_out[i][0]; i++)
		fprintf(out, "not built in: compressor=%s (%s)\n", codec_left_out[i][0],
			codec_left_out[i][1]);
}

/* A line without its leading and trailing blanks, in place. */
static char *trim(char *s)
{
	char *end = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (end > s && strchr(" \t\r\n", end[-1]))
		*--end = '\0';
	return s;
}

/*
 * --config FILE: each line an option list as -o takes it, blank lines and
 * '#' comments skipped, and mountpoint=PATH.  A wrong line fails naming
 * the file and the line.
 */
static int parse_config(struct tierfs_options *o, const char *path, uint64_t ram, char *err,
			size_t err_len)
{
	FILE *f = fopen(path, "re");
	char line[PATH_MAX + 64], msg[512];
	int no = 0, ret = 0;

	if (!f)
		return fail("--config '%s': %s", path, strerror(errno));
	while (!ret && fgets(line, sizeof(line), f)) {
		char *opt;

		no++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = fail("%s:%d: line too long", path, no);
			break;
		}
		opt = trim(line);
		if (!*opt || *opt == '#')
			continue;
		if (!strncmp(opt, "mountpoint=", 11)) {
			if (!opt[11] || strlen(opt + 11) >= sizeof(o->config_mountpoint))
				ret = fail("%s:%d: want mountpoint=PATH", path, no);
			else
				strcpy(o->config_mountpoint, opt + 11);
			continue;
		}
		/* As -o's list, but blanks around the commas are for the reader. */
		for (char *save = NULL, *one = strtok_r(opt, ",", &save); one && !ret;
		     one = strtok_r(NULL, ",", &save))
			ret = parse_one(o, trim(one), ram, err, err_len);
		if (ret) {
			snprintf(msg, sizeof(msg), "%s", err);
			ret = fail("%s:%d: %s", path, no, msg);
		}
	}
	if (!ret && ferror(f))
		ret = fail("--config '%s': %s", path, strerror(EIO));
	fclose(f);
	return ret;
}

int options_parse(int argc, char **argv, uint64_t ram, struct tierfs_options *o, char *err,
		  size_t err_len)
{
	const char *positional[2];
	int nr_positional = 0;
	int ret;

	memset(o, 0, sizeof(*o));
	if (err_len)
		err[0] = '\0';
	o->size = ram / 2;
	o->nr_inodes = ram / 4096 / 2;
	o->mode = 01777;
	o->uid = getuid();
	o->gid = getgid();
	o->cache = CACHE_AUTO;
	o->backend = backend_find("zpool");
	o->pool_max_pct = OPTIONS_POOL_MAX_PCT;
	o->is_pool_max_pct = true;
	o->is_encrypted = true;
	o->redis_ttl_s = OPTIONS_REDIS_TTL_S;
	o->ring_poll_us = OPTIONS_RING_POLL_US;
	o->codec = codec_table[0];
	o->codec_level = o->codec->default_level;
	o->allow_other = getuid() == 0;
	o->source = "tierfs";
	/* A remount's flags say what changes: no defaults among them. */
	o->is_remount = has_remount(argc, argv);
	/* Like a tmpfs mounted by root: set-user-ID files and device nodes work. */
	if (getuid() == 0 && !o->is_remount &&
	    (add_kernel_opt(o, "suid") || add_kernel_opt(o, "dev")))
		return fail("too many mount options");

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage(stdout);
			return 1;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			puts("tierfs " TIERFS_VERSION);
			return 1;
		} else if (!strcmp(a, "-f")) {
			o->foreground = true;
		} else if (!strcmp(a, "-d")) {
			o->debug = o->foreground = true;
		} else if (!strcmp(a, "-s")) {
			o->single_thread = true;
		} else if (!strcmp(a, "--config") || !strncmp(a, "--config=", 9)) {
			const char *path = a[8] ? a + 9 : argv[++i];

			if (!path || !*path)
				return fail("--config needs a FILE");
			ret = parse_config(o, path, ram, err, err_len);
			if (ret)
				return ret;
		} else if (!strncmp(a, "-o", 2)) {
			const char *list = a[2] ? a + 2 : argv[++i];

			if (!list)
				return fail("-o needs an option list");
			ret = parse_list(o, list, ram, err, err_len);
			if (ret)
				return ret;
		} else if (a[0] == '-') {
			return fail("unknown argument '%s'", a);
		} else if (nr_positional < 2) {
			positional[nr_positional++] = a;
		} else {
			return fail("unexpected argument '%s'", a);
		}
	}
	if (!nr_positional && o->config_mountpoint[0])
		positional[nr_positional++] = o->config_mountpoint;
	if (!nr_positional)
		return fail("no mount point given");
	if (nr_positional == 2)
		o->source = positional[0];
	o->mountpoint = positional[nr_positional - 1];
	if (!o->is_remount && (!o->lower || strcmp(o->lower->name, "redis"))) {
		if (o->redis_auth[0])
			return fail("redis_auth=%s: the backend is not redis://", o->redis_auth);
		if (o->redis_timeout_ms || o->redis_wait || o->redis_ttl_s != OPTIONS_REDIS_TTL_S)
			return fail("redis_%s=: the backend is not redis://",
				    o->redis_timeout_ms ? "timeout" :
				    o->redis_wait	? "wait" :
							  "ttl");
	}
	if (o->is_noswap && !o->is_remount) {
		if (o->is_backend_given && o->backend)
			return fail("noswap and backend=: noswap keeps every page in memory, as "
				    "backend=none");
		o->backend = o->upper = o->lower = NULL;
	}
	if (o->transport == TRANSPORT_CLASSIC && o->is_ring_poll_given)
		return fail("ring_poll=%u: transport=classic has no ring", o->ring_poll_us);
	if (o->allow_other && !o->is_remount && add_kernel_opt(o, "allow_other"))
		return fail("too many mount options");
	return 0;
}
