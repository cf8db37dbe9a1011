/* SPDX-License-Identifier: MIT */
/*
 * What the control channel's files share: the server's counters, the
 * request dispatcher the server calls, and the stats reply.
 */
#ifndef TIERFS_CTL_PRIV_H
#define TIERFS_CTL_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tierfs;

/* What the server let in and turned away, shown in the stats. */
struct ctl_counters {
	atomic_uint_fast64_t nr_connections;   /* accepted and served */
	atomic_uint_fast64_t nr_refused_total; /* CTL_CONN_MAX open already */
	atomic_uint_fast64_t nr_refused_uid;   /* CTL_CONN_PER_UID of that uid open */
	atomic_uint_fast64_t nr_timed_out;     /* no request line, or reply not read, in time */
	atomic_uint_fast64_t nr_malformed;     /* too long, incomplete, or holding a NUL */
	atomic_uint_fast64_t nr_queue_full;    /* CTL_QUEUE_MAX changes waiting already */
};

/* Append to buf at *len, never past size; a full buffer truncates quietly. */
void ctl_put(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

enum ctl_stats_format {
	CTL_STATS_TEXT,	      /* "stats": sizes in units */
	CTL_STATS_BYTES,      /* "stats bytes": sizes in bytes */
	CTL_STATS_JSON,	      /* "stats json" */
	CTL_STATS_PROMETHEUS, /* "stats prometheus MOUNTPOINT": the label to give */
};

/*
 * The stats reply into buf; with the server's counters when cc is set,
 * mountpoint the Prometheus label.  Returns 0 or -ENOMEM (buf then holds
 * the error line).
 */
int ctl_stats(struct tierfs *fs, const struct ctl_counters *cc, enum ctl_stats_format format,
	      const char *mountpoint, char *buf, size_t size);

/* ctl_handle(), with the server's counters in the stats when cc is set. */
int ctl_handle_counted(struct tierfs *fs, const struct ctl_counters *cc, const char *request,
		       uid_t peer_uid, char *buf, size_t size);

#endif
