// SPDX-License-Identifier: MIT
/* FUSE over io_uring in a build without liburing (ring.h): classic only. */
#include <errno.h>
#include <stdio.h>

#include "ring.h"

int ring_new(struct fuse_session *se, struct tierfs *fs, struct ring **out, char *why,
	     size_t why_len)
{
	(void)se, (void)fs, (void)out;
	snprintf(why, why_len, "tierfs was built without liburing");
	return -EOPNOTSUPP;
}

void ring_destroy(struct ring *r)
{
	(void)r;
}
