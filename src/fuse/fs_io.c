// SPDX-License-Identifier: MIT
/*
 * FUSE operations on file data: open, read, write, fallocate, seek and
 * copy, over the data layer; the times and setuid bits they change.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/fs.h"
#include "tierfs/reclaim.h"
#include "tierfs/space.h"
#include "tierfs/swapin.h"
#include "bridge_abi.h"
#include "fs_ops.h"
#include "suid.h"

void fs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino);
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
		fs_now(&inode->mtime);
		inode->ctime = inode->mtime;
		if (suid_kill_asked())
			suid_clear(req, inode);
	}
	pthread_rwlock_unlock(&inode->lock);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fs_set_open_flags(fs, fi);
	/*
	 * An append-only file's writers go around the page cache: with
	 * cache=always the kernel would write their appends back with no
	 * O_APPEND, and is_append_denied could not tell them from overwrites.
	 */
	if (is_write && (inode->flags & FS_APPEND_FL))
		fi->direct_io = 1;
	fs_get_open(inode);
	if (fuse_reply_open(req, fi))
		fs_put_open(fs, inode);
}

/*
 * Whether a write at off through a file opened with open_flags would
 * change an append-only inode's bytes: it must be an O_APPEND write at the
 * end, as the VFS lets through on tmpfs.  The kernel knows nothing of
 * FUSE's append-only files and lets a writer clear O_APPEND (F_SETFL),
 * so the write itself is checked.  inode->lock held.
 */
static bool is_append_denied(const struct inode *inode, int open_flags, uint64_t off)
{
	return (inode->flags & FS_APPEND_FL) && (!(open_flags & O_APPEND) || off < inode->size);
}

void fs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);

	(void)fi;
	fs_put_open(fs, fs_inode_of(fs, ino));
	fuse_reply_err(req, 0);
}

void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino);
	struct iovec iov[DATA_MAX_READ_PAGES];
	char *scratch = NULL;
	size_t bytes = 0;
	bool is_swapped;
	int nr;

	if (size > (size_t)1 << 20)
		size = (size_t)1 << 20;
	fs_accessed(fs, inode);
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
			err = i < 8 ? swapin_range(&fs->data, inode, (uint64_t)off, size) : -ENOMEM;
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

void fs_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		     struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino);
	struct iovec iov[WRITE_MAX_IOV];
	void *bounce = NULL;
	int nr_iov = write_iov(bufv, iov, &bounce);
	struct data_room_wait room_wait = { 0 };
	bool is_mode_changed = false;
	ssize_t ret;

	if (nr_iov < 0) {
		free(bounce);
		fuse_reply_err(req, -nr_iov);
		return;
	}
	do {
		pthread_rwlock_wrlock(&inode->lock);
		if ((inode->flags & FS_IMMUTABLE_FL) ||
		    is_append_denied(inode, fi->flags, (uint64_t)off)) {
			ret = -EPERM;
		} else {
			ret = data_write(&fs->data, inode, iov, (unsigned int)nr_iov,
					 (uint64_t)off);
			if (ret > 0) {
				fs_now(&inode->mtime);
				inode->ctime = inode->mtime;
				is_mode_changed = suid_after_write(fs, req, inode);
			}
		}
		pthread_rwlock_unlock(&inode->lock);
		/* ENOSPC only when the mount is full: not while the reclaimer catches up. */
	} while (ret == -ENOSPC && data_wait_room(&fs->data, &room_wait));
	/* The kernel keeps the mode after a direct write: tell it, before the reply. */
	if (is_mode_changed)
		fs_inval_attr(fs, ino);
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

void fs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino, (void)datasync, (void)fi;
	fuse_reply_err(req, 0); /* memory is as durable as it gets */
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
			fs_now(&inode->mtime);
	} else {
		if (mode & FALLOC_FL_ZERO_RANGE) {
			err = data_punch(&fs->data, inode, off, len);
			if (err)
				return err;
			fs_now(&inode->mtime);
		}
		err = data_allocate(&fs->data, inode, off, len);
		if (!err && !(mode & FALLOC_FL_KEEP_SIZE) && end > inode->size)
			inode->size = end;
	}
	if (!err)
		fs_now(&inode->ctime);
	return err;
}

