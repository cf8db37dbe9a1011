// SPDX-License-Identifier: MIT
/*
 * FUSE over io_uring (ring.h): the queues and their entries, the custom
 * I/O hooks that bridge them to libfuse 3.14, and the workers that serve
 * requests which may wait.
 */
#include <errno.h>
#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tierfs/budget.h"
#include "tierfs/log.h"
#include "tierfs/reclaim.h"
#include "bridge.h"
#include "fs_ops.h"
#include "ring.h"
#include "ring_abi.h"

/*
 * Room before each payload buffer for the request's in-header and first
 * argument, put back there so that libfuse reads the request in place.
 */
#define RING_PRE 4096

/* The payload buffer: the largest WRITE (max_write) or READ (max_pages). */
#define RING_PAYLOAD_SZ (1u << 20)

#define RING_NR_WORKERS 4

/* Queue threads that may poll at once (ring_poll=), so that polling takes two CPUs at most. */
#define RING_MAX_POLLERS 2

/* How long the queues wait, once stopping, for the kernel to give back entries. */
#define RING_STOP_WAIT_NS 1000000000LL

/* user_data of a queue's eventfd read: entries are never at this address. */
#define RING_WAKE_TAG UINT64_MAX

/*
 * Locking: a queue's uring (its SQ and CQ) is touched by the queue's
 * thread alone; other threads hand it replies through q->lock and the
 * eventfd.  r->work_lock protects the work list.  An entry belongs to the
 * kernel while a command for it is submitted, then to whoever serves its
 * request until the reply is copied into its buffers.
 */
struct ring_ent {
	struct ring_queue *q;
	struct ring_req_header *hdr;
	char *buf;		 /* RING_PRE, then the payload buffer */
	struct iovec iov[2];	 /* what REGISTER names */
	char *msg;		 /* the request as /dev/fuse lays it out, in buf */
	_Atomic uint64_t unique; /* of the request being served; 0 none */
	uint32_t last_cmd;	 /* RING_CMD_* last submitted */
	struct ring_ent *next;	 /* in a work or commit list */
};

struct ring_queue {
	struct ring *r;
	unsigned int qid;
	struct io_uring uring;
	bool has_uring;
	pthread_t thread;
	bool has_thread;
	int wake_fd; /* eventfd: replies to commit, registration, stop */
	uint64_t wake_value;
	pthread_mutex_t lock;
	struct ring_ent *commits;  /* under lock: replies from other threads */
	bool is_register_asked;	   /* under lock */
	struct ring_ent *ents;	   /* RING_DEPTH of them */
	unsigned int nr_in_kernel; /* entries with a command submitted; thread only */
};

struct ring {
	struct fuse_session *se;
	struct tierfs *fs;
	int fd; /* /dev/fuse */
	struct ring_queue *queues;
	unsigned int nr_queues;
	void *hdrs; /* every entry's header, one mapping */
	size_t hdrs_len;
	void *bufs; /* every entry's buf, one mapping */
	size_t bufs_len;
	atomic_bool is_offered; /* the kernel's INIT offered the ring */
	atomic_bool is_on;	/* replies may belong to ring entries */
	atomic_bool is_stopping;
	int64_t poll_ns;
	_Atomic int64_t last_request_ns;
	atomic_uint nr_polling;
	pthread_mutex_t work_lock;
	pthread_cond_t work_cond;
	struct ring_ent *work_head, *work_tail;
	pthread_t workers[RING_NR_WORKERS];
	unsigned int nr_workers;
};

/* The hooks get the session's userdata (the struct tierfs): one session a process. */
static struct ring *the_ring;

/* The queue whose thread this is, NULL on other threads. */
static _Thread_local struct ring_queue *this_queue;

static struct log_ratelimit ring_log;

static void set_classic(struct ring *r, const char *why)
{
	atomic_store(&r->fs->transport.poll_us, 0);
	atomic_store(&r->fs->transport.reason, why);
	atomic_store(&r->fs->transport.mode, "classic");
	log_msg(LOG_WARNING, "transport: classic /dev/fuse, not io_uring: %s", why);
}

