// SPDX-License-Identifier: MIT
/*
 * Unit tests of the control requests, answered in memory by ctl_handle() on
 * a filesystem set up with tierfs_init(): "stats", "stats json" (one JSON
 * object with the documented keys and values, escaped whatever a tenant
 * cgroup is named), unknown requests, who may change what, and a reply
 * buffer too small for the reply.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/codec.h"
#include "tierfs/ctl.h"
#include "tierfs/data.h"
#include "tierfs/tierfs.h"
#include "check.h"

#define RAM (1ULL << 30)

/* A small JSON reader: objects, strings, numbers and literals, nothing more. */
static void json_skip_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

static bool json_string(const char **p)
{
	if (**p != '"')
		return false;
	for ((*p)++; **p != '"'; (*p)++) {
		if (!**p || (unsigned char)**p < 0x20)
			return false;
		if (**p == '\\' && !*++*p)
			return false;
	}
	(*p)++;
	return true;
}

static bool json_number(const char **p)
{
	if (**p == '-')
		(*p)++;
	if (!isdigit((unsigned char)**p))
		return false;
	if (**p == '0' && isdigit((unsigned char)(*p)[1]))
		return false;
	while (isdigit((unsigned char)**p))
		(*p)++;
	if (**p == '.') {
		(*p)++;
		if (!isdigit((unsigned char)**p))
			return false;
		while (isdigit((unsigned char)**p))
			(*p)++;
	}
	return true;
}

static bool json_value(const char **p, int depth);

static bool json_object(const char **p, int depth)
{
	if (**p != '{' || depth > 8)
		return false;
	(*p)++;
	json_skip_ws(p);
	if (**p == '}') {
		(*p)++;
		return true;
	}
	for (;;) {
		json_skip_ws(p);
		if (!json_string(p))
			return false;
		json_skip_ws(p);
		if (**p != ':')
			return false;
		(*p)++;
		json_skip_ws(p);
		if (!json_value(p, depth + 1))
			return false;
		json_skip_ws(p);
		if (**p == '}') {
			(*p)++;
			return true;
		}
		if (**p != ',')
			return false;
		(*p)++;
	}
}

static bool json_array(const char **p, int depth)
{
	if (**p != '[' || depth > 8)
		return false;
	(*p)++;
	json_skip_ws(p);
	if (**p == ']') {
		(*p)++;
		return true;
	}
	for (;;) {
		json_skip_ws(p);
		if (!json_value(p, depth + 1))
			return false;
		json_skip_ws(p);
		if (**p == ']') {
			(*p)++;
			return true;
		}
		if (**p != ',')
			return false;
		(*p)++;
	}
}

static bool json_value(const char **p, int depth)
{
	static const char *const literals[] = { "true", "false", "null" };

	if (**p == '{')
		return json_object(p, depth);
	if (**p == '[')
		return json_array(p, depth);
	if (**p == '"')
		return json_string(p);
	for (int i = 0; i < 3; i++)
		if (!strncmp(*p, literals[i], strlen(literals[i]))) {
			*p += strlen(literals[i]);
			return true;
		}
	return json_number(p);
}

/* Exactly one JSON object, then at most whitespace. */
static bool json_is_one_object(const char *s)
{
	json_skip_ws(&s);
	if (!json_object(&s, 0))
		return false;
	json_skip_ws(&s);
	return *s == '\0';
}

/*
 * Where "key": appears inside the object named parent (NULL: the top
 * level), or NULL.  Keys here never contain braces or quotes.
 */
static const char *json_find(const char *json, const char *parent, const char *key)
{
	char needle[128];
	const char *start = json, *p;
	int depth = 0, want = 1;

	if (parent) {
		snprintf(needle, sizeof(needle), "\"%s\":", parent);
		start = json_find(json, NULL, parent);
		if (!start)
			return NULL;
		start += strlen(needle);
		json_skip_ws(&start);
		if (*start != '{')
			return NULL;
		json = start;
	}
	snprintf(needle, sizeof(needle), "\"%s\":", key);
	for (p = json; *p; p++) {
		if (*p == '{')
			depth++;
		else if (*p == '}' && --depth <= 0 && parent)
			return NULL;
		else if (depth == want && !strncmp(p, needle, strlen(needle)))
			return p;
	}
	return NULL;
}

