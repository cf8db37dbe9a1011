// SPDX-License-Identifier: MIT
/*
 * FUSE low-level operations: the tmpfs semantics.  The kernel checks
 * permissions (default_permissions) and enforces ACLs; tierfs does what the
 * kernel leaves to a filesystem: ownership and default ACL inheritance on
 * create, the chattr flags, name limits, and the data itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/fs.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "tierfs/space.h"

/* tmpfs reports a directory's size as 20 bytes an entry, "." and ".." included. */
#define BOGO_DIRENT_SIZE 20

#define FLAGS_SUPPORTED (FS_IMMUTABLE_FL | FS_APPEND_FL | FS_NODUMP_FL | FS_NOATIME_FL)

static struct tierfs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct inode *inode_of(struct tierfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->ns.root : (struct inode *)(uintptr_t)ino;
}

static fuse_ino_t nodeid_of(struct tierfs *fs, struct inode *inode)
{
	return inode == fs->ns.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

static bool is_pinned(const struct inode *inode)
{
	return inode->flags & (FS_IMMUTABLE_FL | FS_APPEND_FL);
}

/* Caller holds inode->lock. */
static void fill_stat(const struct inode *inode, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = inode->ino;
	st->st_mode = inode->mode;
	st->st_nlink = inode->nlink;
	st->st_uid = inode->uid;
	st->st_gid = inode->gid;
	st->st_rdev = inode->rdev;
	st->st_size = (off_t)inode->size;
	st->st_blksize = PAGE_SIZE;
	if (S_ISREG(inode->mode))
		st->st_blocks = (blkcnt_t)(inode->pages.nr_entries * (PAGE_SIZE / 512));
	st->st_atim = inode->atime;
	st->st_mtim = inode->mtime;
	st->st_ctim = inode->ctime;
}

/* Fill an entry reply and take the lookup reference the kernel will hold. */
static void make_entry(struct tierfs *fs, struct inode *inode, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	atomic_fetch_add(&inode->nlookup, 1);
	e->ino = nodeid_of(fs, inode);
	e->attr_timeout = fs->timeout;
	e->entry_timeout = fs->timeout;
	pthread_rwlock_rdlock(&inode->lock);
	fill_stat(inode, &e->attr);
	pthread_rwlock_unlock(&inode->lock);
}

/*
 * A file's pages go at its last close once it has no name, as on tmpfs,
 * not when the kernel finally forgets the inode.  inode->lock held.
 */
static void release_if_orphan(struct tierfs *fs, struct inode *inode)
{
	if (S_ISREG(inode->mode) && !inode->nlink && !inode->nr_open)
		data_release(&fs->data, inode);
}

static void get_open(struct inode *inode)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->nr_open++;
	pthread_rwlock_unlock(&inode->lock);
}

static void put_open(struct tierfs *fs, struct inode *inode)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->nr_open--;
	release_if_orphan(fs, inode);
	pthread_rwlock_unlock(&inode->lock);
}

/* Free an inode nobody can reach any more.  ns->lock held for writing. */
static void drop_if_unused(struct tierfs *fs, struct inode *inode)
{
	ns_inode_drop_if_unused(&fs->ns, inode, data_release_unreachable, &fs->data);
}

static void touch(struct inode *inode, bool mtime, bool ctime)
{
	struct timespec ts;

	now(&ts);
	pthread_rwlock_wrlock(&inode->lock);
	if (mtime)
		inode->mtime = ts;
	if (ctime)
		inode->ctime = ts;
	pthread_rwlock_unlock(&inode->lock);
}

/* Change a link count or a directory size; ns->lock held for writing. */
static void add_nlink(struct tierfs *fs, struct inode *inode, int delta)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->nlink += delta;
	release_if_orphan(fs, inode);
	pthread_rwlock_unlock(&inode->lock);
}

static void add_dir_size(struct inode *dir, int nr_entries)
{
	pthread_rwlock_wrlock(&dir->lock);
	dir->size += (int64_t)nr_entries * BOGO_DIRENT_SIZE;
	pthread_rwlock_unlock(&dir->lock);
}

static int check_name(const char *name)
{
	return strlen(name) > NS_NAME_MAX ? -ENAMETOOLONG : 0;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct tierfs *fs = userdata;
	/*
	 * No splice: libfuse falls back to read(2) anyway unless pipe-max-size
	 * exceeds 1 MiB + a header, and with it raised 1 MiB writes measured
	 * no faster here.
	 */
	unsigned int want = FUSE_CAP_DONT_MASK | FUSE_CAP_POSIX_ACL | FUSE_CAP_IOCTL_DIR |
			    FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_READDIRPLUS |
			    FUSE_CAP_CACHE_SYMLINKS | FUSE_CAP_PARALLEL_DIROPS | FUSE_CAP_ASYNC_DIO;

	/*
	 * Only cache=always buffers writes in the kernel: with a writeback
	 * cache ENOSPC would surface at close or fsync, not at write(2).
	 */
	if (fs->opts.cache == CACHE_ALWAYS)
		want |= FUSE_CAP_WRITEBACK_CACHE;
	conn->want |= want & conn->capable;
	/*
	 * Locks stay in the kernel (local, as on tmpfs); the kernel clears
	 * SUID/SGID itself; tierfs is the only writer, so the kernel need
	 * not re-validate cached data against our mtimes.
	 */
	conn->want &= ~(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_HANDLE_KILLPRIV |
			FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE);
	conn->max_write = 1 << 20;
	conn->max_readahead = 1 << 20;
	conn->time_gran = 1;
}

static void op_destroy(void *userdata)
{
	(void)userdata;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tierfs *fs = fs_of(req);
	struct fuse_entry_param e;
	struct dentry *d;

	if (check_name(name)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns.lock);
	d = dir_lookup(inode_of(fs, parent), name, strlen(name));
	if (d) {
		make_entry(fs, d->inode, &e);
	} else {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->timeout; /* a cached negative entry */
	}
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_entry(req, &e);
}

static void forget_one(struct tierfs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct inode *inode = inode_of(fs, ino);

	atomic_fetch_sub(&inode->nlookup, nlookup);
	drop_if_unused(fs, inode);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct tierfs *fs = fs_of(req);

	pthread_rwlock_wrlock(&fs->ns.lock);
	forget_one(fs, ino, nlookup);
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct tierfs *fs = fs_of(req);

	pthread_rwlock_wrlock(&fs->ns.lock);
	for (size_t i = 0; i < count; i++)
		forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = inode_of(fs, ino);
	struct stat st;

	(void)fi;
	pthread_rwlock_rdlock(&inode->lock);
	fill_stat(inode, &st);
	pthread_rwlock_unlock(&inode->lock);
	fuse_reply_attr(req, &st, fs->timeout);
}