static void wake_queue(struct ring_queue *q)
{
	if (eventfd_write(q->wake_fd, 1))
		log_limited(&ring_log, LOG_ERR, "transport: cannot wake queue %u: %m", q->qid);
}

/* An SQE of q's ring, submitting what is queued if it is full; NULL if none. */
static struct io_uring_sqe *get_sqe(struct ring_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->uring);

	if (!sqe) {
		io_uring_submit(&q->uring);
		sqe = io_uring_get_sqe(&q->uring);
	}
	return sqe;
}

static void arm_wake(struct ring_queue *q)
{
	struct io_uring_sqe *sqe = get_sqe(q);

	if (!sqe) {
		log_limited(&ring_log, LOG_ERR, "transport: queue %u: no SQE to wait on", q->qid);
		return;
	}
	io_uring_prep_read(sqe, q->wake_fd, &q->wake_value, sizeof(q->wake_value), 0);
	sqe->user_data = RING_WAKE_TAG;
}

/* Queue REGISTER or COMMIT_AND_FETCH for e; the queue's thread only. */
static void prep_cmd(struct ring_ent *e, uint32_t cmd_op)
{
	struct ring_queue *q = e->q;
	struct io_uring_sqe *sqe = get_sqe(q);
	struct ring_cmd_req req = { .qid = (uint16_t)q->qid };

	if (!sqe) {
		log_limited(&ring_log, LOG_ERR, "transport: queue %u: no SQE for an entry", q->qid);
		return;
	}
	memset(sqe, 0, 2 * sizeof(*sqe)); /* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->r->fd;
	sqe->off = cmd_op; /* cmd_op shares the word */
	if (cmd_op == RING_CMD_REGISTER) {
		sqe->addr = (uintptr_t)e->iov;
		sqe->len = 2;
	} else {
		req.commit_id = e->hdr->ent_in_out.commit_id;
	}
	memcpy((char *)sqe + 48, &req, sizeof(req));
	io_uring_sqe_set_data(sqe, e);
	e->last_cmd = cmd_op;
	q->nr_in_kernel++;
}

/* Hand e's reply (already in its buffers) to its queue's thread. */
static void queue_commit(struct ring_ent *e)
{
	struct ring_queue *q = e->q;

	if (this_queue == q) {
		prep_cmd(e, RING_CMD_COMMIT_AND_FETCH);
		return;
	}
	pthread_mutex_lock(&q->lock);
	e->next = q->commits;
	q->commits = e;
	pthread_mutex_unlock(&q->lock);
	wake_queue(q);
}

/* Commit a reply with no payload: an error, or nothing (NOTIFY_REPLY). */
static void commit_status(struct ring_ent *e, int error)
{
	struct fuse_out_header out = {
		.len = sizeof(out),
		.error = error,
		.unique = atomic_load(&e->unique),
	};

	memcpy(e->hdr->in_out, &out, sizeof(out));
	e->hdr->ent_in_out.payload_sz = 0;
	atomic_store(&e->unique, 0);
	queue_commit(e);
}

