// SPDX-License-Identifier: MIT
/*
 * The control channel's client side: the mount a path is on, the daemon
 * that serves it, verified before a request is sent, and the exchange.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>

#include <jansson.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/cgroup.h"
#include "tierfs/clock.h"
#include "tierfs/codec.h"
#include "tierfs/ctl.h"
#include "tierfs/drain.h"
#include "tierfs/tierfs.h"
#include "tierfs/log.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"
#include "ctl_priv.h"

/* Whether mountpoint is path or a directory above it. */
static size_t covers(const char *mountpoint, const char *path)
{
	size_t len = strlen(mountpoint);

	if (!strcmp(mountpoint, "/"))
		return 1;
	if (strncmp(mountpoint, path, len) || (path[len] && path[len] != '/'))
		return 0;
	return len + 1;
}

/*
 * One line of /proc/self/mountinfo into where (unescaped) and m; false if
 * it is not one.
 */
static bool parse_mount_line(const char *line, char *where, struct ctl_mount *m)
{
	const char *sep = strstr(line, " - "), *uid;
	char fstype[256];
	unsigned int maj, min;

	if (!sep || sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, where) != 3 ||
	    sscanf(sep, " - %255s", fstype) != 1)
		return false;
	cgroup_mountinfo_unescape(where);
	m->dev = makedev(maj, min);
	m->is_tierfs = !strcmp(fstype, "fuse.tierfs") || !strcmp(fstype, "fuseblk.tierfs");
	uid = strstr(sep, ",user_id=");
	if (!uid)
		uid = strstr(sep, " user_id=");
	m->owner = uid ? (uid_t)strtoul(uid + 9, NULL, 10) : 0;
	return true;
}

/*
 * The mount that holds path, from /proc/self/mountinfo, which only the
 * kernel writes: the longest mount point above it, the last (on top) of
 * equals.  With is_exact, only a mount at path itself.
 */
static int find_mount(const char *path, bool is_exact, struct ctl_mount *m, char *where_out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], where[CTL_PATH_MAX];
	struct ctl_mount this;
	size_t best = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t score;

		if (!parse_mount_line(line, where, &this))
			continue;
		score = is_exact ? (strcmp(where, path) ? 0 : 1) : covers(where, path);
		if (!score || score < best)
			continue;
		best = score;
		*m = this;
		if (where_out)
			strcpy(where_out, where);
	}
	fclose(f);
	return best ? 0 : -ENOENT;
}

int ctl_list_mounts(struct ctl_mount_point **out, unsigned int *nr)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct ctl_mount_point *mps = NULL;
	char line[8192], where[CTL_PATH_MAX];
	unsigned int cap = 0;
	struct ctl_mount m;

	*out = NULL;
	*nr = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned int i;

		if (!parse_mount_line(line, where, &m))
			continue;
		/* A mount over another at one path hides it: only the top one answers. */
		for (i = 0; i < *nr && strcmp(mps[i].path, where); i++)
			;
		if (i == *nr && !m.is_tierfs)
			continue;
		if (i < *nr) {
			memmove(mps + i, mps + i + 1, (*nr - i - 1) * sizeof(*mps));
			(*nr)--;
			if (!m.is_tierfs)
				continue;
		}
		if (*nr == cap) {
			void *grown = realloc(mps, (cap = cap ? cap * 2 : 8) * sizeof(*mps));

			if (!grown) {
				free(mps);
				fclose(f);
				*nr = 0;
				return -ENOMEM;
			}
			mps = grown;
		}
		strcpy(mps[*nr].path, where);
		mps[(*nr)++].mount = m;
	}
	fclose(f);
	*out = mps;
	return 0;
}

/*
 * Without touching path itself where it can: a mount point whose daemon
 * is stopped hangs every stat of it, and tierctl must tell that apart.
 * So the parent is resolved and the name appended; only a path that is no
 * mount point is resolved whole.
 */
