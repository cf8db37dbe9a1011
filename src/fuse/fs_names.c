// SPDX-License-Identifier: MIT
/*
 * FUSE operations on names: create, link, unlink, rename and list, with
 * the ownership and default ACL a new inode inherits.
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
#include "fs_ops.h"

/*
 * Mode, owner and ACL of a new inode: setgid directories pass on their
 * group (and, to subdirectories, the bit); a default ACL replaces the
 * umask; the caller's umask applies otherwise.
 */
static int init_new_inode(struct ns *ns, const struct fuse_ctx *ctx, struct inode *dir,
			  struct inode *inode)
{
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
			err = ns_xattr_set(ns, inode, XATTR_ACCESS_ACL, acl, dacl_size, 0);
		if (!err && S_ISDIR(mode))
			err = ns_xattr_set(ns, inode, XATTR_DEFAULT_ACL, dacl, dacl_size, 0);
		free(acl);
	} else if (!S_ISLNK(mode)) {
		mode &= ~(ctx->umask & 0777);
	}
unlock:
	pthread_rwlock_unlock(&dir->lock);
	inode->mode = mode;
	return err;
}

/*
 * Create name in parent: a file, directory, node or symlink.  Replies with
 * the entry (or, for create, entry and open file).
 */
static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev,
		      const char *target, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *dir = fs_inode_of(fs, parent), *inode;
	struct lru_lists *lists = NULL;
	struct fuse_entry_param e;
	size_t len = strlen(name);
	int err = fs_check_name(name);

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
	err = init_new_inode(&fs->ns, fuse_req_ctx(req), dir, inode);
	if (err)
		goto free_inode;
	if (target) {
		err = ns_set_target(&fs->ns, inode, target);
		if (err)
			goto free_inode;
	}
	if (S_ISDIR(mode)) {
		dir_set_parent(inode, dir);
		inode->size = 2 * BOGO_DIRENT_SIZE;
	}
	inode->nlink = S_ISDIR(mode) ? 2 : 1;
	err = dir_add(&fs->ns, dir, name, len, inode);
	if (err)
		goto free_inode;
	if (S_ISDIR(mode))
		fs_add_nlink(dir, 1);
	fs_add_dir_size(dir, 1);
	fs_touch(dir, true, true);
	fs_make_entry(fs, inode, &e);
	pthread_rwlock_unlock(&fs->ns.lock);
	if (fi) {
		fs_set_open_flags(fs, fi);
		fs_get_open(inode);
		if (fuse_reply_create(req, &e, fi))
			fs_put_open(fs, inode);
	} else {
		fuse_reply_entry(req, &e);
	}
	return;

free_inode:
	inode->nlink = 0;
	fs_drop_if_unused(fs, inode);
unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
reply:
	if (err == -ENOSPC)
		atomic_fetch_add(&fs->counters.nr_enospc, 1);
	fuse_reply_err(req, -err);
}

void fs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, mode, rdev, NULL, NULL);
}

void fs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_node(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL, NULL);
}

void fs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	make_node(req, parent, name, S_IFLNK | 0777, 0, link, NULL);
}

void fs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		  struct fuse_file_info *fi)
{
	make_node(req, parent, name, S_IFREG | (mode & 07777), 0, NULL, fi);
}

int fs_tmpfile(struct tierfs *fs, fuse_ino_t parent, mode_t mode, const struct fuse_ctx *ctx,
	       struct fuse_entry_param *e, struct fuse_file_info *fi)
{
	struct inode *dir = fs_inode_of(fs, parent), *inode;
	struct lru_lists *lists = NULL;
	int err;

	if (fs->data.backend)
		lists = tenants_charge(&fs->tenants, &fs->data.lru, ctx->pid);
	pthread_rwlock_wrlock(&fs->ns.lock);
	err = dir->flags & FS_IMMUTABLE_FL ?
		      -EPERM :
		      ns_inode_new(&fs->ns, S_IFREG | (mode & 07777), 0, 0, 0, &inode);
	if (err)
		goto unlock;
	inode->lists = lists;
	err = init_new_inode(&fs->ns, ctx, dir, inode);
	if (err) {
		fs_drop_if_unused(fs, inode);
		goto unlock;
	}
	/* No name (nlink 0) and open: its pages go at the last close, unless linked. */
	fs_make_entry(fs, inode, e);
	fs_set_open_flags(fs, fi);
	fs_get_open(inode);
unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
	if (err == -ENOSPC)
		atomic_fetch_add(&fs->counters.nr_enospc, 1);
	return err;
}

/*
 * An entry of a non-directory goes: the link count drops, and a link
 * beyond the inode's last gives its inode space back (see fs_op_link).
 * ns->lock held for writing.
 */
