// SPDX-License-Identifier: MIT
/*
 * Unit tests of option parsing: sizes with suffixes and percentages, the
 * defaults, tierfs's own keys, flags passed to the kernel, fstab-only flags,
 * the positional forms, and errors that name the offending option.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/codec.h"
#include "tierfs/options.h"
#include "check.h"

#define RAM (8ULL << 30)
#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

/* Whether a comma list holds opt as a whole item. */
static bool has_opt(const char *list, const char *opt)
{
	size_t len = strlen(opt);

	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == len && !strncmp(p, opt, len))
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

static void test_parse_size(void)
{
	static const struct {
		const char *s;
		uint64_t whole, value;
	} good[] = {
		{ "0", 0, 0 },
		{ "123", 0, 123 },
		{ "4096", 0, 4096 },
		{ "1k", 0, 1ULL << 10 },
		{ "1K", 0, 1ULL << 10 },
		{ "3m", 0, 3ULL << 20 },
		{ "3M", 0, 3ULL << 20 },
		{ "2g", 0, 2ULL << 30 },
		{ "2G", 0, 2ULL << 30 },
		{ "5t", 0, 5ULL << 40 },
		{ "5T", 0, 5ULL << 40 },
		{ "7p", 0, 7ULL << 50 },
		{ "1e", 0, 1ULL << 60 },
		{ "15E", 0, 15ULL << 60 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "16777215t", 0, 16777215ULL << 40 },
		{ "50%", 1000, 500 },
		{ "100%", 1000, 1000 },
		{ "0%", 1000, 0 },
		{ "33%", RAM, RAM * 33 / 100 },
		{ "1%", UINT64_MAX, UINT64_MAX / 100 },
		/* Past 100%, as tmpfs takes size=200%. */
		{ "200%", RAM, 2 * RAM },
		{ "1000%", 1000, 10000 },
		{ "100%", UINT64_MAX, UINT64_MAX },
	};
	static const char *const bad[] = {
		"abc",	"-1",	     "+1",
		"1x",	"",	     "99999999999e",
		"16e",	"16777216t", "18446744073709551616",
		"k",	"%",	     "1kb",
		"1k%",	"1%%",	     "1.5g",
		"0x10", "1 k",	     "--1",
		"101%", /* of UINT64_MAX: too big */
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 0xdead;

		check_set_context("options_parse_size(\"%s\", %" PRIu64 ")", good[i].s,
				  good[i].whole);
		CHECK_EQ(0, options_parse_size(good[i].s, good[i].whole, &v));
		CHECK_EQ(good[i].value, v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 0xdead;

		check_set_context("options_parse_size(\"%s\")", bad[i]);
		CHECK_EQ(-EINVAL, options_parse_size(bad[i], UINT64_MAX, &v));
		CHECK_EQ(0xdead, v);
	}
	check_clear_context();
}

static void test_defaults(void)
{
	char *argv[] = { "tierfs", "/mnt/x", NULL };
	struct tierfs_options o;
	char err[256] = "";

	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_STR("", err);
	CHECK_EQ(RAM / 2, o.size);
	CHECK_EQ(RAM / 4096 / 2, o.nr_inodes);
	CHECK_EQ(01777, o.mode);
	CHECK_EQ(getuid(), o.uid);
	CHECK_EQ(getgid(), o.gid);
	CHECK_EQ(CACHE_AUTO, o.cache);
	CHECK(o.is_encrypted);
	CHECK(!o.foreground);
	CHECK(!o.debug);
	CHECK(!o.single_thread);
	CHECK_STR("tierfs", o.source);
	CHECK_STR("/mnt/x", o.mountpoint);
	/* Root mounts for everyone, like tmpfs. */
	CHECK_EQ(getuid() == 0, o.allow_other);
	CHECK_EQ(getuid() == 0, has_opt(o.kernel_opts, "allow_other"));

	/* Another amount of RAM, other defaults. */
	CHECK_EQ(0, options_parse(ARGC(argv), argv, 1ULL << 30, &o, err, sizeof(err)));
	CHECK_EQ(512ULL << 20, o.size);
	CHECK_EQ(131072, o.nr_inodes);
}

static void test_own_keys(void)
{
	char *argv[] = { "tierfs", "-o", "size=1g,nr_inodes=1k,mode=0700,uid=12,gid=34,cache=never",
			 "/mnt", NULL };
	char *argv_pct[] = { "tierfs",
			     "/mnt",
			     "-osize=25%,nr_inodes=10%",
			     "-o",
			     "cache=always,transport=uring",
			     "-o",
			     "mode=755",
			     NULL };
	char *argv_zero[] = { "tierfs", "-o", "size=0,nr_inodes=0,cache=auto", "/mnt", NULL };
	char *argv_last[] = { "tierfs", "-o", "size=1m", "-o", "size=2m,uid=0", "/mnt", NULL };
	struct tierfs_options o;
	char err[256] = "";

	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_EQ(1ULL << 30, o.size);
	CHECK_EQ(1024, o.nr_inodes);
	CHECK_EQ(0700, o.mode);
	CHECK_EQ(12, o.uid);
	CHECK_EQ(34, o.gid);
	CHECK_EQ(CACHE_NEVER, o.cache);
	CHECK_EQ(TRANSPORT_AUTO, o.transport);
	CHECK_EQ(OPTIONS_RING_POLL_US, o.ring_poll_us);
	CHECK_STR("/mnt", o.mountpoint);
	/* tierfs's own keys are not handed to the kernel. */
	CHECK(!strstr(o.kernel_opts, "size"));
	CHECK(!strstr(o.kernel_opts, "mode"));
	CHECK(!strstr(o.kernel_opts, "cache"));

	/* % of RAM for size, of RAM pages for nr_inodes; -oLIST and -o LIST. */
	CHECK_EQ(0, options_parse(ARGC(argv_pct), argv_pct, RAM, &o, err, sizeof(err)));
	CHECK_EQ(RAM / 4, o.size);
	CHECK_EQ(RAM / 4096 / 10, o.nr_inodes);
	CHECK_EQ(CACHE_ALWAYS, o.cache);
	CHECK_EQ(TRANSPORT_URING, o.transport);
	CHECK(!strstr(o.kernel_opts, "transport"));
	CHECK_EQ(0755, o.mode);

	/* size= past 100% as on tmpfs; nr_inodes= up to every RAM page. */
	{
		char *argv_big[] = { "tierfs", "-o", "size=200%,nr_inodes=100%", "/mnt", NULL };

		CHECK_EQ(0, options_parse(ARGC(argv_big), argv_big, RAM, &o, err, sizeof(err)));
		CHECK_EQ(2 * RAM, o.size);
		CHECK_EQ(RAM / 4096, o.nr_inodes);
	}

	CHECK_EQ(0, options_parse(ARGC(argv_zero), argv_zero, RAM, &o, err, sizeof(err)));
	CHECK_EQ(0, o.size);
	CHECK_EQ(0, o.nr_inodes);
	CHECK_EQ(CACHE_AUTO, o.cache);

	/* The memory limit, in bytes or % of RAM. */
	{
		char *argv_limit[] = { "tierfs", "-o", "memlimit=512m,mem=25%", "/mnt", NULL };

		CHECK_EQ(0, options_parse(ARGC(argv_limit), argv_limit, RAM, &o, err, sizeof(err)));
		CHECK_EQ(512ULL << 20, o.memlimit);
		CHECK_EQ(RAM / 4, o.mem);
		CHECK(!strstr(o.kernel_opts, "memlimit"));
	}

	/* ring_poll=, in microseconds; 0 turns polling off. */
	{
		char *argv_poll[] = { "tierfs", "-o", "transport=uring,ring_poll=0", "/mnt", NULL };
		char *argv_poll_auto[] = { "tierfs", "-o", "ring_poll=200", "/mnt", NULL };

		CHECK_EQ(0, options_parse(ARGC(argv_poll), argv_poll, RAM, &o, err, sizeof(err)));
		CHECK_EQ(0, o.ring_poll_us);
		CHECK(!strstr(o.kernel_opts, "ring_poll"));
		CHECK_EQ(0, options_parse(ARGC(argv_poll_auto), argv_poll_auto, RAM, &o, err,
					  sizeof(err)));
		CHECK_EQ(200, o.ring_poll_us);
	}

	/* encrypt=, the file backend's seals; not the kernel's business. */
	{
		char *argv_plain[] = { "tierfs", "-o", "backend=file:/var/tmp,encrypt=off", "/mnt",
				       NULL };

		if (backend_find("file")) {
			CHECK_EQ(0, options_parse(ARGC(argv_plain), argv_plain, RAM, &o, err,
						  sizeof(err)));
			CHECK(!o.is_encrypted);
			CHECK_STR("/var/tmp", o.swap_path);
			CHECK(!strstr(o.kernel_opts, "encrypt"));
		}
		argv_plain[2] = "encrypt=off";
		CHECK_EQ(0, options_parse(ARGC(argv_plain), argv_plain, RAM, &o, err, sizeof(err)));
		CHECK(!o.is_encrypted);
		argv_plain[2] = "encrypt=off,encrypt=on";
		CHECK_EQ(0, options_parse(ARGC(argv_plain), argv_plain, RAM, &o, err, sizeof(err)));
		CHECK(o.is_encrypted);
	}

	/* A later value wins. */
	CHECK_EQ(0, options_parse(ARGC(argv_last), argv_last, RAM, &o, err, sizeof(err)));
	CHECK_EQ(2ULL << 20, o.size);
	CHECK_EQ(0, o.uid);
}

/* Each of these fails with -EINVAL and a message naming the option. */
static void test_bad_options(void)
{
	static const struct {
		const char *opts;
		const char *named;
	} cases[] = {
		{ "foo=bar", "foo" },
		{ "bogus", "bogus" },
		{ "size=abc", "size" },
		{ "size=-1", "size" },
		{ "size=1x", "size" },
		{ "size=", "size" },
		{ "size", "size" },
		{ "size=99999999999e", "size" },
		{ "nr_inodes=-1", "nr_inodes" },
		{ "nr_inodes=lots", "nr_inodes" },
		{ "nr_inodes=101%", "nr_inodes" },
		{ "mode=8", "mode" },
		{ "mode=17777", "mode" },
		{ "mode=rwx", "mode" },
		{ "mode=-7", "mode" },
		{ "uid=x", "uid" },
		{ "uid=-5", "uid" },
		{ "uid=4294967295", "uid" },
		{ "uid=99999999999", "uid" },
		{ "gid=1.5", "gid" },
		{ "gid=", "gid" },
		{ "cache=sometimes", "cache" },
		{ "cache=", "cache" },
		{ "transport=fast", "transport" },
		{ "transport=", "transport" },
		{ "ring_poll=-1", "ring_poll" },
		{ "ring_poll=10001", "ring_poll" },
		{ "ring_poll=5us", "ring_poll" },
		{ "transport=classic,ring_poll=20", "ring_poll" },
		{ "transport=classic,ring_poll=50", "ring_poll" },
		{ "transport=classic,ring_poll=0", "ring_poll" },
		{ "ro=1", "ro" },
		{ "size=1m,colour=blue", "colour" },
		{ "memlimit=1m", "memlimit" },
		{ "memlimit=", "memlimit" },
		{ "encrypt=yes", "encrypt" },
		{ "encrypt", "encrypt" },
		{ "nr_blocks=10%", "nr_blocks" },
		{ "nr_blocks=x", "nr_blocks" },
		{ "nr_blocks=9999999999999999e", "nr_blocks" },
		{ "noswap,backend=zpool", "noswap" },
		{ "backend=ramdisk,noswap", "noswap" },
		{ "huge=sometimes", "huge" },
		{ "mpol=bind", "mpol" },
		{ "mpol=bind:9", "node 9" },
		{ "mpol=prefer:0-1", "mpol" },
		{ "mpol=local:0", "mpol" },
		{ "mpol=bind=loose:0", "mpol" },
		{ "mpol=bind:0,999", "node 999" }, /* one option, as tmpfs takes it */
		{ "huge=deny", "huge" },
		{ "quota", "quota" },
		{ "usrquota", "usrquota" },
		{ "grpquota_inode_hardlimit=10", "grpquota_inode_hardlimit" },
		{ "log=journal", "log" },
		{ "log=var/log/t", "log" },
		{ "log=", "log" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char opts[128];
		char *argv[] = { "tierfs", "-o", opts, "/mnt", NULL };
		struct tierfs_options o;
		char err[256] = "";

		snprintf(opts, sizeof(opts), "%s", cases[i].opts);
		check_set_context("-o %s", cases[i].opts);
		CHECK_EQ(-EINVAL, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		if (!CHECK(strstr(err, cases[i].named) != NULL))
			printf("     message: \"%s\"\n", err);
	}
	check_clear_context();
}

/*
 * Every backend and compressor built in is taken, and one left out of the
 * build stops the mount with a message naming the option and why.
 */
static void test_built_in(void)
{
	char list[128], names[128], err[256];
	char *argv[] = { "tierfs", "-o", list, "/mnt", NULL };
	struct tierfs_options o;
	size_t len = 0;

	for (const struct tier_backend_ops *const *b = backend_table; *b; b++) {
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? " " : "",
					(*b)->name);
		snprintf(list, sizeof(list), "backend=%s%s", (*b)->name,
			 !strcmp((*b)->name, "file")  ? ":/var/tmp" :
			 !strcmp((*b)->name, "redis") ? "://127.0.0.1:6379" :
							"");
		check_set_context("-o %s", list);
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.backend == *b);
		CHECK(backend_why_left_out((*b)->name) == NULL);
	}
	check_clear_context();
	CHECK_STR(names, backend_names);

	len = 0;
	for (const struct codec *const *c = codec_table; *c; c++) {
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? " " : "",
					(*c)->name);
		snprintf(list, sizeof(list), "compressor=%s", (*c)->name);
		check_set_context("-o %s", list);
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.codec == *c);
		CHECK(codec_why_left_out((*c)->name) == NULL);
	}
	check_clear_context();
	CHECK_STR(names, codec_names);

	for (size_t i = 0; backend_left_out[i][0]; i++) {
		char message[128];

		CHECK(backend_find(backend_left_out[i][0]) == NULL);
		snprintf(message, sizeof(message), "backend=%s: not built in (%s)",
			 backend_left_out[i][0], backend_left_out[i][1]);
		for (int with_arg = 0; with_arg < 2; with_arg++) {
			snprintf(list, sizeof(list), "backend=%s%s", backend_left_out[i][0],
				 with_arg ? ":/var/tmp" : "");
			check_set_context("-o %s", list);
			CHECK_EQ(-EINVAL,
				 options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
			CHECK_STR(message, err);
		}
	}
	for (size_t i = 0; codec_left_out[i][0]; i++) {
		char message[128];

		snprintf(message, sizeof(message), "compressor=%s: not built in (%s)",
			 codec_left_out[i][0], codec_left_out[i][1]);
		for (int with_level = 0; with_level < 2; with_level++) {
			snprintf(list, sizeof(list), "compressor=%s%s", codec_left_out[i][0],
				 with_level ? ":1" : "");
			check_set_context("-o %s", list);
			CHECK_EQ(-EINVAL,
				 options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
			CHECK_STR(message, err);
		}
	}
	check_clear_context();

	/* Chains: a RAM tier before a file, and pool_max= as a size or a share. */
	if (backend_find("file")) {
		static const struct {
			const char *list;
			int ret;
			const char *err;
		} chains[] = {
			{ "backend=zpool+file:/var/tmp,pool_max=64m", 0, "" },
			{ "backend=ramdisk+file:/var/tmp,pool_max=10%", 0, "" },
			{ "backend=file+zpool", -EINVAL,
			  "invalid backend= value 'file+zpool': a chain is zpool+file:PATH, "
			  "zpool+redis://HOST:PORT, zpool+redis://HOST:PORT+file:PATH or the same "
			  "with ramdisk" },
			{ "backend=zpool+ramdisk", -EINVAL,
			  "invalid backend= value 'zpool+ramdisk': a chain is zpool+file:PATH, "
			  "zpool+redis://HOST:PORT, zpool+redis://HOST:PORT+file:PATH or the same "
			  "with ramdisk" },
			{ "backend=zpool+file:", -EINVAL,
			  "invalid backend= value 'zpool+file:': want zpool+file:PATH" },
			{ "pool_max=101%", -EINVAL,
			  "invalid pool_max= value '101%': want a size (bytes with a k/m/g/t/p/e "
			  "suffix) or N% of the memory limit, up to 100%" },
			{ "pool_max=-1", -EINVAL,
			  "invalid pool_max= value '-1': want a size (bytes with a k/m/g/t/p/e "
			  "suffix) or N% of the memory limit, up to 100%" },
			{ "pool_max=+5%", -EINVAL,
			  "invalid pool_max= value '+5%': want a size (bytes with a k/m/g/t/p/e "
			  "suffix) or N% of the memory limit, up to 100%" },
		};

		for (size_t i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
			snprintf(list, sizeof(list), "%s", chains[i].list);
			check_set_context("-o %s", list);
			err[0] = '\0';
			CHECK_EQ(chains[i].ret,
				 options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
			CHECK_STR(chains[i].err, err);
		}
		snprintf(list, sizeof(list), "backend=zpool+file:/var/tmp/x,pool_max=64m");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.backend == &tier_backend_chain && o.upper == backend_find("zpool"));
		CHECK_STR("/var/tmp/x", o.swap_path);
		CHECK(!o.is_pool_max_pct && o.pool_max_bytes == 64ULL << 20);
		CHECK_STR("zpool+file", options_backend_name(&o, names, sizeof(names)));
		CHECK_STR("zpool+file:/var/tmp/x", options_backend_spec(&o, names, sizeof(names)));
		/* A '+' in a path that no RAM tier comes before is the path's. */
		snprintf(list, sizeof(list), "backend=file:/var/tmp/a+b");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.backend == backend_find("file") && !o.upper);
		CHECK_STR("/var/tmp/a+b", o.swap_path);
		snprintf(list, sizeof(list), "backend=ramdisk+file:/var/tmp,pool_max=0%%");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.is_pool_max_pct && o.pool_max_pct == 0);
		/* The default: a quarter of the limit. */
		snprintf(list, sizeof(list), "backend=zpool+file:/var/tmp");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.is_pool_max_pct && o.pool_max_pct == OPTIONS_POOL_MAX_PCT);
		check_clear_context();
	}

	/* redis: seeds after redis://, its options only with it, alone or last in a chain. */
	if (backend_find("redis")) {
		static const struct {
			const char *list;
			int ret;
			const char *err;
		} cases[] = {
			{ "backend=redis://10.0.0.1:7000\\,[::1]:7001,redis_timeout=200,redis_ttl=0,"
			  "redis_wait=1,redis_auth=/etc/tierfs/redis.auth",
			  0, "" },
			{ "backend=zpool+redis://h:1", 0, "" },
			{ "backend=redis", -EINVAL,
			  "invalid backend= value 'redis': want zpool, ramdisk, file:PATH, "
			  "redis://HOST:PORT or none" },
			{ "backend=redis:h:1", -EINVAL,
			  "invalid backend= value 'redis:h:1': want redis://HOST:PORT[,HOST:PORT...]"
			  "[+file:PATH]" },
			{ "backend=zpool+redis://", -EINVAL,
			  "invalid backend= value 'zpool+redis://': want zpool+redis://HOST:PORT"
			  "[,HOST:PORT...][+file:PATH]" },
			{ "backend=zpool+redis://+file:/var/tmp", -EINVAL,
			  "invalid backend= value 'zpool+redis://+file:/var/tmp': want "
			  "zpool+redis://HOST:PORT[,HOST:PORT...][+file:PATH]" },
			{ "backend=zpool+redis://h:1+zpool", -EINVAL,
			  "invalid backend= value 'zpool+redis://h:1+zpool': after redis://HOST:PORT "
			  "comes +file:PATH, the swap file for what redis turns away" },
			{ "backend=redis://h:1+file:", -EINVAL,
			  "invalid backend= value 'redis://h:1+file:': after redis://HOST:PORT "
			  "comes +file:PATH, the swap file for what redis turns away" },
			{ "redis_timeout=0", -EINVAL,
			  "invalid redis_timeout= value '0': want milliseconds, 1 to 600000" },
			{ "redis_ttl=2", -EINVAL,
			  "invalid redis_ttl= value '2': want seconds, 0 (never) or 3 to 2592000" },
			{ "redis_wait=17", -EINVAL,
			  "invalid redis_wait= value '17': want replicas, 0 to 16" },
			{ "backend=zpool,redis_wait=1", -EINVAL,
			  "redis_wait=: the backend is not redis://" },
			{ "backend=zpool+file:/var/tmp,redis_auth=/x", -EINVAL,
			  "redis_auth=/x: the backend is not redis://" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			snprintf(list, sizeof(list), "%s", cases[i].list);
			check_set_context("-o %s", list);
			err[0] = '\0';
			CHECK_EQ(cases[i].ret,
				 options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
			CHECK_STR(cases[i].err, err);
		}
		snprintf(list, sizeof(list), "%s", cases[0].list);
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.backend == backend_find("redis") && o.lower == o.backend && !o.upper);
		CHECK_STR("//10.0.0.1:7000,[::1]:7001", o.swap_path);
		CHECK(o.redis_timeout_ms == 200 && o.redis_ttl_s == 0 && o.redis_wait == 1);
		CHECK_STR("/etc/tierfs/redis.auth", o.redis_auth);
		snprintf(list, sizeof(list), "backend=zpool+redis://h:1");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.backend == &tier_backend_chain && o.lower == backend_find("redis"));
		CHECK_EQ(OPTIONS_REDIS_TTL_S, o.redis_ttl_s);
		CHECK_STR("zpool+redis", options_backend_name(&o, names, sizeof(names)));
		/* Three tiers, or redis and its file: the file's path last, '+' and all. */
		snprintf(list, sizeof(list), "backend=zpool+redis://h:1\\,h:2+file:/var/tmp/a+b");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.backend == &tier_backend_chain && o.upper == backend_find("zpool") &&
		      o.lower == backend_find("redis"));
		CHECK_STR("//h:1,h:2", o.swap_path);
		CHECK_STR("/var/tmp/a+b", o.spill_path);
		CHECK_STR("zpool+redis+file", options_backend_name(&o, names, sizeof(names)));
		CHECK_STR("zpool+redis://h:1,h:2+file:/var/tmp/a+b",
			  options_backend_spec(&o, names, sizeof(names)));
		snprintf(list, sizeof(list), "backend=redis://h:1+file:/var/tmp");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK(o.backend == &tier_backend_chain && !o.upper &&
		      o.lower == backend_find("redis"));
		CHECK_STR("redis+file", options_backend_name(&o, names, sizeof(names)));
		/* Back to one tier: no file left over from the last parse. */
		snprintf(list, sizeof(list), "backend=redis://h:1");
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK_STR("", o.spill_path);
		check_clear_context();
	}

	/* An unknown name: the message lists what this build has. */
	snprintf(list, sizeof(list), "backend=nonesuch");
	CHECK_EQ(-EINVAL, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK(strstr(err, "'nonesuch'") && strstr(err, backend_table[0]->name));
	CHECK(backend_why_left_out("nonesuch") == NULL);
	snprintf(list, sizeof(list), "compressor=nonesuch:1");
	CHECK_EQ(-EINVAL, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK(strstr(err, "'nonesuch:1'") && strstr(err, codec_table[0]->name));
	CHECK(codec_why_left_out("nonesuch:1") == NULL);
}

/* mem= and memlimit=: a minimum, named in the message, and a warning past RAM. */
static void test_mem_values(void)
{
	static const struct {
		const char *opts;
		const char *message;
	} refused[] = {
		{ "mem=4095", "invalid mem= value '4095': the minimum is 4k (one page)" },
		{ "mem=1", "invalid mem= value '1': the minimum is 4k (one page)" },
		{ "mem=0", "invalid mem= value '0': the minimum is 4k (one page)" },
		{ "memlimit=1", "invalid memlimit= value '1': the minimum is 32m" },
		{ "memlimit=32767k", "invalid memlimit= value '32767k': the minimum is 32m" },
		{ "memlimit=0", "invalid memlimit= value '0': the minimum is 32m" },
	};
	char *argv_min[] = { "tierfs", "-o", "mem=4k,memlimit=32m", "/mnt", NULL };
	char *argv_big[] = { "tierfs", "-o", "mem=16g,memlimit=200%", "/mnt", NULL };
	struct tierfs_options o;
	char err[512];
	uint64_t v = 0;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char list[64];
		char *argv[] = { "tierfs", "-o", list, "/mnt", NULL };

		snprintf(list, sizeof(list), "%s", refused[i].opts);
		check_set_context("-o %s", refused[i].opts);
		CHECK_EQ(-EINVAL, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK_STR(refused[i].message, err);
	}
	check_clear_context();

	CHECK_EQ(0, options_parse(ARGC(argv_min), argv_min, RAM, &o, err, sizeof(err)));
	CHECK_STR("", err);
	CHECK_EQ(4096, o.mem);
	CHECK_EQ(32ULL << 20, o.memlimit);

	/* More than RAM is taken, with one warning line each. */
	CHECK_EQ(0, options_parse(ARGC(argv_big), argv_big, RAM, &o, err, sizeof(err)));
	CHECK_STR("mem= value '16g' is more than the machine's RAM (8.0 GiB)\n"
		  "memlimit= value '200%' is more than the machine's RAM (8.0 GiB)\n",
		  err);
	CHECK_EQ(16ULL << 30, o.mem);
	CHECK_EQ(2 * RAM, o.memlimit);

	/* The check tierctl set shares, where memlimit=0 is none. */
	CHECK_EQ(0, options_parse_amount("memlimit", "0", RAM, &v, err, sizeof(err)));
	CHECK_EQ(0, v);
	CHECK_EQ(-EINVAL, options_parse_amount("mem", "4095", RAM, &v, err, sizeof(err)));
	CHECK_STR("invalid mem= value '4095': the minimum is 4k (one page)", err);
	CHECK_EQ(0, options_parse_amount("mem", "8g", RAM, &v, err, sizeof(err)));
	CHECK_EQ(RAM, v);
	CHECK_EQ(1, options_parse_amount("mem", "8388609k", RAM, &v, err, sizeof(err)));
	CHECK_EQ(RAM + 1024, v);
	/* size= more than RAM is no slip: no warning. */
	CHECK_EQ(0, options_parse_amount("size", "200%", RAM, &v, err, sizeof(err)));
	CHECK_EQ(2 * RAM, v);
	CHECK_EQ(-EINVAL, options_parse_amount("nr_inodes", "101%", RAM, &v, err, sizeof(err)));
	CHECK_STR("invalid nr_inodes= value '101%': want a count with a k/m/g/t/p/e suffix or N% "
		  "of RAM pages up to 100%",
		  err);

	{
		static const struct {
			uint64_t bytes;
			const char *text;
		} sizes[] = { { 0, "0" },	    { 4095, "4095" },
			      { 4096, "4k" },	    { 32ULL << 20, "32m" },
			      { 5ULL << 40, "5t" }, { 1ULL << 60, "1e" },
			      { 4097, "4097" } };

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			options_format_size(sizes[i].bytes, err, sizeof(err));
			CHECK_STR(sizes[i].text, err);
		}
	}
}

