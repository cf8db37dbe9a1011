/* SPDX-License-Identifier: MIT */
/*
 * The kernel's FUSE-over-io_uring interface (protocol 7.42, Linux 6.14),
 * which the 6.1 <linux/fuse.h> of Debian 12 lacks: the layouts the kernel
 * reads and writes, under names of our own so that a newer header cannot
 * clash with them.
 */
#ifndef TIERFS_RING_ABI_H
#define TIERFS_RING_ABI_H

#include <stdint.h>

/* init_in/init_out flags2: the kernel offers, the daemon takes the ring. */
#define RING_INIT_FLAGS2_OVER_IO_URING (1u << 9)

/* The io_uring command opcodes (sqe->cmd_op). */
enum {
	RING_CMD_REGISTER = 1,
	RING_CMD_COMMIT_AND_FETCH = 2,
};

/* Between the kernel and one ring entry, in the header buffer. */
struct ring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;  /* the request's unique, to name in the commit */
	uint32_t payload_sz; /* bytes in the payload buffer, either way */
	uint32_t padding;
	uint64_t reserved;
};

/* The header buffer of a ring entry: 288 bytes. */
struct ring_req_header {
	char in_out[128]; /* fuse_in_header in, fuse_out_header back */
	char op_in[128];  /* the request's first argument (fuse_read_in, ...) */
	struct ring_ent_in_out ent_in_out;
};

/* In the SQE's command area (offset 48, so qid is in the second half). */
struct ring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

_Static_assert(sizeof(struct ring_req_header) == 288, "the kernel's header layout");
_Static_assert(sizeof(struct ring_cmd_req) == 24, "the kernel's command layout");

#endif
