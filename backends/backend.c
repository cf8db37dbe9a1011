// SPDX-License-Identifier: MIT
/*
 * The compiled-in swap backends.  registry.h, made by meson, lists the
 * backends whose files went into the build, and why the others did not.
 */
#include <string.h>

#include "tierfs/backend.h"

#include "registry.h"

extern const struct tier_backend_ops REGISTRY_BACKEND_SYMBOLS;

/* The generated entries end in a comma: formatting would join the lines. */
/* clang-format off */
const struct tier_backend_ops *const backend_table[] = {
	REGISTRY_BACKENDS
	NULL,
};

const char backend_names[] = REGISTRY_BACKEND_NAMES;

const char *const backend_left_out[][2] = {
	REGISTRY_BACKENDS_LEFT_OUT
	{ NULL, NULL },
};
/* clang-format on */

const struct tier_backend_ops *backend_find(const char *name)
{
	for (const struct tier_backend_ops *const *b = backend_table; *b; b++)
		if (!strcmp((*b)->name, name))
			return *b;
	return NULL;
}

const char *backend_why_left_out(const char *spec)
{
	size_t len = strcspn(spec, ":");

	for (size_t i = 0; backend_left_out[i][0]; i++) {
		const char *name = backend_left_out[i][0];

		if (strlen(name) == len && !strncmp(name, spec, len))
			return backend_left_out[i][1];
	}
	return NULL;
}
