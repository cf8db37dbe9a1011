/* SPDX-License-Identifier: MIT */
/*
 * SUID and SGID clearing, tmpfs's rules (suid.c).  Where the kernel took
 * FUSE_HANDLE_KILLPRIV_V2 (bridge.h) the clearing is tierfs's: the kernel
 * says in each WRITE, SETATTR and OPEN whether the caller lacks
 * CAP_FSETID, and the bridge notes that of the request a thread is about
 * to handle (suid_note).  Otherwise the kernel clears the bits itself and
 * tierfs does the same after a write, taking uid 0 for CAP_FSETID.
 */
#ifndef TIERFS_SUID_H
#define TIERFS_SUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tierfs/fs.h"

/* Note the request (opcode op, its argument of len bytes; arg NULL: none) this thread handles next. */
void suid_note(struct tierfs *fs, uint32_t op, const void *arg, size_t len);

/* Whether the kernel took KILLPRIV_V2: SUID/SGID are tierfs's to clear. */
bool suid_is_ours(struct tierfs *fs);

/*
 * Whether the request this thread handles asked that SUID/SGID be cleared
 * (a chown, a truncate, an open with O_TRUNC, a fallocate or copy, by a
 * caller without CAP_FSETID).  Never without KILLPRIV_V2.
 */
bool suid_kill_asked(void);

/*
 * Clear SUID, and SGID where it means setgid (with S_IXGRP) or where req's
 * caller is not in the file's group, as the VFS does; inode->lock held.
 * Returns whether the mode changed.
 */
bool suid_clear(fuse_req_t req, struct inode *inode);

/*
 * Whether req's caller may keep SGID on a file of group gid it changes the
 * ACL of: in that group, or root (for CAP_FSETID).  The kernel would say
 * so in FUSE_SETXATTR_EXT's flags, which libfuse 3.14 cannot parse.
 */
bool suid_in_group_or_capable(fuse_req_t req, gid_t gid);

/*
 * After data was written to inode by req: clear what the writer may not
 * keep.  Returns whether the mode changed: the kernel's copy of it is then
 * stale (fs_inval_attr).
 */
bool suid_after_write(struct tierfs *fs, fuse_req_t req, struct inode *inode);

#endif
