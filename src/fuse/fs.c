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
#include "suid.h"

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
	/* The root's is 0: the kernel expects it so. */
	e->generation = inode == fs->ns.root ? 0 : fs_generation_of(inode);
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

void fs_inval_attr(struct tierfs *fs, fuse_ino_t ino)
{
	if (fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
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

static bool is_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

void fs_accessed(struct tierfs *fs, struct inode *inode)
{
	enum atime_mode mode = atomic_load(&fs->atime);
	struct timespec ts;
	bool is_due;

	if (mode == ATIME_NONE || (inode->flags & FS_NOATIME_FL) ||
	    (S_ISDIR(inode->mode) && atomic_load(&fs->is_nodiratime)))
		return;
	fs_now(&ts);
	pthread_rwlock_rdlock(&inode->lock);
	/* relatime: once after a change of data or attributes, and daily. */
	is_due = mode == ATIME_STRICT || !is_after(&inode->atime, &inode->mtime) ||
		 !is_after(&inode->atime, &inode->ctime) ||
		 ts.tv_sec - inode->atime.tv_sec >= 24 * 3600;
	pthread_rwlock_unlock(&inode->lock);
	if (!is_due)
		return;
	pthread_rwlock_wrlock(&inode->lock);
	inode->atime = ts;
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

void fs_set_open_flags(struct tierfs *fs, struct fuse_file_info *fi)
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
			    FUSE_CAP_CACHE_SYMLINKS | FUSE_CAP_PARALLEL_DIROPS |
			    FUSE_CAP_ASYNC_DIO | FUSE_CAP_EXPORT_SUPPORT;

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

void fs_op_destroy(void *userdata)
{
	(void)userdata;
}

bool fs_is_dot_name(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/*
 * A lookup of "." or "..": the kernel asks only for a file handle whose
 * inode it forgot (open_by_handle_at, an NFS export), so the node id may
 * be stale.  It must still name a live inode, and one with a name: tmpfs
 * refuses a handle to an unlinked file too.  ns->lock held.
 */
static struct inode *by_handle(struct tierfs *fs, fuse_ino_t nodeid, const char *name)
{
	struct inode *inode = nodeid == FUSE_ROOT_ID ? fs->ns.root :
						       ns_inode_by_id(&fs->ns, (uintptr_t)nodeid);

	if (!inode || !inode->nlink)
		return NULL;
	if (name[1] == '.')
		return S_ISDIR(inode->mode) ? dir_parent(inode) : NULL;
	return inode;
}

void fs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tierfs *fs = fs_of(req);
	struct fuse_entry_param e;
	struct dentry *d;

	if (fs_check_name(name)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns.lock);
	if (fs_is_dot_name(name)) {
		/* Referenced before the lock goes: nothing else holds it. */
		struct inode *inode = by_handle(fs, parent, name);

		if (inode)
			fs_make_entry(fs, inode, &e);
		pthread_rwlock_unlock(&fs->ns.lock);
		if (inode)
			fuse_reply_entry(req, &e);
		else
			fuse_reply_err(req, ENOENT);
		return;
	}
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

void fs_forget(struct tierfs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	pthread_rwlock_wrlock(&fs->ns.lock);
	forget_one(fs, ino, nlookup);
	pthread_rwlock_unlock(&fs->ns.lock);
}

void fs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	fs_forget(fs_of(req), ino, nlookup);
	fuse_reply_none(req);
}

void fs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct tierfs *fs = fs_of(req);

	pthread_rwlock_wrlock(&fs->ns.lock);
	for (size_t i = 0; i < count; i++)
		forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	pthread_rwlock_unlock(&fs->ns.lock);
	fuse_reply_none(req);
}

void fs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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

static int setattr_locked(struct tierfs *fs, fuse_req_t req, struct inode *inode, struct stat *attr,
			  int to_set)
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
	/* Under KILLPRIV_V2, for a chown, truncate, fallocate or copy: as after a write. */
	if (suid_kill_asked() && !S_ISDIR(inode->mode))
		suid_clear(req, inode);
	return 0;
}

void fs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		   struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino);
	struct stat st;
	int err;

	(void)fi;
	pthread_rwlock_wrlock(&inode->lock);
	err = setattr_locked(fs, req, inode, attr, to_set);
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
void fs_op_readlink(fuse_req_t req, fuse_ino_t ino)
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
void fs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct tierfs *fs = fs_of(req);
	uint64_t max_inodes = atomic_load(&fs->ns.max_inodes), used, nr_free;
	struct statvfs st;

	(void)ino;
	if (budget_update(&fs->data, false))
		reclaim_kick(&fs->data);
	nr_free = budget_nr_free_pages(&fs->data, &used);
	memset(&st, 0, sizeof(st));
	st.f_bsize = PAGE_SIZE;
	st.f_frsize = PAGE_SIZE;
	st.f_namemax = NS_NAME_MAX;
	if (nr_free != UINT64_MAX) {
		st.f_blocks = used + nr_free;
		st.f_bfree = st.f_bavail = nr_free;
	}
	if (max_inodes) {
		st.f_files = max_inodes;
		st.f_ffree = st.f_favail = ns_nr_free_inodes(&fs->ns);
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

static int setxattr_locked(struct tierfs *fs, fuse_req_t req, struct inode *inode, const char *name,
			   const char *value, size_t size, int flags)
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
	err = ns_xattr_set(&fs->ns, inode, name, value, size, flags);
	if (err)
		return err;
	if (is_access_acl) {
		size_t len;
		const void *acl = xattr_peek(&inode->xattrs, name, &len);
		bool is_equiv;

		inode->mode = acl_apply_to_mode(acl, len, inode->mode, &is_equiv);
		if (is_equiv)
			ns_xattr_remove(&fs->ns, inode, name);
		/* As a chmod by someone outside the group would (setfacl -m). */
		if ((inode->mode & S_ISGID) && !suid_in_group_or_capable(req, inode->gid))
			inode->mode &= ~(mode_t)S_ISGID;
	}
	fs_now(&inode->ctime);
	return 0;
}

