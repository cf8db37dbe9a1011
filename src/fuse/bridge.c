// SPDX-License-Identifier: MIT
/*
 * The bridge between the kernel's FUSE protocol and libfuse 3.14's
 * decoder (bridge.h).
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "bridge.h"
#include "bridge_abi.h"
#include "fs_ops.h"
#include "suid.h"

static const char *const opcode_names[TRANSPORT_NR_OPCODES] = {
	[FUSE_LOOKUP] = "lookup",
	[FUSE_FORGET] = "forget",
	[FUSE_GETATTR] = "getattr",
	[FUSE_SETATTR] = "setattr",
	[FUSE_READLINK] = "readlink",
	[FUSE_SYMLINK] = "symlink",
	[FUSE_MKNOD] = "mknod",
	[FUSE_MKDIR] = "mkdir",
	[FUSE_UNLINK] = "unlink",
	[FUSE_RMDIR] = "rmdir",
	[FUSE_RENAME] = "rename",
	[FUSE_LINK] = "link",
	[FUSE_OPEN] = "open",
	[FUSE_READ] = "read",
	[FUSE_WRITE] = "write",
	[FUSE_STATFS] = "statfs",
	[FUSE_RELEASE] = "release",
	[FUSE_FSYNC] = "fsync",
	[FUSE_SETXATTR] = "setxattr",
	[FUSE_GETXATTR] = "getxattr",
	[FUSE_LISTXATTR] = "listxattr",
	[FUSE_REMOVEXATTR] = "removexattr",
	[FUSE_FLUSH] = "flush",
	[FUSE_INIT] = "init",
	[FUSE_OPENDIR] = "opendir",
	[FUSE_READDIR] = "readdir",
	[FUSE_RELEASEDIR] = "releasedir",
	[FUSE_FSYNCDIR] = "fsyncdir",
	[FUSE_GETLK] = "getlk",
	[FUSE_SETLK] = "setlk",
	[FUSE_SETLKW] = "setlkw",
	[FUSE_ACCESS] = "access",
	[FUSE_CREATE] = "create",
	[FUSE_INTERRUPT] = "interrupt",
	[FUSE_BMAP] = "bmap",
	[FUSE_DESTROY] = "destroy",
	[FUSE_IOCTL] = "ioctl",
	[FUSE_POLL] = "poll",
	[FUSE_NOTIFY_REPLY] = "notify_reply",
	[FUSE_BATCH_FORGET] = "batch_forget",
	[FUSE_FALLOCATE] = "fallocate",
	[FUSE_READDIRPLUS] = "readdirplus",
	[FUSE_RENAME2] = "rename2",
	[FUSE_LSEEK] = "lseek",
	[FUSE_COPY_FILE_RANGE] = "copy_file_range",
	[FUSE_SYNCFS] = "syncfs",
	[FUSE_TMPFILE] = "tmpfile",
	[BRIDGE_OP_STATX] = "statx",
};

const char *transport_opcode_name(unsigned int opcode)
{
	return opcode < TRANSPORT_NR_OPCODES ? opcode_names[opcode] : NULL;
}

void bridge_note(struct tierfs *fs, const void *msg, size_t len)
{
	const struct fuse_in_header *in = msg;

	suid_note(fs, 0, NULL, 0);
	if (len < sizeof(*in))
		return;
	if (in->opcode < TRANSPORT_NR_OPCODES)
		atomic_fetch_add_explicit(&fs->transport.nr_ops[in->opcode], 1,
					  memory_order_relaxed);
	if (in->opcode == FUSE_INIT && len >= sizeof(*in) + offsetof(struct fuse_init_in, unused)) {
		const struct fuse_init_in *arg = (const void *)(in + 1);
		uint64_t flags2 = (arg->flags & FUSE_INIT_EXT) ? arg->flags2 : 0;

		atomic_store(&fs->transport.init_offered, arg->flags | flags2 << 32);
		atomic_store(&fs->transport.init_unique, in->unique);
		return;
	}
	suid_note(fs, in->opcode, in + 1, len - sizeof(*in));
}

bool bridge_init_reply(struct tierfs *fs, struct iovec *iov, int count)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	uint64_t offered = atomic_load(&fs->transport.init_offered);
	struct fuse_init_out *arg;

	if (!out->unique || out->unique != atomic_load(&fs->transport.init_unique))
		return false;
	arg = count == 2 && iov[1].iov_len >= sizeof(*arg) ? iov[1].iov_base : NULL;
	if (out->error || !arg)
		return true;
	if (offered & FUSE_HANDLE_KILLPRIV_V2) {
		arg->flags |= FUSE_HANDLE_KILLPRIV_V2;
		atomic_store(&fs->transport.is_killpriv_v2, true);
	}
	/* So that a direct_io open (cache=never, O_DIRECT) keeps shared mmap, as on tmpfs. */
	if (offered & (uint64_t)BRIDGE_INIT_FLAGS2_DIRECT_IO_ALLOW_MMAP << 32) {
		arg->flags |= FUSE_INIT_EXT;
		arg->flags2 |= BRIDGE_INIT_FLAGS2_DIRECT_IO_ALLOW_MMAP;
	}
	/*
	 * libfuse 3.14 takes FUSE_CAP_PARALLEL_DIROPS into conn.want but never
	 * into the reply: without it the kernel serialises every lookup and
	 * readdir of a directory, so one that waits stalls the rest.
	 */
	if (offered & FUSE_PARALLEL_DIROPS)
		arg->flags |= FUSE_PARALLEL_DIROPS;
	atomic_store(&fs->transport.init_granted,
		     arg->flags | (arg->flags & FUSE_INIT_EXT ? (uint64_t)arg->flags2 << 32 : 0));
	return true;
}

