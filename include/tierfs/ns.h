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

/*
 * tmpfs's inode space: nr_inodes x NS_BOGO_INODE_SIZE bytes, of which each
 * inode and each hard link beyond an inode's first takes
 * NS_BOGO_INODE_SIZE, and each xattr but a POSIX ACL what it costs in
 * memory.  df's free inodes are what is left, in NS_BOGO_INODE_SIZE units.
 * Entries, symlink targets and ACLs are charged to the memory budget
 * only, as tmpfs keeps them outside its inode space.
 */
#define NS_BOGO_INODE_SIZE 1024

struct data_space;
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
	struct inode *id_next;		   /* chain in ns->ids; ns->lock */
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
	/*
	 * Every live inode by address, the node id the kernel knows it by:
	 * a file handle names a node id the kernel may have forgotten.
	 */
	struct inode **ids;
	size_t nr_id_buckets; /* a power of two */
	atomic_uint_fast64_t next_ino;
	bool is_inode32;		  /* st_ino below 2^32 (inode32), else 64 bits */
	atomic_uint_fast64_t nr_inodes;	  /* live inodes, root included */
	atomic_uint_fast64_t max_inodes;  /* 0 = unlimited; tierctl set changes it live */
	atomic_uint_fast64_t ispace_used; /* bytes of the inode space taken */
	struct data_space *ds;		  /* charged for the namespace's memory; NULL: none */
};

/* First readdir cookie of an entry; 1 and 2 stand for "." and "..". */
#define DIR_COOKIE_FIRST 3

/*
 * Create the namespace and its root directory.  Its memory is charged to
 * ds's budget (budget_charge_meta), unless ds is NULL; is_inode32 keeps
 * st_ino below 2^32.  Returns 0 or -ENOMEM.
 */
int ns_init(struct ns *ns, struct data_space *ds, uint64_t max_inodes, mode_t root_mode, uid_t uid,
	    gid_t gid, bool is_inode32);

/*
 * Take ispace bytes of the inode space and bytes of memory from the budget
 * for something about to be held.  Returns 0, or -ENOSPC when either is
 * spent (nothing is taken then).  ns_uncharge gives both back.  Any lock
 * or none; every call below that allocates charges itself.
 */
int ns_charge(struct ns *ns, uint64_t ispace, uint64_t bytes);
void ns_uncharge(struct ns *ns, uint64_t ispace, uint64_t bytes);

/*
 * Memory charged whatever the room: for what the kernel's own limits bound
 * (an open directory), so that listing a full mount to clean it up works.
 */
void ns_charge_always(struct ns *ns, uint64_t bytes);

/* What an allocation of size bytes costs, as malloc rounds it. */
uint64_t ns_alloc_cost(size_t size);

/* Free inodes for statfs: the inode space left; UINT64_MAX when unlimited. */
uint64_t ns_nr_free_inodes(struct ns *ns);

/*
 * Inodes in use as the limit counts them (inode space taken, rounded up),
 * for a new nr_inodes= to be checked against.
 */
uint64_t ns_nr_used_inodes(struct ns *ns);

/*
 * Give a new symlink its target (a copy), charged.  Returns 0, -ENOSPC or
 * -ENOMEM.  ns->lock held (write).
 */
int ns_set_target(struct ns *ns, struct inode *inode, const char *target);

/*
 * xattr_set and xattr_remove on the inode's list, charging what the list
 * grows by and giving back what it shrinks by.  Returns as those do, or
 * -ENOSPC when the inode space or the memory budget is spent.
 * inode->lock held (write).
 */
int ns_xattr_set(struct ns *ns, struct inode *inode, const char *name, const void *value,
		 size_t size, int flags);
int ns_xattr_remove(struct ns *ns, struct inode *inode, const char *name);

/* Free every inode, open-unlinked ones included (the daemon is going away). */
void ns_destroy(struct ns *ns, void (*release)(void *ctx, struct inode *inode), void *ctx);

/*
 * A new inode with nlink 0 and nlookup 0, charged NS_BOGO_INODE_SIZE of the
 * inode space and its memory.  Directories get an empty entry table.
 * Returns 0, -ENOSPC (no inode space or memory left) or -ENOMEM.  ns->lock
 * (write), or before the daemon serves requests.
 */
int ns_inode_new(struct ns *ns, mode_t mode, uid_t uid, gid_t gid, dev_t rdev, struct inode **out);

/*
 * Free an inode whose file data the caller already released; its directory
 * table, symlink target and xattrs go with it, and their charges.  ns->lock
 * held (write).
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

/*
 * The live inode at address id (a node id from the kernel that may be
 * stale), or NULL.  ns->lock held.
 */
struct inode *ns_inode_by_id(struct ns *ns, uintptr_t id);

/* The entry name in dir, or NULL.  ns->lock held (read). */
struct dentry *dir_lookup(const struct inode *dir, const char *name, size_t len);

/*
 * Add name -> inode to dir, its memory charged.  Returns 0, -EEXIST,
 * -ENOSPC or -ENOMEM.  ns->lock (write).
 */
int dir_add(struct ns *ns, struct inode *dir, const char *name, size_t len, struct inode *inode);

/*
 * Move entry d of from to name in to (a rename to a name not there): only
 * what a longer name costs beyond the old one may be refused.  Returns 0,
 * -EEXIST, -ENOSPC or -ENOMEM, with nothing changed on failure.  d is
 * freed on success.  ns->lock (write).
 */
int dir_move(struct ns *ns, struct inode *from, struct dentry *d, struct inode *to,
	     const char *name, size_t len);

/* Remove an entry of dir and free it.  ns->lock (write). */
void dir_remove(struct ns *ns, struct inode *dir, struct dentry *d);

/* The first entry whose cookie is greater than after, or NULL.  ns->lock. */
struct dentry *dir_next(const struct inode *dir, uint64_t after);

size_t dir_nr_entries(const struct inode *dir);

/* The cookie the next entry added to dir will get.  ns->lock. */
uint64_t dir_end_cookie(const struct inode *dir);

/* The parent directory (the root is its own parent).  ns->lock. */
struct inode *dir_parent(const struct inode *dir);
void dir_set_parent(struct inode *dir, struct inode *parent);

#endif
