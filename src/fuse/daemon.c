// SPDX-License-Identifier: MIT
/*
 * The tierfs daemon's life: parse and check every option, mount, daemonize,
 * serve until unmounted or signalled, and unmount cleanly; or, for -o
 * remount, hand the change to the daemon that serves the mount.  In the
 * core library so that a test build of the daemon can wrap its backend.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>

#include "tierfs/backend.h"
#include "tierfs/budget.h"
#include "tierfs/ctl.h"
#include "tierfs/daemon.h"
#include "tierfs/fs.h"
#include "tierfs/log.h"
#include "tierfs/mpol.h"
#include "bridge.h"
#include "ring.h"

static struct tierfs fs;

/* The kernel's switch for FUSE over io_uring; root may turn it on. */
#define ENABLE_URING_PATH "/sys/module/fuse/parameters/enable_uring"

/* Why the mount serves classic where uring was asked (the stats show it). */
static char transport_why[256];

/* 1 if the kernel's FUSE over io_uring is on, 0 off, -errno if it has none. */
static int uring_enabled(void)
{
	char c = 0;
	FILE *f = fopen(ENABLE_URING_PATH, "re");
	int ret;

	if (!f)
		return -errno;
	ret = fread(&c, 1, 1, f) == 1 ? c == 'Y' || c == '1' : -EIO;
	fclose(f);
	return ret;
}

static int uring_enable(void)
{
	FILE *f = fopen(ENABLE_URING_PATH, "we");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs("Y\n", f) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static void serve_classic(struct tierfs *fs, const char *why)
{
	snprintf(transport_why, sizeof(transport_why), "%s", why);
	atomic_store(&fs->transport.reason, transport_why);
	atomic_store(&fs->transport.mode, "classic");
	log_msg(LOG_WARNING, "transport: classic /dev/fuse, not io_uring: %s", why);
}

/*
 * Before the mount, whose INIT says what the kernel offers: whether to try
 * the ring.  classic and auto: no; uring where the kernel has it, turning
 * the kernel's switch on as root would (it is off by default).
 */
static bool want_ring(struct tierfs *fs)
{
	char why[200];
	int on;

	/*
	 * auto serves /dev/fuse until the ring is measured no slower on every
	 * bench row (bench/resident.sh --transports); uring is asked by name.
	 */
	if (fs->opts.transport != TRANSPORT_URING) {
		atomic_store(&fs->transport.mode, "classic");
		return false;
	}
	on = uring_enabled();
	if (on == 0) {
		int ret = uring_enable();

		if (ret) {
			snprintf(why, sizeof(why), "cannot turn on %s: %s", ENABLE_URING_PATH,
				 strerror(-ret));
			serve_classic(fs, why);
			return false;
		}
		log_msg(LOG_INFO, "transport=uring: turned on %s", ENABLE_URING_PATH);
		on = 1;
	}
	if (on <= 0) {
		serve_classic(fs, on < 0 ? "the kernel has no FUSE over io_uring" :
					   ENABLE_URING_PATH " is off");
		return false;
	}
	return true;
}

/* The ring for se, mounted, its INIT not yet read; NULL: classic. */
static struct ring *start_ring(struct fuse_session *se, struct tierfs *fs)
{
	struct ring *ring = NULL;
	char why[200];

	if (ring_new(se, fs, &ring, why, sizeof(why))) {
		serve_classic(fs, why);
		return NULL;
	}
	return ring;
}

static int serve(struct fuse_session *se, bool single_thread)
{
	struct fuse_loop_config *cfg;
	int ret;

	if (single_thread)
		return fuse_session_loop(se);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	ret = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret;
}

/* Whether the mount of device dev is still at mnt: an unmount that failed. */
/*
 * Into the background as fuse_daemonize() goes, but the caller (mount(8),
 * a script that runs tierctl next) has its exit status only once the
 * daemon serves, its control channel bound: fuse_daemonize() lets the
 * parent go before any thread is started, so a tierctl right after the
 * mount could find no daemon to answer, and a start that failed still
 * exited 0.  stderr stays open for log=stderr.  Returns the pipe to report
 * on with daemon_ready(), -1 in the foreground, or -errno.
 */
static int daemon_detach(bool foreground, bool keep_stderr)
{
	int fds[2], null_fd;
	char status = 1;
	pid_t pid;

	if (foreground)
		return -1;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (pid) {
		close(fds[1]);
		if (read(fds[0], &status, 1) != 1)
			status = 1; /* the daemon died before it was ready */
		_exit(status);
	}
	close(fds[0]);
	setsid();
	if (chdir("/"))
		log_msg(LOG_WARNING, "cannot leave the directory it was started in: %m");
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd >= 0) {
		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		if (!keep_stderr)
			dup2(null_fd, STDERR_FILENO);
		if (null_fd > STDERR_FILENO)
			close(null_fd);
	}
	return fds[1];
}

