/* SPDX-License-Identifier: MIT */
/*
 * The control channel between tierctl and a running daemon: a Unix socket
 * in the abstract namespace named after the mount's device number, so it is
 * found from the mount point alone and vanishes with the daemon.  One
 * request line per connection, one reply.
 */
#ifndef TIERFS_CTL_H
#define TIERFS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tierfs;
struct ctl_server;

/* Longest request line, and reply, the channel carries. */
#define CTL_REQUEST_MAX 4096
#define CTL_REPLY_MAX (256 * 1024)

/*
 * Serve requests for fs on the socket of device dev, on a thread of its
 * own.  Returns 0 or -errno (-EADDRINUSE if another daemon serves dev).
 */
int ctl_server_start(struct tierfs *fs, dev_t dev, struct ctl_server **out);
void ctl_server_stop(struct ctl_server *srv);

/*
 * Handle one request line from a client running as peer_uid and write a
 * NUL-terminated reply to buf.  The first reply line is "ok" or "error:
 * ...".  Requests: "stats", "stats json", "drain status" (anyone); "set
 * KEY=VALUE...", "remount OPTION,OPTION...", "reclaim SIZE|all", "drain
 * start|stop" (root or the user the daemon runs as, who mounted; never
 * the root directory's uid=).  Returns 0 or -errno (also described in
 * the reply).
 */
int ctl_handle(struct tierfs *fs, const char *request, uid_t peer_uid, char *buf, size_t size);

/*
 * Send request to the daemon serving the filesystem at path; the reply
 * (without the status line) goes to buf.  Returns 0, -ENOTCONN when no
 * tierfs serves path, -EPROTO with the daemon's error text in buf, or
 * another -errno.
 */
int ctl_request(const char *path, const char *request, char *buf, size_t size);

/* The device number of the mount at mountpoint, from /proc/self/mountinfo. */
int ctl_mount_dev(const char *mountpoint, dev_t *dev);

#endif
