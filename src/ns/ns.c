// SPDX-License-Identifier: MIT
/*
 * Inodes and directories.  A directory is a chained hash of entries for
 * lookup plus an array ordered by cookie for readdir; removal leaves a
 * tombstone in the array until tombstones outnumber live entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tierfs/budget.h"
#include "tierfs/ns.h"
#include "tierfs/reclaim.h"

struct dir_slot {
	uint64_t cookie;
	struct dentry *d; /* NULL once removed */
};

struct dir {
	struct dentry **buckets;
	uint32_t nr_buckets; /* a power of two */
	uint32_t nr_entries;
	struct dir_slot *order; /* ascending cookies */
	uint32_t nr_order, cap_order;
	uint64_t next_cookie;
	struct inode *parent;
};

/*
 * What an entry costs beyond its own allocation: its hash bucket and its
 * slot in the readdir order, twice over for the tables' doubling.
 */
#define DENTRY_TABLE_COST (2 * (sizeof(struct dentry *) + sizeof(struct dir_slot)))

uint64_t ns_alloc_cost(size_t size)
{
	/* glibc's chunk: the request and a size word, in 16-byte steps. */
	return (size + 8 + 15) & ~(uint64_t)15;
}

/* An inode's share of ns->ids: a bucket, twice over for the doubling. */
#define INODE_TABLE_COST (2 * sizeof(struct inode *))

static uint64_t inode_cost(mode_t mode)
{
	return ns_alloc_cost(sizeof(struct inode)) + INODE_TABLE_COST +
	       (S_ISDIR(mode) ? ns_alloc_cost(sizeof(struct dir)) : 0);
}

static uint64_t dentry_cost(size_t len)
{
	return ns_alloc_cost(sizeof(struct dentry) + len + 1) + DENTRY_TABLE_COST;
}

/* The inode space in bytes; 0 = unlimited. */
static uint64_t ispace_max(struct ns *ns)
{
	uint64_t max = atomic_load(&ns->max_inodes);

	return max > UINT64_MAX / NS_BOGO_INODE_SIZE ? 0 : max * NS_BOGO_INODE_SIZE;
}

int ns_charge(struct ns *ns, uint64_t ispace, uint64_t bytes)
{
	uint64_t max = ispace_max(ns);
	bool has_shrunk;
	int err;

	if (ispace && atomic_fetch_add(&ns->ispace_used, ispace) + ispace > max && max) {
		atomic_fetch_sub(&ns->ispace_used, ispace);
		return -ENOSPC;
	}
	if (!ns->ds || !bytes)
		return 0;
	err = budget_charge_meta(ns->ds, bytes, &has_shrunk);
	if (has_shrunk)
		reclaim_kick(ns->ds);
	if (err)
		atomic_fetch_sub(&ns->ispace_used, ispace);
	return err;
}

void ns_uncharge(struct ns *ns, uint64_t ispace, uint64_t bytes)
{
	atomic_fetch_sub(&ns->ispace_used, ispace);
	if (ns->ds && bytes)
		budget_add_meta(ns->ds, -(int64_t)bytes);
}

void ns_charge_always(struct ns *ns, uint64_t bytes)
{
	if (ns->ds)
		budget_add_meta(ns->ds, (int64_t)bytes);
}

uint64_t ns_nr_free_inodes(struct ns *ns)
{
	uint64_t max = ispace_max(ns), used = atomic_load(&ns->ispace_used);

	if (!max)
		return UINT64_MAX;
	return used < max ? (max - used) / NS_BOGO_INODE_SIZE : 0;
}

uint64_t ns_nr_used_inodes(struct ns *ns)
{
	return (atomic_load(&ns->ispace_used) + NS_BOGO_INODE_SIZE - 1) / NS_BOGO_INODE_SIZE;
}

static uint32_t name_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

