/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level operations that serve a tierfs (tierfs.h): the edge,
 * the only code that sees libfuse's types.
 */
#ifndef TIERFS_FS_H
#define TIERFS_FS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "tierfs/tierfs.h"

/* The operations; userdata is the struct tierfs. */
extern const struct fuse_lowlevel_ops tierfs_ops;

#endif
