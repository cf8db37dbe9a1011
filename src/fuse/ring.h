/* SPDX-License-Identifier: MIT */
/*
 * FUSE over io_uring for a libfuse 3.14 session (ring.c): one queue per
 * possible CPU, each a thread pinned to its CPU with a ring of entries the
 * kernel fills with requests, so a request is served on the CPU that
 * issued it.  libfuse knows nothing of it: the ring is driven through the
 * session's custom I/O hooks, requests are handed to
 * fuse_session_process_buf() and replies caught in the writev hook.
 * Requests that may wait (fs_may_block) go to worker threads that commit
 * from there, so a ring thread never stalls the CPU's other requests.
 * FORGET, INTERRUPT, INIT and notifications stay on /dev/fuse, served by
 * the classic loop.  Without liburing in the build (ring_none.c) ring_new
 * says so and the mount stays classic.
 */
#ifndef TIERFS_RING_H
#define TIERFS_RING_H

#include <stdbool.h>
#include <stddef.h>

#include "tierfs/fs.h"

struct ring;

/* Entries per queue: requests a CPU can have in flight over the ring. */
#define RING_DEPTH 16

/*
 * Set up the queues and their threads for se (mounted, its INIT not yet
 * read) and install the hooks; the rings register once the INIT reply has
 * gone out, if the kernel offered them, or stay idle and the stats say
 * why.  Returns 0, or -errno with a reason in why (the mount then serves
 * classic; nothing was installed).
 */
int ring_new(struct fuse_session *se, struct tierfs *fs, struct ring **out, char *why,
	     size_t why_len);

/*
 * After the unmount (the kernel gave up every entry, or a second passed):
 * stop the workers and the queues and free the buffers.  NULL is a no-op.
 */
void ring_destroy(struct ring *r);

#endif