static size_t id_bucket(const struct ns *ns, uintptr_t id)
{
	return (size_t)(((uint64_t)id >> 4) * 0x9e3779b97f4a7c15ULL >> 32) &
	       (ns->nr_id_buckets - 1);
}

/* Double ns->ids once inodes outnumber buckets; without memory, chains grow. */
static void grow_ids(struct ns *ns)
{
	size_t nr = ns->nr_id_buckets ? ns->nr_id_buckets * 2 : 64, old_nr = ns->nr_id_buckets;
	struct inode **old = ns->ids, **b = calloc(nr, sizeof(*b));

	if (!b)
		return;
	ns->ids = b;
	ns->nr_id_buckets = nr;
	for (size_t i = 0; i < old_nr; i++) {
		struct inode *inode = old[i], *next;

		for (; inode; inode = next) {
			size_t h = id_bucket(ns, (uintptr_t)inode);

			next = inode->id_next;
			inode->id_next = b[h];
			b[h] = inode;
		}
	}
	free(old);
}

static void add_id(struct ns *ns, struct inode *inode)
{
	size_t h;

	if (atomic_load(&ns->nr_inodes) > ns->nr_id_buckets)
		grow_ids(ns);
	if (!ns->nr_id_buckets)
		return;
	h = id_bucket(ns, (uintptr_t)inode);
	inode->id_next = ns->ids[h];
	ns->ids[h] = inode;
}

static void remove_id(struct ns *ns, struct inode *inode)
{
	struct inode **p;

	if (!ns->nr_id_buckets)
		return;
	for (p = &ns->ids[id_bucket(ns, (uintptr_t)inode)]; *p; p = &(*p)->id_next) {
		if (*p == inode) {
			*p = inode->id_next;
			return;
		}
	}
}

struct inode *ns_inode_by_id(struct ns *ns, uintptr_t id)
{
	struct inode *inode;

	if (!ns->nr_id_buckets)
		return NULL;
	for (inode = ns->ids[id_bucket(ns, id)]; inode; inode = inode->id_next)
		if ((uintptr_t)inode == id)
			return inode;
	return NULL;
}

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

int ns_inode_new(struct ns *ns, mode_t mode, uid_t uid, gid_t gid, dev_t rdev, struct inode **out)
{
	struct inode *inode;
	int err = ns_charge(ns, NS_BOGO_INODE_SIZE, inode_cost(mode));

	if (err)
		return err;
	atomic_fetch_add(&ns->nr_inodes, 1);
	inode = calloc(1, sizeof(*inode));
	if (!inode)
		goto undo_count;
	if (S_ISDIR(mode)) {
		inode->dir = calloc(1, sizeof(*inode->dir));
		if (!inode->dir)
			goto free_inode;
		inode->dir->next_cookie = DIR_COOKIE_FIRST;
	}
	pthread_rwlock_init(&inode->lock, NULL);
	inode->ino = atomic_fetch_add(&ns->next_ino, 1);
	/* inode32: 1 to 2^32 - 1 and round again, as tmpfs's (which warns once). */
	if (ns->is_inode32)
		inode->ino = (inode->ino - 1) % UINT32_MAX + 1;
	inode->all_next = ns->all;
	if (ns->all)
		ns->all->all_prev = inode;
	ns->all = inode;
	add_id(ns, inode);
	inode->mode = mode;
	inode->uid = uid;
	inode->gid = gid;
	inode->rdev = rdev;
	now(&inode->ctime);
	inode->btime = inode->mtime = inode->atime = inode->ctime;
	*out = inode;
	return 0;

free_inode:
	free(inode);
undo_count:
	atomic_fetch_sub(&ns->nr_inodes, 1);
	ns_uncharge(ns, NS_BOGO_INODE_SIZE, inode_cost(mode));
	return -ENOMEM;
}