/* Let the caller of the mount go, with exit status 0 (ready) or 1. */
static void daemon_ready(int *fd, int status)
{
	char c = (char)status;

	if (*fd < 0)
		return;
	if (write(*fd, &c, 1) != 1)
		log_msg(LOG_WARNING, "the mount's caller did not hear it is ready: %m");
	close(*fd);
	*fd = -1;
}

/*
 * Tell systemd (Type=notify) how the daemon is: the datagram protocol of
 * sd_notify(3), spoken directly so that tierfs needs no libsystemd.  A
 * unit without NOTIFY_SOCKET is no concern.
 */
static void notify_systemd(const char *fmt, const char *mnt)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[PATH_MAX + 128];
	size_t len;
	int fd, n;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	len = strlen(path);
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	n = snprintf(msg, sizeof(msg), fmt, mnt);
	n += snprintf(msg + n, sizeof(msg) - (size_t)n, "\nMAINPID=%d", (int)getpid());
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&sa,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		log_msg(LOG_WARNING, "systemd was not told: %m");
	if (fd >= 0)
		close(fd);
}

static bool is_still_mounted(const char *mnt, dev_t dev)
{
	dev_t now;

	return !ctl_mount_dev(mnt, &now) && now == dev;
}

/*
 * mount -o remount: mount(8) runs the helper again, with "remount" and
 * every option (those in force, FUSE's, fstab's, the new ones).  The
 * running daemon checks and applies tierfs's own through the control
 * channel, all or none; the kernel flags (ro, nosuid, ...) are then
 * changed here, as mount(8) would for a filesystem without a helper.
 */
