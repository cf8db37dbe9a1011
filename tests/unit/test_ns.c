// SPDX-License-Identifier: MIT
/*
 * Unit tests of the namespace: the root, inode numbers and the inode limit,
 * directory entries, readdir cookies that stay valid while entries go and
 * the order array is compacted, hash growth with 20000 names, and the
 * table of live inodes that file handles are checked against.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "tierfs/ns.h"
#include "check.h"

static unsigned int nr_released;

static void count_release(void *ctx, struct inode *inode)
{
	(void)ctx;
	(void)inode;
	nr_released++;
}

static struct inode *new_file(struct ns *ns)
{
	struct inode *inode = NULL;

	if (ns_inode_new(ns, S_IFREG | 0644, 0, 0, 0, &inode))
		return NULL;
	return inode;
}

static int add_name(struct ns *ns, struct inode *dir, const char *name, struct inode *inode)
{
	return dir_add(ns, dir, name, strlen(name), inode);
}

static struct dentry *lookup(struct inode *dir, const char *name)
{
	return dir_lookup(dir, name, strlen(name));
}

static void test_root(void)
{
	struct ns ns;
	struct inode *root;

	if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, 0755, 1000, 1001, false)))
		return;
	root = ns.root;
	CHECK(root != NULL);
	CHECK_EQ(1, root->ino); /* FUSE_ROOT_ID */
	CHECK_EQ(S_IFDIR | 0755, root->mode);
	CHECK_EQ(1000, root->uid);
	CHECK_EQ(1001, root->gid);
	CHECK_EQ(2, root->nlink);
	CHECK_EQ(1, atomic_load(&ns.nr_inodes));
	CHECK(dir_parent(root) == root);
	CHECK_EQ(0, dir_nr_entries(root));
	CHECK_EQ(DIR_COOKIE_FIRST, dir_end_cookie(root));
	CHECK(dir_next(root, 0) == NULL);
	CHECK(dir_lookup(root, "x", 1) == NULL);
	nr_released = 0;
	ns_destroy(&ns, count_release, NULL);
	CHECK_EQ(1, nr_released);

	/* Only permission bits of root_mode count; the root is a directory. */
	if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, S_IFREG | 01777, 0, 0, false)))
		return;
	CHECK_EQ(S_IFDIR | 01777, ns.root->mode);
	ns_destroy(&ns, count_release, NULL);
}