/* Free a directory's table and what entries are left; returns their cost. */
static uint64_t dir_free(struct dir *dir)
{
	uint64_t cost = 0;

	for (uint32_t i = 0; i < dir->nr_order; i++) {
		if (dir->order[i].d)
			cost += dentry_cost(dir->order[i].d->len);
		free(dir->order[i].d);
	}
	free(dir->order);
	free(dir->buckets);
	free(dir);
	return cost;
}

/* Whether an xattr takes inode space: tmpfs keeps ACLs apart (i_acl), in memory only. */
static bool is_ispace_xattr(const char *name)
{
	return strcmp(name, XATTR_ACCESS_ACL) && strcmp(name, XATTR_DEFAULT_ACL);
}

/* The xattr_space() of an inode's ACLs. */
static size_t acl_space(const struct xattr_list *xl)
{
	const char *names[] = { XATTR_ACCESS_ACL, XATTR_DEFAULT_ACL };
	size_t space = 0, size;

	for (unsigned int i = 0; i < 2; i++)
		if (xattr_peek(xl, names[i], &size))
			space += xattr_space(names[i], size);
	return space;
}

void ns_inode_free(struct ns *ns, struct inode *inode)
{
	uint64_t bytes = inode_cost(inode->mode), acls = acl_space(&inode->xattrs), xattrs;

	if (S_ISDIR(inode->mode)) {
		bytes += dir_free(inode->dir);
	} else if (S_ISLNK(inode->mode) && inode->target) {
		bytes += ns_alloc_cost(inode->size + 1);
		free(inode->target);
	}
	xattrs = xattr_clear(&inode->xattrs);
	if (inode->all_prev)
		inode->all_prev->all_next = inode->all_next;
	else
		ns->all = inode->all_next;
	if (inode->all_next)
		inode->all_next->all_prev = inode->all_prev;
	remove_id(ns, inode);
	pthread_rwlock_destroy(&inode->lock);
	free(inode);
	atomic_fetch_sub(&ns->nr_inodes, 1);
	/* Entries, targets and ACLs cost memory only. */
	ns_uncharge(ns, NS_BOGO_INODE_SIZE + xattrs - acls, bytes + xattrs);
}

int ns_init(struct ns *ns, struct data_space *ds, uint64_t max_inodes, mode_t root_mode, uid_t uid,
	    gid_t gid, bool is_inode32)
{
	int err;

	memset(ns, 0, sizeof(*ns));
	ns->ds = ds;
	ns->is_inode32 = is_inode32;
	pthread_rwlock_init(&ns->lock, NULL);
	atomic_init(&ns->next_ino, 1);
	atomic_init(&ns->nr_inodes, 0);
	atomic_init(&ns->max_inodes, max_inodes);
	err = ns_inode_new(ns, S_IFDIR | (root_mode & 07777), uid, gid, 0, &ns->root);
	if (err)
		return err;
	ns->root->nlink = 2;
	ns->root->dir->parent = ns->root;
	return 0;
}

void ns_destroy(struct ns *ns, void (*release)(void *ctx, struct inode *inode), void *ctx)
{
	while (ns->all) {
		struct inode *inode = ns->all;

		release(ctx, inode);
		ns_inode_free(ns, inode);
	}
	ns->root = NULL;
	free(ns->ids);
	ns->ids = NULL;
	ns->nr_id_buckets = 0;
	pthread_rwlock_destroy(&ns->lock);
}

struct dentry *dir_lookup(const struct inode *inode, const char *name, size_t len)
{
	const struct dir *dir = inode->dir;
	uint32_t h = name_hash(name, len);
	struct dentry *d;

	if (!dir->nr_buckets)
		return NULL;
	for (d = dir->buckets[h & (dir->nr_buckets - 1)]; d; d = d->hash_next)
		if (d->hash == h && d->len == len && !memcmp(d->name, name, len))
			return d;
	return NULL;
}