/* The number stored under key in parent (NULL: top level); false if absent. */
static bool json_u64(const char *json, const char *parent, const char *key, uint64_t *out)
{
	const char *p = json_find(json, parent, key);
	char *end;

	if (!p)
		return false;
	p += strlen(key) + 3;
	json_skip_ws(&p);
	if (!isdigit((unsigned char)*p))
		return false;
	*out = strtoull(p, &end, 10);
	return true;
}

/* The value printed after key at the start of a line of the text form, or NULL. */
static const char *text_value(const char *text, const char *key)
{
	size_t len = strlen(key);

	for (const char *line = text; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		while (*line == ' ')
			line++;
		if (!strncmp(line, key, len) && line[len] == ' ') {
			line += len;
			while (*line == ' ')
				line++;
			return line;
		}
	}
	return NULL;
}

static void check_json_key(const char *json, const char *parent, const char *key, uint64_t expected)
{
	uint64_t v = UINT64_MAX;

	check_set_context("%s%s%s", parent ? parent : "", parent ? "." : "", key);
	if (CHECK(json_u64(json, parent, key, &v)))
		CHECK_EQ(expected, v);
	check_clear_context();
}

static void test_stats(struct tierfs *fs)
{
	static char buf[CTL_REPLY_MAX];
	const char *json = buf + 3, *v;
	uint64_t n;

	/* JSON: one object, the documented keys, the values of this filesystem. */
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(0, ctl_handle(fs, "stats json", 0, buf, sizeof(buf)));
	if (!CHECK(!strncmp(buf, "ok\n", 3))) {
		printf("     reply: \"%.200s\"\n", buf);
		return;
	}
	if (!CHECK(json_is_one_object(json)))
		printf("     reply: \"%.400s\"\n", json);
	CHECK_EQ('\n', buf[strlen(buf) - 1]);
	CHECK(strchr(json, '\n') == json + strlen(json) - 1);

	check_json_key(json, NULL, "size_bytes", 1ULL << 20);
	check_json_key(json, NULL, "data_bytes", 3 * PAGE_SIZE);
	check_json_key(json, NULL, "resident_bytes", 2 * PAGE_SIZE);
	check_json_key(json, NULL, "same_filled_pages", 1);
	check_json_key(json, NULL, "inodes", 2);
	check_json_key(json, NULL, "max_inodes", 100);
	CHECK(json_find(json, NULL, "pool") != NULL);
	CHECK(json_find(json, NULL, "requests") != NULL);
	/* Tenants: the root lists first. */
	CHECK(strstr(json, "\"cgroups\":[{\"path\":\"/\",\"resident_bytes\":8192,") != NULL);
	check_json_key(json, "pool", "reserved_bytes", RAM);
	check_json_key(json, "requests", "reads", 0);
	check_json_key(json, "requests", "writes", 0);
	check_json_key(json, "requests", "enospc", 0);
	/* Nested keys are not at the top, top keys are not nested. */
	CHECK(json_find(json, NULL, "reserved_bytes") == NULL);
	CHECK(json_find(json, "pool", "size_bytes") == NULL);
	CHECK(json_find(json, "requests", "reserved_bytes") == NULL);
	if (CHECK(json_u64(json, "pool", "backed_bytes", &n)))
		CHECK(n >= 2 * PAGE_SIZE);
	/* What this build has, as the registry lists it. */
	{
		char want[256];

		snprintf(want, sizeof(want),
			 "\"backends_built\":\"%s\",\"compressors_built\":\"%s\"", backend_names,
			 codec_names);
		if (!CHECK(strstr(json, want) != NULL))
			printf("     want %s\n", want);
	}

	/* Text: "ok", then a line a key, byte counts in binary units. */
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(0, ctl_handle(fs, "stats", 0, buf, sizeof(buf)));
	CHECK(!strncmp(buf, "ok\n", 3));
	CHECK(buf[3] != '{');
	v = text_value(buf, "size_bytes");
	CHECK(v && !strncmp(v, "1.0 MiB\n", 8));
	v = text_value(buf, "data_bytes");
	CHECK(v && !strncmp(v, "12.0 KiB\n", 9));
	v = text_value(buf, "inodes");
	CHECK(v && !strncmp(v, "2\n", 2));
	v = text_value(buf, "same_filled_pages");
	CHECK(v && !strncmp(v, "1\n", 2));
	CHECK(strstr(buf, "\npool:\n") != NULL);
	CHECK(strstr(buf, "\nrequests:\n") != NULL);
	CHECK(strstr(buf, "\n  reserved_bytes") != NULL);
	v = text_value(buf, "backends_built");
	CHECK(v && !strncmp(v, backend_names, strlen(backend_names)) &&
	      v[strlen(backend_names)] == '\n');
	v = text_value(buf, "compressors_built");
	CHECK(v && !strncmp(v, codec_names, strlen(codec_names)) && v[strlen(codec_names)] == '\n');
}

