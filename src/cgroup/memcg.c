// SPDX-License-Identifier: MIT
/*
 * The watcher of the daemon's memory cgroup: its limit, followed once a
 * second, and its pressure events.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tierfs/budget.h"
#include "tierfs/data.h"
#include "tierfs/log.h"
#include "tierfs/memcg.h"
#include "tierfs/pagepool.h"
#include "tierfs/reclaim.h"

static struct log_ratelimit pressure_log;

/*
 * How often the limit is read again, in ms; under one, with what the rest
 * of the cgroup holds, four times as often: a flood of kernel memory (a
 * process pinning a deep tree's dentries) grows a few MiB in that time,
 * well inside the headroom.
 */
#define MEMCG_INTERVAL_MS 1000
#define MEMCG_LIMITED_INTERVAL_MS 250

uint64_t memcg_probe(struct memcg_watch *w)
{
	struct cgroup_limit cl;

	memset(w, 0, sizeof(*w));
	w->pressure.fd = -1;
	w->wake_fd = -1;
	pthread_mutex_init(&w->lock, NULL);
	if (cgroup_roots_find(NULL, &w->roots) ||
	    cgroup_of(getpid(), w->v1, sizeof(w->v1), w->v2, sizeof(w->v2)) ||
	    cgroup_limit(&w->roots, w->v1, w->v2, &cl))
		return 0;
	w->limit = cl.limit_bytes;
	snprintf(w->source, sizeof(w->source), "%s", cl.source);
	return w->limit;
}

/*
 * What the rest of the limiting cgroup holds, page cache aside: its usage
 * less the daemon's anonymous memory.  The daemon's kernel memory (page
 * tables, sockets) counts as the rest's; the budget lets BUDGET_EXCESS_FREE
 * of it go.
 */
static uint64_t others_of(const struct cgroup_limit *cl)
{
	uint64_t file = cl->limit_bytes ? cgroup_file_bytes(cl) : UINT64_MAX, own;

	if (file == UINT64_MAX)
		return 0; /* no page cache figure: nothing to tell the others' by */
	own = file + budget_rss_anon_bytes();
	return cl->usage_bytes > own ? cl->usage_bytes - own : 0;
}

static void follow_limit(struct memcg_watch *w)
{
	struct data_space *ds = w->ds;
	struct cgroup_limit cl;

	if (cgroup_limit(&w->roots, w->v1, w->v2, &cl))
		return;
	if (cl.limit_bytes == w->limit) {
		if (budget_set_others(ds, others_of(&cl)))
			reclaim_kick(ds);
		return;
	}
	pthread_mutex_lock(&w->lock);
	w->limit = cl.limit_bytes;
	snprintf(w->source, sizeof(w->source), "%s", cl.source);
	pthread_mutex_unlock(&w->lock);
	atomic_fetch_add(&w->nr_limit_changes, 1);
	log_msg(LOG_INFO, "the cgroup's memory limit is now %llu MiB (%s)",
		(unsigned long long)(cl.limit_bytes >> 20), cl.limit_bytes ? cl.source : "none");
	if (budget_set_env_limit(ds, cl.limit_bytes ? cl.limit_bytes : w->fallback_limit) |
	    budget_set_others(ds, others_of(&cl)))
		reclaim_kick(ds);
}

static void *watch(void *arg)
{
	struct memcg_watch *w = arg;
	struct pollfd fds[2] = {
		{ .fd = w->wake_fd, .events = POLLIN },
		{ .fd = w->pressure.fd, .events = w->pressure.poll_events },
	};

	for (;;) {
		int n = poll(fds, w->pressure.fd >= 0 ? 2 : 1,
			     w->limit ? MEMCG_LIMITED_INTERVAL_MS : MEMCG_INTERVAL_MS);

		if (n < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		if (n > 0 && fds[1].revents) {
			uint64_t in_use = pagepool_nr_in_use(w->ds->pool);

			cgroup_pressure_consume(&w->pressure);
			atomic_fetch_add(&w->nr_pressure_events, 1);
			/* Give back a sixteenth before the kernel has to take it. */
			log_limited(&pressure_log, LOG_INFO,
				    "memory pressure in the cgroup: evicting %llu pages",
				    (unsigned long long)(in_use / 16 + 1));
			reclaim_pages(w->ds, in_use / 16 + 1);
			if (fds[1].revents & (POLLERR | POLLHUP))
				fds[1].fd = -1; /* the cgroup went away */
		}
		follow_limit(w);
	}
	return NULL;
}

int memcg_start(struct memcg_watch *w, struct data_space *ds, uint64_t fallback_limit)
{
	int err;

	w->ds = ds;
	w->fallback_limit = fallback_limit;
	w->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (w->wake_fd < 0)
		return -errno;
	/*
	 * Only a limited cgroup's pressure is ours: at the root it is every
	 * cgroup's reclaim, which would evict for nothing.
	 */
	if (w->limit)
		cgroup_pressure_open(&w->roots, w->v1, w->v2, &w->pressure);
	err = pthread_create(&w->thread, NULL, watch, w);
	if (err) {
		cgroup_pressure_close(&w->pressure);
		close(w->wake_fd);
		w->wake_fd = -1;
		return -err;
	}
	w->has_thread = true;
	return 0;
}

void memcg_stop(struct memcg_watch *w)
{
	uint64_t one = 1;

	if (w->has_thread) {
		if (write(w->wake_fd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(w->thread);
		pthread_join(w->thread, NULL);
		w->has_thread = false;
	}
	if (w->pressure.fd >= 0)
		cgroup_pressure_close(&w->pressure);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	w->wake_fd = -1;
	pthread_mutex_destroy(&w->lock);
}