static int setattr_locked(struct tierfs *fs, struct inode *inode, struct stat *attr, int to_set)
{
	struct timespec ts;
	int err;

	now(&ts);
	if ((inode->flags & FS_IMMUTABLE_FL) &&
	    (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
		       FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW)))
		return -EPERM;
	if ((inode->flags & FS_APPEND_FL) && (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
							FUSE_SET_ATTR_GID | FUSE_SET_ATTR_SIZE)))
		return -EPERM;
	/*
	 * Explicit times on an append-only file: refused, but "touch" (the
	 * _NOW forms) is allowed.  The writeback cache's own time updates
	 * carry CTIME and pass.
	 */
	if ((inode->flags & FS_APPEND_FL) && !(to_set & FUSE_SET_ATTR_CTIME) &&
	    (((to_set & FUSE_SET_ATTR_ATIME) && !(to_set & FUSE_SET_ATTR_ATIME_NOW)) ||
	     ((to_set & FUSE_SET_ATTR_MTIME) && !(to_set & FUSE_SET_ATTR_MTIME_NOW))))
		return -EPERM;
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (!S_ISREG(inode->mode))
			return S_ISDIR(inode->mode) ? -EISDIR : -EINVAL;
		if ((uint64_t)attr->st_size != inode->size) {
			err = data_truncate(&fs->data, inode, (uint64_t)attr->st_size);
			if (err)
				return err;
			inode->mtime = ts;
		}
	}
	if (to_set & FUSE_SET_ATTR_MODE) {
		size_t size;
		void *acl = (void *)xattr_peek(&inode->xattrs, XATTR_ACCESS_ACL, &size);

		inode->mode = (inode->mode & S_IFMT) | (attr->st_mode & 07777);
		if (acl)
			acl_chmod(acl, size, inode->mode);
	}
	if (to_set & FUSE_SET_ATTR_UID)
		inode->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		inode->gid = attr->st_gid;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		inode->atime = ts;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		inode->atime = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		inode->mtime = ts;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		inode->mtime = attr->st_mtim;
	if (to_set & FUSE_SET_ATTR_CTIME)
		inode->ctime = attr->st_ctim;
	else
		inode->ctime = ts;
	return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = inode_of(fs, ino);
	struct stat st;
	int err;

	(void)fi;
	pthread_rwlock_wrlock(&inode->lock);
	err = setattr_locked(fs, inode, attr, to_set);
	fill_stat(inode, &st);
	pthread_rwlock_unlock(&inode->lock);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, fs->timeout);
}

/*
 * Nothing may touch an inode after its reply: the kernel can drop its last
 * reference and send the forget that frees it at once.  Only an open file
 * (read, write) pins the inode until its release.
 */
static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct inode *inode = inode_of(fs_of(req), ino);
	char target[NS_SYMLINK_MAX + 1];
	bool is_link;

	pthread_rwlock_rdlock(&inode->lock);
	is_link = S_ISLNK(inode->mode);
	if (is_link)
		memcpy(target, inode->target, inode->size + 1);
	pthread_rwlock_unlock(&inode->lock);
	if (is_link)
		fuse_reply_readlink(req, target);
	else
		fuse_reply_err(req, EINVAL);
}

/*
 * Mode, owner and ACL of a new inode: setgid directories pass on their
 * group (and, to subdirectories, the bit); a default ACL replaces the
 * umask; the caller's umask applies otherwise.
 */
static int init_new_inode(fuse_req_t req, struct inode *dir, struct inode *inode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	const void *dacl;
	size_t dacl_size;
	mode_t mode = inode->mode;
	int err = 0;

	inode->uid = ctx->uid;
	inode->gid = ctx->gid;
	pthread_rwlock_rdlock(&dir->lock);
	inode->flags = dir->flags & (FS_NODUMP_FL | FS_NOATIME_FL);
	if (dir->mode & S_ISGID) {
		inode->gid = dir->gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	dacl = S_ISLNK(mode) ? NULL : xattr_peek(&dir->xattrs, XATTR_DEFAULT_ACL, &dacl_size);
	if (dacl) {
		char *acl = malloc(dacl_size);

		if (!acl) {
			err = -ENOMEM;
			goto unlock;
		}
		if (acl_inherit(dacl, dacl_size, &mode, acl))
			err = xattr_set(&inode->xattrs, XATTR_ACCESS_ACL, acl, dacl_size, 0);
		if (!err && S_ISDIR(mode))
			err = xattr_set(&inode->xattrs, XATTR_DEFAULT_ACL, dacl, dacl_size, 0);
		free(acl);
	} else if (!S_ISLNK(mode)) {
		mode &= ~(ctx->umask & 0777);
	}
unlock:
	pthread_rwlock_unlock(&dir->lock);
	inode->mode = mode;
	return err;
}

static void set_open_flags(struct tierfs *fs, struct fuse_file_info *fi)
{
	switch (fs->opts.cache) {
	case CACHE_NEVER:
		fi->direct_io = 1;
		break;
	case CACHE_AUTO:
		fi->direct_io = !!(fi->flags & O_DIRECT);
		fi->keep_cache = !fi->direct_io;
		break;
	case CACHE_ALWAYS:
		fi->keep_cache = 1;
		break;
	}
}

/*
 * Create name in parent: a file, directory, node or symlink.  Replies with
 * the entry (or, for create, entry and open file).
 */
static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev,
		      const char *target, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *dir = inode_of(fs, parent), *inode;
	struct lru_lists *lists = NULL;
	struct fuse_entry_param e;
	size_t len = strlen(name);
	int err = check_name(name);

	if (!err && target && strlen(target) > NS_SYMLINK_MAX)
		err = -ENAMETOOLONG;
	if (err)
		goto reply;
	/* Charged to the creator's cgroup; resolved before the lock: it reads /proc. */
	if (S_ISREG(mode) && fs->data.backend)
		lists = tenants_charge(&fs->tenants, &fs->data.lru, fuse_req_ctx(req)->pid);
	pthread_rwlock_wrlock(&fs->ns.lock);
	if (dir->flags & FS_IMMUTABLE_FL) {
		err = -EPERM;
		goto unlock;
	}
	if (dir_lookup(dir, name, len)) {
		err = -EEXIST;
		goto unlock;
	}
	err = ns_inode_new(&fs->ns, mode, 0, 0, rdev, &inode);
	if (err)
		goto unlock;
	inode->lists = lists;
	err = init_new_inode(req, dir, inode);
	if (err)
		goto free_inode;
	if (target) {
		inode->target = strdup(target);
		if (!inode->target) {
			err = -ENOMEM;
			goto free_inode;
		}
		inode->size = strlen(target);
	}
	if (S_ISDIR(mode)) {
		dir_set_parent(inode, dir);
		inode->size = 2 * BOGO_DIRENT_SIZE;
	}
	inode->nlink = S_ISDIR(mode) ? 2 : 1;
	err = dir_add(dir, name, len, inode);
	if (err)
		goto free_inode;
	if (S_ISDIR(mode))
		add_nlink(fs, dir, 1);
	add_dir_size(dir, 1);
	touch(dir, true, true);
	make_entry(fs, inode, &e);
	pthread_rwlock_unlock(&fs->ns.lock);
	if (fi) {
		set_open_flags(fs, fi);
		get_open(inode);
		if (fuse_reply_create(req, &e, fi))
			put_open(fs, inode);
	} else {
		fuse_reply_entry(req, &e);
	}
	return;

free_inode:
	inode->nlink = 0;
	drop_if_unused(fs, inode);
unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
reply:
	if (err == -ENOSPC)
		atomic_fetch_add(&fs->counters.nr_enospc, 1);
	fuse_reply_err(req, -err);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, mode, rdev, NULL, NULL);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_node(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL, NULL);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	make_node(req, parent, name, S_IFLNK | 0777, 0, link, NULL);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	make_node(req, parent, name, S_IFREG | (mode & 07777), 0, NULL, fi);
}

