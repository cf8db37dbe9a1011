/* SPDX-License-Identifier: MIT */
/*
 * The control channel between tierctl and a running daemon: a Unix socket
 * in the abstract namespace, "tierfs/MAJ:MIN/PID/TOKEN", found from the
 * mount point through the mount's device number and gone with the daemon.
 * Anyone may bind any abstract name, so the client trusts no name: it
 * tries only the listeners the kernel (sock_diag) says root or the
 * mount's user_id= (from mountinfo) made, so that others' names cost it
 * nothing, and takes only one that is root or that user, is the process
 * the name gives, and holds /dev/fuse.  One request line per connection,
 * one reply.
 */
#ifndef TIERFS_CTL_H
#define TIERFS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tierfs;
struct ctl_server;

/* Longest request line, and reply, the channel carries. */
#define CTL_REQUEST_MAX 4096
#define CTL_REPLY_MAX (256 * 1024)

/* Inode numbers in one "files" request: 20 digits and a space each fit. */
#define CTL_FILES_MAX 180

#define CTL_NAME_PREFIX "tierfs/"
/* A client has this long to send its line, and again to read the reply. */
#define CTL_IO_TIMEOUT_MS 2000
/*
 * Connections open at once; of one uid other than root and the owner's;
 * and kept for root and the owner, whatever the others hold.
 */
#define CTL_CONN_MAX 256
#define CTL_CONN_PER_UID 16
#define CTL_CONN_RESERVED 16
/* Changes waiting for the one thread that applies them. */
#define CTL_QUEUE_MAX 16
/* How long ctl_request() waits for the whole exchange. */
#define CTL_TIMEOUT_MS 5000

/*
 * Serve requests for fs, the filesystem of device dev, on two threads of
 * its own: one polls every connection and answers reads, one applies
 * changes in turn.  A client gets CTL_IO_TIMEOUT_MS to send its line and
 * the same to take the reply; connections past CTL_CONN_MAX, or, for a
 * uid other than root and the daemon's, past CTL_CONN_PER_UID of that uid
 * or past all but CTL_CONN_RESERVED in all, are closed at once.  Only
 * root's and the daemon's changes wait for the worker; the others' are
 * refused at once.  Returns 0 or -errno.
 */
int ctl_server_start(struct tierfs *fs, dev_t dev, struct ctl_server **out);

/* The abstract name srv listens at, without the leading NUL; srv owns it. */
const char *ctl_server_name(const struct ctl_server *srv);

/*
 * Close every connection and remove the name at once, whatever clients
 * do; waits only for a change being applied to finish.
 */
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
 * Send request to the daemon serving the filesystem that holds path and
 * wait up to timeout_ms for the whole exchange; the reply (without the
 * status line) goes to buf.  Returns 0; -ENOTCONN when path is on no
 * tierfs mount; -ECONNREFUSED when it is, but no daemon of that mount
 * listens (killed, or every listener an impostor); -ETIMEDOUT when its
 * daemon did not answer in time (stopped, or stuck), or, where the
 * kernel cannot say whose a socket is, others' names were too many to
 * try in time;
 * -EPROTO with the daemon's error text in buf; -EINTR if a signal cut
 * the wait short; or another -errno (-ENOENT: no such path).
 */
int ctl_request_timeout(const char *path, const char *request, int timeout_ms, char *buf,
			size_t size);

/* ctl_request_timeout() with CTL_TIMEOUT_MS. */
int ctl_request(const char *path, const char *request, char *buf, size_t size);

/* A mount as mountinfo tells it. */
struct ctl_mount {
	dev_t dev;
	uid_t owner;	/* user_id=: who mounted, whom the daemon runs as */
	bool is_tierfs; /* type fuse.tierfs */
};

/*
 * The mount that holds path, from /proc/self/mountinfo, without a stat of
 * path when path is a mount point (a stopped daemon would hang it).
 * Returns 0 or -errno (-ENOENT: no such path).
 */
int ctl_find_mount(const char *path, struct ctl_mount *m);

/* A mount point as mountinfo gives it (%4095s), unescaped. */
#define CTL_PATH_MAX 4096

/* The mount point of the mount that holds path, as ctl_find_mount() finds it. */
int ctl_mount_path(const char *path, char out[CTL_PATH_MAX]);

/* A tierfs mount of the machine, as ctl_list_mounts() finds it. */
struct ctl_mount_point {
	char path[CTL_PATH_MAX];
	struct ctl_mount mount;
};

/*
 * Every tierfs mount in /proc/self/mountinfo, in its order, into *out (to
 * free()); a mount hidden under another at the same path is left out.
 * Returns 0 or -errno.
 */
int ctl_list_mounts(struct ctl_mount_point **out, unsigned int *nr);

/*
 * bytes as the stats print them: "512 B", "1.5 KiB" ... "2.0 PiB".
 */
void ctl_format_bytes(uint64_t bytes, char *out, size_t size);

/*
 * s into out with control bytes and backslashes (and spaces, with
 * is_space_too, as mountinfo has them) as \ooo, so that no name can make
 * a line, or a column, of its own in text output.  Returns out.
 */
const char *ctl_escape(const char *s, bool is_space_too, char *out, size_t size);

/*
 * Replace in s, in place, every control byte but newline and tab (and
 * DEL) with '?': a daemon's reply is printed to a terminal, and another
 * user's daemon (a fake fuse.tierfs mount) must not drive it with escapes.
 * The requests do it to every reply.
 */
void ctl_defang(char *s);

/* The device number of the mount at mountpoint, from /proc/self/mountinfo. */
int ctl_mount_dev(const char *mountpoint, dev_t *dev);

#endif
