// SPDX-License-Identifier: MIT
/*
 * Unit tests of extended attributes (create/replace flags, the per-inode
 * space limit, listing with and without trusted.*) and of the POSIX ACL
 * arithmetic, checked against the kernel's posix_acl_valid,
 * posix_acl_equiv_mode, __posix_acl_chmod and posix_acl_create_masq.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "tierfs/xattr.h"
#include "check.h"

/* ACL xattr form: u32 version 2, then entries { u16 tag, u16 perm, u32 id }. */
enum { USER_OBJ = 1, USER = 2, GROUP_OBJ = 4, GROUP = 8, MASK = 16, OTHER = 32 };
#define ACL_MAX_ENTRIES 16
#define NO_ID 0xffffffffu

struct acl_entry_spec {
	uint16_t tag, perm;
	uint32_t id;
};

struct acl_blob {
	unsigned char bytes[4 + 8 * ACL_MAX_ENTRIES];
	size_t size;
};

static struct acl_blob acl_make(const struct acl_entry_spec *e, size_t nr)
{
	struct acl_blob b;
	uint32_t version = 2;

	memset(&b, 0, sizeof(b));
	memcpy(b.bytes, &version, 4);
	for (size_t i = 0; i < nr; i++) {
		memcpy(b.bytes + 4 + 8 * i, &e[i].tag, 2);
		memcpy(b.bytes + 4 + 8 * i + 2, &e[i].perm, 2);
		memcpy(b.bytes + 4 + 8 * i + 4, &e[i].id, 4);
	}
	b.size = 4 + 8 * nr;
	return b;
}

#define ACL(...)                                                          \
	acl_make((const struct acl_entry_spec[]){ __VA_ARGS__ },          \
		 sizeof((const struct acl_entry_spec[]){ __VA_ARGS__ }) / \
			 sizeof(struct acl_entry_spec))

/* The perm of entry i of a blob. */
static unsigned int acl_perm(const void *blob, size_t i)
{
	uint16_t perm;

	memcpy(&perm, (const char *)blob + 4 + 8 * i + 2, 2);
	return perm;
}

/* The perms of all entries as one number, 3 bits each: 0755 for {7, 5, 5}. */
static unsigned int acl_perms(const void *blob, size_t size)
{
	unsigned int v = 0;

	for (size_t i = 0; i < (size - 4) / 8; i++)
		v = v << 3 | acl_perm(blob, i);
	return v;
}

static void test_set_get(void)
{
	struct xattr_list xl = { 0 };
	const void *peeked;
	char buf[16];
	size_t size = 0;

	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.a", buf, sizeof(buf)));
	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.a", NULL, 0));
	CHECK_EQ(-ENODATA, xattr_remove(&xl, "user.a"));
	CHECK(xattr_peek(&xl, "user.a", &size) == NULL);
	CHECK_EQ(0, xattr_list_names(&xl, true, buf, sizeof(buf)));
	CHECK_EQ(0, xl.nr_bytes);

	CHECK_EQ(0, xattr_set(&xl, "user.a", "hello", 5, 0));
	CHECK_EQ(strlen("user.a") + 5, xl.nr_bytes);
	CHECK_EQ(5, xattr_get(&xl, "user.a", NULL, 0));
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(5, xattr_get(&xl, "user.a", buf, 5));
	CHECK_MEM("hello", buf, 5);
	CHECK_EQ(-ERANGE, xattr_get(&xl, "user.a", buf, 4));
	CHECK_EQ(-ERANGE, xattr_get(&xl, "user.a", buf, 1));
	peeked = xattr_peek(&xl, "user.a", &size);
	CHECK(peeked != NULL);
	CHECK_EQ(5, size);
	if (peeked)
		CHECK_MEM("hello", peeked, 5);

	/* XATTR_CREATE refuses an existing name and keeps its value. */
	CHECK_EQ(-EEXIST, xattr_set(&xl, "user.a", "x", 1, XATTR_CREATE));
	CHECK_EQ(5, xattr_get(&xl, "user.a", buf, sizeof(buf)));
	CHECK_MEM("hello", buf, 5);
	/* XATTR_REPLACE refuses a missing name and creates nothing. */
	CHECK_EQ(-ENODATA, xattr_set(&xl, "user.b", "x", 1, XATTR_REPLACE));
	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.b", NULL, 0));
	CHECK_EQ(strlen("user.a") + 5, xl.nr_bytes);
	/* ... and replaces an existing one. */
	CHECK_EQ(0, xattr_set(&xl, "user.a", "hi", 2, XATTR_REPLACE));
	CHECK_EQ(2, xattr_get(&xl, "user.a", buf, sizeof(buf)));
	CHECK_MEM("hi", buf, 2);
	CHECK_EQ(strlen("user.a") + 2, xl.nr_bytes);
	CHECK_EQ(0, xattr_set(&xl, "user.b", "new", 3, XATTR_CREATE));
	CHECK_EQ(0, xattr_set(&xl, "user.b", "newer", 5, 0));
	CHECK_EQ(5, xattr_get(&xl, "user.b", buf, sizeof(buf)));

	/* An empty value is a value. */
	CHECK_EQ(0, xattr_set(&xl, "user.empty", "", 0, 0));
	CHECK_EQ(0, xattr_get(&xl, "user.empty", NULL, 0));
	CHECK_EQ(0, xattr_get(&xl, "user.empty", buf, sizeof(buf)));
	CHECK_EQ(-EEXIST, xattr_set(&xl, "user.empty", "", 0, XATTR_CREATE));

	/* Names are exact: no prefix matches. */
	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.", NULL, 0));
	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.aa", NULL, 0));

	CHECK_EQ(0, xattr_remove(&xl, "user.a"));
	CHECK_EQ(-ENODATA, xattr_remove(&xl, "user.a"));
	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.a", NULL, 0));
	CHECK_EQ(5, xattr_get(&xl, "user.b", NULL, 0));
	CHECK_EQ(strlen("user.b") + 5 + strlen("user.empty"), xl.nr_bytes);

	xattr_clear(&xl);
	CHECK(xl.head == NULL);
	CHECK_EQ(0, xl.nr_bytes);
	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.b", NULL, 0));
}

