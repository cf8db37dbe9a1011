// SPDX-License-Identifier: MIT
/*
 * FUSE low-level operations: the tmpfs semantics.  The kernel checks
 * permissions (default_permissions) and enforces ACLs; tierfs does what the
 * kernel leaves to a filesystem: ownership and default ACL inheritance on
 * create, the chattr flags, name limits, and the data itself.  This file
 * holds attributes, lookups and the operation table; names and data are in
 * fs_names.c and fs_io.c.
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

struct tierfs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

struct inode *fs_inode_of(struct tierfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->ns.root : (struct inode *)(uintptr_t)ino;
}

fuse_ino_t fs_nodeid_of(struct tierfs *fs, struct inode *inode)
{
	return inode == fs->ns.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

void fs_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

bool fs_is_pinned(const struct inode *inode)
{
	return inode->flags & (FS_IMMUTABLE_FL | FS_APPEND_FL);
}

void fs_fill_stat(const struct inode *inode, struct stat *st)
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

void fs_make_entry(struct tierfs *fs, struct inode *inode, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	atomic_fetch_add(&inode->nlookup, 1);
	e->ino = fs_nodeid_of(fs, inode);
	e->attr_timeout = fs->timeout;
	e->entry_timeout = fs->timeout;
	pthread_rwlock_rdlock(&inode->lock);
	fs_fill_stat(inode, &e->attr);
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

void fs_get_open(struct inode *inode)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->nr_open++;
	pthread_rwlock_unlock(&inode->lock);
}

void fs_put_open(struct tierfs *fs, struct inode *inode)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->nr_open--;
	release_if_orphan(fs, inode);
	pthread_rwlock_unlock(&inode->lock);
}

void fs_drop_if_unused(struct tierfs *fs, struct inode *inode)
{
	ns_inode_drop_if_unused(&fs->ns, inode, data_release_unreachable, &fs->data);
}

void fs_touch(struct inode *inode, bool mtime, bool ctime)
{
	struct timespec ts;

	fs_now(&ts);
	pthread_rwlock_wrlock(&inode->lock);
	if (mtime)
		inode->mtime = ts;
	if (ctime)
		inode->ctime = ts;
	pthread_rwlock_unlock(&inode->lock);
}

void fs_add_nlink(struct inode *inode, int delta)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->nlink += delta;
	pthread_rwlock_unlock(&inode->lock);
}

bool fs_pin_orphan(struct inode *inode)
{
	if (!S_ISREG(inode->mode) || inode->nlink)
		return false;
	atomic_fetch_add(&inode->nlookup, 1);
	return true;
}

void fs_release_orphan(struct tierfs *fs, struct inode *inode)
{
	pthread_rwlock_wrlock(&inode->lock);
	release_if_orphan(fs, inode);
	pthread_rwlock_unlock(&inode->lock);
	pthread_rwlock_wrlock(&fs->ns.lock);
	atomic_fetch_sub(&inode->nlookup, 1);
	fs_drop_if_unused(fs, inode);
	pthread_rwlock_unlock(&fs->ns.lock);
}

void fs_add_dir_size(struct inode *dir, int nr_entries)
{
	pthread_rwlock_wrlock(&dir->lock);
	dir->size += (int64_t)nr_entries * BOGO_DIRENT_SIZE;
	pthread_rwlock_unlock(&dir->lock);
}

int fs_check_name(const char *name)
{
	return strlen(name) > NS_NAME_MAX ? -ENAMETOOLONG : 0;
}

void fs_op_init(void *userdata, struct fuse_conn_info *conn)
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

	if (fs_check_name(name)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns.lock);
	d = dir_lookup(fs_inode_of(fs, parent), name, strlen(name));
	if (d) {
		fs_make_entry(fs, d->inode, &e);
	} else {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->timeout; /* a cached negative entry */
	}
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_entry(req, &e);
}

static void forget_one(struct tierfs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct inode *inode = fs_inode_of(fs, ino);

	atomic_fetch_sub(&inode->nlookup, nlookup);
	fs_drop_if_unused(fs, inode);
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
	struct inode *inode = fs_inode_of(fs, ino);
	struct stat st;

	(void)fi;
	pthread_rwlock_rdlock(&inode->lock);
	fs_fill_stat(inode, &st);
	pthread_rwlock_unlock(&inode->lock);
	fuse_reply_attr(req, &st, fs->timeout);
}

