/* SPDX-License-Identifier: MIT */
/*
 * What the FUSE operations of tierfs share across their files: the
 * conversions between requests and inodes, and the inode bookkeeping
 * every kind of operation does.
 */
#ifndef TIERFS_FS_OPS_H
#define TIERFS_FS_OPS_H

#include <stdbool.h>
#include <time.h>

#include "tierfs/data.h"
#include "tierfs/fs.h"

/* tmpfs reports a directory's size as 20 bytes an entry, "." and ".." included. */
#define BOGO_DIRENT_SIZE 20

#define FLAGS_SUPPORTED (FS_IMMUTABLE_FL | FS_APPEND_FL | FS_NODUMP_FL | FS_NOATIME_FL)

void fs_set_open_flags(struct tierfs *fs, struct fuse_file_info *fi);

struct tierfs *fs_of(fuse_req_t req);

struct inode *fs_inode_of(struct tierfs *fs, fuse_ino_t ino);

fuse_ino_t fs_nodeid_of(struct tierfs *fs, struct inode *inode);

/*
 * What the kernel keeps in a file handle beside the node id (an address
 * that may come back for another inode): the low bits of st_ino, which
 * is never reused.
 */
static inline uint32_t fs_generation_of(const struct inode *inode)
{
	return (uint32_t)inode->ino;
}

/* "." or "..": names only a file handle's lookup carries. */
bool fs_is_dot_name(const char *name);

void fs_now(struct timespec *ts);

bool fs_is_pinned(const struct inode *inode);

/* Caller holds inode->lock. */
void fs_fill_stat(const struct inode *inode, struct stat *st);

/* Fill an entry reply and take the lookup reference the kernel will hold. */
void fs_make_entry(struct tierfs *fs, struct inode *inode, struct fuse_entry_param *e);

void fs_get_open(struct inode *inode);

void fs_put_open(struct tierfs *fs, struct inode *inode);

/* Free an inode nobody can reach any more.  ns->lock held for writing. */
void fs_drop_if_unused(struct tierfs *fs, struct inode *inode);

void fs_touch(struct inode *inode, bool mtime, bool ctime);

/*
 * Tell the kernel that its copy of node ino's attributes is stale, where
 * no reply carries them (an ioctl, a direct write that cleared SUID).
 * Send it before the reply, so that the caller's next stat sees it.
 */
void fs_inval_attr(struct tierfs *fs, fuse_ino_t ino);

/* A read or readdir of inode: update its atime as the mount's atime flags say. */
void fs_accessed(struct tierfs *fs, struct inode *inode);

/*
 * Change a link count; ns->lock held for writing.  A file that loses its
 * last name keeps its pages until fs_release_orphan.
 */
void fs_add_nlink(struct inode *inode, int delta);

/*
 * Whether inode is a file with no name left: then it is pinned, and
 * fs_release_orphan frees its pages (unless it is open) once ns->lock is
 * dropped, so freeing a big file holds no other name's lookup up.
 * ns->lock held for writing.
 */
bool fs_pin_orphan(struct inode *inode);

/* Free a pinned orphan's pages and unpin it; ns->lock not held. */
void fs_release_orphan(struct tierfs *fs, struct inode *inode);

/* Change a directory size; ns->lock held for writing. */

void fs_add_dir_size(struct inode *dir, int nr_entries);

int fs_check_name(const char *name);

/* fs_names.c: names and directories. */

void fs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);

void fs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);

void fs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);

void fs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		  struct fuse_file_info *fi);

void fs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);

void fs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);

void fs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		  const char *newname, unsigned int flags);

void fs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);

void fs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

void fs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

void fs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi);

void fs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi);

/* fs_io.c: open files and their data. */

void fs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

void fs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);

void fs_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		     struct fuse_file_info *fi);

void fs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

void fs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
		     struct fuse_file_info *fi);

void fs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, struct fuse_file_info *fi);

void fs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			   struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			   struct fuse_file_info *fi_out, size_t len, int flags);

/*
 * Whether serving the request (its in-header and first argument, as
 * /dev/fuse lays them out) may wait: a load from an asynchronous backend,
 * reclaim to make room, a large copy, or a lock another request holds.
 * The ring's queues hand such requests to workers (ring.h).  A guess: it
 * looks without taking locks.
 */
struct fuse_in_header;
bool fs_may_block(struct tierfs *fs, const struct fuse_in_header *in, const void *arg);

/* fs.c: the session, attributes, xattrs, statfs and ioctl. */

void fs_op_init(void *userdata, struct fuse_conn_info *conn);

void fs_op_destroy(void *userdata);

void fs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);

void fs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);

void fs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);

void fs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

void fs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		   struct fuse_file_info *fi);

void fs_op_readlink(fuse_req_t req, fuse_ino_t ino);

void fs_op_statfs(fuse_req_t req, fuse_ino_t ino);

void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags);

void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);

void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);

void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

void fs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		 struct fuse_file_info *fi, unsigned int flags, const void *in_buf, size_t in_bufsz,
		 size_t out_bufsz);

/* Drop nlookup of the kernel's references to ino, as a FORGET does. */
void fs_forget(struct tierfs *fs, fuse_ino_t ino, uint64_t nlookup);

/*
 * O_TMPFILE in parent: a regular file with no name, open once, for ctx
 * (the caller: its uid, gid, pid and umask).  Fills e and fi's open
 * flags as a create would; the caller replies, or undoes with
 * fs_put_open and fs_forget.  Returns 0 or -errno.
 */
int fs_tmpfile(struct tierfs *fs, fuse_ino_t parent, mode_t mode, const struct fuse_ctx *ctx,
	       struct fuse_entry_param *e, struct fuse_file_info *fi);

#endif