/* Every size and count message names the same suffixes as --help. */
static void test_suffixes_named(void)
{
	static const char *const opts[] = { "size=1q", "nr_inodes=1q", "mem=1q", "memlimit=1q",
					    "swapsize=1q" };

	CHECK(strstr(options_usage, "k/m/g/t/p/e") != NULL);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		char list[32];
		char *argv[] = { "tierfs", "-o", list, "/mnt", NULL };
		struct tierfs_options o;
		char err[256] = "";

		snprintf(list, sizeof(list), "%s", opts[i]);
		CHECK_EQ(-EINVAL, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		check_set_context("-o %s: \"%s\"", opts[i], err);
		CHECK(strstr(err, "with a k/m/g/t/p/e suffix or N% of RAM") != NULL);
	}
	check_clear_context();
}

static void test_kernel_flags(void)
{
	static const char *const passed[] = { "ro",	"noatime", "nosuid", "nodev",
					      "noexec", "sync",	   "dirsync" };
	static const char *const dropped[] = { "defaults", "noauto",	"nofail",
					       "_netdev",  "x-foo=bar", "x-systemd.automount",
					       "auto",	   "user",	"users",
					       "nouser" };
	char *argv[] = { "tierfs", "-o", "ro,noatime,nosuid,nodev,noexec,sync,dirsync,relatime",
			 "/mnt", NULL };
	char *argv_fstab[] = {
		"tierfs", "/mnt", "-o",
		"defaults,noauto,nofail,_netdev,x-foo=bar,x-systemd.automount,auto,user,users,nouser",
		NULL
	};
	char *argv_mixed[] = { "tierfs", "-o", "rw,defaults,size=1m,nosuid,x-a=b", "/mnt", NULL };
	struct tierfs_options o;
	char err[256] = "";

	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++) {
		check_set_context("kernel_opts \"%s\" has %s", o.kernel_opts, passed[i]);
		CHECK(has_opt(o.kernel_opts, passed[i]));
	}
	check_clear_context();

	memset(err, 0, sizeof(err));
	CHECK_EQ(0, options_parse(ARGC(argv_fstab), argv_fstab, RAM, &o, err, sizeof(err)));
	CHECK_STR("", err);
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		check_set_context("kernel_opts \"%s\" lacks %s", o.kernel_opts, dropped[i]);
		CHECK(!has_opt(o.kernel_opts, dropped[i]));
	}
	check_clear_context();
	CHECK(!strstr(o.kernel_opts, "x-"));

	CHECK_EQ(0, options_parse(ARGC(argv_mixed), argv_mixed, RAM, &o, err, sizeof(err)));
	CHECK(has_opt(o.kernel_opts, "rw"));
	CHECK(has_opt(o.kernel_opts, "nosuid"));
	CHECK(!has_opt(o.kernel_opts, "defaults"));
	CHECK(!strstr(o.kernel_opts, "x-a"));
	CHECK_EQ(1ULL << 20, o.size);
}

