// SPDX-License-Identifier: MIT
/*
 * nullfs: the FUSE ceiling.  A low-level FUSE filesystem that keeps nothing
 * but names and sizes: writes are accepted and dropped, reads return zeros
 * from one static buffer, and the namespace is a small hash table.  It is
 * mounted with tierfs's transport settings (capabilities, timeouts, cache
 * flags, max_write, multi-threaded loop), so bench/resident.sh can show how
 * much of what FUSE itself allows tierfs reaches.
 *
 * usage: nullfs MOUNTPOINT [-f] [-s] [-d]
 */
#define FUSE_USE_VERSION 314

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NULLFS_TIMEOUT 86400.0	 /* tierfs's entry and attribute timeout */
#define NULLFS_MAX_IO (1u << 20) /* max_write and max_readahead, as tierfs */
#define NULLFS_CHUNK_INODES 4096
#define NULLFS_NR_CHUNKS 1024 /* 4 Mi inode numbers, never reused */
#define NULLFS_NR_BUCKETS (1u << 16)
#define NULLFS_NAME_MAX 255

struct nullfs_inode {
	mode_t mode;
	uid_t uid;
	gid_t gid;
	unsigned int nlink;	  /* under nullfs_lock */
	unsigned int nr_children; /* directories; under nullfs_lock */
	_Atomic uint64_t size;
};

struct nullfs_dentry {
	struct nullfs_dentry *next; /* hash chain */
	fuse_ino_t parent;
	fuse_ino_t ino;
	char name[];
};

/*
 * nullfs_lock protects the hash table, the inode allocator and the link
 * counts.  Inode chunks are never freed, and a chunk is allocated before
 * its first inode number is handed to the kernel, so attribute and size
 * accesses need no lock.
 */
static pthread_mutex_t nullfs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nullfs_dentry *nullfs_buckets[NULLFS_NR_BUCKETS];
static struct nullfs_inode *nullfs_chunks[NULLFS_NR_CHUNKS];
static fuse_ino_t nullfs_next_ino = FUSE_ROOT_ID;
static struct timespec nullfs_mount_time;

/* Never written: its pages stay the kernel's shared zero page. */
static const char nullfs_zeros[NULLFS_MAX_IO];

static struct nullfs_inode *nullfs_inode(fuse_ino_t ino)
{
	return &nullfs_chunks[ino / NULLFS_CHUNK_INODES][ino % NULLFS_CHUNK_INODES];
}

/* FNV-1a over the parent and the name. */
static unsigned int nullfs_hash(fuse_ino_t parent, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ parent;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return (unsigned int)(h ^ (h >> 32)) & (NULLFS_NR_BUCKETS - 1);
}

/* The dentry's link in its chain, or the chain's end; under nullfs_lock. */
static struct nullfs_dentry **nullfs_find(fuse_ino_t parent, const char *name)
{
	struct nullfs_dentry **pos = &nullfs_buckets[nullfs_hash(parent, name)];

	while (*pos && ((*pos)->parent != parent || strcmp((*pos)->name, name)))
		pos = &(*pos)->next;
	return pos;
}

/* A new inode number with its attributes; 0 when out of numbers or memory. */
static fuse_ino_t nullfs_new_inode(mode_t mode, fuse_req_t req)
{
	const struct fuse_ctx *ctx = req ? fuse_req_ctx(req) : NULL;
	fuse_ino_t ino = nullfs_next_ino;
	struct nullfs_inode *inode;
	size_t chunk = ino / NULLFS_CHUNK_INODES;

	if (chunk >= NULLFS_NR_CHUNKS)
		return 0;
	if (!nullfs_chunks[chunk]) {
		nullfs_chunks[chunk] = calloc(NULLFS_CHUNK_INODES, sizeof(struct nullfs_inode));
		if (!nullfs_chunks[chunk])
			return 0;
	}
	nullfs_next_ino++;
	inode = nullfs_inode(ino);
	inode->mode = mode;
	inode->uid = ctx ? ctx->uid : getuid();
	inode->gid = ctx ? ctx->gid : getgid();
	inode->nlink = S_ISDIR(mode) ? 2 : 1;
	inode->nr_children = 0;
	atomic_store(&inode->size, 0);
	return ino;
}

static void nullfs_stat(fuse_ino_t ino, struct stat *st)
{
	struct nullfs_inode *inode = nullfs_inode(ino);
	uint64_t size = atomic_load(&inode->size);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = inode->mode;
	st->st_nlink = inode->nlink;
	st->st_uid = inode->uid;
	st->st_gid = inode->gid;
	st->st_size = (off_t)size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
	st->st_atim = st->st_mtim = st->st_ctim = nullfs_mount_time;
}