void fs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		     struct fuse_file_info *fi)
{
	struct tierfs *fs = fs_of(req);
	struct inode *inode = fs_inode_of(fs, ino);
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

void fs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi)
{
	struct inode *inode = fs_inode_of(fs_of(req), ino);
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

/* The most one copy_file_range request copies: max_write, as a write's. */
#define COPY_MAX_BYTES (1u << 20)

/* Two inode locks at once, src's for reading: in address order. */
static void lock_pair(struct inode *src, struct inode *dst)
{
	if (src == dst) {
		pthread_rwlock_wrlock(&dst->lock);
	} else if (src < dst) {
		pthread_rwlock_rdlock(&src->lock);
		pthread_rwlock_wrlock(&dst->lock);
	} else {
		pthread_rwlock_wrlock(&dst->lock);
		pthread_rwlock_rdlock(&src->lock);
	}
}

static void unlock_pair(struct inode *src, struct inode *dst)
{
	if (src != dst)
		pthread_rwlock_unlock(&src->lock);
	pthread_rwlock_unlock(&dst->lock);
}

void fs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			   struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			   struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct tierfs *fs = fs_of(req);
	struct inode *src = fs_inode_of(fs, ino_in), *dst = fs_inode_of(fs, ino_out);
	struct data_room_wait room_wait = { 0 };
	bool is_mode_changed = false;
	ssize_t ret;

	(void)fi_in;
	if (flags) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/*
	 * The reclaimer can evict neither file while both are locked: a
	 * request copies what a write would take at most, and the caller
	 * asks again for the rest (copy_file_range may copy less).  As a
	 * write, ENOSPC only when the mount is full: a copy that found no
	 * room waits for it with the locks let go.
	 */
	if (len > COPY_MAX_BYTES)
		len = COPY_MAX_BYTES;
	do {
		lock_pair(src, dst);
		/* libfuse leaves fi_out's flags 0: the kernel takes no O_APPEND destination. */
		if ((dst->flags & FS_IMMUTABLE_FL) ||
		    is_append_denied(dst, fi_out->flags, (uint64_t)off_out)) {
			ret = -EPERM;
		} else {
			ret = data_copy(&fs->data, dst, (uint64_t)off_out, src, (uint64_t)off_in,
					len);
			if (ret > 0) {
				fs_now(&dst->mtime);
				dst->ctime = dst->mtime;
				is_mode_changed = suid_after_write(fs, req, dst);
			}
		}
		unlock_pair(src, dst);
	} while (ret == -ENOSPC && data_wait_room(&fs->data, &room_wait));
	if (is_mode_changed)
		fs_inval_attr(fs, ino_out);
	if (ret == -ENOSPC)
		atomic_fetch_add(&fs->counters.nr_enospc, 1);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else
		fuse_reply_write(req, (size_t)ret);
}

/* Whether the lock is held against a writer, without waiting. */
static bool is_lock_busy(pthread_rwlock_t *lock)
{
	if (pthread_rwlock_trywrlock(lock))
		return true;
	pthread_rwlock_unlock(lock);
	return false;
}

/* Whether a writer holds the lock, without waiting. */
static bool is_read_busy(pthread_rwlock_t *lock)
{
	if (pthread_rwlock_tryrdlock(lock))
		return true;
	pthread_rwlock_unlock(lock);
	return false;
}

/*
 * Whether a regular file may free pages through the backend once its last
 * name or open goes (of nr_links names and nr_opens opens), or its lock is
 * busy.  Without waiting.
 */
static bool may_free_pages(struct inode *inode, uint32_t nr_links, uint32_t nr_opens)
{
	bool may_free;

	if (pthread_rwlock_tryrdlock(&inode->lock))
		return true;
	may_free = S_ISREG(inode->mode) && inode->size && inode->nlink <= nr_links &&
		   inode->nr_open <= nr_opens;
	pthread_rwlock_unlock(&inode->lock);
	return may_free;
}

/*
 * Whether an operation on the entry name of dir may wait: the namespace
 * busy, or the inode named busy, or (is_removal) losing its last name
 * would free its pages.  Without waiting.
 */