/* log= names syslog, stderr or an absolute file, and cannot change on a remount. */
static void test_log(void)
{
	char *argv[] = { "tierfs", "-o", "log=/var/log/tierfs.log", "/mnt", NULL };
	struct tierfs_options o;
	enum atime_mode atime;
	bool is_nodiratime;
	char set[64], err[256];

	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_EQ(LOG_TARGET_FILE, o.log_target);
	CHECK_STR("/var/log/tierfs.log", o.log_path);
	CHECK_EQ(0, options_remount(&o, "remount,log=/var/log/tierfs.log", RAM, set, sizeof(set),
				    &atime, &is_nodiratime, err, sizeof(err)));
	CHECK_EQ(-EINVAL, options_remount(&o, "remount,log=stderr", RAM, set, sizeof(set), &atime,
					  &is_nodiratime, err, sizeof(err)));
	CHECK(strstr(err, "log=") != NULL);
	argv[2] = "log=stderr";
	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_EQ(LOG_TARGET_STDERR, o.log_target);
	argv[2] = "size=1m";
	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_EQ(LOG_TARGET_DEFAULT, o.log_target);
}

/* libfuse 3.14 refuses relatime and strictatime: tierfs keeps them for itself. */
/*
 * A tmpfs fstab line mounts: nr_blocks= is size= in pages, noswap is
 * backend=none, inode32 and inode64, huge= (with a warning where it would
 * ask for huge pages), mpol= (checked against /sys; node 0 is always
 * there), each as tmpfs takes it; noswap, inode32 and mpol= cannot change on
 * a remount.
 */
