/* SPDX-License-Identifier: MIT */
/*
 * What libfuse 3.14 does not pass on, put back (bridge.c).  Its decoder
 * drops request bits it does not know and its INIT reply can ask only for
 * what it knows; the bridge sees each raw request on the thread that then
 * hands it to libfuse (bridge_note, from the read hook or the ring) and
 * amends the INIT reply on its way out (bridge_init_reply).
 *
 * Today that is FUSE_HANDLE_KILLPRIV_V2: the kernel then marks the mount
 * SB_NOSEC, so a write no longer costs a GETXATTR of security.capability
 * nor a chown a GETATTR, and it leaves SUID/SGID clearing to tierfs, saying
 * in each WRITE, SETATTR, OPEN and CREATE whether the caller lacks
 * CAP_FSETID (the KILL_SUIDGID bits, which suid.h acts on).
 * It also asks for FUSE_DIRECT_IO_ALLOW_MMAP, so that cache=never keeps
 * shared mmap, and serves FUSE_STATX (birth time) and FUSE_TMPFILE
 * (O_TMPFILE) itself (bridge_serve).
 * The bridge also counts requests by opcode, for the stats.
 */
#ifndef TIERFS_BRIDGE_H
#define TIERFS_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "tierfs/fs.h"

struct fuse_session;

/* Serve se's /dev/fuse through the bridge's hooks (the classic transport). */
int bridge_install(struct fuse_session *se);

/* libfuse's read hook: read(2) of /dev/fuse, each request noted; userdata is the tierfs. */
ssize_t bridge_read(int fd, void *buf, size_t len, void *userdata);

/* A request of len bytes in msg, about to go to libfuse on this thread. */
void bridge_note(struct tierfs *fs, const void *msg, size_t len);

/* Sends a reply the bridge made; ctx is the caller's (the fd, the ring entry). */
typedef ssize_t (*bridge_reply_fn)(void *ctx, struct iovec *iov, int count);

/*
 * Serve the request in msg if it is one libfuse 3.14 does not know
 * (FUSE_STATX: the birth time; FUSE_TMPFILE: O_TMPFILE), replying through reply(ctx); returns
 * whether it was, and then libfuse must not see it.
 */
bool bridge_serve(struct tierfs *fs, const void *msg, size_t len, bridge_reply_fn reply, void *ctx);

/* If iov is the INIT reply, ask for what libfuse cannot; returns whether it was. */
bool bridge_init_reply(struct tierfs *fs, struct iovec *iov, int count);

#endif
