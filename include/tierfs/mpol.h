/* SPDX-License-Identifier: MIT */
/*
 * tmpfs's mpol=: the NUMA policy of the memory that holds file data, here
 * the daemon's whole memory, set before its page pool is made.
 */
#ifndef TIERFS_MPOL_H
#define TIERFS_MPOL_H

#include <stddef.h>
#include <stdint.h>

#define MPOL_MAX_NODES 1024

struct mpol {
	int mode; /* MPOL_DEFAULT, _PREFERRED, _BIND, _INTERLEAVE, _LOCAL, with MPOL_F_* */
	uint64_t nodes[MPOL_MAX_NODES / 64];
};

/*
 * Parse mpol='s value as tmpfs takes it: default, local, prefer[:NODE] (no
 * node: local),
 * bind:NODELIST, interleave[:NODELIST], each of the last three with
 * =static or =relative after its name (NODELIST as 0-3:5 or 0-3,5; every
 * node online by default for interleave), each node one that is online
 * (online: the contents of /sys/devices/system/node/online, NULL for the
 * machine's).  Returns 0, or -EINVAL with a reason naming the value in msg.
 */
int mpol_parse(const char *val, const char *online, struct mpol *out, char *msg, size_t msg_len);

/* Make p the policy of the calling thread and of those it starts: 0 or -errno. */
int mpol_apply(const struct mpol *p);

#endif