static void test_tmpfs_line(void)
{
	char *argv[] = { "tierfs", "-o",
			 "rw,nosuid,nodev,relatime,nr_blocks=16k,nr_inodes=1k,mode=1777,uid=0,"
			 "gid=0,inode32,huge=within_size,mpol=bind:0,noswap",
			 "/mnt", NULL };
	struct tierfs_options o;
	enum atime_mode atime;
	bool is_nodiratime;
	char set[64], err[256];

	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_EQ(64ULL << 20, o.size);
	CHECK(o.backend == NULL);
	CHECK(o.is_noswap);
	CHECK(o.is_inode32);
	CHECK(o.has_mpol);
	CHECK(strstr(err, "huge=within_size: ignored") != NULL);
	CHECK_EQ(0, options_remount(&o, "remount,nr_blocks=32k,noswap,inode32,mpol=bind:0", RAM,
				    set, sizeof(set), &atime, &is_nodiratime, err, sizeof(err)));
	CHECK_STR("size=134217728", set);
	CHECK_EQ(-EINVAL, options_remount(&o, "remount,inode64", RAM, set, sizeof(set), &atime,
					  &is_nodiratime, err, sizeof(err)));
	CHECK(strstr(err, "inode") != NULL);
	CHECK_EQ(-EINVAL, options_remount(&o, "remount,mpol=local", RAM, set, sizeof(set), &atime,
					  &is_nodiratime, err, sizeof(err)));
	CHECK(strstr(err, "mpol=") != NULL);
	argv[2] = "huge=never,mpol=interleave,inode64";
	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_STR("", err);
	CHECK(!o.is_inode32);
	CHECK(o.backend != NULL);
	CHECK_EQ(-EINVAL, options_remount(&o, "remount,noswap", RAM, set, sizeof(set), &atime,
					  &is_nodiratime, err, sizeof(err)));
	CHECK(strstr(err, "noswap") != NULL);
	/* On backend=none noswap changes nothing; a node list keeps its commas. */
	argv[2] = "backend=none,mpol=bind:0,0";
	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_EQ(0, options_remount(&o, "remount,noswap,mpol=bind:0", RAM, set, sizeof(set), &atime,
				    &is_nodiratime, err, sizeof(err)));
}

