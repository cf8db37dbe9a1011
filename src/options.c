// SPDX-License-Identifier: MIT
/*
 * Option parsing.  tierfs's own keys are checked here; the usual mount
 * flags are passed on to the kernel; anything else stops the mount with a
 * message that names it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/codec.h"
#include "tierfs/options.h"
#include "tierfs/readahead.h"

const char options_usage[] =
	"usage: tierfs [SOURCE] MOUNTPOINT [-o OPTIONS] [-f] [-d] [-s]\n"
	"       tierfs -h|--help, tierfs -V|--version\n"
	"\n"
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
	"  -o mem=SIZE    resident budget, at least 4k (half of MemAvailable)\n"
	"  -o memlimit=SIZE  memory the daemon may use in all: resident pages, a RAM\n"
	"                 backend's pool, page stock and descriptors; at least 32m (none)\n"
	"  -o backend=zpool|ramdisk|file:PATH|none  where evicted pages go (zpool)\n"
	"  -o compressor=lz4|zstd[:LEVEL]  zpool's compressor (lz4)\n"
	"  -o swapsize=SIZE  backend capacity (2 * mem, or the swap file's size)\n"
	"  -o cg_share=N%  a tenant cgroup's resident share of its own limit (50%)\n"
	"  -o readahead=auto|direct|cluster|vma  swap-in readahead (auto: direct for\n"
	"                 RAM backends, vma for the file backend)\n"
	"  -o allow_other others may use the mount (default when root)\n"
	"  and the usual mount flags: ro, rw, nosuid, nodev, noexec, noatime, ...\n";

/* Flags mount(8) and fstab use that go to the kernel unchanged. */
static const char *const kernel_flags[] = {
	"ro", "rw", "suid", "nosuid", "dev", "nodev", "exec", "noexec", "sync", "async",
	"dirsync", "atime", "noatime", "diratime", "nodiratime", "relatime", "norelatime",
	"strictatime", "nostrictatime", "auto_unmount", NULL,
};

/* Flags for mount(8) itself (fstab), meaningless to tierfs: accepted and dropped. */
static const char *const ignored_flags[] = {
	"defaults", "auto", "noauto", "user", "nouser", "users", "_netdev", "nofail",
	"default_permissions", NULL,
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
	case 'e': case 'E': shift += 10; /* fall through */
	case 'p': case 'P': shift += 10; /* fall through */
	case 't': case 'T': shift += 10; /* fall through */
	case 'g': case 'G': shift += 10; /* fall through */
	case 'm': case 'M': shift += 10; /* fall through */
	case 'k': case 'K': shift += 10; end++; break;
	case '\0': break;
	default: return -EINVAL;
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
		if (!strcmp(val, "auto"))
			o->cache = CACHE_AUTO;
		else if (!strcmp(val, "always"))
			o->cache = CACHE_ALWAYS;
		else if (!strcmp(val, "never"))
			o->cache = CACHE_NEVER;
		else
			return fail("invalid cache= value '%s': want auto, always or never", val);
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
			return fail("invalid readahead= value '%s': want auto, direct, cluster or vma",
				    val);
	} else if (!strcmp(opt, "memlimit") && val) {
		if (parse_amount(opt, val, ram, &o->memlimit, err, err_len))
			return -EINVAL;
		/* None is the default here: the daemon's cgroup may set one. */
		if (!o->memlimit)
			return below_minimum(opt, val, err, err_len);
	} else if (!strcmp(opt, "swapsize") && val) {
		if (options_parse_size(val, ram, &o->swapsize) || !o->swapsize)
			return fail("invalid swapsize= value '%s': want %s", val,
				    OPTIONS_SIZE_FORM);
	} else if (!strcmp(opt, "backend") && val) {
		if (!strncmp(val, "file:", 5)) {
			if (!val[5] || strlen(val + 5) >= sizeof(o->swap_path))
				return fail("invalid backend= value '%s': want file:PATH", val);
			strcpy(o->swap_path, val + 5);
			o->backend = backend_find("file");
		} else if (!strcmp(val, "none")) {
			o->backend = NULL;
		} else if (strcmp(val, "file") && backend_find(val)) {
			o->backend = backend_find(val);
		} else {
			return fail("invalid backend= value '%s': want zpool, ramdisk, file:PATH or none",
				    val);
		}
	} else if (!strcmp(opt, "compressor") && val) {
		if (codec_parse(val, &o->codec, &o->codec_level))
			return fail("invalid compressor= value '%s': want lz4 or zstd, with :LEVEL",
				    val);
	} else if (!strcmp(opt, "allow_other") && !val) {
		o->allow_other = true;
	} else if ((!strcmp(opt, "fsname") || !strcmp(opt, "subtype")) && val) {
		return 0; /* tierfs names itself */
	} else if (!val && is_in(kernel_flags, opt)) {
		if (add_kernel_opt(o, opt))
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

static int parse_list(struct tierfs_options *o, const char *list, uint64_t ram, char *err,
		      size_t err_len)
{
	char *copy = strdup(list), *save = NULL, *opt;
	int ret = 0;

	if (!copy)
		return fail("out of memory");
	for (opt = strtok_r(copy, ",", &save); opt && !ret; opt = strtok_r(NULL, ",", &save))
		ret = parse_one(o, opt, ram, err, err_len);
	free(copy);
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
	o->codec = codec_table[0];
	o->codec_level = o->codec->default_level;
	o->allow_other = getuid() == 0;
	o->source = "tierfs";
	/* Like a tmpfs mounted by root: set-user-ID files and device nodes work. */
	if (getuid() == 0 && (add_kernel_opt(o, "suid") || add_kernel_opt(o, "dev")))
		return fail("too many mount options");

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(options_usage, stdout);
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
	if (!nr_positional)
		return fail("no mount point given");
	if (nr_positional == 2)
		o->source = positional[0];
	o->mountpoint = positional[nr_positional - 1];
	if (o->allow_other && add_kernel_opt(o, "allow_other"))
		return fail("too many mount options");
	return 0;
}