static void test_errors(struct tierfs *fs)
{
	static const char *const requests[] = { "frobnicate",  "",	"stats jsonx", "STATS",
						"stats  json", " stats" };
	char buf[512];

	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		check_set_context("request \"%s\"", requests[i]);
		memset(buf, 0, sizeof(buf));
		CHECK(ctl_handle(fs, requests[i], 0, buf, sizeof(buf)) < 0);
		if (!CHECK(!strncmp(buf, "error:", 6)))
			printf("     reply: \"%.200s\"\n", buf);
	}
	check_clear_context();
	ctl_handle(fs, "frobnicate", 0, buf, sizeof(buf));
	CHECK(strstr(buf, "frobnicate") != NULL);
	CHECK_EQ(-EINVAL, ctl_handle(fs, "reclaim 1q", 0, buf, sizeof(buf)));
	CHECK_STR("error: reclaim: want bytes with a k/m/g/t/p/e suffix, or 'all'\n", buf);
}

/* A request that must be refused, and the reply it must get. */
struct refusal {
	const char *request;
	const char *reply;
};

/* Each request is refused with its reply, and no setting changes. */
static void check_refusals(struct tierfs *fs, const struct refusal *refused, size_t nr)
{
	uint64_t mem_cap = fs->data.budget.mem_cap_pages, nr_tenants = fs->tenants.nr;
	uint64_t max_pages = fs->data.max_pages, size = fs->opts.size;
	uint64_t max_inodes = atomic_load(&fs->ns.max_inodes);
	int policy = atomic_load(&fs->data.ra.policy);
	char buf[512];

	for (size_t i = 0; i < nr; i++) {
		check_set_context("request \"%s\"", refused[i].request);
		CHECK_EQ(-EINVAL, ctl_handle(fs, refused[i].request, 0, buf, sizeof(buf)));
		CHECK_STR(refused[i].reply, buf);
		CHECK_EQ(mem_cap, fs->data.budget.mem_cap_pages);
		CHECK_EQ(nr_tenants, fs->tenants.nr);
		CHECK_EQ(policy, atomic_load(&fs->data.ra.policy));
		CHECK_EQ(max_pages, fs->data.max_pages);
		CHECK_EQ(size, fs->opts.size);
		CHECK_EQ(max_inodes, atomic_load(&fs->ns.max_inodes));
	}
	check_clear_context();
}

/* set: the values mount refuses are refused, by the same message, changing nothing. */
static void test_set_values(struct tierfs *fs)
{
	static const struct refusal refused[] = {
		{ "set mem=1",
		  "error: set: invalid mem= value '1': the minimum is 4k (one page)\n" },
		{ "set mem=4095 readahead=vma",
		  "error: set: invalid mem= value '4095': the minimum is 4k (one page)\n" },
		{ "set memlimit=1",
		  "error: set: invalid memlimit= value '1': the minimum is 32m\n" },
		{ "set cgroup=/x mem=1",
		  "error: set: invalid mem= value '1': the minimum is 4k (one page)\n" },
		{ "set mem=1q",
		  "error: set: invalid mem= value '1q': want bytes with a k/m/g/t/p/e suffix or N% "
		  "of RAM\n" },
	};
	char buf[512];

	check_refusals(fs, refused, sizeof(refused) / sizeof(refused[0]));

	/* The smallest mem= is taken; more than RAM is taken with a warning line. */
	CHECK_EQ(0, ctl_handle(fs, "set mem=4k", 0, buf, sizeof(buf)));
	CHECK(strstr(buf, "\nmem=4096\n") != NULL);
	CHECK_EQ(1, fs->data.budget.mem_cap_pages);
	CHECK_EQ(0, ctl_handle(fs, "set mem=1e", 0, buf, sizeof(buf)));
	if (!CHECK(!strncmp(buf, "ok\nwarning: mem= value '1e' is more than the machine's RAM (",
			    60)))
		printf("     reply: \"%s\"\n", buf);
	CHECK(strstr(buf, "\nmem=1152921504606846976\n") != NULL);
	CHECK_EQ(0, ctl_handle(fs, "set cgroup=/x mem=4k", 0, buf, sizeof(buf)));
	CHECK_STR("ok\ncgroup=/x\nmem=4096\n", buf);
	CHECK_EQ(0, ctl_handle(fs, "set mem=64m", 0, buf, sizeof(buf)));
}