static bool entry_may_block(struct tierfs *fs, struct inode *dir, const char *name, bool is_removal)
{
	struct dentry *d;
	bool may_block = false;

	/* A file handle's, rare: its node id may be stale, not looked at here. */
	if (fs_is_dot_name(name) || pthread_rwlock_tryrdlock(&fs->ns.lock))
		return true;
	d = dir_lookup(dir, name, strlen(name));
	if (d)
		may_block = is_removal ? may_free_pages(d->inode, 1, 0) :
					 is_read_busy(&d->inode->lock);
	pthread_rwlock_unlock(&fs->ns.lock);
	return may_block;
}

bool fs_may_block(struct tierfs *fs, const struct fuse_in_header *in, const void *arg)
{
	struct inode *inode = fs_inode_of(fs, in->nodeid);

	switch (in->opcode) {
	case FUSE_LOOKUP:
		return entry_may_block(fs, inode, arg, false);
	case FUSE_UNLINK:
		return entry_may_block(fs, inode, arg, true);
	case FUSE_RENAME:
	case FUSE_RENAME2: {
		/* Both carry newdir first; the names follow the whole struct. */
		const struct fuse_rename2_in *rn = arg;
		size_t skip = in->opcode == FUSE_RENAME ? sizeof(struct fuse_rename_in) :
							  sizeof(struct fuse_rename2_in);
		const char *old_name = (const char *)arg + skip;

		/* A rename over a file drops the file's last name. */
		return entry_may_block(fs, fs_inode_of(fs, rn->newdir),
				       old_name + strlen(old_name) + 1, true);
	}
	case FUSE_CREATE:
	case FUSE_MKNOD:
	case FUSE_TMPFILE:
		/* The creator's cgroup comes from /proc. */
		return fs->data.backend && fs->tenants.has_roots;
	case FUSE_OPEN: {
		const struct fuse_open_in *op = arg;

		/* O_TRUNC frees the pages, maybe through the backend. */
		return (op->flags & O_TRUNC) ? may_free_pages(inode, UINT32_MAX, UINT32_MAX) :
					       is_lock_busy(&inode->lock);
	}
	case FUSE_RELEASE:
		/* The last release of a file with no name left frees its pages. */
		return may_free_pages(inode, 0, 1);
	/* A writer may hold the lock across a store, a truncate across frees. */
	case FUSE_GETATTR:
	case BRIDGE_OP_STATX:
	case FUSE_GETXATTR:
	case FUSE_LISTXATTR:
	case FUSE_LSEEK:
	case FUSE_ACCESS:
		return is_read_busy(&inode->lock);
	case FUSE_SETXATTR:
	case FUSE_REMOVEXATTR:
	case FUSE_IOCTL:
	case FUSE_FSYNC:
		return is_lock_busy(&inode->lock);
	case FUSE_READ: {
		const struct fuse_read_in *rd = arg;
		bool has_swapped;

		/* Never wait here: a busy lock means the request may wait, so hand it off. */
		if (pthread_rwlock_tryrdlock(&inode->lock))
			return true;
		has_swapped = fs->data.backend && data_has_swapped(inode, rd->offset, rd->size);
		pthread_rwlock_unlock(&inode->lock);
		if (!has_swapped)
			return false;
		/* A RAM backend loads in memory, but the pages it fills may need reclaim. */
		return !fs->data.backend->ops->is_sync ||
		       data_may_reclaim(&fs->data, inode, (rd->size >> PAGE_SHIFT) + 1);
	}
	case FUSE_WRITE: {
		const struct fuse_write_in *wr = arg;

		return is_lock_busy(&inode->lock) ||
		       data_may_reclaim(&fs->data, inode, (wr->size >> PAGE_SHIFT) + 1) ||
		       data_is_short(&fs->data, (wr->size >> PAGE_SHIFT) + 1);
	}
	case FUSE_FALLOCATE:
	case FUSE_SETATTR:
		return is_lock_busy(&inode->lock) || data_may_reclaim(&fs->data, inode, 1);
	case FUSE_COPY_FILE_RANGE:
		return true;
	default:
		return false;
	}
}