/* Checks shared by unlink, rmdir and rename of an entry out of dir. */
static int may_remove(const struct inode *dir, const struct inode *victim)
{
	return is_pinned(dir) || is_pinned(victim) ? -EPERM : 0;
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name, bool want_dir)
{
	struct tierfs *fs = fs_of(req);
	struct inode *dir = inode_of(fs, parent), *victim;
	struct dentry *d;
	int err = 0;

	pthread_rwlock_wrlock(&fs->ns.lock);
	d = dir_lookup(dir, name, strlen(name));
	if (!d) {
		err = -ENOENT;
		goto unlock;
	}
	victim = d->inode;
	if (want_dir && !S_ISDIR(victim->mode))
		err = -ENOTDIR;
	else if (!want_dir && S_ISDIR(victim->mode))
		err = -EISDIR;
	else if (want_dir && dir_nr_entries(victim))
		err = -ENOTEMPTY;
	else
		err = may_remove(dir, victim);
	if (err)
		goto unlock;
	dir_remove(dir, d);
	if (want_dir) {
		add_nlink(fs, victim, -(int)victim->nlink);
		add_nlink(fs, dir, -1);
	} else {
		add_nlink(fs, victim, -1);
	}
	add_dir_size(dir, -1);
	touch(victim, false, true);
	touch(dir, true, true);
	drop_if_unused(fs, victim);
unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_err(req, -err);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, false);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, true);
}

/* Move directory inode from one parent to another: fix ".." and link counts. */
static void reparent(struct tierfs *fs, struct inode *inode, struct inode *from, struct inode *to)
{
	if (!S_ISDIR(inode->mode) || from == to)
		return;
	dir_set_parent(inode, to);
	add_nlink(fs, from, -1);
	add_nlink(fs, to, 1);
}

static int rename_exchange(struct tierfs *fs, struct inode *sdir, struct dentry *sd,
			   struct inode *ddir, struct dentry *dd)
{
	struct inode *a = sd->inode, *b = dd->inode;

	if (is_pinned(a) || is_pinned(b))
		return -EPERM;
	sd->inode = b;
	dd->inode = a;
	reparent(fs, a, sdir, ddir);
	reparent(fs, b, ddir, sdir);
	touch(a, false, true);
	touch(b, false, true);
	return 0;
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct tierfs *fs = fs_of(req);
	struct inode *sdir = inode_of(fs, parent), *ddir = inode_of(fs, newparent);
	struct inode *moved, *replaced = NULL, *whiteout = NULL;
	struct dentry *sd, *dd;
	int err = check_name(newname);

	if (err)
		goto reply;
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT) ||
	    ((flags & RENAME_EXCHANGE) && (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))) {
		err = -EINVAL;
		goto reply;
	}
	pthread_rwlock_wrlock(&fs->ns.lock);
	sd = dir_lookup(sdir, name, strlen(name));
	dd = dir_lookup(ddir, newname, strlen(newname));
	if (!sd) {
		err = -ENOENT;
		goto unlock;
	}
	moved = sd->inode;
	if (is_pinned(sdir) || (ddir->flags & FS_IMMUTABLE_FL) || (dd && is_pinned(ddir))) {
		err = -EPERM;
		goto unlock;
	}
	if (flags & RENAME_EXCHANGE) {
		err = dd ? rename_exchange(fs, sdir, sd, ddir, dd) : -ENOENT;
		goto touch_dirs;
	}
	if (dd && (flags & RENAME_NOREPLACE)) {
		err = -EEXIST;
		goto unlock;
	}
	if (dd && dd->inode == moved)
		goto unlock; /* two links to one inode: POSIX says do nothing */
	if (is_pinned(moved)) {
		err = -EPERM;
		goto unlock;
	}
	if (dd) {
		replaced = dd->inode;
		if (S_ISDIR(moved->mode) && !S_ISDIR(replaced->mode))
			err = -ENOTDIR;
		else if (!S_ISDIR(moved->mode) && S_ISDIR(replaced->mode))
			err = -EISDIR;
		else if (S_ISDIR(replaced->mode) && dir_nr_entries(replaced))
			err = -ENOTEMPTY;
		else
			err = may_remove(ddir, replaced);
		if (err)
			goto unlock;
	}
	if (flags & RENAME_WHITEOUT) {
		err = ns_inode_new(&fs->ns, S_IFCHR, 0, 0, makedev(0, 0), &whiteout);
		if (err)
			goto unlock;
		init_new_inode(req, sdir, whiteout);
		whiteout->mode = S_IFCHR;
		whiteout->nlink = 1;
	}
	if (dd) {
		/* Reuse the target entry: nothing to allocate, nothing to undo. */
		dd->inode = moved;
		if (S_ISDIR(replaced->mode)) {
			add_nlink(fs, replaced, -(int)replaced->nlink);
			add_nlink(fs, ddir, -1);
		} else {
			add_nlink(fs, replaced, -1);
		}
		touch(replaced, false, true);
	} else {
		err = dir_add(ddir, newname, strlen(newname), moved);
		if (err)
			goto free_whiteout;
		add_dir_size(ddir, 1);
	}
	dir_remove(sdir, sd);
	if (whiteout && dir_add(sdir, name, strlen(name), whiteout) == 0)
		whiteout = NULL;
	else
		add_dir_size(sdir, -1);
	reparent(fs, moved, sdir, ddir);
	touch(moved, false, true);
	if (replaced)
		drop_if_unused(fs, replaced);
