// SPDX-License-Identifier: MIT
/*
 * The compiled-in swap backends.
 */
#include <string.h>

#include "tierfs/backend.h"

extern const struct tier_backend_ops tier_backend_zpool, tier_backend_ramdisk, tier_backend_file;

const struct tier_backend_ops *const backend_table[] = {
	&tier_backend_zpool,
	&tier_backend_ramdisk,
	&tier_backend_file,
	NULL,
};

const struct tier_backend_ops *backend_find(const char *name)
{
	for (const struct tier_backend_ops *const *b = backend_table; *b; b++)
		if (!strcmp((*b)->name, name))
			return *b;
	return NULL;
}