static void test_space(void)
{
	struct xattr_list xl = { 0 };
	const size_t name_len = strlen("user.big");
	char *big = malloc(XATTR_SPACE_MAX + 1);
	char buf[8];

	if (!CHECK(big != NULL))
		return;
	memset(big, 0x42, XATTR_SPACE_MAX + 1);

	/* Names and values up to exactly XATTR_SPACE_MAX fit. */
	CHECK_EQ(-ENOSPC, xattr_set(&xl, "user.big", big, XATTR_SPACE_MAX - name_len + 1, 0));
	CHECK(xl.head == NULL);
	CHECK_EQ(0, xattr_set(&xl, "user.big", big, XATTR_SPACE_MAX - name_len, 0));
	CHECK_EQ(XATTR_SPACE_MAX, xl.nr_bytes);
	CHECK_EQ(-ENOSPC, xattr_set(&xl, "user.x", "", 0, 0));
	CHECK_EQ(-ENODATA, xattr_get(&xl, "user.x", NULL, 0));

	/* Replacing counts the old value as freed: same size fits, one more does not. */
	big[0] = 0x43;
	CHECK_EQ(0, xattr_set(&xl, "user.big", big, XATTR_SPACE_MAX - name_len, XATTR_REPLACE));
	CHECK_EQ(-ENOSPC, xattr_set(&xl, "user.big", big, XATTR_SPACE_MAX - name_len + 1, 0));
	CHECK_EQ(XATTR_SPACE_MAX - name_len, xattr_get(&xl, "user.big", NULL, 0));
	CHECK_EQ(-ERANGE, xattr_get(&xl, "user.big", buf, sizeof(buf)));
	CHECK_EQ(XATTR_SPACE_MAX, xl.nr_bytes);

	/* Shrinking frees space for another name. */
	CHECK_EQ(0, xattr_set(&xl, "user.big", big, 100, 0));
	CHECK_EQ(name_len + 100, xl.nr_bytes);
	CHECK_EQ(0, xattr_set(&xl, "user.x", big, XATTR_SPACE_MAX - name_len - 100 - 6, 0));
	CHECK_EQ(XATTR_SPACE_MAX, xl.nr_bytes);
	CHECK_EQ(-ENOSPC, xattr_set(&xl, "user.y", "", 0, 0));
	CHECK_EQ(0, xattr_remove(&xl, "user.x"));
	CHECK_EQ(name_len + 100, xl.nr_bytes);
	CHECK_EQ(0, xattr_remove(&xl, "user.big"));
	CHECK_EQ(0, xl.nr_bytes);
	xattr_clear(&xl);
	free(big);
}

/* Whether name appears in a NUL-separated list of len bytes. */
static bool list_has(const char *list, size_t len, const char *name)
{
	for (size_t off = 0; off < len; off += strlen(list + off) + 1)
		if (!strcmp(list + off, name))
			return true;
	return false;
}