free_whiteout:
	if (whiteout) {
		whiteout->nlink = 0;
		drop_if_unused(fs, whiteout);
	}
touch_dirs:
	if (!err) {
		touch(sdir, true, true);
		if (ddir != sdir)
			touch(ddir, true, true);
	}
unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
reply:
	fuse_reply_err(req, -err);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = inode_of(fs, ino), *dir = inode_of(fs, newparent);
	struct fuse_entry_param e;
	int err = check_name(newname);

	if (err)
		goto reply;
	pthread_rwlock_wrlock(&fs->ns.lock);
	if (is_pinned(inode) || (dir->flags & FS_IMMUTABLE_FL))
		err = -EPERM;
	else if (S_ISDIR(inode->mode))
		err = -EPERM;
	else
		err = dir_add(dir, newname, strlen(newname), inode);
	if (!err) {
		add_nlink(fs, inode, 1);
		add_dir_size(dir, 1);
		touch(inode, false, true);
		touch(dir, true, true);
		make_entry(fs, inode, &e);
	}
	pthread_rwlock_unlock(&fs->ns.lock);
	if (!err) {
		fuse_reply_entry(req, &e);
		return;
	}
reply:
	fuse_reply_err(req, -err);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = inode_of(fs, ino);
	bool is_write = (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC);
	int err = 0;

	pthread_rwlock_wrlock(&inode->lock);
	if (is_write && (inode->flags & FS_IMMUTABLE_FL))
		err = -EPERM;
	else if (is_write && (inode->flags & FS_APPEND_FL) &&
		 (!(fi->flags & O_APPEND) || (fi->flags & O_TRUNC)))
		err = -EPERM;
	else if ((fi->flags & O_TRUNC) && S_ISREG(inode->mode)) {
		err = data_truncate(&fs->data, inode, 0);
		now(&inode->mtime);
		inode->ctime = inode->mtime;
	}
	pthread_rwlock_unlock(&inode->lock);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	set_open_flags(fs, fi);
	get_open(inode);
	if (fuse_reply_open(req, fi))
		put_open(fs, inode);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);

	(void)fi;
	put_open(fs, inode_of(fs, ino));
	fuse_reply_err(req, 0);
}

/* relatime, as tmpfs mounts default to: at most daily, or once after a change. */
static void update_atime(struct inode *inode)
{
	struct timespec ts;
	bool is_due;

	if (inode->flags & FS_NOATIME_FL)
		return;
	now(&ts);
	pthread_rwlock_rdlock(&inode->lock);
	is_due = inode->atime.tv_sec < inode->mtime.tv_sec ||
		 (inode->atime.tv_sec == inode->mtime.tv_sec &&
		  inode->atime.tv_nsec <= inode->mtime.tv_nsec) ||
		 inode->atime.tv_sec <= inode->ctime.tv_sec ||
		 ts.tv_sec - inode->atime.tv_sec >= 24 * 3600;
	pthread_rwlock_unlock(&inode->lock);
	if (!is_due)
		return;
	pthread_rwlock_wrlock(&inode->lock);
	inode->atime = ts;
	pthread_rwlock_unlock(&inode->lock);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = inode_of(fs, ino);
	struct iovec iov[DATA_MAX_READ_PAGES];
	char *scratch = NULL;
	size_t bytes = 0;
	bool is_swapped;
	int nr;

	if (size > (size_t)1 << 20)
		size = (size_t)1 << 20;
	update_atime(inode);
	pthread_rwlock_rdlock(&inode->lock);
	/* Without a backend nothing is ever swapped: skip the page map walk. */
	is_swapped = fs->data.backend && data_has_swapped(inode, (uint64_t)off, size);
	if (is_swapped && (fi->flags & O_DIRECT)) {
		/* O_DIRECT bypasses the resident tier: read, do not bring back. */
		char *buf = malloc(size);
		ssize_t got = buf ? data_read_mem(&fs->data, inode, (uint64_t)off, buf, size) :
				    -ENOMEM;

		pthread_rwlock_unlock(&inode->lock);
		if (got < 0) {
			fuse_reply_err(req, (int)-got);
		} else {
			atomic_fetch_add_explicit(&fs->counters.nr_reads, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&fs->counters.bytes_read, (uint64_t)got,
						  memory_order_relaxed);
			fuse_reply_buf(req, buf, (size_t)got);
		}
		free(buf);
		return;
	}
	if (is_swapped) {
		int err = 0;

		pthread_rwlock_unlock(&inode->lock);
		pthread_rwlock_wrlock(&inode->lock);
		/* Bringing in a late page can evict an early one: until all are in. */
		for (int i = 0; !err && data_has_swapped(inode, (uint64_t)off, size); i++)
			err = i < 8 ? data_swap_in(&fs->data, inode, (uint64_t)off, size) : -ENOMEM;
		if (err) {
			pthread_rwlock_unlock(&inode->lock);
			fuse_reply_err(req, -err);
			return;
		}
	}
	nr = data_read(&fs->data, inode, (uint64_t)off, size, iov, &scratch);
	for (int i = 0; i < nr; i++)
		bytes += iov[i].iov_len;
	if (nr < 0)
		fuse_reply_err(req, -nr);
	else
		fuse_reply_iov(req, iov, nr);
	pthread_rwlock_unlock(&inode->lock);
	free(scratch);
	atomic_fetch_add_explicit(&fs->counters.nr_reads, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&fs->counters.bytes_read, bytes, memory_order_relaxed);
}