static void test_atime_flags(void)
{
	static const struct {
		const char *list;
		enum atime_mode atime;
		bool is_nodiratime;
	} cases[] = {
		{ "size=1m", ATIME_RELATIME, false },
		{ "strictatime", ATIME_STRICT, false },
		{ "norelatime,nodiratime", ATIME_STRICT, true },
		{ "noatime,relatime", ATIME_RELATIME, false },
		{ "relatime,noatime", ATIME_NONE, false },
		{ "noatime,atime", ATIME_RELATIME, false },
		{ "strictatime,nostrictatime", ATIME_RELATIME, false },
		{ "nodiratime,diratime,relatime", ATIME_RELATIME, false },
	};
	char *argv[] = { "tierfs", "-o", NULL, "/mnt", NULL };
	struct tierfs_options o;
	enum atime_mode atime;
	bool is_nodiratime;
	char set[64], err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_set_context("%s", cases[i].list);
		argv[2] = (char *)cases[i].list;
		CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
		CHECK_EQ(cases[i].atime, o.atime);
		CHECK_EQ(cases[i].is_nodiratime, o.is_nodiratime);
		CHECK(!strstr(o.kernel_opts, "relatime") && !strstr(o.kernel_opts, "strictatime"));
	}
	check_clear_context();
	/* A remount starts from the flags in force and changes what it names. */
	argv[2] = "noatime";
	CHECK_EQ(0, options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err)));
	CHECK_EQ(0, options_remount(&o, "remount,noatime,strictatime,nodiratime", RAM, set,
				    sizeof(set), &atime, &is_nodiratime, err, sizeof(err)));
	CHECK_EQ(ATIME_STRICT, atime);
	CHECK(is_nodiratime);
	CHECK_EQ(0, options_remount(&o, "remount,rw", RAM, set, sizeof(set), &atime, &is_nodiratime,
				    err, sizeof(err)));
	CHECK_EQ(ATIME_NONE, atime);
}