void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino);
	int err;

	pthread_rwlock_wrlock(&inode->lock);
	err = setxattr_locked(fs, req, inode, name, value, size, flags);
	pthread_rwlock_unlock(&inode->lock);
	if (err == -ENOSPC)
		atomic_fetch_add(&fs->counters.nr_enospc, 1);
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

void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
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

void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
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

void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino);
	int err;

	pthread_rwlock_wrlock(&inode->lock);
	if (!is_known_xattr(name))
		err = -EOPNOTSUPP;
	else if (fs_is_pinned(inode))
		err = -EPERM;
	else
		err = ns_xattr_remove(&fs->ns, inode, name);
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

static void set_flags(fuse_req_t req, fuse_ino_t ino, struct inode *inode, uint32_t flags)
{
	pthread_rwlock_wrlock(&inode->lock);
	inode->flags = flags;
	fs_now(&inode->ctime);
	pthread_rwlock_unlock(&inode->lock);
	/* The kernel asks no attributes after an ioctl: its ctime is stale. */
	fs_inval_attr(fs_of(req), ino);
	fuse_reply_ioctl(req, 0, NULL, 0);
}

/*
 * chattr and lsattr: the kernel checks ownership and CAP_LINUX_IMMUTABLE
 * before it asks; like tmpfs, only i, a, d and A exist, and FSSETXATTR
 * refuses project ids and extent sizes.
 */
void fs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		 struct fuse_file_info *fi, unsigned int flags, const void *in_buf, size_t in_bufsz,
		 size_t out_bufsz)
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
		set_flags(req, ino, inode, value);
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
		set_flags(req, ino, inode, value);
		return;
	default:
		fuse_reply_err(req, ENOTTY);
		return;
	}
	fuse_reply_err(req, EINVAL);
}