static void test_list_names(void)
{
	static const char *const names[] = { "user.a",
					     "trusted.t",
					     "security.selinux",
					     "system.posix_acl_access",
					     "trusted.overlay.x",
					     "user.trusted.not" };
	struct xattr_list xl = { 0 };
	size_t all_len = 0, untrusted_len = 0;
	char buf[256];
	ssize_t n;

	for (size_t i = 0; i < 6; i++) {
		xattr_set(&xl, names[i], "v", 1, 0);
		all_len += strlen(names[i]) + 1;
		if (strncmp(names[i], "trusted.", 8))
			untrusted_len += strlen(names[i]) + 1;
	}

	/* With CAP_SYS_ADMIN: every name. */
	CHECK_EQ((ssize_t)all_len, xattr_list_names(&xl, true, NULL, 0));
	memset(buf, 0, sizeof(buf));
	n = xattr_list_names(&xl, true, buf, sizeof(buf));
	CHECK_EQ((ssize_t)all_len, n);
	if (n > 0) {
		CHECK_EQ('\0', buf[n - 1]);
		for (size_t i = 0; i < 6; i++) {
			check_set_context("with trusted, name %s", names[i]);
			CHECK(list_has(buf, (size_t)n, names[i]));
		}
		check_clear_context();
	}
	CHECK_EQ((ssize_t)all_len, xattr_list_names(&xl, true, buf, all_len));
	CHECK_EQ(-ERANGE, xattr_list_names(&xl, true, buf, all_len - 1));
	CHECK_EQ(-ERANGE, xattr_list_names(&xl, true, buf, 1));

	/* Without: trusted.* is hidden, from the length too. */
	CHECK_EQ((ssize_t)untrusted_len, xattr_list_names(&xl, false, NULL, 0));
	memset(buf, 0, sizeof(buf));
	n = xattr_list_names(&xl, false, buf, sizeof(buf));
	CHECK_EQ((ssize_t)untrusted_len, n);
	if (n > 0) {
		for (size_t i = 0; i < 6; i++) {
			check_set_context("without trusted, name %s", names[i]);
			CHECK_EQ(strncmp(names[i], "trusted.", 8) != 0,
				 list_has(buf, (size_t)n, names[i]));
		}
		check_clear_context();
	}
	CHECK_EQ((ssize_t)untrusted_len, xattr_list_names(&xl, false, buf, untrusted_len));
	CHECK_EQ(-ERANGE, xattr_list_names(&xl, false, buf, untrusted_len - 1));

	/* Only trusted names and no privilege: an empty list. */
	xattr_clear(&xl);
	xattr_set(&xl, "trusted.only", "v", 1, 0);
	CHECK_EQ(0, xattr_list_names(&xl, false, NULL, 0));
	CHECK_EQ(0, xattr_list_names(&xl, false, buf, 1));
	CHECK_EQ((ssize_t)strlen("trusted.only") + 1, xattr_list_names(&xl, true, NULL, 0));
	xattr_clear(&xl);
}