static void test_positional_and_flags(void)
{
	char *argv_two[] = { "tierfs", "none", "/mnt/y", NULL };
	char *argv_flags[] = { "tierfs", "-f", "/mnt", "-s", NULL };
	char *argv_debug[] = { "tierfs", "-d", "/mnt", NULL };
	char *argv_three[] = { "tierfs", "a", "b", "c", NULL };
	char *argv_none[] = { "tierfs", "-f", NULL };
	char *argv_dangling[] = { "tierfs", "/mnt", "-o", NULL };
	char *argv_unknown[] = { "tierfs", "/mnt", "-x", NULL };
	char *argv_help[] = { "tierfs", "--help", NULL };
	char *argv_h[] = { "tierfs", "/mnt", "-h", NULL };
	char *argv_version[] = { "tierfs", "--version", NULL };
	struct tierfs_options o;
	char err[256];

	/* mount(8) form: SOURCE MOUNTPOINT. */
	CHECK_EQ(0, options_parse(ARGC(argv_two), argv_two, RAM, &o, err, sizeof(err)));
	CHECK_STR("none", o.source);
	CHECK_STR("/mnt/y", o.mountpoint);

	CHECK_EQ(0, options_parse(ARGC(argv_flags), argv_flags, RAM, &o, err, sizeof(err)));
	CHECK(o.foreground);
	CHECK(!o.debug);
	CHECK(o.single_thread);
	CHECK_STR("/mnt", o.mountpoint);

	CHECK_EQ(0, options_parse(ARGC(argv_debug), argv_debug, RAM, &o, err, sizeof(err)));
	CHECK(o.debug);
	CHECK(o.foreground);
	CHECK(!o.single_thread);

	err[0] = '\0';
	CHECK_EQ(-EINVAL, options_parse(ARGC(argv_three), argv_three, RAM, &o, err, sizeof(err)));
	CHECK(strstr(err, "c") != NULL);
	err[0] = '\0';
	CHECK_EQ(-EINVAL, options_parse(ARGC(argv_none), argv_none, RAM, &o, err, sizeof(err)));
	CHECK(err[0] != '\0');
	err[0] = '\0';
	CHECK_EQ(-EINVAL,
		 options_parse(ARGC(argv_dangling), argv_dangling, RAM, &o, err, sizeof(err)));
	CHECK(strstr(err, "-o") != NULL);
	err[0] = '\0';
	CHECK_EQ(-EINVAL,
		 options_parse(ARGC(argv_unknown), argv_unknown, RAM, &o, err, sizeof(err)));
	CHECK(strstr(err, "-x") != NULL);

	/* --help and --version: handled, the caller exits 0. */
	fflush(stdout);
	CHECK_EQ(1, options_parse(ARGC(argv_help), argv_help, RAM, &o, err, sizeof(err)));
	CHECK_EQ(1, options_parse(ARGC(argv_h), argv_h, RAM, &o, err, sizeof(err)));
	CHECK_EQ(1, options_parse(ARGC(argv_version), argv_version, RAM, &o, err, sizeof(err)));
	CHECK(strstr(options_usage, "size=") != NULL);
	CHECK(strstr(options_usage, "-h, --help") != NULL);
	CHECK(strstr(options_usage, "-V, --version") != NULL);
}