static void nullfs_entry(fuse_ino_t ino, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = ino;
	e->generation = 1;
	e->attr_timeout = NULLFS_TIMEOUT;
	e->entry_timeout = NULLFS_TIMEOUT;
	nullfs_stat(ino, &e->attr);
}

static void nullfs_init(void *userdata, struct fuse_conn_info *conn)
{
	/* The capabilities tierfs asks for with cache=auto, except readdirplus. */
	unsigned int want = FUSE_CAP_DONT_MASK | FUSE_CAP_POSIX_ACL | FUSE_CAP_IOCTL_DIR |
			    FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_CACHE_SYMLINKS |
			    FUSE_CAP_PARALLEL_DIROPS | FUSE_CAP_ASYNC_DIO;

	(void)userdata;
	conn->want |= want & conn->capable;
	conn->want &= ~(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_HANDLE_KILLPRIV |
			FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE | FUSE_CAP_READDIRPLUS);
	conn->max_write = NULLFS_MAX_IO;
	conn->max_readahead = NULLFS_MAX_IO;
	conn->time_gran = 1;
}

static void nullfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct nullfs_dentry *d;

	pthread_mutex_lock(&nullfs_lock);
	d = *nullfs_find(parent, name);
	if (d) {
		nullfs_entry(d->ino, &e);
	} else {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = NULLFS_TIMEOUT; /* a cached negative entry, as tierfs */
	}
	pthread_mutex_unlock(&nullfs_lock);
	fuse_reply_entry(req, &e);
}

static void nullfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	nullfs_stat(ino, &st);
	fuse_reply_attr(req, &st, NULLFS_TIMEOUT);
}

static void nullfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			   struct fuse_file_info *fi)
{
	struct nullfs_inode *inode = nullfs_inode(ino);
	struct stat st;

	(void)fi;
	if (to_set & FUSE_SET_ATTR_SIZE)
		atomic_store(&inode->size, (uint64_t)attr->st_size);
	if (to_set & FUSE_SET_ATTR_MODE)
		inode->mode = (inode->mode & S_IFMT) | (attr->st_mode & 07777);
	if (to_set & FUSE_SET_ATTR_UID)
		inode->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		inode->gid = attr->st_gid;
	nullfs_stat(ino, &st);
	fuse_reply_attr(req, &st, NULLFS_TIMEOUT);
}

/* Adds name in parent with a new inode of mode; fills e.  Returns 0 or -errno. */
static int nullfs_add(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_entry_param *e)
{
	size_t len = strlen(name);
	struct nullfs_dentry **pos, *d;
	fuse_ino_t ino;
	int err = 0;

	if (len > NULLFS_NAME_MAX)
		return -ENAMETOOLONG;
	mode = (mode & S_IFMT) | (mode & 07777 & ~fuse_req_ctx(req)->umask);
	pthread_mutex_lock(&nullfs_lock);
	pos = nullfs_find(parent, name);
	if (*pos) {
		err = -EEXIST;
		goto unlock;
	}
	d = malloc(sizeof(*d) + len + 1);
	if (!d) {
		err = -ENOMEM;
		goto unlock;
	}
	ino = nullfs_new_inode(mode, req);
	if (!ino) {
		free(d);
		err = -ENOSPC;
		goto unlock;
	}
	d->next = NULL;
	d->parent = parent;
	d->ino = ino;
	memcpy(d->name, name, len + 1);
	*pos = d;
	nullfs_inode(parent)->nr_children++;
	if (S_ISDIR(mode))
		nullfs_inode(parent)->nlink++;
	nullfs_entry(ino, e);
unlock:
	pthread_mutex_unlock(&nullfs_lock);
	return err;
}

static void nullfs_set_open_flags(struct fuse_file_info *fi)
{
	/* tierfs's cache=auto: the page cache is kept across opens but O_DIRECT. */
	fi->direct_io = !!(fi->flags & O_DIRECT);
	fi->keep_cache = !fi->direct_io;
}

static void nullfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			  struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int err = nullfs_add(req, parent, name, S_IFREG | (mode & 07777), &e);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	nullfs_set_open_flags(fi);
	fuse_reply_create(req, &e, fi);
}