static int locate(const char *path, struct ctl_mount *m, char *where)
{
	char copy[PATH_MAX], parent[PATH_MAX], full[PATH_MAX];
	char *slash, *base;
	int len;

	if (strlen(path) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, path);
	for (len = (int)strlen(copy); len > 1 && copy[len - 1] == '/'; len--)
		copy[len - 1] = '\0';
	slash = strrchr(copy, '/');
	base = slash ? slash + 1 : copy;
	if (slash == copy)
		strcpy(parent, "/");
	else if (slash)
		*slash = '\0';
	if (*base && strcmp(base, ".") && strcmp(base, "..") &&
	    realpath(slash == copy ? "/" :
		     slash	   ? copy :
				     ".",
		     parent)) {
		len = snprintf(full, sizeof(full), "%s%s%s", parent, strcmp(parent, "/") ? "/" : "",
			       base);
		if (len < (int)sizeof(full) && !find_mount(full, true, m, where))
			return 0;
	}
	if (!realpath(path, full))
		return -errno;
	return find_mount(full, false, m, where);
}

int ctl_find_mount(const char *path, struct ctl_mount *m)
{
	return locate(path, m, NULL);
}

int ctl_mount_path(const char *path, char out[CTL_PATH_MAX])
{
	struct ctl_mount m;

	return locate(path, &m, out);
}

int ctl_mount_dev(const char *mountpoint, dev_t *dev)
{
	struct ctl_mount m;
	int ret = find_mount(mountpoint, true, &m, NULL);

	if (!ret)
		*dev = m.dev;
	return ret;
}

/* A growing array of abstract names; false when out of memory. */
static bool names_add(char (**names)[108], unsigned int *nr, unsigned int *cap, const char *name,
		      size_t len)
{
	if (len >= sizeof((*names)[0]))
		return true; /* longer than a daemon's: not one */
	if (*nr == *cap) {
		unsigned int grown_cap = *cap ? *cap * 2 : 8;
		void *grown = realloc(*names, grown_cap * sizeof((*names)[0]));

		if (!grown)
			return false;
		*names = grown;
		*cap = grown_cap;
	}
	memcpy((*names)[*nr], name, len);
	(*names)[(*nr)++][len] = '\0';
	return true;
}

/* The value of attribute type in a sock_diag reply, or NULL. */
static const void *diag_attr(const struct nlmsghdr *h, unsigned short type, size_t *len)
{
	const struct unix_diag_msg *msg = NLMSG_DATA(h);
	int left = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*msg));
	const struct rtattr *a = (const struct rtattr *)(msg + 1);

	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type == type) {
			*len = RTA_PAYLOAD(a);
			return RTA_DATA(a);
		}
	}
	return NULL;
}

/*
 * The stream sockets listening under prefix (abstract, without the NUL)
 * that root or owner made, from the kernel's socket diagnostics: the uid
 * is the one the kernel gave the socket when it was made, which no other
 * user can fake, and no connection is made to learn it, so another
 * user's names, however many, cost one line of a dump each.  Returns 0,
 * -ETIMEDOUT past deadline, or -EOPNOTSUPP where the kernel cannot tell
 * (no sock_diag for Unix sockets, or no socket uid in it before 5.3).
 */