static int grow_buckets(struct dir *dir)
{
	uint32_t nr = dir->nr_buckets ? dir->nr_buckets * 2 : 8;
	struct dentry **b = calloc(nr, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < dir->nr_buckets; i++) {
		struct dentry *d = dir->buckets[i], *next;

		for (; d; d = next) {
			next = d->hash_next;
			d->hash_next = b[d->hash & (nr - 1)];
			b[d->hash & (nr - 1)] = d;
		}
	}
	free(dir->buckets);
	dir->buckets = b;
	dir->nr_buckets = nr;
	return 0;
}

/* Drop tombstones once they outnumber live entries; cookies are kept. */
static void compact_order(struct dir *dir)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < dir->nr_order; i++)
		if (dir->order[i].d)
			dir->order[j++] = dir->order[i];
	dir->nr_order = j;
}

/* Add an entry whose memory the caller has charged.  Returns 0 or -ENOMEM. */
static int add_entry(struct inode *inode, const char *name, size_t len, struct inode *child)
{
	struct dir *dir = inode->dir;
	struct dentry *d;
	uint32_t h;

	if (dir->nr_entries >= dir->nr_buckets && grow_buckets(dir))
		return -ENOMEM;
	if (dir->nr_order == dir->cap_order) {
		if (dir->nr_order >= 2 * dir->nr_entries + 16) {
			compact_order(dir);
		} else {
			uint32_t cap = dir->cap_order ? dir->cap_order * 2 : 16;
			struct dir_slot *o = realloc(dir->order, cap * sizeof(*o));

			if (!o)
				return -ENOMEM;
			dir->order = o;
			dir->cap_order = cap;
		}
	}
	d = malloc(sizeof(*d) + len + 1);
	if (!d)
		return -ENOMEM;
	h = name_hash(name, len);
	d->inode = child;
	d->hash = h;
	d->len = (uint16_t)len;
	memcpy(d->name, name, len);
	d->name[len] = '\0';
	d->cookie = dir->next_cookie++;
	d->hash_next = dir->buckets[h & (dir->nr_buckets - 1)];
	dir->buckets[h & (dir->nr_buckets - 1)] = d;
	dir->order[dir->nr_order].cookie = d->cookie;
	dir->order[dir->nr_order].d = d;
	dir->nr_order++;
	dir->nr_entries++;
	return 0;
}

int dir_add(struct ns *ns, struct inode *inode, const char *name, size_t len, struct inode *child)
{
	int err;

	if (dir_lookup(inode, name, len))
		return -EEXIST;
	err = ns_charge(ns, 0, dentry_cost(len));
	if (err)
		return err;
	err = add_entry(inode, name, len, child);
	if (err)
		ns_uncharge(ns, 0, dentry_cost(len));
	return err;
}

int dir_move(struct ns *ns, struct inode *from, struct dentry *d, struct inode *to,
	     const char *name, size_t len)
{
	uint64_t cost = dentry_cost(len), old = dentry_cost(d->len);
	int err;

	if (dir_lookup(to, name, len))
		return -EEXIST;
	/* Only a longer name may be refused: the entry it replaces goes. */
	err = ns_charge(ns, 0, cost > old ? cost - old : 0);
	if (err)
		return err;
	ns_charge_always(ns, cost > old ? old : cost);
	err = add_entry(to, name, len, d->inode);
	if (err) {
		ns_uncharge(ns, 0, cost);
		return err;
	}
	dir_remove(ns, from, d);
	return 0;
}

