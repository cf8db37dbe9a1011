// SPDX-License-Identifier: MIT
/*
 * The control channel's server: the abstract socket a mount answers on,
 * one polling thread for every client and one worker for changes.
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

static struct log_ratelimit conn_log;

/*
 * The server: one thread polls every connection, so a client that sends
 * slowly or not at all holds nothing but its own slot, and stop is one
 * wake-up away.  Reads (stats, drain status) are answered on that thread;
 * changes go one at a time to a worker, so a long reclaim delays neither
 * the reads nor the loop, and two sets never interleave.
 *
 * Locking: lock protects queue, nr_queued and is_stopping.  A connection
 * whose state is CONN_QUEUED belongs to the worker until it stores
 * CONN_WRITING; every other state belongs to the loop.  Nothing is done
 * under lock but moving pointers.
 */
enum conn_state { CONN_READING, CONN_QUEUED, CONN_WRITING };

struct ctl_conn {
	int fd;
	uid_t uid;	      /* SO_PEERCRED of the client */
	atomic_int state;     /* enum conn_state */
	uint64_t deadline_ms; /* to send the line, then to read the reply */
	size_t len;	      /* of req */
	char req[CTL_REQUEST_MAX + 1];
	char *reply; /* CTL_REPLY_MAX, NUL-terminated */
	size_t reply_len, reply_off;
};

struct ctl_server {
	struct tierfs *fs;
	int listen_fd;
	int wake_fd; /* eventfd: stop, or the worker is done */
	pthread_t loop, worker;
	atomic_bool stop;
	struct ctl_conn *conns[CTL_CONN_MAX]; /* the loop's alone */
	unsigned int nr_conns;
	pthread_mutex_t lock;
	pthread_cond_t queued; /* signalled with lock held */
	struct ctl_conn *queue[CTL_QUEUE_MAX];
	unsigned int nr_queued;
	bool is_stopping;
	struct ctl_counters counters;
	char name[108]; /* the abstract name, without its NUL */
};