static int list_by_diag(const char *prefix, uid_t owner, uint64_t deadline, char (**out)[108],
			unsigned int *nr)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req req;
	} ask = {
		.h = { .nlmsg_len = sizeof(ask),
		       .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		       .nlmsg_seq = 1 },
		.req = { .sdiag_family = AF_UNIX,
			 .udiag_states = 1 << TCP_LISTEN,
			 .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_UID },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK }, from;
	size_t prefix_len = strlen(prefix), buf_size = 64 * 1024;
	char(*names)[108] = NULL;
	unsigned int cap = 0;
	bool is_done = false;
	struct timeval rcv_timeout;
	uint64_t now;
	char *buf;
	int fd, err = 0;

	*nr = 0;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -EOPNOTSUPP;
	buf = malloc(buf_size);
	if (!buf) {
		err = -ENOMEM;
		goto close_fd;
	}
	if (sendto(fd, &ask, sizeof(ask), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		err = -EOPNOTSUPP;
		goto free_buf;
	}
	now = clock_now_ms();
	rcv_timeout.tv_sec = (time_t)((deadline > now ? deadline - now : 1) / 1000);
	rcv_timeout.tv_usec = (suseconds_t)((deadline > now ? deadline - now : 1) % 1000 * 1000);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv_timeout, sizeof(rcv_timeout));
	while (!is_done && !err) {
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(fd, buf, buf_size, 0, (struct sockaddr *)&from, &from_len);
		int recv_errno = n < 0 ? errno : 0, len = (int)n;
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;

		if (recv_errno == EINTR)
			continue;
		if (recv_errno == EAGAIN) {
			err = -ETIMEDOUT;
			break;
		}
		if (n <= 0) {
			err = -EOPNOTSUPP;
			break;
		}
		/* Only the kernel (port 0) speaks for the kernel. */
		if (from_len != sizeof(from) || from.nl_pid != 0)
			continue;
		for (; NLMSG_OK(h, len) && !is_done && !err; h = NLMSG_NEXT(h, len)) {
			const struct unix_diag_msg *msg = NLMSG_DATA(h);
			const char *name;
			const uint32_t *uid;
			size_t name_len, uid_len;

			if (h->nlmsg_type == NLMSG_DONE) {
				is_done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				err = -EOPNOTSUPP; /* unix_diag not there, or refused */
				break;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*msg)) ||
			    msg->udiag_type != SOCK_STREAM)
				continue;
			name = diag_attr(h, UNIX_DIAG_NAME, &name_len);
			/* Abstract: a NUL, then the name, none after. */
			if (!name || name_len < 1 + prefix_len || name[0] ||
			    memcmp(name + 1, prefix, prefix_len))
				continue;
			uid = diag_attr(h, UNIX_DIAG_UID, &uid_len);
			if (!uid || uid_len != sizeof(*uid))
				err = -EOPNOTSUPP;
			else if ((*uid == 0 || *uid == owner) &&
				 !names_add(&names, nr, &cap, name + 1, name_len - 1))
				err = -ENOMEM;
		}
		if (!err && !is_done && clock_now_ms() >= deadline)
			err = -ETIMEDOUT;
	}
free_buf:
	free(buf);
close_fd:
	close(fd);
	if (err) {
		free(names);
		*nr = 0;
		return err;
	}
	*out = names;
	return 0;
}

/*
 * The stream sockets listening under prefix, from /proc/net/unix, which
 * does not say whose they are: where sock_diag cannot tell, every one is
 * a candidate.  Listeners only: a connection waiting in a backlog shows
 * its listener's name again.
 */
static int list_by_proc(const char *prefix, uint64_t deadline, char (**out)[108], unsigned int *nr)
{
	FILE *f = fopen("/proc/net/unix", "re");
	char line[512], (*names)[108] = NULL;
	size_t prefix_len = strlen(prefix);
	unsigned int cap = 0, nr_lines = 0;
	int err = 0;

	*nr = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned int flags, type;
		char *name = strchr(line, '@');

		/* "Num RefCount Protocol Flags Type St Inode Path"; listening: __SO_ACCEPTCON. */
		if (!name || strncmp(name + 1, prefix, prefix_len) ||
		    sscanf(line, "%*s %*x %*x %x %x", &flags, &type) != 2 ||
		    !(flags & (1u << 16)) || type != SOCK_STREAM)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (!names_add(&names, nr, &cap, name + 1, strlen(name + 1))) {
			err = -ENOMEM;
			break;
		}
		if (!(++nr_lines % 1024) && clock_now_ms() >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
	}
	fclose(f);
	if (err) {
		free(names);
		*nr = 0;
		return err;
	}
	*out = names;
	return 0;
}

/*
 * The names under the mount's "tierfs/MAJ:MIN/" that may be its daemon's,
 * into *out: those root or the owner made where the kernel says whose a
 * socket is, or else every one.
 */
static int list_candidates(const struct ctl_mount *m, uint64_t deadline, char (**out)[108],
			   unsigned int *nr)
{
	char prefix[64];
	int err;

	*out = NULL;
	snprintf(prefix, sizeof(prefix), "%s%u:%u/", CTL_NAME_PREFIX, major(m->dev), minor(m->dev));
	err = list_by_diag(prefix, m->owner, deadline, out, nr);
	if (err != -EOPNOTSUPP)
		return err;
	return list_by_proc(prefix, deadline, out, nr);
}

/* Whether process pid holds /dev/fuse open; true where tierctl may not look. */
static bool holds_fuse(pid_t pid)
{
	char dir[64], link[PATH_MAX + 64], target[64];
	struct dirent *d;
	bool is_found = false;
	DIR *fds;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	fds = opendir(dir);
	if (!fds)
		return errno == EACCES || errno == EPERM;
	while (!is_found && (d = readdir(fds))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			is_found = !strcmp(target, "/dev/fuse");
		}
	}
	closedir(fds);
	return is_found;
}

