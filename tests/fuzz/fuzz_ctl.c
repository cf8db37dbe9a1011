// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the control channel's request handler: the first
 * byte picks the peer (root or another user), the rest is one request line
 * to a mount set up once, with a file in it.  Every reply must start with
 * "ok" or "error: " and be a string within the buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tierfs/ctl.h"
#include "tierfs/data.h"
#include "tierfs/tierfs.h"

#define RAM (1ULL << 30)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tierfs *mount_once(void)
{
	static struct tierfs fs;
	static bool is_ready;
	char *argv[] = { "tierfs", "-o", "size=4m,nr_inodes=100,mem=1m", "/mnt", NULL };
	struct tierfs_options opts;
	struct inode *file;
	char err[512];
	static char data[3 * 4096];

	if (is_ready)
		return &fs;
	if (options_parse(4, argv, RAM, &opts, err, sizeof(err)) ||
	    tierfs_init(&fs, &opts, RAM, err, sizeof(err)) ||
	    ns_inode_new(&fs.ns, S_IFREG | 0644, 0, 0, 0, &file))
		abort();
	memset(data, 'd', sizeof(data));
	pthread_rwlock_wrlock(&file->lock);
	if (data_write_mem(&fs.data, file, data, sizeof(data), 0) != sizeof(data))
		abort();
	pthread_rwlock_unlock(&file->lock);
	is_ready = true;
	return &fs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tierfs *fs = mount_once();
	static char reply[CTL_REPLY_MAX];
	char request[CTL_REQUEST_MAX];
	uid_t peer;

	if (!size)
		return 0;
	peer = data[0] & 1 ? 0 : 1000;
	size--;
	if (size >= sizeof(request))
		size = sizeof(request) - 1;
	memcpy(request, data + 1, size);
	request[size] = '\0';
	memset(reply, 0, sizeof(reply));
	ctl_handle(fs, request, peer, reply, sizeof(reply));
	if (strncmp(reply, "ok", 2) && strncmp(reply, "error: ", 7))
		abort();
	if (reply[sizeof(reply) - 1])
		abort();
	return 0;
}