static void test_inodes(void)
{
	struct ns ns;
	struct inode *a = NULL, *b = NULL, *c = NULL, *d = NULL, *dir = NULL, *lnk = NULL;
	uint64_t last_ino;

	if (!CHECK_EQ(0, ns_init(&ns, NULL, 4, 01777, 0, 0, false)))
		return;
	CHECK_EQ(0, ns_inode_new(&ns, S_IFREG | 0600, 5, 6, 0, &a));
	CHECK_EQ(0, ns_inode_new(&ns, S_IFDIR | 0700, 5, 6, 0, &dir));
	CHECK_EQ(0, ns_inode_new(&ns, S_IFLNK | 0777, 5, 6, 0, &lnk));
	if (!a || !dir || !lnk)
		goto destroy;
	CHECK_EQ(4, atomic_load(&ns.nr_inodes));

	CHECK_EQ(S_IFREG | 0600, a->mode);
	CHECK_EQ(5, a->uid);
	CHECK_EQ(6, a->gid);
	CHECK_EQ(0, a->nlink);
	CHECK_EQ(0, atomic_load(&a->nlookup));
	CHECK_EQ(0, a->size);
	CHECK_EQ(0, a->pages.nr_entries);
	CHECK(a->ino > ns.root->ino);
	CHECK(dir->ino > a->ino);
	CHECK(lnk->ino > dir->ino);
	CHECK_EQ(0, dir_nr_entries(dir));
	CHECK_EQ(DIR_COOKIE_FIRST, dir_end_cookie(dir));
	CHECK(dir->mtime.tv_sec != 0);

	/* The limit counts the root: a fifth inode is refused. */
	CHECK_EQ(-ENOSPC, ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &b));
	CHECK(b == NULL);
	CHECK_EQ(4, atomic_load(&ns.nr_inodes));

	/* A freed inode makes room; its number is not reused. */
	last_ino = lnk->ino;
	ns_inode_free(&ns, a);
	CHECK_EQ(3, atomic_load(&ns.nr_inodes));
	CHECK_EQ(0, ns_inode_new(&ns, S_IFCHR | 0600, 0, 0, 0x0103, &b));
	if (b) {
		CHECK(b->ino > last_ino);
		CHECK_EQ(0x0103, b->rdev);
	}
	CHECK_EQ(-ENOSPC, ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &c));

	/*
	 * tmpfs's inode space: an xattr takes its size of it, so it costs the
	 * room of a fourth inode; a symlink target and an ACL take none.
	 * Freed, the inode gives back all it took.
	 */
	ns_inode_free(&ns, b);
	CHECK_EQ(3 * NS_BOGO_INODE_SIZE, atomic_load(&ns.ispace_used));
	CHECK_EQ(1, ns_nr_free_inodes(&ns));
	CHECK_EQ(0, ns_set_target(&ns, lnk, "/some/where"));
	CHECK_EQ(11, lnk->size);
	CHECK_EQ(3 * NS_BOGO_INODE_SIZE, atomic_load(&ns.ispace_used));
	CHECK_EQ(0, ns_xattr_set(&ns, dir, XATTR_DEFAULT_ACL, "\2\0\0\0", 4, 0));
	CHECK_EQ(3 * NS_BOGO_INODE_SIZE, atomic_load(&ns.ispace_used));
	CHECK_EQ(0, ns_xattr_set(&ns, lnk, "user.k", "v", 1, 0));
	CHECK_EQ(3 * NS_BOGO_INODE_SIZE + xattr_space("user.k", 1), atomic_load(&ns.ispace_used));
	CHECK_EQ(0, ns_nr_free_inodes(&ns));
	CHECK_EQ(4, ns_nr_used_inodes(&ns));
	CHECK_EQ(-ENOSPC, ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &c));
	/* A bigger value takes more; a smaller one, or none, gives back. */
	CHECK_EQ(-ENOSPC, ns_xattr_set(&ns, lnk, "user.k", "v", NS_BOGO_INODE_SIZE, 0));
	CHECK_EQ(0, ns_xattr_set(&ns, lnk, "user.k", "", 0, 0));
	CHECK_EQ(0, ns_xattr_remove(&ns, lnk, "user.k"));
	CHECK_EQ(3 * NS_BOGO_INODE_SIZE, atomic_load(&ns.ispace_used));
	CHECK_EQ(0, ns_xattr_set(&ns, lnk, "user.k", "v", 1, 0));
	ns_inode_free(&ns, lnk);
	CHECK_EQ(2 * NS_BOGO_INODE_SIZE, atomic_load(&ns.ispace_used));
	CHECK_EQ(0, ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &c));
	CHECK_EQ(0, ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &d));
	if (c)
		CHECK_EQ(-ENOSPC, ns_xattr_set(&ns, c, "user.k", "v", 1, 0));

	/* A directory with entries is freed with them. */
	if (dir && c)
		CHECK_EQ(0, add_name(&ns, dir, "c", c));
destroy:
	nr_released = 0;
	ns_destroy(&ns, count_release, NULL);
	CHECK_EQ(4, nr_released);
	CHECK(ns.all == NULL);
}

