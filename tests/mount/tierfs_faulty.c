// SPDX-License-Identifier: MIT
/*
 * A test build of the daemon whose backend fails on demand, set by
 * TIERFS_FAULT=store|load:N[:sticky] (fail the Nth call, or every call from
 * the Nth on).  Not installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faulty_backend.h"
#include "tierfs/daemon.h"
#include "tierfs/fs.h"

static struct faulty_backend faulty;

static int wrap_backend(struct tierfs *fs)
{
	const char *spec = getenv("TIERFS_FAULT");
	char op[8], mode[8] = "";
	unsigned int nth;

	if (!spec || sscanf(spec, "%7[a-z]:%u:%7s", op, &nth, mode) < 2 || !nth ||
	    (strcmp(op, "store") && strcmp(op, "load")) || (*mode && strcmp(mode, "sticky"))) {
		fprintf(stderr, "tierfs_faulty: want TIERFS_FAULT=store|load:N[:sticky]\n");
		return -EINVAL;
	}
	if (!fs->data.backend)
		return -EINVAL;
	faulty_wrap(&faulty, fs->data.backend, !strcmp(op, "store") ? FAULTY_STORE : FAULTY_LOAD,
		    nth, *mode != '\0');
	fs->data.backend = &faulty.base;
	return 0;
}

int main(int argc, char **argv)
{
	return daemon_main(argc, argv, wrap_backend);
}