/* The writev hook's side: copy a reply into e and commit it. */
static ssize_t commit_reply(struct ring_ent *e, const struct iovec *iov, int count)
{
	struct fuse_out_header out;
	ssize_t total = (ssize_t)iov[0].iov_len;
	char *payload = e->buf + RING_PRE;
	size_t len = 0;

	memcpy(&out, iov[0].iov_base, sizeof(out));
	for (int i = 1; i < count; i++) {
		total += (ssize_t)iov[i].iov_len;
		if (iov[i].iov_len > RING_PAYLOAD_SZ - len) {
			log_limited(&ring_log, LOG_ERR,
				    "transport: a reply of over %u bytes: EIO instead",
				    RING_PAYLOAD_SZ);
			out.error = -EIO;
			len = 0;
			break;
		}
		/* A reply may point into the request it answers. */
		memmove(payload + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	memcpy(e->hdr->in_out, &out, sizeof(out));
	e->hdr->ent_in_out.payload_sz = (uint32_t)len;
	atomic_store_explicit(&e->unique, 0, memory_order_release);
	queue_commit(e);
	return total;
}

/* The entry serving the request unique, or NULL: it came over /dev/fuse. */
/* The bridge's replies, for requests it served itself. */
static ssize_t ring_reply(void *ctx, struct iovec *iov, int count)
{
	return commit_reply(ctx, iov, count);
}

static struct ring_ent *find_ent(struct ring *r, uint64_t unique)
{
	for (unsigned int i = 0; i < r->nr_queues; i++)
		for (unsigned int j = 0; j < RING_DEPTH; j++) {
			struct ring_ent *e = &r->queues[i].ents[j];

			if (atomic_load_explicit(&e->unique, memory_order_acquire) == unique)
				return e;
		}
	return NULL;
}

static void serve_ent(struct ring_ent *e)
{
	const struct fuse_in_header *in = (const void *)e->msg;
	struct fuse_buf buf = { .size = in->len, .mem = e->msg };
	uint32_t opcode = in->opcode;

	bridge_note(e->q->r->fs, e->msg, in->len);
	if (bridge_serve(e->q->r->fs, e->msg, in->len, ring_reply, e))
		return;
	fuse_session_process_buf(e->q->r->se, &buf);
	/* A retrieve's data needs no reply, but the entry must come back. */
	if (opcode == FUSE_NOTIFY_REPLY)
		commit_status(e, 0);
}

static void hand_off(struct ring *r, struct ring_ent *e)
{
	atomic_fetch_add_explicit(&r->fs->transport.nr_handoffs, 1, memory_order_relaxed);
	e->next = NULL;
	pthread_mutex_lock(&r->work_lock);
	if (r->work_tail)
		r->work_tail->next = e;
	else
		r->work_head = e;
	r->work_tail = e;
	pthread_cond_signal(&r->work_cond);
	pthread_mutex_unlock(&r->work_lock);
}

static void *worker_main(void *arg)
{
	struct ring *r = arg;

	pthread_mutex_lock(&r->work_lock);
	for (;;) {
		struct ring_ent *e = r->work_head;

		if (atomic_load(&r->is_stopping))
			break; /* what is left never reached libfuse: nothing to free */
		if (!e) {
			pthread_cond_wait(&r->work_cond, &r->work_lock);
			continue;
		}
		r->work_head = e->next;
		if (!r->work_head)
			r->work_tail = NULL;
		pthread_mutex_unlock(&r->work_lock);
		serve_ent(e);
		pthread_mutex_lock(&r->work_lock);
	}
	pthread_mutex_unlock(&r->work_lock);
	return NULL;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A request arrived in e: put it back in /dev/fuse's layout and serve it. */
static void on_request(struct ring_ent *e)
{
	struct ring *r = e->q->r;
	struct fuse_in_header in;
	uint32_t payload_sz = e->hdr->ent_in_out.payload_sz;
	size_t op_len;

	memcpy(&in, e->hdr->in_out, sizeof(in));
	atomic_store(&e->unique, in.unique);
	if (payload_sz > RING_PAYLOAD_SZ || in.len < sizeof(in) + payload_sz ||
	    in.len - sizeof(in) - payload_sz > sizeof(e->hdr->op_in)) {
		log_limited(&ring_log, LOG_ERR,
			    "transport: a request of %u bytes with a payload of %u: EIO", in.len,
			    payload_sz);
		commit_status(e, -EIO);
		return;
	}
	op_len = in.len - sizeof(in) - payload_sz;
	e->msg = e->buf + RING_PRE - sizeof(in) - op_len;
	memcpy(e->msg, &in, sizeof(in));
	memcpy(e->msg + sizeof(in), e->hdr->op_in, op_len);
	atomic_fetch_add_explicit(&r->fs->transport.nr_ring_requests, 1, memory_order_relaxed);
	if (r->poll_ns)
		atomic_store_explicit(&r->last_request_ns, now_ns(), memory_order_relaxed);
	if (fs_may_block(r->fs, &in, e->msg + sizeof(in)))
		hand_off(r, e);
	else
		serve_ent(e);
}

/* The eventfd fired: re-arm it, then register or commit what was asked. */
static void on_wake(struct ring_queue *q)
{
	struct ring_ent *commits;
	bool is_register;

	arm_wake(q);
	pthread_mutex_lock(&q->lock);
	commits = q->commits;
	q->commits = NULL;
	is_register = q->is_register_asked;
	q->is_register_asked = false;
	pthread_mutex_unlock(&q->lock);
	for (unsigned int i = 0; is_register && i < RING_DEPTH; i++)
		prep_cmd(&q->ents[i], RING_CMD_REGISTER);
	for (struct ring_ent *e = commits, *next; e; e = next) {
		next = e->next;
		prep_cmd(e, RING_CMD_COMMIT_AND_FETCH);
	}
}

static void on_cqe(struct ring_ent *e, int res)
{
	struct ring_queue *q = e->q;
	struct ring *r = q->r;

	q->nr_in_kernel--;
	if (res == 0) {
		on_request(e);
		return;
	}
	if (res == -EAGAIN || res == -EINTR) {
		prep_cmd(e, e->last_cmd);
		return;
	}
	/* The unmount gives every entry back; stopping, so do we. */
	if (res == -ENOTCONN || res == -ECANCELED || res == -ECONNABORTED ||
	    atomic_load(&r->is_stopping))
		return;
	if (e->last_cmd == RING_CMD_REGISTER) {
		/* The kernel falls back to /dev/fuse for the whole connection. */
		log_limited(&ring_log, LOG_ERR, "transport: queue %u: REGISTER: %s", q->qid,
			    strerror(-res));
		set_classic(r, "the kernel refused to register the ring's entries");
		return;
	}
	/* A reply refused (its request gone): register the entry again. */
	atomic_fetch_add_explicit(&r->fs->transport.nr_commit_errors, 1, memory_order_relaxed);
	log_limited(&ring_log, LOG_WARNING, "transport: queue %u: a commit: %s", q->qid,
		    strerror(-res));
	prep_cmd(e, RING_CMD_REGISTER);
}

/*
 * Before q's thread sleeps: until ring_poll= microseconds have passed
 * since its own last request and any queue's, look for the next one
 * instead, yielding to whatever else wants the CPU.  A round trip whose
 * client wakes on a CPU that sleeps (halted, in a VM) costs that CPU's
 * wake-up; a CPU kept busy here is not idle, so the scheduler wakes the
 * client where its request was served, and the next request finds this
 * thread awake.  At most RING_MAX_POLLERS threads poll at once.
 */
static void poll_queue(struct ring_queue *q)
{
	struct ring *r = q->r;
	int64_t start;
	unsigned int nr;

	if (!r->poll_ns || io_uring_cq_ready(&q->uring))
		return;
	nr = atomic_load(&r->nr_polling);
	do {
		if (nr >= RING_MAX_POLLERS)
			return;
	} while (!atomic_compare_exchange_weak(&r->nr_polling, &nr, nr + 1));
	io_uring_submit(&q->uring);
	start = now_ns();
	while (!io_uring_cq_ready(&q->uring)) {
		int64_t last = atomic_load_explicit(&r->last_request_ns, memory_order_relaxed);

		if (now_ns() - (last > start ? last : start) > r->poll_ns ||
		    atomic_load(&r->is_stopping))
			break;
		/*
		 * Also runs the task work that posts a request's CQE, which
		 * the ring leaves to the next return to user space (no
		 * IORING_SETUP_DEFER_TASKRUN: that would need io_uring_enter).
		 */
		sched_yield();
	}
	if (io_uring_cq_ready(&q->uring))
		atomic_fetch_add_explicit(&r->fs->transport.nr_poll_hits, 1, memory_order_relaxed);
	atomic_fetch_sub(&r->nr_polling, 1);
}

static void *queue_main(void *arg)
{
	struct ring_queue *q = arg;
	struct ring *r = q->r;
	int64_t deadline = 0;
	cpu_set_t cpus;

	this_queue = q;
	CPU_ZERO(&cpus);
	CPU_SET(q->qid, &cpus);
	/* An offline CPU's queue serves from anywhere. */
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	arm_wake(q);
	for (;;) {
		struct io_uring_cqe *cqes[2 * RING_DEPTH];
		struct __kernel_timespec wait = { .tv_nsec = 50000000 };
		struct io_uring_cqe *cqe;
		unsigned int nr;
		int ret;

		if (atomic_load(&r->is_stopping)) {
			if (!deadline)
				deadline = now_ns() + RING_STOP_WAIT_NS;
			if (!q->nr_in_kernel || now_ns() > deadline)
				break;
			ret = io_uring_submit_and_wait_timeout(&q->uring, &cqe, 1, &wait, NULL);
		} else {
			poll_queue(q);
			ret = io_uring_submit_and_wait(&q->uring, 1);
		}
		if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EBUSY) {
			log_msg(LOG_ERR, "transport: queue %u stops: %s", q->qid, strerror(-ret));
			break;
		}
		nr = io_uring_peek_batch_cqe(&q->uring, cqes, 2 * RING_DEPTH);
		for (unsigned int i = 0; i < nr; i++) {
			uint64_t tag = cqes[i]->user_data;
			int res = cqes[i]->res;

			io_uring_cqe_seen(&q->uring, cqes[i]);
			if (tag == RING_WAKE_TAG)
				on_wake(q);
			else
				on_cqe((struct ring_ent *)(uintptr_t)tag, res);
		}
	}
	this_queue = NULL;
	return NULL;
}

/* libfuse's read hook: /dev/fuse through the bridge, noting what the INIT offers. */
static ssize_t hook_read(int fd, void *buf, size_t len, void *userdata)
{
	struct ring *r = the_ring;
	ssize_t n = bridge_read(fd, buf, len, userdata);
	const struct fuse_in_header *in = buf;

	if (r && n >= (ssize_t)(sizeof(*in) + offsetof(struct fuse_init_in, unused)) &&
	    in->opcode == FUSE_INIT) {
		const struct fuse_init_in *arg = (const void *)(in + 1);

		atomic_store(&r->is_offered,
			     (arg->flags & FUSE_INIT_EXT) &&
				     (arg->flags2 & RING_INIT_FLAGS2_OVER_IO_URING));
	}
	return n;
}

/*
 * The INIT reply: take the ring if the kernel offers it and the payload
 * buffers hold the largest request, then have every queue register.
 */
static ssize_t answer_init(struct ring *r, int fd, struct iovec *iov, int count)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct fuse_init_out *arg = count == 2 && iov[1].iov_len >= sizeof(*arg) ? iov[1].iov_base :
										   NULL;
	const char *why = NULL;
	ssize_t n;
	int err;

	if (out->error || !arg)
		why = "the INIT failed";
	else if (!atomic_load(&r->is_offered))
		why = "the kernel does not offer it (/sys/module/fuse/parameters/enable_uring)";
	else if (arg->max_write > RING_PAYLOAD_SZ ||
		 (uint64_t)arg->max_pages * 4096 > RING_PAYLOAD_SZ)
		why = "requests larger than the ring's buffers";
	if (!why) {
		arg->flags |= FUSE_INIT_EXT;
		arg->flags2 |= RING_INIT_FLAGS2_OVER_IO_URING;
	}
	n = writev(fd, iov, count);
	err = errno;
	if (!why && n < 0)
		why = "the INIT reply failed";
	if (why) {
		set_classic(r, why);
		errno = err;
		return n;
	}
	atomic_store(&r->is_on, true);
	atomic_store(&r->fs->transport.mode, "uring");
	for (unsigned int i = 0; i < r->nr_queues; i++) {
		pthread_mutex_lock(&r->queues[i].lock);
		r->queues[i].is_register_asked = true;
		pthread_mutex_unlock(&r->queues[i].lock);
		wake_queue(&r->queues[i]);
	}
	log_msg(LOG_INFO, "transport: FUSE over io_uring, %u queues of %u entries", r->nr_queues,
		RING_DEPTH);
	errno = err;
	return n;
}

/* libfuse's writev hook: a reply to a ring request goes back on the ring. */
static ssize_t hook_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct ring *r = the_ring;
	uint64_t unique = ((const struct fuse_out_header *)iov[0].iov_base)->unique;

	(void)userdata;
	/* Notifications (0) and interrupt replies (odd) are /dev/fuse's. */
	if (r && unique && !(unique & 1)) {
		if (atomic_load_explicit(&r->is_on, memory_order_acquire)) {
			struct ring_ent *e = find_ent(r, unique);

			if (e)
				return commit_reply(e, iov, count);
		}
		if (bridge_init_reply(r->fs, iov, count))
			return answer_init(r, fd, iov, count);
	}
	return writev(fd, iov, count);
}