static void test_entries(void)
{
	char longest[NS_NAME_MAX + 1];
	struct inode *a, *b;
	struct dentry *d;
	struct ns ns;

	if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, 0755, 0, 0, false)))
		return;
	a = new_file(&ns);
	b = new_file(&ns);
	if (!a || !b)
		goto destroy;

	CHECK_EQ(0, add_name(&ns, ns.root, "a", a));
	CHECK_EQ(-EEXIST, add_name(&ns, ns.root, "a", b));
	CHECK_EQ(0, add_name(&ns, ns.root, "ab", b));
	CHECK_EQ(2, dir_nr_entries(ns.root));

	d = lookup(ns.root, "a");
	if (CHECK(d != NULL)) {
		CHECK(d->inode == a);
		CHECK_EQ(1, d->len);
		CHECK_STR("a", d->name);
		CHECK_EQ(DIR_COOKIE_FIRST, d->cookie);
	}
	d = lookup(ns.root, "ab");
	if (CHECK(d != NULL)) {
		CHECK(d->inode == b);
		CHECK_EQ(DIR_COOKIE_FIRST + 1, d->cookie);
	}
	/* The length bounds the name: "abc" cut to 1 is "a". */
	d = dir_lookup(ns.root, "abc", 1);
	CHECK(d != NULL && d->inode == a);
	CHECK(lookup(ns.root, "abc") == NULL);
	CHECK(lookup(ns.root, "A") == NULL);
	CHECK(lookup(ns.root, "") == NULL);

	/* Names are bytes: embedded NUL-free binary and the longest name. */
	CHECK_EQ(0, dir_add(&ns, ns.root, "\xff\x01 x\n", 5, a));
	d = dir_lookup(ns.root, "\xff\x01 x\n", 5);
	CHECK(d != NULL && d->inode == a);
	memset(longest, 'L', NS_NAME_MAX);
	longest[NS_NAME_MAX] = '\0';
	CHECK_EQ(0, add_name(&ns, ns.root, longest, b));
	d = lookup(ns.root, longest);
	if (CHECK(d != NULL)) {
		CHECK_EQ(NS_NAME_MAX, d->len);
		CHECK_STR(longest, d->name);
	}
	CHECK(dir_lookup(ns.root, longest, NS_NAME_MAX - 1) == NULL);

	/* Removal: gone from lookup and readdir; the cookie is not reused. */
	d = lookup(ns.root, "a");
	if (d)
		dir_remove(&ns, ns.root, d);
	CHECK(lookup(ns.root, "a") == NULL);
	CHECK_EQ(3, dir_nr_entries(ns.root));
	d = dir_next(ns.root, 0);
	CHECK(d != NULL && !strcmp(d->name, "ab"));
	CHECK_EQ(DIR_COOKIE_FIRST + 4, dir_end_cookie(ns.root));
	CHECK_EQ(0, add_name(&ns, ns.root, "a", b));
	d = lookup(ns.root, "a");
	CHECK(d != NULL && d->cookie == DIR_COOKIE_FIRST + 4);

	/* "." and ".." are cookies 1 and 2: resuming after them gives the first entry. */
	d = dir_next(ns.root, 1);
	CHECK(d != NULL && d->cookie == DIR_COOKIE_FIRST + 1);
	d = dir_next(ns.root, 2);
	CHECK(d != NULL && d->cookie == DIR_COOKIE_FIRST + 1);
	CHECK(dir_next(ns.root, DIR_COOKIE_FIRST + 4) == NULL);
	CHECK(dir_next(ns.root, UINT64_MAX) == NULL);

	/* Parent links. */
	{
		struct inode *sub = NULL;

		CHECK_EQ(0, ns_inode_new(&ns, S_IFDIR | 0755, 0, 0, 0, &sub));
		if (sub) {
			dir_set_parent(sub, ns.root);
			CHECK(dir_parent(sub) == ns.root);
			CHECK_EQ(0, add_name(&ns, ns.root, "sub", sub));
		}
	}
destroy:
	ns_destroy(&ns, count_release, NULL);
}

/*
 * A readdir in progress, resumed by cookie after removals that compact the
 * order array and additions: every survivor is returned once, in cookie
 * order, and nothing removed comes back.
 */