static void drop_link(struct tierfs *fs, struct inode *inode)
{
	if (inode->nlink > 1)
		ns_uncharge(&fs->ns, NS_BOGO_INODE_SIZE, 0);
	fs_add_nlink(inode, -1);
}

/* Checks shared by unlink, rmdir and rename of an entry out of dir. */
static int may_remove(const struct inode *dir, const struct inode *victim)
{
	return fs_is_pinned(dir) || fs_is_pinned(victim) ? -EPERM : 0;
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name, bool want_dir)
{
	struct tierfs *fs = fs_of(req);
	struct inode *dir = fs_inode_of(fs, parent), *victim;
	struct dentry *d;
	bool is_orphan = false;
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
	else
		err = may_remove(dir, victim);
	/* As the VFS's may_delete: EPERM before the filesystem looks inside. */
	if (!err && want_dir && dir_nr_entries(victim))
		err = -ENOTEMPTY;
	if (err)
		goto unlock;
	dir_remove(&fs->ns, dir, d);
	if (want_dir) {
		fs_add_nlink(victim, -(int)victim->nlink);
		fs_add_nlink(dir, -1);
	} else {
		drop_link(fs, victim);
	}
	fs_add_dir_size(dir, -1);
	fs_touch(victim, false, true);
	fs_touch(dir, true, true);
	is_orphan = fs_pin_orphan(victim);
	fs_drop_if_unused(fs, victim);
unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
	if (is_orphan)
		fs_release_orphan(fs, victim);
	fuse_reply_err(req, -err);
}

void fs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, false);
}

void fs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, true);
}

/* Move directory inode from one parent to another: fix ".." and link counts. */
static void reparent(struct inode *inode, struct inode *from, struct inode *to)
{
	if (!S_ISDIR(inode->mode) || from == to)
		return;
	dir_set_parent(inode, to);
	fs_add_nlink(from, -1);
	fs_add_nlink(to, 1);
}

static int rename_exchange(struct inode *sdir, struct dentry *sd, struct inode *ddir,
			   struct dentry *dd)
{
	struct inode *a = sd->inode, *b = dd->inode;

	if (fs_is_pinned(a) || fs_is_pinned(b))
		return -EPERM;
	sd->inode = b;
	dd->inode = a;
	reparent(a, sdir, ddir);
	reparent(b, ddir, sdir);
	fs_touch(a, false, true);
	fs_touch(b, false, true);
	return 0;
}

void fs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		  const char *newname, unsigned int flags)
{
	struct tierfs *fs = fs_of(req);
	struct inode *sdir = fs_inode_of(fs, parent), *ddir = fs_inode_of(fs, newparent);
	struct inode *moved, *replaced = NULL, *whiteout = NULL;
	struct dentry *sd, *dd;
	bool is_orphan = false;
	int err = fs_check_name(newname);

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
	if (fs_is_pinned(sdir) || (ddir->flags & FS_IMMUTABLE_FL) || (dd && fs_is_pinned(ddir))) {
		err = -EPERM;
		goto unlock;
	}
	if (flags & RENAME_EXCHANGE) {
		err = dd ? rename_exchange(sdir, sd, ddir, dd) : -ENOENT;
		goto touch_dirs;
	}
	if (dd && (flags & RENAME_NOREPLACE)) {
		err = -EEXIST;
		goto unlock;
	}
	if (dd && dd->inode == moved)
		goto unlock; /* two links to one inode: POSIX says do nothing */
	if (fs_is_pinned(moved)) {
		err = -EPERM;
		goto unlock;
	}
	if (dd) {
		replaced = dd->inode;
		if (S_ISDIR(moved->mode) && !S_ISDIR(replaced->mode))
			err = -ENOTDIR;
		else if (!S_ISDIR(moved->mode) && S_ISDIR(replaced->mode))
			err = -EISDIR;
		else
			err = may_remove(ddir, replaced);
		if (!err && S_ISDIR(replaced->mode) && dir_nr_entries(replaced))
			err = -ENOTEMPTY;
		if (err)
			goto unlock;
	}
	if (flags & RENAME_WHITEOUT) {
		err = ns_inode_new(&fs->ns, S_IFCHR, 0, 0, makedev(0, 0), &whiteout);
		if (err)
			goto unlock;
		init_new_inode(&fs->ns, fuse_req_ctx(req), sdir, whiteout);
		whiteout->mode = S_IFCHR;
		whiteout->nlink = 1;
	}
	if (dd) {
		/* Reuse the target entry: nothing to allocate, nothing to undo. */
		dd->inode = moved;
		if (S_ISDIR(replaced->mode)) {
			fs_add_nlink(replaced, -(int)replaced->nlink);
			fs_add_nlink(ddir, -1);
		} else {
			drop_link(fs, replaced);
		}
		fs_touch(replaced, false, true);
	} else {
		/* The one step that may fail (ENOSPC), before anything changed. */
		err = whiteout ? dir_add(&fs->ns, ddir, newname, strlen(newname), moved) :
				 dir_move(&fs->ns, sdir, sd, ddir, newname, strlen(newname));
		if (err)
			goto free_whiteout;
		fs_add_dir_size(ddir, 1);
	}
	if (whiteout) {
		/* The old name now names the whiteout: nothing to allocate. */
		sd->inode = whiteout;
		whiteout = NULL;
	} else {
		if (dd)
			dir_remove(&fs->ns, sdir, sd);
		fs_add_dir_size(sdir, -1);
	}
	reparent(moved, sdir, ddir);
	fs_touch(moved, false, true);
	if (replaced) {
		is_orphan = fs_pin_orphan(replaced);
		fs_drop_if_unused(fs, replaced);
	}
free_whiteout:
	if (whiteout) {
		whiteout->nlink = 0;
		fs_drop_if_unused(fs, whiteout);
	}
touch_dirs:
	if (!err) {
		fs_touch(sdir, true, true);
		if (ddir != sdir)
			fs_touch(ddir, true, true);
	}
unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
	if (is_orphan)
		fs_release_orphan(fs, replaced);
reply:
	fuse_reply_err(req, -err);
}

