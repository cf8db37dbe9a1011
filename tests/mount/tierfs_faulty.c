// SPDX-License-Identifier: MIT
/*
 * A test build of the daemon whose backend fails on demand, set by
 * TIERFS_FAULT=store|load:N[:persistent] (fail the Nth call with EIO, or
 * every call from the Nth on), or is slow: TIERFS_FAULT=store|load:slow:MS
 * (each call takes MS longer).  On a chain, TIERFS_FAULT_TIER=ram|file puts
 * the fault in that tier instead of in front of the chain.  Not installed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faulty_backend.h"
#include "tierfs/daemon.h"
#include "tierfs/fs.h"

static int wrap_backend(struct tierfs *fs)
{
	const char *spec = getenv("TIERFS_FAULT"), *tier = getenv("TIERFS_FAULT_TIER");
	struct tier_backend **slot = &fs->data.backend, *inner;
	char op[8], mode[16] = "";
	struct faulty_backend *f;
	unsigned int nth = 0, ms = 0;
	int err;

	if (!spec ||
	    (sscanf(spec, "%7[a-z]:slow:%u", op, &ms) != 2 &&
	     (sscanf(spec, "%7[a-z]:%u:%15s", op, &nth, mode) < 2 || !nth ||
	      (*mode && strcmp(mode, "persistent")))) ||
	    (strcmp(op, "store") && strcmp(op, "load"))) {
		fprintf(stderr, "tierfs_faulty: want TIERFS_FAULT=store|load:N[:persistent] or "
				"store|load:slow:MS\n");
		return -EINVAL;
	}
	if (tier) {
		if (!*slot || !(*slot)->ops->get_tiers ||
		    (strcmp(tier, "ram") && strcmp(tier, "file"))) {
			fprintf(stderr,
				"tierfs_faulty: TIERFS_FAULT_TIER=ram|file wants a chain\n");
			return -EINVAL;
		}
		slot = chain_tier(*slot, !strcmp(tier, "file"));
	}
	inner = *slot;
	if (!inner)
		return -EINVAL;
	err = faulty_new(inner, inner->ops->is_sync, &f);
	if (err < 0)
		return err;
	/* Installed first, so that the daemon destroys it, and inner, if arming fails. */
	*slot = faulty_base(f);
	if (!nth) {
		faulty_delay(f, !strcmp(op, "store") ? FAULTY_STORE : FAULTY_LOAD, ms);
		return 0;
	}
	return faulty_fail(f, !strcmp(op, "store") ? FAULTY_STORE : FAULTY_LOAD, nth, -EIO,
			   *mode != '\0');
}

int main(int argc, char **argv)
{
	return daemon_main(argc, argv, wrap_backend);
}