static void test_cookies_under_removal(void)
{
	enum { NR = 1000 };
	static uint64_t cookie[NR];
	static unsigned char removed[NR], seen[NR];
	struct inode *file;
	struct dentry *d;
	struct ns ns;
	char name[32];
	uint64_t pos = 0, prev = 0;
	unsigned int nr_read = 0, nr_bad_order = 0, nr_dup = 0, nr_removed_seen = 0;
	unsigned int nr_missed = 0, nr_new_seen = 0;

	if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, 0755, 0, 0, false)))
		return;
	file = new_file(&ns);
	if (!file)
		goto destroy;
	for (int i = 0; i < NR; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		if (add_name(&ns, ns.root, name, file))
			break;
		cookie[i] = lookup(ns.root, name)->cookie;
	}
	CHECK_EQ(NR, dir_nr_entries(ns.root));
	CHECK_EQ(DIR_COOKIE_FIRST, cookie[0]);
	CHECK_EQ(DIR_COOKIE_FIRST + NR - 1, cookie[NR - 1]);

	/* Read the first 300. */
	while (nr_read < 300 && (d = dir_next(ns.root, pos))) {
		pos = d->cookie;
		nr_read++;
	}
	CHECK_EQ(cookie[299], pos);

	/*
	 * Remove 700 entries: the one at pos itself, most of what was read and
	 * most of what was not.  Tombstones then outnumber live entries by far,
	 * so the order array is compacted under the reader.
	 */
	for (int i = 0; i < NR; i++) {
		if (i == 299 || (i % 10 < 7 && i != 300 && i != NR - 1)) {
			snprintf(name, sizeof(name), "n%d", i);
			d = lookup(ns.root, name);
			if (d) {
				dir_remove(&ns, ns.root, d);
				removed[i] = 1;
			}
		}
	}
	CHECK_EQ(NR - 700, dir_nr_entries(ns.root));
	/* New entries get new cookies past every old one. */
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "new%d", i);
		add_name(&ns, ns.root, name, file);
		d = lookup(ns.root, name);
		if (d && d->cookie != DIR_COOKIE_FIRST + NR + (uint64_t)i)
			nr_bad_order++;
	}

	/* Resume from the removed entry's cookie. */
	while ((d = dir_next(ns.root, pos))) {
		int i;

		if (d->cookie <= prev || d->cookie <= pos)
			nr_bad_order++;
		prev = d->cookie;
		pos = d->cookie;
		if (!strncmp(d->name, "new", 3)) {
			nr_new_seen++;
			continue;
		}
		i = atoi(d->name + 1);
		if (i < 0 || i >= NR || cookie[i] != d->cookie) {
			nr_bad_order++;
			continue;
		}
		if (seen[i]++)
			nr_dup++;
		if (removed[i])
			nr_removed_seen++;
		if (i < 300)
			nr_bad_order++; /* already read before */
	}
	for (int i = 300; i < NR; i++)
		if (!removed[i] && !seen[i])
			nr_missed++;
	CHECK_EQ(0, nr_bad_order);
	CHECK_EQ(0, nr_dup);
	CHECK_EQ(0, nr_removed_seen);
	CHECK_EQ(0, nr_missed);
	CHECK_EQ(10, nr_new_seen);

	/* Resuming from any old cookie, removed or not, lands on the next survivor. */
	nr_bad_order = 0;
	for (int i = 0; i < NR; i++) {
		int next = i + 1;

		while (next < NR && removed[next])
			next++;
		d = dir_next(ns.root, cookie[i]);
		if (next < NR ? !d || d->cookie != cookie[next] : !d || strncmp(d->name, "new", 3))
			nr_bad_order++;
	}
	CHECK_EQ(0, nr_bad_order);
destroy:
	ns_destroy(&ns, count_release, NULL);
}

/*
 * Compaction on the add path: a full order array made of tombstones is
 * compacted instead of grown; the survivor keeps its cookie.
 */
