// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the mount option parser: the input is one -o list,
 * parsed as a mount and as a remount of a mount made with the defaults.
 * Every call must return 0, 1 or -EINVAL with a message, and never crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tierfs/options.h"

#define RAM (24ULL << 30)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *list = malloc(size + 1), *argv[5], set[1024], err[512], dflt[] = "size=1g";
	struct tierfs_options o, cur;
	enum atime_mode atime;
	bool is_nodiratime;
	uint64_t v;
	int ret;

	if (!list)
		return 0;
	memcpy(list, data, size);
	list[size] = '\0';
	argv[0] = "tierfs";
	argv[1] = "-o";
	argv[2] = list;
	argv[3] = "/mnt";
	argv[4] = NULL;
	err[0] = '\0';
	ret = options_parse(4, argv, RAM, &o, err, sizeof(err));
	if (ret != 0 && ret != 1 && !(ret == -EINVAL && err[0]))
		abort();
	options_parse_size(list, RAM, &v);
	argv[2] = dflt;
	if (!options_parse(4, argv, RAM, &cur, err, sizeof(err))) {
		err[0] = '\0';
		ret = options_remount(&cur, list, RAM, set, sizeof(set), &atime, &is_nodiratime,
				      err, sizeof(err));
		if (ret && !err[0])
			abort();
	}
	free(list);
	return 0;
}