/* Writers without CAP_FSETID lose SUID, and SGID where it means setgid. */
static void kill_suid(fuse_req_t req, struct inode *inode)
{
	if (fuse_req_ctx(req)->uid == 0)
		return;
	if (inode->mode & S_ISUID)
		inode->mode &= ~(mode_t)S_ISUID;
	if ((inode->mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		inode->mode &= ~(mode_t)S_ISGID;
}

/* Most buffers of a write passed on as they are; libfuse hands one. */
#define WRITE_MAX_IOV 8

/*
 * The memory of bufv's buffers as iovecs for data_write, pointing into
 * libfuse's request buffer, so that each byte is copied once, into the
 * pool, as fuse_buf_copy did.  A buffer held in a file descriptor (a
 * splice pipe: op_init turns splice off, so libfuse hands none) or more
 * buffers than iov holds are read into *bounce first.  Returns the number
 * of iovecs or -errno.
 */
static int write_iov(struct fuse_bufvec *bufv, struct iovec *iov, void **bounce)
{
	size_t len = fuse_buf_size(bufv);
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(len);
	bool is_mem = bufv->count - bufv->idx <= WRITE_MAX_IOV;
	ssize_t got;
	int nr = 0;

	for (size_t i = bufv->idx; is_mem && i < bufv->count; i++)
		is_mem = !(bufv->buf[i].flags & FUSE_BUF_IS_FD);
	if (is_mem) {
		for (size_t i = bufv->idx; i < bufv->count; i++) {
			size_t skip = i == bufv->idx ? bufv->off : 0;

			iov[nr].iov_base = (char *)bufv->buf[i].mem + skip;
			iov[nr++].iov_len = bufv->buf[i].size - skip;
		}
		return nr;
	}
	*bounce = malloc(len ? len : 1);
	if (!*bounce)
		return -ENOMEM;
	dst.buf[0].mem = *bounce;
	got = fuse_buf_copy(&dst, bufv, 0);
	if (got < 0)
		return (int)got;
	iov[0].iov_base = *bounce;
	iov[0].iov_len = (size_t)got;
	return 1;
}

static void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
			 struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = inode_of(fs, ino);
	struct iovec iov[WRITE_MAX_IOV];
	void *bounce = NULL;
	int nr_iov = write_iov(bufv, iov, &bounce);
	ssize_t ret;

	(void)fi;
	if (nr_iov < 0) {
		free(bounce);
		fuse_reply_err(req, -nr_iov);
		return;
	}
	pthread_rwlock_wrlock(&inode->lock);
	if (inode->flags & FS_IMMUTABLE_FL) {
		ret = -EPERM;
	} else {
		ret = data_write(&fs->data, inode, iov, (unsigned int)nr_iov, (uint64_t)off);
		if (ret > 0) {
			now(&inode->mtime);
			inode->ctime = inode->mtime;
			kill_suid(req, inode);
		}
	}
	pthread_rwlock_unlock(&inode->lock);
	free(bounce);
	if (ret < 0) {
		if (ret == -ENOSPC)
			atomic_fetch_add(&fs->counters.nr_enospc, 1);
		fuse_reply_err(req, (int)-ret);
		return;
	}
	atomic_fetch_add_explicit(&fs->counters.nr_writes, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&fs->counters.bytes_written, (uint64_t)ret, memory_order_relaxed);
	fuse_reply_write(req, (size_t)ret);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino, (void)datasync, (void)fi;
	fuse_reply_err(req, 0); /* memory is as durable as it gets */
}

/*
 * An open directory remembers where its listing ends, so entries created
 * while it is read are not returned and a create-per-getdents loop ends,
 * as on tmpfs.  A rewind (offset 0) moves the end up to now.
 */
struct dir_handle {
	atomic_uint_fast64_t end_cookie;
};

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct dir_handle *dh = malloc(sizeof(*dh));

	if (!dh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns.lock);
	atomic_init(&dh->end_cookie, dir_end_cookie(inode_of(fs, ino)));
	pthread_rwlock_unlock(&fs->ns.lock);
	fi->fh = (uintptr_t)dh;
	if (fuse_reply_open(req, fi))
		free(dh);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	free((struct dir_handle *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool is_plus)
{
	struct tierfs *fs = fs_of(req);
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	struct inode *dir = inode_of(fs, ino);
	char *buf = malloc(size);
	uint64_t end;
	size_t used = 0;
	struct dentry *d;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns.lock);
	if (!dir->nlink) {
		/* Removed while open: its ".." may be gone too. */
		pthread_rwlock_unlock(&fs->ns.lock);
		free(buf);
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (off == 0)
		atomic_store(&dh->end_cookie, dir_end_cookie(dir));
	end = atomic_load(&dh->end_cookie);
	/* Offsets 1 and 2 follow "." and ".."; then each entry's cookie. */
	for (;;) {
		struct fuse_entry_param e;
		struct inode *inode;
		const char *name;
		uint64_t next;
		size_t need;

		if (off == 0) {
			inode = dir, name = ".", next = 1;
		} else if (off == 1) {
			inode = dir_parent(dir), name = "..", next = 2;
		} else {
			d = dir_next(dir, (uint64_t)off);
			if (!d || d->cookie >= end)
				break;
			inode = d->inode, name = d->name, next = d->cookie;
		}
		memset(&e, 0, sizeof(e));
		pthread_rwlock_rdlock(&inode->lock);
		fill_stat(inode, &e.attr);
		pthread_rwlock_unlock(&inode->lock);
		if (is_plus) {
			/* The kernel takes no reference on "." and "..". */
			if (off >= 2) {
				e.ino = nodeid_of(fs, inode);
				e.attr_timeout = e.entry_timeout = fs->timeout;
			}
			need = fuse_add_direntry_plus(req, buf + used, size - used, name, &e,
						      (off_t)next);
		} else {
			need = fuse_add_direntry(req, buf + used, size - used, name, &e.attr,
						 (off_t)next);
		}
		if (need > size - used)
			break;
		if (is_plus && e.ino)
			atomic_fetch_add(&inode->nlookup, 1);
		used += need;
		off = (off_t)next;
	}
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

/*
 * Like tmpfs, but what can really be written: the smaller of size= and the
 * capacity the budget and the backend have left, so blocks shrink below
 * size= when the capacity is the tighter bound.
 */
static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct tierfs *fs = fs_of(req);
	uint64_t used = atomic_load(&fs->data.nr_pages), nr_free;
	uint64_t nr_inodes = atomic_load(&fs->ns.nr_inodes);
	struct statvfs st;

	(void)ino;
	if (budget_update(&fs->data, false))
		reclaim_kick(&fs->data);
	nr_free = budget_nr_free_pages(&fs->data);
	memset(&st, 0, sizeof(st));
	st.f_bsize = PAGE_SIZE;
	st.f_frsize = PAGE_SIZE;
	st.f_namemax = NS_NAME_MAX;
	if (nr_free != UINT64_MAX) {
		st.f_blocks = used + nr_free;
		st.f_bfree = st.f_bavail = nr_free;
	}
	if (fs->ns.max_inodes) {
		st.f_files = fs->ns.max_inodes;
		st.f_ffree = st.f_favail = nr_inodes < st.f_files ? st.f_files - nr_inodes : 0;
	}
	fuse_reply_statfs(req, &st);
}

/* Which names tierfs stores; the rest of system.* does not exist here. */
static bool is_known_xattr(const char *name)
{
	return !strncmp(name, "user.", 5) || !strncmp(name, "trusted.", 8) ||
	       !strncmp(name, "security.", 9) || !strcmp(name, XATTR_ACCESS_ACL) ||
	       !strcmp(name, XATTR_DEFAULT_ACL);
}

static int setxattr_locked(struct inode *inode, const char *name, const char *value, size_t size,
			   int flags)
{
	bool is_access_acl = !strcmp(name, XATTR_ACCESS_ACL);
	int err;

	if (!is_known_xattr(name))
		return -EOPNOTSUPP;
	if (is_pinned(inode))
		return -EPERM;
	if (!strncmp(name, "user.", 5) && !S_ISREG(inode->mode) && !S_ISDIR(inode->mode))
		return -EPERM;
	if (!strncmp(name, "system.", 7)) {
		err = acl_valid(value, size);
		if (err)
			return err;
		if (!strcmp(name, XATTR_DEFAULT_ACL) && !S_ISDIR(inode->mode))
			return -EACCES;
	}
	err = xattr_set(&inode->xattrs, name, value, size, flags);
	if (err)
		return err;
	if (is_access_acl) {
		size_t len;
		const void *acl = xattr_peek(&inode->xattrs, name, &len);
		bool is_equiv;

		inode->mode = acl_apply_to_mode(acl, len, inode->mode, &is_equiv);
		if (is_equiv)
			xattr_remove(&inode->xattrs, name);
	}
	now(&inode->ctime);
	return 0;
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	struct inode *inode = inode_of(fs_of(req), ino);
	int err;

	pthread_rwlock_wrlock(&inode->lock);
	err = setxattr_locked(inode, name, value, size, flags);
	pthread_rwlock_unlock(&inode->lock);
	fuse_reply_err(req, -err);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct inode *inode = inode_of(fs_of(req), ino);
	char *buf = NULL;
	ssize_t ret;

	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&inode->lock);
	ret = is_known_xattr(name) ? xattr_get(&inode->xattrs, name, buf, size) : -EOPNOTSUPP;
	pthread_rwlock_unlock(&inode->lock);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else if (!size)
		fuse_reply_xattr(req, (size_t)ret);
	else
		fuse_reply_buf(req, buf, (size_t)ret);
	free(buf);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct inode *inode = inode_of(fs_of(req), ino);
	char *buf = NULL;
	ssize_t ret;

	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&inode->lock);
	ret = xattr_list_names(&inode->xattrs, fuse_req_ctx(req)->uid == 0, buf, size);
	pthread_rwlock_unlock(&inode->lock);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else if (!size)
		fuse_reply_xattr(req, (size_t)ret);
	else
		fuse_reply_buf(req, buf, (size_t)ret);
	free(buf);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct inode *inode = inode_of(fs_of(req), ino);
	int err;

	pthread_rwlock_wrlock(&inode->lock);
	if (!is_known_xattr(name))
		err = -EOPNOTSUPP;
	else if (is_pinned(inode))
		err = -EPERM;
	else
		err = xattr_remove(&inode->xattrs, name);
	if (err == -ENODATA && !strncmp(name, "system.", 7))
		err = 0; /* removing an ACL that is not there: nothing to do */
	if (!err)
		now(&inode->ctime);
	pthread_rwlock_unlock(&inode->lock);
	fuse_reply_err(req, -err);
}