/*
 * Connect to name and check who listens: root or the mount's owner (only
 * they can run the daemon of this mount), the very process the name says,
 * and, where tierctl may look, one that holds /dev/fuse.  Returns the
 * socket, -EAGAIN if the listener's backlog is full (a stopped daemon),
 * or -EPERM for an impostor.
 */
static int connect_verified(const char *name, const struct ctl_mount *m)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	const char *pid_text = strrchr(name, ':');
	long pid;
	int fd, err;

	pid_text = pid_text ? strchr(pid_text, '/') : NULL;
	if (!pid_text)
		return -EPERM;
	pid = strtol(pid_text + 1, NULL, 10);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(sun.sun_path + 1, name, len);
	if (connect(fd, (struct sockaddr *)&sun,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len))) {
		err = -errno;
		goto close_fd;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len)) {
		err = -errno;
		goto close_fd;
	}
	err = -EPERM;
	if ((cred.uid != 0 && cred.uid != m->owner) || cred.pid != pid || !holds_fuse(cred.pid))
		goto close_fd;
	return fd;

close_fd:
	close(fd);
	return err;
}

/* Wait for events on fd until deadline; -ETIMEDOUT past it. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	uint64_t now;
	int n;

	for (;;) {
		now = clock_now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, (int)(deadline - now));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n < 0)
			return -EINTR;
	}
}

/* Send request and its newline on a verified socket. */
static int send_request(int fd, const char *request, uint64_t deadline)
{
	size_t req_len = strlen(request), off = 0;
	ssize_t n;
	int err;

	while (off <= req_len) {
		const char *p = off < req_len ? request + off : "\n";
		size_t todo = off < req_len ? req_len - off : 1;

		n = send(fd, p, todo, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN) {
			err = wait_fd(fd, POLLOUT, deadline);
			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* The raw reply, to the daemon's end of the stream, to buf. */
static int read_reply(int fd, uint64_t deadline, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int err;

	for (;;) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EAGAIN) {
			err = wait_fd(fd, POLLIN, deadline);
			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return errno == ECONNRESET ? 0 : -errno;
		if (!n || (len += (size_t)n) + 1 >= size)
			break;
	}
	buf[len] = '\0';
	ctl_defang(buf);
	return 0;
}

void ctl_defang(char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f)
			*s = '?';
}

/* Drop the status line: "ok", or keep the text after "error: ". */
static int strip_status(char *buf)
{
	size_t len = strlen(buf), skip;

	if (!strncmp(buf, "ok\n", 3)) {
		memmove(buf, buf + 3, len - 2);
		return 0;
	}
	skip = strncmp(buf, "error: ", 7) ? 0 : 7;
	len = strcspn(buf, "\n");
	memmove(buf, buf + skip, len - skip);
	buf[len - skip] = '\0';
	return -EPROTO;
}

/* How long a mount with no daemon name bound yet is looked at again. */
#define CTL_BIND_GRACE_MS 500
/* How often names are listed again while one of them is busy. */
#define CTL_RETRY_MS 20
/*
 * Daemons asked at once.  Only root's and the owner's names are tried, so
 * more than one means a stopped daemon whose mount went away (umount -l)
 * and whose minor the mount now has: it holds a /dev/fuse and its name
 * looks the same, but only the live daemon answers.
 */
#define CTL_ASKED_MAX 8

/* The requests sent so far, one per daemon name. */
struct ctl_asked {
	int fds[CTL_ASKED_MAX];
	char names[CTL_ASKED_MAX][108];
	unsigned int nr;
};

static bool was_asked(const struct ctl_asked *a, const char *name)
{
	for (unsigned int i = 0; i < a->nr; i++)
		if (!strcmp(a->names[i], name))
			return true;
	return false;
}

/*
 * Wait until one asked daemon's reply starts, or until until_ms; its
 * socket, -ETIMEDOUT, or -errno (-EINTR when a signal cuts the wait
 * short).  One that hangs up without a word (a stale daemon killed while
 * asked) is dropped while others are left to answer; the last is returned,
 * and its empty reply says what happened.
 */
static int first_reply(struct ctl_asked *a, uint64_t until_ms)
{
	struct pollfd pfds[CTL_ASKED_MAX];
	uint64_t now;
	int n;

	while ((now = clock_now_ms()) < until_ms) {
		for (unsigned int i = 0; i < a->nr; i++)
			pfds[i] = (struct pollfd){ .fd = a->fds[i], .events = POLLIN };
		n = poll(pfds, a->nr, (int)(until_ms - now));
		if (n < 0)
			return -errno;
		for (unsigned int i = 0; n > 0 && i < a->nr; i++) {
			char c;

			if (!pfds[i].revents)
				continue;
			if (a->nr == 1 || recv(a->fds[i], &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
				return a->fds[i];
			close(a->fds[i]);
			a->fds[i] = a->fds[--a->nr];
			memcpy(a->names[i], a->names[a->nr], sizeof(a->names[i]));
			break;
		}
	}
	return -ETIMEDOUT;
}

int ctl_request_timeout(const char *path, const char *request, int timeout_ms, char *buf,
			size_t size)
{
	uint64_t start = clock_now_ms(),
		 deadline = start + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1);
	char(*names)[108] = NULL;
	struct ctl_asked asked = { .nr = 0 };
	struct ctl_mount m;
	unsigned int nr, nr_seen = 0;
	int err, fd = -ETIMEDOUT;

	buf[0] = '\0';
	err = ctl_find_mount(path, &m);
	if (err)
		return err;
	if (!m.is_tierfs)
		return -ENOTCONN;
	/*
	 * Ask every name that passes, and take the first reply.  A stopped
	 * daemon's backlog fills: try it again until the deadline.  A daemon
	 * binds its name just after the mount appears: until one answers,
	 * look again for a moment.
	 */
	do {
		bool is_busy = false;
		unsigned int i = 0;
		uint64_t until;

		nr_seen = 0;
		free(names);
		err = list_candidates(&m, deadline, &names, &nr);
		if (err && err != -ETIMEDOUT)
			break;
		for (; i < nr && asked.nr < CTL_ASKED_MAX && clock_now_ms() < deadline; i++) {
			int one, sent = 0;

			if (was_asked(&asked, names[i])) {
				nr_seen++;
				continue;
			}
			one = connect_verified(names[i], &m);
			is_busy |= one == -EAGAIN;
			nr_seen += one != -EPERM && one != -ECONNREFUSED;
			if (one >= 0 && (sent = send_request(one, request, deadline))) {
				close(one);
				one = -EIO;
			}
			if (sent == -EINTR) {
				err = sent;
				break;
			}
			if (one >= 0) {
				asked.fds[asked.nr] = one;
				memcpy(asked.names[asked.nr++], names[i], sizeof(names[i]));
			}
		}
		if (err == -EINTR)
			break;
		/* Out of time with names not listed or not tried: one may be the daemon's. */
		nr_seen += err == -ETIMEDOUT || i < nr;
		err = 0;
		until = deadline;
		if (is_busy || clock_now_ms() - start < CTL_BIND_GRACE_MS)
			until = clock_now_ms() + CTL_RETRY_MS;
		else if (!asked.nr)
			break;
		if (!asked.nr) {
			poll(NULL, 0, CTL_RETRY_MS);
			continue;
		}
		fd = first_reply(&asked, until < deadline ? until : deadline);
	} while (fd == -ETIMEDOUT && clock_now_ms() < deadline);
	free(names);
	for (unsigned int i = 0; i < asked.nr; i++)
		if (asked.fds[i] != fd)
			close(asked.fds[i]);
	if (err || (fd < 0 && fd != -ETIMEDOUT))
		return err ? err : fd;
	/* A tierfs mount, but no daemon of its own listens, or it is stuck. */
	if (fd < 0)
		return asked.nr || nr_seen ? -ETIMEDOUT : -ECONNREFUSED;
	err = read_reply(fd, deadline, buf, size);
	close(fd);
	if (err)
		return err == -EINTR ? -EINTR : err;
	return strip_status(buf);
}

int ctl_request(const char *path, const char *request, char *buf, size_t size)
{
	return ctl_request_timeout(path, request, CTL_TIMEOUT_MS, buf, size);
}