static const struct fuse_custom_io ring_io = {
	.read = hook_read,
	.writev = hook_writev,
};

/* The number of possible CPUs: the kernel wants a queue for each. */
static int nr_possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned int lo, hi;
	int n = 0;

	if (!f)
		return -errno;
	while (fscanf(f, "%u", &lo) == 1) {
		hi = lo;
		if (fscanf(f, "-%u", &hi) == 1 && hi < lo)
			hi = lo;
		if (hi + 1 > (unsigned int)n)
			n = (int)hi + 1;
		if (fgetc(f) != ',')
			break;
	}
	fclose(f);
	return n > 0 ? n : -EINVAL;
}

/* The CPUs this process may run on. */
static int nr_usable_cpus(void)
{
	cpu_set_t cpus;

	return sched_getaffinity(0, sizeof(cpus), &cpus) ? 1 : CPU_COUNT(&cpus);
}

static int queue_init(struct ring *r, unsigned int qid, char *why, size_t why_len)
{
	struct ring_queue *q = &r->queues[qid];
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	int ret;

	q->r = r;
	q->qid = qid;
	q->wake_fd = -1;
	pthread_mutex_init(&q->lock, NULL);
	q->ents = calloc(RING_DEPTH, sizeof(*q->ents));
	if (!q->ents)
		return -ENOMEM;
	for (unsigned int i = 0; i < RING_DEPTH; i++) {
		struct ring_ent *e = &q->ents[i];
		size_t k = (size_t)qid * RING_DEPTH + i;

		e->q = q;
		e->hdr = (void *)((char *)r->hdrs + k * 512);
		e->buf = (char *)r->bufs + k * (RING_PRE + RING_PAYLOAD_SZ);
		e->iov[0] = (struct iovec){ e->hdr, sizeof(*e->hdr) };
		e->iov[1] = (struct iovec){ e->buf + RING_PRE, RING_PAYLOAD_SZ };
		/* Small requests never fault a fresh page in. */
		memset(e->buf, 0, RING_PRE + 4096);
	}
	q->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (q->wake_fd < 0)
		return -errno;
	ret = io_uring_queue_init_params(2 * RING_DEPTH, &q->uring, &p);
	if (ret) {
		snprintf(why, why_len, "io_uring_setup: %s", strerror(-ret));
		return ret;
	}
	q->has_uring = true;
	return 0;
}