static uint32_t xflags_of(uint32_t flags)
{
	return (flags & FS_IMMUTABLE_FL ? FS_XFLAG_IMMUTABLE : 0) |
	       (flags & FS_APPEND_FL ? FS_XFLAG_APPEND : 0) |
	       (flags & FS_NODUMP_FL ? FS_XFLAG_NODUMP : 0) |
	       (flags & FS_NOATIME_FL ? FS_XFLAG_NOATIME : 0);
}

static uint32_t flags_of_xflags(uint32_t xflags)
{
	return (xflags & FS_XFLAG_IMMUTABLE ? FS_IMMUTABLE_FL : 0) |
	       (xflags & FS_XFLAG_APPEND ? FS_APPEND_FL : 0) |
	       (xflags & FS_XFLAG_NODUMP ? FS_NODUMP_FL : 0) |
	       (xflags & FS_XFLAG_NOATIME ? FS_NOATIME_FL : 0);
}

static void set_flags(fuse_req_t req, struct inode *inode, uint32_t flags)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->flags = flags;
	now(&inode->ctime);
	pthread_rwlock_unlock(&inode->lock);
	fuse_reply_ioctl(req, 0, NULL, 0);
}

/*
 * chattr and lsattr: the kernel checks ownership and CAP_LINUX_IMMUTABLE
 * before it asks; like tmpfs, only i, a, d and A exist, and FSSETXATTR
 * refuses project ids and extent sizes.
 */
static void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	struct inode *inode = inode_of(fs_of(req), ino);
	struct fsxattr fsx;
	uint32_t value;

	(void)arg, (void)fi;
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	switch (cmd) {
	case FS_IOC_GETFLAGS:
		if (out_bufsz < sizeof(value))
			break;
		pthread_rwlock_rdlock(&inode->lock);
		value = inode->flags;
		pthread_rwlock_unlock(&inode->lock);
		fuse_reply_ioctl(req, 0, &value, sizeof(value));
		return;
	case FS_IOC_SETFLAGS:
		if (in_bufsz < sizeof(value))
			break;
		memcpy(&value, in_buf, sizeof(value));
		if (value & ~FLAGS_SUPPORTED) {
			fuse_reply_err(req, EOPNOTSUPP);
			return;
		}
		set_flags(req, inode, value);
		return;
	case FS_IOC_FSGETXATTR:
		if (out_bufsz < sizeof(fsx))
			break;
		memset(&fsx, 0, sizeof(fsx));
		pthread_rwlock_rdlock(&inode->lock);
		fsx.fsx_xflags = xflags_of(inode->flags);
		pthread_rwlock_unlock(&inode->lock);
		fuse_reply_ioctl(req, 0, &fsx, sizeof(fsx));
		return;
	case FS_IOC_FSSETXATTR:
		if (in_bufsz < sizeof(fsx))
			break;
		memcpy(&fsx, in_buf, sizeof(fsx));
		value = flags_of_xflags(fsx.fsx_xflags);
		if (fsx.fsx_projid || fsx.fsx_extsize || fsx.fsx_cowextsize ||
		    fsx.fsx_xflags != xflags_of(value)) {
			fuse_reply_err(req, EOPNOTSUPP);
			return;
		}
		set_flags(req, inode, value);
		return;
	default:
		fuse_reply_err(req, ENOTTY);
		return;
	}
	fuse_reply_err(req, EINVAL);
}

