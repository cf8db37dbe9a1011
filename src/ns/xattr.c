// SPDX-License-Identifier: MIT
/*
 * Per-inode extended attributes (a short list: inodes carry few) and the
 * POSIX ACL rules the kernel leaves to a FUSE filesystem that stores ACLs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "tierfs/xattr.h"

struct xattr {
	struct xattr *next;
	size_t size; /* of value */
	char *name;
	char value[];
};

static struct xattr **find(struct xattr_list *xl, const char *name)
{
	struct xattr **pp;

	for (pp = &xl->head; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name))
			return pp;
	return pp;
}

int xattr_set(struct xattr_list *xl, const char *name, const void *value, size_t size, int flags)
{
	struct xattr **pp = find(xl, name), *old = *pp, *x;
	size_t name_len = strlen(name);
	size_t freed = old ? strlen(old->name) + old->size : 0;

	if (old && (flags & XATTR_CREATE))
		return -EEXIST;
	if (!old && (flags & XATTR_REPLACE))
		return -ENODATA;
	if (xl->nr_bytes - freed + name_len + size > XATTR_SPACE_MAX)
		return -ENOSPC;
	x = malloc(sizeof(*x) + size + name_len + 1);
	if (!x)
		return -ENOMEM;
	x->size = size;
	memcpy(x->value, value, size);
	x->name = x->value + size;
	memcpy(x->name, name, name_len + 1);
	x->next = old ? old->next : NULL;
	*pp = x;
	free(old);
	xl->nr_bytes = xl->nr_bytes - freed + name_len + size;
	return 0;
}

const void *xattr_peek(const struct xattr_list *xl, const char *name, size_t *size)
{
	struct xattr *x = *find((struct xattr_list *)xl, name);

	if (!x)
		return NULL;
	*size = x->size;
	return x->value;
}

ssize_t xattr_get(const struct xattr_list *xl, const char *name, void *buf, size_t size)
{
	size_t len;
	const void *v = xattr_peek(xl, name, &len);

	if (!v)
		return -ENODATA;
	if (size) {
		if (size < len)
			return -ERANGE;
		memcpy(buf, v, len);
	}
	return (ssize_t)len;
}

int xattr_remove(struct xattr_list *xl, const char *name)
{
	struct xattr **pp = find(xl, name), *x = *pp;

	if (!x)
		return -ENODATA;
	*pp = x->next;
	xl->nr_bytes -= strlen(x->name) + x->size;
	free(x);
	return 0;
}

ssize_t xattr_list_names(const struct xattr_list *xl, bool has_trusted, char *buf, size_t size)
{
	size_t len = 0;

	for (struct xattr *x = xl->head; x; x = x->next) {
		size_t n = strlen(x->name) + 1;

		if (!has_trusted && !strncmp(x->name, "trusted.", 8))
			continue;

		if (size) {
			if (len + n > size)
				return -ERANGE;
			memcpy(buf + len, x->name, n);
		}
		len += n;
	}
	return (ssize_t)len;
}

size_t xattr_space(const char *name, size_t size)
{
	/* glibc's chunk: the request and a size word, in 16-byte steps. */
	return (sizeof(struct xattr) + strlen(name) + 1 + size + 8 + 15) & ~(size_t)15;
}

size_t xattr_clear(struct xattr_list *xl)
{
	size_t space = 0;

	while (xl->head) {
		struct xattr *x = xl->head;

		xl->head = x->next;
		space += xattr_space(x->name, x->size);
		free(x);
	}
	xl->nr_bytes = 0;
	return space;
}

/* The kernel's xattr form of an ACL: a version word, then entries. */
#define ACL_XATTR_VERSION 2
enum {
	ACL_USER_OBJ = 1,
	ACL_USER = 2,
	ACL_GROUP_OBJ = 4,
	ACL_GROUP = 8,
	ACL_MASK = 16,
	ACL_OTHER = 32
};