/* A remount: what mount(8) passes, checked against the options in force. */
static void test_remount(void)
{
	static const struct {
		const char *list;
		int ret;
		const char *out; /* the set pairs, or the message */
	} cases[] = {
		/* What mount(8) passes for "mount -o remount,size=32M MNT". */
		{ "rw,noatime,remount,user_id=0,group_id=0,default_permissions,allow_other,"
		  "size=32M,nr_inodes=1000,dev,suid",
		  0, "size=32M" },
		{ "remount,mem=16m,readahead=vma,memlimit=1g,nr_inodes=10%", 0,
		  "nr_inodes=10% mem=16m memlimit=1g readahead=vma" },
		{ "remount,size=1m,size=64m", 0, "" },
		{ "remount,size=1m,size=2m", 0, "size=2m" },
		/* fstab's options again, with their values in force. */
		{ "rw,remount,size=64m,mode=0755,backend=zpool,compressor=lz4,cache=auto,"
		  "cg_share=50%,uid=12,gid=34,mem=32m,readahead=auto",
		  0, "" },
		{ "remount,backend=ramdisk", -EINVAL,
		  "backend= cannot change on a mounted tierfs" },
		{ "remount,backend=none", -EINVAL, "backend= cannot change on a mounted tierfs" },
		{ "remount,compressor=lz4:9", -EINVAL,
		  "compressor= cannot change on a mounted tierfs" },
		{ "remount,mode=0700", -EINVAL, "mode= cannot change on a mounted tierfs" },
		{ "remount,uid=5", -EINVAL, "uid= cannot change on a mounted tierfs" },
		{ "remount,gid=5", -EINVAL, "gid= cannot change on a mounted tierfs" },
		{ "remount,cache=never", -EINVAL, "cache= cannot change on a mounted tierfs" },
		{ "remount,transport=uring", -EINVAL,
		  "transport= cannot change on a mounted tierfs" },
		{ "remount,transport=auto", 0, "" },
		{ "remount,swapsize=1g", -EINVAL, "swapsize= cannot change on a mounted tierfs" },
		{ "remount,cg_share=20%", -EINVAL, "cg_share= cannot change on a mounted tierfs" },
		{ "remount,encrypt=off", -EINVAL, "encrypt= cannot change on a mounted tierfs" },
		{ "remount,encrypt=on,size=1m", 0, "size=1m" },
		{ "remount,pool_max=10%", 0, "pool_max=10%" },
		{ "remount,pool_max=25%", 0, "" },
		{ "remount,size=abc", -EINVAL,
		  "invalid size= value 'abc': want bytes with a k/m/g/t/p/e suffix or N% of RAM" },
		{ "remount,frob", -EINVAL, "unknown option 'frob'" },
	};
	char *argv_cur[] = { "tierfs", "-o",
			     "size=64m,nr_inodes=1000,mem=32m,mode=0755,uid=12,gid=34,allow_other",
			     "/mnt", NULL };
	char *argv_no_other[] = { "tierfs", "/mnt", NULL };
	char *argv_remount[] = { "tierfs", "tierfs", "/mnt", "-o", "rw,remount", "-osize=1g", NULL };
	char *argv_fuse_keys[] = { "tierfs", "-o", "user_id=0", "/mnt", NULL };
	struct tierfs_options cur, o;
	char set[256], err[256];
	enum atime_mode atime;
	bool is_nodiratime;

	if (!CHECK_EQ(0, options_parse(ARGC(argv_cur), argv_cur, RAM, &cur, err, sizeof(err))))
		return;
	CHECK(!cur.is_remount);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_set_context("remount \"%s\"", cases[i].list);
		strcpy(set, "unset");
		CHECK_EQ(cases[i].ret, options_remount(&cur, cases[i].list, RAM, set, sizeof(set),
						       &atime, &is_nodiratime, err, sizeof(err)));
		CHECK_STR(cases[i].out, cases[i].ret ? err : set);
	}
	check_clear_context();

	/* A seed list's "\\," and the backend's every part count as they do at mount. */
	if (backend_find("redis") && backend_find("file")) {
		char *argv_far[] = { "tierfs", "-o",
				     "backend=zpool+redis://h:1\\,h:2+file:/var/tmp/x,mem=32m",
				     "/mnt", NULL };
		struct tierfs_options far;

		CHECK_EQ(0, options_parse(ARGC(argv_far), argv_far, RAM, &far, err, sizeof(err)));
		CHECK_EQ(0,
			 options_remount(&far,
					 "remount,backend=zpool+redis://h:1\\,h:2+file:/var/tmp/x,"
					 "size=1m",
					 RAM, set, sizeof(set), &atime, &is_nodiratime, err,
					 sizeof(err)));
		CHECK_STR("size=1m", set);
		CHECK_EQ(-EINVAL,
			 options_remount(&far, "remount,backend=zpool+redis://h:1\\,h:2", RAM, set,
					 sizeof(set), &atime, &is_nodiratime, err, sizeof(err)));
		CHECK_STR("backend= cannot change on a mounted tierfs", err);
		CHECK_EQ(-EINVAL,
			 options_remount(&far, "remount,backend=zpool+file://h:1\\,h:2", RAM, set,
					 sizeof(set), &atime, &is_nodiratime, err, sizeof(err)));
		CHECK_STR("backend= cannot change on a mounted tierfs", err);
	}

	/* allow_other is one more option that cannot change. */
	CHECK_EQ(0, options_parse(ARGC(argv_no_other), argv_no_other, RAM, &o, err, sizeof(err)));
	o.allow_other = false;
	CHECK_EQ(-EINVAL, options_remount(&o, "remount,allow_other", RAM, set, sizeof(set), &atime,
					  &is_nodiratime, err, sizeof(err)));
	CHECK_STR("allow_other cannot change on a mounted tierfs", err);

	/* The helper's side: a remount, its lists joined, no default flags. */
	CHECK_EQ(0, options_parse(ARGC(argv_remount), argv_remount, RAM, &o, err, sizeof(err)));
	CHECK(o.is_remount);
	CHECK_STR("rw", o.kernel_opts);
	CHECK_EQ(1ULL << 30, o.size);
	CHECK_EQ(0, options_join_lists(ARGC(argv_remount), argv_remount, set, sizeof(set)));
	CHECK_STR("rw,remount,size=1g", set);
	CHECK_EQ(-E2BIG, options_join_lists(ARGC(argv_remount), argv_remount, set, 8));
	/* FUSE's own keys are taken on a remount only. */
	CHECK_EQ(-EINVAL,
		 options_parse(ARGC(argv_fuse_keys), argv_fuse_keys, RAM, &o, err, sizeof(err)));
	CHECK_STR("unknown option 'user_id=0'", err);
}

