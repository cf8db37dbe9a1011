/* SPDX-License-Identifier: MIT */
/*
 * Extended attributes of one inode, with tmpfs's limits, and the POSIX ACL
 * arithmetic that a filesystem owning system.posix_acl_* must do itself:
 * inheritance of default ACLs on create and keeping the mode in step.
 */
#ifndef TIERFS_XATTR_H
#define TIERFS_XATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define XATTR_ACCESS_ACL "system.posix_acl_access"
#define XATTR_DEFAULT_ACL "system.posix_acl_default"

/* Bytes of names and values one inode may hold, like tmpfs's per-inode space. */
#define XATTR_SPACE_MAX (128 * 1024)

struct xattr;

/* Zero-initialise for an empty list.  The owning inode's lock protects it. */
struct xattr_list {
	struct xattr *head;
	size_t nr_bytes; /* names + values, against XATTR_SPACE_MAX */
};

/*
 * Set name to value.  flags: 0, XATTR_CREATE (-EEXIST if present) or
 * XATTR_REPLACE (-ENODATA if absent).  Returns 0, -ENOSPC past the space
 * limit, or -ENOMEM.  The list copies name and value.
 */
int xattr_set(struct xattr_list *xl, const char *name, const void *value, size_t size, int flags);

/*
 * Copy the value into buf of size bytes, or with size 0 only measure.
 * Returns the value's size, -ENODATA or -ERANGE.
 */
ssize_t xattr_get(const struct xattr_list *xl, const char *name, void *buf, size_t size);

/* Borrow the value (valid until the list changes), or NULL. */
const void *xattr_peek(const struct xattr_list *xl, const char *name, size_t *size);

/* Returns 0 or -ENODATA. */
int xattr_remove(struct xattr_list *xl, const char *name);

/*
 * NUL-separated names, like listxattr(2); trusted.* only for callers
 * has_trusted (CAP_SYS_ADMIN).  Returns the length, or -ERANGE.
 */
ssize_t xattr_list_names(const struct xattr_list *xl, bool has_trusted, char *buf, size_t size);

/*
 * What an xattr of name and size bytes costs the daemon: its allocation,
 * as malloc rounds it.  The namespace charges this to its inode space and
 * to the memory budget (ns_xattr_set), as tmpfs charges simple_xattr_space.
 */
size_t xattr_space(const char *name, size_t size);

/* Free every xattr; returns the xattr_space() they had. */
size_t xattr_clear(struct xattr_list *xl);

/*
 * Check a POSIX ACL in the kernel's xattr form as the kernel does; a header
 * with no entries (no ACL) is valid.  Returns 0 or -EINVAL.
 */
int acl_valid(const void *value, size_t size);

/*
 * The mode bits an access ACL implies (user_obj, mask or group_obj, other)
 * merged into mode.  Sets *is_equiv when the ACL says no more than the mode
 * does (then the xattr need not be kept).
 */
mode_t acl_apply_to_mode(const void *value, size_t size, mode_t mode, bool *is_equiv);

/* Rewrite an access ACL's user_obj, mask (or group_obj) and other for a chmod. */
void acl_chmod(void *value, size_t size, mode_t mode);

/*
 * Creating an inode with mode under a directory whose default ACL is dacl:
 * narrows *mode as posix_acl_create does and fills acl (a copy of dacl of
 * dacl_size bytes, edited) with the new inode's access ACL.  Returns true
 * when the access ACL must be stored (it says more than the mode).
 */
bool acl_inherit(const void *dacl, size_t dacl_size, mode_t *mode, void *acl);

#endif