struct acl_entry {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

static size_t acl_count(size_t size)
{
	return (size - sizeof(uint32_t)) / sizeof(struct acl_entry);
}

static struct acl_entry *acl_entries(const void *value)
{
	return (struct acl_entry *)((char *)value + sizeof(uint32_t));
}

/*
 * The kernel's rules (posix_acl_valid): entries sorted by tag, one each of
 * user_obj, group_obj and other, named users and groups in increasing id
 * order, and a mask whenever there are named entries.
 */
int acl_valid(const void *value, size_t size)
{
	enum { NEED_USER_OBJ, IN_USERS, IN_GROUPS, NEED_OTHER, DONE } state = NEED_USER_OBJ;
	bool needs_mask = false, has_prev = false;
	uint32_t version, prev_id = 0;
	struct acl_entry e;

	if (size < sizeof(uint32_t) || (size - sizeof(uint32_t)) % sizeof(e))
		return -EINVAL;
	memcpy(&version, value, sizeof(version));
	if (version != ACL_XATTR_VERSION)
		return -EINVAL;
	if (!acl_count(size))
		return 0; /* no ACL at all */
	for (size_t i = 0; i < acl_count(size); i++) {
		memcpy(&e, (const char *)value + sizeof(uint32_t) + i * sizeof(e), sizeof(e));
		if (e.perm & ~7u)
			return -EINVAL;
		switch (e.tag) {
		case ACL_USER_OBJ:
			if (state != NEED_USER_OBJ)
				return -EINVAL;
			state = IN_USERS;
			break;
		case ACL_USER:
		case ACL_GROUP:
			if (state != (e.tag == ACL_USER ? IN_USERS : IN_GROUPS) ||
			    (has_prev && e.id <= prev_id))
				return -EINVAL;
			prev_id = e.id;
			has_prev = true;
			needs_mask = true;
			break;
		case ACL_GROUP_OBJ:
			if (state != IN_USERS)
				return -EINVAL;
			state = IN_GROUPS;
			has_prev = false;
			break;
		case ACL_MASK:
			if (state != IN_GROUPS)
				return -EINVAL;
			state = NEED_OTHER;
			break;
		case ACL_OTHER:
			if (state != NEED_OTHER && (state != IN_GROUPS || needs_mask))
				return -EINVAL;
			state = DONE;
			break;
		default:
			return -EINVAL;
		}
	}
	return state == DONE ? 0 : -EINVAL;
}

mode_t acl_apply_to_mode(const void *value, size_t size, mode_t mode, bool *is_equiv)
{
	const struct acl_entry *e = acl_entries(value);
	mode_t bits = mode & 0777;

	*is_equiv = true;
	for (size_t i = 0; i < acl_count(size); i++) {
		switch (e[i].tag) {
		case ACL_USER_OBJ:
			bits = (bits & ~(mode_t)S_IRWXU) | (mode_t)(e[i].perm & 7) << 6;
			break;
		case ACL_GROUP_OBJ:
			if (*is_equiv)
				bits = (bits & ~(mode_t)S_IRWXG) | (mode_t)(e[i].perm & 7) << 3;
			break;
		case ACL_MASK:
			/* The mask, not group_obj, is what the group bits show. */
			bits = (bits & ~(mode_t)S_IRWXG) | (mode_t)(e[i].perm & 7) << 3;
			*is_equiv = false;
			break;
		case ACL_OTHER:
			bits = (bits & ~(mode_t)S_IRWXO) | (mode_t)(e[i].perm & 7);
			break;
		default:
			*is_equiv = false;
			break;
		}
	}
	return (mode & ~(mode_t)0777) | bits;
}

void acl_chmod(void *value, size_t size, mode_t mode)
{
	struct acl_entry *e = acl_entries(value), *group_obj = NULL, *mask = NULL;

	for (size_t i = 0; i < acl_count(size); i++) {
		switch (e[i].tag) {
		case ACL_USER_OBJ:
			e[i].perm = (mode >> 6) & 7;
			break;
		case ACL_GROUP_OBJ:
			group_obj = &e[i];
			break;
		case ACL_MASK:
			mask = &e[i];
			break;
		case ACL_OTHER:
			e[i].perm = mode & 7;
			break;
		}
	}
	if (mask)
		mask->perm = (mode >> 3) & 7;
	else if (group_obj)
		group_obj->perm = (mode >> 3) & 7;
}

bool acl_inherit(const void *dacl, size_t dacl_size, mode_t *mode_p, void *acl)
{
	struct acl_entry *e = acl_entries(acl), *group_obj = NULL, *mask = NULL;
	mode_t mode = *mode_p;
	bool is_equiv = true;

	memcpy(acl, dacl, dacl_size);
	for (size_t i = 0; i < acl_count(dacl_size); i++) {
		switch (e[i].tag) {
		case ACL_USER_OBJ:
			e[i].perm &= (mode >> 6) & 7;
			mode &= ((mode_t)e[i].perm << 6) | ~(mode_t)S_IRWXU;
			break;
		case ACL_USER:
		case ACL_GROUP:
			is_equiv = false;
			break;
		case ACL_GROUP_OBJ:
			group_obj = &e[i];
			break;
		case ACL_OTHER:
			e[i].perm &= mode & 7;
			mode &= (mode_t)e[i].perm | ~(mode_t)S_IRWXO;
			break;
		case ACL_MASK:
			mask = &e[i];
			is_equiv = false;
			break;
		}
	}
	if (!mask)
		mask = group_obj;
	if (mask) {
		mask->perm &= (mode >> 3) & 7;
		mode &= ((mode_t)mask->perm << 3) | ~(mode_t)S_IRWXG;
	}
	*mode_p = mode;
	return !is_equiv;
}
