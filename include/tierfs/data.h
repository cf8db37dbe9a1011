/* SPDX-License-Identifier: MIT */
/*
 * File data: reads and writes through an inode's page map and the page
 * pool, and the range operations (truncate, hole punch, allocate, seek,
 * copy).  Every function expects the inode's lock: read for
 * data_has_swapped, data_read, data_read_mem, data_seek and data_copy's
 * source, write for the rest (data_copy's destination included).
 */
#ifndef TIERFS_DATA_H
#define TIERFS_DATA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "tierfs/space.h"

struct inode;

/* Most pages one read can return: 1 MiB, plus one for misalignment. */
#define DATA_MAX_READ_PAGES 257

/*
 * Write the bytes of the nr_iov buffers of iov, one after the other, at
 * off, copying each byte once into the pool.  Returns bytes written (short
 * when space ran out part way), or -ENOSPC / -ENOMEM / -EFBIG when nothing
 * was.  Extends the size; does not touch times.
 */
ssize_t data_write(struct data_space *ds, struct inode *inode, const struct iovec *iov,
		   unsigned int nr_iov, uint64_t off);

/* data_write from memory. */
ssize_t data_write_mem(struct data_space *ds, struct inode *inode, const void *buf, size_t len,
		       uint64_t off);

/*
 * Whether [off, off+len) holds swapped pages: then data_read needs the
 * inode's write lock and swapin_range first (swapin.h).
 */
bool data_has_swapped(const struct inode *inode, uint64_t off, size_t len);

/*
 * Describe up to len bytes at off (clamped to the size) as iovecs pointing
 * into the pool, a shared zero page or *scratch, a buffer data_read
 * allocates when a page must be expanded (the caller frees it after the
 * reply; start with NULL).  Valid until the inode lock is dropped.  iov must
 * hold DATA_MAX_READ_PAGES; len at most 1 MiB.  No page of the range may be
 * swapped (see data_has_swapped).  Returns the number of iovecs or -ENOMEM.
 */
int data_read(struct data_space *ds, const struct inode *inode, uint64_t off, size_t len,
	      struct iovec *iov, char **scratch);

/*
 * Copy up to len bytes at off into buf, loading swapped pages into buf
 * without bringing them back.  Returns bytes copied or -EIO.
 */
ssize_t data_read_mem(struct data_space *ds, const struct inode *inode, uint64_t off, void *buf,
		      size_t len);

/* Set the size, freeing pages past it and zeroing the tail of the last. */
int data_truncate(struct data_space *ds, struct inode *inode, uint64_t size);

/* Make [off, off+len) read as zeros, freeing whole pages. */
int data_punch(struct data_space *ds, struct inode *inode, uint64_t off, uint64_t len);

/*
 * Back every hole in [off, off+len) with a zero-filled page entry, counted
 * against size= but using no memory.  All or nothing: -ENOSPC changes
 * nothing.  Does not change the size.
 */
int data_allocate(struct data_space *ds, struct inode *inode, uint64_t off, uint64_t len);

/* SEEK_DATA / SEEK_HOLE from off.  Returns the offset or -ENXIO. */
int64_t data_seek(const struct inode *inode, uint64_t off, int whence);

/*
 * Copy len bytes from src at src_off to dst at dst_off (dst != src, or
 * ranges that do not overlap).  Returns bytes copied or -errno.
 */
ssize_t data_copy(struct data_space *ds, struct inode *dst, uint64_t dst_off,
		  const struct inode *src, uint64_t src_off, uint64_t len);

/* Free every page of the inode. */
void data_release(struct data_space *ds, struct inode *inode);

/*
 * data_release of a regular file nothing reaches any more, taking its
 * lock: the release callback of ns_destroy and ns_inode_next, ds the
 * struct data_space.
 */
void data_release_unreachable(void *ds, struct inode *inode);

/* The state of one write's waits for room (data_wait_room); zeroed to start. */
struct data_room_wait {
	uint64_t start_ns;    /* the first wait */
	uint64_t progress_ns; /* when the capacity or the evictions last grew */
	uint64_t capacity;    /* the capacity then, pages x 1024 */
	uint64_t nr_evicted;  /* the evictions then */
};

/*
 * After a write got ENOSPC with nothing written: whether to try it again.
 * The capacity under a limit counts resident pages at their full size
 * until the reclaimer has stored enough to measure what they compress to,
 * so a writer that outruns it is refused long before the mount is full.
 * Where eviction may still make room (a backend, size= not reached,
 * pages resident), this evicts a batch (or waits 5 ms where none can go)
 * and returns true, until neither the capacity nor the evictions have grown for
 * DATA_ROOM_STALL_MS (on a full mount stores are refused, and evicting
 * pages that do not compress does not grow it for long), or the waits of
 * the write reach DATA_ROOM_MAX_MS; then false, and the ENOSPC the write
 * gets is logged (the refusals waited out are counted, capacity_enospc,
 * not logged).  Call it with no lock held.
 */
bool data_wait_room(struct data_space *ds, struct data_room_wait *w);

#define DATA_ROOM_STALL_MS 300
#define DATA_ROOM_MAX_MS 10000

/*
 * Whether a write of nr_pages would pass the capacity as it stands, so
 * that its ENOSPC may wait (data_wait_room): off a ring thread.
 */
bool data_is_short(struct data_space *ds, uint64_t nr_pages);

/*
 * Whether nr_pages more resident pages for inode may make their allocation
 * reclaim on the caller's thread, and so wait: near the reclaimer's mark,
 * or with inode's tenant at its share, which it pays with its own pages.
 * No lock needed.
 */
bool data_may_reclaim(struct data_space *ds, const struct inode *inode, uint64_t nr_pages);

#endif
