// SPDX-License-Identifier: MIT
/*
 * The compiled-in page compressors, and "name[:level]" parsing.  registry.h,
 * made by meson, lists the codecs whose files went into the build, and why
 * the others did not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tierfs/codec.h"

#include "registry.h"

extern const struct codec REGISTRY_CODEC_SYMBOLS;

/* The generated entries end in a comma: formatting would join the lines. */
/* clang-format off */
const struct codec *const codec_table[] = {
	REGISTRY_CODECS
	NULL,
};

const char codec_names[] = REGISTRY_CODEC_NAMES;

const char *const codec_left_out[][2] = {
	REGISTRY_CODECS_LEFT_OUT
	{ NULL, NULL },
};
/* clang-format on */

int codec_parse(const char *spec, const struct codec **codec, int *level)
{
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);

	for (const struct codec *const *c = codec_table; *c; c++) {
		char *end;
		long v;

		if (strlen((*c)->name) != len || strncmp((*c)->name, spec, len))
			continue;
		*codec = *c;
		*level = (*c)->default_level;
		if (!colon)
			return 0;
		v = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end || v < (*c)->min_level || v > (*c)->max_level)
			return -EINVAL;
		*level = (int)v;
		return 0;
	}
	return -EINVAL;
}

const char *codec_why_left_out(const char *spec)
{
	size_t len = strcspn(spec, ":");

	for (size_t i = 0; codec_left_out[i][0]; i++) {
		const char *name = codec_left_out[i][0];

		if (strlen(name) == len && !strncmp(name, spec, len))
			return codec_left_out[i][1];
	}
	return NULL;
}