static void wake(int fd)
{
	uint64_t one = 1;

	/* A full counter is a wake-up already pending. */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

static void conn_free(struct ctl_conn *c)
{
	close(c->fd);
	free(c->reply);
	free(c);
}

/* Whose connections count against CTL_CONN_PER_UID: all but the trusted. */
static bool is_capped(uid_t uid)
{
	return uid != 0 && uid != geteuid();
}

/* The reply is ready: the loop sends it, with a fresh deadline. */
static void conn_reply_ready(struct ctl_conn *c)
{
	c->reply_len = strlen(c->reply);
	c->reply_off = 0;
	c->deadline_ms = clock_now_ms() + CTL_IO_TIMEOUT_MS;
	atomic_store(&c->state, CONN_WRITING);
}

static bool is_read_request(const char *req)
{
	return !strcmp(req, "stats") || !strcmp(req, "stats json") || !strcmp(req, "drain status");
}

/* A whole line (or its absence) is in: answer it here or hand it on. */
static void conn_dispatch(struct ctl_server *srv, struct ctl_conn *c, bool is_eof)
{
	char *newline = memchr(c->req, '\n', c->len);
	bool is_queued = false;

	c->reply = malloc(CTL_REPLY_MAX);
	if (!c->reply) {
		c->reply = strdup("error: out of memory\n");
		if (!c->reply) {
			c->len = 0;
			return; /* the deadline closes it */
		}
		goto ready;
	}
	if (!newline || memchr(c->req, '\0', (size_t)(newline - c->req))) {
		atomic_fetch_add(&srv->counters.nr_malformed, 1);
		snprintf(c->reply, CTL_REPLY_MAX, "error: %s\n",
			 newline ? "request holds a NUL byte" :
			 is_eof	 ? "request incomplete (no newline)" :
				   "request too long");
		goto ready;
	}
	*newline = '\0';
	/*
	 * Others may change nothing: answered here (refused, or a read),
	 * they never take a place in the queue that root's set needs.
	 */
	if (is_read_request(c->req) || is_capped(c->uid)) {
		ctl_handle_counted(srv->fs, &srv->counters, c->req, c->uid, c->reply,
				   CTL_REPLY_MAX);
		goto ready;
	}
	pthread_mutex_lock(&srv->lock);
	if (srv->nr_queued < CTL_QUEUE_MAX) {
		atomic_store(&c->state, CONN_QUEUED);
		srv->queue[srv->nr_queued++] = c;
		pthread_cond_signal(&srv->queued);
		is_queued = true;
	}
	pthread_mutex_unlock(&srv->lock);
	if (is_queued)
		return;
	atomic_fetch_add(&srv->counters.nr_queue_full, 1);
	snprintf(c->reply, CTL_REPLY_MAX, "error: busy: %d changes waiting already\n",
		 CTL_QUEUE_MAX);
ready:
	conn_reply_ready(c);
}

/* Returns false when the connection is done with. */
static bool conn_read(struct ctl_server *srv, struct ctl_conn *c)
{
	ssize_t n = read(c->fd, c->req + c->len, CTL_REQUEST_MAX - c->len);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->len += (size_t)n;
	if (n && c->len < CTL_REQUEST_MAX && !memchr(c->req + c->len - (size_t)n, '\n', (size_t)n))
		return true;
	c->req[c->len] = '\0';
	if (!n && !c->len)
		return false; /* connected and went: nothing to answer */
	conn_dispatch(srv, c, !n);
	return c->reply != NULL;
}

static bool conn_write(struct ctl_conn *c)
{
	ssize_t n = send(c->fd, c->reply + c->reply_off, c->reply_len - c->reply_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->reply_off += (size_t)n;
	return c->reply_off < c->reply_len;
}

static void accept_all(struct ctl_server *srv, uint64_t *paused_until)
{
	for (;;) {
		struct ucred cred;
		socklen_t cred_len = sizeof(cred);
		struct ctl_conn *c;
		unsigned int nr_same = 0, nr_capped = 0;
		bool is_full;
		int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			/* Out of descriptors: leave the backlog be for a while, or spin. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
				*paused_until = clock_now_ms() + 100;
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len))
			cred.uid = (uid_t)-1; /* unknown: may read, not change */
		for (unsigned int i = 0; i < srv->nr_conns; i++) {
			nr_same += srv->conns[i]->uid == cred.uid;
			nr_capped += is_capped(srv->conns[i]->uid);
		}
		/* Many uids (one user's subuids) fill all but the reserved slots at most. */
		is_full = srv->nr_conns == CTL_CONN_MAX ||
			  (is_capped(cred.uid) && nr_capped >= CTL_CONN_MAX - CTL_CONN_RESERVED);
		if (is_full || (is_capped(cred.uid) && nr_same >= CTL_CONN_PER_UID)) {
			atomic_fetch_add(is_full ? &srv->counters.nr_refused_total :
						   &srv->counters.nr_refused_uid,
					 1);
			log_limited(&conn_log, LOG_NOTICE,
				    "control: connection of uid %u refused: %s",
				    (unsigned int)cred.uid,
				    is_full ? "too many in all" : "too many of that uid");
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = cred.uid;
		c->deadline_ms = clock_now_ms() + CTL_IO_TIMEOUT_MS;
		atomic_store(&c->state, CONN_READING);
		srv->conns[srv->nr_conns++] = c;
		atomic_fetch_add(&srv->counters.nr_connections, 1);
	}
}

static void *serve_loop(void *arg)
{
	struct ctl_server *srv = arg;
	struct pollfd pfd[CTL_CONN_MAX + 2];
	struct ctl_conn *polled[CTL_CONN_MAX];
	uint64_t paused_until = 0;

	while (!atomic_load(&srv->stop)) {
		uint64_t now = clock_now_ms(), next = now + 60 * 1000;
		unsigned int nr = 0, nr_fds;

		/* Past their deadline go; the rest are polled. */
		for (unsigned int i = 0; i < srv->nr_conns;) {
			struct ctl_conn *c = srv->conns[i];
			int state = atomic_load(&c->state);

			if (state != CONN_QUEUED && now >= c->deadline_ms) {
				atomic_fetch_add(&srv->counters.nr_timed_out, 1);
				conn_free(c);
				srv->conns[i] = srv->conns[--srv->nr_conns];
				continue;
			}
			if (state != CONN_QUEUED) {
				if (c->deadline_ms < next)
					next = c->deadline_ms;
				pfd[2 + nr] = (struct pollfd){
					.fd = c->fd,
					.events = state == CONN_READING ? POLLIN : POLLOUT,
				};
				polled[nr++] = c;
			}
			i++;
		}
		pfd[0] = (struct pollfd){ .fd = srv->wake_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = now >= paused_until ? srv->listen_fd : -1,
					  .events = POLLIN };
		if (now < paused_until && paused_until < next)
			next = paused_until;
		nr_fds = 2 + nr;
		if (poll(pfd, nr_fds, (int)(next - now)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents) {
			uint64_t v;

			if (read(srv->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		}
		for (unsigned int i = 0; i < nr; i++) {
			struct ctl_conn *c = polled[i];
			bool is_live = true;

			if (!pfd[2 + i].revents)
				continue;
			if (atomic_load(&c->state) == CONN_READING)
				is_live = conn_read(srv, c);
			else
				is_live = conn_write(c);
			if (is_live)
				continue;
			for (unsigned int j = 0; j < srv->nr_conns; j++) {
				if (srv->conns[j] == c) {
					srv->conns[j] = srv->conns[--srv->nr_conns];
					break;
				}
			}
			conn_free(c);
		}
		/* After the connections, so that a new one is not polled stale. */
		if (pfd[1].revents)
			accept_all(srv, &paused_until);
	}
	return NULL;
}

static void *serve_changes(void *arg)
{
	struct ctl_server *srv = arg;

	pthread_mutex_lock(&srv->lock);
	for (;;) {
		struct ctl_conn *c;

		while (!srv->nr_queued && !srv->is_stopping)
			pthread_cond_wait(&srv->queued, &srv->lock);
		if (srv->is_stopping)
			break;
		c = srv->queue[0];
		memmove(srv->queue, srv->queue + 1, --srv->nr_queued * sizeof(srv->queue[0]));
		pthread_mutex_unlock(&srv->lock);
		ctl_handle_counted(srv->fs, &srv->counters, c->req, c->uid, c->reply,
				   CTL_REPLY_MAX);
		conn_reply_ready(c);
		wake(srv->wake_fd);
		pthread_mutex_lock(&srv->lock);
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/*
 * Bind "tierfs/MAJ:MIN/PID/TOKEN": anyone may bind any abstract name, so
 * the name only has to be found, not trusted (tierctl checks who listens).
 * The random token makes it unguessable; a name taken anyway costs one
 * more draw, never a wait.
 */
static int bind_name(struct ctl_server *srv, dev_t dev)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int err = -EADDRINUSE;

	for (int i = 0; i < 8 && err == -EADDRINUSE; i++) {
		uint64_t token;
		int len;

		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			return -errno;
		len = snprintf(srv->name, sizeof(srv->name), "%s%u:%u/%d/%016" PRIx64,
			       CTL_NAME_PREFIX, major(dev), minor(dev), (int)getpid(), token);
		memcpy(sun.sun_path + 1, srv->name, (size_t)len);
		err = bind(srv->listen_fd, (struct sockaddr *)&sun,
			   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) ?
			      -errno :
			      0;
	}
	return err;
}

int ctl_server_start(struct tierfs *fs, dev_t dev, struct ctl_server **out)
{
	struct ctl_server *srv = calloc(1, sizeof(*srv));
	int err;

	if (!srv)
		return -ENOMEM;
	srv->fs = fs;
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->queued, NULL);
	srv->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->listen_fd < 0) {
		err = -errno;
		goto free_srv;
	}
	srv->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv->wake_fd < 0) {
		err = -errno;
		goto close_listen;
	}
	err = bind_name(srv, dev);
	if (err)
		goto close_wake;
	if (listen(srv->listen_fd, 128)) {
		err = -errno;
		goto close_wake;
	}
	err = -pthread_create(&srv->worker, NULL, serve_changes, srv);
	if (err)
		goto close_wake;
	err = -pthread_create(&srv->loop, NULL, serve_loop, srv);
	if (err)
		goto stop_worker;
	*out = srv;
	return 0;

stop_worker:
	pthread_mutex_lock(&srv->lock);
	srv->is_stopping = true;
	pthread_cond_signal(&srv->queued);
	pthread_mutex_unlock(&srv->lock);
	pthread_join(srv->worker, NULL);
close_wake:
	close(srv->wake_fd);
close_listen:
	close(srv->listen_fd);
free_srv:
	pthread_cond_destroy(&srv->queued);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
	return err;
}

const char *ctl_server_name(const struct ctl_server *srv)
{
	return srv->name;
}

void ctl_server_stop(struct ctl_server *srv)
{
	atomic_store(&srv->stop, true);
	wake(srv->wake_fd);
	pthread_join(srv->loop, NULL);
	/* The name goes now, so a new mount's tierctl never finds this one. */
	close(srv->listen_fd);
	pthread_mutex_lock(&srv->lock);
	srv->is_stopping = true;
	pthread_cond_signal(&srv->queued);
	pthread_mutex_unlock(&srv->lock);
	/* A change under way finishes: it may hold the filesystem's locks. */
	pthread_join(srv->worker, NULL);
	for (unsigned int i = 0; i < srv->nr_conns; i++)
		conn_free(srv->conns[i]);
	close(srv->wake_fd);
	pthread_cond_destroy(&srv->queued);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}