static void to_attr(struct fuse_attr *a, const struct stat *st)
{
	a->ino = st->st_ino;
	a->size = (uint64_t)st->st_size;
	a->blocks = (uint64_t)st->st_blocks;
	a->atime = (uint64_t)st->st_atim.tv_sec;
	a->mtime = (uint64_t)st->st_mtim.tv_sec;
	a->ctime = (uint64_t)st->st_ctim.tv_sec;
	a->atimensec = (uint32_t)st->st_atim.tv_nsec;
	a->mtimensec = (uint32_t)st->st_mtim.tv_nsec;
	a->ctimensec = (uint32_t)st->st_ctim.tv_nsec;
	a->mode = st->st_mode;
	a->nlink = (uint32_t)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->rdev = (uint32_t)st->st_rdev;
	a->blksize = (uint32_t)st->st_blksize;
}

static void to_valid(double timeout, uint64_t *sec, uint32_t *nsec)
{
	*sec = (uint64_t)timeout;
	*nsec = (uint32_t)((timeout - (double)*sec) * 1e9);
}

static void reply_error(const struct fuse_in_header *in, int err, bridge_reply_fn reply, void *ctx)
{
	struct fuse_out_header out = { sizeof(out), -err, in->unique };
	struct iovec iov = { &out, sizeof(out) };

	reply(ctx, &iov, 1);
}

static void to_sx_time(struct bridge_sx_time *t, const struct timespec *ts)
{
	t->tv_sec = ts->tv_sec;
	t->tv_nsec = (uint32_t)ts->tv_nsec;
}

/* FUSE_STATX, which libfuse 3.14 answers ENOSYS: the attributes and the birth time. */
static void serve_statx(struct tierfs *fs, const struct fuse_in_header *in, bridge_reply_fn reply,
			void *ctx)
{
	struct inode *inode = fs_inode_of(fs, in->nodeid);
	struct bridge_statx_out sx = { 0 };
	struct fuse_out_header out = { sizeof(out) + sizeof(sx), 0, in->unique };
	struct iovec iov[2] = { { &out, sizeof(out) }, { &sx, sizeof(sx) } };
	struct timespec btime;
	struct stat st;

	pthread_rwlock_rdlock(&inode->lock);
	fs_fill_stat(inode, &st);
	btime = inode->btime;
	pthread_rwlock_unlock(&inode->lock);
	to_valid(fs->timeout, &sx.attr_valid, &sx.attr_valid_nsec);
	sx.stat.mask = STATX_BASIC_STATS | STATX_BTIME;
	sx.stat.blksize = (uint32_t)st.st_blksize;
	sx.stat.nlink = (uint32_t)st.st_nlink;
	sx.stat.uid = st.st_uid;
	sx.stat.gid = st.st_gid;
	sx.stat.mode = (uint16_t)st.st_mode;
	sx.stat.ino = st.st_ino;
	sx.stat.size = (uint64_t)st.st_size;
	sx.stat.blocks = (uint64_t)st.st_blocks;
	to_sx_time(&sx.stat.atime, &st.st_atim);
	to_sx_time(&sx.stat.btime, &btime);
	to_sx_time(&sx.stat.ctime, &st.st_ctim);
	to_sx_time(&sx.stat.mtime, &st.st_mtim);
	sx.stat.rdev_major = major(st.st_rdev);
	sx.stat.rdev_minor = minor(st.st_rdev);
	reply(ctx, iov, 2);
}