static void test_compact_on_add(void)
{
	struct inode *file;
	struct dentry *d;
	struct ns ns;
	char name[32];
	uint64_t keep_cookie = 0;

	if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, 0755, 0, 0, false)))
		return;
	file = new_file(&ns);
	if (!file)
		goto destroy;
	/* Up to 64 tombstones are kept on removal; then an add finds it full. */
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 64; i++) {
			snprintf(name, sizeof(name), "r%d-%d", round, i);
			add_name(&ns, ns.root, name, file);
		}
		for (int i = 0; i < 64; i++) {
			snprintf(name, sizeof(name), "r%d-%d", round, i);
			if (round == 0 && i == 40)
				continue;
			d = lookup(ns.root, name);
			if (d)
				dir_remove(&ns, ns.root, d);
		}
	}
	d = lookup(ns.root, "r0-40");
	if (CHECK(d != NULL))
		keep_cookie = d->cookie;
	CHECK_EQ(DIR_COOKIE_FIRST + 40, keep_cookie);
	CHECK_EQ(1, dir_nr_entries(ns.root));
	CHECK_EQ(0, add_name(&ns, ns.root, "last", file));
	CHECK_EQ(DIR_COOKIE_FIRST + 5 * 64 + 1, dir_end_cookie(ns.root));

	d = dir_next(ns.root, 0);
	CHECK(d != NULL && d->cookie == keep_cookie);
	d = dir_next(ns.root, DIR_COOKIE_FIRST + 39);
	CHECK(d != NULL && d->cookie == keep_cookie);
	d = dir_next(ns.root, keep_cookie);
	CHECK(d != NULL && !strcmp(d->name, "last"));
	d = dir_next(ns.root, DIR_COOKIE_FIRST + 200);
	CHECK(d != NULL && !strcmp(d->name, "last"));
	CHECK(d != NULL && dir_next(ns.root, d->cookie) == NULL);
destroy:
	ns_destroy(&ns, count_release, NULL);
}

/* Name i of test_many_names: the number, then 0 to 31 more characters. */
static void many_name(char *buf, size_t size, int i)
{
	snprintf(buf, size, "%d%.*s", i, i % 32, "-abcdefghijklmnopqrstuvwxyz012345");
}

/* 20000 names: the hash grows, every name is found, every cookie is in order. */
static void test_many_names(void)
{
	enum { NR = 20000 };
	static struct inode *inode[NR];
	struct dentry *d;
	struct ns ns;
	char name[64];
	uint64_t pos = 0;
	unsigned int nr_bad_lookup = 0, nr_bad_order = 0, nr_found = 0, nr_absent = 0;
	unsigned int nr_bad_cookie = 0;
	int i;

	if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, 0755, 0, 0, false)))
		return;
	for (i = 0; i < NR; i++) {
		many_name(name, sizeof(name), i);
		if (ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &inode[i]) ||
		    add_name(&ns, ns.root, name, inode[i]))
			break;
	}
	if (!CHECK_EQ(NR, i))
		goto destroy;
	CHECK_EQ(NR, dir_nr_entries(ns.root));

	for (i = 0; i < NR; i++) {
		many_name(name, sizeof(name), i);
		d = lookup(ns.root, name);
		if (!d || d->inode != inode[i] || strcmp(d->name, name))
			nr_bad_lookup++;
		else if (d->cookie != DIR_COOKIE_FIRST + (uint64_t)i)
			nr_bad_cookie++;
		snprintf(name, sizeof(name), "x%d", i);
		if (lookup(ns.root, name))
			nr_bad_lookup++;
	}
	CHECK_EQ(0, nr_bad_lookup);
	CHECK_EQ(0, nr_bad_cookie);

	/* Remove every other name. */
	for (i = 0; i < NR; i += 2) {
		many_name(name, sizeof(name), i);
		d = lookup(ns.root, name);
		if (d)
			dir_remove(&ns, ns.root, d);
	}
	CHECK_EQ(NR / 2, dir_nr_entries(ns.root));
	nr_bad_lookup = 0;
	for (i = 0; i < NR; i++) {
		many_name(name, sizeof(name), i);
		d = lookup(ns.root, name);
		if (i % 2 ? !d || d->inode != inode[i] : d != NULL)
			nr_bad_lookup++;
	}
	CHECK_EQ(0, nr_bad_lookup);

	/* A full readdir: the odd ones, ascending. */
	for (i = 1; (d = dir_next(ns.root, pos)); i += 2) {
		if (d->cookie <= pos || d->inode != (i < NR ? inode[i] : NULL))
			nr_bad_order++;
		pos = d->cookie;
		nr_found++;
	}
	CHECK_EQ(NR / 2, nr_found);
	CHECK_EQ(0, nr_bad_order);

	/* Add the even ones back: new cookies, all found again. */
	for (i = 0; i < NR; i += 2) {
		many_name(name, sizeof(name), i);
		if (add_name(&ns, ns.root, name, inode[i]))
			nr_absent++;
		d = lookup(ns.root, name);
		if (!d || d->cookie < DIR_COOKIE_FIRST + NR)
			nr_bad_cookie++;
	}
	CHECK_EQ(0, nr_absent);
	CHECK_EQ(0, nr_bad_cookie);
	CHECK_EQ(NR, dir_nr_entries(ns.root));
	CHECK_EQ(DIR_COOKIE_FIRST + NR + NR / 2, dir_end_cookie(ns.root));