/*
 * set size= and nr_inodes=: not below what is in use (3 pages, 2 inodes),
 * all or nothing.
 */
static void test_set_limits(struct tierfs *fs)
{
	static const struct refusal refused[] = {
		{ "set size=8k",
		  "error: set: invalid size= value '8k': too small for current use (3 pages, 12k)\n" },
		{ "set size=1",
		  "error: set: invalid size= value '1': too small for current use (3 pages, 12k)\n" },
		{ "set nr_inodes=1",
		  "error: set: invalid nr_inodes= value '1': too few for current use (2 inodes)\n" },
		{ "set size=1q",
		  "error: set: invalid size= value '1q': want bytes with a k/m/g/t/p/e suffix or N% "
		  "of RAM\n" },
		{ "set nr_inodes=101%",
		  "error: set: invalid nr_inodes= value '101%': want a count with a k/m/g/t/p/e "
		  "suffix or N% of RAM pages up to 100%\n" },
		{ "set size=12k nr_inodes=2 mem=1",
		  "error: set: invalid mem= value '1': the minimum is 4k (one page)\n" },
		{ "set cgroup=/x size=1m",
		  "error: set: cgroup= takes mem= only, on a mount with a backend\n" },
	};
	static char stats[CTL_REPLY_MAX];
	char buf[512];

	CHECK_EQ(256, fs->data.max_pages);
	CHECK_EQ(1ULL << 20, fs->opts.size);
	CHECK_EQ(100, atomic_load(&fs->ns.max_inodes));
	check_refusals(fs, refused, sizeof(refused) / sizeof(refused[0]));

	/* Down to exactly what is in use. */
	CHECK_EQ(0, ctl_handle(fs, "set size=12k nr_inodes=2", 0, buf, sizeof(buf)));
	if (!CHECK(!strncmp(buf, "ok\nsize=12288\nnr_inodes=2\nmem=", 30)))
		printf("     reply: \"%s\"\n", buf);
	CHECK_EQ(3, fs->data.max_pages);
	CHECK_EQ(2, atomic_load(&fs->ns.max_inodes));
	/* A part page counts whole, as at mount. */
	CHECK_EQ(0, ctl_handle(fs, "set size=8193", 0, buf, sizeof(buf)));
	CHECK_EQ(3, fs->data.max_pages);
	CHECK_EQ(8193, fs->opts.size);
	/* 0 is unlimited, whatever the pool. */
	CHECK_EQ(0, ctl_handle(fs, "set size=0 nr_inodes=0", 0, buf, sizeof(buf)));
	CHECK_EQ(0, fs->data.max_pages);
	CHECK_EQ(0, atomic_load(&fs->ns.max_inodes));
	/* Back up to the pool's reservation. */
	CHECK_EQ(0, ctl_handle(fs, "set size=1m nr_inodes=100", 0, buf, sizeof(buf)));
	CHECK_EQ(256, fs->data.max_pages);
	CHECK_EQ(100, atomic_load(&fs->ns.max_inodes));
	CHECK_EQ(0, ctl_handle(fs, "stats json", 0, stats, sizeof(stats)));
	check_json_key(stats + 3, NULL, "size_bytes", 1ULL << 20);
	check_json_key(stats + 3, NULL, "max_inodes", 100);
}

