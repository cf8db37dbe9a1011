// SPDX-License-Identifier: MIT
/*
 * The compiled-in page compressors, and "name[:level]" parsing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tierfs/codec.h"

extern const struct codec codec_lz4, codec_zstd;

const struct codec *const codec_table[] = {
	&codec_lz4,
	&codec_zstd,
	NULL,
};

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