/*
 * FUSE_TMPFILE (O_TMPFILE), which libfuse 3.14 answers ENOSYS: a file with
 * no name, replied as a CREATE (entry, then the open file).
 */
static void serve_tmpfile(struct tierfs *fs, const struct fuse_in_header *in,
			  const struct fuse_create_in *arg, bridge_reply_fn reply, void *ctx)
{
	struct fuse_ctx caller = {
		.uid = in->uid, .gid = in->gid, .pid = (pid_t)in->pid, .umask = arg->umask
	};
	struct fuse_file_info fi = { .flags = (int)arg->flags };
	struct fuse_entry_param e;
	struct fuse_entry_out entry = { 0 };
	struct fuse_open_out opened = { 0 };
	struct fuse_out_header out = { sizeof(out) + sizeof(entry) + sizeof(opened), 0,
				       in->unique };
	/* Header and payload apart: the ring puts them in different buffers. */
	struct iovec iov[3] = { { &out, sizeof(out) },
				{ &entry, sizeof(entry) },
				{ &opened, sizeof(opened) } };
	int err = fs_tmpfile(fs, in->nodeid, arg->mode, &caller, &e, &fi);

	if (err) {
		reply_error(in, err, reply, ctx);
		return;
	}
	entry.nodeid = e.ino;
	entry.generation = e.generation;
	to_valid(e.entry_timeout, &entry.entry_valid, &entry.entry_valid_nsec);
	to_valid(e.attr_timeout, &entry.attr_valid, &entry.attr_valid_nsec);
	to_attr(&entry.attr, &e.attr);
	opened.fh = fi.fh;
	opened.open_flags = (fi.direct_io ? FOPEN_DIRECT_IO : 0) |
			    (fi.keep_cache ? FOPEN_KEEP_CACHE : 0);
	/* Not delivered (interrupted): the kernel never held the file. */
	if (reply(ctx, iov, 3) < 0) {
		fs_put_open(fs, fs_inode_of(fs, e.ino));
		fs_forget(fs, e.ino, 1);
	}
}

bool bridge_serve(struct tierfs *fs, const void *msg, size_t len, bridge_reply_fn reply, void *ctx)
{
	const struct fuse_in_header *in = msg;

	if (len >= sizeof(*in) + sizeof(struct bridge_statx_in) && in->opcode == BRIDGE_OP_STATX) {
		serve_statx(fs, in, reply, ctx);
		return true;
	}
	if (len >= sizeof(*in) + sizeof(struct fuse_create_in) && in->opcode == FUSE_TMPFILE) {
		serve_tmpfile(fs, in, (const void *)(in + 1), reply, ctx);
		return true;
	}
	return false;
}

static ssize_t reply_fd(void *ctx, struct iovec *iov, int count)
{
	return writev(*(int *)ctx, iov, count);
}

ssize_t bridge_read(int fd, void *buf, size_t len, void *userdata)
{
	for (;;) {
		ssize_t n = read(fd, buf, len);

		if (n <= 0)
			return n;
		bridge_note(userdata, buf, (size_t)n);
		if (!bridge_serve(userdata, buf, (size_t)n, reply_fd, &fd))
			return n;
	}
}

static ssize_t bridge_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	bridge_init_reply(userdata, iov, count);
	return writev(fd, iov, count);
}

static const struct fuse_custom_io bridge_io = {
	.read = bridge_read,
	.writev = bridge_writev,
};

int bridge_install(struct fuse_session *se)
{
	return fuse_session_custom_io(se, &bridge_io, fuse_session_fd(se));
}