static void test_acl_valid(void)
{
	struct acl_blob b;
	uint32_t version = 1;

	b = ACL({ USER_OBJ, 6, NO_ID }, { GROUP_OBJ, 4, NO_ID }, { OTHER, 4, NO_ID });
	CHECK_EQ(0, acl_valid(b.bytes, b.size));
	b = ACL({ USER_OBJ, 7, NO_ID }, { USER, 5, 1000 }, { USER, 7, 1001 },
		{ GROUP_OBJ, 5, NO_ID }, { GROUP, 1, 50 }, { MASK, 7, NO_ID }, { OTHER, 0, NO_ID });
	CHECK_EQ(0, acl_valid(b.bytes, b.size));
	/* A mask without named entries is allowed. */
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { MASK, 5, NO_ID },
		{ OTHER, 0, NO_ID });
	CHECK_EQ(0, acl_valid(b.bytes, b.size));
	/* No entries at all: the ACL is being removed. */
	b = ACL({ 0, 0, 0 });
	CHECK_EQ(0, acl_valid(b.bytes, 4));

	check_set_context("named user without mask");
	b = ACL({ USER_OBJ, 7, NO_ID }, { USER, 5, 1000 }, { GROUP_OBJ, 5, NO_ID },
		{ OTHER, 0, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("named group without mask");
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { GROUP, 5, 7 },
		{ OTHER, 0, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("no other");
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("no user_obj");
	b = ACL({ GROUP_OBJ, 5, NO_ID }, { OTHER, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("no group_obj");
	b = ACL({ USER_OBJ, 5, NO_ID }, { OTHER, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("perm 8");
	b = ACL({ USER_OBJ, 8, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { OTHER, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("version 1");
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { OTHER, 5, NO_ID });
	memcpy(b.bytes, &version, 4);
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("size not 4 + 8n");
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { OTHER, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size - 1));
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size + 3));
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, 3));
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, 0));

	/* What the kernel's posix_acl_valid also refuses: order, duplicates, tags. */
	check_set_context("unknown tag 64");
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { 64, 5, NO_ID },
		{ OTHER, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("two user_obj");
	b = ACL({ USER_OBJ, 7, NO_ID }, { USER_OBJ, 5, NO_ID }, { GROUP_OBJ, 5, NO_ID },
		{ OTHER, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("two other");
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { OTHER, 5, NO_ID },
		{ OTHER, 7, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("other before group_obj");
	b = ACL({ USER_OBJ, 7, NO_ID }, { OTHER, 5, NO_ID }, { GROUP_OBJ, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_set_context("mask after other");
	b = ACL({ USER_OBJ, 7, NO_ID }, { USER, 5, 9 }, { GROUP_OBJ, 5, NO_ID },
		{ OTHER, 5, NO_ID }, { MASK, 5, NO_ID });
	CHECK_EQ(-EINVAL, acl_valid(b.bytes, b.size));
	check_clear_context();
}

static void test_acl_apply_to_mode(void)
{
	struct acl_blob b;
	bool is_equiv;

	/* Only the three base entries: the mode says it all. */
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { OTHER, 0, NO_ID });
	is_equiv = false;
	CHECK_EQ(S_IFREG | 04750, acl_apply_to_mode(b.bytes, b.size, S_IFREG | 04644, &is_equiv));
	CHECK(is_equiv);
	is_equiv = false;
	CHECK_EQ(S_IFDIR | 01750, acl_apply_to_mode(b.bytes, b.size, S_IFDIR | 01000, &is_equiv));
	CHECK(is_equiv);

	/* With a mask: the group bits show the mask, not group_obj. */
	b = ACL({ USER_OBJ, 6, NO_ID }, { USER, 7, 1000 }, { GROUP_OBJ, 4, NO_ID },
		{ MASK, 5, NO_ID }, { OTHER, 4, NO_ID });
	is_equiv = true;
	CHECK_EQ(S_IFREG | 0654, acl_apply_to_mode(b.bytes, b.size, S_IFREG | 0777, &is_equiv));
	CHECK(!is_equiv);

	/* A mask alone, no named entries: still not equivalent. */
	b = ACL({ USER_OBJ, 6, NO_ID }, { GROUP_OBJ, 7, NO_ID }, { MASK, 4, NO_ID },
		{ OTHER, 0, NO_ID });
	is_equiv = true;
	CHECK_EQ(S_IFREG | 0640, acl_apply_to_mode(b.bytes, b.size, S_IFREG, &is_equiv));
	CHECK(!is_equiv);

	/* Named groups with a mask. */
	b = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 6, NO_ID }, { GROUP, 4, 50 },
		{ MASK, 6, NO_ID }, { OTHER, 1, NO_ID });
	is_equiv = true;
	CHECK_EQ(S_IFREG | 02761, acl_apply_to_mode(b.bytes, b.size, S_IFREG | 02000, &is_equiv));
	CHECK(!is_equiv);
}

static void test_acl_chmod(void)
{
	struct acl_blob b;

	/* With a mask the group bits go to the mask; named entries stay. */
	b = ACL({ USER_OBJ, 6, NO_ID }, { USER, 7, 1000 }, { GROUP_OBJ, 6, NO_ID },
		{ GROUP, 6, 50 }, { MASK, 7, NO_ID }, { OTHER, 4, NO_ID });
	acl_chmod(b.bytes, b.size, S_IFREG | 0751);
	CHECK_EQ(0776651, acl_perms(b.bytes, b.size));

	/* Without a mask they go to group_obj. */
	b = ACL({ USER_OBJ, 6, NO_ID }, { GROUP_OBJ, 6, NO_ID }, { OTHER, 4, NO_ID });
	acl_chmod(b.bytes, b.size, S_IFDIR | 01705);
	CHECK_EQ(0705, acl_perms(b.bytes, b.size));

	/* chmod then apply: the mode comes back unchanged. */
	{
		bool is_equiv;

		b = ACL({ USER_OBJ, 0, NO_ID }, { USER, 7, 1000 }, { GROUP_OBJ, 0, NO_ID },
			{ MASK, 0, NO_ID }, { OTHER, 0, NO_ID });
		acl_chmod(b.bytes, b.size, 0534);
		CHECK_EQ(S_IFREG | 0534,
			 acl_apply_to_mode(b.bytes, b.size, S_IFREG | 0777, &is_equiv));
	}
}

/*
 * acl_inherit mirrors posix_acl_create_masq: user_obj and other are ANDed
 * with the mode and the mode with them; the mask (or group_obj when there
 * is none) likewise with the group bits; named entries are kept.
 */
static void test_acl_inherit(void)
{
	unsigned char acl[sizeof(((struct acl_blob *)0)->bytes)];
	struct acl_blob d;
	mode_t mode;

	/* Base entries only: narrowed, and nothing to store. */
	d = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 5, NO_ID }, { OTHER, 5, NO_ID });
	mode = S_IFREG | 0666;
	CHECK(!acl_inherit(d.bytes, d.size, &mode, acl));
	CHECK_EQ(S_IFREG | 0644, mode);
	CHECK_EQ(0644, acl_perms(acl, d.size));
	CHECK_EQ(0, acl_valid(acl, d.size));

	/* Named user and mask: the mask takes the group bits; stored. */
	d = ACL({ USER_OBJ, 7, NO_ID }, { USER, 7, 1000 }, { GROUP_OBJ, 5, NO_ID },
		{ MASK, 7, NO_ID }, { OTHER, 0, NO_ID });
	mode = S_IFREG | 0644;
	CHECK(acl_inherit(d.bytes, d.size, &mode, acl));
	CHECK_EQ(S_IFREG | 0640, mode);
	CHECK_EQ(067540, acl_perms(acl, d.size));
	{
		uint32_t id;

		memcpy(&id, acl + 4 + 8 + 4, 4);
		CHECK_EQ(1000, id);
	}

	/* A directory: the file type and the sticky/setgid bits stay. */
	d = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 7, NO_ID }, { MASK, 5, NO_ID },
		{ OTHER, 0, NO_ID });
	mode = S_IFDIR | 03777;
	CHECK(acl_inherit(d.bytes, d.size, &mode, acl));
	CHECK_EQ(S_IFDIR | 03750, mode);
	CHECK_EQ(07750, acl_perms(acl, d.size));

	/* setuid survives, group_obj narrowed when there is no mask. */
	d = ACL({ USER_OBJ, 6, NO_ID }, { GROUP_OBJ, 7, NO_ID }, { OTHER, 7, NO_ID });
	mode = S_IFREG | 04751;
	CHECK(!acl_inherit(d.bytes, d.size, &mode, acl));
	CHECK_EQ(S_IFREG | 04651, mode);
	CHECK_EQ(0651, acl_perms(acl, d.size));

	/* Named group, mask narrowed by a restrictive mode; the named perms stay. */
	d = ACL({ USER_OBJ, 7, NO_ID }, { GROUP_OBJ, 7, NO_ID }, { GROUP, 6, 50 },
		{ MASK, 7, NO_ID }, { OTHER, 7, NO_ID });
	mode = S_IFREG | 0600;
	CHECK(acl_inherit(d.bytes, d.size, &mode, acl));
	CHECK_EQ(S_IFREG | 0600, mode);
	CHECK_EQ(067600, acl_perms(acl, d.size));

	/* The default ACL itself is not edited. */
	CHECK_EQ(077677, acl_perms(d.bytes, d.size));

	/* Inherit then apply: the access ACL and the new mode agree. */
	{
		bool is_equiv;

		d = ACL({ USER_OBJ, 7, NO_ID }, { USER, 6, 1000 }, { GROUP_OBJ, 5, NO_ID },
			{ MASK, 7, NO_ID }, { OTHER, 5, NO_ID });
		mode = S_IFREG | 0664;
		CHECK(acl_inherit(d.bytes, d.size, &mode, acl));
		CHECK_EQ(S_IFREG | 0664, mode);
		CHECK_EQ(mode, acl_apply_to_mode(acl, d.size, S_IFREG | 0777, &is_equiv));
		CHECK(!is_equiv);
	}
}

int main(void)
{
	test_set_get();
	test_space();
	test_list_names();
	test_acl_valid();
	test_acl_apply_to_mode();
	test_acl_chmod();
	test_acl_inherit();
	return check_done("xattr");
}
