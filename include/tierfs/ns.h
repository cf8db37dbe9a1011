/* SPDX-License-Identifier: MIT */
/*
 * The namespace: inodes, directories and their entries.  Directories keep a
 * hash for lookup and a cookie-ordered array for readdir, so offsets handed
 * to the kernel stay valid while entries come and go.
 */
#ifndef TIERFS_NS_H
#define TIERFS_NS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "tierfs/pagemap.h"
#include "tierfs/xattr.h"

#define NS_NAME_MAX 255
#define NS_SYMLINK_MAX 4095

struct dir;
struct lru_lists;

/*
 * One file, directory, symlink or special file.
 *
 * Locking: ns->lock (see struct ns) protects directory contents, nlink,
 * parent and the inode's life; inode->lock protects everything else of the
 * inode (attributes, size, page map, symlink target, xattrs).  Lock order:
 * ns->lock, then inode locks in address order.  nlink and size change with
 * both held where both apply, so a reader holding either sees a stable
 * value.
 */
struct inode {
	pthread_rwlock_t lock;
	uint64_t ino;		      /* st_ino; never reused */
	atomic_uint_fast64_t nlookup; /* references the kernel holds */
	uint32_t nlink;
	uint32_t nr_open; /* open files (kernel file structs) */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	uint32_t flags;		 /* FS_*_FL: immutable, append, nodump, noatime */
	uint64_t size;		 /* st_size */
	struct lru_lists *lists; /* the tenant charged for its pages; NULL: none */
	uint64_t ra_prev_first;	 /* first page of the last swap-in fault, */
	uint64_t ra_prev_end;	 /* and the page after its last */
	atomic_uint nr_loading;	 /* swap-in loads in flight with the lock dropped */
	uint32_t nr_unchecked;	 /* loads begun whose pages are not checked yet */
	uint32_t nr_deferred;	 /* slots freed meanwhile, given back */
	uint64_t *deferred;	 /* once no load is unchecked */
	uint64_t slot_gen;	 /* bumped when a slot goes back under a load */
	struct timespec atime, mtime, ctime;
	struct timespec btime; /* birth: statx's STATX_BTIME */
	union {
		struct pagemap pages; /* S_IFREG */
		struct dir *dir;      /* S_IFDIR */
		char *target;	      /* S_IFLNK */
	};
	struct xattr_list xattrs;
	struct inode *all_prev, *all_next; /* ns->all; ns->lock */
};

struct dentry {
	struct dentry *hash_next; /* chain in dir->buckets */
	struct inode *inode;
	uint64_t cookie; /* readdir offset: unique, increasing */
	uint32_t hash;
	uint16_t len;
	char name[];
};

/*
 * lock: a read lock for lookups and readdir, a write lock for anything
 * that changes a directory or an inode's link count or life.
 */
struct ns {
	pthread_rwlock_t lock;
	struct inode *root;
	struct inode *all; /* every live inode, for teardown */
	atomic_uint_fast64_t next_ino;
	atomic_uint_fast64_t nr_inodes;	 /* live inodes, root included */
	atomic_uint_fast64_t max_inodes; /* 0 = unlimited; tierctl set changes it live */
};

/* First readdir cookie of an entry; 1 and 2 stand for "." and "..". */
#define DIR_COOKIE_FIRST 3

/*
 * Create the namespace and its root directory.  Returns 0 or -ENOMEM.
 */
int ns_init(struct ns *ns, uint64_t max_inodes, mode_t root_mode, uid_t uid, gid_t gid);

/* Free every inode, open-unlinked ones included (the daemon is going away). */
void ns_destroy(struct ns *ns, void (*release)(void *ctx, struct inode *inode), void *ctx);

/*
 * A new inode with nlink 0 and nlookup 0, counted against max_inodes.
 * Directories get an empty entry table.  Returns 0, -ENOSPC (no inodes
 * left) or -ENOMEM.  ns->lock (write), or before the daemon serves requests.
 */
int ns_inode_new(struct ns *ns, mode_t mode, uid_t uid, gid_t gid, dev_t rdev, struct inode **out);

/*
 * Free an inode whose file data the caller already released; its directory
 * table, symlink target and xattrs go with it.  ns->lock held (write).
 */
void ns_inode_free(struct ns *ns, struct inode *inode);

/*
 * Free inode if nothing reaches it any more (no link, no lookup reference,
 * not the root), after release(ctx, inode) has freed its file data.
 * ns->lock held (write).
 */
void ns_inode_drop_if_unused(struct ns *ns, struct inode *inode,
			     void (*release)(void *ctx, struct inode *inode), void *ctx);

/*
 * Walk the regular files: the one after prev (NULL: the first), pinned by
 * a lookup reference so that it stays while unlocked; prev is unpinned
 * (and dropped as by ns_inode_drop_if_unused).  Takes ns->lock.  Returns
 * NULL at the end.
 */
struct inode *ns_inode_next(struct ns *ns, struct inode *prev,
			    void (*release)(void *ctx, struct inode *inode), void *ctx);

/* The entry name in dir, or NULL.  ns->lock held (read). */
struct dentry *dir_lookup(const struct inode *dir, const char *name, size_t len);

/* Add name -> inode to dir.  Returns 0, -EEXIST or -ENOMEM.  ns->lock (write). */
int dir_add(struct inode *dir, const char *name, size_t len, struct inode *inode);

/* Remove an entry of dir and free it.  ns->lock (write). */
void dir_remove(struct inode *dir, struct dentry *d);

/* The first entry whose cookie is greater than after, or NULL.  ns->lock. */
struct dentry *dir_next(const struct inode *dir, uint64_t after);

size_t dir_nr_entries(const struct inode *dir);

/* The cookie the next entry added to dir will get.  ns->lock. */
uint64_t dir_end_cookie(const struct inode *dir);

/* The parent directory (the root is its own parent).  ns->lock. */
struct inode *dir_parent(const struct inode *dir);
void dir_set_parent(struct inode *dir, struct inode *parent);

#endif