/* The kernel flags of a remount over those in force. */
static void test_remount_flags(void)
{
	static const struct {
		const char *kernel_opts;
		unsigned long st_flags, ms_flags;
		bool is_changed;
	} cases[] = {
		{ "ro,noatime", ST_RELATIME, MS_RDONLY | MS_NOATIME, true },
		{ "rw,relatime,dev,suid", ST_RELATIME, MS_RELATIME, false },
		{ "rw", ST_RDONLY | ST_NOSUID | ST_RELATIME, MS_NOSUID | MS_RELATIME, true },
		{ "", ST_NOSUID | ST_NOEXEC | ST_NOATIME, MS_NOSUID | MS_NOEXEC | MS_NOATIME,
		  false },
		{ "strictatime", ST_RELATIME, MS_STRICTATIME, true },
		{ "nosuid,nodev,noexec,sync", ST_RELATIME,
		  MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS | MS_RELATIME, true },
		{ "dirsync", ST_RELATIME, MS_DIRSYNC | MS_RELATIME, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tierfs_options o = { 0 };
		bool is_changed = !cases[i].is_changed;

		snprintf(o.kernel_opts, sizeof(o.kernel_opts), "%s", cases[i].kernel_opts);
		check_set_context("flags \"%s\" over %#lx", cases[i].kernel_opts,
				  cases[i].st_flags);
		CHECK_EQ(cases[i].ms_flags,
			 options_remount_flags(&o, cases[i].st_flags, &is_changed));
		CHECK_EQ(cases[i].is_changed, is_changed);
	}
	check_clear_context();
}

/* A long option list must not overflow kernel_opts: refused by name, or fitted. */
static void test_long_list(void)
{
	static char list[8192];
	char *argv[] = { "tierfs", "-o", list, "/mnt", NULL };
	struct tierfs_options o;
	char err[256] = "";
	size_t len = 0;
	int ret;

	while (len + 16 < sizeof(list))
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%snoatime",
					len ? "," : "");
	ret = options_parse(ARGC(argv), argv, RAM, &o, err, sizeof(err));
	CHECK(ret == 0 || ret == -EINVAL);
	CHECK(strlen(o.kernel_opts) < sizeof(o.kernel_opts));
	if (ret)
		CHECK(err[0] != '\0');
}

int main(void)
{
	test_parse_size();
	test_defaults();
	test_own_keys();
	test_bad_options();
	test_built_in();
	test_mem_values();
	test_suffixes_named();
	test_kernel_flags();
	test_atime_flags();
	test_tmpfs_line();
	test_log();
	test_positional_and_flags();
	test_long_list();
	test_remount();
	test_remount_flags();
	return check_done("options");
}