static void nullfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			 dev_t rdev)
{
	struct fuse_entry_param e;
	int err;

	(void)rdev;
	if (!S_ISREG(mode)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	err = nullfs_add(req, parent, name, mode, &e);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void nullfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fuse_entry_param e;
	int err = nullfs_add(req, parent, name, S_IFDIR | (mode & 07777), &e);

	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void nullfs_remove(fuse_req_t req, fuse_ino_t parent, const char *name, bool is_dir)
{
	struct nullfs_dentry **pos, *d = NULL;
	struct nullfs_inode *inode;
	int err = 0;

	pthread_mutex_lock(&nullfs_lock);
	pos = nullfs_find(parent, name);
	if (!*pos) {
		err = ENOENT;
		goto unlock;
	}
	inode = nullfs_inode((*pos)->ino);
	if (is_dir != !!S_ISDIR(inode->mode)) {
		err = is_dir ? ENOTDIR : EISDIR;
		goto unlock;
	}
	if (is_dir && inode->nr_children) {
		err = ENOTEMPTY;
		goto unlock;
	}
	d = *pos;
	*pos = d->next;
	inode->nlink = 0;
	nullfs_inode(parent)->nr_children--;
	if (is_dir)
		nullfs_inode(parent)->nlink--;
unlock:
	pthread_mutex_unlock(&nullfs_lock);
	free(d);
	fuse_reply_err(req, err);
}

static void nullfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	nullfs_remove(req, parent, name, false);
}

static void nullfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	nullfs_remove(req, parent, name, true);
}

static void nullfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (fi->flags & O_TRUNC)
		atomic_store(&nullfs_inode(ino)->size, 0);
	nullfs_set_open_flags(fi);
	fuse_reply_open(req, fi);
}

static void nullfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	uint64_t file_size = atomic_load(&nullfs_inode(ino)->size);

	(void)fi;
	if ((uint64_t)off >= file_size)
		size = 0;
	else if (size > file_size - (uint64_t)off)
		size = file_size - (uint64_t)off;
	if (size > sizeof(nullfs_zeros))
		size = sizeof(nullfs_zeros);
	fuse_reply_buf(req, nullfs_zeros, size);
}

/* The data is dropped; only the file grows. */
static void nullfs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
			     struct fuse_file_info *fi)
{
	struct nullfs_inode *inode = nullfs_inode(ino);
	size_t len = fuse_buf_size(bufv);
	uint64_t end = (uint64_t)off + len, size;

	(void)fi;
	size = atomic_load(&inode->size);
	while (size < end && !atomic_compare_exchange_weak(&inode->size, &size, end))
		;
	fuse_reply_write(req, len);
}

static void nullfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			     struct fuse_file_info *fi)
{
	struct nullfs_inode *inode = nullfs_inode(ino);
	uint64_t end = (uint64_t)off + (uint64_t)len, size;

	(void)fi;
	if (mode) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	size = atomic_load(&inode->size);
	while (size < end && !atomic_compare_exchange_weak(&inode->size, &size, end))
		;
	fuse_reply_err(req, 0);
}

static void nullfs_reply_ok(fuse_req_t req)
{
	fuse_reply_err(req, 0);
}

static void nullfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	nullfs_reply_ok(req);
}

static void nullfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	nullfs_reply_ok(req);
}

static void nullfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_open(req, fi);
}

/* Adds one entry at offset pos after off; false when buf is full. */
static bool nullfs_add_direntry(fuse_req_t req, char *buf, size_t size, size_t *used,
				const char *name, fuse_ino_t ino, mode_t mode, off_t pos)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t entry_size = fuse_add_direntry(req, buf + *used, size - *used, name, &st, pos);

	if (entry_size > size - *used)
		return false;
	*used += entry_size;
	return true;
}

/* ".", ".." and the children, scanned from the whole table on each call. */
static void nullfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	char *buf = malloc(size);
	size_t used = 0;
	off_t pos = 2;

	(void)fi;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off < 1 && !nullfs_add_direntry(req, buf, size, &used, ".", ino, S_IFDIR, 1))
		goto reply;
	if (off < 2 && !nullfs_add_direntry(req, buf, size, &used, "..", ino, S_IFDIR, 2))
		goto reply;
	pthread_mutex_lock(&nullfs_lock);
	for (unsigned int b = 0; b < NULLFS_NR_BUCKETS; b++) {
		for (struct nullfs_dentry *d = nullfs_buckets[b]; d; d = d->next) {
			if (d->parent != ino || ++pos <= off)
				continue;
			if (!nullfs_add_direntry(req, buf, size, &used, d->name, d->ino,
						 nullfs_inode(d->ino)->mode, pos))
				goto unlock;
		}
	}
unlock:
	pthread_mutex_unlock(&nullfs_lock);
reply:
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void nullfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = {
		.f_bsize = 4096,
		.f_frsize = 4096,
		.f_blocks = 1ULL << 32,
		.f_bfree = 1ULL << 32,
		.f_bavail = 1ULL << 32,
		.f_files = NULLFS_NR_CHUNKS * NULLFS_CHUNK_INODES,
		.f_namemax = NULLFS_NAME_MAX,
	};

	(void)ino;
	pthread_mutex_lock(&nullfs_lock);
	sv.f_ffree = sv.f_favail = sv.f_files - nullfs_next_ino;
	pthread_mutex_unlock(&nullfs_lock);
	fuse_reply_statfs(req, &sv);
}

