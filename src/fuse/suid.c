// SPDX-License-Identifier: MIT
/*
 * Who clears SUID and SGID, and when (suid.h).
 */
#include <linux/fuse.h>
#include <stdatomic.h>
#include <sys/stat.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "suid.h"

/* Whether the request this thread is handling carries a KILL_SUIDGID bit. */
static _Thread_local bool is_kill_asked;

/* Every FUSE_SETATTR bit that changes something; none set is the kernel's "kill privs". */
#define FATTR_CHANGES                                                                  \
	(FATTR_MODE | FATTR_UID | FATTR_GID | FATTR_SIZE | FATTR_ATIME | FATTR_MTIME | \
	 FATTR_ATIME_NOW | FATTR_MTIME_NOW | FATTR_CTIME | FATTR_KILL_SUIDGID)

/* Whether the argument of op (len bytes) asks that SUID/SGID be cleared. */
static bool asks_kill(uint32_t op, const void *arg, size_t len)
{
	switch (op) {
	case FUSE_WRITE:
		return len >= sizeof(struct fuse_write_in) &&
		       (((const struct fuse_write_in *)arg)->write_flags & FUSE_WRITE_KILL_SUIDGID);
	case FUSE_SETATTR:
		/*
		 * A chown, or a truncate without CAP_FSETID, says so; a
		 * fallocate or copy without it sends a SETATTR that changes
		 * nothing (the kernel's remove-privs, its mode bits dropped).
		 */
		return len >= sizeof(struct fuse_setattr_in) &&
		       ((((const struct fuse_setattr_in *)arg)->valid & FATTR_KILL_SUIDGID) ||
			!(((const struct fuse_setattr_in *)arg)->valid & FATTR_CHANGES));
	case FUSE_OPEN: /* with O_TRUNC; a CREATE makes a new file: nothing to clear */
		return len >= sizeof(struct fuse_open_in) &&
		       (((const struct fuse_open_in *)arg)->open_flags & FUSE_OPEN_KILL_SUIDGID);
	default:
		return false;
	}
}

void suid_note(struct tierfs *fs, uint32_t op, const void *arg, size_t len)
{
	is_kill_asked = arg && suid_is_ours(fs) && asks_kill(op, arg, len);
}

bool suid_is_ours(struct tierfs *fs)
{
	return atomic_load_explicit(&fs->transport.is_killpriv_v2, memory_order_relaxed);
}

bool suid_kill_asked(void)
{
	return is_kill_asked;
}

/*
 * Whether req's caller is in group gid.  Its supplementary groups come from
 * /proc: read only for an SGID file without S_IXGRP, which is rare.
 */
static bool is_in_group(fuse_req_t req, gid_t gid)
{
	gid_t groups[64];
	int n;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = fuse_req_getgroups(req, 64, groups);
	for (int i = 0; i < n && i < 64; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

bool suid_in_group_or_capable(fuse_req_t req, gid_t gid)
{
	return fuse_req_ctx(req)->uid == 0 || is_in_group(req, gid);
}

bool suid_clear(fuse_req_t req, struct inode *inode)
{
	mode_t mode = inode->mode;

	inode->mode &= ~(mode_t)S_ISUID;
	if ((inode->mode & S_ISGID) && ((inode->mode & S_IXGRP) || !is_in_group(req, inode->gid)))
		inode->mode &= ~(mode_t)S_ISGID;
	return inode->mode != mode;
}

bool suid_after_write(struct tierfs *fs, fuse_req_t req, struct inode *inode)
{
	if (suid_is_ours(fs) ? is_kill_asked : fuse_req_ctx(req)->uid != 0)
		return suid_clear(req, inode);
	return false;
}