static int fallocate_locked(struct tierfs *fs, struct inode *inode, int mode, uint64_t off,
			    uint64_t len)
{
	uint64_t end = off + len;
	int err;

	if (inode->flags & FS_IMMUTABLE_FL)
		return -EPERM;
	if ((inode->flags & FS_APPEND_FL) && (mode & ~FALLOC_FL_KEEP_SIZE))
		return -EPERM;
	if (end < off || ((end - 1) >> PAGE_SHIFT) > PAGEMAP_MAX_INDEX)
		return -EFBIG;
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		err = data_punch(&fs->data, inode, off, len);
		if (!err)
			now(&inode->mtime);
	} else {
		if (mode & FALLOC_FL_ZERO_RANGE) {
			err = data_punch(&fs->data, inode, off, len);
			if (err)
				return err;
			now(&inode->mtime);
		}
		err = data_allocate(&fs->data, inode, off, len);
		if (!err && !(mode & FALLOC_FL_KEEP_SIZE) && end > inode->size)
			inode->size = end;
	}
	if (!err)
		now(&inode->ctime);
	return err;
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = inode_of(fs, ino);
	int err;

	(void)fi;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) ||
	    ((mode & FALLOC_FL_PUNCH_HOLE) && (mode & FALLOC_FL_ZERO_RANGE))) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_rwlock_wrlock(&inode->lock);
	err = fallocate_locked(fs, inode, mode, (uint64_t)off, (uint64_t)len);
	pthread_rwlock_unlock(&inode->lock);
	if (err == -ENOSPC)
		atomic_fetch_add(&fs->counters.nr_enospc, 1);
	fuse_reply_err(req, -err);
}

static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct inode *inode = inode_of(fs_of(req), ino);
	int64_t ret;

	(void)fi;
	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, ENXIO);
		return;
	}
	pthread_rwlock_rdlock(&inode->lock);
	ret = data_seek(inode, (uint64_t)off, whence);
	pthread_rwlock_unlock(&inode->lock);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else
		fuse_reply_lseek(req, (off_t)ret);
}

static void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			       struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			       struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct tierfs *fs = fs_of(req);
	struct inode *src = inode_of(fs, ino_in), *dst = inode_of(fs, ino_out);
	ssize_t ret;

	(void)fi_in, (void)fi_out;
	if (flags) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* Two inode locks at once: in address order. */
	if (src == dst) {
		pthread_rwlock_wrlock(&dst->lock);
	} else if (src < dst) {
		pthread_rwlock_rdlock(&src->lock);
		pthread_rwlock_wrlock(&dst->lock);
	} else {
		pthread_rwlock_wrlock(&dst->lock);
		pthread_rwlock_rdlock(&src->lock);
	}
	if (dst->flags & FS_IMMUTABLE_FL) {
		ret = -EPERM;
	} else {
		ret = data_copy(&fs->data, dst, (uint64_t)off_out, src, (uint64_t)off_in, len);
		if (ret > 0) {
			now(&dst->mtime);
			dst->ctime = dst->mtime;
			kill_suid(req, dst);
		}
	}
	if (src != dst)
		pthread_rwlock_unlock(&src->lock);
	pthread_rwlock_unlock(&dst->lock);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else
		fuse_reply_write(req, (size_t)ret);
}

const struct fuse_lowlevel_ops tierfs_ops = {
	.init = op_init,
	.destroy = op_destroy,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.read = op_read,
	.release = op_release,
	.write_buf = op_write_buf,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.releasedir = op_releasedir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.fsyncdir = op_fsync,
	.statfs = op_statfs,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.create = op_create,
	.ioctl = op_ioctl,
	.fallocate = op_fallocate,
	.lseek = op_lseek,
	.copy_file_range = op_copy_file_range,
};

/* MemAvailable from /proc/meminfo, in bytes; 0 when unknown. */
static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

#define fail(...) (snprintf(err, err_len, __VA_ARGS__), -EINVAL)

/*
 * The swap file's capacity: swapsize=, an existing file's size, or what
 * size= needs beyond the resident budget; checked against the free space of
 * the filesystem that holds it (a default is cut to fit, with a warning).
 * Returns bytes, or -errno with a message naming the option and the path.
 */