static void queue_fini(struct ring_queue *q)
{
	if (q->has_uring)
		io_uring_queue_exit(&q->uring);
	if (q->wake_fd >= 0)
		close(q->wake_fd);
	pthread_mutex_destroy(&q->lock);
	free(q->ents);
}

void ring_destroy(struct ring *r)
{
	if (!r)
		return;
	atomic_store(&r->is_stopping, true);
	pthread_mutex_lock(&r->work_lock);
	pthread_cond_broadcast(&r->work_cond);
	pthread_mutex_unlock(&r->work_lock);
	for (unsigned int i = 0; i < r->nr_workers; i++)
		pthread_join(r->workers[i], NULL);
	for (unsigned int i = 0; i < r->nr_queues; i++) {
		struct ring_queue *q = &r->queues[i];

		if (q->has_thread) {
			wake_queue(q);
			pthread_join(q->thread, NULL);
		}
	}
	for (unsigned int i = 0; r->queues && i < r->nr_queues; i++)
		queue_fini(&r->queues[i]);
	free(r->queues);
	if (r->bufs)
		munmap(r->bufs, r->bufs_len);
	if (r->hdrs)
		munmap(r->hdrs, r->hdrs_len);
	pthread_cond_destroy(&r->work_cond);
	pthread_mutex_destroy(&r->work_lock);
	if (the_ring == r)
		the_ring = NULL;
	free(r);
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int ring_new(struct fuse_session *se, struct tierfs *fs, struct ring **out, char *why,
	     size_t why_len)
{
	struct ring *r;
	int nr_cpus, ret;
	size_t nr_ents;

	snprintf(why, why_len, "out of memory");
	nr_cpus = nr_possible_cpus();
	if (nr_cpus < 0) {
		snprintf(why, why_len, "the possible CPUs are unknown: %s", strerror(-nr_cpus));
		return nr_cpus;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->se = se;
	r->fs = fs;
	/* With one CPU a thread that polls only takes turns from the one it waits for. */
	if (nr_usable_cpus() > 1)
		r->poll_ns = (int64_t)fs->opts.ring_poll_us * 1000;
	r->fd = fuse_session_fd(se);
	pthread_mutex_init(&r->work_lock, NULL);
	pthread_cond_init(&r->work_cond, NULL);
	nr_ents = (size_t)nr_cpus * RING_DEPTH;
	r->hdrs_len = nr_ents * 512;
	r->bufs_len = nr_ents * (RING_PRE + RING_PAYLOAD_SZ);
	r->hdrs = map_anon(r->hdrs_len);
	r->bufs = map_anon(r->bufs_len);
	r->queues = calloc((size_t)nr_cpus, sizeof(*r->queues));
	if (!r->hdrs || !r->bufs || !r->queues) {
		ret = -ENOMEM;
		goto destroy;
	}
	memset(r->hdrs, 0, r->hdrs_len);
	for (int i = 0; i < nr_cpus; i++) {
		r->nr_queues++;
		ret = queue_init(r, (unsigned int)i, why, why_len);
		if (ret)
			goto destroy;
	}
	fs->transport.nr_queues = r->nr_queues;
	fs->transport.depth = RING_DEPTH;
	/*
	 * Counted whole from the start, touched or not: the buffers fill as
	 * large requests come, and what df promised must stay writable then.
	 */
	atomic_store(&fs->data.budget.transport_bytes, r->hdrs_len + r->bufs_len);
	if (budget_update(&fs->data, true))
		reclaim_kick(&fs->data);
	for (unsigned int i = 0; i < r->nr_queues; i++) {
		ret = -pthread_create(&r->queues[i].thread, NULL, queue_main, &r->queues[i]);
		if (ret) {
			snprintf(why, why_len, "cannot start a queue: %s", strerror(-ret));
			goto destroy;
		}
		r->queues[i].has_thread = true;
	}
	for (; r->nr_workers < RING_NR_WORKERS; r->nr_workers++) {
		ret = -pthread_create(&r->workers[r->nr_workers], NULL, worker_main, r);
		if (ret) {
			snprintf(why, why_len, "cannot start a worker: %s", strerror(-ret));
			goto destroy;
		}
	}
	the_ring = r;
	ret = fuse_session_custom_io(se, &ring_io, r->fd);
	if (ret) {
		snprintf(why, why_len, "libfuse took no I/O hooks: %s", strerror(-ret));
		goto destroy;
	}
	atomic_store(&fs->transport.poll_us, (unsigned int)(r->poll_ns / 1000));
	*out = r;
	return 0;

destroy:
	ring_destroy(r);
	fs->transport.nr_queues = 0;
	fs->transport.depth = 0;
	atomic_store(&fs->data.budget.transport_bytes, 0);
	return ret;
}
