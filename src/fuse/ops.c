// SPDX-License-Identifier: MIT
/*
 * The FUSE low-level operations of tierfs, by the files that serve them:
 * fs.c (the session, attributes, xattrs, statfs, ioctl), fs_names.c
 * (names and directories) and fs_io.c (open files and their data).
 */
#include "fs_ops.h"

const struct fuse_lowlevel_ops tierfs_ops = {
	.init = fs_op_init,
	.destroy = fs_op_destroy,
	.lookup = fs_op_lookup,
	.forget = fs_op_forget,
	.forget_multi = fs_op_forget_multi,
	.getattr = fs_op_getattr,
	.setattr = fs_op_setattr,
	.readlink = fs_op_readlink,
	.mknod = fs_op_mknod,
	.mkdir = fs_op_mkdir,
	.unlink = fs_op_unlink,
	.rmdir = fs_op_rmdir,
	.symlink = fs_op_symlink,
	.rename = fs_op_rename,
	.link = fs_op_link,
	.open = fs_op_open,
	.read = fs_op_read,
	.release = fs_op_release,
	.write_buf = fs_op_write_buf,
	.fsync = fs_op_fsync,
	.opendir = fs_op_opendir,
	.releasedir = fs_op_releasedir,
	.readdir = fs_op_readdir,
	.readdirplus = fs_op_readdirplus,
	.fsyncdir = fs_op_fsync,
	.statfs = fs_op_statfs,
	.setxattr = fs_op_setxattr,
	.getxattr = fs_op_getxattr,
	.listxattr = fs_op_listxattr,
	.removexattr = fs_op_removexattr,
	.create = fs_op_create,
	.ioctl = fs_op_ioctl,
	.fallocate = fs_op_fallocate,
	.lseek = fs_op_lseek,
	.copy_file_range = fs_op_copy_file_range,
};