/* remount: what cannot change is named; the rest goes through set's checks. */
static void test_remount(struct tierfs *fs)
{
	static const struct {
		const char *request;
		const char *reply;
	} refused[] = {
		{ "remount rw,remount,backend=ramdisk",
		  "error: remount: backend= cannot change on a mounted tierfs\n" },
		{ "remount rw,remount,size=8k",
		  "error: remount: invalid size= value '8k': too small for current use (3 pages, "
		  "12k)\n" },
		{ "remount rw,remount,mem=1",
		  "error: remount: invalid mem= value '1': the minimum is 4k (one page)\n" },
		{ "remount rw,remount,colour=blue",
		  "error: remount: unknown option 'colour=blue'\n" },
	};
	char buf[512];

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		check_set_context("request \"%s\"", refused[i].request);
		CHECK_EQ(-EINVAL, ctl_handle(fs, refused[i].request, 0, buf, sizeof(buf)));
		CHECK_STR(refused[i].reply, buf);
		CHECK_EQ(256, fs->data.max_pages);
	}
	check_clear_context();
	CHECK_EQ(-EPERM, ctl_handle(fs, "remount size=512k", 12345, buf, sizeof(buf)));
	CHECK_EQ(256, fs->data.max_pages);

	/* Nothing but flags: ok, nothing changes. */
	CHECK_EQ(0, ctl_handle(fs, "remount ro,remount,user_id=0,group_id=0", 0, buf, sizeof(buf)));
	if (!CHECK(!strncmp(buf, "ok\nsize=1048576\nnr_inodes=100\n", 30)))
		printf("     reply: \"%s\"\n", buf);
	CHECK_EQ(0, ctl_handle(fs, "remount rw,remount,size=512k,nr_inodes=50,size=12k", 0, buf,
			       sizeof(buf)));
	CHECK_EQ(3, fs->data.max_pages);
	CHECK_EQ(50, atomic_load(&fs->ns.max_inodes));
	CHECK_EQ(0, ctl_handle(fs, "remount remount,size=1m,nr_inodes=100", 0, buf, sizeof(buf)));
	CHECK_EQ(256, fs->data.max_pages);
}

/*
 * Tenant paths with quotes, backslashes and control bytes stay strings in
 * the JSON and one line each in the text.
 */
static void test_json_escaping(struct tierfs *fs)
{
	static const char *const paths[] = { "/rel\"q",	     "/x\",\"y\":\"", "/back\\slash\\",
					     "/tab\tnl\x01", "/caf\xc3\xa9",  "/bad\xff" };
	static char buf[CTL_REPLY_MAX];
	char request[256];

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		check_set_context("cgroup \"%s\"", paths[i]);
		snprintf(request, sizeof(request), "set cgroup=%s mem=4k", paths[i]);
		CHECK_EQ(0, ctl_handle(fs, request, 0, buf, sizeof(buf)));
		CHECK_EQ(0, ctl_handle(fs, "stats json", 0, buf, sizeof(buf)));
		if (!CHECK(json_is_one_object(buf + 3)))
			printf("     reply: \"%.400s\"\n", strstr(buf, "\"cgroups\"") ?: buf);
		/* The injection of '/x","y":"' adds no key. */
		CHECK(json_find(buf + 3, NULL, "y") == NULL);
	}
	check_clear_context();
	CHECK(strstr(buf, "\"path\":\"/rel\\\"q\"") != NULL);
	CHECK(strstr(buf, "\"path\":\"/x\\\",\\\"y\\\":\\\"\"") != NULL);
	CHECK(strstr(buf, "\"path\":\"/caf\xc3\xa9\"") != NULL);
	CHECK(strstr(buf, "\"path\":\"/bad?\"") != NULL);
	/* The text form shows control bytes and backslashes as octal escapes. */
	CHECK_EQ(0, ctl_handle(fs, "stats", 0, buf, sizeof(buf)));
	CHECK(strstr(buf, "  /tab\\011nl\\001 ") != NULL);
	CHECK(strstr(buf, "  /back\\134slash\\134 ") != NULL);
	CHECK(strchr(buf, '\t') == NULL && strchr(buf, '\x01') == NULL);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(request, sizeof(request), "set cgroup=%s", paths[i]);
		ctl_handle(fs, request, 0, buf, sizeof(buf));
	}
}