static int remount(int argc, char **argv, const struct tierfs_options *opts)
{
	char mnt[PATH_MAX], request[CTL_REQUEST_MAX], reply[4096];
	unsigned long flags;
	struct statvfs sv;
	bool is_changed;
	int ret;

	if (!realpath(opts->mountpoint, mnt)) {
		fprintf(stderr, "tierfs: remount: '%s': %s\n", opts->mountpoint, strerror(errno));
		return 1;
	}
	memcpy(request, "remount ", 8);
	if (options_join_lists(argc, argv, request + 8, sizeof(request) - 8) ||
	    strchr(request, '\n')) {
		fprintf(stderr,
			"tierfs: remount: the option list is too long or holds a newline\n");
		return 1;
	}
	ret = ctl_request(mnt, request, reply, sizeof(reply));
	if (ret == -ENOTCONN) {
		fprintf(stderr, "tierfs: remount: %s: not a tierfs mount (no daemon answers)\n",
			mnt);
		return 1;
	}
	if (ret == -EPROTO) {
		fprintf(stderr, "tierfs: %s\n",
			reply[0] ? reply : "remount: no reply from the daemon");
		return 1;
	}
	if (ret) {
		fprintf(stderr, "tierfs: remount: %s: %s\n", mnt, strerror(-ret));
		return 1;
	}
	for (char *line = reply, *end; (end = strchr(line, '\n')); line = end + 1)
		if (!strncmp(line, "warning: ", 9))
			fprintf(stderr, "tierfs: %.*s\n", (int)(end - line), line);
	if (!opts->kernel_opts[0])
		return 0;
	if (statvfs(mnt, &sv)) {
		fprintf(stderr, "tierfs: remount: %s: %s\n", mnt, strerror(errno));
		return 1;
	}
	flags = options_remount_flags(opts, sv.f_flag, &is_changed);
	if (is_changed && mount(opts->source, mnt, NULL, MS_REMOUNT | flags, NULL)) {
		fprintf(stderr, "tierfs: remount: the mount flags of %s: %s\n", mnt,
			strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * The mount's atime flags as the daemon keeps them: libfuse 3.14 passes
 * neither relatime, strictatime nor nodiratime to mount(2).  Set before the
 * mount serves (mount_setattr changes the mount alone and asks the
 * filesystem nothing).
 */
static int set_atime_attr(const struct tierfs_options *opts, const char *mnt)
{
	static const uint64_t attr_of[] = {
		[ATIME_RELATIME] = MOUNT_ATTR_RELATIME,
		[ATIME_STRICT] = MOUNT_ATTR_STRICTATIME,
		[ATIME_NONE] = MOUNT_ATTR_NOATIME,
	};
	struct mount_attr attr = {
		.attr_set = attr_of[opts->atime],
		.attr_clr = MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME,
	};
	int err;

	/* What libfuse did is right: leave it (a user's mount may not change it). */
	if (opts->atime != ATIME_STRICT && !opts->is_nodiratime &&
	    (opts->atime == ATIME_NONE) == !!strstr(opts->kernel_opts, "noatime"))
		return 0;
	if (opts->is_nodiratime)
		attr.attr_set |= MOUNT_ATTR_NODIRATIME;
	if (!mount_setattr(AT_FDCWD, mnt, 0, &attr, sizeof(attr)))
		return 0;
	err = errno;
	fprintf(stderr, "tierfs: cannot set the atime flags of %s: %s\n", mnt, strerror(err));
	return -err;
}

/* The mount and what bounds it, for the log. */
static void log_mounted(struct tierfs *fs, const char *mnt)
{
	struct data_space *ds = &fs->data;
	uint64_t nr_free = budget_nr_free_pages(ds, NULL);
	char free_text[32] = "no bound on what", spec[2 * PATH_MAX + 32];

	if (nr_free != UINT64_MAX)
		snprintf(free_text, sizeof(free_text), "%llu MiB",
			 (unsigned long long)(nr_free >> 8));
	log_msg(LOG_INFO,
		"mounted %s: size=%llu MiB nr_inodes=%llu backend=%s, resident budget "
		"%llu MiB, memory limit %llu MiB, %s can be written",
		mnt, (unsigned long long)(fs->opts.size >> 20),
		(unsigned long long)fs->opts.nr_inodes,
		options_backend_spec(&fs->opts, spec, sizeof(spec)),
		(unsigned long long)(atomic_load(&ds->budget.mem_pages) >> 8),
		(unsigned long long)(budget_limit(ds) >> 20), free_text);
}

int daemon_main(int argc, char **argv, int (*after_init)(struct tierfs *fs))
{
	uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	struct tierfs_options opts;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct ctl_server *ctl = NULL;
	struct ring *ring = NULL;
	struct fuse_session *se;
	char mnt[PATH_MAX], kopts[2048], err[PATH_MAX + 256];
	struct stat st;
	bool has_dev = false, is_ring_wanted;
	int ready_fd = -1;
	dev_t dev = 0;
	int ret;

	ret = options_parse(argc, argv, ram, &opts, err, sizeof(err));
	if (ret == 1)
		return 0;
	if (ret < 0) {
		fprintf(stderr, "tierfs: %s%s\n(see tierfs --help)\n",
			opts.is_remount ? "remount: " : "", err);
		return 1;
	}
	/* The daemon gives its own warnings about the values it takes. */
	if (opts.is_remount)
		return remount(argc, argv, &opts);
	for (char *line = err, *end; (end = strchr(line, '\n')); line = end + 1)
		fprintf(stderr, "tierfs: warning: %.*s\n", (int)(end - line), line);
	if (!realpath(opts.mountpoint, mnt) || stat(mnt, &st)) {
		fprintf(stderr, "tierfs: mount point '%s': %s\n", opts.mountpoint, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "tierfs: mount point '%s' is not a directory\n", opts.mountpoint);
		return 1;
	}
	ret = log_prepare(opts.log_target, opts.log_path, opts.foreground, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "tierfs: log=%s: cannot open: %s\n", opts.log_path, strerror(-ret));
		return 1;
	}
	/* Said where syslog was asked for; the log itself says it either way. */
	if (err[0] && opts.log_target == LOG_TARGET_SYSLOG)
		fprintf(stderr, "tierfs: warning: %s\n", err);
	snprintf(kopts, sizeof(kopts), "default_permissions,fsname=%s,subtype=tierfs%s%s",
		 opts.source, opts.kernel_opts[0] ? "," : "", opts.kernel_opts);
	if (fuse_opt_add_arg(&args, argv[0]) || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, kopts) || (opts.debug && fuse_opt_add_arg(&args, "-d"))) {
		fprintf(stderr, "tierfs: out of memory\n");
		return 1;
	}
	/* Before the page pool is made; the threads and the background child inherit it. */
	if (opts.has_mpol && (ret = mpol_apply(&opts.mpol))) {
		fprintf(stderr, "tierfs: mpol=: cannot set the memory policy: %s\n",
			strerror(-ret));
		goto free_args;
	}
	ret = tierfs_init(&fs, &opts, ram, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "tierfs: %s\n", err);
		goto free_args;
	}
	if (tierfs_capacity_short(&fs, err, sizeof(err)))
		fprintf(stderr, "tierfs: warning: %s\n", err);
	if (after_init) {
		ret = after_init(&fs);
		if (ret) {
			fprintf(stderr, "tierfs: cannot set up: %s\n", strerror(-ret));
			goto destroy_fs;
		}
	}
	se = fuse_session_new(&args, &tierfs_ops, sizeof(tierfs_ops), &fs);
	if (!se) {
		ret = -EINVAL;
		goto destroy_fs;
	}
	fs.se = se;
	if (fuse_set_signal_handlers(se)) {
		ret = -EIO;
		goto destroy_session;
	}
	is_ring_wanted = want_ring(&fs);
	if (fuse_session_mount(se, mnt)) {
		ret = -EIO;
		goto remove_handlers;
	}
	ret = set_atime_attr(&opts, mnt);
	if (ret)
		goto unmount;
	ready_fd = daemon_detach(opts.foreground, log_keeps_stderr());
	if (ready_fd < -1) {
		fprintf(stderr, "tierfs: cannot go into the background: %s\n", strerror(-ready_fd));
		ret = ready_fd;
		goto unmount;
	}
	log_open(mnt);
	ret = tierfs_start(&fs);
	if (ret) {
		log_msg(LOG_ERR, "cannot start: %s", strerror(-ret));
		goto unmount;
	}
	has_dev = !ctl_mount_dev(mnt, &dev);
	if (!has_dev || ctl_server_start(&fs, dev, &ctl))
		log_msg(LOG_ERR, "no control channel for %s: tierctl will not reach it", mnt);
	if (has_dev)
		dirty_tune(&fs, dev);
	if (is_ring_wanted)
		ring = start_ring(se, &fs);
	if (!ring && (ret = bridge_install(se))) {
		log_msg(LOG_ERR, "libfuse took no I/O hooks: %s", strerror(-ret));
		if (ctl)
			ctl_server_stop(ctl);
		goto unmount;
	}
	log_mounted(&fs, mnt);
	daemon_ready(&ready_fd, 0);
	notify_systemd("READY=1\nSTATUS=serving %s", mnt);
	ret = serve(se, opts.single_thread);
	notify_systemd("STOPPING=1\nSTATUS=unmounting %s", mnt);
	/*
	 * SIGTERM, SIGINT and SIGHUP end the loop through libfuse's handlers,
	 * which return the signal's number: an unmount asked for, not a failure.
	 */
	if (ret > 0) {
		log_msg(LOG_INFO, "unmounting %s: %s", mnt, strsignal(ret));
		ret = 0;
	}
	if (ctl)
		ctl_server_stop(ctl);
unmount:
	fuse_session_unmount(se);
	ring_destroy(ring);
	if (!ret && has_dev && is_still_mounted(mnt, dev)) {
		log_msg(LOG_ERR, "%s: still mounted after the unmount", mnt);
		ret = -EBUSY;
	}
	log_msg(ret ? LOG_ERR : LOG_INFO, "%s %s", mnt, ret ? "failed" : "unmounted");
	daemon_ready(&ready_fd, 1);
remove_handlers:
	fuse_remove_signal_handlers(se);
destroy_session:
	fuse_session_destroy(se);
destroy_fs:
	tierfs_destroy(&fs);
free_args:
	fuse_opt_free_args(&args);
	return ret ? 1 : 0;
}