void fs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino), *dir = fs_inode_of(fs, newparent);
	struct fuse_entry_param e;
	uint64_t ispace;
	int err = fs_check_name(newname);

	if (err)
		goto reply;
	pthread_rwlock_wrlock(&fs->ns.lock);
	if (fs_is_pinned(inode) || (dir->flags & FS_IMMUTABLE_FL) || S_ISDIR(inode->mode)) {
		err = -EPERM;
		goto unlock;
	}
	/* As on tmpfs, a link takes an inode's room; an O_TMPFILE's first does not. */
	ispace = inode->nlink ? NS_BOGO_INODE_SIZE : 0;
	err = ns_charge(&fs->ns, ispace, 0);
	if (err)
		goto unlock;
	err = dir_add(&fs->ns, dir, newname, strlen(newname), inode);
	if (err) {
		ns_uncharge(&fs->ns, ispace, 0);
		goto unlock;
	}
	fs_add_nlink(inode, 1);
	fs_add_dir_size(dir, 1);
	fs_touch(inode, false, true);
	fs_touch(dir, true, true);
	fs_make_entry(fs, inode, &e);
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_entry(req, &e);
	return;

unlock:
	pthread_rwlock_unlock(&fs->ns.lock);
reply:
	if (err == -ENOSPC)
		atomic_fetch_add(&fs->counters.nr_enospc, 1);
	fuse_reply_err(req, -err);
}

/*
 * An open directory remembers where its listing ends, so entries created
 * while it is read are not returned and a create-per-getdents loop ends,
 * as on tmpfs.  A rewind (offset 0) moves the end up to now.
 */
struct dir_handle {
	atomic_uint_fast64_t end_cookie;
};

void fs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	uint64_t cost = ns_alloc_cost(sizeof(struct dir_handle));
	struct dir_handle *dh = malloc(sizeof(*dh));

	if (!dh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Never refused: a full mount is listed to be cleaned up. */
	ns_charge_always(&fs->ns, cost);
	pthread_rwlock_rdlock(&fs->ns.lock);
	atomic_init(&dh->end_cookie, dir_end_cookie(fs_inode_of(fs, ino)));
	pthread_rwlock_unlock(&fs->ns.lock);
	fi->fh = (uintptr_t)dh;
	if (fuse_reply_open(req, fi)) {
		free(dh);
		ns_uncharge(&fs->ns, 0, cost);
	}
}

void fs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	free((struct dir_handle *)(uintptr_t)fi->fh);
	ns_uncharge(&fs_of(req)->ns, 0, ns_alloc_cost(sizeof(struct dir_handle)));
	fuse_reply_err(req, 0);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool is_plus)
{
	struct tierfs *fs = fs_of(req);
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	struct inode *dir = fs_inode_of(fs, ino);
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
		fs_fill_stat(inode, &e.attr);
		pthread_rwlock_unlock(&inode->lock);
		if (is_plus) {
			/* The kernel takes no reference on "." and "..". */
			if (off >= 2) {
				e.ino = fs_nodeid_of(fs, inode);
				e.generation = fs_generation_of(inode);
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
	fs_accessed(fs, dir);
	fuse_reply_buf(req, buf, used);
	free(buf);
}

void fs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

void fs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}