/* Index of the first slot with cookie > after. */
static uint32_t order_search(const struct dir *dir, uint64_t after)
{
	uint32_t lo = 0, hi = dir->nr_order;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (dir->order[mid].cookie <= after)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void dir_remove(struct ns *ns, struct inode *inode, struct dentry *victim)
{
	struct dir *dir = inode->dir;
	struct dentry **pp = &dir->buckets[victim->hash & (dir->nr_buckets - 1)];
	uint32_t i;

	while (*pp != victim)
		pp = &(*pp)->hash_next;
	*pp = victim->hash_next;
	i = order_search(dir, victim->cookie - 1);
	dir->order[i].d = NULL;
	dir->nr_entries--;
	ns_uncharge(ns, 0, dentry_cost(victim->len));
	free(victim);
	if (dir->nr_order > 64 && dir->nr_order > 2 * dir->nr_entries)
		compact_order(dir);
}

struct dentry *dir_next(const struct inode *inode, uint64_t after)
{
	const struct dir *dir = inode->dir;

	for (uint32_t i = order_search(dir, after); i < dir->nr_order; i++)
		if (dir->order[i].d)
			return dir->order[i].d;
	return NULL;
}

uint64_t dir_end_cookie(const struct inode *inode)
{
	return inode->dir->next_cookie;
}

size_t dir_nr_entries(const struct inode *inode)
{
	return inode->dir->nr_entries;
}

struct inode *dir_parent(const struct inode *inode)
{
	return inode->dir->parent;
}

void dir_set_parent(struct inode *inode, struct inode *parent)
{
	inode->dir->parent = parent;
}

void ns_inode_drop_if_unused(struct ns *ns, struct inode *inode,
			     void (*release)(void *ctx, struct inode *inode), void *ctx)
{
	if (inode->nlink || atomic_load(&inode->nlookup) || inode == ns->root)
		return;
	release(ctx, inode);
	ns_inode_free(ns, inode);
}

struct inode *ns_inode_next(struct ns *ns, struct inode *prev,
			    void (*release)(void *ctx, struct inode *inode), void *ctx)
{
	struct inode *next;

	pthread_rwlock_wrlock(&ns->lock);
	next = prev ? prev->all_next : ns->all;
	while (next && !S_ISREG(next->mode))
		next = next->all_next;
	/* A lookup reference pins it, as the kernel's would. */
	if (next)
		atomic_fetch_add(&next->nlookup, 1);
	if (prev) {
		atomic_fetch_sub(&prev->nlookup, 1);
		ns_inode_drop_if_unused(ns, prev, release, ctx);
	}
	pthread_rwlock_unlock(&ns->lock);
	return next;
}

int ns_set_target(struct ns *ns, struct inode *inode, const char *target)
{
	size_t len = strlen(target);
	uint64_t cost = ns_alloc_cost(len + 1);
	int err = ns_charge(ns, 0, cost);

	if (err)
		return err;
	inode->target = strdup(target);
	if (!inode->target) {
		ns_uncharge(ns, 0, cost);
		return -ENOMEM;
	}
	inode->size = len;
	return 0;
}

int ns_xattr_set(struct ns *ns, struct inode *inode, const char *name, const void *value,
		 size_t size, int flags)
{
	size_t old_size, space = xattr_space(name, size), old_space = 0;
	bool is_ispace = is_ispace_xattr(name);
	uint64_t more, less;
	int err;

	if (xattr_peek(&inode->xattrs, name, &old_size))
		old_space = xattr_space(name, old_size);
	more = space > old_space ? space - old_space : 0;
	less = old_space > space ? old_space - space : 0;
	err = ns_charge(ns, is_ispace ? more : 0, more);
	if (err)
		return err;
	err = xattr_set(&inode->xattrs, name, value, size, flags);
	if (err)
		ns_uncharge(ns, is_ispace ? more : 0, more);
	else if (less)
		ns_uncharge(ns, is_ispace ? less : 0, less);
	return err;
}

int ns_xattr_remove(struct ns *ns, struct inode *inode, const char *name)
{
	size_t size, space;
	int err;

	if (!xattr_peek(&inode->xattrs, name, &size))
		return -ENODATA;
	space = xattr_space(name, size);
	err = xattr_remove(&inode->xattrs, name);
	if (!err)
		ns_uncharge(ns, is_ispace_xattr(name) ? space : 0, space);
	return err;
}
