// SPDX-License-Identifier: MIT
/*
 * A TCP relay that adds a fixed delay to every round trip: what a network
 * between tierfs and its redis servers costs, on a kernel built without
 * netem.  Each byte a server sends is held DELAY_US microseconds before it
 * goes on to the client; requests pass at once.  One thread, epoll and a
 * timerfd: the relay's own cost (its wake-ups) is measured by running it
 * with a delay of 0 against a direct connection.
 *
 * usage: delayproxy LISTEN_PORT TARGET_PORT DELAY_US   (both on 127.0.0.1)
 * Runs until killed; prints "ready" once it listens.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536

struct chunk {
	struct chunk *next;
	uint64_t due_ns;
	size_t off, len;
	char data[];
};

/* One direction of a relayed connection: what is read from src goes to dst. */
struct pipe_end {
	int src, dst;
	struct chunk *head, *tail; /* held or partly written, oldest first */
	struct pipe_end *peer;
	uint64_t delay_ns;
	struct pipe_end *next_due; /* on the list of directions with chunks */
	int is_listed;
	int is_blocked; /* dst is full: waiting for EPOLLOUT */
};

static int epfd, tfd, listen_fd;
static int target_port;
static uint64_t delay_ns;
static struct pipe_end *due_list;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void arm_timer(void)
{
	uint64_t first = UINT64_MAX;
	struct itimerspec its = { 0 };

	for (struct pipe_end *p = due_list; p; p = p->next_due)
		if (p->head && !p->is_blocked && p->head->due_ns < first)
			first = p->head->due_ns;
	if (first != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(first / 1000000000u);
		its.it_value.tv_nsec = (long)(first % 1000000000u);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void close_pair(struct pipe_end *p)
{
	struct pipe_end *ends[2] = { p, p->peer };

	close(p->src);
	close(p->dst);
	for (int i = 0; i < 2; i++) {
		struct pipe_end **pp = &due_list;

		while (*pp && *pp != ends[i])
			pp = &(*pp)->next_due;
		if (*pp)
			*pp = ends[i]->next_due;
		while (ends[i]->head) {
			struct chunk *c = ends[i]->head;

			ends[i]->head = c->next;
			free(c);
		}
	}
	free(p->peer);
	free(p);
}

/* Wait for dst to take more (or stop waiting): dst is the peer's src. */
static void set_blocked(struct pipe_end *p, int is_blocked)
{
	struct epoll_event ev = { .events = EPOLLIN | (is_blocked ? EPOLLOUT : 0),
				  .data.ptr = p->peer };

	if (p->is_blocked == is_blocked)
		return;
	p->is_blocked = is_blocked;
	epoll_ctl(epfd, EPOLL_CTL_MOD, p->dst, &ev);
}

/* Write what is due on p; returns -1 when the connection is gone. */
static int flush(struct pipe_end *p, uint64_t now)
{
	while (p->head && p->head->due_ns <= now) {
		struct chunk *c = p->head;
		ssize_t n = write(p->dst, c->data + c->off, c->len - c->off);

		if (n < 0 && errno == EAGAIN) {
			set_blocked(p, 1);
			return 0;
		}
		if (n <= 0)
			return -1;
		c->off += (size_t)n;
		if (c->off < c->len)
			continue;
		p->head = c->next;
		if (!p->head)
			p->tail = NULL;
		free(c);
	}
	set_blocked(p, 0);
	return 0;
}

/* Read from p->src into a chunk due after p's delay; -1 when closed. */
static int pull(struct pipe_end *p)
{
	struct chunk *c = malloc(sizeof(*c) + CHUNK);
	ssize_t n;

	if (!c)
		return -1;
	n = read(p->src, c->data, CHUNK);
	if (n <= 0) {
		free(c);
		return n < 0 && errno == EAGAIN ? 0 : -1;
	}
	c->next = NULL;
	c->off = 0;
	c->len = (size_t)n;
	c->due_ns = now_ns() + p->delay_ns;
	if (p->tail)
		p->tail->next = c;
	else
		p->head = c;
	p->tail = c;
	if (!p->is_listed) {
		p->is_listed = 1;
		p->next_due = due_list;
		due_list = p;
	}
	return 0;
}

static int connect_target(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)target_port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void accept_one(void)
{
	int client = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK), server, one = 1;
	struct pipe_end *up, *down;
	struct epoll_event ev = { .events = EPOLLIN };

	if (client < 0)
		return;
	server = connect_target();
	up = calloc(1, sizeof(*up));
	down = calloc(1, sizeof(*down));
	if (server < 0 || !up || !down) {
		close(client);
		if (server >= 0)
			close(server);
		free(up);
		free(down);
		return;
	}
	setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(server, F_SETFL, O_NONBLOCK);
	*up = (struct pipe_end){ .src = client, .dst = server, .peer = down };
	*down = (struct pipe_end){ .src = server, .dst = client, .peer = up, .delay_ns = delay_ns };
	ev.data.ptr = up;
	epoll_ctl(epfd, EPOLL_CTL_ADD, client, &ev);
	ev.data.ptr = down;
	epoll_ctl(epfd, EPOLL_CTL_ADD, server, &ev);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];
	int one = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: delayproxy LISTEN_PORT TARGET_PORT DELAY_US\n");
		return 2;
	}
	target_port = atoi(argv[2]);
	delay_ns = strtoull(argv[3], NULL, 10) * 1000;
	sa.sin_port = htons((uint16_t)atoi(argv[1]));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(listen_fd, 64))
		die("listen");
	epfd = epoll_create1(0);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	if (epfd < 0 || tfd < 0)
		die("epoll");
	ev.data.ptr = &listen_fd;
	epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev);
	ev.data.ptr = &tfd;
	epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &ev);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int n = epoll_wait(epfd, evs, 64, -1);
		uint64_t now;

		for (int i = 0; i < n; i++) {
			void *ptr = evs[i].data.ptr;

			if (ptr == &listen_fd) {
				accept_one();
			} else if (ptr == &tfd) {
				uint64_t expirations;

				if (read(tfd, &expirations, sizeof(expirations)) < 0)
					continue;
			} else {
				struct pipe_end *p = ptr;

				if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && pull(p)) {
					close_pair(p);
					/* the other events of this batch may name the pair */
					n = 0;
					break;
				}
			}
		}
		/* Whatever is due, on every direction. */
		now = now_ns();
		for (struct pipe_end *p = due_list, *next; p; p = next) {
			next = p->next_due;
			if (flush(p, now)) {
				close_pair(p);
				break;
			}
		}
		arm_timer();
	}
}