/*
 * Changes are for root and the user the daemon runs as; the root
 * directory's uid= gives a directory, not the daemon's settings.
 */
static void test_authority(struct tierfs *fs)
{
	static const char *const changes[] = { "set mem=100%", "set memlimit=0", "reclaim all",
					       "drain start",  "drain stop",	 "remount size=2m" };
	uid_t owner = fs->opts.uid, other = geteuid() == 12345 ? 12346 : 12345;
	uint64_t mem_cap = fs->data.budget.mem_cap_pages;
	static char buf[CTL_REPLY_MAX];

	fs->opts.uid = other;
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		check_set_context("\"%s\" from the root directory's uid=", changes[i]);
		CHECK_EQ(-EPERM, ctl_handle(fs, changes[i], other, buf, sizeof(buf)));
		CHECK(strstr(buf, "permission denied") != NULL);
	}
	check_clear_context();
	CHECK_EQ(mem_cap, fs->data.budget.mem_cap_pages);
	CHECK_EQ(0, ctl_handle(fs, "stats", other, buf, sizeof(buf)));
	CHECK_EQ(0, ctl_handle(fs, "drain status", other, buf, sizeof(buf)));
	CHECK_EQ(0, ctl_handle(fs, "set mem=64m", geteuid(), buf, sizeof(buf)));
	fs->opts.uid = owner;
}

/* A reply buffer too small: NUL-terminated, nothing written past it. */
static void test_small_buffer(struct tierfs *fs)
{
	char buf[64];
	bool is_clean = true;

	for (size_t size = 1; size <= 24; size += 23) {
		memset(buf, 'Z', sizeof(buf));
		ctl_handle(fs, "stats json", 0, buf, size);
		check_set_context("size %zu", size);
		CHECK_EQ(size - 1, strnlen(buf, sizeof(buf)));
		for (size_t i = size; i < sizeof(buf); i++)
			if (buf[i] != 'Z')
				is_clean = false;
		CHECK(is_clean);

		memset(buf, 'Z', sizeof(buf));
		ctl_handle(fs, "frobnicate-a-long-request-name", 0, buf, size);
		CHECK(strnlen(buf, sizeof(buf)) < size);
		for (size_t i = size; i < sizeof(buf); i++)
			if (buf[i] != 'Z')
				is_clean = false;
		CHECK(is_clean);
	}
	check_clear_context();
}

/* A reply's terminal escapes and carriage returns are made harmless. */
static void test_defang(void)
{
	char reply[] = "ok\nname\t\033]0;owned\007\r\x7f\xc3\xa9\n";

	ctl_defang(reply);
	CHECK_STR("ok\nname\t?]0;owned???\xc3\xa9\n", reply);
}

int main(void)
{
	char *argv[] = { "tierfs", "-o", "size=1m,nr_inodes=100", "/mnt", NULL };
	struct tierfs_options opts;
	struct tierfs fs;
	struct inode *file = NULL;
	char err[256] = "";
	int ret;

	if (!CHECK_EQ(0, options_parse(4, argv, RAM, &opts, err, sizeof(err)))) {
		printf("     %s\n", err);
		return check_done("ctl");
	}
	ret = tierfs_init(&fs, &opts, RAM, err, sizeof(err));
	if (!CHECK_EQ(0, ret))
		return check_done("ctl");

	/* One file: two resident pages and one fallocated. */
	CHECK_EQ(0, ns_inode_new(&fs.ns, S_IFREG | 0644, 0, 0, 0, &file));
	if (file) {
		static char data[5000];

		memset(data, 'd', sizeof(data));
		CHECK_EQ(5000, data_write_mem(&fs.data, file, data, sizeof(data), 0));
		CHECK_EQ(0, data_allocate(&fs.data, file, 2 * PAGE_SIZE, 1));
		file->nlink = 1;
		CHECK_EQ(0, dir_add(&fs.ns, fs.ns.root, "f", 1, file));
	}

	test_defang();
	test_stats(&fs);
	test_errors(&fs);
	test_set_values(&fs);
	test_set_limits(&fs);
	test_remount(&fs);
	test_json_escaping(&fs);
	test_authority(&fs);
	test_small_buffer(&fs);
	tierfs_destroy(&fs);
	return check_done("ctl");
}