/*
 * No extended attributes, but answered as tierfs answers a file without
 * them, so that the kernel sends the same security.capability and ACL
 * requests as it does to tierfs.
 */
static void nullfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	(void)ino;
	(void)name;
	(void)size;
	fuse_reply_err(req, ENODATA);
}

static void nullfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	(void)ino;
	if (size)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_xattr(req, 0);
}

static const struct fuse_lowlevel_ops nullfs_ops = {
	.init = nullfs_init,
	.lookup = nullfs_lookup,
	.getattr = nullfs_getattr,
	.setattr = nullfs_setattr,
	.mknod = nullfs_mknod,
	.mkdir = nullfs_mkdir,
	.unlink = nullfs_unlink,
	.rmdir = nullfs_rmdir,
	.open = nullfs_open,
	.read = nullfs_read,
	.write_buf = nullfs_write_buf,
	.release = nullfs_release,
	.fsync = nullfs_fsync,
	.opendir = nullfs_opendir,
	.readdir = nullfs_readdir,
	.releasedir = nullfs_release,
	.fsyncdir = nullfs_fsync,
	.statfs = nullfs_statfs,
	.getxattr = nullfs_getxattr,
	.listxattr = nullfs_listxattr,
	.create = nullfs_create,
	.fallocate = nullfs_fallocate,
};

static int nullfs_usage(FILE *out, int status)
{
	fprintf(out, "usage: nullfs MOUNTPOINT [-f] [-s] [-d]\n\n"
		     "A FUSE filesystem that drops writes and reads zeros, mounted with\n"
		     "tierfs's transport settings: the FUSE ceiling for bench/resident.sh.\n"
		     "  -f  stay in the foreground\n"
		     "  -s  serve on one thread (default: libfuse's thread pool)\n"
		     "  -d  print every request (implies -f)\n"
		     "Unmount with fusermount3 -u MOUNTPOINT.\n");
	return status;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	const char *mountpoint = NULL;
	bool foreground = false, single_thread = false, debug = false;
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	int ret = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f"))
			foreground = true;
		else if (!strcmp(argv[i], "-s"))
			single_thread = true;
		else if (!strcmp(argv[i], "-d"))
			debug = foreground = true;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return nullfs_usage(stdout, 0);
		else if (!mountpoint && argv[i][0] != '-')
			mountpoint = argv[i];
		else
			return nullfs_usage(stderr, 2);
	}
	if (!mountpoint)
		return nullfs_usage(stderr, 2);
	clock_gettime(CLOCK_REALTIME, &nullfs_mount_time);
	pthread_mutex_lock(&nullfs_lock);
	if (nullfs_new_inode(S_IFDIR | 0777, NULL) != FUSE_ROOT_ID) {
		pthread_mutex_unlock(&nullfs_lock);
		fprintf(stderr, "nullfs: out of memory\n");
		return 1;
	}
	pthread_mutex_unlock(&nullfs_lock);
	nullfs_inode(FUSE_ROOT_ID)->mode = S_IFDIR | 01777;
	if (fuse_opt_add_arg(&args, argv[0]) || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(
		    &args, getuid() == 0 ?
				   "default_permissions,fsname=nullfs,subtype=nullfs,allow_other" :
				   "default_permissions,fsname=nullfs,subtype=nullfs") ||
	    (debug && fuse_opt_add_arg(&args, "-d"))) {
		fprintf(stderr, "nullfs: out of memory\n");
		goto free_args;
	}
	se = fuse_session_new(&args, &nullfs_ops, sizeof(nullfs_ops), NULL);
	if (!se)
		goto free_args;
	if (fuse_set_signal_handlers(se))
		goto destroy_session;
	if (fuse_session_mount(se, mountpoint))
		goto remove_handlers;
	fuse_daemonize(foreground);
	if (single_thread) {
		ret = fuse_session_loop(se);
	} else {
		cfg = fuse_loop_cfg_create();
		if (!cfg)
			goto unmount;
		fuse_loop_cfg_set_clone_fd(cfg, 0);
		ret = fuse_session_loop_mt(se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	ret = ret ? 1 : 0;
unmount:
	fuse_session_unmount(se);
remove_handlers:
	fuse_remove_signal_handlers(se);
destroy_session:
	fuse_session_destroy(se);
free_args:
	fuse_opt_free_args(&args);
	return ret;
}