static int setattr_locked(struct tierfs *fs, struct inode *inode, struct stat *attr, int to_set)
{
	struct timespec ts;
	int err;

	fs_now(&ts);
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
	struct inode *inode = fs_inode_of(fs, ino);
	struct stat st;
	int err;

	(void)fi;
	pthread_rwlock_wrlock(&inode->lock);
	err = setattr_locked(fs, inode, attr, to_set);
	fs_fill_stat(inode, &st);
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
	struct inode *inode = fs_inode_of(fs_of(req), ino);
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
	if (fs_is_pinned(inode))
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
	fs_now(&inode->ctime);
	return 0;
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	struct inode *inode = fs_inode_of(fs_of(req), ino);
	int err;

	pthread_rwlock_wrlock(&inode->lock);
	err = setxattr_locked(inode, name, value, size, flags);
	pthread_rwlock_unlock(&inode->lock);
	fuse_reply_err(req, -err);
}

/* The reply to getxattr or listxattr of size bytes: the size alone when 0; frees buf. */
static void reply_xattr(fuse_req_t req, char *buf, size_t size, ssize_t ret)
{
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else if (!size)
		fuse_reply_xattr(req, (size_t)ret);
	else
		fuse_reply_buf(req, buf, (size_t)ret);
	free(buf);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct inode *inode = fs_inode_of(fs_of(req), ino);
	char *buf = NULL;
	ssize_t ret;

	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&inode->lock);
	ret = is_known_xattr(name) ? xattr_get(&inode->xattrs, name, buf, size) : -EOPNOTSUPP;
	pthread_rwlock_unlock(&inode->lock);
	reply_xattr(req, buf, size, ret);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct inode *inode = fs_inode_of(fs_of(req), ino);
	char *buf = NULL;
	ssize_t ret;

	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&inode->lock);
	ret = xattr_list_names(&inode->xattrs, fuse_req_ctx(req)->uid == 0, buf, size);
	pthread_rwlock_unlock(&inode->lock);
	reply_xattr(req, buf, size, ret);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct inode *inode = fs_inode_of(fs_of(req), ino);
	int err;

	pthread_rwlock_wrlock(&inode->lock);
	if (!is_known_xattr(name))
		err = -EOPNOTSUPP;
	else if (fs_is_pinned(inode))
		err = -EPERM;
	else
		err = xattr_remove(&inode->xattrs, name);
	if (err == -ENODATA && !strncmp(name, "system.", 7))
		err = 0; /* removing an ACL that is not there: nothing to do */
	if (!err)
		fs_now(&inode->ctime);
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
	fs_now(&inode->ctime);
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
	struct inode *inode = fs_inode_of(fs_of(req), ino);
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

const struct fuse_lowlevel_ops tierfs_ops = {
	.init = fs_op_init,
	.destroy = op_destroy,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = fs_op_mknod,
	.mkdir = fs_op_mkdir,
	.unlink = fs_op_unlink,
	.rmdir = fs_op_rmdir,
	.symlink = fs_op_symlink,
	.rename = fs_op_rename,
	.link = fs_op_link,
	.open = fs_op_open,
	.read = fs_op_read,
	.release = fs_op_release,
	.write_buf = fs_op_write_buf,
	.fsync = fs_op_fsync,
	.opendir = fs_op_opendir,
	.releasedir = fs_op_releasedir,
	.readdir = fs_op_readdir,
	.readdirplus = fs_op_readdirplus,
	.fsyncdir = fs_op_fsync,
	.statfs = op_statfs,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.create = fs_op_create,
	.ioctl = op_ioctl,
	.fallocate = fs_op_fallocate,
	.lseek = fs_op_lseek,
	.copy_file_range = fs_op_copy_file_range,
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
static int64_t swap_file_capacity(const struct tierfs_options *opts, uint64_t mem_bytes, char *err,
				  size_t err_len)
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
		int64_t cap = swap_file_capacity(
			opts, atomic_load(&ds->budget.mem_pages) << PAGE_SHIFT, err, err_len);

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