static int64_t swap_file_capacity(const struct tierfs_options *opts, uint64_t mem_bytes,
				  char *err, size_t err_len)
{
	char dir[PATH_MAX];
	struct statvfs sv;
	struct stat st;
	uint64_t want = opts->swapsize, avail;
	char why[PATH_MAX + 64];

	snprintf(dir, sizeof(dir), "%s", opts->swap_path);
	/* Before anything is taken from what is there: others may have made it. */
	if (opts->backend->check_path(opts->swap_path, &st, why, sizeof(why)))
		return fail("backend=file:%s: %s", opts->swap_path, why);
	if (!want && S_ISREG(st.st_mode))
		want = (uint64_t)st.st_size;
	if (!S_ISDIR(st.st_mode)) {
		const char *parent = dirname(dir); /* may point into dir, or be "." */

		memmove(dir, parent, strlen(parent) + 1);
	}
	if (statvfs(dir, &sv))
		return fail("backend=file:%s: directory %s: %s", opts->swap_path, dir,
			    strerror(errno));
	if (!want)
		want = opts->size > mem_bytes ? opts->size - mem_bytes : 2 * mem_bytes;
	want = (want + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (want <= avail)
		return (int64_t)want;
	if (opts->swapsize)
		return fail("swapsize=%llu MiB does not fit on the filesystem of %s: %llu MiB free",
			    (unsigned long long)(want >> 20), dir,
			    (unsigned long long)(avail >> 20));
	/* A default: take what is free, less a sixteenth for everyone else. */
	want = (avail - avail / 16) & ~(uint64_t)(PAGE_SIZE - 1);
	if (want < (1ULL << 20))
		return fail("backend=file:%s: %llu MiB free on %s, too little for a swap file",
			    opts->swap_path, (unsigned long long)(avail >> 20), dir);
	return (int64_t)want;
}

static int init_swap(struct data_space *ds, const struct tierfs_options *opts, uint64_t ram,
		     uint64_t memlimit, bool has_cgroup_limit, char *err, size_t err_len)
{
	struct backend_config cfg = {
		.codec = opts->codec,
		.codec_level = opts->codec_level,
		.path = opts->swap_path,
		.is_plaintext = !opts->is_encrypted,
	};
	struct tier_backend *backend;
	uint64_t mem = opts->mem;
	int ret;

	/* With neither mem=, memlimit= nor a cgroup limit: half of what is free now. */
	if (!mem && !memlimit && !has_cgroup_limit)
		mem = mem_available() / 2 ? mem_available() / 2 : ram / 4;
	budget_set(ds, mem, memlimit);
	if (!opts->backend)
		return 0;
	/* Slots for all of size= (or of RAM); a RAM pool's memory is bounded by the limit. */
	cfg.capacity_bytes = opts->swapsize ? opts->swapsize : opts->size ? opts->size : ram;
	if (!strcmp(opts->backend->name, "file")) {
		int64_t cap = swap_file_capacity(opts, atomic_load(&ds->mem_pages) << PAGE_SHIFT,
						 err, err_len);

		if (cap < 0)
			return (int)cap;
		cfg.capacity_bytes = (uint64_t)cap;
	}
	ret = opts->backend->create(&cfg, &backend);
	if (ret) {
		if (!strcmp(opts->backend->name, "file"))
			return fail("backend=file:%s: cannot create the swap file (%llu MiB): %s",
				    opts->swap_path, (unsigned long long)(cfg.capacity_bytes >> 20),
				    strerror(-ret));
		return fail("backend=%s: cannot set up %llu MiB of slots: %s", opts->backend->name,
			    (unsigned long long)(cfg.capacity_bytes >> 20), strerror(-ret));
	}
	ret = space_attach_backend(ds, backend);
	if (ret) {
		backend->ops->destroy(backend);
		return fail("cannot allocate the page lists: %s", strerror(-ret));
	}
	return 0;
}

int tierfs_init(struct tierfs *fs, const struct tierfs_options *opts, uint64_t ram, char *err,
		size_t err_len)
{
	uint64_t max_pages, pool_pages, stock_pages, cgroup_limit, env_limit, limit;
	struct pagepool *pool;
	int ret;

	memset(fs, 0, sizeof(*fs));
	fs->opts = *opts;
	fs->timeout = 86400.0;
	max_pages = (opts->size + PAGE_SIZE - 1) >> PAGE_SHIFT;
	/*
	 * The pool holds resident pages only, never more than RAM: its address
	 * space (reserved, not backed) is RAM's, so size= can grow on remount.
	 */
	pool_pages = ram >> PAGE_SHIFT;
	if (pool_pages > UINT32_MAX)
		pool_pages = UINT32_MAX;
	/*
	 * The daemon's cgroup bounds the footprint whatever mem= and memlimit=
	 * say; a RAM pool with no limit at all is bounded by the memory the
	 * machine has free, so that it never grows into the OOM killer.
	 */
	cgroup_limit = memcg_probe(&fs->memcg);
	fs->is_cgroup_budget = !opts->mem && !opts->memlimit && cgroup_limit;
	if (opts->backend && opts->backend->is_sync)
		fs->fallback_limit = mem_available() ? mem_available() : ram;
	env_limit = cgroup_limit ? cgroup_limit : fs->fallback_limit;
	limit = opts->memlimit && (!env_limit || opts->memlimit < env_limit) ? opts->memlimit :
										 env_limit;
	/* A stock of 32 MiB, less under a small memory limit or budget. */
	stock_pages = 8192;
	if (limit && stock_pages > (limit >> PAGE_SHIFT) / 16)
		stock_pages = (limit >> PAGE_SHIFT) / 16;
	if (opts->mem && stock_pages > (opts->mem >> PAGE_SHIFT) / 8)
		stock_pages = (opts->mem >> PAGE_SHIFT) / 8;
	ret = pagepool_new(pool_pages, stock_pages, &pool);
	if (ret) {
		snprintf(err, err_len, "size=: cannot reserve %llu MiB of address space: %s",
			 (unsigned long long)(pool_pages >> (20 - PAGE_SHIFT)), strerror(-ret));
		goto stop_memcg;
	}
	space_init(&fs->data, pool, max_pages, opts->readahead, env_limit);
	ret = init_swap(&fs->data, opts, ram, opts->memlimit, cgroup_limit != 0, err, err_len);
	if (ret)
		goto destroy_space;
	ret = ns_init(&fs->ns, opts->nr_inodes, opts->mode, opts->uid, opts->gid);
	if (ret) {
		snprintf(err, err_len, "nr_inodes=: cannot set up the namespace: %s",
			 strerror(-ret));
		goto destroy_space;
	}
	drain_init(&fs->drain, &fs->ns, &fs->data);
	tenants_init(&fs->tenants, opts->cg_share ? opts->cg_share : 50);
	return 0;

destroy_space:
	space_fini(&fs->data);
stop_memcg:
	memcg_stop(&fs->memcg);
	return ret;
}

bool tierfs_capacity_short(struct tierfs *fs, char *msg, size_t size)
{
	uint64_t free_pages, limit, max = atomic_load(&fs->data.max_pages), pages;

	if (budget_update(&fs->data, true))
		reclaim_kick(&fs->data);
	free_pages = budget_nr_free_pages(&fs->data);
	pages = atomic_load(&fs->data.nr_pages);
	/* size= full already is size='s doing, not the capacity's. */
	if (!max || pages >= max || free_pages >= max - pages)
		return false;
	limit = budget_limit(&fs->data);
	if (fs->data.backend && fs->data.backend->ops->is_sync && limit)
		snprintf(msg, size,
			 "size=%llu MiB, but a memory limit of %llu MiB holds about %llu MiB "
			 "(more as data compresses): df shows the smaller",
			 (unsigned long long)(max >> (20 - PAGE_SHIFT)),
			 (unsigned long long)(limit >> 20),
			 (unsigned long long)(free_pages >> (20 - PAGE_SHIFT)));
	else
		snprintf(msg, size,
			 "size=%llu MiB, but the resident budget (mem=, memlimit= or the cgroup's "
			 "limit) and the backend (swapsize=) hold %llu MiB: df shows the smaller",
			 (unsigned long long)(max >> (20 - PAGE_SHIFT)),
			 (unsigned long long)(free_pages >> (20 - PAGE_SHIFT)));
	return true;
}

int tierfs_start(struct tierfs *fs)
{
	int err = pagepool_start(fs->data.pool);

	if (!err)
		err = reclaim_start(&fs->data);
	return err ? err : memcg_start(&fs->memcg, &fs->data, fs->fallback_limit);
}

void tierfs_destroy(struct tierfs *fs)
{
	memcg_stop(&fs->memcg);
	drain_destroy(&fs->drain);
	reclaim_stop(&fs->data);
	ns_destroy(&fs->ns, data_release_unreachable, &fs->data);
	space_fini(&fs->data);
	tenants_destroy(&fs->tenants);
}