destroy:
	nr_released = 0;
	ns_destroy(&ns, count_release, NULL);
	CHECK_EQ(NR + 1, nr_released);
}

/* Every live inode found by its address, through the table's doublings; none freed. */
static void test_inode_ids(void)
{
	enum { NR = 5000 };
	static struct inode *inode[NR];
	unsigned int nr_bad = 0;
	struct ns ns;
	int i;

	if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, 0755, 0, 0, false)))
		return;
	CHECK(ns_inode_by_id(&ns, (uintptr_t)ns.root) == ns.root);
	for (i = 0; i < NR && (inode[i] = new_file(&ns)); i++)
		;
	if (!CHECK_EQ(NR, i))
		goto destroy;
	for (i = 0; i < NR; i++)
		nr_bad += ns_inode_by_id(&ns, (uintptr_t)inode[i]) != inode[i];
	CHECK_EQ(0, nr_bad);
	/* An address inside an inode, or of no inode, names none. */
	CHECK(ns_inode_by_id(&ns, (uintptr_t)inode[0] + 8) == NULL);
	CHECK(ns_inode_by_id(&ns, 0) == NULL);
	for (i = 0; i < NR; i += 2) {
		uintptr_t id = (uintptr_t)inode[i];

		ns_inode_free(&ns, inode[i]);
		/* The address may come back for a later inode, never as a stale one. */
		nr_bad += ns_inode_by_id(&ns, id) != NULL;
	}
	for (i = 1; i < NR; i += 2)
		nr_bad += ns_inode_by_id(&ns, (uintptr_t)inode[i]) != inode[i];
	CHECK_EQ(0, nr_bad);
destroy:
	ns_destroy(&ns, count_release, NULL);
}

/* inode32 wraps st_ino past 2^32 - 1 to 1, as tmpfs's; inode64 goes on. */
static void test_inode32(void)
{
	for (int wraps = 0; wraps < 2; wraps++) {
		struct inode *a, *b;
		struct ns ns;

		if (!CHECK_EQ(0, ns_init(&ns, NULL, 0, 0755, 0, 0, wraps)))
			return;
		atomic_store(&ns.next_ino, UINT32_MAX);
		CHECK_EQ(0, ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &a));
		CHECK_EQ(0, ns_inode_new(&ns, S_IFREG | 0644, 0, 0, 0, &b));
		CHECK_EQ(UINT32_MAX, a->ino);
		CHECK_EQ(wraps ? 1 : (uint64_t)UINT32_MAX + 1, b->ino);
		ns_destroy(&ns, count_release, NULL);
	}
}

int main(void)
{
	test_root();
	test_inodes();
	test_entries();
	test_cookies_under_removal();
	test_compact_on_add();
	test_many_names();
	test_inode_ids();
	test_inode32();
	return check_done("ns");
}
